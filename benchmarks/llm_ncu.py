"""Eager decode steps of the Qwen3 engine for Nsight Compute (no graph: ncu
profiles each launch on its own), at one context, on a copy of a config with
fewer layers (every layer's launches are the same kernels with another
`layer`): the kernels' own duration, warp stall reasons and occupancy.

    ncu --clock-control none -k regex:'attn_decode|combine_splits' \\
        --section SpeedOfLight --section WarpStateStats --launch-count 4 \\
        python benchmarks/llm_ncu.py --model 4b --context 1024 [--plan '{"pdl": false}']

Runs `--steps` steps (the first compiles; ncu's --launch-skip can pass over
them) with the engine's plan for the card, changed by `--plan`'s fields.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="4b")
    ap.add_argument("--context", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--plan", default="{}", help="JSON plan-field overrides")
    a = ap.parse_args(argv)
    from engine import TileQwen3
    from model import Qwen3Config, random_weights

    cfg = Qwen3Config.load(a.model if a.model in ("tiny", "small") else f"qwen3-{a.model}")
    cfg = dataclasses.replace(cfg, num_hidden_layers=min(a.layers, cfg.num_hidden_layers))
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(cfg, w, max_seq=a.context + a.steps + 8, backend="torch", graph=False)
    over = json.loads(a.plan)
    if over:
        base = eng.plan
        eng.replan(dataclasses.replace(base, **{k: ({**getattr(base, k), **v} if isinstance(v, dict) else v)
                                              for k, v in over.items()}))
    eng.be.write(eng.pos, [a.context])
    toks = [0]
    for _ in range(a.steps):
        eng.feed(toks[-1])
        toks.append(int(eng.be.read(eng.tok)[0]))
    eng.be.sync()
    print(f"{a.model} ({cfg.num_hidden_layers} layers) ctx {a.context}: {a.steps} eager steps, tokens {toks[1:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
