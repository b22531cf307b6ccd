"""f32 GEMMs on the FMA path (no tensor cores) against torch.matmul's f32 SGEMM, TF32 off.

    python benchmarks/fma_gemm.py            # GPU, ~40-70 s (PTX compiled first in --jobs processes): a line a case
    python benchmarks/fma_gemm.py --quick    # the cliffs case and two 128x128 rows only
    python benchmarks/fma_gemm.py --transpose   # TILEC_FMA_TRANSPOSE=1's rows and their baselines (~40 s)
    python benchmarks/fma_gemm.py --dry      # CPU: ptxas registers / spills of each variant, no timing

Each line: the case (layout, M=N=K, BMxBNxBK, hints), our time, torch's (interleaved reps: cliffs.time_pair),
torch / ours, our TFLOP/s, the max error relative to torch's largest |value|, and the path with its warps and
stages. The `FMA_PIPELINE=0` row is the FMA loop with no pipeline, call 19's 0.59x at 2048^3 64x64x16; the
`FMA_MAXNREG=0` row compiles without `.maxnreg` (ptxas's own register target: 168 registers and 24 spill bytes).

Measured (call 22, H100, dc71874e: no .maxnreg yet): FMA_PIPELINE=0 0.59x -> 0.82x at 2048^3 64x64x16; every nn
row 0.78-0.84x (41-43 TFLOP/s); tn 0.92x at 4096^3 128x128x16 and 0.88x at 2048^3 64x64x16; nt 0.81-0.83x;
num_warps = 4 0.81x; min_blocks = 2 0.76x; FMA_PREFETCH=1 +0-1 %; Triton ieee 0.82-0.83x. So A read along k
(K-contiguous, 168 registers, one CTA an SM at 128x128) is what holds nn below tn: staging A transposed (without
the per-element copies' hoisted addresses, see hf32's report) is the next lever.

Expected before that call (hf32, 2026-12-06; from ptxas on the CPU). `passes/pipeline_fma.py` gives these loops a
cp.async ring (4 stages of 16 KB at 128x128x16) and each thread an 8x8 register block (4x8 at 64x64 with 4 warps)
read by ld.shared.v4 (16 LDS.128 per 256 FFMA); `.maxnreg 255`; ptxas: 0 spills everywhere, 168 registers at
64x64x16 (2 warps: 6 CTAs an SM), 168 at 128x128x16 (8 warps: 1 CTA an SM), 128 for tn, 254 for nt. H100 f32 FMA peak ~67 TFLOP/s
(SXM, 1.98 GHz boost), torch's SGEMM ~50 (call 19: 0.342 ms at 2048^3), so 0.9x is ~67 % of peak:
- FMA_PIPELINE=0 64x64x16: ~0.59x (call 19);
- nn 64x64x16 (the cliffs case: 2 warps, 8x8 a thread): 0.75-0.95x;  with num_warps = 4 (4x8 a thread): a few
  points below or above: fewer FMAs a shared load, more warps an SM, and at 2048^3 a fuller last wave (1,024
  tiles: 1.3 waves of 6 CTAs an SM at 2 warps, 1.9 of 4 at 4 warps); FMA_MAXNREG=0 there: ptxas's own 96
  registers (5 CTAs an SM) against 115 (4);
- nn 128x128x16 / x32 (8 warps, one CTA an SM, 183 / 194 registers): 0.8-1.0x; 128x128x8 a bit lower (a barrier
  every 8 k);
- min_blocks = 2 at 128x128 (ptxas held at 128 registers, 36-40 spill bytes): probably worse; tells whether
  occupancy or spills matter more;
- nt / tn 128x128x16: within a few points of nn (tn reads both operands along M/N: 128 registers, 2 CTAs an SM at
  128x128: if tn reads well above nn, staging A transposed would pay); nt 64x64x16 at 254 registers vs 168 + 24
  spill bytes (FMA_MAXNREG=0): which costs more.
- FMA_PREFETCH=1 (sm_80's schedule: no warp waits for shared memory after the barrier): +0-5 % at 128x128 (one CTA
  an SM: the barrier's bubble is the SM's), ~0 at 64x64 (six CTAs an SM hide it);
- triton ieee (Triton's f32 tl.dot without TF32, 128x128x32): for reference, likely 0.5-0.8x.
- TILEC_FMA_TRANSPOSE=1 rows (`--transpose`: with their default rows and tn; hgemm4): A (nn) or A and B^T (nt)
  stored transposed in their rings, both operands read along M/N as tn's are; ptxas 128 registers at 128x128x16
  (`.maxnreg 128`, 2 CTAs an SM; MAXNREG=255 row: 151, one CTA), 159 / 129 at 64x64x16. Expect nn / nt at
  128x128x16 near tn's 0.88-0.92x if the 4-byte copies keep up; below the default rows means they do not.
Errors ~1e-6 (f32 sums in another order than cuBLAS's). A row that fails prints its error and the run goes on.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SRC = """
{hints}kernel fn {name}<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
        a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {{
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..{ktiles} {{
        acc = mma({aload}, {bload}, acc);
    }}
    c.store(acc);
}}
"""
LOADS = {
    "nn": ("a.partition([BM, BK]).load([block_id(0), k])", "b.partition([BK, BN]).load([k, block_id(1)])",
           "a.partition([BM, BK]).num_tiles(1)"),
    "nt": ("a.partition([BM, BK]).load([block_id(0), k])", "b.partition([BN, BK]).load([block_id(1), k]).transpose()",
           "a.partition([BM, BK]).num_tiles(1)"),
    "tn": ("a.partition([BK, BM]).load([k, block_id(0)]).transpose()", "b.partition([BK, BN]).load([k, block_id(1)])",
           "b.partition([BK, BN]).num_tiles(0)"),
}


def source(name: str, lay: str, hints: str) -> str:
    al, bl, kt = LOADS[lay]
    h = f"#[hints({hints})]\n" if hints else ""
    return SRC.format(hints=h, name=name, ktiles=kt, aload=al, bload=bl)


# (layout, size, (BM, BN, BK), hints, the switches set while the kernel compiles)
OLD = {"TILEC_FMA_PIPELINE": "0"}  # the FMA loop with no pipeline
PTXAS_REGS = {"TILEC_FMA_MAXNREG": "0"}  # no .maxnreg: ptxas's own register target
PREFETCH = {"TILEC_FMA_PREFETCH": "1"}  # the wait and barrier before a stage's last group, next values carried
CASES: list[tuple[str, int, tuple[int, int, int], str, dict[str, str]]] = [
    ("nn", 2048, (64, 64, 16), "", OLD),
    ("nn", 2048, (64, 64, 16), "", {}),
    ("nn", 2048, (64, 64, 16), "num_warps = 4", {}),
    ("nn", 2048, (64, 64, 16), "num_warps = 4", PTXAS_REGS),
    ("nn", 2048, (64, 64, 32), "", {}),
    ("nn", 2048, (64, 64, 8), "", {}),
    ("nn", 2048, (128, 128, 16), "", {}),
    ("nn", 2048, (128, 128, 8), "", {}),
    ("nn", 4096, (64, 64, 16), "", {}),
    ("nn", 4096, (64, 64, 16), "num_warps = 4", {}),
    ("nn", 4096, (128, 128, 16), "", {}),
    ("nn", 4096, (128, 128, 32), "", {}),
    ("nn", 4096, (128, 128, 16), "min_blocks = 2", {}),
    ("nn", 4096, (128, 128, 16), "", PREFETCH),
    ("nn", 2048, (64, 64, 16), "", PREFETCH),
    ("nt", 4096, (128, 128, 16), "", {}),
    ("tn", 4096, (128, 128, 16), "", {}),
    ("nt", 2048, (64, 64, 16), "", {}),
    ("nt", 2048, (64, 64, 16), "", PTXAS_REGS),
    ("tn", 2048, (64, 64, 16), "", {}),
]
TRANS = {"TILEC_FMA_TRANSPOSE": "1"}  # K-contiguous operands stored transposed (8 warps, BK <= 16: .maxnreg 128)
TRANS255 = {"TILEC_FMA_TRANSPOSE": "1", "TILEC_FMA_MAXNREG": "255"}  # the same at ptxas's 151 / 129 registers
CASES += [
    ("nn", 4096, (128, 128, 16), "", TRANS),
    ("nn", 4096, (128, 128, 16), "", TRANS255),
    ("nt", 4096, (128, 128, 16), "", TRANS),
    ("nn", 2048, (64, 64, 16), "", TRANS),
    ("nt", 2048, (64, 64, 16), "", TRANS),
]
QUICK = {0, 1, 10, 13}
# hgemm4's transposed rings (`--transpose`): each transposed row beside its default and tn (both read along M/N)
TRANSPOSE = {1, 10, 15, 16, 17, 19, 20, 21, 22, 23, 24}


def _name(lay: str, tile: tuple[int, int, int], hints: str, env: dict[str, str]) -> str:
    h = "".join(ch if ch.isalnum() else "_" for ch in hints)
    e = "".join(f"_{k.removeprefix('TILEC_FMA_').lower()}{v}" for k, v in env.items())
    return f"g_{lay}_{'x'.join(map(str, tile))}{'_' + h if h else ''}{e}"


class _Env:
    """The switches of a case set while its kernel compiles (lowered at its first launch), then unset."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def __enter__(self) -> None:
        self.old = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)

    def __exit__(self, *exc: object) -> None:
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _kernel_ir(lay: str, n: int, tile: tuple[int, int, int], hints: str, name: str) -> tuple[Any, Any]:
    """(the Tile IR the runtime lowers for this case's launch, its launch facts: PyTorch's aligned tensors)."""
    import tilelang
    from tilelang.backend.facts import TensorFacts
    from tilelang.dtypes import DType
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    m = tilelang.compile(source(name, lay, hints))
    shapes = {"c": (n, n), "a": (n, n), "b": (n, n)}
    facts = {k: ArgFact(DType.F32, s, tile[:2] if k == "c" else None) for k, s in shapes.items()}
    kir = lower_kernel(m._program, name, dict(zip(("BM", "BN", "BK"), tile, strict=True)), facts)
    return kir, {k: TensorFacts.of_launch(256, s) for k, s in shapes.items()}


def _prewarm_one(i: int) -> str:
    """Compile case i's PTX into the compile cache (a worker process of `prewarm`)."""
    from tilelang.backend import compile_kernel
    from tilelang.runtime import cuda_pdl

    lay, n, tile, hints, env = CASES[i]
    try:
        with _Env(env):
            kir, tf = _kernel_ir(lay, n, tile, hints, _name(lay, tile, hints, env))
            compile_kernel(kir, cuda_pdl.target("sm_90a", False), tf)
        return "ok"
    except Exception as e:  # the timed run compiles it again and says what fails
        return f"{type(e).__name__}"


def prewarm(idx: list[int], jobs: int) -> None:
    import multiprocessing as mp

    t = time.perf_counter()
    with mp.get_context("spawn").Pool(jobs) as pool:
        got = list(pool.imap_unordered(_prewarm_one, idx))
    print(f"# prewarm: {len(idx)} kernels in {time.perf_counter() - t:.1f} s ({jobs} processes; "
          f"{sum(g != 'ok' for g in got)} failed)", flush=True)


def dry(cases: list[tuple[Any, ...]]) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble

    from tilelang.backend import compile_kernel, lower_gpu
    from tilelang.backend.explain import path_of

    for lay, n, tile, hints, env in cases:
        name = _name(lay, tile, hints, env)
        kir, tf = _kernel_ir(lay, n, tile, hints, name)
        with _Env(env):
            gk = lower_gpu(kir, "sm_90a", tf)
            r = assemble(compile_kernel(kir, "sm_90a", tf).ptx, "sm_90a")
        print(f"{name:40s} {path_of(gk)} {gk.num_warps}w {gk.num_stages}s regs {max(r.registers)} "
              f"spill {sum(r.spill_stores)}", flush=True)


def gpu(cases: list[tuple[Any, ...]], reps: int) -> None:
    import torch
    from cliffs import path_of, time_pair, warm_up

    import tilelang
    from tilelang import backend

    torch.backends.cuda.matmul.allow_tf32 = False  # f32 semantics (torch's default for matmul; said here)
    torch.backends.cudnn.allow_tf32 = False
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, allow_tf32 "
          f"{torch.backends.cuda.matmul.allow_tf32}", flush=True)
    warm_up()
    for lay, n, tile, hints, env in cases:
        name = _name(lay, tile, hints, env)
        label = (f"{lay} {n}^3 {'x'.join(map(str, tile))}{' ' + hints if hints else ''}"
                 + "".join(f" {k.removeprefix('TILEC_')}={v}" for k, v in env.items()))
        t0 = time.perf_counter()
        try:
            g = torch.Generator(device="cuda").manual_seed(7)
            a = torch.randn(n, n, device="cuda", generator=g)
            b = torch.randn(n, n, device="cuda", generator=g)
            c = torch.empty(n, n, device="cuda")
            m = tilelang.compile(source(name, lay, hints))
            kern = getattr(m, name)[tile]
            args = (tilelang.partition(c, list(tile[:2])), a, b)
            seen: list[str] = []
            real = backend.lower_gpu

            def spy(*x: Any, **k: Any) -> Any:
                gk = real(*x, **k)
                seen.append(path_of(gk))
                return gk

            backend.lower_gpu = spy
            try:
                with _Env(env):
                    kern(*args).launch().wait()
            finally:
                backend.lower_gpu = real
            x = a.t() if lay == "tn" else a
            y = b.t() if lay == "nt" else b
            res: dict[str, Any] = {}
            t_ours, t_ref = time_pair(lambda: kern(*args).launch(),
                                      lambda: res.__setitem__("r", torch.matmul(x, y)), reps)
            kern(*args).launch().wait()
            want = torch.matmul(x, y)
            torch.cuda.synchronize()
            err = float((c - want).abs().max() / want.abs().max())
            tf = 2.0 * n**3 / t_ours / 1e9
            print(f"{label:36s} ours {t_ours:7.3f} ms  torch {t_ref:7.3f} ms  ratio {t_ref / t_ours:5.2f}  "
                  f"{tf:5.1f} TFLOP/s  err {err:.1e}  path {seen[0] if seen else '?'}"
                  f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
        except Exception as e:  # a case that fails says so and the run goes on
            msg = str(e).splitlines()[0] if str(e) else ""
            print(f"{label:36s} FAILED {type(e).__name__}: {msg}", flush=True)
            traceback.print_exc(limit=2)


def triton_rows(sizes: list[int], reps: int) -> None:
    """Triton's f32 `tl.dot` with `input_precision="ieee"` (FMAs, not TF32), one config (128x128x32, 8 warps,
    3 stages), against torch in the same way: where Triton is installed."""
    try:
        import torch
        import triton
        import triton.language as tl
        from cliffs import time_pair
    except ImportError as e:
        print(f"# triton rows skipped: {e}", flush=True)
        return

    @triton.jit
    def sgemm(a, b, c, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rows = tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.program_id(1) * BN + tl.arange(0, BN)
        ks = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, n, BK):
            x = tl.load(a + rows[:, None] * n + (k0 + ks)[None, :])
            y = tl.load(b + (k0 + ks)[:, None] * n + cols[None, :])
            acc = tl.dot(x, y, acc, input_precision="ieee")
        tl.store(c + rows[:, None] * n + cols[None, :], acc)

    for n in sizes:
        try:
            g = torch.Generator(device="cuda").manual_seed(7)
            a = torch.randn(n, n, device="cuda", generator=g)
            b = torch.randn(n, n, device="cuda", generator=g)
            c = torch.empty(n, n, device="cuda")
            grid = (n // 128, n // 128)

            def run() -> None:
                sgemm[grid](a, b, c, n, BM=128, BN=128, BK=32, num_warps=8, num_stages=3)

            run()
            res: dict[str, Any] = {}
            t_tri, t_ref = time_pair(run, lambda: res.__setitem__("r", torch.matmul(a, b)), reps)
            err = float((c - torch.matmul(a, b)).abs().max() / torch.matmul(a, b).abs().max())
            print(f"{'triton ieee ' + str(n) + '^3 128x128x32':36s} ours {t_tri:7.3f} ms  torch {t_ref:7.3f} ms  "
                  f"ratio {t_ref / t_tri:5.2f}  {2.0 * n**3 / t_tri / 1e9:5.1f} TFLOP/s  err {err:.1e}", flush=True)
        except Exception as e:  # Triton's failure is its row's only
            print(f"triton ieee {n}^3 FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--transpose", action="store_true", help="the transposed-ring rows and their baselines only")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 1),
                    help="processes compiling the cases' PTX first (1: none)")
    o = ap.parse_args()
    idx = [i for i in range(len(CASES)) if (not o.quick or i in QUICK) and (not o.transpose or i in TRANSPOSE)]
    cases = [CASES[i] for i in idx]
    if o.dry:
        dry(cases)
    else:
        if o.jobs > 1:
            prewarm(idx, o.jobs)
        gpu(cases, o.reps)
        if not o.quick and not o.transpose:
            triton_rows([2048, 4096], o.reps)


if __name__ == "__main__":
    main()
