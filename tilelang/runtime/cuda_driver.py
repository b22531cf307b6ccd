"""The CUDA driver as the runtime calls it (cuda-python's `cuda.bindings`,
imported lazily): checked calls that turn a failing `CUresult` into a
located `TileError` (E0610), the C types of kernel parameters and their
packing into `void* params[]`, raw handle values, and `cuLaunchKernel`
through ctypes. `cuda.py` (devices, memory, modules, graphs) and
`cuda_fast.py` (the Python API's launcher) build on it; it imports neither.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np

from tilelang.diagnostics.codes.codegen import CUDA_ERROR
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.env_switch import flag, mode
from tilelang.source import Span


# ---------------------------------------------------------------- driver access
@functools.cache
def _driver():  # type: ignore[no-untyped-def]
    from cuda.bindings import driver

    return driver


def _error_name(err: Any) -> str:
    d = _driver()
    try:
        _, name = d.cuGetErrorName(err)
        _, desc = d.cuGetErrorString(err)
        return f"{name.decode() if name else err}: {desc.decode() if desc else ''}".rstrip(": ")
    except Exception:  # the error path must not raise on its own (no libcuda: the enum's own name)
        return str(getattr(err, "name", err))


# ---------------------------------------------------------------- is there a GPU
def is_available() -> bool:
    """True when the CUDA driver loads and at least one device exists. Never raises."""
    return why_unavailable() is None


# The oldest driver whose CUDA runs tilec's kernels: PTX ISA 8.0 (`Target.ptx_version`) and sm_90a came with 12.0.
MIN_DRIVER_CUDA = 12000


@functools.cache
def why_unavailable() -> str | None:
    """Why the GPU cannot be used, in words (None: it can): cuda-python missing, no driver (libcuda.so.1 not
    found), a driver that fails to start or finds no GPU, or one too old for tilec's PTX. Never raises; asked
    once a process (the answer does not change while it runs)."""
    try:
        d = _driver()
    except ImportError:
        return "cuda-python is not installed (`pip install cuda-python`)"
    except Exception as e:  # (a broken install)
        return f"cuda-python could not be loaded ({type(e).__name__}: {e})"
    try:
        (err,) = d.cuInit(0)
    except Exception:  # libcuda.so.1 not found (cuda.pathfinder's DynamicLibNotFoundError, an OSError)
        return "no NVIDIA driver is installed (libcuda.so.1 could not be loaded)"
    try:
        if err == d.CUresult.CUDA_ERROR_NO_DEVICE:
            return "the NVIDIA driver found no GPU (CUDA_ERROR_NO_DEVICE)"
        if err != d.CUresult.CUDA_SUCCESS:
            return f"the NVIDIA driver failed to start ({_error_name(err)})"
        err, version = d.cuDriverGetVersion()
        if err == d.CUresult.CUDA_SUCCESS and 0 < int(version) < MIN_DRIVER_CUDA:
            v = int(version)
            return (f"the NVIDIA driver runs CUDA {v // 1000}.{v % 1000 // 10}, older than the CUDA "
                    f"{MIN_DRIVER_CUDA // 1000}.0 tilec's kernels need: update the driver")
        err, count = d.cuDeviceGetCount()
        if err != d.CUresult.CUDA_SUCCESS or int(count) == 0:
            return "the NVIDIA driver found no GPU"
    except Exception as e:  # never raise: a binding that cannot make these calls cannot run kernels either
        return f"the CUDA driver could not be queried ({type(e).__name__}: {e})"
    return None


# ---------------------------------------------------------------- kernel faults
# A kernel that faults on the GPU is reported by whichever driver call comes next (the stream's sync, a copy, the
# next launch), with the fault's code, and the context is then unusable: CUDA's "sticky" errors. Such a code is
# reported as a kernel's failure (what happened, and what to do: `FAULTS`), never as the failure of the call that
# met it; the launch layer names the kernel and its launch (`launch.Operation.sync`, `Handle.wait`: `in_kernel`),
# and every later error of the process says that the context was lost by the first (`LOST`), instead of a new
# unrelated "CUDA error in cuMemAlloc" a call.
_BUG = ("safe Tile kernels compute only what the interpreter does: run the program with `--device cpu` "
        "(and `--sanitize` where a kernel has `unsafe` code), and report this with the program and "
        "`tilec emit --stage ptx` of the kernel if it runs there")
FAULTS: dict[str, tuple[str, str]] = {  # CUresult name -> (what happened, help)
    "CUDA_ERROR_ILLEGAL_ADDRESS": (
        "it accessed memory outside every allocation",
        "safe Tile kernels never touch memory outside their tensors: unless the kernel writes through `unsafe` "
        "code (run it with `--device cpu --sanitize` to find the access), this is a bug in tilec; please report "
        "it with the program"),
    "CUDA_ERROR_LAUNCH_TIMEOUT": (
        "it ran longer than the display driver's watchdog allows",
        "make each launch shorter (smaller grids or fewer loop iterations a block), or run on a GPU that drives "
        "no display"),
    "CUDA_ERROR_MISALIGNED_ADDRESS": ("it accessed memory at a misaligned address", _BUG),
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": ("it executed an illegal instruction", _BUG),
    "CUDA_ERROR_INVALID_ADDRESS_SPACE": ("it accessed an address in the wrong memory space", _BUG),
    "CUDA_ERROR_INVALID_PC": ("its program counter left the kernel's code", _BUG),
    "CUDA_ERROR_HARDWARE_STACK_ERROR": ("its call stack overflowed or was corrupted", _BUG),
    "CUDA_ERROR_ASSERT": ("a device-side trap stopped it", _BUG),
    "CUDA_ERROR_LAUNCH_FAILED": ("it failed while running (the driver says no more)", _BUG),
    "CUDA_ERROR_ECC_UNCORRECTABLE": (
        "the GPU's memory reported an uncorrectable ECC error",
        "a hardware error, not the program's: run it again, and check the card (`nvidia-smi -q -d ECC`)"),
}
# The helps of errors that are the machine's or the program's size, not a bug (the rest ask for a report)
HELPS: dict[str, str] = {
    "CUDA_ERROR_OUT_OF_MEMORY": "the GPU's memory is full: use smaller tensors, or run on the CPU with `--device cpu`",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": (
        "a block of this kernel needs more registers or shared memory than the GPU gives one: fewer warps "
        "(`#[hints(num_warps = 4)]`) or smaller tiles"),
    "CUDA_ERROR_DEVICE_UNAVAILABLE": (
        "the GPU is busy or in exclusive-process mode and another process holds it (`nvidia-smi` shows which): "
        "wait for it, or run on the CPU with `--device cpu`"),
}
LOST_NOTE = "the GPU's context is lost after such an error: no later GPU work of this process can run"
# The first fault of the process, (the CUresult's name, where it was met); later errors refer to it.
LOST: list[tuple[str, str]] = []


def driver_error(err: Any, what: str, span: Span | None = None, detail: str = "") -> TileError:
    """The `TileError` (E0610) of CUresult `err`, met by `what` (a driver call or an action in words): a kernel
    fault says so (`FAULTS`), a call after one says the context was lost; else the driver's words, with a help."""
    name = str(getattr(err, "name", err))
    text = _error_name(err) + (f"\n{detail}" if detail else "")
    fault = FAULTS.get(name)
    if fault is not None:
        first = not LOST
        if first:
            LOST.append((name, what))
        happened, help = fault
        e = cuda_error_message(f"a kernel failed on the GPU: {happened} ({name})", span, help)
        e.diagnostics = (e.diagnostics[0].note(f"reported by `{what}`").note(LOST_NOTE),)
        e.cuda_fault = name  # type: ignore[attr-defined]  # for `in_kernel`
        if not first:  # the same fault met again by a later call: the context is still lost
            return lost_error(what, span)
        return e
    if LOST:
        return lost_error(what, span, text)
    help = HELPS.get(name) or (f"the CUDA driver refused `{what}`: run with `--device cpu` to check the program "
                               "on the interpreter, and report the error with the program if the interpreter runs it")
    e = cuda_error(what, text, span, help)
    e.cuda_name = name  # type: ignore[attr-defined]  # (`cuda_memory.BufferPool.alloc` reads it)
    return e


def lost_error(what: str, span: Span | None = None, text: str = "") -> TileError:
    """A driver error after a kernel fault: the context was lost by that fault (`LOST`), not by this call."""
    name, where = LOST[0]
    diag = Diagnostic.error(CUDA_ERROR, f"the GPU cannot run `{what}`: an earlier kernel failed ({name}) and "
                                        "the GPU's context is lost")
    if span is not None:
        diag = diag.primary(span, "needs the GPU, after the failure")
    if text and not text.startswith(name):
        diag = diag.note(f"the driver said: {text.splitlines()[0]}")
    diag = diag.note(f"the first error, met by `{where}`, was reported above").with_help(
        "fix or avoid the failing kernel and run the program again: a CUDA context does not recover from a "
        "kernel fault")
    e = TileError(diag)
    e.cuda_fault = name  # type: ignore[attr-defined]
    return e


def cuda_error_message(message: str, span: Span | None, help: str) -> TileError:
    diag = Diagnostic.error(CUDA_ERROR, message)
    if span is not None:
        diag = diag.primary(span, "while running this operation on the GPU")
    return TileError(diag.with_help(help))


def in_kernel(err: TileError, kernel: str, span: Span, label: str = "") -> TileError:
    """`err` as the failure of kernel `kernel` launched at `span`, where it is the first kernel fault the stream's
    wait met (`driver_error`): named, and located at the launch (`label`: the span's words, if not "this launch
    of `kernel` failed"; the Python API's span is the kernel's declaration); any other error unchanged."""
    if getattr(err, "cuda_fault", None) is None or not err.diagnostics or \
            not err.diagnostics[0].message.startswith("a kernel failed on the GPU"):
        return err
    d = err.diagnostics[0]
    d = dataclasses.replace(d, message=d.message.replace("a kernel failed", f"kernel `{kernel}` failed", 1),
                            labels=())
    out = TileError(d.primary(span, label or f"this launch of `{kernel}` failed"), *err.diagnostics[1:])
    out.cuda_fault = err.cuda_fault  # type: ignore[attr-defined]
    return out


def cuda_error(
    what: str, detail: str, span: Span | None = None, help: str | None = None
) -> TileError:
    diag = Diagnostic.error(CUDA_ERROR, f"CUDA error in {what}: {detail}")
    if span is not None:
        diag = diag.primary(span, "while running this operation on the GPU")
    if help:
        diag = diag.with_help(help)
    return TileError(diag)


def _check(result: Any, what: str, span: Span | None = None) -> Any:
    """cuda.bindings calls return `(CUresult, *values)`; raise a TileError on failure."""
    d = _driver()
    err, *vals = result if isinstance(result, tuple) else (result,)
    if isinstance(err, d.CUresult) and err != d.CUresult.CUDA_SUCCESS:
        raise driver_error(err, what, span)
    if not vals:
        return None
    return vals[0] if len(vals) == 1 else tuple(vals)


# ctypes for each scalar kind a kernel parameter can have
CTYPES: dict[str, Any] = {
    "ptr": ctypes.c_uint64,
    "i64": ctypes.c_int64,
    "u64": ctypes.c_uint64,
    "i32": ctypes.c_int32,
    "u32": ctypes.c_uint32,
    "i16": ctypes.c_int16,
    "u16": ctypes.c_uint16,
    "i8": ctypes.c_int8,
    "u8": ctypes.c_uint8,
    "bool": ctypes.c_uint8,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "f16": ctypes.c_uint16,
    "bf16": ctypes.c_uint16,
}


@contextlib.contextmanager
def relaxed_capture(d: Any) -> Iterator[None]:
    """The calling thread in CUDA's relaxed stream-capture mode for the block, put back after. In the default
    global mode a "potentially unsafe" call (`cuMemAlloc`, a module load, which allocates the module's
    globals) made while any stream of the process is being captured invalidates that capture: the next
    captured launch fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, far from the call. A buffer or a module
    made during a capture (a launch captured by `torch.cuda.graph` whose counters or variant were not made
    yet) is not part of the graph, so the relaxed mode is right for them; outside a capture it changes
    nothing. Drivers without the call (the tests' stubs) run the block as it is."""
    exchange = getattr(d, "cuThreadExchangeStreamCaptureMode", None)
    if exchange is None:
        yield
        return
    old = _check(exchange(d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED), "cuThreadExchangeStreamCaptureMode")
    try:
        yield
    finally:
        exchange(old)


class PackedArgs:
    """Kernel arguments packed once into C memory: `void* params[]` for cuLaunchKernel.

    Keeping the ctypes objects alive here is what makes the pointer array valid;
    the launch itself then costs one driver call and no Python packing.
    """

    __slots__ = ("address", "array", "values")

    def __init__(self, kinds: list[str], values: list[Any]) -> None:
        self.values = [_c_value(k, v) for k, v in zip(kinds, values, strict=True)]
        self.array = (ctypes.c_void_p * max(1, len(self.values)))(
            *[ctypes.addressof(v) for v in self.values]
        )
        self.address = ctypes.addressof(self.array)


def _c_value(kind: str, value: Any) -> Any:
    if kind == "tmap":  # a 128-byte CUtensorMap (TMA descriptor) passed by value
        return (ctypes.c_uint8 * 128).from_buffer_copy(value)
    return CTYPES[kind](_scalar_bits(kind, value))


def _scalar_bits(kind: str, value: Any) -> Any:
    """A Python value for the ctypes type of `kind` (f16 scalars travel as their bits)."""
    if kind == "f16":
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    if kind == "bool":
        return 1 if value else 0
    if kind in ("f32", "f64"):
        return float(value)
    return int(value)


_HANDLE_INTS: dict[int, int] = {}
_RAW_BROKEN = False  # set if a handle cannot be turned into an int (then the binding is used)


def _handle_int(h: Any) -> int:
    """The raw pointer value of a cuda.bindings handle (CUfunction, CUstream), memoised."""
    key = id(h)
    v = _HANDLE_INTS.get(key)
    if v is None:
        try:
            v = int(h)
        except TypeError:
            global _RAW_BROKEN
            _RAW_BROKEN = True
            raise
        if len(_HANDLE_INTS) > 4096:
            _HANDLE_INTS.clear()
        _HANDLE_INTS[key] = v
        _KEEP.append(h)  # the id stays valid only while the object lives
        if len(_KEEP) > 4096:
            del _KEEP[:2048]
            _HANDLE_INTS.clear()
    return v


_KEEP: list[Any] = []


_STREAM_POINTERS: dict[int, tuple[Any, Any]] = {}  # id(stream) -> (stream, c_void_p)


def _stream_pointer(stream: Any) -> Any:
    """A stream handle as a ready `c_void_p` (memoised: converting per call costs)."""
    hit = _STREAM_POINTERS.get(id(stream))
    if hit is None or hit[0] is not stream:
        if len(_STREAM_POINTERS) > 1024:
            _STREAM_POINTERS.clear()
        hit = (stream, ctypes.c_void_p(_handle_int(stream)))
        _STREAM_POINTERS[id(stream)] = hit
    return hit[1]


@functools.cache
def _raw_launch_preconverted() -> Any:
    """`cuLaunchKernel` through ctypes with no `argtypes`: every argument is
    passed already converted (c_void_p handles, small ints), so ctypes does
    no per-argument conversion work; None if libcuda cannot be loaded."""
    if flag("TILEC_NO_CTYPES_LAUNCH", "0"):
        return None
    try:
        f = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    except (OSError, AttributeError):
        return None
    f.restype = ctypes.c_int
    return f


def launch_mode() -> str:
    """`TILEC_LAUNCH`: "native" (unset: the compiled launcher, `cuda_native`), "ctypes" (`cuLaunchKernel` through
    ctypes) or "binding" (cuda-python's); another value is E0604 at the launch (`env_switch.SwitchError`)."""
    return mode("TILEC_LAUNCH", "native", ("native", "ctypes", "binding"))


@functools.cache
def _raw_launch() -> Any:
    """`cuLaunchKernel` from libcuda via ctypes, or None (then the binding is used)."""
    if flag("TILEC_NO_CTYPES_LAUNCH", "0"):
        return None
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        f = lib.cuLaunchKernel
    except (OSError, AttributeError):
        return None
    u = ctypes.c_uint
    f.argtypes = [
        ctypes.c_void_p,
        u,
        u,
        u,
        u,
        u,
        u,
        u,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    f.restype = ctypes.c_int
    return f
