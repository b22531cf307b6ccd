"""The cover tables of the user programs' `heavy` tests hold what they claim of the default run."""

from __future__ import annotations

import importlib

from ptx_cover import MODULES, _default_ptx_tests, _default_simulations
from userprog import PTX_COVERED, SIM_COVERED


def test_ptx_covered_programs_leave_the_default_run_and_their_covers_stay() -> None:
    """A program of `PTX_COVERED` has no default PTX test but a refused one (an error's text is no path other
    programs cover) and is simulated in the default run (its own kernels still lowered and emitted there), and
    each program named as its cover has a default PTX test (`tests/user/ptx_cover.py` measured the cover over
    default tests: a covering program made `heavy` later would leave the paths with none)."""
    default: set[str] = set()
    simulated: set[str] = set()
    covered_left: list[tuple[str, str]] = []
    for mod in MODULES:
        m = importlib.import_module(mod)
        test = getattr(m, "test_the_ptx_assembles", None)
        if test is None:
            continue
        tests, _, refused = _default_ptx_tests(test)
        default |= {n for n, a in tests if (n, a) not in refused}
        covered_left += [(n, a) for n, a in tests if n in PTX_COVERED and (n, a) not in refused]
        sim = getattr(m, "test_the_simulated_gpu_gives_the_same_tensors", None)
        simulated |= set(_default_simulations(sim)) if sim is not None else set()
    assert not covered_left
    assert set(PTX_COVERED) <= simulated, sorted(set(PTX_COVERED) - simulated)
    assert {c for cs in PTX_COVERED.values() for c in cs} <= default


def test_sim_covered_programs_leave_the_default_run_and_their_covers_stay() -> None:
    """A program of `SIM_COVERED` is not simulated in the default run, and each program named as its cover is
    (`tests/user/sim_cover.py` measured the cover over default simulations: a covering program made `heavy`
    later, by a module's `heavy` list, would leave the paths with none)."""
    simulated: set[str] = set()
    for mod in MODULES:
        sim = getattr(importlib.import_module(mod), "test_the_simulated_gpu_gives_the_same_tensors", None)
        simulated |= set(_default_simulations(sim)) if sim is not None else set()
    assert not set(SIM_COVERED) & simulated, sorted(set(SIM_COVERED) & simulated)
    covers = {c for cs in SIM_COVERED.values() for c in cs}
    assert covers <= simulated, sorted(covers - simulated)
