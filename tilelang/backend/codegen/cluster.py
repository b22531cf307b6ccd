"""`ClusterGather` (`let parts = cluster_gather(x);` in a `#[cluster(..)]`
kernel): the blocks of a thread-block cluster exchange `x` through
distributed shared memory, each block pushing its `x` into every other
block's copy of the result. Per kernel and exchange k, in every block:

    entry:  thread 0: mbarrier.init bar_k (1 arrival) for every exchange k;
            fence.mbarrier_init.release.cluster
            barrier.cluster.arrive.relaxed      (started, barriers ready)
    (the first exchange: barrier.cluster.wait   every block of the cluster
                                                has started: its shared
                                                memory may be written)
    st.shared     [buf_k + r * S + i], x[i]     own slot r (rank), S the
                                                record's bytes padded to 16
    bar.sync                                    the record is whole
    thread 0: mbarrier.arrive.expect_tx bar_k, (C - 1) * S
    ld.shared.v4 + st.async.shared::cluster.mbarrier::complete_tx::bytes.v4
                                                16 bytes a thread at a time
                                                into slot r of every other
                                                rank's buf_k, completing
                                                bytes on its bar_k
    (deferred to the first op that reads the result:)
    mbarrier.try_wait.parity.acquire.cluster bar_k, 0
                                                every other block's record in
    ld.shared     parts[c, i], [buf_k + c * S + i]    local reads

`buf_k` is a static shared array of the module (`@tilec_cluster<k>`, C * S
bytes) and `bar_k` an mbarrier (`@tilec_cluster_bars`), one an exchange,
each written once, so nothing races and no buffer is reused. A block's
wait returns once all (C - 1) * S bytes of the others have landed in its
buffer, so after its last wait no block writes into its shared memory
again: a block may exit at once, no exit barrier. `st.async` takes its data
from registers, so a sender has nothing to keep alive either.

Why not a cluster barrier (the first version): at cluster scope ptxas makes
`barrier.cluster.arrive`'s release a `MEMBAR.ALL.GPU` (and the acquiring
wait a `CCTL.IVALL`, an L1 invalidation), a fence that waits for every
outstanding access of the thread to be acknowledged, and the pushes were
4-byte `st.shared::cluster` stores at a 16-byte stride (an `mapa` each); a
merge of 8 blocks' 2 KB records ran 2.3x slower than reading them from
global memory (RESULTS.md, h15c, 2026-12-04). `st.async` completes bytes on
the receiver's mbarrier instead: no fence, and 16-byte stores (`STAS.128`).
It needs PTX ISA 8.1 (`target.llvm_to_ptx` raises the module's version
where it occurs).

The checker (`ownership/cluster.py`) proves that every block reaches each
exchange once, in order, at the top level of the kernel; the kernel carries
`"nvvm.cluster_dim"` (`.reqnctapercluster`), so a plain `cuLaunchKernel`
launches whole clusters (the launch checked the grid, E0512).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.codegen.llvm_types import smem_size, smem_ty
from tilelang.backend.gpu.nodes import operands as gpu_operands
from tilelang.backend.gpu.nodes import regions as gpu_regions
from tilelang.backend.gpu.nodes import walk as gpu_walk
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

_WAIT = "declare void @llvm.nvvm.barrier.cluster.wait()"
_ARRIVE_RELAXED = "declare void @llvm.nvvm.barrier.cluster.arrive.relaxed()"
_MAPA = "declare ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3), i32)"
_RANK = "declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()"
BARS = "@tilec_cluster_bars"


def cluster_attrs(em: Any) -> None:
    """The kernel's `#[cluster(x, y, z)]` as its required cluster shape."""
    c = em.k.source.cluster
    if c:
        em.fn_attrs.append(f'"nvvm.cluster_dim"="{c[0]},{c[1]},{c[2]}"')


def wait(em: Any) -> None:
    em.declare(_WAIT)
    em.stmt("call void @llvm.nvvm.barrier.cluster.wait()")


def _exchanges(em: Any) -> int:
    return sum(isinstance(op, ir.ClusterGather) for op in em.k.body.ops)


def entry(em: Any) -> list[str]:
    """The entry block's lines: thread 0 sets up one mbarrier an exchange
    (published to the cluster by `fence.mbarrier_init`), then the block
    announces that it has started (the first exchange waits for the whole
    cluster, so no block completes bytes on a barrier not yet set up)."""
    n = _exchanges(em)
    if not n:
        return []
    em.declare(_ARRIVE_RELAXED)
    em.cluster_pending = True
    em.cluster_bufs.append(f"{BARS} = internal addrspace(3) global [{n} x i64] undef, align 8")
    em.static_smem += 8 * n
    init = " ".join(f"@p mbarrier.init.shared::cta.b64 [$1+{8 * k}], 1;" for k in range(n))
    return [f'  call void asm sideeffect "{{ .reg .pred p; setp.eq.u32 p, $0, 0; {init} '
            f'@p fence.mbarrier_init.release.cluster; }}", "r,l,~{{memory}}"(i32 %tid, ptr addrspace(3) {BARS})',
            "  call void @llvm.nvvm.barrier.cluster.arrive.relaxed()"]


def _bar(em: Any, k: int) -> str:
    return str(em.emit(f"getelementptr i64, ptr addrspace(3) {BARS}, i32 {k}"))


def emit_cluster_gather(em: Any, op: ir.ClusterGather) -> None:
    """Write `x` into this block's own slot, push the slot to every other
    rank (`st.async`, 16 bytes a store); the wait and the reads are deferred
    (`flush_before`) to the first op that reads the result."""
    x, r = op.x, op.result
    n = math.prod(x.shape)
    blocks = r.shape[0]
    size = smem_size(x.dtype)
    stride = -(-(n * size) // 16) * 16  # a record's bytes, 16-byte aligned
    k = len(em.cluster_deferred) + em.cluster_done
    buf = f"@tilec_cluster{k}"
    em.cluster_bufs.append(f"{buf} = internal addrspace(3) global [{blocks * stride} x i8] undef, align 16")
    em.static_smem += blocks * stride
    if em.cluster_pending:
        wait(em)
        em.cluster_pending = False
    ty = smem_ty(x.dtype)
    em.declare(_MAPA)
    em.declare(_RANK)
    rank = em.call("i32", "llvm.nvvm.read.ptx.sreg.cluster.ctarank", "")
    own = em.emit(f"getelementptr i8, ptr addrspace(3) {buf}, i32 {em.emit(f'mul i32 {rank}, {stride}')}")

    def put(index: str, val: str) -> None:
        if x.dtype is DType.BOOL:
            val = em.emit(f"zext i1 {val} to i8")
        p = em.emit(f"getelementptr {ty}, ptr addrspace(3) {own}, i32 {index}") if index != "0" else own
        em.stmt(f"store {ty} {val}, ptr addrspace(3) {p}, align {size}")

    if x.shape:
        lay = em.lay(x)
        slots = em.tile(x)
        for c in em.owned_chunks(lay, "cg_w"):  # a replicated element is written by one of its copies
            for j in range(lay.V):
                put(em.flat(lay, c, j), slots[c * lay.V + j])
    else:
        body, after = em.new_label("cg_w"), em.new_label("cg_wj")
        em.cbr(em.emit("icmp eq i32 %tid, 0"), body, after)
        em.label(body)
        put("0", em.scalar(x))
        em.br(after)
        em.label(after)
    em.barrier()  # the record is whole before any thread pushes a part of it
    bar = _bar(em, k)
    em.stmt('call void asm sideeffect "{ .reg .pred p; setp.eq.u32 p, $0, 0; '
            f'@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], {(blocks - 1) * stride}; }}", '
            f'"r,l,~{{memory}}"(i32 %tid, ptr addrspace(3) {bar})')
    if blocks > 1:
        _push(em, own, bar, rank, stride // 16, blocks)
    em.cluster_deferred.append((op, buf, stride, k))


def _push(em: Any, own: str, bar: str, rank: str, words: int, blocks: int) -> None:
    """Every thread sends 16-byte words tid, tid + T, .. of the own slot to
    the same slot of every other rank (rank + 1, .., rank + C - 1 mod C)."""
    peers = []
    for d in range(1, blocks):
        c = em.emit(f"urem i32 {em.emit(f'add i32 {rank}, {d}')}, {blocks}")
        peers.append((c, em.call("ptr addrspace(7)", "llvm.nvvm.mapa.shared.cluster", f"ptr addrspace(3) {bar}, i32 {c}")))
    for i in range(-(-words // em.T)):
        w = em.emit(f"add i32 %tid, {i * em.T}")
        after = None
        if (i + 1) * em.T > words:
            body, after = em.new_label("cg_p"), em.new_label("cg_pj")
            em.cbr(em.emit(f"icmp ult i32 {w}, {words}"), body, after)
            em.label(body)
        src = em.emit(f"getelementptr <4 x i32>, ptr addrspace(3) {own}, i32 {w}")
        v = em.emit(f"load <4 x i32>, ptr addrspace(3) {src}, align 16")
        parts = [em.emit(f"extractelement <4 x i32> {v}, i32 {e}") for e in range(4)]
        for c, rbar in peers:
            dst = em.call("ptr addrspace(7)", "llvm.nvvm.mapa.shared.cluster", f"ptr addrspace(3) {src}, i32 {c}")
            em.stmt('call void asm sideeffect "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 '
                    '[$0], {$1, $2, $3, $4}, [$5];", "l,r,r,r,r,l,~{memory}"'
                    f"(ptr addrspace(7) {dst}, {', '.join(f'i32 {p}' for p in parts)}, ptr addrspace(7) {rbar})")
        if after is not None:
            em.br(after)
            em.label(after)


def _complete(em: Any, op: ir.ClusterGather, buf: str, stride: int, k: int) -> None:
    """Wait for the other blocks' records of exchange k, then read the result."""
    x, r = op.x, op.result
    n = math.prod(x.shape)
    size = smem_size(x.dtype)
    bar = _bar(em, k)
    loop, done = em.new_label("cg_wait"), em.new_label("cg_in")
    em.br(loop)
    em.label(loop)
    ok = em.emit('call i32 asm sideeffect "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 '
                 f'p, [$1], 0; selp.u32 $0, 1, 0, p; }}", "=r,l,~{{memory}}"(ptr addrspace(3) {bar})')
    em.cbr(em.emit(f"icmp ne i32 {ok}, 0"), done, loop)
    em.label(done)
    ty = smem_ty(x.dtype)
    per = stride // size  # elements a slot
    vals: list[str] = []
    for _slot, _valid, flat in em.out_slots(r):
        at = flat
        if per != n:
            c = em.emit(f"udiv i32 {flat}, {n}")
            at = em.emit(f"add i32 {em.emit(f'mul i32 {c}, {per - n}')}, {flat}")
        p = em.emit(f"getelementptr {ty}, ptr addrspace(3) {buf}, i32 {at}")
        v = em.emit(f"load {ty}, ptr addrspace(3) {p}, align {size}")
        if x.dtype is DType.BOOL:
            v = em.emit(f"icmp ne i8 {v}, 0")
        vals.append(v)
    em.finish(r.shape, vals, r)
    em.cluster_done += 1


def _reads(op: object) -> set[int]:
    ids = {v.id for v in gpu_operands(op)}
    for sub in gpu_regions(op):
        for inner in gpu_walk(sub):
            ids.update(v.id for v in gpu_operands(inner))
    return ids


def flush_before(em: Any, op: object) -> None:
    """Before a top-level op that reads a deferred exchange's result: wait
    for it (and every earlier one: the reads stay in program order)."""
    if not em.cluster_deferred:
        return
    used = _reads(op)
    last = max((i for i, (g, *_rest) in enumerate(em.cluster_deferred) if g.result.id in used), default=-1)
    for g, buf, stride, k in em.cluster_deferred[:last + 1]:
        _complete(em, g, buf, stride, k)
    del em.cluster_deferred[:last + 1]


def finish(em: Any) -> None:
    """Before the kernel's `ret`: every exchange still deferred is waited for
    (no block exits while others may write into its shared memory), and a
    pending arrive (no exchange ran after the entry's) is waited for, so each
    arrive has its wait."""
    for g, buf, stride, k in em.cluster_deferred:
        _complete(em, g, buf, stride, k)
    em.cluster_deferred.clear()
    if em.cluster_pending:
        wait(em)
        em.cluster_pending = False
