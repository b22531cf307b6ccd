"""`load_npy(path)` and `t.save_npy(path)`: host tensors to and from NumPy's
`.npy` files, with located errors (E0712 a file that cannot be read or
written, E0713 one that is not a `.npy` array a Tile tensor can hold).

Semantics the rest of the toolchain may rely on:
- `load_npy(path)` / `t.save_npy(path)` resolve a relative path against the
  current directory and use exactly that path (NumPy's `np.save` would add
  `.npy` to a name without it). A bf16 tensor is saved as float32.
- A save writes beside the file and renames, so a reader never sees a part-
  written file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tilelang.diagnostics.codes import runtime as rcodes
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.limits import MAX_RANK
from tilelang.runtime.declared import npy_type_mismatch
from tilelang.runtime.tensor import Tensor, dtype_of_array, npy_dtype_help
from tilelang.source import Span
from tilelang.syntax import ast


def load_npy(path: str, call: ast.Call, dtype_named: Callable[[str], DType | None], device: Any) -> Tensor:
    """`load_npy(path)` at `call`: the file's array as a tensor on `device`; `dtype_named` resolves
    a `load_npy::<T>` (a generic call's `T`) for the written type's check."""
    big = next((d for d in _npy_header_shape(path) or () if d >= 1 << 31), None)
    if big is not None:  # read before the data: gigabytes that could never be a tensor
        raise _too_long_npy(path, _npy_header_shape(path) or (), big, call)
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot read `{path}`: no such file")
                        .primary(call.span, "loaded here")
                        .with_help("paths are relative to the directory `tilec run` was started in")) from None
    except OSError as e:
        raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot read `{path}`: {_reason(e)}")
                        .primary(call.span, "loaded here")
                        .with_help("check the path and its permissions (relative paths start in the directory `tilec run` was started in)")) from None
    except (ValueError, EOFError):
        raise TileError(Diagnostic.error(rcodes.NPY_FORMAT, f"`{path}` is not a `.npy` file")
                        .primary(call.span, "loaded here")
                        .with_help("write it with NumPy's `np.save` or Tile's `t.save_npy(path)`")) from None
    if not isinstance(arr, np.ndarray):
        raise TileError(Diagnostic.error(rcodes.NPY_FORMAT, f"`{path}` does not hold one array")
                        .primary(call.span, "loaded here")
                        .with_help("save one array with NumPy's `np.save` (not `np.savez`)"))
    if arr.ndim > MAX_RANK:  # NumPy's own operations stop at 32 or 64 (an internal error later)
        raise TileError(Diagnostic.error(
            rcodes.NPY_FORMAT, f"`{path}` holds an array of {arr.ndim} dimensions; Tile's tensors have at "
                               f"most {MAX_RANK}")
            .primary(call.span, "loaded here")
            .with_help("save it reshaped to fewer dimensions (size-1 ones add nothing)"))
    big = next((d for d in arr.shape if d >= 1 << 31), None)
    if big is not None:  # a tensor's dimensions are `i32` (kernels index with them)
        raise _too_long_npy(path, arr.shape, big, call)
    native = arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in ("=", "|") else arr.dtype
    dt = dtype_of_array(np.empty(0, dtype=native))
    if dt is None:
        raise TileError(Diagnostic.error(
            rcodes.NPY_FORMAT, f"`{path}` holds `{arr.dtype}` values, which Tile has no type for")
            .primary(call.span, "loaded here").with_help(npy_dtype_help(arr.dtype)))
    if (bad := npy_type_mismatch(call, path, dt, dtype_named)) is not None:
        raise TileError(bad)  # `load_npy::<f16>` of an `f32` file (hrev29)
    return Tensor.from_numpy(arr.astype(native), dt, device)  # a 0-D array loads 0-D (`Tensor.from_numpy`)


def save_npy(t: Tensor, path: str, span: Span) -> None:
    """`t.save_npy(path)` at `span`: exactly `path`, written whole or not at all."""
    try:
        # exactly `path`: `np.save(name)` would write `name.npy`; written
        # beside it and renamed, so a reader never sees a part-written file
        # (two programs saving and loading one path at once)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
        try:
            with open(tmp, "wb") as f:
                np.save(f, t.numpy())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as e:
        raise TileError(Diagnostic.error(rcodes.NPY_IO, f"cannot write `{path}`: {_reason(e)}")
                        .primary(span, "saved here")
                        .with_help("check that the directory exists and can be written")) from None


def _npy_header_shape(path: str) -> tuple[int, ...] | None:
    """The shape a `.npy` file's header gives, read without its data; None
    where it cannot be read (`np.load` then says why)."""
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read is None:
                return None
            shape = read(f)[0]
    except (OSError, ValueError, EOFError):
        return None
    return tuple(int(d) for d in shape) if isinstance(shape, tuple) else None


def _too_long_npy(path: str, shape: tuple[int, ...], big: int, call: Any) -> TileError:
    """E0713: a `.npy` array with a dimension past `i32`, which a tensor's dimensions are."""
    return TileError(Diagnostic.error(
        rcodes.NPY_FORMAT, f"`{path}` holds an array of shape {list(shape)}: a dimension of {big} elements "
                           f"is more than the {(1 << 31) - 1} a Tile tensor's dimension holds")
        .primary(call.span, "loaded here")
        .with_help("save it reshaped so that no dimension has more than 2147483647 elements"))


def _reason(e: BaseException) -> str:
    text = getattr(e, "strerror", None) or str(e)
    return text[:1].lower() + text[1:] if text else type(e).__name__

