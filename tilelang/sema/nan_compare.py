"""W0014 `nan_comparison`: a comparison with a NaN constant (`x == f32::NAN`, `f64::NAN < y`).

A NaN is the one value not equal to itself, and unordered: `==`, `<`, `<=`, `>` and `>=` with a NaN are false
for every `x`, and `!=` is true (the reference, "Numbers"). NumPy's `x == np.nan` and C's `x == NAN` are the
habit this catches (round 28, huser29: the mask of a NaN test was all false, in silence); the NaN test is
`x != x` (`x == x` where `x` is not NaN), as clippy's `cmp_nan` says for Rust.

`nan_comparisons(decl, sources)` gives the warnings of one function or kernel; `lints._Linter` emits them under
the lint's name.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.syntax import ast

_ORDER = ("<", "<=", ">", ">=")


def _is_nan(e: Any) -> bool:
    """`f32::NAN` (any float type's), or `-f32::NAN`."""
    if isinstance(e, ast.Unary) and e.op == "-":
        e = e.operand
    return isinstance(e, ast.Path) and len(e.segments) == 2 and e.segments[1].name == "NAN" \
        and e.segments[0].name in ("f16", "bf16", "f32", "f64")


def nan_comparisons(decl: ast.FnDecl, sources: Any = None) -> list[Diagnostic]:
    found: list[Diagnostic] = []

    def snippet(node: Any) -> str:
        try:
            return sources.snippet(node.span)
        except Exception:  # no source text: the help's placeholder
            return "x"

    for n in ast.walk(decl.body):
        if not (isinstance(n, ast.Binary) and n.op in ("==", "!=", *_ORDER)):
            continue
        nan_left, nan_right = _is_nan(n.lhs), _is_nan(n.rhs)
        if not (nan_left or nan_right) or (nan_left and nan_right):
            continue
        x = snippet(n.rhs if nan_left else n.lhs)
        x = x if x.isidentifier() else f"({x})"
        value = "true" if n.op == "!=" else "false"
        help_ = (f"`{x} != {x}` is the NaN test (true where `{x}` is NaN)" if n.op == "==" else
                 f"`{x} == {x}` is true where `{x}` is not NaN" if n.op == "!=" else
                 f"to order NaN as a number, test it first: `{x} != {x}` is the NaN test")
        found.append(Diagnostic.warning(W.NAN_COMPARISON, f"this comparison with NaN is always {value}")
                     .primary(n.span, f"`{n.op}` with a NaN is {value} for every value")
                     .note("a NaN is the one value not equal to itself, and it is unordered: `==`, `<`, `<=`, `>` "
                           "and `>=` with it are false, `!=` is true")
                     .with_help(help_))
    return found
