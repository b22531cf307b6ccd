"""Issue 15: why programmatic dependent launch made std's tensor-core decode
pair (`decode_split_tc` + `decode_combine`) slower as a CUDA graph (H200,
2026-12-03 fourth session: 14.3 -> 26.0 us at batch 1, 8,192 positions)
where it made the FMA pair faster (17.2 -> 16.4).

    python benchmarks/decode_pdl_probe.py [--reps 5] [--shapes 1x8192,1x32768]

Graph times (us) of the pair with PDL on neither, either or both launches
(a launch takes PDL from the setting in force when it is made:
`cuda_pdl.scoped`), the trigger "late", "entry" or "exit", the split alone,
for the tc split and the FMA split on the example's plan; every output
checked against the plain pair's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import attention as bench  # noqa: E402
import torch  # noqa: E402
from decode_plan import combine_ns, decode_plan  # noqa: E402

import tilelang  # noqa: E402
from tilelang.runtime import cuda_pdl  # noqa: E402

HQ, HKV, D, GRP = 32, 8, 128, 4
# (name, split's PDL trigger or None, merge's PDL trigger or None, the merge launched at all)
CASES = [("plain", None, None, True), ("split late", "late", None, True), ("merge late", None, "late", True),
         ("both late", "late", "late", True), ("both exit", "exit", "exit", True),
         ("both entry", "entry", "entry", True), ("split alone", None, None, False),
         ("split alone late", "late", None, False)]


def row(batch: int, ctx: int, kind: str, reps: int, sms: int) -> dict:
    dev, dt = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(ctx + batch)
    q = torch.randn(batch, HQ, 1, D, device=dev, dtype=dt, generator=g)
    k = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    v = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    rows = batch * HKV
    bn, splits, dc = decode_plan(rows, GRP, ctx, D, sms)
    q3, k3, v3 = q.view(rows, GRP, D), k.view(rows, ctx, D), v.view(rows, ctx, D)
    o_part = torch.empty(rows, splits * GRP, D, device=dev)
    lse_part = torch.empty(rows, splits * GRP, device=dev)
    mod = tilelang.compile("use std::attention::*;\n")
    comb = mod.decode_combine["bf16", GRP, combine_ns(splits), dc]
    if kind == "tc":
        split = mod.decode_split_tc["bf16", bn, D]
        args = (tilelang.partition(o_part.view(-1, GRP, D), [1, 64, D]),
                tilelang.partition(lse_part.view(-1, GRP), [1, 64]), q3, k3, v3, ctx, D**-0.5, splits)
    else:
        split = mod.decode_split["bf16", GRP, bn, D]
        args = (tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]), q3, k3, v3, ctx,
                D**-0.5)
    r: dict = {"B": batch, "ctx": ctx, "split": kind, "plan": [bn, splits, dc]}
    want = None
    for name, ts, tc, merge in CASES:
        o = torch.full((batch, HQ, 1, D), float("nan"), device=dev, dtype=dt)

        def s(ts=ts):  # type: ignore[no-untyped-def]
            with cuda_pdl.scoped(ts is not None, ts or "late"):
                return split(*args).launch()

        def c(tc=tc, o=o):  # type: ignore[no-untyped-def]
            with cuda_pdl.scoped(tc is not None, tc or "late"):
                return comb(tilelang.partition(o.view(rows, GRP, D), [1, GRP, dc]), o_part, lse_part).launch()

        try:
            r[name] = bench.time_ms(bench.graph_of(*([s, c] if merge else [s])), reps, dev) * 1e3
            if merge:
                want = o.clone() if want is None else want
                r[name + " same"] = bool(torch.equal(o, want))
        except Exception as e:  # recorded; the other cases still run
            r[name] = repr(e)[:200]
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", default="1x8192,1x32768")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("decode_pdl_probe needs a GPU", file=sys.stderr)
        return 2
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [tuple(int(x) for x in s.split("x")) for s in a.shapes.split(",")]
    row(*shapes[0], "tc", 2, sms)  # once untimed
    rows = [row(b, ctx, kind, a.reps, sms) for b, ctx in shapes for kind in ("tc", "fma")]
    print("| shape | split | " + " | ".join(n for n, *_ in CASES) + " |")
    for r in rows:
        cells = [f"{r[n]:.1f}" + ("" if r.get(n + " same", True) else " (DIFFERS)") if isinstance(r[n], float)
                 else str(r[n]) for n, *_ in CASES]
        print(f"| B={r['B']} ctx {r['ctx']} | {r['split']} | " + " | ".join(cells) + " |", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "decode_pdl_probe.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
