"""`Operation` (a checked kernel call that has not run) and `Handle` (a started
one): starting takes the arrays' borrows in the process's `BorrowTracker`,
waiting ends them."""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tilelang.api import arrays
from tilelang.api.arrays import ArrayRef
from tilelang.api.engines import _LOCK, _PENDING, _tracker
from tilelang.api.errors import BorrowError, ExecutionError
from tilelang.diagnostics.codes import ownership as ocodes
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.ownership.dynamic import BorrowTracker, Region
from tilelang.runtime.launch import BoundLaunch, ParamSpec, Runtime
from tilelang.runtime.launch import Operation as _RtOperation
from tilelang.runtime.tensor import Partition as _RtPartition
from tilelang.runtime.tensor import Tensor

if TYPE_CHECKING:
    from tilelang.api.kernel import Kernel


# ---------------------------------------------------------------- operations
class Operation:
    """A checked kernel call that has not run. `.sync()` runs it and waits;
    `.launch()` starts it and returns a `Handle`. It may be run again."""

    def __init__(
        self,
        kernel: Kernel,
        bound: BoundLaunch,
        runtime: Runtime,
        engine: str,
        space: str,
        refs: list[tuple[ParamSpec, ArrayRef, bool]],
        regions: list[tuple[Region, bool]],
    ) -> None:
        self.kernel = kernel
        self.grid = bound.grid
        self.generics = dict(bound.instantiation)
        self._bound = bound
        self._runtime = runtime
        self._engine = engine
        self._space = space
        self._refs = refs
        self._regions = regions
        self._runs = 0

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

    def sync(self) -> None:
        """Run the kernel and wait for it (on the GPU: for the stream it ran on)."""
        self.launch().wait()

    def launch(self) -> Handle:
        """Start the kernel; its arrays stay borrowed until `Handle.wait()`."""
        self._runs += 1  # tried, at least: no "never run" warning
        tracker = _tracker(self._space)
        writes = [r for r, m in self._regions if m]
        reads = [r for r, m in self._regions if not m]
        with _LOCK:
            self._explain_conflict()
            try:
                token = tracker.launch(self.kernel.__name__, writes, reads)
            except TileError as e:
                raise BorrowError.from_tile_error(e, self.kernel.module._sources) from None
            _PENDING[(self._space, token)] = self
        try:
            run = self._start()
        except BaseException:
            with _LOCK:
                tracker.wait(token)
                _PENDING.pop((self._space, token), None)
            raise
        _bump_torch_versions(self._refs)
        return Handle(self, token, tracker, *run)

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

    def _start(self) -> tuple[Any, list[tuple[np.ndarray, Tensor]]]:
        """Enqueue the kernel; (the stream to wait for, host arrays to copy results into)."""
        rt = self._runtime
        dev: Any = rt.device
        bound = self._bound
        writeback: list[tuple[np.ndarray, Tensor]] = []
        args = list(bound.args)
        if self._engine != "cpu":
            # Another library (or a second GPU's device) may have switched the
            # thread's current context since this device last ran.
            dev.ctx.make_current()
        copies = self._space == "cpu" and self._engine != "cpu"  # NumPy arrays on the GPU
        for i, a in enumerate(args):
            t = a.tensor if isinstance(a, _RtPartition) else a
            if not isinstance(t, Tensor):
                continue
            # bf16 arrays on the CPU are copied too: the interpreter relies on
            # bf16-rounded storage, and the caller's float32 values may not be.
            if not (copies or (self._space == "cpu" and t.dtype is DType.BF16)):
                continue
            host = cast(np.ndarray, t.storage)  # on the CPU engine: the caller's array
            fresh = Tensor.from_numpy(host, t.dtype, dev)  # uploaded now: the values of this run
            if isinstance(a, _RtPartition):
                args[i] = _RtPartition(fresh, a.tile)
                writeback.append((host, fresh))
            else:
                args[i] = fresh
        op = _RtOperation(
            self.kernel.decl,
            self.kernel.key,
            BoundLaunch(bound.instantiation, bound.grid, args),
            self.kernel.decl.name.span,
            rt,
        )
        if self._space != "cpu":
            # The stream the caller's library has current when the operation
            # starts (not when it was built), as a Tile launch would.
            first = next(r for _, r, _ in self._refs if r.is_cuda)
            stream = dev.foreign_stream(arrays.current_stream(first))
        elif self._engine == "cpu":
            stream = None
        else:
            stream = dev.new_stream()
        try:
            rt.execute(op, stream=stream)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, self.kernel.module._sources) from None
        return stream, writeback


def _bump_torch_versions(refs: list[tuple[ParamSpec, ArrayRef, bool]]) -> None:
    """A kernel writes `&mut` PyTorch tensors behind autograd's back; bumping
    their version counters lets autograd refuse a backward pass that would
    read values the kernel overwrote, as it does for PyTorch's own in-place ops."""
    torch = sys.modules.get("torch")
    bump = getattr(
        getattr(getattr(torch, "autograd", None), "graph", None), "increment_version", None
    )
    if bump is None:
        return
    for _, ref, mutable in refs:
        if mutable and ref.library == "torch":
            with contextlib.suppress(Exception):
                bump(ref.obj)


class Handle:
    """A started operation. `.wait()` waits for it, copies results back where
    the engine needed copies, and ends its borrows; waiting twice is fine."""

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
        self._keep = [
            r.obj for _, r, _ in op._refs
        ]  # the caller's arrays live while we may use them
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        op = self.operation
        dev: Any = op._runtime.device
        try:
            if op._engine != "cpu":
                dev.ctx.make_current()
            if op._space != "cpu":
                dev.sync_foreign(self._stream)
            elif op._engine != "cpu":
                dev.sync(self._stream)
            for host, t in self._writeback:
                host[...] = t.numpy()
        except TileError as e:
            raise ExecutionError.from_tile_error(e, op.kernel.module._sources) from None
        finally:
            self.done = True
            with _LOCK:
                self._tracker.wait(self._token)
                _PENDING.pop((self.operation._space, self._token), None)
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
