"""Error codes of the `syntax` range, E0001-E0099 (see `codes/__init__.py`).

Emitted only by `tilelang.syntax` (the lexical pre-pass, the parser and the
AST builder). Each has `explain/<CODE>.md`.
"""

from tilelang.diagnostics.codes import define

MISSING_SEMICOLON = define("E0001", "missing-semicolon", "a statement or item is missing its `;`")
UNEXPECTED_TOKEN = define("E0002", "unexpected-token", "a token that cannot appear at this place")
EXPECTED_EXPRESSION = define("E0003", "expected-expression", "an expression was expected")
UNCLOSED_DELIMITER = define("E0004", "unclosed-delimiter", "a `(`, `[` or `{` is never closed")
MISMATCHED_DELIMITER = define(
    "E0005", "mismatched-delimiter", "a closing delimiter does not match the one it closes"
)
UNEXPECTED_CLOSER = define(
    "E0006", "unexpected-closing-delimiter", "a closing delimiter with nothing to close"
)
UNKNOWN_CHARACTER = define("E0007", "unknown-character", "a character that is not part of Tile")
UNTERMINATED_STRING = define("E0008", "unterminated-string", "a string literal without its closing `\"`")
UNTERMINATED_COMMENT = define(
    "E0009", "unterminated-block-comment", "a `/*` comment without its closing `*/`"
)
INVALID_SUFFIX = define("E0010", "invalid-literal-suffix", "a number literal with an unknown type suffix")
CHAINED_COMPARISON = define(
    "E0011", "chained-comparison", "comparison operators used as in `a < b < c`"
)
EXPECTED_PATTERN = define("E0012", "expected-pattern", "a `let` or `for` without a name to bind")
KERNEL_WITHOUT_FN = define("E0013", "kernel-without-fn", "`kernel` not followed by `fn`")
KEYWORD_AS_NAME = define("E0014", "keyword-as-name", "a reserved word used as a name")
ELSE_WITHOUT_IF = define("E0015", "else-without-if", "an `else` that follows no `if`")
EXPECTED_TYPE = define("E0016", "expected-type", "a type was expected, e.g. after `:` or `->`")
UNEXPECTED_EOF = define("E0017", "unexpected-end-of-file", "the file ends in the middle of a construct")
INVALID_ESCAPE = define("E0018", "invalid-escape", "an unknown escape sequence in a string literal")
INVALID_NUMBER = define("E0019", "invalid-number-literal", "a malformed number literal")
EXPECTED_IDENTIFIER = define("E0020", "expected-identifier", "a name was expected")
EXPECTED_ITEM = define(
    "E0021", "expected-item", "something other than `fn`, `kernel fn`, `const` or `use` at top level"
)
UNDERSCORE_EXPR = define("E0022", "underscore-in-expression", "`_` used as a value")
NESTED_TOO_DEEPLY = define(
    "E0023", "nested-too-deeply", "an item whose syntax tree is deeper than the nesting limit"
)
TEXT_DIRECTION_CODEPOINT = define(
    "E0024", "text-direction-codepoint",
    "a Unicode text-direction control character in a comment or string literal",
)
