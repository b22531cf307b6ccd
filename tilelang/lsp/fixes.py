"""Quick fixes: edits that a diagnostic's own words propose.

`quick_fixes(an, diag)` turns a help line the checker wrote into an edit: the
similar name it suggests, the `mut` it asks for, the type it expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilelang.diagnostics.model import Diagnostic
from tilelang.lsp.document import Analysis
from tilelang.source import Span


@dataclass(frozen=True, slots=True)
class QuickFix:
    title: str
    edits: tuple[tuple[Span, str], ...]  # replace each span's text with the string


_EXPECTED_HERE = re.compile(r"expected `([^`]+)` here")


_SIMILAR_NAME = re.compile(r"similar name exists: `([A-Za-z_][A-Za-z0-9_]*)`")


_MAKE_MUT = re.compile(r"mutable: `mut ([A-Za-z_][A-Za-z0-9_]*)`")


_KEEP_AXIS = re.compile(r"keep the reduced axis: `([^`]+)`")  # W0008: the reduction, reshaped


def quick_fixes(an: Analysis, diag: Diagnostic) -> list[QuickFix]:
    """Edits that a diagnostic spells out exactly, in the root document: the
    token a syntax error expects at a point, the similar name a resolution
    error suggests, the `mut` a binding needs, the reshape that keeps a
    reduction's axis (W0008, whose primary span is the reduction). Anything less certain is left
    to the `help` text."""
    fixes: list[QuickFix] = []
    primary = diag.primary_span
    fid = an.file.id
    for label in diag.labels:
        m = _EXPECTED_HERE.fullmatch(label.message)
        if m and label.primary and label.span.file == fid and label.span.start == label.span.end:
            fixes.append(QuickFix(f"insert `{m.group(1)}`", ((label.span, m.group(1)),)))
    for text in diag.help:
        m = _SIMILAR_NAME.search(text)
        if m and primary is not None and primary.file == fid:
            fixes.append(QuickFix(f"replace with `{m.group(1)}`", ((primary, m.group(1)),)))
        m = _MAKE_MUT.search(text)
        if m:
            name = m.group(1)
            for label in diag.labels:
                if label.span.file == fid and an.span_text(label.span) == name and not label.primary:
                    fixes.append(QuickFix(f"make `{name}` mutable", ((label.span, f"mut {name}"),)))
                    break
        m = _KEEP_AXIS.search(text)
        if m and primary is not None and primary.file == fid:
            shown = an.span_text(primary)
            if m.group(1).startswith((f"{shown}.reshape(", f"({shown}).reshape(")):
                fixes.append(QuickFix("keep the reduced axis", ((primary, m.group(1)),)))
    return fixes
