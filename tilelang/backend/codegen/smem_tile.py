"""Code generation of `g.SmemTileRead` and `g.SmemTileWrite`: an f16/bf16 tile
of a TMA-filled shared buffer read into the `AccTile` layout and written back
(the attention pipeline's Q computed from its loaded tile before the loop:
`passes/attention_qx.py`).

The buffer is laid out as TMA fills it (64-column slabs of 128-byte rows,
128-byte swizzle: row r's 16-byte chunk c at chunk c ^ (r % 8)), the places
`tma_store` writes: a thread's pair (row, 8 ni + 2 (l % 4) + j) of one
8-column group is one 4-byte word, and a warp's 32 words of one group (8
rows, 4 lanes) fall in 32 distinct banks. The write fences the async proxy
and meets its warpgroup at `QX_BARRIER + g`: the rows a warpgroup writes are
the ones its own `wgmma` reads (`passes/attention_loop.s_product`), so no
other warpgroup waits.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.accview import AccView, _pair
from tilelang.backend.codegen.llvm_types import mem_ty
from tilelang.backend.codegen.tma_store import pair_place, swizzled_base
from tilelang.backend.gpu import nodes as g


def emit_op(em: Any, op: object) -> bool:
    """Emit one of this module's ops; False for any other op."""
    match op:
        case g.SmemTileRead():
            read(em, op)
            return True
        case g.SmemTileWrite():
            write(em, op)
            return True
    return False


def _places(em: Any, view: AccView, buf: Any, stage: Any) -> list[str]:
    """The `ptr addrspace(3)` of each of this thread's pairs (registers 2k, 2k + 1) of `view` in `buf[stage]`."""
    assert view.rdim is not None and view.cdim is not None and view.N % 64 == 0, view
    ref = em.env[buf.id]
    start = em.emit(f"add i32 {em.emit(f'mul i32 {em.scalar(stage)}, {ref.stage_bytes}')}, {ref.offset}")
    base, xs, _ = swizzled_base(em, view, start)
    chunk: dict[int, str] = {}
    return [pair_place(em, view, base, xs, chunk, k) for k in range(len(view.slots) // 2)]


def read(em: Any, op: g.SmemTileRead) -> None:
    view = em.lay(op.result)
    assert isinstance(view, AccView), view
    dt = op.result.dtype
    mt = mem_ty(dt)
    regs: list[str] = []
    for ptr in _places(em, view, op.buf, op.stage):
        vec = em.emit(f"load <2 x {mt}>, ptr addrspace(3) {ptr}, align 4")
        for j in range(2):
            regs.append(em.mem_to_reg(em.emit(f"extractelement <2 x {mt}> {vec}, i32 {j}"), dt, mt))
    em.env[op.result.id] = regs


def write(em: Any, op: g.SmemTileWrite) -> None:
    view = em.lay(op.value)
    assert isinstance(view, AccView), view
    dt = op.value.dtype
    mt = mem_ty(dt)
    regs = em.tile(op.value)
    mvals = [em.reg_to_mem(r, dt, mt) for r in regs]
    for k, ptr in enumerate(_places(em, view, op.buf, op.stage)):
        vec = _pair(em, regs[2 * k:2 * k + 2], mvals[2 * k:2 * k + 2], mt)
        em.stmt(f"store <2 x {mt}> {vec}, ptr addrspace(3) {ptr}, align 4")
    em.proxy_fence()
    group = em.emit(f"lshr i32 {em.role_tid}, 7")
    em.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")
    bid = em.emit(f"add i32 {group}, {g.QX_BARRIER}")
    em.stmt(f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {bid}, i32 128)")


__all__ = ["emit_op", "read", "write"]
