"""The CUDA toolchain around the runtime: PTX -> cubin with nvJitLink, the
arch it links for, and the background work that readies a first launch:
the toolchain prewarm (the first launch's modules, llvmlite, the driver
binding) and, once a CUDA context exists, the warm-up of the PTX -> cubin
routes (the driver's JIT, nvJitLink). Like `runtime/cuda.py`,
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
        from tilelang.env_switch import SwitchError
        from tilelang.backend.target import SUPPORTED_ARCHS

        if forced not in SUPPORTED_ARCHS:  # (was taken, and every kernel's compile failed: "turn PDL off")
            raise SwitchError("TILEC_ARCH", forced, ", ".join(SUPPORTED_ARCHS[:-1]) + f" or {SUPPORTED_ARCHS[-1]}")
        runs = [a for a in SUPPORTED_ARCHS if int(a[3:5]) <= 10 * major + minor and (a[-1] != "a" or
                                                                                      int(a[3:5]) == 10 * major + minor)]
        if forced not in runs:  # code this card cannot run: the driver's refusal read as tilec's bug (an ICE)
            raise SwitchError("TILEC_ARCH", forced, f"an architecture this GPU (compute capability {major}.{minor}) "
                                                    f"runs: {', '.join(runs)}")
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
# and LLVM text, then the launch path. "module:function" also calls a
# one-time initialiser of that module (cached there), e.g. the parser's
# tables or the launch guards' self-test of the imported PyTorch.
FIRST_LAUNCH_MODULES = (
    "tilelang.api",
    "tilelang.driver",
    "tilelang.diagnostics.render",
    "tilelang.syntax.parser:_tables",
    "tilelang.sema.check",
    "tilelang.sema.lints",
    "tilelang.ownership",
    "tilelang.runtime.host",
    "tilelang.runtime.cpu",
    "tilelang.run",
    "tilelang.ir.lower",
    "tilelang.ir.printer",
    "tilelang.backend.gpu.passes",
    "tilelang.backend.llvm",
    "tilelang.runtime.cuda",
    "tilelang.runtime.cache:hash_step_code",
    "tilelang.api.fastpath:_guard_class",
)

_PREWARM_LOCK = threading.Lock()
_PREWARM_STARTED = False
_PREWARM_ARCHS: set[str] = set()
# Set by the first `tilelang.compile`/`load` (`compile_started`): from then on
# the main thread runs Python of its own, and a background import would
# compete with it for the interpreter (imports run under the GIL).
_COMPILING = threading.Event()


def compile_started() -> None:
    """Note that the program has begun compiling Tile code (see `_COMPILING`)."""
    _COMPILING.set()


def prewarm_toolchain(arch: str | None = None) -> None:
    """Start, once per process, a background thread that imports the modules
    of a first launch (`FIRST_LAUNCH_MODULES`), imports llvmlite and
    initialises its targets (the target machine of `arch` too, when known),
    loads the driver binding and, while no compilation has started yet,
    nvJitLink: most of a cold first launch is waiting for these. Started by
    `import tilelang` after a CUDA build of PyTorch, by `tilelang.compile` when
    PyTorch has initialised CUDA (`api._prewarm_if_cuda`, with the device's
    arch) and by `CudaDevice`; a later call with an arch not yet warmed builds
    that target machine on a thread of its own. `TILEC_PREWARM=0`: never."""
    global _PREWARM_STARTED
    if not prewarm_enabled():
        return
    with _PREWARM_LOCK:
        first = not _PREWARM_STARTED
        _PREWARM_STARTED = True
        new_arch = arch is not None and arch not in _PREWARM_ARCHS
        if arch is not None:
            _PREWARM_ARCHS.add(arch)
    if first:
        threading.Thread(target=_prewarm, args=(arch,), daemon=True, name="tilec-prewarm").start()
    elif new_arch:
        threading.Thread(target=_prewarm_target, args=(arch,), daemon=True, name="tilec-prewarm-target").start()


def _prewarm_target(arch: str | None) -> None:
    try:
        from tilelang.backend.target import Target, prewarm

        prewarm(Target(arch) if arch else None)
    except Exception:  # an optimisation only: the first compile will report real problems
        pass


def _prewarm(arch: str | None) -> None:
    import importlib

    for entry in FIRST_LAUNCH_MODULES:
        name, _, init = entry.partition(":")
        try:
            module = importlib.import_module(name)
            if init:
                getattr(module, init)()
        except Exception:  # the launch that needs it reports the problem
            continue
    _prewarm_target(arch)
    try:  # the driver binding, which the device imports first
        from tilelang.runtime.cuda_driver import _driver

        _driver()
    except Exception:
        pass
    if not _COMPILING.is_set():
        # nvJitLink's module imports cuda.pathfinder (~0.05 s of Python on the
        # H200's host): once the program compiles, the device's warm-up thread
        # loads it instead, while the main thread waits for LLVM (no GIL).
        _load_nvjitlink()


def _load_nvjitlink() -> None:
    try:  # nvJitLink: its module and shared library load on first use
        from cuda.bindings import nvjitlink

        nvjitlink.version()
    except Exception:
        pass


# The smallest kernel the driver's PTX JIT compiles: enough to load and start
# the JIT compiler (libnvidia-ptxjitcompiler) that a first warp-specialised
# kernel needs (`nvjitlink_keeps`).
_WARM_PTX = ".version 8.0\n.target {arch}\n.address_size 64\n.visible .entry tile_jit_warmup()\n{{\n\tret;\n}}\n"
_JIT_WARM_LOCK = threading.Lock()
_JIT_THREADS: list[threading.Thread] = []  # the warm-up thread, once started (tests join it)
JIT_WARMUP: list[str] = []  # what the warm-up did ("ok", or why not)


def prewarm_enabled() -> bool:
    """`TILEC_PREWARM`: 1 (unset) or 0 (never load the toolchain ahead); another value is E0604 (`SwitchError`,
    where a device opens: `CudaDevice`; the prewarms of `import tilelang` and `tilelang.load` leave it to that)."""
    from tilelang.env_switch import flag

    return flag("TILEC_PREWARM", "1")


def prewarm_routes(ctx: object, arch: str) -> None:
    """Start, once per process, a background thread that readies both
    PTX -> cubin routes of the runtime in CUDA context `ctx` (a `CUcontext`),
    while the first kernel is lowered and put through LLVM:
    - the driver's JIT, which compiles warp-specialised kernels
      (`nvjitlink_keeps`): a trivial kernel for `arch` through its linker
      (cuLink*: nothing is loaded into the context, the driver's compute cache
      is left alone) loads and starts the JIT compiler, which on the H200's
      host made a first JIT ~0.06 s slower than later ones (0.175 against
      0.113 s for the 128x256x64 GEMM);
    - then nvJitLink (for every other kernel), unless the toolchain prewarm
      loaded it already.
    Called by `CudaDevice` when it opens its context. `TILEC_PREWARM=0`:
    never. An optimisation only: it never raises, and a failure leaves the
    first launch as it was (a `TILEC_PREWARM` it does not take is E0604, `prewarm_enabled`)."""
    if not prewarm_enabled():
        return
    with _JIT_WARM_LOCK:
        if _JIT_THREADS:
            return
        t = threading.Thread(target=_warm_routes, args=(ctx, arch), daemon=True, name="tilec-jit-warmup")
        _JIT_THREADS.append(t)
    t.start()


def _warm_routes(ctx: object, arch: str) -> None:
    JIT_WARMUP.append(_warm_driver_jit(ctx, arch))
    _load_nvjitlink()


def _warm_driver_jit(ctx: object, arch: str) -> str:
    try:
        from tilelang.runtime.cuda_driver import _driver

        d = _driver()
        ok = d.CUresult.CUDA_SUCCESS
        if d.cuCtxSetCurrent(ctx)[0] != ok:  # this thread's current context only
            return "no context"
        err, state = d.cuLinkCreate(0, [], [])
        if err != ok:
            return f"cuLinkCreate: {err}"
        try:
            data = _WARM_PTX.format(arch=arch).encode() + b"\0"
            err = d.cuLinkAddData(state, d.CUjitInputType.CU_JIT_INPUT_PTX, data, len(data), b"warm.ptx",
                                  0, [], [])[0]
            if err == ok:
                err = d.cuLinkComplete(state)[0]
            return "ok" if err == ok else f"JIT: {err}"
        finally:
            d.cuLinkDestroy(state)
    except Exception as e:  # the first launch reports real problems
        return f"{type(e).__name__}: {e}"
