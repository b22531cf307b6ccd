"""The f64 transcendental functions of the GPU backend (`backend/f64math.py`),
checked without a GPU: the very LLVM text the backend emits is JIT-compiled
for this CPU (the functions use target-independent LLVM only) and compared
with NumPy, the interpreter's f64 math, on hundreds of thousands of inputs
per function and on the special values, at the tolerance that
`fastmath.F64_MATH` promises.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pytest

from tilelang.backend import f64math
from tilelang.backend.fastmath import F64_MATH, tolerance
from tilelang.dtypes import DType


class HostEmitter:
    """The part of the backend's emitter that `f64math` uses."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.decls: set[str] = set()
        self.n = 0
        self.cur = "loop"  # the block being written (`loop_module`'s body starts in `loop`)

    def tmp(self) -> str:
        self.n += 1
        return f"%t{self.n}"

    def emit(self, instr: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {instr}")
        return name

    def new_label(self, hint: str) -> str:
        self.n += 1
        return f"{hint}{self.n}"

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.cur = name

    def br(self, target: str) -> None:
        self.lines.append(f"  br label %{target}")

    def cbr(self, cond: str, a: str, b: str) -> None:
        self.lines.append(f"  br i1 {cond}, label %{a}, label %{b}")

    def declare(self, decl: str) -> None:
        self.decls.add(decl)

    def fcall(self, name: str, ty: str, args: list[str]) -> str:
        sfx = "f32" if ty == "float" else "f64"
        self.declare(f"declare {ty} @llvm.{name}.{sfx}({', '.join([ty] * len(args))})")
        return self.emit(f"call {ty} @llvm.{name}.{sfx}({', '.join(f'{ty} {a}' for a in args)})")


def loop_module(em: HostEmitter, res: str, *, arity: int = 1, in_ty: str = "double",
                out_ty: str = "double") -> str:
    """`void @f(ptr in[, ptr in2], ptr out, i64 n)`: out[i] = the code `em`
    emitted (reading in[i] as `%x` and in2[i] as `%y`), whose value is `res`."""
    ins = ["in", "in2"][:arity]
    loads = "".join(f"  %p{v} = getelementptr {in_ty}, ptr %{name}, i64 %i\n  %{v} = load {in_ty}, ptr %p{v}\n"
                    for name, v in zip(ins, "xy"[:arity], strict=True))
    params = ", ".join([*(f"ptr %{name}" for name in ins), "ptr %out", "i64 %n"])
    body = "\n".join(em.lines)
    return "\n".join(sorted(em.decls)) + f"""
define void @f({params}) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
{loads}{body}
  br label %latch
latch:
  %po = getelementptr {out_ty}, ptr %out, i64 %i
  store {out_ty} {res}, ptr %po
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret void
}}
"""


_KEEP: list[object] = []


def compile_loop(text: str, arity: int = 1) -> Callable[..., None]:
    """JIT-compile a `loop_module` for this CPU (no fast-math rewrites): a
    function of the arrays' addresses and their length."""
    llvm = pytest.importorskip("llvmlite.binding")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine(opt=0)
    mod = llvm.parse_assembly(text)
    mod.verify()
    ee = llvm.create_mcjit_compiler(mod, tm)
    ee.finalize_object()
    _KEEP.append(ee)
    ptrs = [ctypes.c_void_p] * (arity + 1)
    return ctypes.CFUNCTYPE(None, *ptrs, ctypes.c_int64)(ee.get_function_address("f"))


def jit(op: str) -> Callable[[np.ndarray], np.ndarray]:
    em = HostEmitter()
    fn = compile_loop(loop_module(em, f64math.FUNCS[op](em, "%x")))

    def run(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty_like(x)
        fn(x.ctypes.data, out.ctypes.data, x.size)
        return out

    return run


def _math_erf(x: np.ndarray) -> np.ndarray:
    import math

    return np.array([math.erf(v) if not math.isnan(v) else math.nan for v in x.tolist()])


REF: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "erf": _math_erf,  # Python's libm erf: the true value to an ulp
}

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1.5, 3.0, 5e-324, 1e-310,
           2.2250738585072014e-308, 709.78, 709.79, -745.1, -745.2, 1e300, -1e300, 1024.0, -1075.0]


def inputs(op: str) -> np.ndarray:
    r = np.random.default_rng(5)
    n = 100_000
    if op in ("exp", "sigmoid", "tanh"):
        xs = [r.uniform(-745, 710, n), r.uniform(-30, 30, n), r.uniform(-1, 1, n), r.normal(0, 1e-5, n)]
    elif op == "exp2":
        xs = [r.uniform(-1075, 1024, n), r.uniform(-2, 2, n)]
    elif op == "erf":
        xs = [r.uniform(-7, 7, n), r.uniform(-2, 2, n), r.normal(0, 1e-3, n), r.uniform(1.4, 1.6, 9999)]
    elif op in ("log", "log2", "rsqrt"):
        xs = [np.exp(r.uniform(-745, 709, n)), r.uniform(0.5, 2, n), 1 + r.normal(0, 1e-8, n), -r.uniform(0, 9, 99)]
    else:
        xs = [r.uniform(-10, 10, n), r.uniform(-1e6, 1e6, n), r.uniform(-1e15, 1e15, n)]
    special = [v for v in SPECIAL if op not in ("sin", "cos") or not abs(v) >= 2.0**50]
    return np.concatenate([*xs, np.array(special)])


def test_every_f64_transcendental_has_a_table_entry() -> None:
    assert set(f64math.FUNCS) <= set(F64_MATH)
    assert tolerance("exp", DType.F64) == (F64_MATH["exp"].rtol, F64_MATH["exp"].atol)


@pytest.mark.parametrize("op", sorted(f64math.FUNCS))
def test_f64_math_matches_numpy(op: str) -> None:
    x = inputs(op)
    with np.errstate(all="ignore"):
        got, want = jit(op)(x), REF[op](x)
    # NaN exactly where NumPy gives NaN, infinities exactly, the rest within the promise
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{op}: NaN placement")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{op}: infinities")
    fin = np.isfinite(want)
    rtol, atol = F64_MATH[op].rtol, F64_MATH[op].atol
    if op in ("exp", "exp2"):
        # subnormal results: within one unit of the smallest subnormal
        atol = max(atol, 5e-324)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol, err_msg=op)
    # and the worst case is what the table's comment claims: a few ulp
    normal = fin & (np.abs(want) > 1e-300)
    if op in ("sin", "cos"):
        normal &= np.abs(want) > 1e-3  # near their zeros the error is absolute
    rel = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max() <= 5e-16, f"{op}: worst relative error {rel.max():.3g}"


def test_sin_and_cos_are_nan_beyond_their_domain() -> None:
    x = np.array([2.0**50, -(2.0**50), 1e300, 2.0**50 - 1])
    for op in ("sin", "cos"):
        got = jit(op)(x)
        assert np.isnan(got[:3]).all() and np.isfinite(got[3])
        np.testing.assert_allclose(got[3], REF[op](x[3:]), atol=1e-15)


def _f64_math_ptx(arch: str) -> str:
    from tilelang.backend import compile_kernel
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    b = Builder("f64math")
    b.tensor_param("z", DType.F64, 1, mutable=True, tile_shape=(128,))
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    x = b.load("z", (off,), (128,))
    for op in sorted(f64math.FUNCS):
        x = b.elementwise(ir.ElemOp(op), x)
    b.store("z", (off,), x)
    ptx = compile_kernel(b.finish(), arch).ptx
    # CHECK: no f32 approximation sneaks into f64 math
    assert "ex2.approx" not in ptx and "lg2.approx" not in ptx and "sin.approx" not in ptx
    return ptx


def test_f64_math_assembles_for_the_gpu() -> None:
    """sm_90's PTX assembles; sm_80's is the same text but the `.target` line (so its own ptxas run, 1.2 CPU-s,
    is the heavy test below, as test_ptx's twins are)."""
    from tilelang.backend.target import ptxas_available, run_ptxas

    ptx, ptx80 = _f64_math_ptx("sm_90"), _f64_math_ptx("sm_80")
    assert ptx80.replace(".target sm_80", ".target ?", 1) == ptx.replace(".target sm_90", ".target ?", 1)
    if ptxas_available():
        r = run_ptxas(ptx, "sm_90")
        assert r.returncode == 0, r.stderr


@pytest.mark.heavy  # (its PTX is sm_90's but the target line: test_f64_math_assembles_for_the_gpu)
def test_f64_math_assembles_for_sm_80() -> None:
    from tilelang.backend.target import ptxas_available, run_ptxas

    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    r = run_ptxas(_f64_math_ptx("sm_80"), "sm_80")
    assert r.returncode == 0, r.stderr


def test_f64_to_f32_round_to_odd_matches_the_interpreter() -> None:
    """The first half of the backend's f64 -> bf16 cast (then f32 -> bf16 to
    nearest is one hardware conversion): JIT-compiled for the host and
    compared bit for bit with `interp.numeric.f64_to_f32_odd`."""
    pytest.importorskip("llvmlite.binding")
    from tilelang.backend.llvm import _Emitter
    from tilelang.interp.numeric import f64_to_f32_odd

    em = HostEmitter()
    res = _Emitter.f64_to_f32_odd(em, "%x")  # type: ignore[arg-type]
    fn = compile_loop(loop_module(em, res, out_ty="float"))
    r = np.random.default_rng(2)
    x = np.concatenate([r.standard_normal(100_000) * 10.0 ** r.integers(-40, 40, 100_000),
                        np.array([0.0, -0.0, np.inf, -np.inf, 1e300, -1e300, 1e-300, 3.4028235677973366e38,
                                  1.0 + 2.0**-30, 2.0**-149, 2.0**-150])])
    out = np.empty(x.size, np.float32)
    fn(x.ctypes.data, out.ctypes.data, x.size)
    with np.errstate(all="ignore"):
        want = f64_to_f32_odd(x)
    want = np.asarray(want, np.float32)
    # bit for bit where f32 does not overflow (there the interpreter says inf,
    # this says the largest odd f32; both round to the same bf16: inf)
    fits = np.abs(x) < 3.4e38
    np.testing.assert_array_equal(out[fits].view(np.uint32), want[fits].view(np.uint32))
    from tilelang.interp.numeric import round_bf16

    np.testing.assert_array_equal(round_bf16(out).view(np.uint32), round_bf16(want).view(np.uint32))


@pytest.mark.parametrize("ty", ["float", "double"])
def test_fmod_is_exact_like_numpy(ty: str) -> None:
    """`rem` on f32 and f64 (`_Emitter.fmod_f32` / `fmod_f64`), JIT-compiled
    for the host, equals np.fmod bit for bit: small and huge quotients (the
    loop past 2^52: 3e38 % 1e-45, 1e308 % 5e-324), subnormals, signed zeros
    and the special values."""
    pytest.importorskip("llvmlite.binding")
    from tilelang.backend.llvm import _Emitter

    class FmodEmitter(HostEmitter):  # the helpers fmod calls through `self`
        fmod_f64 = _Emitter.fmod_f64
        fmod_reduce = _Emitter.fmod_reduce
        fexponent = _Emitter.fexponent

    em = FmodEmitter()
    res = (em.fmod_f64("%x", "%y") if ty == "double"  # type: ignore[arg-type]
           else _Emitter.fmod_f32(em, "%x", "%y"))  # type: ignore[arg-type]
    fn = compile_loop(loop_module(em, res, arity=2, in_ty=ty, out_ty=ty), arity=2)
    npt, bits = (np.float32, np.uint32) if ty == "float" else (np.float64, np.uint64)
    top = 38 if ty == "float" else 300
    r = np.random.default_rng(4)
    n = 200_000
    x = r.standard_normal(n) * 10.0 ** r.integers(-5, 6, n)
    y = r.standard_normal(n) * 10.0 ** r.integers(-5, 3, n)
    wide = n // 4  # exponents over the whole range: quotients up to 2^277 (f32), 2^2000 (f64)
    x[:wide] = r.standard_normal(wide) * 10.0 ** r.uniform(-top - 6, top, wide)
    y[:wide] = r.standard_normal(wide) * 10.0 ** r.uniform(-top - 6, top, wide)
    tiny = float(np.finfo(npt).smallest_subnormal)
    sx = [0.0, -0.0, 5.0, -5.0, np.inf, -np.inf, np.nan, 1.0, -4.0, 7.5, tiny, 3e38, -3e38, 1e-30, 3.0 - 2**-20, -0.0]
    sy = [1.0, 1.0, np.inf, -np.inf, 2.0, 2.0, 1.0, np.nan, 2.0, 0.0, tiny, tiny, 1e-3, tiny, 1.0, tiny]
    with np.errstate(all="ignore"):
        x, y = np.concatenate([x, sx]).astype(npt), np.concatenate([y, sy]).astype(npt)
    out = np.empty_like(x)
    fn(x.ctypes.data, y.ctypes.data, out.ctypes.data, x.size)
    with np.errstate(all="ignore"):
        want = np.fmod(x, y)
        q = np.abs(x.astype(np.float64) / y.astype(np.float64))
    assert np.sum(q >= 2.0**60) > n // 20  # the loop's quotients are there
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    fin = ~np.isnan(want)
    np.testing.assert_array_equal(out[fin].view(bits), want[fin].view(bits))


def _fma_inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.random.default_rng(6)
    a, b, c = (r.standard_normal(2000) for _ in range(3))  # full f64 mantissas: a*b is inexact
    return a, b, c


def _fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    from fractions import Fraction

    return np.array([float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c, strict=True)])


def test_interpreter_f64_fma_rounds_once() -> None:
    from tilelang.interp.numeric import elementwise
    from tilelang.ir.nodes import ElemOp

    a, b, c = _fma_inputs()
    got = elementwise(ElemOp.FMA, [a, b, c], DType.F64)
    np.testing.assert_array_equal(got, _fma_exact(a, b, c))


def jit_binary() -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """`pow` of two f64 arrays through the backend's f64math.pow, JIT-compiled."""
    em = HostEmitter()
    fn = compile_loop(loop_module(em, f64math.pow(em, "%x", "%y"), arity=2), arity=2)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        out = np.empty_like(x)
        fn(x.ctypes.data, y.ctypes.data, out.ctypes.data, x.size)
        return out

    return run


def test_pow_matches_numpy_with_ieee_special_cases() -> None:
    r = np.random.default_rng(9)
    n = 50_000
    specials = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan, 1e-310]
    sx, sy = np.meshgrid(specials, specials)
    x = np.concatenate([r.uniform(0, 10, n), -r.integers(1, 20, n).astype(float), r.uniform(-5, 5, n),
                        sx.ravel()])
    y = np.concatenate([r.uniform(-20, 20, n), r.integers(-10, 10, n).astype(float), r.uniform(-3, 3, n),
                        sy.ravel()])
    with np.errstate(all="ignore"):
        got, want = jit_binary()(x, y), np.power(x, y)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg="NaN placement")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg="infinities")
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]), err_msg="signed zeros")
    fin = np.isfinite(want) & (want != 0)
    np.testing.assert_allclose(got[fin], want[fin], rtol=F64_MATH["pow"].rtol, atol=F64_MATH["pow"].atol)


def test_f32_erf_and_pow_are_the_f64_ones_rounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend computes f32 pow (and, under `TILEC_ERF_F32=0`, erf) in f64 and rounds once: within
    fastmath's f32 promise of the interpreter (which rounds the same f64 erf there)."""
    monkeypatch.setenv("TILEC_ERF_F32", "0")
    from tilelang.backend.fastmath import MATH
    from tilelang.interp.numeric import elementwise
    from tilelang.ir.nodes import ElemOp

    x = np.linspace(-6, 6, 20001)
    gpu_erf = jit("erf")(x).astype(np.float32)
    interp = elementwise(ElemOp.ERF, [x.astype(np.float32)], DType.F32)
    np.testing.assert_allclose(gpu_erf, interp, rtol=MATH["erf"].rtol, atol=1e-7)
    xp, yp = np.abs(x).astype(np.float32) + 0.5, np.linspace(-4, 4, 20001).astype(np.float32)
    with np.errstate(all="ignore"):
        gpu_pow = jit_binary()(xp.astype(np.float64), yp.astype(np.float64)).astype(np.float32)
        interp_pow = elementwise(ElemOp.POW, [xp, yp], DType.F32)
    np.testing.assert_allclose(gpu_pow, interp_pow, rtol=MATH["pow"].rtol)


def test_erf_and_pow_assemble_for_the_gpu_in_every_float_type() -> None:
    from tilelang.backend import compile_kernel
    from tilelang.backend.target import ptxas_available, run_ptxas
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    for dt in (DType.F16, DType.BF16, DType.F32, DType.F64):
        b = Builder(f"erf_pow_{dt.value}")
        b.tensor_param("z", dt, 1, mutable=True, tile_shape=(128,))
        off = b.mul(b.block_id(0), b.const(128, DType.I32))
        x = b.load("z", (off,), (128,))
        y = b.elementwise(ir.ElemOp.ERF, x)
        b.store("z", (off,), b.elementwise(ir.ElemOp.POW, x, y))
        ptx = compile_kernel(b.finish(), "sm_80").ptx
        if ptxas_available():
            r = run_ptxas(ptx, "sm_80")
            assert r.returncode == 0, r.stderr
