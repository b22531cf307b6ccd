"""Every method the signature table offers on host tensors (what `:help
builtins`, `tilec doc` and completion list) works on a host tensor, and
every function allowed in host code works on host tensors where it takes
them: the table and the host runtime cannot disagree again (`x.exp()` on a
host tensor used to be an error while the REPL's help listed it)."""

from __future__ import annotations

import io

import pytest

from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, Context
from tilelang.run import execute

# A call of each host-tensor method on `x` (2-D f32) or `v` (1-D f32).
METHOD_CALLS = {
    "partition": None,  # only meaningful as a kernel argument (tests/run, examples)
    "save_npy": None,  # writes a file (tests/run/npy_round_trip.tile)
    "shape": "x.shape()", "clone": "x.clone()", "reshape": "x.reshape([3, 2])",
    "broadcast": "v.reshape([3, 1]).broadcast([3, 2])", "transpose": "x.transpose()",
    "permute": "x.permute([1, 0])", "item": "v[0..1].item()", "cumsum": "x.cumsum(1)", "cumprod": "x.cumprod(0)", "cummax": "x.cummax(1)", "cummin": "x.cummin(0)",
    "pow": "x.pow(2.0)", "atan2": "x.atan2(v.reshape([1, 3]))",
    "sum": "x.sum(0)", "max": "x.max()", "min": "x.min(1)", "prod": "v.prod()",
    "argmax": "x.argmax()", "argmin": "v.argmin(0)",
}
UNARY = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "tanh", "sigmoid",
         "floor", "ceil", "erf", "asin", "acos", "atan")
METHOD_CALLS.update({u: f"x.{u}()" for u in UNARY})

FUNCTION_CALLS = {
    "zeros": "zeros::<f32>([2])", "ones": "ones::<i32>([2])", "full": "full::<f32>([2], 1.5)",
    "arange": "arange::<i32>(3)", "rand": "rand::<f32>([2], 1)", "randn": "randn::<f32>([2], 1)",
    "load_npy": None, "print": "print(x)", "assert": "assert(x.sum() > 0.0)",
    "assert_close": "assert_close(&x, &x)", "maximum": "maximum(x, 1.0)",
    "minimum": "minimum(x, v.reshape([1, 3]))", "where": "where(x > 1.0, x, 0.0)",
    "pow": "pow(x, 2.0)", "atan2": "atan2(x, 1.0)", "fma": "fma(x, x, 1.0)", "cumsum": "cumsum(v)", "cumprod": "cumprod(x, 1)", "cummax": "cummax(v)", "cummin": "cummin(x, 1)",
    "sum": "sum(x, 1)", "max": "max(x, 0)", "min": "min(v, 0)", "prod": "prod(x, 1)",
    "argmax": "argmax(v, 0)", "argmin": "argmin(x, 1)",
}
FUNCTION_CALLS.update({u: f"{u}(x)" for u in UNARY})

PRELUDE = "let x = arange::<f32>(6).reshape([2, 3]) + 1.0;\n    let v = arange::<f32>(3) + 1.0;\n    "


def _host_methods() -> list[str]:
    return sorted(n for n, s in METHODS.items() if s.context is not Context.KERNEL and "tensor" in s.receivers)


def _host_functions() -> list[str]:
    return sorted(n for n, s in FUNCTIONS.items() if s.context is not Context.KERNEL)


def test_every_host_tensor_method_and_host_function_has_a_sample() -> None:
    assert set(_host_methods()) <= set(METHOD_CALLS), set(_host_methods()) - set(METHOD_CALLS)
    assert set(_host_functions()) <= set(FUNCTION_CALLS), set(_host_functions()) - set(FUNCTION_CALLS)


@pytest.mark.parametrize("name", _host_methods())
def test_host_tensor_method_runs(name: str) -> None:
    call = METHOD_CALLS[name]
    if call is None:
        pytest.skip("covered elsewhere")
    out = io.StringIO()
    execute(f"fn main() {{\n    {PRELUDE}let r = {call};\n    print(r);\n}}\n", device="cpu", out=out,
            name=f"{name}.tile")
    assert out.getvalue().strip()


@pytest.mark.parametrize("name", _host_functions())
def test_host_function_runs(name: str) -> None:
    call = FUNCTION_CALLS[name]
    if call is None:
        pytest.skip("covered elsewhere")
    stmt = f"{call};" if name in ("print", "assert", "assert_close") else f"let r = {call};\n    print(r);"
    out = io.StringIO()
    execute(f"fn main() {{\n    {PRELUDE}{stmt}\n}}\n", device="cpu", out=out, name=f"{name}.tile")
