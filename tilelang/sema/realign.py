"""W0008 `misaligned_reduction`: a reduction along an axis other than the
first, broadcast back against a value of its source's rank.

`t - t.max(1)` of a `[N, N]` tile checks (NumPy's rules prepend the missing
axis: the `[N]` maxima line up with `t`'s last axis) and computes
`t[i, j] - max(t[j, :])`, not the row's maximum: the keepdims that a NumPy
or PyTorch user writes (`t.max(1, keepdims=True)`) is missing. Where the
shapes differ (`[4, 16]` and `[4]`) the checker's E0202 already says so,
with a reshape help; this lint catches the shapes that pass by accident
(square tiles, `?` host dimensions, generics of one value). A reduction
along axis 0 lines up where it was taken and is never reported, nor is one
whose axes before the reduced one all have length 1 (`[1, N]`).

`misaligned_reductions(program, decl, sources)` gives the warnings of one
function or kernel; `lints._Linter` emits them under the lint's name.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import warnings as W
from tilelang.diagnostics.model import Diagnostic
from tilelang.sema.program import Program, SymbolKind
from tilelang.sema.types import Dim, RefT, TensorT, TileT, shape_str
from tilelang.syntax import ast

#: the reductions that remove an axis (`sum(t, 1)` and `t.sum(1)`)
REDUCTIONS = frozenset(("sum", "max", "min", "prod", "argmax", "argmin"))
#: the operators that broadcast their operands against each other
_OPERATORS = frozenset(("+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&", "|", "^"))


def _shape(ty: Any) -> tuple[Dim | None, ...] | None:
    ty = ty.inner if isinstance(ty, RefT) else ty
    return ty.shape if isinstance(ty, (TileT, TensorT)) else None


def _reduction(e: Any) -> tuple[ast.Expr, int] | None:
    """`(source, axis)` of `x.max(k)` / `max(x, k)` with a literal axis, else None."""
    if isinstance(e, ast.MethodCall) and e.method.name in REDUCTIONS and len(e.args) == 1:
        src, axis = e.receiver, e.args[0].value
    elif isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name in REDUCTIONS \
            and len(e.args) == 2:
        src, axis = e.args[0].value, e.args[1].value
    else:
        return None
    return (src, axis.value) if isinstance(axis, ast.IntLit) else None


def reduction_axis(e: Any) -> int | None:
    """The literal axis of `x.max(k)` / `max(x, k)` (any reduction of `REDUCTIONS`), else None."""
    red = _reduction(e)
    return red[1] if red is not None else None


def _bindings(program: Program, decl: ast.FnDecl) -> dict[int, Any]:
    """The initializers of the `let`s of names never assigned again, by symbol."""
    out: dict[int, Any] = {}
    assigned: set[int] = set()
    for n in ast.walk(decl.body):
        if isinstance(n, ast.Let) and isinstance(n.pattern, ast.NamePat) and n.value is not None:
            sym = program.symbol_of(n.pattern)
            if sym is not None:
                out[id(sym)] = n.value
        elif isinstance(n, ast.Assign) and isinstance(n.target, ast.Name):
            sym = program.symbol_of(n.target)
            if sym is not None:
                assigned.add(id(sym))
    return {k: v for k, v in out.items() if k not in assigned}


def misaligned_reductions(program: Program, decl: ast.FnDecl, sources: Any = None) -> list[Diagnostic]:
    """W0008 of each operator in `decl` one of whose operands is such a reduction (directly, or a `let` of
    one never assigned again); `sources` (a SourceMap) lets the help quote the code."""
    lets = _bindings(program, decl)
    found: list[Diagnostic] = []

    def reduction_of(e: Any) -> tuple[ast.Expr, int] | None:
        if isinstance(e, ast.Name):
            sym = program.symbol_of(e)
            if sym is None or sym.kind is SymbolKind.BUILTIN or id(sym) not in lets:
                return None
            e = lets[id(sym)]
        return _reduction(e)

    for n in ast.walk(decl.body):
        if isinstance(n, ast.Binary) and n.op in _OPERATORS:
            pair = (n.lhs, n.rhs)
        elif isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and len(n.args) == 2 \
                and n.callee.ident.name in ("maximum", "minimum") and program.symbol_of(n.callee) is not None \
                and program.symbol_of(n.callee).kind is SymbolKind.BUILTIN:  # `maximum(t, t.max(1))`
            pair = (n.args[0].value, n.args[1].value)
        else:
            continue
        for small, big in ((pair[1], pair[0]), pair):
            red = reduction_of(small)
            if red is None:
                continue
            src, axis = red
            s_src, s_big, s_small = (_shape(program.type_of(x)) for x in (src, big, small))
            if s_src is None or s_big is None or s_small is None or len(s_src) != len(s_big) \
                    or len(s_small) != len(s_big) - 1 or not 1 <= axis < len(s_src):
                continue
            if all(d is not None and d.const_value == 1 for d in s_src[:axis]):
                continue  # `[1, N]`: the leading axes broadcast whatever they line up with
            found.append(_warning(n, small, big, src, axis, s_src, s_big, sources))
            break
    return found


def _text(sources: Any, e: Any, fallback: str) -> str:
    if sources is None or getattr(e, "span", None) is None or e.span.file < 0:
        return fallback
    return sources.snippet(e.span)


def _warning(n: ast.Binary | ast.Call, small: Any, big: Any, src: Any, axis: int, shape: tuple[Dim | None, ...],
             big_shape: tuple[Dim | None, ...], sources: Any) -> Diagnostic:
    text = _text(sources, small, "the reduction")
    wrapped = text if isinstance(small, (ast.Name, ast.MethodCall, ast.Call)) else f"({text})"
    src_text = _text(sources, src, "x")
    dims = ["1" if i == axis else str(d) if d is not None else f"{src_text}.shape()[{i}]"
            for i, d in enumerate(shape)]
    kept = f"[{', '.join(dims)}]"
    pairs = ("element [i, j] meets the reduction of row j, not of row i" if len(shape) == 2 else
             f"an element meets a value reduced from another position along axes 0..{axis}")
    return (Diagnostic.warning(W.MISALIGNED_REDUCTION,
                               f"a reduction along axis {axis} broadcast back against its source's rank")
            .primary(small.span, f"reduced along axis {axis} of {shape_str(shape)}")
            .secondary(big.span, f"shape {shape_str(big_shape)}: the reduction's values line up with its last "
                                 + ("axis" if len(shape) == 2 else f"{len(shape) - 1} axes"))
            .note(f"NumPy's rules put the missing axis first, not where the reduction removed it: {pairs} "
                  "(a keepdims left out)")
            .with_help(f"keep the reduced axis: `{wrapped}.reshape({kept})`"))
