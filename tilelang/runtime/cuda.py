"""The CUDA runtime: devices, memory, modules, launches and graphs (cuda-python).

The context, its events and graphs are `cuda_context.py`'s, memory `cuda_memory.py`'s pool, loaded code
`cuda_module.py`'s modules and functions (and TMA descriptors), a launch's located errors (shared memory, device
asserts) `cuda_asserts.py`'s; their names are importable from here too. With `cuda_driver.py` (checked
driver calls, parameter packing, raw handles) and `cuda_fast.py` (the
Python API's launcher), the only modules of
tilec that touch `cuda.bindings`; `cuda_driver.py` imports it lazily, so
importing these on a machine without CUDA costs nothing and
`is_available()` answers False instead of raising.

Invariants:
- Every driver call goes through `_check`, which turns a failing `CUresult`
  into a `TileError` carrying a located diagnostic (E0610) when the caller
  passes the source span of the launch, and an unlocated one otherwise.
- Device memory comes from a size-bucketed pool: a freed buffer goes back to
  its bucket and is reused, so thousands of launches allocate nothing new.
- One primary context per process, retained once, made current on every
  public entry point (cheap; needed when other libraries switch contexts);
  the fast launcher makes it current only when the driver refuses a launch.
- A buffer holds the dtype's storage type (`DType.np_dtype`, as the `Device`
  contract says): bf16 tensors are f32 arrays of bf16-rounded values on the
  GPU too, bool is one byte. The kernels read and write exactly that.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import weakref
from collections import defaultdict, deque
from typing import Any

import numpy as np

from tilelang.diagnostics.model import ICE, TileError
from tilelang.env_switch import clear_on_codegen_change, codegen_key
from tilelang.ir import arg_dims
from tilelang.runtime import cuda_pdl, occupancy
from tilelang.runtime import trace as trace_rt
from tilelang.runtime.cuda_arrive import Counters, launch_grid
from tilelang.runtime.cuda_asserts import assert_diagnostic, assert_words, fits_smem
from tilelang.runtime.cuda_context import (  # noqa: F401  (also the names tools use here)
    Context,
    DeviceInfo,
    Graph,
    Timer,
    context,
)
from tilelang.runtime.cuda_driver import (  # noqa: F401  (also the names tests and tools use here)
    CTYPES,
    PackedArgs,
    _check,
    _driver,
    _error_name,
    _handle_int,
    _raw_launch,
    _scalar_bits,
    cuda_error,
    is_available,
    launch_mode,
    why_unavailable,
)
from tilelang.runtime.cuda_fast import FastLaunch
from tilelang.runtime.cuda_link import (  # noqa: F401  (link_arch: also the name tools use here)
    _nvjitlink_cubin,
    link_arch,
    nvjitlink_keeps,
    prewarm_routes,
    prewarm_toolchain,
    ptx_arch,
)
from tilelang.runtime.cuda_memory import (  # noqa: F401  (the names tests use here)
    BufferPool,
    DeviceBuffer,
    _bucket,
    bf16_bits,
    bf16_values,
)
from tilelang.runtime.cuda_module import _TMAPS, Function, Module, PtxRejected, tensor_map  # noqa: F401
from tilelang.runtime.cuda_native import _STATE as _NATIVE
from tilelang.runtime.device import Device
from tilelang.source import Span


# ---------------------------------------------------------------- variants' modules
def _module_key(ck: Any, cv: int | None) -> str:
    """The name a variant's loaded module is memoised by (`Context.load_ptx`): its PTX's compile key, and the
    function attributes the variant sets on its CUfunction, the preferred carveout of a uniform setting
    (`occupancy.carve_abi`) or of a `max_blocks` bound (`occupancy.cap_abi`). Variants whose texts are the same
    share a compile and a module (hattn5), so two that set other carveouts need their own copies: `max_blocks`
    is not in the text, and the tuner's candidates (`api/tuning._with_hints`) or a generic bound's instances
    set one CUfunction's carveout each in turn, the earlier ones' launches then running under the last's.
    (The dynamic shared-memory limit only rises, on the one `Function` of the shared handle: no conflict.)"""
    base = ck.key or str(hash(ck.ptx))
    if cv is not None:
        return f"{base}+cv{cv}"
    return f"{base}+mb{ck.abi.max_blocks}" if ck.abi.max_blocks else base


_FLOATS = (float, np.floating)  # the scalar arguments whose zero has a sign (`CudaDevice.run`'s key)


# ---------------------------------------------------------------- the Device of the host runtime
class CudaBuffer:
    """A tensor's storage on the GPU: a pooled allocation plus the host-side view facts."""

    __slots__ = ("__weakref__", "bf16", "buf", "np_dtype", "shape")

    def __init__(self, buf: DeviceBuffer, shape: tuple[int, ...], np_dtype: np.dtype, bf16: bool = False) -> None:
        self.buf = buf
        self.shape = tuple(shape)
        self.np_dtype = np.dtype(np_dtype)
        # 2-byte bfloat16 memory (np_dtype is uint16, the bits); the host side
        # sees f32 values, as everywhere else in the runtime
        self.bf16 = bf16

    @property
    def ptr(self) -> int:
        return self.buf.ptr

    def __repr__(self) -> str:
        return f"CudaBuffer(0x{self.ptr:x}, shape={self.shape}, dtype={self.np_dtype})"


class PreparedKernel:
    """One lowered kernel, compiled lazily per set of specialisation facts."""

    def __init__(self, kernel_ir: Any, arch: str) -> None:
        _PREPARED.add(self)
        self.ir = kernel_ir
        self.arch = arch
        self.variants: dict[tuple[Any, ...], tuple[Any, Function]] = {}  # facts -> (abi, function)
        self.packed: dict[tuple[Any, ...], PackedArgs] = {}  # launch args -> packed C args (bounded)
        self.fast: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # (arg ids, grid, stream) -> everything a launch needs
        # the `&Tensor` dims its type fixes, which the code takes as constants (`ir/arg_dims.py`): checked
        # against each launch's tensors by `_run_slow` and `fast_launcher` (the hits of `run` are their buffers)
        self.fixed = arg_dims.fixed_dims(kernel_ir) if hasattr(kernel_ir, "params") else ()


_PREPARED: weakref.WeakSet[PreparedKernel] = weakref.WeakSet()  # their `fast` memos, dropped on a codegen switch's
clear_on_codegen_change(_PREPARED, "fast")  # write (`env_switch`; the variants are keyed by the switches' values)


class CudaDevice(Device):
    """`tilelang.runtime.device.Device` for NVIDIA GPUs (see that module for the contract).

    Launches go to CUDA streams; `None` is this device's main stream, which
    also carries every host<->device copy, so copies and default-stream
    launches are ordered without extra synchronisation.
    """

    name = "cuda"
    kind = "gpu"

    def __init__(self, index: int = 0, out: Any = None) -> None:
        # `out` receives each line of device `print` (None: stdout), written when
        # the printing launch has finished (see `_flush_prints`).
        self.out = out
        for bad in (occupancy.BAD_SETTING, cuda_pdl.BAD_SETTING, trace_rt.BAD_SETTING):
            if bad is not None:  # a switch read as the runtime's modules were imported: E0604 here, before any work
                from tilelang.env_switch import SwitchError

                raise SwitchError(*bad)
        self.ctx = context() if index == 0 else Context(index)
        self.arch = self._ptx_arch()
        # Import llvmlite and build the target machine while the host program
        # gets going: a cold first launch then pays only for its own kernel.
        prewarm_toolchain(self.arch)
        # And ready the PTX -> cubin routes (the driver's JIT, nvJitLink).
        prewarm_routes(self.ctx.ctx, self.arch)
        self.launches = 0
        self._streams: list[Any] = []
        # (error word, kernel ABI, launch span, logical grid) by id(stream)
        self._pending_asserts: dict[int, list[tuple[int, Any, Span | None, tuple[int, ...]]]] = defaultdict(list)
        # Error words for device asserts: two int32 per launch with asserts, in one buffer: the
        # failed assert's number, then (for an assert in a tile walk, queue or `last_block`
        # region) the place it failed at (`ir.Assert.order`, `codegen/debug.py`).
        self._err_words = 4096
        self._err = self.ctx.pool.alloc(4 * self._err_words)
        _check(self.ctx.d.cuMemsetD8(self._err.ptr, 0, 4 * self._err_words), "cuMemsetD8")
        self._err_next = 2  # words 0 and 1 are the shared words of assert-free kernels
        # error word -> how many holders may still write it: launches not yet checked
        # (`_check_asserts`) and live graphs that captured a launch with it (`_take_err_word`)
        self._err_busy: dict[int, int] = {}
        self._err_free: deque[int] | None = None  # the pairs no one holds (`_take_err_word`)
        self._graph_asserts: dict[int, list[tuple[int, Any, Span | None, tuple[int, ...]]]] = {}
        self._capturing: set[int] = set()  # id() of the streams being captured into a graph
        self._capture_prints: dict[int, list[tuple[DeviceBuffer, Any]]] = defaultdict(list)  # by id(stream)
        self._graph_prints: dict[int, list[tuple[DeviceBuffer, Any]]] = {}  # by id(graph)
        self._arrive = Counters(self.ctx, _check)  # `if last_block`'s group counters (cuda_arrive.py)

    def _ptx_arch(self) -> str:
        return ptx_arch(self.ctx.info.major, self.ctx.info.minor)

    # -- memory ---------------------------------------------------------------
    def upload(self, host: np.ndarray, dtype: Any = None) -> CudaBuffer:
        """`dtype` (a `DType`) bf16: the f32 host values become 2-byte bfloat16
        memory; without it a bf16 tensor keeps f32 memory, which kernels read
        just as well (`TensorFacts.bf16_f32`)."""
        from tilelang.dtypes import DType

        bf16 = dtype is DType.BF16 and np.dtype(host.dtype) == np.float32
        arr = bf16_bits(host) if bf16 else np.ascontiguousarray(host)
        raw = arr.view(np.uint8) if arr.dtype == np.bool_ else arr
        buf = self.ctx.pool.alloc(max(1, raw.nbytes))
        if raw.nbytes:
            d = self.ctx.d
            _check(d.cuMemcpyHtoDAsync(buf.ptr, raw.ctypes.data, raw.nbytes, self.ctx.stream), "cuMemcpyHtoDAsync")
            self.ctx.synchronize()  # `host` may be freed once we return
        return CudaBuffer(buf, arr.shape, arr.dtype, bf16)

    def download(self, buffer: CudaBuffer, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, dtype=buffer.np_dtype)
        raw = out.view(np.uint8) if out.dtype == np.bool_ else out
        if raw.nbytes:
            d = self.ctx.d
            _check(d.cuMemcpyDtoHAsync(raw.ctypes.data, buffer.ptr, raw.nbytes, self.ctx.stream), "cuMemcpyDtoHAsync")
            self.ctx.synchronize()
        return bf16_values(out) if buffer.bf16 else out

    def write(self, buffer: CudaBuffer, host: np.ndarray) -> None:
        if buffer.bf16:
            arr = bf16_bits(np.asarray(host, dtype=np.float32))
        else:
            arr = np.ascontiguousarray(host, dtype=buffer.np_dtype)
        raw = arr.view(np.uint8) if arr.dtype == np.bool_ else arr
        assert raw.nbytes <= buffer.buf.capacity
        if raw.nbytes:
            d = self.ctx.d
            _check(d.cuMemcpyHtoDAsync(buffer.ptr, raw.ctypes.data, raw.nbytes, self.ctx.stream), "cuMemcpyHtoDAsync")
            self.ctx.synchronize()

    # -- kernels --------------------------------------------------------------
    def prepare(self, kernel_ir: Any) -> PreparedKernel:
        return PreparedKernel(kernel_ir, self.arch)

    def _variant(self, pk: PreparedKernel, facts_key: tuple[Any, ...], facts: dict[str, Any],
                 span: Span | None) -> tuple[Any, Function]:
        pdl = cuda_pdl.mode()
        cv = occupancy.CARVEOUT  # a uniform carveout: its own copy of the module
        switches = codegen_key()  # every codegen switch's value now: a setting changed in the process recompiles
        got = pk.variants.get((*facts_key, pdl, traced := trace_rt.ENABLED, cv, switches))
        if got is None:
            from tilelang.backend import CodegenError, compile_kernel

            try:
                ck = compile_kernel(pk.ir, cuda_pdl.target(pk.arch, traced), facts)
            except CodegenError as e:
                raise TileError(e.diag) from None
            except TileError:  # a `TILEC_*` switch set to a value it does not take (E0604, `env_switch.py`)
                raise
            except ICE:
                raise
            except Exception as e:
                if isinstance(e, ValueError) and "griddepcontrol" in str(e):  # PDL before sm_90
                    raise cuda_error("compiling a kernel", str(e), span, help="turn PDL off (TILEC_PDL=0)") from None
                # (LLVM refusing our IR, a pass's bug: tilec's, reported naming the kernel)
                raise ICE(f"compiling kernel `{pk.ir.name}` for {pk.arch} failed: {type(e).__name__}: {e}") from e
            if ck.explain:  # `TILEC_EXPLAIN=1`: the path this variant takes, and why not a faster one
                print("\n".join(ck.explain), file=sys.stderr, flush=True)
            try:
                mod = self.ctx.load_ptx(ck.ptx, key=_module_key(ck, cv))
            except PtxRejected as e:  # an internal error naming the kernel and the saved PTX
                raise e.ice(ck.abi.name) from e
            fn = mod.function(ck.abi.name)
            if traced:  # the block timeline's buffer and this kernel's trace id, in the module's global
                trace_rt.attach(self.ctx, mod, ck.abi.name)
            if cv is not None:
                abi = occupancy.carve_abi(self.ctx, fn, ck.abi, cv, span)
            else:
                abi = occupancy.cap_abi(self.ctx, fn, ck.abi, span) if ck.abi.max_blocks else ck.abi
            if abi.smem_bytes:
                fits_smem(self.ctx.info, ck.abi.name, abi.smem_bytes, span)
                fn.ensure_smem(abi.smem_bytes, span)
            if abi.queue >= 0:  # a tile queue: its blocks fill the card once
                per = occupancy.resident(self.ctx.d, fn.handle, abi.num_threads, abi.smem_bytes)
                abi = dataclasses.replace(abi, queue_per_sm=max(1, per))
            got = (abi, fn)
            pk.variants[(*facts_key, pdl, traced, cv, switches)] = got
        return got

    def _pick(self, pk: PreparedKernel, facts_key: tuple[Any, ...], facts: dict[str, Any], args: list[Any],
              span: Span | None, grid: tuple[int, ...] = ()) -> tuple[Any, Function]:
        """`_variant`, or the one with the fact its kernel asks for (`KernelABI.short`) where this launch has it,
        or its split form (`KernelABI.split`) where the launch's walk on `grid` splits."""
        abi, fn, _form = self._choose(pk, facts_key, facts, args, span, grid)
        return abi, fn

    def _choose(self, pk: PreparedKernel, facts_key: tuple[Any, ...], facts: dict[str, Any], args: list[Any],
                span: Span | None, grid: tuple[int, ...]) -> tuple[Any, Function, Any]:
        """`_pick`'s variant and the `SplitForm` it consulted (None: none; a launcher that skips `_pick` for later
        launches must see the scalars the plan reads unchanged: `fast_launcher`)."""
        got = self._variant(pk, facts_key, facts, span)
        if (short := got[0].short) is not None:
            shape = next(tuple(a.shape) for p, a in zip(pk.ir.params, args, strict=True) if p.name == short.param)
            more = short.refine(facts, shape)
            if more is not None:
                facts_key, facts = (*facts_key, short.key()), more
                got = self._variant(pk, facts_key, facts, span)
        from tilelang.backend.facts import few_tiles

        few, tiles = few_tiles(getattr(got[0], "few", ""), grid)
        if few and grid and few in facts and 2 * tiles <= self.ctx.info.sm_count:
            # a GEMM with few tiles (row tiles coarsened: `gemm_rows`): its split-K variant (`passes/gemm_split.py`)
            facts_key, facts = (*facts_key, ("few", few)), {**facts, few: dataclasses.replace(facts[few], few_tiles=True)}
            got = self._variant(pk, facts_key, facts, span)
        wide = getattr(got[0], "wide", None)
        if wide and grid and wide[0] in facts and math.prod(grid) >= 2 * wide[1] * self.ctx.info.sm_count:
            # a GEMM with many tiles: its wide-tile variant (`passes/gemm_widen.py`), two waves of wide tiles at least
            name = wide[0]
            facts_key, facts = (*facts_key, ("wide", name)), {**facts, name: dataclasses.replace(facts[name], wide_tiles=True)}
            got = self._variant(pk, facts_key, facts, span)
        # an unhinted kernel's loops of few bytes in flight: the variant with rings (`backend/stream_rule.py`)
        if grid and getattr(got[0], "stream", None) is not None:
            facts_key, facts, got = occupancy.streamed(self.ctx, self._variant, pk, facts_key, facts, grid, got, span)
        form = getattr(got[0], "split", None)
        if form is not None and grid:  # (the split form: `backend/split_form.py`, computed once a launch shape)
            from tilelang.ir import nodes as ir

            sms = self.ctx.info.sm_count
            g = launch_grid(got[0], grid, sms)
            dims = {p.name: tuple(a.shape) for p, a in zip(pk.ir.params, args, strict=True) if isinstance(p, ir.TensorParam)}
            values = {p.name: a for p, a in zip(pk.ir.params, args, strict=True) if isinstance(p, ir.ScalarParam)}
            if kind := form.splits(dims, values, g[0] * g[1] * g[2]):
                alt = self._variant(pk, (*facts_key, form.key(kind)), form.refine(facts, kind), span)
                got = alt if launch_grid(alt[0], grid, sms) == g else got  # (the plan was for this many CTAs)
        return got[0], got[1], form

    def run(self, prepared: PreparedKernel, grid: tuple[int, ...], args: list[Any],
            stream: Any = None, span: Span | None = None) -> None:
        # Fast path: the same arguments (same buffer objects, same scalars) as an
        # earlier launch reuse its packed C arguments and its whole driver call;
        # weak references make sure a recycled `id` is never taken for the old
        # buffer. (CUstream handles are keyed by id: they may not be hashable,
        # and pooled streams live as long as the device.)
        # (a zero float by its sign too: -0.0 == 0.0 with one hash, and a launch with -0.0 took an earlier one's
        # +0.0: `x / s` was +inf where the interpreter gives -inf; hrev18)
        key = (*[id(a) if type(a) is CudaBuffer else a if a or not isinstance(a, _FLOATS) else (a, math.copysign(1.0, a))
                 for a in args], *grid, id(stream), cuda_pdl.mode(), trace_rt.ENABLED, occupancy.CARVEOUT)
        hit = prepared.fast.get(key)
        if hit is not None and (len(hit) == 4 or not self.is_capturing(stream)):  # 5: counters; 6: asserts too
            refs, launch, call, ok = hit[:4]
            for r, a in zip(refs, args, strict=False):
                if r is not None and r() is not a:
                    break
            else:
                words = hit[5] if len(hit) == 6 else None  # (its own error word cell, the ABI)
                if words is not None:  # a pair of error words a launch, checked at the stream's sync
                    w = self._take_err_word()
                    words[0].value = self._err.ptr + 4 * w
                res = launch(*call)
                if res is ok or (type(res) is tuple and res[0] is ok):
                    self.launches += 1
                    if words is not None:
                        s = self.ctx.stream if stream is None else stream
                        self._pending_asserts[id(s)].append((w, words[1], span, tuple(grid)))
                    return
                if words is not None:
                    self._release_err_words([(w, words[1], span, tuple(grid))])
        self._run_slow(prepared, grid, args, stream, span, key)

    def _run_slow(self, prepared: PreparedKernel, grid: tuple[int, ...], args: list[Any],
                  stream: Any, span: Span | None, fkey: tuple[Any, ...]) -> None:
        from tilelang.backend import TensorFacts
        from tilelang.ir import nodes as ir

        kernel = prepared.ir
        facts: dict[str, Any] = {}
        fact_list = []
        s = self.ctx.stream if stream is None else stream
        for p, a in zip(kernel.params, args, strict=True):
            if isinstance(p, ir.TensorParam) and not isinstance(a, CudaBuffer):
                raise TypeError(f"tensor argument `{p.name}` is not on the GPU: {a!r}")
        if prepared.fixed:
            arg_dims.check(kernel, args, span, prepared.fixed)  # E0501, never a launch (ir/arg_dims.py)
        handle = _handle_int(s)
        foreign = self.__dict__.get("_foreign_streams", {}).get(handle) is s  # another library's stream
        early = cuda_pdl.early_names(handle, kernel, args, grid, (id(self), self.launches), foreign)  # "+loads" only
        for p, a in zip(kernel.params, args, strict=True):
            if isinstance(p, ir.TensorParam):
                f = TensorFacts.of_launch(a.ptr, tuple(a.shape), p.dtype.value == "bf16" and not a.bf16,
                                          p.name in early)
                facts[p.name] = f
                fact_list.append(f.key())
        facts_key = tuple(fact_list)
        abi, fn = self._pick(prepared, facts_key, facts, args, span, grid)

        err_word = 0
        if abi.asserts:
            err_word = self._take_err_word()
        g = launch_grid(abi, grid, self.ctx.info.sm_count)
        pbuf = self._print_buffer(s) if abi.prints else None
        values: list[Any] = []
        by_name = {p.name: a for p, a in zip(kernel.params, args, strict=False)}
        for slot in abi.slots:
            if slot.what == "err":
                values.append(self._err.ptr + 4 * err_word)
            elif slot.what == "print":
                assert pbuf is not None
                values.append(pbuf.ptr)
            elif slot.what.startswith(("arrive:", "queue:", "split")):  # `last_block`'s, a queue's, a split's
                values.append(self._arrive.for_slot(s, slot.what, grid, g, self.is_capturing(s)))
            elif slot.what == "ptr":
                values.append(by_name[slot.param].ptr)
            elif slot.what.startswith("dim"):
                values.append(by_name[slot.param].shape[int(slot.what[3:])])
            elif slot.what.startswith("tmap:"):
                _, box, sw = slot.what.split(":")
                buf = by_name[slot.param]
                values.append(tensor_map(self.ctx, buf.ptr, tuple(buf.shape), kernel.tensor(slot.param).dtype.value,
                                         tuple(int(x) for x in box.split("x")), int(sw), span))
            else:
                v = by_name[slot.param]
                values.append(v.item() if hasattr(v, "item") else v)
        key = (tuple(v if v or type(v) is not float else (v, math.copysign(1.0, v)) for v in values), err_word)
        packed = prepared.packed.get(key)
        if packed is None:
            if len(prepared.packed) > 256:
                prepared.packed.clear()
            packed = PackedArgs([s.kind for s in abi.slots], values)
            prepared.packed[key] = packed
        g3 = (g[0], g[1], g[2])
        if len(prepared.fast) > 256:
            prepared.fast.clear()
        if not abi.prints and not abi.pdl and g3[0] * g3[1] * g3[2] > 0:
            refs = tuple(weakref.ref(a) if isinstance(a, CudaBuffer) else None for a in args)
            raw = _raw_launch() if launch_mode() == "ctypes" else None
            # counters (the capture's buffers) and asserts (the graph's words): the general path in a capture
            more: tuple[Any, ...] = (True,) if abi.asserts or any(
                sl.what.startswith(("arrive:", "queue:", "split")) for sl in abi.slots) else ()
            own = packed
            if abi.asserts:  # its own packed arguments, whose error word each launch rewrites
                own = PackedArgs([sl.kind for sl in abi.slots], values)
                more += ((own.values[next(n for n, sl in enumerate(abi.slots) if sl.what == "err")], abi, own),)
            call: tuple[Any, ...]
            try:
                if raw is not None:
                    call = (_handle_int(fn.handle), *g3, abi.num_threads, 1, 1, abi.smem_bytes,
                            _handle_int(s), own.address, None)
                    prepared.fast[fkey] = (refs, raw, call, 0, *more)
                else:
                    # The binding measured faster than ctypes on the H200 host (5 us vs 8 us).
                    d = self.ctx.d
                    call = (fn.handle, *g3, abi.num_threads, 1, 1, abi.smem_bytes, s, own.address, 0)
                    prepared.fast[fkey] = (refs, d.cuLaunchKernel, call, d.CUresult.CUDA_SUCCESS, *more)
            except TypeError:
                pass
        fn.launch(g3, abi.num_threads, abi.smem_bytes, packed, span, s, abi.pdl)
        self.launches += 1
        if abi.asserts:
            self._pending_asserts[id(s)].append((err_word, abi, span, tuple(grid)))
        if pbuf is not None:
            if id(s) in self._capturing:
                self._capture_prints[id(s)].append((pbuf, abi))
            else:
                # Device print is for debugging: wait for this launch and write its
                # lines now, so they keep their place among the host's output.
                _check(self.ctx.d.cuStreamSynchronize(s), "cuStreamSynchronize", span)
                self._flush_prints(pbuf, abi)
                pbuf.free()

    # -- the Python API's fast path (tilelang/api/fastpath.py) -----------------------
    def fast_launcher(self, prepared: PreparedKernel, grid: tuple[int, ...], args: list[Any],
                      span: Span | None = None) -> FastLaunch | None:
        """A launcher for later runs of `prepared` that differ from this one
        (`args`, as `run` takes them) only in tensor addresses and scalar
        values; None when the kernel needs what it does not do (device print
        buffers, PDL's cuLaunchKernelEx, a slot kind it does not know). TMA
        descriptors, counters and device asserts it fills per launch
        (`cuda_fast.LaunchSlots`)."""
        from tilelang.backend import TensorFacts
        from tilelang.ir import nodes as ir

        kernel = prepared.ir
        if prepared.fixed:  # the launcher reuses these sizes for every later launch of its plan
            arg_dims.check(kernel, args, span, prepared.fixed)
        facts: dict[str, Any] = {}
        fact_list = []
        for p, a in zip(kernel.params, args, strict=True):
            if isinstance(p, ir.TensorParam):
                if not isinstance(a, CudaBuffer):
                    return None
                f = TensorFacts.of_launch(a.ptr, tuple(a.shape), p.dtype.value == "bf16" and not a.bf16)
                facts[p.name] = f
                fact_list.append((f.aligned16, f.dims_div16, f.bf16_f32))
        abi, fn, form = self._choose(prepared, tuple(fact_list), facts, args, span, grid)
        if abi.prints or abi.pdl:  # PDL: cuLaunchKernelEx, in `Function.launch` (and "+loads" per launch)
            return None
        index = {p.name: i for i, p in enumerate(kernel.params)}
        # the form a launch runs depends on the scalars its plan reads (`causal`): other values, the general path
        guards = tuple((index[n], args[index[n]]) for n in form.reads()) if form is not None else ()
        return FastLaunch.make(self, fn, abi, launch_grid(abi, grid, self.ctx.info.sm_count), args, index, guards,
                               kernel, tuple(grid), span)

    def is_capturing(self, stream: Any) -> bool:
        """Whether `stream` is being captured into a CUDA graph (by this device
        or by another library, PyTorch's `torch.cuda.graph` say)."""
        d = self.ctx.d
        status = _check(d.cuStreamIsCapturing(self.ctx.stream if stream is None else stream),
                        "cuStreamIsCapturing")
        return bool(status != d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE)

    # -- the profiler (tilelang/profiler) ---------------------------------------------
    def record_event(self, stream: Any = None) -> Any:
        """A CUDA event recorded on `stream` now (events are pooled: the
        profiler records two per launch)."""
        d = self.ctx.d
        self.ctx.make_current()  # profiling only: events belong to the current context
        pool = self.__dict__.setdefault("_event_pool", [])
        ev = pool.pop() if pool else _check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT.value),
                                            "cuEventCreate")
        _check(d.cuEventRecord(ev, self.ctx.stream if stream is None else stream), "cuEventRecord")
        return ev

    def hold_stream(self, stream: Any) -> int | None:
        """Hold `stream` from here until `open_stream(token)`, so that an event
        recorded next fires when the launch after it can start (`cuda_gate.py`);
        the token, or None where it cannot: the stream is being captured into
        a graph, or the driver refuses (then never again in this process)."""
        gate: Any = self.__dict__.get("_gate")
        if gate is False:
            return None
        try:
            if self.is_capturing(stream):
                return None
            self.ctx.make_current()
            if gate is None:
                from tilelang.runtime.cuda_gate import StreamGate

                gate = self._gate = StreamGate(self.ctx.d, _check)
            return int(gate.hold(self.ctx.stream if stream is None else stream))
        except TileError:
            self.__dict__["_gate"] = False
            return None

    def open_stream(self, token: int | None) -> None:
        """Open a hold of `hold_stream` (opening twice is fine)."""
        if token is not None:
            self._gate.open(token)

    def event_seconds(self, start: Any, end: Any) -> float:
        """Seconds between two recorded events (waits for `end`)."""
        d = self.ctx.d
        _check(d.cuEventSynchronize(end), "cuEventSynchronize")
        return float(_check(d.cuEventElapsedTime(start, end), "cuEventElapsedTime")) / 1e3

    def release_event(self, event: Any) -> None:
        """Give an event of `record_event` back to the pool."""
        self.__dict__.setdefault("_event_pool", []).append(event)

    def peak_attributes(self) -> dict[str, int]:
        """What `profiler/peaks.py` estimates an unknown card's peaks from."""
        d = self.ctx.d
        attr = d.CUdevice_attribute

        def get(a: Any) -> int:
            return int(_check(d.cuDeviceGetAttribute(a, self.ctx.dev), "cuDeviceGetAttribute"))

        return {
            "multiprocessors": self.ctx.info.sm_count,
            "clock_khz": get(attr.CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
            "memory_clock_khz": get(attr.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
            "bus_width_bits": get(attr.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        }

    # -- device print --------------------------------------------------------------
    def _print_buffer(self, stream: Any) -> DeviceBuffer:
        """A print buffer (layout: `backend/prints.py`) whose header is reset on
        `stream` before the launch (captured too, so a graph replay resets it)."""
        from tilelang.backend.prints import HEADER, print_buffer_bytes

        cap = print_buffer_bytes()
        buf = self.ctx.pool.alloc(HEADER + cap)
        d = self.ctx.d
        _check(d.cuMemsetD8Async(buf.ptr, 0, HEADER, stream), "cuMemsetD8Async")
        _check(d.cuMemsetD32Async(buf.ptr + 8, cap, 1, stream), "cuMemsetD32Async")
        return buf

    def _flush_prints(self, buf: DeviceBuffer, abi: Any) -> None:
        """Read a finished launch's print records and write its lines."""
        from tilelang.backend.prints import HEADER, decode, print_buffer_bytes

        d = self.ctx.d
        head = np.zeros(HEADER, dtype=np.uint8)
        _check(d.cuMemcpyDtoH(head.ctypes.data, buf.ptr, HEADER), "cuMemcpyDtoH")
        end = int(head[16:24].view(np.uint64)[0])
        raw = np.zeros(HEADER + end, dtype=np.uint8)
        raw[:HEADER] = head
        if end:
            _check(d.cuMemcpyDtoH(raw.ctypes.data + HEADER, buf.ptr + HEADER, end), "cuMemcpyDtoH")
        got = decode(abi.prints, raw.tobytes())
        out = self.out
        for line in got.lines:
            if out is None:
                sys.stdout.write(line + "\n")
            else:
                out(line)
        if got.dropped:
            sys.stdout.flush()
            sys.stderr.write(
                f"warning: {got.dropped} device `print` line{'s' if got.dropped != 1 else ''} of `{abi.name}` "
                f"were lost: the GPU print buffer ({print_buffer_bytes() >> 20} MiB) is full; "
                "set TILEC_PRINT_BUFFER_MB to a larger size\n")

    # -- ordering ---------------------------------------------------------------
    def new_stream(self) -> Any:
        if self._streams:
            return self._streams.pop()
        d = self.ctx.d
        return _check(d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING.value), "cuStreamCreate")

    def sync(self, stream: Any = None) -> None:
        s = self.ctx.stream if stream is None else stream
        _check(self.ctx.d.cuStreamSynchronize(s), "cuStreamSynchronize")
        self._check_asserts(self._pending_asserts.pop(id(s), []))
        if stream is not None and stream is not self.ctx.stream:
            self._streams.append(stream)  # finished: reuse it for the next `.launch()`

    def _take_err_word(self) -> int:
        """The next pair of error words that no launch still in flight and no
        live graph holds (held from now until `_check_asserts` reads it). The
        words go round the buffer: a `.launch()` not yet waited for, across
        2,047 asserting launches made meanwhile, had its pair handed to another
        launch, whose check read the first one's failed assert as its own (or
        past its list of asserts) and reset it, so the first one's wait found
        nothing. Where every pair is held, the next is shared, as before.
        The free pairs are a queue (`_err_free`, in the buffer's order from
        `_err_next`), so a launch costs O(1) however many pairs are held; it
        was a walk round the whole buffer a launch once all but a few were."""
        busy = self.__dict__.setdefault("_err_busy", {})
        free = self.__dict__.get("_err_free")
        if not free and len(busy) < (self._err_words - 2) // 2:
            # first use, or pairs freed without `_release_err_words` (a test's reset)
            start = self._err_next
            order = [*range(start, self._err_words, 2), *range(2, start, 2)]
            free = self._err_free = deque(w for w in order if not busy.get(w))
        while free:
            w = free.popleft()
            if not busy.get(w):
                busy[w] = 1
                return w
        w = self._err_next  # every pair is held: share the next one round the buffer
        self._err_next = w + 2 if w + 2 < self._err_words else 2
        busy[w] = busy.get(w, 0) + 1
        return w

    def _release_err_words(self, pending: list[tuple[int, Any, Span | None, tuple[int, ...]]]) -> None:
        busy = self.__dict__.setdefault("_err_busy", {})  # (a device a test made without `__init__`)
        free = self.__dict__.get("_err_free")
        for word, _, _, _ in pending:
            n = busy.get(word, 0) - 1
            if n > 0:
                busy[word] = n
            elif busy.pop(word, None) is not None and free is not None:
                free.append(word)

    def _drop_graph_asserts(self, key: int) -> None:
        """A graph is gone: its launches' error words are free again."""
        self._release_err_words(self._graph_asserts.pop(key, []))

    def _check_asserts(self, pending: list[tuple[int, Any, Span | None, tuple[int, ...]]]) -> None:
        if not pending:
            return
        self._release_err_words(pending)
        # only the words these launches hold (one launch: 8 bytes, not the buffer's 16 KB)
        lo = min(w for w, _, _, _ in pending)
        hi = max(w for w, _, _, _ in pending) + 2
        words = np.zeros(self._err_words, dtype=np.int32)
        d = self.ctx.d
        _check(d.cuMemcpyDtoH(words.ctypes.data + 4 * lo, self._err.ptr + 4 * lo, 4 * (hi - lo)), "cuMemcpyDtoH")
        failed = None
        for word, abi, at, grid in pending:
            num, place = assert_words(int(words[word]), int(words[word + 1]))
            if num and failed is None:
                failed = (abi.asserts[num - 1], place, at, grid)
        for word, _, _, _ in pending:  # reset for the next launch that uses these words (only a failed
            if words[word] or words[word + 1]:  # assert writes them: zeros need no driver call)
                _check(d.cuMemsetD32(self._err.ptr + 4 * word, 0, 2), "cuMemsetD32")
        if failed is not None:
            (span, message, region, axis), place, launch_span, grid = failed
            raise TileError(assert_diagnostic(span, message, region, axis, place, grid, launch_span))

    # -- graphs -----------------------------------------------------------------
    def capture(self, stream: Any) -> None:
        d = self.ctx.d
        s = self.ctx.stream if stream is None else stream
        self._pending_asserts.pop(id(s), None)
        self._capturing.add(id(s))
        self._capture_prints.pop(id(s), None)
        cuda_pdl.forget(_handle_int(s))  # PDL "+loads": the capture's launches follow no launch
        _check(d.cuStreamBeginCapture(s, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
               "cuStreamBeginCapture")

    def end_capture(self, stream: Any) -> Any:
        s = self.ctx.stream if stream is None else stream
        g = Graph(self.ctx)
        g.graph = _check(self.ctx.d.cuStreamEndCapture(s), "cuStreamEndCapture")
        cuda_pdl.forget(_handle_int(s))  # the stream's last kernel is the one from before the capture
        g.exec = _check(self.ctx.d.cuGraphInstantiate(g.graph, 0), "cuGraphInstantiate")
        self._graph_asserts[id(g)] = self._pending_asserts.pop(id(s), [])  # their words stay held
        if self._graph_asserts[id(g)]:
            weakref.finalize(g, self._drop_graph_asserts, id(g))
        self._capturing.discard(id(s))
        g.counters = self._arrive.take(s)  # type: ignore[attr-defined]
        prints = self._capture_prints.pop(id(s), [])
        if prints:
            self._graph_prints[id(g)] = prints  # buffers owned by the graph from now on
        if stream is not None and stream is not self.ctx.stream:
            self._streams.append(stream)
        return g

    def replay(self, graph: Graph, stream: Any = None) -> None:
        s = self.ctx.stream if stream is None else stream
        _check(self.ctx.d.cuGraphLaunch(graph.exec, s), "cuGraphLaunch")
        cuda_pdl.forget(_handle_int(s))  # PDL "+loads": the graph's kernels were not recorded
        again = self._graph_asserts.get(id(graph), [])
        busy = self.__dict__.setdefault("_err_busy", {})
        for word, _, _, _ in again:  # held by this replay too, until its check
            busy[word] = busy.get(word, 0) + 1
        self._pending_asserts[id(s)].extend(again)
        prints = self._graph_prints.get(id(graph))
        if prints:
            _check(self.ctx.d.cuStreamSynchronize(s), "cuStreamSynchronize")
            for buf, abi in prints:  # in launch order, as the graph ran them
                self._flush_prints(buf, abi)

    # -- memory and streams of other libraries (the Python API, tilelang/api) --
    def wrap_external(self, ptr: int, shape: tuple[int, ...], np_dtype: Any, nbytes: int,
                      bf16: bool = False) -> CudaBuffer:
        """A buffer over device memory that another library owns (a PyTorch or
        CuPy tensor): launches read and write it in place; it is never freed or
        pooled here, so the caller must keep the owner alive while it is used.
        `bf16`: the memory is 2-byte bfloat16 (a torch.bfloat16 tensor)."""
        self.ctx.make_current()
        dt = np.dtype(np.uint16) if bf16 else np.dtype(np_dtype)
        return CudaBuffer(DeviceBuffer(int(ptr), int(nbytes), int(nbytes), None), shape, dt, bf16)

    def foreign_stream(self, handle: int) -> Any:
        """A stream object for another library's raw stream handle (0: the legacy
        default stream), the same object for the same handle, so `run`'s launch
        cache and the device-assert bookkeeping (both keyed by the object) hold."""
        streams = self.__dict__.setdefault("_foreign_streams", {})
        s = streams.get(int(handle))
        if s is None:
            s = self.ctx.d.CUstream(int(handle))
            streams[int(handle)] = s
        return s

    def wait_foreign(self, stream: Any, raw: int | None = None) -> None:
        """`sync_foreign` unless `stream` is being captured into a graph (then
        the launches on it were recorded, not run: nothing to wait for); `raw`,
        the handle's value, lets the native launcher make both driver calls."""
        nat = _NATIVE["module"]
        if nat is not None and raw is not None:
            status = nat.capturing(raw)
            if status > 0:
                return
            if status == 0 and nat.sync(raw) == 0:
                pending = self._pending_asserts.pop(id(stream), None)
                if pending:
                    self.ctx.make_current()
                    self._check_asserts(pending)
                return
            # a driver error: the binding's calls below report it by name
        if not self.is_capturing(stream):
            self.sync_foreign(stream)

    def sync_foreign(self, stream: Any) -> None:
        """`sync` for a stream from `foreign_stream`: waits and reports failed
        device asserts, but never takes the stream into this device's pool."""
        _check(self.ctx.d.cuStreamSynchronize(stream), "cuStreamSynchronize")
        pending = self._pending_asserts.pop(id(stream), [])
        if pending:
            self.ctx.make_current()  # reading the error words: the caller did not make it current
            self._check_asserts(pending)


_DEVICE: CudaDevice | None = None


def device() -> CudaDevice:
    """The process's CudaDevice (device 0); raises TileError when there is no GPU."""
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = CudaDevice(0)
    return _DEVICE
