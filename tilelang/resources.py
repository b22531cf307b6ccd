"""Locating the data files that ship with tilec: the grammar and the stdlib.

In a wheel they live inside the package (`tilelang/_data/grammar`,
`tilelang/_data/stdlib`, mapped there by `pyproject.toml`); in a source
checkout or an editable install they are the top-level `grammar/` and
`stdlib/` folders. Everything that needs them goes through this module.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent


def _data_dir(name: str) -> Traversable:
    packaged = resources.files("tilelang") / "_data" / name
    if packaged.is_dir():
        return packaged
    return _CHECKOUT / name  # type: ignore[return-value]


def grammar_dir() -> Traversable:
    return _data_dir("grammar")


def stdlib_dir() -> Traversable:
    return _data_dir("stdlib")


@functools.cache
def grammar_text() -> str:
    return (grammar_dir() / "tile.lark").read_text(encoding="utf-8")
