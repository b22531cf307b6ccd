"""The order of a block's own accesses to a tensor (the emitter's `Hazards`).

The interpreter runs a tile block's statements in order, so a kernel that
stores its tile and then loads it back (`z.store(t); let u = z.load();`),
stores it twice, or loads it and then stores it, sees its own earlier access
complete. On the GPU each access is split over the block's threads by the
value's layout, and two accesses in different layouts give an element to
different threads: without a CTA barrier between them, one thread may read an
element before the thread that writes it has (a read-after-write race), or
write it before another has read the old value or after another's later write
(write-after-read, write-after-write). The results then differed from the
interpreter's (tests/user/: a column sum of a tile stored and loaded back read
zeros on the simulated GPU).

`Hazards` records, per tensor, the accesses since the last CTA barrier
(`EmitterCore.barrier` clears them) and asks for a barrier before an access
that conflicts with one of them: any two accesses but two loads, unless both
give every element to the same one thread (the same view of the same shape, no
replicas, the same offset values, not a `store_unchecked` or an atomic, whose
element offsets may overlap others'). A kernel that stores its tile once, or
reads and writes it element-wise in one layout, gets no barrier. Loops are
entered with every access of their body pending (the previous iteration's), a
branch leaves the union of its arms' pending accesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.backend.gpu.layouts import Blocked, Chunked, MmaTile, Slice
from tilelang.backend.gpu.nodes import defined_values, walk
from tilelang.ir import nodes as ir

from .views import BlockedView, ChunkedView, MmaTileView


@dataclass(frozen=True, slots=True)
class Access:
    store: bool
    key: tuple[Any, ...] | None  # None: which thread touches which element is not known to match anything
    replicated: bool = False  # several threads hold each element (a load reads it in each; a store, its first)
    offsets: tuple[int, ...] = ()  # the offset values' ids
    atomic: bool = False
    box: tuple[tuple[tuple[int | None, int], int], ...] = ()  # per dim: the offset (base id, constant), the extent


def _exclusive(view: Any) -> bool:
    """Every element of the view is held by exactly one thread."""
    if isinstance(view, ChunkedView | MmaTileView):
        return True
    if isinstance(view, BlockedView):
        return view.drop is None and not any(m.repl for m in view.dims)
    return False


def _linear(em: Any) -> dict[int, tuple[int | None, int]]:
    """Scalar i32 values of the kernel as (base value id, constant): a constant
    (None, c), a sum of a value and a constant (the base's, c + its constant)."""
    got: dict[int, tuple[int | None, int]] | None = getattr(em, "_hazard_linear", None)
    if got is None:
        got = {}
        for op in walk(em.k.body):
            if isinstance(op, ir.Const) and not op.result.shape and isinstance(op.value, int) \
                    and not isinstance(op.value, bool):
                got[op.result.id] = (None, op.value)
            elif isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.ADD and not op.result.shape \
                    and len(op.operands) == 2:
                a, b = op.operands
                for x, y in ((a, b), (b, a)):
                    if got.get(y.id, (0, 0))[0] is None:
                        base, c = got.get(x.id, (x.id, 0))
                        got[op.result.id] = (base, c + got[y.id][1])
                        break
        em._hazard_linear = got
    return got


def _access(em: Any, store: bool, value: ir.Value, offsets: tuple[ir.Value, ...], known: bool = True) -> Access:
    ids = tuple(o.id for o in offsets)
    lin = _linear(em)
    shape = value.shape or (1,) * len(offsets)
    box = tuple((lin.get(o.id, (o.id, 0)), n) for o, n in zip(offsets, shape, strict=False))
    if not known or not value.shape:
        return Access(store, None, offsets=ids, box=box)
    raw = em.layouts.get(value.id)
    if raw is not None and not isinstance(raw, Chunked | Blocked | MmaTile | Slice):
        return Access(store, None, offsets=ids, box=box)  # an accumulator's layout: its own view, not compared here
    view = em.lay(value)
    return Access(store, (view, value.shape, ids), not _exclusive(view), ids, box=box)


def access_of(em: Any, op: ir.Op) -> tuple[str, Access] | None:
    """The tensor `op` reads or writes in global memory, and how."""
    match op:
        case ir.Load(result=r, tensor=t, offsets=offs):
            return t, _access(em, False, r, offs)
        case ir.Store(tensor=t, value=v, offsets=offs, unchecked=u):
            return t, _access(em, True, v, offs, not u)
        case ir.AtomicRMW(tensor=t, indices=idx):
            return t, Access(True, None, offsets=tuple(i.id for i in idx), atomic=True)
    return None


def _disjoint(a: Access, b: Access) -> bool:
    """Some dim where the offsets differ by a constant and the two ranges do not meet."""
    for ((ba, ca), na), ((bb, cb), nb) in zip(a.box, b.box, strict=False):
        if ba == bb and (ca + na <= cb or cb + nb <= ca):
            return True
    return False


def _conflict(earlier: Access, later: Access) -> bool:
    if not earlier.store and not later.store:
        return False
    if earlier.atomic and later.atomic:
        return False  # atomics need no order among themselves
    if _disjoint(earlier, later):
        return False
    if earlier.key is None or earlier.key != later.key:
        return True
    # the same elements in the same threads: a store's value read back by the
    # replicas of its first thread is not their own, and a store by the first
    # replica may land before the other replicas' load of the old value (a
    # race even where the late replicas' values are dead: llsim's racecheck)
    if earlier.store != later.store:
        return later.replicated if earlier.store else earlier.replicated
    return False


class Hazards:
    """Accesses since the last CTA barrier, by tensor."""

    def __init__(self) -> None:
        self.pending: dict[str, set[Access]] = {}

    def clear(self) -> None:
        self.pending = {}

    def needs_barrier(self, tensor: str, a: Access) -> bool:
        return any(_conflict(b, a) for b in self.pending.get(tensor, ()))

    def add(self, tensor: str, a: Access) -> None:
        self.pending.setdefault(tensor, set()).add(a)

    def snapshot(self) -> dict[str, set[Access]]:
        return {t: set(s) for t, s in self.pending.items()}

    def merge(self, other: dict[str, set[Access]]) -> None:
        for t, s in other.items():
            self.pending.setdefault(t, set()).update(s)


def tile_loop(em: Any, op: ir.For | ir.While) -> bool:
    """A loop whose iterations are other tiles' (`for s in queue(axis)`, the
    static walk `for s in tiles(axis)`): its accesses at offsets it computes
    never meet the previous iteration's elements."""
    if isinstance(op, ir.While):
        return any(isinstance(o, ir.QueuePull | ir.QueueTake) for r in (op.cond, op.body) for o in walk(r))
    w = getattr(em.k.source, "walk", -1)
    return w >= 0 and any(isinstance(o, ir.BlockId) and o.axis == w and o.result.id == op.lower.id
                          for o in em.k.body.ops)


def loop_carried(em: Any, op: ir.For | ir.While, regions: tuple[ir.Region, ...]) -> dict[str, set[Access]]:
    """The global accesses of a loop's regions (nested ones too), pending at
    the top of the body as the previous iteration's: all of them, but in a
    tile loop (`tile_loop`) only those at offsets computed before it. An op
    at offsets the loop computes meets itself again at the same tile or a
    disjoint one (another index of one partition), in the same threads; any
    other pair is compared as in straight-line code (a load of the tile the
    previous iteration stored at other offset values gets its barrier)."""
    inside = {v.id for reg in regions for v in defined_values(reg)} if tile_loop(em, op) else set()
    out: dict[str, set[Access]] = {}
    for op in (op for reg in regions for op in walk(reg)):
        got = access_of(em, op)
        if got is not None and not any(i in inside for i in got[1].offsets):
            out.setdefault(got[0], set()).add(got[1])
    return out
