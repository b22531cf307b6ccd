"""Pass `pipeline_products`: a loop of several tensor-core products on cp.async rings.

The loop a FlashAttention-2 backward's dQ pass is (tests/user a01),

    for j in lo..hi {
        let kt = k.load(..); let vt = v.load(..);            // tiles of this iteration
        let s = mma(q, kt.transpose(), zeros);               // q, d_o: loaded before the loop
        let dp = mma(d_o, vt.transpose(), zeros);
        let ds = where(.., exp(s * scale - l), 0.0) * (dp - dl);
        acc = mma(ds as f16, kt, acc);                       // the result of one product feeds the next
    }

was taken by no pipeline (the Hopper GEMM pipeline takes one product a loop, the attention pipeline two, sm_80's
ring one): each product staged its operands through shared memory between two CTA barriers, S and dP came back
to blocked layouts the same way, and the tiles were loaded into registers an iteration at a time (H100, a01 at
64 x 64, D = 128: 17.8 TFLOP/s, 255 registers and ~700 bytes of spills a thread).

Here every tile the loop's products read from memory lives in shared memory, in the `SmemTile` layout that
ldmatrix reads (`codegen/sm80.py`): a tile loaded in the loop in a ring of `stages` buffers, filled by 16-byte
`cp.async` `stages - 1` iterations ahead (sm_80's schedule, `pipeline_sm80`); a tile loaded before the loop in
one buffer, copied once. One copy serves every product that reads the tile, plain or transposed (K is S's
`K^T` and dQ's `K`). Each product is a `RingMma`: mma.sync.m16n8k16, the warps stacked along the rows, the
result and accumulator in the `AccTile` layout (the m16n8 C fragments of each warp's 16-row blocks), so every
element-wise op, mask, row vector and reduction of the body computes in registers where the products leave
their values (`attention_layout`: the Hopper attention pipeline's consumer layout), and an f32 result rounded to
16 bits is the next product's A operand in registers (a C fragment pair is an A fragment).

    prologue: the before-the-loop tiles' copies and iteration 0's ring copies (one group), then iterations
              1 .. stages - 2 (a group each)
    loop, iteration i: wait until iteration i's group landed, CTA barrier (every warp is past iteration
              i - 1, the readers of the stage refilled next); the copies of iteration i + stages - 1 into
              that stage, commit; the body, each product reading stage i % stages
    after the loop: wait for every group

Conditions (else the loop keeps its path): `TILEC_PRODUCTS_PIPELINE` is not "0"; the loop is the kernel's one
top-level loop and holds two or more mma.sync products (f16/bf16 operands, f32 accumulators, the same number of
rows M, dims multiples of 16), none of which a faster pipeline took; each value the loop carries is one
product's accumulator (`acc = mma(a, b, acc)`, read nowhere else); each product's B is a loaded tile (optionally
transposed) and its A a loaded tile or a value the body computes; a loaded tile the products read is read by
nothing else (plain 2-D or batched [1, R, C] loads of f16/bf16 tensors, no mask or padding); and every value of
the kernel then computes in registers in the `AccTile` layout (`attention_layout.moving_op`: else a note says
which op would move values between threads). Warps: the `num_warps` hint, else one a 16-row block, at most 8;
`stages`: the hint, else `TILEC_PRODUCTS_STAGES` or 2 (two CTAs an SM at a01's 64 x 64, D = 128), lowered to
what fits the shared memory.

Wide accumulators (hcliff5): FlashAttention-2's dK/dV loop at D = 128 carries two [64, 128] accumulators, 128
registers a thread with each warp owning all columns of its 16 rows (ptxas: 255 registers, ~350 B of spills).
Where the accumulators would hold more than `ACC_REGS` registers a thread so (`TILEC_PRODUCTS_COLS`), the warps
split every product's columns too (`AccTile.cols`: 4 row blocks x 2 column halves at 64 rows, 8 warps); an A the
body computes then has its columns in two warps, so it goes through shared memory (`g.AccToSmem`), and the
products that read such an A run at the end of the body, after one CTA barrier (`_rewrite`'s `later`).

Hopper's warpgroup MMA (hcliff5; the default since hwg, `TILEC_PRODUCTS_WGMMA=0` off): on sm_90a, with each warp
16 rows, every product is a `wgmma` (`_use_wgmma`): the tiles copied into wgmma's 128-byte swizzle, products of two
shared operands issued together at the top of the body (`_wgmma_early`), one of a computed A from its registers.
With the columns split each warpgroup computes its column part (one warpgroup of rows), by default since call 33
(FA2's dK/dV at D = 128 on the H100: right after hwg's descriptor fix, 0.807 ms against mma.sync's 1.19); a product
of two shared operands whose B is read MN-major only with `TILEC_PRODUCTS_WGMMA=1` (right on the GPU, not timed).
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag, mode, number
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Shared, SmemTile
from .context import PassContext
from .pipeline_sm80 import HOPPER_SMEM, SMEM_LIMIT, _chunked, _Rewriter, _slice
from .rewrite import uses

_PATH = "the products pipeline"
_16 = (DType.F16, DType.BF16)


def enabled() -> bool:
    """`TILEC_PRODUCTS_PIPELINE` (unset or "1": on; "0": off, the loop's path before it)."""
    return flag("TILEC_PRODUCTS_PIPELINE", "1")


def cols_rule() -> str:
    """`TILEC_PRODUCTS_COLS`: "auto" (unset) splits the columns in 2 where the accumulators would take more than
    `ACC_REGS` registers a thread with the warps splitting rows only; "1" never; "2" / "4" wherever it can."""
    return mode("TILEC_PRODUCTS_COLS", "auto", ("auto", "1", "2", "4"))


# f32 accumulator registers a thread past which "auto" splits the columns: a01's dQ (one [64, 128] accumulator, 4
# warps) holds 64 and assembles without spills; FlashAttention-2's dK/dV at D = 128 held 128 and spilled ~400 B
ACC_REGS = 64


def wgmma_rule() -> str:
    """`TILEC_PRODUCTS_WGMMA` (on sm_90a, each product a warpgroup MMA: `_use_wgmma`): unset or "auto", where the
    products of two shared operands read their B K-major, the warps on rows or with the columns split (the forms
    timed on a GPU: a01's dQ, H100 call 32: 516.8 TFLOP/s against mma.sync's 293.2; FA2's dK/dV at D = 128 with the
    columns split, H100 call 33 after hwg's descriptor fix: 0.807 ms against 1.19, right); "1" wherever it can, also
    a shared B read MN-major (the gate/up pair's gate: right on the H100 in call 33, not timed); "0" never
    (mma.sync, the way back)."""
    return mode("TILEC_PRODUCTS_WGMMA", "auto", ("auto", "0", "1"))


def default_stages() -> int:
    """`TILEC_PRODUCTS_STAGES` (unset: 2): the ring depth of an unhinted loop (a measurement switch)."""
    return number("TILEC_PRODUCTS_STAGES", 2, 2)


@dataclasses.dataclass
class _Tile:
    """A loaded tile the products read: its load, the ops between it and the products (a batched load's
    reshape, a transpose), whether it is loaded in the loop (a ring) or before it (one buffer)."""

    load: ir.Load
    chain: list[object]
    ring: bool
    buf: ir.Value | None = None
    vector: bool = True

    @property
    def shape(self) -> tuple[int, int]:
        r, c = self.load.result.shape[-2:]
        return r, c


@dataclasses.dataclass
class _Plan:
    loop: ir.For
    tiles: list[_Tile]
    # per product: (dot, A's tile or None, B's tile, b_nk, the cast A is rounded by or None)
    dots: list[tuple[g.DotOp, _Tile | None, _Tile, bool, ir.Cast | None]]
    M: int
    warps: int
    stages: int
    cols: int = 1  # column parts of each product (`AccTile.cols`): warps * cols warps in all
    wgmma: bool = False  # each product a warpgroup MMA, the tiles in wgmma's 128-byte swizzle (`_use_wgmma`)


_B_NOT_LOADED = "a product's B is not a tile loaded from memory (it is read from shared memory by ldmatrix)"


def _source(v: ir.Value, defs: dict[int, object], k: g.GpuKernel) -> tuple[ir.Load, list[object], bool] | None:
    """The load a product operand reads, the ops between (a transpose, a batched load's reshape), and whether
    it is transposed; None where it is not a loaded tile."""
    chain: list[object] = []
    nk = False
    o = defs.get(v.id)
    if isinstance(o, ir.Permute):
        if o.perm != (1, 0):
            return None
        chain.append(o)
        nk = True
        o = defs.get(o.x.id)
    if isinstance(o, ir.Reshape) and len(o.result.shape) == 2:
        ld = defs.get(o.x.id)
        if not isinstance(ld, ir.Load) or len(ld.result.shape) != 3 or ld.result.shape[0] != 1:
            return None
        chain.append(o)
        o = ld
    if not isinstance(o, ir.Load) or o.mask is not None or o.padding is not None:
        return None
    t = k.tensor(o.tensor)
    if t.rank != len(o.result.shape) or t.rank not in (2, 3) or t.dtype not in _16:
        return None
    return o, chain, nk


def _plan(k: g.GpuKernel, ctx: PassContext, loop: ir.For, split: bool = True) -> _Plan | str | None:
    """The plan for `loop`, or why not (a note's reason), or None (not a loop of products at all)."""
    body = loop.body
    dots = [o for o in body.ops if isinstance(o, g.DotOp)]
    if len(dots) < 2 or any(d.engine != "mma.sync" for d in dots):
        return None
    if any(isinstance(o, g.DotOp) for sub in body.ops for r in g.regions(sub) for o in g.walk(r)):
        return "a product inside a branch or an inner loop"
    for d in dots:
        M, K = d.a.shape
        N = d.b.shape[1]
        if d.a.dtype not in _16 or d.b.dtype is not d.a.dtype or d.acc.dtype is not DType.F32:
            return None
        if M % 16 or N % 16 or K % 16:
            return f"a product of [{M}, {K}] by [{K}, {N}]: the pipeline takes multiples of 16"
    M = dots[0].a.shape[0]
    if any(d.a.shape[0] != M for d in dots):
        return "its products have different numbers of rows (the warps split every product's rows alike)"
    # (huser26: a W4A16 loop adding two products into one accumulator, `acc = mma(x0, lo, acc); acc = mma(x1, hi,
    # acc)`, got only the attention pipeline's note, as if it were an attention loop)
    if any(d.acc.id == e.result.id for d in dots for e in dots):
        # a B computed in the loop (n06's dequantised weight) is refused whatever the accumulators: say that
        # first, or the note sends the user to two accumulators and the next refusal (hcliff14)
        defs0 = {v.id: o for o in g.walk(k.body) for v in g.results(o)}
        if any(_source(d.b, defs0, k) is None for d in dots):
            return _B_NOT_LOADED
        return ("its products add into one accumulator one after the other (`acc = mma(a, b, acc)` twice a step): "
                "it takes loops whose products each have an accumulator of their own")
    # the loop carries only accumulators, each of one product
    y = body.ops[-1]
    assert isinstance(y, ir.Yield)
    count = uses(k.body)
    for a, v in zip(body.args[1:], y.values, strict=True):
        d = next((d for d in dots if d.acc.id == a.id), None)
        if d is None or d.result.id != v.id or count.get(a.id) != 1 or count.get(d.result.id) != 1:
            # (a loop of two products carrying more is an attention loop: the attention pipeline's notes say why
            # it refused it, and this pipeline does not take such loops)
            return None if len(dots) == 2 else ("it carries a value that is not a product's accumulator "
                                                "(`acc = mma(a, b, acc)`)")
    defs = {v.id: o for o in g.walk(k.body) for v in g.results(o)}
    in_body = {id(o) for o in body.ops}
    top = {id(o) for o in k.body.ops}
    users: dict[int, list[object]] = {}
    for o in g.walk(k.body):
        for v in g.operands(o):
            users.setdefault(v.id, []).append(o)
    tiles: dict[int, _Tile] = {}
    plan_dots: list[tuple[g.DotOp, _Tile | None, _Tile, bool, ir.Cast | None]] = []
    operand_of: dict[int, set[int]] = {}  # tile id -> ids of the DotOps reading it

    def tile(v: ir.Value, d: g.DotOp) -> tuple[_Tile, bool] | None:
        src = _source(v, defs, k)
        if src is None:
            return None
        ld, chain, nk = src
        if id(ld) not in in_body and id(ld) not in top:
            return None
        t = tiles.get(id(ld))
        if t is None:
            t = tiles[id(ld)] = _Tile(ld, [], id(ld) in in_body)
        t.chain += [c for c in chain if c not in t.chain]
        operand_of.setdefault(id(ld), set()).add(id(d))
        return t, nk

    for d in dots:
        b = tile(d.b, d)
        if b is None:
            return _B_NOT_LOADED
        a = tile(d.a, d)
        cast = None
        if a is not None and a[1]:
            return "a product's A is a transposed tile"
        if a is None and isinstance(cast := defs.get(d.a.id), ir.Cast) and count.get(d.a.id) == 1 \
                and cast.x.dtype is DType.F32 and id(cast) in in_body:
            pass
        else:
            cast = None
        if a is None and id(defs.get(d.a.id)) not in in_body:
            return "a product's A is computed before the loop (load it, or compute it in the loop)"
        plan_dots.append((d, a[0] if a else None, b[0], b[1], cast))
    # a loaded tile the products read is read by nothing else
    for t in tiles.values():
        ok = {id(c) for c in t.chain} | operand_of[id(t.load)]
        for v in [t.load.result, *(c.result for c in t.chain)]:  # type: ignore[attr-defined]
            for u in users.get(v.id, []):
                if id(u) not in ok:
                    return f"the tile of `{t.load.tensor}` is read by more than its products"
        if any(x % 16 for x in t.shape):
            return f"the tile of `{t.load.tensor}` is not made of 16 x 16 blocks"
    hinted = "num_warps" in k.source.hints
    warps = k.num_warps if hinted else max(1, min(8, M // 16))
    cols = _cols(plan_dots, M, warps, hinted, loop) if split else 1
    warps //= cols if hinted else 1
    if M % (16 * warps):
        return f"{warps} warps do not split the products' {M} rows into blocks of 16 rows"
    every = {v.id: o for o in g.walk(k.body) for v in g.results(o)}
    for t in tiles.values():
        t.vector = _chunked(ctx, t.load, every)
    limit = SMEM_LIMIT.get(ctx.arch, HOPPER_SMEM)
    ring = sum(2 * r * c for t in tiles.values() if t.ring for r, c in [t.shape])
    once = sum(2 * r * c for t in tiles.values() if not t.ring for r, c in [t.shape])
    once += sum(2 * M * d.a.shape[1] for d, a, *_ in plan_dots if a is None) if cols > 1 else 0
    want = k.num_stages if "stages" in k.source.hints else default_stages()
    stages = max(2, min(want, (limit - once) // ring if ring else 2))
    if once + stages * ring > limit:
        return f"its tiles need {once + 2 * ring} bytes of shared memory at 2 stages, more than the {limit} there are"
    wg = _use_wgmma(ctx.arch, list(tiles.values()), plan_dots, M, warps, cols)
    return _Plan(loop, list(tiles.values()), plan_dots, M, warps, stages, cols, wg)


def _use_wgmma(arch: str, tiles: list[_Tile], dots: list[tuple[g.DotOp, _Tile | None, _Tile, bool, ir.Cast | None]],
               M: int, warps: int, cols: int) -> bool:
    """Whether each product is a warpgroup MMA (sm_90a, `wgmma_rule`): each warp 16 rows, so a
    warpgroup's m64 accumulator fragment is the `AccTile` registers of its four warps (`g.Wgmma` for two shared
    operands, `g.WgmmaRegA` for an A the body computes, each waited for at once); every tile in 64-column slabs of
    128-byte swizzled rows (`layouts.Shared(128)`, the layout the wgmma descriptors read: a tile is then K-major
    as S's `K^T` and MN-major as dQ's `K`), its copies fenced for the async proxy before the iteration's barrier.
    With the columns split (FA2's dK/dV), one warpgroup of rows: each warpgroup computes its column part of every
    product (`ring_mma.wgmma_descs`), a computed A written in that layout (`g.AccToSmem`) and read as `g.Wgmma`'s."""
    rule = wgmma_rule()
    if rule == "0" or arch != "sm_90a" or warps % 4 or M != 16 * warps or cols > 1 and warps != 4:
        return False
    # "auto": only the forms a GPU timed (a product of two shared operands reads B K-major)
    if rule == "auto" and any(a is not None and not nk for _, a, _, nk, _ in dots):
        return False
    if any(t.shape[1] % 64 for t in tiles):
        return False
    # with the columns split, each warpgroup is one part: its B an MN-major tile's whole slabs, a computed A (through
    # shared memory) whole slabs too
    return all(d.result.shape[1] // cols <= 256 and d.result.shape[1] % (8 * cols) == 0
               and (cols == 1 or nk or d.result.shape[1] // cols % 64 == 0)
               and (cols == 1 or a is not None or d.a.shape[1] % 64 == 0) for d, a, _, nk, _ in dots)


def _cols(dots: list[tuple[g.DotOp, _Tile | None, _Tile, bool, ir.Cast | None]], M: int, warps: int, hinted: bool,
          loop: ir.For) -> int:
    """How many parts the warps split each product's columns in (`AccTile.cols`; `warps` then counts
    `warps / cols` row blocks): where the accumulators would hold more than `ACC_REGS` registers a thread (or a
    `num_warps` hint asks for more warps than the rows have 16-row blocks), 2. Each part must be whole 16-column
    blocks (ldmatrix's pairs of n8 tiles), and an A the body computes is then written to shared memory for
    every warp of its rows to read, its product deferred to the end of the body: a product whose result is its
    accumulator only."""
    rule = cols_rule()
    yielded = {v.id for v in loop.body.ops[-1].values}  # type: ignore[attr-defined]
    if hinted:
        want = warps // (M // 16) if warps > M // 16 and warps % (M // 16) == 0 else 1
    elif rule == "auto":
        accs = sum(d.result.shape[1] for d, *_ in dots if d.result.id in yielded)
        # (at most 8 warps: 16 would leave 128 registers a thread, as many as the accumulators' 128 x 128 at D = 128)
        want = 2 if M % (16 * warps) == 0 and warps <= 4 and accs * (M // warps) // 32 > ACC_REGS else 1
    else:
        want = int(rule)
    if want == 1 or rule == "1":
        return 1
    if any(d.result.shape[1] % (16 * want) for d, *_ in dots):
        return 1
    if any(a is None and d.result.id not in yielded for d, a, *_ in dots):
        return 1
    return want


def _rewrite(k: g.GpuKernel, p: _Plan) -> tuple[list[object], dict[int, object], int]:
    """The kernel's new top-level ops, the layouts so far, the next value id."""
    rw = _Rewriter(k)
    loop, S = p.loop, p.stages
    gone = {id(t.load) for t in p.tiles} | {id(c) for t in p.tiles for c in t.chain}
    gone |= {id(c) for *_, c in p.dots if c is not None}
    ops = list(k.body.ops)
    at = ops.index(loop)
    out = [o for o in ops[:at] if id(o) not in gone]
    for t in p.tiles:
        r, c = t.shape
        t.buf = rw.fresh.value(t.load.result.dtype, (S if t.ring else 1, r, c), f"s_{t.load.tensor}")
        rw.layouts[t.buf.id] = Shared(128, "row") if p.wgmma else SmemTile()
        out.append(g.SmemAlloc(t.buf))
    zero = rw.const(out, 0)
    for t in p.tiles:  # the tiles loaded before the loop: copied once, in iteration 0's group
        if not t.ring:
            out.append(g.CpAsyncTile(t.load.tensor, t.load.offsets, t.buf, zero, t.vector, t.load.span))  # type: ignore[arg-type]
    iv = loop.body.args[0]
    rings = [t for t in p.tiles if t.ring]
    offsets = [v for t in rings for v in t.load.offsets]

    def issue(dst: list[object], new_iv: ir.Value, stage: ir.Value) -> None:
        m = rw.clone(dst, _slice(loop.body, offsets), iv, new_iv)
        for t in rings:
            cs = tuple(m.get(v.id, v) for v in t.load.offsets)
            dst.append(g.CpAsyncTile(t.load.tensor, cs, t.buf, stage, t.vector, t.load.span))  # type: ignore[arg-type]
        dst.append(g.CpAsyncCommit(loop.span))

    E = ir.ElemOp
    for s in range(S - 1):
        ivs = loop.lower if s == 0 else rw.elem(out, E.ADD, loop.lower, rw.elem(out, E.MUL, loop.step, rw.const(out, s)))
        issue(out, ivs, zero if s == 0 else rw.const(out, s))
    body: list[object] = []
    it = rw.elem(body, E.DIV, rw.elem(body, E.SUB, iv, loop.lower), loop.step, "i")
    s_const = rw.const(body, S)
    stage = rw.elem(body, E.REM, it, s_const, "stage")
    body.append(g.CpAsyncWait(S - 2, True, loop.span, p.wgmma))
    ahead = rw.elem(body, E.ADD, iv, rw.elem(body, E.MUL, loop.step, rw.const(body, S - 1)))
    issue(body, ahead, rw.elem(body, E.REM, rw.elem(body, E.ADD, it, rw.const(body, S - 1)), s_const, "next"))
    dot_of = {id(d): (a, b, nk, c) for d, a, b, nk, c in p.dots}
    later: list[object] = []  # with p.cols > 1: the products of an A the body computes, after its last write
    waited: list[tuple[ir.Value, ir.Value]] = []  # (result, wgmma's) of those products on wgmma: one wait
    early, moved = _wgmma_early(rw, p, body, stage, zero) if p.wgmma else ({}, set())
    for o in loop.body.ops:
        if id(o) in gone or id(o) in moved:
            continue
        if isinstance(o, g.DotOp):
            a, b, nk, c = dot_of[id(o)]
            st = (lambda t: stage if t.ring else zero)  # noqa: E731
            if id(o) in early:  # issued at the top of the body: its wait, before the first use of its result
                body.append(early[id(o)])
            elif p.wgmma and (a is not None or p.cols == 1):
                body += _wgmma(rw, o, a, b, nk, c, st)
            elif a is not None:
                body.append(g.RingMma(o.result, a.buf, b.buf, st(b), o.acc, nk, st(a), None, o.span))  # type: ignore[arg-type]
            elif p.cols > 1:
                x = c.x if c is not None else o.a
                buf = rw.fresh.value(o.a.dtype, (1, *o.a.shape), f"s_a{len(later)}")
                rw.layouts[buf.id] = Shared(128, "row") if p.wgmma else SmemTile()
                out.append(g.SmemAlloc(buf))
                body.append(g.AccToSmem(buf, x, False, o.span))
                if p.wgmma:
                    r = rw.fresh.value(o.result.dtype, o.result.shape, "wg")
                    later.append(g.Wgmma(r, buf, b.buf, st(b), o.acc, True, nk, None, o.span, zero))  # type: ignore[arg-type]
                    waited.append((o.result, r))
                else:
                    later.append(g.RingMma(o.result, buf, b.buf, st(b), o.acc, nk, zero, None, o.span))  # type: ignore[arg-type]
            else:
                x, dt = (c.x, c.result.dtype) if c is not None else (o.a, None)
                body.append(g.RingMma(o.result, x, b.buf, st(b), o.acc, nk, None, dt, o.span))  # type: ignore[arg-type]
            continue
        if isinstance(o, ir.Yield) and later:
            # one CTA barrier after the last write: every warp's columns of each A are there (the barrier at the
            # top of the next iteration keeps the next writes after every warp's reads)
            last = max(i for i, x in enumerate(body) if isinstance(x, g.AccToSmem))
            body[last] = dataclasses.replace(body[last], barrier=True)  # type: ignore[type-var]
            body += later
            if waited:
                body.append(g.WgmmaWait(tuple(v for v, _ in waited), tuple(r for _, r in waited), 0, o.span))
        body.append(o)
    out.append(dataclasses.replace(loop, body=ir.Region(loop.body.args, tuple(body))))
    out.append(g.CpAsyncWait(0, True, loop.span))
    out += ops[at + 1:]
    return out, rw.layouts, rw.fresh.next  # type: ignore[return-value]


def _wgmma_early(rw: _Rewriter, p: _Plan, body: list[object], stage: ir.Value,
                 zero: ir.Value) -> tuple[dict[int, object], set[int]]:
    """The products of two shared operands as warpgroup MMAs issued together at the top of the body (S and dP:
    the second runs under the first's wait and what the body computes from it), each waited for where it was
    (`wait_group` n: the n of them issued after it may still run). ({id of the product: its wait}, the ids of
    the body's constants moved up with them: their zero accumulators)."""
    made = {r.id: o for o in p.loop.body.ops for r in g.results(o)}
    # (an accumulator the body makes must be a constant, which moves up with it: a product of zeros)
    mine = [(d, a, b, nk) for d, a, b, nk, _ in p.dots
            if a is not None and (d.acc.id not in made or isinstance(made[d.acc.id], ir.Const))]
    moved = set(dict.fromkeys(id(made[d.acc.id]) for d, *_ in mine if d.acc.id in made))
    body += [o for o in p.loop.body.ops if id(o) in moved]
    waits: dict[int, object] = {}
    for i, (d, a, b, nk) in enumerate(mine):
        r = rw.fresh.value(d.result.dtype, d.result.shape, "wg")
        st = (lambda t: stage if t.ring else zero)  # noqa: E731
        body.append(g.Wgmma(r, a.buf, b.buf, st(b), d.acc, True, nk, None, d.span, st(a)))  # type: ignore[arg-type]
        waits[id(d)] = g.WgmmaWait((d.result,), (r,), len(mine) - 1 - i, d.span)
    return waits, moved


def _wgmma(rw: _Rewriter, o: g.DotOp, a: _Tile | None, b: _Tile, nk: bool, c: ir.Cast | None,
           st: object) -> list[object]:
    """Product `o` as a warpgroup MMA and its wait (`_use_wgmma`): A a K-major tile or registers, B K-major where
    the product reads a tile transposed ([N, K] stored), MN-major where it reads it as it is."""
    r = rw.fresh.value(o.result.dtype, o.result.shape, "wg")
    if a is not None:
        mma: object = g.Wgmma(r, a.buf, b.buf, st(b), o.acc, True, nk, None, o.span, st(a))  # type: ignore[arg-type, operator]
    else:
        x, dt = (c.x, c.result.dtype) if c is not None else (o.a, None)
        mma = g.WgmmaRegA(r, x, b.buf, st(b), o.acc, nk, None, o.span, dt)  # type: ignore[arg-type, operator]
    return [mma, g.WgmmaWait((o.result,), (r,), 0, o.span)]


def _layouts(ops: list[object], loop: ir.For, M: int, warps: int, layouts: dict[int, object],
             cols: int = 1) -> object | None:
    """Every tile value of `ops` in the `AccTile(warps, cols=cols)` layout (rows or columns for vectors); the
    first op that would then move values between threads, or None."""
    from . import attention_layout as al

    new = next(o for o in ops if isinstance(o, ir.For) and o.body.args == loop.body.args)
    ys = new.body.ops[-1].values  # type: ignore[attr-defined]
    links = [(i0, a, y, r) for i0, a, y, r in zip(new.inits, new.body.args[1:], ys, new.results, strict=True)]
    cl = al.Classes(M)
    al.classify(ops, cl, [])
    al.classify(list(new.body.ops), cl, links)
    try:
        al.assign(ops, cl, warps, layouts, cols)  # type: ignore[arg-type]
        return al.moving_op(ops, layouts)  # type: ignore[arg-type]
    except AssertionError:  # a tile the layout cannot hold (rows not whole blocks of the warps, > 2 live dims)
        return next((o for o in ops if o is new), new)


def pipeline_products(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    if not enabled():
        return k
    loops = [o for o in k.body.ops if isinstance(o, ir.For | ir.While)]
    if len(loops) != 1 or not isinstance(loops[0], ir.For):
        return k
    from .attention_layout import unshare_loop_aranges

    p = _plan(k, ctx, loops[0])
    if p is None:
        return k
    if isinstance(p, str):
        ctx.refuse(_PATH, loops[0].span, p)
        return k
    # an `arange` shared by rows made before the loop and the keys in it (BM == BN) is made again in the loop,
    # where each gets its own registers
    given = k  # (a loop it refuses keeps its kernel as it was, arange and all)
    k = unshare_loop_aranges(k) or k
    loop = next(o for o in k.body.ops if isinstance(o, ir.For))
    p = _plan(k, ctx, loop)
    assert isinstance(p, _Plan), p
    ops, layouts, nxt = _rewrite(k, p)
    bad = _layouts(ops, loop, p.M, p.warps, layouts, p.cols)
    if bad is not None and p.cols > 1:  # (a row's sum, say: the warps split rows only, as before)
        p = _plan(k, ctx, loop, split=False)
        assert isinstance(p, _Plan), p
        ops, layouts, nxt = _rewrite(k, p)
        bad = _layouts(ops, loop, p.M, p.warps, layouts)
    if bad is not None:
        from .attention_match import describe

        ctx.refuse(_PATH, loop.span, f"{describe(bad)} would move values between threads, where every value "
                   "computes in the registers the products leave it in")
        return given
    # the Hopper GEMM pipeline's note on this loop said where its products ran before
    ctx.notes[:] = [n for n in ctx.notes if "its loads into registers an iteration at a time" not in n.message]
    return dataclasses.replace(k, body=ir.Region(k.body.args, tuple(ops)), layouts=layouts,  # type: ignore[arg-type]
                               next_id=nxt, num_warps=p.warps * p.cols, num_stages=p.stages)


__all__ = ["default_stages", "enabled", "pipeline_products", "wgmma_rule"]
