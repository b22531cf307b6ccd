"""Flash decoding's launches for Nsight Compute: the default plan
(`examples/python/decode_plan.py`) of the issue's decode shapes, each
split + combine pair run a few times, so that `ncu` sees warm kernels.

    ncu --clock-control none -k regex:decode --launch-skip 4 --launch-count 4 \\
        --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,... \\
        python benchmarks/decode_profile.py 1x8192 8x32768

Each argument is BATCHxCONTEXT (32 query / 8 KV heads, D = 128, bf16); every
pair runs `--runs` times (default 3) per shape, shape after shape. No timing
here: ncu's `gpu__time_duration` is each kernel's own time on the GPU, with
no launch gap, which the benchmark's CUDA events include.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "python"))

import torch  # noqa: E402
from decode_plan import combine_ns, decode_plan  # noqa: E402

import tilelang  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", nargs="+", help="BATCHxCONTEXT, e.g. 1x8192")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    attn = tilelang.compile("use std::attention::*;\n")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    hkv, d, g = 8, 128, 4  # 32 query heads
    for shape in a.shapes:
        b, ctx = (int(x) for x in shape.split("x"))
        bn, splits, dc = decode_plan(b * hkv, g, ctx, d, sms)
        q = torch.randn(b * hkv, g, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b * hkv, ctx, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        o_part = torch.empty(b * hkv, splits * g, d, device="cuda")
        lse_part = torch.empty(b * hkv, splits * g, device="cuda")
        o = torch.empty_like(q)
        split = attn.decode_split["bf16", g, bn, d]
        comb = attn.decode_combine["bf16", g, combine_ns(splits), dc]
        for _ in range(a.runs):
            split(tilelang.partition(o_part, [1, g, d]), tilelang.partition(lse_part, [1, g]), q, k, v, ctx,
                  d**-0.5).sync()
            comb(tilelang.partition(o, [1, g, dc]), o_part, lse_part).sync()
        print(f"B={b} ctx={ctx}: BN={bn} splits={splits} DC={dc} ({a.runs} pairs)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
