"""Code generation for GPU IR's Hopper ops (a mixin of `llvm._Emitter`).

Covers what `passes/pipeline.py` produces: shared buffers and mbarriers, warp
roles with `setmaxnreg`, TMA tile copies from `__grid_constant__` tensor maps,
wgmma from shared-memory descriptors with the accumulator in registers, and
stores from the wgmma accumulator layout. The recipes (intrinsic names, inline
asm constraints, descriptor encoding) are the ones verified on an H200 in
`notes/nvptx-backend.md` §5-6.

Descriptors (PTX "matrix descriptor"): start address >> 4 in bits 0-13, the
leading-dimension byte offset >> 4 in 16-29, the stride-dimension byte offset
>> 4 in 32-45, the swizzle mode in 62-63 (1 = 128 B, 2 = 64 B, 3 = 32 B). A
tile in shared memory is stored in slabs of one swizzle row's width (see
`layouts.Shared`): for a K-major operand an instruction's k16 step stays in
one slab (start + 32 B per step within a 128-byte row) and the stride offset
is 8 rows of the slab; for an MN-major operand a k16 step is 16 rows of 128 B,
the stride offset is 8 rows (1024 B) and the leading offset is the distance
between 64-element slabs along M or N.
"""

from __future__ import annotations

import math

from tilelang.backend.codegen import (
    acc_load,
    fma_dot,
    ring,
    ring_mma,
    sm80,
    smem_copy,
    smem_tile,
    split,
    stamps,
    tma_store,
    wgmma_rs,
)
from tilelang.backend.codegen.llvm_types import param_reg
from tilelang.backend.codegen.wgmma_rs import k_bytes
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import AccTile, Shared, WgmmaAcc
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir

_SWIZZLE_CODE = {128: 1, 64: 2, 32: 3}
# a consumer role of slot s > 0 stages its stores behind named barrier SLOT_BARRIER + s (0 the CTA's, 1 slot 0's
# and zero rows, 2-3 turns, 4-6 TMA stores, 8 the split's: `codegen/split.py`)
SLOT_BARRIER = 9


@frozen(eq=True)
class SmemRef:
    """A shared buffer or barrier array in the environment: its byte offset."""

    offset: int
    stage_bytes: int  # bytes of one ring stage (first dim)


class HopperOps:
    """Mixin: needs the emitter's `emit`, `stmt`, `declare`, `call`, labels, `env`,
    `layouts`, `k`, `tensors`, and the memory helpers."""

    role_tid: str  # the thread's index within its warp role ("%tid" outside roles)
    role_base: int  # the role's first thread (`EmitterCore.tid0`)
    role_index: int
    role_names: tuple[str, ...]
    T: int
    role_single = True  # the current role runs on one thread
    role_threads = 0

    # -- dispatch --------------------------------------------------------------
    def gpu_op(self, op: object) -> None:  # type: ignore[override]
        match op:
            case g.SmemAlloc(result=r, offset=off):
                self.env[r.id] = SmemRef(off, math.prod(r.shape[1:]) * r.dtype.itemsize)  # type: ignore[attr-defined]
            case g.BarrierAlloc():
                self.barrier_alloc(op)
            case g.WarpSpecialize():
                self.warp_specialize(op)
            case g.BarrierWait():
                self.barrier_wait(op)
            case g.BarrierExpect(bar=b, stage=s, nbytes=nb):
                done = self.lead_only()
                p = self.smem_at(b, s)
                self.declare("declare i64 @llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta(ptr addrspace(3), i32)")
                self.call("i64", "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta",  # type: ignore[attr-defined]
                          f"ptr addrspace(3) {p}, i32 {nb}")
                self.lead_end(done)
            case g.CopyToShared():
                self.copy_to_shared(op)
            case g.Fence():
                self.proxy_fence()
            case g.BarrierArrive():
                self.barrier_arrive(op)
            case g.TmaLoad():
                self.tma_load(op)
            case g.Wgmma():
                self.wgmma(op)
            case g.Undef(result=r):
                self.env[r.id] = ["undef"] * self.nregs(r)  # type: ignore[attr-defined]
            case g.Touch(values=vs):
                self.touch(vs)
            case g.Opaque(results=rs, values=vs):
                for r, v in zip(rs, vs, strict=True):
                    if v.shape:  # a register tile: each f32 / i32 register copied
                        self.env[r.id] = [self._opaque(v.dtype, x) for x in self.tile(v)]  # type: ignore[attr-defined]
                        continue
                    x = self.scalar(v)  # type: ignore[attr-defined]
                    ty, c = {DType.I32: ("i32", "r"), DType.F32: ("float", "f")}.get(v.dtype, (None, ""))
                    self.env[r.id] = x if ty is None else self.emit(  # type: ignore[attr-defined]
                        f'call {ty} asm sideeffect "mov.b32 $0, $1;", "={c},{c}"({ty} {x})')
            case g.WarpAny(result=r, x=x):  # some register of some thread of the warp
                regs = list(dict.fromkeys(self.tile(x)))  # type: ignore[attr-defined]
                mine = regs[0]
                for c in regs[1:]:
                    mine = self.emit(f"or i1 {mine}, {c}")  # type: ignore[attr-defined]
                self.declare("declare i1 @llvm.nvvm.vote.any.sync(i32, i1)")  # type: ignore[attr-defined]
                self.env[r.id] = self.call("i1", "llvm.nvvm.vote.any.sync", f"i32 -1, i1 {mine}")  # type: ignore[attr-defined]
            case g.WarpgroupIndex(result=r):  # the thread's warpgroup in its role
                self.env[r.id] = self.emit(f"lshr i32 {self.role_tid}, 7")  # type: ignore[attr-defined]
            case g.WgmmaWait():
                self.wgmma_wait(op)
            case _:
                if not (sm80.emit_op(self, op) or wgmma_rs.emit_op(self, op) or ring.emit_op(self, op)
                        or tma_store.emit_op(self, op) or split.emit_op(self, op) or stamps.emit_op(self, op)
                        or acc_load.emit_op(self, op) or smem_tile.emit_op(self, op) or fma_dot.emit_op(self, op)
                        or ring_mma.emit_op(self, op)):
                    raise AssertionError(f"no code generation for {type(op).__name__}")

    def _opaque(self, dt: DType, x: str) -> str:
        """`x` (an f32 / i32 register) copied by an asm statement (`g.Opaque`)."""
        ty, c = {DType.I32: ("i32", "r"), DType.F32: ("float", "f")}[dt]
        return self.emit(f'call {ty} asm sideeffect "mov.b32 $0, $1;", "={c},{c}"({ty} {x})')  # type: ignore[attr-defined, no-any-return]

    def touch(self, vs: tuple[ir.Value, ...]) -> None:
        """An empty asm statement reading `vs`' registers (`g.Touch`)."""
        regs = [(ty, x) for v in vs for ty, x in zip(self._flat_types((v,)), self._flatten([self.get(v)]), strict=True)  # type: ignore[attr-defined]
                if ty in ("float", "i32")]
        if regs:
            cons = ",".join("f" if ty == "float" else "r" for ty, _ in regs)
            args = ", ".join(f"{ty} {x}" for ty, x in regs)
            self.stmt(f'call void asm sideeffect "", "{cons}"({args})')  # type: ignore[attr-defined]

    # -- shared memory ---------------------------------------------------------------
    def smem_at(self, buf: ir.Value, stage: ir.Value | None, extra: int = 0) -> str:
        """`ptr addrspace(3)` to stage `stage` of buffer `buf`, plus `extra` bytes."""
        ref = self.env[buf.id]  # type: ignore[attr-defined]
        assert isinstance(ref, SmemRef)
        off = str(ref.offset + extra)
        if stage is not None:
            s = self.scalar(stage)  # type: ignore[attr-defined]
            so = self.emit(f"mul i32 {s}, {ref.stage_bytes}")  # type: ignore[attr-defined]
            off = self.emit(f"add i32 {so}, {ref.offset + extra}")  # type: ignore[attr-defined]
        return self.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")  # type: ignore[attr-defined]

    def barrier_alloc(self, op: g.BarrierAlloc) -> None:
        self.env[op.result.id] = SmemRef(op.offset, 8)  # type: ignore[attr-defined]
        self.declare("declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)")  # type: ignore[attr-defined]
        self.declare("declare void @llvm.nvvm.fence.proxy.async.shared_cta()")  # type: ignore[attr-defined]
        lead = self.emit("icmp eq i32 %tid, 0")  # type: ignore[attr-defined]
        init, done = self.new_label("binit"), self.new_label("bdone")  # type: ignore[attr-defined]
        self.cbr(lead, init, done)  # type: ignore[attr-defined]
        self.label(init)  # type: ignore[attr-defined]
        for i in range(op.result.shape[0]):
            p = self.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {op.offset + 8 * i}")  # type: ignore[attr-defined]
            self.stmt(f"call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) {p}, i32 {op.count})")  # type: ignore[attr-defined]
        # make the initialised barriers visible to the async proxy (TMA); an unfenced group's (`smem_alloc.one_init`)
        # by the next group's fence, which thread 0 makes after its own initialisations too
        if op.fenced:
            self.stmt("call void @llvm.nvvm.fence.proxy.async.shared_cta()")  # type: ignore[attr-defined]
        self.br(done)  # type: ignore[attr-defined]
        self.label(done)  # type: ignore[attr-defined]
        if op.fenced:
            self.barrier()  # type: ignore[attr-defined]

    def barrier_wait(self, op: g.BarrierWait) -> None:
        p = self.smem_at(op.bar, op.stage)
        ph = self.scalar(op.phase)  # type: ignore[attr-defined]
        name = "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta"
        self.declare(f"declare i1 @{name}(ptr addrspace(3), i32)")  # type: ignore[attr-defined]
        ph = self._after(ph, op.after)
        loop, done = self.new_label("bwait"), self.new_label("bok")  # type: ignore[attr-defined]
        self.br(loop)  # type: ignore[attr-defined]
        self.label(loop)  # type: ignore[attr-defined]
        ok = self.call("i1", name, f"ptr addrspace(3) {p}, i32 {ph}")  # type: ignore[attr-defined]
        self.cbr(ok, done, loop)  # type: ignore[attr-defined]
        self.label(done)  # type: ignore[attr-defined]
        if self._marking == "wait1" and not self._marked and self.role_tid == "%tid":  # type: ignore[attr-defined]
            self.trace_mark_here()  # type: ignore[attr-defined]  # thread 0's role: its first wait returned

    def _after(self, ph: str, vs: tuple[ir.Value, ...]) -> str:
        """The wait's parity `ph`, made to read `vs`' registers (`g.BarrierWait.after`):
        ptxas issues a wait's first try (a probe; the spin is out of line) as
        early as its operands allow, and a data dependency is the one thing
        that holds it back. b = the registers' bits xor-ed, then
        ph | any((b * b + b) & 1): b (b + 1) is even, so the parity is unchanged,
        which neither LLVM (the asm) nor ptxas sees. The warp's vote keeps the
        parity warp-uniform, as the spin's exit is (a parity of each thread's
        own made ptxas reconverge the warp after the spin: a `WARPSYNC.ALL`)."""
        regs = [(ty, x) for v in vs for ty, x in zip(self._flat_types((v,)), self._flatten([self.get(v)]), strict=True)  # type: ignore[attr-defined]
                if ty in ("float", "i32")]
        b: str | None = None
        for ty, x in regs:
            w = self.emit(f"bitcast float {x} to i32") if ty == "float" else x  # type: ignore[attr-defined]
            b = w if b is None else self.emit(f"xor i32 {b}, {w}")  # type: ignore[attr-defined]
        if b is None:
            return ph
        return self.emit(f'call i32 asm "{{ .reg .b32 t; .reg .pred q; mad.lo.u32 t, $1, $1, $1; and.b32 t, t, 1; setp.ne.u32 q, t, 0; vote.sync.any.pred q, q, -1; selp.u32 t, 1, 0, q; or.b32 $0, $2, t; }}", '  # type: ignore[attr-defined]
                         f'"=r,r,r"(i32 {b}, i32 {ph})')

    def barrier_arrive(self, op: g.BarrierArrive) -> None:
        """One arrival per warp (lane 0, after the whole warp got there)."""
        self.declare("declare void @llvm.nvvm.bar.warp.sync(i32)")  # type: ignore[attr-defined]
        self.stmt("call void @llvm.nvvm.bar.warp.sync(i32 -1)")  # type: ignore[attr-defined]
        lane = self.emit(f"and i32 {self.role_tid}, 31")  # type: ignore[attr-defined]
        conds = [self.emit(f"icmp eq i32 {lane}, 0")]  # type: ignore[attr-defined]
        if op.pred is not None:
            conds.append(self.scalar(op.pred))  # type: ignore[attr-defined]
        go = self.and_all(conds)  # type: ignore[attr-defined]
        yes, done = self.new_label("arr"), self.new_label("arrd")  # type: ignore[attr-defined]
        self.cbr(go, yes, done)  # type: ignore[attr-defined]
        self.label(yes)  # type: ignore[attr-defined]
        p = self.smem_at(op.bar, op.stage)
        self.declare("declare i64 @llvm.nvvm.mbarrier.arrive.shared(ptr addrspace(3))")  # type: ignore[attr-defined]
        self.call("i64", "llvm.nvvm.mbarrier.arrive.shared", f"ptr addrspace(3) {p}")  # type: ignore[attr-defined]
        self.br(done)  # type: ignore[attr-defined]
        self.label(done)  # type: ignore[attr-defined]

    def lead_only(self) -> str | None:
        """In a role whose every thread runs the body, open a block only its first
        thread runs (returns the label to close it with `lead_end`)."""
        if self.role_single:
            return None
        lead = self.emit(f"icmp eq i32 {self.role_tid}, 0")  # type: ignore[attr-defined]
        go, done = self.new_label("lead"), self.new_label("leadd")  # type: ignore[attr-defined]
        self.cbr(lead, go, done)  # type: ignore[attr-defined]
        self.label(go)  # type: ignore[attr-defined]
        return done

    def lead_end(self, done: str | None) -> None:
        if done is not None:
            self.br(done)  # type: ignore[attr-defined]
            self.label(done)  # type: ignore[attr-defined]

    def _tmap_prefetch(self) -> list[str]:
        """The blocks before the entry's (`Target.tma_prefetch`): thread 0
        issues `prefetch.tensormap` for every tensor map of the kernel, first
        thing, so the descriptors are on chip by the time the producer's
        first copy names them (the barriers' set-up, the warp roles and any
        PDL wait run meanwhile). A prefetch is a hint: it reads no memory
        the kernel could see and needs no wait. They branch to `entry`, so
        the entry block (the block timeline's phis name it) is unchanged.
        Empty for a kernel without TMA copies."""
        maps = self.k.tma_params  # type: ignore[attr-defined]
        if not (self.tma_prefetch and maps):  # type: ignore[attr-defined]
            return []
        # the param-space form (`prefetch.param.tensormap [param]`): no
        # generic address of the map is computed for it, so none stays live
        # beside the copies' own (a generic one cost a prefill kernel a spill)
        self.declare("declare void @llvm.nvvm.prefetch.tensormap.p101(ptr addrspace(101))")  # type: ignore[attr-defined]
        lines = ["tmap.pf.top:",
                 "  %tmap.pf.t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
                 "  %tmap.pf.c = icmp eq i32 %tmap.pf.t, 0",
                 "  br i1 %tmap.pf.c, label %tmap.pf, label %entry",
                 "tmap.pf:"]
        for i, p in enumerate(maps):
            lines += [f"  %tmap.pf.{i} = addrspacecast ptr {param_reg(p.name)} to ptr addrspace(101)",
                      f"  call void @llvm.nvvm.prefetch.tensormap.p101(ptr addrspace(101) %tmap.pf.{i})"]
        return [*lines, "  br label %entry"]

    def tma_load(self, op: g.TmaLoad) -> None:
        done = self.lead_only()
        self._tma_load(op)
        self.lead_end(done)

    def _tma_load(self, op: g.TmaLoad) -> None:
        rank = len(op.coords)
        name = f"llvm.nvvm.cp.async.bulk.tensor.g2s.tile.{rank}d"
        self.declare(f"declare void @{name}(ptr addrspace(7), ptr addrspace(3), ptr, {'i32, ' * rank}i16, i64, "  # type: ignore[attr-defined]
                     "i1 immarg, i1 immarg, i32 immarg)")
        dst = self.smem_at(op.dst, op.stage, op.part)
        dst7 = self.emit(f"addrspacecast ptr addrspace(3) {dst} to ptr addrspace(7)")  # type: ignore[attr-defined]
        bar = self.smem_at(op.bar, op.stage)
        coords = ", ".join(f"i32 {self.scalar(c)}" for c in reversed(op.coords))  # type: ignore[attr-defined]  # innermost first
        self.stmt(f"call void @{name}(ptr addrspace(7) {dst7}, ptr addrspace(3) {bar}, ptr {param_reg(op.desc)}, "  # type: ignore[attr-defined]
                  f"{coords}, i16 0, i64 0, i1 false, i1 false, i32 0)")

    def copy_to_shared(self, op: g.CopyToShared) -> None:
        smem_copy.copy_to_shared(self, op)

    # -- warp roles ----------------------------------------------------------------
    def warp_specialize(self, op: g.WarpSpecialize) -> None:
        # setmaxnreg needs a known budget: the entry registers of `op.blocks` CTAs an SM
        self.fn_attrs.append(f'"nvvm.minctasm"="{op.blocks}"')  # type: ignore[attr-defined]
        warp = self.emit("lshr i32 %tid, 5")  # type: ignore[attr-defined]
        done = self.new_label("roles_done")  # type: ignore[attr-defined]
        first = 0
        outer_roles = self.in_roles  # type: ignore[has-type]
        self.in_roles = True  # no CTA barrier for a hazard here (`EmitterCore.order_access`)
        # each role's scratch bytes: two roles' must not overlap (`EmitterCore._claim_scratch`)
        outer_claims = self._role_scratch  # type: ignore[has-type]
        self._role_scratch = []
        self.role_names = tuple(f"`{r.name}`" + (f" (slot {r.slot})" if r.slot else "") for r in op.roles)
        for i, role in enumerate(op.roles):
            self.role_index = i
            body_l = self.new_label(f"role_{role.name}")  # type: ignore[attr-defined]
            last = i == len(op.roles) - 1
            nxt = done if last else self.new_label("role_next")  # type: ignore[attr-defined]
            if last:
                self.br(body_l)  # type: ignore[attr-defined]
            else:
                inside = self.emit(f"icmp ult i32 {warp}, {first + role.warps}")  # type: ignore[attr-defined]
                self.cbr(inside, body_l, nxt)  # type: ignore[attr-defined]
            self.label(body_l)  # type: ignore[attr-defined]
            if role.regs:
                kind = "dec" if role.name == "producer" else "inc"
                fn = f"llvm.nvvm.setmaxnreg.{kind}.sync.aligned.u32"
                self.declare(f"declare void @{fn}(i32 immarg)")  # type: ignore[attr-defined]
                self.stmt(f"call void @{fn}(i32 {role.regs})")  # type: ignore[attr-defined]
            saved, saved_base, saved_T = self.role_tid, self.role_base, self.T  # type: ignore[has-type]
            self.role_tid = "%tid" if first == 0 else self.emit(f"sub i32 %tid, {first * 32}")  # type: ignore[attr-defined]
            self.role_single = role.single
            self.role_threads = role.warps * 32
            self.role_slot = role.slot
            # the helpers' thread ids (`tid0`) and thread counts are the role's: its layouts were assigned over its
            # warps (`layout_assign`), and an op of a role that does not start at warp 0 read the CTA's (hrev20)
            self.role_base = first * 32
            self.T = role.warps * 32
            if role.single:
                # one thread issues every copy; the others of the role are done
                lead = self.emit(f"icmp eq i32 {self.role_tid}, 0")  # type: ignore[attr-defined]
                work = self.new_label("producer_lead")  # type: ignore[attr-defined]
                self.cbr(lead, work, done)  # type: ignore[attr-defined]
                self.label(work)  # type: ignore[attr-defined]
            self.region(role.body, ())  # type: ignore[attr-defined]
            self.role_tid, self.role_base, self.T = saved, saved_base, saved_T
            self.role_single = True
            self.role_slot = 0
            self.br(done)  # type: ignore[attr-defined]
            if not last:
                self.label(nxt)  # type: ignore[attr-defined]
            first += role.warps
        self.in_roles = outer_roles
        self._role_scratch = outer_claims
        self.label(done)  # type: ignore[attr-defined]
        if op.rejoin:
            self._rejoin(op, warp)

    def _rejoin(self, op: g.WarpSpecialize, warp: str) -> None:
        """Ops follow the roles (`WarpSpecialize.rejoin`): every warp takes `op.rejoin` registers, so what follows
        is compiled for one budget. The warps first meet at a CTA barrier (after a `setmaxnreg` a warpgroup's
        warps must synchronize before the next one, PTX ISA); then each warpgroup's own `setmaxnreg`: one `inc`
        for all where no role holds more (the consumers' as they were, the producer's back from its `dec`), else
        each role its `inc` or `dec` in a branch of its own (both arms end at the same budget: with the producer's
        `inc` alone in a branch ptxas compiled what follows for its 40 registers, 372 B of spills, hattn7)."""
        self.barrier()  # type: ignore[attr-defined]
        x = op.rejoin

        def setmax(kind: str) -> None:
            fn = f"llvm.nvvm.setmaxnreg.{kind}.sync.aligned.u32"
            self.declare(f"declare void @{fn}(i32 immarg)")  # type: ignore[attr-defined]
            self.stmt(f"call void @{fn}(i32 {x})")  # type: ignore[attr-defined]

        if all(not r.regs or r.regs <= x for r in op.roles):
            setmax("inc")
            return
        join = self.new_label("rejoined")  # type: ignore[attr-defined]
        first = 0
        for i, role in enumerate(op.roles):
            arm = self.new_label("rejoin")  # type: ignore[attr-defined]
            nxt = join if i == len(op.roles) - 1 else self.new_label("rejoin_next")  # type: ignore[attr-defined]
            if i == len(op.roles) - 1:
                self.br(arm)  # type: ignore[attr-defined]
            else:
                inside = self.emit(f"icmp ult i32 {warp}, {first + role.warps}")  # type: ignore[attr-defined]
                self.cbr(inside, arm, nxt)  # type: ignore[attr-defined]
            self.label(arm)  # type: ignore[attr-defined]
            setmax("dec" if role.regs and role.regs > x else "inc")
            self.br(join)  # type: ignore[attr-defined]
            if nxt is not join:
                self.label(nxt)  # type: ignore[attr-defined]
            first += role.warps
        self.label(join)  # type: ignore[attr-defined]

    # -- wgmma -------------------------------------------------------------------------
    def _desc(self, buf: ir.Value, stage: ir.Value, lbo: int, sbo: int, swizzle: int, extra: str | None = None) -> str:
        """The i64 descriptor of stage `stage` of `buf` (start address included).
        The stage moves the start address field of stage 0's descriptor (a
        loop invariant) in 32 bits: shared addresses are below 256 KB, so the
        14-bit field of address / 16 never carries, and a loop's products
        wait for one multiply-add, not 64-bit address arithmetic."""
        ref = self.env[buf.id]  # type: ignore[attr-defined]
        assert isinstance(ref, SmemRef) and ref.stage_bytes % 16 == 0, ref
        addr = self.emit(f"ptrtoint ptr addrspace(3) {self.smem_at(buf, None)} to i32")  # type: ignore[attr-defined]
        a4 = self.emit(f"and i32 {self.emit(f'lshr i32 {addr}, 4')}, 16383")  # type: ignore[attr-defined]
        if stage is not None:
            step = self.emit(f"mul i32 {self.scalar(stage)}, {ref.stage_bytes >> 4}")  # type: ignore[attr-defined]
            a4 = self.emit(f"add i32 {a4}, {step}")  # type: ignore[attr-defined]
        if extra is not None:  # (an i32 of 16-byte units: the address field too, never the 64-bit descriptor)
            a4 = self.emit(f"add i32 {a4}, {extra}")  # type: ignore[attr-defined]
        const = (_SWIZZLE_CODE[swizzle] << 62) | ((sbo >> 4) << 32) | ((lbo >> 4) << 16)
        return self.emit(f"or i64 {self.emit(f'zext i32 {a4} to i64')}, {const}")  # type: ignore[attr-defined]

    def operand_desc(self, buf: ir.Value, stage: ir.Value, kmajor: bool, sw: int, extra: str | None = None) -> str:
        """The descriptor of a wgmma operand tile [stages, rows, cols] in
        shared memory: K-major rows are `sw` bytes apart; MN-major tiles are
        64-element slabs of `rows` rows. `extra` (an i32, 16-byte units) moves
        the start address further."""
        if kmajor:
            return self._desc(buf, stage, 16, 8 * sw, sw, extra)
        return self._desc(buf, stage, buf.shape[1] * 128, 1024, sw, extra)

    def warpgroup_rows(self, kmajor: bool, rows: int, sw: int, m: int) -> str:
        """The i32 offset (16-byte units) of this warpgroup's first row of A (`m` rows per warpgroup), for the
        descriptor's 32-bit address field (`_desc`'s `extra`). Added to the 64-bit descriptor (`add i64 desc,
        zext off`), it was the form ptxas 13.0 miscompiled in the column split's B descriptors (`ring_mma.
        wgmma_descs`: their high word, SBO and the swizzle, built as 0; `tests/ptxas_report.hgmma_desc_faults`)."""
        group = self.emit(f"lshr i32 {self.role_tid}, 7")  # type: ignore[attr-defined]
        row0 = self.emit(f"mul i32 {group}, {m}")  # type: ignore[attr-defined]
        if kmajor:
            row_bytes = self.emit(f"mul i32 {row0}, {sw}")  # type: ignore[attr-defined]
        else:
            row_bytes = self.emit(f"mul i32 {self.emit(f'lshr i32 {row0}, 6')}, {rows * 128}")  # type: ignore[attr-defined]
        return self.emit(f"lshr i32 {row_bytes}, 4")  # type: ignore[attr-defined]

    def operand_descs(self, op: g.Wgmma, m: int) -> tuple[str, str, Shared, Shared]:
        """The descriptors of `op`'s A (at this warpgroup's first row, `m` rows
        per warpgroup) and B, and the two operands' shared layouts."""
        sa, sb = self.layouts[op.a.id], self.layouts[op.b.id]  # type: ignore[attr-defined]
        assert isinstance(sa, Shared) and isinstance(sb, Shared)
        a_stage = op.a_stage if op.a_stage is not None else op.stage
        rows = self.warpgroup_rows(op.a_kmajor, op.a.shape[1], sa.swizzle, m)
        desc_a = self.operand_desc(op.a, a_stage, op.a_kmajor, sa.swizzle, rows)
        desc_b = self.operand_desc(op.b, op.stage, op.b_kmajor, sb.swizzle)
        return desc_a, desc_b, sa, sb

    def wgmma(self, op: g.Wgmma) -> None:
        lay = self.layouts[op.result.id]  # type: ignore[attr-defined]
        cols = 1
        if isinstance(lay, AccTile):  # the products pipeline's (a warp's 16 rows: m64 a warpgroup, one block)
            assert op.result.shape[0] == 16 * lay.warps, (lay, op.result.shape)
            cols = lay.cols
            lay = WgmmaAcc(lay.warps // 4, 64, op.result.shape[1] // cols)
        assert isinstance(lay, WgmmaAcc)
        M, N = op.result.shape
        N //= cols
        _, ra, ca = op.a.shape
        _, rb, _ = op.b.shape
        K = ca if op.a_kmajor else ra
        if cols > 1:  # each warpgroup its part of the columns (`AccTile.cols`)
            desc_a, desc_b, sa, sb = ring_mma.wgmma_descs(self, op, N)
        else:
            desc_a, desc_b, sa, sb = self.operand_descs(op, lay.m_per_group)
        acc = self.tile(op.acc)  # type: ignore[attr-defined]
        n = N // 2  # f32 registers of one m64nN instruction
        ty = {DType.F16: "f16", DType.BF16: "bf16"}[op.a.dtype]
        sty = self.float_struct(n)  # type: ignore[attr-defined]
        self.declare("declare void @llvm.nvvm.wgmma.fence.sync.aligned()")  # type: ignore[attr-defined]
        self.declare("declare void @llvm.nvvm.wgmma.commit_group.sync.aligned()")  # type: ignore[attr-defined]
        self.stmt("call void @llvm.nvvm.wgmma.fence.sync.aligned()")  # type: ignore[attr-defined]
        regs = list(acc)
        blocks = lay.m_per_group // 64
        use = self.scalar(op.use_acc) if op.use_acc is not None else "true"  # type: ignore[attr-defined]
        # One asm statement per m64 block: its K/16 wgmmas chain on the same
        # registers (one struct in, one out: a third of the IR of one call each).
        ks = K // 16
        ta, tb = (0 if op.a_kmajor else 1), (0 if op.b_kmajor else 1)
        outs = ",".join(f"${i}" for i in range(n))
        lines = [f"wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{ty}.{ty} {{{outs}}}, ${2 * n + 2 * kk}, "
                 f"${2 * n + 2 * kk + 1}, ${2 * n + 2 * ks + (0 if kk == 0 else 1)}, 1, 1, {ta}, {tb};"
                 for kk in range(ks)]
        asm = "\\0A".join(lines)
        cons = ",".join(["=f"] * n + [str(i) for i in range(n)] + ["l"] * (2 * ks) + ["b", "b"])
        b_descs = []
        for kk in range(ks):
            k0 = kk * 16
            b_bytes = k_bytes(k0, op.b_kmajor, rb, sb.swizzle)
            b_descs.append(self.emit(f"add i64 {desc_b}, {b_bytes >> 4}"))  # type: ignore[attr-defined]
        for mb in range(blocks):
            descs = []
            for kk in range(ks):
                k0 = kk * 16
                ab = k_bytes(k0, op.a_kmajor, ra, sa.swizzle) + mb * (64 * sa.swizzle if op.a_kmajor else ra * 128)
                descs += [self.emit(f"add i64 {desc_a}, {ab >> 4}"), b_descs[kk]]  # type: ignore[attr-defined]
            cur = regs[mb * n:(mb + 1) * n]
            args = ", ".join([f"float {x}" for x in cur] + [f"i64 {d}" for d in descs] + [f"i1 {use}", "i1 true"])
            res = self.emit(f'call {sty} asm sideeffect "{asm}", "{cons}"({args})')  # type: ignore[attr-defined]
            regs[mb * n:(mb + 1) * n] = [self.emit(f"extractvalue {sty} {res}, {i}") for i in range(n)]  # type: ignore[attr-defined]
        self.stmt("call void @llvm.nvvm.wgmma.commit_group.sync.aligned()")  # type: ignore[attr-defined]
        self.env[op.result.id] = regs  # type: ignore[attr-defined]

    def wgmma_wait(self, op: g.WgmmaWait) -> None:
        flat: list[str] = []
        for v in op.values:
            flat += self.tile(v)  # type: ignore[attr-defined]
        n = len(flat)
        sty = self.float_struct(n)  # type: ignore[attr-defined]
        cons = ",".join(["=f"] * n + [str(i) for i in range(n)])
        args = ", ".join(f"float {x}" for x in flat)
        res = self.emit(f'call {sty} asm sideeffect "wgmma.wait_group.sync.aligned {op.pending};", "{cons}"({args})')  # type: ignore[attr-defined]
        out = [self.emit(f"extractvalue {sty} {res}, {i}") for i in range(n)]  # type: ignore[attr-defined]
        pos = 0
        for r, v in zip(op.results, op.values, strict=True):
            m = len(self.tile(v))  # type: ignore[attr-defined]
            self.env[r.id] = out[pos:pos + m]  # type: ignore[attr-defined]
            pos += m

    # -- stores from the accumulator layout ----------------------------------------------
    def proxy_fence(self) -> None:
        """`fence.proxy.async.shared::cta`: this thread's ordinary shared-memory
        writes become visible to the async proxy (TMA, wgmma) after the next barrier."""
        self.declare("declare void @llvm.nvvm.fence.proxy.async.shared_cta()")  # type: ignore[attr-defined]
        self.stmt("call void @llvm.nvvm.fence.proxy.async.shared_cta()")  # type: ignore[attr-defined]

    def named_barrier(self, bid: int, threads: int) -> None:
        self.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")  # type: ignore[attr-defined]
        self.stmt(f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {bid}, i32 {threads})")  # type: ignore[attr-defined]

    def store_wgmma(self, op: ir.Store, lay: WgmmaAcc) -> None:
        """The epilogue's store, wide: each warpgroup writes its rows of the value
        (already in the memory dtype) to shared memory in the accumulator layout,
        then its 128 threads store the rows in 16-byte chunks, consecutive
        threads on consecutive chunks of a row, masked per chunk at the edges
        (element by element where a chunk straddles an edge or is misaligned).

        The staging area reuses the operand ring (dead once every consumer has
        waited for its last wgmma: a barrier of all consumers comes first), or
        scratch space after the buffers when the ring is too small or still
        live (`GpuKernel.stage_apart`: an N-part of the tile before the last,
        while the producer fills the ring for the next; a persistent GEMM's tiles). A consumer role of a slot
        (`Role.slot`: the pingpong GEMM's second) has an area and a named barrier of its own."""
        info = self.tensors[op.tensor]  # type: ignore[attr-defined]
        dt = info.param.dtype
        mt, es = self.mty(info), self.msize(info)  # type: ignore[attr-defined]
        M, N = op.value.shape
        rows = lay.m_per_group
        pitch = N * es + 16  # a 16-byte pad per row: the 8 rows a warp writes hit distinct banks
        area = rows * pitch
        total = lay.warpgroups * area
        ring = self.ring_bytes()
        slot = getattr(self, "role_slot", 0)
        bid = 1 if slot == 0 else SLOT_BARRIER + slot
        if total <= ring and op.value.id not in self.k.stage_apart and not slot:  # type: ignore[attr-defined]
            base0 = 0
        else:
            self.need_smem(total * (slot + 1), op.span, slot * total)  # type: ignore[attr-defined]  # (its own)
            base0 = self.scratch_base + slot * total  # type: ignore[attr-defined]
        slots = self.tile(op.value)  # type: ignore[attr-defined]
        off0, off1 = (self.scalar(o) for o in op.offsets)  # type: ignore[attr-defined]
        t = self.role_tid
        group = self.emit(f"lshr i32 {t}, 7")  # type: ignore[attr-defined]
        gt = self.emit(f"and i32 {t}, 127")  # type: ignore[attr-defined]
        warp = self.emit(f"lshr i32 {gt}, 5")  # type: ignore[attr-defined]
        lane = self.emit(f"and i32 {t}, 31")  # type: ignore[attr-defined]
        ga = self.emit(f"mul i32 {group}, {area}")  # type: ignore[attr-defined]
        mine = self.emit(f"add i32 {ga}, {base0}")  # type: ignore[attr-defined]
        # 1. every consumer is past its last wgmma; the generic proxy takes the ring back
        self.named_barrier(bid, 128 * lay.warpgroups)
        self.proxy_fence()
        # 2. registers -> shared, two columns at a time
        w16 = self.emit(f"shl i32 {warp}, 4")  # type: ignore[attr-defined]
        l4 = self.emit(f"lshr i32 {lane}, 2")  # type: ignore[attr-defined]
        r_in = self.emit(f"add i32 {w16}, {l4}")  # type: ignore[attr-defined]
        c_in = self.emit(f"shl i32 {self.emit(f'and i32 {lane}, 3')}, 1")  # type: ignore[attr-defined]
        rb = self.emit(f"mul i32 {r_in}, {pitch}")  # type: ignore[attr-defined]
        cb = self.emit(f"mul i32 {c_in}, {es}")  # type: ignore[attr-defined]
        at = self.emit(f"add i32 {mine}, {self.emit(f'add i32 {rb}, {cb}')}")  # type: ignore[attr-defined]
        per_block = N // 8 * 4
        vt = f"<2 x {mt}>"
        for reg in range(0, len(slots), 2):
            mb, rem = divmod(reg, per_block)
            i, q = divmod(rem, 4)
            byte = (mb * 64 + (8 if q >= 2 else 0)) * pitch + 8 * i * es
            vals = [self.reg_to_mem(slots[reg + j], dt, mt) for j in range(2)]  # type: ignore[attr-defined]
            vec = self.emit(f"insertelement {vt} undef, {mt} {vals[0]}, i32 0")  # type: ignore[attr-defined]
            vec = self.emit(f"insertelement {vt} {vec}, {mt} {vals[1]}, i32 1")  # type: ignore[attr-defined]
            p = self.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {self.emit(f'add i32 {at}, {byte}')}")  # type: ignore[attr-defined]
            self.stmt(f"store {vt} {vec}, ptr addrspace(3) {p}, align {2 * es}")  # type: ignore[attr-defined]
        self.named_barrier(bid, 128 * lay.warpgroups)
        # 3. shared -> global, 16 bytes per thread per step (the value's rows: a padded accumulator's rows
        # past them are never stored)
        epc = 16 // es  # elements per chunk
        cpr = N // epc  # chunks per row
        chunks = min(rows, M) * cpr
        steps = -(-chunks // 128)
        gr = self.emit(f"mul i32 {group}, {rows}")  # type: ignore[attr-defined]
        g_row0 = self.emit(f"add i32 {off0}, {gr}")  # type: ignore[attr-defined]
        f = info.facts
        m1 = self.multiple_of(op.offsets[1])  # type: ignore[attr-defined]
        aligned = (f.aligned16 and len(f.dims_div16) == 2 and f.dims_div16[1] and (m1 == 0 or m1 % epc == 0))
        ct = f"<{epc} x {mt}>"

        def body(it: str, cur: list[str]) -> list[str]:
            i128 = self.emit(f"mul i32 {it}, 128")  # type: ignore[attr-defined]
            q = self.emit(f"add i32 {i128}, {gt}")  # type: ignore[attr-defined]
            if chunks % 128:
                live = self.emit(f"icmp ult i32 {q}, {chunks}")  # type: ignore[attr-defined]
                go, skip = self.new_label("eg"), self.new_label("ex")  # type: ignore[attr-defined]
                self.cbr(live, go, skip)  # type: ignore[attr-defined]
                self.label(go)  # type: ignore[attr-defined]
            r = self.emit(f"udiv i32 {q}, {cpr}")  # type: ignore[attr-defined]
            c = self.emit(f"urem i32 {q}, {cpr}")  # type: ignore[attr-defined]
            rp = self.emit(f"mul i32 {r}, {pitch}")  # type: ignore[attr-defined]
            cp = self.emit(f"shl i32 {c}, 4")  # type: ignore[attr-defined]
            sp = self.emit(f"add i32 {mine}, {self.emit(f'add i32 {rp}, {cp}')}")  # type: ignore[attr-defined]
            ptr = self.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {sp}")  # type: ignore[attr-defined]
            chunk = self.emit(f"load {ct}, ptr addrspace(3) {ptr}, align 16")  # type: ignore[attr-defined]
            row = self.emit(f"add i32 {g_row0}, {r}")  # type: ignore[attr-defined]
            ce = self.emit(f"mul i32 {c}, {epc}")  # type: ignore[attr-defined]
            col = self.emit(f"add i32 {off1}, {ce}")  # type: ignore[attr-defined]
            whole = self.in_bounds(info, [row, col], epc)  # type: ignore[attr-defined]
            addr = self.address(info, [row, col])  # type: ignore[attr-defined]
            fast = whole if aligned else self._vector_ok(whole, addr, 16, [])  # type: ignore[attr-defined]
            vec_l, slow_l, join = self.new_label("ev"), self.new_label("es"), self.new_label("ej")  # type: ignore[attr-defined]
            self.cbr(fast or "true", vec_l, slow_l)  # type: ignore[attr-defined]
            self.label(vec_l)  # type: ignore[attr-defined]
            self.stmt(f"store {ct} {chunk}, ptr addrspace(1) {addr}, align 16")  # type: ignore[attr-defined]
            self.br(join)  # type: ignore[attr-defined]
            self.label(slow_l)  # type: ignore[attr-defined]
            for j in range(epc):
                ok, pj = self._element(info, [row, col], addr, j, None, None, mt)  # type: ignore[attr-defined]
                v = self.emit(f"extractelement {ct} {chunk}, i32 {j}")  # type: ignore[attr-defined]
                self.store_if(ok, mt, v, pj, es, ("ee", "em"))  # type: ignore[attr-defined]
            self.br(join)  # type: ignore[attr-defined]
            self.label(join)  # type: ignore[attr-defined]
            if chunks % 128:
                self.br(skip)  # type: ignore[attr-defined]
                self.label(skip)  # type: ignore[attr-defined]
            return []

        self.counted_loop(0, steps, [], body)  # type: ignore[attr-defined]

    def ring_bytes(self) -> int:
        """Bytes of shared memory the operand ring takes (from offset 0)."""
        offs = [op.offset for op in g.walk(self.k.body) if isinstance(op, g.BarrierAlloc)]  # type: ignore[attr-defined]
        return min(offs) if offs else 0


__all__ = ["HopperOps", "SmemRef"]
