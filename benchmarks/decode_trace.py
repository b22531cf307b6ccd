"""Where the decode step's time goes: the engine's step graph with the block
timeline on (`TILEC_TRACE=blocks`, `tilelang/runtime/trace.py`), against
the same step untraced in the same process.

    python benchmarks/decode_trace.py --model 4b --context 1024 --out DIR
    python benchmarks/decode_trace.py --variants '[{}, {"pdl": false}]'

For each plan variant: tokens/s untraced, traced, untraced again (the
stamps' own cost), then `--replays` replays of the burst graph (8 steps
each) recorded block by block. Every launch of the step is matched to its
operation (`eng.ops`, in graph order) and, per position in the step, the
median over the recorded steps of: the gap from the previous launch's last
block end to this launch's first block start (negative: PDL overlap), the
wait (a block's start to its `griddepcontrol.wait` returning), the ramp
(first to last block start), the first block's end, the tail (first block
end to last block end), the span, the SM time without a block, and what the
launch *adds* to the step (its last block end less the previous launch's:
these sum to the step). Then the same per kind of launch (kernel, shapes),
summed over the step, with the HBM bytes each kind must read. Writes
`trace_<variant>.json` (Chrome/Perfetto, one replay) and `picture.json` /
`picture.md` to `--out`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))
sys.path.insert(0, str(ROOT / "benchmarks"))

FIELDS = ("gap_us", "wait_us", "ramp_us", "first_end_us", "tail_us", "span_us", "idle_sm_us", "adds_us")


def _tok_s(eng, ctx: int, rounds: int, reps: int) -> tuple[list[float], list[int]]:  # type: ignore[no-untyped-def]
    from decode_ab import _step_ms

    ms, toks = _step_ms(eng, ctx, rounds, reps)
    return [1e3 / m for m in ms], toks


def _record(eng, ctx: int, replays: int):  # type: ignore[no-untyped-def]
    """The block timeline of `replays` replays of the burst graph (captured already)."""
    import torch

    from tilelang.runtime import trace

    eng.be.write(eng.pos, [ctx])
    torch.cuda.synchronize()
    trace.reset()
    for _ in range(replays):
        eng._burst_graph.replay()
    torch.cuda.synchronize()
    return trace.collect()


def picture(tr, ops: list, need: list[int], steps: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Per position of the step and per kind: medians over `steps` steps."""
    rows = tr.rows()
    n = len(ops)
    if len(rows) != steps * n:
        return {"error": f"{len(rows)} launches recorded, {steps} steps x {n} launches expected"}
    prev_end = None
    for r in rows:
        r["adds_us"] = r["end_us"] - (prev_end if prev_end is not None else r["start_us"])
        prev_end = r["end_us"] if prev_end is None else max(prev_end, r["end_us"])
    names_ok = all(rows[i]["kernel"].startswith(ops[i % n].kernel.__name__) for i in range(len(rows)))
    per_pos = []
    for p in range(n):
        rs = [rows[s * n + p] for s in range(steps) if s > 0 or p > 0]  # the first launch has no predecessor
        if not rs:
            rs = [rows[p]]
        entry = {"pos": p, "kernel": ops[p].kernel.__name__,
                 "generics": ",".join(str(v) for v in ops[p].generics.values()),
                 "blocks": rows[p]["blocks"], "bytes": need[p]}
        for f in FIELDS:
            vals = [r[f] for r in rs if r[f] is not None]
            entry[f] = statistics.median(vals) if vals else None
        per_pos.append(entry)
    kinds: dict[tuple[str, str, int], dict] = {}  # type: ignore[type-arg]
    for e in per_pos:
        k = kinds.setdefault((e["kernel"], e["generics"], e["bytes"]),
                             {"kernel": e["kernel"], "generics": e["generics"], "blocks": e["blocks"],
                              "bytes_each": e["bytes"], "n": 0, **dict.fromkeys(FIELDS, 0.0)})
        k["n"] += 1
        for f in FIELDS:
            k[f] += e[f] or 0.0
    step_us = [rows[(s + 1) * n - 1]["end_us"] - rows[s * n]["start_us"] for s in range(steps)]
    step_adds = statistics.median(sum(rows[s * n + p]["adds_us"] for p in range(n)) for s in range(1, steps))
    return {"launches_per_step": n, "steps": steps, "names_match": names_ok, "step_span_us": step_us,
            "step_adds_us": step_adds, "kinds": sorted(kinds.values(), key=lambda k: -k["adds_us"]),
            "positions": per_pos, "timer_step_ns": tr.granularity_ns, "notes": tr.notes}


def _md(pic: dict, layers: int) -> str:  # type: ignore[type-arg]
    if "error" in pic:
        return pic["error"]
    lines = [
        f"step: {statistics.median(pic['step_span_us']):.1f} us first start -> last end (median of "
        f"{pic['steps']}), launches add {pic['step_adds_us']:.1f}; timer step <= {pic['timer_step_ns']} ns; "
        f"names match: {pic['names_match']}",
        "",
        "| kind (sum over the step; us a layer = / " + str(layers) + ") | n | blocks | MB each | adds | gap | wait "
        "| ramp | 1st end | tail | span | idle SM-us | GB/s over span |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k in pic["kinds"]:
        bw = k["bytes_each"] * k["n"] / (k["span_us"] * 1e-6) / 1e9 if k["span_us"] and k["bytes_each"] else 0
        lines.append(
            f"| {k['kernel']} {k['generics']} | {k['n']} | {k['blocks']} | {k['bytes_each'] / 1e6:.1f} | "
            f"{k['adds_us']:.1f} | {k['gap_us']:.1f} | {k['wait_us']:.1f} | {k['ramp_us']:.1f} | "
            f"{k['first_end_us']:.1f} | {k['tail_us']:.1f} | {k['span_us']:.1f} | {k['idle_sm_us']:.0f} | {bw:.0f} |")
    return "\n".join(lines)


def _save_records(path: Path, launches: list) -> None:  # type: ignore[type-arg]
    """The launches' blocks as flat arrays (launch index, name table), for a later look."""
    import numpy as np

    names = sorted({la.name for la in launches})
    idx = np.concatenate([np.full(la.block.size, i) for i, la in enumerate(launches)])
    cat = {f: np.concatenate([getattr(la, f) for la in launches]) for f in ("block", "sm", "start", "wait", "end")}
    np.savez_compressed(path, launch=idx, kernel=np.array([names.index(la.name) for la in launches]),
                        names=np.array(names), **cat)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="4b")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--variants", default="[{}]", help="JSON list of plan-field overrides (decode_ab.py's)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=4, help="burst replays a round")
    ap.add_argument("--replays", type=int, default=2, help="burst replays recorded")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    import os

    # 2^22 records (128 MB): 2 replays of a 4B burst are ~1.0-1.1 M blocks
    os.environ.setdefault("TILEC_TRACE_RECORDS", str(1 << 22))
    import torch
    from decode import _op_bytes
    from decode_ab import _variant_plan
    from engine import TileQwen3, hbm_bytes_per_token, load_kernels
    from generate import copy_bandwidth
    from model import Qwen3Config, random_weights

    from tilelang.runtime import trace

    out = Path(a.out) if a.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    bw = copy_bandwidth()
    cfg = Qwen3Config.load(a.model if a.model in ("tiny", "small") else f"qwen3-{a.model}")
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(cfg, w, max_seq=a.context + 64, backend="torch", graph_api="torch")
    base = eng.plan
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    roof = bw / hbm_bytes_per_token(cfg, a.context)
    print(f"{torch.cuda.get_device_name()} copy bw {bw / 1e12:.2f} TB/s; {a.model} ctx {a.context}; "
          f"roofline {roof:.0f} tok/s", flush=True)
    result = []
    for i, v in enumerate(json.loads(a.variants)):
        t1 = time.perf_counter()
        plan = _variant_plan(base, v, sms)
        speeds = {}
        for label, on in (("untraced", False), ("traced", True), ("untraced_again", False)):
            trace.set_trace(on)
            eng.k = load_kernels()  # the API's launch plans keep their kernels: new ones, of this setting
            eng.replan(plan)
            tok, toks = _tok_s(eng, a.context, a.rounds, a.reps)
            speeds[label] = {"tok_s": statistics.median(tok), "rounds": tok, "tokens": toks}
            if on:
                tr = _record(eng, a.context, a.replays)
        trace.set_trace(False)
        steps = a.replays * eng.burst
        if not tr.launches:
            print(f"variant {json.dumps(v)}: nothing recorded", flush=True)
            continue
        pic = picture(tr, eng.ops, _op_bytes(eng, a.context), steps)
        same = speeds["traced"]["tokens"] == speeds["untraced"]["tokens"]
        cost = 1 - speeds["traced"]["tok_s"] / statistics.mean(
            [speeds["untraced"]["tok_s"], speeds["untraced_again"]["tok_s"]])
        print(f"variant {json.dumps(v)}: untraced {speeds['untraced']['tok_s']:.1f} / "
              f"{speeds['untraced_again']['tok_s']:.1f} tok/s ({speeds['untraced']['tok_s'] / roof:.1%}), traced "
              f"{speeds['traced']['tok_s']:.1f} (stamps cost {cost:.1%}); same tokens {same}; "
              f"{time.perf_counter() - t1:.1f} s", flush=True)
        print(tr.summary().splitlines()[-1])
        for n in tr.notes:
            print("note:", n)
        md = _md(pic, cfg.num_hidden_layers)
        print(md, flush=True)
        row = {"variant": v, "speeds": speeds, "stamps_cost": cost, "same_tokens": same, "picture": pic,
               "roofline": roof}
        result.append(row)
        if out:
            n_ops = len(eng.ops)
            one = trace.Trace(list(tr.launches[n_ops: 2 * n_ops]), tr.cursor,  # the second step: one in the middle
                              tr.capacity, tr.notes, tr.sms, tr.granularity_ns)
            one.write(out / f"trace_v{i}.json")
            if i == 0:  # (a device call returns a limited number of files)
                _save_records(out / f"records_v{i}.npz", tr.launches[: 3 * n_ops])
            (out / f"summary_v{i}.txt").write_text(tr.summary())
            (out / f"picture_v{i}.md").write_text(md + "\n")
    if out:
        (out / "picture.json").write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
