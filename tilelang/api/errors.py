"""The exceptions the Python API raises, all `tilelang.TileError` subclasses.

A Python user has no `.tile` call site to point at, so these do not render
rustc-style source excerpts. Each says, in one readable block, what went
wrong (naming the kernel parameter, what it expects and what was given),
where the parameter is declared in the `.tile` file, and how to fix it:

    error[E0502]: argument `x` of kernel `add` must hold `f32`, but it is an int64 NumPy array of shape (1024,)
      --> examples/add.tile:3:32: `x: &Tensor<f32, [?]>` is declared here
      help: convert it first: `x.astype(numpy.float32)`

Errors that come from the shared runtime (launch-time checks E05xx, the
run-time borrow tracker E03xx, a device `assert` E0700) keep their
`diagnostics` and are shown the same way. Every error has a code: the
language's where one applies, else one of the API's own E08xx
(`diagnostics/codes/api.py`: not an array, not contiguous, arrays on two
devices, ...), and a help line (`tests/api/test_api_codes.py` reads every
raise site).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.source import SourceFile, SourceMap, Span


class APIError(TileError):
    """Base of the API's errors: a message, an optional code, the location of
    the declaration it concerns, and a help line."""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        help: str | None = None,
        where: str | None = None,
        diagnostics: Sequence[Diagnostic] = (),
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(*diagnostics)
        self.args = (message,)  # what `repr`, pickling and `e.args[0]` see (not TileError's placeholder)
        self.message = message
        self.code = code
        self.help = help
        self.where = where
        self.notes = tuple(notes)  # a runtime diagnostic's (`in block (1) of a grid of (2)` of a device assert)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"

    def __str__(self) -> str:
        head = f"error[{self.code}]" if self.code else "error"
        lines = [f"{head}: {self.message}"]
        if self.where:
            lines.append(f"  --> {self.where}")
        lines += [f"  note: {n}" for n in getattr(self, "notes", ())]
        if self.help:
            lines.append(f"  help: {self.help}")
        return "\n".join(lines)

    @classmethod
    def from_tile_error(cls, err: TileError, sources: SourceMap, kernel: Any = None) -> APIError:
        """The same failure, shown for Python (first diagnostic; its primary
        label's location and text, its first help line). `kernel`: the
        declaration of the kernel whose wait met `err`, which names a kernel
        fault on the GPU (`cuda_driver.in_kernel`) and locates it there."""
        if kernel is not None and getattr(err, "cuda_fault", None) is not None:
            from tilelang.runtime.cuda_driver import in_kernel

            err = in_kernel(err, kernel.name.name, kernel.name.span, "this kernel failed on the GPU")
        diags = tuple(err.diagnostics)
        if not diags:
            return cls(str(err))
        d = diags[0]
        where = None
        span = d.primary_span
        if span is not None:
            label = next((lb.message for lb in d.labels if lb.span == span), "")
            where = locate(span, sources, label)
        help = d.help[0] if d.help else None
        return cls(d.message, code=d.code or None, help=help, where=where, diagnostics=diags, notes=d.notes)


class CompileError(APIError):
    """`tilelang.load` / `tilelang.compile` found errors in the program (the
    message is the full report, as `tilec check` prints it; `code` is its
    first error's), or could not read the file (E0814)."""

    def __init__(
        self,
        report: str,
        diagnostics: Sequence[Diagnostic],
        *,
        code: str | None = None,
        help: str | None = None,
    ) -> None:
        if code is None:
            code = next((d.code for d in diagnostics if d.severity.value == "error" and d.code), None)
        super().__init__(report, code=code, help=help, diagnostics=diagnostics)
        self.report = report if diagnostics else APIError.__str__(self)

    def __str__(self) -> str:
        return self.report


class CallError(APIError, TypeError):
    """A kernel or function was called with arguments that do not fit its
    Tile signature (kinds, element types, ranks, shapes, const generics,
    contiguity, devices). Nothing ran."""


class DeviceError(APIError, ValueError):
    """An unknown device name (`device="tpu"`): tilec runs on "cpu" (the
    interpreter) or "gpu" (CUDA)."""


class BorrowError(APIError):
    """The call would break Tile's ownership rules (E0301, E0303, E0305,
    E0309): the same memory written twice, or written while a pending
    `.launch()` uses it. Nothing ran."""


class NameLookupError(APIError, AttributeError):
    """A module has no kernel or host function of the name asked for (E0815);
    an `AttributeError` too, so `hasattr` and `getattr(m, name, default)`
    work as on any Python object."""


class ExecutionError(APIError, RuntimeError):
    """The kernel or host function failed while running: a device `assert`,
    a failed `assert_close`, a CUDA error."""


def _file(span: Span, sources: SourceMap) -> SourceFile | None:
    if span.file < 0:  # DUMMY_SPAN: no file
        return None
    try:
        return sources.get(span.file)
    except IndexError:
        return None


def locate(span: Span, sources: SourceMap, what: str = "") -> str:
    """`file:line:col` of `span`, with `what` after it."""
    sf = _file(span, sources)
    if sf is None:
        return what
    line, col = sf.line_col(span.start)
    text = f"{sf.name}:{line}:{col}"
    return f"{text}: {what}" if what else text


def span_text(span: Span, sources: SourceMap) -> str:
    """The source text of `span`, whitespace runs collapsed to one space."""
    sf = _file(span, sources)
    return "" if sf is None else " ".join(sf.text[span.start : span.end].split())


def given(n: int) -> str:
    """`1 was given`, `3 were given`: the end of a "takes N arguments but .." message."""
    return f"{n} {'was' if n == 1 else 'were'} given"


def a_type(value: object) -> str:
    """`a `list``, `an `int``: the article and the name of ``value``'s type, for "must be X, not ..." messages."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} `{name}`"



class TileWarning(UserWarning):
    """A warning of the checker (a W-code) in a program `tilelang.load` or
    `tilelang.compile` checked: issued with `warnings.warn` at the caller's
    line, its text the diagnostic as `tilec check` renders it (source line,
    notes, help), `diagnostic` the `Diagnostic` itself. Python's warning
    filters apply: `warnings.simplefilter("error", tilelang.TileWarning)` is
    `tilec check --deny warnings`, `"ignore"` silences them; `#[allow(lint)]`
    in the file silences one lint there, as for `tilec`."""

    def __init__(self, text: str, diagnostic: Diagnostic) -> None:
        super().__init__(text)
        self.diagnostic = diagnostic
