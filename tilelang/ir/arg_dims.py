"""The last check of a launch, on every engine: each `&Tensor` argument has the
sizes the kernel's type fixes (`ir.TensorParam.dims`, `[N]` of a const generic).

Every way to launch a kernel binds it first (`runtime/launch.bind_launch`,
E0501, for Tile callers, the Python API and everything built on them: graphs,
the tuner, `torch_op`); the engines check again right before a kernel runs,
with the same code: the interpreter (`interp/machine.run_kernel`) and the GPU
runtime (`CudaDevice._run_slow` and `fast_launcher`, whose launcher reuses
the sizes it was made with). Why twice: the GPU code takes such a dimension
as a constant (`backend/llvm.static_dims`), so every bounds check on it is
folded away and a launch with a smaller tensor would read past its end. A
path that reached an engine without the binding is stopped here, before any
work, never launched.

Invariant: `check` raises or returns; it reads only the parameters' static
dims and the arguments' shapes (no device, no CUDA library).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.diagnostics.codes.launch import DIM_MISMATCH
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.ir import nodes as ir
from tilelang.source import DUMMY_SPAN, Span

Fixed = tuple[tuple[int, int, int], ...]  # (argument index, dimension, size)


def fixed_dims(kernel: ir.Kernel) -> Fixed:
    """(argument index, dimension, size) of every dimension a `&Tensor` parameter's type fixes, and of every
    `?` one the type of a device function it is given to fixes (`kernel.claims`). A `&mut` parameter's are
    its tile's (the launch passes the whole tensor), an unclaimed `?` is the launch's: neither is here."""
    own = tuple((i, d, int(n)) for i, p in enumerate(kernel.params)
                if isinstance(p, ir.TensorParam) and not p.mutable
                for d, n in enumerate(p.dims) if n is not None)
    return own + claimed_dims(kernel)


def claimed_dims(kernel: ir.Kernel) -> Fixed:
    """(argument index, dimension, size) of every `?` dimension the type of a device function a tensor is
    given to fixes (`kernel.claims`), each once: what a call checks before the launch binds (`api/call.py`)."""
    return tuple(dict.fromkeys(_claimed(c) for c in kernel.claims))


def _claimed(c: ir.DimClaim) -> tuple[int, int, int]:
    return c.param, c.dim, c.size


def check(kernel: ir.Kernel, args: Sequence[Any], span: Span | None = None, fixed: Fixed | None = None) -> None:
    """Raise E0501 where argument `args[i]` (anything with a `shape`) has another size than the type of
    `kernel`'s parameter `i` fixes; `span` is the launch's (None: the parameter is the place). `fixed`:
    `fixed_dims(kernel)`, where the caller keeps it."""
    for i, d, n in fixed_dims(kernel) if fixed is None else fixed:
        shape = tuple(args[i].shape)
        if d < len(shape) and shape[d] == n:
            continue
        p = kernel.params[i]
        assert isinstance(p, ir.TensorParam)
        if p.mutable or p.dims[d] is None:
            raise TileError(_claim_diag(kernel, p, i, d, n, shape, span))
        declared = ", ".join("?" if x is None else str(x) for x in p.dims)
        got = shape[d] if d < len(shape) else "missing"
        diag = Diagnostic.error(
            DIM_MISMATCH,
            f"dimension {d} of `{p.name}` is {got} but kernel `{kernel.name}` expects {n}")
        if span is not None and span != DUMMY_SPAN:
            diag = diag.primary(span, f"`{p.name}` is a tensor of shape {list(shape)} here")
            if p.span != DUMMY_SPAN:
                diag = diag.secondary(p.span, f"`{p.name}` is `[{declared}]` in this instance")
        else:
            diag = diag.primary(p.span, f"`{p.name}` is `[{declared}]` in this instance, the tensor "
                                        f"{list(shape)}")
        raise TileError(diag.note(
            "the kernel's code takes a dimension its type fixes as a constant: a tensor of another "
            "size is refused before the launch").with_help(
            "pass a tensor of the declared shape, or declare the dimension `?`"))


def _claim_diag(kernel: ir.Kernel, p: ir.TensorParam, i: int, d: int, n: int, shape: tuple[int, ...],
                span: Span | None) -> Diagnostic:
    c = next(c for c in kernel.claims if _claimed(c) == (i, d, n))
    return claim_diagnostic(kernel, c, shape, span)


def claim_diagnostic(kernel: ir.Kernel, c: ir.DimClaim, shape: tuple[int, ...], span: Span | None) -> Diagnostic:
    """E0501 for a `?` dimension of a kernel's tensor that a device function's parameter type fixes at
    another size (hrev29: the declared size was accepted and ignored, the function's code ran on a tensor of
    another size); at the launch's `span` (the argument's, at check time), a -1 in `shape` unknown."""
    p = kernel.params[c.param]
    d, n = c.dim, c.size
    got = shape[d] if d < len(shape) else "missing"
    diag = Diagnostic.error(
        DIM_MISMATCH, f"dimension {d} of `{p.name}` is {got} but {c.owner} declares {n} for it")
    shown = ", ".join("?" if x < 0 else str(x) for x in shape)
    here = f"`{p.name}` is a tensor of shape [{shown}] here"
    diag = diag.primary(span, here) if span is not None and span != DUMMY_SPAN else diag.primary(c.arg, here)
    if c.arg != DUMMY_SPAN and (span is not None and span != DUMMY_SPAN):
        diag = diag.secondary(c.arg, f"`{p.name}` reaches {c.owner} here")
    if c.decl != DUMMY_SPAN:
        diag = diag.secondary(c.decl, c.label)
    return diag.note(
        "a size written in a type is checked: a tensor of another size is refused before the launch").with_help(
        f"pass a tensor whose dimension {d} is {n}, or declare it `?` {c.where} to take any size")
