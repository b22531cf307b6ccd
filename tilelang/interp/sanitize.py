"""The dynamic race and bounds oracle: `tilec run --sanitize`, `TILE_SANITIZE=1`.

Miri for GPU kernels. Under the sanitizer the CPU interpreter runs each
launch block by block (`machine.run_kernel(..., observer=...)`) and records,
for every element of every tensor it touches, which block stored it, which
blocks read it and which updated it atomically (`Shadow`: a few int32 arrays
of the tensor's shape, one launch at a time). It reports, as a located
`TileError` that names the kernel, the launch, the blocks and the element:

  (a) E0730: two blocks of one launch store the same element;
  (b) E0731: a block reads (or atomically updates) an element another block
      of the same launch stores, or stores one another block read;
  (c) E0732: a launch reads or writes an element that an earlier launch not
      yet waited for writes (or writes one it reads), or the host reads or
      writes a tensor such a launch writes (reads, for a write);
  (d) E0733: in `unsafe` code, an atomic or a `store_unchecked` whose index
      (where its value, or its tile's first element, lands) is outside its
      tensor (a tile that starts inside and runs past the edge drops its
      elements there, as a store's edge tile does: not reported);

and, as a warning (E0734), a tile load from a `&` tensor whose index lies
wholly outside the tensor (every element reads the padding: an embedding
gather with a bad id reads zeros without a word), except a stencil's halo
(a tile within one tile of the tensor, at an index made of the block's
place alone: `p.load([r - 1, 0])` in the first block; `_placed_values`),
and except in the last
iteration of a `for` loop a load whose value only the loop's next iteration
reads (software pipelining, std::llm's GEMVs at ST = 2: the tile past the
last, which nothing reads; `_next_iteration_loads`, `Recorder.iteration`).

A kernel with a tile walk or queue runs a block a tile here (the plain run
has two blocks a row take them all): which block takes a tile is the
device's choice, so two tiles are two blocks.

Atomic updates of one kind by two blocks never conflict with each other;
updates of two kinds (`atomic_add` and `atomic_max`: they do not commute)
by two blocks of a launch (E0731) or two launches in flight (E0732) do,
and so does a plain load or store of the same element by another block. What a launch touched
(its `Footprint`) is kept while the launch is in flight (`launched`, until
`waited`), and every later launch and every host access is checked against
it (`host_access`, called through `runtime.tensor.HOST_ACCESS`).

Entry points: `Sanitizer.run_kernel` (what a sanitizing `CpuDevice` runs),
`Sanitizer.launched`/`waited`, `Sanitizer.host_access`, `Sanitizer.warnings`.
Invariant: it changes no result: the blocks run in the sequential mode's
order and the memory effects are exactly `machine.run_kernel`'s (a walk's
or queue's, a block a tile: the same for a race-free kernel, up to the
order of float atomics, which is unspecified).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilelang.diagnostics.codes import runtime as codes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.ir import nodes as ir
from tilelang.source import Span

NONE = -1


def _idx(t: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(x)) for x in t) + "]"


@dataclass(slots=True)
class Shadow:
    """Who touched each element of one tensor in the current launch: block
    ids (flat, in grid order; -1 none) and the op that did it (an index into
    `Recorder.ops`)."""

    writer: np.ndarray
    writer_op: np.ndarray
    reader: np.ndarray  # the first block that read the element
    reader_op: np.ndarray
    reader2: np.ndarray  # a second block, other than `reader`, that read it
    atomic: np.ndarray  # the first block that updated it atomically
    atomic2: np.ndarray  # a second one
    atomic_op: np.ndarray
    atomic_kinds: np.ndarray  # the kinds of those updates (`_KIND_BITS`, or-ed; 0 none)

    @staticmethod
    def of(shape: tuple[int, ...]) -> Shadow:
        def full() -> np.ndarray:
            return np.full(shape, NONE, np.int32)

        return Shadow(full(), full(), full(), full(), full(), full(), full(), full(),
                      np.zeros(shape, np.int32))


# one bit per kind of atomic: two blocks (or two launches in flight) that
# update one element with different kinds race (0, add 5, max 3 is 5; max
# first is 8), as `tilec check` says (E0418, E0309)
_KIND_BITS = {k: 1 << i for i, k in enumerate(ir.AtomicOp)}
_KIND_NAMES = {bit: k.value for k, bit in _KIND_BITS.items()}


@dataclass(slots=True)
class Footprint:
    """The elements a finished launch wrote, read and updated atomically, per
    storage array (by identity)."""

    kernel: str
    span: Span | None
    arrays: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )  # id(storage) -> (storage, written, read, atomic): boolean masks, `atomic`
    # the kinds of the atomic updates (`_KIND_BITS` or-ed; 0: none)
    names: dict[int, str] = field(default_factory=dict)  # id(storage) -> a parameter name


class Recorder:
    """The observer `machine.run_kernel` calls on every load, store and atomic
    of one launch (block mode)."""

    def __init__(self, kernel: ir.Kernel, grid: tuple[int, ...], tensors: Mapping[str, np.ndarray],
                 launch: Span | None, warn: Callable[[Diagnostic], None]) -> None:
        self.kernel = kernel
        self.grid = grid
        self.launch = launch
        self.warn = warn
        self.params = {p.name: p for p in kernel.tensor_params}
        self.names: dict[int, str] = {}
        for name, arr in tensors.items():
            self.names.setdefault(id(arr), name)
        self.shadows: dict[int, tuple[np.ndarray, Shadow]] = {}
        self.ops: list[Any] = []
        self._op_ids: dict[int, int] = {}
        self._warned: set[int] = set()
        # `if last_block(axis)`: the block that arrived last of its group, and
        # the group's blocks, whose stores are ordered before its region
        self.after: dict[int, np.ndarray] = {}
        # a load whose value only the next iteration of its loop reads (software pipelining:
        # `let next = p.load([i, k + 1]); ..; wt = next;`) -> that loop; in the loop's last
        # iteration it loads the tile past the last on purpose, a value nothing reads
        self._prefetch = _next_iteration_loads(kernel)
        self._loops = set(self._prefetch.values())
        self._guarded = _guarded_indices(kernel)  # id(Load) -> its tested tile indices (`views.tile_offset`)
        self._placed_ids: tuple[set[int], set[int]] | None = None  # `_placed_values`, made when first needed
        self._own = [p.tile_shape for p in kernel.tensor_params if p.mutable and p.tile_shape]
        self.env: Mapping[int, np.ndarray] | None = None  # the running block's values (set by the machine)
        self._last: dict[int, bool] = {}  # id(For) -> whether its current iteration is the last

    # -- bookkeeping ----------------------------------------------------------------
    def _shadow(self, arr: np.ndarray) -> Shadow:
        hit = self.shadows.get(id(arr))
        if hit is None:
            hit = (arr, Shadow.of(arr.shape))
            self.shadows[id(arr)] = hit
        return hit[1]

    def _op(self, op: Any) -> int:
        i = self._op_ids.get(id(op))
        if i is None:
            i = self._op_ids[id(op)] = len(self.ops)
            self.ops.append(op)
        return i

    def _block(self, flat: int) -> str:
        coords = np.unravel_index(int(flat), self.grid) if self.grid else ()
        return "(" + ", ".join(str(int(c)) for c in coords) + ")"

    def _flat(self, bid: Sequence[int]) -> int:
        return int(np.ravel_multi_index(tuple(int(b) for b in bid), self.grid)) if self.grid else 0

    # -- the hooks ----------------------------------------------------------------------
    def iteration(self, loop: ir.For, last: bool) -> None:
        """A `for` loop's body starts an iteration (`last`: no other follows)."""
        if id(loop) in self._loops:
            self._last[id(loop)] = last

    def last_block(self, bid: Sequence[int], axis: int) -> None:
        peers = []
        for i in range(self.grid[axis] if axis < len(self.grid) else 1):
            other = list(bid)
            other[axis] = i
            peers.append(self._flat(other))
        self.after[self._flat(bid)] = np.asarray(peers, np.int32)

    def load(self, bid: Sequence[int], op: ir.Load, arr: np.ndarray, offsets: list[int],
             win: tuple[tuple[slice, ...], tuple[slice, ...]] | None, mask: np.ndarray | None) -> None:
        if win is None:
            self._outside(bid, op, offsets, mask, arr.shape)
            return
        got = self._access(codes.BLOCK_READS_STORED, "reads", bid, op, arr, win, mask)
        if got is None:
            return
        src, sel, b, sh = got
        at = sh.atomic[src]
        bad = sel & (((at != NONE) & (at != b)) | ((sh.atomic2[src] != NONE) & (sh.atomic2[src] != b)))
        if bad.any():
            self._race(codes.BLOCK_READS_STORED, bid, op, arr, src, bad, np.where(at != b, at, sh.atomic2[src]),
                       sh.atomic_op[src], "reads", "updates atomically", "updated atomically")
        r = sh.reader[src]
        r2 = sh.reader2[src]
        k = self._op(op)
        first = sel & (r == NONE)
        r[first] = b
        sh.reader_op[src][first] = k
        second = sel & (r != b) & (r2 == NONE)
        r2[second] = b

    def store(self, bid: Sequence[int], op: ir.Store, arr: np.ndarray, offsets: list[int],
              shape: tuple[int, ...], win: tuple[tuple[slice, ...], tuple[slice, ...]] | None,
              mask: np.ndarray | None) -> None:
        if getattr(op, "unchecked", False):
            self._raw_bounds(bid, op, arr, offsets, shape, win, mask)
        got = self._access(codes.BLOCKS_STORE_SAME, "stores", bid, op, arr, win, mask)
        if got is None:
            return
        src, sel, b, sh = got
        # another block read (or updated atomically) what this store overwrites
        for first, second, ops, what, done in (
                (sh.reader, sh.reader2, sh.reader_op, "reads", "read"),
                (sh.atomic, sh.atomic2, sh.atomic_op, "updates atomically", "updated atomically")):
            one, two = first[src], second[src]
            other = np.where((one != NONE) & (one != b), one, two)
            bad = sel & (other != NONE) & (other != b)
            if bad.any():
                self._race(codes.BLOCK_READS_STORED, bid, op, arr, src, bad, other, ops[src], "stores", what,
                           done)
        sh.writer[src][sel] = b
        sh.writer_op[src][sel] = self._op(op)

    def _access(self, code: str, verb: str, bid: Sequence[int], op: Any, arr: np.ndarray,
                win: tuple[tuple[slice, ...], tuple[slice, ...]] | None, mask: np.ndarray | None,
                ) -> tuple[tuple[slice, ...], np.ndarray, int, Shadow] | None:
        """A tile access of block `bid`: the tensor window it touches, which of
        its elements the mask selects, the block's number and the tensor's
        shadow, after reporting (as `code`) the selected elements that another
        block of the launch stored. None when it touches nothing."""
        if win is None:
            return None
        src, dst = win
        sel = np.ones(tuple(s.stop - s.start for s in src), bool) if mask is None else \
            np.asarray(mask, bool)[dst]
        if not sel.any():
            return None
        b, sh = self._flat(bid), self._shadow(arr)
        w = sh.writer[src]
        bad = sel & (w != NONE) & (w != b)
        if b in self.after:  # the last block of a group reads its peers' finished stores
            bad &= ~np.isin(w, self.after[b])
        if bad.any():
            self._race(code, bid, op, arr, src, bad, w, sh.writer_op[src], verb, "stores", "stored")
        return src, sel, b, sh

    def atomic(self, bid: Sequence[int], op: ir.AtomicRMW, arr: np.ndarray, idx: list[np.ndarray],
               value: np.ndarray, mask: np.ndarray | None) -> None:
        shape = np.shape(value)
        for i in idx:
            shape = np.broadcast_shapes(shape, np.shape(i))
        flat = [np.broadcast_to(i, shape).reshape(-1).astype(np.int64) for i in idx]
        sel = np.ones(flat[0].shape if flat else (1,), bool)
        if mask is not None:
            sel &= np.broadcast_to(mask, shape).reshape(-1).astype(bool)
        inb = np.ones_like(sel)
        for i, dim in zip(flat, arr.shape, strict=False):
            inb &= (i >= 0) & (i < dim)
        out = sel & ~inb
        origin = _tile_origin(idx, shape, len(arr.shape))
        if out.any() and (origin is None or not _inside(origin, arr.shape)):
            # a tile that starts inside and runs past the edge is the edge's rule (the reference's "Kernels and
            # the edges of tensors": dropped, as a store's edge tile is): a ragged split-K's last tiles
            j = int(np.flatnonzero(out)[0])
            where = [int(i[j]) for i in flat] if origin is None else origin
            self._bounds_error(bid, op, arr, where, f"`{op.op.value}` at element {_idx(where)}")
        sel &= inb
        if not sel.any():
            return
        b = self._flat(bid)
        sh = self._shadow(arr)
        pos = tuple(i[sel] for i in flat)
        for plain, plain_op, verb in ((sh.writer, sh.writer_op, "stored"), (sh.reader, sh.reader_op, "read"),
                                      (sh.reader2, sh.reader_op, "read")):
            got = plain[pos]
            bad = (got != NONE) & (got != b)
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                elem = tuple(int(p[j]) for p in pos)
                self._report(codes.BLOCK_READS_STORED, bid, op, arr, elem, int(got[j]),
                             self.ops[int(plain_op[elem])] if plain_op[elem] != NONE else None,
                             "updates atomically", verb)
        k = self._op(op)
        at, at2 = sh.atomic[pos], sh.atomic2[pos]
        bit = _KIND_BITS[op.op]
        # another block updated the element with another kind: once two blocks
        # have updated an element, all its kinds so far are theirs (two kinds
        # of two blocks are reported when the second comes), so this is exact
        others = ((at != NONE) & (at != b)) | ((at2 != NONE) & (at2 != b))
        bad = others & ((sh.atomic_kinds[pos] & ~bit) != 0)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            elem = tuple(int(p[j]) for p in pos)
            them = int(at[j]) if at[j] != b else int(at2[j])
            theirs = self.ops[int(sh.atomic_op[elem])]
            if getattr(theirs, "op", None) is op.op or theirs is op:  # its last update was this kind
                theirs = None
            kinds = "`, `".join(sorted(n for bt, n in _KIND_NAMES.items()
                                       if int(sh.atomic_kinds[elem]) & bt & ~bit))
            self._report(codes.BLOCK_READS_STORED, bid, op, arr, elem, them, theirs,
                         f"updates with `{op.op.value}`", f"updated with `{kinds}`",
                         help="update an element with one kind of atomic: a separate tensor "
                         "(another `&` parameter) for each kind")
        sh.atomic_kinds[pos] |= bit
        sh.atomic[pos] = np.where(at == NONE, b, at)
        sh.atomic2[pos] = np.where((at != NONE) & (at != b) & (at2 == NONE), b, at2)
        sh.atomic_op[pos] = k

    # -- findings -----------------------------------------------------------------------
    def _outside(self, bid: Sequence[int], op: ir.Load, offsets: list[int], mask: np.ndarray | None,
                 dims: tuple[int, ...]) -> None:
        p = self.params.get(op.tensor)
        if p is None or p.mutable or id(op) in self._warned:
            return
        if op.padding is not None:
            return  # `load_padded`: its value says the outside is meant (a stencil's halo, -inf for a maximum)
        if self._halo(op, offsets, dims):
            return
        loop = self._prefetch.get(id(op))
        if loop is not None and self._last.get(loop, False):
            return  # the last iteration's prefetch of the tile past the last: never read
        if mask is not None and not np.asarray(mask, bool).any():
            return
        self._warned.add(id(op))
        d = (
            Diagnostic.warning(
                codes.LOAD_OUTSIDE_TENSOR,
                f"a tile load in kernel `{self.kernel.name}` lies wholly outside `{op.tensor}`: "
                "every element reads the padding",
            )
            .primary(op.span, f"block {self._block(self._flat(bid))} loads "
                              f"{self._named(op) or f'at element offset {_idx(offsets)}'}, past the edge of `{op.tensor}`")
        )
        if self.launch is not None:
            d = d.secondary(self.launch, "in this launch")
        self.warn(d.note("a tile index computed from data (an embedding id, a position) may be "
                         "out of range").with_help("check the index; where reading past the edge is meant (a halo), "
                                                   "`load_padded([..], value)` says so and which value is read"))

    def _halo(self, op: ir.Load, offsets: list[int], dims: tuple[int, ...]) -> bool:
        """A neighbour tile of the block's own place, within one tile of an edge (the load's or the
        block's own tile, the larger; `p.load([r - 1, 0])` in the first block): a stencil's halo, whose
        zeros the reference's edge rule gives on purpose (a03, a08, g01, g11 and x12 warned, hfix2). Its
        index is made of the block's place alone, and along each axis where it is outside it moves with
        the block (`block_id`, a walk's tile); a tile further out, an index computed from data, or one
        that a loop alone moves past the edge (a pipelined load read after the loop) still warns."""
        if self._placed_ids is None:
            self._placed_ids = _placed_values(self.kernel)
        placed, moving = self._placed_ids
        # (a causal convolution's rows t - 1 .. t - 3, a row a load, are its own tile's halo: g11)
        tile = [max([t, *(own[d] for own in self._own if len(own) == len(dims))])
                for d, t in enumerate(op.result.shape)]
        if not (all(o.id in placed for o in op.offsets) and _beside(offsets, tile, dims)):
            return False
        return all(0 <= o < d or v.id in moving for o, d, v in zip(offsets, dims, op.offsets, strict=True))

    def _named(self, op: ir.Load) -> str:
        """Where a tile index was tested (`views.tile_offset`) and its `index * tile` left `i32`: the
        index the program named (the offset shown is the one that reads nothing in its place)."""
        env = self.env
        if env is None:
            return ""
        past = [(a, int(env[i.id]), t) for a, i, ok, t in self._guarded.get(id(op), ())
                if ok.id in env and not bool(env[ok.id]) and i.id in env]
        return " and ".join(f"tile index {i} along axis {a}" + (f" ({i} * {t} does not fit `i32`)" if i >= 0 else "")
                            for a, i, t in past)

    def _raw_bounds(self, bid: Sequence[int], op: ir.Store, arr: np.ndarray, offsets: list[int],
                    shape: tuple[int, ...], win: Any, mask: np.ndarray | None) -> None:
        sel = np.ones(shape, bool) if mask is None else np.asarray(mask, bool).copy()
        if win is not None:
            sel[win[1]] = False
        if sel.any() and not _inside([int(o) for o in offsets], arr.shape):  # (a tail past the edge is dropped)
            at = np.argwhere(sel)[0]
            where = [int(o) + int(a) for o, a in zip(offsets, at, strict=False)]
            self._bounds_error(bid, op, arr, where, f"`store_unchecked` of element {_idx(where)}")

    def _bounds_error(self, bid: Sequence[int], op: Any, arr: np.ndarray, where: list[int],
                      what: str) -> None:
        name = getattr(op, "tensor", self.names.get(id(arr), "tensor"))
        d = (
            Diagnostic.error(
                codes.UNSAFE_OUT_OF_BOUNDS,
                f"{what} is outside `{name}` (shape {_idx(arr.shape)}) in kernel `{self.kernel.name}`",
            )
            .primary(op.span, f"block {self._block(self._flat(bid))} writes outside the tensor here")
        )
        if self.launch is not None:
            d = d.secondary(self.launch, "in this launch")
        raise TileError(
            d.note("the GPU drops such a write silently; it is a bug in this `unsafe` code")
            .with_help("keep atomic and unchecked indices inside the tensor's shape")
        )

    def _race(self, code: str, bid: Sequence[int], op: Any, arr: np.ndarray, src: tuple[slice, ...],
              bad: np.ndarray, other: np.ndarray, other_op: np.ndarray, verb: str, their: str,
              their_past: str) -> None:
        at = tuple(int(x) for x in np.argwhere(bad)[0])
        elem = tuple(s.start + a for s, a in zip(src, at, strict=False))
        k = int(other_op[at])
        self._report(code, bid, op, arr, elem, int(other[at]), self.ops[k] if k != NONE else None, verb,
                     their_past)

    def _report(self, code: str, bid: Sequence[int], op: Any, arr: np.ndarray, elem: tuple[int, ...],
                other: int, other_op: Any, verb: str, their_past: str, help: str | None = None) -> None:
        name = getattr(op, "tensor", self.names.get(id(arr), "tensor"))
        me, them = self._block(self._flat(bid)), self._block(other)
        if code == codes.BLOCKS_STORE_SAME:
            msg = f"data race in kernel `{self.kernel.name}`: blocks {them} and {me} both store " \
                  f"element {_idx(elem)} of `{name}`"
        else:
            msg = f"data race in kernel `{self.kernel.name}`: block {me} {verb} element " \
                  f"{_idx(elem)} of `{name}`, which block {them} {their_past}"
        d = Diagnostic.error(code, msg).primary(op.span, f"block {me} {verb} element {_idx(elem)} here")
        if other_op is not None and other_op is not op:
            done = their_past.replace(" atomically", " it atomically") if " " in their_past \
                else f"{their_past} it"
            d = d.secondary(other_op.span, f"block {them} {done} here")
        if self.launch is not None:
            d = d.secondary(self.launch, "in this launch")
        from tilelang.interp.machine import queue_axis

        axis = queue_axis(self.kernel)
        if axis is not None:
            d = d.note(f"in a tile walk or queue the device chooses which block takes a tile: here block "
                       f"{me} is the one that takes tile {me} (along axis {axis}), which may run beside the "
                       f"block that takes tile {them}")
        raise TileError(
            d.note("the blocks of a launch run in any order, at the same time on a GPU: "
                   "the result depends on which one comes first")
            .with_help(help or "give each block its own tile (a `&mut` partition), or keep shared "
                       "updates to atomics")
        )

    # -- the result -----------------------------------------------------------------------
    def footprint(self) -> Footprint:
        fp = Footprint(self.kernel.name, self.launch, names=dict(self.names))
        for key, (arr, sh) in self.shadows.items():
            fp.arrays[key] = (arr, sh.writer != NONE, (sh.reader != NONE), sh.atomic_kinds)
        return fp


# ---------------------------------------------------------------- launches and the host
def _inside(index: Sequence[int], shape: tuple[int, ...]) -> bool:
    return all(0 <= i < d for i, d in zip(index, shape, strict=False))


def _tile_origin(idx: Sequence[Any], shape: tuple[int, ...], rank: int) -> list[int] | None:
    """The element an atomic's index names (its value's first element lands there) when the atomic is a tile at
    an origin, each element at origin + its position (what `atomic_add(&t, [i, j], tile)` lowers to); None for
    a scatter whose indices are data (an IR-level atomic with index tiles)."""
    if len(shape) < rank and any(np.ndim(i) for i in idx):
        return None
    pos = np.indices(shape) if shape else np.zeros((0,), np.int64)
    origin = []
    for d, i in enumerate(idx):
        base = np.broadcast_to(np.asarray(i, np.int64), shape)
        if shape and d < len(shape):
            base = base - pos[d]
        flat = base.reshape(-1)
        if flat.size == 0 or (flat != flat[0]).any():
            return None
        origin.append(int(flat[0]))
    return origin


def _guarded_indices(kernel: ir.Kernel) -> dict[int, list[tuple[int, ir.Value, ir.Value, int]]]:
    """The loads whose offsets hold a tested tile index (`ir/lower/views.tile_offset`: `where(ok, i, past)
    * t`, plus the own tile's offset for a nested view): id(Load) -> (axis, i, ok, t) each."""
    defs = {r.id: op for op in ir.walk(kernel.body) for r in ir.op_results(op)}
    out: dict[int, list[tuple[int, ir.Value, ir.Value, int]]] = {}
    for op in ir.walk(kernel.body):
        if not isinstance(op, ir.Load):
            continue
        for axis, o in enumerate(op.offsets):
            d = defs.get(o.id)
            if isinstance(d, ir.Elementwise) and d.op is ir.ElemOp.ADD:
                d = defs.get(d.operands[0].id)
            if not (isinstance(d, ir.Elementwise) and d.op is ir.ElemOp.MUL):
                continue
            w, t = (defs.get(x.id) for x in d.operands)
            if isinstance(w, ir.Elementwise) and w.op is ir.ElemOp.WHERE and isinstance(t, ir.Const):
                out.setdefault(id(op), []).append((axis, w.operands[1], w.operands[0], int(t.value)))
    return out


_PLACES = (ir.Const, ir.BlockId, ir.NumBlocks, ir.TensorDim, ir.Arange, ir.QueuePull, ir.QueueTake)
_MOVING = (ir.BlockId, ir.QueuePull, ir.QueueTake)
_PURE = (ir.Elementwise, ir.Cast, ir.Broadcast, ir.Reshape, ir.Permute)


def _placed_values(kernel: ir.Kernel) -> tuple[set[int], set[int]]:
    """The ids of the values computed from the block's place alone: constants (the generics), `block_id`,
    `num_blocks`, tensor sizes, a walk's or queue's tile, and arithmetic of those, a `for` loop's variable
    over such bounds, and a loop-carried value whose start and every update are such values (the counter of
    `for j in 0..=last`, a `while`); not tensor data or scalar parameters. And of those, the ones that move
    with the block (made of `block_id` or a walk's or queue's tile)."""
    ops = list(ir.walk(kernel.body))
    # loop-carried slots: (the region args and results that hold it, its start, its update)
    # (and the values a `while`'s condition reads: one that moves with the block moves its counters too,
    # `for j in 0..=last` with `last` of `block_id`: u10's key tiles past the sequence, masked after)
    slots: list[tuple[list[ir.Value], ir.Value, ir.Value, tuple[ir.Value, ...]]] = []
    for op in ops:
        if isinstance(op, ir.For) and isinstance(op.body.ops[-1], ir.Yield):
            ys = op.body.ops[-1].values
            for k, init in enumerate(op.inits):
                slots.append(([op.body.args[k + 1], op.results[k]], init, ys[k], ()))
        elif isinstance(op, ir.While) and isinstance(op.body.ops[-1], ir.Yield):
            ys = op.body.ops[-1].values
            reads = tuple(v for c in ir.walk(op.cond) for v in ir.op_operands(c))
            for k, init in enumerate(op.inits):
                slots.append(([op.cond.args[k], op.body.args[k], op.results[k]], init, ys[k], reads))
    assumed = set(range(len(slots)))  # the slots taken as placed (the largest set that holds up)
    while True:
        ok: set[int] = {v.id for k in assumed for v in slots[k][0]}
        moving: set[int] = set()
        size = -1
        while size != len(ok) + len(moving):  # (again while a slot's update or condition starts moving)
            size = len(ok) + len(moving)
            for k in assumed:
                if any(v.id in moving for v in (slots[k][1], slots[k][2], *slots[k][3])):
                    moving.update(v.id for v in slots[k][0])
            for op in ops:
                if isinstance(op, _PLACES) or (isinstance(op, _PURE)
                                               and all(v.id in ok for v in ir.op_operands(op))):
                    ok.update(r.id for r in ir.op_results(op))
                    if isinstance(op, _MOVING) or any(v.id in moving for v in ir.op_operands(op)):
                        moving.update(r.id for r in ir.op_results(op))
                elif isinstance(op, ir.For) and all(v.id in ok for v in (op.lower, op.upper, op.step)):
                    ok.add(op.body.args[0].id)
                    if any(v.id in moving for v in (op.lower, op.upper)):
                        moving.add(op.body.args[0].id)
        broken = {k for k in assumed if slots[k][1].id not in ok or slots[k][2].id not in ok}
        if not broken:
            return ok, moving
        assumed -= broken


def _beside(offsets: Sequence[int], tile: Sequence[int], dims: Sequence[int]) -> bool:
    """Whether a tile at element `offsets` lies within one tile of a tensor of `dims` on every axis (the
    neighbour tile past an edge, or a corner's)."""
    return len(tile) == len(dims) == len(offsets) and all(
        -t <= o < d + t for o, t, d in zip(offsets, tile, dims, strict=True))


def _next_iteration_loads(kernel: ir.Kernel) -> dict[int, int]:
    """The loads whose value only the next iteration of their `for` loop reads: an op of the
    loop's body whose only use is the body's `yield` (a loop-carried value), where the
    loop's result for it is read by nothing after the loop. id(Load) -> id(For)."""
    uses: dict[int, int] = {}
    for op in ir.walk(kernel.body):
        for v in ir.op_operands(op):
            uses[v.id] = uses.get(v.id, 0) + 1
    out: dict[int, int] = {}
    for loop in ir.walk(kernel.body):
        if not isinstance(loop, ir.For) or not loop.body.ops:
            continue
        end = loop.body.ops[-1]
        if not isinstance(end, ir.Yield):
            continue
        for op in loop.body.ops:
            if not isinstance(op, ir.Load):
                continue
            slots = [j for j, v in enumerate(end.values) if v.id == op.result.id]
            if len(slots) == 1 and uses.get(op.result.id, 0) == 1 and \
                    uses.get(loop.results[slots[0]].id, 0) == 0:
                out[id(op)] = id(loop)
    return out


def _conflict(mine: tuple[np.ndarray, np.ndarray, np.ndarray], theirs: tuple[np.ndarray, np.ndarray, np.ndarray]
              ) -> np.ndarray:
    """Elements where two accesses race: a write (or atomic) against anything
    of the other but two atomics of one kind, a read against a write or an
    atomic. (`a`, `ta`: the kinds of the atomic updates, or-ed bits.)"""
    w, r, kinds = mine
    tw, tr, tkinds = theirs
    a, ta = kinds != 0, tkinds != 0
    # two kinds that meet (unless both updated it with one and the same kind)
    mixed = a & ta & ~((kinds == tkinds) & ((kinds & (kinds - 1)) == 0))
    return (w & (tw | tr | ta)) | (r & (tw | ta)) | (a & (tw | tr)) | mixed


class Sanitizer:
    """One sanitized run: what each launch touched, the launches in flight,
    the warnings so far (see the module docstring)."""

    def __init__(self, on_warning: Callable[[Diagnostic], None] | None = None) -> None:
        self.on_warning = on_warning  # told of each warning as it happens (the Python API)
        self.warnings: list[Diagnostic] = []
        self.inflight: dict[int, Footprint] = {}  # id(handle) -> what its launch touched
        self.last: Footprint | None = None
        self.host_span: Span | None = None  # the host statement running now

    def warn(self, d: Diagnostic) -> None:
        self.warnings.append(d)
        if self.on_warning is not None:
            self.on_warning(d)

    def run_kernel(self, kernel: ir.Kernel, grid: Sequence[int], args: Sequence[Any], *,
                   out: Callable[[str], None] | None = None, launch: Span | None = None) -> None:
        """Run one launch block by block under the recorder; raise at the first
        race or bad access, then check it against the launches in flight."""
        from tilelang.interp.machine import queue_axis, queue_grid, run_kernel

        grid_t = tuple(int(g) for g in grid)
        grid_t = grid_t + (1,) * (kernel.grid_rank - len(grid_t))
        # A tile walk's or queue's tiles each in a block of its own: which block
        # takes a tile is the device's choice (two tiles the interpreter's two
        # blocks a row run in one block may be two blocks on a GPU, at once),
        # and nothing a block carries from one tile to the next is written
        # (E0414), so a block a tile changes no race-free result.
        axis = queue_axis(kernel)
        every = grid_t[axis] if axis is not None and axis < len(grid_t) else 2
        grid_t = queue_grid(kernel, grid_t, every)
        tensors = {p.name: a for p, a in zip(kernel.params, args, strict=False)
                   if isinstance(p, ir.TensorParam)}
        rec = Recorder(kernel, grid_t, tensors, launch, self.warn)
        self.last = None
        run_kernel(kernel, grid_t, args, out=out, mode="block", observer=rec, queue_blocks=every)
        fp = rec.footprint()
        for other in self.inflight.values():
            for key, (arr, *mine) in fp.arrays.items():
                if key not in other.arrays:
                    continue
                bad = _conflict(tuple(mine), tuple(other.arrays[key][1:]))  # type: ignore[arg-type]
                if bad.any():
                    elem = tuple(int(x) for x in np.argwhere(bad)[0])
                    name = next((n for n, t in tensors.items() if t is arr), "tensor")
                    self._inflight_error(
                        f"this launch of `{kernel.name}` touches element {_idx(elem)} of `{name}`, "
                        f"which a launch of `{other.kernel}` not yet waited for also uses",
                        launch, "this launch", other)
        self.last = fp

    def launched(self, handle: Any) -> None:
        if self.last is not None:
            self.inflight[id(handle)] = self.last

    def waited(self, handle: Any) -> None:
        self.inflight.pop(id(handle), None)

    def host_access(self, storage: Any, write: bool) -> None:
        """The host reads (or writes) a whole tensor."""
        for other in self.inflight.values():
            hit = other.arrays.get(id(storage))
            if hit is None:
                continue
            _, w, r, kinds = hit
            a = kinds != 0
            bad = (w | r | a) if write else (w | a)
            if bad.any():
                elem = tuple(int(x) for x in np.argwhere(bad)[0])
                what = "writes" if write else "reads"
                them = "uses" if write else "writes"
                name = other.names.get(id(storage), "tensor")
                self._inflight_error(
                    f"the host {what} the tensor that a launch of `{other.kernel}` not yet "
                    f"waited for {them} as `{name}` (element {_idx(elem)})",
                    self.host_span, f"the host {what} it here", other)

    @staticmethod
    def _inflight_error(msg: str, at: Span | None, label: str, other: Footprint) -> None:
        d = Diagnostic.error(codes.INFLIGHT_RACE, msg)
        if at is not None:
            d = d.primary(at, label)
        if other.span is not None:
            d = d.secondary(other.span, f"`{other.kernel}` was launched here and is still running")
        raise TileError(
            d.note("`.launch()` returns before the kernel finishes; until `.wait()` its memory "
                   "belongs to it")
            .with_help("wait for the earlier launch first")
        )
