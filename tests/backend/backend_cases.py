"""Backend test cases: IR kernels (F1's hand-built samples) with inputs and grids.

Each case builds a kernel, NumPy arguments (tensors in their storage dtype,
`&mut` tensors included), and the grid; the GPU tests run it on both engines
and compare, the PTX tests only compile it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir import samples

F16, BF16, F32, I32 = DType.F16, DType.BF16, DType.F32, DType.I32


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _rand(rng: np.random.Generator, shape, dt: DType) -> np.ndarray:
    if dt.is_int:
        return rng.integers(-50, 50, size=shape).astype(dt.np_dtype)
    a = rng.standard_normal(shape).astype(np.float32)
    if dt is BF16:
        from tilelang.interp import round_bf16

        return round_bf16(a)
    return a.astype(dt.np_dtype)


@dataclass
class Case:
    name: str
    kernel: Callable[[], ir.Kernel]
    args: Callable[[np.random.Generator], list[Any]]
    grid: tuple[int, ...]
    rtol: float = 1e-5
    atol: float = 1e-5


def _vec(n: int, block: int, dt: DType = F32) -> Case:
    return Case(
        f"vector_add_{dt.value}_{n}_{block}", lambda: samples.vector_add(block, dt),
        lambda r: [np.zeros(n, dt.np_dtype), _rand(r, n, dt), _rand(r, n, dt)], (cdiv(n, block),),
    )


def _softmax(m: int, n: int, rows: int, cols: int, dt: DType = F32) -> Case:
    tol = 2e-3 if dt is F16 else 1e-2 if dt is BF16 else 1e-5
    return Case(
        f"softmax_{dt.value}_{m}x{n}", lambda: samples.row_softmax(rows, cols, dt),
        lambda r: [np.zeros((m, n), dt.np_dtype), _rand(r, (m, n), dt)], (cdiv(m, rows), 1), tol, tol,
    )


def _gemm(M: int, N: int, K: int, bm: int, bn: int, bk: int, ind: DType, acc: DType, out: DType | None = None) -> Case:
    o = out or acc
    tol = 1e-4 if o is F32 else 2e-2
    return Case(
        f"gemm_{ind.value}_{acc.value}_{M}x{N}x{K}", lambda: samples.gemm(bm, bn, bk, ind, acc, out),
        lambda r: [np.zeros((M, N), o.np_dtype), _rand(r, (M, K), ind), _rand(r, (K, N), ind)],
        (cdiv(M, bm), cdiv(N, bn)), tol, tol,
    )


CASES: list[Case] = [
    _vec(1 << 16, 1024),
    _vec(1000, 256),  # partial last tile, misaligned tail
    _vec(4099, 512, F16),
    _vec(777, 128, BF16),
    Case("saxpy_1000", lambda: samples.saxpy(128),
         lambda r: [np.zeros(1000, np.float32), np.float32(2.5), _rand(r, 1000, F32), _rand(r, 1000, F32)], (8,)),
    _softmax(37, 64, 4, 64),
    _softmax(16, 100, 2, 128),
    _softmax(8, 128, 2, 128, F16),
    Case("row_sum_50x70", lambda: samples.row_sum(8, 32),
         lambda r: [np.zeros(50, np.float32), _rand(r, (50, 70), F32)], (7,), 1e-4, 1e-4),
    Case("row_sum_9x1000_wide", lambda: samples.row_sum(4, 512),  # a row spans 4 warps
         lambda r: [np.zeros(9, np.float32), _rand(r, (9, 1000), F32)], (3,), 1e-4, 1e-4),
    Case("row_sum_i32_9x300", lambda: samples.row_sum(2, 256, I32),
         lambda r: [np.zeros(9, np.int32), _rand(r, (9, 300), I32)], (5,), 0, 0),
    _gemm(64, 64, 32, 32, 32, 16, F16, F32),
    _gemm(70, 50, 40, 32, 32, 16, F32, F32),
    _gemm(64, 96, 64, 64, 32, 32, BF16, F32, BF16),
    _gemm(130, 70, 48, 64, 32, 16, F16, F32),  # tensor cores with partial tiles on every edge
    _gemm(128, 128, 64, 128, 128, 32, BF16, F32),
    _gemm(40, 100, 40, 16, 48, 16, F16, F32),  # 6 tiles of 16x8 over 4 warps: guarded fragments
    Case("transpose_50x70", lambda: samples.transpose(16, 32),
         lambda r: [np.zeros((70, 50), np.float32), _rand(r, (50, 70), F32)], (cdiv(70, 16), cdiv(50, 32))),
    Case("cumsum_10x64", lambda: samples.cumsum_rows(4, 64),
         lambda r: [np.zeros((10, 64), np.float32), _rand(r, (10, 64), F32)], (3, 1), 1e-4, 1e-4),
    Case("argmax_9x50", lambda: samples.argmax_rows(4, 64),
         lambda r: [np.zeros(9, np.int32), _rand(r, (9, 50), F32)], (3,), 0, 0),
    Case("histogram_1000", lambda: samples.histogram(128, 16),
         lambda r: [np.zeros(1000, np.int32), r.integers(-2, 18, size=1000).astype(np.int32),
                    np.zeros(16, np.int32)], (8,), 0, 0),
]


def all_sample_kernels() -> dict[str, Callable[[], ir.Kernel]]:
    """Every kernel the PTX tests compile: F1's default samples plus the cases above."""
    out = {f"sample_{k}": v for k, v in samples.ALL.items()}
    for c in CASES:
        out[c.name] = c.kernel
    return out


# ---------------------------------------------------------------- op-by-op suites
# Each builds one kernel with many outputs (one per op), so a whole dtype's
# element-wise semantics compile once. Tolerances come from the backend's
# fast-math table (`tilelang/backend/fastmath.py`), the table the backend promises.
from tilelang.backend.fastmath import tolerance  # noqa: E402
from tilelang.ir.builder import Builder  # noqa: E402

E = ir.ElemOp
N_OPS = 1000  # not a multiple of the tile: every suite also exercises the edges
TILE = 256

FLOAT_UNARY = [E.NEG, E.ABS, E.EXP, E.EXP2, E.SIN, E.COS, E.TANH, E.SIGMOID, E.FLOOR, E.CEIL]
POSITIVE_UNARY = [E.LOG, E.LOG2, E.SQRT, E.RSQRT]
FLOAT_BINARY = [E.ADD, E.SUB, E.MUL, E.DIV, E.MAXIMUM, E.MINIMUM]
COMPARE = [E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE]
INT_UNARY = [E.NEG, E.NOT, E.ABS]
INT_BINARY = [E.ADD, E.SUB, E.MUL, E.DIV, E.REM, E.MAXIMUM, E.MINIMUM, E.AND, E.OR, E.XOR, E.SHL, E.SHR]


@dataclass
class Suite:
    name: str
    kernel: Callable[[], ir.Kernel]
    args: Callable[[np.random.Generator], list[Any]]
    grid: tuple[int, ...]
    tols: dict[str, tuple[float, float]]


def _inputs(r: np.random.Generator, dt: DType) -> tuple[np.ndarray, np.ndarray]:
    if dt.is_float:
        x = (r.standard_normal(N_OPS) * 3).astype(np.float32)
        y = (r.standard_normal(N_OPS) * 3).astype(np.float32)
        x[:8] = [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 40.0, -40.0]
        y[:8] = [0.0, 1.0, 1.5, 1.5, -2.5, 0.5, 3.0, -3.0]
        if dt is BF16:
            from tilelang.interp import round_bf16

            return round_bf16(x), round_bf16(y)
        return x.astype(dt.np_dtype), y.astype(dt.np_dtype)
    info = np.iinfo(dt.np_dtype)
    x = r.integers(info.min, info.max, size=N_OPS, dtype=dt.np_dtype, endpoint=True)
    y = r.integers(-9 if info.min < 0 else 0, 9, size=N_OPS).astype(dt.np_dtype)
    x[:6] = [info.min, info.min, info.max, 7, 0, 5]
    y[:6] = [0, -1 if info.min < 0 else 1, 0, 0, 3, dt.bits + 5]
    return x, y


def elementwise_suite(dt: DType) -> Suite:
    if dt.is_float:
        ops = [(op, 1) for op in FLOAT_UNARY + POSITIVE_UNARY] + [(op, 2) for op in FLOAT_BINARY + COMPARE]
        ops += [(E.FMA, 3), (E.WHERE, 3)]
    else:
        ops = [(op, 1) for op in INT_UNARY] + [(op, 2) for op in INT_BINARY + COMPARE] + [(E.WHERE, 3)]
    names = [f"o_{op.value}" for op, _ in ops]

    def kernel() -> ir.Kernel:
        b = Builder(f"ew_{dt.value}")
        b.tensor_param("x", dt, 1)
        b.tensor_param("y", dt, 1)
        for (op, _), nm in zip(ops, names):
            out_dt = DType.BOOL if op.is_comparison else dt
            b.tensor_param(nm, out_dt, 1)
        (off,) = (b.mul(b.block_id(0), b.const(TILE, I32)),)
        x = b.load("x", (off,), (TILE,))
        y = b.load("y", (off,), (TILE,))
        for (op, arity), nm in zip(ops, names):
            if op in POSITIVE_UNARY:
                xs: tuple[ir.Value, ...] = (b.add(b.elementwise(E.ABS, x), b.broadcast(b.const(0.5, dt), (TILE,))),)
            elif op is E.WHERE:
                xs = (b.elementwise(E.LT, x, y), x, y)
            elif op is E.FMA:
                xs = (x, y, y)
            else:
                xs = (x, y)[:arity]
            b.store(nm, (off,), b.elementwise(op, *xs))
        return b.finish()

    def args(r: np.random.Generator) -> list[Any]:
        x, y = _inputs(r, dt)
        outs = [np.zeros(N_OPS, np.bool_ if op.is_comparison else dt.np_dtype) for op, _ in ops]
        return [x, y, *outs]

    tols = {nm: tolerance(op.value, dt) if dt.is_float else (0.0, 0.0) for (op, _), nm in zip(ops, names)}
    return Suite(f"elementwise_{dt.value}", kernel, args, (-(-N_OPS // TILE),), tols)


CAST_TARGETS = [DType.I8, DType.U8, DType.I32, DType.U32, DType.I64, F16, BF16, F32, DType.F64, DType.BOOL]


def cast_suite(src: DType) -> Suite:
    targets = [t for t in CAST_TARGETS if t is not src]
    names = [f"c_{t.value}" for t in targets]

    def kernel() -> ir.Kernel:
        b = Builder(f"cast_{src.value}")
        b.tensor_param("x", src, 1)
        for t, nm in zip(targets, names):
            b.tensor_param(nm, t, 1)
        off = b.mul(b.block_id(0), b.const(TILE, I32))
        x = b.load("x", (off,), (TILE,))
        for t, nm in zip(targets, names):
            b.store(nm, (off,), b.cast(x, t))
        return b.finish()

    def args(r: np.random.Generator) -> list[Any]:
        if src.is_float:
            x = (r.standard_normal(N_OPS) * 1e3).astype(np.float32)
            x[:10] = [np.nan, np.inf, -np.inf, 3e9, -3e9, 255.5, -0.7, 1e20, 65519.0, 70000.0]
            with np.errstate(over="ignore", invalid="ignore"):
                x = x.astype(src.np_dtype) if src is not BF16 else x
        else:
            info = np.iinfo(src.np_dtype)
            x = r.integers(info.min, info.max, size=N_OPS, dtype=src.np_dtype, endpoint=True)
            x[:4] = [info.min, info.max, 0, 1]
        return [x, *[np.zeros(N_OPS, t.np_dtype) for t in targets]]

    return Suite(f"cast_{src.value}", kernel, args, (-(-N_OPS // TILE),), {nm: (0.0, 0.0) for nm in names})


def structure_suite() -> Suite:
    """Control flow, scans, reductions of every kind, reshapes that move data,
    3-d permutes and broadcasts, masked and padded loads, bool tensors."""
    R = ir.ReduceOp
    outs = {"r_sum": F32, "r_prod": F32, "r_max": F32, "r_min": F32, "r_argmin": I32, "r_imax": I32,
            "r_isum": I32, "s_cumprod": F32, "s_icumsum": I32, "perm": F32, "bcast": F32, "resh": F32,
            "masked": F32, "w_out": I32, "if_out": F32, "b_out": DType.BOOL}

    def kernel() -> ir.Kernel:
        b = Builder("structure", )
        b.tensor_param("x", F32, 2)
        b.tensor_param("xi", I32, 2)
        for nm, t in outs.items():
            b.tensor_param(nm, t, 1 if nm.startswith("r_") else 2)
        z = b.const(0, I32)
        x = b.load("x", (z, z), (4, 24), padding=b.const(1.0, F32))  # x is 4 x 20: 4 padded columns
        xi = b.load("xi", (z, z), (4, 24))
        for nm, op, v in (("r_sum", R.SUM, x), ("r_prod", R.PROD, x), ("r_max", R.MAX, x), ("r_min", R.MIN, x),
                          ("r_argmin", R.ARGMIN, x), ("r_imax", R.MAX, xi), ("r_isum", R.SUM, xi)):
            b.store(nm, (z,), b.reduce(op, v, 1))
        b.store("s_cumprod", (z, z), b.scan(ir.ScanOp.CUMPROD, x, 1))
        b.store("s_icumsum", (z, z), b.scan(ir.ScanOp.CUMSUM, xi, 0))
        x3 = b.reshape(x, (2, 2, 24))
        b.store("perm", (z, z), b.reshape(b.permute(x3, (2, 0, 1)), (24, 4)))
        col = b.reshape(b.reduce(R.SUM, x, 0), (1, 24))
        b.store("bcast", (z, z), b.broadcast(col, (3, 24)))
        b.store("resh", (z, z), b.reshape(x, (8, 12)))
        m = b.elementwise(E.GT, x, b.broadcast(b.const(0.0, F32), (4, 24)))
        b.store("masked", (z, z), b.load("x", (z, z), (4, 24), mask=m, padding=b.const(-5.0, F32)))
        # while: count doublings of 1 until > 1000 (uniform scalar loop), stored as a tile
        with b.while_([b.const(1, I32), b.const(0, I32)]) as w:
            with w.cond() as (v, _n):
                b.yield_(b.lt(v, b.const(1000, I32)))
            with w.body() as (v, n):
                b.yield_(b.mul(v, b.const(2, I32)), b.add(n, b.const(1, I32)))
        b.store("w_out", (z, z), b.add(xi, b.broadcast(w.results[1], (4, 24))))
        s = b.reduce(R.SUM, b.reduce(R.SUM, x, 1), 0)
        with b.if_(b.lt(s, b.const(0.0, F32)), [ir.Type(F32, (4, 24))]) as i:
            with i.then_():
                b.yield_(b.elementwise(E.NEG, x))
            with i.else_():
                b.yield_(b.mul(x, x))
        b.store("if_out", (z, z), i.results[0])
        b.store("b_out", (z, z), m)
        return b.finish()

    def args(r: np.random.Generator) -> list[Any]:
        x = r.standard_normal((4, 20)).astype(np.float32)
        x[1, 3] = x[1, 7] = -9.0  # a tie for argmin: the first index wins
        xi = r.integers(-100, 100, size=(4, 20)).astype(np.int32)
        shapes = {"perm": (24, 4), "bcast": (3, 24), "resh": (8, 12)}
        res = [x, xi]
        for nm, t in outs.items():
            shape = (4,) if nm.startswith("r_") else shapes.get(nm, (4, 24))
            res.append(np.zeros(shape, t.np_dtype))
        return res

    tols = {nm: (1e-5, 1e-5) for nm in outs}
    return Suite("structure", kernel, args, (1,), tols)


SUITES: list[Suite] = [
    *(elementwise_suite(dt) for dt in (F32, F16, BF16, DType.F64, I32, DType.I8, DType.U32, DType.I64)),
    *(cast_suite(dt) for dt in (F32, F16, DType.F64, I32, DType.U8, DType.I64)),
    structure_suite(),
]


# ---------------------------------------------------------------- random kernels
@dataclass(frozen=True)
class RandomSpec:
    """A random kernel: load a tile (partial at the edges), then a reduction
    broadcast back, a scan and a permute, each stored to its own output."""

    dtype: DType
    tile: tuple[int, ...]
    cut: tuple[int, ...]  # tensor dim d = tile[d] * 2 - cut[d] (so edges are partial)
    red: ir.ReduceOp
    axis: int
    perm: tuple[int, ...]
    warps: int


def random_suite(spec: RandomSpec) -> Suite:
    dt, tile, r = spec.dtype, spec.tile, len(spec.tile)
    dims = tuple(max(1, t * 2 - c) for t, c in zip(tile, spec.cut))
    grid = tuple(-(-d // t) for d, t in zip(dims, tile))
    pdims = tuple(dims[p] for p in spec.perm)

    def kernel() -> ir.Kernel:
        b = Builder("rand")
        b.tensor_param("x", dt, r)
        for nm in ("o_red", "o_scan", "o_perm"):
            b.tensor_param(nm, dt, r)
        offs = tuple(b.mul(b.block_id(d), b.const(t, I32)) for d, t in enumerate(tile))
        x = b.load("x", offs, tile)
        red = b.reduce(spec.red, x, spec.axis)
        if red.dtype is not dt:
            red = b.cast(red, dt)
        kept = tile[: spec.axis] + (1,) + tile[spec.axis + 1:]
        b.store("o_red", offs, b.add(x, b.broadcast(b.reshape(red, kept), tile)))
        b.store("o_scan", offs, b.scan(ir.ScanOp.CUMSUM, x, spec.axis))
        b.store("o_perm", tuple(offs[p] for p in spec.perm), b.permute(x, spec.perm))
        k = b.finish(grid_rank=r)
        from dataclasses import replace

        return replace(k, num_warps=spec.warps)

    def args(rng: np.random.Generator) -> list[Any]:
        if dt.is_int:
            x = rng.integers(-20, 20, size=dims).astype(dt.np_dtype)
        elif spec.red is ir.ReduceOp.PROD:
            x = rng.uniform(0.8, 1.25, size=dims).astype(dt.np_dtype)
        else:
            x = rng.standard_normal(dims).astype(dt.np_dtype)
        return [x, np.zeros(dims, dt.np_dtype), np.zeros(dims, dt.np_dtype), np.zeros(pdims, dt.np_dtype)]

    tol = (0.0, 0.0) if dt.is_int else ((2e-2, 2e-2) if dt is F16 else (1e-4, 1e-4))
    return Suite(f"rand_{dt.value}_{'x'.join(map(str, tile))}_{spec.red.value}{spec.axis}_w{spec.warps}",
                 kernel, args, grid, {"o_red": tol, "o_scan": tol, "o_perm": (0.0, 0.0)})


def random_specs():  # type: ignore[no-untyped-def]
    """A hypothesis strategy of `RandomSpec`s (hypothesis imported lazily)."""
    from hypothesis import strategies as st

    sizes = st.sampled_from([1, 2, 3, 4, 5, 8, 12, 16, 32, 64])

    @st.composite
    def spec(draw):  # type: ignore[no-untyped-def]
        rank = draw(st.integers(1, 3))
        tile = tuple(draw(st.lists(sizes, min_size=rank, max_size=rank)))
        if int(np.prod(tile)) > 4096:
            tile = tuple(min(t, 16) for t in tile)
        cut = tuple(draw(st.integers(0, t)) for t in tile)
        dt = draw(st.sampled_from([F32, I32, F16]))
        ops = [ir.ReduceOp.SUM, ir.ReduceOp.MAX, ir.ReduceOp.MIN, ir.ReduceOp.ARGMAX, ir.ReduceOp.ARGMIN]
        if dt is F32:
            ops.append(ir.ReduceOp.PROD)
        red = draw(st.sampled_from(ops))
        axis = draw(st.integers(0, rank - 1))
        perm = tuple(draw(st.permutations(list(range(rank)))))
        warps = draw(st.sampled_from([1, 2, 4, 8]))
        return RandomSpec(dt, tile, cut, red, axis, perm, warps)

    return spec()
