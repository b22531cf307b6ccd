"""Round 29 of the hostile review (hrev29, 2026-12-07): written shapes and hints the checker accepted and then
did not honour, each with the help applied by the letter and the fixed program's output checked against NumPy.

- p01 a helper declared for 64 channels (`w: &Tensor<f32, [64]>`) given a kernel's `[?]` gain of 48: the
  declared size was accepted and ignored (the loads past 48 read zeros); now E0501 at check where the size is
  known and at the launch where it is known only then. The help: declare the dimension `?`.
- p02 a byte histogram's bin count as a `u8` const generic, launched with 256 bins: the kernel read 256, a
  host function's `u8` generic would have read 0 (E0222 now). The help: declare it `i32`.
- p03 a helper generic in its row groups' height, called with 3 for a block of 8 rows (E0402, at the call's
  value; before the round every height was refused alike). The help: a height that divides 8, e.g. 2.
"""

from __future__ import annotations

import numpy as np
from userprog import wrong_suite

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "p01_helper_sized_for_another_model": (
        "or declare it `?` in `gained` to take any size",
        [("w: &Tensor<f32, [64]>, t", "w: &Tensor<f32, [?]>, t")]),
    "p02_byte_histogram_bins_in_u8": (
        "give `BINS` a value in 0..=255, or declare it a type that holds 256 (`const BINS: i32`)",
        [("const BINS: u8", "const BINS: i32")]),
    "p03_nested_rows_that_do_not_divide": (
        "call `second_group` with const generics for which `(8 % H) == 0` holds, e.g. `H` = 2",
        [("second_group::<3>(z, ones::<f32>([3]))", "second_group::<2>(z, ones::<f32>([2]))")]),
}


def _p01(t: Tensors, out: str) -> None:
    x = np.arange(48, dtype=np.float32)
    np.testing.assert_array_equal(t["z"], x * 0.5)
    assert out.split() == [str(float((x * 0.5).sum()))], out


def _p02(t: Tensors, out: str) -> None:
    np.testing.assert_array_equal(t["counts"], np.full(256, 2, np.int32))
    assert out.split() == ["512"], out


def _p03(t: Tensors, out: str) -> None:
    want = np.zeros(16, np.float32)
    want[[2, 3, 10, 11]] = 1.0
    np.testing.assert_array_equal(t["z"], want)


CHECKS = {"p01_helper_sized_for_another_model": _p01, "p02_byte_histogram_bins_in_u8": _p02,
          "p03_nested_rows_that_do_not_divide": _p03}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("p*.tile", FIXES, CHECKS)
