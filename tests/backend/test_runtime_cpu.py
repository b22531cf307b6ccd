"""The CUDA runtime's promises that hold without a GPU."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np
import pytest

from tilelang.runtime import cuda


def test_is_available_answers_without_raising() -> None:
    assert cuda.is_available() in (True, False)


def test_importing_the_backend_imports_no_cuda() -> None:
    code = ("import sys, tilelang.backend, tilelang.runtime.cache; "
            "print(any(m.startswith('cuda') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_buckets_round_up_and_bound_the_waste() -> None:
    for n in (1, 255, 256, 257, 4096, 65537, 10**6, 3 * 2**30):
        b = cuda._bucket(n)
        assert b >= n and b % 256 == 0
        assert b - n <= max(255, n // 8)
    assert cuda._bucket(1000) == cuda._bucket(1024)  # nearby sizes share a free list


def test_packed_args_lay_out_each_parameter() -> None:
    p = cuda.PackedArgs(["ptr", "i32", "f32", "f16", "bool", "i64"], [0x1234, -7, 2.5, 1.0, True, -(2**40)])
    ptrs = (ctypes.c_void_p * 6).from_address(p.address)
    assert ctypes.c_uint64.from_address(ptrs[0]).value == 0x1234
    assert ctypes.c_int32.from_address(ptrs[1]).value == -7
    assert ctypes.c_float.from_address(ptrs[2]).value == 2.5
    assert ctypes.c_uint16.from_address(ptrs[3]).value == int(np.float16(1.0).view(np.uint16))
    assert ctypes.c_uint8.from_address(ptrs[4]).value == 1
    assert ctypes.c_int64.from_address(ptrs[5]).value == -(2**40)


def test_bf16_bits_round_trip_and_round_to_nearest_even() -> None:
    import numpy as np

    from tilelang.runtime.cuda import bf16_bits, bf16_values
    from tilelang.runtime.tensor import round_bf16

    x = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)
    x[:5] = [np.inf, -np.inf, 0.0, -0.0, 3.4e38]
    bits = bf16_bits(x)
    assert bits.dtype == np.uint16 and bits.shape == x.shape
    np.testing.assert_array_equal(bf16_values(bits), round_bf16(x))
    assert np.isnan(bf16_values(bf16_bits(np.array([np.nan], np.float32)))).all()
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1.0)
    assert bf16_values(bf16_bits(np.array([1 + 2.0**-8], np.float32)))[0] == 1.0


def test_nvjitlink_links_arch_specific_ptx_for_its_own_target() -> None:
    """A wgmma kernel's PTX is `.target sm_90a`: linked as sm_90 (the device's
    plain arch) nvJitLink refuses it and the driver JIT-compiles the PTX on
    every cold start, so the link takes the PTX's arch-specific target when it
    is the device's; generic PTX links for the device (forward compatible)."""
    from tilelang.backend import compile_kernel
    from tilelang.ir.samples import vector_add

    hopper = "//\n.version 8.0\n.target sm_90a\n.address_size 64\n"
    assert cuda.link_arch(hopper, "sm_90") == "sm_90a"
    assert cuda.link_arch(hopper.replace("sm_90a", "sm_80"), "sm_90") == "sm_90"
    assert cuda.link_arch(hopper.replace("sm_90a", "sm_90"), "sm_90") == "sm_90"
    assert cuda.link_arch(hopper, "sm_100") == "sm_100"  # another device's variant: not ours to pick
    ptx = compile_kernel(vector_add(), "sm_90a").ptx
    assert cuda.link_arch(ptx, "sm_90") == "sm_90a"


def test_compile_prewarms_the_gpu_toolchain_when_the_process_uses_cuda(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`tilelang.compile` in a process whose PyTorch has initialised CUDA starts
    loading llvmlite and nvJitLink in the background, for the arch of PyTorch's
    current device (a cold first launch waits for them otherwise); without
    that hint it starts nothing."""
    from types import SimpleNamespace

    import tilelang
    from tilelang.runtime import cuda_link

    calls: list[object] = []
    monkeypatch.setattr(cuda_link, "prewarm_toolchain", lambda arch=None: calls.append(arch))
    monkeypatch.delenv("TILEC_ARCH", raising=False)
    fake = SimpleNamespace(cuda=SimpleNamespace(is_initialized=lambda: False, get_device_capability=lambda: (9, 0)))
    monkeypatch.setitem(sys.modules, "torch", fake)
    src = "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(zeros::<f32>([B])); }\n"
    tilelang.compile(src)
    assert calls == []
    fake.cuda.is_initialized = lambda: True
    tilelang.compile(src)
    assert calls == ["sm_90a"]
    monkeypatch.setenv("TILEC_ARCH", "sm_80")
    tilelang.compile(src)
    assert calls == ["sm_90a", "sm_80"]


def test_ptx_arch_of_a_device(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The one mapping from compute capability to PTX target (the device and
    the prewarm share it): sm_90a only for CC 9.0, TILEC_ARCH overrides."""
    from tilelang.runtime.cuda_link import ptx_arch

    monkeypatch.delenv("TILEC_ARCH", raising=False)
    assert [ptx_arch(*cc) for cc in ((9, 0), (8, 0), (8, 6), (8, 9), (10, 0), (12, 0))] == [
        "sm_90a", "sm_80", "sm_80", "sm_80", "sm_90", "sm_90"]
    monkeypatch.setenv("TILEC_ARCH", "sm_80")
    assert ptx_arch(9, 0) == "sm_80"


_FAKE_TORCH = ("import sys, types; t = types.ModuleType('torch'); t.version = types.SimpleNamespace(cuda={cuda!r}); "
               "sys.modules['torch'] = t; ")
_REPORT = ("import sys, threading, tilelang; "
           "threads = [t for t in threading.enumerate() if t is not threading.main_thread()]; "
           "[t.join() for t in threads]; "
           "p = sys.modules.get('tilelang.syntax.parser'); "
           "print(len(threads), 'tilelang.backend.gpu.passes' in sys.modules, 'llvmlite.binding' in sys.modules, "
           "bool(p and p._tables.cache_info().currsize))")


@pytest.mark.parametrize("cuda_version, env, expect", [
    # a CUDA build of PyTorch: the first launch's modules (and the parser's tables) load in the background
    ("13.0", {}, ["1", "True", "True", "True"]),
    (None, {}, ["0", "False", "False", "False"]),  # a CPU build: nothing starts
    ("13.0", {"TILEC_PREWARM": "0"}, ["0", "False", "False", "False"]),  # turned off
])
def test_import_after_a_cuda_pytorch_prewarms_the_first_launch(cuda_version, env, expect) -> None:  # type: ignore[no-untyped-def]
    import os

    code = _FAKE_TORCH.format(cuda=cuda_version) + _REPORT
    env = {**{k: v for k, v in os.environ.items() if k != "TILEC_PREWARM"}, **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == expect, out.stderr


def test_prewarm_with_a_new_arch_builds_its_target_machine() -> None:
    """The prewarm started without an arch (at import) builds no device's
    target machine; a later call naming the arch builds it on a thread."""
    code = ("import threading; from tilelang.runtime import cuda_link; from tilelang.backend import target; "
            "join = lambda: [t.join() for t in threading.enumerate() if t is not threading.main_thread()]; "
            "cuda_link.prewarm_toolchain(); join(); a = target._target_machine.cache_info().currsize; "
            "cuda_link.prewarm_toolchain('sm_90a'); cuda_link.prewarm_toolchain('sm_90a'); join(); "
            "print(a, target._target_machine.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "2"], out.stderr


def test_prewarm_toolchain_loads_llvmlite_once_in_the_background() -> None:
    code = ("import sys, threading; from tilelang.runtime import cuda; "
            "cuda.prewarm_toolchain(); cuda.prewarm_toolchain(); "
            "threads = [t for t in threading.enumerate() if t is not threading.main_thread()]; "
            "[t.join() for t in threads]; "
            "print(len(threads), 'llvmlite.binding' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "True"]


def test_warp_specialised_ptx_is_compiled_whole() -> None:
    """nvJitLink compiles its input as a separate unit, where ptxas ignores
    `setmaxnreg` (C7504): PTX that sets registers per warpgroup goes to the
    driver JIT instead; other PTX keeps the cached nvJitLink cubin."""
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from gemm_cases import GemmConfig

    from tilelang import driver
    from tilelang.backend import compile_kernel
    from tilelang.backend.facts import TensorFacts
    from tilelang.ir.samples import vector_add
    from tilelang.runtime.cuda_link import nvjitlink_keeps

    src = GemmConfig(128, 256, 64, warps=8, stages=4).source() + (
        "fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
        " let mut o = zeros::<f16>([8, 8]); gemm::<128, 256, 64>(o.partition([128, 256]), &a, &b).sync(); }\n")
    gemm = driver.compile(src, "ir").output[0]
    hopper = compile_kernel(gemm, "sm_90a", {n: TensorFacts.assumed(2) for n in "abc"}).ptx
    assert "setmaxnreg" in hopper and not nvjitlink_keeps(hopper)
    assert nvjitlink_keeps(compile_kernel(vector_add(), "sm_90a").ptx)


class _FakeDriver:
    """The driver calls of the route warm-up, recorded; `fail` names one that fails."""

    def __init__(self, fail: str = "") -> None:
        from types import SimpleNamespace

        self.calls: list[str] = []
        self.ptx = b""
        self.fail = fail
        self.CUresult = SimpleNamespace(CUDA_SUCCESS=0)
        self.CUjitInputType = SimpleNamespace(CU_JIT_INPUT_PTX=1)

    def _call(self, name: str, *values: object) -> tuple[object, ...]:
        self.calls.append(name)
        return (999 if self.fail == name else 0, *values)

    def cuCtxSetCurrent(self, ctx: object) -> tuple[object, ...]:
        return self._call("cuCtxSetCurrent")

    def cuLinkCreate(self, *a: object) -> tuple[object, ...]:
        return self._call("cuLinkCreate", "state")

    def cuLinkAddData(self, state: object, kind: object, data: bytes, *a: object) -> tuple[object, ...]:
        self.ptx = data
        return self._call("cuLinkAddData")

    def cuLinkComplete(self, state: object) -> tuple[object, ...]:
        return self._call("cuLinkComplete", 0, 0)

    def cuLinkDestroy(self, state: object) -> tuple[object, ...]:
        return self._call("cuLinkDestroy")


def _warm_with(monkeypatch, drv: _FakeDriver) -> list[str]:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda_driver, cuda_link

    monkeypatch.delenv("TILEC_PREWARM", raising=False)
    monkeypatch.setattr(cuda_driver, "_driver", lambda: drv)
    monkeypatch.setattr(cuda_link, "_JIT_THREADS", [])
    monkeypatch.setattr(cuda_link, "JIT_WARMUP", [])
    monkeypatch.setattr(cuda_link, "_load_nvjitlink", lambda: drv.calls.append("nvJitLink"))
    cuda_link.prewarm_routes("ctx", "sm_90a")
    cuda_link.prewarm_routes("ctx", "sm_90a")  # once per process
    assert len(cuda_link._JIT_THREADS) == 1
    cuda_link._JIT_THREADS[0].join()
    return cuda_link.JIT_WARMUP


def test_route_warmup_compiles_a_kernel_for_the_device_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Opening a device starts one thread that puts a kernel for the device's
    arch through the driver's JIT linker in the device's context (nothing is
    loaded into it), then loads nvJitLink; the kernel is valid PTX."""
    from tilelang.backend.target import ptxas_available, run_ptxas

    drv = _FakeDriver()
    assert _warm_with(monkeypatch, drv) == ["ok"]
    assert drv.calls == ["cuCtxSetCurrent", "cuLinkCreate", "cuLinkAddData", "cuLinkComplete", "cuLinkDestroy",
                         "nvJitLink"]
    ptx = drv.ptx.rstrip(b"\0").decode()
    assert ".target sm_90a" in ptx and drv.ptx.endswith(b"\0")
    if ptxas_available():
        r = run_ptxas(ptx, "sm_90a")
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fail, note, destroyed", [
    ("cuCtxSetCurrent", "no context", False),
    ("cuLinkCreate", "cuLinkCreate: 999", False),
    ("cuLinkAddData", "JIT: 999", True),
    ("cuLinkComplete", "JIT: 999", True),
])
def test_route_warmup_failures_change_nothing(monkeypatch, fail, note, destroyed) -> None:  # type: ignore[no-untyped-def]
    """A driver that refuses a step: the warm-up says why, releases what it
    created, never raises, and still loads nvJitLink."""
    drv = _FakeDriver(fail)
    assert _warm_with(monkeypatch, drv) == [note]
    assert ("cuLinkDestroy" in drv.calls) == destroyed
    assert drv.calls[-1] == "nvJitLink"


def test_route_warmup_survives_a_missing_driver(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda_driver, cuda_link

    def missing() -> None:
        raise OSError("libcuda.so: cannot open shared object file")

    monkeypatch.delenv("TILEC_PREWARM", raising=False)
    monkeypatch.setattr(cuda_driver, "_driver", missing)
    monkeypatch.setattr(cuda_link, "_JIT_THREADS", [])
    monkeypatch.setattr(cuda_link, "JIT_WARMUP", [])
    monkeypatch.setattr(cuda_link, "_load_nvjitlink", lambda: None)
    cuda_link.prewarm_routes("ctx", "sm_80")
    cuda_link._JIT_THREADS[0].join()
    assert cuda_link.JIT_WARMUP == ["OSError: libcuda.so: cannot open shared object file"]


def test_route_warmup_is_off_with_the_prewarm(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda_link

    monkeypatch.setenv("TILEC_PREWARM", "0")
    monkeypatch.setattr(cuda_link, "_JIT_THREADS", [])
    cuda_link.prewarm_routes("ctx", "sm_90a")
    assert cuda_link._JIT_THREADS == []


@pytest.mark.parametrize("compiling, loaded", [(False, True), (True, False)])
def test_toolchain_prewarm_leaves_nvjitlink_to_the_device_once_compiling(compiling, loaded) -> None:  # type: ignore[no-untyped-def]
    """nvJitLink's import is ~0.05 s of Python: the toolchain prewarm does it
    only while the program has not begun compiling (afterwards it would hold
    the interpreter while the main thread lowers its first kernel; the
    device's route warm-up loads it, during LLVM, instead)."""
    pytest.importorskip("cuda.bindings")
    code = ("import sys; from tilelang.runtime import cuda_link as L; "
            + ("L.compile_started(); " if compiling else "")
            + "L._prewarm(None); print('cuda.bindings.nvjitlink' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(loaded)], out.stderr


def test_compile_notes_that_compiling_began() -> None:
    code = ("from tilelang.runtime import cuda_link as L; import tilelang; a = L._COMPILING.is_set(); "
            "tilelang.compile('kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(zeros::<f32>([B])); }'); "
            "print(a, L._COMPILING.is_set())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"], out.stderr
