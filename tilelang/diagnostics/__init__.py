"""Diagnostics: the data model, the code registry and the renderers."""

from tilelang.diagnostics.model import ICE, Diagnostic, DiagnosticSink, Label, Severity, TileError

__all__ = ["ICE", "Diagnostic", "DiagnosticSink", "Label", "Severity", "TileError"]
