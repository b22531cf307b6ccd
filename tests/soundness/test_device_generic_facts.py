"""A device function's nested-tile facts in its own const generics are the caller's: decided for each call's
values (hrev29; they were E0402/E0403 "cannot prove" in the function at every instance). From Python a
kernel's generic comes from the partition's tile at the call, so the fact handed down to the kernel is
checked there (E0403 before anything runs), on a value the checker could not know."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

P = tilelang.partition

SRC = """
fn second<const H: i32>(z: &mut Tensor<f32, [H]>) {
    let q = z.partition([4]);
    q.store(ones::<f32>([4]), [1]);
}
kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(zeros::<f32>([B]));
    second::<B>(z);
}
"""


def test_the_callers_generic_decides_the_fact_at_the_call() -> None:
    mod = tilelang.compile(SRC)
    z = np.full(16, -1.0, np.float32)
    mod.k(P(z, [8])).sync()
    assert z.tolist() == [0.0] * 4 + [1.0] * 4 + [0.0] * 4 + [1.0] * 4
    z[:] = -1.0
    with pytest.raises(tilelang.CallError, match=r"E0403.*tile index `1` of `q` along axis 0, in device function "
                                                 r"`second` with `H` = B") as e:
        mod.k(P(z, [4]))
    assert "with B = 4" in str(e.value) or "B = 4" in str(e.value)
    assert (z == -1.0).all()  # nothing ran
