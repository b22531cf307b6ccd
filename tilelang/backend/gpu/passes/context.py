"""What every GPU IR pass reads besides the kernel: the target and the facts.

`PassContext` is built once per compilation by `passes.lower_to_gpu`; passes
never mutate it, but for `notes`: why a faster path refused a loop (`refuse`),
which `lower_to_gpu` puts on the kernel (`GpuKernel.notes`) for `tilec emit
--explain` and `TILEC_EXPLAIN=1` (docs/reference.md, "Which path a kernel takes"). `Rewriter` helps passes that add values: fresh ids above the
kernel's `next_id`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.backend.facts import TensorFacts
from tilelang.diagnostics.model import Diagnostic, Severity
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import Span


@dataclass(frozen=True, slots=True)
class PassContext:
    arch: str = "sm_80"
    facts: dict[str, TensorFacts] = field(default_factory=dict)
    notes: list[Diagnostic] = field(default_factory=list)
    # > 0: the most warps `lift.default_warps` may raise a kernel to (`backend.lower_gpu` lowers again with
    # fewer where the raised count's code does not fit shared memory or the register budget)
    max_warps: int = 0

    def refuse(self, path: str, span: Span, why: str, help: str = "") -> None:
        """Note that `path` (e.g. "the Hopper attention pipeline") refused the loop at `span` because `why`
        (a matcher's reason; each once: a matcher may run twice on one kernel). Returns None, what a matcher
        returns when it refuses."""
        self.note(span, f"{path} does not take this loop: {why}", help)

    def note(self, span: Span, message: str, help: str = "") -> None:
        """A note on what a pass chose instead of what a hint asked (each once), shown where `refuse`'s are."""
        d = Diagnostic("", message, severity=Severity.NOTE).primary(span)
        if help:
            d = d.with_help(help)
        if all(n.message != d.message for n in self.notes):
            self.notes.append(d)

    def advise(self, span: Span, why: str, help: str = "") -> None:
        """Note that the Hopper attention pipeline takes the loop at `span` at a cost `why` (its blocks or its
        spelling chose; `attention_advice`), each once."""
        self.note(span, f"the Hopper attention pipeline takes this loop, but {why}", help)

    @property
    def sm(self) -> int:
        return int(self.arch[3:5])

    @property
    def has_wgmma(self) -> bool:
        """wgmma and setmaxnreg exist only on the `a` target of CC 9.0."""
        return self.arch == "sm_90a"

    def fact(self, tensor: str) -> TensorFacts:
        return self.facts.get(tensor, TensorFacts())


class Fresh:
    """New SSA values with ids from `start` on."""

    def __init__(self, start: int) -> None:
        self.next = start

    def value(self, dtype: DType, shape: tuple[int, ...] = (), hint: str = "") -> ir.Value:
        v = ir.Value(self.next, ir.Type(dtype, tuple(shape)), hint)
        self.next += 1
        return v


__all__ = ["Fresh", "PassContext"]
