"""The numerics differential table: every scalar operation of the language on
every dtype it takes, on inputs at the edges (signed zeros, denormals, tiny,
huge, infinities, NaN, the integer extremes) and random ones, as small
kernels built from the table (`test_numerics_diff.py` runs each on the
interpreter and on the GPU code path in `llsim`, and assembles it).

A `Case` is one kernel: one or more ops of one group (unary, binary,
ternary, cast, reduction, scan) on one operand dtype, each op's result
stored to its own output. The inputs are flat arrays of `n` elements (the
reductions' a `[rows, COLS]` matrix), loaded in tiles of `TILE`.

What counts as agreeing (`disagreements`): integers and bools are equal;
floats are NaN where the interpreter's are, the same infinity where the
interpreter's are infinite, and otherwise within the op's documented
tolerance (`tilelang/backend/fastmath.tolerance`, the table docs/reference.md
prints), with the sign of a zero kept for the exact ops.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tilelang.backend import fastmath
from tilelang.dtypes import DType
from tilelang.interp import round_bf16
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder

E = ir.ElemOp
R = ir.ReduceOp
S = ir.ScanOp
TILE = 32
COLS = 32  # a reduction's row length (one warp's lanes)
# `TILE_NUMERICS_SWEEP=N`: N random values a case instead of the default few
# (the larger sweep; also more random pairs for the binary ops)
SWEEP = int(os.environ.get("TILE_NUMERICS_SWEEP", "0") or 0)

FLOATS = (DType.F32, DType.F16, DType.BF16, DType.F64)
INTS = (DType.I8, DType.I16, DType.I32, DType.I64, DType.U8, DType.U16, DType.U32, DType.U64)

FLOAT_UNARY = (E.NEG, E.ABS, E.EXP, E.EXP2, E.LOG, E.LOG2, E.SQRT, E.RSQRT, E.SIN, E.COS, E.TANH,
               E.SIGMOID, E.FLOOR, E.CEIL, E.ERF)
FLOAT_BINARY = (E.ADD, E.SUB, E.MUL, E.DIV, E.REM, E.MAXIMUM, E.MINIMUM, E.POW, E.ATAN2,
                E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)
INT_UNARY = (E.NEG, E.NOT, E.ABS)
INT_BINARY = (E.ADD, E.SUB, E.MUL, E.DIV, E.REM, E.MAXIMUM, E.MINIMUM, E.AND, E.OR, E.XOR, E.SHL, E.SHR,
              E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE)
REDUCES = (R.SUM, R.PROD, R.MAX, R.MIN, R.ARGMAX, R.ARGMIN)
SCANS = (S.CUMSUM, S.CUMPROD, S.CUMMAX, S.CUMMIN)
CAST_TYPES = (DType.BOOL, *INTS, *FLOATS)


# ---------------------------------------------------------------- inputs
def _float_specials(dt: DType) -> list[float]:
    info = {DType.F32: (1.4e-45, 1.2e-38, 3.4028235e38), DType.F64: (5e-324, 2.3e-308, 1.7976931348623157e308),
            DType.F16: (6e-8, 6.1e-5, 65504.0), DType.BF16: (9.2e-41, 1.2e-38, 3.38e38)}[dt]
    sub, nrm, mx = info
    vals = [0.0, -0.0, sub, -sub, sub * 1000, nrm, -nrm, 1e-30, -1e-30, 1e-8, 3e-8, -3e-8, 1e-6, -1e-6,
            1e-4, -1e-4, 1e-3, 0.01, 0.1, -0.1, 0.3, 0.5, -0.5, 0.55, 0.9, 1.0, -1.0, 1.0 + 2.0**-20,
            1.0 - 2.0**-20, 1.5, -1.5, 2.0, 2.5, -2.5, 3.0, 3.14159265, -3.14159265, 4.0, 9.0, 10.0, -10.0,
            20.0, 44.5, 88.0, 88.7, 89.0, -87.0, -88.7, -104.0, 100.0, -100.0, 128.0, -126.5, 1000.0,
            8192.5, 1e5, -1e5, 1e10, -1e10, 1e20, 3e38, -3e38, mx, -mx, 1e300,
            np.inf, -np.inf, np.nan, -np.nan]
    return vals


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def float_values(dt: DType, seed: int = 0) -> np.ndarray:
    """The edges of `dt` and random values (normal at several scales), as `dt`'s storage."""
    r = _rng(seed)
    k = max(SWEEP, 24)
    rand = np.concatenate([r.standard_normal(k) * s for s in (1e-3, 0.3, 3.0, 30.0)] +
                          [np.exp(r.uniform(-80, 80, k)) * r.choice([-1, 1], k)])
    return as_dtype(np.array(_float_specials(dt) + list(rand), np.float64), dt)


def int_values(dt: DType, seed: int = 0) -> np.ndarray:
    bits = dt.bits
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dt.is_signed else (0, (1 << bits) - 1)
    vals = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, lo, lo + 1, hi, hi - 1, bits - 1, bits, bits + 1,
            255, 256, 65535, 1 << 31, (1 << 31) - 1, 1 << 32]
    r = _rng(seed)
    k = max(SWEEP, 16)
    vals += [int(v) for v in r.integers(lo, hi, k, dtype=np.int64 if hi < (1 << 63) else np.uint64,
                                        endpoint=True)]
    vals += [int(v) for v in r.integers(-1000, 1000, k)]
    return np.array([dt.wrap(v) for v in vals], dt.np_dtype)


def values(dt: DType, seed: int = 0) -> np.ndarray:
    if dt is DType.BOOL:
        return np.array([False, True, True, False] * 4, bool)
    return float_values(dt, seed) if dt.is_float else int_values(dt, seed)


def as_dtype(x: np.ndarray, dt: DType) -> np.ndarray:
    """f64 values as `dt`'s interpreter storage (bf16: rounded, in f32), overflow to inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        if dt is DType.BF16:
            from tilelang.interp.numeric import finish

            return finish(np.asarray(x, np.float64), DType.BF16)
        return np.asarray(x, np.float64).astype(dt.np_dtype)


def pairs(x: np.ndarray, seed: int, n_special: int, every: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of a choice of the first `n_special` values (the edges:
    every `every`-th, and the last six, the largest, infinities and NaN),
    and random pairs of all."""
    s = np.concatenate([x[:n_special - 6:every], x[n_special - 6:n_special]])
    a, b = np.meshgrid(s, s, indexing="ij")
    r = _rng(seed + 1)
    k = max(4 * SWEEP, 128)
    ia, ib = r.integers(0, x.size, k), r.integers(0, x.size, k)
    return np.concatenate([a.ravel(), x[ia]]), np.concatenate([b.ravel(), x[ib]])


def shift_amounts(dt: DType, n: int, seed: int) -> np.ndarray:
    """Shift amounts: mostly in range, some at and past the width and negative."""
    r = _rng(seed + 2)
    v = r.integers(-2, dt.bits + 3, n)
    return np.array([dt.wrap(int(x)) for x in v], dt.np_dtype)


# ---------------------------------------------------------------- cases
@dataclass(frozen=True)
class ConstOp:
    """`op(x, c)` (or `op(c, x)` when `left`) with `c` a constant of the
    kernel: the code generator's immediate operands (LLVM folds and picks
    other instructions for them: a division by a constant is a multiply)."""

    op: ir.ElemOp
    c: float | int
    left: bool = False

    @property
    def value(self) -> str:
        return f"{self.op.value}({self.c!r}, x)" if self.left else f"{self.op.value}(x, {self.c!r})"


@dataclass(frozen=True)
class Case:
    """One generated kernel: `ops` of `group` on operands of `dtype`."""

    group: str  # "unary" | "binary" | "ternary" | "cast" | "reduce" | "scan"
    dtype: DType
    ops: tuple[object, ...]  # ElemOp / ConstOp / ReduceOp / ScanOp / DType (the cast targets)
    inputs: tuple[np.ndarray, ...] = field(compare=False, repr=False)
    cols: int = COLS  # a reduction's or scan's tile width (the tensor may be narrower: zeros past its edge)
    warps: int = 1
    name: str = ""  # the id's tail, where a group has several cases of a dtype

    @property
    def id(self) -> str:
        return f"{self.group}-{self.dtype.value}" + (f"-{self.name}" if self.name else "")

    @property
    def rows(self) -> int:
        """Rows a block reduces or scans: two a warp."""
        return 2 * self.warps

    def out_dtype(self, op: object) -> DType:
        if isinstance(op, ConstOp):
            op = op.op
        if isinstance(op, DType):
            return op
        if isinstance(op, ir.ElemOp) and op.is_comparison:
            return DType.BOOL
        if op in (R.ARGMAX, R.ARGMIN):
            return DType.I32
        return self.dtype

    @property
    def n(self) -> int:
        return self.inputs[0].shape[0]

    def kernel(self) -> ir.Kernel:
        b = Builder(f"num_{self.group}_{self.dtype.value}")
        in_dts = [DType.BOOL, self.dtype, self.dtype] if self.ops == (E.WHERE,) else [self.dtype] * len(self.inputs)
        rows = self.group in ("reduce", "scan")
        for i, dt in enumerate(in_dts):
            b.tensor_param(f"x{i}", dt, 2 if rows else 1)
        for j, op in enumerate(self.ops):
            out_rank = {"reduce": 1, "scan": 2}.get(self.group, 1)
            b.tensor_param(f"o{j}", self.out_dtype(op), out_rank)
        if rows:
            r0 = b.mul(b.block_id(0), b.const(self.rows, DType.I32))
            zero = b.const(0, DType.I32)
            shape = (self.rows, self.cols)
            xs = [b.load(f"x{i}", (r0, zero), shape) for i in range(len(in_dts))]
        else:
            off = b.mul(b.block_id(0), b.const(TILE, DType.I32))
            xs = [b.load(f"x{i}", (off,), (TILE,)) for i in range(len(in_dts))]
        for j, op in enumerate(self.ops):
            if isinstance(op, DType):
                b.store(f"o{j}", (off,), b.cast(xs[0], op))
            elif isinstance(op, ir.ReduceOp):
                b.store(f"o{j}", (r0,), b.reduce(op, xs[0], 1))
            elif isinstance(op, ir.ScanOp):
                b.store(f"o{j}", (r0, zero), b.scan(op, xs[0], 1))
            elif isinstance(op, ConstOp):
                c = b.const(op.c, self.dtype, (TILE,))
                b.store(f"o{j}", (off,), b.elementwise(op.op, *((c, xs[0]) if op.left else (xs[0], c))))
            else:
                assert isinstance(op, ir.ElemOp)
                b.store(f"o{j}", (off,), b.elementwise(op, *xs[: op.arity]))
        return b.finish(num_warps=self.warps)

    def grid(self) -> tuple[int]:
        per = self.rows if self.group in ("reduce", "scan") else TILE
        return (-(-self.n // per),)

    def args(self) -> list[np.ndarray]:
        outs = []
        for op in self.ops:
            dt = self.out_dtype(op)
            if self.group == "reduce":
                shape: tuple[int, ...] = (self.n,)
            else:
                shape = self.inputs[0].shape
            outs.append(np.zeros(shape, dt.np_dtype))
        return [x.copy() for x in self.inputs] + outs


def _reduce_rows(dt: DType, seed: int) -> np.ndarray:
    """Rows of COLS: plain random ones, and rows holding NaN, +-inf, ties,
    signed zeros, huge values (the sum overflows) and the integer extremes."""
    r = _rng(seed + 3)
    v = values(dt, seed)
    rows = []
    for i in range(24):
        if dt.is_float:
            row = as_dtype(r.standard_normal(COLS) * (10.0 if i % 2 else 0.5), dt)
        else:
            row = v[r.integers(0, v.size, COLS)]
        rows.append(row)
    if dt.is_float:
        specials = [(5, np.nan), (0, np.nan), (COLS - 1, np.nan), (3, np.inf), (7, -np.inf)]
        for pos, s in specials:
            row = rows[0].copy()
            row[pos] = s
            rows.append(row)
        both = rows[0].copy()
        both[2], both[9] = np.inf, -np.inf
        rows.append(both)
        rows.append(as_dtype(np.full(COLS, -np.inf), dt))
        rows.append(as_dtype(np.full(COLS, np.inf), dt))
        rows.append(as_dtype(np.array([-0.0] * COLS), dt))
        rows.append(as_dtype(np.array([0.0, -0.0] * (COLS // 2)), dt))
        rows.append(as_dtype(np.full(COLS, 3.0e38 if dt in (DType.F32, DType.BF16) else 6e4 if dt is DType.F16
                                     else 1e308), dt))
        ties = as_dtype(np.arange(COLS) % 5, dt)
        rows.append(ties)
        nan_ties = ties.copy()
        nan_ties[4], nan_ties[20] = np.nan, np.nan
        rows.append(nan_ties)
    else:
        rows.append(np.full(COLS, v[11], dt.np_dtype))  # all MIN (or 0)
        rows.append(np.full(COLS, v[13], dt.np_dtype))  # all MAX
        rows.append(np.array([dt.wrap(int(x)) for x in np.arange(COLS) % 5], dt.np_dtype))
    return np.stack(rows)


def cases() -> list[Case]:
    """The whole table, one `Case` a (group, dtype)."""
    out: list[Case] = []
    for dt in FLOATS:
        x = float_values(dt)
        out.append(Case("unary", dt, FLOAT_UNARY, (x,)))
        a, b = pairs(x, 1, len(_float_specials(dt)), every=1 if SWEEP else 4 if dt.bits >= 32 else 5)
        out.append(Case("binary", dt, FLOAT_BINARY, (a, b)))
        r = _rng(7)
        c3 = [x[r.integers(0, x.size, 512)] for _ in range(3)]
        # products on a tie of the type (odd factors), plus a tiny c of either
        # sign: where rounding twice (f32, then the narrow type) goes wrong
        k = 256
        c3[0] = np.concatenate([c3[0], as_dtype(r.standard_normal(k), dt)])
        c3[1] = np.concatenate([c3[1], as_dtype(r.choice([3.0, 1.5, 0.75, 5.0, 6.0, -3.0], k), dt)])
        c3[2] = np.concatenate([c3[2], as_dtype(r.choice([1e-30, -1e-30, 1e-40, -1e-40, 6e-8, -6e-8, 0.0, -0.0], k), dt)])
        out.append(Case("ternary", dt, (E.FMA,), tuple(c3)))
    for dt in INTS:
        x = int_values(dt)
        out.append(Case("unary", dt, INT_UNARY, (x,)))
        a, b = pairs(x, 2, n_special=24)
        shifts = shift_amounts(dt, b.size, 3)
        # shifts take their own amounts (mostly in range); the rest the pairs
        out.append(Case("binary", dt, tuple(op for op in INT_BINARY if op not in (E.SHL, E.SHR)), (a, b)))
        out.append(Case("shift", dt, (E.SHL, E.SHR), (a, shifts)))
    out.append(Case("unary", DType.BOOL, (E.NOT,), (values(DType.BOOL),)))
    for dt in (DType.F32, DType.BF16, DType.I32, DType.U8):
        r = _rng(11)
        x = values(dt)
        mask = r.integers(0, 2, 128).astype(bool)
        out.append(Case("where", dt, (E.WHERE,), (mask, x[r.integers(0, x.size, 128)],
                                                  x[r.integers(0, x.size, 128)])))
    for src in CAST_TYPES:
        x = values(src)
        if src.is_float:
            extra = [2.0**31, 2.0**31 - 128, -(2.0**31), -(2.0**31) - 256, 2.0**32, 2.0**63, -(2.0**63), 2.0**64,
                     300.0, -300.0, 255.5, 256.0, -0.5, 0.5, 1.5, 2.5, -1.5, 65504.0, 65519.0, 65520.0,
                     1.0 + 2.0**-8, 1.0 + 2.0**-9 + 2.0**-20, 1.0 + 2.0**-11, 1.0 + 2.0**-11 + 2.0**-30,
                     127.5, 128.0, -128.5, -129.0, 32767.5, 65535.9]
            x = np.concatenate([x, as_dtype(np.array(extra), src)])
        out.append(Case("cast", src, tuple(d for d in CAST_TYPES if d is not src), (x,)))
    for dt in (*FLOATS, DType.I32, DType.U32, DType.I64, DType.I8):
        rows = _reduce_rows(dt, 5)
        ops = REDUCES if dt.is_float or dt.bits >= 32 else (R.SUM, R.MAX, R.MIN, R.ARGMAX, R.ARGMIN)
        out.append(Case("reduce", dt, ops, (rows,)))
        out.append(Case("scan", dt, SCANS, (rows,)))
    for dt in (DType.F32, DType.BF16, DType.I32):
        # 4 warps over rows of 128 (the reduction crosses warps through shared
        # memory) of a tensor 100 wide (zeros past its edge), the last block
        # half past the last row
        rows = _reduce_rows(dt, 6)
        wide = np.concatenate([rows, rows[::-1], rows], axis=1)[:-1, :100].copy()
        ops = (R.SUM, R.MAX, R.MIN, R.ARGMAX, R.ARGMIN)
        out.append(Case("reduce", dt, ops, (wide,), cols=128, warps=4, name="wide"))
        out.append(Case("scan", dt, (S.CUMSUM, S.CUMMAX), (wide,), cols=128, warps=4, name="wide"))
    # one kernel a constant: short kernels keep each case's failure report
    # small (NVPTX code generation used to grow much faster than a kernel's
    # length, a u8 kernel of 112 ops 274 s; `-cgpp-huge-func=0` in
    # `target._llvm` fixed that: tests/backend/test_codegen_time.py)
    consts = [(DType.F32, (-0.0, np.inf, 3.0)), (DType.I32, (0, -1, 7, -2147483648)), (DType.I64, (-1, 64))]
    if SWEEP:
        consts = [(DType.F32, (0.0, -0.0, np.inf, -np.inf, np.nan, 3.0, 1e-40)), (DType.BF16, (0.0, -np.inf, 3.0)),
                  (DType.F16, (0.0, 3.0, 65504.0)), (DType.F64, (0.0, np.inf, 3.0)),
                  (DType.I32, (0, -1, 1, 7, 32, -2147483648)), (DType.U8, (0, 1, 3, 8, 255)),
                  (DType.I64, (0, -1, 7, 64)), (DType.U32, (0, 3, 32, 4294967295))]
    for dt, cs in consts:
        bins = FLOAT_BINARY if dt.is_float else INT_BINARY
        for i, c in enumerate(cs):
            ops = tuple(ConstOp(op, c, left) for op in bins for left in (False, True)
                        if not op.is_comparison or not left)
            out.append(Case("const", dt, ops, (values(dt),), name=f"c{i}"))
    return out


# ---------------------------------------------------------------- comparing
@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float
    zero_sign: bool  # the sign of a zero result must match


def tolerance(case: Case, op: object) -> Tolerance:
    """How close the GPU must be to the interpreter for `op` of `case`."""
    dt = case.out_dtype(op)
    if isinstance(op, ConstOp):
        op = op.op
    if not dt.is_float:
        return Tolerance(0.0, 0.0, False)
    if case.group in ("reduce", "scan") and op in (R.SUM, R.PROD, S.CUMSUM, S.CUMPROD):
        # another order of the adds / multiplies: a few ulps of the sum of
        # magnitudes (scaled per row by `compare`)
        eps = {DType.F64: 2.0**-52, DType.F32: 2.0**-23, DType.F16: 2.0**-10, DType.BF16: 2.0**-7}[dt]
        return Tolerance(eps * case.cols, 0.0, False)
    if isinstance(op, ir.ElemOp):
        rtol, atol = fastmath.tolerance(op.value, dt)
        return Tolerance(rtol, atol, True)
    return Tolerance(0.0, 0.0, True)


def disagreements(case: Case, op: object, got: np.ndarray, want: np.ndarray,
                  inputs: tuple[np.ndarray, ...], limit: int = 6) -> list[str]:
    """Where `got` (the GPU path) does not agree with `want` (the interpreter)."""
    dt = case.out_dtype(op)
    tol = tolerance(case, op)
    if dt.is_float:
        g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
        with np.errstate(all="ignore"):
            nan_ok = np.isnan(g) == np.isnan(w)
            inf_ok = np.where(np.isinf(w) | np.isinf(g), g == w, True)
            scale = np.abs(w)
            if case.group in ("reduce", "scan") and op in (R.SUM, R.PROD, S.CUMSUM, S.CUMPROD):
                x = np.abs(np.asarray(inputs[0], np.float64))
                scale = np.sum(x, axis=1) if op is R.SUM else \
                    np.cumsum(x, axis=1) if op is S.CUMSUM else np.abs(w)
            fin = np.isfinite(g) & np.isfinite(w)
            close = np.where(fin, np.abs(g - w) <= tol.atol + tol.rtol * scale, True)
            sign_ok = np.where(fin & (w == 0) & (g == 0) & tol.zero_sign, np.signbit(g) == np.signbit(w), True)
        ok = nan_ok & inf_ok & close & sign_ok
    else:
        ok = np.asarray(got) == np.asarray(want)
    bad = np.argwhere(~ok)
    out = []
    for idx in bad[:limit]:
        t = tuple(int(i) for i in idx)
        arg = ", ".join(_show(x[t[: x.ndim]] if case.group not in ("reduce", "scan") else x[t[0]]) for x in inputs) \
            if case.group not in ("reduce", "scan") else f"row {t[0]}: {_row(inputs[0][t[0]])}"
        out.append(f"{_name(op)}({arg}) on {case.dtype.value}: interpreter {_show(want[t])}, GPU {_show(got[t])}")
    if bad.shape[0] > limit:
        out.append(f"... {bad.shape[0] - limit} more")
    return out


def _name(op: object) -> str:
    if isinstance(op, ConstOp):
        return f"{op.value} with x ="
    return f"as {op.value}" if isinstance(op, DType) else str(op.value)  # type: ignore[attr-defined]


def _show(v: object) -> str:
    a = np.asarray(v)
    if a.dtype.kind == "f":
        return repr(float(a))
    return repr(a.item())


def _row(r: np.ndarray) -> str:
    s = ", ".join(_show(v) for v in r[:8])
    return f"[{s}, ...]"


def run_interp(case: Case, kernel: ir.Kernel) -> list[np.ndarray]:
    from tilelang.interp import run_kernel

    args = case.args()
    with np.errstate(all="ignore"):
        run_kernel(kernel, case.grid(), args)
    return args[len(case.inputs):]


def run_sim(case: Case, kernel: ir.Kernel, arch: str, sim_factory: Callable[[str], object]) -> list[np.ndarray]:
    args = case.args()
    with np.errstate(all="ignore"):
        sim_factory(arch).run(kernel, case.grid(), args)  # type: ignore[attr-defined]
    return args[len(case.inputs):]


__all__ = ["Case", "cases", "disagreements", "round_bf16", "run_interp", "run_sim", "values"]
