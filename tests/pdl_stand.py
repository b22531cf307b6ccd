"""Stand-ins for the runtime's PDL bookkeeping (`runtime/cuda_pdl.early_names`
reads a launch's tensors as CudaBuffers: `ptr`, `shape`, `np_dtype`), shared by
the PDL tests of tests/backend, tests/soundness and tests/llm."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np


def buf(ptr: int, n: int) -> SimpleNamespace:
    """A stand-in for a CudaBuffer: `n` f32 values at `ptr`."""
    return SimpleNamespace(ptr=ptr, shape=(n,), np_dtype=np.dtype(np.float32))


def of_array(a: Any) -> SimpleNamespace:
    """A stand-in for the CudaBuffer holding NumPy array `a` (a view keeps its
    base's addresses, so views of one buffer overlap as on the device)."""
    a = np.asarray(a)
    return SimpleNamespace(ptr=a.__array_interface__["data"][0], shape=tuple(a.shape), np_dtype=a.dtype)


def kernel(*params: tuple[str, bool], early_trigger: bool = False) -> SimpleNamespace:
    """A stand-in for a kernel's Tile IR: f32 vector parameters (name, `&mut`),
    `pdl_early` when it triggers the next launch before its wait."""
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir

    return SimpleNamespace(params=[ir.TensorParam(n, DType.F32, 1, m) for n, m in params], pdl_early=early_trigger)
