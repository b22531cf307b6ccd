"""The `heavy` marker (tests/heavy_gate.py, called by tests/conftest.py): skipped unless TILE_SLOW=1, with a
reason that says how to run it; other tests are left alone."""

from __future__ import annotations

from types import SimpleNamespace

import heavy_gate
import pytest


def _item(*markers: str) -> SimpleNamespace:
    return SimpleNamespace(get_closest_marker=lambda name: object() if name in markers else None)


def test_a_heavy_test_is_skipped_by_default_and_says_how_to_run_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heavy_gate, "HEAVY", False)
    with pytest.raises(pytest.skip.Exception, match="TILE_SLOW=1"):
        heavy_gate.skip_unless_slow_run(_item("heavy"))
    heavy_gate.skip_unless_slow_run(_item())  # an ordinary test runs


def test_tile_slow_runs_heavy_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heavy_gate, "HEAVY", True)
    heavy_gate.skip_unless_slow_run(_item("heavy"))  # no skip
