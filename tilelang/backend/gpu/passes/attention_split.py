"""The persistent attention walk's last round split along the keys
(`TILEC_ATTN_SPLIT`, issue 15).

When a walk's tiles do not divide evenly among its CTAs, the last round runs
a few tiles while the other CTAs idle (~3 % of every prefill row on the H200,
RESULTS.md 2026-12-04). With the split (`attention_tiles.walk_setup`'s
`split`: single tiles, at most half the CTAs busy in that round) each of the
last round's `left` tiles is cut into `pieces` consecutive key ranges, piece
i of tile g run by the CTA at place g + i * left, from the loop's initial
state. Where `attention_softmax.prove` shows the loop an online softmax and
its epilogue blind to the state's shift, a piece's consumers then, instead of
the epilogue:

    save (m, l, where(ran, acc, 0)) to record `slot` (`g.SplitSave`)
    last = arrive at the tile's counter, `pieces` arrivals (`g.SplitArrive`)
    if last:
        (m, l, acc) = (k, 0, 0)
        for i in 0..pieces:                     every piece's record, its own too
            (mi, li, ai) = record g + i * left (`g.SplitLoad`)
            m' = max(m, mi); l = l b^(m - m') + li b^(mi - m'); acc likewise
        the epilogue on (m, l, acc)

which is `attention_softmax.split`'s meaning (the interpreter's reference).
In two passes (`two_pass`, the split form's merge): (m, l) from every
record's first words, then acc = sum_i acc_i b^(m_i - m), each record's
accumulator added word by word as it is loaded (`g.SplitLoad.fma`), so the
merge holds one accumulator in registers, not two.
Whole tiles (every round but a split last one) run the epilogue as before;
a launch whose walk does not split (causal pairs, no tile left over, tiles
too short) runs a copy of the consumers' walk without the split's code
(`whole_copy`). Not with the chained or pingpong forms, nor with O through shared memory
(the pass keeps the whole-tile walk there).

With `TILEC_ATTN_SPLIT_FORMS=1` (`backend/split_form.py`) the split is a
second compiled form instead: the kernel without it asks for the form
(`form_request`), and the form is the pieces' walk alone, single tiles, or
pairs (a causal walk's: `TILEC_ATTN_SPLIT_PAIRS`; a piece saves, arrives
and maybe merges once for each tile of its pair, `split_marks(pairs=True)`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.backend import split_form
from tilelang.backend.env_switch import number
from tilelang.backend.split_form import SCALAR_OPS, SplitForm
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_softmax as sm
from . import attention_tail as tails
from . import attention_tiles as tiles
from . import switches
from .attention_tiles import Marks, clone, split_marks
from .context import Fresh
from .pipeline import _Build, role_registers

# "1" (the default since 2026-12-04 13:07: +2..+4 % on D = 64 full rows, causal within the spread): split the
# last round where the proof holds and the merge fits (D = 64); "0": whole tiles
SPLIT_DEFAULT = "1"
MAX_PIECES = 16  # pieces a tile at most (each piece's record is read by the last CTA)


# The merge holds two accumulators (the running one and a record's) in registers: at 32 registers a thread
# each (D = 64 at 128 x 128) ptxas 13.0 spills 4 bytes; at 64 (D = 128) 76 B (f16) to 948 B (bf16).
MAX_ACC_REGS = 32
# D = 128 (64 accumulator registers a thread): the split walk beside the whole tiles' copy put ptxas 13.0 over the
# consumers' 232 registers (124 B of spills, two reloads a key block in the copy's loop); with the producer at 24
# registers (the consumers at 240: `role_registers`) no key loop spills (per-tile spills only, ~20 a tile).
# `TILEC_ATTN_SPLIT_WIDE=1` lets these kernels split (opt-in until measured on the GPU)
WIDE_ACC_REGS = 64
WIDE_PRODUCER_REGS = 24
WIDE_DEFAULT = "0"


# A consumer thread's registers the split's merge needs at least (with the producer at `WIDE_PRODUCER_REGS`):
# beside three consumer warpgroups (BM = 192: 160 registers a consumer thread, `pipeline.role_registers`) the
# split kernel at D = 64 spilled 948 B (ptxas 13.0, BN = 128; the key loop itself none: hattn9), where two
# warpgroups' 240 spill nothing
ROOMY_REGS = 200


def roomy(consumers: int) -> bool:
    """Whether `consumers` consumer warpgroups leave each thread the registers the split's merge (and the chained
    short keys' variant, `attention_chain`) need beside the key loop's (`ROOMY_REGS`)."""
    return role_registers(consumers, WIDE_PRODUCER_REGS) >= ROOMY_REGS


def wide() -> bool:
    """Whether kernels of up to `WIDE_ACC_REGS` accumulator registers a thread split (`TILEC_ATTN_SPLIT_WIDE`)."""
    return split_form.switch("TILEC_ATTN_SPLIT_WIDE", WIDE_DEFAULT)


def fits(acc_regs: int, rotated: bool, forms: bool = False) -> bool:
    """Whether a consumer thread's `acc_regs` accumulator registers leave room for the merge (past
    `MAX_ACC_REGS` only in the rotated loop: the overlapped one at D = 128 spilled 1,012 B with the split;
    `forms`: the split in a form of its own, `split_form`, which lets these split as `wide` does)."""
    return fits_narrow(acc_regs) or ((wide() or forms) and rotated and acc_regs <= WIDE_ACC_REGS)


def fits_narrow(acc_regs: int) -> bool:
    """Whether the merge fits beside the consumers' other registers without `wide`'s register split."""
    return acc_regs <= MAX_ACC_REGS


def producer_regs(acc_regs: int, default: int) -> int:
    """The producer's registers in a split kernel of `acc_regs` accumulator registers a consumer thread:
    `default`, or `WIDE_PRODUCER_REGS` past `MAX_ACC_REGS` (the rest go to the consumers)."""
    return default if fits_narrow(acc_regs) else WIDE_PRODUCER_REGS


# "auto": the split form (`split_form`) merges in two passes, the split inside the default kernel in one (as measured)
MERGE_DEFAULT = "auto"


def two_pass(form: bool) -> bool:
    """`TILEC_ATTN_SPLIT_MERGE`: "2" the merge in two passes over the records (the max and the row sums from their
    first words, then each record's accumulator added to one accumulator word by word as it is loaded,
    `g.SplitLoad.fma`: one accumulator in registers, not two; ptxas 13.0 then gives the split form's key loop the
    default kernel's instructions, 641 at D = 64 and 688 at D = 128 against 686, where with the one-pass merge's two
    accumulators it had 662 and 718); "1" one pass; "auto" (unset): two in the split form (`form`), else one."""
    want = switches.mode("TILEC_ATTN_SPLIT_MERGE", MERGE_DEFAULT, ("1", "2", "auto"))
    return want == "2" or (want == "auto" and form)


def pieces() -> int:
    """The most pieces a tile is cut into (`TILEC_ATTN_SPLIT`: "0" none, "1" `MAX_PIECES`, or a number)."""
    want = number("TILEC_ATTN_SPLIT", int(SPLIT_DEFAULT), 0, f"0 (none), 1 ({MAX_PIECES} pieces) or a number of pieces")
    n = MAX_PIECES if want == 1 else want
    return n if n >= 2 else 0


def marks(loop: ir.For, fresh: Fresh) -> Marks:
    i32 = DType.I32
    return Marks(fresh.value(i32, (), "lo"), fresh.value(i32, (), "hi"), loop.lower, loop.upper,
                 *(fresh.value(i32, (), h) for h in ("round", "ctas", "cta", "items", "kvs", "pieces")))


def epilogue(s: sm.Softmax, loop: ir.For, back: dict[int, ir.Value], raw_acc: ir.Value, epi: list[object],
             ran: ir.Value, mk: Marks, threads: int, fresh: Fresh, span: Any, form: str = "",
             unroll: int = 1) -> list[object]:
    """The consumers' ops after a tile's loop: `epi` (reading the state
    `back` maps the loop's results to, the accumulator as `raw_acc` where
    the zero select was dropped) for a whole tile, the save, arrival and
    merge for a piece (see the module's docstring). `unroll` > 1 (the
    one-pass merge): that many records loaded an iteration before any is
    merged, so their loads wait for the L2 together (a record past the
    last is piece 0's again, weighted 0): `attention_csplit`'s pieces."""
    E = ir.ElemOp
    res = loop.results
    m0, l0 = back[res[s.m].id], back[res[s.row_sum].id]
    acc_shape = res[s.acc].shape
    # the piece's values, computed here from the walk's (the round and P through an asm copy LLVM cannot
    # move: else it would compute them once before the key loop, where they spilled registers)
    ops: list[object] = []
    r2, p2 = fresh.value(DType.I32, (), "round"), fresh.value(DType.I32, (), "ctas")
    ops.append(g.Opaque((r2, p2), (mk.round, mk.P), span))
    sb = _Build(fresh)
    pm = split_marks(sb, r2, p2, mk.c, mk.nh, mk.kvs, mk.pieces, pairs=form == "pairs")
    ops += sb.ops

    def v(shape: tuple[int, ...], dtype: DType = DType.F32, hint: str = "") -> ir.Value:
        return fresh.value(dtype, shape, hint)

    def el(out: list[object], code: ir.ElemOp, *xs: ir.Value) -> ir.Value:
        r = v(xs[-1].shape, xs[-1].dtype if code is not E.GT else DType.BOOL)
        out.append(ir.Elementwise(r, code, xs))
        return r

    def const(out: list[object], x: float | int, shape: tuple[int, ...], dtype: DType = DType.F32) -> ir.Value:
        r = v(shape, dtype)
        out.append(ir.Const(r, x))
        return r

    def bc(out: list[object], x: ir.Value, shape: tuple[int, ...]) -> ir.Value:
        r = v(shape, x.dtype)
        out.append(ir.Broadcast(r, x))
        return r

    # a piece: its state saved (an empty piece's accumulator registers hold nothing: zeros)
    piece: list[object] = []
    accz = el(piece, E.WHERE, bc(piece, ran, acc_shape), raw_acc, const(piece, 0.0, acc_shape))
    last = v((), DType.BOOL, "last")
    piece += [g.SplitSave((m0, l0, accz), pm["slot"], threads, span), g.SplitArrive(last, pm["group"], pm["pieces"], threads, span)]
    # the last piece in: every record merged, from the initial state
    merge: list[object] = []
    i, mc, lc, ac = v((), DType.I32, "piece"), v(m0.shape, hint="m"), v(l0.shape, hint="l"), v(acc_shape, hint="acc")
    exp = E.EXP2 if s.base2 else E.EXP
    if not two_pass(bool(form)) and unroll > 1:
        merge += _merge_unrolled(s, m0, l0, acc_shape, pm, unroll, threads, fresh, span)
        mF, lF, aF = g.results(merge[-1])  # type: ignore[misc]
    elif not two_pass(bool(form)):
        body: list[object] = []
        slot = el(body, E.ADD, pm["group"], el(body, E.MUL, i, pm["left"]))
        mi, li, ai = v(m0.shape), v(l0.shape), v(acc_shape)
        body.append(g.SplitLoad((mi, li, ai), slot, threads, span))
        mn = el(body, E.MAXIMUM, mc, mi)
        f, fi = el(body, exp, el(body, E.SUB, mc, mn)), el(body, exp, el(body, E.SUB, mi, mn))
        ln = el(body, E.ADD, el(body, E.MUL, lc, f), el(body, E.MUL, li, fi))
        an = el(body, E.ADD, el(body, E.MUL, ac, bc(body, f, acc_shape)), el(body, E.MUL, ai, bc(body, fi, acc_shape)))
        body.append(ir.Yield((mn, ln, an)))
        inits = (const(merge, s.init, m0.shape), const(merge, 0.0, l0.shape), const(merge, 0.0, acc_shape))
        lo, one = const(merge, 0, (), DType.I32), const(merge, 1, (), DType.I32)
        mF, lF, aF = v(m0.shape, hint="m"), v(l0.shape, hint="l"), v(acc_shape, hint="acc")
        merge.append(ir.For((mF, lF, aF), lo, pm["pieces"], one, inits, ir.Region((i, mc, lc, ac), tuple(body)), span))  # type: ignore[arg-type]
    else:  # two passes: (m, l) from the records' first words, then the accumulators summed at the final max
        lo, one = const(merge, 0, (), DType.I32), const(merge, 1, (), DType.I32)
        b1: list[object] = []
        slot = el(b1, E.ADD, pm["group"], el(b1, E.MUL, i, pm["left"]))
        mi, li = v(m0.shape), v(l0.shape)
        b1.append(g.SplitLoad((mi, li), slot, threads, span, tail=(accz,)))
        mn = el(b1, E.MAXIMUM, mc, mi)
        ln = el(b1, E.ADD, el(b1, E.MUL, lc, el(b1, exp, el(b1, E.SUB, mc, mn))),
                el(b1, E.MUL, li, el(b1, exp, el(b1, E.SUB, mi, mn))))
        b1.append(ir.Yield((mn, ln)))
        mF, lF = v(m0.shape, hint="m"), v(l0.shape, hint="l")
        merge.append(ir.For((mF, lF), lo, pm["pieces"], one, (const(merge, s.init, m0.shape), const(merge, 0.0, l0.shape)),
                            ir.Region((i, mc, lc), tuple(b1)), span))  # type: ignore[arg-type]
        i2, ac2 = v((), DType.I32, "piece"), v(acc_shape, hint="acc")
        b2: list[object] = []
        slot2 = el(b2, E.ADD, pm["group"], el(b2, E.MUL, i2, pm["left"]))
        m2 = v(m0.shape)
        b2.append(g.SplitLoad((m2,), slot2, threads, span, tail=(l0, accz)))
        fi = bc(b2, el(b2, exp, el(b2, E.SUB, m2, mF)), acc_shape)
        an = v(acc_shape)
        b2.append(g.SplitLoad((an,), slot2, threads, span, head=(m0, l0), fma=(ac2, fi)))  # the accumulator's words
        b2.append(ir.Yield((an,)))
        aF = v(acc_shape, hint="acc")
        merge.append(ir.For((aF,), lo, pm["pieces"], one, (const(merge, 0.0, acc_shape),),
                            ir.Region((i2, ac2), tuple(b2)), span))  # type: ignore[arg-type]
    mapping = {m0.id: mF, l0.id: lF, raw_acc.id: aF, back[res[s.acc].id].id: aF}
    merge += clone(epi, fresh, mapping)
    nothing = ir.Region((), (ir.Yield(()),))
    piece.append(ir.If((), last, ir.Region((), (*merge, ir.Yield(()))), nothing, span))  # type: ignore[arg-type]
    one_c = const(ops, 1, (), DType.I32)
    cut = v((), DType.BOOL, "piece")
    ops.append(ir.Elementwise(cut, E.GT, (pm["pieces"], one_c)))
    ops.append(ir.If((), cut, ir.Region((), (*piece, ir.Yield(()))),  # type: ignore[arg-type]
                     ir.Region((), (*epi, ir.Yield(()))), span))  # type: ignore[arg-type]
    return ops


def _merge_unrolled(s: sm.Softmax, m0: ir.Value, l0: ir.Value, acc_shape: tuple[int, ...], pm: dict[str, ir.Value],
                    unroll: int, threads: int, fresh: Fresh, span: Any) -> list[object]:
    """`epilogue`'s one-pass merge, `unroll` records an iteration: the loads
    first (a record past the last, `pieces`, reads piece 0's, which exists),
    then each merged in order, an absent one at the initial max and weight 0;
    the loop's last op defines (m, l, acc)."""
    E = ir.ElemOp
    b = _Build(fresh)
    i, mc, lc, ac = (fresh.value(DType.I32, (), "piece"), fresh.value(DType.F32, m0.shape, "m"),
                     fresh.value(DType.F32, l0.shape, "l"), fresh.value(DType.F32, acc_shape, "acc"))
    exp = E.EXP2 if s.base2 else E.EXP
    body = _Build(fresh)
    zero = body.const(0)
    loads = []
    for u in range(unroll):
        iu = body.elem(E.ADD, i, body.const(u))
        valid = body.elem(E.LT, iu, pm["pieces"], dtype=DType.BOOL, hint="valid")
        slot = body.elem(E.ADD, pm["group"], body.elem(E.MUL, body.elem(E.WHERE, valid, iu, zero), pm["left"]))
        rs = (fresh.value(DType.F32, m0.shape), fresh.value(DType.F32, l0.shape), fresh.value(DType.F32, acc_shape))
        body.ops.append(g.SplitLoad(rs, slot, threads, span))
        loads.append((valid, *rs))

    def tile(x: ir.Value, shape: tuple[int, ...], dtype: DType = DType.F32) -> ir.Value:
        r = fresh.value(dtype, shape)
        body.ops.append(ir.Broadcast(r, x))
        return r

    def const(x: float) -> ir.Value:
        r = fresh.value(DType.F32, m0.shape)
        body.ops.append(ir.Const(r, x))
        return r

    def el(code: ir.ElemOp, *xs: ir.Value) -> ir.Value:
        r = fresh.value(xs[-1].dtype, xs[-1].shape)
        body.ops.append(ir.Elementwise(r, code, xs))
        return r

    m, ll, acc = mc, lc, ac
    for valid, mi, li, ai in loads:
        vb = tile(valid, m0.shape, DType.BOOL)
        mi2 = el(E.WHERE, vb, mi, const(s.init))
        mn = el(E.MAXIMUM, m, mi2)
        f = el(exp, el(E.SUB, m, mn))
        fi = el(E.WHERE, vb, el(exp, el(E.SUB, mi2, mn)), const(0.0))
        ll = el(E.ADD, el(E.MUL, ll, f), el(E.MUL, li, fi))
        acc = el(E.ADD, el(E.MUL, acc, tile(f, acc_shape)), el(E.MUL, ai, tile(fi, acc_shape)))
        m = mn
    body.ops.append(ir.Yield((m, ll, acc)))
    inits = []
    for x, shape in ((s.init, m0.shape), (0.0, l0.shape), (0.0, acc_shape)):
        r = fresh.value(DType.F32, shape)
        b.ops.append(ir.Const(r, x))
        inits.append(r)
    lo, step = b.const(0), b.const(unroll)
    outs = (fresh.value(DType.F32, m0.shape, "m"), fresh.value(DType.F32, l0.shape, "l"), fresh.value(DType.F32, acc_shape, "acc"))
    b.ops.append(ir.For(outs, lo, pm["pieces"], step, tuple(inits), ir.Region((i, mc, lc, ac), tuple(body.ops)), span))  # type: ignore[arg-type]
    return b.ops


def carrier(k: g.GpuKernel) -> str:
    """The tensor whose facts say which form a launch runs (`TensorFacts.split_walk`): the walk's
    largest `&mut` partition (`attention_tiles.walk_setup`'s logical grid)."""
    return max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank).name


def form_request(k: g.GpuKernel, kv: set[int], outside: list[object], bounds: tuple[ir.Value, ...]) -> SplitForm | None:
    """`TILEC_ATTN_SPLIT_FORMS=1`: the request (`split_form.SplitForm`) of
    the kernel compiled without the split: the walk's `Split.on` as the
    split form computes it (`attention_tiles.walk_setup` on the kernel's
    scalar ops `outside`, the key loop's `bounds`), sliced to the ops it
    depends on; None where one of them is not a launch's to fix (a load, a
    loop, a tile, a float)."""
    fresh = Fresh(max(k.next_id, 1) * 4 + (1 << 20))  # (ids of their own: the plan is never emitted)
    b = _Build(fresh)
    pairs = split_form.pairs()
    walk = tiles.walk_setup(b, k, kv, outside, bounds, pieces(), plan_pairs=pairs)
    assert walk.split is not None
    ons = (("single", walk.split.on), *((("pairs", walk.split.on_pairs),) if walk.split.on_pairs is not None else ()))
    return plan(k, b.ops, ons, carrier(k))


def tail_request(k: g.GpuKernel, kv: set[int], outside: list[object], bounds: tuple[ir.Value, ...],
                 tail: bool = True, once: bool = False) -> SplitForm | None:
    """The request (`split_form.SplitForm`) of a kernel whose walk has no tail
    for the tail variant (`attention_tail`, kind `attention_tail.KIND`; `tail`)
    where the launch's walk (`attention_tiles.walk_setup` on the kernel's
    scalar ops `outside`, the key loop's `bounds`) has one
    (`attention_tail.applies`: pairs of an even number of query blocks), and
    (`once`) for the once variant (`attention_tiles.ONCE_KIND`) where it hands
    out pairs of an odd number (`attention_tiles.odd_pairs`); None where the
    plan needs what a launch does not fix."""
    b = _Build(Fresh(max(k.next_id, 1) * 4 + (1 << 20)))  # (ids of their own: the plan is never emitted)
    w = tiles.walk_setup(b, k, kv, outside, bounds)
    kinds = (((tails.KIND, tails.applies(b, w.pairs, w.nf)),) if tail else ()) + \
        (((tiles.ONCE_KIND, tiles.odd_pairs(b, w.pairs, w.nf)),) if once else ())
    return plan(k, b.ops, kinds, carrier(k))


def plan(k: g.GpuKernel, ops: list[object], ons: tuple[tuple[str, ir.Value], ...], param: str) -> SplitForm | None:
    """The `SplitForm` on `param` whose kinds hold where `ons` (bools that `ops` compute) do: `ops` sliced to
    what they need; None where that is not a launch's to fix (a load, a loop, a tile, a float)."""
    need = {on.id for _, on in ons}
    keep: list[object] = []
    for op in reversed(ops):
        if any(r.id in need for r in g.results(op)):
            keep.append(op)
            need |= {v.id for o in g.walk(ir.Region((), (op,))) for v in g.operands(o)}  # type: ignore[arg-type]
    keep.reverse()
    defined: set[int] = set()
    for op in g.walk(ir.Region((), tuple(keep))):  # type: ignore[arg-type]
        if not (isinstance(op, (*SCALAR_OPS, ir.If, ir.Yield))) or any(r.shape for r in g.results(op)):
            return None
        if any(v.dtype.is_float for v in (*g.results(op), *g.operands(op))):
            return None  # (integers and bools only: a launch's numbers, computed exactly)
        defined |= {r.id for r in g.results(op)}
    scalars = tuple((p.name, p.value.id) for p in k.params if isinstance(p, ir.ScalarParam) and p.value.id in need)
    free = need - defined - {v for _, v in scalars}
    if free:  # a value the plan cannot know at launch
        return None
    tensors = tuple(sorted({op.tensor for op in g.walk(ir.Region((), tuple(keep))) if isinstance(op, ir.TensorDim)}))  # type: ignore[arg-type]
    return SplitForm(param, tuple(keep), ons, scalars, tensors)




def single_tiles(walk: tiles.Walk, fresh: Fresh) -> tuple[tiles.Walk, list[object]]:
    """`walk` for a role's split walk, which runs only where the launch splits (`Split.on`: never with pairs):
    its `pairs` a constant false (one value fewer through the key loop, and the pairs' arithmetic folded), and
    the op that defines it (in the role, before the walk)."""
    f = fresh.value(DType.BOOL, (), "pairs")
    return dataclasses.replace(walk, pairs=f), [ir.Const(f, False)]


def whole_copy(walk: tiles.Walk, c_walk: list[object], ops: list[object], epi: list[object], whole: list[object],
               mk: Marks, ring: ir.Value, tn: ir.Value, trips: ir.Value, outside: list[object],
               layouts: dict[int, Any], fresh: Fresh, span: Any) -> list[object]:
    """A role's split walk `c_walk` (of the tile ops `ops`, whose epilogue
    `epi` is `epilogue`'s: the consumers'; none: the producer's) where the
    launch's walk splits its last
    round (`Split.on`, the same in every CTA); else a walk of a copy of
    `ops` with the whole tile's epilogue `whole` and the user's loop bounds,
    without marks. So the split's code costs a walk that does not split
    nothing: ptxas 13.0 (D = 64, 128 x 128) gives the copy's key loop the
    default kernel's instructions (641, 411 on a block's usual path) and the
    kernel no spills (4 B with one walk for both); the causal rows, which
    never split, lost 1-2.3 % with the split's code in their walk (RESULTS.md
    2026-12-04), still 1.5 % with the consumers' walk copied alone (the
    producer's per-tile pieces: two integer divisions before each tile's
    first copy). (A split walk's whole rounds by a copy too, two walks in
    sequence: 2 more instructions a block in the copies' loops, 41 in the
    pieces'.) The copy's values are renamed (`clone`) and keep the layouts
    of the values they copy."""
    assert walk.split is not None
    at = {id(op) for op in epi}
    plain: list[object] = []
    placed = False
    for op in ops:  # `epi`'s ops (one run of them) give way to `whole`
        if id(op) not in at:
            plain.append(op)
        elif not placed:
            plain += whole
            placed = True
    assert placed or not epi, "the split's epilogue is not among the tile's ops"
    ring2, tn2 = fresh.value(ring.dtype, (), ring.hint), fresh.value(tn.dtype, (), tn.hint)
    mapping: dict[int, ir.Value] = {ring.id: ring2, tn.id: tn2, mk.lower.id: mk.lower0, mk.upper.id: mk.upper0}
    seed = set(mapping)
    copy = clone(plain, fresh, mapping)
    for old, new in list(mapping.items()):
        if old not in seed and old in layouts:
            layouts.setdefault(new.id, layouts[old])
    w = tiles.tile_loop(walk, fresh, outside, copy, ring2, mapping.get(trips.id, trips), tn2, span)
    return [ir.If((), walk.split.on, ir.Region((), (*c_walk, ir.Yield(()))),  # type: ignore[arg-type]
                  ir.Region((), (*w, ir.Yield(()))), span)]  # type: ignore[arg-type]


__all__ = ["MAX_ACC_REGS", "MAX_PIECES", "ROOMY_REGS", "SPLIT_DEFAULT", "WIDE_ACC_REGS", "WIDE_PRODUCER_REGS", "carrier",
           "epilogue", "fits", "fits_narrow", "form_request", "marks", "pieces", "plan", "producer_regs", "roomy",
           "single_tiles", "tail_request", "whole_copy", "wide"]
