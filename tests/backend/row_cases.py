"""Row kernels, reductions and scans on tiles of any width, for the GPU tests
(`test_gpu_rows.py`) and the CPU simulator of the generated code
(`test_sim.py`): each case is Tile source whose `main` instantiates one kernel
at odd, non-power-of-two shapes; the tests run that kernel on the interpreter
and on the other engine with fresh random inputs and compare.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tilelang.dtypes import DType

SOFTMAX = """
use std::nn::softmax;
#[hints(num_warps = {W})]
kernel fn k<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {{
    y.store(softmax(x.load_like(y)));
}}
fn main() {{
    let x = zeros::<f32>([{M}, {N}]);
    let mut y = zeros::<f32>([{M}, {N}]);
    k(y.partition([{BM}, {N}]), &x).sync();
}}
"""

LAYERNORM = """
#[hints(num_warps = {W})]
kernel fn k<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>,
                                         w: &Tensor<f32, [N]>, b: &Tensor<f32, [N]>) {{
    let t = x.load_like(y);
    let mean = t.sum(1).reshape([BM, 1]) / (N as f32);
    let d = t - mean;
    let var = (d * d).sum(1).reshape([BM, 1]) / (N as f32);
    let wt = w.partition([N]).load([0]).reshape([1, N]);
    let bt = b.partition([N]).load([0]).reshape([1, N]);
    y.store(d * rsqrt(var + 1e-5) * wt + bt);
}}
fn main() {{
    let x = zeros::<f32>([{M}, {N}]);
    let w = zeros::<f32>([{N}]);
    let b = zeros::<f32>([{N}]);
    let mut y = zeros::<f32>([{M}, {N}]);
    k(y.partition([{BM}, {N}]), &x, &w, &b).sync();
}}
"""

# A softmax over column tiles: three passes over the row (max, sum, write), so
# rows wider than a tile work; the last column tile is partial.
LOOPED = """
#[hints(num_warps = {W})]
kernel fn k<const BM: i32, const N: i32, const BN: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {{
    let p = x.partition([BM, BN]);
    let q = y.partition([BM, BN]);
    let i = block_id(0);
    let mut m = p.load([i, 0]);
    for j in 1..q.num_tiles(1) {{
        m = maximum(m, p.load([i, j]));
    }}
    let mx = m.max(1).reshape([BM, 1]);
    let mut s = zeros::<f32>([BM, BN]);
    for j in 0..q.num_tiles(1) {{
        s = s + exp(p.load([i, j]) - mx);
    }}
    let r = 1.0 / s.sum(1).reshape([BM, 1]);
    for j in 0..q.num_tiles(1) {{
        q.store(exp(p.load([i, j]) - mx) * r, [0, j]);
    }}
}}
fn main() {{
    let x = zeros::<f32>([{M}, {N}]);
    let mut y = zeros::<f32>([{M}, {N}]);
    k::<{BM}, {N}, {BN}>(y.partition([{BM}, {N}]), &x).sync();
}}
"""

REDUCE = """
#[hints(num_warps = {W})]
kernel fn k<const R: i32, const C: i32>(y: &mut Tensor<{OT}, [{OUTS}]>, x: &Tensor<{T}, [?, C]>) {{
    let t = x.partition([R, C]).load([block_id(0), 0]);
    y.store(t.{OP}({AXIS}));
}}
fn main() {{
    let x = zeros::<{T}>([{M}, {C}]);
    let mut y = zeros::<{OT}>([{YM}]);
    k::<{R}, {C}>(y.partition([{OUT}]), &x).sync();
}}
"""

SCAN = """
#[hints(num_warps = {W})]
kernel fn k<const R: i32, const C: i32>(y: &mut Tensor<{T}, [R, C]>, x: &Tensor<{T}, [?, C]>) {{
    y.store({OP}(x.load_like(y), {AXIS}));
}}
fn main() {{
    let x = zeros::<{T}>([{M}, {C}]);
    let mut y = zeros::<{T}>([{M}, {C}]);
    k(y.partition([{R}, {C}]), &x).sync();
}}
"""

# The whole tile reduced to one scalar, broadcast back (replicated layouts).
TOTAL = """
#[hints(num_warps = {W})]
kernel fn k<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {{
    let t = x.load_like(y);
    y.store(t - t.sum(0) / (B as f32) + t.max(0));
}}
fn main() {{
    let x = zeros::<f32>([{M}]);
    let mut y = zeros::<f32>([{M}]);
    k(y.partition([{B}]), &x).sync();
}}
"""


# Control flow around layouts: two reductions per iteration of a loop (the
# scratch buffers taken in turn must not race across iterations), an `if`
# whose branches yield a reduction's slice and a fresh tile, a `while` that
# carries a row result.
CONTROL = """
#[hints(num_warps = {W})]
kernel fn k<const BM: i32, const BN: i32>(y: &mut Tensor<f32, [BM]>, x: &Tensor<f32, [?, ?]>) {{
    let p = x.partition([BM, BN]);
    let i = block_id(0);
    let mut acc = zeros::<f32>([BM]);
    for j in 0..p.num_tiles(1) {{
        let t = p.load([i, j]);
        acc = acc + t.max(1) - t.min(1);
    }}
    let pick = if i % 2 == 0 {{ acc }} else {{ p.load([i, 0]).sum(1) }};
    let mut n = 0;
    let mut w = pick;
    while n < 3 {{
        w = w * 0.5 + p.load([i, n]).max(1);
        n += 1;
    }}
    y.store(w);
}}
fn main() {{
    let x = zeros::<f32>([{M}, {N}]);
    let mut y = zeros::<f32>([{M}]);
    k::<{BM}, {BN}>(y.partition([{BM}]), &x).sync();
}}
"""


@dataclass
class RowCase:
    name: str
    source: str
    shapes: dict[str, tuple[int, ...]]  # input tensors (random) by param name
    outputs: dict[str, tuple[int, ...]]  # output tensors by param name
    grid: tuple[int, ...]
    dtypes: dict[str, DType]
    rtol: float = 2e-5
    atol: float = 1e-6
    sim: bool = True  # small enough for the CPU simulator
    summed: bool = False  # atol scales with the largest output: a sum's rounding grows with what it added up

    def kernel(self) -> Any:
        from tilelang import driver

        path = _write(self.name, self.source)
        r = driver.compile(path, "ir", options=driver.Options(kernel="k"))
        assert r.ok, r.diagnostics
        return r.output[0]

    def args(self, rng: np.random.Generator, kernel: Any) -> list[Any]:
        from tilelang.ir import nodes as ir

        out = []
        for p in kernel.params:
            assert isinstance(p, ir.TensorParam)
            dt = self.dtypes.get(p.name, DType.F32)
            if p.name in self.outputs:
                out.append(np.full(self.outputs[p.name], 7, dt.np_dtype))
                continue
            shape = self.shapes[p.name]
            if dt.is_int:
                a = rng.integers(-1000, 1000, size=shape).astype(dt.np_dtype)
            else:
                a = (rng.standard_normal(shape) * 2).astype(np.float32)
                if dt is DType.BF16:
                    from tilelang.interp import round_bf16

                    a = round_bf16(a)
                a = a.astype(dt.np_dtype)
            out.append(a)
        return out


_DIR: Path | None = None


def _write(name: str, source: str) -> Path:
    global _DIR
    if _DIR is None:
        import tempfile

        _DIR = Path(tempfile.mkdtemp(prefix="tile_rows_"))
    path = _DIR / f"{name}.tile"
    path.write_text(source, encoding="utf-8")
    return path


def _softmax(M: int, N: int, BM: int, W: int, sim: bool = True) -> RowCase:
    return RowCase(f"softmax_{M}x{N}_bm{BM}_w{W}", SOFTMAX.format(M=M, N=N, BM=BM, W=W),
                   {"x": (M, N)}, {"y": (M, N)}, (-(-M // BM), 1), {}, sim=sim)


def _layernorm(M: int, N: int, BM: int, W: int, sim: bool = True) -> RowCase:
    return RowCase(f"layernorm_{M}x{N}_bm{BM}_w{W}", LAYERNORM.format(M=M, N=N, BM=BM, W=W),
                   {"x": (M, N), "w": (N,), "b": (N,)}, {"y": (M, N)}, (-(-M // BM), 1), {},
                   rtol=1e-4, atol=1e-5, sim=sim)


def _looped(M: int, N: int, BM: int, BN: int, W: int, sim: bool = True) -> RowCase:
    return RowCase(f"looped_softmax_{M}x{N}_bm{BM}_bn{BN}_w{W}", LOOPED.format(M=M, N=N, BM=BM, BN=BN, W=W),
                   {"x": (M, N)}, {"y": (M, N)}, (-(-M // BM), 1), {}, sim=sim)


def _reduce(op: str, axis: int, R: int, C: int, W: int, dt: DType = DType.F32, M: int | None = None) -> RowCase:
    M = M if M is not None else 2 * R
    T = dt.value
    arg = op.startswith("arg")
    OT = "i32" if arg else T
    out, ym = (R, M) if axis == 1 else (C, C * (-(-M // R)))
    src = REDUCE.format(OP=op, AXIS=axis, R=R, C=C, M=M, W=W, T=T, OT=OT, OUT=out, OUTS="R" if axis == 1 else "C", YM=ym)
    tol = 2e-3 if dt is DType.F16 else 1e-2 if dt is DType.BF16 else 2e-5
    if op == "prod":
        tol = max(tol, 1e-4)
    # a float sum near zero keeps the rounding of its large terms, added in another order
    # (2x3000 f32: 2.5e-5 off at 0.141, row sums ~30): atol is relative to the largest sum
    return RowCase(f"{op}{axis}_{T}_{R}x{C}_w{W}", src, {"x": (M, C)}, {"y": (ym,)},
                   (-(-M // R),), {"x": dt, "y": DType.I32 if arg else dt}, rtol=tol, atol=tol,
                   summed=op == "sum" and dt.is_float)


def _scan(axis: int, R: int, C: int, M: int, W: int, dt: DType = DType.F32, op: str = "cumsum",
          sim: bool = True) -> RowCase:
    # atol is relative to the largest prefix (RowCase.summed): summed in another order, a prefix
    # near zero after large ones keeps their rounding (2x5000 f32: 1.4e-4 off at 0.139, prefixes ~160)
    tol = 1e-2 if dt is DType.F16 else 1e-5
    return RowCase(f"{op}{axis}_{dt.value}_{R}x{C}_w{W}",
                   SCAN.format(OP=op, AXIS=axis, R=R, C=C, M=M, W=W, T=dt.value),
                   {"x": (M, C)}, {"y": (M, C)}, (-(-M // R), 1), {"x": dt, "y": dt}, rtol=tol, atol=tol,
                   sim=sim, summed=True)


def _total(M: int, B: int, W: int) -> RowCase:
    return RowCase(f"total_{M}_b{B}_w{W}", TOTAL.format(M=M, B=B, W=W), {"x": (M,)}, {"y": (M,)},
                   (-(-M // B),), {}, rtol=1e-5, atol=1e-5)


def _control(M: int, N: int, BM: int, BN: int, W: int) -> RowCase:
    return RowCase(f"control_{M}x{N}_bm{BM}_bn{BN}_w{W}", CONTROL.format(M=M, N=N, BM=BM, BN=BN, W=W),
                   {"x": (M, N)}, {"y": (M,)}, (-(-M // BM),), {}, rtol=1e-5, atol=1e-5)


CASES: list[RowCase] = [
    _softmax(3, 100, 1, 4),
    _softmax(5, 768, 2, 4),
    _softmax(4, 37, 4, 1),
    _softmax(3, 2560, 1, 8, sim=False),
    _softmax(7, 8191, 1, 16, sim=False),
    _layernorm(4, 100, 2, 4),
    _layernorm(3, 2560, 1, 8, sim=False),
    _layernorm(5, 1000, 1, 4, sim=False),
    _looped(3, 300, 1, 100, 2),
    _looped(5, 5000, 2, 1000, 8, sim=False),
    _reduce("sum", 1, 6, 10, 4),
    _reduce("max", 0, 6, 10, 4),
    _reduce("min", 1, 3, 5, 4),
    _reduce("prod", 0, 5, 7, 1, M=10),
    _reduce("argmax", 1, 6, 12, 2),
    _reduce("argmin", 0, 12, 6, 2),
    _reduce("sum", 1, 6, 10, 4, DType.I32),
    _reduce("max", 0, 6, 24, 2, DType.F16),
    _reduce("sum", 1, 3, 48, 2, DType.BF16),
    _reduce("sum", 1, 2, 3000, 8, M=4),
    _scan(1, 3, 12, 7, 2),
    _scan(0, 10, 6, 10, 4),
    _scan(1, 2, 300, 3, 4),  # the row spans 4 warps: warp totals through shared memory
    _scan(1, 1, 1000, 2, 2),  # 4 repetitions along the row, carried
    _scan(1, 4, 40, 4, 1, DType.I32),
    _scan(0, 33, 8, 40, 4, DType.F16),
    _scan(1, 2, 5000, 2, 8, sim=False),
    _control(6, 300, 3, 100, 4),
    _control(4, 96, 1, 48, 2),
    _control(3, 768, 1, 256, 4),  # reductions across warps inside the loop and the while
    _total(100, 48, 4),
    _total(300, 3, 2),
]


def compare(case: RowCase, kernel: Any, want: list[Any], got: list[Any]) -> None:
    from tilelang.ir import nodes as ir

    for p, a, b in zip(kernel.params, want, got, strict=True):
        if isinstance(p, ir.TensorParam) and p.name in case.outputs:
            want_ = np.asarray(a, np.float64)
            atol = case.atol * max(1.0, float(np.abs(want_).max(initial=0.0))) if case.summed else case.atol
            np.testing.assert_allclose(np.asarray(b, np.float64), want_,
                                       rtol=case.rtol, atol=atol, err_msg=f"{case.name}: `{p.name}`")


def run_interp(kernel: Any, case: RowCase, args: list[Any]) -> list[Any]:
    from tilelang.interp import run_kernel

    cpu = [a.copy() for a in args]
    run_kernel(kernel, case.grid, cpu)
    return cpu


Runner = Callable[[Any, RowCase, list[Any]], list[Any]]
