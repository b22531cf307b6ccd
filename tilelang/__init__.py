"""Tile: a language and toolchain for GPU kernels that cannot race.

The Python API (`tilelang/api/`) is reachable from here without importing
it eagerly (`import tilelang` stays cheap for `tilec --help`):

    mod = tilelang.load("examples/add.tile")
    mod.add(tilelang.partition(z, [1024]), x, y).sync()

`tilelang.testing` compares kernels across the interpreter and the GPU.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# Names of `tilelang.api` offered at the top level, imported on first use.
_API = frozenset(
    {
        "load",
        "compile",
        "partition",
        "Module",
        "Kernel",
        "HostFunction",
        "Operation",
        "Handle",
        "Partition",
        "TileError",
        "APIError",
        "CompileError",
        "DeviceError",
        "CallError",
        "BorrowError",
        "ExecutionError",
        "TileWarning",
        "gpu_available",
        "in_flight",
        "graph",
        "Graph",
        "profile",
        "block_trace",
        "torch_op",
    }
)


def __getattr__(name: str) -> Any:
    if name in _API:
        from tilelang import api

        value = getattr(api, name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value
    raise AttributeError(f"module 'tilelang' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})


def _prewarm_if_torch_cuda() -> None:
    """A process that imported a CUDA build of PyTorch before Tile will most
    likely launch a kernel on the GPU: load the GPU toolchain (the modules of
    a first launch, llvmlite, the driver binding, nvJitLink) on a background
    thread from now on, while the program sets PyTorch up. Reading modules is
    mostly waiting for files, which another thread's Python does not block.
    `TILEC_PREWARM=0` turns it off; `tilec` (no PyTorch) never starts it."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not getattr(getattr(torch, "version", None), "cuda", None):
        return
    from tilelang.runtime.cuda_link import prewarm_toolchain

    try:
        prewarm_toolchain()
    except ValueError:  # a `TILEC_PREWARM` it does not take: E0604 where a device opens, not at the import
        pass


_prewarm_if_torch_cuda()
