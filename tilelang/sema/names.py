"""Names in function bodies: local variables, constants, generics, paths.

Decides what a name in an expression refers to (`check_name`: the innermost
binding, then the function's generics, then the module's items) and what a
path `m::item` or `std::nn::softmax` refers to (`resolve_path`, loading a
module on first use), with a "did you mean" on E0101/E0109/E0110.
"""

from __future__ import annotations

from typing import assert_never

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import syntax as S
from tilelang.diagnostics.codes import types as T
from tilelang.dtypes import DType
from tilelang.intrinsics.constants import (
    BARE_CONSTANTS,
    CONSTANT_ALIASES,
    MATH_CONSTANTS,
    dtype_constant,
    names_for,
)
from tilelang.intrinsics.signatures import FUNCTIONS
from tilelang.sema.context import CheckCx, Fx, module_holding, suggest
from tilelang.sema.items import items_help, load_module, resolve_signatures, unresolved_module_help
from tilelang.sema.loader import ModuleLoader
from tilelang.sema.program import ModuleInfo, Symbol, SymbolKind
from tilelang.sema.types import (
    ERROR,
    I32,
    UNTYPED_FLOAT,
    UNTYPED_INT,
    Dim,
    RefT,
    ScalarT,
    Type,
    UntypedFloat,
    UntypedInt,
)
from tilelang.source import Span
from tilelang.syntax import ast


def builtin_const(tcx: CheckCx, qualname: str) -> Symbol | None:
    """The symbol of a built-in constant (`f32::MAX`, `inf`), one per program."""
    key = "const:" + qualname
    sym = tcx.builtin_syms.get(key)
    if sym is not None:
        return sym
    if qualname in BARE_CONSTANTS:
        sym = Symbol(SymbolKind.CONST, qualname, qualname=qualname, value=BARE_CONSTANTS[qualname],
                     ty=UNTYPED_FLOAT)
    else:
        head, _, name = qualname.partition("::")
        dt = DType.parse(head)
        found = dtype_constant(dt, name) if dt is not None else None
        if found is None:
            return None
        cdt, value = found
        sym = Symbol(SymbolKind.CONST, name, qualname=qualname, value=value, ty=ScalarT(cdt),
                     dim=Dim.const(value) if isinstance(value, int) else None)
    tcx.builtin_syms[key] = sym
    return sym


def const_type(sym: Symbol) -> Type:
    """The type a read of constant `sym` has: a constant declared without a type keeps its literal-ness, so
    `N * t` works for any element type and `std::math::PI` is f64's pi where an f64 is wanted (by its name or
    its path alike)."""
    ty = sym.ty or ERROR
    if isinstance(ty, ScalarT) and ty.dtype is DType.I32 and isinstance(sym.decl, ast.ConstDecl) \
            and sym.decl.ty is None:
        return UNTYPED_INT
    if isinstance(ty, ScalarT) and ty.dtype is DType.F32 and isinstance(sym.decl, ast.ConstDecl) \
            and sym.decl.ty is None:
        return UNTYPED_FLOAT
    return ty


def check_name(tcx: CheckCx, e: ast.Name, ident: ast.Ident, fx: Fx) -> Type:
    if ident.name == "_":
        if e in tcx.tuner_dims:
            return I32  # a tile dimension the autotuner picks (its value: `sema/launch.py`)
        return tcx.emit(tcx.err(S.UNDERSCORE_EXPR, "`_` can only be used in a pattern", ident.span,
                                "`_` is not a value")
                        .with_help("a tile dimension the autotuner picks is a whole `_`: "
                                   "`k(z.partition([_, 64]), ..)`"))
    sym = fx.lookup(ident.name)
    if sym is None and ident.name in BARE_CONSTANTS:
        sym = builtin_const(tcx, ident.name)  # `inf`, `nan` (a local of that name wins)
    if sym is None and ident.name in fx.module.failed:  # its `use` failed, and said so
        return ERROR
    if sym is None:
        if ident.name in FUNCTIONS:
            sig = FUNCTIONS[ident.name]
            return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"built-in function `{ident.name}` used as a value",
                                    e.span, "not a value")
                            .with_help(f"call it: `{sig.signature}`"))
        if "*" in fx.module.failed:  # a glob or file `use` failed: the name may be its
            return ERROR
        d = tcx.err(N.UNKNOWN_NAME, f"cannot find value `{ident.name}` in this scope", ident.span,
                    "not found in this scope")
        habit = _value_habit(ident.name)
        if habit is not None:
            return tcx.emit(d.with_help(habit))
        homes = tcx.loader.std_constants().get(ident.name)
        if homes:  # `PI` without `use std::math::PI;`, as a call of `softmax` without its `use`
            return tcx.emit(d.with_help(f"`{ident.name}` is in the standard library: import it with "
                                        f"`use {homes[0]}::{ident.name};` at the top of the file, or write "
                                        f"`{homes[0]}::{ident.name}`"))
        held = module_holding(tcx, fx, ident.name)  # `use good;`'s `C`
        if held is not None:
            return tcx.emit(d.with_help(f"`{ident.name}` is in the module `{held[0]}` that a `use` imports: write "
                                        f"`{held[0]}::{ident.name}`, or import it itself with `use {held[1]};`"))
        guess = suggest(ident.name, fx.visible_names())
        return tcx.emit(d.with_help(f"a local variable with a similar name exists: `{guess}`")
                        if guess else
                        d.with_help(f"declare `{ident.name}` before this use (`let {ident.name} = ..;`), take it as a "
                                    "parameter, or define it as a `const` item"))
    tcx.program.symbols[e] = sym
    match sym.kind:
        case SymbolKind.LOCAL | SymbolKind.PARAM:
            if sym in tcx.no_value_lets:
                return _no_value_read(tcx, e, ident.name, *tcx.no_value_lets[sym])
            if sym in tcx.mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)):
                tcx.mut_literals[sym][1].append(e)
            if sym in tcx.mut_tuples:
                tcx.mut_tuples[sym][1].append(e)
            if sym.dim is not None:
                tcx.program.dims[e] = sym.dim
            if isinstance(sym.value, tuple):
                tcx.shape_values[e] = sym.value
            return sym.ty or ERROR
        case SymbolKind.CONST:
            tcx.eval_const(sym.qualname or sym.name)
            if sym.dim is not None:
                tcx.program.dims[e] = sym.dim
            return const_type(sym)
        case SymbolKind.GENERIC:
            tcx.program.dims[e] = Dim.var(sym.name)
            return UNTYPED_INT if fx.in_kernel else I32
        case SymbolKind.TYPE_PARAM:
            return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"type parameter `{sym.name}` used as a value",
                                    e.span, "a type, not a value")
                            .with_help("use a value of that type instead, e.g. `zeros::<T>([..])`"))
        case SymbolKind.FN | SymbolKind.KERNEL:
            return fn_as_value(tcx, e, sym, ident.name)
        case SymbolKind.MODULE:
            return tcx.emit(tcx.err(T.MISMATCHED_TYPES, f"module `{sym.name}` used as a value", e.span,
                                    "a module, not a value")
                            .with_help(f"name an item in it: `{sym.name}::item`"))
        case SymbolKind.BUILTIN | SymbolKind.METHOD:
            return ERROR
        case _:
            assert_never(sym.kind)


def _no_value_read(tcx: CheckCx, e: ast.Name, name: str, call: str, call_span: Span) -> Type:
    """A read of `let slot = atomic_add(..);`: CUDA's `atomicAdd` and Triton's `tl.atomic_add` give the old value,
    which a port uses as a slot; Tile's give none, and the read said only "cannot cast `()` as `f32`" or
    "cannot apply `+` to .. and `()`" (huser30)."""
    d = tcx.err(T.MISMATCHED_TYPES, f"`{name}` holds no value: `{call}` gives none back", e.span,
                "read here").secondary(call_span, f"`{call}` gives `()`, not the old value")
    if call == "store_unchecked":
        return tcx.emit(d.with_help(f"call `{call}` as a statement, without a `let`"))
    return tcx.emit(d.note("Tile's atomics do not return the element's old value, as CUDA's `atomicAdd` and "
                           "Triton's `tl.atomic_add` do: other blocks update it at the same time")
                    .with_help(f"call `{call}` as a statement (`{call}(..);`) and read the tensor in a later launch"
                               + ("; to give each entry its own slot, number a block's entries with a `cumsum` of "
                                  "one-hot rows and add the block's offset, from a first launch's counts scanned on "
                                  "the host (`counts.cumsum(0) - counts`)" if call == "atomic_add" else "")))


def fn_as_value(tcx: CheckCx, e: ast.Name | ast.Path, sym: Symbol, written: str) -> Type:
    """A `fn` or `kernel fn` named without a call (`let f = twice;`): Tile has no function values (a `fn` is
    inlined where a kernel calls it and runs on the host where host code does; a value could not say which, nor
    carry a kernel's borrows), so it is E0203 wherever it stands, with the call it could be. The REPL shows a
    name entered at the prompt (`SessionCore`, `repl/values.py`): that one is its `FnT`."""
    if e in tcx.shown_names:
        return sym.ty or ERROR
    what = "kernel" if sym.kind is SymbolKind.KERNEL else "function"
    info = tcx.program.fn_info(sym)
    # (huser26: a `&` parameter's argument was written bare, `linear_fwd(logits.partition([..]), x, w, b)`, E0203
    # once applied: a reference argument is written with its `&`, as in Rust)
    args = "" if info is None else ", ".join(
        f"{n}.partition([..])" if isinstance(t, RefT) and t.mutable and info.is_kernel else
        f"&mut {n}" if isinstance(t, RefT) and t.mutable else f"&{n}" if isinstance(t, RefT) else n
        for n, t in zip(info.param_names, info.param_types))
    call = f"{written}({args})"
    bound = tcx.fn_value_lets.get(e)
    d = (tcx.err(T.MISMATCHED_TYPES, f"{what} `{written}` used as a value", e.span, f"a {what}, not a value")
         .note("a `fn` runs where it is called (inlined into a kernel that calls it, on the host for host code), so "
               "it cannot be held in a variable, a tuple or an argument"))
    return tcx.emit(d.with_help(f"Tile has no function values: call `{written}` where `{bound}` is called, `{call}`"
                                if bound is not None else f"call it: `{call}`"))


def resolve_path(tcx: CheckCx, p: ast.Path, fx: Fx, want_fn: bool) -> Symbol | None:
    segs = [s.name for s in p.segments]
    head = fx.lookup(segs[0])
    dt = DType.parse(segs[0])
    if dt is not None and head is None and len(segs) == 2 and not want_fn:
        return _type_constant(tcx, p, dt, segs[1])
    if head is not None and head.kind is SymbolKind.TYPE_PARAM and len(segs) == 2:
        # `T::MAX` in a generic kernel or function: what it would be differs for each `T`
        tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"`{segs[0]}::{segs[1]}`: `{segs[0]}` is a type parameter, which has "
                         "no associated constants", p.span, f"`{segs[0]}` is a type parameter, not a type")
                 .note(f"`i8::{segs[1]}` or `f32::{segs[1]}` names the constant of one type; a generic body is "
                       f"checked once for every `{segs[0]}`")
                 .with_help(f"take the value as a parameter (`v: {segs[0]}`) and pass `i8::{segs[1]}` (or the "
                            "constant of the type you call it with) at the call"))
        return None
    target: ModuleInfo | None = None
    if head is not None and head.kind is SymbolKind.MODULE:
        target = tcx.program.modules.get(head.value)
        rest = segs[1:]
        mod_len = 1
    else:
        # a full path to a module: `std::nn::softmax`
        mod_segs = segs[:-1]
        mod_len = len(mod_segs)
        name = "::".join(mod_segs)
        target = tcx.program.modules.get(name)
        if target is None:
            path = (tcx.loader.std_module_path(mod_segs) if mod_segs[0] == "std" and len(mod_segs) > 1
                    else ModuleLoader.user_module_path(fx.module.path, segments=mod_segs))
            if path is not None and (not hasattr(path, "is_file") or path.is_file()):
                target = load_module(tcx, name, path, p.span)
                if target is not None:
                    resolve_signatures(tcx, target)
                    for q in list(tcx.pending_consts):
                        if tcx.const_state.get(q) != "busy":  # (one being evaluated named this path)
                            tcx.eval_const(q)
        rest = segs[-1:]
    span_mod = p.segments[0].span.to(p.segments[mod_len - 1].span)
    if target is None and head is None and (segs[0] in fx.module.failed or "*" in fx.module.failed):
        return None  # `m::f(..)` after a failed `use ..::m;`: that `use` said so
    if target is None:
        d = tcx.err(N.UNRESOLVED_MODULE, f"unresolved module `{'::'.join(segs[:mod_len])}`", span_mod,
                    "no such module")
        tcx.emit(unresolved_module_help(tcx, d, segs[:mod_len], segs, fx.module.path))
        return None
    if len(rest) != 1:
        tcx.emit(tcx.err(N.UNRESOLVED_MODULE, f"unresolved path `{'::'.join(segs)}`", p.span)
                 .with_help("check the path: `use std::..` for the standard library, `use file::item` for `file.tile` beside this one"))
        return None
    sym = target.own.get(rest[0])
    if sym is None:
        if tcx.has_syntax_errors(target):
            return None  # the item is likely the one its syntax error dropped: no cascade
        d = tcx.err(N.UNRESOLVED_IMPORT, f"cannot find `{rest[0]}` in `{target.name}`", p.segments[-1].span,
                    f"not found in `{target.name}`")
        guess = suggest(rest[0], target.own)
        tcx.emit(d.with_help(f"an item with a similar name exists: `{guess}`") if guess else
                 d.with_help(items_help(target.name, target.own)))
        return None
    return sym


def _type_constant(tcx: CheckCx, p: ast.Path, dt: DType, name: str) -> Symbol | None:
    """`f32::INFINITY`, `i64::MAX`: an associated constant of a scalar type."""
    sym = builtin_const(tcx, f"{dt.value}::{name}")
    if sym is not None:
        return sym
    known = names_for(dt)
    d = tcx.err(N.UNRESOLVED_IMPORT, f"no associated constant `{name}` on `{dt.value}`",
                p.segments[-1].span, f"`{dt.value}` has no `{name}`")
    alias = CONSTANT_ALIASES.get(name)
    guess = alias if alias in known else suggest(name, known)
    if name in MATH_CONSTANTS and dt.is_float:
        d = d.with_help(f"Tile's `{name}` is `std::math::{name}` (untyped: it takes the float type "
                        f"it meets), or `use std::math::{name};`")
    elif guess:
        d = d.with_help(f"a constant with a similar name exists: `{dt.value}::{guess}`")
    elif known:
        d = d.note(f"`{dt.value}` has " + ", ".join(f"`{k}`" for k in known)).with_help(
            f"use one of `{dt.value}`'s constants above")
    else:
        d = d.note(f"`{dt.value}` has no associated constants").with_help(
            "write the value itself (`true`, `false`), or use a numeric type's constant (`i32::MAX`)")
    tcx.emit(d)
    return None


_SCALAR_TYPES = frozenset(d.value for d in DType)


def _value_habit(name: str) -> str | None:
    """The help for a name other languages use as a value: an element type
    (Triton's `dtype=tl.float32`, NumPy's `np.float32`), `None` (NumPy's new
    axis), CUDA's thread and block indices."""
    if name in _SCALAR_TYPES:
        return (f"`{name}` is a type, not a value: give it with a turbofish (`zeros::<{name}>([..])`) "
                f"or convert with `as` (`t as {name}`)")
    if name in ("True", "False"):
        return f"Tile's booleans are lowercase: `{name.lower()}`"
    if name == "None":
        return "Tile has no `None`: add a size-1 axis with `t.reshape([..])`, stretch it with `.broadcast([..])`"
    if name in ("blockIdx", "threadIdx", "blockDim", "gridDim", "pid"):
        return "a kernel sees its tile block, not threads: `block_id(axis)` and `num_blocks(axis)`"
    return None
