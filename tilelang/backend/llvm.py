"""Tile IR -> LLVM IR text for the NVPTX target (`emit_llvm`).

The execution model (issue 5): one tile block is one CTA of
`num_warps * 32` threads. Every tile value is spread over the threads by one
layout that depends only on its shape:

    V = 4, 2 or 1: the largest that divides the last dim (a "chunk" of V
        consecutive elements of one row, so a chunk is one 16-byte (f32)
        vector access when it is contiguous and aligned in memory)
    thread t holds chunks k = 0 .. K-1 at flat (row-major) element index
        f = (k * T + t) * V + j,   j = 0 .. V-1,   K = ceil(numel / (T * V))
    elements with f >= numel (only in the last chunk round) are dead lanes.

Element-wise ops and casts keep the layout, so they are pure register code.
Everything that moves data between threads (reductions, scans, broadcasts,
reshapes that change V, permutes, `mma`) goes through shared memory: barrier,
write the operand row-major, barrier, read what this thread needs. Scalars
are uniform: every thread computes the same value, so a branch on a scalar
never diverges and barriers inside `if`/`for` are legal.

Numerics (the interpreter's rules in `ir/nodes.py`): f16 and bf16 values live
in f32 registers and are rounded to their type after every op; f32 math uses
the approximations of `fastmath.py`; integer division, shifts and casts are
guarded to give the interpreter's defined results instead of LLVM poison.

Memory: bf16 tensors are 2-byte bfloat16 in device memory (the GPU
runtime converts from and to the host's f32 storage on copies), unless the
launch says a tensor holds f32 values (`TensorFacts.bf16_f32`: memory of
another library); bool is one byte. Every load and store is masked against
the tensor's run-time bounds, so no access leaves a tensor whatever the
shapes. A failed device `assert` writes its number into the launch's error
word (the last kernel parameter) and the host raises after the launch.

Kernel parameters (`KernelABI`): for each IR param in order, a tensor gives
`ptr addrspace(1)` then `rank` i32 dims; a scalar gives its value (f16/bf16
passed as f32, bool as i32); last comes `ptr addrspace(1) %err`. A
parameter's registers are `%p.NAME` (`.d0`.. its dims, `.arg` a scalar's
value; `codegen.llvm_types.param_reg`), apart from the emitter's own names,
so a parameter may be called `err` or `t1`; a kernel named as a module global
(`smem`) has its entry named `smem_kernel`.

Invariant: this module imports neither llvmlite nor CUDA; it builds text.
"""

from __future__ import annotations

from typing import assert_never

from tilelang.backend.codegen import cluster as cluster_code
from tilelang.backend.codegen import ldg_early
from tilelang.backend.codegen import pdl as pdl_code
from tilelang.backend.codegen import gather_dot as gather_dot_code
from tilelang.backend.codegen import shift_dot as shift_dot_code
from tilelang.backend.codegen import trace as trace_code
from tilelang.backend.codegen.arrive import (
    ARRIVE,
    emit_last_block,
    emit_queue_pull,
    emit_queue_take,
)
from tilelang.backend.codegen.core import (
    MAX_SMEM_BYTES,
    CodegenError,
    Operand,
    _TensorInfo,
)
from tilelang.backend.codegen.debug import DebugOps
from tilelang.backend.codegen.llvm_types import const_operand, param_reg, reg_ty
from tilelang.backend.codegen.llvm_types import (
    mem_ty as mem_ty,  # re-exported (tests/backend/llsim.py)
)
from tilelang.backend.codegen.split import SPLIT, SPLIT_ROUNDS, SPLITWS
from tilelang.backend.codegen.split import words as split_words
from tilelang.backend.env_switch import flag
from tilelang.backend.facts import Short, TensorFacts
from tilelang.backend.gpu.nodes import ConvertLayout, DotOp, GpuKernel, SplitSave, TicketTake, TmaDesc
from tilelang.backend.gpu.nodes import walk as gpu_walk
from tilelang.backend.hopper import HopperOps
from tilelang.backend.prints import PrintFormat
from tilelang.backend.split_form import SplitForm
from tilelang.backend.stream_rule import StreamAsk
from tilelang.diagnostics.codes.codegen import (
    GPU_TILE_TOO_LARGE,
    GPU_UNSUPPORTED_OP,
)
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import Span


# ------------------------------------------------------------------ the ABI
def static_dims() -> bool:
    """On unless `TILEC_STATIC_DIMS=0` (hcliff10; the default since hstatic): a `&Tensor` parameter's dimension
    the kernel's type fixes (`TensorParam.dims`, `[N]` of a const generic) is that constant in the body, not the
    launch's `%p.NAME.dK`, so each bounds check on it folds. Safe because no launch runs with another size:
    `runtime/launch.bind_launch` refuses it (E0501/E0504) for Tile callers and the Python API, and the engines
    check again before a kernel runs (`ir/arg_dims.py`: the interpreter, `CudaDevice._run_slow` and
    `fast_launcher`). A `&mut` parameter's dims are its tile's, not the tensor's, and a `?` is the launch's:
    never folded. Why: examples/layernorm.tile's [1, 32768] row at 16 warps spilled 340 B a thread: its `w`
    and `b` row loads were 16 guarded branches each (checks against `%p.w.d0`), which ptxas did not
    interleave with their uses; with the constants, 127 registers and no spills, 0.92x -> 1.13x torch on the
    H100 (RESULTS.md 'hcliff10', 'call 35'). Any value but 0 or 1 is E0604 (`env_switch.flag`)."""
    return flag("TILEC_STATIC_DIMS", "1")


@frozen(eq=True)
class ParamSlot:
    """One kernel parameter of the PTX entry: `kind` is a `runtime.cuda.CTYPES` key."""

    kind: str
    param: str  # the IR parameter it comes from ("" for the error word)
    what: str  # "ptr", "dim0".., "value", "err"


@frozen(eq=True)
class KernelABI:
    name: str  # the PTX entry name
    slots: tuple[ParamSlot, ...]
    num_threads: int
    smem_bytes: int
    # assert number i+1 -> (span, message, region, axis) (`ir.Assert`; where region is not
    # "", the error word after the number holds the failure's place: `describe_place`)
    asserts: tuple[tuple[Span, str, str, int], ...]
    # print number i -> its record format (`backend/prints.py`); non-empty means
    # the entry takes one more parameter, the print buffer (`ParamSlot.what == "print"`)
    prints: tuple[PrintFormat, ...] = ()
    # built with `griddepcontrol` (`Target.pdl`): the runtime launches it with
    # programmatic stream serialization
    pdl: bool = False
    # > 0: the kernel walks its grid itself (`GpuKernel.persistent`): the runtime
    # launches min(grid's blocks, this many an SM) CTAs on a 1-D grid
    persistent: int = 0
    # > 0: `#[hints(max_blocks = N)]`: the runtime pads the launch's shared
    # memory so that at most N blocks run on an SM (`runtime/occupancy.py`)
    max_blocks: int = 0
    # `for s in queue(axis)` (or the static walk `for s in tiles(axis)`): the
    # axis (-1: none); the runtime launches, along it, as many blocks a row as
    # fill the card once (`queue_per_sm` blocks an SM, set by the runtime from
    # the driver's occupancy calculator)
    queue: int = -1
    queue_per_sm: int = 0
    # `GpuKernel.short`: the runtime launches the variant compiled with the fact
    # where the launch's shape satisfies it (`facts.Short.refine`)
    short: Short | None = None
    # `GpuKernel.split`: the runtime launches the variant with the walk's split where
    # the launch's walk splits (`split_form.SplitForm.splits`)
    split: SplitForm | None = None
    # `GpuKernel.fill`: with `persistent`, that many CTAs an SM whatever the grid (a split-K GEMM)
    fill: bool = False
    # `GpuKernel.few`: where the launch's grid has at most half as many tiles as SMs, the runtime launches the
    # variant compiled with `TensorFacts.few_tiles` on this tensor
    few: str = ""
    # `GpuKernel.wide` (tensor, f): where the launch's grid has at least 2 f tiles an SM, the variant compiled with
    # `TensorFacts.wide_tiles` on the tensor
    wide: tuple[str, int] | None = None
    # `GpuKernel.stream`: the loops whose streaming the runtime decides from the launch's grid
    # (`backend/stream_rule.decide`), launching the variant compiled with `TensorFacts.stream`
    stream: StreamAsk | None = None


# ------------------------------------------------------------------ the emitter
class _Emitter(HopperOps, DebugOps):
    """One kernel's emission: the parts of `codegen/` (see their modules) under
    the entry (`run`) and the dispatch of every op (`region`, `op`)."""

    pdl = ""  # `emit_llvm_text`'s: "" or the trigger ("entry", "late", "last", "exit") [+ "+prefetch" | "+bulk"]
    _trigger_at: ir.Op | None = None  # "late": the top-level op the trigger precedes
    _wait_at: object | None = None  # "+loads": the top-level op the wait precedes (after early loads)
    _band_dead: frozenset[int] = frozenset()  # ops only building `shift_dot`'s bands, `gather_dot`'s one-hots
    trace = False  # `Target.trace`: the block timeline's stamps (`codegen/trace.py`)
    tma_prefetch = False  # `Target.tma_prefetch`: the tensor maps prefetched at the entry (`HopperOps`)
    l2_evict = ""  # `Target.l2_evict`: "" the kernel's `evict_first` hint, "1" every ring copy, "0" none
    ldg_early = False  # `Target.ldg_early`: plain loads across barriers (`codegen/ldg_early.py`)
    trace_mark = ""  # `Target.trace_mark` (with `trace`)
    _marking = ""  # the mark this kernel takes ("": none; a PDL kernel's wait field is its wait's)
    _marked = False  # the mark's point is emitted (once)

    # ======================================================================= ops
    def run(self) -> str:
        k = self.k
        params: list[str] = []
        self.slots: list[ParamSlot] = []
        for p in k.params:
            match p:
                case ir.TensorParam():
                    base = param_reg(p.name)
                    ro = p.name not in self.written
                    aligned = self.facts.get(p.name, TensorFacts()).aligned16
                    params.append(f"ptr addrspace(1) {'align 16 ' if aligned else ''}{base}")
                    self.slots.append(ParamSlot("ptr", p.name, "ptr"))
                    dims = []
                    fold = static_dims() and not p.mutable
                    for d in range(p.rank):
                        nm = f"{param_reg(p.name)}.d{d}"
                        params.append(f"i32 {nm}")
                        static = p.dims[d] if fold and d < len(p.dims) else None
                        dims.append(str(static) if static is not None else nm)
                        self.slots.append(ParamSlot("i32", p.name, f"dim{d}"))
                    self.tensors[p.name] = _TensorInfo(p, base, dims, readonly=ro,
                                                       facts=self.facts.get(p.name, TensorFacts()))
                case ir.ScalarParam():
                    dt = p.value.dtype
                    nm = f"{param_reg(p.name)}.arg"
                    if dt in (DType.F16, DType.BF16):
                        params.append(f"float {nm}")
                        self.slots.append(ParamSlot("f32", p.name, "value"))
                    elif dt is DType.BOOL:
                        params.append(f"i32 {nm}")
                        self.slots.append(ParamSlot("i32", p.name, "value"))
                    else:
                        params.append(f"{reg_ty(dt)} {nm}")
                        self.slots.append(ParamSlot(dt.value if dt is not DType.F32 else "f32", p.name, "value"))
                case TmaDesc():
                    # a CUtensorMap passed by value; grid_constant keeps it in param space
                    params.append(f'ptr byval([128 x i8]) align 64 "nvvm.grid_constant" {param_reg(p.name)}')
                    self.slots.append(ParamSlot("tmap", p.tensor,
                                                f"tmap:{'x'.join(map(str, p.box))}:{p.swizzle}"))
                case _:
                    assert_never(p)
        params.append("ptr addrspace(1) %err")
        self.slots.append(ParamSlot("ptr", "", "err"))
        if any(isinstance(op, ir.Print) for op in gpu_walk(k.body)):
            params.append("ptr addrspace(1) align 16 %pbuf")
            self.slots.append(ParamSlot("ptr", "", "print"))
        arrive = next((op for op in gpu_walk(k.body) if isinstance(op, ir.LastBlock)), None)
        if arrive is not None:  # `if last_block(axis)`: the launch's group counters
            params.append(f"ptr addrspace(1) align 4 {ARRIVE}")
            self.slots.append(ParamSlot("ptr", "", f"arrive:{arrive.axis}"))
        split = next((op for op in gpu_walk(k.body) if isinstance(op, SplitSave)), None)
        if split is not None:  # a tile's key range over CTAs: counters and the state's records (codegen/split.py)
            params += [f"ptr addrspace(1) align 4 {SPLIT}", f"ptr addrspace(1) align 4 {SPLITWS}"]
            # the pairs form (`split_form`): a piece saves and arrives for both tiles of its pair
            two = 2 if any(getattr(f, "split_walk", "") == "pairs" for f in self.facts.values()) else 1
            two += any(isinstance(op, TicketTake) for op in gpu_walk(k.body))  # (the tickets' counter: the P-th)
            self.slots += [ParamSlot("ptr", "", "split" if two == 1 else f"split:{two}"),
                           ParamSlot("ptr", "", f"splitws:{split_words(self, split.values)}:{split.threads}:"
                                                f"{two * SPLIT_ROUNDS}")]
        if split is None and any(isinstance(op, TicketTake) for op in gpu_walk(k.body)):  # the tickets' counter,
            params.append(f"ptr addrspace(1) align 4 {SPLIT}")  # the P-th of 2 P (`codegen/split.py`)
            self.slots.append(ParamSlot("ptr", "", "split:2"))
        queue = next((op for op in gpu_walk(k.body) if isinstance(op, ir.QueuePull)), None)
        if queue is not None and arrive is None:  # `for s in queue(axis)`: the rows' counters
            params.append(f"ptr addrspace(1) align 4 {ARRIVE}")
            self.slots.append(ParamSlot("ptr", "", f"queue:{queue.axis}"))

        self._entry_lines: list[str] = cluster_code.entry(self)
        self._tidv: set[str] = set()  # the `%tidv<V>` lines (`views.ChunkedView.flat`)
        self.declare("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
        for p in k.scalar_params:
            dt = p.value.dtype
            nm = f"{param_reg(p.name)}.arg"
            if dt is DType.BOOL:
                self.env[p.value.id] = self.emit(f"icmp ne i32 {nm}, 0")
            elif dt in (DType.F16, DType.BF16):
                self.env[p.value.id] = self.round_to(nm, dt)
            else:
                self.env[p.value.id] = nm
        # PDL: wait for the previous grid (its writes visible) before anything
        # touches memory; let the next grid's blocks be scheduled at once
        # ("entry"), once this block has done everything but its writes
        # ("late": their loads in flight, the next grid's blocks can start
        # while it finishes), at the start of its main loop's last iteration
        # ("last": the next grid's blocks, where they fit beside this one's,
        # issue their early loads while this one's last loads are served),
        # or when it exits ("exit"); with "+prefetch" (or "+bulk"), L2 prefetches of the
        # first tiles it will read come before the wait (`codegen/pdl.py`)
        trigger, _, extra = self.pdl.partition("+")
        # `#[hints(pdl_early)]`: the next grid may be scheduled before this
        # one's wait (it still waits for this grid to complete)
        early = [pdl_code.TRIGGER] if trigger and k.source.pdl_early else []
        pdl = [pdl_code.WAIT] if trigger else []
        if early:
            trigger = "early"
        elif trigger in ("late", "exit") and k.source.pdl_last:
            # `#[hints(pdl_early = 2)]`: this kernel alone triggers at its main
            # loop's last iteration, after its wait (so "+loads" keeps its rule:
            # the launch before this one is complete when the next one starts)
            trigger = "last"
        elif trigger in ("late", "last") and k.source.pdl_exit:
            # `#[hints(pdl_early = 3)]`: this kernel alone never triggers, so the
            # next grid is scheduled at its exit (a kernel whose last blocks still
            # work after the others' writes: the split merge folded into the
            # attention, whose last block of each head merges the head's shares)
            trigger = "exit"
        if extra in ("prefetch", "bulk"):
            steps = pdl_code.prologue(k, {t for t, i in self.tensors.items() if i.readonly})
            if steps:
                pdl_code.emit_prologue(self, steps, bulk=extra == "bulk")
                self.lines.append(pdl_code.WAIT)
                pdl = []
        elif extra == "loads" and trigger in ("late", "last", "exit"):
            early_set = {t for t, i in self.tensors.items() if i.readonly and i.facts.early}
            self._wait_at = pdl_code.early_wait(k, early_set)
            if self._wait_at is not None:
                pdl = []  # `region` waits before `_wait_at`
                self._pre_wait = frozenset(early_set)
        if trigger:
            # The kernel's lifetime overlaps the launches before it (they may
            # still run until its wait returns), and an `ld.global.nc`
            # (`!invariant.load`) promises data constant for the whole kernel:
            # LLVM and ptxas move such loads across `griddepcontrol.wait`
            # (ptxas 13.0 hoisted `tok`'s, `x`'s and the partials' above SASS
            # `ACQBULK` under "+prefetch": the decode read a stale token or
            # residual, issue 17's PDL flake). Only a tensor that the runtime
            # found no launch this one may overlap writes (`TensorFacts.early`,
            # "+loads") keeps it; the others are plain loads, which stay below
            # the wait. (The prologue above took its prefetches, L2 hints that
            # are always safe, from every tensor the kernel does not write.)
            for info in self.tensors.values():
                info.readonly = info.readonly and info.facts.early
        if trigger == "entry":
            pdl.append(pdl_code.TRIGGER)
        elif trigger in ("late", "last"):
            self._trigger_at = next((op for op in k.body.ops if pdl_code.writes(op)), None)
            if k.persistent or k.source.walk >= 0 or any(isinstance(op, ir.QueuePull) for op in gpu_walk(k.body)):
                # (a tile queue's blocks write in every iteration of their
                # loop, as a persistent kernel's: the trigger at exit)
                # a persistent kernel (its CTAs walk the whole grid, its warp
                # roles loading and storing until it ends) has no "all but its
                # writes" to finish first, so it triggers at exit. Measured on
                # the H200 (RESULTS.md, issue 15, 2026-12-03 fourth session):
                # this did NOT remove the ~2x slowdown of std's tensor-core
                # decode pair with both launches PDL "late", which needs the
                # merge's early trigger before a PDL-launched persistent split
                # (still open); it costs nothing measurable either
                self._trigger_at = None
            if trigger == "last":
                # the main loop's last iteration triggers (its loads, the
                # kernel's last, then in flight); a kernel with no loop
                # before its first write triggers as "late"
                self._trigger_loop = pdl_code.last_loop(k, self._trigger_at)
                if self._trigger_loop is not None:
                    self._trigger_at = None
        self._marking = self.trace_mark if self.trace and not self.pdl else ""
        self._band_dead = shift_dot_code.dead_band_ops(self, gather_dot_code.matrix_read)
        self.region(k.body, ())
        cluster_code.finish(self)
        cluster_code.cluster_attrs(self)
        if self.smem_bytes + self.static_smem > MAX_SMEM_BYTES:
            raise self.error(GPU_TILE_TOO_LARGE, k.span,
                             f"the kernel needs {self.smem_bytes + self.static_smem} bytes of shared memory "
                             f"(its cluster exchanges' {self.static_smem}), more than the {MAX_SMEM_BYTES} the "
                             "largest GPU gives a block",
                             "needs too much shared memory", "exchange smaller tiles")
        if trigger in ("late", "last") and self._trigger_at is None and self._trigger_loop is None:
            self.lines.append(pdl_code.TRIGGER)
        mb = min(k.source.min_blocks, 2048 // self.T)  # a bound the SM's threads can meet
        if mb and not any("nvvm.minctasm" in a for a in self.fn_attrs):
            # `.minnctapersm`: ptxas budgets registers for `mb` blocks an SM and,
            # within that budget, issues a loop's loads ahead of their uses
            self.fn_attrs.append(f'"nvvm.minctasm"="{mb}"')
        if k.max_regs and not any("nvvm.maxnreg" in a for a in self.fn_attrs):
            self.fn_attrs.append(f'"nvvm.maxnreg"="{k.max_regs}"')
        stamps: list[str] = []
        globals_: list[str] = []
        if self.trace:
            trace_code.declare(self)
            globals_ = [trace_code.module_global()]
            stamps = [trace_code.entry_stamp()]
            waited = trace_code.stamp_wait(pdl, pdl_code.WAIT) or trace_code.stamp_wait(self.lines, pdl_code.WAIT)
            self.lines.extend(trace_code.exit_lines(waited, marked=bool(self._marking)))
        body = "\n".join(self.lines)
        take = trace_code.take_lines(mark=bool(self._marking)) if self.trace else ["  br label %start"]
        entry = "\n".join([*self._tmap_prefetch(), "entry:", *stamps, *early, *pdl, "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
                           *self._role_tids, *self._entry_lines, *take, "start:"])
        module_globals = ["@smem = external addrspace(3) global [0 x i8], align 1024", *globals_, *self.cluster_bufs]
        name = _ident(k.name)
        # a kernel named as one of the module's globals (`smem`, `tilec_trace`) was a redefinition LLVM
        # refused: its entry takes `_kernel` after the name (the runtime finds it by `abi.name`)
        if any(g.startswith(f"@{name} ") for g in [*module_globals, *self.decls]):
            name += "_kernel"
        self.entry_name = name
        out = [
            "; generated by tilec: do not edit",
            'target triple = "nvptx64-nvidia-cuda"',
            *module_globals,
            *sorted(self.decls),
            "",
            f"define ptx_kernel void @{name}({', '.join(params)}) #0 {{",
            entry,
            body,
            "  ret void",
            "}",
            "",
            f'attributes #0 = {{ "nvvm.reqntid"="{self.T}"{"".join(" " + a for a in self.fn_attrs)} }}',
            "!0 = !{}",
            *self.loop_md,
        ]
        return ldg_early.resolve(self, "\n".join(out) + "\n")

    def region(self, region: ir.Region, args: tuple[Operand, ...]) -> list[Operand]:
        for a, v in zip(region.args, args, strict=True):
            self.env[a.id] = v
        self._red_mark = None  # a region may run again (loops) or not at all: no reuse across it
        self._depth += 1
        try:
            for op in region.ops:
                if isinstance(op, ir.Yield):
                    self._red_mark = None
                    return [self.env[v.id] for v in op.values]  # may be a `Frag` (see `for_`)
                if op is self._wait_at:
                    self.lines.append(pdl_code.WAIT)
                    self._pre_wait = frozenset()
                if op is self._trigger_at:
                    self.lines.append(pdl_code.TRIGGER)
                if self._depth == 1 and self.cluster_deferred:
                    cluster_code.flush_before(self, op)  # an exchange's wait, deferred to its first reader
                if (self._marking == "store1" and not self._marked and isinstance(op, ir.Store)
                        and self.role_tid == "%tid"):  # (a store thread 0's role makes)
                    self.trace_mark_here()
                if id(op) in self._band_dead:  # (a band matrix `shift_dot` reads as a stencil)
                    continue
                ldg_early.used(self, op)
                self.op(op)
            self._red_mark = None
            return []
        finally:
            self._depth -= 1

    def trace_mark_here(self) -> None:
        """The block timeline's mark (`Target.trace_mark`) at this point, once a kernel."""
        self._marked = True
        trace_code.mark_lines(self)

    def op(self, op: ir.Op) -> None:
        match op:
            case ir.Const(result=r, value=v):
                c = const_operand(r.dtype, v)
                self.env[r.id] = c if not r.shape else [c] * self.nregs(r)
                if r.shape:
                    self._uniform.add(r.id)
                if not r.shape and isinstance(v, int) and not isinstance(v, bool):
                    self._mult[r.id] = abs(int(c)) if r.dtype.is_int and int(c) != 0 else 0
            case ir.BlockId(result=r, axis=a):
                ax = "xyz"[a]
                self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.{ax}()")
                self.env[r.id] = self.call("i32", f"llvm.nvvm.read.ptx.sreg.ctaid.{ax}", "")
                self._mult[r.id] = 1
            case ir.NumBlocks(result=r, axis=a):
                ax = "xyz"[a]
                self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.{ax}()")
                self.env[r.id] = self.call("i32", f"llvm.nvvm.read.ptx.sreg.nctaid.{ax}", "")
            case ir.LastBlock():
                emit_last_block(self, op)
            case ir.ClusterGather():
                cluster_code.emit_cluster_gather(self, op)
            case ir.QueuePull():
                emit_queue_pull(self, op)
            case ir.QueueTake():
                emit_queue_take(self, op)
            case ir.TensorDim(result=r, tensor=t, axis=a):
                info = self.tensors[t]
                self.env[r.id] = info.dims[a]
                fd = info.facts.dims_div16
                if a < len(fd) and fd[a]:
                    self._mult[r.id] = 16
            case ir.Load():
                self.order_access(op)
                self.load(op)
            case ir.Store():
                self.order_access(op)
                self.store(op)
            case ir.Prefetch():
                pdl_code.emit_prefetch(self, op)
            case ir.AtomicRMW():
                self.order_access(op)
                self.atomic(op)
            case ir.Elementwise(result=r, op=eop, operands=xs):
                self.elementwise(r, eop, xs, op.span)
            case ir.Cast(result=r, x=x, bits=bits):
                conv = self.bitcast if bits else self.cast
                if x.shape:
                    self.env[r.id] = [conv(s, x.dtype, r.dtype) for s in self.tile(x)]
                else:
                    self.env[r.id] = conv(self.scalar(x), x.dtype, r.dtype)
            case ir.Reduce():
                self.reduce(op)
            case ir.Scan():
                self.scan(op)
            case ir.Broadcast(result=r, x=x):
                self.broadcast(r, x, op.span)
            case ir.Reshape(result=r, x=x):
                self.reshape(r, x, op.span)
            case ir.Permute(result=r, x=x, perm=perm):
                self.permute(r, x, perm, op.span)
            case ir.Arange(result=r):
                lay = self.lay(r)
                slots = []
                for k in range(lay.K):
                    for j in range(lay.V):
                        slots.append(self.cast(self.flat(lay, k, j), DType.I32, r.dtype))
                self.env[r.id] = slots
                self._aranges.add(r.id)
            case ir.Mma():
                self.mma(op)
            case DotOp(engine="mma.sync") if self.tc_eligible(op):
                self.mma_tensor_core(op)
            case DotOp():
                self.mma(op)
            case ConvertLayout(result=r, x=x):
                self.convert_layout(r, x, op.span)
            case ir.For():
                self.for_(op)
            case ir.If():
                self.if_(op)
            case ir.While():
                self.while_(op)
            case ir.Yield():
                raise AssertionError("yield outside a region end")
            case ir.Print():
                self.device_print(op)
            case ir.Assert():
                self.device_assert(op)
            case _:
                self.gpu_op(op)


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def emit_llvm_text(kernel: GpuKernel, facts: dict[str, TensorFacts] | None = None,
                   pdl: bool | str = "", trace: bool = False, tma_prefetch: bool = False,
                   mark: str = "", l2_evict: str = "", ldg_early: bool = False) -> tuple[str, KernelABI]:
    """Lower one GPU IR kernel to LLVM IR text and its launch ABI; raises
    `CodegenError`. `pdl`: programmatic dependent launch (`Target.pdl_mode`:
    the trigger's place, "entry", "late", "last" or "exit", and "+prefetch" for the
    pre-wait L2 prefetches; True is "late"). `trace`: the block timeline's
    stamps (`codegen/trace.py`; off: the text is the untraced kernel's).
    `tma_prefetch`: a kernel with tensor maps prefetches them at its entry
    (`Target.tma_prefetch`; off: the text is as without the option).
    `mark`: with `trace`, the mark stamp's point (`Target.trace_mark`).
    `l2_evict`: the ring copies' L2 priority (`Target.l2_evict`; "": the
    kernel's `evict_first` hint decides). `ldg_early`: a read-only load that
    crosses a barrier before its first use is a plain `ld.global`
    (`Target.ldg_early`, `codegen/ldg_early.py`; off: the text is as without
    the option)."""
    if kernel.source.num_warps not in (1, 2, 4, 8, 16, 32):
        raise CodegenError(
            Diagnostic.error(GPU_UNSUPPORTED_OP, f"`num_warps = {kernel.source.num_warps}` is not supported by the GPU backend")
            .primary(kernel.span, "in the hints of this kernel")
            .with_help("use a power of two from 1 to 32")
        )
    em = _Emitter(kernel, kernel.facts if facts is None else facts)
    em.pdl = "late" if pdl is True else (pdl or "")
    em.trace = trace
    em.tma_prefetch = tma_prefetch
    em.trace_mark = mark
    em.l2_evict = l2_evict
    em.ldg_early = ldg_early
    text = em.run()
    abi = KernelABI(em.entry_name, tuple(em.slots), em.T, em.smem_bytes, tuple(em.asserts), tuple(em.prints),
                    bool(em.pdl), kernel.persistent, kernel.source.max_blocks,
                    next((int(sl.what[6:]) for sl in em.slots if sl.what.startswith("queue:")), kernel.source.walk),
                    short=kernel.short, split=kernel.split, fill=kernel.fill, few=kernel.few, wide=kernel.wide,
                    stream=kernel.stream)
    return text, abi
