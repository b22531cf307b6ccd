"""One run of each GEMM path on small shapes, for compute-sanitizer:
the TMA path (NN and NT), the register-copy producer (odd shapes, odd row
strides), bf16; with TILEC_ARCH=sm_80 every case takes the sm_80 path.

    compute-sanitizer --tool memcheck python benchmarks/gemm_sanitize.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from gemm_cases import GemmConfig  # noqa: E402


def main() -> None:
    import torch

    import tilelang

    cases = [
        (GemmConfig(128, 256, 64, warps=8, stages=4), (256, 512, 192)),
        (GemmConfig(128, 256, 64, trans_b=True, warps=8, stages=4), (200, 336, 208)),
        (GemmConfig(128, 128, 64, dtype="bf16", out="bf16"), (130, 150, 77)),
        (GemmConfig(64, 64, 32, out="f32"), (70, 130, 9)),
        # odd strides: both operands through the register-copy producer, edge tiles masked
        (GemmConfig(128, 256, 64, warps=8, stages=4), (257, 263, 131)),
        (GemmConfig(128, 128, 64, dtype="bf16", out="bf16", trans_b=True, warps=8), (129, 131, 67)),
    ]
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    for cfg, (M, N, K) in cases:
        mod = tilelang.compile(cfg.source())
        a = torch.randn(M, K, device="cuda", dtype=tdt[cfg.dtype])
        b = torch.randn((N, K) if cfg.trans_b else (K, N), device="cuda", dtype=tdt[cfg.dtype])
        c = torch.full((M, N), float("nan"), device="cuda", dtype=tdt[cfg.out])
        mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(c, [cfg.bm, cfg.bn]), a, b).sync()
        ref = a.float() @ (b.float().t() if cfg.trans_b else b.float())
        err = ((c.float() - ref).norm() / ref.norm()).item()
        print(f"[sanitize] {cfg.name} {M}x{N}x{K}: rel err {err:.2e}", flush=True)
        assert err < 2e-2


if __name__ == "__main__":
    main()
