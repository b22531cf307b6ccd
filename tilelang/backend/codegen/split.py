"""A tile's key range split over CTAs (`passes/attention_split.py`): the
consumers' online-softmax state saved to and read back from the launch's
split workspace (`SplitSave`, `SplitLoad`), and their arrival at the tile's
counter (`SplitArrive`), the last to arrive merging every piece.

The kernel takes two more pointers: `%split`, u32 counters (`ParamSlot`
"split": one a CTA, zeroed once by the runtime and left zero by the last
arrival of each group, as `last_block`'s: `runtime/cuda_arrive.py`), and
`%splitws` ("splitws:WORDS:THREADS:R": R records of WORDS f32 words a
consumer thread for each CTA; nobody reads a word before the launch wrote it). Word w
of consumer thread t of record s is at (s * WORDS + w) * THREADS + t: a
warp's 32 words of one register are one 128-byte line.

`SplitArrive`, per consumer group:

    bar.sync SPLIT_BARRIER, THREADS     the consumers' saves are done (CTA order)
    thread 0: old = atom.acq_rel.gpu.global.add.u32 [counter], 1
                                        release: the saves (cumulative over the
                                        barrier); acquire: the other pieces'
              last = old == size - 1    (last: st.relaxed [counter], 0)
              flag (shared scratch) = last
    bar.sync SPLIT_BARRIER, THREADS
    last = flag
    bar.sync SPLIT_BARRIER, THREADS     read before any later scratch writer

as `codegen/arrive.py`'s `last_block`, on the consumers' named barrier
instead of the CTA's (the producer warp never reaches it). The loads that
follow are plain `ld.global` (the atomic's acquire invalidates the SM's L1).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu import nodes as g
from tilelang.dtypes import DType

SPLIT, SPLITWS = "%split", "%splitws"
SPLIT_BARRIER = 8  # named barrier id (0 the CTA's, 1 zero rows, 2-3 turns, 4-6 TMA stores)
SPLIT_ROUNDS = 3  # records a CTA (`passes/attention_tiles.SPLIT_ROUNDS`: pieces <= that many times the CTAs)


def words(em: Any, values: tuple[Any, ...]) -> int:
    return sum(em.nregs(v) for v in values)


def emit_op(em: Any, op: object) -> bool:
    match op:
        case g.SplitSave(values=vs, slot=sl, threads=t):
            for v in vs:
                assert v.dtype is DType.F32, "the split state is f32"
            regs = [r for v in vs for r in em.tile(v)]
            for w, ptr in enumerate(_addresses(em, sl, len(regs), t)):
                em.stmt(f"store float {regs[w]}, ptr addrspace(1) {ptr}, align 4")
            return True
        case g.SplitLoad(results=rs, slot=sl, threads=t, head=head, tail=tail, fma=fma):
            counts = [em.nregs(r) for r in rs]
            skip = sum(em.nregs(h) for h in head)
            total = skip + sum(counts) + sum(em.nregs(x) for x in tail)
            ptrs = _addresses(em, sl, skip + sum(counts), t, total)[skip:]
            if fma is not None:  # acc + record * factor, word by word
                (r,) = rs
                acc, f = em.tile(fma[0]), em.tile(fma[1])
                out = []
                for w, p in enumerate(ptrs):
                    x = em.emit(f"load float, ptr addrspace(1) {p}, align 4")
                    out.append(em.emit(f"fadd float {acc[w]}, {em.emit(f'fmul float {x}, {f[w]}')}"))
                em.env[r.id] = out
                return True
            at = 0
            for r, n in zip(rs, counts, strict=True):
                em.env[r.id] = [em.emit(f"load float, ptr addrspace(1) {p}, align 4") for p in ptrs[at:at + n]]
                at += n
            return True
        case g.SplitArrive():
            _arrive(em, op)
            return True
        case g.TicketTake():
            _take(em, op)
            return True
        case g.TicketRead(result=r, bar=b):
            word = em.handoff_word(b)
            em.stmt('call void asm sideeffect "", "~{memory}"()')  # (not above the caller's wait)
            em.env[r.id] = em.emit(f"load i32, ptr addrspace(3) {word}, align 4")
            return True
    return False


def _take(em: Any, op: g.TicketTake) -> None:
    """`g.TicketTake`: the counter's old value (the one thread of its role), reset by the last taker,
    stored to its handoff word (`EmitterCore.handoff_word`: apart from every scratch use) and published by an
    arrival on the barrier (release: the store first)."""
    assert em.role_single, "a ticket is taken by a role one thread runs"
    word = em.handoff_word(op.bar)
    rst, kept = em.new_label("tk_reset"), em.new_label("tk_kept")
    size = em.scalar(op.size)  # the counter after the split's (a CTA's first P: its groups'; `llvm.py`'s "split:K")
    ptr = em.emit(f"getelementptr i32, ptr addrspace(1) {SPLIT}, i64 {em.emit(f'sext i32 {size} to i64')}")
    old = em.emit('call i32 asm sideeffect "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", '
                  f'"=r,l,~{{memory}}"(ptr addrspace(1) {ptr})')
    em.cbr(em.emit(f"icmp eq i32 {old}, {em.emit(f'sub i32 {size}, 1')}"), rst, kept)
    em.label(rst)
    em.stmt(f'call void asm sideeffect "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{{memory}}"(ptr addrspace(1) {ptr})')
    em.br(kept)
    em.label(kept)
    em.stmt(f"store i32 {old}, ptr addrspace(3) {word}, align 4")
    em.stmt('call void asm sideeffect "", "~{memory}"()')  # (the store before the arrival)
    p = em.smem_at(op.bar, op.stage)
    em.declare("declare i64 @llvm.nvvm.mbarrier.arrive.shared(ptr addrspace(3))")
    em.call("i64", "llvm.nvvm.mbarrier.arrive.shared", f"ptr addrspace(3) {p}")
    em.env[op.result.id] = old


def _addresses(em: Any, slot: Any, n: int, threads: int, words: int = 0) -> list[str]:
    """The addresses of a thread's first `n` words of record `slot` (records of `words` words a thread; 0: `n`)."""
    base = em.emit(f"mul i32 {em.scalar(slot)}, {(words or n) * threads}")
    first = em.emit(f"add i32 {base}, {em.role_tid}")
    wide = em.emit(f"zext i32 {first} to i64")
    p0 = em.emit(f"getelementptr float, ptr addrspace(1) {SPLITWS}, i64 {wide}")
    return [p0 if w == 0 else em.emit(f"getelementptr float, ptr addrspace(1) {p0}, i64 {w * threads}")
            for w in range(n)]


def _arrive(em: Any, op: g.SplitArrive) -> None:
    em.need_smem(4, op.span)
    em.named_barrier(SPLIT_BARRIER, op.threads)
    one, rst, kept, every = (em.new_label(h) for h in ("sp_one", "sp_reset", "sp_kept", "sp_all"))
    em.cbr(em.emit(f"icmp eq i32 {em.role_tid}, 0"), one, every)
    em.label(one)
    g64 = em.emit(f"sext i32 {em.scalar(op.group)} to i64")
    ptr = em.emit(f"getelementptr i32, ptr addrspace(1) {SPLIT}, i64 {g64}")
    old = em.emit('call i32 asm sideeffect "atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;", '
                  f'"=r,l,~{{memory}}"(ptr addrspace(1) {ptr})')
    last = em.emit(f"icmp eq i32 {old}, {em.emit(f'sub i32 {em.scalar(op.size)}, 1')}")
    em.cbr(last, rst, kept)
    em.label(rst)
    em.stmt(f'call void asm sideeffect "st.relaxed.gpu.global.u32 [$0], 0;", "l,~{{memory}}"(ptr addrspace(1) {ptr})')
    em.br(kept)
    em.label(kept)
    em.stmt(f"store i8 {em.emit(f'zext i1 {last} to i8')}, ptr addrspace(3) {em.scratch}, align 4")
    em.br(every)
    em.label(every)
    em.named_barrier(SPLIT_BARRIER, op.threads)
    got = em.emit(f"load i8, ptr addrspace(3) {em.scratch}, align 4")
    em.env[op.result.id] = em.emit(f"icmp ne i8 {got}, 0")
    em.named_barrier(SPLIT_BARRIER, op.threads)


__all__ = ["SPLIT", "SPLITWS", "SPLIT_BARRIER", "SPLIT_ROUNDS", "emit_op", "words"]
