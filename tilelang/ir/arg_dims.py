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
    """(argument index, dimension, size) of every dimension a `&Tensor` parameter's type fixes. A `&mut`
    parameter's are its tile's (the launch passes the whole tensor), a `?` is the launch's: neither is here."""
    return tuple((i, d, int(n)) for i, p in enumerate(kernel.params)
                 if isinstance(p, ir.TensorParam) and not p.mutable
                 for d, n in enumerate(p.dims) if n is not None)


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
