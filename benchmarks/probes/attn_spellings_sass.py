"""The key loop of each attention case of `benchmarks/cliffs.py` in SASS (CPU: ptxas and nvdisasm, no GPU):
its instructions, registers and spills, and the counts of the instructions a spelling changes (MUFU, FFMA,
FMUL, FADD, FMNMX, F2FP, FSETP/FSEL, HGMMA, ...). Where std::attention and a user's loop at the same blocks run
at different speeds, this says what the user's key loop does more of.

    PYTHONPATH=. python benchmarks/probes/attn_spellings_sass.py [substring of the cases' names ...]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for sub in ("", "benchmarks", "tests"):
    sys.path.insert(0, str(ROOT / sub))

import cliffs  # noqa: E402
from cliffs_cases import all_cases  # noqa: E402
from gpu_probe import nvdisasm_path  # noqa: E402

from tilelang.backend import compile_kernel, lower_gpu  # noqa: E402

KEEP = ("MUFU", "FFMA", "FMUL", "FADD", "FMNMX", "F2FP", "FSETP", "FSEL", "FSWZADD", "SHFL", "HGMMA", "WARPGROUP",
        "STL", "LDL", "SYNCS", "BAR", "VOTE", "ISETP", "IMAD", "IADD3", "SEL", "LOP3", "BRA")


def key_loops(sass: str) -> list[list[str]]:
    """The SASS loops (a backward branch's range) with HGMMAs inside and no inner loop with them."""
    ins: list[str] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        if m := re.match(r"\s*(\.L_x_\d+):", line):
            labels[m.group(1)] = len(ins)
        elif m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line):
            ins.append(m.group(1))
    spans = [(labels[m.group(1)], j) for j, t in enumerate(ins)
             if (m := re.search(r"BRA.*`\((\.L_x_\d+)\)", t)) and labels.get(m.group(1), j + 1) <= j]
    hg = [(a, b) for a, b in spans if any("HGMMA" in x for x in ins[a:b + 1])]
    inner = [(a, b) for a, b in hg if not any((a, b) != (c, d) and a <= c and d <= b for c, d in hg)]
    return [ins[a:b + 1] for a, b in inner]


def opcode(ins: str) -> str:
    op = re.sub(r"^@!?U?P\w+\s+", "", ins).split()[0]
    return op.split(".")[0]


def main(argv: list[str]) -> None:
    tool = nvdisasm_path()
    cases = [c for c in all_cases() if c.kind == "attn" and (not argv or any(a in c.name for a in argv))]
    for c in cases:
        kir = cliffs.kernel_ir(c)
        gk = lower_gpu(kir, "sm_90a", cliffs.launch_facts(c, kir))
        ptx = compile_kernel(kir, "sm_90a", cliffs.launch_facts(c, kir)).ptx
        with tempfile.TemporaryDirectory() as t:
            (Path(t) / "k.ptx").write_text(ptx)
            rep = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f"{t}/k.ptx", "-o", f"{t}/k.cubin"],
                                 capture_output=True, text=True).stderr
            sass = subprocess.run([tool, f"{t}/k.cubin"], capture_output=True, text=True).stdout if tool else ""
        regs = re.findall(r"Used (\d+) registers", rep)
        spill = re.findall(r"(\d+) bytes spill stores", rep)
        loops = key_loops(sass)
        # (the key loop: the one with the most MUFU, the exp2s; ptxas may lay the tile loop out around it)
        loop = max(loops, key=lambda x: (sum(opcode(i) == "MUFU" for i in x), len(x))) if loops else []
        n = Counter(opcode(x) for x in loop)
        counts = " ".join(f"{k}={n[k]}" for k in KEEP if n[k])
        print(f"{c.name:40s} {gk.num_warps}w {gk.num_stages}st regs {','.join(regs)} spill {','.join(spill)} loops {len(loops)} "
              f"key loop {len(loop)}: {counts}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
