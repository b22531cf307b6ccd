"""The CUDA toolchain around the runtime: PTX -> cubin with nvJitLink, the
arch it links for, and the background prewarm that imports llvmlite and
loads nvJitLink before a first launch needs them. Like `runtime/cuda.py`,
it imports cuda-python only inside functions (importing it on a machine
without CUDA costs nothing); `runtime/cuda.py` re-exports its names.
"""

from __future__ import annotations

import re
import threading


def link_arch(ptx: str, device_arch: str) -> str:
    """nvJitLink's `-arch` for `ptx` on a device of `device_arch` (`sm_90`): the
    PTX's own target when it is this device's arch-specific variant (wgmma
    kernels are `.target sm_90a`, which links only as sm_90a; as sm_90 the link
    fails and the driver would JIT the PTX on every cold start), else the
    device's (older PTX links forward)."""
    m = re.search(r"^\s*\.target\s+(sm_\d+)([a-z]?)\b", ptx, re.M)
    if m is not None and m[2] and m[1] == device_arch:
        return m[1] + m[2]
    return device_arch


def _nvjitlink_cubin(ptx: str, arch: str) -> bytes | None:
    """PTX -> cubin in process (so the cubin can be cached on disk); None if unavailable."""
    try:
        from cuda.bindings import nvjitlink as nj
    except Exception:
        return None
    try:
        h = nj.create(2, [f"-arch={arch}", "-O3"])
    except Exception:
        return None
    try:
        data = ptx.encode()
        nj.add_data(h, nj.InputType.PTX, data, len(data), "kernel.ptx")
        nj.complete(h)
        cubin = bytearray(nj.get_linked_cubin_size(h))
        nj.get_linked_cubin(h, cubin)
        return bytes(cubin)
    except Exception:
        return None
    finally:
        try:
            nj.destroy(h)
        except Exception:
            pass


_PREWARM_STARTED = False


def prewarm_toolchain(arch: str | None = None) -> None:
    """Start, once per process, a background thread that imports llvmlite,
    initialises its targets (the machine for `arch`, else the default one) and
    loads nvJitLink: most of a cold first launch is waiting for these. Called
    by `CudaDevice` and, earlier, by `tilelang.compile` when the process
    already uses CUDA (`api._prewarm_if_cuda`)."""
    global _PREWARM_STARTED
    if _PREWARM_STARTED:
        return
    _PREWARM_STARTED = True
    threading.Thread(target=_prewarm, args=(arch,), daemon=True).start()


def _prewarm(arch: str | None) -> None:
    try:
        from tilelang.backend.target import Target, prewarm

        prewarm(Target(arch) if arch else None)
    except Exception:  # an optimisation only: the first compile will report real problems
        pass
    try:  # and nvJitLink: its module and shared library load on first use
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except Exception:
        pass
