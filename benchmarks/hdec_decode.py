"""Issue 15's decode rows, the default against the one-launch fold with its merge in the warps (hdec), in one process.

Rows (bf16, 32 query / 8 KV heads, D = 128, each a CUDA graph, `attention.py`'s `time_ms`, median of REPS): B=1 and
B=8 at 8k and 32k (`ROWS`). In each of ROUNDS (3) interleaved rounds, for each row, in this order:
- `pair`: the default as `attention.py` times it (the example's `decode_plan` and `split_kernel`: `decode_split_tc`
  where the step's K and V fit in L2, else std's FMA `decode_split`; `decode_combine` on PDL "late");
- `tc pair`: `decode_split_tc` + `decode_combine` on the same plan, where the default split is the FMA one;
- `fold`, `fold aw`: benchmarks/decode_fold.tile's `decode_fused_tcw` on the tc plan (BN, splits), AW = 0 (the
  head's last share to finish merges: `atom.acq_rel`) and AW = 1 (the head's last share waits for the others'
  release adds): one launch, the merge run by all 256 threads once the warp roles end
  (`TILEC_ATTN_LAST_BLOCK=join`, which this script sets: the switch is read as a kernel is lowered);
- `sdpa`: `F.scaled_dot_product_attention(q, k, v, enable_gqa=True)` in a graph.
Each in % of the copy bandwidth measured in the same process (`attention.copy_bandwidth`: a 2 GiB device copy).
Then (SWEEP=1, the default) B=1 8k's `fold aw` at 8, 12, 16, 24 and 32 shares and at 16 with rings of 2 and 3
stages, and (TRACE=1, the default) traced block by block (`trace_fold`), told 8,192 and 1 positions.
Every output is checked against SDPA computed in f32 (max |x - ref| / max |ref| < 1e-2, as attention.py), and the
folds' outputs also for a cache_len inside a key block (8000 of 8192, B=1 8k's plan).

    python3 benchmarks/hdec_decode.py           # the GPU (REPS, ROUNDS, TRACE, OUT); writes $OUT/hdec_decode.json
    python3 benchmarks/hdec_decode.py --cpu     # the script itself on the interpreter: tiny shapes, no timing
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TILEC_ATTN_LAST_BLOCK", "join")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

import tilelang  # noqa: E402

A = torch = None  # benchmarks/attention.py (torch, the example's plan) and torch: imported by `main` on the GPU
ROWS = ((1, 8192), (1, 32768), (8, 8192), (8, 32768))
HQ, HKV, D, GRP = 32, 8, 128, 4
# B=1 8k's (shares, ring stages): 64 CTAs of 16 key blocks .. 256 (two waves) of 4; the plan's 16 with 2 and 3 stages
SWEEP = ((8, 4), (12, 4), (16, 4), (24, 4), (32, 4), (16, 2), (16, 3))
FOLD = None


def fold_module():  # type: ignore[no-untyped-def]
    global FOLD
    if FOLD is None:
        FOLD = tilelang.load(str(ROOT / "benchmarks" / "decode_fold.tile"))
    return FOLD


def inputs(batch: int, ctx: int, dev: str, dt):  # type: ignore[no-untyped-def]
    g = torch.Generator(device=dev).manual_seed(ctx + batch)  # bench_decode's inputs
    q = torch.randn(batch, HQ, 1, D, device=dev, dtype=dt, generator=g)
    k = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    v = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    return q, k, v


def fold(batch: int, ctx: int, reps: int, dev: str, plan: tuple[int, int], aw: int, clen: int | None = None,
         dtype: str = "bf16", check: bool = True, st: int = 4) -> dict:  # (on the GPU: torch)
    """`decode_fused_tcw` (AW = `aw`, a ring of `st` stages) on plan (BN, splits) told `clen` positions (default
    all): its graph's time and (`check`) its output against SDPA in f32 over those positions."""
    bn, splits = plan
    clen = ctx if clen is None else clen
    q, k, v = inputs(batch, ctx, dev, A.DT[dtype])
    rows = batch * HKV
    o_part = torch.empty(rows, GRP, splits * D, device=dev)
    lse_part = torch.empty(rows, GRP, splits, device=dev)
    o = torch.empty(batch, HQ, 1, D, device=dev, dtype=A.DT[dtype])
    kern = fold_module().decode_fused_tcw[dtype, GRP, bn, D, A.combine_ns(splits), aw, st]

    def step():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o_part, [1, 64, D]), tilelang.partition(lse_part, [1, 64, 1]),
                    tilelang.partition(o.view(rows, GRP, D), [1, GRP, D]), q.view(rows, GRP, D),
                    k.view(rows, ctx, D), v.view(rows, ctx, D), clen, D**-0.5).launch()

    out = {"ms": A.time_ms(A.graph_of(step), reps, dev) if reps else float("nan")}
    if check:
        o.fill_(float("nan"))
        A.fn_wait(step())
        out["err"] = A.rel_err(o, A.ref_f32(q, k[:, :, :clen], v[:, :, :clen], False))
    return out


def trace_fold(dev: str, replays: int = 20) -> dict:
    """B=1 8k's `fold aw` (and told 1 position: the fold's floor), traced (`TILEC_TRACE=blocks`) and replayed back
    to back as a graph (`decode_timeline._recorded`): per replay medians (us) of the period, the ramp, the block
    times (min / median / max: the max is a head's waiter, which merges), the first block's end, the span and the
    tail (last end - first end), and the gap to the next replay (the graph's own launch); then the same with
    `TILEC_TRACE_MARK=wait1` (a kernel compiled with it: its thread 0's first mbarrier wait's return, Q and the first
    K/V stage in, `s_mark_*` from the block's start): the split's chain before its first tile, told apart."""
    import decode_timeline as T

    from tilelang.runtime import trace

    global FOLD
    out: dict = {}
    mark0 = os.environ.pop("TILEC_TRACE_MARK", None)
    trace.set_trace(True)
    try:
        plan = A.decode_plan(HKV, GRP, 8192, D, torch.cuda.get_device_properties(0).multi_processor_count)[:2]
        q, k, v = inputs(1, 8192, dev, torch.bfloat16)
        o_part = torch.empty(HKV, GRP, plan[1] * D, device=dev)
        lse_part = torch.empty(HKV, GRP, plan[1], device=dev)
        o = torch.empty(1, HQ, 1, D, device=dev, dtype=torch.bfloat16)
        for mark in ("", "wait1"):
            if mark:
                os.environ["TILEC_TRACE_MARK"] = mark
            FOLD = None  # a module loaded under the settings: its kernels compile traced (and marked)
            kern = fold_module().decode_fused_tcw["bf16", GRP, plan[0], D, A.combine_ns(plan[1]), 1, 4]
            for told in (8192, 1):
                def step(told=told, kern=kern):  # type: ignore[no-untyped-def]
                    return kern(tilelang.partition(o_part, [1, 64, D]), tilelang.partition(lse_part, [1, 64, 1]),
                                tilelang.partition(o.view(HKV, GRP, D), [1, GRP, D]), q.view(HKV, GRP, D),
                                k.view(HKV, 8192, D), v.view(HKV, 8192, D), told, D**-0.5).launch()

                med, _, ok = T._recorded(A.graph_of(step), replays, False)
                out[f"told {told}{' mark ' + mark if mark else ''}"] = \
                    {key: round(val, 3) for key, val in med.items()} | {"launches_ok": ok}
    finally:
        trace.set_trace(False)
        os.environ.pop("TILEC_TRACE_MARK", None)
        if mark0 is not None:
            os.environ["TILEC_TRACE_MARK"] = mark0
        FOLD = None
    return out


def cpu_smoke() -> int:
    """The folds on the interpreter (NumPy, no torch: f16) at a tiny shape (1 x 8 KV heads, 256 positions, 3
    shares of BN 64), told a length inside a key block, 1, and all, against attention in f64."""
    import numpy as np

    bad = 0
    rng = np.random.default_rng(0)
    rows, smax, splits, bn = HKV, 256, 3, 64
    q = rng.standard_normal((rows, GRP, D)).astype(np.float16)
    k, v = (rng.standard_normal((rows, smax, D)).astype(np.float16) for _ in range(2))
    for clen in (150, 1, 256):
        s = np.einsum("hgd,hkd->hgk", q.astype(np.float64), k[:, :clen].astype(np.float64)) * D**-0.5
        p = np.exp(s - s.max(-1, keepdims=True))
        want = np.einsum("hgk,hkd->hgd", p / p.sum(-1, keepdims=True), v[:, :clen].astype(np.float64))
        for aw in (0, 1):
            o_part = np.full((rows, GRP, splits * D), np.nan, np.float32)
            lse = np.full((rows, GRP, splits), np.nan, np.float32)
            o = np.full((rows, GRP, D), np.nan, np.float16)
            fold_module().decode_fused_tcw["f16", GRP, bn, D, 4, aw, 4](
                tilelang.partition(o_part, [1, 64, D]), tilelang.partition(lse, [1, 64, 1]),
                tilelang.partition(o, [1, GRP, D]), q, k, v, clen, D**-0.5).sync()
            err = float(np.abs(o.astype(np.float64) - want).max() / np.abs(want).max())
            bad += not err < 1e-2
            print(f"cpu: fold aw {aw}, {rows} KV heads, {smax} positions told {clen}, {splits} shares: "
                  f"err {err:.2e} {'ok' if err < 1e-2 else 'BAD'}")
    return 1 if bad else 0


def main() -> int:
    if "--cpu" in sys.argv:
        return cpu_smoke()
    global A, torch
    import attention as A

    torch = A.torch
    if not torch.cuda.is_available():
        print("hdec_decode: needs a CUDA device (or --cpu)", file=sys.stderr)
        return 2
    dev, reps, rounds = "cuda", int(os.environ.get("REPS", "10")), int(os.environ.get("ROUNDS", "3"))
    bw = A.copy_bandwidth(dev)
    print(f"card {torch.cuda.get_device_name(0)}, copy {bw:.2f} TB/s, TILEC_ATTN_LAST_BLOCK="
          f"{os.environ.get('TILEC_ATTN_LAST_BLOCK')}", flush=True)
    got: dict[str, list[float]] = {}
    info: dict[str, dict] = {}
    for r in range(rounds):
        for batch, ctx in ROWS:
            name = f"B={batch} {ctx // 1024}k"
            base = A.bench_decode(batch, ctx, reps, dev, bw, sdpa=True)
            tc = base if base["split"] == "tc" else A.bench_decode(batch, ctx, reps, dev, bw, split="tc", sdpa=False,
                                                                   plan=(base["BN"], base["splits"], base["DC"]))
            plan = (tc["BN"], tc["splits"])
            f0, f1 = (fold(batch, ctx, reps, dev, plan, aw, check=r == 0) for aw in (0, 1))
            vals = {"pair": base["pair_ms"], "tc pair": tc["pair_ms"], "fold": f0["ms"], "fold aw": f1["ms"],
                    "sdpa": base["sdpa_graph_ms"]}
            if r == 0:
                short = [fold(batch, ctx, 0, dev, plan, aw, ctx - 192)["err"] for aw in (0, 1)] if ctx == 8192 \
                    and batch == 1 else []
                info[name] = {"plan": plan, "pair_split": base["split"], "short_errs": short,
                              "err": {"pair": base["err"], "tc pair": tc["err"], "fold": f0["err"],
                                      "fold aw": f1["err"]}}
                print(f"{name}: tc plan (BN, splits) {plan}, default split {base['split']}, errors vs SDPA f32 "
                      + ", ".join(f"{k} {v:.1e}" for k, v in info[name]["err"].items())
                      + (f"; told {ctx - 192}: fold {short[0]:.1e}, fold aw {short[1]:.1e}" if short else ""),
                      flush=True)
            for key, ms in vals.items():
                got.setdefault(f"{name} {key}", []).append(ms * 1e3)
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in vals.items()) + " us",
                  flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    print("| row | form | us (median) | range | % of copy | / default |")
    print("| --- | --- | --- | --- | --- | --- |")
    for batch, ctx in ROWS:
        name = f"B={batch} {ctx // 1024}k"
        nbytes = 2 * batch * HKV * ctx * D * 2
        for form in ("pair", "tc pair", "fold", "fold aw", "sdpa"):
            v = med[f"{name} {form}"]
            pct = nbytes / (v * 1e-6) / (bw * 1e12) * 100
            print(f"| {name} | {form} | {v:.2f} | {min(got[f'{name} {form}']):.2f}-{max(got[f'{name} {form}']):.2f} "
                  f"| {pct:.1f} % | {med[f'{name} pair'] / v:.3f}x |")
    errs = [e for i in info.values() for e in [*i["err"].values(), *i["short_errs"]]]
    print(f"errors vs SDPA in f32: max {max(errs):.1e} ({'ok' if max(errs) < 1e-2 else 'BAD'})", flush=True)
    out = Path(os.environ.get("OUT", "/tmp/out")) / "hdec_decode.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {"copy_tbs": bw, "card": torch.cuda.get_device_name(0), "runs": got, "median": med, "rows": info}
    out.write_text(json.dumps(result, indent=1))
    # the probes after the table: a failure leaves it standing
    sweep: dict[str, list[float]] = {}
    if os.environ.get("SWEEP", "1") == "1":  # B=1 8k's `fold aw` by shares (the plan's 16: one wave of 128 CTAs)
        try:
            for _ in range(2):
                for splits, st in SWEEP:
                    ms = fold(1, 8192, reps, dev, (64, splits), 1, check=False, st=st)["ms"]
                    sweep.setdefault(f"{splits} shares, {st} stages", []).append(ms * 1e3)
            nbytes = 2 * HKV * 8192 * D * 2
            for k, v in sweep.items():
                print(f"fold aw at B=1 8k, {k} (BN 64): {min(v):.2f} us (min of 2 alternations), "
                      f"{nbytes / (min(v) * 1e-6) / (bw * 1e12) * 100:.1f} % of copy", flush=True)
        except Exception as e:
            print(f"fold aw sweep: failed: {type(e).__name__}: {e}", flush=True)
    traced = {}
    if os.environ.get("TRACE", "1") == "1":
        try:
            traced = trace_fold(dev)
            for told, t in traced.items():
                print(f"traced fold aw, B=1 8k {told} (us, medians of replays): " + ", ".join(
                    f"{k} {v}" for k, v in t.items()), flush=True)
        except Exception as e:
            print(f"traced fold: failed: {type(e).__name__}: {e}", flush=True)
    out.write_text(json.dumps(result | {"sweep": sweep, "traced": traced}, indent=1))
    return 0 if max(errs) < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
