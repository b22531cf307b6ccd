"""`ClusterGather` (`let parts = cluster_gather(x);` in a `#[cluster(..)]`
kernel): the blocks of a thread-block cluster exchange `x` through
distributed shared memory. Per exchange, in every thread of every block:

    (a previous exchange's arrive pending: barrier.cluster.wait)
    st.shared     [buf_k + 4 * i], x[i]   each element once (its owner thread)
    barrier.cluster.arrive                release: the stores, at cluster scope
    barrier.cluster.wait                  acquire: every block's stores
    mapa          p = buf_k of rank c     for each element (c, i) of the result
    ld.shared::cluster  parts[c, i], [p + 4 * i]
    barrier.cluster.arrive                this block's reads are done (release)

and before the kernel returns, the last arrive's `barrier.cluster.wait`: no
block leaves (and gives up its shared memory) while another block of its
cluster may still read it. `buf_k` is a static shared array of the module
(`@tilec_cluster<k>`), one an exchange, which nothing else writes, so the
reads after the exchange's second arrive race with nothing. The checker
(`ownership/cluster.py`) proves that every block reaches each exchange once,
in order, at the top level of the kernel (one `ret`, no early exit); the
kernel carries `"nvvm.cluster_dim"` (`.reqnctapercluster`), so a plain
`cuLaunchKernel` launches whole clusters (the launch checked the grid,
E0512).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.llvm_types import smem_size, smem_ty
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

_ARRIVE = "declare void @llvm.nvvm.barrier.cluster.arrive()"
_WAIT = "declare void @llvm.nvvm.barrier.cluster.wait()"
_MAPA = "declare ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3), i32)"


def cluster_attrs(em: Any) -> None:
    """The kernel's `#[cluster(x, y, z)]` as its required cluster shape."""
    c = em.k.source.cluster
    if c:
        em.fn_attrs.append(f'"nvvm.cluster_dim"="{c[0]},{c[1]},{c[2]}"')


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def arrive(em: Any) -> None:
    em.declare(_ARRIVE)
    em.stmt("call void @llvm.nvvm.barrier.cluster.arrive()")


def wait(em: Any) -> None:
    em.declare(_WAIT)
    em.stmt("call void @llvm.nvvm.barrier.cluster.wait()")


def emit_cluster_gather(em: Any, op: ir.ClusterGather) -> None:
    x, r = op.x, op.result
    n = _numel(x.shape)
    size = smem_size(x.dtype)
    nbytes = -(-(n * size) // 16) * 16
    buf = f"@tilec_cluster{len(em.cluster_bufs)}"
    em.cluster_bufs.append(f"{buf} = internal addrspace(3) global [{nbytes} x i8] undef, align 16")
    em.static_smem += nbytes
    if em.cluster_pending:
        wait(em)
    ty = smem_ty(x.dtype)
    if x.shape:
        lay = em.lay(x)
        slots = em.tile(x)
        owner = lay.owner(em)  # a replicated element is written by one of its copies
        for k in range(lay.K):
            valid = em.and_all([owner, em.chunk_valid(lay, k)])
            after = None
            if valid is not None:
                body, after = em.new_label("cg_w"), em.new_label("cg_wj")
                em.cbr(valid, body, after)
                em.label(body)
            for j in range(lay.V):
                _store(em, buf, x.dtype, em.flat(lay, k, j), slots[k * lay.V + j])
            if after is not None:
                em.br(after)
                em.label(after)
    else:
        body, after = em.new_label("cg_w"), em.new_label("cg_wj")
        em.cbr(em.emit("icmp eq i32 %tid, 0"), body, after)
        em.label(body)
        _store(em, buf, x.dtype, "0", em.scalar(x))
        em.br(after)
        em.label(after)
    arrive(em)
    wait(em)
    em.declare(_MAPA)
    vals: list[str] = []
    for _slot, _valid, flat in em.out_slots(r):
        c = em.emit(f"udiv i32 {flat}, {n}") if n > 1 else flat
        i = em.emit(f"urem i32 {flat}, {n}") if n > 1 else "0"
        local = em.emit(f"getelementptr {ty}, ptr addrspace(3) {buf}, i32 {i}")
        remote = em.emit(f"call ptr addrspace(7) @llvm.nvvm.mapa.shared.cluster(ptr addrspace(3) {local}, i32 {c})")
        v = em.emit(f"load {ty}, ptr addrspace(7) {remote}, align {size}")
        if x.dtype is DType.BOOL:
            v = em.emit(f"icmp ne i8 {v}, 0")
        vals.append(v)
    em.finish(r.shape, vals, r)
    arrive(em)
    em.cluster_pending = True


def _store(em: Any, buf: str, dt: DType, index: str, val: str) -> None:
    ty = smem_ty(dt)
    if dt is DType.BOOL:
        val = em.emit(f"zext i1 {val} to i8")
    p = em.emit(f"getelementptr {ty}, ptr addrspace(3) {buf}, i32 {index}")
    em.stmt(f"store {ty} {val}, ptr addrspace(3) {p}, align {smem_size(dt)}")


def finish(em: Any) -> None:
    """Before the kernel's `ret`: the last exchange's wait (no block leaves
    while another of its cluster may still read its shared memory)."""
    if em.cluster_pending:
        wait(em)
        em.cluster_pending = False
