"""The D = 64 prefill kernels with and without S ahead (`TILEC_ATTN_SAHEAD=1`), read on the CPU (hattn8).

std `flash_attention` at a bench row (f16 D = 64 by default, S = 1,024 and 4,096, blocks 128 x 128, sm_90a; every
kernel a launch of that row compiles: the main kernel, the short keys' variant, the split forms), through ptxas
(registers, spills, its C75xx warnings: a wgmma serialised) and nvdisasm: the key loop's SASS (the basic blocks
between the first HGMMA after the consumers' `USETMAXREG.TRY_ALLOC` and the backward branch that closes the
loop holding the most MUFU.EX2) counted, and the order that matters here: how many MUFU.EX2 come before the
first HGMMA of the loop body's own S (ahead: none, the S issue leads the body) and the `WARPGROUP.DEPBAR`s with
their pending counts. Each setting in a child process (the switches are read when a kernel is lowered):

    [ATTN_BLOCKS=128x64] python3 benchmarks/hattn8_sass.py [ROW [S ...]]   # ROW as attention.py's: f16-64 (default), ..

CPU only, ~30-60 s a setting.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARMS = (("A default", {}), ("S TILEC_ATTN_SAHEAD=1", {"TILEC_ATTN_SAHEAD": "1"}))
BLOCKS = tuple(int(x) for x in os.environ.get("ATTN_BLOCKS", "128x128").split("x"))  # (BM, BN), as attention.py


def key_loop(sass: str) -> str:
    """The innermost loops (a backward branch's range) with HGMMAs: the one with the most MUFU.EX2 (a key loop),
    its length, HGMMAs, MUFUs (how many before its first HGMMA), DEPBARs and local-memory traffic."""
    ins: list[str] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        if m := re.match(r"\s*(\.L_x_\d+):", line):
            labels[m.group(1)] = len(ins)
        elif m := re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?);", line):
            ins.append(m.group(1))
    if not ins:
        return "no nvdisasm"
    spans = [(labels[m.group(1)], j) for j, t in enumerate(ins)
             if (m := re.search(r"BRA.*`\((\.L_x_\d+)\)", t)) and labels.get(m.group(1), j + 1) <= j]
    hg = [(a, b) for a, b in spans if any("HGMMA" in x for x in ins[a:b + 1])]
    inner = [(a, b) for a, b in hg if not any((a, b) != (c, d) and a <= c and d <= b for c, d in hg)]
    if not inner:
        return "no key loop"
    a, b = max(inner, key=lambda ab: sum("MUFU.EX2" in x for x in ins[ab[0]:ab[1] + 1]))
    body = ins[a:b + 1]
    hgs = [k for k, x in enumerate(body) if "HGMMA" in x]
    mufu = [k for k, x in enumerate(body) if "MUFU.EX2" in x]
    dep = [x.split()[-1] for x in body if "WARPGROUP.DEPBAR" in x]
    return (f"key loop {len(body)} SASS, {len(hgs)} HGMMA, {len(mufu)} MUFU.EX2 ({sum(k < hgs[0] for k in mufu)} "
            f"before its first HGMMA), DEPBAR {' '.join(dep)}, {sum('STL' in x for x in body)} STL / "
            f"{sum('LDL' in x for x in body)} LDL ({len(inner)} key loops)")


def one(row: str, seq: int) -> None:
    from hpromote_prefill_start import _sass, launch_variants  # (the same launches, read the same way)

    with tempfile.TemporaryDirectory() as d:
        for name, ptx in launch_variants(row, seq, BLOCKS):
            regs, sass = _sass(ptx, d, name)
            print(f"  {name:6s} ptxas {regs}; {key_loop(sass)}", flush=True)


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], int(sys.argv[3]))
        return 0
    row = sys.argv[1] if len(sys.argv) > 1 else "f16-64"
    seqs = sys.argv[2:] or ["1024", "4096"]
    for seq in seqs:
        for name, env in ARMS:
            r = subprocess.run([sys.executable, __file__, "--one", row, seq], env={**os.environ, **env},
                               capture_output=True, text=True)
            print(f"{row} S = {int(seq):,}, {name}:\n{r.stdout.rstrip() or r.stderr.strip()[-600:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
