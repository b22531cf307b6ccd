"""`StreamGate`: holds a CUDA stream at a point until the host opens it, for
the profiler.

Why: an event recorded on an idle stream fires at once, so a start event
recorded before a launch also times the host's launch work (the API's
checks, the driver call: several microseconds) and a short kernel reads
long. The profiler holds the stream before its start event
(`cuStreamWaitValue32` on a word of pinned host memory mapped into the
device, waiting for a value the host has not written yet), records the
start event, launches, records the end event, then opens the gate (a plain
store of the value from the host): the start event fires when the kernel
can start.

Invariants: a gate is only held around work that never waits for the
stream on the host (`api/operation.py` holds it around the fast
launcher's driver call, and opens it before anything else runs); it is
never held on a stream being captured into a graph (the host's store is no
part of a graph, so a replay would wait forever); every hold is opened,
also when the launch fails; when the driver refuses any step the gate is
given up and the profiler times as before.
"""

from __future__ import annotations

import ctypes
from typing import Any


class StreamGate:
    """One word of mapped pinned memory and the values written to it: hold
    `n` waits for the word to reach `n`; opening `n` writes `n` (values only
    grow, so opening a later hold opens every earlier one too)."""

    def __init__(self, d: Any, check: Any) -> None:
        self._d = d
        self._check = check  # the device's checked call: raises on a driver error
        host = check(d.cuMemHostAlloc(64, d.CU_MEMHOSTALLOC_DEVICEMAP | d.CU_MEMHOSTALLOC_PORTABLE),
                     "cuMemHostAlloc")  # fmt: skip
        self._host = host
        self._word = ctypes.c_uint32.from_address(int(host))
        self._word.value = 0
        self._dptr = check(d.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer")
        self._next = 0  # the value of the last hold
        self._open = 0  # the value written last

    def hold(self, stream: Any) -> int:
        """Make `stream` wait, from here on, until this hold is opened; its value."""
        d = self._d
        self._next = value = (self._next + 1) & 0xFFFFFFFF or 1
        self._check(
            d.cuStreamWaitValue32(stream, self._dptr, value, d.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ.value),
            "cuStreamWaitValue32",
        )  # fmt: skip
        return value

    def open(self, value: int) -> None:
        """Open hold `value` (and every earlier one); opening twice is fine."""
        if value > self._open or value < self._open - 0x7FFFFFFF:  # grown, or wrapped around
            self._open = value
            self._word.value = value

    def open_all(self) -> None:
        self.open(self._next)
