"""Loaded code of the CUDA runtime (`cuda.py`): modules (`Module`: PTX linked
to a cubin through the disk cache, or the driver's JIT), their functions
(`Function`: the shared-memory limit, the launch, with or without PDL) and
the TMA descriptors a launch passes (`tensor_map`, cached by buffer).

Every driver call goes through `cuda_driver._check` or `driver_error`, so a
failure is a `TileError` (E0610), located where the caller passes a span;
PTX the driver's assembler refuses is `PtxRejected`, which `CudaDevice`
reports as an internal error naming the kernel and the saved PTX.

`ctx` is always the runtime's `cuda.Context` (typed `Any`: this module
imports nothing of `cuda.py`, which imports it).
"""

from __future__ import annotations

import ctypes
from typing import Any

from tilelang.diagnostics.model import ICE
from tilelang.runtime import cuda_driver, cuda_link, cuda_pdl
from tilelang.runtime.cuda_driver import (
    PackedArgs,
    _check,
    _error_name,
    _handle_int,
    _raw_launch,
    driver_error,
    launch_mode,
    relaxed_capture,
)
from tilelang.runtime.cuda_link import link_arch, nvjitlink_keeps
from tilelang.source import Span

# The driver JIT's answers that mean the PTX itself was refused (not the driver's state: memory, a lost context)
REJECTED = ("CUDA_ERROR_INVALID_PTX", "CUDA_ERROR_INVALID_IMAGE", "CUDA_ERROR_INVALID_SOURCE",
            "CUDA_ERROR_NO_BINARY_FOR_GPU", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")


class PtxRejected(Exception):
    """The driver's PTX assembler refused the PTX tilec generated (`error`, the assembler's `log`): a bug in
    tilec's code generator, or a driver too old for the PTX's ISA. `CudaDevice._variant` reports it as an
    internal error that names the kernel and the file the PTX is saved in (`ice`)."""

    def __init__(self, error: str, log: str, ptx: str) -> None:
        first = next((ln.strip() for ln in log.splitlines() if ln.strip()), "")
        super().__init__(f"{error}" + (f"; the assembler said: {first}" if first else ""))
        self.error, self.log, self.ptx = error, log, ptx

    def ice(self, kernel: str) -> ICE:
        from tilelang.diagnostics.ice import save_text

        head = [f"kernel `{kernel}`: {self.error}", *self.log.strip().splitlines()]
        path = save_text("ptx", "".join(f"// {ln}\n" for ln in head) + self.ptx)  # (still PTX: `ptxas` reads it)
        where = f"the PTX is saved in {path}" if path else "the PTX could not be saved"
        old = "UNSUPPORTED_PTX_VERSION" in self.error
        return ICE(f"the CUDA driver's assembler refused the PTX tilec generated for kernel `{kernel}`: {where}"
                   + ("; the driver may be older than the PTX's ISA (update it)" if old else "")
                   + " (report it with the program and that file)")


class Module:
    """A loaded CUmodule plus its functions."""

    def __init__(self, ctx: Any, handle: Any) -> None:
        self.ctx = ctx
        self.handle = handle
        self._functions: dict[str, Function] = {}

    @staticmethod
    def from_ptx(ctx: Any, ptx: str, key: str | None = None) -> Module:
        """Load PTX: a cubin from the disk cache when there is one, else compile and cache it."""
        from tilelang.runtime import cache as cache_mod

        arch = link_arch(ptx, ctx.info.arch)
        cubin_key = cache_mod.make_key("cubin", ptx, arch, code=cache_mod.step_key(*cache_mod.CUBIN_STEP))
        cache = cache_mod.default_cache()
        cubin = cache.get(cubin_key)
        if cubin is None and nvjitlink_keeps(ptx):
            cubin = cuda_link._nvjitlink_cubin(ptx, arch)
            if cubin is not None:
                cache.put(cubin_key, cubin, {"kind": "cubin", "arch": arch, "name": key or ""})
        d = ctx.d
        # (a kernel's first launch inside another library's capture, `torch.cuda.graph`: its load in the
        # relaxed capture mode, or the capture is invalidated: `relaxed_capture`)
        if cubin is not None:
            with relaxed_capture(d):
                err, *handle = d.cuModuleLoadData(cubin)
            if err == d.CUresult.CUDA_SUCCESS:
                return Module(ctx, handle[0])
            if getattr(err, "name", "") not in REJECTED:  # (memory, a lost context: the driver's state)
                raise driver_error(err, "cuModuleLoadData")
            # A cubin this driver cannot load (nvJitLink newer than the driver: CUDA 13's cubins on a 12.x
            # driver): the driver's own JIT compiles the PTX instead, as where nvJitLink is missing.
        # Driver JIT fallback (it has its own cache in ~/.nv/ComputeCache).
        opts = [d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        elog = bytearray(8192)
        with relaxed_capture(d):
            err, handle = d.cuModuleLoadDataEx(ptx.encode() + b"\0", len(opts), opts, [elog, len(elog)])
        if err != d.CUresult.CUDA_SUCCESS:
            log = elog.rstrip(b"\0").decode(errors="replace")
            if getattr(err, "name", "") in REJECTED:  # the assembler refused our PTX: a bug in tilec (`PtxRejected`)
                raise PtxRejected(_error_name(err), log, ptx)
            raise driver_error(err, "loading the compiled kernel", detail=log)
        return Module(ctx, handle)

    def function(self, name: str) -> Function:
        fn = self._functions.get(name)
        if fn is None:
            handle = _check(self.ctx.d.cuModuleGetFunction(self.handle, name.encode()), "cuModuleGetFunction")
            fn = Function(self.ctx, handle, name)
            self._functions[name] = fn
        return fn


# ---------------------------------------------------------------- TMA descriptors
_TMAPS: dict[tuple[Any, ...], bytes] = {}


def tensor_map(ctx: Any, ptr: int, shape: tuple[int, ...], dtype: str, box: tuple[int, ...],
               swizzle: int, span: Span | None = None) -> bytes:
    """The 128-byte TMA descriptor (cuTensorMapEncodeTiled) of a row-major 2-D
    (or 3-D) f16/bf16 tensor at `ptr`, copying `box = (rows, cols)` (or
    `(1, rows, cols)`) tiles into `swizzle`-byte swizzled shared memory,
    out-of-bounds elements read as zero.
    Cached by (pointer, shape, dtype, box, swizzle): a launch with the same
    buffer pays one dict lookup."""
    key = (ptr, shape, dtype, box, swizzle)
    hit = _TMAPS.get(key)
    if hit is not None:
        return hit
    if 0 in shape:
        # `TensorFacts.of_launch` gives an empty tensor no TMA path: a map of it would
        # have to claim a row or column it does not have
        raise ICE(f"a TMA map of the empty tensor of shape {list(shape)}")
    d = ctx.d
    u64, u32 = d.cuuint64_t, d.cuuint32_t
    dims = list(shape)
    dts = {"f16": d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
           "bf16": d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16}
    sws = {128: d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B, 64: d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
           32: d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B}
    strides = [-(-dims[-1] * 2 // 16) * 16]  # bytes between indices of each dim but the innermost
    for n in reversed(dims[1:-1]):
        strides.append(strides[-1] * n)
    tmap = _check(d.cuTensorMapEncodeTiled(
        dts[dtype], len(dims), int(ptr), [u64(x) for x in reversed(dims)], [u64(x) for x in strides],
        [u32(x) for x in reversed(box)], [u32(1)] * len(dims),
        d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, sws[swizzle],
        d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), "cuTensorMapEncodeTiled", span)
    raw = bytes(ctypes.string_at(int(tmap.getPtr()), 128))
    if len(_TMAPS) > 1024:
        _TMAPS.clear()
    _TMAPS[key] = raw
    return raw


class Function:
    def __init__(self, ctx: Any, handle: Any, name: str) -> None:
        self.ctx = ctx
        self.handle = handle
        self.name = name
        self._smem_limit = 48 * 1024

    def ensure_smem(self, nbytes: int, span: Span | None = None) -> None:
        if nbytes > self._smem_limit:
            d = self.ctx.d
            _check(
                d.cuFuncSetAttribute(
                    self.handle, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes
                ),
                f"raising the shared-memory limit of `{self.name}` to {nbytes} bytes",
                span,
            )
            self._smem_limit = nbytes

    def num_regs(self) -> int:
        d = self.ctx.d
        return int(_check(d.cuFuncGetAttribute(d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, self.handle),
                          "cuFuncGetAttribute"))

    def launch(self, grid: tuple[int, int, int], block: int, smem: int, args: PackedArgs,
               span: Span | None = None, stream: Any = None, pdl: bool = False) -> None:
        """Enqueue one launch on the context's stream; errors become located TileErrors.
        `pdl`: with programmatic stream serialization (`cuda_pdl.py`)."""
        gx, gy, gz = grid
        if gx * gy * gz == 0:
            return None  # an empty grid is a no-op, as in the interpreter
        s = self.ctx.stream if stream is None else stream
        if pdl:
            code = cuda_pdl.launch(_handle_int(self.handle), grid, block, smem, _handle_int(s), args.address)
            if code == 0:
                return None
            raise driver_error(self.ctx.d.CUresult(code), f"launching `{self.name}` (cuLaunchKernelEx, PDL)", span)
        raw = _raw_launch() if launch_mode() == "ctypes" else None
        if raw is not None and not cuda_driver._RAW_BROKEN:
            # The driver entry point through ctypes: ~1 us instead of ~5 us of binding overhead.
            try:
                code = raw(_handle_int(self.handle), gx, gy, gz, block, 1, 1, smem, _handle_int(s), args.address, None)
            except TypeError:
                return self.launch(grid, block, smem, args, span, stream)
            if code == 0:
                return None
            err = self.ctx.d.CUresult(code)
        else:
            (err,) = self.ctx.d.cuLaunchKernel(self.handle, gx, gy, gz, block, 1, 1, smem, s, args.address, 0)
            if err == self.ctx.d.CUresult.CUDA_SUCCESS:
                return None
        raise driver_error(err, f"launching `{self.name}`", span)
