"""The words of E0721 (a host index or slice outside its axis), shared by the
checker, which reports a constant index at check time, and the host runtime,
which reports every other index when the statement runs: one text, so the two
never drift apart."""

from __future__ import annotations

from typing import NamedTuple

DEFAULT_HELP = "indices run from 0 to the axis's length - 1 (`t.shape()[0]`)"


class OutOfBounds(NamedTuple):
    message: str
    label: str
    help: str


def index_out_of_bounds(n: int, i: int) -> OutOfBounds | None:
    """`t[i]` on an axis of `n` elements, or None when `i` is inside it."""
    if 0 <= i < n:
        return None
    if n == 0:  # no element at all: "the last is at -1" would send the reader to another out-of-bounds index
        help_ = "the axis is empty: test its length first, `if t.shape()[0] > 0 { .. }`"
    elif -n <= i < 0:
        help_ = f"Tile has no negative indices (NumPy's `t[-1]`): the last is `t[{n - 1}]`, `t[t.shape()[0] - 1]`"
    elif i == n:
        help_ = f"one past the end: the last element is at index {n - 1}, `t[t.shape()[0] - 1]`"
    else:
        help_ = DEFAULT_HELP
    return OutOfBounds(f"index {i} is out of bounds for an axis of {n} elements", f"must be in 0..{n}", help_)


def slice_out_of_bounds(n: int, lo: int, hi: int) -> OutOfBounds | None:
    """`t[lo..hi]` on an axis of `n` elements, or None when it lies inside it."""
    if 0 <= lo <= hi <= n:
        return None
    message = (f"slice {lo}..{hi} is out of bounds for an axis of {n} elements" if lo <= hi
               else f"slice {lo}..{hi} starts after it ends")
    return OutOfBounds(message, f"must lie within 0..{n}", DEFAULT_HELP)


def item_not_one(shape: str, size: int) -> OutOfBounds | None:
    """`t.item()` on a tensor of `size` elements (its shape written `shape`), or None for one element."""
    if size == 1:
        return None
    return OutOfBounds(f"`item` needs a tensor of one element, found {shape} ({size} elements)",
                       "not one element", "reduce it first (`t.sum()`, `t.max()`) or index one element")
