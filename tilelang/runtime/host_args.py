"""The tensor arguments of a host function call, checked against the declared
shapes, and the const generics they bind.

The type checker knows a host tensor's shape only where it is a constant;
a tensor made from run-time values (`zeros::<f32>([n])`, `load_npy`, an
array from the Python API) reaches a host `fn` as `[?]`. So a call checks at
run time what the types promise inside the function: each dimension the
parameter declares as a constant (`[4]`, `[W, W + 1]`) is the argument's,
and a const generic (`fn f<const N: i32>(x: &Tensor<f32, [N]>)`) takes the
value of the dimensions that name it, the same in every argument, or the
call's turbofish (`f::<4>(..)`). Both `tilec run` and the Python API's host
functions call through here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.codes.launch import GENERIC_CONFLICT
from tilelang.diagnostics.codes.types import CANNOT_INFER, LITERAL_OUT_OF_RANGE
from tilelang.diagnostics.generic_range import generic_misfit_words, generic_misfits
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.runtime import host_ops as ops
from tilelang.runtime.tensor import Tensor
from tilelang.sema.program import Program
from tilelang.sema.types import Dim, DivAtom, RefT, TensorT, TupleT, eval_dim
from tilelang.source import Span
from tilelang.syntax import ast


def bind_params(program: Program, decl: ast.FnDecl, key: str, args: list[Any], span: Span,
                explicit: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The values of `decl`'s const generics for this call (name -> scalar),
    after checking every tensor argument's dimensions against its parameter's
    (E0714). A generic that nothing binds is E0215 when the body is run."""
    info = program.functions.get(key)
    if info is None or len(info.param_types) != len(args):
        return {}
    consts = [g for g in decl.generics if g.is_const]
    env: dict[str, int] = {}
    for g in consts:
        v = (explicit or {}).get(g.name.name)
        if isinstance(v, int) and not isinstance(v, bool):
            env[g.name.name] = v
    pairs = [(p, shape, t) for p, ty, a in zip(decl.params, info.param_types, args, strict=True)
             for shape, t in _tensors(ty, a)]
    names = {g.name.name for g in consts}
    for _, shape, t in pairs:  # bare generics first: `[N]` binds N
        for dim, size in zip(shape, t.shape, strict=True):
            sym = dim.as_symbol() if isinstance(dim, Dim) else None
            if sym in names and sym not in env:
                env[sym] = size
    for p, shape, t in pairs:
        for d, (dim, size) in enumerate(zip(shape, t.shape, strict=True)):
            if dim is None:
                continue
            try:
                zero = _zero_divisor(dim, env)
                want = eval_dim(dim, env)
            except (KeyError, ValueError, ZeroDivisionError):
                continue  # a dimension of generics nothing binds: not checkable
            if zero is not None:  # the host's rule, as for `N / M` in its body (a kernel's type: 0)
                raise TileError(_zero_dim(decl, p, d, dim, zero, span))
            if want != size:
                raise TileError(_mismatch(decl, p, d, size, want, dim, span, t))
    for g, v, dt in generic_misfits(consts, env):  # `const N: u8` of a tensor of 300: it wrapped to 44 (hrev29)
        message, label, help = generic_misfit_words(g, v, dt, f"function `{decl.name.name}`")
        raise TileError(Diagnostic.error(LITERAL_OUT_OF_RANGE, message).primary(span, f"called with `{g.name.name}` "
                                         f"= {v}").secondary(g.span, label).with_help(help))
    out: dict[str, Any] = {}
    for g in consts:
        name = g.name.name
        if name not in env:
            raise TileError(_unbound(decl, g, span))
        dt = DType.parse(g.ty.name.name) if isinstance(g.ty, ast.NamedType) else DType.I32
        out[name] = ops.to_scalar(env[name], dt or DType.I32)
    return out


def bind_types(decl: ast.FnDecl, args: list[Any], span: Span,
               given: Mapping[str, Any] | None = None) -> dict[str, DType]:
    """The element types of `decl`'s type parameters for this call (name ->
    dtype): what the call gave or the checker settled (`given`: `f::<i8>(..)`,
    `f(1)`'s `i32`), else the tensors' element types (a `load_npy` tensor's is
    known only now), else a scalar argument's own type. A body that reads `T`
    (`zeros::<T>(..)`, `x as T`, a launch `k::<T>(..)`) reads it here. Two
    tensors that give `T` different types are E0504; a `T` that nothing gives
    is E0215, as for a const generic."""
    names = [g.name.name for g in decl.generics if not g.is_const]
    if not names:
        return {}
    env: dict[str, DType] = {n: v for n, v in (given or {}).items() if n in names and isinstance(v, DType)}
    srcs: dict[str, ast.Param] = {}
    pairs = list(zip(decl.params, args, strict=False))
    for p, a in pairs:  # tensors first: their element types are certain
        for name, dt in _tensor_types(p.ty, a, names):
            if name not in env:
                env[name], srcs[name] = dt, p
            elif env[name] is not dt and name in srcs:
                raise TileError(_type_conflict(decl, name, srcs[name], env[name], p, dt, span))
    for p, a in pairs:  # then scalars `a: T`: a NumPy scalar's type, else a literal's default
        for name, dt in _scalar_types(p.ty, a, names):
            env.setdefault(name, dt)
    for g in decl.generics:
        if not g.is_const and g.name.name not in env:
            raise TileError(_unbound_type(decl, g, span))
    return env


def _tensor_types(ty: ast.TypeExpr | None, arg: Any, names: list[str]) -> list[tuple[str, DType]]:
    """(type parameter, element type) for each `Tensor<T, ..>` of an argument."""
    inner = ty.inner if isinstance(ty, ast.RefType) else ty
    if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor" and inner.args and isinstance(arg, Tensor):
        elem = inner.args[0]
        if isinstance(elem, ast.NamedType) and not elem.args and elem.name.name in names:
            return [(elem.name.name, arg.dtype)]
        return []
    if isinstance(inner, ast.TupleType) and isinstance(arg, tuple) and len(arg) == len(inner.elems):
        return [x for t, a in zip(inner.elems, arg, strict=True) for x in _tensor_types(t, a, names)]
    return []


def _scalar_types(ty: ast.TypeExpr | None, arg: Any, names: list[str]) -> list[tuple[str, DType]]:
    """(type parameter, element type) for each scalar `T` of an argument
    (tuples too): a NumPy scalar's own type, else a Python number's default
    (`i32`, `f32`: a literal's)."""
    inner = ty.inner if isinstance(ty, ast.RefType) else ty
    if isinstance(inner, ast.NamedType) and not inner.args and inner.name.name in names \
            and not isinstance(arg, Tensor):
        dt = ops.scalar_dtype_of(arg)
        if dt is None and isinstance(arg, (int, float)):
            dt = DType.F32 if isinstance(arg, float) else DType.I32
        return [] if dt is None else [(inner.name.name, dt)]
    if isinstance(inner, ast.TupleType) and isinstance(arg, tuple) and len(arg) == len(inner.elems):
        return [x for t, a in zip(inner.elems, arg, strict=True) for x in _scalar_types(t, a, names)]
    return []


def _type_conflict(decl: ast.FnDecl, name: str, p1: ast.Param, d1: DType, p2: ast.Param, d2: DType,
                   span: Span) -> Diagnostic:
    fn = decl.name.name
    return (Diagnostic.error(GENERIC_CONFLICT, f"`{name}` of function `{fn}` is `{d1.value}` from the element type of "
                             f"`{p1.name.name}` but `{d2.value}` from the element type of `{p2.name.name}`")
            .primary(span, "called here")
            .secondary(p1.span, f"this gives `{name}` = `{d1.value}`")
            .secondary(p2.span, f"this gives `{name}` = `{d2.value}`")
            .with_help(f"pass tensors of one element type, or convert one with `as {d1.value}`"))


def _unbound_type(decl: ast.FnDecl, g: ast.GenericParam, span: Span) -> Diagnostic:
    name, fn = g.name.name, decl.name.name
    return (Diagnostic.error(CANNOT_INFER, f"cannot infer the type parameter `{name}` of `{fn}`")
            .primary(span, "called here")
            .secondary(g.span, f"`{name}` declared here")
            .note(f"no argument is a tensor of `{name}` or a `{name}` scalar, so its type is not known at run time")
            .with_help(f"give it explicitly: `{fn}::<f32>(..)` (from Python: `module.{fn}[np.float32](..)`)"))


def explicit_generics(inst: Mapping[str, Any] | None, scope: Any) -> dict[str, int]:
    """The const generics the checker fixed at a call (`f::<4>(..)`, or what
    the argument types gave), as integers: symbolic ones (`f::<N>(..)` inside
    a generic function) read the caller's generics off `scope`."""
    out: dict[str, int] = {}
    for name, v in (inst or {}).items():
        if isinstance(v, int) and not isinstance(v, bool):
            out[name] = v
        elif isinstance(v, Dim):
            env = {}
            for sym in v.symbols():
                s = scope.lookup(sym)
                if s is None:
                    break
                env[sym] = int(s.vars[sym])
            else:
                with contextlib.suppress(KeyError, ValueError, ZeroDivisionError):
                    out[name] = eval_dim(v, env)
    return out


def _unbound(decl: ast.FnDecl, g: ast.GenericParam, span: Span) -> Diagnostic:
    name, fn = g.name.name, decl.name.name
    return (Diagnostic.error(CANNOT_INFER, f"cannot infer the generic parameter `{name}` of `{fn}`")
            .primary(span, "called here")
            .secondary(g.span, f"`{name}` declared here")
            .note(f"no tensor argument has a dimension `{name}`, so its value is not known at run time")
            .with_help(f"give it explicitly: `{fn}::<..>(..)` (from Python: `module.{fn}[..](..)`)"))


def _tensors(ty: Any, arg: Any) -> list[tuple[tuple[Dim | None, ...], Tensor]]:
    """(declared shape, tensor) for each tensor of an argument (tuples too)."""
    inner = ty.inner if isinstance(ty, RefT) else ty
    if isinstance(inner, TensorT) and isinstance(arg, Tensor):
        if inner.shape is None or len(inner.shape) != len(arg.shape):
            return []  # a rank the checker could not see: not ours to word
        return [(inner.shape, arg)]
    if isinstance(inner, TupleT) and isinstance(arg, tuple) and len(arg) == len(inner.elems):
        return [x for t, a in zip(inner.elems, arg, strict=True) for x in _tensors(t, a)]
    return []


def _zero_divisor(dim: Dim, env: Mapping[str, int]) -> DivAtom | None:
    """The first `a / b` or `a % b` of `dim` whose divisor is 0 under `env`."""
    for mono, _ in dim.terms:
        for atom in mono:
            if isinstance(atom, DivAtom):
                inner = _zero_divisor(atom.num, env) or _zero_divisor(atom.den, env)
                if inner is not None:
                    return inner
                if eval_dim(atom.den, env) == 0:
                    return atom
    return None


def _zero_dim(decl: ast.FnDecl, p: ast.Param, d: int, dim: Dim, atom: DivAtom, span: Span) -> Diagnostic:
    what = "division" if atom.op == "/" else "remainder"
    return (Diagnostic.error(
        rcodes.HOST_DIV_ZERO,
        f"integer {what} by zero in dimension {d} of parameter `{p.name.name}` of `{decl.name.name}`: "
        f"`{atom}` with `{atom.den}` = 0")
        .primary(span, "the call whose generics make the divisor zero")
        .secondary(p.span, f"`{dim}` is declared here")
        .note("a host function's types are evaluated by the host's rules, which refuse a division by "
              "zero as its body does (a kernel's `x / 0` is 0)")
        .with_help(f"call `{decl.name.name}` with a nonzero `{atom.den}`, or declare the dimension `?`"))


def _mismatch(decl: ast.FnDecl, p: ast.Param, d: int, size: int, want: int, dim: Dim, span: Span,
              t: Tensor) -> Diagnostic:
    name, fn = p.name.name, decl.name.name
    spelled = str(dim)
    why = f"`{spelled}` = {want}" if spelled != str(want) else str(want)
    return (Diagnostic.error(
        rcodes.HOST_SHAPE,
        f"argument `{name}` of `{fn}` has {size} elements along dimension {d}, but its parameter "
        f"declares {why}")
        .primary(span, f"`{name}` is a `Tensor<{t.dtype.value}, {list(t.shape)}>` here")
        .secondary(p.span, f"`{name}` is declared here")
        .with_help(f"pass a tensor whose dimension {d} is {want}, or declare it `?` in `{fn}` to take any size"))

