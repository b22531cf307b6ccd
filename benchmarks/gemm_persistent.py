"""hgemm: the persistent Hopper GEMM (`passes/gemm_persistent.py`, `TILEC_GEMM_PERSISTENT`) on the GPU: the user's
GEMM (cliffs_cases.GEMM, f16, 4096^3 unless said) at each tile, one tile a CTA (0, as landed), persistent with
the consumers walking every tile (1, "coop") and two one-warpgroup consumer roles taking turns (2, "pingpong"),
against torch.matmul in the same process, reps interleaved (cliffs.time_pair). One step, ~60-100 s warm; one
line a variant:

    python benchmarks/gemm_persistent.py            # GPU
    python benchmarks/gemm_persistent.py --only 128x128x64
    python benchmarks/gemm_persistent.py --dry      # CPU: each variant's lowering (path, warps, stages, smem)
    python benchmarks/gemm_persistent.py --dry --ptx --only 4096x4096x4096   # + ptxas's registers, spills
    python benchmarks/gemm_persistent.py --modes 0,w   # tile/CTA and wide only (modes 0 d 1 2 w W s)

Each variant is its own program (a comment names it), so the switch, read when a launch lowers the kernel, is
the variant's; the compile cache keys on the LLVM text.

Before (H100, 12:17 2026-12-06, torch.matmul ~745 TFLOP/s): 128x128x64 0.85x, 128x128x128 0.80x, 128x128x32 0.75x,
64x64x64 0.44x, 128x256x64 0.95-0.97x, M = 64 rows 64x64x64 0.77x.

Expected (not measured; hgemm, 2026-12-06):
- 128x128x64: coop 0.88-0.92x (the ring's fill under the epilogue, no partial last wave: 1,024 tiles are 7.76
  waves run as 8, ~3 %), pingpong 0.93-0.98x (one role's epilogue, ~5-8 % of a tile's 18 us, under the other's
  products). If pingpong reads <= coop, the epilogue is not what stops the tensor cores (look at the ring then).
- 128x128x32 / x128: the same direction, pingpong >= 0.85x.
- 64x64x64: +0-10 % only (L2/issue-bound: 4,096 tiles of 64 k-steps, a product a quarter of 128x128's).
- "default" (split-K and wide tiles "auto", the defaults since calls 17 / 18: the runtime takes the split variant
  where a launch has at most 66 tiles on 132 SMs, the wide one where it has at least 2 f tiles an SM): as
  "splitk" on 32 / 64 tiles (call 18: 0.76x / 0.95x / 0.88x), as "wide" at 4096^3 and 8192^3 (0.97x 128x128x64,
  0.84x x32, 0.82x 64x64x64, 0.95x 8192^3), as tile/CTA on the 86 tiles of 64x11008 (~1.0x) and 128x128x128
  (not widened: its stages leave no room).
- "wide" (`TILEC_GEMM_WIDEN=1`, `passes/gemm_widen.py`: 2 or 4 of the user's tiles side by side along N, one
  128x256 or 64x256 accumulator, the user's epilogue once a tile): if the 128x128 tiles are bound by the L2's
  bandwidth (32 KB of operands each 2 MFLOP: 128x128 read 0.84x with 1 or 2 warpgroups and with 2 CTAs an SM,
  128x256 0.96x), 128x128x64 wide ~0.95x (the 128x256 kernel, walked), 64x64x64 0.44x -> 0.8-0.9x (64x256),
  M = 64 rows 64x64x64 ~0.5x (16 wide tiles: fewer CTAs, there split-K is the lever).
- "wide-deep" (`TILEC_GEMM_WIDE_RING=1`, the default since call 19: the wide tile's ring as deep as fits, up to
  8): 128x128x32 5 -> 8 stages (call 19: 0.85x -> 0.96x), 64x64x64 4 -> 5, 128x128x64 4 (no room for more);
  "wide" now means the shallow ring (`TILEC_GEMM_WIDE_RING=0`).
- 128x128x128: its pingpong line is the coop kernel again (two staging areas and 3 stages of 64 KB do not fit):
  the two lines' difference is the run's noise. (128x256x64 is left out: never persistent, its staging area
  would cost a stage.)
- M = 64 / 128 rows (32 / 64 / 86 tiles on 132 SMs: one round): tile/CTA, coop and pingpong within a few %
  (persistence cannot split K); "splitk" (`TILEC_GEMM_SPLITK=1`, `passes/gemm_split.py`: each tile's K loop in
  s = min(8, 132 / tiles) pieces over the idle SMs, the last piece summing the f32 records): 64x64x64 0.77x ->
  ~1.0x (s = 2), 64x128x64 0.57x -> 0.9-1.1x (s = 4), 11008 wide (86 tiles, s = 1: no split) as coop;
  128x4096 128x128x64 (32 tiles, s = 4) ~2x its coop line. Its err column up to ~2e-3 (the pieces' sums
  rounded to f32 before they are added: another order than the one loop's).
Every err column ~1e-3 or below (f16 out; the same sums in the same order in every variant).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# (M, N, K), (BM, BN, BK)
SHAPES: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = [  # the likeliest to matter first (a timeout)
    ((4096, 4096, 4096), (128, 128, 64)),
    ((64, 4096, 4096), (64, 128, 64)),
    ((64, 4096, 4096), (64, 64, 64)),
    ((4096, 4096, 4096), (128, 128, 32)),
    ((4096, 4096, 4096), (64, 64, 64)),
    ((4096, 4096, 4096), (128, 128, 128)),
    ((128, 4096, 4096), (128, 128, 64)),
    ((8192, 8192, 8192), (128, 128, 64)),
    ((64, 11008, 4096), (64, 128, 64)),
]
# a variant's switches: (TILEC_GEMM_PERSISTENT, TILEC_GEMM_SPLITK, TILEC_GEMM_WIDEN, TILEC_GEMM_WIDE_RING)
MODES = {"0": "tile/CTA", "d": "default", "1": "coop", "2": "pingpong", "w": "wide", "W": "wide-deep",
         "s": "splitk"}
SWITCHES = {"0": ("0", "0", "0", "0"), "d": ("0", "auto", "auto", "1"), "1": ("1", "0", "0", "0"),
            "2": ("2", "0", "0", "0"), "w": ("2", "0", "1", "0"), "W": ("2", "0", "1", "1"), "s": ("0", "1", "0", "0")}


def _switch(mode: str) -> None:
    (os.environ["TILEC_GEMM_PERSISTENT"], os.environ["TILEC_GEMM_SPLITK"],
     os.environ["TILEC_GEMM_WIDEN"], os.environ["TILEC_GEMM_WIDE_RING"]) = SWITCHES[mode]


def _source(mode: str) -> str:
    from cliffs_cases import GEMM

    return f"// TILEC_GEMM_PERSISTENT, _SPLITK, _WIDEN, _WIDE_RING = {SWITCHES[mode]}\n" + GEMM.replace("ELEM", "f16")


def _variants(only: str | None, modes: str = "") -> list[tuple[str, tuple[int, int, int], tuple[int, int, int], str]]:
    out = []
    for mnk, tile in SHAPES:
        for mode in MODES:
            if modes and mode not in modes.split(","):
                continue
            if mode == "s" and mnk[0] * mnk[1] >= 132 * tile[0] * tile[1]:  # split-K only where tiles < SMs
                continue
            if mode in "wW" and tile[1] > 128:  # never wider
                continue
            name = f"{'x'.join(map(str, mnk))} {'x'.join(map(str, tile))} {MODES[mode]}"
            if not only or only in name:
                out.append((name, mnk, tile, mode))
    return out


def dry(only: str | None, ptx: bool = False, modes: str = "") -> None:
    """Each variant lowered for sm_90a; `ptx`: emitted and assembled by ptxas too (registers, spill bytes)."""
    from tilelang import driver
    from tilelang.backend import compile_kernel, explain, lower_gpu
    from tilelang.backend.facts import TensorFacts

    for name, (m, n, kk), (bm, bn, bk), mode in _variants(only, modes):
        _switch(mode)
        main = (f"fn main() {{ let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]); let mut c = zeros::<f16>([8, 8]);"
                f" gemm::<{bm}, {bn}, {bk}>(c.partition([{bm}, {bn}]), &a, &b).sync(); }}\n")
        k = next(x for x in driver.compile(_source(mode) + main, "ir").output if x.name == "gemm")
        facts = {t: TensorFacts(True, tuple(d % 16 == 0 for d in s)) for t, s in (("a", (m, kk)), ("b", (kk, n)), ("c", (m, n)))}
        gk = lower_gpu(k, "sm_90a", facts)
        extra = ""
        if ptx:
            from cliffs import _spills

            extra = _spills(compile_kernel(k, "sm_90a", facts).ptx)
        print(f"{name:36s} {explain.path_of(gk)} {gk.num_warps}w {gk.num_stages}s persistent {gk.persistent}"
              f"{' fill' if gk.fill else ''} "
              f"smem {gk.smem_bytes}{extra}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--ptx", action="store_true", help="with --dry: ptxas's registers and spills")
    ap.add_argument("--modes", default="", help="the modes to run, comma-separated: 0,1,2,w,s (default all)")
    args = ap.parse_args(argv)
    if args.dry:
        dry(args.only, args.ptx, args.modes)
        return 0
    import torch

    import tilelang
    from cliffs import time_pair, warm_up

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    warm_up(1.0)
    g = torch.Generator(device="cuda").manual_seed(3)
    data: dict[tuple[int, int, int], tuple] = {}
    mods: dict[str, object] = {}
    for name, (m, n, kk), (bm, bn, bk), mode in _variants(args.only, args.modes):
        if (m, n, kk) not in data:
            data.clear()
            a = torch.randn(m, kk, device="cuda", dtype=torch.float16, generator=g) * 0.25
            b = torch.randn(kk, n, device="cuda", dtype=torch.float16, generator=g) * 0.25
            data[(m, n, kk)] = (a, b, a.float() @ b.float())
        a, b, want = data[(m, n, kk)]
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        _switch(mode)
        src = _source(mode)
        mod = mods.get(src) or mods.setdefault(src, tilelang.compile(src))
        kern = mod.gemm[bm, bn, bk]  # type: ignore[attr-defined]
        try:
            part = (tilelang.partition(c, [bm, bn]), a, b)
            kern(*part).launch().wait()
            err = float((c.float() - want).abs().max() / want.abs().max())
            t, t_ref = time_pair(lambda: kern(*part).launch(), lambda: torch.matmul(a, b), args.reps)
        except Exception as e:  # say so and go on
            print(f"{name:36s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
            continue
        fl = 2 * m * n * kk
        print(f"{name:36s} {t:.4f} ms {fl / t / 1e9:6.1f} TFLOP/s torch {fl / t_ref / 1e9:6.1f} ratio {t_ref / t:.2f} "
              f"err {err:.1e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
