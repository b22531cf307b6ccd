"""Tile IR: an explicit SSA IR over tiles and scalars for ONE specialised kernel.

This file is the contract between the lowering (`ir/lower/`), the CPU
reference interpreter (`tilelang/interp/`, which DEFINES the semantics) and the
NVPTX backend (`tilelang/backend/`). Every op below documents exactly what it
computes; the backend must match the interpreter to floating-point tolerance.

Structure
---------
- A `Kernel` is one specialisation of a `kernel fn`: const generics are
  substituted (every tile shape is a tuple of Python ints) and device functions
  are inlined. It has `params` and a `body` `Region`.
- A `Value` is an SSA value: defined exactly once (by an op's result, a region
  argument, or a `ScalarParam`), with a `Type` = `(dtype, shape)`. Shape `()` is
  a scalar; any other shape is a tile. Every dimension is a positive int.
- A `Region` is a straight-line list of ops with block arguments (`args`); its
  LAST op is always a `Yield` (the kernel body yields nothing). Values defined
  before an op in an enclosing region are visible inside the op's regions
  (MLIR-style dominance, not isolated from above). Values defined inside a
  region are NOT visible after it: results leave a region only through `Yield`.
- Ops are frozen, slotted dataclasses that hash by identity (`eq=False`), so
  passes can key side tables by op. Each op keeps the `span` of the source it
  came from; run-time errors (a failed device `assert`) point there.
- Operands always have exactly the shape the op requires: the lowering inserts
  an explicit `Broadcast` for scalar-vs-tile and size-1 broadcasting, so no op
  except `Broadcast` broadcasts implicitly.

Tensors and the grid
--------------------
- Tensor parameters (`TensorParam`) are NOT SSA values; ops name them by
  `TensorParam.name` (unique within a kernel). Every tensor is contiguous and
  row-major; its run-time dims are passed at launch (`TensorDim` reads them).
  A `&mut` parameter (`mutable=True`) is this block's own tile of a partitioned
  tensor: the kernel still receives the WHOLE tensor plus `tile_shape`, and the
  lowering computes the own tile's element offsets explicitly
  (`block_id(d) * tile_shape[d]`). Memory safety does not depend on the
  ownership checker: every `Load`/`Store`/`AtomicRMW` is masked against the
  tensor bounds.
- The grid has `Kernel.grid_rank` axes (1..3). `BlockId(axis)` is in
  `[0, NumBlocks(axis))`. Blocks run in an unspecified order and may run
  concurrently; only atomics may touch an element written by another block.
- Index arithmetic is i32 (`BlockId`, `NumBlocks`, `TensorDim` are i32), so a
  tensor dimension must be < 2**31; the backend computes addresses in i64.

Numeric semantics (what the interpreter implements, the backend matches)
------------------------------------------------------------------------
- f16: every op's result is rounded to f16 (round-to-nearest-even). Math
  functions on f16/bf16 are computed in f32 and rounded once.
- bf16: values are held in float32 arrays, rounded to bf16 (RNE; NaN stays NaN,
  inf stays inf, overflow rounds to inf) after every op.
- f32 arithmetic is done in f32 (never f64); f64 in f64.
- Integers wrap on overflow (two's complement).
- Integer `div` truncates toward zero, `rem` has the sign of the dividend
  (C / Rust). Division by zero does not trap: `x / 0 == 0` and `x % 0 == x`
  (so `x == (x / y) * y + x % y` always holds); `MIN / -1 == MIN`,
  `MIN % -1 == 0`. Float `div` is IEEE; float `rem` is C `fmod`.
- Shifts: the amount is read as unsigned; an amount >= the bit width gives 0
  for `shl` and for `shr` of unsigned types, and the sign fill (0 or -1) for
  `shr` of signed types (arithmetic shift). This is PTX's clamping behaviour.
- `maximum`/`minimum` and the `max`/`min` reductions propagate NaN (PTX
  `max.NaN`); `argmax`/`argmin` return the FIRST index of the extreme value,
  and a NaN counts as the extreme (NumPy's rule).
- Reductions and scans of f16/bf16 accumulate in f32 and round the result once;
  f32 accumulates in f32, f64 in f64, integers in their own type (wrapping).
  The order of float accumulation is unspecified (compare with a tolerance).
- Comparisons follow IEEE (any comparison with NaN is false except `ne`).
- Casts: float -> float and int -> float round to nearest even; float -> int
  truncates toward zero and SATURATES to the target range, NaN -> 0 (LLVM
  `fptosi.sat`/`fptoui.sat`, PTX `cvt.rzi.sat`); int -> int truncates or
  sign/zero-extends (wraps); bool -> number gives 0/1; number -> bool is `!= 0`.
  A `Cast` with `bits` set keeps the bits instead (`t.to_bits()`, `from_bits::<f32>(u)`): between a float
  type and the unsigned integer of its width (f16 and bf16: u16, f32: u32, f64: u64), in both directions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir.opcodes import AtomicOp, ElemOp, ReduceOp, ScanOp
from tilelang.source import DUMMY_SPAN, Span


# ------------------------------------------------------------------ types, values
@frozen(eq=True)
class Type:
    """The type of an SSA value: element dtype and a static shape (`()` = scalar)."""

    dtype: DType
    shape: tuple[int, ...] = ()

    @property
    def is_scalar(self) -> bool:
        return self.shape == ()

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def with_shape(self, shape: tuple[int, ...]) -> Type:
        return Type(self.dtype, tuple(shape))

    def with_dtype(self, dtype: DType) -> Type:
        return Type(dtype, self.shape)

    def __str__(self) -> str:
        if not self.shape:
            return self.dtype.value
        return f"{self.dtype.value}[{', '.join(str(d) for d in self.shape)}]"


@frozen(eq=True)
class Value:
    """An SSA value. `id` is unique within one kernel; `hint` is a source name
    (for readable printing only, never semantic)."""

    id: int
    type: Type
    hint: str = ""

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape


# ------------------------------------------------------------------ parameters
@frozen
class TensorParam:
    """A tensor argument, contiguous and row-major.

    `mutable=True`: a `&mut Tensor<T, [tile_shape]>` parameter; the launch passes
    the whole partitioned tensor and `tile_shape` is the partition's tile shape
    (the grid covers `ceil(dims[d] / tile_shape[d])` blocks on axis d).
    `mutable=False`: a `&Tensor` parameter, `tile_shape` is None.
    `dims[d]` is the static size of dim d when known, else None (`?`).
    """

    name: str
    dtype: DType
    rank: int
    mutable: bool
    tile_shape: tuple[int, ...] | None = None
    dims: tuple[int | None, ...] = ()
    span: Span = DUMMY_SPAN


@frozen
class ScalarParam:
    """A scalar argument; `value` is the SSA value that names it in the body."""

    name: str
    value: Value
    span: Span = DUMMY_SPAN


Param = TensorParam | ScalarParam


@frozen(eq=True)
class DimClaim:
    """A size a written type (a device function's parameter or result, a `let`'s) declares for a `?` dim of a
    kernel's tensor parameter `param` (an index into `Kernel.params`), checked at every launch (`ir/arg_dims.py`)."""

    param: int
    dim: int
    size: int
    owner: str  # "function `first`", "the `let` of `t`"
    label: str  # at `decl`: "`t` is `&Tensor<f32, [16]>` in this instance"
    where: str  # the help's place to write `?`: "in `first`"
    arg: Span = DUMMY_SPAN
    decl: Span = DUMMY_SPAN


# ------------------------------------------------------------------ ops
@frozen
class Const:
    """`result` = the constant `value` (a Python bool/int/float), splatted to
    `result.type.shape`. The value is converted to the result dtype exactly as
    a `Cast` from f64 (floats) or from an unbounded int (ints wrap) would."""

    result: Value
    value: bool | int | float
    span: Span = DUMMY_SPAN


@frozen
class BlockId:
    """`result: i32` = this block's index on grid axis `axis`."""

    result: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class NumBlocks:
    """`result: i32` = the number of blocks on grid axis `axis`."""

    result: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class LastBlock:
    """`result: bool`: this block arrives at the group counter `group` (an i32
    scalar: the group's index in this launch, every block of a group gives
    the same one) of a group of `size` blocks (i32 scalar), and `result` is
    true in exactly one block of the group: the last to arrive. Every store
    a block of the group made before its arrival is visible to the loads
    that the last block makes after it (on the GPU: the stores, a barrier,
    one thread's release/acquire atomic on the launch's counter, a barrier).
    `axis` is the grid axis the group spans (the source's `last_block(axis)`),
    for printing and the runtime's counter buffer. The lowering puts it only
    as the condition of the `If` that ends a kernel's body; the interpreter
    runs blocks to completion one at a time, so the last to arrive runs its
    region after every other block of its group has finished."""

    result: Value
    group: Value
    size: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class ClusterGather:
    """`result: Tile<T, [C, ..S]>`: the `x` (`Tile<T, S>`, or a scalar: S = [])
    of every block of this block's thread-block cluster (`Kernel.cluster`,
    C = its blocks), row c that of the block of cluster rank c: the block
    whose (block_id(0) % cx) + cx * (block_id(1) % cy) + cx * cy *
    (block_id(2) % cz) is c (CUDA's rank, axis 0 fastest). Every block of a
    cluster runs it once, at the top level of the kernel's body (the checker
    proves it: E0415); the interpreter runs a cluster's blocks together up
    to it, the GPU writes `x` to shared memory, meets the cluster at a
    barrier and reads the others' through distributed shared memory."""

    result: Value
    x: Value
    span: Span = DUMMY_SPAN


@frozen
class QueuePull:
    """`result: i32`: a ticket of the tile queue of group `group` (an i32
    scalar: the block's row, every block of the row gives the same one) along
    grid axis `axis` (the source's `for s in queue(axis)`): the row's counter
    before this block added one to it. Tickets are unique in a launch and
    handed out in increasing order. On the GPU one thread pulls
    (a relaxed atomic, not awaited): only `QueueTake` makes the ticket the
    block's; the lowering puts the two around a tile's work, so the round
    trip of the next pull overlaps it."""

    result: Value
    group: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class QueueTake:
    """`result: i32` = `ticket` (a `QueuePull`'s) + `workers`, the same in every
    thread of the block: the tile the ticket names (each of the row's
    `workers` blocks runs its own tile, `block_id(axis)`, first; tickets name
    the others, in order). The row has `size` tiles; each block that ran a
    tile pulls until its ticket names none (ticket + workers >= size), so the
    row's pulls are exactly `size` and the block that takes ticket `size - 1`
    resets the group's counter to 0 (the next launch, or a graph's next
    replay, finds it zeroed)."""

    result: Value
    ticket: Value
    group: Value
    size: Value
    workers: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class TensorDim:
    """`result: i32` = the run-time size of dim `axis` of tensor `tensor`."""

    result: Value
    tensor: str
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class Load:
    """Masked load of a tile of `tensor` (rank r) at element `offsets`.

    `offsets` are r i32 scalars; `result.shape` has rank r; `result.dtype` is
    the tensor's dtype. For each index i of the result:
        p = offsets + i
        result[i] = tensor[p]  if 0 <= p[d] < dim[d] for every d and mask[i]
                    padding    otherwise
    `mask` (optional) is a bool tile of `result.shape`. `padding` (optional) is
    a scalar of the tensor's dtype; None means zero. Never reads out of bounds.
    """

    result: Value
    tensor: str
    offsets: tuple[Value, ...]
    mask: Value | None = None
    padding: Value | None = None
    span: Span = DUMMY_SPAN


@frozen
class Store:
    """Masked store of tile `value` (rank r, the tensor's dtype) into `tensor`
    at element `offsets` (r i32 scalars): for each index i of `value`,
    `tensor[offsets + i] = value[i]` if in bounds and `mask[i]`; other elements
    are dropped. `mask` (optional) is a bool tile of `value.shape`.

    Own-tile stores, nested-tile stores and `store_unchecked` all lower to this
    op: they differ only in what the ownership checker allowed. `unchecked`
    marks a `store_unchecked` (no effect on the semantics; the sanitizer
    reports its elements outside the tensor, which other stores may drop at a
    partial edge tile).
    """

    tensor: str
    offsets: tuple[Value, ...]
    value: Value
    mask: Value | None = None
    span: Span = DUMMY_SPAN
    unchecked: bool = False


@frozen
class Prefetch:
    """A hint: start reading the tile of `tensor` (rank r) of `shape` at
    element `offsets` (r i32 scalars) into the GPU's L2 cache, for a later
    load (of this kernel or of the next one on the stream). No value, no
    effect on memory or on any result: the interpreter skips it, the GPU
    issues one bulk L2 prefetch a row of the tile's part inside the tensor
    (nothing outside the tensor is requested)."""

    tensor: str
    offsets: tuple[Value, ...]
    shape: tuple[int, ...]
    span: Span = DUMMY_SPAN


@frozen
class AtomicRMW:
    """Element-wise atomic read-modify-write, a scatter: `indices` has one entry
    per tensor dim, each an i32 scalar or an i32 tile of `value.shape`; `value`
    is a scalar or tile of the tensor's dtype. For every element position e
    (of `value.shape`, or the single position when everything is scalar):
    `tensor[idx[e]] = op(tensor[idx[e]], value[e])` if `idx[e]` is in bounds and
    `mask[e]` (mask: optional bool of `value.shape`). Positions that hit the same
    element all apply (duplicates accumulate). No result."""

    op: AtomicOp
    tensor: str
    indices: tuple[Value, ...]
    value: Value
    mask: Value | None = None
    span: Span = DUMMY_SPAN


@frozen
class Elementwise:
    """`result = op(*operands)` element by element; see `ElemOp` for typing.
    All operands and the result have the same shape."""

    result: Value
    op: ElemOp
    operands: tuple[Value, ...]
    span: Span = DUMMY_SPAN

    @property
    def operand_dtype(self) -> DType:
        """The dtype the op computes in: its operands' (`where`'s values, not its mask)."""
        return self.operands[-1].dtype if self.op is ElemOp.WHERE else self.operands[0].dtype


@frozen
class Cast:
    """`result = x as result.dtype` (same shape); rules in the module docstring. `bits`: the same bits
    reinterpreted (`t.to_bits()`, `from_bits::<f32>(u)`), between a float type and the unsigned integer
    of its width."""

    result: Value
    x: Value
    span: Span = DUMMY_SPAN
    bits: bool = False


@frozen
class Reduce:
    """Reduce `x` along `axis`; `result.shape` is `x.shape` without `axis` (a
    rank-1 input gives a scalar). dtype: x's, or i32 for argmax/argmin."""

    result: Value
    op: ReduceOp
    x: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class Scan:
    """Inclusive scan of `x` along `axis`; same type as `x`."""

    result: Value
    op: ScanOp
    x: Value
    axis: int
    span: Span = DUMMY_SPAN


@frozen
class Broadcast:
    """NumPy broadcasting of `x` (scalar or tile) to `result.shape`: ranks are
    aligned on the right, missing leading dims are added, and only dims of size
    1 are stretched. Same dtype."""

    result: Value
    x: Value
    span: Span = DUMMY_SPAN


@frozen
class Reshape:
    """Row-major reshape; `result.numel == x.numel`, same dtype."""

    result: Value
    x: Value
    span: Span = DUMMY_SPAN


@frozen
class Permute:
    """`result = x.transpose(perm)` (NumPy): `result.shape[i] == x.shape[perm[i]]`.
    `t.transpose()` is `perm=(1, 0)`."""

    result: Value
    x: Value
    perm: tuple[int, ...]
    span: Span = DUMMY_SPAN


@frozen
class Arange:
    """`result` = `[0, 1, ..., n-1]` of the result dtype, `result.shape == (n,)`."""

    result: Value
    span: Span = DUMMY_SPAN


@frozen
class Mma:
    """`result = acc + a @ b`: a [M, K], b [K, N], acc and result [M, N].

    a and b share a dtype (f16, bf16, f32, f64, or an integer type); acc has the
    result dtype. Float inputs: each product is exact in f32 for f16/bf16
    inputs, and products are accumulated in the ACCUMULATOR's dtype (f32 acc:
    f32; an f16 acc accumulates in f32 and rounds once). Integer inputs
    accumulate in the acc's type, wrapping. Accumulation order unspecified."""

    result: Value
    a: Value
    b: Value
    acc: Value
    span: Span = DUMMY_SPAN


@frozen
class Region:
    """A straight-line list of ops; `args` are its block arguments; the last op
    is a `Yield`."""

    args: tuple[Value, ...]
    ops: tuple[Op, ...]


@frozen
class For:
    """`for iv in lower..upper step step` with loop-carried values.

    `lower`, `upper`, `step` are scalars of one integer type (usually i32).
    `body.args == (iv, *carried)`; the body ends with `Yield` of
    `len(inits)` values, typed like `inits`. The loop runs while `iv < upper`
    (iv starting at `lower`, adding `step`); `step <= 0` runs zero iterations.
    `results` are the carried values after the last iteration (`inits` when
    the loop runs zero times)."""

    results: tuple[Value, ...]
    lower: Value
    upper: Value
    step: Value
    inits: tuple[Value, ...]
    body: Region
    span: Span = DUMMY_SPAN


@frozen
class If:
    """`if cond { then } else { else_ }` with results. `cond` is a bool scalar;
    both regions have no args and yield values typed like `results`."""

    results: tuple[Value, ...]
    cond: Value
    then: Region
    else_: Region
    span: Span = DUMMY_SPAN


@frozen
class While:
    """`while` with loop-carried values. `cond.args` and `body.args` are typed
    like `inits`; `cond` yields exactly one bool scalar (continue?), `body`
    yields the next carried values. Values defined in `cond` are not visible in
    `body`. `results` are the carried values when `cond` first yields false."""

    results: tuple[Value, ...]
    inits: tuple[Value, ...]
    cond: Region
    body: Region
    span: Span = DUMMY_SPAN


@frozen
class Yield:
    """Terminates a region, passing `values` to its parent op."""

    values: tuple[Value, ...] = ()
    span: Span = DUMMY_SPAN


@frozen
class Print:
    """Device print: `parts` are literal strings and values, concatenated and
    written as one line per executing block. A scalar prints like Rust's
    `Display`; a tile prints as a NumPy array.

    Lines come out in the order of the blocks that print them (a block's in
    program order). In a tile queue's or static walk's loop the block is not
    the tile (which tiles a block takes depends on how many blocks the device
    runs), so there `order` is `(s, n)`, the tile index along grid axis
    `axis` and the tiles along it: a line's place is that of block `s` of a
    grid of the partitions' tiles (the other axes the block's own), on every
    engine. In `if last_block(axis) { .. }` it is `(n - 1, n)` with n the
    group's blocks: the region's lines go after the group's last block's
    (where the interpreter, whose last arrival is that block, prints them),
    whichever block arrives last on a GPU."""

    parts: tuple[str | Value, ...]
    span: Span = DUMMY_SPAN
    order: tuple[Value, ...] = ()
    axis: int = -1


@frozen
class Assert:
    """Device assert: fails if any element of `cond` (bool scalar or tile) is
    false; a failure stops the launch with a located error at `span` carrying
    `message` (interpreter: `TileError` with code `E0700`).

    Where the block is not what failed, `order` is `(s, n)` on grid axis
    `axis`, as `Print.order`: in a tile queue's or walk's loop (`region`
    "queue" / "walk") the tile being worked on, tile `s` of `n`, whichever
    block took it; in `if last_block(axis) { .. }` ("last_block") the group's
    last block, whichever arrived last. The error names that place on every
    engine (the GPU writes it beside the assert's number)."""

    cond: Value
    message: str
    span: Span = DUMMY_SPAN
    order: tuple[Value, ...] = ()
    axis: int = -1
    region: str = ""


def describe_place(region: str, axis: int, coords: Sequence[int], extents: Sequence[int]) -> str:
    """Where a device `assert` failed, in words every engine writes alike: the block of a
    grid, or in an `Assert.region` what the block was working on (`coords`/`extents` with the
    order's tile, or the group's last block, along `axis`)."""
    def tup(xs: Sequence[object]) -> str:
        return "(" + ", ".join(map(str, xs)) + ")"
    if region in ("walk", "queue"):
        what = "tile walk" if region == "walk" else "tile queue"
        return f"in the {what}'s tile {tup(coords)} of {tup(extents)} (tiles along axis {axis})"
    if region == "last_block":
        group = [c if k != axis else "*" for k, c in enumerate(coords)]
        return f"in `if last_block({axis})`, run once by the group of blocks {tup(group)} of a grid of {tup(extents)}"
    return f"in block {tup(coords)} of a grid of {tup(extents)}"


def unravel_place(place: int, extents: Sequence[int]) -> tuple[int, ...]:
    """The coordinates of a linear place (x slowest, as `print` records and asserts write it)."""
    out: list[int] = []
    for e in reversed(extents):
        out.append(place % max(e, 1))
        place //= max(e, 1)
    return tuple(reversed(out))


Op = (
    Const
    | BlockId
    | NumBlocks
    | TensorDim
    | LastBlock
    | QueuePull
    | ClusterGather
    | QueueTake
    | Load
    | Store
    | Prefetch
    | AtomicRMW
    | Elementwise
    | Cast
    | Reduce
    | Scan
    | Broadcast
    | Reshape
    | Permute
    | Arange
    | Mma
    | For
    | If
    | While
    | Yield
    | Print
    | Assert
)


# ------------------------------------------------------------------ kernel
# `#[hints(pdl_early = 2)]`: the trigger at the main loop's last iteration
# (`Kernel.pdl_last`); 3: none, the next grid scheduled at this one's exit
# (`Kernel.pdl_exit`); any other positive value: at the kernel's entry
PDL_LAST = 2
PDL_EXIT = 3


@frozen
class Kernel:
    """One specialised kernel.

    `name` is the kernel's source name; `instantiation` the const generics it
    was specialised with (sorted (name, value) pairs), for display and caching.
    `grid_rank` is the number of grid axes. `num_warps`/`num_stages` come from
    `#[hints(...)]` (backend only; the interpreter ignores them); `hints` names
    the hints the source gave (the others are defaults the backend may replace).
    `min_blocks` (hint `min_blocks`, 0 = none): blocks an SM must be able to
    hold at once, so the backend's register budget is the SM's share of that
    many (CUDA's `__launch_bounds__` minimum blocks). `pdl_early` (hint
    `pdl_early`, non-zero): under programmatic dependent launch the kernel
    lets the next grid be scheduled at its start, before its own wait (the
    backend's trigger; the next grid still waits for this one to complete);
    `pdl_last` (hint `pdl_early = 2`): at its main loop's last iteration;
    `pdl_exit` (hint `pdl_early = 3`): at its exit (no trigger).
    `max_blocks` (hint `max_blocks`, 0 = none): at most that many blocks of
    the kernel run on an SM at once (the runtime pads the launch's shared
    memory, `runtime/occupancy.py`), for memory streams that run faster with
    fewer requests in flight. `prefetch_lines` (hint `prefetch_lines`,
    non-zero): its `Prefetch` ops are one `prefetch.global.L2` a line from
    the threads also where the GPU has bulk prefetches (sm_90).
    """

    name: str
    params: tuple[Param, ...]
    body: Region
    grid_rank: int = 1
    num_warps: int = 4
    num_stages: int = 2
    instantiation: tuple[tuple[str, int], ...] = ()
    span: Span = DUMMY_SPAN
    hints: tuple[str, ...] = ()  # the hints the source gave; "stages_off": a `stages` hint of 0 or below
    min_blocks: int = 0
    pdl_early: bool = False
    max_blocks: int = 0
    prefetch_lines: bool = False
    # `#[cluster(x, y, z)]`: the blocks of a thread-block cluster along grid
    # axes 0, 1, 2 (`ClusterGather`); () without one
    cluster: tuple[int, ...] = ()
    # `for s in tiles(axis)`, the static walk: its grid axis (-1: none). As a
    # queue's, the launch runs one wave of blocks along it and each block
    # steps through its own tiles (block_id, + num_blocks, ..) itself
    walk: int = -1
    # hint `evict_first` (non-zero): the copies of the loads a ring streams
    # (`stages`, `passes/stream_loads.py`) are evict-first in L2
    # (`codegen/ring.py`)
    evict_first: bool = False
    # hint `pdl_early = 2`: under programmatic dependent launch the kernel
    # triggers the next grid at the start of its main loop's last iteration
    # (the target's "last" trigger, for this kernel alone), after its own
    # wait; `pdl_early` is then False (the trigger is not before the wait)
    pdl_last: bool = False
    # hint `pdl_early = 3`: under programmatic dependent launch the kernel
    # never triggers, so the next grid is scheduled when this one's blocks
    # have all exited (the target's "exit", for this kernel alone)
    pdl_exit: bool = False
    # hint `fast_math = true`: exp, sigmoid, tanh and division by the GPU's
    # approximate forms (`backend/fastmath.FAST_MATH`); the interpreter as always
    fast_math: bool = False
    # hint `arrive_wait` (non-zero): in `if last_block(axis)`, the group's
    # block of the largest index along the axis runs the region once the
    # others have arrived (its thread 0 polls the group's counter with
    # acquire loads); the others add to it with a release reduction and
    # leave without waiting for an answer (`codegen/arrive.py`). The same
    # values as the default arrival (which block runs the region is the
    # only difference), on the GPU only: the interpreter runs blocks one at
    # a time in order, so its last to arrive is that block already
    arrive_wait: bool = False
    # the element types its type parameters were specialised with (sorted (name, dtype) pairs), for display:
    # two instances of `kernel fn k<T, const B: i32>` differ by these alone (round 23: `tilec emit` showed
    # `isqrt<B = 128>` twice, for u64 and u32)
    type_args: tuple[tuple[str, str], ...] = ()
    # the sizes its device functions' types declare for its `&` tensors' `?` dims (`DimClaim`, `ir/arg_dims.py`)
    claims: tuple[DimClaim, ...] = ()

    @property
    def cluster_blocks(self) -> int:
        """Blocks a cluster (1 without `#[cluster]`)."""
        return math.prod(self.cluster)

    def tensor(self, name: str) -> TensorParam:
        for p in self.params:
            if isinstance(p, TensorParam) and p.name == name:
                return p
        raise KeyError(name)

    @property
    def tensor_params(self) -> tuple[TensorParam, ...]:
        return tuple(p for p in self.params if isinstance(p, TensorParam))

    @property
    def scalar_params(self) -> tuple[ScalarParam, ...]:
        return tuple(p for p in self.params if isinstance(p, ScalarParam))


# ------------------------------------------------------------------ generic access
def op_results(op: Op) -> tuple[Value, ...]:
    """The values an op defines (region args excluded)."""
    match op:
        case For(results=rs) | If(results=rs) | While(results=rs):
            return rs
        case Store() | Prefetch() | AtomicRMW() | Yield() | Print() | Assert():
            return ()
        case _:
            return (op.result,)


def op_operands(op: Op) -> tuple[Value, ...]:
    """The values an op reads directly (not those read inside its regions)."""
    match op:
        case Const() | BlockId() | NumBlocks() | TensorDim() | Arange():
            return ()
        case Load(offsets=offs, mask=m, padding=p):
            return (*offs, *((m,) if m else ()), *((p,) if p else ()))
        case Store(offsets=offs, value=v, mask=m):
            return (*offs, v, *((m,) if m else ()))
        case Prefetch(offsets=offs):
            return offs
        case LastBlock(group=g, size=n):
            return (g, n)
        case ClusterGather(x=x):
            return (x,)
        case QueuePull(group=g):
            return (g,)
        case QueueTake(ticket=t, group=g, size=n, workers=w):
            return (t, g, n, w)
        case AtomicRMW(indices=idx, value=v, mask=m):
            return (*idx, v, *((m,) if m else ()))
        case Elementwise(operands=xs):
            return xs
        case Cast(x=x) | Reduce(x=x) | Scan(x=x) | Broadcast(x=x) | Reshape(x=x) | Permute(x=x):
            return (x,)
        case Mma(a=a, b=b, acc=c):
            return (a, b, c)
        case For(lower=lo, upper=hi, step=st, inits=inits):
            return (lo, hi, st, *inits)
        case If(cond=c):
            return (c,)
        case While(inits=inits):
            return inits
        case Yield(values=vs):
            return vs
        case Print(parts=parts, order=order):
            return tuple(p for p in parts if isinstance(p, Value)) + order
        case Assert(cond=c, order=order):
            return (c, *order)
    raise TypeError(f"unknown op {type(op).__name__}")


def op_regions(op: Op) -> tuple[Region, ...]:
    match op:
        case For(body=b):
            return (b,)
        case If(then=t, else_=e):
            return (t, e)
        case While(cond=c, body=b):
            return (c, b)
        case _:
            return ()


def walk(region: Region):  # type: ignore[no-untyped-def]
    """Every op in `region` and its nested regions, in program order (pre-order)."""
    for op in region.ops:
        yield op
        for sub in op_regions(op):
            yield from walk(sub)


__all__ = [
    "Arange",
    "Assert",
    "AtomicOp",
    "AtomicRMW",
    "BlockId",
    "Broadcast",
    "Cast",
    "ClusterGather",
    "Const",
    "ElemOp",
    "Elementwise",
    "For",
    "If",
    "Kernel",
    "LastBlock",
    "Load",
    "Mma",
    "NumBlocks",
    "Op",
    "Param",
    "Permute",
    "Print",
    "QueuePull",
    "QueueTake",
    "Reduce",
    "ReduceOp",
    "Region",
    "Reshape",
    "ScalarParam",
    "Scan",
    "ScanOp",
    "Store",
    "TensorDim",
    "TensorParam",
    "Type",
    "Value",
    "While",
    "Yield",
    "describe_place",
    "op_operands",
    "op_regions",
    "op_results",
    "unravel_place",
    "walk",
]
