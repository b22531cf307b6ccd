"""The format string of `print`: `print("x = {}, y = {}", x, y)`.

One reading for the checker (`sema/rules.py`, a string literal or an
immutable `let` of one: E0232 at check time; in a kernel any other first
string is refused), the host evaluator (`runtime/builtins.py`, a string the
checker cannot know: E0723 when the statement runs) and the kernel lowering
(`ir/lower/intrinsics.py`), so a string is a format string, and its pieces
are the same, everywhere.

The rule: when `print`'s first argument is a string with a brace in it, it
is a format string. Each `{}` takes the next argument, `{{` and `}}` write
one brace, and there must be exactly one argument after the string for each
`{}`. Any other brace (`{x}`, `{:?}`, a lone `{` or `}`) is an error: Tile has
no named or formatted placeholders, and printing them as they are would hide
the mistake. A first string with no brace is printed as it is, and the other
arguments follow it, each after a space.
"""

from __future__ import annotations

import dataclasses
import re

from tilelang.frozen import frozen
from tilelang.source import Span


@frozen
class FormatProblem:
    """What is wrong with a format string: `offset`/`length` into its text
    (None: the whole string), the message, the label and the help line."""

    offset: int | None
    length: int
    message: str
    label: str
    help: str


def is_format(text: str) -> bool:
    return "{" in text or "}" in text


def pieces(text: str) -> list[str] | FormatProblem:
    """The literal text between the `{}` placeholders (one more piece than
    placeholders), escapes resolved, or the first malformed brace."""
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            if text.startswith("{{", i):
                cur.append("{")
                i += 2
                continue
            if text.startswith("{}", i):
                out.append("".join(cur))
                cur = []
                i += 2
                continue
            close = text.find("}", i)
            if close < 0:
                return FormatProblem(i, 1, "unmatched `{` in a format string", "this brace opens no `{}`",
                                     "write `{{` for a literal `{`, or `{}` for a placeholder")
            inner = text[i + 1:close]
            return FormatProblem(i, close - i + 1, f"unsupported placeholder `{{{inner}}}` in a format string",
                                 "`print` has only the plain placeholder `{}`", _PLAIN)
        if c == "}":
            if text.startswith("}}", i):
                cur.append("}")
                i += 2
                continue
            return FormatProblem(i, 1, "unmatched `}` in a format string", "this brace closes no `{`",
                                 "write `}}` for a literal `}`")
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


_PLAIN = "write `{}` and pass the value as the next argument (`{{` and `}}` for literal braces)"
_BRACES = re.compile(r"\{\{|\}\}|\{[^{}]*\}|[{}]")
_NAMED = re.compile(r"\{([A-Za-z_][A-Za-z_0-9]*)(?::[^{}]*)?\}$")


def _named_help(text: str) -> str:
    """The help for a placeholder other than `{}`: where every placeholder is
    a Python f-string's `{name}` (or `{name:spec}`), the string and arguments
    that print the same names (`"total = {}", total`)."""
    names: list[str] = []
    out: list[str] = []
    last = 0
    for m in _BRACES.finditer(text):
        out.append(text[last:m.start()])
        last = m.end()
        tok = m.group()
        named = _NAMED.match(tok)
        if tok in ("{{", "}}"):
            out.append(tok)
        elif named:
            names.append(named.group(1))
            out.append("{}")
        else:  # a `{}` of its own (the arguments' order is the user's), or a brace that names nothing
            return _PLAIN
    out.append(text[last:])
    fixed = "".join(out).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return (f"Tile has no named placeholders: write `{{}}` for each and pass the values after the string, "
            f"in order: `print(\"{fixed}\", {', '.join(names)})`")


def count_problem(holes: int, args: int) -> FormatProblem | None:
    """Placeholders and arguments that disagree in number, or None."""
    if holes == args:
        return None
    ph = f"{holes} placeholder{'s' if holes != 1 else ''}"
    ar = f"{args} argument{'s' if args != 1 else ''}"
    more = "an argument for each `{}`" if holes > args else "a `{}` for each argument"
    return FormatProblem(None, 0, f"this format string has {ph} but {ar} follow{'s' if args == 1 else ''} it",
                         f"{ph}, {ar}",
                         f"give {more} (write `{{{{` and `}}}}` for literal braces)")


def problem_of(text: str, args: int) -> FormatProblem | None:
    """What is wrong with `print(text, <args arguments>)`, or None (also for
    a string that is no format string)."""
    if not is_format(text):
        return None
    got = pieces(text)
    if isinstance(got, FormatProblem):
        if got.help == _PLAIN and args == 0:  # `print("total = {total}")`: spell out the call
            return dataclasses.replace(got, help=_named_help(text))
        return got
    return count_problem(len(got) - 1, args)


def problem_span(lit: Span, text_len: int, p: FormatProblem) -> Span:
    """The span of a problem inside a string literal at `lit`: the brace
    itself where the literal's source is its text (no escapes), else the
    whole literal."""
    if p.offset is None or lit.end - lit.start != text_len + 2:
        return lit
    start = lit.start + 1 + p.offset
    return Span(lit.file, start, start + p.length)
