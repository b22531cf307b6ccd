"""Decode at batch 1, context 8,192 (bf16, 32 query / 8 KV heads, D = 128; issue 15's B=1 8k row), hattn6:
what folding the merge into the split would give, and what "SDPA" is in `benchmarks/attention.py`'s rows.

In one process, ROUNDS interleaved rounds of (each a CUDA graph, `attention.py`'s `time_ms`, median of REPS):
- `tc pair`: the default pair (std's `decode_split_tc` + `decode_combine`, the merge PDL "late"), and its split alone;
- `tc pair ldg`: the same with `TILEC_LDG_EARLY=1` (h15d, built 2026-12-04, never measured: `decode_combine`'s
  partials' loads issued before the barrier of its log-sum-exps' exchange, one L2 round trip a merge block less;
  the process recompiles a kernel when the setting changes);
(`TC_ONLY=1`: the tc pair alone, for a second process under another setting the runtime does not key its compiled
variants by, e.g. `TILEC_ATTN_FASTDIV=0`: the tc split's persistent walk without its fast divisions, whose set-up
(a 31-compare bit length and a 64-bit division, `__cuda_sm20_div_u64`, ~190 of the ~290 SASS instructions before
the warp roles split) every CTA runs before its producer's first TMA, for the one tile a CTA has at B=1 8k
(`attention_tiles.fast_divisor`; at D = 128 "auto" turns it on).)
- `fma pair`: std's FMA split `decode_split` + the merge on the same plan (BN 64, 16 shares);
- `fma fold`: std's `decode_fused` (the merge by each head's last share, `last_block(1)`, atomic arrival);
- `fma fold aw`: attention_variants.tile's `decode_fused_aw`, the same with `arrive_wait = 1` (the head's last
  share polls the head's counter; the others leave after a release add).
Then SDPA (`F.scaled_dot_product_attention(q, k, v, enable_gqa=True)`, q [1, 32, 1, 128], k and v [1, 8, 8192, 128])
as `attention.py` times it (eager between events with a sleeping kernel ahead, and in a graph), and under each
backend forced (`torch.nn.attention.sdpa_kernel`), so the rows' "SDPA" is named.

The fold's worth on the tensor-core pair, were the pipeline to host it: tc pair - (fma pair - fma fold aw).
Prints one line a measurement and a summary; writes $OUT/hattn6_decode.json. Needs a CUDA device and torch.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import attention as A  # noqa: E402  (benchmarks/attention.py: torch, tilelang, the example's plan)

torch, F, tilelang = A.torch, A.F, A.tilelang


def fold_aw(reps: int, dev: str, plan: tuple[int, int, int]) -> dict:
    """`decode_fused_aw` on the plan: its graph's time and its output against SDPA in f32."""
    hq, hkv, d, ctx, grp = 32, 8, 128, 8192, 4
    bn, splits, _ = plan
    g = torch.Generator(device=dev).manual_seed(ctx + 1)  # bench_decode's inputs for B=1
    dt = torch.bfloat16
    q = torch.randn(1, hq, 1, d, device=dev, dtype=dt, generator=g)
    k = torch.randn(1, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    v = torch.randn(1, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    o_part = torch.empty(hkv, splits * grp, d, device=dev)
    lse_part = torch.empty(hkv, splits * grp, device=dev)
    o = torch.empty(1, hq, 1, d, device=dev, dtype=dt)
    kern = A.variants().decode_fused_aw["bf16", grp, bn, d, A.combine_ns(splits), A.fused_nc(splits)]

    def step():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]),
                    tilelang.partition(o.view(-1, grp, d), [1, grp, d]), q.view(hkv, grp, d),
                    k.view(hkv, ctx, d), v.view(hkv, ctx, d), ctx, d**-0.5).launch()

    out = {"aw_graph_ms": A.time_ms(A.graph_of(step), reps, dev)}
    o.fill_(float("nan"))
    A.fn_wait(step())
    out["aw_err"] = A.rel_err(o, A.ref_f32(q, k, v, False))
    return out


def sdpa_backends(reps: int, dev: str) -> dict:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    g = torch.Generator(device=dev).manual_seed(8193)
    q = torch.randn(1, 32, 1, 128, device=dev, dtype=torch.bfloat16, generator=g)
    k = torch.randn(1, 8, 8192, 128, device=dev, dtype=torch.bfloat16, generator=g)
    v = torch.randn(1, 8, 8192, 128, device=dev, dtype=torch.bfloat16, generator=g)
    out: dict = {"torch": torch.__version__}
    for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
        be = getattr(SDPBackend, name, None)
        if be is None:
            continue
        try:
            with sdpa_kernel(be):
                fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
                eager = A.time_ms(fn, reps, dev)
                graph = A.time_ms(A.graph_of(fn), reps, dev)
            out[name] = {"eager_us": eager * 1e3, "graph_us": graph * 1e3}
        except Exception as e:  # a backend that does not take this call (GQA, shapes): say so
            out[name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"}
    return out


def main() -> int:
    if not torch.cuda.is_available():
        print("hattn6_decode: needs a CUDA device", file=sys.stderr)
        return 2
    dev, reps, rounds = "cuda", int(os.environ.get("REPS", "30")), int(os.environ.get("ROUNDS", "3"))
    tc_only = os.environ.get("TC_ONLY", "0") == "1"
    bw = A.copy_bandwidth(dev)
    os.environ.pop("TILEC_LDG_EARLY", None)
    print(f"card {torch.cuda.get_device_name(0)}, copy {bw:.2f} TB/s; TC_ONLY {int(tc_only)}, TILEC_ATTN_FASTDIV="
          f"{os.environ.get('TILEC_ATTN_FASTDIV', '')!r}", flush=True)
    A.bench_decode(1, 8192, 2, dev, bw)  # once untimed (attention.py's first decode row)
    got: dict[str, list[float]] = {}
    errs: dict[str, float] = {}
    fixed: dict[str, float] = {}
    for r in range(rounds):
        tc = A.bench_decode(1, 8192, reps, dev, bw, sdpa=(r == 0), fixed=(r == 0))
        if r == 0:  # the model's terms (`attention.py`'s decode_fixed): what the merge adds, the pair's floor
            fixed = {k[:-3]: round(tc[k] * 1e3, 2) for k in ("split_graph_ms", "split1_graph_ms", "pair1_graph_ms",
                                                              "nop2_graph_ms", "pair_pdl_ms") if k in tc}
            print(f"tc fixed terms (us, graphs): {fixed}", flush=True)
        row = {"tc pair": tc["pair_ms"]}
        if r == 0:
            row["sdpa eager"], row["sdpa graph"] = tc["sdpa_ms"], tc["sdpa_graph_ms"]
            errs = {"tc": tc["err"]}
        if not tc_only:
            os.environ["TILEC_LDG_EARLY"] = "1"
            try:
                ldg = A.bench_decode(1, 8192, reps, dev, bw, sdpa=False)
            finally:
                os.environ.pop("TILEC_LDG_EARLY", None)
            fma = A.bench_decode(1, 8192, reps, dev, bw, split="fma", fused=True, sdpa=False)
            plan = (fma["BN"], fma["splits"], fma["DC"])
            aw = fold_aw(reps, dev, plan)
            row.update({"tc pair ldg": ldg["pair_ms"], "fma pair": fma["pair_ms"], "fma fold": fma["fused_graph_ms"],
                        "fma fold aw": aw["aw_graph_ms"]})
            if r == 0:
                errs.update({"tc ldg": ldg["err"], "fma": fma["err"], "fold": fma["fused_err"], "fold aw": aw["aw_err"]})
        if r == 0:
            print(f"plan tc {tc['BN']}/{tc['splits']}/{tc['DC']} ({tc['split']}); errors vs SDPA f32 {errs}", flush=True)
        for key, ms in row.items():
            got.setdefault(key, []).append(ms * 1e3)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in row.items()) + " us", flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    nbytes = 2 * 8 * 8192 * 128 * 2
    print("| B=1 8k, graph | us (median of rounds) | % of copy | range |")
    print("| --- | --- | --- | --- |")
    for k, v in med.items():
        print(f"| {k} | {v:.2f} | {nbytes / (v * 1e-6) / (bw * 1e12) * 100:.0f} % | "
              f"{min(got[k]):.2f}-{max(got[k]):.2f} |")
    if not tc_only:
        fold_gain = med["fma pair"] - med["fma fold aw"]
        print(f"fold (aw) against its pair: {fold_gain:+.2f} us; atomic fold against aw: "
              f"{med['fma fold'] - med['fma fold aw']:+.2f} us; a tc fold would read ~{med['tc pair'] - fold_gain:.2f} us")
    out = Path(os.environ.get("OUT", "/tmp/out")) / f"hattn6_decode{'_tc' if tc_only else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"copy_tbs": bw, "runs": got, "median": med, "errors": errs, "tc_fixed_us": fixed}
    out.write_text(json.dumps(result, indent=1))
    if not tc_only:  # last: a backend that fails inside a graph capture should cost nothing measured above
        result["sdpa"] = sdpa_backends(reps, dev)
        for k, v in result["sdpa"].items():
            print(f"sdpa {k}: {v}", flush=True)
        out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
