"""One math built-in means one function wherever it is written (hnum; the reference's "One math function, one
value"): for random inputs of every float type, a host scalar's `exp(x)`, a host tensor's `exp(t)` and a kernel's
`exp(tile)` on the interpreter give the same bits, for each unary math built-in, `pow` and `atan2`.

Before: a host f32/f16/bf16 scalar's math was computed in f64 and rounded once (the kernel's f32 `exp` is NumPy's
f32 exp: 39 % of random f32 inputs differed in the last bit), a bf16 scalar's result was left an f32 value (`exp` of
a bf16 0.7 printed 2.01218, the kernel's 2.015625), and a host `asin`/`acos`/`atan` was NumPy's arcsin (the
kernels' is the atan2 formula) on scalars and tensors, f64 too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilelang.interp import numeric as num
from tilelang.ir.nodes import ElemOp
from tilelang.run import run_source
from tilelang.runtime.builtins import UNARY_MATH

N = 128
DTYPES = ("f32", "f16", "bf16", "f64")
STORE = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "f64": np.float64}


def _inputs(dt: str, seed: int) -> np.ndarray:
    """N values of `dt` (storage form): random bit patterns (every class: NaN, infinities, subnormals, huge and
    tiny values), uniform values of [-4, 4] and of [-1, 1] (the inverse trig functions' domain), the specials."""
    rng = np.random.default_rng(seed)
    bits = {"f32": np.uint32, "f16": np.uint16, "bf16": np.uint16, "f64": np.uint64}[dt]
    raw = rng.integers(0, np.iinfo(bits).max, N // 4, dtype=bits, endpoint=True)
    if dt == "bf16":
        rand = (raw.astype(np.uint32) << np.uint32(16)).view(np.float32)
    else:
        rand = raw.view(STORE[dt])
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1e-3, 88.0, -104.0, 0.999, -0.999, 2.5,
                   710.0], np.float64)
    rest = N - rand.size - sp.size
    wide = np.concatenate([rng.uniform(-4, 4, rest // 2), rng.uniform(-1, 1, rest - rest // 2), sp])
    x = np.concatenate([rand.astype(np.float64), wide])
    from tilelang.dtypes import DType
    from tilelang.runtime.tensor import normalise

    with np.errstate(all="ignore"):
        return normalise(x, DType.parse(dt))  # type: ignore[arg-type]


BINARY = ("pow", "atan2")  # (of the math built-ins of two operands; `fma`'s exactness is its own tests')


def _program(dt: str, d: Path) -> str:
    kernels, calls = [], []
    for f in (*UNARY_MATH, *BINARY):
        two = f in BINARY
        kernels.append(f"kernel fn k_{f}(z: &mut Tensor<{dt}, [{N}]>, x: &Tensor<{dt}, [{N}]>"
                       + (f", w: &Tensor<{dt}, [{N}]>" if two else "") + ") {\n    let t = x.load_like(z);\n"
                       + (f"    z.store({f}(t, w.load_like(z)));\n}}\n" if two else f"    z.store({f}(t));\n}}\n"))
        calls.append(f"    let mut z = zeros::<{dt}>([{N}]);\n"
                     f"    k_{f}(z.partition([{N}]), &x{', &w' if two else ''}).sync();\n"
                     f"    z.save_npy(\"{d}/{f}_kernel.npy\");\n"
                     f"    {f}(x{', w' if two else ''}).save_npy(\"{d}/{f}_tensor.npy\");\n"
                     f"    let mut s = zeros::<{dt}>([{N}]);\n"
                     f"    for i in 0..{N} {{ let v: {dt} = x[i]; "
                     + (f"let u: {dt} = w[i]; s = where(at == i, {f}(v, u), s); }}\n" if two else
                        f"s = where(at == i, {f}(v), s); }}\n")
                     + f"    s.save_npy(\"{d}/{f}_scalar.npy\");\n")
    return ("".join(kernels) + "\nfn main() {\n"
            f"    let l: Tensor<f64, [{N}]> = load_npy(\"{d}/x.npy\");\n    let x = l as {dt};\n"
            f"    let lw: Tensor<f64, [{N}]> = load_npy(\"{d}/w.npy\");\n    let w = lw as {dt};\n"
            f"    let at = arange::<i32>({N});\n" + "".join(calls) + "}\n")


def _bits(a: np.ndarray) -> np.ndarray:
    """Bits with every NaN one value (its payload is NumPy's, not a rule of the language)."""
    a = np.asarray(a)
    u = a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize]).copy()
    u[np.isnan(a)] = 0
    return u


@pytest.mark.parametrize("dt", DTYPES)
def test_host_scalar_tensor_and_kernel_math_agree_bit_for_bit(dt: str, tmp_path: Path) -> None:
    x, w = _inputs(dt, DTYPES.index(dt) + 5), _inputs(dt, DTYPES.index(dt) + 50)
    np.save(tmp_path / "x.npy", x.astype(np.float64))  # (exact: `as` gives the values back)
    np.save(tmp_path / "w.npy", w.astype(np.float64))
    status, _out, err = run_source(_program(dt, tmp_path))
    assert status == 0, err
    seen = set()
    for f in (*UNARY_MATH, *BINARY):
        kern, tens, scal = (np.load(tmp_path / f"{f}_{k}.npy") for k in ("kernel", "tensor", "scalar"))
        assert kern.dtype == np.dtype(STORE[dt]) and tens.dtype == kern.dtype and scal.dtype == kern.dtype, f
        for name, got in (("tensor", tens), ("scalar", scal)):
            bad = _bits(got) != _bits(kern)
            assert not bad.any(), (f, dt, name, x[bad][:4], got[bad][:4], kern[bad][:4])
        from tilelang.dtypes import DType

        with np.errstate(all="ignore"):  # and the one definition the three take (`num.math_values`, the op)
            dtype = DType.parse(dt)
            assert dtype is not None
            want = num.elementwise(ElemOp(f), [num.to_compute(x, dtype), num.to_compute(w, dtype)], dtype) \
                if f in BINARY else num.math_values(f, x, dtype)
        assert not (_bits(want.astype(kern.dtype)) != _bits(kern)).any(), (f, dt)
        seen.add(len(np.unique(_bits(kern))))
    assert max(seen) > N // 4  # (the inputs are varied: no function gave one value everywhere)


def test_the_scalar_form_was_what_differed() -> None:
    """The rule the test above checks is not vacuous: f32 `exp` in f32 (the kernels') and in f64 rounded once (the
    host scalar's before) differ on a good part of random inputs, as do NumPy's arcsin and the atan2 formula."""
    from tilelang.dtypes import DType

    x = np.random.default_rng(3).uniform(-10, 10, 4096).astype(np.float32)
    f32 = num.math_values("exp", x, DType.F32)
    f64 = np.exp(x.astype(np.float64)).astype(np.float32)
    assert (f32 != f64).mean() > 0.2
    y = np.random.default_rng(4).uniform(-1, 1, 4096)
    with np.errstate(all="ignore"):
        assert (num.math_values("asin", y, DType.F64) != np.arcsin(y)).any()


def test_a_bf16_scalar_result_is_a_bf16_value() -> None:
    status, out, err = run_source("fn main() {\n    let b: bf16 = 0.7;\n    let c = exp(b);\n"
                                  "    print(c as f64, exp(b as f32));\n}\n")
    assert status == 0, err
    # exp of bf16's 0.69921875 in f32, rounded to bf16 (as a kernel computes it); it was the f32 value 2.0121803
    assert out.split() == ["2.015625", "2.01218"]
