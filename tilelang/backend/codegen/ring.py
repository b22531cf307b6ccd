"""Code generation of the per-thread load rings (`passes/stream_loads.py`):
`RingCopy` (cp.async of the chunks a thread would load, into its own slots)
and `RingRead` (those slots back into registers, as the load would give them).

Slot layout of one stage: chunk k of thread t at byte (k * T + t) * 16, T the
block's threads. A warp's 16-byte shared accesses of one chunk index are 512
consecutive bytes: the four phases of a 128-bit access, no bank conflict.
Chunks are wholly in or out of the tensor (the pass checked the facts), so
a copy is `cp.async.cg` of 16 bytes, or of 0 (zero-fill) past the edge.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.views import view_of

from ..gpu import nodes as g


def emit_op(em: Any, op: object) -> bool:
    """Emit one of this module's ops; False for any other op."""
    match op:
        case g.RingCopy():
            ring_copy(em, op)
            return True
        case g.RingRead():
            ring_read(em, op)
            return True
    return False


def _slot(em: Any, buf: Any, stage: str, stage_bytes: int, k: int) -> str:
    """ptr addrspace(3) of this thread's chunk k in stage `stage` of ring `buf`."""
    base = em.emit(f"add i32 {em.env[buf.id].offset}, {em.emit(f'mul i32 {stage}, {stage_bytes}')}")
    slot = em.emit(f"shl i32 {em.emit(f'add i32 %tid, {k * em.T}')}, 4")
    return str(em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {em.emit(f'add i32 {base}, {slot}')}"))


def ring_copy(em: Any, op: g.RingCopy) -> None:
    info = em.tensors[op.tensor]
    lay = view_of(op.layout, op.type.shape, em.T, op.type.dtype.itemsize)
    stage_bytes = em.env[op.dst.id].stage_bytes
    offsets = [em.scalar(o) for o in op.offsets]
    stage = em.scalar(op.stage)
    em.declare("declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)")
    go, done = em.new_label("rc"), em.new_label("rd")
    em.cbr(em.scalar(op.pred), go, done)
    em.label(go)
    for k in range(lay.K):
        coords = em._chunk_coords(lay, k, offsets)
        whole = em.and_all([em.chunk_valid(lay, k), em.in_bounds(info, coords, lay.V)])
        addr = em.address(info, coords)
        if whole is not None:
            addr = em.emit(f"select i1 {whole}, ptr addrspace(1) {addr}, ptr addrspace(1) {info.base}")
            size = em.emit(f"select i1 {whole}, i32 16, i32 0")
        else:
            size = "16"
        em.stmt(f"call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) "
                f"{_slot(em, op.dst, stage, stage_bytes, k)}, ptr addrspace(1) {addr}, i32 {size})")
    em.br(done)
    em.label(done)


def ring_read(em: Any, op: g.RingRead) -> None:
    r = op.result
    info = em.tensors[op.tensor]
    lay = em.lay(r)
    mt = em.mty(info)
    dt = info.param.dtype
    vt = f"<{lay.V} x {mt}>"
    stage_bytes = em.env[op.src.id].stage_bytes
    stage = em.scalar(op.stage)
    raw = [em.emit(f"load {vt}, ptr addrspace(3) {_slot(em, op.src, stage, stage_bytes, k)}, align 16")
           for k in range(lay.K)]
    out = []
    for vec in raw:
        out += [em.mem_to_reg(em.emit(f"extractelement {vt} {vec}, i32 {j}"), dt, mt) for j in range(lay.V)]
    em.env[r.id] = out
