"""`CpuDevice`: the reference engine, tensors in NumPy arrays and kernels run
by helper F1's NumPy interpreter (`tilelang.interp.run_kernel`).

Every launch runs to completion inside `run`, so streams, events and handles
are trivially satisfied; `.launch()` still returns a handle and the ownership
rules are those of the GPU (the checker does not know which engine runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tilelang.dtypes import DType
from tilelang.runtime.device import Device
from tilelang.source import Span


class CpuDevice(Device):
    name = "cpu"
    kind = "cpu"

    def __init__(self, out: Callable[[str], None] | None = None, sanitizer: Any = None) -> None:
        self.launches = 0  # how many kernel launches ran (tests read it)
        self.out = out  # where device `print` goes (None: stdout)
        # interp/sanitize.py's Sanitizer: runs each launch block by block and
        # reports races and bad accesses (`tilec run --sanitize`)
        self.sanitizer = sanitizer
        # why `--device auto` runs here though a driver is installed (the GPU could not be opened), for the
        # note `run.fell_back` writes; None otherwise
        self.fallback_reason: str | None = None

    # -- memory ---------------------------------------------------------------
    def upload(self, host: np.ndarray, dtype: DType | None = None) -> np.ndarray:
        return np.ascontiguousarray(host).reshape(np.shape(host))  # a 0-D array stays 0-D

    def download(self, buffer: np.ndarray, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
        return buffer

    def write(self, buffer: np.ndarray, host: np.ndarray) -> None:
        buffer[...] = host

    # -- kernels --------------------------------------------------------------
    def prepare(self, kernel_ir: Any) -> Any:
        return kernel_ir

    def run(self, prepared: Any, grid: tuple[int, ...], args: list[Any],
            stream: Any = None, span: Span | None = None) -> None:
        from tilelang.interp import run_kernel
        from tilelang.ir import arg_dims

        arg_dims.check(prepared, args, span)  # (E0501 at the launch: every path bound it before)
        self.launches += 1
        if self.sanitizer is not None:
            self.sanitizer.run_kernel(prepared, grid, args, out=self.out, launch=span)
            return
        run_kernel(prepared, grid, args, out=self.out)
