"""Where a persistent attention prefill tile's time goes, from cycle stamps
inside the kernel (issue 15: the tile boundary at S = 1024).

    TILEC_ATTN_STAMPS=1 python benchmarks/probes/attention_stamps.py [--rows f16-128-full-1024,...] [--out DIR]

With `TILEC_ATTN_STAMPS=1` the attention pass puts `g.Stamp`s (the SM's
`%clock64`, written by each warpgroup's first thread into the module's
`tilec_stamps` table; `codegen/stamps.py`) at these points of every tile of
the persistent walk:

    consumers (warpgroups 0, 1)          producer (its warpgroup)
    0 the tile's top                     0 the tile's top
    1 its position and bounds computed   1 the same
    2 Q in (its mbarrier wait returned)  2 the Q buffer free (the consumers' release)
    3 the first block's iteration done   3 Q's copy issued
    4 the key loop done                  4 its K/V loop issued
    5 the last P V's wait returned
    6 the tile's end (epilogue done)

and with `TILEC_ATTN_STAMPS=2`, inside the chained tile's first iteration (`FINE`): 13 its first stage in,
8 S(0) and the pending P V issued, 9 S(0) in, 10 its softmax and the spin on the next stage done, 11 the
pending P V in, 12 the previous tile's epilogue done (14, 15: the second iteration's issue and epilogue with
`TILEC_ATTN_CHAIN_EPI2=1`).

Per row (one launch after warm-ups; every CTA, the tiles after each CTA's
first and before its last), the median cycles of each phase, the tile's total
(top to the next top) and the cycles that are not the key loop, also in key
blocks (the loop's cycles over its blocks). The stamped kernel's time (CUDA
events) beside the row's unstamped time from another process says what the
stamps cost. Writes `stamps.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tilelang.backend.codegen import stamps as S  # noqa: E402

PHASES = [("walk", 0, 1), ("q_wait", 1, 2), ("first_block", 2, 3), ("loop", 3, 4), ("last_pv", 4, 5),
          ("epilogue", 5, 6)]
# `TILEC_ATTN_STAMPS=2`: inside the chained tile's first iteration (slots 8-13; 14-15 the second iteration's with
# `TILEC_ATTN_CHAIN_EPI2=1`), in the order they run; a tile whose first iteration did not run has none
FINE = [("f_stage0_wait", 2, 13), ("f_issue", 13, 8), ("f_s0_wait", 8, 9), ("f_softmax_spin", 9, 10),
        ("f_prev_pv_wait", 10, 11), ("f_prev_epilogue", 11, 12)]
FINE_TAIL = [("f_rest", 12, 3)]  # (without the second iteration's stamps)
FINE_EPI2 = [("f_rest_issue2", 12, 14), ("f2_prev_epilogue", 14, 15), ("f2_rest", 15, 3)]


def table(zero: bool = False) -> np.ndarray | None:
    """Zero the stamp table of every loaded module that has one, or read the
    one with stamps (zero them all before the launch: the last launch's)."""
    from tilelang.runtime import cuda
    from tilelang.runtime.cuda_driver import _check

    ctx = cuda.context()
    d = ctx.d
    for mod in list(ctx._modules.values()):
        err, dptr, size = d.cuModuleGetGlobal(mod.handle, S.GLOBAL.encode())
        if err != d.CUresult.CUDA_SUCCESS:
            continue
        buf = np.zeros(S.ENTRIES, "<u8")
        assert int(size) == buf.nbytes, size
        if zero:
            _check(d.cuMemcpyHtoD(dptr, buf.ctypes.data, buf.nbytes), "cuMemcpyHtoD")
            continue
        _check(d.cuCtxSynchronize(), "cuCtxSynchronize")
        _check(d.cuMemcpyDtoH(buf.ctypes.data, dptr, buf.nbytes), "cuMemcpyDtoH")
        if buf.any():
            return buf.reshape(S.CTAS, S.TILES, S.UNITS, S.SLOTS).astype(np.int64)
    return None


def analyse(t: np.ndarray, ctas: int, blocks: int, consumers: int) -> dict:
    """Median phase cycles over the middle tiles of every CTA."""
    out: dict = {}
    for u in range(consumers + 1):
        name = f"wg{u}" if u < consumers else "producer"
        rows: dict[str, list[int]] = {}
        for c in range(ctas):
            n = int((t[c, :, u, 0] > 0).sum())
            for i in range(1, n - 1):
                s = t[c, i, u]
                nxt = t[c, i + 1, u, 0]
                rows.setdefault("tile", []).append(int(nxt - s[0]))
                if u < consumers:
                    for ph, a, b in PHASES:
                        rows.setdefault(ph, []).append(int(s[b] - s[a]))
                    if S.SLOTS > 15 and (s[8:14] > 0).all():  # `TILEC_ATTN_STAMPS=2`, the first iteration ran
                        for ph, a, b in FINE + (FINE_EPI2 if (s[14:16] > 0).all() else FINE_TAIL):
                            rows.setdefault(ph, []).append(int(s[b] - s[a]))
                    rows.setdefault("to_next", []).append(int(nxt - s[6]))
                    if u > 0:  # how far this warpgroup's tile starts after warpgroup 0's (same SM clock):
                        # near 0, both meet the tile boundary together (their key loops share the ring's stages)
                        rows.setdefault("lag_vs_wg0", []).append(int(s[0] - t[c, i, 0, 0]))
                    # the producer's points against this warpgroup's, in the same SM's clock
                    p = t[c, i, consumers]
                    rows.setdefault("q_issued_to_q_in", []).append(int(s[2] - p[3]))
                    rows.setdefault("prev_loop_end_to_q_free", []).append(int(p[2] - t[c, i - 1, u, 4]))
                else:
                    for ph, a, b in (("walk", 0, 1), ("q_free_wait", 1, 2), ("q_copy", 2, 3), ("kv_loop", 3, 4)):
                        rows.setdefault(ph, []).append(int(s[b] - s[a]))
        med = {k: statistics.median(v) for k, v in rows.items() if v}
        if u < consumers and med.get("loop") and blocks > 1:
            per = med["loop"] / (blocks - 1)  # the loop after the first block's iteration
            med["block"] = per
            med["outside_loop_blocks"] = (med["tile"] - med["loop"]) / per - 1
        med["samples"] = len(rows.get("tile", []))
        out[name] = med
    return out


def probe(spec: str, reps: int) -> dict:
    import torch
    from attention import blocks, time_ms

    import tilelang

    dtype, d_s, mode, s_s = spec.split("-")
    d, s, causal = int(d_s), int(s_s), mode == "causal"
    h, b = 2048 // d, max(1, 16384 // s)
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    g = torch.Generator(device="cuda").manual_seed(s + d)
    q, k, v = (torch.randn(b * h, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    bm, bn = blocks(d, "cuda")
    kern = tilelang.compile("use std::attention::*;\n").flash_attention[dtype, bm, bn, d]

    def run():  # type: ignore[no-untyped-def]
        return kern(tilelang.partition(o, [1, bm, d]), q, k, v, d**-0.5, causal).launch()

    ms = time_ms(run, reps, "cuda")
    torch.cuda.synchronize()
    table(zero=True)
    run().wait()
    t = table()
    assert t is not None, "no stamp table: run with TILEC_ATTN_STAMPS=1"
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    res = analyse(t, min(sms, S.CTAS), -(-s // bn), bm // 64)
    row = {"row": spec, "stamped_us": ms * 1e3, **res}
    print(f"{spec}: stamped kernel {ms * 1e3:.1f} us", flush=True)
    for name, med in res.items():
        print(f"  {name}: " + ", ".join(f"{k} {v:.0f}" if k != "outside_loop_blocks" else f"{k} {v:.2f}"
                                        for k, v in med.items()), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rows", default="f16-128-full-1024,f16-128-full-4096,f16-64-full-1024")
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    if os.environ.get("TILEC_ATTN_STAMPS") not in ("1", "2"):
        sys.exit("set TILEC_ATTN_STAMPS=1 or 2 (the kernels are compiled with the stamps; 2: inside the chained "
                 "tile's first iteration too)")
    out = [probe(spec, args.reps) for spec in args.rows.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "stamps.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
