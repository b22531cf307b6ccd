"""Launches from the host: grids, generics, launch-time checks (E05xx),
handles and graphs. Kernels run as the hand-built IR samples."""

from __future__ import annotations

import numpy as np
import pytest
from hosthelp import run_host

from tilelang.diagnostics.model import ICE
from tilelang.ir import samples

ADD = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
"""
LOWER = {"add": lambda inst: samples.vector_add(inst["B"])}


def run(main: str, kernels: str = ADD):
    return run_host(kernels + main, LOWER)


def test_sync_infers_generic_and_grid_from_the_partition():
    r = run("""
fn main() {
    let x = arange::<f32>(1000);
    let y = ones::<f32>([1000]);
    let mut z = zeros::<f32>([1000]);
    add(z.partition([128]), &x, &y).sync();
}
""")
    assert r.error is None
    assert r.locals["z"].numpy().tolist() == (np.arange(1000) + 1).tolist()
    (key,) = r.runtime.kernels
    assert key[0] == "add" and ("B", "128") in key[1]
    assert r.device.launches == 1


def test_a_kernel_call_runs_nothing_until_sync():
    r = run("""
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([64]);
    let op = add(z.partition([32]), &x, &x);
    print(z.sum());
    op.sync();
    print(z.sum());
}
""")
    assert r.error is None and r.out.splitlines() == ["0.0", "128.0"]


def test_kernel_cache_is_per_instantiation():
    r = run("""
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([64]);
    for i in 0..3 { add(z.partition([32]), &x, &x).sync(); }
    add(z.partition([16]), &x, &x).sync();
}
""")
    assert r.error is None and r.device.launches == 4 and len(r.runtime.kernels) == 2


def test_launch_and_wait():
    r = run("""
fn main() {
    let x = ones::<f32>([100]);
    let mut a = zeros::<f32>([100]);
    let mut b = zeros::<f32>([100]);
    let ha = add(a.partition([64]), &x, &x).launch();
    let hb = add(b.partition([64]), &x, &x).launch();
    ha.wait();
    hb.wait();
}
""")
    assert r.error is None
    assert r.locals["b"].numpy().min() == 2.0
    assert not r.runtime.inflight.handles  # both waited for


def test_runtime_refuses_a_launch_reading_what_one_in_flight_writes():
    """Defence in depth (runtime/inflight.py): here without the checker."""
    r = run("""
fn main() {
    let x = ones::<f32>([100]);
    let mut a = zeros::<f32>([100]);
    let mut b = zeros::<f32>([100]);
    let ha = add(a.partition([64]), &x, &x).launch();
    let hb = add(b.partition([64]), &x, &a).launch();
    ha.wait();
    hb.wait();
}
""")
    assert r.codes == ["E0305"] and r.line_of() == 11  # the second launch (ADD is 4 lines)
    assert r.locals == {} and r.device.launches == 1  # the second never ran


def test_graph_records_without_running_and_replays_in_order():
    r = run("""
fn main() {
    let mut x = zeros::<f32>([100]);
    let mut acc = zeros::<f32>([100]);
    let mut prev = zeros::<f32>([100]);
    let g = graph {
        add(acc.partition([64]), &prev, &x);
    };
    print(acc.sum());
    for i in 0..3 {
        x += 1.0;
        prev += 10.0;
        g.replay();
    }
    print(acc.sum());
}
""")
    assert r.error is None
    assert r.out.splitlines() == ["0.0", "3300.0"]  # the last replay: 30 + 3 per element


def test_runtime_refuses_a_replay_that_aliases_a_written_tensor():
    r = run("""
fn main() {
    let mut acc = zeros::<f32>([100]);
    let x = ones::<f32>([100]);
    let g = graph {
        add(acc.partition([64]), &acc, &x);
    };
    g.replay();
}
""")
    assert r.codes == ["E0303"] and r.line_of() == 10  # the recorded call


GRIDS = """
kernel fn two<const B: i32, const C: i32>(z: &mut Tensor<f32, [B]>, w: &mut Tensor<f32, [C]>) {
    z.store(w.load());
}
"""


def test_partition_grids_disagree():
    r = run("""
fn main() {
    let mut z = zeros::<f32>([1024]);
    let mut w = zeros::<f32>([1024]);
    two(z.partition([1]), w.partition([2])).sync();
}
""", GRIDS)
    assert r.codes == ["E0500"]
    d = r.error.diagnostics[0]
    assert d.message == "partition grids disagree: `z` gives [1024] blocks but `w` gives [512]"
    assert r.line_of() == 9  # primary: the second partition
    assert r.device.launches == 0


def test_dtype_of_a_loaded_tensor_is_checked_at_launch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.zeros(100, dtype=np.float64))
    r = run("""
fn main() {
    let x = load_npy("x.npy");
    let mut z = zeros::<f32>([100]);
    add(z.partition([64]), &x, &x).sync();
}
""")
    assert r.codes == ["E0502"]
    assert r.error.diagnostics[0].message == "`x` of kernel `add` holds `f32` but the tensor passed holds `f64`"


def test_rank_is_checked_at_launch():
    r = run("""
fn main() {
    let x = zeros::<f32>([10, 10]);
    let mut z = zeros::<f32>([100]);
    add(z.partition([64]), &x, &x).sync();
}
""")
    assert r.codes == ["E0503"]


STATIC = """
kernel fn rows<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [B, 64]>) {
    z.store(x.load_like(z));
}
"""


def test_static_dimension_versus_runtime_size():
    r = run("""
fn main() {
    let x = zeros::<f32>([32, 48]);
    let mut z = zeros::<f32>([32]);
    rows(z.partition([32]), &x).sync();
}
""", STATIC)
    assert r.codes == ["E0501"]
    assert r.error.diagnostics[0].message == "dimension 1 of `x` is 48 but kernel `rows` expects 64"


def test_generic_inferred_twice_with_different_values():
    r = run("""
fn main() {
    let x = zeros::<f32>([16, 64]);
    let mut z = zeros::<f32>([32]);
    rows(z.partition([32]), &x).sync();
}
""", STATIC)
    assert r.codes == ["E0504"]
    msg = r.error.diagnostics[0].message
    assert msg == "`B` of kernel `rows` is 16 from dimension 0 of `x` but 32 from the tile shape of `z`"


def test_turbofish_conflicts_with_partition():
    r = run("""
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([64]);
    add::<16>(z.partition([32]), &x, &x).sync();
}
""")
    assert r.codes == ["E0504"]


def test_whole_tensor_for_a_mut_parameter():
    r = run("""
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([64]);
    add(&z, &x, &x).sync();
}
""")
    assert r.codes == ["E0505"] and "needs a partition" in r.error.diagnostics[0].message


def test_generic_that_nothing_gives():
    with pytest.raises(ICE, match="no value for C of kernel `k`"):
        run("""
kernel fn k<const B: i32, const C: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [C * C]>) {
    z.store(x.load_like(z));
}
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([64]);
    k(z.partition([32]), &x).sync();
}
""", "")
    # `C * C` does not name `C` alone and is not linear in it (`C * 2` is solved, round 18), so the
    # tensor's size cannot give it; the type checker rejects this (E0215), so at run time it is a bug.


def test_grid_of_more_than_three_dimensions():
    r = run("""
kernel fn k4<const A: i32>(z: &mut Tensor<f32, [A, A, A, A]>) {
    z.store(z.load());
}
fn main() {
    let mut z = zeros::<f32>([2, 2, 2, 2]);
    k4(z.partition([1, 1, 1, 1])).sync();
}
""", "")
    assert r.codes == ["E0510"]
