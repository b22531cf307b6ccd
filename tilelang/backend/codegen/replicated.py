"""Small tiles held whole by every thread (the replicated layout,
`layouts.replicated_for`; opt-in, `TILEC_REPLICATE_SMALL`).

- `gather`: a value in any layout read from a replicated one in registers:
  each of the destination's slots takes the source element at its
  coordinates, a constant slot where they are constants (a replicated or
  register-walked dim), else a select over the source's values by the bits
  of the run-time index (n - 1 selects for n values). Broadcasts, reshapes
  and conversions out of the replicated layout move no data between threads.
- `all_gather`: the last step of a reduction whose result is replicated:
  one copy of each partial (per output, per warp along the reduced dim) is
  written to shared memory, one barrier, and every thread reads all of them
  and folds them in warp order, so every thread ends with every total.
- `fold`: a reduction of a replicated value, in each thread's registers.

Replicated values are plain blocked views whose every dim sits at thread
position 0 (`BlockedView` with `positions == 1` everywhere): slot i holds the
element at its constant coordinates `slots[i]`.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .llvm_types import reg_ty, smem_size
from .views import BlockedView, strides_of


def is_rep(v: object) -> TypeGuard[BlockedView]:
    """`v` is a view in which every thread holds every element."""
    return isinstance(v, BlockedView) and all(m.positions == 1 for m in v.dims)


def rep_index(v: BlockedView) -> dict[tuple[int, ...], int]:
    """A replicated view's slot of each element, by logical coordinates."""
    return {tuple(c for d, c in enumerate(cs) if d != v.drop): i for i, cs in enumerate(v.slots)}


def _const(x: str) -> int | None:
    return int(x) if x.lstrip("-").isdigit() else None


def pick(em: Any, vals: list[str], idx: str, ty: str) -> str:
    """`vals[idx]` for an i32 `idx` known only at run time: a tree of selects
    on its bits (`vals` padded to a power of two with its last value; an
    index past the end, on a masked lane, reads some value, never memory)."""
    c = _const(idx)
    if c is not None:
        return vals[min(c, len(vals) - 1)]
    n = 1
    while n < len(vals):
        n *= 2
    level = vals + [vals[-1]] * (n - len(vals))
    bit = 0
    while len(level) > 1:
        b = em.emit(f"and i32 {idx}, {1 << bit}")
        on = em.emit(f"icmp ne i32 {b}, 0")
        level = [em.emit(f"select i1 {on}, {ty} {level[2 * i + 1]}, {ty} {level[2 * i]}")
                 for i in range(len(level) // 2)]
        bit += 1
    return level[0]


def gather(em: Any, src: BlockedView, vals: list[str], dt: DType, dst: Any,
           align: list[int | None] | None) -> list[str]:
    """`dst`'s slots read from the replicated `src` (values `vals`): element
    coordinates through `align` (dim i of `dst` reads dim `align[i]` of
    `src`, None: a dim `src` broadcasts), or, with `align` None, the same
    row-major index (a reshape)."""
    index = rep_index(src)
    shape = src.shape
    order = [index[c] for c in _coords(shape)]  # slot of each element, row-major
    flat_vals = [vals[i] for i in order]
    ty = reg_ty(dt)
    out = []
    for k in range(dst.K):
        for j in range(dst.V):
            if align is None:
                f = dst.flat(em, k, j)
            else:
                cs = dst.slot_coords(em, k, j)
                want = ["0"] * len(shape)
                for i, a in enumerate(align):
                    if a is not None and shape[a] != 1:
                        want[a] = cs[i]
                f = _linear(em, want, shape)
            out.append(pick(em, flat_vals, f, ty))
    return out


def _coords(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = [()]
    for n in shape:
        out = [(*c, i) for c in out for i in range(n)]
    return out


def _linear(em: Any, coords: list[str], shape: tuple[int, ...]) -> str:
    """The row-major index of `coords` (constants folded here, so a constant
    index stays a literal and picks its slot without a select)."""
    total = 0
    terms = []
    for c, s, n in zip(coords, strides_of(shape), shape, strict=True):
        if n == 1:
            continue
        k = _const(c)
        if k is not None:
            total += k * s
        else:
            terms.append(c if s == 1 else em.emit(f"mul i32 {c}, {s}"))
    if not terms:
        return str(total)
    acc = terms[0]
    for t in terms[1:]:
        acc = em.emit(f"add i32 {acc}, {t}")
    return acc if total == 0 else em.emit(f"add i32 {acc}, {total}")


def all_gather(em: Any, op: ir.Reduce, xv: BlockedView, rv: BlockedView, fa: int,
               parts: dict[tuple[int, ...], str], reps: dict[tuple[int, ...], int], acc_dt: DType,
               combine: Any) -> list[str]:
    """Every thread's copy of every output of a reduction along `fa` of `xv`
    whose partials the threads hold (`parts`: by constant output slot of
    `xv`, after the lanes' butterfly; `reps`: a slot of `xv` of each): the
    first copy of each partial is stored at [output, warp digit along `fa`]
    in shared memory, a barrier, then each thread folds all of them for
    every output, in warp order. Returns the totals (accumulation type) in
    `rv`'s slot order."""
    m = xv.dims[fa]
    W = m.warps
    rshape = rv.shape
    logical = [d for d in range(len(xv.dims)) if d != fa]
    if W == 1 and all(xv.dims[d].warps == 1 for d in logical):
        return _shuffle_gather(em, xv, rv, logical, parts, acc_dt)
    n_out = len(_coords(rshape))
    nbytes = -(-(n_out * W * smem_size(acc_dt)) // 16) * 16
    # the scratch's other half when the previous user was a reduction with no
    # barrier since (as `reduce_blocked` does), else a barrier before the writes
    mark = em._red_mark
    start: int | None = None
    if mark is not None and mark[0] == em._bars:
        start = 0 if mark[1] != 0 else -(-mark[2] // 16) * 16
        if start + nbytes > mark[1] and start < mark[2]:
            start = None
    fresh = start is None
    first = fresh and em.scratch_fresh()
    start = 0 if start is None else start
    em.need_smem(start + nbytes, op.span)
    wd = xv.warp_digit(em, fa) if m.wpc > 1 else "0"
    writer = em.and_all([
        em.emit(f"icmp eq i32 {xv.lane_digit(em, fa)}, 0") if m.tpw > 1 else None,
        em.emit(f"icmp ult i32 {wd}, {W}") if m.wpc > W else None,
        xv.owner(em, skip=fa),
    ])
    if fresh:
        em.scratch_barrier(first)
    for key, v in parts.items():
        i = reps[key]
        cs = xv.full_coords(em, i // xv.V, i % xv.V)
        live = [em.emit(f"icmp ult i32 {cs[d]}, {xv.dims[d].size}") for d in logical
                if xv.dims[d].extent != xv.dims[d].size and _const(cs[d]) is None]
        if any((n := _const(cs[d])) is not None and n >= xv.dims[d].size for d in logical):
            continue  # a masked slot in every thread
        f = _linear(em, [cs[d] for d in logical], rshape)
        slot = f if W == 1 else em.emit(f"add i32 {_mul(em, f, W)}, {wd}")
        go, jn = em.new_label("ag"), em.new_label("agj")
        em.cbr(em.and_all([writer, *live]) or "true", go, jn)
        em.label(go)
        em.smem_store(start, acc_dt, slot, v)
        em.br(jn)
        em.label(jn)
    em.barrier()
    em._red_mark = (em._bars, start, start + nbytes)
    totals: list[str] = []
    for o in range(n_out):
        acc = em.smem_load(start, acc_dt, str(o * W))
        for w in range(1, W):
            acc = combine(acc, em.smem_load(start, acc_dt, str(o * W + w)))
        totals.append(acc)
    index = rep_index(rv)
    by_slot = [""] * rv.E
    for o, c in enumerate(_coords(rshape)):
        by_slot[index[c]] = totals[o]
    return by_slot


def _shuffle_gather(em: Any, xv: BlockedView, rv: BlockedView, logical: list[int],
                    parts: dict[tuple[int, ...], str], acc_dt: DType) -> list[str]:
    """`all_gather` where every warp holds every output (the reduced dim on
    no warp, the others on lanes only): output o read from the lane and slot
    that hold it, known here, by one `shfl.sync.idx` each; no shared memory."""
    from .scan import shfl

    index = rep_index(rv)
    out = [""] * rv.E
    for oc in _coords(rv.shape):
        lane = 0
        key = [0] * len(xv.dims)
        for d, x in zip(logical, oc, strict=True):
            mp = xv.dims[d]
            if mp.repl:
                pos, c = divmod(x, mp.s)
            else:
                rep, within = divmod(x, mp.cov)
                pos, e = divmod(within, mp.s)
                c = rep * mp.cov + e
            lane |= (pos % mp.tpw) << mp.lshift
            key[d] = c
        out[index[oc]] = shfl(em, "idx", parts[tuple(key)], acc_dt, lane)
    return out


def fold(em: Any, xv: BlockedView, vals: list[str], axis: int, rv: BlockedView | None,
         combine: Any) -> list[str]:
    """A reduction along `axis` of the replicated `xv` (values `vals`), in
    each thread's registers: a balanced tree over each output's elements.
    Returns the totals in `rv`'s slot order (one, for a scalar result)."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for c, i in sorted(rep_index(xv).items()):
        groups.setdefault(c[:axis] + c[axis + 1:], []).append(vals[i])
    totals = {}
    for key, items in groups.items():
        while len(items) > 1:
            nxt = [combine(a, b) for a, b in zip(items[0::2], items[1::2], strict=False)]
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        totals[key] = items[0]
    if rv is None:
        return [totals[()]]
    out = [""] * rv.E
    for c, i in rep_index(rv).items():
        out[i] = totals[c]
    return out


def _mul(em: Any, f: str, n: int) -> str:
    c = _const(f)
    return str(c * n) if c is not None else em.emit(f"mul i32 {f}, {n}")


__all__ = ["all_gather", "fold", "gather", "is_rep", "pick", "rep_index"]
