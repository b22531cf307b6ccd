"""The split walk's plan (`attention_tiles.walk_setup` / `split_marks`, the
pieces' key bounds in `tile_loop`), evaluated from the lowered kernel's own
scalar ops for many launches: every CTA's walk of std's prefill kernel run
in Python (scalars only; the key loop's bounds recorded instead of run), then

- every tile's key blocks are covered exactly once, by one whole tile or by
  the pieces of a split one, and the split tiles' ranges are the whole
  walk's (`TILEC_ATTN_SPLIT=0`) for the same tile;
- which tiles split: the last round's `left` single tiles, each in the same
  number of pieces, where the walk splits at all (never pairs);
- a split tile's pieces arrive at one counter, as many as its size, so the
  last arrival sees size - 1 and resets it (the next launch starts at 0);
- the records (slots) are unique and within the workspace the runtime
  allocates (`codegen/split.SPLIT_ROUNDS` records a CTA).

Thousands of launches in a few seconds, against a handful in llsim."""

from __future__ import annotations

import itertools
import math
import os
from collections import defaultdict

import pytest
from test_attention_pipeline import _facts, _std

from tilelang.backend import lower_gpu
from tilelang.backend.codegen.split import SPLIT_ROUNDS
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.passes import attention_tiles as tiles
from tilelang.ir import nodes as ir

E = ir.ElemOp
_BIN = {
    E.ADD: lambda a, b: a + b, E.SUB: lambda a, b: a - b, E.MUL: lambda a, b: a * b,
    E.DIV: lambda a, b: int(a / b), E.REM: lambda a, b: a - int(a / b) * b,  # C's truncation
    E.MAXIMUM: max, E.MINIMUM: min, E.SHR: lambda a, b: a >> b, E.SHL: lambda a, b: a << b,
    E.AND: lambda a, b: a & b if not isinstance(a, bool) else a and b,
    E.OR: lambda a, b: a | b if not isinstance(a, bool) else a or b,
    E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b, E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b,
}


class _Walk:
    """One CTA's consumer role run on scalars: `pieces` gets (tile position, lower, upper, slot, group, size) for
    each key loop (slot/group/size None for a whole tile)."""

    def __init__(self, k: g.GpuKernel, pos_ids: list[list[int]], env: dict[int, object]) -> None:
        self.k, self.pos_ids, self.env = k, pos_ids, env
        self.pieces: list[tuple] = []
        self.tile: tuple | None = None

    def val(self, v: ir.Value) -> object:
        return self.env.get(v.id)

    def run(self, ops: tuple | list) -> tuple | None:
        for op in ops:
            if isinstance(op, ir.Yield):
                return tuple(self.val(x) for x in op.values)
            self.op(op)
        return None

    def op(self, op: object) -> None:
        env = self.env
        match op:
            case ir.Const(result=r, value=x) if not r.shape:
                env[r.id] = x
            case ir.Elementwise(result=r, op=code, operands=xs) if not r.shape:
                a = [self.val(x) for x in xs]
                if any(x is None for x in a):
                    env[r.id] = None
                elif code is E.WHERE:
                    env[r.id] = a[1] if a[0] else a[2]
                elif code is E.NOT:
                    env[r.id] = (not a[0]) if isinstance(a[0], bool) else ~a[0]
                elif code in _BIN:
                    env[r.id] = _BIN[code](*a)
                else:
                    env[r.id] = None
            case ir.BlockId(result=r, axis=a):
                env[r.id] = self.launch[a]
            case ir.NumBlocks(result=r, axis=a):
                env[r.id] = self.grid[a]
            case ir.TensorDim(result=r, tensor=t, axis=a):
                env[r.id] = self.dims[t][a]
            case g.Opaque(results=rs, values=vs):
                for r, v in zip(rs, vs, strict=True):
                    env[r.id] = self.val(v)
            case ir.If(results=rs, cond=c, then=t, else_=e):
                cond = self.val(c)
                out = None if cond is None else self.run((t if cond else e).ops)
                for i, r in enumerate(rs):
                    env[r.id] = out[i] if out else None
            case ir.For(results=rs, lower=lo, upper=hi, inits=inits):
                if any(x.shape for x in inits):  # the key loop: a piece (or a whole tile) of the current tile
                    self.tile = tuple(self.val(v) for v in self.current_pos)
                    self.pieces.append([self.tile, self.val(lo), self.val(hi), None, None, None])
                    for r in rs:
                        env[r.id] = None
                    return
                self.loop(op)
            case g.SplitSave(slot=s):
                self.pieces[-1][3] = self.val(s)
            case g.SplitArrive(result=r, group=gr, size=n):
                self.pieces[-1][4], self.pieces[-1][5] = self.val(gr), self.val(n)
                env[r.id] = False  # (the merge's loop reads records: not followed)
            case _:
                for r in g.results(op):
                    if not r.shape:
                        env[r.id] = None

    def loop(self, op: ir.For) -> None:
        lo, hi, st = self.val(op.lower), self.val(op.upper), self.val(op.step)
        carried = [self.val(x) for x in op.inits]
        iv, *args = op.body.args
        pos = next((p for p in self.pos_ids if set(p) & self._defined(op.body.ops)), None)
        i = lo
        while i < hi:
            self.env[iv.id] = i
            for a, c in zip(args, carried, strict=True):
                self.env[a.id] = c
            if pos is not None:
                self.current_pos = [ir.Value(x, ir.Type(None, ()), "") for x in pos]  # type: ignore[arg-type]
            out = self.run(op.body.ops)
            carried = list(out) if out else [None] * len(args)
            i += st
        for r, c in zip(op.results, carried, strict=True):
            self.env[r.id] = c

    @staticmethod
    def _defined(ops: tuple) -> set[int]:
        return {r.id for op in ops for r in g.results(op)}


def _kernel(monkeypatch, split: str, causal_pairs: bool = True) -> tuple[g.GpuKernel, list[list[int]]]:  # type: ignore[no-untyped-def]
    """std's `flash_attention` (f16, 128 x 64, D = 64) lowered with `TILEC_ATTN_SPLIT=split`, and the ids of
    the tile positions each walk computes (`_tile`'s results)."""
    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE",
                "TILEC_ATTN_QDOUBLE", "TILEC_ATTN_KVFIRST", "TILEC_ATTN_WALK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", "0")
    return _spied(monkeypatch, _facts("oqkv", 3))


def _spied(monkeypatch, facts, bn: int = 64) -> tuple[g.GpuKernel, list[list[int]]]:  # type: ignore[no-untyped-def]
    """std's `flash_attention` (f16, 128 x `bn`, D = 64) lowered for sm_90a with `facts` (and the environment's
    `TILEC_*` settings), and the ids of the tile positions each walk computes (`attention_tiles._tile`'s
    results). Lowered once a process for each settings and facts (the tests evaluate the same kernels' walks
    on many launch shapes; they only read them)."""
    key = (tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TILEC_"))), repr(facts), bn)
    if key not in _SPIED:
        seen: list[list[int]] = []
        orig = tiles._tile

        def spy(b, w, r, marks=None):  # type: ignore[no-untyped-def]
            pos = orig(b, w, r, marks)
            seen.append([p.id for p in pos])
            return pos

        monkeypatch.setattr(tiles, "_tile", spy)
        try:
            k = lower_gpu(_std("flash_attention", "f16", 128, bn, 64), "sm_90a", facts)
        finally:
            monkeypatch.setattr(tiles, "_tile", orig)
        _SPIED[key] = (k, seen)
    return _SPIED[key]


_SPIED: dict[tuple[object, ...], tuple[g.GpuKernel, list[list[int]]]] = {}


def _walk(k: g.GpuKernel, pos_ids: list[list[int]], c: int, P: int, bh: int, hkv: int, sq: int, sk: int,
          causal: bool, walker: type[_Walk] | None = None) -> list[list]:
    """CTA `c` of `P`'s consumer walk of kernel `k` (`walker`: `_Walk` or a subclass) on the launch's shape."""
    ws = next(op for op in k.body.ops if isinstance(op, g.WarpSpecialize))
    consumer = next(r for r in ws.roles if r.name == "consumer")
    env: dict[int, object] = {p.value.id: causal if p.name == "causal" else 0.1
                              for p in k.params if isinstance(p, ir.ScalarParam) or hasattr(p, "value")}
    w = (walker or _Walk)(k, pos_ids, env)
    w.launch, w.grid = (c, 0, 0), (P, 1, 1)
    w.dims = {"o": (bh, sq, 64), "q": (bh, sq, 64), "k": (hkv, sk, 64), "v": (hkv, sk, 64)}
    w.current_pos = []
    w.run([op for op in k.body.ops if not isinstance(op, (g.WarpSpecialize, ir.Yield))])
    w.run(consumer.body.ops)
    return w.pieces


SHAPES = [  # BH, BHkv, S_q, S_k, causal; whether some launch of CTAS splits (with the estimate's edge 0)
    (2, 2, 300, 200, False, True), (1, 1, 448, 512, False, True), (4, 2, 130, 300, False, True),
    (3, 1, 1000, 700, False, True), (8, 8, 256, 1100, False, True), (5, 5, 384, 999, False, True),
    (4, 2, 130, 190, True, True),  # causal, S_q < S_k, every query block 3 key blocks: single tiles, split
    (2, 2, 200, 150, True, False), (2, 1, 640, 640, True, False),  # causal, uneven: pairs, never split
    (1, 1, 129, 65, False, False),  # 2 tiles: one round or one CTA
]
CTAS = [1, 2, 3, 4, 5, 7, 8, 13, 31, 64, 132]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(map(str, s[:5])))
def test_split_plan_covers_every_key_block_once(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bh, hkv, sq, sk, causal, splits_somewhere = shape
    split_k, split_pos = _kernel(monkeypatch, "1")
    whole_k, whole_pos = _kernel(monkeypatch, "0")
    tiles_total = bh * math.ceil(sq / 128)
    splits = 0
    for P in CTAS:
        P = min(P, tiles_total)  # the runtime launches at most a CTA a tile
        whole = defaultdict(list)
        for c in range(P):
            for t, lo, hi, *_ in _walk(whole_k, whole_pos, c, P, bh, hkv, sq, sk, causal):
                whole[t].append((lo, hi))
        # (a causal walk of pairs runs an odd head's middle tile twice, both whole: the same values stored again)
        assert len(whole) == tiles_total and all(len(set(v)) == 1 for v in whole.values()), (P, dict(whole))
        twice = {t for t, v in whole.items() if len(v) == 2}
        assert all(len(v) <= 2 for v in whole.values()) and (causal or not twice), (P, twice)
        got = defaultdict(list)
        arrivals: dict[int, list[int]] = defaultdict(list)
        slots: list[int] = []
        for c in range(P):
            for t, lo, hi, slot, group, size in _walk(split_k, split_pos, c, P, bh, hkv, sq, sk, causal):
                got[t].append((lo, hi, group, size))
                if size is not None:
                    arrivals[group].append(size)
                    slots.append(slot)
        assert set(got) == set(whole), P
        split_tiles = [t for t, v in got.items() if v[0][3] is not None]
        for t, pieces in got.items():
            (lo0, hi0) = whole[t][0]
            if t in twice:  # (whole both times)
                assert pieces == [pieces[0]] * 2 and pieces[0][3] is None, (P, t, pieces)
                pieces = pieces[:1]
            covered = sorted((lo, hi) for lo, hi, _, _ in pieces)
            # the pieces are consecutive key ranges from the whole tile's first block to its last, none empty
            # where the tile has at least as many blocks as pieces
            assert covered[0][0] == lo0 and covered[-1][1] == max(hi0, lo0), (P, t, covered, (lo0, hi0))
            assert all(a[1] == b[0] for a, b in itertools.pairwise(covered)), (P, t, covered)
            if len(pieces) > 1:
                assert len({(g_, n) for _, _, g_, n in pieces}) == 1 and pieces[0][3] == len(pieces), (P, t, pieces)
        # the counters: each split tile's group gets exactly `size` arrivals (the last resets it)
        for group, sizes in arrivals.items():
            assert len(sizes) == sizes[0], (P, group, sizes)
        assert len(arrivals) == len(split_tiles)
        # the records: one a piece, unique, within the workspace of SPLIT_ROUNDS records a CTA
        assert len(slots) == len(set(slots)) and all(0 <= s < SPLIT_ROUNDS * P for s in slots), (P, slots)
        # which tiles split: single tiles only (never a causal walk's uneven pairs), at most the last round's
        rounds_whole = math.ceil(tiles_total / P)
        left = tiles_total - (rounds_whole - 1) * P
        uneven = causal and len({v[0][1] - v[0][0] for v in whole.values()}) > 1
        if uneven or left == P:
            assert not split_tiles, (P, split_tiles)
        else:
            assert len(split_tiles) in (0, left), (P, left, split_tiles)
        splits += len(split_tiles)
    assert (splits > 0) == splits_somewhere, splits  # (the plan is exercised where it should be)
