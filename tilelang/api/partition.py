"""`tilelang.partition(array, tile)`: the value a `&mut` kernel parameter takes."""

from __future__ import annotations

from collections.abc import Iterable
from types import EllipsisType
from typing import Any

import numpy as np

from tilelang.api.errors import CallError
from tilelang.diagnostics.codes import launch as lcodes


# ---------------------------------------------------------------- partitions
class Partition:
    """An array split into tiles of `tile` elements, for a `&mut` kernel
    parameter (Tile's `t.partition([..])`). Made by `tilelang.partition`;
    a value: neither field is ever reassigned."""

    __slots__ = ("array", "tile")

    def __init__(self, array: Any, tile: tuple[Any, ...]) -> None:  # ints, or `...` for the tuner
        self.array = array
        self.tile = tile

    def __repr__(self) -> str:
        return f"tilelang.partition(<{type(self.array).__name__}>, {list(self.tile)})"


_new = object.__new__


def partition(array: Any, tile: Iterable[int] | int | EllipsisType) -> Partition:
    """`array` split into tiles of shape `tile` (one int for a 1-D tile); pass
    it for a `&mut` parameter. Block `i` of the grid writes tile `i` only;
    the grid is `ceil(array.shape / tile)` per dimension, so the tiles at the
    far edges may be partial. For a kernel with `#[autotune]`, `...` (or
    `...` for some dimensions, `[..., 64]`) leaves the tile shape to the tuner."""
    t = type(tile)
    if t is list and len(tile) == 1:  # the common call, `partition(z, [1024])`, without a copy
        d = tile[0]
        if type(d) is int and d > 0:
            p = _new(Partition)
            p.array = array
            p.tile = (d,)
            return p
    if t is list or t is tuple:
        first: tuple[Any, ...] = tuple(tile)  # type: ignore[arg-type]
        for d in first:  # the common case: plain positive ints
            if type(d) is not int or d <= 0:
                break
        else:
            if first:
                return Partition(array, first)
    if tile is Ellipsis:
        rank = len(getattr(array, "shape", ()) or ())
        return Partition(array, (Ellipsis,) * max(rank, 1))
    try:
        dims: tuple[Any, ...] = (tile,) if isinstance(tile, (int, np.integer)) else tuple(tile)
    except TypeError:  # `None`, a float: not a shape at all
        dims = ()
    if not dims or not all(
        d is Ellipsis or (isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0)
        for d in dims
    ):
        raise CallError(
            f"a tile shape is a list of positive integers, not {tile!r}",
            code=lcodes.BAD_PARTITION,
            help="write it like `tilelang.partition(z, [128, 64])`",
        )
    return Partition(array, tuple(d if d is Ellipsis else int(d) for d in dims))
