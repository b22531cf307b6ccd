"""`benchmarks/prefill_model.py` (no GPU): the non-causal prefill rows' model, a tile costing (n + c) key blocks,
fitted from two rows and checked on call 19's H100 table (f16 D = 128: 581 / 673 / 701 TFLOP/s at S = 1,024 /
4,096 / 16,384), from attention.py's JSON and from its markdown table."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CALL19 = {1024: 580.87, 4096: 672.53, 16384: 700.53}


def _mod():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("prefill_model", ROOT / "benchmarks" / "prefill_model.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_fit_through_two_rows_predicts_the_third() -> None:
    m = _mod()
    c, k = m.fit(32, CALL19[4096], 128, CALL19[16384])
    assert c == pytest.approx(1.80, abs=0.01) and k == pytest.approx(710.4, abs=0.1)
    assert k * 8 / (8 + c) == pytest.approx(CALL19[1024], rel=3e-3)  # S = 1,024 from the other two
    assert m.need(32, k, 700.0) == pytest.approx(0.47, abs=0.01)  # 700 at S = 4,096
    assert m.need(32, 650.0, 700.0) < 0  # out of reach at that K
    assert m.idle(128, 4096, 132) == pytest.approx(16 / (2048 / 132) - 1)  # 15.5 rounds run as 16
    assert m.idle(64, 1024, 132) == pytest.approx(32 / (4096 / 132) - 1)  # 31 rounds and 4 tiles
    assert m.idle(128, 4096, 128) == 0.0


def test_it_reads_the_json_and_the_markdown_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = _mod()
    rows = [{"kind": "prefill", "dtype": "f16", "D": 128, "causal": c, "S": s, "tile_tflops": t * (0.9 if c else 1)}
            for s, t in CALL19.items() for c in (False, True)] + [{"kind": "decode", "tile_tflops": 1.0}]
    (tmp_path / "attention.json").write_text(json.dumps({"rows": rows}))
    table = "".join(f"| f16 D=128 {'causal' if c else 'full'} S={s} B=1 H=16 | {t:.2f} TFLOP/s | 1.00 TFLOP/s |\n"
                    for s, t in CALL19.items() for c in (False, True))
    (tmp_path / "prefill.log").write_text(table + "\n" + table)  # (a log may print the table twice)
    for name in ("attention.json", "prefill.log"):
        got = m.read(tmp_path / name)
        assert [(r["S"], r["tflops"]) for r in got] == list(CALL19.items()), name
        assert m.main([str(tmp_path / name)]) == 0
        out = capsys.readouterr().out
        assert "f16 D=128 full: c = 1.80" in out and "700 needs c <= 0.47" in out, out
    (tmp_path / "empty.log").write_text("no table\n")
    assert m.main([str(tmp_path / "empty.log")]) == 1
