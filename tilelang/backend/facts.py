"""Specialisation facts about a launch's tensor arguments (part of the cache key).

The runtime computes them from the arguments (`runtime/cuda.py`); the GPU IR
passes and the code generator read them to pick vector widths and the TMA
path. `assumed()` are the facts `tilec emit` compiles for when no launch is
known: 16-byte aligned tensors whose dims are multiples of 16.
"""

from __future__ import annotations

import dataclasses

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
    # Under any PDL setting, only such a tensor is loaded `ld.global.nc`
    # (`backend/llvm.py`: ptxas moves those loads across the wait).
    early: bool = False
    # > 0: dim `Short.dim` of this tensor is at most this many (`Short`): set by the
    # runtime only where the kernel's first variant asks (`KernelABI.short`)
    rows_at_most: int = 0
    # The launch's persistent attention walk splits its last round along the keys: set by the
    # runtime only where the kernel's first variant asks (`KernelABI.split`, `split_form.SplitForm`)
    split_walk: str = ""  # "single" / "pairs": the form's walk; "tail" / "once": the walk's variant
    # The launch's grid (this `&mut` tensor's partition) has at most half as many tiles as the GPU has SMs: set by
    # the runtime only where the kernel's first variant asks (`KernelABI.few`: a GEMM's split-K, `gemm_split`)
    few_tiles: bool = False
    # The launch's grid (this `&mut` tensor's partition) has at least two waves of the GEMM's wide tiles (`KernelABI.wide`:
    # `gemm_widen`), set by the runtime only where the kernel's first variant asks
    wide_tiles: bool = False
    # The stages of each loop the kernel's first variant asked the rule about (`KernelABI.stream`,
    # `backend/stream_rule.decide`: 0 leaves a loop as written), for the launch's grid: set by the runtime only
    # where the kernel asks and some loop streams; () the first variant's (no unhinted loop streams)
    stream: tuple[int, ...] = ()

    @staticmethod
    def of_launch(ptr: int, shape: tuple[int, ...], bf16_f32: bool = False, early: bool = False) -> TensorFacts:
        """The facts of a launch's tensor at `ptr` of `shape` (the runtime's, one place).
        An empty tensor (a dimension of 0) gets none: no alignment, no dimension a
        multiple of 16. Its elements are read only through masks, and the paths those
        facts open read whole boxes without them: a TMA map cannot describe a dimension
        of 0 (`runtime/cuda_module.tensor_map` refuses it), and made 1 it read a row the
        tensor does not have (the pool's stale bytes, past a 256-byte block other
        tensors' memory, at a foreign library's null pointer a fault) where the
        interpreter reads zeros."""
        empty = 0 in shape
        return TensorFacts(ptr % 16 == 0 and not empty, tuple(d % 16 == 0 and not empty for d in shape),
                           bf16_f32, early)

    @staticmethod
    def assumed(rank: int) -> TensorFacts:
        return TensorFacts(True, (True,) * rank)

    def key(self) -> tuple[object, ...]:
        """The facts as a compile-cache key (`early` only when set: the keys of
        launches without PDL "+loads" are as they were)."""
        return (self.aligned16, self.dims_div16, self.bf16_f32, *(("early",) if self.early else ()),
                *((f"rows<={self.rows_at_most}",) if self.rows_at_most else ()), *((f"split={self.split_walk}",) if self.split_walk else ()),
                *(("few",) if self.few_tiles else ()), *(("wide",) if self.wide_tiles else ()),
                *((f"stream={','.join(map(str, self.stream))}",) if self.stream else ()))


@frozen(eq=True)
class Short:
    """A kernel's request for one more fact (`GpuKernel.short`, `KernelABI.short`):
    whether dim `dim` of tensor `param` is at most `limit`. Where a launch's is,
    the runtime compiles (and launches) the variant whose facts say so
    (`TensorFacts.rows_at_most`): the attention pass chains the short key
    sequences' tiles (`passes/attention_chain.py`, `TILEC_ATTN_CHAIN=auto`)."""

    param: str
    dim: int
    limit: int

    def refine(self, facts: dict[str, TensorFacts], shape: tuple[int, ...]) -> dict[str, TensorFacts] | None:
        """`facts` with the fact added where `shape` (the launch's of `param`)
        satisfies it; None where it does not (the launch keeps its variant)."""
        f = facts.get(self.param)
        if f is None or len(shape) <= self.dim or shape[self.dim] > self.limit:
            return None
        return {**facts, self.param: dataclasses.replace(f, rows_at_most=self.limit)}

    def key(self) -> tuple[object, ...]:
        """What a variant compiled with the fact adds to its facts' key."""
        return ("short", self.param, self.dim, self.limit)


def few_tiles(few: str, grid: tuple[int, ...]) -> tuple[str, int]:
    """(the tensor, the tiles the split-K variant walks) of a `GpuKernel.few` request (`passes/gemm_rows.request`,
    or a tensor's name: the grid's tiles) for a launch's logical `grid` (`runtime/cuda.CudaDevice._choose`)."""
    import math

    name, _, rest = few.partition(":")
    if not rest:
        return name, math.prod(grid)
    axis, rows = (int(x) for x in rest.split(":"))
    return name, math.prod(-(-n // rows) if a == axis else n for a, n in enumerate(grid))


__all__ = ["Short", "TensorFacts", "few_tiles"]
