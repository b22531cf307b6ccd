"""The lexical pre-pass: comments, unterminated literals, delimiter balance.

Runs before Lark sees the text. It produces two views of the source, both the
same length as the original so every offset stays valid:

- `code`: comments replaced by spaces (newlines kept). Nested `/* /* */ */`
  comments are handled here, which a regular-expression lexer cannot do.
- `skeleton`: `code` with string contents blanked too, so delimiter matching
  does not count a `{` inside `"..."`.

It also reports, as `LexProblem`s (turned into diagnostics by `errors.py`):
unterminated strings and block comments (at their start), and delimiter
errors in the rustc manner: an unclosed opener (with a guess from
indentation of which inner delimiter is the real culprit), a mismatched
closer, a closer with no opener.

Invariant: never raises; pure functions of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tilelang.frozen import frozen

_INTERESTING = re.compile(r'"|//|/\*')
# Unicode's explicit text-direction controls (embeddings, overrides, isolates):
# in a comment or a string they reorder how an editor or a terminal shows the
# code around them, so the code can read differently from what it does
# ("Trojan Source", CVE-2021-42574); rustc refuses them too. Elsewhere they
# are unknown characters (E0007).
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {v: k for k, v in _PAIRS.items()}


@frozen(eq=True)
class LexProblem:
    """A lexical problem; `kind` picks the diagnostic code in `errors.py`.

    kinds: "unterminated-string", "unterminated-comment", "unclosed",
    "mismatched", "unexpected-closer"; and, in `Scan.bidi`, "bidi" (a
    text-direction control in a comment, `other` = 0, or a string, `other` = 1).
    `at` is the primary offset (the opener, the bad closer, the literal start);
    `other` an offset for the secondary label (the opener of a mismatched
    closer, or -1); `suspect` for "unclosed": (opener, closer) offsets of a
    pair whose indentation disagrees, the likely place of the missing closer.
    """
    kind: str
    at: int
    char: str = ""
    other: int = -1
    other_char: str = ""
    suspect: tuple[int, int] | None = None


@dataclass(slots=True)
class Scan:
    code: str
    skeleton: str
    problems: list[LexProblem] = field(default_factory=list)
    # text-direction controls in comments and strings: errors of their own
    # that stop nothing (the parse goes on; every one is reported)
    bidi: list[LexProblem] = field(default_factory=list)


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def scan(text: str) -> Scan:
    """Blank comments, find unterminated literals, check delimiters."""
    code = list(text)
    skel = list(text)
    if text.startswith("\ufeff"):  # a byte-order mark some editors write: not code
        code[0] = skel[0] = " "
    problems: list[LexProblem] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _INTERESTING.search(text, pos)
        if m is None:
            break
        start = m.start()
        tok = m.group()
        if tok == '"':
            i = start + 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                problems.append(LexProblem("unterminated-string", start, '"'))
                # Blank the rest so the parser stops at a clean end of file.
                _blank(code, start, n)
                _blank(skel, start, n)
                break
            _blank(skel, start + 1, i)
            pos = i + 1
        elif tok == "//":
            end = text.find("\n", start)
            end = n if end < 0 else end
            _blank(code, start, end)
            _blank(skel, start, end)
            pos = end
        else:  # "/*", possibly nested
            depth = 0
            i = start
            while i < n:
                two = text[i : i + 2]
                if two == "/*":
                    depth += 1
                    i += 2
                elif two == "*/":
                    depth -= 1
                    i += 2
                    if depth == 0:
                        break
                else:
                    i += 1
            if depth > 0:
                problems.append(LexProblem("unterminated-comment", start, "/*"))
                i = n
            _blank(code, start, i)
            _blank(skel, start, i)
            pos = i
    result = Scan("".join(code), "".join(skel), problems)
    for m in BIDI_CONTROLS.finditer(text):
        if result.skeleton[m.start()] == " ":  # blanked: in a comment or a string
            in_string = result.code[m.start()] != " "
            result.bidi.append(LexProblem("bidi", m.start(), m.group(), int(in_string)))
    result.problems.extend(check_delimiters(result.skeleton))
    return result


def _indent_at(text: str, line_start: int) -> int:
    i = line_start
    while i < len(text) and text[i] in " \t":
        i += 1
    return i - line_start


def check_delimiters(skeleton: str) -> list[LexProblem]:
    """Match `()[]{}` in a text without comments or string contents.

    Reports the first mismatch or stray closer, else the outermost unclosed
    opener (the inner ones follow from it), with a suspect pair if a `}`
    closed something at an indentation that disagrees with its opener's line.
    Linear in the text: each line's indentation is measured once.
    """
    stack: list[tuple[int, int]] = []  # (offset, line)
    suspects: list[tuple[int, int]] = []
    line = 0
    line_start = 0
    indents: dict[int, int] = {}  # line -> its indentation, measured when needed

    def indent(ln: int, start: int) -> int:
        if ln not in indents:
            indents[ln] = _indent_at(skeleton, start)
        return indents[ln]

    starts: dict[int, int] = {0: 0}  # line -> offset of its start, for lines with an opener
    for m in _DELIMS.finditer(skeleton):
        ch = m.group()
        i = m.start()
        if ch == "\n":
            line += 1
            line_start = i + 1
        elif ch in _PAIRS:
            stack.append((i, line))
            starts[line] = line_start
        else:
            if not stack:
                return [LexProblem("unexpected-closer", i, ch)]
            opener, opener_line = stack.pop()
            if _PAIRS[skeleton[opener]] != ch:
                return [LexProblem("mismatched", i, ch, opener, skeleton[opener])]
            # A `}` on its own line should sit at its opener line's indentation.
            if (ch == "}" and opener_line != line
                    and indent(opener_line, starts[opener_line]) != indent(line, line_start)):
                suspects.append((opener, i))
    if stack:
        inner = stack[-1][0]
        if skeleton[inner] != "{":
            # `(` and `[` rarely span lines: the innermost one is the likely culprit.
            return [LexProblem("unclosed", inner, skeleton[inner])]
        outer = stack[0][0]
        suspect = next((s for s in suspects if s[0] > outer), None)
        return [LexProblem("unclosed", outer, skeleton[outer], suspect=suspect)]
    return []


_DELIMS = re.compile(r"[()\[\]{}\n]")
