"""A GPU check of huser14's conversions (not a benchmark): one step, ~20-60 s.

    python benchmarks/round_once_gpu.py

Runs on the GPU, bit for bit:
- tests/user/programs/k11_conversions_round_once.tile with its NumPy check (exact rounding by Fractions):
  i64/u64 -> f32 and bf16 past 2^53, i32 -> bf16, f64 -> f16/bf16 just above midpoints;
- k01 (u32/u64 past the signed range) and k02 (f16/bf16 edges, signed zeros) with theirs;
- tests/backend/test_gpu.py's cast kernel on its edge values (2^60 + 2^36 + 1 as f32 must be 2^60 + 2^37).

Expected: `PASS` on every line. Why: the backend now emits `sitofp i64 to float` (PTX cvt.rn.f32.s64: one
rounding) and an f32 rounded to odd for bf16, as the interpreter's round-to-odd f64; before, both went through
f64 to nearest and agreed with each other (and llsim, which rounded the same way) but not with NumPy or Rust.
A `FAIL` line names the program and the first mismatch; exit status 1 then.
"""

from __future__ import annotations

import io
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "user"), str(ROOT / "tests" / "backend"), str(ROOT / "tests")]


def main() -> int:
    import tilelang.run as run
    from tilelang.runtime import cuda

    if not cuda.is_available():
        print("SKIP no CUDA device")
        return 0
    from test_user_programs14 import CHECKS
    from userprog import DIR, program_tensors

    failed = 0
    for name in ("k11_conversions_round_once", "k01_unsigned_past_signed", "k02_half_bf16_edges"):
        out = io.StringIO()
        try:
            ex = run.execute(str(DIR / f"{name}.tile"), "gpu", out=out)
            assert ex.device.kind == "gpu", ex.device.kind
            CHECKS[name](program_tensors(ex), out.getvalue())
            print(f"PASS {name} on the GPU, bit for bit")
        except Exception as e:  # noqa: BLE001 (a check script: report and go on)
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            traceback.print_exc(limit=2, file=sys.stderr)
    try:
        import test_gpu

        dev = cuda.device()
        for src in sorted(test_gpu.CAST_EDGES):
            test_gpu.test_casts_round_exactly_like_the_interpreter(dev, src)
        print("PASS test_gpu cast edges (i64, i32, f64 sources)")
    except Exception as e:  # noqa: BLE001
        failed += 1
        print(f"FAIL test_gpu cast edges: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        traceback.print_exc(limit=2, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
