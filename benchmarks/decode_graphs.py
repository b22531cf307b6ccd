"""The decode step's burst graph as `tilelang.graph()` captures it against
the same launches captured by `torch.cuda.graph` (H200, Qwen3-4B at 1,024:
the torch-captured graphs ran 2.7 % faster on the GPU, RESULTS.md): each
graph launched raw (no host wait) between CUDA events, the variants
interleaved round by round, and the tilelang capture varied one difference
at a time: its instantiation flags (PyTorch's), its capture stream and mode
(a PyTorch side stream, global mode); then the paths a user calls (`decode`,
`Graph.replay(times=...)`) against the same launches made raw. RESULTS.md,
"the decode loop's host waits" (2026-12-02): the graphs time the same.

    python benchmarks/decode_graphs.py --model 4b --context 1024 --rounds 5 --reps 4
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import TileQwen3  # noqa: E402
from model import Qwen3Config, random_weights  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import torch
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="4b")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args(argv)
    cfg = Qwen3Config.load(f"qwen3-{a.model}")
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(cfg, w, max_seq=a.context + 64, backend="torch")
    eng.reset()
    eng.prompt([1])
    ctx = a.context
    eng.be.write(eng.pos, [ctx])
    eng.decode(eng.burst)  # the tilelang burst graph, captured and run
    tok0 = eng.be.read(eng.tok).copy()
    gt = eng._burst_graph
    rt = gt._captured  # runtime.cuda.Graph: .graph, .exec
    dev = gt.operations[0]._plan.runtime.device
    d = dev.ctx.d
    ops = list(eng.ops)
    steps = eng.burst

    def restore() -> None:
        eng.be.write(eng.pos, [ctx])
        eng.be.write(eng.tok, tok0)

    from tilelang.runtime.cuda_driver import _check

    def check(res):  # type: ignore[no-untyped-def]
        return _check(res, "driver call")

    # PyTorch's capture of the same launches (as graph_api="torch" does)
    with eng.launch_scope():
        restore()
        torch.cuda.synchronize()
        tg = torch.cuda.CUDAGraph()
        with torch.cuda.graph(tg):
            for op in ops * steps:
                op.sync()
        torch.cuda.synchronize()
        # tilelang's captured CUDA graph instantiated again with PyTorch's flags
        flags = {}
        for name, bit in (("autofree", 1), ("priority", 8), ("autofree+priority", 9)):
            try:
                flags[name] = check(d.cuGraphInstantiate(rt.graph, bit))
            except Exception as e:
                print(f"instantiate {name}: {e!r}", flush=True)
        # the tilelang capture on a PyTorch side stream, global mode (and relaxed)
        crossed = {}
        for mode in ("GLOBAL", "RELAXED"):
            side = torch.cuda.Stream()
            s = dev.foreign_stream(side.cuda_stream)
            torch.cuda.synchronize()
            check(
                d.cuStreamBeginCapture(
                    s, getattr(d.CUstreamCaptureMode, f"CU_STREAM_CAPTURE_MODE_{mode}")
                )
            )
            try:
                for op in ops * steps:
                    op._start(s)
            finally:
                g = check(d.cuStreamEndCapture(s))
            crossed[f"torch stream {mode.lower()}"] = check(d.cuGraphInstantiate(g, 0))
        # tilelang's own new stream in global mode
        s2 = dev.new_stream()
        check(d.cuStreamBeginCapture(s2, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL))
        try:
            for op in ops * steps:
                op._start(s2)
        finally:
            g2 = check(d.cuStreamEndCapture(s2))
        crossed["tilec stream global"] = check(d.cuGraphInstantiate(g2, 0))

    cur = torch.cuda.current_stream()
    raw = dev.foreign_stream(cur.cuda_stream)
    variants = {"tilelang.graph()": rt.exec, "torch.cuda.graph": None}
    variants.update({f"tilelang, instantiated {k}": v for k, v in flags.items()})
    variants.update({f"tilelang ops, {k}": v for k, v in crossed.items()})
    times: dict[str, list[float]] = {k: [] for k in variants}
    toks: dict[str, list[int]] = {}
    for r in range(a.rounds + 1):
        for name, ex in variants.items():
            restore()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(a.reps):
                if ex is None:
                    tg.replay()
                else:
                    check(d.cuGraphLaunch(ex, raw))
            e1.record()
            e1.synchronize()
            if r == 0:  # warm-up round: the tokens each chose
                toks[name] = [int(t) for t in eng.be.read(eng.hist)[ctx + 1 : ctx + 1 + steps]]
                continue
            times[name].append(e0.elapsed_time(e1) / (a.reps * steps))
    base = statistics.median(times["tilelang.graph()"])
    ref_toks = toks["tilelang.graph()"]
    print(
        f"{a.model} ctx {ctx}: {a.rounds} rounds of {a.reps} replays of the {steps}-step graph",
        flush=True,
    )
    for name, ts in times.items():
        m = statistics.median(ts)
        print(
            f"  {name:40s} {m:.4f} ms a token ({1 / m * 1e3:.1f} tok/s, {base / m - 1:+.2%}) "
            f"rounds {min(ts):.4f}-{max(ts):.4f}, same tokens {toks[name] == ref_toks}",
            flush=True,
        )
    # The paths a user calls, interleaved: `decode` (tilelang's Graph.replay,
    # one wait), the same exec launched raw, PyTorch's graph, Graph.replay
    # alone; events on the current stream around each (wall time too).
    import time

    n = a.reps * steps
    paths = {
        "decode() (Graph.replay(times))": lambda: eng.decode(n),
        "Graph.replay(times=reps)": lambda: gt.replay(times=a.reps),
        "raw cuGraphLaunch of its exec": lambda: [
            check(d.cuGraphLaunch(rt.exec, raw)) for _ in range(a.reps)
        ],
        "torch.cuda.graph replay": lambda: [tg.replay() for _ in range(a.reps)],
    }
    pt: dict[str, list[tuple[float, float]]] = {k: [] for k in paths}
    for r in range(a.rounds + 1):
        for name, fn in paths.items():
            restore()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            wall = time.perf_counter() - t0
            if r:
                pt[name].append((e0.elapsed_time(e1) / n, wall * 1e3 / n))
    print("paths (ms a token: events / wall):", flush=True)
    for name, v in pt.items():
        ev, wl = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
        print(
            f"  {name:34s} {ev:.4f} / {wl:.4f} (events {min(x[0] for x in v):.4f}-{max(x[0] for x in v):.4f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
