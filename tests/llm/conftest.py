"""Shared set-up of the std::llm tests: the engine's modules (`examples/llm`),
the simulator (`tests/backend/llsim.py`) and this directory's test modules
on the import path, and `k`, the engine's kernels loaded once a module."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _dir in (ROOT / "tests" / "backend", ROOT / "tests" / "llm", ROOT / "examples" / "llm"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))


@pytest.fixture(scope="module")
def k():  # type: ignore[no-untyped-def]
    from engine import load_kernels

    return load_kernels()
