"""Which tiles of the chained short keys' attention variant come out wrong (issue 15, h15v).

h15u's stagger (2026-12-05 13:20, H100), which double-buffered Q (`TILEC_ATTN_QDOUBLE=1`'s
buffers), gave err 6.0 (full) / 1.1 (causal) at the benchmark's shape (B * H = 512, S = 1,024,
D = 64: 4,096 tiles on 132 CTAs), while every CPU simulation and four small GPU launches were
right. This probe runs std's `flash_attention` at that shape with the output preset to NaN, per
setting (`TILEC_ATTN_QDOUBLE` 0 / 1) and CTA count (the card's SMs, then fewer via
`TILEC_PERSISTENT_SMS`), and prints for each run: the tiles never stored (NaN), the tiles stored
wrong (max error above 1 % of max |ref|), and where the bad ones sit in the persistent walk (CTA,
the tile's ordinal in that CTA's walk, that CTA's tile count), by the walk's order as
`attention_tiles.walk_setup` lays it out (snake rounds; causal: a heavy and a light query block a
round pair). One process, ~15 s warm (8 launches, one compile a setting).

    python3 benchmarks/probes/qdouble_check.py [--sms 0,66,8] [--sms0 0] [--dtype f16] [--var TILEC_ATTN_XROT]

`--var` names the switch the runs set (1, then 0 for the control): h15w's `TILEC_ATTN_XROT` (the chained
walk rotated across the tile boundary, which double-buffers Q too) is checked the same way.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys


def walk_place(head: int, qb: int, qblocks: int, n: int, causal: bool) -> tuple[int, int]:
    """(CTA, ordinal) of tile (head, query block `qb`) in the walk of `n` CTAs: full, item = head *
    qblocks + (qblocks - 1 - qb) in round item // n; causal, pairs of a heavy block (qb >= qblocks / 2)
    and the light one, each pair an item of `qblocks / 2` a head, the heavy tile in even rounds.
    Snake order: an odd round's CTAs in reverse."""
    if not causal:
        item = head * qblocks + (qblocks - 1 - qb)
        rr, r = item // n, item // n
    else:
        half = qblocks // 2
        rem = qblocks - 1 - qb
        item = head * half + (rem if rem < half else qblocks - 1 - rem)
        rr = item // n
        r = 2 * rr + (0 if rem < half else 1)
    pos = item % n
    return (pos if rr % 2 == 0 else n - 1 - pos), r


_MODULES: dict[str, object] = {}


def run(torch, tilelang, qdouble: str, causal: bool, sms: int, dtype: str,  # type: ignore[no-untyped-def]
        var: str = "TILEC_ATTN_QDOUBLE") -> str:
    os.environ[var] = qdouble
    if sms:
        os.environ["TILEC_PERSISTENT_SMS"] = str(sms)
    else:
        os.environ.pop("TILEC_PERSISTENT_SMS", None)
    # a module of its own per setting (`Module._runtimes`): its kernels compile with this environment; each run's
    # fresh tensors make its launch take the slow path, which reads TILEC_PERSISTENT_SMS (`launch_grid`)
    attn = _MODULES.get(var + qdouble)
    if attn is None:
        attn = _MODULES[var + qdouble] = tilelang.compile("use std::attention::*;\n")
    bh, s, d = 512, 1024, 64
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(s + d)
    q, k, v = (torch.randn(bh, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    attn.flash_attention[dtype, 128, 128, d](tilelang.partition(o, [1, 128, d]), q, k, v, d**-0.5, causal).sync()
    want = torch.empty(bh, s, d, device="cuda")
    keep = torch.arange(s, device="cuda")[None, :] <= torch.arange(s, device="cuda")[:, None]
    for h0 in range(0, bh, 64):
        sc = torch.einsum("bqd,bkd->bqk", q[h0:h0 + 64].float(), k[h0:h0 + 64].float()) * d**-0.5
        if causal:
            sc = sc.masked_fill(~keep, float("-inf"))
        want[h0:h0 + 64] = torch.softmax(sc, dim=-1) @ v[h0:h0 + 64].float()
    qblocks = s // 128
    err = (o.float() - want).abs().view(bh, qblocks, 128 * d)
    nan = err.isnan().any(-1)
    bad = err.nan_to_num(0.0).amax(-1) > 1e-2 * float(want.abs().max())
    n = min(bh * qblocks, sms or torch.cuda.get_device_properties(0).multi_processor_count)
    count = collections.Counter(walk_place(h, b, qblocks, n, causal)[0] for h in range(bh) for b in range(qblocks))
    places = [(int(h), int(b), *walk_place(int(h), int(b), qblocks, n, causal))
              for h, b in (nan | bad).nonzero().tolist()]
    rel = float(err.nan_to_num(0.0).max() / want.abs().max())
    name = "qdouble" if var == "TILEC_ATTN_QDOUBLE" else var.removeprefix("TILEC_ATTN_").lower()
    line = (f"{name}={qdouble} {'causal' if causal else 'full'} ctas={n}: rel err {rel:.1e}, "
            f"{int(nan.sum())} tiles never stored, {int((bad & ~nan).sum())} stored wrong (of {bh * qblocks})")
    if places:
        ords = collections.Counter(r for *_, r in places)
        tot = collections.Counter(count[c] for _, _, c, _ in places)
        line += (f"\n  ordinals in their CTA's walk: {dict(sorted(ords.items())[:12])}; their CTAs' tile counts: "
                 f"{dict(tot)}; first (head, qblock, cta, ordinal): {places[:6]}")
    return line


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", default="0,66,8", help="CTA counts with QDOUBLE=1, 0 = the card's SMs")
    ap.add_argument("--sms0", default="0", help="CTA counts with QDOUBLE=0 (the control)")
    ap.add_argument("--dtype", default="f16")
    ap.add_argument("--var", default="TILEC_ATTN_QDOUBLE",
                    help="the switch set to 1 (--sms) and 0 (--sms0), e.g. TILEC_ATTN_XROT (h15w)")
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("qdouble_check: no torch", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("qdouble_check: no CUDA device", file=sys.stderr)
        return 1
    import tilelang

    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_ROTATE", "TILEC_ATTN_PINGPONG", "TILEC_ATTN_SCHEDULE",
                "TILEC_ATTN_KVFIRST", "TILEC_ATTN_OSTORE", "TILEC_ATTN_STAMPS"):
        os.environ.pop(var, None)
    for qd, counts in (("1", a.sms), ("0", a.sms0)):
        for causal in (False, True):
            for sms in (int(x) for x in counts.split(",") if x):
                print(run(torch, tilelang, qd, causal, sms, a.dtype, a.var), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
