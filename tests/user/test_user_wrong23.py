"""Round 23 of the user's mistakes (huser23, 2026-12-07), each with the help applied by the letter and the
fixed program checked against NumPy (round 23's checks of the program it was meant to be).

- f01 i04's digit test as NumPy's and C's `d >= 0 & d <= 9`, which Rust and Tile read as `d >= (0 & d) <= 9`
  (E0011): the help split the chain at `0 & d`, "`d >= 0 & d && 0 & d <= 9`"; it now puts each comparison in
  parentheses, `(d >= 0) & (d <= 9)`.
- f02 i01's Stein loop, `((u | v) & 1u32) == 0u32 & !zero_u & !zero_v`, read as `.. == (0u32 & !zero_u ..)`
  (E0201): "cast with `as`: `!zero_u as u32`"; a `bool` and an integer meeting at an `&`, `|` or `^` that took
  an operand of a comparison beside it now get the comparison in parentheses.
- f03 i04's `c as i32 - b'0' as i32` and f04 i12's `s + 'A' as i32` (E0007): "strings use double quotes"; Tile
  has no character or byte literals, and the help writes the code, `48u8`, `65`.
- f05 i09's DP step with Rust's `std::cmp::max(a, b)` (E0109): "a module with a similar name exists: `std::llm`";
  it now names the built-in `maximum(a, b)`.
- f06 i01's Stein step with Rust's `u.abs_diff(v)` (E0103): the tiles' methods listed; now `maximum(u, v) -
  minimum(u, v)`.
- f07 i10's `let (sw, cw) = w0.sin_cos();` (E0103): "a method with a similar name: `sin`"; now the pair.
- f08 i11's output as NumPy's `zeros_like(rgb)` (E0102): "make a tile of the shape you need: `zeros::<f32>([..])`"
  on the host too; now `zeros::<f32>(rgb.shape())`.

Also below: W0010 for i07's edge mask `rows < img.shape()[0]` (the own tile's shape: one block's sum kept,
silently), Rust's `i64::from(n)`, and the other Rust methods of this round's table (`fract`, `isqrt`,
`is_power_of_two`) run as their helps spell them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from test_user_programs23 import CHECKS
from userprog import DIR, wrong_suite

# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "f01_range_check_and_binds_tighter": (
        "`&` binds tighter than `>=` and `<=`: put each comparison in parentheses: `(d >= 0) & (d <= 9)`",
        [("d >= 0 & d <= 9", "(d >= 0) & (d <= 9)")]),
    "f02_mask_and_after_a_comparison": (
        "`&` binds tighter than `==` (as in Rust; C's order is the other way): put the comparison in parentheses: "
        "`(((u | v) & 1u32) == 0u32) & !zero_u & !zero_v`",
        [("((u | v) & 1u32) == 0u32 & !zero_u & !zero_v", "(((u | v) & 1u32) == 0u32) & !zero_u & !zero_v")]),
    "f03_byte_literal_of_a_digit": (
        "Tile has no character or byte literals: write the character's code as a number, `48u8` for `b'0'` (ASCII)",
        [("b'0'", "48u8")]),
    "f04_char_literal_of_the_alphabet": (
        "write the character's code as a number, `65` for `'A'` (ASCII)", [("'A'", "65")]),
    "f05_std_cmp_max_of_tiles": (
        "Tile has no `std::cmp`: `std::cmp::max(a, b)` is the built-in `maximum(a, b)`",
        [("std::cmp::max(", "maximum(")]),
    "f06_abs_diff_in_binary_gcd": (
        "`maximum(u, v) - minimum(u, v)` (it does not wrap for unsigned values)",
        [("u.abs_diff(v)", "maximum(u, v) - minimum(u, v)")]),
    "f07_sin_cos_of_the_cutoff": (
        "`(sin(w0), cos(w0))`: `let (s, c) = (sin(w0), cos(w0));`",
        [("w0.sin_cos()", "(sin(w0), cos(w0))")]),
    "f08_zeros_like_of_the_image": (
        "make one of its shape: `zeros::<f32>(rgb.shape())`", [("zeros_like(rgb)", "zeros::<f32>(rgb.shape())")]),
}

FIXED = {"f01_range_check_and_binds_tighter": CHECKS["i04_luhn_check_digits"],
         "f02_mask_and_after_a_comparison": CHECKS["i01_gcd_lcm_bezout"],
         "f03_byte_literal_of_a_digit": CHECKS["i04_luhn_check_digits"],
         "f04_char_literal_of_the_alphabet": CHECKS["i12_base64_round_trip"],
         "f05_std_cmp_max_of_tiles": CHECKS["i09_knapsack_dp_shift"],
         "f06_abs_diff_in_binary_gcd": CHECKS["i01_gcd_lcm_bezout"],
         "f07_sin_cos_of_the_cutoff": CHECKS["i10_biquad_iir_channels"],
         "f08_zeros_like_of_the_image": CHECKS["i11_hsv_hue_rotate"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("f*.tile", FIXES, FIXED)


def _errors(src: str) -> list:
    from tilelang import driver

    return [d for d in driver.check(src, name="m.tile").diagnostics if d.severity.value == "error"]


def _one_help(src: str) -> tuple[str, str]:
    errs = _errors(src)
    assert len(errs) == 1, [(d.code, d.message) for d in errs]
    return errs[0].code, errs[0].help[0]


def test_precedence_helps_put_the_comparison_first() -> None:
    """The other shapes of f01/f02: `|` and `^`, the mask on the left of the comparison (`m & v == 0`), an
    untyped literal (`v == 0 & m`), and a chain of masks; an `&` the user put in parentheses keeps its old help
    (the parentheses say it was meant), and E0011 of a parenthesised middle quotes it whole."""
    head = ("kernel fn k<const B: i32>(z: &mut Tensor<bool, [B]>, x: &Tensor<u32, [?]>, f: &Tensor<bool, [?]>) {\n"
            "    let v = x.load_like(z);\n    let m = f.load_like(z);\n    let r = {};\n    z.store(r);\n}\n"
            "fn main() {}\n")
    cases = {
        "v == 0u32 & m": "`&` binds tighter than `==` (as in Rust; C's order is the other way): put the comparison "
                         "in parentheses: `(v == 0u32) & m`",
        "m & v == 0u32": "put the comparison in parentheses: `m & (v == 0u32)`",
        "m | v > 3u32": "`|` binds tighter than `>`",
        "v != 1u32 ^ m": "`^` binds tighter than `!=` (as in Rust; C's order is the other way): put the "
                         "comparison in parentheses: `(v != 1u32) ^ m`",
        "v == 0 & m": "put the comparison in parentheses: `(v == 0) & m`",
        "v & 1u32 == 0u32 & m & m": "put the comparison in parentheses: `(v & 1u32 == 0u32) & m & m`",
        "v == (0u32 & m)": "cast with `as`: `m as u32`",
    }
    for expr, hint in cases.items():
        code, got = _one_help(head.replace("{}", expr, 1))
        assert code == "E0201" and hint in got, (expr, got)
        if "(0u32 & m)" not in expr:   # the help, applied, checks
            fixed = got.split(": `")[-1].rstrip("`")
            assert not _errors(head.replace("{}", fixed, 1)), (expr, fixed)
    code, got = _one_help("fn main() {\n    let d = 3;\n    let ok = d < (0 & d) < 9;\n}\n")
    assert code == "E0011" and got.startswith("split the comparison into two: `d < (0 & d) && (0 & d) < 9`"), got
    code, got = _one_help("fn main() {\n    let d = 3;\n    print(d >= 0 | d <= 9);\n}\n")
    assert code == "E0011" and got.endswith("put each comparison in parentheses: `(d >= 0) | (d <= 9)`"), got
    assert not _errors("fn main() {\n    let d = 3;\n    print((d >= 0) | (d <= 9));\n}\n")


def test_character_literals_and_rust_conversions_get_numbers_and_casts() -> None:
    """f03/f04's other spellings: an escape (`b'\\n'`, 10u8), a character past ASCII, a Python string in single
    quotes (still "strings use double quotes"); Rust's `i64::from(n)` and `u32::try_from(x)` were "bring a
    file's items into scope with `use`", `use std::cmp::min;` "a similar name: `std::llm`"."""
    code, got = _one_help("fn main() {\n    let c = b'\\n' as i32;\n}\n")
    assert code == "E0007" and got.endswith("`10u8` for `b'\\n'` (ASCII)"), got
    code, got = _one_help("fn main() {\n    let c = 'é' as i32;\n}\n")
    assert code == "E0007" and got.endswith("`233` for `'é'`"), got
    code, got = _one_help("fn main() {\n    let s = 'hello';\n}\n")
    assert code == "E0007" and got == "strings use double quotes: `\"...\"`", got
    for call, ty in (("i64::from(n)", "i64"), ("u32::try_from(n)", "u32")):
        code, got = _one_help(f"fn main() {{\n    let n = 7;\n    print({call});\n}}\n")
        assert code == "E0109" and got.startswith(f"Tile has no `From`/`TryFrom`: `x as {ty}` converts"), got
    code, got = _one_help("use std::cmp::min;\nfn main() {\n    print(min(2, 3));\n}\n")
    assert code == "E0109" and "`std::cmp::min(a, b)` is the built-in `minimum(a, b)`" in got, got


def test_rust_float_and_integer_methods_run_as_the_helps_spell_them(tmp_path: Path) -> None:
    """Rust's `fract`, `isqrt` (of a value below 2^52), `is_power_of_two` and `abs_diff` were "a similar name:
    `sqrt`" or the list of methods: each help's code, on the host and in a kernel, gives Rust's value."""
    import io

    from tilelang import run
    from userprog import program_tensors

    code, got = _one_help("fn main() {\n    let x = -2.75;\n    print(x.fract());\n}\n")
    assert got.startswith("`x - where(x < 0.0, ceil(x), floor(x))`"), got
    code, got = _one_help("fn main() {\n    let n = 7u64;\n    print(n.isqrt());\n}\n")
    assert got.startswith("Tile has no integer square root: `sqrt(n as f64) as u64`"), got
    src = """kernel fn k<const B: i32>(f: &mut Tensor<f32, [B]>, r: &mut Tensor<u64, [B]>, p: &mut Tensor<bool, [B]>,
                             d: &mut Tensor<u32, [B]>, x: &Tensor<f32, [?]>, n: &Tensor<u64, [?]>) {
    let t = x.load_like(f);
    let v = n.load_like(r);
    f.store(t - where(t < 0.0, ceil(t), floor(t)));
    r.store(sqrt(v as f64) as u64);
    p.store((v != 0) & ((v & (v - 1)) == 0));
    let a = v as u32;
    let b = (v * 3u64) as u32;
    d.store(maximum(a, b) - minimum(a, b));
}

fn main() {
    let x = arange::<f32>(8) * 0.75 - 2.6;
    let i = arange::<i32>(8);
    let n = where(i == 7, 4503599627370495u64, where(i % 2 == 0, 1u64 << arange::<u64>(8), arange::<u64>(8) * 7u64));
    let mut f = zeros::<f32>([8]);
    let mut r = zeros::<u64>([8]);
    let mut p = zeros::<bool>([8]);
    let mut d = zeros::<u32>([8]);
    k(f.partition([8]), r.partition([8]), p.partition([8]), d.partition([8]), &x, &n).sync();
    let host_f = x - where(x < 0.0, ceil(x), floor(x));
    let m = n.clone();
    let host_p = (m != 0) & ((m & (m - 1)) == 0);
}
"""
    path = tmp_path / "m.tile"
    path.write_text(src, encoding="utf-8")
    assert not _errors(src)
    ex = run.execute(str(path), "cpu", out=io.StringIO())
    t = program_tensors(ex)
    x, n = t["x"].astype(np.float64), t["n"]
    np.testing.assert_allclose(t["f"], np.fmod(x, 1.0), atol=1e-6)          # Rust's fract: the sign of x
    np.testing.assert_array_equal(t["host_f"], t["f"])
    np.testing.assert_array_equal(t["r"], [math.isqrt(int(v)) for v in n])
    np.testing.assert_array_equal(t["p"], [v != 0 and v & (v - 1) == 0 for v in map(int, n)])
    np.testing.assert_array_equal(t["host_p"], t["p"])
    a, b = n.astype(np.uint32).astype(np.int64), (n * np.uint64(3)).astype(np.uint32).astype(np.int64)
    np.testing.assert_array_equal(t["d"], np.abs(a - b))   # no wrap: the larger minus the smaller
    assert t["p"].any() and not t["p"].all() and n.max() == 2 ** 52 - 1


def test_the_shape_of_a_mut_parameter_in_an_edge_mask_is_warned(tmp_path: Path) -> None:
    """i07 as first written: its edge mask read `img.shape()` of the `&mut` image, the own tile's shape, so
    `rows < img.shape()[0]` kept one block's sum and maximum, silently. W0010 now says so at both reads (an error
    under `-D warnings`), and its help, applied (the extent as scalar parameters), gives i07's answer."""
    from tilelang import driver
    from userprog import run_program

    src = (DIR / "i07_value_noise_fbm.tile").read_text(encoding="utf-8")
    good = "let inside = (rows < height) & (cols < width);   // (img.shape() is the tile's, [H, W])"
    assert good in src
    wrong = src.replace(good, "let inside = (rows < img.shape()[0]) & (cols < img.shape()[1]);")
    wrong = wrong.replace("height: i32, width: i32, ", "").replace("&stats, 100, 150, ", "&stats, ")
    prog = tmp_path / "i07.tile"
    prog.write_text(wrong, encoding="utf-8")
    warns = [d for d in driver.check(prog).diagnostics if d.code == "W0010"]
    assert len(warns) == 2 and warns[0].message == (
        "`img.shape()` is the shape of this block's own tile, `[H, W]`, not of the tensor partitioned")
    assert warns[0].help[0].startswith("for the tile's size write `[H, W]` itself; for the tensor's extent (an "
                                       "edge mask: `rows < n`), pass it in as a scalar parameter")
    assert [d.code for d in driver.check(prog, deny_warnings=True).diagnostics if d.severity.value == "error"] \
        == ["W0010", "W0010"]
    t, _ = run_program(prog)
    assert t["stats"][0] < t["img"].sum() / 10    # the silent wrong answer: one block's share
    t, out = run_program("i07_value_noise_fbm")
    CHECKS["i07_value_noise_fbm"](t, out)


def test_reading_a_float_s_bits_gets_to_bits_and_from_bits(tmp_path: Path) -> None:
    """A hash or sort of floats reads their bits: `t.bitcast::<u32>()` was "a similar name: `broadcast`", CUDA's
    `__float_as_uint(t)`, C++'s `reinterpret_cast`, `bitcast(t)` "define it", Rust's `std::mem::transmute` the
    help of swapping by moves, `f32::to_bits(t)` "bring a file's items into scope" and `f32::from_bits(u)`
    "`from_bits(..)`" (which then wants its type, E0215). Each now gives `t.to_bits()` / `from_bits::<f32>(u)`;
    applied, the kernel reads NumPy's `view` of the bits both ways. `mma(a, b)` (no accumulator) gets `dot`."""
    from userprog import run_program

    src = """kernel fn k<const B: i32>(z: &mut Tensor<u32, [B]>, back: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    let u = BITS;
    z.store(u);
    back.store(FROM);
}

fn main() {
    let x = arange::<f32>(8) * -1.75 + 2.5;
    let mut z = zeros::<u32>([8]);
    let mut back = zeros::<f32>([8]);
    k(z.partition([8]), back.partition([8]), &x).sync();
}
"""
    cases = {"t.bitcast::<u32>()": "`t.to_bits()` keeps a float's bits", "__float_as_uint(t)": "`t.to_bits()`",
             "reinterpret_cast::<u32>(t)": "`t.to_bits()`", "bitcast(t)": "`t.to_bits()`",
             "std::mem::transmute::<f32, u32>(t)": "Tile has no `std::mem`: `x.to_bits()` keeps a float's bits",
             "f32::to_bits(t)": "`f32::to_bits(x)` is the method `x.to_bits()`"}
    for wrong, hint in cases.items():
        code, got = _one_help(src.replace("BITS", wrong).replace("FROM", "from_bits::<f32>(u)"))
        assert hint in got, (wrong, got)
    for wrong, hint in {"f32::from_bits(u)": "`f32::from_bits(u)` is `from_bits::<f32>(u)`",
                        "__uint_as_float(u)": "`from_bits::<f32>(u)` reads a `u32`'s bits as an `f32`"}.items():
        code, got = _one_help(src.replace("BITS", "t.to_bits()").replace("FROM", wrong))
        assert hint in got, (wrong, got)
    prog = tmp_path / "bits.tile"
    prog.write_text(src.replace("BITS", "t.to_bits()").replace("FROM", "from_bits::<f32>(u)"), encoding="utf-8")
    t, _ = run_program(prog)
    np.testing.assert_array_equal(t["z"], t["x"].view(np.uint32))
    np.testing.assert_array_equal(t["back"], t["x"])
    code, got = _one_help("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) {\n"
                          "    let t = x.load_like(z);\n    z.store(mma(t, t));\n}\nfn main() {}\n")
    assert code == "E0105" and got.startswith("`dot(t, t)` is the product of two tiles; `mma(t, t, acc)` adds"), got
    assert not _errors("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B, B]>, x: &Tensor<f32, [?, ?]>) {\n"
                       "    let t = x.load_like(z);\n    z.store(dot(t, t));\n}\nfn main() {}\n")


def test_the_repl_shows_a_function_named_at_the_prompt_in_words() -> None:
    """After `:load` of i03, typing a kernel's or a function's name at the prompt (as one does in Python's REPL)
    showed the Python repr of its syntax tree, `FnRef(decl=FnDecl(name=Ident(..` for some thousand characters
    (`:vars` of a `let f = floor_div;` too); it now says what the name is and how to call it."""
    from tilelang.repl import ReplSession

    s = ReplSession(device="cpu")
    assert s.feed(f":load {DIR / 'i03_civil_calendar.tile'}").ok
    out = s.feed("civil")
    assert out.ok and out.stdout == ("fn(&mut Tensor<i32, [B, 4]>, &Tensor<i32, [?, 1]>) -> () = the kernel `civil` (a "
                                     "call builds a launch: `civil(z.partition([..]), ..).sync()`; `:help civil` shows it)\n"), out.stdout
    out = s.feed("floor_div")
    assert out.ok and out.stdout.endswith("= the function `floor_div` (call it: `floor_div(..)`; `:help floor_div` shows it)\n"), out.stdout
    out = s.feed("let f = floor_div;")  # no function values (hfix6): an error, so `:vars` never holds one
    assert not out.ok and "E0203" in out.stderr and "call `floor_div` where `f` is called" in out.stderr, out.stderr
    assert "FnRef" not in s.feed(":vars").stdout


def test_a_number_for_a_tensor_parameter_and_numpy_s_like_constructors() -> None:
    """`k(z.partition([4]), 3.0)` for `x: &Tensor<f32, [?]>` was told "pass a value of type `f32`, or cast: `3.0 as
    f32`" (still a number); it now says the parameter is a tensor, and how to make one (of its rank) or take a
    number instead.
    NumPy's `zeros_like(x)` was "make a tile of the shape you need: `zeros::<f32>([..])`" of any argument, on the
    host too; it now writes the argument's shape and element type (`img.shape()` of a host tensor, a tile's own
    shape in a kernel), and the help applied runs."""
    kernel = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
              "    z.store(x.load_like(z));\n}\n")
    code, got = _one_help(kernel + "fn main() {\n    let mut z = zeros::<f32>([8]);\n"
                          "    k(z.partition([4]), 3.0).sync();\n}\n")
    assert code == "E0203" and got == ("`x` is a tensor: pass one, borrowed (`&full::<f32>([1], 3.0)` holds that "
                                       "value), or declare the parameter as a number, `x: f32`"), got
    code, got = _one_help(kernel.replace("x: &Tensor<f32, [?]>", "x: &Tensor<f32, [1, ?]>").replace(
        "z.store(x.load_like(z));", "z.store(x.partition([1, B]).load([0, 0]).reshape([B]));")
        + "fn main() {\n    let mut z = zeros::<f32>([8]);\n    k(z.partition([4]), 2).sync();\n}\n")
    assert "(`&full::<f32>([1, 1], 2)` holds that value)" in got, got   # of the parameter's rank
    assert not _errors(kernel + "fn main() {\n    let mut z = zeros::<f32>([8]);\n"
                       "    k(z.partition([4]), &full::<f32>([1], 3.0)).sync();\n}\n")
    host = "fn main() {\n    let img = ones::<i32>([3, 4]);\n    let z = CALL;\n    print(z.shape());\n}\n"
    code, got = _one_help(host.replace("CALL", "zeros_like(img)"))
    assert code == "E0102" and got == "make one of its shape: `zeros::<i32>(img.shape())`", got
    assert not _errors(host.replace("CALL", "zeros::<i32>(img.shape())"))
    code, got = _one_help(host.replace("CALL", "empty_like(img * 2)"))
    assert got == "Tile has no uninitialised tensors: make one of its shape: `zeros::<i32>((img * 2).shape())`", got
    code, got = _one_help(kernel.replace("z.store(x.load_like(z));", "z.store(full_like(x.load_like(z), 2.0));")
                          + "fn main() {}\n")
    assert got == "make one of its shape: `full::<f32>([B], value)`", got


def test_cuda_s_bit_and_lane_intrinsics_get_tile_s_spellings(tmp_path: Path) -> None:
    """CUDA's `__popc`, `__brev`, `__ffs`, `__umulhi`, `__saturatef`, `__shfl_xor_sync` (a port of a hash or a warp
    reduction) were "define it (`fn __popc(..) { .. }`)"; they get the bit-count / bit-reversal helps, the high
    half of a product, a clamp, and "no lanes": `__umulhi(a, b)` and `__saturatef(x)` applied compute CUDA's."""
    from userprog import run_program

    head = ("kernel fn k<const B: i32>(z: &mut Tensor<u32, [B]>, f: &mut Tensor<f32, [B]>, x: &Tensor<u32, [?]>, "
            "y: &Tensor<f32, [?]>) {\n    let a = x.load_like(z);\n    let v = y.load_like(f);\n"
            "    z.store(UINT);\n    f.store(FLOAT);\n}\n")
    main = ("fn main() {\n    let x = arange::<u32>(8) * 613566757u32 + 7u32;\n    let y = arange::<f32>(8) * 0.4 - 1.2;\n"
            "    let mut z = zeros::<u32>([8]);\n    let mut f = zeros::<f32>([8]);\n"
            "    k(z.partition([8]), f.partition([8]), &x, &y).sync();\n}\n")
    cases = {"__popc(a)": "Tile has no bit-count built-ins", "__brev(a)": "Tile has no bit-reversal built-in",
             "__ffs(a)": "CUDA's `__ffs` counts from 1", "__shfl_xor_sync(a)": "no threads or lanes",
             "__umulhi(a, a * 3u32)": "`(((a as u64) * ((a * 3u32) as u64)) >> 32u64) as u32` is the high half"}
    for call, hint in cases.items():
        code, got = _one_help(head.replace("UINT", call).replace("FLOAT", "v") + main)
        assert code == "E0102" and hint in got, (call, got)
    code, got = _one_help(head.replace("UINT", "a").replace("FLOAT", "__saturatef(v)") + main)
    assert got == "`minimum(maximum(v, 0.0), 1.0)` clamps into [0, 1]", got
    prog = tmp_path / "cuda.tile"
    prog.write_text(head.replace("UINT", "(((a as u64) * ((a * 3u32) as u64)) >> 32u64) as u32")
                    .replace("FLOAT", "minimum(maximum(v, 0.0), 1.0)") + main, encoding="utf-8")
    t, _ = run_program(prog)
    a = t["x"].astype(np.uint64)
    np.testing.assert_array_equal(t["z"], ((a * ((a * 3) & 0xFFFFFFFF)) >> 32).astype(np.uint32))
    np.testing.assert_array_equal(t["f"], np.clip(t["y"], 0, 1))


def test_emit_tells_a_generic_kernel_s_instances_apart_by_their_element_types(tmp_path: Path) -> None:
    """i14's one generic kernel launched on u64 and on u32: `tilec emit --stage ptx` headed both modules
    "// ---- kernel `isqrt` [B = 128]" and `--stage ir` printed `kernel isqrt<B = 128>` twice (the const generics
    only), so nothing said which was which; the element types of the type parameters now come first."""
    from userprog import tilec

    prog = str(DIR / "i14_isqrt_newton_generic.tile")
    r = tilec("emit", prog, "--stage", "ir")
    assert r.returncode == 0 and [line.split("(")[0] for line in r.stdout.splitlines() if line.startswith("kernel ")] \
        == ["kernel isqrt<T = u64, B = 128>", "kernel isqrt<T = u32, B = 128>"], r.stdout[:300]
    r = tilec("emit", prog, "--stage", "llvm")
    assert r.returncode == 0 and [line for line in r.stdout.splitlines() if line.startswith("; ---- kernel")] == [
        "; ---- kernel `isqrt` [T = u64, B = 128]", "; ---- kernel `isqrt` [T = u32, B = 128]"]


def test_the_own_tile_shape_bound_through_a_let_is_warned_and_its_size_in_arithmetic_is_not(tmp_path: Path) -> None:
    """W0010 reads a `let h = img.shape()[0];` that a comparison reads later (the edge mask written in two
    lines), and says nothing where the own tile's size is arithmetic (`h * 2`: what `tests/run/kernel_shape.tile`
    means)."""
    from tilelang import driver

    prog = tmp_path / "w10.tile"
    prog.write_text("""kernel fn k<const H: i32>(img: &mut Tensor<f32, [H, 4]>, x: &Tensor<f32, [?, 4]>) {
    let h = img.shape()[0];
    let rows = arange::<i32>(H).reshape([H, 1]) + block_id(0) * H;
    img.store(where(rows < h, x.load_like(img), 0.0));
}
kernel fn ok<const H: i32>(img: &mut Tensor<f32, [H, 4]>) {
    let h = img.shape()[0];
    img.store(full::<f32>([H, 4], (h * 2) as f32));
}
fn main() {
    let x = ones::<f32>([4, 4]);
    let mut img = zeros::<f32>([4, 4]);
    k::<2>(img.partition([2, 4]), &x).sync();
    ok::<2>(img.partition([2, 4])).sync();
}
""", encoding="utf-8")
    text = prog.read_text(encoding="utf-8")
    warns = [d for d in driver.check(prog).diagnostics if d.code == "W0010"]
    assert len(warns) == 1, warns
    span = warns[0].primary_span
    assert text[span.start:span.end] == "img.shape()" and text[:span.start].count("\n") == 1  # k's `let h`, line 2
