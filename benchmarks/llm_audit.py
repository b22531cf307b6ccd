"""A per-kernel audit of the Qwen3 engine's decode step, with no GPU: for each
launch of one layer (and the head), the code generator's PTX for the shapes
the engine plans on a given card, ptxas's register count, the blocks an SM
holds at once, the global loads in the PTX by width, the bytes the kernel must
move (weights, KV cache) and the bytes it has in flight per SM, and from those
a bandwidth estimate by Little's law.

    python benchmarks/llm_audit.py --config qwen3-4b --context 1024 [--sms 132]

The engine is built on the CPU for a two-layer copy of the config (every
kernel of a layer is the same launch with another `layer` argument; what
appears twice runs once per layer), with zero weights; the launch counts
are the full config's. The
estimate is a model, not a measurement: it says which kernels cannot reach
the bandwidth (too few loads in flight, too few blocks to fill the card) and
how many launches the step pays for; `benchmarks/decode.py` measures.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

# H200 (sm_90): registers and threads per SM, HBM3e copy bandwidth measured
# on the card (issue 17), a loaded DRAM latency typical of Hopper.
REGS_PER_SM = 65536
THREADS_PER_SM = 2048
BLOCKS_PER_SM = 32
SMEM_PER_SM = 227 * 1024
BANDWIDTH = 4.3e12
LATENCY = 1.0e-6  # seconds from a load's issue to its data, under full load
LAUNCH_GAP = 1.5e-6  # one dependent launch inside a CUDA graph (drain + ramp)


@dataclasses.dataclass
class Row:
    name: str
    generics: str
    grid: tuple[int, ...]
    per_step: int  # launches of this kernel per token
    regs: int
    threads: int
    smem: int
    loads: dict[str, int]
    bytes_min: int  # bytes it must read or write (weights, cache, outputs)
    bytes_per_block: int  # HBM bytes a block has in flight per loop step
    resident: int = 0  # blocks an SM holds at once
    time: float = 0.0


def _ptxas(ptx: str, arch: str) -> tuple[int, int]:
    """(registers, static shared bytes) from `ptxas -v`; (0, 0) without ptxas."""
    if shutil.which("ptxas") is None:
        return 0, 0
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    r = subprocess.run(
        ["ptxas", f"-arch={arch}", "-v", f.name, "-o", "/dev/null"], capture_output=True, text=True
    )
    Path(f.name).unlink()
    regs = re.search(r"Used (\d+) registers", r.stderr)
    smem = re.search(r"(\d+) bytes smem", r.stderr)
    return int(regs.group(1)) if regs else 0, int(smem.group(1)) if smem else 0


def _loads(ptx: str) -> dict[str, int]:
    """Global loads by kind (`ld.global.v4.b32` ...), in the PTX text."""
    out: dict[str, int] = {}
    for m in re.finditer(r"\bld\.global(?:\.nc)?\.((?:v\d\.)?[bfsu]\d+)", ptx):
        out[m.group(1)] = out.get(m.group(1), 0) + 1
    return dict(sorted(out.items()))


def _resident(regs: int, threads: int, smem: int) -> int:
    if regs == 0:
        return 1
    per_warp = ((regs * 32 + 255) // 256) * 256  # allocation granularity
    by_regs = REGS_PER_SM // (per_warp * (threads // 32))
    by_smem = SMEM_PER_SM // smem if smem else BLOCKS_PER_SM
    return max(0, min(by_regs, THREADS_PER_SM // threads, BLOCKS_PER_SM, by_smem))


def _min_bytes(name: str, op: Any, cfg: Any, context: int) -> int:
    """The bytes a launch must move: its weight rows (or the KV cache it
    attends to), its vector input and its output."""
    hosts = op._hosts
    if name in ("gemv", "gemv_add", "gemv_splitk", "rms_gemv", "rms_gate_up", "rms_gemv_argmax"):
        out = hosts[0]  # the output comes first
        w = hosts[3] if name == "rms_gemv_argmax" else hosts[1]
        k = w.shape[1]
        n = out.size if name != "gemv_splitk" else out.shape[1]
        mats = 2 if name == "rms_gate_up" else 1
        return mats * n * k * 2 + k * 4 + n * 4 * (2 if name == "gemv_add" else 1)
    if name in ("attn_decode", "attn_decode_short", "attn_decode_ring", "attn_decode_ring_merge"):
        hkv, d = cfg.num_key_value_heads, cfg.head_dim
        return 2 * hkv * context * d * 2
    if name == "kv_append":  # a key and a value row per KV head, q/k/v in
        return 2 * cfg.num_key_value_heads * cfg.head_dim * 2 + int(hosts[2].nbytes)
    if name == "combine_splits":
        return int(hosts[0].nbytes + hosts[1].nbytes + hosts[2].nbytes)
    return int(sum(h.nbytes for h in hosts if h.nbytes < (1 << 22)))


def _tile_bytes(name: str, gen: dict[str, Any], cfg: Any) -> int:
    """HBM bytes one block requests per step of its loop (what it has in
    flight): its weight tile, or its key (value) tile; 0 without a loop."""
    mats = {
        "gemv": 1,
        "gemv_add": 1,
        "gemv_splitk": 1,
        "rms_gemv": 1,
        "rms_gemv_argmax": 1,
        "rms_gate_up": 2,
    }
    if name in mats:
        return mats[name] * gen["BN"] * gen["BK"] * 2
    if name in ("attn_decode", "attn_decode_short", "attn_decode_ring", "attn_decode_ring_merge"):
        return gen["BT"] * cfg.head_dim * 2
    return 0


def audit(cfg: Any, context: int, sms: int, arch: str = "sm_90a") -> tuple[list[Row], Any]:
    from engine import TileQwen3, plan_for

    from tilelang.backend import TensorFacts, emit_ptx
    from tilelang.ir import nodes as ir

    layers = cfg.num_hidden_layers
    # two layers: a launch that appears once per layer appears twice
    one = dataclasses.replace(cfg, num_hidden_layers=2)
    plan = plan_for(cfg, context + 64, sms)
    shapes = one.shapes()
    weights = {k: np.zeros(s, np.float32) for k, s in shapes.items()}
    eng = TileQwen3(one, weights, max_seq=context + 64, plan=plan)
    rows: list[Row] = []
    seen: dict[tuple[str, str], Row] = {}
    for op in eng.ops:
        op._runs = 1  # built to be read, not run
        name = op.kernel.__name__
        gen = ", ".join(str(v) for v in op.generics.values())
        need = _min_bytes(name, op, cfg, context)
        key = (name, gen, need)
        if key in seen:
            seen[key].per_step += 1
            continue
        kir = op._plan.kir
        args = op._kernel_args(op._hosts)
        facts = {
            p.name: TensorFacts(True, tuple(d % 16 == 0 for d in a.shape), False)
            for p, a in zip(kir.params, args, strict=True)
            if isinstance(p, ir.TensorParam)
        }
        ptx = emit_ptx(kir, arch, facts)
        regs, smem = _ptxas(ptx, arch)
        threads = int(re.search(r"\.reqntid (\d+)", ptx).group(1))  # type: ignore[union-attr]
        smem += _dyn_smem(kir, arch, facts)
        row = Row(
            name,
            gen,
            tuple(op.grid),
            1,
            regs,
            threads,
            smem,
            _loads(ptx),
            need,
            _tile_bytes(name, op.generics, cfg),
        )
        row.resident = _resident(regs, threads, smem)
        seen[key] = row
        rows.append(row)
    for r in rows:
        if r.per_step == 2:  # once per layer of the two
            r.per_step = layers
        blocks = int(np.prod(r.grid))
        on_card = min(blocks, r.resident * sms)
        in_flight = on_card * r.bytes_per_block
        # a kernel without a loop issues all its loads at once
        bw = min(BANDWIDTH, in_flight / LATENCY) if in_flight else BANDWIDTH
        r.time = LAUNCH_GAP + r.bytes_min / bw
    return rows, plan


def _dyn_smem(kir: Any, arch: str, facts: Any) -> int:
    from tilelang.backend import compile_kernel

    return int(compile_kernel(kir, arch, facts).abi.smem_bytes)


def report(rows: list[Row], cfg: Any, context: int) -> str:
    total_b = sum(r.bytes_min * r.per_step for r in rows)
    total_t = sum(r.time * r.per_step for r in rows)
    launches = sum(r.per_step for r in rows)
    out = [
        "| kernel | generics | grid | per token | regs | threads | blocks/SM | loads in PTX | "
        "tile bytes/block | bytes min | est. us |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        loads = " ".join(f"{k}x{v}" for k, v in r.loads.items())
        out.append(
            f"| {r.name} | {r.generics} | {'x'.join(map(str, r.grid))} | {r.per_step} | {r.regs} | "
            f"{r.threads} | {r.resident} | {loads} | {r.bytes_per_block} | "
            f"{r.bytes_min / 1e6:.2f} MB | {r.time * 1e6:.1f} |"
        )
    floor = total_b / BANDWIDTH
    out += [
        "",
        f"{launches} launches per token; {total_b / 1e9:.3f} GB per token "
        f"(floor {floor * 1e3:.3f} ms at {BANDWIDTH / 1e12:.1f} TB/s); "
        f"model: {total_t * 1e3:.3f} ms = {1 / total_t:.0f} tok/s = {floor / total_t:.0%} of the "
        f"roofline (Little's law at {LATENCY * 1e6:.1f} us, {LAUNCH_GAP * 1e6:.1f} us a launch)",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from model import Qwen3Config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="qwen3-4b")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--arch", default="sm_90a")
    a = ap.parse_args(argv)
    cfg = Qwen3Config.load(a.config)
    rows, plan = audit(cfg, a.context, a.sms, a.arch)
    print(f"{a.config}, context {a.context}, {a.sms} SMs; plan: {plan}")
    print(report(rows, cfg, a.context))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
