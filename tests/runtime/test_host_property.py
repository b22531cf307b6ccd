"""Property tests: host arithmetic against NumPy, printing on any shape."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tilelang.dtypes import DType
from tilelang.runtime import host_ops as ops
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.tensor import Tensor, format_tensor
from tilelang.source import DUMMY_SPAN

DEV = CpuDevice()
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6)


def tensor(a: np.ndarray, dt: DType) -> Tensor:
    return Tensor.from_numpy(a, dt, DEV)


@settings(max_examples=50)
@given(st.data(), SHAPES, st.sampled_from(["+", "-", "*", "/"]))
def test_f32_elementwise_matches_numpy(data, shape, op):
    floats = st.floats(-1e3, 1e3, width=32)
    a = data.draw(hnp.arrays(np.float32, shape, elements=floats))
    b = data.draw(hnp.arrays(np.float32, shape, elements=floats))
    got = ops.binary(op, tensor(a, DType.F32), tensor(b, DType.F32), DUMMY_SPAN, DUMMY_SPAN, None).numpy()
    with np.errstate(all="ignore"):
        want = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[op]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


@settings(max_examples=50)
@given(st.data(), SHAPES, st.sampled_from(["/", "%"]))
def test_i32_division_truncates_toward_zero(data, shape, op):
    a = data.draw(hnp.arrays(np.int32, shape, elements=st.integers(-1000, 1000)))
    b = data.draw(hnp.arrays(np.int32, shape, elements=st.integers(1, 50) | st.integers(-50, -1)))
    got = ops.binary(op, tensor(a, DType.I32), tensor(b, DType.I32), DUMMY_SPAN, DUMMY_SPAN, None).numpy()
    q = [int(x / y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True)]
    want = q if op == "/" else [x - y * k for x, y, k in zip(a.ravel().tolist(), b.ravel().tolist(), q, strict=True)]
    assert got.ravel().tolist() == want


@settings(max_examples=50)
@given(st.integers(-(2**40), 2**40), st.sampled_from([DType.I8, DType.U8, DType.I32, DType.U16, DType.I64]))
def test_scalar_wrapping_is_twos_complement(v, dt):
    got = int(ops.to_scalar(v, dt))
    assert got == int(np.array(v, dtype=np.int64).astype(dt.np_dtype))


@settings(max_examples=50)
@given(st.data(), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=40),
       st.sampled_from([DType.F32, DType.F16, DType.I32, DType.BOOL, DType.BF16]))
def test_print_never_fails_and_shows_the_header(data, shape, dt):
    a = data.draw(hnp.arrays(dt.np_dtype if dt is not DType.BF16 else np.float32, shape))
    text = format_tensor(tensor(a, dt))
    assert text.startswith(f"Tensor<{dt.value}, [{', '.join(map(str, shape))}]>")
    if a.size > 1000:
        assert "..." in text
    # every printed row of a big tensor stays short
    assert max(len(line) for line in text.splitlines()) < 200
