"""`cuda_device_count`, the suite's one probe for a CUDA device, and
`nvdisasm_path`, its one probe for the SASS disassembler.

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


def nvdisasm_path() -> str | None:
    """nvdisasm on PATH or in the `nvidia` pip packages
    (`nvidia-cuda-nvdisasm`), or None."""
    import shutil
    from pathlib import Path

    found = shutil.which("nvdisasm")
    if found:
        return found
    try:
        import nvidia  # type: ignore[import-not-found]
    except ImportError:
        return None
    hits = [h for d in nvidia.__path__ for h in Path(d).glob("**/bin/nvdisasm")]
    return str(hits[0]) if hits else None
