"""The time limit of `gpu` tests (`tests/conftest.py`): a test that runs past
it fails with a message naming it, the tests after it still run, and a test
within its limit passes. Run in a child pytest whose conftest takes the hook
from the suite's own conftest (no GPU is needed: only the marker counts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

CHILD_CONFTEST = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("tile_suite_conftest", {str(CONFTEST)!r})
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)
pytest_runtest_protocol = suite.pytest_runtest_protocol

def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: a GPU test")
"""

TESTS = """
import time
import pytest

@pytest.mark.gpu
def test_hangs():
    time.sleep(30)

@pytest.mark.gpu(timeout=5)
def test_quick():
    time.sleep(0.05)

def test_after():
    assert True
"""


def test_a_hung_gpu_test_fails_alone(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CHILD_CONFTEST)
    (tmp_path / "test_child.py").write_text(TESTS)
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**__import__("os").environ, "TILE_GPU_TEST_TIMEOUT": "0.5"},
    )
    out = r.stdout + r.stderr
    assert "1 failed, 2 passed" in out, out
    assert "test_hangs ran longer than 0.5 s" in out, out
