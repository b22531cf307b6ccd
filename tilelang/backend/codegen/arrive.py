"""`LastBlock` (`if last_block(axis)`): a block's arrival at its group's counter;
`QueuePull` / `QueueTake` (`for s in queue(axis)`): a block's pull of a tile
index from its row's counter (the same buffer: a kernel has one or the other).

The emitted sequence, per block:

    bar.sync 0                          every thread's stores are done
    thread 0: old = atom.acq_rel.gpu.global.add.u32 [counter + 4 * group], 1
                                        release: the block's stores, at GPU scope
                                        (cumulative: the barrier ordered the other
                                        threads' before it); acquire: the group's
                                        other blocks' stores
              last = old == size - 1
              last: st.relaxed.gpu.global.u32 [counter + 4 * group], 0
                                        (every other block has arrived: the
                                        counter is 0 again for the next launch
                                        and for a graph's next replay)
              flag (shared) = last
    bar.sync 0
    last = flag                         the same in every thread: the `if`
                                        that follows is uniform over the block

ptxas (13.0, sm_90a) makes the atomic MEMBAR.ALL.GPU, ATOMG.E.ADD.STRONG.GPU
and CCTL.IVALL: the SM's L1 is invalidated after the acquire, so no load of
the region can hit a line cached before it (a separate `fence.acq_rel.gpu`
before the atomic only added a second MEMBAR and CCTL). The acquire half of
the atomic (thread 0), then the barrier, order every
load of the region after the group's other blocks' stores, at GPU scope; the
loads of the region are plain loads of a tensor the kernel writes (no
`!invariant.load`), which LLVM cannot move above the barrier. The counter
buffer is the kernel's `%arrive` parameter (`ParamSlot` "arrive:AXIS"),
zeroed once by the runtime (`runtime/cuda_arrive.py`) and left zero by every
launch that finishes. `#[hints(arrive_wait)]` (`Kernel.arrive_wait`): the
waiting form, `_emit_waiting`.
"""

from __future__ import annotations

from typing import Any

from tilelang.ir import nodes as ir

ARRIVE = "%arrive"


def emit_last_block(em: Any, op: ir.LastBlock) -> None:
    # The waiting form elects its block by `%ctaid`, the block index only where a CTA runs one block in the
    # grid's order: a kernel that walks its grid (`persistent`) takes the default arrival (hrev22: the FMA GEMM's
    # split-K walk had a CTA of the last `%ctaid` wait for every tile it merged and the region skipped for the
    # others; no walk takes a `last_block` kernel now, `gemm_persistent.walkable`, nor does `block_order` regroup
    # one with this hint)
    if em.k.source.arrive_wait and not em.k.persistent:
        _emit_waiting(em, op)
        return
    em.need_smem(4, op.span)
    em.barrier()
    one, rst, rjoin, every = (em.new_label(h) for h in ("lb_one", "lb_reset", "lb_kept", "lb_all"))
    is0 = em.emit(f"icmp eq i32 {em.tid0()}, 0")
    em.cbr(is0, one, every)
    em.label(one)
    ptr = _counter(em, op.group)
    old = em.emit('call i32 asm sideeffect "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", '
                  f'"=r,l,~{{memory}}"(ptr addrspace(1) {ptr})')
    nm1 = em.emit(f"sub i32 {em.scalar(op.size)}, 1")
    last = em.emit(f"icmp eq i32 {old}, {nm1}")
    em.cbr(last, rst, rjoin)
    em.label(rst)
    _reset(em, ptr)
    em.br(rjoin)
    em.label(rjoin)
    flag = em.emit(f"zext i1 {last} to i8")
    em.stmt(f"store i8 {flag}, ptr addrspace(3) {em.scratch}, align 4")
    em.br(every)
    em.label(every)
    em.barrier()
    got = em.emit(f"load i8, ptr addrspace(3) {em.scratch}, align 4")
    em.env[op.result.id] = em.emit(f"icmp ne i8 {got}, 0")


def _emit_waiting(em: Any, op: ir.LastBlock) -> None:
    """`#[hints(arrive_wait)]`: the group's block of the largest index along
    the axis runs the region; it waits for the others, which do not wait:

        bar.sync 0                      every thread's stores are done
        the others, thread 0: red.release.gpu.global.add.u32 [counter], 1
                                        (release: the block's stores, cumulative
                                        through the barrier; no answer waited
                                        for: the block leaves at once)
        the waiter, thread 0: ld.acquire.gpu.global.u32 [counter] until it
                                        reads size - 1 (every other block's add,
                                        each a release the acquire synchronises
                                        with: their stores are visible to it);
                              st.relaxed.gpu.global.u32 [counter], 0
                                        (zero again for the next launch)
        the waiter: bar.sync 0          its other threads' loads after the acquire
        last = (block index along the axis == size - 1), uniform over the block

    The waiter comes last in its group in the grid's order (CUDA dispatches a
    grid's blocks in index order), so while it polls the others have been
    dispatched before it: they run to their arrival, none waits on anything."""
    em.barrier()
    ax = "xyz"[op.axis]
    em.declare(f"declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.{ax}()")
    bid = em.call("i32", f"llvm.nvvm.read.ptx.sreg.ctaid.{ax}", "")
    nm1 = em.emit(f"sub i32 {em.scalar(op.size)}, 1")
    mine = em.emit(f"icmp eq i32 {bid}, {nm1}")
    one, signal, spin, rst, every, wsync, done = (
        em.new_label(h) for h in ("aw_one", "aw_signal", "aw_spin", "aw_reset", "aw_every", "aw_sync", "aw_done"))
    is0 = em.emit(f"icmp eq i32 {em.tid0()}, 0")
    em.cbr(is0, one, every)
    em.label(one)
    ptr = _counter(em, op.group)
    em.cbr(mine, spin, signal)
    em.label(signal)
    em.stmt('call void asm sideeffect "red.release.gpu.global.add.u32 [$0], 1;", '
            f'"l,~{{memory}}"(ptr addrspace(1) {ptr})')
    em.br(every)
    em.label(spin)
    got = em.emit('call i32 asm sideeffect "ld.acquire.gpu.global.u32 $0, [$1];", '
                  f'"=r,l,~{{memory}}"(ptr addrspace(1) {ptr})')
    arrived = em.emit(f"icmp eq i32 {got}, {nm1}")
    em.cbr(arrived, rst, spin)
    em.label(rst)
    _reset(em, ptr)
    em.br(every)
    em.label(every)
    em.cbr(mine, wsync, done)
    em.label(wsync)
    em.barrier()
    em.br(done)
    em.label(done)
    em.env[op.result.id] = mine


def emit_queue_pull(em: Any, op: ir.QueuePull) -> None:
    """Thread 0 adds one to the row's counter: `atom.relaxed.gpu` (a ticket
    orders no memory: the tiles it names are disjoint, and the next launch is
    stream-ordered after this one). The other threads hold 0. Nothing waits
    for the result here: the register is first read by `QueueTake`'s store,
    after the tile's work, so the atomic's round trip to L2 overlaps it (one
    predicated instruction in the PTX; ptxas branches around it, and its
    join does not wait for the result)."""
    ptr = _counter(em, op.group)
    em.env[op.result.id] = em.emit(
        'call i32 asm sideeffect "{ .reg .pred %p; setp.eq.u32 %p, $1, 0; mov.u32 $0, 0; '
        '@%p atom.relaxed.gpu.global.add.u32 $0, [$2], 1; }", '
        f'"=r,r,l"(i32 {em.tid0()}, ptr addrspace(1) {ptr})')


def emit_queue_take(em: Any, op: ir.QueueTake) -> None:
    """The ticket, thread 0's, to every thread through shared memory, as the
    tile it names (ticket + workers):

        bar.sync 0              every thread is done with the scratch (the
                                tile's work may have used it)
        thread 0: flag = ticket; ticket == size - 1 (the row's last pull):
                  st.relaxed.gpu [counter], 0
        bar.sync 0
        tile = flag + workers
        bar.sync 0              read before the next scratch user writes"""
    em.need_smem(4, op.span)
    em.barrier()
    one, rst, every = em.new_label("qt_one"), em.new_label("qt_reset"), em.new_label("qt_all")
    is0 = em.emit(f"icmp eq i32 {em.tid0()}, 0")
    em.cbr(is0, one, every)
    em.label(one)
    t = em.scalar(op.ticket)
    em.stmt(f"store i32 {t}, ptr addrspace(3) {em.scratch}, align 4")
    last = em.emit(f"sub i32 {em.scalar(op.size)}, 1")
    is_last = em.emit(f"icmp eq i32 {t}, {last}")
    em.cbr(is_last, rst, every)
    em.label(rst)
    _reset(em, _counter(em, op.group))
    em.br(every)
    em.label(every)
    em.barrier()
    got = em.emit(f"load i32, ptr addrspace(3) {em.scratch}, align 4")
    em.barrier()
    em.env[op.result.id] = em.emit(f"add i32 {got}, {em.scalar(op.workers)}")


def _counter(em: Any, group: Any) -> str:
    """The address of the group's (row's) counter in the launch's buffer."""
    g64 = em.emit(f"sext i32 {em.scalar(group)} to i64")
    return em.emit(f"getelementptr i32, ptr addrspace(1) {ARRIVE}, i64 {g64}")


def _reset(em: Any, ptr: str) -> None:
    """Zero a counter for the next launch (or graph replay): a relaxed store,
    ordered before the next launch by the stream."""
    em.stmt(f'call void asm sideeffect "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{{memory}}"(ptr addrspace(1) {ptr})')
