"""Code generation of the per-thread load rings (`passes/stream_loads.py`):
`RingCopy` (cp.async of the chunks a thread would load, into its own slots)
and `RingRead` (those slots back into registers, as the load would give them).

Slot layout of one stage: chunk k of thread t at byte (k * T + t) * 16, T the
block's threads. A warp's 16-byte shared accesses of one chunk index are 512
consecutive bytes: the four phases of a 128-bit access, no bank conflict.
Chunks are wholly in or out of the tensor (the pass checked the facts), so
a copy is `cp.async.cg` of 16 bytes, or of 0 (zero-fill) past the edge.

A ring's bytes are read once a launch. With the kernel hinted `evict_first`
(or `Target.l2_evict` "1"), its copies carry an L2 cache policy made once at
the entry (`createpolicy.fractional.L2::evict_first`, `.L2::cache_hint`), so
a stream larger than the L2 evicts its own lines before anything else there:
the code, the launch's parameters and the partials the next kernel reads
stay in L2 (measured on the H200, RESULTS.md, issue 15, h15d, 2026-12-04).
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
    slot = em.emit(f"shl i32 {em.emit(f'add i32 {em.tid0()}, {k * em.T}')}, 4")
    return str(em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {em.emit(f'add i32 {base}, {slot}')}"))


def _policy(em: Any) -> str | None:
    """The kernel's evict-first L2 policy register (made once, at the entry),
    or None where its ring copies take the default priority."""
    mode = getattr(em, "l2_evict", "")
    if not (mode == "1" or (mode == "" and em.k.source.evict_first)):
        return None
    if getattr(em, "_ring_policy", None) is None:
        em._ring_policy = em.entry_emit(
            'call i64 asm sideeffect "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"()')
        # ptxas 13.0 (and 13.1, 13.3 by others' reports) miscompiles a
        # `cp.async` with a cache policy whose shared address it splits into
        # a thread part and a uniform one ([R+UR] and desc[UR] in one
        # LDGSTS: it encodes undefined registers, an illegal instruction at
        # run time; seen on the H200, 2026-12-04). Any uniform addend can
        # take that slot: the ring's stage offset (std's decode split), or
        # an opaque zero added to the address (the engine's LM head and
        # streamed GEMVs under `TILEC_L2_EVICT=1`: ptxas reads `%clock64`
        # as warp-uniform). So a copy's address is a select on a true that
        # ptxas cannot prove (the top bit of the 64-bit clock is 0), a
        # value it cannot split (`_hinted_slots`).
        top = em.entry_emit(
            'call i32 asm sideeffect "{ .reg .b64 c; mov.u64 c, %clock64; shr.u64 c, c, 63; '
            'cvt.u32.u64 $0, c; }", "=r"()')
        em._ring_keep = em.entry_emit(f"icmp eq i32 {top}, 0")
    return str(em._ring_policy)


def _cp_async(em: Any, dst: str, src: str, size: str, policy: str | None) -> None:
    """One 16-byte `cp.async.cg` of `size` (16 or 0) source bytes into `dst`
    (a `ptr addrspace(3)`; with the L2 cache policy `policy`, an i32 shared
    address from `_hinted_slots`)."""
    if policy is None:
        em.stmt(f"call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) {dst}, "
                f"ptr addrspace(1) {src}, i32 {size})")
        return
    em.stmt('call void asm sideeffect "cp.async.cg.shared.global.L2::cache_hint [$0], [$1], 16, $2, $3;", '
            f'"r,l,r,l"(i32 {dst}, ptr addrspace(1) {src}, i32 {size}, i64 {policy})')


def _hinted_slots(em: Any, buf: Any, stage: str, stage_bytes: int, chunks: int) -> list[str]:
    """The i32 shared addresses of this thread's `chunks` chunks in stage
    `stage` of ring `buf`, for copies with a cache policy: chunk 0's through
    a select on the opaque true `_ring_keep` (a value ptxas cannot split into
    a thread part and a uniform one), chunk k's that plus a constant (an
    immediate offset in the instruction)."""
    first = em.emit(f"ptrtoint ptr addrspace(3) {_slot(em, buf, stage, stage_bytes, 0)} to i32")
    base = em.emit(f"select i1 {em._ring_keep}, i32 {first}, i32 0")
    return [base] + [em.emit(f"add i32 {base}, {k * em.T * 16}") for k in range(1, chunks)]


def ring_copy(em: Any, op: g.RingCopy) -> None:
    info = em.tensors[op.tensor]
    policy = _policy(em)
    lay = view_of(op.layout, op.type.shape, em.T, op.type.dtype.itemsize)
    stage_bytes = em.env[op.dst.id].stage_bytes
    offsets = [em.scalar(o) for o in op.offsets]
    stage = em.scalar(op.stage)
    em.declare("declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)")
    go, done = em.new_label("rc"), em.new_label("rd")
    em.cbr(em.scalar(op.pred), go, done)
    em.label(go)
    hinted = _hinted_slots(em, op.dst, stage, stage_bytes, lay.K) if policy else None

    def dst(k: int) -> str:
        return hinted[k] if hinted is not None else _slot(em, op.dst, stage, stage_bytes, k)

    deltas = _chunk_deltas(em, info, lay)
    if deltas is not None:
        # The whole tile in the tensor (every copy but an edge tile's): one
        # bounds test for the tile, and chunk k's address is chunk 0's plus a
        # loop-invariant distance, instead of a bounds test, a 64-bit address
        # and a select per chunk.
        fast, slow = em.new_label("rf"), em.new_label("rs")
        em.cbr(_tile_inside(em, info, offsets, op.type.shape), fast, slow)
        em.label(fast)
        mty = em.mty(info)
        addr = em.address(info, em._chunk_coords(lay, 0, offsets))
        for k, dk in enumerate(deltas):
            if dk != "0":
                addr = em.emit(f"getelementptr {mty}, ptr addrspace(1) {addr}, i64 {dk}")
            _cp_async(em, dst(k), addr, "16", policy)
        em.br(done)
        em.label(slow)
    for k in range(lay.K):
        coords = em._chunk_coords(lay, k, offsets)
        whole = em.and_all([em.chunk_valid(lay, k), em.in_bounds(info, coords, lay.V)])
        addr = em.address(info, coords)
        if whole is not None:
            addr = em.emit(f"select i1 {whole}, ptr addrspace(1) {addr}, ptr addrspace(1) {info.base}")
            size = em.emit(f"select i1 {whole}, i32 16, i32 0")
        else:
            size = "16"
        _cp_async(em, dst(k), addr, size, policy)
    em.br(done)
    em.label(done)


def _chunk_deltas(em: Any, info: Any, lay: Any) -> list[str] | None:
    """Element distance (i64) in the tensor from this thread's chunk 0 to each
    of its chunks, when every chunk is live for every thread and the chunks
    sit at constant coordinate offsets from each other (a blocked layout:
    coordinate = thread part + a constant of the slot); None otherwise."""
    slots = getattr(lay, "slots", None)
    if slots is None or getattr(lay, "drop", 1) is not None:
        return None
    if any(lay.chunk_valid(em, k) is not None for k in range(lay.K)):
        return None
    strides = em.tensor_strides(info)
    out = []
    for k in range(lay.K):
        terms = []
        const = 0
        for d, st in enumerate(strides):
            dd = slots[k * lay.V][d] - slots[max(k - 1, 0) * lay.V][d]
            if dd == 0:
                continue
            if st.lstrip("-").isdigit():
                const += dd * int(st)
            else:
                terms.append(em.entry_emit(f"mul i64 {st}, {dd}"))
        if const:
            terms.append(str(const))
        acc = terms[0] if terms else "0"
        for t in terms[1:]:
            acc = em.entry_emit(f"add i64 {acc}, {t}")
        out.append(acc)
    return out


def _tile_inside(em: Any, info: Any, offsets: list[str], shape: tuple[int, ...]) -> str:
    """i1: the tile of `shape` at element `offsets` lies wholly inside the tensor."""
    conds = []
    for d, (o, n) in enumerate(zip(offsets, shape, strict=True)):
        dim = info.dims[d]
        conds.append(em.emit(f"icmp ult i32 {o}, {dim}"))
        if n > 1:
            conds.append(em.emit(f"icmp uge i32 {em.emit(f'sub i32 {dim}, {o}')}, {n}"))
    return em.and_all(conds) or "true"


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
        out += _unpack(em, vec, lay.V, dt, mt)
    em.env[r.id] = out


def _unpack(em: Any, vec: str, V: int, dt: Any, mt: str) -> list[str]:
    """The V elements of a slot's vector `<V x mt>` as registers. bf16 pairs
    are split with integer ops: a bf16 is the top half of the f32 of the same
    value, so the low element is the word shifted left by 16 and the high one
    the word with its low half cleared, one instruction each (`fpext` of the
    high half costs a byte permute and a shift)."""
    if mt != "bfloat" or V % 2:
        return [em.mem_to_reg(em.emit(f"extractelement <{V} x {mt}> {vec}, i32 {j}"), dt, mt) for j in range(V)]
    words = em.emit(f"bitcast <{V} x bfloat> {vec} to <{V // 2} x i32>")
    out = []
    for i in range(V // 2):
        w = em.emit(f"extractelement <{V // 2} x i32> {words}, i32 {i}")
        out.append(em.emit(f"bitcast i32 {em.emit(f'shl i32 {w}, 16')} to float"))
        out.append(em.emit(f"bitcast i32 {em.emit(f'and i32 {w}, -65536')} to float"))
    return out
