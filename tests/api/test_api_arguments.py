"""Python API arguments that used to escape as Python errors or internal
errors (issue 12): each is a `tilelang.TileError` subclass (or a `TypeError`
for an argument of the wrong Python type) whose message says what to do."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

SRC = """
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32) {
    z.store(x.load_like(z) * s);
}

kernel fn ar<const N: i32>(z: &mut Tensor<i32, [4]>) {
    let t = arange::<i32>(N);
    z.store(zeros::<i32>([4]) + t.sum(0));
}

fn host_add(a: f32, b: f32) -> f32 { a + b }

fn host_small(a: i8) -> i8 { a }

fn host_n<const N: i32>() -> i32 { N }
"""


@pytest.fixture(scope="module")
def mod() -> tilelang.Module:
    return tilelang.compile(SRC)


def _z() -> np.ndarray:
    return np.zeros(8, np.float32)


def test_partition_of_none_is_a_call_error() -> None:
    with pytest.raises(tilelang.CallError, match="a tile shape is a list of positive integers"):
        tilelang.partition(_z(), None)  # type: ignore[arg-type]
    with pytest.raises(tilelang.CallError):
        tilelang.partition(_z(), 2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [10**40, 10**400, -(10**39)])
def test_a_huge_int_for_an_f32_scalar_is_refused(mod: tilelang.Module, value: int) -> None:
    x = np.ones(8, np.float32)
    with pytest.raises(tilelang.CallError, match="beyond its largest finite value") as e:
        mod.scale(tilelang.partition(_z(), [4]), x, value).sync()
    assert 'float("inf")' in str(e.value)
    with pytest.raises(tilelang.CallError, match="beyond its largest finite value"):
        mod.host_add(value, 1.0)


def test_infinity_itself_is_fine(mod: tilelang.Module) -> None:
    z = _z()
    mod.scale(tilelang.partition(z, [4]), np.ones(8, np.float32), float("inf")).sync()
    assert np.isinf(z).all()


def test_a_complex_scalar_is_refused_not_truncated(mod: tilelang.Module) -> None:
    with pytest.raises(tilelang.CallError, match="complex"):
        mod.scale(tilelang.partition(_z(), [4]), np.ones(8, np.float32), 1 + 2j).sync()
    with pytest.raises(tilelang.CallError, match=r"complex number \(1\+1j\)"):
        mod.host_add(1 + 1j, 2.0)
    with pytest.raises(tilelang.CallError, match="does not fit"):
        mod.host_small(300)
    assert mod.host_add(np.float32(1.5), 2) == 3.5


@pytest.mark.parametrize("n", [0, -3])
def test_explicit_generics_of_zero_or_below_are_e0212_not_an_ice(mod: tilelang.Module, n: int) -> None:
    z = np.zeros(8, np.int32)
    with pytest.raises(tilelang.CallError) as e:
        mod.ar[n](tilelang.partition(z, [4])).sync()
    text = str(e.value)
    assert "error[E0212]" in text and f"tile dimension {n} is not positive" in text
    assert "ill-formed IR" not in text and "positive values" in text


@pytest.mark.parametrize("n", [2**31, 2**40, -(2**31) - 1])
def test_explicit_generics_past_i32_are_refused_not_wrapped(mod: tilelang.Module, n: int) -> None:
    # they became `i32` at the launch: `ar[2**31]` ran with N = -2147483648, `ar[2**40]` with 0
    z = np.zeros(8, np.int32)
    with pytest.raises(tilelang.CallError, match=rf"E0222.*const generic `N` of kernel `ar` is an `i32`, "
                       rf"which cannot hold {n}"):
        mod.ar[n](tilelang.partition(z, [4]))
    with pytest.raises(tilelang.CallError, match=rf"E0222.*`N` of function `host_n`.*cannot hold {n}"):
        mod.host_n[{"N": n}]()
    assert mod.host_n[2**31 - 1]() == 2**31 - 1


def test_compile_of_bytes_says_decode() -> None:
    with pytest.raises(TypeError, match=r"decode it first: `source.decode\(\)`"):
        tilelang.compile(b"fn main() {}")  # type: ignore[arg-type]


def test_an_unknown_device_is_a_device_error() -> None:
    with pytest.raises(tilelang.DeviceError, match='"cpu", "gpu" or "auto", not \'tpu\'') as e:
        tilelang.compile(SRC, device="tpu")
    assert isinstance(e.value, tilelang.TileError) and isinstance(e.value, ValueError)


def test_a_big_endian_array_is_named_with_the_fix(mod: tilelang.Module) -> None:
    x = np.ones(8, np.float32).astype(">f4")
    with pytest.raises(tilelang.CallError) as e:
        mod.scale(tilelang.partition(_z(), [4]), x, 1.0).sync()
    text = str(e.value)
    assert "big-endian float32 array" in text and "x.astype(numpy.float32)" in text
    z = _z()
    mod.scale(tilelang.partition(z, [4]), x.astype(np.float32), 1.0).sync()  # the fix works


def test_load_of_a_missing_file_is_a_compile_error_like_a_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for path in (tmp_path / "nope.tile", tmp_path):
        with pytest.raises(tilelang.CompileError, match="couldn't read"):
            tilelang.load(path)


@pytest.mark.parametrize("value", [np.zeros(1, "V4")[0], np.str_("1.0"), np.datetime64(1, "s")])
def test_a_numpy_scalar_that_is_not_a_number_is_refused(mod: tilelang.Module, value: object) -> None:
    with pytest.raises(tilelang.CallError, match="is a number"):
        mod.host_add(value, 1.0)
    with pytest.raises(tilelang.CallError):
        mod.scale(tilelang.partition(_z(), [4]), np.ones(8, np.float32), value).sync()


def test_the_callers_numpy_error_state_does_not_reach_the_runtime(mod: tilelang.Module) -> None:
    # 5e-324 rounds to 0 in f32 (an underflow): a defined result, not a
    # FloatingPointError, even under np.seterr(all="raise").
    z = _z()
    with np.errstate(all="raise"):
        mod.scale(tilelang.partition(z, [4]), np.ones(8, np.float32), 5e-324).sync()
        mod.scale(tilelang.partition(z, [4]), np.full(8, 3e38, np.float32), 10.0).sync()
    assert np.isinf(z).all()


def test_a_generic_instance_without_the_operation_is_e0204_not_an_ice() -> None:
    gen = tilelang.compile(
        "kernel fn bits<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {\n"
        "    z.store(x.load_like(z) ^ x.load_like(z));\n}\n")
    z = np.ones(8, np.int32)
    gen.bits(tilelang.partition(z, [4]), np.arange(8, dtype=np.int32)).sync()
    assert not z.any()
    with pytest.raises(tilelang.TileError) as e:
        gen.bits(tilelang.partition(np.ones(8, np.float32), [4]), np.ones(8, np.float32)).sync()
    text = str(e.value)
    assert "E0204" in text and "`^` is not defined on `f32`" in text and "ill-formed" not in text


def test_argument_list_errors_carry_the_languages_codes(mod: tilelang.Module) -> None:
    """The argument-list errors of a kernel or host function call from Python
    have the codes the checker gives the same mistake in a `.tile` call (the
    hostile review, 2026-12-04: they had none), each with a help line."""
    z, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    P = tilelang.partition
    cases = [
        (lambda: mod.scale[4](P(z, [4]), x, 1.0, 2.0), "E0105", "takes 3 arguments"),
        (lambda: mod.scale[4](P(z, [4]), x), "E0105", "missing argument `s`"),
        (lambda: mod.scale[4](P(z, [4]), x, 1.0, t=2.0), "E0107", "has no parameter `t`"),
        (lambda: mod.scale[4](P(z, [4]), x, 1.0, s=2.0), "E0106", "given twice"),
        (lambda: mod.host_add(1.0), "E0105", "missing argument `b`"),
        (lambda: mod.host_add(1.0, 2.0, 3.0), "E0105", "takes 2 arguments"),
    ]
    for call, code, text in cases:
        with pytest.raises(tilelang.CallError) as info:
            call()
        e = info.value
        assert e.code == code and text in e.message and e.help, (code, str(e))
        assert str(e).startswith(f"error[{code}]: ")


@pytest.mark.parametrize(("dt", "value", "stored"), [
    ("f16", 65519.0, 65504.0), ("f16", 65519, 65504.0), ("f16", np.float32(65519.0), 65504.0),
    ("f32", 3.4028234663852886e38 + 1e30, np.float32(3.4028235e38)),
    ("f32", 2**128 - 2**103 - 1, np.float32(3.4028235e38)),
    ("bf16", 3.3961e38, 3.3895314e38),
])
def test_a_scalar_that_rounds_to_the_largest_finite_value_is_taken_as_tile_takes_it(dt: str, value: object,
                                                                                    stored: float) -> None:
    """hrev22: the API refused a float scalar above the type's largest finite value that rounds down to it
    (`65519.0` for an `f16`: NumPy's and PyTorch's `float16(65519)` is 65504), where a Tile launch takes the same
    number (`f16s(z.partition([4]), 65519.0)`: the literal's rule, "rounds to infinity", 65520 and up). Now the
    same boundary; one past it is still E0222. And a generic `T`'s integer scalar was rounded twice (NumPy takes
    an integer past int64 through a Python float: `2**128 - 2**103 - 1` tied to infinity in `f32`), where a
    concrete parameter's is rounded once from its own value: now both."""
    m = tilelang.compile(f"kernel fn fill(z: &mut Tensor<{dt}, [4]>, v: {dt}) {{ z.store(full::<{dt}>([4], v)); }}\n"
                         f"fn host(v: {dt}) -> {dt} {{ v }}\n")
    z = np.zeros(4, np.float32 if dt == "bf16" else dt.replace("f", "float"))
    m.fill(tilelang.partition(z, [4]), value).sync()
    assert (z.astype(np.float64) == np.float64(np.float32(stored))).all(), z
    assert float(m.host(value)) == float(np.float32(stored))
    over = {"f16": 65520.0, "f32": 2.0**128 - 2.0**103, "bf16": 2.0**128 - 2.0**119}[dt]
    with pytest.raises(tilelang.CallError, match=r"E0222.*beyond its largest finite value"):
        m.fill(tilelang.partition(z, [4]), over).sync()
    if dt == "bf16":
        return  # (a float32 array binds `T` to `f32`)
    g = tilelang.compile("kernel fn fill<T, const B: i32>(z: &mut Tensor<T, [B]>, v: T) { z.store(full::<T>([B], v)); }")
    z[:] = 0
    g.fill(tilelang.partition(z, [4]), value).sync()  # (`T` bound by the array: the launch's own check)
    assert (z.astype(np.float64) == np.float64(np.float32(stored))).all(), z
    with pytest.raises(tilelang.CallError, match=r"E0222.*beyond its largest finite value"):
        g.fill(tilelang.partition(z, [4]), int(over)).sync()


@pytest.mark.parametrize(("dims", "shapes", "want"), [
    (("A + B", "A"), (12, 4), {"A": 4, "B": 8}),
    (("A + B", "A * 2"), (12, 4), {"A": 2, "B": 10}),
    (("A + B", "B - C", "C * 2 + 1"), (12, 2, 7), {"A": 7, "B": 5, "C": 3}),
])
def test_a_generic_solved_once_another_is_known_is_inferred_as_tile_infers_it(dims: tuple[str, ...],
                                                                               shapes: tuple[int, ...],
                                                                               want: dict[str, int]) -> None:
    """hrev22: a Tile launch infers a const generic from a dimension linear in it once the dimension's other
    generics are known (`[A + B]` of 12 with `x: [A]` of 4: B = 8; a chain `[A + B]`, `[B - C]`, `[C * 2 + 1]`),
    where the Python API refused with E0215 "cannot infer `B`" (`_inferable` took a dimension of one generic
    only, and the launch's linear pass ran once in parameter order). Both now solve to a fixpoint."""
    gens = sorted(want)
    params = ", ".join([f"z: &mut Tensor<f32, [{dims[0]}]>"] + [f"x{i}: &Tensor<f32, [{d}]>" for i, d in
                                                                   enumerate(dims[1:])])
    body = " + ".join(["zeros::<f32>([" + dims[0] + "])"] + [f"({' + '.join(gens)}) as f32"])
    m = tilelang.compile(f"kernel fn k<{', '.join(f'const {g}: i32' for g in gens)}>({params}) "
                         f"{{ z.store({body}); }}\n")
    z = np.zeros(shapes[0], np.float32)
    m.k(tilelang.partition(z, [shapes[0]]), *(np.ones(n, np.float32) for n in shapes[1:])).sync()
    assert (z == sum(want.values())).all(), z
