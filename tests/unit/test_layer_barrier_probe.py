"""The issue-17 probe's CUDA source (benchmarks/probes/layer_barrier.cu)
compiles for sm_90a where nvcc is, every kernel the driver script launches is
in it, and none spills: a spill would time local memory, not the boundaries
the probe compares. The persistent kernels must fit 2 blocks an SM (<= 128
registers at 256 threads), the probe's k = 2 grid. Skips without nvcc; the
measurement itself needs the GPU (layer_barrier.py)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "probes"))

import layer_barrier  # noqa: E402


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_probe_source_compiles_without_spills(tmp_path: Path) -> None:
    report = layer_barrier.build(tmp_path / "lb.cubin")
    assert set(layer_barrier.KERNELS) <= set(report)
    for name in layer_barrier.KERNELS:
        assert report[name]["spill_stores"] == 0 and report[name]["spill_loads"] == 0, name
    for name in ("mega", "mega_pre"):
        assert report[name]["registers"] <= 128, name
    assert (tmp_path / "lb.cubin").stat().st_size > 0


def test_ptxas_report_parses() -> None:
    text = (
        "ptxas info    : Compiling entry function 'k_o' for 'sm_90a'\n"
        "ptxas info    : Function properties for k_o\n"
        "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 98 registers, used 1 barriers, 16384 bytes smem\n"
    )
    assert layer_barrier.ptxas_report(text) == {
        "k_o": {"spill_stores": 8, "spill_loads": 12, "registers": 98}
    }
