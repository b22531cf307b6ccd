"""Specialisation facts about a launch's tensor arguments (part of the cache key).

The runtime computes them from the arguments (`runtime/cuda.py`); the GPU IR
passes and the code generator read them to pick vector widths and the TMA
path. `assumed()` are the facts `tilec emit` compiles for when no launch is
known: 16-byte aligned tensors whose dims are multiples of 16.
"""

from __future__ import annotations

from tilelang.frozen import frozen


@frozen(eq=True)
class TensorFacts:
    aligned16: bool = False  # base pointer is 16-byte aligned
    dims_div16: tuple[bool, ...] = ()  # dim d is a multiple of 16
    # A bf16 tensor whose memory holds f32 values (memory another library owns,
    # as the Python API passes it); by default bf16 is 2-byte bfloat16 memory.
    bf16_f32: bool = False
    # Under PDL with `Target.pdl_prefetch` "loads": the runtime found that the
    # launch before this one in the stream writes none of this tensor (nor
    # triggers before its own wait), so the kernel may read it before its
    # `griddepcontrol.wait` (`codegen/pdl.py`, `runtime/cuda_pdl.early_names`).
    early: bool = False

    @staticmethod
    def assumed(rank: int) -> TensorFacts:
        return TensorFacts(True, (True,) * rank)

    def key(self) -> tuple[object, ...]:
        """The facts as a compile-cache key (`early` only when set: the keys of
        launches without PDL "+loads" are as they were)."""
        return (self.aligned16, self.dims_div16, self.bf16_f32, *(("early",) if self.early else ()))


__all__ = ["TensorFacts"]
