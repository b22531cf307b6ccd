"""The user rounds' benchmarks (benchmarks/huser*_bench.py) import their shared names from
`benchmarks/_user_bench.py`; on a GPU machine (no `--cpu`) every name they import must exist, which a
CPU-only run of the scripts never checks (call 42 found `F` missing there). Checked here with a stand-in
`torch` package, without running the benchmarks."""

from __future__ import annotations

import ast
import importlib.util
import sys
import types
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load_gpu_side(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    torch = types.ModuleType("torch")
    nn = types.ModuleType("torch.nn")
    functional = types.ModuleType("torch.nn.functional")
    torch.nn = nn  # type: ignore[attr-defined]
    nn.functional = functional  # type: ignore[attr-defined]
    for name, mod in (("torch", torch), ("torch.nn", nn), ("torch.nn.functional", functional)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(sys, "argv", ["bench"])  # no --cpu: the GPU side
    spec = importlib.util.spec_from_file_location("_user_bench_gpu_side", BENCH / "_user_bench.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _imported_names(script: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "_user_bench":
            names += [alias.name for alias in node.names]
    return names


@pytest.mark.parametrize("script", sorted(BENCH.glob("huser*_bench.py")), ids=lambda p: p.stem)
def test_every_name_a_user_bench_imports_exists_on_the_gpu_side(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = _imported_names(script)
    module = _load_gpu_side(monkeypatch)
    missing = [n for n in names if not hasattr(module, n)]
    assert names and not missing, f"{script.name} imports {missing} that _user_bench lacks off --cpu"
    if "F" in names:
        assert module.F is sys.modules["torch.nn.functional"]


def test_host_takes_a_numpy_reference_on_the_gpu_side(monkeypatch: pytest.MonkeyPatch) -> None:
    # the benches compare a kernel's CUDA tensor with a reference NumPy computed on the host (call 42: q04's
    # `close(c, want04)` stopped at `ndarray.cpu`)
    import numpy as np

    module = _load_gpu_side(monkeypatch)
    x = np.arange(4.0)
    assert module.host(x) is x
