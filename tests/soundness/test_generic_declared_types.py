"""A const generic's declared type is honoured from Python too (hrev29): a kernel's `const B: u8` given a tile of
300 read 300 in the kernel, a host function's `const N: u8` bound from an array of 300 read 44; both are E0222
now, before anything runs, and values that fit run on both."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

P = tilelang.partition

SRC = """
kernel fn k<const B: u8>(z: &mut Tensor<f32, [B]>) {
    z.store(zeros::<f32>([B]) + B as f32);
}
fn h<const N: u8>(_t: &Tensor<f32, [N]>) -> i32 {
    N as i32
}
"""


def test_a_generic_out_of_its_type_is_refused_from_python() -> None:
    mod = tilelang.compile(SRC)
    z = np.full(600, -1.0, np.float32)
    mod.k(P(z, [200])).sync()
    assert (z[:400] == 200.0).all()
    z[:] = -1.0
    with pytest.raises(tilelang.CallError, match=r"E0222\]: `B` of kernel `k` is 300, out of range for `u8`"):
        mod.k(P(z, [300])).sync()
    assert (z == -1.0).all()
    assert mod.h(np.zeros(255, np.float32)) == 255
    with pytest.raises(tilelang.TileError, match=r"E0222\]: `N` of function `h` is 300, out of range for `u8`"):
        mod.h(np.zeros(300, np.float32))


def test_an_explicit_generic_out_of_its_type_is_refused_from_python() -> None:
    """`mod.k[300](..)` and `mod.h[300](..)`: the explicit generic is a value fixed like any other."""
    mod = tilelang.compile(SRC.replace("z: &mut Tensor<f32, [B]>", "z: &mut Tensor<f32, [4]>")
                           .replace("zeros::<f32>([B])", "zeros::<f32>([4])"))
    z = np.zeros(4, np.float32)
    mod.k[255](P(z, [4])).sync()
    assert (z == 255.0).all()
    with pytest.raises(tilelang.CallError, match=r"E0222\]: `B` of kernel `k` is 300"):
        mod.k[300](P(z, [4])).sync()
    with pytest.raises(tilelang.TileError, match=r"E0222\]: `N` of function `h` is 300"):
        mod.h[300](np.zeros(300, np.float32))
