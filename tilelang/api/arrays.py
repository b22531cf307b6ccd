"""What the Python API needs to know about a caller's array, whatever made it.

`describe(value)` turns a NumPy array, a PyTorch tensor (CPU or CUDA), a CuPy
array, or any object with `__cuda_array_interface__`, `__array_interface__`
or `__dlpack__`/`__dlpack_device__` (host memory through `numpy.from_dlpack`,
CUDA and managed memory by reading the capsule's `DLTensor`; JAX arrays
always through DLPack) into an `ArrayRef`: where its memory is (a pointer and
a byte count in one address space), its shape, its Tile element type, whether
it is C-contiguous, and for CUDA memory the stream its library has current.
A torch.bfloat16 CUDA tensor is described with `dtype` bf16 and its own
2-byte memory (the GPU backend reads either bf16 layout); a CPU one is
`Unsupported` (NumPy has no bf16 to view it with). CuPy has no bf16.
It copies nothing and imports neither torch nor cupy: a tensor of theirs can
only exist when they are already imported, so `sys.modules` finds them.

Invariants:
- `host` is a NumPy view of the caller's memory (never a copy) for CPU
  arrays and None for CUDA ones, so a kernel that writes through it writes
  the caller's array.
- Anything that could only be read through a copy (a Python list, an object
  with `__array__` only) is not an array here: a `&mut` argument would
  silently lose its results. A library that can only give a copy (a
  DLPack producer that refuses `copy=False` or flags its capsule as
  copied, an `__array_interface__` with a new buffer at each reading)
  gives an `ArrayRef` with `copied` set: read by host functions (which copy
  their inputs anyway), refused by kernel calls and for written
  host-function arguments (`call.py`, `hostfn.py`: E0801).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import sys
from typing import Any

import numpy as np

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.runtime.tensor import dtype_of_array


class NotAnArray(Exception):
    """`value` is not an array this API can use without a copy."""


class Unsupported(Exception):
    """`value` is an array, but one the API cannot use; the message says why
    and how to fix it (the caller adds which parameter)."""

    def __init__(self, why: str, help: str) -> None:
        super().__init__(why)
        self.why = why
        self.help = help


@frozen
class ArrayRef:
    obj: Any  # the caller's object: handles keep it alive while a launch may use it
    library: str  # "numpy", "torch", "cupy" or "cuda-array" (another CUDA library)
    space: str  # "cpu" or "cuda:<index>": the address space of `ptr`
    shape: tuple[int, ...]
    dtype: DType | None  # None: an element type Tile does not have
    dtype_name: str  # the library's own spelling, for messages (`torch.float32`)
    ptr: int
    nbytes: int
    contiguous: bool  # C-contiguous (row-major, no gaps)
    # in elements; None where a stride is not a whole number of elements (a
    # field of a record array, an odd `__cuda_array_interface__`): such an
    # array is never contiguous, `byte_strides` says what it is
    strides: tuple[int, ...] | None
    byte_strides: tuple[int, ...]
    readonly: bool
    host: np.ndarray | None  # a view of the memory (CPU only)
    stream: int | None  # CUDA: the raw stream handle current in the caller's library
    # why the library gave a copy, not its memory (a DLPack producer that
    # cannot share it); "": its memory. A copy is readable, but a kernel's
    # writes to it would be lost
    copied: str = ""

    @property
    def is_cuda(self) -> bool:
        return self.space.startswith("cuda")

    @property
    def device_index(self) -> int:
        return int(self.space.split(":", 1)[1]) if self.is_cuda else -1

    def describe(self) -> str:
        """`a float32 NumPy array of shape (8, 4)` and the like."""
        where = " on the GPU" if self.is_cuda else ""
        kind = {
            "numpy": "NumPy array",
            "torch": "PyTorch tensor",
            "cupy": "CuPy array",
            "jax": "JAX array",
            "jaxlib": "JAX array",
        }.get(self.library, "array")
        article = (
            "an"
            if self.dtype_name[:1] in "aeio"  # ("a uint8": said "you-int"; "an int8")
            else "a"
        )
        return f"{article} {self.dtype_name} {kind}{where} of shape {_pyshape(self.shape)}"


_TIME_UNITS = {"Y": "years", "M": "months", "W": "weeks", "D": "days", "h": "hours", "m": "minutes", "s": "seconds",
               "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds", "ps": "picoseconds"}


def foreign_dtype_help(ref: ArrayRef, name: str) -> str:
    """The help for an array whose element type Tile does not have (round 27, huser28: a data engineer's
    timestamps, `datetime64`, and a record array were told "convert it to one Tile has (float32, ..)"): NumPy's
    dates and durations are 64-bit counts of their unit, which `view` reads as `int64` with no copy; a record
    array's fields are arrays of their own."""
    dt = getattr(ref.obj, "dtype", None) if ref.library == "numpy" else None
    if isinstance(dt, np.dtype) and dt.kind in "mM":
        code = np.datetime_data(dt)[0]
        unit = _TIME_UNITS.get(code, f"units of `{code}`")
        what = f"{unit} since 1970-01-01" if dt.kind == "M" else unit
        return (f"view its 64-bit counts as an integer array, no copy: `{name}.view(numpy.int64)` ({what}; NaT "
                "is the most negative value), for a parameter of `i64`")
    if isinstance(dt, np.dtype) and dt.names:
        field = dt.names[0]
        return (f"pass one field, an array of its own: `numpy.ascontiguousarray({name}[{field!r}])` (a record "
                f"array's fields are interleaved; its fields: {', '.join(dt.names)})")
    return "convert it to one Tile has (float32, float16, int32, uint8, bool, ...)"


def _pyshape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    step = 1
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


def _elements(
    shape: tuple[int, ...], byte_strides: tuple[int, ...], itemsize: int
) -> tuple[int, ...] | None:
    """Strides in bytes as strides in elements, None where one is not a
    whole number of elements (flooring it would call a 6-byte stride of
    4-byte elements 1: contiguous, and the kernel would read other bytes).
    A dimension of size 1 (or 0) never steps: its stride may be anything."""
    if any(s % itemsize and d > 1 for d, s in zip(shape, byte_strides, strict=True)):
        return None
    return tuple(s // itemsize for s in byte_strides)


def _is_c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    if any(d == 0 for d in shape):
        return True
    if strides is None:
        return False
    # A dimension of size 1 may have any stride (NumPy and PyTorch agree).
    return all(s == c or d == 1 for d, s, c in zip(shape, strides, _c_strides(shape), strict=True))


_BY_NUMPY: dict[np.dtype, DType | None] = {}


def _tile_dtype(npd: np.dtype) -> DType | None:
    """`dtype_of_array`, memoised (it is on every call's path)."""
    try:
        return _BY_NUMPY[npd]
    except KeyError:
        dt = _BY_NUMPY[npd] = dtype_of_array(np.empty(0, npd))
        return dt


def read_only_text(ref: ArrayRef, what: str, name: str, writes: str) -> tuple[str, str]:
    """(message, help) of E0803 for `ref` given to a written parameter; `writes` says who
    writes it (`the kernel writes it`)."""
    if ref.library in _DLPACK_FIRST:
        return (
            f"{what} is a JAX array, but {writes}: JAX arrays are immutable "
            "(other arrays and compiled functions may share its buffer)",
            "pass a NumPy array for the results (or a PyTorch or CuPy array on the GPU) and "
            "make a JAX array of it afterwards (`jax.numpy.asarray(..)`)",
        )
    mm = ref.host if isinstance(ref.host, np.memmap) else None
    if mm is not None and getattr(mm, "mode", None) == "r":  # a copy would leave the file unwritten
        return (
            f"{what} is a memory-mapped file opened read-only (`mode='r'`), but {writes}",
            "open it writeable to write the file, `numpy.memmap(path, .., mode='r+')`; or pass a writeable copy "
            f"and keep it (`{name} = numpy.array({name})`: the results are in the copy, not the file)",
        )
    # (a copy made in the call, `partition({name}.copy(), ..)`, would take the results away)
    return (
        f"{what} is read-only, but {writes}",
        f"pass a writeable copy and keep it, the results are written into it: `{name} = {name}.copy()`",
    )


def grad_leaf(ref: ArrayRef) -> bool:
    """`ref` is a PyTorch leaf tensor that requires grad (a parameter, an input made with
    `requires_grad=True`) while autograd records: PyTorch refuses an in-place write to one
    ("a leaf Variable that requires grad is being used in an in-place operation"), as a
    write by a kernel must be too (under `torch.no_grad()`, an optimiser's step, it may)."""
    return ref.library == "torch" and grad_leaf_tensor(ref.obj)


def grad_leaf_tensor(t: Any) -> bool:
    """`grad_leaf` of a PyTorch tensor: read again when an operation built earlier starts
    (`Operation._check_memory`, a graph's replay), since `requires_grad_()` and autograd's
    mode may change between the call and its run (hrev21: an operation built under
    `torch.no_grad()` then run outside it wrote the leaf). A view of such a leaf that requires grad too
    (`w.view(-1)`, `w[:8]`: `_base` the leaf) is refused as the leaf is, as PyTorch refuses it ("a view of a
    leaf Variable that requires grad is being used in an in-place operation"; hrev22: it was written); a view
    that does not require grad (`w.detach()`, a view made under `no_grad()`) is not."""
    if not getattr(t, "requires_grad", False):
        return False
    base = getattr(t, "_base", None)
    if not (getattr(t, "is_leaf", False)
            or (base is not None and getattr(base, "requires_grad", False) and getattr(base, "is_leaf", False))):
        return False
    torch = sys.modules.get("torch")
    enabled = getattr(torch, "is_grad_enabled", None)
    return bool(enabled()) if enabled is not None else True


def grad_leaf_text(what: str, name: str, writes: str, obj: Any = None) -> tuple[str, str]:
    """(message, help) of E0803 for a PyTorch leaf that requires grad given to a written
    parameter (`grad_leaf`); `writes` says who writes it (`the kernel writes it`); `obj` the
    tensor (a view of such a leaf is named so)."""
    leaf = "a view of a PyTorch leaf tensor" if obj is not None and not getattr(obj, "is_leaf", True) \
        else "a PyTorch leaf tensor"
    return (
        f"{what} is {leaf} that requires grad, but {writes} in place: PyTorch "
        "refuses an in-place write to such a leaf (autograd would not see it)",
        f"to update it outside autograd (an optimiser's step), make the call inside "
        f"`with torch.no_grad():`; to write the results into its memory, pass `{name}.detach()`; "
        f"for a result autograd tracks, pass a new tensor (`torch.empty_like({name})`)",
    )


def immutable(ref: ArrayRef) -> bool:
    """An array of a library whose arrays never change (JAX): a copy of one
    is as good as its memory for reading, at any time."""
    return ref.library in _DLPACK_FIRST


def copied_text(ref: ArrayRef, what: str, name: str, writes: str, written: bool) -> tuple[str, str]:
    """(message, help) of E0801 for a copy (`ref.copied`): given to a
    parameter that is written (`written`; `writes` says by whom: `the kernel
    writes it`), or read by a kernel call, whose
    operation reads its arrays' memory each time it runs (a host function
    copies its arguments once: it reads a copy)."""
    if written:
        return (
            f"{what} is {ref.describe()} that its library gives as a copy ({ref.copied}), but "
            f"{writes}: the results would land in the copy and be lost",
            "pass an array the results can be written into in place (a NumPy array, or a "
            "PyTorch or CuPy array on the GPU) and make the library's array of it afterwards",
        )
    return (
        f"{what} is {ref.describe()} that its library gives as a copy ({ref.copied}): an "
        "operation reads the memory of its arrays each time it runs, and each copy is other memory",
        f"pass a copy you keep: `{name} = numpy.{'from_dlpack' if ref.copied == _DL_COPY else 'asarray'}"
        f"({name})`" if not ref.is_cuda else f"pass a PyTorch or CuPy array of it (`cupy.asarray({name})`)",
    )


def tile_dtype_name(dt: DType) -> str:
    """The NumPy spelling of a Tile element type, for help lines."""
    return "float32" if dt is DType.BF16 else np.dtype(dt.np_dtype).name


# ---------------------------------------------------------------- NumPy and CPU objects
def _numpy(a: np.ndarray, obj: Any, library: str) -> ArrayRef:
    if a.dtype.byteorder not in ("=", "|") and a.dtype.byteorder != _NATIVE:
        order = "big" if a.dtype.byteorder == ">" else "little"
        raise Unsupported(
            f"a {order}-endian {a.dtype.newbyteorder('=').name} array: Tile reads numbers in "
            "this machine's byte order",
            f"convert it first: `t.astype(numpy.{a.dtype.newbyteorder('=').name})`",
        )
    itemsize = a.dtype.itemsize or 1
    return ArrayRef(
        obj=obj,
        library=library,
        space="cpu",
        shape=tuple(a.shape),
        dtype=_tile_dtype(a.dtype),
        dtype_name=a.dtype.name,
        ptr=int(a.__array_interface__["data"][0]),
        nbytes=int(a.nbytes),
        contiguous=bool(a.flags.c_contiguous),
        strides=_elements(tuple(a.shape), tuple(a.strides), itemsize),
        byte_strides=tuple(a.strides),
        readonly=not a.flags.writeable,
        host=a,
        stream=None,
    )


_NATIVE = "<" if sys.byteorder == "little" else ">"


# ---------------------------------------------------------------- PyTorch
_TORCH_DTYPES = {
    "torch.bool": DType.BOOL,
    "torch.int8": DType.I8,
    "torch.int16": DType.I16,
    "torch.int32": DType.I32,
    "torch.int64": DType.I64,
    "torch.uint8": DType.U8,
    "torch.uint16": DType.U16,
    "torch.uint32": DType.U32,
    "torch.uint64": DType.U64,
    "torch.float16": DType.F16,
    "torch.float32": DType.F32,
    "torch.float64": DType.F64,
    # CUDA only (`_torch` refuses a CPU one): 2-byte bfloat16 memory, which the
    # GPU backend reads and writes in place
    "torch.bfloat16": DType.BF16,
}


def _torch(t: Any) -> ArrayRef:
    name = str(t.dtype)
    if name == "torch.bfloat16" and not t.is_cuda:
        # NumPy has no bf16, so a CPU tensor has no in-place view; the CPU
        # interpreter keeps bf16 in f32 memory (a copy would have to be
        # written back, which this API never does behind the caller's back).
        raise Unsupported(
            "a torch.bfloat16 tensor on the CPU cannot be used in place: NumPy has no bf16, "
            "and Tile's CPU interpreter keeps bf16 values in float32 memory",
            "pass `t.float()` (values rounded to bf16 by the kernel) and convert the result "
            "back with `.bfloat16()`, or move it to the GPU (`t.cuda()`), where "
            "torch.bfloat16 tensors are used in place",
        )
    if getattr(t, "is_neg", lambda: False)():  # (round 17: its memory holds the values before the negation,
        raise Unsupported(                       # which a CUDA kernel read as they are; NumPy refused it raw)
            "a PyTorch tensor whose negative bit is set (a lazy negation: `_neg_view`, a conjugate's `.imag`) "
            "holds the values before the negation in its memory",
            "pass `t.resolve_neg()`, which writes the negated values into memory of its own",
        )
    shape = tuple(int(d) for d in t.shape)
    strides = tuple(int(s) for s in t.stride())
    contiguous = bool(t.is_contiguous())
    dtype = _TORCH_DTYPES.get(name)
    if t.is_cuda:
        index = t.device.index if t.device.index is not None else 0
        torch = sys.modules["torch"]
        stream = int(torch.cuda.current_stream(t.device).cuda_stream)
        return ArrayRef(
            obj=t,
            library="torch",
            space=f"cuda:{index}",
            shape=shape,
            dtype=dtype,
            dtype_name=name,
            ptr=int(t.data_ptr()),
            nbytes=int(t.numel() * t.element_size()),
            contiguous=contiguous,
            strides=strides,
            byte_strides=tuple(s * int(t.element_size()) for s in strides),
            readonly=False,
            host=None,
            stream=stream,
        )
    if t.device.type != "cpu":
        raise Unsupported(
            f"a PyTorch tensor on `{t.device}` cannot be used",
            "move it to a CUDA device or to the CPU first",
        )
    if dtype is None:
        raise Unsupported(
            f"{name} has no Tile element type",
            "convert it to one Tile has (float32, float16, int32, ...)",
        )
    # A CPU tensor: NumPy views its memory (no copy); autograd is not involved,
    # as with any kernel that writes a tensor in place.
    return dataclasses.replace(_numpy(t.detach().numpy(), t, "torch"), dtype_name=name)


# ---------------------------------------------------------------- CUDA array interface
def _cuda_array(obj: Any, library: str) -> ArrayRef:
    iface = obj.__cuda_array_interface__
    shape = tuple(int(d) for d in iface["shape"])
    npd = np.dtype(iface["typestr"])
    if npd.byteorder not in ("=", "|") and npd.byteorder != _NATIVE:
        order = "big" if npd.byteorder == ">" else "little"
        raise Unsupported(
            f"a {order}-endian {npd.newbyteorder('=').name} array (typestr `{iface['typestr']}`): "
            "Tile reads numbers in this machine's byte order",
            "convert it to this machine's byte order first",
        )
    if iface.get("mask") is not None:  # (the interface's optional mask of valid elements)
        raise Unsupported(
            "a masked array (its `__cuda_array_interface__` has a `mask`): Tile would read "
            "the masked-out elements as values",
            "pass the data with the masked elements filled in, and no mask",
        )
    itemsize = npd.itemsize or 1
    raw = iface.get("strides")
    if raw is not None and len(raw) != len(shape):
        raise Unsupported(
            f"its `__cuda_array_interface__` gives {len(raw)} strides for {len(shape)} dimensions",
            "pass an array whose interface is well formed (a CuPy or PyTorch array)",
        )
    byte_strides = (
        tuple(s * itemsize for s in _c_strides(shape)) if raw is None else tuple(int(s) for s in raw)
    )
    strides = _elements(shape, byte_strides, itemsize)
    ptr, readonly = iface["data"]
    n = math.prod(shape)
    index = 0
    stream: int | None = None
    if library == "cupy":
        cupy = sys.modules["cupy"]
        index = int(obj.device.id)
        stream = int(cupy.cuda.get_current_stream().ptr)
    else:
        dev = getattr(obj, "device", None)
        index = (
            int(getattr(dev, "id", 0) or 0) if dev is not None and not isinstance(dev, str) else 0
        )
        stream = iface.get("stream") if isinstance(iface.get("stream"), int) else None
    return ArrayRef(
        obj=obj,
        library=library,
        space=f"cuda:{index}",
        shape=shape,
        dtype=_tile_dtype(npd),
        dtype_name=npd.name,
        ptr=int(ptr or 0),
        nbytes=n * itemsize,
        contiguous=_is_c_contiguous(shape, strides),
        strides=strides,
        byte_strides=byte_strides,
        readonly=bool(readonly),
        host=None,
        stream=stream,
    )


def current_stream(ref: ArrayRef) -> int:
    """The raw CUDA stream handle that `ref`'s library has current now (the
    operation runs there, ordered with the caller's own work); 0, the legacy
    default stream, for a library with no notion of one."""
    if ref.library == "torch":
        torch = sys.modules["torch"]
        return int(torch.cuda.current_stream(ref.obj.device).cuda_stream)
    if ref.library == "cupy":
        cupy = sys.modules["cupy"]
        return int(cupy.cuda.get_current_stream().ptr)
    return int(ref.stream or 0)


# ---------------------------------------------------------------- DLPack
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):  # DLPack 0.x: capsule "dltensor"
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class _DLManagedTensorVersioned(ctypes.Structure):  # DLPack 1.x: capsule "dltensor_versioned"
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_DL_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
_DL_IS_COPIED = 2  # DLPACK_FLAG_BITMASK_IS_COPIED: the producer made a copy for the export
_DL_COPY = "its DLPack export is a copy: it cannot share its memory"
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DTYPES = {
    (0, 8): DType.I8, (0, 16): DType.I16, (0, 32): DType.I32, (0, 64): DType.I64,
    (1, 8): DType.U8, (1, 16): DType.U16, (1, 32): DType.U32, (1, 64): DType.U64,
    (2, 16): DType.F16, (2, 32): DType.F32, (2, 64): DType.F64,
    (4, 16): DType.BF16, (6, 8): DType.BOOL,
}  # fmt: skip
_DL_NAMES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}


class DLPackExport:
    """The caller's object and the DLPack capsule it exported. Holding the
    capsule keeps the export (and so the memory) alive; it is never consumed,
    so when it is dropped the producer's capsule destructor releases it."""

    __slots__ = ("capsule", "owner")

    def __init__(self, owner: Any, capsule: Any) -> None:
        self.owner = owner
        self.capsule = capsule


def _capsule_pointer(capsule: Any, name: bytes) -> int | None:
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, name):
        return None
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return int(api.PyCapsule_GetPointer(capsule, name))


def _dlpack_cuda(value: Any, library: str) -> ArrayRef:
    """A CUDA array through its DLPack capsule, in place. The export is asked
    for the legacy default stream (`stream=1`): the producer orders its
    pending work before it, and the operation runs there (stream handle 0).
    It is asked for the memory itself (`copy=False`); a producer that can
    only give a copy (BufferError there, or a capsule flagged as copied)
    gives an `ArrayRef` with `copied` set."""
    copied = ""
    try:
        capsule = value.__dlpack__(stream=1, max_version=(1, 0), copy=False)
    except BufferError:  # it cannot share its memory: what it exports is a copy
        copied = _DL_COPY
        capsule = value.__dlpack__(stream=1, max_version=(1, 0))
    except TypeError:  # a producer before DLPack 1.0's `copy` (0.x: no `max_version` either)
        try:
            capsule = value.__dlpack__(stream=1, max_version=(1, 0))
        except TypeError:
            capsule = value.__dlpack__(stream=1)
    readonly = False
    ptr = _capsule_pointer(capsule, b"dltensor_versioned")
    if ptr is not None:
        managed = _DLManagedTensorVersioned.from_address(ptr)
        tensor = managed.dl_tensor
        readonly = bool(managed.flags & _DL_READ_ONLY)
        if managed.flags & _DL_IS_COPIED:
            copied = _DL_COPY
    else:
        ptr = _capsule_pointer(capsule, b"dltensor")
        if ptr is None:
            raise Unsupported(
                f"a `{type(value).__name__}` exported something that is not a DLPack tensor",
                "pass a PyTorch tensor, a CuPy array or a NumPy array",
            )
        tensor = _DLManagedTensor.from_address(ptr).dl_tensor
    ndim = int(tensor.ndim)
    shape = tuple(int(tensor.shape[i]) for i in range(ndim))
    strides = (
        tuple(int(tensor.strides[i]) for i in range(ndim)) if tensor.strides else _c_strides(shape)
    )
    code, bits, lanes = int(tensor.dtype.code), int(tensor.dtype.bits), int(tensor.dtype.lanes)
    dtype = _DL_DTYPES.get((code, bits)) if lanes == 1 else None
    name = f"{_DL_NAMES.get(code, f'code{code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    n = math.prod(shape)
    return ArrayRef(
        obj=DLPackExport(value, capsule),
        library=library,
        space=f"cuda:{int(tensor.device.device_id)}",
        shape=shape,
        dtype=dtype,
        dtype_name=name,
        ptr=int(tensor.data or 0) + int(tensor.byte_offset),
        nbytes=n * max(1, (bits * lanes) // 8),
        contiguous=_is_c_contiguous(shape, strides),
        strides=strides,
        byte_strides=tuple(s * max(1, (bits * lanes) // 8) for s in strides),
        readonly=readonly,
        host=None,
        stream=0,
        copied=copied,
    )


def _dlpack(value: Any, library: str) -> ArrayRef:
    kind, _ = value.__dlpack_device__()
    kind = int(kind)
    if kind in (_DL_CPU, _DL_CUDA_HOST):  # host memory NumPy can view
        copied = ""
        try:
            try:
                # the memory itself, not a copy the producer may make by default
                a = np.from_dlpack(value, copy=False)
            except BufferError:  # it cannot share its memory: NumPy gets a copy
                copied = _DL_COPY
                a = np.from_dlpack(value)
            except TypeError:  # a producer before DLPack 1.0's `copy` (0.x exports in place)
                a = np.from_dlpack(value)
        except (BufferError, TypeError, RuntimeError, ValueError) as e:
            raise Unsupported(
                f"a `{type(value).__name__}` could not be viewed in place through DLPack ({e})",
                "pass a NumPy array or convert it with `numpy.asarray`",
            ) from None
        ref = _numpy(a, value, library)
        return dataclasses.replace(ref, copied=copied) if copied else ref
    if kind in (_DL_CUDA, _DL_CUDA_MANAGED):
        return _dlpack_cuda(value, library)
    raise Unsupported(
        f"a `{type(value).__name__}` on DLPack device type {kind} cannot be used",
        "pass a NumPy array, or a PyTorch, CuPy or JAX array on the CPU or a CUDA GPU",
    )


def _interface(value: Any, library: str) -> ArrayRef:
    """A host array of another library through its `__array_interface__`."""
    iface = value.__array_interface__
    if isinstance(iface, dict) and iface.get("mask") is not None:  # NumPy ignores a mask
        raise Unsupported(
            "a masked array (its `__array_interface__` has a `mask`): Tile would read "
            "the masked-out elements as values",
            "pass the data with the masked elements filled in, and no mask",
        )
    try:
        a = np.asarray(value)  # the interface shares memory: no copy
    except (ValueError, TypeError) as e:  # not a dict, a typestr NumPy cannot read, ...
        raise Unsupported(
            f"its `__array_interface__` is not one NumPy can read ({e})",
            "pass a NumPy array (or an object whose `__array_interface__` is well formed)",
        ) from None
    ref = _numpy(a, value, library)
    data = iface.get("data") if isinstance(iface, dict) else None
    if data is not None and not isinstance(data, tuple):
        # its memory is a buffer object the interface holds: one made at
        # each reading (`bytearray(..)` of the values) is a copy
        again = np.asarray(value)
        if again.__array_interface__["data"][0] != ref.ptr:
            return dataclasses.replace(
                ref, copied="its `__array_interface__` makes a new buffer each time it is read"
            )
    return ref


def _refuse_masked(a: np.ndarray) -> None:
    """A NumPy masked array with masked elements: its data would be read
    with the masked-out elements as values (and written under the mask)."""
    ma = sys.modules.get("numpy.ma")  # (no masked array exists before it is imported)
    if ma is not None and isinstance(a, ma.MaskedArray) and ma.getmaskarray(a).any():
        # a fill of the array's own kind (round 15: `filled(0.0)` was proposed for int32 ids)
        fill = {"f": "0.0", "c": "0.0", "b": "False"}.get(a.dtype.kind, "0")
        raise Unsupported(
            "a masked array with masked elements: Tile would read the masked-out elements "
            "as values",
            f"pass a plain array with the masked elements filled in, `t.filled({fill})` (for a "
            "`&mut` argument bound to a name first: the results are written into it)",
        )


def interface_now(obj: Any, attr: str, np_dtype: Any, written: bool) -> tuple[int, tuple[int, ...], bool]:
    """(address, shape, same layout) of an operation's argument of another
    library as its `attr` reads now (`__array_interface__`,
    `__cuda_array_interface__`, or `__dlpack__`: exported again), for
    `Operation._check_interfaces`. "Same layout": C-contiguous, unmasked
    elements of `np_dtype` (the storage's), and not a copy where `written`:
    the same address and shape with other strides or another element type
    would have the kernel read and write other bytes than the elements.
    (-1, (), False) where it no longer reads as an array."""
    try:
        if attr == "__dlpack__":
            ref = describe(obj.owner if isinstance(obj, DLPackExport) else obj)
            stored = (
                np.dtype(np.uint16) if ref.is_cuda and ref.dtype is DType.BF16
                else np.dtype(ref.dtype.np_dtype) if ref.dtype is not None else None
            )
            same = ref.contiguous and stored == np_dtype and not (written and ref.copied)
            return ref.ptr, ref.shape, same
        iface = getattr(obj, attr, None)
        ptr = int(iface["data"][0] or 0)  # type: ignore[index]
        shape = tuple(int(d) for d in iface["shape"])  # type: ignore[index]
        npd = np.dtype(iface["typestr"])  # type: ignore[index]
        raw = iface.get("strides")  # type: ignore[union-attr]
        same = npd == np_dtype and iface.get("mask") is None and (  # type: ignore[union-attr]
            raw is None or _is_c_contiguous(shape, _elements(shape, tuple(int(x) for x in raw), npd.itemsize or 1))
        )
        return ptr, shape, same
    except (TypeError, KeyError, IndexError, ValueError, AttributeError, NotAnArray, Unsupported, BufferError):
        return -1, (), False


# ---------------------------------------------------------------- entry point
def describe(value: Any) -> ArrayRef:
    """An `ArrayRef` for `value`; `NotAnArray` if it is not an array at all,
    `Unsupported` if it is one this API cannot use."""
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray:
            _refuse_masked(value)
        return _numpy(value, value, "numpy")
    module = type(value).__module__ or ""
    library = module.split(".", 1)[0] or "array"
    if module.startswith("torch") and hasattr(value, "data_ptr") and hasattr(value, "is_cuda"):
        return _torch(value)
    has_dlpack = hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__")
    if has_dlpack and library in _DLPACK_FIRST:
        # JAX arrays are immutable: other arrays and compiled functions may
        # share the buffer, so a kernel never writes one (E0803)
        return dataclasses.replace(_dlpack(value, library), readonly=True)
    if hasattr(value, "__cuda_array_interface__"):
        return _cuda_array(value, "cupy" if module.startswith("cupy") else "cuda-array")
    if hasattr(value, "__array_interface__") and not isinstance(value, np.generic):
        return _interface(value, library)
    if has_dlpack:
        return _dlpack(value, library)
    raise NotAnArray(type(value).__name__)


# Libraries whose arrays go through DLPack even when they offer another
# interface: JAX's `__cuda_array_interface__` names no stream to order with.
_DLPACK_FIRST = frozenset({"jax", "jaxlib"})
