"""Tile source for GEMM kernels as users write them (shared by the GEMM tests
and `benchmarks/gemm.py`): C = A @ B (or A @ B^T with B stored [N, K], as in a
linear layer), f16/bf16 inputs, f32 accumulation, f16/bf16/f32 output."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GemmConfig:
    bm: int
    bn: int
    bk: int
    dtype: str = "f16"  # the inputs
    out: str = "f16"  # the output (f32: no cast)
    trans_b: bool = False  # B stored [N, K], used as b.transpose()
    warps: int | None = None  # the num_warps hint (None: no hint)
    stages: int | None = None  # the stages hint
    unsafe_store: bool = False  # store with `store_unchecked` inside `unsafe`

    @property
    def name(self) -> str:
        t = "nt" if self.trans_b else "nn"
        h = "".join(f"_{k}{v}" for k, v in (("w", self.warps), ("s", self.stages)) if v is not None)
        u = "_unsafe" if self.unsafe_store else ""
        return f"{self.dtype}_{t}_{self.bm}x{self.bn}x{self.bk}{h}_{self.out}{u}"

    def source(self) -> str:
        hints = ", ".join(f"{k} = {v}" for k, v in (("num_warps", self.warps), ("stages", self.stages))
                          if v is not None)
        attr = f"#[hints({hints})]\n" if hints else ""
        b_part = "[BN, BK]" if self.trans_b else "[BK, BN]"
        b_load = "pb.load([block_id(1), k]).transpose()" if self.trans_b else "pb.load([k, block_id(1)])"
        value = "acc" if self.out == "f32" else f"acc as {self.out}"
        store = f"c.store({value});"
        if self.unsafe_store:
            store = f"unsafe {{ store_unchecked(&c, [block_id(0) * BM, block_id(1) * BN], {value}); }}"
        return f"""{attr}kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<{self.out}, [BM, BN]>,
                                                           a: &Tensor<{self.dtype}, [?, ?]>,
                                                           b: &Tensor<{self.dtype}, [?, ?]>) {{
    let pa = a.partition([BM, BK]);
    let pb = b.partition({b_part});
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {{
        acc = mma(pa.load([block_id(0), k]), {b_load}, acc);
    }}
    {store}
}}
"""


__all__ = ["GemmConfig"]
