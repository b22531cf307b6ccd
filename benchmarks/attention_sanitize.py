"""Small runs of every std::attention kernel, for compute-sanitizer.

    compute-sanitizer --tool memcheck python benchmarks/attention_sanitize.py
    compute-sanitizer --tool racecheck python benchmarks/attention_sanitize.py

Shapes with edges everywhere (S not a multiple of either block, causal with
S_q > S_k, grouped-query, a cache length inside the last key block, more
splits than needed); NumPy arrays run on the GPU through copies (no PyTorch
to start under the sanitizer), and each result is checked against the NumPy
reference, so a kernel the sanitizer slows down still has to be right.
Exits 1 on a wrong result.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "std"))

import numpy as np  # noqa: E402
from attention_ref import attention  # noqa: E402

import tilelang  # noqa: E402

CASES = [
    # BH, BHkv, S_q, S_k, D, BM, BN, causal (f16)
    (4, 2, 200, 200, 64, 64, 64, True),
    (2, 2, 150, 90, 128, 64, 64, True),
    # two consumer warpgroups (BM = 128): the benchmark's kernels
    (2, 1, 300, 300, 128, 128, 128, False),
    (2, 2, 200, 333, 64, 128, 64, True),
    # not causal, an odd number of tiles: on 2 CTAs (TILEC_PERSISTENT_SMS=2) the last tile is split along its
    # keys with TILEC_ATTN_SPLIT=1 (the pieces' records, the counter, the merge)
    (3, 1, 300, 270, 64, 64, 64, False),
    (1, 1, 640, 300, 64, 128, 128, False),
    # D = 128 (the benchmark's kernel, keys past the short variant's 1,024): 5 tiles on 2 CTAs, the last split with
    # TILEC_ATTN_SPLIT_WIDE=1 (`tests/std/test_attention_bench.py` counts the cases)
    (1, 1, 640, 1100, 128, 128, 128, False),
    # causal, 5 query blocks: 3 pairs (a middle tile paired with itself) on 2 CTAs, the last cut along both tiles'
    # keys with TILEC_ATTN_SPLIT_FORMS=1 (the pairs form: two records and two arrivals a piece)
    (1, 1, 640, 640, 64, 128, 64, True),
]


def rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())


def main(argv: list[str] | None = None) -> int:
    """argv: [device] [decode]: "decode" runs the decode kernels only."""
    args = sys.argv[1:] if argv is None else argv
    attn = tilelang.compile("use std::attention::*;\n", device=args[0] if args else "gpu")
    rng = np.random.default_rng(0)
    bad = 0
    for bh, hkv, sq, sk, d, bm, bn, causal in ([] if "decode" in args[1:] else CASES):
        q = rng.standard_normal((bh, sq, d)).astype(np.float16)
        k = rng.standard_normal((hkv, sk, d)).astype(np.float16)
        v = rng.standard_normal((hkv, sk, d)).astype(np.float16)
        o = np.zeros_like(q)
        lse = np.zeros((bh, sq), np.float32)
        attn.flash_attention_lse["f16", bm, bn, d](
            tilelang.partition(o, [1, bm, d]), tilelang.partition(lse, [1, bm]), q, k, v, d**-0.5, causal
        ).sync()
        err = rel_err(o, attention(q, k, v, d**-0.5, causal))
        print(f"flash_attention_lse f16 {bh}x{sq}x{d} kv {hkv}x{sk} causal={causal}: err {err:.1e}")
        bad += not err < 1e-2
    # decode: 2 sequences x 2 KV heads x 4 query heads, cache 300 of 384 (the
    # last key block partly valid), garbage (NaN) past it; the merge by column
    # chunks; the per-sequence lengths on the device
    b, hkv, grp, smax, clen, d = 2, 2, 4, 384, 300, 128
    q = rng.standard_normal((b * hkv, grp, d)).astype(np.float16)
    k = rng.standard_normal((b * hkv, smax, d)).astype(np.float16)
    v = rng.standard_normal((b * hkv, smax, d)).astype(np.float16)
    k[:, clen:] = np.nan
    v[:, clen:] = np.nan
    want = attention(q.reshape(-1, 1, d), k, v, d**-0.5, False, cache_len=clen).reshape(q.shape)
    for bn, splits, dc, varlen in ((64, 8, 32, False), (32, 4, 128, True)):
        o_part = np.zeros((b * hkv, splits * grp, d), np.float32)
        lse_part = np.zeros((b * hkv, splits * grp), np.float32)
        o = np.zeros_like(q)
        parts = (tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]), q, k, v)
        if varlen:
            attn.decode_split_varlen["f16", grp, bn, d](*parts, np.full(b, clen, np.int32), d**-0.5).sync()
        else:
            attn.decode_split["f16", grp, bn, d](*parts, clen, d**-0.5).sync()
        attn.decode_combine["f16", grp, splits, dc](tilelang.partition(o, [1, grp, dc]), o_part, lse_part).sync()
        err = rel_err(o, want)
        print(f"decode_split{'_varlen' if varlen else ''} + decode_combine f16 B={b} ctx {clen}/{smax} "
              f"BN={bn} {splits} splits DC={dc}: err {err:.1e}")
        bad += not err < 1e-2
        # the same in one launch: the merge by each KV head's last block (`if last_block(1)`)
        of = np.zeros_like(q)
        attn.decode_fused["f16", grp, bn, d, splits, 4](*parts[:2], tilelang.partition(of, [1, grp, d]),
                                                        *parts[2:], clen, d**-0.5).sync()
        err = rel_err(of, want)
        print(f"decode_fused f16 B={b} ctx {clen}/{smax} BN={bn} {splits} splits NC=4: err {err:.1e}")
        bad += not err < 1e-2
    # the split on tensor cores (`decode_split_tc`: TMA ring, wgmma, V's rows
    # past cache_len zeroed in shared memory), 3 shares a KV head, std's merge
    splits = 3
    o_part = np.zeros((b * hkv, splits * grp, d), np.float32)
    lse_part = np.zeros((b * hkv, splits * grp), np.float32)
    o = np.zeros_like(q)
    attn.decode_split_tc["f16", 64, d](tilelang.partition(o_part.reshape(-1, grp, d), [1, 64, d]),
                                       tilelang.partition(lse_part.reshape(-1, grp), [1, 64]), q, k, v, clen,
                                       d**-0.5, splits).sync()
    attn.decode_combine["f16", grp, 4, 32](tilelang.partition(o, [1, grp, 32]), o_part, lse_part).sync()
    err = rel_err(o, want)
    print(f"decode_split_tc + decode_combine f16 B={b} ctx {clen}/{smax} BN=64 {splits} splits: err {err:.1e}")
    bad += not err < 1e-2
    # the same merge launched with programmatic dependent launch (trigger "late"),
    # as examples/python/torch_attention.py launches it on sm_90 (`merge_pdl`);
    # compiled in a module of its own (a kernel keeps the launcher of its first run)
    from tilelang.runtime import cuda_pdl

    with cuda_pdl.scoped(True, "late"):
        o2 = np.zeros_like(q)
        pdl_attn = tilelang.compile("use std::attention::decode_combine;\n", device=args[0] if args else "gpu")
        pdl_attn.decode_combine["f16", grp, 4, 32](
            tilelang.partition(o2, [1, grp, 32]), o_part, lse_part).sync()
    err = rel_err(o2, want)
    print(f"decode_combine with PDL (late) after decode_split_tc f16: err {err:.1e}, "
          f"same as without: {bool(np.array_equal(o2, o))}")
    bad += not (err < 1e-2 and np.array_equal(o2, o))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
