"""Decode with the tensor-core split's merge folded in (hattn7, issue 15), against the pair, in one process.

Rows (bf16, 32 query / 8 KV heads, D = 128, each a CUDA graph, `attention.py`'s `time_ms`, median of REPS):
B=1 8k, B=1 32k, B=8 8k (`ROWS`). In each of ROUNDS interleaved rounds, for each row:
- `pair`: the default pair as `attention.py` runs it (the example's `split_kernel`: `decode_split_tc` where the
  step's K and V fit in L2, B=1 8k; else std's FMA `decode_split`), the merge `decode_combine` PDL "late";
- `tc pair`: `decode_split_tc` + `decode_combine` on the same plan (BN, splits) whatever the row;
- `tc fold`: attention_variants' `decode_fused_tcj` on that plan (the head's last share merges, `last_block(2)`,
  NC = min(16, NS) shares a step in std `decode_fused`'s form): one launch. Needs `TILEC_ATTN_LAST_BLOCK=join` (this script sets it
  if unset: the region run once the warp roles end, by all 256 threads; else the kernel takes the generic path).
`PREFILL=1` adds the D = 128 S = 4,096 f16 full prefill row (16k tokens; TFLOP/s), the control for switches that
touch the prefill kernel too (`TILEC_ATTN_DIVS_IN_ROLE`). The runtime does not key its compiled variants by the
switches read when a kernel is lowered (`TILEC_MBAR_ONE_INIT`, `TILEC_ATTN_DIVS_IN_ROLE`): an arm a process
(`benchmarks/hattn7_device.sh` alternates them). Prints one line a round and a table; writes
$OUT/hattn7_decode_<ARM>.json. Needs a CUDA device and torch.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TILEC_ATTN_LAST_BLOCK", "join")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import attention as A  # noqa: E402  (benchmarks/attention.py: torch, tilelang, the example's plan)

torch, F, tilelang = A.torch, A.F, A.tilelang

ROWS = ((1, 8192), (1, 32768), (8, 8192))


def fold(batch: int, ctx: int, reps: int, dev: str, plan: tuple[int, int]) -> dict:
    """`decode_fused_tcj` on plan (BN, splits): its graph's time and its output against SDPA in f32."""
    hq, hkv, d, grp = 32, 8, 128, 4
    bn, splits = plan
    g = torch.Generator(device=dev).manual_seed(ctx + batch)  # bench_decode's inputs
    dt = torch.bfloat16
    q = torch.randn(batch, hq, 1, d, device=dev, dtype=dt, generator=g)
    k = torch.randn(batch, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    v = torch.randn(batch, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    rows = batch * hkv
    o_part = torch.empty(rows, grp, splits * d, device=dev)
    lse_part = torch.empty(rows, grp, splits, device=dev)
    o = torch.empty(batch, hq, 1, d, device=dev, dtype=dt)
    # NC up to 16 (std's decode_fused stops at 8 for its registers; the joined region has the consumers' 240):
    # B=1 8k's 16 shares and B=8 8k's 4 in one step (one round trip, half the steps' barriers), 32k's 32 in two
    kern = A.variants().decode_fused_tcj["bf16", grp, bn, d, A.combine_ns(splits), A.fused_nc(splits, 16)]

    def step():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o_part, [1, 64, d]), tilelang.partition(lse_part, [1, 64, 1]),
                    tilelang.partition(o.view(rows, grp, d), [1, grp, d]), q.view(rows, grp, d),
                    k.view(rows, ctx, d), v.view(rows, ctx, d), ctx, d**-0.5).launch()

    out = {"fold_ms": A.time_ms(A.graph_of(step), reps, dev)}
    o.fill_(float("nan"))
    A.fn_wait(step())
    out["fold_err"] = A.rel_err(o, A.ref_f32(q, k, v, False))
    return out


def main() -> int:
    if not torch.cuda.is_available():
        print("hattn7_decode: needs a CUDA device", file=sys.stderr)
        return 2
    dev, reps, rounds = "cuda", int(os.environ.get("REPS", "20")), int(os.environ.get("ROUNDS", "2"))
    arm = os.environ.get("ARM", "A")
    bw = A.copy_bandwidth(dev)
    switches = {k: os.environ.get(k, "") for k in ("TILEC_ATTN_LAST_BLOCK", "TILEC_MBAR_ONE_INIT",
                                                    "TILEC_ATTN_DIVS_IN_ROLE")}
    print(f"arm {arm}: card {torch.cuda.get_device_name(0)}, copy {bw:.2f} TB/s; {switches}", flush=True)
    got: dict[str, list[float]] = {}
    info: dict[str, dict] = {}
    for r in range(rounds):
        for batch, ctx in ROWS:
            name = f"B={batch} {ctx // 1024}k"
            base = A.bench_decode(batch, ctx, reps, dev, bw, sdpa=(r == 0))
            tc = base if base["split"] == "tc" else A.bench_decode(batch, ctx, reps, dev, bw, split="tc", sdpa=False,
                                                                   plan=(base["BN"], base["splits"], base["DC"]))
            fd = fold(batch, ctx, reps, dev, (tc["BN"], tc["splits"]))
            vals = {"pair": base["pair_ms"], "tc pair": tc["pair_ms"], "tc fold": fd["fold_ms"]}
            if r == 0:
                info[name] = {"plan": (tc["BN"], tc["splits"], tc["DC"]), "pair_split": base["split"],
                              "err": {"pair": base["err"], "tc pair": tc["err"], "tc fold": fd["fold_err"]},
                              "sdpa_graph_us": base.get("sdpa_graph_ms", float("nan")) * 1e3}
                print(f"{name}: plan {info[name]['plan']}, pair split {base['split']}, errors vs SDPA f32 "
                      f"{info[name]['err']}, SDPA graph {info[name]['sdpa_graph_us']:.2f} us", flush=True)
            for key, ms in vals.items():
                got.setdefault(f"{name} {key}", []).append(ms * 1e3)
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in vals.items()) + " us",
                  flush=True)
        if os.environ.get("PREFILL") == "1":
            pf = A.bench_prefill("f16", 128, False, 4096, 16384, reps, dev)
            got.setdefault("prefill f16 D=128 S=4096 TFLOP/s", []).append(pf["tile_tflops"])
            print(f"round {r + 1} prefill f16 D=128 full S=4096: {pf['tile_tflops']:.1f} TFLOP/s "
                  f"(SDPA {pf['sdpa_tflops']:.1f}), err {pf['err']:.2e}", flush=True)
    med = {k: statistics.median(v) for k, v in got.items()}
    print(f"| arm {arm} | median | range | % of copy |")
    print("| --- | --- | --- | --- |")
    for k, v in med.items():
        pct = ""
        if not k.startswith("prefill"):
            batch, ctx = next((b, c) for b, c in ROWS if k.startswith(f"B={b} {c // 1024}k"))
            pct = f"{2 * batch * 8 * ctx * 128 * 2 / (v * 1e-6) / (bw * 1e12) * 100:.0f} %"
        print(f"| {k} | {v:.2f} | {min(got[k]):.2f}-{max(got[k]):.2f} | {pct} |")
    out = Path(os.environ.get("OUT", "/tmp/out")) / f"hattn7_decode_{arm}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"arm": arm, "switches": switches, "copy_tbs": bw, "runs": got, "median": med,
                               "rows": info}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
