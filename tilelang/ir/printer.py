"""The one canonical text form of Tile IR (`tilec emit --stage ir`, golden tests).

Values are renumbered in definition order (params, then ops in program order,
region args before the ops of their region), so the text does not depend on
the ids the lowering happened to allocate: two structurally equal kernels
print the same. A value prints as `%N` or, with a source hint, `%hint.N`.

Layout (one op per line, regions indented by two spaces):

    kernel add<B = 1024>(%z: &mut f32[?] tile [1024], %x: &f32[?], %n.0: i32) grid 1 warps 4 stages 2 {
      %pid.1 = block_id 0 : i32
      %2 = const 1024 : i32
      %3 = mul %pid.1, %2 : i32
      %4 = load @x[%3] : f32[1024]
      store @z[%3], %4
      %acc.9 = for %i.6 = %a to %b step %c iter(%acc.7 = %5) : (f32[16]) {
        ...
        yield %8
      }
      yield
    }

The printer never fails on ill-formed IR (an unknown value prints as `%?id`),
so the verifier can show the text of the kernel it rejects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import assert_never

from tilelang.ir import nodes as ir


def _fmt_const(v: bool | int | float) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


class _Namer:
    """Names values in definition order. GPU IR's printer (`backend/gpu/printer.py`)
    reuses this printer through two hooks: `note(value)` is appended to each
    defined value's type (its layout), `extra(op, namer, out, depth)` prints an
    op Tile IR does not have and returns True."""

    def __init__(self, note: Callable[[ir.Value], str] | None = None,
                 extra: Callable[[object, _Namer, list[str], int], bool] | None = None) -> None:
        self.names: dict[int, str] = {}
        self.counter = 0
        self._note = note
        self.extra = extra

    def note(self, v: ir.Value) -> str:
        return self._note(v) if self._note is not None else ""

    def define(self, v: ir.Value) -> str:
        hint = re.sub(r"[^A-Za-z0-9_]", "_", v.hint)
        name = f"%{hint}.{self.counter}" if hint else f"%{self.counter}"
        self.counter += 1
        self.names[v.id] = name
        return name

    def __call__(self, v: ir.Value | None) -> str:
        if v is None:
            return "none"
        return self.names.get(v.id, f"%?{v.id}")


# the `Kernel` fields printed by name where set, in this order
_FLAGS = ("pdl_early", "pdl_last", "pdl_exit", "prefetch_lines", "evict_first", "fast_math", "arrive_wait")


def print_kernel(kernel: ir.Kernel) -> str:
    """The canonical text of `kernel`, ending with a newline."""
    n = _Namer()
    tail = f"warps {kernel.num_warps} stages {kernel.num_stages}"
    if kernel.min_blocks:
        tail += f" min_blocks {kernel.min_blocks}"
    if kernel.max_blocks:
        tail += f" max_blocks {kernel.max_blocks}"
    tail += "".join(f" {flag}" for flag in _FLAGS if getattr(kernel, flag))
    if kernel.cluster:
        tail += " cluster " + "x".join(map(str, kernel.cluster))
    if kernel.walk >= 0:
        tail += f" walk {kernel.walk}"
    return print_params_header(kernel, n, tail, kernel.body)


def print_params_header(kernel, n: _Namer, tail: str, body: ir.Region,  # type: ignore[no-untyped-def]
                        extra_params: tuple[str, ...] = (), word: str = "kernel",
                        ir_params: tuple[ir.Param, ...] | None = None) -> str:
    """The kernel text with header `{word} name<inst>(params) grid R {tail} {`;
    `ir_params` (default: the kernel's) are printed first, then `extra_params`."""
    params = []
    for p in kernel.params if ir_params is None else ir_params:
        match p:
            case ir.TensorParam():
                dims = ", ".join("?" if d is None else str(d) for d in p.dims)
                s = f"@{p.name}: {'&mut ' if p.mutable else '&'}{p.dtype.value}[{dims}]"
                if p.tile_shape is not None:
                    s += f" tile [{', '.join(map(str, p.tile_shape))}]"
                params.append(s)
            case ir.ScalarParam():
                params.append(f"{n.define(p.value)}: {p.value.type}")
            case _:
                assert_never(p)
    inst = ""
    types = getattr(getattr(kernel, "source", kernel), "type_args", ())  # a GPU kernel's are its source's
    if kernel.instantiation or types:
        inst = "<" + ", ".join(f"{k} = {v}" for k, v in (*types, *kernel.instantiation)) + ">"
    params += list(extra_params)
    lines = [f"{word} {kernel.name}{inst}({', '.join(params)}) grid {kernel.grid_rank} {tail} {{"]
    _region(body, n, lines, 1)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _region(region: ir.Region, n: _Namer, out: list[str], depth: int) -> None:
    for op in region.ops:
        _op(op, n, out, depth)


def _nested(region: ir.Region, n: _Namer, depth: int) -> list[str]:
    """The lines of a region nested one level below `depth`."""
    lines: list[str] = []
    _region(region, n, lines, depth + 1)
    return lines


def _defs(vs: tuple[ir.Value, ...], n: _Namer) -> str:
    return ", ".join(n.define(v) for v in vs)


def _op(op: ir.Op, n: _Namer, out: list[str], depth: int) -> None:
    ind = "  " * depth

    def line(text: str) -> None:
        out.append(ind + text)

    def res(r: ir.Value, body: str) -> None:
        # Operands are named before the result is defined (n(...) inside `body`).
        line(f"{n.define(r)} = {body} : {r.type}{n.note(r)}")

    def conv(r: ir.Value, body: str, src: object) -> None:
        # ops whose operand types are not implied by the result: `: src -> result`
        line(f"{n.define(r)} = {body} : {src} -> {r.type}{n.note(r)}")

    def mask_pad(mask: ir.Value | None, pad: ir.Value | None = None) -> str:
        s = f" mask {n(mask)}" if mask is not None else ""
        if pad is not None:
            s += f" pad {n(pad)}"
        return s

    match op:
        case ir.Const(result=r, value=v):
            res(r, f"const {_fmt_const(v)}")
        case ir.BlockId(result=r, axis=a):
            res(r, f"block_id {a}")
        case ir.NumBlocks(result=r, axis=a):
            res(r, f"num_blocks {a}")
        case ir.LastBlock(result=r, group=g, size=sz, axis=a):
            res(r, f"last_block {a} group {n(g)} of {n(sz)}")
        case ir.ClusterGather(result=r, x=x):
            res(r, f"cluster_gather {n(x)}")
        case ir.QueuePull(result=r, group=g, axis=a):
            res(r, f"queue_pull {a} group {n(g)}")
        case ir.QueueTake(result=r, ticket=t, group=g, size=sz, workers=w, axis=a):
            res(r, f"queue_take {a} {n(t)} group {n(g)} of {n(sz)} by {n(w)}")
        case ir.TensorDim(result=r, tensor=t, axis=a):
            res(r, f"dim @{t}, {a}")
        case ir.Arange(result=r):
            res(r, "arange")
        case ir.Load(result=r, tensor=t, offsets=offs, mask=m, padding=p):
            res(r, f"load @{t}[{', '.join(map(n, offs))}]{mask_pad(m, p)}")
        case ir.Store(tensor=t, offsets=offs, value=v, mask=m):
            line(f"store @{t}[{', '.join(map(n, offs))}], {n(v)}{mask_pad(m)}")
        case ir.Prefetch(tensor=t, offsets=offs, shape=shape):
            line(f"prefetch @{t}[{', '.join(map(n, offs))}] {list(shape)}")
        case ir.AtomicRMW(op=aop, tensor=t, indices=idx, value=v, mask=m):
            line(f"{aop.value} @{t}[{', '.join(map(n, idx))}], {n(v)}{mask_pad(m)}")
        case ir.Elementwise(result=r, op=eop, operands=xs):
            res(r, f"{eop.value} {', '.join(map(n, xs))}")
        case ir.Cast(result=r, x=x, bits=bits):
            conv(r, f"{'bitcast' if bits else 'cast'} {n(x)}", x.type)
        case ir.Reduce(result=r, op=rop, x=x, axis=a):
            res(r, f"reduce.{rop.value} {n(x)}, axis {a}")
        case ir.Scan(result=r, op=sop, x=x, axis=a):
            res(r, f"scan.{sop.value} {n(x)}, axis {a}")
        case ir.Broadcast(result=r, x=x):
            conv(r, f"broadcast {n(x)}", x.type)
        case ir.Reshape(result=r, x=x):
            conv(r, f"reshape {n(x)}", x.type)
        case ir.Permute(result=r, x=x, perm=perm):
            res(r, f"permute {n(x)}, [{', '.join(map(str, perm))}]")
        case ir.Mma(result=r, a=a, b=b, acc=c):
            conv(r, f"mma {n(a)}, {n(b)}, {n(c)}", f"{a.type}, {b.type}, {c.type}")
        case ir.For(results=rs, lower=lo, upper=hi, step=st, inits=inits, body=body):
            head = f"for {n.define(body.args[0])} = {n(lo)} to {n(hi)} step {n(st)}"
            if inits:
                pairs = ", ".join(
                    f"{n.define(a)} = {n(i)}" for a, i in zip(body.args[1:], inits, strict=False)
                )
                head += f" iter({pairs}) : ({', '.join(str(v.type) + n.note(a) for v, a in zip(inits, body.args[1:], strict=False))})"
            # Results are named after the body so that inner values number first
            # in program order; they are only usable after the loop anyway.
            sub = _nested(body, n, depth)
            prefix = f"{_defs(rs, n)} = " if rs else ""
            line(f"{prefix}{head} {{")
            out.extend(sub)
            line("}")
        case ir.If(results=rs, cond=c, then=t, else_=e):
            then_lines = _nested(t, n, depth)
            else_lines = _nested(e, n, depth)
            prefix = f"{_defs(rs, n)} = " if rs else ""
            types = f" : ({', '.join(str(v.type) + n.note(v) for v in rs)})" if rs else ""
            line(f"{prefix}if {n(c)}{types} {{")
            out.extend(then_lines)
            line("} else {")
            out.extend(else_lines)
            line("}")
        case ir.While(results=rs, inits=inits, cond=c, body=b):
            cargs = ", ".join(
                f"{n.define(a)} = {n(i)}" for a, i in zip(c.args, inits, strict=False)
            )
            cond_lines = _nested(c, n, depth)
            bargs = _defs(b.args, n)  # named after the condition's values, before the body's
            body_lines = _nested(b, n, depth)
            prefix = f"{_defs(rs, n)} = " if rs else ""
            types = f" : ({', '.join(str(v.type) for v in inits)})" if inits else ""
            line(f"{prefix}while ({cargs}){types} {{")
            out.extend(cond_lines)
            line(f"}} do ({bargs}) {{")
            out.extend(body_lines)
            line("}")
        case ir.Yield(values=vs):
            line("yield" + (" " + ", ".join(map(n, vs)) if vs else ""))
        case ir.Print(parts=parts, order=order, axis=axis):
            shown = ", ".join(repr(p) if isinstance(p, str) else n(p) for p in parts)
            line(f"print {shown}" + (f" order {n(order[0])} of {n(order[1])} on {axis}" if order else ""))
        case ir.Assert(cond=c, message=m, order=order, axis=axis, region=region):
            line(f"assert {n(c)}, {m!r}"
                 + (f" order {n(order[0])} of {n(order[1])} on {axis} in {region}" if order else ""))
        case _:
            if n.extra is not None and n.extra(op, n, out, depth):
                return
            assert_never(op)
