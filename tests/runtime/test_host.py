"""The host evaluator: the language on the host, builtins, run-time errors."""

from __future__ import annotations

import numpy as np
import pytest
from hosthelp import run_host

from tilelang.dtypes import DType


def out_of(src: str) -> list[str]:
    r = run_host(src)
    assert r.error is None, r.error.diagnostics
    return r.out.splitlines()


def test_scalars_control_flow_and_functions():
    src = """
fn fact(n: i32) -> i32 {
    if n <= 1 { 1 } else { n * fact(n - 1) }
}
fn main() {
    let mut total = 0;
    for i in 0..5 { total += i; }
    let mut k = 0;
    while true { k += 1; if k == 3 { break; } }
    for i in 0..=3 { if i % 2 == 0 { continue; } total += 100; }
    let (a, b) = (7 / 2, -7 / 2);
    print(total, k, fact(5), a, b, -7 % 3, 1.5 * 2.0);
    print("x = {}, y = {}", 1, [2, 3]);
}
"""
    assert out_of(src) == ["210 3 120 3 -3 -1 3.0", "x = 1, y = [2, 3]"]


def test_host_tensor_arithmetic_reads_and_never_moves():
    src = """
fn main() {
    let x = arange::<f32>(4);
    let y = ones::<f32>([4]);
    let e = x * 3.0 + y;
    let f = x - y;
    print(e);
    print(f.sum(), f.max(), f.min(), x.shape());
}
"""
    assert out_of(src) == ["Tensor<f32, [4]> [ 1.0,  4.0,  7.0, 10.0]", "2.0 2.0 -1.0 [4]"]


def test_reductions_over_an_axis_and_broadcasting():
    r = run_host("""
fn main() {
    let x = arange::<f32>(6).reshape([2, 3]);
    let s = x.sum(1);
    let c = x - x.max(1).reshape([2, 1]);
    let am = x.argmax(0);
}
""")
    assert r.error is None
    assert r.locals["s"].numpy().tolist() == [3.0, 12.0]
    assert r.locals["c"].numpy().tolist() == [[-2, -1, 0], [-2, -1, 0]]
    assert r.locals["am"].dtype is DType.I32 and r.locals["am"].numpy().tolist() == [1, 1, 1]


def test_rand_is_pcg64_of_the_seed_rounded_to_the_type():
    r = run_host("""
fn main() {
    let a = rand::<f32>([3, 4], 5);
    let b = rand::<f32>([3, 4], 5);
    let n = randn::<f64>([10], 9);
    let i = rand::<i32>([100], 1);
}
""")
    assert r.error is None
    a, b = r.locals["a"].numpy(), r.locals["b"].numpy()
    assert np.array_equal(a, b)
    want = np.random.Generator(np.random.PCG64(5)).random((3, 4)).astype(np.float32)
    assert np.array_equal(a, want)
    assert np.array_equal(r.locals["n"].numpy(), np.random.Generator(np.random.PCG64(9)).standard_normal(10))
    i = r.locals["i"].numpy()
    assert i.dtype == np.int32 and i.min() >= 0 and i.max() < 100


def test_casts_wrap_and_saturate():
    assert out_of("""
fn main() {
    let big = 300;
    print(big as u8, -1.7 as i32, 1e12 as i32, 3.99 as u8);
    let t = full::<f32>([2], 2.5) as i32;
    print(t);
}
""") == ["44 -1 2147483647 3", "Tensor<i32, [2]> [2, 2]"]


def test_compound_assignment_on_a_tensor_writes_in_place():
    r = run_host("""
fn main() {
    let mut x = zeros::<f32>([3]);
    let alias_check = x.shape();
    x += 2.0;
    x *= 3.0;
}
""")
    assert r.error is None
    assert r.locals["x"].numpy().tolist() == [6.0, 6.0, 6.0]


def test_failed_assert_is_located():
    r = run_host("""
fn main() {
    let n = 3;
    assert(n == 4);
}
""")
    assert r.codes == ["E0710"]
    assert "`n == 4`" in r.error.diagnostics[0].message
    assert r.line_of() == 4


def test_assert_with_message():
    r = run_host('fn main() {\n    assert(1 > 2, "one is not above two");\n}\n')
    assert r.codes == ["E0710"] and r.error.diagnostics[0].message == "assertion failed: one is not above two"


def test_assert_close_failure_names_count_and_worst_elements():
    r = run_host("""
fn main() {
    let a = arange::<f32>(100);
    let b = a * 1.0 + 0.0;
    let c = b * 1.0;
    c += 0.0;
    assert_close(&a, &b);
    let d = zeros::<f32>([100]) + a;
    assert_close(&d, &(a * 1.001), rtol = 1e-5, atol = 0.0);
}
""")
    assert r.codes == ["E0711"]
    d = r.error.diagnostics[0]
    assert d.message.startswith("tensors are not close: 99 of 100 elements differ")
    assert r.line_of() == 9
    # The worst element comes first, with its index and both values.
    assert d.notes[0].startswith("at [99]: left `d` = 99.0, right `a * 1.001` = 99.099")
    assert any(n.startswith("... and 94 more") for n in d.notes)


def test_assert_close_shape_mismatch():
    r = run_host("fn main() {\n    assert_close(&zeros::<f32>([3]), &zeros::<f32>([4]));\n}\n")
    assert r.codes == ["E0714"] and "[3] and [4]" in r.error.diagnostics[0].message


def test_integer_division_by_zero_is_a_runtime_error():
    r = run_host("fn main() {\n    let z = 0;\n    print(1 / z);\n}\n")
    assert r.codes == ["E0715"] and r.line_of() == 3


def test_npy_round_trip_and_missing_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "in.npy", np.arange(6, dtype=np.int16).reshape(2, 3))
    r = run_host("""
fn main() {
    let t = load_npy("in.npy");
    let u = t + t;
    u.save_npy("out.npy");
    print(t.shape());
}
""")
    assert r.error is None and r.out == "[2, 3]\n"
    assert r.locals["t"].dtype is DType.I16
    out = np.load(tmp_path / "out.npy")
    assert out.dtype == np.int16 and out.tolist() == [[0, 2, 4], [6, 8, 10]]
    r = run_host('fn main() {\n    let t = load_npy("nope.npy");\n}\n')
    assert r.codes == ["E0712"] and "nope.npy" in r.error.diagnostics[0].message


def test_an_npy_with_a_dimension_past_i32_is_refused_before_its_data_is_read(tmp_path, monkeypatch):
    """A `.npy` of 2**31 elements loaded (reading all of it), printed its
    shape as 2147483648 (an `i32` cannot hold it) and made the launch that
    read it an internal error ("dim >= 2**31"). Its header is read first now:
    this one claims 2**31 bytes and holds 8, so the data is never read."""
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "big.npy", "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "|u1", "fortran_order": False, "shape": (2, 2**31)})
        f.write(bytes(8))
    r = run_host('fn main() {\n    let x = load_npy("big.npy");\n    print(x.shape());\n}\n')
    assert r.codes == ["E0713"] and r.out == ""
    assert "shape [2, 2147483648]: a dimension of 2147483648 elements is more than the 2147483647" in \
        r.error.diagnostics[0].message


def test_a_0d_npy_loads_0d_and_saves_back_0d(tmp_path, monkeypatch):
    """A 0-D `.npy` (`np.save(p, np.float32(3.5))`) is a 0-D tensor, as
    `zeros::<f32>([])` is (both used to become shape [1], which a kernel then
    read past); it saves back 0-D, and a kernel that wants rank 1 says so."""
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "s.npy", np.float32(3.5))
    r = run_host("""
fn main() {
    let x = load_npy("s.npy");
    let y = zeros::<f32>([]);
    print(x.shape(), x + x, y);
    (x * 2.0).save_npy("out.npy");
}
""")
    assert r.out == "[] Tensor<f32, []> 7.0 Tensor<f32, []> 0.0\n"
    assert r.locals["x"].shape == () and r.locals["y"].shape == ()
    out = np.load(tmp_path / "out.npy")
    assert out.shape == () and float(out) == 7.0
    r = run_host("""
kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z));
}
fn main() {
    let x = load_npy("s.npy");
    let mut z = zeros::<f32>([4]);
    k(z.partition([4]), &x).sync();
}
""")
    assert r.codes == ["E0503"] and "has 0" in r.error.diagnostics[0].message


def test_save_npy_replaces_the_file_whole(tmp_path, monkeypatch):
    """`save_npy` writes beside the path and renames: a reader of the path (another program
    saving and loading it at the same time) sees the old file or the new one, never a part;
    nothing is left beside it, and a directory that is missing is still a located error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.npy").write_bytes(b"an older file")
    seen: list[str] = []
    real = np.save

    def save(f, a):  # type: ignore[no-untyped-def]
        real(f, a)
        seen.append((tmp_path / "x.npy").read_bytes().decode("latin-1"))  # the path, mid-write

    monkeypatch.setattr(np, "save", save)
    r = run_host('fn main() {\n    let t = arange::<i32>(5);\n    t.save_npy("x.npy");\n}\n')
    assert r.error is None
    assert seen == ["an older file"]
    assert np.load(tmp_path / "x.npy").tolist() == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]
    r = run_host('fn main() {\n    let t = arange::<i32>(5);\n    t.save_npy("no/such/dir/x.npy");\n}\n')
    assert r.codes == ["E0712"] and "cannot write" in r.error.diagnostics[0].message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]


def test_npy_with_unsupported_dtype(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "c.npy", np.zeros(3, dtype=np.complex64))
    r = run_host('fn main() {\n    let t = load_npy("c.npy");\n}\n')
    assert r.codes == ["E0713"] and "complex64" in r.error.diagnostics[0].message


def test_bad_partition():
    r = run_host("fn main() {\n    let mut z = zeros::<f32>([8, 8]);\n    let p = z.partition([4]);\n}\n")
    assert r.codes == ["E0507"]
    r = run_host("fn main() {\n    let mut z = zeros::<f32>([8]);\n    let p = z.partition([0]);\n}\n")
    assert r.codes == ["E0507"]


def test_print_of_a_large_tensor_is_summarised():
    lines = out_of("fn main() {\n    print(arange::<i32>(2000));\n}\n")
    assert lines == ["Tensor<i32, [2000]> [   0,    1,    2, ..., 1997, 1998, 1999]"]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_half_precision_host_arithmetic_rounds_each_step(dtype):
    r = run_host(f"fn main() {{\n    let x = full::<{dtype}>([2], 1.0);\n    let y = x + 0.0001;\n}}\n")
    assert r.error is None
    assert r.locals["y"].numpy().tolist() == [1.0, 1.0]  # 1 + 1e-4 rounds back to 1


def test_results_of_reshape_and_cast_are_new_tensors():
    r = run_host("""
fn main() {
    let x = zeros::<f32>([6]);
    let mut r = x.reshape([2, 3]);
    r += 1.0;
    let mut c = x as f32;
    c += 2.0;
    let mut k = x.clone();
    k += 3.0;
}
""")
    assert r.error is None
    assert r.locals["x"].numpy().tolist() == [0.0] * 6
    assert r.locals["r"].numpy().sum() == 6.0 and r.locals["c"].numpy().sum() == 12.0
