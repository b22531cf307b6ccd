"""SHA-256 of the PTX (sm_90a) of every kernel instance one std::llm engine
launches (huser, round 8, 2026-12-05).

std::llm's attention kernels count key blocks with `std::math::cdiv_wrapping`
since round 8 (std::math::cdiv became the exact, never-wrapping ceiling
division); the two bodies are the old `cdiv`'s, so these kernels must compile
to the same code. This builds the Qwen3 `tiny` engine's operations on NumPy
arrays under three plans (Hopper's, another GPU's, the interpreter's; nothing runs), lowers each operation's kernel
instance and prints `<sha256[:16]> <kernel> <grid>` for its PTX, one line an
instance (the long and short decode forms, a prefill chunk, the last row):
`python benchmarks/huser_llm_ptx.py` in two trees, then `diff`. CPU only.
2026-12-05 14:53: main 71b6f46 and branch huser8 give the same 28 lines.
"""

from __future__ import annotations

import hashlib
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "llm"))

import numpy as np  # noqa: E402
from engine import TileQwen3, plan_for  # noqa: E402
from model import Qwen3Config, random_weights  # noqa: E402

from tilelang.backend import TensorFacts, emit_ptx  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402


def main() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)  # operations built, never run
    cfg = Qwen3Config.load("tiny")
    w = random_weights(cfg, seed=0)
    ops = []
    for sm, hopper in ((132, True), (132, False), (None, False)):
        eng = TileQwen3(cfg, w, max_seq=64, plan=plan_for(cfg, 64, sm, hopper))
        ops += [op for form in eng._form_ops.values() for op in form]
        ops += eng._prefill_step_ops(0, 16) + eng._last_row_ops(16)
    seen: set[str] = set()
    for op in ops:
        plan = getattr(op, "_plan", None)
        if plan is None:
            continue
        kir = plan.kir
        args = op._kernel_args([np.array(h) for h in op._hosts])
        facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in a.shape))
                 for p, a in zip(kir.params, args, strict=True) if isinstance(p, ir.TensorParam)}
        h = hashlib.sha256(emit_ptx(kir, "sm_90a", facts).encode()).hexdigest()[:16]
        line = f"{h} {kir.name}"
        if line not in seen:
            seen.add(line)
            print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
