"""Element-wise arithmetic and math (the emitter's `ArithOps`; the casts
between element types are `casts.py`'s `CastOps`, above it).

Float math through `fastmath.py`'s approximations and `f64math.py`'s f64
routines, integer ops guarded to the interpreter's defined results (division
by zero, shifts, overflow), f64 -> f32 rounded to odd (`f64_to_f32_odd`,
`odd_f32`), f16/bf16 rounded after every op.

A mixin of `backend/llvm.py`'s `_Emitter`: the emitter's parts form one
inheritance chain (core, arith, casts, memory, reductions, mma, shapes, control,
debug), each calling only what the parts below it define.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from tilelang.backend import f32exact, f64math, fastmath
from tilelang.backend.codegen.llvm_types import (
    const_operand,
    reg_ty,
)
from tilelang.backend.gpu.layouts import AccTile
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import Span

from .core import (
    EmitterCore,
)


def nonpositive_exp_args(body: ir.Region) -> set[int]:
    """Ids of the operands x of `exp(x)` in `body` that are at most 0 or NaN by construction: `a - mn` with
    `mn = maximum(a, ..)`, `mn = maximum(.., rowmax(a))` or `mn = rowmax(a)` broadcast back over a's rows (an
    online softmax's `exp(s - mn)` and `exp(m - mn)`, a row softmax's): a <= mn element by element, so its difference rounds to <= 0 (NaN where
    an operand is NaN or both are the same infinity). `fexp_ln2` then needs no overflow guard."""
    from tilelang.backend.gpu import nodes as g

    defs = {r.id: op for op in g.walk(body) for r in g.results(op)}

    def rowmax(a: ir.Value, y: ir.Value) -> bool:  # y is a's max over axis 1, reshaped to a column
        ry = defs.get(y.id)
        if isinstance(ry, ir.Reshape) and ry.x.shape == (a.shape[0],):
            red = defs.get(ry.x.id)
            return isinstance(red, ir.Reduce) and red.op is ir.ReduceOp.MAX and red.x.id == a.id and red.axis == 1
        return False

    def const(v: ir.Value) -> float | None:  # a constant, or a broadcast one
        op = defs.get(v.id)
        if isinstance(op, ir.Broadcast):
            op = defs.get(op.x.id)
        return float(op.value) if isinstance(op, ir.Const) and isinstance(op.value, int | float) else None

    def unguard(b: ir.Value) -> ir.Value:  # `where(mn == -inf, c, mn)` (a finite c: a masked row's guard) -> mn
        op = defs.get(b.id)
        if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.WHERE:
            c, lo, mn = op.operands
            eq, k = defs.get(c.id), const(lo)
            if isinstance(eq, ir.Elementwise) and eq.op is ir.ElemOp.EQ and eq.operands[0].id == mn.id \
                    and k is not None and math.isfinite(k) and const(eq.operands[1]) == -math.inf:
                return mn  # (where mn is -inf, every a <= mn is -inf, and -inf - c is -inf)
        return b

    def bound(a: ir.Value, b: ir.Value) -> bool:  # every element of a is at most its element of b
        b = unguard(b)
        op = defs.get(b.id)
        if isinstance(op, ir.Broadcast) and len(a.shape) == 2 and op.x.shape == (a.shape[0], 1):
            b, row = unguard(op.x), True  # a row vector over a's rows
            if rowmax(a, b):  # a row softmax's `a - a.max(1).reshape([M, 1])`
                return True
        else:
            row = False
        op = defs.get(b.id)
        if not (isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.MAXIMUM):
            return False
        for y in op.operands:
            if not row and y.id == a.id and y.shape == b.shape:
                return True
            if row and rowmax(a, y):
                return True
        return False

    out: set[int] = set()
    for op in g.walk(body):
        if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.EXP:
            x = defs.get(op.operands[0].id)
            if isinstance(x, ir.Elementwise) and x.op is ir.ElemOp.SUB and bound(*x.operands):
                out.add(op.operands[0].id)
    return out


# ln2 rounded to f32 (`fexp_ln2`)
LN2_HI = 0.693147182464599609375


class ArithOps(EmitterCore):
    """Element-wise arithmetic, math and casts."""

    # -- narrow floats ---------------------------------------------------------------
    def round_to(self, x: str, dt: DType) -> str:
        if dt in (DType.F16, DType.BF16):
            ty = "half" if dt is DType.F16 else "bfloat"
            h = self.emit(f"fptrunc float {x} to {ty}")
            out = self.emit(f"fpext {ty} {h} to float")
            self.rounded[out] = x  # a store may round x itself (`accview.store_rows`)
            return out
        return x

    # -- element-wise --------------------------------------------------------------------
    def elementwise(self, r: ir.Value, eop: ir.ElemOp, xs: tuple[ir.Value, ...], span: Span) -> None:
        in_dt = xs[-1].dtype if eop is ir.ElemOp.WHERE else xs[0].dtype
        ops = [self.get(x) for x in xs]
        if r.shape:
            n = self.nregs(r)
            cols = [o if isinstance(o, list) else [o] * n for o in ops]
            # one register in `share` of a thread's exp2s on the FMA pipe (fastmath.exp2_poly_share)
            share = fastmath.exp2_poly_share() if eop is ir.ElemOp.EXP2 and reg_ty(in_dt) == "float" \
                and self.k.sm >= 80 else 0
            if eop is ir.ElemOp.MUL and in_dt is DType.F32 and n >= 16 and \
                    fastmath.skip_unit_scale(isinstance(self.layouts.get(r.id), AccTile)):
                few = [i for i, o in enumerate(ops) if isinstance(o, list) and len(set(o)) <= 4]
                if len(few) == 1 and isinstance(ops[1 - few[0]], list):
                    self.env[r.id] = self.scale_unless_unit(ops[1 - few[0]], ops[few[0]])  # type: ignore[arg-type]
                    return
            self.exp_acc = isinstance(self.layouts.get(r.id), AccTile)
            self.exp_nonpos = eop is ir.ElemOp.EXP and (self.exp_acc or fastmath.exp_nonpos_plain(self.acc_loads)) \
                and self.nonpositive(xs[0])
            try:
                self.env[r.id] = [self.round_to(self.fexp2_poly(cols[0][i]), r.dtype) if share and i % share == share - 1
                                  else self.elem(eop, [c[i] for c in cols], in_dt, r.dtype) for i in range(n)]
            finally:
                self.exp_acc = self.exp_nonpos = False
        else:
            self.env[r.id] = self.elem(eop, [o for o in ops if isinstance(o, str)], in_dt, r.dtype)
            self.note_arith(r, eop, xs)

    def elem(self, eop: ir.ElemOp, a: list[str], dt: DType, out: DType) -> str:
        E = ir.ElemOp
        ty = reg_ty(dt)
        if eop is E.WHERE:
            return self.emit(f"select i1 {a[0]}, {reg_ty(out)} {a[1]}, {reg_ty(out)} {a[2]}")
        if dt.is_float:
            res = self.felem(eop, a, dt, ty)
            return res if eop.is_comparison else self.round_to(res, dt)
        return self.ielem(eop, a, dt, ty)

    def fcall(self, name: str, ty: str, args: list[str]) -> str:
        sfx = "f32" if ty == "float" else "f64"
        self.declare(f"declare {ty} @llvm.{name}.{sfx}({', '.join([ty] * len(args))})")
        return self.call(ty, f"llvm.{name}.{sfx}", ", ".join(f"{ty} {x}" for x in args))

    def nv(self, name: str, x: str) -> str:
        self.declare(f"declare float @{name}(float)")
        return self.call("float", name, f"float {x}")

    exp_acc = False  # the tile being computed is in the accumulator layout (`fastmath.exp_ln2`)
    exp_nonpos = False  # and its exp's operand is <= 0 or NaN (`nonpositive_exp_args`)
    _nonpos: set[int] | None = None

    def nonpositive(self, v: ir.Value) -> bool:
        """`v` is an `exp` operand known to be <= 0 or NaN (the kernel's `nonpositive_exp_args`, once)."""
        if self._nonpos is None:
            self._nonpos = nonpositive_exp_args(self.k.body)
        return v.id in self._nonpos

    _acc_loads: bool | None = None

    @property
    def acc_loads(self) -> bool:
        """A loop of the kernel loads tiles in the accumulator layout beside an `exp` (an attention key loop's
        bias, read by the consumers; not an epilogue's residual: `fastmath.exp_nonpos_plain`)."""
        if self._acc_loads is None:
            from tilelang.backend.gpu import nodes as g

            def scope(r: ir.Region) -> list[object]:  # a loop body's ops, into branches but not inner loops
                out: list[object] = []
                for op in r.ops:
                    out.append(op)
                    if not isinstance(op, ir.For):
                        for sub in g.regions(op):
                            out += scope(sub)
                return out

            def both(ops: list[object]) -> bool:
                return any(isinstance(o, ir.Load) and isinstance(self.layouts.get(o.result.id), AccTile) for o in ops) \
                    and any(isinstance(o, ir.Elementwise) and o.op is ir.ElemOp.EXP for o in ops)

            self._acc_loads = any(isinstance(op, ir.For) and both(scope(op.body)) for op in g.walk(self.k.body))
        return self._acc_loads

    @property
    def fast_math(self) -> bool:
        """The kernel's `#[hints(fast_math = true)]`: f32 exp, sigmoid, tanh and division by the approximate forms
        (`fastmath.FAST_MATH`)."""
        return bool(getattr(getattr(self.k, "source", None), "fast_math", False))

    def fexp(self, x: str, bounded: bool = False) -> str:
        """exp of an f32 (`fastmath.MATH["exp"]`). `bounded`: x is NaN or at most 88 (no overflow, no infinity),
        so the select that keeps an infinite or overflowing x's 2^t is left out (a NaN x gives NaN either way)."""
        if self.fast_math or (self.exp_nonpos and fastmath.exp_nonpos_plain(self.acc_loads)):
            return self.fexp_plain(x)
        if fastmath.exp_ln2(self.exp_acc):
            return self.fexp_ln2(x, self.exp_nonpos, bounded)
        # exp(x) = 2^(x*log2e); feed the product's rounding error back: 2^t * (1 + e*ln2)
        t = self.emit(f"fmul float {x}, {const_operand(DType.F32, 1.4426950408889634)}")
        nt = self.emit(f"fneg float {t}")
        e = self.fcall("fma", "float", [x, const_operand(DType.F32, 1.4426950408889634), nt])
        e2 = self.fcall("fma", "float", [x, const_operand(DType.F32, 1.925963033500891e-08), e])
        p = self.nv("llvm.nvvm.ex2.approx.ftz.f32", t)
        corr = self.emit(f"fmul float {e2}, {const_operand(DType.F32, 0.6931471805599453)}")
        y = self.fcall("fma", "float", [p, corr, p])
        if bounded:
            return y
        # NaN out of a number: x = +-inf makes the error term inf - inf = NaN, and
        # an overflow (x > ~88.72) makes p = inf, and inf * corr + inf is NaN for
        # corr <= 0. There p (inf or 0) is the answer; a NaN x gives p = NaN.
        nan = self.emit(f"fcmp uno float {y}, 0.0")
        return self.emit(f"select i1 {nan}, float {p}, float {y}")

    def fexp_plain(self, x: str) -> str:
        """exp(x) = ex2.approx.ftz(x * log2(e)) with no error term (Triton's `tl.exp`, CUDA's `__expf`), where x
        is an online softmax's difference (<= 0 or NaN, `nonpositive_exp_args`; `fastmath.exp_nonpos_plain`):
        within 2e-6 of exp(x) down to x = -29.7 and within 1e-18 absolute below (`fastmath.MATH["exp"]`; 4.1e-6
        relative at most, MUFU at its worst). -inf gives 0, NaN NaN, 0 gives 1 (alpha = 1 where a max stayed)."""
        t = self.emit(f"fmul float {x}, {const_operand(DType.F32, 1.4426950408889634)}")
        return self.nv("llvm.nvvm.ex2.approx.ftz.f32", t)

    def fexp_ln2(self, x: str, nonpos: bool = False, bounded: bool = False) -> str:
        """exp(x) = 2^t * 2^(x log2(e) - t) = 2^t * e^(x - t ln2) with t = x * log2(e) rounded: the error term
        x - t ln2 by one fma with ln2 rounded to f32 (an exact product; x - t ln2 cancels exactly), then 2^t (1 +
        it) (`fastmath.exp_ln2`). ln2's rounding leaves t (ln2 - LN2_HI) out of the term: at most 2.4e-7
        relative for |t| <= 127 (|x| < 88); with the MUFU at its worst the result is within 5.9e-7 of exp(x)
        (`fexp`: 3.6e-7), a third of the promised 2e-6, for two instructions fewer than `fexp`. NaN,
        infinities and an overflow as `fexp`: where the error term or the product is NaN, 2^t is the answer.
        Where x <= 0 or NaN (`nonpos`) nothing overflows, and the error term's NaN (x = -inf) or huge value (x
        far below -88, 2^t = 0) is clamped to 1 by one `min` (a NaN operand gives the other): one instruction
        fewer again."""
        t = self.emit(f"fmul float {x}, {const_operand(DType.F32, 1.4426950408889634)}")
        nt = self.emit(f"fneg float {t}")
        corr = self.fcall("fma", "float", [nt, const_operand(DType.F32, LN2_HI), x])
        p = self.nv("llvm.nvvm.ex2.approx.ftz.f32", t)
        if nonpos:
            small = self.fcall("minnum", "float", [corr, "1.0"])
            return self.fcall("fma", "float", [p, small, p])
        y = self.fcall("fma", "float", [p, corr, p])
        if bounded:
            return y
        nan = self.emit(f"fcmp uno float {y}, 0.0")
        return self.emit(f"select i1 {nan}, float {p}, float {y}")

    def ftanh(self, x: str) -> str:
        """tanh of an f32: 1 - 2 / (exp(2|x|) + 1) with x's sign from
        |x| = 0.6 on; below, x + x^3 P(x^2) (fastmath.TANH_POLY): the
        formula cancels there (tanh(1e-6) came out 4.6 % low, tanh(3e-8)
        0), the polynomial is within 1e-7 relative down to 0 and keeps -0.0
        and subnormals. Both are computed and one selected (no branch).
        |x| is clamped to TANH_ONE (NaN kept), where 1 - 2 / (exp(2|x|) + 1) rounds to 1.0 already: the same bits
        for every x, and the divisor stays in [2, e^20 + 1], where `fdiv_fast` is div.rn's own result without its
        slow path (a call a division: 128 of them, beside a GEMM's accumulator, spilled 4.7 KB a thread; hcliff13).
        `TILEC_TANH_DIV=rn` (`fastmath.tanh_fast_div`): div.rn, no clamp, as before (an A/B switch)."""
        ax = self.fcall("fabs", "float", [x])
        fast = fastmath.tanh_fast_div()
        c = self.fcall("minimum", "float", [ax, const_operand(DType.F32, fastmath.TANH_ONE)]) if fast else ax
        two = self.emit(f"fmul float {c}, 2.0")
        ex = self.fexp(two, bounded=fast)
        den = self.emit(f"fadd float {ex}, 1.0")
        q = self.fdiv_fast("2.0", den) if fast else self.emit(f"fdiv float 2.0, {den}")
        big = self.fcall("copysign", "float", [self.emit(f"fsub float 1.0, {q}"), x])
        t = self.emit(f"fmul float {x}, {x}")
        p = const_operand(DType.F32, fastmath.TANH_POLY[-1])
        for coef in fastmath.TANH_POLY[-2::-1]:
            p = self.fcall("fma", "float", [p, t, const_operand(DType.F32, coef)])
        # tanh(x) has x's sign: copysign keeps -0.0's (x + x^3 P gives +0.0 for it)
        small = self.fcall("copysign", "float", [self.fcall("fma", "float", [self.emit(f"fmul float {x}, {t}"), p, x]),
                                                 x])
        near = self.emit(f"fcmp olt float {ax}, {const_operand(DType.F32, fastmath.TANH_POLY_BELOW)}")
        return self.emit(f"select i1 {near}, float {small}, float {big}")

    def fdiv_fast(self, a: str, b: str) -> str:
        """a / b, f32, by the instructions ptxas emits for div.rn.f32 before its check (`FCHK`) and slow path:
        r = rcp.approx(b), refined by one Newton step, q = a r, and q corrected by its residual a - b q (fma).
        Where the check passes (a, b and a / b normal, far from the exponent's ends) that is div.rn's result:
        the same bits. The caller knows its operands are there (tanh's 2 / (exp(2|x|) + 1), the divisor in
        [2, e^20 + 1]): no slow path, whose out-of-line call kept every live register across 128 calls in a
        GEMM epilogue (4.7 KB of spills a thread, l12)."""
        r = self.nv("llvm.nvvm.rcp.approx.ftz.f", b)
        nb = self.emit(f"fneg float {b}")
        r1 = self.fcall("fma", "float", [r, self.fcall("fma", "float", [nb, r, "1.0"]), r])
        q = self.emit(f"fmul float {a}, {r1}")
        return self.fcall("fma", "float", [r1, self.fcall("fma", "float", [nb, q, a]), q])

    def scale_unless_unit(self, xs: list[str], fs: list[str]) -> list[str]:
        # xs * fs, where fs holds at most 4 distinct registers a thread (a row
        # vector broadcast over an accumulator: 2), skipped (the products are
        # xs exactly: x * 1.0 == x, NaN included) when every factor of the warp
        # is 1.0 (one vote): FlashAttention-4's conditional O rescale
        # (fastmath.skip_unit_scale)
        one = None
        for f in dict.fromkeys(fs):
            c = self.emit(f"fcmp oeq float {f}, 1.0")
            one = c if one is None else self.emit(f"and i1 {one}, {c}")
        self.declare("declare i1 @llvm.nvvm.vote.all.sync(i32, i1)")
        unit = self.call("i1", "llvm.nvvm.vote.all.sync", f"i32 -1, i1 {one}")
        pre, mul_l, join = self.cur, self.new_label("scale"), self.new_label("scaled")
        self.cbr(unit, join, mul_l)
        self.label(mul_l)
        prods = [self.emit(f"fmul float {x}, {f}") for x, f in zip(xs, fs, strict=True)]
        self.br(join)
        self.label(join)
        return [self.emit(f"phi float [ {x}, %{pre} ], [ {y}, %{mul_l} ]") for x, y in zip(xs, prods, strict=True)]

    def fexp2_poly(self, x: str) -> str:
        # 2^x without the MUFU (fastmath.EXP2_POLY): x clamped to [-126, 128]
        # (NaN kept: max.NaN), n = round(x) by the 1.5 * 2^23 shifter, whose
        # low bits are n, f = x - n in [-0.5, 0.5], 2 * 2^f by a degree-5
        # polynomial, times 2^(n - 1) made from n's bits (n - 1 >= -127: 2^-127
        # is bits 0, i.e. 0 as ex2.approx.ftz flushes it; n = 128 gives inf)
        c = self.fcall("minimum", "float", [self.fcall("maximum", "float", [x, const_operand(DType.F32, -126.0)]),
                                            const_operand(DType.F32, 128.0)])
        t = self.emit(f"fadd float {c}, {const_operand(DType.F32, 12582912.0)}")
        n = self.emit(f"fsub float {t}, {const_operand(DType.F32, 12582912.0)}")
        f = self.emit(f"fsub float {c}, {n}")
        p = const_operand(DType.F32, fastmath.EXP2_POLY[-1])
        for coef in fastmath.EXP2_POLY[-2::-1]:
            p = self.fcall("fma", "float", [p, f, const_operand(DType.F32, coef)])
        shifted = self.emit(f"shl i32 {self.emit(f'bitcast float {t} to i32')}, 23")
        half = self.emit(f"add i32 {shifted}, 1056964608")  # + the bits of 0.5: 2^(n - 1)
        return self.emit(f"fmul float {p}, {self.emit(f'bitcast i32 {half} to float')}")

    def freduce(self, x: str) -> str:
        """x reduced to [-pi, pi] for sin.approx/cos.approx: the two-constant
        reduction where it is accurate (|x| < 2^13), the exact one beyond (a
        branch: taken only by lanes with such arguments; inf and NaN stay on
        the first, which makes them NaN)."""
        fast = self.freduce_2pi(x)
        ax = self.fcall("fabs", "float", [x])
        big = self.emit(f"fcmp oge float {ax}, {const_operand(DType.F32, 8192.0)}")
        fin = self.emit(f"fcmp one float {ax}, {const_operand(DType.F32, float('inf'))}")
        slow_c = self.emit(f"and i1 {big}, {fin}")
        pre, slow_l, join = self.cur, self.new_label("trig_exact"), self.new_label("trig_reduced")
        self.cbr(slow_c, slow_l, join)
        self.label(slow_l)
        exact = self.freduce_exact(x, ax)
        end = self.cur
        self.br(join)
        self.label(join)
        return self.emit(f"phi float [ {fast}, %{pre} ], [ {exact}, %{end} ]")

    def freduce_exact(self, x: str, ax: str) -> str:
        """x - 2 pi k for a finite |x| >= 2^-10 (Payne-Hanek): with |x| = m 2^e
        (m the 24-bit significand), frac(|x| / (2 pi)) is the low 96 bits of
        m times the 96 bits of 1/(2 pi) after its bit e (the bits before make
        whole turns), over 2^96: its top 64 bits F from three 32-bit words
        A, B, C of that window, F = (m A << 32) + m B + (m C >> 32) mod 2^64
        (every product < 2^56). F / 2^64 in [0, 1), moved to [-1/2, 1/2),
        times 2 pi in f64 is the reduced argument, with x's sign."""
        bits = self.emit(f"bitcast float {ax} to i32")
        m = self.emit(f"or i32 {self.emit(f'and i32 {bits}, 8388607')}, 8388608")
        s = self.emit(f"sub i32 {self.emit(f'lshr i32 {bits}, 23')}, 118")  # the window's first bit: e + 32
        w = self.emit(f"lshr i32 {s}, 5")
        sh = self.emit(f"zext i32 {self.emit(f'and i32 {s}, 31')} to i64")
        words = []
        for k in range(4):  # the table's words w .. w + 3 (w <= 4 for f32's exponents)
            idx = self.emit(f"add i32 {w}, {k}") if k else w
            v = "0"
            for j, word in enumerate(fastmath.INV_2PI_WORDS):
                if word:
                    hit = self.emit(f"icmp eq i32 {idx}, {j}")
                    v = self.emit(f"select i1 {hit}, i64 {word}, i64 {v}")
            words.append(v)
        m64 = self.emit(f"zext i32 {m} to i64")
        parts = []
        for k in range(3):  # A, B, C: the window's 32-bit words
            pair = self.emit(f"or i64 {self.emit(f'shl i64 {words[k]}, 32')}, {words[k + 1]}")
            word = self.emit(f"lshr i64 {self.emit(f'shl i64 {pair}, {sh}')}, 32")
            parts.append(self.emit(f"mul i64 {m64}, {word}"))
        hi = self.emit(f"shl i64 {parts[0]}, 32")
        lo = self.emit(f"lshr i64 {parts[2]}, 32")
        f = self.emit(f"add i64 {self.emit(f'add i64 {hi}, {parts[1]}')}, {lo}")
        turn = self.emit(f"fmul double {self.emit(f'uitofp i64 {f} to double')}, "
                         f"{const_operand(DType.F64, 2.0 ** -64)}")
        over = self.emit(f"fcmp oge double {turn}, 0.5")
        turn = self.emit(f"select i1 {over}, double {self.emit(f'fsub double {turn}, 1.0')}, double {turn}")
        r = self.emit(f"fptrunc double {self.emit(f'fmul double {turn}, {const_operand(DType.F64, 2 * math.pi)}')}"
                      " to float")
        neg = self.emit(f"fcmp olt float {x}, 0.0")
        return self.emit(f"select i1 {neg}, float {self.emit(f'fneg float {r}')}, float {r}")

    def freduce_2pi(self, x: str) -> str:
        q = self.emit(f"fmul float {x}, {const_operand(DType.F32, 0.15915494309189535)}")
        kq = self.fcall("rint", "float", [q])
        nk = self.emit(f"fneg float {kq}")
        r1 = self.fcall("fma", "float", [nk, const_operand(DType.F32, 6.28125), x])
        return self.fcall("fma", "float", [nk, const_operand(DType.F32, 0.0019353071795864769), r1])

    def felem(self, eop: ir.ElemOp, a: list[str], dt: DType, ty: str) -> str:
        E = ir.ElemOp
        simple = {E.ADD: "fadd", E.SUB: "fsub", E.MUL: "fmul", E.DIV: "fdiv"}
        cmp = {E.EQ: "oeq", E.NE: "une", E.LT: "olt", E.LE: "ole", E.GT: "ogt", E.GE: "oge"}
        if eop is E.REM:
            return self.fmod_f32(a[0], a[1]) if ty == "float" else self.fmod_f64(a[0], a[1])
        if eop is E.MUL:
            # `contract`: a product that a reduction or scan sums right away
            # (their adds carry the flag too) becomes one fma: `(a * b).sum(k)`
            # is a dot product. Element-wise adds have no flag: `a * b + c`
            # stays two roundings, as the interpreter computes it.
            return self.emit(f"fmul contract {ty} {a[0]}, {a[1]}")
        if eop is E.DIV and ty == "float" and self.fast_math:  # div.full.f32: 2 ulp (fastmath.FAST_MATH)
            self.declare("declare float @llvm.nvvm.div.full(float, float)")
            return self.call("float", "llvm.nvvm.div.full", f"float {a[0]}, float {a[1]}")
        if eop in simple:
            return self.emit(f"{simple[eop]} {ty} {a[0]}, {a[1]}")
        if eop in cmp:
            return self.emit(f"fcmp {cmp[eop]} {ty} {a[0]}, {a[1]}")
        if ty == "double" and eop.value in f64math.FUNCS:
            return f64math.FUNCS[eop.value](self, a[0])  # no f64 approximations in PTX
        if eop is E.ERF and ty == "float" and fastmath.erf_f32():  # the interpreter's f32 algorithm, bit for bit
            return f32exact.erf(self, a[0])
        if eop is E.ATAN2 and ty == "float" and fastmath.atan2_f32():  # the interpreter's f32 algorithm (hnum)
            return f32exact.atan2(self, a[0], a[1])
        if eop is E.POW and ty == "float" and (short := f32exact.pow_const(self, a[0], a[1])) is not None:
            return short
        if eop in (E.ERF, E.POW, E.ATAN2):
            # computed in f64 (the interpreter's algorithms), f32 rounded once
            if ty == "double":
                return f64math.BINARY_FUNCS[eop.value](self, a[0], a[1]) if eop is not E.ERF else \
                    f64math.erf(self, a[0])
            wide = [self.emit(f"fpext float {v} to double") for v in a]
            r = f64math.erf_f32(self, wide[0]) if eop is E.ERF else f64math.pow_f32(self, wide[0], wide[1]) \
                if eop is E.POW else f64math.atan2(self, wide[0], wide[1])
            return self.emit(f"fptrunc double {r} to float")
        match eop:
            case E.NEG:
                return self.emit(f"fneg {ty} {a[0]}")
            case E.ABS:
                return self.fcall("fabs", ty, a)
            case E.FLOOR:
                return self.fcall("floor", ty, a)
            case E.CEIL:
                return self.fcall("ceil", ty, a)
            case E.SQRT:
                return self.fcall("sqrt", ty, a)
            case E.FMA if dt in (DType.F16, DType.BF16):
                return self.fma_narrow(a[0], a[1], a[2])
            case E.FMA:
                return self.fcall("fma", ty, a)
            case E.MAXIMUM | E.MINIMUM if ty == "float" and self.k.sm >= 80:
                # max.NaN.f32 / min.NaN.f32: NaN-propagating in one instruction (sm_80+)
                return self.fcall("maximum" if eop is E.MAXIMUM else "minimum", ty, a)
            case E.MAXIMUM | E.MINIMUM:
                m = self.fcall("maxnum" if eop is E.MAXIMUM else "minnum", ty, a)
                uno = self.emit(f"fcmp uno {ty} {a[0]}, {a[1]}")
                nan = self.emit(f"fadd {ty} {a[0]}, {a[1]}")
                # maxnum leaves the sign of a zero result open; -0.0 < +0.0 (the interpreter's,
                # llvm.maximum's): two zeros' sum is the larger, the negated sum of negations the smaller
                z0 = self.emit(f"fcmp oeq {ty} {a[0]}, 0.0")
                z1 = self.emit(f"fcmp oeq {ty} {a[1]}, 0.0")
                both = self.emit(f"and i1 {z0}, {z1}")
                if eop is E.MAXIMUM:
                    zr = nan
                else:
                    n0 = self.emit(f"fneg {ty} {a[0]}")
                    n1 = self.emit(f"fneg {ty} {a[1]}")
                    zr = self.emit(f"fneg {ty} {self.emit(f'fadd {ty} {n0}, {n1}')}")
                m = self.emit(f"select i1 {both}, {ty} {zr}, {ty} {m}")
                return self.emit(f"select i1 {uno}, {ty} {nan}, {ty} {m}")
            case E.EXP:
                return self.fexp(a[0])
            case E.EXP2:
                return self.nv("llvm.nvvm.ex2.approx.ftz.f32", a[0])
            case E.LOG2:
                return self.nv("llvm.nvvm.lg2.approx.f", a[0])
            case E.LOG:
                l2 = self.nv("llvm.nvvm.lg2.approx.f", a[0])
                return self.emit(f"fmul float {l2}, {const_operand(DType.F32, 0.6931471805599453)}")
            case E.RSQRT:
                return self.nv("llvm.nvvm.rsqrt.approx.f", a[0])
            case E.SIN:
                # sin(+-0) is that zero (the reduction x - 2 pi k gives +0.0 for -0.0)
                r = self.nv("llvm.nvvm.sin.approx.f", self.freduce(a[0]))
                zero = self.emit(f"fcmp oeq float {a[0]}, 0.0")
                return self.emit(f"select i1 {zero}, float {a[0]}, float {r}")
            case E.COS:
                return self.nv("llvm.nvvm.cos.approx.f", self.freduce(a[0]))
            case E.TANH:
                if self.fast_math:
                    self.declare("declare float @llvm.nvvm.tanh.approx.f32(float)")
                    return self.call("float", "llvm.nvvm.tanh.approx.f32", f"float {a[0]}")
                return self.ftanh(a[0])
            case E.SIGMOID:
                nx = self.emit(f"fneg float {a[0]}")
                ex = self.fexp(nx)
                den = self.emit(f"fadd float {ex}, 1.0")
                if self.fast_math:  # 1 / den by rcp.approx (den >= 1, or inf: 0)
                    return self.nv("llvm.nvvm.rcp.approx.ftz.f", den)
                return self.emit(f"fdiv float 1.0, {den}")
            case _:
                raise AssertionError(f"float op {eop} has no lowering")

    def fma_narrow(self, a: str, b: str, c: str) -> str:
        """a * b + c of f16/bf16 values (in f32 registers) rounded ONCE to the
        narrow type, as the interpreter does: fma.rn.f32 then the narrow
        rounding rounds twice (bf16 2.046875 * 3 + 9e-38 tied down to 6.125,
        not 6.15625). The product is exact in f64; a * b + c is rounded to odd
        in f64 (the sum by TwoSum, its last bit set where the sum was
        inexact), then to odd in f32 (`f64_to_f32_odd`): the rounding to the
        narrow type that follows (`round_to`) is the one rounding."""
        ad, bd, cd = (self.emit(f"fpext float {v} to double") for v in (a, b, c))
        p = self.emit(f"fmul double {ad}, {bd}")
        s = self.emit(f"fadd double {p}, {cd}")
        bb = self.emit(f"fsub double {s}, {p}")
        pp = self.emit(f"fsub double {s}, {bb}")
        e = self.emit(f"fadd double {self.emit(f'fsub double {p}, {pp}')}, {self.emit(f'fsub double {cd}, {bb}')}")
        inexact = self.emit(f"fcmp one double {e}, 0.0")  # false for an infinite or NaN sum (e is NaN)
        sb = self.emit(f"bitcast double {s} to i64")
        even = self.emit(f"icmp eq i64 {self.emit(f'and i64 {sb}, 1')}, 0")
        # one step toward the exact value: up in magnitude where e has s's sign
        eb = self.emit(f"bitcast double {e} to i64")
        apart = self.emit(f"icmp slt i64 {self.emit(f'xor i64 {sb}, {eb}')}, 0")
        odd = self.emit(f"add i64 {sb}, {self.emit(f'select i1 {apart}, i64 -1, i64 1')}")
        fix = self.emit(f"and i1 {inexact}, {even}")
        r = self.emit(f"select i1 {fix}, double {self.emit(f'bitcast i64 {odd} to double')}, double {s}")
        return self.f64_to_f32_odd(r)

    def fmod_f32(self, x: str, y: str) -> str:
        """fmod of f32 values, exact like the interpreter's np.fmod: in f64
        (`fmod_f64`; the remainder of two f32 values is an f32)."""
        xd = self.emit(f"fpext float {x} to double")
        yd = self.emit(f"fpext float {y} to double")
        return self.emit(f"fptrunc double {self.fmod_f64(xd, yd)} to float")

    def fmod_f64(self, xd: str, yd: str) -> str:
        """fmod of f64 values, exact like np.fmod (LLVM's `frem` is x -
        trunc(x/y)*y with a rounded quotient: off by multiples of y past
        2^53, the wrong sign where x/y rounds up to an integer). q = trunc(x/y)
        and r = x - q*y by one fma are exact while |q| < 2^52 (the true
        remainder is representable: a multiple of y's last place below 2|y|);
        a quotient rounded up to the next integer leaves r with the wrong sign,
        fixed by one more exact step. Larger quotients take a loop (a branch
        only their lanes enter, `fmod_reduce`)."""
        q = self.fcall("trunc", "double", [self.emit(f"fdiv double {xd}, {yd}")])
        nq = self.emit(f"fneg double {q}")
        r = self.fcall("fma", "double", [nq, yd, xd])
        # wrong sign: r != 0 and sign(r) != sign(x) (r times x's sign: r * x
        # underflows to -0.0 for tiny f64 values)
        rx = self.emit(f"fmul double {r}, {self.fcall('copysign', 'double', ['1.0', xd])}")
        wrong = self.emit(f"fcmp olt double {rx}, 0.0")
        ay = self.fcall("fabs", "double", [yd])
        step = self.fcall("copysign", "double", [ay, r])
        r2 = self.emit(f"fsub double {r}, {step}")
        near = self.emit(f"select i1 {wrong}, double {r2}, double {r}")
        aq = self.fcall("fabs", "double", [q])
        ax = self.fcall("fabs", "double", [xd])
        # |q| >= 2^52 (x / y may overflow to inf: 1e-8 / 5e-324), x finite,
        # y finite and not 0: the loop
        big = self.emit(f"fcmp oge double {aq}, {const_operand(DType.F64, 2.0**52)}")
        xfin = self.emit(f"fcmp one double {ax}, 0x7FF0000000000000")
        yok = self.emit(f"and i1 {self.emit(f'fcmp one double {ay}, 0x7FF0000000000000')}, "
                        f"{self.emit(f'fcmp one double {ay}, 0.0')}")
        far = self.emit(f"and i1 {self.emit(f'and i1 {big}, {xfin}')}, {yok}")
        pre, loop_l, join = self.cur, self.new_label("fmod_far"), self.new_label("fmod_done")
        self.cbr(far, loop_l, join)
        self.label(loop_l)
        reduced = self.fmod_reduce(ax, ay, pre)
        end = self.cur
        self.br(join)
        self.label(join)
        rf = self.emit(f"phi double [ {near}, %{pre} ], [ {reduced}, %{end} ]")
        # fmod keeps the sign of x, also for a zero remainder (-4 % 2 = -0)
        rs = self.fcall("copysign", "double", [rf, xd])
        # y = +-inf: x itself for a finite x (0 * inf would be NaN above); x = inf,
        # y = 0 and NaNs give NaN through q (NaN or inf: r is NaN)
        yinf = self.emit(f"fcmp oeq double {ay}, 0x7FF0000000000000")
        keep = self.emit(f"and i1 {yinf}, {xfin}")
        return self.emit(f"select i1 {keep}, double {xd}, double {rs}")

    def fmod_reduce(self, ax: str, ay: str, pre: str) -> str:
        """fmod(ax, ay) of positive finite f64 values by a loop (emitted at
        the current block, entered from `pre`): r = ax; while r >= ay, with
        y_k = ay * 2^k the largest multiple of ay by a power of two under
        r / 2^51, r = r - trunc(r / y_k) * y_k (one exact fma, made
        non-negative by one exact add): r stays congruent to ax mod ay and
        loses 51 bits of quotient a trip (f32 inputs: 6 trips at most, f64:
        42)."""
        head = self.cur
        r = self.tmp()
        phi_at = len(self.lines)
        self.lines.append("")  # the phi, patched below
        k = self.emit(f"sub i32 {self.emit(f'sub i32 {self.fexponent(r)}, {self.fexponent(ay)}')}, 51")
        k = self.emit(f"select i1 {self.emit(f'icmp slt i32 {k}, 0')}, i32 0, i32 {k}")
        yk = ay
        for _ in range(3):  # 2^k in three factors of at most 2^1000 (k < 2100)
            kp = self.emit(f"select i1 {self.emit(f'icmp sgt i32 {k}, 1000')}, i32 1000, i32 {k}")
            k = self.emit(f"sub i32 {k}, {kp}")
            biased = self.emit(f"zext i32 {self.emit(f'add i32 {kp}, 1023')} to i64")
            bits = self.emit(f"shl i64 {biased}, 52")
            yk = self.emit(f"fmul double {yk}, {self.emit(f'bitcast i64 {bits} to double')}")
        q = self.fcall("trunc", "double", [self.emit(f"fdiv double {r}, {yk}")])
        rn = self.fcall("fma", "double", [self.emit(f"fneg double {q}"), yk, r])
        neg = self.emit(f"fcmp olt double {rn}, 0.0")
        rn = self.emit(f"select i1 {neg}, double {self.emit(f'fadd double {rn}, {yk}')}, double {rn}")
        again = self.emit(f"fcmp oge double {rn}, {ay}")
        latch = self.cur
        done = self.new_label("fmod_reduced")
        self.cbr(again, head, done)
        self.lines[phi_at] = f"  {r} = phi double [ {ax}, %{pre} ], [ {rn}, %{latch} ]"
        self.label(done)
        return rn

    def fexponent(self, v: str) -> str:
        """floor(log2(v)) of a positive finite f64 as i32 (subnormals scaled
        by 2^64 first)."""
        sub = self.emit(f"fcmp olt double {v}, {const_operand(DType.F64, 2.0**-1022)}")
        scaled = self.emit(f"fmul double {v}, {const_operand(DType.F64, 2.0**64)}")
        w = self.emit(f"select i1 {sub}, double {scaled}, double {v}")
        wb = self.emit(f"bitcast double {w} to i64")
        e = self.emit(f"and i64 {self.emit(f'lshr i64 {wb}, 52')}, 2047")
        e32 = self.emit(f"trunc i64 {e} to i32")
        bias = self.emit(f"select i1 {sub}, i32 1087, i32 1023")
        return self.emit(f"sub i32 {e32}, {bias}")

    def ielem(self, eop: ir.ElemOp, a: list[str], dt: DType, ty: str) -> str:
        E = ir.ElemOp
        signed = dt.is_signed
        bits = 1 if dt is DType.BOOL else dt.bits
        simple = {E.ADD: "add", E.SUB: "sub", E.MUL: "mul", E.AND: "and", E.OR: "or", E.XOR: "xor"}
        if eop in simple:
            return self.emit(f"{simple[eop]} {ty} {a[0]}, {a[1]}")
        cmp = {E.EQ: "eq", E.NE: "ne", E.LT: "slt" if signed else "ult", E.LE: "sle" if signed else "ule",
               E.GT: "sgt" if signed else "ugt", E.GE: "sge" if signed else "uge"}
        if eop in cmp:
            return self.emit(f"icmp {cmp[eop]} {ty} {a[0]}, {a[1]}")
        match eop:
            case E.NEG:
                return self.emit(f"sub {ty} 0, {a[0]}")
            case E.NOT:
                return self.emit(f"xor {ty} {a[0]}, {'true' if bits == 1 else -1}")
            case E.ABS:
                if not signed:
                    return a[0]
                self.declare(f"declare {ty} @llvm.abs.{ty}({ty}, i1)")
                return self.call(ty, f"llvm.abs.{ty}", f"{ty} {a[0]}, i1 false")
            case E.MAXIMUM | E.MINIMUM:
                nm = ("s" if signed else "u") + ("max" if eop is E.MAXIMUM else "min")
                self.declare(f"declare {ty} @llvm.{nm}.{ty}({ty}, {ty})")
                return self.call(ty, f"llvm.{nm}.{ty}", f"{ty} {a[0]}, {ty} {a[1]}")
            case E.DIV | E.REM:
                zero = self.emit(f"icmp eq {ty} {a[1]}, 0")
                bad = zero
                if signed:
                    mn = -(1 << (bits - 1))
                    is_min = self.emit(f"icmp eq {ty} {a[0]}, {mn}")
                    is_m1 = self.emit(f"icmp eq {ty} {a[1]}, -1")
                    ovf = self.emit(f"and i1 {is_min}, {is_m1}")
                    bad = self.emit(f"or i1 {zero}, {ovf}")
                d = self.emit(f"select i1 {bad}, {ty} 1, {ty} {a[1]}")
                if eop is E.DIV:
                    q = self.emit(f"{'sdiv' if signed else 'udiv'} {ty} {a[0]}, {d}")
                    return self.emit(f"select i1 {zero}, {ty} 0, {ty} {q}")
                rm = self.emit(f"{'srem' if signed else 'urem'} {ty} {a[0]}, {d}")
                return self.emit(f"select i1 {zero}, {ty} {a[0]}, {ty} {rm}")
            case E.SHL | E.SHR:
                big = self.emit(f"icmp uge {ty} {a[1]}, {bits}")
                # 64-bit: PTX's shift takes a 32-bit amount, and LLVM's NVPTX backend folds a
                # `select big, 0, x` guard away (PTX clamps an amount past the width) but truncates
                # x first: 1 << 2^32 came out 1 on the GPU. A masked amount keeps the guard.
                amt = (self.emit(f"and {ty} {a[1]}, {bits - 1}") if bits == 64
                       else self.emit(f"select i1 {big}, {ty} 0, {ty} {a[1]}"))
                if eop is E.SHL:
                    s = self.emit(f"shl {ty} {a[0]}, {amt}")
                    return self.emit(f"select i1 {big}, {ty} 0, {ty} {s}")
                if signed:
                    amt2 = self.emit(f"select i1 {big}, {ty} {bits - 1}, {ty} {a[1]}")
                    return self.emit(f"ashr {ty} {a[0]}, {amt2}")
                s = self.emit(f"lshr {ty} {a[0]}, {amt}")
                return self.emit(f"select i1 {big}, {ty} 0, {ty} {s}")
            case _:
                raise AssertionError(f"integer op {eop} has no lowering")

    # -- round to odd (the casts: `casts.py`) -----------------------------------------
    def f64_to_f32_odd(self, x: str) -> str:
        """f64 -> f32 rounded to odd (uses only `emit` and `fcall`: the host test
        JIT-compiles it against the interpreter's `numeric.f64_to_f32_odd`)."""
        f = self.emit(f"fptrunc double {x} to float")
        back = self.emit(f"fpext float {f} to double")
        inexact = self.emit(f"fcmp one double {back}, {x}")  # false for NaN: it stays as it is
        ab = self.fcall("fabs", "double", [back])
        ax = self.fcall("fabs", "double", [x])
        away = self.emit(f"fcmp ogt double {ab}, {ax}")
        return odd_f32(self.emit, f, away, inexact)


def odd_f32(emit: Callable[[str], str], f: str, away: str, inexact: str) -> str:
    """The f32 `f` (the source rounded to nearest) made the source rounded to odd, by `emit` (an emitter's, or
    the host test's): one step toward zero where `f` lies past the source (`away`), then the last bit set where it
    was inexact. The tail of `int64_to_f32_odd` and `f64_to_f32_odd`."""
    bits = emit(f"bitcast float {f} to i32")
    dec = emit(f"sub i32 {bits}, 1")  # one step toward zero (sign-magnitude)
    rz = emit(f"select i1 {away}, i32 {dec}, i32 {bits}")
    odd = emit(f"or i32 {rz}, 1")
    fin = emit(f"select i1 {inexact}, i32 {odd}, i32 {bits}")
    return emit(f"bitcast i32 {fin} to float")
