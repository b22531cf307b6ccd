"""hcliff13: huser25_bench's kernels as their launches compile them for sm_90a (the bench's shapes and tiles, the
launch's facts; l12's wide variant, the one the runtime picks on 132 SMs, and its 128 x 128 one), through ptxas
and nvdisasm: registers, spills, SASS a thread and the instructions that explain RESULTS.md "hcliff13" (CPU only).

    python3 benchmarks/hcliff13_sass.py [NAME ...]     # NAME: l12 l15 l15b l04 l09 l02 (default: all)
    TILEC_TANH_DIV=rn TILEC_ACC_PAIRS=0 python3 benchmarks/hcliff13_sass.py l12   # call 39's l12
    TILEC_UNROLL=0 python3 benchmarks/hcliff13_sass.py l15 l15b                   # the Philox rounds as a loop
    TILEC_ATOMIC_SPREAD=0 python3 benchmarks/hcliff13_sass.py l02                 # one thread's 16 REDs
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

P = ROOT / "tests" / "user" / "programs"
N12, N15 = 4096, 1 << 26
F16, F32 = "f16", "f32"
# name: (program, kernel, generics, {param: (dtype, shape, tile or None)})
LAUNCHES = {
    "l12": ("l12_gemm_bias_gelu_residual", "mlp_up", {"BM": 128, "BN": 128, "BK": 32},
            {"out": (F16, (N12, N12), (128, 128)), "x": (F16, (N12, N12), None), "w": (F16, (N12, N12), None),
             "b": (F32, (N12,), None), "res": (F16, (N12, N12), None), "scale": (F32, (N12,), None)}),
    "l15": ("l15_philox_dropout", "dropout", {"B": 1024},
            {"y": (F32, (N15,), (1024,)), "keep": ("bool", (N15,), (1024,)), "bits": ("u32", (N15,), (1024,)),
             "x": (F32, (N15,), None)}),
    "l15b": ("l15_philox_dropout", "dropout_bf16", {"B": 1024},
             {"y": ("bf16", (N15,), (1024,)), "x": ("bf16", (N15,), None)}),
    "l04": ("l04_rank_sort_rows", "sort_rows", {"BN": 32},
            {"sorted": (F32, (65536, 32), (1, 32)), "order": ("i32", (65536, 32), (1, 32)),
             "x": (F32, (65536, 32), None)}),
    "l09": ("l09_three_axis_reductions", "per_slice", {"M": 256, "N": 256},
            {"tot": (F32, (1024,), (1,)), "mean": (F32, (1024,), (1,)), "var": (F32, (1024,), (1,)),
             "x": (F32, (1024, 256, 256), None)}),
    "l02": ("l02_u8_histograms_atomics", "luma_hist", {"B": 1024},
            {"seen": ("i32", (16384,), (1,)), "luma": ("u8", (1 << 24,), None), "w": (F32, (1 << 24,), None),
             "hist": (F32, (16,), None)}),
}
WATCH = ("STL", "LDL", "CALL", "FCHK", "MUFU", "LDG", "STG", "REDG", "SHFL", "BAR", "IMAD.WIDE", "IMAD.MOV",
         "LOP3", "HGMMA")


def variants(name: str) -> list[tuple[str, str]]:
    """(variant, PTX) of the launch: l12's 128 x 128 kernel and its wide one."""
    import tilelang
    from tilelang.backend import compile_kernel
    from tilelang.backend.facts import TensorFacts
    from tilelang.dtypes import DType
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    prog, kernel, gen, params = LAUNCHES[name]
    m = tilelang.load(P / f"{prog}.tile")
    facts = {p: ArgFact(DType.parse(d), s, t) for p, (d, s, t) in params.items()}
    kir = lower_kernel(m._program, kernel, gen, facts)
    tf = {p: TensorFacts.of_launch(256, s) for p, (_, s, _) in params.items()}
    ck = compile_kernel(kir, "sm_90a", tf)
    out = [("main", ck.ptx)]
    wide = getattr(ck.abi, "wide", None)
    if wide:
        out.append(("wide", compile_kernel(kir, "sm_90a", {**tf, wide[0]: dataclasses.replace(
            tf[wide[0]], wide_tiles=True)}).ptx))
    return out


def read(ptx: str, d: str) -> str:
    from gpu_probe import nvdisasm_path

    from tilelang.backend.target import run_ptxas

    cubin = Path(d) / "k.cubin"
    r = run_ptxas(ptx, "sm_90a", verbose=True, cubin=cubin)
    regs = re.findall(r"Used (\d+) registers", r.stderr)
    spill = re.findall(r"(\d+) bytes spill stores", r.stderr)
    tool = nvdisasm_path()
    if tool is None:
        return f"regs {regs[0] if regs else '?'}, spills {spill[0] if spill else '?'} B (no nvdisasm)"
    sass = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z0-9_.]+)", sass)]
    seen = Counter(next((w for w in WATCH if op.startswith(w)), "") for op in ops)
    counts = " ".join(f"{w} {seen[w]}" for w in WATCH if seen[w])
    return f"regs {regs[0] if regs else '?'}, spills {spill[0] if spill else '?'} B, SASS {len(ops)}: {counts}"


def main(argv: list[str]) -> int:
    names = argv or list(LAUNCHES)
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            for var, ptx in variants(name):
                print(f"{name:5s} {var:5s} {read(ptx, d)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
