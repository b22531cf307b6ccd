"""GPU IR's operations of the cp.async rings and their consumers (`CpAsyncTile` .. `SmemFma`): the
sm_80-style pipelines (mma.sync / FMA rings, the products pipeline). Split out of `nodes.py`, which
re-exports every name here, so passes and the code generator import them from `nodes` as before."""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import DUMMY_SPAN, Span

from .layouts import Layout


@frozen
class CpAsyncTile:
    """Every thread issues its 16-byte `cp.async.cg` copies of the [rows, cols]
    tile of 2-D tensor `tensor` at element offsets `coords` (row, col; i32
    scalars; a 3-D tensor's matrix first: (batch, row, col), a batched GEMM's
    operand) into stage `stage` of shared ring `dst` (in its `SmemTile`
    layout). Chunks past the tensor's edge are zero-filled (the interpreter's
    edge rule for loads without padding). The copies join the thread's next
    `CpAsyncCommit` group. `vector` False: the tile's rows are not whole
    aligned chunks of the tensor; each chunk is loaded element by element
    (masked) and stored to shared memory synchronously instead."""

    tensor: str
    coords: tuple[ir.Value, ...]
    dst: ir.Value
    stage: ir.Value
    vector: bool = True
    span: Span = DUMMY_SPAN
    cols: int = 0  # > 0: the logical length of a ring row (`SmemRows`, padded past it); 0: the ring's
    # the [cols, K] tile stored transposed into the [K, cols + pad] stage by 4- or 8-byte copies, one an element
    # (`codegen/fma_dot.cp_async_transposed`; the FMA pipeline's K-contiguous operands, `TILEC_FMA_TRANSPOSE`)
    transpose: bool = False
    # the tile is a column whose elements are consecutive in memory (a [K, 1] tensor's: a GEMV's one token) and
    # the ring row one element wide: its rows * item bytes copied as one run of 16-byte chunks, the last cut at
    # the tensor's end (`sm80.cp_async_flat`; `pipeline_fma`, 2-byte inputs)
    flat: bool = False


@frozen
class CpAsyncCommit:
    """Close this thread's current group of `cp.async` copies."""

    span: Span = DUMMY_SPAN


@frozen
class CpAsyncWait:
    """Wait until at most `pending` of this thread's newest groups are in
    flight, then a CTA barrier: every thread's copies of the older groups are
    in shared memory and visible to the whole block. `barrier` False: no
    barrier, the copies are visible to the thread that issued them only
    (enough for `RingCopy`, whose slots only their own thread reads)."""

    pending: int
    barrier: bool = True
    span: Span = DUMMY_SPAN
    fence: bool = False  # `fence.proxy.async` before the barrier: wgmma (the async proxy) reads the copies


@frozen
class RingCopy:
    """If `pred`: every thread issues 16-byte `cp.async.cg` copies of the chunks
    it would hold of the tile `tensor[offsets...]` of type `type` in register
    layout `layout` (what a `Load` of that tile would put in its registers)
    into its own slots of stage `stage` of ring `dst`: chunk k of thread t at
    byte (k * threads + t) * 16 of the stage. Chunks past the tensor's edge are
    zero-filled (the interpreter's rule for loads without mask or padding).
    The copies join the thread's next `CpAsyncCommit` group. Only the thread
    that copied a slot reads it (`RingRead`), so no barrier is ever needed."""

    tensor: str
    offsets: tuple[ir.Value, ...]
    type: ir.Type
    layout: Layout
    dst: ir.Value
    stage: ir.Value
    pred: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class RingRead:
    """`result` = the tile this thread's `RingCopy` placed in stage `stage` of
    ring `src`, in `result`'s layout (the copy's), as a `Load` of `tensor`
    would have given it: each 16-byte slot one shared-memory vector load."""

    result: ir.Value
    tensor: str
    src: ir.Value
    stage: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class SmemDot:
    """`result = acc + a[stage] @ b[stage]` with `mma.sync.m16n8k16`, operands read
    from shared rings by `ldmatrix` (`a`: [S, M, K]; `b`: [S, K, N], or [S, N, K]
    when `b_nk`), the accumulator in the `MmaTile` layout.

    `prefetch` >= 0 (the op is the body of a loop over the ring's stages,
    stage = iteration % S): the fragments of the first k16 step come from the
    previous iteration (the loop's preheader loads those of stage 0), and
    before the last k16 step the op waits until at most `prefetch` cp.async
    groups are pending, passes a CTA barrier and loads the first fragments of
    stage + 1 for the next iteration, so no warp waits for shared memory at
    the top of an iteration. -1: every fragment is loaded in place."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    stage: ir.Value
    acc: ir.Value
    b_nk: bool = False
    span: Span = DUMMY_SPAN
    prefetch: int = -1


@frozen
class RingMma:
    """`result = acc + a @ b` by `mma.sync.m16n8k16`, the result and accumulator in the `AccTile`
    layout (warps stacked along the rows; `passes/pipeline_products.py`, a loop of several products):
    `a` an [M, K] register tile in the `AccTile` layout (f16/bf16, or f32 rounded to `dtype` as its
    fragments are packed: the C fragments of a product are the A fragments of the next), or a shared
    ring [S, M, K] read at stage `a_stage`; `b` a shared ring [S, K, N] ([S, N, K] when `b_nk`) read at
    stage `stage` (`SmemTile` layouts, by `ldmatrix`)."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    stage: ir.Value
    acc: ir.Value
    b_nk: bool = False
    a_stage: ir.Value | None = None  # `a` is a shared ring read at this stage (None: `a` is in registers)
    dtype: DType | None = None  # A's 16-bit type when `a` is an f32 register tile
    span: Span = DUMMY_SPAN


@frozen
class AccToSmem:
    """Each thread writes its registers of `value` (an [M, K] `AccTile` tile), rounded to `buf`'s 16-bit type, to
    their places in `buf` (an [1, M, K] `SmemTile`), then, where `barrier`, a CTA barrier: a `RingMma`'s A whose
    columns several warps hold (`AccTile.cols`), read whole by each warp of its rows."""

    buf: ir.Value
    value: ir.Value
    barrier: bool = False
    span: Span = DUMMY_SPAN


@frozen
class SmemFma:
    """`result = acc + a[stage] @ b[stage]` by FMAs (f32, f64 and integer
    products: `passes/pipeline_fma.py`), operands read from shared rings in
    the `SmemRows` layout by vector loads: `a` is [S, M, K'] (`a_mk`: K
    contiguous, rows padded to K') or [S, K, M]; `b` is [S, K, N], or [S, N,
    K'] when `b_nk`. `k` is the logical K. The accumulator (and `result`) is
    a `Blocked` layout whose threads each hold a register block of the tile
    (`codegen/fma_dot.py` reads the block off the layout)."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    stage: ir.Value
    acc: ir.Value
    k: int
    a_mk: bool = True
    b_nk: bool = False
    span: Span = DUMMY_SPAN
    # >= 0 (the loop's body, stage = iteration % S): the first k-step's values come from the previous
    # iteration (the preheader loads stage 0's); before the last group the op waits until at most
    # `prefetch` cp.async groups are pending, passes a CTA barrier and loads stage + 1's (`SmemDot`'s)
    prefetch: int = -1
    # > 1: the accumulator's layout holds `parts` copies of the tile (`pipeline_fma.split_layout`: replicas along
    # N, and along M where the lanes outnumber a short tile's rows); copy p sums k-steps [p k / parts, (p + 1) k /
    # parts) of each stage, and an `FmaPartsSum` after the loop adds the copies
    parts: int = 1
    # an [1, rows, cols] f32 buffer (B's ring stage's shape): B's 2-byte values, the same in many threads, are
    # widened into it once a CTA at the op's start (a barrier after), and read from it as f32 (`pipeline_fma._wide`)
    wide: ir.Value | None = None


@frozen
class FmaPartsSum:
    """`result` = the sum of the `parts` partial accumulators that the replicas of `acc`'s `Blocked` layout hold
    (a split-K `SmemFma` loop's result: `pipeline_fma.split_layout`), added in part order 0, 1, .. through the
    code generator's shared scratch area (every copy of the result then holds the same sums); `result` in
    `acc`'s layout."""

    result: ir.Value
    acc: ir.Value
    parts: int
    span: Span = DUMMY_SPAN
