"""Locating the data files that ship with tilec: the grammar and the stdlib.

In a wheel they live inside the package (`tilelang/_data/grammar`,
`tilelang/_data/stdlib`, mapped there by `pyproject.toml`); in a source
checkout or an editable install they are the top-level `grammar/` and
`stdlib/` folders. Everything that needs them goes through this module.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Traversable

_CHECKOUT = Path(__file__).resolve().parent.parent


@functools.cache  # (where the package is does not change in a process: every compile's loader asks)
def _data_dir(name: str) -> Traversable:
    # On disk (a wheel's `_data`, or a checkout) without `importlib.resources`,
    # which is slow to import; it is only needed for a zipped install.
    here = Path(__file__).resolve().parent / "_data" / name
    if here.is_dir():
        return here
    if (_CHECKOUT / name / ("tile.lark" if name == "grammar" else "std")).exists():
        return _CHECKOUT / name
    from importlib import resources

    packaged = resources.files("tilelang") / "_data" / name
    if packaged.is_dir():
        return packaged
    return _CHECKOUT / name


def grammar_dir() -> Traversable:
    return _data_dir("grammar")


def stdlib_dir() -> Traversable:
    return _data_dir("stdlib")


@functools.cache
def grammar_text() -> str:
    return (grammar_dir() / "tile.lark").read_text(encoding="utf-8")
