"""Round 14 of the user's mistakes (huser14, 2026-12-06), each with the help
applied by the letter and the fixed program checked against NumPy.

- i01 a `u32` hash compared with a signed `i32` threshold (`h < t`, E0201):
  the help cast the threshold, `t as u32`, which makes -1 4294967295 (every
  hash kept), where `h as i32` would make a hash past 2^31 negative. A
  comparison, `/` or `%` of a signed and an unsigned integer casts both to a
  type that holds every value of both (`i64` here; the result back where it
  is stored); where none does (`u64` and `i64`) a comparison tests the
  signed side's sign first. `+ - *` keep the one cast (they wrap to the same
  bits either way).
- i02 `maximum(count, floor)` of `u32` and `i32` stored into `u32`: the
  same, as the whole call cast back.
- i03 `m[0][0]` of a tile in a kernel (a Cholesky's pivot, NumPy's
  `A[0, 0]`): the help said "index host tensors and shapes; in a kernel,
  load another tile or use `where`". It writes the element's mask and sums
  (`where((rows == 0) & (cols == 0), m, 0).sum(1).sum(0)`, the `[j]` read
  from the source after `m[i]`), or row i's for `m[i]`; `max` and `false`
  for a `bool` tile.
- E0202's help for a reduction broadcast against its source
  (`g - g.max(2)` of [2, 3, 3]) inserted the 1 at the first axis where the
  shapes fit, [2, 1, 3], which pairs the wrong elements: it inserts it
  where the reduction removed its axis, [2, 3, 1] (for a name bound to a
  reduction it lists every place that fits).
- W0008 `misaligned_reduction` (new): `t - t.max(1)` of a square tile
  checks and pairs element [i, j] with row j's maximum (the keepdims a
  NumPy user writes is missing); the warning's help keeps the axis.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from userprog import assert_help_leads_to_a_working_program, assert_the_editor_shows_the_first_error, first_error, \
    fixed_program, run_program

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "i01_unsigned_below_signed_threshold": ("`(h as i64) < (limits.load_like(o) as i64)`",
                                            [("h < limits.load_like(o)", "(h as i64) < (limits.load_like(o) as i64)")]),
    "i02_maximum_unsigned_signed": ("`maximum(counts.load_like(o) as i64, floors.load_like(o) as i64) as u32`",
                                    [("maximum(counts.load_like(o), floors.load_like(o))",
                                      "maximum(counts.load_like(o) as i64, floors.load_like(o) as i64) as u32")]),
    "i03_tile_element_in_a_kernel": (
        "`where((arange::<i32>(N).reshape([N, 1]) == 0) & (arange::<i32>(N).reshape([1, N]) == 0), m, 0).sum(1).sum(0)`",
        [("m[0][0]", "where((arange::<i32>(N).reshape([N, 1]) == 0) & (arange::<i32>(N).reshape([1, N]) == 0), m, 0)"
                     ".sum(1).sum(0)")]),
}


def test_every_mistake_has_a_fix() -> None:
    assert sorted(p.stem for p in DIR.glob("i*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits = FIXES[name]
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", hint, edits, tmp_path)
    tensors, printed = run_program(fixed_program(DIR / f"{name}.tile", edits, tmp_path))
    CHECKS[name](tensors, printed)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


def _i01(t: dict[str, np.ndarray], out: str) -> None:
    h, lim = t["hashes"].astype(np.int64), t["limits"].astype(np.int64)
    assert (lim == -1).any() and (h > 2**31).any()
    np.testing.assert_array_equal(t["o"], h < lim)
    assert not t["o"][lim == -1].any()          # `t as u32` kept them all


def _i02(t: dict[str, np.ndarray], out: str) -> None:
    c, f = t["counts"].astype(np.int64), t["floors"].astype(np.int64)
    assert (f < 0).any() and (c > 2**31).any()
    np.testing.assert_array_equal(t["o"], np.maximum(c, f))


def _i03(t: dict[str, np.ndarray], out: str) -> None:
    a = t["a"]
    assert (a[:, 0, 0] > 0).all()
    np.testing.assert_allclose(t["l"], a[:, :, 0] / np.sqrt(a[:, 0, 0])[:, None], rtol=1e-14)


CHECKS = {"i01_unsigned_below_signed_threshold": _i01, "i02_maximum_unsigned_signed": _i02,
          "i03_tile_element_in_a_kernel": _i03}


SIGNS = "kernel fn k<const B: i32>(o: &mut Tensor<{out}, [B]>, a: &Tensor<{ta}, [?]>, b: &Tensor<{tb}, [?]>) {{\n" \
        "    let x = a.load_like(o);\n    let y = b.load_like(o);\n    o.store({expr});\n}}\n" \
        "fn main() {{\n    let a = {a};\n    let b = {b};\n    let mut o = zeros::<{out}>([8]);\n" \
        "    k(o.partition([8]), &a, &b).sync();\n}}\n"


@pytest.mark.parametrize(("ta", "tb", "expr", "out", "fix"), [
    ("u64", "i64", "x > y", "bool", "`y < 0 || x > (y as u64)`"),
    ("i64", "u64", "x <= y", "bool", "`x < 0 || (x as u64) <= y`"),
    ("u64", "i64", "x == y", "bool", "`y >= 0 && x == (y as u64)`"),
    ("i64", "u64", "x != y", "bool", "`x < 0 || (x as u64) != y`"),
    ("u32", "i8", "x / y", "u32", "`((x as i64) / (y as i64)) as u32`"),
    ("i16", "u16", "x % y", "i16", "`((x as i32) % (y as i32)) as i16`"),
    ("u32", "i32", "x >= y", "bool", "`(x as i64) >= (y as i64)`"),
])
def test_a_signed_and_an_unsigned_operand_are_compared_by_their_values(ta: str, tb: str, expr: str, out: str,
                                                                       fix: str, tmp_path: Path) -> None:
    vals = {"u64": "18446744073709551615u64 - arange::<u64>(8) * 3u64",
            "i64": "(arange::<i64>(8) - 4) * 4611686018427387904i64 / 2i64",
            "u32": "arange::<u32>(8) * 600000000u32", "i8": "(arange::<i8>(8) - 4) * 30i8 + 1i8",
            "i32": "(arange::<i32>(8) - 4) * 500000000", "i16": "(arange::<i16>(8) - 4) * 8000i16",
            "u16": "arange::<u16>(8) * 9000u16 + 7u16"}
    f = tmp_path / "s.tile"
    f.write_text(SIGNS.format(ta=ta, tb=tb, expr=expr, out=out, a=vals[ta], b=vals[tb]), encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help[0].endswith(fix), d.help
    f.write_text(f.read_text(encoding="utf-8").replace(f"o.store({expr})", f"o.store({fix.strip('`')})"),
                 encoding="utf-8")
    t = run_program(f)[0]
    x, y = (np.array(t[n].astype(object)) for n in "ab")
    assert any(v < 0 for v in y.tolist() + x.tolist()) and any(v > 2**31 - 1 or v > 32767 and ta in "i16u16"
                                                                 for v in x.tolist() + y.tolist())
    op = expr.split()[1]
    want = [{"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b,
             "/": abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if b else 0,
             "%": a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)) if b else a}[op]
            for a, b in zip(x.tolist(), y.tolist(), strict=True)]
    np.testing.assert_array_equal(t["o"], np.array(want).astype(t["o"].dtype))


def test_plus_of_a_signed_and_an_unsigned_keeps_the_one_cast(tmp_path: Path) -> None:
    # wrapping `+` gives the same bits whichever side is cast: no widening proposed
    f = tmp_path / "p.tile"
    f.write_text(SIGNS.format(ta="u32", tb="i32", expr="x + y", out="u32", a="arange::<u32>(8)",
                              b="arange::<i32>(8) - 4"), encoding="utf-8")
    assert first_error(f).help == ("cast with `as`: `y as u32`",)


@pytest.mark.parametrize(("red", "fix", "keep"), [
    ("g.max(2)", "g.max(2).reshape([2, 3, 1])", 2),   # a 1 at axis 1 fits [2, 3, 3] too, and paired the wrong rows
    ("g.sum(1)", "g.sum(1).reshape([2, 1, 3])", 1),
    ("g.min(0)", "g.min(0).reshape([1, 3, 3])", 0),
])
def test_a_reduction_s_reshape_help_puts_the_axis_back_where_it_was(red: str, fix: str, keep: int,
                                                                    tmp_path: Path) -> None:
    f = tmp_path / "r.tile"
    src = f"fn main() {{\n    let g = randn::<f32>([2, 3, 3], 2);\n    let d = g - {red};\n    print(d.shape());\n}}\n"
    f.write_text(src, encoding="utf-8")
    if keep == 0:  # axis 0 broadcasts as it is: no error, no warning
        from tilelang import driver

        assert not driver.check(f).diagnostics
        return
    d = first_error(f)
    assert d.code == "E0202" and d.help == (f"insert the reduced axis: `{fix}`",), d.help
    f.write_text(src.replace(red, fix), encoding="utf-8")
    t = run_program(f)[0]
    g = t["g"]
    op = {"max": np.max, "sum": np.sum}[red[2:5]]
    np.testing.assert_allclose(t["d"], g - op(g, axis=keep, keepdims=True), rtol=1e-6)


def test_a_name_bound_to_a_reduction_gets_every_place_that_fits(tmp_path: Path) -> None:
    f = tmp_path / "n.tile"
    f.write_text("fn main() {\n    let g = randn::<f32>([2, 3, 3], 2);\n    let m = g.max(2);\n    print(g - m);\n}\n",
                 encoding="utf-8")
    assert first_error(f).help == ("insert a 1 where the reduction removed its axis: `m.reshape([2, 1, 3])` (axis 1), "
                                   "`m.reshape([2, 3, 1])` (axis 2)",)


def test_a_square_row_softmax_without_keepdims_is_warned_and_the_help_fixes_it(tmp_path: Path) -> None:
    from tilelang import driver

    f = tmp_path / "s.tile"
    src = ("kernel fn sm<const B: i32>(y: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) {\n"
           "    let t = x.load_like(y);\n    let e = exp(t - t.max(1));\n    y.store(e / e.sum(1));\n}\n"
           "fn main() {\n    let x = randn::<f32>([8, 8], 5) * 3.0;\n    let mut y = zeros::<f32>([8, 8]);\n"
           "    sm(y.partition([8, 8]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    warned = [d for d in driver.check(f).diagnostics if d.code == "W0008"]
    assert len(warned) == 2
    t = run_program(f)[0]
    x = t["x"].astype(np.float64)
    want = np.exp(x - x.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    assert not np.allclose(t["y"], want, atol=1e-3)          # what the warned program computed
    for d in warned:
        old = f.read_text(encoding="utf-8")[d.primary_span.start:d.primary_span.end]
        src = src.replace(old, d.help[0].split("`")[1], 1)
    f.write_text(src, encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    np.testing.assert_allclose(run_program(f)[0]["y"], want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("ty", "index", "value"), [("f32", "[1]", "x"), ("bool", "[2][1]", "x > 5.0"),
                                                    ("i32", "[i][3]", "x as i32")])
def test_a_tile_element_s_help_runs(ty: str, index: str, value: str, tmp_path: Path) -> None:
    """`m[i]` and `m[i][j]` of a 2-D tile: the help's mask and reductions give NumPy's `m[i]`, `m[i, j]`."""
    f = tmp_path / "e.tile"
    shape = "[4]" if index == "[1]" else "[1]"
    body = f"m{index}" if index != "[1]" else "m[1]"
    src = (f"kernel fn k(o: &mut Tensor<{ty}, {shape}>, a: &Tensor<f32, [?, ?]>) {{\n"
           f"    let x = a.partition([3, 4]).load([0, 0]);\n    let m = {value};\n    let i = 2;\n"
           f"    o.store({'full::<' + ty + '>([1], ' + body + ')' if shape == '[1]' else body});\n}}\n"
           f"fn main() {{\n    let a = arange::<f32>(12).reshape([3, 4]);\n    let mut o = zeros::<{ty}>({shape});\n"
           "    k(o.partition(" + shape + "), &a).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0204", (d.code, d.message)
    code = d.help[0].split("`")[1]
    assert ("max" in code and "false" in code) == (ty == "bool"), code
    f.write_text(src.replace(body, code), encoding="utf-8")
    got = run_program(f)[0]["o"]
    m = {"f32": np.arange(12, dtype=np.float32).reshape(3, 4), "bool": np.arange(12).reshape(3, 4) > 5,
         "i32": np.arange(12).reshape(3, 4)}[ty]
    want = {"[1]": m[1], "[2][1]": m[2, 1], "[i][3]": m[2, 3]}[index]
    np.testing.assert_array_equal(got.reshape(-1), np.reshape(want, -1))


@pytest.mark.parametrize("call", ["row_sums(", "row_sums::<_>("])
def test_a_tuned_generic_that_no_tile_names_gets_a_value_not_a_loop(call: str, tmp_path: Path) -> None:
    # `BK` (a K chunk) is listed in `#[autotune]` but no tile names it: E0215 said "give it explicitly:
    # `row_sums::<BK>(..)` with a value for `BK`", and `::<_>` (E0022) "leave the turbofish out, for the call to
    # infer `BK`", which is E0215 again. Both give the first candidate and say where the tuner picks a generic.
    f = tmp_path / "t.tile"
    src = ("use std::math::cdiv;\n#[autotune(BK = [16, 64], num_warps = [4, 8])]\n"
           "kernel fn row_sums<const BK: i32>(s: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>) {\n"
           "    let mut acc = 0.0;\n    for j in 0..cdiv(x.shape()[1], BK) {\n"
           "        acc += x.partition([1, BK]).load([block_id(0), j]).sum(1).item();\n    }\n"
           "    s.store(full::<f32>([1], acc));\n}\n"
           "fn main() {\n    let x = arange::<f32>(400).reshape([4, 100]);\n    let mut s = zeros::<f32>([4]);\n"
           f"    {call}s.partition([1]), &x).sync();\n}}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == ("E0215" if call == "row_sums(" else "E0022"), d.code
    assert "`row_sums::<16>(..)`" in d.help[0] and "leave the turbofish out" not in d.help[0], d.help
    assert "written `_`" in d.help[0]
    f.write_text(src.replace(call, "row_sums::<16>("), encoding="utf-8")
    np.testing.assert_array_equal(run_program(f)[0]["s"], np.arange(400.0).reshape(4, 100).sum(1))
