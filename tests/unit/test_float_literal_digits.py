"""A float literal's value in f16 / bf16 / f32 is rounded once from its digits (`dtypes.literal_float`, hrev22):
parsing through f64 rounds twice only where the f64 lands exactly on a midpoint of two values of the type,
and there the digits decide. Elsewhere it is the f64's own rounding (`round_float`, NumPy's conversion)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilelang.dtypes import DType, literal_float, round_float


@pytest.mark.parametrize("dt", [DType.F16, DType.BF16, DType.F32])
def test_off_the_midpoints_it_is_the_f64s_rounding(dt: DType) -> None:
    rng = random.Random(2207)
    for _ in range(500):
        text = repr(rng.uniform(-1.0, 1.0) * 10.0 ** rng.randint(-45, 38))
        assert literal_float(float(text), text, dt) == round_float(float(text), dt), text


@pytest.mark.parametrize(("text", "dt", "value"), [
    ("340282356779733661637539395458142568447.0", DType.F32, float(np.finfo(np.float32).max)),
    ("340282356779733661637539395458142568448.0", DType.F32, float("inf")),  # the boundary ties to infinity
    ("-340_282_356_779_733_661_637_539_395_458_142_568_447.0f32", DType.F32, -float(np.finfo(np.float32).max)),
    ("65519.999999999999999", DType.F16, 65504.0),
    ("65520.0", DType.F16, float("inf")),
    ("1.000000059604644775390625000001", DType.F32, 1.0 + 2.0 ** -23),  # just above 1 + 2^-24: up
    ("1.000000059604644775390625", DType.F32, 1.0),  # the midpoint itself: to even
    ("1.0000000596046447753906249", DType.F32, 1.0),
])
def test_at_a_midpoint_the_digits_decide(text: str, dt: DType, value: float) -> None:
    body = text.replace("_", "").removesuffix("f32")
    assert literal_float(float(body), text, dt) == value
