"""A bf16 tensor whose memory holds f32 values (`TensorFacts.bf16_f32`: a float32 CUDA array of PyTorch or CuPy
passed for a bf16 parameter, which the Python API takes, "rounded by the kernel") is read as bf16 values, as the
interpreter reads the same float32 array: hrev24 found the GPU path's loads (`EmitterCore.mem_to_reg`, the
vectors, an edge tile's elements, a `&mut` tile's own values, the cp.async ring's slots) keeping the f32 value, so
a copy stored 1.1 where the interpreter stores 1.1015625, `t as f32` and comparisons saw other numbers and an
atomic's compare-and-swap kept them. llsim
(sm_80, sm_90a) against the interpreter, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from shared_kernels import BF16_COPY

import tilelang
from tilelang import driver
from tilelang.backend.facts import TensorFacts

SRC = BF16_COPY + """
kernel fn at(z: &mut Tensor<f32, [4]>, g: &Tensor<bf16, [?]>) {
    let t = full::<bf16>([4], 0.5);
    unsafe {
        atomic_max(&g, [block_id(0) * 4], t * 2.0);
    }
    z.store(t as f32);
}

#[hints(stages = 3)]
kernel fn ring(z: &mut Tensor<f32, [1, 8]>, x: &Tensor<bf16, [?, ?]>) {
    let p = x.partition([1, 8]);
    let mut acc = zeros::<f32>([1, 8]);
    for i in 0..p.num_tiles(0) {
        acc = maximum(acc, (p.load([i, 0]) as f32) * 4096.0);
    }
    z.store(acc);
}
"""
MAIN = """
fn main() {
    let x = zeros::<bf16>([20]);
    let mut z = zeros::<bf16>([20]);
    let mut w = zeros::<f32>([20]);
    let mut y = zeros::<bf16>([20]);
    k(z.partition([8]), w.partition([8]), y.partition([8]), &x).sync();
    let x2 = zeros::<bf16>([6, 8]);
    let mut z2 = zeros::<f32>([1, 8]);
    ring(z2.partition([1, 8]), &x2).sync();
    let g = zeros::<bf16>([20]);
    let mut z3 = zeros::<f32>([20]);
    at(z3.partition([4]), &g).sync();
}
"""

# not bf16 values (1.1 is 1.1015625 in bf16, 1.0000001 is 1.0), on both sides of a tie
VALUES = np.array([1.1, 2.2, 3.3, -0.7, 1e-3, 5.0, 1.0000001, 3.14159, 1.00390625, 1.01171875,
                   -2.3, 7.77, 0.1, 100.3, 0.0, -0.0, 65519.0, 3e38, 1.5e-39, -1.2], np.float32)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_bf16_tensors_in_f32_memory_read_as_bf16(arch: str) -> None:
    m = tilelang.compile(SRC)
    x = VALUES.copy()
    x2 = np.resize(np.where(np.abs(VALUES) < 1e30, VALUES, 0.0) * np.float32(3.7), (6, 8)).astype(np.float32)
    want_z, want_w, want_y = np.zeros(20, np.float32), np.zeros(20, np.float32), VALUES[::-1].copy()
    m.k(tilelang.partition(want_z, [8]), tilelang.partition(want_w, [8]), tilelang.partition(want_y, [8]),
        x.copy()).sync()
    want_r = np.zeros((1, 8), np.float32)
    m.ring(tilelang.partition(want_r, [1, 8]), x2.copy()).sync()
    want_g, scratch = VALUES.copy(), np.zeros(20, np.float32)
    m.at(tilelang.partition(scratch, [4]), want_g).sync()  # (the compare-and-swap's reading)
    assert want_z[0] == np.float32(1.1015625)  # the interpreter's reading of 1.1 as a bf16

    kernels = {k.name: k for k in driver.compile(SRC + MAIN, "ir").output}
    f32 = TensorFacts(True, (False,))
    bf = TensorFacts(True, (False,), True)  # the float32 memory of another library's array
    got_z, got_w, got_y = np.zeros(20, np.float32), np.zeros(20, np.float32), VALUES[::-1].copy()
    SimDevice(arch).run(kernels["k"], (3,), [got_z, got_w, got_y, x.copy()],
                        {"z": bf, "w": f32, "y": bf, "x": bf})
    got_r = np.zeros((1, 8), np.float32)
    SimDevice(arch).run(kernels["ring"], (1,), [got_r, x2.copy()],
                        {"z": TensorFacts(True, (False, False)), "x": TensorFacts(True, (False, False), True)})
    got_g = VALUES.copy()
    SimDevice(arch).run(kernels["at"], (5,), [np.zeros(20, np.float32), got_g], {"z": f32, "g": bf})
    for got, want in ((got_z, want_z), (got_w, want_w), (got_y, want_y), (got_r, want_r), (got_g, want_g)):
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
