"""The Python API: load a `.tile` file and call its kernels on the arrays you
already have, with Tile's checks still in force.

    import numpy as np
    import tilelang

    mod = tilelang.load("examples/add.tile")       # checked now; CompileError if not
    x = np.random.rand(4096).astype(np.float32)
    y = np.random.rand(4096).astype(np.float32)
    z = np.zeros_like(x)
    mod.add(tilelang.partition(z, [1024]), x, y).sync()   # z written in place
    h = mod.add(tilelang.partition(z, [1024]), x, y).launch()
    h.wait()                                       # z stays borrowed until here

`tilelang.load(path)` / `tilelang.compile(source)` return a `Module`; its
kernels (`Kernel`) and host functions (`HostFunction`) are attributes, and
`help(mod.add)` shows the Tile signature. A kernel call returns an
`Operation` (`.sync()`, `.launch()` -> `Handle.wait()`). NumPy arrays run on
the CPU interpreter in place; PyTorch and CuPy CUDA tensors run on the GPU
in place, on their library's current stream. See `module.py` for the rules
and `errors.py` for the exceptions (all `tilelang.TileError` subclasses).
The checker's warnings (W-codes) come as `tilelang.TileWarning`s, issued by
`load` / `compile` at the caller's line with the text `tilec check` prints.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilelang.api.engines import gpu_available, in_flight
from tilelang.api.errors import (
    APIError,
    BorrowError,
    CallError,
    CompileError,
    DeviceError,
    ExecutionError,
    TileWarning,
)
from tilelang.api.graphs import Graph, graph
from tilelang.api.hostfn import HostFunction
from tilelang.api.kernel import Kernel
from tilelang.api.module import Module
from tilelang.api.operation import Handle, Operation
from tilelang.api.partition import Partition, partition
from tilelang.api.torch_ops import torch_op
from tilelang.diagnostics.model import TileError
from tilelang.profiler import Profile, profile

if TYPE_CHECKING:
    from tilelang.runtime.trace import TraceSession


def block_trace(path: str | os.PathLike[str] | None = None) -> contextlib.AbstractContextManager[TraceSession]:
    """Record when every GPU block of the kernels launched in a `with` ran, and
    on which SM: `with tilelang.block_trace("out.json") as t: ...`, then
    `t.trace.summary()` (a table per launch) and, with `path`, a
    Chrome/Perfetto trace written there (`runtime/trace.py`; the same as
    `TILEC_TRACE=blocks`). Kernels compile with the stamps while it is on;
    on the CPU there are no blocks and the trace says so."""
    from tilelang.runtime import trace

    return trace.session(path)


def compile(source: str, *, name: str = "<string>", device: str = "cpu") -> Module:
    """Check Tile program text and return its module. `device` is where NumPy
    arrays and host functions run: "cpu" (the interpreter, in place), "gpu"
    (through copies) or "auto". CUDA tensors always run on the GPU."""
    if not isinstance(source, str):  # a caller without types
        from tilelang.api.errors import CallError
        from tilelang.diagnostics.codes import api as acodes

        help = ("decode it first: `source.decode()`" if isinstance(source, (bytes, bytearray))  # type: ignore[unreachable]
                else "to load a file, use `tilelang.load(path)`" if isinstance(source, os.PathLike)
                else "pass the program's text as a `str`, or load a file with `tilelang.load(path)`")
        raise CallError(f"`tilelang.compile` takes the program's text as a `str`, not a "
                        f"`{type(source).__name__}`", code=acodes.SOURCE_NOT_TEXT, help=help)
    if "\n" not in source.strip() and source.strip().endswith(".tile") and " " not in source.strip():
        from tilelang.api.errors import CallError
        from tilelang.diagnostics.codes import api as acodes

        raise CallError(f"`tilelang.compile` takes the program's text, and `{source.strip()}` is a file name",
                        code=acodes.SOURCE_NOT_TEXT, help=f"to load a file, use `tilelang.load({source.strip()!r})`")
    return _load(source, name, device)


def load(path: str | os.PathLike[str], *, device: str = "cpu") -> Module:
    """Check the `.tile` file at `path` (its `use` imports resolve next to it)
    and return its module; see `compile` for `device`."""
    from tilelang.source import read_error, read_source

    if isinstance(path, str) and "\n" in path.strip():  # the program's text, given for its path
        from tilelang.diagnostics.codes import api as acodes

        raise CompileError(f"`tilelang.load` takes a path, and this is a program's text "
                           f"({path.strip().count(chr(10)) + 1} lines, `{path.strip().splitlines()[0]}` ..)", [],
                           code=acodes.UNREADABLE_FILE,
                           help="to check text, use `tilelang.compile(source)`; `tilelang.load` reads a file")
    try:
        text = read_source(Path(path))
    except OSError as e:  # a missing file, no permission, not UTF-8: tilec's words
        from tilelang.diagnostics.codes import api as acodes

        raise CompileError(read_error(path, e), [],
                           code=acodes.UNREADABLE_FILE,
                           help="check the path (relative paths start at the current directory)") from None
    return _load(text, str(path), device)


def _prewarm_if_cuda() -> None:
    """A process that already uses CUDA through PyTorch will most likely call
    a kernel on the GPU next: start loading the GPU toolchain (llvmlite and
    the target machine of the current device's arch, the driver binding,
    nvJitLink) on a background thread while the program is checked."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_initialized():
            return
        major, minor = torch.cuda.get_device_capability()
    except Exception:  # a partial or odd torch: no hint
        return
    from tilelang.runtime.cuda_link import prewarm_toolchain, ptx_arch

    try:
        prewarm_toolchain(ptx_arch(major, minor))
    except ValueError:  # a `TILEC_PREWARM` or `TILEC_ARCH` it does not take: E0604 where the device opens
        pass


# A process's checked programs (`_load`), by the program's name and text (and
# the working directory, where a `<string>`'s or a relative name's `use
# "f.tile"` resolves): an engine builds a module of `std::llm` again for each
# plan, and checking it is most of a build. A hit shares the `Program`, ownership facts, AST and
# `SourceMap` with the modules made before; none of them is changed after the
# check (tests/api/test_load_memo.py compares them before and after a module
# runs kernels and host functions), each `Module` keeps its own kernels,
# plans and runtimes. A hit is used only while every file the program
# imported still has the text it was checked with; programs with errors are
# checked (and reported) again each time. The fifth element is the program's
# warnings, rendered: a hit warns again, as `tilec check` would.
_CHECKED: dict[tuple[str, str, str], tuple[Any, Any, Any, Any, tuple[TileWarning, ...]]] = {}
_CHECKED_LIMIT = 64


def _imports_unchanged(program: Any, sources: Any) -> bool:
    """Whether each module `program` imported still reads as it was checked."""
    from tilelang.source import read_source

    for qual, info in program.modules.items():
        if not qual:
            continue  # the root: its text is the key
        try:
            if read_source(Path(info.path)) != sources.get(info.ast.span.file).text:
                return False
        except (OSError, ValueError):
            return False
    return True


def _check(text: str, name: str) -> tuple[Any, Any, Any, Any, tuple[TileWarning, ...]]:
    """(program, ownership facts, AST, sources, warnings) of the checked
    text; a `CompileError` if it has errors. Once a process while the text
    and its imports are unchanged (`_CHECKED`)."""
    from tilelang import driver
    from tilelang.diagnostics import render
    from tilelang.source import SourceMap

    key = (name, text, os.getcwd())
    hit = _CHECKED.get(key)
    if hit is not None and _imports_unchanged(hit[0], hit[3]):
        return hit
    sources = SourceMap()
    sf = sources.add(name, text)
    result = driver.compile(sf, until="checked", sources=sources)
    if not result.ok:
        diags = list(result.diagnostics)
        report = render.render(diags, result.sources, "human", color=False).rstrip()
        raise CompileError(report, diags)
    checked = result.output
    found = tuple(
        TileWarning(render.render([d], result.sources, "human", color=False, footer=False).rstrip(), d)
        for d in result.diagnostics if d.severity.value == "warning"
    )
    entry = (checked.program, checked.ownership, result.context.outputs["ast"], result.sources, found)
    if len(_CHECKED) >= _CHECKED_LIMIT:
        _CHECKED.pop(next(iter(_CHECKED)))  # the oldest
    _CHECKED[key] = entry
    return entry


def _load(text: str, name: str, device: str) -> Module:
    from tilelang.runtime.cuda_link import compile_started

    compile_started()  # background imports now leave the interpreter to this thread
    _prewarm_if_cuda()
    from tilelang.api.engines import _resolve_device

    dev = _resolve_device(device)
    program, ownership, root, sources, found = _check(text, name)
    for w in found:  # the caller of `tilelang.load` / `compile` is 3 frames up: _load, load, the caller
        warnings.warn(w, stacklevel=3)
    stem = Path(name).stem if name != "<string>" else name
    return Module(stem, program, ownership, root, sources, dev)


__all__ = [
    "APIError",
    "BorrowError",
    "CallError",
    "CompileError",
    "DeviceError",
    "ExecutionError",
    "TileWarning",
    "Graph",
    "Handle",
    "HostFunction",
    "Kernel",
    "Module",
    "Operation",
    "Partition",
    "Profile",
    "TileError",
    "block_trace",
    "compile",
    "gpu_available",
    "graph",
    "in_flight",
    "load",
    "partition",
    "profile",
    "torch_op",
]
