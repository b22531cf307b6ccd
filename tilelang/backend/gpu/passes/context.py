"""What every GPU IR pass reads besides the kernel: the target and the facts.

`PassContext` is built once per compilation by `passes.lower_to_gpu`; passes
never mutate it. `Rewriter` helps passes that add values: fresh ids above the
kernel's `next_id`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir


@dataclass(frozen=True, slots=True)
class PassContext:
    arch: str = "sm_80"
    facts: dict[str, TensorFacts] = field(default_factory=dict)

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
