"""The fast path of a repeated kernel call: a cache, per kernel, of what a call
with the same argument kinds needs.

A call's *key* is, per parameter, what every check of `call.py` reads off an
argument: for an array its type, element type, shape, strides, writeability
and device; for a partition its tile shape too; for a number its Python
type. Two calls with equal keys pass or fail the same argument checks, bind
the same generics and grid (`bind_launch` reads only these), pass the same
deferred ownership facts and the same tile limits, and lower to the same
kernel instance. So the first call of a key runs the full checked path
(`call.py`) and leaves a `Plan` here; later calls of that key take it and
re-check only what the key does not fix:

- the arrays' addresses (read fresh; `_np_ptr` for NumPy's quick way),
  and with them the overlap of the call's own arrays (E0303), an interval
  test per pair that one of them writes;
- the numbers: each is checked against its parameter type again;
- borrows of launches in flight: checked when the operation starts, as on
  the checked path (`operation.py`), never cached.

Anything `probe` does not recognise (an unusual array type, keyword
arguments) simply takes the checked path every time.

Invariant: a `Plan` is only reached through a key equal to the one of the
call that made it, and holds nothing that depends on an argument's address
or a number's value.
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api.partition import Partition

if TYPE_CHECKING:
    from tilelang.api.protocols import KernelLike
    from tilelang.dtypes import DType
    from tilelang.ownership.dynamic import BorrowTracker
    from tilelang.runtime.launch import BoundLaunch, ParamSpec, Runtime

# An ndarray's address is `PyArrayObject_fields.data`, the first field after
# the object header (NumPy's C API reads it there: `PyArray_DATA`). Reading it
# with ctypes costs a tenth of `__array_interface__`, which builds a dict. A
# self-test at import compares the two on arrays, views and offsets; where
# they disagree (another interpreter, another object layout) the interface is
# used. (A memo of addresses per array would need a weak reference, and NumPy
# refuses `resize()` of an array that has one.)
_NDARRAY = np.ndarray
_HEADER = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
_READ_PTR = ctypes.c_void_p.from_address


def _ptr_by_interface(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _ptr_by_struct(a: np.ndarray) -> int:
    return _READ_PTR(id(a) + _HEADER).value or 0


def _struct_read_works() -> bool:
    try:
        base = np.arange(64, dtype=np.float32)
        samples: list[np.ndarray] = [
            base,
            base[3:],
            base[::2],
            base.reshape(8, 8)[2:, 1:],
            np.zeros(0),
            np.float64(1.0) * np.ones(3),
        ]
        return all(_ptr_by_struct(a) == _ptr_by_interface(a) for a in samples)
    except Exception:  # any surprise: use the interface
        return False


_np_ptr = _ptr_by_struct if _struct_read_works() else _ptr_by_interface


# A CPU torch tensor is read by the interpreter through a NumPy view of its
# memory; making one costs microseconds, so views are kept per tensor and
# reused while the tensor's address and shape are those the view was made for.
_TORCH_VIEWS: dict[int, tuple[Any, int, Any, np.ndarray]] = {}


def _torch_view(t: Any, ptr: int) -> np.ndarray:
    hit = _TORCH_VIEWS.get(id(t))
    shape = t.shape
    if hit is not None and hit[1] == ptr and hit[2] == shape and hit[0]() is t:
        return hit[3]
    view: np.ndarray = t.detach().numpy()
    if len(_TORCH_VIEWS) > 1024:
        _TORCH_VIEWS.clear()
    _TORCH_VIEWS[id(t)] = (weakref.ref(t), ptr, shape, view)
    return view


# ---------------------------------------------------------------- probes
# How to read a key and an address off an array of a given Python type;
# decided once per type. "np": numpy.ndarray; "torch": torch.Tensor (and
# nn.Parameter); "cupy": cupy.ndarray; None: not on the fast path.
_KINDS: dict[type, str | None] = {np.ndarray: "np"}


def _kind_of(t: type) -> str | None:
    kind = _KINDS.get(t, "?")
    if kind != "?":
        return kind
    module = t.__module__ or ""
    torch = sys.modules.get("torch")
    if (
        torch is not None
        and module.startswith("torch")
        and t
        in (
            getattr(torch, "Tensor", None),
            getattr(getattr(torch, "nn", None), "Parameter", None),
        )
    ):
        kind = "torch"
    elif module.startswith("cupy") and t.__name__ == "ndarray":
        kind = "cupy"
    elif "__cuda_array_interface__" in dir(t) and not module.startswith(("torch", "jax")):
        kind = "cai"
    else:
        kind = None
    _KINDS[t] = kind
    return kind


def probe(v: Any) -> tuple[Any, int, Any] | None:
    """(key, address, host view or None) of an array, or None: not fast."""
    t = type(v)
    kind = _KINDS.get(t, "?")
    if kind == "?":
        kind = _kind_of(t)
    if kind == "np":
        return (t, v.dtype, v.shape, v.strides, v.flags.writeable), _np_ptr(v), v
    if kind == "torch":
        index = v.get_device()  # -1: the CPU (other devices: the checked path refuses them)
        ptr = v.data_ptr()
        key: tuple[Any, ...] = (t, v.dtype, v.shape, v.stride(), index)
        if index >= 0 and not v.is_cuda:  # another accelerator: the checked path says why not
            return None
        if index < 0:
            if v.device.type != "cpu":
                return None
            try:
                return key, ptr, _torch_view(v, ptr)
            except (TypeError, RuntimeError):  # no NumPy view (bf16, ...): the checked path says why
                return None
        return key, ptr, None
    if kind == "cupy":
        return (t, v.dtype, v.shape, v.strides, v.device.id), int(v.data.ptr), None
    if kind == "cai":
        iface = v.__cuda_array_interface__
        ptr, readonly = iface["data"]
        strides = iface.get("strides")
        dev = getattr(v, "device", None)
        key = (
            t,
            iface["typestr"],
            tuple(iface["shape"]),
            None if strides is None else tuple(strides),
            bool(readonly),
            getattr(dev, "id", None),
            iface.get("stream"),
        )
        return key, int(ptr or 0), None
    return None


# ---------------------------------------------------------------- plans
@dataclass(frozen=True, slots=True)
class ArraySlot:
    """One array argument of a plan: what the checks fixed about it."""

    param: int  # index of the kernel parameter
    name: str
    mutable: bool
    nbytes: int
    shape: tuple[int, ...]
    dtype: DType  # the Tensor's element type (bf16 for bf16 parameters)
    np_dtype: Any  # the storage's NumPy dtype (uint16 for 2-byte bf16 memory)
    bf16_memory: bool  # 2-byte bfloat16 (a torch.bfloat16 CUDA tensor)
    library: str
    tile: tuple[int, ...] | None  # the partition's tile (`&mut` only)


@dataclass(frozen=True, slots=True)
class ScalarSlot:
    param: int
    spec: ParamSpec
    check: DType | None  # the type the Python value is checked against (None: a type parameter)
    bound: DType | None  # the type it is converted to for the kernel


@dataclass(eq=False, slots=True)
class Plan:
    """Everything a call with one key needs, found by the checked path."""

    kernel: KernelLike
    bound: BoundLaunch  # instantiation and grid (its args are those of the first call)
    runtime: Runtime
    engine: str  # "cpu" or "cuda:<index>": the device that runs it
    space: str  # "cpu" or "cuda:<index>": the arrays' address space
    tracker: BorrowTracker
    arrays: tuple[ArraySlot, ...]
    scalars: tuple[ScalarSlot, ...]
    pairs: tuple[tuple[int, int], ...]  # array slots that must not overlap (one of them written)
    order: tuple[tuple[bool, int], ...]  # lowered kernel's parameter order: (is array, slot)
    kir: Any
    prepared: Any
    copies: bool  # host arrays on the GPU, or bf16 on the CPU: uploaded per run
    torch_mut: bool  # some written array is a torch tensor (autograd versions to bump)
    has_torch: bool  # some array is a torch tensor (its memory can change under it)
    library: str  # the library of the first array (its current stream is used)
    device_index: int
    launcher: Any = None  # the device's fast launcher, made at the first GPU run
    launcher_tried: bool = False
    stats: dict[str, int] = field(default_factory=lambda: {"hits": 0})


MAX_PLANS = 256  # per kernel; a kernel called with more keys starts over


def call_key(
    kernel: KernelLike, args: tuple[Any, ...]
) -> tuple[tuple[Any, ...], list[int], list[Any], list[Any]] | None:
    """The key of a call with positional `args` and its per-call values
    (addresses, host views, the caller's objects); None: not on the fast path."""
    kinds = kernel._kinds
    if len(args) != len(kinds):
        return None
    key: list[Any] = []
    ptrs: list[int] = []
    hosts: list[Any] = []
    objs: list[Any] = []
    for kind, v in zip(kinds, args, strict=True):
        if kind == "scalar":
            key.append(type(v))
            continue
        if kind == "mut":
            if type(v) is not Partition:
                return None
            tile = v.tile
            v = v.array
        elif kind == "ref":
            tile = None
        else:
            return None
        t = type(v)
        if t is _NDARRAY:  # NumPy inline: the most common case, and the CPU target
            sig: Any = (t, v.dtype, v.shape, v.strides, v.flags.writeable)
            ptr = _np_ptr(v)
            host = v
        else:
            got = probe(v)
            if got is None:
                return None
            sig, ptr, host = got
        key.append(sig if tile is None else (tile, sig))
        ptrs.append(ptr)
        hosts.append(host)
        objs.append(v)
    return tuple(key), ptrs, hosts, objs
