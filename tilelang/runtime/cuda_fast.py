"""The Python API's launcher for one compiled kernel variant (`FastLaunch`,
made by `CudaDevice.fast_launcher`): everything but the tensor addresses and
scalar values packed once, a launch one driver call (through the native
launcher of `cuda_native.py` when it is built, else cuda.bindings)."""

from __future__ import annotations

import ctypes
import functools
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
from tilelang.runtime.cuda_native import _STATE as _NATIVE
from tilelang.runtime.cuda_native import _wanted as native_wanted
from tilelang.runtime.cuda_native import native

# The kinds of numbers the native launcher writes itself (`cuda_native_plan.py`'s
# `write_number` takes these codes), as `_scalar_bits` and ctypes would: integers
# wrapped to their width, floats rounded from a double, booleans 0/1 (the GPU's
# parameters have these kinds: a bool travels as i32, f16/bf16 as f32). A kernel
# with a parameter of another kind launches through the Python path.
NATIVE_SCALARS = {
    "i8": 1, "i16": 2, "i32": 3, "i64": 4, "u8": 5, "u16": 6, "u32": 7, "u64": 8,
    "bool": 9, "f32": 10, "f64": 11,
}  # fmt: skip


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
        "_aligned",
        "_block",
        "_call",
        "_direct",
        "_go",
        "_guards",
        "_lock",
        "_native",
        "_native_own",
        "_native_own_scalars",
        "_ok",
        "_own",
        "_params",
        "_ptr_args",
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
        ptrs: tuple[tuple[int, int, bool], ...],
        scalars: tuple[tuple[Any, int, str], ...],
        call: tuple[Any, ...],
        ok: Any,
        nargs: int = -1,
        guards: tuple[tuple[int, Any], ...] = (),
    ) -> None:
        self.device = device
        # (argument index, value): a launch with another value takes the general path (the variant was
        # picked for this one: the attention walk's split form, `CudaDevice._choose`)
        self._guards = guards
        self.packed = packed
        # The tensor addresses live side by side in one block (the parameter
        # array points each pointer slot at its element), so a launch writes
        # them all with one slice assignment.
        self._block = (ctypes.c_uint64 * len(ptrs))(*[packed.values[n].value for n, _, _ in ptrs])
        base = ctypes.addressof(self._block)
        for k, (n, _, _) in enumerate(ptrs):
            packed.array[n] = base + 8 * k
        self._ptr_args = tuple(i for _, i, _ in ptrs)  # argument index of each block element
        self._aligned = tuple(aligned for _, _, aligned in ptrs)  # as compiled: 16-byte aligned
        # the arguments are exactly the addresses, in block order (no numbers)
        self._direct = nargs == len(ptrs) and self._ptr_args == tuple(range(len(ptrs)))
        self._scalars = scalars  # (ctypes cell, argument index, ctypes kind)
        self._call = call
        self._ok = ok
        self._raw = False  # the driver through ctypes rather than the binding
        self._params = ctypes.c_void_p(packed.address)
        self._retrying = False
        self._lock = threading.Lock()
        # the native launcher's fixed arguments (the function, grid, block size,
        # shared memory, parameter array, address block, alignment mask), or
        # None where it cannot take this variant
        self._native: tuple[int, ...] | None = None
        self._native_own: tuple[int, ...] | None = None  # the same over `_own`
        # per number of the kernel: (its cell in `_own`, `NATIVE_SCALARS` code, argument index)
        self._native_own_scalars: tuple[tuple[int, int, int], ...] = ()
        self._own: Any = None
        self._go: Any = None  # the native launch with `_native` bound, once it is loaded
        if (
            len(ptrs) <= 64
            and native_wanted()
            and not os.environ.get("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM")
        ):
            try:
                f: int | None = int(call[1])  # a CUfunction's raw value
            except (TypeError, ValueError):
                f = None
            if isinstance(f, int):
                gx, gy, gz, threads, smem = call[2:7]
                mask = sum(1 << k for k, a in enumerate(self._aligned) if a)
                self._native = (f, gx, gy, gz, threads, smem, packed.address, base, mask)
                if all(kind in NATIVE_SCALARS for _, _, kind in scalars):
                    # A parameter array, address block and number cells of its own
                    # for the API's one-function launch (`api/operation.py`,
                    # `_make_fast`): the native launch writes and launches holding
                    # the GIL, so it needs no lock as long as nothing else writes
                    # them (the binding's path, on another thread, writes `_block`
                    # and the packed cells).
                    own = (ctypes.c_uint64 * len(ptrs))(*self._block)
                    array = (ctypes.c_void_p * len(packed.array))(*packed.array)
                    own_base = ctypes.addressof(own)
                    for k, (n, _, _) in enumerate(ptrs):
                        array[n] = own_base + 8 * k
                    cells = []
                    numbers = []
                    for cell, i, kind in scalars:
                        n = next(n for n, v in enumerate(packed.values) if v is cell)
                        mine = type(cell)(cell.value)
                        array[n] = ctypes.addressof(mine)
                        cells.append(mine)
                        numbers.append((ctypes.addressof(mine), NATIVE_SCALARS[kind], i))
                    self._own = (own, array, cells)  # kept alive with the launcher
                    self._native_own_scalars = tuple(numbers)
                    self._native_own = (
                        f, gx, gy, gz, threads, smem, ctypes.addressof(array), own_base, mask
                    )  # fmt: skip

    @staticmethod
    def make(
        dev: Any, fn: Any, abi: Any, grid: tuple[int, ...], args: list[Any], index: dict[str, int],
        guards: tuple[tuple[int, Any], ...] = (),
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
            tuple(ptrs),
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
            len(args),
            guards,
        )
        fl._raw = raw is not None
        native()  # start building (or load) the native launcher; launches use it once ready
        return fl

    def retry(self, args: list[Any], stream: Any, raw: int | None = None) -> bool:
        self._retrying = True
        try:
            return self(args, stream, raw)
        finally:
            self._retrying = False

    def __call__(self, args: list[Any], stream: Any, raw: int | None = None) -> bool:
        """Launch with `args` (tensor addresses as ints, scalars as values, in
        the kernel's parameter order) on `stream` (`raw`: its handle's value,
        for the native launcher); False: take the general path."""
        for i, v in self._guards:
            if args[i] != v:
                return False
        go = self._go
        if go is None and self._native is not None and _NATIVE["module"] is not None:
            go = self._go = functools.partial(_NATIVE["module"].launch, *self._native)
        if go is not None and raw is not None:
            ptrs = args if self._direct else [args[i] for i in self._ptr_args]
            with self._lock:  # the binding's path (another thread's capture) writes the block too
                for cell, i, kind in self._scalars:
                    cell.value = _scalar_bits(kind, args[i])
                err = go(raw, *ptrs)
            if err == 0:
                self.device.launches += 1
                return True
            if err == -1:  # an address aligned otherwise than the variant was compiled for
                return False
            return self._failed(self.device.ctx.d.CUresult(err), args, stream, raw)
        launch, handle, gx, gy, gz, threads, smem, _name = self._call
        ptrs = args if self._direct else [args[i] for i in self._ptr_args]
        for ptr, aligned in zip(ptrs, self._aligned, strict=True):
            if (ptr & 15 == 0) is not aligned:
                return False
        with self._lock:
            if ptrs:
                self._block[:] = ptrs
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
            if self._raw:
                err = self.device.ctx.d.CUresult(err)
            return self._failed(err, args, stream, raw)
        self.device.launches += 1
        return True

    def _failed(self, err: Any, args: list[Any], stream: Any, raw: int | None) -> bool:
        """A launch the driver refused (`err`, a CUresult): retried once after
        making the context current when that was the reason, else raised."""
        d = self.device.ctx.d
        if (
            err in (d.CUresult.CUDA_ERROR_INVALID_CONTEXT, d.CUresult.CUDA_ERROR_INVALID_HANDLE)
            and not self._retrying
        ):
            # the caller does not make the context current before each launch
            # (another library's thread usually has it current already); when
            # it was not, the driver refuses the launch and nothing ran
            self.device.ctx.make_current()
            return self.retry(args, stream, raw)
        raise cuda_error(f"launching `{self._call[7]}`", _error_name(err))
