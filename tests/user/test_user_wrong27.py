"""Round 29 of the hostile review (hrev29, 2026-12-07): written shapes and hints the checker accepted and then
did not honour, each with the help applied by the letter and the fixed program's output checked against NumPy.

- p01 a helper declared for 64 channels (`w: &Tensor<f32, [64]>`) given a kernel's `[?]` gain of 48: the
  declared size was accepted and ignored (the loads past 48 read zeros); now E0501 at check where the size is
  known and at the launch where it is known only then. The help: declare the dimension `?`.
"""

from __future__ import annotations

import numpy as np
from userprog import wrong_suite

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "p01_helper_sized_for_another_model": (
        "or declare it `?` in `gained` to take any size",
        [("w: &Tensor<f32, [64]>, t", "w: &Tensor<f32, [?]>, t")]),
}


def _p01(t: Tensors, out: str) -> None:
    x = np.arange(48, dtype=np.float32)
    np.testing.assert_array_equal(t["z"], x * 0.5)
    assert out.split() == [str(float((x * 0.5).sum()))], out


CHECKS = {"p01_helper_sized_for_another_model": _p01}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("p*.tile", FIXES, CHECKS)
