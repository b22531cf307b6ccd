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
