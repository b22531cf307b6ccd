"""Round 27 of the user's mistakes (huser28, 2026-12-07): a systems / data-engineering user's slips in integer
and bit-level kernels, each with the help applied by the letter and the fixed program checked against NumPy
(round 27's checks, tests/user/test_user_programs27.py).

- r01 w13's byte swap of big-endian u16 frames written as Rust's `w.swap_bytes()` (E0103): the help was a
  `u32` formula, `(x >> 24) | ((x >> 8) & 0xFF00u32) | ..`, which mixes `u16` with `u32` and shifts a 16-bit
  value by 24 (E0201 once applied). It is now written for the receiver's type and name.
"""

from __future__ import annotations

from test_user_programs27 import CHECKS
from userprog import wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "r01_swap_bytes_of_a_u16_frame": (
        "Tile has no byte-swap built-in: for a `u16`: `let v = w;` then `(v << 8u16) | (v >> 8u16)`",
        [("let v = w.swap_bytes();", "let v = w;\n    let v = (v << 8u16) | (v >> 8u16);")]),
}

FIXED = {"r01_swap_bytes_of_a_u16_frame": CHECKS["w13_u16_raw_sensor_frames"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("r*.tile", FIXES, FIXED)
