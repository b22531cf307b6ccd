"""The semantic checker's driver: modules, name resolution and types.

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

The work is divided by concern, one module each, sharing one `CheckCx`
(`context.py`) rather than one class:

    items.py      modules, `use`, signatures, type expressions, `const` items
    stmts.py      function bodies, blocks, `let` and patterns, assignment, loops
    exprs.py      the type of each expression; hands off to:
      names.py      names and paths in bodies
      operators.py  unary and binary operators, casts
      calls.py      calls: builtins (typed by `rules.py`), functions, kernels
      call_habits.py  their helps: other languages' spellings of calls
      generics.py   inferring generic arguments of a call
      launch.py     kernel launches: partitions, borrows, const generics
    coerce.py     coercion and the typing of untyped literals
    consts.py     constant folding and shape algebra
    kernel.py     kernel-context rules: kernel params, tile limits, recursion
    typeops.py    questions about types every pass asks

Invariant: never raises on any AST the parser can build.
"""

from __future__ import annotations

from tilelang.diagnostics.codes import names as N
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.dtypes import DType
from tilelang.sema.coerce import (adopt, adopt_tuple, default_type, defaulted, float_out_of_range, has_untyped,
                                  settle)
from tilelang.sema.consts import check_overflow, constant_shifts
from tilelang.sema.context import CheckCx, Entries, reset_suggestions
from tilelang.sema.exprs import check_expr
from tilelang.sema.graph_effects import check_graph_effects
from tilelang.sema.items import collect_module, eval_const, register_consts, resolve_signatures
from tilelang.sema.kernel import check_device_recursion
from tilelang.sema.launch import untaken_tuner_partitions
from tilelang.sema.loader import ModuleLoader
from tilelang.intrinsics.signatures import Context, lookup_function, lookup_method
from tilelang.sema.program import FnInfo, Program, Symbol, SymbolKind
from tilelang.sema.stmts import check_block, check_fn
from tilelang.sema.typeops import float_literal_overflows, mentions_tile
from tilelang.sema.types import F32, ScalarT, UnitT, UntypedFloat, UntypedInt
from tilelang.source import SourceMap
from tilelang.syntax import ast


def check_program(root: ast.Module, sources: SourceMap, sink: DiagnosticSink,
                  loader: ModuleLoader | None = None) -> Program:
    """Check `root` and every module it uses; see `Program` for the result."""
    reset_suggestions()
    tcx = CheckCx(root, sources, sink, loader, Entries(check_expr, check_block, eval_const))
    _run(tcx)
    return tcx.program


def _run(tcx: CheckCx) -> None:
    # The root is a module like any other: a `use` of it (through a cycle, or
    # the file itself) finds it instead of reading it again.
    key = tcx.loader.register(tcx.root.path, tcx.root.ast)
    tcx.module_by_key[key] = tcx.root
    collect_module(tcx, tcx.root)
    # every module's constants first: a signature's dimension may name one declared after it or in a module
    # resolved later (round 24: `Tensor<i32, [NB]>` of an imported `NB`, or of one declared below the kernel,
    # was "array dimension is not a compile-time constant")
    for mod in list(tcx.program.modules.values()):
        register_consts(tcx, mod)
    for mod in list(tcx.program.modules.values()):
        resolve_signatures(tcx, mod)
    for qual in list(tcx.pending_consts):
        tcx.eval_const(qual)
    # kernels first (they make device functions known), then host entry points
    for info in tcx.program.kernels.values():
        tcx.enqueue(info, True)
    _drain(tcx)
    main = tcx.root.own.get("main")
    _check_main(tcx, main)
    if main is not None and main.kind is SymbolKind.FN:
        tcx.enqueue(tcx.program.functions[main.qualname or "main"], False)
    _drain(tcx)
    for info in list(tcx.program.functions.values()):
        if not info.contexts:
            in_kernel = any(mentions_tile(t) for t in (*info.param_types, info.ret)) or _kernel_only_body(tcx, info)
            tcx.enqueue(info, in_kernel)
            _drain(tcx)
    check_device_recursion(tcx)
    check_graph_effects(tcx)
    untaken_tuner_partitions(tcx)
    _default_untyped(tcx)
    constant_shifts(tcx)


def _kernel_only_body(tcx: CheckCx, info: FnInfo) -> bool:
    """Whether a function nobody calls uses a builtin that only device code has (`z.load()`, `z.store(..)`,
    `block_id(0)`, `atomic_add(..)`, `x.load_like(z)`): it is a device helper, checked as device code. It
    was checked as host code unless its signature named a `Tile`, so a module of device helpers of which a
    program uses some was E0211 for the others, and a REPL redefinition of a device function with atomics
    failed on the old one (hrev27, fixed hrev29). A function that no context admits is refused in the one
    its body asks for; one that runs is checked where it is called."""
    mod = tcx.program.modules.get(info.module)
    own = mod.scope if mod is not None else {}
    for n in ast.walk(info.decl.body):
        if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.callee.ident.name not in own:
            sig = lookup_function(n.callee.ident.name)
        elif isinstance(n, ast.MethodCall):
            sig = lookup_method(n.method.name)
        else:
            continue
        if sig is not None and sig.context is Context.KERNEL:
            return True
    return False


def _check_main(tcx: CheckCx, main: Symbol | None) -> None:
    """`fn main()` is where `tilec run` starts: no parameters, no result."""
    if main is None or not isinstance(main.decl, ast.FnDecl):
        return
    decl = main.decl
    if decl.is_kernel:
        tcx.emit(tcx.err(N.INVALID_MAIN, "`main` cannot be a kernel", decl.name.span, "declared `kernel fn`")
                 .note("`main` is the host entry point; it launches kernels")
                 .with_help("rename the kernel and launch it from `fn main()`"))
    elif decl.params or decl.generics:
        span = (decl.params[0].span.to(decl.params[-1].span) if decl.params
                else decl.generics[0].span.to(decl.generics[-1].span))
        tcx.emit(tcx.err(N.INVALID_MAIN, "`main` cannot take parameters", span, "parameters of `main`")
                 .note("`tilec run` calls `main` with no arguments")
                 .with_help("build the inputs inside `main`, e.g. with `load_npy(\"x.npy\")`"))
    elif decl.ret is not None:
        info = tcx.fn_by_decl.get(decl)
        if info is None or not isinstance(info.ret, UnitT):
            tcx.emit(tcx.err(N.INVALID_MAIN, "`main` cannot return a value", decl.ret.span,
                             "return type of `main`")
                     .with_help("print the result, or `assert` it, instead of returning it"))


def _drain(tcx: CheckCx) -> None:
    while tcx.queue:
        info, in_kernel = tcx.queue.pop(0)
        check_fn(tcx, info, in_kernel)
        tcx.cur_fx = None


def _default_untyped(tcx: CheckCx) -> None:
    for sym, (init, _) in tcx.mut_literals.items():
        if isinstance(sym.ty, (UntypedInt, UntypedFloat)):
            adopt(tcx, sym, default_type(sym.ty, init))
    for sym in list(tcx.mut_tuples):  # (their values assigned later too: `q = (q.0 + 5000000000, ..)`)
        if sym in tcx.mut_tuples and sym.ty is not None and has_untyped(sym.ty):
            adopt_tuple(tcx, sym, defaulted(sym.ty))
    for node, ty in list(tcx.program.types.items()):
        if isinstance(ty, UntypedFloat) and isinstance(node, (ast.Call, ast.MethodCall)):
            # first, with its arguments: `exp(1)` left to its default is `f32` with its `1`
            # (an `i32` argument of an `f32` call was ill-formed)
            settle(tcx, node, F32)
    for node, ty in list(tcx.program.types.items()):
        if isinstance(ty, UntypedInt):
            big = isinstance(node, ast.IntLit) and not -(1 << 31) <= node.value < (1 << 31)
            tcx.program.types[node] = ScalarT(DType.I64 if big else DType.I32)
            if isinstance(node, ast.Binary):  # `let n = 1 << 40;` is i32 arithmetic
                check_overflow(tcx, node, tcx.program.types[node])  # type: ignore[arg-type]
        elif isinstance(ty, UntypedFloat):
            tcx.program.types[node] = F32
            if isinstance(node, ast.FloatLit) and float_literal_overflows(node.value, DType.F32, node.text):
                float_out_of_range(tcx, node, DType.F32)  # an untyped float is f32
