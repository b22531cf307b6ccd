"""Round 4 of the user's mistakes (huser, 2026-12-05), around round 4's
programs (`tests/user/wrong/y*.tile`): a batched matmul giving `mma` the
[1, BM, BK] tiles as loaded, a generic host helper whose element type comes
from nowhere (it ran with `T` as f32), NumPy's `astype` and PyTorch's
`clamp`, an element of a 1-D tensor indexed twice, the output made without
`mut`, the result read before the launch is waited for, a nested tile index
counted over the input's tiles, an argmax stored into a float tensor.

`test_user_wrong.py` checks each file's code, place, underline and help
line. Here: the help names the fix, and the program with that fix applied
passes the checks of `tilec check -D warnings` (and runs: the fixed batched matmul and
column scan give NumPy's answer); the editor reports the same first error.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from userprog import (
    apply_fixes,
    assert_help_leads_to_a_working_program,
    assert_the_editor_shows_the_first_error,
)

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "y01_bmm_3d_operand": ("`ta.reshape([BM, BK])`",
                           [("block_id(1), k]);", "block_id(1), k]).reshape([BM, BK]);"),
                            ("k, block_id(2)]);", "k, block_id(2)]).reshape([BK, BN]);"),
                            ("zeros::<f32>([1, BM, BN])", "zeros::<f32>([BM, BN])"),
                            ("c.store(acc);", "c.store(acc.reshape([1, BM, BN]));")]),
    "y02_generic_fn_untyped": ("`filled::<f32>(..)`", [("filled(4, 2.5)", "filled::<f32>(4, 2.5)")]),
    "y03_astype": ("`t.argmin(1) as f32`", [("t.argmin(1).astype(f32)", "t.argmin(1) as f32")]),
    "y04_clamp": ("`minimum(maximum(x.load_like(z), 0.0), 6.0)`",
                  [("x.load_like(z).clamp(0.0, 6.0)", "minimum(maximum(x.load_like(z), 0.0), 6.0)")]),
    "y05_host_double_index": ("drop the last index: `z[5]`", [("z[5][0]", "z[5]")]),
    "y06_forgotten_mut": ("`mut z`", [("let z = zeros", "let mut z = zeros")]),
    "y07_read_while_launched": ("call `h.wait()` before", [("    print(z.sum());\n    h.wait();\n",
                                                            "    h.wait();\n    print(z.sum());\n")]),
    "y08_nested_index_from_input": ("`for i in 0..q.num_tiles(0)`", [("0..p.num_tiles(0)", "0..q.num_tiles(0)")]),
    "y09_argmax_into_f32": ("`argmax(t, 1) as f32`", [("z.store(argmax(t, 1));", "z.store(argmax(t, 1) as f32);")]),
}


def _fixed(name: str) -> str:
    return apply_fixes(DIR / f"{name}.tile", FIXES[name][1])


def test_every_mistake_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("y*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", *FIXES[name], tmp_path)


def test_the_fixed_programs_compute_the_right_thing(tmp_path: Path) -> None:
    f = tmp_path / "bmm.tile"
    f.write_text(_fixed("y01_bmm_3d_operand"), encoding="utf-8")
    c = run.execute(str(f), "cpu", out=io.StringIO()).main_locals["c"].numpy()
    np.testing.assert_array_equal(c, np.full((2, 32, 32), 48.0))  # ones @ ones with K = 48
    f = tmp_path / "scan.tile"
    f.write_text(_fixed("y08_nested_index_from_input"), encoding="utf-8")
    y = run.execute(str(f), "cpu", out=io.StringIO()).main_locals["y"].numpy()
    np.testing.assert_array_equal(y, np.cumsum(np.ones((29, 6), np.int32), 0))
    f = tmp_path / "fill.tile"
    f.write_text(_fixed("y02_generic_fn_untyped"), encoding="utf-8")
    out = io.StringIO()
    run.execute(str(f), "cpu", out=out)
    assert out.getvalue().strip() == "Tensor<f32, [4]> [2.5, 2.5, 2.5, 2.5]"


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")
