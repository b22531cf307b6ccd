"""What a user sees when the GPU path fails (hgpuerr, 2026-12-07): a located
diagnostic with a code and a help, never a Python traceback or an internal
compiler error, for failures that are the setting's, the card's or the
driver's, not the program's.

The GPU runs on the stub driver (`runtime/cuda_stub.py`: the real
`CudaDevice` over stand-in driver calls, `StubDriver.fail` making a named call
return an error code), so every path here runs on the CPU; the kernels are
compiled to PTX for real (sm_90a), never run.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

import tilelang.run as run
from tests.clirunner import invoke
from tilelang.backend.env_switch import SwitchError, number
from tilelang.runtime import cuda_stub

ADD = """\
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + 1.0);
}

fn main() {
    let x = ones::<f32>([4096]);
    let mut z = zeros::<f32>([4096]);
    add(z.partition([1024]), &x).sync();
    print(z.sum());
}
"""

GEMM = """\
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}

fn main() {
    let a = ones::<f16>([256, 256]);
    let b = ones::<f16>([256, 256]);
    let mut c = zeros::<f32>([256, 256]);
    gemm::<128, 128, 64>(c.partition([128, 128]), &a, &b).sync();
}
"""


def on_stub(monkeypatch: pytest.MonkeyPatch, **fail: int) -> Any:
    """`tilec run --device gpu` on the stub device (an H100's arch), its driver failing the named calls."""
    dev = cuda_stub.stub_device("sm_90a", 132)
    dev.ctx.d.fail.update(fail)
    monkeypatch.setattr(run, "make_device", lambda choice, out: dev)
    return dev


def run_program(tmp_path: Any, text: str, name: str = "prog.tile") -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    status = run.run_file(path, "gpu", out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- TILEC_* switches
def test_a_bad_switch_value_is_e0604_in_tilec_emit_not_an_internal_error(tmp_path: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_GEMM_SPLITK=yes` was an internal compiler error (a ValueError out of the `gpu` stage, exit 101)."""
    monkeypatch.setenv("TILEC_GEMM_SPLITK", "yes")
    path = tmp_path / "gemm.tile"
    path.write_text(GEMM)
    r = invoke("emit", str(path), "--stage", "gpu", "--arch", "sm_90a")
    assert r.exit_code == 1, r.output
    assert "internal compiler error" not in r.output and "Traceback" not in r.output, r.output
    assert r.stderr.count("error[E0604]") == 1, r.stderr  # said once, not once a kernel
    assert "`TILEC_GEMM_SPLITK='yes'`" in r.stderr and "expected 0, 1 or auto" in r.stderr, r.stderr
    assert "help: unset `TILEC_GEMM_SPLITK`" in r.stderr, r.stderr


def test_a_bad_switch_value_is_reported_at_the_launch_in_tilec_run(tmp_path: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_GEMM_WIDEN", "always")
    on_stub(monkeypatch)
    status, _, err = run_program(tmp_path, GEMM)
    assert status == run.EXIT_RUNTIME, err
    assert "error[E0604]" in err and "TILEC_GEMM_WIDEN='always'" in err and "expected 0, 1 or auto" in err, err
    assert "gemm::<128, 128, 64>(c.partition" in err, err  # located at the statement that launched it


def test_numeric_switches_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_PERSISTENT_SMS=lots` was an `int()` ValueError at the launch (an internal error)."""
    from types import SimpleNamespace

    from tilelang.runtime.cuda_arrive import launch_grid

    monkeypatch.setenv("TILEC_PERSISTENT_SMS", "lots")
    with pytest.raises(SwitchError) as e:
        launch_grid(SimpleNamespace(persistent=1, queue=-1, fill=False), (64,), 132)
    assert "TILEC_PERSISTENT_SMS='lots'" in e.value.diag.message and "at least 1" in e.value.diag.message
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", "3")
    assert launch_grid(SimpleNamespace(persistent=1, queue=-1, fill=False), (64,), 132) == (3, 1, 1)
    monkeypatch.setenv("TILEC_X", " 7 ")
    assert number("TILEC_X", 2, 1) == 7
    monkeypatch.setenv("TILEC_X", "0")
    with pytest.raises(ValueError, match="TILEC_X='0'"):  # still a ValueError to the readers' callers
        number("TILEC_X", 2, 1)
    monkeypatch.delenv("TILEC_X")
    assert number("TILEC_X", 2, 1) == 2


def test_on_off_switches_take_0_or_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_SHIFT_DOT=off` was on (every value but "0" was) and `TILEC_TMA_PREFETCH=yes` off (every value but
    "1"): the 31 on/off switches of the backend take 0 or 1 (empty: unset), else E0604."""
    from tilelang.backend.codegen.shift_dot import enabled
    from tilelang.backend.env_switch import flag
    from tilelang.backend.target import tma_prefetch_default

    for value, on in (("", True), ("1", True), ("0", False)):
        monkeypatch.setenv("TILEC_SHIFT_DOT", value)
        assert enabled() is on
    monkeypatch.setenv("TILEC_SHIFT_DOT", "off")
    with pytest.raises(SwitchError, match=r"TILEC_SHIFT_DOT='off'.*expected 0 or 1"):
        enabled()
    monkeypatch.setenv("TILEC_TMA_PREFETCH", "yes")
    with pytest.raises(SwitchError, match="TILEC_TMA_PREFETCH='yes'"):
        tma_prefetch_default()
    monkeypatch.delenv("TILEC_TMA_PREFETCH")
    assert tma_prefetch_default() is False and flag("TILEC_TMA_PREFETCH", "1") is True


# ---------------------------------------------------------------- kernel faults
ILLEGAL_ADDRESS, LAUNCH_TIMEOUT = 700, 702  # CUresult codes


@pytest.fixture
def fresh_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """No kernel fault met yet in this process (`cuda_driver.LOST` is process-wide, as the context is)."""
    from tilelang.runtime import cuda_driver

    monkeypatch.setattr(cuda_driver, "LOST", [])


def test_a_kernel_fault_names_the_kernel_and_its_launch(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                        fresh_context: None) -> None:
    """An illegal address met by the stream's sync was "CUDA error in cuStreamSynchronize" at the statement,
    with a help about the driver refusing `cuStreamSynchronize`."""
    on_stub(monkeypatch, cuStreamSynchronize=ILLEGAL_ADDRESS)
    status, out, err = run_program(tmp_path, ADD)
    assert status == run.EXIT_RUNTIME and out == "", err
    assert "error[E0610]: kernel `add` failed on the GPU: it accessed memory outside every allocation " \
           "(CUDA_ERROR_ILLEGAL_ADDRESS)" in err, err
    assert "^^^^ this launch of `add` failed" in err, err
    assert "--sanitize" in err and "bug in tilec" in err and "context is lost" in err, err
    assert "CUDA error in cuStreamSynchronize" not in err, err


def test_a_timeout_met_by_a_wait_is_located_at_the_launch(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                          fresh_context: None) -> None:
    on_stub(monkeypatch, cuStreamSynchronize=LAUNCH_TIMEOUT)
    text = ADD.replace("add(z.partition([1024]), &x).sync();",
                       "let h = add(z.partition([1024]), &x).launch();\n    h.wait();")
    status, _, err = run_program(tmp_path, text)
    assert status == run.EXIT_RUNTIME, err
    assert "kernel `add` failed on the GPU: it ran longer than the display driver's watchdog allows" in err, err
    assert "let h = add(z.partition([1024]), &x).launch();" in err and "this launch of `add` failed" in err, err
    assert "help: make each launch shorter" in err, err


def test_after_a_fault_later_gpu_work_says_the_context_was_lost(monkeypatch: pytest.MonkeyPatch,
                                                                fresh_context: None) -> None:
    """After a fault every driver call fails with the same sticky code: the next statement that needs the GPU
    (an allocation here) says that the context was lost by the first failure, not "CUDA error in cuMemAlloc"."""
    from tilelang.diagnostics.model import TileError

    dev = on_stub(monkeypatch, cuStreamSynchronize=ILLEGAL_ADDRESS)
    with pytest.raises(TileError) as first:
        run.execute(ADD, "gpu", out=io.StringIO(), name="first.tile")
    assert "kernel `add` failed" in first.value.diagnostics[0].message
    dev.ctx.d.fail.update(cuMemAlloc=ILLEGAL_ADDRESS)  # (the pool's free lists hold no block of the size)
    later_text = "fn main() {\n    let y = zeros::<f32>([1 << 20]);\n    print(y.sum());\n}\n"
    with pytest.raises(TileError) as later:
        run.execute(later_text, "gpu", out=io.StringIO(), name="later.tile")
    d = later.value.diagnostics[0]
    assert d.message == ("the GPU cannot run `cuMemAlloc`: an earlier kernel failed (CUDA_ERROR_ILLEGAL_ADDRESS) "
                         "and the GPU's context is lost"), d.message
    assert d.labels and d.labels[0].span.start == later_text.index("let y") and d.help, d


# ---------------------------------------------------------------- the card's limits
TRANSPOSE = """\
kernel fn tr<const R: i32, const C: i32>(z: &mut Tensor<f32, [C, R]>, x: &Tensor<f32, [?, ?]>) {
    let t = x.partition([R, C]).load([block_id(1), block_id(0)]);
    z.store(t.transpose());
}

fn main() {
    let x = ones::<f32>([256, 128]);
    let mut z = zeros::<f32>([128, 256]);
    tr::<256, 128>(z.partition([128, 256]), &x).sync();
}
"""


def test_a_block_over_the_cards_shared_memory_is_e0603_at_the_launch(tmp_path: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A transpose through 128 KB of shared memory compiles for sm_80 (an A100 gives a block 163 KB), but an
    sm_86 card gives 99 KB: that was the driver's bare CUDA_ERROR_INVALID_VALUE from `cuFuncSetAttribute`."""
    import dataclasses

    dev = cuda_stub.stub_device("sm_80", 82)
    dev.ctx.info = dataclasses.replace(dev.ctx.info, name="NVIDIA GeForce RTX 3090", minor=6,
                                       max_smem_optin=99 * 1024)
    dev.ctx.d.fail.update(cuFuncSetAttribute=1)  # what the driver answers: CUDA_ERROR_INVALID_VALUE
    monkeypatch.setattr(run, "make_device", lambda choice, out: dev)
    status, _, err = run_program(tmp_path, TRANSPOSE)
    assert status == run.EXIT_RUNTIME, err
    assert "error[E0603]: kernel `tr` needs 131072 bytes of shared memory a block, more than the 101376 this GPU " \
           "gives one" in err, err
    assert "tr::<256, 128>(z.partition" in err and "(NVIDIA GeForce RTX 3090, sm_86)" in err, err
    assert "help: use smaller tiles" in err and "CUDA_ERROR_INVALID_VALUE" not in err, err


def test_a_device_that_does_not_say_its_limit_is_not_taken_as_unlimited() -> None:
    """`fits_smem` read the limit with `getattr(.., None)` and skipped the check where a (test's) device did not
    say it: a real context always does (`DeviceInfo.max_smem_optin`), and every stand-in now does too, so a
    device without it is a bug, not a card without a limit (hfix6)."""
    from types import SimpleNamespace

    from tilelang.diagnostics.model import TileError
    from tilelang.runtime.cuda import fits_smem

    with pytest.raises(AttributeError):
        fits_smem(SimpleNamespace(name="stand-in", arch="sm_90"), "k", 1 << 20, None)
    fits_smem(cuda_stub.StubContext("sm_90a").info, "k", 227 * 1024, None)  # the stub's H100: fits
    with pytest.raises(TileError, match="needs 232449 bytes"):
        fits_smem(cuda_stub.StubContext("sm_90a").info, "k", 227 * 1024 + 1, None)


# ---------------------------------------------------------------- is there a GPU
class _Driver:
    """A driver binding that starts with `init` (a CUresult name), reports CUDA `version` and `count` GPUs."""

    def __init__(self, init: str = "CUDA_SUCCESS", version: int = 12080, count: int = 1) -> None:
        from cuda.bindings import driver

        self.CUresult = driver.CUresult
        self.init, self.version, self.count = getattr(driver.CUresult, init), version, count

    def cuInit(self, flags: int) -> tuple[Any, ...]:
        return (self.init,)

    def cuDriverGetVersion(self) -> tuple[Any, ...]:
        return (self.CUresult.CUDA_SUCCESS, self.version)

    def cuDeviceGetCount(self) -> tuple[Any, ...]:
        return (self.CUresult.CUDA_SUCCESS, self.count)

    def cuGetErrorName(self, err: Any) -> tuple[Any, ...]:
        return (self.CUresult.CUDA_SUCCESS, err.name.encode())

    def cuGetErrorString(self, err: Any) -> tuple[Any, ...]:
        return (self.CUresult.CUDA_SUCCESS, b"")


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Install a `_Driver` (`driver(**kw)`) as the binding `why_unavailable` asks; its answer is cached a
    process, so cleared before and after."""
    from tilelang.runtime import cuda_driver

    def install(**kw: Any) -> None:
        monkeypatch.setattr(cuda_driver, "_driver", lambda: _Driver(**kw))
        cuda_driver.why_unavailable.cache_clear()

    yield install
    cuda_driver.why_unavailable.cache_clear()


@pytest.mark.parametrize(("kw", "why"), [
    ({"init": "CUDA_ERROR_NO_DEVICE"}, "the NVIDIA driver found no GPU (CUDA_ERROR_NO_DEVICE)"),
    ({"init": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, "the NVIDIA driver failed to start (CUDA_ERROR_SYSTEM_DRIVER"),
    ({"version": 11080}, "the NVIDIA driver runs CUDA 11.8, older than the CUDA 12.0 tilec's kernels need"),
    ({"count": 0}, "the NVIDIA driver found no GPU"),
])
def test_device_gpu_says_why_there_is_no_gpu(tmp_path: Any, driver: Any, kw: dict[str, Any], why: str) -> None:
    """Every case was "no CUDA driver or device was found on this machine"; a driver too old for PTX 8.0 was
    taken as a GPU, and failed at the first kernel's load."""
    driver(**kw)
    status, out, err = run_program(tmp_path, "fn main() {\n    print(1);\n}\n")
    assert status == run.EXIT_RUNTIME and out == "", err
    assert err.startswith(f"error: cannot run on the GPU: {why}"), err
    assert "help: run on the CPU interpreter with `--device cpu`" in err, err


def test_auto_says_once_that_it_fell_back_where_a_driver_cannot_run(tmp_path: Any, driver: Any) -> None:
    """`--device auto` with a driver that finds no GPU runs on the CPU and says so, once (not a launch); on a
    machine without a driver it says nothing (the CPU is what `auto` means there)."""
    path = tmp_path / "p.tile"
    path.write_text(ADD.replace("add(z.partition([1024]), &x).sync();",
                                "add(z.partition([1024]), &x).sync();\n    add(z.partition([1024]), &x).sync();"))
    driver(init="CUDA_ERROR_NO_DEVICE")
    out, err = io.StringIO(), io.StringIO()
    assert run.run_file(path, "auto", out=out, err=err) == run.EXIT_OK, err.getvalue()
    assert out.getvalue() == "8192.0\n"
    assert err.getvalue() == ("note: running on the CPU interpreter: the NVIDIA driver found no GPU "
                              "(CUDA_ERROR_NO_DEVICE)\nhelp: `--device cpu` says the same without this note; "
                              "`--device gpu` makes it an error\n"), err.getvalue()
    from tilelang.runtime import cuda_driver

    def missing() -> Any:
        raise OSError("libcuda.so.1: cannot open shared object file")

    def no_libcuda() -> Any:
        return type("D", (), {"cuInit": staticmethod(lambda flags: missing())})()

    cuda_driver._driver, saved = no_libcuda, cuda_driver._driver  # type: ignore[assignment]
    try:
        cuda_driver.why_unavailable.cache_clear()
        assert cuda_driver.why_unavailable().startswith("no NVIDIA driver is installed")
        out, err = io.StringIO(), io.StringIO()
        assert run.run_file(path, "auto", out=out, err=err) == run.EXIT_OK
        assert err.getvalue() == "" and out.getvalue() == "8192.0\n"
    finally:
        cuda_driver._driver = saved  # type: ignore[assignment]


# ---------------------------------------------------------------- the assembler refuses the PTX
def test_ptx_the_assembler_refuses_is_an_internal_error_naming_the_kernel_and_the_saved_ptx(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch, fresh_context: None) -> None:
    """The driver JIT refusing the PTX (what a `ptxas` that fails on emitted code looks like at run time) was
    "CUDA error in loading the compiled kernel" (E0610, exit 3, a help to run on the CPU), naming no kernel and
    keeping no PTX: it is tilec's bug, an internal error (exit 101) that names the kernel and saves the PTX,
    with the assembler's words first in it."""
    from tilelang.runtime import cuda_link
    from tilelang.runtime.cuda_module import Module

    dev = on_stub(monkeypatch)
    d = dev.ctx.d

    def refuse(image: bytes, n: int, opts: Any, values: Any) -> tuple[Any, ...]:
        log = b"ptxas application ptx input, line 42; error   : Unknown symbol '%r99'"
        values[0][: len(log)] = log
        return (d._real.CUresult.CUDA_ERROR_INVALID_PTX, None)

    d.cuModuleLoadDataEx = refuse
    monkeypatch.setattr(dev.ctx, "load_ptx", lambda ptx, key=None: Module.from_ptx(dev.ctx, ptx, key))
    monkeypatch.setattr(cuda_link, "_nvjitlink_cubin", lambda ptx, arch: None)  # the driver JIT's route
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILEC_ICE_DIR", str(tmp_path / "ice"))
    status, _, err = run_program(tmp_path, ADD)
    assert status == run.EXIT_ICE, err
    assert "error: internal compiler error: ICE: the CUDA driver's assembler refused the PTX tilec generated " \
           "for kernel `add`: the PTX is saved in " in err, err
    assert "Unknown symbol '%r99'" in err and "please report it" in err, err
    (saved,) = (tmp_path / "ice").glob("tilec-ice-*.ptx")
    text = saved.read_text()
    assert text.startswith("// kernel `add`: CUDA_ERROR_INVALID_PTX") and "// ptxas application ptx input" in text
    assert ".entry add" in text and str(saved) in err


def test_llvm_failing_on_a_kernel_is_an_internal_error_naming_it(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                                 fresh_context: None) -> None:
    """The LLVM -> PTX step raising (llvmlite's RuntimeError on IR it refuses) escaped the launch unnamed; a
    ValueError from it was "CUDA error in compiling a kernel" with the help "turn PDL off"."""
    import tilelang.backend as backend

    on_stub(monkeypatch)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))

    def llc(*args: Any, **kw: Any) -> str:
        raise RuntimeError("LLVM ERROR: Cannot select: 0x5555 i32 = NVPTXISD::Wrapper")

    monkeypatch.setattr(backend, "llvm_to_ptx", llc)
    status, _, err = run_program(tmp_path, ADD)
    assert status == run.EXIT_ICE, err
    assert "internal compiler error: ICE: compiling kernel `add` for sm_90a failed: RuntimeError: LLVM ERROR: " \
           "Cannot select" in err, err


def test_an_unknown_tilec_arch_is_e0604(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_ARCH=sm_100` was taken, and every kernel's compile failed with "turn PDL off (TILEC_PDL=0)"."""
    from tilelang.runtime.cuda_link import ptx_arch

    monkeypatch.setenv("TILEC_ARCH", "sm_100")
    with pytest.raises(SwitchError) as e:
        ptx_arch(9, 0)
    assert "TILEC_ARCH='sm_100'" in e.value.diag.message and "sm_80, sm_86, sm_89, sm_90 or sm_90a" in \
        e.value.diag.message, e.value.diag.message
    monkeypatch.setenv("TILEC_ARCH", "sm_80")
    assert ptx_arch(9, 0) == "sm_80"
    monkeypatch.setenv("TILEC_ARCH", "sm_90a")  # wgmma code for an A100: the driver would refuse it at the load
    with pytest.raises(SwitchError, match=r"compute capability 8\.0.*runs: sm_80$"):
        ptx_arch(8, 0)
    assert ptx_arch(9, 0) == "sm_90a"
    monkeypatch.setenv("TILEC_ARCH", "sm_86")
    assert ptx_arch(8, 9) == "sm_86"


def test_tilec_emit_names_the_kernel_llvm_failed_on(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tilec emit --stage ptx` said "stage `ptx` crashed on add.tile": which of the file's kernels, not said."""
    import tilelang.backend as backend

    def llc(*args: Any, **kw: Any) -> str:
        raise RuntimeError("LLVM ERROR: Cannot select")

    monkeypatch.setattr(backend, "llvm_to_ptx", llc)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILEC_ICE_DIR", str(tmp_path / "ice"))
    path = tmp_path / "add.tile"
    path.write_text(ADD)
    r = invoke("emit", str(path), "--stage", "ptx", "--arch", "sm_90a")
    assert r.exit_code == 101, r.output
    assert "emitting kernel `add` [B = 1024] for sm_90a failed: RuntimeError: LLVM ERROR: Cannot select" in r.stderr, \
        r.stderr


def test_out_of_gpu_memory_says_how_much_of_how_much(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                     fresh_context: None) -> None:
    """Was "CUDA error in cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY" (with a help): the sizes are the program's."""
    on_stub(monkeypatch, cuMemAlloc=2)  # CUDA_ERROR_OUT_OF_MEMORY
    text = "fn main() {\n    let a = zeros::<f32>([1 << 20]);\n    print(a.sum());\n}\n"
    status, _, err = run_program(tmp_path, text)
    assert status == run.EXIT_RUNTIME, err
    assert "error[E0610]: out of GPU memory: 4.0 MiB more does not fit in the GPU's 80.0 GiB, of which this " \
           "program's tensors hold 16.0 KiB" in err, err  # (the device's assert words)
    assert "let a = zeros::<f32>([1 << 20]);" in err and "note: the driver said: cuMemAlloc: " \
           "CUDA_ERROR_OUT_OF_MEMORY" in err and "help: use smaller tensors" in err, err


def test_a_cubin_the_driver_cannot_load_falls_back_to_the_driver_jit(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                                     fresh_context: None) -> None:
    """nvJitLink's cubin refused by an older driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION) was E0610 "CUDA error
    in cuModuleLoadData" and no kernel ran: the driver's JIT, which the driver always understands, loads the PTX."""
    from tilelang.runtime import cuda_link
    from tilelang.runtime.cuda_module import Module

    dev = on_stub(monkeypatch)
    d = dev.ctx.d
    d.cuModuleLoadData = lambda image: (d._real.CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, None)
    jit: list[bytes] = []

    def load_ptx(image: bytes, n: int, opts: Any, values: Any) -> tuple[Any, ...]:
        jit.append(image)
        return (d._real.CUresult.CUDA_SUCCESS, d.CUmodule(0xC0DE))

    d.cuModuleLoadDataEx = load_ptx
    d.cuModuleGetFunction = lambda mod, name: (d._real.CUresult.CUDA_SUCCESS, d.CUfunction(0xF00))
    monkeypatch.setattr(dev.ctx, "load_ptx", lambda ptx, key=None: Module.from_ptx(dev.ctx, ptx, key))
    monkeypatch.setattr(cuda_link, "_nvjitlink_cubin", lambda ptx, arch: b"a cubin of a newer CUDA")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    status, _, err = run_program(tmp_path, ADD)
    assert status == run.EXIT_OK, err
    assert len(jit) == 1 and b".entry add" in jit[0] and len(d.launches) == 1


def test_the_python_api_names_the_kernel_that_faulted(monkeypatch: pytest.MonkeyPatch, fresh_context: None) -> None:
    """The Python API's `.sync()` of a kernel that faulted said "CUDA error in cuStreamSynchronize"."""
    import tilelang
    from tilelang.api.errors import ExecutionError
    from tilelang.runtime.cuda_stub import DevArray

    dev = cuda_stub.stub_device("sm_90a", 132)
    with cuda_stub.installed(dev):
        mod = tilelang.compile(ADD.split("fn main")[0])
        z, x = DevArray.zeros((4096,)), DevArray.zeros((4096,))
        dev.ctx.d.fail["cuStreamSynchronize"] = ILLEGAL_ADDRESS
        with pytest.raises(ExecutionError) as e:
            mod.add(tilelang.partition(z, [1024]), x).sync()
    assert str(e.value).startswith("error[E0610]: kernel `add` failed on the GPU: it accessed memory outside every "
                                   "allocation"), str(e.value)
    assert e.value.code == "E0610" and "this kernel failed on the GPU" in str(e.value) and "--sanitize" in str(e.value)


def test_auto_falls_back_where_the_gpu_cannot_be_opened(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                        driver: Any, fresh_context: None) -> None:
    """A GPU the driver has but that cannot be opened (exclusive mode, another process holds it) stopped
    `--device auto` with "CUDA error in cuDevicePrimaryCtxRetain" and a help to report it; `auto` runs on the
    CPU and says why, `--device gpu` says it with a help about the busy GPU."""
    from tilelang.runtime import cuda, cuda_driver

    driver()  # a driver with one GPU

    def busy(*args: Any, **kw: Any) -> Any:
        raise cuda_driver.driver_error(cuda_driver._driver().CUresult.CUDA_ERROR_DEVICE_UNAVAILABLE,
                                       "cuDevicePrimaryCtxRetain")

    monkeypatch.setattr(cuda, "CudaDevice", busy)
    path = tmp_path / "p.tile"
    path.write_text("fn main() {\n    print(1);\n}\n")
    out, err = io.StringIO(), io.StringIO()
    assert run.run_file(path, "auto", out=out, err=err) == run.EXIT_OK and out.getvalue() == "1\n"
    assert err.getvalue().startswith("note: running on the CPU interpreter: the GPU could not be opened (CUDA "
                                     "error in cuDevicePrimaryCtxRetain: CUDA_ERROR_DEVICE_UNAVAILABLE)"), err.getvalue()
    status, _, text = run_program(tmp_path, "fn main() {\n    print(1);\n}\n")
    assert status == run.EXIT_RUNTIME and "CUDA_ERROR_DEVICE_UNAVAILABLE" in text, text
    assert "help: the GPU is busy or in exclusive-process mode" in text, text


def test_a_fault_in_a_graph_replay_names_the_graphs_kernels(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                            fresh_context: None) -> None:
    dev = on_stub(monkeypatch)
    monkeypatch.setattr(dev, "capture", lambda stream: None)  # (the stub records no graphs: replayed op by op)
    monkeypatch.setattr(dev, "end_capture", lambda stream: False)
    text = ADD.replace("add(z.partition([1024]), &x).sync();", """let mut w = zeros::<f32>([4096]);
    let g = graph {
        add(z.partition([1024]), &x);
        add(w.partition([1024]), &x);
    };
    g.replay();
    g.replay();""")
    dev.ctx.d.fail["cuStreamSynchronize"] = 0
    original = dev.sync
    calls = []

    def sync(stream: Any = None) -> None:
        calls.append(stream)
        if len(calls) == 2:  # the first replay's wait (of its capture, which the stub makes none), then the second's
            dev.ctx.d.fail["cuStreamSynchronize"] = LAUNCH_TIMEOUT
        original(stream)

    monkeypatch.setattr(dev, "sync", sync)
    status, _, err = run_program(tmp_path, text)
    assert status == run.EXIT_RUNTIME, err
    assert "error[E0610]: a kernel of the graph (`add`) failed on the GPU: it ran longer than the display " \
           "driver's watchdog allows" in err, err
    assert err.count("g.replay();") == 1 and "while running this statement" in err, err
    calls.clear()  # the first replay's own wait (the capture the stub does not make) meets it too
    dev.ctx.d.fail["cuStreamSynchronize"] = ILLEGAL_ADDRESS
    from tilelang.runtime import cuda_driver

    monkeypatch.setattr(cuda_driver, "LOST", [])
    monkeypatch.setattr(dev, "sync", original)
    status, _, err = run_program(tmp_path, text)
    assert status == run.EXIT_RUNTIME and "a kernel of the graph (`add`) failed on the GPU" in err, err
    assert "g.replay();" in err, err


def test_an_ignored_switch_is_a_tilec_warning_line_on_the_command_line(tmp_path: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A setting a module ignores with a RuntimeWarning (`TILEC_CARVEOUT=abc`, `TILEC_PDL=zzz`, `TILEC_TRACE=x`:
    read as the GPU runtime's modules are imported) printed Python's ".../occupancy.py:190: RuntimeWarning: ..."
    and the source line of the `warnings.warn` call. (`TILEC_L2_EVICT=2`, this test's case before, is E0604 now,
    hfix6: the warning is raised here where a command meets it.)"""
    import warnings

    from tilelang import driver

    shown = driver.format_output

    def warns(stage: str, result: Any) -> str:
        warnings.warn("TILEC_CARVEOUT='abc' ignored: a shared-memory carveout is a percent 0..100, not 'abc'",
                      RuntimeWarning, stacklevel=1)
        return shown(stage, result)

    monkeypatch.setattr(driver, "format_output", warns)
    path = tmp_path / "add.tile"
    path.write_text(ADD)
    r = invoke("emit", str(path), "--stage", "gpu", "--arch", "sm_90a")
    assert r.exit_code == 0, r.output
    assert "warning: TILEC_CARVEOUT='abc' ignored: a shared-memory carveout is a percent 0..100, not 'abc'\n" \
        in r.stderr, r.stderr
    assert "RuntimeWarning" not in r.stderr and "warnings.warn" not in r.stderr, r.stderr
    monkeypatch.setattr(driver, "format_output", shown)
    monkeypatch.setenv("TILEC_L2_EVICT", "2")
    r = invoke("emit", str(path), "--stage", "gpu", "--arch", "sm_90a")
    assert r.exit_code == 1 and r.stderr.count("error[E0604]") == 1 and "`TILEC_L2_EVICT='2'`" in r.stderr, r.output


def test_a_gpu_limit_of_one_instance_names_the_launch_and_the_instance(tmp_path: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """E0603 of a generic kernel pointed only inside the kernel (`t.transpose()`): with two launches of other
    sizes, which one could not be told. `tilec run` labels the launch with the instance's generics, and
    `tilec emit` notes the instance."""
    on_stub(monkeypatch)
    text = TRANSPOSE.replace("    tr::<256, 128>(z.partition([128, 256]), &x).sync();\n",
                             "    tr::<64, 64>(z.partition([64, 64]), &x).sync();\n"
                             "    let y = ones::<f32>([256, 256]);\n    let mut w = zeros::<f32>([256, 256]);\n"
                             "    tr::<256, 256>(w.partition([256, 256]), &y).sync();\n")
    status, _, err = run_program(tmp_path, text)
    assert status == run.EXIT_RUNTIME, err
    assert "error[E0603]: this operation needs 262144 bytes of shared memory" in err, err
    assert "z.store(t.transpose());" in err and "tr::<256, 256>(w.partition" in err, err
    assert "the launch whose kernel this is (R = 256, C = 256)" in err, err
    r = invoke("emit", str(tmp_path / "prog.tile"), "--stage", "llvm", "--arch", "sm_80", "-o", str(tmp_path / "x.ll"))
    assert r.exit_code == 1 and "note: in the instance `tr` [C = 256, R = 256]" in r.stderr, r.output


def test_the_python_api_says_why_there_is_no_gpu(driver: Any) -> None:
    """The API's E0807 said "no CUDA driver or device was found" whatever the reason."""
    from tilelang.api import engines
    from tilelang.api.errors import ExecutionError

    driver(version=11040)
    assert "cuda:9" not in engines._DEVICES
    with pytest.raises(ExecutionError) as e:
        engines._device("cuda:9")
    assert "cannot run on the GPU: the NVIDIA driver runs CUDA 11.4, older than the CUDA 12.0" in str(e.value)


def test_a_256_by_256_gemm_tile_compiles_on_sm90a(tmp_path: Any) -> None:
    """The plain GEMM loop at 256 x 256 x 64 (f16 in, f32 out) compiled for sm_80 but was E0603 on sm_90a: the
    Hopper plan's 3-stage ring (196,608 bytes) left no room for the epilogue's 266,240-byte staging of the store,
    which does not fit the dead ring either. The Hopper pipeline now refuses such a loop (a note says why) and
    sm_80's ring, which sm_90a falls back to, runs it."""
    path = tmp_path / "gemm.tile"
    path.write_text(GEMM.replace("gemm::<128, 128, 64>(c.partition([128, 128])", "gemm::<256, 256, 64>(c.partition("
                                 "[256, 256])"))
    r = invoke("emit", str(path), "--stage", "llvm", "--arch", "sm_90a", "--explain", "-o", str(tmp_path / "g.ll"))
    assert r.exit_code == 0, r.output
    assert "runs on the cp.async ring with ldmatrix + mma.sync (sm_80's pipeline)" in r.stderr, r.stderr
    assert "the epilogue stages its [256, 256] store in 266240 bytes of shared memory" in r.stderr, r.stderr
