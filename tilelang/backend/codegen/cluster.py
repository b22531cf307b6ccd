"""`ClusterGather` (`let parts = cluster_gather(x);` in a `#[cluster(..)]`
kernel): the blocks of a thread-block cluster exchange `x` through
distributed shared memory, each block pushing its `x` into every block's
copy of the result. Per kernel and exchange, in every thread of every block:

    entry:  barrier.cluster.arrive.relaxed      (this block has started)
    (the first exchange: barrier.cluster.wait   every block of the cluster
                                                has started: its shared
                                                memory may be written)
    mapa + st.shared::cluster [buf_k of rank c + (r * n + i) * 4], x[i]
                                                for every rank c, each element
                                                i once (its owner thread), r
                                                this block's rank: posted
                                                stores, no round trip
    barrier.cluster.arrive                      release: the pushes, at cluster scope
    barrier.cluster.wait                        acquire: every block's pushes
    ld.shared     parts[c, i], [buf_k + (c * n + i) * 4]    local reads

`buf_k` is a static shared array of the module (`@tilec_cluster<k>`, C * n
elements), one an exchange, written only by the pushes of exchange k, so
nothing races with them, and once a block has passed exchange k's wait no
other block touches its shared memory again: a block may exit at once. (A
first version had each block read the others' copies, `ld.shared::cluster`
an element, and wait for the cluster again before it exited. Measured on the
H200, RESULTS.md (h15c, 2026-12-04): neither form is faster than reading
the same records from global memory in a merge of 8 blocks' 2 KB records:
6.7 us pulled, 7.2 pushed, 3.2-4.0 global, a cost that grows with the
clusters in flight, not yet explained.)
The checker (`ownership/cluster.py`) proves that every block reaches each
exchange once, in order, at the top level of the kernel; the kernel carries
`"nvvm.cluster_dim"` (`.reqnctapercluster`), so a plain `cuLaunchKernel`
launches whole clusters (the launch checked the grid, E0512).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.codegen.llvm_types import smem_size, smem_ty
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

_ARRIVE = "declare void @llvm.nvvm.barrier.cluster.arrive()"
_WAIT = "declare void @llvm.nvvm.barrier.cluster.wait()"
_ARRIVE_RELAXED = "declare void @llvm.nvvm.barrier.cluster.arrive.relaxed()"
_MAPA = "declare ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3), i32)"
_RANK = "declare i32 @llvm.nvvm.read.ptx.sreg.cluster.ctarank()"


def cluster_attrs(em: Any) -> None:
    """The kernel's `#[cluster(x, y, z)]` as its required cluster shape."""
    c = em.k.source.cluster
    if c:
        em.fn_attrs.append(f'"nvvm.cluster_dim"="{c[0]},{c[1]},{c[2]}"')


def arrive(em: Any) -> None:
    em.declare(_ARRIVE)
    em.stmt("call void @llvm.nvvm.barrier.cluster.arrive()")


def wait(em: Any) -> None:
    em.declare(_WAIT)
    em.stmt("call void @llvm.nvvm.barrier.cluster.wait()")


def entry(em: Any) -> list[str]:
    """The entry block's lines: a kernel with an exchange announces that its
    block has started (the first exchange waits for the whole cluster)."""
    if not any(isinstance(op, ir.ClusterGather) for op in em.k.body.ops):
        return []
    em.declare(_ARRIVE_RELAXED)
    em.cluster_pending = True
    return ["  call void @llvm.nvvm.barrier.cluster.arrive.relaxed()"]


def emit_cluster_gather(em: Any, op: ir.ClusterGather) -> None:
    x, r = op.x, op.result
    n = math.prod(x.shape)
    blocks = r.shape[0]
    size = smem_size(x.dtype)
    nbytes = -(-(blocks * n * size) // 16) * 16
    buf = f"@tilec_cluster{len(em.cluster_bufs)}"
    em.cluster_bufs.append(f"{buf} = internal addrspace(3) global [{nbytes} x i8] undef, align 16")
    em.static_smem += nbytes
    if em.cluster_pending:
        wait(em)
        em.cluster_pending = False
    ty = smem_ty(x.dtype)
    em.declare(_MAPA)
    em.declare(_RANK)
    rank = em.call("i32", "llvm.nvvm.read.ptx.sreg.cluster.ctarank", "")
    base = em.emit(f"mul i32 {rank}, {n}") if n > 1 else rank

    def push(index: str, val: str) -> None:
        if x.dtype is DType.BOOL:
            val = em.emit(f"zext i1 {val} to i8")
        at = em.emit(f"add i32 {base}, {index}") if index != "0" else base
        local = em.emit(f"getelementptr {ty}, ptr addrspace(3) {buf}, i32 {at}")
        for c in range(blocks):
            remote = em.emit(f"call ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) {local}, i32 {c})")
            em.stmt(f"store {ty} {val}, ptr addrspace(7) {remote}, align {size}")

    if x.shape:
        lay = em.lay(x)
        slots = em.tile(x)
        for k in em.owned_chunks(lay, "cg_w"):  # a replicated element is pushed by one of its copies
            for j in range(lay.V):
                push(em.flat(lay, k, j), slots[k * lay.V + j])
    else:
        body, after = em.new_label("cg_w"), em.new_label("cg_wj")
        em.cbr(em.emit("icmp eq i32 %tid, 0"), body, after)
        em.label(body)
        push("0", em.scalar(x))
        em.br(after)
        em.label(after)
    arrive(em)
    wait(em)
    vals: list[str] = []
    for _slot, _valid, flat in em.out_slots(r):
        p = em.emit(f"getelementptr {ty}, ptr addrspace(3) {buf}, i32 {flat}")
        v = em.emit(f"load {ty}, ptr addrspace(3) {p}, align {size}")
        if x.dtype is DType.BOOL:
            v = em.emit(f"icmp ne i8 {v}, 0")
        vals.append(v)
    em.finish(r.shape, vals, r)


def finish(em: Any) -> None:
    """Before the kernel's `ret`: a pending arrive (no exchange ran after the
    entry's) is waited for, so each arrive has its wait."""
    if em.cluster_pending:
        wait(em)
        em.cluster_pending = False
