"""Structured control flow (the emitter's `ControlOps`).

`for`, `if` and `while` regions with carried values as phis (tile values
flattened to their slots; a loop's tensor-core accumulator stays a `Frag`).

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

from tilelang.backend.codegen.llvm_types import (
    reg_ty,
)
from tilelang.backend.gpu import nodes as g
from tilelang.ir import nodes as ir

from . import fma_dot, sm80, unroll
from . import pdl as pdl_code
from .core import (
    Frag,
    Operand,
)
from .hazards import loop_carried
from .shapes import ShapeOps


class ControlOps(ShapeOps):
    """Structured control flow."""

    # registers a loop body's op carries to its next iteration, by id(op): the
    # phis it reads (set by `for_`) and the values it hands on (set by the op)
    _carry_in: dict[int, list[str]]
    _carry_out: dict[int, list[str]]

    def loop_carried_in(self, op: object) -> list[str]:
        return self._carry_in[id(op)]

    def loop_carried_out(self, op: object, regs: list[str]) -> None:
        self._carry_out[id(op)] = regs

    # -- control flow -----------------------------------------------------------------------
    def _types_of(self, vals: tuple[ir.Value, ...]) -> list[tuple[ir.Value, int]]:
        return [(v, self.nregs(v) if v.shape else 0) for v in vals]

    def _flatten(self, ops: list[Operand]) -> list[str]:
        out: list[str] = []
        for o in ops:
            if isinstance(o, Frag):
                out.extend(o.vals)
            else:
                out.extend(o if isinstance(o, list) else [o])
        return out

    def _unflatten(self, vals: tuple[ir.Value, ...], flat: list[str]) -> list[Operand]:
        out: list[Operand] = []
        i = 0
        for v in vals:
            if v.shape:
                n = self.nregs(v)
                out.append(flat[i:i + n])
                i += n
            else:
                out.append(flat[i])
                i += 1
        return out

    def _flat_types(self, vals: tuple[ir.Value, ...]) -> list[str]:
        out = []
        for v in vals:
            out.extend([reg_ty(v.dtype)] * (self.nregs(v) if v.shape else 1))
        return out

    def for_(self, op: ir.For) -> None:
        iv_v = op.body.args[0]
        ity = reg_ty(iv_v.dtype)
        signed = iv_v.dtype.is_signed
        lo, hi, st = self.scalar(op.lower), self.scalar(op.upper), self.scalar(op.step)
        init_ops: list[Operand] = [self.env[v.id] for v in op.inits]
        inits = self._flatten(init_ops)
        types = []
        for o, v in zip(init_ops, op.results, strict=True):
            types += ["float"] * len(o.vals) if isinstance(o, Frag) else self._flat_types((v,))
        # registers an op of the body hands to its next iteration (an sm_80 mma's
        # prefetched fragments), the first iteration's loaded here
        state = [(o, *(sm80.prefetch_init(self, o) if isinstance(o, g.SmemDot) else fma_dot.prefetch_init(self, o)))
                 for o in op.body.ops if isinstance(o, g.SmemDot | g.SmemFma) and o.prefetch >= 0]
        pre = self.cur
        head, body_l, exit_ = self.new_label("for"), self.new_label("body"), self.new_label("endfor")
        self.br(head)
        self.label(head)
        iv = self.tmp()
        phis = [self.tmp() for _ in inits]
        phi_at = len(self.lines)
        self.lines.append("")
        c1 = self.emit(f"icmp {'slt' if signed else 'ult'} {ity} {iv}, {hi}")
        c2 = self.emit(f"icmp {'sgt' if signed else 'ugt'} {ity} {st}, 0")
        c = self.emit(f"and i1 {c1}, {c2}")
        self.cbr(c, body_l, exit_)
        self.label(body_l)
        if op is self._trigger_loop:  # PDL "last": the last iteration triggers the next grid
            pdl_code.emit_last_trigger(self, iv, hi, st, ity, signed)
        carried: list[Operand] = []
        pos = 0
        for o, v in zip(init_ops, op.results, strict=True):
            if isinstance(o, Frag):
                carried.append(Frag(tuple(phis[pos:pos + len(o.vals)]), o.shape))
                pos += len(o.vals)
            else:
                n = self.nregs(v) if v.shape else 1
                carried += self._unflatten((v,), phis[pos:pos + n])
                pos += n
        state_phis = []
        for o, _, regs in state:
            state_phis.append([self.tmp() for _ in regs])
            self._carry_in[id(o)] = state_phis[-1]
        before = self.hazards.snapshot()  # the previous iteration's accesses are pending at the top
        body_acc = loop_carried(self, op, (op.body,))
        self.hazards.merge(body_acc)
        ys = self.region(op.body, (iv, *carried))
        self.hazards.merge(before)
        self.hazards.merge(body_acc)
        nexts = self._flatten(ys)
        ivn = self.emit(f"add {ity} {iv}, {st}")
        latch = self.cur
        self.stmt(f"br label %{head}{unroll.latch(self) if unroll.full(self, op) else ''}")
        lines = [f"  {iv} = phi {ity} [ {lo}, %{pre} ], [ {ivn}, %{latch} ]"]
        for p, t, i0, nx in zip(phis, types, inits, nexts, strict=True):
            lines.append(f"  {p} = phi {t} [ {i0}, %{pre} ], [ {nx}, %{latch} ]")
        for (o, tys, regs), sp in zip(state, state_phis, strict=True):
            del self._carry_in[id(o)]
            outs = self._carry_out.pop(id(o))
            for p, t, i0, nx in zip(sp, tys, regs, outs, strict=True):
                lines.append(f"  {p} = phi {t} [ {i0}, %{pre} ], [ {nx}, %{latch} ]")
        self.lines[phi_at] = "\n".join(lines)
        self.label(exit_)
        for v, o in zip(op.results, carried, strict=True):
            self.env[v.id] = o

    def if_(self, op: ir.If) -> None:
        c = self.scalar(op.cond)
        then_l, else_l, join = self.new_label("then"), self.new_label("else"), self.new_label("endif")
        self.cbr(c, then_l, else_l)
        self.label(then_l)
        before = self.hazards.snapshot()
        t_vals = self._flatten(self.region(op.then, ()))
        after_then = self.hazards.snapshot()
        self.hazards.pending = before
        t_end = self.cur
        self.br(join)
        self.label(else_l)
        e_vals = self._flatten(self.region(op.else_, ()))
        self.hazards.merge(after_then)
        e_end = self.cur
        self.br(join)
        self.label(join)
        types = self._flat_types(op.results)
        merged = [self.emit(f"phi {t} [ {a}, %{t_end} ], [ {b}, %{e_end} ]") for t, a, b in zip(types, t_vals, e_vals, strict=False)]
        for v, o in zip(op.results, self._unflatten(op.results, merged), strict=False):
            self.env[v.id] = o

    def while_(self, op: ir.While) -> None:
        inits = self._flatten([self.get(v) for v in op.inits])
        types = self._flat_types(op.results)
        pre = self.cur
        head, body_l, exit_ = self.new_label("while"), self.new_label("wbody"), self.new_label("endwhile")
        self.br(head)
        self.label(head)
        phis = [self.tmp() for _ in inits]
        phi_at = len(self.lines)
        self.lines.append("")
        carried = self._unflatten(op.results, phis)
        before = self.hazards.snapshot()  # the previous iteration's accesses are pending at the top
        body_acc = loop_carried(self, op, (op.cond, op.body))
        self.hazards.merge(body_acc)
        (c,) = self.region(op.cond, tuple(carried))
        self.cbr(c, body_l, exit_)  # type: ignore[arg-type]
        self.label(body_l)
        nexts = self._flatten(self.region(op.body, tuple(carried)))
        self.hazards.merge(before)
        self.hazards.merge(body_acc)
        latch = self.cur
        self.br(head)
        self.lines[phi_at] = "\n".join(
            f"  {p} = phi {t} [ {i0}, %{pre} ], [ {nx}, %{latch} ]"
            for p, t, i0, nx in zip(phis, types, inits, nexts, strict=False)
        )
        self.label(exit_)
        for v, o in zip(op.results, carried, strict=False):
            self.env[v.id] = o
