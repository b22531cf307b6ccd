"""A size written in a device function's parameter type is checked at every launch (hrev29). `fn first(t:
&Tensor<f32, [16]>)` given a kernel's `x: &Tensor<f32, [?]>` ran on an 8-element `x` (its loads masked: memory
safe, but the declared 16 accepted and ignored, the function's code computing on a tensor its type says it is
not). The lowering records the size (`ir.DimClaim`), and the engines' last check before a kernel runs
(`ir/arg_dims.py`) refuses another (E0501) on the interpreter, in the GPU launch code (the real `CudaDevice` over
the stub driver: nothing launched), through the Python API's repeated-call plan, and from a Tile `main` whose
tensor's size is known only at run time. Where the checker knows the size, `tilec check` says it
(tests/ui/kernel/E0501_device_fn_declared_dim.tile)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tilelang
import tilelang.run as run
from tilelang.runtime import cuda_stub
from tilelang.runtime.cuda_stub import DevArray

P = tilelang.partition

KERNEL = """
fn first(t: &Tensor<f32, [16]>) -> Tile<f32, [16]> {
    t.partition([16]).load([0])
}
kernel fn k(z: &mut Tensor<f32, [16]>, x: &Tensor<f32, [?]>) {
    z.store(first(x));
}
"""
WORDS = r"E0501\]: dimension 0 of `x` is {} but function `first` declares 16 for it"


@pytest.fixture(scope="module")
def gpu() -> Any:
    return cuda_stub.stub_device("sm_90a", 132)


def test_a_python_call_of_another_size_is_refused_on_the_cpu_after_a_good_one() -> None:
    mod = tilelang.compile(KERNEL)
    z = np.zeros(32, np.float32)
    mod.k(P(z, [16]), np.arange(16, dtype=np.float32)).sync()
    assert z[:16].tolist() == list(range(16))
    for n in (8, 20):
        z[:] = -1.0
        with pytest.raises(tilelang.CallError, match=WORDS.format(n)) as e:
            mod.k(P(z, [16]), np.arange(n, dtype=np.float32)).sync()
        assert "declare it `?` in `first` to take any size" in str(e.value)
        assert (z == -1.0).all()  # nothing ran


def test_a_python_call_of_another_size_is_refused_in_the_gpu_launch_code(gpu: Any) -> None:
    """Two good calls (the second through the plan's fast launcher), then one of another size: refused,
    no `cuLaunchKernel`; the prepared kernel's checked sizes hold the claim."""
    with cuda_stub.installed(gpu):
        mod = tilelang.compile(KERNEL)
        z, x = DevArray.zeros((32,)), DevArray.zeros((16,))
        before = len(gpu.ctx.d.launches)
        for _ in range(2):
            mod.k(P(z, [16]), x).sync()
        assert len(gpu.ctx.d.launches) == before + 2
        with pytest.raises(tilelang.CallError, match=WORDS.format(8)):
            mod.k(P(z, [16]), DevArray.zeros((8,))).sync()
        assert len(gpu.ctx.d.launches) == before + 2


def test_the_engines_refuse_it_unbound(gpu: Any) -> None:
    """`CpuDevice.run` and `CudaDevice.run` reached without the binding: the claim is among the sizes each
    checks (`arg_dims.fixed_dims`), E0501 before anything runs."""
    from tilelang import driver
    from tilelang.diagnostics.model import TileError
    from tilelang.ir import arg_dims
    from tilelang.runtime.cpu import CpuDevice

    main = "fn main() { let x = ones::<f32>([16]); let mut z = zeros::<f32>([16]); k(z.partition([16]), &x).sync(); }"
    (kir,) = driver.compile(KERNEL + main, "ir").output
    assert [(c.param, c.dim, c.size, c.owner) for c in kir.claims] == [(1, 0, 16, "function `first`")]
    assert arg_dims.fixed_dims(kir) == ((1, 0, 16),)
    z, x = np.zeros(16, np.float32), np.ones(8, np.float32)
    with pytest.raises(TileError, match="function `first` declares 16"):
        CpuDevice().run(kir, (1,), [z, x])
    prepared = gpu.prepare(kir)
    n = len(gpu.ctx.d.launches)
    with pytest.raises(TileError, match="function `first` declares 16"):
        gpu.run(prepared, (1,), [gpu.upload(z), gpu.upload(x)])
    assert len(gpu.ctx.d.launches) == n


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_a_tile_launch_of_a_size_known_at_run_time(tmp_path: Path, gpu: Any, monkeypatch: pytest.MonkeyPatch,
                                                   device: str) -> None:
    if device == "gpu":
        monkeypatch.setattr(run, "make_device", lambda choice, out: gpu)
    np.save(tmp_path / "x.npy", np.arange(8, dtype=np.float32))
    path = tmp_path / "prog.tile"
    path.write_text(KERNEL + f"""
fn main() {{
    let x = load_npy("{tmp_path}/x.npy");
    let mut z = zeros::<f32>([16]);
    k(z.partition([16]), &x).sync();
    print(z.sum());
}}
""")
    before = len(gpu.ctx.d.launches)
    out, err = io.StringIO(), io.StringIO()
    status = run.run_file(path, device, out=out, err=err)
    assert status == run.EXIT_RUNTIME and out.getvalue() == "", (out.getvalue(), err.getvalue())
    assert "dimension 0 of `x` is 8 but function `first` declares 16" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert len(gpu.ctx.d.launches) == before


HOST = """
fn make(n: i32) -> Tensor<f32, [16]> {
    let t: Tensor<f32, [?]> = zeros::<f32>([n]);
    t
}
fn keep(x: &Tensor<f32, [?]>) -> f32 {
    let t: Tensor<f32, [4]> = x.clone();
    t.sum()
}
"""


def test_a_host_functions_written_types_are_checked_from_python() -> None:
    """A host function's result type and a `let`'s, called from Python with run-time sizes (hrev29: both were
    taken as written and the value bound as it was): E0714 at the value, the written type labelled."""
    mod = tilelang.compile(HOST)
    assert np.asarray(mod.make(16)).shape == (16,)
    with pytest.raises(tilelang.TileError, match=r"E0714.*the result of `make` has 8 elements along dimension 0, "
                                                 r"but its type declares 16"):
        mod.make(8)
    assert mod.keep(np.ones(4, np.float32)) == 4.0
    with pytest.raises(tilelang.TileError, match=r"`t` has 5 elements along dimension 0, but its type declares 4"):
        mod.keep(np.ones(5, np.float32))
