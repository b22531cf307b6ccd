"""Issue 15, decode at batch 1: where the floor is, and the split on tensor cores.

    python benchmarks/decode_floor.py [--reps 5] [--shapes 1x8192,1x32768,8x8192,8x32768] [--out DIR]
    python benchmarks/decode_floor.py --check      # one small step of each kernel, checked (sanitizers)
    python benchmarks/decode_floor.py --shares     # std's decode_split_tc at batch 1 over SHARES shares a head

For each decode shape of `benchmarks/attention.py` (32 query heads over 8 KV
heads, D = 128, bf16; the KV cache read is 2 * B * 8 * ctx * 128 * 2 bytes),
in CUDA graphs (a decode loop's way; graph times include the graph's own
start, ~3 us for an empty kernel on the H200):

- the library's pair (`decode_split` + `decode_combine`, the example's plan),
  the split alone, and the pair over a one-position cache (its floor);
- `decode_split_wg` (attention_variants.tile: the split as a 64-row prefill
  tile on the Hopper attention pipeline, TMA + wgmma, a persistent walk of
  the shares) with std's merge, at two split counts: the most shares that
  keep one per SM (`rows * splits <= SMs`) and the fewest that give every SM
  the same number (`splits = SMs / gcd(rows, SMs)`);
- the ideal read of the same bytes: `decode_read` (a Tile kernel that only
  sums its share of K and V, std's grid and ring), a Triton kernel that only
  sums them (best of four configurations), PyTorch's `sum` of K and of V;
- SDPA (GQA) in a graph, and the copy bandwidth (attention.py's).

Every output is checked against SDPA in f32 (err = max |x - ref| / max |ref|).
Prints one JSON line a shape and a table; writes `decode_floor.json` to --out.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import attention as bench  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from decode_plan import combine_ns, decode_plan, fused_nc  # noqa: E402

import tilelang  # noqa: E402

HQ, HKV, D, GRP, M = 32, 8, 128, 4, 64
# --shares: shares a KV head for `decode_split_tc` at batch 1 (8 KV heads over the
# H200's 132 SMs, one persistent CTA an SM): 16 (one a CTA, 4 idle), 32 (the
# example's plan at 32k: 2 a CTA on 124, 1 on 8), 33 (2 on every CTA), 64, 66 (4 on every CTA)
SHARES = (16, 32, 33, 64, 66)


def merge_chunk(splits: int, tile: int = 1024) -> int:
    """decode_plan's merge column chunk for `splits` shares."""
    dc = D
    while combine_ns(splits) * GRP * dc > tile and dc % 16 == 0:
        dc //= 2
    return dc


def _triton_read():  # type: ignore[no-untyped-def]
    import triton
    import triton.language as tl

    @triton.jit
    def read2(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
        pid = tl.program_id(0)
        half = tl.num_programs(0) // 2
        acc = tl.zeros([BLOCK], tl.float32)
        if pid < half:
            base = pid * BLOCK * ITERS
            for i in range(ITERS):
                offs = base + i * BLOCK + tl.arange(0, BLOCK)
                acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        else:
            base = (pid - half) * BLOCK * ITERS
            for i in range(ITERS):
                offs = base + i * BLOCK + tl.arange(0, BLOCK)
                acc += tl.load(y_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        tl.store(out_ptr + pid, tl.sum(acc))

    return read2


def wg_rows(tag: str, ns: int, q3, k3, v3, o, ref, ctx: int, scale: float, reps: int, t,  # type: ignore[no-untyped-def]
            kernel: str = "decode_split_wg", bn: int = 64) -> dict:
    """`decode_split_wg` over `ns` shares a KV head with std's merge: eager and
    graph times of the split, the pair, the pair over one position; the error."""
    dev = "cuda"
    rows = q3.shape[0]
    r: dict = {}
    ns = max(1, min(ns, ctx // bn))
    dcw = merge_chunk(ns)
    ow = torch.empty_like(o)
    opw = torch.empty(rows * ns, GRP, D, device=dev)
    lpw = torch.empty(rows * ns, GRP, device=dev)
    kw = (bench.ATTN.decode_split_tc["bf16", bn, D] if kernel == "decode_split_tc"  # std's: same parameters
          else getattr(bench.variants(), kernel)["bf16", GRP, M, bn, D])
    cw = bench.ATTN.decode_combine["bf16", GRP, combine_ns(ns), dcw]
    s_wg = lambda n=ctx, kw=kw, opw=opw, lpw=lpw, ns=ns: kw(  # noqa: E731
        tilelang.partition(opw, [1, M, D]), tilelang.partition(lpw, [1, M]), q3, k3, v3, n, scale, ns).launch()
    c_wg = lambda cw=cw, ow=ow, opw=opw, lpw=lpw, ns=ns, dcw=dcw: cw(  # noqa: E731
        tilelang.partition(ow.view(rows, GRP, D), [1, GRP, dcw]), opw.view(rows, ns * GRP, D),
        lpw.view(rows, ns * GRP)).launch()
    r[f"{tag}_plan"] = [bn, ns, dcw]
    r[f"{tag}_split_eager_us"] = bench.time_ms(s_wg, reps, dev, warmup=5) * 1e3
    r[f"{tag}_split_us"] = t([s_wg])
    r[f"{tag}_pair_us"] = t([s_wg, c_wg])
    r[f"{tag}_pair1_us"] = t([lambda s_wg=s_wg: s_wg(1), c_wg])
    ow.fill_(float("nan"))
    bench.fn_wait(s_wg())
    bench.fn_wait(c_wg())
    r[f"{tag}_err"] = bench.rel_err(ow, ref)
    return r


def shares_row(batch: int, ctx: int, reps: int, bw: float, sms: int) -> dict:
    """std's `decode_split_tc` + merge over each of SHARES shares a KV head
    (the persistent walk's static multi-wave shares) and the Triton read floor
    (its best configuration of the last call), in one process."""
    (_, k, v), (q3, k3, v3), _, nbytes, ref, r, t = _shape(batch, ctx, reps, bw)
    o = torch.empty(batch, HQ, 1, D, device="cuda", dtype=torch.bfloat16)
    for ns in SHARES:
        r.update(wg_rows(f"tc{ns}", ns, q3, k3, v3, o, ref, ctx, D**-0.5, reps, t, kernel="decode_split_tc"))
    try:
        read2, n = _triton_read(), k.numel()
        progs = 2 * -(-n // (4096 * 8))
        tout = torch.empty(progs, device="cuda")
        r["triton_read_us"] = t([lambda: read2[(progs,)](k, v, tout, n, BLOCK=4096, ITERS=8, num_warps=8)])
    except Exception as e:  # Triton missing or failing: recorded, the rest stands
        r["triton_error"] = repr(e)[:200]
    return _with_rates(r, nbytes)


def _shape(batch: int, ctx: int, reps: int, bw: float):  # type: ignore[no-untyped-def]
    """A decode shape's inputs (seeded by the shape), as [batch, heads, len, D]
    and as the kernels' [rows, ., D] views, the bytes of K and V, SDPA's f32
    reference, the row's first fields and `t`: a list of launches timed as
    one CUDA graph, in us."""
    dev, dt = "cuda", torch.bfloat16
    g = torch.Generator(device=dev).manual_seed(ctx + batch)
    q = torch.randn(batch, HQ, 1, D, device=dev, dtype=dt, generator=g)
    k = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    v = torch.randn(batch, HKV, ctx, D, device=dev, dtype=dt, generator=g)
    rows = batch * HKV
    nbytes = 2 * rows * ctx * D * 2
    r: dict = {"B": batch, "ctx": ctx, "MB": nbytes / 1e6, "copy_tbs": bw}
    t = lambda fns: bench.time_ms(bench.graph_of(*fns), reps, dev) * 1e3  # noqa: E731  (us, a graph)
    views = q.view(rows, GRP, D), k.view(rows, ctx, D), v.view(rows, ctx, D)
    return (q, k, v), views, rows, nbytes, bench.ref_f32(q, k, v, False), r, t


def _with_rates(r: dict, nbytes: int) -> dict:
    """`r` with the read rate (TB/s) of every time (us) in it."""
    for key in [x for x in r if x.endswith("_us")]:
        r[key.removesuffix("_us") + "_tbs"] = nbytes / (r[key] * 1e-6) / 1e12
    return r


def shape_row(batch: int, ctx: int, reps: int, bw: float, sms: int) -> dict:
    dev, dt, scale = "cuda", torch.bfloat16, D**-0.5
    (q, k, v), (q3, k3, v3), rows, nbytes, ref, r, t = _shape(batch, ctx, reps, bw)

    # the library's pair
    bn, splits, dc = decode_plan(rows, GRP, ctx, D, sms)
    o = torch.empty(batch, HQ, 1, D, device=dev, dtype=dt)
    o_part = torch.empty(rows, splits * GRP, D, device=dev)
    lse_part = torch.empty(rows, splits * GRP, device=dev)
    split = bench.ATTN.decode_split["bf16", GRP, bn, D]
    comb = bench.ATTN.decode_combine["bf16", GRP, combine_ns(splits), dc]
    s_std = lambda n=ctx: split(tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]),  # noqa: E731
                                q3, k3, v3, n, scale).launch()
    c_std = lambda: comb(tilelang.partition(o.view(rows, GRP, D), [1, GRP, dc]), o_part, lse_part).launch()  # noqa: E731
    r["std_plan"] = [bn, splits, dc]
    r["std_pair_us"] = t([s_std, c_std])
    r["std_split_us"] = t([s_std])
    r["std_split_eager_us"] = bench.time_ms(s_std, reps, dev, warmup=5) * 1e3  # (batch 8: graph vs eager)
    r["std_pair1_us"] = t([lambda: s_std(1), c_std])
    bench.fn_wait(s_std())
    bench.fn_wait(c_std())
    r["std_err"] = bench.rel_err(o, ref)

    # the split on tensor cores, two split counts
    for tag, ns in (("wg", max(1, sms // rows)), ("wgf", min(64, sms // math.gcd(rows, sms)))):
        try:
            r.update(wg_rows(tag, ns, q3, k3, v3, o, ref, ctx, scale, reps, t))
        except Exception as e:  # recorded; then once more with q padded to M rows in memory
            r[f"{tag}_error"] = repr(e)[:300]
            print(f"{tag} B={batch} ctx={ctx}: {e!r}"[:400], flush=True)
            try:
                qp = torch.zeros(rows, M, D, device=dev, dtype=dt)
                qp[:, :GRP] = q3
                r.update({f"{x}_qpad": y for x, y in wg_rows(tag, ns, qp, k3, v3, o, ref, ctx, scale, reps, t).items()})
            except Exception as e2:  # the floors below still run
                r[f"{tag}_error_qpad"] = repr(e2)[:300]
    # the ideal read of the same bytes
    out = torch.empty(rows, splits, device=dev)
    rd = bench.variants().decode_read["bf16", bn, D]
    r["tile_read_us"] = t([lambda: rd(tilelang.partition(out, [1, 1]), k3, v3, ctx).launch()])
    r["tile_read_ok"] = bool(torch.allclose(out.sum().double(), (k.double().sum() + v.double().sum()),
                                            rtol=1e-3, atol=1.0))
    r["torch_read_us"] = t([lambda: k.sum(dtype=torch.float32), lambda: v.sum(dtype=torch.float32)])
    try:
        read2 = _triton_read()
        n = k.numel()
        best = None
        for block, iters, warps in ((4096, 8, 8), (8192, 4, 8), (2048, 16, 4), (4096, 4, 4)):
            progs = 2 * -(-n // (block * iters))
            tout = torch.empty(progs, device=dev)
            fn = lambda read2=read2, tout=tout, progs=progs, block=block, iters=iters, warps=warps: read2[(progs,)](  # noqa: E731
                k, v, tout, n, BLOCK=block, ITERS=iters, num_warps=warps)
            us = t([fn])
            if best is None or us < best[0]:
                best = (us, f"BLOCK {block} ITERS {iters} warps {warps}",
                        bool(torch.allclose(tout.sum().double(), k.double().sum() + v.double().sum(), rtol=1e-3, atol=1.0)))
        r["triton_read_us"], r["triton_cfg"], r["triton_ok"] = best
    except Exception as e:  # Triton missing or failing: recorded, the rest stands
        r["triton_error"] = repr(e)[:200]
    r["sdpa_us"] = t([lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)])
    return _with_rates(r, nbytes)


def round2(batch: int, ctx: int, reps: int, bw: float, sms: int) -> dict:
    """The second call's rows: std's pair (and with programmatic dependent
    launch, trigger "late"), std at BN 32 filling 3 blocks an SM,
    `decode_split_wg` (BN 64, 4 stages) and `decode_split_wgl` (BN 128, 3
    stages) at one share an SM with std's merge, an empty kernel's graph;
    at batch 8 the read floor eager and as a graph (the graph anomaly)."""
    from tilelang.runtime import cuda_pdl

    dev, dt, scale = "cuda", torch.bfloat16, D**-0.5
    _, (q3, k3, v3), rows, nbytes, ref, r, t = _shape(batch, ctx, reps, bw)
    o = torch.empty(batch, HQ, 1, D, device=dev, dtype=dt)

    def std(tag: str, mod, **kw) -> None:  # type: ignore[no-untyped-def]
        bn, splits, dc = decode_plan(rows, GRP, ctx, D, sms, **kw)
        o2 = torch.full_like(o, float("nan"))
        o_part = torch.empty(rows, splits * GRP, D, device=dev)
        lse_part = torch.empty(rows, splits * GRP, device=dev)
        split = mod.decode_split["bf16", GRP, bn, D]
        comb = mod.decode_combine["bf16", GRP, combine_ns(splits), dc]
        s_ = lambda: split(tilelang.partition(o_part, [1, GRP, D]), tilelang.partition(lse_part, [1, GRP]),  # noqa: E731
                           q3, k3, v3, ctx, scale).launch()
        c_ = lambda: comb(tilelang.partition(o2.view(rows, GRP, D), [1, GRP, dc]), o_part, lse_part).launch()  # noqa: E731
        r[f"{tag}_plan"] = [bn, splits, dc]
        r[f"{tag}_pair_us"] = t([s_, c_])
        if tag == "std":
            r[f"{tag}_split_us"] = t([s_])
            r[f"{tag}_split_eager_us"] = bench.time_ms(s_, reps, dev, warmup=5) * 1e3
        bench.fn_wait(s_())
        bench.fn_wait(c_())
        r[f"{tag}_err"] = bench.rel_err(o2, ref)

    std("std", bench.ATTN)
    try:  # std::attention::decode_fused (the merge by each KV head's last block), on std's plan
        bn, splits, _ = decode_plan(rows, GRP, ctx, D, sms)
        of = torch.full_like(o, float("nan"))
        op_f = torch.empty(rows, splits * GRP, D, device=dev)
        lp_f = torch.empty(rows, splits * GRP, device=dev)
        fused = bench.ATTN.decode_fused["bf16", GRP, bn, D, combine_ns(splits), fused_nc(splits)]
        f_ = lambda: fused(tilelang.partition(op_f, [1, GRP, D]), tilelang.partition(lp_f, [1, GRP]),  # noqa: E731
                           tilelang.partition(of.view(rows, GRP, D), [1, GRP, D]), q3, k3, v3, ctx, scale).launch()
        r["fused_us"] = t([f_])
        bench.fn_wait(f_())
        r["fused_err"] = bench.rel_err(of, ref)
    except Exception as e:
        r["fused_error"] = repr(e)[:300]
    try:
        with cuda_pdl.scoped(True, "late"):
            std("pdl", tilelang.compile("use std::attention::*;\n"))
    except Exception as e:
        r["pdl_error"] = repr(e)[:300]
    try:
        std("bn32x3", bench.ATTN, bn=32, blocks_per_sm=3)
    except Exception as e:
        r["bn32x3_error"] = repr(e)[:300]
    ns = max(1, sms // rows)
    for tag, kernel, bn in (("wg", "decode_split_wg", 64), ("wgl", "decode_split_wgl", 128)):
        try:
            r.update(wg_rows(tag, ns, q3, k3, v3, o, ref, ctx, scale, reps, t, kernel, bn))
        except Exception as e:
            r[f"{tag}_error"] = repr(e)[:300]
    nop = bench._nop()
    z = torch.zeros(1, device=dev)
    r["nop_us"] = t([lambda: nop(tilelang.partition(z, [1])).launch()])
    if batch > 1:
        bn, splits, _ = decode_plan(rows, GRP, ctx, D, sms)
        out = torch.empty(rows, splits, device=dev)
        rd = bench.variants().decode_read["bf16", bn, D]
        fn = lambda: rd(tilelang.partition(out, [1, 1]), k3, v3, ctx).launch()  # noqa: E731
        r["tile_read_us"] = t([fn])
        r["tile_read_eager_us"] = bench.time_ms(fn, reps, dev, warmup=5) * 1e3
    return _with_rates(r, nbytes)


def check() -> int:
    """One small step of each new kernel (for compute-sanitizer): a cache
    longer than cache_len, a last key block cut short, several shares."""
    dev, dt, batch, smax, clen = "cuda", torch.bfloat16, 2, 1024, 1000
    rows = batch * HKV
    q = torch.randn(batch, HQ, 1, D, device=dev, dtype=dt)
    k = torch.randn(batch, HKV, smax, D, device=dev, dtype=dt)
    v = torch.randn(batch, HKV, smax, D, device=dev, dtype=dt)
    ref = bench.ref_f32(q, k[:, :, :clen], v[:, :, :clen], False)
    bad = 0
    for ns, kernel, bn in ((3, "decode_split_wg", 64), (8, "decode_split_wg", 64), (3, "decode_split_wgl", 128)):
        o = torch.full((batch, HQ, 1, D), float("nan"), device=dev, dtype=dt)
        opw = torch.empty(rows * ns, GRP, D, device=dev)
        lpw = torch.empty(rows * ns, GRP, device=dev)
        getattr(bench.variants(), kernel)["bf16", GRP, M, bn, D](
            tilelang.partition(opw, [1, M, D]), tilelang.partition(lpw, [1, M]), q.view(rows, GRP, D),
            k.view(rows, smax, D), v.view(rows, smax, D), clen, D**-0.5, ns).sync()
        bench.ATTN.decode_combine["bf16", GRP, combine_ns(ns), 32](
            tilelang.partition(o.view(rows, GRP, D), [1, GRP, 32]), opw.view(rows, ns * GRP, D),
            lpw.view(rows, ns * GRP)).sync()
        err = bench.rel_err(o, ref)
        print(f"{kernel} splits {ns}: err {err:.1e}")
        bad += not err < 1e-2
    out = torch.empty(rows, 4, device=dev)
    bench.variants().decode_read["bf16", 64, D](tilelang.partition(out, [1, 1]), k.view(rows, smax, D),
                                                v.view(rows, smax, D), clen).sync()
    # whole key blocks: cache_len 1000 rounds up to 1024, the tensor's end
    want = k.double().sum((2, 3)) + v.double().sum((2, 3))
    ok = torch.allclose(out.double().sum(1), want.view(-1), rtol=1e-3, atol=0.5)
    print(f"decode_read: {'ok' if ok else 'WRONG'}")
    return int(bad > 0 or not ok)


def profile(batch: int, ctx: int) -> int:
    """Each split kernel of the shape launched twice, eagerly, nothing else (for ncu)."""
    dev, dt, rows, scale = "cuda", torch.bfloat16, batch * HKV, D**-0.5
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    q = torch.randn(rows, GRP, D, device=dev, dtype=dt)
    k = torch.randn(rows, ctx, D, device=dev, dtype=dt)
    v = torch.randn(rows, ctx, D, device=dev, dtype=dt)
    bn, splits, _ = decode_plan(rows, GRP, ctx, D, sms)
    o_part = torch.empty(rows, splits * GRP, D, device=dev)
    lse_part = torch.empty(rows, splits * GRP, device=dev)
    ns = max(1, sms // rows)
    opw = torch.empty(rows * ns, GRP, D, device=dev)
    lpw = torch.empty(rows * ns, GRP, device=dev)
    for _ in range(2):
        bench.ATTN.decode_split["bf16", GRP, bn, D](tilelang.partition(o_part, [1, GRP, D]),
                                                    tilelang.partition(lse_part, [1, GRP]), q, k, v, ctx, scale).sync()
        bench.variants().decode_split_wg["bf16", GRP, M, 64, D](
            tilelang.partition(opw, [1, M, D]), tilelang.partition(lpw, [1, M]), q, k, v, ctx, scale, ns).sync()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", default="1x8192,1x32768,8x8192,8x32768")
    ap.add_argument("--check", action="store_true", help="one small checked step of each kernel")
    ap.add_argument("--profile", action="store_true", help="the first shape's two splits, twice each (for ncu)")
    ap.add_argument("--round2", action="store_true", help="the second call's rows (`round2`)")
    ap.add_argument("--shares", action="store_true", help="decode_split_tc over SHARES shares (`shares_row`)")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("decode_floor needs a GPU", file=sys.stderr)
        return 2
    if a.check:
        return check()
    if a.profile:
        b, ctx = (int(x) for x in a.shapes.split(",")[0].split("x"))
        return profile(b, ctx)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    bw = bench.copy_bandwidth("cuda")
    print(f"copy bandwidth {bw:.2f} TB/s, {sms} SMs, {torch.cuda.get_device_name()}", flush=True)
    shapes = [tuple(int(x) for x in s.split("x")) for s in a.shapes.split(",")]
    fn = round2 if a.round2 else shares_row if a.shares else shape_row
    fn(*shapes[0], 2, bw, sms)  # once untimed (a process's first rows read slow)
    rows = []
    for b, ctx in shapes:
        rows.append(fn(b, ctx, a.reps, bw, sms))
        print(json.dumps(rows[-1]), flush=True)
    if a.shares:
        cols3 = [f"tc{ns}_{x}" for ns in SHARES for x in ("split", "pair")] + ["triton_read"]
        print("\n| shape | " + " | ".join(cols3) + " |")
        for r in rows:
            print(f"| B={r['B']} ctx {r['ctx']} | " + " | ".join(
                f"{r[c + '_us']:.1f} us ({r[c + '_tbs'] / r['copy_tbs'] * 100:.0f} %)" if c + "_us" in r else "-"
                for c in cols3) + " |")
        (a.out / "decode_shares.json").parent.mkdir(parents=True, exist_ok=True)
        (a.out / "decode_shares.json").write_text(json.dumps(rows, indent=1))
        return 0 if all(r.get(f"tc{ns}_err", 1) < 1e-2 for r in rows for ns in SHARES) else 1
    if a.round2:
        cols2 = ["std_pair", "pdl_pair", "fused", "bn32x3_pair", "std_split", "std_split_eager", "wg_split", "wg_pair",
                 "wgl_split", "wgl_split_eager", "wgl_pair", "wgl_pair1", "nop", "tile_read", "tile_read_eager"]
        print("\n| shape | " + " | ".join(cols2) + " |")
        for r in rows:
            print(f"| B={r['B']} ctx {r['ctx']} | " + " | ".join(
                f"{r[c + '_us']:.1f} us ({r[c + '_tbs'] / r['copy_tbs'] * 100:.0f} %)" if c + "_us" in r else "-"
                for c in cols2) + " |")
        (a.out / "decode_round2.json").parent.mkdir(parents=True, exist_ok=True)
        (a.out / "decode_round2.json").write_text(json.dumps(rows, indent=1))
        return 0
    cols = ["std_pair", "std_split", "std_pair1", "wg_split", "wg_pair", "wg_pair1", "wgf_split", "wgf_pair",
            "wgf_pair1", "tile_read", "triton_read", "torch_read", "sdpa"]
    print("\n| shape | " + " | ".join(cols) + " |")
    print("|" + " --- |" * (len(cols) + 1))
    for r in rows:
        cells = [f"{r[c + '_us']:.1f} us ({r[c + '_us'] and r[c + '_tbs'] / r['copy_tbs'] * 100:.0f} %)"
                 if c + "_us" in r else "-" for c in cols]
        print(f"| B={r['B']} ctx {r['ctx']} | " + " | ".join(cells) + " |")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "decode_floor.json").write_text(json.dumps(rows, indent=1))
    bad = [r for r in rows for e in ("std_err", "wg_err", "wgf_err") if not r.get(e, 0) < 1e-2]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
