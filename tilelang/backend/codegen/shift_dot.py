"""A product by a band matrix made of aranges, read as the stencil it is (the FMA engine's `mma`,
`codegen/mma.py`).

`dot(x, s)` with `s = (arange(K).reshape([K, 1]) + p == arange(N).reshape([1, N]) + q) as f32` (what `roll`'s
help and tests/user a05's max-pool write to move a row by one element: a tile has no element-offset load), or a
band of scalar taps, `where(off == -2, w0, where(off == -1, w1, ... 0.0))` with `off` the difference of a row
and a column `arange` (a03's blur; either operand, transposed or not), sums K products an output, all but a
few of them by zero. On the FMA engine both tiles were staged in shared memory and every output ran K FMAs
(a05: a [1, 64] x [64, 64] product a row, the matrix's 4,096 shared stores; a03: 3 x 64 FMAs an output).
Here the other operand alone goes through shared memory and an output runs one FMA a diagonal of the band.

The value is the FMA loop's bit for bit. That loop starts at the accumulator's +0.0 and runs k upwards,
`cur = fma(a[i, k], b[k, j], cur)`: a product by zero leaves `cur` as it is (it is never -0.0: sums to zero
round to +0.0), unless its other factor is an infinity or a NaN (NaN). So an output is the band's FMAs in k
order from +0.0, NaN where an element off the band of its row of x (column, for a band on the left) is not
finite: a count of those a row (column), made once (`_counts`: a warp a row; a lane a column, `_column_counts`),
less the band's own. A warp none of whose outputs' lines holds one (`vote.any` of the counts its lanes read: the
usual case) runs the band's FMAs alone, without counting the band's own (hcliff6: a03's column blur went from
164 to 79 registers, and its column counts, a warp a column, had read 32 rows one bank apart).
Where the other operand is one line that every warp holds whole, the same lanes and slots in each (a05's
[1, 64] row), the band's elements move between lanes by `shfl` instead, and the line's count comes from its
lanes (`_in_warp`, hcliff7: a05's window row 11 -> 8 barriers; `TILEC_SHIFT_DOT_WARP=0` off).
Only for f32 products whose accumulator is a constant zero tile (`TILEC_SHIFT_DOT=0` off).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from ..gpu import nodes as g

# a linear form of a [R, C] index tile: (coefficient of the row index, of the column index, of a 1-D arange's
# index, constant)
_Lin = tuple[int, int, int, int]


def enabled() -> bool:
    """`TILEC_SHIFT_DOT` (unset or "1": on; "0": off, the FMA loop over the matrix as before)."""
    return flag("TILEC_SHIFT_DOT", "1")


def warp_enabled() -> bool:
    """`TILEC_SHIFT_DOT_WARP` (unset or "1": on; "0": a line held by every warp goes through shared memory as
    before hcliff7, for the device script's old arm)."""
    return flag("TILEC_SHIFT_DOT_WARP", "1")


def defining_ops(em: Any) -> dict[int, object]:
    """The kernel's op defining each value id (built once an emitter)."""
    d = getattr(em, "_shift_defs", None)
    if d is None:
        d = {v.id: op for op in g.walk(em.k.body) for v in g.results(op)}
        em._shift_defs = d
    return d


def _through(o: object, defs: dict[int, object]) -> object:
    while isinstance(o, g.ConvertLayout):
        o = defs.get(o.x.id)
    return o


def _lin(v: ir.Value, defs: dict[int, object], depth: int = 0) -> _Lin | None:
    """`v` (an i32 index tile, or an i32 scalar) as a linear form of its row and column index: only where the
    form is the value, i32 or i64 arithmetic that cannot wrap (hrev20: `arange::<u8>(64) + 200u8` wraps at row
    56, where the form's `r + 200` does not, and the product took the band of diagonal -200: none)."""
    if depth > 24 or v.dtype not in (DType.I32, DType.I64):
        return None
    got = _lin_form(v, defs, depth)
    if got is not None and v.shape:
        # along a dim of size 1 the index is 0: its coefficient is none of the value (hrev20: `arange(1)
        # .reshape([1, 1])` took the row's coefficient 1, and broadcast to [N, N] it read as the row index)
        r_, c_, e_, k_ = got
        if len(v.shape) == 2:
            got = (r_ if v.shape[0] > 1 else 0, c_ if v.shape[1] > 1 else 0, e_, k_)
        elif v.shape[0] == 1:
            got = (r_, c_, 0, k_)
    # (a tile's dims are below 2^16: a form whose values stay below 2^31 in magnitude computes them exactly)
    if got is not None and (abs(got[0]) + abs(got[1]) + abs(got[2])) * 65536 + abs(got[3]) >= 1 << 31:
        return None
    return got


def _lin_form(v: ir.Value, defs: dict[int, object], depth: int) -> _Lin | None:
    o = _through(defs.get(v.id), defs)
    match o:
        case ir.Const(value=c) if isinstance(c, int) and not isinstance(c, bool) and not v.shape:
            return (0, 0, 0, c)
        case ir.Arange() if len(v.shape) == 1:
            return (0, 0, 1, 0)
        case ir.Broadcast(x=x):
            got = _lin(x, defs, depth + 1)
            return got if got is not None and (x.shape or got[:3] == (0, 0, 0)) else None
        case ir.Reshape(x=x) if len(x.shape) == 1 and len(v.shape) == 2 and 1 in v.shape:
            got = _lin(x, defs, depth + 1)
            if got is None or got[:2] != (0, 0):
                return None
            return (got[2], 0, 0, got[3]) if v.shape[1] == 1 else (0, got[2], 0, got[3])
        case ir.Elementwise(op=ir.ElemOp.ADD | ir.ElemOp.SUB, operands=(x, y)):
            lx, ly = _lin(x, defs, depth + 1), _lin(y, defs, depth + 1)
            if lx is None or ly is None:
                return None
            s = 1 if o.op is ir.ElemOp.ADD else -1
            return (lx[0] + s * ly[0], lx[1] + s * ly[1], lx[2] + s * ly[2], lx[3] + s * ly[3])
        case ir.Elementwise(op=ir.ElemOp.NEG, operands=(x,)):
            lx = _lin(x, defs, depth + 1)
            return None if lx is None else (-lx[0], -lx[1], -lx[2], -lx[3])
        case ir.Elementwise(op=ir.ElemOp.MUL, operands=(x, y)):
            lx, ly = _lin(x, defs, depth + 1), _lin(y, defs, depth + 1)
            if lx is None or ly is None:
                return None
            if lx[:3] == (0, 0, 0):
                lx, ly = ly, lx
            if ly[:3] != (0, 0, 0):
                return None
            return (lx[0] * ly[3], lx[1] * ly[3], lx[2] * ly[3], lx[3] * ly[3])
    return None


def _diagonal(v: ir.Value, defs: dict[int, object]) -> int | None:
    """d where bool tile `v` is true exactly at row - column == d."""
    o = _through(defs.get(v.id), defs)
    if not isinstance(o, ir.Elementwise) or o.op is not ir.ElemOp.EQ or len(v.shape) != 2:
        return None
    lx, ly = (_lin(x, defs) for x in o.operands)
    if lx is None or ly is None:
        return None
    a, b, e, c = (lx[i] - ly[i] for i in range(4))  # a r + b c + c0 == 0
    if e != 0 or (a, b) not in ((1, -1), (-1, 1)):
        return None
    return -c if a == 1 else c


def _tap(v: ir.Value, defs: dict[int, object]) -> ir.Value | float | None:
    """The one value every element of f32 tile `v` holds: a scalar or a constant."""
    o = _through(defs.get(v.id), defs)
    match o:
        case ir.Const(value=c) if not isinstance(c, bool) and isinstance(c, int | float):
            return float(c)
        case ir.Broadcast(x=x) if not x.shape and x.dtype is DType.F32:
            c = _through(defs.get(x.id), defs)
            if isinstance(c, ir.Const) and not isinstance(c.value, bool) and isinstance(c.value, int | float):
                return float(c.value)
            return x
    return None


def band_of(em: Any, m: ir.Value) -> list[tuple[int, ir.Value | float]] | None:
    """The diagonals of f32 [R, C] tile `m` where it is a band matrix made of aranges: (d, tap) with
    m[r, c] = tap where r - c == d (the first such d) and 0.0 elsewhere; None where it is not one."""
    if m.dtype is not DType.F32 or len(m.shape) != 2:
        return None
    defs = defining_ops(em)
    out: list[tuple[int, ir.Value | float]] = []
    v = m
    for _ in range(16):
        o = _through(defs.get(v.id), defs)
        match o:
            case ir.Permute(perm=(1, 0), x=x) if not out:
                inner = band_of(em, x)
                return None if inner is None else [(-d, t) for d, t in inner]
            case ir.Cast(x=x) if x.dtype is DType.BOOL:
                d = _diagonal(x, defs)
                return None if d is None else out + [(d, 1.0)]
            case ir.Elementwise(op=ir.ElemOp.WHERE, operands=(cond, x, y)):
                d, t = _diagonal(cond, defs), _tap(x, defs)
                if d is None or t is None:
                    return None
                out.append((d, t))
                v = y
            case _:
                t = _tap(v, defs)
                return out if t == 0.0 else None
    return None


def _stencil(em: Any, op: object) -> tuple[list[tuple[int, ir.Value | float]], bool] | None:
    """(the band's diagonals, whether it is the left operand) where `shift_dot` takes `op`, else None."""
    if not enabled() or not isinstance(op, ir.Mma | g.DotOp):
        return None
    a, b, acc = op.a, op.b, op.acc
    if a.dtype is not DType.F32 or acc.dtype is not DType.F32 or len(a.shape) != 2:
        return None
    z = _through(defining_ops(em).get(acc.id), defining_ops(em))
    if not (isinstance(z, ir.Const) and not isinstance(z.value, bool) and z.value == 0):
        return None
    band = band_of(em, b)
    if band is not None:
        return band, False
    band = band_of(em, a)
    return None if band is None else (band, True)


def takes(em: Any, op: object) -> bool:
    """Whether `shift_dot` emits `op` as a stencil (`em`: what the recognizer reads of an emitter, its kernel
    `k`; `lift.fewer_warps` asks with a Tile IR kernel before any layout)."""
    return _stencil(em, op) is not None


# ops with no effect but their result: emitted only where something reads it
_PURE = (ir.Const, ir.Elementwise, ir.Broadcast, ir.Reshape, ir.Cast, ir.Arange, ir.Permute, g.ConvertLayout)


def dead_band_ops(em: Any, more: Any = None) -> frozenset[int]:
    """ids of the kernel's ops that only build the band matrices `shift_dot` reads as stencils (its aranges,
    comparisons, `where`s, their broadcasts and layout conversions; not the taps): the emitter skips them.
    Their values were dead after the stencil, but a conversion of theirs through shared memory kept its
    stores and two barriers (a05's max-pool: 6 of its 17 barriers a window row). `more(em, op)`: another
    reader's (matrix operand, the values it reads instead) for a product it takes, or None (`gather_dot`'s
    one-hot matrices, `gather_dot.matrix_read`)."""
    uses: dict[int, int] = {}
    ops = list(g.walk(em.k.body))
    for o in ops:
        for v in g.operands(o):
            uses[v.id] = uses.get(v.id, 0) + 1
    todo: list[ir.Value] = []
    for o in ops:
        got = _stencil(em, o)
        if got is None:
            read = more(em, o) if more is not None else None
            if read is not None:
                for v in read[1]:
                    uses[v.id] = uses.get(v.id, 0) + 1
                todo.append(read[0])
            continue
        band, left = got
        for _, t in band:
            if isinstance(t, ir.Value):  # the stencil reads its taps
                uses[t.id] = uses.get(t.id, 0) + 1
        todo.append(o.a if left else o.b)  # type: ignore[attr-defined]
    defs = defining_ops(em)
    dead: set[int] = set()
    while todo:
        v = todo.pop()
        uses[v.id] -= 1
        o = defs.get(v.id)
        if uses[v.id] > 0 or not isinstance(o, _PURE) or id(o) in dead:
            continue
        dead.add(id(o))
        todo.extend(g.operands(o))
    return frozenset(dead)


def shift_dot(em: Any, op: ir.Mma | g.DotOp) -> bool:
    """Emit `op` as the stencil its band operand is (see the module doc); False where neither is one."""
    got = _stencil(em, op)
    if got is None:
        return False
    band, left = got
    a, b, r = op.a, op.b, op.result
    M, K = a.shape
    N = b.shape[1]
    seen: set[int] = set()
    diags = [(d, t) for d, t in band if not (d in seen or seen.add(d))]  # type: ignore[func-returns-value]
    other = a if not left else b
    lines = M if not left else N  # x's rows (b band) or columns (a band) the NaN counts run along
    if lines == 1 and warp_enabled() and _in_warp(em, op, diags, left):
        return True
    (off, cnt) = em.to_smem([other], op.span), None
    off = off[0]
    cnt, parts = _counts(em, off, other.shape, not left, lines, op.span)
    taps = {d: (f"{t!r}" if isinstance(t, float) else em.scalar(t)) for d, t in diags}
    # the band's elements of an output in k order: b band k = j + d (d up); a band k = i - d (d down)
    steps = sorted(diags, key=lambda dt: dt[0], reverse=left)
    coords = [ij for _, ij in em.out_coords(r)]
    # Where no line of the warp's outputs holds an infinity or a NaN (the usual case), no output is NaN by a
    # product off its band: the band's FMAs alone, without counting the band's own (a warp-uniform branch)
    totals, slow = _vote_lines(em, cnt, parts, lines, coords, left)
    go_fast, go_slow, join = em.new_label("sdf"), em.new_label("sds"), em.new_label("sdj")
    em.cbr(slow, go_slow, go_fast)
    ends, outs = [], []
    for nan in (False, True):
        em.label(go_slow if nan else go_fast)
        def staged(n: int, i: Any, j: Any, d: int, k: str, inside: str) -> str:  # x's element in shared memory
            ks = em.emit(f"select i1 {inside}, i32 {k}, i32 0")
            flat = (em.emit(f"add i32 {em.emit(f'mul i32 {i}, {K}')}, {ks}") if not left
                    else em.emit(f"add i32 {em.emit(f'mul i32 {ks}, {N}')}, {j}"))
            return em.smem_load(off, DType.F32, flat)  # type: ignore[no-any-return]

        outs.append([_band_output(em, steps, taps, K, left, n, i, j, staged,
                                  totals[i if not left else j] if nan else None)
                     for n, (i, j) in enumerate(coords)])
        ends.append(em.cur)
        em.br(join)
    _join_paths(em, r, join, outs, ends)
    return True


def _warp_plan(em: Any, other: ir.Value, r: ir.Value, ds: tuple[int, ...], left: bool) -> Any:
    """Where the one line of `other` lies whole in every warp, the same lanes and slots in each (a05's [1, 64]
    row: 4 elements a lane, lanes 16-31 and the other warps replicas): ({(output slot, d): (other's slot,
    lane delta)}, the lanes (a 32-bit mask) that hold each of other's slots first). For every output slot and
    diagonal d, the element it reads is in slot s of the lane `delta` below (above, delta < 0) in every
    thread where it is in the tile; None where some thread would read another warp or another slot."""
    from .views import BlockedView, _thread_pos

    xv, rv = em.lay(other), em.lay(r)
    if not (isinstance(xv, BlockedView) and isinstance(rv, BlockedView) and xv.T == rv.T == em.T):
        return None
    key = ("warp_plan", xv.layout, xv.full, xv.drop, rv.layout, rv.full, rv.drop, xv.T, ds, left)
    if key in _PLANS:
        return _PLANS[key]

    def elems(v: Any, t: int) -> list[tuple[int, ...] | None]:  # thread t's element of each slot (None: masked)
        tp = _thread_pos(v, t)
        keep = [d for d in range(len(v.dims)) if d != v.drop]
        out: list[tuple[int, ...] | None] = []
        for c in v.slots:
            e = tuple(tp[d] + c[d] for d in keep)
            out.append(e if all(x < n for x, n in zip(e, v.shape, strict=True)) else None)
        return out

    T = xv.T
    xs = [elems(xv, t) for t in range(T)]
    plan: Any = None
    if all(xs[t] == xs[t % 32] for t in range(T)) and len({e for row in xs[:32] for e in row if e}) == xv.numel:
        first: dict[tuple[int, ...], tuple[int, int]] = {}
        for lane in range(32):
            for s, e in enumerate(xs[lane]):
                if e is not None and e not in first:
                    first[e] = (lane, s)
        masks = [0] * xv.E
        for lane, s in first.values():
            masks[s] |= 1 << lane
        where: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        for lane in range(32):
            for s, e in enumerate(xs[lane]):
                if e is not None:
                    where.setdefault(e, []).append((lane, s))
        K = other.shape[1] if not left else other.shape[0]
        reads: dict[tuple[int, int], tuple[int, int]] = {}
        rs = [elems(rv, t) for t in range(T)]
        ok = True
        for i in range(rv.E):
            for d in ds:
                cand: set[tuple[int, int]] | None = None
                for t in range(T):
                    e = rs[t][i]
                    if e is None:
                        continue
                    row, col = e
                    k = col + d if not left else row - d
                    if not 0 <= k < K:
                        continue
                    src = (row, k) if not left else (k, col)
                    got = {(s, (t & 31) - lane) for lane, s in where.get(src, [])}
                    cand = got if cand is None else cand & got
                    if not cand:
                        ok = False
                        break
                if not ok:
                    break
                reads[(i, d)] = min(cand, key=lambda sd: (abs(sd[1]), sd[0])) if cand else (0, 0)
            if not ok:
                break
        plan = (reads, masks) if ok else None
    _PLANS[key] = plan
    return plan


_PLANS: dict[tuple[Any, ...], Any] = {}


def _in_warp(em: Any, op: Any, diags: list[tuple[int, Any]], left: bool) -> bool:
    """`shift_dot` of a band product whose other operand is one line held whole by every warp (`_warp_plan`):
    each output's band elements come from the lanes that hold them by `shfl` (no shared memory, no barrier),
    the line's count of infinities and NaNs from its lanes' own (a 32-bit mask a slot keeps one holder of each
    element; summed by `shfl.bfly`, only where some lane holds one). The same FMAs in the same order as the shared-memory form: the same bits."""
    a, b, r = op.a, op.b, op.result
    other = a if not left else b
    K = a.shape[1]
    plan = _warp_plan(em, other, r, tuple(d for d, _ in diags), left)
    if plan is None:
        return False
    from .scan import shfl

    reads, masks = plan
    xs = em.tile(other)
    taps = {d: (f"{t!r}" if isinstance(t, float) else em.scalar(t)) for d, t in diags}
    steps = sorted(diags, key=lambda dt: dt[0], reverse=left)
    lane = em.emit(f"and i32 {em.tid0()}, 31")
    moved: dict[tuple[int, int], str] = {}  # (slot, delta) -> that lane's value (the whole warp runs each shfl)
    for sd in sorted(set(reads.values())):
        s, delta = sd
        if delta == 0:
            moved[sd] = xs[s]
        elif delta > 0:
            moved[sd] = shfl(em, "up", xs[s], DType.F32, delta)
        else:
            moved[sd] = shfl(em, "idx", xs[s], DType.F32, em.emit(f"and i32 {em.emit(f'sub i32 {lane}, {delta}')}, 31"))
    em.declare("declare i1 @llvm.nvvm.vote.any.sync(i32, i1)")
    bad = [_is_nonfinite(em, x) for x in xs]
    mine = "false"
    for x in bad:
        mine = em.emit(f"or i1 {mine}, {x}")
    slow = em.call("i1", "llvm.nvvm.vote.any.sync", f"i32 -1, i1 {mine}")
    coords = [ij for _, ij in em.out_coords(r)]
    go_fast, go_slow, join = em.new_label("sdf"), em.new_label("sds"), em.new_label("sdj")
    em.cbr(slow, go_slow, go_fast)
    ends, outs = [], []
    for nan in (False, True):
        em.label(go_slow if nan else go_fast)
        total = "0"
        if nan:  # the line's infinities and NaNs, one holder of each element counting it (`masks`)
            for s, m in enumerate(masks):
                if m:
                    held = em.emit(f"and i32 {em.emit(f'lshr i32 {m - (1 << 32) if m >= 1 << 31 else m}, {lane}')}, 1")
                    hit = em.emit(f"and i1 {em.emit(f'icmp ne i32 {held}, 0')}, {bad[s]}")
                    total = em.emit(f"add i32 {total}, {em.emit(f'zext i1 {hit} to i32')}")
            for m in (16, 8, 4, 2, 1):
                total = em.emit(f"add i32 {total}, {em.shfl_xor(total, DType.I32, m)}")
        def shuffled(n: int, i: Any, j: Any, d: int, k: str, inside: str) -> str:  # x's element from its lane
            return moved[reads[(n, d)]]

        outs.append([_band_output(em, steps, taps, K, left, n, i, j, shuffled, total if nan else None)
                     for n, (i, j) in enumerate(coords)])
        ends.append(em.cur)
        em.br(join)
    _join_paths(em, r, join, outs, ends)
    return True


def _float(x: str) -> str:
    """An f32 tap as an LLVM operand: a register, or a constant in LLVM's hex form."""
    if x.startswith("%") or x.startswith("0x"):
        return x
    import struct

    bits = struct.unpack("<d", struct.pack("<d", struct.unpack("<f", struct.pack("<f", float(x)))[0]))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', bits))[0]:016X}"


def _is_nonfinite(em: Any, x: str) -> str:
    """i1: `x` is an infinity or a NaN."""
    ax = em.fcall("fabs", "float", [x])
    return em.emit(f"fcmp ueq float {ax}, 0x7FF0000000000000")  # type: ignore[no-any-return]


def _vote_lines(em: Any, cnt: Any, parts: int, lines: int, coords: list[tuple[str, str]],
                left: bool) -> tuple[dict[str, str], str]:
    """The count of non-finite elements of each line a thread's outputs read (`_counts`' `parts` partial
    counts of a line summed), and the warp's vote: does any line of its outputs hold one (`vote.any`)?"""
    totals: dict[str, str] = {}
    for i, j in coords:
        line = i if not left else j
        if line not in totals:
            total = em.smem_load(cnt, DType.I32, line)
            for part in range(1, parts):  # a column's partial counts, one a slice of its rows
                more = em.smem_load(cnt, DType.I32, em.emit(f"add i32 {line}, {part * lines}"))
                total = em.emit(f"add i32 {total}, {more}")
            totals[line] = total
    mine = "false"
    for total in totals.values():
        mine = em.emit(f"or i1 {mine}, {em.emit(f'icmp ne i32 {total}, 0')}")
    em.declare("declare i1 @llvm.nvvm.vote.any.sync(i32, i1)")
    return totals, em.call("i1", "llvm.nvvm.vote.any.sync", f"i32 -1, i1 {mine}")


def _counts(em: Any, off: int, shape: tuple[int, ...], rows: bool, lines: int, span: Any) -> tuple[int, int]:
    """Counts of the infinities and NaNs of each row (`rows`) or column of the [R, C] f32 tile at byte `off`,
    in the scratch area: (byte offset, parts); a line's count is the sum of its `parts` i32 words, `lines`
    words apart. Rows: a warp a row (warp w rows w, w + W, ...), its lanes a stride of 32 elements each,
    summed by `shfl.bfly` and stored by lane 0 (one part). Columns: a lane a column (`_column_counts`). Then a
    CTA barrier."""
    R, C = shape
    at = off + -(-(R * C * 4) // 16) * 16
    if not rows:
        return at, _column_counts(em, off, at, R, C, span)
    em.need_smem(at + lines * 4, span)
    n = C
    W = em.T // 32
    lane = em.emit(f"and i32 {em.tid0()}, 31")
    warp = em.emit(f"lshr i32 {em.tid0()}, 5")
    for chunk in range(-(-lines // W)):
        line = em.emit(f"add i32 {warp}, {chunk * W}")
        valid = em.emit(f"icmp ult i32 {line}, {lines}")  # the same in every lane of the warp
        safe = em.emit(f"select i1 {valid}, i32 {line}, i32 0")
        cnt = "0"
        for c in range(-(-n // 32)):
            k = em.emit(f"add i32 {lane}, {32 * c}")
            ok = em.emit(f"icmp ult i32 {k}, {n}")
            ks = em.emit(f"select i1 {ok}, i32 {k}, i32 0")
            flat = em.emit(f"add i32 {em.emit(f'mul i32 {safe}, {C}')}, {ks}")
            bad = em.emit(f"and i1 {ok}, {_is_nonfinite(em, em.smem_load(off, DType.F32, flat))}")
            cnt = em.emit(f"add i32 {cnt}, {em.emit(f'zext i1 {bad} to i32')}")
        for m in (16, 8, 4, 2, 1):
            cnt = em.emit(f"add i32 {cnt}, {em.shfl_xor(cnt, DType.I32, m)}")
        go, done = em.new_label("cnt"), em.new_label("cntd")
        em.cbr(em.emit(f"and i1 {valid}, {em.emit(f'icmp eq i32 {lane}, 0')}"), go, done)
        em.label(go)
        em.stmt(f"store i32 {cnt}, ptr addrspace(3) {em.smem_ptr(at, DType.I32, line)}, align 4")
        em.br(done)
        em.label(done)
    em.barrier()
    return at, 1


# rows a lane counts unrolled; more run as a loop
_UNROLL = 16


def _column_counts(em: Any, off: int, at: int, R: int, C: int, span: Any) -> int:
    """The column counts of the [R, C] f32 tile at byte `off` into `at`: the warps split into G = C / 32
    groups of 32 columns (a lane a column, so a warp's loads are 32 consecutive words: no bank conflict) times
    S = W / G slices of the rows (rows s, s + S, ...); the lane's count of its slice is word s * C + column.
    Returns S. (A warp a column, as rows do, read its lanes' 32 rows C * 4 bytes apart: one bank, 32-way
    conflicts; a03's column blur spent most of its time there.)"""
    W = em.T // 32
    G = -(-C // 32)
    S = max(1, W // G)
    em.need_smem(at + S * C * 4, span)
    lane = em.emit(f"and i32 {em.tid0()}, 31")
    warp = em.emit(f"lshr i32 {em.tid0()}, 5")
    per = -(-R // S)  # rows of a slice (at most)
    for rnd in range(-(-G // W) if W < G else 1):
        task = em.emit(f"add i32 {warp}, {rnd * W}")  # (group, slice) = (task % G, task / G)
        grp = em.emit(f"urem i32 {task}, {G}")
        sl = em.emit(f"udiv i32 {task}, {G}")
        col = em.emit(f"add i32 {em.emit(f'shl i32 {grp}, 5')}, {lane}")
        valid = em.emit(f"and i1 {em.emit(f'icmp ult i32 {task}, {G * S}')}, {em.emit(f'icmp ult i32 {col}, {C}')}")
        safe = em.emit(f"select i1 {valid}, i32 {col}, i32 0")

        def count(it: str, cur: list[str]) -> list[str]:
            row = em.emit(f"add i32 {sl}, {em.emit(f'mul i32 {it}, {S}')}")
            ok = em.emit(f"icmp ult i32 {row}, {R}")
            rs = em.emit(f"select i1 {ok}, i32 {row}, i32 0")
            x = em.smem_load(off, DType.F32, em.emit(f"add i32 {em.emit(f'mul i32 {rs}, {C}')}, {safe}"))
            bad = em.emit(f"and i1 {ok}, {_is_nonfinite(em, x)}")
            return [em.emit(f"add i32 {cur[0]}, {em.emit(f'zext i1 {bad} to i32')}")]

        if per <= _UNROLL:
            cnt = ["0"]
            for r in range(per):
                cnt = count(str(r), cnt)
        else:
            cnt = em.counted_loop(0, per, [("i32", "0")], count)
        go, done = em.new_label("cnt"), em.new_label("cntd")
        em.cbr(valid, go, done)
        em.label(go)
        word = em.emit(f"add i32 {em.emit(f'mul i32 {sl}, {C}')}, {col}")
        em.stmt(f"store i32 {cnt[0]}, ptr addrspace(3) {em.smem_ptr(at, DType.I32, word)}, align 4")
        em.br(done)
        em.label(done)
    em.barrier()
    return S


__all__ = ["band_of", "dead_band_ops", "defining_ops", "enabled", "shift_dot", "takes"]


def _band_output(em: Any, steps: list[tuple[int, Any]], taps: dict[int, str], K: int, left: bool, n: int, i: Any,
                 j: Any, x_at: Callable[[int, Any, Any, int, str, str], str], total: str | None) -> str:
    """Output `n` (at row `i`, column `j`) of a band product: the band's FMAs in k order (`steps`; a tap whose k
    is off the line adds nothing), its other operand's element of tap d `x_at(n, i, j, d, k, inside)`; with the
    line's count of non-finite elements `total` (the slow path), NaN where one is off the band
    (`_nan_if_others`). `shift_dot`'s shared-memory form and `_in_warp`'s shuffles both emit through it."""
    cur, own = "0.0", "0"
    for d, _ in steps:
        k = em.emit(f"add i32 {j if not left else i}, {d if not left else -d}")
        inside = em.emit(f"icmp ult i32 {k}, {K}")  # 0 <= k < K
        x = x_at(n, i, j, d, k, inside)
        nxt = em.fcall("fma", "float", [x, _float(taps[d]), cur])
        cur = em.emit(f"select i1 {inside}, float {nxt}, float {cur}")
        if total is not None:
            bad = em.emit(f"zext i1 {em.emit(f'and i1 {inside}, {_is_nonfinite(em, x)}')} to i32")
            own = em.emit(f"add i32 {own}, {bad}")
    return _nan_if_others(em, total, own, cur) if total is not None else cur


def _nan_if_others(em: Any, total: str, own: str, cur: str) -> str:
    """`cur`, or NaN where the line holds a non-finite element (`total`) that is not the band's own (`own`): the
    FMA loop's 0 * inf = NaN off the band."""
    others = em.emit(f"icmp sgt i32 {em.emit(f'sub i32 {total}, {own}')}, 0")
    return em.emit(f"select i1 {others}, float 0x7FF8000000000000, float {cur}")  # type: ignore[no-any-return]


def _join_paths(em: Any, r: Any, join: str, outs: list[list[str]], ends: list[str]) -> None:
    """The result `r` at `join`: each output the phi of the fast path's (`outs[0]`, ended in `ends[0]`) and the
    counting path's value."""
    em.label(join)
    em.env[r.id] = [em.emit(f"phi float [ {f}, %{ends[0]} ], [ {n}, %{ends[1]} ]")
                    for f, n in zip(outs[0], outs[1], strict=True)]
