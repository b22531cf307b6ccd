"""`Operation` (a checked kernel call that has not run) and `Handle` (a started
one, `api/handle.py`, re-exported here): starting registers the operation
among the launches in flight (after checking its arrays against theirs),
waiting ends that.

An operation is a `Plan` (`fastpath.py`: what every call with the same
argument kinds shares) plus what belongs to this call only: the arrays'
addresses, their host views, the caller's objects and the numbers. Starting
one goes straight to the device: the CPU interpreter with the caller's
arrays, or on the GPU the device's fast launcher (the packed arguments of
the plan with this call's addresses written in), the library's current
stream, and no allocation or synchronisation, so a launch made while
PyTorch captures a CUDA graph is captured into it.

Invariant: nothing runs unless its borrows were checked against every launch
in flight and it was registered (`engines._PENDING`); the registration is
ended by `Handle.wait()` (also when the start fails).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api import engines
from tilelang.api.arrays import grad_leaf_tensor, grad_leaf_text, interface_now
from tilelang.api.borrowed import freeze as _freeze
from tilelang.api.borrowed import frozen_by as _frozen_by
from tilelang.api.engines import _LOCK, _PENDING, _TOKENS
from tilelang.api.errors import BorrowError, CallError, ExecutionError
from tilelang.api.fastpath import _np_ptr, torch_dtype_name, torch_view
from tilelang.api.handle import Handle
from tilelang.api.temporaries import LOST
from tilelang.diagnostics.codes import api as acodes
from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.model import TileError
from tilelang.ownership.dynamic import Region
from tilelang.profiler import hook
from tilelang.runtime.launch import BoundLaunch, at_launch
from tilelang.runtime.launch import Operation as _RtOperation
from tilelang.runtime.tensor import Partition as _RtPartition
from tilelang.runtime.tensor import Tensor

# `Tensor.data_ptr` of PyTorch, for `map` over a plan's tensors (set once
# PyTorch is imported: only plans with a guard use it, and those need PyTorch)
_DATA_PTR: Any = None


def _data_ptr(t: Any) -> int:
    global _DATA_PTR
    c = sys.modules["torch"]._C
    _DATA_PTR = getattr(c, "TensorBase", None) or c._TensorBase
    _DATA_PTR = _DATA_PTR.data_ptr
    return int(_DATA_PTR(t))


_DATA_PTR = _data_ptr

if TYPE_CHECKING:
    from tilelang.api.fastpath import Plan
    from tilelang.api.protocols import KernelLike


def _at_kernel(plan: Any) -> Any:
    """Where an error about an argument of `plan`'s kernel points: the kernel's declaration."""
    return plan.kernel.module._where(plan.kernel.decl.name.span, f"`{plan.kernel.signature}`")


class Operation:
    """A checked kernel call that has not run. `.sync()` runs it and waits;
    `.launch()` starts it and returns a `Handle`. It may be run again."""

    __slots__ = (
        "__weakref__",
        "_args",
        "_host_list",
        "_objs",
        "_plan",
        "_ptrs",
        "_region_list",
        "_runs",
        "_scalars",
        "_wrapped",
    )

    def __init__(
        self,
        plan: Plan,
        ptrs: list[int],
        objs: list[Any],
        scalars: list[Any],
        hosts: list[Any] | None = None,
    ) -> None:
        self._plan = plan
        self._ptrs = ptrs  # per array slot: its address now
        self._objs = objs  # per array slot: the caller's object (kept alive while in use)
        self._scalars = scalars  # per scalar slot: the checked, converted number
        self._host_list = hosts  # per array slot: a NumPy view (CPU) or None; made when needed
        self._region_list: list[tuple[Region, bool]] | None = None
        self._wrapped: list[Any] | None = None  # device buffers over the arrays, when made
        self._args: list[Any] | None = None  # what the device runs with, in its order
        self._runs = 0

    # -- what it is -------------------------------------------------------------------
    @property
    def kernel(self) -> KernelLike:
        return self._plan.kernel

    @property
    def grid(self) -> tuple[int, ...]:
        return self._plan.bound.grid

    @property
    def generics(self) -> dict[str, Any]:
        return dict(self._plan.bound.instantiation)

    @property
    def _engine(self) -> str:
        return self._plan.engine

    @property
    def _space(self) -> str:
        return self._plan.space

    @property
    def _stream_hint(self) -> int | None:
        return self._plan.stream_hint

    @property
    def _hosts(self) -> list[Any]:
        """Per array slot, a NumPy view of its memory (CPU arrays) or None."""
        hosts = self._host_list
        if hosts is None:
            hosts = self._host_list = [
                o if how == "array" else torch_view(o, p) if how == "torch" else None
                for o, p, how in zip(self._objs, self._ptrs, self._plan.host_views, strict=True)
            ]
        return hosts

    @property
    def _regions(self) -> list[tuple[Region, bool]]:
        regions = self._region_list
        if regions is None:
            regions = self._region_list = [
                (Region(p, s.nbytes, s.name), s.mutable)
                for p, s in zip(self._ptrs, self._plan.arrays, strict=True)
            ]
        return regions

    def __del__(self) -> None:
        # A kernel call only builds the operation, as in Tile; one that is
        # dropped without running is almost always a forgotten `.sync()`.
        if getattr(self, "_runs", 1) == 0:
            with contextlib.suppress(Exception):  # nothing may be raised from a finaliser
                warnings.warn(
                    f"an operation of kernel `{self.kernel.__name__}` was never run: "
                    "call `.sync()` or `.launch()` on it",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def __repr__(self) -> str:
        gen = ", ".join(f"{k}={v}" for k, v in self.generics.items())
        return f"<operation {self.kernel.__name__}[{gen}] grid={list(self.grid)} on {self._engine}>"

    def discard(self) -> None:
        """Drop this operation on purpose (a plan replaced before it ran): no
        "never run" warning when it is collected. It can still be run."""
        self._runs = max(self._runs, 1)

    # -- running ----------------------------------------------------------------------
    def sync(self) -> None:
        """Run the kernel and wait for it (on the GPU: for the stream it ran on).
        While the stream is being captured into a CUDA graph (PyTorch's
        `torch.cuda.graph`), the launch is captured and nothing waits; inside
        `with tilelang.graph()` it is recorded and nothing runs."""
        self._runs += 1  # tried, at least: no "never run" warning
        if LOST and self in LOST:  # its results would be lost (E0313)
            raise LOST[self]
        if engines.RECORDING is not None and engines.RECORDING.record(self):
            return  # recorded into a `tilelang.graph()`: nothing runs now
        fast = self._plan.fast_sync
        if fast is not None and fast(self):
            return
        token, stream, writeback, raw = self._begin()
        # `launch().wait()` without the handle object in between
        self._finish(token, stream, writeback, raw)

    def launch(self) -> Handle:
        """Start the kernel; its arrays stay borrowed until `Handle.wait()`."""
        self._runs += 1  # tried, at least: no "never run" warning
        if LOST and self in LOST:  # its results would be lost (E0313)
            raise LOST[self]
        if engines.RECORDING is not None and engines.RECORDING.record(self):
            handle = Handle(self, 0, None, [])
            handle.done = True  # recorded into a `tilelang.graph()`: nothing to wait for
            return handle
        fast = self._plan.fast_launch
        if fast is not None:
            handle = fast(self)
            if handle is not None:
                return handle  # type: ignore[no-any-return]
        handle = Handle(self, *self._begin())
        if self._plan.np_slots:
            handle._frozen = _freeze(self)
        return handle

    def _begin(self) -> tuple[int, Any, list[tuple[np.ndarray, Tensor]], int | None]:
        """Check, register and start: (token among the launches in flight, the
        stream, host arrays to copy results into, the stream handle's value)."""
        plan = self._plan
        if plan.np_slots:
            self._check_numpy()
        if plan.iface:
            self._check_interfaces()
        if plan.has_torch:  # `_check_memory`, inline
            guard = plan.guard  # when set, every array is a tensor
            objs = self._objs
            if (
                guard is None
                or plan.grad_written  # autograd's mode, read again (E0803)
                or not guard(*objs)  # each tensor's type, dtype, device, shape, strides
                or list(map(_DATA_PTR, objs)) != self._ptrs
            ):
                self._check_memory()  # raises if one has moved or changed shape
        with _LOCK:
            # the call's own arrays were checked against each other (E0303)
            # when it was made; here, against the launches in flight.
            # Registered first, then checked (as the fast paths do, which
            # take no lock): of two launches made at once by two threads,
            # at least one sees the other.
            token = next(_TOKENS)
            _PENDING[token] = self
            if len(_PENDING) > 1:
                try:
                    self._check_in_flight(token)
                except BaseException:
                    _PENDING.pop(token, None)
                    raise
        try:
            launcher = plan.launcher
            if launcher is not None and hook.ACTIVE is None:
                # the GPU's fast path of `_start`, inline: the stream the caller's
                # library has current now, the fast launcher, nothing else
                raw = plan.stream_of()
                if raw == plan.stream_handle:
                    stream = plan.stream
                else:
                    gpu: Any = plan.runtime.device  # a CudaDevice: it has a launcher
                    stream = plan.stream = gpu.foreign_stream(raw)
                    plan.stream_handle = raw
                args = self._args
                if args is None:
                    args = self._args = self._kernel_args(self._ptrs)
                try:
                    launched = launcher(args, stream, raw)
                except TileError as e:
                    raise ExecutionError.from_tile_error(
                        at_launch(e, plan.kernel.decl.name.span), plan.kernel.module._sources
                    ) from None
                if launched:
                    plan.runtime.launches += 1
                    writeback: list[tuple[np.ndarray, Tensor]] = []
                    if not plan.native_wait:
                        raw = None  # the wait goes through the binding, like the launch
                    elif plan.fast_launch is None:
                        _make_fast(plan)  # once the native launcher is loaded
                else:
                    stream, writeback, raw = self._start()
            else:
                stream, writeback, raw = self._start()
        except BaseException:
            _PENDING.pop(token, None)
            raise
        if plan.bump is not None:  # `_bump_torch_versions`, inline
            objs = self._objs
            written = plan.torch_written
            try:  # noqa: SIM105 - a try costs less than `contextlib.suppress` per launch
                plan.bump(
                    (objs[written[0]],)
                    if len(written) == 1
                    else tuple([objs[i] for i in written])
                )
            except Exception:  # autograd bookkeeping must never fail a launch
                pass
        return token, stream, writeback, raw

    def _finish(
        self,
        token: int,
        stream: Any,
        writeback: list[tuple[np.ndarray, Tensor]],
        raw: int | None,
    ) -> None:
        """Wait for a start of this operation (`_begin`), copy results back
        where the engine needed copies, and end its registration."""
        plan = self._plan
        try:
            if plan.engine != "cpu":
                dev: Any = plan.runtime.device
                if plan.space == "cpu":
                    dev.ctx.make_current()
                    dev.sync(stream)
                elif plan.wait_foreign is not None:
                    plan.wait_foreign(stream, raw)
                elif not _capturing(dev, stream):
                    # a stream names its context: no need to make it current
                    dev.sync_foreign(stream)
            for host, t in writeback:
                host[...] = t.numpy()
        except TileError as e:
            raise ExecutionError.from_tile_error(e, plan.kernel.module._sources, plan.kernel.decl) from None
        finally:
            # (one dict operation, atomic under the GIL; `_check_in_flight`
            # iterates over a copy, so it may run meanwhile)
            _PENDING.pop(token, None)

    def _check_in_flight(self, token: int = 0) -> None:
        """E0305/E0309: no array of this operation overlaps memory that a
        launch in flight in its address space writes, nor memory it reads
        where this one writes (interval tests on the addresses); the error
        names the argument, the pending launch and its parameter. `token`:
        this launch's own registration, not checked against. The caller
        holds `_LOCK`."""
        plan = self._plan
        space = plan.space
        mine = [
            (p, p + s.nbytes, s.mutable)
            for p, s in zip(self._ptrs, plan.arrays, strict=True)
            if s.nbytes
        ]
        for key, other in list(_PENDING.items()):
            if key == token:
                continue
            oplan = other._plan
            if oplan.space != space:
                continue
            for op_, s in zip(other._ptrs, oplan.arrays, strict=True):
                end = op_ + s.nbytes
                for start, stop, mut in mine:
                    if (mut or s.mutable) and start < end and op_ < stop and s.nbytes:
                        self._explain_conflict(other)

    def _explain_conflict(self, other: Operation) -> None:
        """The verdict against pending operation `other`, worded for Python:
        which argument, which pending launch, and as which of its parameters."""
        name = self.kernel.__name__
        for new, new_mut in self._regions:
            for old, old_mut in other._regions:
                if not ((new_mut or old_mut) and new.overlaps(old)):
                    continue
                pending = f"{getattr(other, 'pending_what', 'a pending launch of')} `{other.kernel.__name__}`"
                if new_mut and old_mut:
                    code = ocodes.CONCURRENT_WRITES
                    msg = (
                        f"argument `{new.name}` of kernel `{name}` writes memory that {pending} "
                        f"also writes (as `{old.name}`): two launches in flight would race"
                    )
                else:
                    code = ocodes.USE_WHILE_IN_FLIGHT
                    msg = (
                        f"argument `{new.name}` of kernel `{name}` "
                        f"{'writes' if new_mut else 'reads'} memory that {pending} may still "
                        f"be {'writing' if old_mut else 'reading'} (as `{old.name}`)"
                    )
                raise BorrowError(
                    msg,
                    code=code,
                    where=self.kernel.module._where(
                        self.kernel.decl.name.span, f"`{self.kernel.signature}`"
                    ),
                    help=getattr(other, "pending_help", "call `.wait()` on the pending launch's handle first"),
                )
        raise BorrowError(  # the interval tests above found an overlap: never reached
            f"kernel `{name}` uses memory that a pending launch of "
            f"`{other.kernel.__name__}` writes, or writes memory it reads",
            code=ocodes.USE_WHILE_IN_FLIGHT,
            help="call `.wait()` on the pending launch's handle first",
        )

    def _kernel_args(self, arrays: list[Any]) -> list[Any]:
        """`arrays` (one per array slot) and the numbers, in the order of the
        lowered kernel's parameters (the order `Device.run` takes)."""
        if self._plan.direct_args:
            return arrays
        scalars = self._scalars
        return [arrays[i] if is_array else scalars[i] for is_array, i in self._plan.order]

    def _check_memory(self) -> None:
        """PyTorch can give a tensor object other memory (`set_`, `resize_`);
        an operation built before that must not run on the old memory."""
        plan = self._plan
        objs = self._objs
        ptrs = self._ptrs
        for i, shape in plan.torch_slots:
            o = objs[i]
            s = plan.arrays[i]
            # (strides too: `as_strided_` or `set_` with the same address and
            # shape would have the kernel read and write other bytes; and the
            # element type: `t.data = t.view(torch.int32)` keeps both)
            if (
                o.data_ptr() != ptrs[i]
                or o.shape != shape
                or not o.is_contiguous()
                or str(o.dtype) != torch_dtype_name(s)
            ):
                raise CallError(
                    f"argument `{s.name}` of kernel `{plan.kernel.__name__}` has other memory, "
                    "another shape, layout or element type than when the operation was built "
                    f"(`set_`, `resize_`, `as_strided_`, `.data =`; now {o.dtype} "
                    f"{tuple(o.shape)}, then {torch_dtype_name(s)} {tuple(shape)})",
                    where=_at_kernel(plan),
                    help="call the kernel again to build an operation on the tensor as it is now",
                    code=acodes.ARRAY_CHANGED,
                )
            if s.mutable and grad_leaf_tensor(o):  # `requires_grad_()` since, built in `no_grad()`
                what = f"argument `{s.name}` of kernel `{plan.kernel.__name__}`"
                message, fix = grad_leaf_text(what, s.name, "the kernel writes it", o)
                raise CallError(
                    message, where=_at_kernel(plan), help=fix, code=acodes.READ_ONLY_ARRAY
                )

    def _check_numpy(self) -> None:
        """A NumPy array can be given other memory, another shape or another
        element type in place (`a.resize(.., refcheck=False)`, `a.shape = ..`,
        `a.dtype = ..`), or be made read-only; an operation built before must
        not run on it then (it would read or write memory the array no longer
        owns, or fail inside the interpreter)."""
        plan = self._plan
        objs = self._objs
        ptrs = self._ptrs
        for i in plan.np_slots:
            o = objs[i]
            s = plan.arrays[i]
            if (
                o.shape != s.shape
                or o.dtype != s.np_dtype
                or not o.flags.c_contiguous
                or _np_ptr(o) != ptrs[i]
            ):
                raise CallError(
                    f"argument `{s.name}` of kernel `{plan.kernel.__name__}` has other memory, "
                    "another shape or another element type than when the operation was built "
                    f"(now {o.dtype} {tuple(o.shape)}, then {s.np_dtype} {s.shape})",
                    where=_at_kernel(plan),
                    help="call the kernel again to build an operation on the array as it is now",
                    code=acodes.ARRAY_CHANGED,
                )
            if s.mutable and not o.flags.writeable and not _frozen_by(o):
                # (one a launch in flight froze is the in-flight error, next)
                raise CallError(
                    f"argument `{s.name}` of kernel `{plan.kernel.__name__}` was made read-only "
                    "after the operation was built, but the kernel writes it",
                    where=_at_kernel(plan),
                    help=f"make it writeable again (`{s.name}.flags.writeable = True`) or pass "
                    "a writeable copy to a new call",
                    code=acodes.READ_ONLY_ARRAY,
                )

    def _check_interfaces(self) -> None:
        """An array of another library is kept alive by the operation, but
        its memory may not be: an object whose `__array_interface__` or
        `__cuda_array_interface__` (or DLPack export) now names other memory
        or another shape (its buffer replaced, the old one freed or kept
        alive by the export the operation holds) is refused (E0810)."""
        plan = self._plan
        for i, attr in plan.iface:
            s = plan.arrays[i]
            ptr, shape, same = interface_now(self._objs[i], attr, s.np_dtype, s.mutable)
            if ptr != self._ptrs[i] or shape != s.shape or not same:
                raise CallError(
                    f"argument `{s.name}` of kernel `{plan.kernel.__name__}` has other memory, "
                    "another shape, element type or layout than when the operation was built "
                    f"(its {'DLPack export' if attr == '__dlpack__' else f'`{attr}`'} changed)",
                    where=_at_kernel(plan),
                    help="call the kernel again to build an operation on the array as it is now",
                    code=acodes.ARRAY_CHANGED,
                )

    def _start(
        self, capture: Any = None
    ) -> tuple[Any, list[tuple[np.ndarray, Tensor]], int | None]:
        """Enqueue the kernel; (the stream to wait for, host arrays to copy
        results into, the stream handle's value when known).
        `capture`: a stream of the device being captured into a graph, to use
        instead of the library's current stream."""
        plan = self._plan
        if plan.copies:
            return (*self._start_with_copies(), None)
        dev: Any = plan.runtime.device
        prof = hook.ACTIVE
        try:
            args = self._args
            if plan.engine == "cpu":
                if args is None:
                    args = self._args = self._kernel_args(self._hosts)
                token = prof.begin(dev, None) if prof is not None else None
                dev.run(plan.prepared, plan.bound.grid, args, None, plan.kernel.decl.name.span)
                if prof is not None:
                    self._profiled(prof, token, dev, None)
                plan.runtime.launches += 1
                return None, [], None
            if args is None:
                args = self._args = self._kernel_args(self._ptrs)
            # The stream the caller's library has current when the operation
            # starts (not when it was built), as a Tile launch would.
            raw: int | None = None
            if capture is None:
                raw = plan.stream_of()
                if raw == plan.stream_handle:
                    stream = plan.stream
                else:
                    stream = plan.stream = dev.foreign_stream(raw)
                    plan.stream_handle = raw
            else:
                stream = capture
            launcher = plan.launcher
            if prof is None:
                # The fast launcher makes the context current only when the driver
                # says it is not (another library may have switched it); the
                # general path makes it current first.
                if launcher is None or not launcher(args, stream, raw):
                    dev.ctx.make_current()
                    self._run_wrapped(dev, stream)
            else:
                # the stream held from the start event to the end event when the
                # fast launcher comes next (it never waits for the stream)
                token = prof.begin(dev, stream, hold=launcher is not None and capture is None)
                try:
                    if launcher is None or not launcher(args, stream, raw):
                        prof.open(token, dev)  # the general path may wait for the stream
                        dev.ctx.make_current()
                        self._run_wrapped(dev, stream)
                    self._profiled(prof, token, dev, stream)
                finally:
                    prof.open(token, dev)
            plan.runtime.launches += 1
            return stream, [], raw
        except TileError as e:
            raise ExecutionError.from_tile_error(
                at_launch(e, plan.kernel.decl.name.span), plan.kernel.module._sources
            ) from None

    def _profiled(self, prof: Any, token: Any, dev: Any, stream: Any) -> None:
        plan = self._plan
        prof.end(
            token,
            dev,
            stream,
            plan.kir,
            plan.bound.grid,
            {s.name: s.shape for s in plan.arrays},
            {s.name: s.nbytes for s in plan.arrays},
            {sc.spec.name: v for sc, v in zip(plan.scalars, self._scalars, strict=True)},
            plan.engine,
        )

    def _run_wrapped(self, dev: Any, stream: Any) -> None:
        """The device's general launch, over buffers wrapping the caller's
        memory; the first one also asks the device for a fast launcher."""
        plan = self._plan
        buffers = self._wrapped
        if buffers is None:
            buffers = []
            for ptr, s in zip(self._ptrs, plan.arrays, strict=True):
                if s.bf16_memory:
                    buffers.append(dev.wrap_external(ptr, s.shape, s.np_dtype, s.nbytes, bf16=True))
                else:
                    buffers.append(dev.wrap_external(ptr, s.shape, s.np_dtype, s.nbytes))
            self._wrapped = buffers
        args = self._kernel_args(buffers)
        span = plan.kernel.decl.name.span
        dev.run(plan.prepared, plan.bound.grid, args, stream, span)
        if not plan.launcher_tried:
            plan.launcher_tried = True
            make = getattr(dev, "fast_launcher", None)
            if make is not None:
                plan.launcher = make(plan.prepared, plan.bound.grid, args, span)
            plan.wait_foreign = getattr(dev, "wait_foreign", None)
            plan.native_wait = getattr(plan.launcher, "_native", None) is not None

    def _current_stream(self) -> int:
        """The raw handle of the stream the arrays' library has current now."""
        return int(self._plan.stream_of())

    def _start_with_copies(self) -> tuple[Any, list[tuple[np.ndarray, Tensor]]]:
        """Host arrays on a GPU module (uploaded now, `&mut` ones copied back
        at the wait), and bf16 arrays on the CPU (the interpreter relies on
        bf16-rounded storage, and the caller's float32 values may not be)."""
        plan = self._plan
        rt = plan.runtime
        dev: Any = rt.device
        on_gpu = plan.engine != "cpu"
        if on_gpu:
            dev.ctx.make_current()
        writeback: list[tuple[np.ndarray, Tensor]] = []
        by_param: dict[int, Any] = {}
        cpu = engines._device("cpu")
        for host, s in zip(self._hosts, plan.arrays, strict=True):
            if on_gpu or s.dtype.value == "bf16":
                t = Tensor.from_numpy(host, s.dtype, dev)  # uploaded now: the values of this run
                if s.mutable:
                    writeback.append((host, t))
            else:
                t = Tensor(s.dtype, s.shape, host, cpu)
            by_param[s.param] = _RtPartition(t, s.tile) if s.tile is not None else t
        for value, sc in zip(self._scalars, plan.scalars, strict=True):
            by_param[sc.param] = value
        args = [by_param[i] for i in range(len(plan.kernel.specs))]
        decl = plan.kernel.decl
        op = _RtOperation(
            decl,
            plan.kernel.key,
            BoundLaunch(plan.bound.instantiation, plan.bound.grid, args),
            decl.name.span,
            rt,
        )
        stream = dev.new_stream() if on_gpu else None
        try:
            rt.execute(op, stream=stream)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, plan.kernel.module._sources) from None
        return stream, writeback

    def _bump_torch_versions(self) -> None:
        """A kernel writes `&mut` PyTorch tensors behind autograd's back; bumping
        their version counters lets autograd refuse a backward pass that would
        read values the kernel overwrote, as it does for PyTorch's own in-place ops."""
        plan = self._plan
        if plan.bump is None:
            return
        objs = self._objs
        try:
            plan.bump(tuple([objs[i] for i in plan.torch_written]))  # a tuple: a lone tensor is iterated
        except Exception:  # autograd bookkeeping must never fail a launch
            pass


def _make_fast(plan: Plan) -> None:
    """Give `plan` its one-function `.launch()` and `.sync()` (`plan.fast_launch`,
    `plan.fast_sync`), once its launcher runs through the native launcher.

    They make the same checks as `Operation._begin` in the same order, with
    everything that is fixed per plan bound once: the tensors' memory (PyTorch's
    `TensorGuards` and the addresses), the caller's current stream, the
    registration among the launches in flight, then the native launch. Where
    anything is unusual they return None/False before anything ran, and the
    general path runs (and words any error): a profiler is active, a tensor
    changed, another launch is in flight (the in-flight check by address
    ranges is the general path's), the driver refused the launch. A plan
    with arrays of other libraries (`plan.iface`: an array interface or a
    DLPack export, read again at each start) gets none.

    Registration without the lock: the launch registers first and proceeds
    only if it is then the one launch in flight (`len(_PENDING) == 1`); the
    general path also registers before it checks, so of two launches made at
    once by two threads at least one sees the other."""
    if plan.fast_tried:
        return
    native = sys.modules.get("tilelang.runtime.cuda_native")
    nat = native._STATE["module"] if native is not None else None
    if nat is None:
        return  # not loaded yet: tried again at a later launch
    plan.fast_tried = True
    fp = _native_memo(plan, nat)
    launcher = plan.launcher
    fixed = getattr(launcher, "_native_own", None)
    if (
        fixed is None
        or not plan.native_wait
        or plan.copies
        or plan.wait_foreign is None
        or plan.engine == "cpu"
        or (plan.has_torch and plan.guard is None)
        or plan.iface  # arrays of other libraries: `_begin` reads their interface again
        or plan.grad_written  # autograd's mode, read at each start (`_check_memory`)
    ):
        return
    import functools

    direct = launcher._direct and plan.direct_args  # arguments = addresses, in order
    written = plan.torch_written
    bump = "none" if plan.bump is None else "one" if len(written) == 1 else "many"
    guarded = plan.has_torch
    dev = launcher.device
    wait = plan.wait_foreign
    sources = plan.kernel.module._sources
    pending = _PENDING

    def end(token: int, stream: Any, raw: int | None) -> None:
        """`Handle.wait()` of a launch of the one function."""
        try:
            wait(stream, raw)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, sources, plan.kernel.decl) from None
        finally:
            pending.pop(token, None)

    if fp is not None and guarded:
        # block element k holds argument `_ptr_args[k]` of the kernel's order
        order = plan.order if not plan.direct_args else tuple((True, i) for i in range(len(plan.arrays)))
        try:
            bmap = tuple(order[j][1] for j in launcher._ptr_args if order[j][0])
            numbers = tuple(
                (cell, code, order[j][1])
                for cell, code, j in launcher._native_own_scalars
                if not order[j][0]
            )
            if len(bmap) != len(launcher._ptr_args) or len(numbers) != len(
                launcher._native_own_scalars
            ):
                raise ValueError("the kernel's arguments are not the plan's arrays and numbers")
            fp.set_launch(
                vars(hook), plan.stream_of, dev.foreign_stream, pending, _TOKENS, dev,
                plan.runtime, plan.bump, written, end, fixed, bmap, True, numbers,
            )  # fmt: skip
        except (ValueError, TypeError, IndexError):
            pass  # the generated Python below
        else:
            plan.fast_launch, plan.fast_sync = fp.launch, fp.sync
            return
    shape = (direct, bump, guarded, len(plan.arrays))
    make = _FAST_MAKERS.get(shape)
    if make is None:
        make = _FAST_MAKERS[shape] = _fast_maker(*shape)
    common = {
        "hook": hook,
        "guard": plan.guard,
        "dptr": _data_ptr_method() if guarded else None,
        "stream_of": plan.stream_of,
        "foreign_stream": dev.foreign_stream,
        "last": [(None, None)],  # (raw handle, its stream object): one read, never torn
        "pending": pending,
        "tokens": _TOKENS,
        "go": functools.partial(nat.launch, *fixed),  # its own parameter block (`FastLaunch`)
        "launcher": launcher,
        "dev": dev,
        "rt": plan.runtime,
        "bump": plan.bump,
        "w0": written[0] if written else 0,
        "written": written,
        "wait": wait,
        "end": end,
        "sources": sources,
        "Handle": Handle,
        "TileError": TileError,
        "ExecutionError": ExecutionError,
        "kernel": plan.kernel.decl,  # (names a kernel fault its wait meets)
    }
    plan.fast_launch, plan.fast_sync = make(**common)


def _native_memo(plan: Plan, nat: Any) -> Any:
    """The native launcher's `FastPlan` of `plan` with its memo set, which
    then replaces the generated Python memo (`fastpath.memo_for`) of the plan
    and of its kernel; None where the extension cannot take the plan (no
    guard: not every array is a PyTorch tensor; an extension without it)."""
    spec = plan.memo_spec
    cls = getattr(nat, "FastPlan", None)
    if spec is None or plan.guard is None or plan.memo is None or cls is None:
        return None
    from tilelang.api.partition import Partition

    kinds, consts, sizes, pairs, finish = spec
    try:
        fp = cls(Operation, Handle, Partition, plan, plan.guard, _data_ptr_method())
        fp.set_memo(kinds, consts, sizes, pairs, plan.stats, finish)
    except (ValueError, TypeError, AttributeError):
        return None
    kernel = plan.kernel
    if kernel._memo is plan.memo:
        kernel._memo = fp.memo
    plan.memo = fp.memo
    _install_methods(nat, type(kernel))
    return fp


# The Python `Kernel.__call__`, `Operation.launch` and the two finalisers,
# kept when the native launcher's C methods take their place (`_install_methods`).
_PY_METHODS: dict[str, Any] = {}


def _install_methods(nat: Any, kernel_type: type) -> None:
    """Make `Kernel.__call__`, `Operation.launch` and the finalisers of
    `Operation` and `Handle` the native launcher's C methods (once per loaded
    extension): a call whose kernel's memo is a `FastPlan`'s, and a launch
    whose plan's is, are then one C call with no Python frame, and an
    operation that ran or a handle that was waited for goes away without
    one; everything else calls the Python method they replace (kept in
    `_PY_METHODS`), which does all of its work."""
    install = getattr(nat, "install_methods", None)
    if install is None or _PY_METHODS.get("nat") is nat:
        return
    if not _PY_METHODS:
        _PY_METHODS["call"] = kernel_type.__dict__["__call__"]
        _PY_METHODS["launch"] = Operation.__dict__["launch"]
        _PY_METHODS["op_del"] = Operation.__dict__["__del__"]
        _PY_METHODS["handle_del"] = Handle.__dict__["__del__"]
    py = _PY_METHODS
    try:
        call, launch, op_del, handle_del = install(
            kernel_type, py["call"], Operation, py["launch"], vars(engines),
            py["op_del"], Handle, py["handle_del"],
        )  # fmt: skip
    except (TypeError, ValueError):
        return
    kernel_type.__call__ = call  # type: ignore[method-assign]
    Operation.launch = launch  # type: ignore[method-assign]
    Operation.__del__ = op_del  # type: ignore[method-assign]
    Handle.__del__ = handle_del  # type: ignore[method-assign]
    _PY_METHODS["nat"] = nat


def _data_ptr_method() -> Any:
    c = sys.modules["torch"]._C
    return (getattr(c, "TensorBase", None) or c._TensorBase).data_ptr


# The one-function launch, written out once per (direct addresses, kind of
# version bump, PyTorch memory check) so that each is straight-line code over
# locals; nothing of a program or a caller's value reaches the source.
_FAST_MAKERS: dict[tuple[bool, str, bool, int], Any] = {}

_FAST_TEMPLATE = """def make(hook, guard, dptr, stream_of, foreign_stream, last, pending, tokens, go, launcher,
         dev, rt, bump, w0, written, wait, end, sources, Handle, TileError, ExecutionError, kernel):
    def fast_launch(op):
{BODY}
        return Handle(op, token, pair[1], (), raw, end)

    def fast_sync(op):
{BODY}
        try:
            wait(pair[1], raw)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, sources, kernel) from None
        finally:
            pending.pop(token, None)
        return True

    return fast_launch, fast_sync
"""


def _fast_maker(direct: bool, bump: str, guarded: bool, n: int) -> Any:
    body = [
        "if hook.ACTIVE is not None:",
        "    return FAIL",
        "objs = op._objs",
        "ptrs = op._ptrs",
    ]
    if guarded:  # moved or reshaped: the general path's `_check_memory` words it
        names = [f"a{i}" for i in range(n)]
        moved = " or ".join(f"dptr(a{i}) != ptrs[{i}]" for i in range(n))
        body += [
            f"{', '.join(names)}, = objs",
            f"if not guard({', '.join(names)}) or {moved}:",
            "    return FAIL",
        ]
    body += [
        "raw = stream_of()",
        "pair = last[0]",
        "if pair[0] != raw:",
        "    pair = last[0] = (raw, foreign_stream(raw))",
        "token = next(tokens)",
        "pending[token] = op",
        "if len(pending) != 1:  # others in flight: the general path checks against them",
        "    pending.pop(token, None)",
        "    return FAIL",
        "try:",
    ]
    if direct:
        body += ["    ok = go(raw, *ptrs) == 0", "    if ok:", "        dev.launches += 1"]
    else:
        body += [
            "    args = op._args",
            "    if args is None:",
            "        args = op._args = op._kernel_args(ptrs)",
            "    ok = launcher(args, pair[1], raw)",
        ]
    body += [
        "except BaseException:",
        "    pending.pop(token, None)",
        "    raise",
        "if not ok:  # nothing was launched: the general path retries and reports",
        "    pending.pop(token, None)",
        "    return FAIL",
        "rt.launches += 1",
    ]
    if bump != "none":  # autograd bookkeeping must never fail a launch
        arg = "(objs[w0],)" if bump == "one" else "tuple([objs[i] for i in written])"
        body += ["try:", f"    bump({arg})", "except Exception:", "    pass"]
    text = _FAST_TEMPLATE
    for name, fail in (("fast_launch", "None"), ("fast_sync", "False")):
        block = "\n".join("        " + line.replace("FAIL", fail) for line in body)
        text = text.replace("{BODY}", block, 1)
        del name
    namespace: dict[str, Any] = {}
    exec(compile(text, f"<tile fast launch {direct} {bump} {guarded} {n}>", "exec"), namespace)
    return namespace["make"]


def _capturing(dev: Any, stream: Any) -> bool:
    """Whether `stream` is being captured into a CUDA graph (by PyTorch's
    `torch.cuda.graph`, say): then waiting for it is illegal, and the launch
    was recorded rather than run, so there is nothing to wait for."""
    check = getattr(dev, "is_capturing", None)
    return bool(check is not None and check(stream))
