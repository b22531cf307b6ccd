"""Pass `pipeline_fma`: a cp.async pipeline for GEMM loops on the FMA engine.

A loop `for k in lo..hi step s { acc = mma(x.load(..), y.load(..), acc); }`
whose `mma` has no tensor-core instruction (f32, f64 and integer operands:
`mma_select`'s "fma" engine) ran as FMAs through shared memory with no
pipeline: each iteration loaded both tiles into registers, stored them to
shared memory between two barriers and read them back one scalar at a time
(call 19: an f32 2048^3 GEMM at 0.59x torch's SGEMM, TF32 off). This pass
gives such a loop the classic register-blocked SGEMM (CUTLASS's SIMT GEMM):

- the operands go through a ring of `stages` shared buffers filled by 16-byte
  `cp.async` copies (zero-filled past the tensor's edge, as the
  interpreter reads zeros there; element copies where the rows are not whole
  aligned chunks), the schedule of `pipeline_sm80`: the copies of iteration
  i + stages - 1 are issued while iteration i computes;
- each thread holds a TM x TN block of the accumulator in registers (a
  `Blocked` layout: 4 x 8 lanes a warp, or 8 x 4, ... where a narrow tile
  needs it, the warps in a grid), and for every
  group of `v` k-steps (`v` = 4 elements of 4 bytes, 2 of 8) reads its A
  rows and B columns by vector loads from shared memory and does TM x TN x v
  FMAs: TM + TN vector loads a group, against TM x TN x v FMAs;
- a K-contiguous operand (A as `x.load` of [M, K], B as `y.load(..)
  .transpose()` of [N, K]) is read along k: a lane's rows are the lane's
  position plus multiples of the lanes' coverage (`spt` 1), its ring rows
  padded by one 16-byte chunk where a row holds an even number of chunks,
  so that the 4 (A) or 8 (B) rows a warp reads at one k fall in distinct
  bank groups; an M- or N-contiguous operand (A loaded [K, M] and
  transposed, B as [K, N]) is read along its rows, `v` consecutive elements
  a lane (`spt` v), 8 lanes reading 128 contiguous bytes;
- the kernel states `.maxnreg 255` (`max_regs`): ptxas's own target spilled;
- `TILEC_FMA_PREFETCH=1` (opt-in): the wait and barrier before a stage's
  last group, the next stage's first values carried across the loop;
- `TILEC_FMA_TRANSPOSE=1` (opt-in until timed; hgemm4): a K-contiguous
  operand is stored transposed in its ring ([K, M] / [K, N], no padding:
  `fma_dot.cp_async_transposed`, a thread's 16-byte run of a row by 4- or
  8-byte `cp.async.ca`s at immediate offsets), so both operands are read
  along M/N as tn's are; with 8 warps and K steps of 16 the kernel states
  `.maxnreg 128` (`_reg_target`: 2 CTAs an SM, ptxas 13 no spill); a tile
  whose transposed reads split no thread grid keeps the rings as in memory;
- few tiles (f32): split-K, the loop walked in pieces (`fma_split`);
- a GEMV's B, a [K, 1] column (`_Plan.col`): copied into one [1, K] ring row
  an element a copy (`cp_async_transposed`'s runs of 1), read along k;
- f16 / bf16 inputs of an f32 accumulator (`_HALF`: a product no tensor-core
  instruction takes, a GEMV of 4 tokens; hcliff12): the rings hold the 2-byte
  values, each widened to f32 after its shared-memory read
  (`fma_dot._Operand`); a [K, 4] operand's 8-byte rows are copied whole, one
  `cp.async.ca` of 8 bytes each, where the tensor's last dim is a static
  multiple of 4 (`_chunk_of`); not transposed (its copies are an element
  each: 2 bytes, which cp.async does not copy), not bf16 memory holding f32
  values (`TensorFacts.bf16_f32`), never split (`fma_split`);
  2 tokens' 4-byte rows by `cp.async.ca` of 4 bytes, read as vectors of 2;
  one token's [K, 1] column, where the tensor is [?, 1] (its elements
  consecutive), as one run of 16-byte chunks into a [K, 1] ring (`_flat`,
  `CpAsyncTile.flat`), the last chunk cut at the tensor's end
  (`TILEC_FMA_NARROW=0`: both keep the FMA loop); an `mma.sync` product of
  2-byte inputs that no ring took (N % 16: 8 tokens) and that splits
  (`_skinny_mma`), under the same switch;
- split-K among warps (`_split`, `split_layout`; hgemv; `TILEC_FMA_KSPLIT=0`
  off): where the accumulator starts as zeros and is too small to give each
  warp its own elements (no layout splits it among the warps: a 16-row
  tile, a `num_warps` hint past its rows; or 2-byte inputs, no hint, under
  `SPLIT_BELOW` elements a thread at `SPLIT_WARPS` warps: a GEMV of 4
  tokens, whose 2 warps of 1 x 4 widened x's same 4 values in every thread
  each k-step), one warp's lanes hold the whole tile and the warps (and the
  lanes past a short tile's rows) are copies, each summing a contiguous
  share of every stage's k-steps (`SmemFma.parts`); `g.FmaPartsSum` adds
  the copies in part order after the loop (call 38's tile, sm_90a SASS a
  warp a 64-wide step: 692 instructions on 2 warps -> 292 on 4);
- a 2-byte B read along N by many threads (a GEMV's x: `_wide`;
  `TILEC_FMA_WIDEN=0` off) is widened once a CTA a stage into an f32
  buffer after the loop's wait, a barrier after (`SmemFma.wide`), instead
  of after each thread's read (292 -> 246 at call 38's tile).

The products are the interpreter's: `acc + a·b` with the FMA's one rounding
a step (floats: the interpreter sums `np.matmul`'s products in its own order,
so f32 and f64 results agree within the sum's tolerance, as on the path this
replaces; integers exactly, wrapping).

Conditions (else the loop keeps the FMA loop with no pipeline): sm_80 or
later (cp.async), `TILEC_FMA_PIPELINE` not "0"; the loop is at the kernel's
top level and carries only the accumulator; its body is scalar ops, the two
loads (2-D tensors, or a 3-D one's [1, R, C] tile reshaped: a batched
operand), an optional transpose of either, and the `DotOp` (engine "fma",
inputs of 4 or 8 bytes: f32, f64, i32, u32, i64, u64; or f16 / bf16 into f32), each tile used once;
the warps split the accumulator into whole thread blocks. Warps: the
kernel's `num_warps` hint, else one per 2,048 accumulator elements (64 a
thread; 32 of 8 bytes), 1 to 8. `stages`: the hint, else 4, fewer where a
stage is large (the ring within 64 KB), at least 2 (3 for 2-byte inputs:
`HALF_STAGES`), lowered to what fits.
"""

from __future__ import annotations

import dataclasses
import os

from tilelang.backend.env_switch import SwitchError, flag, number
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Blocked, SmemRows
from . import fma_split
from .context import PassContext
from .pipeline_sm80 import (
    HOPPER_SMEM,
    SMEM_LIMIT,
    _multiple,
    _Rewriter,
    _scratch,
    _slice,
    _unbatched,
    lone_dot,
    place_rings,
    splice,
)

LANE_SHAPES = ((4, 8), (8, 4), (2, 16), (16, 2), (1, 32), (32, 1))  # a warp's lanes along M and N
ACC_REGS = 64  # accumulator registers a thread, by default (the warps' count follows)
RING_BYTES = 64 * 1024  # default stages: the most that keep the ring within this (at least 2)
SPLIT_WARPS = 4  # a 2-byte product's warps where they split K (`_split`)
SPLIT_BELOW = 16  # ... where each of them would otherwise hold fewer accumulator elements than this
WIDEN_SHARED = 4  # threads reading each 2-byte B value from which B is widened once a CTA (`_wide`)
# a 2-byte product's fewest stages where they fit, past `RING_BYTES`: 2 ahead. A GEMV's 256-wide K step (35 KB a
# stage) got 2 stages, one in flight while a step computes, so each step waited for its copies' latency past the
# step (call 39: 0.46x torch against 0.76x at 64-wide steps, 4 stages); such a kernel runs 1 CTA an SM anyway
HALF_STAGES = 3
_TYPES = (DType.F32, DType.F64, DType.I32, DType.U32, DType.I64, DType.U64)
_HALF = (DType.F16, DType.BF16)  # 2-byte inputs of an f32 accumulator: widened after their shared-memory reads


def max_regs() -> int:
    """`TILEC_FMA_MAXNREG` (default 255; "0": ptxas's own choice): the `.maxnreg` of a kernel with an FMA pipeline.
    Without one ptxas 13 aims at an occupancy of its own and spilled B^T loops (64 x 64 x 16 with 2 warps: 168
    registers and 24 spill bytes; 4 warps: 96 and 40); with it, none spills (254 / 128 registers)."""
    what = "0 (ptxas's own choice) or a register count up to 255"
    n = number("TILEC_FMA_MAXNREG", 255, 0, what)
    if n > 255:
        raise SwitchError("TILEC_FMA_MAXNREG", str(n), what)
    return n


def _reg_target(plans: list[_Plan], warps: int) -> int:
    """The kernel's `.maxnreg`: `max_regs()`, but 128 where a ring is stored transposed, 8 warps, K steps of at
    most 16 and unset `TILEC_FMA_MAXNREG`: 2 CTAs an SM (ptxas 13, 128 x 128 x 16 f32: nn 151 -> 128 registers,
    nt 129 -> 128, no spills; x32 spilled 20 bytes at 128; tn takes 128 by itself and ran 0.92x where nn's 168
    ran 0.83x, call 22)."""
    if warps == 8 and all(p.dot.a.shape[1] <= 16 for p in plans) and any(any(p.trans) for p in plans) \
            and "TILEC_FMA_MAXNREG" not in os.environ:
        return 128
    return max_regs()


def prefetch_enabled() -> bool:
    """`TILEC_FMA_PREFETCH=1` (opt-in until a GPU has timed it): the wait and barrier move from the top of an
    iteration to before its last k-group, whose values are all loaded before it; the next stage's first
    values are loaded past it and carried (`SmemFma.prefetch`, `pipeline_sm80`'s schedule): no warp waits
    for shared memory at the top of an iteration."""
    return flag("TILEC_FMA_PREFETCH", "0")


def transpose_enabled() -> bool:
    """`TILEC_FMA_TRANSPOSE=1` (opt-in until a GPU has timed it): a K-contiguous operand is stored transposed
    in its ring (`fma_dot.cp_async_transposed`: a thread's 16-byte run of a row by 4- or 8-byte copies at
    immediate offsets), so both operands are read along M/N a k-step at a time, as a [K, M] A is."""
    return flag("TILEC_FMA_TRANSPOSE", "0")


def enabled() -> bool:
    """`TILEC_FMA_PIPELINE` (unset or "1": on; "0": the FMA loop with no pipeline, for an A/B)."""
    return flag("TILEC_FMA_PIPELINE", "1")


def vec_of(dt: DType) -> int:
    """Elements a lane reads with one shared-memory vector load (16 bytes, at most 4 elements)."""
    return min(4, 16 // (8 if dt.bits == 64 else dt.itemsize))


def thread_grid(M: int, N: int, warps: int, spt: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(lanes, warps) along (M, N) giving each thread the squarest register block of the [M, N]
    accumulator (fewest vector loads a k-group: TM + TN; 4 x 8 lanes first, other shapes where they
    divide a narrow tile: 16 columns at 8 x 4), or None where no split divides it."""
    best = None
    for rank, lanes in enumerate(LANE_SHAPES):
        for wm in range(1, warps + 1):
            if warps % wm:
                continue
            wn = warps // wm
            cm, cn = spt[0] * lanes[0] * wm, spt[1] * lanes[1] * wn
            if M % cm or N % cn:
                continue
            tm, tn = M // (lanes[0] * wm), N // (lanes[1] * wn)
            score = (tm + tn, abs(tm - tn), rank)
            if best is None or score < best[0]:
                best = (score, (lanes, (wm, wn)))
    return best[1] if best else None


def acc_layout(M: int, N: int, warps: int, spt: tuple[int, int]) -> Blocked | None:
    got = thread_grid(M, N, warps, spt)
    if got is None:
        return None
    lanes, grid = got
    return Blocked(spt, lanes, grid, (1, 0))


def split_layout(M: int, N: int, warps: int, spt: tuple[int, int]) -> tuple[Blocked, int] | None:
    """(layout, parts) of a split-K accumulator: one warp's lanes cover the whole [M, N] tile (its columns exactly,
    its rows by repetition, or, where a short tile has fewer rows than the lanes cover, with lane replicas), the
    `warps` warps replicas of it along N; each of the `parts` copies (warps x lane replicas) then sums its share of
    every stage's k-steps (`SmemFma.parts`). The fewest lane replicas first, then the squarest register block of at
    most `ACC_REGS`; None where the tile's dims are not powers of two or no lane shape fits."""
    if M & (M - 1) or N & (N - 1):
        return None
    best = None
    for rank, (lm, ln) in enumerate(LANE_SHAPES):
        cm = spt[0] * lm
        if spt[1] * ln != N or (M % cm and cm % M):
            continue
        tm, tn = (M // lm if cm <= M else spt[0]), spt[1]
        if tm * tn > ACC_REGS:
            continue
        lane_parts = max(1, cm // M)
        score = (lane_parts, tm + tn, abs(tm - tn), rank)
        if best is None or score < best[0]:
            best = (score, (lm, ln), lane_parts)
    if best is None:
        return None
    _, lanes, lane_parts = best
    return (Blocked(spt, lanes, (1, warps), (1, 0)), lane_parts * warps) if lane_parts * warps > 1 else None


def widen_enabled() -> bool:
    """`TILEC_FMA_WIDEN` (unset or "1": on; "0": off, for an A/B): a 2-byte B that many threads read is widened
    into an f32 buffer once a CTA a stage (`_wide`)."""
    return flag("TILEC_FMA_WIDEN", "1")


def _wide(half: bool, b_nk: bool, col: bool, layout: Blocked) -> bool:
    """Whether B's ring stage is widened once a CTA (`SmemFma.wide`): 2-byte inputs, B read along N ([K, N] in
    memory: a GEMV's x), and each B value read by at least `WIDEN_SHARED` threads (the threads along M: a [64, 4]
    GEMV's x, by 32 lanes or 64 threads, was widened by each, 256 of a warp's 320 widenings a step)."""
    shared = layout.threads_per_warp[0] * layout.warps_per_cta[0]
    return half and not b_nk and not col and shared >= WIDEN_SHARED and widen_enabled() and not prefetch_enabled()


def narrow_enabled() -> bool:
    """`TILEC_FMA_NARROW` (unset or "1": on; "0": off, for an A/B): a 2-byte product of 1 or 2 tokens takes the
    pipeline (x's [K, 1] column copied as one run, `_flat`; [K, 2] rows by 4-byte copies); off, the FMA loop."""
    return flag("TILEC_FMA_NARROW", "1")


def half_stages() -> int:
    """`TILEC_FMA_HALF_STAGES` (default `HALF_STAGES`, 3; "2": call 39's rule, for an A/B): a 2-byte product's
    fewest stages where they fit."""
    return number("TILEC_FMA_HALF_STAGES", HALF_STAGES, 2)


def split_enabled() -> bool:
    """`TILEC_FMA_KSPLIT` (unset or "1": on; "0": off, for an A/B): where an accumulator has too few elements to
    give each warp its own (`_split`), the warps split each stage's k-steps instead (`split_layout`)."""
    return flag("TILEC_FMA_KSPLIT", "1")


def _split(k: g.GpuKernel, ctx: PassContext, op: ir.For, M: int, N: int, K: int, v: int, warps: int, half: bool,
           spt: tuple[int, int], layout: Blocked | None, forced: bool) -> tuple[Blocked, int, int] | None:
    """(layout, parts, warps) of a split-K plan, or None: where the accumulator starts as zeros and either no
    layout splits it among the warps (a 16-row tile, or a `num_warps` hint that outnumbers its rows) or the
    inputs are 2-byte with no hint and the warps' own register blocks would be under `SPLIT_BELOW` elements
    (x's values, the same in every thread, are then widened once for `SPLIT_WARPS` times more k-steps).
    `forced`: the kernel's warp count is `warps` (`place_rings`' second plan: the most any loop wanted)."""
    hinted = "num_warps" in k.source.hints
    if not split_enabled() or prefetch_enabled():
        return None
    c = next((o for o in k.body.ops if isinstance(o, ir.Const) and o.result.id == op.inits[0].id), None)
    if c is None or c.value != 0:
        return None  # (each copy would start from the constant)
    if layout is not None and (hinted or not half or M * N >= 32 * SPLIT_WARPS * SPLIT_BELOW):
        return None
    w = warps if hinted or forced else SPLIT_WARPS
    if ctx.max_warps > 0:
        w = min(w, max(1, ctx.max_warps))
    got = split_layout(M, N, w, spt)
    if got is None or K % (got[1] * v):
        return None
    return got[0], got[1], w


def default_warps(M: int, N: int, acc: DType) -> int:
    per = ACC_REGS // (2 if acc.bits == 64 else 1)
    w = 1
    while w < 8 and M * N > per * 32 * w:
        w *= 2
    return w


def _half_warps(M: int, N: int, warps: int, spt: tuple[int, int]) -> int:
    """The warps of a 2-byte product's pipeline: up to 4 where the accumulator splits that far (a GEMV's narrow
    [64, 4] accumulator: 2 warps of 1 x 4 a thread, not `default_warps`' one of 2 x 4), so that the widening and
    FMAs of a step, not memory, spread over more of the SM's 4 schedulers."""
    for w in (4, 2):
        if w > warps and acc_layout(M, N, w, spt) is not None:
            return w
    return warps


def _ring(rows: int, K: int, kmajor: bool, trans: bool, item: int) -> tuple[int, int]:
    """A ring stage's [rows, cols + padding] for an operand of `rows` x K: [K, rows] where it is M/N-contiguous
    in memory, [rows, K + pad] where it is K-contiguous, [K, rows] where that one is stored transposed (a warp's
    stores of one k are 32 consecutive words: no padding)."""
    if trans:
        return (K, rows)
    if kmajor:
        return (rows, K + pad_of(K, item))
    return (K, rows)


def pad_of(cols: int, item: int) -> int:
    """Padding elements of a K-contiguous ring row of `cols` elements: one chunk where its chunks are even."""
    chunks = cols * item // 16
    return 16 // item if chunks % 2 == 0 else 0


@dataclasses.dataclass(frozen=True)
class _Plan:
    loop: ir.For
    dot: g.DotOp
    a: ir.Load
    b: ir.Load
    a_mk: bool  # A in memory as [M, K] (else [K, M], used transposed)
    b_nk: bool  # B in memory as [N, K] (else [K, N])
    trans: tuple[bool, bool]  # A, B (K-contiguous in memory) stored transposed in their rings
    layout: Blocked
    stages: int
    vector: tuple[bool, bool]
    warps: int
    rings: tuple[tuple[int, int], tuple[int, int]]  # each operand's ring stage [rows, cols + padding]
    col: bool = False  # B a [K, 1] column (a GEMV's): copied into a [1, K] ring, read along k
    parts: int = 1  # > 1: the warps (and lane replicas) split each stage's k-steps (`split_layout`)
    wide: bool = False  # B's 2-byte stage widened once a CTA into an f32 buffer (`_wide`)
    flat: bool = False  # B a 2-byte [K, 1] column copied as one run of 16-byte chunks (`_flat`)


def _operand(v: ir.Value, defs: dict[int, object], k: g.GpuKernel, count: dict[int, int]) -> tuple[object, bool]:
    """(the load behind operand `v`, whether it is transposed), the load None where it is not one."""
    o = defs.get(v.id)
    flip = False
    if isinstance(o, ir.Permute):
        if o.perm != (1, 0) or count.get(o.x.id) != 1:
            return None, False
        flip = True
        o = defs.get(o.x.id)
    return _unbatched(o, defs, k, count), flip


def _chunked(ctx: PassContext, ld: ir.Load, defs: dict[int, object], item: int, k: g.GpuKernel | None = None,
             chunk: int = 16) -> bool:
    """Every 16-byte chunk of the tile's rows is one aligned chunk of the tensor (cp.async copies it); a `chunk`
    of 8 bytes (a ring row that narrow: 4 tokens' f16 columns) where the tensor's last dim is a static multiple
    of it, each row's start then as aligned."""
    f = ctx.fact(ld.tensor)
    epc = chunk // item
    last = k.tensor(ld.tensor).dims[-1] if k is not None else None
    if chunk < 16 or (item == 2 and last == epc):  # (a [K, 8] 2-byte operand: one chunk a row, whole)
        return (f.aligned16 and not f.bf16_f32 and last is not None and last % epc == 0
                and _multiple(ld.offsets[-1], defs) % epc == 0)
    return (f.aligned16 and len(f.dims_div16) == len(ld.offsets) and f.dims_div16[-1]
            and _multiple(ld.offsets[-1], defs) % epc == 0)


def _chunk_of(cont: int, item: int, half: bool) -> int:
    """The bytes a cp.async copies of a ring row of `cont` elements: 16, or the whole row where it is 8 or 4 bytes
    and the inputs are 2-byte (`_HALF`: 4 or 2 tokens of f16, read as one vector); 0 where none fits."""
    if cont * item % 16 == 0:
        return 16
    return cont * item if half and cont * item in (4, 8) else 0


def _flat(ctx: PassContext, k: g.GpuKernel, ld: ir.Load, K: int, item: int, defs: dict[int, object]) -> bool:
    """A 2-byte [K, 1] tile (one token's x) copies as one run of 16-byte chunks (`CpAsyncTile.flat`): the tensor
    is [?, 1] (its column's elements consecutive), 16-byte aligned, K a whole number of chunks and the tile's
    first row a multiple of a chunk's elements."""
    t, f = k.tensor(ld.tensor), ctx.fact(ld.tensor)
    epc = 16 // item
    return (t.rank == 2 and len(t.dims) == 2 and t.dims[-1] == 1 and f.aligned16 and not f.bf16_f32
            and K % epc == 0 and _multiple(ld.offsets[0], defs) % epc == 0)


def _skinny_mma(k: g.GpuKernel, op: ir.For) -> tuple[g.DotOp, dict[int, object], dict[int, int]] | None:
    """An `mma.sync` product that no ring took (8 tokens: sm_80's ring wants N % 16, the Hopper GEMM refused)
    of 2-byte inputs into f32 with an accumulator small enough to split (`_split`): the FMA pipeline takes it
    (call 41, H200: 8 tokens on mma.sync with no pipeline ran 0.29x torch, 4 tokens split 1.12x)."""
    found = lone_dot(k, op, "mma.sync")
    if found is None or not narrow_enabled():
        return None
    dot = found[0]
    M, N = dot.acc.shape
    if (dot.a.dtype not in _HALF or dot.acc.dtype is not DType.F32 or N % 16 == 0
            or M * N >= 32 * SPLIT_WARPS * SPLIT_BELOW):
        return None
    return found


def _plan(k: g.GpuKernel, ctx: PassContext, op: ir.For, warps: int | None = None) -> _Plan | None:
    found = lone_dot(k, op, "fma")
    skinny = found is None
    if skinny:
        found = _skinny_mma(k, op)
    if found is None:
        return None
    dot, defs, count = found
    a, a_flip = _operand(dot.a, defs, k, count)
    b, b_nk = _operand(dot.b, defs, k, count)
    if not isinstance(a, ir.Load) or not isinstance(b, ir.Load):
        return None
    dt = dot.a.dtype
    half = dt in _HALF and dot.acc.dtype is DType.F32
    for ld in (a, b):
        t = k.tensor(ld.tensor)
        if (ld.mask is not None or ld.padding is not None or t.rank != len(ld.result.shape)
                or t.rank not in (2, 3) or t.dtype is not dt or count.get(ld.result.id) != 1
                or (half and ctx.fact(ld.tensor).bf16_f32)):
            return None
    if (dt not in _TYPES and not half) or dot.b.dtype is not dt:
        return None
    M, K = dot.a.shape
    N = dot.b.shape[1]
    item = 8 if dt.bits == 64 else dt.itemsize
    v = vec_of(dt)
    if K % v:
        return None
    a_mk = not a_flip
    tr = transpose_enabled() and not half  # (its copies are an element each: cp.async copies 4, 8 or 16 bytes)
    trans = (tr and a_mk, tr and b_nk)
    # the dims each operand is read along in shared memory: M/N (`spt` v) or K (`spt` 1)
    col = N == 1 and not b_nk  # (a GEMV's x: its one column as one row of the ring, read along k)
    every = {v.id: o for o in (*k.body.ops, *op.body.ops) for v in g.results(o)}
    if half and N < 4 and not b_nk and not narrow_enabled():
        return None
    flat = col and half
    if flat:  # (2-byte elements: the column's copies would be an element each; copied as one run instead)
        if not _flat(ctx, k, b, K, item, every):
            return None
        col = False
    vb = min(v, N) if half else v  # (x's rows of 2 or 4 tokens read as one vector)
    spt = (1 if a_mk and not trans[0] else v, 1 if (b_nk and not trans[1]) or col else vb)
    forced = warps is not None
    if warps is None:
        warps = k.num_warps if "num_warps" in k.source.hints else default_warps(M, N, dot.acc.dtype)
        if half and "num_warps" not in k.source.hints:
            warps = _half_warps(M, N, warps, spt)
        if ctx.max_warps > 0:
            warps = min(warps, max(1, ctx.max_warps))
    layout = acc_layout(M, N, warps, spt)
    if layout is None and any(trans):  # (a tile the transposed reads do not split: the rings as in memory)
        trans, spt = (False, False), (1 if a_mk else v, 1 if b_nk or col else vb)
        layout = acc_layout(M, N, warps, spt)
    parts = 1
    if not any(trans) and (got := _split(k, ctx, op, M, N, K, v, warps, half, spt, layout, forced)) is not None:
        layout, parts, warps = got
    if layout is None or (skinny and parts == 1):
        return None
    # every ring row whole 16-byte chunks (the contiguous dim of each tile)
    conts = (K if a_mk else M, K if b_nk or col else N)
    chunks = (_chunk_of(conts[0], item, half), 16 if flat else _chunk_of(conts[1], item, half))
    if not all(chunks):
        return None
    rings = (_ring(M, K, a_mk, trans[0], item), (1, K) if col else _ring(N, K, b_nk, trans[1], item))
    vector = (_chunked(ctx, a, every, item, k, chunks[0]), flat or _chunked(ctx, b, every, item, k if half else None,
                                                                                chunks[1]))
    if any(c < 16 and not v_ for c, v_ in zip(chunks, vector, strict=True)):
        return None  # (a narrow row's element copies would be 2 bytes: cp.async copies 4, 8 or 16)
    stage_bytes = sum(r * c for r, c in rings) * item
    wide = _wide(half, b_nk, col, layout)
    sums = parts * M * N * 4 if parts > 1 else 0  # (`FmaPartsSum`'s scratch)
    wide_bytes = rings[1][0] * rings[1][1] * 4 if wide else 0
    fit = (SMEM_LIMIT.get(ctx.arch, HOPPER_SMEM) - max(_scratch(k, op), sums) - wide_bytes) // stage_bytes
    least = half_stages() if half else 2
    stages = k.num_stages if "stages" in k.source.hints else max(least, min(4, RING_BYTES // stage_bytes))
    stages = max(2, min(stages, fit))
    if stages > fit:
        return None
    return _Plan(op, dot, a, b, a_mk, b_nk, trans, layout, stages, vector, warps, rings, col,  # type: ignore[arg-type]
                 parts, wide, flat)


class _FmaRewriter(_Rewriter):
    """The rewrite of `pipeline_sm80` with `SmemRows` rings and an `SmemFma`."""

    def copies(self, p: _Plan, ops: list[object], bufs: tuple[ir.Value, ir.Value], new_iv: ir.Value,
               stage: ir.Value) -> None:
        iv = p.loop.body.args[0]
        m = self.clone(ops, _slice(p.loop.body, [*p.a.offsets, *p.b.offsets]), iv, new_iv)
        M, K = p.dot.a.shape
        N = p.dot.b.shape[1]
        for ld, buf, vec, (rows, kmajor, tr) in zip((p.a, p.b), bufs, p.vector,
                                                    ((M, p.a_mk, p.trans[0]), (N, p.b_nk, p.trans[1] or p.col)),
                                                    strict=True):
            cs = tuple(m.get(v.id, v) for v in ld.offsets)
            cols = rows if tr else K if kmajor else 0  # a padded ring row's logical length
            flat = p.flat and ld is p.b
            ops.append(g.CpAsyncTile(ld.tensor, cs, buf, stage, vec, ld.span, cols, tr, flat))  # type: ignore[arg-type]
        ops.append(g.CpAsyncCommit(p.loop.span))

    def rewrite_fma(self, p: _Plan) -> list[object]:
        """The ops replacing loop `p.loop` (`pipeline_sm80`'s schedule: `ring_loop`)."""
        S, K = p.stages, p.dot.a.shape[1]
        dt = p.dot.a.dtype
        sa, sb = (S, *p.rings[0]), (S, *p.rings[1])
        rings = ((dt, sa, SmemRows()), (dt, sb, SmemRows()))
        # prefetching: the wait and barrier before the loop and inside each iteration's op, before its last group
        pre = prefetch_enabled()
        wide = self.fresh.value(DType.F32, (1, *p.rings[1]), "wide") if p.wide else None
        if wide is not None:
            self.layouts[wide.id] = SmemRows()

        def dot(res: ir.Value, sa: ir.Value, sb: ir.Value, stage: ir.Value, acc: ir.Value) -> object:
            return g.SmemFma(res, sa, sb, stage, acc, K, p.a_mk and not p.trans[0], (p.b_nk and not p.trans[1]) or p.col,
                             p.dot.span,
                             S - 2 if pre else -1, p.parts, wide)

        out = self.ring_loop(p.loop, S, rings, lambda ops, bufs, iv, st: self.copies(p, ops, bufs, iv, st),
                             dot, p.dot.result.dtype, p.layout, wait_in_body=not pre)
        if wide is not None:
            out.insert(0, g.SmemAlloc(wide))
        if p.parts > 1:  # the loop's result is the copies' partial sums; their sum is the loop's old result
            at = next(i for i, o in enumerate(out) if isinstance(o, ir.For))
            loop = out[at]
            assert isinstance(loop, ir.For)
            fin = loop.results[0]
            part = self.fresh.value(fin.dtype, fin.shape, "parts")
            self.layouts[part.id] = p.layout
            out[at] = dataclasses.replace(loop, results=(part,))
            out.append(g.FmaPartsSum(fin, part, p.parts, p.dot.span))
        return out


def _ring_nbytes(p: _Plan) -> int:
    """The shared memory of a plan's ring: its stages of A and B rows, each padded (`SmemRows`); and a split-K
    plan's sums (`FmaPartsSum`'s scratch: `parts` f32 tiles)."""
    item = 8 if p.dot.a.dtype.bits == 64 else p.dot.a.dtype.itemsize
    sums = p.parts * p.dot.acc.shape[0] * p.dot.acc.shape[1] * 4 if p.parts > 1 else 0
    wide = p.rings[1][0] * p.rings[1][1] * 4 if p.wide else 0
    return p.stages * sum(r * c for r, c in p.rings) * item + sums + wide


def pipeline_fma(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if not enabled() or ctx.sm < 80:
        return k
    if any(isinstance(o, g.SmemDot) for o in g.walk(k.body)):
        return k  # one pipeline a kernel: the sm_80 ring set the warps
    warps, plans = place_rings(k, ctx, _plan, _ring_nbytes)
    if not plans:
        return k
    rw = _FmaRewriter(k)
    split = "" if any(p.parts > 1 for p in plans.values()) else fma_split.mode(k, ctx, plans)  # (few tiles: `fma_split`)
    if split == "split":
        out, p = fma_split.build(k, next(iter(plans.values())), rw, rw.rewrite_fma, 32 * warps)
        plans = {id(p.loop): p}
    else:
        out = splice(k, plans, rw.rewrite_fma)
    mut = fma_split._mut(k)
    regs = _reg_target(list(plans.values()), warps)
    per = fma_split.ctas_per_sm(sum(_ring_nbytes(p) for p in plans.values()), warps, regs) if split == "split" else 0
    return dataclasses.replace(k, body=ir.Region(k.body.args, tuple(out)),  # type: ignore[arg-type]
                               layouts=rw.layouts, next_id=rw.fresh.next, num_warps=warps,
                               num_stages=max(p.stages for p in plans.values()), max_regs=regs,
                               few=mut.name if split == "ask" else k.few, fill=split == "split" or k.fill,
                               persistent=per or k.persistent)


__all__ = ["acc_layout", "default_warps", "enabled", "pipeline_fma", "thread_grid", "vec_of"]
