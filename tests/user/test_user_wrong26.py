"""Round 24 of the user's mistakes (huser25, 2026-12-07), each with the help applied by the letter and the fixed
program checked against NumPy (round 24's checks, tests/user/test_user_programs24.py).

- o01 l07's saturating add of u8 pixels in Rust's spelling, `ta.saturating_add(tb)`: the help was one template
  for every type, `minimum(ta as i64 + tb as i64, i32::MAX as i64) as i32`, an `i32` tile where a `u8` one was
  stored (E0201 once applied), and `saturating_sub`'s said `where(a > b, a - b, 0)` of signed values too; both
  (and `saturating_mul`) are now written for the receiver's type: below, every integer type's help, applied,
  gives Rust's saturating value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_user_programs24 import CHECKS
from userprog import wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "o01_saturating_add_of_u8_pixels": (
        "widen, add and clamp: `minimum(ta as i32 + tb as i32, u8::MAX as i32) as u8`",
        [("ta.saturating_add(tb)", "minimum(ta as i32 + tb as i32, u8::MAX as i32) as u8"),
         ("ta.saturating_sub(tb)", "where(ta > tb, ta - tb, 0)")]),
}

FIXED = {"o01_saturating_add_of_u8_pixels": CHECKS["l07_u8_blend_sobel"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("o*.tile", FIXES, FIXED)


def _first_help(src: str) -> str:
    from tilelang import driver

    errs = [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]
    assert errs and errs[0].code == "E0103", [(d.code, d.message) for d in errs]
    return errs[0].help[0]


_SAT = """kernel fn k<const B: i32>(z: &mut Tensor<ELT, [B]>, x: &Tensor<ELT, [?]>, y: &Tensor<ELT, [?]>) {
    let a = x.load_like(z);
    let b = y.load_like(z);
    z.store(EXPR);
}
"""


@pytest.mark.parametrize("dt", ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"])
def test_the_saturating_helps_are_written_for_the_values_type(dt: str, tmp_path: Path) -> None:
    """`a.saturating_add(b)`, `saturating_sub` and (below 64 bits, and `u64`) `saturating_mul` of each integer
    type: the help's code, put in place of the call, checks and gives Rust's saturating result on edge values
    (MIN, MAX, 0, +-1 and their neighbours, every pair)."""
    import tilelang

    np_dt = np.dtype({"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
                      "u32": "uint32", "i64": "int64", "u64": "uint64"}[dt])
    info = np.iinfo(np_dt)
    edge = sorted(v for v in {info.min, info.min + 1, info.min // 2, -3, -1, 0, 1, 2, 3, 7, info.max // 2,
                              info.max // 3, info.max - 1, info.max} if info.min <= v <= info.max)
    a = np.array([p for p in edge for _ in edge], np_dt)
    b = np.array([q for _ in edge for q in edge], np_dt)
    ops = {"saturating_add": lambda p, q: p + q, "saturating_sub": lambda p, q: p - q,
           "saturating_mul": lambda p, q: p * q}
    for name, f in ops.items():
        if name == "saturating_mul" and dt == "i64":
            continue   # (a sentence, not code: no integer is wider)
        src = _SAT.replace("ELT", dt).replace("EXPR", f"a.{name}(b)")
        help_ = _first_help(src + "fn main() {}\n")
        code = help_.split("`")[1]
        assert f" as {dt}" in code or (dt in ("u8", "u16", "u32", "u64") and name == "saturating_sub") \
            or dt in ("i64", "u64"), (name, help_)
        path = tmp_path / f"{name}.tile"
        path.write_text(_SAT.replace("ELT", dt).replace("EXPR", code.replace("{x}", "a")) + "fn main() {}\n",
                        encoding="utf-8")
        mod = tilelang.load(path)
        z = np.zeros_like(a)
        mod.k(tilelang.partition(z, [64]), a, b).sync()
        want = [min(max(f(int(p), int(q)), info.min), info.max) for p, q in zip(a, b, strict=True)]
        np.testing.assert_array_equal(z, np.array(want, np_dt), err_msg=f"{dt} {name}: {code}")


def test_a_float_or_a_scalar_saturating_call_gets_its_own_types_help() -> None:
    """Floats have no saturating arithmetic (Rust has none either): the help says so and clamps to the finite
    range; a scalar of a kernel (a `u16` parameter) gets its type's help, not `i32`'s."""
    src = _SAT.replace("ELT", "f16").replace("EXPR", "a.saturating_sub(b)") + "fn main() {}\n"
    assert _first_help(src) == ("floats have no saturating arithmetic: `a - b` rounds to an infinity past the "
                                "type's range; `minimum(maximum(a - b, f16::MIN), f16::MAX)` stays finite")
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<u16, [B]>, s: u16) {\n"
           "    z.store(full::<u16>([B], s.saturating_add(7u16)));\n}\nfn main() {}\n")
    assert _first_help(src) == "widen, add and clamp: `minimum(s as i32 + 7u16 as i32, u16::MAX as i32) as u16`"
    host = "fn main() {\n    let v = arange::<i8>(5);\n    print(v.saturating_mul(v));\n}\n"
    assert "`minimum(maximum(v as i32 * v as i32, i8::MIN as i32), i8::MAX as i32) as i8`" in _first_help(host)
