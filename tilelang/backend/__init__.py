"""The NVPTX backend: Tile IR -> GPU IR -> LLVM IR text -> PTX (no GPU, no CUDA import).

Entry points (the driver's "gpu", "llvm" and "ptx" stages call the `*_diagnostics`
variants):

    lower_gpu(kernel_ir, target=None, facts=None) -> GpuKernel    GPU IR (`backend/gpu/`)
    emit_llvm(kernel, target=None, facts=None) -> str             LLVM IR text
    emit_ptx(kernel, target=None, facts=None) -> str              PTX text
    compile_kernel(kernel, target=None, facts=None) -> CompiledKernel
        PTX + launch ABI, through the compile cache (memory and disk)

`kernel` is a Tile IR kernel (lowered to GPU IR for the target on the way) or
a GPU IR kernel already lowered. `facts` None means no specialisation facts
(unaligned tensors of any size).

A user-facing GPU limit (device `print`, a tile too big for shared memory,
`exp` on f64 ...) raises `CodegenError`, whose `.diag` is a located
`Diagnostic` with an E06xx code; `emit_*_diagnostics` variants push it into a
`DiagnosticSink` instead and return None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.backend.codegen.budget import check_registers
from tilelang.backend.env_switch import SwitchError, codegen_setting
from tilelang.backend.facts import TensorFacts
from tilelang.backend.llvm import CodegenError, KernelABI, ParamSlot, emit_llvm_text
from tilelang.backend.target import DEFAULT_ARCH, Target, llvm_to_ptx
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir

__all__ = [
    "DEFAULT_ARCH",
    "CodegenError",
    "CompiledKernel",
    "KernelABI",
    "ParamSlot",
    "Target",
    "TensorFacts",
    "compile_kernel",
    "emit_llvm",
    "emit_ptx",
    "lower_gpu",
]


def _target(target: Target | str | None) -> Target:
    if target is None:
        return Target()
    if isinstance(target, str):
        return Target(arch=target)
    return target


def lower_gpu(kernel_ir, target: Target | str | None = None,  # type: ignore[no-untyped-def]
              facts: dict[str, TensorFacts] | None = None):
    """Tile IR -> GPU IR for `target` (a GPU IR kernel is returned as is)."""
    from tilelang.backend.gpu.nodes import GpuKernel
    from tilelang.backend.gpu.passes import lower_to_gpu
    from tilelang.backend.gpu.passes.lift import default_warps

    if isinstance(kernel_ir, GpuKernel):
        return kernel_ir
    arch = _target(target).arch
    gk = lower_to_gpu(kernel_ir, arch, facts or {})
    # warps `lift.default_warps` raised (a kernel that names none, a big tile): fewer where they do not fit
    w = default_warps(kernel_ir)
    while w > kernel_ir.num_warps and not _fits(gk):
        w //= 2
        gk = lower_to_gpu(kernel_ir, arch, facts or {}, max_warps=w)
    return gk


def _fits(gk: Any) -> bool:
    """Whether a kernel whose warps `lift.default_warps` raised emits within the GPU's limits: shared memory
    (a reduction's or scan's scratch grows with the warps: p17_half_math's [64, 1024] f32 `cumsum` over axis 0
    needs 48 KB at 4 warps and 384 KB at 32) and the register budget (`check_registers`). The emission is
    Python only (no LLVM), milliseconds for a row kernel; `lower_gpu` lowers again with fewer warps where not."""
    try:
        check_registers(gk)
        emit_llvm_text(gk, gk.facts)
    except CodegenError:
        return False
    return True


def emit_llvm(kernel_ir, target: Target | str | None = None,  # type: ignore[no-untyped-def]
              facts: dict[str, TensorFacts] | None = None) -> str:
    gk = lower_gpu(kernel_ir, target, facts)
    check_registers(gk)
    return emit_llvm_text(gk, gk.facts)[0]


def emit_ptx(kernel_ir, target: Target | str | None = None,  # type: ignore[no-untyped-def]
             facts: dict[str, TensorFacts] | None = None) -> str:
    return compile_kernel(kernel_ir, target, facts).ptx


def _reporting(stage: Callable[..., Any]) -> Callable[..., Any]:
    """`stage` with its `CodegenError` (or `SwitchError`) pushed into a sink (then None) instead of raised."""

    def run(kernel_ir: Any, sink: DiagnosticSink, target: Target | str | None = None,
            facts: dict[str, TensorFacts] | None = None) -> Any:
        try:
            return stage(kernel_ir, target, facts)
        except CodegenError as e:  # (of a generic kernel: which instance, the label inside it cannot say)
            inst = ", ".join(f"{n} = {v}" for n, v in getattr(kernel_ir, "instantiation", ()))
            sink.emit(e.diag.note(f"in the instance `{kernel_ir.name}` [{inst}]") if inst else e.diag)
            return None
        except SwitchError as e:  # a `TILEC_*` switch set to a value it does not take: said once, not per kernel
            if e.diag not in sink.diagnostics:
                sink.emit(e.diag)
            return None

    run.__name__ = f"{stage.__name__}_diagnostics"
    return run


lower_gpu_diagnostics = _reporting(lower_gpu)
emit_llvm_diagnostics = _reporting(emit_llvm)
emit_ptx_diagnostics = _reporting(emit_ptx)


@frozen(eq=True)
class CompiledKernel:
    ptx: str
    abi: KernelABI
    key: str  # the compile-cache key, a hash of the LLVM text and the target (also names the module in the runtime)
    target: Target
    # `TILEC_EXPLAIN=1`: the kernel's path and why faster ones refused it (`explain.explain_lines`), which the
    # runtime writes to stderr when a launch compiles it; () otherwise
    explain: tuple[str, ...] = ()


def ir_level(gk: Any, tgt: Target) -> int:
    """The LLVM IR optimisation level for GPU kernel `gk`.

    Kernels with warp roles are explicit already (every loop, copy and wgmma
    is spelled out by the pipeline pass; ptxas schedules): -O1 gives the same
    PTX as -O3 for them in a third less time, and their first launch is
    compile-bound. When, besides, no loop computes on tiles (a GEMM: its
    loops are TMA copies, barriers and wgmma; its tile arithmetic is the
    epilogue's), no IR pass at all: the same registers and, for 128x256x64,
    616 SASS instructions instead of 624, in LLVM -> PTX 0.058 s instead of
    0.088 on the H200's host. Tile arithmetic in a loop (attention's softmax)
    keeps -O1: without it the SASS grows by 11 %. A loop that copies through
    registers (`CopyToShared`, the producer of operands TMA cannot load) gets
    the target's level: without IR passes ptxas spills 4-168 bytes there, and
    at -O3 the 8191^3 GEMM runs 139 TFLOP/s against 125 at -O1 (98 at -O2;
    H200, benchmarks/RESULTS.md)."""
    from tilelang.backend.gpu.nodes import CopyToShared, WarpSpecialize, regions, results, walk

    ops = list(walk(gk.body))
    if not any(isinstance(op, WarpSpecialize) for op in ops):
        return tgt.opt
    for loop in ops:
        if isinstance(loop, ir.For | ir.While):
            for r in regions(loop):
                for o in walk(r):
                    if isinstance(o, CopyToShared):
                        return tgt.opt
                    if type(o).__module__ == ir.__name__ and any(v.shape for v in results(o)):
                        return min(1, tgt.opt)
    return 0


def compile_kernel(kernel_ir, target: Target | str | None = None,  # type: ignore[no-untyped-def]
                   facts: dict[str, TensorFacts] | None = None) -> CompiledKernel:
    """IR -> PTX through the compile cache. The key covers what the PTX is a function of: the
    LLVM text, the target, the IR level and the toolchain versions (see `runtime/cache.py`);
    not the source kernel nor the facts, so two variants (facts) whose LLVM texts are the same
    share one PTX, and one module in the runtime (`CompiledKernel.key` names it): the D = 128
    attention kernel's short keys' variant, byte for byte the long keys' kernel since hattn4,
    is compiled once for both (hattn5, issue 15)."""
    from tilelang.runtime import cache as cache_mod

    tgt = _target(target)
    gk = lower_gpu(kernel_ir, tgt, facts)
    # Emitting the LLVM text is cheap (pure Python) and yields the ABI, whose
    # assert spans must come from this session's source map, so only the
    # expensive LLVM -> PTX step is cached; the LLVM text is part of the key.
    check_registers(gk)  # before the emitter unrolls an oversized tile for minutes
    ll, abi = emit_llvm_text(gk, gk.facts, tgt.pdl_mode, tgt.trace, tgt.tma_prefetch,
                             tgt.trace_mark if tgt.trace else "", tgt.l2_evict, tgt.ldg_early)
    level = ir_level(gk, tgt)  # part of the key: the same LLVM text gives other PTX at another level
    # and the codegen switches set (`env_switch.codegen_setting`: none set, the key they always had): what they
    # change reaches the LLVM text, and no switch decides the PTX without being in its key
    switches = codegen_setting()
    key = cache_mod.make_key("ptx", tgt.key(), f"ir-O{level}", ll, *((switches,) if switches else ()),
                             code=cache_mod.step_key(*cache_mod.PTX_STEP))
    cache = cache_mod.default_cache()
    from tilelang.backend import explain

    lines = tuple(explain.explain_lines(gk)) if explain.enabled() else ()
    hit = cache.get(key)
    if hit is not None:
        return CompiledKernel(hit.decode(), abi, key, tgt, lines)
    ptx = llvm_to_ptx(ll, tgt, ir_opt=level)
    cache.put(key, ptx.encode(), {"kind": "ptx", "kernel": abi.name, "arch": tgt.arch})
    return CompiledKernel(ptx, abi, key, tgt, lines)


