"""The two highlighters agree with the language: every keyword of
`grammar/tile.lark` is a keyword for the Pygments lexer and for the VS Code
TextMate grammar, their word lists agree, builtins cover the signature
table, and the committed tmLanguage JSON is what the YAML compiles to."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pygments.token import Error, Keyword, Name, Number, String, Token

from tilelang import highlight
from tilelang.highlight import TileLexer

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
GRAMMAR_JSON = VSCODE / "syntaxes" / "tile.tmLanguage.json"


def lark_keywords() -> set[str]:
    """Word-like literals of the Lark grammar (`"fn"`, `KERNEL: "kernel"`)."""
    text = (REPO / "grammar" / "tile.lark").read_text(encoding="utf-8")
    text = re.sub(r"//[^\n]*", "", text)
    return set(re.findall(r'"([a-z][a-z0-9_]*)"', text))


def test_lark_grammar_has_the_brief_keywords() -> None:
    # Guards the extraction below: it must find the keywords, not nothing.
    assert {"kernel", "fn", "let", "mut", "for", "while", "unsafe", "graph"} <= lark_keywords()


# ---------------------------------------------------------------- Pygments


def tokens(text: str) -> list[tuple[object, str]]:
    return [(t, v) for t, v in TileLexer().get_tokens(text) if v.strip()]


def token_of(text: str, word: str) -> object:
    found = [t for t, v in tokens(text) if v == word]
    assert found, f"`{word}` not lexed as one token in {text!r}"
    return found[0]


@pytest.mark.parametrize("kw", sorted(lark_keywords()))
def test_pygments_lexes_every_grammar_keyword_as_a_keyword(kw: str) -> None:
    assert token_of(f"{kw} ", kw) in Keyword
    assert kw in highlight.KEYWORDS


def test_pygments_lexes_the_first_program_without_errors() -> None:
    text = (REPO / "examples" / "add.tile").read_text(encoding="utf-8")
    toks = tokens(text)
    assert not [v for t, v in toks if t in Error]
    kinds = {v: t for t, v in toks}
    assert kinds["kernel"] in Keyword and kinds["f32"] in Keyword.Type
    assert kinds["Tensor"] in Name.Builtin and kinds["randn"] in Name.Builtin
    assert kinds["load_like"] in Name.Function
    assert kinds["1024"] in Number.Integer


@pytest.mark.parametrize(
    ("text", "word", "kind"),
    [
        ("let a = 2.0f16;", "2.0f16", Number.Float),
        ("let a = 3.5bf16;", "3.5bf16", Number.Float),
        ("let a = 1e-4;", "1e-4", Number.Float),
        ("let a = 1u32;", "1u32", Number.Integer),
        ("let a = 1_000_000;", "1_000_000", Number.Integer),
        ("let a = 0xFF_u8;", "0xFF_u8", Number.Hex),
        ("for i in 0..n {}", "0", Number.Integer),
        ('print("a\\n");', "\\n", String.Escape),
        ("#[hints(num_warps = 8)]", "hints", Name.Decorator),
        ("kernel fn f<const B: i32>() {}", "B", Name.Constant),
        ("kernel fn f<const B: i32>() {}", "f", Name.Function),
        ("let t = block_id(0);", "block_id", Name.Builtin),
        ("let t = x.partition([4]);", "partition", Name.Function),
    ],
)
def test_pygments_token_kinds(text: str, word: str, kind: object) -> None:
    assert token_of(text, word) in kind


def test_pygments_block_comments_nest() -> None:
    toks = tokens("/* a /* b */ let */ let x = 1;")
    comment = "".join(v for t, v in toks if t in Token.Comment)
    assert comment.replace(" ", "") == "/*a/*b*/let*/"
    assert [v for t, v in toks if t in Keyword] == ["let"]


def test_pygments_plugin_registration_matches_pyproject() -> None:
    """The lexer is registered for `tile` in pyproject's Pygments entry point
    (so docs and `pygmentize -l tile` find it once installed)."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    if '"pygments.lexers"' not in text:
        pytest.skip("pyproject.toml has no pygments.lexers entry point yet")
    assert re.search(r'tile\s*=\s*"tilelang\.highlight:TileLexer"', text)


def test_pygments_finds_the_lexer_by_name_once_installed() -> None:
    from importlib.metadata import entry_points

    if not any(ep.name == "tile" for ep in entry_points(group="pygments.lexers")):
        pytest.skip("tilec is not installed (no pygments.lexers entry point)")
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename

    assert type(get_lexer_by_name("tile")).__name__ == "TileLexer"
    assert type(get_lexer_for_filename("add.tile")).__name__ == "TileLexer"


def test_pygments_builtins_cover_the_signature_table() -> None:
    from tilelang.intrinsics import signatures

    assert set(signatures.FUNCTIONS) <= set(highlight.BUILTIN_FUNCTIONS)


# ---------------------------------------------------------------- TextMate


def tm_grammar() -> dict:
    return json.loads(GRAMMAR_JSON.read_text(encoding="utf-8"))


def test_tmlanguage_json_is_not_stale() -> None:
    pytest.importorskip("yaml")
    result = subprocess.run(
        [sys.executable, str(VSCODE / "scripts" / "build_grammar.py"), "--check"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


def _tm_rules(node: object) -> list[dict]:
    """Every rule with a `match` in the grammar."""
    out: list[dict] = []
    if isinstance(node, dict):
        if "match" in node:
            out.append(node)
        for value in node.values():
            out.extend(_tm_rules(value))
    elif isinstance(node, list):
        for value in node:
            out.extend(_tm_rules(value))
    return out


def _py_regex(pattern: str) -> re.Pattern[str]:
    # The keyword rules use only syntax that Oniguruma and Python share.
    return re.compile(pattern)


def tm_scopes_of_word(word: str) -> list[str]:
    """The scopes TextMate rules give `word` when it stands alone: the rule's
    name, or the name of the capture group that matched exactly the word."""
    scopes = []
    for rule in _tm_rules(tm_grammar()["repository"]["keywords"]):
        m = _py_regex(rule["match"]).fullmatch(word)
        if m is None:
            continue
        if "name" in rule:
            scopes.append(rule["name"])
        for group, capture in rule.get("captures", {}).items():
            if m.group(int(group)) == word:
                scopes.append(capture["name"])
    return scopes


KEYWORD_SCOPES = ("keyword.", "storage.", "constant.language.")


@pytest.mark.parametrize("kw", sorted(lark_keywords()))
def test_textmate_highlights_every_grammar_keyword_as_a_keyword(kw: str) -> None:
    scopes = tm_scopes_of_word(kw)
    assert scopes, f"no keyword rule of the TextMate grammar matches `{kw}`"
    assert all(s.startswith(KEYWORD_SCOPES) and s.endswith(".tile") for s in scopes), scopes


def _alternation(repo_key: str, scope: str) -> set[str]:
    for rule in _tm_rules(tm_grammar()["repository"][repo_key]):
        if rule.get("name") == scope:
            m = re.search(r"\(([a-z0-9_|A-Z]+)\)", rule["match"])
            assert m, rule["match"]
            return set(m.group(1).split("|"))
    raise AssertionError(f"no rule named {scope}")


def test_textmate_and_pygments_word_lists_agree() -> None:
    assert _alternation("types", "support.type.primitive.tile") == set(highlight.DTYPES)
    assert _alternation("types", "support.type.tile") == set(highlight.BUILTIN_TYPES)
    assert _alternation("calls", "support.function.builtin.tile") == set(highlight.BUILTIN_FUNCTIONS)
    tm_keywords = {kw for kw in highlight.KEYWORDS if tm_scopes_of_word(kw)}
    assert tm_keywords == set(highlight.KEYWORDS)


def test_package_json_contributes_the_language() -> None:
    pkg = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    (lang,) = pkg["contributes"]["languages"]
    assert lang["id"] == "tile" and lang["extensions"] == [".tile"]
    (grammar,) = pkg["contributes"]["grammars"]
    assert grammar["scopeName"] == tm_grammar()["scopeName"] == "source.tile"
    assert (VSCODE / grammar["path"]).resolve() == GRAMMAR_JSON.resolve()
    assert "tile.server.path" in pkg["contributes"]["configuration"]["properties"]
    config = json.loads((VSCODE / "language-configuration.json").read_text(encoding="utf-8"))
    assert config["comments"] == {"lineComment": "//", "blockComment": ["/*", "*/"]}
    assert ["<", ">"] in config["brackets"]
    snippets = json.loads((VSCODE / "snippets" / "tile.code-snippets").read_text(encoding="utf-8"))
    assert {"kernel", "main", "launch", "gemm"} <= set(snippets)


# ---------------------------------------------------------------- snippets


def _expand(body: list[str]) -> str:
    """A snippet body with every placeholder replaced by its default."""
    text = "\n".join(body)
    for _ in range(3):  # placeholders nest at most this deep
        text = re.sub(r"\$\{\d+:([^${}]*)\}", r"\1", text)
    return re.sub(r"\$\{?\d+\}?", "", text)


HOST_PRELUDE = """\
kernel fn add(z: &mut Tensor<f32, [1024]>, x: &Tensor<f32, [?]>) { z.store(x.load_like(z)); }
fn main() {
    let n = 4096;
    let x = zeros::<f32>([n]);
    let mut z = zeros::<f32>([n]);
"""


@pytest.mark.parametrize("name", ["kernel", "gemm", "main", "launch", "launch-async", "for",
                                  "let-mut", "unsafe", "hints", "requires", "fn"])
def test_snippets_expand_to_tile_that_parses(name: str) -> None:
    from tilelang import driver

    snippets = json.loads((VSCODE / "snippets" / "tile.code-snippets").read_text(encoding="utf-8"))
    text = _expand(snippets[name]["body"])
    if name in ("kernel", "gemm", "main", "fn"):
        program = text
    elif name == "hints":
        program = text + "\nkernel fn k() {}\n"
    elif name == "requires":  # a kernel with the names the default condition reads: clean
        program = (text + "\nkernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, n: i32) {\n"
                   "    z.store(x.load_like(z));\n}\n")
    else:
        program = HOST_PRELUDE + "    let value = 1;\n    " + text.replace("\n", "\n    ") + "\n}\n"
    result = driver.check(program, name=f"{name}.tile")
    # a snippet is a scaffold: its unused names may warn (W0xxx), not fail
    codes = [d.code for d in result.diagnostics if d.severity.value == "error"]
    assert not [c for c in codes if c.startswith("E00")], (program, result.diagnostics)
    if name in ("kernel", "gemm", "main", "launch", "launch-async", "requires"):
        # These are complete programs or statements: they must check cleanly.
        assert codes == [], (program, result.diagnostics)
