"""The CUDA toolchain around the runtime: PTX -> cubin with nvJitLink, the
arch it links for, and the background prewarm that imports llvmlite and
loads nvJitLink before a first launch needs them. Like `runtime/cuda.py`,
it imports cuda-python only inside functions (importing it on a machine
without CUDA costs nothing); `runtime/cuda.py` re-exports its names.
"""

from __future__ import annotations

import os
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


def ptx_arch(major: int, minor: int) -> str:
    """The PTX target for a device of compute capability `major.minor`: PTX
    built for sm_80 runs everywhere from Ampere on (the driver JITs it); on
    Hopper we target sm_90 directly, and CC 9.0 exactly (H100/H200) gets
    sm_90a: wgmma and setmaxnreg exist only there. `TILEC_ARCH` picks another
    (older) target, e.g. to measure the sm_80 path."""
    forced = os.environ.get("TILEC_ARCH")
    if forced:
        return forced
    if (major, minor) == (9, 0):
        return "sm_90a"
    return "sm_90" if major >= 9 else "sm_80"


def nvjitlink_keeps(ptx: str) -> bool:
    """Whether nvJitLink compiles `ptx` as well as a whole-program compile does.
    nvJitLink runs ptxas on each input as a separate compilation unit (like
    `ptxas -c`), where `setmaxnreg` is ignored (C7504): a warp-specialised
    kernel then keeps one register budget for every warp, and the attention
    kernel spills (208 bytes of stack) and serialises its wgmma (C7509).
    Such PTX goes to the driver JIT, which compiles it whole."""
    return "setmaxnreg" not in ptx


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


# What a first kernel launch from Python imports after `import tilelang`, in
# the order it needs them: checking the program, lowering the kernel, GPU IR
# and LLVM text, then the launch path.
FIRST_LAUNCH_MODULES = (
    "tilelang.api",
    "tilelang.driver",
    "tilelang.syntax.parser",
    "tilelang.sema.check",
    "tilelang.ownership",
    "tilelang.ir.lower",
    "tilelang.ir.printer",
    "tilelang.backend.gpu.passes",
    "tilelang.backend.llvm",
    "tilelang.runtime.cuda",
    "tilelang.api.fastpath",
)

_PREWARM_LOCK = threading.Lock()
_PREWARM_STARTED = False
_PREWARM_ARCHS: set[str] = set()


def prewarm_toolchain(arch: str | None = None) -> None:
    """Start, once per process, a background thread that imports the modules
    of a first launch (`FIRST_LAUNCH_MODULES`), imports llvmlite and
    initialises its targets (the target machine of `arch` too, when known),
    and loads the driver binding and nvJitLink: most of a cold first launch
    is waiting for these. Started by `import tilelang` after a CUDA build of
    PyTorch, by `tilelang.compile` when PyTorch has initialised CUDA
    (`api._prewarm_if_cuda`, with the device's arch) and by `CudaDevice`; a
    later call with an arch not yet warmed builds that target machine on a
    thread of its own. `TILEC_PREWARM=0`: never."""
    global _PREWARM_STARTED
    if os.environ.get("TILEC_PREWARM") == "0":
        return
    with _PREWARM_LOCK:
        first = not _PREWARM_STARTED
        _PREWARM_STARTED = True
        new_arch = arch is not None and arch not in _PREWARM_ARCHS
        if arch is not None:
            _PREWARM_ARCHS.add(arch)
    if first:
        threading.Thread(target=_prewarm, args=(arch,), daemon=True).start()
    elif new_arch:
        threading.Thread(target=_prewarm_target, args=(arch,), daemon=True).start()


def _prewarm_target(arch: str | None) -> None:
    try:
        from tilelang.backend.target import Target, prewarm

        prewarm(Target(arch) if arch else None)
    except Exception:  # an optimisation only: the first compile will report real problems
        pass


def _prewarm(arch: str | None) -> None:
    import importlib

    for name in FIRST_LAUNCH_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # the launch that needs it reports the problem
            break
    _prewarm_target(arch)
    try:  # the driver binding (and cuda.pathfinder under it), which the device imports first
        from tilelang.runtime.cuda_driver import _driver

        _driver()
    except Exception:
        pass
    try:  # and nvJitLink: its module and shared library load on first use
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except Exception:
        pass
