"""A user round's programs (tests/user/programs/PREFIX??_*.tile) on a real GPU, each run once: its tensors against
the interpreter's (tests/user/test_user_gpu.py's GPU_TOL for floats, integers and bools exact) and its own NumPy
check (CHECKS of the round's test module) on the GPU's tensors; a line each, "ok" or "FAILED" with the error.
The huser*_device.sh scripts' first part.

    python3 benchmarks/user_programs_gpu.py test_user_programs25 n
    python3 benchmarks/user_programs_gpu.py test_user_programs26 q --count-int-differ --bf16-tol 2e-3

`--count-int-differ`: integer and bool tensors may differ where a discrete decision sits on a hardware-approximated
value; their differing elements are counted ("ok~ N differ") instead of failing the program. `--bf16-tol`: the
tolerance of bf16 tensors (GPU_TOL's by default)."""

from __future__ import annotations

import argparse
import importlib
import io
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "user"), str(ROOT / "tests")]

from test_user_gpu import GPU_TOL, _is_bf16  # noqa: E402
from userprog import program_tensors  # noqa: E402

import tilelang.run as run  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("checks", help="the round's test module, whose CHECKS maps a program's name to its check")
    ap.add_argument("prefix", help="the round's program prefix (one letter)")
    ap.add_argument("--count-int-differ", action="store_true")
    ap.add_argument("--bf16-tol", type=float, default=GPU_TOL["bf16"])
    a = ap.parse_args()
    checks = importlib.import_module(a.checks).CHECKS
    # (a prefix two rounds share, round 6's w01-w03 and round 27's w04..: the round's own, those its CHECKS has)
    names = sorted(p.stem for p in (ROOT / "tests" / "user" / "programs").glob(f"{a.prefix}[0-9][0-9]_*.tile")
                   if p.stem in checks)
    width = max(map(len, names), default=0) + 2
    for name in names:
        t0 = time.time()
        try:
            path = f"tests/user/programs/{name}.tile"
            cpu = run.execute(path, "cpu", out=io.StringIO())
            out = io.StringIO()
            gpu = run.execute(path, "gpu", out=out)
            assert gpu.device.kind == "gpu"
            want, got = program_tensors(cpu), program_tensors(gpu)
            assert sorted(got) == sorted(want)
            differ = 0
            for k, w in want.items():
                if w.dtype.kind == "f":
                    tol = (a.bf16_tol if _is_bf16(cpu, k)
                           else GPU_TOL[{2: "f16", 4: "f32", 8: "f64"}[w.dtype.itemsize]])
                    np.testing.assert_allclose(got[k].astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                                               err_msg=k, equal_nan=True)
                elif a.count_int_differ:
                    differ += int((got[k] != w).sum())
                else:
                    np.testing.assert_array_equal(got[k], w, err_msg=k)
            checks[name](got, out.getvalue())
            tag = "ok     " if differ == 0 else f"ok~ {differ} differ"
            print(f"{name:{width}s} {tag}  {time.time() - t0:5.1f} s", flush=True)
        except Exception as e:
            msg = str(e).strip().splitlines()
            print(f"{name:{width}s} FAILED  {type(e).__name__}: {' | '.join(msg[:3])[:200]}", flush=True)


if __name__ == "__main__":
    main()
