"""The tensor-core decode split's start, counted on the CPU (hattn7, issue 15).

`decode_split_tc` at the B=1 8k plan (bf16, 8 KV heads x 16 shares, BN 64,
D 128, sm_90a, the launch's facts as `huser_decode_ptx.py` gives them): what
every thread runs before the warp roles split, in the PTX (instructions
before the first `setmaxnreg`) and in the SASS (ptxas, then nvdisasm where
installed: instructions before the first `USETMAXREG`), with the
mbarrier-initialisation groups (`BAR.SYNC` / `bar.sync` before the split)
and ptxas's registers and spills. Each setting runs in a child process of
its own (the switches are read when a kernel is lowered):

    python3 benchmarks/hattn7_start.py            # neither, each switch, the default (both)
    python3 benchmarks/hattn7_start.py --one ENV  # one line, ENV as "A=1,B=0" or "-"

CPU only, ~10 s a setting.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from gpu_probe import nvdisasm_path  # noqa: E402  (the suite's one probe for nvdisasm)

ARMS = (  # (both switches on by default since 2026-12-07: "neither" is the form before)
    ("neither", "TILEC_MBAR_ONE_INIT=0,TILEC_ATTN_DIVS_IN_ROLE=0"),
    ("one init", "TILEC_MBAR_ONE_INIT=1,TILEC_ATTN_DIVS_IN_ROLE=0"),
    ("divs in role", "TILEC_MBAR_ONE_INIT=0,TILEC_ATTN_DIVS_IN_ROLE=1"),
    ("both/default", "-"),
    ("no fastdiv", "TILEC_ATTN_FASTDIV=0"),
)


def ptx() -> str:
    import tilelang
    from tilelang.backend import emit_ptx
    from tilelang.backend.facts import TensorFacts
    from tilelang.dtypes import DType
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    f32, t = DType.F32, DType.BF16
    bhkv, smax, splits, d = 8, 8192, 16, 128
    params = [("o_part", f32, (bhkv * splits, 4, d), (1, 64, d)), ("lse_part", f32, (bhkv * splits, 4), (1, 64)),
              ("q", t, (bhkv, 4, d), None), ("k", t, (bhkv, smax, d), None), ("v", t, (bhkv, smax, d), None)]
    mod = tilelang.compile("use std::attention::decode_split_tc;\n")
    kir = lower_kernel(mod._program, "decode_split_tc", {"T": t, "BN": 64, "D": d},
                       {n: ArgFact(dt, s, tl) for n, dt, s, tl in params})
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}
    return emit_ptx(kir, "sm_90a", facts)


def count(text: str) -> str:
    body = text[text.index("{", text.index(".entry")):]
    lines = [x.strip() for x in body.splitlines()]
    instr = [x for x in lines if x and not x.startswith((".", "//", "$", "{", "}")) and x.endswith(";")]
    split = next(i for i, x in enumerate(instr) if x.startswith("setmaxnreg"))
    pre = instr[:split]
    out = f"PTX {split:4d} before the split ({sum(x.startswith('bar.sync') for x in pre)} bar.sync, " \
          f"{sum(x.startswith('fence.proxy.async') for x in pre)} fence.proxy.async)"
    from tilelang.backend.target import ptxas_available, run_ptxas

    if not ptxas_available():
        return out + "; no ptxas"
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / "k.cubin"
        r = run_ptxas(text, "sm_90a", verbose=True, cubin=cubin)
        regs = re.findall(r"Used (\d+) registers", r.stderr)
        spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
        out += f"; ptxas {regs[0] if regs else '?'} registers, {spills[0] if spills else '?'} B spill stores"
        tool = nvdisasm_path()
        if tool is None:
            return out + "; no nvdisasm"
        sass = subprocess.run([tool, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    ins = [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4,}\*/\s+([^;]*);", sass)]
    at = next((i for i, x in enumerate(ins) if "USETMAXREG" in x), len(ins))
    pre_s = ins[:at]
    calls = sum("CALL" in x for x in pre_s)
    return out + (f"; SASS {at:4d} before USETMAXREG ({sum('BAR.SYNC' in x for x in pre_s)} BAR.SYNC, "
                  f"{sum('MEMBAR' in x for x in pre_s)} MEMBAR, {calls} CALL)")


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        print(count(ptx()), flush=True)
        return 0
    for name, env in ARMS:
        e = dict(os.environ)
        for kv in ([] if env == "-" else env.split(",")):
            k, v = kv.split("=")
            e[k] = v
        r = subprocess.run([sys.executable, __file__, "--one", env], env=e, capture_output=True, text=True)
        print(f"{name:13s} {r.stdout.strip() or r.stderr.strip()[-400:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
