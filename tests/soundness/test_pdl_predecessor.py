"""Cross-launch races through programmatic dependent launch (hostile review,
round 10): under `TILEC_PDL=late+loads` a kernel reads the tensors the
previous launch on its stream does not write before its `griddepcontrol.wait`
(`runtime/cuda_pdl.early_names`). That is sound only when the launch the
runtime recorded is really the kernel before it on the stream: a kernel it
did not see (another library's on PyTorch's stream, a Tile plan's launcher
made before the setting changed, a graph launched on the stream, a capture's
launches, which do not run) lets the reader start once that kernel's blocks
have exited, and only the wait makes its writes visible. Each case here had
the reader load the written tensor early; the GPU is the only engine that
overlaps launches, so the runtime's decision is checked directly and through
`CudaDevice`'s plumbing with the driver stubbed."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pdl_stand import buf as _buf
from pdl_stand import kernel as _kernel

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.runtime import cuda, cuda_pdl


WRITER = _kernel(("y", True), ("x", False))  # writes y
READER = _kernel(("z", True), ("y", False))  # reads y
X, Y, Z = _buf(0x1000, 64), _buf(0x2000, 64), _buf(0x3000, 64)
DEV = 77  # a device's id in the launch counts


def test_a_launch_the_record_did_not_see_leaves_nothing_early(loads_mode) -> None:  # type: ignore[no-untyped-def]
    s = 5
    # the recorded predecessor (count 10 -> 11) writes `z`; the reader's `y` is early
    cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 10))
    assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV, 11)) == frozenset({"y"})
    # the same, but a launch the record never saw (count 12, not 13) came between:
    # a plan's launcher made before the setting changed, writing `y`
    cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 12))
    assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV, 14)) == frozenset()
    # another device's count is another count
    cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 20))
    assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV + 1, 21)) == frozenset()


def test_another_librarys_stream_reads_nothing_early_unless_vouched_for(loads_mode) -> None:  # type: ignore[no-untyped-def]
    s = 6
    # PyTorch's stream: `x.add_(1)` may run between the two Tile launches
    cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 0), foreign=True)
    assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV, 1), foreign=True) == frozenset()
    # inside `scoped` (a program's own kernels, the LLM engine's) the caller vouches for it
    with cuda_pdl.scoped(True, "late", "loads"):
        cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 2), foreign=True)
        assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV, 3), foreign=True) == {"y"}
    assert not cuda_pdl._VOUCHED


def test_a_capture_or_graph_on_the_stream_forgets_its_predecessor(loads_mode) -> None:  # type: ignore[no-untyped-def]
    s = 7
    # the stream's last kernel writes `y`; a capture on it records a launch that
    # writes `z` but does not run: after the capture, `y` is not early
    cuda_pdl.early_names(s, WRITER, [Y, X], (1,), (DEV, 0))
    cuda_pdl.forget(s)  # begin capture
    cuda_pdl.early_names(s, _kernel(("z", True)), [Z], (1,), (DEV, 1))
    cuda_pdl.forget(s)  # end capture
    assert cuda_pdl.early_names(s, READER, [_buf(0x4000, 4), Y], (1,), (DEV, 2)) == frozenset()


class _Stream:
    def __init__(self, h: int) -> None:
        self.h = h

    def __int__(self) -> int:
        return self.h


def _device(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`CudaDevice`'s methods on a stand-in: driver calls succeed and do nothing."""
    calls: list[str] = []

    def call(name: str) -> Any:
        return lambda *a, **k: calls.append(name) or (0,)

    d = SimpleNamespace(
        CUstreamCaptureMode=SimpleNamespace(CU_STREAM_CAPTURE_MODE_RELAXED=0),
        **{n: call(n) for n in ("cuStreamBeginCapture", "cuStreamEndCapture", "cuGraphInstantiate",
                                "cuGraphLaunch")},
    )
    monkeypatch.setattr(cuda, "_check", lambda result, what, span=None: None)
    main = _Stream(0x51)
    dev = SimpleNamespace(ctx=SimpleNamespace(d=d, stream=main), launches=3, _pending_asserts=defaultdict(list), _capturing=set(),
                          _capture_prints={}, _graph_asserts={}, _graph_prints={}, _streams=[],
                          _arrive=SimpleNamespace(take=lambda s: None), calls=calls)
    return dev


def test_the_device_passes_its_count_and_the_streams_owner(monkeypatch, loads_mode) -> None:  # type: ignore[no-untyped-def]
    dev = _device(monkeypatch)
    seen: list[tuple[Any, ...]] = []

    class Stop(Exception):
        pass

    def spy(*args: Any) -> frozenset[str]:
        seen.append(args)
        raise Stop

    monkeypatch.setattr(cuda_pdl, "early_names", spy)
    kir = SimpleNamespace(params=[ir.TensorParam("y", DType.F32, 1, False)])
    buf = cuda.CudaBuffer(cuda.DeviceBuffer(0x2000, 256, 256, None), (64,), np.dtype(np.float32))
    torch_stream = _Stream(0x99)
    dev._foreign_streams = {0x99: torch_stream}
    for stream, foreign in ((None, False), (torch_stream, True), (_Stream(0x99), False)):
        with pytest.raises(Stop):
            cuda.CudaDevice._run_slow(dev, SimpleNamespace(ir=kir, fixed=()), (1,), [buf], stream, None, ())
        assert seen[-1][4:] == ((id(dev), 3), foreign)


def test_the_device_forgets_at_capture_and_graph_launch(monkeypatch, loads_mode) -> None:  # type: ignore[no-untyped-def]
    dev = _device(monkeypatch)
    for step in ("capture", "end_capture", "replay"):
        cuda_pdl._LAST[0x51] = ((), True, None)
        if step == "capture":
            cuda.CudaDevice.capture(dev, None)
        elif step == "end_capture":
            monkeypatch.setattr(cuda, "Graph", lambda ctx: SimpleNamespace(graph=None, exec=None))
            cuda.CudaDevice.end_capture(dev, None)
        else:
            cuda.CudaDevice.replay(dev, SimpleNamespace(exec=None), None)
        assert 0x51 not in cuda_pdl._LAST, step
