"""Read-only loads that cross a CTA barrier before their first use
(`Target.ldg_early`, `TILEC_LDG_EARLY=1`; off by default: not measured yet).

A load of a read-only tensor is `ld.global.nc` (`!invariant.load`): its data
cannot change during the kernel, so ptxas may move it anywhere, and it sinks
it toward its first use, also below a `bar.sync` between the two. Where that
barrier waits for another load's data (a tile exchanged through shared
memory), the sunk load is issued only after that load's round trip: two
dependent trips to memory where the kernel's order had one. std's
`decode_combine` at 16 and more shares: the partial outputs' `LDG` came after
the barrier of the log-sum-exps' exchange, itself after their `LDG` (SASS,
ptxas 13.0, sm_90a). A plain `ld.global` is not moved across the barrier, so
with the option such a load is emitted plain and stays issued where the
kernel has it.

The emitter writes a placeholder in each read-only load's metadata (`token`),
marks the loads whose value an op uses (`used`, before the op is emitted; a
reshape passes the mark on to its result) and those still unused at a
barrier (`crossed`), and `resolve` puts in the final text: nothing (a plain
load) for a crossed one, `!invariant.load` otherwise.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu.nodes import operands
from tilelang.ir import nodes as ir

NC = ", !invariant.load !0"


def _state(em: Any) -> tuple[dict[int, int], set[int]]:
    """(result id -> token of the loads not used yet, tokens crossed)."""
    st = getattr(em, "_ldg_early", None)
    if st is None:
        st = em._ldg_early = ({}, set())
    return st


def token(em: Any, result_id: int) -> str:
    """The metadata of a read-only load of result `result_id`: `NC`, or with
    the option a placeholder that `resolve` replaces."""
    if not getattr(em, "ldg_early", False):
        return NC
    live, _ = _state(em)
    n = getattr(em, "_ldg_tokens", 0)
    em._ldg_tokens = n + 1
    live[result_id] = n
    return f"@@ldg{n}@@"


def used(em: Any, op: object) -> None:
    """`op` is about to be emitted: the loads whose values it reads are used."""
    live = getattr(em, "_ldg_early", None)
    if live is None or not live[0]:
        return
    if isinstance(op, ir.Reshape) and op.x.id in live[0]:
        # a view of the loaded registers (where it moves them through shared
        # memory, its stores come before its barrier: the load then counts as
        # crossed, and a plain load where it stands costs nothing)
        live[0][op.result.id] = live[0].pop(op.x.id)
        return
    for v in operands(op):
        live[0].pop(v.id, None)


def crossed(em: Any) -> None:
    """A CTA barrier is emitted: the loads not used yet cross it."""
    live = getattr(em, "_ldg_early", None)
    if live is None:
        return
    live[1].update(live[0].values())
    live[0].clear()


def resolve(em: Any, text: str) -> str:
    """`text` with every placeholder replaced."""
    n = getattr(em, "_ldg_tokens", 0)
    if not n:
        return text
    _, out = _state(em)
    for i in range(n):
        text = text.replace(f"@@ldg{i}@@", "" if i in out else NC)
    return text
