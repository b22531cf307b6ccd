"""The SASS of std's prefill kernel with the last round split (TILEC_ATTN_SPLIT=1):
where ptxas put its local-memory spills (STL/LDL) relative to the key loop's HGMMAs
and the split's atomic. Needs ptxas and cuobjdump (the device machine).

    TILEC_ATTN_SPLIT=1 python benchmarks/probes/split_sass.py OUT_DIR
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tilelang import driver  # noqa: E402
from tilelang.backend import emit_ptx  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402


def main() -> None:
    out = Path(sys.argv[1])
    for d in (64, 128):
        src = (f"use std::attention::flash_attention;\nfn main() {{ let q = zeros::<f16>([2, 64, {d}]);"
               f" let mut o = zeros::<f16>([2, 64, {d}]);"
               f" flash_attention::<f16, 128, 128, {d}>(o.partition([1, 128, {d}]), &q, &q, &q, 0.1, false).sync(); }}\n")
        k = driver.compile(src, "ir").output[0]
        facts = {n: TensorFacts(True, (False, False, True)) for n in "oqkv"}
        ptx = emit_ptx(k, "sm_90a", facts)
        with tempfile.TemporaryDirectory() as t:
            (Path(t) / "k.ptx").write_text(ptx)
            rep = subprocess.run(["ptxas", "-arch=sm_90a", "-v", f"{t}/k.ptx", "-o", f"{t}/k.cubin"],
                                 capture_output=True, text=True)
            sass = subprocess.run(["cuobjdump", "-sass", f"{t}/k.cubin"], capture_output=True, text=True).stdout
        lines = [x for x in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", x)]
        marks = [(i, x) for i, x in enumerate(lines) if re.search(r"\b(STL|LDL|HGMMA|ATOM|ATOMG|RED|BAR|BRA)\b", x)]
        text = [rep.stderr.strip(), f"{len(lines)} instructions"]
        keep = [(i, x) for i, x in marks if re.search(r"\b(STL|LDL|ATOMG?)\b", x)]
        hg = [i for i, x in marks if "HGMMA" in x]
        text.append(f"HGMMA at {hg[:3]} .. {hg[-3:]}" if hg else "no HGMMA")
        for i, x in keep:
            text.append(f"{i:6d} {x.strip()}")
        (out / f"sass{d}.txt").write_text("\n".join(text) + "\n")
        print(f"D={d}: {rep.stderr.strip().splitlines()[-2:] if rep.stderr else ''}; STL/LDL {sum('STL' in x or 'LDL' in x for _, x in keep)}"
              f" at {[i for i, x in keep if 'STL' in x or 'LDL' in x][:12]}; HGMMA {hg[:2]}..{hg[-2:]}")


if __name__ == "__main__":
    main()
