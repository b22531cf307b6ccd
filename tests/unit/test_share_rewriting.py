"""`tests/conftest.py`'s `share_rewriting`: xdist worker k of n rewrites the asserts of the k-th of n slices of the
test modules into pytest's cache before collecting, so a fresh checkout's workers do not each rewrite every
module; worker 0, a run without xdist and a run that writes no bytecode rewrite nothing ahead."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def _suite(pytestconfig: pytest.Config):  # type: ignore[no-untyped-def]
    return next(m for m in pytestconfig.pluginmanager.get_plugins()
                if getattr(m, "__file__", None) and Path(m.__file__).resolve() == TESTS / "conftest.py")


def _tree(root: Path) -> list[Path]:
    files = [root / "a" / "test_one.py", root / "a" / "test_two.py", root / "b" / "conftest.py",
             root / "b" / "test_three.py", root / "b" / "helper.py"]
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("def test_x():\n    assert 1 + 1 == 2\n")
    return files


def test_the_second_worker_caches_the_second_half(pytestconfig: pytest.Config, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from _pytest.assertion import assertstate_key
    from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

    suite = _suite(pytestconfig)
    files = _tree(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    for worker in ("gw0", "master"):  # worker 0 collects from the start; no worker: nothing ahead
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        assert suite.share_rewriting(pytestconfig, tmp_path) == 0
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert suite.share_rewriting(pytestconfig, tmp_path) == 2  # (conftest, test_three: the second of 4 modules)
    trace = pytestconfig.stash[assertstate_key].trace
    cached = [f.name for f in files if _read_pyc(f, get_cache_dir(f) / (f.name[:-3] + PYC_TAIL), trace)]
    assert cached == ["conftest.py", "test_three.py"]
    assert suite.share_rewriting(pytestconfig, tmp_path) == 0  # cached already: read, not rewritten
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (tmp_path / "a" / "test_two.py").write_text("def test_y():\n    assert True\n")
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert suite.share_rewriting(pytestconfig, tmp_path) == 0  # no bytecode written: nothing ahead
