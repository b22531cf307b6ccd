"""Global memory: tile loads and stores, atomics (the emitter's `MemoryOps`).

Every access is masked against the tensor's run-time bounds (so none leaves
a tensor, whatever the shapes); contiguous aligned chunks become vector
accesses, specialised on the launch's divisibility facts; atomics fall back
to compare-and-swap loops where PTX has no instruction.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

from tilelang.backend.codegen.llvm_types import (
    const_operand,
    mem_size,
    mem_ty,
    reg_ty,
)
from tilelang.backend.gpu.layouts import WgmmaAcc
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from . import atomic_spread, ldg_early
from .accview import store_rows
from .casts import CastOps
from .core import (
    Layout,
    Slots,
    _TensorInfo,
)


class MemoryOps(CastOps):
    """Global memory: tile loads and stores, atomics."""

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
                # `c + last_extent <= dim` as `c <= dim - last_extent`: the add wraps
                # for an offset near i32::MAX (a tile index from user arithmetic) and
                # would pass a chunk 8 GB past the tensor; the subtraction cannot wrap
                nonneg = self.emit(f"icmp sge i32 {c}, 0")
                last = self.emit(f"sub i32 {info.dims[d]}, {last_extent}")
                conds += [nonneg, self.emit(f"icmp sle i32 {c}, {last}")]
            else:
                conds.append(self.emit(f"icmp ult i32 {c}, {info.dims[d]}"))
        return self.and_all(conds)

    def nonempty(self, info: _TensorInfo) -> str | None:
        """i1: the tensor has an element (None: its dims say so). A load redirected to element (0, ..) in
        place of one outside the tensor (`sm80._elements`, `smem_copy`) is made only where it holds: a tensor
        of no elements has no element 0 (a PyTorch or CuPy array of none has no memory: address 0)."""
        conds: list[str | None] = []
        for d in info.dims:
            if d.lstrip("-").isdigit():
                if int(d) == 0:
                    return "false"
                continue
            conds.append(self.emit(f"icmp ne i32 {d}, 0"))
        return self.and_all(conds)

    def mem_to_reg(self, v: str, dt: DType, mt: str | None = None) -> str:
        mt = mt or mem_ty(dt)
        if mt in ("half", "bfloat"):
            return self.emit(f"fpext {mt} {v} to float")
        if dt is DType.BF16 and mt == "float":
            # a bf16 tensor held as f32 values (`TensorFacts.bf16_f32`: a float32 CUDA array of another library,
            # which the API takes for bf16): the value read is rounded to bf16, as the interpreter's is (hrev24:
            # a copy stored 1.1 where the interpreter stores 1.1015625; `smem_copy._bits` rounded already)
            return self.round_to(v, DType.BF16)
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

    def _element(self, info: _TensorInfo, coords: list[str], addr: str, j: int, valid: str | None,
                 lane: str | None, mt: str) -> tuple[str | None, str]:
        """Element j of the chunk at `coords` (address `addr`), on the scalar
        path: i1 whether to touch it (the chunk `valid`, inside the tensor, its
        mask `lane` on; None: always) and its address."""
        cj = list(coords)
        if j:
            cj[-1] = self.emit(f"add i32 {coords[-1]}, {j}")
        ok = self.and_all([valid, self.in_bounds(info, cj), lane])
        pj = addr if j == 0 else self.emit(f"getelementptr {mt}, ptr addrspace(1) {addr}, i64 {j}")
        return ok, pj

    def load(self, op: ir.Load) -> None:
        r = op.result
        info = self.tensors[op.tensor]
        dt = info.param.dtype
        mt, es = self.mty(info), self.msize(info)
        lay = self.lay(r)
        offsets = [self.scalar(o) for o in op.offsets]
        pad = self.scalar(op.padding) if op.padding is not None else const_operand(dt, 0)
        mask = self.tile(op.mask) if op.mask is not None else None
        # a load before the PDL wait is a plain `ld.global`: ptxas sinks an
        # `ld.global.nc` (`!invariant.load`) below `griddepcontrol.wait`
        meta = ldg_early.token(self, r.id) if info.readonly and op.tensor not in self._pre_wait else ""
        spec = self._specialised(info, op.offsets, lay, mask is not None)
        out: Slots = []
        V = lay.V
        vt = f"<{V} x {mt}>"
        # Specialised chunks (all in or all out) keep their raw vectors until
        # every chunk's load has been issued, and convert them to registers
        # after: a conversion next to its load makes the warp wait for that
        # load before it issues the next one (ptxas keeps the order), so a
        # [BN, BK] bf16 tile would take several memory round trips, not one.
        raw: list[str] = []
        pad_vec = ""
        if spec:
            pad_vec = "undef"
            pad_m = self.reg_to_mem(pad, dt, mt)
            for j in range(V):
                pad_vec = self.emit(f"insertelement {vt} {pad_vec}, {mt} {pad_m}, i32 {j}")
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
                if spec:
                    vec_end = self.cur
                    self.br(join)
                    self.label(join)
                    raw.append(self.emit(f"phi {vt} [ {vec}, %{vec_end} ], [ {pad_vec}, %{pre} ]"))
                    continue
                vals = [self.mem_to_reg(self.emit(f"extractelement {vt} {vec}, i32 {j}"), dt, mt) for j in range(V)]
                incoming.append((vals, self.cur))
                self.br(join)
                self.label(slow_l)
            if V == 1 or not spec:
                vals = []
                for j in range(V):
                    ok, pj = self._element(info, coords, addr, j, valid, mask[k * V + j] if mask else None, mt)
                    ld, skip, jn = self.new_label("le"), self.new_label("lk"), self.new_label("lm")
                    self.cbr(ok or "true", ld, skip)
                    self.label(ld)
                    x = self.mem_to_reg(self.emit(f"load {mt}, ptr addrspace(1) {pj}, align {es}{meta}"), dt, mt)
                    vals.append(self.join_or(ok or "true", reg_ty(dt), x, pad, skip, jn))
                incoming.append((vals, self.cur))
                self.br(join)
            self.label(join)
            for j in range(V):
                if len(incoming) == 1:
                    out.append(incoming[0][0][j])
                else:
                    arms = ", ".join(f"[ {vals[j]}, %{blk} ]" for vals, blk in incoming)
                    out.append(self.emit(f"phi {reg_ty(dt)} {arms}"))
        for vec in raw:
            out += [self.mem_to_reg(self.emit(f"extractelement {vt} {vec}, i32 {j}"), dt, mt) for j in range(V)]
        self.env[r.id] = out

    def store(self, op: ir.Store) -> None:
        wg = self.layouts.get(op.value.id)
        if isinstance(wg, WgmmaAcc):
            self.store_wgmma(op, wg)
            return
        if store_rows(self, op):  # the attention epilogue's: one bounds test a row
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
                    ok, pj = self._element(info, coords, addr, j, valid, mask[k * V + j] if mask else None, mt)
                    self.store_if(ok, mt, mvals[j], pj, es, ("se", "sm"))
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

        def one(coords: list[str], val: str, conds: list[str | None], after: list[str | None]) -> None:
            ok = self.and_all([*conds, self.in_bounds(info, coords), *after])
            go, jn = self.new_label("ae"), self.new_label("am")
            self.cbr(ok or "true", go, jn)
            self.label(go)
            addr = self.address(info, coords)
            if cas:
                self.atomic_cas(op.op, addr, val, dt, mt)
            else:
                self.emit(f"atomicrmw {rmw} ptr addrspace(1) {addr}, {mt} {self.reg_to_mem(val, dt, mt)} monotonic")
            self.br(jn)
            self.label(jn)

        rep = atomic_spread.replicas(self, lay) if lay is not None else None
        if rep is not None:  # the copies of a replicated tile share its atomics
            atomic_spread.emit(self, op, lay, rep, one)
            return
        owner = lay.owner(self) if lay is not None else None  # replicas must not add twice
        for n, (k, _j) in enumerate(positions):
            conds: list[str | None] = []
            if lay is not None:
                conds += [owner, self.chunk_valid(lay, k)]
            else:
                # A scalar atomic is one operation per block, not one per thread.
                conds.append(self.emit(f"icmp eq i32 {self.tid0()}, 0"))
            coords = []
            for idx in op.indices:
                v = self.get(idx)
                coords.append(v[n] if isinstance(v, list) else v)
            after: list[str | None] = []
            if op.mask is not None:
                m = self.get(op.mask)
                after.append(m[n] if isinstance(m, list) else m)
            val = self.get(x)
            one(coords, val[n] if isinstance(val, list) else val, conds, after)

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
