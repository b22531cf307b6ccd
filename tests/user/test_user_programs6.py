"""Round 6 of the independent user's programs (huser, 2026-12-05 09:03),
written from README.md, docs/reference.md and examples/ alone.

- w01: reductions of `bool` tiles in a kernel (`m.max(1)` any, `min(m, 1)`
  all, `argmax` the first true, `argmin` the first false, over rows that are
  all true, all false and mixed; `m.max()`/`m.min()` of a whole tile in an
  `if`, `.item()` of a one-element `bool` tile), against the host's
  reductions of the same `bool` tensor and NumPy. Before: the checker
  refused a `bool` tile's max/min ("cast it with `as i32` first") while the
  host's `bool` tensors had them, and `.item()` of a `bool` tile passed the
  checker and then failed as "`max` is not defined on `bool`" in "this
  instance" of a kernel that was not generic. Its PTX assembles and it is
  simulated once (sm_90a): the `bool` reductions lower through `i32` ones,
  a code path no other user program takes.

Each program runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs (never from its
outputs).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _w01(t: Tensors, out: str) -> None:
    n = 16
    k = np.arange(6 * n, dtype=np.int32).reshape(6, n)
    row = k // n
    x = np.where(row == 1, 0, np.where(row == 4, 99, (k * 7) % 23))
    m = x < 3
    np.testing.assert_array_equal(t["any"], m.any(1))
    np.testing.assert_array_equal(t["all"], m.all(1))
    np.testing.assert_array_equal(t["first"], m.argmax(1))
    np.testing.assert_array_equal(t["gap"], m.argmin(1))
    assert t["all"].tolist().count(True) == 1 and t["any"].tolist().count(False) == 1  # rows 1 and 4
    y = np.arange(37) + 30
    want = [1 * (y > 50).any() + 10 * (y > 50).all() + 100 * (y[3] > 0), (y > 50).argmax(), (y > 50).argmin(), 0]
    np.testing.assert_array_equal(t["flags"], want)
    assert out.endswith(f"Tensor<i32, [4]> [{want[0]}, {want[1]:3d}, {want[2]:3d}, {want[3]:3d}]\n"), out


CHECKS = {
    "w01_bool_reductions": _w01,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "w*.tile", CHECKS, [("w01_bool_reductions", "sm_90a")],
    ptx=[("w01_bool_reductions", "sm_80"), ("w01_bool_reductions", "sm_90a")])
