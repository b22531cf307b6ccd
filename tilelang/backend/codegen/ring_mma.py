"""Code generation of `RingMma` (`passes/pipeline_products.py`): `result = acc + a @ b` by
`mma.sync.m16n8k16`, the result and accumulator in the `AccTile` layout, B (and A where it is a loaded tile)
read from `SmemTile` buffers by `ldmatrix` (`codegen/sm80.py`'s addressing, one warp owning all N columns of
its M / W rows), A otherwise from registers.

An `AccTile` [M, K] value's slots are (mi, ni, h, j): rows 16 mi + l/4 + 8 h, columns 8 ni + 2 (l % 4) + j of
the warp's block. The A fragment of k16 step kk of row block mi is (row g, k 2q..2q+1), (g + 8, 2q..),
(g, 2q + 8..), (g + 8, 2q + 8..): slots (mi, 2 kk, 0, *), (mi, 2 kk, 1, *), (mi, 2 kk + 1, 0, *),
(mi, 2 kk + 1, 1, *), i.e. the 8 slots from (mi * K / 8 + 2 kk) * 4 on, packed two to 32 bits
(`wgmma_rs._pack`: a product's f32 result rounded to 16 bits is the next product's A).

With `AccTile.cols` = C > 1 warp w computes the columns [c N / C, (c + 1) N / C) of c = w / W of its rows (those of
w % W): its B fragments are those columns' (ldmatrix rows or chunks offset by c N / C), and its A is read whole
from shared memory, where an A the body computes was written by `AccToSmem` (`acc_to_smem`: each thread's
pairs at their swizzled places, one 4-byte store a pair), since its columns are in the C warps of its rows.
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType

from ..gpu import nodes as g
from ..gpu.layouts import AccTile, Shared
from .sm80 import _X4, _X4T, _chunk_addr, _off, _slab_addr, _stage_base
from .wgmma_rs import _pack


def emit_op(em: Any, op: object) -> bool:
    if isinstance(op, g.RingMma):
        ring_mma(em, op)
        return True
    if isinstance(op, g.AccToSmem):
        acc_to_smem(em, op)
        return True
    return False


def wgmma_descs(em: Any, op: g.Wgmma, nw: int) -> tuple[str, str, Shared, Shared]:
    """The descriptors of a products-pipeline `Wgmma` whose warpgroups split the columns (`AccTile.cols`, one
    warpgroup of rows: each reads all of A's 64 rows) and its operands' layouts: B's moved to this warpgroup's
    `nw` columns (K-major B, stored [N, K]: `nw` rows of `swizzle` bytes in each slab; MN-major: whole slabs)."""
    sa, sb = em.layouts[op.a.id], em.layouts[op.b.id]
    assert isinstance(sa, Shared) and isinstance(sb, Shared)
    desc_a = em.operand_desc(op.a, op.a_stage if op.a_stage is not None else op.stage, op.a_kmajor, sa.swizzle)
    _, rb, _ = op.b.shape
    assert op.b_kmajor or nw % 64 == 0, nw
    step = nw * sb.swizzle if op.b_kmajor else nw // 64 * rb * 128
    part = em.emit(f"lshr i32 {em.role_tid}, 7")
    # the part's offset goes into the 32-bit address field before the constant fields are or-ed in: added to the
    # 64-bit descriptor (`add i64 desc, zext off`), ptxas 13 built B's high word (SBO, swizzle) as 0 (SASS:
    # `UIMAD.WIDE.U32 UR14, part, 0x100, addr:URZ` and no 0x40000040), which llsim, reading the LLVM IR, cannot see
    desc_b = em.operand_desc(op.b, op.stage, op.b_kmajor, sb.swizzle, em.emit(f"mul i32 {part}, {step >> 4}"))
    return desc_a, desc_b, sa, sb


def acc_to_smem(em: Any, op: g.AccToSmem) -> None:
    view = em.lay(op.value)
    _, M, K = op.buf.shape
    assert view.rdim is not None and view.cdim is not None and (view.M, view.N) == (M, K), (view, op.buf.shape)
    ty = {DType.F16: "half", DType.BF16: "bfloat"}[op.buf.dtype]
    regs = em.tile(op.value)
    base = _off(em, op.buf)
    q4 = em.emit(f"shl i32 {em.emit(f'and i32 {em.tid0()}, 3')}, 2")  # the pair's byte in its 16-byte chunk
    slabs = isinstance(em.layouts.get(op.buf.id), Shared)  # wgmma's A: 64-column slabs, 128-byte swizzle
    for k in range(view.K):
        row, col = view._rc(em, k, 0)
        chunk = em.emit(f"lshr i32 {col}, 3")
        at = _slab_addr(em, base, row, chunk, M) if slabs else _chunk_addr(em, base, row, chunk, K)
        at = em.emit(f"getelementptr i8, ptr addrspace(3) {at}, i32 {q4}")
        lo, hi = regs[2 * k], regs[2 * k + 1]
        if op.value.dtype is DType.F32:
            word = _pack(em, lo, hi, ty)
        else:
            v = em.emit(f"insertelement <2 x {ty}> undef, {ty} {lo}, i32 0")
            word = em.emit(f"bitcast <2 x {ty}> {em.emit(f'insertelement <2 x {ty}> {v}, {ty} {hi}, i32 1')} to i32")
        em.stmt(f"store i32 {word}, ptr addrspace(3) {at}, align 4")
    if slabs:
        em.proxy_fence()  # wgmma (the async proxy) reads them after the barrier
    if op.barrier:
        em.barrier()


def ring_mma(em: Any, op: g.RingMma) -> None:
    lay = em.layouts.get(op.result.id)
    assert isinstance(lay, AccTile), lay
    M, N = op.result.shape
    in_dt = op.b.dtype
    smem_a = op.a_stage is not None
    K = op.a.shape[-1]
    W, C = lay.warps, lay.cols
    WM, NW = M // W, N // C
    MT, NT = WM // 16, NW // 8
    assert WM % 16 == 0 and NW % 16 == 0 and K % 16 == 0, (M, N, K, W, C)
    assert smem_a or C == 1, "an A in registers with the columns in several warps"
    if in_dt is DType.F16:
        name, fty, hty = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32", "<2 x half>", "half"
    else:
        name, fty, hty = "llvm.nvvm.mma.m16n8k16.row.col.bf16", "i32", "bfloat"
    em.declare(f"declare {{ float, float, float, float }} @{name}({', '.join([fty] * 6)}, "
               "float, float, float, float)")
    for x in (_X4, _X4T):
        em.declare(f"declare {{ i32, i32, i32, i32 }} @{x}(ptr addrspace(3))")

    def ld(which: str, ptr: str) -> list[str]:
        v = em.call("{ i32, i32, i32, i32 }", which, f"ptr addrspace(3) {ptr}")
        return [em.emit(f"extractvalue {{ i32, i32, i32, i32 }} {v}, {i}") for i in range(4)]

    def typed(regs: list[str]) -> list[str]:
        return regs if fty == "i32" else [em.emit(f"bitcast i32 {x} to {fty}") for x in regs]

    lane = em.emit(f"and i32 {em.tid0()}, 31")
    warp = em.emit(f"lshr i32 {em.tid0()}, 5")
    n0 = "0"  # the warp's first column (C > 1)
    if C > 1:
        n0 = em.emit(f"mul i32 {em.emit(f'udiv i32 {warp}, {W}')}, {NW}")
        warp = em.emit(f"urem i32 {warp}, {W}")
    l8 = em.emit(f"and i32 {lane}, 7")
    m4 = em.emit(f"lshr i32 {lane}, 3")
    m_lo = em.emit(f"and i32 {m4}, 1")
    m_hi = em.emit(f"lshr i32 {m4}, 1")
    hi8 = em.emit(f"shl i32 {m_hi}, 3")
    a_in = em.emit(f"add i32 {l8}, {em.emit(f'shl i32 {m_lo}, 3')}")  # row within a 16-row tile
    b_stage = em.scalar(op.stage)
    _, br, bc = op.b.shape
    b_base = _stage_base(em, _off(em, op.b), b_stage, br * bc * 2)
    if smem_a:
        a_base = _stage_base(em, _off(em, op.a), em.scalar(op.a_stage), M * K * 2)
        a_row0 = em.emit(f"add i32 {em.emit(f'mul i32 {warp}, {WM}')}, {a_in}")
    else:
        la = em.layouts.get(op.a.id)
        assert isinstance(la, AccTile) and la.warps == W, la
        a_regs = em.tile(op.a)
        assert len(a_regs) == MT * (K // 8) * 4, (len(a_regs), MT, K)
        ty = hty if op.dtype is None else {DType.F16: "half", DType.BF16: "bfloat"}[op.dtype]

    def a_frag(mi: int, kk: int) -> list[str]:
        if smem_a:
            row = a_row0 if mi == 0 else em.emit(f"add i32 {a_row0}, {16 * mi}")
            chunk = em.emit(f"add i32 {m_hi}, {2 * kk}")
            return typed(ld(_X4, _chunk_addr(em, a_base, row, chunk, K)))
        s = (mi * (K // 8) + 2 * kk) * 4
        regs = [_pack(em, a_regs[s + 2 * i], a_regs[s + 2 * i + 1], ty) for i in range(4)]
        return typed(regs)

    def b_frags(kk: int) -> list[list[str]]:
        out: list[list[str]] = []
        for npair in range(NT // 2):
            if op.b_nk:  # [N, K]: rows are n, chunks along k
                row = em.emit(f"add i32 {l8}, {hi8}")
                if npair:
                    row = em.emit(f"add i32 {row}, {16 * npair}")
                if C > 1:
                    row = em.emit(f"add i32 {row}, {n0}")
                chunk = em.emit(f"add i32 {m_lo}, {2 * kk}")
                regs = typed(ld(_X4, _chunk_addr(em, b_base, row, chunk, K)))
            else:  # [K, N]: rows are k, chunks along n
                row = a_in if not kk else em.emit(f"add i32 {a_in}, {16 * kk}")
                chunk = em.emit(f"add i32 {m_hi}, {2 * npair}")
                if C > 1:
                    chunk = em.emit(f"add i32 {chunk}, {em.emit(f'lshr i32 {n0}, 3')}")
                regs = typed(ld(_X4T, _chunk_addr(em, b_base, row, chunk, N)))
            out += [regs[0:2], regs[2:4]]
        return out

    acc = list(em.tile(op.acc))
    assert len(acc) == MT * NT * 4, (len(acc), MT, NT)
    for kk in range(K // 16):
        bf = b_frags(kk)
        for mi in range(MT):
            af = a_frag(mi, kk)
            for ni in range(NT):
                s = (mi * NT + ni) * 4
                args = ", ".join([f"{fty} {x}" for x in (*af, *bf[ni])] + [f"float {x}" for x in acc[s:s + 4]])
                d = em.call("{ float, float, float, float }", name, args)
                acc[s:s + 4] = [em.emit(f"extractvalue {{ float, float, float, float }} {d}, {i}") for i in range(4)]
    em.env[op.result.id] = acc


__all__ = ["emit_op", "ring_mma"]
