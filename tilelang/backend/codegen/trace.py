"""The block timeline's stamps in the emitter (`Target.trace`, `TILEC_TRACE=blocks`).

A traced kernel records, for every block, when it started, when its
`griddepcontrol.wait` returned (PDL kernels) and when its last warp was done,
on which SM, into a buffer the runtime owns (`runtime/trace.py` decodes it).
Nothing here is emitted when tracing is off: the PTX is then byte for byte
the untraced kernel's (a test checks it).

Where the buffer is: a module global, `@tilec_trace` (16 bytes: the buffer's
address, then the kernel's trace id), which the runtime writes once when it
loads the module. No kernel parameter changes, so every launch path (the
fast launchers, the native plans, CUDA graphs captured by PyTorch) runs a
traced kernel as it runs an untraced one, and a graph replayed many times
records every replay.

The stamps (`%globaltimer`, nanoseconds of the GPU's global timer):

    entry      every thread reads the timer first thing (only thread 0's is kept)
    wait       right after the kernel's `griddepcontrol.wait`, if it has one
    exit       after a block-wide barrier at the end, so it is the last warp's end
    mark       (`TILEC_TRACE_MARK`, a kernel without a PDL wait) thread 0's pass
               through one point of the body, in the wait's field: "wait1"
               the return of the first mbarrier wait thread 0 emits (a
               Hopper pipeline's first tile arriving: Q and the first K/V
               stage), "store1" the first store (the epilogue's start), "ring"
               the return of the first `cp.async.wait` in the emitted code (a
               cp.async ring's wait at the top of its loop: stamped at every
               pass, so the record holds the last key or weight tile's arrival)

At the entry (after the wait), thread 0 reserves the block's record (one
atomic on the buffer's cursor, a ring: slot = cursor & (capacity - 1)) and counts
the block into its kernel's block counter (one atomic); their results are
used at the exit, where it writes the record with plain stores, so the
block's end waits for no round trip (call 1 on the H200 measured the step
3.9 % slower with the atomics and the global's loads at the exit). The host cuts a kernel's records, in
counter order, into launches of the grid's size, from the newest back (the
blocks of one launch of a kernel all count before the next launch of the
same kernel counts any: that launch is made only once every block of the
launches between has started, each after every block of this one did), so a
module launched with grids of several sizes is cut right.

    Global `tilec_trace`: [0, 8) the buffer's address, [8, 12) the kernel's
    trace id, [12, 16) the ring's capacity in records - 1 (a power of two).
    Buffer: [0, 8) u64 cursor (records reserved so far), [8, 12) u32 capacity
    in records (for the host), [COUNTERS, COUNTERS + 4 * KIDS) u32 blocks
    finished per trace id (id mod KIDS), records from RECORDS on.
    Record (RECORD = 32 bytes): u32 trace id, u32 the block counter's value
    before this block, u32 block (x * ny * nz + y * nz + z), u32 SM (bits
    0-7) | blocks in the grid (bits 8-31, at most 2^24 - 1), u64 entry
    stamp, u32 wait - entry (NO_WAIT: none; with a mark, the mark - entry:
    thread 0 writes NO_WAIT there at the entry and the mark's value each time
    it passes the mark, so the last pass counts), u32 exit - entry.

Invariant: this module imports no CUDA library and builds text only.
"""

from __future__ import annotations

from typing import Any

GLOBAL = "tilec_trace"
HEADER_CURSOR = 0
HEADER_CAPACITY = 8
COUNTERS = 4096
KIDS = 1024
RECORDS = COUNTERS + 4 * KIDS
RECORD = 32
NO_WAIT = 0xFFFFFFFF

_TIMER = "llvm.nvvm.read.ptx.sreg.globaltimer"
_DECLS = (
    f"declare i64 @{_TIMER}()",
    "declare i32 @llvm.nvvm.read.ptx.sreg.smid()",
    "declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)",
    *(f"declare i32 @llvm.nvvm.read.ptx.sreg.{r}.{a}()" for r in ("ctaid", "nctaid") for a in "xyz"),
)


def module_global() -> str:
    """The module global the runtime writes at load (the buffer, the trace id)."""
    return f"@{GLOBAL} = addrspace(1) externally_initialized global [2 x i64] zeroinitializer, align 8"


def declare(em: Any) -> None:
    for d in _DECLS:
        em.declare(d)


def entry_stamp() -> str:
    """The entry block's first line: the block's start."""
    return f"  %trace.t0 = call i64 @{_TIMER}()"


def stamp_wait(lines: list[str], wait: str) -> bool:
    """Put the wait stamp after the first `wait` line of `lines` (in place);
    whether there was one. The emitter places the kernel's one wait at its
    top level (the entry, or before a top-level op), so the stamp dominates
    the exit."""
    for i, line in enumerate(lines):
        if line == wait:
            lines.insert(i + 1, f"  %trace.tw = call i64 @{_TIMER}()")
            return True
    return False


def take_lines(mark: bool = False) -> list[str]:
    """The entry's end (in place of its `br label %start`): thread 0 reads the
    module global (the buffer, the trace id, the ring's mask), reserves the
    block's record and counts the block, two atomics; all of it is first used
    at the exit, so no round trip holds the block's SM slot at its end. With
    a `mark`, thread 0 also writes NO_WAIT into the record's wait field
    (`mark_lines` overwrites it) and the record's address is `%trace.mrec`."""
    gep = "getelementptr i8, ptr addrspace(1)"
    pre = [
        "  %trace.mmask = zext i32 %trace.mask0 to i64",
        "  %trace.midx = and i64 %trace.slot0, %trace.mmask",
        f"  %trace.mroff = mul i64 %trace.midx, {RECORD}",
        f"  %trace.mroff2 = add i64 %trace.mroff, {RECORDS + 24}",  # the record's wait field
        f"  %trace.mrec0 = {gep} %trace.buf0, i64 %trace.mroff2",
        "  store i32 -1, ptr addrspace(1) %trace.mrec0, align 8",  # NO_WAIT until a mark
    ] if mark else []
    return [
        "  %trace.me0 = icmp eq i32 %tid, 0",
        "  br i1 %trace.me0, label %trace.take, label %trace.took",
        "trace.take:",
        f"  %trace.buf0 = load ptr addrspace(1), ptr addrspace(1) @{GLOBAL}, align 8",
        f"  %trace.kidp0 = {gep} @{GLOBAL}, i64 8",
        "  %trace.kid0 = load i32, ptr addrspace(1) %trace.kidp0, align 8",
        f"  %trace.maskp0 = {gep} @{GLOBAL}, i64 12",
        "  %trace.mask0 = load i32, ptr addrspace(1) %trace.maskp0, align 4",
        "  %trace.slot0 = atomicrmw add ptr addrspace(1) %trace.buf0, i64 1 monotonic",
        f"  %trace.kslot = and i32 %trace.kid0, {KIDS - 1}",
        "  %trace.kslot64 = zext i32 %trace.kslot to i64",
        "  %trace.koff = mul i64 %trace.kslot64, 4",
        f"  %trace.koff2 = add i64 %trace.koff, {COUNTERS}",
        f"  %trace.ctr = {gep} %trace.buf0, i64 %trace.koff2",
        "  %trace.n0 = atomicrmw add ptr addrspace(1) %trace.ctr, i32 1 monotonic",
        *pre,
        "  br label %trace.took",
        "trace.took:",
        "  %trace.slot = phi i64 [ %trace.slot0, %trace.take ], [ 0, %entry ]",
        "  %trace.n = phi i32 [ %trace.n0, %trace.take ], [ 0, %entry ]",
        f"  %trace.buf = phi ptr addrspace(1) [ %trace.buf0, %trace.take ], [ @{GLOBAL}, %entry ]",
        "  %trace.kid = phi i32 [ %trace.kid0, %trace.take ], [ 0, %entry ]",
        "  %trace.mask = phi i32 [ %trace.mask0, %trace.take ], [ 0, %entry ]",
        *([f"  %trace.mrec = phi ptr addrspace(1) [ %trace.mrec0, %trace.take ], [ @{GLOBAL}, %entry ]"]
          if mark else []),
        "  br label %start",
    ]


def mark_lines(em: Any) -> None:
    """Thread 0 writes (timer - entry stamp) into its record's wait field
    (`take_lines(mark=True)`): a branch of the emitter's `em`."""
    me = em.emit("icmp eq i32 %tid, 0")
    go, done = em.new_label("trace_mark"), em.new_label("trace_marked")
    em.cbr(me, go, done)
    em.label(go)
    t = em.emit(f"call i64 @{_TIMER}()")
    d = em.emit(f"sub i64 {t}, %trace.t0")
    d32 = em.emit(f"trunc i64 {d} to i32")
    em.stmt(f"store i32 {d32}, ptr addrspace(1) %trace.mrec, align 8")
    em.br(done)
    em.label(done)


def exit_lines(waited: bool, marked: bool = False) -> list[str]:
    """The block's end: a barrier (the last warp's end), the exit stamp, and
    thread 0's record (plain stores into the slot it took at the entry).
    Ends in the label `trace.done`, before `ret void`. `marked` (and not
    `waited`): the wait field is the mark's (`mark_lines`), left as it is."""
    gep = "getelementptr i8, ptr addrspace(1)"
    wait = ("  %trace.dw64 = sub i64 %trace.tw, %trace.t0\n  %trace.dw = trunc i64 %trace.dw64 to i32"
            if waited else f"  %trace.dw = add i32 0, {NO_WAIT}")
    keep = marked and not waited
    return [
        "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)",
        f"  %trace.t1 = call i64 @{_TIMER}()",
        "  %trace.me = icmp eq i32 %tid, 0",
        "  br i1 %trace.me, label %trace.record, label %trace.done",
        "trace.record:",
        "  %trace.sm = call i32 @llvm.nvvm.read.ptx.sreg.smid()",
        *(f"  %trace.{r}{a} = call i32 @llvm.nvvm.read.ptx.sreg.{r}.{a}()" for r in ("ctaid", "nctaid") for a in "xyz"),
        "  %trace.nyz = mul i32 %trace.nctaidy, %trace.nctaidz",
        "  %trace.nb = mul i32 %trace.nctaidx, %trace.nyz",
        "  %trace.bx = mul i32 %trace.ctaidx, %trace.nyz",
        "  %trace.by = mul i32 %trace.ctaidy, %trace.nctaidz",
        "  %trace.bxy = add i32 %trace.bx, %trace.by",
        "  %trace.bid = add i32 %trace.bxy, %trace.ctaidz",
        "  %trace.mask64 = zext i32 %trace.mask to i64",
        "  %trace.big = icmp ugt i32 %trace.nb, 16777215",
        "  %trace.nb24 = select i1 %trace.big, i32 16777215, i32 %trace.nb",
        "  %trace.nbs = shl i32 %trace.nb24, 8",
        "  %trace.sm8 = and i32 %trace.sm, 255",
        "  %trace.smnb = or i32 %trace.sm8, %trace.nbs",
        "  %trace.idx = and i64 %trace.slot, %trace.mask64",
        f"  %trace.roff = mul i64 %trace.idx, {RECORD}",
        f"  %trace.roff2 = add i64 %trace.roff, {RECORDS}",
        f"  %trace.rec = {gep} %trace.buf, i64 %trace.roff2",
        "  store i32 %trace.kid, ptr addrspace(1) %trace.rec, align 16",
        f"  %trace.p4 = {gep} %trace.rec, i64 4",
        "  store i32 %trace.n, ptr addrspace(1) %trace.p4, align 4",
        f"  %trace.p8 = {gep} %trace.rec, i64 8",
        "  store i32 %trace.bid, ptr addrspace(1) %trace.p8, align 8",
        f"  %trace.p12 = {gep} %trace.rec, i64 12",
        "  store i32 %trace.smnb, ptr addrspace(1) %trace.p12, align 4",
        f"  %trace.p16 = {gep} %trace.rec, i64 16",
        "  store i64 %trace.t0, ptr addrspace(1) %trace.p16, align 16",
        *([] if keep else [*wait.split("\n"), f"  %trace.p24 = {gep} %trace.rec, i64 24",
                            "  store i32 %trace.dw, ptr addrspace(1) %trace.p24, align 8"]),
        "  %trace.d1 = sub i64 %trace.t1, %trace.t0",
        "  %trace.d1_32 = trunc i64 %trace.d1 to i32",
        f"  %trace.p28 = {gep} %trace.rec, i64 28",
        "  store i32 %trace.d1_32, ptr addrspace(1) %trace.p28, align 4",
        "  br label %trace.done",
        "trace.done:",
    ]
