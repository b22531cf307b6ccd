"""Kernel parameters and kernels named as the LLVM emitter's own names (huser15,
round 15: a Sinkhorn program's `err: &Tensor<f32, [1]>`, the tensor its
`atomic_max` wrote, was an internal compiler error at the launch).

The emitter named a tensor parameter `%name` in the entry's LLVM, beside its
own registers and labels (`%err`, the error word; `%pbuf`, `%arrive`,
`%split`, `%splitws`, the runtime's buffers; `%tid`, `%t1`, ..; the `entry`
and `start` labels) and a TMA descriptor `%a_tma0` for `a.tma0`: a parameter
of one of those names was a redefinition that LLVM refused. A kernel named
`smem` (or `tilec_trace`) met the module global of that name the same way.
Parameters are now `%p.name` (`codegen.llvm_types.param_reg`), a namespace
the emitter never uses, descriptors keep their dot, and a kernel named as a
module global has its entry named `name_kernel` (the runtime finds it by
`KernelABI.name`). llsim's own buffers are `$err`, `$print`, .. (a buffer
named by the parameter `err` had replaced the error words there). A name
past 64 characters is cut with a hash of the whole (LLVM cuts local names
at 1,024, and a long parameter and its `.d0` were one name)."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from tilelang.backend import compile_kernel

from llsim import sim_runtime_device

PROGRAM = Path(__file__).parent / "programs" / "internal_names.tile"

GEMM = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
        b: &Tensor<f16, [?, ?]>, a_tma0: &Tensor<f32, [?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc + a_tma0.partition([BN]).load([block_id(1)]).reshape([1, BN]));
}
fn main() {
    let a = randn::<f16>([128, 64], 1);
    let b = randn::<f16>([64, 64], 2);
    let bias = randn::<f32>([64], 3);
    let mut c = zeros::<f32>([128, 64]);
    gemm::<64, 64, 32>(c.partition([64, 64]), &a, &b, &bias).sync();
}
"""


def _llvm(src: str, arch: str) -> dict[str, str]:
    """Each kernel's LLVM text as `tilec emit --stage llvm --arch ARCH` gives it."""
    return {a.kernel: a.text for a in driver.compile(src, "llvm", options=driver.Options(arch=arch)).output}


def _run(arch: str | None, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, np.ndarray], str]:
    if arch is not None:
        monkeypatch.setattr(run, "make_device",
                            lambda choice, out: sim_runtime_device(arch, lambda s: out.write(s + "\n")))
    out = io.StringIO()
    ex = run.execute(str(PROGRAM), "cpu" if arch is None else "gpu", out=out)
    return {k: np.asarray(t.numpy()) for k, t in ex.main_locals.items() if hasattr(t, "numpy")}, out.getvalue()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_parameters_named_as_the_emitters_registers_run(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want, printed = _run(None, monkeypatch)
    assert printed == "block 1 68.0\n88.0 520.0\n"  # 4..7 + 2 * (4..7) + 0.5 each; (0..15 + 100 a block)
    got, out = _run(arch, monkeypatch)
    assert out == printed
    for k, w in want.items():
        np.testing.assert_array_equal(got[k], w, err_msg=k)


def test_the_entries_keep_their_names_where_they_can() -> None:
    irs = {k.name: k for k in driver.compile(PROGRAM.read_text(encoding="utf-8"), "ir").output}
    ks = {n: compile_kernel(k, "sm_80") for n, k in irs.items()}
    assert ks["smem"].abi.name == "smem_kernel"              # the module's `@smem` keeps its name
    assert ks["tilec_trace"].abi.name == "tilec_trace"       # no trace global in an untraced module
    assert [s.what for s in ks["smem"].abi.slots][-2:] == ["err", "print"]
    assert "define ptx_kernel void @smem_kernel(ptr addrspace(1) align 16 %p.err," in _llvm(PROGRAM.read_text(
        encoding="utf-8"), "sm_80")["smem"]


def test_a_parameter_named_as_a_tma_descriptor_compiles() -> None:
    ll = _llvm(GEMM, "sm_90a")["gemm"]   # `tilec emit --stage llvm`: the launch's facts (aligned: TMA)
    assert "%p.a_tma0" in ll and '"nvvm.grid_constant" %p.a.tma0' in ll and "wgmma" in ll


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
def test_the_ptx_assembles(tmp_path: Path) -> None:
    for k in driver.compile(PROGRAM.read_text(encoding="utf-8"), "ir").output:
        f = tmp_path / f"{k.name}.ptx"
        f.write_text(compile_kernel(k, "sm_90a").ptx, encoding="utf-8")
        r = subprocess.run(["ptxas", "-arch", "sm_90a", "-o", str(tmp_path / "k.o"), str(f)], capture_output=True,
                           text=True)
        assert r.returncode == 0, (k.name, r.stderr)


def test_a_parameter_name_past_llvm_s_length_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # LLVM cuts a local name at 1,024 characters: `%p.<name>` and `%p.<name>.d0` were one name (an ICE)
    long = "p" + "y" * 1100
    f = tmp_path / "long.tile"
    f.write_text(f"kernel fn k<const B: i32>({long}: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {{\n"
                 f"    {long}.store(x.load_like({long}) * 2.0);\n}}\n"
                 "fn main() {\n    let x = arange::<f32>(8);\n    let mut y = zeros::<f32>([8]);\n"
                 "    k(y.partition([4]), &x).sync();\n    print(y.sum());\n}\n", encoding="utf-8")
    ll = _llvm(f.read_text(encoding="utf-8"), "sm_80")["k"]
    assert long not in ll and "%p.pyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy." in ll
    compile_kernel(driver.compile(f.read_text(encoding="utf-8"), "ir").output[0], "sm_80")  # LLVM parses it
    monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device("sm_80", lambda s: out.write(s)))
    out = io.StringIO()
    run.execute(str(f), "gpu", out=out)
    assert out.getvalue() == "56.0\n"
