"""Shape ops and layout conversions (the emitter's `ShapeOps`).

Broadcasts, reshapes, permutes and `ConvertLayout`: in registers when every
thread already holds what it needs, else through shared memory.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

from tilelang.backend.codegen.views import (
    ChunkedView,
    register_map,
    reshape_register_map,
    thread_register_map,
)
from tilelang.backend.env_switch import flag
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import MmaAcc, MmaTile, WgmmaAcc, replicate_bound
from tilelang.backend.gpu.nodes import regions, walk
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import Span

from .core import (
    Frag,
)
from .mma import MmaOps
from .replicated import gather, is_rep
from .shift_dot import defining_ops


def sibling_reuse() -> bool:
    """`TILEC_SIBLING_CONVERT` (unset or "1": on; "0": every reshape or conversion of a value moves its data
    itself, as before hcliff7)."""
    return flag("TILEC_SIBLING_CONVERT", "1")


def stage_together() -> bool:
    """`TILEC_CONVERT_TOGETHER=1` (opt-in until timed): a conversion through shared memory stages with it the later
    conversions of its region whose sources are computed (`ShapeOps._stage`). Off by default: it changes the PTX
    of the tuned decode kernels (attn_decode_ring_early's 4 configurations in benchmarks/ptx_sha.py)."""

    return flag("TILEC_CONVERT_TOGETHER", "0")


class ShapeOps(MmaOps):
    """Shape ops and layout conversions."""

    def local(self, r: ir.Value, x: ir.Value, align: list[int | None]) -> bool:
        """`r` from `x` without moving data between threads, when their layouts
        allow it (`codegen/views.register_map`); True when done."""
        u = self.uniform(x)
        if u is not None:
            self.env[r.id] = [u] * self.nregs(r)
            return True
        m = register_map(self.lay(x), self.lay(r), align)
        if m is None and replicate_bound():  # the option's: checked thread by thread
            m = thread_register_map(self.lay(x), self.lay(r), align)
        if m is None:
            return self.from_replicated(r, x, align)
        src = self.tile(x)
        self.env[r.id] = [src[i] for i in m]
        return True

    def from_replicated(self, r: ir.Value, x: ir.Value, align: list[int | None] | None) -> bool:
        """`r` read from `x` held whole by every thread (`codegen/replicated.py`):
        registers and selects, whatever `r`'s layout; False when `x` is not
        replicated. `align` None: a reshape (the same row-major index)."""
        if not replicate_bound():
            return False  # off: every kernel as before the option
        xv = self.lay(x)
        if not is_rep(xv) or isinstance(self.layouts.get(r.id), MmaAcc | WgmmaAcc):
            return False
        self.env[r.id] = gather(self, xv, self.tile(x), x.dtype, self.lay(r), align)
        return True

    def broadcast(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        if not x.shape:
            self.env[r.id] = [self.scalar(x)] * self.nregs(r)
            self._uniform.add(r.id)
            return
        lead = len(r.shape) - len(x.shape)
        xr = (1,) * lead + tuple(x.shape)
        align = [None if i < lead or x.shape[i - lead] == 1 else i - lead for i in range(len(r.shape))]
        if self.local(r, x, align):
            return
        (off,) = self.to_smem([x], span)
        vals = []
        for _, oc in self.out_coords(r):
            src = [c if n != 1 else "0" for c, n in zip(oc, xr, strict=False)]
            vals.append(self.smem_load(off, x.dtype, self.linear(src, xr)))
        self.env[r.id] = vals

    def reshape(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        if not x.shape:
            self.env[r.id] = [self.scalar(x)] * self.nregs(r)
            return
        if not r.shape:
            (off,) = self.to_smem([x], span)
            self.env[r.id] = self.smem_load(off, x.dtype, "0")
            return
        xd = [i for i, n in enumerate(x.shape) if n != 1]
        rd = [i for i, n in enumerate(r.shape) if n != 1]
        if [x.shape[i] for i in xd] == [r.shape[i] for i in rd]:
            # only size-1 dims added or dropped: the non-1 dims pair up in order
            align: list[int | None] = [None] * len(r.shape)
            for i, j in zip(rd, xd, strict=True):
                align[i] = j
            if self.local(r, x, align):
                return
        lx, lr = self.lay(x), self.lay(r)
        if x.id in self._aranges and replicate_bound():
            # an arange reshaped: each element is its row-major index, in any layout
            self.env[r.id] = [self.cast(self.flat(lr, k, j), DType.I32, r.dtype) for k in range(lr.K)
                              for j in range(lr.V)]
            return
        if isinstance(lx, ChunkedView) and isinstance(lr, ChunkedView) and lx.V == lr.V and lx.K == lr.K:
            self.env[r.id] = self.tile(x)  # same flat layout: a reshape moves nothing
            return
        m = reshape_register_map(lx, lr)  # dims split or merged in place (layout_assign.reshape_blocked)
        if m is not None:
            src = self.tile(x)
            self.env[r.id] = [src[i] for i in m]
            return
        if self.from_replicated(r, x, None):
            return
        if self.from_sibling(r, x):
            return
        self._stage(r, x, span)

    def permute(self, r: ir.Value, x: ir.Value, perm: tuple[int, ...], span: Span) -> None:
        if list(perm) == list(range(len(perm))):
            # the identity moves nothing only where `r` has `x`'s layout: a
            # loaded tile reduced along its rows (layout_assign's
            # warps_on_last_dim) need not share its permute's default one
            if not x.shape or self.layouts.get(r.id) == self.layouts.get(x.id):
                self.env[r.id] = self.tile(x)
            elif not self.local(r, x, list(range(len(x.shape)))):
                (off,) = self.to_smem([x], span)
                self.env[r.id] = [self.smem_load(off, x.dtype, f) for _, _, f in self.out_slots(r)]
            return
        (off,) = self.to_smem([x], span)
        vals = []
        for _, oc in self.out_coords(r):
            src = ["0"] * len(perm)
            for i, p in enumerate(perm):
                src[p] = oc[i]
            vals.append(self.smem_load(off, x.dtype, self.linear(src, x.shape)))
        self.env[r.id] = vals

    def convert_layout(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        """`r` = `x` in another layout: in registers when every thread already
        holds what it needs (`local`), else through shared memory (every
        thread writes its elements row-major, then reads its new ones)."""
        staged = getattr(self, "_staged", {}).pop(r.id, None)
        if staged is not None:  # read with an earlier conversion's staging (`_stage`)
            self.env[r.id] = staged
            return
        src, dst = self.layouts.get(x.id), self.layouts.get(r.id)
        if isinstance(dst, MmaAcc) and not isinstance(src, MmaAcc):
            self.env[r.id] = self.to_frag(x, span)
        elif isinstance(src, MmaAcc) and not isinstance(dst, MmaAcc):
            op = self.env[x.id]
            assert isinstance(op, Frag)
            self.from_frag(op, r, span)
        elif src == dst or not x.shape:
            self.env[r.id] = self.env[x.id]
        elif not self.local(r, x, list(range(len(x.shape)))):
            y = self._broadcast_of(x) if isinstance(dst, MmaTile) else None
            if y is not None:
                # a broadcast into the sm_80 ring's accumulator layout (a GEMM epilogue's row or column
                # vector): its source alone through shared memory, each slot reading its row or column (the
                # whole broadcast tile staged was M x N words and as many registers a thread at once)
                (off,) = self.to_smem([y], span)
                self.env[r.id] = [self.smem_load(off, x.dtype, self.linear(list(cs), y.shape))  # (size-1 dims: 0)
                                  for _, cs in self.out_coords(r)]
                return
            if self.from_sibling(r, x):
                return
            self._stage(r, x, span)

    def _stage(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        """`r` = `x` (the same elements row-major) through shared memory, with the later layout conversions of
        the same region whose sources are already computed and which would each go through shared memory too:
        one barrier pair for them all, their values kept for when the emitter reaches them (they dominate
        those ops: the same region's op list). tests/user a05 staged `even` and `odd` a window row apart."""
        later = self._later_staged(r, x) if stage_together() else []
        offs = self.to_smem([x] + [x2 for _, x2 in later], span)
        self.env[r.id] = [self.smem_load(offs[0], x.dtype, f) for _, _, f in self.out_slots(r)]
        stash = self.__dict__.setdefault("_staged", {})
        for (r2, x2), off in zip(later, offs[1:], strict=True):
            stash[r2.id] = [self.smem_load(off, x2.dtype, f) for _, _, f in self.out_slots(r2)]

    def _later_staged(self, r: ir.Value, x: ir.Value) -> list[tuple[ir.Value, ir.Value]]:
        """The `ConvertLayout`s after `r`'s op in its region whose sources the emitter holds and which would move
        their data through shared memory (no register map, no replicated or sibling form)."""
        pos = self._region_positions()
        me = defining_ops(self).get(r.id)
        at = pos.get(id(me))
        if at is None:
            return []
        region = self._region_of(at[0])
        out = []
        for o in region.ops[at[1] + 1:]:
            if not isinstance(o, g.ConvertLayout) or not o.x.shape or not isinstance(self.env.get(o.x.id), list):
                continue
            src, dst = self.layouts.get(o.x.id), self.layouts.get(o.result.id)
            if src == dst or any(isinstance(v, MmaAcc | WgmmaAcc | MmaTile) for v in (src, dst)):
                continue
            if o.result.id in getattr(self, "_staged", {}) or self.uniform(o.x) is not None:
                continue
            lx, lr, same = self.lay(o.x), self.lay(o.result), list(range(len(o.x.shape)))
            if register_map(lx, lr, same) is not None or (replicate_bound() and (
                    thread_register_map(lx, lr, same) is not None or is_rep(lx))):
                continue
            if o.x.id == x.id or any(y.id != o.result.id and isinstance(self.env.get(y.id), list)
                                     for y, _ in self._siblings(o.x)):
                continue  # (a sibling may give it: `from_sibling`)
            out.append((o.result, o.x))
        return out

    def _region_of(self, rid: int) -> ir.Region:
        got = getattr(self, "_regions_by_id", None)
        if got is None:
            got = {}

            def visit(region: ir.Region) -> None:
                got[id(region)] = region
                for o in region.ops:
                    for sub in regions(o):
                        visit(sub)

            visit(self.k.body)
            self._regions_by_id = got
        return got[rid]  # type: ignore[no-any-return]

    def from_sibling(self, r: ir.Value, x: ir.Value) -> bool:
        """`r` (a reshape or conversion of `x` that moves data between threads) from a sibling: an earlier
        reshape or conversion of the same `x` in the same region (so its registers dominate this op), the same
        non-1 dims, whose threads hold what `r` needs (`register_map`, thread by thread). tests/user a05 converted
        its `odd` row through shared memory twice a window row, once as the product's [1, 64] operand and once
        as the loop's [64] (two barriers each); the second now reads the first's registers. True when done."""
        if not sibling_reuse():
            return False
        if isinstance(self.layouts.get(r.id), MmaAcc | WgmmaAcc | MmaTile):
            return False
        defs = defining_ops(self)
        me = defs.get(r.id)
        pos = self._region_positions()
        at = pos.get(id(me))
        if at is None:
            return False
        nonone = [n for n in r.shape if n != 1]
        for y, o in self._siblings(x):
            if (y.id == r.id or not isinstance(self.env.get(y.id), list) or [n for n in y.shape if n != 1] != nonone
                    or isinstance(self.layouts.get(y.id), MmaAcc | WgmmaAcc | MmaTile)):
                continue
            there = pos.get(id(o))
            if there is None or there[0] != at[0] or there[1] >= at[1]:
                continue
            yd = [i for i, n in enumerate(y.shape) if n != 1]
            rd = [i for i, n in enumerate(r.shape) if n != 1]
            align: list[int | None] = [None] * len(r.shape)
            for i, j in zip(rd, yd, strict=True):
                align[i] = j
            m = register_map(self.lay(y), self.lay(r), align)
            if m is None:
                m = thread_register_map(self.lay(y), self.lay(r), align)
            if m is None:
                continue
            src = self.tile(y)
            self.env[r.id] = [src[i] for i in m]
            return True
        return False

    def _siblings(self, x: ir.Value) -> list[tuple[ir.Value, object]]:
        """The reshapes and layout conversions of `x` in the kernel (their results, ops)."""
        got = getattr(self, "_sibling_map", None)
        if got is None:
            got = {}
            for o in walk(self.k.body):
                if isinstance(o, ir.Reshape | g.ConvertLayout) and o.x.shape:
                    got.setdefault(o.x.id, []).append((o.result, o))
            self._sibling_map = got
        return got.get(x.id, [])  # type: ignore[no-any-return]

    def _region_positions(self) -> dict[int, tuple[int, int]]:
        """id(op) -> (id of the region whose op list holds it, its index there)."""
        got = getattr(self, "_region_pos", None)
        if got is None:
            got = {}

            def visit(region: ir.Region) -> None:
                for n, o in enumerate(region.ops):
                    got[id(o)] = (id(region), n)
                    for sub in regions(o):
                        visit(sub)

            visit(self.k.body)
            self._region_pos = got
        return got  # type: ignore[no-any-return]

    def _broadcast_of(self, x: ir.Value) -> ir.Value | None:
        """The tile `x` broadcasts (same rank, fewer elements), where `x` is a `Broadcast`'s result."""
        o = defining_ops(self).get(x.id)
        if not isinstance(o, ir.Broadcast) or len(o.x.shape) != len(x.shape):
            return None
        y = o.x
        return y if y.id in self.env and any(n == 1 and m > 1 for n, m in zip(y.shape, x.shape, strict=True)) else None
