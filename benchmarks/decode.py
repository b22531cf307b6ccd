"""Batch-1 decode of Qwen3-shaped models: the Tile engine against the PyTorch
reference (eager, and captured as one CUDA graph) in the same run.

    python benchmarks/decode.py                                  # 0.6B, 4B, 8B at 1,024
    python benchmarks/decode.py --models 4b --contexts 1024,8192,32768
    python benchmarks/decode.py --models tiny --device cpu --tokens 4   # smoke test
    python benchmarks/decode.py --issue17 --tokens 32 --eager-tokens 4  # issue 17's rows, one process

For each model (random bf16 weights) and context length it reports
tokens/s, the fraction of the memory roofline (weight bytes + KV bytes of
that context per token, over the card's measured copy bandwidth), the
speed-up over the reference's CUDA graph, and the host time per token: a
token's wall time less its GPU time (CUDA events around the driver's launch of
the graph), i.e. the time the GPU waits for the Python call that replays the
graph. Tokens/s is `TileQwen3.decode`'s, as `generate.py` runs it (a graph of
`burst` steps replayed `n / burst` times with one host wait,
`Graph.replay(times=...)`); the time of one step replayed alone is reported
too, and the same decode with a host wait after every burst (as before).
`--prefill N` times an N-token prompt: the engine's batched prefill (one
CUDA graph per chunk) against the reference's `prefill` (causal SDPA), for
every model or those `--prefill-models` names. `--model-contexts
"4b=1024,8192,32768"` gives a model contexts of its own (the others take
`--contexts`); `--issue17` is issue 17's table in one process (0.6B and 8B at
1,024, 4B at 1,024, 8,192 and 32,768, the 4B prefill of 2,048: one engine a
model, one copy-bandwidth measurement). Writes `decode.json` and `decode.md` to `--out`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import TileQwen3, hbm_bytes_per_token, plan_for, timed  # noqa: E402
from model import Qwen3Config, random_weights  # noqa: E402
from reference import TorchQwen3  # noqa: E402


def _sync(dev: str) -> None:
    import torch

    if dev != "cpu":
        torch.cuda.synchronize()


def _time(fn, n: int, dev: str) -> float:  # type: ignore[no-untyped-def]
    """Seconds per call of `fn` over `n` calls (after one warm-up call)."""
    fn()
    _sync(dev)
    t = time.perf_counter()
    for _ in range(n):
        fn()
    _sync(dev)
    return (time.perf_counter() - t) / n


def _graph_gpu_seconds(eng, reps: int) -> float:  # type: ignore[no-untyped-def]
    """Median GPU seconds of one replay of the engine's burst graph."""
    import statistics

    g = eng._burst_graph
    dev = g._device
    real = dev.replay
    spans = []

    def timed_replay(graph, stream=None):  # type: ignore[no-untyped-def]
        e0 = dev.record_event(stream)
        real(graph, stream)
        spans.append((e0, dev.record_event(stream)))

    dev.replay = timed_replay
    try:
        for _ in range(reps):
            g.replay()
    finally:
        dev.replay = real
    return statistics.median(dev.event_seconds(a, b) for a, b in spans)


def _torch_graph_decode(eng, ctx: int, tok0, n: int, want: list[int], dev: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The same decode with the graphs captured by `torch.cuda.graph`
    (`graph_api="torch"`: no per-replay checks, no wait): tokens/s and
    whether it chose the same tokens; {} with a message if it fails."""
    saved = (eng._graph, eng._burst_graph)
    try:
        eng.graph_api = "torch"
        eng._graph = eng._burst_graph = None
        eng.be.write(eng.pos, [ctx])
        eng.decode(eng.burst)  # captures
        eng.be.write(eng.pos, [ctx])
        eng.be.write(eng.tok, tok0)
        got: list[list[int]] = []
        t = timed(lambda: got.append(eng.decode(n)), lambda: _sync(dev)) / n
        return {"torch_graph_api_tok_s": 1 / t, "torch_graph_api_same_tokens": got[0] == want}
    except Exception as e:  # the rest of the run still counts
        print(f"decode with graph_api='torch' failed: {e!r}", flush=True)
        return {}
    finally:
        eng.graph_api = "tile"
        eng._graph, eng._burst_graph = saved


def _op_bytes(eng, ctx: int) -> list[int]:  # type: ignore[no-untyped-def]
    """The HBM bytes each launch of the step must read (its layer's weight
    rows, or the KV cache it attends to); 0 for the small ones."""
    c = eng.cfg
    h, i, d, hkv = c.hidden_size, c.intermediate_size, c.head_dim, c.num_key_value_heads
    qkv = (c.num_attention_heads + 2 * hkv) * d
    out, residual = [], 0
    for op in eng.ops:
        name = op.kernel.__name__
        stream = name == "gemv_stream"  # X 1: gate/up; else O or down (`Plan.sk`)
        if name in ("gemv_add", "gemv_add_queue", "gemv_splitk", "merge_gemv_add") or (
            stream and op.generics["X"] != 1
        ):
            residual += 1  # O (merged or not), then down
            out.append(2 * h * (c.num_attention_heads * d if residual % 2 else i))
        elif stream:
            out.append(4 * i * h)
        else:
            out.append(
                {
                    "rms_gemv": 2 * qkv * h,
                    "rms_gemv_queue": 2 * qkv * h,
                    "rms_gate_up": 4 * i * h,
                    "rms_gate_up_queue": 4 * i * h,
                    "rms_gemv_argmax": 2 * c.vocab_size * h,
                    "attn_decode": 4 * hkv * ctx * d,
                    "attn_decode_short": 4 * hkv * ctx * d,
                    "attn_decode_ring": 4 * hkv * ctx * d,
                    "attn_decode_ring_early": 4 * hkv * ctx * d,
                    "attn_decode_ring_merge": 4 * hkv * ctx * d,
                    "attn_decode_ring_fold": 4 * hkv * ctx * d,
                }.get(name, 0)
            )
    return out


def graph_seconds(ops: list, reps: int = 5) -> float:  # type: ignore[type-arg]
    """GPU seconds of one run of `ops` in order, captured as one CUDA graph
    (`torch.cuda.graph`, as `graph_api="torch"` does) and replayed `reps`
    times back to back between two events: the kernels' own times and the
    gaps between dependent launches, none of the host's launch work (events
    around single launches count that: the GPU waits for the host between
    them)."""
    import torch

    for op in ops:  # compiled and loaded before the capture
        op.sync()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for op in ops:
            op.sync()  # captured: no wait
    g.replay()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(reps):
        g.replay()
    e1.record()
    e1.synchronize()
    s = e0.elapsed_time(e1) / 1e3 / reps
    del g
    return s


def _profile_ops(ops: list, need: list[int], restore) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    """`ops` grouped by kind (kernel, block shapes, bytes), each group
    captured alone as a graph and timed (`graph_seconds`): the GPU time the
    sequence spends in each kind, the gaps between its launches included;
    `restore()` runs before each group (the state a group may advance)."""
    kinds: dict[tuple[str, str, int], dict] = {}  # type: ignore[type-arg]
    for op, b in zip(ops, need, strict=True):
        gen = ",".join(str(v) for v in op.generics.values())
        k = kinds.setdefault(
            (op.kernel.__name__, gen, b),
            {"kernel": op.kernel.__name__, "generics": gen, "grid": list(op.grid), "n": 0,
             "us": 0.0, "bytes": 0, "ops": []},
        )  # fmt: skip
        k["n"] += 1
        k["bytes"] += b
        k["ops"].append(op)
    for k in kinds.values():
        restore()
        k["us"] = graph_seconds(k.pop("ops"), 3) * 1e6
    restore()
    return sorted(kinds.values(), key=lambda r: -r["us"])


def _profile_text(rows: list[dict], what: str) -> str:  # type: ignore[type-arg]
    lines = [
        f"{what}:",
        "| kernel | generics | grid | launches | total us | us each | TB/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        bw = r["bytes"] / (r["us"] * 1e-6) / 1e12 if r["bytes"] else 0.0
        lines.append(
            f"| {r['kernel']} | {r['generics']} | {'x'.join(map(str, r['grid']))} | {r['n']} | "
            f"{r['us']:.1f} | {r['us'] / r['n']:.2f} | {bw:.2f} |"
        )
    total = sum(r["us"] for r in rows)
    lines.append(f"\nsum over the kinds {total:.1f} us ({sum(r['n'] for r in rows)} launches)")
    return "\n".join(lines)


def _profile_step(eng, ctx: int, out: Path | None) -> list[dict]:  # type: ignore[type-arg]
    """The decode step's time per kind of launch (`_profile_ops`), the token
    and position put back before each kind, launched as the step launches
    them (the engine's PDL setting), in the step's form at `ctx` (the short
    form below `Plan.fma_until`)."""
    eng._use_form(ctx, 1)
    tok = eng.be.read(eng.tok).copy()

    def restore() -> None:
        eng.be.write(eng.pos, [ctx])
        eng.be.write(eng.tok, tok)

    with eng.launch_scope():  # the step's launch settings (Plan.pdl, Plan.cv)
        rows = _profile_ops(eng.ops, _op_bytes(eng, ctx), restore)
    text = _profile_text(rows, f"decode step at context {ctx}")
    print(text, flush=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"step_profile_{eng.cfg.hidden_size}_{ctx}.md").write_text(text + "\n")
    return rows


def _marginal_step(eng, ctx: int, out: Path | None, reps: int = 5) -> list[dict]:  # type: ignore[type-arg]
    """What each kind of launch costs the step where it sits in it: the
    step's launches captured as one graph (`graph_seconds`), then again
    without one kind's launches (leave one out: the other launches' results
    are then wrong, their times are what counts), and without the attention
    and its merge together; launched as the step launches them (the engine's
    PDL setting), the token and position put back before each graph. A
    kind's cost = the whole step's time - the time without it: its own time
    and its boundaries in the chain, where `_profile_step` times a kind's
    launches back to back, with none of the others around them."""
    eng._use_form(ctx, 1)
    tok = eng.be.read(eng.tok).copy()
    ops, need = list(eng.ops), _op_bytes(eng, ctx)
    keys = []
    for op, b in zip(ops, need, strict=True):
        gen = ",".join(str(v) for v in op.generics.values())
        keys.append((op.kernel.__name__, gen, b))
    attn = {"attn_decode", "attn_decode_short", "attn_decode_ring", "attn_decode_ring_early",
            "attn_decode_ring_merge", "attn_decode_ring_fold", "combine_splits"}  # fmt: skip
    groups: dict[str, list[bool]] = {}
    for key in dict.fromkeys(keys):
        groups[f"{key[0]} [{key[1]}] {key[2] / 1e6:.1f} MB"] = [k == key for k in keys]  # O, down: same shapes
    groups["attention + merge"] = [k[0] in attn for k in keys]

    def timed(keep: list[bool]) -> float:
        eng.be.write(eng.pos, [ctx])
        eng.be.write(eng.tok, tok)
        return graph_seconds([op for op, k in zip(ops, keep, strict=True) if k], reps) * 1e6

    rows = []
    with eng.launch_scope():
        full = [timed([True] * len(ops))]
        for name, drop in groups.items():
            without = timed([not d for d in drop])
            full.append(timed([True] * len(ops)))
            rows.append({"kind": name, "launches": sum(drop), "without_us": without})
    whole = statistics.median(full)
    for r in rows:
        r["cost_us"] = whole - r["without_us"]
    eng.be.write(eng.pos, [ctx])
    eng.be.write(eng.tok, tok)
    lines = [f"the step's launches, one left out at a time (context {ctx}): the whole step "
             f"{whole:.1f} us (runs {' '.join(f'{x:.1f}' for x in full)})",
             "| kind | launches | step without it, us | its cost in the step, us | us a launch |",
             "|---|---|---|---|---|"]  # fmt: skip
    for r in sorted(rows, key=lambda r: -r["cost_us"]):
        lines.append(f"| {r['kind']} | {r['launches']} | {r['without_us']:.1f} | {r['cost_us']:.1f} | "
                     f"{r['cost_us'] / r['launches']:.2f} |")  # fmt: skip
    text = "\n".join(lines)
    print(text, flush=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"step_marginal_{eng.cfg.hidden_size}_{ctx}.md").write_text(text + "\n")
    return rows


def _profile_prefill(eng, out: Path | None) -> list[dict]:  # type: ignore[type-arg]
    """The last prefill chunk's launches (as `prefill` built them) per kind."""
    ops = max(eng._prefill_ops.items())[1][0]
    rows = _profile_ops(ops, [0] * len(ops), lambda: None)
    text = _profile_text(rows, "prefill chunk")
    print(text, flush=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"prefill_profile_{eng.cfg.hidden_size}.md").write_text(text + "\n")
    return rows


def bench_model(
    name: str,
    contexts: list[int],
    tokens: int,
    prefill: int,
    dev: str,
    bandwidth: float,
    eager_tokens: int,
    profile_out: Path | None = None,
    plan: dict | None = None,  # type: ignore[type-arg]
    reference: bool = True,
) -> list[dict]:  # type: ignore[type-arg]
    import torch

    cfg = Qwen3Config.load(name if name in ("tiny", "small") else f"qwen3-{name}")
    gpu = dev != "cpu"
    w = random_weights(cfg, 0, backend="torch" if gpu else "numpy")
    cap = max(max(contexts) + tokens + 8, prefill + 8)
    t0 = time.perf_counter()
    eng_plan = None
    if plan:
        # the plan the engine would pick, with some of its block shapes replaced
        base = plan_for(cfg, 1 << max(0, (cap - 1).bit_length()),
                        torch.cuda.get_device_properties(0).multi_processor_count if gpu else None,
                        gpu and torch.cuda.get_device_capability(0)[0] == 9)  # fmt: skip
        fields = {
            k: ({**getattr(base, k), **v} if isinstance(v, dict) else v) for k, v in plan.items()
        }
        eng_plan = dataclasses.replace(base, **fields)
        print(f"plan: {eng_plan}", flush=True)
    eng = TileQwen3(cfg, w, max_seq=cap, backend="torch" if gpu else "numpy", plan=eng_plan)
    eng.reset()
    eng.prompt([1])  # compiles, captures the graph
    eng.be.sync()
    startup = time.perf_counter() - t0
    rows = []
    for ctx in contexts:
        eng.be.write(eng.pos, [ctx])
        step_s = _time(eng._run_step, tokens, dev)  # one step a replay (and a wait)
        # Decoding as `generate` does: `burst` steps a replay.
        eng.be.write(eng.pos, [ctx])
        eng.decode(eng.burst)  # captures the burst graph
        # every timed decode starts from this token at position ctx (the
        # torch-graph variant below must choose the same tokens)
        tok0 = eng.be.read(eng.tok).copy()
        eng.be.write(eng.pos, [ctx])
        n = max(eng.burst, tokens - tokens % eng.burst)
        got: list[list[int]] = []
        tile_s = timed(lambda g=got, m=n: g.append(eng.decode(m)), lambda: _sync(dev)) / n
        host_s = gpu_s = 0.0
        if gpu and eng._burst_graph is not None:
            # The GPU time of the burst graph (events on its stream around the
            # driver's graph launch, as benchmarks/launch.py does): the rest of
            # a token's wall time is the host's (replay checks, the wait).
            eng.be.write(eng.pos, [ctx])
            try:
                gpu_s = _graph_gpu_seconds(eng, max(1, n // eng.burst)) / eng.burst
            except Exception as e:  # the rest of the run still counts
                print(f"GPU time of the burst graph not measured: {e!r}", flush=True)
            host_s = max(0.0, tile_s - gpu_s) if gpu_s else 0.0
        alt = _torch_graph_decode(eng, ctx, tok0, n, got[0], dev) if gpu else {}
        if n > eng.burst:
            # as before `Graph.replay(times=...)`: a host wait after every burst
            eng.be.write(eng.pos, [ctx])
            eng.be.write(eng.tok, tok0)
            eng.bursts_per_wait = 1
            each: list[list[int]] = []
            try:
                t1 = timed(lambda g=each, m=n: g.append(eng.decode(m)), lambda: _sync(dev)) / n
            finally:
                eng.bursts_per_wait = 0
            alt["wait_each_burst_tok_s"] = 1 / t1
            alt["wait_each_burst_host_us"] = max(0.0, t1 - gpu_s) * 1e6 if gpu_s else 0.0
            alt["wait_each_burst_same_tokens"] = each[0] == got[0]
        if profile_out is not None:
            try:
                alt["step_profile"] = _profile_step(eng, ctx, profile_out if gpu else None)
            except Exception as e:  # the rest of the run still counts
                print(f"step profile failed: {e!r}", flush=True)
        # the bytes of a step at the run's mean position (its n steps read ctx .. ctx + n - 1
        # cached positions; 32 tokens at 1,024 count 0.03 % more than at ctx itself, 128 0.1 %)
        need = hbm_bytes_per_token(cfg, ctx + n // 2)
        row = {
            "model": name,
            "context": ctx,
            "mean_context": ctx + n // 2,
            "tile_tok_s": 1 / tile_s,
            "tile_ms": tile_s * 1e3,
            "step_ms": step_s * 1e3,
            "burst": eng.burst,
            "bytes_per_token": need,
            "gpu_ms": gpu_s * 1e3,
            "host_us": host_s * 1e6,
            "host_frac": host_s / tile_s,
            "startup_s": startup,
            "kernels": len(eng.ops),
            **alt,
        }
        if bandwidth:
            row["roofline_tok_s"] = bandwidth / need
            row["roofline_frac"] = (1 / tile_s) / row["roofline_tok_s"]
        if not reference:
            rows.append(row)
            print(_line(row), flush=True)
            continue
        # The reference, bf16 as usual inference, its cache sized to this context.
        dt = torch.bfloat16 if gpu else torch.float32
        ref = TorchQwen3(cfg, w, max_seq=ctx + tokens + 8, device=dev, dtype=dt)
        tok = torch.tensor([1], device=dev)
        pos = torch.tensor([ctx], device=dev)
        with torch.no_grad():
            eager = _time(lambda r=ref, t=tok, p=pos: r.step(t, p), eager_tokens, dev)
            row["torch_eager_tok_s"] = 1 / eager
            if gpu:
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(2):
                        ref.step(tok, pos)
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    ref.step(tok, pos)
                graph = _time(g.replay, tokens, dev)
                row["torch_graph_tok_s"] = 1 / graph
                row["speedup_vs_graph"] = graph / tile_s
                del g
        del ref
        rows.append(row)
        print(_line(row), flush=True)
    if prefill:
        import numpy as np

        toks = [int(t) for t in np.random.default_rng(0).integers(0, cfg.vocab_size, prefill)]
        if prefill + 1 <= eng.seq:

            def tile_prefill() -> None:
                eng.reset()
                eng.prefill(toks)

            tp = _time(tile_prefill, 3, dev)
            prof = None
            if profile_out is not None and gpu:
                try:
                    prof = _profile_prefill(eng, profile_out)
                except Exception as e:  # the rest of the run still counts
                    print(f"prefill profile failed: {e!r}", flush=True)
            rp = float("nan")
            if reference:
                dt = torch.bfloat16 if gpu else torch.float32
                ref = TorchQwen3(cfg, w, max_seq=prefill + 8, device=dev, dtype=dt)
                tt = torch.tensor(toks, device=dev)
                with torch.no_grad():
                    rp = _time(lambda: ref.prefill(tt), 3, dev)
            row = {
                "model": name,
                "prefill": prefill,
                "tile_s": tp,
                "torch_s": rp,
                "ratio": rp / tp,
                "tile_path": "batched",
                "profile": prof,
            }
            rows.append(row)
            print(
                f"{name:5s} prefill {prefill}: Tile {tp * 1e3:.1f} ms ({row['tile_path']}), "
                f"PyTorch {rp * 1e3:.1f} ms -> {row['ratio']:.2f}x",
                flush=True,
            )
    return rows


def _line(r: dict) -> str:  # type: ignore[type-arg]
    s = (
        f"{r['model']:5s} ctx {r['context']:6d}: Tile {r['tile_tok_s']:8.1f} tok/s "
        f"({r['tile_ms']:.2f} ms, {r['bytes_per_token'] / 1e9:.2f} GB/token)"
    )
    if "roofline_frac" in r:
        s += f", {r['roofline_frac']:.1%} of roofline ({r['roofline_tok_s']:.0f})"
    if "torch_graph_api_tok_s" in r:
        s += (
            f" [graphs captured by torch.cuda.graph: {r['torch_graph_api_tok_s']:.1f} tok/s, "
            f"same tokens: {r['torch_graph_api_same_tokens']}]"
        )
    if "step_ms" in r:
        s += f" [{r['burst']} steps a replay; one step a replay: {r['step_ms']:.2f} ms]"
    if "torch_eager_tok_s" in r:
        s += f"; PyTorch eager {r['torch_eager_tok_s']:.1f}"
    if "torch_graph_tok_s" in r:
        s += f", graph {r['torch_graph_tok_s']:.1f} -> {r['speedup_vs_graph']:.2f}x"
    if r.get("gpu_ms"):
        s += (
            f"; GPU {r['gpu_ms']:.2f} ms a token, host {r['host_us']:.1f} us/token "
            f"({r['host_frac']:.1%} of a token)"
        )
    if "wait_each_burst_tok_s" in r:
        s += (
            f" [a wait per burst: {r['wait_each_burst_tok_s']:.1f} tok/s, host "
            f"{r['wait_each_burst_host_us']:.1f} us/token, same tokens: "
            f"{r['wait_each_burst_same_tokens']}]"
        )
    return s


# issue 17's table (`--issue17`): the 4B rows first (the issue's headline), then 0.6B and 8B at 1,024
# (128 tokens a timed decode unless --tokens says: the host's fixed ~0.9 ms a `decode` call, one
# replay and one wait, is 1.2 % of 32 tokens on the H200 and 0.3 % of 128; the issue's own command
# decodes 256)
ISSUE17 = {"models": "4b,0.6b,8b", "contexts": "1024", "model_contexts": "4b=1024,8192,32768",
           "prefill": 2048, "prefill_models": "4b", "tokens": 128}  # fmt: skip


def rows_wanted(models: str, contexts: str, model_contexts: str = "", prefill: int = 0,
                prefill_models: str = "") -> list[tuple[str, list[int], int]]:  # fmt: skip
    """(model, its contexts, its prefill length) for each model of `models`
    (comma-separated): `contexts` unless `model_contexts` ("4b=1024,8192;8b=2048")
    names the model; `prefill` for every model, or only those `prefill_models`
    names (0 for the rest). A name in `model_contexts` or `prefill_models` that
    `models` lacks is a ValueError (it would measure nothing, unsaid)."""
    names = [m.strip() for m in models.split(",") if m.strip()]
    own: dict[str, list[int]] = {}
    for part in (x.strip() for x in model_contexts.split(";") if x.strip()):
        name, eq, ctxs = part.partition("=")
        if not eq or not ctxs.strip():
            raise ValueError(f"--model-contexts takes MODEL=CTX,CTX;... ('4b=1024,8192'), not {part!r}")
        own[name.strip()] = [int(c) for c in ctxs.split(",")]
    pre = {m.strip() for m in prefill_models.split(",") if m.strip()} or set(names)
    stray = (set(own) | pre) - set(names)
    if stray:
        raise ValueError(f"--model-contexts / --prefill-models name {sorted(stray)}, not in --models {names}")
    base = [int(c) for c in contexts.split(",")]
    return [(m, own.get(m, base), prefill if m in pre else 0) for m in names]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="0.6b,4b,8b")
    ap.add_argument("--contexts", default="1024")
    ap.add_argument("--model-contexts", default="", help='a model\'s own contexts: "4b=1024,8192,32768;8b=1024"')
    ap.add_argument("--prefill-models", default="", help="the models that time the prefill (default: all)")
    ap.add_argument("--issue17", action="store_true",
                    help="issue 17's table: 0.6B / 8B at 1,024, 4B at 1,024 / 8,192 / 32,768, 4B prefill 2,048 "
                         "(replaces --models, --contexts, --model-contexts, --prefill and --prefill-models; "
                         "--tokens 128 unless given)")
    ap.add_argument("--tokens", type=int, default=None, help="decode steps timed per point (64; --issue17 128)")
    ap.add_argument("--eager-tokens", type=int, default=8)
    ap.add_argument("--prefill", type=int, default=0, help="prompt length to time (0: none)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--out", default="")
    ap.add_argument(
        "--profile-step",
        action="store_true",
        help="also run one step launch by launch under tilelang.profile(): GPU time per kernel",
    )
    ap.add_argument(
        "--plan",
        default="",
        help='JSON: block shapes replacing the engine\'s plan, e.g. \'{"bn": {"o": 8}, "ns": 16}\'',
    )
    ap.add_argument("--no-reference", action="store_true", help="skip the PyTorch reference")
    a = ap.parse_args(argv)
    if a.issue17:
        for k, v in ISSUE17.items():
            if k != "tokens" or a.tokens is None:
                setattr(a, k, v)
    a.tokens = 64 if a.tokens is None else a.tokens
    wanted = rows_wanted(a.models, a.contexts, a.model_contexts, a.prefill, a.prefill_models)
    bandwidth = 0.0
    if a.device == "cuda":
        from generate import copy_bandwidth

        bandwidth = copy_bandwidth()
        import torch

        print(
            f"{torch.cuda.get_device_name()}: copy bandwidth {bandwidth / 1e12:.2f} TB/s",
            flush=True,
        )
    rows = []
    t_all = time.perf_counter()
    for m, ctxs, pre in wanted:
        t_m = time.perf_counter()
        rows += bench_model(
            m,
            ctxs,
            a.tokens,
            pre,
            a.device,
            bandwidth,
            a.eager_tokens,
            Path(a.out or ".") if a.profile_step else None,
            json.loads(a.plan) if a.plan else None,
            not a.no_reference,
        )
        print(f"{m}: {time.perf_counter() - t_m:.1f} s (all so far {time.perf_counter() - t_all:.1f} s)",
              flush=True)  # fmt: skip
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "decode.json").write_text(
            json.dumps({"bandwidth": bandwidth, "rows": rows}, indent=1)
        )
        (out / "decode.md").write_text(
            "\n".join(
                _line(r)
                if "context" in r
                else json.dumps({k: v for k, v in r.items() if k != "profile"})
                for r in rows
            )
            + "\n"
        )
        import _roofline

        # a decode step reads every weight once: about 2 FLOPs per 2-byte weight,
        # so FLOPs ~ bytes (the KV cache's few FLOPs per byte are left out)
        pts = [
            (f"{r['model']} ctx {r['context']}", r["bytes_per_token"], r["bytes_per_token"],
             r["tile_ms"] / 1e3)
            for r in rows
            if "bytes_per_token" in r
        ]  # fmt: skip
        print(_roofline.write(pts, out / "roofline_decode.png", "decode step (Tile)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
