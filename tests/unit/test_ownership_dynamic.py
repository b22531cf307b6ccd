"""The run-time form of the ownership rules (`tilelang.ownership.dynamic`),
for callers that pass arrays the static checker never sees."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.diagnostics.model import TileError
from tilelang.ownership.dynamic import BorrowTracker, Region


def _code(exc: pytest.ExceptionInfo[TileError]) -> str:
    return exc.value.diagnostics[0].code


def test_regions_of_views_overlap() -> None:
    a = np.zeros(1024, np.float32)
    left, right = Region.of(a[:512], "l"), Region.of(a[512:], "r")
    assert not left.overlaps(right)
    assert Region.of(a[256:768]).overlaps(left) and Region.of(a[256:768]).overlaps(right)
    assert not Region.of(np.zeros(4)).overlaps(Region.of(a))


def test_host_access_while_in_flight() -> None:
    z, x = np.zeros(64, np.float32), np.ones(64, np.float32)
    t = BorrowTracker()
    tok = t.launch("scale", writes=[Region.of(z, "z")], reads=[Region.of(x, "x")])
    t.access(Region.of(x, "x"), write=False, what="read")  # shared reads are fine
    with pytest.raises(TileError) as e:
        t.access(Region.of(z, "z"), write=False, what="read")
    assert _code(e) == "E0305" and "`z`" in e.value.diagnostics[0].message
    with pytest.raises(TileError) as e:
        t.access(Region.of(x, "x"), write=True, what="write")
    assert _code(e) == "E0305"
    t.wait(tok)
    t.wait(tok)  # idempotent
    t.access(Region.of(z, "z"), write=True)


def test_two_writers_in_flight_and_sync() -> None:
    z = np.zeros(64, np.float32)
    t = BorrowTracker()
    t.launch("inc", writes=[Region.of(z[:32], "z")])
    with pytest.raises(TileError) as e:
        t.launch("inc", writes=[Region.of(z[16:], "z")])
    assert _code(e) == "E0309"
    t.launch("inc", writes=[Region.of(z[32:], "w")], sync=True)  # disjoint halves
    assert len(t.inflight) == 1


def test_one_launch_aliasing_and_unpartitioned() -> None:
    z = np.zeros(64, np.float32)
    t = BorrowTracker()
    with pytest.raises(TileError) as e:
        t.launch("add", writes=[Region.of(z, "z")], reads=[Region.of(z[8:16], "x")])
    assert _code(e) == "E0303"
    with pytest.raises(TileError) as e:
        t.launch("add", writes=[Region.of(z, "z")], mutable_unpartitioned=["z"])
    assert _code(e) == "E0301"
    assert not t.inflight
