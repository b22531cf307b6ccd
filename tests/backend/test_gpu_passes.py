"""GPU IR goldens: the text after each pass of `backend/gpu/passes/` on the
kernels of `gpu_goldens/*.tile` (frozen copies of examples and typical
kernels), for the architectures where the pass does something. `pytest
--bless` rewrites the `.gpu` goldens; review the diff like code.

Also: the layout oracles (`layouts.py`) against hand-worked positions, and
the pass table's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang import driver
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import layouts as L
from tilelang.backend.gpu.passes import PASSES, lower_to_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel

GOLDEN = Path(__file__).resolve().parent / "gpu_goldens"

# (pass, tile file, kernel, arch): the pass's output is the golden
CASES = [
    ("lift", "softmax", "softmax_rows", "sm_80"),
    ("mma_select", "gemm", "gemm", "sm_80"),
    ("mma_select", "gemm", "gemm_reference", "sm_80"),
    ("block_order", "gemm", "gemm", "sm_80"),
    ("attention", "attention", "attn", "sm_90a"),  # the softmax loop on wgmma, in the accumulator layout
    ("pipeline", "gemm", "gemm", "sm_90a"),
    ("pipeline", "gemm_nt", "linear", "sm_90a"),
    ("pipeline_sm80", "gemm", "gemm", "sm_80"),  # cp.async ring, ldmatrix + mma.sync from shared memory
    ("pipeline_sm80", "gemm_nt", "linear", "sm_80"),  # B stored [N, K]: ldmatrix without .trans
    ("pipeline_fma", "gemm_f32", "sgemm", "sm_80"),  # f32: cp.async ring of padded rows, an 8x8 block a thread
    ("pipeline_fma", "gemm_f32", "sgemm_nt", "sm_90a"),  # B stored [N, K]: both operands read along k
    ("pipeline_products", "products", "attn_dq", "sm_80"),  # 3 products: K/V rings, Q/dO once, AccTile values
    ("layout_assign", "gemm", "gemm", "sm_80"),
    ("layout_assign", "softmax", "softmax_rows", "sm_80"),
    ("layout_assign", "rows", "softmax_np2", "sm_80"),  # [1, 2560]: 5 repetitions, no conversion
    ("layout_assign", "rows", "layernorm", "sm_80"),  # w, b loaded in the slice their broadcast needs
    ("layout_assign", "rows", "running_sum", "sm_80"),  # the loop carries the reduction's slice
    ("layout_assign", "rows", "running_sum_flushed", "sm_80"),  # a reset in an `if`: still the slice
    ("convert", "gemm", "gemm", "sm_80"),
    ("convert", "rows", "rows_plus_cols", "sm_80"),  # a column result added to a row result
    ("stream_mma", "dequant", "w8a16", "sm_80"),  # a dequantised operand: its loop's loads through cp.async rings
    ("stream_loads", "rows", "running_sum_streamed", "sm_90a"),  # per-thread cp.async ring, no barrier
    ("smem_alloc", "gemm_nt", "linear", "sm_90a"),
]


def _kernels(stem: str, name: str):  # type: ignore[no-untyped-def]
    path = GOLDEN / f"{stem}.tile"
    result = driver.compile(path, "ir", options=driver.Options(kernel=name))
    assert result.ok, result.diagnostics
    return result.output


@pytest.mark.parametrize(("until", "stem", "kernel", "arch"), CASES,
                         ids=[f"{p}-{k}-{a}" for p, _, k, a in CASES])
def test_pass_golden(until: str, stem: str, kernel: str, arch: str, golden, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if until == "stream_mma":
        monkeypatch.setenv("TILEC_MMA_RING", "1")  # opt-in since call 43; the golden is of the pass itself
    texts = []
    for k in _kernels(stem, kernel):
        facts = {p.name: TensorFacts.assumed(p.rank) for p in k.tensor_params}
        texts.append(print_gpu_kernel(lower_to_gpu(k, arch, facts, until=until)))
    golden(GOLDEN / f"{until}.{kernel}.{arch}.gpu", "\n".join(texts))


def test_every_pass_has_a_golden() -> None:
    assert {p for p, *_ in CASES} == {name for name, _ in PASSES}


def test_unknown_pass_is_an_error() -> None:
    k = _kernels("gemm", "gemm")[0]
    with pytest.raises(ValueError, match="unknown pass"):
        lower_to_gpu(k, "sm_80", {}, until="nope")


def test_emit_stage_gpu_prints_layouts() -> None:
    result = driver.compile(GOLDEN / "softmax.tile", "gpu")
    text = driver.format_output("gpu", result)
    assert text.startswith("gpu.kernel softmax_rows")
    assert "#blocked<spt=[1, 4], tpw=[1, 32], wpc=[4, 1], order=[1, 0]>" in text
    assert "#slice<dim=1, #blocked<" in text
    assert "convert_layout" not in text  # the row max and sum broadcast back for free


def test_chunked_owner() -> None:
    lay = L.chunked_for((16, 128), 128)
    assert lay == L.Chunked(4, 128)
    assert lay.owner(0) == (0, 0)
    assert lay.owner(5) == (1, 1)
    assert lay.owner(4 * 128 + 3) == (0, 7)  # chunk 1 of thread 0
    assert lay.chunks(16 * 128) == 4
    assert L.chunked_for((3, 6), 32).vec == 2


def test_wgmma_accumulator_positions() -> None:
    lay = L.WgmmaAcc(warpgroups=2, m_per_group=64, instr_n=256)
    assert lay.regs(256) == 128
    # thread 0: d0, d1 at (0, 0), (0, 1); d2, d3 at row 8; d4 at column 8
    assert [lay.coords(r, 0, 256) for r in range(5)] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8)]
    # lane 5 of warp 1: row 16 + 1, column 2
    assert lay.coords(0, 32 + 5, 256) == (17, 2)
    # the second warpgroup owns rows 64..127
    assert lay.coords(0, 128, 256) == (64, 0)
    seen = {lay.coords(r, t, 256) for t in range(256) for r in range(128)}
    assert seen == {(i, j) for i in range(128) for j in range(256)}


def test_shared_swizzle_is_a_bijection_in_16_byte_chunks() -> None:
    sw = L.Shared(128, "row")
    # row 1's first chunk moves to chunk 1; elements inside a chunk stay together
    assert sw.offset(1, 0, 64, 64, 2) == 128 + 16
    assert sw.offset(1, 7, 64, 64, 2) == 128 + 16 + 14
    offs = {sw.offset(r, c, 64, 128, 2) for r in range(64) for c in range(128)}
    assert offs == set(range(0, 64 * 128 * 2, 2))
    # two 64-column slabs of 64 rows: the second starts after 64 * 128 bytes
    assert sw.offset(0, 64, 64, 128, 2) == 64 * 128
    col = L.Shared(128, "col")  # [K, N] stored N-contiguous viewed as [N, K]... first dim contiguous
    assert col.offset(1, 0, 64, 64, 2) == 2
