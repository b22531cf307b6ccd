"""Written types on the host, checked where a value is read or bound (hrev29).

The type checker takes a written type for its value's: a `let`'s (`let t: Tensor<f32, [16]> = ..`), a host
function's result type, and `load_npy::<T>`'s element type. What the checker cannot know (a tensor made from
run-time values, a `.npy` file's contents) is checked by the host evaluator where the value is bound or read:
every dimension the type declares that is not `?`, the number of dimensions, the element type. Before, the
value was bound as it was, and a program failed at a later, unrelated operation, or ran on with a tensor its
type says it is not. (A host function's parameters are checked by `host_args.bind_params`.)

Invariant: pure functions of a value and a written type; nothing here evaluates code but through `size_of`
and `dtype_of`, which the evaluator gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.runtime.tensor import Tensor
from tilelang.source import Span
from tilelang.syntax import ast


def declared_mismatch(ty: ast.TypeExpr | None, value: Any, size_of: Callable[[ast.Expr], int | None],
                      dtype_of: Callable[[str], DType | None]) -> tuple[str, str, str, Tensor] | None:
    """Where `value` (a tensor, or a tuple holding tensors) is not what the written type `ty` declares (`let
    t: Tensor<f32, [16]> = ..`, a host function's result type): (which: "dtype", "rank" or "dim", what it
    has, what to write instead, the tensor); the checker took the written type for the value's (hrev29: a `[?]` value of 8 elements bound as
    `[16]`, an `f32` file's `load_npy` bound as `f16`, a 2-D one as 1-D, ran, and failed later, far from the
    declaration, or not at all). `size_of` evaluates a declared dimension, `dtype_of` an element type's name
    (None where it cannot: not checked). None where all agree."""
    if isinstance(ty, ast.RefType):
        ty = ty.inner
    if isinstance(ty, ast.TupleType) and isinstance(value, tuple) and len(value) == len(ty.elems):
        for t, v in zip(ty.elems, value, strict=True):
            found = declared_mismatch(t, v, size_of, dtype_of)
            if found is not None:
                return found
        return None
    if not (isinstance(ty, ast.NamedType) and ty.name.name == "Tensor" and len(ty.args) == 2
            and isinstance(ty.args[1], ast.ShapeType) and isinstance(value, Tensor)):
        return None
    elem = ty.args[0]
    want_dt = dtype_of(elem.name.name) if isinstance(elem, ast.NamedType) and not elem.args else None
    if want_dt is not None and want_dt is not value.dtype:
        return ("dtype", f"holds `{value.dtype.value}` values, but its type declares `{want_dt.value}`",
                f"convert it with `as {want_dt.value}`, or declare the element type `{value.dtype.value}`", value)
    dims = ty.args[1].dims
    if len(dims) != len(value.shape):
        return ("rank", f"has {len(value.shape)} dimension{'s' * (len(value.shape) != 1)}, but its type declares "
                f"{len(dims)}", f"reshape it to {len(dims)} dimension{'s' * (len(dims) != 1)} "
                f"(`.reshape([..])`), or declare {len(value.shape)}", value)
    for d, (e, n) in enumerate(zip(dims, value.shape, strict=True)):
        want = size_of(e) if e is not None else None
        if want is not None and want != n:
            return ("dim", f"has {n} elements along dimension {d}, but its type declares {want}",
                    f"make a tensor whose dimension {d} is {want} here, or declare the dimension `?`", value)
    return None


def declared_diagnostic(found: tuple[str, str, str, Tensor], what: str, ty: ast.TypeExpr, span: Span,
                        where: str, argument: bool = False) -> Diagnostic:
    """E0714 for `declared_mismatch`'s finding (a host function's `argument`: E0502 for an element type,
    E0503 for a rank, as the Python API's call says them): `what` names the value ("`t`", "the result of
    `make`"), `span` is where the value is, `ty` the written type, `where` the help's place to change it."""
    which, has, fix, t = found
    code = {"dtype": lcodes.DTYPE_MISMATCH, "rank": lcodes.RANK_MISMATCH}.get(which, rcodes.HOST_SHAPE) \
        if argument else rcodes.HOST_SHAPE
    return (Diagnostic.error(code, f"{what} {has}")
            .primary(span, f"a `Tensor<{t.dtype.value}, {list(t.shape)}>` here")
            .secondary(ty.span, "the type declared here")
            .note("the checker takes a written type for the value's: a tensor of another shape or element "
                  "type is refused where it is bound, not where a later use fails")
            .with_help(f"{fix} {where}"))


def npy_type_mismatch(call: ast.Call, path: str, dt: DType, dtype_of: Callable[[str], DType | None]
                      ) -> Diagnostic | None:
    """E0713 for `load_npy::<T>(path)` of a file of element type `dt`, not `T` (the checker took `T` for the
    file's); None where there is no turbofish or it agrees."""
    g = call.generics[0] if call.generics else None
    want = dtype_of(g.name.name) if isinstance(g, ast.NamedType) and not g.args else None
    if want is None or want is dt:
        return None
    return (Diagnostic.error(
        rcodes.NPY_FORMAT, f"`{path}` holds `{dt.value}` values, but `load_npy::<{want.value}>` reads `{want.value}`")
        .primary(call.span, f"`{want.value}` declared here")
        .note("the checker takes the turbofish's element type for the file's: a file of another type is refused "
              "where it is read")
        .with_help(f"read it as it is, `load_npy::<{dt.value}>(..)`, and convert it with `as {want.value}` (or "
                   "save the file with that element type)"))
