"""hred: reductions the code generator took slowly, timed against PyTorch on the same CUDA tensors (the Python API),
each result compared with PyTorch's first. Run by benchmarks/hred_device.sh twice: as built, and with
`TILEC_REDUCE_STAGED=0 TILEC_REDUCE_XPOSE=0` (the code before hred), so old / new comes from one card.

- l09 `per_slice` ([1024, 256, 256] f32: 16 rows a thread summed across the lanes, twice: the transposing
  butterfly; then `.sum(1)` of the [1, 256] Slice-layout result: in registers, its result laid out apart);
- n03 `gn_fwd` ([1024, 8, 4096] f32, 16 warps: `t.sum(1)` of 4 rows a thread, transposing);
- a [C, 4096] sum of a Slice-layout tile ([2048, 8, 4096] f32: `t.sum(0).sum(1)` of a [1, 8, 4096] load, the
  first sum over the size-1 axis; 4 warps): staged (128 KB) and a serial loop of 4,096 a thread before,
  registers, shuffles and one exchange of the warps' partials now;
- controls: a row softmax ([8192, 1024], 4 rows a block) and a LayerNorm ([8192, 1024], 2 rows a block).

`--cpu`: every call once on tiny NumPy arrays on the interpreter (no PyTorch, no timings)."""

from __future__ import annotations


import numpy as np
from _user_bench import CPU, F, P, ROWS, arr, bench, close, print_rows, torch

import tilelang

SLICE_SUM = """
#[hints(num_warps = 4)]
kernel fn slice_sum<const C: i32, const P: i32>(y: &mut Tensor<f32, [1, C]>, x: &Tensor<f32, [?, C, P]>) {
    let t = x.partition([1, C, P]).load([block_id(0), 0, 0]);
    y.store(t.sum(0).sum(1).reshape([1, C]));
}
"""

ROWS_SRC = """
use std::nn::softmax;
#[hints(num_warps = 4)]
kernel fn row_softmax<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {
    y.store(softmax(x.load_like(y)));
}
#[hints(num_warps = 4)]
kernel fn layernorm<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>,
                                                 w: &Tensor<f32, [N]>, b: &Tensor<f32, [N]>) {
    let t = x.load_like(y);
    let mean = t.sum(1).reshape([BM, 1]) / (N as f32);
    let d = t - mean;
    let var = (d * d).sum(1).reshape([BM, 1]) / (N as f32);
    let wt = w.partition([N]).load([0]).reshape([1, N]);
    let bt = b.partition([N]).load([0]).reshape([1, N]);
    y.store(d * rsqrt(var + 1e-5) * wt + bt);
}
"""


def main() -> None:
    rng = np.random.default_rng(7)

    b9, m9 = (3, 16) if CPU else (1024, 256)
    mod9 = tilelang.load(P / "l09_three_axis_reductions.tile")
    x9 = arr(rng.standard_normal((b9, m9, m9), dtype=np.float32))
    tot, mean, var = (arr(np.zeros(b9, np.float32)) for _ in range(3))
    op = mod9.per_slice[m9, m9](tilelang.partition(tot, [1]), tilelang.partition(mean, [1]),
                                tilelang.partition(var, [1]), x9)
    bench("l09 slice sum/mean/var", op.launch, True, lambda: torch.var_mean(x9, (1, 2), unbiased=False),
          lambda: "ran" if CPU else close(var, torch.var(x9, (1, 2), unbiased=False), 1e-4))

    b3, c3, g3, hw = (2, 8, 4, 50) if CPU else (32, 256, 32, 4096)
    m03 = tilelang.load(P / "n03_group_norm_fwd_bwd.tile")
    x3 = rng.standard_normal((b3, c3, hw), dtype=np.float32)
    gam, bet = rng.standard_normal(c3, dtype=np.float32), rng.standard_normal(c3, dtype=np.float32)
    X3 = arr(x3.reshape(b3 * g3, c3 // g3, hw))
    y3 = arr(np.zeros((b3 * g3, c3 // g3, hw), np.float32))
    st = arr(np.zeros((b3 * g3, 2), np.float32))
    pw = 64 if CPU else 4096
    op = m03.gn_fwd[c3 // g3, pw](tilelang.partition(y3, [1, c3 // g3, pw]), tilelang.partition(st, [1, 2]), X3,
                                  arr(gam.reshape(g3, c3 // g3)), arr(bet.reshape(g3, c3 // g3)), g3)
    bench("n03 GroupNorm fwd", op.launch, True, lambda: F.group_norm(X3.reshape(b3, c3, hw), g3, arr(gam), arr(bet), 1e-5),
          lambda: "ran" if CPU else close(y3.reshape(b3, c3, hw),
                                          F.group_norm(X3.reshape(b3, c3, hw), g3, arr(gam), arr(bet), 1e-5), 1e-4))

    bs, cs, ps = (3, 8, 64) if CPU else (2048, 8, 4096)
    ms = tilelang.compile(SLICE_SUM)
    xs = arr(rng.standard_normal((bs, cs, ps), dtype=np.float32))
    ys = arr(np.zeros((bs, cs), np.float32))
    op = ms.slice_sum[cs, ps](tilelang.partition(ys, [1, cs]), xs)
    bench("[C, 4096] Slice-layout sum", op.launch, True, lambda: xs.sum(2),
          lambda: "ran" if CPU else close(ys, xs.sum(2), 1e-4))

    mr, nr = (8, 64) if CPU else (8192, 1024)
    mrows = tilelang.compile(ROWS_SRC)
    xr = arr(rng.standard_normal((mr, nr), dtype=np.float32))
    yr = arr(np.zeros((mr, nr), np.float32))
    op = mrows.row_softmax[4, nr](tilelang.partition(yr, [4, nr]), xr)
    bench("control: row softmax", op.launch, True, lambda: torch.softmax(xr, 1),
          lambda: "ran" if CPU else close(yr, torch.softmax(xr, 1), 1e-5))
    w, b = arr(rng.standard_normal(nr, dtype=np.float32)), arr(rng.standard_normal(nr, dtype=np.float32))
    yl = arr(np.zeros((mr, nr), np.float32))
    op = mrows.layernorm[2, nr](tilelang.partition(yl, [2, nr]), xr, w, b)
    bench("control: LayerNorm", op.launch, True, lambda: F.layer_norm(xr, (nr,), w, b, 1e-5),
          lambda: "ran" if CPU else close(yl, F.layer_norm(xr, (nr,), w, b, 1e-5), 1e-4))
    print_rows(ROWS, summary=not CPU)


if __name__ == "__main__":
    main()
