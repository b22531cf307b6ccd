"""A batched GEMM written the natural way, a tile of each 3-D tensor reshaped to a matrix in the loop
(huser15, round 15), took no pipeline: mma.sync with no ring, on sm_90a and sm_80. The Hopper pipeline's
note said "do the other work before or after the loop", which a batch's reshape cannot, and sm_80's
cp.async ring said nothing.

Now sm_80's cp.async ring copies a batched operand (`CpAsyncTile` of a 3-D tensor: the batch's offset and
bounds; `pipeline_sm80._batched`), on sm_80 and as sm_90a's fallback; llsim runs it against the
interpreter across its edges (programs/bmm_ring.tile), and a mutation that drops the batch's offset fails
it. The Hopper pipeline's note says it reads tiles of 2-D tensors and how a batch takes it (stacked as one
2-D tensor with the batch in the tile index), which the help's form does, with the 3-D form's values."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver
from tilelang.backend import compile_kernel, explain, lower_gpu
from tilelang.backend.facts import TensorFacts

from llsim import sim_runtime_device

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bmm_paths  # noqa: E402

RING = Path(__file__).parent / "programs" / "bmm_ring.tile"

# the natural form and the help's form (the batch stacked as 2-D tensors, the batch in the tile index: M, K
# multiples of the tiles): the programs `benchmarks/bmm_paths.py` times on the GPU
KERNEL3, KERNEL2 = bmm_paths.NATURAL, bmm_paths.STACKED
MAIN = """
fn main() {
    let a = randn::<f16>([3, 128, 64], 1);
    let b = randn::<f16>([3, 64, 64], 2);
    let mut c3 = zeros::<f32>([3, 128, 64]);
    bmm::<64, 64, 32>(c3.partition([1, 64, 64]), &a, &b).sync();
    let mut c2 = zeros::<f32>([3 * 128, 64]);
    bmm2::<64, 64, 32>(c2.partition([64, 64]), &a.reshape([3 * 128, 64]), &b.reshape([3 * 64, 64]), 128, 64).sync();
}
"""


def _kernel(name: str, arch: str):  # type: ignore[no-untyped-def]
    k = next(x for x in driver.compile(KERNEL3 + KERNEL2 + MAIN, "ir").output if x.name == name)
    facts = {p.name: TensorFacts(True, (True,) * p.rank) for p in k.params if hasattr(p, "rank")}
    return lower_gpu(k, arch, facts)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_batched_operand_takes_sm80_s_ring_and_hopper_s_note_says_how_to_take_wgmma(arch: str) -> None:
    gk = _kernel("bmm", arch)
    assert explain.path_of(gk) == "sm80-pipeline"
    if arch == "sm_80":
        assert not gk.notes
        return
    note = next(n for n in gk.notes if n.message.startswith("the Hopper GEMM pipeline"))
    assert "a tile of the 3-D tensor `a` reshaped to a matrix" in note.message, note.message
    assert "the batch in the tile index, `p.load([b * (M / BM) + i, k])`" in note.help[0], note.help
    line = (KERNEL3 + KERNEL2 + MAIN)[:note.labels[0].span.start].count("\n") + 1
    assert ".reshape([BM, BK])" in (KERNEL3 + KERNEL2 + MAIN).splitlines()[line - 1]


@pytest.mark.parametrize(("arch", "path"), [("sm_90a", "wgmma-pipeline"), ("sm_80", "sm80-pipeline")])
def test_the_help_s_stacked_form_takes_the_pipeline_and_gives_the_same_values(arch: str, path: str,
                                                                              tmp_path) -> None:  # type: ignore[no-untyped-def]
    gk = _kernel("bmm2", arch)
    assert explain.path_of(gk) == path and not gk.notes
    f = tmp_path / "b.tile"
    f.write_text(KERNEL3 + KERNEL2 + MAIN, encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    t = {k: np.asarray(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}
    np.testing.assert_array_equal(t["c2"].reshape(3, 128, 64), t["c3"])
    want = np.einsum("bmk,bkn->bmn", t["a"].astype(np.float64), t["b"].astype(np.float64))
    np.testing.assert_allclose(t["c3"], want, rtol=1e-4, atol=1e-4)


def _tensors(arch: str | None, monkeypatch: pytest.MonkeyPatch) -> dict[str, np.ndarray]:
    if arch is not None:
        monkeypatch.setattr(run, "make_device", lambda choice, out: sim_runtime_device(arch, lambda s: out.write(s)))
    ex = run.execute(str(RING), "cpu" if arch is None else "gpu", out=io.StringIO())
    return {k: np.asarray(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_ring_s_batched_gemms_match_the_interpreter_at_every_edge(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ks = {k.name: k for k in driver.compile(RING.read_text(encoding="utf-8"), "ir").output}
    for name in ("bmm", "bmm_nt"):
        facts = {p.name: TensorFacts(True, (True,) * p.rank) for p in ks[name].params if hasattr(p, "rank")}
        assert explain.path_of(lower_gpu(ks[name], arch, facts)) == "sm80-pipeline", name
    want = _tensors(None, monkeypatch)
    a, b = want["a"].astype(np.float64), want["b"].astype(np.float64)
    np.testing.assert_allclose(want["c"], a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(want["c2"], want["a2"].astype(np.float64) @ want["bt"].astype(np.float64)
                               .transpose(0, 2, 1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(want["c3"][:3], want["c"])
    assert (want["c3"][3] == 0).all()                       # the batch past a's end: zeros, not the 7s
    got = _tensors(arch, monkeypatch)
    for k in ("c", "c2", "c3"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_ring_s_batched_gemms_assemble(arch: str, tmp_path: Path) -> None:
    for k in driver.compile(RING.read_text(encoding="utf-8"), "ir").output:
        facts = {p.name: TensorFacts(True, (True,) * p.rank) for p in k.params if hasattr(p, "rank")}
        f = tmp_path / f"{k.name}.ptx"
        f.write_text(compile_kernel(k, arch, facts).ptx, encoding="utf-8")
        r = subprocess.run(["ptxas", "-arch", arch, "-o", str(tmp_path / "k.o"), str(f)], capture_output=True,
                           text=True)
        assert r.returncode == 0, (k.name, r.stderr)


@pytest.mark.gpu
def test_the_ring_s_batched_gemms_match_the_interpreter_on_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    want = _tensors(None, monkeypatch)
    ex = run.execute(str(RING), "gpu", out=io.StringIO())
    assert ex.device.kind == "gpu"
    got = {k: np.asarray(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}
    for k in ("c", "c2", "c3"):
        np.testing.assert_allclose(got[k], want[k], rtol=2e-3, atol=2e-3, err_msg=k)
    assert (got["c3"][3] == 0).all()


def test_an_integer_product_s_loop_gets_no_attention_note() -> None:
    # m02's edit distance: i32 shift products (scalar FMAs, which no pipeline takes) were told "the Hopper
    # attention pipeline does not take this loop: an `mma` outside the loop"
    src = (Path(__file__).parents[1] / "user" / "programs" / "m02_edit_distance_rows.tile").read_text(encoding="utf-8")
    k = driver.compile(src, "ir").output[0]
    gk = lower_gpu(k, "sm_90a", {p.name: TensorFacts(True, (True,) * p.rank) for p in k.params if hasattr(p, "rank")})
    assert explain.path_of(gk) == "fma" and not gk.notes, [n.message for n in gk.notes]
