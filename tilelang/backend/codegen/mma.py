"""Matrix products outside the pipelined paths (the emitter's `MmaOps`).

`mma` by FMAs through shared memory, or by mma.sync.m16n8k16 tensor-core
tiles with the accumulator of a loop held in the C-fragment layout (`Frag`).

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

from tilelang.backend.codegen.llvm_types import (
    reg_ty,
)
from tilelang.backend.gpu.layouts import MmaAcc
from tilelang.backend.gpu.nodes import DotOp
from tilelang.backend.target import int8_mma_default
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import Span

from .gather_dot import gather_dot
from .shift_dot import shift_dot
from .core import (
    Frag,
    _TileCtx,
)
from .reductions import ReductionOps


class MmaOps(ReductionOps):
    """Matrix products outside the pipelined paths."""

    def mma(self, op: ir.Mma | DotOp) -> None:
        if (self.mma_tensor_core(op) or self.mma_int8_tensor_core(op) or shift_dot(self, op)
                or gather_dot(self, op)):
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
        warp = self.emit(f"lshr i32 {self.tid0()}, 5")
        lane = self.emit(f"and i32 {self.tid0()}, 31")
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
        lane = self.emit(f"and i32 {self.tid0()}, 31")
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

    @staticmethod
    def int8_tc_eligible(op: ir.Mma | DotOp) -> bool:
        """`mma` of i8 or u8 tiles with the i32 accumulator on the tensor cores
        (`mma.sync.m16n8k32`, sm_80 and later): M, N, K multiples of 16, 8, 32.
        On unless `TILEC_INT8_MMA=0` (then the FMA loop); a GEMM loop sm_80's
        ring takes never reaches here (`passes/pipeline_sm80.py`)."""
        M, K = op.a.shape
        N = op.b.shape[1]
        return (int8_mma_default() and op.a.dtype in (DType.I8, DType.U8)
                and op.acc.dtype is DType.I32 and M % 16 == 0 and N % 8 == 0 and K % 32 == 0)

    def mma_int8_tensor_core(self, op: ir.Mma | DotOp) -> bool:
        """i8/u8 x i8/u8 + i32 by `mma.sync.m16n8k32` (exact: integer products
        and wrapping i32 sums, the interpreter's `mma`). A [M, K] and B [K, N]
        are staged in shared memory as bytes, row-major; a lane's A registers
        are 4 consecutive bytes of a row (rows g, g + 8; columns 4q and 4q + 16
        of each 32-wide step: aligned 32-bit loads), its B registers 4 bytes of
        a column (rows 4q.. and 4q + 16.., column g: byte loads packed), and its
        C/D values the m16n8 accumulator layout of the f16 path (`_tc_open`'s
        `c_idx`). The accumulator goes through shared memory (no `Frag`)."""
        a, b, acc, r = op.a, op.b, op.acc, op.result
        if not self.int8_tc_eligible(op):
            return False
        M, K = a.shape
        N = b.shape[1]
        name = f"llvm.nvvm.mma.m16n8k32.row.col.{'s8' if a.dtype is DType.I8 else 'u8'}"
        size_a = -(-(M * K) // 16) * 16
        size_b = -(-(K * N) // 16) * 16
        off_a, off_b, off_c = 0, size_a, size_a + size_b
        self.need_smem(off_c + M * N * 4, op.span)
        self.barrier()
        self.write_tile(a, off_a)
        self.write_tile(b, off_b)
        self.write_tile(acc, off_c)
        self.barrier()
        self.declare(f"declare {{ i32, i32, i32, i32 }} @{name}({', '.join(['i32'] * 10)})")
        base_a = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {off_a}")
        base_b = self.emit(f"getelementptr i8, ptr addrspace(3) {self.scratch}, i32 {off_b}")

        def word_a(byte: str) -> str:
            p = self.emit(f"getelementptr i8, ptr addrspace(3) {base_a}, i32 {byte}")
            return self.emit(f"load i32, ptr addrspace(3) {p}, align 4")

        def word_b(k0: str, col: str) -> str:
            w = "0"
            for i in range(4):
                row = self.emit(f"add i32 {k0}, {i}")
                ix = self.emit(f"add i32 {self.emit(f'mul i32 {row}, {N}')}, {col}")
                p = self.emit(f"getelementptr i8, ptr addrspace(3) {base_b}, i32 {ix}")
                byte = self.emit(f"load i8, ptr addrspace(3) {p}, align 1")
                v = self.emit(f"zext i8 {byte} to i32")
                w = v if i == 0 else self.emit(f"or i32 {w}, {self.emit(f'shl i32 {v}, {8 * i}')}")
            return w

        lanes = self._tc_lanes()
        _, g, q2 = lanes
        q4 = self.emit(f"shl i32 {q2}, 1")
        for i in range(self._tc_count(M, N)):
            t = self._tc_open(i, M, N, lanes)
            c = [self.smem_load(off_c, DType.I32, ix) for ix in t.c_idx]
            ra = self.emit(f"add i32 {t.row0}, {g}")
            row_a = [self.emit(f"mul i32 {ra}, {K}"), self.emit(f"mul i32 {self.emit(f'add i32 {ra}, 8')}, {K}")]
            col_b = self.emit(f"add i32 {t.col0}, {g}")
            for kk in range(K // 32):
                ka = self.emit(f"add i32 {q4}, {kk * 32}")
                regs = [word_a(self.emit(f"add i32 {row}, {self.emit(f'add i32 {ka}, {h}')}"))
                        for h in (0, 16) for row in row_a]
                regs += [word_b(self.emit(f"add i32 {ka}, {h}"), col_b) for h in (0, 16)]
                d = self.call("{ i32, i32, i32, i32 }", name, ", ".join(f"i32 {x}" for x in regs + c))
                c = [self.emit(f"extractvalue {{ i32, i32, i32, i32 }} {d}, {n}") for n in range(4)]
            for ix, v in zip(t.c_idx, c, strict=True):
                self.smem_store(off_c, DType.I32, ix, v)
            self._tc_close(t)
        self.barrier()
        self.env[r.id] = [self.smem_load(off_c, DType.I32, f) for _, _, f in self.out_slots(r)]
        return True

