"""The Python API's launcher for one compiled kernel variant (`FastLaunch`,
made by `CudaDevice.fast_launcher`): everything but the tensor addresses and
scalar values packed once, a launch one driver call."""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from tilelang.runtime.cuda_driver import (
    PackedArgs,
    _error_name,
    _handle_int,
    _raw_launch_preconverted,
    _scalar_bits,
    _stream_pointer,
    cuda_error,
)


class FastLaunch:
    """One compiled kernel variant, grid and block fixed, its `void* params[]`
    packed once: a launch writes this call's tensor addresses and scalar
    values into the packed slots and calls the driver. `cuLaunchKernel`
    copies the parameters when it is called, so the slots may be rewritten
    by the next launch at once (a lock keeps two threads from interleaving).

    A tensor address with another 16-byte alignment than the variant was
    compiled for returns False (the caller takes the general path, which
    picks the right variant); dims and tensor kinds are fixed by the caller's
    cache key (`tilelang/api/fastpath.py`).
    """

    __slots__ = (
        "_call",
        "_lock",
        "_ok",
        "_params",
        "_ptrs",
        "_raw",
        "_retrying",
        "_scalars",
        "device",
        "packed",
    )

    def __init__(
        self,
        device: Any,
        packed: PackedArgs,
        ptrs: tuple[tuple[Any, int, bool], ...],
        scalars: tuple[tuple[Any, int, str], ...],
        call: tuple[Any, ...],
        ok: Any,
    ) -> None:
        self.device = device
        self.packed = packed
        self._ptrs = ptrs  # (ctypes cell, argument index, 16-byte aligned)
        self._scalars = scalars  # (ctypes cell, argument index, ctypes kind)
        self._call = call
        self._ok = ok
        self._raw = False  # the driver through ctypes rather than the binding
        self._params = ctypes.c_void_p(packed.address)
        self._retrying = False
        self._lock = threading.Lock()

    @staticmethod
    def make(
        dev: Any, fn: Any, abi: Any, grid: tuple[int, ...], args: list[Any], index: dict[str, int]
    ) -> FastLaunch | None:
        values: list[Any] = []
        ptrs: list[tuple[int, int, bool]] = []  # (slot, arg index, 16-byte aligned)
        scalars: list[tuple[int, int, str]] = []  # (slot, arg index, ctypes kind)
        for n, slot in enumerate(abi.slots):
            if slot.what == "err":  # word 0: the shared word of kernels without asserts
                values.append(dev._err.ptr)
                continue
            if slot.param not in index:
                return None
            i = index[slot.param]
            a = args[i]
            if slot.what == "ptr":
                ptrs.append((n, i, a.ptr % 16 == 0))
                values.append(a.ptr)
            elif slot.what.startswith("dim") and slot.what[3:].isdigit():
                values.append(a.shape[int(slot.what[3:])])
            elif slot.what == "value":
                scalars.append((n, i, slot.kind))
                values.append(a.item() if hasattr(a, "item") else a)
            else:
                return None
        g = tuple(grid) + (1,) * (3 - len(grid))
        if g[0] * g[1] * g[2] == 0:
            return None
        packed = PackedArgs([s.kind for s in abi.slots], values)
        cells = packed.values
        d = dev.ctx.d
        raw = _raw_launch_preconverted() if os.environ.get("TILEC_LAUNCH") == "ctypes" else None
        if raw is not None:
            try:
                handle: Any = ctypes.c_void_p(_handle_int(fn.handle))
            except TypeError:
                raw = None
        fl = FastLaunch(
            dev,
            packed,
            tuple((cells[n], i, aligned) for n, i, aligned in ptrs),
            tuple((cells[n], i, kind) for n, i, kind in scalars),
            (
                raw or d.cuLaunchKernel,
                handle if raw is not None else fn.handle,
                g[0],
                g[1],
                g[2],
                abi.num_threads,
                abi.smem_bytes,
                fn.name,
            ),
            0 if raw is not None else d.CUresult.CUDA_SUCCESS,
        )
        fl._raw = raw is not None
        return fl

    def retry(self, args: list[Any], stream: Any) -> bool:
        self._retrying = True
        try:
            return self(args, stream)
        finally:
            self._retrying = False

    def __call__(self, args: list[Any], stream: Any) -> bool:
        """Launch with `args` (tensor addresses as ints, scalars as values, in
        the kernel's parameter order) on `stream`; False: take the general path."""
        launch, handle, gx, gy, gz, threads, smem, name = self._call
        with self._lock:
            for cell, i, aligned in self._ptrs:
                ptr = args[i]
                if (ptr & 15 == 0) is not aligned:
                    return False
                cell.value = ptr
            for cell, i, kind in self._scalars:
                cell.value = _scalar_bits(kind, args[i])
            if self._raw:  # libcuda through ctypes (`TILEC_LAUNCH=ctypes`): a plain int result
                err = launch(
                    handle,
                    gx,
                    gy,
                    gz,
                    threads,
                    1,
                    1,
                    smem,
                    _stream_pointer(stream),
                    self._params,
                    None,
                )
            else:
                (err,) = launch(
                    handle, gx, gy, gz, threads, 1, 1, smem, stream, self.packed.address, 0
                )
        if err != self._ok:
            d = self.device.ctx.d
            if self._raw:
                err = d.CUresult(err)
            if (
                err in (d.CUresult.CUDA_ERROR_INVALID_CONTEXT, d.CUresult.CUDA_ERROR_INVALID_HANDLE)
                and not self._retrying
            ):
                # the caller does not make the context current before each launch
                # (another library's thread usually has it current already); when
                # it was not, the driver refuses the launch and nothing ran
                self.device.ctx.make_current()
                return self.retry(args, stream)
            raise cuda_error(f"launching `{name}`", _error_name(err))
        self.device.launches += 1
        return True
