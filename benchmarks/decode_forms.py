"""Issue 15, decode at batch 1: which split kernel, how many shares a KV head
and which launch form make the fastest pair, all in one process.

    python benchmarks/decode_forms.py [--reps 15] [--rounds 2] [--shapes 1x32768,1x8192] [--kinds fma,h2]
    python benchmarks/decode_forms.py --launches      # the compiles it makes (for the prewarm)
    python benchmarks/decode_forms.py --smoke         # a 256-position cache on the CPU interpreter: the script itself
    ncu --metrics gpu__time_duration.sum python benchmarks/decode_forms.py --floor1   # the fixed cost's parts

For each shape (32 query heads over 8 KV heads, D = 128, bf16) and each
configuration (split kernel, shares a KV head: `CONFIGS`), the pair
(split + `decode_combine`, the example's key block and merge chunk for that
share count) as a CUDA graph in each launch form:

- "plain": neither launch with programmatic dependent launch (PDL);
- "merge": the merge with PDL (trigger "late"), the split without
  (`decode_plan.merge_pdl`, the example's form on sm_90);
- "both": both with PDL "late" (FMA split only: the tensor-core split's
  pair ran 2x slower so, RESULTS.md, issue 15);

and the split alone (plain). `--floor1`: the pair at batch 1 and 8,192 positions
(either split, the example's plan) over a one-position cache, 3 times each
kernel eagerly (a wait after each), and an empty kernel: under ncu, each
kernel's own duration, which the pair's graph time over one position
(`attention.py --fixed`) exceeds by the launches' and the graph's costs.

Each form's kernels come from a module of its
own (a kernel keeps the launcher of its first run), every graph is built
first and then timed `--rounds` times, the rounds interleaved (run-to-run
drift on these shapes is ~1 us: a comparison within a round is the fair
one). Every output is checked against the plain pair's (equal) and SDPA in
f32 (err). Prints a table (us, the median of the rounds' medians; the
spread of the rounds) and writes `decode_forms.json` to --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples" / "python"))
sys.path.insert(0, str(ROOT))

from decode_plan import combine_ns, decode_plan  # noqa: E402

HQ, HKV, D, GRP = 32, 8, 128, 4
SMS = 132  # the H200 (the plans' share counts below are for it)
# (split kernel, shares a KV head) a shape is timed with; None: the example's plan.
# At batch 1 on 132 SMs: FMA 2 blocks an SM -> 32 shares one wave (the plan at
# 32k), 66 two full waves, 99 three (the hardware hands blocks to SMs as they
# free up: balances an uneven finish, at a block's fixed cost each wave); tc one
# persistent CTA an SM -> 16 shares one tile a CTA, 32 two on most
CONFIGS = {32768: (("fma", None), ("h2", None), ("fma", 66), ("fma", 99), ("tc", 16), ("tc", 32), ("tc6", 16),
                   ("queue", None), ("queue", 64), ("queue", 128)),
           8192: (("fma", None), ("h2", None), ("tc", None), ("tc6", None), ("queue", None), ("queue", 64))}
# "tc6": `decode_split_tc6` of attention_variants.tile (std's tc split, a ring of 6 key blocks);
# "h2": `decode_split_h2` of attention_variants.tile (std's FMA split on the caches viewed as
# half-rows [B * Hkv, 2 * S, D / 2]: 48 lane shuffles a key block instead of 128), the FMA plan;
# "queue": `decode_split_queue` of attention_variants.tile (std's FMA split, its shares pulled from a
# tile queue by one wave of blocks: 33 a KV head at batch 1, 2 an SM), at the plan's shares (each
# block one share or none: the pull's own cost) and finer (2 and 4 shares a block)
FORMS = {"fma": ("plain", "merge", "both"), "h2": ("plain", "merge"), "tc": ("plain", "merge"),
         "tc6": ("plain", "merge"), "queue": ("plain", "merge")}
SMOKE = {256: (("fma", None), ("fma", 8), ("h2", None), ("tc", None), ("tc6", None), ("queue", None),
               ("queue", 8))}  # --smoke: f16 on the interpreter


def plan_for(ctx: int, kind: str, shares: int | None) -> tuple[int, int, int]:
    """(BN, splits, DC): the example's plan, or its key block and merge chunk rule at `shares`."""
    bn, splits, dc = decode_plan(HKV, GRP, ctx, D, SMS)
    if shares is None:
        return bn, splits, dc
    dc = D
    while combine_ns(shares) * GRP * dc > 1024 and dc % 16 == 0:
        dc //= 2
    return bn, shares, dc


def launches() -> list[tuple[str, dict, list]]:
    """The prewarm's (kernel, instantiation, params) of every launch here
    (`attention_prewarm.py --only forms`); PDL-compiled ones with the prewarm's suffix."""
    import os

    import attention_prewarm as pw

    only = [k for k in os.environ.get("DECODE_FORMS_KINDS", "").split(",") if k]  # the prewarm of a `--kinds` run
    out = []
    for ctx, configs in CONFIGS.items():
        for kind, shares in configs:
            if only and kind not in only:
                continue
            bn, splits, dc = plan_for(ctx, kind, shares)
            fma = kind in ("fma", "h2", "queue")
            got = pw.decode("bf16", HKV, GRP, ctx, D, bn, splits, combine_ns(splits), dc=dc, tc=not fma)
            split = [({"tc6": "decode_split_tc6", "queue": "decode_split_queue"}.get(kind, n), i, p) for n, i, p in got
                     if n == ("decode_split" if fma else "decode_split_tc")]
            if kind == "h2":
                split = [("decode_split_h2", h2_inst(i), h2_params(p, splits)) for _, i, p in split]
            comb = [x for x in got if x[0] == "decode_combine"]
            out += split + comb + [(n + pw.PDL, i, p) for n, i, p in comb]
            if "both" in FORMS[kind]:
                out += [(n + pw.PDL, i, p) for n, i, p in split]
    return out


def h2_inst(inst: dict) -> dict:
    """`decode_split_h2`'s instantiation from `decode_split`'s: D / 2 for D."""
    return {"T": inst["T"], "G": inst["G"], "BN": inst["BN"], "DH": inst["D"] // 2}


def h2_params(params: list, splits: int) -> list:
    """`decode_split_h2`'s tensor parameters from `decode_split`'s: the half-row views."""
    (_, f32, (rows, _, d), _), (_, _, lse_shape, _), (_, t, qs, _), (_, _, (_, smax, _), _), _ = params
    return [("o_part", f32, (rows * splits * GRP, 2, d // 2), (GRP, 2, d // 2)),
            ("lse_part", f32, (rows * splits, GRP), (1, GRP)), ("q", t, (qs[0] * GRP, 2, d // 2), None),
            ("k", t, (rows, 2 * smax, d // 2), None), ("v", t, (rows, 2 * smax, d // 2), None)]


def floor1() -> int:
    """The batch-1 8,192-position pair (each split, the example's plan) over a
    one-position cache and an empty kernel, each launched 3 times with a wait
    after each: run under ncu for each kernel's own duration."""
    import attention as bench
    import torch

    import tilelang

    mod = tilelang.compile("use std::attention::*;\n")
    nop = bench._nop()
    z = torch.zeros(1, device="cuda")
    ctx = 8192
    bn, splits, dc = plan_for(ctx, "tc", None)
    q = torch.randn(HKV, GRP, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(HKV, ctx, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(HKV, ctx, D, device="cuda", dtype=torch.bfloat16)
    o_part = torch.empty(HKV, splits * GRP, D, device="cuda")
    lse_part = torch.empty(HKV, splits * GRP, device="cuda")
    o = torch.empty(HKV, GRP, D, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        nop(tilelang.partition(z, [1])).sync()
        mod.decode_split_tc["bf16", bn, D](tilelang.partition(o_part.view(-1, GRP, D), [1, 64, D]),
                                          tilelang.partition(lse_part.view(-1, GRP), [1, 64]), q, k, v, 1, D**-0.5,
                                          splits).sync()
        mod.decode_combine["bf16", GRP, combine_ns(splits), dc](tilelang.partition(o, [1, GRP, dc]), o_part,
                                                                lse_part).sync()
        mod.decode_split["bf16", GRP, bn, D](tilelang.partition(o_part, [1, GRP, D]),
                                            tilelang.partition(lse_part, [1, GRP]), q, k, v, 1, D**-0.5).sync()
    torch.cuda.synchronize()
    want = v[:, :1].float().expand(HKV, GRP, D)  # one position: its value, whatever the score
    err = float((o.float() - want).abs().max())
    print(f"floor1: plan BN {bn} / {splits} shares / DC {dc}; |o - v[0]| {err:.1e}")
    return 0 if err < 1e-2 else 1


def profile() -> int:
    """At batch 1 and 32,768 positions the plan's FMA split (32 shares) and the
    tc split at 16 shares, twice each with a wait after each: run under ncu
    for where their time goes (issue activity, stalls, DRAM throughput)."""
    import torch

    import tilelang

    mod = tilelang.compile("use std::attention::*;\n")
    ctx = 32768
    q = torch.randn(HKV, GRP, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(HKV, ctx, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(HKV, ctx, D, device="cuda", dtype=torch.bfloat16)
    for kind, shares in (("fma", None), ("tc", 16)):
        bn, splits, _ = plan_for(ctx, kind, shares)
        o_part = torch.empty(HKV, splits * GRP, D, device="cuda")
        lse_part = torch.empty(HKV, splits * GRP, device="cuda")
        for _ in range(2):
            if kind == "tc":
                mod.decode_split_tc["bf16", bn, D](tilelang.partition(o_part.view(-1, GRP, D), [1, 64, D]),
                                                  tilelang.partition(lse_part.view(-1, GRP), [1, 64]), q, k, v,
                                                  ctx, D**-0.5, splits).sync()
            else:
                mod.decode_split["bf16", GRP, bn, D](tilelang.partition(o_part, [1, GRP, D]),
                                                    tilelang.partition(lse_part, [1, GRP]), q, k, v, ctx,
                                                    D**-0.5).sync()
    torch.cuda.synchronize()
    print("profile: done")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--shapes", default="1x32768,1x8192")
    ap.add_argument("--kinds", default="", help="only these split kinds (e.g. fma,h2; default: every one)")
    ap.add_argument("--launches", action="store_true", help="print the launches' count and names, no GPU")
    ap.add_argument("--floor1", action="store_true", help="the pairs over one position, eagerly (for ncu)")
    ap.add_argument("--smoke", action="store_true", help="f16, 256 positions, on the CPU interpreter")
    ap.add_argument("--profile", action="store_true",
                    help="the B=1 32k plan's FMA split and the tc split at 16 shares, twice each (for ncu)")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    if a.launches:
        got = launches()
        print(len(got), sorted({n for n, _, _ in got}))
        return 0
    if a.floor1:
        return floor1()
    if a.profile:
        return profile()
    import attention as bench
    import torch

    import tilelang
    from tilelang.runtime import cuda_pdl

    dev, dt, elem, configs = "cuda", torch.bfloat16, "bf16", CONFIGS
    if a.smoke:
        dev, dt, elem, configs, a.shapes = "cpu", torch.float16, "f16", SMOKE, "1x256"
    elif not torch.cuda.is_available():
        print("decode_forms needs a GPU (or --smoke)", file=sys.stderr)
        return 2
    else:
        assert torch.cuda.get_device_properties(0).multi_processor_count == SMS, "the share counts are the H200's"

    def graph_of(*fns):  # type: ignore[no-untyped-def]
        if dev == "cpu":  # no graphs: the launches in order
            return lambda: [bench.fn_wait(f()) for f in fns] and None
        return bench.graph_of(*fns)

    mods = {m: tilelang.compile("use std::attention::*;\n") for m in ("plain", "pdl")}
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    graphs: list[tuple[dict, str, object]] = []  # (its row, the cell's name, the replay)
    rows = []
    keep: list[object] = []  # every tensor a graph reads or writes, alive until the last replay
    for b, ctx in (tuple(int(x) for x in s.split("x")) for s in a.shapes.split(",")):
        assert b == 1, "batch 1 (the configurations' share counts)"
        g = torch.Generator(device=dev).manual_seed(ctx + b)
        q = torch.randn(b, HQ, 1, D, device=dev, dtype=dt, generator=g)
        k = torch.randn(b, HKV, ctx, D, device=dev, dtype=dt, generator=g)
        v = torch.randn(b, HKV, ctx, D, device=dev, dtype=dt, generator=g)
        ref = bench.ref_f32(q, k, v, False)
        q3, k3, v3 = q.view(HKV, GRP, D), k.view(HKV, ctx, D), v.view(HKV, ctx, D)
        keep += [q, k, v, q3, k3, v3]
        for kind, shares in configs[ctx]:
            if a.kinds and kind not in a.kinds.split(","):
                continue
            bn, splits, dc = plan_for(ctx, kind, shares)
            r: dict = {"B": b, "ctx": ctx, "split": kind, "plan": [bn, splits, dc], "MB": 2 * HKV * ctx * D * 2 / 1e6,
                       "us": {}}
            rows.append(r)
            o_part = torch.empty(HKV, splits * GRP, D, device=dev)
            lse_part = torch.empty(HKV, splits * GRP, device=dev)
            keep += [o_part, lse_part]

            def split_fn(mod, pdl: bool, kind=kind, bn=bn, splits=splits, o_part=o_part, lse_part=lse_part,  # type: ignore[no-untyped-def]
                         qkv=(q3, k3, v3), ctx=ctx):
                q3, k3, v3 = qkv
                if kind == "h2":  # the half-row views of the same memory
                    kern = variants.decode_split_h2[elem, GRP, bn, D // 2]
                    args = (tilelang.partition(o_part.view(-1, 2, D // 2), [GRP, 2, D // 2]),
                            tilelang.partition(lse_part.view(-1, GRP), [1, GRP]), q3.reshape(-1, 2, D // 2),
                            k3.view(HKV, -1, D // 2), v3.view(HKV, -1, D // 2), ctx, D**-0.5, splits)
                elif kind == "queue":  # std's split's arguments and the share count
                    kern = variants.decode_split_queue[elem, GRP, bn, D]
                    args = (tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]), q3, k3,
                            v3, ctx, D**-0.5, splits)
                elif kind != "fma":
                    kern = (variants.decode_split_tc6 if kind == "tc6" else mod.decode_split_tc)[elem, bn, D]
                    args = (tilelang.partition(o_part.view(-1, GRP, D), [1, 64, D]),
                            tilelang.partition(lse_part.view(-1, GRP), [1, 64]), q3, k3, v3, ctx, D**-0.5, splits)
                else:
                    kern = mod.decode_split[elem, GRP, bn, D]
                    args = (tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]), q3, k3,
                            v3, ctx, D**-0.5)

                def go():  # type: ignore[no-untyped-def]
                    with cuda_pdl.scoped(pdl, "late"):
                        return kern(*args).launch()
                return go

            def comb_fn(mod, pdl: bool, o, splits=splits, dc=dc, o_part=o_part, lse_part=lse_part):  # type: ignore[no-untyped-def]
                kern = mod.decode_combine[elem, GRP, combine_ns(splits), dc]

                def go():  # type: ignore[no-untyped-def]
                    with cuda_pdl.scoped(pdl, "late"):
                        return kern(tilelang.partition(o.view(HKV, GRP, D), [1, GRP, dc]), o_part, lse_part).launch()
                return go

            outs = {}
            for form in FORMS[kind]:
                o = torch.full((b, HQ, 1, D), float("nan"), device=dev, dtype=dt)
                s_pdl = form == "both"
                fns = [split_fn(mods["pdl" if s_pdl else "plain"], s_pdl),
                       comb_fn(mods["plain" if form == "plain" else "pdl"], form != "plain", o)]
                graphs.append((r, form, graph_of(*fns)))
                outs[form] = o
                keep += [o, fns]
            graphs.append((r, "split", graph_of(split_fn(mods["plain"], False))))
            r["err"] = bench.rel_err(outs["plain"], ref)
            r["same"] = {f: bool(torch.equal(o, outs["plain"])) for f, o in outs.items()}
            r["_outs"] = outs
    for i in range(a.rounds):
        for r, cell, replay in graphs:
            r["us"].setdefault(cell, []).append(bench.time_ms(replay, a.reps, dev) * 1e3)
            if i == 0:
                print(f"round 1: B=1 {r['ctx']} {r['split']} {r['plan']} {cell} {r['us'][cell][0]:.1f} us", flush=True)
    for r in rows:  # after the timing: the outputs of the last replays, again
        outs = r.pop("_outs")
        r["same_after"] = {f: bool(torch.equal(o, outs["plain"])) for f, o in outs.items()}
    cells = ("plain", "merge", "both", "split")
    print("| shape | split | BN / shares / DC | " + " | ".join(cells) + " | err | same |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in cells) + " | --- | --- |")
    for r in rows:
        def cell(name: str, r=r) -> str:
            ts = r["us"].get(name)
            if not ts:
                return "-"
            return f"{statistics.median(ts):.1f} ({min(ts):.1f}-{max(ts):.1f})"
        same = all(r["same"].values()) and all(r["same_after"].values())
        print(f"| B=1 {r['ctx']} | {r['split']} | {'/'.join(map(str, r['plan']))} | "
              + " | ".join(cell(c) for c in cells) + f" | {r['err']:.1e} | {same} |", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "decode_forms.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
