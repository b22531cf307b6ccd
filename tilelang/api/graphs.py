"""Graphs from Python: `with tilelang.graph() as g:` records the operations
run in the block (Tile's `graph { ... }`), and `g.replay()` runs them again,
in order, and waits.

    with tilelang.graph() as g:
        mod.scale(tilelang.partition(h, [1024]), x, 2.0).sync()
        mod.add(tilelang.partition(z, [1024]), h, y).sync()
    for _ in range(100):
        g.replay()

Recording runs nothing: code in the block is written as usual (as under
PyTorch's `torch.cuda.graph`), each kernel call is checked as usual, and
`.sync()`/`.launch()` record its operation instead of running it (the
handle they return is already done). A host function called in the block
is refused (E0228, as in a Tile `graph { .. }`): it would run at once. The graph keeps the operations and so
their arrays alive, as a Tile graph keeps its tensors from being moved.
Operations run by other threads meanwhile are not recorded. On the GPU the first
replay captures the operations into one CUDA graph on a stream of tilec's
own, and every later replay launches that graph on the current stream of
the arrays' library (one driver call for the whole recording); on the CPU a
replay runs the operations one after the other. Host arrays on a GPU module
(which need copies) replay operation by operation too.

Every replay checks what a launch checks: the borrows of launches in flight
(E0305/E0306/E0309, against every operation of the graph, before anything
runs) and that no PyTorch tensor got other memory since it was recorded (a
captured graph would read the old memory); the operations of one graph run
in order on one stream, so one may write what another reads. A replay is
synchronous (it returns when the work is done), except while the stream is
being captured by PyTorch (`torch.cuda.graph`), where it is captured too.
`g.replay(times=n)` is n replays with one check and one wait: the n runs
are launched back to back on the stream (a decode loop of n steps pays the
host's return and the next launch once, not n times).

PyTorch's own `torch.cuda.graph(g)` needs nothing from here: a Tile launch
made while PyTorch captures goes to the capturing stream (PyTorch's current
stream), allocates nothing and does not wait (`operation.py`).
"""

from __future__ import annotations

import contextlib
import operator
import sys
import threading
from typing import Any

from tilelang.api import engines
from tilelang.api.engines import _LOCK, _PENDING
from tilelang.api.errors import CallError, ExecutionError
from tilelang.api.fastpath import torch_dtype_name, torch_version_bump
from tilelang.api.operation import Operation, _capturing
from tilelang.diagnostics.codes import api as acodes
from tilelang.diagnostics.model import TileError

_SHAPE = operator.attrgetter("shape")


class Graph:
    """Kernel calls recorded by `with tilelang.graph() as g:`; `g.replay()`
    runs them again. `g.operations` lists them in order."""

    def __init__(self) -> None:
        self.operations: list[Operation] = []
        self.replays = 0
        self._thread: int | None = None
        self._open = False
        self._captured: Any = None  # the device's graph, after the first GPU replay
        self._on_host: bool | None = None  # replayed operation by operation (after the first replay)
        self._device: Any = None
        self._torch: _TorchArrays | None = None  # the recording's PyTorch tensors, once
        self.paused = 0  # > 0 while the autotuner times candidates in the block (`api/tuning.py`)
        self._foreign: list[Operation] | None = None  # its operations on other libraries' arrays

    # -- recording -----------------------------------------------------------------
    def __enter__(self) -> Graph:
        with _LOCK:
            if engines.RECORDING is not None:
                raise CallError(
                    "a `tilelang.graph()` is already being recorded",
                    help="end the first `with` block before starting another",
                    code=acodes.GRAPH_MISUSE,
                )
            if self._open or self.operations:
                raise CallError(
                    "this graph was recorded already",
                    help="make a new one with `tilelang.graph()`",
                    code=acodes.GRAPH_MISUSE,
                )
            self._open = True
            self._thread = threading.get_ident()
            engines.RECORDING = self
        return self

    def __exit__(self, *exc: object) -> None:
        with _LOCK:
            if engines.RECORDING is self:
                engines.RECORDING = None
            self._open = False

    def record(self, op: Operation) -> bool:
        """`op` is being run (`.sync()`/`.launch()`) while recording: keep it
        and say so; False for another thread's operations, and while the tuner
        times candidates in the block (`paused`), which run."""
        if threading.get_ident() != self._thread or self.paused:
            return False
        first = self.operations[0]._plan if self.operations else None
        if first is not None and op._plan.engine != first.engine:
            raise CallError(
                f"the operations of one graph run on one device, but `{op.kernel.__name__}` "
                f"runs on {op._plan.engine} and `{self.operations[0].kernel.__name__}` on "
                f"{first.engine}",
                help="record the calls of each device in a graph of its own",
                code=acodes.MIXED_DEVICES,
            )
        self.operations.append(op)
        return True

    def __repr__(self) -> str:
        n, r = len(self.operations), self.replays
        names = f" ({', '.join(op.kernel.__name__ for op in self.operations)})" if n else ""
        return f"<tile graph of {n} operation{'s' if n != 1 else ''}{names}, {r} replay{'s' if r != 1 else ''}>"

    # -- replaying -----------------------------------------------------------------
    def replay(self, times: int = 1) -> None:
        """Run the recorded operations in order and wait for them; `times`
        runs them that many times over, one run after the other (as that
        many `replay()` calls would), checked once and waited for once: on
        the GPU the CUDA graph is launched `times` times back to back, so
        the device does not idle while the host returns and replays again."""
        if self._open:
            raise CallError(
                "a graph cannot be replayed while it is being recorded",
                help="call `g.replay()` after the `with tilelang.graph() as g:` block",
                code=acodes.GRAPH_MISUSE,
            )
        if type(times) is not int or times < 1:  # bool is not a count either
            raise CallError(
                f"`times` of `replay` is how many runs, a positive int, not {times!r}",
                help="call `g.replay()` for one run, `g.replay(times=n)` for n",
                code=acodes.GRAPH_MISUSE,
            )
        ops = self.operations
        if not ops:
            self.replays += times
            return
        self._check_memory()
        self._check_borrows()
        on_host = self._on_host
        if on_host is None:  # the recording is fixed: decided once, not per replay
            plan = ops[0]._plan
            on_host = self._on_host = plan.engine == "cpu" or any(op._plan.copies for op in ops)
        if on_host:
            for _ in range(times):
                for op in ops:
                    op.sync()
        else:
            self._replay_gpu(times)
        self.replays += times

    def _check_memory(self) -> None:
        """No PyTorch tensor of the recording got other memory or another
        shape (each tensor once, however many operations use it), nor a
        NumPy array (`Operation._check_numpy`) or an array of another library
        (`Operation._check_interfaces`): all before any operation runs."""
        arrays = self._torch
        if arrays is None:
            arrays = self._torch = _TorchArrays(self.operations)
        arrays.check()
        foreign = self._foreign
        if foreign is None:  # arrays of other libraries, whose interfaces are read again,
            # and NumPy arrays (resized, reshaped, retyped in place): every one before
            # anything runs, so that a refused replay has written nothing
            foreign = self._foreign = [
                op for op in dict.fromkeys(self.operations) if op._plan.iface or op._plan.np_slots
            ]
        for op in foreign:
            if op._plan.iface:
                op._check_interfaces()
            if op._plan.np_slots:
                op._check_numpy()

    def _check_borrows(self) -> None:
        """Every operation against the launches in flight, before anything
        runs (the graph's own operations are ordered, so not against each other)."""
        with _LOCK:
            if _PENDING:
                for op in dict.fromkeys(self.operations):  # each operation once
                    op._check_in_flight()

    def _replay_gpu(self, times: int) -> None:
        ops = self.operations
        first = ops[0]
        dev: Any = first._plan.runtime.device
        sources = first.kernel.module._sources
        try:
            dev.ctx.make_current()
            # Captured once: an operation's addresses are fixed when it is
            # made (`Operation._ptrs`), and a PyTorch tensor given other
            # memory since is refused above (`_check_memory`).
            if self._captured is None:
                self._capture(dev)
            stream = dev.foreign_stream(first._current_stream())
            for _ in range(times):  # one stream: each run after the last
                dev.replay(self._captured, stream)
            if not _capturing(dev, stream):
                dev.sync_foreign(stream)
        except TileError as e:
            raise ExecutionError.from_tile_error(e, sources) from None
        arrays = self._torch
        if arrays is None:
            arrays = self._torch = _TorchArrays(ops)
        arrays.bump_versions()

    def _capture(self, dev: Any) -> None:
        stream = dev.new_stream()
        dev.capture(stream)
        try:
            for op in self.operations:
                op._start(stream)
        finally:
            graph = dev.end_capture(stream)
        self._captured = graph
        self._device = dev


class _TorchArrays:
    """The PyTorch tensors a recording uses, gathered once: a replay checks
    them all with one pass of C calls (`data_ptr`, `shape`) and bumps the
    autograd versions of the written ones with one call, instead of walking
    every operation's arguments in Python (a decode step records hundreds).

    The recording is fixed, so the set of tensors is too; what can change
    between replays (memory given by `set_`/`resize_`, strides by
    `as_strided_`, the element type by `.data = t.view(..)`) is what `check`
    reads."""

    def __init__(self, ops: list[Operation]) -> None:
        self.objs: list[Any] = []
        self.ptrs: list[int] = []
        self.shapes: list[tuple[int, ...]] = []
        self.dtypes: list[str] = []  # `str(t.dtype)` when recorded
        self.owners: list[Operation] = []
        written: dict[int, Any] = {}
        seen: set[tuple[int, int]] = set()
        for op in ops:
            plan = op._plan
            if not plan.has_torch:
                continue
            for o, ptr, s in zip(op._objs, op._ptrs, plan.arrays, strict=True):
                if s.library != "torch":
                    continue
                if s.mutable and plan.torch_mut:
                    written.setdefault(id(o), o)
                if (id(o), ptr) in seen:
                    continue
                seen.add((id(o), ptr))
                self.objs.append(o)
                self.ptrs.append(ptr)
                self.shapes.append(tuple(s.shape))
                self.dtypes.append(torch_dtype_name(s))
                self.owners.append(op)
        self.written = tuple(written.values())
        self.writers = [op for op in dict.fromkeys(ops) if op._plan.torch_mut]
        torch = sys.modules.get("torch") if self.objs else None
        self._data_ptr: Any = torch.Tensor.data_ptr if torch is not None else None
        self._contiguous: Any = torch.Tensor.is_contiguous if torch is not None else None
        self._dtype: Any = operator.attrgetter("dtype")
        self._bump = torch_version_bump(torch)

    def check(self) -> None:
        if not self.objs:
            return
        if any(getattr(t, "requires_grad", False) for t in self.written):  # a written leaf that requires grad (E0803)
            for op in self.writers:
                op._check_memory()  # raises, naming the argument, while autograd records
        # torch.Size is a tuple: the lists compare element by element in C.
        if (
            list(map(self._data_ptr, self.objs)) == self.ptrs
            and list(map(_SHAPE, self.objs)) == self.shapes
            and all(map(self._contiguous, self.objs))  # (`as_strided_` keeps address and shape)
            and list(map(str, map(self._dtype, self.objs))) == self.dtypes  # (and `.data = t.view(..)`)
        ):
            return
        for o, ptr, shape, dtype, op in zip(
            self.objs, self.ptrs, self.shapes, self.dtypes, self.owners, strict=True
        ):
            if (
                o.data_ptr() != ptr
                or tuple(o.shape) != shape
                or not o.is_contiguous()
                or str(o.dtype) != dtype
            ):
                op._check_memory()  # raises, naming the argument

    def bump_versions(self) -> None:
        """A replay writes these tensors behind autograd's back (as one
        operation's run does: `Operation._bump_torch_versions`)."""
        if self.written and self._bump is not None:
            with contextlib.suppress(Exception):
                self._bump(self.written)


def graph() -> Graph:
    """A graph to record kernel calls into: `with tilelang.graph() as g: ...`,
    then `g.replay()`."""
    return Graph()
