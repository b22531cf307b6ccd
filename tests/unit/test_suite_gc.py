"""The suite's cycle-collector settings (`tests/conftest.py`'s `suite_gc`) and
llsim's (`llsim_exec.run_block` turns the collector off while a block runs):
the collector is on again afterwards, also when a block raises."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "backend"))


def test_after_collection_the_collector_is_on_with_the_suites_threshold(pytestconfig: pytest.Config) -> None:
    # the suite's conftest as pytest loaded it (by file: `import conftest` may find tests/llm's)
    suite = next(m for m in pytestconfig.pluginmanager.get_plugins()
                 if getattr(m, "__file__", None) and Path(m.__file__).resolve() == TESTS / "conftest.py")
    assert gc.isenabled()
    assert gc.get_threshold()[0] == suite.GC_YOUNG == 10_000
    assert gc.get_threshold()[2] == suite.GC_OLDEST == 100  # (a full collection ten times rarer than CPython's)
    assert gc.get_freeze_count() > 0  # what collection made is frozen
    # one collection at the session's end (pytest's unraisable-exception plugin: 5 by default)
    from _pytest.unraisableexception import gc_collect_iterations_key

    assert pytestconfig.stash[gc_collect_iterations_key] == suite.END_COLLECTIONS == 1


def test_a_block_runs_without_the_collector_and_turns_it_back_on() -> None:
    import llsim_exec

    seen = []

    def fake(prog: object, mem: object, base: object, T: int) -> None:
        seen.append(gc.isenabled())
        if T < 0:
            raise RuntimeError("a block that raises")

    real = llsim_exec._run_block
    llsim_exec._run_block = fake
    try:
        llsim_exec.run_block(None, None, {}, 1)  # type: ignore[arg-type]
        assert seen == [False] and gc.isenabled()
        with pytest.raises(RuntimeError):
            llsim_exec.run_block(None, None, {}, -1)  # type: ignore[arg-type]
        assert seen == [False, False] and gc.isenabled()
        gc.disable()  # a caller that had it off keeps it off
        try:
            llsim_exec.run_block(None, None, {}, 1)  # type: ignore[arg-type]
            assert not gc.isenabled()
        finally:
            gc.enable()
    finally:
        llsim_exec._run_block = real
