"""Where a GEMM kernel reads its operands from: a diagnostic for the device.

For each configuration, with A = identity, C must equal B; B's entries are set
to their row index in one run and to their column index in another (exact in
f16/bf16), so each wrong C[i, j] tells which B element landed there. The same
with B = identity for A. Then a random check against torch. Prints one line
per configuration and, when wrong, the first mismatching positions.

    python benchmarks/gemm_debug.py [--only NAME,...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from gemm_cases import GemmConfig  # noqa: E402

CONFIGS = [
    GemmConfig(128, 256, 64, warps=8, stages=4, out="f32"),
    GemmConfig(128, 256, 64, trans_b=True, warps=8, stages=4, out="f32"),
    GemmConfig(64, 64, 32, out="f32"),
    GemmConfig(64, 128, 16, out="f32"),
    GemmConfig(128, 128, 64, dtype="bf16", out="f32"),
    GemmConfig(256, 128, 64, warps=8, out="f32"),
]


def run(cfg: GemmConfig, a, b, M: int, N: int):  # type: ignore[no-untyped-def]
    import torch

    import tilelang

    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float32)
    mod = tilelang.compile(cfg.source())
    mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(c, [cfg.bm, cfg.bn]), a, b).sync()
    return c


def probe(cfg: GemmConfig) -> str:
    import torch

    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[cfg.dtype]
    M, N, K = 2 * cfg.bm, 2 * cfg.bn, 2 * max(cfg.bk, 64)
    K = max(K, M)
    out = []
    # B probe: A = I[M, K]
    a = torch.eye(M, K, device="cuda", dtype=tdt)
    rows = torch.arange(K, device="cuda").float()[:, None].expand(K, N)
    cols = torch.arange(N, device="cuda").float()[None, :].expand(K, N)
    for name, bsrc in (("row", rows), ("col", cols)):
        b = (bsrc.t() if cfg.trans_b else bsrc).contiguous().to(tdt)
        c = run(cfg, a, b, M, N)
        want = bsrc[:M, :N]
        bad = (c != want).nonzero()
        if len(bad):
            pos = [(int(i), int(j), float(c[i, j])) for i, j in bad[:12].tolist()]
            out.append(f"B-{name} wrong at {len(bad)} places, first (i, j, got): {pos}")
    # A probe: B = I[K, N]
    eye = torch.eye(K, N, device="cuda", dtype=torch.float32)
    b = (eye.t() if cfg.trans_b else eye).contiguous().to(tdt)
    for name, asrc in (("row", torch.arange(M, device="cuda").float()[:, None].expand(M, K)),
                       ("col", torch.arange(K, device="cuda").float()[None, :].expand(M, K))):
        c = run(cfg, asrc.contiguous().to(tdt), b, M, N)
        L = min(N, K)
        bad = (c[:, :L] != asrc[:, :L]).nonzero()
        if len(bad):
            pos = [(int(i), int(j), float(c[i, j])) for i, j in bad[:12].tolist()]
            out.append(f"A-{name} wrong at {len(bad)} places, first (i, j, got): {pos}")
    # random, with edges
    for (m, n, k) in ((M, N, K), (M - 24, N - 48, K - 16)):
        a = torch.randn(m, k, device="cuda", dtype=tdt)
        bb = torch.randn((n, k) if cfg.trans_b else (k, n), device="cuda", dtype=tdt)
        ref = a.float() @ (bb.float().t() if cfg.trans_b else bb.float())
        c = run(cfg, a, bb, m, n)
        err = ((c - ref).norm() / ref.norm()).item()
        nan = int(torch.isnan(c).sum())
        if not err < 1e-2 or nan:
            out.append(f"random {m}x{n}x{k}: rel err {err:.3g}, {nan} unwritten")
    return "OK" if not out else "\n    ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ns = ap.parse_args()
    for cfg in CONFIGS:
        if ns.only and cfg.name not in ns.only.split(","):
            continue
        try:
            res = probe(cfg)
        except Exception as e:
            res = f"ERROR {type(e).__name__}: {str(e)[:400]}"
        print(f"[debug] {cfg.name}: {res}", flush=True)


if __name__ == "__main__":
    main()
