"""`ir/lower/ranges.py` against the interpreter's arithmetic (hrev17): random
integer expressions over a scalar parameter, `block_id` (a grid of random
size), a tensor dimension, a `for` variable and constants, through `+ - * / %
min max & >> where`, casts and `if a < b { a } else { b }`; every value each
op computes, at random inputs and at the inputs' extremes, must lie within
the bounds `Ranges.of` gives it (the tile index guard skips the test where
they keep `index * tile` inside `i32`: a bound narrower than the truth would
let a product wrap)."""

from __future__ import annotations

import random

import numpy as np

from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder
from tilelang.ir.lower.ranges import DIM_MAX, Grid, Ranges

I32, I64, U32 = DType.I32, DType.I64, DType.U32
E = ir.ElemOp
_CONSTS = [0, 1, 2, 3, 7, 8, 64, 1000, 65535, 1 << 20, (1 << 31) - 1, -1, -8, -(1 << 31), 33554431]
_OPS = [E.ADD, E.SUB, E.MUL, E.DIV, E.REM, E.MINIMUM, E.MAXIMUM, E.AND, E.SHR]


def _expr(seed: int):  # type: ignore[no-untyped-def]
    """A random kernel body: (ranges, leaves: value id -> its possible values, the body's ops in order)."""
    rnd = random.Random(seed)
    b = Builder("k", cse=False)
    grid = rnd.choice([1, 2, 1000, DIM_MAX // 128 + 1, DIM_MAX])
    r = Ranges(b)
    r.grid = Grid([grid, 1, 1])
    n = b.scalar_param("n", I32)
    pool = [n, b.block_id(0), b.tensor_dim("x", 0)]
    leaves = {n.id: (-(1 << 31), (1 << 31) - 1), pool[1].id: (0, grid - 1), pool[2].id: (0, DIM_MAX)}
    for _ in range(rnd.randint(2, 8)):
        kind = rnd.random()
        a, c = rnd.choice(pool), rnd.choice(pool + [b.const(rnd.choice(_CONSTS), I32)])
        if kind < 0.65:
            op = rnd.choice(_OPS)
            if op in (E.DIV, E.REM, E.SHR) and rnd.random() < 0.7:
                c = b.const(rnd.choice([1, 2, 3, 8, 64, 31, 32]), I32)
            v = b.elementwise(op, a, c)
        elif kind < 0.75:
            v = b.cast(b.cast(a, I64), I32) if rnd.random() < 0.5 else b.cast(b.cast(a, U32), I32)
        elif kind < 0.85:  # `if a < c { a } else { c }` (or its max, or either branch)
            lt = b.elementwise(rnd.choice([E.LT, E.GT, E.LE, E.GE]), a, c)
            with b.if_(lt, [ir.Type(I32)]) as ib:
                first, second = (a, c) if rnd.random() < 0.5 else (c, a)
                with ib.then_():
                    b.yield_(first)
                with ib.else_():
                    b.yield_(second)
            v = ib.results[0]
        elif kind < 0.92:
            v = b.elementwise(E.WHERE, b.elementwise(E.LT, a, c), a, c)
        else:  # a `for` variable over [a, c)
            with b.for_(a, c, b.const(1, I32)) as loop:
                v = loop.args[0]
                b.yield_()
        pool.append(v)
    return r, leaves, list(b._frames[0].ops)


def _eval(order: list[object], env: dict[int, np.ndarray], rnd: random.Random) -> bool:
    """Evaluate `order` in `env` as the interpreter does; False where a loop would not run."""
    for op in order:
        if isinstance(op, ir.For):
            a, c = int(env[op.lower.id]), int(env[op.upper.id])
            if a >= c:
                return False
            pick = rnd.randint(a, c - 1) if rnd.random() < 0.6 else rnd.choice([a, c - 1])
            env[op.body.args[0].id] = np.asarray(pick, np.int32)
        elif isinstance(op, ir.Const):
            env[op.result.id] = np.asarray(op.value, np.int32)
        elif isinstance(op, ir.Cast):
            env[op.result.id] = num.cast(env[op.x.id], op.x.dtype, op.result.dtype)
        elif isinstance(op, ir.Elementwise):
            env[op.result.id] = num.elementwise(op.op, [env[x.id] for x in op.operands], op.operand_dtype)
        elif isinstance(op, ir.If):
            branch = op.then if bool(env[op.cond.id]) else op.else_
            env[op.results[0].id] = env[branch.ops[-1].values[0].id]
    return True


def test_every_value_lies_in_its_bounds() -> None:
    checked = 0
    for seed in range(400):
        r, leaves, order = _expr(seed)
        rnd = random.Random(seed + 10_000)
        for trial in range(24):
            env = {}
            for vid, (lo, hi) in leaves.items():
                pick = rnd.choice([lo, hi, rnd.randint(lo, hi), rnd.randint(max(lo, -70), min(hi, 70))])
                env[vid] = np.asarray(pick, np.int32)
            if not _eval(order, env, rnd):
                continue
            for op in order:
                vals = [op.body.args[0]] if isinstance(op, ir.For) else list(ir.op_results(op))
                for v in vals:
                    got = r.of(v)
                    if got is None:
                        continue
                    if v.id not in env:
                        continue  # (a bool: not an index)
                    x = int(env[v.id])
                    assert got[0] <= x <= got[1], (seed, trial, op, x, got)
                    checked += 1
    assert checked > 5000
