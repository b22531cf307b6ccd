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
passed as f32, bool as i32); last comes `ptr addrspace(1) %err`.

Invariant: this module imports neither llvmlite nor CUDA; it builds text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import assert_never

import numpy as np

from tilelang.backend import f64math
from tilelang.backend.codegen import reduce as reductions
from tilelang.backend.codegen import scan as scans
from tilelang.backend.codegen.llvm_types import (  # noqa: F401  (re-exported)
    const_operand,
    f64_hex,
    mem_size,
    mem_ty,
    reg_ty,
    smem_size,
    smem_ty,
)
from tilelang.backend.codegen.views import (
    ChunkedView,
    View,
    chunked_view,
    register_map,
    strides_of,
    view_of,
)
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.layouts import MmaAcc, WgmmaAcc
from tilelang.backend.gpu.nodes import ConvertLayout, DotOp, GpuKernel, TmaDesc
from tilelang.backend.gpu.nodes import walk as gpu_walk
from tilelang.backend.hopper import HopperOps
from tilelang.backend.prints import HEADER as PRINT_HEADER
from tilelang.backend.prints import PrintFormat, PrintValue, layout_format, record_size, record_ty
from tilelang.diagnostics.codes.codegen import (
    GPU_TILE_TOO_LARGE,
    GPU_UNSUPPORTED_OP,
)
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import Span

MAX_SMEM_BYTES = 227 * 1024  # the H100/H200 opt-in limit per block
MAX_REGS_PER_THREAD = 1024  # slots of live tile data per thread we are willing to unroll


class CodegenError(Exception):
    """A user-facing limit of the GPU backend (turned into a diagnostic by the caller)."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


# ------------------------------------------------------------------ the ABI
@dataclass(frozen=True, slots=True)
class ParamSlot:
    """One kernel parameter of the PTX entry: `kind` is a `runtime.cuda.CTYPES` key."""

    kind: str
    param: str  # the IR parameter it comes from ("" for the error word)
    what: str  # "ptr", "dim0".., "value", "err"


@dataclass(frozen=True, slots=True)
class KernelABI:
    name: str  # the PTX entry name
    slots: tuple[ParamSlot, ...]
    num_threads: int
    smem_bytes: int
    asserts: tuple[tuple[Span, str], ...]  # assert number i+1 -> (span, message)
    # print number i -> its record format (`backend/prints.py`); non-empty means
    # the entry takes one more parameter, the print buffer (`ParamSlot.what == "print"`)
    prints: tuple[PrintFormat, ...] = ()


# ------------------------------------------------------------------ layout
Layout = View  # a value's distributed layout as the code generator sees it (`codegen/views.py`)


def layout_of(shape: tuple[int, ...], T: int) -> ChunkedView:
    """The generic chunked layout of `shape` over `T` threads."""
    return chunked_view(shape, T)


Slots = list[str]  # per-thread operands of a tile value


@dataclass(frozen=True, slots=True)
class Frag:
    """An f32 [M, N] accumulator held in the mma.m16n8k16 C-fragment layout: 4
    values per 16x8 tile this warp owns (see `_Emitter._tc_open`). Only a `for`
    loop's carried accumulator of tensor-core `mma`s takes this form."""

    vals: tuple[str, ...]
    shape: tuple[int, int]


@dataclass(frozen=True, slots=True)
class _TileCtx:
    row0: str
    col0: str
    c_idx: list[str]
    guarded: bool
    pre: str
    done: str


Operand = str | Slots | Frag


@dataclass
class _TensorInfo:
    param: ir.TensorParam
    base: str
    dims: list[str]
    strides: list[str] = field(default_factory=list)  # i64, computed lazily
    readonly: bool = True
    facts: TensorFacts = field(default_factory=TensorFacts)


# ------------------------------------------------------------------ the emitter
class _Emitter(HopperOps):
    def __init__(self, kernel: GpuKernel, facts: dict[str, TensorFacts]) -> None:
        self.k = kernel
        self.layouts = kernel.layouts
        self.role_tid = "%tid"
        # Scratch shared memory (conversions, reductions) starts after the buffers
        # the GPU IR allocated (`smem_alloc`).
        self.scratch = ("@smem" if not kernel.smem_bytes else
                        f"getelementptr (i8, ptr addrspace(3) @smem, i32 {kernel.smem_bytes})")
        self.fn_attrs: list[str] = []
        self.T = kernel.num_warps * 32
        self.lines: list[str] = []
        self.decls: set[str] = set()
        self.n = 0
        self.cur = "start"  # the body begins at label %start (after the entry block)
        self.env: dict[int, Operand] = {}
        self.smem_bytes = kernel.smem_bytes
        self.asserts: list[tuple[Span, str]] = []
        self.tensors: dict[str, _TensorInfo] = {}
        self.facts = facts
        self._flat_cache: dict[tuple[int, int, int], str] = {}
        self._coord_cache: dict[tuple[int, ...], str] = {}
        self._mult: dict[int, int] = {}  # value id -> known divisor (for specialisation)
        written = {op.tensor for op in gpu_walk(kernel.body) if isinstance(op, ir.Store | ir.AtomicRMW)}
        self.written = written
        self.prints: list[PrintFormat] = []
        self._uniform: set[int] = set()  # tiles every thread holds the same value in each slot of
        self._bars = 0  # barriers emitted so far
        # (barriers at the end, start, end) of the last reduction's scratch buffer while
        # it is the latest shared-memory user in straight-line code (`codegen/reduce.py`)
        self._red_mark: tuple[int, int, int] | None = None

    # -- basic emission -------------------------------------------------------
    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def new_label(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def emit(self, instr: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {instr}")
        return name

    def entry_emit(self, instr: str) -> str:
        name = self.tmp()
        self._entry_lines.append(f"  {name} = {instr}")
        return name

    def stmt(self, instr: str) -> None:
        self.lines.append(f"  {instr}")

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.cur = name

    def br(self, target: str) -> None:
        self.stmt(f"br label %{target}")

    def cbr(self, cond: str, a: str, b: str) -> None:
        self.stmt(f"br i1 {cond}, label %{a}, label %{b}")

    def declare(self, decl: str) -> None:
        self.decls.add(decl)

    def call(self, ret: str, name: str, args: str) -> str:
        return self.emit(f"call {ret} @{name}({args})")

    def error(self, code: str, span: Span, msg: str, label: str, help: str | None = None) -> CodegenError:
        d = Diagnostic.error(code, msg).primary(span, label)
        if help:
            d = d.with_help(help)
        return CodegenError(d)

    # -- values -----------------------------------------------------------------
    def get(self, v: ir.Value) -> str | Slots:
        op = self.env[v.id]
        assert not isinstance(op, Frag), "an mma fragment escaped its loop"
        return op

    def scalar(self, v: ir.Value) -> str:
        op = self.env[v.id]
        assert isinstance(op, str), f"value %{v.id} is a tile, a scalar was expected"
        return op

    def tile(self, v: ir.Value) -> Slots:
        op = self.env[v.id]
        assert isinstance(op, list), f"value %{v.id} is a scalar, a tile was expected"
        return op

    def nregs(self, v: ir.Value) -> int:
        """Registers of tile `v` per thread in its layout."""
        lay = self.layouts.get(v.id)
        if isinstance(lay, WgmmaAcc):
            return lay.regs(v.shape[1])
        return self.lay(v).E

    def lay(self, v: ir.Value | tuple[int, ...]) -> Layout:
        """The view of value `v` in its layout (a bare shape: the chunked layout)."""
        if isinstance(v, tuple):
            return chunked_view(v, self.T)
        return view_of(self.layouts.get(v.id), v.shape, self.T, v.dtype.itemsize)

    # -- thread geometry ----------------------------------------------------------
    def flat(self, lay: Layout, k: int, j: int) -> str:
        """i32 row-major index of slot (k, j) of this thread (see `codegen/views.py`)."""
        return lay.flat(self, k, j)

    def chunk_valid(self, lay: Layout, k: int) -> str | None:
        """i1: chunk k of this thread holds live elements (None when always)."""
        return lay.chunk_valid(self, k)

    def coords(self, f: str, shape: tuple[int, ...]) -> list[str]:
        """i32 coordinates of flat index `f` in `shape` (row-major)."""
        out = []
        st = strides_of(shape)
        for d, (n, s) in enumerate(zip(shape, st, strict=False)):
            if n == 1:
                out.append("0")
                continue
            q = f if s == 1 else self.emit(f"udiv i32 {f}, {s}")
            out.append(q if d == 0 else self.emit(f"urem i32 {q}, {n}"))
        return out

    def slot_coords(self, lay: Layout, k: int, j: int, shape: tuple[int, ...] | None = None,
                    valid: str | None = None) -> list[str]:
        """i32 coordinates of this thread's slot (k, j), all 0 on dead lanes when
        `valid` is given (so they can index shared memory safely)."""
        return lay.slot_coords(self, k, j, valid)

    def out_coords(self, r: ir.Value):  # type: ignore[no-untyped-def]
        """(safe flat index, safe coordinates) of each slot of result `r` in its layout."""
        lay = self.lay(r)
        for k in range(lay.K):
            valid = self.chunk_valid(lay, k)
            for j in range(lay.V):
                yield self.safe_index(valid, self.flat(lay, k, j)), self.slot_coords(lay, k, j, None, valid)

    def linear(self, coords: list[str], shape: tuple[int, ...]) -> str:
        """i32 row-major flat index of `coords` in a static `shape`."""
        acc = "0"
        for c, s, n in zip(coords, strides_of(shape), shape, strict=False):
            if n == 1 or c == "0":
                continue
            term = c if s == 1 else self.emit(f"mul i32 {c}, {s}")
            acc = term if acc == "0" else self.emit(f"add i32 {acc}, {term}")
        return acc

    def and_all(self, conds: list[str | None]) -> str | None:
        acc: str | None = None
        for c in conds:
            if c is None or c == "true":
                continue
            acc = c if acc is None else self.emit(f"and i1 {acc}, {c}")
        return acc

    # -- narrow floats ---------------------------------------------------------------
    def round_to(self, x: str, dt: DType) -> str:
        if dt is DType.F16:
            h = self.emit(f"fptrunc float {x} to half")
            return self.emit(f"fpext half {h} to float")
        if dt is DType.BF16:
            h = self.emit(f"fptrunc float {x} to bfloat")
            return self.emit(f"fpext bfloat {h} to float")
        return x

    # -- shared memory -----------------------------------------------------------------
    def barrier(self) -> None:
        self._bars += 1
        self.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)")
        self.stmt("call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)")

    def need_smem(self, nbytes: int, span: Span) -> None:
        nbytes += self.k.smem_bytes  # scratch space starts after the allocated buffers
        self.smem_bytes = max(self.smem_bytes, nbytes)
        if self.smem_bytes > MAX_SMEM_BYTES:
            raise self.error(
                GPU_TILE_TOO_LARGE, span,
                f"this operation needs {nbytes} bytes of shared memory, more than the GPU's {MAX_SMEM_BYTES}",
                "needs too much shared memory",
                "use smaller tiles (smaller const generics or partition shapes)",
            )

    def smem_ptr(self, byte_off: int, dt: DType, index: str) -> str:
        base = self.scratch if byte_off == 0 else self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {byte_off}")
        return self.emit(f"getelementptr {smem_ty(dt)}, ptr addrspace(3) {base}, i32 {index}")

    def smem_store(self, byte_off: int, dt: DType, index: str, val: str) -> None:
        if dt is DType.BOOL:
            val = self.emit(f"zext i1 {val} to i8")
        p = self.smem_ptr(byte_off, dt, index)
        self.stmt(f"store {smem_ty(dt)} {val}, ptr addrspace(3) {p}, align {smem_size(dt)}")

    def smem_load(self, byte_off: int, dt: DType, index: str) -> str:
        p = self.smem_ptr(byte_off, dt, index)
        v = self.emit(f"load {smem_ty(dt)}, ptr addrspace(3) {p}, align {smem_size(dt)}")
        if dt is DType.BOOL:
            v = self.emit(f"icmp ne i8 {v}, 0")
        return v

    def write_tile(self, x: ir.Value, byte_off: int = 0, as16: str | None = None) -> None:
        """Every thread stores its live elements of `x` at their flat index
        (`as16` = "half"/"bfloat": as 16-bit floats, for `ldmatrix`)."""
        lay = self.lay(x)
        slots = self.tile(x) if x.shape else None
        owner = lay.owner(self)  # replicated data: one copy writes (no write-write race)
        for k in range(lay.K):
            valid = self.and_all([owner, self.chunk_valid(lay, k)])
            after = None
            if valid is not None:
                body, after = self.new_label("sw"), self.new_label("swj")
                self.cbr(valid, body, after)
                self.label(body)
            for j in range(lay.V):
                val = slots[k * lay.V + j] if slots is not None else self.scalar(x)
                if as16 is not None:
                    h = self.emit(f"fptrunc float {val} to {as16}")
                    base = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {byte_off}")
                    ptr = self.emit(f"getelementptr {as16}, ptr addrspace(3) {base}, i32 {self.flat(lay, k, j)}")
                    self.stmt(f"store {as16} {h}, ptr addrspace(3) {ptr}, align 2")
                    continue
                self.smem_store(byte_off, x.dtype, self.flat(lay, k, j), val)
            if after is not None:
                self.br(after)
                self.label(after)

    def safe_index(self, valid: str | None, f: str) -> str:
        """A flat index that is `f` on live lanes and 0 on dead ones (keeps reads in bounds)."""
        if valid is None:
            return f
        return self.emit(f"select i1 {valid}, i32 {f}, i32 0")

    def to_smem(self, xs: list[ir.Value], span: Span) -> list[int]:
        """Barrier; write each tile row-major (16-byte aligned regions); barrier. Returns offsets."""
        offs = []
        total = 0
        for x in xs:
            offs.append(total)
            total += -(-(self.lay(x).numel * smem_size(x.dtype)) // 16) * 16
        self.need_smem(total, span)
        self.barrier()
        for x, off in zip(xs, offs, strict=False):
            self.write_tile(x, off)
        self.barrier()
        return offs

    # -- loops (not unrolled) --------------------------------------------------------------
    def counted_loop(self, lo: int, hi: int, carried: list[tuple[str, str]], body) -> list[str]:  # type: ignore[no-untyped-def]
        """`for r in lo..hi` (i32, static bounds, hi > lo) with carried (type, init) values.

        `body(r, current) -> next` emits the loop body (a do-while: hi > lo is
        required). Returns the values after the last iteration.
        """
        pre = self.cur
        head, exit_ = self.new_label("loop"), self.new_label("done")
        self.br(head)
        self.label(head)
        r = self.tmp()
        phis = [self.tmp() for _ in carried]
        phi_at = len(self.lines)
        self.lines.append("")  # placeholder for the phis, patched below
        nexts = body(r, phis)
        rn = self.emit(f"add i32 {r}, 1")
        c = self.emit(f"icmp slt i32 {rn}, {hi}")
        latch = self.cur
        self.cbr(c, head, exit_)
        phi_lines = [f"  {r} = phi i32 [ {lo}, %{pre} ], [ {rn}, %{latch} ]"]
        for p, (ty, init), nx in zip(phis, carried, nexts, strict=False):
            phi_lines.append(f"  {p} = phi {ty} [ {init}, %{pre} ], [ {nx}, %{latch} ]")
        self.lines[phi_at] = "\n".join(phi_lines)
        self.label(exit_)
        # The exit is reached from the latch only, so the values after the last
        # iteration are the latch's `nexts` (the header phis miss that iteration).
        return list(nexts)

    # ======================================================================= ops
    def run(self) -> str:
        k = self.k
        params: list[str] = []
        self.slots: list[ParamSlot] = []
        for p in k.params:
            match p:
                case ir.TensorParam():
                    base = f"%{_ident(p.name)}"
                    ro = p.name not in self.written
                    aligned = self.facts.get(p.name, TensorFacts()).aligned16
                    params.append(f"ptr addrspace(1) {'align 16 ' if aligned else ''}{base}")
                    self.slots.append(ParamSlot("ptr", p.name, "ptr"))
                    dims = []
                    for d in range(p.rank):
                        nm = f"%{_ident(p.name)}.d{d}"
                        params.append(f"i32 {nm}")
                        dims.append(nm)
                        self.slots.append(ParamSlot("i32", p.name, f"dim{d}"))
                    self.tensors[p.name] = _TensorInfo(p, base, dims, readonly=ro,
                                                       facts=self.facts.get(p.name, TensorFacts()))
                case ir.ScalarParam():
                    dt = p.value.dtype
                    nm = f"%{_ident(p.name)}.arg"
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
                    params.append(f'ptr byval([128 x i8]) align 64 "nvvm.grid_constant" %{_ident(p.name)}')
                    self.slots.append(ParamSlot("tmap", p.tensor,
                                                f"tmap:{p.box[0]}x{p.box[1]}:{p.swizzle}"))
                case _:
                    assert_never(p)
        params.append("ptr addrspace(1) %err")
        self.slots.append(ParamSlot("ptr", "", "err"))
        if any(isinstance(op, ir.Print) for op in gpu_walk(k.body)):
            params.append("ptr addrspace(1) align 16 %pbuf")
            self.slots.append(ParamSlot("ptr", "", "print"))

        self._entry_lines: list[str] = []
        self._tidv: set[int] = set()
        self.declare("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
        for p in k.scalar_params:
            dt = p.value.dtype
            nm = f"%{_ident(p.name)}.arg"
            if dt is DType.BOOL:
                self.env[p.value.id] = self.emit(f"icmp ne i32 {nm}, 0")
            elif dt in (DType.F16, DType.BF16):
                self.env[p.value.id] = self.round_to(nm, dt)
            else:
                self.env[p.value.id] = nm
        self.region(k.body, ())
        body = "\n".join(self.lines)
        entry = "\n".join(["entry:", "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()", *self._entry_lines,
                           "  br label %start", "start:"])
        name = _ident(k.name)
        self.entry_name = name
        out = [
            "; generated by tilec: do not edit",
            'target triple = "nvptx64-nvidia-cuda"',
            "@smem = external addrspace(3) global [0 x i8], align 1024",
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
        ]
        return "\n".join(out) + "\n"

    def region(self, region: ir.Region, args: tuple[Operand, ...]) -> list[Operand]:
        for a, v in zip(region.args, args, strict=True):
            self.env[a.id] = v
        self._red_mark = None  # a region may run again (loops) or not at all: no reuse across it
        for op in region.ops:
            if isinstance(op, ir.Yield):
                self._red_mark = None
                return [self.env[v.id] for v in op.values]  # may be a `Frag` (see `for_`)
            self.op(op)
        self._red_mark = None
        return []

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
            case ir.TensorDim(result=r, tensor=t, axis=a):
                info = self.tensors[t]
                self.env[r.id] = info.dims[a]
                fd = info.facts.dims_div16
                if a < len(fd) and fd[a]:
                    self._mult[r.id] = 16
            case ir.Load():
                self.load(op)
            case ir.Store():
                self.store(op)
            case ir.AtomicRMW():
                self.atomic(op)
            case ir.Elementwise(result=r, op=eop, operands=xs):
                self.elementwise(r, eop, xs, op.span)
            case ir.Cast(result=r, x=x):
                if x.shape:
                    self.env[r.id] = [self.cast(s, x.dtype, r.dtype) for s in self.tile(x)]
                else:
                    self.env[r.id] = self.cast(self.scalar(x), x.dtype, r.dtype)
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

    def convert_layout(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        """`r` = `x` in another layout: in registers when every thread already
        holds what it needs (`local`), else through shared memory (every
        thread writes its elements row-major, then reads its new ones)."""
        src, dst = self.layouts.get(x.id), self.layouts.get(r.id)
        if isinstance(dst, MmaAcc) and not isinstance(src, MmaAcc):
            self.env[r.id] = self.to_frag(x, span)
        elif isinstance(src, MmaAcc) and not isinstance(dst, MmaAcc):
            op = self.env[x.id]
            assert isinstance(op, Frag)
            self.from_frag(op, r, span)
        elif src == dst or not x.shape:
            self.env[r.id] = self.env[x.id]
        elif not self.local(r, x, list(range(len(x.shape)))):
            (off,) = self.to_smem([x], span)
            self.env[r.id] = [self.smem_load(off, x.dtype, f) for _, _, f in self.out_slots(r)]

    # -- divisibility facts (specialisation) --------------------------------------------
    def multiple_of(self, v: ir.Value) -> int:
        return self._mult.get(v.id, 1)

    def note_arith(self, r: ir.Value, eop: ir.ElemOp, xs: tuple[ir.Value, ...]) -> None:
        if r.shape or not r.dtype.is_int:
            return
        ms = [self._mult.get(x.id, 1) for x in xs]
        if eop is ir.ElemOp.MUL:
            a, b = ms
            self._mult[r.id] = (a or 1 << 30) * (b or 1 << 30) if a and b else 0
        elif eop in (ir.ElemOp.ADD, ir.ElemOp.SUB):
            self._mult[r.id] = math.gcd(*ms)

    # -- memory ----------------------------------------------------------------------
    def tensor_strides(self, info: _TensorInfo) -> list[str]:
        if not info.strides:
            r = info.param.rank
            st = ["1"] * r
            acc = "1"
            for d in range(r - 1, -1, -1):
                st[d] = acc
                if d > 0:
                    # In the entry block: the strides must dominate every use.
                    dim64 = self.entry_emit(f"sext i32 {info.dims[d]} to i64")
                    acc = dim64 if acc == "1" else self.entry_emit(f"mul i64 {acc}, {dim64}")
            info.strides = st
        return info.strides

    def address(self, info: _TensorInfo, coords: list[str]) -> str:
        st = self.tensor_strides(info)
        acc = "0"
        for c, s in zip(coords, st, strict=False):
            c64 = self.emit(f"sext i32 {c} to i64")
            term = c64 if s == "1" else self.emit(f"mul i64 {c64}, {s}")
            acc = term if acc == "0" else self.emit(f"add i64 {acc}, {term}")
        return self.emit(f"getelementptr {self.mty(info)}, ptr addrspace(1) {info.base}, i64 {acc}")

    @staticmethod
    def mty(info: _TensorInfo) -> str:
        return mem_ty(info.param.dtype, info.facts.bf16_f32)

    @staticmethod
    def msize(info: _TensorInfo) -> int:
        return mem_size(info.param.dtype, info.facts.bf16_f32)

    def in_bounds(self, info: _TensorInfo, coords: list[str], last_extent: int = 1) -> str | None:
        """i1: coords (and `last_extent - 1` more elements along the last dim) are inside the tensor."""
        conds: list[str | None] = []
        r = len(coords)
        for d, c in enumerate(coords):
            if d == r - 1 and last_extent > 1:
                nonneg = self.emit(f"icmp sge i32 {c}, 0")
                end = self.emit(f"add i32 {c}, {last_extent}")
                conds += [nonneg, self.emit(f"icmp sle i32 {end}, {info.dims[d]}")]
            else:
                conds.append(self.emit(f"icmp ult i32 {c}, {info.dims[d]}"))
        return self.and_all(conds)

    def mem_to_reg(self, v: str, dt: DType, mt: str | None = None) -> str:
        mt = mt or mem_ty(dt)
        if mt in ("half", "bfloat"):
            return self.emit(f"fpext {mt} {v} to float")
        if dt is DType.BOOL:
            return self.emit(f"icmp ne i8 {v}, 0")
        return v

    def reg_to_mem(self, v: str, dt: DType, mt: str | None = None) -> str:
        mt = mt or mem_ty(dt)
        if mt in ("half", "bfloat"):  # exact: the register holds a value of the type
            return self.emit(f"fptrunc float {v} to {mt}")
        if dt is DType.BOOL:
            return self.emit(f"zext i1 {v} to i8")
        return v

    def _chunk_coords(self, lay: Layout, k: int, offsets: list[str]) -> list[str]:
        idx = self.slot_coords(lay, k, 0, lay.shape)
        out = []
        for o, i in zip(offsets, idx, strict=False):
            out.append(o if i == "0" else (i if o == "0" else self.emit(f"add i32 {o}, {i}")))
        return out

    def _specialised(self, info: _TensorInfo, offsets: tuple[ir.Value, ...], lay: Layout,
                     has_mask: bool) -> bool:
        """True when a chunk is provably all-in or all-out and 16-byte-aligned-enough (no scalar path)."""
        f = info.facts
        r = info.param.rank
        if has_mask or lay.V == 1 or not f.aligned16 or len(f.dims_div16) != r or not f.dims_div16[-1]:
            return False
        m = self.multiple_of(offsets[-1])
        return m == 0 or m % lay.V == 0

    def _vector_ok(self, whole: str | None, addr: str, nbytes: int, lanes: list[str]) -> str | None:
        """i1: an unspecialised chunk may take the vector access: it is wholly in
        bounds, its address is aligned to the vector's `nbytes`, and every lane
        of the mask (if any) is on."""
        pi = self.emit(f"ptrtoint ptr addrspace(1) {addr} to i64")
        lo = self.emit(f"and i64 {pi}, {nbytes - 1}")
        al = self.emit(f"icmp eq i64 {lo}, 0")
        return self.and_all([whole, al, *lanes])

    def load(self, op: ir.Load) -> None:
        r = op.result
        info = self.tensors[op.tensor]
        dt = info.param.dtype
        mt, es = self.mty(info), self.msize(info)
        lay = self.lay(r)
        offsets = [self.scalar(o) for o in op.offsets]
        pad = self.scalar(op.padding) if op.padding is not None else const_operand(dt, 0)
        mask = self.tile(op.mask) if op.mask is not None else None
        meta = ", !invariant.load !0" if info.readonly else ""
        spec = self._specialised(info, op.offsets, lay, mask is not None)
        out: Slots = []
        V = lay.V
        vt = f"<{V} x {mt}>"
        for k in range(lay.K):
            coords = self._chunk_coords(lay, k, offsets)
            valid = self.chunk_valid(lay, k)
            whole = self.and_all([valid, self.in_bounds(info, coords, V)])
            addr = self.address(info, coords)
            join = self.new_label("lj")
            incoming: list[tuple[list[str], str]] = []
            if V > 1:
                vec_l = self.new_label("lv")
                lanes = mask[k * V:(k + 1) * V] if mask is not None else []
                fast = whole if spec else self._vector_ok(whole, addr, V * es, lanes)
                slow_l = self.new_label("ls") if not spec else join
                pre = self.cur
                self.cbr(fast or "true", vec_l, slow_l)
                self.label(vec_l)
                vec = self.emit(f"load {vt}, ptr addrspace(1) {addr}, align {V * es}{meta}")
                vals = [self.mem_to_reg(self.emit(f"extractelement {vt} {vec}, i32 {j}"), dt, mt) for j in range(V)]
                incoming.append((vals, self.cur))
                self.br(join)
                if spec:
                    incoming.append(([pad] * V, pre))
                else:
                    self.label(slow_l)
            if V == 1 or not spec:
                vals = []
                for j in range(V):
                    cj = list(coords)
                    if j:
                        cj[-1] = self.emit(f"add i32 {coords[-1]}, {j}")
                    ok = self.and_all([valid, self.in_bounds(info, cj), mask[k * V + j] if mask else None])
                    pj = addr if j == 0 else self.emit(f"getelementptr {mt}, ptr addrspace(1) {addr}, i64 {j}")
                    ld, skip, jn = self.new_label("le"), self.new_label("lk"), self.new_label("lm")
                    self.cbr(ok or "true", ld, skip)
                    self.label(ld)
                    x = self.mem_to_reg(self.emit(f"load {mt}, ptr addrspace(1) {pj}, align {es}{meta}"), dt, mt)
                    ld_end = self.cur
                    self.br(jn)
                    self.label(skip)
                    self.br(jn)
                    self.label(jn)
                    vals.append(self.emit(f"phi {reg_ty(dt)} [ {x}, %{ld_end} ], [ {pad}, %{skip} ]"))
                incoming.append((vals, self.cur))
                self.br(join)
            self.label(join)
            for j in range(V):
                if len(incoming) == 1:
                    out.append(incoming[0][0][j])
                else:
                    arms = ", ".join(f"[ {vals[j]}, %{blk} ]" for vals, blk in incoming)
                    out.append(self.emit(f"phi {reg_ty(dt)} {arms}"))
        self.env[r.id] = out

    def store(self, op: ir.Store) -> None:
        wg = self.layouts.get(op.value.id)
        if isinstance(wg, WgmmaAcc):
            self.store_wgmma(op, wg)
            return
        info = self.tensors[op.tensor]
        dt = info.param.dtype
        mt, es = self.mty(info), self.msize(info)
        x = op.value
        lay = self.lay(x)
        slots = self.tile(x)
        offsets = [self.scalar(o) for o in op.offsets]
        mask = self.tile(op.mask) if op.mask is not None else None
        spec = self._specialised(info, op.offsets, lay, mask is not None)
        V = lay.V
        vt = f"<{V} x {mt}>"
        owner = lay.owner(self)  # replicated data: one copy stores it
        for k in range(lay.K):
            coords = self._chunk_coords(lay, k, offsets)
            valid = self.and_all([owner, self.chunk_valid(lay, k)])
            whole = self.and_all([valid, self.in_bounds(info, coords, V)])
            addr = self.address(info, coords)
            join = self.new_label("sj")
            mvals = [self.reg_to_mem(slots[k * V + j], dt, mt) for j in range(V)]
            if V > 1:
                vec_l = self.new_label("sv")
                lanes = mask[k * V:(k + 1) * V] if mask is not None else []
                fast = whole if spec else self._vector_ok(whole, addr, V * es, lanes)
                slow_l = self.new_label("ss") if not spec else join
                self.cbr(fast or "true", vec_l, slow_l)
                self.label(vec_l)
                vec = "undef"
                for j in range(V):
                    vec = self.emit(f"insertelement {vt} {vec}, {mt} {mvals[j]}, i32 {j}")
                self.stmt(f"store {vt} {vec}, ptr addrspace(1) {addr}, align {V * es}")
                self.br(join)
                if not spec:
                    self.label(slow_l)
            if V == 1 or not spec:
                for j in range(V):
                    cj = list(coords)
                    if j:
                        cj[-1] = self.emit(f"add i32 {coords[-1]}, {j}")
                    ok = self.and_all([valid, self.in_bounds(info, cj), mask[k * V + j] if mask else None])
                    pj = addr if j == 0 else self.emit(f"getelementptr {mt}, ptr addrspace(1) {addr}, i64 {j}")
                    st, jn = self.new_label("se"), self.new_label("sm")
                    self.cbr(ok or "true", st, jn)
                    self.label(st)
                    self.stmt(f"store {mt} {mvals[j]}, ptr addrspace(1) {pj}, align {es}")
                    self.br(jn)
                    self.label(jn)
                self.br(join)
            self.label(join)

    def atomic(self, op: ir.AtomicRMW) -> None:
        info = self.tensors[op.tensor]
        dt = info.param.dtype
        mt = self.mty(info)
        # Float max/min propagate NaN like the interpreter's np.maximum.at (the
        # hardware's has no such rule), bf16 rounds after each add, and bool
        # (one byte) is or/and: all three are a compare-and-swap loop. f16/f32/
        # f64 adds and integers are native.
        cas = dt is DType.BOOL or (dt.is_float and (op.op is not ir.AtomicOp.ADD or dt is DType.BF16))
        x = op.value
        tile = bool(x.shape)
        lay = self.lay(x) if tile else None
        positions: list[tuple[int, int]] = (
            [(k, j) for k in range(lay.K) for j in range(lay.V)] if lay is not None else [(0, 0)]
        )
        if dt.is_float:
            rmw = {ir.AtomicOp.ADD: "fadd", ir.AtomicOp.MAX: "fmax", ir.AtomicOp.MIN: "fmin"}[op.op]
        else:
            signed = dt.is_signed
            rmw = {ir.AtomicOp.ADD: "add", ir.AtomicOp.MAX: "max" if signed else "umax",
                   ir.AtomicOp.MIN: "min" if signed else "umin"}[op.op]
        owner = lay.owner(self) if lay is not None else None  # replicas must not add twice
        for n, (k, _j) in enumerate(positions):
            conds: list[str | None] = []
            if lay is not None:
                conds += [owner, self.chunk_valid(lay, k)]
            else:
                # A scalar atomic is one operation per block, not one per thread.
                conds.append(self.emit("icmp eq i32 %tid, 0"))
            coords = []
            for idx in op.indices:
                v = self.get(idx)
                coords.append(v[n] if isinstance(v, list) else v)
            conds.append(self.in_bounds(info, coords))
            if op.mask is not None:
                m = self.get(op.mask)
                conds.append(m[n] if isinstance(m, list) else m)
            ok = self.and_all(conds)
            go, jn = self.new_label("ae"), self.new_label("am")
            self.cbr(ok or "true", go, jn)
            self.label(go)
            addr = self.address(info, coords)
            val = self.get(x)
            val = val[n] if isinstance(val, list) else val
            if cas:
                self.atomic_cas(op.op, addr, val, dt, mt)
            else:
                self.emit(f"atomicrmw {rmw} ptr addrspace(1) {addr}, {mt} {self.reg_to_mem(val, dt, mt)} monotonic")
            self.br(jn)
            self.label(jn)

    def atomic_cas(self, aop: ir.AtomicOp, addr: str, val: str, dt: DType, mt: str) -> None:
        """`*addr = aop(*addr, val)` atomically, by a compare-and-swap loop on the bits."""
        it = {"i8": "i8", "half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}[mt]
        size = {"i8": 1, "i16": 2, "i32": 4, "i64": 8}[it]
        ty = reg_ty(dt)
        first = self.emit(f"load atomic {it}, ptr addrspace(1) {addr} monotonic, align {size}")
        pre = self.cur
        loop, done = self.new_label("cas"), self.new_label("casd")
        self.br(loop)
        self.label(loop)
        old = self.tmp()
        phi_at = len(self.lines)
        self.lines.append("")
        cur = self.mem_to_reg(old if it == mt else self.emit(f"bitcast {it} {old} to {mt}"), dt, mt)
        if dt is DType.BOOL:
            # np.add.at / maximum.at on bool: or; minimum.at: and
            new = self.emit(f"{'and' if aop is ir.AtomicOp.MIN else 'or'} i1 {cur}, {val}")
        elif aop is ir.AtomicOp.ADD:
            new = self.round_to(self.emit(f"fadd {ty} {cur}, {val}"), dt)
        else:
            eop = ir.ElemOp.MAXIMUM if aop is ir.AtomicOp.MAX else ir.ElemOp.MINIMUM
            new = self.felem(eop, [cur, val], dt, ty)
        stored = self.reg_to_mem(new, dt, mt)
        bits = stored if it == mt else self.emit(f"bitcast {mt} {stored} to {it}")
        pair = self.emit(f"cmpxchg ptr addrspace(1) {addr}, {it} {old}, {it} {bits} monotonic monotonic")
        seen = self.emit(f"extractvalue {{ {it}, i1 }} {pair}, 0")
        swapped = self.emit(f"extractvalue {{ {it}, i1 }} {pair}, 1")
        latch = self.cur
        self.cbr(swapped, done, loop)
        self.lines[phi_at] = f"  {old} = phi {it} [ {first}, %{pre} ], [ {seen}, %{latch} ]"
        self.label(done)

    # -- element-wise --------------------------------------------------------------------
    def elementwise(self, r: ir.Value, eop: ir.ElemOp, xs: tuple[ir.Value, ...], span: Span) -> None:
        in_dt = xs[-1].dtype if eop is ir.ElemOp.WHERE else xs[0].dtype
        ops = [self.get(x) for x in xs]
        if r.shape:
            n = self.nregs(r)
            cols = [o if isinstance(o, list) else [o] * n for o in ops]
            self.env[r.id] = [self.elem(eop, [c[i] for c in cols], in_dt, r.dtype) for i in range(n)]
        else:
            self.env[r.id] = self.elem(eop, [o for o in ops if isinstance(o, str)], in_dt, r.dtype)
            self.note_arith(r, eop, xs)

    def elem(self, eop: ir.ElemOp, a: list[str], dt: DType, out: DType) -> str:
        E = ir.ElemOp
        ty = reg_ty(dt)
        if eop is E.WHERE:
            return self.emit(f"select i1 {a[0]}, {reg_ty(out)} {a[1]}, {reg_ty(out)} {a[2]}")
        if dt.is_float:
            res = self.felem(eop, a, dt, ty)
            return res if eop.is_comparison else self.round_to(res, dt)
        return self.ielem(eop, a, dt, ty)

    def fcall(self, name: str, ty: str, args: list[str]) -> str:
        sfx = "f32" if ty == "float" else "f64"
        self.declare(f"declare {ty} @llvm.{name}.{sfx}({', '.join([ty] * len(args))})")
        return self.call(ty, f"llvm.{name}.{sfx}", ", ".join(f"{ty} {x}" for x in args))

    def nv(self, name: str, x: str) -> str:
        self.declare(f"declare float @{name}(float)")
        return self.call("float", name, f"float {x}")

    def fexp(self, x: str) -> str:
        # exp(x) = 2^(x*log2e); feed the product's rounding error back: 2^t * (1 + e*ln2)
        t = self.emit(f"fmul float {x}, {const_operand(DType.F32, 1.4426950408889634)}")
        nt = self.emit(f"fneg float {t}")
        e = self.fcall("fma", "float", [x, const_operand(DType.F32, 1.4426950408889634), nt])
        e2 = self.fcall("fma", "float", [x, const_operand(DType.F32, 1.925963033500891e-08), e])
        p = self.nv("llvm.nvvm.ex2.approx.f32", t)
        corr = self.emit(f"fmul float {e2}, {const_operand(DType.F32, 0.6931471805599453)}")
        # x = +-inf makes the error term inf - inf = NaN; the exact answer needs no correction.
        fin = self.emit(f"fcmp ord float {corr}, 0.0")
        corr = self.emit(f"select i1 {fin}, float {corr}, float 0.0")
        return self.fcall("fma", "float", [p, corr, p])

    def freduce_2pi(self, x: str) -> str:
        q = self.emit(f"fmul float {x}, {const_operand(DType.F32, 0.15915494309189535)}")
        kq = self.fcall("rint", "float", [q])
        nk = self.emit(f"fneg float {kq}")
        r1 = self.fcall("fma", "float", [nk, const_operand(DType.F32, 6.28125), x])
        return self.fcall("fma", "float", [nk, const_operand(DType.F32, 0.0019353071795864769), r1])

    def felem(self, eop: ir.ElemOp, a: list[str], dt: DType, ty: str) -> str:
        E = ir.ElemOp
        simple = {E.ADD: "fadd", E.SUB: "fsub", E.MUL: "fmul", E.DIV: "fdiv", E.REM: "frem"}
        cmp = {E.EQ: "oeq", E.NE: "une", E.LT: "olt", E.LE: "ole", E.GT: "ogt", E.GE: "oge"}
        if eop is E.REM and ty == "float":
            return self.fmod_f32(a[0], a[1])
        if eop in simple:
            return self.emit(f"{simple[eop]} {ty} {a[0]}, {a[1]}")
        if eop in cmp:
            return self.emit(f"fcmp {cmp[eop]} {ty} {a[0]}, {a[1]}")
        if ty == "double" and eop.value in f64math.FUNCS:
            return f64math.FUNCS[eop.value](self, a[0])  # no f64 approximations in PTX
        if eop in (E.ERF, E.POW):
            # computed in f64 (the interpreter's algorithms), f32 rounded once
            if ty == "double":
                return f64math.BINARY_FUNCS["pow"](self, a[0], a[1]) if eop is E.POW else \
                    f64math.erf(self, a[0])
            wide = [self.emit(f"fpext float {v} to double") for v in a]
            r = f64math.pow(self, wide[0], wide[1]) if eop is E.POW else f64math.erf(self, wide[0])
            return self.emit(f"fptrunc double {r} to float")
        match eop:
            case E.NEG:
                return self.emit(f"fneg {ty} {a[0]}")
            case E.ABS:
                return self.fcall("fabs", ty, a)
            case E.FLOOR:
                return self.fcall("floor", ty, a)
            case E.CEIL:
                return self.fcall("ceil", ty, a)
            case E.SQRT:
                return self.fcall("sqrt", ty, a)
            case E.FMA:
                return self.fcall("fma", ty, a)
            case E.MAXIMUM | E.MINIMUM if ty == "float" and self.k.sm >= 80:
                # max.NaN.f32 / min.NaN.f32: NaN-propagating in one instruction (sm_80+)
                return self.fcall("maximum" if eop is E.MAXIMUM else "minimum", ty, a)
            case E.MAXIMUM | E.MINIMUM:
                m = self.fcall("maxnum" if eop is E.MAXIMUM else "minnum", ty, a)
                uno = self.emit(f"fcmp uno {ty} {a[0]}, {a[1]}")
                nan = self.emit(f"fadd {ty} {a[0]}, {a[1]}")
                return self.emit(f"select i1 {uno}, {ty} {nan}, {ty} {m}")
            case E.EXP:
                return self.fexp(a[0])
            case E.EXP2:
                return self.nv("llvm.nvvm.ex2.approx.f32", a[0])
            case E.LOG2:
                return self.nv("llvm.nvvm.lg2.approx.f", a[0])
            case E.LOG:
                l2 = self.nv("llvm.nvvm.lg2.approx.f", a[0])
                return self.emit(f"fmul float {l2}, {const_operand(DType.F32, 0.6931471805599453)}")
            case E.RSQRT:
                return self.nv("llvm.nvvm.rsqrt.approx.f", a[0])
            case E.SIN:
                return self.nv("llvm.nvvm.sin.approx.f", self.freduce_2pi(a[0]))
            case E.COS:
                return self.nv("llvm.nvvm.cos.approx.f", self.freduce_2pi(a[0]))
            case E.TANH:
                ax = self.fcall("fabs", "float", [a[0]])
                two = self.emit(f"fmul float {ax}, 2.0")
                ex = self.fexp(two)
                den = self.emit(f"fadd float {ex}, 1.0")
                q = self.emit(f"fdiv float 2.0, {den}")
                t = self.emit(f"fsub float 1.0, {q}")
                return self.fcall("copysign", "float", [t, a[0]])
            case E.SIGMOID:
                nx = self.emit(f"fneg float {a[0]}")
                ex = self.fexp(nx)
                den = self.emit(f"fadd float {ex}, 1.0")
                return self.emit(f"fdiv float 1.0, {den}")
            case _:
                raise AssertionError(f"float op {eop} has no lowering")

    def fmod_f32(self, x: str, y: str) -> str:
        """fmod of f32 values, exact like the interpreter's np.fmod while |x/y| < 2^29:
        in f64, q = trunc(x/y) and r = x - q*y (one fma, exact: q*y fits 53
        bits and the true remainder is an f32); a quotient rounded up to the
        next integer leaves r with the wrong sign, fixed by one more exact step.
        Beyond 2^29 it is LLVM's frem (x - trunc(x/y)*y in f32)."""
        xd = self.emit(f"fpext float {x} to double")
        yd = self.emit(f"fpext float {y} to double")
        q = self.fcall("trunc", "double", [self.emit(f"fdiv double {xd}, {yd}")])
        nq = self.emit(f"fneg double {q}")
        r = self.fcall("fma", "double", [nq, yd, xd])
        # wrong sign: r != 0 and sign(r) != sign(x)
        rx = self.emit(f"fmul double {r}, {xd}")
        wrong = self.emit(f"fcmp olt double {rx}, 0.0")
        ay = self.fcall("fabs", "double", [yd])
        step = self.fcall("copysign", "double", [ay, r])
        r2 = self.emit(f"fsub double {r}, {step}")
        rf = self.emit(f"select i1 {wrong}, double {r2}, double {r}")
        # fmod keeps the sign of x, also for a zero remainder (-4 % 2 = -0)
        rs = self.fcall("copysign", "double", [rf, xd])
        exact = self.emit(f"fptrunc double {rs} to float")
        aq = self.fcall("fabs", "double", [q])
        small = self.emit(f"fcmp olt double {aq}, {const_operand(DType.F64, 2.0**29)}")
        fb = self.emit(f"frem float {x}, {y}")
        out = self.emit(f"select i1 {small}, float {exact}, float {fb}")
        # y = +-inf: x itself for a finite x (0 * inf would be NaN above); x = inf,
        # y = 0 and NaNs give NaN through q (not `small`) and frem
        yinf = self.emit(f"fcmp oeq double {ay}, 0x7FF0000000000000")
        xfin = self.emit(f"fcmp one double {self.fcall('fabs', 'double', [xd])}, 0x7FF0000000000000")
        keep = self.emit(f"and i1 {yinf}, {xfin}")
        return self.emit(f"select i1 {keep}, float {x}, float {out}")

    def ielem(self, eop: ir.ElemOp, a: list[str], dt: DType, ty: str) -> str:
        E = ir.ElemOp
        signed = dt.is_signed
        bits = 1 if dt is DType.BOOL else dt.bits
        simple = {E.ADD: "add", E.SUB: "sub", E.MUL: "mul", E.AND: "and", E.OR: "or", E.XOR: "xor"}
        if eop in simple:
            return self.emit(f"{simple[eop]} {ty} {a[0]}, {a[1]}")
        cmp = {E.EQ: "eq", E.NE: "ne", E.LT: "slt" if signed else "ult", E.LE: "sle" if signed else "ule",
               E.GT: "sgt" if signed else "ugt", E.GE: "sge" if signed else "uge"}
        if eop in cmp:
            return self.emit(f"icmp {cmp[eop]} {ty} {a[0]}, {a[1]}")
        match eop:
            case E.NEG:
                return self.emit(f"sub {ty} 0, {a[0]}")
            case E.NOT:
                return self.emit(f"xor {ty} {a[0]}, {'true' if bits == 1 else -1}")
            case E.ABS:
                if not signed:
                    return a[0]
                self.declare(f"declare {ty} @llvm.abs.{ty}({ty}, i1)")
                return self.call(ty, f"llvm.abs.{ty}", f"{ty} {a[0]}, i1 false")
            case E.MAXIMUM | E.MINIMUM:
                nm = ("s" if signed else "u") + ("max" if eop is E.MAXIMUM else "min")
                self.declare(f"declare {ty} @llvm.{nm}.{ty}({ty}, {ty})")
                return self.call(ty, f"llvm.{nm}.{ty}", f"{ty} {a[0]}, {ty} {a[1]}")
            case E.DIV | E.REM:
                zero = self.emit(f"icmp eq {ty} {a[1]}, 0")
                bad = zero
                if signed:
                    mn = -(1 << (bits - 1))
                    is_min = self.emit(f"icmp eq {ty} {a[0]}, {mn}")
                    is_m1 = self.emit(f"icmp eq {ty} {a[1]}, -1")
                    ovf = self.emit(f"and i1 {is_min}, {is_m1}")
                    bad = self.emit(f"or i1 {zero}, {ovf}")
                d = self.emit(f"select i1 {bad}, {ty} 1, {ty} {a[1]}")
                if eop is E.DIV:
                    q = self.emit(f"{'sdiv' if signed else 'udiv'} {ty} {a[0]}, {d}")
                    return self.emit(f"select i1 {zero}, {ty} 0, {ty} {q}")
                rm = self.emit(f"{'srem' if signed else 'urem'} {ty} {a[0]}, {d}")
                return self.emit(f"select i1 {zero}, {ty} {a[0]}, {ty} {rm}")
            case E.SHL | E.SHR:
                big = self.emit(f"icmp uge {ty} {a[1]}, {bits}")
                amt = self.emit(f"select i1 {big}, {ty} 0, {ty} {a[1]}")
                if eop is E.SHL:
                    s = self.emit(f"shl {ty} {a[0]}, {amt}")
                    return self.emit(f"select i1 {big}, {ty} 0, {ty} {s}")
                if signed:
                    amt2 = self.emit(f"select i1 {big}, {ty} {bits - 1}, {ty} {a[1]}")
                    return self.emit(f"ashr {ty} {a[0]}, {amt2}")
                s = self.emit(f"lshr {ty} {a[0]}, {amt}")
                return self.emit(f"select i1 {big}, {ty} 0, {ty} {s}")
            case _:
                raise AssertionError(f"integer op {eop} has no lowering")

    # -- casts ---------------------------------------------------------------------------
    def cast(self, x: str, src: DType, dst: DType) -> str:
        if src is dst:
            return x
        st, dt_ = reg_ty(src), reg_ty(dst)
        if dst is DType.BOOL:
            if src.is_float:
                return self.emit(f"fcmp une {st} {x}, 0.0")
            return self.emit(f"icmp ne {st} {x}, 0")
        if src is DType.BOOL:
            if dst.is_float:
                return self.emit(f"uitofp i1 {x} to {dt_}")
            return self.emit(f"zext i1 {x} to {dt_}")
        if src.is_float and dst.is_float:
            if src is DType.F64 and dst is DType.BF16:
                return self.f64_to_bf16(x)
            if st == "double" and dt_ == "float":
                narrow = {DType.F16: "half", DType.BF16: "bfloat", DType.F32: "float"}[dst]
                h = self.emit(f"fptrunc double {x} to {narrow}")
                return h if narrow == "float" else self.emit(f"fpext {narrow} {h} to float")
            if st == "float" and dt_ == "double":
                return self.emit(f"fpext float {x} to double")
            return self.round_to(x, dst)  # between f16/bf16/f32 (all in f32 registers)
        if src.is_int and dst.is_float and ((src.bits == 64 and dst is not DType.F64) or dst is DType.BF16):
            # The interpreter converts through f64 (exact below 2^53) and rounds
            # that to `dst`; a direct conversion can differ (one rounding
            # instead of two for huge i64, or two via f32 for bf16 on sm_80).
            wide = self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {st} {x} to double")
            return self.cast(wide, DType.F64, dst)
        if src.is_int and dst.is_float:
            narrow = {DType.F16: "half", DType.BF16: "bfloat"}.get(dst, dt_)
            h = self.emit(f"{'sitofp' if src.is_signed else 'uitofp'} {st} {x} to {narrow}")
            return h if narrow == dt_ else self.emit(f"fpext {narrow} {h} to float")
        if src.is_float and dst.is_int:
            nm = f"llvm.fpto{'si' if dst.is_signed else 'ui'}.sat.{dt_}.{'f32' if st == 'float' else 'f64'}"
            self.declare(f"declare {dt_} @{nm}({st})")
            return self.call(dt_, nm, f"{st} {x}")
        # int -> int
        if src.bits == dst.bits:
            return x
        if src.bits > dst.bits:
            return self.emit(f"trunc {st} {x} to {dt_}")
        return self.emit(f"{'sext' if src.is_signed else 'zext'} {st} {x} to {dt_}")

    def f64_to_bf16(self, x: str) -> str:
        """f64 -> bf16 correctly rounded (the interpreter's rule): f64 -> f32 with
        round-to-odd (exact, or truncated with the last bit set), then -> bf16
        to nearest. A plain fptrunc is that on sm_90 but rounds twice (via f32
        to nearest) on sm_80."""
        return self.round_to(self.f64_to_f32_odd(x), DType.BF16)

    def f64_to_f32_odd(self, x: str) -> str:
        """f64 -> f32 rounded to odd (uses only `emit` and `fcall`: the host test
        JIT-compiles it against the interpreter's `numeric.f64_to_f32_odd`)."""
        f = self.emit(f"fptrunc double {x} to float")
        back = self.emit(f"fpext float {f} to double")
        inexact = self.emit(f"fcmp one double {back}, {x}")  # false for NaN: it stays as it is
        ab = self.fcall("fabs", "double", [back])
        ax = self.fcall("fabs", "double", [x])
        away = self.emit(f"fcmp ogt double {ab}, {ax}")
        bits = self.emit(f"bitcast float {f} to i32")
        dec = self.emit(f"sub i32 {bits}, 1")  # one step toward zero (sign-magnitude)
        rz = self.emit(f"select i1 {away}, i32 {dec}, i32 {bits}")
        odd = self.emit(f"or i32 {rz}, 1")
        fin = self.emit(f"select i1 {inexact}, i32 {odd}, i32 {bits}")
        return self.emit(f"bitcast i32 {fin} to float")

    # -- cross-thread ops ---------------------------------------------------------------------
    def out_slots(self, r: ir.Value):  # type: ignore[no-untyped-def]
        """(slot index, valid, safe flat index) for each slot of result `r` (scalar: one)."""
        if not r.shape:
            yield 0, None, "0"
            return
        lay = self.lay(r)
        for k in range(lay.K):
            valid = self.chunk_valid(lay, k)
            for j in range(lay.V):
                yield k * lay.V + j, valid, self.safe_index(valid, self.flat(lay, k, j))

    def finish(self, shape: tuple[int, ...], vals: list[str], r: ir.Value) -> None:
        self.env[r.id] = vals if shape else vals[0]

    def reduce(self, op: ir.Reduce) -> None:
        if reductions.reduce_blocked(self, op):
            return
        if isinstance(self.lay(op.x), ChunkedView) and isinstance(self.lay(op.result), ChunkedView) \
                and (self.reduce_shuffle(op) or self.reduce_grouped(op)):
            return
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        ty = reg_ty(dt)
        (off,) = self.to_smem([x], op.span)
        xs = strides_of(x.shape)
        L = x.shape[axis]
        rshape = r.shape
        bases = []
        for oc in ([c for _, c in self.out_coords(r)] if rshape else [[]]):
            full = [*oc[:axis], "0", *oc[axis:]]
            bases.append(self.linear(full, x.shape))
        step = xs[axis]
        R = ir.ReduceOp
        is_arg = op.op in (R.ARGMAX, R.ARGMIN)
        firsts = [self.smem_load(off, dt, b) for b in bases]
        carried = [(ty, v) for v in firsts]
        if is_arg:
            carried += [("i32", "0")] * len(bases)

        def body(rr: str, cur: list[str]) -> list[str]:
            nb = len(bases)
            nxt = []
            idx_next = []
            for i, b in enumerate(bases):
                off_r = rr if step == 1 else self.emit(f"mul i32 {rr}, {step}")
                v = self.smem_load(off, dt, self.emit(f"add i32 {b}, {off_r}"))
                acc = cur[i]
                if is_arg:
                    better = self.better(op.op is R.ARGMAX, v, acc, dt)
                    nxt.append(self.emit(f"select i1 {better}, {ty} {v}, {ty} {acc}"))
                    idx_next.append(self.emit(f"select i1 {better}, i32 {rr}, i32 {cur[nb + i]}"))
                else:
                    nxt.append(self.combine(op.op, acc, v, dt))
            return nxt + idx_next

        finals = self.counted_loop(1, L, carried, body) if L > 1 else [v for _, v in carried]
        if is_arg:
            vals = finals[len(bases):]
        else:
            vals = [self.round_to(v, dt) for v in finals[: len(bases)]]
        self.finish(rshape, vals, r)

    def _out_vectors(self, x: ir.Value, axis: int, rshape: tuple[int, ...]) -> dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]]:
        """Slots of `x` grouped by the output index they reduce into, as a function
        of the thread id (-1 for dead lanes): {key: (o[t] for t in 0..T-1, slots)}."""
        lay = self.lay(x)
        t = np.arange(self.T, dtype=np.int64)
        groups: dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        for k in range(lay.K):
            for j in range(lay.V):
                f = (k * self.T + t) * lay.V + j
                live = f < lay.numel
                o = np.full(self.T, -1, dtype=np.int64)
                if live.any():
                    cs = list(np.unravel_index(f[live], x.shape))
                    del cs[axis]
                    o[live] = np.ravel_multi_index(cs, rshape) if rshape else 0
                key = o.tobytes()
                if key not in groups:
                    groups[key] = (o, [])
                groups[key][1].append((k, j))
        return groups

    def shfl_xor(self, v: str, dt: DType, m: int) -> str:
        """`v` of the lane `lane ^ m` (whole warp; 64-bit values in two halves)."""
        self.declare("declare i32 @llvm.nvvm.shfl.sync.bfly.i32(i32, i32, i32, i32)")
        ty = reg_ty(dt)
        if ty in ("i64", "double"):
            w = v if ty == "i64" else self.emit(f"bitcast double {v} to i64")
            lo = self.emit(f"trunc i64 {w} to i32")
            hi = self.emit(f"trunc i64 {self.emit(f'lshr i64 {w}, 32')} to i32")
            lo2 = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {lo}, i32 {m}, i32 31")
            hi2 = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {hi}, i32 {m}, i32 31")
            lo64 = self.emit(f"zext i32 {lo2} to i64")
            hi64 = self.emit(f"zext i32 {hi2} to i64")
            hish = self.emit(f"shl i64 {hi64}, 32")
            w2 = self.emit(f"or i64 {lo64}, {hish}")
            return w2 if ty == "i64" else self.emit(f"bitcast i64 {w2} to double")
        if ty == "float":
            i = self.emit(f"bitcast float {v} to i32")
            r = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {i}, i32 {m}, i32 31")
            return self.emit(f"bitcast i32 {r} to float")
        if ty == "i32":
            return self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {v}, i32 {m}, i32 31")
        w = self.emit(f"{'sext' if dt.is_signed else 'zext'} {ty} {v} to i32")
        r = self.call("i32", "llvm.nvvm.shfl.sync.bfly.i32", f"i32 -1, i32 {w}, i32 {m}, i32 31")
        return self.emit(f"trunc i32 {r} to {ty}")

    def reduce_shuffle(self, op: ir.Reduce) -> bool:
        """Reduction with warp shuffles, for layouts where it is exact and simple.

        1. this thread's slots that reduce into the same output (for every
           thread) are combined in registers;
        2. lanes that share an output form aligned blocks of G lanes inside a
           warp: a butterfly of `shfl.sync.bfly` combines them;
        3. each output has the same number C of block partials (C = 1 when a
           row lives in one warp), at consecutive blocks: block leaders write
           them to shared memory, and the owner of an output combines its C.
        Applies to sum/prod/max/min; the order of float accumulation differs
        from the interpreter's, which the IR allows. Returns False otherwise.
        """
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        R = ir.ReduceOp
        if op.op not in (R.SUM, R.PROD, R.MAX, R.MIN) or dt is DType.BOOL:
            return False
        rshape = r.shape
        n_out = math.prod(rshape) if rshape else 1
        lay = self.lay(x)
        if not (lay.full or lay.K == 1):
            return False  # a partial last chunk would share partial slots with full ones
        groups = list(self._out_vectors(x, axis, rshape).values())
        G = 32
        while G > 1:
            ok = True
            lanes = np.arange(self.T)
            for o, _ in groups:
                for m in range(1, G):
                    if not np.array_equal(o, o[lanes ^ m]):
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                break
            G //= 2

        # o per block, per group; every live output must get C partials from
        # consecutive blocks of ONE group: o_g(beta) = base_g + beta // C.
        C = None
        counts = np.zeros(n_out, dtype=np.int64)
        for o, _ in groups:
            ob = o[::G]
            live = ob >= 0
            if not live.any():
                continue
            np.add.at(counts, ob[live], 1)
        if counts.min() < 1 or counts.max() != counts.min():
            return False
        C = int(counts[0])
        for o, _ in groups:
            ob = o[::G]
            betas = np.flatnonzero(ob >= 0)
            if len(betas) == 0:
                continue
            base = ob[betas[0]] - betas[0] // C
            if not np.array_equal(ob[betas], base + betas // C):
                return False
        if G == 1 and C > 8:
            return False  # no lane sharing and many partials: the plain path is as good
        acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
        esz = smem_size(acc_dt)
        self.need_smem(n_out * C * esz, op.span)
        lay = self.lay(x)
        slots = self.tile(x)
        partials = []
        for o, members in groups:
            k0, j0 = members[0]
            part = slots[k0 * lay.V + j0]
            for k, j in members[1:]:
                part = self.combine(op.op, part, slots[k * lay.V + j], dt)
            m = G // 2
            while m >= 1:
                part = self.combine(op.op, part, self.shfl_xor(part, acc_dt, m), dt)
                m //= 2
            partials.append((o, members, part))
        self.barrier()
        lane_in_block = self.emit(f"and i32 %tid, {G - 1}") if G > 1 else "0"
        leader = self.emit(f"icmp eq i32 {lane_in_block}, 0") if G > 1 else None
        beta = self.emit(f"lshr i32 %tid, {G.bit_length() - 1}") if G > 1 else "%tid"
        c_idx = self.emit(f"urem i32 {beta}, {C}") if C > 1 else "0"
        for o, members, part in partials:
            if not (o >= 0).any():
                continue
            k0, j0 = members[0]
            valid = self.chunk_valid(lay, k0)
            cs = self.slot_coords(lay, k0, j0, x.shape, valid)
            del cs[axis]
            oi = self.linear(cs, rshape) if rshape else "0"
            slot = oi if C == 1 else self.emit(f"add i32 {self.emit(f'mul i32 {oi}, {C}')}, {c_idx}")
            go, jn = self.new_label("rw"), self.new_label("rx")
            self.cbr(self.and_all([valid, leader]) or "true", go, jn)
            self.label(go)
            self.smem_store(0, acc_dt, slot, part)
            self.br(jn)
            self.label(jn)
        self.barrier()
        vals = []
        for _, _, f in self.out_slots(r):
            base = f if C == 1 else self.emit(f"mul i32 {f}, {C}")
            v = self.smem_load(0, acc_dt, base)
            for c in range(1, C):
                v = self.combine(op.op, v, self.smem_load(0, acc_dt, self.emit(f"add i32 {base}, {c}")), dt)
            vals.append(self.round_to(v, dt))
        self.finish(rshape, vals, r)
        return True

    def reduce_grouped(self, op: ir.Reduce) -> bool:
        """Two-phase reduction: combine this thread's elements that provably share an
        output in registers, then combine across threads with shared-memory atomics
        on an array of the OUTPUT's size. Used for integer sum/max/min (exact in any
        order) and for float sums whose input tile would not fit the plain path's
        shared-memory staging (> 48 KiB). Returns False when it does not apply."""
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        R = ir.ReduceOp
        if op.op not in (R.SUM, R.MAX, R.MIN) or dt is DType.BOOL:
            return False
        lay = self.lay(x)
        if dt.is_float and not (op.op is R.SUM and lay.numel * smem_size(dt) > 48 * 1024):
            return False
        if dt.is_int and dt.bits < 32:
            return False  # sub-word shared atomics: keep the plain path
        rshape = r.shape
        n_out = math.prod(rshape) if rshape else 1
        groups = [members for _, members in self._out_vectors(x, axis, rshape).values()]
        acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
        aty = reg_ty(acc_dt)
        esz = smem_size(acc_dt)
        self.need_smem(n_out * esz, op.span)
        if op.op is R.SUM:
            ident = const_operand(acc_dt, 0)
        elif dt.is_signed:
            ident = const_operand(acc_dt, -(1 << (dt.bits - 1)) if op.op is R.MAX else (1 << (dt.bits - 1)) - 1)
        else:
            ident = const_operand(acc_dt, 0 if op.op is R.MAX else (1 << dt.bits) - 1)
        self.barrier()
        for i in range(-(-n_out // self.T)):
            idx = self.emit(f"add i32 %tid, {i * self.T}")
            ok = self.emit(f"icmp ult i32 {idx}, {n_out}")
            go, jn = self.new_label("ri"), self.new_label("rj")
            self.cbr(ok, go, jn)
            self.label(go)
            self.smem_store(0, acc_dt, idx, ident)
            self.br(jn)
            self.label(jn)
        self.barrier()
        rmw = {R.SUM: "fadd" if dt.is_float else "add",
               R.MAX: "max" if dt.is_signed else "umax", R.MIN: "min" if dt.is_signed else "umin"}[op.op]
        slots = self.tile(x)
        for members in groups:
            k0, j0 = members[0]
            valid = self.chunk_valid(lay, k0)
            part = slots[k0 * lay.V + j0]
            for k, j in members[1:]:
                part = self.combine(op.op, part, slots[k * lay.V + j], dt)
            ci = self.slot_coords(lay, k0, j0, x.shape, valid)
            del ci[axis]
            oi = self.linear(ci, rshape) if rshape else "0"
            go, jn = self.new_label("ra"), self.new_label("rb")
            self.cbr(valid or "true", go, jn)
            self.label(go)
            p = self.smem_ptr(0, acc_dt, oi)
            self.emit(f"atomicrmw {rmw} ptr addrspace(3) {p}, {aty} {part} monotonic")
            self.br(jn)
            self.label(jn)
        self.barrier()
        vals = [self.round_to(self.smem_load(0, acc_dt, f), dt) for _, _, f in self.out_slots(r)]
        self.finish(rshape, vals, r)
        return True

    def better(self, is_max: bool, v: str, best: str, dt: DType) -> str:
        ty = reg_ty(dt)
        if dt.is_float:
            c = self.emit(f"fcmp {'ogt' if is_max else 'olt'} {ty} {v}, {best}")
            vn = self.emit(f"fcmp uno {ty} {v}, 0.0")
            bn = self.emit(f"fcmp ord {ty} {best}, 0.0")
            nanwin = self.emit(f"and i1 {vn}, {bn}")
            return self.emit(f"or i1 {c}, {nanwin}")
        if dt is DType.BOOL:
            return self.emit(f"icmp {'ugt' if is_max else 'ult'} i1 {v}, {best}")
        s = "s" if dt.is_signed else "u"
        return self.emit(f"icmp {s}{'gt' if is_max else 'lt'} {ty} {v}, {best}")

    def combine(self, rop: ir.ReduceOp | ir.ScanOp, acc: str, v: str, dt: DType) -> str:
        """acc (op) v in the accumulation type (f32 for f16/bf16: no rounding here)."""
        R, S, E = ir.ReduceOp, ir.ScanOp, ir.ElemOp
        ty = reg_ty(dt)
        if rop in (R.SUM, S.CUMSUM):
            if dt is DType.BOOL:
                return self.emit(f"or i1 {acc}, {v}")
            return self.emit(f"{'fadd' if dt.is_float else 'add'} {ty} {acc}, {v}")
        if rop in (R.PROD, S.CUMPROD):
            if dt is DType.BOOL:
                return self.emit(f"and i1 {acc}, {v}")
            return self.emit(f"{'fmul' if dt.is_float else 'mul'} {ty} {acc}, {v}")
        eop = E.MAXIMUM if rop is R.MAX else E.MINIMUM
        if dt.is_float:
            return self.felem(eop, [acc, v], dt, ty)
        return self.ielem(eop, [acc, v], dt, ty)

    def scan(self, op: ir.Scan) -> None:
        if scans.scan_blocked(self, op):
            return
        x, r, axis = op.x, op.result, op.axis
        dt = x.dtype
        ty = reg_ty(dt)
        (off,) = self.to_smem([x], op.span)
        L = x.shape[axis]
        step = strides_of(x.shape)[axis]
        bases, mine = [], []
        for _, oc in self.out_coords(r):
            mine.append(oc[axis])
            full = list(oc)
            full[axis] = "0"
            bases.append(self.linear(full, x.shape))
        firsts = [self.smem_load(off, dt, b) for b in bases]

        def body(rr: str, cur: list[str]) -> list[str]:
            out = []
            for i, b in enumerate(bases):
                off_r = rr if step == 1 else self.emit(f"mul i32 {rr}, {step}")
                v = self.smem_load(off, dt, self.emit(f"add i32 {b}, {off_r}"))
                nx = self.combine(op.op, cur[i], v, dt)
                take = self.emit(f"icmp sle i32 {rr}, {mine[i]}")
                out.append(self.emit(f"select i1 {take}, {ty} {nx}, {ty} {cur[i]}"))
            return out

        finals = self.counted_loop(1, L, [(ty, v) for v in firsts], body) if L > 1 else firsts
        self.env[r.id] = [self.round_to(v, dt) for v in finals]

    def uniform(self, x: ir.Value) -> str | None:
        """The one operand every slot of tile `x` holds (a constant or a broadcast
        scalar), or None."""
        if x.id not in self._uniform:
            return None
        slots = self.tile(x)
        return slots[0] if slots and all(v == slots[0] for v in slots) else None

    def local(self, r: ir.Value, x: ir.Value, align: list[int | None]) -> bool:
        """`r` from `x` without moving data between threads, when their layouts
        allow it (`codegen/views.register_map`); True when done."""
        u = self.uniform(x)
        if u is not None:
            self.env[r.id] = [u] * self.nregs(r)
            return True
        m = register_map(self.lay(x), self.lay(r), align)
        if m is None:
            return False
        src = self.tile(x)
        self.env[r.id] = [src[i] for i in m]
        return True

    def broadcast(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        if not x.shape:
            self.env[r.id] = [self.scalar(x)] * self.nregs(r)
            self._uniform.add(r.id)
            return
        lead = len(r.shape) - len(x.shape)
        xr = (1,) * lead + tuple(x.shape)
        align = [None if i < lead or x.shape[i - lead] == 1 else i - lead for i in range(len(r.shape))]
        if self.local(r, x, align):
            return
        (off,) = self.to_smem([x], span)
        vals = []
        for _, oc in self.out_coords(r):
            src = [c if n != 1 else "0" for c, n in zip(oc, xr, strict=False)]
            vals.append(self.smem_load(off, x.dtype, self.linear(src, xr)))
        self.env[r.id] = vals

    def reshape(self, r: ir.Value, x: ir.Value, span: Span) -> None:
        if not x.shape:
            self.env[r.id] = [self.scalar(x)] * self.nregs(r)
            return
        if not r.shape:
            (off,) = self.to_smem([x], span)
            self.env[r.id] = self.smem_load(off, x.dtype, "0")
            return
        xd = [i for i, n in enumerate(x.shape) if n != 1]
        rd = [i for i, n in enumerate(r.shape) if n != 1]
        if [x.shape[i] for i in xd] == [r.shape[i] for i in rd]:
            # only size-1 dims added or dropped: the non-1 dims pair up in order
            align: list[int | None] = [None] * len(r.shape)
            for i, j in zip(rd, xd, strict=True):
                align[i] = j
            if self.local(r, x, align):
                return
        lx, lr = self.lay(x), self.lay(r)
        if isinstance(lx, ChunkedView) and isinstance(lr, ChunkedView) and lx.V == lr.V and lx.K == lr.K:
            self.env[r.id] = self.tile(x)  # same flat layout: a reshape moves nothing
            return
        (off,) = self.to_smem([x], span)
        self.env[r.id] = [self.smem_load(off, x.dtype, f) for _, _, f in self.out_slots(r)]

    def permute(self, r: ir.Value, x: ir.Value, perm: tuple[int, ...], span: Span) -> None:
        if list(perm) == list(range(len(perm))):
            self.env[r.id] = self.tile(x)
            return
        (off,) = self.to_smem([x], span)
        vals = []
        for _, oc in self.out_coords(r):
            src = ["0"] * len(perm)
            for i, p in enumerate(perm):
                src[p] = oc[i]
            vals.append(self.smem_load(off, x.dtype, self.linear(src, x.shape)))
        self.env[r.id] = vals

    def mma(self, op: ir.Mma | DotOp) -> None:
        if self.mma_tensor_core(op):
            return
        a, b, acc, r = op.a, op.b, op.acc, op.result
        M, K = a.shape
        N = b.shape[1]
        in_dt, acc_dt = a.dtype, acc.dtype
        offa, offb = self.to_smem([a, b], op.span)
        aty = reg_ty(acc_dt)
        ity = reg_ty(in_dt)
        rows, cols = [], []
        for _, (i, j) in self.out_coords(r):
            rows.append(self.emit(f"mul i32 {i}, {K}") if i != "0" else "0")
            cols.append(j)
        init = list(self.tile(acc))

        def widen(v: str) -> str:
            # f16/bf16 live exactly in f32 registers; only f32 -> f64 and int widening change bits.
            if in_dt.is_float and acc_dt.is_float:
                return v if ity == aty else self.emit(f"fpext {ity} {v} to {aty}")
            return self.cast(v, in_dt, acc_dt)

        def body(kk: str, cur: list[str]) -> list[str]:
            out = []
            brow = self.emit(f"mul i32 {kk}, {N}")
            acache: dict[str, str] = {}
            bcache: dict[str, str] = {}
            for n, (row, col) in enumerate(zip(rows, cols, strict=False)):
                if row not in acache:
                    acache[row] = widen(self.smem_load(offa, in_dt, self.emit(f"add i32 {row}, {kk}")))
                if col not in bcache:
                    bcache[col] = widen(self.smem_load(offb, in_dt, self.emit(f"add i32 {brow}, {col}")))
                av, bv = acache[row], bcache[col]
                if acc_dt.is_float:
                    out.append(self.fcall("fma", aty, [av, bv, cur[n]]))
                else:
                    p = self.emit(f"mul {aty} {av}, {bv}")
                    out.append(self.emit(f"add {aty} {cur[n]}, {p}"))
            return out

        finals = self.counted_loop(0, K, [(aty, v) for v in init], body)
        self.env[r.id] = [self.round_to(v, acc_dt) for v in finals]

    @staticmethod
    def tc_eligible(op: ir.Mma | DotOp) -> bool:
        """`mma` that runs on the tensor cores: f16/bf16 inputs, f32 acc, 16/8/16 multiples."""
        M, K = op.a.shape
        N = op.b.shape[1]
        return (op.a.dtype in (DType.F16, DType.BF16) and op.acc.dtype is DType.F32
                and M % 16 == 0 and N % 8 == 0 and K % 16 == 0)

    def _tc_lanes(self) -> tuple[str, str, str]:
        warp = self.emit("lshr i32 %tid, 5")
        lane = self.emit("and i32 %tid, 31")
        g = self.emit(f"lshr i32 {lane}, 2")
        q2 = self.emit(f"shl i32 {self.emit(f'and i32 {lane}, 3')}, 1")
        return warp, g, q2

    def _tc_count(self, M: int, N: int) -> int:
        """How many 16x8 tiles of an [M, N] accumulator each warp owns (rounded up)."""
        return -(-((M // 16) * (N // 8)) // (self.T // 32))

    def _tc_open(self, i: int, M: int, N: int, lanes: tuple[str, str, str]) -> _TileCtx:
        """Open the block of this warp's i-th 16x8 tile (tile w + i*W), guarded when
        some warps have no i-th tile. `c_idx` are the flat [M, N] indices of the
        thread's 4 accumulator elements: (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)
        with g = lane/4, q = lane%4 (the mma.m16n8k16 C fragment)."""
        warp, g, q2 = lanes
        W = self.T // 32
        tiles_n = N // 8
        total = (M // 16) * tiles_n
        tile = self.emit(f"add i32 {warp}, {i * W}")
        guarded = (i + 1) * W > total
        go, done = self.new_label("mt"), self.new_label("mj")
        pre = self.cur
        if guarded:
            self.cbr(self.emit(f"icmp ult i32 {tile}, {total}"), go, done)
        else:
            self.br(go)
        self.label(go)
        mi = self.emit(f"udiv i32 {tile}, {tiles_n}")
        ni = self.emit(f"urem i32 {tile}, {tiles_n}")
        row0 = self.emit(f"shl i32 {mi}, 4")
        col0 = self.emit(f"shl i32 {ni}, 3")
        crow = self.emit(f"add i32 {row0}, {g}")
        ccol = self.emit(f"add i32 {col0}, {q2}")
        c_idx = []
        for dr in (0, 8):
            rr = crow if dr == 0 else self.emit(f"add i32 {crow}, 8")
            base = self.emit(f"add i32 {self.emit(f'mul i32 {rr}, {N}')}, {ccol}")
            c_idx += [base, self.emit(f"add i32 {base}, 1")]
        return _TileCtx(row0, col0, c_idx, guarded, pre, done)

    def _tc_close(self, t: _TileCtx, new: list[str] | None = None, old: list[str] | None = None) -> list[str]:
        """Close a tile block; with `new`/`old`, the values after it (old when skipped)."""
        end = self.cur
        self.br(t.done)
        self.label(t.done)
        if new is None:
            return []
        if not t.guarded:
            return new
        assert old is not None
        return [self.emit(f"phi float [ {n}, %{end} ], [ {o}, %{t.pre} ]") for n, o in zip(new, old, strict=True)]

    def to_frag(self, v: ir.Value, span: Span) -> Frag:
        """A canonical [M, N] f32 tile -> this warp's mma accumulator fragments."""
        M, N = v.shape
        self.need_smem(M * N * 4, span)
        self.barrier()
        self.write_tile(v, 0)
        self.barrier()
        lanes = self._tc_lanes()
        vals: list[str] = []
        for i in range(self._tc_count(M, N)):
            t = self._tc_open(i, M, N, lanes)
            got = [self.smem_load(0, DType.F32, ix) for ix in t.c_idx]
            vals += self._tc_close(t, got, ["0.0"] * 4)
        return Frag(tuple(vals), (M, N))

    def from_frag(self, frag: Frag, r: ir.Value, span: Span) -> None:
        """This warp's accumulator fragments -> the canonical layout of `r`."""
        M, N = frag.shape
        self.need_smem(M * N * 4, span)
        self.barrier()
        lanes = self._tc_lanes()
        for i in range(self._tc_count(M, N)):
            t = self._tc_open(i, M, N, lanes)
            for ix, v in zip(t.c_idx, frag.vals[4 * i:4 * i + 4], strict=True):
                self.smem_store(0, DType.F32, ix, v)
            self._tc_close(t)
        self.barrier()
        self.env[r.id] = [self.smem_load(0, DType.F32, f) for _, _, f in self.out_slots(r)]

    def mma_tensor_core(self, op: ir.Mma | DotOp) -> bool:
        """f16/bf16 x f16/bf16 + f32 on the tensor cores: `ldmatrix` + `mma.sync.m16n8k16`.

        A and B are staged in shared memory as 16-bit values (exact: the
        registers hold f16/bf16-rounded values). Warp w computes the 16x8 tiles
        w, w + W, ... of the result with K/16 `mma.sync` steps each. The
        accumulator is either a canonical tile (staged through shared memory
        and read back) or, inside a `for` loop that only accumulates into it,
        kept in registers in the fragment layout for the whole loop (`Frag`,
        see `for_`). Products are exact and accumulate in f32, as the
        interpreter's `mma` prescribes.
        """
        a, b, acc, r = op.a, op.b, op.acc, op.result
        if not self.tc_eligible(op):
            return False
        in_dt = a.dtype
        M, K = a.shape
        N = b.shape[1]
        acc_op = self.env[acc.id]
        frag_in = isinstance(acc_op, Frag)
        frag_out = isinstance(self.layouts.get(r.id), MmaAcc)
        h16 = "half" if in_dt is DType.F16 else "bfloat"
        size_a = -(-(M * K * 2) // 16) * 16
        size_b = -(-(K * N * 2) // 16) * 16
        off_a, off_b, off_c = 0, size_a, size_a + size_b
        self.need_smem(off_c + (0 if frag_in and frag_out else M * N * 4), op.span)
        self.barrier()
        self.write_tile(a, off_a, h16)
        self.write_tile(b, off_b, h16)
        if not frag_in:
            self.write_tile(acc, off_c)
        self.barrier()
        self.declare("declare { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(ptr addrspace(3))")
        self.declare("declare { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(ptr addrspace(3))")
        if in_dt is DType.F16:
            mma_name = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
            fty = "<2 x half>"
        else:
            mma_name = "llvm.nvvm.mma.m16n8k16.row.col.bf16"
            fty = "i32"
        self.declare(f"declare {{ float, float, float, float }} @{mma_name}({', '.join([fty] * 6)}, "
                     "float, float, float, float)")
        lane = self.emit("and i32 %tid, 31")
        # ldmatrix x4 for A: lane t gives row (t % 8) + 8 * ((t / 8) % 2), column 8 * (t / 16)
        lr = self.emit(f"and i32 {lane}, 7")
        lm = self.emit(f"lshr i32 {lane}, 3")
        lm1 = self.emit(f"and i32 {lm}, 1")
        lm2 = self.emit(f"lshr i32 {lm}, 1")
        a_row = self.emit(f"add i32 {lr}, {self.emit(f'shl i32 {lm1}, 3')}")
        a_col = self.emit(f"shl i32 {lm2}, 3")
        # ldmatrix x2.trans for B (row-major [K, N]): lanes 0-15 give row k = t % 16
        b_row = self.emit(f"and i32 {lane}, 15")
        base_a = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {off_a}")
        base_b = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {off_b}")
        new_frag: list[str] = []
        lanes = self._tc_lanes()
        for i in range(self._tc_count(M, N)):
            t = self._tc_open(i, M, N, lanes)
            row0, col0, c_idx = t.row0, t.col0, t.c_idx
            if isinstance(acc_op, Frag):
                c_old = list(acc_op.vals[4 * i:4 * i + 4])
            else:
                c_old = [self.smem_load(off_c, DType.F32, ix) for ix in c_idx]
            c = c_old
            arow = self.emit(f"mul i32 {self.emit(f'add i32 {row0}, {a_row}')}, {K}")
            for kk in range(K // 16):
                ia = self.emit(f"add i32 {arow}, {self.emit(f'add i32 {a_col}, {kk * 16}')}")
                pa = self.emit(f"getelementptr i16, ptr addrspace(3) {base_a}, i32 {ia}")
                fa = self.call("{ i32, i32, i32, i32 }", "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16",
                               f"ptr addrspace(3) {pa}")
                kb = self.emit(f"add i32 {b_row}, {kk * 16}")
                ib = self.emit(f"add i32 {self.emit(f'mul i32 {kb}, {N}')}, {col0}")
                pb = self.emit(f"getelementptr i16, ptr addrspace(3) {base_b}, i32 {ib}")
                fb = self.call("{ i32, i32 }", "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16",
                               f"ptr addrspace(3) {pb}")
                frags = [self.emit(f"extractvalue {{ i32, i32, i32, i32 }} {fa}, {n}") for n in range(4)]
                frags += [self.emit(f"extractvalue {{ i32, i32 }} {fb}, {n}") for n in range(2)]
                if fty != "i32":
                    frags = [self.emit(f"bitcast i32 {x} to {fty}") for x in frags]
                args = ", ".join([f"{fty} {x}" for x in frags] + [f"float {x}" for x in c])
                d = self.call("{ float, float, float, float }", mma_name, args)
                c = [self.emit(f"extractvalue {{ float, float, float, float }} {d}, {n}") for n in range(4)]
            if frag_out:
                new_frag += self._tc_close(t, c, c_old)
            else:
                for ix, v in zip(c_idx, c, strict=True):
                    self.smem_store(off_c, DType.F32, ix, v)
                self._tc_close(t)
        if frag_out:
            self.env[r.id] = Frag(tuple(new_frag), (M, N))
            return True
        self.barrier()
        self.env[r.id] = [self.smem_load(off_c, DType.F32, f) for _, _, f in self.out_slots(r)]
        return True

    # -- control flow -----------------------------------------------------------------------
    def _types_of(self, vals: tuple[ir.Value, ...]) -> list[tuple[ir.Value, int]]:
        return [(v, self.nregs(v) if v.shape else 0) for v in vals]

    def _flatten(self, ops: list[Operand]) -> list[str]:
        out: list[str] = []
        for o in ops:
            if isinstance(o, Frag):
                out.extend(o.vals)
            else:
                out.extend(o if isinstance(o, list) else [o])
        return out

    def _unflatten(self, vals: tuple[ir.Value, ...], flat: list[str]) -> list[Operand]:
        out: list[Operand] = []
        i = 0
        for v in vals:
            if v.shape:
                n = self.nregs(v)
                out.append(flat[i:i + n])
                i += n
            else:
                out.append(flat[i])
                i += 1
        return out

    def _flat_types(self, vals: tuple[ir.Value, ...]) -> list[str]:
        out = []
        for v in vals:
            out.extend([reg_ty(v.dtype)] * (self.nregs(v) if v.shape else 1))
        return out

    def for_(self, op: ir.For) -> None:
        iv_v = op.body.args[0]
        ity = reg_ty(iv_v.dtype)
        signed = iv_v.dtype.is_signed
        lo, hi, st = self.scalar(op.lower), self.scalar(op.upper), self.scalar(op.step)
        init_ops: list[Operand] = [self.env[v.id] for v in op.inits]
        inits = self._flatten(init_ops)
        types = []
        for o, v in zip(init_ops, op.results, strict=True):
            types += ["float"] * len(o.vals) if isinstance(o, Frag) else self._flat_types((v,))
        pre = self.cur
        head, body_l, exit_ = self.new_label("for"), self.new_label("body"), self.new_label("endfor")
        self.br(head)
        self.label(head)
        iv = self.tmp()
        phis = [self.tmp() for _ in inits]
        phi_at = len(self.lines)
        self.lines.append("")
        c1 = self.emit(f"icmp {'slt' if signed else 'ult'} {ity} {iv}, {hi}")
        c2 = self.emit(f"icmp {'sgt' if signed else 'ugt'} {ity} {st}, 0")
        c = self.emit(f"and i1 {c1}, {c2}")
        self.cbr(c, body_l, exit_)
        self.label(body_l)
        carried: list[Operand] = []
        pos = 0
        for o, v in zip(init_ops, op.results, strict=True):
            if isinstance(o, Frag):
                carried.append(Frag(tuple(phis[pos:pos + len(o.vals)]), o.shape))
                pos += len(o.vals)
            else:
                n = self.nregs(v) if v.shape else 1
                carried += self._unflatten((v,), phis[pos:pos + n])
                pos += n
        ys = self.region(op.body, (iv, *carried))
        nexts = self._flatten(ys)
        ivn = self.emit(f"add {ity} {iv}, {st}")
        latch = self.cur
        self.br(head)
        lines = [f"  {iv} = phi {ity} [ {lo}, %{pre} ], [ {ivn}, %{latch} ]"]
        for p, t, i0, nx in zip(phis, types, inits, nexts, strict=True):
            lines.append(f"  {p} = phi {t} [ {i0}, %{pre} ], [ {nx}, %{latch} ]")
        self.lines[phi_at] = "\n".join(lines)
        self.label(exit_)
        for v, o in zip(op.results, carried, strict=True):
            self.env[v.id] = o

    def if_(self, op: ir.If) -> None:
        c = self.scalar(op.cond)
        then_l, else_l, join = self.new_label("then"), self.new_label("else"), self.new_label("endif")
        self.cbr(c, then_l, else_l)
        self.label(then_l)
        t_vals = self._flatten(self.region(op.then, ()))
        t_end = self.cur
        self.br(join)
        self.label(else_l)
        e_vals = self._flatten(self.region(op.else_, ()))
        e_end = self.cur
        self.br(join)
        self.label(join)
        types = self._flat_types(op.results)
        merged = [self.emit(f"phi {t} [ {a}, %{t_end} ], [ {b}, %{e_end} ]") for t, a, b in zip(types, t_vals, e_vals, strict=False)]
        for v, o in zip(op.results, self._unflatten(op.results, merged), strict=False):
            self.env[v.id] = o

    def while_(self, op: ir.While) -> None:
        inits = self._flatten([self.get(v) for v in op.inits])
        types = self._flat_types(op.results)
        pre = self.cur
        head, body_l, exit_ = self.new_label("while"), self.new_label("wbody"), self.new_label("endwhile")
        self.br(head)
        self.label(head)
        phis = [self.tmp() for _ in inits]
        phi_at = len(self.lines)
        self.lines.append("")
        carried = self._unflatten(op.results, phis)
        (c,) = self.region(op.cond, tuple(carried))
        self.cbr(c, body_l, exit_)  # type: ignore[arg-type]
        self.label(body_l)
        nexts = self._flatten(self.region(op.body, tuple(carried)))
        latch = self.cur
        self.br(head)
        self.lines[phi_at] = "\n".join(
            f"  {p} = phi {t} [ {i0}, %{pre} ], [ {nx}, %{latch} ]"
            for p, t, i0, nx in zip(phis, types, inits, nexts, strict=False)
        )
        self.label(exit_)
        for v, o in zip(op.results, carried, strict=False):
            self.env[v.id] = o

    def device_assert(self, op: ir.Assert) -> None:
        self.asserts.append((op.span, op.message))
        num = len(self.asserts)
        c = op.cond
        if c.shape:
            lay = self.lay(c)
            fails: list[str] = []
            for k in range(lay.K):
                valid = self.chunk_valid(lay, k)
                for j in range(lay.V):
                    bad = self.emit(f"xor i1 {self.tile(c)[k * lay.V + j]}, true")
                    fails.append(bad if valid is None else self.emit(f"and i1 {bad}, {valid}"))
            fail = fails[0]
            for f in fails[1:]:
                fail = self.emit(f"or i1 {fail}, {f}")
        else:
            fail = self.emit(f"xor i1 {self.scalar(c)}, true")
        go, jn = self.new_label("af"), self.new_label("aj")
        self.cbr(fail, go, jn)
        self.label(go)
        self.emit(f"cmpxchg ptr addrspace(1) %err, i32 0, i32 {num} monotonic monotonic")
        self.br(jn)
        self.label(jn)

    def device_print(self, op: ir.Print) -> None:
        """Append one record to the print buffer (format: `backend/prints.py`).

        Thread 0 reserves the record (atomic add on the cursor), writes its
        header and the scalar parts, and hands the offset to the block through
        shared memory; then every thread writes its own elements of each tile
        part. A record that does not fit is counted as dropped, not written.
        `print` runs in uniform control flow (like every op), so the barriers
        are reached by the whole block."""
        parts: list[tuple[str, None] | tuple[None, tuple[DType, tuple[int, ...]]]] = []
        for p in op.parts:
            parts.append((p, None) if isinstance(p, str) else (None, (p.dtype, tuple(p.shape))))
        fmt = layout_format(tuple(parts))
        num = len(self.prints)
        self.prints.append(fmt)
        S = fmt.size
        self.need_smem(8, op.span)
        self.barrier()
        is0 = self.emit("icmp eq i32 %tid, 0")
        res_l, jn = self.new_label("pr"), self.new_label("pj")
        self.cbr(is0, res_l, jn)
        self.label(res_l)
        c = self.emit(f"atomicrmw add ptr addrspace(1) %pbuf, i64 {S} monotonic")
        capp = self.emit("getelementptr i8, ptr addrspace(1) %pbuf, i64 8")
        cap = self.emit(f"zext i32 {self.emit(f'load i32, ptr addrspace(1) {capp}, align 8')} to i64")
        end = self.emit(f"add i64 {c}, {S}")
        ok = self.emit(f"icmp ule i64 {end}, {cap}")
        base = self.emit(f"select i1 {ok}, i64 {c}, i64 -1")
        self.smem_store(0, DType.I64, "0", base)
        wr_l, drop_l = self.new_label("pw"), self.new_label("pd")
        self.cbr(ok, wr_l, drop_l)
        self.label(drop_l)
        dp = self.emit("getelementptr i8, ptr addrspace(1) %pbuf, i64 12")
        self.emit(f"atomicrmw add ptr addrspace(1) {dp}, i32 1 monotonic")
        self.br(jn)
        self.label(wr_l)
        ep = self.emit("getelementptr i8, ptr addrspace(1) %pbuf, i64 16")
        self.emit(f"atomicrmw umax ptr addrspace(1) {ep}, i64 {end} monotonic")
        rec = self.emit(f"getelementptr i8, ptr addrspace(1) %pbuf, i64 {self.emit(f'add i64 {c}, {PRINT_HEADER}')}")
        self.stmt(f"store i32 {num}, ptr addrspace(1) {rec}, align 16")
        lin = "0"
        for ax in "xyz":
            self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.{ax}()")
            cid = self.call("i32", f"llvm.nvvm.read.ptx.sreg.ctaid.{ax}", "")
            if ax == "x":
                lin = cid
                continue
            self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.{ax}()")
            n = self.call("i32", f"llvm.nvvm.read.ptx.sreg.nctaid.{ax}", "")
            lin = self.emit(f"add i32 {self.emit(f'mul i32 {lin}, {n}')}, {cid}")
        lp = self.emit(f"getelementptr i8, ptr addrspace(1) {rec}, i64 4")
        self.stmt(f"store i32 {lin}, ptr addrspace(1) {lp}, align 4")
        vals = [(p, part) for p, part in zip(op.parts, fmt.parts, strict=True)
                if isinstance(p, ir.Value) and isinstance(part, PrintValue)]
        for p, part in vals:
            if not p.shape:
                self.record_store(rec, part.offset, p.dtype, "0", self.scalar(p))
        self.br(jn)
        self.label(jn)
        tiles = [(p, part) for p, part in vals if p.shape]
        if not tiles:
            return
        self.barrier()
        b = self.smem_load(0, DType.I64, "0")
        ok2 = self.emit(f"icmp sge i64 {b}, 0")
        tw, tj = self.new_label("pt"), self.new_label("pk")
        self.cbr(ok2, tw, tj)
        self.label(tw)
        rec2 = self.emit(f"getelementptr i8, ptr addrspace(1) %pbuf, i64 {self.emit(f'add i64 {b}, {PRINT_HEADER}')}")
        for p, part in tiles:
            lay = self.lay(p)
            slots = self.tile(p)
            for k in range(lay.K):
                valid = self.chunk_valid(lay, k)
                after = None
                if valid is not None:
                    body, after = self.new_label("pe"), self.new_label("pf")
                    self.cbr(valid, body, after)
                    self.label(body)
                for j in range(lay.V):
                    self.record_store(rec2, part.offset, p.dtype, self.flat(lay, k, j), slots[k * lay.V + j])
                if after is not None:
                    self.br(after)
                    self.label(after)
        self.br(tj)
        self.label(tj)

    def record_store(self, rec: str, offset: int, dt: DType, index: str, val: str) -> None:
        """Store one element of a printed value at element `index` of its part."""
        ty, es = record_ty(dt), record_size(dt)
        if dt is DType.BOOL:
            val = self.emit(f"zext i1 {val} to i8")
        elif dt is DType.F16:
            val = self.emit(f"fptrunc float {val} to half")
        base = self.emit(f"getelementptr i8, ptr addrspace(1) {rec}, i64 {offset}")
        ptr = base if index == "0" else self.emit(f"getelementptr {ty}, ptr addrspace(1) {base}, i32 {index}")
        self.stmt(f"store {ty} {val}, ptr addrspace(1) {ptr}, align {es}")


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def emit_llvm_text(kernel: GpuKernel, facts: dict[str, TensorFacts] | None = None) -> tuple[str, KernelABI]:
    """Lower one GPU IR kernel to LLVM IR text and its launch ABI; raises `CodegenError`."""
    if kernel.source.num_warps not in (1, 2, 4, 8, 16, 32):
        raise CodegenError(
            Diagnostic.error(GPU_UNSUPPORTED_OP, f"`num_warps = {kernel.source.num_warps}` is not supported by the GPU backend")
            .primary(kernel.span, "in the hints of this kernel")
            .with_help("use a power of two from 1 to 32")
        )
    em = _Emitter(kernel, kernel.facts if facts is None else facts)
    text = em.run()
    abi = KernelABI(em.entry_name, tuple(em.slots), em.T, em.smem_bytes, tuple(em.asserts), tuple(em.prints))
    return text, abi
