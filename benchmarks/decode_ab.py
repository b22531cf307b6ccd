"""Decode-step variants of the Qwen3 engine compared in one process, on one
card, in one run: each variant is a plan (block shapes, attention splits,
the decode attention's forms) over the same weights (`TileQwen3.replan`),
its step graph (8 steps a replay, captured by `torch.cuda.graph`) replayed
between two CUDA events, three rounds each. A variant also reports its
attention launches alone (graph-timed), and whether it decoded the tokens of
the first variant.

    python benchmarks/decode_ab.py --model 4b --contexts 1024,8192 \\
        --variants '[{}, {"tc": 0, "fma_until": 0}, {"tc": 1}, {"ns": 16}]'

`{"sk": {"o": [16, 256, 4, 3]}}`: the O projection as a persistent streaming
GEMV (`Plan.sk`: BN, BK, ST, MB; the grid is the card's SMs x MB); `{"sk": {}}`:
no streamed GEMV.
`{"pdl": false}`, `{"pdl": "entry"}`, `{"pdl": "late+prefetch"}`, `{"pdl": "late+loads"}`...:
programmatic dependent launch (`Plan.pdl`, sm_90+, "late" by default
there: each launch overlaps the previous kernel's tail; the trigger's
place and the pre-wait prefetch, `Target.pdl_trigger`/`pdl_prefetch`);
every row counts the launches made with the attribute ("PDL launches": 0
where it is off).
`--driver-jit`: every kernel's cubin from the driver's JIT instead of
nvJitLink (both from the same PTX; a comparison of the two PTX compilers).
`--profile`: the first variant's step per kind of launch (`decode.py`'s
graph-timed profile); `--profile-first N`: the first N variants';
`--marginal-first N`: the first N variants' step timed with each kind of
launch left out in turn (what a kind costs where it sits in the chain). Prints one table; `--out DIR` also writes ab.json
(each row with the tokens it decoded, so that two trees' runs compare).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _driver_jit() -> None:
    """Cubins from the driver's JIT: no nvJitLink, no cached cubin."""
    import tilelang.runtime.cache as cache
    import tilelang.runtime.cuda_link as cuda_link

    real = cache.make_key
    cuda_link._nvjitlink_cubin = lambda ptx, arch: None  # what `cuda_module.Module.from_ptx` calls

    def make_key(*parts):  # type: ignore[no-untyped-def]
        return real("driver-jit", *parts) if parts and parts[0] == "cubin" else real(*parts)

    cache.make_key = make_key


def _variant_plan(base, v: dict, sms: int = 0):  # type: ignore[no-untyped-def]
    """`base` with `v`'s fields (a dict field merged); a `Plan.sk` entry of
    four values (BN, BK, ST, MB) takes the grid `sms` x MB."""
    fields = {k: ({**getattr(base, k), **x} if isinstance(x, dict) else x) for k, x in v.items()}
    if "sk" in fields:  # {"sk": {}} or null: no stream
        given = v["sk"] or {}
        merged = {**base.sk, **given} if given else {}
        fields["sk"] = {m: (*s[:4], s[4] if len(s) > 4 else sms * s[3]) for m, s in merged.items()}
    return dataclasses.replace(base, **fields)


def _step_ms(eng, ctx: int, rounds: int, reps: int) -> tuple[list[float], list[int]]:  # type: ignore[no-untyped-def]
    """GPU ms a token of the burst graph, per round; the tokens it chose."""
    import torch

    eng.graph_api = "torch"
    eng.be.write(eng.pos, [ctx])
    eng.be.write(eng.tok, [0])
    toks = eng.decode(eng.burst)  # captures the burst graph, the first 8 tokens
    g = eng._burst_graph
    out = []
    for _ in range(rounds):
        eng.be.write(eng.pos, [ctx])
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(reps):
            g.replay()
        e1.record()
        e1.synchronize()
        out.append(e0.elapsed_time(e1) / (reps * eng.burst))
    return out, toks


# the decode attention's kernels and the split merge (`--variants` time them alone)
ATTN = ("attn_decode", "attn_decode_short", "attn_decode_ring", "attn_decode_ring_early",
             "attn_decode_ring_w8", "attn_decode_ring_merge", "attn_decode_ring_fold", "combine_splits", "combine_rows",
             "decode_combine")  # fmt: skip


def _attention_us(eng, ctx: int) -> float:  # type: ignore[no-untyped-def]
    from decode import graph_seconds
    ops = [op for op in eng.ops if op.kernel.__name__ in ATTN]  # no merge under Plan.om: its O GEMV's
    eng.be.write(eng.pos, [ctx])
    with eng.launch_scope():  # launched as the step launches them
        return graph_seconds(ops, 3) * 1e6 / eng.cfg.num_hidden_layers


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="4b")
    ap.add_argument("--contexts", default="1024")
    ap.add_argument("--variants", default="[{}]", help="JSON list of plan-field overrides")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=4, help="burst replays a round")
    ap.add_argument("--driver-jit", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--profile-first", type=int, default=0)
    ap.add_argument("--marginal-first", type=int, default=0, help="leave-one-out of N variants")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    if a.driver_jit:
        _driver_jit()
    import torch
    from engine import TileQwen3, hbm_bytes_per_token
    from generate import copy_bandwidth
    from model import Qwen3Config, random_weights

    from tilelang.runtime import cuda_pdl

    bw = copy_bandwidth()
    cfg = Qwen3Config.load(a.model if a.model in ("tiny", "small") else f"qwen3-{a.model}")
    contexts = [int(c) for c in a.contexts.split(",")]
    variants = json.loads(a.variants)
    t0 = time.perf_counter()
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(cfg, w, max_seq=max(contexts) + 64, backend="torch", graph_api="torch")
    base = eng.plan
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    jit = "driver JIT" if a.driver_jit else "nvJitLink"
    print(f"{torch.cuda.get_device_name()} copy bw {bw / 1e12:.2f} TB/s; {a.model}; cubins: {jit}; "
          f"engine ready in {time.perf_counter() - t0:.1f} s", flush=True)  # fmt: skip
    rows = []
    for ctx in contexts:
        first: list[int] | None = None
        roof = bw / hbm_bytes_per_token(cfg, ctx)
        for i, v in enumerate(variants):
            t1 = time.perf_counter()
            n_pdl, n_early = cuda_pdl.LAUNCHES, cuda_pdl.EARLY
            try:
                eng.replan(_variant_plan(base, v, sms))
                ms, toks = _step_ms(eng, ctx, a.rounds, a.reps)
                att = _attention_us(eng, ctx)
            except Exception as e:  # the other variants still count
                print(f"ctx {ctx} variant {v}: failed: {e!r}", flush=True)
                continue
            first = toks if first is None else first
            med = statistics.median(ms)
            row = {"ctx": ctx, "variant": v, "ms": ms, "tok_s": 1e3 / med, "roofline": roof,
                   "attn_us": att, "same_tokens": toks == first, "tokens": toks, "jit": jit,
                   "pdl_launches": cuda_pdl.LAUNCHES - n_pdl, "early_launches": cuda_pdl.EARLY - n_early}  # fmt: skip
            rows.append(row)
            print(f"ctx {ctx:6d} {json.dumps(v):58s} {1e3 / med:7.1f} tok/s "
                  f"({med:.3f} ms; rounds {' '.join(f'{x:.3f}' for x in ms)}) "
                  f"{1e3 / med / roof:6.1%} of {roof:.0f}; attn+merge {att:5.1f} us/layer; "
                  f"same tokens {toks == first}; PDL launches {cuda_pdl.LAUNCHES - n_pdl} "
                  f"({cuda_pdl.EARLY - n_early} with early loads); "
                  f"{time.perf_counter() - t1:.1f} s", flush=True)  # fmt: skip
            if (a.profile and i == 0) or i < a.profile_first:
                from decode import _profile_step

                print(f"profile of variant {i} {json.dumps(v)}:", flush=True)
                eng.replan(_variant_plan(base, v, sms))
                eng.be.write(eng.pos, [ctx])
                _profile_step(eng, ctx, Path(a.out) / f"v{i}" if a.out else None)
            if i < a.marginal_first:
                from decode import _marginal_step

                print(f"leave-one-out of variant {i} {json.dumps(v)}:", flush=True)
                eng.replan(_variant_plan(base, v, sms))
                _marginal_step(eng, ctx, Path(a.out) / f"v{i}" if a.out else None)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        tag = "driver" if a.driver_jit else "nvjitlink"
        ctxs = a.contexts.replace(",", "_")
        (out / f"ab_{a.model}_{ctxs}_{tag}.json").write_text(
            json.dumps({"bandwidth": bw, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
