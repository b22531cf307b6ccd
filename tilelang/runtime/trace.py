"""The block timeline: when every block of every traced kernel ran, on which SM.

Opt-in, process-wide: `TILEC_TRACE=blocks` in the environment, `set_trace(True)`,
`with tilelang.trace("out.json") as t:` or `tilec run --trace out.json`. While
it is on, `CudaDevice` compiles kernels with `Target.trace` (their stamps:
`backend/codegen/trace.py`) and, when it loads one, writes into its module
global the address of the one buffer this module owns (a ring of
`capacity` 32-byte records, allocated once per process; nothing is allocated
per launch) and the kernel's trace id. A traced kernel then records itself
wherever it is launched from: the fast launchers, the native plans, a CUDA
graph replayed many times (PyTorch's capture included). Off, nothing is
compiled differently (the PTX is byte for byte the untraced kernel's).

`collect()` waits for the GPU and decodes the ring into a `Trace`: one
`Launch` per (kernel, launch instance) with its blocks (SM, start, the
return of its `griddepcontrol.wait`, end; nanoseconds of `%globaltimer`).
`Trace.summary()` is a text table (per launch: first start, last end, the
gap to the previous launch's end, the wait, the ramp of block starts, the
tail from the first block's end to the last's, and how long the SMs sat
without a block of it); `Trace.chrome()` a Chrome/Perfetto trace (one track
per SM, and one track of launches).

`TILEC_TRACE_MARK=wait1|store1|ring` (read when a kernel compiles; `Target.trace_mark`):
a traced kernel that has no PDL wait puts one more stamp in the wait's field,
thread 0's pass through the return of its role's first mbarrier wait (a
Hopper pipeline's first tile in), its first store (the epilogue's start), or
(ring) its last pass through the first `cp.async.wait` (a cp.async ring's
last tile in): `Launch.wait` and the rows' `wait_us` are then that mark.

Limits, said where they apply: the ring keeps the newest `capacity` records
(an older launch may lose blocks; `Trace.notes` says so); plans the Python
API made before the setting changed keep their launcher and their untraced
kernel (make them again, as the LLM engine does with `replan`); on the CPU
(the interpreter) there are no blocks to record. Modules are loaded with the
global written by a synchronous copy: turn tracing on before a graph capture
compiles kernels, not during it.

Invariant: only the functions that take a CUDA context touch the driver;
decoding and the outputs are NumPy and JSON (tested on the CPU).
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MODES = ("blocks",)
# a record's fields (`codegen/trace.py`); NumPy is imported only to decode,
# so `runtime.cuda`, which reads `ENABLED` on every launch, stays NumPy-free
RECORD_FIELDS = [("kid", "<u4"), ("n", "<u4"), ("block", "<u4"), ("smnb", "<u4"),
                 ("t0", "<u8"), ("dw", "<u4"), ("d1", "<u4")]


def parse_mode(setting: str) -> bool:
    """`TILEC_TRACE`'s value: "blocks" on; "", "0" or "off" off; anything else
    a ValueError that names the choices."""
    if setting in ("", "0", "off"):
        return False
    if setting in MODES:
        return True
    raise ValueError(f"unknown trace mode `{setting}` (one of: {', '.join(MODES)}; or 0 for off)")


_ENV = os.environ.get("TILEC_TRACE", "")
try:
    ENABLED = parse_mode(_ENV)
except ValueError as _e:  # a mistyped setting is said, and tracing stays off
    warnings.warn(f"TILEC_TRACE={_ENV!r} ignored, tracing stays off: {_e}", RuntimeWarning, stacklevel=1)
    ENABLED = False


def _capacity_default() -> int:
    """`TILEC_TRACE_RECORDS`, rounded down to a power of two (the kernels
    take a slot with a mask), at least 1,024; 2^20 by default."""
    from tilelang.env_switch import number

    n = max(1024, number("TILEC_TRACE_RECORDS", 1 << 20, 1, "a number of records (at least 1; below 1024 reads as 1024)"))
    return 1 << (n.bit_length() - 1)


def set_trace(on: bool) -> bool:
    """Turn the block timeline on or off for the kernels compiled from now
    on (each setting is its own compiled variant); the previous setting."""
    global ENABLED
    old, ENABLED = ENABLED, bool(on)
    return old


# ---------------------------------------------------------------- the device side
class DeviceTrace:
    """The ring buffer of one CUDA context and the kernels that write into it."""

    def __init__(self, ctx: Any, capacity: int) -> None:
        assert capacity & (capacity - 1) == 0, capacity  # the kernels mask the cursor
        from tilelang.backend.codegen import trace as L
        from tilelang.runtime.cuda_driver import _check

        self.ctx = ctx
        self.capacity = capacity
        self.nbytes = L.RECORDS + capacity * L.RECORD
        self.ptr = int(_check(ctx.d.cuMemAlloc(self.nbytes), "cuMemAlloc"))
        self.names: list[str] = []  # trace id -> kernel name
        self.modules: dict[int, int] = {}  # id(Module) -> trace id
        self.reset()

    def reset(self) -> None:
        """Forget every record and launch count (the GPU must be idle)."""
        import numpy as np

        from tilelang.backend.codegen import trace as L
        from tilelang.runtime.cuda_driver import _check

        d = self.ctx.d
        _check(d.cuMemsetD8(self.ptr, 0, L.RECORDS), "cuMemsetD8")
        cap = np.array([self.capacity], "<u4")
        _check(d.cuMemcpyHtoD(self.ptr + L.HEADER_CAPACITY, cap.ctypes.data, 4), "cuMemcpyHtoD")

    def attach(self, module: Any, name: str) -> int:
        """Write the buffer's address and a new trace id into `module`'s global; the id."""
        import numpy as np

        from tilelang.backend.codegen import trace as L
        from tilelang.runtime.cuda_driver import _check

        kid = self.modules.get(id(module))
        if kid is not None:
            return kid
        kid = len(self.names)
        self.names.append(name)
        self.modules[id(module)] = kid
        d = self.ctx.d
        dptr, size = _check(d.cuModuleGetGlobal(module.handle, L.GLOBAL.encode()), "cuModuleGetGlobal")
        assert int(size) == 16, size
        raw = np.array([self.ptr, kid | (self.capacity - 1) << 32], "<u8")
        _check(d.cuMemcpyHtoD(dptr, raw.ctypes.data, 16), "cuMemcpyHtoD")
        return kid

    def read(self) -> Trace:
        """Wait for the GPU and decode the ring."""
        import numpy as np

        from tilelang.backend.codegen import trace as L
        from tilelang.runtime.cuda_driver import _check

        d = self.ctx.d
        _check(d.cuCtxSynchronize(), "cuCtxSynchronize")
        head = np.zeros(2, "<u8")
        _check(d.cuMemcpyDtoH(head.ctypes.data, self.ptr, 16), "cuMemcpyDtoH")
        cursor = int(head[0])
        n = min(cursor, self.capacity)
        raw = np.zeros(n * L.RECORD, np.uint8)
        if n:
            _check(d.cuMemcpyDtoH(raw.ctypes.data, self.ptr + L.RECORDS, n * L.RECORD), "cuMemcpyDtoH")
        return decode(raw.tobytes(), cursor, self.capacity, self.names, self.ctx.info.sm_count)


_DEVICE: DeviceTrace | None = None


def attach(ctx: Any, module: Any, name: str) -> int:
    """Called by `CudaDevice` for each traced module it loads (the buffer is
    made on the first)."""
    global _DEVICE
    if _DEVICE is None or _DEVICE.ctx is not ctx:
        _DEVICE = DeviceTrace(ctx, _capacity_default())
    return _DEVICE.attach(module, name)


def reset() -> None:
    """Forget the records so far (waits for the GPU first)."""
    if _DEVICE is not None:
        from tilelang.runtime.cuda_driver import _check

        _check(_DEVICE.ctx.d.cuCtxSynchronize(), "cuCtxSynchronize")
        _DEVICE.reset()


def collect() -> Trace:
    """The records so far, decoded (waits for the GPU); an empty trace with a
    note where no traced kernel has run."""
    if _DEVICE is None:
        return Trace([], 0, 0, ["no traced kernel ran (tracing records GPU blocks; the interpreter has none)"])
    return _DEVICE.read()


# ---------------------------------------------------------------- decoding
@dataclass
class Launch:
    """One launch of a traced kernel: its blocks' records, times in ns."""

    kid: int
    name: str
    instance: int
    block: np.ndarray
    sm: np.ndarray
    start: np.ndarray
    wait: np.ndarray  # the wait's return; equal to start where the kernel does not wait
    end: np.ndarray
    waits: bool

    @property
    def first_start(self) -> int:
        return int(self.start.min())

    @property
    def last_start(self) -> int:
        return int(self.start.max())

    @property
    def first_end(self) -> int:
        return int(self.end.min())

    @property
    def last_end(self) -> int:
        return int(self.end.max())

    def idle_ns(self, sms: int) -> int:
        """SM-nanoseconds in [first start, last end] during which an SM ran
        no block of this launch (`sms` SMs on the card)."""
        import numpy as np

        lo, hi = self.first_start, self.last_end
        busy = 0
        for s in np.unique(self.sm):
            sel = self.sm == s
            iv = sorted(zip(self.start[sel].tolist(), self.end[sel].tolist(), strict=True))
            cur_lo, cur_hi = iv[0]
            for a, b in iv[1:]:
                if a > cur_hi:
                    busy += cur_hi - cur_lo
                    cur_lo, cur_hi = a, b
                else:
                    cur_hi = max(cur_hi, b)
            busy += cur_hi - cur_lo
        return max(0, sms * (hi - lo) - busy)


@dataclass
class Trace:
    """The decoded timeline: launches in order of their first block's start."""

    launches: list[Launch]
    cursor: int  # records written in all
    capacity: int
    notes: list[str] = field(default_factory=list)
    sms: int = 0
    granularity_ns: int = 0  # the smallest step between two distinct stamps seen

    @property
    def origin(self) -> int:
        return min((la.first_start for la in self.launches), default=0)

    def rows(self) -> list[dict[str, Any]]:
        """Per launch, in microseconds from the trace's origin: what `summary`
        prints and the JSON's `launches` hold."""
        import numpy as np

        out: list[dict[str, Any]] = []
        prev_end: int | None = None
        o = self.origin
        for i, la in enumerate(self.launches):
            wait = float(np.median(la.wait - la.start)) / 1e3 if la.waits else None
            row = {
                "index": i, "kernel": la.name, "instance": la.instance, "blocks": int(la.block.size),
                "sms": int(np.unique(la.sm).size),
                "start_us": (la.first_start - o) / 1e3, "end_us": (la.last_end - o) / 1e3,
                "gap_us": None if prev_end is None else (la.first_start - prev_end) / 1e3,
                "wait_us": wait,
                "ramp_us": (la.last_start - la.first_start) / 1e3,
                "first_end_us": (la.first_end - la.first_start) / 1e3,
                "tail_us": (la.last_end - la.first_end) / 1e3,
                "span_us": (la.last_end - la.first_start) / 1e3,
                "block_us": float(np.median(la.end - la.start)) / 1e3,
                "idle_sm_us": la.idle_ns(self.sms or int(la.sm.max()) + 1) / 1e3,
            }
            out.append(row)
            prev_end = la.last_end if prev_end is None else max(prev_end, la.last_end)
        return out

    def summary(self) -> str:
        """A text table, one line a launch (times in us)."""
        head = (f"{'#':>4} {'kernel':<28} {'blocks':>6} {'SMs':>4} {'start':>10} {'gap':>7} {'wait':>6} "
                f"{'ramp':>6} {'block':>7} {'tail':>6} {'span':>7} {'idle SM-us':>10}")
        lines = [head]

        def f(x: float | None, w: int) -> str:
            return f"{'-':>{w}}" if x is None else f"{x:>{w}.2f}"

        for r in self.rows():
            lines.append(f"{r['index']:>4} {r['kernel'][:28]:<28} {r['blocks']:>6} {r['sms']:>4} "
                         f"{f(r['start_us'], 10)} {f(r['gap_us'], 7)} {f(r['wait_us'], 6)} {f(r['ramp_us'], 6)} "
                         f"{f(r['block_us'], 7)} {f(r['tail_us'], 6)} {f(r['span_us'], 7)} {f(r['idle_sm_us'], 10)}")
        lines.append(f"{len(self.launches)} launches, {self.cursor} block records ({self.capacity} kept at most); "
                     f"timer step <= {self.granularity_ns} ns seen")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def chrome(self) -> dict[str, Any]:
        """The Chrome/Perfetto trace: process 0 has one track per SM (a block
        an event, its wait as a nested event), process 1 one track of launches."""
        o = self.origin
        ev: list[dict[str, Any]] = [
            {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "SMs"}},
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "launches"}},
        ]
        for s in sorted({int(s) for la in self.launches for s in la.sm.tolist()}):
            ev.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": s, "args": {"name": f"SM {s}"}})
        for i, la in enumerate(self.launches):
            name = f"{la.name}#{la.instance}"
            ev.append({"ph": "X", "name": name, "cat": "launch", "pid": 1, "tid": 0,
                       "ts": (la.first_start - o) / 1e3, "dur": (la.last_end - la.first_start) / 1e3,
                       "args": {"index": i, "blocks": int(la.block.size)}})
            for b, s, t0, tw, t1 in zip(la.block.tolist(), la.sm.tolist(), la.start.tolist(), la.wait.tolist(),
                                        la.end.tolist(), strict=True):
                ev.append({"ph": "X", "name": la.name, "cat": "block", "pid": 0, "tid": int(s),
                           "ts": (t0 - o) / 1e3, "dur": (t1 - t0) / 1e3, "args": {"launch": i, "block": int(b)}})
                if la.waits and tw > t0:
                    ev.append({"ph": "X", "name": "wait", "cat": "wait", "pid": 0, "tid": int(s),
                               "ts": (t0 - o) / 1e3, "dur": (tw - t0) / 1e3, "args": {"launch": i}})
        return {"traceEvents": ev, "displayTimeUnit": "ns",
                "otherData": {"notes": self.notes, "records": self.cursor, "capacity": self.capacity,
                              "timer_step_ns": self.granularity_ns}}

    def write(self, path: str | os.PathLike[str]) -> None:
        """The Chrome trace as JSON at `path` (with the summary's rows in `otherData`)."""
        data = self.chrome()
        data["otherData"]["launches"] = self.rows()
        Path(path).write_text(json.dumps(data))


def decode(raw: bytes, cursor: int, capacity: int, names: list[str], sms: int = 0) -> Trace:
    """The ring's records (`raw`: the first min(cursor, capacity) slots, in
    slot order) as launches: a kernel's records (one trace id) in the order
    its blocks counted, cut from the newest back into runs of its grid's
    size; `Launch.instance` numbers a kernel's launches kept, oldest first."""
    import numpy as np

    from tilelang.backend.codegen import trace as L

    notes = []
    n = min(cursor, capacity)
    rec = np.frombuffer(raw, np.dtype(RECORD_FIELDS), count=n)
    if cursor > capacity:
        notes.append(f"the ring wrapped: the oldest {cursor - capacity} of {cursor} block records were overwritten "
                     f"(TILEC_TRACE_RECORDS={capacity}); the oldest launch kept may miss blocks")
    if len(names) > L.KIDS:
        notes.append(f"{len(names)} traced kernels: trace ids share launch counters past {L.KIDS}; "
                     "launch instances may be wrong")
    launches = []
    partial = 0
    for kid in np.unique(rec["kid"]).tolist() if n else []:
        r = rec[rec["kid"] == kid]
        r = r[np.argsort(r["n"], kind="stable")]
        count, nb = r["n"].astype(np.int64), (r["smnb"] >> 8).astype(np.int64)
        if (nb == 0xFFFFFF).any():
            notes.append("a grid of 2^24 blocks or more: its launches are not told apart")
        groups = []
        i = len(r)
        while i > 0:  # from the newest launch back: each is a grid's size of counts
            lo = int(count[i - 1]) + 1 - max(1, int(nb[i - 1]))  # (a grid size of 0: a damaged record)
            j = min(i - 1, int(np.searchsorted(count, lo, "left")))
            groups.append((r[j:i], i - j < int(nb[i - 1])))
            i = j
        name = names[kid] if kid < len(names) else f"kernel#{kid}"
        for inst, (g, short) in enumerate(reversed(groups)):
            partial += short
            t0 = g["t0"].astype(np.int64)
            waits = bool((g["dw"] != L.NO_WAIT).any())
            tw = t0 + np.where(g["dw"] == L.NO_WAIT, 0, g["dw"]).astype(np.int64)
            launches.append(Launch(kid, name, inst, g["block"].astype(np.int64), (g["smnb"] & 255).astype(np.int64),
                                   t0, tw, t0 + g["d1"].astype(np.int64), waits))
    if partial:
        notes.append(f"{partial} launch(es) miss blocks (the oldest, where the ring wrapped)")
    launches.sort(key=lambda la: (la.first_start, la.kid, la.instance))
    stamps = np.unique(np.concatenate([np.concatenate([la.start, la.wait, la.end]) for la in launches])
                       if launches else np.zeros(0, np.int64))
    step = int(np.diff(stamps).min()) if stamps.size > 1 else 0
    return Trace(launches, cursor, capacity, notes, sms, step)


# ---------------------------------------------------------------- the API
class TraceSession:
    """What `tilelang.trace()` yields: `.trace` is filled when the `with` ends."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = path
        self.trace: Trace | None = None


@contextlib.contextmanager
def session(path: str | os.PathLike[str] | None = None) -> Iterator[TraceSession]:
    """Trace the kernels compiled and launched inside the `with`; at its end
    the records are decoded into `.trace` and, with `path`, written there as
    a Chrome/Perfetto trace."""
    s = TraceSession(path)
    old = set_trace(True)
    reset()
    try:
        yield s
    finally:
        set_trace(old)
    s.trace = collect()
    if path is not None:
        s.trace.write(path)
