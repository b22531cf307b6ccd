"""`tilec check` of the literals in the instances of generic host functions.

A kernel's instance is lowered at `tilec check` (`driver.check_instances`), so
`x * 0.5` in `kernel fn k<T>` launched with `T = i32` is refused there (E0201).
A host function's instance is evaluated only when its call runs
(`runtime/host_instances.py`, the same rule), so the same body in `fn f<T>`
called as `f(3)` passed `tilec check` and failed at `tilec run`. This pass
reports, for each call of a generic host function from host code whose type
parameters the checker bound to element types, the untyped literals of the
callee's body that the instance's `T` cannot hold (`diagnostics.instances`),
with the call as a second label. A cast's operand is judged as the evaluator
judges it: its float literals are floats until the cast, an integer literal
must fit. What depends on values (a constant shift, a float value meeting `T`)
is left to the run.

Entry point: `check_host_instances(program, sink)`. Never raises.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes.types import MISMATCHED_DTYPES
from tilelang.diagnostics.instances import literal_misfits, literal_problem
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.dtypes import DType
from tilelang.sema.types import ScalarT, TypeParam
from tilelang.syntax import ast

GENERIC_NOTE = ("a generic function is checked once, for any element type `T`; its body must also hold "
                "for each `T` it is called with")


def check_host_instances(program: Any, sink: DiagnosticSink) -> None:
    seen: set[tuple[int, tuple[tuple[str, DType], ...]]] = set()
    for qual in sorted(program.host_fns):
        info = program.functions.get(qual)
        if info is None or info.is_kernel:
            continue
        for call in ast.walk(info.decl.body):
            if not isinstance(call, ast.Call):
                continue
            callee = program.callee_of(call)
            inst = program.instantiation_of(call)
            if callee is None or callee.is_kernel or not callee.type_params or callee.qualname not in program.host_fns:
                continue
            types = {name: inst.get(name) for name in callee.type_params}
            if not all(isinstance(t, DType) for t in types.values()):
                continue  # a type parameter bound to the caller's: its instance is the caller's
            key = (id(callee.decl), tuple(sorted(types.items(), key=lambda kv: kv[0])))
            if key in seen:
                continue
            seen.add(key)
            _check_body(program, callee.decl, types, call, sink)


def _check_body(program: Any, decl: ast.FnDecl, types: dict[str, DType], call: ast.Call,
                sink: DiagnosticSink) -> None:
    shown = ", ".join(f"{k} = {v.value}" for k, v in types.items())
    stack: list[tuple[Any, bool, bool]] = [(decl.body, False, False)]
    while stack:
        node, in_cast, negated = stack.pop()
        if isinstance(node, tuple):
            stack.extend((child, in_cast, negated) for child in node)
            continue
        if not hasattr(node, "__slots__"):
            continue
        if isinstance(node, (ast.IntLit, ast.FloatLit)):
            problem = _literal_problem(program, node, types, in_cast, negated)
            if problem is not None:
                message, label, help = problem
                sink.emit(Diagnostic.error(MISMATCHED_DTYPES, message).primary(node.span, label)
                          .secondary(call.span, f"the call that makes this instance of `{decl.name.name}`, "
                                                f"with {shown}")
                          .note(GENERIC_NOTE).with_help(help))
            continue
        if isinstance(node, ast.FnDecl):
            continue  # (no nested items; a defensive stop)
        child_cast = in_cast or isinstance(node, ast.Cast)
        for slot in type(node).__slots__:
            child = getattr(node, slot, None)
            if isinstance(child, tuple) or hasattr(child, "__slots__"):
                neg = isinstance(node, ast.Unary) and node.op == "-" and isinstance(child, ast.IntLit)
                stack.append((child, child_cast, neg))


def _literal_problem(program: Any, lit: ast.IntLit | ast.FloatLit, types: dict[str, DType], in_cast: bool,
                     negated: bool) -> tuple[str, str, str] | None:
    if lit.suffix:
        return None
    ty = program.type_of(lit)
    tp = ty.dtype if isinstance(ty, ScalarT) else None
    dt = types.get(tp.name) if isinstance(tp, TypeParam) else None
    if dt is None:
        return None
    if in_cast and not dt.is_float and (isinstance(lit, ast.FloatLit) or dt is DType.BOOL):
        return None  # a float until the cast (`host_instances.literal`)
    value = lit.value
    if not literal_misfits(value, dt) or (negated and not literal_misfits(-value, dt)):
        return None
    return literal_problem(-value if negated else value, dt, "function")
