"""W0013 `narrow_sum_cast`: an integer sum or product taken in a narrow type and converted after it is taken.

A reduction keeps its operand's element type (the reference, `sum`): `t.sum(0)` of a `u8` tile is summed in
`u8` and wraps past 255, so `t.sum(0) as u32` converts the wrapped value, and 256 bytes of 200 sum to 0. The
cast was meant for the elements, `(t as u32).sum(0)` (round 27: the help of E0203 for `let s: u32 =
t.sum(0);` was that very cast; a data engineer's byte checksums and counts). Reported where a `sum`, `prod`,
`cumsum` or `cumprod` (method or function, of a tile or a host tensor) of 8- or 16-bit integers is the whole
operand of a cast to a type that holds more (a wider integer, or a float; `i32` counts cast to `f32` for a mean
are left alone); the help casts the elements first
(`widen.widened_sum_help`). A sum meant modulo its type (an 8-bit checksum) keeps its type, or says so with
`#[allow(narrow_sum_cast)]`.

`narrow_sum_casts(program, decl, sources)` gives the warnings of one function or kernel; `lints._Linter` emits
them under the lint's name.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.sema.context import CheckCx
from tilelang.sema.program import Program
from tilelang.sema.types import elem_of
from tilelang.sema.widen import _SUMS, widened_sum_help
from tilelang.syntax import ast


class _Quoter:
    """What `widened_sum_help` quotes the code with (`CheckCx`'s two snippets), from the sources alone."""

    def __init__(self, sources: Any) -> None:
        self.sources = sources

    def snippet(self, node: Any) -> str:
        try:
            return self.sources.snippet(node.span)
        except Exception:  # no source text: the help's placeholder
            return "..."

    cast_snippet = CheckCx.cast_snippet


def _max(dt: DType) -> int:
    return (1 << (dt.bits - 1)) - 1 if dt.is_signed else (1 << dt.bits) - 1


def _reduction(e: Any) -> str | None:
    if isinstance(e, ast.MethodCall) and e.method.name in _SUMS:
        return e.method.name
    if isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name in _SUMS and e.args:
        return e.callee.ident.name
    return None


def narrow_sum_casts(program: Program, decl: ast.FnDecl, sources: Any = None) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    quote = _Quoter(sources)
    for n in ast.walk(decl.body):
        if not isinstance(n, ast.Cast) or (name := _reduction(n.expr)) is None:
            continue
        have_t, want_t = program.types.get(n.expr), program.types.get(n)
        have = elem_of(have_t) if have_t is not None else None
        want = elem_of(want_t) if want_t is not None else None
        # (8- and 16-bit values only: a sum of 257 bytes can wrap, and the casts of `i32` counts to `f32` or `i64`
        # that every mean and total writes are of sums that do not)
        if not (isinstance(have, DType) and have.is_int and have.bits <= 16 and isinstance(want, DType)):
            continue
        help_ = widened_sum_help(quote, n.expr, have, want)
        if help_ is None:
            continue
        what = "product" if "prod" in name else "sum"
        text = quote.snippet(n.expr)
        found.append(Diagnostic.warning(
            W.NARROW_SUM_CAST, f"this {what} is taken in `{have}`, and converted to `{want}` only after it is taken")
            .primary(n.expr.span, f"a {what} of `{have}` values, which wraps past {_max(have)}")
            .secondary(n.ty.span, f"converted to `{want}` only then")
            .note(f"a reduction keeps its operand's element type: `{text} as {want}` converts a {what} that may "
                  f"have wrapped in `{have}`")
            .with_help(help_))
    return found
