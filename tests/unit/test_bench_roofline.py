"""The benchmarks' roofline chart (`benchmarks/_roofline.py`, issue 16 item
6): a PNG where matplotlib is installed, a line saying why not otherwise;
`rows.py` and `launch.py` place their measurements on it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import _roofline  # noqa: E402

HAVE_MPL = importlib.util.find_spec("matplotlib") is not None


def test_a_roofline_is_written_or_its_absence_explained(tmp_path) -> None:  # type: ignore[no-untyped-def]
    n = 1 << 26
    points = [("add", n, 12 * n, 12 * n / 4.3e12), ("gemm", 2 * 4096**3, 3 * 2 * 4096**2, 0.2e-3),
              ("no time", 1.0, 1.0, 0.0)]  # fmt: skip
    out = tmp_path / "r.png"
    line = _roofline.write(points, out, "test", "NVIDIA H200")
    if HAVE_MPL:
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "2 points" in line and "H200" in line
    else:
        assert not out.exists() and "matplotlib is not installed" in line
    assert _roofline.write([("none", 0.0, 1.0, 1.0)], out, "t", "") == "roofline: no points to draw"


def test_rows_places_every_best_configuration(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("rows_bench", BENCH / "rows.py")
    assert spec is not None and spec.loader is not None
    rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rows)
    seen = []
    monkeypatch.setattr(_roofline, "write", lambda pts, path, title, dev=None: seen.extend(pts) or "ok")
    res = {
        "device": "NVIDIA H200",
        "rows": [{"op": "softmax", "shape": "4096x1024", "tile_best": ("1x1024 w4", 4000.0),
                  "triton_best": ("w8", 4100.0), "torch_gbs": 3000.0}],
        "vector_add": {"tile_tbs": 4.3, "torch_tbs": 4.1},
    }  # fmt: skip
    assert rows.roofline(res, tmp_path / "r.png") == "ok"
    labels = [p[0] for p in seen]
    assert labels == ["Tile softmax 4096x1024", "Triton softmax 4096x1024",
                      "PyTorch softmax 4096x1024", "Tile add 2^28", "PyTorch add 2^28"]  # fmt: skip
    tile = seen[0]
    assert tile[1] == 5 * 4096 * 1024 and tile[2] == 8 * 4096 * 1024
    assert abs(tile[2] / tile[3] - 4000e9) < 1.0  # bytes / seconds = the measured GB/s
