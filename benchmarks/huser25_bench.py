"""huser25 (round 24): the kernels of tests/user/programs/l*.tile that PyTorch has an equivalent of, timed on
the GPU against PyTorch on the same CUDA tensors (the Python API, in place), each result compared with
PyTorch's first. Run by benchmarks/huser25_device.sh; `--cpu` runs every call once on tiny NumPy arrays on the
interpreter (no PyTorch: a check of the calls themselves, no timings).

Columns: the Tile kernel's median ms (CUDA events around `.launch()`, the GPU kept busy while the host
enqueues), PyTorch's, and torch / tile (above 1: Tile faster).

`--only l12,l15` runs the rows whose name starts with one of those (hcliff13_device.sh's old/new arms: the
switches are read when a kernel is compiled, so an arm is a process)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from _user_bench import CPU, F, P, arr, close, host, print_rows, time_ms, torch

import tilelang

ONLY = next((a.split("=", 1)[1] if "=" in a else sys.argv[i + 2] for i, a in enumerate(sys.argv[1:])
             if a.startswith("--only")), "")


def wanted(name: str) -> bool:
    return not ONLY or any(name.startswith(w) for w in ONLY.split(","))


ROWS: list[tuple[str, float, float, str]] = []

PROBE02 = """
kernel fn luma_part<const B: i32>(part: &mut Tensor<f32, [1, 16]>, luma: &Tensor<u8, [?]>, w: &Tensor<f32, [?]>) {
    let p = luma.partition([B]).load_padded([block_id(0)], 0u8);
    let wt = w.partition([B]).load([block_id(0)]);
    let bin = (p >> 4u8) as i32;
    let onehot = (bin.reshape([B, 1]) == arange::<i32>(16).reshape([1, 16])) as f32;
    part.store((onehot * wt.reshape([B, 1])).sum(0).reshape([1, 16]));
}
"""


def bench(name: str, op: Any, ref: Callable[[], Any], check: Callable[[], str]) -> None:
    if not wanted(name):
        return
    op.sync()
    verdict = check()
    t_tile = time_ms(op.launch, True)
    t_torch = time_ms(ref, False) if not CPU else float("nan")
    ROWS.append((name, t_tile, t_torch, verdict))
    print(f"{name:34s} tile {t_tile:8.3f} ms  torch {t_torch:8.3f} ms  torch/tile {t_torch / t_tile:6.2f}  {verdict}",
          flush=True)


def main() -> None:
    rng = np.random.default_rng(25)

    if wanted("l14"):
        # l14: masked softmax of [rows, T] scores, causal + key lengths + a keep mask
        t = 64 if CPU else 1024
        rows = (2 if CPU else 16) * t
        m14 = tilelang.load(P / "l14_masked_softmax_lengths.tile")
        sc = rng.standard_normal((rows, t), dtype=np.float32) * 3
        keep = rng.random((rows, t)) > 0.1
        lens = np.repeat(rng.integers(0, t + 1, rows // t), t).astype(np.int32)
        S, K, L = arr(sc), arr(keep), arr(lens)
        out, lse = arr(np.zeros((rows, t), np.float32)), arr(np.zeros(rows, np.float32))
        op = m14.masked_softmax[4, t](tilelang.partition(out, [4, t]), tilelang.partition(lse, [4]), S, K, L, t, 0.5)

        def ref14() -> Any:
            q = torch.arange(rows, device="cuda")[:, None] % t
            keys = torch.arange(t, device="cuda")[None]
            ok = (keys <= q) & (keys < L[:, None]) & K
            return torch.softmax((S * 0.5).masked_fill(~ok, float("-inf")), 1).nan_to_num(0.0)

        bench("l14 masked softmax", op, ref14, lambda: "ran" if CPU else close(out, ref14(), 1e-5))

    if wanted("l12"):
        # l12: out = res + gelu_tanh(x.w + b), f16 in, f32 accumulate
        n = 128 if CPU else 4096
        m12 = tilelang.load(P / "l12_gemm_bias_gelu_residual.tile")
        X = arr((rng.standard_normal((n, n)) * 0.1).astype(np.float16))
        W = arr((rng.standard_normal((n, n)) * 0.05).astype(np.float16))
        bias = arr(rng.standard_normal(n).astype(np.float32) * 0.1)
        res = arr(rng.standard_normal((n, n)).astype(np.float16))
        scale = arr(np.ones(n, np.float32))
        y = arr(np.zeros((n, n), np.float16))
        bm = 64 if CPU else 128
        op = m12.mlp_up[bm, bm, 32](tilelang.partition(y, [bm, bm]), X, W, bias, res, scale, True)

        def ref12() -> Any:
            return (res.float() + F.gelu((X @ W).float() + bias, approximate="tanh")).half()

        bench("l12 GEMM+bias+GELU+residual f16", op, ref12, lambda: "ran" if CPU else close(y, ref12(), 2e-2))

    if wanted("l13"):
        # l13: RoPE (NeoX halves) of [T, H, D] f32, angles from positions in the kernel
        tt, hh, dd = (16, 2, 32) if CPU else (16384, 32, 128)
        m13 = tilelang.load(P / "l13_rope_neox_and_gptj.tile")
        xr = arr(rng.standard_normal((tt, hh, dd), dtype=np.float32))
        pos = arr(np.arange(tt, dtype=np.int32))
        yr = arr(np.zeros((tt, hh, dd), np.float32))
        op = m13.rope_neox[4, hh, dd](tilelang.partition(yr, [4, hh, dd]), xr, pos, float(np.log2(10000.0)))

        def ref13() -> Any:
            inv = 10000.0 ** (-2 * torch.arange(dd // 2, device="cuda", dtype=torch.float32) / dd)
            ang = pos.float()[:, None, None] * inv
            c, sn = torch.cos(ang), torch.sin(ang)
            a, b = xr[..., :dd // 2], xr[..., dd // 2:]
            return torch.cat([a * c - b * sn, b * c + a * sn], -1)

        # tolerance 1e-2: the angle pos * inv in f32 at positions up to 16,383 is ~1e-3 rad per ulp, and inv's exp2
        # (ex2.approx, ~2e-7 relative) against torch's pow moves it by up to ~3e-3 rad more (call 39: 3.9e-3 at 1e-3
        # failed; the card agrees with the interpreter on l13, as the program check above says)
        bench("l13 RoPE f32", op, ref13, lambda: "ran" if CPU else close(yr, ref13(), 1e-2))

    if wanted("l15"):
        # l15: dropout p = 0.25 (Philox4x32-10 in Tile; PyTorch's own generator)
        nd = 4096 if CPU else 1 << 26
        m15 = tilelang.load(P / "l15_philox_dropout.tile")
        xd = arr(rng.standard_normal(nd, dtype=np.float32))
        yd, kd, bd = arr(np.zeros(nd, np.float32)), arr(np.zeros(nd, bool)), arr(np.zeros(nd, np.uint32))
        op = m15.dropout[1024](tilelang.partition(yd, [1024]), tilelang.partition(kd, [1024]),
                               tilelang.partition(bd, [1024]), xd, 0.25, 0x0123456789ABCDEF, 0)

        def chk15() -> str:
            frac = float(host(kd).mean())
            return f"kept {frac:.4f} (0.75 wanted)" + ("" if abs(frac - 0.75) < 0.01 else " FAR")

        bench("l15 Philox dropout f32", op, lambda: F.dropout(xd, 0.25), chk15)

        # l15's bf16 dropout (hcliff13): no mask or bits stored, 4 bytes an element against torch's 5 (its mask), a
        # Philox an element against torch's one per 4: compute-bound
        xb = arr(rng.standard_normal(nd, dtype=np.float32))
        xb = xb.to(torch.bfloat16) if not CPU else xb
        yb = arr(np.zeros(nd, np.float32))
        yb = yb.to(torch.bfloat16) if not CPU else yb
        if CPU:
            from tilelang.interp import round_bf16

            xb = round_bf16(xb)
        opb = m15.dropout_bf16[1024](tilelang.partition(yb, [1024]), xb, 0.25, 0x0123456789ABCDEF, 0)

        def chk15b() -> str:
            frac = float(np.mean(host(yb) != 0))
            return f"kept {frac:.4f} (0.75 wanted)" + ("" if abs(frac - 0.75) < 0.01 else " FAR")

        bench("l15 Philox dropout bf16", opb, lambda: F.dropout(xb, 0.25), chk15b)

    if wanted("l03"):
        # l03: top-5 of rows of 64 (ties broken by the lowest column, as `torch.topk` need not)
        r3 = 64 if CPU else 1 << 17
        m03 = tilelang.load(P / "l03_topk_ties.tile")
        x3 = arr(rng.standard_normal((r3, 64), dtype=np.float32))
        v3, i3 = arr(np.zeros((r3, 5), np.float32)), arr(np.zeros((r3, 5), np.int32))
        op = m03.topk[5, 64](tilelang.partition(v3, [1, 5]), tilelang.partition(i3, [1, 5]), x3)
        bench("l03 top-5 of 64", op, lambda: torch.topk(x3, 5, 1),
              lambda: "ran" if CPU else close(v3, torch.topk(x3, 5, 1).values, 0.0))

    if wanted("l04"):
        # l04: a stable sort of rows of 32
        r4 = 64 if CPU else 1 << 16
        m04 = tilelang.load(P / "l04_rank_sort_rows.tile")
        x4 = arr(rng.standard_normal((r4, 32), dtype=np.float32))
        s4, o4 = arr(np.zeros((r4, 32), np.float32)), arr(np.zeros((r4, 32), np.int32))
        op = m04.sort_rows[32](tilelang.partition(s4, [1, 32]), tilelang.partition(o4, [1, 32]), x4)
        bench("l04 stable sort of 32", op, lambda: torch.sort(x4, dim=1, stable=True),
              lambda: "ran" if CPU else close(s4, torch.sort(x4, dim=1, stable=True).values, 0.0))

    if wanted("l09"):
        # l09: the sum, mean and variance of each [256, 256] slice
        b9, m9 = (3, 16) if CPU else (1024, 256)
        mod9 = tilelang.load(P / "l09_three_axis_reductions.tile")
        x9 = arr(rng.standard_normal((b9, m9, m9), dtype=np.float32))
        tot, mean, var = (arr(np.zeros(b9, np.float32)) for _ in range(3))
        op = mod9.per_slice[m9, m9](tilelang.partition(tot, [1]), tilelang.partition(mean, [1]),
                                    tilelang.partition(var, [1]), x9)
        bench("l09 slice sum/mean/var", op, lambda: torch.var_mean(x9, (1, 2), unbiased=False),
              lambda: "ran" if CPU else close(var, torch.var(x9, (1, 2), unbiased=False), 1e-4))

    if wanted("l02"):
        # l02: a 16-bin weighted histogram of u8 values (f32 atomics)
        n2 = 4096 if CPU else 1 << 24
        m02 = tilelang.load(P / "l02_u8_histograms_atomics.tile")
        luma = arr(rng.integers(0, 256, n2).astype(np.uint8))
        w2 = arr(rng.random(n2, dtype=np.float32))
        seen = arr(np.zeros((n2 + 1023) // 1024, np.int32))
        lh = arr(np.zeros(16, np.float32))

        def run02() -> Any:
            lh.zero_() if not CPU else lh.fill(0)
            return m02.luma_hist[1024](tilelang.partition(seen, [1]), luma, w2, lh).launch()

        class Op02:
            def sync(self) -> None:
                run02().wait()

            launch = staticmethod(run02)

        bench("l02 weighted 16-bin histogram", Op02(), lambda: torch.bincount((luma >> 4).long(), w2, 16),
              lambda: "ran" if CPU else close(lh, torch.bincount((luma >> 4).long(), w2, 16), 1e-4))

        # a probe (hcliff13), not a user's program: l02's kernel with each block's 16 sums stored, no atomics; if
        # it runs far faster than l02, the 16 one-lane f32 atomics a block into one line bound l02
        mp = tilelang.compile(PROBE02)
        part = arr(np.zeros(((n2 + 1023) // 1024, 16), np.float32))
        opp = mp.luma_part[1024](tilelang.partition(part, [1, 16]), luma, w2)
        def ref02() -> Any:
            return (np.bincount(luma >> 4, w2, 16).astype(np.float32) if CPU
                    else torch.bincount((luma >> 4).long(), w2, 16))

        bench("l02 probe: sums stored, no atomics", opp, ref02, lambda: close(part.sum(0), ref02(), 1e-3))

    print_rows(ROWS, summary=False)


if __name__ == "__main__":
    main()
