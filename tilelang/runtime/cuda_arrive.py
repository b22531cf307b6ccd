"""The group counters of `if last_block(axis)` launches (`ParamSlot` "arrive:AXIS")
and of tile queues, `for s in queue(axis)` ("queue:AXIS": one counter a row,
reset by the row's last pull, `backend/codegen/arrive.py`; `queue_grid` sizes
such a launch).

A kernel with `last_block` takes one more pointer: an array of u32 counters,
one per group of the launch (`groups`: the grid's blocks over its size along
the axis). Every block adds one to its group's counter; the last resets it
to zero (`backend/codegen/arrive.py`). So a zeroed buffer stays zero after
every launch that finishes, and needs zeroing only once, when it is made.

Which buffer a launch gets:
- outside a graph capture, the stream's buffer (launches on one stream run
  one after another; under programmatic dependent launch the next grid
  waits for this one before it touches memory), grown when a launch has more
  groups; an outgrown buffer is kept (a launch in flight may still count on
  it), so a stream holds at most log2 of its largest launch's buffers;
- inside a capture, the capture's own buffer (a graph may be replayed on
  any stream, next to eager launches), shared by the launches captured on
  that stream (they run one after another, as eager ones do) and grown as
  the stream's is: a zeroed spare made outside the capture when one fits,
  else a new one zeroed by a memset the graph records (it then runs before
  each replay, which is harmless, but it is a node between two launches:
  a graph of many such launches, as a decode step's, would record a memset
  before each of them had they a buffer apiece). The device's own graphs
  (`end_capture`) own their buffers; one captured by another library keeps
  its buffers as long as the device lives (one per captured launch, not per
  replay).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Any

MIN_BYTES = 1024  # 256 counters: a stream's first buffer
SPARES = 4  # zeroed buffers kept ready for launches captured into graphs


def groups(slot: str, grid: tuple[int, ...]) -> int:
    """The launch's number of groups for the slot "arrive:AXIS" or "queue:AXIS"
    (`grid`: the logical grid; a queue's rows are its groups)."""
    axis = int(slot.split(":")[1])
    return max(math.prod(g for d, g in enumerate(grid) if d != axis), 1)


MAX_GRID = ((1 << 31) - 1, 65535, 65535)  # CUDA's grid: blocks along x, y, z


def launch_grid(abi: Any, grid: tuple[int, ...], sms: int) -> tuple[int, int, int]:
    """The CUDA grid that runs the logical `grid` of a kernel with ABI `abi`: the
    grid itself, or for a kernel that walks its grid (`KernelABI.persistent`
    CTAs an SM) at most that many CTAs on each of `sms` multiprocessors
    (`TILEC_PERSISTENT_SMS` overrides `sms`: tests and sanitizer runs give
    small grids several tiles a CTA that way). A grid CUDA cannot launch is a
    TileError naming the axis (the launch labels it), before any GPU work:
    the driver's own answer, CUDA_ERROR_INVALID_VALUE, names nothing."""
    out = _launch_grid(abi, grid, sms)
    for axis, (n, cap) in enumerate(zip(out, MAX_GRID, strict=True)):
        if n > cap:
            from tilelang.diagnostics.codes.codegen import CUDA_ERROR
            from tilelang.diagnostics.model import Diagnostic, TileError

            raise TileError(Diagnostic.error(
                CUDA_ERROR, f"the launch has {n} blocks along grid axis {axis}, more than the {cap} a GPU grid "
                f"holds there")
                .with_help("put the axis with the most tiles first (CUDA allows 2147483647 blocks along axis 0 "
                           "and 65535 along axes 1 and 2), or use larger tiles along that axis; the CPU "
                           "interpreter has no such limit"))
    return out


def _launch_grid(abi: Any, grid: tuple[int, ...], sms: int) -> tuple[int, int, int]:
    g = tuple(grid) + (1,) * (3 - len(grid))
    per = getattr(abi, "persistent", 0)
    if per > 0:
        if "TILEC_PERSISTENT_SMS" in os.environ:  # (a test's or a measurement's cap; checked: E0604)
            from tilelang.env_switch import number

            sms = number("TILEC_PERSISTENT_SMS", sms, 1)
        if getattr(abi, "fill", False):  # a split-K GEMM: its pieces fill the card whatever the tiles
            return (max(1, per * sms), 1, 1)
        return (max(1, min(g[0] * g[1] * g[2], per * sms)), 1, 1)
    axis = getattr(abi, "queue", -1)
    if axis >= 0:
        return queue_grid(g, axis, getattr(abi, "queue_per_sm", 0) or 1, sms)
    return (g[0], g[1], g[2])


def queue_grid(g: tuple[int, ...], axis: int, per_sm: int, sms: int) -> tuple[int, int, int]:
    """The CUDA grid of a kernel with a tile queue along `axis` over the logical
    grid `g` (its partitions' tiles): along the axis, as many blocks a row as
    fill `per_sm` blocks on each of `sms` multiprocessors once (one wave: the
    queue balances the rows' tiles inside it), at most the tiles, at least 1.
    `TILEC_QUEUE_PER_SM` overrides `per_sm` (measurements, tests)."""
    if "TILEC_QUEUE_PER_SM" in os.environ:
        from tilelang.env_switch import number

        per_sm = number("TILEC_QUEUE_PER_SM", per_sm, 1)
    rows = 1
    for d, n in enumerate(g[:3]):
        if d != axis:
            rows *= max(1, n)
    out = [*g[:3]]
    out[axis] = max(1, min(g[axis], per_sm * sms // rows, STEP_ROOM - g[axis]))
    return (out[0], out[1], out[2])


# A walking block's next tile is `s + W` in `i32` (W blocks a row; the
# queue's tickets the same): for the last tile's `s` (n - 1) the step must
# stay in `i32`, or it wraps below 0, the loop goes on and tiles run twice.
# Only a walk of over 2^31 - W tiles along the axis (a dimension near 2^31
# of tiles of 1) meets it: it gets fewer walking blocks.
STEP_ROOM = 1 << 31


class Counters:
    def __init__(self, ctx: Any, check: Any) -> None:
        self.ctx = ctx
        self._check = check
        self.by_stream: dict[int, Any] = {}
        self.outgrown: list[Any] = []
        self.spares: list[Any] = []
        self.captured: dict[int, list[Any]] = defaultdict(list)  # by id(stream), until the graph takes them
        self.orphans: list[Any] = []

    def _zeroed(self, nbytes: int) -> Any:
        buf = self.ctx.pool.alloc(nbytes)
        self._check(self.ctx.d.cuMemsetD8(buf.ptr, 0, buf.nbytes), "cuMemsetD8")
        return buf

    def pointer(self, stream: Any, n: int, capturing: bool) -> int:
        need = 4 * n
        if capturing:
            mine = self.captured[id(stream)]
            if mine and mine[-1].nbytes >= need:
                return int(mine[-1].ptr)
            fit = next((b for b in self.spares if b.nbytes >= need), None)
            if fit is not None:
                self.spares.remove(fit)
            else:
                fit = self.ctx.pool.alloc(need)
                self._check(self.ctx.d.cuMemsetD8Async(fit.ptr, 0, fit.nbytes, stream), "cuMemsetD8Async")
            self.captured[id(stream)].append(fit)
            return int(fit.ptr)
        buf = self.by_stream.get(id(stream))
        if buf is None or buf.nbytes < need:
            if buf is not None:
                self.outgrown.append(buf)
            buf = self.by_stream[id(stream)] = self._zeroed(max(need, MIN_BYTES, 2 * (buf.nbytes if buf else 0)))
        while len(self.spares) < SPARES:
            self.spares.append(self._zeroed(buf.nbytes))
        return int(buf.ptr)

    def take(self, stream: Any) -> list[Any]:
        """The buffers of launches captured on `stream` (the graph keeps them)."""
        ws = self._ws.take(stream) if self._ws is not None else []
        return self.captured.pop(id(stream), []) + ws

    def disown(self, stream: Any) -> None:
        """A capture on `stream` ended elsewhere (another library's graph)."""
        self.orphans += self.captured.pop(id(stream), [])
        if self._ws is not None:
            self._ws.disown(stream)

    _ws: Counters | None = None  # the split workspaces: buffers of their own, never shared with counters

    def for_slot(self, stream: Any, slot: str, grid: tuple[int, ...], launch: tuple[int, ...], capturing: bool) -> int:
        """The buffer of `ParamSlot` `slot` for a launch of logical grid `grid`
        on CUDA grid `launch`: "arrive:AXIS" / "queue:AXIS" counters (`groups`),
        "split" a counter a CTA ("split:K": K), "splitws:WORDS:THREADS:R" a split workspace (R
        records of WORDS words a thread for each CTA, `backend/codegen/split.py`;
        from buffers never used as counters, whose words it leaves unzeroed)."""
        ctas = max(1, launch[0] * launch[1] * launch[2])
        if slot == "split" or slot.startswith("split:"):
            return self.pointer(stream, ctas * (int(slot[6:]) if slot != "split" else 1), capturing)
        if slot.startswith("splitws:"):
            _, w, t, r = slot.split(":")
            if self._ws is None:
                self._ws = Counters(self.ctx, self._check)
            return self._ws.pointer(stream, ctas * int(r) * int(w) * int(t), capturing)
        return self.pointer(stream, groups(slot, grid), capturing)
