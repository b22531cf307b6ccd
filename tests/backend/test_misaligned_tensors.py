"""Tensors that start one element past a 16-byte boundary (another library's array at an offset, a PyTorch slice
`x[1:]`: `TensorFacts.aligned16` False), simulated by `llsim.MISALIGN` (hrev24: llsim's buffers started aligned,
so the paths for unaligned memory ran on aligned addresses only): every vector access the code makes must be
aligned (llsim raises on a misaligned one, as the GPU faults), and the values are the interpreter's. f16, f32,
f64, i8 and bool tensors through `load_like`, partition loads at the edges, nested stores, a reduction and an f16
`mma` (the tensor cores' operand copies), whole programs on sm_80 and sm_90a."""

from __future__ import annotations

import io

import llsim
import numpy as np
import pytest
from shared_kernels import MISALIGNED

import tilelang.run as run

PROGRAM = MISALIGNED + """
fn main() {
    let base = (arange::<i32>(13 * 24) % 23 - 11).reshape([13, 24]);
    let mut z16 = zeros::<f16>([13, 24]);
    cp(z16.partition([4, 8]), &((base as f16) * 0.5)).sync();
    let mut z32 = zeros::<f32>([13, 24]);
    cp(z32.partition([4, 8]), &((base as f32) * 0.25)).sync();
    let mut z64 = zeros::<f64>([13, 24]);
    cp(z64.partition([4, 8]), &(base as f64)).sync();
    let mut z8 = zeros::<i8>([13, 24]);
    cp(z8.partition([4, 8]), &(base as i8)).sync();
    let mut zb = zeros::<bool>([13, 24]);
    cp(zb.partition([4, 8]), &(base > 0)).sync();
    let a = ((arange::<i32>(40 * 48) % 7 - 3) as f16).reshape([40, 48]);
    let b = ((arange::<i32>(48 * 24) % 5 - 2) as f16).reshape([48, 24]);
    let mut c = ones::<f32>([40, 24]);
    mm(c.partition([16, 16]), &a, &b).sync();
}
"""


def program_tensors(ex: run.Execution) -> dict[str, np.ndarray]:
    return {k: np.asarray(v.numpy()).copy() for k, v in ex.main_locals.items() if hasattr(v, "numpy")}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_tensors_one_element_past_alignment(arch: str, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "misaligned.tile"
    src.write_text(PROGRAM)
    want = program_tensors(run.execute(str(src), "cpu", out=io.StringIO()))
    monkeypatch.setattr(llsim, "MISALIGN", True)
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device(arch, sms=8))
    got = program_tensors(run.execute(str(src), "cpu", out=io.StringIO()))
    assert want.keys() == got.keys()
    for name, w in want.items():
        np.testing.assert_array_equal(got[name], w, err_msg=name)
