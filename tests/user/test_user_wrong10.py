"""Round 10 of the user's mistakes (huser10, 2026-12-05): ten error codes no
earlier file of tests/user/wrong reports first (`wrong/e84-e93`), each with
the help applied by the letter.

- e84 a `]` closing a call's `(` (E0005), e85 a format string without its
  closing quote (E0008: the help said "add a closing `\"`", and the file's end
  is where the lexer stopped; for a text followed by a call's last arguments
  it now writes the line closed, `"total: {}", x.sum());`), e86 `kernel add(`
  (E0013), e87 one `}` too many (E0006), e88 a one-line `/*` comment never
  closed (E0009), e89 `let mut = ..` (E0020), e90 10^20 as an integer literal
  (E0019), e91 `for 0..4` (E0012: the help spoke of `let x = ...` and tuples;
  for a `for` it now says `for i in 0..n`, or `for _ in 0..n`), e92 a host
  function whose `&` parameter an atomic kernel writes (E0312), e93
  `cluster_gather` inside a branch (E0415).

`test_user_wrong.py` checks each file's code, place, underline and help
line; here the first error's help names the fix, the program with the fix
applied passes `tilec check -D warnings`, and it prints what NumPy says.
Below: `1e` (an exponent without digits read as a suffix, E0010) now gets an
exponent's help, not the list of type suffixes.

`wrong_run/r06-r09`: mistakes only a run finds, four codes no wrong table had,
each refused with a help that leads to a working program: E0505 a tile size
computed from the data, E0507 one that comes out 0 (the help said `max(n, 1)`,
itself an error: `maximum(n, 1)` now), E0715 a mean over an empty selection,
E0717 `fn Main()` (the help said to add a `main`; it now points at `Main`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang import driver
from userprog import (assert_help_leads_to_a_working_program, assert_the_editor_shows_the_first_error, first_error,
                      fixed_program, run_program, run_time_fix)

DIR = Path(__file__).parent / "wrong"

# file: (a phrase of the first error's help, the fix: (old, new) replacements, what the fixed program prints)
FIXES: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    "e84_bracket_closes_a_paren": ("close the `(` with `)`", [("* 2.0];", "* 2.0);")], "56.0\n"),
    "e85_unclosed_string": ('`"total: {}", x.sum());`', [('"total: {}, x.sum());', '"total: {}", x.sum());')],
                            "total: 28.0\n"),
    "e86_kernel_without_fn": ("write `kernel fn name(...)`", [("kernel add(", "kernel fn add(")], "36.0\n"),
    "e87_extra_closing_brace": ("remove this `}`", [("}\n}\nfn main", "}\nfn main")], "36.0\n"),
    "e88_unclosed_block_comment": ("add a closing `*/`", [("/* doubles each element", "/* doubles each element */")],
                                   "56.0\n"),
    "e89_let_mut_without_name": ("write a name here", [("let mut =", "let mut z =")], "24.0\n"),
    "e90_integer_too_large": ("write a float literal such as `1e30`", [("100000000000000000000", "1e20")],
                              "6e20\n"),
    "e91_for_without_name": ("`for _ in 0..n`", [("for 0..4", "for _ in 0..4")], "12\n"),
    "e92_host_fn_atomics_through_ref": ("take `hist` as `&mut`",
                                        [("fn histogram(x: &Tensor<i32, [?]>, hist: &Tensor<i32, [4]>)",
                                          "fn histogram(x: &Tensor<i32, [?]>, hist: &mut Tensor<i32, [4]>)"),
                                         ("histogram(&x, &hist);", "histogram(&x, &mut hist);")],
                                        "Tensor<i32, [4]> [4, 4, 4, 4]\n"),
    "e93_cluster_gather_in_a_branch": ("as a statement of the kernel's body",
                                       [("    if block_id(0) < 2 {\n        let parts = cluster_gather(t.sum(0));",
                                         "    let parts = cluster_gather(t.sum(0));\n    if block_id(0) < 2 {")],
                                       "27.0\n"),  # (1..4) / 10 in the first cluster, 5..8 copied: 1 + 26
}

CODES = {"e84": "E0005", "e85": "E0008", "e86": "E0013", "e87": "E0006", "e88": "E0009", "e89": "E0020",
         "e90": "E0019", "e91": "E0012", "e92": "E0312", "e93": "E0415"}


def test_every_mistake_has_a_fix_and_its_code_is_new() -> None:
    assert sorted(p.stem for p in DIR.glob("e*.tile") if "e84" <= p.stem[:3] <= "e93") == sorted(FIXES)
    assert {n[:3]: first_error(DIR / f"{n}.tile").code for n in FIXES} == CODES
    # (a later round's file may meet one of these codes again: round 27's r04 is E0415's exchange inside a larger
    # `let` initializer)
    earlier = {p.read_text(encoding="utf-8").split()[4] for p in DIR.glob("*.tile")
               if p.stem[:3] not in CODES and p.stem[0] != "r"}
    assert not set(CODES.values()) & earlier


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_help_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits, printed = FIXES[name]
    assert_help_leads_to_a_working_program(DIR / f"{name}.tile", hint, edits, tmp_path)
    assert run_program(fixed_program(DIR / f"{name}.tile", edits, tmp_path))[1] == printed


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_editor_shows_the_same_first_error(name: str) -> None:
    assert_the_editor_shows_the_first_error(DIR / f"{name}.tile")


@pytest.mark.parametrize(("literal", "fixed", "printed"), [("1e", "1e3", "3000.0"), ("2.5E", "2.5E-1", "0.75")])
def test_an_exponent_without_digits_gets_an_exponents_help(literal: str, fixed: str, printed: str,
                                                           tmp_path: Path) -> None:
    # the help listed the type suffixes (`i8`, .., `f64`): `e` was read as one
    f = tmp_path / "exp.tile"
    src = f"fn main() {{\n    let x = 3.0 * {literal};\n    print(x);\n}}\n"
    f.write_text(src, encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0010" and list(d.help) == [
        f"an exponent needs its digits: `{literal}3` is {literal[:-1]} x 10^3, `{literal}-3` is {literal[:-1]} x 10^-3"]
    f.write_text(src.replace(literal, fixed), encoding="utf-8")
    assert run_program(f)[1] == printed + "\n"


def test_a_string_closed_by_nothing_on_its_line_keeps_the_plain_help(tmp_path: Path) -> None:
    f = tmp_path / "s.tile"
    f.write_text('fn main() {\n    let s = "abc;\n    print(s);\n}\n', encoding="utf-8")
    d = first_error(f)
    assert d.code == "E0008" and list(d.help) == ['add a closing `"`']


# ---- mistakes found only when the program runs (`wrong_run/r06-r09`): four run-time codes no wrong table had;
# the error's help names the fix, and the program with it applied runs and prints what NumPy says
RUN_DIR = Path(__file__).parent / "wrong_run"

# file: (a phrase of the error's help, the fix, what the fixed program prints)
RUN_FIXES: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    # E0505: a tile size computed from the data against the kernel's fixed `&mut` tile
    "r06_tile_size_from_data": ("partition with dimension 0 = 4",
                                [("z.partition([per_block])", "z.partition([4])"),
                                 ("    let per_block = (x.sum() as i32) / 11;     // 66 / 11: a size known only when "
                                  "it runs\n", "")], "132.0\n"),  # 2 * (0 + .. + 11)
    # E0507: the help said `max(n, 1)`, which is E0204 (`max` reduces a tile; two values' is `maximum`)
    "r07_tile_size_zero": ("`maximum(n, 1)`", [("z.partition([(x.sum() as i32) / 16 / blocks])",
                                                "z.partition([maximum((x.sum() as i32) / 16 / blocks, 1)])")],
                           "30.0\n"),  # tiles of 1: 2 * (0 + .. + 5)
    # E0715: a mean over an empty selection, an integer division by its count 0
    "r08_mean_of_none": ("check the divisor before dividing",
                         [("print(total / above);", "print(if above > 0 { total / above } else { 0 });")], "0\n"),
    # E0717: the help said "add `fn main() { ... }`" (a second function beside `Main`); it now points at `Main`
    "r09_main_capitalised": ("rename it `fn main()`", [("fn Main()", "fn main()")], "56.0\n"),
}
RUN_CODES = {"r06": "E0505", "r07": "E0507", "r08": "E0715", "r09": "E0717"}


def test_every_run_time_mistake_has_a_fix_and_its_code_is_new() -> None:
    mine = [p for p in RUN_DIR.glob("*.tile") if p.stem[:3] in RUN_CODES]
    assert sorted(p.stem for p in mine) == sorted(RUN_FIXES)
    for p in mine:
        assert p.read_text(encoding="utf-8").startswith(f"// a user's mistake at run time: {RUN_CODES[p.stem[:3]]}\n")
    earlier = {p.read_text(encoding="utf-8").split()[4] for p in [*DIR.glob("*.tile"), *RUN_DIR.glob("*.tile")]
               if p.stem[:3] not in RUN_CODES}
    assert not set(RUN_CODES.values()) & earlier


@pytest.mark.parametrize("name", sorted(RUN_FIXES))
def test_a_run_time_mistake_is_refused_with_a_help_that_leads_to_a_working_program(name: str, tmp_path: Path) -> None:
    hint, edits, printed = RUN_FIXES[name]
    fixed = run_time_fix(RUN_DIR / f"{name}.tile", RUN_CODES[name[:3]], hint, edits, tmp_path)
    assert not driver.check(fixed, deny_warnings=True).diagnostics
    assert run_program(fixed)[1] == printed


def test_no_main_without_a_near_miss_asks_for_one(tmp_path: Path) -> None:
    import io

    import tilelang.run as run
    from tilelang.diagnostics.model import TileError

    f = tmp_path / "lib.tile"
    f.write_text("fn helper() -> i32 {\n    1\n}\n", encoding="utf-8")
    with pytest.raises(TileError) as info:
        run.execute(str(f), "cpu", out=io.StringIO())
    d = info.value.diagnostics[0]
    assert d.code == "E0717" and list(d.help) == ["add `fn main() { ... }`: `tilec run` starts there"]
