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
- i04 a k-means assignment step whose distances were summed with `.sum()`
  (every axis, NumPy's `.sum(-1)` meant): `dist.argmin()` of the scalar was
  E0103 with "make a tile of it with `full::<f32>([1], dist)`". The help
  says `(d * d).sum()` reduced every axis of its `[B, K, 2]` tile and writes
  `(d * d).sum(2)`; the next error (`argmin` of a 2-D tile needs an axis)
  writes the call as the user did, `dist.argmin(0)` .. `dist.argmin(1)`
  (it was `argmin(t, 0)`).
- i05 a running (Welford) mean whose chunk weight `BK / total` of two i32
  counts meets an f32: the help was `(BK / total) as f32`, an integer
  quotient (8 / 16 is 0: the mean stayed the first chunk's). For `/` and `%`
  of integers it casts the operands, `(BK as f32) / (total as f32)`, and
  names the integer quotient as the other choice.
- E0202's help for a reduction broadcast against its source
  (`g - g.max(2)` of [2, 3, 3]) inserted the 1 at the first axis where the
  shapes fit, [2, 1, 3], which pairs the wrong elements: it inserts it
  where the reduction removed its axis, [2, 3, 1] (for a name bound to a
  reduction it lists every place that fits).
- W0008 `misaligned_reduction` (new): `t - t.max(1)` of a square tile
  checks and pairs element [i, j] with row j's maximum (the keepdims a
  NumPy user writes is missing); the warning's help keeps the axis.
- Helps that led to another error or a wrong value, each applied and run
  below: `acc += row.sum(1)` into a scalar (`.item()`), a one-element tile
  where a number goes or as a range's bound (`n.item()`), `keepdims = true`
  (the reshape written), std::nn's `softmax(t, 0)` (a transpose around it;
  "call it with 1 argument" gave the row softmax), an `#[autotune]`-listed
  generic that no tile names (its first candidate; `::<_>`'s "leave the
  turbofish out" led back to "cannot infer"), `where` of a signed and an
  unsigned value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from userprog import first_error, fixed_program, run_program, wrong_suite

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
    # the help's first way, then E0207's (the next error, checked below)
    "i04_whole_sum_then_argmin": ("`(d * d).sum(2)`", [("(d * d).sum();", "(d * d).sum(2);"),
                                                       ("dist.argmin()", "dist.argmin(1)")]),
    "i05_integer_weight_cast_late": ("`(BK as f32) / (total as f32)`", [("(BK / total)", "((BK as f32) / (total as f32))")]),
}


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


def _i04(t: dict[str, np.ndarray], out: str) -> None:
    x, c = t["x"].astype(np.float64), t["c"].astype(np.float64)
    np.testing.assert_array_equal(t["lab"], ((x[:, None, :] - c[None]) ** 2).sum(2).argmin(1))
    assert len(set(t["lab"].tolist())) > 1


def _i05(t: dict[str, np.ndarray], out: str) -> None:
    np.testing.assert_allclose(t["mean"], t["x"].astype(np.float64).mean(1), rtol=1e-6)


CHECKS = {"i01_unsigned_below_signed_threshold": _i01, "i02_maximum_unsigned_signed": _i02,
          "i03_tile_element_in_a_kernel": _i03, "i04_whole_sum_then_argmin": _i04,
          "i05_integer_weight_cast_late": _i05}


(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("i*.tile", FIXES, CHECKS)


def test_the_old_help_s_integer_quotient_kept_the_first_chunk(tmp_path: Path) -> None:
    f = fixed_program(DIR / "i05_integer_weight_cast_late.tile", [("(BK / total)", "((BK / total) as f32)")], tmp_path)
    t = run_program(f)[0]
    np.testing.assert_array_equal(t["mean"], t["x"][:, :8].mean(1))  # 8 / 16 == 0: only the first chunk counted


def test_the_k_means_step_s_second_error_names_its_axes(tmp_path: Path) -> None:
    f = fixed_program(DIR / "i04_whole_sum_then_argmin.tile", [("(d * d).sum();", "(d * d).sum(2);")], tmp_path)
    d = first_error(f)
    assert d.code == "E0207" and d.help == ("give the axis: `dist.argmin(0)` .. `dist.argmin(1)`; over all its "
                                            "elements (a row-major index), `dist.reshape([B * K]).argmin(0)`",), d.help


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


@pytest.mark.parametrize("op", ["+=", "*="])
def test_a_scalar_accumulator_of_a_one_element_tile_takes_its_item(op: str, tmp_path: Path) -> None:
    # `acc += row.sum(1)` (a [1] tile): the help started `acc` as a [1] tile, and `full::<f32>([1], acc)` was
    # then E0203 "give a value of type `f32` here"; `.item()` of the one element runs
    f = tmp_path / "a.tile"
    src = ("kernel fn seg<const BK: i32>(s: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>) {\n"
           f"    let mut acc = 1.0;\n    for j in 0..4 {{\n        acc {op} x.partition([1, BK]).load([block_id(0), j]).sum(1);\n"
           "    }\n    s.store(full::<f32>([1], acc));\n}\n"
           "fn main() {\n    let x = arange::<f32>(64).reshape([2, 32]) * 0.01;\n    let mut s = zeros::<f32>([2]);\n"
           "    seg::<8>(s.partition([1]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    fix = f"acc {op} x.partition([1, BK]).load([block_id(0), j]).sum(1).item();"
    assert d.code == "E0203" and f"`{fix}`" in d.help[0], d.help
    f.write_text(src.replace(f"acc {op} x.partition([1, BK]).load([block_id(0), j]).sum(1);", fix), encoding="utf-8")
    x = np.arange(64, dtype=np.float64).reshape(2, 32) * 0.01
    parts = x.reshape(2, 4, 8).sum(2)
    want = 1 + parts.sum(1) if op == "+=" else parts.prod(1)
    np.testing.assert_allclose(run_program(f)[0]["s"], want, rtol=1e-5)


def test_a_one_element_tile_where_a_number_goes_is_told_item(tmp_path: Path) -> None:
    # the second step of the mistake above, had the accumulator been started as a tile
    f = tmp_path / "b.tile"
    src = ("kernel fn seg(s: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>) {\n    let mut acc = zeros::<f32>([1]);\n"
           "    for j in 0..4 {\n        acc += x.partition([1, 8]).load([block_id(0), j]).sum(1);\n    }\n"
           "    s.store(full::<f32>([1], acc));\n}\n"
           "fn main() {\n    let mut s = zeros::<f32>([2]);\n    seg(s.partition([1]), &ones::<f32>([2, 32])).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and d.help == ("`acc` is a tile of one element: its value is `acc.item()`",), d.help
    f.write_text(src.replace("full::<f32>([1], acc)", "full::<f32>([1], acc.item())"), encoding="utf-8")
    np.testing.assert_array_equal(run_program(f)[0]["s"], [32.0, 32.0])


@pytest.mark.parametrize("kernel", [True, False])
def test_where_of_a_signed_and_an_unsigned_value_keeps_both(kernel: bool, tmp_path: Path) -> None:
    # `where(y < 0, y, x)` of `i32` and `u32`: the help was `x as i32`, which made x past 2^31 negative
    f = tmp_path / "w.tile"
    body = "where(y < 0, y, x)"
    if kernel:
        src = ("kernel fn k<const B: i32>(o: &mut Tensor<i64, [B]>, a: &Tensor<u32, [?]>, b: &Tensor<i32, [?]>) {\n"
               f"    let x = a.load_like(o);\n    let y = b.load_like(o);\n    o.store({body} as i64);\n}}\n"
               "fn main() {\n    let a = arange::<u32>(8) * 1000000000u32;\n    let b = arange::<i32>(8) - 4;\n"
               "    let mut o = zeros::<i64>([8]);\n    k(o.partition([8]), &a, &b).sync();\n}\n")
    else:
        src = ("fn main() {\n    let x = arange::<u32>(8) * 1000000000u32;\n    let y = arange::<i32>(8) - 4;\n"
               f"    let o = {body} as i64;\n    print(o.sum());\n}}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help == ("cast both to `i64`, which holds every `i32` and `u32` value: "
                                            "`where(y < 0, y as i64, x as i64)`",), d.help
    f.write_text(src.replace(body, "where(y < 0, y as i64, x as i64)"), encoding="utf-8")
    t = run_program(f)[0]
    x = (np.arange(8) * 1000000000).astype(np.uint32).astype(np.int64)  # u32 arithmetic wraps past 2^32
    want = np.where(np.arange(8) < 4, np.arange(8) - 4, x)
    np.testing.assert_array_equal(t["o"], want)
    assert want.max() > 2**31


@pytest.mark.parametrize(("call", "fix"), [("t.max(1, keepdims = true)", "t.max(1).reshape([B, 1])"),
                                           ("sum(t, 0, keepdims = true)", "sum(t, 0).reshape([1, B])")])
def test_keepdims_s_help_writes_the_reshape(call: str, fix: str, tmp_path: Path) -> None:
    # NumPy's `keepdims=True`: the help was "put a size-1 axis back with `.reshape([..])`"
    f = tmp_path / "k.tile"
    src = ("kernel fn k<const B: i32>(y: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) {\n"
           f"    let t = x.load_like(y);\n    y.store(t - {call});\n}}\n"
           "fn main() {\n    let x = arange::<f32>(16).reshape([4, 4]) * 0.5;\n    let mut y = zeros::<f32>([4, 4]);\n"
           "    k(y.partition([4, 4]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0107" and d.help[0].endswith(f"`{fix}`"), d.help
    f.write_text(src.replace(call, fix), encoding="utf-8")
    x = np.arange(16, dtype=np.float64).reshape(4, 4) * 0.5
    want = x - (x.max(1, keepdims=True) if "max" in call else x.sum(0, keepdims=True))
    np.testing.assert_array_equal(run_program(f)[0]["y"], want)


def test_a_range_bound_read_from_a_tensor_is_told_item(tmp_path: Path) -> None:
    # a segment's length read as a one-element tile and used as a loop bound: "cast the bounds with `as i32`"
    # kept it a tile (the next error); its value is `n.item()`
    f = tmp_path / "r.tile"
    src = ("kernel fn seg(s: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>, lens: &Tensor<i32, [?]>) {\n"
           "    let r = block_id(0);\n    let n = lens.partition([1]).load([r]);\n    let mut acc = 0.0;\n"
           "    for j in 0..n {\n        acc += x.partition([1, 1]).load([r, j]).item();\n    }\n"
           "    s.store(full::<f32>([1], acc));\n}\n"
           "fn main() {\n    let x = arange::<f32>(24).reshape([3, 8]);\n    let lens = arange::<i32>(3) * 3;\n"
           "    let mut s = zeros::<f32>([3]);\n    seg(s.partition([1]), &x, &lens).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and d.help == ("`n` is a tile of one element: its value is `n.item()`",), d.help
    f.write_text(src.replace("0..n", "0..n.item()"), encoding="utf-8")
    x = np.arange(24, dtype=np.float64).reshape(3, 8)
    np.testing.assert_array_equal(run_program(f)[0]["s"], [x[r, :3 * r].sum() for r in range(3)])


@pytest.mark.parametrize("axis", [0, 1])
def test_std_softmax_with_an_axis_says_which_axis_it_takes(axis: int, tmp_path: Path) -> None:
    # `softmax(t, 0)` (a column softmax, NumPy/PyTorch's `dim=0`): "call it with 1 argument" gave the row softmax
    f = tmp_path / "s.tile"
    src = ("use std::nn::softmax;\n"
           "kernel fn k<const C: i32, const BN: i32>(y: &mut Tensor<f32, [C, BN]>, x: &Tensor<f32, [C, ?]>) {\n"
           f"    y.store(softmax(x.load_like(y), {axis}));\n}}\n"
           "fn main() {\n    let x = randn::<f32>([5, 37], 3);\n    let mut y = zeros::<f32>([5, 37]);\n"
           "    k(y.partition([5, 16]), &x).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    fix = "softmax(x.load_like(y).transpose()).transpose()" if axis == 0 else "softmax(x.load_like(y))"
    assert d.code == "E0105" and d.help[0].endswith(f"`{fix}`"), d.help
    f.write_text(src.replace(f"softmax(x.load_like(y), {axis})", fix), encoding="utf-8")
    from tilelang import driver

    assert not driver.check(f, deny_warnings=True).diagnostics
    if axis == 0:  # (along axis 1 each tile of 16 columns is its own row chunk: no NumPy twin to compare)
        t = run_program(f)[0]
        x = t["x"].astype(np.float64)
        e = np.exp(x - x.max(0, keepdims=True))
        np.testing.assert_allclose(t["y"], e / e.sum(0, keepdims=True), rtol=1e-5, atol=1e-7)
