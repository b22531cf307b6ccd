"""Where a persistent attention prefill kernel's CTAs end (issue 15): the
block timeline (`tilelang.block_trace`) of `std::attention::flash_attention`
on benchmarks/attention.py's shapes.

    python benchmarks/probes/attention_tail.py [--reps 5] [--rows f16-64-full-1024,...] [--out DIR]

The kernel is persistent: at most one CTA an SM, each walking a static list
of items (tiles, or heavy + light pairs of tiles when causal) in snake
rounds, so T items over P CTAs take ceil(T / P) rounds where T / P would be
ideal (the quantisation: 4,096 tiles over 132 CTAs is 31.03 rounds, run as
32). Per launch: the span (first CTA start to last CTA end), each CTA's
end, and from the walk's rule how many items each CTA ran; then per row
(medians over the launches): the span, the CTAs' ends at percentiles, the
share of CTA-time idle within the span, the quantisation's share
(1 - (T / P) / ceil(T / P)), the time an item takes (the CTAs with the
fewer items: their median end over their count) and how much the CTAs
with the same count differ (p90 - p10 of their ends: what a dynamic tile
queue could win back beyond the quantisation). The untraced kernel's time
(CUDA events) beside it says what the stamps cost. Writes `tail.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def items_per_cta(items: int, ctas: int) -> list[int]:
    """The snake walk's count of items for each CTA position (attention_tiles:
    round r gives CTA c item r * P + c, or r * P + P - 1 - c when r is odd)."""
    out = [0] * ctas
    rounds = -(-items // ctas)
    for r in range(rounds):
        for c in range(ctas):
            if r * ctas + (c if r % 2 == 0 else ctas - 1 - c) < items:
                out[c] += 1
    return out


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def analyse(launch, items: int) -> dict:  # type: ignore[no-untyped-def]
    """One launch's CTAs (`launch`: a `runtime.trace.Launch`) against the walk of `items` items."""
    ctas = int(launch.block.size)
    t0 = launch.first_start
    counts = items_per_cta(items, ctas)
    ends = {int(b): (int(e) - t0) / 1e3 for b, e in zip(launch.block.tolist(), launch.end.tolist(), strict=True)}
    busy = sum((int(e) - int(s)) for s, e in zip(launch.start.tolist(), launch.end.tolist(), strict=True)) / 1e3
    span = (launch.last_end - t0) / 1e3
    lo = min(counts)
    few = [ends[c] for c in range(ctas) if counts[c] == lo and c in ends]
    many = [ends[c] for c in range(ctas) if counts[c] > lo and c in ends]
    return {"ctas": ctas, "span_us": span, "idle_share": 1 - busy / (ctas * span),
            "end_p0": pct(list(ends.values()), 0), "end_p10": pct(list(ends.values()), 0.1),
            "end_p50": pct(list(ends.values()), 0.5), "end_p90": pct(list(ends.values()), 0.9),
            "end_p100": max(ends.values()), "few_items": lo, "few_ctas": len(few), "many_ctas": len(many),
            "item_us": statistics.median(few) / lo if few and lo else None,
            "few_spread_us": (pct(few, 0.9) - pct(few, 0.1)) if few else None,
            "many_end_p50": statistics.median(many) if many else None,
            "start_spread_us": (launch.last_start - t0) / 1e3}


def probe(spec: str, reps: int, sms: int) -> dict:
    """One row (`dtype-D-full|causal-S`): its untraced time and its traced launches, analysed."""
    import torch
    from attention import ATTN, blocks, time_ms

    import tilelang

    dtype, d_s, mode, s_s = spec.split("-")
    d, s, causal = int(d_s), int(s_s), mode == "causal"
    h, b = 2048 // d, max(1, 16384 // s)
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(s + d)
    q, k, v = (torch.randn(b * h, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    bm, bn = blocks(d, "cuda")
    kern = ATTN.flash_attention[dtype, bm, bn, d]

    def run():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o, [1, bm, d]), q, k, v, d**-0.5, causal).launch()

    ms = time_ms(run, reps, "cuda")
    nf = -(-s // bm)
    items = b * h * (-(-nf // 2) if causal else nf)
    with tilelang.block_trace() as t:
        # a new module: the API's launch plans keep the kernels of the setting they were made under
        traced = tilelang.compile("use std::attention::*;\n").flash_attention[dtype, bm, bn, d]
        for _ in range(reps + 1):
            traced(tilelang.partition(o, [1, bm, d]), q, k, v, d**-0.5, causal).launch().wait()
            torch.cuda.synchronize()
    launches = [la for la in t.trace.launches if la.block.size <= sms][1:]  # the first: warm-up
    per = [analyse(la, items) for la in launches]
    row = {"row": spec, "untraced_us": ms * 1e3, "items": items, "sms": sms,
           "quant_share": 1 - (items / min(sms, items)) / -(-items // min(sms, items)), "launches": per}
    for key in per[0] if per else ():
        vals = [p[key] for p in per if p[key] is not None]
        if vals:
            row[key] = statistics.median(vals)
    print(f"{spec}: untraced {ms * 1e3:.1f} us, traced span {row.get('span_us', 0):.1f} us, {row.get('ctas')} CTAs, "
          f"{items} items ({items / max(1, row.get('ctas', 1)):.2f} a CTA; quantisation {row['quant_share']:.1%}); "
          f"ends p0/p10/p50/p90/p100 {row.get('end_p0', 0):.1f}/{row.get('end_p10', 0):.1f}/{row.get('end_p50', 0):.1f}/"
          f"{row.get('end_p90', 0):.1f}/{row.get('end_p100', 0):.1f} us; idle {row.get('idle_share', 0):.1%}; "
          f"item {row.get('item_us') or 0:.2f} us; {row.get('few_ctas')} CTAs of {row.get('few_items')} items spread "
          f"{row.get('few_spread_us') or 0:.2f} us, {row.get('many_ctas')} of more end at {row.get('many_end_p50') or 0:.1f}; "
          f"starts spread {row.get('start_spread_us', 0):.2f} us", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rows", default="f16-64-full-1024,f16-64-causal-1024,f16-64-full-4096,f16-128-full-1024")
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()

    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    out = [probe(spec, args.reps, sms) for spec in args.rows.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tail.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
