"""The backend's switches of a few named values read through one helper (`passes/switches.mode`): the unset
value, a set one, and a bad one an error naming the switch and every value it takes, as each reader words it
(`TILEC_GEMM_SPLITK`, `TILEC_ATTN_CHAIN`, ..)."""

from __future__ import annotations

import pytest

from tilelang.backend.gpu.passes import (attention_chain, attention_loop, convert, gemm_epilogue, gemm_persistent, gemm_rows,
                                         gemm_split, gemm_widen, layout_assign)
from tilelang.backend.gpu.passes.switches import mode


def test_a_switch_reads_its_default_its_value_and_refuses_others(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_TEST_SWITCH", raising=False)
    assert mode("TILEC_TEST_SWITCH", "auto", ("0", "1", "auto")) == "auto"
    monkeypatch.setenv("TILEC_TEST_SWITCH", "1")
    assert mode("TILEC_TEST_SWITCH", "auto", ("0", "1", "auto")) == "1"
    monkeypatch.setenv("TILEC_TEST_SWITCH", "yes")
    with pytest.raises(ValueError, match=r"^environment variable `TILEC_TEST_SWITCH='yes'` is not a setting it takes: expected 0, 1 or auto$"):
        mode("TILEC_TEST_SWITCH", "auto", ("0", "1", "auto"))


@pytest.mark.parametrize(("name", "read", "values"), [
    ("TILEC_GEMM_SPLITK", gemm_split.requested, "0, 1 or auto"),
    ("TILEC_GEMM_WIDEN", gemm_widen.requested, "0, 1 or auto"),
    ("TILEC_GEMM_PERSISTENT", gemm_persistent.requested, "0, 1 or 2"),
    ("TILEC_GEMM_ROWS", gemm_rows.enabled, "0 or 1"),
    ("TILEC_GEMM_EPILOGUE_OPS", gemm_epilogue.enabled, "0 or 1"),
    ("TILEC_ATTN_CHAIN", attention_chain.setting, "0, 1, late or auto"),
    ("TILEC_REMAKE_FREE", convert.remake_enabled, "0 or 1"),
    ("TILEC_NESTED_CARRY", layout_assign.nested_carry_enabled, "0 or 1"),
    ("TILEC_ATTN_PINGPONG", attention_loop.pingpong, "0 or 1"),  # "rotated-unsafe" built wrong kernels: gone
])
def test_each_reader_words_a_bad_value_alike(name: str, read, values: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ValueError, match=rf"^environment variable `{name}='maybe'` is not a setting it takes: expected {values}$"):
        read()
