"""The hypothesis profile tests/conftest.py loads: without HYPOTHESIS_PROFILE
it is `ci` whether or not `CI` is set (the README's bare `python -m pytest`
ran random examples with the `dev` profile), so no test's result depends on a
random draw; `dev` stays for hunting new failures."""

from __future__ import annotations

import os

import pytest

hypothesis = pytest.importorskip("hypothesis")


def test_the_loaded_profile_draws_the_same_examples_every_run() -> None:
    name = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    default = hypothesis.settings.default
    assert default.max_examples == hypothesis.settings.get_profile(name).max_examples
    if name == "ci":  # (CI or not)
        assert default.derandomize and default.database is None
        assert default.deadline is None  # a loaded machine's slow example is not a failure


def test_dev_is_still_random() -> None:
    dev = hypothesis.settings.get_profile("dev")
    assert not dev.derandomize and dev.max_examples == 200


def test_the_pool_of_source_constants_does_not_grow_with_later_imports(tmp_path, monkeypatch) -> None:
    """A module imported after the pool was taken (as tests import more of
    tilelang) adds nothing to what derandomised tests draw from."""
    import sys

    from hypothesis.internal.conjecture import providers

    # (tests/conftest.py froze it at collection; imported by name, `conftest`
    # may be another folder's conftest module under xdist)
    if getattr(providers, "_get_local_constants", None) is None:
        pytest.skip("this hypothesis draws no constants from the project's source")
    assert getattr(providers._get_local_constants, "frozen", False), "tests/conftest.py did not freeze the pool"
    before = providers._get_local_constants()
    (tmp_path / "tile_constants_probe.py").write_text('LIMIT = 987654321\nNAME = "tile-probe-constant"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import tile_constants_probe  # noqa: F401

    try:
        after = providers._get_local_constants()
        assert after is before
        assert 987654321 not in after.integers and "tile-probe-constant" not in after.strings
    finally:
        sys.modules.pop("tile_constants_probe", None)
