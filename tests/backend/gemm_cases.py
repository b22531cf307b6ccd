"""Tile source for GEMM kernels as users write them (shared by the GEMM tests
and `benchmarks/gemm.py`): C = A @ B (or A @ B^T with B stored [N, K], as in a
linear layer), f16/bf16 inputs, f32 accumulation, f16/bf16/f32 output; and
random inputs for them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# A linear layer whose accumulator starts at 0.5, with a bias and a residual in its epilogue (the GEMM tests of
# epilogue loads, split-K's start and the GPU forms: test_gemm_tiles, test_gemm_persistent, test_gpu_gemm_persistent)
LINEAR = """
kernel fn linear<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                             w: &Tensor<f16, [?, ?]>, bias: &Tensor<f32, [?]>,
                                                             res: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = full::<f32>([BM, BN], 0.5);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);
    let r = res.partition([BM, BN]).load([block_id(0), block_id(1)]);
    c.store(maximum(acc + b, 0.0) + r);
}
"""


@dataclass
class LinearCase:
    """LINEAR at one launch: its Tile IR kernel, random f16 a [M, K] / w [N, K] and f32 bias [N] / res [M, N] (drawn in
    that order from `seed`), the tensors' facts as a launch computes them, and the interpreter's result."""

    kernel: object
    tile: tuple[int, int, int]
    a: np.ndarray
    w: np.ndarray
    bias: np.ndarray
    res: np.ndarray
    facts: dict

    @property
    def shape(self) -> tuple[int, int]:
        return self.a.shape[0], self.w.shape[0]

    def interpreted(self) -> np.ndarray:
        """C by the interpreter (every element written: no NaN left)."""
        import tilelang

        bm, bn, bk = self.tile
        want = np.full(self.shape, np.nan, np.float32)
        tilelang.compile(LINEAR).linear[bm, bn, bk](tilelang.partition(want, [bm, bn]), self.a, self.w, self.bias,
                                                    self.res).sync()
        return want

    def simulated(self, grid: tuple[int, ...], facts: dict | None = None) -> np.ndarray:
        """C by llsim at sm_90a on `grid` (with `facts`, else the launch's)."""
        from llsim import SimDevice

        got = np.full(self.shape, np.nan, np.float32)
        SimDevice("sm_90a").run(self.kernel, grid, [got, self.a, self.w, self.bias, self.res], facts or self.facts)
        return got


def linear_case(M: int, N: int, K: int, tile: tuple[int, int, int], seed: int) -> LinearCase:
    """LINEAR with BM x BN x BK = `tile` over C [M, N] and K (the GEMM tests' linear layer: test_gemm_persistent,
    test_gemm_tiles, test_gemm_rows)."""
    from tilelang import driver
    from tilelang.backend.facts import TensorFacts

    bm, bn, bk = tile
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    w = rng.standard_normal((N, K)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    res = rng.standard_normal((M, N)).astype(np.float32)
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let w = zeros::<f16>([8, 8]); let b = zeros::<f32>([8]);"
            " let r = zeros::<f32>([8, 8]); let mut o = zeros::<f32>([8, 8]);"
            f" linear::<{bm}, {bn}, {bk}>(o.partition([{bm}, {bn}]), &a, &w, &b, &r).sync(); }}\n")
    kernel = driver.compile(LINEAR + main, "ir").output[0]
    shapes = {"a": a.shape, "w": w.shape, "bias": bias.shape, "res": res.shape, "c": (M, N)}
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for n, s in shapes.items()}
    return LinearCase(kernel, tile, a, w, bias, res, facts)


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

    def inputs(self, M: int, N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Standard normal A [M, K] and B ([N, K] with `trans_b`, else [K, N]) in
        the input type (bf16 as float32 arrays of exact bf16 values), and C [M, N]
        of the output type full of NaN (an unwritten element shows)."""
        rng = np.random.default_rng(seed)
        np_in = np.float16 if self.dtype == "f16" else np.float32
        a = rng.standard_normal((M, K)).astype(np_in)
        b = rng.standard_normal((N, K) if self.trans_b else (K, N)).astype(np_in)
        if self.dtype == "bf16":  # exact bf16 values
            a = (a.view(np.uint32) & 0xFFFF0000).view(np.float32)
            b = (b.view(np.uint32) & 0xFFFF0000).view(np.float32)
        c = np.full((M, N), np.nan, np.float32 if self.out == "f32" else np.float16)
        return a, b, c

    def assert_product(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, seed: int | None = None) -> None:
        """Every element of C written, and C = A @ B (B^T with `trans_b`) in
        float64 within the output type's tolerance (atol growing as sqrt(K)),
        a failure naming `seed` (the inputs' draw). The f32 accumulation of K
        products of values ~1 rounds ~1e-6 of a sum, an f16 output 2^-11 of
        it: far inside the tolerance for any draw (`python
        benchmarks/seed_sweep.py hopper|sm80` prints the worst error /
        tolerance over many seeds)."""
        ref = a.astype(np.float64) @ (b.astype(np.float64).T if self.trans_b else b.astype(np.float64))
        assert not np.isnan(c).any(), f"unwritten elements (seed {seed})"
        tol = 1e-3 if self.out == "f32" else 2e-2
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=tol, atol=tol * np.sqrt(max(a.shape[1], 1)),
                                   err_msg=f"seed {seed}")

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


__all__ = ["LINEAR", "GemmConfig", "LinearCase", "linear_case"]
