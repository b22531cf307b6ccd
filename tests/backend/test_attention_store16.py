"""`TILEC_ATTN_STORE16=1` (`codegen/accview._store_rows_16`): the attention
epilogue's f16/bf16 rows stored 16 bytes a lane after a 4 x 4 transpose of
each quad's words (two butterfly stages of shuffles): the PTX (ptxas), and
the kernels in the simulator with rows past the tensor's edge (their
element-by-element path) and in it. A word sent to the wrong lane or stored
at the wrong column fails the comparison with NumPy."""

from __future__ import annotations

import shutil

import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _run_lse_and_check, _schedule, _std, whole_tiles  # noqa: F401

from tilelang.backend import emit_ptx


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
# (bf16-64 heavy, htier1: "1" at D = 64 is opt-in, slower there; f16-128 is the default kernel's ptxas check)
@pytest.mark.parametrize(("dt", "d"), [("f16", 128), pytest.param("bf16", 64, marks=pytest.mark.heavy)])
@pytest.mark.usefixtures("whole_tiles")
def test_sixteen_byte_row_stores_assemble(tmp_path, dt: str, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_STORE16", "1")
    ptx = emit_ptx(_std("flash_attention", dt, 128, 128, d), "sm_90a", _facts("oqkv", 3))
    assert ptx.count("st.global.v4.u32") + ptx.count("st.global.v4.b32") == 2 * d // 32  # 2 rows a thread
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


@pytest.mark.parametrize(("schedule", "bm", "sq", "sk", "causal"),
                         # (overlap_two_warpgroups heavy, htier1: the 16-byte stores at D = 64 are opt-in; its two
                         # warpgroups' rows are stored by default at D = 128 in test_attention_boundary's causal_pairs,
                         # rotate_edge_rows_causal keeps both paths, in the tensor and past its edge)
                         [("overlap+rotate", 64, 150, 120, True),
                          pytest.param("overlap", 128, 200, 70, False, marks=pytest.mark.heavy)],
                         ids=["rotate_edge_rows_causal", "overlap_two_warpgroups"])
def test_sixteen_byte_row_stores_in_the_simulator(schedule: str, bm: int, sq: int, sk: int, causal: bool,  # type: ignore[no-untyped-def]
                                                  monkeypatch) -> None:
    _schedule(monkeypatch, schedule)
    monkeypatch.setenv("TILEC_ATTN_STORE16", "1")
    d, bn, bh = 64, 64, 2
    k = _std("flash_attention_lse", "f16", bm, bn, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    _run_lse_and_check(k, facts, (bh, -(-sq // bm)), bh, bh, sq, sk, d, causal, 3)


@pytest.mark.parametrize(("setting", "d", "v4_stores"),
                         [(None, 128, 8), (None, 64, 0), ("auto", 128, 8), ("0", 128, 0), ("1", 64, 4)],
                         ids=["default_d128", "default_d64", "auto_d128", "off_d128", "on_d64"])
@pytest.mark.usefixtures("whole_tiles")
def test_sixteen_byte_stores_by_default_only_for_rows_of_128(setting: str | None, d: int, v4_stores: int,  # type: ignore[no-untyped-def]
                                                             monkeypatch) -> None:
    """The default ("auto") takes the 16-byte stores for rows of 128 columns or more (measured faster
    at D = 128, slower at D = 64); "0" and "1" force either way."""
    if setting is None:
        monkeypatch.delenv("TILEC_ATTN_STORE16", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_STORE16", setting)
    ptx = emit_ptx(_std("flash_attention", "f16", 128, 128, d), "sm_90a", _facts("oqkv", 3))
    assert ptx.count("st.global.v4.u32") + ptx.count("st.global.v4.b32") == v4_stores
