"""Every launch path refuses a `&Tensor` argument whose size differs from the one the kernel's type fixes
(E0501; E0504 where it gives a generic another value than the partition does, as here), before anything runs,
on the interpreter and in the GPU launch code (the real `CudaDevice` over the stub driver, `runtime/cuda_stub.py`:
the PTX is compiled, never run); an operation or graph whose array shrank since the call is E0810.

Why it matters: the GPU code takes such a dimension as a constant (`backend/llvm.static_dims`, the default), so
its bounds checks fold away and a launch with a smaller tensor would read past its end. `bind_launch` checks
it for Tile callers and the Python API (and so for graphs, the tuner, `torch_op` and the LLM engine, which build
their launches through them); the engines check again right before a kernel runs (`ir/arg_dims.py`), so a path
that reached one unbound is stopped there too. Here: `w: &Tensor<f32, [N]>` with `N` fixed by the `&mut`
partition's tile (`[N]` shared by `x`'s second dimension), launched with 12 elements for 16."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tilelang
import tilelang.run as run
from tilelang.diagnostics.model import TileError
from tilelang.interp import run_kernel
from tilelang.runtime import cuda_fake, cuda_stub
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.cuda_stub import DevArray

P = tilelang.partition
N = 16

KERNEL = """
kernel fn rowmul<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>, w: &Tensor<f32, [N]>) {
    y.store(x.load_like(y) * w.load().reshape([1, N]));
}
"""

TUNED = """
#[autotune(num_warps = [4, 8])]
kernel fn rowmul<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>, w: &Tensor<f32, [N]>) {
    y.store(x.load_like(y) * w.load().reshape([1, N]));
}
"""


def main(w_size: int, kernel: str = KERNEL, graph: bool = False) -> str:
    """A Tile program whose `w` has `w_size` elements known only at run time (`load_npy`): the checker cannot
    refuse it; the launch must."""
    launch = "rowmul(y.partition([1, 16]), &x, &w)"
    body = f"let g = graph {{ {launch}; }};\n    g.replay();" if graph else f"{launch}.sync();"
    return kernel + f"""
fn main() {{
    let x = ones::<f32>([4, 16]);
    let w = load_npy("w{w_size}.npy");
    let mut y = zeros::<f32>([4, 16]);
    {body}
    print(y.sum());
}}
"""


def tile_run(tmp_path: Path, text: str, device: str) -> tuple[int, str, str]:
    for n in (12, N):
        np.save(tmp_path / f"w{n}.npy", np.full(n, 2.0, np.float32))
    path = tmp_path / "prog.tile"
    path.write_text(text.replace('load_npy("w', f'load_npy("{tmp_path}/w'))
    out, err = io.StringIO(), io.StringIO()
    status = run.run_file(path, device, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# The binding's words: `N` is 16 from the partition's tile and 12 from `w` (E0504); the engines' check, which
# knows the instance's sizes only, says E0501
BOUND = r"E0504\]: `N` of kernel `rowmul` is 12 from dimension 0 of `w` but 16 from the tile shape of `y`"


def refused(err: str) -> None:
    assert re.search(BOUND, err), err
    assert "Traceback" not in err and "internal compiler error" not in err, err


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`tilec run --device gpu` on the stub device (an H100's arch); `dev.ctx.d.launches` records each
    `cuLaunchKernel`."""
    dev = cuda_stub.stub_device("sm_90a", 132)
    monkeypatch.setattr(run, "make_device", lambda choice, out: dev)
    return dev


# ---------------------------------------------------------------- Tile `main`
@pytest.mark.parametrize("graph", [False, True], ids=["sync", "graph"])
def test_a_tile_launch_of_another_size_is_refused_on_the_cpu(tmp_path: Path, graph: bool) -> None:
    status, out, err = tile_run(tmp_path, main(12, graph=graph), "cpu")
    assert status == run.EXIT_RUNTIME and out == "", (out, err)
    refused(err)
    status, out, err = tile_run(tmp_path, main(N, graph=graph), "cpu")
    assert status == 0 and out.strip() == "128.0", (out, err)


@pytest.mark.parametrize("graph", [False, True], ids=["sync", "graph"])
def test_a_tile_launch_of_another_size_is_refused_on_the_gpu(tmp_path: Path, stub: Any, graph: bool) -> None:
    """The GPU path (`CudaDevice`, the CUDA graph's capture for `graph { }`): refused before any launch."""
    status, out, err = tile_run(tmp_path, main(12, graph=graph), "gpu")
    assert status == run.EXIT_RUNTIME and out == "", (out, err)
    refused(err)
    assert stub.ctx.d.launches == []
    status, _, err = tile_run(tmp_path, main(N, graph=graph), "gpu")
    assert status == 0 and len(stub.ctx.d.launches) == 1, err  # (a graph's: captured once)
    assert stub.ctx.d.calls["cuGraphLaunch"] == (1 if graph else 0)


def test_an_autotuned_launch_of_another_size_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        stub: Any) -> None:
    """The tuner binds the launch before it times a candidate: no candidate runs."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    status, out, err = tile_run(tmp_path, main(12, TUNED), "gpu")
    assert status == run.EXIT_RUNTIME and out == "", (out, err)
    refused(err)
    assert stub.ctx.d.launches == []
    status, out, err = tile_run(tmp_path, main(12, TUNED), "cpu")
    assert status == run.EXIT_RUNTIME and out == "", (out, err)
    refused(err)


# ---------------------------------------------------------------- the Python API
def _args(w_size: int = N, lib: Any = np.zeros) -> tuple[Any, Any, Any]:
    return lib((4, N), np.float32), lib((4, N), np.float32), lib((w_size,), np.float32)


def test_a_python_call_of_another_size_is_refused_on_the_cpu_after_a_good_one() -> None:
    """The first call leaves a plan (`api/fastpath.py`); a call of another size has another key and takes the
    checked path: refused (E0504: `N` is 16 from the partition, 12 from `w`), also where `w` is a view of a
    larger array, or `x`'s second
    dimension (the `[N]` shared with the partition's tile) differs."""
    mod = tilelang.compile(KERNEL)
    y, x, w = _args()
    x[:] = 1.0
    w[:] = 3.0
    mod.rowmul(P(y, [1, N]), x, w).sync()
    assert float(y.sum()) == 3.0 * 4 * N
    with pytest.raises(tilelang.CallError, match=BOUND):
        mod.rowmul(P(y, [1, N]), x, np.ones(12, np.float32))
    big = np.full(2 * N, 5.0, np.float32)
    with pytest.raises(tilelang.CallError, match="E0504"):
        mod.rowmul(P(y, [1, N]), x, big[: N - 4])
    with pytest.raises(tilelang.CallError, match="E0802"):  # a strided view: refused, not read as a row
        mod.rowmul(P(y, [1, N]), x, big[::2])
    mod.rowmul(P(y, [1, N]), x, big[N:]).sync()  # a view of the right size runs
    assert float(y.sum()) == 5.0 * 4 * N
    with pytest.raises(tilelang.CallError, match=r"E0504\]: `N` of kernel `rowmul` is 12 from dimension 1 of `x`"):
        mod.rowmul(P(y, [1, N]), np.ones((4, 12), np.float32), w)


def test_an_operation_whose_array_shrank_since_the_call_is_refused(gpu: Any) -> None:
    """An operation keeps the sizes it was bound with: a NumPy array resized in place after the call, or a
    `cuda:0` array whose interface now gives fewer elements, is refused at the start (E0810), first run or
    repeat; nothing is launched."""
    mod = tilelang.compile(KERNEL)
    y, x, w = _args()
    op = mod.rowmul(P(y, [1, N]), x, w)
    op.sync()
    w.resize(12, refcheck=False)
    with pytest.raises(tilelang.CallError, match=r"E0810.*now float32 \(12,\), then float32 \(16,\)"):
        op.sync()
    with cuda_stub.installed(gpu):
        y, x, w = _args(lib=DevArray.zeros)
        op = tilelang.compile(KERNEL).rowmul(P(y, [1, N]), x, w)
        n = len(gpu.ctx.d.launches)
        w.host = w.host[:12]
        with pytest.raises(tilelang.CallError, match="E0810"):
            op.sync()
        assert len(gpu.ctx.d.launches) == n


def test_a_python_graph_records_no_call_of_another_size() -> None:
    mod = tilelang.compile(KERNEL)
    y, x, _ = _args()
    with tilelang.graph() as g, pytest.raises(tilelang.CallError, match="E0504"):
        mod.rowmul(P(y, [1, N]), x, np.ones(12, np.float32))
    assert g.operations == []


def test_a_python_graph_replay_after_an_array_shrank_is_refused(gpu: Any) -> None:
    """`tilelang.graph()` replays what it recorded; an array resized since (NumPy in place, or a `cuda:0`
    array's interface, on the stub's CUDA graph: captured at the first replay) is refused before the replay runs
    anything: no new `cuGraphLaunch`."""
    mod = tilelang.compile(KERNEL)
    y, x, w = _args()
    with tilelang.graph() as g:
        mod.rowmul(P(y, [1, N]), x, w).sync()
    g.replay()
    w.resize(12, refcheck=False)
    with pytest.raises(tilelang.CallError, match="E0810"):
        g.replay()
    with cuda_stub.installed(gpu):
        y, x, w = _args(lib=DevArray.zeros)
        with tilelang.graph() as g:
            tilelang.compile(KERNEL).rowmul(P(y, [1, N]), x, w).sync()
        g.replay()
        replays = gpu.ctx.d.calls["cuGraphLaunch"]
        assert replays >= 1
        w.host = w.host[:12]
        with pytest.raises(tilelang.CallError, match="E0810"):
            g.replay()
        assert gpu.ctx.d.calls["cuGraphLaunch"] == replays


@pytest.fixture(scope="module")
def gpu() -> Any:
    return cuda_stub.stub_device("sm_90a", 132)


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if not cuda_fake.can_build():
        return None
    return cuda_fake.stub_native(tmp_path_factory.mktemp("staticnative"))


@pytest.mark.parametrize("how", ["binding", pytest.param("native", marks=pytest.mark.heavy)])  # (heavy: its build ~2.6 s)
def test_a_python_call_of_another_size_is_refused_in_the_gpu_launch_code(gpu: Any, native: Any, how: str) -> None:
    """`cuda:0` memory (`DevArray`) on the stub device: good calls launch (the second through the plan's fast
    launcher, the binding's or the native one), a call of another size after them is refused before any
    launch."""
    if how == "native" and native is None:
        pytest.skip("no C compiler or no Python.h for the native launcher")
    nat = native[0] if how == "native" else None
    with cuda_stub.installed(gpu, nat):
        mod = tilelang.compile(KERNEL)
        y, x, w = _args(lib=DevArray.zeros)
        before = len(gpu.ctx.d.launches) + (cuda_fake.count(native[1], "n_launch") if nat else 0)
        for _ in range(2):
            mod.rowmul(P(y, [1, N]), x, w).sync()
        after = len(gpu.ctx.d.launches) + (cuda_fake.count(native[1], "n_launch") if nat else 0)
        assert after == before + 2
        short = DevArray.zeros((12,))
        with pytest.raises(tilelang.CallError, match=BOUND):
            mod.rowmul(P(y, [1, N]), x, short)
        assert len(gpu.ctx.d.launches) + (cuda_fake.count(native[1], "n_launch") if nat else 0) == after


# ---------------------------------------------------------------- edges of the rule
ZERO = """
kernel fn addw<const N: i32>(y: &mut Tensor<f32, [4]>, w: &Tensor<f32, [N]>) {
    y.store(w.partition([4]).load([block_id(0)]) + 1.0);
}
"""


def test_a_zero_size_dimension_folds_to_no_read(gpu: Any) -> None:
    """`N` = 0 from an empty `w`: the interpreter reads zeros; the GPU code, with 0 folded, has no global load
    left at all (every tile of `w` is past its edge) and launches."""
    mod = tilelang.compile(ZERO)
    y = np.zeros(8, np.float32)
    mod.addw(P(y, [4]), np.zeros(0, np.float32)).sync()
    assert (y == 1.0).all()
    with cuda_stub.installed(gpu):
        n = len(gpu.ctx.d.launches)
        tilelang.compile(ZERO).addw(P(DevArray.zeros((8,)), [4]), DevArray.zeros((0,))).sync()
        assert len(gpu.ctx.d.launches) == n + 1
        ptx = gpu.ctx.ptx["addw"]
        assert "ld.global" not in ptx and "ret;" in ptx


WIDE = """
kernel fn k<const N: i32>(z: &mut Tensor<f32, [16]>, x: &Tensor<f32, [N * 65536 + 16]>) {
    z.store(x.partition([16]).load([0]));
}
"""


def test_a_dimension_past_i32_is_not_wrapped_to_fit() -> None:
    """`N * 65536 + 16` at N = 65536 is 2^32 + 16: the launch compares the whole value (E0501), not the i32
    it would wrap to (16, which the 16-element `x` has), and the lowering refuses the overflow itself."""
    mod = tilelang.compile(WIDE)
    with pytest.raises(tilelang.CallError, match=r"E0501.*dimension 0 of `x` is 16 but kernel `k` expects 4294967312"):
        mod.k[65536](P(np.zeros(16, np.float32), [16]), np.ones(16, np.float32))
    from tilelang.ir.lower import lower_kernel

    with pytest.raises(TileError, match="overflows `i32`"):
        lower_kernel(tilelang.compile(WIDE)._program, "k", {"N": 65536}, {})


DEVICE_FN = """
fn first<const N: i32>(x: &Tensor<f32, [N]>) -> Tile<f32, [4]> { x.partition([4]).load([3]) }
kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {
    z.store(first::<16>(x));
}
"""


def test_a_device_functions_dims_are_never_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device function's `[N]` (16 here) is not the kernel's parameter: the kernel's `x` is `?`, so its
    bounds checks stay the launch's (`%p.x.d0`). Its size is checked at the launch (hrev29: a 14-element `x`
    ran, its last tile read partly, the declared 16 ignored; now E0501, tests/runtime/test_declared_dims.py)."""
    from tilelang import driver
    from tilelang.backend import emit_llvm

    mod = tilelang.compile(DEVICE_FN)
    z = np.zeros(4, np.float32)
    with pytest.raises(tilelang.CallError, match=r"E0501.*dimension 0 of `x` is 14 but function `first` declares 16"):
        mod.k(P(z, [4]), np.arange(14, dtype=np.float32)).sync()
    mod.k(P(z, [4]), np.arange(16, dtype=np.float32)).sync()
    assert z.tolist() == [12.0, 13.0, 14.0, 15.0]
    monkeypatch.delenv("TILEC_STATIC_DIMS", raising=False)
    main_ = "fn main() { let x = ones::<f32>([16]); let mut z = zeros::<f32>([4]); k(z.partition([4]), &x).sync(); }"
    (kir,) = driver.compile(DEVICE_FN + main_, "ir").output
    assert "%p.x.d0" in emit_llvm(kir, "sm_90a").split("{", 1)[1]


# ---------------------------------------------------------------- the engines' own check
def _kernel_ir() -> Any:
    from tilelang import driver

    src = KERNEL + "fn main() { let x = ones::<f32>([4, 16]); let w = ones::<f32>([16]);\n" \
                   "let mut y = zeros::<f32>([4, 16]); rowmul(y.partition([1, 16]), &x, &w).sync(); }\n"
    (k,) = driver.compile(src, "ir").output
    return k


def test_the_interpreter_refuses_an_unbound_launch_of_another_size() -> None:
    """`interp.run_kernel` and `CpuDevice.run`, reached without the binding: E0501, nothing written."""
    k = _kernel_ir()
    y, x, w = _args(12)
    y[:] = 7.0
    for launch in (lambda: run_kernel(k, (4, 1), [y, x, w]), lambda: CpuDevice().run(k, (4, 1), [y, x, w])):
        with pytest.raises(TileError) as e:
            launch()
        assert e.value.diagnostics[0].code == "E0501"
        assert "dimension 0 of `w` is 12 but kernel `rowmul` expects 16" in e.value.diagnostics[0].message
    assert (y == 7.0).all()


def test_the_gpu_runtime_refuses_an_unbound_launch_of_another_size(gpu: Any) -> None:
    """`CudaDevice.run` (its general path) and `fast_launcher` (whose launcher keeps the sizes it was made
    with), reached without the binding: E0501 and no `cuLaunchKernel`; the right sizes launch."""
    k = _kernel_ir()
    prepared = gpu.prepare(k)
    assert prepared.fixed == ((1, 1, N), (2, 0, N))  # x's second dimension and w's, not y's (a `&mut`)
    bufs = [gpu.upload(a) for a in _args(12)]
    n = len(gpu.ctx.d.launches)
    for launch in (lambda: gpu.run(prepared, (4, 1), bufs), lambda: gpu.fast_launcher(prepared, (4, 1), bufs)):
        with pytest.raises(TileError) as e:
            launch()
        assert e.value.diagnostics[0].code == "E0501", e.value
    assert len(gpu.ctx.d.launches) == n
    gpu.run(prepared, (4, 1), [gpu.upload(a) for a in _args()])
    assert len(gpu.ctx.d.launches) == n + 1


# ---------------------------------------------------------------- on a card
@pytest.mark.gpu
@pytest.mark.parametrize("graph", [False, True], ids=["sync", "graph"])
def test_on_the_gpu_the_folded_kernel_runs_and_another_size_is_refused(tmp_path: Path, graph: bool) -> None:
    """The real device under the default (`w`'s and `x`'s N folded in the kernel): the right sizes print what the
    interpreter prints, another size is refused before anything runs; the engines' check on the card too."""
    status, out, err = tile_run(tmp_path, main(12, graph=graph), "gpu")
    assert status == run.EXIT_RUNTIME and out == "", (out, err)
    refused(err)
    status, out, err = tile_run(tmp_path, main(N, graph=graph), "gpu")
    assert status == 0 and out.strip() == "128.0", (out, err)
    from tilelang.runtime.cuda import CudaDevice

    dev = CudaDevice()
    prepared = dev.prepare(_kernel_ir())
    with pytest.raises(TileError) as e:
        dev.run(prepared, (4, 1), [dev.upload(a) for a in _args(12)])
    assert e.value.diagnostics[0].code == "E0501"
