"""Check that `TILEC_STATIC_DIMS` (on by default, hstatic) changes nothing but the folded dimensions (CPU only).

    PYTHONPATH=. python benchmarks/static_dims_fold.py          # every kernel benchmarks/ptx_sha.py lists

For each kernel (std::attention's decode and prefill at ptx_sha's plans, every instance the LLM engine launches
at the Qwen3 shapes) it emits the LLVM text with `TILEC_STATIC_DIMS=0` and with the default, and compares the
default's with the first's body where each `%p.NAME.dK` of a `&Tensor` dimension the type fixes is replaced by
that constant. One line a kernel whose text changed ("folded only", and how many dims), "OTHER" where the two
differ in anything else (none, 2026-12-07: 20 kernels fold, ptx_sha's 20 changed lines; 47 unchanged; ~1 min
of CPU), and the totals.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("", "benchmarks", "examples/llm", "examples/python"):
    sys.path.insert(0, str(ROOT / sub))


import tilelang  # noqa: E402
from tilelang.backend import emit_llvm  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.ir.lower import lower_kernel  # noqa: E402
from tilelang.runtime.launch import ArgFact  # noqa: E402

DIM = re.compile(r"%p\.[A-Za-z0-9_]+\.d[0-9]+\b")


def compare(kir: ir.Kernel, facts: dict[str, TensorFacts]) -> tuple[str, int]:
    """("same" | "folded only" | "OTHER", how many dims fold)."""
    os.environ["TILEC_STATIC_DIMS"] = "0"
    off = emit_llvm(kir, "sm_90a", facts)
    del os.environ["TILEC_STATIC_DIMS"]
    on = emit_llvm(kir, "sm_90a", facts)
    consts = {f"%p.{p.name}.d{d}": str(n) for p in kir.params if isinstance(p, ir.TensorParam) and not p.mutable
              for d, n in enumerate(p.dims) if n is not None}
    if on == off:
        return "same", len(consts)
    head, body = off.split("{", 1)
    folded = head + "{" + DIM.sub(lambda m: consts.get(m.group(0), m.group(0)), body)
    return ("folded only" if folded == on else "OTHER"), len(consts)


def attention() -> list[tuple[str, ir.Kernel, dict[str, TensorFacts]]]:
    import attention_prewarm as ap
    from decode_plan import combine_ns, decode_plan, fused_nc

    prog = tilelang.compile("use std::attention::*;\n")._program
    todo = []
    for batch in (1, 8):
        for ctx in (8192, 32768):
            bn, splits, dc = decode_plan(batch * 8, 4, ctx, 128, 132)
            todo += ap.decode("bf16", batch * 8, 4, ctx, 128, bn, splits, combine_ns(splits), dc=dc,
                              fused=(fused_nc(splits),), tc=True, varlen_b=batch)
    for dt in ("f16", "bf16"):
        for d in (64, 128):
            todo.append(ap.prefill(dt, 16, 4, 1000, 1000, d, 128, 128, False))
    out, seen = [], set()
    for kernel, inst, params in todo:
        key = ap.job_key(kernel, inst, params)
        if key not in seen:
            seen.add(key)
            facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
            kir = lower_kernel(prog, f"std::attention::{kernel}", inst,
                               {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
            out.append((f"{kernel} {sorted((k, str(v)) for k, v in inst.items())}", kir, facts))
    return out


def engine() -> list[tuple[str, ir.Kernel, dict[str, TensorFacts]]]:
    from ptx_sha import engine_kernels

    return [(f"{name} {kir.name} {kir.instantiation}", kir, facts) for name, kir, facts in engine_kernels()]


if __name__ == "__main__":
    saved = os.environ.pop("TILEC_STATIC_DIMS", None)
    counts = {"same": 0, "folded only": 0, "OTHER": 0}
    for what, kir, facts in attention() + engine():
        verdict, n = compare(kir, facts)
        counts[verdict] += 1
        if verdict != "same":
            print(f"{verdict}: {what} ({n} dims)", flush=True)
    print(f"{counts['folded only']} kernels folded only, {counts['same']} unchanged, {counts['OTHER']} other")
    if saved is not None:
        os.environ["TILEC_STATIC_DIMS"] = saved
    sys.exit(1 if counts["OTHER"] else 0)
