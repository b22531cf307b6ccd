"""The GPU path of the Python API without a GPU: a fake CUDA device (the CPU
interpreter behind `CudaDevice`'s interface for external memory) and a fake
CUDA array (`__cuda_array_interface__` over host memory) exercise engine
choice, in-place wrapping, the caller's stream, waiting and the borrow rules
of the CUDA address space in every CI run. `test_api_gpu.py` runs the real thing.
"""

from __future__ import annotations

import ctypes
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tilelang
from tilelang.api import arrays, in_flight, module
from tilelang.dtypes import DType
from tilelang.runtime.cpu import CpuDevice

P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
"""


class FakeCudaArray:
    """A 'CUDA' array whose device pointer is really host memory."""

    def __init__(self, host: np.ndarray, stream: int | None = 7) -> None:
        self.host = host
        self.stream = stream

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        h = self.host
        return {"shape": h.shape, "typestr": h.dtype.str, "data": (h.ctypes.data, False),
                "strides": None if h.flags.c_contiguous else h.strides, "version": 3,
                "stream": self.stream}


class FakeCudaDevice(CpuDevice):
    name = "fake-cuda"
    kind = "gpu"

    def __init__(self) -> None:
        super().__init__()
        self.ctx = SimpleNamespace(make_current=lambda: None)
        self.streams: dict[int, object] = {}
        self.ran_on: list[object] = []
        self.synced: list[object] = []

    def wrap_external(self, ptr: int, shape: tuple[int, ...], np_dtype: Any, nbytes: int) -> np.ndarray:
        raw = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
        return np.frombuffer(raw, dtype=np.uint8)[:nbytes].view(np_dtype).reshape(shape)

    def foreign_stream(self, handle: int) -> object:
        return self.streams.setdefault(handle, object())

    def sync_foreign(self, stream: object) -> None:
        self.synced.append(stream)

    def run(self, prepared, grid, args, stream=None, span=None) -> None:  # type: ignore[no-untyped-def]
        self.ran_on.append(stream)
        super().run(prepared, grid, args, stream, span)


@pytest.fixture
def fake(monkeypatch):  # type: ignore[no-untyped-def]
    dev = FakeCudaDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    yield dev
    assert in_flight() == 0


def _arrays(n: int = 3000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32))


def test_describe_reads_the_cuda_array_interface() -> None:
    h = np.zeros((4, 6), np.float16)
    ref = arrays.describe(FakeCudaArray(h, stream=11))
    assert ref.space == "cuda:0" and ref.is_cuda and ref.stream == 11
    assert ref.shape == (4, 6) and ref.dtype is DType.F16
    assert ref.ptr == h.ctypes.data and ref.nbytes == h.nbytes and ref.contiguous
    assert not arrays.describe(FakeCudaArray(h[:, ::2])).contiguous
    assert "on the GPU" in ref.describe()


def test_cuda_arrays_run_in_place_on_the_callers_stream(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    op = mod.add(P(FakeCudaArray(z, stream=7), [1024]), FakeCudaArray(x, 7), FakeCudaArray(y, 7))
    h = op.launch()
    assert fake.ran_on == [fake.streams[7]]
    assert fake.synced == []  # not waited yet
    h.wait()
    assert fake.synced == [fake.streams[7]]
    np.testing.assert_array_equal(z, x + y)  # written in place, no copy back


def test_a_cuda_array_given_other_memory_is_not_run_on_the_old(fake) -> None:  # type: ignore[no-untyped-def]
    # a `__cuda_array_interface__` object is kept alive, its memory may not be
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    cz = FakeCudaArray(z)
    op = mod.add(P(cz, [1024]), FakeCudaArray(x), FakeCudaArray(y))
    with tilelang.graph() as g:
        op.sync()
    cz.host = np.zeros(3000, np.float32)
    for run in (op.sync, g.replay):
        with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `add` has other memory(.|\n)*"
                           r"`__cuda_array_interface__` changed"):
            run()
    assert fake.ran_on == [] and not z.any()


def test_cuda_borrows_are_tracked(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    cx, cy, cz = FakeCudaArray(x), FakeCudaArray(y), FakeCudaArray(z)
    h = mod.add(P(cz, [1024]), cx, cy).launch()
    with pytest.raises(tilelang.BorrowError, match=r"E0305.*`z` of kernel `add` writes memory that a "
                       r"pending launch of `add` may still be reading \(as `y`\)"):
        mod.add(P(cy, [1024]), cz, cx).sync()
    with pytest.raises(tilelang.BorrowError, match=r"E0305.*`x` of kernel `add` reads memory that a "
                       r"pending launch of `add` may still be writing \(as `z`\)"):
        mod.add(P(FakeCudaArray(np.zeros(3000, np.float32)), [1024]), cz, cx).sync()
    h.wait()
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.add(P(cz, [1024]), cz, cx)


def test_cuda_and_host_arrays_do_not_mix(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    with pytest.raises(tilelang.CallError, match=r"must be on one device, but `z` is a float32 array on "
                       r"the GPU of shape \(3000,\) and `x` is a float32 NumPy array"):
        mod.add(P(FakeCudaArray(z), [1024]), x, FakeCudaArray(y))


def test_strided_or_misaligned_cuda_arrays_are_refused(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays(6000)
    with pytest.raises(tilelang.CallError, match="is not contiguous"):
        mod.add(P(FakeCudaArray(z[:3000]), [1024]), FakeCudaArray(x[::2]), FakeCudaArray(y[:3000]))
    # an f32 array 2 bytes off its alignment: a GPU load of it faults (and
    # loses the CUDA context), so the call refuses it, also when a plan of
    # an aligned call with the same key exists (the key holds no address)
    buf = np.zeros(2 * 3000 + 2, np.float16)
    odd = buf[1:6001].view(np.float32)
    cz, cy = FakeCudaArray(z[:3000]), FakeCudaArray(y[:3000])
    mod.add(P(cz, [1024]), FakeCudaArray(x[:3000]), cy).sync()
    with pytest.raises(tilelang.CallError, match=r"E0801.*`x` of kernel `add` is a float32 array on the "
                       r"GPU of shape \(3000,\) at address 0x[0-9a-f]+, which is not a multiple of its "
                       r"element size \(4 bytes\)"):
        mod.add(P(cz, [1024]), FakeCudaArray(odd), cy)


def test_no_gpu_is_a_clean_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda

    monkeypatch.setattr(cuda, "is_available", lambda: False)
    monkeypatch.delitem(module._DEVICES, "cuda:0", raising=False)
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    with pytest.raises(tilelang.ExecutionError, match="cannot run on the GPU"):
        mod.add(P(FakeCudaArray(z), [1024]), FakeCudaArray(x), FakeCudaArray(y))


def test_numpy_on_a_gpu_module_goes_through_copies(fake, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # uploads are copies, as on a GPU (the CPU device's upload views a contiguous array)
    monkeypatch.setattr(fake, "upload", lambda host, dtype=None: np.array(host, copy=True), raising=False)
    monkeypatch.setattr(fake, "new_stream", lambda: None, raising=False)
    monkeypatch.setattr(fake, "sync", lambda stream: None, raising=False)
    mod = tilelang.compile(SOURCE, device="gpu")
    x, y, z = _arrays()
    op = mod.add(P(z, [1024]), x, y)
    h = op.launch()
    with pytest.raises(ValueError, match="read-only"):
        z[0] = 1.0  # would be overwritten by the copy back at the wait
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0  # uploaded already: the kernel would not see it
    assert not z.any()
    h.wait()
    np.testing.assert_array_equal(z, x + y)  # copied back at the wait
    assert z.flags.writeable and x.flags.writeable
    # hrev round 9: a launch whose borrows end without a wait (a PyTorch
    # operator's on the GPU: `torch_ops`, stream-ordered with PyTorch) dropped
    # the copies' results: a GPU module's operator given CPU tensors wrote nothing
    z[:] = 0
    h = op.launch()
    h._end_borrows()
    np.testing.assert_array_equal(z, x + y)
    assert h.done and z.flags.writeable


def test_tuning_refuses_cuda_arrays_it_cannot_put_back(fake, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # each timed candidate writes the call's `&mut` array; one of a library
    # the tuner cannot copy would keep every run's writes
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    mod = tilelang.compile("#[autotune(B = [512, 1024])]\n" + SOURCE.lstrip())
    x, y, z = _arrays()
    with pytest.raises(tilelang.CallError, match=r"E0801.*`z` \(a float32 array on the GPU of shape "
                       r"\(3000,\)\) must be put back after each timed candidate(.|\n)*CuPy"):
        mod.add(P(FakeCudaArray(z), ...), FakeCudaArray(x), FakeCudaArray(y))
    assert not z.any() and fake.ran_on == []


def test_host_functions_on_a_gpu_module(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE + "fn twice(x: &Tensor<f32, [?]>) -> Tensor<f32, [?]> { x * 2.0 }\n",
                           device="gpu")
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(mod.twice(x), 2 * x)


class FakeCupyArray(FakeCudaArray):
    """Looks like a CuPy array to `arrays.describe` (its module and `.device`)."""

    __module__ = "cupy._core.core"
    device = SimpleNamespace(id=0)


def test_the_stream_current_when_the_operation_starts(fake, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    current = SimpleNamespace(ptr=5)
    cupy = SimpleNamespace(cuda=SimpleNamespace(get_current_stream=lambda: current))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()
    op = mod.add(P(FakeCupyArray(z), [1024]), FakeCupyArray(x), FakeCupyArray(y))
    current.ptr = 9  # the caller switched streams between building and running
    op.sync()
    assert fake.ran_on == [fake.streams[9]] and fake.synced == [fake.streams[9]]
    np.testing.assert_array_equal(z, x + y)


class _Interface(FakeCudaArray):
    """A fake CUDA array whose interface says what `extra` says (strides as
    the host array's, even where they are not whole elements)."""

    def __init__(self, host: np.ndarray, **extra: Any) -> None:
        super().__init__(host)
        self.extra = extra

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {**super().__cuda_array_interface__, "strides": self.host.strides, **self.extra}


def test_strides_that_are_not_whole_elements_are_not_contiguous(fake) -> None:  # type: ignore[no-untyped-def]
    # 6-byte strides of 4-byte floats: floored to 1 element, the array passed
    # as contiguous and the kernel read the 32 bytes after its address
    # (x6[1] is the upper half of one float and the lower half of the next)
    buf = np.arange(16, dtype=np.float32)
    x6 = np.ndarray((8,), np.float32, buffer=buf.view(np.uint8), strides=(6,))
    ref = arrays.describe(_Interface(x6))
    assert not ref.contiguous and ref.strides is None and ref.byte_strides == (6,)
    assert arrays.describe(_Interface(buf[:8])).contiguous  # (its strides given, whole elements)
    one = np.ndarray((1, 8), np.float32, buffer=buf.view(np.uint8), strides=(6, 4))
    assert arrays.describe(_Interface(one)).contiguous  # a dimension of 1 never steps
    mod = tilelang.compile(SOURCE)
    y, z = np.zeros(8, np.float32), np.zeros(8, np.float32)
    for x in (_Interface(x6), x6):  # a CUDA array, and NumPy's own (the message was "strides [1]")
        zz = FakeCudaArray(z) if x is not x6 else z
        yy = FakeCudaArray(y) if x is not x6 else y
        with pytest.raises(tilelang.CallError, match=r"E0802.*`x` of kernel `add` is not contiguous \(strides "
                           r"\[6\] in bytes, not whole elements of 4 bytes, shape \[8\]\)"):
            mod.add(P(zz, [8]), x, yy)
    assert not z.any() and fake.ran_on == []


def test_a_masked_or_foreign_endian_cuda_array_is_refused(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays(8)
    cases = [
        (_Interface(x, mask=FakeCudaArray(np.ones(8, bool))), r"a masked array"),
        (_Interface(x.astype(">f4")), r"a big-endian float32 array \(typestr `>f4`\)"),
        (_Interface(x, strides=(4, 4)), r"its `__cuda_array_interface__` gives 2 strides for 1 dimensions"),
    ]
    for arg, why in cases:
        with pytest.raises(tilelang.CallError, match=r"E0801.*`x` of kernel `add`: " + why):
            mod.add(P(FakeCudaArray(z), [8]), arg, FakeCudaArray(y))
    assert not z.any() and fake.ran_on == []


def test_a_cuda_array_given_another_layout_at_its_address_is_not_run(fake) -> None:  # type: ignore[no-untyped-def]
    # hrev round 8: an operation (or a graph) re-read a foreign array's interface
    # for its address and shape only: the same address and shape with other
    # strides, another element type or a mask ran on the old layout (the kernel
    # wrote 3000 contiguous floats; the array's elements are every second one)
    mod = tilelang.compile(SOURCE)
    x, y, _ = _arrays()
    buf = np.zeros(6000, np.float32)
    cz = FakeCudaArray(buf[:3000])
    op = mod.add(P(cz, [1024]), FakeCudaArray(x), FakeCudaArray(y))
    with tilelang.graph() as g:
        op.sync()
    for host, extra in ((buf[::2], {}), (buf[:3000].view(np.int32), {}),
                        (buf[:3000], {"mask": FakeCudaArray(np.ones(3000, bool))})):
        cz.host = host
        cz.__class__ = _Interface if extra else FakeCudaArray
        cz.extra = extra
        for run in (op.sync, g.replay):
            with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `add` has other memory, another "
                               r"shape, element type or layout(.|\n)*`__cuda_array_interface__` changed"):
                run()
    assert fake.ran_on == [] and not buf.any()
    cz.__class__, cz.host = FakeCudaArray, buf[:3000]  # as it was: runs (the fake device captures no graph)
    op.sync()
    np.testing.assert_array_equal(buf[:3000], x + y)


def test_a_dropped_handle_whose_wait_fails_says_so(fake, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: a handle dropped without `.wait()` waits when collected,
    # but a failure of that wait (a kernel's assert, a fault: found at the
    # GPU's sync) was swallowed by the finaliser: only "dropped without
    # `.wait()`" was said, and the results were wrong without a word
    import gc
    import warnings

    from tilelang.diagnostics.model import Diagnostic, TileError

    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays()

    def fails(stream: object) -> None:
        raise TileError(Diagnostic.error("E0700", "assertion failed in kernel `add`: boom"))

    monkeypatch.setattr(fake, "sync_foreign", fails)
    h = mod.add(P(FakeCudaArray(z), [1024]), FakeCudaArray(x), FakeCudaArray(y)).launch()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        del h
        gc.collect()
    said = [str(w.message) for w in seen]
    assert any("dropped without `.wait()`" in m for m in said), said
    assert any("the wait for a dropped handle of kernel `add` failed" in m and "boom" in m for m in said), said


def test_the_one_function_launch_never_skips_a_foreign_arrays_check(fake, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: once the native launcher ran a plan, `.sync()`/`.launch()`
    # became one generated function that skipped `_begin`, and with it the
    # new reading of a foreign array's `__cuda_array_interface__` (E0810): an
    # operation on an array whose buffer was replaced (the old one freed)
    # launched on the old address. Such plans keep the general path.
    from types import SimpleNamespace

    from tilelang.api import operation

    native = SimpleNamespace(_STATE={"module": SimpleNamespace(launch=lambda *a: 0)})
    monkeypatch.setitem(sys.modules, "tilelang.runtime.cuda_native", native)
    mod = tilelang.compile(SOURCE)
    x, y, z = _arrays(64)
    cz = FakeCudaArray(z)
    op = mod.add(P(cz, [16]), FakeCudaArray(x), FakeCudaArray(y))
    op.sync()
    plan = op._plan
    assert plan.iface  # the CUDA arrays' interfaces are read at each start
    plan.launcher = SimpleNamespace(_native_own=(), _direct=True, device=fake)
    plan.native_wait, plan.wait_foreign = True, lambda stream, raw: None
    operation._make_fast(plan)
    assert plan.fast_sync is None and plan.fast_launch is None
    cz.host = np.zeros(64, np.float32)  # the array's buffer replaced
    with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `add` has other memory"):
        op.sync()
