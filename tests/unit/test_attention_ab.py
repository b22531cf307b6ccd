"""`benchmarks/attention_ab.py` (no GPU): an attention A/B script's runs (`run<i><arm>/attention.json`, one process
each) folded by arm: each prefill row's mean over an arm's runs, its spread and its ratio to the base arm's mean;
Tile / SDPA of the same process likewise; runs cut short (no JSON) skipped."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mod():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("attention_ab", ROOT / "benchmarks" / "attention_ab.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(causal: bool, tflops: float, sdpa_ms: float) -> dict:  # type: ignore[type-arg]
    tile_ms = 100.0 / tflops
    return {"kind": "prefill", "dtype": "f16", "D": 64, "causal": causal, "S": 1024, "tile_tflops": tflops,
            "tile_ms": tile_ms, "sdpa_ms": sdpa_ms}


def test_runs_fold_by_arm_against_the_base(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _mod()
    # mirrored A E E A; a fifth run cut short (its folder without JSON)
    for name, full, causal in (("run1A", 400.0, 300.0), ("run2E", 410.0, 309.0), ("run3E", 414.0, 312.0),
                               ("run4A", 404.0, 302.0)):
        (tmp_path / name).mkdir()
        rows = [_row(False, full, 0.25), _row(True, causal, 0.3), {"kind": "decode", "tile_tflops": 1.0}]
        (tmp_path / name / "attention.json").write_text(json.dumps({"copy_tbs": 3.0, "rows": rows}))
    (tmp_path / "run5A").mkdir()
    runs = mod.load(tmp_path)
    assert sorted(runs) == ["A", "E"] and [len(v) for v in runs.values()] == [2, 2]
    s = mod.fold(runs, "A")
    assert [(e["row"], e["arm"], e["n"]) for e in s] == [("f16 D=64 full S=1024", "A", 2), ("f16 D=64 full S=1024", "E", 2),
                                                         ("f16 D=64 causal S=1024", "A", 2),
                                                         ("f16 D=64 causal S=1024", "E", 2)]
    e = s[1]
    assert e["mean"] == pytest.approx(412.0) and e["ratio"] == pytest.approx(412.0 / 402.0)
    assert s[0]["spread"] == pytest.approx(4.0 / 402.0) and s[0]["ratio"] == pytest.approx(1.0)
    # Tile / SDPA: sdpa_ms / tile_ms, each process its own, then the arm's mean and its ratio
    assert e["vs_sdpa"] == pytest.approx((0.25 * 410 + 0.25 * 414) / 200.0)
    assert e["vs_sdpa_ratio"] == pytest.approx(412.0 / 402.0)
    assert mod.main([str(tmp_path)]) == 0
    assert "| f16 D=64 causal S=1024 | E | 2 | 310.5 | 1.0 % | 1.0316 |" in capsys.readouterr().out
    assert mod.main([str(tmp_path / "run5A")]) == 1
