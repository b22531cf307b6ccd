"""What the checks of the kernel-level constructs (`if last_block(axis)`,
`for s in queue(axis)`) share: one diagnostic per (code, span), the refusal
of the construct inside a device function, and the walk over a kernel's
calls into the device functions it reaches.

Used by `ownership/combine.py` and `ownership/queue.py`. Never raises on a
well-typed program.
"""

from __future__ import annotations

from collections.abc import Callable

from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.ownership.env import ProgramView
from tilelang.source import Span
from tilelang.syntax import ast


class OnceSink:
    """Passes each (code, primary span) on to `sink` once: a construct that
    several rules see (e.g. a call reached along two paths) is reported once."""

    def __init__(self, sink: DiagnosticSink) -> None:
        self.sink = sink
        self.seen: set[tuple[str, Span | None]] = set()

    def __call__(self, d: Diagnostic) -> None:
        key = (d.code, d.primary_span)
        if key not in self.seen:
            self.seen.add(key)
            self.sink.emit(d)


def refuse_in_device_fns(view: ProgramView, emit: Callable[[Diagnostic], None],
                         found: Callable[[object], bool], code: str, what: str,
                         note: str, help: str) -> None:
    """An error at each node of a non-kernel device function for which
    `found` holds: the construct `what` belongs to a kernel's own body."""
    for info in view.device_fns():
        if info.is_kernel:
            continue
        for n in ast.walk(info.decl.body):
            if found(n):
                emit(Diagnostic.error(code, f"`{what}` is only allowed in a kernel's body")
                     .primary(n.span, f"inside device function `{info.decl.name.name}`")
                     .note(note)
                     .with_help(help))


def reached_calls(view: ProgramView, decl: ast.FnDecl, pick: Callable[[ast.Call], bool],
                  skip: Callable[[ast.Call], bool] = lambda _n: False
                  ) -> list[tuple[ast.Call, ast.Call | None]]:
    """The calls for which `pick` holds in kernel `decl` and in every device
    function it calls (transitively, each function once), each with the
    kernel's own call that reaches it (None in the kernel itself). `skip`
    leaves out calls of the kernel's own body (neither picked nor followed).
    A picked call is not followed into its callee."""
    out: list[tuple[ast.Call, ast.Call | None]] = []
    seen: set[int] = set()

    def scan(fn: ast.FnDecl, via: ast.Call | None) -> None:
        if id(fn) in seen:
            return
        seen.add(id(fn))
        for n in ast.walk(fn.body):
            if not isinstance(n, ast.Call) or (via is None and skip(n)):
                continue
            if pick(n):
                out.append((n, via))
                continue
            callee = view.callee(n)
            if callee is not None and callee is not fn:
                scan(callee, via or n)

    scan(decl, None)
    return out
