"""`tilec`, the REPL and the language server as a demanding new user drives
them (huser24, 2026-12-07), on small programs of the user's own: a function
called both from a kernel and from `main` had each of its errors reported
twice (checked in both contexts), by `tilec check`, `run`, the Python API and
the language server alike; `tilec emit -` read no stdin where `check -` and
`run -` do; go to definition and hover on a `use "util.tile";` string
answered nothing; a syntax error in a used file (`pub fn twice`) was followed
by "cannot find function `twice`" at each use; the REPL's `:help` of a kernel
with `#[hints(num_warps = 4)]` showed `#[hints(num_warps`; `tilec tune
script.py` called a script's own exception an internal compiler error; the
REPL's `:type (1 +` was told of a `}` it never typed, `:type let y = 2;`
answered `None`; `tilec check a.tile b.tile` stopped at an unreadable
`a.tile`; the REPL showed a function named without a call as its whole syntax
tree; hover and signature help showed no doc comment, and neither they nor
completion knew what a `use` brought in; `tilec emit --stage ast --kernel k`
printed the whole file; after `use good;`, `twice(..)` was told of `tiles`, not
`good::twice`, and `use "good";` not of `good.tile` (wrong programs `k01`,
`k02`); `:load "my dir/k.tile"` kept the quotes; words after `tilec run FILE`,
a misspelt command or option value got no help. Also what held and stays
held: a syntax error on the last line, tabs and CRLF line endings under the
underline, a non-UTF-8 file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from clirunner import invoke
from userprog import wrong_suite

from tilelang.lsp import analysis as A

# `twice` is device code for `scale` and host code for `main`: its error is one error
BOTH = """\
fn twice(x: f32) -> f32 {
    let q = undefined_name;
    x * 2.0 + true
}

kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * twice(3.0));
}

fn main() {
    let x = zeros::<f32>([8]);
    let mut z = zeros::<f32>([8]);
    scale(z.partition([4]), &x).sync();
    print(twice(2.0));
}
"""


def test_an_error_of_a_function_called_from_a_kernel_and_from_main_is_reported_once() -> None:
    r = invoke("check", "-", "--error-format", "short", input=BOTH)
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [
        "<stdin>:2:13: error[E0101]: cannot find value `undefined_name` in this scope",
        "<stdin>:3:13: error[E0201]: mismatched dtypes: `f32` and `bool`",
    ]
    r = invoke("check", "-", input=BOTH)
    assert "aborting due to 2 previous errors" in r.stderr


def test_the_error_of_a_used_module_is_shown_once_in_the_editor(tmp_path: Path) -> None:
    (tmp_path / "util.tile").write_text(BOTH.split("fn main")[0], encoding="utf-8")
    main = ('use "util.tile";\n\nfn main() {\n    let x = zeros::<f32>([8]);\n    let mut z = zeros::<f32>([8]);\n'
            '    scale(z.partition([4]), &x).sync();\n    let b: i32 = true;\n    print(twice(1.0));\n}\n')
    an = A.analyze(main, str(tmp_path / "main.tile"))
    where = [(Path(an.sources.get(d.primary_span.file).name).name, d.code) for d in an.diagnostics
             if d.primary_span is not None]
    assert sorted(where) == [("main.tile", "E0203"), ("util.tile", "E0101"), ("util.tile", "E0201")]


def test_a_used_file_s_syntax_error_is_not_followed_by_its_names_not_found(tmp_path: Path) -> None:
    # a Rust habit: `pub fn` (E0021) cut `twice` off, and each use of it was E0102 "cannot find
    # function `twice`" with "a function with a similar name exists: `tiles`"
    (tmp_path / "util.tile").write_text("pub fn twice(x: f32) -> f32 {\n    x * 2.0\n}\n", encoding="utf-8")
    (tmp_path / "main.tile").write_text('use "util.tile";\n\nfn main() {\n    let a: f32 = twice(1.0);\n'
                                        '    let b: i32 = true;\n    print(a);\n}\n', encoding="utf-8")
    r = invoke("check", str(tmp_path / "main.tile"), "--error-format", "short")
    assert r.exit_code == 1
    assert [ln.split(": ", 1)[1] for ln in r.stderr.splitlines()] == [
        "error[E0021]: expected item, found `pub`", "error[E0203]: mismatched types"], r.stderr


def test_go_to_definition_and_hover_on_a_use_file_string_reach_the_file(tmp_path: Path) -> None:
    # as on `use std::nn::softmax;`'s `nn`: the editor's F12 on `"util.tile"` opens it (a document
    # link did already, but definition and hover answered nothing), even while the file has errors
    (tmp_path / "util.tile").write_text("fn twice(x: f32) -> f32 {\n    x * 2.0\n}\nfn broken( {\n",
                                        encoding="utf-8")
    main = 'use "util.tile";\nuse "missing.tile";\n\nfn main() {\n    print(twice(1.0));\n}\n'
    an = A.analyze(main, str(tmp_path / "main.tile"))
    assert {d.code for d in an.diagnostics} >= {"E0004", "E0109"}
    span = A.definition(an, main.index("util"))
    assert span is not None and (span.start, span.end) == (0, 0)
    assert Path(an.sources.get(span.file).name).resolve() == (tmp_path / "util.tile").resolve()
    h = A.hover(an, main.index("util"))
    assert h is not None and 'mod "util.tile"' in h.markdown and "util.tile`" in h.markdown
    assert A.definition(an, main.index("missing")) is None and A.hover(an, main.index("missing")) is None
    span = A.definition(an, main.index("twice(1"))
    assert span is not None and an.sources.get(span.file).text[span.start:span.end] == "twice"


def test_the_repl_help_on_an_item_shows_its_whole_header_without_comments() -> None:
    from tilelang.repl import ReplSession

    session = ReplSession(device="cpu")
    assert session.feed("#[hints(num_warps = 4)]\nkernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>,\n"
                        "    x: &Tensor<f32, [?]>,   // the input\n    s: f32) {\n"
                        "    z.store(x.load_like(z) * s);\n}").ok
    # it was `#[hints(num_warps`: the header was cut at the first `=`
    assert session.feed(":help scale").stdout == (
        "#[hints(num_warps = 4)]\nkernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>,\n"
        "    x: &Tensor<f32, [?]>,\n    s: f32)\n    defined in this session\n")
    assert session.feed("const N: i32 = 4; // four").ok
    assert session.feed(":help N").stdout == "const N: i32\n    defined in this session\n"
    # its doc comment, as `help()` in Python and the editor's hover show it (`:help` showed the header only)
    assert session.feed("// Doubles it.\nfn twice(x: f32) -> f32 { x * 2.0 }").ok
    assert session.feed(":help twice").stdout == "fn twice(x: f32) -> f32\n    Doubles it.\n    defined in this session\n"


def test_emit_reads_the_program_from_stdin_as_check_and_run_do() -> None:
    src = Path(__file__).parents[2] / "examples" / "add.tile"
    r = invoke("emit", "-", "--stage", "ir", input=src.read_text(encoding="utf-8"))
    assert r.exit_code == 0, r.stderr
    assert "add" in r.stdout and "couldn't read" not in r.stderr
    r = invoke("emit", "-", "--stage", "ir", input="fn main() {\n    let x: i32 = 1.5;\n}\n")
    assert r.exit_code == 1 and "--> <stdin>:2:18" in r.stderr and r.stdout == ""
    r = invoke("emit", "--help")
    assert "(`-`: stdin)" in r.stdout


def test_a_syntax_error_on_the_last_line_without_a_newline_is_underlined_there() -> None:
    r = invoke("check", "-", input="fn main() {\n    print(1);\n}\nfn f() { let x = ; }")
    assert r.exit_code == 1
    assert " --> <stdin>:4:18" in r.stderr
    assert "4 | fn f() { let x = ; }\n  |                  ^ expected expression" in r.stderr


def test_tabs_and_crlf_keep_the_underline_under_the_token() -> None:
    r = invoke("check", "-", input="fn main() {\n\t\tlet y = 1;\tlet x: i32 = true;\n\tprint(x + y);\n}\n")
    lines = r.stderr.splitlines()
    code = next(ln for ln in lines if ln.startswith("2 |"))
    mark = lines[lines.index(code) + 1]
    assert "\t" not in code and code.index("true") == mark.index("^^^^") and code.index("i32") == mark.index("---")
    r = invoke("check", "-", input="fn main() {\r\n    let x: i32 = 1.5;\r\n    print(x);\r\n}\r\n")
    assert " --> <stdin>:2:18" in r.stderr and "\r" not in r.stderr


def test_a_file_that_is_not_utf8_and_arguments_for_main_are_refused_plainly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tile"
    bad.write_bytes(b'fn main() {\n    print("\xff");\n}\n')
    for cmd in (["check"], ["run"], ["emit", "--stage", "ast"]):
        r = invoke(*cmd[:1], str(bad), *cmd[1:])
        assert r.exit_code == 1 and "not valid UTF-8 (byte 0xff at line 2, column 12)" in r.stderr, (cmd, r.stderr)
    ok = tmp_path / "ok.tile"
    ok.write_text("fn main() {\n    print(3);\n}\n", encoding="utf-8")
    r = invoke("run", str(ok), "--device", "cpu", "--", "a", "b")
    assert r.exit_code == 2 and r.stdout == "" and "a b\n" in r.stderr and "unrecognized arguments:" in r.stderr
    assert "help: `tilec run` calls `fn main()`, which takes no arguments" in r.stderr
    r = invoke("--color", "never", "run", str(ok), str(ok))
    assert r.exit_code == 2 and "help: `tilec run` runs one program" in r.stderr
    r = invoke("check", str(ok), "run")  # a file named `run`: no word about `main`
    assert r.exit_code == 1 and "couldn't read `run`" in r.stderr and "main" not in r.stderr


def test_tune_of_a_script_that_fails_is_the_script_s_error_not_an_internal_one(tmp_path: Path) -> None:
    # `tilec tune script.py` reported a script's own exception, and a missing script, as "internal compiler
    # error ... a bug in tilec" (status 101); and printed "0 tuning records made:" after a failed run
    import sys

    argv = list(sys.argv)
    bad = tmp_path / "bad.py"
    bad.write_text('print("before")\nraise ValueError("boom")\n', encoding="utf-8")
    r = invoke("tune", str(bad))
    assert r.exit_code == 3 and r.stdout == "before\n", r.output
    assert r.stderr.startswith("Traceback (most recent call last):\n") and "bad.py\", line 2" in r.stderr
    assert r.stderr.rstrip().endswith("ValueError: boom") and "internal compiler error" not in r.stderr
    assert sys.argv == argv  # the script's `sys.argv` is put back
    (tmp_path / "d.py").mkdir()
    for missing, why in ((tmp_path / "nosuch.py", "No such file"), (tmp_path / "d.py", "it is a directory")):
        r = invoke("tune", str(missing))
        assert r.exit_code == 1 and r.stderr.startswith(f"error: couldn't read `{missing}`: {why}"), r.stderr
    ok = tmp_path / "ok.tile"
    ok.write_text("fn main() {\n    print(3);\n}\n", encoding="utf-8")
    r = invoke("tune", str(ok), "--device", "cpu")
    assert r.exit_code == 0 and r.stdout == "3\n0 tuning records made: the program launched no `#[autotune]` kernel\n"


def test_a_misspelt_command_help_or_version_and_doc_in_capitals() -> None:
    for word, guess in (("chek", "`tilec check`"), ("emitt", "`tilec emit`"), ("help", "`tilec --help`"),
                        ("version", "`tilec --version`")):
        r = invoke(word)
        assert r.exit_code == 2 and f"help: did you mean {guess}?" in r.stderr, r.stderr
    assert "did you mean" not in invoke("xyz").stderr
    # an option's value: argparse's "invalid choice" and no more
    for args, guess in ((["run", "f.tile", "--device", "cuda"], "`--device gpu`"),
                        (["emit", "f.tile", "--stage", "llvm-ir"], "`--stage llvm`"),
                        (["check", "f.tile", "--error-format", "jsn"], "`--error-format json`")):
        r = invoke(*args)
        assert r.exit_code == 2 and f"help: did you mean {guess}?" in r.stderr, r.stderr
    # `tilec explain e0303` is E0303's page; `tilec doc LOAD_LIKE` was "no entry"
    r = invoke("doc", "LOAD_LIKE")
    assert r.exit_code == 0 and r.stdout.startswith("### `load_like`")
    assert invoke("doc", "Exp").stdout.startswith("### `exp`")


def test_a_turbofish_on_a_function_without_generics_says_to_remove_it() -> None:
    # was "takes 0 generic arguments but 1 were supplied", help "give 0 generic arguments, or leave them out"
    r = invoke("check", "-", "--error-format", "json", input=(
        "fn h() {\n}\nfn g<const N: i32>(x: i32) -> i32 {\n    x + N\n}\n"
        "fn main() {\n    h::<4>();\n    print(g::<1, 2>(3));\n}\n"))
    import json

    got = [(d["message"], d["help"]) for d in map(json.loads, r.stderr.splitlines())]
    assert got == [("function `h` takes no generic arguments", ["remove the `::<..>`: `h()`"]),
                   ("function `g` takes 1 generic argument but 2 were supplied",
                    ["give 1 generic argument, or leave them out to infer them"])]


def test_the_repl_type_of_an_unfinished_expression_or_a_statement() -> None:
    from tilelang.repl import ReplSession

    session = ReplSession(device="cpu")
    # was "mismatched closing delimiter: `}`" (the session's own brace) and, for `1 +`, an error with no location
    out = session.feed(":type (1 +")
    assert not out.ok and "unclosed delimiter `(`" in out.stderr and "`}`" not in out.stderr
    out = session.feed(":type 1 +")
    assert not out.ok and "error[E0017]" in out.stderr and " --> <repl-" in out.stderr
    # was "let y = 2;: None"
    out = session.feed(":type let y = 2;")
    assert not out.ok and out.stderr.startswith("error: `:type` takes one expression, and `let y = 2;` is not one")
    assert session.feed(":type 1 + 2").stdout == "1 + 2: i32\n"


def test_check_of_several_files_goes_on_past_one_it_cannot_read(tmp_path: Path) -> None:
    # `tilec check missing.tile bad.tile`: it stopped at the first, and `bad.tile`'s error was never shown
    bad = tmp_path / "bad.tile"
    bad.write_text("fn main() {\n    let x: i32 = 1.5;\n}\n", encoding="utf-8")
    ok = tmp_path / "ok.tile"
    ok.write_text("fn main() {\n}\n", encoding="utf-8")
    r = invoke("check", str(tmp_path / "missing.tile"), str(bad), str(ok), "--error-format", "short")
    assert r.exit_code == 1
    assert r.stderr.splitlines() == [f"error: couldn't read `{tmp_path / 'missing.tile'}`: No such file or directory",
                                     f"{bad}:2:18: error[E0203]: mismatched types"]
    r = invoke("check", str(tmp_path / "missing.tile"), str(ok))
    assert r.exit_code == 1 and "couldn't read" in r.stderr


def test_the_repl_shows_a_function_named_without_a_call_in_words() -> None:
    from tilelang.repl import ReplSession

    session = ReplSession(device="cpu")
    assert session.feed("fn twice(x: f32) -> f32 { x * 2.0 }").ok
    # was `fn(f32) -> f32 = FnRef(decl=FnDecl(name=Ident(name='twice', span=Span(...` and on, the syntax tree
    assert session.feed("twice").stdout == "fn(f32) -> f32 = the function `twice` (call it: `twice(..)`; `:help twice` shows it)\n"
    assert session.feed("fn twice(x: f32) -> f32 { x * 3.0 }").ok  # redefined: its hidden name is not shown
    assert "the function `twice` (" in session.feed("twice").stdout
    assert session.feed("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load()); }").ok
    assert session.feed("k").stdout.endswith("= the kernel `k` (a call builds a launch: `k(z.partition([..]), ..).sync()`; `:help k` shows it)\n")
    session.feed("let mut z = zeros::<f32>([4]);\nlet g = graph { k(z.partition([4])); };\ng.replay();")
    assert session.feed("g").stdout == "Graph = 1 operation, replayed 1 time\n"  # was "1 times"


def test_hover_and_signature_help_show_a_function_s_doc_comment_and_reach_used_files(tmp_path: Path) -> None:
    # hover showed the header only (`help()` in Python shows the `//` lines above it), a `/* */` or `//`
    # comment inside the header stayed in it (`(x: &Tensor<f32, [?]>,)`), and signature help knew only the
    # document's own functions, not those a `use "util.tile";` brought in
    (tmp_path / "util.tile").write_text(
        "// Doubles it.\n#[allow(unused_variables)]\nfn twice(x: f32,   /* the value */\n) -> f32 {\n"
        "    x * 2.0\n}\n", encoding="utf-8")
    main = 'use "util.tile";\n\n// Runs it.\nfn main() {\n    print(twice(1.0));\n}\n'
    an = A.analyze(main, str(tmp_path / "main.tile"))
    h = A.hover(an, main.index("twice("))
    assert h is not None and h.markdown == "```tile\nfn twice(x: f32) -> f32\n```\n\nDoubles it."
    sig = A.signature_help(an, main.index("twice(") + 6)
    assert sig is not None and sig.label == "fn twice(x: f32) -> f32" and sig.doc == "Doubles it."
    h = A.hover(an, main.index("main("))
    assert h is not None and h.markdown.endswith("\n\nRuns it.")
    text = "// How many columns.\nconst COLS: i32 = 128;\nfn main() {\n    print(COLS);\n}\n"
    an = A.analyze(text, str(tmp_path / "c.tile"))
    h = A.hover(an, text.index("COLS);"))  # a `const`'s doc comment too
    assert h is not None and h.markdown == "```tile\nconst COLS: i32 = 128\n```\n\nHow many columns."


def test_profile_of_a_run_without_launches_says_so(tmp_path: Path) -> None:
    ok = tmp_path / "ok.tile"
    ok.write_text("fn main() {\n    print(3);\n}\n", encoding="utf-8")
    r = invoke("run", str(ok), "--device", "cpu", "--profile")
    # was "tile profile: 0 launches" over an empty table's header and rule
    assert r.exit_code == 0 and r.stdout == "3\n" and r.stderr == "tile profile: no kernel launches\n", r.stderr


def test_emit_ast_of_one_kernel_and_an_arch_spelt_otherwise() -> None:
    add = str(Path(__file__).parents[2] / "examples" / "add.tile")
    # `--kernel` was ignored at `--stage ast` (the whole file, even for a kernel it does not have)
    r = invoke("emit", add, "--stage", "ast", "--kernel", "add")
    assert r.exit_code == 0 and r.stdout.startswith("FnDecl name=`add` is_kernel") and "`main`" not in r.stdout
    r = invoke("emit", add, "--stage", "ast", "--kernel", "nosuch")
    assert r.exit_code == 1 and r.stdout == "" and "no kernel named `nosuch`" in r.stderr and "(kernels: `add`)" in r.stderr
    for arch, guess in (("SM_90", "sm_90"), ("sm90a", "sm_90a"), ("80", "sm_80")):
        r = invoke("emit", add, "--stage", "ptx", "--arch", arch)
        assert r.exit_code == 2 and f"help: did you mean `--arch {guess}`?" in r.stderr, r.stderr


def test_completion_offers_what_a_use_brought_in(tmp_path: Path) -> None:
    # a `use "util.tile";` function was not offered at all, and `use std::nn::softmax;` was a "variable"
    (tmp_path / "util.tile").write_text("// Doubles it.\nfn twice(x: f32) -> f32 {\n    x * 2.0\n}\n"
                                        "const SCALE: f32 = 3.0;\n", encoding="utf-8")
    main = 'use std::nn::softmax;\nuse "util.tile";\n\nfn main() {\n    tw\n}\n'
    an = A.analyze(main, str(tmp_path / "main.tile"))
    got = {c.label: c for c in A.completions(an, main.index("tw\n") + 2)}
    assert got["twice"].kind == "fn" and got["twice"].detail == "fn twice(x: f32) -> f32"
    assert got["twice"].doc == "Doubles it." and got["SCALE"].kind == "constant"
    assert got["softmax"].kind == "fn" and got["softmax"].detail.startswith("fn softmax<")


def test_a_module_imported_whole_and_a_use_without_its_extension(tmp_path: Path) -> None:
    import json

    (tmp_path / "good.tile").write_text("fn twice(x: f32) -> f32 {\n    x * 2.0\n}\nconst SCALE: f32 = 3.0;\n",
                                        encoding="utf-8")
    main = tmp_path / "main.tile"

    def helps(text: str) -> list[str]:
        main.write_text(text, encoding="utf-8")
        r = invoke("check", str(main), "--error-format", "json")
        return [h for d in map(json.loads, r.stderr.splitlines()) for h in d["help"]]

    # `use good;` imports the module: `twice` was "a function with a similar name exists: `tiles`"
    assert helps("use good;\nfn main() {\n    print(twice(1.0), SCALE);\n}\n") == [
        "`twice` is in the module `good` that a `use` imports: call `good::twice(..)`, or import the function "
        "itself with `use good::twice;`",
        "`SCALE` is in the module `good` that a `use` imports: write `good::SCALE`, or import it itself with "
        "`use good::SCALE;`"]
    assert helps('use "good";\nfn main() {\n}\n') == ['the file has its extension: `use "good.tile";`']
    main.write_text("use good;\nfn main() {\n    print(good::twice(1.0), good::SCALE);\n}\n", encoding="utf-8")
    r = invoke("run", str(main), "--device", "cpu")
    assert r.exit_code == 0 and r.stdout == "2.0 3.0\n"


def test_the_repl_loads_a_quoted_path(tmp_path: Path) -> None:
    from tilelang.repl import ReplSession

    d = tmp_path / "my dir"
    d.mkdir()
    (d / "k.tile").write_text("fn three() -> i32 {\n    3\n}\n", encoding="utf-8")
    session = ReplSession(device="cpu")
    # `:load "my dir/k.tile"` was "couldn't read `\"..\"`": the quotes were part of the name
    out = session.feed(f':load "{d / "k.tile"}"')
    assert out.ok and out.stdout.startswith("loaded 1 item from "), out.stderr
    assert session.feed("three()").stdout == "i32 = 3\n"


# `wrong/k*.tile`: the first error's help, and the fix it gives
K_FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "k01_module_item_without_its_path": (
        "`softmax` is in the module `nn` that a `use` imports: call `nn::softmax(..)`",
        [("    y.store(softmax(x.load_like(y)));", "    y.store(nn::softmax(x.load_like(y)));")]),
    "k02_turbofish_on_a_function_without_generics": (
        "remove the `::<..>`", [("clamp01::<f32>(-0.5)", "clamp01(-0.5)")]),
}


def _k01(t: dict[str, np.ndarray], out: str) -> None:
    x = np.arange(48, dtype=np.float32).reshape(6, 8) * 0.25
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(t["b"], e / e.sum(1, keepdims=True), rtol=1e-5)
    assert abs(float(out) - 6.0) < 1e-4


def _k02(t: dict[str, np.ndarray], out: str) -> None:
    assert out == "1.0 0.0 0.25\n"


(test_every_k_mistake_has_a_fix, test_the_k_help_leads_to_a_working_program,
 test_the_editor_shows_the_k_first_error) = wrong_suite(
    "k0[12]_*.tile", K_FIXES, {"k01_module_item_without_its_path": _k01,
                         "k02_turbofish_on_a_function_without_generics": _k02})


def test_cache_list_of_a_cache_path_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "cache"
    f.write_text("", encoding="utf-8")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(f))
    r = invoke("cache", "list")
    # was "0 entries, 0.0 KiB", as if caching worked
    assert r.exit_code == 1 and r.stdout == "" and "is a file, not a directory: nothing is cached" in r.stderr
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "c"))
    r = invoke("cache", "list")
    assert r.exit_code == 0 and "0 entries" in r.stdout
