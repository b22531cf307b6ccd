"""The user's GEMM (cliffs_cases.GEMM, examples/gemm.tile's loop) at 4096^3 f16 under `#[hints(num_warps, stages)]`,
against torch.matmul in the same process: which warps/stages the default should pick per tile.

    python benchmarks/gemm_hints_sweep.py            # GPU, ~60 s warm

Expected (lead, 2026-12-06 10:10, before the run): the default (no hints) of 128x128x64 is 1 consumer warpgroup and
4 stages (128 KB: one CTA an SM, its prologue and epilogue not overlapped) at 0.85x cuBLAS (cliffs call 8); 3 stages
(96 KB: two CTAs an SM) should gain 5-10 %; 2 consumer warpgroups (num_warps = 8: 12 warps) a few % more; 128x128x32 (0.61x) gains
from more stages (fit allows 7); 64x64x64 (0.35x) needs several CTAs an SM (stages 2-3).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import torch  # noqa: E402

import tilelang  # noqa: E402
from cliffs import time_ms, warm_up  # noqa: E402
from cliffs_cases import GEMM  # noqa: E402
from launch_record import occupancy_line, record  # noqa: E402

N = 4096
TILES = [(128, 128, 64), (128, 128, 32), (64, 64, 64), (128, 256, 64), (64, 128, 64)]
# (num_warps, stages): the pipeline's consumer warpgroups are num_warps / 4 (the producer's comes on top)
HINTS = [None, (4, 2), (4, 3), (4, 4), (4, 6), (8, 2), (8, 3), (8, 4), (16, 3)]


def source(hint: tuple[int, int] | None) -> str:
    src = GEMM.replace("ELEM", "f16")
    if hint is not None:
        src = src.replace("kernel fn gemm<", f"#[hints(num_warps = {hint[0]}, stages = {hint[1]})]\nkernel fn gemm<", 1)
    return src


def main() -> int:
    record()
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    warm_up(2.0)
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(N, N, device="cuda", dtype=torch.float16, generator=g) * 0.25
    b = torch.randn(N, N, device="cuda", dtype=torch.float16, generator=g) * 0.25
    c = torch.empty(N, N, device="cuda", dtype=torch.float16)
    want = a.float() @ b.float()
    t_ref = time_ms(lambda: torch.matmul(a, b), 20)
    print(f"# torch.matmul {t_ref:.4f} ms = {2 * N**3 / t_ref / 1e9:.1f} TFLOP/s", flush=True)
    mods = {}
    for bm, bn, bk in TILES:
        for h in HINTS:
            key = h
            if key not in mods:
                mods[key] = tilelang.compile(source(h))
            kern = mods[key].gemm[bm, bn, bk]
            name = f"{bm}x{bn}x{bk} " + ("default" if h is None else f"warps {h[0]:2d} stages {h[1]}")
            try:
                args = (tilelang.partition(c, [bm, bn]), a, b)
                kern(*args).launch().wait()
                t = time_ms(lambda: kern(*args).launch(), 20)
            except Exception as e:  # a hint the backend refuses (e.g. stages that do not fit): say so, go on
                print(f"{name:34s} refused: {str(e).splitlines()[0][:120]}", flush=True)
                continue
            err = float((c.float() - want).abs().max() / want.abs().max())
            print(f"{name:34s} {t:.4f} ms  {2 * N**3 / t / 1e9:6.1f} TFLOP/s  ratio {t_ref / t:.2f}  err {err:.1e}  "
                  f"{occupancy_line()}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
