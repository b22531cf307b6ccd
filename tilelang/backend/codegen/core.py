"""The emitter's core: its state, instruction and label emission, a tile value's
slots and coordinates, shared-memory scratch, counted loops.

The state of one kernel's emission and the primitives every other part
uses: instructions, labels, declarations, the environment of emitted values,
slots and coordinates of a tile value in its layout, shared-memory scratch
and barriers, counted (not unrolled) loops, divisibility facts.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from tilelang.backend.codegen import ldg_early
from tilelang.backend.codegen.hazards import Hazards, access_of
from tilelang.backend.codegen.llvm_types import (
    smem_size,
    smem_ty,
)
from tilelang.backend.codegen.views import (
    ChunkedView,
    View,
    chunked_view,
    strides_of,
    view_of,
)
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.layouts import WgmmaAcc
from tilelang.backend.gpu.nodes import GpuKernel
from tilelang.backend.gpu.nodes import walk as gpu_walk
from tilelang.backend.gpu.walk_nodes import TicketTake
from tilelang.backend.prints import PrintFormat
from tilelang.diagnostics.codes.codegen import (
    GPU_TILE_TOO_LARGE,
)
from tilelang.diagnostics.model import Diagnostic
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import Span

MAX_SMEM_BYTES = 227 * 1024  # the H100/H200 opt-in limit per block
MAX_REGS_PER_THREAD = 1024  # slots of live tile data per thread we are willing to unroll


class CodegenError(Exception):
    """A user-facing limit of the GPU backend (turned into a diagnostic by the caller)."""

    def __init__(self, diag: Diagnostic) -> None:
        super().__init__(diag.message)
        self.diag = diag


# ------------------------------------------------------------------ layout
Layout = View  # a value's distributed layout as the code generator sees it (`codegen/views.py`)


def layout_of(shape: tuple[int, ...], T: int) -> ChunkedView:
    """The generic chunked layout of `shape` over `T` threads."""
    return chunked_view(shape, T)


Slots = list[str]  # per-thread operands of a tile value


@frozen(eq=True)
class Frag:
    """An f32 [M, N] accumulator held in the mma.m16n8k16 C-fragment layout: 4
    values per 16x8 tile this warp owns (see `_Emitter._tc_open`). Only a `for`
    loop's carried accumulator of tensor-core `mma`s takes this form."""

    vals: tuple[str, ...]
    shape: tuple[int, int]


@frozen(eq=True)
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


# ops that publish a handoff word (`EmitterCore.handoff_word`), each on its `bar`
HANDOFF_OPS = (TicketTake,)

# named barrier id of a barrier inside a warp role, plus its `Role.slot` (0 the CTA's, 1 zero rows, 2-3 turns, 4-6 TMA
# stores, 8 the split's, 9-10 `SmemTileWrite`'s and the slots')
ROLE_BARRIER = 14


class EmitterCore:
    """The state of one kernel's emission and the primitives the other parts use."""

    def __init__(self, kernel: GpuKernel, facts: dict[str, TensorFacts]) -> None:
        self.k = kernel
        self.layouts = kernel.layouts
        self.role_tid = "%tid"
        self.in_roles = False  # inside `WarpSpecialize`'s roles (`hopper.py`)
        # the current warp role's first thread (0 outside roles; `hopper.warp_specialize`): helpers that pick
        # a thread or a position from the thread id take it relative to the role (`tid0`)
        self.role_base = 0
        self._role_tids: list[str] = []  # the entry block's `%tid.r<base>` lines (`tid0`)
        # inside a `WarpSpecialize`: the role being emitted (an index into `role_names`) and the scratch bytes each
        # role used, (role, first byte, end) (`_claim_scratch`); None outside roles
        self.role_index = 0
        self.role_names: tuple[str, ...] = ()
        self._role_scratch: list[tuple[int, int, int]] | None = None
        # Handoff words (`handoff_word`): one a word one role publishes by an mbarrier's arrival and another reads
        # after waiting for it, keyed by that mbarrier, in an area of their own right after the buffers the GPU IR
        # allocated (`smem_alloc`), so no scratch user of any role can touch them; 16 bytes a 4 words (the
        # scratch after it keeps its 16-byte alignment). No area in a kernel without one.
        self._handoffs: dict[int, int] = {}
        for op in gpu_walk(kernel.body):
            if isinstance(op, HANDOFF_OPS):
                self._handoffs.setdefault(op.bar.id, len(self._handoffs))
        # Scratch shared memory (conversions, reductions) starts after the buffers and the handoff area.
        self.scratch_base = kernel.smem_bytes + -(-4 * len(self._handoffs) // 16) * 16
        self._scratch = ("@smem" if not self.scratch_base else
                         f"getelementptr (i8, ptr addrspace(3) @smem, i32 {self.scratch_base})")
        # Until something touches shared memory, a first scratch writer at the
        # kernel body's top level has no earlier reader to wait for (`scratch_fresh`).
        self._scratch_used = bool(kernel.smem_bytes)
        self._depth = 0  # regions being emitted: 1 = the kernel body's own ops
        self.fn_attrs: list[str] = []
        self.loop_md: list[str] = []  # metadata nodes of loops unrolled whole (`unroll.latch`)
        self.T = kernel.num_warps * 32
        self.lines: list[str] = []
        self.decls: set[str] = set()
        self._carry_in: dict[int, list[str]] = {}  # see ControlOps.loop_carried_in
        self._carry_out: dict[int, list[str]] = {}
        self.n = 0
        self.cur = "start"  # the body begins at label %start (after the entry block)
        self.env: dict[int, Operand] = {}
        self.smem_bytes = self.scratch_base
        # assert number i+1 -> (span, message, region, axis): `ir.Assert`'s; a region's
        # failure writes its place into the error word after the number
        self.asserts: list[tuple[Span, str, str, int]] = []
        self.tensors: dict[str, _TensorInfo] = {}
        # PDL (`llvm.py`): "last", the top-level `for` whose last iteration
        # triggers the next grid; "+loads", the early tensors while the loads
        # before the wait are emitted (plain `ld.global`: `codegen/pdl.py`)
        self._trigger_loop: object | None = None
        self._pre_wait: frozenset[str] = frozenset()
        self.facts = facts
        # the views' thread geometry (`codegen/views.py`), computed once in the entry block: one cache a role base
        # (`tid0`), so a role that does not start at thread 0 gets positions of its own
        self._flat_caches: dict[int, dict[tuple[int, int, int, int], str]] = {}
        self._coord_caches: dict[int, dict[tuple[int, ...], str]] = {}
        self._mult: dict[int, int] = {}  # value id -> known divisor (for specialisation)
        self.rounded: dict[str, str] = {}  # a register rounded to f16/bf16 -> the f32 it was rounded from
        written = {op.tensor for op in gpu_walk(kernel.body) if isinstance(op, ir.Store | ir.AtomicRMW)}
        self.written = written
        self.prints: list[PrintFormat] = []
        self._aranges: set[int] = set()  # `arange` results (a reshape of one is its flat index)
        self._uniform: set[int] = set()  # tiles every thread holds the same value in each slot of
        self._bars = 0  # barriers emitted so far
        self.hazards = Hazards()  # the block's global accesses since the last barrier (`codegen/hazards.py`)
        # (barriers at the end, start, end) of the last reduction's scratch buffer while
        # it is the latest shared-memory user in straight-line code (`codegen/reduce.py`)
        self._red_mark: tuple[int, int, int] | None = None
        # `ClusterGather` (`codegen/cluster.py`): its static shared buffers (module
        # globals), their bytes, whether an arrive awaits its wait, the exchanges
        # whose wait and reads wait for the first op reading their result, and
        # how many have been completed
        self.cluster_bufs: list[str] = []
        self.static_smem = 0
        self.cluster_pending = False
        self.cluster_deferred: list[tuple[ir.ClusterGather, str, int, int]] = []
        self.cluster_done = 0

    @property
    def _flat_cache(self) -> dict[tuple[int, int, int, int], str]:
        return self._flat_caches.setdefault(self.role_base, {})

    @property
    def _coord_cache(self) -> dict[tuple[int, ...], str]:
        return self._coord_caches.setdefault(self.role_base, {})

    def tid0(self) -> str:
        """i32: this thread's index relative to the warp role it runs in (`%tid` outside roles and in a role of
        warp 0), defined in the entry block so that entry-block code (`entry_emit`) may read it too. What picks
        "thread 0", a lane or a warp, or a thread's elements of a layout, reads this: inside a role that starts
        at warp w the block-wide `%tid` of its first thread is 32 w, and `%tid == 0` elects no thread of it."""
        if not self.role_base:
            return "%tid"
        name = f"%tid.r{self.role_base}"
        line = f"  {name} = sub i32 %tid, {self.role_base}"
        if line not in self._role_tids:
            self._role_tids.append(line)
        return name

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

    def store_if(self, ok: str | None, ty: str, val: str, ptr: str, align: int, labels: tuple[str, str]) -> None:
        """`store ty val` to global `ptr`, in a branch taken where `ok` holds
        (None: always); `labels` name the branch's two blocks."""
        st, nx = self.new_label(labels[0]), self.new_label(labels[1])
        self.cbr(ok or "true", st, nx)
        self.label(st)
        self.stmt(f"store {ty} {val}, ptr addrspace(1) {ptr}, align {align}")
        self.br(nx)
        self.label(nx)

    def declare(self, decl: str) -> None:
        self.decls.add(decl)

    def float_struct(self, n: int) -> str:
        """The named LLVM type of `n` floats (what a multi-output asm, wgmma's
        accumulators, returns): spelled once in the module, not in every
        `extractvalue`, so a 128x256 GEMM's IR is a quarter of the text and
        LLVM parses it faster on a first launch."""
        name = f"%f32x{n}"
        self.declare(f"{name} = type {{ {', '.join(['float'] * n)} }}")
        return name

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

    # -- shared memory -----------------------------------------------------------------
    @property
    def scratch(self) -> str:
        """The scratch area's base pointer (after the allocated buffers)."""
        self._scratch_used = True
        return self._scratch

    def scratch_fresh(self) -> bool:
        """Whether a scratch writer emitted now needs no barrier before its
        writes: no code before it touched shared memory (no scratch user, no
        allocated buffer, no barrier, no internal loop), and it runs once per
        thread (an op of the kernel body's top level, not inside a loop or a
        branch). Ask before `need_smem`, which counts as a use."""
        return not self._scratch_used and self._bars == 0 and self._depth == 1

    def scratch_barrier(self, fresh: bool) -> None:
        """The barrier before a scratch writer, unless it is the first use (`scratch_fresh`)."""
        if not fresh:
            self.barrier()

    def barrier(self) -> None:
        self._bars += 1
        ldg_early.crossed(self)
        self.hazards.clear()
        threads = getattr(self, "role_threads", 0)
        if self.in_roles and not getattr(self, "role_single", True) and threads:
            # inside a warp role (`WarpSpecialize`) only the role's threads reach it: the CTA's barrier 0 waited for
            # the other roles' warps too, which never come (hrev19: a scalar broadcast through shared memory in the
            # attention consumers' tile walk hung the CTA while the producer waited for a free ring stage)
            # (one id a role: the GEMM's two pingpong consumer roles, `Role.slot` 0 and 1, run at the same time)
            bid = ROLE_BARRIER + getattr(self, "role_slot", 0)
            self.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")
            self.stmt(f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {bid}, i32 {threads})")
            return
        self.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)")
        self.stmt("call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)")

    def order_access(self, op: ir.Op) -> None:
        """A CTA barrier before a global load or store that an earlier access of
        the block to the same tensor, by other threads, must complete before
        (`codegen/hazards.py`); not inside a warp role, where not every thread
        of the block reaches it."""
        got = access_of(self, op)
        if got is None:
            return
        tensor, a = got
        if self.hazards.needs_barrier(tensor, a) and not self.in_roles:
            self.barrier()
        self.hazards.add(tensor, a)

    def need_smem(self, nbytes: int, span: Span, start: int = 0) -> None:
        """Scratch bytes `start` .. `nbytes` (after the allocated buffers and the handoff words) are used here."""
        self._claim_scratch(start, nbytes)
        self._scratch_used = True
        nbytes += self.scratch_base  # scratch space starts after the allocated buffers and the handoff words
        self.smem_bytes = max(self.smem_bytes, nbytes)
        if self.smem_bytes > MAX_SMEM_BYTES:
            raise self.error(
                GPU_TILE_TOO_LARGE, span,
                f"this operation needs {nbytes} bytes of shared memory, more than the {MAX_SMEM_BYTES} the largest "
                "GPU (an H100's or H200's) gives a block",
                "needs too much shared memory",
                "use smaller tiles (smaller const generics or partition shapes)",
            )

    def join_or(self, guard: str | None, ty: str, v: str, other: str, skip: str, join: str) -> str:
        """The join of a value computed under a guard: `v` (of LLVM type `ty`), emitted in the block that `guard`
        branched to, or `other` where it branched to the empty block `skip` instead (a load of an element inside
        the tensor, else the padding or zero; an operand copy where the tensor has elements); `v` itself where
        there was no branch (`guard` None). Closes the guarded block and `skip` into `join`."""
        if guard is None:
            return v
        end = self.cur
        self.br(join)
        self.label(skip)
        self.br(join)
        self.label(join)
        return self.emit(f"phi {ty} [ {v}, %{end} ], [ {other}, %{skip} ]")

    def _claim_scratch(self, start: int, end: int) -> None:
        """Inside a `WarpSpecialize`, the roles run at the same time and a role's barrier (`barrier`) orders only
        its own threads: two roles whose scratch bytes overlap would race (the GEMM's pingpong consumers,
        `Role.slot` 0 and 1, each stage their stores in an area of their own, `hopper.store_wgmma`; any other
        scratch exchange starts at byte 0). No pipeline puts a second scratch user in a role today: refuse one.
        (A word handed from one role to another is not scratch: `handoff_word`.)"""
        claims = self._role_scratch
        if claims is None or end <= start:
            return
        mine = self.role_index
        for role, s, e in claims:
            if role != mine and s < end and start < e:
                raise AssertionError(
                    f"internal: scratch shared memory bytes {max(s, start)}..{min(e, end)} are used by two warp roles "
                    f"that run at the same time ({self.role_names[role]} and {self.role_names[mine]}): a race the "
                    "roles' barriers do not order; give each role its own scratch area")
        claims.append((mine, start, end))

    def handoff_word(self, bar: ir.Value) -> str:
        """The shared word published by an arrival on `bar` (`HANDOFF_OPS`: `g.TicketTake` stores it and arrives,
        `g.TicketRead` reads it after its role waited for that phase): a word of the handoff area, apart from
        every scratch user's bytes (hattn5's ticket in the scratch word of the consumers' split flag raced it)."""
        if bar.id not in self._handoffs:
            raise AssertionError(f"internal: no op of this kernel publishes a handoff word on barrier `{bar.name}`")
        off = self.k.smem_bytes + 4 * self._handoffs[bar.id]
        return "@smem" if not off else self.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")

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
        for k in self.owned_chunks(lay, "sw"):
            for j in range(lay.V):
                val = slots[k * lay.V + j] if slots is not None else self.scalar(x)
                if as16 is not None:
                    h = self.emit(f"fptrunc float {val} to {as16}")
                    base = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {byte_off}")
                    ptr = self.emit(f"getelementptr {as16}, ptr addrspace(3) {base}, i32 {self.flat(lay, k, j)}")
                    self.stmt(f"store {as16} {h}, ptr addrspace(3) {ptr}, align 2")
                    continue
                self.smem_store(byte_off, x.dtype, self.flat(lay, k, j), val)

    def owned_chunks(self, lay: Layout, hint: str) -> Iterator[int]:
        """The chunks k of `lay` this thread writes, each emitted under a
        branch on its validity (live lanes, and one owner of replicated data:
        no write-write race); the caller emits the chunk's writes per k."""
        owner = lay.owner(self)
        for k in range(lay.K):
            valid = self.and_all([owner, self.chunk_valid(lay, k)])
            after = None
            if valid is not None:
                body, after = self.new_label(hint), self.new_label(hint + "j")
                self.cbr(valid, body, after)
                self.label(body)
            yield k
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
        fresh = self.scratch_fresh()
        self.need_smem(total, span)
        self.scratch_barrier(fresh)
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
        self._scratch_used = True  # its body runs again: no scratch writer in it is a first use
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

    def uniform(self, x: ir.Value) -> str | None:
        """The one operand every slot of tile `x` holds (a constant or a broadcast
        scalar), or None."""
        if x.id not in self._uniform:
            return None
        slots = self.tile(x)
        return slots[0] if slots and all(v == slots[0] for v in slots) else None

    def region(self, region: ir.Region, args: tuple[Operand, ...]) -> list[Operand]:
        """Emit `region`'s ops with `args` bound to its arguments (the dispatch
        lives in `llvm._Emitter`, above every part)."""
        raise NotImplementedError
