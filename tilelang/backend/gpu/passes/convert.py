"""Pass `convert`: make every layout change an explicit `ConvertLayout`.

After `layout_assign`, a value may be defined in one layout and read where
another is needed. The rules (which operands an op needs in which layout):

- element-wise ops and casts: every tile operand in the result's layout;
- a load's mask in the result's layout; a store's mask in the stored
  value's; an atomic's tile indices and mask in its value's;
- `mma` on the FMA or mma.sync engine: the accumulator in the result's
  layout (unless that is the register-resident `MmaAcc` of a fused loop);
- a loop's inits and yields in its carried values' layouts; an `if`'s
  yields in its results';
- a value in a tensor-core accumulator layout (`MmaAcc`) read by any other
  op: converted to the blocked layout of its shape first.

Reductions, scans, broadcasts, reshapes, permutes, stores, prints and
asserts take any layout (the code generator moves data when it must).
Ops on the Hopper path (wgmma, its waits, an epilogue whose operands all
share the wgmma accumulator's layout) need no conversion. A value converted
to a layout once is reused by later uses in the same region (and the regions
nested after it). The code generator lowers `ConvertLayout` in registers when
every thread already holds what it needs (`codegen/views.register_map`) and
through shared memory otherwise.
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import (
    Barriers,
    Blocked,
    Layout,
    MmaAcc,
    Shared,
    Slice,
    WgmmaAcc,
    blocked_for,
    replicate_bound,
)
from .context import Fresh, PassContext
from .layout_assign import broadcast_backward, reshape_backward
from .rewrite import map_ops, substitute, uses, with_regions


def _wants(op: object, layouts: dict[int, Layout]) -> list[tuple[int, ir.Value, Layout]]:
    """(operand position, operand, layout it must be in) for the op's constrained operands."""
    out: list[tuple[int, ir.Value, Layout]] = []
    ops = g.operands(op)

    def want(v: ir.Value | None, lay: Layout | None) -> None:
        if v is None or lay is None or not v.shape:
            return
        for i, o in enumerate(ops):
            if o is v:
                out.append((i, v, lay))

    match op:
        case ir.Elementwise(result=r) | ir.Cast(result=r):
            for v in ops:
                want(v, layouts.get(r.id))
        case ir.Load(result=r, mask=m):
            want(m, layouts.get(r.id))
        case ir.Store(value=v, mask=m):
            want(m, layouts.get(v.id))
        case ir.AtomicRMW(value=v, indices=ix, mask=m):
            ref = v if v.shape else next((i for i in ix if i.shape), None)
            if ref is not None:
                for x in (*ix, m, v):
                    if x is not None and x is not ref:
                        want(x, layouts.get(ref.id))
        case g.DotOp(result=r, acc=acc, engine=e) if e != "wgmma":
            lr = layouts.get(r.id)
            if not isinstance(lr, MmaAcc):
                want(acc, lr)
        case ir.Mma(result=r, acc=acc):
            want(acc, layouts.get(r.id))
    return out


def _exempt(op: object, layouts: dict[int, Layout]) -> bool:
    """Ops on the Hopper path, which read accumulator layouts themselves."""
    if isinstance(op, ir.Yield | g.Wgmma | g.WgmmaRegA | g.WgmmaWait | g.ConvertLayout):
        return True
    if isinstance(op, g.DotOp):
        # the FMA and mma.sync engines read the accumulator's registers as the result's
        # (`codegen/mma.py`): converted where its layout is another (`_wants`); all
        # DotOps were exempt, and an accumulator in another layout (a tile whose layout
        # a reduction chose, `mma(a, b, b)`) was summed into the wrong elements
        return op.engine == "wgmma"
    if isinstance(op, ir.Elementwise | ir.Cast | ir.Store):
        tiles = [v for v in (*g.operands(op), *g.results(op)) if v.shape]
        lays = {layouts.get(v.id) for v in tiles}
        return len(lays) == 1 and isinstance(next(iter(lays)), WgmmaAcc)
    return False


def _register(lay: Layout | None) -> bool:
    return lay is not None and not isinstance(lay, Shared | Barriers)


def if_push_enabled() -> bool:
    """`TILEC_IF_PUSH` (unset or "1": on; "0": off, as before 2026-12-06 hcliff4): an `if` whose branch yields a
    value made before the `if` in another layout than the `if`'s result converts it before the `if` (and before
    the loops around it that do not change it: once, not every iteration), and a nested `if`'s result that a
    branch yields as it is takes the outer result's layout, its own branches converting instead. tests/user
    a05's max-pool picked the window's even or odd column (made before the 3-step loop) in a nested `if` and
    converted the pick at 2 of every 3 steps through shared memory."""
    return flag("TILEC_IF_PUSH", "1")


def drop_dead_broadcasts_enabled() -> bool:
    """`TILEC_DROP_DEAD_BROADCASTS` (unset or "1": on; "0": off, as before
    2026-12-04): `convert` drops the original of a broadcast it made again from
    its source in the layout a use wanted, once nothing reads it. Such an
    original sat in `std::attention`'s FMA decode loop (the query broadcast
    over the key block), and the code generator moved its data through shared
    memory every key block for no reader: 26 barriers in `decode_split`, 20
    without them."""
    return flag("TILEC_DROP_DEAD_BROADCASTS", "1")


def remake_enabled() -> bool:
    """`TILEC_REMAKE_FREE` (unset or "1": on; "0": off, as before 2026-12-06): `convert`
    computes a value made only of aranges, constants and scalars (an index pattern, a mask,
    a band matrix built from taps) again in the layout a use wants, in registers, where it
    converted it through shared memory between two barriers (hcliff3: a 3x3 max-pool's
    shift matrix, a blur's band matrices)."""
    from .switches import mode

    return mode("TILEC_REMAKE_FREE", "1", ("0", "1")) == "1"


_PURE = (ir.Const, ir.Arange, ir.Broadcast, ir.Reshape, ir.Elementwise, ir.Cast)
_REMAKE_OPS = 24  # ops one conversion may compute again at most


def _moves(v: ir.Value, lay: Layout, layouts: dict[int, Layout], threads: int) -> bool:
    """Converting `v` to `lay` moves data between threads (through shared memory): the
    code generator's test (`codegen/shapes.local`); one in registers costs nothing to keep."""
    from tilelang.backend.codegen.views import register_map, thread_register_map, view_of

    src = layouts.get(v.id)
    if not isinstance(src, Blocked | Slice) or not isinstance(lay, Blocked | Slice):
        return False
    vs = view_of(src, v.shape, threads, v.dtype.itemsize)
    vd = view_of(lay, v.shape, threads, v.dtype.itemsize)
    align: list[int | None] = list(range(len(v.shape)))
    if register_map(vs, vd, align) is not None:
        return False
    return not (replicate_bound() and thread_register_map(vs, vd, align) is not None)


def _remakeable(v: ir.Value, lay: Layout, layouts: dict[int, Layout], defs: dict[int, object],
                budget: list[int]) -> bool:
    """`v` can be computed in `lay` in registers from scalars, constants and aranges (and
    tiles already in the layout they would be read in), within `budget` ops."""
    if layouts.get(v.id) == lay or not v.shape:
        return True
    if not isinstance(lay, Blocked | Slice):
        return False
    budget[0] -= 1
    if budget[0] < 0:
        return False
    d = defs.get(v.id)
    match d:
        case ir.Const() | ir.Arange():
            return True
        case ir.Broadcast(x=x):
            if not x.shape:
                return True
            lx = broadcast_backward(x.shape, v.shape, lay)
            return lx is not None and _remakeable(x, lx, layouts, defs, budget)
        case ir.Reshape(x=x):
            lx = reshape_backward(x.shape, v.shape, lay)
            return lx is not None and _remakeable(x, lx, layouts, defs, budget)
        case ir.Elementwise() | ir.Cast():
            return all(_remakeable(x, lay, layouts, defs, budget) for x in g.operands(d) if x.shape)
    return False


def _remade(d: object, got: ir.Value, lay: Layout, conv) -> object:  # type: ignore[no-untyped-def]
    """The op `d` again, its result `got` (in `lay`), its tile operands through `conv`."""
    match d:
        case ir.Const() | ir.Arange():
            return dataclasses.replace(d, result=got)
        case ir.Broadcast(x=x) | ir.Reshape(x=x):
            if not x.shape:
                return dataclasses.replace(d, result=got)
            back = broadcast_backward if isinstance(d, ir.Broadcast) else reshape_backward
            return dataclasses.replace(d, result=got, x=conv(x, back(x.shape, got.shape, lay)))
        case ir.Elementwise(operands=xs):
            return dataclasses.replace(d, result=got, operands=tuple(conv(x, lay) if x.shape else x for x in xs))
        case ir.Cast(x=x):
            return dataclasses.replace(d, result=got, x=conv(x, lay))
    raise AssertionError(d)


def _chains(ids: set[int], defs: dict[int, object]) -> set[int]:
    """`ids` and the tile values their ops read, down through the ops `_remakeable` takes."""
    out: set[int] = set()
    todo = list(ids)
    while todo:
        i = todo.pop()
        if i in out:
            continue
        out.add(i)
        d = defs.get(i)
        if isinstance(d, _PURE):
            todo.extend(x.id for x in g.operands(d) if x.shape)
    return out


def convert(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    layouts = dict(k.layouts)
    fresh = Fresh(k.next_id)

    defs: dict[int, object] = {}
    for op in g.walk(k.body):
        for v in g.results(op):
            defs[v.id] = op

    # the regions being rebuilt, outermost first: (the ops emitted so far, the
    # conversions cache, the ids the region defines, "loop" / "branch" (an `if`'s) / "")
    frames: list[tuple[list[object], dict, set[int], str]] = []  # type: ignore[type-arg]
    count = uses(k.body)
    push = if_push_enabled()
    rebroadcast: set[int] = set()  # broadcasts re-made from their source in another layout
    threads_now: list[int] = [k.num_warps * 32]  # the threads of the region being rebuilt
    made: dict[int, object] = {}  # the ops `conv` made again, by result id
    remade_ids: set[int] = set()  # values made again in another layout (`_remakeable`), and those made

    def hoist(v: ir.Value, out: list[object], cache: dict) -> tuple[list[object], list[dict]]:  # type: ignore[type-arg]
        """Where to convert `v`: before the outermost loop around this use that
        `v` is invariant in (a conversion through shared memory costs barriers:
        once, not every iteration), else here; and every cache to record it in."""
        caches = [cache]
        if not frames or frames[-1][0] is not out:
            return out, caches
        i = len(frames) - 1
        if push:  # out of branches too, where that takes it out of a loop (`if_push_enabled`)
            j, best = i, i
            while j > 0 and frames[j][3] and v.id not in frames[j][2]:
                j -= 1
                if frames[j + 1][3] == "loop":
                    best = j
            caches += [frames[x][1] for x in range(i - 1, best - 1, -1)]
            return frames[best][0], caches
        while i > 0 and frames[i][3] == "loop" and v.id not in frames[i][2]:
            i -= 1
            caches.append(frames[i][1])
        return frames[i][0], caches

    def conv(v: ir.Value, lay: Layout, out: list[object], cache: dict[tuple[int, Layout], ir.Value]) -> ir.Value:
        if layouts.get(v.id) == lay or not v.shape:
            return v
        got = cache.get((v.id, lay))
        if got is None:
            out, caches = hoist(v, out, cache)
            got = next((c[(v.id, lay)] for c in caches if (v.id, lay) in c), None)
            if got is not None:
                return got
            got = fresh.value(v.dtype, v.shape, v.hint)
            layouts[got.id] = lay
            d = defs.get(v.id)
            lx = (broadcast_backward(d.x.shape, v.shape, lay)
                  if isinstance(d, ir.Broadcast) and d.x.shape else None)
            if isinstance(d, ir.Broadcast) and lx is not None:
                # broadcast again from the (smaller) source in the wanted layout
                out.append(ir.Broadcast(got, conv(d.x, lx, out, cache), d.span))
                rebroadcast.add(v.id)
                made[got.id] = out[-1]
            elif (remake_enabled() and _moves(v, lay, layouts, threads_now[-1])
                  and _remakeable(v, lay, layouts, defs, [_REMAKE_OPS])):
                # computed again in the wanted layout from what it is made of (aranges,
                # constants, scalars): registers, where a conversion moves it through
                # shared memory between two barriers
                out.append(_remade(d, got, lay, lambda x, lx: conv(x, lx, out, cache)))
                remade_ids.update((v.id, got.id))  # (got: a use may convert it again, remade, and drop it)
                made[got.id] = out[-1]
            else:
                out.append(g.ConvertLayout(got, v))
            for c in caches:
                c[(v.id, lay)] = got
        return got

    def yields(r: ir.Region, targets: tuple[ir.Value, ...], cache: dict,  # type: ignore[type-arg]
               outer: list[object] | None = None, inner: frozenset[int] = frozenset()) -> ir.Region:
        """`r` with its final yield converted to the layouts of `targets`. `outer` (an `if`'s branch, with
        `if_push_enabled`): the ops of the region around the `if`, where a yielded value made outside the
        branches (`inner`: the ids made in the branches around `r` below that region) is converted instead (and
        hoisted out of the loops it does not change in); a yielded `if` result read nowhere else takes the
        layout itself, its branches' yields converted in turn."""
        ops = list(r.ops)
        y = ops.pop()
        assert isinstance(y, ir.Yield)
        here = inner | {v.id for o in ops for v in g.results(o)} | {a.id for a in r.args}
        vals = []
        for v, t in zip(y.values, targets, strict=True):
            lt = layouts.get(t.id)
            if lt is None or not _register(lt) or layouts.get(v.id) == lt or not v.shape:
                vals.append(v)
                continue
            d = next((o for o in ops if isinstance(o, ir.If) and any(x.id == v.id for x in o.results)), None)
            if outer is not None and d is not None and count.get(v.id) == 1:
                got = fresh.value(v.dtype, v.shape, v.hint)
                layouts[got.id] = lt
                rs = tuple(got if x.id == v.id else x for x in d.results)
                d2 = dataclasses.replace(d, results=rs, then=yields(d.then, rs, cache, outer, here),
                                         else_=yields(d.else_, rs, cache, outer, here))
                ops[ops.index(d)] = d2
                vals.append(got)
            elif outer is not None and v.id not in here:
                vals.append(conv(v, lt, outer, cache))
            else:
                vals.append(conv(v, lt, ops, dict(cache)))
        ops.append(dataclasses.replace(y, values=tuple(vals)))
        return ir.Region(r.args, tuple(ops))  # type: ignore[arg-type]

    def region(r: ir.Region, threads: int, cache: dict, kind: str = "") -> ir.Region:  # type: ignore[type-arg]
        out: list[object] = []
        cache = dict(cache)
        defined = {a.id for a in r.args} | {v.id for o in r.ops for v in g.results(o)}
        frames.append((out, cache, defined, kind))
        threads_now.append(threads)
        try:
            return _region(r, threads, out, cache)
        finally:
            frames.pop()
            threads_now.pop()

    def _region(r: ir.Region, threads: int, out: list[object], cache: dict) -> ir.Region:  # type: ignore[type-arg]
        for op in r.ops:
            if isinstance(op, g.WarpSpecialize):
                op = dataclasses.replace(op, roles=tuple(
                    dataclasses.replace(ro, body=region(ro.body, ro.warps * 32, cache)) for ro in op.roles))
                out.append(op)
                continue
            # inits of loops first (converted before the loop)
            if isinstance(op, ir.For | ir.While):
                args = op.body.args[1:] if isinstance(op, ir.For) else op.body.args
                inits = tuple(conv(v, layouts[a.id], out, cache) if a.id in layouts and _register(layouts[a.id])
                              else v for v, a in zip(op.inits, args, strict=True))
                op = dataclasses.replace(op, inits=inits)
            kind = "loop" if isinstance(op, ir.For | ir.While) else "branch" if isinstance(op, ir.If) else ""
            op = with_regions(op, lambda sub: region(sub, threads, cache, kind))  # noqa: B023
            if isinstance(op, ir.For):
                op = dataclasses.replace(op, body=yields(op.body, op.body.args[1:], cache))
            elif isinstance(op, ir.While):
                op = dataclasses.replace(op, body=yields(op.body, op.body.args, cache))
            elif isinstance(op, ir.If):
                at = out if push else None
                op = dataclasses.replace(op, then=yields(op.then, op.results, cache, at),
                                         else_=yields(op.else_, op.results, cache, at))
            if not _exempt(op, layouts):
                mapping: dict[int, ir.Value] = {}
                for _, v, lay in _wants(op, layouts):
                    if _register(lay) and layouts.get(v.id) != lay:
                        mapping[v.id] = conv(v, lay, out, cache)
                # (a DotOp's operands in a tensor-core layout are read as they are: only its
                # accumulator is converted, above)
                for v in () if isinstance(op, ir.For | ir.While | ir.If | g.DotOp) else g.operands(op):
                    if v.id not in mapping and isinstance(layouts.get(v.id), MmaAcc) and v.shape:
                        mapping[v.id] = conv(v, blocked_for(v.shape, threads, v.dtype.itemsize), out, cache)
                op = substitute(op, mapping)
            out.append(op)
        return ir.Region(r.args, tuple(out))  # type: ignore[arg-type]

    body = region(k.body, k.num_warps * 32, {})
    if rebroadcast and drop_dead_broadcasts_enabled():
        # the original of a broadcast made again in another layout, where nothing
        # reads it any more: dropped (the code generator would still move its
        # data, through shared memory and two barriers where no register map does)
        read = uses(body)
        body = map_ops(body, lambda op: [] if isinstance(op, ir.Broadcast) and op.result.id in rebroadcast
                       and not read.get(op.result.id) else [op])
    if remade_ids and drop_dead_broadcasts_enabled():
        # the same for a value computed again (`_remakeable`), down its chain: what nothing
        # reads any more (the original, a copy made for a use that was then made again) goes
        remade = _chains(remade_ids | set(made), defs | made)
        while True:
            read = uses(body)
            dead = {i for i in remade if not read.get(i)}
            if not dead:
                break
            remade -= dead
            body = map_ops(body, lambda op: [] if isinstance(op, _PURE) and op.result.id in dead  # noqa: B023
                           else [op])
    return dataclasses.replace(k, body=body, layouts=layouts, next_id=fresh.next)


__all__ = ["convert", "drop_dead_broadcasts_enabled", "if_push_enabled", "remake_enabled"]
