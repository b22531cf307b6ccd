"""Names across modules: a kernel reads the module constant its name resolves
to, and a launch runs its own kernel's checks (hrev round 12).

Two files may each define a constant `C` (and the root a third). The checker
resolves every name to its own module's constant, but the lowering looked
constants up by their bare name (`Program.find_const`): the root's `C`, else
the first module's. So a kernel of an imported module computed with another
module's value on every engine, silently: `z.load() + C` added the root's
`C`; a nested tile index `[N]` the checker had proven inside the own tile
became another `N`, whose store the own-tile mask dropped (the tensor kept
zeros); a shape `arange::<f32>(W)` of another `W` was a bogus "not supported
in a kernel yet" (E0701) on a valid program; `lib::W` named the root's `W`.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

from tilelang.run import execute

HERE = Path(__file__).resolve().parent

LIB_E = """
const C: f32 = 1.0;
fn dev() -> f32 { 10.0 }
kernel fn ke<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + C + dev());
}
fn host_e(z: &mut Tensor<f32, [?]>) { ke(z.partition([4])).sync(); }
"""

LIB_F = """
const C: f32 = 100.0;
fn dev() -> f32 { 1000.0 }
kernel fn kf<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + C + dev());
}
fn host_f(z: &mut Tensor<f32, [?]>) { kf(z.partition([4])).sync(); }
"""

MAIN_VALUES = """
use e::host_e;
use f::host_f;
const C: f32 = 0.5;
kernel fn kr(z: &mut Tensor<f32, [4]>) {
    z.store(full::<f32>([4], C + e::C));
}
fn main() {
    let mut z = zeros::<f32>([8]);
    host_f(&mut z);
    let mut y = zeros::<f32>([8]);
    host_e(&mut y);
    let mut r = zeros::<f32>([4]);
    kr(r.partition([4])).sync();
    print(z.sum(), y.sum(), r.sum(), C);
}
"""

LIB_INDEX = """
const N: i32 = 1;
const W: i32 = 4;
kernel fn put<const B: i32>(z: &mut Tensor<f32, [B]>) {
    let q = z.partition([W]);
    q.store(arange::<f32>(W) + (block_id(0) + 1) as f32, [N]);
}
fn run_put(z: &mut Tensor<f32, [?]>) { put(z.partition([8])).sync(); }
"""

MAIN_INDEX = """
use lib::run_put;
const N: i32 = 2;
const W: i32 = 8;
fn main() {
    let mut z = zeros::<f32>([16]);
    run_put(&mut z);
    print(z, N, W);
}
"""


def _files(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / f"{name}.tile").write_text(text)
    return tmp_path / "main.tile"


def _run(path: Path, device: object = None, monkeypatch: pytest.MonkeyPatch | None = None) -> str:
    import tilelang.run as run

    out = io.StringIO()
    if device is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(run, "make_device", lambda choice, o: device)
    run.execute(str(path), "cpu", out=out)
    return out.getvalue()


def test_each_modules_kernel_reads_its_own_constant(tmp_path: Path) -> None:
    main = _files(tmp_path, e=LIB_E, f=LIB_F, main=MAIN_VALUES)
    # f's kernel: 100 + 1000 on 8 elements; e's: 1 + 10; the root's: its 0.5 and e's 1.0
    assert _run(main).split() == ["8800.0", "88.0", "6.0", "0.5"]


def test_a_nested_index_and_a_shape_of_a_modules_constant(tmp_path: Path) -> None:
    main = _files(tmp_path, lib=LIB_INDEX, main=MAIN_INDEX)
    ex = execute(str(main), "cpu", out=io.StringIO())
    z = np.asarray(ex.main_locals["z"].numpy())
    want = np.zeros(16, np.float32)
    want[4:8] = np.arange(4) + 1  # block 0's nested tile 1 (lib's N) of W = 4 (lib's W)
    want[12:16] = np.arange(4) + 2
    np.testing.assert_array_equal(z, want)


def test_the_gpu_path_reads_the_same_constants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE.parent / "backend"))
    import llsim

    main = _files(tmp_path, e=LIB_E, f=LIB_F, main=MAIN_VALUES)
    want = _run(main)
    assert _run(main, llsim.sim_runtime_device("sm_80"), monkeypatch) == want
    main = _files(tmp_path, lib=LIB_INDEX, main=MAIN_INDEX)
    want = _run(main)
    assert "3.0" in want and _run(main, llsim.sim_runtime_device("sm_80"), monkeypatch) == want


# A kernel of the root and one of a module with one short name: the launch of the module's took the
# root's launch checks (`check_deferred` fell back to the short name): an internal error where the
# root's check names a generic the module's kernel lacks, a refused launch where it has one
LIB_PUT = """
kernel fn put<const B: i32, const J: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + J as f32);
}
fn lib_run(z: &mut Tensor<f32, [?]>) { put::<8, 5>(z.partition([8])).sync(); }
kernel fn bump<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}
fn lib_bump(z: &mut Tensor<f32, [?]>) { bump(z.partition([8])).sync(); }
"""

MAIN_PUT = """
use lib::{lib_run, lib_bump};
kernel fn put<const B: i32, const J: i32>(z: &mut Tensor<f32, [B]>) {
    let q = z.partition([4]);
    q.store(full::<f32>([4], 1.0), [J]);
}
kernel fn bump<const B: i32, const K: i32>(z: &mut Tensor<f32, [B]>) {
    let q = z.partition([4]);
    q.store(full::<f32>([4], 1.0), [K]);
}
fn main() {
    let mut z = zeros::<f32>([16]);
    lib_run(&mut z);
    lib_bump(&mut z);
    print(z.sum());
}
"""


def test_a_modules_kernel_gets_its_own_launch_checks(tmp_path: Path) -> None:
    main = _files(tmp_path, lib=LIB_PUT, main=MAIN_PUT)
    assert _run(main).split() == [str(16 * 6.0)]  # J = 5 (the root's `put` needs J < 2), then + 1


STD_SOFTMAX = """
use std::nn::softmax;
const LOG2_E: f32 = 1.0;   // the user's own constant, of a name std::math also has
kernel fn sm(z: &mut Tensor<f32, [2, 4]>, x: &Tensor<f32, [?, ?]>) {
    z.store(softmax(x.load_like(z)));
}
fn main() {
    let x = arange::<f32>(8).reshape([2, 4]);
    let mut z = zeros::<f32>([2, 4]);
    sm(z.partition([2, 4]), &x).sync();
}
"""


def test_the_standard_librarys_kernels_read_its_own_constants(tmp_path: Path) -> None:
    # std::nn::softmax is exp2((x - m) * LOG2_E), with std::math's LOG2_E: a user's `LOG2_E` took its
    # place (the root's constant came first), and the softmax came out as 2^(x - m), silently
    path = tmp_path / "main.tile"
    path.write_text(STD_SOFTMAX)
    z = np.asarray(execute(str(path), "cpu", out=io.StringIO()).main_locals["z"].numpy())
    x = np.arange(8, dtype=np.float64).reshape(2, 4)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(z, e / e.sum(1, keepdims=True), rtol=1e-5)
