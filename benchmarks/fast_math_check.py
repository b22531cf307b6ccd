"""`#[hints(fast_math = true)]` on the GPU (hattn2, 2026-12-06): each f32 op the hint changes (exp, sigmoid, tanh,
`/`) over 4M inputs, hinted and not, against NumPy in f64; and the default `exp` of a row softmax's difference
(x <= 0: ex2.approx of x log2(e) without the hint, `fastmath.exp_nonpos_plain`). One line an op: the worst
relative error where the exact result is a normal f32, the documented (rtol, atol), and OK / OVER (any element
outside atol + rtol |r|). One step, ~20-40 s warm.

    python benchmarks/fast_math_check.py           # GPU
    python benchmarks/fast_math_check.py --dry     # CPU: the PTX forms of each kernel (no GPU)

Expected (NumPy emulation and llsim with the MUFU off by 2^-22, tests/backend/test_fast_math.py, test_exp_ln2.py;
not run on a GPU yet): every line OK. exp hinted ~3-4e-6 worst (the product's rounding where |x log2 e| >= 64:
|x| >= 44), not hinted <= 6e-7; sigmoid hinted ~4e-6, not ~5e-7; div hinted <= 2 ulp (2.4e-7), not 0 (div.rn);
tanh hinted ~1e-4-5e-4 (tanh.approx: the PTX ISA's 2^-10.987 is the documented bound; this is the first
measurement here, so OVER on tanh means FAST_MATH["tanh"] must widen), not <= 1e-6. The row softmax's exp
(differences down to -150) within 2e-6 relative or 1e-18 absolute (`MATH["exp"]`); its worst relative error
~3-4e-6 sits below exp(x) = 1.3e-13. Subnormal divisors and results (excluded from the div bound) are counted
on the div line: flushed = results 0 where the exact quotient is a nonzero normal or subnormal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

N = 1 << 22
ACT = """
#[hints({hint})]
kernel fn act(e: &mut Tensor<f32, [{n}]>, s: &mut Tensor<f32, [{n}]>, t: &mut Tensor<f32, [{n}]>,
              d: &mut Tensor<f32, [{n}]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {{
    let a = x.load_like(e);
    let b = y.load_like(e);
    e.store(exp(a));
    s.store(sigmoid(a));
    t.store(tanh(a));
    d.store(a / b);
}}
"""


def act(hint: str, n: int = 1024) -> str:
    """The source of kernel `act` (each op the hint changes, on tiles of `n` elements) under `hint`; also
    tests/backend/test_fast_math.py's kernel (n = 256)."""
    return ACT.format(hint=hint, n=n)


ROWEXP = """
kernel fn rowexp(y: &mut Tensor<f32, [1, 1024]>, x: &Tensor<f32, [?, 1024]>) {
    let t = x.load_like(y);
    y.store(exp(t - t.max(1).reshape([1, 1])));
}
"""
HINTS = (("fast_math = true", True), ("num_warps = 4", False))


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(17)
    x = np.concatenate([np.linspace(-88.0, 88.0, N // 2), rng.uniform(-10, 10, N // 4),
                        rng.standard_normal(N // 4) * 1e-3]).astype(np.float32)
    y = (rng.uniform(0.5, 2.0, N) * 2.0 ** rng.integers(-60, 60, N) * rng.choice([-1, 1], N)).astype(np.float32)
    y[:64] = np.float32(2.0**-130)  # a few subnormal divisors (outside the div bound: counted)
    return x, y


def report(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float,
           mask: np.ndarray | None = None) -> None:
    g, w = got.astype(np.float64), want
    ok = np.isfinite(w) if mask is None else mask & np.isfinite(w)
    normal = ok & (np.abs(w) >= 2.0**-126)
    rel = float(np.max(np.abs(g[normal] - w[normal]) / np.abs(w[normal]))) if normal.any() else 0.0
    over = int(np.sum(ok & ~(np.abs(g - w) <= atol + rtol * np.abs(w))))
    print(f"{name:34s} worst rel {rel:.2e}  bound rtol {rtol:g} atol {atol:g}  {'OK' if not over else f'OVER x{over}'}",
          flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args(argv)
    from tilelang.backend import fastmath
    from tilelang.dtypes import DType

    if args.dry:
        from tilelang import driver
        from tilelang.backend import compile_kernel
        main_ = ("fn main() { let x = ones::<f32>([2048]); let mut a = zeros::<f32>([2048]);"
                 " let mut b = zeros::<f32>([2048]); let mut c = zeros::<f32>([2048]); let mut d = zeros::<f32>([2048]);"
                 " act(a.partition([1024]), b.partition([1024]), c.partition([1024]), d.partition([1024]), &x, &x)"
                 ".sync(); }\n")
        for hint, _ in HINTS:
            ptx = compile_kernel(driver.compile(act(hint) + main_, "ir").output[0], "sm_90a", None).ptx
            forms = {f: ptx.count(f) for f in ("ex2.approx.ftz.f32", "tanh.approx.f32", "div.full.f32", "div.rn.f32",
                                                "rcp.approx.ftz.f32", "fma.rn.f32")}
            print(f"{hint:18s} {forms}", flush=True)
        return 0
    import torch

    import tilelang

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    x, y = inputs()
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        want = {"exp": np.exp(xd), "sigmoid": 1.0 / (1.0 + np.exp(-xd)), "tanh": np.tanh(xd), "div": xd / yd}
    xt, yt = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    for hint, fast in HINTS:
        outs = [torch.full((N,), float("nan"), device="cuda") for _ in range(4)]
        k = tilelang.compile(act(hint)).act  # type: ignore[attr-defined]
        k(*(tilelang.partition(o, [1024]) for o in outs), xt, yt).launch().wait()
        got = dict(zip(("exp", "sigmoid", "tanh", "div"), (o.cpu().numpy() for o in outs), strict=True))
        for op in ("exp", "sigmoid", "tanh", "div"):
            rtol, atol = fastmath.tolerance(op, DType.F32, fast)
            mask = None
            if op == "exp":
                mask = np.abs(x) < 88.0
            if op == "div":
                mask = (np.abs(y) >= 2.0**-126) & (np.abs(want["div"]) >= 2.0**-126)
            ref = want[op]
            if op == "div" and not fast:  # div.rn: the correctly rounded f32 quotient, bit for bit (call 19
                with np.errstate(all="ignore"):  # compared it with the f64 quotient at tolerance 0: "OVER")
                    ref = (x / y).astype(np.float64)
            report(f"{op} {'fast_math' if fast else 'default'}", got[op], ref, rtol, atol, mask)
            if op == "div":
                sub = ~mask & np.isfinite(want["div"]) & (want["div"] != 0)
                print(f"  div outside the bound (subnormal divisor or result): {int(sub.sum())}, "
                      f"flushed to 0: {int(np.sum(sub & (got['div'] == 0)))}", flush=True)
    rng = np.random.default_rng(5)
    rows = (rng.uniform(-150.0, 0.0, (4096, 1024)) + rng.uniform(-50, 50, (4096, 1))).astype(np.float32)
    yo = torch.zeros((4096, 1024), device="cuda")
    k = tilelang.compile(ROWEXP).rowexp  # type: ignore[attr-defined]
    k(tilelang.partition(yo, [1, 1024]), torch.from_numpy(rows).cuda()).launch().wait()
    # exp's bound is for exp of the f32 difference the kernel (and the interpreter) computes: the f64 exponential of
    # the f64 difference differs from it by the subtraction's rounding (half an ulp of |t - max| ~ 150 is 7.6e-6
    # relative: call 19's "OVER")
    d32 = rows - rows.max(1, keepdims=True)
    rtol, atol = fastmath.tolerance("exp", DType.F32)
    report("row softmax exp(t - max) default", yo.cpu().numpy(), np.exp(d32.astype(np.float64)), rtol, atol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
