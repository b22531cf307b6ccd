"""The shared state of one type check, and what every checking pass needs from it.

`CheckCx` is the explicit context the passes of `tilelang.sema` share (rustc's
`TyCtxt`, mypy's `TypeChecker` as its expression checker sees it): the
`Program` being filled in, the diagnostic sink, the module loader, the queue
of function bodies still to check, and the side tables the passes keep while
they work (untyped `let mut` literals, shape values, per-kernel tile shapes).
`Fx` is the context of one function body (scopes, loop and `unsafe` depth,
host or device), `CallCx` what a builtin's typing rule sees of one call.

The passes recurse into each other: a block holds statements, a statement
holds expressions, an expression holds blocks, a type's dimension names a
constant. Those three recursions go through `CheckCx.check_expr`,
`CheckCx.check_block` and `CheckCx.eval_const`, which `check.py` binds to
the passes (`Entries`), so that no pass module imports one that imports it
back.

Guarantees: diagnostics go to the sink only (`emit` never raises); nothing
here decides a typing rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.frozen import frozen
from tilelang.intrinsics.signatures import Signature
from tilelang.sema.loader import ModuleLoader
from tilelang.sema.program import FnInfo, ModuleInfo, Program, Symbol
from tilelang.sema.types import ERROR, Dim, Shape, TensorT, Type
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast

# A suggestion ("did you mean") compares the unknown name with every
# candidate: a file of thousands of items with thousands of unknown names made
# that quadratic (minutes for 4,000 of each). One explicit budget per check
# keeps every diagnostic path linear in the file: `check_program` resets it,
# each suggestion spends one unit per candidate (and at least one), and once
# it is spent the errors come without a suggestion. A program with a few
# errors never comes near it.
SUGGESTION_BUDGET = 50_000
_budget = [SUGGESTION_BUDGET]


def reset_suggestions(budget: int = SUGGESTION_BUDGET) -> None:
    """Give a new check its whole suggestion budget."""
    _budget[0] = budget


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `name` (difflib, ratio >= 0.6), or None; None
    also once this check's suggestion budget is spent."""
    if _budget[0] <= 0:
        return None
    pool = sorted(set(candidates))
    _budget[0] -= max(1, len(pool))
    if _budget[0] < 0:
        return None
    import difflib  # only when a name is not found: not at every start

    found = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return found[0] if found else None


_PLURALS = {"index": "indices", "axis": "axes"}


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {_PLURALS.get(word, word + 's')}"


@dataclass
class Fx:
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
    last_block: int | None = None  # inside `if last_block(axis) { .. }`: the axis (`z.group()`)
    # the branches and loop bodies around the code being checked: the scope depth at
    # each one's start and its span (a kernel cannot carry a view assigned inside one)
    regions: list[tuple[int, Span, str]] = field(default_factory=list)
    # the bindings declared without a value (`let p: f32;`): `definite.check_definite`
    deferred: set[Symbol] = field(default_factory=set)

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.generics:
            return self.generics[name]
        return self.module.scope.get(name)

    def visible_names(self) -> Iterator[str]:
        """Every name in scope (lazily: `suggest` reads it only while its
        budget lasts)."""
        for scope in self.scopes:
            yield from scope
        yield from self.generics
        yield from self.module.scope


@dataclass
class CallCx:
    """Everything a typing rule sees about one builtin call."""

    node: ast.Call | ast.MethodCall
    sig: Signature
    fx: Fx
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


@frozen(eq=True)
class Entries:
    """The passes that the others recurse into, bound by `check.py`."""

    check_expr: Callable[[CheckCx, ast.Expr, Fx, Type | None], Type]
    check_block: Callable[[CheckCx, ast.Block, Fx, Type | None, bool], Type]
    eval_const: Callable[[CheckCx, str], Any]


class CheckCx:
    """The state of one type check, shared by every pass (see the module docstring)."""

    def __init__(self, root: ast.Module, sources: SourceMap, sink: DiagnosticSink,
                 loader: ModuleLoader | None, entries: Entries) -> None:
        self.entries = entries
        self.sources = sources
        self.sink = sink
        self.loader = loader or ModuleLoader()
        root_path = sources.get(root.span.file).name if root.span.file >= 0 else "<input>"
        self.root = ModuleInfo("", root_path, root)
        self.program = Program(self.root)
        self.program.modules[""] = self.root
        self.module_by_key: dict[str, ModuleInfo] = {}
        self.pending_consts: dict[str, tuple[ast.ConstDecl, ModuleInfo]] = {}
        self.const_state: dict[str, str] = {}
        self.queue: list[tuple[FnInfo, bool]] = []
        self.checked: set[tuple[str, bool]] = set()
        # symbolic tile shapes each kernel body creates, checked per instantiation
        self.kernel_tiles: dict[str, list[tuple[Shape, Span]]] = {}
        self.fn_by_decl: dict[ast.FnDecl, FnInfo] = {}
        self.builtin_syms: dict[str, Symbol] = {}
        self.method_syms: dict[str, Symbol] = {}
        self.shape_values: dict[Any, tuple[Dim | None, ...]] = {}
        # `let mut x = <literal>` bindings still untyped: the init and the uses so far
        self.mut_literals: dict[Symbol, tuple[Any, list[Any]]] = {}
        # `let mut q = (x, 0)` bindings of a tuple with untyped elements: the init and the uses
        # so far (names `q` and fields `q.1`); the first assignment of typed elements fixes them
        # (`coerce.adopt_tuple`)
        self.mut_tuples: dict[Symbol, tuple[Any, list[Any]]] = {}
        # immutable `let`s of a string known where it is written (`const_str`): `print`'s
        # format string is checked through them (E0232)
        self.const_strings: dict[Symbol, tuple[str, ast.StrLit]] = {}
        # in a destructuring assignment `(a, b) = value;`: its elements' mismatches, reported
        # together (`stmts._report_destructured`)
        self.destructured: list[tuple[Any, Type, Type, Any]] | None = None
        self.negated: set[Any] = set()  # integer literals under a unary minus
        self.overflowed: set[Any] = set()  # binary expressions already reported as overflowing
        self.cur_fx: Fx | None = None  # the function body being checked
        # (function, checked as device code) -> the first call that made it so
        self.call_sites: dict[tuple[str, bool], Span] = {}
        # calls between functions in device code: (caller, callee, call span)
        self.device_edges: list[tuple[str, str, Span]] = []
        # reshapes whose element counts are equal only for some generics
        self.kernel_reshapes: dict[str, list[tuple[Shape, Shape, Span, str | None]]] = {}  # (.., a load_like's help)
        # host `t.partition([n])` with a run-time `n`: dim index -> expression
        self.partition_deferred: dict[Any, dict[int, tuple[int, ast.Expr]]] = {}
        # `z.partition([_, 64])`: each `_` written as a whole dimension -> its
        # partition, and each such partition -> its `_` dims until a kernel
        # launch takes it (what is left is E0229: no tuner picks it)
        self.tuner_dims: dict[Any, ast.MethodCall] = {}
        self.tuned_partitions: dict[Any, tuple[int, ...]] = {}
        # `k(z.partition([..]), ..)`: the partition given to a kernel's `&mut` parameter -> the tile it declares,
        # for the help of a partition of the wrong rank (set before the kernel call's arguments are checked)
        self.partition_params: dict[Any, TensorT] = {}
        # `z.store(v)`, `acc = v`, `return v`: `v` -> (the element type it goes into, why), for E0201's help
        # of a mix inside `v` (cast toward it)
        self.store_dtypes: dict[Any, tuple[Any, str]] = {}
        # `atomic_add(&h, [i], v)` in a kernel: each element of its index -> the call, for E0203's help of a
        # tile of indices (a scatter: one-hot sums, not one index made of them; round 15)
        self.atomic_indexes: dict[Any, ast.Call] = {}
        # `p.load([i])` in a kernel: each element of its index, for E0203's help of a tile of indices (a gather:
        # Triton's `tl.load(x_ptr + idx)`, which a tile index is not; round 30)
        self.gather_indexes: set[Any] = set()
        # `a == b & m` (C's precedence; Rust's and Tile's `&` binds tighter than a comparison): the operator
        # span of each `&`, `|`, `^` that took an operand of a comparison beside it -> (the comparison, the
        # expression with the comparison in parentheses), for E0201's help of a `bool` and an integer (round 23)
        self.precedence_fixes: dict[Any, tuple[str, str]] = {}
        self.scatters: dict[Any, tuple[ast.Expr, Any]] = {}  # such a call -> its tile index and its type
        # A `fn` or `kernel fn` named without a call is E0203 (no function values): the name that a `let`
        # binds it to, for the help (`let f = twice;`), and the names the REPL shows (`twice` at the prompt)
        self.fn_value_lets: dict[Any, str] = {}
        # `let slot = atomic_add(&c, [e], 1);` (CUDA's atomicAdd and Triton's tl.atomic_add give the old value):
        # the name, bound to the `()` of a call that gives none, -> (the call's name, its span); a read of it is
        # E0203 there, naming the call (huser30: `slot as f32`, `x + slot`, `slot < 4` said "cannot cast `()`")
        self.no_value_lets: dict[Any, tuple[str, Any]] = {}
        self.shown_names: set[Any] = set()
        # every diagnostic emitted: a function checked in both contexts (called from a kernel and from
        # host code) finds its context-free errors twice, and each is reported once
        self.emitted: set[Diagnostic] = set()

    # ------------------------------------------------------------ the recursion entries
    def check_expr(self, e: ast.Expr, fx: Fx, expected: Type | None = None) -> Type:
        """The type of `e` (recorded in `Program.types`): `exprs.check_expr`."""
        return self.entries.check_expr(self, e, fx, expected)

    def check_block(self, b: ast.Block, fx: Fx, expected: Type | None, new_scope: bool = True) -> Type:
        """The type of block `b`, checked in a new scope: `stmts.check_block`."""
        return self.entries.check_block(self, b, fx, expected, new_scope)

    def eval_const(self, qual: str) -> Any:
        """The value of `const` item `qual`, evaluated once: `items.eval_const`."""
        return self.entries.eval_const(self, qual)

    # ------------------------------------------------------------ diagnostics
    def const_str(self, e: ast.Expr) -> tuple[str, ast.StrLit] | None:
        """The string `e` always is, with the literal that wrote it: a literal, an immutable
        `let` of one (`let f = "{} {}";`), a block ending in one; None for anything else
        (a `let mut`, an `if`)."""
        match e:
            case ast.StrLit(value=v):
                return v, e
            case ast.Name():
                sym = self.program.symbol_of(e)
                return self.const_strings.get(sym) if sym is not None else None
            case ast.Block(tail=t) if t is not None:
                return self.const_str(t)
        return None

    def err(self, code: str, message: str, span: Span, label: str = "") -> Diagnostic:
        return Diagnostic.error(code, message).primary(span, label)

    def emit(self, d: Diagnostic) -> Type:
        fx = self.cur_fx
        if d.code in (T.HOST_ONLY, T.KERNEL_ONLY) and fx is not None and fx.info is not None \
                and not fx.info.is_kernel:
            # why is this function device (host) code? point at the call that made it so
            site = self.call_sites.get((fx.info.qualname, fx.in_kernel))
            if site is not None:
                where = "device code: it is called from a kernel" if fx.in_kernel else "host code: it is " \
                    "called from host code"
                d = d.secondary(site, f"`{fx.info.name}` is {where} here")
        if d not in self.emitted:
            self.emitted.add(d)
            self.sink.emit(d)
        return ERROR

    def snippet(self, node: Any) -> str:
        try:
            return self.sources.snippet(node.span)
        except Exception:
            return "..."

    def has_syntax_errors(self, mod: ModuleInfo) -> bool:
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

    def receiver_snippet(self, node: Any) -> str:
        """`node` quoted as the receiver of a suggested method call: a method binds
        tighter than `as`, the operators and `&`, so `t.sum(1) as f16` must become
        `(t.sum(1) as f16)` before `.reshape(..)` (round 11: the help was
        `t.sum(1) as f16.reshape([R, 1])`)."""
        text = self.snippet(node)
        if isinstance(node, (ast.Cast, ast.Binary, ast.Unary, ast.Ref, ast.If, ast.RangeExpr)) \
                and not _wrapped_in_parens(text):
            return f"({text})"
        return text

    def borrow_snippet(self, node: Any) -> str:
        """`&node` as a suggested borrow: `&` binds tighter than `as` and the binary
        operators, so a cast or a sum is borrowed whole (`&(w as bf16)`), and a cast of
        a borrow (`&w as bf16`, which casts `&w`) becomes the borrow of the cast."""
        if isinstance(node, ast.Cast) and isinstance(node.expr, ast.Ref) and not node.expr.mutable:
            return f"&({self.cast_snippet(node.expr.expr)} as {self.snippet(node.ty)})"
        text = self.snippet(node)
        if isinstance(node, (ast.Cast, ast.Binary, ast.If, ast.RangeExpr)) and not _wrapped_in_parens(text):
            return f"&({text})"
        return f"&{text}"

    def enqueue(self, info: FnInfo, in_kernel: bool) -> None:
        key = (info.qualname, in_kernel)
        if key not in self.checked:
            self.checked.add(key)
            info.contexts.add("kernel" if in_kernel else "host")
            (self.program.device_fns if in_kernel and not info.is_kernel
             else self.program.host_fns if not in_kernel else set()).add(info.qualname)
            self.queue.append((info, in_kernel))

    def arity_error(self, owner: str, takes: str, n: int, span: Span, decl: Span | None,
                    params: tuple[ast.Param, ...] = (), help: str | None = None) -> Type:
        d = self.err(N.WRONG_ARG_COUNT, f"{owner} takes {takes} but {plural(n, 'argument')} "
                     f"{'was' if n == 1 else 'were'} supplied", span,
                     f"expected {takes}")
        if help is not None:  # another library's spelling explains the count (`split_habits.arity_help`)
            return self.emit(d.with_help(help))
        if decl is not None:
            d = d.secondary(decl, "defined here")
        if owner in ("`block_id`", "`num_blocks`") and n == 0:  # CUDA's `blockIdx.x`, Triton's axis=0 default
            return self.emit(d.with_help(f"give the grid axis: `{owner.strip('`')}(0)` for a 1-D grid"))
        if params and len(params) <= 8:  # the definition's parameters, to match the arguments against
            name = owner.split("`")[1] if "`" in owner else "f"
            sig = ", ".join(self.snippet(p) for p in params)
            return self.emit(d.with_help(f"call it with {takes}, as its definition lists them: "
                                         f"`{name}({sig})`"))
        return self.emit(d.with_help(f"call it with {takes}" + (", as its definition lists them" if decl else "")))


def module_holding(tcx: CheckCx, fx: Fx, name: str) -> tuple[str, str] | None:
    """After `use k_mods::scaling;` (the module, not its items), the module a name not found is an item of:
    (its local name `scaling`, the path a `use` of the item writes, `k_mods::scaling::name`), or None."""
    from tilelang.sema.program import SymbolKind

    for local, sym in fx.module.scope.items():
        if sym.kind is SymbolKind.MODULE and name in getattr(tcx.program.modules.get(sym.qualname or ""), "own", {}):
            path = next(("::".join(s.name for s in u.path) for u in fx.module.ast.items
                         if isinstance(u, ast.UseDecl) and u.path and u.path[-1].name == local and u.names is None),
                        local)
            return local, f"{path}::{name}"
    return None
