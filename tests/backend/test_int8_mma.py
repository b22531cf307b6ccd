"""The int8 tensor-core path outside sm_80's ring (`codegen/mma.py` `mma_int8_tensor_core`,
on by default, `TILEC_INT8_MMA=0` off): `mma` of i8 or u8 tiles with the i32
accumulator, tiles of multiples of 16 x 8 x 32, on `mma.sync.m16n8k32`
(j11's tiles, 32 x 16 and 16 x 8, are too narrow for the ring's warp grid;
the ring's int8 GEMMs: `test_int8_ring.py`).

- with the switch, tests/user's j11 runs whole in the NVPTX simulator at
  sm_80 and sm_90a and leaves the interpreter's tensors exactly (the
  simulator's `mma.m16n8k32` follows the PTX ISA's fragment layout:
  `llsim_ops._mma_int8`); a mutation of the codegen's A register order
  fails it;
- the switch (unset or "1") puts the instruction in the LLVM (and ptxas
  assembles it for both archs); with "0", and for shapes off the
  instruction's multiples, the FMA loop runs (no `m16n8k32`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "user"))

import tilelang.run as run
from llsim import sim_runtime_device
from userprog import DIR, assert_same_tensors, emit_ptx, run_program

PROG = "j11_int8_gemm_tensor_core_shapes"


def _simulated(arch: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    monkeypatch.setattr(run, "make_device",
                        lambda choice, out: sim_runtime_device(arch, lambda s: out.write(s + "\n")))
    got, _ = run_program(PROG)
    monkeypatch.undo()
    return got


def test_the_tensor_core_path_leaves_the_interpreter_s_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    want, _ = run_program(PROG)
    for arch in ("sm_80", "sm_90a"):
        monkeypatch.setenv("TILEC_INT8_MMA", "1")
        got = _simulated(arch, monkeypatch)
        assert sorted(got) == sorted(want)
        assert_same_tensors(got, want, 0)


def test_a_mutated_register_order_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backend.codegen import mma

    src = Path(mma.__file__).read_text(encoding="utf-8")
    good = "for h in (0, 16) for row in row_a]"
    assert good in src
    want, _ = run_program(PROG)
    monkeypatch.setenv("TILEC_INT8_MMA", "1")
    monkeypatch.setattr(mma.MmaOps, "mma_int8_tensor_core", _mutated(src.replace(good, "for row in row_a for h in (0, 16)]")))
    got = _simulated("sm_80", monkeypatch)
    assert not np.array_equal(got["c"], want["c"])


def _mutated(src: str):  # type: ignore[no-untyped-def]
    """`mma_int8_tensor_core` compiled from `src` (the module's text with one change)."""
    from tilelang.backend.codegen import mma

    ns = dict(vars(mma))
    exec(compile(src, mma.__file__, "exec"), ns)  # the module's own text, mutated
    return ns["MmaOps"].mma_int8_tensor_core


@pytest.mark.parametrize("on", ["", "1", "0"], ids=["unset", "on", "off"])
def test_the_switch_decides_the_instruction(on: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if on:
        monkeypatch.setenv("TILEC_INT8_MMA", on)
    else:
        monkeypatch.delenv("TILEC_INT8_MMA", raising=False)
    for arch in ("sm_80", "sm_90a"):
        out = tmp_path / arch
        out.mkdir()
        r = emit_ptx(PROG, arch, out)
        assert r.returncode == 0, r.stderr
        texts = {f.name: f.read_text(encoding="utf-8") for f in sorted(out.glob("*.ptx"))}
        counts = {n: t.count("mma.sync.aligned.m16n8k32.row.col.s32") for n, t in texts.items()}
        assert all((c > 0) == (on != "0") for c in counts.values()), counts
        if on != "0" and shutil.which("ptxas"):
            for f in sorted(out.glob("*.ptx")):
                p = subprocess.run(["ptxas", "-arch", arch, "-o", str(out / "k.o"), str(f)], capture_output=True,
                                   text=True)
                assert p.returncode == 0, (f.name, p.stderr)


def test_shapes_off_the_instruction_s_multiples_keep_the_fma_loop(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_INT8_MMA", "1")
    out = tmp_path / "o"
    out.mkdir()
    r = emit_ptx("j01_int_f64_products", "sm_80", out)  # its int8 GEMM's K tile is 8
    assert r.returncode == 0, r.stderr
    assert not any("m16n8k32" in f.read_text(encoding="utf-8") for f in out.glob("*.ptx"))
    assert (DIR / f"{PROG}.tile").exists()


@pytest.mark.gpu
def test_the_tensor_core_path_on_a_gpu_leaves_the_interpreter_s_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `-m gpu` suite's check of the path on a card (the layout reading above is llsim's and the
    codegen's, one author's): j11 with `TILEC_INT8_MMA=1` exactly as the interpreter gives it. The switch is
    part of a compiled kernel's variant key (`CudaDevice._variant`), so a j11 compiled earlier in the process
    without it is not reused."""
    import io

    from userprog import program_tensors

    want = program_tensors(run.execute(str(DIR / f"{PROG}.tile"), "cpu", out=io.StringIO()))
    monkeypatch.setenv("TILEC_INT8_MMA", "1")
    gpu = run.execute(str(DIR / f"{PROG}.tile"), "gpu", out=io.StringIO())
    assert gpu.device.kind == "gpu"
    got = program_tensors(gpu)
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        np.testing.assert_array_equal(got[k], w, err_msg=k)
