"""Fill the compile cache with the PTX of every std::attention launch that
`tests/std/test_attention_gpu.py`, `benchmarks/attention.py --quick`,
`benchmarks/attention_sanitize.py` and the GPU test of
`examples/python/torch_attention.py` make, without a GPU.

    TILEC_CACHE_DIR=.dev/cache python benchmarks/attention_prewarm.py [--arch sm_90a ...] [--cubin sm_90]

The lent GPU is scarce and a big kernel takes seconds in LLVM: the device
run then finds the PTX in the carried cache (the same IR, specialisation
facts, target and llvmlite version make the same key) and only links cubins.
Each launch is lowered exactly as the runtime lowers it (`lower_kernel` on
the same program, instantiation and argument facts) and compiled with the
facts `CudaDevice` derives from PyTorch tensors: 16-byte aligned bases,
dims divisible by 16 or not, bf16 in its own 2-byte memory.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tilelang  # noqa: E402
from tilelang.backend import compile_kernel  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.target import Target  # noqa: E402
from tilelang.dtypes import DType  # noqa: E402
from tilelang.ir.lower import lower_kernel  # noqa: E402
from tilelang.runtime.launch import ArgFact  # noqa: E402

BENCH_BLOCKS = (128, 128)  # (BM, BN) of benchmarks/attention.py's `blocks()` on a GPU
SMS = 132  # the H200's SM count (benchmarks/attention.py sizes decode splits by it)
PDL = "+pdl"  # a launch's kernel name with this suffix: compiled for programmatic dependent launch
PDL_ENTRY = "+pdl@entry"  # the same with the trigger at the kernel's entry (`--fixed` times both)
SHORT_ROWS = 2048  # launches of other rows up to this many are compiled apart (`facts.Short`: a variant)
Param = tuple[str, DType, tuple[int, ...], "tuple[int, ...] | None"]


def prefill(dtype: str, bh: int, hkv: int, sq: int, sk: int, d: int, bm: int, bn: int,
            lse: bool) -> tuple[str, dict[str, Any], list[Param]]:
    t = DType.parse(dtype)
    assert t is not None
    ps: list[Param] = [("o", t, (bh, sq, d), (1, bm, d))]
    if lse:
        ps.append(("lse", DType.F32, (bh, sq), (1, bm)))
    ps += [("q", t, (bh, sq, d), None), ("k", t, (hkv, sk, d), None), ("v", t, (hkv, sk, d), None)]
    return ("flash_attention_lse" if lse else "flash_attention"), {"T": t, "BM": bm, "BN": bn, "D": d}, ps


def decode(dtype: str, bhkv: int, grp: int, smax: int, d: int, bn: int, splits: int, ns: int,
           varlen_b: int | None = None, dc: int | None = None,
           fused: tuple[int, ...] = (), tc: bool = False) -> list[tuple[str, dict[str, Any], list[Param]]]:
    t = DType.parse(dtype)
    assert t is not None
    split: list[Param] = [("o_part", DType.F32, (bhkv, splits * grp, d), (1, grp, d)),
                          ("lse_part", DType.F32, (bhkv, splits * grp), (1, grp)),
                          ("q", t, (bhkv, grp, d), None), ("k", t, (bhkv, smax, d), None),
                          ("v", t, (bhkv, smax, d), None)]
    dc = dc or d
    comb: list[Param] = [("o", t, (bhkv, grp, d), (1, grp, dc)),
                         ("o_part", DType.F32, (bhkv, splits * grp, d), None),
                         ("lse_part", DType.F32, (bhkv, splits * grp), None)]
    out = [("decode_split", {"T": t, "G": grp, "BN": bn, "D": d}, split),
           ("decode_combine", {"T": t, "G": grp, "NS": ns, "DC": dc}, comb)]
    if varlen_b is not None:
        out.append(("decode_split_varlen", {"T": t, "G": grp, "BN": bn, "D": d},
                    [*split, ("cache_lens", DType.I32, (varlen_b,), None)]))
    if tc:  # `decode_split_tc`: one block a (KV head, share), 64-row tiles of [B * Hkv * splits, G, ..]
        out.append(("decode_split_tc", {"T": t, "BN": bn, "D": d},
                    [("o_part", DType.F32, (bhkv * splits, grp, d), (1, 64, d)),
                     ("lse_part", DType.F32, (bhkv * splits, grp), (1, 64)), *split[2:]]))
    for nc in fused:  # `decode_fused` merging nc shares a step (the split's params and the group's output)
        out.append(("decode_fused", {"T": t, "G": grp, "BN": bn, "D": d, "NS": ns, "NC": nc},
                    [*split[:2], ("o", t, (bhkv, grp, d), (1, grp, d)), *split[2:]]))
    return out


def bench_rows(rows: list[str], blocks: tuple[int, int], kernel: str) -> list[tuple[str, dict[str, Any], list[Param]]]:
    """benchmarks/attention.py's prefill rows of `rows` (e.g. ["f16-64"]) only,
    with blocks `blocks` and kernel `kernel` (`flash_attention` or a variant:
    its ATTN_BLOCKS and ATTN_PREFILL settings)."""
    out = []
    for row in rows:
        dtype, d = row.split("-")
        for s in (1024, 4096, 16384):
            h, b = 2048 // int(d), 16384 // s
            _, inst, ps = prefill(dtype, b * h, b * h, s, s, int(d), *blocks, False)
            out.append((kernel, inst, ps))
    return out


def test_paths() -> None:
    """Put the test modules `launches` reads its cases from on `sys.path`, with
    their shared helpers (`tests/`: `ptxas_report`), as pytest's conftest does."""
    for sub in ("tests", "tests/std", "tests/backend"):
        sys.path.insert(0, str(ROOT / sub))


def launches() -> list[tuple[str, dict[str, Any], list[Param]]]:
    test_paths()
    import test_attention_gpu as gpu_tests
    import test_decode_tc_pipeline as tc_tests

    out = []
    for case in gpu_tests.PREFILL:
        dtype, bh, hkv, sq, sk, d, _causal = case
        bm, bn = gpu_tests.blocks(case)
        out += [prefill(dtype, bh, hkv, sq, sk, d, bm, bn, lse) for lse in (True, False)]
    for dtype, b, hkv, grp, smax, _clen, d, bn, splits, dc in gpu_tests.DECODE:
        ns = 1 << (splits - 1).bit_length()
        out += decode(dtype, b * hkv, grp, smax, d, bn, splits, ns, varlen_b=b, dc=dc, fused=(min(8, ns),))
    for dtype, (bm, bn) in zip(("f16", "bf16"), gpu_tests.BLOCKS, strict=True):  # test_four_d_tensors_in_place_with_a_scale
        out.append(prefill(dtype, 16, 4, 333, 333, 64, bm, bn, False))
    # benchmarks/attention.py's prefill rows (S = 1024, 4096, 16384; 16k tokens; its blocks)
    for dtype in ("f16", "bf16"):
        for d in (128, 64):
            for s in (1024, 4096, 16384):
                h, b = 2048 // d, 16384 // s
                out.append(prefill(dtype, b * h, b * h, s, s, d, *BENCH_BLOCKS, False))
    # the decode rows: the example's plan and the --sweep plans (the default's
    # kernels also as `--fixed` compiles them, for programmatic dependent launch)
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import attention as bench
    from decode_plan import combine_ns, decode_plan, fused_nc

    for batch in (1, 8):
        for ctx in (8192, 32768):
            for i, (variant, (bn, splits, dc)) in enumerate(bench.sweep_plans(batch, ctx, SMS)):
                fused = (fused_nc(splits),) if i == 0 else ()
                for name, inst, ps in decode("bf16", batch * 8, 4, ctx, 128, bn, splits, combine_ns(splits), dc=dc,
                                             fused=fused, tc=i == 0):
                    split_v, _, comb_v = variant.partition("c:")
                    if name == "decode_split" and split_v not in ("std", ""):
                        name = f"decode_split_{split_v}"
                    if name == "decode_combine" and comb_v:
                        name = f"decode_combine_{comb_v}"
                    out.append((name, inst, ps))
                    if i == 0 and name != "decode_fused":
                        out += [(name + PDL, inst, ps), (name + PDL_ENTRY, inst, ps)]
    # examples/python/torch_attention.py as tests/api/test_api_gpu.py runs it (B=2, 8/2 heads,
    # D=64, a prompt of S=300, then decoding steps over a cache of 303)
    out.append(prefill("bf16", 16, 4, 300, 300, 64, 128, 64, False))
    bn, splits, dc = decode_plan(4, 4, 300, 64, SMS)
    out += decode("bf16", 4, 4, 303, 64, bn, splits, combine_ns(splits), dc=dc, tc=True)
    # tests/backend/test_decode_tc_pipeline.py's GPU test
    for batch, smax, _clen, splits, bn in tc_tests.GPU_CASES:
        out += decode("bf16", batch * 8, 4, smax, 128, bn, splits, combine_ns(splits), dc=32, tc=True)
    # benchmarks/attention_sanitize.py
    out.append(prefill("f16", 4, 2, 200, 200, 64, 64, 64, True))
    out.append(prefill("f16", 2, 2, 150, 90, 128, 64, 64, True))
    out += decode("f16", 4, 4, 384, 128, 64, 8, 8, dc=32, fused=(4,))
    out += decode("f16", 4, 4, 384, 128, 64, 3, 4, dc=32, tc=True)
    out += decode("f16", 4, 4, 384, 128, 32, 4, 4, varlen_b=2, fused=(4,))
    return out


def floor_launches() -> list[tuple[str, dict[str, Any], list[Param]]]:
    """benchmarks/decode_floor.py's launches: at each decode shape the
    library's pair (the example's plan), `decode_split_wg` at its two split
    counts with std's merge, `decode_read`; and its `--check` step."""
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import math

    from decode_plan import combine_ns, decode_plan

    t, f32, d, grp, m = DType.parse("bf16"), DType.F32, 128, 4, 64
    assert t is not None
    out: list[tuple[str, dict[str, Any], list[Param]]] = []

    def wg(rows: int, smax: int, ns: int, dc: int, kernel: str = "decode_split_wg", bn: int = 64) -> None:
        out.append((kernel, {"T": t, "G": grp, "M": m, "BN": bn, "D": d},
                    [("o_part", f32, (rows * ns, grp, d), (1, m, d)), ("lse_part", f32, (rows * ns, grp), (1, m)),
                     ("q", t, (rows, grp, d), None), ("k", t, (rows, smax, d), None), ("v", t, (rows, smax, d), None)]))
        out.append(("decode_combine", {"T": t, "G": grp, "NS": combine_ns(ns), "DC": dc},
                    [("o", t, (rows, grp, d), (1, grp, dc)), ("o_part", f32, (rows, ns * grp, d), None),
                     ("lse_part", f32, (rows, ns * grp), None)]))

    for batch in (1, 8):
        for ctx in (8192, 32768):
            rows = batch * 8
            bn, splits, dc = decode_plan(rows, grp, ctx, d, SMS)
            out += decode("bf16", rows, grp, ctx, d, bn, splits, combine_ns(splits), dc=dc,
                          fused=(min(8, combine_ns(splits)),))
            out.append(("decode_read", {"T": t, "BN": bn, "D": d},
                        [("out", f32, (rows, splits), (1, 1)), ("k", t, (rows, ctx, d), None),
                         ("v", t, (rows, ctx, d), None)]))
            for ns in (max(1, SMS // rows), min(64, SMS // math.gcd(rows, SMS))):
                dcw = d
                while combine_ns(ns) * grp * dcw > 1024 and dcw % 16 == 0:
                    dcw //= 2
                wg(rows, ctx, ns, dcw)
            ns = max(1, SMS // rows)  # --round2: BN 128 at one share an SM, std at BN 32 filling 3 blocks an SM
            dcw = d
            while combine_ns(ns) * grp * dcw > 1024 and dcw % 16 == 0:
                dcw //= 2
            wg(rows, ctx, ns, dcw, "decode_split_wgl", 128)
            bn3, splits3, dc3 = decode_plan(rows, grp, ctx, d, SMS, bn=32, blocks_per_sm=3)
            out += decode("bf16", rows, grp, ctx, d, bn3, splits3, combine_ns(splits3), dc=dc3)
    for ctx in (8192, 32768):  # decode_floor.py --shares: std's decode_split_tc at batch 1
        for ns in (16, 32, 33, 64, 66):
            out += [x for x in decode("bf16", 8, grp, ctx, d, 64, ns, combine_ns(ns), tc=True)
                    if x[0] == "decode_split_tc"]
            dcw = d
            while combine_ns(ns) * grp * dcw > 1024 and dcw % 16 == 0:
                dcw //= 2
            out += [x for x in decode("bf16", 8, grp, ctx, d, 64, ns, combine_ns(ns), dc=dcw)
                    if x[0] == "decode_combine"]
    for ns in (3, 8):  # decode_floor.py --check
        wg(16, 1024, ns, 32)
    wg(16, 1024, 3, 32, "decode_split_wgl", 128)
    out.append(("decode_read", {"T": t, "BN": 64, "D": d},
                [("out", f32, (16, 4), (1, 1)), ("k", t, (16, 1024, d), None), ("v", t, (16, 1024, d), None)]))
    return out


def _cache_cubin(ptx: str, arch: str, name: str) -> None:
    """Assemble `ptx` with the local ptxas for the arch the runtime links it as
    on a device of `arch` (`runtime.cuda.link_arch`: sm_90a for wgmma kernels)
    and cache it under the key the runtime looks up."""
    import subprocess
    import tempfile

    from tilelang.runtime import cache as cache_mod
    from tilelang.runtime.cuda import link_arch

    target = link_arch(ptx, arch)
    key = cache_mod.make_key("cubin", ptx, target, code=cache_mod.step_key(*cache_mod.CUBIN_STEP))
    cache = cache_mod.default_cache()
    if cache.get(key) is not None:
        return
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx)
        subprocess.run(["ptxas", f"-arch={target}", "-O3", str(src), "-o", str(out)], check=True)
        cache.put(key, out.read_bytes(), {"kind": "cubin", "arch": target, "name": name})


_PROGRAM: Any = None
_VARIANTS: Any = None  # benchmarks/attention_variants.tile: kernels decode_split_<variant>


def _compile_one(job: tuple[str, dict[str, Any], list[Param], list[str], str | None]) -> str:
    kernel, inst, params, archs, cubin = job
    trigger = "entry" if kernel.endswith(PDL_ENTRY) else "late"
    pdl = kernel.endswith((PDL, PDL_ENTRY))
    kernel = kernel.removesuffix(PDL_ENTRY).removesuffix(PDL)
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    arg_facts = {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params}
    if (kernel.startswith(("decode_split_", "decode_combine_", "flash_attention_", "decode_read"))
            and kernel not in ("decode_split_varlen", "decode_split_tc", "flash_attention_lse")):
        kir = lower_kernel(_VARIANTS, kernel, inst, arg_facts)
    else:
        kir = lower_kernel(_PROGRAM, f"std::attention::{kernel}", inst, arg_facts)
    lines = []
    for arch in archs:
        t = time.perf_counter()
        tgt = Target(arch, pdl=True, pdl_trigger=trigger) if pdl else arch
        ck = compile_kernel(kir, tgt, facts)
        if cubin:
            _cache_cubin(ck.ptx, cubin, kernel)
        # the variant the runtime picks where the kernel asks for a fact this launch's shape has
        more = ck.abi.short.refine(facts, next(p[2] for p in params if p[0] == ck.abi.short.param)) \
            if ck.abi.short is not None else None
        if more is not None:
            ck = compile_kernel(kir, tgt, more)
            if cubin:
                _cache_cubin(ck.ptx, cubin, kernel)
        # the variants a launch's walk picks (`split_form.SplitForm`): `TILEC_ATTN_SPLIT_FORMS=1`'s split forms
        # ("single", "pairs"), the causal tail variant ("tail", `attention_tail`), each for the launches it holds for
        for kind, _ in (ck.abi.split.ons if ck.abi.split is not None else ()):
            sk = compile_kernel(kir, tgt, ck.abi.split.refine(facts, kind))
            if cubin:
                _cache_cubin(sk.ptx, cubin, kernel)
        lines.append(f"{kernel} {inst} {arch}: {time.perf_counter() - t:.1f} s")
    return "\n".join(lines)


def job_key(kernel: str, inst: dict[str, Any], params: list[Any]) -> tuple[str, ...]:
    """What makes two launches one compile: the kernel, its generics, each
    tensor's facts, and each tensor's rows (the dimension before the last)
    up to SHORT_ROWS (`facts.Short` picks a variant by them; a 1-D tensor
    has none)."""
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    rows = sorted((n, min(shape[-2], SHORT_ROWS + 1) if len(shape) >= 2 else 0) for n, _, shape, _ in params)
    return (kernel, str(sorted(inst.items(), key=str)), str(sorted((n, f.key()) for n, f in facts.items())),
            str(rows))


def main(argv: list[str] | None = None) -> int:
    global _PROGRAM, _VARIANTS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", action="append", default=None,
                    help="target(s), default sm_90a (what the runtime compiles for on an H100/H200)")
    ap.add_argument("--cubin", default=None, metavar="SM",
                    help="also assemble each PTX with the local ptxas for this device arch (sm_90) and "
                         "cache the cubin under the key the CUDA runtime looks up (no nvJitLink needed)")
    ap.add_argument("--only", choices=("prefill", "decode", "floor", "forms"), default=None,
                    help="only the flash_attention launches (prefill) or only the others (decode), or "
                         "only benchmarks/decode_floor.py's (floor) or benchmarks/decode_forms.py's (forms)")
    ap.add_argument("--jobs", type=int, default=1, help="compile in this many processes (on the device: its cores)")
    ap.add_argument("--bench-rows", default=None, metavar="ROWS",
                    help="only benchmarks/attention.py's prefill rows of these dtype-D, comma-separated "
                         "(e.g. f16-128,f16-64), with --bench-blocks and --bench-variant")
    ap.add_argument("--bench-blocks", default="128x128", help="with --bench-rows: BMxBN (ATTN_BLOCKS)")
    ap.add_argument("--bench-variant", default=None,
                    help="with --bench-rows: flash_attention_NAME of attention_variants.tile (ATTN_PREFILL)")
    a = ap.parse_args(argv)
    archs = a.arch or ["sm_90a"]
    _PROGRAM = tilelang.compile("use std::attention::*;\n")._program
    _VARIANTS = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))._program
    seen: set[tuple[str, ...]] = set()
    jobs = []
    t0 = time.perf_counter()
    if a.bench_rows:
        bm, bn = (int(x) for x in a.bench_blocks.split("x"))
        kname = f"flash_attention_{a.bench_variant}" if a.bench_variant else "flash_attention"
        todo = bench_rows(a.bench_rows.split(","), (bm, bn), kname)
    elif a.only == "floor":
        todo = floor_launches()
    elif a.only == "forms":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import decode_forms

        todo = decode_forms.launches()
    else:
        todo = launches()
    for kernel, inst, params in todo:
        if a.only in ("prefill", "decode") and kernel.startswith("flash_attention") != (a.only == "prefill"):
            continue
        key = job_key(kernel, inst, params)
        if key not in seen:
            seen.add(key)
            jobs.append((kernel, inst, params, archs, a.cubin))
    if a.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(a.jobs) as pool:
            for line in pool.imap_unordered(_compile_one, jobs):
                print(line, flush=True)
    else:
        for job in jobs:
            print(_compile_one(job), flush=True)
    print(f"{len(seen)} launches prewarmed in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
