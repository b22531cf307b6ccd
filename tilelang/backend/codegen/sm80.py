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
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType

from ..gpu import nodes as g
from ..gpu.layouts import MmaTile


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
        case g.CpAsyncWait(pending=n):
            em.declare("declare void @llvm.nvvm.cp.async.wait.group(i32)")
            em.stmt(f"call void @llvm.nvvm.cp.async.wait.group(i32 {n})")
            em.barrier()
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


def _xor(em: Any, r: str, chunks: int) -> str | None:
    """i32 `SmemTile.chunk_xor(r, chunks)` of row `r` (None: no swizzle)."""
    if not _pow2(chunks) or chunks == 1:
        return None
    if chunks >= 8:
        return em.emit(f"and i32 {r}, 7")
    sh = (8 // chunks).bit_length() - 1
    return em.emit(f"and i32 {em.emit(f'lshr i32 {r}, {sh}')}, {chunks - 1}")


def _chunk_addr(em: Any, base: str, r: str, chunk: str, cols: int) -> str:
    """ptr addrspace(3) of row `r`, logical chunk `chunk` of a stage at byte `base`."""
    x = _xor(em, r, cols // 8)
    phys = chunk if x is None else em.emit(f"xor i32 {chunk}, {x}")
    off = em.emit(f"add i32 {em.emit(f'mul i32 {r}, {cols * 2}')}, {em.emit(f'shl i32 {phys}, 4')}")
    off = em.emit(f"add i32 {base}, {off}")
    return em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")


def _stage_base(em: Any, buf: str, stage: str, nbytes: int) -> str:
    return em.emit(f"add i32 {buf}, {em.emit(f'mul i32 {stage}, {nbytes}')}")


def cp_async_tile(em: Any, op: g.CpAsyncTile) -> None:
    """Each thread copies chunks tid, tid + T, ... of the tile (row-major, 8
    elements each) into their swizzled place in the stage: unrolled for
    cp.async, in a loop for element copies (eight loads a chunk)."""
    _, rows, cols = op.dst.shape
    cpr = cols // 8
    total = rows * cpr
    info = em.tensors[op.tensor]
    r0, c0 = (em.scalar(v) for v in op.coords)
    base = _stage_base(em, _off(em, op.dst), em.scalar(op.stage), rows * cols * 2)
    if op.vector:
        em.declare("declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)")

    def copy(chunk: str, tail: bool) -> None:
        after = None
        if tail:
            go, after = em.new_label("ca"), em.new_label("cb")
            em.cbr(em.emit(f"icmp ult i32 {chunk}, {total}"), go, after)
            em.label(go)
        r = em.emit(f"udiv i32 {chunk}, {cpr}")
        cc = em.emit(f"urem i32 {chunk}, {cpr}")
        row = em.emit(f"add i32 {r0}, {r}")
        col = em.emit(f"add i32 {c0}, {em.emit(f'shl i32 {cc}, 3')}")
        dst = _chunk_addr(em, base, r, cc, cols)
        if op.vector:
            ok = em.in_bounds(info, [row, col])
            srow = em.emit(f"select i1 {ok}, i32 {row}, i32 0")
            scol = em.emit(f"select i1 {ok}, i32 {col}, i32 0")
            src = em.address(info, [srow, scol])
            size = em.emit(f"select i1 {ok}, i32 16, i32 0")
            em.stmt(f"call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) {dst}, "
                    f"ptr addrspace(1) {src}, i32 {size})")
        else:
            em.stmt(f"store <8 x i16> {_elements(em, info, row, col)}, ptr addrspace(3) {dst}, align 16")
        if after is not None:
            em.br(after)
            em.label(after)

    steps = -(-total // em.T)
    if op.vector or steps == 1:
        for c in range(steps):
            copy(em.emit(f"add i32 %tid, {c * em.T}"), (c + 1) * em.T > total)
        return

    def body(it: str, cur: list[str]) -> list[str]:
        copy(em.emit(f"add i32 {em.emit(f'mul i32 {it}, {em.T}')}, %tid"), total % em.T != 0)
        return []

    em.counted_loop(0, steps, [], body)


def _elements(em: Any, info: Any, row: str, col: str) -> str:
    """<8 x i16>: the 16-bit values at (row, col .. col + 7), zero outside the
    tensor (each load masked: an outside element reads element (0, 0))."""
    mt = em.mty(info)
    meta = ", !invariant.load !0" if info.readonly else ""
    vec = "zeroinitializer"
    for j in range(8):
        cj = col if j == 0 else em.emit(f"add i32 {col}, {j}")
        ok = em.in_bounds(info, [row, cj])
        sr = em.emit(f"select i1 {ok}, i32 {row}, i32 0")
        sc = em.emit(f"select i1 {ok}, i32 {cj}, i32 0")
        v = em.emit(f"load {mt}, ptr addrspace(1) {em.address(info, [sr, sc])}, align {em.msize(info)}{meta}")
        if mt == "float":  # a bf16 tensor held as f32 values: round to bf16 bits
            v = em.emit(f"bitcast bfloat {em.emit(f'fptrunc float {v} to bfloat')} to i16")
        else:
            v = em.emit(f"bitcast {mt} {v} to i16")
        v = em.emit(f"select i1 {ok}, i16 {v}, i16 0")
        vec = em.emit(f"insertelement <8 x i16> {vec}, i16 {v}, i32 {j}")
    return vec


def smem_dot(em: Any, op: g.SmemDot) -> None:
    a, b, r = op.a, op.b, op.result
    _, M, K = a.shape
    N = r.shape[1]
    lay = em.layouts.get(r.id)
    assert isinstance(lay, MmaTile), lay
    wm, wn = lay.warps_m, lay.warps_n
    WM, WN = M // wm, N // wn
    MT, NT = WM // 16, WN // 8
    stage = em.scalar(op.stage)
    a_base = _stage_base(em, _off(em, a), stage, M * K * 2)
    b_base = _stage_base(em, _off(em, b), stage, K * N * 2)
    lane = em.emit("and i32 %tid, 31")
    warp = em.emit("lshr i32 %tid, 5")
    wm_i = em.emit(f"udiv i32 {warp}, {wn}")
    wn_i = em.emit(f"urem i32 {warp}, {wn}")
    l8 = em.emit(f"and i32 {lane}, 7")
    m4 = em.emit(f"lshr i32 {lane}, 3")  # which of the four 8x8 matrices this lane addresses
    m_lo = em.emit(f"and i32 {m4}, 1")
    m_hi = em.emit(f"lshr i32 {m4}, 1")
    # A rows of this lane (per mi) and its chunk offset within a k16 step
    lo8 = em.emit(f"shl i32 {m_lo}, 3")
    hi8 = em.emit(f"shl i32 {m_hi}, 3")
    a_in = em.emit(f"add i32 {l8}, {lo8}")  # this lane's row within a 16-row tile
    a_row0 = em.emit(f"add i32 {em.emit(f'mul i32 {wm_i}, {WM}')}, {a_in}")
    n0 = em.emit(f"mul i32 {wn_i}, {WN}")
    dt = a.dtype
    if dt is DType.F16:
        mma_name, fty = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", "<2 x half>"
    else:
        mma_name, fty = "llvm.nvvm.mma.m16n8k16.row.col.bf16", "i32"
    em.declare(f"declare {{ float, float, float, float }} @{mma_name}({', '.join([fty] * 6)}, "
               "float, float, float, float)")
    x4 = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
    x4t = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
    for name in (x4, x4t):
        em.declare(f"declare {{ i32, i32, i32, i32 }} @{name}(ptr addrspace(3))")

    def ld(name: str, ptr: str) -> list[str]:
        v = em.call("{ i32, i32, i32, i32 }", name, f"ptr addrspace(3) {ptr}")
        regs = [em.emit(f"extractvalue {{ i32, i32, i32, i32 }} {v}, {i}") for i in range(4)]
        return regs if fty == "i32" else [em.emit(f"bitcast i32 {x} to {fty}") for x in regs]

    acc = list(em.tile(op.acc))
    assert len(acc) == MT * NT * 4, (len(acc), MT, NT)
    for kk in range(K // 16):
        a_frags = []
        for mi in range(MT):
            row = a_row0 if mi == 0 else em.emit(f"add i32 {a_row0}, {16 * mi}")
            chunk = em.emit(f"add i32 {m_hi}, {2 * kk}")
            a_frags.append(ld(x4, _chunk_addr(em, a_base, row, chunk, K)))
        b_frags: list[list[str]] = []
        for npair in range(NT // 2):
            if op.b_nk:  # [N, K]: rows are n, chunks along k
                row = em.emit(f"add i32 {n0}, {em.emit(f'add i32 {l8}, {hi8}')}")
                if npair:
                    row = em.emit(f"add i32 {row}, {16 * npair}")
                chunk = em.emit(f"add i32 {m_lo}, {2 * kk}")
                regs = ld(x4, _chunk_addr(em, b_base, row, chunk, K))
            else:  # [K, N]: rows are k, chunks along n
                row = a_in
                if kk:
                    row = em.emit(f"add i32 {row}, {16 * kk}")
                nchunk = em.emit(f"add i32 {em.emit(f'lshr i32 {n0}, 3')}, {em.emit(f'add i32 {m_hi}, {2 * npair}')}")
                regs = ld(x4t, _chunk_addr(em, b_base, row, nchunk, N))
            b_frags += [regs[0:2], regs[2:4]]
        for mi in range(MT):
            for ni in range(NT):
                s = (mi * NT + ni) * 4
                args = ", ".join([f"{fty} {x}" for x in (*a_frags[mi], *b_frags[ni])]
                                 + [f"float {x}" for x in acc[s:s + 4]])
                d = em.call("{ float, float, float, float }", mma_name, args)
                acc[s:s + 4] = [em.emit(f"extractvalue {{ float, float, float, float }} {d}, {i}") for i in range(4)]
    em.env[r.id] = acc


__all__ = ["cp_async_tile", "emit_op", "smem_dot"]
