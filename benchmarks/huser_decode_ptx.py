"""SHA-256 of the PTX of std::attention's decode kernels (huser, 2026-12-05).

`#[requires(..)]` is checked on the host at each launch and never compiled
into a kernel; this prints a hash of each decode kernel's PTX so that two
trees (before and after a change to the attributes of `stdlib/std/attention.tile`)
can be compared: `python benchmarks/huser_decode_ptx.py` (CPU only, ~1 min),
one line a kernel instance, `<sha256[:16]> <kernel> <generics> <arch>`.
2026-12-05 12:35: main c09c3f8 and branch huser give the same 40 lines
(decode_split/_varlen/_fused/_tc and decode_combine, f16/bf16).
`python benchmarks/huser_decode_ptx.py prefill` hashes flash_attention and
flash_attention_lse (18 lines), `all` both sets. 2026-12-05 14:50 (round 8: their
`#[requires(..)]`, `cdiv_wrapping`): main 71b6f46 and branch huser8 give the same 58.
"""

from __future__ import annotations

import hashlib
import itertools
import sys

import tilelang
from tilelang.backend import emit_ptx
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

F32 = DType.F32


def _facts(params):  # type: ignore[no-untyped-def]
    return {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}


def cases():  # type: ignore[no-untyped-def]
    bhkv, smax, splits = 8, 8192, 16
    for dtype in ("f16", "bf16"):
        t = DType.parse(dtype)
        for g, bn, d in ((4, 32, 64), (4, 64, 128), (8, 64, 128)):
            split = [("o_part", F32, (bhkv, splits * g, d), (1, g, d)), ("lse_part", F32, (bhkv, splits * g), (1, g)),
                     ("q", t, (bhkv, g, d), None), ("k", t, (bhkv, smax, d), None), ("v", t, (bhkv, smax, d), None)]
            yield "decode_split", {"T": t, "G": g, "BN": bn, "D": d}, split, ("sm_90a", "sm_80")
            lens = [("cache_lens", DType.I32, (2,), None)]
            yield "decode_split_varlen", {"T": t, "G": g, "BN": bn, "D": d}, split + lens, ("sm_90a",)
            fused = split[:2] + [("o", t, (bhkv, g, d), (1, g, d))] + split[2:]
            yield "decode_fused", {"T": t, "G": g, "BN": bn, "D": d, "NS": 16, "NC": 8}, fused, ("sm_90a",)
            for ns, dc in ((4, d), (16, 16)):
                comb = [("o", t, (bhkv, g, d), (1, g, dc)), ("o_part", F32, (bhkv, splits * g, d), None),
                        ("lse_part", F32, (bhkv, splits * g), None)]
                yield "decode_combine", {"T": t, "G": g, "NS": ns, "DC": dc}, comb, ("sm_90a",)
        for bn, d in ((64, 64), (64, 128)):
            tc = [("o_part", F32, (bhkv * splits, 4, d), (1, 64, d)), ("lse_part", F32, (bhkv * splits, 4), (1, 64)),
                  ("q", t, (bhkv, 4, d), None), ("k", t, (bhkv, smax, d), None), ("v", t, (bhkv, smax, d), None)]
            yield "decode_split_tc", {"T": t, "BN": bn, "D": d}, tc, ("sm_90a",)


def prefill_cases():  # type: ignore[no-untyped-def]
    """flash_attention and flash_attention_lse (round 8: their `#[requires(..)]`)."""
    bh, bhkv, s = 16, 4, 4096
    for dtype in ("f16", "bf16"):
        t = DType.parse(dtype)
        for bm, bn, d in ((64, 64, 64), (128, 128, 128), (128, 64, 128)):
            o = [("o", t, (bh, s, d), (1, bm, d))]
            qkv = [("q", t, (bh, s, d), None), ("k", t, (bhkv, s, d), None), ("v", t, (bhkv, s, d), None)]
            gen = {"T": t, "BM": bm, "BN": bn, "D": d}
            yield "flash_attention", gen, o + qkv, ("sm_90a", "sm_80")
            yield "flash_attention_lse", gen, o + [("lse", F32, (bh, s), (1, bm))] + qkv, ("sm_90a",)


def main() -> None:
    mod = tilelang.compile("use std::attention::{decode_split, decode_split_varlen, decode_fused, decode_split_tc, "
                           "decode_combine, flash_attention, flash_attention_lse};\n")
    if sys.argv[1:] == ["prefill"]:
        todo = prefill_cases()
    elif sys.argv[1:] == ["all"]:
        todo = itertools.chain(cases(), prefill_cases())
    else:
        todo = cases()
    for name, inst, params, archs in todo:
        kir = lower_kernel(mod._program, name, inst, {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        for arch in archs:
            ptx = emit_ptx(kir, arch, _facts(params))
            gen = ",".join(f"{k}={v.value if isinstance(v, DType) else v}" for k, v in inst.items())
            print(hashlib.sha256(ptx.encode()).hexdigest()[:16], name, gen, arch, flush=True)


if __name__ == "__main__":
    sys.exit(main())
