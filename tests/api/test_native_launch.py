"""The native launcher (`runtime/cuda_native.py`) against a stand-in for
libcuda built here: the extension passes each argument of `cuLaunchKernel`,
`cuStreamSynchronize` and `cuStreamIsCapturing` through unchanged, writes the
call's addresses into the packed parameters, refuses an address of another
alignment than the compiled variant's without launching, and `FastLaunch`
takes it when it is loaded (errors worded through the binding's names).
Skipped where there is no C compiler or no `Python.h`."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

from tilelang.runtime import cuda_fake, cuda_native


@pytest.fixture(scope="module")
def native(tmp_path_factory):  # type: ignore[no-untyped-def]
    if not cuda_fake.can_build():
        pytest.skip("no C compiler or no Python.h")
    return cuda_fake.stub_native(tmp_path_factory.mktemp("native"))


_last = cuda_fake.last


def test_each_argument_reaches_the_driver(native) -> None:  # type: ignore[no-untyped-def]
    mod, lib = native
    block = (ctypes.c_uint64 * 3)()
    params = (ctypes.c_void_p * 3)(*[ctypes.addressof(block) + 8 * i for i in range(3)])
    fixed = (0x1234, 5, 6, 7, 128, 4096, ctypes.addressof(params), ctypes.addressof(block))
    assert mod.launch(*fixed, 0b111, 0x77, 0x1000, 0x2000, 0x3000) == 0
    assert _last(lib)[:11] == [0x1234, 5, 6, 7, 128, 1, 1, 4096, 0x77, ctypes.addressof(params), 0]
    assert list(block) == [0x1000, 0x2000, 0x3000]
    n = ctypes.c_int.in_dll(lib, "n_launch").value
    # an address aligned otherwise than compiled: nothing written, nothing launched
    assert mod.launch(*fixed, 0b111, 0x77, 0x1004, 0x2000, 0x3000) == -1
    assert list(block) == [0x1000, 0x2000, 0x3000] and ctypes.c_int.in_dll(lib, "n_launch").value == n
    assert mod.launch(*fixed, 0b110, 0x77, 0x1004, 0x2000, 0x3000) == 0  # compiled for it
    assert list(block) == [0x1004, 0x2000, 0x3000]
    ctypes.c_int.in_dll(lib, "fail_with").value = 201
    assert mod.launch(*fixed, 0b111, 0x77, 0x1000, 0x2000, 0x3000) == 201  # the driver's code
    ctypes.c_int.in_dll(lib, "fail_with").value = 0
    assert mod.sync(0x88) == 0 and _last(lib)[11] == 0x88
    assert mod.capturing(0x99) == 0 and _last(lib)[11] == 0x99
    ctypes.c_int.in_dll(lib, "capture_status").value = 1
    assert mod.capturing(0x99) == 1
    ctypes.c_int.in_dll(lib, "capture_status").value = 0
    with pytest.raises(TypeError):
        mod.launch(1, 2, 3)


def test_fast_launch_goes_through_the_native_launcher(native, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_LAUNCH", raising=False)
    from tilelang.backend import compile_kernel
    from tilelang.ir import samples
    from tilelang.runtime import cuda, cuda_fast

    mod, lib = native
    monkeypatch.setitem(cuda_native._STATE, "module", mod)
    k = samples.saxpy(256)
    ck = compile_kernel(k, "sm_90")
    binding_calls: list[tuple] = []

    class Result(int):
        pass

    driver = SimpleNamespace(
        cuLaunchKernel=lambda *a: binding_calls.append(a) or (0,),
        CUresult=lambda e: Result(e),
    )
    driver.CUresult.CUDA_SUCCESS = 0  # type: ignore[attr-defined]
    driver.CUresult.CUDA_ERROR_INVALID_CONTEXT = 201  # type: ignore[attr-defined]
    driver.CUresult.CUDA_ERROR_INVALID_HANDLE = 400  # type: ignore[attr-defined]
    current = []
    dev = SimpleNamespace(
        ctx=SimpleNamespace(d=driver, make_current=lambda: current.append(1)),
        launches=0,
        _err=SimpleNamespace(ptr=0x9990),
    )
    fn = SimpleNamespace(handle=0x5151, name="saxpy")

    def buf(ptr: int, n: int) -> cuda.CudaBuffer:
        return cuda.CudaBuffer(
            cuda.DeviceBuffer(ptr, 4 * n, 4 * n, None), (n,), np.dtype(np.float32)
        )

    args = [buf(0x10000, 1000), np.float32(2.0), buf(0x20000, 1000), buf(0x30000, 1000)]
    index = {p.name: i for i, p in enumerate(k.params)}
    fl = cuda_fast.FastLaunch.make(dev, fn, ck.abi, (4,), args, index)  # type: ignore[arg-type]
    assert fl is not None and fl._native is not None
    assert fl([0x40000, 3.5, 0x50000, 0x60000], "s1", 0x77) is True
    last = _last(lib)
    assert (last[0], last[1:4], last[4], last[8]) == (0x5151, [4, 1, 1], ck.abi.num_threads, 0x77)
    slots = (ctypes.c_void_p * len(ck.abi.slots)).from_address(last[9])
    vals = [cuda.CTYPES[s.kind].from_address(p).value for s, p in zip(ck.abi.slots, slots, strict=True)]
    by_what = {(s.param, s.what): v for s, v in zip(ck.abi.slots, vals, strict=True)}
    assert by_what[("z", "ptr")] == 0x40000 and by_what[("x", "ptr")] == 0x50000
    assert by_what[("y", "ptr")] == 0x60000 and by_what[("a", "value")] == 3.5
    assert by_what[("z", "dim0")] == 1000 and by_what[("", "err")] == 0x9990
    assert dev.launches == 1 and binding_calls == []
    assert fl([0x40004, 3.5, 0x50000, 0x60000], "s1", 0x77) is False  # another alignment
    assert fl([0x40000, 1.0, 0x50000, 0x60000], "s1") is True  # no raw handle: the binding
    assert len(binding_calls) == 1
    # a refused context: made current, retried once, then raised with the driver's name
    ctypes.c_int.in_dll(lib, "fail_with").value = 201
    try:
        with pytest.raises(Exception, match="launching `saxpy`"):
            fl([0x40000, 3.5, 0x50000, 0x60000], "s1", 0x77)
        assert current == [1]
    finally:
        ctypes.c_int.in_dll(lib, "fail_with").value = 0


def test_no_driver_means_no_native_launcher(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(cuda_native._STATE, "module", None)
    monkeypatch.setitem(cuda_native._STATE, "thread", None)
    monkeypatch.setitem(cuda_native._STATE, "error", None)

    def missing() -> None:
        raise OSError("libcuda.so.1: cannot open shared object file")

    monkeypatch.setattr(cuda_native, "_libcuda", missing)
    assert cuda_native.native() is None
    assert "libcuda" in (cuda_native.native_error() or "")
    monkeypatch.setenv("TILEC_LAUNCH", "binding")
    monkeypatch.setitem(cuda_native._STATE, "error", None)
    assert cuda_native.native() is None and cuda_native.native_error() is None  # not wanted


def test_the_cached_build_is_named_by_its_source_flags_and_python(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The built extension is cached on disk under `_name()`: a changed C source or compiler flag (a new commit
    under the same version) names another file, so the old build is never loaded for it (the flags were not
    in the name)."""
    base = cuda_native._name()
    assert cuda_native._name() == base and base.startswith("tile_native_")
    monkeypatch.setattr(cuda_native, "_CFLAGS", (*cuda_native._CFLAGS, "-DNDEBUG"))
    flags = cuda_native._name()
    monkeypatch.setattr(cuda_native, "SOURCE", cuda_native.SOURCE + "\n")
    assert len({base, flags, cuda_native._name()}) == 3
