"""The text form of GPU IR (`tilec emit --stage gpu`, the pass goldens).

Tile IR's printer (`ir/printer.py`) prints the ops both IRs share; every tile
value's type is followed by its layout (`: f32[64, 64] #wgmma<...>`), and the
GPU ops print as below. TMA descriptors are listed after the parameters.

    %sA.3 = smem.alloc : f16[4, 128, 64] #shared<swizzle=128, row-major> @0
    %full.5 = mbarrier.alloc count 1 : i64[4] #mbarrier @196608
    warp_specialize {
    role producer warps 4 regs 40:
      ...
    role consumer warps 8 regs 232:
      ...
    }
"""

from __future__ import annotations

from tilelang.ir import nodes as ir
from tilelang.ir.printer import _Namer, _op, print_params_header

from . import nodes as g


def print_gpu_kernel(k: g.GpuKernel) -> str:
    """The text of `k`, ending with a newline."""

    def note(v: ir.Value) -> str:
        lay = k.layouts.get(v.id)
        return f" {lay}" if lay is not None and v.shape else ""

    n = _Namer(note, _gpu_op)
    tmas = tuple(f"tma @{t.name} = @{t.tensor} box [{t.box[0]}, {t.box[1]}] swizzle {t.swizzle}"
                 for t in k.tma_params)
    ir_params = tuple(p for p in k.params if isinstance(p, ir.TensorParam | ir.ScalarParam))
    tail = f"{k.arch} warps {k.num_warps} stages {k.num_stages} smem {k.smem_bytes}"
    if k.short is not None:  # the launch picks another variant where the shape satisfies this
        tail += f" short @{k.short.param}.dim{k.short.dim} <= {k.short.limit}"
    if k.split is not None:  # the launch picks the split form where its walk splits (`split_form.SplitForm`)
        tail += f" split-form @{k.split.param} ({len(k.split.ops)} plan ops)"
    short = [f"@{n}.rows <= {f.rows_at_most}" for n, f in sorted(k.facts.items()) if f.rows_at_most]
    short += [f"@{n} split walk {f.split_walk}" for n, f in sorted(k.facts.items()) if f.split_walk]
    tail += f" (variant: {', '.join(short)})" if short else ""
    return print_params_header(k, n, tail, k.body, extra_params=tmas, word="gpu.kernel",
                               ir_params=ir_params)


def _gpu_op(op: object, n: _Namer, out: list[str], depth: int) -> bool:
    ind = "  " * depth

    def line(text: str) -> None:
        out.append(ind + text)

    def at(off: int) -> str:
        return f" @{off}" if off >= 0 else ""

    match op:
        case g.DotOp(result=r, a=a, b=b, acc=c, engine=e):
            line(f"{n.define(r)} = dot.{e} {n(a)}, {n(b)}, {n(c)} : {a.type}, {b.type} -> {r.type}{n.note(r)}")
        case g.AccLoad(result=r, load=ld, dims=ds):
            offs = ", ".join(n(o) for o in ld.offsets)
            line(f"{n.define(r)} = acc_load @{ld.tensor}[{offs}] {list(ld.result.shape)} dims {list(ds)}"
                 f" : {r.type}{n.note(r)}")
        case g.AccIndex(result=r, dim=d, offset=o):
            line(f"{n.define(r)} = acc_index dim {d}" + (f" + {o}" if o else "") + f" : {r.type}{n.note(r)}")
        case g.AccColumns(result=r, x=x, part=pt, parts=ps):
            line(f"{n.define(r)} = acc_columns {n(x)} part {pt} of {ps} : {r.type}{n.note(r)}")
        case g.ConvertLayout(result=r, x=x):
            line(f"{n.define(r)} = convert_layout {n(x)} : {x.type}{n.note(x)} -> {r.type}{n.note(r)}")
        case g.SmemAlloc(result=r, offset=off):
            line(f"{n.define(r)} = smem.alloc : {r.type}{n.note(r)}{at(off)}")
        case g.BarrierAlloc(result=r, count=c, offset=off, fenced=f):
            line(f"{n.define(r)} = mbarrier.alloc count {c} : {r.type}{n.note(r)}{at(off)}{'' if f else ' unfenced'}")
        case g.TmaLoad(desc=d, coords=cs, dst=dst, stage=s, part=p, bar=b):
            line(f"tma.load @{d}[{', '.join(n(c) for c in cs)}] -> {n(dst)}[{n(s)}] +{p}, {n(b)}[{n(s)}]")
        case g.CopyToShared(tensor=t, offsets=cs, dst=dst, stage=s):
            line(f"copy_to_shared @{t}[{n(cs[0])}, {n(cs[1])}] -> {n(dst)}[{n(s)}]")
        case g.Fence(kind=kind):
            line(f"fence.{kind}")
        case g.BarrierExpect(bar=b, stage=s, nbytes=nb):
            line(f"mbarrier.expect_tx {n(b)}[{n(s)}], {nb}")
        case g.BarrierWait(bar=b, stage=s, phase=p, after=a):
            line(f"mbarrier.wait {n(b)}[{n(s)}], parity {n(p)}" + (f" after {', '.join(n(x) for x in a)}" if a else ""))
        case g.BarrierArrive(bar=b, stage=s, pred=p):
            line(f"mbarrier.arrive {n(b)}[{n(s)}]" + (f" if {n(p)}" if p is not None else ""))
        case g.Wgmma(result=r, a=a, b=b, stage=s, acc=c, a_kmajor=ak, b_kmajor=bk, use_acc=u, a_stage=sa):
            majors = f"a {'k' if ak else 'mn'}-major, b {'k' if bk else 'mn'}-major"
            use = f" use_acc {n(u)}" if u is not None else ""
            line(f"{n.define(r)} = wgmma {n(a)}[{n(sa if sa is not None else s)}], {n(b)}[{n(s)}], {n(c)}{use} "
                 f"({majors}) : {r.type}{n.note(r)}")
        case g.WgmmaRegA(result=r, a=a, b=b, stage=s, acc=c, b_kmajor=bk, use_acc=u, first=f):
            if f is not None:
                _gpu_op(f, n, out, depth)
                out[-1] += "  // issued with the next"
            use = f" use_acc {n(u)}" if u is not None else ""
            line(f"{n.define(r)} = wgmma.rs {n(a)}, {n(b)}[{n(s)}], {n(c)}{use} (b {'k' if bk else 'mn'}-major)"
                 f" : {r.type}{n.note(r)}")
        case g.PackPairs(result=r, x=x, dtype=dt):
            line(f"{n.define(r)} = pack_pairs {n(x)} as {dt} : {r.type}{n.note(r)}")
        case g.ZeroRows(buf=b, stage=s, offset=o, bound=nb, threads=t):
            line(f"zero_rows {n(b)}[{n(s)}] where row + {n(o)} >= {n(nb)} ({t} threads, then fence, bar 1)")
        case g.TmaStore(desc=d, coords=cs, value=v, buf=b, stage=st, alt=a, ran=r, first=f, unit=u):
            via = n(b) + (f"[{n(st)}]" if st is not None else "") + (f" if {n(r)} else {n(a)}" if a is not None else "")
            line(f"tma.store {n(v)} via {via} -> @{d}[{', '.join(map(n, cs))}] by {u} threads"
                 + (f" (first: bar {f})" if f else ""))
        case g.SmemTileRead(result=r, buf=b, stage=st):
            line(f"{n.define(r)} = smem.read {n(b)}[{n(st)}] : {r.type}{n.note(r)}")
        case g.SmemTileWrite(buf=b, stage=st, value=v):
            line(f"smem.write {n(v)} -> {n(b)}[{n(st)}] (then fence, bar {g.QX_BARRIER} + warpgroup)")
        case g.TmaStoreWait(pred=p):
            line("tma.store.wait_read" + (f" if {n(p)}" if p is not None else ""))
        case g.WarpgroupTurn(kind=kind, base=b):
            line(f"warpgroup_turn.{kind} {b}")
        case g.WarpAny(result=r, x=x):
            line(f"{n.define(r)} = warp_any {n(x)} : {r.type}")
        case g.WarpgroupIndex(result=r):
            line(f"{n.define(r)} = warpgroup_index : {r.type}")
        case g.TicketTake(result=r, size=sz, bar=b, stage=st):
            line(f"{n.define(r)} = ticket.take %split[{n(sz)}] of {n(sz)}, publish {n(b)}[{n(st)}] : {r.type}")
        case g.TicketRead(result=r, bar=b):
            line(f"{n.define(r)} = ticket.read {n(b)} : {r.type}")
        case g.Touch(values=vs):
            line(f"touch {', '.join(map(n, vs))}")
        case g.Stamp(slot=sl, tile=t):
            line(f"stamp {sl} tile {n(t)}")
        case g.SplitSave(values=vs, slot=sl, threads=t):
            line(f"split.save {', '.join(map(n, vs))} -> %splitws[{n(sl)}] ({t} threads)")
        case g.SplitLoad(results=rs, slot=sl, threads=t, head=head, tail=tail, fma=fma):
            of = "".join((f" after {', '.join(map(n, head))}" if head else "",
                          f" before {', '.join(map(n, tail))}" if tail else "",
                          f" * {n(fma[1])} + {n(fma[0])}" if fma is not None else ""))
            line(f"{', '.join(n.define(r) for r in rs)} = split.load %splitws[{n(sl)}]{of} ({t} threads)")
        case g.SplitArrive(result=r, group=gr, size=sz, threads=t):
            line(f"{n.define(r)} = split.arrive %split[{n(gr)}] of {n(sz)} ({t} threads)")
        case g.Opaque(results=rs, values=vs):
            line(f"{', '.join(n.define(r) for r in rs)} = opaque {', '.join(map(n, vs))}")
        case g.Undef(result=r):
            line(f"{n.define(r)} = undef : {r.type}{n.note(r)}")
        case g.WgmmaWait(results=rs, values=vs, pending=p):
            defs = ", ".join(n.define(v) for v in rs)
            line(f"{defs} = wgmma.wait {', '.join(map(n, vs))} pending {p}")
        case g.CpAsyncTile(tensor=t, coords=cs, dst=d, stage=st, vector=vec, transpose=tr, flat=fl):
            kind = "cp.async.transposed" if tr else "cp.async.flat" if fl else "cp.async" if vec else "copy.elements"
            line(f"{kind} @{t}[{n(cs[0])}, {n(cs[1])}] -> {n(d)}[{n(st)}]")
        case g.CpAsyncCommit():
            line("cp.async.commit")
        case g.CpAsyncWait(pending=p, barrier=bar, fence=f):
            line(f"cp.async.wait {p}{', fence.proxy.async' if f else ''}{', barrier' if bar else ''}")
        case g.RingCopy(tensor=t, offsets=os, type=ty, layout=lay, dst=d, stage=st, pred=p):
            line(f"cp.async.own @{t}[{', '.join(map(n, os))}] -> {n(d)}[{n(st)}] if {n(p)} : {ty} {lay}")
        case g.RingRead(result=r, src=src, stage=st):
            line(f"{n.define(r)} = ring.read {n(src)}[{n(st)}] : {r.type}{n.note(r)}")
        case g.SmemDot(result=r, a=a, b=b, stage=st, acc=c, b_nk=nk, prefetch=pf):
            pre = f" (prefetch: cp.async.wait {pf}, barrier)" if pf >= 0 else ""
            line(f"{n.define(r)} = dot.mma.sync.smem {n(a)}[{n(st)}], {n(b)}[{n(st)}]{' (b n-k)' if nk else ''}, "
                 f"{n(c)}{pre} : {r.type}{n.note(r)}")
        case g.RingMma(result=r, a=a, b=b, stage=st, acc=c, b_nk=nk, a_stage=sa, dtype=dt):
            src = f"{n(a)}[{n(sa)}]" if sa is not None else n(a) + (f" as {dt}" if dt is not None else "")
            line(f"{n.define(r)} = dot.mma.sync.ring {src}, {n(b)}[{n(st)}]{' (b n-k)' if nk else ''}, "
                 f"{n(c)} : {r.type}{n.note(r)}")
        case g.AccToSmem(buf=b, value=v, barrier=bar):
            line(f"smem.write {n(v)} -> {n(b)}[0]{', barrier' if bar else ''}")
        case g.SmemFma(result=r, a=a, b=b, stage=st, acc=c, k=kk, a_mk=mk, b_nk=nk, prefetch=pf, parts=ps, wide=wd):
            pre = f" (prefetch: cp.async.wait {pf}, barrier)" if pf >= 0 else ""
            split = (f" in {ps} parts" if ps > 1 else "") + (f" (b widened once into {n(wd)})" if wd is not None else "")
            line(f"{n.define(r)} = dot.fma.smem {n(a)}[{n(st)}]{'' if mk else ' (a k-m)'}, {n(b)}[{n(st)}]"
                 f"{' (b n-k)' if nk else ''}, {n(c)} k {kk}{split}{pre} : {r.type}{n.note(r)}")
        case g.FmaPartsSum(result=r, acc=c, parts=ps):
            line(f"{n.define(r)} = fma.parts.sum {n(c)} of {ps} : {r.type}{n.note(r)}")
        case g.WarpSpecialize(roles=roles):
            line("warp_specialize {")
            for role in roles:
                one = " (one thread)" if role.single else ""
                line(f"role {role.name} warps {role.warps} regs {role.regs}{one}:")
                for sub in role.body.ops:
                    _op(sub, n, out, depth + 1)  # type: ignore[arg-type]
            line("}")
        case _:
            return False
    return True


__all__ = ["print_gpu_kernel"]
