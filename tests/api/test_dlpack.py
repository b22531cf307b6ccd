"""DLPack through the Python API without a GPU: any object with `__dlpack__`
and `__dlpack_device__` is used in place. Host memory is viewed by NumPy; a
"CUDA" export (a host capsule behind a CUDA device tag, run by a fake CUDA
device that reads host memory) exercises the capsule reader, the stream it
asks for, and that the export lives as long as a launch may use it. Host
functions give results back in the library of their arguments. The fake CUDA
device is `test_cuda_plumbing.py`'s."""

from __future__ import annotations

import gc
import sys
from typing import Any

import numpy as np
import pytest
from test_cuda_plumbing import FakeCudaDevice

import tilelang
from tilelang.api import arrays, in_flight, module
from tilelang.dtypes import DType

P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
fn twice(x: &Tensor<f32, [?]>) -> Tensor<f32, [?]> { x * 2.0 }
fn pair(x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) -> (Tensor<f32, [?]>, f32) { (x + y, 1.5) }
"""


class OnlyDLPack:
    """An array that offers nothing but DLPack (like a JAX array): its export
    comes from NumPy; `device` is what it claims (1 CPU, 2 CUDA)."""

    def __init__(self, a: np.ndarray, device: int = 1, versioned: bool = True) -> None:
        self.a = a
        self.device = device
        self.versioned = versioned
        self.streams: list[Any] = []
        self.exports = 0

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self.device, 0)

    def __dlpack__(self, stream: Any = None, max_version: Any = None, **kw: Any) -> Any:
        self.streams.append(stream)
        self.exports += 1
        if self.versioned and max_version is not None:
            return self.a.__dlpack__(max_version=max_version)
        if max_version is not None and not self.versioned:
            raise TypeError("max_version")  # a DLPack 0.x producer
        return self.a.__dlpack__()


@pytest.fixture
def fake(monkeypatch):  # type: ignore[no-untyped-def]
    dev = FakeCudaDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    yield dev
    assert in_flight() == 0


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE)


def _vecs(n: int = 3000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return (
        rng.standard_normal(n).astype(np.float32),
        rng.standard_normal(n).astype(np.float32),
        np.zeros(n, np.float32),
    )


def test_host_dlpack_objects_run_in_place(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(P(OnlyDLPack(z), [1024]), OnlyDLPack(x), OnlyDLPack(y)).sync()
    np.testing.assert_array_equal(z, x + y)  # written through the export: no copy
    ref = arrays.describe(OnlyDLPack(x))
    assert ref.space == "cpu" and ref.ptr == x.ctypes.data and ref.dtype is DType.F32


def test_cuda_capsules_are_read_in_place(fake, mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    cz, cx, cy = OnlyDLPack(z, 2), OnlyDLPack(x, 2), OnlyDLPack(y, 2, versioned=False)
    ref = arrays.describe(cx)
    assert ref.is_cuda and ref.space == "cuda:0"
    assert ref.ptr == x.ctypes.data and ref.shape == (3000,) and ref.nbytes == x.nbytes
    assert ref.dtype is DType.F32 and ref.contiguous and ref.stream == 0
    assert cx.streams[-1] == 1  # asked to order its work before the legacy default stream
    assert arrays.describe(cy).ptr == y.ctypes.data  # an unversioned (0.x) capsule too
    h = mod.add(P(cz, [1024]), cx, cy).launch()
    assert fake.ran_on == [fake.streams[0]]  # the stream DLPack arrays run on
    h.wait()
    np.testing.assert_array_equal(z, x + y)


def test_cuda_capsule_strides_offsets_and_dtypes(fake) -> None:  # type: ignore[no-untyped-def]
    base = np.arange(64, dtype=np.float16).reshape(8, 8)
    ref = arrays.describe(OnlyDLPack(base[2:, ::2], 2))
    assert ref.shape == (6, 4) and ref.strides == (8, 2) and not ref.contiguous
    assert ref.ptr == base[2:].ctypes.data and ref.dtype is DType.F16
    ref = arrays.describe(OnlyDLPack(np.zeros(5, np.complex64), 2))
    assert ref.dtype is None and ref.dtype_name == "complex64"


def test_cuda_capsule_marked_read_only_cannot_be_written(fake, mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    z.flags.writeable = False  # NumPy exports read-only arrays with the DLPack 1.0 flag
    with pytest.raises(tilelang.CallError, match="read-only"):
        mod.add(P(OnlyDLPack(z, 2), [1024]), OnlyDLPack(x, 2), OnlyDLPack(y, 2))


def test_the_export_lives_while_a_launch_may_use_it(fake, mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    h = mod.add(P(OnlyDLPack(z, 2), [1024]), OnlyDLPack(x, 2), OnlyDLPack(y, 2)).launch()
    gc.collect()
    # the handle keeps its operation, and the operation the exports (and so the memory)
    kept = [o for o in h.operation._objs if isinstance(o, arrays.DLPackExport)]
    assert len(kept) == 3 and all(type(k.capsule).__name__ == "PyCapsule" for k in kept)
    h.wait()
    np.testing.assert_array_equal(z, x + y)


def test_unsupported_dlpack_devices_are_refused(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    with pytest.raises(tilelang.CallError, match="DLPack device type 4"):
        mod.add(P(z, [1024]), OnlyDLPack(x, 4), y)


def test_host_function_results_follow_the_arguments_library(mod) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    x = torch.arange(4, dtype=torch.float32)
    out = mod.twice(x)
    assert isinstance(out, torch.Tensor) and out.tolist() == [0.0, 2.0, 4.0, 6.0]
    t, s = mod.pair(x, x)
    assert isinstance(t, torch.Tensor) and s == 1.5
    # mixed libraries: NumPy
    assert isinstance(mod.pair(x, np.ones(4, np.float32))[0], np.ndarray)
    assert isinstance(mod.twice(np.ones(4, np.float32)), np.ndarray)


def test_torch_cpu_tensors_through_dlpack_only(mod) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")

    class Wrapped:
        def __init__(self, t: Any) -> None:
            self.t = t

        def __dlpack__(self, **kw: Any) -> Any:
            kw.pop("stream", None)
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self) -> Any:
            return self.t.__dlpack_device__()

    x, y, z = torch.randn(100), torch.randn(100), torch.zeros(100)
    mod.add(P(Wrapped(z), [64]), Wrapped(x), Wrapped(y)).sync()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    assert "torch" in sys.modules


class FakeJaxArray(OnlyDLPack):
    """A JAX array as `arrays.describe` sees one: its module is `jax`, and it
    offers DLPack (read through it first)."""

    __module__ = "jax"


def test_a_jax_array_is_never_written(fake, mod) -> None:  # type: ignore[no-untyped-def]
    # hrev round 8: JAX arrays are immutable (another array or a compiled
    # function may share the buffer), but a `&mut` one was written in place
    # through its export, on the CPU and the GPU alike
    src = SOURCE + "fn fill(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {\n    add(z.partition([4]), x, x).sync();\n}\n"
    m = tilelang.compile(src)
    x, y, z = _vecs()
    for device in (1, 2):
        with pytest.raises(tilelang.CallError, match=r"E0803.*`z` of kernel `add` is a JAX array, but the kernel "
                           r"writes it: JAX arrays are immutable(.|\n)*pass a NumPy array for the results"):
            m.add(P(FakeJaxArray(z, device), [1024]), OnlyDLPack(x, device), OnlyDLPack(y, device))
    with pytest.raises(tilelang.CallError, match=r"E0803.*`z` of function `fill` is a JAX array, but the "
                       r"function writes it \(`&mut`\): JAX arrays are immutable"):
        m.fill(FakeJaxArray(z), x)
    assert not z.any()
    m.add(P(z, [1024]), FakeJaxArray(x), FakeJaxArray(y)).sync()  # read: as before
    np.testing.assert_array_equal(z, x + y)

    class CopyingJax(CopyingDLPack):
        __module__ = "jax"

    z[:] = 0  # a JAX array exported as a copy is still an input (it never changes)
    m.add(P(z, [1024]), CopyingJax(x), CopyingJax(y)).sync()
    np.testing.assert_array_equal(z, x + y)
    np.testing.assert_array_equal(m.twice(FakeJaxArray(x)), 2 * x)


class CopyingDLPack(OnlyDLPack):
    """A producer that cannot share its memory: it refuses `copy=False` (as
    DLPack 1.0 asks) and otherwise exports a copy, flagged as one."""

    def __dlpack__(self, stream: Any = None, max_version: Any = None, **kw: Any) -> Any:
        self.streams.append(stream)
        if kw.get("copy") is False:
            raise BufferError("cannot export without a copy")
        return self.a.copy().__dlpack__(max_version=max_version, copy=True)


class FlaggedCopyDLPack(OnlyDLPack):
    """A producer that ignores `copy=False` but flags its capsule as a copy."""

    def __dlpack__(self, stream: Any = None, max_version: Any = None, **kw: Any) -> Any:
        return self.a.copy().__dlpack__(max_version=max_version, copy=True)


def test_a_dlpack_export_that_is_a_copy_is_never_written(fake, mod) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: the export was asked for without `copy=False`, so a
    # producer that copies gave a copy: the kernel (or a host function)
    # wrote it and `z` kept its zeros, without a word, on the CPU and the GPU
    src = SOURCE + "fn fill(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {\n    add(z.partition([4]), x, x).sync();\n}\n"
    m = tilelang.compile(src)
    x, y, z = _vecs(40)
    for device, producer in ((1, CopyingDLPack), (2, CopyingDLPack), (2, FlaggedCopyDLPack)):
        with pytest.raises(tilelang.CallError, match=r"E0801.*`z` of kernel `add` is a float32 array( on the GPU)? of "
                           r"shape \(40,\) that its library gives as a copy \(its DLPack export is a copy(.|\n)*"
                           r"results would land in the copy and be lost(.|\n)*help: pass an array"):
            m.add(P(producer(z, device), [16]), OnlyDLPack(x, device), OnlyDLPack(y, device))
        # read by a kernel call: refused too (its operation reads the memory
        # each time it runs: a later run would read a stale copy or fail E0810)
        with pytest.raises(tilelang.CallError, match=r"E0801.*`x` of kernel `add` (.|\n)*gives as a copy "
                           r"(.|\n)*each copy is other memory(.|\n)*help: pass a"
                           r"( copy you keep: `x = numpy.from_dlpack\(x\)`| PyTorch or CuPy array)"):
            m.add(P(OnlyDLPack(z, device), [16]), producer(x, device), OnlyDLPack(y, device))
    with pytest.raises(tilelang.CallError, match=r"E0801.*`z` of function `fill` (.|\n)*gives as a copy"
                       r"(.|\n)*the function writes it \(`&mut`\)"):
        m.fill(CopyingDLPack(z), x)
    assert not z.any()
    np.testing.assert_array_equal(m.twice(CopyingDLPack(x)), 2 * x)  # a host function copies its inputs
    # a producer that shares: asked for its memory itself
    src_in_place = OnlyDLPack(z)
    m.fill(src_in_place, x)
    np.testing.assert_array_equal(z, 2 * x)


def test_an_operation_does_not_run_on_memory_a_dlpack_array_gave_up(fake, mod) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: an array offering only DLPack was never read again: the
    # operation (and a graph) held the first export, which kept the old
    # memory alive, and wrote it after the array had new memory (its results
    # lost without a word), on the CPU and the GPU
    for device in (1, 2):
        x, y, z = _vecs(40)
        o = OnlyDLPack(z, device)
        op = mod.add(P(o, [16]), OnlyDLPack(x, device), OnlyDLPack(y, device))
        with tilelang.graph() as g:
            op.sync()
        o.a = np.zeros(40, np.float32)  # the library gave the array other memory
        for run in (op.sync, g.replay):
            with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `add` has other memory(.|\n)*"
                               r"\(its DLPack export changed\)"):
                run()
        assert not z.any() and not o.a.any()
        o.a = z  # as it was: runs
        op.sync()
        np.testing.assert_array_equal(z, x + y)
