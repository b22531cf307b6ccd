"""Host values of the Tile runtime: `Tensor` and `Partition`, and their printing.

A `Tensor` is an element type, a shape and a storage that belongs to one
`Device` (`runtime/device.py`): on the CPU the storage is a contiguous NumPy
array that the kernel interpreter reads and writes in place; on the GPU it is
a device buffer of `runtime/cuda.py`. Host-side computations (element-wise
arithmetic, reductions, `print`, `assert_close`) work on a host view
(`Tensor.numpy()`), which on the CPU is the storage itself and on the GPU a
downloaded copy.

Invariants:
- `Tensor.shape` never changes; `reshape` makes a new tensor, a copy (as
  `transpose`, `permute`, `broadcast`, `t[i]` and `t[a..b]` do: the checker
  takes each for a tensor of its own, so none may share the source's memory).
- bf16 values are kept in float32 arrays rounded to bf16 (round to nearest
  even) after every host operation, as `tilelang/dtypes.py` prescribes; f16
  lives in float16 arrays, so NumPy's f16 arithmetic rounds for us.
- `Partition` is a value, not a copy: it names a tensor and a tile shape, and
  the grid it implies is `ceil(shape / tile)` per dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.interp import numeric as num
from tilelang.interp.numeric import round_bf16  # the interpreter's rounding defines bf16
from tilelang.interp.printing import format_scalar  # one formatter for host and device prints

__all__ = [
    "Partition", "Tensor", "dtype_of_array", "float_to_int", "format_scalar", "format_tensor", "normalise",
    "round_bf16",
]

if TYPE_CHECKING:
    from tilelang.runtime.device import Device




def normalise(a: np.ndarray, dtype: DType) -> np.ndarray:
    """`a` converted to `dtype`'s storage type, rounded as the dtype demands
    (underflow and overflow to infinity are defined results: no NumPy
    warning, whatever the caller's `np.seterr`)."""
    with np.errstate(all="ignore"):
        return _normalise(np.asarray(a), dtype)


def _normalise(arr: np.ndarray, dtype: DType) -> np.ndarray:
    if dtype.is_float and arr.dtype.kind in "iu":
        return num.int_to_float(arr, dtype)  # one rounding, as the interpreter's casts do
    if dtype is DType.BF16:
        if arr.dtype == np.float64:
            # round-to-odd first, as the interpreter does: f64 -> f32 -> bf16
            # by two nearest roundings can land on the wrong bf16
            arr = num.f64_to_f32_odd(arr)
        return round_bf16(arr.astype(np.float32))
    if dtype.is_int and arr.dtype.kind == "f":
        return float_to_int(arr, dtype)
    return arr.astype(dtype.np_dtype, copy=False)


def float_to_int(a: np.ndarray, dtype: DType) -> np.ndarray:
    """Rust's `as` from float to integer: truncate toward zero, saturate at the
    type's bounds, NaN becomes 0 (the interpreter's conversion, so host code
    and kernels agree)."""
    return num.float_to_int(np.asarray(a, dtype=np.float64), dtype)


def dtype_of_array(a: np.ndarray) -> DType | None:
    """The Tile dtype whose storage is `a.dtype` (float32 -> f32, never bf16)."""
    for d in DType:
        if d is not DType.BF16 and d.np_dtype == a.dtype:
            return d
    return None


# ---------------------------------------------------------------- tensors
#: Called as HOST_ACCESS(storage, write) before the host reads (`numpy()`) or
#: writes (`write()`) a tensor: the sanitizer's check that no launch in flight
#: races with the host (interp/sanitize.py). None, and free, otherwise.
HOST_ACCESS: Callable[[object, bool], None] | None = None


class Tensor:
    """An n-dimensional array in the memory of one device."""

    __slots__ = ("device", "dtype", "shape", "storage")

    def __init__(self, dtype: DType, shape: tuple[int, ...], storage: object, device: Device):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.storage = storage
        self.device = device

    # -- construction -------------------------------------------------------
    @staticmethod
    def from_numpy(array: np.ndarray, dtype: DType, device: Device) -> Tensor:
        arr = normalise(array, dtype)
        # (`ascontiguousarray` makes a 0-D array 1-D: the shape is the array's)
        host = np.ascontiguousarray(arr).reshape(arr.shape)
        return Tensor(dtype, host.shape, device.upload(host, dtype), device)

    # -- access ---------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host array of the values (the storage itself on the CPU: do not
        write through it unless you mean to)."""
        if HOST_ACCESS is not None:
            HOST_ACCESS(self.storage, False)
        return self.device.download(self.storage, self.dtype, self.shape)

    def write(self, array: np.ndarray) -> None:
        """Replace the values (same shape) with `array`, converted to the dtype."""
        host = np.ascontiguousarray(normalise(array, self.dtype)).reshape(self.shape)
        if HOST_ACCESS is not None:
            HOST_ACCESS(self.storage, True)
        self.device.write(self.storage, host)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    def type_name(self) -> str:
        return f"Tensor<{self.dtype.value}, [{', '.join(map(str, self.shape))}]>"

    def clone(self) -> Tensor:
        return Tensor.from_numpy(self.numpy().copy(), self.dtype, self.device)

    def __repr__(self) -> str:
        return f"<{self.type_name()} on {self.device.name}>"


# A tile dimension written `_` in a launch (`k(z.partition([_]), ..)`): the
# autotuner picks it (`tuner/launch.py`); no partition with it ever reaches a device.
TUNER_PICKS: Any = Ellipsis


@frozen
class Partition:
    """`t.partition([..])`: a tensor split into tiles of `tile` elements.

    Tile `i` along dimension `d` covers `[i * tile[d], (i + 1) * tile[d])`,
    clipped at the tensor's edge (edge tiles are partial).
    """

    tensor: Tensor
    tile: tuple[int, ...]

    @property
    def grid(self) -> tuple[int, ...]:
        return tuple(-(-n // t) for n, t in zip(self.tensor.shape, self.tile, strict=False))

    def type_name(self) -> str:
        return f"Partition<{self.tensor.dtype.value}, [{', '.join(map(str, self.tile))}]>"


# ---------------------------------------------------------------- printing
# Tensors larger than this many elements are summarised with `...`.
SUMMARY_THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 80


def npy_dtype_help(dt: np.dtype) -> str:
    """E0713's help for a `.npy` file of a type Tile has none for (round 26: an FFT's complex64 output was told
    only the list of types, not how to keep its values)."""
    if dt.kind == "c":
        real = "float32" if dt.itemsize <= 8 else "float64"
        return (f"Tile has no complex type: save the real and imaginary parts as a last axis of 2, "
                f"`np.save(path, np.stack([a.real, a.imag], -1).astype(np.{real}))`, and compute with them as "
                f"pairs of {real.replace('float', 'f')} values")
    if dt.kind == "f":
        return "save it as float64 (`a.astype(np.float64)`), the widest float Tile has"
    return "save it as one of bool, int8..int64, uint8..uint64, float16, float32, float64"


def format_tensor(t: Tensor, values: np.ndarray | None = None) -> str:
    """`Tensor<f32, [2, 3]>` and the values, NumPy style, summarised with
    `...` when there are more than `SUMMARY_THRESHOLD` of them."""
    arr = t.numpy() if values is None else values
    header = t.type_name()
    if arr.ndim == 0:
        return f"{header} {format_scalar(arr[()], t.dtype)}"
    summarise = arr.size > SUMMARY_THRESHOLD
    cells = _shown_strings(arr, t.dtype, summarise)
    width = max((len(s) for s in cells.values()), default=1)
    body = _format_nested(arr, (), t.dtype, summarise, width, cells, indent=1)
    sep = "\n" if arr.ndim > 1 or "\n" in body else " "
    return f"{header}{sep}{body}"


def _shown_indices(n: int, summarise: bool) -> list[int | None]:
    if summarise and n > 2 * EDGE_ITEMS:
        return [*range(EDGE_ITEMS), None, *range(n - EDGE_ITEMS, n)]
    return list(range(n))


def _shown_strings(arr: np.ndarray, dtype: DType, summarise: bool) -> dict[tuple[int, ...], str]:
    out: dict[tuple[int, ...], str] = {}

    def walk(prefix: tuple[int, ...]) -> None:
        axis = len(prefix)
        if axis == arr.ndim:
            out[prefix] = format_scalar(arr[prefix], dtype)
            return
        for i in _shown_indices(arr.shape[axis], summarise):
            if i is not None:
                walk((*prefix, i))

    walk(())
    return out


def _format_nested(arr: np.ndarray, prefix: tuple[int, ...], dtype: DType, summarise: bool,
                   width: int, cells: dict[tuple[int, ...], str], indent: int) -> str:
    axis = len(prefix)
    shown = _shown_indices(arr.shape[axis], summarise)
    if axis == arr.ndim - 1:
        parts = ["..." if i is None else cells[(*prefix, i)].rjust(width) for i in shown]
        # Wrap long rows the way NumPy does, continuing under the first element.
        lines: list[str] = []
        cur = ""
        for part in parts:
            if cur and indent + len(cur) + 2 + len(part) + 2 > LINE_WIDTH:
                lines.append(cur)
                cur = part
            else:
                cur = f"{cur}, {part}" if cur else part
        lines.append(cur)
        return "[" + (",\n" + " " * indent).join(lines) + "]"
    rows = []
    for i in shown:
        if i is None:
            rows.append("...")
        else:
            rows.append(_format_nested(arr, (*prefix, i), dtype, summarise, width, cells, indent + 1))
    blank = "\n" * (arr.ndim - axis - 1)
    joiner = "," + blank + " " * indent
    return "[" + joiner.join(rows) + "]"
