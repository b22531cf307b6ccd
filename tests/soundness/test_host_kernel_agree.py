"""The host and a kernel give one answer to one expression (hrev round 11).

`&&` and `||` of `bool` tiles are element-wise; of host `bool` tensors they
were refused ("not supported on host tensors", E0204): one rule now, the
tiles' (both sides evaluated, element-wise). The neighbouring rules that
differed (`abs` of `bool`, unsigned negation in generic instances, a host
type's `N / 0`) are `tests/ui/types/abs_of_bool.tile`,
`generic_instance_neg_unsigned.tile`, `tests/soundness/test_generic_host_domain.py`
and `tests/ui/kernel/zero_divisor_host_type.tile`. Every other operator, on
every element type, on edge values (MIN/MAX, NaN, +-inf, -0.0, shifts past the
width): a host tensor's result is the kernel's, bit for bit (three types by
default, all eleven with TILE_SLOW=1; integer `x / 0` and `x % 0` left out: the
host refuses them, E0715, the kernel gives 0 and `x`).
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import tilelang
from tilelang.run import execute

SRC = """
kernel fn logic<const B: i32>(z: &mut Tensor<bool, [B]>, a: &Tensor<bool, [?]>, b: &Tensor<bool, [?]>) {
    let x = a.load_like(z);
    let y = b.load_like(z);
    z.store(x && y || !x && true);
}

fn host(a: &Tensor<bool, [?]>, b: &Tensor<bool, [?]>) -> Tensor<bool, [?]> {
    a && b || !a && true
}

fn main() {
    let a = arange::<i32>(8) % 2 == 0;
    let b = arange::<i32>(8) < 5;
    let mut z = zeros::<bool>([8]);
    logic(z.partition([4]), &a, &b).sync();
    print(z);
    print(host(&a, &b));
    print(false && b, b || false);
}
"""


def test_logical_operators_of_host_tensors_are_the_tiles() -> None:
    out = io.StringIO()
    execute(SRC, "cpu", out=out, name="agree.tile")
    kernel, host, rest = out.getvalue().strip().splitlines()
    assert kernel == host == "Tensor<bool, [8]> [ true,  true,  true,  true,  true,  true, false,  true]"
    # a scalar beside a tensor: both sides run, element-wise (no short circuit to a scalar)
    assert rest == ("Tensor<bool, [8]> [false, false, false, false, false, false, false, false] "
                    "Tensor<bool, [8]> [ true,  true,  true,  true,  true, false, false, false]")


# -- every operator on edge values: a host tensor's result is the kernel's, bit for bit
NP = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
      "i64": np.int64, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
BIN = ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", ">=", "maximum", "minimum"]
DEFAULT = ("i8", "u32", "f16")  # the rest: TILE_SLOW=1


def _edges(t: str) -> np.ndarray:
    d = np.dtype(NP[t])
    if d.kind == "f":
        with np.errstate(over="ignore"):
            return np.array([0.0, -0.0, 1.0, -1.5, 2.5, 1e30, -1e-30, np.inf, -np.inf, np.nan, 7.0, 65504.0,
                             3.0, -2.0]).astype(d)
    info = np.iinfo(d)
    v = [0, 1, 2, 3, 7, 8, 31, 63, 64, 65, info.max, info.max - 1, info.min, info.min + 1]
    return np.array(v + ([-1, -7, -8, -33] if info.min < 0 else []), dtype=object).astype(d)


def _ops(t: str) -> list[tuple[str, bool]]:
    """(expression, gives bool) of `x`, `y` for element type `t`."""
    isf = t.startswith("f")
    out = [(f"{o}(x, y)" if o in ("maximum", "minimum") else f"x {o} y", o in ("==", "!=", "<", ">="))
           for o in BIN if not (isf and o in ("<<", ">>", "&", "|", "^"))]
    out.append(("abs(x)", False))
    if not t.startswith("u"):
        out.append(("-x", False))
    if not isf:
        out.append(("!x", False))
    return out


@pytest.mark.parametrize("t", [t if t in DEFAULT else pytest.param(t, marks=pytest.mark.heavy) for t in NP])
def test_every_operator_on_edge_values_gives_the_kernels_bits(t: str) -> None:
    ops = _ops(t)
    src = "".join(
        f"kernel fn k{q}<const N: i32>(z: &mut Tensor<{'bool' if b else t}, [N]>, a: &Tensor<{t}, [?]>, "
        f"b: &Tensor<{t}, [?]>) {{\n    let x = a.load_like(z);\n    let y = b.load_like(z);\n    z.store({e});\n}}\n"
        f"fn h{q}(x: &Tensor<{t}, [?]>, y: &Tensor<{t}, [?]>) -> Tensor<{'bool' if b else t}, [?]> {{ {e} }}\n"
        for q, (e, b) in enumerate(ops))
    m = tilelang.compile(src)
    v = _edges(t)
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    for q, (e, gives_bool) in enumerate(ops):
        z = np.zeros(len(a), bool if gives_bool else NP[t])
        getattr(m, f"k{q}")(tilelang.partition(z, [len(a)]), a, b).sync()
        keep = np.ones(len(a), bool)
        if e in ("x / y", "x % y") and not t.startswith("f"):
            keep = b != 0  # the host's x / 0 is E0715, the kernel's 0 (the reference's Numbers)
        h = np.asarray(getattr(m, f"h{q}")(a[keep], b[keep]))
        assert h.dtype == z.dtype and np.array_equal(z[keep].view(np.uint8), h.view(np.uint8)), (t, e)


CASTS = (*NP, "bool")
CAST_EDGES = [0.5, 1.5, 2.5, -0.5, -2.5, 255.5, 256.0, -129.0, 4294967295.0, 4294967296.0, 2.0**63, -2.0**63,
              2.0**64, 9.2e18, 1.8e19, 3.0e38, -3.0e38]


@pytest.mark.parametrize("s", [s if s in ("f32", "i64") else pytest.param(s, marks=pytest.mark.heavy)
                               for s in CASTS])
def test_every_cast_on_edge_values_gives_the_kernels_bits(s: str) -> None:
    """`x as T` of a host tensor and of a tile, from `s` to every type
    (saturating float-to-int, NaN to 0, rounding to f16 and bf16 ..)."""
    src = "".join(
        f"kernel fn k{q}<const N: i32>(z: &mut Tensor<{t}, [N]>, a: &Tensor<{s}, [?]>) {{\n"
        f"    z.store(a.load_like(z) as {t});\n}}\n"
        f"fn h{q}(x: &Tensor<{s}, [?]>) -> Tensor<{t}, [?]> {{ x as {t} }}\n"
        for q, t in enumerate(CASTS))
    m = tilelang.compile(src)
    if s == "bool":
        a = np.array([True, False])
    else:
        a = _edges(s)
        if s.startswith("f"):
            with np.errstate(over="ignore"):
                a = np.concatenate([a, np.array(CAST_EDGES).astype(NP[s])])
    for q, t in enumerate(CASTS):
        z = np.zeros(len(a), NP.get(t, np.bool_))
        getattr(m, f"k{q}")(tilelang.partition(z, [len(a)]), a).sync()
        h = np.asarray(getattr(m, f"h{q}")(a))
        assert h.dtype == z.dtype and np.array_equal(z.view(np.uint8), h.view(np.uint8)), (s, t)


WIDE_SELECT = """
kernel fn k(z: &mut Tensor<u64, [2]>, y: &Tensor<u64, [?]>, v: u64) {
    let t = y.load_like(z);
    z.store(maximum(t, 1) ^ minimum(t, v) ^ where(t > 5u64, 7u64, t));
}
fn host(y: &Tensor<u64, [?]>, v: u64) -> Tensor<u64, [?]> {
    maximum(y, 1) ^ minimum(y, v) ^ where(y > 5u64, 7u64, y)
}
fn main() {
    let y = full::<u64>([2], 1027939206142677147u64);
    let mut z = zeros::<u64>([2]);
    k(z.partition([2]), &y, 18446744073709551615u64).sync();
    print(z);
    print(host(&y, 18446744073709551615u64));
    print(maximum(y, 1), maximum(full::<i64>([1], -9007199254740993i64), -9007199254740995));
}
"""


def test_maximum_of_a_wide_integer_tensor_and_a_scalar_keeps_its_bits() -> None:
    """`maximum(y, 1)` of a `u64` host tensor: NumPy made the scalar an `int64`
    array and the result `float64`, so 1027939206142677147 came back as
    ..120 (the kernel kept it); an `i64` one past 2^53 too. The scalar takes
    the tensor's type first now, as the operators' does (hostile review, round
    14; found by `benchmarks/kernel_diff.py --host`)."""
    out = io.StringIO()
    execute(WIDE_SELECT, "cpu", out=out, name="w.tile")
    kernel, host, plain = out.getvalue().strip().splitlines()
    assert kernel == host, (kernel, host)
    assert plain == ("Tensor<u64, [2]> [1027939206142677147, 1027939206142677147] "
                     "Tensor<i64, [1]> [-9007199254740993]"), plain
