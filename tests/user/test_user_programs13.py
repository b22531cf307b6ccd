"""Round 13 of the independent user's programs (huser13, 2026-12-06): domains
rounds 1-12 did not take, written from README.md, docs/reference.md and
examples/ alone.

- j01: matrix products of integer and f64 tiles, which `dot` and `mma` take
  from this round on (they were E0206 with a multiply-and-sum help): an
  int8 GEMM with an i32 accumulator over a K loop and a partial row tile,
  u8 products past 2^15, i32 sums that wrap, an i64 `mma` onto a carried
  accumulator exact past 2^53, and an f64 A^T A whose columns differ by
  1e-9 around 1e4.

Each program runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs; each runs in the
NVPTX simulator at sm_90a and sm_80, and its PTX assembles on both;
`test_user_gpu.py` runs them on a GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]
i64 = np.int64


def _j01(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(i64), t["b"].astype(i64)
    assert t["a"].dtype == np.int8 and a.min() < -100 and a.max() > 100
    np.testing.assert_array_equal(t["c"], a @ b)  # |sum| < 40 * 2^14: no wrap
    ua, ub = t["ua"].astype(i64), t["ub"].astype(i64)
    assert t["ua"].dtype == np.uint8 and ua.max() > 250
    np.testing.assert_array_equal(t["uc"], ua @ ub)
    exact = t["ia"].astype(i64) @ t["ib"].astype(i64)
    assert exact.min() > 2**42  # every sum wraps
    np.testing.assert_array_equal(t["ic"], exact.astype(np.int32))  # two's complement: NumPy's wrap
    want = 9007199254740993 + t["la"] @ t["lb"]
    assert want.min() > 2**53
    np.testing.assert_array_equal(t["lc"], want)
    fa = t["fa"]
    g = fa.T @ fa
    np.testing.assert_allclose(t["g"], g, rtol=1e-15)
    d = t["g"][1, 1] - 2 * t["g"][0, 1] + t["g"][0, 0]  # |col1 - col0|^2 = 8 * (1e-9)^2, read through the sums
    assert abs(np.sum((fa[:, 1] - fa[:, 0]) ** 2) - 8e-18) < 1e-20 and abs(d) < 1e-6
    assert out == "[24, 16] true true true\n"


CHECKS = {
    "j01_int_f64_products": _j01,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "j*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")])
