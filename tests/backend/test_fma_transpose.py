"""The FMA pipeline with its K-contiguous operands stored transposed in their rings (`TILEC_FMA_TRANSPOSE=1`,
opt-in until timed; `codegen/fma_dot.cp_async_transposed`; hgemm4, after hf32's per-element try on branch
hf32-transpose): A [M, K] (nn) and B^T [N, K] (nt) land in [K, M] / [K, N] rings, so the register-blocked loop
reads both operands along M/N by vector loads, as tn's does. A thread copies a 16-byte run of one row by 4-byte
(8-byte) `cp.async.ca`s at immediate offsets from one source and one shared address. llsim (which lands a
cp.async at its group's wait and raises on a read of a word still in flight) against the interpreter, small
integers (exact); ptxas's registers and spills."""

from __future__ import annotations

import pytest
from test_fma_pipeline import _check, _kernel, _source

from tilelang.backend import compile_kernel, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


@pytest.mark.parametrize(("lay", "dt", "tile", "shape", "arch"), [
    ("nn", "f32", (32, 32, 8), (45, 37, 29), "sm_90a"),  # edges in M, N and K (29: a run's last elements past K)
    # (heavy: both operands transposed; `TILEC_FMA_TRANSPOSE` is opt-in, and nn_f32_edges runs A's transposed
    # ring with its edges: B's is the same copy and dot code on the other operand)
    pytest.param("nt", "f32", (32, 64, 8), (64, 80, 32), "sm_90a", marks=pytest.mark.heavy),
    pytest.param("tt", "f32", (32, 64, 8), (50, 70, 36), "sm_90a", marks=pytest.mark.heavy),  # B^T only
    pytest.param("nn", "f64", (32, 32, 8), (40, 50, 30), "sm_90a", marks=pytest.mark.heavy),  # 8-byte copies
    pytest.param("nt", "i32", (32, 32, 16), (37, 45, 48), "sm_80", marks=pytest.mark.heavy),
    pytest.param("nn", "f32", (64, 64, 16), (100, 90, 70), "sm_90a", marks=pytest.mark.heavy),  # 2 warps
], ids=["nn_f32_edges", "nt_f32", "tt_f32", "nn_f64", "nt_i32_sm80", "nn_64"])
def test_transposed_rings_agree_with_the_interpreter(lay: str, dt: str, tile, shape, arch: str,  # type: ignore[no-untyped-def]
                                                     monkeypatch) -> None:
    monkeypatch.setenv("TILEC_FMA_TRANSPOSE", "1")
    text = _check(lay, dt, tile, shape, arch)
    assert "dot.fma.smem" in text and "cp.async.transposed" in text, text


@pytest.mark.heavy  # (two opt-in switches together: test_fma_pipeline's test_the_prefetching_schedule and
# nn_f32_edges above run each alone)
def test_the_prefetching_schedule_with_a_transposed_ring(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_FMA_TRANSPOSE", "1")
    monkeypatch.setenv("TILEC_FMA_PREFETCH", "1")
    text = _check("nn", "f32", (32, 32, 8), (45, 37, 29))
    assert "prefetch" in text and "cp.async.transposed" in text, text


def test_off_by_default_and_where_the_reads_do_not_split(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Unset: the rings as in memory. A tile whose transposed reads split no thread grid (48 x 96 at 4 warps)
    keeps the rings as in memory, on the pipeline."""
    monkeypatch.delenv("TILEC_FMA_TRANSPOSE", raising=False)
    k = _kernel(_source("nn", "f32"), "f32", (64, 64, 16))
    assert "cp.async.transposed" not in print_gpu_kernel(lower_gpu(k, "sm_90a", None))
    monkeypatch.setenv("TILEC_FMA_TRANSPOSE", "1")
    text = print_gpu_kernel(lower_gpu(_kernel(_source("nn", "f32"), "f32", (48, 96, 8)), "sm_90a", None))
    assert "dot.fma.smem" in text and "cp.async.transposed" not in text, text


@pytest.mark.heavy  # (~10-20 s of ptxas)
@pytest.mark.parametrize(("lay", "tile", "regs"), [
    ("nn", (128, 128, 16), 128), ("nt", (128, 128, 16), 128),  # `.maxnreg 128`: 2 CTAs an SM, no spill
    ("nn", (64, 64, 16), 168),  # (159: the rings in memory order took 168)
], ids=["nn_128", "nt_128", "nn_64"])
def test_ptxas_registers(lay: str, tile, regs: int, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ptxas_report import assemble

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_FMA_TRANSPOSE", "1")
    k = _kernel(_source(lay, "f32"), "f32", tile)
    facts = {p.name: TensorFacts(True, (True, True)) for p in k.tensor_params}
    ptx = compile_kernel(k, "sm_90a", facts).ptx
    assert "cp.async.ca.shared.global" in ptx and "ld.shared.v4" in ptx
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers <= regs, r.text
