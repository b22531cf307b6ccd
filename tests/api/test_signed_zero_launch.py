"""A launch's scalar arguments are the values the call gave, bit for bit (hrev18): the real `CudaDevice` over a
stub driver (`runtime/cuda_stub.py`) keeps each launch's packed arguments by the argument values
(`CudaDevice.run`'s cache of a repeated launch and `_run_slow`'s of packed arguments), and -0.0 == 0.0 with
one hash in Python, so a launch with `s = -0.0` after one with `s = 0.0` (or the other way round) took the
first one's arguments: `x / s` was +inf where the interpreter gives -inf, on a Tile program's repeated launch
and on the API's general path alike."""

from __future__ import annotations

import ctypes
import struct
from typing import Any

import numpy as np

import tilelang
from tilelang.runtime import cuda_stub
from tilelang.runtime.cuda import PreparedKernel
from tilelang.runtime.cuda_stub import DevArray

SOURCE = """
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32, d: f64) {
    z.store(x.load_like(z) / s + (d as f32));
}
"""


def _scalars(dev: Any, pk: PreparedKernel) -> tuple[float, float]:
    """The f32 and f64 numbers the stub driver's last launch of `pk` passed. (Only `pk`'s variants are searched:
    another test's kernel on another stub device can hold the same function handle number.)"""
    f, *_, params = dev.ctx.d.launches[-1]
    for abi, fn in pk.variants.values():
        if int(fn.handle) == f:
            got = {}
            for n, slot in enumerate(abi.slots):
                cell = ctypes.c_void_p.from_address(params + 8 * n).value
                if slot.kind in ("f32", "f64"):
                    size, fmt = (4, "<f") if slot.kind == "f32" else (8, "<d")
                    got[slot.kind] = struct.unpack(fmt, ctypes.string_at(cell, size))[0]
            return got["f32"], got["f64"]
    raise AssertionError("no variant launched")


def test_a_launch_with_minus_zero_passes_minus_zero() -> None:
    dev = cuda_stub.stub_device("sm_90a", 132)
    with cuda_stub.installed(dev):
        mod = tilelang.compile(SOURCE)
        x, z = DevArray.zeros((512,)), DevArray.zeros((512,))
        op = mod.scale(tilelang.partition(z, [256]), x, 0.0, 0.0)
        op.sync()
        plan = op._plan
        bufs = [dev.wrap_external(p, s.shape, s.np_dtype, s.nbytes) for p, s in zip(op._ptrs, plan.arrays, strict=True)]
        sent = []
        for s in (0.0, -0.0, -0.0, 0.0, -0.0):  # (a Tile program's launches: `CudaDevice.run`, its caches)
            args = [a if hasattr(a, "ptr") else type(a)(s) for a in op._kernel_args(bufs)]
            dev.run(plan.prepared, plan.bound.grid, args)
            sent.append(_scalars(dev, plan.prepared))
        signs = [(np.signbit(f), np.signbit(d)) for f, d in sent]
        assert signs == [(False, False), (True, True), (True, True), (False, False), (True, True)], sent
