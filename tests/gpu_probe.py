"""`cuda_device_count`, the suite's one probe for a CUDA device.

A module with its own name, not part of `conftest.py`: a directory's own
`conftest.py` (tests/llm/) would shadow the root one for a test that wrote
`from conftest import ...`, so tests import the probe from here.
"""

from __future__ import annotations

import functools
import os


@functools.cache
def cuda_device_count() -> int:
    """The number of CUDA devices cuda-python sees; 0 when there is no driver,
    no device, or no cuda-python (never raises)."""
    if os.environ.get("TILE_NO_GPU"):
        return 0
    try:
        from cuda.bindings import driver as cu
    except Exception:
        try:
            from cuda import cuda as cu  # type: ignore[no-redef]  # cuda-python < 12.6
        except Exception:
            return 0
    try:
        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return 0
        err, count = cu.cuDeviceGetCount()
        return int(count) if err == cu.CUresult.CUDA_SUCCESS else 0
    except Exception:
        return 0
