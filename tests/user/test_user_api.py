"""The Python API as a user calls it from the README alone (huser, round 2):
kernels and host functions on NumPy arrays of the wrong dtype, rank or
shape, strided and reversed views, 0-d and empty arrays, one array passed
twice (as `&mut` and `&`, as overlapping views, as a dtype view), read-only
arrays, scalars out of range, generic host functions.

Every mistake must be a `tilelang.TileError` with a code and a help line
(never an exception from inside the package); every accepted call is
checked against NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tilelang

SRC = """
const W: i32 = 3;

kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn halve<const B: i32>(z: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>, d: i32) {
    z.store(x.load_like(z) / d + x.load_like(z) % d);
}
kernel fn to_u8<const B: i32>(z: &mut Tensor<u8, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) as u8);
}
kernel fn view_mix<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<i32, [?]>) {
    z.store(x.load_like(z) as f32);
}
kernel fn two<const B: i32>(a: &mut Tensor<f32, [B]>, b: &mut Tensor<f32, [B]>) {
    a.store(full::<f32>([B], 1.0));
    b.store(full::<f32>([B], 2.0));
}
fn acc(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {
    add(z.partition([4]), &z.clone(), x).sync();
}
fn total<const N: i32>(x: &Tensor<f32, [N]>, y: &Tensor<f32, [N]>) -> f32 {
    x.sum() + y.sum() + (N as f32)
}
fn grid(x: &Tensor<f32, [W, W + 1]>) -> f32 {
    x.sum()
}
fn make<const K: i32>() -> Tensor<f32, [K]> {
    ones::<f32>([K]) * (K as f32)
}
fn scale<T>(x: &Tensor<T, [?]>, a: T) -> Tensor<T, [?]> {
    x.clone() * a
}
"""


@pytest.fixture(scope="module")
def mod(tmp_path_factory: pytest.TempPathFactory) -> Any:
    p = Path(tmp_path_factory.mktemp("api")) / "user.tile"
    p.write_text(SRC)
    return tilelang.load(str(p))


P = tilelang.partition
f32 = np.float32


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _z(n: int = 10) -> np.ndarray:
    return np.zeros(n, f32)


MISTAKES: dict[str, tuple[Callable[[Any], Any], str, str]] = {
    # name: (the call, the code, a word the message or help must have)
    "f64 array": (lambda m: m.add(P(_z(), [4]), np.ones(10), _z()).sync(), "E0502", "astype"),
    "python list": (lambda m: m.add(P(_z(), [4]), [1.0] * 10, _z()).sync(), "E0800", "asarray"),
    "numpy scalar for a tensor": (lambda m: m.add(P(_z(), [4]), f32(1), _z()).sync(), "E0800", "array"),
    "0-d array": (lambda m: m.add(P(_z(), [4]), np.array(1.0, f32), _z()).sync(), "E0503", "reshape"),
    "every second element": (lambda m: m.add(P(_z(), [4]), np.ones(20, f32)[::2], _z()).sync(), "E0802",
                             "ascontiguousarray"),
    "reversed": (lambda m: m.add(P(_z(), [4]), np.ones(10, f32)[::-1], _z()).sync(), "E0802", "ascontiguousarray"),
    "strided output": (lambda m: m.add(P(np.zeros(20, f32)[::2], [4]), _z(), _z()).sync(), "E0802", "copy"),
    "not partitioned": (lambda m: m.add(_z(), _z(), _z()).sync(), "E0301", "tilelang.partition"),
    "tile of 0": (lambda m: m.add(P(_z(), [0]), _z(), _z()).sync(), "E0507", "positive"),
    "tile rank": (lambda m: m.add(P(_z(), [2, 2]), _z(), _z()).sync(), "E0507", "one tile size"),
    "read-only output": (lambda m: m.add(P(_ro(_z()), [4]), _z(), _z()).sync(), "E0803", "copy()"),
    "same array mut and shared": (lambda m: (lambda z: m.add(P(z, [4]), z, _z()).sync())(_z()), "E0303", "copy"),
    "overlapping views": (lambda m: (lambda z: m.add(P(z[:8], [4]), z[2:], z[2:]).sync())(_z()), "E0303", "copy"),
    "a dtype view of the output": (lambda m: (lambda z: m.view_mix(P(z, [4]), z.view(np.int32)).sync())(_z(8)),
                                   "E0303", "copy"),
    "two outputs overlapping": (lambda m: (lambda z: m.two(P(z[:4], [2]), P(z[2:6], [2])).sync())(_z(8)), "E0303",
                                "copy"),
    "scalar too big": (lambda m: m.halve(P(np.zeros(4, np.int32), [4]), np.zeros(4, np.int32), 2**33).sync(), "E0222",
                       "2147483647"),
    "scalar string": (lambda m: m.halve(P(np.zeros(4, np.int32), [4]), np.zeros(4, np.int32), "2").sync(), "E0203",
                      "number"),
    "missing argument": (lambda m: m.add(P(_z(), [4]), _z()).sync(), "E0105", "`y`"),
    "host fn read-only &mut": (lambda m: m.acc(_ro(np.ones(8, f32)), np.ones(8, f32)), "E0803", "copy()"),
    "host fn aliasing": (lambda m: (lambda a: m.acc(a, a))(np.ones(8, f32)), "E0303", "copy"),
    "host fn generic sizes differ": (lambda m: m.total(np.ones(4, f32), np.ones(3, f32)), "E0714", "dimension 0 is 4"),
    "host fn constant dims": (lambda m: m.grid(np.ones((2, 4), f32)), "E0714", "dimension 0 is 3"),
    "host fn generic nothing binds": (lambda m: m.make(), "E0215", "module.make[..]"),
    "host fn generic given wrong": (lambda m: m.total[5](np.ones(4, f32), np.ones(4, f32)), "E0714", "is 5"),
    "host fn generic not an int": (lambda m: m.make["3"](), "E0808", "Python int"),
    "host fn too many generics": (lambda m: m.make[3, 4](), "E0111", "order"),
    "host fn unknown generic": (lambda m: m.make[{"N": 3}](), "E0111", "`K`"),
    "host fn type parameter conflicts": (lambda m: m.scale["f16"](np.ones(3, np.int16), 2), "E0504", "`i16`"),
    "host fn scalar does not fit T": (lambda m: m.scale[np.int16](np.ones(3, np.int16), 40000), "E0222",
                                      "32767"),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_mistake_is_a_tile_error_with_a_fix(mod: Any, name: str) -> None:
    call, code, word = MISTAKES[name]
    with pytest.raises(tilelang.TileError) as info:
        call(mod)
    e = info.value
    assert e.code == code, str(e)
    assert "help:" in str(e) and word in str(e), str(e)


def test_read_only_output_of_a_host_fn_is_left_alone(mod: Any) -> None:
    a = _ro(np.ones(8, f32))
    with pytest.raises(tilelang.TileError):
        mod.acc(a, np.ones(8, f32))
    np.testing.assert_array_equal(a, np.ones(8))


def test_what_the_calls_compute(mod: Any) -> None:
    x, y = np.arange(10, dtype=f32), np.full(10, 0.5, f32)
    z = _z()
    mod.add(P(z, [4]), x, y).sync()
    np.testing.assert_array_equal(z, x + y)
    mod.add(P(z, [4]), x, x).sync()  # one array twice, both shared: fine
    np.testing.assert_array_equal(z, 2 * x)
    short = _z()
    mod.add(P(short, [4]), x[:5], y).sync()  # loads past an input's edge read zeros
    np.testing.assert_array_equal(short, np.where(np.arange(10) < 5, x, 0) + y)
    for n in (0, 1):  # empty and one-element arrays
        e = np.full(n, 7, f32)
        mod.add(P(e, [4]), np.ones(n, f32), np.ones(n, f32)).sync()
        np.testing.assert_array_equal(e, np.full(n, 2))
    whole = np.zeros(16, f32)
    mod.two(P(whole[:8], [4]), P(whole[8:], [4])).sync()  # disjoint views of one array
    np.testing.assert_array_equal(whole, np.repeat([1.0, 2.0], 8))
    q = np.zeros(7, np.int32)
    a = np.array([-7, 7, -8, 9, -1, 0, 2147483647], np.int32)
    mod.halve(P(q, [4]), a, -2).sync()
    np.testing.assert_array_equal(q, np.trunc(a / -2).astype(np.int64) + np.fmod(a, -2))
    mod.halve(P(q, [4]), a, 0).sync()  # in a kernel: x / 0 == 0, x % 0 == x
    np.testing.assert_array_equal(q, a)
    u = np.zeros(6, np.uint8)
    mod.to_u8(P(u, [4]), np.array([-5, 3.7, 300, np.nan, np.inf, 255.9], f32)).sync()
    np.testing.assert_array_equal(u, [0, 3, 255, 0, 255, 255])


def test_host_functions(mod: Any) -> None:
    a = np.ones(8, f32)
    mod.acc(a, np.arange(8, dtype=f32))
    np.testing.assert_array_equal(a, 1 + np.arange(8))
    s = np.ones(16, f32)
    mod.acc(s[::2], np.ones(8, f32))  # a host function copies in and back: a strided view is fine
    np.testing.assert_array_equal(s, np.tile([2.0, 1.0], 8))
    assert mod.total(np.ones(5, f32), np.arange(5, dtype=f32)) == 5 + 10 + 5  # N = 5 from the shapes
    assert mod.grid(np.ones((3, 4), f32)) == 12
    np.testing.assert_array_equal(mod.make[3](), [3, 3, 3])  # Tile's `make::<3>()`
    np.testing.assert_array_equal(mod.make[{"K": 2}](), [2, 2])
    assert mod.total[5](np.ones(5, f32), np.ones(5, f32)) == 15
    got = mod.scale[np.int16](np.arange(3, dtype=np.int16), 400)
    assert got.dtype == np.int16 and got.tolist() == [0, 400, 800]
