"""When a kernel's loop streams its loads: the rule of `TILEC_STREAM_AUTO` (unset: "auto"), picked at launch.

A loop that loads a tile a step and folds it into a few carried values (a column sum over row tiles) waits for
memory once a step with, without a ring, one step's tile a CTA in flight. By Little's law the card reads at
(bytes in flight) / (latency), up to its bandwidth: below the bandwidth-delay product BDP = bandwidth x latency
the loop is latency-bound and a ring (`passes/stream_loads.py`: cp.async copies S - 1 steps ahead) raises the
bytes in flight S - 1 times; at or above it the card is already fed and the ring only adds its cost (shared-memory
round trip, LDGSTS, the ring's registers). The constants, from the measured H100 (benchmarks/RESULTS.md):

- bandwidth 3.02 TB/s: the H100 80GB HBM3's copy bandwidth, every H100 call since 2026-12-05 ("copy 3.02 TB/s");
- latency 0.742 us: call 38's `col_sum` ([8192]^2 f32, [32, 128] tiles: 64 CTAs, one 16 KB tile each a step,
  1 MiB in flight) read 1,413 GB/s: 0.190 ms for 256 steps, 0.742 us a step = 1 MiB / 1,413 GB/s, the loaded
  latency a step sees with one tile a CTA in flight;
- BDP = 3.02e12 x 0.742e-6 = 2.24 MB (2.14 MiB). An H200 (4.27 TB/s copy, HBM3e) would give ~3.17 MB; the
  compiler does not tell the two apart (both sm_90a) and takes the H100's: on an H200 it streams a little less
  than it could, never more.

Call 39 (H100) measured the four rows this separates: 64 CTAs x 16 KB (1 MiB) 0.51 -> 0.88x torch streamed and
256 x 4 KB (1 MiB) 0.50 -> 0.84x (both below the BDP: the rule streams); 256 x 16 KB (4 MiB, above) 0.99 -> 0.90x
(the rule does not); 64 x 64 KB (4 MiB, above) 0.87 -> 1.03x: a gain the rule leaves (a second term, an SM's own
transfer time a step with half the SMs idle, would see it; one row is not enough to fit it).

What the rule needs, the launch's resident CTAs, is known only at a launch: the grid (a `&mut` tensor's
partition) and the blocks an SM holds (registers: ptxas's). So a kernel's first variant, compiled with no
grid (`tilec emit`, benchmarks/ptx_sha.py), never streams an unhinted loop (the conservative default) and asks
(`GpuKernel.stream`, `KernelABI.stream`: a `StreamAsk`, its loops' bytes); the runtime decides with `decide` on
the launch's grid, the card's SMs and the first variant's blocks an SM (the driver's occupancy calculator;
`blocks_estimate` where there is none: llsim) and, where a loop streams, launches the variant compiled with
the decision (`TensorFacts.stream` on `StreamAsk.tensor`). The ring's depth comes from the same law: the
fewest stages (at least 3: two tiles ahead, twice the bytes in flight) whose bytes in flight reach the BDP, at
most `MAX_STAGES`, counting the CTAs an SM still holds with the rings in its shared memory (a depth that cut
them so far that fewer bytes are in flight is not taken; nor a ring that neither reaches the BDP nor doubles
the bytes in flight: its cost would buy too little). The rings' registers are ptxas's: once the streamed variant
is compiled the runtime asks the driver for its blocks an SM and keeps the first variant where they no longer
give the bytes in flight the decision counted on (`holds`; col_sum's [32, 128] loop 46 -> 56 registers).
This module imports no CUDA library.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from tilelang.frozen import frozen

BANDWIDTH = 3.02e12  # bytes/s: the H100's copy bandwidth (RESULTS.md, H100 calls since 2026-12-05)
LATENCY = 0.742e-6  # s: call 38's col_sum, 1 MiB in flight a step at 1,413 GB/s (RESULTS.md "call 38", "hcliff12")
BDP = int(BANDWIDTH * LATENCY)  # 2,240,840 bytes
SM_SMEM = 228 * 1024  # an sm_90 SM's shared memory (227 KB a block at most, plus the 1 KB the driver keeps)
BLOCK_RESERVE = 1024  # shared memory the driver keeps for each resident block (sm_80+)
THREADS_SM = 2048  # threads an sm_90 SM holds
BLOCKS_SM = 32  # blocks an sm_90 SM holds
MIN_STAGES = 3  # two tiles ahead: a ring that does not double the bytes in flight is not worth its cost
MAX_STAGES = 8


@frozen(eq=True)
class StreamLoop:
    """One loop the rule decides: `flight` the bytes a CTA's step loads (every load of its body), `ring` the
    bytes a stage of its rings holds (its eligible loads: `stream_loads._Loop`), `fits` the stages the pass's
    shared-memory budget holds beside the kernel's buffers and the code generator's scratch (`_budget`)."""

    flight: int
    ring: int
    fits: int = MAX_STAGES


@frozen(eq=True)
class StreamAsk:
    """A kernel's request (`GpuKernel.stream`, `KernelABI.stream`): decide its loops at a launch and launch the
    variant compiled with the decision on `tensor`'s facts (`TensorFacts.stream`: a stage count a loop, 0 for
    a loop left as written, in the pass's order)."""

    tensor: str
    loops: tuple[StreamLoop, ...]


def blocks_estimate(threads: int, smem: int) -> int:
    """The blocks an SM holds by threads and shared memory alone (no register count before ptxas: an upper
    bound, so the bytes in flight without a ring are not underestimated)."""
    return max(0, min(BLOCKS_SM, THREADS_SM // max(threads, 1), SM_SMEM // (smem + BLOCK_RESERVE)))


def decide(ask: StreamAsk, ctas: int, sms: int, blocks: int, smem: int, threads: int, bdp: int = BDP
           ) -> tuple[int, ...]:
    """Stages for each of `ask`'s loops (0: left as written) on a launch of `ctas` CTAs, a card of `sms` SMs,
    `blocks` CTAs an SM without rings (the first variant's; <= 0: `blocks_estimate`), `smem` bytes of shared
    memory a CTA without rings, `threads` a CTA."""
    if blocks <= 0:
        blocks = blocks_estimate(threads, smem)
    out = []
    for loop in ask.loops:
        flight0 = min(ctas, sms * blocks) * loop.flight
        best, best_flight = 0, 0
        if 0 < flight0 < bdp and loop.ring > 0:
            for s in range(MIN_STAGES, min(MAX_STAGES, loop.fits) + 1):
                b = min(blocks, SM_SMEM // (smem + s * loop.ring + BLOCK_RESERVE))
                if b < 1:
                    break
                flight = min(ctas, sms * b) * ((s - 1) * loop.ring + loop.flight - loop.ring)
                if flight > best_flight:
                    best, best_flight = s, flight
                if flight >= bdp:
                    break
        if best and best_flight >= min(bdp, 2 * flight0):
            out.append(best)
            smem += best * loop.ring  # (a later loop's rings beside this one's)
        else:
            out.append(0)
    return tuple(out)


def holds(ask: StreamAsk, stages: tuple[int, ...], ctas: int, sms: int, blocks: int, blocks_streamed: int,
          bdp: int = BDP) -> bool:
    """Whether the streamed variant, holding `blocks_streamed` CTAs an SM (its own count, registers included:
    the driver's once it is compiled), still gives each streamed loop the bytes in flight `decide` took it for
    (the BDP, or twice the first variant's at `blocks` an SM); where the rings' registers cut the blocks further
    than the shared memory `decide` counted, it may not, and the launch keeps the first variant."""
    for loop, s in zip(ask.loops, stages, strict=True):
        if not s:
            continue
        flight0 = min(ctas, sms * blocks) * loop.flight
        flight = min(ctas, sms * blocks_streamed) * ((s - 1) * loop.ring + loop.flight - loop.ring)
        if flight < min(bdp, 2 * flight0):
            return False
    return True


def refine(abi: Any, facts: dict[str, Any], grid: tuple[int, ...], sms: int, blocks: Callable[[], int]
           ) -> tuple[tuple[object, ...], dict[str, Any]] | None:
    """(the facts key's addition, the facts) of the variant a launch on `grid` runs where the kernel variant
    `abi` (a `KernelABI`) asks (`KernelABI.stream`) and some loop streams; None: `abi`'s variant. `blocks`:
    the variant's blocks an SM (called only where it asks; <= 0: the estimate). The runtime's and llsim's."""
    ask = getattr(abi, "stream", None)
    if ask is None or not grid or ask.tensor not in facts or facts[ask.tensor].stream:
        return None
    decision = decide(ask, math.prod(grid), sms, blocks(), abi.smem_bytes, abi.num_threads)
    if not any(decision):
        return None
    return ("stream", decision), {**facts, ask.tensor: dataclasses.replace(facts[ask.tensor], stream=decision)}


__all__ = ["BDP", "MAX_STAGES", "MIN_STAGES", "StreamAsk", "StreamLoop", "blocks_estimate", "decide", "holds", "refine"]
