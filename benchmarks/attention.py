"""Attention forward and decode: `std::attention` against PyTorch's
`scaled_dot_product_attention` (and `flash_attn` when it is installed, and a
Triton flash-attention forward, `triton_attention.py`, when Triton is), in
one run, on PyTorch tensors.

    python benchmarks/attention.py                 # the issue's shapes (GPU)
    python benchmarks/attention.py --quick         # S = 4096 only, fewer repeats
    python benchmarks/attention.py --smoke         # tiny shapes, CPU or GPU: the script itself

Prefill: f16 and bf16, D = 128 (16 heads) and D = 64 (32 heads), causal and
not, S in {1024, 4096, 16384} with batch = 16384 / S (16k tokens per call,
enough blocks to fill the card). TFLOP/s count 4 * B * H * S^2 * D (half of
it when causal). Decode: 32 query heads over 8 KV heads, D = 128, bf16,
context 8192 and 32768, batch 1 and 8; the KV cache read (2 * B * Hkv * ctx
* D * 2 bytes) in TB/s and as a fraction of the card's copy bandwidth
(a device-to-device copy of 2 GiB, measured in the same run).

Every Tile result is checked against SDPA computed in f32 on the same
inputs: `err` is max |tile - ref| / max |ref|, and must stay below 1e-2.
Times are medians of CUDA-event timings of `--reps` runs after warm-ups,
each enqueued behind a GPU sleep so that the events time the GPU work and
not the host's launch path; Tile launches go through the Python API on
PyTorch's stream. Tile's decode time is the sum of its two kernels, timed
each on its own (the combine reads what the split wrote, so the API waits
between them; in a CUDA graph they run back to back); "as a graph" is the
pair launched as `examples/python/torch_attention.py` launches it (on sm_90
the merge with programmatic dependent launch, `decode_plan.merge_pdl`),
beside the plain pair (`pair_plain_ms`).
Writes `attention.json` and `attention.md` to `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tilelang  # noqa: E402

sys.path.insert(0, str(ROOT / "examples" / "python"))
from decode_plan import combine_ns, decode_plan, fused_nc, merge_pdl, split_kernel  # noqa: E402  (the example's launch rule is what users get)
from prefill_plan import prefill_blocks  # noqa: E402

ATTN = tilelang.compile("use std::attention::*;\n")
ELEM = {torch.float16: "f16", torch.bfloat16: "bf16"}
DT = {"f16": torch.float16, "bf16": torch.bfloat16}

try:  # optional peer
    from flash_attn import flash_attn_func, flash_attn_with_kvcache  # type: ignore[import-not-found]
except Exception:
    flash_attn_func = flash_attn_with_kvcache = None

try:  # optional peer: a Triton flash-attention forward written as a Triton user would (benchmarks/triton_attention.py)
    if os.environ.get("ATTN_TRITON", "1") == "0":  # (its autotuning costs ~1 min of compiles a run)
        raise ImportError("ATTN_TRITON=0")
    import triton_attention  # noqa: E402
except Exception:
    triton_attention = None


def blocks(d: int, dev: str) -> tuple[int, int]:
    """(BM, BN) for head dim d."""
    if dev == "cpu":
        return 32, 32
    env = os.environ.get("ATTN_BLOCKS")  # e.g. 128x128: try other blocks
    if env:
        bm, bn = (int(x) for x in env.split("x"))
        return bm, bn
    major, minor = torch.cuda.get_device_capability()
    return prefill_blocks(d, 10 * major + minor)  # the example's launch rule (TILEC_PREFILL_WG3: 192 x 128 at D = 64)


def time_ms(fn, reps: int, dev: str, warmup: int = 2) -> float:  # type: ignore[no-untyped-def]
    """Median milliseconds of `fn()`; `fn` may return a handle to wait on
    after the end event (so consecutive launches are not host-serialised)."""
    if dev == "cpu":
        import time

        fn_wait(fn())
        ts = []
        for _ in range(max(1, reps // 4)):
            t = time.perf_counter()
            fn_wait(fn())
            ts.append((time.perf_counter() - t) * 1e3)
        return statistics.median(ts)
    for _ in range(warmup):
        fn_wait(fn())
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # keep the GPU busy while the host enqueues, so the events time the
        # kernel and not the launch path: ~5 ms, longer than any launch call
        # (a prefill launch took 0.55-1.1 ms of host time on the general path,
        # call 17 of 2026-12-06, against the ~1 ms of the earlier 2,000,000)
        torch.cuda._sleep(10_000_000)
        a.record()
        h = fn()
        b.record()
        fn_wait(h)
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def fn_wait(h) -> None:  # type: ignore[no-untyped-def]
    if isinstance(h, list):
        for x in h:
            fn_wait(x)
    elif h is not None and hasattr(h, "wait"):
        h.wait()


def ref_f32(q, k, v, causal: bool):  # type: ignore[no-untyped-def]
    """SDPA in f32 over [B, H, S, D] (GQA by repetition), bottom-right causal."""
    g = q.shape[1] // k.shape[1]
    q, k, v = q.float(), k.float().repeat_interleave(g, 1), v.float().repeat_interleave(g, 1)
    mask = None
    if causal and q.shape[2] != k.shape[2]:
        sq, sk = q.shape[2], k.shape[2]
        mask = torch.arange(sk, device=q.device)[None] <= torch.arange(sq, device=q.device)[:, None] + sk - sq
    out = []
    for i in range(q.shape[0]):  # one batch at a time: f32 scores of 16k x 16k stay in memory
        out.append(F.scaled_dot_product_attention(q[i:i + 1], k[i:i + 1], v[i:i + 1], attn_mask=mask,
                                                  is_causal=causal and mask is None))
    return torch.cat(out)


def rel_err(got, want) -> float:  # type: ignore[no-untyped-def]
    return float((got.float() - want).abs().max() / want.abs().max())


def bench_prefill(dtype: str, d: int, causal: bool, s: int, tokens: int, reps: int, dev: str) -> dict:
    h = 2048 // d
    b = max(1, tokens // s)
    dt = DT[dtype]
    g = torch.Generator(device=dev).manual_seed(s + d)
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=dt, generator=g) for _ in range(3))
    if os.environ.get("ATTN_DATA") == "bf16grid":  # the same values in both dtypes: bf16's 8 significant bits
        q, k, v = (t.to(torch.bfloat16).to(dt) for t in (q, k, v))  # (whether f16's speed depends on the data)
    bm, bn = blocks(d, dev)
    # ATTN_PREFILL=NAME: `flash_attention_NAME` of attention_variants.tile instead of std's
    variant = os.environ.get("ATTN_PREFILL")
    kern = (getattr(variants(), f"flash_attention_{variant}") if variant else ATTN.flash_attention)[dtype, bm, bn, d]
    scale = d**-0.5
    q3, k3, v3 = (t.view(b * h, s, d) for t in (q, k, v))
    o = torch.empty_like(q)

    def tile():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o.view(b * h, s, d), [1, bm, d]), q3, k3, v3, scale, causal).launch()

    fl = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
    row = {"kind": "prefill", "dtype": dtype, "D": d, "causal": causal, "S": s, "B": b, "H": h}
    t_tile = time_ms(tile, reps, dev)
    t_sdpa = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps, dev)
    row["tile_ms"], row["sdpa_ms"] = t_tile, t_sdpa
    row["tile_tflops"] = fl / t_tile / 1e9
    row["sdpa_tflops"] = fl / t_sdpa / 1e9
    if flash_attn_func is not None and dev != "cpu":
        qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        t_fa = time_ms(lambda: flash_attn_func(qt, kt, vt, causal=causal), reps, dev)
        row["fa_ms"], row["fa_tflops"] = t_fa, fl / t_fa / 1e9
    if triton_attention is not None and dev != "cpu":
        ot = torch.empty_like(q)
        triton_attention.attention(q, k, v, causal, ot)  # (tunes its configurations once per shape)
        t_tr = time_ms(lambda: triton_attention.attention(q, k, v, causal, ot), reps, dev)
        row["triton_ms"], row["triton_tflops"] = t_tr, fl / t_tr / 1e9
        row["triton_err"] = rel_err(ot, ref_f32(q, k, v, causal))
    fn_wait(tile())
    row["err"] = rel_err(o, ref_f32(q, k, v, causal))
    return row


def bench_decode(batch: int, ctx: int, reps: int, dev: str, bandwidth: float,
                 plan: tuple[int, int, int] | None = None, variant: str = "std", sdpa: bool = True,
                 fixed: bool = False, fused: bool = False, split: str | None = None) -> dict:
    """One decoding step of 32 query heads over 8 KV heads, D = 128 (bf16 on
    the GPU): Tile's flash decoding (split + combine, `plan` = (BN, splits,
    DC), by default the example's `decode_plan`) against SDPA with GQA.
    `variant`: "std" is std::attention's split, `decode_split_tc` or
    `decode_split` as the example's `split_kernel` chooses (`split`: "tc" or
    "fma" forces one), another name a kernel `decode_split_<name>` of
    `attention_variants.tile`.

    Times: each kernel on its own (`split_ms`, `combine_ms`; `tile_ms` is
    their sum, the eager path: the API waits for the split before the
    combine reads its output), and on the GPU the pair as one CUDA graph
    (`pair_ms`: PyTorch's `torch.cuda.graph` around the two calls, how a
    decode loop runs them; SDPA in a graph too, `sdpa_graph_ms`). `fixed`
    adds the fixed-cost probes (`decode_fixed`); `fused`, the one-launch
    `decode_fused` on the same plan (`bench_fused`)."""
    hq, hkv, d = 32, 8, 128
    dtype = "bf16" if dev != "cpu" else "f16"  # the CPU interpreter cannot view torch.bfloat16
    grp = hq // hkv
    dt = DT[dtype]
    g = torch.Generator(device=dev).manual_seed(ctx + batch)
    q = torch.randn(batch, hq, 1, d, device=dev, dtype=dt, generator=g)
    k = torch.randn(batch, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    v = torch.randn(batch, hkv, ctx, d, device=dev, dtype=dt, generator=g)
    props = torch.cuda.get_device_properties(0) if dev != "cpu" else None
    sms = props.multi_processor_count if props else 4
    bn, splits, dc = plan or decode_plan(batch * hkv, grp, ctx, d, sms, bn=None if dev != "cpu" else 16)
    if variant != "std":
        kind = "fma"
    else:
        kind = split or (split_kernel(batch * hkv, grp, ctx, d, 10 * props.major + props.minor, props.L2_cache_size)
                         if props else "fma")
    o_part = torch.empty(batch * hkv, splits * grp, d, device=dev)
    lse_part = torch.empty(batch * hkv, splits * grp, device=dev)
    o = torch.empty(batch, hq, 1, d, device=dev, dtype=dt)
    q3 = q.view(batch * hkv, grp, d)
    k3, v3 = k.view(batch * hkv, ctx, d), v.view(batch * hkv, ctx, d)
    scale = d**-0.5

    def kernels(mod):  # type: ignore[no-untyped-def]
        # "std": std::attention's two kernels (the split `kind`); "NAME":
        # decode_split_NAME of attention_variants.tile and std's merge; "c:NAME": std's split and
        # decode_combine_NAME
        split_v, _, comb_v = variant.partition("c:")
        comb = getattr(variants(), f"decode_combine_{comb_v}") if comb_v else mod.decode_combine
        if kind == "tc":
            return mod.decode_split_tc[dtype, bn, d], comb[dtype, grp, combine_ns(splits), dc]
        split = (mod.decode_split if split_v in ("std", "") else getattr(variants(), f"decode_split_{split_v}"))
        return split[dtype, grp, bn, d], comb[dtype, grp, combine_ns(splits), dc]

    split, comb = kernels(ATTN)

    def split_args(length: int):  # type: ignore[no-untyped-def]
        if kind == "tc":  # one block a (KV head, share): 64-row tiles of [B * Hkv * splits, G, ..]
            return (tilelang.partition(o_part.view(-1, grp, d), [1, 64, d]),
                    tilelang.partition(lse_part.view(-1, grp), [1, 64]), q3, k3, v3, length, scale, splits)
        return tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]), q3, k3, v3, length, scale

    def tile_split(length: int = ctx):  # type: ignore[no-untyped-def]
        return split(*split_args(length)).launch()

    def tile_combine():  # type: ignore[no-untyped-def]
        return comb(tilelang.partition(o.view(batch * hkv, grp, d), [1, grp, dc]), o_part, lse_part).launch()

    nbytes = 2 * batch * hkv * ctx * d * 2
    row = {"kind": "decode", "dtype": dtype, "B": batch, "ctx": ctx, "BN": bn, "splits": splits, "DC": dc,
           "variant": variant, "split": kind}
    # more warm-ups than prefill: a kernel's first calls take the API's checked
    # path, slower than these kernels, which the events would time instead
    row["split_ms"] = time_ms(tile_split, reps, dev, warmup=5)
    row["combine_ms"] = time_ms(tile_combine, reps, dev, warmup=5)
    row["tile_ms"] = row["split_ms"] + row["combine_ms"]
    o_pdl = None
    if dev != "cpu":
        # the pair as the example launches it (`merge_pdl`: on sm_90 the merge with
        # programmatic dependent launch, trigger "late", the split without) and plain
        row["pair_plain_ms"] = time_ms(graph_of(tile_split, tile_combine), reps, dev)
        if merge_pdl(10 * props.major + props.minor):
            from tilelang.runtime import cuda_pdl

            comb_pdl = kernels(pdl_module())[1]
            o_pdl = torch.empty_like(o)

            def combine_pdl():  # type: ignore[no-untyped-def]
                with cuda_pdl.scoped(True, "late"):
                    return comb_pdl(tilelang.partition(o_pdl.view(batch * hkv, grp, d), [1, grp, dc]), o_part,
                                    lse_part).launch()

            row["pair_ms"] = time_ms(graph_of(tile_split, combine_pdl), reps, dev)
            row["pair_form"] = "merge PDL late"
        else:
            row["pair_ms"], row["pair_form"] = row["pair_plain_ms"], "plain"
        row["pair_tbs"] = nbytes / row["pair_ms"] / 1e9
    if sdpa:
        row["sdpa_ms"] = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), reps, dev)
        row["sdpa_tbs"] = nbytes / row["sdpa_ms"] / 1e9
        if dev != "cpu":
            row["sdpa_graph_ms"] = time_ms(
                graph_of(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)), reps, dev)
    if flash_attn_with_kvcache is not None and dev != "cpu" and sdpa:
        qt, kt, vt = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        row["fa_ms"] = time_ms(lambda: flash_attn_with_kvcache(qt, kt, vt), reps, dev)
    row["tile_tbs"] = nbytes / row["tile_ms"] / 1e9
    row["split_tbs"] = nbytes / row["split_ms"] / 1e9
    row["of_copy_bw"] = row["tile_tbs"] / bandwidth if bandwidth else None
    fn_wait(tile_split())
    fn_wait(tile_combine())
    ref = ref_f32(q, k, v, False)
    row["err"] = rel_err(o, ref)
    if o_pdl is not None:  # the graph with the PDL merge wrote the same numbers?
        row["pair_same"] = bool(torch.equal(o_pdl, o))
    if fused:
        row.update(bench_fused(o, ref, reps, dev, nbytes, grp, bn, d, splits, dtype, o_part, lse_part, q3, k3, v3,
                               ctx, scale))
    if fixed and dev != "cpu":
        row.update(decode_fixed(tile_split, tile_combine, reps, dev, kernels, split_args, o_part, lse_part, o, grp, d,
                                dc, ctx))
        if "_pdl_o" in row:  # the PDL graphs' outputs: the same numbers?
            row["pdl_same"] = bool(torch.equal(o, row.pop("_pdl_o")))
        if "_pdle_o" in row:
            row["pdle_same"] = bool(torch.equal(o, row.pop("_pdle_o")))
    return row


def bench_fused(o, ref, reps: int, dev: str, nbytes: int, grp: int, bn: int, d: int, splits: int, dtype: str,  # type: ignore[no-untyped-def]
                o_part, lse_part, q3, k3, v3, ctx: int, scale: float) -> dict:
    """`std::attention::decode_fused` (one launch: the merge by each KV head's
    last block, `if last_block(1)`) on the same plan, NC = `fused_nc` shares a
    step of the merge: eager and as a CUDA graph, its output against the
    pair's (`o`) and SDPA's in f32."""
    out: dict = {}
    of = torch.empty_like(o)
    nc = fused_nc(splits)
    fused = ATTN.decode_fused[dtype, grp, bn, d, combine_ns(splits), nc]

    def step():  # type: ignore[no-untyped-def]
        return fused(tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]),
                     tilelang.partition(of.view(-1, grp, d), [1, grp, d]), q3, k3, v3, ctx, scale).launch()

    out["fused_nc"] = nc
    out["fused_ms"] = time_ms(step, reps, dev, warmup=5)
    if dev != "cpu":
        out["fused_graph_ms"] = time_ms(graph_of(step), reps, dev)
        out["fused_tbs"] = nbytes / out["fused_graph_ms"] / 1e9
    of.fill_(float("nan"))
    fn_wait(step())
    out["fused_err"] = rel_err(of, ref)
    out["fused_vs_pair"] = float((of.float() - o.float()).abs().max())
    return out


def graph_of(*fns):  # type: ignore[no-untyped-def]
    """`fns` (each run once more eagerly first, outside the capture) recorded
    into one CUDA graph by PyTorch; returns its replay."""
    for f in fns:
        fn_wait(f())
    torch.cuda.synchronize()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        for f in fns:
            fn_wait(f())  # (no wait while capturing: the handle is done)
    return gr.replay


def decode_fixed(tile_split, tile_combine, reps: int, dev: str, kernels, split_args, o_part, lse_part, o,  # type: ignore[no-untyped-def]
                 grp: int, d: int, dc: int, ctx: int) -> dict:
    """Where a short decode step's fixed cost goes: the split kernel over a
    one-position cache (its launch, prologue, warp merge and stores, no
    key loop to speak of), an empty kernel alone and two in a graph (the
    launches' floor), and the pair in a graph with programmatic dependent
    launch (the merge scheduled while the split drains, `cuda_pdl`, trigger
    "late", and "entry": the merge's blocks resident from the split's start,
    waiting for its memory; kernels compiled for each in a module of their
    own), and the split alone in a graph (what the merge adds to the pair:
    the most a merge folded into the split could save)."""
    out = {"split_len1_ms": time_ms(lambda: tile_split(1), reps, dev, warmup=3)}
    nop = _nop()
    z = torch.zeros(1, device=dev)
    out["nop_ms"] = time_ms(lambda: nop(tilelang.partition(z, [1])).launch(), reps, dev, warmup=3)
    out["nop2_graph_ms"] = time_ms(graph_of(lambda: nop(tilelang.partition(z, [1])).launch(),
                                            lambda: nop(tilelang.partition(z, [1])).launch()), reps, dev)
    out["split_graph_ms"] = time_ms(graph_of(tile_split), reps, dev)
    # the same two over a one-position cache: the pair's floor in a graph
    out["split1_graph_ms"] = time_ms(graph_of(lambda: tile_split(1)), reps, dev)
    out["pair1_graph_ms"] = time_ms(graph_of(lambda: tile_split(1), tile_combine), reps, dev)
    fn_wait(tile_split())  # the whole cache's output again, which the PDL graphs' must equal
    fn_wait(tile_combine())
    from tilelang.runtime import cuda_pdl

    def pdl_pair(trigger: str):  # type: ignore[no-untyped-def]
        with cuda_pdl.scoped(True, trigger):
            split, comb = kernels(tilelang.compile("use std::attention::*;\n"))
            o2 = torch.empty_like(o)

            def s():  # type: ignore[no-untyped-def]
                return split(*split_args(ctx)).launch()

            def c():  # type: ignore[no-untyped-def]
                return comb(tilelang.partition(o2.view(-1, grp, d), [1, grp, dc]), o_part, lse_part).launch()

            return graph_of(s, c), o2, cuda_pdl.LAUNCHES

    for trigger, key in (("late", "pair_pdl_ms"), ("entry", "pair_pdle_ms")):
        replay, o2, before = pdl_pair(trigger)
        out[key] = time_ms(replay, reps, dev)
        if trigger == "late":
            out["pdl_launches"] = before
            out["_pdl_o"] = o2
        else:
            out["_pdle_o"] = o2
    return out


_PDL_MODULE: list = []


def pdl_module():  # type: ignore[no-untyped-def]
    """std::attention in a module of its own for launches with programmatic
    dependent launch: a kernel keeps the launcher of its first run (the API's
    plan), so one launched plainly before would stay plain."""
    if not _PDL_MODULE:
        _PDL_MODULE.append(tilelang.compile("use std::attention::*;\n"))
    return _PDL_MODULE[0]


_NOP: list = []


def _nop():  # type: ignore[no-untyped-def]
    if not _NOP:
        _NOP.append(tilelang.compile(
            "kernel fn nop(z: &mut Tensor<f32, [1]>) { z.store(zeros::<f32>([1])); }\n").nop)
    return _NOP[0]


# (variant, decode_plan's arguments) that --sweep times besides the default plan
SWEEP = [
    ("warp", {}),  # the default plan on the library's kernel before 2026-12-02's eighth session (one state a warp)
    ("r8", {}),  # 8 warps a block, BN / 8 keys each: 196 registers with lane groups (255 + spills before)
    ("r8", {"blocks_per_sm": 1}),  # the same, one wave of one block an SM
    ("e2", {}),  # the lane-group loop with its merge's max and sum replicated (no conversion before the rescale)
    ("std", {"bn": 32, "combine_tile": 4096, "min_share": 0}),  # the default of 2026-12-02 (3f14ec5)
    ("std", {"min_share": 0}),  # two blocks an SM however short the shares
    ("std", {"blocks_per_sm": 1}),  # one block an SM
    ("std", {"bn": 32}),
    ("std", {"combine_tile": 512}),
    ("c:w1n", {}),  # std's merge (weights normalised first) in one warp: no barrier
    # measured slower on the H200 (RESULTS, sixth session), not swept again: the
    # 1- and 2-warp merges ("c:w1", "c:w2"), BN 32 at three blocks an SM
    # ({"bn": 32, "blocks_per_sm": 3}: 160 registers)
]
_VARIANTS: list = []


def variants():  # type: ignore[no-untyped-def]
    if not _VARIANTS:
        _VARIANTS.append(tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile")))
    return _VARIANTS[0]


def sweep_plans(batch: int, ctx: int, sms: int) -> list[tuple[str, tuple[int, int, int]]]:
    """The --sweep's plans for a decode shape (the default's first), no repeats."""
    plans = [("std", decode_plan(batch * 8, 4, ctx, 128, sms))]
    for variant, kw in SWEEP:
        p = (variant, decode_plan(batch * 8, 4, ctx, 128, sms, **kw))
        if p not in plans:
            plans.append(p)
    return plans


def decode_sweep(batch: int, ctx: int, reps: int, dev: str, bandwidth: float) -> list[dict]:
    """The decode shape under several plans (key block, split count, merge
    chunk, kernel variant); one line each, for choosing the default. SDPA is
    the default row's (not timed again here)."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count if dev != "cpu" else 4
    rows = []
    for variant, p in sweep_plans(batch, ctx, sms)[1:]:
        r = bench_decode(batch, ctx, max(3, reps // 2), dev, bandwidth, plan=p, variant=variant, sdpa=False)
        pair = f", graph {r['pair_ms'] * 1e3:.1f} us = {r['pair_tbs']:.2f} TB/s" if "pair_ms" in r else ""
        print(f"  sweep {variant} B={batch} ctx={ctx} BN={p[0]} splits={p[1]} DC={p[2]}: "
              f"split {r['split_ms'] * 1e3:.1f} us "
              f"({r['split_tbs']:.2f} TB/s) + combine {r['combine_ms'] * 1e3:.1f} us = {r['tile_tbs']:.2f} TB/s"
              f"{pair}, err {r['err']:.1e}", flush=True)
        rows.append(r)
    return rows


def copy_bandwidth(dev: str) -> float:
    """TB/s of a device-to-device copy (read + write counted), the best of
    three measurements: the first of a process read 2.4-3.0 TB/s on the
    H200 where the next ones read 4.28 (clocks still rising, 2026-12-02)."""
    if dev == "cpu":
        return 0.0
    x = torch.empty(1 << 30, dtype=torch.int16, device=dev)
    y = torch.empty_like(x)
    ms = min(time_ms(lambda: y.copy_(x), 10, dev) for _ in range(3))
    return 2 * x.numel() * 2 / ms / 1e9


def decode_detail(r: dict) -> str:
    """One line of a decode row's parts (microseconds) and its graph timings."""
    us = {k: r[k] * 1e3 for k in r if k.endswith("_ms")}
    out = (f"  detail B={r['B']} ctx={r['ctx']} split={r.get('split', 'fma')} BN={r['BN']} splits={r['splits']} "
           f"DC={r['DC']}: "
           f"split {us['split_ms']:.1f} + combine {us['combine_ms']:.1f} us = {r['tile_tbs']:.2f} TB/s")
    if "pair_ms" in us:
        out += f", graph {us['pair_ms']:.1f} us = {r['pair_tbs']:.2f} TB/s ({r.get('pair_form', 'plain')}"
        if r.get("pair_form", "plain") != "plain":
            out += f", same output {r.get('pair_same')}; plain {us['pair_plain_ms']:.1f} us"
        out += ")"
    if "sdpa_graph_ms" in us:
        out += f"; SDPA {us['sdpa_ms']:.1f} us, in a graph {us['sdpa_graph_ms']:.1f} us"
    if "pair_pdl_ms" in us:
        nbytes = r["pair_tbs"] * r["pair_ms"]
        out += (f"; graph pair with PDL {us['pair_pdl_ms']:.1f} us = {nbytes / r['pair_pdl_ms']:.2f} TB/s "
                f"(same output {r.get('pdl_same')}, PDL launches {r.get('pdl_launches')})")
    if "pair_pdle_ms" in us:
        nbytes = r["pair_tbs"] * r["pair_ms"]
        out += (f"; PDL at entry {us['pair_pdle_ms']:.1f} us = {nbytes / r['pair_pdle_ms']:.2f} TB/s "
                f"(same output {r.get('pdle_same')}); split alone in a graph {us['split_graph_ms']:.1f} us; "
                f"over 1 position in a graph: split {us['split1_graph_ms']:.1f} us, pair {us['pair1_graph_ms']:.1f} us")
    if "split_len1_ms" in us:
        out += (f"; split over 1 position {us['split_len1_ms']:.1f} us; empty kernel {us['nop_ms']:.1f} us, "
                f"two in a graph {us['nop2_graph_ms']:.1f} us")
    if "fused_ms" in us:
        out += (f"; fused (NC={r['fused_nc']}) {us['fused_ms']:.1f} us"
                + (f", graph {us['fused_graph_ms']:.1f} us = {r['fused_tbs']:.2f} TB/s"
                   + (f" = {100 * r['fused_tbs'] / bw:.1f}% of copy" if (bw := r.get('copy_bw')) else "")
                   if "fused_graph_ms" in us else "")
                + f", err {r['fused_err']:.1e}, |fused - pair| {r['fused_vs_pair']:.1e}")
    return out


def table(rows: list[dict], bandwidth: float) -> str:
    out = ["| shape | Tile | SDPA | flash-attn | Triton | Tile / SDPA | Tile / flash-attn | Tile / Triton | err |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r["kind"] == "prefill":
            shape = (f"{r['dtype']} D={r['D']} {'causal' if r['causal'] else 'full'} S={r['S']} "
                     f"B={r['B']} H={r['H']}")
            unit = "TFLOP/s"
            tile, sdpa, fa = r["tile_tflops"], r["sdpa_tflops"], r.get("fa_tflops")
        else:
            shape = (f"decode {r['dtype']} B={r['B']} ctx={r['ctx']} 32/8 heads D=128 "
                     f"({r.get('split', 'fma')} split, BN={r['BN']}, {r['splits']} splits)")
            unit = "TB/s"
            tile, sdpa = r["tile_tbs"], r["sdpa_tbs"]
            fa = (r["tile_tbs"] * r["tile_ms"] / r["fa_ms"]) if "fa_ms" in r else None
            if r.get("of_copy_bw"):
                shape += f", Tile at {100 * r['of_copy_bw']:.0f}% of copy bw"
                if "pair_tbs" in r:  # the pair as one CUDA graph (a decode loop's way)
                    shape += (f"; as a graph {r['pair_tbs']:.2f} TB/s = "
                              f"{100 * r['of_copy_bw'] * r['pair_tbs'] / r['tile_tbs']:.0f}%")
        fa_s = f"{fa:.1f} {unit}" if fa else "-"
        fa_r = f"{r['fa_ms'] / r['tile_ms']:.2f}x" if "fa_ms" in r else "-"
        tr_s = f"{r['triton_tflops']:.1f} {unit}" if "triton_ms" in r else "-"
        tr_r = f"{r['triton_ms'] / r['tile_ms']:.2f}x" if "triton_ms" in r else "-"
        out.append(f"| {shape} | {tile:.2f} {unit} | {sdpa:.2f} {unit} | {fa_s} | {tr_s} | "
                   f"{r['sdpa_ms'] / r['tile_ms']:.2f}x | {fa_r} | {tr_r} | {r['err']:.1e}"
                   + (f" (Triton {r['triton_err']:.1e})" if "triton_err" in r else "") + " |")
    if bandwidth:
        out.append(f"\nCopy bandwidth (device-to-device, 2 GiB): {bandwidth:.2f} TB/s")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="S = 4096 and the decode shapes only")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (CPU or GPU): checks the script")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--decode-only", action="store_true", help="the decode rows only")
    ap.add_argument("--sweep", action="store_true", help="also time each decode shape under several plans")
    ap.add_argument("--fixed", action="store_true",
                    help="decode: also time the fixed costs (a one-position split, empty kernels, PDL)")
    ap.add_argument("--prefill-only", action="store_true", help="no decode shapes")
    ap.add_argument("--split", choices=("rule", "tc", "fma", "ab"), default="rule",
                    help="decode: std's split kernel as the example's rule chooses it, forced (tc: "
                         "decode_split_tc, fma: decode_split), or the rule's and then the other (ab)")
    ap.add_argument("--only", default=None, help="prefill rows of these dtype-D only, comma-separated, e.g. f16-128,bf16-64")
    ap.add_argument("--causal-only", action="store_true", help="only the causal prefill rows")
    ap.add_argument("--full-only", action="store_true", help="only the non-causal prefill rows")
    ap.add_argument("--seqs", default=None, help="prefill rows of these S only, comma-separated (e.g. 1024)")
    ap.add_argument("--also", default=None,
                    help="prefill rows added after the filters above, DTYPE-D-full|causal-S, comma-separated "
                         "(e.g. f16-128-full-4096: a control row beside --only's)")
    ap.add_argument("--throwaway", action="store_true",
                    help="time the first prefill row once more before the measured rows and print it marked, not "
                         "kept (a process's first measured row read 10-20 %% low in half the runs of 2026-12-06)")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    rows: list[dict] = []
    bw = copy_bandwidth(dev)
    if a.smoke:
        prefill = [(dt, d, c, 96, 96) for dt in ("f16",) for d in (64,) for c in (False, True)]
        decode: list[tuple[int, int]] = [(1, 256)]
    else:
        seqs = (4096,) if a.quick else (1024, 4096, 16384)
        prefill = [(dt, d, c, s, 16384) for dt in ("f16", "bf16") for d in (128, 64)
                   for c in (False, True) for s in seqs]
        decode = [(b, ctx) for b in (1, 8) for ctx in (8192, 32768)]
    if a.decode_only:
        prefill = []
    if a.prefill_only:
        decode = []
    if a.only:
        prefill = [r for r in prefill if f"{r[0]}-{r[1]}" in a.only.split(",")]
    if a.seqs:
        prefill = [r for r in prefill if str(r[3]) in a.seqs.split(",")]
    if a.causal_only or a.full_only:
        prefill = [r for r in prefill if r[2] == a.causal_only]
    for name in a.also.split(",") if a.also else ():
        dt, d, kind, s = name.split("-")
        if dt not in DT or kind not in ("full", "causal"):
            raise SystemExit(f"--also {name}: expected DTYPE-D-full|causal-S, e.g. f16-128-full-4096")
        prefill.append((dt, int(d), kind == "causal", int(s), int(s) if a.smoke else 16384))  # (--smoke: one batch)
    if dev == "cpu" and not a.smoke:
        print("no GPU: use --smoke on the CPU", file=sys.stderr)
        return 2
    # decode first: its rows are quick, and a run cut short keeps them
    sweeps: list[dict] = []
    if decode and dev != "cpu":
        # once untimed: the first decode row of a run once read 6x slower than
        # the same plan timed again minutes later (2026-12-02, h15d call 2)
        bench_decode(*decode[0], 2, dev, bw)
    for b, ctx in decode:
        forced = a.split if a.split in ("tc", "fma") else None
        rows.append(bench_decode(b, ctx, a.reps, dev, bw, fixed=a.fixed, fused=True, split=forced))
        rows[-1]["copy_bw"] = bw
        print(table(rows[-1:], 0).splitlines()[-1], flush=True)
        print(decode_detail(rows[-1]), flush=True)
        if a.split == "ab":  # the other split kernel on the same plan, in the same run
            other = "fma" if rows[-1]["split"] == "tc" else "tc"
            sweeps.append(bench_decode(b, ctx, a.reps, dev, bw, sdpa=False, fixed=a.fixed, split=other))
            print(decode_detail(sweeps[-1]) + f", err {sweeps[-1]['err']:.1e}", flush=True)
        if a.sweep:
            sweeps += decode_sweep(b, ctx, a.reps, dev, bw)
    if prefill and dev != "cpu":
        # once untimed, after the toolchain's background warm-up threads are
        # done: a process's first timed prefill row read 100-225 TFLOP/s
        # instead of ~470-500 in half the processes of h15p's 2026-12-02 sixth-
        # session calls (main and branch alike), the same row right after it
        # at full speed
        import threading

        for t in threading.enumerate():
            if t.name.startswith("tilec-") and t is not threading.current_thread():
                t.join(timeout=10)
        bench_prefill(*prefill[0], 2, dev)
        if a.throwaway:  # timed in full and dropped: the measured rows start on a warm device
            print(table([bench_prefill(*prefill[0], a.reps, dev)], 0).splitlines()[-1] + " (throwaway)", flush=True)
    for dt, d, c, s, tok in prefill:
        if dev == "cpu" and dt == "bf16":
            continue
        rows.append(bench_prefill(dt, d, c, s, tok, a.reps, dev))
        print(table(rows[-1:], 0).splitlines()[-1], flush=True)
    text = table(rows, bw)
    print()
    print(text)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "attention.json").write_text(json.dumps({"copy_tbs": bw, "rows": rows, "sweep": sweeps}, indent=1))
    (a.out / "attention.md").write_text(text + "\n")
    bad = [r for r in rows if not r["err"] < 1e-2]
    if bad:
        print(f"error above 1e-2 on {len(bad)} shapes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
