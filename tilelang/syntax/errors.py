"""Turning lexical problems and Lark parse failures into syntax diagnostics.

Lark reports a failure as an exception carrying the unexpected token, the
set of terminal names the parser state accepted and the parser state itself
(its value stack holds the tokens and subtrees read so far). This module
reads those and writes one specific diagnostic in people's words: terminal
names become the text a person types (`;`, keyword `fn`, identifier), and a
few states get their own codes (a missing `;`, a chained comparison,
`kernel` without `fn`, ...).

Invariant: no message ever contains a Lark token repr, a rule name or a
terminal name such as `SEMICOLON`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tilelang.diagnostics.codes import syntax as codes
from tilelang.diagnostics.model import Diagnostic
from tilelang.intrinsics.habits import FOREIGN_MODULES, FOREIGN_TYPES
from tilelang.source import Span
from tilelang.syntax.lalr import is_lark
from tilelang.syntax.lexical import LexProblem

if TYPE_CHECKING:
    from lark.exceptions import UnexpectedInput, UnexpectedToken

# A node of Lark's parse tree (a `Tree` or a `Token`); its shape is the grammar's,
# which the type checker cannot see, so it is `Any` here.
PT = Any

# Terminal names whose text is not a fixed string.
_REGEX_NAMES = {
    "NAME": "identifier",
    "NUMBER": "number",
    "TUPLE_INDEX": "tuple index",
    "STRING": "string literal",
    "$END": "end of file",
}

_EXPR_START = {"NAME", "NUMBER", "STRING", "TRUE", "FALSE", "LPAR", "LSQB", "MINUS", "BANG",
               "AMPERSAND", "LBRACE", "IF", "UNSAFE", "GRAPH"}
_TYPE_START = {"NAME", "AMPERSAND", "LPAR"}
_PATTERN_START = {"NAME", "MUT", "UNDERSCORE", "LPAR"}
_ITEM_START = {"HASH", "FN", "KERNEL", "CONST", "USE"}
# Tokens that continue an expression; listed as "an operator" in messages.
_OPERATOR_TEXT = {"||", "&&", "==", "!=", "<", ">", "<=", ">=", "|", "^", "&", "<<", ">>", "+",
                  "-", "*", "/", "%", "as", ".", "..", "..=", "::", "[",
                  "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
# The order in which expected tokens are listed.
_ORDER = [";", ",", ")", "]", "}", ">", "=", "{", "(", "[", ":", "->", "::", "fn", "else"]



def _string_close_help(code: str, at: int) -> str:
    """Where an unterminated string most likely ends: on its own line, a text
    followed by a call's last arguments (`print("total: {}, x.sum());`)."""
    before = code[max(0, at - 40):at].rstrip()
    if before and before[-1] not in "(,=[{;" and not re.search(r"(^|\W)(use|return)$", before):
        # `zeros::<f16>"([64, 32]);`: no string starts after `>` (nor after a name or a `)`): a stray quote
        return (f"a string cannot start after `{before[-1]}`: remove this `\"` if it does not belong, or put a "
                "`,` before it if it starts another argument")
    line = code[at + 1:].split("\n", 1)[0]
    m = re.fullmatch(r"([^\"\\]*?)(, [^\"]*\)\s*;?)\s*", line)
    if m is not None and (any(m.group(1).count(a) != m.group(1).count(b) for a, b in ("[]", "()", "{}"))
                          or re.fullmatch(r"[\w.:]+\([\w\s.,:()+*/%-]*\)|-?\d+(\.\d+)?", m.group(1).strip())):
        # (round 12, fuzz seeds 251, 283: `load(["block_id(0), block_id(1)])`, `[1, "1]), ..`: the "text" is a
        # call or a number, code)
        # `ones::<f32>("[256, 256]);`: the "text" opens a bracket the rest closes: code, a stray quote before it
        return "remove this `\"` if it does not belong (what follows it reads as code), or add a closing `\"`"
    if m is not None and m.group(1):
        return f"add the closing `\"` where the text ends: `\"{m.group(1)}\"{m.group(2)}`"
    return "add a closing `\"`"

class Vocabulary:
    """Display text of the grammar's terminals, read from the Lark parser."""

    def __init__(self, terminals: Iterable[object]) -> None:
        self.text: dict[str, str] = {}
        for t in terminals:
            pattern = t.pattern  # type: ignore[attr-defined]
            name = t.name  # type: ignore[attr-defined]
            if type(pattern).__name__ == "PatternStr":
                self.text[name] = pattern.value

    def is_keyword(self, name: str) -> bool:
        text = self.text.get(name, "")
        return text.isidentifier()

    def expected(self, name: str) -> str:
        if name in _REGEX_NAMES:
            return _REGEX_NAMES[name]
        return f"`{self.text.get(name, name.lower())}`"

    def found(self, tok: PT) -> str:
        if tok.type == "$END":
            return "end of file"
        if tok.type == "STRING":
            return "string literal"
        if self.is_keyword(tok.type):
            return f"keyword `{tok}`"
        return f"`{tok}`"


def _join(items: list[str]) -> str:
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " or " + items[-1]


# NumPy's and Triton's `t[None, :]`, `t[:, None]`, `t[:, 0]`
_SLICING_HELP = ("Tile has no slicing and no `None` axes: `t.reshape([1, n])` adds an axis of size 1, "
                 "`.broadcast([m, n])` stretches it, and a part of a tensor is a smaller tile loaded from it "
                 "(`x.partition([..]).load([..])`)")

# Python's `t[::2]`, `t[1::2]`, `t[0:n:2]`
_STEP_HELP = ("Tile has no slices with a step: make the step an axis, `let t2 = t.reshape([n / k, k]);`, and "
              "keep one column of it (for `t[::k]`, column 0: `sum(where(arange::<i32>(k).reshape([1, k]) == 0, "
              "t2, 0.0), 1)`)")
# Python's `t[a:b]`
_RANGE_HELP = ("a range is written `a..b`: `x[a..b]` takes rows a..b of a host tensor; a tile has no slices "
               "(a part of a tensor is a smaller tile loaded from it: `x.partition([..]).load([..])`)")

# help for the syntax errors that none of `ErrorReporter._hint`'s habits explain
_GENERIC_HELP = {
    codes.EXPECTED_EXPRESSION: "write a value here: a literal, a name, a call, or `(..)`",
    codes.EXPECTED_IDENTIFIER: "write a name here: letters, digits and `_`, not starting with a digit",
    codes.MISSING_SEMICOLON: "end the statement before this one with `;`",
    codes.EXPECTED_ITEM: "a file holds items: `fn`, `kernel fn`, `const` and `use`",
}


class ErrorReporter:
    """Builds diagnostics for one source text (`code`: comments blanked)."""

    def __init__(self, vocab: Vocabulary, file_id: int, code: str, text: str | None = None) -> None:
        self.vocab = vocab
        self.file = file_id
        self.code = code  # comments blanked
        self.text = code if text is None or len(text) != len(code) else text  # as written, comments too

    def span(self, start: int, end: int) -> Span:
        return Span(self.file, start, end)

    def _tok(self, tok: Any, base: int) -> Span:
        return self.span(base + tok.start_pos, base + tok.end_pos)

    def _expected(self, code: str, what: str, found: str, here: Span, last: tuple[Any, int],
                  after: tuple[str, ...], why: str, help: str) -> Diagnostic:
        """`expected <what>, found ..`; when the token before (`last`, with the
        offset its positions count from) is one of `after`, a label on it
        saying `why`."""
        tok, base = last
        d = Diagnostic.error(code, f"expected {what}, found {found}").primary(here, f"expected {what}")
        if is_lark(tok, "Token") and tok.type in after:
            d = d.secondary(self._tok(tok, base), why)
        return d.with_help(help)

    def _prev_end(self, offset: int) -> int:
        """End offset of the token before `offset` (comments are blank)."""
        return _skip_space_back(self.code, offset)

    # ------------------------------------------------------------ lexical
    def lex_problem(self, p: LexProblem) -> Diagnostic:
        eof = self.span(len(self.code), len(self.code))
        match p.kind:
            case "unterminated-string":
                return (Diagnostic.error(codes.UNTERMINATED_STRING, "unterminated string literal")
                        .primary(self.span(p.at, p.at + 1), "this string is never closed")
                        .secondary(eof, "the file ends here")
                        .with_help(_string_close_help(self.text, p.at)))
            case "unterminated-comment":
                return (Diagnostic.error(codes.UNTERMINATED_COMMENT, "unterminated block comment")
                        .primary(self.span(p.at, p.at + 2), "this comment is never closed")
                        .secondary(eof, "the file ends here")
                        .note("block comments nest: each `/*` needs its own `*/`")
                        .with_help("add a closing `*/`"))
            case "unclosed":
                closer = {"(": ")", "[": "]", "{": "}"}[p.char]
                d = (Diagnostic.error(codes.UNCLOSED_DELIMITER,
                                      f"unclosed delimiter `{p.char}`")
                     .primary(self.span(p.at, p.at + 1), "unclosed delimiter"))
                if p.suspect is not None:
                    o, c = p.suspect
                    d = (d.secondary(self.span(o, o + 1),
                                     "this delimiter might not be properly closed...")
                         .secondary(self.span(c, c + 1),
                                    "...as it matches this but it has different indentation"))
                end = p.other if p.other >= 0 else _skip_space_back(self.code, len(self.code))
                where = "the file ends here" if p.other < 0 else "the next item starts here"
                return (d.secondary(self.span(end, end), where)
                        .with_help(f"add the matching `{closer}`"))
            case "mismatched":
                d = (Diagnostic.error(codes.MISMATCHED_DELIMITER, f"mismatched closing delimiter: `{p.char}`")
                     .primary(self.span(p.at, p.at + 1), "mismatched closing delimiter")
                     .secondary(self.span(p.other, p.other + 1), f"the `{p.other_char}` opened here is not closed"))
                opener = {")": "(", "]": "["}.get(p.char)
                line = self.code[self.code.rfind("\n", 0, p.at) + 1:p.at + 1]
                if opener is not None and p.other_char == "{" and line.count(p.char) > line.count(opener):
                    # `f(a, g(b)));`: one `)` too many on its line, inside a block (round 19: the help said to
                    # close the block's `{` first, which fixes nothing)
                    return d.with_help(f"this line closes {line.count(p.char)} `{opener}` but opens "
                                       f"{line.count(opener)}: remove the extra `{p.char}`, or add the "
                                       f"`{opener}` it closes")
                return d.with_help(f"close the `{p.other_char}` with "
                                   f"`{ {'(': ')', '[': ']', '{': '}'}[p.other_char] }` first")
            case "bidi":
                import unicodedata

                name = unicodedata.name(p.char, "")
                where = "string literal" if p.other else "comment"
                return (Diagnostic.error(codes.TEXT_DIRECTION_CODEPOINT,
                                         f"text-direction control U+{ord(p.char):04X} ({name}) in a {where}")
                        .primary(self.span(p.at, p.at + 1),
                                 "this invisible character changes how the text around it is displayed")
                        .note("editors and terminals may show the code in another order than the one it "
                              "is read in, so what you see is not what runs")
                        .with_help("delete it" + (f"; if the string needs it, write it as `\\u{{{ord(p.char):X}}}`"
                                                  if p.other else "")))
            case "unexpected-closer":
                return (Diagnostic.error(codes.UNEXPECTED_CLOSER,
                                         f"unexpected closing delimiter: `{p.char}`")
                        .primary(self.span(p.at, p.at + 1), "unexpected closing delimiter")
                        .with_help(f"remove this `{p.char}`, or add the delimiter it closes"))
        raise AssertionError(p.kind)

    # ------------------------------------------------------------ parse errors
    def parse_error(self, e: UnexpectedInput, base: int, stop: int, start_rule: str) -> Diagnostic:
        """The diagnostic for a failure parsing `code[base:stop]` from `start_rule`."""
        if is_lark(e, "UnexpectedCharacters"):
            at = base + int(e.pos_in_stream or 0)
            ch = self.code[at] if at < len(self.code) else ""
            shown, hint = _char_help(ch)
            before = _skip_space_back(self.code, at)
            if ch == "@" and re.match(r"@[A-Za-z_]", self.code[at:at + 2]) \
                    and (before == 0 or self.code[before - 1] in ";}"):
                hint = _DECORATOR_HELP  # `@triton.jit` before a kernel, `@torch.compile`
            elif ch == "'":
                hint = _char_literal_help(self.code, at) or hint
            d = (Diagnostic.error(codes.UNKNOWN_CHARACTER, f"unknown character {shown}")
                 .primary(self.span(at, at + 1), "unknown character"))
            return d.with_help(hint)
        if is_lark(e, "UnexpectedToken"):
            return self._hint(self._unexpected_token(e, base, stop, start_rule), e.token, base)
        # UnexpectedEOF is not raised by the LALR parser; keep a sane fallback.
        end = stop
        return (Diagnostic.error(codes.UNEXPECTED_EOF, "unexpected end of file")
                .primary(self.span(end, end), "the file ends here")
                .with_help("the file ends too early: finish the item, or close what is open"))

    def _hint(self, d: Diagnostic, tok: Any, base: int) -> Diagnostic:
        """A `help` for habits from other languages (`x++`, `and`, `elif`, `if x = 1`)."""
        if d.help or tok.type == "$END":
            return d
        # Every look back from the token is linear in what it reads (a regex
        # anchored at `$` over the whole prefix was quadratic in a long word).
        start = base + tok.start_pos
        code = self.code
        prev_word = _word_before(code, _skip_space_back(code, start))
        text = str(tok)
        if tok.type in ("FN", "KERNEL", "CONST", "USE") and d.code == codes.EXPECTED_EXPRESSION:
            return d.with_help(f"`{text}` items are only allowed at the top level of a file; "
                               "move this one out of the function")
        if text in ("|", "||") and d.code == codes.EXPECTED_EXPRESSION and (
                text == "||" or re.match(r"\|\s*(?:mut\s+)?[A-Za-z_]\w*\s*(?::[^|]{1,60})?\|", code[start:start + 80])):
            # Rust's closure `|k: i32| k * 2` (round 19: "write a value here" led nowhere)
            return d.with_help("Tile has no closures; write a function at the top level of the file, "
                               "`fn f(k: i32) -> i32 { .. }`, and call it (called from a kernel it is inlined; "
                               "a tile parameter may take its shape from a const generic: "
                               "`fn f<const N: i32>(t: Tile<f32, [N]>) -> Tile<f32, [N]>`)")
        if text in ("+", "-") and code.startswith(text, start - len(text)) and start >= len(text):
            return d.with_help(f"Tile has no `{text * 2}` operator; write `x {text}= 1`")
        if text == "*" and code.startswith("*", start - 1) and start >= 1:
            return d.with_help("Tile has no `**` operator; write `x.pow(y)` (`pow(x, y)`), or `x * x` for a square")
        if text == ":" and "`{`" in d.message:  # Python's `for i in range(n):`, `if x > 0:`
            return d.with_help("remove the `:`: a body is a block in braces, `for i in 0..n { .. }`, "
                               "`if c { .. } else { .. }`")
        if text == "." and prev_word and prev_word not in FOREIGN_MODULES:
            cast = _cast_method_help(code, start, prev_word)  # `x as u64.sum(0)`: Rust's error too
            if cast is not None:
                return d.with_help(cast)
        if text == "." and prev_word in FOREIGN_MODULES:  # `as torch.float16`, `zeros::<np.float32>`
            j = start + 1
            while j < len(code) and j - start < 16 and code[j] in _WORD_CHARS:
                j += 1
            member = code[start + 1:j]
            if member in FOREIGN_TYPES:
                return d.with_help(f"{FOREIGN_MODULES[prev_word]}'s `{prev_word}.{member}` is Tile's type "
                                   f"`{FOREIGN_TYPES[member]}`: write `{FOREIGN_TYPES[member]}`")
            if member == "constexpr":  # Triton's `BLOCK: tl.constexpr` parameter
                return d.with_help("a compile-time constant is a const generic: `kernel fn k<const BLOCK: i32>(..)`, "
                                   "given at the launch (`k::<1024>(..)`) or taken from a partition's tile shape")
            if member in ("Tensor", "tensor", "ndarray", "array"):
                return d.with_help("a tensor parameter is `&Tensor<f32, [?]>` to read, `&mut Tensor<f32, [B]>` "
                                   "for a kernel's own tile")
        if text == "*" and "`)`" in d.message and prev_word in _C_TYPES:  # C's `float* x`
            return d.with_help(_POINTER_HELP)
        if text == ":" and "`>`" in d.message and re.search(r"[<,]\s*[A-Za-z_]\w*\s*$", code[max(0, start - 40):start]):
            bound = re.match(r":\s*([A-Z]\w*)", code[start:start + 40])
            if bound:  # Rust's `<T: Float>` (round 22; a number type is lowercase, `<B: i32>`)
                return d.with_help(f"a type parameter takes no bounds: write `<{prev_word}>` (each instance is "
                                   f"checked with the type it is given), and remove `: {bound.group(1)}`")
            return d.with_help("a const generic is written with `const`: `<const B: i32>` (a type parameter is "
                               "a bare name: `<T>`)")
        if text == "where" and "`{`" in d.message and prev_word is not None:
            # Rust's `fn f<T>(x: T) -> T where T: Copy {` (round 22: "write one of `{` or `<` here")
            return d.with_help("Tile has no `where` clauses (type parameters take no bounds): remove `where ..` up "
                               "to the `{`")
        if text in ("<", "<<") and "<<<" in code[max(0, start - 2):start + 3] and d.code == codes.EXPECTED_EXPRESSION:
            # CUDA's `k<<<grid, block>>>(..)` (round 22: "write a value here")
            return d.with_help("Tile has no `<<<grid, block>>>`: the partitions of a kernel's `&mut` arguments "
                               "set the grid, and a call builds the launch: `k(z.partition([1024]), &x).sync()`")
        if tok.type == "STRING" and prev_word in ("f", "F", "rf", "fr") and start > 0 and code[start - 1] in "fF":
            return d.with_help(_fstring_help(text))
        for word in (text, prev_word):
            if word in _PY_WORDS:
                return d.with_help(f"use `{_PY_WORDS[word]}` instead of `{word}`")
        if prev_word == "elif":
            return d.with_help("write `else if` instead of `elif`")
        if text == "=":
            # `if x = 1 {`: an `if`/`while` since the last `{`, `}` or `;`.
            stmt_start = max(code.rfind(c, 0, start) for c in "{};") + 1
            if _IF_WHILE.search(code, stmt_start, start):
                return d.with_help("use `==` to compare two values")
        if text in ("*", "+", "-", "/", "%") and ("`>`" in d.message or "`)`" in d.message) or text == "::":
            # (round 21: a path, `k::<lib::N>(..)`, was "write one of `,` or an operator here")
            braced = _generic_expression(code, start, path=text == "::")
            if braced is not None:
                return d.with_help(braced)
        generic = _GENERIC_HELP.get(d.code)
        if generic is None and d.code == codes.UNEXPECTED_TOKEN and d.message.startswith("expected "):
            what = d.message[len("expected "):].rsplit(", found ", 1)[0]
            generic = f"write {what} here, or remove what does not belong"
        return d.with_help(generic) if generic else d

    def _expected_set(self, e: UnexpectedToken) -> set[str]:
        expected = set(e.expected or ())
        ip = getattr(e, "interactive_parser", None)
        if ip is not None:
            # accepts() simulates the parser; keep Lark's set if that fails
            with contextlib.suppress(Exception):
                expected = set(ip.accepts())
        expected.discard("WS")
        expected.discard("LINE_COMMENT")
        expected.discard("BLOCK_COMMENT")
        return expected

    def _unexpected_token(self, e: UnexpectedToken, base: int, stop: int,
                          start_rule: str) -> Diagnostic:
        tok: Any = e.token
        expected = self._expected_set(e)
        stack: list[object] = list(getattr(e.state, "value_stack", []) or [])
        is_end = tok.type == "$END"
        if is_end:
            start = end = _skip_space_back(self.code, stop)
        else:
            start, end = base + tok.start_pos, base + tok.end_pos
        here = self.span(start, end)
        found = self.vocab.found(tok)
        prev_end = self._prev_end(start)
        last: Any = stack[-1] if stack else None

        if str(tok) == ".." and {"MUT", "NAME"} <= expected:
            # Rust's rest pattern, `let (x, ..) = s;` (round 22: "write `)`, `(`, identifier, `_` or `mut` here")
            return (Diagnostic.error(codes.UNEXPECTED_TOKEN, f"expected a pattern, found {found}")
                    .primary(here, "Tile's patterns have no `..`")
                    .with_help("name each element of the tuple, `_` for each one you skip: `let (x, _, _) = s;` "
                               "for three"))
        # `kernel add(...)`
        if is_lark(last, "Token") and last.type == "KERNEL" and expected <= {"FN"}:
            return (Diagnostic.error(codes.KERNEL_WITHOUT_FN,
                                     f"expected `fn` after `kernel`, found {found}")
                    .primary(here if not is_end else self.span(prev_end, prev_end),
                             "expected `fn`")
                    .secondary(self._tok(last, base),
                               "a kernel is declared with `kernel fn`")
                    .with_help("write `kernel fn name(...)`"))

        if tok.type == "ELSE" and "ELSE" not in expected:
            d = (Diagnostic.error(codes.ELSE_WITHOUT_IF, "`else` without a preceding `if`")
                 .primary(here, "this `else` follows no `if` block"))
            if is_lark(last, "Token") and last.type == "SEMICOLON":
                d = d.secondary(self._tok(last, base),
                                "this `;` ends the statement before it")
                return d.with_help("remove the `;` so that the `else` continues the `if`")
            return d.with_help("an `else` must directly follow the `}` of an `if` block")

        if is_end:
            what = self._describe(expected)
            return (Diagnostic.error(codes.UNEXPECTED_EOF, f"expected {what}, found end of file")
                    .primary(self.span(prev_end, prev_end), f"expected {what} here")
                    .secondary(here, "the file ends here" if stop >= len(self.code)
                               else "the next item starts here")
                    .with_help(f"finish it with {what}"))

        if "SEMICOLON" in expected and not expected & {"NAME", "NUMBER"} and (
                pub := _PUB_BEFORE.search(self.code, max(0, prev_end - 80), prev_end)) is not None \
                and "\n" not in self.code[pub.end(1):start]:
            # Rust's `pub fn` / `pub(crate) let` in a body, read as the expression `pub` (or a call `pub(crate)`)
            # missing its `;`: the error of what follows, with `pub` named
            written = " ".join(pub.group(1).split())
            if tok.type in ("FN", "KERNEL", "CONST", "USE"):
                item = re.match(r"(?:kernel\s+)?(?:fn|const)\s+[A-Za-z_]\w*|use\b", self.code[start:start + 80])
                what = " ".join(item.group(0).split()) if item else str(tok)
                return (Diagnostic.error(codes.EXPECTED_EXPRESSION, f"expected expression, found keyword `{tok}`")
                        .primary(here, "expected expression")
                        .secondary(self.span(pub.start(1), pub.end(1)), "Rust's visibility modifier")
                        .with_help(f"remove `{written}` (Tile has no visibility modifiers) and move `{what}` out of "
                                   "the function: items are only allowed at the top level of a file"))
            return (Diagnostic.error(codes.UNEXPECTED_TOKEN,
                                     f"unexpected `{written}`: Tile has no visibility modifiers")
                    .primary(self.span(pub.start(1), pub.end(1)), "not a statement")
                    .with_help(f"remove `{written}`"))
        if "SEMICOLON" in expected and not expected & {"NAME", "NUMBER"}:
            # After a whole statement: the `;` that ends it is missing.
            d = (Diagnostic.error(codes.MISSING_SEMICOLON, f"expected `;`, found {found}")
                 .primary(self.span(prev_end, prev_end), "expected `;` here")
                 .secondary(here, "unexpected token"))
            rust = _rust_habit(_word_before(self.code, prev_end), str(tok), prev_end == start)
            if rust is None and tok.type == "DOT":
                rust = _cast_then_method(self.code, prev_end, start) \
                    or _cast_method_help(self.code, start, _word_before(self.code, prev_end))
            if rust is None and tok.type == "IF" and prev_end != start:
                rust = "Python's `a if c else b` is `if c { a } else { b }` in Tile (an `if` is an expression)"
            m = _FLOOR_DIV.match(self.text, prev_end) if rust is None else None
            if m is not None:  # Python's `n // 2`: the rest of the line is a comment
                a = re.search(r"[\w.]{1,30}$", self.code[max(0, prev_end - 30):prev_end])
                b = m.group(1).rstrip(";,").strip()
                simple = a is not None and (b.isidentifier() or b.isdigit())
                rust = _FLOOR_DIV_HELP.format(f"{a.group(0)} / {b}" if a is not None and simple else "n / 2")
            return d.with_help(rust) if rust else d

        if self.vocab.is_keyword(tok.type) and "NAME" in expected and not (
                "NUMBER" in expected and "MINUS" in expected):
            return (Diagnostic.error(codes.KEYWORD_AS_NAME,
                                     f"expected identifier, found keyword `{tok}`")
                    .primary(here, "expected identifier, found keyword")
                    .with_help(f"`{tok}` is a reserved word; choose another name, "
                               f"e.g. `{tok}_`"))

        if expected & {"UNDERSCORE", "MUT"} and expected <= _PATTERN_START | {"AMPERSAND"}:
            is_for = is_lark(last, "Token") and last.type == "FOR"
            shape = re.match(r"\[\s*(\w+)\s*((?:,\s*\w+\s*)*)\]\s*=\s*([^;]{1,60}?)\s*;", self.code[start:start + 120])
            if shape and not is_for:  # Rust's slice pattern, `let [r, c] = x.shape();` (round 22)
                names = [shape.group(1), *re.findall(r"\w+", shape.group(2))]
                v = shape.group(3)
                return self._expected(codes.EXPECTED_PATTERN, "pattern", found, here, (last, base), ("LET",),
                                      f"`{last}` needs a name to bind",
                                      "Tile's patterns have no `[..]`: index it, one name a `let`: `" + " ".join(
                                          f"let {n} = {v}[{k}];" for k, n in enumerate(names) if n != "_") + "`")
            return self._expected(codes.EXPECTED_PATTERN, "pattern", found, here, (last, base),
                                  ("LET", "FOR"), f"`{last}` needs a name to bind",
                                  "write a name (`for i in 0..n`), or `_` where the loop does not use it "
                                  "(`for _ in 0..n`)" if is_for else
                                  "write a name (`let x = ...`), `_`, or a tuple `(a, b)`")

        if {"NAME", "NUMBER", "MINUS", "BANG"} <= expected:
            d = (Diagnostic.error(codes.EXPECTED_EXPRESSION, f"expected expression, found {found}")
                 .primary(here, "expected expression"))
            if str(tok) in (":", "::") and is_lark(last, "Token") and last.type == "LSQB":
                if self._slice_has_step(start):
                    return d.with_help(_STEP_HELP)
                return d.with_help(_SLICING_HELP)  # NumPy's and Triton's `t[:, None]`
            if str(tok) in ("]", "..", "..=") and is_lark(last, "Token") and str(last) in ("..", "..=", "["):
                return d.with_help(_open_range_help(self.code[max(0, start - 60):start], str(tok)))
            return d

        if {"NAME", "NUMBER", "LSQB"} <= expected:  # a generic argument list
            return (Diagnostic.error(codes.EXPECTED_TYPE,
                                     f"expected a type or a constant, found {found}")
                    .primary(here, "expected a generic argument")
                    .with_help("generic arguments are types (`f32`), shapes (`[4, N]`) or "
                               "constants (`128`, `{ N * 2 }`)"))

        if (expected <= {"NAME", "TUPLE_INDEX"} and is_lark(last, "Token") and last.type == "DOT"
                and len(stack) >= 2 and is_lark(stack[-2], "Tree")
                and stack[-2].data == "number"):
            num: Any = stack[-2].children[0]
            if num.end_pos == last.start_pos:
                return (Diagnostic.error(codes.INVALID_NUMBER,
                                         f"expected a digit after `{num}.`, found {found}")
                        .primary(self._tok(num, base).to(self._tok(last, base)),
                                 "a float literal needs digits after its `.`")
                        .with_help(f"write `{num}.0`"))

        if expected >= _TYPE_START and "NUMBER" not in expected and str(tok) == "*":
            return (Diagnostic.error(codes.EXPECTED_TYPE, f"expected type, found {found}")
                    .primary(here, "expected type").with_help(_POINTER_HELP))  # Rust's `*mut f32`
        if expected >= _TYPE_START and "NUMBER" not in expected:
            return self._expected(codes.EXPECTED_TYPE, "type", found, here, (last, base),
                                  ("COLON", "__ANON_0"), f"a type must follow this `{last}`",
                                  _ARRAY_TYPE_HELP if str(tok) == "[" else
                                  "write a type such as `i32`, `f32` or `&Tensor<f32, [?]>`")

        if expected == {"NAME"}:
            return (Diagnostic.error(codes.EXPECTED_IDENTIFIER, f"expected identifier, found {found}")
                    .primary(here, "expected identifier"))

        if (start_rule == "module" and expected and expected <= _ITEM_START | {"$END"}
                and tok.type in ("CONST", "USE") and tok.type not in expected):
            # after `#[..]`: "expected item, found `const`" under a label that lists `const`
            return (Diagnostic.error(codes.EXPECTED_ITEM, f"expected `fn` or `kernel fn` after an attribute, "
                                     f"found {found}")
                    .primary(here, "an attribute (`#[..]`) applies to the `fn` or `kernel fn` after it")
                    .with_help(f"remove the attribute, or put the `{tok}` item before it: attributes are "
                               "written on functions and kernels only"))
        if start_rule == "module" and expected and expected <= _ITEM_START | {"$END"}:
            d = (Diagnostic.error(codes.EXPECTED_ITEM, f"expected item, found {found}")
                 .primary(here, "expected `fn`, `kernel fn`, `const` or `use`"))
            if tok.type == "NAME" and str(tok) == "pub":
                d = d.with_help(_pub_help(self.code, start))
            elif tok.type == "NAME" and str(tok) == "mod" and (m := _MOD_DECL.match(self.code, start)):
                # Rust's `mod lib;` (round 22: "statements belong inside the body of a `fn`")
                d = d.with_help(f"remove `{m.group(0)}`: Tile has no `mod` declarations, a file `{m.group(1)}.tile` "
                                f"beside this one is a module already: `use {m.group(1)}::*;` imports its items")
            elif tok.type == "NAME" and str(tok) == "mod" and (m := _MOD_BLOCK.match(self.code, start)):
                d = d.with_help(f"Tile has no inline modules: put these items in a file `{m.group(1)}.tile` beside "
                                f"this one (or at the top level here), and `use {m.group(1)}::*;` imports them")
            elif tok.type == "NAME" and str(tok) in _FOREIGN_ITEMS:
                d = d.with_help(_FOREIGN_ITEMS[str(tok)])
            elif tok.type in ("LET", "FOR", "WHILE", "IF", "RETURN", "NAME"):
                d = d.with_help("statements belong inside the body of a `fn`, e.g. `fn main() { ... }`")
            return d

        what = self._describe(expected, str(tok))
        d = (Diagnostic.error(codes.UNEXPECTED_TOKEN, f"expected {what}, found {found}")
             .primary(here, "unexpected token"))
        if (str(tok) in (":", "::") and "RSQB" in expected and len(stack) >= 3
                and is_lark(stack[-2], "Token") and stack[-2].type == "LSQB"):  # Python's `t[a:b]`, `t[1::2]`
            return d.with_help(_STEP_HELP if self._slice_has_step(start) else _RANGE_HELP)
        if (tok.type == "COMMA" and "RSQB" in expected and len(stack) >= 3
                and is_lark(stack[-2], "Token") and stack[-2].type == "LSQB"):
            # NumPy's `x[i, j]`: an index takes one axis at a time
            lsqb: Any = stack[-2]
            first = self.code[base + lsqb.end_pos:start].strip()
            if first == "None" or ":" in first:  # `t[None, :]`
                return d.with_help(_SLICING_HELP)
            close = self.code.find("]", start, start + 200)
            if ".." in first and close > 0:  # `m[1..3, 2]`: chained, `m[1..3][2]` is the slice's row 2 (round 20)
                return d.with_help(self._range_then_index_help(lsqb.start_pos, first, self.code[start + 1:close]))
            if close > 0 and re.match(r"\s*[-+*/%]?=(?!=)", self.code[close + 1:close + 8]):
                # `z[i, j] = v`: an element write (E0114 explains where the values go instead)
                return d.with_help("tensor and tile elements are not assigned one by one: make the values whole "
                                   "with `where(mask, v, ..)` (`tilec doc where`); an index takes one axis at a "
                                   "time, `x[i][j]`")
            return d.with_help("index one axis at a time: `x[i][j]`")
        return d

    def _range_then_index_help(self, at: int, first: str, second: str) -> str:
        """`x[a..b, j]`: a range keeps its axis, so the chained `x[a..b][j]` is the slice's row j; the column's
        spelling transposes first (`x[a..b, c..d]`: both ranges, transposed there and back)."""
        m = re.search(r"([A-Za-z_][\w.]*)\s*$", self.code[max(0, at - 60):at])
        x, second = (m.group(1) if m else "x"), second.strip() or "j"
        if ".." in second:
            how = f"`{x}[{first}].transpose()[{second}].transpose()`"
        else:
            how = f"`{x}.transpose()[{second}][{first}]` (column {second} of rows {first})"
        return (f"index one axis at a time; a range keeps its axis, so `{x}[{first}][{second}]` would index the "
                f"slice's first axis again: {how}")

    def _slice_has_step(self, start: int) -> bool:
        """Whether the slice whose first `:` is at `start` has a step (`::2`, `a:b:2`):
        two colons before the `]` or `,` that ends it (at most 80 characters read)."""
        end = start
        while end < len(self.code) and end - start < 80 and self.code[end] not in "],;\n":
            end += 1
        return self.code.count(":", start, end) >= 2

    def _describe(self, expected: set[str], found: str = "") -> str:
        if not expected:
            return "nothing more"
        if {"NAME", "NUMBER"} <= expected and "MINUS" in expected and len(expected) > 12:
            # An expression may start here; name the non-expression choices too.
            rest = [n for n in expected - _EXPR_START
                    if self.vocab.text.get(n) not in _OPERATOR_TEXT]
            rest_txt = [self.vocab.expected(n) for n in self._ordered(rest)]
            return _join([*rest_txt[:3], "an expression"]) if rest_txt else "an expression"
        ops = [n for n in expected if self.vocab.text.get(n) in _OPERATOR_TEXT]
        plain = [n for n in expected if n not in ops and n != "$END"]
        words = [self.vocab.expected(n) for n in self._ordered(plain)]
        if len(words) > 6:
            words = [*words[:6], "…"]
        if len(ops) >= 2 and not (found in ("+", "-", "*", "/", "%") and len(ops) < 4):
            # (an arithmetic operator found where `>` or `<` may come is not told "expected .. an operator")
            words.append("an operator")
        else:
            words.extend(self.vocab.expected(n) for n in self._ordered(ops))
        if not words:
            return "end of file"
        if len(words) == 1:
            return words[0]
        # rustc says "one of" before a list of tokens, not before "identifier or ...".
        tokens_only = all(w.startswith("`") for w in words[:-1])
        return ("one of " if tokens_only else "") + _join(words)

    def _ordered(self, names: Iterable[str]) -> list[str]:
        def key(n: str) -> tuple[int, str]:
            txt = self.vocab.text.get(n, n)
            return (_ORDER.index(txt) if txt in _ORDER else len(_ORDER), txt)
        return sorted(names, key=key)


_PY_WORDS = {"and": "&&", "or": "||", "not": "!"}

_CHAR_HINTS = {
    "'": "strings use double quotes: `\"...\"`",
    "~": "use `!` for logical and bitwise not",
    "$": "names are letters, digits and `_`",
    "@": ("matrix products are written `dot(a, b)` or `mma(a, b, acc)` of tiles in a kernel; on the host, "
          "`(a.reshape([m, k, 1]) * b.reshape([1, k, n])).sum(1)`"),
    "`": "backticks are not part of Tile",
    "\\": "a backslash only appears inside a string literal",
}


_CHAR_LITERAL = re.compile(r"'(\\[nrt0\\'\"]|[^'\\\n])'")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0", "\\": "\\", "'": "'", '"': '"'}


def _char_literal_help(code: str, at: int) -> str | None:
    """`c - b'0'`, `'A' as u32` (round 23, a Luhn check and Base64 from Rust): Tile has no character or
    byte literals; the help was "strings use double quotes". The character's code as a number (a `b'..'`
    byte as `u8`); None where `at` does not start a one-character literal."""
    m = _CHAR_LITERAL.match(code, at)
    if m is None:
        return None
    body = m.group(1)
    value = ord(_ESCAPES[body[1]] if body.startswith("\\") else body)
    byte = at > 0 and code[at - 1] == "b" and (at < 2 or code[at - 2] not in _WORD_CHARS)
    written = f"b{m.group(0)}" if byte else m.group(0)
    number = f"{value}u8" if byte and value < 256 else str(value)
    return (f"Tile has no character or byte literals: write the character's code as a number, `{number}` for "
            f"`{written}`" + (" (ASCII)" if value < 128 else ""))


def _char_help(ch: str) -> tuple[str, str]:
    """How to show a character no token starts with, and what to do about it:
    every one gets a help line, invisible ones are named by code point."""
    import unicodedata

    if ch in _CHAR_HINTS:
        return f"`{ch}`", _CHAR_HINTS[ch]
    if not ch:
        return "``", "delete it"
    code = f"U+{ord(ch):04X}"
    cat = unicodedata.category(ch)
    name = unicodedata.name(ch, "")
    if cat[0] in "CZ" and ch not in " \t\n\r":
        # control, format (zero-width, bidirectional overrides), separators: invisible or misleading
        return (f"{code}" + (f" ({name})" if name else ""),
                "an invisible or control character: delete it (an editor may show it only as a gap)")
    if ch.isalnum():
        return f"`{ch}` ({code})", "names are ASCII letters, digits and `_`: spell this name without it"
    return f"`{ch}` ({code})", "this character is not part of Tile's syntax: delete it, or put it in a string or a comment"


# `n // 2` on one line, where the `//` follows a value: Python's floor division, Tile's line comment
# (the rest reads as code: one word, or ends in `;`, `)` or `,`; `x = 7 // seven days` is a comment)
_FLOOR_DIV = re.compile(r"[ \t]*//[ \t]*(\w+|[\w(][^\n]*[;),])[ \t]*$", re.M)
_FLOOR_DIV_HELP = ("`//` starts a comment in Tile, so the rest of this line is not code: integer division is "
                   "`/` (`{}`; it truncates toward zero)")

_IF_WHILE = re.compile(r"\b(?:if|while)\b")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _cast_method_help(code: str, dot: int, ty: str) -> str | None:
    """`(v * 2.0) as u64.sum(0)` as an argument (round 15; `_cast_then_method` takes a statement's, of a
    name or a call): a method binds tighter than `as`, so the parser met `.` after the cast's type; the
    cast goes in parentheses. None where `ty` does not follow an `as` or the operand is not found."""
    t_start = _skip_space_back(code, dot) - len(ty)
    as_end = _skip_space_back(code, t_start)
    if as_end < 3 or code[as_end - 2:as_end] != "as" or code[as_end - 3] in _WORD_CHARS:
        return None
    end = _skip_space_back(code, as_end - 2)
    i, depth = end, 0  # the operand: a bracketed group with what leads to it, or a run of a name's characters
    while i > 0 and end - i < 200:
        ch = code[i - 1]
        if ch in ")]":
            depth += 1
        elif ch in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and ch not in _WORD_CHARS and ch not in ".:<>" or ch in "\n;{}":
            break
        i -= 1
    operand = code[i:end].strip()
    j = dot + 1
    while j < len(code) and j - dot < 40 and code[j] in _WORD_CHARS:
        j += 1
    method = code[dot + 1:j]
    if not operand or depth or not method or len(operand) > 60:
        return None
    k = j
    if k < len(code) and code[k] == "(":  # the call's arguments, when short
        close = code.find(")", k, k + 40)
        call = code[j:close + 1] if close > 0 and "(" not in code[k + 1:close] else "(..)"
    else:
        call = ""
    return f"a method binds tighter than `as`: put the cast in parentheses, `({operand} as {ty}).{method}{call}`"


def _skip_space_back(code: str, offset: int) -> int:
    """The offset just after the last non-space character before `offset`."""
    while offset > 0 and code[offset - 1].isspace():
        offset -= 1
    return offset


def _word_before(code: str, end: int) -> str:
    """The identifier that ends at offset `end` ('' if none); at most 64
    characters are read, so a huge word costs no more than a short one."""
    i = end
    while i > 0 and end - i < 64 and code[i - 1] in _WORD_CHARS:
        i -= 1
    if end - i >= 64 and i > 0 and code[i - 1] in _WORD_CHARS:
        return ""  # longer than any keyword or habit we look for
    while i < end and code[i].isdigit():
        i += 1  # an identifier does not start with a digit
    return code[i:end]


def _fstring_help(lit: str) -> str:
    """Python's `f"n = {n}"`: Tile's `print` takes a format string and the values, `"n = {}", n`."""
    body, args, i = lit[1:-1], [], 0
    out: list[str] = []
    ok = True
    while i < len(body):
        c = body[i]
        if c in "{}" and body[i:i + 2] in ("{{", "}}"):
            out.append(body[i:i + 2])
            i += 2
            continue
        if c == "}":  # a lone `}`: no Tile spelling to offer
            ok = False
            break
        if c == "{":
            j = body.find("}", i)
            if j < 0 or "{" in body[i + 1:j]:  # unclosed, or a nested spec (`{a:{w}}`)
                ok = False
                break
            expr = re.sub(r"(![rsa])?(:[^:]*)?$", "", body[i + 1:j]).strip()  # `{x:.3f}`, `{x!r}`
            if expr.endswith("=") and not expr.endswith(("==", "!=", "<=", ">=")):  # `{x=}` prints `x=..`
                expr = expr[:-1].rstrip()
                out.append(f"{expr}=")
            args.append(expr)
            out.append("{}")
            i = j + 1
            continue
        out.append(c)
        i += 1
    fixed = '"' + "".join(out) + '"' + "".join(f", {a}" for a in args)
    if ok and not args and len(fixed) <= 80:  # `f"done"`: nothing to format
        return f"Tile has no f-strings: drop the `f`, `print({fixed})`"
    if not ok or not all(args) or len(fixed) > 80:
        fixed = '"n = {}", n'
    return f"Tile has no f-strings: give `print` a format string and the values, `print({fixed})`"


_CAST_BEFORE = re.compile(r"([A-Za-z_][\w.]*(?:\([^()]*\))?)\s+as\s+([A-Za-z_]\w*)\s*$")


def _cast_then_method(code: str, prev_end: int, dot: int) -> str | None:
    """`z as f32.save_npy(..)`: a cast's type cannot take a method (a method
    binds tighter than `as`); the help said to end the statement before with
    `;`, which it already was (hostile review, round 14)."""
    m = _CAST_BEFORE.search(code[max(0, prev_end - 80):prev_end])
    if m is None:
        return None
    meth = re.match(r"\.\s*([A-Za-z_]\w*)\s*(\([^()\n]{0,40}\))?", code[dot:dot + 80])
    call = f".{meth.group(1)}{meth.group(2) or '(..)'}" if meth else "..."
    return (f"a method binds tighter than `as`: put the cast in parentheses, "
            f"`({m.group(1)} as {m.group(2)}){call}`")


def _open_range_help(before: str, tok: str) -> str:
    """Rust's open ranges, `t[2..]` and `t[..3]` (round 11): Tile's ranges have both ends."""
    m = re.search(r"([A-Za-z_]\w*)\s*\[\s*([^\[\]]*?)\s*(\.\.=?)?\s*$", before)
    name = m.group(1) if m else "t"
    if tok == "]" and m and m.group(2):
        return (f"a range has both ends in Tile (Rust's open `a..` is not): `{name}[{m.group(2)}..{name}.shape()[0]]` "
                "runs to the end")
    return "a range has both ends in Tile (Rust's open `..b` is not): `0..b` starts at the first element"


# Rust's `[f32; 3]` where a type goes (`const TAPS: [f32; 3] = [..];`, round 11)
_ARRAY_TYPE_HELP = ("Tile has no array types: name each value (`const TAPS0: f32 = 0.25;`), or hold the values "
                    "in a tensor (`&Tensor<f32, [3]>`) or a tile")
_POINTER_HELP = ("Tile has no pointers: a kernel takes tensors, `&Tensor<f32, [?]>` to read and "
                 "`&mut Tensor<f32, [B]>` for the tile it writes")
_C_TYPES = frozenset({"float", "double", "int", "half", "char", "void", "f32", "f16", "bf16", "f64", "i32", "i64",
                      "u8", "uint8_t", "int32_t", "int64_t", "size_t"})

# a decorator (`@triton.jit`, `@cuda.jit`, `@torch.compile`) where an item starts
_DECORATOR_HELP = ("Tile has no decorators: a kernel is declared `kernel fn name<const B: i32>(..) { .. }`, and "
                   "its options are attributes before it (`#[hints(num_warps = 4)]`)")
_KERNEL_DECL = "a kernel is `kernel fn name<const B: i32>(z: &mut Tensor<f32, [B]>, ..) { .. }`"
# the first word of another language's item (Python's `def`, CUDA's `__global__`), where an item goes
_PUB = re.compile(r"pub\s*(?:\([^()]*\))?")
_PUB_USE = re.compile(r"\s*(use\s[^;]*;)")
# `pub` / `pub(crate)` standing alone as a statement's start, right before `prev_end` (searched in a window)
_PUB_BEFORE = re.compile(r"(?:^|(?<=[;{}\n]))\s*(pub\s*(?:\([^()]*\))?)\s*$")


def _pub_help(code: str, start: int) -> str:
    """Rust's `pub` (also `pub(crate)`, `pub(super)`, `pub(in path)`): Tile has no visibility, and `use`
    imports every item of a file; a `pub use` (a re-export in Rust) imports for its own file only."""
    m = _PUB.match(code, start)
    pub = " ".join(m.group(0).split()) if m else "pub"
    use = _PUB_USE.match(code, m.end()) if m else None
    if use is not None:
        text = " ".join(use.group(1).split())
        return (f"remove `{pub}`: a `use` brings names into its own file only (Tile does not re-export); a file "
                f"that needs them writes the same `{text}` itself")
    return (f"remove `{pub}`: Tile has no visibility modifiers, and `use` imports every `fn`, `kernel fn` and "
            "`const` of a file")


_MOD_DECL = re.compile(r"mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")
_MOD_BLOCK = re.compile(r"mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")

_FOREIGN_ITEMS = {
    "def": "a function is `fn name(a: f32) -> f32 { .. }`; " + _KERNEL_DECL,
    "__global__": "CUDA's `__global__` function: " + _KERNEL_DECL,
    "__device__": "CUDA's `__device__` function: a device function is a plain `fn` called from a kernel",
    "void": "a function is `fn name(..) { .. }` (no return type for none); " + _KERNEL_DECL,
    "import": "Tile imports with `use`: `use std::nn::softmax;`, `use \"other.tile\";`",
    "from": "Tile imports with `use`: `use std::nn::softmax;`, `use \"other.tile\";`",
    "class": "Tile has no classes: a kernel is `kernel fn`, a helper a `fn`",
    "struct": "Tile has no structs: pass tensors and scalars, return tuples",
    "impl": "Tile has no structs or methods of your own: write functions (`fn`)",
    "template": "generic parameters follow the name: `kernel fn k<T, const B: i32>(..)`",
}

_PRINT_MACROS = {"println", "print", "eprintln", "eprint", "dbg", "format"}


def _rust_habit(word: str, token: str, adjacent: bool) -> str | None:
    """Help for Rust constructs Tile does not have, which otherwise read as a
    missing `;` after a name: macros (`name!` with no space), `loop`, `match`, the `?` operator."""
    if token == "?":  # (round 21: "end the statement before this one with `;`")
        return ("Tile has no `?` operator: an operation that fails stops the program with its error; remove the `?`"
                if adjacent else "C's `c ? a : b` is `if c { a } else { b }` in Tile (`where(c, a, b)` element-wise)")
    if token == "!" and word and adjacent:
        if word in _PRINT_MACROS:
            return "Tile has no macros: print with the function `print(a, b, ..)`"
        if word in ("assert", "assert_eq", "assert_ne", "debug_assert"):
            return "Tile has no macros: use the function `assert(cond, \"message\")`"
        if word == "vec":
            return ("Tile has no macros or `Vec`: make a tensor with `zeros::<f32>([n])`, "
                    "`full`, `arange` or `load_npy`; shapes and indices are written `[a, b]`")
        return f"Tile has no macros: `{word}!` cannot be expanded"
    if word == "loop":
        return "Tile has no `loop`: write `while true { ... }` and leave it with `break`"
    if word == "match":
        return "Tile has no `match`: use `if` / `else if` / `else`"
    return None


def _generic_expression(code: str, at: int, path: bool = False) -> str | None:
    """`interp::<H, 2 * H>()`: an operator inside a generic argument list (round 12). A computed const
    argument goes in braces, as in Rust: the help writes the argument so (`{ 2 * H }`), where the list's `<`
    and the argument's end (`,` or `>` on the line) are found."""
    line_start = code.rfind("\n", 0, at) + 1
    opened = code.rfind("<", line_start, at)
    if opened < 0 or ">" in code[opened:at] or ("(" in code[opened:at] and code[opened - 2:opened] != "::"):
        return None
    first = max(opened, code.rfind(",", opened, at)) + 1
    nl = code.find("\n", at)
    limit = nl if nl >= 0 else len(code)
    ends = [i for i in (code.find(",", at, limit), code.find(">", at, limit)) if i >= 0]
    if not ends:
        return None
    arg = code[first:min(ends)].strip()
    if path:  # `lib::N`: a constant of another module
        return (f"a generic argument that is a path goes in braces, as in Rust: `{{ {arg} }}`"
                if re.fullmatch(r"\w+(::\w+)+", arg) else None)
    # an expression of names and numbers on both sides of the operator (`2 * N`), not a shape's `[B]+` typo
    if not re.fullmatch(r"[\w\s()]+[-+*/%][\w\s()*+/%-]*\w[\w\s()]*", arg):
        return None
    return f"a generic argument computed from others goes in braces, as in Rust: `{{ {arg} }}`"

