"""GPU IR ops of the persistent attention walk's last round (`passes/attention_qsplit.py`): a thread's
warpgroup, and the tickets that hand the round's work to the CTAs that finish first. Apart from `nodes.py`
(for its size), which imports them into `GpuOp` and its accessors (`results`, `operands`) as its own."""

from __future__ import annotations

from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import DUMMY_SPAN, Span


@frozen
class WarpgroupIndex:
    """`result` (an i32 scalar, uniform over a WARPGROUP only, unlike other
    scalars) is the index of the thread's warpgroup in its role (`%tid` /
    128 of the consumers, whose warpgroup g holds rows [64 g, 64 g + 64) of
    a wgmma accumulator). Only a branch on it whose sides touch nothing the
    other warpgroup's threads must meet (no named barrier of the role, no
    value moved between warpgroups) may read it: the last round's 64-row
    halves (`passes/attention_qsplit.py`)."""

    result: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class TicketTake:
    """`result` (i32; in a role one thread runs, `Role.single`) = the launch's next ticket: the
    split's counter `size` (`%split`, `codegen/split.py`: after the first `size`, the split's groups',
    the ABI asking for one more counter a CTA) before an atomic add of 1, which the taker of
    ticket `size` - 1 resets to 0 (each of the launch's `size` CTAs takes one, so the counter is zero
    again for the next launch; tickets come in the order the CTAs get here). Written to the CTA's
    shared word of `bar` (the emitter's handoff area, apart from every scratch use) and published by
    an arrival on `bar[stage]` (count 1), which `TicketRead` waits for: the last round's halves handed to the CTAs that finish first
    (`passes/attention_qsplit.py`, `TILEC_ATTN_CHAIN_HALVES=dyn`, `TILEC_ATTN_CHAIN_SPLIT=dyn`)."""

    result: ir.Value
    size: ir.Value
    bar: ir.Value
    stage: ir.Value
    span: Span = DUMMY_SPAN


@frozen
class TicketRead:
    """`result` (i32) = the ticket `TicketTake` published on `bar` in the CTA's shared word of it (the
    caller waits for its barrier's phase first: a `BarrierWait`)."""

    result: ir.Value
    bar: ir.Value
    span: Span = DUMMY_SPAN


__all__ = ["TicketRead", "TicketTake", "WarpgroupIndex"]
