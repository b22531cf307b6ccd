"""Reductions of tiles in a blocked layout: registers, then warp shuffles, then
shared memory across warps (`reduce_blocked`).

A reduction along dim `a` of a value in a blocked layout gives its result in
`Slice(a, layout)`: every thread ends with the totals of the rows it held, so
the usual next step (broadcast the result back over the row) moves nothing.
The three stages follow the layout (`codegen/views.py`):

1. registers: each thread folds its slots that differ only along `a`
   (masked lanes contribute the operation's identity);
2. lanes: the lanes along `a` form a butterfly inside the warp
   (`shfl.sync.bfly` over the lane-id bits of `a`'s digit), after which every
   lane of the group holds the group's total;
3. warps: when `a` spans W > 1 warps, the first lane of each group writes its
   partial to shared memory (`[output][warp]`), a barrier, and every thread
   folds the W partials of each output it holds, in warp order.

Several rows a thread take a transposing butterfly in stage 2 where it pays
(`codegen/reduce_xpose.py`). A result laid out apart from the input (a
Slice-layout input's; another layout) reduces the same way where its row is
long (`_apart_pays`), stage 3 then always through shared memory: the partials
at the output's row-major index from the input's coordinates, read where the
result's layout puts them (before, the whole tile was staged and each thread
summed whole rows).

Replicas (threads holding copies, for dims smaller than the layout's CTA
tile) fold the same values; only the first copy writes shared memory.
`argmax`/`argmin` carry (value, index) pairs, ties going to the smaller
index and NaN counting as the largest (first) value, as NumPy's. Float sums
are combined in another order than the interpreter's, which the IR allows;
f16/bf16 accumulate in f32 and round once at the end.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu.layouts import replicate_bound
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from . import reduce_xpose as xpose
from .accview import reduce_rows
from .llvm_types import reg_ty, smem_size
from .reduce_ops import identity, pick
from .reduce_staged import plan
from .replicated import all_gather, fold, is_rep
from .views import BlockedView, ChunkedView

R = ir.ReduceOp


def reduce_blocked(em: Any, op: ir.Reduce) -> bool:
    """Emit `op` when its input is in a blocked layout and its result in the
    matching slice (or a scalar); False when it does not apply."""
    if reduce_rows(em, op):
        return True
    x, r, axis = op.x, op.result, op.axis
    xv = em.lay(x)
    if not isinstance(xv, BlockedView):
        return False
    logical = [d for d in range(len(xv.dims)) if d != xv.drop]
    fa = logical[axis]
    rv = em.lay(r) if r.shape else None
    dt = x.dtype
    rop = op.op
    is_arg = rop in (R.ARGMAX, R.ARGMIN)
    acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
    # small tiles held whole by every thread (`codegen/replicated.py`)
    on = replicate_bound() > 0  # off: every kernel as before the option
    if on and not is_arg and is_rep(xv) and (rv is None or is_rep(rv)):
        vals = fold(em, xv, em.tile(x), axis, rv, lambda a, b: em.combine(rop, a, b, dt))
        vals = [em.round_to(v, dt) for v in vals]
        em.env[r.id] = vals if r.shape else vals[0]
        return True
    gather = (on and rv is not None and not is_arg and xv.drop is None and is_rep(rv)
              and not (rv.drop == fa and rv.layout == xv.layout))
    apart = False  # the result laid out apart from the input: the partials through shared memory, read in its layout
    if rv is not None and not gather:
        if not (isinstance(rv, BlockedView) and xv.drop is None and rv.drop == fa and rv.layout == xv.layout):
            if not _apart_pays(em, op, xv, rv, fa):
                return False
            apart = True
    elif rv is None and len(logical) != 1:
        return False
    ty = reg_ty(dt)
    m = xv.dims[fa]
    slots = em.tile(x)

    # 1. registers: fold the slots of each output
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, c in enumerate(xv.slots):
        key = tuple(0 if d == fa else v for d, v in enumerate(c))
        groups.setdefault(key, []).append(i)
    ident = identity(rop, dt)
    parts: dict[tuple[int, ...], tuple[str, str]] = {}
    tp_a = xv.tp(em, fa)
    for key, members in groups.items():
        items: list[tuple[str, str]] = []
        for i in members:
            v = xv.live_or(em, slots, i, ty, ident)
            idx = "0"
            if is_arg:
                c = xv.slots[i][fa]
                idx = str(c) if tp_a == "0" else (tp_a if c == 0 else em.emit(f"add i32 {tp_a}, {c}"))
            items.append((v, idx))
        if rop is R.SUM and dt.is_float and len(items) > 2:
            # chains of 8 (a product summed into a chain is one FMA:
            # `fmul contract` + `fadd contract`), then a tree over the chains
            chains = []
            for c in range(0, len(items), 8):
                acc_v = items[c][0]
                for v, _ in items[c + 1:c + 8]:
                    acc_v = em.combine(rop, acc_v, v, dt)
                chains.append((acc_v, "0"))
            items = chains
        # a balanced tree: independent combines in flight instead of one long chain
        while len(items) > 1:
            nxt = []
            for a, b in zip(items[0::2], items[1::2], strict=False):
                nxt.append(pick(em, rop, a, b, dt) if is_arg else (em.combine(rop, a[0], b[0], dt), "0"))
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        parts[key] = items[0]

    # 2. lanes: a butterfly over the lane bits of dim `fa` (a transposing one for several rows a thread)
    lanes = m.lanes
    W = m.warps
    masks = [1 << (m.lshift + b) for b in range(lanes.bit_length() - 1)]
    held: list[list[str]] | None = None  # the rows a lane holds after a transposing butterfly (W > 1)
    halved = 0
    exchange = W > 1 or apart  # the partials meet in shared memory
    if not gather and rv is not None and xpose.pays(len(parts), lanes, not exchange):
        keys = list(parts)
        tys, sdts = [reg_ty(dt)] + (["i32"] if is_arg else []), [acc_dt] + ([DType.I32] if is_arg else [])
        rows = [[v, idx][:len(sdts)] for v, idx in parts.values()]
        if exchange:  # each row's output slot and whether it is live follow it (`scatter`'s selects)
            where = {tuple(c): n for n, c in enumerate(rv.slots)} if not apart else {}
            for key, row in zip(keys, rows, strict=True):
                if apart:
                    valid, f = _out_slot(em, xv, fa, key, r.shape)
                    row += [valid or "true", f]
                    continue
                k, j = divmod(where[key], rv.V)
                row += [rv.chunk_valid(em, k) or "true", rv.flat(em, k, j)]
            tys += ["i1", "i32"]
        pad = [ident, "0"][:len(sdts)] + (["false", "0"] if exchange else [])
        rows += [list(pad) for _ in range((1 << (len(rows) - 1).bit_length()) - len(rows))]

        def both(kept: list[str], got: list[str]) -> list[str]:
            if is_arg:
                return list(pick(em, rop, (kept[0], kept[1]), (got[0], got[1]), dt))
            return [em.combine(rop, kept[0], got[0], dt)]

        cur, levels = xpose.scatter(em, masks, rows, tys, sdts, both)
        halved = len(levels)
        if exchange:
            held = cur
        else:
            full = xpose.gather(em, cur, levels, tys, sdts)
            parts = {key: (row[0], row[1] if is_arg else "0") for key, row in zip(keys, full, strict=False)}
    else:
        for key, (v, idx) in list(parts.items()):
            for mask in masks:
                ov = em.shfl_xor(v, acc_dt, mask)
                if is_arg:
                    oi = em.shfl_xor(idx, DType.I32, mask)
                    v, idx = pick(em, rop, (v, idx), (ov, oi), dt)
                else:
                    v = em.combine(rop, v, ov, dt)
            parts[key] = (v, idx)

    if gather:  # 3. every output to every thread (`replicated.all_gather`)
        assert rv is not None
        vals = all_gather(em, op, xv, rv, fa, {k: v for k, (v, _) in parts.items()},
                          {k: ms[0] for k, ms in groups.items()}, acc_dt,
                          lambda a, b: em.combine(rop, a, b, dt))
        em.env[r.id] = [em.round_to(v, dt) for v in vals]
        return True

    if apart:  # 3. every output's partials through shared memory, read where the result's layout puts them
        assert rv is not None
        em.env[r.id] = _exchange_apart(em, op, xv, fa, parts, held, halved)
        return True

    # 3. warps: partials through shared memory
    out_keys = [tuple(c) for c in rv.slots] if rv is not None else list(parts)
    if rv is not None:
        missing = [k for k in out_keys if k not in parts]
        assert not missing, (xv, rv, missing[:3])
    if W > 1:
        n_out = rv.numel if rv is not None else 1
        esz = smem_size(acc_dt)
        size_v = -(-(n_out * W * esz) // 16) * 16
        nbytes = size_v + (-(-(n_out * W * 4) // 16) * 16 if is_arg else 0)
        start, fresh, first = _scratch(em, nbytes, op.span)
        off_v, off_i = start, start + size_v
        wa = xv.warp_digit(em, fa)
        # the writing lanes: the first along `fa` (after a transposing butterfly, the first 2^halved: one a row)
        lane_w = (em.emit(f"icmp ult i32 {xv.lane_digit(em, fa)}, {1 << halved}") if halved
                  else em.emit(f"icmp eq i32 {xv.lane_digit(em, fa)}, 0")) if m.tpw > 1 else None
        conds = [lane_w,
                 em.emit(f"icmp ult i32 {wa}, {W}") if m.wpc > W else None,
                 xv.owner(em, skip=fa)]
        writer = em.and_all(conds)
        if fresh:
            em.scratch_barrier(first)
        flats = []

        def write(v: str, idx: str, valid: str | None, f: str) -> None:
            base = f if W == 1 else em.emit(f"mul i32 {f}, {W}")
            slot = em.emit(f"add i32 {base}, {wa}")
            go, jn = em.new_label("rw"), em.new_label("rx")
            em.cbr(em.and_all([writer, valid]) or "true", go, jn)
            em.label(go)
            em.smem_store(off_v, acc_dt, slot, v)
            if is_arg:
                em.smem_store(off_i, DType.I32, slot, idx)
            em.br(jn)
            em.label(jn)

        for n, key in enumerate(out_keys):
            if rv is not None:
                k, j = divmod(n, rv.V)
                valid = rv.chunk_valid(em, k)
                f = rv.flat(em, k, j)
            else:
                valid, f = None, "0"
            flats.append((valid, f))
            if held is None:
                write(*parts[key], valid, f)
        for row in held or []:  # the rows this lane holds, with their slots
            write(row[0], row[1] if is_arg else "0", row[-2], row[-1])
        em.barrier()
        em._red_mark = (em._bars, off_v, start + nbytes)
        for key, (valid, f) in zip(out_keys, flats, strict=True):
            base = em.emit(f"mul i32 {em.safe_index(valid, f)}, {W}")
            acc = None
            for w in range(W):
                ix = base if w == 0 else em.emit(f"add i32 {base}, {w}")
                pv = em.smem_load(off_v, acc_dt, ix)
                pi = em.smem_load(off_i, DType.I32, ix) if is_arg else "0"
                if acc is None:
                    acc = (pv, pi)
                elif is_arg:
                    acc = pick(em, rop, acc, (pv, pi), dt)
                else:
                    acc = (em.combine(rop, acc[0], pv, dt), "0")
            assert acc is not None
            parts[key] = acc

    vals = []
    for key in out_keys:
        v, idx = parts[key]
        if is_arg:
            vals.append(em.cast(idx, DType.I32, r.dtype) if r.dtype is not DType.I32 else idx)
        else:
            vals.append(em.round_to(v, dt))
    em.env[r.id] = vals if r.shape else vals[0]
    return True


def _scratch(em: Any, nbytes: int, span: Any) -> tuple[int, bool, bool]:
    """The partials' buffer: (its start, whether a barrier must come before its writes, whether it is the
    kernel's first scratch use). Two scratch buffers taken in turn: when the previous shared-memory user was a
    reduction like this one and no barrier came since its own, every thread has finished reading that one's
    buffer once it reaches our barrier, so writing the other buffer needs no barrier before it."""
    mark = em._red_mark
    start: int | None = None
    if mark is not None and mark[0] == em._bars:
        start = 0 if mark[1] != 0 else -(-mark[2] // 16) * 16
        if start + nbytes > mark[1] and start < mark[2]:  # cannot fit beside it
            start = None
    fresh = start is None
    first = fresh and em.scratch_fresh()
    start = 0 if start is None else start
    em.need_smem(start + nbytes, span)
    return start, fresh, first


def _apart_pays(em: Any, op: ir.Reduce, xv: BlockedView, rv: Any, fa: int) -> bool:
    """Whether a blocked input whose result is laid out apart from it (a Slice-layout input's, or another
    layout's) reduces here, its partials through shared memory: where the staged path would take groups of
    threads (`reduce_staged.plan`: a long row), which this beats (no staging of the tile); short rows keep the
    serial loop (the decode kernels' sums of 4)."""
    if op.x.dtype is DType.BOOL or not isinstance(rv, BlockedView | ChunkedView) or rv.T != em.T:
        return False
    n_out = 1
    for n in op.result.shape:
        n_out *= n
    return plan(em.T, n_out, xv.dims[fa].size, rv.E) is not None


def _out_slot(em: Any, xv: BlockedView, fa: int, key: tuple[int, ...], rshape: tuple[int, ...]) -> tuple[str | None, str]:
    """(live, row-major index in the result) of the output that this thread's slots of constant coordinates
    `key` (dim `fa` zeroed) reduce into, from the input's coordinates: None when always live."""
    coords, conds = [], []
    for d, m in enumerate(xv.dims):
        if d in (fa, xv.drop):
            continue
        tp = xv.tp(em, d)
        c = key[d]
        coords.append(str(c) if tp == "0" else tp if c == 0 else em.emit(f"add i32 {tp}, {c}"))
        if m.extent != m.size and c + (m.positions - 1) * m.s >= m.size:
            conds.append(em.emit(f"icmp ult i32 {tp}, {m.size - c}"))
    return em.and_all(conds), em.linear(coords, rshape)


def _exchange_apart(em: Any, op: ir.Reduce, xv: BlockedView, fa: int, parts: dict[tuple[int, ...], tuple[str, str]],
                    held: list[list[str]] | None, halved: int) -> list[str]:
    """Step 3 for a result laid out apart from the input: the first lane (after a transposing butterfly, the
    first 2^halved) of each warp along `fa`, first copy, writes each output's partial at [output][warp], a
    barrier, and each thread folds the partials of its result slots in warp order."""
    r, dt, rop = op.result, op.x.dtype, op.op
    is_arg = rop in (R.ARGMAX, R.ARGMIN)
    acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
    m = xv.dims[fa]
    W = m.warps
    n_out = 1
    for n in r.shape:
        n_out *= n
    size_v = -(-(n_out * W * smem_size(acc_dt)) // 16) * 16
    nbytes = size_v + (-(-(n_out * W * 4) // 16) * 16 if is_arg else 0)
    start, fresh, first = _scratch(em, nbytes, op.span)
    off_v, off_i = start, start + size_v
    wa = xv.warp_digit(em, fa)
    lane = xv.lane_digit(em, fa)
    conds = [(em.emit(f"icmp ult i32 {lane}, {1 << halved}") if halved else em.emit(f"icmp eq i32 {lane}, 0"))
             if m.tpw > 1 else None,
             em.emit(f"icmp ult i32 {wa}, {W}") if m.wpc > W else None,
             xv.owner(em, skip=fa)]
    writer = em.and_all(conds)
    if fresh:
        em.scratch_barrier(first)
    if held is None:
        writes = [(v, idx, *_out_slot(em, xv, fa, key, r.shape)) for key, (v, idx) in parts.items()]
    else:
        writes = [(row[0], row[1] if is_arg else "0", row[-2], row[-1]) for row in held]
    for v, idx, valid, f in writes:
        slot = f if W == 1 else em.emit(f"add i32 {em.emit(f'mul i32 {f}, {W}')}, {wa}")
        go, jn = em.new_label("rw"), em.new_label("rx")
        em.cbr(em.and_all([writer, valid]) or "true", go, jn)
        em.label(go)
        em.smem_store(off_v, acc_dt, slot, v)
        if is_arg:
            em.smem_store(off_i, DType.I32, slot, idx)
        em.br(jn)
        em.label(jn)
    em.barrier()
    em._red_mark = (em._bars, off_v, start + nbytes)
    vals = []
    for _, _, f in em.out_slots(r):
        base = f if W == 1 else em.emit(f"mul i32 {f}, {W}")
        acc: tuple[str, str] | None = None
        for w in range(W):
            ix = base if w == 0 else em.emit(f"add i32 {base}, {w}")
            pv = em.smem_load(off_v, acc_dt, ix)
            pi = em.smem_load(off_i, DType.I32, ix) if is_arg else "0"
            acc = (pv, pi) if acc is None else pick(em, rop, acc, (pv, pi), dt) if is_arg \
                else (em.combine(rop, acc[0], pv, dt), "0")
        assert acc is not None
        vals.append((em.cast(acc[1], DType.I32, r.dtype) if r.dtype is not DType.I32 else acc[1]) if is_arg
                    else em.round_to(acc[0], dt))
    return vals


__all__ = ["reduce_blocked"]
