"""A differential search for GPU layout/codegen bugs (huser9, 2026-12-05): short
random kernels over tiles with odd and prime extents (1, 3, 5, 7, 9, 17, 33,
65) mixed in one kernel -- reductions on each axis feeding back as row/column
statistics, scans, transposes, reshapes, broadcasts, `where` masks, casts
(f32/f16/bf16/i32), `mma` -- run on the interpreter and through the GPU code
generator in the NVPTX simulator (tests/backend/llsim) at sm_90a and sm_80;
every tensor must agree.

The inputs are small integers, so almost every value is exact on both engines
in any order of additions (sums, products, `mma` of integers below 2^24, f16
below 2048, bf16 below 256, clamped where they would grow past); such a
value must agree bit for bit, and only the outputs of the approximate math
(`sigmoid`, `tanh`, `exp`) get a tolerance. A comparison, `argmax` or cast to
an integer reads only exact values, so a tie or a rounding cannot flip it.

    python benchmarks/layout_diff.py SEED0 SEED1 [--arch sm_90a,sm_80] [--show]

prints one line per disagreement (seed, arch, tensor, how) and the source of
each disagreeing program under /tmp/layout_diff/ (`--show`: on stdout too).
Not a test (a few hundred seeds take tens of minutes on one core); a
disagreement it found is minimised into tests/user (test_user_programs9.py).
"""

from __future__ import annotations

import argparse
import io
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

import numpy as np  # noqa: E402

EXTENTS = (1, 3, 5, 7, 9, 17, 33, 65, 127)
POW2 = (2, 4, 8, 16, 32, 64)  # next to the odd ones: the layouts with vectors that odd extents inherit
LIMIT = {"f32": 1 << 20, "i32": 1 << 20, "f16": 1024, "bf16": 128, "f64": 1 << 20, "i8": 64, "u8": 64,
         "i16": 4096, "i64": 1 << 20, "u32": 1 << 20}
INTS = {"i8": 127, "u8": 255, "i16": 32767, "i32": 2**31 - 1, "i64": 2**63 - 1, "u32": 2**32 - 1}  # their largest
UNSIGNED = ("u8", "u32")
FLOATS = ("f32", "f16", "bf16", "f64")
DTYPES = ("f32", "f32", "f32", "f16", "bf16", "i32", "i32", "f64", "i8", "u8", "i16", "i64", "u32")


@dataclass
class V:
    """A kernel value: its expression (a `let` name), shape, element type, a
    bound on |value|, and whether it is exact (integers throughout)."""

    name: str
    shape: tuple[int, ...]
    dt: str
    bound: float
    exact: bool


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.lines: list[str] = []
        self.vals: list[V] = []
        self.n = 0
        self.loops = 0
        self.inputs: list[tuple[str, str, tuple[int, int]]] = []
        self.used: set[str] = set()

    def let(self, expr: str, shape: tuple[int, ...], dt: str, bound: float, exact: bool) -> V:
        self.n += 1
        v = V(f"v{self.n}", shape, dt, min(bound, INTS.get(dt, bound)), exact)
        self.used |= set(re.findall(r"\bv\d+\b", expr))
        self.lines.append(f"    let {v.name} = {expr};")
        self.vals.append(v)
        return v

    def pick(self, pred=lambda v: True) -> V | None:  # type: ignore[no-untyped-def]
        c = [v for v in self.vals if pred(v)]
        if not c:
            return None
        # later values more often: longer chains
        return c[min(len(c) - 1, int(len(c) * (1 - self.r.random() ** 2)))]

    def clamp(self, v: V, k: float) -> V:
        if v.bound <= k:
            return v
        lit = _lit(k, v.dt)
        lo = _lit(0, v.dt) if v.dt in UNSIGNED else f"-{lit}"
        return self.let(f"minimum(maximum({v.name}, {lo}), {lit})", v.shape, v.dt, k, v.exact)

    def fit(self, v: V, dt: str | None = None) -> V:
        if (dt or v.dt) in INTS:
            return v  # integers wrap alike on both engines: exact at any size
        return self.clamp(v, LIMIT[dt or v.dt] // 2 if v.exact else 1e4)

    # --- operations -------------------------------------------------------------------------------------------
    def binary(self) -> None:
        a = self.pick(lambda v: v.dt != "bool")
        if a is None:
            return
        shapes = [a.shape]
        if len(a.shape) == 2:
            shapes += [(a.shape[0], 1), (1, a.shape[1])]
        want = self.r.choice(shapes)
        b = self.pick(lambda v: v.dt == a.dt and v.shape == want and v is not a) or self.pick(
            lambda v: v.dt == a.dt and v.shape == a.shape)
        if b is None:
            return
        if self.r.random() < 0.5:
            a, b = b, a
        op = self.r.choice(["+", "*", "maximum", "minimum"] + ([] if a.dt in UNSIGNED else ["-"]))
        shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape, strict=True))
        if op == "*":
            a, b = self.fit(self.clamp(a, 30)), self.fit(self.clamp(b, 30))
            bound = a.bound * b.bound
        elif op in "+-":
            a, b = self.fit(a), self.fit(b)
            bound = a.bound + b.bound
        else:
            bound = max(a.bound, b.bound)
        expr = f"{op}({a.name}, {b.name})" if op in ("maximum", "minimum") else f"{a.name} {op} {b.name}"
        self.let(expr, shape, a.dt, bound, a.exact and b.exact)

    def scalar(self) -> None:
        a = self.pick(lambda v: v.dt != "bool")
        if a is None:
            return
        k = self.r.choice([2, 3, 5] + ([] if a.dt in UNSIGNED else [-1]))
        a = self.fit(self.clamp(a, 100))
        self.let(f"{a.name} * {_lit(k, a.dt)} + {_lit(1, a.dt)}", a.shape, a.dt, a.bound * abs(k) + 1, a.exact)

    def reduce(self) -> None:
        a = self.pick(lambda v: v.dt != "bool" and len(v.shape) >= 1)
        if a is None:
            return
        ax = self.r.randrange(len(a.shape))
        ops = ["sum", "max", "min", "prod"] + (["argmax", "argmin"] if a.exact else [])
        op = self.r.choice(ops)
        n = a.shape[ax]
        if op == "sum":
            a = self.fit(a)
            if a.bound * n > LIMIT[a.dt if a.dt != "f16" else "f32"] * 4:
                a = self.clamp(a, max(1, LIMIT[a.dt] // (4 * n)))
            bound = a.bound * n
        elif op == "prod":
            a = self.clamp(a, 2 if n <= 17 else 1)
            bound = a.bound ** n
            if a.dt == "bf16" and bound > 128 or a.dt == "f16" and bound > 1024:
                a = self.clamp(a, 1)
                bound = 1
        else:
            bound = a.bound if op in ("max", "min") else n
        dt = "i32" if op.startswith("arg") else a.dt
        rest = tuple(d for i, d in enumerate(a.shape) if i != ax)
        if not rest:
            rest = ()
        if not rest:
            return
        r = self.let(f"{a.name}.{op}({ax})", rest, dt, bound, a.exact or op.startswith("arg"))
        # a statistic fed back: [R, 1] / [1, C], combined with a tile of the original shape
        if len(a.shape) == 2 and self.r.random() < 0.7:
            back = (a.shape[0], 1) if ax == 1 else (1, a.shape[1])
            rb = self.let(f"{r.name}.reshape([{back[0]}, {back[1]}])", back, dt, r.bound, r.exact)
            # with a tile of the original shape, or of another width (height) sharing the kept dim
            other = self.pick(lambda v: len(v.shape) == 2 and v.dt == dt and (
                v.shape[0] == a.shape[0] if ax == 1 else v.shape[1] == a.shape[1]))
            if other is not None:
                rb, other = self.fit(rb), self.fit(other)
                op2 = self.r.choice(["-", "+", "maximum"])
                expr = f"maximum({other.name}, {rb.name})" if op2 == "maximum" else f"{other.name} {op2} {rb.name}"
                self.let(expr, other.shape, dt, other.bound + rb.bound, other.exact and rb.exact)

    def scan(self) -> None:
        a = self.pick(lambda v: v.dt != "bool" and len(v.shape) in (1, 2, 3))
        if a is None:
            return
        ax = self.r.randrange(len(a.shape))
        n = a.shape[ax]
        a = self.clamp(self.fit(a), max(1, LIMIT[a.dt] // (4 * n)))
        self.let(f"cumsum({a.name}, {ax})", a.shape, a.dt, a.bound * n, a.exact)

    def transpose(self) -> None:
        a = self.pick(lambda v: len(v.shape) == 2)
        if a is None:
            return
        self.let(f"{a.name}.transpose()", a.shape[::-1], a.dt, a.bound, a.exact)

    def reshape(self) -> None:
        a = self.pick(lambda v: len(v.shape) in (1, 2, 3))
        if a is None:
            return
        n = int(np.prod(a.shape))
        opts = [(n,), (1, n)] + ([(n, 1)] if n <= 1024 else [])
        if len(a.shape) == 2:
            opts.append(a.shape[::-1])
            r0, c0 = a.shape
            for f in range(2, 17):
                if c0 % f == 0 and c0 != f:
                    opts += [(r0, f, c0 // f)] * 2
                if r0 % f == 0 and r0 != f:
                    opts += [(f, r0 // f * c0), (f, r0 // f, c0)]
        if len(a.shape) == 3:
            opts.append((a.shape[0], a.shape[1] * a.shape[2]))
            opts.append((a.shape[0] * a.shape[1], a.shape[2]))
        s = self.r.choice(opts)
        if s == a.shape:
            return
        self.let(f"{a.name}.reshape([{', '.join(map(str, s))}])", s, a.dt, a.bound, a.exact)

    def permute(self) -> None:
        a = self.pick(lambda v: len(v.shape) == 3)
        if a is None:
            return
        p = self.r.choice([(0, 2, 1), (1, 0, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
        self.let(f"{a.name}.permute([{', '.join(map(str, p))}])", tuple(a.shape[i] for i in p), a.dt, a.bound,
                 a.exact)

    def broadcast(self) -> None:
        a = self.pick(lambda v: len(v.shape) == 2 and 1 in v.shape and v.shape != (1, 1))
        if a is None:
            return
        other = self.pick(lambda v: len(v.shape) == 2 and (
            (a.shape[0] == 1 and v.shape[1] == a.shape[1]) or (a.shape[1] == 1 and v.shape[0] == a.shape[0])))
        if other is None:
            return
        s = (max(a.shape[0], other.shape[0]), max(a.shape[1], other.shape[1]))
        self.let(f"{a.name}.broadcast([{s[0]}, {s[1]}])", s, a.dt, a.bound, a.exact)

    def where(self) -> None:
        c = self.pick(lambda v: v.exact and v.dt != "bool")
        if c is None:
            return
        x = self.pick(lambda v: v.shape == c.shape and v.dt != "bool")
        if x is None:
            return
        y = self.pick(lambda v: v.dt == x.dt and v.shape == c.shape and v is not x)
        ys = y.name if y is not None else _lit(0, x.dt)
        cmp = self.r.choice([">", "<", "==", ">=", "!="])
        if len(c.shape) == 2 and self.r.random() < 0.3:  # a row (column) mask selecting whole rows
            d = self.pick(lambda v: v.exact and v.dt != "bool" and v.shape in ((c.shape[0], 1), (1, c.shape[1])))
            if d is not None:
                m = self.let(f"{d.name} {cmp} {_lit(0, d.dt)}", d.shape, "bool", 1, True)
                self.let(f"where({m.name}, {x.name}, {y.name if y is not None else _lit(0, x.dt)})", c.shape,
                         x.dt, max(x.bound, y.bound if y else 0), x.exact and (y.exact if y else True))
                return
        k = self.r.choice([0, 1] + ([2] if c.dt in UNSIGNED else [-2]))
        m = self.let(f"{c.name} {cmp} {_lit(k, c.dt)}", c.shape, "bool", 1, True)
        self.let(f"where({m.name}, {x.name}, {ys})", c.shape, x.dt, max(x.bound, y.bound if y else 0),
                 x.exact and (y.exact if y else True))

    def cast(self) -> None:
        a = self.pick()
        if a is None:
            return
        if a.dt == "bool":
            self.let(f"{a.name} as i32", a.shape, "i32", 1, True)
            return
        to = self.r.choice([t for t in DTYPES if t != a.dt])
        if to in INTS and not a.exact:
            return
        if a.dt in UNSIGNED or to in UNSIGNED or to in INTS and a.dt in INTS and INTS[to] < INTS[a.dt]:
            pass  # int to int wraps, float to int saturates: alike on both engines
        a = self.clamp(a, LIMIT[to] // 2) if a.exact and (to in FLOATS) else a if a.exact else self.clamp(a, 1e4)
        self.let(f"{a.name} as {to}", a.shape, to, a.bound, a.exact)

    def math(self) -> None:
        a = self.pick(lambda v: v.dt in FLOATS)
        if a is None:
            return
        f = self.r.choice(["sigmoid", "tanh", "exp", "abs", "sqrt"])
        if f == "exp":
            a = self.clamp(a, 4)
            self.let(f"exp({a.name})", a.shape, a.dt, 60, False)
        elif f == "abs":
            self.let(f"abs({a.name})", a.shape, a.dt, a.bound, a.exact)
        elif f == "sqrt":
            self.let(f"sqrt(abs({a.name}))", a.shape, a.dt, a.bound ** 0.5 + 1, False)
        else:
            self.let(f"{f}({a.name})", a.shape, a.dt, 1, False)

    def mma(self) -> None:
        a = self.pick(lambda v: len(v.shape) == 2 and v.dt in ("f32", "f16", "bf16"))
        if a is None:
            return
        m, k = a.shape
        b = self.pick(lambda v: v.dt == a.dt and len(v.shape) == 2 and k in v.shape)
        if b is None:
            return
        if b.shape[0] != k:
            b = self.let(f"{b.name}.transpose()", b.shape[::-1], b.dt, b.bound, b.exact)
        n = b.shape[1]
        p2 = [1 << (x - 1).bit_length() for x in (m, n, k)]
        if p2[0] * p2[1] * p2[2] > 16384 or m * n > 4096:  # (simulated: a padded 64x64x64 f32 `mma` takes minutes)
            return
        lim = 16 if a.dt == "bf16" else 30
        a, b = self.clamp(a, lim), self.clamp(b, lim)
        acc_dt = "f32"
        acc = self.pick(lambda v: v.dt == "f32" and v.shape == (m, n))
        use = acc is not None and self.r.random() < 0.6
        accs = self.clamp(acc, 1 << 12).name if use else f"zeros::<f32>([{m}, {n}])"
        acc_exact = acc.exact if use else True
        f = self.r.choice(["mma", "dot"])
        expr = f"mma({a.name}, {b.name}, {accs})" if f == "mma" else f"dot({a.name}, {b.name})"
        self.let(expr, (m, n), acc_dt, a.bound * b.bound * k + (1 << 12), a.exact and b.exact and acc_exact)

    def walk(self) -> None:
        """A row (column) statistic over a whole input, walking its tiles (edges masked)."""
        if not self.inputs:
            return
        name, dt, (R, C) = self.r.choice(self.inputs)
        if dt != "f32" and dt != "i32":
            return
        self.loops += 1
        ax = self.r.choice([0, 1])
        op = self.r.choice(["sum", "max", "min"])
        acc = f"w{self.loops}"
        shape = (R, 1) if ax == 1 else (1, C)
        init = {"sum": 0, "max": -1000, "min": 1000}[op]
        pad = self.r.choice([None, init])
        load = (f"{name}.partition([{R}, {C}]).load([block_id(0), j])" if ax == 1 else
                f"{name}.partition([{R}, {C}]).load([j, 0])") if pad is None else \
            (f"{name}.partition([{R}, {C}]).load_padded([block_id(0), j], {_lit(pad, dt)})" if ax == 1 else
             f"{name}.partition([{R}, {C}]).load_padded([j, 0], {_lit(pad, dt)})")
        comb = {"sum": f"{acc} + t", "max": f"maximum({acc}, t)", "min": f"minimum({acc}, t)"}[op]
        self.lines.append(f"    let mut {acc} = full::<{dt}>([{shape[0]}, {shape[1]}], {_lit(init, dt)});")
        self.lines.append(f"    for j in 0..{name}.partition([{R}, {C}]).num_tiles({ax}) {{")
        self.lines.append(f"        let t = {load}.{op}({ax}).reshape([{shape[0]}, {shape[1]}]);")
        self.lines.append(f"        {acc} = {comb};")
        self.lines.append("    }")
        self.let(acc, shape, dt, 1 << 14, True)

    def scalar_stat(self) -> None:
        """A whole 1-D value reduced to a scalar, broadcast back into a tile (or a [1] tile)."""
        a = self.pick(lambda v: len(v.shape) == 1 and v.dt != "bool")
        if a is None:
            return
        op = self.r.choice(["sum", "max", "min"] + (["argmax", "argmin"] if a.exact else []))
        if op == "sum":
            a = self.clamp(self.fit(a), max(1, LIMIT[a.dt] // (4 * a.shape[0])))
        dt = "i32" if op.startswith("arg") else a.dt
        bound = a.bound * a.shape[0] if op == "sum" else a.bound if op in ("max", "min") else a.shape[0]
        self.lines.append(f"    let s{self.n} = {a.name}.{op}(0);")
        s_name = f"s{self.n}"
        w = self.pick(lambda v: v.dt == dt and len(v.shape) >= 1)
        if w is not None and self.r.random() < 0.7:
            w = self.fit(w)
            self.let(f"{w.name} - {s_name}", w.shape, dt, w.bound + bound, w.exact and a.exact)
        else:
            self.let(f"full::<{dt}>([1], {s_name})", (1,), dt, bound, a.exact)

    def intops(self) -> None:
        a = self.pick(lambda v: v.dt in INTS)
        if a is None:
            return
        op = self.r.choice(["%", "&", ">>", "/", "^", "|"])
        k = self.r.choice([3, 4, 7])
        k = 1 if op == ">>" and k == 7 else k
        self.let(f"{a.name} {op} {k}", a.shape, a.dt, a.bound + 8, a.exact)

    def _same_shape_other(self, a: V) -> str | None:
        """An expression of `a`'s shape and type from another value: itself, a transpose, a row or column
        statistic broadcast, or a reshape."""
        opts = []
        for v in self.vals:
            if v is a or v.dt != a.dt or not v.exact and a.exact:
                continue
            if v.shape == a.shape:
                opts.append(v.name)
            elif len(v.shape) == 2 and v.shape[::-1] == a.shape:
                opts.append(f"{v.name}.transpose()")
            elif len(a.shape) == 2 and v.shape in ((a.shape[0], 1), (1, a.shape[1])):
                opts.append(f"{v.name}.broadcast([{', '.join(map(str, a.shape))}])")
            elif v.shape == (a.shape[0],) and len(a.shape) == 2:
                opts.append(f"{v.name}.reshape([{a.shape[0]}, 1]).broadcast([{a.shape[0]}, {a.shape[1]}])")
            elif int(np.prod(v.shape)) == int(np.prod(a.shape)) and v.dt == a.dt:
                opts.append(f"{v.name}.reshape([{', '.join(map(str, a.shape))}])")
        return self.r.choice(opts) if opts else None

    def carried(self) -> None:
        """A tile carried around a loop, its start and its updates in different layouts."""
        a = self.pick(lambda v: v.dt not in ("bool",) and len(v.shape) in (1, 2))
        if a is None:
            return
        b = self._same_shape_other(a)
        if b is None:
            return
        self.loops += 1
        acc, k = f"c{self.loops}", 8 if a.dt in ("bf16", "i8", "u8") else 64
        lo = _lit(0, a.dt) if a.dt in UNSIGNED else f"-{_lit(k, a.dt)}"
        a0 = self.clamp(a, k)
        self.lines.append(f"    let mut {acc} = {a0.name};")
        self.lines.append(f"    for j in 0..{self.r.choice([1, 2, 3])} {{")
        upd = self.r.choice([f"{acc} + {b}", f"maximum({acc}, {b})", f"{b} - {acc}" if a.dt not in UNSIGNED
                             else f"{b} + {acc}"])
        if len(a.shape) == 2 and self.r.random() < 0.5:
            ax = self.r.choice([0, 1])
            st = (a.shape[0], 1) if ax == 1 else (1, a.shape[1])
            upd = f"({upd}) - ({acc}.{self.r.choice(['max', 'min'])}({ax}).reshape([{st[0]}, {st[1]}]))" \
                if a.dt not in UNSIGNED else upd
        self.lines.append(f"        {acc} = minimum(maximum({upd}, {lo}), {_lit(k, a.dt)});")
        self.lines.append("    }")
        self.let(acc, a.shape, a.dt, k, a.exact)

    def branch(self) -> None:
        """A value chosen by `if` from two values made in different layouts."""
        a = self.pick(lambda v: v.dt != "bool")
        if a is None:
            return
        b = self._same_shape_other(a)
        if b is None:
            return
        cond = self.r.choice(["block_id(0) == 0", "block_id(0) > 0", "num_blocks(0) > 1"])
        self.let(f"if {cond} {{ {a.name} }} else {{ {b} }}", a.shape, a.dt, a.bound * 4 + 1024, a.exact)

    OPS = (("carried", 2), ("branch", 1), ("scalar_stat", 1), ("intops", 1), ("walk", 1), ("binary", 5), ("reduce", 5), ("scan", 1),
           ("transpose", 2), ("reshape", 2), ("permute", 1), ("broadcast", 1), ("where", 2), ("cast", 2), ("math", 1), ("mma", 2), ("scalar", 1))


def _lit(k: float, dt: str) -> str:
    if dt in INTS:
        return str(int(k)) if dt in ("i32",) else f"({int(k)} as {dt})"
    s = repr(float(k))
    return s if dt == "f32" else f"({s} as {dt})" if dt in ("f16", "bf16") else s


def program(seed: int) -> tuple[str, dict[str, bool]]:
    """A program (its source) and its output tensors' names, each with whether it must agree exactly."""
    g = Gen(seed)
    r = g.r
    grid = r.choice([1, 1, 2])
    grid2 = r.random() < 0.25  # a 2-D grid: 2 blocks along axis 1 too (every output 2-D)
    n_in = r.choice([1, 2, 2, 3])
    params, host, args = [], [], []
    big = r.random() < 0.25
    ext = (EXTENTS if big else EXTENTS[:-2]) + (POW2 if big else POW2[:-1])
    first = None
    for i in range(n_in):
        if first is not None and r.random() < 0.75:  # shapes sharing a dim (an odd width next to a wider one)
            shape = (first[0], r.choice(ext)) if r.random() < 0.6 else (r.choice(ext), first[1])
        else:
            shape = (r.choice(ext), r.choice(ext))
        while shape[0] * shape[1] > 4096:  # (simulated: a bigger tile takes minutes)
            shape = (shape[0], r.choice(EXTENTS[:5])) if r.random() < 0.5 else (r.choice(EXTENTS[:5]), shape[1])
        first = first or shape
        dt = r.choice(DTYPES)
        rows = grid * shape[0] - (r.randrange(shape[0]) if grid > 1 else 0)
        cols = max(1, shape[1] + r.choice([0, 0, 2, -(shape[1] // 2), 7])) + (shape[1] if grid2 else 0)
        mod = r.choice([5, 7, 11])
        # a static width half the time: the compiler then knows the rows' alignment and picks vectors (the
        # layouts whose chunks round 8's bug straddled: `[?, 8]` next to a width of 5)
        params.append(f"x{i}: &Tensor<{dt}, [?, {cols if r.random() < 0.5 else '?'}]>")
        host.append(f"    let x{i} = (((arange::<i32>({rows * cols}) * {r.choice([7, 13, 29, 37])} + {r.randrange(50)})"
                    f" % {mod} - {0 if dt in UNSIGNED else mod // 2}) as {dt}).reshape([{rows}, {cols}]);")
        args.append(f"&x{i}")
        g.inputs.append((f"x{i}", dt, shape))
        if r.random() < 0.2 and shape[0] > 1:  # a 3-D input: [rows, 2, cols / 2]-ish, read as [R, 2, C2]
            c2 = max(1, shape[1] // 2)
            host[-1] = host[-1].replace(f".reshape([{rows}, {cols}]);", f".reshape([{rows}, 1, {cols}]).broadcast("
                                        f"[{rows}, 2, {cols}]).reshape([{rows}, {2 * cols}]).reshape([{rows}, 2, {cols}]);")
            params[-1] = f"x{i}: &Tensor<{dt}, [?, ?, ?]>"
            g.inputs.pop()
            g.let(f"x{i}.partition([{shape[0]}, 2, {c2}]).load([block_id(0), 0, 0])", (shape[0], 2, c2), dt,
                  mod // 2 + 1, True)
            continue
        at = "[block_id(0), block_id(1)]" if grid2 else "[block_id(0), 0]"
        g.let(f"x{i}.partition([{shape[0]}, {shape[1]}]).load({at})", shape, dt, mod // 2 + 1, True)
    steps = r.randrange(6, 18)
    names = [n for n, w in Gen.OPS for _ in range(w)]
    for _ in range(steps):
        getattr(g, r.choice(names))()
    # outputs: the last value and a few others (not the inputs)
    cands = [v for v in g.vals[n_in:] if v.dt != "bool" and len(v.shape) >= 1]
    if not cands:
        cands = g.vals[:n_in]
    sinks = [v for v in cands[:-1] if v.name not in g.used]  # values nothing else reads: stored, or they are dead
    outs = [cands[-1]] + sinks[::-1][:r.randrange(1, 4)]
    onames = {}
    for j, v in enumerate(outs):
        if grid2 and len(v.shape) != 2:
            n2 = v.shape[0] if len(v.shape) == 1 else v.shape[0]
            s2 = (n2, 1) if len(v.shape) == 1 else (n2, int(np.prod(v.shape[1:])))
            v = g.let(f"{v.name}.reshape([{s2[0]}, {s2[1]}])", s2, v.dt, v.bound, v.exact)
        s = v.shape
        cut = r.randrange(s[0]) if grid > 1 and s[0] > 1 and r.random() < 0.5 else 0
        full_s = (grid * s[0] - cut,) + s[1:]
        if len(s) == 2 and s[1] > 1 and r.random() < 0.2:
            full_s = (full_s[0], s[1] - r.randrange(1, s[1]))
        if len(s) == 2 and r.random() < 0.25:  # the own tile holds two nested tiles, stored one by one
            w = g.pick(lambda u: u.shape == s and u.dt == v.dt and u is not v) or v
            ax = r.choice([0, 1])
            s2 = (s[0] * 2, s[1]) if ax == 0 else (s[0], s[1] * 2)
            full_s = (grid * s2[0] - (cut if ax == 1 else 0), s2[1])
            if grid2:
                full_s = (full_s[0], 2 * s2[1] - (r.randrange(s2[1]) if r.random() < 0.5 else 0))
            params.insert(j, f"o{j}: &mut Tensor<{v.dt}, [{s2[0]}, {s2[1]}]>")
            g.lines.append(f"    let q{j} = o{j}.partition([{s[0]}, {s[1]}]);")
            g.lines.append(f"    q{j}.store({v.name}, [{1 - ax}, {ax}]);")
            g.lines.append(f"    q{j}.store({w.name}, [0, 0]);")
            host.append(f"    let mut o{j} = zeros::<{v.dt}>([{', '.join(map(str, full_s))}]);")
            args.insert(j, f"o{j}.partition([{s2[0]}, {s2[1]}])")
            onames[f"o{j}"] = v.exact and w.exact
            continue
        if grid2:
            full_s = (full_s[0], 2 * s[1] - (r.randrange(s[1]) if r.random() < 0.5 else 0))
        params.insert(j, f"o{j}: &mut Tensor<{v.dt}, [{', '.join(map(str, s))}]>")
        g.lines.append(f"    o{j}.store({v.name});")
        host.append(f"    let mut o{j} = zeros::<{v.dt}>([{', '.join(map(str, full_s))}]);")
        args.insert(j, f"o{j}.partition([{', '.join(map(str, s))}])")
        onames[f"o{j}"] = v.exact
    hint = r.choice(["", "", "#[hints(num_warps = 1)]\n", "#[hints(num_warps = 2)]\n", "#[hints(num_warps = 8)]\n"])
    src = (f"// layout_diff seed {seed}\n#[allow(warnings)]\n{hint}kernel fn k({', '.join(params)}) {{\n"
           + "\n".join(g.lines) + "\n}\n\nfn main() {\n" + "\n".join(host)
           + f"\n    k({', '.join(args)}).sync();\n}}\n")
    return src, onames


def run_one(src: str, arch: str | None, path: Path) -> dict[str, np.ndarray]:
    import tilelang.run as run

    path.write_text(src)
    if arch is None or arch == "gpu":  # the interpreter, or a real GPU (benchmarks/huser9_device.sh)
        ex = run.execute(str(path), arch or "cpu", out=io.StringIO())
        if arch == "gpu":
            assert ex.device.kind == "gpu", "no GPU"
    else:
        from llsim import sim_runtime_device

        old = run.make_device
        run.make_device = lambda choice, out: sim_runtime_device(arch, lambda s: None)  # type: ignore[assignment]
        try:
            ex = run.execute(str(path), "cpu", out=io.StringIO())
        finally:
            run.make_device = old  # type: ignore[assignment]
    return tensors(ex)


def tensors(ex) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    return {k: np.asarray(v.numpy()).copy() for k, v in ex.main_locals.items() if hasattr(v, "numpy")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("seed0", type=int)
    ap.add_argument("seed1", type=int)
    ap.add_argument("--arch", default="sm_90a,sm_80")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--out", default="/tmp/layout_diff", help="where the programs are written")
    ap.add_argument("--budget", type=float, default=0.0, help="seconds after which no new seed starts (0: none)")
    a = ap.parse_args()
    if any(x.startswith("sm_") for x in a.arch.split(",")):
        import llsim

        llsim.UNDEF_FLOAT = "nan"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    bad = ran = 0
    start = time.monotonic()
    for seed in range(a.seed0, a.seed1):
        if a.budget and time.monotonic() - start > a.budget:
            break
        ran += 1
        src, onames = program(seed)
        p = out / f"s{seed}.tile"
        try:
            want = run_one(src, None, p)
        except Exception as e:  # noqa: BLE001
            print(f"seed {seed}: interpreter: {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
            bad += 1
            continue
        for arch in a.arch.split(","):
            try:
                got = run_one(src, arch, p)
            except Exception as e:  # noqa: BLE001
                print(f"seed {seed} {arch}: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                      flush=True)
                if a.show:
                    traceback.print_exc()
                bad += 1
                continue
            for k, must in onames.items():
                w, gt = want[k], got[k]
                if w.dtype.kind in "iub" or must:
                    ok = np.array_equal(w, gt, equal_nan=w.dtype.kind == "f")
                else:
                    w64, g64 = w.astype(np.float64), gt.astype(np.float64)
                    scale = np.nanmax(np.abs(w64)) if w64.size and np.isfinite(w64).any() else 1.0
                    ok = np.allclose(g64, w64, rtol=2e-2, atol=2e-2 * max(scale, 1.0), equal_nan=True)
                    exact = np.array_equal(g64, w64, equal_nan=True)
                    if ok and not exact and a.show:
                        print(f"seed {seed} {arch} {k}: within tolerance, not exact "
                              f"(max diff {np.nanmax(np.abs(g64 - w64)):.3g})")
                if not ok:
                    bad += 1
                    diff = np.argwhere(~np.isclose(gt.astype(np.float64), w.astype(np.float64), rtol=2e-2,
                                                   atol=1e-6, equal_nan=True))
                    print(f"seed {seed} {arch} {k}: DISAGREE at {len(diff)} of {w.size}, first {diff[:3].tolist()}"
                          f" -> {p}", flush=True)
                    if a.show:
                        print(src)
    print(f"layout_diff {a.arch} seeds {a.seed0}..{a.seed0 + ran}: {ran} programs, {bad} problems "
          f"({time.monotonic() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
