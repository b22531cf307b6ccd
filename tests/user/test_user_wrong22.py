"""Round 22 of the user's mistakes (huser22, 2026-12-07), each with the help applied by the letter and the
fixed program checked against NumPy (round 22's checks of the program it was meant to be).

- a01 e10's round-trip error squared as Rust's `d.pow(2)` of an i32 tensor: E0201 "cast with `as`: `2 as i32`",
  then E0204 "cast first: `pow(d as f32, 2 as i32 as f32)`", a float result stored where an integer was;
  `pow` of an integer base now says it is a float power and writes `d * d`.
- a02 e04's murmur3 finalizer with Rust's `x.wrapping_mul(..)` (E0103): the help listed the tiles' methods;
  Rust's integer methods (`wrapping_*`, `rotate_*`, `saturating_*`, `count_ones`, ..) now get their spellings.
- a03 MurmurHash3's rotations as `k.rotate_left(15)` (E0103): the two shifts and the `|`.
- a04 e02's buffers rotated with `std::mem::swap(&mut prev, &mut cur)` (E0109): "a module with a similar name
  exists: `std::llm`"; the help now swaps by moves.
- a05 e06's 1 / sqrt(2) as Rust's `std::f64::consts::FRAC_1_SQRT_2` (E0109): the help listed std::math's
  constants, none of them this one; Rust's other consts are now written from them (or as literals).
- a06 e05's position taken from the carried tuple by Rust's rest pattern `let (x, ..) = s;` (E0002): "write
  `)`, `(`, identifier, `_` or `mut` here"; it now names each element.
- a07 e13's host function `adam_step(w, mw, vw, ..)` given the tensors themselves (E0203): "partition it:
  `w.partition([..])`", a kernel's argument; a host function's `&mut` is lent with `&mut w`.
- a08 e12's launch in CUDA's `monte_carlo<<<16, 256>>>(..)` (E0003): "write a value here: a literal, a name, a
  call, or `(..)`"; it now says the partitions set the grid and the call builds the launch.
- a09 e06's generic functions with Rust's trait bound `<T: Float, const B: i32>` (E0002): the help was "a const
  generic is written with `const`"; a bound now gets "a type parameter takes no bounds" (and a `where` clause,
  "write one of `{` or `<` here", its own, tested below).

Also below: Rust's `mod lib;`, `use crate::lib::f;` (`self::`, `super::`) with a module file of one's own
(e08's layout), `u32::wrapping_mul(a, b)`, `x.iter().sum()`, and the Python API's imported host functions; and
round 22's leftovers (hfix3): a failed `use` reported once, `use m::self;` outside braces, `hypot`'s operands,
`to_degrees` / `to_radians`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from test_user_programs22 import CHECKS
from userprog import DIR, wrong_suite

Tensors = dict[str, np.ndarray]


def _murmur3(keys: np.ndarray, seed: int) -> np.ndarray:
    def one(key: int) -> int:
        m = 0xFFFFFFFF

        def rotl(v: int, r: int) -> int:
            return ((v << r) | (v >> (32 - r))) & m

        k = rotl((key * 0xCC9E2D51) & m, 15) * 0x1B873593 & m
        h = (rotl(seed ^ k, 13) * 5 + 0xE6546B64) & m
        h ^= 4
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & m
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & m
        return h ^ (h >> 16)

    return np.array([one(int(k)) for k in keys], np.uint32)


def _a03(t: Tensors, out: str) -> None:
    assert hex(_murmur3(np.array([0]), 0)[0]) == "0x2362f9de"    # MurmurHash3_x86_32 of 4 zero bytes, seed 0
    np.testing.assert_array_equal(t["keys"], (np.arange(1000, dtype=np.int64) * 2654435761 % 2 ** 32).astype(np.uint32))
    np.testing.assert_array_equal(t["h"], _murmur3(t["keys"], 42))
    assert out == "[1000] true\n"


# file: (a phrase of the first error's help, the fix: (old, new) replacements)
FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "a01_integer_pow_of_a_difference": (
        "Tile's `pow` is a float power: the integer power `d` to the 2 is `d * d`",
        [("d.pow(2)", "d * d")]),
    "a02_wrapping_mul_in_a_finalizer": (
        "`x * 0x85EBCA6Bu32`: Tile's integer arithmetic wraps already",
        [("x.wrapping_mul(0x85EBCA6Bu32)", "x * 0x85EBCA6Bu32"),
         ("x.wrapping_mul(0xC2B2AE35u32)", "x * 0xC2B2AE35u32")]),
    "a03_rotate_left_in_murmur3": (
        "`(k << 15) | (k >> (32 - 15))` rotates a `u32` left by 0 < 15 < 32",
        [("k.rotate_left(15)", "(k << 15) | (k >> (32 - 15))"),
         ("let mut x = (full::<u32>([B], seed) ^ k).rotate_left(13);",
          "let mut x = full::<u32>([B], seed) ^ k;\n    x = (x << 13) | (x >> (32 - 13));")]),
    "a04_mem_swap_of_buffers": (
        "Tile has no `std::mem`: tensors move, so two swap by moves, `let t = a; a = b; b = t;`",
        [("std::mem::swap(&mut prev, &mut cur);", "let tmp = prev; prev = cur; cur = tmp;"),
         ("std::mem::swap(&mut cur, &mut next);", "let tmp = cur; cur = next; next = tmp;")]),
    "a05_rust_frac_1_sqrt_2": (
        "`std::math` has no `FRAC_1_SQRT_2`: write `SQRT_2 / 2.0` of `std::math`'s constants",
        [("use std::f64::consts::FRAC_1_SQRT_2;", "use std::math::SQRT_2;\n\nconst FRAC_1_SQRT_2 = SQRT_2 / 2.0;")]),
    "a06_rest_pattern_of_a_tuple": (
        "name each element of the tuple, `_` for each one you skip",
        [("let (x, ..) = s;", "let (x, _, _, _, _) = s;")]),
    "a07_host_function_given_the_tensor": (
        "lend it mutably: `&mut w`",
        [("adam_step(w, mw, vw, &gw", "adam_step(&mut w, &mut mw, &mut vw, &gw")]),
    "a08_cuda_launch_brackets": (
        "Tile has no `<<<grid, block>>>`: the partitions of a kernel's `&mut` arguments set the grid",
        [("monte_carlo<<<16, 256>>>(", "monte_carlo("), ("&total, 2026u32);", "&total, 2026u32).sync();")]),
    "a09_trait_bound_on_a_type_parameter": (
        "a type parameter takes no bounds: write `<T>`",
        [("<T: Float, const B: i32>", "<T, const B: i32>")]),
}

FIXED = {"a01_integer_pow_of_a_difference": CHECKS["e10_ycbcr_u8_width3"],
         "a02_wrapping_mul_in_a_finalizer": CHECKS["e04_crc32_messages"],
         "a03_rotate_left_in_murmur3": _a03,
         "a04_mem_swap_of_buffers": CHECKS["e02_wave_three_buffers_moved"],
         "a05_rust_frac_1_sqrt_2": CHECKS["e06_black_scholes_generic"],
         "a06_rest_pattern_of_a_tuple": CHECKS["e05_kalman_tracks_tuple_scan"],
         "a07_host_function_given_the_tensor": CHECKS["e13_adam_param_groups"],
         "a08_cuda_launch_brackets": CHECKS["e12_xorshift_box_muller"],
         "a09_trait_bound_on_a_type_parameter": CHECKS["e06_black_scholes_generic"]}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("a*.tile", FIXES, FIXED)


def _errors(src: str | Path, name: str = "m.tile") -> list:
    from tilelang import driver

    result = driver.check(src) if isinstance(src, Path) else driver.check(src, name=name)
    return [d for d in result.diagnostics if d.severity.value == "error"]


def _e08_layout(tmp_path: Path, main: str) -> Path:
    """e08's modules copied beside a main file of `main`'s text (its module paths as e08's)."""
    shutil.copytree(DIR / "e08_modules", tmp_path / "e08_modules")
    prog = tmp_path / "main.tile"
    prog.write_text(main, encoding="utf-8")
    return prog


_MAIN = """{head}
fn main() {{
    let x = randn::<f32>([45, 16], 91) * 3.0 + 7.0;
    let mut y = zeros::<f32>([45, 16]);
    {call}(&mut y, &x);
    print(abs(y.sum()) < 0.01);
}}
"""


def test_rust_module_declarations_and_paths_get_files_relative_to_the_importer(tmp_path: Path) -> None:
    """Rust's `mod e08_modules;` was "statements belong inside the body of a `fn`" (an inline `mod m { .. }` too),
    and `use crate::e08_modules::stats::zscore;` (`self::`, `super::`) "there is no `crate/e08_modules/stats.tile`
    next to this file", help "bring a file's items into scope with `use \\"path/to/file.tile\\";`". Each help now
    gives the path without the prefix, which (applied) runs e08's standardisation; a path in an expression too."""
    from userprog import run_program

    use = "use e08_modules::stats::zscore;"
    prog = _e08_layout(tmp_path, _MAIN.format(head="mod e08_modules;\n" + use, call="zscore"))
    errs = _errors(prog)
    assert [d.code for d in errs] == ["E0021"] and errs[0].help == (
        "remove `mod e08_modules;`: Tile has no `mod` declarations, a file `e08_modules.tile` beside this one is a "
        "module already: `use e08_modules::*;` imports its items",)
    errs = _errors("mod helpers {\n    fn f() {}\n}\nfn main() {}\n")
    assert [d.code for d in errs] == ["E0021"] and errs[0].help[0].startswith("Tile has no inline modules: put "
                                                                              "these items in a file `helpers.tile`")
    for prefix in ("crate", "self", "super"):
        prog.write_text(_MAIN.format(head=f"use {prefix}::e08_modules::stats::zscore;", call="zscore"),
                        encoding="utf-8")
        errs = _errors(prog)
        assert errs[0].code == "E0109" and errs[0].help == (
            f"Tile's module paths name `.tile` files relative to the importing file, with no `{prefix}::` prefix: "
            f"`{prefix}::e08_modules::stats::zscore` is `e08_modules::stats::zscore`: `use e08_modules::stats::zscore;` "
            "(`e08_modules/stats.tile` beside this file)",), (prefix, errs[0].help)
    prog.write_text(_MAIN.format(head="", call="crate::e08_modules::stats::zscore"), encoding="utf-8")
    errs = _errors(prog)
    assert errs[0].code == "E0109" and "`crate::e08_modules::stats::zscore` is `e08_modules::stats::zscore`" \
        in errs[0].help[0]
    from userprog import tilec

    r = tilec("doc", "mod", "--color", "never")   # was "did you mean `sigmoid`?"
    assert r.returncode == 0 and r.stdout.startswith("# Items and syntax") and "`use helpers::f;`" in r.stdout
    for head, call in ((use, "zscore"), ("", "e08_modules::stats::zscore")):   # the helps, applied
        prog.write_text(_MAIN.format(head=head, call=call), encoding="utf-8")
        assert not _errors(prog)
        tensors, out = run_program(prog)
        assert out == "true\n" and abs(tensors["y"].std(1) - 1).max() < 1e-3


def test_rust_integer_methods_type_functions_and_iterators() -> None:
    """a02/a03's table: each help, applied to a u32 tile, checks clean and gives Rust's value (run on the
    interpreter); `u32::wrapping_mul(a, b)` was "bring a file's items into scope with `use`", `x.iter().sum()`
    "a similar name: `item`"."""
    import io

    from tilelang import run

    cases = {  # method call: (the help's spelling, what it gives for t = [0x80000001, 3, 0xFFFFFFFF, 0x12345678])
        "t.wrapping_add(t)": ("t + t", [2, 6, 0xFFFFFFFE, 0x2468ACF0]),
        "t.wrapping_sub(5u32)": ("t - 5u32", [0x7FFFFFFC, 0xFFFFFFFE, 0xFFFFFFFA, 0x12345673]),
        "t.wrapping_neg()": ("0 - t", [0x7FFFFFFF, 0xFFFFFFFD, 1, 0xEDCBA988]),
        "t.rotate_right(4)": ("(t >> 4) | (t << (32 - 4))", [0x18000000, 0x30000000, 0xFFFFFFFF, 0x81234567]),
        "t.saturating_sub(4u32)": ("where(t > 4u32, t - 4u32, 0)", [0x7FFFFFFD, 0, 0xFFFFFFFB, 0x12345674]),
    }
    for call, (spelt, want) in cases.items():
        src = ("kernel fn k<const B: i32>(z: &mut Tensor<u32, [B]>, x: &Tensor<u32, [?]>) {\n"
               "    let t = x.load_like(z);\n    z.store(CALL);\n}\nfn main() {\n    let i = arange::<i32>(4);\n"
               "    let x = where(i == 0, 2147483649u32, where(i == 1, 3u32, where(i == 2, 4294967295u32, "
               "305419896u32)));\n    let mut z = zeros::<u32>([4]);\n    k(z.partition([4]), &x).sync();\n"
               "    print(z[0], z[1], z[2], z[3]);\n}\n")
        errs = _errors(src.replace("CALL", call))
        assert [d.code for d in errs] == ["E0103"] and errs[0].help[0].startswith(f"`{spelt}`"), (call, errs[0].help)
        assert not _errors(src.replace("CALL", spelt)), spelt
        out = io.StringIO()
        run.execute(src.replace("CALL", spelt), "cpu", out=out)
        assert out.getvalue() == " ".join(map(str, want)) + "\n", (call, out.getvalue())
    errs = _errors("fn main() {\n    let a = 3u32;\n    print(u32::wrapping_mul(a, 5u32));\n}\n")
    assert [d.code for d in errs] == ["E0109"] and errs[0].help == (
        "Tile has no `u32::wrapping_mul`; for `u32::wrapping_mul(a, b)`: `a * b`: Tile's integer arithmetic wraps "
        "already (two's complement)",)
    errs = _errors("fn main() {\n    let x = arange::<i32>(10);\n    print(x.iter().sum());\n}\n")
    assert [d.code for d in errs] == ["E0103"] and errs[0].help[0].startswith("tensors and tiles have no iterators")


def test_a_where_clause_gets_its_own_help() -> None:
    """a09's neighbour: `fn f<T>(x: T) -> T where T: Copy {` was "write one of `{` or `<` here"."""
    src = "fn f<T>(x: T) -> T where T: Copy {\n    x\n}\nfn main() {\n    print(f(1.0));\n}\n"
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0002"] and errs[0].help == (
        "Tile has no `where` clauses (type parameters take no bounds): remove `where ..` up to the `{`",)
    assert not _errors(src.replace(" where T: Copy", ""))


def test_an_integer_pow_of_a_run_time_exponent_goes_through_f64() -> None:
    """a01's rule for an exponent that is no small literal: a loop of `*`, or f64 and back, which checks."""
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<i64, [B]>, x: &Tensor<i64, [?]>, n: i64) {\n"
           "    let t = x.load_like(z);\n    z.store(EXPR);\n}\nfn main() {\n    let x = arange::<i64>(4) + 2;\n"
           "    let mut z = zeros::<i64>([4]);\n    k(z.partition([4]), &x, 5).sync();\n    print(z);\n}\n")
    errs = _errors(src.replace("EXPR", "t.pow(n)"))
    assert [d.code for d in errs] == ["E0204"]
    assert errs[0].help == ("Tile's `pow` is a float power: an integer power is repeated `*` (a loop of "
                            "`p = p * t`), or `pow(t as f64, n as f64) as i64`, exact while the power stays below "
                            "2^53",)
    import io

    from tilelang import run

    out = io.StringIO()
    run.execute(src.replace("EXPR", "pow(t as f64, n as f64) as i64"), "cpu", out=out)
    assert out.getvalue() == "Tensor<i64, [4]> [  32,  243, 1024, 3125]\n"


def test_rust_s_other_float_constants_are_written_from_std_math() -> None:
    """a05's table: each of Rust's `std::f64::consts` that std::math lacks gets its spelling, and the spelling
    (as a constant of one's own) is f64's value of Rust's constant."""
    import io
    import math

    from tilelang import run
    from tilelang.intrinsics.constants import RUST_DERIVED_CONSTANTS

    for name, (expr, value) in RUST_DERIVED_CONSTANTS.items():
        errs = _errors(f"fn main() {{\n    print(std::f64::consts::{name});\n}}\n")
        assert errs[0].code == "E0109" and f"`std::math` has no `{name}`" in errs[0].help[0], name
        out = io.StringIO()
        run.execute(f"use std::math::*;\nconst C = {expr or repr(value)};\nfn main() {{\n    let c: f64 = C;\n"
                    "    print(c);\n}\n", "cpu", out=out)
        assert out.getvalue() == f"{value!r}\n", (name, out.getvalue())
    assert math.isclose(RUST_DERIVED_CONSTANTS["FRAC_2_SQRT_PI"][1], 1.1283791670955126)


def test_the_python_api_calls_imported_host_functions() -> None:
    """`tilelang.load("e08_host_modules.tile")` had the kernel it imports (`row_moments`) but not the host
    functions (`zscore`, `moments`): E0815 "it has: `main`, `row_moments`". Imported host functions are
    attributes now, as imported kernels were; a module's own functions keep their names."""
    import tilelang

    m = tilelang.load(DIR / "e08_host_modules.tile")
    assert {"zscore", "moments", "main"} <= set(m.functions) and set(m.kernels) == {"row_moments"}
    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    y = np.zeros_like(x)
    m.zscore(y, x)
    np.testing.assert_allclose(y, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5),
                               rtol=1e-5)


def test_the_repl_loads_a_file_whose_modules_are_beside_it(tmp_path: Path) -> None:
    """`:load tests/user/programs/e08_host_modules.tile` from the checkout's root was E0109 "no
    `e08_modules/stats.tile` next to this file" (looked for in the working directory: the session is one
    program of no file). A `:load`ed file's `use`s now find the files beside it, while the session lasts, and
    a module of the working directory still wins."""
    import os

    from tilelang.repl import ReplSession

    prog = DIR / "e08_host_modules.tile"
    s = ReplSession(device="cpu")
    out = s.feed(f":load {prog}")
    assert out.ok and out.stdout == f"loaded 3 items from {prog}\n", out.stderr
    assert s.feed("let x = randn::<f32>([8, 16], 1);\nlet mut y = zeros::<f32>([8, 16]);\nzscore(&mut y, &x);").ok
    assert s.feed("print(abs(y.sum()) < 0.01, ROWS_PER_BLOCK);").stdout == "true 8\n"
    assert s.feed("fn twice(v: f32) -> f32 {\n    v * 2.0\n}").ok   # a later entry re-checks the session
    (tmp_path / "e08_modules").mkdir()
    (tmp_path / "e08_modules" / "stats.tile").write_text("const ROWS_PER_BLOCK: i32 = 3;\n", encoding="utf-8")
    here = os.getcwd()
    try:
        os.chdir(tmp_path)
        t = ReplSession(device="cpu")
        assert t.feed('use "e08_modules/stats.tile";\n').ok
        assert t.feed("print(ROWS_PER_BLOCK);").stdout == "3\n"
    finally:
        os.chdir(here)


def test_a_where_of_literals_beside_an_f64_tile_gets_f64_branches() -> None:
    """`t + where(t > 0.5, 0.1, -2)` of an f64 `t` is E0201 (`where` of untyped literals makes f32 values, as the
    reference says); the help was "cast with `as`: `where(..) as f64`", which compiles and adds f32's 0.1
    (0.10000000149). It now writes the branches in f64; other operands keep the cast."""
    import io

    from tilelang import run

    src = ("kernel fn h<const B: i32>(out: &mut Tensor<f64, [B]>, x: &Tensor<f64, [?]>) {\n"
           "    let t = x.load_like(out);\n    out.store(t + EXPR);\n}\nfn main() {\n    let x = ones::<f64>([2]);\n"
           "    let mut p = zeros::<f64>([2]);\n    h(p.partition([2]), &x).sync();\n    print(p[0] - 1.0);\n}\n")
    errs = _errors(src.replace("EXPR", "where(t > 0.5, 0.1, -2)"))
    assert [d.code for d in errs] == ["E0201"] and errs[0].help == (
        "write the branches in `f64`: `where(t > 0.5, 0.1f64, -2.0f64)` (`where` of untyped literals makes `f32` "
        "values: a cast of it keeps f32's)",)
    out = io.StringIO()
    run.execute(src.replace("EXPR", "where(t > 0.5, 0.1f64, -2.0f64)"), "cpu", out=out)
    assert out.getvalue() == f"{1.1 - 1.0!r}\n"
    errs = _errors(src.replace("EXPR", "where(t > 0.5, t as f32, 0.0)"))
    assert errs[0].help[0].startswith("cast with `as`: `where(t > 0.5, t as f32, 0.0) as f64`")


def test_a_hex_constant_past_a_signed_range_gets_its_bits() -> None:
    """A hash's `t * 0x85EBCA6B` of an `i32` tile (E0222) was told "use a value in -2147483648..=2147483647, or a
    wider type"; a hex (octal, binary) literal that fits the unsigned type of the width is a bit pattern: the
    help's cast keeps its bits, and runs; a decimal literal keeps the range help."""
    import io

    from tilelang import run

    src = ("kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>) {\n"
           "    z.store(x.load_like(z) * EXPR);\n}\nfn main() {\n    let x = ones::<i32>([4]);\n"
           "    let mut z = zeros::<i32>([4]);\n    k(z.partition([4]), &x).sync();\n    print(z[0]);\n}\n")
    errs = _errors(src.replace("EXPR", "0x85EBCA6B"))
    assert [d.code for d in errs] == ["E0222"] and errs[0].help == (
        "`0x85EBCA6B` is a bit pattern: `0x85EBCA6Bu32 as i32` keeps its bits (-2048144789), or compute in `u32`",)
    out = io.StringIO()
    run.execute(src.replace("EXPR", "0x85EBCA6Bu32 as i32"), "cpu", out=out)
    assert out.getvalue() == "-2048144789\n"
    errs = _errors(src.replace("EXPR", "2246822507"))
    assert errs[0].help == ("use a value in -2147483648..=2147483647, or a wider type (`i64`)",)


def test_a_group_import_may_name_the_module_itself(tmp_path: Path) -> None:
    """Rust's `use e08_modules::kernels::{self, EPS};` was E0110 "no `self` in `kernels`": `self` in a group
    imports the module, as `use e08_modules::kernels;` does, so `kernels::row_moments::<8, 16>(..)` launches
    (a std module too: `use std::math::{self, PI};` then `math::cdiv(7, 2)`)."""
    from userprog import run_program

    prog = _e08_layout(tmp_path, """use e08_modules::stats;
use e08_modules::kernels::{self, EPS};
use std::math::{self, PI};

fn main() {
    let x = randn::<f32>([8, 16], 1);
    let mut y = zeros::<f32>([8, 16]);
    stats::zscore(&mut y, &x);
    let mut m = zeros::<f32>([8, 1]);
    let mut v = zeros::<f32>([8, 1]);
    kernels::row_moments::<8, 16>(m.partition([8, 1]), v.partition([8, 1]), &y).sync();
    print(abs(v - 1.0).max() < 0.01, EPS > 0.0, math::cdiv(7, 2), PI > 3.0);
}
""")
    assert not _errors(prog)
    tensors, out = run_program(prog)
    assert out == "true true 4 true\n" and abs(tensors["m"]).max() < 1e-5


def test_shapes_compared_and_destructured_get_the_indexed_spelling() -> None:
    """A host function's shape checks written as in Rust/NumPy: `x.shape() == y.shape()` (E0204, "`==` takes
    numbers, tiles and (on the host) tensors"), `let (r, c) = x.shape();` (E0203, "bind 2 names to a tuple of 2
    values", which it does) and `let [r, c] = x.shape();` (E0012, "write a name, `_`, or a tuple `(a, b)`",
    which led to the second). Each now gets the axis-by-axis spelling, which runs."""
    import io

    from tilelang import run

    src = ("fn main() {\n    let x = zeros::<f32>([4, 3]);\n    let y = ones::<f32>([4, 3]);\n    CHECK\n    BIND\n"
           "    print(r, c);\n}\n")
    fine_check = 'assert(x.shape()[0] == y.shape()[0] && x.shape()[1] == y.shape()[1], "shapes differ");'
    fine_bind = "let r = x.shape()[0]; let c = x.shape()[1];"
    errs = _errors(src.replace("CHECK", 'assert(x.shape() == y.shape(), "shapes differ");').replace("BIND", fine_bind))
    assert [d.code for d in errs] == ["E0204"] and errs[0].help == (
        "compare the sizes axis by axis: `x.shape()[0] == y.shape()[0] && x.shape()[1] == y.shape()[1]`",)
    errs = _errors(src.replace("CHECK", fine_check).replace("BIND", "let (r, c) = x.shape();"))
    assert [d.code for d in errs] == ["E0203"] and errs[0].help == (
        "a shape is indexed, one axis at a time: `let r = x.shape()[0]; let c = x.shape()[1];`",)
    errs = _errors(src.replace("CHECK", fine_check).replace("BIND", "let [r, c] = x.shape();"))
    assert [d.code for d in errs] == ["E0012"] and errs[0].help == (
        "Tile's patterns have no `[..]`: index it, one name a `let`: `let r = x.shape()[0]; let c = x.shape()[1];`",)
    out = io.StringIO()
    run.execute(src.replace("CHECK", fine_check).replace("BIND", fine_bind), "cpu", out=out)
    assert out.getvalue() == "4 3\n"


def test_a_failed_use_is_reported_once(tmp_path: Path) -> None:
    """Round 22's leftover: after `use crate::lib::tiles::twice;` (E0109, whose help gives the path) each call of
    `twice(..)` was a second error, E0102 "a function with a similar name exists: `tiles`"; a name whose `use`
    failed (a module's too, `tiles::twice(..)`; an item a module lacks; after a failed glob or file `use`, any
    name not found) is not reported again where used."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "tiles.tile").write_text("fn twice(x: f32) -> f32 {\n    x * 2.0\n}\n", encoding="utf-8")
    prog = tmp_path / "main.tile"
    for use, call in (("crate::lib::tiles::twice", "twice(2.0)"), ("crate::lib::tiles", "tiles::twice(2.0)"),
                      ("crate::lib::tiles::{twice}", "twice(2.0) + twice(1.0)"),
                      ("lib::tiles::twise", "twise(2.0)"), ("self::lib::tiles::{self}", "tiles::twice(2.0)"),
                      ("crate::lib::tiles::*", "twice(2.0) * HALF"), ('"lib/tile.tile"', "twice(2.0)")):
        prog.write_text(f"use {use};\n\nfn main() {{\n    let v = {call};\n    print(v);\n}}\n", encoding="utf-8")
        errs = _errors(prog)
        assert [d.code for d in errs] in (["E0109"], ["E0110"]), (use, [(d.code, d.message) for d in errs])
        if use.startswith("crate"):
            assert "`crate::lib::tiles" in errs[0].help[0] and "is `lib::tiles" in errs[0].help[0], errs[0].help
    prog.write_text("use crate::lib::tiles::N;\n\nkernel fn k(z: &mut Tensor<f32, [N]>) {\n"
                    "    z.store(zeros::<f32>([N]));\n}\nfn main() {\n    let mut z = zeros::<f32>([N]);\n    k(z.partition([N])).sync();\n}\n",
                    encoding="utf-8")   # (a constant in a type: "cannot find value `N`" was the second error)
    assert [d.code for d in _errors(prog)] == ["E0109"]
    prog.write_text("use lib::tiles::twice;\n\nfn main() {\n    print(twise(2.0));\n}\n", encoding="utf-8")
    assert [d.code for d in _errors(prog)] == ["E0102"]   # (a name no `use` named is still reported)


def test_the_help_for_a_crate_use_keeps_its_glob_and_group(tmp_path: Path) -> None:
    """huser22's leftover: `use crate::lib::tiles::*;` was told "`crate::lib::tiles` is `lib::tiles`" (the `::*`
    dropped; a group's `::{twice, HALF}` too). The help gives the whole `use` to write, and applied, it runs."""
    import io
    import re

    from tilelang import run

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "tiles.tile").write_text("const HALF: f32 = 0.5;\n\nfn twice(x: f32) -> f32 {\n    x * 2.0\n}\n",
                                                  encoding="utf-8")
    prog = tmp_path / "main.tile"
    for prefix in ("crate", "self", "super"):
        for items, call, want in (("::*", "twice(3.0) * HALF", "lib::tiles::*"),
                                  ("::{twice, HALF}", "twice(3.0) * HALF", "lib::tiles::{twice, HALF}"),
                                  ("::twice", "twice(3.0) * 0.5", "lib::tiles::twice"),
                                  ("", "tiles::twice(3.0) * 0.5", "lib::tiles")):
            use = f"use {prefix}::lib::tiles{items};"
            src = f"{use}\n\nfn main() {{\n    print({call});\n}}\n"
            prog.write_text(src, encoding="utf-8")
            errs = _errors(prog)
            assert [d.code for d in errs] == ["E0109"], (use, [(d.code, d.message) for d in errs])
            fix = re.search(r": `(use [^`]+;)`", errs[0].help[0])
            assert fix is not None and fix.group(1) == f"use {want};", (use, errs[0].help)
            prog.write_text(src.replace(use, fix.group(1)), encoding="utf-8")
            out = io.StringIO()
            run.execute(str(prog), "cpu", out=out)
            assert out.getvalue() == "3.0\n", (use, out.getvalue())


def test_a_const_of_a_math_call_in_f16_or_bf16_is_told_that_type_s_value() -> None:
    """E0209's help for `const R: f16 = sqrt(2.0);` said "write its value, `1.4142135` (what `sqrt(2.0)` is in
    `f16`)": f32's digits. It now gives the value in the constant's type, computed as it runs there (in f32,
    rounded once an operation: `1.414`; bf16's `sqrt(2.0) * PI` `4.44`), the value the expression written in
    place has, and the literal written in its place gives it too."""
    import io
    import re

    from tilelang import run

    for ty, expr, want in (("f16", "sqrt(2.0)", "1.414"), ("bf16", "sqrt(2.0) * PI", "4.44"),
                           ("f32", "sqrt(2.0)", "1.4142135")):
        src = (f"use std::math::PI;\nconst R: {ty} = {expr};\n\nkernel fn k(z: &mut Tensor<{ty}, [4]>) {{\n"
               f"    z.store(full::<{ty}>([4], R));\n}}\n\nfn main() {{\n    let mut z = zeros::<{ty}>([4]);\n"
               f"    k(z.partition([4])).sync();\n    print(z[0] == {expr} as {ty});\n}}\n")
        errs = _errors(src)
        assert [d.code for d in errs] == ["E0209"], errs
        got = re.search(r"write its value, `([^`]+)` \(what `[^`]+` is in `(\w+)`\)", errs[0].help[0])
        assert got is not None and got.groups() == (want, ty), errs[0].help
        out = io.StringIO()
        run.execute(src.replace(f"= {expr};", f"= {want};"), "cpu", out=out)
        assert out.getvalue() == "true\n", (ty, out.getvalue())


def test_self_outside_braces_says_where_it_belongs() -> None:
    """`use std::math::self;` was E0110 "no `self` in `std::math`", help the module's items (and a second
    error at `math::cdiv`); `self` imports the module inside a group only: the help's `use std::math;` runs."""
    import io

    from tilelang import run

    src = "use std::math::self;\n\nfn main() {\n    print(math::cdiv(7, 2));\n}\n"
    errs = _errors(src)
    assert [d.code for d in errs] == ["E0110"] and errs[0].help == (
        "`use std::math;` imports the module `math` (as `use std::math::{self};` does, beside the items of a group)",)
    for fixed in ("use std::math;", "use std::math::{self};"):
        out = io.StringIO()
        run.execute(src.replace("use std::math::self;", fixed), "cpu", out=out)
        assert out.getvalue() == "4\n"


def test_two_operand_math_helps_write_the_call_s_operands_and_angles_convert() -> None:
    """`a.hypot(b)` and `hypot(a, b)` were told `sqrt(x * x + y * y)` (fmod, remainder, copysign alike); they
    are written with the call's operands now. Rust's `to_degrees` / `to_radians` listed the scalars' methods;
    they get the multiply by `180.0 / std::math::PI` (or its inverse), which gives Rust's values here, on f32
    and f64 scalars and tiles."""
    import io
    import math

    from tilelang import run

    def helps(expr: str) -> tuple[str, ...]:
        errs = _errors(f"fn main() {{\n    let a = 3.0;\n    let b = 4.0;\n    print({expr});\n}}\n")
        assert len(errs) == 1, expr
        return errs[0].help

    assert helps("a.hypot(b)") == ("`sqrt(a * a + b * b)`",)
    assert helps("hypot(a, b + 1.0)") == ("`sqrt(a * a + (b + 1.0) * (b + 1.0))`",)
    assert helps("fmod(a * 2.0, b)")[0].startswith("`(a * 2.0) % b` is C's `fmod`")
    assert helps("a.copysign(b)")[0].startswith("`where(b < 0.0, -abs(a), abs(a))`")
    assert helps("a.to_degrees()") == ("`a * (180.0 / std::math::PI)` converts radians to degrees",)
    assert helps("(a + 1.0).to_radians()") == ("`(a + 1.0) * (std::math::PI / 180.0)` converts degrees to radians",)
    out = io.StringIO()
    run.execute("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, w: &mut Tensor<f64, [B]>,\n"
                "                          x: &Tensor<f32, [?]>) {\n"
                "    let t = x.load_like(z);\n    z.store(t * (180.0 / std::math::PI));\n"
                "    w.store((t as f64) * (std::math::PI / 180.0));\n}\n"
                "fn main() {\n    let a = 3.0;\n    let b = 4.0;\n    let r: f64 = 2.0;\n"
                "    print(sqrt(a * a + b * b), a * (180.0 / std::math::PI), r * (std::math::PI / 180.0));\n"
                "    let x = arange::<f32>(4);\n    let mut z = zeros::<f32>([4]);\n"
                "    let mut w = zeros::<f64>([4]);\n"
                "    k(z.partition([4]), w.partition([4]), &x).sync();\n    print(z[3], w[3]);\n}\n", "cpu", out=out)
    got = [float(v) for v in out.getvalue().split()]
    want = [5.0, math.degrees(3.0), math.radians(2.0), math.degrees(3.0), math.radians(3.0)]
    assert all(math.isclose(g, w, rel_tol=1e-6) for g, w in zip(got, want, strict=True)), got
    assert got[2] == math.radians(2.0) and got[4] == math.radians(3.0)   # (f64 exact: the constant is f64's)
