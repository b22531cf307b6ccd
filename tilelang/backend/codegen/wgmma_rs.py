"""Code generation of `WgmmaRegA`: warpgroup MMA with the A operand in
registers (`wgmma.mma_async ... {a0, a1, a2, a3}, descB`), the second
product of the attention pipeline (`passes/attention.py`): P = softmax
weights, computed in the accumulator layout, feeds the P V product without a
trip through shared memory.

The A fragment of one m64k16 step is, per thread, four 32-bit registers of
two 16-bit values: (row, k), (row + 8, k), (row, k + 8), (row + 8, k + 8)
with row = 16 w + l/4 and k = 2 (l % 4) + {0, 1} (PTX ISA, "register
fragments" of wgmma): exactly the accumulator fragment of an m64n16 block,
so the `AccTile` registers of P (slots (ni, h, j)) pack two at a time into
A registers: step kk takes slots 8 kk .. 8 kk + 7 in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tilelang.dtypes import DType

from ..gpu import nodes as g
from ..gpu.layouts import AccTile, Shared


def emit_op(em: Any, op: object) -> bool:
    if isinstance(op, g.WgmmaRegA):
        wgmma_rs(em, op)
        return True
    if isinstance(op, g.WarpgroupTurn):
        warpgroup_turn(em, op)
        return True
    if isinstance(op, g.ZeroRows):
        zero_rows(em, op)
        return True
    if isinstance(op, g.PackPairs):
        assert isinstance(em.layouts[op.x.id], AccTile), em.layouts[op.x.id]
        x = em.tile(op.x)
        ty = {DType.F16: "half", DType.BF16: "bfloat"}[op.dtype]
        em.env[op.result.id] = [_pack(em, x[2 * i], x[2 * i + 1], ty) for i in range(len(x) // 2)]
        assert len(em.env[op.result.id]) == em.nregs(op.result), (len(x), em.nregs(op.result))
        return True
    return False


def zero_rows(em: Any, op: g.ZeroRows) -> None:
    """`ZeroRows`: in a branch taken only where some row goes (uniform: the
    bound and offset are scalars), each thread zeroes its 16-byte chunks of
    the stage whose row is past the bound (chunk c is bytes 16 c .. of the
    stage, row (c / 8) mod rows of its 64-column slab), fences them for the
    async proxy, and the role meets at named barrier 1 before any wgmma.

    Row r goes where `r + offset >= bound` in i32, the interpreter's wrapping sum (hrev21:
    `bound - offset` in i32 wrapped, `offset = k0 - 64` with `bound = i32::MAX` zeroed every row
    of the first block, and a sum `r + offset` past 2^31 - 1 is negative, so its row stays):
    whether some row goes is `bound - offset < rows` in i64 where no sum wraps, else taken."""
    _, rows, cols = op.buf.shape
    chunks = rows * cols * op.buf.dtype.itemsize // 16
    assert cols % 64 == 0 and chunks % op.threads == 0, (op.buf.shape, op.threads)
    bound, offset = em.scalar(op.bound), em.scalar(op.offset)
    wide = em.emit(f"sub i64 {em.emit(f'sext i32 {bound} to i64')}, {em.emit(f'sext i32 {offset} to i64')}")
    short = em.emit(f"icmp slt i64 {wide}, {rows}")
    wraps = em.emit(f"icmp sgt i32 {offset}, {2**31 - rows}")  # offset + rows - 1 > i32::MAX
    some = em.emit(f"or i1 {short}, {wraps}")
    go, done = em.new_label("zrows"), em.new_label("zdone")
    em.cbr(some, go, done)
    em.label(go)
    base = em.smem_at(op.buf, op.stage)
    for i in range(chunks // op.threads):
        c = em.emit(f"add i32 {em.role_tid}, {i * op.threads}")
        row = em.emit(f"urem i32 {em.emit(f'lshr i32 {c}, 3')}, {rows}")
        past = em.emit(f"icmp sge i32 {em.emit(f'add i32 {row}, {offset}')}, {bound}")
        st, nx = em.new_label("zrow"), em.new_label("zrown")
        em.cbr(past, st, nx)
        em.label(st)
        at = em.emit(f"getelementptr i8, ptr addrspace(3) {base}, i32 {em.emit(f'shl i32 {c}, 4')}")
        em.stmt(f"store <4 x i32> zeroinitializer, ptr addrspace(3) {at}, align 16")
        em.br(nx)
        em.label(nx)
    em.proxy_fence()
    em.named_barrier(1, op.threads)
    em.br(done)
    em.label(done)


def warpgroup_turn(em: Any, op: g.WarpgroupTurn) -> None:
    wg = em.emit(f"lshr i32 {em.role_tid}, 7")
    if op.kind == "end":  # warpgroup 0 takes warpgroup 1's last pass
        em.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")
        _in_warpgroup(em, wg, 0, f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {op.base}, i32 256)")
        return
    if op.kind == "wait":
        em.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")
        em.stmt(f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {em.emit(f'add i32 {wg}, {op.base}')}, i32 256)")
        return
    em.declare("declare void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32, i32)")
    if op.kind == "pass":
        other = em.emit(f"add i32 {em.emit(f'xor i32 {wg}, 1')}, {op.base}")
        em.stmt(f"call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 {other}, i32 256)")
        return
    assert op.kind == "start", op.kind
    _in_warpgroup(em, wg, 1, f"call void @llvm.nvvm.barrier.cta.arrive.aligned.count(i32 {op.base}, i32 256)")


def _in_warpgroup(em: Any, wg: str, which: int, stmt: str) -> None:
    """`stmt` in warpgroup `which` only (a branch around it for the other)."""
    go, done = em.new_label("turn"), em.new_label("turnd")
    em.cbr(em.emit(f"icmp eq i32 {wg}, {which}"), go, done)
    em.label(go)
    em.stmt(stmt)
    em.br(done)
    em.label(done)


def _pack(em: Any, lo: str, hi: str, ty: str) -> str:
    """Two f32 values rounded to 16 bits, `lo` in the low half: one
    `cvt.rn.f16x2.f32` (or bf16x2) for the vector conversion."""
    v = em.emit(f"insertelement <2 x float> undef, float {lo}, i32 0")
    v = em.emit(f"insertelement <2 x float> {v}, float {hi}, i32 1")
    h = em.emit(f"fptrunc <2 x float> {v} to <2 x {ty}>")
    return em.emit(f"bitcast <2 x {ty}> {h} to i32")  # type: ignore[no-any-return]


def k_bytes(k0: int, kmajor: bool, rows: int, sw: int) -> int:
    """Byte offset of column k0 (a multiple of 16) in a wgmma operand tile of
    `rows` rows: K-major, whole swizzle rows of sw/2 elements, then 2 bytes
    each; MN-major, 64-element slabs of 128 bytes a row."""
    return (k0 // (sw // 2)) * rows * sw + (k0 % (sw // 2)) * 2 if kmajor else k0 * 128


@dataclass
class _Part:
    """One wgmma group of an asm statement: its accumulator registers (tied
    in/out), its other operands (typed LLVM arguments with constraints) and
    its lines, written with `{o}` (first output) and `{e}` (first extra
    operand) left to fill in."""

    acc: list[str]
    extras: list[tuple[str, str]]  # (constraint, "type value")
    lines: list[str]


def _smem_part(em: Any, op: g.Wgmma) -> _Part:
    """S = A @ B with both operands in shared memory (m64 rows per warpgroup)."""
    lay = em.layouts[op.result.id]
    N = op.result.shape[1]
    assert lay.m_per_group == 64, lay
    _, ra, ca = op.a.shape
    _, rb, _ = op.b.shape
    K = ca if op.a_kmajor else ra
    desc_a, desc_b, sa, sb = em.operand_descs(op, 64)
    ty = {DType.F16: "f16", DType.BF16: "bf16"}[op.a.dtype]
    ks = K // 16
    n = N // 2
    extras: list[tuple[str, str]] = []
    for kk in range(ks):
        k0 = kk * 16
        ab = k_bytes(k0, op.a_kmajor, ra, sa.swizzle)
        bb = k_bytes(k0, op.b_kmajor, rb, sb.swizzle)
        extras.append(("l", f"i64 {em.emit(f'add i64 {desc_a}, {ab >> 4}')}"))
        extras.append(("l", f"i64 {em.emit(f'add i64 {desc_b}, {bb >> 4}')}"))
    use = em.scalar(op.use_acc) if op.use_acc is not None else "true"
    extras += [("b", f"i1 {use}"), ("b", "i1 true")]
    ta, tb = (0 if op.a_kmajor else 1), (0 if op.b_kmajor else 1)
    outs = ",".join(f"${{o{i}}}" for i in range(n))
    lines = [f"wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{ty}.{ty} {{{outs}}}, ${{e{2 * kk}}}, ${{e{2 * kk + 1}}}, "
             f"${{e{2 * ks + (0 if kk == 0 else 1)}}}, 1, 1, {ta}, {tb};" for kk in range(ks)]
    return _Part(list(em.tile(op.acc)), extras, lines)


def _rs_part(em: Any, op: g.WgmmaRegA) -> _Part:
    """O = acc + A @ B with A in registers (the `AccTile` fragment), B in shared memory."""
    la = em.layouts[op.a.id]
    assert isinstance(la, AccTile), la
    packed = op.a.dtype is DType.I32  # a `PackPairs` result: the A registers as they are
    adt = op.dtype or op.a.dtype
    M, K = op.a.shape
    K *= 2 if packed else 1
    N = op.result.shape[1]
    assert M // la.warps == 16 and K % 16 == 0 and N % 8 == 0 and N <= 256, (op.a.shape, op.result.shape)
    sb = em.layouts[op.b.id]
    assert isinstance(sb, Shared)
    _, rb, _ = op.b.shape
    desc_b = em.operand_desc(op.b, op.stage, op.b_kmajor, sb.swizzle)
    a = em.tile(op.a)
    acc = list(em.tile(op.acc))
    n = N // 2
    assert len(acc) == n and len(a) == (K // 4 if packed else K // 2), (len(acc), n, len(a), K)
    ty = {DType.F16: "half", DType.BF16: "bfloat"}[adt]
    pty = {DType.F16: "f16", DType.BF16: "bf16"}[adt]
    ks = K // 16
    extras: list[tuple[str, str]] = []
    for kk in range(ks):
        if packed:
            extras += [("r", f"i32 {r}") for r in a[4 * kk:4 * kk + 4]]
            continue
        s = a[8 * kk:8 * kk + 8]
        extras += [("r", f"i32 {_pack(em, s[2 * i], s[2 * i + 1], ty)}") for i in range(4)]
    for kk in range(ks):
        k0 = kk * 16
        b_bytes = k_bytes(k0, op.b_kmajor, rb, sb.swizzle)
        extras.append(("l", f"i64 {em.emit(f'add i64 {desc_b}, {b_bytes >> 4}')}"))
    use = em.scalar(op.use_acc) if op.use_acc is not None else "true"
    extras += [("b", f"i1 {use}"), ("b", "i1 true")]
    tb = 0 if op.b_kmajor else 1
    outs = ",".join(f"${{o{i}}}" for i in range(n))
    lines = []
    for kk in range(ks):
        ar = ",".join(f"${{e{4 * kk + i}}}" for i in range(4))
        lines.append(f"wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{pty}.{pty} {{{outs}}}, {{{ar}}}, "
                     f"${{e{4 * ks + kk}}}, ${{e{5 * ks + (0 if kk == 0 else 1)}}}, 1, 1, {tb};")
    return _Part(acc, extras, lines)


def _issue(em: Any, parts: list[_Part]) -> list[list[str]]:
    """One asm statement: a fence (every register the groups read is written
    before it), then each part's wgmmas and a commit: each part is a group."""
    nout = sum(len(p.acc) for p in parts)
    lines = ["wgmma.fence.sync.aligned;"]
    o = 0
    e = 2 * nout
    for p in parts:
        names = {f"o{i}": f"${o + i}" for i in range(len(p.acc))}
        names |= {f"e{i}": f"${e + i}" for i in range(len(p.extras))}
        lines += [re.sub(r"\$\{([oe]\d+)\}", lambda m, names=names: names[m.group(1)], ln) for ln in p.lines]
        lines.append("wgmma.commit_group.sync.aligned;")
        o += len(p.acc)
        e += len(p.extras)
    asm = "\\0A".join(lines)
    cons = ",".join(["=f"] * nout + [str(i) for i in range(nout)]
                    + [c for p in parts for c, _ in p.extras])
    args = ", ".join([f"float {x}" for p in parts for x in p.acc] + [v for p in parts for _, v in p.extras])
    sty = em.float_struct(nout)
    res = em.emit(f'call {sty} asm sideeffect "{asm}", "{cons}"({args})')
    outs = [em.emit(f"extractvalue {sty} {res}, {i}") for i in range(nout)]
    out, pos = [], 0
    for p in parts:
        out.append(outs[pos:pos + len(p.acc)])
        pos += len(p.acc)
    return out


def wgmma_rs(em: Any, op: g.WgmmaRegA) -> None:
    parts = ([_smem_part(em, op.first)] if op.first is not None else []) + [_rs_part(em, op)]
    outs = _issue(em, parts)
    if op.first is not None:
        em.env[op.first.result.id] = outs[0]
    em.env[op.result.id] = outs[-1]


__all__ = ["emit_op", "wgmma_rs"]
