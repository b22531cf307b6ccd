"""The stale max's exp2s issued before the block's row max is known
(`passes/attention.py`; `TILEC_ATTN_SPECULATE`).

FlashAttention-4's stale max (`std::attention`'s `attend_prefill`) keeps a
row's running max unless a block's max passes it by a margin:

    mx = s.max(1) * sc
    m_new = where(mx > m + STALE, mx, m)      // m: carried by the loop
    p = exp2(fma(s, sc, -m_new))

so P waits for the row max (a thread's registers folded, then two shuffles)
although, after a tile's first block, m_new is m in nearly every row. Where
a loop-carried value `b` is replaced only under a condition, `m_new =
where(g, a, b)`, and the body computes a block-wide exp2 from m_new through
ops that only it reads (the cone: element-wise ops, broadcasts, reshapes),
the cone is computed twice over:

    p_b = cone(b)                             // issued as soon as S is there
    p = if warp_any(g) { cone(m_new) } else { p_b }

`p_b` depends on S and the carried state only, so its exp2s run beside the
max's reduction; `warp_any` (`g.WarpAny`, one `vote.any`) is true where g
holds in some row of the warp, and only there is the cone computed again
with m_new. Where no row of the warp has g, m_new is b in every row the warp
holds (`where(false, a, b)` is b bit for bit), so p_b is the cone's value
exactly: the interpreter's result either way, no tolerance involved. The
price: the exp2s twice in a warp where a max moved, always in a tile's
first block (m starts at MASKED, "1"), or never ("2": such a warp takes the
plain copy, `_unless_first`), rarely after.

Measured on the H200 (benchmarks/RESULTS.md, 2026-12-03 fourth session):
SLOWER on every f16 row, -6..-12 % at D = 128, -4..-8 % at D = 64, both
modes; so off by default. ncu at D = 64: the row max's stalls went (-58 %
of its samples) but the MUFU queue ("mio") and the tensor-core waits grew
more: with the max gone from between S and the exp2s, the two warps of a
sub-partition issue their exp2s at once and the MUFU, already a third of
the loop's stall samples, is the limit. At D = 128 ptxas also spills 64 B
(in the masked blocks' branch), and everything before the vote's branch
must issue before it (the row sums' chain).
"""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import Fresh
from .rewrite import substitute
from .switches import mode

# "1": speculate where the form above appears; "2": the same but not in a
# tile's first block (see `_unless_first`); "0" (the default: both lost on
# the H200, see above): never
SPECULATE_DEFAULT = "0"

_CONE = (ir.Elementwise, ir.Broadcast, ir.Reshape, ir.Cast)


def enabled() -> bool:
    return mode("TILEC_ATTN_SPECULATE", SPECULATE_DEFAULT, ("0", "1", "2")) in ("1", "2")


def plain_first() -> bool:
    """"2": not in a tile's first block (`_unless_first`)."""
    return mode("TILEC_ATTN_SPECULATE", SPECULATE_DEFAULT, ("0", "1", "2")) == "2"


def _reads(op: object) -> list[ir.Value]:
    return [v for o in g.walk(ir.Region((), (op,))) for v in g.operands(o)]  # type: ignore[arg-type]


def _block_wide(v: ir.Value) -> bool:
    return len([n for n in v.shape if n > 1]) == 2


def _cone(ops: list[object], w: ir.Elementwise) -> tuple[list[object], ir.Elementwise] | None:
    """The ops from `w`'s result to a block-wide exp2 (in body order, the exp2
    last) and that exp2; None if there is none or an op on the way is not an
    element-wise op, a broadcast, a reshape or a cast."""
    dep = {w.result.id}
    for op in ops[ops.index(w) + 1:]:
        if any(v.id in dep for v in _reads(op)):
            dep.update(r.id for r in g.results(op))
    defs = {r.id: op for op in ops for r in g.results(op)}
    for e in ops:
        if not (isinstance(e, ir.Elementwise) and e.op is ir.ElemOp.EXP2 and e.result.id in dep
                and _block_wide(e.result)):
            continue
        cone: dict[int, object] = {}
        stack: list[object] = [e]
        while stack:
            op = stack.pop()
            if id(op) not in cone:
                cone[id(op)] = op
                stack += [defs[v.id] for v in g.operands(op) if v.id in dep and v.id != w.result.id]
        members = [op for op in ops if id(op) in cone]
        if all(isinstance(op, _CONE) for op in members):
            return members, e
    return None


def _extend(ops: list[object], members: list[object], e: object, pos: int) -> list[object]:
    """`members` and the ops after the exp2 `e` that read its values only
    through the cone (the row sums, the cast to f16/bf16, the packing as
    wgmma's A fragment): the branch yields their results, P's f32 registers
    die inside it. An op joins when every other value it reads is defined by
    op `pos` of the body or outside it."""
    index = {r.id: i for i, op in enumerate(ops) for r in g.results(op)}
    inner = {r.id for op in members for r in g.results(op)}
    out = list(members)
    for op in ops[ops.index(e) + 1:]:
        if not isinstance(op, (*_CONE, ir.Reduce, g.PackPairs)) or g.regions(op):
            continue
        vs = g.operands(op)
        if any(v.id in inner for v in vs) and all(v.id in inner or index.get(v.id, -1) <= pos for v in vs):
            out.append(op)
            inner.update(r.id for r in g.results(op))
    return out


def _early(ops: list[object], members: list[object], skip: set[int]) -> tuple[int, list[object]]:
    """Where the speculated copy can start: after the last op defining one of
    its operands (constants and broadcasts of values defined before the body
    are copied along instead), and those copies."""
    index = {r.id: i for i, op in enumerate(ops) for r in g.results(op)}
    inner = {r.id for op in members for r in g.results(op)}
    light: dict[int, object] = {}
    pos = -1
    for op in members:
        for v in g.operands(op):
            if v.id in inner or v.id in skip:
                continue
            d = ops[index[v.id]] if v.id in index else None
            if isinstance(d, ir.Const | ir.Broadcast) and all(u.id not in index for u in g.operands(d)):
                light[v.id] = d
            elif v.id in index:
                pos = max(pos, index[v.id])
    return pos, [op for op in ops if any(r.id in light for r in g.results(op))]


def speculate(loop: ir.For, fresh: Fresh) -> ir.For:
    """The consumers' loop `loop` with the cone of a `where(g, a, b)` over a
    carried `b` speculated (see the module's docstring); `loop` itself where
    none applies or `TILEC_ATTN_SPECULATE` is off."""
    if not enabled():
        return loop
    ops: list[object] = list(loop.body.ops)
    carried = {a.id for a in loop.body.args[1:]}
    for w in ops:
        if not (isinstance(w, ir.Elementwise) and w.op is ir.ElemOp.WHERE and w.result.shape
                and w.operands[2].id in carried and w.operands[0].shape):
            continue
        found = _cone(ops, w)
        if found is None:
            continue
        members, e = found
        pos, light = _early(ops, members, {w.result.id})
        members = _extend(ops, members, e, pos)
        gone = {id(op) for op in members}
        inner = {r.id for op in members for r in g.results(op)}
        outs = list(dict.fromkeys(v for op in ops if id(op) not in gone for v in _reads(op) if v.id in inner))
        # the copy with b for m_new, from op `pos` on
        mapping: dict[int, ir.Value] = {w.result.id: w.operands[2]}
        spec: list[object] = []
        for op in [*light, *members]:
            new = substitute(op, mapping)
            r = g.results(op)[0]
            nr = fresh.value(r.dtype, r.shape, r.hint)
            mapping[r.id] = nr
            spec.append(_with_result(new, nr))
        anyv = fresh.value(DType.BOOL, (), "moved")
        res = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in outs)
        branch = ir.If(res, anyv, ir.Region((), (*members, ir.Yield(tuple(outs)))),  # type: ignore[arg-type]
                       ir.Region((), (ir.Yield(tuple(mapping[v.id] for v in outs)),)), e.span)
        after = {v.id: r for v, r in zip(outs, res, strict=True)}
        held = _held_until(ops) if any(isinstance(op, g.PackPairs) for op in members) else {}
        i_e = ops.index(e)
        head = [op for op in ops[pos + 1:i_e] if id(op) not in gone]
        # the speculated side computed before the vote (else LLVM sinks it into the else)
        warm = [*spec, *head, g.Touch(tuple(mapping[v.id] for v in outs), e.span),
                g.WarpAny(anyv, w.operands[0], e.span), branch]
        k = next(i for i, a in enumerate(loop.body.args[1:]) if a is w.operands[2])
        if plain_first() and not any(id(op) in held for op in head):
            warm, after = _unless_first(warm, head, members, outs, res, ops[i_e + 1:], w.operands[2],
                                        loop.inits[k], fresh, e.span)
        body: list[object] = [*ops[:pos + 1], *warm]
        for op in (op for op in ops[i_e + 1:] if id(op) not in gone):
            body.append(substitute(op, after))
            if id(op) in held:
                body.append(g.Touch(held[id(op)], e.span))
        return ir.For(loop.results, loop.lower, loop.upper, loop.step, loop.inits,
                      ir.Region(loop.body.args, tuple(body)), loop.span)  # type: ignore[arg-type]
    return loop


def _unless_first(warm: list[object], head: list[object], members: list[object], outs: list[ir.Value],
                  res: tuple[ir.Value, ...], rest: list[object], b: ir.Value, init: ir.Value, fresh: Fresh,
                  span: object) -> tuple[list[object], dict[int, ir.Value]]:
    """`warm` (the speculated ops, the vote and its branch) behind a branch on
    a second vote: a warp where some row's `b` still holds its initial value
    (a tile's first block: the max moves in every row, the speculated exp2s
    would all be redone) runs `head` and the cone once, as without
    speculation. Returns the ops and the map of the values read after them."""
    E = ir.ElemOp
    later = {v.id for op in rest for v in _reads(op)}
    kept = [r for op in head for r in g.results(op) if r.id in later]
    copy: dict[int, ir.Value] = {}
    plain: list[object] = []
    for op in [*head, *members]:
        new = substitute(op, copy)
        r = g.results(op)[0]
        copy[r.id] = fresh.value(r.dtype, r.shape, r.hint)
        plain.append(_with_result(new, copy[r.id]))
    eq, first = fresh.value(DType.BOOL, b.shape, "first"), fresh.value(DType.BOOL, (), "first")
    final = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in (*kept, *outs))
    branch = ir.If(final, first, ir.Region((), (*plain, ir.Yield(tuple(copy[v.id] for v in (*kept, *outs))))),  # type: ignore[arg-type]
                   ir.Region((), (*warm, ir.Yield((*kept, *res)))), span)  # type: ignore[arg-type]
    ops = [ir.Elementwise(eq, E.EQ, (b, init)), g.WarpAny(first, eq, span), branch]  # type: ignore[arg-type]
    return ops, {v.id: f for v, f in zip((*kept, *outs), final, strict=True)}


def _held_until(ops: list[object]) -> dict[int, tuple[ir.Value, ...]]:
    """wait op -> the packed A operand of the `wgmma.rs` it waits for: the
    product reads those registers until the wait, and P, packed now before
    it (the speculated copy), must not take them (ptxas would serialise the
    products: C7513)."""
    rs = {op.result.id: op for op in ops if isinstance(op, g.WgmmaRegA)}
    out: dict[int, tuple[ir.Value, ...]] = {}
    for op in ops:
        if isinstance(op, g.WgmmaWait):
            a = tuple(rs[v.id].a for v in op.values if v.id in rs and rs[v.id].a.dtype is DType.I32)
            if a:
                out[id(op)] = a
    return out


def _with_result(op: object, r: ir.Value) -> object:
    import dataclasses

    return dataclasses.replace(op, result=r)  # type: ignore[type-var]


__all__ = ["SPECULATE_DEFAULT", "enabled", "speculate"]
