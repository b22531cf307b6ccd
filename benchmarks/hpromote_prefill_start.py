"""The prefill kernel's start with and without `TILEC_ATTN_DIVS_IN_ROLE`, counted on the CPU (hpromote).

std `flash_attention` at the bench row (f16 by default, D = 128, S = 4,096, blocks 128 x 128, sm_90a; each
variant a launch compiles: the main kernel, the short keys' and the split forms'), in the SASS (ptxas, then
nvdisasm): what every thread runs before the warp roles split (before the first `USETMAXREG`), the consumers'
path from their `USETMAXREG.TRY_ALLOC` to their first barrier wait and first `HGMMA`, the producer's from its
`USETMAXREG.DEALLOC` to its first `UTMALDG`, in program order (the code between is straight-line but for the
walk's uniform branches, laid out the same way in both forms), and ptxas's registers and spills. Each setting in
a child process (the switches are read when a kernel is lowered):

    python3 benchmarks/hpromote_prefill_start.py [ROW [S]]  # ROW as attention.py's: f16-128 (default), bf16-64, ..;
                                                            # S of 1024, 4096 (default), 16384

CPU only, ~30 s a setting.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARMS = (("divisors before the split", "0"), ("divisors in role (default)", "1"))


def _sass(ptx: str, d: str, name: str) -> tuple[str, str]:
    from hattn7_start import nvdisasm_path

    from tilelang.backend.target import run_ptxas

    cubin = Path(d) / f"{name}.cubin"
    r = run_ptxas(ptx, "sm_90a", verbose=True, cubin=cubin)
    regs = re.findall(r"Used (\d+) registers", r.stderr)
    spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
    warns = "".join(f" {w}" for w in sorted(set(re.findall(r"C75\d\d", r.stderr))))  # C75xx: a wgmma serialised
    tool = nvdisasm_path()
    sass = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout if tool else ""
    return f"{regs[0] if regs else '?'} registers, {spills[0] if spills else '?'} B spills{warns}", sass


def count(sass: str) -> str:
    ins = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass)]
    if not ins:
        return "no nvdisasm"

    def at(what: str, start: int = 0) -> int:
        return next(i for i in range(start, len(ins)) if what in ins[i])

    split, alloc, dealloc = at("USETMAXREG"), at("USETMAXREG.TRY_ALLOC"), at("USETMAXREG.DEALLOC")
    wait, hg, tma = at("SYNCS.PHASECHK", alloc), at("HGMMA", alloc), at("UTMALDG", dealloc)
    return (f"before the split {split:4d}; consumers: to the first wait {split + wait - alloc:4d}, to the first "
            f"HGMMA {split + hg - alloc:4d}; producer: to the first UTMALDG {split + tma - dealloc:4d} (from the "
            f"kernel's start); {len(ins)} in all")


def launch_variants(row: str, seq: int, blocks: tuple[int, int]) -> list[tuple[str, str]]:
    """(name, PTX) of every kernel std `flash_attention`'s launch at a bench row compiles for sm_90a: the main
    kernel, the short keys' variant, the split forms (hattn8_sass.py reads the same launches)."""
    for sub in ("", "benchmarks"):
        sys.path.insert(0, str(ROOT / sub))
    import attention_prewarm as ap

    import tilelang
    from tilelang.backend import compile_kernel
    from tilelang.backend.facts import TensorFacts
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    prog = tilelang.compile("use std::attention::*;\n")._program
    kernel, inst, params = next(j for j in ap.bench_rows([row], blocks, "flash_attention")
                                if j[2][0][2][1] == seq)
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    kir = lower_kernel(prog, f"std::attention::{kernel}", inst,
                       {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
    ck = compile_kernel(kir, "sm_90a", facts)
    variants = [("main", ck.ptx)]
    if ck.abi.short is not None:
        more = ck.abi.short.refine(facts, next(p[2] for p in params if p[0] == ck.abi.short.param))
        if more is not None:
            variants.append(("short", compile_kernel(kir, "sm_90a", more).ptx))
    for kind, _ in (ck.abi.split.ons if ck.abi.split is not None else ()):
        variants.append((kind, compile_kernel(kir, "sm_90a", ck.abi.split.refine(facts, kind)).ptx))
    return variants


def one(row: str, seq: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        for name, ptx in launch_variants(row, seq, (128, 128)):
            regs, sass = _sass(ptx, d, name)
            print(f"  {name:6s} {count(sass)}; ptxas {regs}", flush=True)


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], int(sys.argv[3]))
        return 0
    row = sys.argv[1] if len(sys.argv) > 1 else "f16-128"
    seq = sys.argv[2] if len(sys.argv) > 2 else "4096"
    for name, v in ARMS:
        env = {**os.environ, "TILEC_ATTN_DIVS_IN_ROLE": v}
        r = subprocess.run([sys.executable, __file__, "--one", row, seq], env=env, capture_output=True, text=True)
        print(f"{row} S = {int(seq):,}, {name}:\n{r.stdout.rstrip() or r.stderr.strip()[-400:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
