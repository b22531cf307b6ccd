"""GPU IR: Tile IR plus layouts and the GPU's own operations, for one kernel.

A `GpuKernel` is what the passes of `backend/gpu/passes/` rewrite and what
the code generator (`backend/llvm.py` and `backend/codegen/`) turns into LLVM
IR. Its body is a Tile IR `Region` (`ir/nodes.py`: same SSA values, same
compute ops with the same meaning) in which the GPU-level ops below may also
appear. What GPU IR adds:

- every tile value has a layout (`GpuKernel.layouts[value.id]`, see
  `layouts.py`): a distributed layout for values in registers, `Shared` for
  buffers in shared memory, `Barriers` for mbarrier arrays; scalars are
  uniform across the CTA and have none;
- shared buffers, barriers, asynchronous copies (TMA), fences and warp roles
  are explicit ops, so the schedule the code generator follows is the one the
  printed IR shows;
- `DotOp` records which tensor-core engine an `mma` runs on;
- TMA descriptors are kernel parameters (`TmaDesc`) that the runtime builds
  at launch from the tensor argument.

Values that denote memory (a `SmemAlloc` or `BarrierAlloc` result) are typed
like a tile of the buffer's shape; their layout says where they live. A ring
of `stages` buffers has the stage as its first dim.

Invariants: ops are frozen dataclasses hashed by identity like Tile IR's;
passes return new kernels (`dataclasses.replace`) and never mutate; the
layout table covers every tile-typed value defined in the body.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from dataclasses import dataclass, field
from typing import Any

from tilelang.backend.facts import Short, TensorFacts
from tilelang.backend.split_form import SplitForm
from tilelang.backend.stream_rule import StreamAsk
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import DUMMY_SPAN, Span

from .layouts import Layout
from .nodes_ring import (AccToSmem, CpAsyncCommit, CpAsyncTile, CpAsyncWait, FmaPartsSum, RingCopy, RingMma,  # noqa: F401
                         RingRead, SmemDot, SmemFma)
from .walk_nodes import TicketRead, TicketTake, WarpgroupIndex


# ------------------------------------------------------------------ parameters
@frozen
class TmaDesc:
    """A kernel parameter: a TMA tensor map (`CUtensorMap`, 128 bytes, passed
    by value as a `__grid_constant__`) over 2-D tensor `tensor`, copying boxes
    of `box = (rows, cols)` elements into `swizzle`-byte swizzled shared memory.
    Out-of-bounds elements of a box read as zero (the interpreter's edge rule
    for loads without padding)."""

    name: str
    tensor: str
    box: tuple[int, ...]  # (rows, cols), or (1, rows, cols) over a 3-D tensor
    swizzle: int
    span: Span = DUMMY_SPAN


GpuParam = ir.TensorParam | ir.ScalarParam | TmaDesc


# ------------------------------------------------------------------ ops
@frozen
class DotOp:
    """`result = acc + a @ b` (Tile IR's `Mma`) on a chosen engine:
    "wgmma" (Hopper warpgroup MMA, operands in shared memory), "mma.sync"
    (ldmatrix + mma.sync.m16n8k16), or "fma" (a loop of scalar FMAs)."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    acc: ir.Value
    engine: str
    span: Span = DUMMY_SPAN


@frozen
class ConvertLayout:
    """`result` = `x` in another layout (same type)."""

    result: ir.Value
    x: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class SmemAlloc:
    """A shared-memory buffer of `result.type` (first dim: the ring's stages)
    at byte `offset` of the CTA's dynamic shared memory (-1 until the
    allocation pass places it)."""

    result: ir.Value
    offset: int = -1
    span: Span = DUMMY_SPAN


@frozen
class BarrierAlloc:
    """`result.shape[0]` mbarriers, each initialised (by thread 0, fenced for the
    async proxy, then a CTA barrier) to expect `count` arrivals per phase;
    `fenced` False: the fence and barrier are the next `BarrierAlloc`'s
    (`smem_alloc.one_init`, `TILEC_MBAR_ONE_INIT`)."""

    result: ir.Value
    count: int
    offset: int = -1
    span: Span = DUMMY_SPAN
    fenced: bool = True


@frozen
class TmaLoad:
    """One thread copies the box of descriptor `desc` at element coordinates
    `coords` (row, col; i32 scalars) into buffer `dst`, stage `stage`, at
    byte `part` of that stage; completion is counted on barrier `bar[stage]`
    (complete_tx)."""

    desc: str
    coords: tuple[ir.Value, ...]  # one per dim of the descriptor's tensor, outermost first
    dst: ir.Value
    stage: ir.Value
    part: int
    bar: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class CopyToShared:
    """The role's threads copy the tile of `dst`'s stage shape from 2-D tensor
    `tensor` at element `offsets` (row, col) into `dst[stage]` in its shared
    layout, through registers; out-of-bounds elements are zero (the
    interpreter's edge rule), so any tensor works: no alignment needed."""

    tensor: str
    offsets: tuple[ir.Value, ir.Value]
    dst: ir.Value
    stage: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class Fence:
    """`fence.proxy.async.shared::cta`: this thread's ordinary shared-memory
    writes become visible to the async proxy (TMA, wgmma) after the next barrier."""

    kind: str = "proxy.async"
    span: Span = DUMMY_SPAN


@frozen
class BarrierExpect:
    """One thread arrives on `bar[stage]` announcing `nbytes` of async copies."""

    bar: ir.Value
    stage: ir.Value
    nbytes: int
    span: Span = DUMMY_SPAN


@frozen
class BarrierWait:
    """Every thread of the role waits until `bar[stage]` completes the phase
    with parity `phase` (an i32 scalar, 0 or 1). `after`: values (a few f32 or
    i32 registers a thread) the wait reads, as `try_wait`'s suspend-time hint:
    its first try cannot issue before they are computed (ptxas otherwise
    hoists it above the work meant to run while the barrier fills; any hint
    is correct, the wait still spins until the phase completes)."""

    bar: ir.Value
    stage: ir.Value
    phase: ir.Value
    span: Span = DUMMY_SPAN
    after: tuple[ir.Value, ...] = ()


@frozen
class BarrierArrive:
    """One arrival per warpgroup on `bar[stage]` (when `pred`, an i1 scalar, holds)."""

    bar: ir.Value
    stage: ir.Value
    pred: ir.Value | None = None
    span: Span = DUMMY_SPAN


@frozen
class Wgmma:
    """`result = acc + a[stage] @ b[stage]` issued asynchronously by each consumer
    warpgroup on its rows (fence, K/16 `wgmma.mma_async`, commit). `a`/`b` are
    shared buffers; `a_kmajor`/`b_kmajor` say whether K is their contiguous
    dim. The result may be read only after a `WgmmaWait` that covers it.
    `use_acc` (an i1 scalar, optional): when false, the first k-step ignores
    `acc` (D = A @ B), so a zero accumulator need not be materialised."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    stage: ir.Value
    acc: ir.Value
    a_kmajor: bool
    b_kmajor: bool
    use_acc: ir.Value | None = None
    span: Span = DUMMY_SPAN
    a_stage: ir.Value | None = None  # A's stage when it differs from B's (a buffer loaded once)


@frozen
class WgmmaRegA:
    """`result = acc + a @ b[stage]` issued asynchronously by each consumer
    warpgroup, A from registers: `a` is an f16/bf16 [M, K] tile in the
    `AccTile` layout (each warpgroup's m64 rows; its registers, two per 32
    bits, are wgmma's A fragment), or f32 rounded as it is packed (`dtype`),
    or that fragment already packed (an i32 `PackPairs` result, `dtype` the
    16-bit type), `b` a shared buffer ([S, K, N], K-major
    when `b_kmajor`, i.e. stored [S, N, K]). Read the result after a
    `WgmmaWait` that covers it."""

    result: ir.Value
    a: ir.Value
    b: ir.Value
    stage: ir.Value
    acc: ir.Value
    b_kmajor: bool
    use_acc: ir.Value | None = None
    span: Span = DUMMY_SPAN
    dtype: DType | None = None  # A's type when `a` is f32 (rounded to it as it is packed)
    # a `Wgmma` issued just before, in the same statement (its own commit
    # group): nothing the compiler schedules can land between the two
    first: Wgmma | None = None


@frozen
class PackPairs:
    """`x` (an f32 [M, K] tile in the `AccTile` layout) rounded to `dtype`
    (f16/bf16) and packed two registers to 32 bits, in register order: the
    A fragment that `WgmmaRegA` would pack from `x` (`codegen/wgmma_rs.py`),
    made early. `result` is an i32 [M, K / 2] tile (`AccTile`: half the
    registers of `x`) whose registers, not its elements, are those pairs:
    `WgmmaRegA` is its only reader. The rotated attention loop carries P
    so, across its back edge (`passes/attention_rotated.py`)."""

    result: ir.Value
    x: ir.Value
    dtype: DType
    span: Span = DUMMY_SPAN


@frozen
class WarpgroupTurn:
    """Ping-pong scheduling of two consumer warpgroups with named barriers
    `base` and `base + 1` (256 threads each): "wait" blocks warpgroup g until
    the other passed it the turn (`bar.sync base + g`); "pass" hands the turn
    over (`bar.arrive base + (g ^ 1)`); "start" gives warpgroup 0 the first
    turn (warpgroup 1 arrives on `base`); "end" takes warpgroup 1's last
    pass (warpgroup 0 syncs on `base`), so no arrival outlives the turns."""

    kind: str
    base: int
    span: Span = DUMMY_SPAN


@frozen
class ZeroRows:
    """The role's `threads` threads zero rows `bound - offset` .. of `buf[stage]`
    (a [S, rows, cols] buffer of 64-column slabs of 128-byte rows, as TMA
    fills it: a row's bytes are the same set whatever the swizzle), where
    that is less than `rows`; then each makes its writes visible to the async
    proxy and all of them meet at named barrier 1, so a `wgmma` issued after
    reads the zeros. The attention pipeline's `where(keys < sk, v, 0)` on V
    (`passes/attention_vmask.py`): row r of the tile stays where r + offset < bound."""

    buf: ir.Value
    stage: ir.Value
    offset: ir.Value
    bound: ir.Value
    threads: int
    span: Span = DUMMY_SPAN


@frozen
class TmaStore:
    """The consumer warpgroups store `value` (an f16/bf16 [.., M, N] value in
    the `AccTile` layout, N a multiple of 64) to tensor `tensor` through
    shared memory: each warpgroup writes its M / groups rows into its own rows
    of `buf[stage]` (M rows of 64-column slabs of 128-byte rows, swizzled as
    TMA reads them; `alt` instead where `ran` is false), makes them visible to
    the async proxy (a fence a thread), meets at named barrier
    `STORE_BARRIER + g` (its 128 threads), and its first thread issues one TMA
    store a slab (descriptor `desc`, box [rows of the warpgroup, 64]; the
    tensor map's bounds clip the tile at the tensor's edge) and commits them
    as one bulk group; with `unit` 32 each warp does that for its own rows
    (`bar.warp.sync`, lane 0 issues). `first`: before writing, "group": the unit meets
    at that barrier (after the issuing thread's `TmaStoreWait`: the previous
    store has read the buffer); "all": every consumer meets at named barrier
    1 and fences (the buffer is a ring stage every warpgroup's products
    read); "": nothing (the buffer is the warpgroup's own and idle)."""

    desc: str
    tensor: str
    coords: tuple[ir.Value, ...]  # the tile's origin, one per dim of the tensor (outermost first)
    value: ir.Value
    buf: ir.Value
    stage: ir.Value | None = None
    alt: ir.Value | None = None
    ran: ir.Value | None = None
    first: str = ""
    unit: int = 128  # threads that store their rows together: a warpgroup (named barrier), or a warp (32)
    span: Span = DUMMY_SPAN


STORE_BARRIER = 4  # `TmaStore`'s named barriers: 4 + the warpgroup (1 and 2, 3 are taken)


@frozen
class SmemTileRead:
    """`result` (an f16/bf16 [.., M, N] tile in the `AccTile` layout) = stage
    `stage` of `buf` (64-column slabs of 128-byte rows, 128-byte swizzle: as
    TMA fills it): each consumer thread reads the pairs of its own registers.
    With `SmemTileWrite`, the attention pipeline's Q computed from its loaded
    tile before the loop (`passes/attention_qx.py`)."""

    result: ir.Value
    buf: ir.Value
    stage: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class SmemTileWrite:
    """Each consumer thread writes its registers of `value` (an `AccTile` tile
    of `buf`'s element type) back to the places `SmemTileRead` reads, makes
    them visible to the async proxy, and each warpgroup meets at named barrier
    `QX_BARRIER + g` (its 128 threads): its `wgmma`, issued after, reads the
    new values of its own rows (each warpgroup's rows are its own)."""

    buf: ir.Value
    stage: ir.Value
    value: ir.Value
    span: Span = DUMMY_SPAN


QX_BARRIER = 9  # `SmemTileWrite`'s named barriers: 9 + the warpgroup (8 is the split's)


@frozen
class TmaStoreWait:
    """`cp.async.bulk.wait_group.read 0`: this thread's TMA stores have read
    their shared memory (it may be written again); a no-op in a thread that
    issued none. Only where `pred` (a uniform bool) holds, if given."""

    pred: ir.Value | None = None
    span: Span = DUMMY_SPAN


@frozen
class Stamp:
    """A measurement point (`TILEC_ATTN_STAMPS=1`, `codegen/stamps.py`): the
    first thread of each warpgroup that runs it writes the SM's cycle
    counter into the module's stamp table at (CTA, `tile`, its warpgroup,
    `slot`). Only the attention pass's measurement switch makes these; the
    values it computes are untouched."""

    slot: int
    tile: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class WarpAny:
    """`result` (a bool scalar, uniform over a WARP only, unlike other
    scalars) is true where `x` (a bool tile in registers) holds true in some
    register of some thread of the warp: one `vote.any`. Only a branch
    whose both sides compute the same values where `x` is false may read it
    (`passes/attention_spec.py`)."""

    result: ir.Value
    x: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class Touch:
    """`values` are live up to here and computed before it: an empty asm
    statement reading their registers, nothing in the PTX. Keeps LLVM from
    sinking a computation past this point, and ptxas from giving the
    registers of a wgmma's operand to another value before the wait for
    that wgmma (which it reads asynchronously)."""

    values: tuple[ir.Value, ...]
    span: Span = DUMMY_SPAN


@frozen
class Opaque:
    """`results` are `values` (scalars, or f32 / i32 register tiles register by
    register), each copied by an asm statement with a side effect: LLVM cannot
    move what is computed from them out of their branch (a loop's first
    iteration computing its addresses before the loop would hold them in
    registers throughout), nor give a copied tile the registers of the wgmma
    accumulator it was waited from (`attention_rotated`'s `hold`)."""

    results: tuple[ir.Value, ...]
    values: tuple[ir.Value, ...]
    span: Span = DUMMY_SPAN


@frozen
class SplitSave:
    """The consumers' registers of `values` (tiles in the accumulator layout:
    the online-softmax state of a piece of a tile split along its keys,
    `passes/attention_split.py`) written to record `slot` of the launch's
    split workspace (`%splitws`): word w of consumer thread t at
    (slot * words + w) * threads + t, words = the values' registers a thread."""

    values: tuple[ir.Value, ...]
    slot: ir.Value
    threads: int
    span: Span = DUMMY_SPAN


@frozen
class SplitLoad:
    """`results` (typed and laid out as a `SplitSave`'s values) read back from
    record `slot` of the split workspace, each thread its own words. Where
    the results are part of the record: `head`, values laid out as the
    record's words before them, `tail` as the words after them. `fma` =
    (acc, factor): the one result is acc + the record's values * factor
    (element-wise, each word multiplied and added as it is loaded: one
    accumulator in registers, not two)."""

    results: tuple[ir.Value, ...]
    slot: ir.Value
    threads: int
    span: Span = DUMMY_SPAN
    head: tuple[ir.Value, ...] = ()
    tail: tuple[ir.Value, ...] = ()
    fma: tuple[ir.Value, ir.Value] | None = None


@frozen
class SplitArrive:
    """`result` (bool, the same in every consumer thread) is true in the last
    of `size` consumer groups (CTAs) to arrive at counter `group` of the
    launch's split counters (`%split`): the consumers' named barrier, one
    thread's acq_rel atomic add at GPU scope (their `SplitSave`s before it
    visible to the last one's `SplitLoad`s after it), the last resets the
    counter, the flag through shared memory, the barrier again."""

    result: ir.Value
    group: ir.Value
    size: ir.Value
    threads: int
    span: Span = DUMMY_SPAN


@frozen
class Undef:
    """`result` holds unspecified values (a register tile no one reads before
    writing, e.g. an accumulator whose first wgmma ignores it)."""

    result: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class WgmmaWait:
    """Wait until at most `pending` wgmma groups are in flight; `results` are
    `values` (accumulators), now safe to read."""

    results: tuple[ir.Value, ...]
    values: tuple[ir.Value, ...]
    pending: int
    span: Span = DUMMY_SPAN


@frozen
class Role:
    """One warp role of a `WarpSpecialize`: `warps` consecutive warps running
    `body` with their register budget set to `regs` (setmaxnreg; 0 = leave)."""

    name: str
    warps: int
    regs: int
    body: ir.Region
    single: bool = False  # one thread of the role runs `body` (the others are done)
    # a consumer role's own epilogue staging area and named barrier (`hopper.store_wgmma`): the GEMM's two
    # pingpong consumer roles (`passes/gemm_persistent.py`) store at the same time
    slot: int = 0


@frozen
class WarpSpecialize:
    """The CTA's warps split into roles, each running its own region, in warp
    order (role 0 first). The regions yield nothing; after the op every warp
    continues (a CTA barrier joins them)."""

    roles: tuple[Role, ...]
    span: Span = DUMMY_SPAN
    blocks: int = 1  # CTAs an SM the roles' registers are budgeted for (`.minnctapersm`)
    rejoin: int = 0  # > 0: after the roles every warp takes this many registers (ops follow: the attention
    # pipeline's joined `last_block` region); the roles that gave registers back take them again


@frozen
class AccLoad:
    """`result` ([M, N], in the Hopper GEMM accumulator's layout `WgmmaAcc`) = the tile `load` reads,
    broadcast to [M, N]: result dim i reads dim `dims[i]` of `load`'s tile (None: broadcast along it).
    Each thread loads the elements of its own accumulator registers, zeros past the tensor's edge (the
    GEMM epilogue's bias vector or residual tile: `passes/gemm_epilogue.py`)."""

    result: ir.Value
    load: ir.Load
    dims: tuple[int | None, int | None]
    span: Span = DUMMY_SPAN


@frozen
class AccIndex:
    """`result` ([M, N], in the layout `WgmmaAcc`) = each element's index along dim `dim` (0: its row, 1: its
    column) plus `offset`, as the result's dtype: an `arange` the GEMM epilogue broadcasts (a column mask, a
    scale from the column's index; `passes/gemm_epilogue.py`), each thread its own registers' rows or columns.
    `offset`: a column part's first column (`pipeline._part_epilogue`)."""

    result: ir.Value
    dim: int
    offset: int = 0
    span: Span = DUMMY_SPAN


@frozen
class AccColumns:
    """`result` ([M, N]) = columns [part N, (part + 1) N) of the accumulator `x` ([M, parts N]), both in the
    layout `WgmmaAcc` of the same warpgroups: each thread's registers of those columns, nothing moves (a wide
    GEMM tile's user tiles, `passes/gemm_widen.py`)."""

    result: ir.Value
    x: ir.Value
    part: int
    parts: int
    span: Span = DUMMY_SPAN


GpuOp = (
    DotOp
    | AccLoad
    | AccIndex
    | AccColumns
    | Undef
    | ConvertLayout
    | SmemAlloc
    | BarrierAlloc
    | TmaLoad
    | CopyToShared
    | Fence
    | BarrierExpect
    | BarrierWait
    | BarrierArrive
    | Wgmma
    | WgmmaRegA
    | PackPairs
    | WarpAny
    | WarpgroupIndex
    | TicketTake
    | TicketRead
    | Touch
    | Stamp
    | WarpgroupTurn
    | WgmmaWait
    | WarpSpecialize
    | CpAsyncTile
    | CpAsyncCommit
    | CpAsyncWait
    | SmemDot
    | RingMma
    | AccToSmem
    | SmemFma
    | FmaPartsSum
    | RingCopy
    | RingRead
    | ZeroRows
    | TmaStore
    | TmaStoreWait
    | SmemTileRead
    | SmemTileWrite
    | SplitSave
    | SplitLoad
    | SplitArrive
)
GPU_OPS = (DotOp, Undef, ConvertLayout, SmemAlloc, BarrierAlloc, TmaLoad, CopyToShared, Fence, BarrierExpect, BarrierWait,
           BarrierArrive, Wgmma, WgmmaRegA, PackPairs, WarpAny, Touch, Stamp, WarpgroupTurn, WgmmaWait, WarpSpecialize,
           CpAsyncTile, CpAsyncCommit, CpAsyncWait, SmemDot, RingMma, SmemFma, FmaPartsSum, RingCopy, RingRead, ZeroRows,
           TmaStore, TmaStoreWait, SplitSave, SplitLoad, SplitArrive, AccLoad, SmemTileRead, SmemTileWrite, AccColumns,
           AccIndex, AccToSmem, WarpgroupIndex, TicketTake, TicketRead)


# ------------------------------------------------------------------ kernel
@dataclass(frozen=True, slots=True, eq=False)
class GpuKernel:
    """One kernel in GPU IR. `num_warps` counts every warp of the CTA (all roles);
    `arch` is the target (`sm_80`, `sm_90a`, ...); `smem_bytes` the shared
    memory the allocated buffers take (the code generator adds its scratch
    space after it); `source` is the Tile IR kernel this came from."""

    name: str
    params: tuple[GpuParam, ...]
    body: ir.Region
    source: ir.Kernel
    arch: str
    grid_rank: int = 1
    num_warps: int = 4
    num_stages: int = 2
    instantiation: tuple[tuple[str, int], ...] = ()
    layouts: dict[int, Layout] = field(default_factory=dict)
    facts: dict[str, TensorFacts] = field(default_factory=dict)  # what the passes specialised for
    smem_bytes: int = 0
    # > 0: the kernel walks its logical grid itself (`passes/attention_tiles.py`), so the
    # runtime launches at most this many CTAs an SM (`KernelABI.persistent`)
    persistent: int = 0
    # the `&mut` tensor whose launch grid, where it has at most half as many tiles as SMs, asks the runtime for
    # the variant compiled with `TensorFacts.few_tiles` (a GEMM's split-K: `passes/gemm_split.py`); "": none
    few: str = ""
    # (tensor, f): where the launch's grid (that `&mut` tensor's partition) has at least 2 f tiles an SM, the runtime
    # launches the variant compiled with `TensorFacts.wide_tiles` (f of the user's tiles side by side: `gemm_widen`)
    wide: tuple[str, int] | None = None
    # the loops of an unhinted kernel whose streaming the launch's grid decides (`backend/stream_rule.py`; the
    # runtime launches the variant compiled with `TensorFacts.stream`); None: none
    stream: StreamAsk | None = None
    # `block_order`'s grouped grid position (row, column): what the kernel reads as its block ids
    grouped: tuple[ir.Value, ir.Value] | None = None
    # with `persistent`: the runtime launches `persistent` CTAs an SM even where the grid has fewer tiles (a
    # split-K GEMM's pieces fill the card: `passes/gemm_split.py`)
    fill: bool = False
    # where a launch's tensor dim is at most a limit the passes compile another variant
    # (`facts.Short`; the attention pass: short key sequences chained)
    short: Short | None = None
    # where a launch's walk splits its last round, the runtime compiles and launches the variant
    # with the split (`backend/split_form.py`, `TILEC_ATTN_SPLIT_FORMS`)
    split: SplitForm | None = None
    next_id: int = 0  # the smallest value id not used yet (for passes that add values)
    span: Span = DUMMY_SPAN
    # why a faster path refused a loop of this kernel (`PassContext.refuse`): notes, shown on request
    notes: tuple[Any, ...] = ()
    # values of epilogue stores in the wgmma accumulator layout staged in shared memory after the buffers,
    # not in the operand ring, which is still live (the Hopper GEMM's N-parts but the last: `passes/pipeline`)
    stage_apart: frozenset[int] = frozenset()
    # > 0: the registers a thread ptxas may use, stated (`.maxnreg`): without it ptxas picks its own target, which
    # spilled the FMA pipeline's B^T loops (`passes/pipeline_fma.py`)
    max_regs: int = 0

    def tensor(self, name: str) -> ir.TensorParam:
        for p in self.params:
            if isinstance(p, ir.TensorParam) and p.name == name:
                return p
        raise KeyError(name)

    @property
    def tensor_params(self) -> tuple[ir.TensorParam, ...]:
        return tuple(p for p in self.params if isinstance(p, ir.TensorParam))

    @property
    def scalar_params(self) -> tuple[ir.ScalarParam, ...]:
        return tuple(p for p in self.params if isinstance(p, ir.ScalarParam))

    @property
    def tma_params(self) -> tuple[TmaDesc, ...]:
        return tuple(p for p in self.params if isinstance(p, TmaDesc))

    @property
    def sm(self) -> int:
        return int(self.arch[3:5])


# ------------------------------------------------------------------ generic access
# `results`, `operands` and `regions` run a million times a compile (every pass walks the IR): an op's exact type
# picks its accessor from a table first (no node class has a subclass, so the type is the `match`'s class), and
# only a type the tables lack (none of Tile IR's or GPU IR's) goes through the `match`es below. Tile IR's ops,
# the most common, skipped some 40 GPU class patterns each.
def results(op: object) -> tuple[ir.Value, ...]:
    f = _RESULTS.get(type(op))
    return f(op) if f is not None else _results(op)


def operands(op: object) -> tuple[ir.Value, ...]:
    f = _OPERANDS.get(type(op))
    return f(op) if f is not None else _operands(op)


def regions(op: object) -> tuple[ir.Region, ...]:
    f = _REGIONS.get(type(op))
    return f(op) if f is not None else _regions(op)


def _results(op: object) -> tuple[ir.Value, ...]:
    match op:
        case DotOp(result=r) | ConvertLayout(result=r) | SmemAlloc(result=r) | BarrierAlloc(result=r) | Wgmma(result=r):
            return (r,)
        case WgmmaRegA(result=r, first=f):
            return (r,) if f is None else (f.result, r)
        case (Undef(result=r) | PackPairs(result=r) | WarpAny(result=r) | WarpgroupIndex(result=r)
              | TicketTake(result=r) | TicketRead(result=r)):
            return (r,)
        case WgmmaWait(results=rs) | Opaque(results=rs) | SplitLoad(results=rs):
            return rs
        case SplitArrive(result=r) | AccLoad(result=r) | AccColumns(result=r) | AccIndex(result=r):
            return (r,)
        case SplitSave():
            return ()
        case (SmemDot(result=r) | SmemFma(result=r) | RingRead(result=r) | SmemTileRead(result=r) | RingMma(result=r)
              | FmaPartsSum(result=r)):
            return (r,)
        case (TmaLoad() | RingCopy() | CopyToShared() | Fence() | BarrierExpect() | BarrierWait() | BarrierArrive()
              | WarpSpecialize() | CpAsyncTile() | CpAsyncCommit() | CpAsyncWait() | WarpgroupTurn() | ZeroRows()
              | Touch() | Stamp() | TmaStore() | TmaStoreWait() | SmemTileWrite() | AccToSmem()):
            return ()
    return ir.op_results(op)  # type: ignore[arg-type]


def _operands(op: object) -> tuple[ir.Value, ...]:
    match op:
        case DotOp(a=a, b=b, acc=c):
            return (a, b, c)
        case ConvertLayout(x=x) | PackPairs(x=x):
            return (x,)
        case WarpAny(x=x):
            return (x,)
        case Touch(values=vs) | Opaque(values=vs):
            return vs
        case Stamp(tile=t):
            return (t,)
        case (SmemAlloc() | BarrierAlloc() | WarpSpecialize() | Undef() | Fence() | WarpgroupTurn() | AccIndex()
              | WarpgroupIndex()):
            return ()
        case TicketRead(bar=b):
            return (b,)
        case TicketTake(size=n, bar=b, stage=st):
            return (n, b, st)
        case CopyToShared(offsets=cs, dst=d, stage=s):
            return (*cs, d, s)
        case TmaLoad(coords=cs, dst=d, stage=s, bar=b):
            return (*cs, d, s, b)
        case BarrierExpect(bar=b, stage=s):
            return (b, s)
        case BarrierWait(bar=b, stage=s, phase=p, after=a):
            return (b, s, p, *a)
        case BarrierArrive(bar=b, stage=s, pred=p):
            return (b, s, *((p,) if p is not None else ()))
        case Wgmma(a=a, b=b, stage=s, acc=c, use_acc=u, a_stage=sa):
            return (a, b, s, c, *((u,) if u is not None else ()), *((sa,) if sa is not None else ()))
        case WgmmaRegA(a=a, b=b, stage=s, acc=c, use_acc=u, first=f):
            return (*(operands(f) if f is not None else ()), a, b, s, c, *((u,) if u is not None else ()))
        case WgmmaWait(values=vs):
            return vs
        case CpAsyncTile(coords=cs, dst=d, stage=st):
            return (*cs, d, st)
        case CpAsyncCommit() | CpAsyncWait():
            return ()
        case SmemDot(a=a, b=b, stage=st, acc=c):
            return (a, b, st, c)
        case SmemFma(a=a, b=b, stage=st, acc=c, wide=wd):
            return (a, b, st, c, *((wd,) if wd is not None else ()))
        case FmaPartsSum(acc=c):
            return (c,)
        case RingMma(a=a, b=b, stage=st, acc=c, a_stage=sa):
            return (a, b, st, c, *((sa,) if sa is not None else ()))
        case RingCopy(offsets=os, dst=d, stage=st, pred=p):
            return (*os, d, st, p)
        case RingRead(src=s, stage=st):
            return (s, st)
        case SmemTileRead(buf=b, stage=st):
            return (b, st)
        case SmemTileWrite(buf=b, stage=st, value=v):
            return (b, st, v)
        case AccToSmem(buf=b, value=v):
            return (b, v)
        case ZeroRows(buf=b, stage=st, offset=o, bound=n):
            return (b, st, o, n)
        case TmaStore(coords=cs, value=v, buf=b, stage=st, alt=a, ran=r):
            return (*cs, v, b, *(x for x in (st, a, r) if x is not None))
        case TmaStoreWait(pred=p):
            return (p,) if p is not None else ()
        case SplitSave(values=vs, slot=sl):
            return (*vs, sl)
        case SplitLoad(slot=sl, fma=f):
            return (sl, *(f or ()))
        case SplitArrive(group=gr, size=n):
            return (gr, n)
        case AccLoad(load=ld):
            return ir.op_operands(ld)
        case AccColumns(x=x):
            return (x,)
    return ir.op_operands(op)  # type: ignore[arg-type]


def _regions(op: object) -> tuple[ir.Region, ...]:
    if isinstance(op, WarpSpecialize):
        return tuple(r.body for r in op.roles)
    if isinstance(op, GPU_OPS):
        return ()
    return ir.op_regions(op)  # type: ignore[arg-type]


def _no_values(op: object) -> tuple[ir.Value, ...]:
    return ()


def _one_result(op: Any) -> tuple[ir.Value, ...]:
    return (op.result,)


def _x_operand(op: Any) -> tuple[ir.Value, ...]:
    return (op.x,)


def _no_regions(op: object) -> tuple[ir.Region, ...]:
    return ()


def _tables() -> tuple[dict[type, Any], dict[type, Any], dict[type, Any]]:
    """The accessors by exact type: Tile IR's ops straight (as `ir.op_results`/`op_regions` read them), GPU IR's
    through the `match`es (their order is theirs; `tests/backend/test_gpu_nodes_access.py` checks both agree)."""
    res: dict[type, Any] = {}
    opnds: dict[type, Any] = {}
    regs: dict[type, Any] = {}
    for t in ir.Op.__args__:  # type: ignore[attr-defined]
        if t in (ir.For, ir.If, ir.While):
            res[t] = lambda op: op.results
        elif t in (ir.Store, ir.Prefetch, ir.AtomicRMW, ir.Yield, ir.Print, ir.Assert):
            res[t] = _no_values
        else:
            res[t] = _one_result
        opnds[t] = ir.op_operands
        regs[t] = _no_regions
    # the commonest Tile IR ops read straight (the cases of `ir.op_operands`, which the others still take)
    for t in (ir.Const, ir.BlockId, ir.NumBlocks, ir.TensorDim, ir.Arange):
        opnds[t] = _no_values
    for t in (ir.Cast, ir.Reduce, ir.Scan, ir.Broadcast, ir.Reshape, ir.Permute):
        opnds[t] = _x_operand
    opnds[ir.Elementwise] = lambda op: op.operands
    opnds[ir.Mma] = lambda op: (op.a, op.b, op.acc)
    opnds[ir.If] = lambda op: (op.cond,)
    opnds[ir.Yield] = lambda op: op.values
    regs[ir.For] = lambda op: (op.body,)
    regs[ir.If] = lambda op: (op.then, op.else_)
    regs[ir.While] = lambda op: (op.cond, op.body)
    for t in GPU_OPS:
        res[t], opnds[t], regs[t] = _results, _operands, _no_regions
    regs[WarpSpecialize] = _regions
    return res, opnds, regs


_RESULTS, _OPERANDS, _REGIONS = _tables()
# the op classes that never hold a region (all but `For`, `If`, `While`, `WarpSpecialize`): walks skip them whole
LEAF_OPS = frozenset(t for t, f in _REGIONS.items() if f is _no_regions)


def walk(region: ir.Region) -> Iterator[object]:
    """Every op in `region` and its nested regions (GPU ops included), pre-order.
    (A stack of the regions' op iterators: no generator a nesting level to resume at each op.)"""
    stack = [iter(region.ops)]
    while stack:
        for op in stack[-1]:
            yield op
            if type(op) in LEAF_OPS:
                continue
            subs = regions(op)
            if subs:
                stack.append(iter(subs[0].ops) if len(subs) == 1 else chain.from_iterable(r.ops for r in subs))
                break
        else:
            stack.pop()


def defined_values(region: ir.Region) -> Iterator[ir.Value]:
    """Every value defined in `region` (region args and op results, nested too)."""
    yield from region.args
    for op in region.ops:
        yield from results(op)
        for sub in regions(op):
            yield from defined_values(sub)


__all__ = [
    "GPU_OPS",
    "AccColumns",
    "AccIndex",
    "AccLoad",
    "AccToSmem",
    "BarrierAlloc",
    "BarrierArrive",
    "BarrierExpect",
    "BarrierWait",
    "ConvertLayout",
    "CopyToShared",
    "CpAsyncCommit",
    "CpAsyncTile",
    "CpAsyncWait",
    "DotOp",
    "Fence",
    "GpuKernel",
    "GpuOp",
    "GpuParam",
    "PackPairs",
    "RingCopy",
    "RingRead",
    "Role",
    "SmemAlloc",
    "SmemDot",
    "RingMma",
    "SmemFma",
    "FmaPartsSum",
    "TmaDesc",
    "STORE_BARRIER",
    "TmaLoad",
    "TmaStore",
    "TmaStoreWait",
    "SplitArrive",
    "SplitLoad",
    "SplitSave",
    "SmemTileRead",
    "SmemTileWrite",
    "QX_BARRIER",
    "Stamp",
    "TicketRead",
    "TicketTake",
    "Undef",
    "Touch",
    "WarpAny",
    "WarpSpecialize",
    "WarpgroupIndex",
    "WarpgroupTurn",
    "Wgmma",
    "WgmmaRegA",
    "WgmmaWait",
    "ZeroRows",
    "defined_values",
    "operands",
    "regions",
    "results",
    "walk",
]
