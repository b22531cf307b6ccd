"""The ownership checker: no Tile program that passes it can race (BRIEF §6).

Entry point: `check_ownership(program, sink) -> OwnershipFacts`, run after the
type checker. `program` is the type checker's `Program` (a bare `ast.Module`
is accepted too, for tests). Diagnostics go to `sink`; the returned facts
carry the launch-time checks the host runtime must evaluate before any GPU
work (see `tilelang.ownership.facts`).

Two halves:
  - `host.py`: flow-sensitive borrows of tensors by launches, moves, graphs
    (codes E03xx, `codes/ownership.py`);
  - `kernel.py`: what a kernel body may do with its own tile and its inputs
    (codes E04xx, `codes/kernel.py`).

Invariant: the checker never raises for a user error and never prints.
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ownership.env import ProgramView
from tilelang.ownership.facts import LaunchCheck, OwnershipFacts
from tilelang.ownership.host import check_host
from tilelang.ownership.kernel import check_kernels
from tilelang.syntax import ast

__all__ = ["LaunchCheck", "OwnershipFacts", "check_ownership"]


def check_ownership(program: Any, sink: DiagnosticSink) -> OwnershipFacts:
    view = ProgramView(program)
    facts = OwnershipFacts()
    if view.root is None:
        return facts
    check_kernels(view, sink, facts.launch_checks)
    facts.waits.update(check_host(view, sink))
    if facts.launch_checks:
        _decide_static_checks(view, facts, sink)
    return facts


def _decide_static_checks(view: ProgramView, facts: OwnershipFacts, sink: DiagnosticSink) -> None:
    """A launch check whose symbols the type checker already knows at a call
    (const generics from literal partition shapes, module consts) is decided
    now: a failure is reported at that call instead of at run time."""
    consts: dict[str, int] = {}
    raw = getattr(view.program, "consts", None)
    for k, v in raw.items() if isinstance(raw, dict) else ():
        if isinstance(v, int) and not isinstance(v, bool):
            consts[str(k).split("::")[-1]] = v
    for fn in view.root_fns():
        if fn.is_kernel:
            continue
        for node in ast.walk(fn.body):
            if not isinstance(node, ast.Call):
                continue
            decl = view.callee(node)
            if decl is None or not decl.is_kernel:
                continue
            env = {**consts, **view.instantiation(node)}
            for check in facts.checks_for(decl.name.name):
                if check.symbols <= env.keys() and not check.holds(env):
                    sink.emit(check.diagnostic(env, node.span, static=True))
