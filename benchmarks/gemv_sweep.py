"""Time the decode step's GEMV kernels (`std::llm`) over block shapes, one
matrix kind at a time, on Qwen3-shaped matrices: random bf16 weights stacked
over 8 layers, launched layer after layer so that no launch finds its weights
in L2, captured as one CUDA graph and replayed (`decode.graph_seconds`: the
gaps between launches count, the host's launch work does not).

    python benchmarks/gemv_sweep.py --config qwen3-4b [--out DIR]
    python benchmarks/gemv_sweep.py --config qwen3-4b --engine   # the engine's shapes only
    python benchmarks/gemv_sweep.py --config tiny --device cpu --reps 1   # smoke test
    python benchmarks/gemv_sweep.py --mats o --rows 2112,2560,3168 --only 1:8:2048:3  # waves
    python benchmarks/gemv_sweep.py --stream --only 4:16:256:3,4:8:256:3   # Plan.sk's form

`--rows` replaces a matrix's rows (of one layer) by each value in turn: with
[8, *] blocks at MB 3 on 132 SMs, 2,112 rows are 264 blocks (2 an SM), 2,560
are 320 (2 or 3 an SM), 3,168 are 396 (3 an SM): a launch's time against
its bytes says whether the busiest SM's share or the memory sets the pace.

A candidate is (ST, BN, BK, MB): K steps in flight (1: load then use; 2: the
next step's tile loads while this one is used), rows per block, K tile, and
the blocks an SM must hold at once (ptxas's register budget: 0 none, "auto"
the grid's blocks per SM as `engine.plan_for` passes it). Each matrix's rows
end with cuBLAS's GEMV of the same bf16 matrices (`torch.mv`, a bf16 vector),
timed the same way in the same run. Prints the time of a launch and the
bandwidth of its weight bytes per candidate, the best per matrix, and in
`--out` `gemv_sweep.json` and `plan.json` (the best shapes as `decode.py
--plan` and `decode_ab.py --variants` take them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))
sys.path.insert(0, str(ROOT / "benchmarks"))

LAYERS = 8

# matrix -> candidates (ST, BN, BK); each runs with MB 0 and "auto" (the
# engine's shapes first); ST 4 with small row tiles is the LM head's form
# (many blocks, several waves, the weights through the cp.async ring)
CANDIDATES: dict[str, list[tuple[int, int, int]]] = {
    "qkv": [(1, 16, 1024), (1, 16, 512), (2, 16, 512), (2, 16, 256), (2, 8, 512), (1, 8, 1024)],
    "o": [(1, 8, 2048), (1, 8, 1024), (2, 8, 1024), (2, 8, 512), (1, 4, 2048), (2, 4, 1024)],
    "gate_up": [(1, 32, 256), (1, 16, 512), (2, 16, 256), (1, 16, 256), (2, 8, 512), (2, 32, 128),
                (4, 8, 256), (4, 16, 256)],
    "down": [(1, 8, 2048), (1, 8, 1024), (2, 8, 1024), (2, 8, 512), (1, 4, 2048), (2, 4, 1024),
             (4, 4, 1024), (4, 4, 512)],
    "lm": [(2, 16, 512), (1, 16, 512), (2, 32, 256), (2, 8, 512), (2, 16, 1024)],
}  # fmt: skip


def _shapes(cfg: Any) -> dict[str, tuple[int, int]]:
    """matrix -> (N rows of one layer, K)."""
    h, i, d = cfg.hidden_size, cfg.intermediate_size, cfg.head_dim
    hq, hkv = cfg.num_attention_heads, cfg.num_key_value_heads
    return {
        "qkv": ((hq + 2 * hkv) * d, h),
        "o": (h, hq * d),
        "gate_up": (i, h),
        "down": (h, i),
        "lm": (cfg.vocab_size, h),
    }


def auto_mb(blocks: int, sms: int) -> int:
    """The blocks an SM holds of a one-wave grid, at most 4 (64 registers a
    thread; `engine.plan_for`'s MB); 3 for grids of many waves."""
    return min(4, -(-blocks // sms)) if blocks <= 8 * sms else 3


class _Torch:
    """A PyTorch call as `graph_seconds` runs an operation."""

    def __init__(self, fn: Any) -> None:
        self.sync = fn


def _cublas_ops(mat: str, n: int, bufs: dict) -> list[Any]:  # type: ignore[type-arg]
    """cuBLAS's bf16 GEMV (`torch.mv`) of each layer's matrix (gate and up
    as one), bf16 vector in and out."""
    import torch

    w, layers = bufs["w"], 1 if mat == "lm" else LAYERS
    rows = w.shape[0] // layers
    x = bufs["x"].to(torch.bfloat16)
    y = torch.empty(rows, device="cuda", dtype=torch.bfloat16)
    return [
        _Torch(lambda li=li: torch.mv(w[li * rows : (li + 1) * rows], x, out=y))
        for li in range(layers)
    ]


def _ops(llm: Any, mat: str, st: int, bn: int, bk: int, mb: int, bufs: dict,  # type: ignore[type-arg]
         grid: int = 0) -> list[Any]:
    """One launch per layer of `mat` with std::llm's kernel for it; grid > 0:
    the persistent streaming form (`gemv_stream`, `grid` blocks; RMSNorm in
    front for qkv and gate/up, gate and up summed into one output)."""
    import tilelang

    P = tilelang.partition
    w, x, g, y = bufs["w"], bufs["x"], bufs["g"], bufs["y"]
    eps = 1e-6
    if grid:
        n = w.shape[0] // LAYERS
        xf = 1 if mat in ("qkv", "gate_up") else 0
        z = P(bufs["z"][:grid], [1])
        kt = -(-w.shape[1] // bk)
        return [llm.gemv_stream[bn, bk, st, mb, xf, 1, kt](z, bufs["y2"], w, x, g, li, n, eps) for li in range(LAYERS)]
    if mat == "lm":
        bmax, barg = P(bufs["bmax"][bn], [1]), P(bufs["barg"][bn], [1])
        return [llm.rms_gemv_argmax[bn, bk, st, mb](P(y, [bn]), bmax, barg, w, x, g, eps)]
    ops = []
    for li in range(LAYERS):
        if mat == "qkv":
            ops.append(llm.rms_gemv[bn, bk, st, mb, 0, 0, 0, 0](P(y, [bn]), w, x, g, li, eps, w, 0, 0))
        elif mat == "gate_up":
            ops.append(llm.rms_gate_up[bn, bk, st, mb, 0, 0, 0, 0](P(y, [bn]), w, x, g, li, eps, w, 0, 0))
        else:
            ops.append(llm.gemv_add[bn, bk, st, mb, 0, 0, 0, 0](P(y, [bn]), w, x, li, w, 0, 0))
    return ops


def _buffers(mat: str, n: int, k: int, gpu: bool) -> dict:  # type: ignore[type-arg]
    """Weights of `LAYERS` layers (one for the LM head), x, the norm weights,
    the output and the LM head's per-block maxima for every BN."""
    layers = 1 if mat == "lm" else LAYERS
    rows = n * layers * (2 if mat == "gate_up" else 1)
    if gpu:
        import torch

        gen = torch.Generator(device="cuda").manual_seed(0)

        def new(shape: tuple[int, ...], kind: str, scale: float = 0.0) -> Any:
            dt = {"f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32}[kind]
            if scale:
                return (torch.randn(shape, device="cuda", generator=gen) * scale).to(dt)
            return torch.ones(shape, device="cuda", dtype=dt)
    else:
        rng = np.random.default_rng(0)

        def new(shape: tuple[int, ...], kind: str, scale: float = 0.0) -> Any:
            dt = np.int32 if kind == "i32" else np.float32
            return (rng.standard_normal(shape) * scale).astype(dt) if scale else np.ones(shape, dt)

    out = {
        "w": new((rows, k), "bf16", 0.02),
        "x": new((k,), "f32", 1.0),
        "g": new((layers, k), "bf16"),
        "y": new((n,), "f32", 1.0),
        "y2": new((rows // layers,), "f32", 1.0),  # the streaming form's (gate and up: 2 n)
        "z": new((8 * 1024,), "f32"),  # the streaming form's grid
        "bmax": {},
        "barg": {},
    }
    for bn in (4, 8, 16, 32):
        out["bmax"][bn] = new((-(-n // bn),), "f32", 1.0)
        out["barg"][bn] = new((-(-n // bn),), "i32")
    return out


def _seconds(ops: list[Any], device: str, reps: int) -> float:
    """GPU seconds a launch (a CUDA graph of `ops`), or on the CPU the wall
    time a launch (a smoke test of the candidates)."""
    if device == "cuda":
        from decode import graph_seconds

        return graph_seconds(ops, reps) / len(ops)
    t = time.perf_counter()
    for op in ops:
        op.sync()
    return (time.perf_counter() - t) / len(ops)


def main(argv: list[str] | None = None) -> int:
    from model import Qwen3Config

    import tilelang

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="qwen3-4b")
    ap.add_argument("--mats", default="qkv,o,gate_up,down,lm")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument(
        "--only", default="", help="candidates 'ST:BN:BK[:MB],...' instead of the table"
    )
    ap.add_argument("--mbs", default="0,auto", help="the MB values of each candidate")
    ap.add_argument(
        "--baseline", action="store_true", help="only the first candidate of each matrix"
    )
    ap.add_argument(
        "--engine", action="store_true", help="only the shapes the engine plans (engine.plan_for)"
    )
    ap.add_argument("--rows", default="", help="rows of one layer instead of the config's, 'N,..'")
    ap.add_argument("--stream", action="store_true",
                    help="the candidates as `gemv_stream` (Plan.sk) over a grid of SMs x MB blocks")
    ap.add_argument("--out", default="")
    ap.add_argument("--budget", type=float, default=80.0, help="stop after this many seconds")
    a = ap.parse_args(argv)
    cfg = Qwen3Config.load(a.config)
    shapes = _shapes(cfg)
    llm = tilelang.load(ROOT / "stdlib" / "std" / "llm.tile")
    sms = 132
    if a.device == "cuda":
        import torch

        sms = torch.cuda.get_device_properties(0).multi_processor_count
    t0 = time.perf_counter()
    rows = []
    mats = a.mats.split(",")
    runs = [(mat, int(r) if r else shapes[mat][0]) for mat in mats for r in (a.rows.split(",") if a.rows else [""])]
    for mi, (mat, n) in enumerate(runs):
        deadline = t0 + a.budget * (mi + 1) / len(runs)  # a share of the budget each
        k = shapes[mat][1]
        bufs = _buffers(mat, n, k, a.device == "cuda")
        wbytes = n * k * 2 * (2 if mat == "gate_up" else 1)
        cands = [(st, bn, bk, m) for st, bn, bk in CANDIDATES[mat] for m in a.mbs.split(",")]
        if a.baseline:
            cands = cands[:1]
        if a.engine:
            from engine import plan_for

            p = plan_for(cfg, 2048, sms if a.device == "cuda" else None)
            cands = [(p.st[mat], p.bn[mat], p.bk[mat], str(p.mb[mat]))]
        if a.only:
            cands = [(int(f[0]), int(f[1]), int(f[2]), f[3] if len(f) > 3 else "auto")
                     for f in (x.split(":") for x in a.only.split(","))]  # fmt: skip
        for st, bn, bk, m in cands:
            if time.perf_counter() > deadline:
                break
            if (mat != "lm" and n % bn) or (a.stream and mat == "lm"):
                continue
            mb = auto_mb(-(-n // bn), sms) if m == "auto" else int(m)
            if a.stream and m == "auto":
                mb = 3
            try:
                ops = _ops(llm, mat, st, bn, bk, mb, bufs, sms * mb if a.stream else 0)
                s = _seconds(ops, a.device, a.reps * (LAYERS if mat == "lm" else 1))
            except Exception as e:  # a candidate that fails is reported, the rest run
                print(f"{mat:8s} ST={st} BN={bn:3d} BK={bk:5d} MB={mb}: failed {e!r}", flush=True)
                continue
            row = {"mat": mat, "rows": n, "st": st, "bn": bn, "bk": bk, "mb": mb, "us": s * 1e6,
                   "tbs": wbytes / s / 1e12, "stream": a.stream}  # fmt: skip
            rows.append(row)
            blocks = sms * mb if a.stream else -(-n // bn)
            print(f"{mat:8s} N={n:6d} ST={st} BN={bn:3d} BK={bk:5d} MB={mb} ({blocks} blocks"
                  f"{', stream' if a.stream else ''}): "
                  f"{s * 1e6:8.2f} us {row['tbs']:.2f} TB/s", flush=True)  # fmt: skip
        if a.device == "cuda":  # cuBLAS, the same matrices, the same timing
            s = _seconds(
                _cublas_ops(mat, n, bufs), a.device, a.reps * (LAYERS if mat == "lm" else 1)
            )
            rows.append({"mat": mat, "cublas": True, "us": s * 1e6, "tbs": wbytes / s / 1e12})
            print(f"{mat:8s} cuBLAS torch.mv bf16:      {s * 1e6:8.2f} us "
                  f"{wbytes / s / 1e12:.2f} TB/s", flush=True)  # fmt: skip
        del bufs
    # the best shapes per matrix, as decode.py's --plan takes them
    plan: dict[str, dict[str, int]] = {"bn": {}, "bk": {}, "st": {}, "mb": {}}
    print("best per matrix:")
    for mat in mats:
        mine = [r for r in rows if r["mat"] == mat and not r.get("cublas")]
        if mine:
            b = min(mine, key=lambda r: r["us"])
            for f in ("bn", "bk", "st", "mb"):
                plan[f][mat] = b[f]
            print(f"  {mat:8s} ST={b['st']} [{b['bn']}, {b['bk']}] MB={b['mb']} "
                  f"{b['us']:.2f} us {b['tbs']:.2f} TB/s")  # fmt: skip
    print(f"plan: {json.dumps(plan)}")
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "gemv_sweep.json").write_text(json.dumps(rows, indent=1))
        (Path(a.out) / "plan.json").write_text(json.dumps(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
