"""The one diagnostic data model: code, message, labels, notes, help.

Every stage reports user errors by pushing `Diagnostic`s into a
`DiagnosticSink`; no stage prints or raises for a user error. Renderers
(`render.py`: human, short, JSON; `lsp/`: LSP) read this model and nothing else.

Messages follow rustc: lowercase, no final period, identifiers in backticks.
The primary label says what happened here, secondary labels say why it
matters, `help` proposes the fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum

from tilelang.frozen import frozen
from tilelang.source import Span


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@frozen(eq=True)
class Label:
    span: Span
    message: str = ""
    primary: bool = False


@frozen(eq=True)
class Diagnostic:
    code: str  # a key of `tilelang.diagnostics.codes.REGISTRY`, e.g. "E0302"
    message: str
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: tuple[str, ...] = ()
    severity: Severity = Severity.ERROR

    # -- builder, ariadne style: each call returns a new value ---------------
    @staticmethod
    def error(code: str, message: str) -> Diagnostic:
        return Diagnostic(code, message)

    @staticmethod
    def warning(code: str, message: str) -> Diagnostic:
        return Diagnostic(code, message, severity=Severity.WARNING)

    def primary(self, span: Span, message: str = "") -> Diagnostic:
        return dataclasses.replace(self, labels=(*self.labels, Label(span, message, True)))

    def secondary(self, span: Span, message: str = "") -> Diagnostic:
        return dataclasses.replace(self, labels=(*self.labels, Label(span, message, False)))

    def note(self, text: str) -> Diagnostic:
        return dataclasses.replace(self, notes=(*self.notes, text))

    def with_help(self, text: str) -> Diagnostic:
        return dataclasses.replace(self, help=(*self.help, text))

    @property
    def primary_span(self) -> Span | None:
        for label in self.labels:
            if label.primary:
                return label.span
        return self.labels[0].span if self.labels else None


@dataclass(slots=True)
class DiagnosticSink:
    """Collects diagnostics from the passes; passes keep going where they can."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def emit(self, diag: Diagnostic) -> None:
        self.diagnostics.append(diag)

    @property
    def error_count(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def has_errors(self) -> bool:
        return self.error_count > 0

    def extend(self, diags: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.diagnostics.extend(diags)


class TileError(Exception):
    """A user-facing failure that carries diagnostics (raised across the host
    runtime, e.g. a failed launch-time check or a device `assert`)."""

    def __init__(self, *diagnostics: Diagnostic) -> None:
        super().__init__(diagnostics[0].message if diagnostics else "tile error")
        self.diagnostics = diagnostics


class ICE(Exception):
    """An internal compiler error: a bug in tilec, never the user's fault.

    The CLI prints it with a request for a report and exits with status 101.
    """
