"""CPU check (hcliff3, 2026-12-06): the engine kernels whose sm_90a PTX `TILEC_REMAKE_FREE` changes (kv_append,
rope_kv_rows, nucleus_round, nucleus_kept at Qwen3-0.6B's plan; `ptx_sha.py`) run in llsim with the rule off and
on, on the same random float inputs: every array must come back bit-identical. ~2 minutes (rope_kv_rows ~75 s).

    PYTHONPATH=. python3 benchmarks/remake_sim_ab.py [kernel names]

Run at 136a944d: all four `same`.
"""
import dataclasses, os, sys, time, warnings
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
for sub in ("", "benchmarks", "examples/llm", "examples/python", "tests/backend"):
    sys.path.insert(0, str(ROOT / sub))
import numpy as np
import llsim
from engine import TileQwen3, plan_for
from model import Qwen3Config
warnings.simplefilter("ignore", RuntimeWarning)
names = set(sys.argv[1:]) or {"kv_append", "rope_kv_rows", "nucleus_round", "nucleus_kept"}
cfg = dataclasses.replace(Qwen3Config.load("qwen3-0.6b"), num_hidden_layers=1)
w = {n: np.zeros(s, np.float32) for n, s in cfg.shapes().items()}
ops = []
for hopper, sampling in ((True, None), (True, (0.8, 0.9, 1))):
    eng = TileQwen3(cfg, w, max_seq=2048, plan=plan_for(cfg, 2048, 132, hopper), sampling=sampling)
    ops += [op for form in eng._form_ops.values() for op in form]
    ops += eng._prefill_step_ops(0, 512) + eng._last_row_ops(512)
seen = set()
for op in ops:
    plan = getattr(op, "_plan", None)
    if plan is None or plan.kir.name not in names:
        continue
    key = (plan.kir.name, plan.kir.instantiation)
    if key in seen:
        continue
    seen.add(key)
    rng = np.random.default_rng(1)
    base = []
    for h in op._hosts:
        a = np.array(h)
        if a.dtype.kind == "f":
            a = rng.standard_normal(a.shape).astype(a.dtype)
        base.append(a)
    print(key, "grid", op.grid, [np.asarray(a).shape for a in base], flush=True)
    outs = {}
    t0 = time.time()
    for env in ("0", "1"):
        os.environ["TILEC_REMAKE_FREE"] = env
        arrs = [a.copy() for a in base]
        llsim.SimDevice("sm_90a").run(plan.kir, op.grid, op._kernel_args(arrs))
        outs[env] = arrs
    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(outs["0"], outs["1"]))
    print(key, "grid", op.grid, "same" if same else "DIFFERENT", f"{time.time() - t0:.0f}s", flush=True)
