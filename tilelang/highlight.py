"""Syntax highlighting for Tile: a Pygments `TileLexer`.

The REPL (`PygmentsLexer(TileLexer)`), `rich` and the documentation tools
(through the `pygments.lexers` entry point `tile`) all use this one lexer.
The word lists below are also the reference for the VS Code TextMate grammar
(`editors/vscode/syntaxes/tile.tmLanguage.yaml`): a test checks that both
agree with each other and with the keywords of `grammar/tile.lark`.

Invariants: the lexer is purely lexical (it knows words, not types) and never
raises; any input yields tokens (unknown characters become `Error` tokens).
Only Pygments is imported.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, include, words  # type: ignore[import-untyped]
from pygments.token import (  # type: ignore[import-untyped]
    Comment,
    Error,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = [
    "BUILTIN_FUNCTIONS",
    "BUILTIN_TYPES",
    "CONTROL_KEYWORDS",
    "DECLARATION_KEYWORDS",
    "DTYPES",
    "KEYWORDS",
    "OTHER_KEYWORDS",
    "TileLexer",
]

# -- word lists (shared with the TextMate grammar; kept in sync by a test) ----

CONTROL_KEYWORDS = ("if", "else", "for", "in", "while", "break", "continue", "return")
DECLARATION_KEYWORDS = ("kernel", "fn", "let", "const", "use")
OTHER_KEYWORDS = ("mut", "as", "unsafe", "graph")
CONSTANT_KEYWORDS = ("true", "false")
KEYWORDS = CONTROL_KEYWORDS + DECLARATION_KEYWORDS + OTHER_KEYWORDS + CONSTANT_KEYWORDS

DTYPES = (
    "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    "f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2",
)
BUILTIN_TYPES = ("Tensor", "Tile")

# Free functions of BRIEF §4 and §5 (kernel and host). Methods (`load`,
# `store`, `partition`, `sync` ...) are highlighted as method calls instead.
BUILTIN_FUNCTIONS = (
    # kernel position and tiles
    "block_id", "num_blocks", "last_block", "queue", "tiles", "cluster_gather", "zeros", "ones", "full", "arange",
    # math
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "tanh",
    "sigmoid", "floor", "ceil", "erf", "asin", "acos", "atan", "atan2", "pow", "fma", "maximum", "minimum", "where", "from_bits",
    # reductions and scans
    "sum", "max", "min", "prod", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin",
    # matrix
    "mma", "dot",
    # unsafe escape hatches
    "atomic_add", "atomic_max", "atomic_min", "store_unchecked",
    # host
    "rand", "randn", "load_npy", "assert_close",
    # both
    "print", "assert",
)

_INT_SUFFIX = r"(?:i8|i16|i32|i64|u8|u16|u32|u64)"
_FLOAT_SUFFIX = r"(?:f16|bf16|f32|f64)"
_DEC = r"[0-9][0-9_]*"
_EXP = r"[eE][+-]?[0-9_]*[0-9][0-9_]*"


class TileLexer(RegexLexer):  # type: ignore[misc]
    """Lexer for the Tile GPU kernel language (`.tile` files)."""

    name = "Tile"
    aliases = ["tile"]  # noqa: RUF012 (Pygments' class attributes are lists)
    filenames = ["*.tile"]  # noqa: RUF012
    mimetypes = ["text/x-tile"]  # noqa: RUF012
    url = "https://example.invalid/tile"  # no public home page yet
    version_added = ""

    tokens = {  # noqa: RUF012
        "root": [
            (r"\s+", Whitespace),
            include("comments"),
            # `#[hints(num_warps = 8)]`: the attribute name is a decorator;
            # its arguments are ordinary tokens up to the closing bracket.
            (r"(#!?\[)(\s*)([A-Za-z_]\w*)", bygroups(Name.Decorator, Whitespace, Name.Decorator),
             "attribute"),
            # `kernel fn name` / `fn name`
            (r"(fn)(\s+)([A-Za-z_]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            # `const B: i32` in a generic list, or a module `const NAME`
            (r"(const)(\s+)([A-Za-z_]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Constant)),
            (r"(&)(\s*)(mut)\b", bygroups(Operator, Whitespace, Keyword)),
            include("literals"),
            (words(CONTROL_KEYWORDS, suffix=r"\b"), Keyword),
            (words(DECLARATION_KEYWORDS, suffix=r"\b"), Keyword.Declaration),
            (words(OTHER_KEYWORDS, suffix=r"\b"), Keyword),
            (words(CONSTANT_KEYWORDS, suffix=r"\b"), Keyword.Constant),
            (words(DTYPES, suffix=r"\b"), Keyword.Type),
            (words(BUILTIN_TYPES, suffix=r"\b"), Name.Builtin),
            (r"std\b", Name.Namespace),
            # method call: `.load_like(`, `.partition::<..>(`
            (r"(\.)(\s*)([A-Za-z_]\w*)(?=\s*(?:::\s*<|\())",
             bygroups(Punctuation, Whitespace, Name.Function)),
            (r"(\.)(\s*)([0-9]+|[A-Za-z_]\w*)", bygroups(Punctuation, Whitespace, Name.Attribute)),
            (words(BUILTIN_FUNCTIONS, suffix=r"\b(?=\s*(?:::\s*<|\())"), Name.Builtin),
            (r"[A-Za-z_]\w*(?=\s*::)", Name.Namespace),
            (r"[A-Z][A-Z0-9_]*\b", Name.Constant),
            (r"[A-Za-z_]\w*(?=\s*(?:::\s*<|\())", Name.Function),
            (r"[A-Za-z_]\w*", Name),
            (r"\.\.=?|::|->|=>", Punctuation),
            (r"<<=|>>=|[-+*/%&|^]=|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%&|^!<>=?]", Operator),
            (r"[{}()\[\],;:.]", Punctuation),
            (r".", Error),
        ],
        "comments": [
            (r"//[^\n]*", Comment.Single),
            (r"/\*", Comment.Multiline, "block-comment"),
        ],
        "block-comment": [
            (r"[^*/]+", Comment.Multiline),
            (r"/\*", Comment.Multiline, "#push"),  # block comments nest, as in Rust
            (r"\*/", Comment.Multiline, "#pop"),
            (r"[*/]", Comment.Multiline),
        ],
        "literals": [
            (r'"', String.Double, "string"),
            (r"0[xX][0-9a-fA-F_]+" + _INT_SUFFIX + r"?\b", Number.Hex),
            (r"0[bB][01_]+" + _INT_SUFFIX + r"?\b", Number.Bin),
            (r"0[oO][0-7_]+" + _INT_SUFFIX + r"?\b", Number.Oct),
            # `1.5`, `2.0f16`, `1e-4`, `3.5bf16`; `1..n` is a range, not a float
            (_DEC + r"\.(?![.A-Za-z_])(?:[0-9][0-9_]*)?(?:" + _EXP + r")?" + _FLOAT_SUFFIX + r"?\b",
             Number.Float),
            (_DEC + _EXP + _FLOAT_SUFFIX + r"?\b", Number.Float),
            (_DEC + _FLOAT_SUFFIX + r"\b", Number.Float),
            (_DEC + _INT_SUFFIX + r"?\b", Number.Integer),
        ],
        "string": [
            (r'\\(?:[nrt0\\"\']|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\})', String.Escape),
            (r'[^"\\\n]+', String.Double),
            (r"\\.", String.Double),
            (r'"', String.Double, "#pop"),
            (r"\n", Error, "#pop"),  # unterminated: recover on the next line
        ],
        "attribute": [
            (r"\]", Name.Decorator, "#pop"),
            (r"\s+", Whitespace),
            include("comments"),
            include("literals"),
            (r"[A-Za-z_]\w*", Name.Attribute),
            (r"[(),=]", Punctuation),
            (r"[^\]\s]", Text),
        ],
    }


def highlight_ansi(text: str) -> str:
    """`text` highlighted with ANSI colours for a terminal (used by tools and docs)."""
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.formatters import TerminalFormatter  # type: ignore[import-untyped]

    return str(highlight(text, TileLexer(), TerminalFormatter()))
