"""The Python API's launcher for one compiled kernel variant (`FastLaunch`,
made by `CudaDevice.fast_launcher`): everything but the tensor addresses and
scalar values packed once, a launch one driver call (through the native
launcher of `cuda_native.py` when it is built, else cuda.bindings).

Slots a launch must fill per call (`LaunchSlots`) are filled here too, so
Hopper's kernels launch without the general path (`CudaDevice._run_slow`):
a TMA descriptor ("tmap:") re-encoded only when its tensor's address
changes (`tensor_map`, by value into its parameter cell); the counters of
`last_block`, queues and split walks ("arrive:", "queue:", "split",
"splitws:") the stream's buffers of `cuda_arrive.Counters`, looked up once
per stream; a kernel with device asserts a pair of error words per launch,
registered for the wait as the general path does. A launch on a stream
being captured into a graph, of a kernel with counters or asserts, takes
the general path (the capture's own buffers; the graph's error words)."""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from typing import Any

from tilelang.runtime.cuda_driver import (
    PackedArgs,
    _handle_int,
    _raw_launch_preconverted,
    _scalar_bits,
    _stream_pointer,
    driver_error,
    launch_mode,
)
from tilelang.runtime.cuda_native import _STATE as _NATIVE
from tilelang.runtime.cuda_native import _wanted as native_wanted
from tilelang.runtime.cuda_native import native


class LaunchSlots:
    """The per-launch slots of one `FastLaunch` (see the module): written under
    the launcher's lock, just before the driver call (`write`), and the
    launch's error words registered or given back after it (`done`)."""

    __slots__ = ("asserts", "capture_check", "counters", "device", "err", "last", "stream", "tmaps", "word")

    def __init__(self, device: Any, tmaps: tuple[tuple[Any, int, tuple[Any, ...]], ...],
                 counters: tuple[tuple[Any, str], ...], grids: tuple[tuple[int, ...], tuple[int, ...]],
                 err: Any, asserts: tuple[Any, Any, tuple[int, ...]] | None) -> None:
        self.device = device
        # (parameter cell, argument index, `tensor_map`'s arguments after the address); the address encoded
        self.tmaps = tmaps
        self.last = [-1] * len(tmaps)
        # (cell, slot) of the counter slots, the grids `Counters.for_slot` takes (logical, CUDA)
        self.counters = (counters, grids)
        self.stream: Any = None  # the stream whose counter buffers the cells hold
        self.err = err  # the error word's cell (asserts only)
        self.asserts = asserts  # (the ABI, the launch's span, the logical grid), or None
        self.word = -1  # the error word the launch being made took
        self.capture_check = bool(counters) or asserts is not None

    def write(self, args: list[Any], stream: Any, raw: int | None) -> bool:
        """Fill the slots for a launch of `args` on `stream`; False: the general path (nothing taken)."""
        dev = self.device
        if self.capture_check:
            nat = _NATIVE["module"]
            status = nat.capturing(raw) if nat is not None and raw is not None else -1
            if status != 0 and (status > 0 or dev.is_capturing(stream)):
                return False  # the capture's counter buffers and error words: `_run_slow`
        for k, (cell, i, spec) in enumerate(self.tmaps):
            p = args[i]
            if p != self.last[k]:
                if p & 15:  # a TMA variant was compiled for a 16-byte aligned tensor
                    return False
                from tilelang.runtime.cuda_module import tensor_map

                ctypes.memmove(cell, tensor_map(dev.ctx, p, *spec), 128)
                self.last[k] = p
        counters, (grid, launch) = self.counters
        if counters and stream is not self.stream:
            for cell, what in counters:
                cell.value = dev._arrive.for_slot(stream, what, grid, launch, False)
            self.stream = stream
        if self.asserts is not None:
            self.word = dev._take_err_word()
            self.err.value = dev._err.ptr + 4 * self.word
        return True

    def done(self, ok: bool, stream: Any) -> None:
        """After the driver call (`ok`: it launched): the launch's error words wait for its check."""
        if self.asserts is None:
            return
        abi, span, grid = self.asserts
        entry = (self.word, abi, span, grid)
        if ok:
            self.device._pending_asserts[id(stream)].append(entry)
        else:
            self.device._release_err_words([entry])

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
        "_slots",
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
        slots: LaunchSlots | None = None,
    ) -> None:
        self.device = device
        self._slots = slots  # the per-launch slots (TMA descriptors, counters, error words), or None
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
                if slots is None and all(kind in NATIVE_SCALARS for _, _, kind in scalars):
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
        guards: tuple[tuple[int, Any], ...] = (), kernel: Any = None, logical: tuple[int, ...] | None = None,
        span: Any = None,
    ) -> FastLaunch | None:
        """The launcher of variant `fn`/`abi` on CUDA grid `grid` for launches like `args` (CudaBuffers and
        scalars; `index`: parameter name -> argument index); None where a slot needs the general path.
        `kernel` (its Tile IR: the tensors' element types), `logical` (the launch's logical grid) and `span`
        let it take TMA descriptors, counters and device asserts (`LaunchSlots`)."""
        values: list[Any] = []
        ptrs: list[tuple[int, int, bool]] = []  # (slot, arg index, 16-byte aligned)
        scalars: list[tuple[int, int, str]] = []  # (slot, arg index, ctypes kind)
        tmaps: list[tuple[int, int, tuple[Any, ...]]] = []  # (slot, arg index, `tensor_map` arguments)
        counters: list[tuple[int, str]] = []  # (slot, its "arrive:"/"queue:"/"split"/"splitws:" kind)
        err_at = -1  # the error word's slot, where the kernel has asserts
        asserts = getattr(abi, "asserts", ())
        for n, slot in enumerate(abi.slots):
            what = slot.what
            if what == "err":  # word 0: the shared word of kernels without asserts
                if asserts:
                    if logical is None:
                        return None
                    err_at = n
                values.append(dev._err.ptr)
                continue
            if what.startswith(("arrive:", "queue:", "split")):
                if logical is None:
                    return None
                counters.append((n, what))
                values.append(0)  # the stream's buffer, at the launch (`LaunchSlots.write`)
                continue
            if slot.param not in index:
                return None
            i = index[slot.param]
            a = args[i]
            if what == "ptr":
                ptrs.append((n, i, a.ptr % 16 == 0))
                values.append(a.ptr)
            elif what.startswith("dim") and what[3:].isdigit():
                values.append(a.shape[int(what[3:])])
            elif what == "value":
                scalars.append((n, i, slot.kind))
                values.append(a.item() if hasattr(a, "item") else a)
            elif what.startswith("tmap:") and kernel is not None:
                from tilelang.runtime.cuda_module import tensor_map

                _, box, sw = what.split(":")
                spec = (tuple(a.shape), kernel.tensor(slot.param).dtype.value,
                        tuple(int(x) for x in box.split("x")), int(sw), span)
                tmaps.append((n, i, spec))
                values.append(tensor_map(dev.ctx, a.ptr, *spec))
            else:
                return None
        g = tuple(grid) + (1,) * (3 - len(grid))
        if g[0] * g[1] * g[2] == 0:
            return None
        packed = PackedArgs([s.kind for s in abi.slots], values)
        cells = packed.values
        slots = None
        if tmaps or counters or err_at >= 0:
            slots = LaunchSlots(
                dev,
                tuple((cells[n], i, spec) for n, i, spec in tmaps),
                tuple((cells[n], what) for n, what in counters),
                (tuple(logical or ()), g),
                cells[err_at] if err_at >= 0 else None,
                (abi, span, tuple(logical or ())) if err_at >= 0 else None,
            )
            slots.last = [args[i].ptr for _, i, _ in tmaps]  # encoded above
        d = dev.ctx.d
        raw = _raw_launch_preconverted() if launch_mode() == "ctypes" else None
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
            slots,
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
        slots = self._slots
        if go is not None and raw is not None:
            ptrs = args if self._direct else [args[i] for i in self._ptr_args]
            with self._lock:  # the binding's path (another thread's capture) writes the block too
                if slots is not None and not slots.write(args, stream, raw):
                    return False
                try:
                    for cell, i, kind in self._scalars:
                        cell.value = _scalar_bits(kind, args[i])
                    err = go(raw, *ptrs)
                except BaseException:
                    if slots is not None:
                        slots.done(False, stream)
                    raise
                if slots is not None:
                    slots.done(err == 0, stream)
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
            if slots is not None and not slots.write(args, stream, raw):
                return False
            try:
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
            except BaseException:
                if slots is not None:
                    slots.done(False, stream)
                raise
            if slots is not None:
                slots.done(err == self._ok, stream)
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
        raise driver_error(err, f"launching `{self._call[7]}`")
