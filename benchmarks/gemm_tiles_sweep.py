"""hcliff2's GEMM tile changes on the GPU: the user's GEMM (cliffs_cases.GEMM) at the tiles cliffs.py found slow, by
default and under `#[hints(min_blocks = B)]`, against torch.matmul in the same process, with the CTAs an SM the
driver's occupancy calculator gives each launch (one step, ~60-90 s warm; one line a variant).

    python benchmarks/gemm_tiles_sweep.py                 # GPU
    python benchmarks/gemm_tiles_sweep.py --only 64x64    # a substring of the variants' names
    python benchmarks/gemm_tiles_sweep.py --dry           # CPU: each variant's lowering for sm_90a (no timing)
    TILEC_GEMM_BLOCKS=2 python benchmarks/gemm_tiles_sweep.py --only default   # the defaults at 2 CTAs an SM

`TILEC_GEMM_BLOCKS=N` gives every GEMM that names no `min_blocks` N CTAs an SM where N fit: the run with it
against the run without says whether the default should change (a per-tile rule: small accumulators only?).

Before (H100, call 8 / call 11, main 137b95b2; 4096^3 f16 unless said): 128x128x64 0.84x (4 stages, 1 CTA an SM),
128x128x32 0.61x (4 stages; 6 stages by hint 0.74x), 64x64x64 0.35x (6 stages 0.43x), 64x128x64 0.56x (6: 0.67x),
128x256x64 0.97x, 128x512x32 0.08x (sm_80's ring), 128x256x64 with `stages = 6` 0.06x (did not fit: sm_80's ring);
M = 64 rows (64x4096x4096): 64x128x64 0.52x, 64x64x64 0.57x.

Expected after (not measured; hcliff2, 2026-12-06):
- default ring depth (4 stages, or up to 8 of small stages: 128 KB in flight): 128x128x32 at 8 stages >= 0.74x
  (call 11's 6 stages), 64x64x64 at 8 >= 0.43x, 64x128x64 at 5 ~0.6x; 128x128x64 / 128x256x64 unchanged (4).
  8 stages may be past the optimum (call 11 measured up to 6): if 8 reads below 6, RING_BYTES should shrink.
- `min_blocks = 2` (two CTAs an SM: one CTA's prologue/epilogue under the other's loop; 3 stages at 128x128x64):
  128x128x64 0.84x -> 0.88-0.95x if the overlap pays more than the lost stage (the lead's 10:02 ask: gate the
  default on this line); 64x64x64 with B = 2/3/4 (7/4/3 stages): the L2 traffic of 64x64 tiles bounds it, 0.45-0.6x;
  the occupancy column must read B/SM (if it reads 1, the carveout or registers did not allow it: say which).
- 128x512x32 (two column parts of 256 on the Hopper pipeline, 5 stages): ~0.85-0.95x (128x256's speed, A read twice).
- 128x256x64 `stages = 6`: runs 4 stages (a note says so): 0.97x, not 0.06x.
- M = 64 rows: deeper rings (5 and 8 stages) 0.55-0.7x; `min_blocks = 2` does not add CTAs (32-64 tiles).
- (after call 13) M = 64 rows with 32x128x64: the Hopper pipeline padded to 64 rows (call 14: 0.48x -> 0.59x);
  16x64x128 stays on sm_80's ring (padded it read 0.34x against 0.53x).
Every err column 0 (f16 in, f32 sums, the same order as before).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# (M, N, K), (BM, BN, BK), hints ("" none)
VARIANTS: list[tuple[tuple[int, int, int], tuple[int, int, int], str]] = [
    ((4096, 4096, 4096), (128, 128, 64), ""),
    ((4096, 4096, 4096), (128, 128, 64), "min_blocks = 2"),
    ((4096, 4096, 4096), (128, 128, 32), ""),
    ((4096, 4096, 4096), (128, 128, 32), "stages = 6"),
    ((4096, 4096, 4096), (128, 128, 32), "min_blocks = 2"),
    ((4096, 4096, 4096), (64, 64, 64), ""),
    ((4096, 4096, 4096), (64, 64, 64), "stages = 6"),
    ((4096, 4096, 4096), (64, 64, 64), "min_blocks = 2"),
    ((4096, 4096, 4096), (64, 64, 64), "min_blocks = 3"),
    ((4096, 4096, 4096), (64, 64, 64), "min_blocks = 4"),
    ((4096, 4096, 4096), (64, 128, 64), ""),
    ((4096, 4096, 4096), (64, 128, 64), "min_blocks = 2"),
    ((4096, 4096, 4096), (128, 256, 64), ""),
    ((4096, 4096, 4096), (128, 256, 64), "stages = 6"),
    ((4096, 4096, 4096), (128, 512, 32), ""),
    ((4096, 4096, 4096), (128, 512, 64), ""),
    ((64, 4096, 4096), (64, 128, 64), ""),
    ((64, 4096, 4096), (64, 64, 64), ""),
    ((64, 4096, 4096), (64, 64, 64), "min_blocks = 4"),
    ((64, 4096, 4096), (32, 128, 64), ""),  # padded to one m64 warpgroup (was sm_80's ring, 0.47x)
    ((64, 4096, 4096), (16, 64, 128), ""),  # sm_80's ring (padded: 0.34x, call 14)
]


def _source(hint: str) -> str:
    from cliffs_cases import GEMM

    src = GEMM.replace("ELEM", "f16")
    return src.replace("kernel fn gemm<", f"#[hints({hint})]\nkernel fn gemm<", 1) if hint else src


def dry(only: str | None) -> None:
    """Each variant lowered for sm_90a with the facts of its tensors: path, warps, stages, CTAs an SM, notes."""
    from tilelang import driver
    from tilelang.backend import explain, lower_gpu
    from tilelang.backend.facts import TensorFacts
    from tilelang.backend.gpu import nodes as g

    for (m, n, kk), (bm, bn, bk), hint in VARIANTS:
        name = f"{m}x{n}x{kk} {bm}x{bn}x{bk} {hint or 'default'}"
        if only and only not in name:
            continue
        main = (f"fn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut c = zeros::<f16>([8, 8]);"
                f" gemm::<{bm}, {bn}, {bk}>(c.partition([{bm}, {bn}]), &a, &b).sync(); }}\n")
        k = next(x for x in driver.compile(_source(hint) + main, "ir").output if x.name == "gemm")
        facts = {t: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for t, s in (("a", (m, kk)), ("b", (kk, n)), ("c", (m, n)))}
        gk = lower_gpu(k, "sm_90a", facts)
        ws = [op for op in g.walk(gk.body) if isinstance(op, g.WarpSpecialize)]
        blocks = ws[0].blocks if ws else 0
        notes = "; ".join(x.message for x in gk.notes)
        print(f"{name:44s} {explain.path_of(gk)} {gk.num_warps}w {gk.num_stages}s {blocks}/SM smem {gk.smem_bytes}"
              + (f"  note: {notes}" if notes else ""), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args(argv)
    if args.dry:
        dry(args.only)
        return 0
    import torch

    import tilelang
    from cliffs import time_ms, warm_up
    from launch_record import occupancy_line, record

    record()
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    warm_up(2.0)
    g = torch.Generator(device="cuda").manual_seed(3)
    mods: dict[str, object] = {}
    data: dict[tuple[int, int, int], tuple] = {}
    for (m, n, kk), (bm, bn, bk), hint in VARIANTS:
        name = f"{m}x{n}x{kk} {bm}x{bn}x{bk} {hint or 'default'}"
        if args.only and args.only not in name:
            continue
        if (m, n, kk) not in data:
            a = torch.randn(m, kk, device="cuda", dtype=torch.float16, generator=g) * 0.25
            b = torch.randn(kk, n, device="cuda", dtype=torch.float16, generator=g) * 0.25
            want = a.float() @ b.float()
            t_ref = time_ms(lambda a=a, b=b: torch.matmul(a, b), args.reps)
            data[(m, n, kk)] = (a, b, want, t_ref)
            print(f"# torch.matmul {m}x{n}x{kk}: {t_ref:.4f} ms = {2 * m * n * kk / t_ref / 1e9:.1f} TFLOP/s", flush=True)
        a, b, want, t_ref = data[(m, n, kk)]
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        src = _source(hint)
        mod = mods.get(src) or mods.setdefault(src, tilelang.compile(src))
        kern = mod.gemm[bm, bn, bk]  # type: ignore[attr-defined]
        try:
            part = (tilelang.partition(c, [bm, bn]), a, b)
            kern(*part).launch().wait()
            t = time_ms(lambda: kern(*part).launch(), args.reps)
        except Exception as e:  # say so and go on
            print(f"{name:44s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
            continue
        err = float((c.float() - want).abs().max() / want.abs().max())
        print(f"{name:44s} {t:.4f} ms {2 * m * n * kk / t / 1e9:6.1f} TFLOP/s ratio {t_ref / t:.2f} err {err:.1e} "
              f"{occupancy_line()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
