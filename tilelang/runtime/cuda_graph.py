"""Events and graphs of the CUDA runtime (`cuda.py`): `Timer` (two events
around enqueued work) and `Graph` (a captured CUDA graph: `with
g.capture(): ...launches...`, then `g.replay()`), on the process's context
(`cuda.context()`) unless given one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tilelang.runtime.cuda_driver import _check
from tilelang.source import Span

if TYPE_CHECKING:
    from tilelang.runtime.cuda import Context


def _context() -> Context:
    # the process's one context; imported here because cuda.py imports this module
    from tilelang.runtime.cuda import context

    return context()


class Timer:
    """CUDA events around enqueued work; `elapsed_ms()` waits for the second one."""

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx or _context()
        d = self.ctx.d
        self.e0 = _check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT.value), "cuEventCreate")
        self.e1 = _check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT.value), "cuEventCreate")

    def start(self) -> None:
        _check(self.ctx.d.cuEventRecord(self.e0, self.ctx.stream), "cuEventRecord")

    def stop(self) -> None:
        _check(self.ctx.d.cuEventRecord(self.e1, self.ctx.stream), "cuEventRecord")

    def elapsed_ms(self) -> float:
        _check(self.ctx.d.cuEventSynchronize(self.e1), "cuEventSynchronize")
        return float(_check(self.ctx.d.cuEventElapsedTime(self.e0, self.e1), "cuEventElapsedTime"))


class Graph:
    """A captured CUDA graph: `with g.capture(): ...launches...`, then `g.replay()`."""

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx or _context()
        self.graph: Any = None
        self.exec: Any = None
        self._capturing = False

    def begin(self) -> None:
        d = self.ctx.d
        _check(d.cuStreamBeginCapture(self.ctx.stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL),
               "cuStreamBeginCapture")
        self._capturing = True

    def end(self, span: Span | None = None) -> None:
        d = self.ctx.d
        self._capturing = False
        self.graph = _check(d.cuStreamEndCapture(self.ctx.stream), "cuStreamEndCapture", span)
        self.exec = _check(d.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate", span)

    def capture(self) -> _Capture:
        return _Capture(self)

    def replay(self, span: Span | None = None, sync: bool = True) -> None:
        assert self.exec is not None, "replay before capture"
        _check(self.ctx.d.cuGraphLaunch(self.exec, self.ctx.stream), "cuGraphLaunch", span)
        if sync:
            self.ctx.synchronize(span)

    def __del__(self) -> None:
        try:
            d = self.ctx.d
            if self.exec is not None:
                d.cuGraphExecDestroy(self.exec)
            if self.graph is not None:
                d.cuGraphDestroy(self.graph)
        except Exception:
            pass


class _Capture:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __enter__(self) -> Graph:
        self.graph.begin()
        return self.graph

    def __exit__(self, *exc: object) -> None:
        self.graph.end()
