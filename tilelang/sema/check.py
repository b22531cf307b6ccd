"""The semantic checker: modules, name resolution and types in one pass.

`check_program(root, sources, sink, loader=None) -> Program` loads every module
the root `use`s, registers items, resolves signatures, evaluates constants,
then checks every function body: kernels and the functions they call as
device code, `main` and the functions it calls as host code (a function
called from both is checked in both contexts). Functions nobody calls are
checked as device code when their signature mentions a `Tile`, else as host
code.

Names and types are resolved together because method lookup needs the
receiver's type. Every user error is a `Diagnostic` in the sink; a checked
sub-expression whose type is unknown because of an earlier error has type
`ErrorT`, which silences errors about it (no cascades).

Invariant: never raises on any AST the parser can build.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeGuard, assert_never

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.dtypes import DTYPE_NAMES, DType
from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, Signature
from tilelang.sema.loader import ModuleLoader
from tilelang.sema.program import FnInfo, ModuleInfo, Program, Symbol, SymbolKind
from tilelang.sema.types import (
    BOOL,
    ERROR,
    F32,
    I32,
    NEVER,
    UNIT,
    UNTYPED_FLOAT,
    UNTYPED_INT,
    Dim,
    ElemT,
    ErrorT,
    FnT,
    GraphT,
    HandleT,
    NeverT,
    OpT,
    PartitionT,
    RangeT,
    RefT,
    ScalarT,
    Shape,
    ShapeT,
    StrT,
    TensorT,
    TileT,
    TileViewT,
    TupleT,
    Type,
    TypeParam,
    UnitT,
    UntypedFloat,
    UntypedInt,
    broadcast_shapes,
    contains_error,
    eval_dim,
    shape_str,
    subst_dim,
    subst_type,
)
from tilelang.source import DUMMY_SPAN, SourceMap, Span
from tilelang.syntax import ast

MAX_TILE_ELEMENTS = 1 << 20
KNOWN_HINTS = ("num_warps", "stages")
KNOWN_ATTRIBUTES = ("hints",)


def check_program(root: ast.Module, sources: SourceMap, sink: DiagnosticSink,
                  loader: ModuleLoader | None = None) -> Program:
    """Check `root` and every module it uses; see `Program` for the result."""
    checker = _Checker(root, sources, sink, loader)
    checker.run()
    return checker.program


# ---------------------------------------------------------------- helpers


def _suggest(name: str, candidates: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return found[0] if found else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0


def _int_range(d: DType) -> tuple[int, int]:
    if d.is_signed:
        return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
    return 0, (1 << d.bits) - 1


def _elem_is_float(e: ElemT | None) -> bool:
    return isinstance(e, DType) and e.is_float


def _elem_is_int(e: ElemT | None) -> bool:
    return isinstance(e, DType) and e.is_int


def _is_numeric_scalar(ty: Type) -> bool:
    return isinstance(ty, (ScalarT, UntypedInt, UntypedFloat))


def _is_intlike(ty: Type) -> bool:
    return isinstance(ty, UntypedInt) or (isinstance(ty, ScalarT) and _elem_is_int(ty.dtype))


def _is_poison(*tys: Type | None) -> bool:
    return any(t is None or isinstance(t, NeverT) or contains_error(t) for t in tys)


def _deref(ty: Type) -> Type:
    return ty.inner if isinstance(ty, RefT) else ty


def _mentions_tile(ty: Type) -> bool:
    match ty:
        case TileT():
            return True
        case RefT(inner=i):
            return _mentions_tile(i)
        case TupleT(elems=es):
            return any(_mentions_tile(e) for e in es)
        case _:
            return False


def _numel(shape: Shape) -> Dim:
    out = Dim.const(1)
    for d in shape:
        out = out * d
    return out


# Operands of element-wise operations, classified.
@dataclass(frozen=True, slots=True)
class _Num:
    kind: str  # "scalar", "int" (untyped int literal), "float" (untyped float), "tile", "tensor"
    elem: ElemT | None  # None for untyped literals, or a tensor of unknown dtype
    shape: tuple[Dim | None, ...] | None  # () for scalars; None: tensor of unknown rank


def _num(ty: Type, in_kernel: bool) -> _Num | None:
    match ty:
        case ScalarT(dtype=d):
            return _Num("scalar", d, ())
        case UntypedInt():
            return _Num("int", None, ())
        case UntypedFloat():
            return _Num("float", None, ())
        case TileT(dtype=d, shape=s):
            return _Num("tile", d, s)
        case TensorT(dtype=d, shape=s) if not in_kernel:
            return _Num("tensor", d, s)
        case RefT(inner=TensorT(dtype=d, shape=s)) if not in_kernel:
            return _Num("tensor", d, s)
        case _:
            return None


# ---------------------------------------------------------------- function context


@dataclass
class _Fx:
    module: ModuleInfo
    info: FnInfo | None
    in_kernel: bool
    ret: Type
    generics: dict[str, Symbol]
    scopes: list[dict[str, Symbol]] = field(default_factory=list)
    loops: int = 0
    unsafe: int = 0
    graph: int = 0
    kernel_name: str | None = None  # the kernel whose body this is (tile shape checks)

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.generics:
            return self.generics[name]
        return self.module.scope.get(name)

    def visible_names(self) -> list[str]:
        out: list[str] = []
        for scope in self.scopes:
            out.extend(scope)
        out.extend(self.generics)
        out.extend(self.module.scope)
        return out


@dataclass
class _CallCx:
    """Everything a typing rule sees about one builtin call."""

    node: ast.Call | ast.MethodCall
    sig: Signature
    fx: _Fx
    recv: ast.Expr | None
    recv_ty: Type | None
    args: list[ast.Expr]
    arg_tys: list[Type]
    generics: tuple[ast.TypeArg, ...]
    keywords: dict[str, tuple[ast.Arg, Type]]

    @property
    def operands(self) -> list[ast.Expr]:
        return ([self.recv] if self.recv is not None else []) + self.args

    @property
    def operand_tys(self) -> list[Type]:
        return ([self.recv_ty] if self.recv_ty is not None else []) + self.arg_tys

    @property
    def name(self) -> str:
        return self.sig.name

    @property
    def span(self) -> Span:
        if isinstance(self.node, ast.MethodCall):
            return self.node.method.span.to(self.node.span.at_end())
        return self.node.span


# ---------------------------------------------------------------- the checker


class _Checker:
    def __init__(self, root: ast.Module, sources: SourceMap, sink: DiagnosticSink,
                 loader: ModuleLoader | None) -> None:
        self.sources = sources
        self.sink = sink
        self.loader = loader or ModuleLoader()
        root_path = sources.get(root.span.file).name if root.span.file >= 0 else "<input>"
        self.root = ModuleInfo("", root_path, root)
        self.program = Program(self.root)
        self.program.modules[""] = self.root
        self._module_by_key: dict[str, ModuleInfo] = {}
        self._pending_consts: dict[str, tuple[ast.ConstDecl, ModuleInfo]] = {}
        self._const_state: dict[str, str] = {}
        self._queue: list[tuple[FnInfo, bool]] = []
        self._checked: set[tuple[str, bool]] = set()
        # symbolic tile shapes each kernel body creates, checked per instantiation
        self.kernel_tiles: dict[str, list[tuple[Shape, Span]]] = {}
        self._fn_by_decl: dict[ast.FnDecl, FnInfo] = {}
        self._builtin_syms: dict[str, Symbol] = {}
        self._method_syms: dict[str, Symbol] = {}
        self._shape_values: dict[Any, tuple[Dim | None, ...]] = {}
        # `let mut x = <literal>` bindings still untyped: the init and the uses so far
        self._mut_literals: dict[Symbol, tuple[Any, list[Any]]] = {}
        self._negated: set[Any] = set()  # integer literals under a unary minus
        self._overflowed: set[Any] = set()  # binary expressions already reported as overflowing
        self._cur_fx: _Fx | None = None  # the function body being checked
        # (function, checked as device code) -> the first call that made it so
        self._call_sites: dict[tuple[str, bool], Span] = {}
        # calls between functions in device code: (caller, callee, call span)
        self._device_edges: list[tuple[str, str, Span]] = []
        # reshapes whose element counts are equal only for some generics
        self.kernel_reshapes: dict[str, list[tuple[Shape, Shape, Span]]] = {}
        # host `t.partition([n])` with a run-time `n`: dim index -> expression
        self._partition_deferred: dict[Any, dict[int, tuple[int, ast.Expr]]] = {}

    # ------------------------------------------------------------ diagnostics
    def err(self, code: str, message: str, span: Span, label: str = "") -> Diagnostic:
        return Diagnostic.error(code, message).primary(span, label)

    def emit(self, d: Diagnostic) -> Type:
        fx = self._cur_fx
        if d.code in (T.HOST_ONLY, T.KERNEL_ONLY) and fx is not None and fx.info is not None \
                and not fx.info.is_kernel:
            # why is this function device (host) code? point at the call that made it so
            site = self._call_sites.get((fx.info.qualname, fx.in_kernel))
            if site is not None:
                where = "device code: it is called from a kernel" if fx.in_kernel else "host code: it is " \
                    "called from host code"
                d = d.secondary(site, f"`{fx.info.name}` is {where} here")
        self.sink.emit(d)
        return ERROR

    def snippet(self, node: Any) -> str:
        try:
            return self.sources.snippet(node.span)
        except Exception:
            return "..."

    def _has_syntax_errors(self, mod: ModuleInfo) -> bool:
        """Whether parsing `mod`'s file reported errors (its items may be missing)."""
        sf = self.sources.by_name(mod.path)
        if sf is None:
            return False
        return any(d.code.startswith("E00") and any(lb.span.file == sf.id for lb in d.labels)
                   for d in self.sink.diagnostics)

    def cast_snippet(self, node: Any) -> str:
        """`node` quoted as the operand of a suggested `as` cast: `as` binds
        tighter than any binary operator, so `tx + 1` must become `(tx + 1)`."""
        text = self.snippet(node)
        if isinstance(node, (ast.Binary, ast.If, ast.RangeExpr)) and not _wrapped_in_parens(text):
            return f"({text})"
        return text

    # ------------------------------------------------------------ driver
    def run(self) -> None:
        key = self.root.path
        self._module_by_key[key] = self.root
        self.loader._cache.setdefault(key, None)  # never re-load the root through a cycle
        self._collect_module(self.root)
        for mod in list(self.program.modules.values()):
            self._resolve_signatures(mod)
        for qual in list(self._pending_consts):
            self._eval_const(qual)
        # kernels first (they make device functions known), then host entry points
        for info in self.program.kernels.values():
            self._enqueue(info, True)
        self._drain()
        main = self.root.own.get("main")
        self._check_main(main)
        if main is not None and main.kind is SymbolKind.FN:
            self._enqueue(self.program.functions[main.qualname or "main"], False)
        self._drain()
        for info in list(self.program.functions.values()):
            if not info.contexts:
                in_kernel = any(_mentions_tile(t) for t in (*info.param_types, info.ret))
                self._enqueue(info, in_kernel)
                self._drain()
        self._check_device_recursion()
        self._default_untyped()

    def _check_main(self, main: Symbol | None) -> None:
        """`fn main()` is where `tilec run` starts: no parameters, no result."""
        if main is None or not isinstance(main.decl, ast.FnDecl):
            return
        decl = main.decl
        if decl.is_kernel:
            self.emit(self.err(N.INVALID_MAIN, "`main` cannot be a kernel", decl.name.span, "declared `kernel fn`")
                      .note("`main` is the host entry point; it launches kernels")
                      .with_help("rename the kernel and launch it from `fn main()`"))
        elif decl.params or decl.generics:
            span = (decl.params[0].span.to(decl.params[-1].span) if decl.params
                    else decl.generics[0].span.to(decl.generics[-1].span))
            self.emit(self.err(N.INVALID_MAIN, "`main` cannot take parameters", span, "parameters of `main`")
                      .note("`tilec run` calls `main` with no arguments")
                      .with_help("build the inputs inside `main`, e.g. with `load_npy(\"x.npy\")`"))
        elif decl.ret is not None:
            info = self._fn_by_decl.get(decl)
            if info is None or not isinstance(info.ret, UnitT):
                self.emit(self.err(N.INVALID_MAIN, "`main` cannot return a value", decl.ret.span,
                                   "return type of `main`")
                          .with_help("print the result, or `assert` it, instead of returning it"))

    def _enqueue(self, info: FnInfo, in_kernel: bool) -> None:
        key = (info.qualname, in_kernel)
        if key not in self._checked:
            self._checked.add(key)
            info.contexts.add("kernel" if in_kernel else "host")
            (self.program.device_fns if in_kernel and not info.is_kernel
             else self.program.host_fns if not in_kernel else set()).add(info.qualname)
            self._queue.append((info, in_kernel))

    def _drain(self) -> None:
        while self._queue:
            info, in_kernel = self._queue.pop(0)
            self._check_fn(info, in_kernel)
            self._cur_fx = None

    def _check_device_recursion(self) -> None:
        """Device functions are inlined into their kernel, so device code
        cannot recurse: report each call that closes a cycle once."""
        graph: dict[str, list[tuple[str, Span]]] = {}
        for caller, callee, span in self._device_edges:
            graph.setdefault(caller, []).append((callee, span))
        state: dict[str, int] = {}  # 1 on the stack, 2 done
        stack: list[str] = []

        def visit(fn: str) -> None:
            state[fn] = 1
            stack.append(fn)
            for callee, span in graph.get(fn, []):
                if state.get(callee) == 1:
                    cycle = [*stack[stack.index(callee):], callee]
                    names = " -> ".join(f"`{c.rsplit('::', 1)[-1]}`" for c in cycle)
                    info = self.program.functions.get(callee)
                    d = self.err(T.RECURSIVE_DEVICE_FN,
                                 f"device function `{callee.rsplit('::', 1)[-1]}` calls itself", span,
                                 "recursive call in device code")
                    if info is not None:
                        d = d.secondary(info.decl.name.span, "defined here")
                    self.emit(d.note(f"the cycle: {names}")
                              .note("device functions are inlined into the kernel, so they cannot recurse")
                              .with_help("write the recursion as a `for` or `while` loop"))
                elif state.get(callee) is None:
                    visit(callee)
            stack.pop()
            state[fn] = 2

        for fn in list(graph):
            if fn not in state:
                visit(fn)

    def _default_untyped(self) -> None:
        for sym, (init, _) in self._mut_literals.items():
            if isinstance(sym.ty, (UntypedInt, UntypedFloat)):
                big = isinstance(init, ast.IntLit) and not -(1 << 31) <= init.value < (1 << 31)
                self._adopt(sym, F32 if isinstance(sym.ty, UntypedFloat) else
                            ScalarT(DType.I64) if big else I32)
        for node, ty in list(self.program.types.items()):
            if isinstance(ty, UntypedInt):
                big = isinstance(node, ast.IntLit) and not -(1 << 31) <= node.value < (1 << 31)
                self.program.types[node] = ScalarT(DType.I64 if big else DType.I32)
                if isinstance(node, ast.Binary):  # `let n = 1 << 40;` is i32 arithmetic
                    self._check_overflow(node, self.program.types[node])  # type: ignore[arg-type]
            elif isinstance(ty, UntypedFloat):
                self.program.types[node] = F32

    # ------------------------------------------------------------ modules and items
    def _collect_module(self, mod: ModuleInfo) -> None:
        for item in mod.ast.items:
            match item:
                case ast.FnDecl():
                    kind = SymbolKind.KERNEL if item.is_kernel else SymbolKind.FN
                    self._define_item(mod, item.name, kind, item)
                case ast.ConstDecl():
                    self._define_item(mod, item.name, SymbolKind.CONST, item)
                case ast.UseDecl():
                    pass
                case _:
                    assert_never(item)
        for item in mod.ast.items:
            if isinstance(item, ast.UseDecl):
                self._process_use(mod, item)

    def _define_item(self, mod: ModuleInfo, name: ast.Ident, kind: SymbolKind, decl: Any) -> None:
        prev = mod.own.get(name.name)
        if prev is not None:
            self.emit(self.err(N.DUPLICATE_DEFINITION, f"the name `{name.name}` is defined multiple times",
                               name.span, f"`{name.name}` redefined here")
                      .secondary(prev.span, f"previous definition of `{name.name}` here")
                      .with_help("rename one of them"))
            return
        sym = Symbol(kind, name.name, name.span, decl, qualname=mod.qual(name.name))
        mod.own[name.name] = sym
        mod.scope[name.name] = sym
        self.program.items[sym.qualname or name.name] = sym
        self.program.symbols[decl] = sym

    def _load_module(self, name: str, path: Any, display_span: Span) -> ModuleInfo | None:
        key_guess = None
        # stdlib files keep their real path as their name: the LSP opens them from it
        loaded = self.loader.load(path, self.sources, self.sink)
        if loaded is None:
            return None
        key_guess = loaded.key
        if key_guess in self._module_by_key:
            return self._module_by_key[key_guess]
        mod = ModuleInfo(name, loaded.key, loaded.module)
        self._module_by_key[loaded.key] = mod
        unique = name
        i = 2
        while unique in self.program.modules:
            unique = f"{name}{i}"
            i += 1
        mod.name = unique
        self.program.modules[unique] = mod
        self._collect_module(mod)
        if self.program.modules.get(unique) is mod and mod is not self.root:
            # signatures of late-loaded modules are resolved by run() (modules list copy
            # is taken after all collection finished)
            pass
        return mod

    def _process_use(self, mod: ModuleInfo, use: ast.UseDecl) -> None:
        if use.file is not None:
            fpath = ModuleLoader.user_module_path(mod.path, file=use.file.value)
            stem = use.file.value.rsplit("/", 1)[-1].removesuffix(".tile")
            target = self._load_module(stem, fpath, use.file.span)
            if target is None:
                self.emit(self.err(N.UNRESOLVED_MODULE, f"cannot find module file `{use.file.value}`",
                                   use.file.span, "no such file")
                          .note(f"looked for `{fpath}`, relative to the importing file"))
                return
            for name, sym in target.own.items():
                if name != "main":  # a module may be a program of its own; its entry point stays there
                    self._import(mod, name, sym, use.file.span)
            return
        segs = [s.name for s in use.path]
        if not segs:
            return
        # Which prefix of the path is the module? Try the full path first (for
        # `use std::nn;`, groups and globs), then all but the last segment.
        def locate(parts: list[str]) -> Any:
            if parts[0] == "std":
                return self.loader.std_module_path(parts) if len(parts) > 1 else None
            p = ModuleLoader.user_module_path(mod.path, segments=parts)
            return p if p.is_file() else None

        full = locate(segs)
        path: Any
        if use.names is not None or use.glob or (full is not None):
            mod_segs, item_ids = segs, (list(use.names) if use.names is not None else [])
            path = full
        else:
            mod_segs, item_ids = segs[:-1], [use.path[-1]]
            path = locate(mod_segs) if mod_segs else None
        mod_span = use.path[0].span.to(use.path[len(mod_segs) - 1].span) if mod_segs else use.span
        if path is None:
            shown = "::".join(mod_segs or segs)
            d = self.err(N.UNRESOLVED_MODULE, f"unresolved module `{shown}`", mod_span,
                         "no such module")
            if segs[0] == "std":
                guess = _suggest(shown, self.loader.std_modules())
                if guess:
                    d = d.with_help(f"a module with a similar name exists: `{guess}`")
                else:
                    d = d.note("the standard library has: " + ", ".join(
                        f"`{m}`" for m in self.loader.std_modules()))
            self.emit(d)
            return
        target = self._load_module("::".join(mod_segs), path, mod_span)
        if target is None:
            self.emit(self.err(N.UNRESOLVED_MODULE, f"cannot read module `{'::'.join(mod_segs)}`",
                               mod_span))
            return
        if use.glob:
            for name, sym in target.own.items():
                if name != "main":
                    self._import(mod, name, sym, use.span)
            return
        if not item_ids and use.names is None:
            msym = Symbol(SymbolKind.MODULE, mod_segs[-1], use.path[-1].span, use,
                          qualname=target.name, value=target.name)
            self._import(mod, mod_segs[-1], msym, use.path[-1].span)
            return
        for ident in item_ids:
            isym = target.own.get(ident.name)
            if isym is None and self._has_syntax_errors(target):
                continue  # likely dropped by that module's syntax error (already reported)
            if isym is None:
                d = self.err(N.UNRESOLVED_IMPORT, f"no `{ident.name}` in `{target.name}`", ident.span,
                             f"not found in `{target.name}`")
                guess = _suggest(ident.name, target.own)
                if guess:
                    d = d.with_help(f"an item with a similar name exists: `{guess}`")
                self.emit(d)
                continue
            self._import(mod, ident.name, isym, ident.span)
            self.program.symbols[ident] = isym

    def _import(self, mod: ModuleInfo, name: str, sym: Symbol, span: Span) -> None:
        prev = mod.scope.get(name)
        if prev is not None and prev is not sym:
            self.emit(self.err(N.DUPLICATE_DEFINITION, f"the name `{name}` is defined multiple times",
                               span, f"`{name}` imported here")
                      .secondary(prev.span, f"previous definition of `{name}` here")
                      .with_help("rename the local item or import only what you need"))
            return
        mod.scope[name] = sym

    # ------------------------------------------------------------ signatures
    def _generic_syms(self, decl: ast.FnDecl, mod: ModuleInfo) -> dict[str, Symbol]:
        out: dict[str, Symbol] = {}
        for g in decl.generics:
            if g.name.name in out:
                self.emit(self.err(N.DUPLICATE_DEFINITION,
                                   f"the generic parameter `{g.name.name}` is declared twice",
                                   g.name.span, "declared again here")
                          .secondary(out[g.name.name].span, "first declared here"))
                continue
            if g.is_const:
                ty = self._resolve_type(g.ty, {}, mod, in_kernel=False) if g.ty else I32
                if not (isinstance(ty, ScalarT) and _elem_is_int(ty.dtype)) and not _is_poison(ty):
                    self.emit(self.err(T.MISMATCHED_TYPES,
                                       f"const generic `{g.name.name}` must have an integer type",
                                       g.ty.span if g.ty else g.span, f"found `{ty}`")
                              .with_help(f"declare it as `const {g.name.name}: i32`"))
                sym = Symbol(SymbolKind.GENERIC, g.name.name, g.name.span, g, ty=I32,
                             dim=Dim.var(g.name.name))
            else:
                sym = Symbol(SymbolKind.TYPE_PARAM, g.name.name, g.name.span, g,
                             value=TypeParam(g.name.name))
            out[g.name.name] = sym
            self.program.symbols[g] = sym
        return out

    def _resolve_signatures(self, mod: ModuleInfo) -> None:
        for item in mod.ast.items:
            if not isinstance(item, ast.FnDecl):
                if isinstance(item, ast.ConstDecl):
                    sym = mod.own.get(item.name.name)
                    if sym is not None and sym.decl is item:
                        self._pending_consts[sym.qualname or item.name.name] = (item, mod)
                continue
            sym = mod.own.get(item.name.name)
            if sym is None or sym.decl is not item:
                continue  # a duplicate, already reported
            generics = self._generic_syms(item, mod)
            ptypes: list[Type] = []
            seen: dict[str, ast.Param] = {}
            for p in item.params:
                if p.name.name in seen:
                    self.emit(self.err(N.DUPLICATE_DEFINITION,
                                       f"identifier `{p.name.name}` is bound more than once in this "
                                       "parameter list", p.name.span, "used as parameter more than once")
                              .secondary(seen[p.name.name].name.span, "first bound here"))
                seen[p.name.name] = p
                ty = self._resolve_type(p.ty, generics, mod, in_kernel=item.is_kernel)
                if item.is_kernel:
                    ty = self._check_kernel_param(p, ty)
                ptypes.append(ty)
            ret = self._resolve_type(item.ret, generics, mod, in_kernel=item.is_kernel) if item.ret else UNIT
            if item.is_kernel and item.ret is not None and not isinstance(ret, UnitT):
                self.emit(self.err(T.KERNEL_RETURNS, f"kernel `{item.name.name}` cannot return a value",
                                   item.ret.span, "kernels return nothing")
                          .note("a kernel writes its results through its `&mut` parameters")
                          .with_help("remove the return type and `store` the result instead"))
                ret = ERROR  # the body is not checked against it either
            info = FnInfo(
                decl=item, qualname=sym.qualname or item.name.name, module=mod.name,
                is_kernel=item.is_kernel,
                const_generics=tuple(n for n, s in generics.items() if s.kind is SymbolKind.GENERIC),
                type_params=tuple(n for n, s in generics.items() if s.kind is SymbolKind.TYPE_PARAM),
                param_names=tuple(p.name.name for p in item.params),
                param_types=tuple(ptypes), ret=ret, symbol=sym,
                hints=self._hints(item),
            )
            sym.ty = FnT(info.qualname, info.param_types, ret, item.is_kernel)
            self._fn_by_decl[item] = info
            (self.program.kernels if item.is_kernel else self.program.functions)[info.qualname] = info

    def _hints(self, decl: ast.FnDecl) -> dict[str, Any]:
        hints: dict[str, Any] = {}
        for attr in decl.attrs:
            if attr.name.name not in KNOWN_ATTRIBUTES:
                d = self.err(N.UNKNOWN_ATTRIBUTE, f"unknown attribute `{attr.name.name}`",
                             attr.name.span, "not a tilec attribute")
                guess = _suggest(attr.name.name, KNOWN_ATTRIBUTES)
                self.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                          d.note("tilec knows `#[hints(num_warps = .., stages = ..)]`"))
                continue
            if not decl.is_kernel:
                self.emit(self.err(N.UNKNOWN_ATTRIBUTE, "`hints` only applies to a `kernel fn`",
                                   attr.name.span, "on a non-kernel function"))
                continue
            for arg in attr.args:
                key = arg.name.name if arg.name else None
                if key not in KNOWN_HINTS:
                    span = arg.name.span if arg.name else arg.span
                    d = self.err(N.UNKNOWN_ATTRIBUTE, f"unknown hint `{key or self.snippet(arg)}`", span,
                                 "not a known hint")
                    guess = _suggest(key or "", KNOWN_HINTS)
                    self.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                              d.note("known hints: `num_warps`, `stages`"))
                    continue
                value = arg.value.value if isinstance(arg.value, ast.IntLit) else None
                if value is None or value <= 0 or (key == "num_warps" and not (_is_pow2(value) and value <= 32)):
                    self.emit(self.err(T.MISMATCHED_TYPES,
                                       f"hint `{key}` needs a positive integer literal"
                                       + (" that is a power of two up to 32" if key == "num_warps" else ""),
                                       arg.value.span, "invalid value"))
                    continue
                hints[key] = value
        return hints

    def _check_kernel_param(self, p: ast.Param, ty: Type) -> Type:
        if contains_error(ty):
            return ERROR
        match ty:
            case RefT(mutable=True, inner=TensorT(shape=shape)):
                if shape is not None and any(d is None for d in shape):
                    return self.emit(
                        self.err(T.INVALID_KERNEL_PARAM,
                                 f"the tile shape of `&mut` parameter `{p.name.name}` must be known at "
                                 "compile time", p.ty.span, "`?` dimension in a `&mut` parameter")
                        .note("a `&mut` parameter is this block's own tile; its shape is the tile shape")
                        .with_help("use a const generic, e.g. `kernel fn k<const B: i32>(z: &mut "
                                   "Tensor<f32, [B]>)`"))
                if shape is not None:  # the own tile: the same backend limits as any tile
                    self._check_tile_limits(tuple(d for d in shape if d is not None), p.ty.span, None)
                return ty
            case RefT(mutable=False, inner=TensorT()):
                return ty
            case ScalarT(dtype=d) if isinstance(d, DType):
                return ty
            case ErrorT():
                return ty
            case _:
                diag = self.err(T.INVALID_KERNEL_PARAM, f"kernel parameter `{p.name.name}` has type `{ty}`",
                                p.ty.span, "cannot be passed to a kernel")
                diag = diag.note("kernel parameters are `&Tensor<..>`, `&mut Tensor<..>` or scalars")
                if isinstance(ty, TensorT):
                    diag = diag.with_help(f"take a reference: `&{self.snippet(p.ty)}` or "
                                          f"`&mut {self.snippet(p.ty)}`")
                return self.emit(diag)

    # ------------------------------------------------------------ constants
    def _eval_const(self, qual: str) -> Any:
        if qual in self.program.consts:
            return self.program.consts[qual]
        if qual not in self._pending_consts:
            return None
        if self._const_state.get(qual) == "busy":
            decl, _ = self._pending_consts[qual]
            self.emit(self.err(T.NOT_CONSTANT, f"constant `{decl.name.name}` depends on itself",
                               decl.name.span, "cycle in constant definitions"))
            return None
        self._const_state[qual] = "busy"
        decl, mod = self._pending_consts[qual]
        fx = _Fx(mod, None, False, UNIT, {})
        want = self._resolve_type(decl.ty, {}, mod, in_kernel=False) if decl.ty else None
        errors_before = self.sink.error_count
        ty = self.check_expr(decl.value, fx, want)
        value = self._const_value(decl.value, fx)
        sym = mod.own[decl.name.name]
        if want is not None and not _is_poison(ty):
            if not self._coerce(ty, want, decl.value):
                self._mismatch(want, ty, decl.value, decl.ty)
            ty = want
        if isinstance(ty, (UntypedInt,)):
            ty = I32
        elif isinstance(ty, UntypedFloat):
            ty = F32
        self._settle(decl.value, ty)
        if value is None and not _is_poison(ty) and self.sink.error_count == errors_before:
            self.emit(self.err(T.NOT_CONSTANT, f"the value of constant `{decl.name.name}` is not a "
                               "compile-time constant", decl.value.span, "not constant")
                      .note("constants are evaluated at compile time from literals and other constants"))
        sym.ty = ty
        sym.value = value
        if isinstance(value, int) and not isinstance(value, bool):
            sym.dim = Dim.const(value)
        self.program.consts[qual] = value
        self._const_state[qual] = "done"
        return value

    def _const_value(self, e: ast.Expr, fx: _Fx) -> Any:
        """The compile-time value of a constant expression, or None."""
        match e:
            case ast.IntLit(value=v) | ast.FloatLit(value=v) | ast.BoolLit(value=v):
                return v
            case ast.Name(ident=i):
                sym = fx.lookup(i.name)
                if sym is not None and sym.kind is SymbolKind.CONST:
                    return self._eval_const(sym.qualname or i.name)
                return None
            case ast.Unary(op=op, operand=x):
                v = self._const_value(x, fx)
                if v is None:
                    return None
                if op == "-":
                    return -v
                return (not v) if isinstance(v, bool) else ~v
            case ast.Binary(op=op, lhs=lhs, rhs=rhs):
                a, b = self._const_value(lhs, fx), self._const_value(rhs, fx)
                if a is None or b is None:
                    return None
                try:
                    return _fold(op, a, b)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return None
            case ast.Cast(expr=x, ty=t):
                v = self._const_value(x, fx)
                if v is None or not isinstance(t, ast.NamedType):
                    return None
                dt = DType.parse(t.name.name)
                if dt is None:
                    return None
                if dt.is_float:
                    return float(v)
                if dt is DType.BOOL:
                    return bool(v)
                return int(v)
            case _:
                return None

    # ------------------------------------------------------------ type expressions
    def _resolve_type(self, te: ast.TypeExpr | None, generics: dict[str, Symbol], mod: ModuleInfo,
                      in_kernel: bool) -> Type:
        match te:
            case None:
                return UNIT
            case ast.RefType(mutable=m, inner=inner):
                return RefT(m, self._resolve_type(inner, generics, mod, in_kernel))
            case ast.TupleType(elems=elems):
                if not elems:
                    return UNIT
                return TupleT(tuple(self._resolve_type(x, generics, mod, in_kernel) for x in elems))
            case ast.ShapeType():
                return self.emit(self.err(T.MISMATCHED_TYPES, "expected a type, found a shape", te.span,
                                          "a shape is only allowed inside `Tensor<..>` or `Tile<..>`"))
            case ast.NamedType(name=ident, args=args):
                name = ident.name
                if name in DTYPE_NAMES:
                    if args:
                        return self.emit(self.err(N.WRONG_GENERIC_COUNT,
                                                  f"`{name}` takes no generic arguments", te.span))
                    return ScalarT(DType(name))
                if name in generics and generics[name].kind is SymbolKind.TYPE_PARAM:
                    self.program.symbols[ident] = generics[name]
                    return ScalarT(TypeParam(name))
                if name in ("Tensor", "Tile"):
                    return self._resolve_array_type(te, generics, mod, in_kernel)
                cands = [*DTYPE_NAMES, "Tensor", "Tile", *(n for n, s in generics.items()
                                                           if s.kind is SymbolKind.TYPE_PARAM)]
                d = self.err(N.UNKNOWN_TYPE, f"cannot find type `{name}` in this scope", ident.span,
                             "not found in this scope")
                guess = _TYPE_ALIASES.get(name) or _suggest(name, cands)
                return self.emit(d.with_help(f"a type with a similar name exists: `{guess}`") if guess
                                 else d)
            case _:
                assert_never(te)

    def _resolve_array_type(self, te: ast.NamedType, generics: dict[str, Symbol], mod: ModuleInfo,
                            in_kernel: bool) -> Type:
        name = te.name.name
        if len(te.args) != 2 or not isinstance(te.args[1], ast.ShapeType):
            return self.emit(self.err(N.WRONG_GENERIC_COUNT,
                                      f"`{name}` takes an element type and a shape",
                                      te.span, f"expected `{name}<T, [d0, ..]>`")
                             .with_help(f"e.g. `{name}<f32, [128]>`"))
        elem_te, shape_te = te.args
        assert isinstance(shape_te, ast.ShapeType)
        elem_ty = (self._resolve_type(elem_te, generics, mod, in_kernel)
                   if not isinstance(elem_te, ast.ShapeType) and _is_type_expr(elem_te) else None)
        if elem_ty is None or not isinstance(elem_ty, (ScalarT, ErrorT)):
            return self.emit(self.err(T.MISMATCHED_TYPES, f"the element type of `{name}` must be a scalar "
                                      "type", elem_te.span, "expected `f32`, `i32`, ..."))
        if isinstance(elem_ty, ErrorT):
            return ERROR
        fx = _Fx(mod, None, in_kernel, UNIT, generics)
        dims: list[Dim | None] = []
        bad = False
        for d in shape_te.dims:
            if d is None:
                if name == "Tile":
                    self.emit(self.err(T.NOT_CONSTANT, "a tile dimension cannot be `?`", shape_te.span,
                                       "`?` in a tile shape")
                              .note("every dimension of a tile is a compile-time constant"))
                    bad = True
                dims.append(None)
                continue
            dim = self._static_dim(d, fx)
            if dim is None:
                self.emit(self.err(T.NOT_CONSTANT, "array dimension is not a compile-time constant",
                                   d.span, "not constant")
                          .with_help("use a literal, a `const`, or a const generic parameter"))
                bad = True
            dims.append(dim)
        if bad:
            return ERROR
        if name == "Tile":
            shape = tuple(d for d in dims if d is not None)
            self._check_tile_limits(shape, shape_te.span, None)
            return TileT(elem_ty.dtype, shape)
        return TensorT(elem_ty.dtype, tuple(dims))

    def _static_dim(self, e: ast.Expr, fx: _Fx) -> Dim | None:
        """A dimension expression in a type: literals, consts, const generics."""
        match e:
            case ast.IntLit(value=v):
                return Dim.const(v)
            case ast.Name(ident=i):
                sym = fx.lookup(i.name)
                if sym is None:
                    d = self.err(N.UNKNOWN_NAME, f"cannot find value `{i.name}` in this scope", i.span,
                                 "not found in this scope")
                    guess = _suggest(i.name, fx.visible_names())
                    self.emit(d.with_help(f"did you mean `{guess}`?") if guess else
                              d.with_help(f"declare it as a const generic: `<const {i.name}: i32>`"))
                    return Dim.var(i.name)  # avoid a second error about constness
                self.program.symbols[e] = sym
                if sym.kind is SymbolKind.GENERIC:
                    return Dim.var(i.name)
                if sym.kind is SymbolKind.CONST:
                    v = self._eval_const(sym.qualname or i.name)
                    return Dim.const(v) if isinstance(v, int) and not isinstance(v, bool) else None
                return None
            case ast.Binary(op=op, lhs=lhs, rhs=rhs):
                a, b = self._static_dim(lhs, fx), self._static_dim(rhs, fx)
                if a is None or b is None:
                    return None
                if op in ("/", "%") and b.const_value == 0:
                    self._div_by_zero(op, rhs)
                    return Dim.var("?")  # reported; no second error about constness
                return _dim_op(op, a, b)
            case ast.Unary(op="-", operand=x):
                a = self._static_dim(x, fx)
                return None if a is None else -a
            case _:
                return None

    # ------------------------------------------------------------ backend limits
    def _check_tile_limits(self, shape: Shape, span: Span, kernel: str | None,
                           secondary: tuple[Span, str] | None = None) -> bool:
        """Every constant dim a power of two and not too many elements; symbolic
        dims of a kernel body are remembered and checked per instantiation."""
        ok = True
        for d in shape:
            v = d.const_value
            if v is not None and not _is_pow2(v):
                dd = (self.err(T.TILE_DIM_NOT_POW2, f"tile dimension {v} is not a power of two", span,
                               f"tile shape {shape_str(shape)}")
                      .note("the GPU backend requires every tile dimension to be a power of two")
                      .with_help(f"use {_round_pow2(v)} and let edge tiles be partial"
                                 if v > 0 else "use a positive power of two"))
                if secondary:
                    dd = dd.secondary(*secondary)
                self.emit(dd)
                return False
        n = _numel(shape).const_value
        if n is not None and n > MAX_TILE_ELEMENTS:
            dd = (self.err(T.TILE_TOO_LARGE, f"a tile of shape {shape_str(shape)} has {n} elements",
                           span, "too large for one tile block")
                  .note(f"a tile may hold at most {MAX_TILE_ELEMENTS} elements")
                  .with_help("use smaller tiles and loop over them"))
            if secondary:
                dd = dd.secondary(*secondary)
            self.emit(dd)
            ok = False
        if kernel is not None and any(not d.is_const for d in shape):
            self.kernel_tiles.setdefault(kernel, []).append((shape, span))
        return ok

    # ------------------------------------------------------------ function bodies
    def _check_fn(self, info: FnInfo, in_kernel: bool) -> None:
        mod = self.program.modules.get(info.module, self.root)
        generics = {g.name.name: self.program.symbols[g] for g in info.decl.generics
                    if g in self.program.symbols}
        fx = _Fx(mod, info, in_kernel, info.ret, generics,
                 kernel_name=info.qualname if info.is_kernel else None)
        self._cur_fx = fx
        scope: dict[str, Symbol] = {}
        for p, ty in zip(info.decl.params, info.param_types, strict=False):
            sym = Symbol(SymbolKind.PARAM, p.name.name, p.name.span, p, ty=ty, mutable=p.mutable)
            self.program.symbols[p] = sym
            scope[p.name.name] = sym
        fx.scopes.append(scope)
        body_ty = self._check_block(info.decl.body, fx, info.ret, new_scope=False)
        if not _is_poison(body_ty) and not self._coerce(body_ty, info.ret, info.decl.body.tail):
            at = info.decl.body.tail if info.decl.body.tail is not None else None
            if at is not None:
                self._mismatch(info.ret, body_ty, at, info.decl.ret)
            else:
                self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types",
                                   info.decl.body.span.at_end(),
                                   f"expected `{info.ret}`, found `()`")
                          .secondary(info.decl.ret.span if info.decl.ret else info.decl.name.span,
                                     f"`{info.name}` returns `{info.ret}`")
                          .with_help("end the body with the value to return (no `;`)"))
        elif info.decl.body.tail is not None:
            self._settle(info.decl.body.tail, info.ret)

    def _check_block(self, b: ast.Block, fx: _Fx, expected: Type | None, new_scope: bool = True) -> Type:
        if new_scope:
            fx.scopes.append({})
        diverges = False
        try:
            for st in b.stmts:
                if self._check_stmt(st, fx):
                    diverges = True
            if b.tail is not None:
                ty = self.check_expr(b.tail, fx, expected)
            else:
                ty = NEVER if diverges else UNIT
        finally:
            if new_scope:
                fx.scopes.pop()
        self.program.types[b] = ty
        return ty

    def _bind_pattern(self, pat: ast.Pattern, ty: Type, fx: _Fx, value: ast.Expr | None,
                      kind: SymbolKind = SymbolKind.LOCAL) -> None:
        match pat:
            case ast.NamePat(name=ident, mutable=m):
                sym = Symbol(kind, ident.name, ident.span, pat, ty=ty, mutable=m)
                if m and isinstance(ty, (UntypedInt, UntypedFloat)):
                    # `let mut acc = 0.0;`: the variable takes the type of its first
                    # typed use (`acc += t.sum()` on f16 makes it f16), else the default
                    self._mut_literals[sym] = (value, [])
                if value is not None and not m:
                    sym.dim = self.program.dims.get(value)
                    if value in self._shape_values:
                        sym.value = self._shape_values[value]
                self.program.symbols[pat] = sym
                self.program.types[pat] = ty
                fx.scopes[-1][ident.name] = sym
            case ast.TuplePat(elems=elems):
                if isinstance(ty, TupleT) and len(ty.elems) == len(elems):
                    vals = value.elems if isinstance(value, ast.TupleExpr) and \
                        len(value.elems) == len(elems) else [None] * len(elems)
                    for p, t, v in zip(elems, ty.elems, vals, strict=True):
                        self._bind_pattern(p, t, fx, v, kind)
                else:
                    if not _is_poison(ty):
                        self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", pat.span,
                                           f"expected a tuple of {len(elems)} elements, found `{ty}`"))
                    for p in elems:
                        self._bind_pattern(p, ERROR, fx, None, kind)
                self.program.types[pat] = ty
            case ast.WildcardPat():
                self.program.types[pat] = ty
            case _:
                assert_never(pat)

    def _check_stmt(self, st: ast.Stmt, fx: _Fx) -> bool:
        """Check one statement; True when it always diverges (return/break/continue)."""
        match st:
            case ast.Let(pattern=pat, ty=te, value=value):
                want = self._resolve_type(te, fx.generics, fx.module, fx.in_kernel) if te else None
                if value is None:
                    if want is None:
                        self.emit(self.err(T.MISMATCHED_TYPES, "type annotations needed", pat.span,
                                           "give this binding a type or a value"))
                        want = ERROR
                    self._bind_pattern(pat, want, fx, None)
                    return False
                ty = self.check_expr(value, fx, want)
                if want is not None:
                    if not _is_poison(ty) and not self._coerce(ty, want, value):
                        self._mismatch(want, ty, value, te)
                    else:
                        self._settle(value, want)
                    ty = want
                if isinstance(ty, UnitT) and isinstance(pat, ast.NamePat) and isinstance(value, ast.Call):
                    pass  # `let x = f();` of a unit function: legal, if useless
                self._bind_pattern(pat, ty, fx, value)
                return isinstance(ty, NeverT)
            case ast.Assign():
                self._check_assign(st, fx)
                return False
            case ast.ExprStmt(expr=e, semi=semi):
                ty = self.check_expr(e, fx, None if semi else UNIT)
                if isinstance(ty, OpT) and not fx.graph:
                    self.emit(self.err(T.UNUSED_OPERATION, f"the launch of `{ty.kernel}` is never run", e.span,
                                       "this builds an operation and drops it")
                              .note("a kernel call only builds an operation")
                              .with_help("run it with `.sync()`, or start it with `.launch()`"))
                return isinstance(ty, NeverT)
            case ast.For(pattern=pat, iter=it, body=body):
                ity = self.check_expr(it, fx, None)
                elem: Type = ERROR
                if isinstance(ity, RangeT):
                    elem = ity.elem
                elif not _is_poison(ity):
                    self.emit(self.err(T.MISMATCHED_TYPES, "`for` loops iterate over ranges", it.span,
                                       f"expected a range `a..b`, found `{ity}`"))
                fx.scopes.append({})
                self._bind_pattern(pat, elem, fx, None)
                fx.loops += 1
                try:
                    self._check_block(body, fx, UNIT)
                finally:
                    fx.loops -= 1
                    fx.scopes.pop()
                return False
            case ast.While(cond=c, body=body):
                self._expect_bool(c, fx)
                fx.loops += 1
                try:
                    self._check_block(body, fx, UNIT)
                finally:
                    fx.loops -= 1
                return False
            case ast.Return(value=v):
                if v is None:
                    if not isinstance(fx.ret, UnitT) and not _is_poison(fx.ret):
                        self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", st.span,
                                           f"expected `{fx.ret}`, found `()`")
                                  .with_help("return a value: `return <expr>;`"))
                    return True
                ty = self.check_expr(v, fx, fx.ret)
                if not _is_poison(ty) and not self._coerce(ty, fx.ret, v):
                    self._mismatch(fx.ret, ty, v, fx.info.decl.ret if fx.info else None)
                else:
                    self._settle(v, fx.ret)
                return True
            case ast.Break() | ast.Continue():
                if fx.loops == 0:
                    word = "break" if isinstance(st, ast.Break) else "continue"
                    self.emit(self.err(N.LOOP_CONTROL_OUTSIDE_LOOP, f"`{word}` outside of a loop", st.span,
                                       f"cannot `{word}` outside of a loop"))
                return True
            case _:
                assert_never(st)

    def _check_assign(self, st: ast.Assign, fx: _Fx) -> None:
        target = st.target
        if not isinstance(target, ast.Name):
            self.check_expr(target, fx, None)
            self.check_expr(st.value, fx, None)
            what = "a tile element" if isinstance(target, ast.Index) else "this expression"
            self.emit(self.err(N.INVALID_ASSIGN_TARGET, f"cannot assign to {what}", target.span,
                               "not a variable")
                      .note("tiles are immutable values; only variables can be assigned")
                      .with_help("bind a new value: `let t2 = where(mask, v, t);`"
                                 if isinstance(target, ast.Index) else "assign to a `let mut` variable"))
            return
        tty = self.check_expr(target, fx, None)
        if fx.graph and isinstance(tty, TensorT):
            self._graph_effect(st.span, f"this assignment to `{target.ident.name}`")
        sym = self.program.symbols.get(target)
        if sym is not None and not sym.mutable and not _is_poison(tty):
            if sym.kind in (SymbolKind.LOCAL, SymbolKind.PARAM):
                noun = "variable" if sym.kind is SymbolKind.LOCAL else "parameter"
                d = (self.err(N.ASSIGN_IMMUTABLE, f"cannot assign twice to immutable {noun} `{sym.name}`",
                              st.span, "cannot assign twice to immutable variable")
                     .secondary(sym.span, f"first assignment to `{sym.name}`" if noun == "variable"
                                else f"`{sym.name}` is not declared `mut`")
                     .with_help(f"consider making this binding mutable: `mut {sym.name}`"))
            else:
                d = self.err(N.INVALID_ASSIGN_TARGET, f"cannot assign to {sym.kind.value} `{sym.name}`",
                             target.span, "not a variable")
            self.emit(d)
        if st.op == "=":
            vty = self.check_expr(st.value, fx, tty)
            if isinstance(tty, (UntypedInt, UntypedFloat)) and isinstance(vty, ScalarT) and \
                    self._coerce(tty, vty, target):
                self._settle(target, vty)  # the variable adopts the assigned type
                tty = vty
            if not _is_poison(tty, vty) and not self._coerce(vty, tty, st.value):
                self._mismatch(tty, vty, st.value, None)
            else:
                self._settle(st.value, tty)
            return
        op = st.op[:-1]
        vty = self.check_expr(st.value, fx, tty)
        rty = self._binary_types(op, tty, vty, st.target, st.value, st.op_span, fx)
        if sym is not None and isinstance(tty, (UntypedInt, UntypedFloat)) and sym.ty is not None:
            tty = sym.ty  # adopted by the operation
        if not _is_poison(rty, tty) and not self._coerce(rty, tty, st.value):
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", st.span,
                               f"`{sym.name if sym else 'target'}` has type `{tty}` but `{op}` gives `{rty}`")
                      .with_help("a compound assignment cannot change the variable's type"))

    # ------------------------------------------------------------ coercion
    def _coerce(self, found: Type, want: Type, node: Any) -> bool:
        """Whether a value of type `found` may be used where `want` is expected."""
        if _is_poison(found, want) or found == want:
            return True
        match want, found:
            case ScalarT(dtype=d), UntypedInt():
                return isinstance(d, TypeParam) or (isinstance(d, DType) and d is not DType.BOOL)
            case ScalarT(dtype=d), UntypedFloat():
                return isinstance(d, TypeParam) or _elem_is_float(d)
            case TensorT(), TensorT():
                return self._tensor_fits(found, want)
            case RefT(mutable=wm, inner=wi), RefT(mutable=fm, inner=fi):
                return (fm or not wm) and self._coerce(fi, wi, None)
            case TupleT(elems=we), TupleT(elems=fe):
                return len(we) == len(fe) and all(self._coerce(f, w, None) for f, w in zip(fe, we, strict=False))
            case ShapeT(rank=wr), ShapeT(rank=fr):
                return wr is None or fr is None or wr == fr
            case TileT(dtype=wd, shape=ws), TileT(dtype=fd, shape=fs):
                return wd == fd and ws == fs
            case _:
                return False

    @staticmethod
    def _tensor_fits(found: TensorT, want: TensorT) -> bool:
        if want.dtype is not None and found.dtype is not None and want.dtype != found.dtype:
            return False
        if want.shape is None or found.shape is None:
            return True
        if len(want.shape) != len(found.shape):
            return False
        return all(w is None or f is None or w == f for w, f in zip(want.shape, found.shape, strict=False))

    def _mismatch(self, want: Type, found: Type, node: Any, why: Any) -> None:
        d = self.err(T.MISMATCHED_TYPES, "mismatched types", node.span,
                     f"expected `{want}`, found `{found}`")
        if why is not None:
            d = d.secondary(why.span, "expected because of this")
        fe, we = _elem_of_value(found), _elem_of_value(want)
        if isinstance(fe, DType) and isinstance(we, DType) and fe != we and \
                isinstance(found, (ScalarT, TileT, TensorT)):
            d = d.with_help(f"cast with `as`: `{self.cast_snippet(node)} as {we.value}`")
        elif isinstance(found, TensorT) and isinstance(want, RefT):
            d = d.with_help(f"borrow it: `&{self.snippet(node)}`")
        self.emit(d)

    def _adopt(self, sym: Symbol, target: ScalarT) -> None:
        """Fix the type of a `let mut` bound to a literal, and of its uses so far."""
        init, uses = self._mut_literals[sym]
        sym.ty = target
        self.program.types[sym.decl] = target
        if init is not None:
            self._settle_scalar(init, target)
        for u in uses:
            self._settle_scalar(u, target)

    def _settle(self, e: Any, ty: Type) -> None:
        """Give untyped literals under `e` the element type of `ty` (context)."""
        target: ScalarT | None = None
        if isinstance(ty, ScalarT):
            target = ty
        elif isinstance(ty, TileT):
            target = ScalarT(ty.dtype)
        elif isinstance(ty, (TensorT, RefT)):
            el = _elem_of_value(ty)
            target = ScalarT(el) if el is not None else None
        if target is None:
            return
        self._settle_scalar(e, target)

    def _settle_scalar(self, e: Any, target: ScalarT) -> None:
        cur = self.program.types.get(e)
        if not isinstance(cur, (UntypedInt, UntypedFloat)):
            return
        if isinstance(cur, UntypedFloat) and not (_elem_is_float(target.dtype) or
                                                  isinstance(target.dtype, TypeParam)):
            return
        if target.dtype is DType.BOOL:
            return
        self.program.types[e] = target
        if isinstance(e, ast.Name):
            sym = self.program.symbols.get(e)
            if sym is not None and sym in self._mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)):
                self._adopt(sym, target)
        if isinstance(e, ast.IntLit) and isinstance(target.dtype, DType) and target.dtype.is_int:
            lo, hi = _int_range(target.dtype)
            if not lo <= e.value <= hi + (e in self._negated):
                self.emit(self.err(T.LITERAL_OUT_OF_RANGE, f"literal out of range for `{target}`", e.span,
                                   f"`{target}` holds {lo}..={hi}"))
        if isinstance(e, ast.Binary):
            self._check_overflow(e, target)
        match e:
            case ast.Unary(operand=x):
                self._settle_scalar(x, target)
            case ast.Binary(op=op, lhs=l, rhs=r):
                if op in ("<<", ">>"):
                    self._settle_scalar(l, target)
                elif op not in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                    self._settle_scalar(l, target)
                    self._settle_scalar(r, target)
            case ast.If(then=t, else_=el):
                self._settle_scalar(t, target)
                if el is not None:
                    self._settle_scalar(el, target)
            case ast.Block(tail=tail) | ast.UnsafeBlock(body=ast.Block(tail=tail)):
                if tail is not None:
                    self._settle_scalar(tail, target)
                if isinstance(e, ast.UnsafeBlock):
                    self.program.types[e.body] = target
            case _:
                pass

    def _check_overflow(self, e: ast.Binary, ty: ScalarT) -> None:
        """Constant integer arithmetic whose value does not fit its type
        (`1 << 40` as `i32`): rustc rejects it too, rather than wrap to 0."""
        if not isinstance(ty.dtype, DType) or not ty.dtype.is_int or ty.dtype is DType.BOOL or e in self._overflowed:
            return
        lo, hi = _int_range(ty.dtype)
        bits = (hi - lo).bit_length()
        if e.op in ("<<", ">>"):
            # as in Rust, a shift overflows only by its amount; the bits shifted out wrap
            sd = self.program.dims.get(e.rhs)
            amount = sd.const_value if sd is not None else None
            if amount is None or 0 <= amount < bits:
                return
            self._overflowed.add(e)
            self.emit(self.err(T.CONSTANT_OVERFLOW, f"this shift overflows `{ty}`", e.span,
                               f"shifting a {bits}-bit `{ty}` by {amount} bits")
                      .with_help(self._wider_help(ty.dtype, bits, None)))
            return
        d = self.program.dims.get(e)
        value = d.const_value if d is not None else None
        if value is None or lo <= value <= hi:
            return
        self._overflowed.add(e)
        self.emit(self.err(T.CONSTANT_OVERFLOW, f"this arithmetic operation overflows `{ty}`", e.span,
                           f"the value {value} does not fit in `{ty}` ({lo}..={hi})")
                  .with_help(self._wider_help(ty.dtype, bits, value)))

    @staticmethod
    def _wider_help(dt: DType, bits: int, value: int | None) -> str:
        signed = dt.value.startswith("i")
        if not signed and value is not None and value < 0:
            return f"`{dt.value}` holds no negative values: compute in a signed type such as `i64`"
        for w in (16, 32, 64):
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
            if w > bits and (value is None or lo <= value <= hi):
                name = f"{'i' if signed else 'u'}{w}"
                return (f"compute in a wider type: a suffixed operand like `1{name}`, or a typed binding "
                        f"(`let n: {name} = ..`)")
        return "the result cannot be represented; check the operands"

    # ------------------------------------------------------------ expressions
    def check_expr(self, e: ast.Expr, fx: _Fx, expected: Type | None = None) -> Type:
        try:
            ty = self._expr(e, fx, expected)
        except RecursionError:
            ty = self.emit(self.err(T.INVALID_OPERAND, "expression nested too deeply", e.span))
        self.program.types[e] = ty
        return ty

    def _expr(self, e: ast.Expr, fx: _Fx, expected: Type | None) -> Type:
        match e:
            case ast.IntLit(value=v, suffix=suf):
                self.program.dims[e] = Dim.const(v)
                if suf is None:
                    return UNTYPED_INT
                dt = DType.parse(suf)
                if dt is None:
                    return self.emit(self.err(T.INVALID_CAST, f"invalid suffix `{suf}` for an integer literal",
                                              e.span))
                if dt.is_int:
                    lo, hi = _int_range(dt)
                    if not lo <= v <= hi + (e in self._negated):
                        self.emit(self.err(T.LITERAL_OUT_OF_RANGE, f"literal out of range for `{suf}`",
                                           e.span, f"`{suf}` holds {lo}..={hi}"))
                return ScalarT(dt)
            case ast.FloatLit(suffix=suf):
                if suf is None:
                    return UNTYPED_FLOAT
                dt = DType.parse(suf)
                if dt is None or not dt.is_float:
                    return self.emit(self.err(T.INVALID_CAST, f"invalid suffix `{suf}` for a float literal",
                                              e.span))
                return ScalarT(dt)
            case ast.BoolLit():
                return BOOL
            case ast.StrLit():
                return StrT()
            case ast.Name(ident=ident):
                return self._name(e, ident, fx)
            case ast.Path():
                sym = self._resolve_path(e, fx, want_fn=False)
                if sym is None:
                    return ERROR
                self.program.symbols[e] = sym
                if sym.kind is SymbolKind.CONST:
                    self._eval_const(sym.qualname or sym.name)
                    if sym.dim is not None:
                        self.program.dims[e] = sym.dim
                return sym.ty or ERROR
            case ast.Call():
                return self._call(e, fx, expected)
            case ast.MethodCall():
                return self._method_call(e, fx, expected)
            case ast.Field(receiver=r, field=f):
                rty = self.check_expr(r, fx, None)
                if _is_poison(rty):
                    return ERROR
                if isinstance(rty, TupleT) and f.name.isdigit():
                    i = int(f.name)
                    if i < len(rty.elems):
                        return rty.elems[i]
                    return self.emit(self.err(T.NO_FIELD, f"no field `{i}` on type `{rty}`", f.span,
                                              f"the tuple has {_plural(len(rty.elems), 'element')}"))
                return self.emit(self.err(T.NO_FIELD, f"no field `{f.name}` on type `{rty}`", f.span,
                                          "unknown field"))
            case ast.Index(receiver=r, index=ix):
                rty = self.check_expr(r, fx, None)
                ity = self.check_expr(ix, fx, None)
                if _is_poison(rty, ity):
                    return ERROR
                if isinstance(rty, ShapeT):
                    if not _is_intlike(ity):
                        return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", ix.span,
                                                  f"expected an integer index, found `{ity}`"))
                    self._settle(ix, I32)
                    k = self.program.dims.get(ix)
                    kv = k.const_value if k is not None else None
                    if kv is not None and rty.rank is not None and not 0 <= kv < rty.rank:
                        return self.emit(self.err(T.NO_FIELD, f"index {kv} is out of range for a shape of "
                                                  f"rank {rty.rank}", ix.span, "out of range"))
                    sv = self._shape_values.get(r)
                    if sv is None and isinstance(r, ast.Name):
                        s = self.program.symbols.get(r)
                        sv = s.value if s is not None and isinstance(s.value, tuple) else None
                    if sv is not None and kv is not None and 0 <= kv < len(sv) and sv[kv] is not None:
                        self.program.dims[e] = sv[kv]  # type: ignore[assignment]
                    return I32
                if isinstance(rty, TupleT):
                    return self.emit(self.err(T.NO_FIELD, "tuples are indexed with `.0`, `.1`, ...", e.span,
                                              "cannot index a tuple with `[]`"))
                return self.emit(self.err(T.INVALID_OPERAND, f"cannot index a value of type `{rty}`", e.span,
                                          "not indexable")
                                 .note("tiles are whole values: use `where`, reductions or `reshape`"))
            case ast.Unary(op=op, operand=x):
                return self._unary(e, op, x, fx, expected)
            case ast.Binary(op=op, lhs=lhs, rhs=rhs):
                lt = self.check_expr(lhs, fx, expected if op not in (*_COMPARE, "&&", "||") else None)
                rt = self.check_expr(rhs, fx, lt if isinstance(lt, (ScalarT, TileT)) else expected
                                     if op not in (*_COMPARE, "&&", "||") else None)
                if isinstance(lt, (UntypedInt, UntypedFloat)) and isinstance(rt, (ScalarT,)):
                    pass
                ty = self._binary_types(op, lt, rt, lhs, rhs, e.op_span, fx)
                a, b = self.program.dims.get(lhs), self.program.dims.get(rhs)
                if op in ("/", "%") and b is not None and b.const_value == 0 and _is_intlike(rt) \
                        and _is_intlike(lt):
                    self._div_by_zero(op, rhs)
                    return ERROR
                if a is not None and b is not None and _is_intlike(lt) and _is_intlike(rt):
                    try:
                        d = _dim_op(op, a, b)
                    except ZeroDivisionError:
                        d = None
                    if d is not None:
                        self.program.dims[e] = d
                        if isinstance(ty, ScalarT):
                            self._check_overflow(e, ty)
                return ty
            case ast.Cast(expr=x, ty=te):
                return self._cast(e, x, te, fx)
            case ast.Ref(mutable=m, expr=x):
                ity = self.check_expr(x, fx, None)
                if _is_poison(ity):
                    return ERROR
                if isinstance(ity, RefT):
                    if m and not ity.mutable:
                        return self.emit(self.err(T.MISMATCHED_TYPES, "cannot borrow a `&` reference as "
                                                  "mutable", e.span, f"`{self.snippet(x)}` is `{ity}`"))
                    return RefT(m, ity.inner)  # re-borrow
                return RefT(m, ity)
            case ast.TupleExpr(elems=elems):
                if not elems:
                    return UNIT
                want = expected.elems if isinstance(expected, TupleT) and \
                    len(expected.elems) == len(elems) else (None,) * len(elems)
                return TupleT(tuple(self.check_expr(x, fx, w) for x, w in zip(elems, want, strict=False)))
            case ast.ArrayExpr(elems=elems):
                dims: list[Dim | None] = []
                for x in elems:
                    t = self.check_expr(x, fx, None)
                    if not _is_poison(t) and not _is_intlike(t):
                        self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", x.span,
                                           f"expected an integer, found `{t}`")
                                  .note("`[..]` lists shapes and tile indices, which are integers"))
                    if isinstance(t, UntypedInt):
                        self.program.types[x] = I32
                    dims.append(self.program.dims.get(x))
                self._shape_values[e] = tuple(dims)
                return ShapeT(len(elems))
            case ast.RangeExpr(start=s, end=en):
                st = self.check_expr(s, fx, None)
                et = self.check_expr(en, fx, st if isinstance(st, ScalarT) else None)
                if _is_poison(st, et):
                    return RangeT(ERROR)
                if not _is_intlike(st) or not _is_intlike(et):
                    bad = s if not _is_intlike(st) else en
                    self.emit(self.err(T.MISMATCHED_TYPES, "ranges are over integers", bad.span,
                                       f"expected an integer, found `{self.program.types[bad]}`"))
                    return RangeT(ERROR)
                if isinstance(st, ScalarT) and isinstance(et, ScalarT) and st != et:
                    self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{st}` and `{et}`", e.span,
                                       "both ends of a range must have the same type")
                              .with_help(f"cast with `as`: `{self.cast_snippet(en)} as {st}`"))
                    return RangeT(ERROR)
                elem = st if isinstance(st, ScalarT) else et if isinstance(et, ScalarT) else I32
                self._settle(s, elem)
                self._settle(en, elem)
                return RangeT(elem)
            case ast.Block():
                return self._check_block(e, fx, expected)
            case ast.If(cond=c, then=then, else_=els):
                self._expect_bool(c, fx, allow_tile=False)
                tt = self._check_block(then, fx, expected)
                if els is None:
                    if not _is_poison(tt) and not isinstance(tt, UnitT) and expected is not None \
                            and not isinstance(expected, UnitT):
                        self.emit(self.err(T.MISMATCHED_TYPES, "`if` may be missing an `else` clause", e.span,
                                           f"expected `{tt}`, found `()`")
                                  .with_help("add an `else` branch with a value"))
                        return ERROR
                    return UNIT
                et = self.check_expr(els, fx, expected or (tt if not _is_poison(tt) else None))
                return self._join(tt, et, then, els)
            case ast.UnsafeBlock(body=b):
                fx.unsafe += 1
                try:
                    return self._check_block(b, fx, expected)
                finally:
                    fx.unsafe -= 1
            case ast.GraphBlock(body=b):
                if fx.in_kernel:
                    self._check_block(b, fx, None)
                    return self.emit(self.err(T.HOST_ONLY, "`graph` is only allowed in host code", e.span,
                                              "inside a kernel")
                                     .with_help("record launches in a `graph { .. }` block in `main`"))
                fx.graph += 1
                try:
                    self._check_block(b, fx, None)
                finally:
                    fx.graph -= 1
                return GraphT()
            case _:
                assert_never(e)

    def _graph_effect(self, span: Span, what: str) -> None:
        """A host effect written inside `graph { }`: it would run once, while
        the graph is recorded, and never on `replay()`, which is not what the
        block reads like."""
        self.emit(self.err(T.HOST_EFFECT_IN_GRAPH, f"{what} in a `graph` block runs only once, while recording",
                           span, "not replayed by `g.replay()`")
                  .note("a graph records kernel launches; other host statements in its block run when the "
                        "block is evaluated, not on each replay")
                  .with_help("move it out of the `graph { .. }` block, next to the `replay()` calls"))

    def _div_by_zero(self, op: str, rhs: ast.Expr) -> None:
        word = "division" if op == "/" else "remainder"
        self.emit(self.err(T.DIVISION_BY_ZERO, f"integer {word} by zero", rhs.span, "this is always zero")
                  .note("integer division by zero has no value, so a divisor known to be zero is an error"))

    def _join(self, a: Type, b: Type, na: Any, nb: Any) -> Type:
        if isinstance(a, NeverT):
            return b
        if isinstance(b, NeverT):
            return a
        if _is_poison(a, b):
            return ERROR
        if a == b:
            return a
        if self._coerce(b, a, nb):
            self._settle(nb, a)
            return a
        if self._coerce(a, b, na):
            self._settle(na, b)
            return b
        if isinstance(a, TensorT) and isinstance(b, TensorT) and a.dtype == b.dtype:
            if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
                return TensorT(a.dtype, None)
            return TensorT(a.dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape, strict=False)))
        self.emit(self.err(T.MISMATCHED_TYPES, "`if` and `else` have incompatible types", nb.span,
                           f"expected `{a}`, found `{b}`")
                  .secondary(na.span, f"this is `{a}`"))
        return ERROR

    def _expect_bool(self, c: ast.Expr, fx: _Fx, allow_tile: bool = False) -> None:
        ty = self.check_expr(c, fx, BOOL)
        if _is_poison(ty) or ty == BOOL:
            return
        if isinstance(ty, TileT) and ty.dtype is DType.BOOL:
            self.emit(self.err(T.MISMATCHED_TYPES, "a condition must be a single `bool`", c.span,
                               f"this is a `{ty}`")
                      .with_help("select element-wise with `where(cond, a, b)`, or reduce the tile first"))
            return
        self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", c.span, f"expected `bool`, found `{ty}`")
                  .with_help("compare it, e.g. `x != 0`"))

    # ------------------------------------------------------------ names
    def _name(self, e: ast.Name, ident: ast.Ident, fx: _Fx) -> Type:
        sym = fx.lookup(ident.name)
        if sym is None:
            if ident.name in FUNCTIONS:
                sig = FUNCTIONS[ident.name]
                return self.emit(self.err(T.MISMATCHED_TYPES, f"built-in function `{ident.name}` used as a value",
                                          e.span, "not a value")
                                 .with_help(f"call it: `{sig.signature}`"))
            d = self.err(N.UNKNOWN_NAME, f"cannot find value `{ident.name}` in this scope", ident.span,
                         "not found in this scope")
            guess = _suggest(ident.name, fx.visible_names())
            return self.emit(d.with_help(f"a local variable with a similar name exists: `{guess}`")
                             if guess else d)
        self.program.symbols[e] = sym
        match sym.kind:
            case SymbolKind.LOCAL | SymbolKind.PARAM:
                if sym in self._mut_literals and isinstance(sym.ty, (UntypedInt, UntypedFloat)):
                    self._mut_literals[sym][1].append(e)
                if sym.dim is not None:
                    self.program.dims[e] = sym.dim
                if isinstance(sym.value, tuple):
                    self._shape_values[e] = sym.value
                return sym.ty or ERROR
            case SymbolKind.CONST:
                self._eval_const(sym.qualname or sym.name)
                if sym.dim is not None:
                    self.program.dims[e] = sym.dim
                ty = sym.ty or ERROR
                # a constant's literal-ness is kept so `N * t` works for any element type
                if isinstance(ty, ScalarT) and ty.dtype is DType.I32 and isinstance(sym.decl, ast.ConstDecl) \
                        and sym.decl.ty is None:
                    return UNTYPED_INT
                if isinstance(ty, ScalarT) and ty.dtype is DType.F32 and isinstance(sym.decl, ast.ConstDecl) \
                        and sym.decl.ty is None:
                    return UNTYPED_FLOAT
                return ty
            case SymbolKind.GENERIC:
                self.program.dims[e] = Dim.var(sym.name)
                return UNTYPED_INT if fx.in_kernel else I32
            case SymbolKind.TYPE_PARAM:
                return self.emit(self.err(T.MISMATCHED_TYPES, f"type parameter `{sym.name}` used as a value",
                                          e.span, "a type, not a value"))
            case SymbolKind.FN | SymbolKind.KERNEL:
                return sym.ty or ERROR
            case SymbolKind.MODULE:
                return self.emit(self.err(T.MISMATCHED_TYPES, f"module `{sym.name}` used as a value", e.span,
                                          "a module, not a value")
                                 .with_help(f"name an item in it: `{sym.name}::item`"))
            case SymbolKind.BUILTIN | SymbolKind.METHOD:
                return ERROR
            case _:
                assert_never(sym.kind)

    def _resolve_path(self, p: ast.Path, fx: _Fx, want_fn: bool) -> Symbol | None:
        segs = [s.name for s in p.segments]
        head = fx.lookup(segs[0])
        target: ModuleInfo | None = None
        if head is not None and head.kind is SymbolKind.MODULE:
            target = self.program.modules.get(head.value)
            rest = segs[1:]
            mod_len = 1
        else:
            # a full path to a module: `std::nn::softmax`
            mod_segs = segs[:-1]
            mod_len = len(mod_segs)
            name = "::".join(mod_segs)
            target = self.program.modules.get(name)
            if target is None:
                path = (self.loader.std_module_path(mod_segs) if mod_segs[0] == "std" and len(mod_segs) > 1
                        else ModuleLoader.user_module_path(fx.module.path, segments=mod_segs))
                if path is not None and (not hasattr(path, "is_file") or path.is_file()):
                    target = self._load_module(name, path, p.span)
                    if target is not None:
                        self._resolve_signatures(target)
                        for q in list(self._pending_consts):
                            self._eval_const(q)
            rest = segs[-1:]
        span_mod = p.segments[0].span.to(p.segments[mod_len - 1].span)
        if target is None:
            self.emit(self.err(N.UNRESOLVED_MODULE, f"unresolved module `{'::'.join(segs[:mod_len])}`", span_mod,
                               "no such module")
                      .with_help(f"import it first: `use {'::'.join(segs[:mod_len])};`"))
            return None
        if len(rest) != 1:
            self.emit(self.err(N.UNRESOLVED_MODULE, f"unresolved path `{'::'.join(segs)}`", p.span))
            return None
        sym = target.own.get(rest[0])
        if sym is None:
            if self._has_syntax_errors(target):
                return None  # the item is likely the one its syntax error dropped: no cascade
            d = self.err(N.UNRESOLVED_IMPORT, f"cannot find `{rest[0]}` in `{target.name}`", p.segments[-1].span,
                         f"not found in `{target.name}`")
            guess = _suggest(rest[0], target.own)
            self.emit(d.with_help(f"an item with a similar name exists: `{guess}`") if guess else d)
            return None
        return sym

    # ------------------------------------------------------------ unary, binary, cast
    def _unary(self, e: ast.Unary, op: str, x: ast.Expr, fx: _Fx, expected: Type | None) -> Type:
        if op == "-" and isinstance(x, ast.IntLit):
            self._negated.add(x)  # `-128i8` is in range although `128i8` is not
        ty = self.check_expr(x, fx, expected)
        if _is_poison(ty):
            return ERROR
        d = self.program.dims.get(x)
        num = _num(ty, fx.in_kernel)
        if num is None:
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot apply unary `{op}` to type `{ty}`", e.span,
                                      f"`{op}` does not apply to `{ty}`"))
        elem = num.elem
        if op == "-":
            if elem is DType.BOOL or (isinstance(elem, DType) and elem.is_int and not elem.is_signed):
                return self.emit(self.err(T.INVALID_OPERAND, f"cannot negate a value of type `{ty}`", e.span,
                                          "unsigned or boolean"))
            if d is not None and _is_intlike(ty):
                self.program.dims[e] = -d
            return _result_of(num, ty)
        # `!`: logical not on bool, bitwise not on integers
        if num.kind == "float" or _elem_is_float(elem):
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot apply `!` to type `{ty}`", e.span,
                                      "`!` needs `bool` or an integer"))
        return _result_of(num, ty)  # `!` on bool or integer tensors too (the host runtime has both)

    def _binary_types(self, op: str, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr, op_span: Span,
                      fx: _Fx) -> Type:
        if _is_poison(lt, rt):
            return ERROR
        a, b = _num(lt, fx.in_kernel), _num(rt, fx.in_kernel)
        if a is None or b is None:
            bad, bt = (lhs, lt) if a is None else (rhs, rt)
            d = self.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `{lt}` and `{rt}`", op_span,
                         f"`{op}` is not defined for these types").secondary(bad.span, f"this is `{bt}`")
            if isinstance(bt, (RefT, TensorT)) and fx.in_kernel:
                d = d.with_help("load a tile first, e.g. `x.load_like(z)`")
            elif isinstance(bt, PartitionT):
                d = d.note("a partition only describes tiles for a kernel call")
            return self.emit(d)
        if (a.kind == "tensor") != (b.kind == "tensor") and "tile" in (a.kind, b.kind):
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `{lt}` and `{rt}`", op_span,
                                      "tensors and tiles do not mix"))
        # logical operators
        if op in ("&&", "||"):
            for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
                if n.elem is not DType.BOOL:
                    return self.emit(self.err(T.INVALID_OPERAND, f"`{op}` needs `bool` operands", node.span,
                                              f"this is `{nt}`")
                                     .with_help("compare it first, e.g. `x != 0`"))
            if a.kind == "tensor":
                return self.emit(self.err(T.INVALID_OPERAND, f"`{op}` is not supported on host tensors",
                                          op_span))
            shape = self._broadcast_or_err(a, b, lt, rt, lhs, rhs, op_span)
            if shape is None:
                return ERROR
            return TileT(DType.BOOL, shape) if shape else BOOL  # type: ignore[arg-type]
        # element type
        if op in ("<<", ">>"):
            for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
                if not (n.kind == "int" or _elem_is_int(n.elem)):
                    return self._int_only(op, nt, node, op_span)
            elem: ElemT | str | None = a.elem if a.elem is not None else (b.elem if a.kind == "int" and
                                                                           b.kind != "int" else "int")
            if a.kind == "int" and b.kind != "int":
                self._settle(lhs, ScalarT(b.elem))  # type: ignore[arg-type]
        else:
            elem = self._join_elem(a, b, lt, rt, lhs, rhs, op, op_span)
            if elem is None:
                return ERROR
        if op in ("&", "|", "^"):  # `%` is fmod on floats, as in Rust
            for n, nt, node in ((a, lt, lhs), (b, rt, rhs)):
                if n.kind == "float" or _elem_is_float(n.elem):
                    return self._int_only(op, nt, node, op_span)
        if op == "%" and elem is DType.BOOL:
            return self._int_only(op, lt, lhs, op_span)
        if op in ("+", "-", "*", "/") and elem is DType.BOOL:
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot apply `{op}` to `bool` values", op_span,
                                      "arithmetic on `bool`")
                             .with_help("convert with `as i32` first"))
        if (a.kind == "tensor" or b.kind == "tensor") and op in ("<<", ">>"):
            return self.emit(self.err(T.INVALID_OPERAND, f"`{op}` is not supported on host tensors",
                                      op_span, "host tensors support arithmetic, comparisons and `& | ^`"))
        shape = self._broadcast_or_err(a, b, lt, rt, lhs, rhs, op_span)
        if shape is None and not (a.kind == "tensor" or b.kind == "tensor"):
            return ERROR
        # settle literal operands to the resolved element type
        if isinstance(elem, (DType, TypeParam)):
            for n, node in ((a, lhs), (b, rhs)):
                if n.kind in ("int", "float"):
                    self._settle(node, ScalarT(elem))
        if op in _COMPARE:
            if a.kind == "tensor" or b.kind == "tensor":
                return TensorT(DType.BOOL, shape)
            return TileT(DType.BOOL, shape) if shape else BOOL  # type: ignore[arg-type]
        if a.kind == "tensor" or b.kind == "tensor":
            return TensorT(elem if isinstance(elem, (DType, TypeParam)) else None, shape)
        if elem == "int":
            return UNTYPED_INT
        if elem == "float":
            return UNTYPED_FLOAT
        assert isinstance(elem, (DType, TypeParam))
        return TileT(elem, shape) if shape else ScalarT(elem)  # type: ignore[arg-type]

    def _int_only(self, op: str, ty: Type, node: ast.Expr, op_span: Span) -> Type:
        if op == "%":  # only `bool` gets here: `%` is also fmod on floats
            return self.emit(self.err(T.INVALID_OPERAND, "`%` needs numeric operands", op_span,
                                      "`%` is not defined on `bool`")
                             .secondary(node.span, f"this is `{ty}`")
                             .with_help(f"cast with `as`: `{self.cast_snippet(node)} as i32`"))
        return self.emit(self.err(T.INVALID_OPERAND, f"`{op}` needs integer operands", op_span,
                                  f"`{op}` is only defined for integers")
                         .secondary(node.span, f"this is `{ty}`")
                         .with_help(f"cast with `as`: `{self.cast_snippet(node)} as i32`"))

    def _join_elem(self, a: _Num, b: _Num, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr, op: str,
                   op_span: Span) -> ElemT | str | None:
        if a.kind in ("int", "float") and b.kind in ("int", "float"):
            return "float" if "float" in (a.kind, b.kind) else "int"
        if a.kind in ("int", "float") or b.kind in ("int", "float"):
            lit, other, lit_node = (a, b, lhs) if a.kind in ("int", "float") else (b, a, rhs)
            oe = other.elem
            if oe is None:  # a host tensor of unknown dtype (`load_npy`): checked at run time
                return "?"
            if lit.kind == "float" and not (_elem_is_float(oe) or isinstance(oe, TypeParam)):
                self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{oe}` and a float literal", op_span,
                                   f"no implicit conversion to `{oe}`")
                          .secondary(lit_node.span, "a float literal")
                          .with_help("write an integer, or cast the other side with `as f32`"))
                return None
            if lit.kind == "int" and oe is DType.BOOL:
                self.emit(self.err(T.MISMATCHED_DTYPES, "mismatched dtypes: `bool` and an integer literal",
                                   op_span, "no implicit conversion to `bool`"))
                return None
            return oe
        ea, eb = a.elem, b.elem
        if ea is None or eb is None:  # host tensor of unknown dtype: checked at run time
            return ea if ea is not None else eb if eb is not None else "?"
        if ea != eb:
            wider = _wider(ea, eb)
            self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{ea}` and `{eb}`", op_span,
                               f"no implicit conversion between `{ea}` and `{eb}`")
                      .secondary(lhs.span, f"this is `{lt}`")
                      .secondary(rhs.span, f"this is `{rt}`")
                      .with_help(f"cast with `as`: `{self.cast_snippet(rhs if wider == ea else lhs)} as {wider}`"))
            return None
        return ea

    def _broadcast_or_err(self, a: _Num, b: _Num, lt: Type, rt: Type, lhs: ast.Expr, rhs: ast.Expr,
                          op_span: Span) -> tuple[Dim | None, ...] | None:
        if a.shape is None or b.shape is None:
            return None
        out = broadcast_shapes(a.shape, b.shape)
        if out is None:
            self.emit(self.err(T.SHAPE_MISMATCH,
                               f"shapes {shape_str(a.shape)} and {shape_str(b.shape)} cannot be broadcast together",
                               op_span, "incompatible shapes")
                      .secondary(lhs.span, f"this has shape {shape_str(a.shape)}")
                      .secondary(rhs.span, f"this has shape {shape_str(b.shape)}")
                      .note("tiles broadcast only where a dimension is 1 (NumPy rules)")
                      .with_help(self._reshape_hint(a.shape, b.shape, lhs, rhs)))
        return out

    def _reshape_hint(self, sa: tuple[Dim | None, ...], sb: tuple[Dim | None, ...], lhs: ast.Expr,
                      rhs: ast.Expr) -> str:
        """`m.reshape([BM, 1])` when one shape is the other without one axis
        (the usual result of a reduction), else the general advice."""
        for long, short, node in ((sa, sb, rhs), (sb, sa, lhs)):
            if len(long) == len(short) + 1:
                for k in range(len(long)):
                    if long[:k] + long[k + 1:] == short:
                        dims = [*short[:k], Dim.const(1), *short[k:]]
                        return (f"insert the reduced axis: `{self.snippet(node)}.reshape("
                                f"{shape_str(tuple(dims))})`")
        return "use `.reshape([..])` to add a dimension of size 1, or `.broadcast([..])`"

    def _cast(self, e: ast.Cast, x: ast.Expr, te: ast.TypeExpr, fx: _Fx) -> Type:
        src = self.check_expr(x, fx, None)
        target = self._resolve_type(te, fx.generics, fx.module, fx.in_kernel)
        if _is_poison(src, target):
            return ERROR
        if not isinstance(target, ScalarT):
            return self.emit(self.err(T.INVALID_CAST, f"cannot cast to `{target}`", te.span,
                                      "`as` converts to an element type")
                             .with_help("write the element type: `t as f16` converts every element"))
        d = self.program.dims.get(x)
        match src:
            case UntypedInt() | UntypedFloat():
                if isinstance(src, UntypedInt) and d is not None and _elem_is_int(target.dtype):
                    self.program.dims[e] = d
                self._settle(x, target if not (isinstance(src, UntypedFloat) and _elem_is_int(target.dtype))
                             else F32)
                return target
            case ScalarT():
                if d is not None and _elem_is_int(target.dtype):
                    self.program.dims[e] = d
                return target
            case TileT(shape=s):
                return TileT(target.dtype, s)
            case TensorT(shape=s) if not fx.in_kernel:
                return TensorT(target.dtype, s)
            case RefT(inner=TensorT(shape=s)) if not fx.in_kernel:
                return TensorT(target.dtype, s)
            case _:
                d2 = self.err(T.INVALID_CAST, f"cannot cast `{src}` as `{target}`", e.span,
                              "invalid cast")
                if fx.in_kernel and isinstance(_deref(src), TensorT):
                    d2 = d2.with_help("load a tile first, then cast the tile")
                return self.emit(d2)

    # ------------------------------------------------------------ calls
    def _call(self, e: ast.Call, fx: _Fx, expected: Type | None) -> Type:
        callee = e.callee
        sym: Symbol | None
        if isinstance(callee, ast.Path):
            sym = self._resolve_path(callee, fx, want_fn=True)
            if sym is None:
                self._check_args_only(e, fx)
                return ERROR
        else:
            name = callee.ident.name
            sym = fx.lookup(name)
            if sym is None:
                sig = FUNCTIONS.get(name)
                if sig is not None:
                    bsym = self._builtin_syms.setdefault(name, Symbol(SymbolKind.BUILTIN, name, signature=sig,
                                                                      qualname=name))
                    self.program.symbols[e] = bsym
                    self.program.symbols[callee] = bsym
                    if fx.graph and name in _GRAPH_EFFECTS:
                        self._graph_effect(e.span, f"`{name}`")
                    return self._builtin_call(e, sig, fx, None, None, expected)
                d = self.err(N.UNKNOWN_FUNCTION, f"cannot find function `{name}` in this scope",
                             callee.ident.span, "not found in this scope")
                fns = [n for n, s in fx.module.scope.items() if s.kind in (SymbolKind.FN, SymbolKind.KERNEL)]
                guess = _suggest(name, [*fns, *FUNCTIONS])
                if guess:
                    d = d.with_help(f"a function with a similar name exists: `{guess}`")
                elif name in METHODS:
                    d = d.with_help(f"`{name}` is a method: `x.{name}(..)`")
                self._check_args_only(e, fx)
                return self.emit(d)
        self.program.symbols[e] = sym
        self.program.symbols[callee] = sym
        if sym.kind not in (SymbolKind.FN, SymbolKind.KERNEL):
            self._check_args_only(e, fx)
            return self.emit(self.err(N.NOT_CALLABLE, f"`{sym.name}` is not a function", callee.span,
                                      f"`{sym.name}` is a {sym.kind.value}")
                             .secondary(sym.span, f"`{sym.name}` is defined here")
                             if sym.span != DUMMY_SPAN else
                             self.err(N.NOT_CALLABLE, f"`{sym.name}` is not a function", callee.span))
        info = self.program.fn_info(sym)
        if info is None:
            self._check_args_only(e, fx)
            return ERROR
        return self._user_call(e, info, fx)

    def _check_args_only(self, e: ast.Call | ast.MethodCall, fx: _Fx) -> None:
        for a in e.args:
            self.check_expr(a.value, fx, None)

    def _split_args(self, e: ast.Call | ast.MethodCall, fx: _Fx, allowed_kw: tuple[str, ...], owner: str,
                    decl_span: Span | None) -> tuple[list[ast.Expr], list[Type], dict[str, tuple[ast.Arg, Type]]]:
        args: list[ast.Expr] = []
        tys: list[Type] = []
        kws: dict[str, tuple[ast.Arg, Type]] = {}
        for a in e.args:
            ty = self.check_expr(a.value, fx, None)
            if a.name is None:
                args.append(a.value)
                tys.append(ty)
                continue
            if a.name.name not in allowed_kw:
                d = self.err(N.UNKNOWN_KEYWORD, f"{owner} has no keyword argument `{a.name.name}`", a.name.span,
                             "unknown keyword argument")
                guess = _suggest(a.name.name, allowed_kw)
                if guess:
                    d = d.with_help(f"did you mean `{guess}`?")
                elif allowed_kw:
                    d = d.note("keyword arguments: " + ", ".join(f"`{k}`" for k in allowed_kw))
                else:
                    d = d.note(f"{owner} takes only positional arguments")
                if decl_span is not None:
                    d = d.secondary(decl_span, "defined here")
                self.emit(d)
                continue
            if a.name.name in kws:
                self.emit(self.err(N.DUPLICATE_DEFINITION, f"keyword argument `{a.name.name}` given twice",
                                   a.name.span, "given again here")
                          .secondary(kws[a.name.name][0].name.span, "first given here"))  # type: ignore[union-attr]
                continue
            kws[a.name.name] = (a, ty)
        return args, tys, kws

    def _arity_error(self, owner: str, takes: str, n: int, span: Span, decl: Span | None) -> Type:
        d = self.err(N.WRONG_ARG_COUNT, f"{owner} takes {takes} but {_plural(n, 'argument')} "
                     f"{'was' if n == 1 else 'were'} supplied", span,
                     f"expected {takes}")
        if decl is not None:
            d = d.secondary(decl, "defined here")
        return self.emit(d)

    # ---- builtins
    def _builtin_call(self, e: ast.Call | ast.MethodCall, sig: Signature, fx: _Fx, recv: ast.Expr | None,
                      recv_ty: Type | None, expected: Type | None) -> Type:
        owner = f"`{sig.name}`" if not sig.is_method else f"method `{sig.name}`"
        args, tys, kws = self._split_args(e, fx, sig.keywords, owner, None)
        span = e.method.span if isinstance(e, ast.MethodCall) else e.callee.span
        if not sig.context.allows(fx.in_kernel):
            if fx.in_kernel:
                where = "inside a kernel" if fx.info is None or fx.info.is_kernel else "in device code"
                return self.emit(self.err(T.HOST_ONLY, f"`{sig.name}` is only allowed in host code", span,
                                          where)
                                 .note(f"`{sig.signature}`: {sig.doc}")
                                 .with_help(f"call `{sig.name}` in `main` (or another host function) and pass "
                                            "the result to the kernel"))
            return self.emit(self.err(T.KERNEL_ONLY, f"`{sig.name}` is only allowed inside a kernel", span,
                                      "in host code")
                             .note(f"`{sig.signature}`: {sig.doc}")
                             .with_help("move this into a `kernel fn` and launch it"))
        n = len(args)
        if n < sig.min_args or (sig.max_args is not None and n > sig.max_args):
            if sig.max_args is None:
                takes = f"at least {_plural(sig.min_args, 'argument')}"
            elif sig.min_args == sig.max_args:
                takes = _plural(sig.max_args, "argument")
            else:
                takes = f"{sig.min_args} to {sig.max_args} arguments"
            return self._arity_error(owner, takes, n, e.span, None)
        if len(e.generics) > len(sig.generics):
            if sig.generics:
                msg = f"{owner} takes {_plural(len(sig.generics), 'generic argument')} but {len(e.generics)} were supplied"
            else:
                msg = f"{owner} takes no generic arguments"
            return self.emit(self.err(N.WRONG_GENERIC_COUNT, msg, e.generics[-1].span, "unexpected generic argument")
                             .note(f"`{sig.signature}`"))
        cx = _CallCx(e, sig, fx, recv, recv_ty, args, tys, e.generics, kws)
        if any(_is_poison(t) for t in cx.operand_tys):
            return ERROR
        rule: Callable[[_CallCx], Type] = getattr(self, "_rule_" + sig.rule)
        return rule(cx)

    def _method_call(self, e: ast.MethodCall, fx: _Fx, expected: Type | None) -> Type:
        rty = self.check_expr(e.receiver, fx, None)
        name = e.method.name
        if fx.graph and name in _GRAPH_EFFECT_METHODS and isinstance(rty, (HandleT, GraphT, TensorT, RefT)):
            self._graph_effect(e.span, f"`.{name}()`")
        if _is_poison(rty):
            self._check_args_only(e, fx)
            return ERROR
        kind = self._receiver_kind(rty, fx)
        sig = METHODS.get(name)
        # `x.shape()` in a kernel, `z.load()` on the host: a tensor method of the
        # other context, reported as a context error by `_builtin_call`
        other = {"param": "tensor", "tensor": "param"}.get(kind)
        if sig is not None and kind not in sig.receivers and other in sig.receivers \
                and not sig.context.allows(fx.in_kernel):
            kind = other
        if sig is None or kind not in sig.receivers:
            self._check_args_only(e, fx)
            cands = [m for m, s in METHODS.items() if kind in s.receivers and s.context.allows(fx.in_kernel)]
            d = self.err(N.UNKNOWN_METHOD, f"no method named `{name}` on type `{rty}`", e.method.span,
                         f"method not found in `{rty}`")
            guess = _suggest(name, cands)
            if guess:
                d = d.with_help(f"there is a method with a similar name: `{guess}`")
            elif sig is not None:
                d = d.note(f"`{name}` is a method of " + " or ".join(
                    _RECEIVER_WORDS.get(k, k) for k in sig.receivers))
            elif name in FUNCTIONS:
                d = d.with_help(f"`{name}` is a function: `{FUNCTIONS[name].signature}`")
            return self.emit(d)
        msym = self._method_syms.setdefault(name, Symbol(SymbolKind.METHOD, name, signature=sig, qualname="." + name))
        self.program.symbols[e] = msym
        return self._builtin_call(e, sig, fx, e.receiver, rty, expected)

    @staticmethod
    def _receiver_kind(ty: Type, fx: _Fx) -> str:
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

    # ---- user functions and kernels
    def _user_call(self, e: ast.Call, info: FnInfo, fx: _Fx) -> Type:
        owner = f"{'kernel' if info.is_kernel else 'function'} `{info.name}`"
        args, tys, _ = self._split_args(e, fx, (), owner, info.decl.name.span)
        if info.is_kernel and fx.in_kernel:
            return self.emit(self.err(T.HOST_ONLY, f"launching kernel `{info.name}` is only allowed in host code",
                                      e.callee.span, "inside a kernel")
                             .secondary(info.decl.name.span, "kernel defined here")
                             .with_help("call a plain `fn` to share code between kernels"))
        if len(args) != len(info.param_types):
            return self._arity_error(owner, _plural(len(info.param_types), "argument"), len(args), e.span,
                                     info.decl.name.span)
        # turbofish: const generics (and type params) in declaration order
        gparams = list(info.decl.generics)
        if len(e.generics) > len(gparams):
            return self.emit(self.err(N.WRONG_GENERIC_COUNT,
                                      f"{owner} takes {_plural(len(gparams), 'generic argument')} but "
                                      f"{len(e.generics)} were supplied", e.generics[-1].span,
                                      "unexpected generic argument")
                             .secondary(info.decl.name.span, "defined here"))
        if not info.is_kernel:
            self._call_sites.setdefault((info.qualname, fx.in_kernel), e.callee.span)
        if not fx.in_kernel:
            self._enqueue(info, False) if not info.is_kernel else None
        elif not info.is_kernel:
            self._enqueue(info, True)
            if fx.info is not None:
                self._device_edges.append((fx.info.qualname, info.qualname, e.callee.span))
        if info.is_kernel:
            return self._kernel_call(e, info, fx, args, tys)
        return self._fn_call(e, info, fx, args, tys)

    def _turbofish(self, e: ast.Call, info: FnInfo, fx: _Fx, env: dict[str, Any], srcs: dict[str, Any],
                   deferred: dict[str, ast.Expr]) -> None:
        for g, targ in zip(info.decl.generics, e.generics, strict=False):
            name = g.name.name
            if g.is_const:
                expr = _typearg_as_expr(targ)
                if expr is None:
                    self.emit(self.err(T.MISMATCHED_TYPES, f"expected a constant for `{name}`, found a type",
                                       targ.span, "not a constant"))
                    continue
                t = self.check_expr(expr, fx, None)
                if not _is_poison(t) and not _is_intlike(t):
                    self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", targ.span,
                                       f"expected an integer, found `{t}`"))
                    continue
                self._settle(expr, I32)
                d = self.program.dims.get(expr)
                if d is None:
                    deferred[name] = expr
                else:
                    env[name] = d
                srcs[name] = targ
            else:
                gt = self._resolve_type(targ, fx.generics, fx.module, fx.in_kernel) if _is_type_expr(targ) else None
                if not isinstance(gt, ScalarT):
                    if gt is None or not _is_poison(gt):
                        self.emit(self.err(T.MISMATCHED_TYPES, f"expected an element type for `{name}`", targ.span,
                                           "not a scalar type"))
                    continue
                env[name] = gt.dtype
                srcs[name] = targ

    def _bind_dim(self, name: str, value: Dim, src: Any, env: dict[str, Any], srcs: dict[str, Any],
                  info: FnInfo, e: ast.Call) -> bool:
        if name in env:
            prev = env[name]
            if isinstance(prev, Dim) and prev != value:
                self.emit(self.err(T.GENERIC_CONFLICT,
                                   f"conflicting values for const generic `{name}` of `{info.name}`: "
                                   f"{prev} and {value}", src.span, f"this gives `{name}` = {value}")
                          .secondary(srcs[name].span, f"this gives `{name}` = {prev}")
                          .with_help(f"use {prev} here, as the turbofish says" if any(srcs[name] is g for g in e.generics)
                                     else "make the tile shapes agree, or pass the generics explicitly with `::<..>`"))
                return False
            return True
        env[name] = value
        srcs[name] = src
        return True

    def _unify_dims(self, pshape: tuple[Dim | None, ...], ashape: tuple[Dim | None, ...], src: Any,
                    env: dict[str, Any], srcs: dict[str, Any], info: FnInfo, e: ast.Call,
                    pending: list[tuple[Dim, Dim | None, Any, Any, bool]], param: Any = None,
                    partition: bool = True, deferred: dict[str, Any] | None = None) -> bool:
        ok = True
        for ix, (pd, ad) in enumerate(zip(pshape, ashape, strict=False)):
            if pd is None:
                continue
            if ad is not None and any(s.startswith("?") for s in ad.symbols()):
                ad = None  # a host partition dim known only at run time
            sym = pd.as_symbol()
            dsrc = _partition_dim_expr(src, ix) if partition else src
            if sym is not None and sym in info.const_generics:
                if ad is not None:
                    ok = self._bind_dim(sym, ad, dsrc, env, srcs, info, e) and ok
                elif not partition and deferred is not None:
                    deferred.setdefault(sym, src)  # the tensor's run-time shape gives it
                continue
            pending.append((pd, ad, dsrc, param, partition))
        return ok

    def _kernel_call(self, e: ast.Call, info: FnInfo, fx: _Fx, args: list[ast.Expr], tys: list[Type]) -> Type:
        env: dict[str, Any] = {}
        srcs: dict[str, Any] = {}
        deferred: dict[str, ast.Expr] = {}
        self._turbofish(e, info, fx, env, srcs, deferred)
        # (param dim, arg dim, arg node, param, is a partition)
        pending: list[tuple[Dim, Dim | None, Any, Any, bool]] = []
        borrows: list[bool | None] = []
        bad = False
        whole = False
        for p, pty, a, aty in zip(info.decl.params, info.param_types, args, tys, strict=False):
            if _is_poison(pty, aty):
                borrows.append(None)
                bad = True  # already reported: no "cannot infer" for what it would have given
                continue
            match pty:
                case RefT(mutable=True, inner=TensorT(dtype=pd, shape=pshape)):
                    borrows.append(True)
                    if isinstance(aty, PartitionT):
                        if pd is not None and not self._unify_elem(pd, aty.tensor.dtype, env):
                            self._arg_mismatch(p, subst_type(pty, _subst_env(env)), a, aty, info)
                            bad = True
                            continue
                        assert pshape is not None
                        if len(aty.tile_shape) != len(pshape):
                            self.emit(self.err(T.PARTITION_SHAPE,
                                               f"partition into {len(aty.tile_shape)}-D tiles passed for a "
                                               f"{len(pshape)}-D parameter", a.span,
                                               f"tiles of shape {shape_str(aty.tile_shape)}")
                                      .secondary(p.ty.span, f"`{p.name.name}` has tile shape {shape_str(pshape)}"))
                            bad = True
                            continue
                        if a in self._partition_deferred:
                            for ix, ex in self._partition_deferred[a].values():
                                ps = pshape[ix]
                                sname = ps.as_symbol() if ps is not None else None
                                if sname in info.const_generics and sname not in env:
                                    deferred.setdefault(sname, ex)
                                    srcs.setdefault(sname, a)
                        self._unify_dims(pshape, aty.tile_shape, a, env, srcs, info, e, pending, p, True)
                    elif isinstance(aty, TensorT) or (isinstance(aty, RefT) and isinstance(aty.inner, TensorT)):
                        # a whole tensor for a `&mut` param: the ownership checker's rule
                        # (it names the missing `.partition`); no type error here, and
                        # no "cannot infer" either: the missing partition is the cause.
                        whole = True
                    else:
                        self._arg_mismatch(p, pty, a, aty, info)
                        bad = True
                case RefT(mutable=False, inner=TensorT(dtype=pd, shape=pshape)):
                    borrows.append(False)
                    inner = aty.inner if isinstance(aty, RefT) else None
                    if not isinstance(inner, TensorT):
                        self._arg_mismatch(p, pty, a, aty, info)
                        bad = True
                        continue
                    if pd is not None and not self._unify_elem(pd, inner.dtype, env):
                        self._arg_mismatch(p, subst_type(pty, _subst_env(env)), a, aty, info)
                        bad = True
                        continue
                    if pshape is not None and inner.shape is not None:
                        if len(pshape) != len(inner.shape):
                            self.emit(self.err(T.RANK_MISMATCH,
                                               f"a {len(inner.shape)}-D tensor passed for a {len(pshape)}-D "
                                               f"parameter", a.span, f"this is `{aty}`")
                                      .secondary(p.ty.span, f"`{p.name.name}` is `{pty}`"))
                            bad = True
                            continue
                        self._unify_dims(pshape, inner.shape, a, env, srcs, info, e, pending, p, False, deferred)
                    elif pshape is not None:  # rank unknown until run time (`load_npy`)
                        for pdim in pshape:
                            sname = pdim.as_symbol() if pdim is not None else None
                            if sname is not None and sname in info.const_generics:
                                deferred.setdefault(sname, a)
                case ScalarT():
                    borrows.append(None)
                    if not self._coerce(aty, pty, a):
                        self._arg_mismatch(p, pty, a, aty, info)
                        bad = True
                    else:
                        self._settle(a, pty)
                case _:
                    borrows.append(None)
        # compound dims: every symbol known now?
        for pdim, adim, src, param, is_part in pending:
            if adim is None or not pdim.symbols() <= {k for k, v in env.items() if isinstance(v, Dim)}:
                continue
            want = subst_dim(pdim, {k: v for k, v in env.items() if isinstance(v, Dim)})
            if want.is_const and adim.is_const and want != adim:
                ad = adim
                shown = str(want) if pdim.is_const else f"`{pdim}` = {want}"
                if is_part:
                    d = self.err(T.PARTITION_SHAPE, f"tile dimension {ad} does not match {shown} of parameter "
                                 f"`{param.name.name}`", src.span, f"tiles of size {ad}")
                else:
                    d = self.err(T.MISMATCHED_TYPES, f"tensor dimension {ad} does not match {shown} of parameter "
                                 f"`{param.name.name}`", src.span, f"a dimension of size {ad}")
                d = d.secondary(param.ty.span, f"`{param.name.name}` is `{self.snippet(param.ty)}`")
                for sname in sorted(pdim.symbols()):
                    if sname in srcs and srcs[sname] is not src:
                        d = d.secondary(srcs[sname].span, f"`{sname}` = {env[sname]} comes from here")
                self.emit(d.with_help(f"use {'tiles' if is_part else 'a tensor'} of size {want} here"))
                bad = True
        missing = [g for g in info.const_generics if g not in env and g not in deferred]
        if missing and not bad and not whole:
            g = missing[0]
            gdecl = next(x for x in info.decl.generics if x.name.name == g)
            self.emit(self.err(T.CANNOT_INFER, f"cannot infer the value of const generic `{g}` of `{info.name}`",
                               e.callee.span, "cannot infer")
                      .secondary(gdecl.span, f"`{g}` declared here")
                      .note("const generics are inferred from the tile shapes of partitions and from the "
                            "static shapes of tensors")
                      .with_help(f"give it explicitly: `{info.name}::<{', '.join(info.const_generics)}>(..)`"
                                 " with values"))
            bad = True
        inst: dict[str, Any] = {}
        for k, v in env.items():
            if isinstance(v, Dim) and v.is_const:
                inst[k] = v.const_value
            elif k in info.type_params and isinstance(v, DType):
                inst[k] = v  # `T` of `kernel fn k<T, ..>`, from the arguments or the turbofish
        self.program.instantiations[e] = inst
        if deferred:
            self.program.deferred[e] = deferred
        self.program.shape_sources[e] = dict(srcs)
        if not bad:
            self._check_instantiation(e, info, inst, srcs)
        return OpT(info.qualname, tuple(borrows))

    def _check_instantiation(self, e: ast.Call, info: FnInfo, inst: dict[str, int], srcs: dict[str, Any]) -> None:
        """Backend limits for one kernel instantiation: the tile shapes of the
        `&mut` params and every symbolic tile shape the body creates."""
        for p, pty in zip(info.decl.params, info.param_types, strict=False):
            if isinstance(pty, RefT) and pty.mutable and isinstance(pty.inner, TensorT) and pty.inner.shape:
                shape = pty.inner.shape
                if not all(d is not None and d.symbols() <= inst.keys() for d in shape):
                    continue
                vals = tuple(Dim.const(eval_dim(d, inst)) for d in shape)
                if any(not d.is_const for d in shape if d is not None):
                    src = self._culprit(shape, vals, srcs, e)  # type: ignore[arg-type]
                    if not self._check_tile_limits(vals, src.span, None,
                                                   (p.ty.span, f"the tile shape of `{p.name.name}`")):
                        return
        for before, after, span in self.kernel_reshapes.get(info.qualname, []):
            if not all(d.symbols() <= inst.keys() for d in (*before, *after)):
                continue
            a, b = eval_dim(_numel(before), inst), eval_dim(_numel(after), inst)
            if a != b:
                vb = shape_str(tuple(Dim.const(eval_dim(d, inst)) for d in before))
                va = shape_str(tuple(Dim.const(eval_dim(d, inst)) for d in after))
                self.emit(self.err(T.RESHAPE_COUNT, f"cannot reshape {vb} ({a} elements) into {va} ({b} elements) "
                                   f"in this launch of `{info.name}`", e.span, "with these const generics")
                          .secondary(span, f"reshape of {shape_str(before)} into {shape_str(after)}"))
                return
        for shape, span in self.kernel_tiles.get(info.qualname, []):
            if not all(d.symbols() <= inst.keys() for d in shape):
                continue
            vals = tuple(Dim.const(eval_dim(d, inst)) for d in shape)
            src = self._culprit(shape, vals, srcs, e)
            if not self._check_tile_limits(vals, src.span, None, (span, f"tile shape {shape_str(shape)} "
                                           f"is {shape_str(vals)} for this launch")):
                return

    @staticmethod
    def _culprit(shape: Shape, vals: Shape, srcs: dict[str, Any], default: Any) -> Any:
        """The partition or turbofish argument that gave a bad tile dimension."""
        order = sorted(range(len(shape)), key=lambda i: _is_pow2(vals[i].const_value or 0))
        for i in order:
            for sname in sorted(shape[i].symbols()):
                if sname in srcs:
                    return srcs[sname]
        return default

    def _arg_mismatch(self, p: ast.Param, pty: Type, a: ast.Expr, aty: Type, info: FnInfo) -> None:
        d = (self.err(T.MISMATCHED_TYPES, "mismatched types", a.span, f"expected `{pty}`, found `{aty}`")
             .secondary(p.span, f"parameter `{p.name.name}` of `{info.name}`"))
        if isinstance(pty, RefT) and isinstance(aty, TensorT):
            d = d.with_help(f"borrow it: `&{self.snippet(a)}`" if not pty.mutable else
                            f"partition it: `{self.snippet(a)}.partition([..])`")
        elif isinstance(pty, RefT) and pty.mutable and isinstance(aty, RefT):
            d = d.with_help(f"partition it: `{self.snippet(a.expr if isinstance(a, ast.Ref) else a)}"
                            ".partition([..])`")
        else:
            fe, we = _elem_of_value(aty), _elem_of_value(pty)
            if isinstance(fe, DType) and isinstance(we, DType) and fe != we:
                d = d.with_help(f"cast with `as`: `{self.cast_snippet(a)} as {we.value}`")
            elif isinstance(pty, TileT) and isinstance(aty, TileT) and len(pty.shape) == len(aty.shape) + 1:
                # a 1-D tile for a row-wise 2-D function (`std::nn::softmax`)
                d = d.with_help(f"add a leading axis: `{self.snippet(a)}.reshape("
                                f"{shape_str((Dim.const(1), *aty.shape))})`")
        self.emit(d)

    def _fn_call(self, e: ast.Call, info: FnInfo, fx: _Fx, args: list[ast.Expr], tys: list[Type]) -> Type:
        env: dict[str, Any] = {}
        srcs: dict[str, Any] = {}
        deferred: dict[str, ast.Expr] = {}
        self._turbofish(e, info, fx, env, srcs, deferred)
        ok = True
        for p, pty, a, aty in zip(info.decl.params, info.param_types, args, tys, strict=False):
            if _is_poison(pty, aty):
                continue
            if not self._unify(pty, aty, env, srcs, a, info):
                want = subst_type(pty, _subst_env(env))
                self._arg_mismatch(p, want, a, aty, info)
                ok = False
            else:
                self._settle(a, subst_type(pty, _subst_env(env)))
        missing = [g for g in (*info.const_generics, *info.type_params) if g not in env and g not in deferred]
        if missing and ok and fx.in_kernel:
            g = missing[0]
            gdecl = next(x for x in info.decl.generics if x.name.name == g)
            self.emit(self.err(T.CANNOT_INFER, f"cannot infer the generic parameter `{g}` of `{info.name}`",
                               e.callee.span, "cannot infer")
                      .secondary(gdecl.span, f"`{g}` declared here")
                      .with_help(f"give it explicitly: `{info.name}::<..>(..)`"))
            ok = False
        self.program.instantiations[e] = dict(env)
        if deferred:
            self.program.deferred[e] = deferred
        ret = subst_type(info.ret, _subst_env(env))
        if not ok:
            return ERROR
        if not fx.in_kernel:
            ret = _unknown_dims_to_none(ret, set(info.const_generics))
        return ret

    def _unify(self, p: Type, a: Type, env: dict[str, Any], srcs: dict[str, Any], node: Any, info: FnInfo) -> bool:
        """Match argument type `a` against parameter type `p`, binding generics."""
        if _is_poison(p, a):
            return True
        match p, a:
            case ScalarT(dtype=pd), _ if _is_numeric_scalar(a):
                if isinstance(pd, TypeParam):
                    if isinstance(a, ScalarT):
                        return self._bind_elem(pd.name, a.dtype, env)
                    return True  # a literal: any element type
                return self._coerce(a, p, node)
            case TileT(dtype=pd, shape=ps), TileT(dtype=ad, shape=as_):
                if not self._unify_elem(pd, ad, env):
                    return False
                if len(ps) != len(as_):
                    return False
                return self._unify_shape(ps, as_, env, srcs, node, info)
            case TensorT(), TensorT():
                return self._unify_tensor(p, a, env, srcs, node, info)
            case RefT(mutable=pm, inner=pi), RefT(mutable=am, inner=ai):
                if pm and not am:
                    return False
                return self._unify(pi, ai, env, srcs, node, info)
            case TupleT(elems=pe), TupleT(elems=ae):
                return len(pe) == len(ae) and all(self._unify(x, y, env, srcs, node, info) for x, y in zip(pe, ae, strict=False))
            case _:
                return self._coerce(a, p, node)

    def _bind_elem(self, name: str, d: Any, env: dict[str, Any]) -> bool:
        if name in env:
            return bool(env[name] == d)
        env[name] = d
        return True

    def _unify_elem(self, pd: Any, ad: Any, env: dict[str, Any]) -> bool:
        if isinstance(pd, TypeParam):
            return ad is None or self._bind_elem(pd.name, ad, env)
        return pd is None or ad is None or pd == ad

    def _unify_shape(self, ps: tuple[Dim | None, ...], as_: tuple[Dim | None, ...], env: dict[str, Any],
                     srcs: dict[str, Any], node: Any, info: FnInfo) -> bool:
        later: list[tuple[Dim, Dim]] = []
        for pd, ad in zip(ps, as_, strict=False):
            if pd is None:
                continue
            sym = pd.as_symbol()
            if sym is not None and sym in info.const_generics:
                if ad is None:
                    continue
                if sym in env:
                    if env[sym] != ad:
                        return False
                else:
                    env[sym] = ad
                    srcs[sym] = node
                continue
            if ad is not None:
                later.append((pd, ad))
        known = {k: v for k, v in env.items() if isinstance(v, (Dim, int))}
        for pd, ad in later:
            if pd.symbols() <= env.keys() and subst_dim(pd, known) != ad:
                return False
        return True

    def _unify_tensor(self, p: TensorT, a: TensorT, env: dict[str, Any], srcs: dict[str, Any], node: Any,
                      info: FnInfo) -> bool:
        if not self._unify_elem(p.dtype, a.dtype, env):
            return False
        if p.shape is None or a.shape is None:
            return True
        if len(p.shape) != len(a.shape):
            return False
        return self._unify_shape(p.shape, a.shape, env, srcs, node, info)

    # ------------------------------------------------------------ typing rules of builtins
    # Each `_rule_<name>` types one kind of builtin (`Signature.rule`); the
    # arity, keywords and context were checked by `_builtin_call`.

    def _const_int(self, cx: _CallCx, e: ast.Expr, what: str) -> int | None:
        d = self.program.dims.get(e)
        v = d.const_value if d is not None else None
        if v is None:
            self.emit(self.err(T.AXIS_OUT_OF_RANGE if what == "axis" else T.NOT_CONSTANT,
                               f"the {what} of `{cx.name}` must be a constant", e.span, "not a constant")
                      .with_help(f"write the {what} as a literal, e.g. `{cx.name}(.., 0)`"))
        return v

    def _axis(self, cx: _CallCx, e: ast.Expr, rank: int) -> int | None:
        ty = self.program.types.get(e)
        if ty is not None and not _is_intlike(ty):
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span, f"expected an axis (`i32`), found `{ty}`"))
            return None
        self._settle(e, I32)
        v = self._const_int(cx, e, "axis")
        if v is None:
            return None
        if not 0 <= v < rank:
            noun = "a tensor" if isinstance(_deref(cx.operand_tys[0]), TensorT) else "a tile"
            self.emit(self.err(T.AXIS_OUT_OF_RANGE, f"axis {v} is out of range for {noun} of rank {rank}", e.span,
                               f"valid axes are 0..{rank}" if rank else "a scalar has no axes")
                      .note("axes count from 0"))
            return None
        return v

    def _shape_arg(self, cx: _CallCx, e: ast.Expr, need_const: bool) -> tuple[Dim | None, ...] | None:
        ty = self.program.types.get(e)
        if not isinstance(ty, ShapeT):
            if ty is not None and not _is_poison(ty):
                self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                   f"expected a shape `[d0, d1, ..]`, found `{ty}`"))
            return None
        dims = self._shape_values.get(e)
        if dims is None:
            return None if need_const else (tuple([None] * ty.rank) if ty.rank is not None else None)
        if need_const:
            elems = e.elems if isinstance(e, ast.ArrayExpr) else [e] * len(dims)
            for d, x in zip(dims, elems, strict=False):
                if d is None and _is_poison(self.program.types.get(x)):
                    return None  # already reported
                if d is None:
                    self.emit(self.err(T.NOT_CONSTANT, "tile dimension is not a compile-time constant", x.span,
                                       "not constant")
                              .note("every tile dimension is a compile-time constant: a literal, a `const`, "
                                    "a const generic, or arithmetic on them")
                              .with_help("make it a const generic of the kernel"))
                    return None
        return dims

    def _elem_generic(self, cx: _CallCx, default: ElemT | None) -> ElemT | None:
        if not cx.generics:
            if default is None:
                self.emit(self.err(T.CANNOT_INFER, f"cannot infer the element type of `{cx.name}`", cx.span,
                                   "element type needed")
                          .with_help(f"give it with a turbofish: `{cx.name}::<f32>(..)`"))
            return default
        t = cx.generics[0]
        ty = self._resolve_type(t, cx.fx.generics, cx.fx.module, cx.fx.in_kernel) if _is_type_expr(t) else None
        if isinstance(ty, ScalarT):
            return ty.dtype
        if ty is None or not _is_poison(ty):
            self.emit(self.err(T.MISMATCHED_TYPES, f"expected an element type for `{cx.name}`", t.span,
                               "not a scalar type"))
        return None

    def _make_array(self, cx: _CallCx, elem: ElemT, shape: tuple[Dim | None, ...], span: Span) -> Type:
        if cx.fx.in_kernel:
            tshape = tuple(d for d in shape if d is not None)
            self._check_tile_limits(tshape, span, cx.fx.kernel_name)
            return TileT(elem, tshape)
        return TensorT(elem, shape)

    def _rule_grid_index(self, cx: _CallCx) -> Type:
        e = cx.args[0]
        if not _is_intlike(cx.arg_tys[0]):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                      f"expected an axis (`i32`), found `{cx.arg_tys[0]}`"))
        self._settle(e, I32)
        v = self._const_int(cx, e, "axis")
        if v is not None and not 0 <= v < 3:
            self.emit(self.err(T.AXIS_OUT_OF_RANGE, f"grid axis {v} is out of range", e.span, "the grid has axes 0, 1, 2"))
        return I32

    def _rule_fill(self, cx: _CallCx) -> Type:
        default: ElemT | None = DType.F32
        if cx.name == "full":  # `full([n], v)`: the value's type, when it has one
            vty = cx.arg_tys[1]
            default = vty.dtype if isinstance(vty, ScalarT) else DType.F32 if isinstance(vty, UntypedFloat) \
                else DType.I32 if isinstance(vty, UntypedInt) else None
        elem = self._elem_generic(cx, default)
        shape = self._shape_arg(cx, cx.args[0], need_const=cx.fx.in_kernel)
        if elem is None:
            return ERROR
        if cx.name == "full":
            vty, v = cx.arg_tys[1], cx.args[1]
            want = ScalarT(elem)
            if not self._coerce(vty, want, v):
                self._mismatch(want, vty, v, cx.generics[0] if cx.generics else None)
            else:
                self._settle(v, want)
        if shape is None:
            if cx.fx.in_kernel:
                return ERROR
            rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
            return TensorT(elem, None if rank is None else (None,) * rank)
        return self._make_array(cx, elem, shape, cx.args[0].span)

    def _rule_arange(self, cx: _CallCx) -> Type:
        elem = self._elem_generic(cx, DType.I32)
        e = cx.args[0]
        if not _is_intlike(cx.arg_tys[0]):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                      f"expected an integer length, found `{cx.arg_tys[0]}`"))
        self._settle(e, I32)
        d = self.program.dims.get(e)
        if elem is None:
            return ERROR
        if cx.fx.in_kernel and d is None:
            self.emit(self.err(T.NOT_CONSTANT, "the length of `arange` must be a compile-time constant in a kernel",
                               e.span, "not constant"))
            return ERROR
        return self._make_array(cx, elem, (d,), e.span)

    def _rule_random(self, cx: _CallCx) -> Type:
        elem = self._elem_generic(cx, DType.F32)
        shape = self._shape_arg(cx, cx.args[0], need_const=False)
        seed, sty = cx.args[1], cx.arg_tys[1]
        if not _is_intlike(sty):
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", seed.span, f"expected an integer seed, found `{sty}`"))
        self._settle(seed, ScalarT(DType.I64))
        if elem is None:
            return ERROR
        if not _elem_is_float(elem):
            return self.emit(self.err(T.MISMATCHED_TYPES, f"`{cx.name}` makes floating-point tensors",
                                      cx.generics[0].span if cx.generics else cx.span, f"`{elem}` is not a float type")
                             .with_help(f"use `{cx.name}::<f32>(..)` and cast with `as`"))
        if shape is None:
            rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
            return TensorT(elem, None if rank is None else (None,) * rank)
        return TensorT(elem, shape)

    def _rule_load_npy(self, cx: _CallCx) -> Type:
        if not isinstance(cx.arg_tys[0], StrT):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[0].span,
                                      f"expected a path string, found `{cx.arg_tys[0]}`"))
        elem = self._elem_generic(cx, None) if cx.generics else None
        return TensorT(elem, None)

    def _rule_unary_math(self, cx: _CallCx) -> Type:
        x, ty = cx.operands[0], cx.operand_tys[0]
        num = _num(ty, cx.fx.in_kernel)
        if num is None:
            d = self.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile, a scalar or a host tensor", x.span,
                         f"found `{ty}`")
            return self.emit(d.with_help("load a tile first") if cx.fx.in_kernel else d)
        if num.kind == "tensor":
            if num.elem is not None and not _elem_is_float(num.elem) and cx.name != "abs":
                return self._not_float(cx, x, ty)
            return _deref(ty)
        if cx.name in ("abs",):
            if num.elem is DType.BOOL:
                return self._not_float(cx, x, ty)
            return ty if not isinstance(ty, UntypedInt) else UNTYPED_INT
        if num.kind == "int":
            self._settle(x, F32)
            return F32
        if num.kind == "float":
            return UNTYPED_FLOAT
        if not (_elem_is_float(num.elem) or isinstance(num.elem, TypeParam)):
            return self._not_float(cx, x, ty)
        return ty

    def _not_float(self, cx: _CallCx, x: ast.Expr, ty: Type) -> Type:
        return self.emit(self.err(T.INVALID_OPERAND, f"`{cx.name}` needs floating-point elements", x.span,
                                  f"this is `{ty}`")
                         .with_help(f"cast first: `{cx.name}({self.snippet(x)} as f32)`"))

    def _elementwise(self, cx: _CallCx, exprs: list[ast.Expr], tys: list[Type], float_only: bool) -> Type:
        nums = [_num(t, cx.fx.in_kernel) for t in tys]
        for n, t, x in zip(nums, tys, exprs, strict=False):
            if n is None or (n.kind == "tensor" and float_only):
                return self.emit(self.err(T.INVALID_OPERAND, f"`{cx.name}` expects tiles or scalars", x.span,
                                          f"found `{t}`"))
        acc_t, acc_e = tys[0], exprs[0]
        for t, x in zip(tys[1:], exprs[1:], strict=False):
            r = self._binary_types("+" if not float_only else "*", acc_t, t, acc_e, x, cx.span, cx.fx)
            if _is_poison(r):
                return ERROR
            acc_t = r
        for x in exprs:
            self._settle(x, acc_t)
        return acc_t

    def _rule_elementwise2(self, cx: _CallCx) -> Type:
        return self._elementwise(cx, cx.args, cx.arg_tys, False)

    def _rule_elementwise3(self, cx: _CallCx) -> Type:
        ty = self._elementwise(cx, cx.args, cx.arg_tys, True)
        el = _elem_of_value(ty)
        if isinstance(el, DType) and not el.is_float:
            return self._not_float(cx, cx.args[0], ty)
        return ty

    def _rule_where(self, cx: _CallCx) -> Type:
        c, cty = cx.args[0], cx.arg_tys[0]
        cn = _num(cty, cx.fx.in_kernel)
        if cn is None or (cn.elem is not DType.BOOL and not (cn.kind == "tensor" and cn.elem is None)):
            return self.emit(self.err(T.MISMATCHED_TYPES, "the condition of `where` must be `bool`", c.span,
                                      f"found `{cty}`")
                             .with_help("compare to get a bool tile, e.g. `x > 0.0`"))
        vt = self._elementwise(cx, cx.args[1:], cx.arg_tys[1:], False)
        if _is_poison(vt):
            return ERROR
        vn = _num(vt, cx.fx.in_kernel)
        assert vn is not None
        if cn.kind == "tensor" or vn.kind == "tensor":  # host `where` on tensors
            if cn.shape is None or vn.shape is None:
                return TensorT(_elem_of_value(vt), None)
            tshape = broadcast_shapes(cn.shape, vn.shape)
            if tshape is None:
                return self.emit(self.err(T.SHAPE_MISMATCH, f"shapes {shape_str(cn.shape)} and "
                                          f"{shape_str(vn.shape)} cannot be broadcast together", cx.span,
                                          "incompatible shapes"))
            return TensorT(_elem_of_value(vt), tshape)
        assert cn.shape is not None and vn.shape is not None
        shape = broadcast_shapes(cn.shape, vn.shape)
        if shape is None:
            return self.emit(self.err(T.SHAPE_MISMATCH,
                                      f"shapes {shape_str(cn.shape)} and {shape_str(vn.shape)} cannot be broadcast "
                                      "together", cx.span, "incompatible shapes")
                             .secondary(c.span, f"the condition has shape {shape_str(cn.shape)}")
                             .note("tiles broadcast only where a dimension is 1 (NumPy rules)"))
        if not shape:
            return vt
        el = _elem_of_value(vt)
        if el is None:  # untyped literals in both branches
            el = DType.F32 if isinstance(vt, UntypedFloat) else DType.I32
            for x in cx.args[1:]:
                self._settle(x, ScalarT(el))
        return TileT(el, shape)  # type: ignore[arg-type]

    def _rule_reduce(self, cx: _CallCx) -> Type:
        x, ty = cx.operands[0], cx.operand_tys[0]
        axis_e = cx.operands[1] if len(cx.operands) > 1 else None
        arg = cx.name in ("argmax", "argmin")
        match ty:
            case TileT(dtype=d, shape=s):
                if d is DType.BOOL and cx.name in ("sum", "prod"):
                    return self.emit(self.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a `bool` tile", x.span,
                                              f"this is `{ty}`").with_help("cast it with `as i32` first"))
                out_e: ElemT = DType.I32 if arg else d
                if axis_e is None:
                    if arg and len(s) > 1:
                        return self.emit(self.err(T.AXIS_OUT_OF_RANGE, f"`{cx.name}` of a {len(s)}-D tile needs "
                                                  "an axis", cx.span, "missing axis"))
                    return ScalarT(out_e)
                ax = self._axis(cx, axis_e, len(s))
                if ax is None:
                    return ERROR
                rest = s[:ax] + s[ax + 1:]
                return TileT(out_e, rest) if rest else ScalarT(out_e)
            case ScalarT() | UntypedInt() | UntypedFloat():
                diag = self.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a scalar", x.span, f"this is `{ty}`")
                if cx.name in ("max", "min"):
                    diag = diag.note(f"`{cx.name}` reduces a tile or tensor along an axis").with_help(
                        f"for the {cx.name}imum of two values use `{cx.name}imum(a, b)`")
                return self.emit(diag)
            case _:
                tn = _num(ty, cx.fx.in_kernel)
                if tn is None or tn.kind != "tensor":
                    return self.emit(self.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile or a tensor", x.span,
                                              f"found `{ty}`"))
                oe = DType.I32 if arg else tn.elem
                if axis_e is None:
                    return ScalarT(oe) if oe is not None else F32
                if tn.shape is None:
                    return TensorT(oe, None)
                ax = self._axis(cx, axis_e, len(tn.shape))
                if ax is None:
                    return ERROR
                return TensorT(oe, tn.shape[:ax] + tn.shape[ax + 1:])

    def _rule_scan(self, cx: _CallCx) -> Type:
        x, ty = cx.operands[0], cx.operand_tys[0]
        if not isinstance(ty, TileT):
            return self.emit(self.err(T.INVALID_OPERAND, f"`{cx.name}` expects a tile", x.span, f"found `{ty}`"))
        if ty.dtype is DType.BOOL:
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot `{cx.name}` a `bool` tile", x.span,
                                      f"this is `{ty}`").with_help("cast it with `as i32` first"))
        if len(cx.operands) < 2:
            if len(ty.shape) == 1:
                return ty
            return self._arity_error(f"`{cx.name}` of a {len(ty.shape)}-D tile", "an axis", 0, cx.span, None)
        return ty if self._axis(cx, cx.operands[1], len(ty.shape)) is not None else ERROR

    def _rule_mma(self, cx: _CallCx) -> Type:
        names = ("a", "b", "acc")[: len(cx.args)]
        tiles: list[TileT] = []
        for n, x, t in zip(names, cx.args, cx.arg_tys, strict=False):
            if not isinstance(t, TileT) or len(t.shape) != 2:
                return self.emit(self.err(T.MMA_MISMATCH, f"`{cx.name}` operand `{n}` must be a 2-D tile", x.span,
                                          f"found `{t}`"))
            tiles.append(t)
        a, b = tiles[0], tiles[1]
        if a.shape[1] != b.shape[0]:
            return self.emit(self.err(T.MMA_MISMATCH,
                                      f"`{cx.name}` inner dimensions differ: {shape_str(a.shape)} x {shape_str(b.shape)}",
                                      cx.span, f"{a.shape[1]} != {b.shape[0]}")
                             .secondary(cx.args[0].span, f"`a` is {shape_str(a.shape)} ([M, K])")
                             .secondary(cx.args[1].span, f"`b` is {shape_str(b.shape)} ([K, N])"))
        if a.dtype != b.dtype:
            return self.emit(self.err(T.MMA_MISMATCH, f"`{cx.name}` operands have different dtypes: `{a.dtype}` and "
                                      f"`{b.dtype}`", cx.span, "inputs must share a dtype")
                             .with_help(f"cast one: `{self.snippet(cx.args[1])} as {a.dtype}`"))
        valid_in = (DType.F16, DType.BF16, DType.F32)
        if a.dtype not in valid_in and not isinstance(a.dtype, TypeParam):
            return self.emit(self.err(T.MMA_MISMATCH, f"`{cx.name}` does not support `{a.dtype}` inputs", cx.args[0].span,
                                      f"this is `{a}`").note("inputs are f16, bf16 or f32"))
        out_shape = (a.shape[0], b.shape[1])
        if len(tiles) == 2:  # dot
            return TileT(DType.F32 if a.dtype in valid_in else a.dtype, out_shape)
        acc = tiles[2]
        if acc.shape != out_shape:
            return self.emit(self.err(T.MMA_MISMATCH,
                                      f"`mma` accumulator has shape {shape_str(acc.shape)}, expected "
                                      f"{shape_str(out_shape)}", cx.args[2].span, f"expected {shape_str(out_shape)} ([M, N])")
                             .secondary(cx.args[0].span, f"`a` is {shape_str(a.shape)}")
                             .secondary(cx.args[1].span, f"`b` is {shape_str(b.shape)}"))
        if isinstance(a.dtype, DType) and isinstance(acc.dtype, DType) and acc.dtype is not DType.F32:
            return self.emit(self.err(T.MMA_MISMATCH, f"`mma` accumulates in `f32`, not `{acc.dtype}`", cx.args[2].span,
                                      f"this is `{acc}`")
                             .note("supported: f16 or bf16 inputs with an f32 accumulator, or f32 inputs with f32")
                             .with_help("make the accumulator f32: `zeros::<f32>(..)`"))
        return acc

    def _rule_dot(self, cx: _CallCx) -> Type:
        return self._rule_mma(cx)

    def _rule_print(self, cx: _CallCx) -> Type:
        for x, t in zip(cx.args, cx.arg_tys, strict=False):
            if cx.fx.in_kernel and not isinstance(t, (ScalarT, UntypedInt, UntypedFloat, TileT, StrT)):
                self.emit(self.err(T.HOST_ONLY, f"printing a `{t}` is only allowed in host code", x.span,
                                   "inside a kernel")
                          .note("inside a kernel, `print` takes strings, scalars and tiles")
                          .with_help("load a tile and print that"))
            elif isinstance(t, (PartitionT, OpT, HandleT, GraphT, FnT)):
                self.emit(self.err(T.INVALID_OPERAND, f"cannot print a value of type `{t}`", x.span,
                                   "not printable"))
        return UNIT

    def _rule_assert(self, cx: _CallCx) -> Type:
        c, t = cx.args[0], cx.arg_tys[0]
        ok = t == BOOL or (isinstance(t, TileT) and t.dtype is DType.BOOL and cx.fx.in_kernel)
        if not ok:
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", c.span, f"expected `bool`, found `{t}`")
                      .with_help("assert a comparison, e.g. `assert(x > 0)`"))
        if len(cx.args) > 1 and not isinstance(cx.arg_tys[1], StrT):
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[1].span,
                               f"expected a message string, found `{cx.arg_tys[1]}`"))
        return UNIT

    def _rule_assert_close(self, cx: _CallCx) -> Type:
        elems: list[Any] = []
        for x, t in zip(cx.args, cx.arg_tys, strict=False):
            n = _num(t, False)
            if n is None or n.kind != "tensor":
                self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", x.span, f"expected a tensor, found `{t}`")
                          .with_help("compare tensors: `assert_close(&a, &b)`"))
                return UNIT
            elems.append(n.elem)
        if elems[0] is not None and elems[1] is not None and elems[0] != elems[1]:
            self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{elems[0]}` and `{elems[1]}`", cx.span,
                               "compared tensors must have the same dtype")
                      .with_help(f"cast with `as`: `&({self.cast_snippet(_unref(cx.args[1]))} as {elems[0]})`"))
        for k, (arg, t) in cx.keywords.items():
            if not (isinstance(t, (UntypedFloat, UntypedInt)) or (isinstance(t, ScalarT) and _elem_is_float(t.dtype))):
                self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", arg.value.span,
                                   f"expected a float tolerance for `{k}`, found `{t}`"))
            else:
                self._settle(arg.value, ScalarT(DType.F64))
        return UNIT

    def _param_tensor(self, cx: _CallCx, e: ast.Expr, t: Type, what: str) -> TensorT | None:
        inner = _deref(t)
        if isinstance(inner, TensorT):
            return inner
        self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span, f"expected {what}, found `{t}`"))
        return None

    def _check_index(self, cx: _CallCx, e: ast.Expr, rank: int | None, what: str) -> bool:
        t = self.program.types.get(e)
        if not isinstance(t, ShapeT):
            if t is not None and not _is_poison(t):
                self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", e.span,
                                   f"expected an index `[i, ..]`, found `{t}`"))
            return False
        if rank is not None and t.rank is not None and t.rank != rank:
            self.emit(self.err(T.RANK_MISMATCH, f"{what} has {_plural(rank, 'dimension')} but the index has "
                               f"{t.rank}", e.span, f"expected {_plural(rank, 'index')}"))
            return False
        return True

    def _indexed_tensor(self, cx: _CallCx) -> tuple[TensorT, int | None] | None:
        """The `&x` tensor parameter and its rank for `op(&x, [i, ..], value)`
        (the raw-access builtins), after checking the index; None on an error."""
        t = self._param_tensor(cx, cx.args[0], cx.arg_tys[0], "a tensor parameter `&x`")
        if t is None:
            return None
        rank = len(t.shape) if t.shape is not None else None
        if not self._check_index(cx, cx.args[1], rank, f"`{self.snippet(cx.args[0])}`"):
            return None
        return t, rank

    def _rule_atomic(self, cx: _CallCx) -> Type:
        target = self._indexed_tensor(cx)
        if target is None:
            return ERROR
        t, rank = target
        v, vt = cx.args[2], cx.arg_tys[2]
        el = _elem_of_value(vt)
        if el is None and isinstance(vt, (UntypedInt, UntypedFloat)):
            self._settle(v, ScalarT(t.dtype) if t.dtype is not None else F32)
            if isinstance(vt, UntypedFloat) and not _elem_is_float(t.dtype):
                return self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and a float literal",
                                          v.span, f"`{self.snippet(cx.args[0])}` holds `{t.dtype}`"))
        elif not isinstance(vt, (ScalarT, TileT)):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", v.span,
                                      f"expected a scalar or a tile, found `{vt}`"))
        elif t.dtype is not None and el != t.dtype:
            return self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and `{el}`", v.span,
                                      f"`{self.snippet(cx.args[0])}` holds `{t.dtype}`")
                             .with_help(f"cast with `as`: `{self.cast_snippet(v)} as {t.dtype}`"))
        if isinstance(vt, TileT) and rank is not None and len(vt.shape) != rank:
            return self.emit(self.err(T.RANK_MISMATCH, f"a {len(vt.shape)}-D tile for a {rank}-D tensor", v.span,
                                      f"this is `{vt}`"))
        return UNIT

    def _rule_store_unchecked(self, cx: _CallCx) -> Type:
        target = self._indexed_tensor(cx)
        if target is None:
            return ERROR
        t, rank = target
        v, vt = cx.args[2], cx.arg_tys[2]
        if not isinstance(vt, TileT):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", v.span, f"expected a tile, found `{vt}`"))
        if t.dtype is not None and vt.dtype != t.dtype:
            return self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: `{t.dtype}` and `{vt.dtype}`", v.span,
                                      f"`{self.snippet(cx.args[0])}` holds `{t.dtype}`")
                             .with_help(f"cast with `as`: `{self.cast_snippet(v)} as {t.dtype}`"))
        if rank is not None and len(vt.shape) != rank:
            return self.emit(self.err(T.RANK_MISMATCH, f"a {len(vt.shape)}-D tile for a {rank}-D tensor", v.span,
                                      f"this is `{vt}`"))
        return UNIT

    def _own_tile(self, cx: _CallCx, e: ast.Expr, t: Type) -> TensorT | None:
        """The tensor type of a `&mut` parameter (its shape is the own tile's shape)."""
        if isinstance(t, RefT) and isinstance(t.inner, TensorT) and t.mutable:
            return t.inner
        return None

    def _rule_load(self, cx: _CallCx) -> Type:
        r, rt = cx.recv, cx.recv_ty
        assert r is not None and rt is not None
        if isinstance(rt, TileViewT):
            if not cx.args:
                return self._arity_error("`load` on a partition view", "an index `[i, ..]`", 0, cx.span, None)
            if not self._check_index(cx, cx.args[0], len(rt.tile_shape), "the view"):
                return ERROR
            assert rt.tensor.dtype is not None
            return TileT(rt.tensor.dtype, rt.tile_shape)
        t = _deref(rt)
        assert isinstance(t, TensorT)
        if cx.args:
            return self.emit(self.err(N.WRONG_ARG_COUNT, "`load` of a tensor parameter takes no index", cx.args[0].span,
                                      "unexpected index")
                             .note("a `&mut` parameter is this block's own tile: `z.load()`")
                             .with_help(f"for indexed tiles, partition it: `{self.snippet(r)}.partition([..]).load([i, ..])`"))
        shape = t.shape
        if shape is None or any(d is None for d in shape):
            return self.emit(self.err(T.LOAD_UNKNOWN_SHAPE, f"cannot `load()` the whole of `{self.snippet(r)}`",
                                      cx.span, f"`{rt}` has a `?` dimension")
                             .note("only a `&mut` parameter has an own tile; a `&` parameter is loaded whole only "
                                   "when its shape is static")
                             .with_help(f"use `{self.snippet(r)}.load_like(z)` for the tile aligned with `z`, or "
                                        f"`{self.snippet(r)}.partition([..]).load([i, ..])`"))
        assert t.dtype is not None
        tshape = tuple(d for d in shape if d is not None)
        if not (isinstance(rt, RefT) and rt.mutable):
            self._check_tile_limits(tshape, cx.span, cx.fx.kernel_name)
        return TileT(t.dtype, tshape)

    def _rule_load_padded(self, cx: _CallCx) -> Type:
        rt = cx.recv_ty
        assert isinstance(rt, TileViewT)
        if not self._check_index(cx, cx.args[0], len(rt.tile_shape), "the view"):
            return ERROR
        assert rt.tensor.dtype is not None
        want = ScalarT(rt.tensor.dtype)
        v, vt = cx.args[1], cx.arg_tys[1]
        if not self._coerce(vt, want, v):
            self._mismatch(want, vt, v, None)
        else:
            self._settle(v, want)
        return TileT(rt.tensor.dtype, rt.tile_shape)

    def _rule_store(self, cx: _CallCx) -> Type:
        r, rt = cx.recv, cx.recv_ty
        assert r is not None and rt is not None
        v, vt = cx.args[0], cx.arg_tys[0]
        if isinstance(rt, TileViewT):
            if len(cx.args) < 2:
                return self._arity_error("`store` on a partition view", "a tile and an index `[i, ..]`", 1, cx.span, None)
            if not self._check_index(cx, cx.args[1], len(rt.tile_shape), "the view"):
                return ERROR
            dst_shape: tuple[Dim | None, ...] = rt.tile_shape
            dtype = rt.tensor.dtype
        else:
            t = _deref(rt)
            assert isinstance(t, TensorT)
            if len(cx.args) > 1:
                return self.emit(self.err(N.WRONG_ARG_COUNT, "`store` of a tensor parameter takes no index",
                                          cx.args[1].span, "unexpected index")
                                 .note("a store takes no index: `z` is this block's own tile")
                                 .with_help(f"for nested tiles, partition it: `{self.snippet(r)}.partition([..])"
                                            ".store(tile, [i, ..])`"))
            if t.shape is None or any(d is None for d in t.shape):
                # a `&` param (the ownership checker rejects the store itself)
                return UNIT
            dst_shape, dtype = t.shape, t.dtype
        if isinstance(vt, (UntypedInt, UntypedFloat, ScalarT)):
            return self.emit(self.err(T.STORE_SHAPE, "`store` expects a tile, found a scalar", v.span,
                                      f"this is `{vt}`")
                             .with_help(f"make a tile: `full::<{dtype}>({shape_str(dst_shape)}, {self.snippet(v)})`"))
        if not isinstance(vt, TileT):
            return self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", v.span, f"expected a tile, found `{vt}`"))
        if dtype is not None and vt.dtype != dtype:
            inner = v.expr if isinstance(v, ast.Cast) else v  # `acc as f16` -> suggest `acc as f32`
            return self.emit(self.err(T.MISMATCHED_DTYPES, f"mismatched dtypes: storing `{vt.dtype}` into `{dtype}`",
                                      v.span, f"this is `{vt}`")
                             .secondary(r.span, f"`{self.snippet(r)}` holds `{dtype}`")
                             .with_help(f"cast with `as`: `{self.cast_snippet(inner)} as {dtype}`"))
        if tuple(vt.shape) != tuple(dst_shape):
            return self.emit(self.err(T.STORE_SHAPE,
                                      f"stored tile has shape {shape_str(vt.shape)} but the destination tile is "
                                      f"{shape_str(dst_shape)}", v.span, f"this is {shape_str(vt.shape)}")
                             .secondary(r.span, f"`{self.snippet(r)}` has tile shape {shape_str(dst_shape)}")
                             .with_help(self._store_hint(v, vt.shape, dst_shape)))
        return UNIT

    def _store_hint(self, v: ast.Expr, have: Shape, want: tuple[Dim | None, ...]) -> str:
        if all(d is not None for d in want):
            dst = tuple(d for d in want if d is not None)
            if _numel(have) == _numel(dst):
                return f"reshape it: `{self.snippet(v)}.reshape({shape_str(dst)})`"
            if broadcast_shapes(have, dst) == dst:
                return f"broadcast it: `{self.snippet(v)}.broadcast({shape_str(dst)})`"
        return "reshape or broadcast the tile to the destination's shape"

    def _rule_load_like(self, cx: _CallCx) -> Type:
        r, rt = cx.recv, cx.recv_ty
        assert r is not None and rt is not None
        z, zt = cx.args[0], cx.arg_tys[0]
        own = self._own_tile(cx, z, zt)
        if own is None:
            return self.emit(self.err(T.MISMATCHED_TYPES, "`load_like` needs a `&mut` tensor parameter", z.span,
                                      f"this is `{zt}`")
                             .note("`x.load_like(z)` loads `x`'s tile at the position and shape of `z`'s own tile"))
        t = _deref(rt)
        assert isinstance(t, TensorT) and own.shape is not None
        if t.shape is not None and len(t.shape) != len(own.shape):
            return self.emit(self.err(T.RANK_MISMATCH, f"`{self.snippet(r)}` has {_plural(len(t.shape), 'dimension')} "
                                      f"but `{self.snippet(z)}` has {len(own.shape)}", cx.span, "ranks differ")
                             .secondary(r.span, f"this is `{rt}`").secondary(z.span, f"this is `{zt}`"))
        assert t.dtype is not None
        return TileT(t.dtype, tuple(d for d in own.shape if d is not None))

    def _rule_num_tiles(self, cx: _CallCx) -> Type:
        rt = cx.recv_ty
        assert isinstance(rt, TileViewT)
        self._axis(cx, cx.args[0], len(rt.tile_shape))
        return I32

    def _rule_partition(self, cx: _CallCx) -> Type:
        r, rt = cx.recv, cx.recv_ty
        assert r is not None and rt is not None
        t = _deref(rt)
        assert isinstance(t, TensorT)
        shape = self._shape_arg(cx, cx.args[0], need_const=cx.fx.in_kernel)
        if t.shape is not None and isinstance(cx.arg_tys[0], ShapeT) and cx.arg_tys[0].rank is not None \
                and cx.arg_tys[0].rank != len(t.shape):
            return self.emit(self.err(T.RANK_MISMATCH, f"a {len(t.shape)}-D tensor cannot be split into "
                                      f"{cx.arg_tys[0].rank}-D tiles", cx.args[0].span,
                                      f"expected {_plural(len(t.shape), 'dimension')}")
                             .secondary(r.span, f"this is `{rt}`"))
        if cx.fx.in_kernel:
            if shape is None:
                return ERROR
            tshape = tuple(d for d in shape if d is not None)
            self._check_tile_limits(tshape, cx.args[0].span, cx.fx.kernel_name)
            if t.dtype is None:
                return ERROR
            return TileViewT(t, tshape, mutable=isinstance(rt, RefT) and rt.mutable)
        # host: partition dims may be known only at run time; record the expressions
        rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
        dims = shape if shape is not None else (None,) * (rank or 0)
        if isinstance(cx.args[0], ast.ArrayExpr):
            deferred = {i: (i, x) for i, (x, d) in enumerate(zip(cx.args[0].elems, dims, strict=False)) if d is None}
            if deferred:
                self._partition_deferred[cx.node] = deferred
        # an unknown dim stays symbolic-free: use a placeholder that binds nothing
        tile = tuple(d if d is not None else Dim.var(f"?{i}") for i, d in enumerate(dims))
        return PartitionT(t, tile)

    def _rule_reshape(self, cx: _CallCx) -> Type:
        x, ty = cx.recv, cx.recv_ty
        assert x is not None and ty is not None
        shape = self._shape_arg(cx, cx.args[0], need_const=cx.fx.in_kernel)
        if isinstance(ty, TileT):
            if shape is None:
                return ERROR
            new = tuple(d for d in shape if d is not None)
            a, b = _numel(ty.shape), _numel(new)
            if a != b and not (a.is_const and b.is_const) and cx.fx.kernel_name is not None:
                # not decidable symbolically (`[B]` -> `[2, B / 2]`): checked per launch
                self.kernel_reshapes.setdefault(cx.fx.kernel_name, []).append((ty.shape, new, cx.args[0].span))
            elif a != b:
                return self.emit(self.err(T.RESHAPE_COUNT,
                                          f"cannot reshape {shape_str(ty.shape)} ({_numel(ty.shape)} elements) into "
                                          f"{shape_str(new)} ({_numel(new)} elements)", cx.args[0].span,
                                          "element counts differ")
                                 .secondary(x.span, f"this is `{ty}`"))
            self._check_tile_limits(new, cx.args[0].span, cx.fx.kernel_name)
            return TileT(ty.dtype, new)
        t = _deref(ty)
        if not isinstance(t, TensorT):
            return self.emit(self.err(T.INVALID_OPERAND, f"cannot reshape a `{ty}`", x.span, "not a tile or tensor"))
        if shape is None:
            rank = cx.arg_tys[0].rank if isinstance(cx.arg_tys[0], ShapeT) else None
            return TensorT(t.dtype, None if rank is None else (None,) * rank)
        if t.shape is not None and all(d is not None for d in t.shape) and all(d is not None for d in shape):
            a, b = _numel(t.shape), _numel(shape)  # type: ignore[arg-type]
            if a.is_const and b.is_const and a != b:
                return self.emit(self.err(T.RESHAPE_COUNT,
                                          f"cannot reshape {shape_str(t.shape)} ({a} elements) into {shape_str(shape)} "
                                          f"({b} elements)", cx.args[0].span, "element counts differ")
                                 .secondary(x.span, f"this is `{ty}`"))
        return TensorT(t.dtype, shape)

    def _rule_broadcast(self, cx: _CallCx) -> Type:
        x, ty = cx.recv, cx.recv_ty
        assert isinstance(ty, TileT) and x is not None
        shape = self._shape_arg(cx, cx.args[0], need_const=True)
        if shape is None:
            return ERROR
        new = tuple(d for d in shape if d is not None)
        out = broadcast_shapes(ty.shape, new)
        if out is None or tuple(out) != new:
            return self.emit(self.err(T.SHAPE_MISMATCH, f"cannot broadcast {shape_str(ty.shape)} to {shape_str(new)}",
                                      cx.args[0].span, "incompatible shapes")
                             .secondary(x.span, f"this is `{ty}`")
                             .note("broadcasting stretches dimensions of size 1 and adds leading dimensions"))
        self._check_tile_limits(new, cx.args[0].span, cx.fx.kernel_name)
        return TileT(ty.dtype, new)

    def _rule_transpose(self, cx: _CallCx) -> Type:
        x, ty = cx.recv, cx.recv_ty
        assert isinstance(ty, TileT) and x is not None
        if len(ty.shape) != 2:
            return self.emit(self.err(T.RANK_MISMATCH, f"`transpose` needs a 2-D tile, found {len(ty.shape)}-D",
                                      x.span, f"this is `{ty}`").with_help("use `.permute([..])` for other ranks"))
        return TileT(ty.dtype, (ty.shape[1], ty.shape[0]))

    def _rule_permute(self, cx: _CallCx) -> Type:
        x, ty = cx.recv, cx.recv_ty
        assert isinstance(ty, TileT) and x is not None
        axes = self._shape_arg(cx, cx.args[0], need_const=True)
        if axes is None:
            return ERROR
        vals = [d.const_value if d is not None else None for d in axes]
        if sorted(v for v in vals if v is not None) != list(range(len(ty.shape))) or len(vals) != len(ty.shape):
            return self.emit(self.err(T.AXIS_OUT_OF_RANGE, f"`permute` needs a permutation of 0..{len(ty.shape)}",
                                      cx.args[0].span, f"not a permutation of the {len(ty.shape)} axes"))
        return TileT(ty.dtype, tuple(ty.shape[v] for v in vals if v is not None))

    def _rule_shape(self, cx: _CallCx) -> Type:
        t = _deref(cx.recv_ty)  # type: ignore[arg-type]
        assert isinstance(t, TensorT)
        if t.shape is not None:
            self._shape_values[cx.node] = t.shape
            return ShapeT(len(t.shape))
        return ShapeT(None)

    def _rule_clone(self, cx: _CallCx) -> Type:
        t = _deref(cx.recv_ty)  # type: ignore[arg-type]
        return t

    def _rule_save_npy(self, cx: _CallCx) -> Type:
        if not isinstance(cx.arg_tys[0], StrT):
            self.emit(self.err(T.MISMATCHED_TYPES, "mismatched types", cx.args[0].span,
                               f"expected a path string, found `{cx.arg_tys[0]}`"))
        return UNIT

    def _rule_sync(self, cx: _CallCx) -> Type:
        return UNIT

    def _rule_launch(self, cx: _CallCx) -> Type:
        assert isinstance(cx.recv_ty, OpT)
        return HandleT(cx.recv_ty.kernel)

    def _rule_wait(self, cx: _CallCx) -> Type:
        return UNIT

    def _rule_replay(self, cx: _CallCx) -> Type:
        return UNIT


# ---------------------------------------------------------------- module-level helpers

_COMPARE = ("==", "!=", "<", ">", "<=", ">=")

# Type names from other languages, for "did you mean" on E0104.
_TYPE_ALIASES = {
    "float": "f32", "int": "i32", "double": "f64", "half": "f16", "bfloat16": "bf16", "long": "i64",
    "usize": "u64", "isize": "i64", "float32": "f32", "float16": "f16", "float64": "f64", "int32": "i32",
    "int64": "i64", "uint8": "u8", "char": "u8", "Bool": "bool", "boolean": "bool", "Tensr": "Tensor",
}

_RECEIVER_WORDS = {
    "tile": "tiles", "param": "tensor parameters inside a kernel", "view": "partition views inside a kernel",
    "tensor": "host tensors", "partition": "host partitions", "op": "kernel calls", "handle": "launch handles",
    "graph": "graphs", "scalar": "scalars",
}


def _round_pow2(v: int) -> int:
    p = 1
    while p < v:
        p <<= 1
    return p


def _wider(a: ElemT, b: ElemT) -> ElemT:
    if isinstance(a, DType) and isinstance(b, DType):
        if a.is_float != b.is_float:
            return a if a.is_float else b
        return a if a.bits >= b.bits else b
    return a


def _elem_of_value(ty: Type) -> ElemT | None:
    match ty:
        case ScalarT(dtype=d) | TileT(dtype=d):
            return d
        case TensorT(dtype=d):
            return d
        case RefT(inner=i):
            return _elem_of_value(i)
        case _:
            return None


def _unref(e: ast.Expr) -> ast.Expr:
    return e.expr if isinstance(e, ast.Ref) else e


def _result_of(num: _Num, ty: Type) -> Type:
    return ty.inner if isinstance(ty, RefT) else ty


def _dim_op(op: str, a: Dim, b: Dim) -> Dim | None:
    match op:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            return a.floordiv(b)
        case "%":
            return a.mod(b)
        case "<<" | ">>":
            av, bv = a.const_value, b.const_value
            if bv is None or bv < 0 or bv > 63:
                return None
            if av is None:
                return a * (1 << bv) if op == "<<" else None
            return Dim.const(av << bv if op == "<<" else av >> bv)
        case _:
            return None


def _fold(op: str, a: Any, b: Any) -> Any:
    both_int = isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool)
    match op:
        case "+":
            return a + b
        case "-":
            return a - b
        case "*":
            return a * b
        case "/":
            if both_int:
                q = abs(a) // abs(b)
                return q if (a >= 0) == (b >= 0) else -q
            return a / b
        case "%":
            if both_int:
                return a - b * _fold("/", a, b)
            return a % b
        case "<<" | ">>":
            if not 0 <= b < 128:  # never build a huge integer for `1 << 10**9`
                raise OverflowError("shift amount out of range")
            return a << b if op == "<<" else a >> b
        case "&":
            return a & b
        case "|":
            return a | b
        case "^":
            return a ^ b
        case "==":
            return a == b
        case "!=":
            return a != b
        case "<":
            return a < b
        case ">":
            return a > b
        case "<=":
            return a <= b
        case ">=":
            return a >= b
        case "&&":
            return a and b
        case "||":
            return a or b
        case _:
            raise ValueError(op)


def _is_type_expr(t: Any) -> TypeGuard[ast.TypeExpr]:
    return isinstance(t, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType))


def _typearg_as_expr(t: Any) -> ast.Expr | None:
    """A turbofish argument as a value: `128`, `N * 2`, or a bare name `BM`."""
    if isinstance(t, ast.NamedType):
        if t.args:
            return None
        if t.name.name in DTYPE_NAMES:
            return None
        return ast.Name(t.name, t.span)
    if _is_type_expr(t):
        return None
    return t  # type: ignore[no-any-return]


def _subst_env(env: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in env.items() if isinstance(v, (Dim, int, DType, TypeParam))}


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


def _wrapped_in_parens(text: str) -> bool:
    """Whether `text` is one parenthesised group, `(a + b)` (not `(a) + (b)`)."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def _partition_dim_expr(arg: Any, ix: int) -> Any:
    """The expression that gives dimension `ix` of a partition argument written
    in place (`x.partition([32, B])` -> `B` for 1), so that a label points at
    that dimension; otherwise the argument itself."""
    if (isinstance(arg, ast.MethodCall) and arg.method.name == "partition" and len(arg.args) == 1
            and isinstance(arg.args[0].value, ast.ArrayExpr) and ix < len(arg.args[0].value.elems)):
        return arg.args[0].value.elems[ix]
    return arg


# Host effects that a `graph { }` block would run once while recording instead of
# replaying (E0228): calls and methods.
_GRAPH_EFFECTS = frozenset({"print", "assert", "assert_close", "load_npy"})
_GRAPH_EFFECT_METHODS = frozenset({"replay", "save_npy"})

