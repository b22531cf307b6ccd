"""Issue 15, decode at batch 1: where the split + merge pair's time goes,
block by block (`TILEC_TRACE=blocks`, `tilelang/runtime/trace.py`).

    python benchmarks/decode_timeline.py [--pairs] [--engine] [--replays 30] [--out DIR]
    python benchmarks/decode_timeline.py --smoke      # the script itself on the CPU (nothing recorded)
    TILEC_TRACE_MARK=wait1 python benchmarks/decode_timeline.py --pairs   # + the split's first tile in (tc)
    TILEC_TRACE_MARK=store1 python benchmarks/decode_timeline.py --pairs  # + the split's first store

`--pairs`: 32 query heads over 8 KV heads, D = 128, bf16, batch 1, each
configuration of `PAIRS` (cache length, split kernel, the length the
kernels are told: 1 for the pair's fixed part) as two CUDA graphs of
traced kernels, the pair (split + `decode_combine` with PDL "late", the
example's form on sm_90) and the split alone, each replayed `--replays`
times back to back (a sleeping kernel in front, so the host's enqueue stays
ahead). Per replay, from the blocks' `%globaltimer` stamps: the period
(first split block start to the next replay's), the split's ramp (first to
last block start), its block times (min / median / max), its first block
end and span; the merge's start against the split's last block end (PDL:
before it), its wait's return, what it adds after the split's end, its
blocks' time after the wait; and the gap from the merge's last block end to
the next replay's first split block (the graph's launch). Medians over the
replays. The untraced graphs (their own module) are timed beside them.

`--engine`: the LLM engine (examples/llm, 4B, random weights) at 1,024
cached positions: the burst graph traced (`decode_trace.py`'s recording),
its attention launches and their merges per layer (block times by split),
and the same graph replayed at 64 positions (the chain with ~no bytes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples" / "python"))
sys.path.insert(0, str(ROOT))

HQ, HKV, D, GRP = 32, 8, 128, 4
# (cache length, split kernel, the length the kernels are told)
PAIRS = ((8192, "tc", 1), (8192, "tc", 8192), (32768, "fma", 1), (32768, "fma", 32768), (8192, "fma", 8192),
         (2048, "tc", 2048))


def _med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def replay_rows(launches: list, pair: bool) -> list[dict]:  # type: ignore[type-arg]
    """Per replay (the launches in start order: split, merge, split, ...), us."""
    import numpy as np

    step = 2 if pair else 1
    out = []
    for i in range(0, len(launches) - step, step):
        s, nxt = launches[i], launches[i + step]
        dur = (s.end - s.start) / 1e3
        r = {"period": (nxt.first_start - s.first_start) / 1e3, "s_ramp": (s.last_start - s.first_start) / 1e3,
             "s_min": float(dur.min()), "s_med": float(np.median(dur)), "s_max": float(dur.max()),
             "s_first_end": (s.first_end - s.first_start) / 1e3, "s_span": (s.last_end - s.first_start) / 1e3,
             "s_tail": (s.last_end - s.first_end) / 1e3}
        if s.waits:  # the split has no PDL wait: with TILEC_TRACE_MARK, its blocks' mark (`runtime/trace.py`)
            mk = (s.wait - s.start) / 1e3
            r.update({"s_mark_min": float(mk.min()), "s_mark_med": float(np.median(mk)), "s_mark_max": float(mk.max()),
                      "s_after_mark_med": float(np.median((s.end - s.wait) / 1e3))})
        if pair:
            m = launches[i + 1]
            r.update({"m_start": (m.first_start - s.last_end) / 1e3,
                      "m_wait": (float(np.median(m.wait)) - s.last_end) / 1e3,
                      "m_adds": (m.last_end - s.last_end) / 1e3,
                      "m_block_after_wait": float(np.median(m.end - m.wait)) / 1e3,
                      "m_ramp": (m.last_start - m.first_start) / 1e3,
                      "graph_gap": (nxt.first_start - m.last_end) / 1e3})
        else:
            r["graph_gap"] = (nxt.first_start - s.last_end) / 1e3
        out.append(r)
    return out


def _pair_fns(mods, traced: bool, dev: str, elem: str, kind: str, plan: tuple[int, int, int], o_part, lse_part,  # type: ignore[no-untyped-def]
              q, k, v, length: int, o, merge_name: str = "decode_combine"):
    """(split, merge) launchers of the pair: the split plain, the merge on PDL "late" (on the GPU);
    `merge_name`: `mods[traced]["pdl"]`'s merge kernel (`decode_combine`'s parameters)."""
    from decode_plan import combine_ns

    import tilelang
    from tilelang.runtime import cuda_pdl

    bn, splits, dc = plan
    plain, pdl = mods[traced]["plain"], mods[traced]["pdl"]
    if kind == "tc":
        sk = plain.decode_split_tc[elem, bn, D]
        sargs = (tilelang.partition(o_part.view(-1, GRP, D), [1, 64, D]),
                 tilelang.partition(lse_part.view(-1, GRP), [1, 64]), q, k, v, length, D**-0.5, splits)
    else:
        sk = plain.decode_split[elem, GRP, bn, D]
        sargs = (tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]), q, k, v,
                 length, D**-0.5)
    ck = getattr(pdl if dev == "cuda" else plain, merge_name)[elem, GRP, combine_ns(splits), dc]

    # DECODE_SPLIT_PDL=late|last (an --ab-env for this tool only): the split
    # launched with PDL too, compiled with that trigger, so the merge's blocks
    # are scheduled (and wait) before the split ends
    split_pdl = os.environ.get("DECODE_SPLIT_PDL", "") if dev == "cuda" else ""
    if split_pdl:
        sk = (pdl.decode_split_tc[elem, bn, D] if kind == "tc" else pdl.decode_split[elem, GRP, bn, D])

    def split():  # type: ignore[no-untyped-def]
        if split_pdl:
            with cuda_pdl.scoped(True, split_pdl):
                return sk(*sargs).launch()
        return sk(*sargs).launch()

    def merge():  # type: ignore[no-untyped-def]
        with cuda_pdl.scoped(dev == "cuda", "late"):
            return ck(tilelang.partition(o, [1, GRP, dc]), o_part, lse_part).launch()
    return split, merge


def _recorded(gr, replays: int, pair: bool):  # type: ignore[no-untyped-def]
    """`gr` (a traced graph's replay) replayed back to back: (medians per replay, the trace, launch names ok)."""
    import torch

    from tilelang.runtime import trace

    gr()
    torch.cuda.synchronize()
    trace.reset()
    torch.cuda._sleep(5_000_000)
    for _ in range(replays):
        gr()
    tr = trace.collect()
    las = sorted(tr.launches, key=lambda la: la.first_start)
    names = [la.name for la in las]
    rr = replay_rows(las, pair)
    ok = (all(n.startswith("decode_split") for n in names[::2])
          and all(n.startswith("decode_combine") for n in names[1::2])) if pair else len(las) == replays
    return {key: _med([r[key] for r in rr]) for key in (rr[0] if rr else {})}, tr, ok


def _inputs(dev: str, dt, ctx: int, rows: int = HKV):  # type: ignore[no-untyped-def]
    import torch

    g = torch.Generator(device=dev).manual_seed(ctx)
    return tuple(torch.randn(rows, n, D, device=dev, dtype=dt, generator=g) for n in (GRP, ctx, ctx))


def pairs(replays: int, out: Path, dev: str, only: str = "") -> list[dict]:  # type: ignore[type-arg]
    import attention as bench
    import torch
    from decode_forms import plan_for

    import tilelang
    from tilelang.runtime import trace

    dt, elem = (torch.bfloat16, "bf16") if dev == "cuda" else (torch.float16, "f16")
    # kernels compile at their first launch, traced where the setting is on then
    mods = {t: {f: tilelang.compile("use std::attention::*;\n") for f in ("plain", "pdl")} for t in (False, True)}
    rows = []
    keep: list[object] = []
    chosen = [tuple(int(x) if x.isdigit() else x for x in c.split(":")) for c in only.split(",") if c]
    for ctx, kind, length in (chosen or PAIRS) if dev == "cuda" else ((256, "fma", 256),):
        plan = plan_for(ctx, kind, 16 if (kind == "tc" and ctx == 32768) else None)
        q, k, v = _inputs(dev, dt, ctx)
        o_part = torch.empty(HKV, plan[1] * GRP, D, device=dev)
        lse_part = torch.empty(HKV, plan[1] * GRP, device=dev)
        keep += [q, k, v, o_part, lse_part]
        row: dict = {"ctx": ctx, "split": kind, "length": length, "plan": list(plan),
                     "MB": 2 * HKV * length * D * 2 / 1e6}

        def fns(traced: bool, o, kind=kind, plan=plan, o_part=o_part, lse_part=lse_part, qkv=(q, k, v),  # type: ignore[no-untyped-def]
                length=length):
            return _pair_fns(mods, traced, dev, elem, kind, plan, o_part, lse_part, *qkv, length, o)

        if dev != "cuda":  # the script's own path: the launches in order, no graphs, nothing recorded
            o = torch.full((HKV, GRP, D), float("nan"), dtype=dt)
            s, m = fns(False, o)
            bench.fn_wait(s())
            bench.fn_wait(m())
            ref = bench.ref_f32(q.view(1, HQ, 1, D), k.view(1, HKV, ctx, D), v.view(1, HKV, ctx, D), False)
            row["err"] = bench.rel_err(o.view(1, HQ, 1, D), ref)
            rows.append(row)
            continue
        o_u = torch.full((HKV, GRP, D), float("nan"), device=dev, dtype=dt)
        o_t = torch.full((HKV, GRP, D), float("nan"), device=dev, dtype=dt)
        keep += [o_u, o_t]
        trace.set_trace(False)
        su, mu = fns(False, o_u)
        row["untraced_pair_us"] = bench.time_ms(bench.graph_of(su, mu), 15, dev) * 1e3
        row["untraced_split_us"] = bench.time_ms(bench.graph_of(su), 15, dev) * 1e3
        trace.set_trace(True)
        st, mt = fns(True, o_t)
        gp, gs = bench.graph_of(st, mt), bench.graph_of(st)
        keep += [su, mu, st, mt, gp, gs]
        row["traced_pair_us"] = bench.time_ms(gp, 15, dev) * 1e3
        row["same"] = bool(torch.equal(o_u, o_t))
        if length == ctx:
            ref = bench.ref_f32(q.view(1, HQ, 1, D), k.view(1, HKV, ctx, D), v.view(1, HKV, ctx, D), False)
            row["err"] = bench.rel_err(o_t.view(1, HQ, 1, D), ref)
        for name, gr, pair in (("pair", gp, True), ("alone", gs, False)):
            row[name], tr, row[name + "_names_ok"] = _recorded(gr, replays, pair)
            if name == "pair" and (ctx, kind, length) in ((8192, "tc", 8192), (32768, "fma", 32768)):
                tr.write(out / f"pair_{ctx}_{kind}_{length}.json")
        trace.set_trace(False)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


# `--ab`: a compile-time setting (`--ab-env`, values `--ab-values`; default the
# TMA prefetch, TILEC_TMA_PREFETCH 0 / 1) on these shapes' pairs, and merge forms
# beside std's `decode_combine` (`--merges`: NAME or NAME@DC, kernels of
# benchmarks/decode_merge_variants.tile with `decode_combine`'s parameters, the
# pair with the last setting's split)
AB = ((8192, "tc", 1), (8192, "tc", 8192), (2048, "tc", 2048))
VARIANTS = ROOT / "benchmarks" / "decode_merge_variants.tile"


def ab(rounds: int, reps: int, replays: int, env: str = "TILEC_TMA_PREFETCH", values: tuple[str, ...] = ("0", "1"),
       shapes: tuple = AB, merges: tuple[str, ...] = ()) -> list[dict]:  # type: ignore[type-arg]
    """Each shape's pair and split alone as graphs of kernels compiled with
    each value of `env` (modules of their own, the setting read when a
    kernel first compiles), and the pair with each merge of `merges` (the last
    value's split), timed in `rounds` interleaved rounds of `reps`; then each
    cell's traced pair recorded (`_recorded`). Outputs compared across the
    cells (equal where the setting changes no arithmetic; the merges' within
    `err` of SDPA)."""
    import attention as bench
    import torch
    from decode_forms import SMS, plan_for
    from decode_plan import decode_plan

    import tilelang
    from tilelang.runtime import trace

    dt, elem, dev = torch.bfloat16, "bf16", "cuda"
    before = os.environ.get(env)
    variant_src = VARIANTS.read_text()
    rows, cells, keep = [], [], []
    for ctx, kind, length, *more in shapes:
        batch = more[0] if more else 1  # a shape's fourth field: the batch (the plan's for its rows)
        nrows = batch * HKV
        plan = plan_for(ctx, kind, None) if batch == 1 else decode_plan(nrows, GRP, ctx, D, SMS)
        q, k, v = _inputs(dev, dt, ctx, nrows)
        row: dict = {"ctx": ctx, "split": kind, "length": length, "batch": batch, "plan": list(plan), "us": {},
                     "traced": {}}
        outs = {}
        forms = [(st, "decode_combine", plan[2]) for st in values]
        for m in merges:
            name, _, dc = m.partition("@")
            forms.append((values[-1], name, int(dc) if dc else plan[2]))
        for st, merge, dc in forms:
            tag = st if merge == "decode_combine" else f"{merge}@{dc}"
            os.environ[env] = st
            mplan = (plan[0], plan[1], dc)
            o_part = torch.empty(nrows, plan[1] * GRP, D, device=dev)
            lse_part = torch.empty(nrows, plan[1] * GRP, device=dev)
            src = "use std::attention::*;\n" + (variant_src if merge != "decode_combine" else "")
            mods = {t: {f: tilelang.compile(src) for f in ("plain", "pdl")} for t in (False, True)}
            o_u = torch.full((nrows, GRP, D), float("nan"), device=dev, dtype=dt)
            o_t = torch.full((nrows, GRP, D), float("nan"), device=dev, dtype=dt)
            trace.set_trace(False)
            su, mu = _pair_fns(mods, False, dev, elem, kind, mplan, o_part, lse_part, q, k, v, length, o_u, merge)
            gp, gs = bench.graph_of(su, mu), bench.graph_of(su)
            trace.set_trace(True)
            st_, mt_ = _pair_fns(mods, True, dev, elem, kind, mplan, o_part, lse_part, q, k, v, length, o_t, merge)
            gt = bench.graph_of(st_, mt_)
            trace.set_trace(False)
            keep += [q, k, v, o_part, lse_part, o_u, o_t, su, mu, st_, mt_, gp, gs, gt, mods]
            cells.append((row, f"pair_{tag}", gp))
            if merge == "decode_combine":
                cells.append((row, f"split_{tag}", gs))
            row["traced"][tag] = gt
            outs[tag] = o_u
        tags = [t for t in outs if "@" not in t]
        row["same"] = all(torch.equal(outs[tags[0]], outs[t]) for t in tags)
        ref = bench.ref_f32(q.view(batch, HQ, 1, D), k.view(batch, HKV, ctx, D), v.view(batch, HKV, ctx, D),
                            False) if length == ctx else None
        if ref is not None:
            row["err"] = {t: bench.rel_err(o.view(batch, HQ, 1, D), ref) for t, o in outs.items()}
        row["_outs"] = outs
        rows.append(row)
    if before is None:
        os.environ.pop(env, None)
    else:
        os.environ[env] = before
    for _ in range(rounds):
        for row, name, gr in cells:
            row["us"].setdefault(name, []).append(bench.time_ms(gr, reps, dev) * 1e3)
    for row in rows:
        outs = row.pop("_outs")
        tags = [t for t in outs if "@" not in t]
        row["same_after"] = all(torch.equal(outs[tags[0]], outs[t]) for t in tags)
        for tag, gt in row.pop("traced").items():
            row[f"rec_{tag}"], _, row[f"rec_ok_{tag}"] = _recorded(gt, replays, True)
        print(json.dumps(row), flush=True)
    return rows


def engine(ctx: int, out: Path) -> dict:  # type: ignore[type-arg]
    import numpy as np

    sys.path.insert(0, str(ROOT / "examples" / "llm"))
    from decode import _op_bytes
    from decode_trace import _md, _record, _tok_s, picture
    from engine import TileQwen3, load_kernels
    from model import Qwen3Config, random_weights

    from tilelang.runtime import trace

    cfg = Qwen3Config.load("qwen3-4b")
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(cfg, w, max_seq=ctx + 64, backend="torch", graph_api="torch")
    res: dict = {}
    trace.set_trace(True)  # traced only (the untraced step: ~400 tok/s, RESULTS.md)
    eng.k = load_kernels()
    eng.replan(eng.plan)
    tok, _ = _tok_s(eng, ctx, 2, 3)
    res["traced_tok_s"] = statistics.median(tok)
    print(f"engine 4B ctx {ctx}: traced {res['traced_tok_s']:.1f} tok/s", flush=True)
    n = len(eng.ops)
    for pos in (ctx, 64):
        tr = _record(eng, pos, 2)
        steps = 2 * eng.burst
        pic = picture(tr, eng.ops, _op_bytes(eng, pos), steps)
        print(f"--- engine at {pos} positions", flush=True)
        print(_md(pic, cfg.num_hidden_layers), flush=True)
        # the attention launches' blocks: time by split (grid axis 1), start offsets
        las = sorted(tr.launches, key=lambda la: la.first_start)
        att = [(i, la) for i, la in enumerate(las) if la.name.startswith("attn_decode")]
        per_split: dict[int, list[float]] = {}
        starts, ends, firsts = [], [], []
        for i, la in att:
            # the grid is [KV heads, splits] and a record's block index is row-major over
            # (ctaid.x, ctaid.y, ctaid.z) (`codegen/trace.py`): block = head * splits + split
            splits = max(1, la.block.size // cfg.num_key_value_heads)
            dur = (la.end - la.start) / 1e3
            for b, t in zip(la.block.tolist(), dur.tolist(), strict=True):
                per_split.setdefault(b % splits, []).append(t)
            starts.append((la.last_start - la.first_start) / 1e3)
            ends.append((la.last_end - la.first_start) / 1e3)
            firsts.append((la.first_end - la.first_start) / 1e3)
            prev = las[i - 1] if i > 0 else None
            if prev is not None:
                res.setdefault(f"att_gap_{pos}", []).append((la.first_start - prev.last_end) / 1e3)
            nxt = las[i + 1] if i + 1 < len(las) else None
            if nxt is not None:
                res.setdefault(f"merge_start_{pos}", []).append((nxt.first_start - la.last_end) / 1e3)
                res.setdefault(f"merge_wait_{pos}", []).append((float(np.median(nxt.wait)) - la.last_end) / 1e3)
                res.setdefault(f"merge_adds_{pos}", []).append((nxt.last_end - la.last_end) / 1e3)
                res.setdefault(f"merge_after_wait_{pos}", []).append(float(np.median(nxt.end - nxt.wait)) / 1e3)
        res[f"att_{pos}"] = {"launches": len(att), "ramp": _med(starts), "first_end": _med(firsts),
                             "span": _med(ends),
                             "by_split": {s: [round(float(np.percentile(v, p)), 2) for p in (5, 50, 95)]
                                          for s, v in sorted(per_split.items())}}
        for key in list(res):
            if key.endswith(f"_{pos}") and isinstance(res[key], list):
                res[key] = _med(res[key])
        print(json.dumps({k: v for k, v in res.items() if k.endswith(f"_{pos}")}), flush=True)
        if pos == ctx:
            one = trace.Trace(list(tr.launches[n: 2 * n]), tr.cursor, tr.capacity, tr.notes, tr.sms,
                              tr.granularity_ns)
            one.write(out / f"engine_step_{pos}.json")
    trace.set_trace(False)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--engine", action="store_true")
    ap.add_argument("--ab", action="store_true", help="a setting's values (--ab-env) and merge forms (--merges)")
    ap.add_argument("--ab-env", default="TILEC_TMA_PREFETCH")
    ap.add_argument("--ab-values", default="0,1")
    ap.add_argument("--ab-only", default="", help="--ab: these shapes (as --only) instead of AB")
    ap.add_argument("--merges", default="", help="--ab: merge kernels of decode_merge_variants.tile, NAME[@DC],..")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--replays", type=int, default=30)
    ap.add_argument("--only", default="", help="--pairs: these configurations, e.g. 8192:tc:1,32768:fma:32768")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    result: dict = {}
    if a.smoke:
        result["pairs"] = pairs(2, a.out, "cpu")
        print(json.dumps(result["pairs"]))
        return 0 if all(r["err"] < 1e-2 for r in result["pairs"]) else 1
    if a.pairs:
        result["pairs"] = rows = pairs(a.replays, a.out, "cuda", a.only)
        keys = ("period", "s_ramp", "s_min", "s_med", "s_max", "s_first_end", "s_span", "m_start", "m_wait",
                "m_adds", "m_block_after_wait", "graph_gap")
        print("| ctx | split | told | MB | untraced pair / split | traced pair | " + " | ".join(keys)
              + " | split-alone period / span / gap | err |")
        for r in rows:
            p, s = r["pair"], r["alone"]
            print(f"| {r['ctx']} | {r['split']} | {r['length']} | {r['MB']:.1f} | {r['untraced_pair_us']:.1f} / "
                  f"{r['untraced_split_us']:.1f} | {r['traced_pair_us']:.1f} | "
                  + " | ".join(f"{p.get(k, float('nan')):.2f}" for k in keys)
                  + f" | {s['period']:.2f} / {s['s_span']:.2f} / {s['graph_gap']:.2f} | {r.get('err', 0):.1e} |"
                  + (f" mark min/med/max {p['s_mark_min']:.2f}/{p['s_mark_med']:.2f}/{p['s_mark_max']:.2f},"
                     f" after it {p['s_after_mark_med']:.2f} |" if "s_mark_med" in p else ""), flush=True)
    if a.ab:
        values = tuple(a.ab_values.split(","))
        shapes = tuple(tuple(int(x) if x.isdigit() else x for x in c.split(":")) for c in a.ab_only.split(",") if c)
        result["ab"] = rows = ab(a.rounds, a.reps, a.replays, a.ab_env, values, shapes or AB,
                                 tuple(m for m in a.merges.split(",") if m))
        print(f"{a.ab_env}: graph us, median (min-max) of {a.rounds} rounds; traced: split min/med, "
              "after the mark (TILEC_TRACE_MARK), merge adds, merge block after its wait")
        for r in rows:
            for name, ts in r["us"].items():
                tag = name.split("_", 1)[1]
                rec = r.get(f"rec_{tag}", {}) if name.startswith("pair_") else {}
                extra = (f" | split {rec.get('s_min', 0):.2f}/{rec.get('s_med', 0):.2f} span {rec.get('s_span', 0):.2f}"
                         f" | merge start {rec.get('m_start', 0):.2f} wait {rec.get('m_wait', 0):.2f}"
                         f" | graph gap {rec.get('graph_gap', 0):.2f} | mark->end "
                         f"{rec.get('s_after_mark_med', float('nan')):.2f} | merge adds {rec.get('m_adds', 0):.2f} | "
                         f"merge block {rec.get('m_block_after_wait', 0):.2f} | err "
                         f"{r.get('err', {}).get(tag, float('nan')):.1e}") if rec else ""
                print(f"| B={r['batch']} {r['ctx']} {r['split']} told {r['length']} plan {r['plan']} | {name} | "
                      f"{statistics.median(ts):.2f} ({min(ts):.2f}-{max(ts):.2f}){extra} |", flush=True)
            print(f"| {r['ctx']} told {r['length']} | same across the settings: {r['same'] and r['same_after']} |")
    if a.engine:
        try:
            result["engine"] = engine(1024, a.out)
        except Exception as e:  # the pairs' numbers still come back
            print(f"engine failed: {type(e).__name__}: {e}", flush=True)
    (a.out / "decode_timeline.json").write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
