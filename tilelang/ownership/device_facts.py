"""A device function's launch facts, handed down to the kernels that call it.

The kernel checker (`kernel_index.KernelIndex.defer`) keeps, for a device function, the facts it cannot prove
that depend only on the grid and the function's own const generics (`KernelChecker.device_checks`: a nested
partition `z.partition([H])` needs `8 % H == 0`, a nested index `1 < 8 / H`). The function runs on its caller's
grid with each call's generics, so `hand_down` walks every kernel's calls, at any depth, putting each call's
generics in (the checker's instantiation, in the caller's generics: substituted down the chain), and decides
each fact: now where no symbol is left (E0402/E0403 at the call that fails it), at the kernel's launches where
the kernel's generics or grid are left (a `LaunchCheck`; a static launch's decided at check time by
`ownership._decide_static_checks`), refused as unprovable where a call's generic cannot be followed.
(hrev29: such a fact was E0402 "cannot prove" at every instance, `put::<4>` of an [8] tile included.)
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import Diagnostic
from tilelang.ownership.env import ProgramView
from tilelang.ownership.facts import BinOp, Const, LaunchCheck, Sym, SymExpr, evaluate, simplify
from tilelang.syntax import ast


def hand_down(view: ProgramView, checkers: list[tuple[Any, Any]], checks: list[LaunchCheck]) -> None:
    """A device function's launch checks of the grid and its own const generics (`device_checks`)
    become checks of every kernel that calls it, at any depth, with each call's generics put in
    (the call's instantiation, itself in its caller's generics: substituted down the chain): the
    function runs on that kernel's grid with those values. A check left with no symbol is decided
    now (E0402/E0403 at the call where it fails); one of the kernel's generics or grid is the
    kernel's launch check (decided at a static launch by `_decide_static_checks`); one whose
    generic a call leaves unknown is refused as before ("cannot prove")."""
    by_decl = {id(info.decl): c for info, c in checkers if not info.is_kernel and c.device_checks}
    if not by_decl:
        return
    for info, kc in checkers:
        if not info.is_kernel:
            continue
        seen: set[tuple[int, str]] = set()
        stack: list[tuple[ast.FnDecl, dict[str, SymExpr | None], tuple[ast.Call, ...]]] = [(info.decl, {}, ())]
        while stack:
            fn, env, path = stack.pop()
            for n in ast.walk(fn.body):
                callee = view.callee(n) if isinstance(n, ast.Call) else None
                if callee is None or callee is info.decl or callee.is_kernel:
                    continue
                cenv = _call_generics(view, n, callee, env)
                key = (id(callee), repr(sorted(cenv.items(), key=lambda kv: kv[0])))
                if key in seen or len(path) > 64:
                    continue
                seen.add(key)
                stack.append((callee, cenv, (*path, n)))
                dc = by_decl.get(id(callee))
                for ch in dc.device_checks if dc is not None else ():
                    _hand_down_one(kc, info, dc, ch, cenv, (*path, n), checks)


def _call_generics(view: ProgramView, call: ast.Call, callee: ast.FnDecl,
                   env: dict[str, SymExpr | None]) -> dict[str, SymExpr | None]:
    """The callee's const generics at `call`, in the kernel's generics (`env`: the caller's, so; None where
    a value is not known at compile time or at a launch)."""
    from tilelang.sema.types import Dim

    inst = view.program.instantiations.get(call) or {}
    out: dict[str, SymExpr | None] = {}
    for g in callee.generics:
        if not g.is_const:
            continue
        v = inst.get(g.name.name)
        if isinstance(v, int) and not isinstance(v, bool):
            out[g.name.name] = Const(int(v))
        elif isinstance(v, Dim):
            e = _dim_expr(v)
            out[g.name.name] = None if e is None else _subst(e, env)
        else:
            out[g.name.name] = None
    return out


def _dim_expr(d: Any) -> SymExpr | None:
    """A checker's `Dim` (a polynomial of generics, with unfoldable `/` and `%`) as a `SymExpr`."""
    from tilelang.sema.types import DivAtom

    total: SymExpr = Const(0)
    for mono, coef in d.terms:
        term: SymExpr = Const(coef)
        for a in mono:
            if isinstance(a, str):
                term = BinOp("*", term, Sym(a))
            elif isinstance(a, DivAtom):
                num, den = _dim_expr(a.num), _dim_expr(a.den)
                if num is None or den is None:
                    return None
                term = BinOp("*", term, BinOp(a.op, num, den))
            else:
                return None
        total = BinOp("+", total, term)
    return simplify(total)


def _subst(e: SymExpr, env: dict[str, SymExpr | None]) -> SymExpr | None:
    """`e` with each symbol `env` names replaced by its value (None where one is unknown); the grid's and
    any other symbol stay."""
    if isinstance(e, Sym):
        if e.name in env:
            return env[e.name]
        return e
    if isinstance(e, BinOp):
        a, b = _subst(e.lhs, env), _subst(e.rhs, env)
        return None if a is None or b is None else simplify(BinOp(e.op, a, b))
    return e


def _hand_down_one(kc: Any, info: Any, dc: Any, ch: LaunchCheck,
                   env: dict[str, SymExpr | None], path: tuple[ast.Call, ...], checks: list[LaunchCheck]) -> None:
    fname = dc.fn.name.name
    lhs, rhs = _subst(ch.lhs, env), _subst(ch.rhs, env)
    values = ", ".join(f"`{k}` = {v}" for k, v in sorted(env.items()) if k in ch.symbols and v is not None)
    call = path[-1]
    if lhs is None or rhs is None:
        dc.report(
            Diagnostic.error(ch.code, f"cannot prove at compile time that {'the ' if ch.kind == 'tile-index' else ''}"
                             f"{ch.what}{' is in range' if ch.kind == 'tile-index' else ''}, in device function "
                             f"`{fname}`")
            .primary(ch.span, f"needs `{ch.lhs} {ch.rel} {ch.rhs}`")
            .secondary(call.span, "called here with a generic the checker cannot follow")
            .note("a device function's facts are checked for each call's const generics: give them as "
                  "constants or as the kernel's own generics")
            .with_help("use constant shapes in the device function, or move the nested partition into the kernel"))
        return
    fact = LaunchCheck(info.qualname, ch.kind, lhs, ch.rel, rhs, ch.span, ch.code,
                       f"{ch.what}, in device function `{fname}`" + (f" with {values}" if values else ""), ch.help)
    if fact.symbols:
        checks.append(fact)
        return
    if not fact.holds({}):
        what = f"{ch.what} is out of range" if ch.kind == "tile-index" else ch.what
        kc.report(
            Diagnostic.error(ch.code, f"in device function `{fname}`" + (f" with {values}" if values else "")
                             + f": {what}")
            .primary(ch.span, f"needs `{ch.lhs} {ch.rel} {ch.rhs}`, which is `{evaluate(lhs, {})} {ch.rel} "
                              f"{evaluate(rhs, {})}` here")
            .secondary(call.span, f"`{fname}` is called here" + (f" with {values}" if values else ""))
            .note(f"a device function's facts are checked for each call's const generics, in kernel "
                  f"`{info.decl.name.name}` here")
            .with_help(f"call `{fname}` with const generics for which `{ch.lhs} {ch.rel} {ch.rhs}` holds"
                       + _nearest(ch, env)))


def _nearest(ch: LaunchCheck, env: dict[str, SymExpr | None]) -> str:
    """", e.g. `H` = 4": the value nearest the call's for which the fact holds, where one generic decides it."""
    names = sorted(ch.symbols)
    given = env.get(names[0]) if len(names) == 1 else None
    if not isinstance(given, Const) or given.value <= 0:
        return ""
    v = given.value
    for c in sorted(range(1, 2 * v + 65), key=lambda c: (abs(c - v), c)):
        try:
            if c != v and ch.holds({names[0]: c}):
                return f", e.g. `{names[0]}` = {c}"
        except (KeyError, ZeroDivisionError):
            return ""
    return ""
