"""Calls: builtin functions and methods, user functions, kernels.

Decides what a call is and hands it to the rule that types it: a builtin function or method (`builtin_call`:
arity, keywords, host or kernel context, then the rule in `rules.RULES`), a user function (`fn_call`, generics
inferred by `generics`) or a kernel launch (`launch.check_kernel_call`). Enqueues every called function for
checking in the caller's context (host or device code) and records the device call graph.
"""

from __future__ import annotations

import itertools
from typing import Any

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.intrinsics.bit_habits import BIT_METHODS, bit_method_help
from tilelang.intrinsics.habits import FOREIGN_MODULES, foreign_type_help
from tilelang.intrinsics.math_habits import MATH_ARGS, MATH_HABITS, saturating_help, scalar_method_habit
from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, Signature
from tilelang.sema.call_habits import (
    AS,
    DEVICES,
    FLIPS,
    HABITS,
    LIKES,
    HABIT_ARGS,
    KW_HABITS,
    METHOD_HABITS,
    SHAPE_WORDS,
    VALUE_KINDS,
    conversion_target,
    last_axis_help,
    len_help,
    mean_help,
    operand,
    tile_dims_help,
    with_args,
)
from tilelang.sema.coerce import coerce, settle
from tilelang.sema.context import CallCx, CheckCx, Fx, module_holding, plural, suggest
from tilelang.sema.generics import arg_mismatch, generic_values_fit, subst_env, turbofish, unify
from tilelang.sema.kernel import graph_effect
from tilelang.sema.launch import check_kernel_call
from tilelang.sema.names import resolve_path
from tilelang.sema.program import FnInfo, Symbol, SymbolKind
from tilelang.sema.ruleargs import listed_axes, several_axes_help
from tilelang.sema.split_habits import PARTS, arity_help, flip_help, parts, range_adaptor_help, replay_loop_help
from tilelang.sema.split_habits import flip_1d_help as _flip_help
from tilelang.sema.rules import RULES
from tilelang.sema.typeops import deref, is_poison
from tilelang.sema.types import (
    ERROR,
    Dim,
    GraphT,
    HandleT,
    OpT,
    PartitionT,
    RefT,
    ScalarT,
    ShapeT,
    TensorT,
    TileT,
    TileViewT,
    TupleT,
    Type,
    TypeParam,
    UntypedFloat,
    UnitT,
    UntypedInt,
    shape_str,
    subst_type,
)
from tilelang.source import DUMMY_SPAN, Span
from tilelang.syntax import ast

_RECEIVER_WORDS = {
    "tile": "tiles", "param": "tensor parameters inside a kernel", "view": "partition views inside a kernel",
    "tensor": "host tensors", "partition": "host partitions", "op": "kernel calls", "handle": "launch handles",
    "graph": "graphs", "scalar": "scalars",
}


# Host effects that a `graph { }` block would run once while recording instead of
# replaying (E0228): calls and methods.
_GRAPH_EFFECTS = frozenset({"print", "assert", "assert_close", "load_npy"})


_GRAPH_EFFECT_METHODS = frozenset({"replay", "save_npy"})


# methods whose result has the receiver's element type (a store context passes through them; round 12)
_KEEPS_ELEMENT = frozenset(("sum", "max", "min", "prod", "cumsum", "cumprod", "cummax", "cummin", "reshape",
                            "broadcast", "transpose", "permute"))

# calls whose `[i, j]` argument is a tile index (an `i32` each, in a kernel)
_INDEXED = frozenset(("load", "load_padded", "store", "prefetch", "atomic_add", "atomic_max", "atomic_min",
                      "store_unchecked"))


def _index_context(tcx: CheckCx, args: Any, atomic: ast.Call | None = None, load: bool = False) -> None:
    """A tile index's elements are `i32`: a mix inside one (`j + 1i64`) casts toward it (round 12, fuzz seed
    263: the help cast `j as i64`, and the index was then refused as an `i64`); an atomic's are noted, and a
    load's (a tile of indices there is a gather, round 30)."""
    for a in args:
        if isinstance(a.value, ast.ArrayExpr):
            for x in a.value.elems:
                tcx.store_dtypes.setdefault(x, (DType.I32, "a tile index is an `i32`"))
                if atomic is not None:
                    tcx.atomic_indexes[x] = atomic
                if load:
                    tcx.gather_indexes.add(x)


def check_call(tcx: CheckCx, e: ast.Call, fx: Fx, expected: Type | None) -> Type:
    callee = e.callee
    sym: Symbol | None
    if isinstance(callee, ast.Path):
        sym = resolve_path(tcx, callee, fx, want_fn=True)
        if sym is None:
            _check_args_only(tcx, e, fx)
            return ERROR
    else:
        name = callee.ident.name
        sym = fx.lookup(name)
        if sym is None and name in fx.module.failed:  # its `use` failed, and said so
            _check_args_only(tcx, e, fx)
            return ERROR
        if sym is None:
            sig = FUNCTIONS.get(name)
            if sig is not None:
                if fx.in_kernel and name in _INDEXED:
                    _index_context(tcx, e.args, e if name.startswith("atomic_") else None)
                bsym = tcx.builtin_syms.setdefault(name, Symbol(SymbolKind.BUILTIN, name, signature=sig,
                                                                qualname=name))
                tcx.program.symbols[e] = bsym
                tcx.program.symbols[callee] = bsym
                if fx.graph and name in _GRAPH_EFFECTS:
                    graph_effect(tcx, e.span, f"`{name}`")
                return _builtin_call(tcx, e, sig, fx, None, None, expected)
            if "*" in fx.module.failed:  # a glob or file `use` failed: `name` may be its
                _check_args_only(tcx, e, fx)
                return ERROR
            d = tcx.err(N.UNKNOWN_FUNCTION, f"cannot find function `{name}` in this scope",
                        callee.ident.span, "not found in this scope")
            fns = (n for n, s in fx.module.scope.items() if s.kind in (SymbolKind.FN, SymbolKind.KERNEL))
            guess = suggest(name, itertools.chain(fns, FUNCTIONS))
            habit = HABITS.get(name)
            if habit is None and name in MATH_HABITS:  # `tan(x)`: not `tanh`, the similar name
                _check_args_only(tcx, e, fx)
                x = (tcx.snippet(e.args[0].value) or "x").removeprefix("&") if e.args else "x"
                spelt = MATH_HABITS[name]
                if name in BIT_METHODS and len(e.args) == 1:  # `__popc(x)` of a `u64`: in its own width (round 27)
                    bits = bit_method_help(name, getattr(deref(tcx.program.types.get(e.args[0].value)), "dtype", None),
                                           x, [])
                    spelt = bits.replace("{", "{{").replace("}", "}}") if bits else spelt
                more = [(tcx.snippet(a.value) or "").removeprefix("&") for a in e.args[1:]]   # values, not borrows
                if name in MATH_ARGS and len(more) == len(MATH_ARGS[name]) and all(0 < len(a) < 30 for a in more):
                    spelt = with_args(spelt, MATH_ARGS[name], more)  # `hypot(a, b)`: b, not `y`
                text = spelt.format(x=operand(x) if len(x) < 30 else "x")
                if name in ("round", "rint") and e.args:
                    text = _round_in_type(tcx, e.args[0].value, spelt, text, operand(x) if len(x) < 30 else "x")
                return tcx.emit(d.with_help(text))
            if name == "len" or name in FLIPS or name in LIKES:  # the help depends on the argument's type
                _check_args_only(tcx, e, fx)
                return tcx.emit(d.with_help(len_help(tcx, e) if name == "len" else habit(tcx, e)))
            homes = tcx.loader.std_items().get(name) if habit is None else None
            held = module_holding(tcx, fx, name)  # `use good;` imports the module, not its items
            if habit is not None:
                d = d.with_help(habit(tcx, e))
            elif held is not None:
                d = d.with_help(f"`{name}` is in the module `{held[0]}` that a `use` imports: call "
                                f"`{held[0]}::{name}(..)`, or import the function itself with `use {held[1]};`")
            elif homes:  # `softmax(..)` without `use std::nn::softmax;`
                d = d.with_help(f"`{name}` is in the standard library: import it with `use {homes[0]}::{name};` "
                                "at the top of the file")
            elif guess:
                d = d.with_help(f"a function with a similar name exists: `{guess}`")
            elif (std_guess := suggest(name, tcx.loader.std_items())) is not None:
                home = tcx.loader.std_items()[std_guess][0]
                d = d.with_help(f"the standard library has `{std_guess}`: `use {home}::{std_guess};`, and call "
                                f"`{std_guess}(..)`")
            elif name in METHODS:
                d = d.with_help(f"`{name}` is a method: `x.{name}(..)`")
            else:
                d = d.with_help(f"define it (`fn {name}(..) {{ .. }}`), or import it with `use`")
            _check_args_only(tcx, e, fx)
            return tcx.emit(d)
    tcx.program.symbols[e] = sym
    tcx.program.symbols[callee] = sym
    if sym.kind not in (SymbolKind.FN, SymbolKind.KERNEL):
        _check_args_only(tcx, e, fx)
        if sym.kind is SymbolKind.LOCAL and is_poison(sym.ty):
            return ERROR  # `let f = twice; f(3)`: the `let` said why (E0203, no function values)
        d = tcx.err(N.NOT_CALLABLE, f"`{sym.name}` is not a function", callee.span,
                    f"`{sym.name}` is a {sym.kind.value}")
        if sym.span != DUMMY_SPAN:
            d = d.secondary(sym.span, f"`{sym.name}` is defined here")
        item = fx.module.scope.get(sym.name) if isinstance(callee, ast.Name) else None
        if item is not None and item is not sym and item.kind in (SymbolKind.FN, SymbolKind.KERNEL):
            # `let k = arange::<i32>(3); k(z.partition(..))`: the local hides the kernel `k`
            what = "kernel" if item.kind is SymbolKind.KERNEL else "function"
            return tcx.emit(d.note(f"this {sym.kind.value} hides the {what} `{sym.name}` of the same name")
                            .with_help(f"rename the {sym.kind.value}"
                                       + (f" (`let {sym.name}2 = ..`)" if sym.kind.value == "local" else "")
                                       + " so that "
                                       f"`{sym.name}(..)` calls the {what}"))
        return tcx.emit(d.with_help("call a `fn` or `kernel fn`; a value cannot be called"
                                    + (f" (use `{sym.name}` without `(..)`)" if not e.args else "")))
    info = tcx.program.fn_info(sym)
    if info is None:
        _check_args_only(tcx, e, fx)
        return ERROR
    return _user_call(tcx, e, info, fx)


def _check_args_only(tcx: CheckCx, e: ast.Call | ast.MethodCall, fx: Fx) -> None:
    """The arguments of a call that has no signature (an unknown or not callable name): each is checked for its
    own errors, but a list `[a, b]` only element by element, since without a parameter nothing says it is a
    shape (`concat([t, u], 0)` is E0102 alone, not also two E0203 "expected an integer" for `t` and `u`)."""
    for a in e.args:
        if isinstance(a.value, ast.ArrayExpr):
            for x in a.value.elems:
                tcx.check_expr(x, fx, None)
        else:
            tcx.check_expr(a.value, fx, None)


def _keepdims_help(tcx: CheckCx, e: ast.Call | ast.MethodCall) -> str | None:
    """`t.max(1, keepdims = true)` (NumPy's, round 14): the call without the keyword and the reshape that puts
    the axis back, written for the receiver's shape; None where the axis or the shape is not known here."""
    pos = [a.value for a in e.args if a.name is None]
    # (huser30: PyTorch's `dim = 1` beside its `keepdim = true` is the axis too, and `-1` counts from the end)
    pos += [a.value for a in e.args if a.name is not None and a.name.name in ("dim", "axis")]
    if isinstance(e, ast.MethodCall):
        src, axis, call = e.receiver, pos[0] if pos else None, f"{tcx.receiver_snippet(e.receiver)}.{e.method.name}"
    elif isinstance(e.callee, ast.Name) and len(pos) == 2:
        src, axis, call = pos[0], pos[1], f"{e.callee.ident.name}({tcx.snippet(pos[0])}, "
    else:
        return None
    shape = getattr(tcx.program.types.get(src), "shape", None)
    if isinstance(axis, ast.Unary) and axis.op == "-" and isinstance(axis.operand, ast.IntLit) and shape:
        k = len(shape) - axis.operand.value
    else:
        k = axis.value if isinstance(axis, ast.IntLit) else None
    if k is None or not shape or not 0 <= k < len(shape) or None in shape:
        return None
    kept = shape_str(tuple(Dim.const(1) if i == k else d for i, d in enumerate(shape)))
    whole = f"{call}({k})" if isinstance(e, ast.MethodCall) else f"{call}{k})"
    return f"a reduction removes its axis: put a size-1 axis back where it was, `{whole}.reshape({kept})`"


def _axes_keyword_help(tcx: CheckCx, e: ast.Call | ast.MethodCall, a: ast.Arg) -> str | None:
    """NumPy's `t.sum(axis = (1, 2))`, PyTorch's `dim = [1, 2]`: the reductions chained (dropping `axis =`
    led to `t.sum((1, 2))`, another error)."""
    axes = listed_axes(a.value) if a.name is not None and a.name.name in ("axis", "axes", "dim") else None
    if axes is None:
        return None
    name = e.method.name if isinstance(e, ast.MethodCall) else e.callee.ident.name if isinstance(e.callee, ast.Name) \
        else None
    x = e.receiver if isinstance(e, ast.MethodCall) else e.args[0].value if e.args and e.args[0].name is None else None
    if name is None or name not in ("sum", "max", "min", "prod", "argmax", "argmin") or x is None:
        return None
    return several_axes_help(tcx, e, name, x, tcx.program.types.get(x), axes)


# the calls whose first (or only) argument is a list of integers, one per axis (PyTorch writes them spread out:
# `x.reshape(16, 1)`, `x.permute(1, 0)`, `torch.zeros(16, 8)`) -> what the list is
_LISTED = {"reshape": "the new shape", "broadcast": "the new shape", "permute": "the order of the axes",
           "zeros": "the shape", "ones": "the shape", "full": "the shape"}


def _listed_shape_help(tcx: CheckCx, e: ast.Call | ast.MethodCall, name: str, recv: ast.Expr | None,
                       args: list[ast.Expr], tys: list[Type]) -> str | None:
    """`x.reshape(16, 1)`, `x.permute(1, 0)`, `zeros::<f32>(16, 8)`, `full::<f32>(16, 8, 0.0)` (PyTorch's spread-out
    sizes; huser30): the help was "call it with 1 argument"; it is the call with the integers in one list."""
    if name not in _LISTED or len(args) < 2:
        return None
    dims = args[:-1] if name == "full" else args
    if len(dims) < 2 or not all(isinstance(t, UntypedInt) or (isinstance(t, ScalarT) and isinstance(t.dtype, DType)
                                                              and t.dtype.is_int and t.dtype is not DType.BOOL)
                                for t in tys[:len(dims)]):
        return None
    listed = "[" + ", ".join(tcx.snippet(a) for a in dims) + "]"
    rest = "".join(f", {tcx.snippet(a)}" for a in args[len(dims):])
    if recv is not None:
        call = f"{tcx.receiver_snippet(recv)}.{name}({listed}{rest})"
    else:
        gen = f"::<{tcx.snippet(e.generics[0])}>" if e.generics else ""
        call = f"{name}{gen}({listed}{rest})"
    return f"`{name}` takes {_LISTED[name]} as one list, in brackets: `{call}`"


def _dtype_keyword_help(tcx: CheckCx, e: ast.Call | ast.MethodCall, a: ast.Arg) -> str | None:
    """`zeros([16, 8], dtype = f32)`, `full(.., dtype = tl.float16)`: the call with the element type as its turbofish,
    where the value names one (a Tile type, or another library's: `float16`, `tl.float32`, `torch.bfloat16`)."""
    from tilelang.intrinsics.habits import FOREIGN_TYPES

    v = a.value
    name = v.ident.name if isinstance(v, ast.Name) else v.segments[-1].name if isinstance(v, ast.Path) else \
        v.field.name if isinstance(v, ast.Field) else None
    if name is None:
        return None
    ty = name if DType.parse(name) is not None else FOREIGN_TYPES.get(name)
    if ty is None:
        return None
    rest = ", ".join(tcx.snippet(b.value) for b in e.args if b is not a)
    if isinstance(e, ast.MethodCall):   # PyTorch's `x.sum(0, dtype = torch.float32)`: the cast first
        return (f"convert first, then reduce in that type: `({tcx.snippet(e.receiver)} as {ty}).{e.method.name}({rest})`"
                if tcx.snippet(e.receiver) else None)
    if not isinstance(e.callee, ast.Name):
        return None
    return f"give the element type with a turbofish: `{e.callee.ident.name}::<{ty}>({rest})`"


def _split_args(tcx: CheckCx, e: ast.Call | ast.MethodCall, fx: Fx, allowed_kw: tuple[str, ...], owner: str,
                decl_span: Span | None) -> tuple[list[ast.Expr], list[Type], dict[str, tuple[ast.Arg, Type]], int]:
    """The positional arguments, their types, the keyword arguments, and how many keywords were refused
    (E0107, reported here): a count short by those is no second error (`randn([8], seed = 0)` was E0107 and
    then E0105 "takes 2 arguments but 1 argument was supplied", huser21)."""
    args: list[ast.Expr] = []
    refused = 0
    tys: list[Type] = []
    kws: dict[str, tuple[ast.Arg, Type]] = {}
    for a in e.args:
        if a.name is not None and a.name.name == "dtype" and a.name.name not in allowed_kw \
                and (h := _dtype_keyword_help(tcx, e, a)) is not None:
            # (huser30: `full([16, 8], 0, dtype = f32)`, Triton's and NumPy's: `f32` read as a value was E0101
            # first, with a help about `zeros`; one error, the call with its turbofish)
            tcx.emit(tcx.err(N.UNKNOWN_KEYWORD, f"{owner} has no keyword argument `dtype`", a.name.span,
                             "unknown keyword argument").with_help(h))
            refused += 1
            continue
        ty = tcx.check_expr(a.value, fx, None)
        if a.name is None:
            args.append(a.value)
            tys.append(ty)
            continue
        if a.name.name not in allowed_kw:
            d = tcx.err(N.UNKNOWN_KEYWORD, f"{owner} has no keyword argument `{a.name.name}`", a.name.span,
                        "unknown keyword argument")
            guess = suggest(a.name.name, allowed_kw)
            # (huser30: the axis of PyTorch's `x.max(dim = 1, keepdim = true)` and NumPy's `x.sum(axis = 0)` is
            # read where the help puts it, by position: the call was typed without it, `x.sum()`, a scalar whose
            # `.reshape` was a second, misleading error)
            by_position = a.name.name in ("dim", "axis") and not allowed_kw and guess is None
            habit = _keepdims_help(tcx, e) if a.name.name in ("keepdims", "keep_dims", "keepdim") or (
                by_position and any(b.name is not None and b.name.name in ("keepdims", "keep_dims", "keepdim")
                                    for b in e.args)) else None
            habit = habit or _axes_keyword_help(tcx, e, a)
            habit = habit or KW_HABITS.get(a.name.name) or replay_loop_help(e, tcx.snippet(e.args[0].value))
            if habit is not None:
                d = d.with_help(habit)
            elif guess:
                d = d.with_help(f"did you mean `{guess}`?")
            elif allowed_kw:
                d = d.note("keyword arguments: " + ", ".join(f"`{k}`" for k in allowed_kw)).with_help(
                    "use one of those names, or pass the value by position")
            else:
                d = d.note(f"{owner} takes only positional arguments").with_help(
                    f"pass the value by position: drop `{a.name.name} =`")
            if decl_span is not None:
                d = d.secondary(decl_span, "defined here")
            tcx.emit(d)
            if by_position and (habit is None or "keepdim" in habit or "put a size-1 axis back" in habit):
                args.append(a.value)
                tys.append(ty)
                continue
            refused += 1
            continue
        if a.name.name in kws:
            tcx.emit(tcx.err(N.DUPLICATE_DEFINITION, f"keyword argument `{a.name.name}` given twice",
                             a.name.span, "given again here")
                     .secondary(kws[a.name.name][0].name.span, "first given here")
                     .with_help("give each keyword argument once"))  # type: ignore[union-attr]
            continue
        kws[a.name.name] = (a, ty)
    return args, tys, kws, refused


def _builtin_call(tcx: CheckCx, e: ast.Call | ast.MethodCall, sig: Signature, fx: Fx, recv: ast.Expr | None,
                  recv_ty: Type | None, expected: Type | None) -> Type:
    owner = f"`{sig.name}`" if not sig.is_method else f"method `{sig.name}`"
    args, tys, kws, refused = _split_args(tcx, e, fx, sig.keywords, owner, None)
    span = e.method.span if isinstance(e, ast.MethodCall) else e.callee.span
    if not sig.context.allows(fx.in_kernel):
        if fx.in_kernel:
            where = "inside a kernel" if fx.info is None or fx.info.is_kernel else "in device code"
            return tcx.emit(tcx.err(T.HOST_ONLY, f"`{sig.name}` is only allowed in host code", span,
                                    where)
                            .note(f"`{sig.signature}`: {sig.doc}")
                            .with_help(f"call `{sig.name}` in `main` (or another host function) and pass "
                                       "the result to the kernel"))
        d = (tcx.err(T.KERNEL_ONLY, f"`{sig.name}` is only allowed inside a kernel", span, "in host code")
             .note(f"`{sig.signature}`: {sig.doc}"))
        ts = [deref(t) for t in tys[:2]]
        if sig.name in ("dot", "mma") and len(ts) == 2 and all(isinstance(t, TensorT) and t.shape is not None
                                                                and len(t.shape) == 2 for t in ts):
            # NumPy's `a @ b` on the host: the product by broadcasting, which host tensors have
            a, b = (tcx.snippet(x) or "x" for x in args[:2])
            a, b = (a, b) if len(a) + len(b) < 50 else ("a", "b")
            (m, k), n = (d if d is not None else w for d, w in zip(ts[0].shape, "mk", strict=True)), \
                ts[1].shape[1] or "n"  # type: ignore[union-attr]
            prod = f"({a}.reshape([{m}, {k}, 1]) * {b}.reshape([1, {k}, {n}])).sum(1)"
            return tcx.emit(d.with_help(f"on the host, the product of two tensors is `{prod}`"
                                        + (f" (plus `{tcx.snippet(args[2])}`)" if sig.name == "mma" and len(args) > 2
                                           else "") + "; in a kernel, `dot` of tiles"))
        if sig.name in ("dot", "mma") and len(ts) >= 2 and all(isinstance(t, TensorT) and t.shape is not None
                                                               and len(t.shape) == 1 for t in ts):
            a, b = (operand(tcx.snippet(x) or "x") for x in args[:2])  # two vectors: NumPy's `np.dot(x, y)`
            a, b = (a, b) if len(a) + len(b) < 50 else ("x", "y")
            return tcx.emit(d.with_help(f"on the host, the dot product of two vectors is `({a} * {b}).sum()`; in a "
                                        "kernel, `dot` of tiles"))
        return tcx.emit(d.with_help("move this into a `kernel fn` and launch it"))
    n = len(args)
    if n < sig.min_args <= n + refused:  # the refused keyword stands for the missing argument: reported once
        return ERROR
    if n < sig.min_args or (sig.max_args is not None and n > sig.max_args):
        if sig.max_args is None:
            takes = f"at least {plural(sig.min_args, 'argument')}"
        elif sig.min_args == sig.max_args:
            takes = plural(sig.max_args, "argument")
        else:
            takes = f"{sig.min_args} to {sig.max_args} arguments"
        if sig.name == "arange" and n == 2:
            lo, hi = (tcx.snippet(a) for a in args)
            t = tcx.snippet(e.generics[0]) if e.generics else "i32"
            return tcx.emit(tcx.err(N.WRONG_ARG_COUNT, f"{owner} takes 1 argument but 2 arguments were supplied",
                                    e.span, "expected 1 argument")
                            .note("`arange::<T>(n)` counts 0, 1, .., n - 1")
                            .with_help(f"Triton's `tl.arange({lo}, {hi})` is `arange::<{t}>({hi})`" if lo == "0" else
                                       f"for the values {lo} .. {hi} (Triton's `tl.arange({lo}, {hi})`), add the "
                                       f"start: `arange::<{t}>({hi} - {lo}) + {lo}`"))
        if recv is not None and (h := arity_help(sig.name, recv_ty, e, tcx.snippet(recv), tcx.program.types)):
            return tcx.arity_error(owner, takes, n, e.span, None, help=h)
        if (h := _listed_shape_help(tcx, e, sig.name, recv, args, tys)) is not None:
            return tcx.arity_error(owner, takes, n, e.span, None, help=h)
        if sig.name == "mma" and n == 2 and recv is None and all(a := [tcx.snippet(x) for x in args]):
            # `mma(a, b)`, a product with no accumulator (round 23: "call it with 3 arguments")
            return tcx.arity_error(owner, takes, n, e.span, None, help=(
                f"`dot({a[0]}, {a[1]})` is the product of two tiles; `mma({a[0]}, {a[1]}, acc)` adds it to an "
                "accumulator `acc` (`zeros::<f32>([M, N])` to start one)"))
        return tcx.arity_error(owner, takes, n, e.span, None)
    if len(e.generics) > len(sig.generics):
        if sig.generics:
            msg = f"{owner} takes {plural(len(sig.generics), 'generic argument')} but {len(e.generics)} were supplied"
        else:
            msg = f"{owner} takes no generic arguments"
        return tcx.emit(tcx.err(N.WRONG_GENERIC_COUNT, msg, e.generics[-1].span, "unexpected generic argument")
                        .note(f"`{sig.signature}`")
                        .with_help("remove the extra generic argument"))
    cx = CallCx(e, sig, fx, recv, recv_ty, args, tys, e.generics, kws)
    if any(is_poison(t) for t in cx.operand_tys):
        return ERROR
    return RULES[sig.rule](tcx, cx)


# What a member of another language's module is in Tile (`tl.load`, `torch.matmul`, `math.pi`).
_MODULE_MEMBERS = {
    "load": "a kernel reads a tile with `x.load_like(z)` or `x.partition([..]).load([i, ..])`, and writes its own "
            "tile with `z.store(tile)`: no pointers, no masks",
    "store": "a kernel writes its own tile with `z.store(tile)` (no pointers, no masks; stores past the edge "
             "are dropped)",
    "matmul": "a matrix product is `dot(a, b)` (or `mma(a, b, acc)`)",
    "mm": "a matrix product is `dot(a, b)` (or `mma(a, b, acc)`)",
    "bmm": "a matrix product is `dot(a, b)` of 2-D tiles (or `mma(a, b, acc)`)",
    "amax": "a maximum along an axis is `max(t, axis)`; of two tiles, `maximum(a, b)`",
    "amin": "a minimum along an axis is `min(t, axis)`; of two tiles, `minimum(a, b)`",
    "pi": "write `std::math::PI` (or `use std::math::PI;`, then `PI`)",
    "e": "write `std::math::E` (or `use std::math::E;`, then `E`)",
    "inf": "write `inf` (or `f32::INFINITY`)", "nan": "write `nan` (or `f32::NAN`)",
    "relu": "`maximum(x, 0.0)` (or `use std::nn::relu;` for 2-D f32 tiles)",
    "softmax": "`use std::nn::softmax;` (the rows of a 2-D f32 tile)",
    "log_softmax": "`use std::nn::log_softmax;` (the rows of a 2-D f32 tile)",
    "silu": "`use std::nn::silu;` (2-D f32 tiles)", "gelu": "`use std::nn::gelu;` (2-D f32 tiles)",
    "layer_norm": "`use std::nn::layernorm;` (the rows of a 2-D f32 tile)",
    "rms_norm": "`use std::nn::rmsnorm;` (the rows of a 2-D f32 tile)",
}


def module_member(tcx: CheckCx, e: ast.MethodCall | ast.Field, fx: Fx) -> Type | None:
    """E0101 for Triton's `tl.program_id(0)`, NumPy's `np.float32`, PyTorch's
    `torch.float16` (a module of another language, not a name in scope): one
    error, whose help is the Tile spelling of the member. None if the receiver
    is no such module (or a name in scope)."""
    r = e.receiver
    if not isinstance(r, ast.Name) or r.ident.name not in FOREIGN_MODULES or fx.lookup(r.ident.name) is not None:
        return None
    prefix = r.ident.name
    member = e.method.name if isinstance(e, ast.MethodCall) else e.field.name
    lang = FOREIGN_MODULES[prefix]
    if isinstance(e, ast.MethodCall):
        _check_args_only(tcx, e, fx)  # before the help: `len`'s reads the argument's type
    help_ = foreign_type_help(prefix, member)
    if help_ is not None:
        pass
    elif member in HABITS and isinstance(e, ast.MethodCall):  # `tl.range(0, K, BK)`, `tl.program_id(0)`
        help_ = HABITS[member](tcx, e)  # type: ignore[arg-type]
    elif member in _MODULE_MEMBERS:
        help_ = _MODULE_MEMBERS[member]
    elif member in FUNCTIONS:
        help_ = f"Tile's built-ins have no `{prefix}.` prefix: `{FUNCTIONS[member].signature}`"
    else:
        help_ = f"Tile's built-ins have no `{prefix}.` prefix (`tilec doc` lists them)"
    return tcx.emit(tcx.err(N.UNKNOWN_NAME, f"cannot find value `{prefix}` in this scope",
                            r.span.to(e.method.span if isinstance(e, ast.MethodCall) else e.field.span),
                            f"{lang}'s module: not a name in Tile")
                    .with_help(help_))


def check_method_call(tcx: CheckCx, e: ast.MethodCall, fx: Fx, expected: Type | None) -> Type:
    known = module_member(tcx, e, fx)
    if known is not None:
        return known
    if e in tcx.store_dtypes and e.method.name in _KEEPS_ELEMENT:  # `acc = acc + (a * x).sum(1)`: a mix in
        tcx.store_dtypes[e.receiver] = tcx.store_dtypes[e]  # the receiver casts toward the assignment too
    rty = tcx.check_expr(e.receiver, fx, None)
    name = e.method.name
    if fx.graph and name in _GRAPH_EFFECT_METHODS and isinstance(rty, (HandleT, GraphT, TensorT, RefT)):
        graph_effect(tcx, e.span, f"`.{name}()`")
    if is_poison(rty):
        _check_args_only(tcx, e, fx)
        return ERROR
    kind = _receiver_kind(rty, fx)
    sig = METHODS.get(name)
    if name == "store" and e.args:  # the stored value's element type, for the cast help of a mix inside it
        held = rty.tensor if isinstance(rty, TileViewT) else deref(rty)
        if isinstance(held, TensorT) and isinstance(held.dtype, DType):
            tcx.store_dtypes[e.args[0].value] = (held.dtype, f"the result is stored into a tile of `{held.dtype}`")
    if fx.in_kernel and name in _INDEXED:
        _index_context(tcx, e.args, load=name in ("load", "load_padded"))
    # `x.shape()` in a kernel, `z.load()` on the host: a tensor method of the
    # other context, reported as a context error by `_builtin_call`
    other = {"param": "tensor", "tensor": "param"}.get(kind)
    if sig is not None and kind not in sig.receivers and other in sig.receivers \
            and not sig.context.allows(fx.in_kernel):
        kind = other
    if sig is None or kind not in sig.receivers:
        target = conversion_target(e) if kind in ("tile", "tensor", "param", "scalar") else None
        if target is None:  # `x.to(f32)`: the type is no value, but one mistake is one error
            _check_args_only(tcx, e, fx)
        cands = [m for m, s in METHODS.items() if kind in s.receivers and s.context.allows(fx.in_kernel)]
        d = tcx.err(N.UNKNOWN_METHOD, f"no method named `{name}` on type `{rty}`", e.method.span,
                    f"method not found in `{rty}`")
        habit = ((METHOD_HABITS.get(name) if kind != "scalar" else None)  # then Rust's (round 20: `t.signum()`)
                 or scalar_method_habit(name, [tcx.snippet(a.value) or "" for a in e.args])
                 or (METHOD_HABITS[name] if name in HABIT_ARGS else None)) if kind in VALUE_KINDS else None
        if name in ("saturating_add", "saturating_sub", "saturating_mul") and kind in VALUE_KINDS \
                and len(e.args) == 1:  # (round 24: written for the receiver's own type)
            b = operand(tcx.snippet(e.args[0].value) or "b")
            habit = saturating_help(name, getattr(deref(rty), "dtype", None), b if len(b) < 20 else "b") or habit
        if name in BIT_METHODS and kind in VALUE_KINDS:  # (round 27: in the receiver's own width)
            one_d = rty.shape if isinstance(rty, TileT) and rty.shape is not None and len(rty.shape) == 1 else None
            habit = bit_method_help(name, getattr(deref(rty), "dtype", None), tcx.receiver_snippet(e.receiver) or "x",
                                    [tcx.snippet(a.value) or "" for a in e.args],
                                    shape_str(one_d)[1:-1] if one_d else None) or habit
            habit = habit.replace("{", "{{").replace("}", "}}") if habit and "{x}" not in habit else habit
        if name in ("fill_", "zero_") and habit and isinstance(deref(rty), TensorT) \
                and isinstance(deref(rty).dtype, DType):  # the receiver's element type, not `T`
            habit = habit.replace("::<T>", f"::<{deref(rty).dtype.value}>")
        if name in SHAPE_WORDS and (kind == "tile" and isinstance(rty, TileT) or isinstance(rty, ShapeT) and rty.rank):
            habit = tile_dims_help(rty).replace("{", "{{").replace("}", "}}")
        if name in PARTS:  # (round 16) PyTorch's cuts: a masked sum over a reshape
            habit = parts(name, rty, e, tcx.receiver_snippet(e.receiver)) or habit
        if target is not None:
            habit = AS.format(target)
        elif name == "to" and len(e.args) == 1 and isinstance(e.args[0].value, ast.StrLit):
            habit = DEVICES  # `x.to("cuda")`
        elif name in FLIPS and isinstance(rty, (TileT, TensorT)):
            x = tcx.receiver_snippet(e.receiver) or "t"
            x = x if len(x) < 30 else "t"
            habit = (flip_help(rty.shape, rty.dtype, e, x) or _flip_help(rty, x)).replace("{", "{{").replace("}", "}}")
        elif name == "mean" and isinstance(rty, (TileT, TensorT)) and rty.shape and len(e.args) <= 2 \
                and all(d is not None for d in rty.shape):  # (a host tensor of constant shape too, round 18)
            habit = mean_help(rty, e).replace("{", "{{").replace("}", "}}").replace("{{x}}", "{x}")
        elif name in ("clamp", "clip") and habit and 1 <= len(e.args) <= 2 \
                and all(len(tcx.snippet(a.value) or "") < 20 for a in e.args):
            # PyTorch's `x.clamp(min=0.0)` / `x.clamp(max=6.0)` bound one side (huser26: told
            # `minimum(maximum(x, lo), hi)` with `lo` and `hi` left to fill)
            bounds: dict[str, str] = {}
            for i, a in enumerate(e.args):
                key = a.name.name if a.name is not None else ("min", "max")[i]
                bounds[{"a_min": "min", "a_max": "max"}.get(key, key)] = \
                    (tcx.snippet(a.value) or "").replace("{", "{{").replace("}", "}}")
            lo, hi = bounds.get("min"), bounds.get("max")
            if lo is not None and hi is not None:
                habit = f"`minimum(maximum({{x}}, {lo}), {hi})` clamps each element into [{lo}, {hi}]"
            elif lo is not None and set(bounds) == {"min"}:
                habit = f"`maximum({{x}}, {lo})` bounds each element below by {lo}"
            elif hi is not None and set(bounds) == {"max"}:
                habit = f"`minimum({{x}}, {hi})` bounds each element above by {hi}"
        elif (names := HABIT_ARGS.get(name) or MATH_ARGS.get(name)) and habit and len(e.args) == len(names) \
                and all(len(tcx.snippet(a.value) or "") < 20 for a in e.args):
            habit = with_args(habit, names, [(tcx.snippet(a.value) or "").removeprefix("&") if name == "copy_"
                                             else tcx.snippet(a.value) or "" for a in e.args])
        homes = tcx.loader.std_items().get(name) if not habit and kind in ("tile", "tensor", "param") else None
        if homes:  # `t.softmax(0)` (PyTorch's method): std's function, not "a similar name: `max`" (round 12)
            imported = name in fx.module.scope
            # the method's own arguments after the receiver where std's function takes them (huser26:
            # `a.lerp(b, 0.5)` was told `lerp(a)`, which takes three)
            rest = [(tcx.snippet(a.value) or "").replace("{", "{{").replace("}", "}}") for a in e.args]
            more = "".join(f", {r}" for r in rest) if rest and tcx.loader.std_arity(name) == 1 + len(rest) \
                and all(0 < len(r) < 30 for r in rest) else ""
            habit = (f"`{name}` is a function of the standard library, not a method: "
                     + ("" if imported else f"`use {homes[0]}::{name};` at the top of the file, then ")
                     + (f"`{name}({{x}}{more})` (`tilec doc {name}` shows it)" if kind == "tile" else
                        f"`{name}(..)` of a tile, in a kernel: `z.store({name}({{x}}.load_like(z)))` with `{{x}}` "
                        f"passed as `&{{x}}` (`tilec doc {name}` shows it)"))
        # a method of other receivers (`argmin` of a scalar) is told so, not given a similar name of this
        # receiver's (round 19: `asin`, new on scalars, was the help of `dist.argmin()`)
        guess = None if habit or sig is not None else suggest(name, cands)
        if habit:
            x = tcx.snippet(e.receiver) or "t"
            d = d.with_help(habit.format(x=operand(x) if len(x) < 30 else "t"))
        elif guess:
            d = d.with_help(f"there is a method with a similar name: `{guess}`")
        elif sig is not None:
            owners = " or ".join(_RECEIVER_WORDS.get(k, k) for k in sig.receivers)
            if kind == "scalar":  # the help says how to make one of those; the note, what they are
                d = d.note(f"`{name}` is a method of {owners}")
            d = d.with_help(_other_receiver_help(tcx, e, rty, kind, sig.receivers, owners, fx))
        elif name in ("dot", "matmul") and kind == "tensor" and isinstance(deref(rty), TensorT):
            # NumPy's `x.dot(y)` on the host, where the function `dot` is refused too (E0211)
            x, y = operand(tcx.snippet(e.receiver) or "x"), operand(tcx.snippet(e.args[0].value) or "y") \
                if e.args else "y"
            x, y = (x, y) if len(x) + len(y) < 50 else ("x", "y")
            d = d.with_help(f"on the host, the dot product of two vectors is `({x} * {y}).sum()`, and of two "
                            f"matrices `({x}.reshape([m, k, 1]) * {y}.reshape([1, k, n])).sum(1)`; in a kernel, "
                            "`dot(a, b)` of tiles")
        elif name in FUNCTIONS:
            d = d.with_help(f"`{name}` is a function: `{FUNCTIONS[name].signature}`")
        elif name in ("step_by", "step", "rev") and not cands:  # Rust's iterator adaptors (round 17: with bounds)
            d = d.with_help(range_adaptor_help(name, e, tcx.snippet))
        elif name == "tensor_shape" and kind == "param":
            # a requirement's spelling of a `&mut` parameter's partitioned tensor (hrev32), read in a kernel
            d = d.with_help("`tensor_shape()` is read only in a `#[requires(..)]`, by the host; in a kernel pass the "
                            "tensor's extent in as a scalar parameter, or read an input's `x.shape()[i]`")
        elif name in _RESULT_METHODS and isinstance(rty, UnitT) and isinstance(e.receiver, ast.MethodCall):
            # Rust's `.sync().unwrap()` (huser21): "values of this type have no methods" did not say why
            d = d.with_help(f"`.{e.receiver.method.name}()` returns nothing to unwrap: Tile has no `Result`, a "
                            "launch's mistakes are reported by the compiler or when the launch runs; drop "
                            f"`.{name}({'..' if e.args else ''})`")
        else:
            d = d.with_help(_methods_help(kind, cands))
        return tcx.emit(d)
    msym = tcx.method_syms.setdefault(name, Symbol(SymbolKind.METHOD, name, signature=sig, qualname="." + name))
    tcx.program.symbols[e] = msym
    if name == "partition":
        note_tuner_dims(tcx, e)
    return _builtin_call(tcx, e, sig, fx, e.receiver, rty, expected)


def _whole_reduction(tcx: CheckCx, e: ast.Expr, fx: Fx) -> str | None:
    """Where a scalar is a reduction of every axis of a tile or tensor (`t.sum()`, or a `let` of it): the words
    and the call that reduce only the last axis (NumPy's `.sum(-1)`), keeping a value that methods take."""
    from tilelang.sema.consts import let_values

    if isinstance(e, ast.Name) and fx.info is not None:
        sym = tcx.program.symbols.get(e)
        if sym is not None and sym.kind is SymbolKind.LOCAL and not sym.mutable:
            e = let_values([fx.info.decl]).get(sym.decl, e)
    if not (isinstance(e, ast.MethodCall) and not e.args and e.method.name in ("sum", "max", "min", "prod")):
        return None
    src = tcx.program.types.get(e.receiver)
    shape = getattr(src, "shape", None) if isinstance(src, (TileT, TensorT)) else None
    if not shape or len(shape) < 2:
        return None
    return (f"`{tcx.snippet(e)}` reduced every axis of a `{src}`; reduce one axis to keep a "
            f"{'tile' if isinstance(src, TileT) else 'tensor'}: `{tcx.receiver_snippet(e.receiver)}."
            f"{e.method.name}({len(shape) - 1})`")


def _other_receiver_help(tcx: CheckCx, e: ast.MethodCall, rty: Type, kind: str, receivers: Any, owners: str,
                         fx: Fx) -> str:
    """The help of a method called on a receiver it does not take: a scalar
    (a full reduction's result) made into a tile or tensor, else where it is
    a method."""
    x = tcx.snippet(e.receiver)
    want = "param" if fx.in_kernel else "tensor"
    if kind == "scalar" and ("tile" in receivers or want in receivers):
        # str(ScalarT): its element type's name, a generic one's too (`T`)
        dt = str(rty) if isinstance(rty, ScalarT) else ("f32" if isinstance(rty, UntypedFloat) else "i32")
        what = "tile" if fx.in_kernel else "tensor"
        if e.method.name == "item" or (e.method.name in ("sum", "max", "min", "prod") and not e.args):
            # (hrev19: `z[7].item()` was told to make a tensor of `z[7]`, to take its one element back out; round 18:
            # `(next != labels).max().item()`, PyTorch's habit: Tile's reductions give the scalar itself)
            it = f"`{x}`" if x and len(x) < 40 else "the value"
            return f"{it} is a scalar (`{dt}`) already: use it as it is, without `.{e.method.name}()`"
        whole = _whole_reduction(tcx, e.receiver, fx)
        if whole is not None and x and len(x) < 40:  # `let dist = (d * d).sum(); dist.argmin()` (round 14)
            return (f"`{x}` is a scalar: {whole}, or make a {what} of the scalar with `full::<{dt}>([1], {x})`")
        if x and len(x) < 40:
            return f"`{x}` is a scalar: make a {what} of it with `full::<{dt}>([1], {x})`"
        # too long to repeat: not `x`, which may name another value of the program
        return (f"the value `.{e.method.name}` is called on is a scalar: make a {what} of it with "
                f"`full::<{dt}>([1], value)`")
    if kind == "param" and "tile" in receivers and x and x.isidentifier():
        # `x.sum()` of a kernel's tensor parameter (a NumPy habit, round 12): a kernel reads tiles
        own = next((p for p in (fx.info.decl.params if fx.info is not None and fx.info.is_kernel else ())
                    if isinstance(p.ty, ast.RefType) and p.ty.mutable), None)
        at = own.name.name if own is not None else ".."
        return (f"a kernel reads `{x}` through tiles: `{x}.load_like({at}).{e.method.name}(axis)` for the tile at "
                f"{f'`{at}`' if own is not None else 'a `&mut` parameter'}'s position, or "
                f"`{x}.partition([..]).load([..])`; the whole tensor's "
                f"`{e.method.name}` needs every block (`atomic_*` in `unsafe`, or `last_block(axis)`) or is "
                "computed on the host and passed in")
    if isinstance(rty, ScalarT) and isinstance(rty.dtype, TypeParam) and kind == "scalar" \
            and {"handle", "op", "graph"} & set(receivers):
        # `fn finish<T>(h: T) { h.wait(); }` (round 20): no type names a handle, so no parameter holds one
        return (f"a type parameter such as `{rty}` stands for an element type (`f32`, `i32`, ..): launch handles, "
                f"kernel calls and graphs have no written type, so no function takes one; call `{e.method.name}` "
                "where it was made")
    if kind == "tensor" and "tile" in receivers and "tensor" not in receivers and not fx.in_kernel:
        # a kernel's tile operation on a host tensor (round 19: `x.to_bits()`; "a method of tiles or scalars"
        # led to a host scalar, refused next as kernel-only)
        return (f"`{e.method.name}` works on a kernel's tiles: launch a kernel that applies it to the tile it "
                f"loads, `z.store(x.load_like(z).{e.method.name}())` with `x` passed as `&x`")
    return f"`{e.method.name}` is a method of {owners}: call it on one of those, not on a `{rty}`"


# Rust's `Result` / `Option` methods, written after a call that returns nothing (`.sync().unwrap()`)
_RESULT_METHODS = frozenset(("unwrap", "expect", "unwrap_or", "unwrap_or_default", "ok", "is_ok", "is_err"))


def _methods_help(kind: str, cands: list[str]) -> str:
    if not cands:
        return f"{_RECEIVER_WORDS.get(kind, 'values of this type')} have no methods" if kind != "scalar" \
            else "a scalar has no methods: use the functions (`abs(x)`, `x as f32`, `maximum(x, y)`)"
    shown = ", ".join(f"`{m}`" for m in sorted(cands)[:12])
    more = ", .." if len(cands) > 12 else ""
    return f"the methods of {_RECEIVER_WORDS.get(kind, kind)} are {shown}{more}"


def note_tuner_dims(tcx: CheckCx, e: ast.MethodCall) -> None:
    """`z.partition(_)` / `z.partition([_, 64])`: each `_` that is a whole tile
    dimension is one the autotuner may pick (E0229 decides where it does);
    any other `_` stays a name, which `check_name` refuses (E0022)."""
    for a in e.args:
        v = a.value
        elems = v.elems if isinstance(v, ast.ArrayExpr) else (v,)
        for x in elems:
            if isinstance(x, ast.Name) and x.ident.name == "_":
                tcx.tuner_dims[x] = e


def _receiver_kind(ty: Type, fx: Fx) -> str:
    match ty:
        case TileT():
            return "tile"
        case ScalarT() | UntypedInt() | UntypedFloat():
            return "scalar"
        case RefT(inner=TensorT()):
            return "param" if fx.in_kernel else "tensor"
        case TensorT():
            return "param" if fx.in_kernel else "tensor"
        case TileViewT():
            return "view"
        case PartitionT():
            return "partition"
        case OpT():
            return "op"
        case HandleT():
            return "handle"
        case GraphT():
            return "graph"
        case _:
            return "other"


def _user_call(tcx: CheckCx, e: ast.Call, info: FnInfo, fx: Fx) -> Type:
    owner = f"{'kernel' if info.is_kernel else 'function'} `{info.name}`"
    if info.is_kernel:  # a partition given to a `&mut` parameter: its tile, for the help of one of the wrong rank
        for a, pty in zip(e.args, info.param_types, strict=False):
            if isinstance(a.value, ast.MethodCall) and a.value.method.name == "partition" and \
                    isinstance(pty, RefT) and pty.mutable and isinstance(pty.inner, TensorT):
                tcx.partition_params[a.value] = pty.inner
    args, tys, _, refused = _split_args(tcx, e, fx, (), owner, info.decl.name.span)
    if info.is_kernel and fx.in_kernel:
        return tcx.emit(tcx.err(T.HOST_ONLY, f"launching kernel `{info.name}` is only allowed in host code",
                                e.callee.span, "inside a kernel")
                        .secondary(info.decl.name.span, "kernel defined here")
                        .with_help("call a plain `fn` to share code between kernels"))
    if len(args) < len(info.param_types) <= len(args) + refused:  # `f(x, scale = 2.0)`: E0107 already said it
        return ERROR
    if len(args) != len(info.param_types):
        if (along := last_axis_help(tcx, info, args)) is not None:
            d = tcx.err(N.WRONG_ARG_COUNT, f"{owner} takes {plural(len(info.param_types), 'argument')} but "
                        f"{len(args)} were supplied", e.span, "an axis given")
            return tcx.emit(d.secondary(info.decl.name.span, "defined here").with_help(along))
        return tcx.arity_error(owner, plural(len(info.param_types), "argument"), len(args), e.span,
                               info.decl.name.span, tuple(info.decl.params))
    # turbofish: const generics (and type params) in declaration order
    gparams = list(info.decl.generics)
    if len(e.generics) > len(gparams):
        n = len(e.generics)
        return tcx.emit(tcx.err(N.WRONG_GENERIC_COUNT,
                                f"{owner} takes {plural(len(gparams), 'generic argument')} but "
                                f"{n} {'was' if n == 1 else 'were'} supplied" if gparams
                                else f"{owner} takes no generic arguments", e.generics[-1].span,
                                "unexpected generic argument")
                        .secondary(info.decl.name.span, "defined here")
                        .with_help(f"give {plural(len(gparams), 'generic argument')}, or leave them out to infer them"
                                   if gparams else f"remove the `::<..>`: `{info.name}({'..' if info.decl.params else ''})`"))
    if not info.is_kernel:
        tcx.call_sites.setdefault((info.qualname, fx.in_kernel), e.callee.span)
    if not fx.in_kernel:
        tcx.enqueue(info, False) if not info.is_kernel else None
    elif not info.is_kernel:
        tcx.enqueue(info, True)
        if fx.info is not None:
            tcx.device_edges.append((fx.info.qualname, info.qualname, e.callee.span))
    if info.is_kernel:
        return check_kernel_call(tcx, e, info, fx, args, tys)
    return _fn_call(tcx, e, info, fx, args, tys)


def _inexact_generic_help(info: FnInfo, g: str, tys: list[Type]) -> str | None:
    """E0215's help where a device function's parameter names `g` only as `k * g` and the argument's dimension
    there is a caller's expression that is a multiple of `k` only for some values (huser26: `norm_rope`'s
    `Tile<f32, [BT, H, 2 * Q]>` given a kernel's `[BT, H, D]`; "give it explicitly: `norm_rope::<..>(..)`" led
    to `{ D / 2 }` and a mismatch of `(D / 2) * 2` against `D`): the caller's dimension as `k` times a generic
    of its own, as E0208's divisibility help says."""
    from tilelang.sema.types import Dim

    def shape(t: Type) -> tuple[Any, ...] | None:
        t = t.inner if isinstance(t, RefT) else t
        return getattr(t, "shape", None)

    for p, pty, aty in zip(info.decl.params, info.param_types, tys, strict=False):
        ps, as_ = shape(pty), shape(aty)
        if ps is None or as_ is None or len(ps) != len(as_):
            continue
        for pd, ad in zip(ps, as_, strict=True):
            if pd is None or ad is None or g not in pd.symbols():
                continue
            coef = sum(c for mono, c in pd.terms if mono == (g,))
            if coef <= 1 or any(g in Dim(((mono, 1),)).symbols() for mono, _ in pd.terms if mono != (g,)):
                continue
            if ad.const_value is not None:
                if len(pd.terms) != 1 or ad.const_value % coef == 0:
                    continue
                lo, hi = ad.const_value // coef * coef, ad.const_value // coef * coef + coef
                sizes = f"{lo} or {hi}" if lo > 0 else f"{hi}"
                return (f"`{p.name.name}`'s dimension `{coef} * {g}` is {ad.const_value} here, which no whole `{g}` "
                        f"makes: give it a tile of a multiple of {coef} ({sizes})")
            name = next(n for n in ("Q", "HQ", "QQ", "Q2") if n not in ad.symbols())
            return (f"`{p.name.name}`'s dimension `{coef} * {g}` is `{ad}` here, which is {coef} times a whole number "
                    f"only where `{ad}` is a multiple of {coef}, which the checker does not assume: give the caller "
                    f"a const generic of its own for `{ad} / {coef}`, `const {name}: i32`, and write "
                    f"`{coef} * {name}` where it says `{ad}`" + (f" (then `{g}` is `{name}`)" if g != name else ""))
    return None


def _fn_call(tcx: CheckCx, e: ast.Call, info: FnInfo, fx: Fx, args: list[ast.Expr], tys: list[Type]) -> Type:
    env: dict[str, Any] = {}
    srcs: dict[str, Any] = {}
    deferred: dict[str, ast.Expr] = {}
    turbofish(tcx, e, info, fx, env, srcs, deferred)
    ok = True
    open_literals: list[tuple[Any, Type, ast.Expr, Type]] = []
    for p, pty, a, aty in zip(info.decl.params, info.param_types, args, tys, strict=False):
        if is_poison(pty, aty):
            continue
        if not unify(tcx, pty, aty, env, srcs, a, info):
            want = subst_type(pty, subst_env(env))
            arg_mismatch(tcx, p, want, a, aty, info, e)
            ok = False
        elif isinstance(aty, (UntypedInt, UntypedFloat)) and isinstance(pty, ScalarT) \
                and isinstance(pty.dtype, TypeParam):
            open_literals.append((p, pty, a, aty))  # `T` may come from a later argument
        else:
            settle(tcx, a, subst_type(pty, subst_env(env)))
    if not fx.in_kernel:
        # A host call whose `T` only untyped literals name (`f(1)`): `T` takes
        # the literal's default type, as a `let` would (i32; f32 if any is a
        # float literal), not left open (its result was of type `T`)
        for _, pty, _, _ in open_literals:
            name = pty.dtype.name
            if name not in env:
                floats = any(isinstance(t, UntypedFloat) for _, q, _, t in open_literals if q.dtype.name == name)
                env[name] = DType.F32 if floats else DType.I32
    for p, pty, a, aty in open_literals:
        want = subst_type(pty, subst_env(env))
        if isinstance(want, ScalarT) and isinstance(want.dtype, TypeParam):
            continue  # still open (device code: E0215 below)
        if not coerce(tcx, aty, want, a):
            arg_mismatch(tcx, p, want, a, aty, info, e)
            ok = False
        else:
            settle(tcx, a, want)
    missing = [g for g in (*info.const_generics, *info.type_params) if g not in env and g not in deferred]
    if missing and ok and fx.in_kernel:
        g = missing[0]
        gdecl = next(x for x in info.decl.generics if x.name.name == g)
        tcx.emit(tcx.err(T.CANNOT_INFER, f"cannot infer the generic parameter `{g}` of `{info.name}`",
                         e.callee.span, "cannot infer")
                 .secondary(gdecl.span, f"`{g}` declared here")
                 .with_help(_inexact_generic_help(info, g, tys)
                            or f"give it explicitly: `{info.name}::<..>(..)`"))
        ok = False
    elif missing and ok:
        # on the host a generic may still come from a run-time shape or element type (a `load_npy` tensor), but
        # not one that no parameter's type names: `fn make<T>(n: i32)` called `make(3)` has no `T` at all
        for g in missing:
            probe = {g: DType.I8 if g in info.type_params else 7}
            if all(subst_type(t, probe) == t for t in info.param_types):
                gdecl = next(x for x in info.decl.generics if x.name.name == g)
                kind = "type parameter" if g in info.type_params else "generic parameter"
                example = "f32" if g in info.type_params else "4"
                tcx.emit(tcx.err(T.CANNOT_INFER, f"cannot infer the {kind} `{g}` of `{info.name}`",
                                 e.callee.span, "cannot infer")
                         .secondary(gdecl.span, f"`{g}` declared here")
                         .note(f"no parameter of `{info.name}` has `{g}` in its type, so no argument can give it")
                         .with_help(f"give it explicitly: `{info.name}::<{example}>(..)`"))
                ok = False
                break
    tcx.program.instantiations[e] = dict(env)
    if deferred:
        tcx.program.deferred[e] = deferred
    ret = subst_type(info.ret, subst_env(env))
    if not ok or not generic_values_fit(tcx, e, info, env, srcs):
        return ERROR
    if not fx.in_kernel:
        ret = _unknown_dims_to_none(ret, set(info.const_generics))
    return ret


def _unknown_dims_to_none(ty: Type, generics: set[str]) -> Type:
    """On the host, a result dim still symbolic in a callee's generics is `?`."""
    def fix(shape: tuple[Dim | None, ...] | None) -> tuple[Dim | None, ...] | None:
        if shape is None:
            return None
        return tuple(None if d is not None and d.symbols() & generics else d for d in shape)

    match ty:
        case TensorT(dtype=d, shape=s):
            return TensorT(d, fix(s))
        case RefT(mutable=m, inner=i):
            return RefT(m, _unknown_dims_to_none(i, generics))
        case TupleT(elems=es):
            return TupleT(tuple(_unknown_dims_to_none(x, generics) for x in es))
        case _:
            return ty


def _round_in_type(tcx: CheckCx, arg: ast.Expr, spelt: str, text: str, x: str) -> str:
    """`round`'s help written for its argument's type (huser29): its 2^23 is past f16's range (E0222 when
    applied) and bf16's ulp, so those go through f32 and back; f64's fractions run to 2^52 (2^40 + 0.5 stayed)."""
    ty = tcx.program.types.get(arg)
    dt = getattr(ty, "dtype", None)
    if dt in (DType.F16, DType.BF16):
        parts = spelt.format(x=f"({x} as f32)").split("`")
        parts[1] = f"({parts[1]}) as {dt.value}"
        return "`".join(parts)
    if dt is DType.F64:
        parts = text.split("`")
        # (the sign's `where` of untyped literals would be f32 values: E0201 against the f64 rest)
        parts[1] = parts[1].replace("8388608.0", "4503599627370496.0").replace("-1.0, 1.0)", "-1.0f64, 1.0f64)")
        return "`".join(parts)
    return text
