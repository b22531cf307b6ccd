"""The profiler: every kernel launch made while a profile is active, timed,
with the bytes it moves and the FLOPs it computes.

    with tilelang.profile() as prof:          # prints the table when the block ends
        mod.add(tilelang.partition(z, [1024]), x, y).sync()
    prof.records                              # one `LaunchRecord` per launch
    prof.write_trace("trace.json")            # Chrome / Perfetto trace

`tilec run --profile FILE` and `--trace OUT.json` do the same for a whole
program. Launches from the Python API (`api/operation.py`) and from the host
evaluator (`runtime/launch.py`) both report here, through `hook.ACTIVE`.

Timing: on the GPU, CUDA events recorded on the launch's stream just before
and after it (GPU time, read when the profile ends, so profiling adds no
synchronisation); on the CPU interpreter, the wall time of the run. Bytes
and FLOPs: `costs.py`. Percent of peak: against `peaks.py`'s card (memory
bandwidth, and the FP32 or tensor-core rate as the kernel uses `mma` on
f16/bf16); the larger of the memory and compute fractions is the one shown.

Invariant: a profile observes; it changes no launch's order, stream or
result, and launches outside an active profile pay one global read.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from tilelang.profiler import hook

if TYPE_CHECKING:  # imported where a profile records a launch: a launch path without one never loads them
    from tilelang.profiler.costs import Cost
    from tilelang.profiler.peaks import Peak


@dataclass(slots=True)
class LaunchRecord:
    kernel: str
    grid: tuple[int, ...]
    engine: str  # "cpu" or "cuda:<index>"
    host_start_s: float  # perf_counter seconds since the profile began
    host_s: float  # host time of the launch call itself
    cost: Cost
    seconds: float = float("nan")  # GPU time (events) or CPU wall time
    gpu_start_s: float | None = None  # on the GPU timeline, from the profile's first event
    peak: Peak | None = None
    _events: Any = None  # (device, start event, end event) until resolved

    @property
    def bandwidth(self) -> float:
        return self.cost.bytes / self.seconds if self.seconds > 0 else float("nan")

    @property
    def flop_rate(self) -> float:
        return self.cost.flops / self.seconds if self.seconds > 0 else float("nan")

    def percent_of_peak(self) -> tuple[float, str] | None:
        """(percent, "memory"/"fp32"/"tensor"): the larger of the two fractions."""
        p = self.peak
        if p is None or not self.seconds > 0:
            return None
        compute = p.tensor if self.cost.tensor_core else p.fp32
        mem = 100 * self.bandwidth / p.bandwidth
        flop = 100 * self.flop_rate / compute
        if mem >= flop:
            return mem, "memory"
        return flop, "tensor" if self.cost.tensor_core else "fp32"


@dataclass
class Profile:
    """An active profile (`tilelang.profile()`); see the module doc."""

    print_table: bool = True
    trace: str | None = None
    out: IO[str] | None = None
    max_rows: int = 200
    records: list[LaunchRecord] = field(default_factory=list)
    _t0: float = 0.0
    _previous: Any = None
    _reference: Any = None  # (device, event) at the first GPU launch: the GPU timeline's 0
    _reference_host: float = 0.0
    _peaks: dict[int, Peak | None] = field(default_factory=dict)

    def __enter__(self) -> Profile:
        self._t0 = time.perf_counter()
        self._previous = hook.ACTIVE
        hook.ACTIVE = self
        return self

    def __exit__(self, *exc: object) -> None:
        hook.ACTIVE = self._previous
        self.finish()
        if exc[0] is not None:
            return
        if self.print_table:
            from tilelang.profiler.report import table

            out = self.out or sys.stderr
            out.write(table(self.records, self.max_rows))
            out.flush()
        if self.trace:
            self.write_trace(self.trace)

    # -- called by the launch paths --------------------------------------------------
    def begin(self, dev: Any, stream: Any, hold: bool = False) -> tuple[float, Any, Any]:
        """The start of a launch's record: its host time and, on a GPU, its
        start event. `hold`: the caller launches next with no wait on the
        stream in between, so the stream may be held until `end` (or `open`)
        and the start event fires when the kernel can start rather than when
        the host began its launch work (`runtime/cuda_gate.py`)."""
        start = gate = None
        if getattr(dev, "kind", "cpu") == "gpu" and hasattr(dev, "record_event"):
            if self._reference is None:
                self._reference = (dev, dev.record_event(stream))
                self._reference_host = time.perf_counter() - self._t0
            if hold and hasattr(dev, "hold_stream"):
                gate = dev.hold_stream(stream)
            start = dev.record_event(stream)
        return time.perf_counter(), start, gate

    def open(self, token: tuple[float, Any, Any], dev: Any) -> None:
        """Let a stream held by `begin` run (before anything may wait for it)."""
        if token[2] is not None:
            dev.open_stream(token[2])

    def end(
        self,
        token: tuple[float, Any, Any],
        dev: Any,
        stream: Any,
        kernel: Any,
        grid: tuple[int, ...],
        shapes: dict[str, tuple[int, ...]],
        nbytes: dict[str, int],
        scalars: dict[str, Any],
        engine: str,
    ) -> None:
        t_start, start_event, _ = token
        t_end = time.perf_counter()
        try:
            from tilelang.profiler.costs import kernel_cost

            cost = kernel_cost(kernel, grid, shapes, nbytes, scalars)
        except Exception:  # a cost model gap must never break a run
            from tilelang.profiler.costs import Cost

            cost = Cost(0.0, sum(nbytes.values()), False, False)
        rec = LaunchRecord(
            kernel=getattr(kernel, "name", "?"),
            grid=tuple(grid),
            engine=engine,
            host_start_s=t_start - self._t0,
            host_s=t_end - t_start,
            cost=cost,
            peak=self._peak(dev),
        )
        if start_event is not None:
            try:
                rec._events = (dev, start_event, dev.record_event(stream))
            finally:
                self.open(token, dev)  # after the end event: it times the kernel alone
        else:
            rec.seconds = t_end - t_start
        self.records.append(rec)

    def _peak(self, dev: Any) -> Peak | None:
        key = id(dev)
        if key not in self._peaks:
            from tilelang.profiler.peaks import peak_for

            attrs = getattr(dev, "peak_attributes", None)
            name = getattr(getattr(getattr(dev, "ctx", None), "info", None), "name", None)
            self._peaks[key] = (
                peak_for(name, attrs() if attrs else None)
                if name and getattr(dev, "kind", "") == "gpu"
                else None
            )
        return self._peaks[key]

    # -- results -----------------------------------------------------------------------
    def finish(self) -> None:
        """Read the GPU times of the launches recorded so far (waits for them)."""
        for rec in self.records:
            if rec._events is None:
                continue
            dev, e0, e1 = rec._events
            rec.seconds = dev.event_seconds(e0, e1)
            if self._reference is not None and self._reference[0] is dev:
                rec.gpu_start_s = self._reference_host + dev.event_seconds(self._reference[1], e0)
            rec._events = None
            release = getattr(dev, "release_event", None)
            if release is not None:
                release(e0)
                release(e1)

    def table(self) -> str:
        from tilelang.profiler.report import table

        self.finish()
        return table(self.records, self.max_rows)

    def write_trace(self, path: str) -> None:
        from tilelang.profiler.report import write_trace

        self.finish()
        write_trace(self.records, path)


def profile(
    *, print_table: bool = True, trace: str | None = None, out: IO[str] | None = None
) -> Profile:
    """Profile every kernel launch in a `with` block: `with tilelang.profile() as p:`.
    When the block ends the table is printed (to `out`, stderr by default)
    and, with `trace=PATH`, a Chrome/Perfetto trace written."""
    return Profile(print_table=print_table, trace=trace, out=out)


__all__ = ["LaunchRecord", "Profile", "profile"]
