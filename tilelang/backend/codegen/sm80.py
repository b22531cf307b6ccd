"""Code generation of the sm_80 pipeline's ops (`passes/pipeline_sm80.py`):
shared rings (`SmemTile`), `cp.async` tile copies, commit/wait groups, and
`SmemDot` (ldmatrix + mma.sync.m16n8k16 on an `MmaTile` accumulator).

Shared layout of one stage of a [rows, cols] 16-bit ring: row r at byte
r * cols * 2; 16-byte chunk c of the row stored at chunk c ^ xor(r)
(`layouts.SmemTile.chunk_xor`; no swizzle when a row's chunk count is not a
power of two). `cp.async` writes and `ldmatrix` reads use the same mapping,
so 8 rows read at one logical chunk land in 8 bank groups.

ldmatrix fragments (all verified against the mma.sync operand layout):
- A [M, K] rows: `.x4`, lane l gives row 16 mi + (l % 8) + 8 ((l / 8) % 2),
  chunk 2 kk + l / 16: registers a0..a3 of the 16x16 A tile.
- B [K, N] rows (N contiguous): `.x4.trans`, lane l gives k row 16 kk + 8 (m % 2)
  + l % 8 and n chunk (n0 / 8) + m / 2 with m = l / 8: b0, b1 of two n8 tiles.
- B [N, K] rows (K contiguous, a transposed operand): `.x4`, lane l gives n row
  n0 + 8 (m / 2) + l % 8 and chunk 2 kk + m % 2: b0, b1 of two n8 tiles.

int8 (`mma.sync.m16n8k32`, 1-byte rings: a row of R bytes is R / 2 16-bit units
to the swizzle): A and a [N, K] B as above, a k32 step two chunks. A [K, N] B
by `.x4.trans` with lane l giving k row 32 kk + 16 (m / 2) + 2 (m % 2) + 4 (r / 2)
+ r % 2 (r = l % 8) of the n chunk n0 / 16 + p: the lane's registers hold, for
columns 2g and 2g + 1 of the 16, k rows {4q, 4q + 1} (matrix 0), {4q + 2, 4q + 3}
(1), and the same + 16 (2, 3); `prmt` 0x6420 of registers (0, 1) and (2, 3) is
b0, b1 of the n8 tile of the even columns, 0x7531 of the odd (`MmaTile.split16`;
the ring's swizzle `SmemTile.quad` spreads those 8 rows over the banks).
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType

from ..gpu import nodes as g
from ..gpu.layouts import MmaTile, Shared, SmemRows, SmemTile
from . import fma_dot


def emit_op(em: Any, op: object) -> bool:
    """Emit one of this module's ops; False for any other op."""
    match op:
        case g.CpAsyncTile():
            cp_async_tile(em, op)
            return True
        case g.CpAsyncCommit():
            em.declare("declare void @llvm.nvvm.cp.async.commit.group()")
            em.stmt("call void @llvm.nvvm.cp.async.commit.group()")
            return True
        case g.CpAsyncWait(pending=n, barrier=bar):
            em.declare("declare void @llvm.nvvm.cp.async.wait.group(i32)")
            em.stmt(f"call void @llvm.nvvm.cp.async.wait.group(i32 {n})")
            if op.fence:
                em.proxy_fence()
            if bar:
                em.barrier()
            if getattr(em, "_marking", "") == "ring" and not em._marked and em.role_tid == "%tid":
                # the block timeline's "ring" mark: thread 0 stamps each pass, so a
                # ring loop's wait records its last tile's arrival (`codegen/trace.py`)
                em.trace_mark_here()
            return True
        case g.SmemDot():
            smem_dot(em, op)
            return True
    return False


def _off(em: Any, buf: Any) -> str:
    """The byte offset in @smem of shared ring `buf` (a `hopper.SmemRef` in the environment)."""
    return str(em.env[buf.id].offset)


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _xor(em: Any, r: str, chunks: int, quad: bool = False) -> str | None:
    """i32 `SmemTile.chunk_xor(r, chunks, quad)` of row `r` (None: no swizzle)."""
    if not _pow2(chunks) or chunks == 1:
        return None
    if quad:
        r4 = em.emit(f"lshr i32 {r}, 2")
        if chunks < 8:
            return em.emit(f"and i32 {r4}, {chunks - 1}")
        x = em.emit(f"or i32 {em.emit(f'shl i32 {r4}, 1')}, {em.emit(f'and i32 {r}, 1')}")
        return em.emit(f"and i32 {x}, 7")
    if chunks >= 8:
        return em.emit(f"and i32 {r}, 7")
    sh = (8 // chunks).bit_length() - 1
    return em.emit(f"and i32 {em.emit(f'lshr i32 {r}, {sh}')}, {chunks - 1}")


def _chunk_addr(em: Any, base: str, r: str, chunk: str, cols: int, quad: bool = False) -> str:
    """ptr addrspace(3) of row `r`, logical chunk `chunk` of a stage at byte `base` whose rows are
    `cols` 16-bit units (2 * cols bytes: an int8 ring's rows count half their elements)."""
    x = _xor(em, r, cols // 8, quad)
    phys = chunk if x is None else em.emit(f"xor i32 {chunk}, {x}")
    off = em.emit(f"add i32 {em.emit(f'mul i32 {r}, {cols * 2}')}, {em.emit(f'shl i32 {phys}, 4')}")
    off = em.emit(f"add i32 {base}, {off}")
    return em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")


def _slab_addr(em: Any, base: str, r: str, chunk: str, rows: int) -> str:
    """ptr addrspace(3) of row `r`, chunk `chunk` of a [rows, 64 k] tile in wgmma's 128-byte swizzle
    (`layouts.Shared(128, "row")`: 64-column slabs of `rows` 128-byte rows, chunk c of row r at c ^ (r % 8))."""
    slab = em.emit(f"lshr i32 {chunk}, 3")
    phys = em.emit(f"xor i32 {em.emit(f'and i32 {chunk}, 7')}, {em.emit(f'and i32 {r}, 7')}")
    off = em.emit(f"add i32 {em.emit(f'mul i32 {slab}, {rows * 128}')}, {em.emit(f'shl i32 {r}, 7')}")
    off = em.emit(f"add i32 {off}, {em.emit(f'shl i32 {phys}, 4')}")
    off = em.emit(f"add i32 {base}, {off}")
    return em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")


def _stage_base(em: Any, buf: str, stage: str, nbytes: int) -> str:
    return em.emit(f"add i32 {buf}, {em.emit(f'mul i32 {stage}, {nbytes}')}")


def cp_async_flat(em: Any, op: g.CpAsyncTile) -> None:
    """The [rows, 1] column at `op.coords` of a tensor whose rows are one element (consecutive in memory) into
    stage `op.stage` of the [rows, 1] ring `op.dst`: chunk c (16 bytes) of the run by thread c % T, copying the
    bytes of its rows inside the tensor (0 to 16: `cp.async`'s source size, the rest zero-filled: the interpreter's
    zeros past the edge). The planner checked the run's start is 16-byte aligned (`pipeline_fma._flat`)."""
    _, rows, _ = op.dst.shape
    item = op.dst.dtype.itemsize
    epc = 16 // item
    total = rows // epc
    info = em.tensors[op.tensor]
    r0, c0 = (em.scalar(v) for v in op.coords)
    base = _stage_base(em, _off(em, op.dst), em.scalar(op.stage), rows * item)
    em.declare("declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)")
    st = em.tensor_strides(info)
    r64, c64 = (em.emit(f"sext i32 {x} to i64") for x in (r0, c0))
    first = em.emit(f"add i64 {em.emit(f'mul i64 {r64}, {st[-2]}')}, {c64}")
    tile_ptr = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {info.base}, i64 {first}")
    col_ok = em.in_bounds(info, [r0, c0])  # (the row checked again below: only the column matters here)
    for c in range(-(-total // em.T)):
        chunk = em.emit(f"add i32 {em.tid0()}, {c * em.T}") if c else em.tid0()
        after = None
        if (c + 1) * em.T > total:
            go, after = em.new_label("fa"), em.new_label("fb")
            em.cbr(em.emit(f"icmp ult i32 {chunk}, {total}"), go, after)
            em.label(go)
        first_row = em.emit(f"add i32 {r0}, {em.emit(f'mul i32 {chunk}, {epc}')}")
        left = em.emit(f"sub i32 {info.dims[0]}, {first_row}")  # rows from the chunk's first to the end
        n = em.emit(f"select i1 {em.emit(f'icmp slt i32 {left}, {epc}')}, i32 {left}, i32 {epc}")
        n = em.emit(f"select i1 {em.emit(f'icmp slt i32 {first_row}, 0')}, i32 0, i32 {n}")
        n = em.emit(f"select i1 {em.emit(f'icmp slt i32 {n}, 0')}, i32 0, i32 {n}")
        if col_ok is not None:
            n = em.emit(f"select i1 {col_ok}, i32 {n}, i32 0")
        inside = em.emit(f"icmp sgt i32 {n}, 0")
        local = em.emit(f"zext i32 {em.emit(f'mul i32 {chunk}, {epc}')} to i64")
        at = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {tile_ptr}, i64 {local}")
        src = em.emit(f"select i1 {inside}, ptr addrspace(1) {at}, ptr addrspace(1) {info.base}")
        to = em.emit(f"add i32 {base}, {em.emit(f'shl i32 {chunk}, 4')}")
        dst = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {to}")
        size = em.emit(f"mul i32 {n}, {item}")
        em.stmt(f"call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) {dst}, ptr addrspace(1) {src}, "
                f"i32 {size})")
        if after is not None:
            em.br(after)
            em.label(after)


def cp_async_tile(em: Any, op: g.CpAsyncTile) -> None:
    """Each thread copies chunks tid, tid + T, ... of the tile (row-major, 16
    bytes each: 8 16-bit elements) into their place in the stage (swizzled in
    a `SmemTile`, in padded rows in a `SmemRows`): unrolled for cp.async, in a
    loop for element copies (a load an element)."""
    if op.transpose:
        fma_dot.cp_async_transposed(em, op)
        return
    if op.flat:
        cp_async_flat(em, op)
        return
    _, rows, pcols = op.dst.shape
    cols = op.cols or pcols
    item = 8 if op.dst.dtype.bits == 64 else op.dst.dtype.itemsize
    cb = min(16, cols * item)  # bytes a chunk: 16, or a narrow ring row's 4 or 8 (`pipeline_fma._chunk_of`)
    epc = cb // item  # elements a chunk
    lg = epc.bit_length() - 1
    cpr = cols // epc
    total = rows * cpr
    info = em.tensors[op.tensor]
    *lead, r0, c0 = (em.scalar(v) for v in op.coords)  # `lead`: a 3-D tensor's matrix (a batched operand)
    base = _stage_base(em, _off(em, op.dst), em.scalar(op.stage), rows * pcols * item)
    lay = em.layouts.get(op.dst.id)
    padded = isinstance(lay, SmemRows)
    slabs = isinstance(lay, Shared)  # wgmma's: 64-column slabs of 128-byte swizzled rows
    quad = isinstance(lay, SmemTile) and lay.quad

    def place(r: str, cc: str) -> str:
        if slabs:
            return _slab_addr(em, base, r, cc, rows)
        if not padded:
            return _chunk_addr(em, base, r, cc, cols * item // 2, quad)
        off = em.emit(f"add i32 {em.emit(f'mul i32 {r}, {pcols * item}')}, {em.emit(f'shl i32 {cc}, {cb.bit_length() - 1}')}")
        return em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {em.emit(f'add i32 {base}, {off}')}")
    assert cb == 16 or (padded and op.vector), "a narrow chunk is a padded ring's cp.async (pipeline_fma)"
    copy_fn = "cp.async.cg.shared.global.16.s" if cb == 16 else f"cp.async.ca.shared.global.{cb}.s"  # (cg: 16 only)
    if op.vector:
        em.declare(f"declare void @llvm.nvvm.{copy_fn}(ptr addrspace(3), ptr addrspace(1), i32)")

    tile_ptr = ""
    if op.vector:
        # The tile's first element, then each chunk at a fixed offset from it
        # (a function of the thread only: hoisted out of the k loop), so a
        # chunk's address is one 64-bit add; a chunk outside the tensor copies
        # 0 bytes from the tensor's base.
        st = em.tensor_strides(info)
        r64, c64 = (em.emit(f"sext i32 {x} to i64") for x in (r0, c0))
        first = em.emit(f"add i64 {em.emit(f'mul i64 {r64}, {st[-2]}')}, {c64}")
        for x, stride in zip(lead, st, strict=False):
            x64 = em.emit(f"sext i32 {x} to i64")
            first = em.emit(f"add i64 {first}, {em.emit(f'mul i64 {x64}, {stride}')}")
        tile_ptr = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {info.base}, i64 {first}")

    def copy(chunk: str, tail: bool, c: int | None = None) -> None:
        after = None
        if tail:
            go, after = em.new_label("ca"), em.new_label("cb")
            em.cbr(em.emit(f"icmp ult i32 {chunk}, {total}"), go, after)
            em.label(go)
        if c is not None and em.T % cpr == 0:  # chunk tid + c T: the thread's column, c T / cpr rows down
            cc = em.emit(f"urem i32 {em.tid0()}, {cpr}")
            r = em.emit(f"add i32 {em.emit(f'udiv i32 {em.tid0()}, {cpr}')}, {c * em.T // cpr}")
        else:
            r = em.emit(f"udiv i32 {chunk}, {cpr}")
            cc = em.emit(f"urem i32 {chunk}, {cpr}")
        row = em.emit(f"add i32 {r0}, {r}")
        col = em.emit(f"add i32 {c0}, {em.emit(f'shl i32 {cc}, {lg}')}")
        dst = place(r, cc)
        if op.vector:
            ok = em.in_bounds(info, [*lead, row, col])
            r_off = em.emit(f"mul i64 {em.emit(f'zext i32 {r} to i64')}, {st[-2]}")
            c_off = em.emit(f"zext i32 {em.emit(f'shl i32 {cc}, {lg}')} to i64")
            local = em.emit(f"add i64 {r_off}, {c_off}")
            at = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {tile_ptr}, i64 {local}")
            src = em.emit(f"select i1 {ok}, ptr addrspace(1) {at}, ptr addrspace(1) {info.base}")
            size = em.emit(f"select i1 {ok}, i32 {cb}, i32 0")
            em.stmt(f"call void @llvm.nvvm.{copy_fn}(ptr addrspace(3) {dst}, ptr addrspace(1) {src}, i32 {size})")
        else:
            vty = f"<{epc} x i{8 * item}>"
            em.stmt(f"store {vty} {_elements(em, info, row, col, lead, epc)}, ptr addrspace(3) {dst}, align 16")
        if after is not None:
            em.br(after)
            em.label(after)

    steps = -(-total // em.T)
    if op.vector or steps == 1:
        for c in range(steps):
            copy(em.emit(f"add i32 {em.tid0()}, {c * em.T}"), (c + 1) * em.T > total, c)
        return

    def body(it: str, cur: list[str]) -> list[str]:
        copy(em.emit(f"add i32 {em.emit(f'mul i32 {it}, {em.T}')}, {em.tid0()}"), total % em.T != 0)
        return []

    em.counted_loop(0, steps, [], body)


def _elements(em: Any, info: Any, row: str, col: str, lead: list[str], epc: int = 8) -> str:
    """<epc x iN>: the `epc` values (16 bytes) at (row, col .. col + epc - 1) (of
    matrix `lead` of a 3-D tensor) as integers of their width, zero outside the
    tensor (each load masked: an outside element reads element (0, 0); none of an empty tensor)."""
    mt = em.mty(info)
    bits = 128 // epc
    it = f"i{bits}"
    meta = ", !invariant.load !0" if info.readonly else ""
    vec = "zeroinitializer"
    ne = em.nonempty(info)  # (no element (0, 0) to read in an empty tensor: zeros, no load; hrev18)
    none = join = ""  # (the labels of the branch on `ne`, where there is one)
    if ne is not None:
        go, none, join = em.new_label("ce"), em.new_label("cz"), em.new_label("cj")
        em.cbr(ne, go, none)
        em.label(go)
    for j in range(epc):
        cj = col if j == 0 else em.emit(f"add i32 {col}, {j}")
        ok = em.in_bounds(info, [*lead, row, cj])
        at = [em.emit(f"select i1 {ok}, i32 {x}, i32 0") for x in (*lead, row, cj)]
        v = em.emit(f"load {mt}, ptr addrspace(1) {em.address(info, at)}, align {em.msize(info)}{meta}")
        if mt == "float" and bits == 16:  # a bf16 tensor held as f32 values: round to bf16 bits
            v = em.emit(f"bitcast bfloat {em.emit(f'fptrunc float {v} to bfloat')} to i16")
        elif mt != it:
            v = em.emit(f"bitcast {mt} {v} to {it}")
        v = em.emit(f"select i1 {ok}, {it} {v}, {it} 0")
        vec = em.emit(f"insertelement <{epc} x {it}> {vec}, {it} {v}, i32 {j}")
    return em.join_or(ne, f"<{epc} x {it}>", vec, "zeroinitializer", none, join)  # type: ignore[no-any-return]


class _Fragments:
    """ldmatrix + mma.sync of one `SmemDot`: this lane's fragment addresses
    (computed once), the fragments of one k16 step of a stage, the mmas."""

    def __init__(self, em: Any, op: g.SmemDot) -> None:
        self.em, self.op = em, op
        a, r = op.a, op.result
        self.S, self.M, self.K = a.shape
        self.N = r.shape[1]
        lay = em.layouts.get(r.id)
        assert isinstance(lay, MmaTile), lay
        self.int8 = a.dtype in (DType.I8, DType.U8)
        self.quad = lay.split16  # an int8 [K, N] B: even / odd column tiles (`MmaTile.split16`)
        self.item = a.dtype.itemsize
        self.KS = 32 if self.int8 else 16  # k of one mma
        self.K16, self.N16 = self.K * self.item // 2, self.N * self.item // 2  # rows in 16-bit units
        wm, wn = lay.warps_m, lay.warps_n
        WM, WN = self.M // wm, self.N // wn
        self.MT, self.NT = WM // 16, WN // 8
        self.a_off, self.b_off = _off(em, a), _off(em, op.b)
        lane = em.emit(f"and i32 {em.tid0()}, 31")
        warp = em.emit(f"lshr i32 {em.tid0()}, 5")
        wm_i = em.emit(f"udiv i32 {warp}, {wn}")
        wn_i = em.emit(f"urem i32 {warp}, {wn}")
        self.l8 = em.emit(f"and i32 {lane}, 7")
        m4 = em.emit(f"lshr i32 {lane}, 3")  # which of the four 8x8 matrices this lane addresses
        self.m_lo = em.emit(f"and i32 {m4}, 1")
        self.m_hi = em.emit(f"lshr i32 {m4}, 1")
        self.hi8 = em.emit(f"shl i32 {self.m_hi}, 3")
        self.a_in = em.emit(f"add i32 {self.l8}, {em.emit(f'shl i32 {self.m_lo}, 3')}")  # row within a 16-row tile
        self.a_row0 = em.emit(f"add i32 {em.emit(f'mul i32 {wm_i}, {WM}')}, {self.a_in}")
        self.n0 = em.emit(f"mul i32 {wn_i}, {WN}")
        if self.quad:  # k row of this lane's ldmatrix.trans address: 16 (m / 2) + 2 (m % 2) + 4 (r / 2) + r % 2
            half = em.emit(f"lshr i32 {self.l8}, 1")
            lo = em.emit(f"add i32 {em.emit(f'and i32 {self.l8}, 1')}, {em.emit(f'shl i32 {half}, 2')}")
            self.q_row = em.emit(f"add i32 {lo}, {em.emit(f'add i32 {self.hi8}, {self.hi8}')}")
            self.q_row = em.emit(f"add i32 {self.q_row}, {em.emit(f'shl i32 {self.m_lo}, 1')}")
        self.cty = "float"
        if self.int8:
            self.mma_name = f"llvm.nvvm.mma.m16n8k32.row.col.{'s8' if a.dtype is DType.I8 else 'u8'}"
            self.fty, self.cty = "i32", "i32"
            em.declare("declare i32 @llvm.nvvm.prmt(i32, i32, i32)")
        elif a.dtype is DType.F16:
            self.mma_name, self.fty = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", "<2 x half>"
        else:
            self.mma_name, self.fty = "llvm.nvvm.mma.m16n8k16.row.col.bf16", "i32"
        c4 = ", ".join([self.cty] * 4)
        em.declare(f"declare {{ {c4} }} @{self.mma_name}({', '.join([self.fty] * 6)}, {c4})")
        for name in (_X4, _X4T):
            em.declare(f"declare {{ i32, i32, i32, i32 }} @{name}(ptr addrspace(3))")

    def _ld(self, name: str, ptr: str) -> list[str]:
        em = self.em
        v = em.call("{ i32, i32, i32, i32 }", name, f"ptr addrspace(3) {ptr}")
        regs = [em.emit(f"extractvalue {{ i32, i32, i32, i32 }} {v}, {i}") for i in range(4)]
        return regs if self.fty == "i32" else [em.emit(f"bitcast i32 {x} to {self.fty}") for x in regs]

    def count(self) -> int:
        """Registers of one k step's fragments (A's MT x4, then B's NT / 2 x4)."""
        return 4 * self.MT + 2 * self.NT

    def load(self, kk: int, stage: str) -> list[str]:
        """The fragments of k step `kk` (16 f16/bf16 or 32 int8 values of k: two 16-byte chunks of
        a row) of stage `stage` (an i32 register)."""
        em, op = self.em, self.op
        a_base = _stage_base(em, self.a_off, stage, self.M * self.K * self.item)
        b_base = _stage_base(em, self.b_off, stage, self.K * self.N * self.item)
        regs: list[str] = []
        for mi in range(self.MT):
            row = self.a_row0 if mi == 0 else em.emit(f"add i32 {self.a_row0}, {16 * mi}")
            chunk = em.emit(f"add i32 {self.m_hi}, {2 * kk}")
            regs += self._ld(_X4, _chunk_addr(em, a_base, row, chunk, self.K16))
        for npair in range(self.NT // 2):
            if op.b_nk:  # [N, K]: rows are n, chunks along k
                row = em.emit(f"add i32 {self.n0}, {em.emit(f'add i32 {self.l8}, {self.hi8}')}")
                if npair:
                    row = em.emit(f"add i32 {row}, {16 * npair}")
                chunk = em.emit(f"add i32 {self.m_lo}, {2 * kk}")
                regs += self._ld(_X4, _chunk_addr(em, b_base, row, chunk, self.K16))
            elif self.quad:  # int8 [K, N]: k rows 4i + j + {0, 1} of 16 columns (a 16-byte chunk)
                row = self.q_row if not kk else em.emit(f"add i32 {self.q_row}, {32 * kk}")
                nchunk = em.emit(f"add i32 {em.emit(f'lshr i32 {self.n0}, 4')}, {npair}")
                regs += self._ld(_X4T, _chunk_addr(em, b_base, row, nchunk, self.N16, quad=True))
            else:  # [K, N]: rows are k, chunks along n
                row = self.a_in if not kk else em.emit(f"add i32 {self.a_in}, {16 * kk}")
                nchunk = em.emit(f"add i32 {em.emit(f'lshr i32 {self.n0}, 3')}, "
                                 f"{em.emit(f'add i32 {self.m_hi}, {2 * npair}')}")
                regs += self._ld(_X4T, _chunk_addr(em, b_base, row, nchunk, self.N))
        return regs

    def mma(self, frags: list[str], acc: list[str]) -> None:
        """acc += the k step whose fragments are `frags` (in place)."""
        em = self.em
        a_frags = [frags[4 * mi:4 * mi + 4] for mi in range(self.MT)]
        b = frags[4 * self.MT:]
        if self.quad:  # the x4.trans registers r0..r3 of a pair: each byte of r0 | r1 << 32 picked
            b_frags = []
            for p in range(self.NT // 2):
                r = b[4 * p:4 * p + 4]
                for sel in (0x6420, 0x7531):  # the even columns' k bytes, then the odd columns'
                    b_frags.append([em.emit(f"call i32 @llvm.nvvm.prmt(i32 {x}, i32 {y}, i32 {sel})")
                                    for x, y in ((r[0], r[1]), (r[2], r[3]))])
        else:
            b_frags = [b[2 * ni:2 * ni + 2] for ni in range(self.NT)]
        ty = f"{{ {', '.join([self.cty] * 4)} }}"
        for mi in range(self.MT):
            for ni in range(self.NT):
                if self.quad:  # registers (mi, p, h, c), C fragment j at c = 2j + (ni % 2)
                    base = (mi * (self.NT // 2) + ni // 2) * 8 + ni % 2
                    ix = [base, base + 2, base + 4, base + 6]
                else:
                    s = (mi * self.NT + ni) * 4
                    ix = [s, s + 1, s + 2, s + 3]
                args = ", ".join([f"{self.fty} {x}" for x in (*a_frags[mi], *b_frags[ni])]
                                 + [f"{self.cty} {acc[i]}" for i in ix])
                d = em.call(ty, self.mma_name, args)
                for n, i in enumerate(ix):
                    acc[i] = em.emit(f"extractvalue {ty} {d}, {n}")


_X4 = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
_X4T = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"


def prefetch_init(em: Any, op: g.SmemDot) -> tuple[list[str], list[str]]:
    """In a loop's preheader: (types, registers) of the fragments of stage 0's
    first k16 step, the first iteration's carried fragments of a prefetching
    `SmemDot` in the loop's body."""
    f = _Fragments(em, op)
    regs = f.load(0, "0")
    return [f.fty] * len(regs), regs


def smem_dot(em: Any, op: g.SmemDot) -> None:
    f = _Fragments(em, op)
    acc = list(em.tile(op.acc))
    assert len(acc) == f.MT * f.NT * 4, (len(acc), f.MT, f.NT)
    stage = em.scalar(op.stage)
    KK = f.K // f.KS
    if op.prefetch < 0:
        for kk in range(KK):
            f.mma(f.load(kk, stage), acc)
        em.env[op.result.id] = acc
        return
    cur = em.loop_carried_in(op)  # this iteration's first k16 step, loaded by the previous one
    for kk in range(KK):
        if kk + 1 < KK:
            nxt = f.load(kk + 1, stage)
        else:  # the next stage: wait for its copies, and every warp is done with the stage it replaces
            em.declare("declare void @llvm.nvvm.cp.async.wait.group(i32)")
            em.stmt(f"call void @llvm.nvvm.cp.async.wait.group(i32 {op.prefetch})")
            em.barrier()
            up = em.emit(f"add i32 {stage}, 1")
            nstage = em.emit(f"select i1 {em.emit(f'icmp eq i32 {up}, {f.S}')}, i32 0, i32 {up}")
            nxt = f.load(0, nstage)
            em.loop_carried_out(op, nxt)
        f.mma(cur, acc)
        cur = nxt
    em.env[op.result.id] = acc


__all__ = ["cp_async_tile", "emit_op", "prefetch_init", "smem_dot"]
