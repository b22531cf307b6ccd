"""`g.AccColumns`: a wide GEMM accumulator's columns of one user tile (its registers). `g.AccLoad`: a tile the Hopper GEMM epilogue reads (a bias vector, a residual tile), loaded straight
into the accumulator's layout (`WgmmaAcc`): each consumer thread loads the elements of its own
accumulator registers, so the epilogue's arithmetic pairs registers and nothing moves between threads
(a broadcast through shared memory would need a CTA barrier the producer warpgroup never reaches).
`g.AccIndex`: an `arange` the epilogue broadcasts, each register's row or column (one value a distinct one).

Register `reg` of consumer thread `t` (warpgroup g = t / 128, warp w, lane l) holds accumulator element
(row, col) = (g * m + 64 mb + 16 w + l / 4 + 8 [q >= 2], 8 i + 2 (l % 4) + q % 2) with (mb, i, q) from
`reg` (`layouts.WgmmaAcc.coords`). A row (column) vector's element is loaded once per distinct row
(column) a thread holds. Loads past the tensor's edge give zeros, the interpreter's rule. Columns 2 (l % 4)
+ 8 i and the next are one load of both where they are 1- or 2-byte elements of the contiguous dim and the
launch's facts make every such pair wholly inside or outside the tensor and aligned (`_pair`, hcliff13).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.llvm_types import const_operand, reg_ty
from tilelang.backend.env_switch import flag
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import WgmmaAcc


def emit_op(em: Any, op: object) -> bool:
    if isinstance(op, g.AccColumns):  # the registers of columns [part N, (part + 1) N) of each m64 block
        regs = em.tile(op.x)
        lay = em.layouts[op.x.id]
        assert isinstance(lay, WgmmaAcc)
        blocks = lay.m_per_group // 64
        per = len(regs) // blocks  # registers of a block's whole row of columns
        n = per // op.parts
        em.env[op.result.id] = [r for mb in range(blocks) for r in regs[mb * per + op.part * n:mb * per + (op.part + 1) * n]]
        return True
    if isinstance(op, g.AccIndex):
        return _index(em, op)
    if not isinstance(op, g.AccLoad):
        return False
    lay = em.layouts[op.result.id]
    assert isinstance(lay, WgmmaAcc)
    ld = op.load
    info = em.tensors[ld.tensor]
    dt = info.param.dtype
    mt, es = em.mty(info), em.msize(info)
    _, N = op.result.shape
    offsets = [em.scalar(o) for o in ld.offsets]
    row0, col0 = _first(em, lay)
    zero = const_operand(dt, 0)
    got: dict[tuple[int | None, int | None], str] = {}
    out = []
    # a thread's registers 4i + {0, 1} (and 4i + {2, 3}) are two adjacent columns of a row: where the columns
    # are the tensor's contiguous dim and the facts say a pair is wholly in or out, one load of a pair of 1- or
    # 2-byte elements (one register until used: l12's f16 residual in a 128 x 256 epilogue, 52 -> 4 B spilled,
    # 7,224 -> 6,944 SASS; pairs of f32, no register saved, spilled 184 B there: not taken)
    pairs = (op.dims[1] == len(offsets) - 1 and pairs_enabled() and es <= 2
             and _aligned(em, info, ld.offsets[-1]))

    def coords_of(dr: int, dc: int) -> list[str]:
        coords = []
        for d, off in enumerate(offsets):
            c = "0"
            if d == op.dims[0]:
                c = row0 if dr == 0 else em.emit(f"add i32 {row0}, {dr}")
            elif d == op.dims[1]:
                c = col0 if dc == 0 else em.emit(f"add i32 {col0}, {dc}")
            coords.append(off if c == "0" else em.emit(f"add i32 {off}, {c}"))
        return coords

    def one(coords: list[str]) -> str:
        ok = em.in_bounds(info, coords)
        addr = em.address(info, coords)
        yes, no, join = em.new_label("al"), em.new_label("an"), em.new_label("aj")
        em.cbr(ok or "true", yes, no)
        em.label(yes)
        x = em.mem_to_reg(em.emit(f"load {mt}, ptr addrspace(1) {addr}, align {es}"), dt, mt)
        return em.join_or(ok or "true", reg_ty(dt), x, zero, no, join)

    for reg, (dr, dc) in enumerate(_steps(lay, N)):
        key = (dr if op.dims[0] is not None else None, dc if op.dims[1] is not None else None)
        if key not in got:
            coords = coords_of(dr, dc)
            if pairs and reg % 2 == 0:
                got[key], got[(key[0], dc + 1)] = _pair(em, info, coords)
            else:
                got[key] = one(coords)
        out.append(got[key])
    em.env[op.result.id] = out
    return True


def pairs_enabled() -> bool:
    """`TILEC_ACC_PAIRS` (unset or "1": a thread's two adjacent 1- or 2-byte columns by one load, `_pair`; "0":
    an element a load, as before hcliff13: an A/B switch)."""
    return flag("TILEC_ACC_PAIRS", "1")


def _aligned(em: Any, info: Any, col_off: Any) -> bool:
    """Whether every pair lies wholly inside the tensor or wholly outside it and is aligned to its size: the
    tensor's base 16-byte aligned, its dims after the first multiples of 16 (the row strides and the last dim
    even), the tile's column offset even (a pair's first column is 2 (lane % 4) + 8 i past it)."""
    f = info.facts
    m = em.multiple_of(col_off)
    return f.aligned16 and len(f.dims_div16) == info.param.rank and all(f.dims_div16[1:]) and m % 2 == 0


def _pair(em: Any, info: Any, coords: list[str]) -> tuple[str, str]:
    """The elements at `coords` and one column on, by one load where the pair is inside the tensor (zeros
    outside, the interpreter's rule): `_aligned` holds, so the first element's bounds test is the pair's."""
    dt = info.param.dtype
    mt, es = em.mty(info), em.msize(info)
    vt = f"<2 x {mt}>"
    ok = em.in_bounds(info, coords, 2)
    addr = em.address(info, coords)
    yes, no, join = em.new_label("ap"), em.new_label("an"), em.new_label("aj")
    em.cbr(ok or "true", yes, no)
    em.label(yes)
    v = em.emit(f"load {vt}, ptr addrspace(1) {addr}, align {2 * es}")
    v = em.join_or(ok or "true", vt, v, "zeroinitializer", no, join)
    a, b = (em.mem_to_reg(em.emit(f"extractelement {vt} {v}, i32 {j}"), dt, mt) for j in range(2))
    return a, b


def _first(em: Any, lay: WgmmaAcc) -> tuple[str, str]:
    """The row and column of this thread's first register (`WgmmaAcc.coords` at register 0)."""
    t = em.role_tid
    group = em.emit(f"lshr i32 {t}, 7")
    gt = em.emit(f"and i32 {t}, 127")
    warp = em.emit(f"lshr i32 {gt}, 5")
    lane = em.emit(f"and i32 {t}, 31")
    g_rows = em.emit(f"mul i32 {group}, {lay.m_per_group}")
    w16 = em.emit(f"shl i32 {warp}, 4")
    l4 = em.emit(f"lshr i32 {lane}, 2")
    row0 = em.emit(f"add i32 {g_rows}, {em.emit(f'add i32 {w16}, {l4}')}")
    l3 = em.emit(f"and i32 {lane}, 3")
    return row0, em.emit(f"shl i32 {l3}, 1")


def _steps(lay: WgmmaAcc, n: int) -> list[tuple[int, int]]:
    """Each register's (row, column) less the first register's: the same for every thread."""
    per_block = n // 8 * 4
    out = []
    for reg in range(lay.regs(n)):
        mb, rem = divmod(reg, per_block)
        i, q = divmod(rem, 4)
        out.append((mb * 64 + (8 if q >= 2 else 0), 8 * i + q % 2))
    return out


def _index(em: Any, op: g.AccIndex) -> bool:
    """Each register's row (`dim` 0) or column (1) plus `offset`, one value a distinct row / column."""
    from tilelang.dtypes import DType

    lay = em.layouts[op.result.id]
    assert isinstance(lay, WgmmaAcc)
    base = _first(em, lay)[op.dim]
    got: dict[int, str] = {}
    out = []
    for step in _steps(lay, op.result.shape[1]):
        d = step[op.dim] + op.offset
        if d not in got:
            i = base if d == 0 else em.emit(f"add i32 {base}, {d}")
            got[d] = em.cast(i, DType.I32, op.result.dtype)
        out.append(got[d])
    em.env[op.result.id] = out
    return True


__all__ = ["emit_op"]
