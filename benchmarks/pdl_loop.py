"""The loop of `tests/llm/test_engine_gpu.py::test_pdl_decodes_the_same_tokens`
(every PDL trigger and pre-wait mode over sm_90's plan, in both graph APIs,
greedy tokens against the plan with PDL off), repeated, over plan variants,
for a time budget: one line a variant with the repetitions run and the
configurations that decoded other tokens (none expected: issue 17's PDL flake
was ptxas hoisting `ld.global.nc` loads above `griddepcontrol.wait`, fixed in
`backend/llvm.py`; `tests/llm/test_pdl_order.py` is its CPU model).

    python benchmarks/pdl_loop.py --seconds 40 --variants '[{}, {"ge": []}, {"rs": 0}]'

Several processes at once load the card as the 12-worker GPU suite did.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

# the test's (graph API, PDL mode, Plan.pe) configurations, in its order
CONFIGS = [("tile", "late", 0), ("torch", "late", 0), ("torch", "entry", 0), ("torch", "exit", 0),
           ("torch", "late+prefetch", 0), ("torch", "late+bulk", 0), ("tile", "late+loads", 0),
           ("torch", "late+loads", 0), ("tile", "late", 1), ("torch", "late+loads", 1), ("torch", "last", 0),
           ("tile", "last+loads", 0), ("torch", "last+loads", 0)]


def _plan_with(base: object, over: dict) -> object:
    """sm_90's plan `base` with the JSON overrides `over` (a list as the tuple
    `Plan.ge` holds; a dict updates the plan's, e.g. {"st": {"qkv": 1}})."""
    out = {}
    for k, v in over.items():
        old = getattr(base, k)
        out[k] = tuple(v) if k == "ge" else {**old, **v} if isinstance(old, dict) else v
    return dataclasses.replace(base, **out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default="[{}]", help="JSON list of Plan field overrides of sm_90's plan")
    ap.add_argument("--seconds", type=float, default=40.0, help="time budget (a repetition started is finished)")
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--cpu", action="store_true", help="the interpreter with an H100's plan (a check of this script: "
                                                       "PDL is ignored there)")
    args = ap.parse_args()
    from engine import TileQwen3
    from model import Qwen3Config, random_weights
    from plan import plan_for

    from tilelang.runtime import cuda_pdl

    cfg = dataclasses.replace(Qwen3Config.load("tiny"), tie_word_embeddings=False)
    variants = json.loads(args.variants)
    if args.cpu:
        eng = TileQwen3(cfg, random_weights(cfg, seed=3), max_seq=64, plan=plan_for(cfg, 64, 132, hopper=True))
    else:
        import torch

        if torch.cuda.get_device_capability()[0] < 9:
            print("pdl_loop: programmatic dependent launch needs sm_90")
            return 2
        eng = TileQwen3(cfg, random_weights(cfg, seed=3, backend="torch"), max_seq=64, backend="torch")
    base = eng.plan
    t_end = time.time() + args.seconds
    runs = {i: 0 for i in range(len(variants))}
    bad: dict[int, list[str]] = {i: [] for i in range(len(variants))}
    old = cuda_pdl.ON
    try:  # (SIGINT, e.g. `timeout -s INT`, ends the loop and still prints what ran)
        while time.time() < t_end:
            for i, over in enumerate(variants):
                plan = _plan_with(base, over)
                eng.graph_api = "tile"
                eng.replan(dataclasses.replace(plan, pdl=False))
                want = eng.generate([5, 6, 7], args.steps, batched=False)
                # as the test: "+loads" rows lead with their first weight tiles (the "tile" API's
                # GEMVs at ST 2, the "torch" API's at ST -1); the other rows keep the last row's
                lead = {"tile": dict.fromkeys(("qkv", "o", "gate_up", "down", "lm"), 2),
                        "torch": {**plan.st, **dict.fromkeys(("qkv", "o", "gate_up", "down"), -1)}}
                for api, mode, pe in CONFIGS:
                    eng.graph_api = api
                    st = lead[api] if mode.endswith("+loads") else eng.plan.st
                    eng.replan(dataclasses.replace(plan, pdl=mode, pe=pe, st=st))
                    eng.reset()
                    got = eng.generate([5, 6, 7], args.steps, batched=False)
                    if got != want:
                        k = next(j for j, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
                        bad[i].append(f"{api}/{mode}/pe{pe}@{k}")
                runs[i] += 1
                if time.time() >= t_end:
                    break
    except KeyboardInterrupt:
        print("pdl_loop: interrupted; the repetitions finished so far:")
    finally:
        cuda_pdl.set_pdl(old, "late", "")
    for i, over in enumerate(variants):
        tag = "ok" if not bad[i] else f"DIFF {len(bad[i])}: {' '.join(bad[i][:8])}"
        print(f"pdl_loop {json.dumps(over)}: {runs[i]} reps x {len(CONFIGS)} configs, {tag}")
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
