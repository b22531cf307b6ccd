"""`runtime/cuda_arrive.py`: which zeroed counter buffer a launch of a kernel
with `if last_block(axis)` gets, with a stub driver (no GPU): one per stream,
reused, grown without freeing the old one (a launch in flight may count on
it), one for the launches captured on a stream (zeroed outside the graph
when a spare fits, grown as a stream's), and the graph owns those."""

from __future__ import annotations

from typing import Any

from tilelang.runtime.cuda_arrive import MIN_BYTES, SPARES, Counters, groups


class _Buf:
    def __init__(self, ptr: int, nbytes: int) -> None:
        self.ptr, self.nbytes, self.capacity = ptr, nbytes, nbytes


class _Ctx:
    def __init__(self) -> None:
        self.allocs: list[_Buf] = []
        self.sync_zeroed: list[int] = []
        self.async_zeroed: list[tuple[int, Any]] = []
        ctx = self

        class Pool:
            def alloc(self, n: int) -> _Buf:
                b = _Buf(0x1000 * (len(ctx.allocs) + 1), n)
                ctx.allocs.append(b)
                return b

        class Driver:
            def cuMemsetD8(self, ptr: int, v: int, n: int) -> int:
                ctx.sync_zeroed.append(ptr)
                return 0

            def cuMemsetD8Async(self, ptr: int, v: int, n: int, s: Any) -> int:
                ctx.async_zeroed.append((ptr, s))
                return 0

        self.pool, self.d = Pool(), Driver()


def _counters() -> tuple[Counters, _Ctx]:
    ctx = _Ctx()
    return Counters(ctx, lambda r, what: r), ctx


def test_groups_are_the_grid_without_the_axis() -> None:
    assert groups("arrive:1", (8, 32, 1)) == 8
    assert groups("arrive:0", (8, 32)) == 32
    assert groups("arrive:2", (4, 3)) == 12


def test_a_stream_reuses_its_buffer_and_keeps_an_outgrown_one() -> None:
    c, ctx = _counters()
    s1, s2 = object(), object()
    p = c.pointer(s1, 8, capturing=False)
    assert c.pointer(s1, 200, capturing=False) == p  # 256 counters fit
    assert p in ctx.sync_zeroed and ctx.allocs[0].nbytes == MIN_BYTES
    assert c.pointer(s2, 8, capturing=False) != p  # another stream may run at the same time
    big = c.pointer(s1, 1000, capturing=False)
    assert big != p and c.by_stream[id(s1)].nbytes >= 4000
    assert [b.ptr for b in c.outgrown] == [p]  # not freed: a launch in flight may still count on it
    n = len(ctx.allocs)
    for _ in range(1000):
        c.pointer(s1, 1000, capturing=False)
    assert len(ctx.allocs) == n  # no allocation per launch


def test_launches_captured_on_a_stream_share_the_capture_s_zeroed_buffer() -> None:
    # one buffer a capture, not one a launch: a step graph of 36 such
    # launches would otherwise record a memset before all but the first 4
    c, ctx = _counters()
    eager, cap, other = object(), object(), object()
    p = c.pointer(eager, 8, capturing=False)
    assert len(c.spares) == SPARES
    got = [c.pointer(cap, 8, capturing=True) for _ in range(40)]
    assert len(set(got)) == 1 and p not in got  # replayed next to eager launches: not the stream's
    assert len(c.spares) == SPARES - 1 and not ctx.async_zeroed  # a spare zeroed outside the graph
    assert c.pointer(other, 8, capturing=True) not in got  # another stream's capture may run alongside
    grown = c.pointer(cap, 4 * MIN_BYTES, capturing=True)  # more groups than any spare holds
    assert grown not in got and ctx.async_zeroed == [(grown, cap)]  # zeroed by a memset the graph records
    assert c.pointer(cap, 8, capturing=True) == grown
    owned = c.take(cap)
    assert sorted(b.ptr for b in owned) == sorted({got[0], grown}) and c.take(cap) == []
