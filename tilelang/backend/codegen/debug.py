"""Device `assert` and `print` (the emitter's `DebugOps`).

A failed assert writes its number into the launch's error word; `print`
writes records (`backend/prints.py`) into the print buffer the host reads.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

from tilelang.backend.prints import HEADER as PRINT_HEADER
from tilelang.backend.prints import PrintValue, layout_format, record_size, record_ty
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .control import ControlOps


class DebugOps(ControlOps):
    """Device `assert` and `print`."""

    def device_assert(self, op: ir.Assert) -> None:
        self.asserts.append((op.span, op.message, op.region, op.axis))
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
        if not op.order:
            self.emit(f"cmpxchg ptr addrspace(1) %err, i32 0, i32 {num} monotonic monotonic")
        else:
            # In a walk's, queue's or `last_block` region the error names the place (the tile's,
            # `ir.Assert.order`): the number and the place's complement in the word after it, as
            # one u64 `max`, so the smallest failing place wins, whichever thread or block gets
            # there first (threads of a block walk tiles at their own pace: a first-wins word
            # named a later tile). A plain assert's number alone is below any such pair.
            place = self.place(op.order, op.axis)
            inv = self.emit(f"xor i32 {place}, -1")
            hi = self.emit(f"shl i64 {self.emit(f'zext i32 {inv} to i64')}, 32")
            self.emit(f"atomicrmw umax ptr addrspace(1) %err, i64 {self.emit(f'or i64 {hi}, {num}')} monotonic")
        self.br(jn)
        self.label(jn)

    def place(self, order: tuple[ir.Value, ...], axis: int) -> str:
        """A block's linear place in the grid (x slowest, as the interpreter's blocks run), or,
        with an `order` (s, n) on `axis`, that of tile `s` of `n` along it (the other axes the
        block's own): where a `print`'s record goes, and what a failed `assert` names."""
        lin = "0"
        for i, ax in enumerate("xyz"):
            if order and i == axis:
                cid, n = self.scalar(order[0]), self.scalar(order[1])
            else:
                self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.{ax}()")
                cid = self.call("i32", f"llvm.nvvm.read.ptx.sreg.ctaid.{ax}", "")
                n = None
            if ax == "x":
                lin = cid
                continue
            if n is None:
                self.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.{ax}()")
                n = self.call("i32", f"llvm.nvvm.read.ptx.sreg.nctaid.{ax}", "")
            lin = self.emit(f"add i32 {self.emit(f'mul i32 {lin}, {n}')}, {cid}")
        return lin

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
        is0 = self.emit(f"icmp eq i32 {self.tid0()}, 0")
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
        # the record's place: its block's linear id, or in a queue's or walk's loop the
        # tile's (`ir.Print.order`)
        lin = self.place(op.order, op.axis)
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
