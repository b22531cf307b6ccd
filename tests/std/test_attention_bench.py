"""`benchmarks/attention.py --smoke` runs and checks its own results (CPU or GPU)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_attention_benchmark_smoke(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("attention_bench", ROOT / "benchmarks" / "attention.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke", "--reps", "2", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "attention.json").read_text())["rows"]
    assert {r["kind"] for r in rows} == {"prefill", "decode"}
    assert all(r["err"] < 1e-2 and r["tile_ms"] > 0 for r in rows)
    assert "| shape | Tile | SDPA |" in (tmp_path / "attention.md").read_text()
