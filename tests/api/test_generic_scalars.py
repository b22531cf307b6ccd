"""A kernel scalar of the kernel's type parameter (`a: T`) through the Python
API: `T` comes from the arrays, or from a typed scalar (a NumPy scalar or a
0-D array) where only the scalar names it; a plain Python number that leaves
`T` open, or does not fit the `T` the arrays fixed, is refused with the fix;
calls with the same Python types but other dtypes do not share a plan."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

SRC = """
kernel fn axpy<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>, a: T) {
    z.store(x.load_like(z) * a + x.load_like(z));
}

kernel fn fill_as<T, const B: i32>(z: &mut Tensor<f32, [B]>, a: T) {
    z.store(full::<f32>([B], a as f32));
}
"""


@pytest.fixture(scope="module")
def mod() -> tilelang.Module:
    return tilelang.compile(SRC)


@pytest.mark.parametrize(("dt", "a", "want"), [(np.float16, 0.5, 1.5), (np.float32, -2.0, -1.0),
                                               (np.float64, 0.25, 1.25), (np.int32, 3, 4), (np.uint8, 7, 8)])
def test_t_comes_from_the_arrays(mod: tilelang.Module, dt: type, a: float, want: float) -> None:
    x = np.ones(40, dt)
    z = np.zeros(40, dt)
    for _ in range(2):  # the second call takes the cached plan
        z[:] = 0
        mod.axpy(tilelang.partition(z, [16]), x, a).sync()
        assert z.dtype == dt and np.all(z == want)


def test_a_float_for_an_integer_t_is_refused_on_every_call(mod: tilelang.Module) -> None:
    x = np.ones(16, np.int32)
    z = np.zeros(16, np.int32)
    mod.axpy(tilelang.partition(z, [16]), x, 2).sync()  # the plan for `T = i32` exists now
    for _ in range(2):
        with pytest.raises(tilelang.CallError, match=r"is an integer \(`i32`\), but it is 2.5"):
            mod.axpy(tilelang.partition(z, [16]), x, 2.5)


def test_t_from_a_typed_scalar_and_plans_kept_apart(mod: tilelang.Module) -> None:
    z = np.zeros(20, np.float32)
    got = []
    for v in (np.float16(1.1), np.float32(1.1), np.array(1.1, np.float16), np.array(1.1, np.float32),
              np.int64(3)):
        mod.fill_as(tilelang.partition(z, [8]), v).sync()
        got.append(float(z[0]))
    f16 = float(np.float32(np.float16(1.1)))
    assert got == [f16, float(np.float32(1.1)), f16, float(np.float32(1.1)), 3.0]


def test_t_from_the_explicit_generics(mod: tilelang.Module) -> None:
    z = np.zeros(8, np.float32)
    mod.fill_as[np.float16, 8](tilelang.partition(z, [8]), 1.1).sync()
    assert z[0] == np.float32(np.float16(1.1))


def test_a_plain_number_that_leaves_t_open_says_how_to_fix_it(mod: tilelang.Module) -> None:
    z = np.zeros(8, np.float32)
    with pytest.raises(tilelang.CallError, match=r"E0215.*cannot infer the type parameter `T`") as e:
        mod.fill_as(tilelang.partition(z, [8]), 1.5)
    assert "np.float32(1.5)" in str(e.value) and "fill_as[np.float32" in str(e.value)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("a", [2**64, -(2**70), 10**400], ids=["2**64", "-2**70", "10**400"])
def test_an_integer_beyond_64_bits_for_an_integer_t_is_refused(mod: tilelang.Module, dt: type, a: int) -> None:
    # hrev (2026-12-04): the first call for a key converted the number with
    # NumPy before the check against the bound `T` and raised OverflowError
    # (a traceback); 2**63 for `i64` was wrapped to -2**63 there
    x = np.ones(16, dt)
    z = np.zeros(16, dt)
    for _ in range(2):  # the first call builds the plan; the second takes it
        with pytest.raises(tilelang.CallError, match=r"argument `a` of kernel `axpy` is of type `[iu]\d+`, and "):
            mod.axpy(tilelang.partition(z, [16]), x, a)
        mod.axpy(tilelang.partition(z, [16]), x, 1).sync()
        assert np.all(z == 2)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_an_integer_beyond_the_float_t_is_refused(mod: tilelang.Module, dt: type) -> None:
    # hrev (2026-12-04), api_fuzzer seed 78: an int beyond f64 for a float `T`
    # raised OverflowError ("int too large to convert to float") on a key's first call
    x = np.ones(16, dt)
    z = np.zeros(16, dt)
    for _ in range(2):
        with pytest.raises(tilelang.CallError, match=r"is of type `f\d+`, and an integer of 401 digits is beyond"):
            mod.axpy(tilelang.partition(z, [16]), x, -(10**400))
        mod.axpy(tilelang.partition(z, [16]), x, 1).sync()
        assert np.all(z == 2)


def test_a_python_bool_fixes_t_as_bool_like_tiles_true(mod: tilelang.Module) -> None:
    # hrev (2026-12-04): a Python `True` for `a: T` was "a number of no fixed
    # type" (E0215, with the help `np.float32(True)`), while the same launch
    # in Tile (`fill_as(z.partition([8]), true)`) takes `T = bool`
    z = np.zeros(8, np.float32)
    for v, want in ((True, 1.0), (False, 0.0), (np.bool_(True), 1.0), (1.5, None)):
        if want is None:
            with pytest.raises(tilelang.CallError, match=r"E0215"):
                mod.fill_as(tilelang.partition(z, [8]), v)
            continue
        z[:] = 7
        mod.fill_as(tilelang.partition(z, [8]), v).sync()
        assert np.all(z == want)
    import io

    from tilelang.run import execute

    out = io.StringIO()
    execute(SRC + """
fn main() {
    let mut z = zeros::<f32>([8]);
    fill_as(z.partition([8]), true).sync();
    print(z.sum());
}
""", out=out)
    assert out.getvalue().strip() == "8.0"


def test_a_scalar_the_parameter_cannot_hold_has_a_code(mod: tilelang.Module) -> None:
    # hrev (2026-12-04 10:16): the scalar checks (a bool for a number, a float
    # for an integer, out of range) had no code. huser (2026-12-05 09:03): one
    # story for kernels and host functions, Tile's codes for a Tile caller's
    # same mistake: E0203 the wrong kind (it was E0502 for kernels, E0203 for
    # host functions), E0222 out of range (`k(.., 1099511627776)` in Tile)
    z = np.zeros(16, np.float32)
    x = np.ones(16, np.float32)
    for bad in (True, 2.5j, "a"):
        with pytest.raises(tilelang.CallError, match=r"^error\[E0203\]: argument `a` of kernel `axpy`"):
            mod.axpy(tilelang.partition(z, [16]), x, bad)
    zi = np.zeros(16, np.int32)
    with pytest.raises(tilelang.CallError, match=r"^error\[E0203\]: .* is an integer \(`i32`\), but it is 2.5"):
        mod.axpy(tilelang.partition(zi, [16]), np.ones(16, np.int32), 2.5)
    with pytest.raises(tilelang.CallError, match=r"^error\[E0222\]: .* `i32`, and 2147483648 does not fit"):
        mod.axpy(tilelang.partition(zi, [16]), np.ones(16, np.int32), 2**31)
    with pytest.raises(tilelang.CallError, match=r"^error\[E0222\]: .* beyond its largest finite value"):
        mod.axpy(tilelang.partition(z, [16]), x, 10**40)
    host = tilelang.compile("fn twice(n: i32) -> i32 {\n    n * 2\n}\n")
    assert host.twice(21) == 42
    with pytest.raises(tilelang.CallError, match=r"^error\[E0203\]: argument `n` of function `twice`"):
        host.twice(2.5)
    with pytest.raises(tilelang.CallError, match=r"^error\[E0222\]: argument `n` of function `twice`"):
        host.twice(2**31)
