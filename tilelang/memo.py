"""A memo of what a function computes from one object (a kernel's declaration,
mostly), keyed by the object's identity.

The entry keeps its object alive, so its `id` cannot be reused by another
object (the REPL and the language server make new declarations while old
ones go) while the entry stands, and an entry answers only for the very
object it was made for. A memo holds at most `limit` entries (cleared
whole past it: the values are recomputed, never wrong).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

V = TypeVar("V")


class ByIdentity:
    """`memo.get(obj, make)`: `make()` once an object (until the memo fills)."""

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int = 4096) -> None:
        self._entries: dict[int, tuple[Any, Any]] = {}
        self._limit = limit

    def get(self, obj: Any, make: Callable[[], V]) -> V:
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]  # type: ignore[no-any-return]
        value = make()
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(obj)] = (obj, value)
        return value
