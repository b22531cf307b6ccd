"""The loops the Hopper attention pipeline (`attention.py`) takes, and its plan.

Conditions (else the generic path): sm_90a; the kernel's only loop with an
`mma` is a top-level `for` whose body has exactly two; the first multiplies a
loop-invariant load (Q, [BM, D] with leading size-1 dims, BM 64 or 128, D a
multiple of 64 up to 256) by a loaded, optionally transposed tile (K) with a
zero accumulator; the second multiplies a cast to f16/bf16 of a body value
by another loaded tile (V); the loads are f16/bf16 2-D or 3-D tensors TMA can
read (16-byte aligned, last dim a multiple of 16), each feeding its `mma`
only; every tile in the body and after the loop has at most two dims larger
than one, rows BM and columns a multiple of 8; reductions run along the
columns; nothing else reads or writes memory in the loop.

`match` returns the `AttnPlan` (the loop, its two products, the TMA-copied Q,
K and V, the blocks and the ring's stages) or None. The ring has one stage
where two do not fit beside Q (128 x 256 at D = 128: 2 x 64 KiB a stage): the
serial schedule then, copies not overlapped with products (expected far
above the generic path's 0.02x SDPA: `benchmarks/cliffs.py` measures it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tilelang.backend.env_switch import SwitchError, flag, mode
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_qx as qxm
from . import attention_vmask as vmask
from .context import PassContext
from .pipeline import SMEM_LIMIT
from .rewrite import uses

_SCALAR = (ir.Const, ir.Elementwise, ir.Cast, ir.TensorDim, ir.BlockId, ir.NumBlocks)
_TILE = (ir.Const, ir.Elementwise, ir.Cast, ir.Broadcast, ir.Reshape, ir.Arange, ir.Reduce)


@dataclass(frozen=True, slots=True)
class Tma:
    """A TMA-copied operand: the load, the [rows, cols] tile it gives, its tensor's rank."""

    load: ir.Load
    rows: int
    cols: int
    rank: int
    chain: tuple[object, ...]  # the load and the reshapes/permute up to the mma operand

    @property
    def slabs(self) -> int:
        return self.cols // 64

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * 2


@dataclass(frozen=True, slots=True)
class AttnPlan:
    loop: ir.For
    s_dot: g.DotOp
    o_dot: g.DotOp
    q: Tma
    k: Tma
    v: Tma
    k_kmajor: bool
    v_kmajor: bool
    BM: int
    BN: int
    stages: int
    vmask: vmask.VMask | None = None  # V's rows past a bound zeroed (`attention_vmask`)
    short: bool = False  # compiled for short keys: chained and rotated (`attention_chain.short`)
    qx: qxm.QX | None = None  # Q computed from its loaded tile before the loop (`attention_qx`)


def _is_scalar(op: object) -> bool:
    return isinstance(op, _SCALAR) and all(not v.shape for v in g.results(op))


def scalar_reads(before: list[object], written: set[str]) -> set[int]:
    """Ids of the ops before the loop that read one element of a tensor the kernel never writes into a scalar:
    an unmasked load of a tile of one element (`lens.partition([1]).load([b])`) and the reduction of it to a
    scalar (`.item()`), the load's only users. Both roles run them before they part, as the loop's scalars (a
    key length read from a tensor: the trip count and a mask's bound); `TILEC_ATTN_SCALAR_READS=0` refuses
    them (the loop keeps the generic path)."""
    if not flag("TILEC_ATTN_SCALAR_READS", "1"):
        return set()
    users: dict[int, list[object]] = {}
    for op in before:
        for v in g.operands(op):
            users.setdefault(v.id, []).append(op)
    out: set[int] = set()
    for op in before:
        if not (isinstance(op, ir.Load) and op.mask is None and op.tensor not in written
                and all(x == 1 for x in op.result.shape)):
            continue
        reds = users.get(op.result.id, [])
        if reds and all(isinstance(r, ir.Reduce) and not r.result.shape for r in reds):
            out |= {id(op), *(id(r) for r in reds)}
    return out


def _chain(v: ir.Value, defs: dict[int, object]) -> tuple[ir.Load, list[object], bool] | None:
    """The load behind operand `v` through reshapes (dropping leading 1s) and at
    most one 2-D transpose: (load, ops, transposed)."""
    ops: list[object] = []
    transposed = False
    cur = v
    while True:
        op = defs.get(cur.id)
        if isinstance(op, ir.Permute) and op.perm == (1, 0) and not transposed:
            transposed = True
        elif isinstance(op, ir.Reshape):
            pass
        elif isinstance(op, ir.Load):
            ops.append(op)
            if op.mask is not None or op.padding is not None:
                return None
            return op, ops[::-1], transposed
        else:
            return None
        ops.append(op)
        cur = op.x  # type: ignore[attr-defined]


def _tma(load: ir.Load, ops: list[object], k: g.GpuKernel, ctx: PassContext) -> Tma | None:
    t = k.tensor(load.tensor)
    f = ctx.fact(load.tensor)
    if t.rank not in (2, 3) or t.dtype not in (DType.F16, DType.BF16):
        return None
    if f.bf16_f32 or not f.aligned16 or len(f.dims_div16) != t.rank or not f.dims_div16[-1]:
        return None
    shape = load.result.shape
    if any(x != 1 for x in shape[:-2]):
        return None
    rows, cols = shape[-2], shape[-1]
    if cols % 64 or rows > 256 or rows % 8:
        return None
    return Tma(load, rows, cols, t.rank, tuple(ops))


def _placeable(v: ir.Value, BM: int) -> bool:
    live = [x for x in v.shape if x > 1]
    if len(live) > 2:
        return False
    if len(live) == 2:
        return live[0] == BM and live[1] % 8 == 0
    if len(live) == 1:
        return live[0] == BM or live[0] % 8 == 0
    return True


PATH = "the Hopper attention pipeline"
_MEMORY_HELP = ("the pipeline copies Q, K and V with TMA: 2-D or 3-D f16/bf16 tensors, 16-byte aligned, the last "
                "dim a multiple of 16 elements (8 for 3-D), tiles of 64-column slabs and at most 256 rows")


@dataclass(frozen=True, slots=True)
class No:
    """Why `match` refused a loop (`PassContext.refuse`'s note)."""

    span: object
    why: str
    help: str = ""


def describe(op: object) -> str:
    """An op as a note names it: `load` of `bias`, `permute`, `cast to f32`."""
    if isinstance(op, ir.Load):
        return f"a load of `{op.tensor}`"
    if isinstance(op, ir.Store):
        return f"a store to `{op.tensor}`"
    if isinstance(op, ir.Cast):
        return f"a cast to {op.result.dtype.value}"
    if isinstance(op, ir.Elementwise):
        return f"`{op.op.value}`"
    return f"`{type(op).__name__.lower()}`"


def match(k: g.GpuKernel, ctx: PassContext) -> AttnPlan | None:
    """The plan of `k`'s attention loop, or None (then the note of why, in `ctx`, for `tilec emit --explain`)."""
    got = _match(k, ctx)
    if isinstance(got, No):
        # no note for a kernel whose products are all of other types (round 15: an i32 edit-distance kernel's
        # shift products were told the attention pipeline refused their loop), which no pipeline takes
        if got.why and any(isinstance(o, g.DotOp | ir.Mma) and o.a.dtype in (DType.F16, DType.BF16) for o in g.walk(k.body)):
            ctx.refuse(PATH, got.span, got.why, got.help)  # type: ignore[arg-type]
        return None
    return got


def _match(k: g.GpuKernel, ctx: PassContext) -> AttnPlan | No:
    ops = list(k.body.ops)
    loops = [op for op in ops if isinstance(op, ir.For)
             and any(isinstance(o, g.DotOp | ir.Mma) for o in g.walk(op.body))]
    if len(loops) != 1:
        return No(k.span, f"{len(loops)} loops of the kernel hold an `mma`; the pipeline takes one")
    if any(isinstance(o, g.DotOp | ir.Mma) for op in ops if op is not loops[0] for o in g.walk(ir.Region((), (op,)))):
        return No(loops[0].span, "an `mma` outside the loop")
    loop = loops[0]
    body = loop.body
    dots = [op for op in body.ops if isinstance(op, g.DotOp)]
    if len(dots) != 2 or sum(isinstance(o, g.DotOp | ir.Mma) for o in g.walk(body)) != 2:
        return No(loop.span, "the loop's body holds other products than its two, or one inside an `if`")
    s_dot, o_dot = dots
    defs: dict[int, object] = {}
    for op in g.walk(k.body):
        for r in g.results(op):
            defs[r.id] = op
    count = uses(k.body)
    # the first product: Q (before the loop) times K (loaded in the loop), zero accumulator
    qc, kc = _chain(s_dot.a, defs), _chain(s_dot.b, defs)
    written = {o.tensor for o in g.walk(k.body) if isinstance(o, ir.Store | ir.AtomicRMW)}
    written |= {p.name for p in k.tensor_params if p.mutable}
    qx = None
    if qc is None or qc[2]:  # Q computed from its loaded tile before the loop (`attention_qx`)
        got = _q_transform(k, ctx, s_dot, defs, ops[:ops.index(loop)], written)
        if isinstance(got[0], str):
            what = got[1] or defs.get(s_dot.a.id)
            return No(getattr(what, "span", s_dot.span), "the first `mma`'s left operand (Q) is not a tile loaded "
                      f"as it is, nor computed element-wise from one before the loop: {got[0]} "
                      f"({describe(what) if what is not None else 'a loop value'})",
                      "the pipeline copies Q from memory once (then computes what the program computes from it): "
                      "load Q's [BM, D] tile of its f16/bf16 tensor before the loop and compute from it "
                      "element-wise, or apply the scale to the scores (`mma(q, k.transpose(), zeros) * scale`)")
        qx, qc = got  # type: ignore[assignment]
    if kc is None:
        what = defs.get(s_dot.b.id)
        return No(getattr(what, "span", s_dot.span), f"the first `mma`'s right operand (K) is not a tile loaded in the loop, optionally "
                  f"transposed: it is {describe(what) if what is not None else 'a loop value'}")
    acc0 = defs.get(s_dot.acc.id)
    if any(s_dot.acc.id == a.id for a in body.args):
        # both products accumulate across the loop (a gate and an up projection of one A): GEMMs, not
        # attention; the GEMM pipeline's note says what it takes (round 16: this note said "the scores")
        return No(s_dot.span, "")
    if not (isinstance(acc0, ir.Const) and float(acc0.value) == 0.0):
        return No(s_dot.span, "the first `mma` (the scores) does not start from zeros")
    if s_dot.a.dtype not in (DType.F16, DType.BF16) or s_dot.result.dtype is not DType.F32:
        return No(s_dot.span, f"the scores' `mma` multiplies {s_dot.a.dtype.value} into "
                  f"{s_dot.result.dtype.value}; the pipeline takes f16 or bf16 into f32")
    BM, D = s_dot.a.shape
    BN = s_dot.b.shape[1]
    if BM not in (64, 128, 192) or D % 64 or D > 256 or BN % 16 or BN > 256:
        return No(s_dot.span, f"the blocks are BM = {BM}, BN = {BN}, D = {D}; the pipeline takes BM of 64, 128 or "
                  "192, BN a multiple of 16 up to 256, D a multiple of 64 up to 256",
                  "std::attention is tuned at BM = BN = 128")
    # the second product: a cast of a body value times V (loaded in the loop)
    cast = defs.get(o_dot.a.id)
    vm = vmask.match(o_dot.b, defs, count, body.ops)  # where(keys < sk, v, 0): one warpgroup, V N-major
    vc = _chain(vm.x if vm else o_dot.b, defs)
    if not (isinstance(cast, ir.Cast) and cast in body.ops and cast.x.dtype is DType.F32):
        return No(o_dot.span, "the second `mma`'s left operand (P) is not a cast to f16/bf16 of an f32 value "
                  "computed in the loop", "write `mma(p as f16, v, acc)` with `p` the f32 weights")
    if vc is None:
        what = defs.get(o_dot.b.id)
        return No(getattr(what, "span", o_dot.span), f"the second `mma`'s right operand (V) is not a tile loaded in the loop: it is "
                  f"{describe(what) if what is not None else 'a loop value'}")
    if vm is not None and (BM != 64 or vc[2]):
        return No(o_dot.span, f"V is masked (`where(keys < n, v, 0)`) at BM = {BM} or transposed; the pipeline "
                  "masks V for BM = 64 only")
    if o_dot.a.dtype is not s_dot.a.dtype or o_dot.b.dtype is not s_dot.a.dtype:
        return No(o_dot.span, "the two products multiply different element types")
    if o_dot.a.shape != (BM, BN) or o_dot.result.dtype is not DType.F32 or o_dot.result.shape[1] % 8:
        return No(o_dot.span, "the second product is not [BM, BN] x [BN, Dv] into f32 (Dv a multiple of 8)")
    Dv = o_dot.result.shape[1]
    if Dv > 256:
        return No(o_dot.span, f"the value rows are {Dv} wide; the pipeline takes up to 256")
    q = _tma(qc[0], qc[1], k, ctx)
    kt = _tma(kc[0], kc[1], k, ctx)
    vt = _tma(vc[0], vc[1], k, ctx)
    for t, c in ((q, qc), (kt, kc), (vt, vc)):
        if t is None:
            ld = c[0]
            f = ctx.fact(ld.tensor)
            facts = "not 16-byte aligned" if not f.aligned16 else (
                "the last dim not a multiple of 16" if not f.dims_div16 or not f.dims_div16[-1] else
                f"a [{', '.join(map(str, ld.result.shape))}] tile of a {k.tensor(ld.tensor).dtype.value} tensor "
                f"of rank {k.tensor(ld.tensor).rank}")
            return No(ld.span, f"TMA cannot copy `{ld.tensor}` for it ({facts})", _MEMORY_HELP)
    assert q is not None and kt is not None and vt is not None
    if q.load not in ops or kt.load not in body.ops or vt.load not in body.ops:
        return No(loop.span, "Q must be loaded before the loop and K and V in it")
    for t in (q, kt, vt):
        for op in t.chain:
            if op not in (ops if t is q else body.ops):
                return No(t.load.span, f"`{t.load.tensor}`'s tile is reshaped apart from its load")
            for r in g.results(op):
                if count.get(r.id) != 1 and not (qx is not None and r is qx.x):
                    return No(t.load.span, f"the tile loaded from `{t.load.tensor}` has another use than its "
                              "`mma`; the pipeline keeps it in shared memory for the product only")
    # K must give [D, BN] for the product: stored [BN, D] and transposed (K-major)
    # or stored [D, BN] (N-major); V gives [BN, Dv]: stored so (N-major) or transposed
    k_kmajor = kc[2]
    v_kmajor = vc[2]
    if (q.rows, q.cols) != (BM, D):
        return No(q.load.span, f"Q's tile is [{q.rows}, {q.cols}], not [BM, D] = [{BM}, {D}]")
    if (kt.rows, kt.cols) != ((BN, D) if k_kmajor else (D, BN)):
        return No(kt.load.span, f"K's tile is [{kt.rows}, {kt.cols}]: neither [BN, D] transposed nor [D, BN]")
    if (vt.rows, vt.cols) != ((Dv, BN) if v_kmajor else (BN, Dv)):
        return No(vt.load.span, f"V's tile is [{vt.rows}, {vt.cols}], not [BN, Dv] (or its transpose)")
    chained = {id(op) for t in (q, kt, vt) for op in t.chain} | {id(op) for op in (vm.ops if vm else ())}
    chained |= {id(op) for op in (qx.ops if qx else ())}
    # the body: computation in registers only
    readable = frozenset(p.name for p in k.tensor_params if p.name not in written
                         and p.name not in (q.load.tensor, kt.load.tensor, vt.load.tensor)) \
        if loads_enabled() else frozenset()
    bad = _body_bad(body, BM, chained, s_dot, o_dot, readable)
    if bad is not None:
        loads = isinstance(bad, ir.Load)
        return No(getattr(bad, "span", loop.span), f"{describe(bad)} in the loop: the pipeline runs the loop's "
                  "other ops in registers, on [BM, N] tiles, [BM, 1] rows and [1, N] columns only"
                  + (", streams K and V from memory, and loads in the loop only unmasked tiles of tensors the "
                     "kernel never writes (an additive bias)" if loads else ""),
                  "load the tile unmasked (zeros past the edge), from a tensor the kernel does not write" if loads
                  else "")
    for a in (*body.args[1:], *loop.results):
        if a.shape and not _placeable(a, BM):
            return No(loop.span, f"the loop carries a [{', '.join(map(str, a.shape))}] tile; the pipeline "
                      f"carries [BM, N] tiles, [BM, 1] rows and [1, N] columns (BM = {BM})")
    i = ops.index(loop)
    reads = scalar_reads(ops[:i], written)
    for op in ops[:i]:
        if id(op) in chained or _is_scalar(op) or id(op) in reads or (isinstance(op, ir.If | ir.Assert) and not any(
                v.shape for v in g.results(op))):
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) \
                and not any(v.shape for v in g.operands(op) if defs.get(v.id) not in ops[:i]):
            continue
        return No(getattr(op, "span", loop.span), f"{describe(op)} before the loop: the pipeline takes only "
                  "Q's load, scalars (one element read from a tensor the kernel never writes, `.item()`) and tiles "
                  "it can build in registers there",
                  # (round 17: a query mask loaded once before the loop had no help; in the loop it is taken)
                  "load the tile in the loop, where it is used (the pipeline reads tiles of tensors the kernel never "
                  "writes there, as an additive bias), or apply it after the loop" if isinstance(op, ir.Load) else "")
    regions = last_regions(ops[i + 1:])  # `if last_block(axis) { .. }` (`TILEC_ATTN_LAST_BLOCK`)
    for op in ops[i + 1:]:
        if isinstance(op, ir.Yield) or _is_scalar(op):
            continue
        if id(op) in regions:
            bad = region_bad(op.then, BM) if isinstance(op, ir.If) and last_block_mode() == "1" else None
            if bad is not None:
                return No(getattr(bad, "span", loop.span), f"{describe(bad)} in the `last_block` region after the "
                          "loop: the pipeline runs a region of element-wise ops, row reductions, `for` loops, "
                          "loads and stores of [BM, N] tiles, [BM, 1] rows and [1, N] columns")
            continue
        if isinstance(op, ir.Store) and op.mask is None and _placeable(op.value, BM):
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) and _reduce_ok(op, BM):
            continue
        if isinstance(op, ir.Load) and loads_enabled() and op.tensor not in written and op.mask is None \
                and op.padding is None and _placeable(op.result, BM):  # (a residual, Q's tile again, a bias)
            continue
        return No(getattr(op, "span", loop.span), f"{describe(op)} after the loop: the pipeline's epilogue "
                  "runs element-wise ops, row reductions, unmasked loads of [BM, N] tiles of tensors the kernel "
                  "never writes and unmasked stores of [BM, N] tiles",
                  "load the tile unmasked (zeros past the edge), from a tensor the kernel does not write"
                  if isinstance(op, ir.Load) else "")
    stage_bytes = kt.nbytes + vt.nbytes
    fit = (SMEM_LIMIT - 2048 - q.nbytes) // stage_bytes
    S = k.num_stages if "stages" in k.source.hints else min(ring_stages(), fit)
    if not 1 <= S <= fit:
        return No(loop.span, f"a stage of K and V takes {stage_bytes} bytes of shared memory and Q {q.nbytes}: "
                  f"{max(fit, 0)} stages fit in {SMEM_LIMIT} bytes, the kernel asks for {S}",
                  "a smaller BN or D, or a `stages` hint that fits")
    return AttnPlan(loop, s_dot, o_dot, q, kt, vt, k_kmajor, v_kmajor, BM, BN, S, vm, qx=qx)


def _q_transform(k: g.GpuKernel, ctx: PassContext, s_dot: g.DotOp, defs: dict[int, object], before: list[object],
                 written: set[str]) -> tuple[qxm.QX, tuple[ir.Load, list[object], bool]] | tuple[str, object]:
    """`attention_qx.find` for this kernel: Q's transform and its loaded tile's chain, or (why not, the op)."""
    if len(s_dot.a.shape) != 2:
        return "not a 2-D tile", defs.get(s_dot.a.id)
    BM, D = s_dot.a.shape
    users: dict[int, list[object]] = {}
    for op in g.walk(k.body):
        for v in g.operands(op):
            users.setdefault(v.id, []).append(op)
    return qxm.find(s_dot.a, defs, before, users, BM, D, written, lambda v: _chain(v, defs),
                    lambda ld, ops: _tma(ld, ops, k, ctx) is not None, lambda v: _placeable(v, BM),
                    lambda op: _reduce_ok(op, BM))


def last_block_mode() -> str:
    """`TILEC_ATTN_LAST_BLOCK`: "1" (the epilogue may end in `if last_block(axis) { .. }`, run by the consumers
    after each tile's stores, in their layout: `last_regions`), "join" (run once the warp roles have ended, by
    every thread of the CTA in the generic layouts, over a grid of one tile a CTA: `attention.py`'s `joined`),
    unset or "0" (such a kernel keeps the generic path, as measured)."""
    return mode("TILEC_ATTN_LAST_BLOCK", "0", ("0", "1", "join"))


def last_block_enabled() -> bool:
    """Whether the matcher takes a `last_block` epilogue (`last_block_mode` "1" or "join")."""
    return last_block_mode() in ("1", "join")


def last_regions(after: list[object]) -> set[int]:
    """The ids of the `LastBlock` op and the `If` it conditions among the ops after the loop (`after`), where
    `last_block_enabled`; else none (the matcher then refuses them as any other op)."""
    if not last_block_enabled():
        return set()
    arrivals = {op.result.id: op for op in after if isinstance(op, ir.LastBlock)}
    out: set[int] = set()
    for op in after:
        if isinstance(op, ir.If) and op.cond.id in arrivals:
            out |= {id(op), id(arrivals[op.cond.id])}
    return out


def region_bad(r: ir.Region, BM: int) -> object | None:
    """The first op of a `last_block` region (or of a loop or branch in it) the consumers cannot run in the
    accumulator layout (None: all can). Its loads may read tensors the kernel writes: the group's other
    blocks' tiles, visible after the arrival's acquire (plain loads, not `ld.global.nc`); its loads and
    stores may be masked (a nested tile's `store(tile, idx)`), each thread its own elements."""
    for op in r.ops:
        if isinstance(op, ir.Yield) or _is_scalar(op):
            continue
        if isinstance(op, ir.Store | ir.Load) and _placeable(op.value if isinstance(op, ir.Store) else op.result, BM) \
                and (op.mask is None or _placeable(op.mask, BM)):  # (the generic access, in the consumers' layout)
            continue
        if isinstance(op, ir.For):
            if not all(_placeable(v, BM) for v in (*op.results, *op.body.args) if v.shape):
                return op
            bad = region_bad(op.body, BM)
            if bad is not None:
                return bad
            continue
        if isinstance(op, ir.If):
            if not all(_placeable(v, BM) for v in op.results if v.shape):
                return op
            bad = region_bad(op.then, BM) or region_bad(op.else_, BM)
            if bad is not None:
                return bad
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) and _reduce_ok(op, BM):
            continue
        return op
    return None


def loads_enabled() -> bool:
    """`TILEC_ATTN_LOADS` (unset or "1": on; "0": off): the loop may load tiles of tensors other than Q, K and V
    (an additive bias), each consumer thread its own elements; off, such a loop keeps the generic path."""
    return flag("TILEC_ATTN_LOADS", "1")


# The K/V ring's stages where the kernel gives no `stages` hint, at most what fits beside Q
# (`TILEC_ATTN_STAGES`: a number, or "fit"): 4, the stages every prefill row was timed with.
STAGES_DEFAULT = "4"


def ring_stages() -> int:
    """`TILEC_ATTN_STAGES` (unset: `STAGES_DEFAULT`) as a number of stages ("fit": as many as fit)."""
    want = os.environ.get("TILEC_ATTN_STAGES", "").strip() or STAGES_DEFAULT
    if want == "fit":
        return 1 << 30
    if not want.isdigit() or int(want) < 1:
        raise SwitchError("TILEC_ATTN_STAGES", want, "a number of stages of at least 1, or fit (as many as fit)")
    return int(want)


def _reduce_ok(op: object, BM: int) -> bool:
    if not isinstance(op, ir.Reduce):
        return True
    live = [d for d, x in enumerate(op.x.shape) if x > 1]
    return (len(live) == 2 and op.axis == live[1] and op.x.shape[live[0]] == BM
            and op.op in (ir.ReduceOp.SUM, ir.ReduceOp.MAX, ir.ReduceOp.MIN))


def _body_bad(r: ir.Region, BM: int, chained: set[int], s_dot: object, o_dot: object,
              readable: frozenset[str] = frozenset()) -> object | None:
    """The first op of the loop's body the pipeline cannot run in registers (None: every one can). A load
    of a tensor in `readable` (one the kernel never writes, not Q, K or V: an additive bias) runs in the
    consumers, each thread reading the elements of its own registers (`AccTile`)."""
    for op in r.ops:
        if op is s_dot or op is o_dot or id(op) in chained or isinstance(op, ir.Yield) or _is_scalar(op):
            continue
        if isinstance(op, ir.Load) and op.tensor in readable and op.mask is None and op.padding is None \
                and _placeable(op.result, BM):
            continue
        if isinstance(op, ir.If):
            if not all(_placeable(v, BM) for v in op.results if v.shape):
                return op
            bad = (_body_bad(op.then, BM, chained, s_dot, o_dot, readable)
                   or _body_bad(op.else_, BM, chained, s_dot, o_dot, readable))
            if bad is not None:
                return bad
            continue
        if isinstance(op, _TILE) and all(_placeable(v, BM) for v in g.results(op)) and _reduce_ok(op, BM):
            if isinstance(op, ir.Broadcast | ir.Reshape) and op.x.shape and not _placeable(op.x, BM):
                return op
            continue
        return op
    return None


__all__ = ["PATH", "STAGES_DEFAULT", "AttnPlan", "No", "Tma", "describe", "last_block_enabled", "last_block_mode",
           "last_regions", "match", "region_bad", "ring_stages", "scalar_reads"]
