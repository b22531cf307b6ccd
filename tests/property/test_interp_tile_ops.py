"""Reductions, scans and shape ops on random 3-D tiles, over several blocks,
in both interpreter modes, against NumPy applied block by block."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.interp import run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder
from tilelang.ir.verify import verify_kernel

OPS = ["sum", "prod", "max", "min", "argmax", "argmin", "cumsum", "cumprod", "permute",
       "broadcast"]


def build(op: str, shape: tuple[int, int, int], axis: int, perm: tuple[int, ...],
          dtype: DType) -> tuple[ir.Kernel, int]:
    a, b, c = shape
    bld = Builder(f"k_{op}")
    x = bld.tensor_param("x", dtype, 3)
    del x
    if op in ("sum", "prod", "max", "min", "argmax", "argmin"):
        out_dt = DType.I32 if op.startswith("arg") else dtype
        out_numel = a * b * c // shape[axis]
    elif op == "broadcast":
        out_dt, out_numel = dtype, a * b * c * 2
    else:
        out_dt, out_numel = dtype, a * b * c
    bld.tensor_param("z", out_dt, 2, mutable=True, tile_shape=(1, out_numel))
    g = bld.block_id(0)
    zero = bld.const(0, DType.I32)
    t = bld.load("x", (bld.mul(g, bld.const(a, DType.I32)), zero, zero), shape)
    if op in ("sum", "prod", "max", "min", "argmax", "argmin"):
        r = bld.reduce(ir.ReduceOp(op), t, axis)
    elif op in ("cumsum", "cumprod"):
        r = bld.scan(ir.ScanOp(op), t, axis)
    elif op == "permute":
        r = bld.permute(t, perm)
    else:  # a new leading axis of 2, broadcast
        r = bld.broadcast(bld.reshape(t, (1, a, b, c)), (2, a, b, c))
    bld.store("z", (g, zero), bld.reshape(r, (1, out_numel)))
    k = bld.finish(grid_rank=1)
    verify_kernel(k)
    return k, out_numel


def reference(op: str, t: np.ndarray, axis: int, perm: tuple[int, ...], dtype: DType) -> np.ndarray:
    if op in ("sum", "prod", "max", "min", "argmax", "argmin"):
        return num.reduce(ir.ReduceOp(op), t, dtype, axis)
    if op in ("cumsum", "cumprod"):
        return num.scan(ir.ScanOp(op), t, dtype, axis)
    if op == "permute":
        return np.transpose(t, perm)
    return np.broadcast_to(t, (2, *t.shape))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(op=st.sampled_from(OPS), shape=st.tuples(*[st.integers(1, 5)] * 3),
       axis=st.integers(0, 2), perm=st.permutations([0, 1, 2]), blocks=st.integers(1, 4),
       dtype=st.sampled_from([DType.F32, DType.F16, DType.BF16, DType.I32]),
       seed=st.integers(0, 2**16), mode=st.sampled_from(["block", "vector"]))
def test_tile_ops_match_numpy(op: str, shape: tuple[int, int, int], axis: int,
                              perm: list[int], blocks: int, dtype: DType, seed: int,
                              mode: str) -> None:
    k, numel = build(op, shape, axis, tuple(perm), dtype)
    rng = np.random.default_rng(seed)
    a, b, c = shape
    raw = rng.standard_normal((blocks * a, b, c)) * 2
    if dtype is DType.I32:
        x = np.round(raw).astype(np.int32)
    elif dtype is DType.BF16:
        x = num.round_bf16(raw.astype(np.float32))
    else:
        x = raw.astype(dtype.np_dtype)
    out_dt = np.int32 if op.startswith("arg") else x.dtype
    z = np.zeros((blocks, numel), out_dt)
    with np.errstate(all="ignore"):
        run_kernel(k, (blocks,), [x, z], mode=mode)
        for g in range(blocks):
            want = reference(op, x[g * a:(g + 1) * a], axis, tuple(perm), dtype).reshape(-1)
            np.testing.assert_array_equal(z[g], want, err_msg=f"{op} block {g}")
