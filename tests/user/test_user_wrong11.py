"""Round 11 of the user's mistakes (huser11, 2026-12-05): what a NumPy or
PyTorch user reaches for that Tile has not, each with the help applied by
the letter.

- e94 `concat([s, m], 1)` in a kernel: the help (Tile has no concatenation:
  nested stores) was the third error. The list `[s, m]` was checked as a
  shape and gave two E0203 "expected an integer, found `Tile<..>`" first;
  the arguments of a call with no signature (an unknown or not callable
  name) are now checked element by element, so E0102 and its help come
  alone.
- e95 PyTorch's `t.flip(0)` on a tile (E0103): the help listed the methods of
  tiles. It now says how to reverse a tile (a masked sum over an [N, N]
  tile), spelt with the tile's own length and a zero of its element type,
  as `flip(t, 0)` does (E0102), and `t.concat(..)`/`t.cat(..)` get the
  concatenation's help.
- e96 `dx.partition([64])` of a 2-D tensor given to a kernel whose tile is
  `[1, BN]` (E0217): the help said `dx.partition([64, 50])` ("the whole
  length of each axis left out"), which the kernel then refused (E0216:
  64 is not 1). A partition given to a kernel's `&mut` parameter now gets
  the parameter's tile with the sizes given in its generic dimensions,
  `dx.partition([1, 64])`.
- e97 an atomic's offset read from a tensor as a one-element tile, `[o]`
  (E0203): the help said "cast it with `as i32`", which keeps a tile; it
  says `o.item()` now (and for a tile of many elements, to reduce it).
- e99 `let w = [0.25, 0.5, 0.25];` in a kernel: three E0203 "expected an
  integer" whose help was "cast it with `as i32`" (which makes them 0), and
  a fourth error where `w` was used; now one error, "Tile has no lists of
  values", whose help writes the tile of them with `where` over `arange`
  positions; e99 (a second) `const TAPS: [f32; 2]` (E0016 "write a type such as
  `i32`"): Tile has no array types, name each value.
- e98 `b as u4` (E0104): the help offered `u64` ("a similar name"); for
  types narrower than a byte (and fp8/fp4 names) it says how to pack and
  unpack them instead.

`test_user_wrong.py` checks each file's code, place, underline and help
line; here the help names the fix, the program with the fix applied passes
`tilec check -D warnings`, and it prints what NumPy says.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from fuzz import help_check
from fuzz.help_check import code_in, parses
from tilelang import driver
from userprog import assert_help_leads_to_a_working_program, assert_the_editor_shows_the_first_error, first_error, \
    REPO, fixed_program, run_program, tilec_at_root

DIR = Path(__file__).parent / "wrong"

_FLIPPED = ("where(arange::<i32>(B).reshape([B, 1]) + arange::<i32>(B).reshape([1, B]) == B - 1, "
            "x.load_like(z).reshape([1, B]).broadcast([B, B]), 0.0).sum(1)")

# file: (a phrase of the first error's help, the fix: (old, new) replacements, what the fixed program prints)
FIXES: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    "e94_concat_of_tiles": ("store each part into its own nested tile of the output",
                            [("    z.store(concat([s, m], 1));",
                              "    let q = z.partition([1, 1]);\n    q.store(s, [0, 0]);\n    q.store(m, [0, 1]);")],
                            "Tensor<f32, [2]> [66.0, 21.0]\n"),  # row sums 6 + 22 + 38, maxima 3 + 7 + 11
    "e95_flip_method": (f"`{_FLIPPED}`", [("x.load_like(z).flip(0)", _FLIPPED)],
                        "Tensor<f32, [8]> [3.0, 2.0, 1.0, 0.0, 7.0, 6.0, 5.0, 4.0]\n"),
    "e96_partition_rank_of_row_tiles": ("the kernel's tile is `[1, BN]`, so `dx.partition([1, 64])`",
                                        [("dx.partition([64])", "dx.partition([1, 64])")], "1300.0\n"),
    "e97_tile_as_atomic_index": ("`o` is a tile of one element: its value is `o.item()`",
                                 [("[o]", "[o.item()]")], "32.0 2.0\n"),
    "e98_four_bit_type": ("take them apart with `b & 15` and `b >> 4`",
                          [("(b as u4) as i32", "(b & 15) as i32")], "Tensor<i32, [8]> [ 0,  5, 10, 15,  4,  9, 14,  3]\n"),
    "e99_list_of_weights": ("`where(arange::<i32>(3) == 0, 0.25, where(arange::<i32>(3) == 1, 0.5, 0.25))`",
                            [("[0.25, 0.5, 0.25]",
                              "where(arange::<i32>(3) == 0, 0.25, where(arange::<i32>(3) == 1, 0.5, 0.25))")],
                            "Tensor<f32, [3]> [ 7.0, 14.0,  7.0]\n"),
    "e99_const_array": ("name each value (`const TAPS0: f32 = 0.25;`)",
                         [("const TAPS: [f32; 2] = [0.25, 0.5];", "const TAPS0: f32 = 0.25;\nconst TAPS1: f32 = 0.5;"),
                          ("TAPS[1]", "TAPS1"), ("TAPS[0]", "TAPS0")],
                         "Tensor<f32, [8]> [0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75]\n"),
}


def test_every_mistake_has_a_fix() -> None:
    # (two e99s: the other rounds' tests compare stems as text, where an e100 sorts before e53; a later round
    # starts a new letter)
    assert sorted(p.stem for p in DIR.glob("e9[4-9]_*.tile")) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits, printed = FIXES[name]
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", hint, edits, tmp_path)
    assert run_program(fixed_program(DIR / f"{name}.tile", edits, tmp_path))[1] == printed


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


def _errors(tmp_path: Path, body: str, head: str = "") -> list[tuple[str, tuple[str, ...]]]:
    f = tmp_path / "k.tile"
    f.write_text(f"{head}kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>) {{\n"
                 f"    let t = x.load_like(z);\n{body}\n}}\n", encoding="utf-8")
    return [(d.code, d.help) for d in driver.check(f).diagnostics if d.severity.value == "error"]


@pytest.mark.parametrize(("call", "code"), [("concat([t, t], 0)", "E0102"), ("torch.cat([t, t], 0)", "E0101"),
                                           ("t.cat([t, t])", "E0103"), ("b([t, t])", "E0115")])
def test_a_list_given_to_what_is_no_function_is_not_read_as_a_shape(call: str, code: str, tmp_path: Path) -> None:
    errs = _errors(tmp_path, f"    let b = 1;\n    z.store({call});")
    assert [c for c, _ in errs] == [code], errs
    # its elements are still checked: a name that does not exist inside the list is reported
    errs = _errors(tmp_path, f"    let b = 1;\n    z.store({call.replace('[t, t]', '[t, tt]')});")
    assert len(errs) == 2 and "E0203" not in {c for c, _ in errs}, errs


def test_the_reversal_help_names_the_tile_s_length_and_zero(tmp_path: Path) -> None:
    [(code, help_)] = _errors(tmp_path, "    z.store(flip(t, 0));")
    assert code == "E0102" and "`where(arange::<i32>(B).reshape([B, 1]) + arange::<i32>(B).reshape([1, B]) == " \
        "B - 1, t.reshape([1, B]).broadcast([B, B]), 0).sum(1)`" in help_[0], help_
    [(code, help_)] = _errors(tmp_path, "    z.store(t.reverse());")
    assert code == "E0103" and "element B - 1 - i" in help_[0] and ", 0).sum(1)`" in help_[0], help_
    # the help, applied, reverses an i32 tile
    f = tmp_path / "k.tile"
    src = help_[0].split("masked sum: `")[1].rstrip("`")
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>) {\n"
                 f"    let t = x.load_like(z);\n    z.store({src});\n}}\n"
                 "fn main() {\n    let x = arange::<i32>(6);\n    let mut z = zeros::<i32>([6]);\n"
                 "    k(z.partition([3]), &x).sync();\n    print(z);\n}\n", encoding="utf-8")
    assert run_program(f)[1] == "Tensor<i32, [6]> [2, 1, 0, 5, 4, 3]\n"


def test_the_reversal_help_on_a_host_tensor_runs(tmp_path: Path) -> None:
    # a host tensor of a known length gets its length in the help (`?` or 2-D ones keep `N`); applied, it runs
    f = tmp_path / "h.tile"
    f.write_text("fn main() {\n    let y = arange::<i32>(4);\n    print(y.flip(0));\n}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0103" and "`where(arange::<i32>(4).reshape([4, 1]) + arange::<i32>(4).reshape([1, 4]) == " \
        "4 - 1, y.reshape([1, 4]).broadcast([4, 4]), 0).sum(1)`" in d.help[0], d.help
    f.write_text(f.read_text(encoding="utf-8").replace("y.flip(0)", d.help[0].split("masked sum: `")[1].rstrip("`")),
                 encoding="utf-8")
    assert run_program(f)[1] == "Tensor<i32, [4]> [3, 2, 1, 0]\n"
    # a 2-D one (round 17): reversed along the axis asked, which runs too
    f.write_text("fn main() {\n    let y = arange::<i32>(4).reshape([2, 2]);\n    print(y.flip(0));\n}\n",
                 encoding="utf-8")
    h = first_error(f).help[0]
    assert "reversed along axis 0" in h, h
    f.write_text(f.read_text(encoding="utf-8").replace("y.flip(0)", h.split("masked sum: `")[1].rstrip("`")),
                 encoding="utf-8")
    assert run_program(f)[1] == "Tensor<i32, [2, 2]>\n[[2, 3],\n [0, 1]]\n"


def test_doc_of_every_other_language_s_name_gives_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    # `tilec doc flip` was an internal error (101): the help read the call's argument, and `tilec doc` has no call
    from tilelang import cli
    from tilelang.intrinsics.math_habits import MATH_HABITS
    from tilelang.sema import call_habits

    for name in sorted({*call_habits.HABITS, *call_habits.METHOD_HABITS, *MATH_HABITS} - {"len"}):
        status = cli.run(["doc", name])
        err = capsys.readouterr().err
        if status == cli.EXIT_OK:  # a name the reference has an entry for (`relu` is std::nn's, ..)
            continue
        assert status == cli.EXIT_ERRORS and f"Tile has no `{name}`" in err and "\nhelp: " in err, (name, err)
    assert cli.run(["doc", "flip"]) == cli.EXIT_ERRORS
    assert "element N - 1 - i" in capsys.readouterr().err


def test_the_repl_has_no_main_to_call_and_emit_s_help_leads_to_the_ptx() -> None:
    """f11's launches take their tile from a loop's variable, so `tilec emit` has no instance to show; its help
    said to `:load` the file in `tilec repl` and "run the function": the function was `main`, which `:load`
    leaves out, and `main();` at the prompt called the session's own `main` (the statements entered), which
    recursed until E0719 "the host stack overflowed". `main()` at the prompt is E0102 now, with a help; the
    emit help says to enter the statements of the file's `main`, and doing so gives `:ptx merge`."""
    from tilelang import cli
    from tilelang.repl import ReplSession

    prog = REPO / "tests" / "user" / "programs" / "f11_merge_sort_passes.tile"
    r = tilec_at_root("emit", str(prog.relative_to(REPO)), "--stage", "ptx")
    assert r.returncode == cli.EXIT_ERRORS and "the statements of its `main`, which `:load` leaves out" in r.stderr
    s = ReplSession(device="cpu")
    assert s.feed(f":load {prog}").stdout == f"loaded 1 item from {prog}\n"
    out = s.feed("main();")
    assert not out.ok and "error[E0102]: the REPL has no `main` to call" in out.stderr
    assert "E0719" not in out.stderr and "`tilec run FILE`" in out.stderr
    body = prog.read_text(encoding="utf-8").split("fn main() {\n", 1)[1].rsplit("}", 1)[0]
    assert s.feed(body).ok
    assert s.feed("sorted[63]").stdout == "f32 = 7.0\n"
    ptx = s.feed(":ptx merge")
    assert ptx.ok and ".entry" in ptx.stdout, ptx.stderr


# ---- other libraries' math functions (`tilelang/intrinsics/math_habits.py`): the help's spelling, run
_X = [-2.5, -1.5, -0.3, 0.0, 0.5, 1.5, 2.7, 3.0]
_POS = [0.01, 0.3, 0.5, 1.0, 1.5, 2.0, 7.5, 20.0]
_SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -1.0, 2.0, 1e30, -3.5]
_ROUND = [-2.5, -1.5, -0.3, 0.5, 2.5, 0.49999997, 8388609.0, -8388607.5]
_NUMPY = {  # name: (inputs, what NumPy gives, rtol)
    "tan": (_X, np.tan, 1e-5), "sinh": (_X, np.sinh, 1e-5), "cosh": (_X, np.cosh, 1e-5),
    "exp10": (_X, lambda v: 10.0 ** v, 1e-5), "log10": (_POS, np.log10, 1e-5), "log1p": (_POS, np.log1p, 1e-5),
    # (huser26: `round` and `rint` halves to even, as NumPy's, where the help's `floor(x + 0.5)` was 1 too big at
    # 0.5, 2.5, 0.49999997 and odd values past 2^23)
    "expm1": (_POS, np.expm1, 1e-5), "round": (_ROUND, np.round, 0),
    "rint": (_ROUND, np.rint, 0), "trunc": (_X, np.trunc, 0), "sign": (_X, np.sign, 0),
    "isnan": (_SPECIAL, np.isnan, 0), "isinf": (_SPECIAL, np.isinf, 0), "isfinite": (_SPECIAL, np.isfinite, 0),
    "square": (_X, np.square, 1e-7), "reciprocal": (_POS, np.reciprocal, 1e-7), "cbrt": (_X, np.cbrt, 1e-5),
    "softplus": (_X, lambda v: np.log1p(np.exp(v)), 1e-5),
    # (cummax and cummin are built-ins since round 12: test_user_programs12)
}


def _spelling(name: str) -> str:
    from tilelang.intrinsics.math_habits import MATH_HABITS

    return MATH_HABITS[name].format(x="t").split("`")[1 if not MATH_HABITS[name].startswith("Tile's") else 5]


@pytest.mark.parametrize("name", sorted(_NUMPY))
def test_a_math_function_tile_has_not_gets_a_spelling_that_computes_it(name: str, tmp_path: Path) -> None:
    values, want, rtol = _NUMPY[name]
    code = re.sub(r"\bN\b", "B", _spelling(name))  # (the kernel's tile length)
    f = tmp_path / "m.tile"
    f.write_text(f"""kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {{
    let t = x.load_like(z);
    z.store(({code}) as f32);
}}
fn main() {{
    let x = ones::<f32>([8]);
    let mut z = zeros::<f32>([8]);
    k(z.partition([8]), &x).sync();
}}
""", encoding="utf-8")
    src = f.read_text(encoding="utf-8")
    # the function form, unknown, gets the help with the argument's spelling
    wrong = tmp_path / "w.tile"
    wrong.write_text(src.replace(f"({code}) as f32", f"{name}(t) as f32"), encoding="utf-8")
    d = first_error(wrong)
    assert d.code == "E0102" and _spelling(name) in d.help[0], d.help
    # the spelling checks clean and computes what NumPy's function does
    assert not driver.check(f, deny_warnings=True).diagnostics
    got = _run_with_inputs(f, np.asarray(values, np.float32))
    with np.errstate(all="ignore"):
        exp = np.asarray(want(np.asarray(values, np.float64)), np.float64)
    np.testing.assert_allclose(got.astype(np.float64), exp, rtol=rtol, atol=1e-6 if rtol else 0, equal_nan=True)


def _run_with_inputs(f: Path, values: np.ndarray) -> np.ndarray:
    """The kernel `k` of `f` on `values`, through the Python API."""
    import tilelang

    mod = tilelang.load(f)
    z = np.zeros_like(values)
    mod.k(tilelang.partition(z, [8]), values).sync()
    return z


def test_a_math_method_tile_has_not_gets_the_spelling_of_its_receiver(tmp_path: Path) -> None:
    f = tmp_path / "m.tile"
    f.write_text("fn main() {\n    let v = arange::<f32>(4);\n    print(v.tan(), (v * 2.0).log10());\n}\n",
                 encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0103", "E0103"]
    assert "`sin(v) / cos(v)`" in errs[0].help[0] and "tanh" not in errs[0].message
    assert "`log((v * 2.0)) * 0.4342945`" in errs[1].help[0], errs[1].help  # (the receiver kept whole)


@pytest.mark.parametrize(("line", "hint", "fixed", "printed"), [
    # NumPy's selection by a mask: the help keeps the shape, and counts
    ("print(x[x > 3.0]);", "`where(x > 3.0, x, 0.0)`", "print(where(x > 3.0, x, 0.0), ((x > 3.0) as i32).sum());",
     "Tensor<f32, [8]> [0.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0, 7.0] 4"),
    ("print(k[k % 2 == 0]);", "`where(k % 2 == 0, k, 0)`", "print(where(k % 2 == 0, k, 0));",
     "Tensor<i32, [8]> [0, 0, 2, 0, 4, 0, 6, 0]"),
    # Rust's open ranges (E0003 "expected expression", help "write a value here")
    ("print(x[2..]);", "`x[2..x.shape()[0]]` runs to the end", "print(x[2..x.shape()[0]]);",
     "Tensor<f32, [6]> [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]"),
    ("print(x[..3]);", "`0..b` starts at the first element", "print(x[0..3]);", "Tensor<f32, [3]> [0.0, 1.0, 2.0]"),
])
def test_numpy_and_rust_indexing_get_a_help_that_runs(line: str, hint: str, fixed: str, printed: str,
                                                      tmp_path: Path) -> None:
    f = tmp_path / "h.tile"
    head = "fn main() {\n    let x = arange::<f32>(8);\n    let k = arange::<i32>(8);\n    print(k.sum() + 1);\n"
    f.write_text(head + f"    {line}\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert any(hint in h for h in d.help), d.help
    f.write_text(head + f"    {fixed}\n}}\n", encoding="utf-8")
    assert run_program(f)[1] == f"29\n{printed}\n"


def test_repl_help_of_another_library_s_name_says_how_tile_writes_it() -> None:
    # `:help tan` said "did you mean `tanh`?", another function; it says what `tilec doc tan` says
    from tilelang.repl import ReplSession

    s = ReplSession(device="cpu")
    out = s.feed(":help tan")
    assert not out.ok and "Tile has no `tan`" in out.stderr and "`sin(x) / cos(x)`" in out.stderr
    assert "did you mean" not in out.stderr
    assert "element N - 1 - i" in s.feed(":help flip").stderr
    assert s.feed(":help cumprod").stdout.startswith("cumprod(x: Tile<T, S> | Tensor<T, S>, axis: i32)")
    assert s.feed("fn tan(x: f32) -> f32 {\n    sin(x) / cos(x)\n}").ok  # a session's own `tan` is its item
    assert "defined in this session" in s.feed(":help tan").stdout


@pytest.mark.parametrize(("call", "hint", "fixed", "printed"), [
    ("linspace(0.0, 1.0, 5)", "`arange::<f32>(5) * ((1.0 - 0.0) / ((5 - 1) as f32)) + 0.0`",
     "arange::<f32>(5) * ((1.0 - 0.0) / ((5 - 1) as f32)) + 0.0", "Tensor<f32, [5]> [ 0.0, 0.25,  0.5, 0.75,  1.0]"),
    ("eye::<f32>(2)", "`(arange::<i32>(n).reshape([n, 1]) == arange::<i32>(n).reshape([1, n])) as f32`",
     "(arange::<i32>(2).reshape([2, 1]) == arange::<i32>(2).reshape([1, 2])) as f32",
     "Tensor<f32, [2, 2]>\n[[1.0, 0.0],\n [0.0, 1.0]]"),
    ("randint::<i32>([1000], 3, 7).max()", "`(rand::<f32>(shape, seed) * (hi - lo) as f32) as i32 + lo`",
     "((rand::<f32>([1000], 1) * (7 - 3) as f32) as i32 + 3).max()", "6"),
    ("ones_like(x)", "`ones::<f32>([x.shape()[0]])`", "ones::<f32>([x.shape()[0]])", "Tensor<f32, [4]> [1.0, 1.0, 1.0, 1.0]"),
    ("dot(x, x)", "`(x * x).sum()`", "(x * x).sum()", "14.0"),
    ("x.dot(x)", "`(x * x).sum()`", "(x * x).sum()", "14.0"),
])
def test_numpy_s_host_constructors_get_a_spelling_that_runs(call: str, hint: str, fixed: str, printed: str,
                                                            tmp_path: Path) -> None:
    # `linspace`, `eye` said "define it"; `randint` offered `randn`, `ones_like` `ones`, `x.dot(x)` the kernel
    # function `dot` (E0211 on the host), `dot(x, x)` "move this into a kernel"
    f = tmp_path / "c.tile"
    f.write_text(f"fn main() {{\n    let x = arange::<f32>(4);\n    print({call});\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert any(hint in h for h in d.help), d.help
    f.write_text(f"fn main() {{\n    let x = arange::<f32>(4);\n    print({fixed});\n}}\n", encoding="utf-8")
    assert run_program(f)[1] == printed + "\n"


def test_an_f16_tile_times_a_tile_of_literals_gets_the_f16_cast_too(tmp_path: Path) -> None:
    # `where(c, 0.5, 1.0)` is f32 (its literals' default); times an f16 tile the help said only `t as f32`,
    # whose product the f16 store then refuses; stored into an f16 tile, the help casts `w` down, which runs
    f = tmp_path / "w.tile"
    src = """kernel fn k<const B: i32>(z: &mut Tensor<f16, [B]>, x: &Tensor<f16, [?]>) {
    let t = x.load_like(z);
    let w = where(arange::<i32>(B) % 2 == 0, 0.5, 1.0);
    z.store(t * w);
}
fn main() {
    let x = ones::<f16>([8]);
    let mut z = zeros::<f16>([8]);
    k(z.partition([8]), &x).sync();
    print(z);
}
"""
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and d.help == ("cast with `as`: `w as f16` (the result is stored into a tile of `f16`)",), \
        d.help
    # not stored at once, both casts are offered; stored into an f32 tile, the f16 side goes up (w21, e25)
    f.write_text(src.replace("z.store(t * w);", "let y = t * w;\n    z.store(y);"), encoding="utf-8")
    assert first_error(f).help == ("cast with `as`: `t as f32`, or `w as f16` to compute in `f16`",)
    f.write_text(src.replace("t * w", "t * (w as f16)"), encoding="utf-8")
    assert run_program(f)[1] == "Tensor<f16, [8]> [0.5, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 1.0]\n"


@pytest.mark.parametrize(("line", "hint"), [
    # a help that appends a method to an expression keeps the expression whole (it wrote `t.sum(1) as f16.reshape(..)`)
    ("    z.store(t.sum(1) as f16);", "`(t.sum(1) as f16).reshape([R, 1])`"),
    ("    z.store(-t.sum(1) as f16);", "`(-t.sum(1) as f16).reshape([R, 1])`"),
    ("    z.store((t.sum(1) + 1.0) as f16);", "`((t.sum(1) + 1.0) as f16).reshape([R, 1])`"),
])
def test_a_reshape_help_of_a_cast_keeps_the_cast_whole(line: str, hint: str, tmp_path: Path) -> None:
    f = tmp_path / "s.tile"
    src = f"""kernel fn k<const R: i32, const C: i32>(z: &mut Tensor<f16, [R, 1]>, x: &Tensor<f32, [?, ?]>) {{
    let t = x.partition([R, C]).load([block_id(0), 0]);
{line}
}}
fn main() {{
    let x = ones::<f32>([8, 4]);
    let mut z = zeros::<f16>([8, 1]);
    k::<4, 4>(z.partition([4, 1]), &x).sync();
    print(z.sum());
}}
"""
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0218" and any(hint in h for h in d.help), d.help
    f.write_text(src.replace(line.strip()[len("z.store("):-2], hint.strip("`").replace(".reshape([R, 1])", "")
                             + ".reshape([R, 1])"), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics


def test_a_math_function_of_an_integer_sum_is_cast_whole(tmp_path: Path) -> None:
    # `exp(t + 1)` of an i32 tile: the help said `exp(t + 1 as f32)`, which casts only the 1
    f = tmp_path / "e.tile"
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<i32, [?]>) {\n    let t = x.load_like(z);\n"
           "    z.store(exp(t + 1));\n}\nfn main() {\n    let x = arange::<i32>(4);\n    let mut z = zeros::<f32>([4]);\n"
           "    k(z.partition([4]), &x).sync();\n    print(z.sum() > 83.0);\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert "`exp((t + 1) as f32)`" in d.help[0], d.help
    f.write_text(src.replace("exp(t + 1)", "exp((t + 1) as f32)"), encoding="utf-8")
    assert run_program(f)[1] == "true\n"


def test_a_stray_quote_is_not_closed_somewhere_else(tmp_path: Path) -> None:
    # a fuzz mutant (seed 191, case 1311): E0008's help closed the "string" inside the call's arguments,
    # `"([64", 32]);`, which does not parse; no string starts after `>`: the quote is stray (or a `,` is missing)
    f = tmp_path / "q.tile"
    f.write_text('fn main() {\n    let a = zeros::<f16>"([64, 32]);\n    print(a.shape());\n}\n', encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0008" and "a string cannot start after `>`: remove this `\"`" in d.help[0], d.help
    f.write_text('fn main() {\n    let a = zeros::<f16>([64, 32]);\n    print(a.shape());\n}\n', encoding="utf-8")
    assert run_program(f)[1] == "[64, 32]\n"


def test_the_code_in_every_help_parses(tmp_path: Path) -> None:
    """The backticked code of every help `tilec check` gives on tests/ui and tests/user's wrong programs parses
    as Tile (an expression, a statement or an item), where it is code and not a placeholder (`[..]`, `(..)`),
    a type (`Tensor<..>`), a declaration's start (`let x: i64 = ..`) or a method tail (`.reshape(..)`). Round 11
    found helps that wrote `t.sum(1) as f16.reshape([R, 1])`, `exp(t + 1 as f32)` (parses, casts the 1: tested
    above) and `"([64", 32]);`. And (round 12) tests/fuzz/help_check.py's `apply` over tests/ui and the wrong
    programs, on the same diagnostics (one `tilec check` a file for both): no cast help there leaves an error
    on its line."""
    roots = [REPO / "tests" / "ui", DIR, DIR.parent / "wrong_run"]
    files = sorted(p for r in roots for p in r.rglob("*.tile"))
    assert len(files) > 300
    bad, checked, found, applied = [], 0, [], 0
    for f in files:
        diags = driver.check(f).diagnostics
        if roots[2] not in f.parents:
            found += help_check.check_text(f.name, f.read_text(encoding="utf-8"), tmp_path, diags)
            applied += 1
        for d in diags:
            for h in d.help:
                for code in code_in(h):  # the help's backticked code, less placeholders and types
                    checked += 1
                    if not parses(code):
                        bad.append((f.name, d.code, code))
    assert checked > 150 and not bad, bad
    assert applied > 300 and found == [], found


def test_a_quote_before_code_is_not_closed_inside_it(tmp_path: Path) -> None:
    # a fuzz mutant (seed 223, case 1651): `ones::<f32>("[256, 256]);` was told to close the string as
    # `"[256", 256]);`, half a bracket in the text; what follows the quote is code: the quote is stray
    f = tmp_path / "q.tile"
    f.write_text('fn main() {\n    let x = ones::<f32>("[256, 256]);\n    print(x.sum());\n}\n', encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0008" and d.help[0].startswith("remove this `\"` if it does not belong"), d.help
    f.write_text('fn main() {\n    let x = ones::<f32>([256, 256]);\n    print(x.sum());\n}\n', encoding="utf-8")
    assert run_program(f)[1] == "65536.0\n"


def test_cast_helps_inside_a_store_lead_to_a_program_that_checks(tmp_path: Path) -> None:
    """Applying a cast help inside `z.store(..)` left the store refused (found by applying every cast help of the
    ui and wrong programs and checking again): w25's `z.load() << 2` of an f32 `z` (the shift's result is i32:
    the help now writes it cast back), e25's `x.load_like(z) * a` inside `z.load() + ..` (the second cast it
    offered, `a as f16`, gave an f16 term to add to f32: a mix inside a stored sum casts toward the store)."""
    w25 = (DIR / "w25_shift_float.tile").read_text(encoding="utf-8")
    d = first_error(DIR / "w25_shift_float.tile")
    assert d.help == ("cast to an integer with `as`, and the result back to store it: "
                      "`((z.load() as i32) << 2) as f32`",)  # the whole fix, one piece of code (round 12)
    f = tmp_path / "w25.tile"
    f.write_text(w25.replace("z.store(z.load() << 2);", "z.store(((z.load() as i32) << 2) as f32);"), encoding="utf-8")
    assert not driver.check(f, deny_warnings=True).diagnostics
    assert first_error(DIR / "e25_mixed_precision.tile").help == ("cast with `as`: `x.load_like(z) as f32`",)


def test_a_partition_of_the_wrong_element_type_is_not_told_to_cast_the_partition(tmp_path: Path) -> None:
    # a fuzz mutant (seed 193, case 2240): `fill(z.partition([1024]))` of a u32 `z` for an f32 parameter was told
    # "cast with `as`: `z.partition([1024]) as f32`", which is E0205 (a partition has no cast)
    f = tmp_path / "p.tile"
    src = ("kernel fn fill<const B: i32>(z: &mut Tensor<f32, [B]>) {\n    z.store(full::<f32>([B], 1.5));\n}\n"
           "fn main() {\n    let mut z = zeros::<u32>([4096]);\n    fill(z.partition([1024])).sync();\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and "`let mut z2 = z as f32;` then `z2.partition([..])`" in d.help[0], d.help
    f.write_text(src.replace("    fill(z.partition([1024])).sync();\n",
                             "    let mut z2 = z as f32;\n    fill(z2.partition([1024])).sync();\n    print(z2.sum());\n"),
                 encoding="utf-8")
    assert run_program(f)[1] == "6144.0\n"


def test_a_tensor_parameter_of_another_type_is_not_told_to_cast_inside_a_kernel(tmp_path: Path) -> None:
    # fuzz mutants (seed 197): a kernel's `&Tensor<u64, ..>` given to a device function of `&Tensor<bf16, ..>`
    # was told "cast with `as`: `g as bf16`", which is E0205 (no tensor has a cast inside a kernel)
    f = tmp_path / "k.tile"
    src = ("fn first<const B: i32>(x: &Tensor<f32, [?]>) -> Tile<f32, [B]> {\n    x.partition([B]).load([0])\n}\n"
           "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, g: &Tensor<u32, [?]>) {\n"
           "    z.store(first::<B>(g));\n}\n"
           "fn main() {\n    let g = arange::<u32>(8);\n    let mut z = zeros::<f32>([8]);\n"
           "    k(z.partition([8]), &g).sync();\n    print(z.sum());\n}\n")
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and d.help[0].startswith("a tensor has no cast inside a kernel"), d.help
    # its first way: a kernel parameter of f32, the host's cast borrowed
    f.write_text(src.replace("g: &Tensor<u32, [?]>", "g: &Tensor<f32, [?]>").replace("&g).sync", "&(g as f32)).sync"),
                 encoding="utf-8")
    assert run_program(f)[1] == "28.0\n"


@pytest.mark.parametrize(("body", "hint", "fixed"), [
    # `acc = acc + x` of an i32 `acc` and an f32 `x`: casting `acc` up made the assignment the next error
    ("    let mut acc: i32 = 0;\n    acc = acc + x.sum();\n    print(acc);", "`x.sum() as i32` (it is assigned to `acc`, of `i32`)",
     "    let mut acc: i32 = 0;\n    acc = acc + (x.sum() as i32);\n    print(acc);"),
    # a function returning i32 whose value mixes in an f32: casting up made the return the next error
    ("    print(half(7, 0.5));", "`h as i32` (the function returns `i32`)", None),
])
def test_a_mix_in_an_assigned_or_returned_value_casts_toward_it(body: str, hint: str, fixed: str | None,
                                                               tmp_path: Path) -> None:
    f = tmp_path / "a.tile"
    head = "fn half(n: i32, h: f32) -> i32 {\n    n * h\n}\n" if fixed is None else ""
    f.write_text(f"{head}fn main() {{\n    let x = arange::<f32>(4);\n{body}\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0201" and any(hint in h for h in d.help), d.help
    if fixed is None:
        f.write_text(f.read_text(encoding="utf-8").replace("    n * h\n", "    n * (h as i32)\n"), encoding="utf-8")
    else:
        f.write_text(f"fn main() {{\n    let x = arange::<f32>(4);\n{fixed}\n}}\n", encoding="utf-8")
    assert not [e for e in driver.check(f).diagnostics if e.severity.value == "error"]


@pytest.mark.parametrize(("line", "hint", "fixed", "printed"), [
    # both sides floats: the help cast one (fuzz seed 229: `z.load() & 0.0`), and the other was the next error
    ("print(a & 1.0);", "cast both sides with `as`: `(a as i32) & 1`", "print((a as i32) & 1);",
     "Tensor<i32, [4]> [0, 1, 0, 1]"),
    ("print(a >> 1.0);", "cast both sides with `as`: `(a as i32) >> 1`", "print((a as i32) >> 1);",
     "Tensor<i32, [4]> [0, 0, 1, 1]"),
])
def test_a_bitwise_operation_of_two_floats_casts_both(line: str, hint: str, fixed: str, printed: str,
                                                      tmp_path: Path) -> None:
    f = tmp_path / "b.tile"
    f.write_text(f"fn main() {{\n    let a = arange::<f32>(4);\n    {line}\n}}\n", encoding="utf-8")
    assert first_error(f).help == (hint,)
    f.write_text(f"fn main() {{\n    let a = arange::<f32>(4);\n    {fixed}\n}}\n", encoding="utf-8")
    assert run_program(f)[1] == printed + "\n"


@pytest.mark.parametrize("in_loop", [False, True])
def test_a_destructuring_of_a_call_of_another_type_is_not_told_to_cast_the_tuple(in_loop: bool,
                                                                                tmp_path: Path) -> None:
    # a fuzz mutant (seed 239, case 335): `(x, n) = two(x, n);` whose first element is i64 for an f32 `x` was told
    # "cast with `as`: `two(x, n) as f32`", a cast of a tuple (E0205); in a loop's body, where the assignment is
    # the body's last expression, its elements' mismatches were not even gathered as elsewhere
    body = "    (x, n) = two(x, n);\n"
    if in_loop:
        body = "    for _i in 0..3 {\n    " + body + "    }\n"
    f = tmp_path / "d.tile"
    f.write_text("fn two(a: f32, b: i32) -> (i64, i32) {\n    (a as i64, b * 2)\n}\nfn main() {\n    let mut n = 1;\n"
                 f"    let mut x = 0.5;\n{body}    print(x, n);\n}}\n", encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0203" and d.message == "mismatched types" and "`let t = two(x, n);`" in d.help[0], d.help
    assert "as f32`" not in d.help[0].split("(`let t")[0]
