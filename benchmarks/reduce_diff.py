"""A differential search of the GPU reductions against the interpreter (hrev33): seeded random kernels over
what a reduction meets -- sum / max / min / prod / mean / argmax / argmin, axes 0, 1, 2 and all of them
(a chain through keepdim reshapes), rank 2 and 3 tiles with non-power-of-two extents, i32 / f32 / f16 /
bf16 inputs, a reduction of an expression (`a * b`, `where(a > b, a, b)`, `a + b`), a statistic broadcast
back (`e - e.max(1).reshape([R, 1])`, a softmax row normalisation), several reductions of one tile, a
reduction of a transposed tile, of an `mma` result and of a reduction's result (a Slice layout: the staged
path, `codegen/reduce_staged.py`), the rows' partials folded inside a loop over tiles, and loads of a
partition with a ragged edge (masked rows and columns), 1 to 8 warps. Each program runs on the interpreter
and on llsim at sm_90a and sm_80 (tests/backend/llsim: the GPU code generator's PTX, simulated), and every
output must agree.

The inputs are small integers (|x| <= 4; `prod`: -1, 0, 1), so every sum and product is an integer that
f32 holds exactly in any order (f16/bf16 accumulate in f32 and round once, on both engines): those, and
every integer, max/min and arg result, must agree bit for bit, a zero's sign too (ties are common:
`argmax`/`argmin` keep the first index on both). Only the mean (the sum over the extent: kernels have no
`.mean`) and the softmax (`exp`, a division) get a tolerance: 32 units in the last place for f32/f64 (the
GPU's approximations), 4 for f16/bf16, relative to the largest result.

    python benchmarks/reduce_diff.py [--seed S] [--cases N] [--arch sm_90a,sm_80] [--show] [--ptxas] [--nan]
        [--staged [--rounds]] [--xpose] [--big] [--types i8,f64,..] [--forms one,back,..] [--budget S]

prints one line per disagreement (case, arch, output, where) and writes each case's program under
/tmp/reduce_diff/; ends with `reduce_diff ...: N programs, P problems` and how often the newer paths were
taken. CPU only by default (llsim; ~0.3-1 s a case); `--arch gpu` runs against a real card
(benchmarks/hrev33_device.sh, through diff_search_device.sh's `SEED0 SEED1 --budget` form).
`TILEC_REDUCE_STAGED=0` / `TILEC_REDUCE_XPOSE=0` in the environment run the older paths instead.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "backend"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from layout_diff import run_one  # noqa: E402

EXT = (1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 32, 33, 48, 64, 100, 128, 256, 300, 512, 1000, 1024, 2048)
DTYPES = ["f32", "f32", "i32", "i32", "f16", "bf16"]  # `--types a,b`: those instead
WIDE = ("i8", "u8", "i16", "u32", "i64", "f64")  # `--types` may name these too
FORMS = ("one", "one", "several", "all", "back", "back", "loop", "loop", "xpose", "mma", "slice", "slice")
NAN = "--nan" in sys.argv or os.environ.get("REDUCE_DIFF_NAN") == "1"  # NaNs among the floats' values
ONLY: list[str] = []  # `--forms a,b`: only those
MAX_ELEMS = [4096]  # (simulated: a bigger tile takes long; `--big`: 32768)
ULP = {"f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7, "f64": 2.0**-52}


def _shape(r: random.Random, rank: int) -> tuple[int, ...]:
    while True:
        s = tuple(r.choice(EXT) for _ in range(rank))
        if int(np.prod(s)) <= MAX_ELEMS[0] and (rank == 2 or int(np.prod(s)) <= MAX_ELEMS[0] // 2):
            return s


def _res(shape: tuple[int, ...], ax: int) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(shape) if i != ax)


def _keep(shape: tuple[int, ...], ax: int) -> str:
    return "[" + ", ".join("1" if i == ax else str(d) for i, d in enumerate(shape)) + "]"


def _lit(v: int, dt: str) -> str:
    if _is_int(dt):
        return str(v) if dt == "i32" else f"({v} as {dt})"
    return f"{float(v)!r}" if dt == "f32" else f"({float(v)!r} as {dt})" if dt != "f64" else f"({float(v)!r} as f64)"


def _is_int(dt: str) -> bool:
    return dt[0] in "iu"


class Case:
    """One program: the kernel's lines, its `&mut` outputs (name, dtype, tile shape, exact?), and the inputs."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(f"reduce_diff:{seed}")
        self.seed = seed
        self.lines: list[str] = []
        self.outs: list[tuple[str, str, tuple[int, ...], bool]] = []
        self.n = 0
        self.extent: tuple[int, ...] = ()  # the extents the next output's `mean` reads

    def out(self, expr: str, dt: str, shape: tuple[int, ...], exact: bool) -> None:
        if ".mean(" in expr:  # (kernels have no `.mean`: the sum over the extent)
            head, _, ax = expr.rpartition(".mean(")
            expr = f"{head}.sum({ax} / {_lit(self.extent[int(ax[:-1])], dt)}"
        if not shape:  # a scalar: a [1] tile
            expr, shape = f"full::<{dt}>([1], {expr})", (1,)
        name = f"o{len(self.outs)}"
        self.lines.append(f"    {name}.store({expr});")
        self.outs.append((name, dt, shape, exact))

    def let(self, expr: str) -> str:
        self.n += 1
        self.lines.append(f"    let v{self.n} = {expr};")
        return f"v{self.n}"

    def build(self) -> str:
        r = self.r
        w = r.choice([1, 2, 4, 8])
        dt = r.choice(DTYPES)
        form = r.choice(FORMS if not ONLY else [f for f in FORMS if f in ONLY])
        rank = 3 if form in ("one", "several", "all", "slice") and r.random() < 0.35 or form == "slice" else 2
        shape = _shape(r, rank)
        if form == "slice" and r.random() < 0.5:  # a thin leading dim: the [R, C] left has long rows or columns
            shape = (r.choice([1, 2, 3]), *r.choice([(r.choice(EXT[:9]), r.choice(EXT[12:])),
                                                     (r.choice(EXT[12:]), r.choice(EXT[:9]))]))
            shape = shape if shape[0] * shape[1] * shape[2] <= MAX_ELEMS[0] // 2 else (1, *shape[1:])
        self.extent = shape
        grid = r.choice([1, 1, 2, 3])
        ops = ["sum", "sum", "max", "min", "argmax", "argmin", "prod"] + (["mean"] if not _is_int(dt) else [])
        op = r.choice(ops)
        mod = 3 if op == "prod" or form == "mma" else 9
        loop = form == "loop"
        tiles = r.choice([2, 3]) if loop else 1
        # the tensors: `grid` tiles down axis 0 (the last one ragged), `tiles` along the last axis (ragged too)
        rows = grid * shape[0] - (r.randrange(shape[0]) if r.random() < 0.5 else 0)
        last = tiles * shape[-1] - (r.randrange(shape[-1]) if r.random() < 0.5 else 0)
        full = (rows, *shape[1:-1], last) if rank == 3 else (rows, last)
        n_in = 1 if form == "mma" else r.choice([1, 2])
        idx = "[block_id(0), " + ", ".join(["0"] * (rank - 1)) + "]"
        params, host = [], []
        ins = []
        for i in range(n_in):
            params.append(f"x{i}: &Tensor<{dt}, [{', '.join(['?'] * rank)}]>")
            host.append(f"    let x{i} = (((arange::<i32>({int(np.prod(full))}) * {r.choice([7, 13, 29, 37, 1])} + "
                        f"{r.randrange(50)}) % {mod} - {mod // 2}) as {dt}).reshape([{', '.join(map(str, full))}]);")
            ins.append(f"x{i}")
        dims = ", ".join(map(str, shape))
        if not loop:
            for x in ins:
                self.lines.append(f"    let {x}t = {x}.partition([{dims}]).load({idx});")
        a = f"{ins[0]}t"
        b = f"{ins[-1]}t" if n_in > 1 else a
        ex = r.choice(["a", "a", "a * b", "where(a > b, a, b)", "a + b", "maximum(a, b) - b"])
        exact = op != "mean"
        if form == "mma":
            dt16 = "f16" if dt in ("f32", "f16") else "bf16" if dt == "bf16" else None
            if dt16 is None:  # (an integer mma: i8 operands; kept to floats here)
                dt, dt16 = "f32", "f16"
            m, k, n = r.choice([16, 32, 64]), r.choice([16, 32]), r.choice([8, 16, 32, 64])
            shape = (m, n)
            params[0] = f"x0: &Tensor<{dt}, [?, ?]>"
            mrows = grid * m - (r.randrange(m) if r.random() < 0.5 else 0)
            host[0] = (f"    let x0 = (((arange::<i32>({mrows * k}) * 7 + {r.randrange(9)}) % 3 - 1) as {dt})"
                       f".reshape([{mrows}, {k}]);")
            self.lines[:] = [f"    let at = x0.partition([{m}, {k}]).load([block_id(0), 0]) as {dt16};",
                             f"    let bt = ((arange::<i32>({k * n}) % 3 - 1) as {dt16}).reshape([{k}, {n}]);",
                             f"    let e = mma(at, bt, zeros::<f32>([{m}, {n}]));"]
            dt = "f32"
            if op in ("mean", "prod"):  # (a product of the mma's sums, up to 32 each, is not exact in f32)
                op = "sum"
            exact = True
            ax = r.choice([0, 1])
            ops2 = [op] + ([r.choice(["max", "argmin", "sum"])] if r.random() < 0.5 else [])
            for o in ops2:
                self.out(f"e.{o}({ax})", "i32" if o.startswith("arg") else dt, _res(shape, ax), True)
            return self._program(w, params, host, shape, grid, "mma")
        if not loop:
            forms = {"a": a, "a * b": f"{a} * {b}", "where(a > b, a, b)": f"where({a} > {b}, {a}, {b})",
                     "a + b": f"{a} + {b}", "maximum(a, b) - b": f"maximum({a}, {b}) - {b}"}
            self.lines.append(f"    let e = {forms[ex]};")
        if NAN and not _is_int(dt) and not loop:  # `--nan`: NaN where e is 1 (0 / 0: the same NaN on both engines)
            self.lines.append(f"    let e = where(e == {_lit(1, dt)}, (e - e) / (e - e), e);")
        odt = "i32" if op.startswith("arg") else dt
        if form == "one":
            ax = r.randrange(rank)
            self.out(f"e.{op}({ax})", odt, _res(shape, ax), exact)
        elif form == "several":
            ax = r.randrange(rank)
            for o in sorted(set(r.sample([o for o in ops if o != "prod" or mod == 3], 3))):
                self.out(f"e.{o}({ax})", "i32" if o.startswith("arg") else dt, _res(shape, ax), o != "mean")
        elif form == "all":  # every axis: a chain through keepdim reshapes, and reductions in another order
            o = op if not op.startswith("arg") and op != "mean" else "sum"
            cur, s = "e", shape
            for ax in r.sample(range(rank), rank):
                nxt = tuple(1 if i == ax else d for i, d in enumerate(s))
                cur = self.let(f"{cur}.{o}({ax}).reshape([{', '.join(map(str, nxt))}])")
                s = nxt
            self.out(f"{cur}.reshape([1])", dt, (1,), True)
        elif form == "xpose":
            ax = r.choice([0, 1])
            self.extent = shape[::-1]
            self.out(f"e.transpose().{op}({ax})", odt, _res(shape[::-1], ax), exact)
        elif form == "slice":  # a reduction of a reduction's result (a Slice layout)
            ax = 0 if shape[0] <= 3 else r.randrange(3)  # (a [1..3, R, C] load's `max(0)`: l09's, hred's)
            o1 = r.choice(["sum", "max", "min"])
            first = self.let(f"e.{o1}({ax})")
            s1 = self.extent = _res(shape, ax)
            ax2 = r.randrange(2)
            self.out(f"{first}.{op}({ax2})", odt, _res(s1, ax2), exact)
        elif form == "back":  # a statistic broadcast back
            ax = r.choice([0, 1])
            keep = _keep(shape, ax)
            kind = r.choice(["center", "scale", "softmax"] if not _is_int(dt) else ["center", "scale"])
            if kind == "softmax":
                m = self.let(f"e.max({ax}).reshape({keep})")
                p = self.let(f"exp(e - {m})")
                self.out(f"{p} / {p}.sum({ax}).reshape({keep})", dt, shape, False)
            elif kind == "center":  # (then, half the time, the centred tile reduced again, on either axis)
                o = r.choice(["max", "min", "sum"])
                c = self.let(f"e - e.{o}({ax}).reshape({keep})")
                self.out(c, dt, shape, True)
                if r.random() < 0.5:
                    ax2 = r.choice([0, 1])
                    self.out(f"{c}.{op}({ax2})", odt, _res(shape, ax2), exact)
            else:
                self.out(f"e * e.{r.choice(['max', 'min'])}({ax}).reshape({keep}) + e.sum({ax}).reshape({keep})",
                         dt, shape, True)
            if r.random() < 0.5:
                self.out(f"e.{op}({1 - ax})", odt, _res(shape, 1 - ax), exact)
        elif form == "loop":  # the rows' partials folded over the tiles along the last axis
            ax = 1
            o = r.choice(["sum", "max", "min"])
            pre = r.choice(["", "", " * 2", " - 1"])
            init = {"sum": _lit(0, dt), "max": _lit(0 if dt[0] == "u" else -100, dt), "min": _lit(100, dt)}[o]
            comb = {"sum": "acc + {t}", "max": "maximum(acc, {t})", "min": "minimum(acc, {t})"}[o]
            self.lines.append(f"    let p0 = x0.partition([{dims}]);")
            self.lines.append(f"    let mut acc = full::<{dt}>([{shape[0]}], {init});")
            self.lines.append(f"    for j in 0..p0.num_tiles(1) {{")
            self.lines.append(f"        let t = p0.load([block_id(0), j]);")
            tile = f"(t{pre})" if pre else "t"
            if dt != "i32" and pre:  # (a typed literal)
                tile = f"(t {pre.split()[0]} {_lit(int(pre.split()[1]), dt)})"
            self.lines.append(f"        acc = {comb.format(t=f'{tile}.{o}(1)')};")
            self.lines.append("    }")
            self.out("acc", dt, (shape[0],), True)
        return self._program(w, params, host, shape, grid, form)

    def _program(self, w: int, params: list[str], host: list[str], shape: tuple[int, ...], grid: int,
                 form: str) -> str:
        oparams, oargs = [], []
        for name, dt, s, _ in self.outs:
            oparams.append(f"{name}: &mut Tensor<{dt}, [{', '.join(map(str, s))}]>")
            # the outputs tile axis 0 by the grid: [grid * s0, ...] (a [1] output: one a block)
            host.append(f"    let mut {name} = zeros::<{dt}>([{', '.join(map(str, (grid * s[0], *s[1:])))}]);")
            oargs.append(f"{name}.partition([{', '.join(map(str, s))}])")
        args = oargs + [f"&x{i}" for i in range(len(params))]
        return (f"// reduce_diff case {self.seed} ({form}, tile {list(shape)}, grid {grid})\n#[allow(warnings)]\n"
                f"#[hints(num_warps = {w})]\nkernel fn k({', '.join(oparams + params)}) {{\n"
                + "\n".join(self.lines) + "\n}\n\nfn main() {\n" + "\n".join(host)
                + f"\n    k({', '.join(args)}).sync();\n}}\n")


def agree(w: np.ndarray, g: np.ndarray, dt: str, exact: bool) -> bool:
    if w.shape != g.shape:
        return False
    if exact or w.dtype.kind in "iub":  # (a float zero's sign too: max(-0.0, 0.0) is 0.0 on both)
        return bool(np.array_equal(w, g, equal_nan=w.dtype.kind == "f")
                    and (w.dtype.kind != "f" or np.array_equal(np.signbit(w[w == 0]), np.signbit(g[w == 0]))))
    w64, g64 = w.astype(np.float64), g.astype(np.float64)
    scale = float(np.nanmax(np.abs(w64))) if w64.size and np.isfinite(w64).any() else 1.0
    # (f32: 32 units, the GPU's `exp` and division are approximations within a few; f16/bf16: 4, a rounding)
    tol = (32 if dt in ("f32", "f64") else 4) * ULP[dt]
    return bool(np.allclose(g64, w64, rtol=tol, atol=tol * max(scale, 1e-30), equal_nan=True))


def widest(T: int, n_out: int, L: int, e_r: int) -> int | None:
    """`--rounds`' plan: the widest group `reduce_staged.plan` may choose (not the cheapest): G <= L,
    MAX_GROUP and T, within MAX_ROUNDS rounds of outputs; None (the serial loop) where it may choose none."""
    from tilelang.backend.codegen import reduce_staged as rs

    if L <= 1:
        return None
    ok = [g for g in (1 << i for i in range(11)) if g <= min(L, rs.MAX_GROUP, T)
          and -(-n_out // (T // g)) <= rs.MAX_ROUNDS]
    return max(ok) if ok else None


def force_paths(staged: bool, rounds: bool, xpose: bool = False) -> None:
    """`--staged` / `--rounds`: the staged path for every blocked reduction laid out apart (the apart mode
    off), as tests/backend/test_reduce_staged.py forces it, and its groups at the widest size allowed."""
    from tilelang.backend.codegen import reduce as red
    from tilelang.backend.codegen import reduce_staged as rs

    if staged:
        red._apart_pays = lambda *a: False  # type: ignore[assignment]
    if rounds:
        rs.plan = widest  # type: ignore[assignment]
    if xpose:  # the transposing butterfly wherever it applies (R >= 2 rows a thread, 2 lanes or more)
        red.xpose.pays = lambda R, lanes, gathered: R >= 2 and lanes >= 2  # type: ignore[attr-defined]


def count_paths() -> dict[str, int]:
    """How often the code generator took the newer reduction paths: the staged one (`reduce_staged`), the
    transposing butterfly (`reduce_xpose.scatter`), the steps back (`gather`) and the apart mode's `plan`."""
    from tilelang.backend.codegen import reduce as red
    from tilelang.backend.codegen import reductions, reduce_xpose

    hits = {"staged": 0, "xpose": 0, "xpose gather": 0, "apart plan": 0}

    def counted(mod: object, attr: str, key: str, when=lambda v: True) -> None:  # type: ignore[no-untyped-def]
        f = getattr(mod, attr)

        def wrap(*args, **kw):  # type: ignore[no-untyped-def]
            v = f(*args, **kw)
            hits[key] += bool(when(v))
            return v

        setattr(mod, attr, wrap)

    counted(reductions, "reduce_staged", "staged", bool)
    counted(reduce_xpose, "scatter", "xpose")
    counted(reduce_xpose, "gather", "xpose gather")
    counted(red, "plan", "apart plan", lambda v: v is not None)
    return hits


ASSEMBLED = [0]  # how many kernels went through ptxas
COMPILED: list[tuple[object, str, dict]] = []  # `--ptxas`: the kernels llsim compiled (kernel, arch, facts)


def record_compiles() -> None:
    """`--ptxas`: each kernel llsim compiles is kept, to be made into PTX and assembled after its run."""
    from llsim import SimDevice

    f = SimDevice.compile

    def compile(self, kernel, facts=None):  # type: ignore[no-untyped-def]
        COMPILED.append((kernel, self.arch, dict(facts or {})))
        return f(self, kernel, facts)

    SimDevice.compile = compile  # type: ignore[method-assign]


def assemble_compiled() -> list[str]:
    """The recorded kernels' PTX through ptxas (each kernel, arch and facts once): an error line each failure."""
    from tilelang.backend import emit_ptx
    from tilelang.backend.target import run_ptxas

    errs, seen = [], set()
    for kernel, arch, facts in COMPILED:
        key = (id(kernel), arch, repr(sorted(facts.items())))
        if key in seen:
            continue
        seen.add(key)
        ASSEMBLED[0] += 1
        r = run_ptxas(emit_ptx(kernel, arch, facts), arch)
        if r.returncode != 0:
            errs.append(f"ptxas {arch}: {(r.stderr or r.stdout).strip().splitlines()[0][:200]}")
    COMPILED.clear()
    return errs


def check_cases(seeds: Iterable[int], archs: list[str], out: Path, show: bool = False) -> list[str]:
    """Each case on the interpreter and on llsim at each arch (and, where `record_compiles` ran, its kernels
    through ptxas): a line per problem (printed as found)."""
    problems: list[str] = []

    def problem(line: str) -> None:
        problems.append(line)
        print(line, flush=True)

    for seed in seeds:
        c = Case(seed)
        src = c.build()
        p = out / f"c{seed}.tile"
        try:
            want = run_one(src, None, p)
        except Exception as e:  # noqa: BLE001  (a program the generator got wrong: counted, to be fixed here)
            problem(f"case {seed}: interpreter: {type(e).__name__}: {_first(e)} -> {p}")
            continue
        for arch in archs:
            try:
                got = run_one(src, arch, p)
            except Exception as e:  # noqa: BLE001
                problem(f"case {seed} {arch}: {type(e).__name__}: {_first(e)} -> {p}")
                if show:
                    traceback.print_exc()
                continue
            for name, dt, _, exact in c.outs:
                w, g = want[name], got[name]
                if not agree(w, g, dt, exact):
                    wrong = np.argwhere(w != g) if w.shape == g.shape else []
                    problem(f"case {seed} {arch} {name}: DISAGREE at {len(wrong)} of {w.size}, first "
                            f"{np.asarray(wrong[:3]).tolist()} -> {p}")
                    if show:
                        print(src)
        for err in assemble_compiled():
            problem(f"case {seed}: {err} -> {p}")
    return problems


def _first(e: Exception) -> str:
    return str(e).splitlines()[0][:300] if str(e) else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("seed0", type=int, nargs="?", help="(as layout_diff's: cases SEED0..SEED1, for diff_search)")
    ap.add_argument("seed1", type=int, nargs="?")
    ap.add_argument("--seed", type=int, default=0, help="the first case's number")
    ap.add_argument("--cases", type=int, default=50)
    ap.add_argument("--budget", type=float, default=0.0, help="seconds after which no new case starts (0: none)")
    ap.add_argument("--arch", default="sm_90a,sm_80")
    ap.add_argument("--show", action="store_true", help="each disagreeing program on stdout too")
    ap.add_argument("--out", default="/tmp/reduce_diff")
    ap.add_argument("--staged", action="store_true",
                    help="what the apart mode takes goes to the staged path instead (as test_reduce_staged forces it)")
    ap.add_argument("--rounds", action="store_true",
                    help="with --staged: the widest group of threads an output the planner allows, not the cheapest "
                         "(several rounds of outputs)")
    ap.add_argument("--xpose", action="store_true",
                    help="the transposing butterfly wherever it applies, not only where its model says it pays")
    ap.add_argument("--ptxas", action="store_true", help="each kernel's PTX through ptxas too (~0.3 s a kernel)")
    ap.add_argument("--big", action="store_true", help="tiles of up to 32768 elements, not 4096 (slower)")
    ap.add_argument("--types", default="", help=f"the element types (default {sorted(set(DTYPES))}; also {WIDE})")
    ap.add_argument("--nan", action="store_true", help="NaNs among the float values (max/min/arg* propagate them)")
    ap.add_argument("--forms", default="", help=f"only these forms (comma-separated, of {sorted(set(FORMS))})")
    a = ap.parse_args()
    MAX_ELEMS[0] = 32768 if a.big else 4096
    if a.types:
        DTYPES[:] = a.types.split(",")
        if set(DTYPES) - set(WIDE) - {"f32", "i32", "f16", "bf16"}:
            ap.error(f"--types: one of {sorted(set(WIDE) | {'f32', 'i32', 'f16', 'bf16'})} each")
    ONLY[:] = [f for f in a.forms.split(",") if f]
    if set(ONLY) - set(FORMS):
        ap.error(f"--forms: no form {sorted(set(ONLY) - set(FORMS))} (the forms: {sorted(set(FORMS))})")
    force_paths(a.staged, a.rounds, a.xpose)
    if a.ptxas:
        record_compiles()
    hits = count_paths()
    import llsim

    llsim.UNDEF_FLOAT = "nan"  # a value the codegen reads without writing shows as NaN, not as a lucky zero
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.seed0 is not None:
        a.seed, a.cases = a.seed0, (a.seed1 if a.seed1 is not None else a.seed0 + a.cases) - a.seed0
    start = time.monotonic()
    ran: list[int] = []

    def seeds():  # type: ignore[no-untyped-def]
        for seed in range(a.seed, a.seed + a.cases):
            if a.budget and time.monotonic() - start > a.budget:
                return
            ran.append(seed)
            yield seed

    bad = len(check_cases(seeds(), a.arch.split(","), out, a.show))
    print("paths taken (code generations, both archs): " + ", ".join(f"{k} {v}" for k, v in hits.items())
          + (f"; {ASSEMBLED[0]} kernels assembled by ptxas" if a.ptxas else ""))
    print(f"reduce_diff {a.arch} cases {a.seed}..{a.seed + len(ran)}: {len(ran)} programs, {bad} problems "
          f"({time.monotonic() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
