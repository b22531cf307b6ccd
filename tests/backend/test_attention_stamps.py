"""The measurement stamps of the persistent attention walk (`TILEC_ATTN_STAMPS=1`,
`codegen/stamps.py`) and the probe's analysis (benchmarks/probes/attention_stamps.py)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble
from test_attention_pipeline import _facts, _std

from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.codegen import stamps as S
from tilelang.backend.gpu.printer import print_gpu_kernel

ROOT = Path(__file__).resolve().parents[2]


def _probe():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("attention_stamps", ROOT / "benchmarks/probes/attention_stamps.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The tiers (tests/README.md, htier1): `TILEC_ATTN_STAMPS` is a measurement switch, off by default; its one default
# test is test_the_switch_stamps_each_role_and_changes_nothing_else[128] (and the probe's analysis,
# test_the_probe_reads_each_phase, which compiles nothing); the rest are `heavy`.
@pytest.mark.parametrize("d", [128, pytest.param(64, marks=pytest.mark.heavy)])
def test_the_switch_stamps_each_role_and_changes_nothing_else(d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_CHAIN", "0")
    k, facts = _std("flash_attention", "f16", 128, 128, d), _facts("oqkv", 3)
    monkeypatch.delenv("TILEC_ATTN_STAMPS", raising=False)
    off_ir = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    off = emit_ptx(k, "sm_90a", facts)
    assert "stamp" not in off_ir and S.GLOBAL not in off and "%clock64" not in off
    monkeypatch.setenv("TILEC_ATTN_STAMPS", "1")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    consumer, producer = text.split("role producer")
    # at D = 64 the kernel walks split or whole tiles (`attention_split.whole_copy`): each walk has its stamps;
    # its producer copies a tile's first K/V block before Q (`TILEC_ATTN_KVFIRST`): stamped at its tile's end only
    walks = 1 if d == 128 else 2
    assert [int(x) for x in re.findall(r"stamp (\d)", consumer)] == [0, 1, 2, 3, 4, 5, 6] * walks
    assert [int(x) for x in re.findall(r"stamp (\d)", producer)] == ([0, 1, 2, 3, 4] if d == 128 else [0, 1, 4] * 2)
    on = emit_ptx(k, "sm_90a", facts)
    assert f".global .align 8 .b8 {S.GLOBAL}[{S.ENTRIES * 8}]" in on
    assert on.count("%clock64") == (12 if d == 128 else 20)


@pytest.mark.heavy  # (the tiers above: `TILEC_ATTN_STAMPS`'s default test is ..changes_nothing_else[128])
def test_the_chained_short_variant_is_stamped_too(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The D = 64 short keys' variant (chained, `attention_chain.tile_ops`, the kernel of every D = 64 S <= 1024
    launch): its consumers' tile ops are rebuilt after the unchained stamps, so they carry their own
    (`attention_chain.stamped`); unset, its PTX has none. Its causal tail's walk B (`TILEC_ATTN_CHAIN_TAIL`, on by
    default: `attention_csplit`) is a copy of the tile ops, stamps included: the same slots in the same order
    twice, the tile's number going on from walk A; with `TILEC_ATTN_CHAIN_TAIL=0` once."""
    import dataclasses

    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_STAMPS", "TILEC_ATTN_CHAIN_TAIL", "TILEC_ATTN_CHAIN_SPLIT"):
        monkeypatch.delenv(var, raising=False)
    k, facts = _std("flash_attention", "f16", 128, 128, 64), _facts("oqkv", 3)
    facts = {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=1024)}
    off = emit_ptx(k, "sm_90a", facts)
    assert "%clock64" not in off and S.GLOBAL not in off
    monkeypatch.setenv("TILEC_ATTN_STAMPS", "1")
    text = print_gpu_kernel(lower_gpu(k, "sm_90a", facts))
    assert "%chained" in text
    consumer, producer = text.split("role producer")
    assert [int(x) for x in re.findall(r"stamp (\d)", consumer)] == [0, 1, 2, 3, 4, 5, 6] * 2
    assert [int(x) for x in re.findall(r"stamp (\d)", producer)] == [0, 1, 2, 3, 4] * 2
    # Q in before the first iteration's branch (the previous tile's epilogue), the key loop between 3 and 4
    for walk in consumer.split("stamp 0")[1:]:
        body = walk[walk.index("stamp 2"):walk.index("stamp 5")]
        assert body.index("stamp 3") < body.index("for ") < body.index("stamp 4") and "%chained" in body[:body.index("stamp 3")]
    monkeypatch.setenv("TILEC_ATTN_CHAIN_TAIL", "0")
    consumer = print_gpu_kernel(lower_gpu(k, "sm_90a", facts)).split("role producer")[0]
    assert [int(x) for x in re.findall(r"stamp (\d)", consumer)] == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
@pytest.mark.heavy  # (the tiers above: `TILEC_ATTN_STAMPS`'s default test is ..changes_nothing_else[128])
def test_the_stamped_kernel_assembles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_STAMPS", "1")
    r = assemble(emit_ptx(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", _facts("oqkv", 3)), "sm_90a")
    # (4 bytes with ptxas 13.0: the stamps' address outside the key loop; 20 with the tile boundary's defaults at
    # D = 128, `attention_tiles.BOUNDARY_D`: the producer's walk at 24 registers with its stamps)
    assert r.max_spill_stores <= 20, r.text


def test_the_probe_reads_each_phase() -> None:
    """Two CTAs of five tiles with known phase lengths: the medians over the middle tiles are those lengths."""
    probe = _probe()
    t = np.zeros((S.CTAS, S.TILES, S.UNITS, S.SLOTS), np.int64)
    gaps = [30, 200, 1000, 7 * 2000, 600, 900]  # walk, Q wait, first block, loop (8 blocks: 7 after the first), ...
    for c in range(2):
        now = 1000 + c * 77
        for i in range(5):
            for u in range(2):
                x = now + u * 5
                t[c, i, u, 0] = x
                for s, gap in enumerate(gaps, 1):
                    x += gap
                    t[c, i, u, s] = x
            p = t[c, i, 2]
            p[0], p[1], p[2], p[3], p[4] = now, now + 20, now + 100, now + 150, now + 9000
            now += sum(gaps) + 5 + 400  # the next tile's top, 400 cycles after this one's end
    res = probe.analyse(t, 2, 8, 2)
    wg = res["wg0"]
    assert [wg[name] for name, _, _ in probe.PHASES] == gaps
    assert wg["tile"] == sum(gaps) + 405 and wg["block"] == 2000 and wg["samples"] == 6
    assert wg["outside_loop_blocks"] == pytest.approx((sum(gaps) + 405 - 14000) / 2000 - 1)
    assert res["producer"]["q_copy"] == 50 and res["producer"]["kv_loop"] == 8850
    assert wg["q_issued_to_q_in"] == 30 + 200 - 150
    assert res["wg1"]["lag_vs_wg0"] == 5 and "lag_vs_wg0" not in wg
    assert not [k for k in wg if k.startswith("f_")]  # (no fine stamps: none of their phases)


@pytest.mark.heavy  # (the tiers above: `TILEC_ATTN_STAMPS`'s default test is ..changes_nothing_else[128])
def test_fine_stamps_inside_the_chained_first_iteration(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`TILEC_ATTN_STAMPS=2`: the tile's stamps and, inside the chained short variant's first iteration, slots 13
    (its first stage in), 8 (S(0) and the pending P V issued), 9 (S(0) in), 10 (softmax and spin done), 11 (the
    pending P V in), 12 (the previous tile's epilogue done), between slots 2 and 3, in each walk (walk B: the
    causal tail's copy); with `TILEC_ATTN_CHAIN_EPI2=1` also 14 and 15 (the second iteration's issue and
    epilogue); "1" none of them. The probe reads them as phases where a tile's first iteration ran."""
    import dataclasses

    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_STAMPS", "TILEC_ATTN_CHAIN_TAIL", "TILEC_ATTN_CHAIN_SPLIT",
                "TILEC_ATTN_CHAIN_EPI2"):
        monkeypatch.delenv(var, raising=False)
    k, facts = _std("flash_attention", "f16", 128, 128, 64), _facts("oqkv", 3)
    facts = {**facts, "k": dataclasses.replace(facts["k"], rows_at_most=1024)}
    walk = [0, 1, 2, 13, 8, 9, 10, 11, 12, 3, 4, 5, 6]
    for stamps, epi2, want in (("2", "0", walk), ("2", "1", [*walk[:9], 14, 15, *walk[9:]]),
                               ("1", "0", [0, 1, 2, 3, 4, 5, 6])):
        monkeypatch.setenv("TILEC_ATTN_STAMPS", stamps)
        monkeypatch.setenv("TILEC_ATTN_CHAIN_EPI2", epi2)
        consumer = print_gpu_kernel(lower_gpu(k, "sm_90a", facts)).split("role producer")[0]
        assert [int(x) for x in re.findall(r"stamp (\d+)", consumer)] == want * 2, (stamps, epi2)
    probe = _probe()
    t = np.zeros((S.CTAS, S.TILES, S.UNITS, S.SLOTS), np.int64)
    fine = [(13, 40), (8, 10), (9, 300), (10, 900), (11, 250), (12, 400)]  # after slot 2, in order
    for i in range(4):
        for u in range(2):
            x = 10_000 * (i + 1) + u
            t[0, i, u, :7] = [x, x + 20, x + 50, x + 5000, x + 9000, x + 9100, x + 9200]
            if i != 2:  # (tile 2: its first iteration did not run, no fine stamps)
                y = x + 50
                for slot, gap in fine:
                    y += gap
                    t[0, i, u, slot] = y
    wg = probe.analyse(t, 1, 8, 2)["wg0"]
    assert [wg[name] for name, _, _ in probe.FINE] == [gap for _, gap in fine]
    assert wg["f_rest"] == 5000 - 50 - sum(gap for _, gap in fine) and wg["samples"] == 2
