"""hrev22 (2026-12-07, round 22; no device time of its own): the GEMM walk and block-order fixes on a real GPU.
Each case runs a program on the GPU and on the interpreter and compares `main`'s tensors (f32 sums of small
integers: exact). `python benchmarks/hrev22_device.py CASE` prints one line `CASE ok|DIFF|ERROR ..`.

- aw_grouped: a 9 x 2 f16 tensor-core GEMM with `if last_block(0)` and `arrive_wait` (before: `block_order`
  regrouped it and the %ctaid-elected waiter hung; now the grid's order is kept);
- split_group_first / split_aw: an f32 FMA GEMM of 2 tiles (the split-K variant on 132 SMs) with a `last_block`
  region, the group's tile first / with `arrive_wait` (before: half of `c` zeros / the region skipped, the
  counter left non-zero; now the kernel does not walk);
- cluster_gather_few / cluster_12_few: a `#[cluster]` FMA GEMM of few tiles with `cluster_gather` / of (1, 2)
  clusters without one (before: an internal error / a launch of no whole clusters; now no walk).
"""
import io
import sys

import numpy as np

import tilelang.run as run

GEMM = """
KATTR
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(PARAMS, a: &Tensor<ET, [?, ?]>, b: &Tensor<ET, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    EPILOGUE
}

fn main() {
    let a = ((randn::<f32>([M, K], 1) * 4.0) as i32 as f32) as ET;
    let b = ((randn::<f32>([K, N], 2) * 4.0) as i32 as f32) as ET;
    let mut c = zeros::<f32>([M, N]);
    let mut tot = zeros::<f32>([1, N]);
    g::<16, 16, 16>(ARGS, &a, &b).sync();
    g::<16, 16, 16>(ARGS, &a, &b).sync();
}
"""
C, TOT = "c: &mut Tensor<f32, [BM, BN]>", "tot: &mut Tensor<f32, [1, BN]>"
CA, TA = "c.partition([16, 16])", "tot.partition([1, 16])"
LB = "c.store(acc);\n    if last_block(0) {\n        tot.store(c.group().partition([M, BN]).load([0, 0]).sum(0).reshape([1, BN]));\n    }"
GATHER = "let s = cluster_gather(acc.sum(1).sum(0) + (block_id(0) * 1000) as f32);\n    c.store(acc + s.sum(0));"


def program(case: str) -> str:
    attr, params, args, epi, et, m, k, n = "", f"{C}, {TOT}", f"{CA}, {TA}", LB, "f32", 32, 256, 16
    if case == "aw_grouped":
        attr, et, m, k, n = "#[hints(arrive_wait = 1)]", "f16", 144, 16, 32
    elif case == "split_group_first":
        params, args = f"{TOT}, {C}", f"{TA}, {CA}"
    elif case == "split_aw":
        attr = "#[hints(arrive_wait = 1)]"
    elif case == "cluster_gather_few":
        attr, params, args, epi = "#[cluster(2, 1)]", C, CA, GATHER
    elif case == "cluster_12_few":
        attr, params, args, epi, n = "#[cluster(1, 2)]", C, CA, "c.store(acc);", 32
    src = (GEMM.replace("KATTR", attr).replace("PARAMS", params).replace("ARGS", args).replace("EPILOGUE", epi)
           .replace("ET", et).replace("[M, ", f"[{m}, ").replace("[K, ", f"[{k}, ").replace(", K]", f", {k}]")
           .replace(", N]", f", {n}]").replace("[1, N]", f"[1, {n}]").replace("[M, BN]", f"[{m}, BN]"))
    return src


def tensors(path: str, device: str) -> dict[str, np.ndarray]:
    ex = run.execute(path, device, out=io.StringIO())
    return {k: np.array(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}


def main() -> None:
    case = sys.argv[1]
    path = f"/tmp/hrev22_{case}.tile"
    with open(path, "w", encoding="utf-8") as f:
        f.write(program(case))
    want = tensors(path, "cpu")
    try:
        got = tensors(path, "gpu")
    except Exception as e:  # noqa: BLE001 (the line says what failed)
        print(f"{case} ERROR {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return
    bad = [k for k in want if not np.array_equal(want[k], got[k])]
    print(f"{case} {'DIFF ' + ', '.join(bad) if bad else 'ok'}")


if __name__ == "__main__":
    main()
