"""SHA-256 of the sm_90a PTX of the tuned kernels, to show a change leaves them byte-identical (CPU only).

    PYTHONPATH=. python benchmarks/ptx_sha.py > after.txt     # in each tree, then: diff before.txt after.txt
    PYTHONPATH=. python benchmarks/ptx_sha.py --faults        # and each wgmma kernel's descriptor faults

One line a kernel variant: `<sha256[:16]> <what>`. The kernels: std::attention's prefill
(`flash_attention`, `flash_attention_lse`; f16/bf16, D = 64/128, blocks 128x128 and 128x64, the bench rows'
S = 1024/4096/16384 at 128x128) with the variants a launch compiles (the short-keys chain, `facts.Short`;
the split walk's forms, `KernelABI.split`), the decode kernels at the bench's plans (`decode_split`,
`_varlen`, `_tc`, `decode_combine`, `decode_fused`), and every kernel instance the LLM engine launches at the
Qwen3 0.6B/4B/8B shapes (one layer, zero weights: nothing runs), greedy and with temperature sampling, under
Hopper's plan and another GPU's. hcliff, 2026-12-06: main 86951d00 and hcliff's branch gave the same lines.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("", "benchmarks", "examples/llm", "examples/python"):
    sys.path.insert(0, str(ROOT / sub))

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import compile_kernel  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.ir.lower import lower_kernel  # noqa: E402
from tilelang.runtime.launch import ArgFact  # noqa: E402


FAULTS = "--faults" in sys.argv  # also each wgmma kernel's HGMMA descriptor faults (ptxas + nvdisasm, sm_90a)


def _sha(text: str) -> str:
    """The line's hash; with `--faults`, a wgmma kernel's line ends with the number of its HGMMAs whose
    descriptors lack their layout fields (`tests/ptxas_report.hgmma_desc_faults`: the form ptxas 13.0
    miscompiled in hwg's column split), as `faults N/M` (N of its M HGMMAs), and ptxas's registers, spill
    stores and SASS instruction count."""
    h = hashlib.sha256(text.encode()).hexdigest()[:16]
    if not FAULTS or "wgmma.mma_async" not in text:
        return h
    sys.path.insert(0, str(ROOT / "tests"))
    from ptxas_report import assemble, hgmma_desc_faults, sass

    code, rep = sass(text, "sm_90a"), assemble(text, "sm_90a")
    return (f"{h} faults {len(hgmma_desc_faults(code))}/{code.count('HGMMA')} regs {rep.max_registers} "
            f"spills {rep.max_spill_stores} sass {len(re.findall(r'/[*][0-9a-f]{4,}[*]/', code))}")


def attention() -> None:
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
            for lse in (False, True):
                for bn in (128, 64):
                    todo.append(ap.prefill(dt, 16, 4, 1000, 1000, d, 128, bn, lse))
    todo += ap.bench_rows(["f16-128", "bf16-128", "f16-64", "bf16-64"], (128, 128), "flash_attention")
    seen = set()
    for kernel, inst, params in todo:
        key = ap.job_key(kernel, inst, params)
        if key in seen:
            continue
        seen.add(key)
        facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
        kir = lower_kernel(prog, f"std::attention::{kernel}", inst,
                           {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
        what = f"{kernel} {sorted((k, str(v)) for k, v in inst.items())} {[p[2] for p in params]}"
        ck = compile_kernel(kir, "sm_90a", facts)
        print(_sha(ck.ptx), what, flush=True)
        if ck.abi.short is not None:
            more = ck.abi.short.refine(facts, next(p[2] for p in params if p[0] == ck.abi.short.param))
            if more is not None:
                print(_sha(compile_kernel(kir, "sm_90a", more).ptx), what, "short", flush=True)
        for kind, _ in (ck.abi.split.ons if ck.abi.split is not None else ()):
            print(_sha(compile_kernel(kir, "sm_90a", ck.abi.split.refine(facts, kind)).ptx), what, kind, flush=True)


def engine_kernels() -> list[tuple[str, ir.Kernel, dict[str, TensorFacts]]]:
    """Every kernel instance the LLM engine launches (0.6B, 4B, 8B at one layer; Hopper and sm_80 plans, with and
    without sampling; decode, prefill and last-row operations), once per (kernel, instance, facts): the model name,
    the kernel and its facts. Shared with `static_dims_fold.py`."""
    from engine import TileQwen3, plan_for
    from model import Qwen3Config

    warnings.simplefilter("ignore", RuntimeWarning)  # operations built, never run
    out, seen = [], set()
    for name in ("qwen3-0.6b", "qwen3-4b", "qwen3-8b"):
        cfg = dataclasses.replace(Qwen3Config.load(name), num_hidden_layers=1)
        w = {n: np.zeros(s, np.float32) for n, s in cfg.shapes().items()}  # untouched pages: no memory
        ops = []
        for hopper, sampling in ((True, None), (False, None), (True, (0.8, 0.9, 1))):
            eng = TileQwen3(cfg, w, max_seq=2048, plan=plan_for(cfg, 2048, 132, hopper), sampling=sampling)
            ops += [op for form in eng._form_ops.values() for op in form]
            ops += eng._prefill_step_ops(0, 512) + eng._last_row_ops(512)
        for op in ops:
            plan = getattr(op, "_plan", None)
            if plan is None:
                continue
            kir = plan.kir
            args = op._kernel_args([np.array(h) for h in op._hosts])
            facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in a.shape))
                     for p, a in zip(kir.params, args, strict=True) if isinstance(p, ir.TensorParam)}
            key = (kir.name, kir.instantiation, tuple(sorted((k, v.key()) for k, v in facts.items())))
            if key not in seen:
                seen.add(key)
                out.append((name, kir, facts))
    return out


def engine() -> None:
    from tilelang.backend import emit_ptx

    for name, kir, facts in engine_kernels():
        print(_sha(emit_ptx(kir, "sm_90a", facts)), name, kir.name, kir.instantiation, flush=True)


if __name__ == "__main__":
    attention()
    engine()
