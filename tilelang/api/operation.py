"""`Operation` (a checked kernel call that has not run) and `Handle` (a started
one): starting takes the arrays' borrows in the process's `BorrowTracker`,
waiting ends them.

An operation is a `Plan` (`fastpath.py`: what every call with the same
argument kinds shares) plus what belongs to this call only: the arrays'
addresses, their host views, the caller's objects and the numbers. Starting
one goes straight to the device: the CPU interpreter with the caller's
arrays, or on the GPU the device's fast launcher (the packed arguments of
the plan with this call's addresses written in), the library's current
stream, and no allocation or synchronisation, so a launch made while
PyTorch captures a CUDA graph is captured into it.

Invariant: nothing runs unless the borrows were taken; a borrow taken is
ended by `Handle.wait()` (also when the start fails).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api import engines
from tilelang.api.engines import _LOCK, _PENDING
from tilelang.api.errors import BorrowError, CallError, ExecutionError
from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.model import TileError
from tilelang.ownership.dynamic import BorrowTracker, Region
from tilelang.profiler import hook
from tilelang.runtime.launch import BoundLaunch, at_launch
from tilelang.runtime.launch import Operation as _RtOperation
from tilelang.runtime.tensor import Partition as _RtPartition
from tilelang.runtime.tensor import Tensor

if TYPE_CHECKING:
    from tilelang.api.fastpath import Plan
    from tilelang.api.protocols import KernelLike


class Operation:
    """A checked kernel call that has not run. `.sync()` runs it and waits;
    `.launch()` starts it and returns a `Handle`. It may be run again."""

    __slots__ = (
        "__weakref__",
        "_args",
        "_borrows",
        "_hosts",
        "_objs",
        "_plan",
        "_ptrs",
        "_region_list",
        "_runs",
        "_scalars",
        "_stream_hint",
        "_wrapped",
    )

    def __init__(
        self,
        plan: Plan,
        ptrs: list[int],
        hosts: list[Any],
        objs: list[Any],
        scalars: list[Any],
        stream_hint: int | None = None,
    ) -> None:
        self._plan = plan
        self._ptrs = ptrs
        self._hosts = hosts
        self._objs = objs
        self._scalars = scalars
        self._stream_hint = stream_hint
        self._region_list: list[tuple[Region, bool]] | None = None
        self._wrapped: list[Any] | None = None  # device buffers over the arrays, when made
        self._borrows: tuple[tuple[Region, ...], tuple[Region, ...]] | None = None  # (writes, reads)
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

    # -- running ----------------------------------------------------------------------
    def sync(self) -> None:
        """Run the kernel and wait for it (on the GPU: for the stream it ran on).
        While the stream is being captured into a CUDA graph (PyTorch's
        `torch.cuda.graph`), the launch is captured and nothing waits; inside
        `with tilelang.graph()` it is recorded and nothing runs."""
        self.launch().wait()

    def launch(self) -> Handle:
        """Start the kernel; its arrays stay borrowed until `Handle.wait()`."""
        self._runs += 1  # tried, at least: no "never run" warning
        if engines.RECORDING is not None and engines.RECORDING.record(self):
            handle = Handle(self, 0, self._plan.tracker, None, [])
            handle.done = True  # recorded into a `tilelang.graph()`: nothing to wait for
            handle._keep = []
            return handle
        plan = self._plan
        if plan.has_torch:
            self._check_memory()
        tracker = plan.tracker
        borrows = self._borrows
        if borrows is None:
            regions = self._regions
            borrows = self._borrows = (
                tuple(r for r, m in regions if m),
                tuple(r for r, m in regions if not m),
            )
        with _LOCK:
            if tracker.inflight:
                self._explain_conflict()
            try:
                # the call's own arrays were checked against each other (E0303)
                # when it was made; `start` checks the launches in flight
                token = tracker.start(plan.kernel.__name__, *borrows)
            except TileError as e:
                raise BorrowError.from_tile_error(e, plan.kernel.module._sources) from None
            _PENDING[(plan.space, token)] = self
        try:
            stream, writeback = self._start()
        except BaseException:
            with _LOCK:
                tracker.wait(token)
                _PENDING.pop((plan.space, token), None)
            raise
        if plan.torch_mut:
            self._bump_torch_versions()
        return Handle(self, token, tracker, stream, writeback)

    def _explain_conflict(self) -> None:
        """The tracker's verdict, worded for Python: which argument, which
        pending launch, and as which of its parameters."""
        name = self.kernel.__name__
        for (space, _), other in _PENDING.items():
            if space != self._space:
                continue
            for new, new_mut in self._regions:
                for old, old_mut in other._regions:
                    if not ((new_mut or old_mut) and new.overlaps(old)):
                        continue
                    pending = f"a pending launch of `{other.kernel.__name__}`"
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
                        help="call `.wait()` on the pending launch's handle first",
                    )

    def _kernel_args(self, arrays: list[Any]) -> list[Any]:
        """`arrays` (one per array slot) and the numbers, in the order of the
        lowered kernel's parameters (the order `Device.run` takes)."""
        scalars = self._scalars
        return [arrays[i] if is_array else scalars[i] for is_array, i in self._plan.order]

    def _check_memory(self) -> None:
        """PyTorch can give a tensor object other memory (`set_`, `resize_`);
        an operation built before that must not run on the old memory."""
        plan = self._plan
        if not plan.has_torch:
            return
        for o, ptr, s in zip(self._objs, self._ptrs, plan.arrays, strict=True):
            if s.library == "torch" and (o.data_ptr() != ptr or o.shape != s.shape):
                raise CallError(
                    f"argument `{s.name}` of kernel `{plan.kernel.__name__}` has other memory "
                    "or another shape than when the operation was built (`set_`, `resize_`)",
                    where=plan.kernel.module._where(
                        plan.kernel.decl.name.span, f"`{plan.kernel.signature}`"
                    ),
                    help="call the kernel again to build an operation on the tensor as it is now",
                )

    def _start(self, capture: Any = None) -> tuple[Any, list[tuple[np.ndarray, Tensor]]]:
        """Enqueue the kernel; (the stream to wait for, host arrays to copy results into).
        `capture`: a stream of the device being captured into a graph, to use
        instead of the library's current stream."""
        plan = self._plan
        if plan.copies:
            return self._start_with_copies()
        dev: Any = plan.runtime.device
        span = plan.kernel.decl.name.span
        prof = hook.ACTIVE
        try:
            args = self._args
            if args is None:
                args = self._args = self._kernel_args(self._hosts if plan.engine == "cpu" else self._ptrs)
            if plan.engine == "cpu":
                token = prof.begin(dev, None) if prof is not None else None
                dev.run(plan.prepared, plan.bound.grid, args, None, span)
                if prof is not None:
                    self._profiled(prof, token, dev, None)
                plan.runtime.launches += 1
                return None, []
            # The stream the caller's library has current when the operation
            # starts (not when it was built), as a Tile launch would.
            stream = dev.foreign_stream(self._current_stream()) if capture is None else capture
            launcher = plan.launcher
            token = prof.begin(dev, stream) if prof is not None else None
            # The fast launcher makes the context current only when the driver
            # says it is not (another library may have switched it); the
            # general path makes it current first.
            if launcher is None or not launcher(args, stream):
                dev.ctx.make_current()
                self._run_wrapped(dev, stream)
            if prof is not None:
                self._profiled(prof, token, dev, stream)
            plan.runtime.launches += 1
            return stream, []
        except TileError as e:
            raise ExecutionError.from_tile_error(
                at_launch(e, span), plan.kernel.module._sources
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

    def _current_stream(self) -> int:
        plan = self._plan
        if plan.library == "torch":
            return torch_current_stream(plan.device_index)
        if plan.library == "cupy":
            return int(sys.modules["cupy"].cuda.get_current_stream().ptr)
        return int(self._stream_hint or 0)

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
        torch = sys.modules.get("torch")
        bump = getattr(getattr(torch, "_C", None), "_increment_version", None)
        written = tuple(
            o
            for o, s in zip(self._objs, self._plan.arrays, strict=True)
            if s.mutable and s.library == "torch"
        )
        if bump is None or not written:
            return
        with contextlib.suppress(Exception):
            bump(written)


_TORCH_STREAM: list[Any] = [None, None]  # [torch module, its raw current-stream function]


def torch_current_stream(index: int) -> int:
    """The raw handle of PyTorch's current CUDA stream on device `index`."""
    torch = sys.modules["torch"]
    if _TORCH_STREAM[0] is not torch:
        _TORCH_STREAM[0] = torch
        _TORCH_STREAM[1] = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    raw = _TORCH_STREAM[1]
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)


class Handle:
    """A started operation. `.wait()` waits for it, copies results back where
    the engine needed copies, and ends its borrows; waiting twice is fine."""

    __slots__ = ("_keep", "_stream", "_token", "_tracker", "_writeback", "done", "operation")

    def __init__(
        self,
        op: Operation,
        token: int,
        tracker: BorrowTracker,
        stream: Any,
        writeback: list[tuple[np.ndarray, Tensor]],
    ) -> None:
        self.operation = op
        self._token = token
        self._tracker = tracker
        self._stream = stream
        self._writeback = writeback
        self._keep = op._objs  # the caller's arrays live while we may use them
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        op = self.operation
        plan = op._plan
        try:
            if plan.engine != "cpu":
                dev: Any = plan.runtime.device
                if plan.space == "cpu":
                    dev.ctx.make_current()
                    dev.sync(self._stream)
                elif not _capturing(dev, self._stream):
                    # a stream names its context: no need to make it current
                    dev.sync_foreign(self._stream)
            for host, t in self._writeback:
                host[...] = t.numpy()
        except TileError as e:
            raise ExecutionError.from_tile_error(e, plan.kernel.module._sources) from None
        finally:
            self.done = True
            with _LOCK:
                self._tracker.wait(self._token)
                _PENDING.pop((plan.space, self._token), None)
            self._keep = []

    def _end_borrows(self) -> None:
        """Done as far as the host is concerned without waiting: for a launch
        on PyTorch's current stream made by a PyTorch operator, whose every
        later use through PyTorch is ordered after it (`torch_ops.py`)."""
        if self.done:
            return
        self.done = True
        with _LOCK:
            self._tracker.wait(self._token)
            _PENDING.pop((self.operation._plan.space, self._token), None)
        self._keep = []

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        return f"<handle of {self.operation.kernel.__name__} ({state})>"

    def __del__(self) -> None:
        if getattr(self, "done", True):
            return
        try:
            warnings.warn(
                f"a handle of kernel `{self.operation.kernel.__name__}` was dropped "
                "without `.wait()`; waiting for it now",
                ResourceWarning,
                stacklevel=2,
            )
            self.wait()
        except Exception:  # nothing may be raised from a finaliser
            pass


def _capturing(dev: Any, stream: Any) -> bool:
    """Whether `stream` is being captured into a CUDA graph (by PyTorch's
    `torch.cuda.graph`, say): then waiting for it is illegal, and the launch
    was recorded rather than run, so there is nothing to wait for."""
    check = getattr(dev, "is_capturing", None)
    return bool(check is not None and check(stream))
