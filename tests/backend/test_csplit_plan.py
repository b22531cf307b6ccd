"""The two walks of `TILEC_ATTN_CHAIN_SPLIT=1` / `TILEC_ATTN_CHAIN_TAIL=1`
(`passes/attention_csplit.py`) evaluated from the lowered kernel's own scalar
ops for many launches, as `test_split_plan` does for the long keys' split:
every CTA's consumer role of std's prefill kernel (f16, 128 x 64, D = 64, the
short keys' variant) run in Python on scalars, walk A's chained tiles and
walk B's pieces or tail tiles recorded by their key loops (the peeled first
iteration's block counted back in), then

- every tile's key blocks are covered exactly once: by one whole tile, or by
  the pieces of a split one, consecutive from the tile's first block to its
  last, the tile's range the variant's without the switch;
- the split tiles are the last round's `left`, each piece arriving at its
  tile's counter as many times as its size, the records unique and within
  the workspace (`SPLIT_ROUNDS` a CTA);
- with the tail, every tile of a causal launch of an even number of query
  blocks runs once (the pair walk runs an odd head's middle tile twice), and
  the launch's last item rounds' tiles run in walk B, heaviest first.

The benchmark's launch (4,096 tiles on 132 CTAs: 8 pieces of one key block
at the estimate's edge of 3) too: the scale llsim cannot reach."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict

import pytest
from test_attention_pipeline import _facts
from test_split_plan import _spied, _Walk
from test_split_plan import _walk as split_plan_walk

from tilelang.backend.codegen.split import SPLIT_ROUNDS
from tilelang.backend.gpu import nodes as g
from tilelang.ir import nodes as ir

SWITCHES = ("TILEC_ATTN_CHAIN", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE", "TILEC_ATTN_OSTORE", "TILEC_ATTN_QDOUBLE",
            "TILEC_ATTN_KVFIRST", "TILEC_ATTN_WALK", "TILEC_ATTN_SPLIT", "TILEC_ATTN_TAIL", "TILEC_ATTN_XROT",
            "TILEC_ATTN_CHAIN_SPLIT", "TILEC_ATTN_CHAIN_TAIL")


class _Walks(_Walk):
    """`test_split_plan._Walk` for the chained variant: a loop is a key loop where its body issues a product
    itself (the tile loops carry the chain's tiles too), and a peeled key loop (the chained first iteration
    before it, and the second with `TILEC_ATTN_CHAIN_EPI2=1`: its lower bound `lower + step` once or twice) is
    recorded from the tile's first block."""

    def __init__(self, *a: object) -> None:
        super().__init__(*a)  # type: ignore[arg-type]
        self.defs: dict[int, object] = {}

    def op(self, op: object) -> None:
        for r in g.results(op):
            self.defs[r.id] = op
        if isinstance(op, ir.Cast) and not op.result.shape:  # (the fast divisions' u32 / u64 steps)
            x, dt = self.val(op.x), op.result.dtype
            self.env[op.result.id] = None if x is None or not dt.is_int or isinstance(x, float) else dt.wrap(int(x))
            return
        if isinstance(op, ir.For) and not any(isinstance(x, g.WgmmaRegA | g.Wgmma) for x in op.body.ops):
            self.loop(op)
            return
        if isinstance(op, ir.For):
            lo = op.lower
            d = self.defs.get(lo.id)
            while isinstance(d, ir.Elementwise) and d.op is ir.ElemOp.ADD and d.operands[1] is op.step:
                lo = d.operands[0]  # (peeled: the first block ran before the loop; two with `TILEC_ATTN_CHAIN_EPI2`)
                d = self.defs.get(lo.id)
            self.tile = tuple(self.val(v) for v in self.current_pos)
            self.pieces.append([self.tile, self.val(lo), self.val(op.upper), None, None, None])
            for r in op.results:
                self.env[r.id] = None
            return
        super().op(op)


def _kernel(monkeypatch, var: str | None, edge: str = "0"):  # type: ignore[no-untyped-def]
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    if var is not None:
        monkeypatch.setenv(var, "1")
    monkeypatch.setenv("TILEC_ATTN_SPLIT_EDGE", edge)
    facts = _facts("oqkv", 3)
    return _spied(monkeypatch, {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=8 * 64)})


def _walk(kp, c: int, P: int, bh: int, sq: int, sk: int, causal: bool) -> list[list]:  # type: ignore[no-untyped-def]
    return split_plan_walk(*kp, c, P, bh, bh, sq, sk, causal, _Walks)


def _tiles(kp, P: int, bh: int, sq: int, sk: int, causal: bool) -> dict[tuple, list]:  # type: ignore[no-untyped-def]
    got: dict[tuple, list] = defaultdict(list)
    for c in range(P):
        for t, lo, hi, slot, group, size in _walk(kp, c, P, bh, sq, sk, causal):
            got[t].append((lo, hi, slot, group, size, c))
    return got


# BH, S_q, S_k (<= 512: the short keys' variant at BN = 64), causal; CTA counts
SPLIT_SHAPES = [(2, 300, 200, False), (1, 448, 512, False), (3, 1000, 500, False), (5, 384, 333, False),
                (2, 640, 512, True)]
CTAS = [1, 2, 3, 4, 5, 7, 8, 13, 31, 64]
# (all heavy, htier1, the tiers in tests/README.md: `TILEC_ATTN_CHAIN_SPLIT` is opt-in, measured +0..+0.5 %
# (RESULTS.md h15x, hattn3 2026-12-06); its default test is test_attention_csplit's
# test_where_the_chained_split_applies. The tail's walks below (`TILEC_ATTN_CHAIN_TAIL`, on by default) stay.)
SPLIT_SHAPES = [pytest.param(s, marks=pytest.mark.heavy) for s in SPLIT_SHAPES]


@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_chained_split_covers_every_key_block_once(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bh, sq, sk, causal = shape
    base, split = _kernel(monkeypatch, None), _kernel(monkeypatch, "TILEC_ATTN_CHAIN_SPLIT")
    n_tiles = bh * math.ceil(sq / 128)
    cut = 0
    for P in sorted({min(p, n_tiles) for p in CTAS}):
        whole = _tiles(base, P, bh, sq, sk, causal)
        got = _tiles(split, P, bh, sq, sk, causal)
        assert set(got) == set(whole) and len(whole) == n_tiles, P
        rounds = math.ceil(n_tiles / P)
        left = n_tiles - (rounds - 1) * P
        split_tiles, arrivals, slots = [], defaultdict(list), []
        for t, runs in got.items():
            (lo0, hi0, *_), *_ = whole[t]
            if runs[0][4] is None:  # whole: as the variant runs it (a causal middle tile twice)
                assert [r[:2] for r in runs] == [r[:2] for r in whole[t]], (P, t, runs)
                continue
            split_tiles.append(t)
            covered = sorted(r[:2] for r in runs)
            assert covered[0][0] == lo0 and covered[-1][1] == max(hi0, lo0), (P, t, covered)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(covered)), (P, t, covered)
            assert len({(r[3], r[4]) for r in runs}) == 1 and runs[0][4] == len(runs), (P, t, runs)
            arrivals[runs[0][3]] += [r[4] for r in runs]
            slots += [r[2] for r in runs]
        assert all(len(v) == v[0] for v in arrivals.values()) and len(arrivals) == len(split_tiles), P
        assert len(slots) == len(set(slots)) and all(0 <= s < SPLIT_ROUNDS * P for s in slots), (P, slots)
        if causal or left == P:
            assert not split_tiles, (P, split_tiles)
        else:
            assert len(split_tiles) in (0, left), (P, left, split_tiles)
        cut += len(split_tiles)
    assert (cut > 0) != shape[3], cut  # (some launch of every full shape splits)


# BH, S_q, S_k (causal); whether the tail applies (an even number of query blocks of 128)
TAIL_SHAPES = [(2, 1024, 512, True), (3, 512, 512, True), (2, 1000, 300, True), (2, 600, 300, False),
               (1, 900, 200, True)]


@pytest.mark.parametrize("shape", TAIL_SHAPES, ids=lambda s: "-".join(map(str, s)))
def test_chained_tail_runs_every_tile_once(shape, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bh, sq, sk, even = shape
    base, tail = _kernel(monkeypatch, None), _kernel(monkeypatch, "TILEC_ATTN_CHAIN_TAIL")
    n_tiles = bh * math.ceil(sq / 128)
    nf = math.ceil(sq / 128)
    assert (nf % 2 == 0) == even
    for P in sorted({min(p, n_tiles) for p in CTAS}):
        pairs = _tiles(base, P, bh, sq, sk, True)
        got = _tiles(tail, P, bh, sq, sk, True)
        assert set(got) == set(pairs) and len(got) == n_tiles, P
        for t, runs in got.items():
            assert {r[:2] for r in runs} == {r[:2] for r in pairs[t]}, (P, t, runs)  # the same key blocks
            assert len(runs) == (1 if even else len(pairs[t])), (P, t, runs)  # once (odd: the pairs as before)


@pytest.mark.heavy
@pytest.mark.parametrize("var", ["TILEC_ATTN_CHAIN_SPLIT", "TILEC_ATTN_CHAIN_TAIL"])
def test_the_benchmarks_launch(var: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The benchmark's launch shape at BN = 64 (B * H = 512, S = 1,024: 4,096 tiles; the variant at BN = 64
    bounds K's rows at 512, so S_k = 512 here, 8 key blocks a tile as at BN = 128) on 132 CTAs, the estimate's
    edge 3: under the split 31 whole rounds and the last 4 tiles in 8 pieces of one block on 32 CTAs; under
    the tail (causal) every tile once, the last 2 item rounds' 400 tiles in walk B."""
    causal = var == "TILEC_ATTN_CHAIN_TAIL"
    kp = _kernel(monkeypatch, var, edge="3")
    got = _tiles(kp, 132, 512, 1024, 512, causal)
    assert len(got) == 4096
    if not causal:
        cut = {t: runs for t, runs in got.items() if runs[0][4] is not None}
        assert len(cut) == 4 and all(len(r) == 8 and all(x[1] - x[0] == 1 for x in r) for r in cut.values())
        assert len({x[5] for r in cut.values() for x in r}) == 32  # 32 CTAs, a piece each
        assert all(len(r) == 1 for t, r in got.items() if t not in cut)
    else:
        assert all(len(r) == 1 for r in got.values())
