"""Round 14 through the Python API (huser14, 2026-12-06; torch is not
installed here): the NumPy arrays a user has that are not a fresh
C-contiguous array of the parameter's type.

- A contiguous slice of a larger array as a partition: written in place, in
  the larger array; a strided, reversed, broadcast or Fortran-order view is
  refused (E0802) with a help that, followed, runs and gives NumPy's answer
  (for a `&mut` view: a contiguous copy and the results copied back).
- Host functions copy their arrays in and `&mut` ones back, so a strided view
  given to a host function's `&mut` parameter is written through.
- Zero-size arrays: a launch of no blocks, a host function's sum (0) and a
  result of shape (0, 3); `t[0]` of an empty axis (E0721) says the axis is
  empty (the help said "one past the end: the last element is at index -1").
- 0-d arrays and NumPy scalars for scalar parameters, a one-element array for
  one (E0203); big-endian arrays (E0801) and the help's conversion.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

P = tilelang.partition

SRC = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32) {
    z.store(x.load_like(z) * s);
}
kernel fn rows<const BN: i32>(z: &mut Tensor<f32, [1, BN]>, x: &Tensor<f32, [?, ?]>) {
    z.store(x.load_like(z) * 2.0);
}
fn double(z: &mut Tensor<f32, [?]>) {
    let x = z.clone();
    scale(z.partition([4]), &x, 2.0).sync();
}
fn total(x: &Tensor<f32, [?]>) -> f32 { x.sum() }
fn twice(x: &Tensor<f32, [?, ?]>) -> Tensor<f32, [?, ?]> { x * 2.0 }
fn first(x: &Tensor<f16, [?]>) -> f16 { x[0] }
"""


@pytest.fixture(scope="module")
def mod() -> tilelang.Module:
    return tilelang.compile(SRC)


def test_a_contiguous_slice_is_written_in_place_in_its_array(mod: tilelang.Module) -> None:
    base = np.zeros(20, np.float32)
    view = base[5:15]
    x, y = np.arange(10, dtype=np.float32), np.ones(10, np.float32)
    mod.add(P(view, [4]), x, y).sync()
    np.testing.assert_array_equal(base, np.concatenate([np.zeros(5), x + 1, np.zeros(5)]))


@pytest.mark.parametrize("view", ["x[::2]", "x[::-1]", "numpy.broadcast_to(x[:1], (10,))"])
def test_a_strided_input_is_refused_and_its_help_runs(mod: tilelang.Module, view: str) -> None:
    x = np.arange(20, dtype=np.float32)
    v = eval(view, {"numpy": np, "x": x})  # noqa: S307 (the view's text, written above)
    z, y = np.zeros(v.shape[0], np.float32), np.ones(v.shape[0], np.float32)
    with pytest.raises(tilelang.CallError) as e:
        mod.add(P(z, [4]), v, y).sync()
    assert e.value.code == "E0802" and "`numpy.ascontiguousarray(x)`" in str(e.value)
    mod.add(P(z, [4]), np.ascontiguousarray(v), y).sync()   # the help, by the letter
    np.testing.assert_array_equal(z, v + 1)


def test_a_fortran_order_output_is_refused_and_its_help_runs(mod: tilelang.Module) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    z = np.zeros((3, 4), np.float32, order="F")
    with pytest.raises(tilelang.CallError) as e:
        mod.rows(P(z, [1, 4]), x).sync()
    assert e.value.code == "E0802" and "copy the results back into the view yourself" in str(e.value)
    c = np.ascontiguousarray(z)
    mod.rows(P(c, [1, 4]), x).sync()
    z[...] = c
    np.testing.assert_array_equal(z, x * 2)
    xf = np.asfortranarray(x)
    zt = np.zeros((4, 3), np.float32)
    mod.rows(P(zt, [1, 4]), xf.T).sync()   # a Fortran array's transpose is C-contiguous: taken as it is
    np.testing.assert_array_equal(zt, x.T * 2)


def test_a_host_function_writes_a_strided_view_through(mod: tilelang.Module) -> None:
    b = np.arange(12, dtype=np.float32)
    mod.double(b[::2])
    np.testing.assert_array_equal(b, np.where(np.arange(12) % 2 == 0, np.arange(12) * 2, np.arange(12)))
    c = np.arange(12, dtype=np.float32)
    mod.double(c[2:6])
    np.testing.assert_array_equal(c, np.concatenate([[0, 1], np.arange(2, 6) * 2, np.arange(6, 12)]))
    assert mod.total(np.arange(12, dtype=np.float32)[::3]) == 18.0


def test_zero_size_arrays(mod: tilelang.Module) -> None:
    z0, e0 = np.zeros(0, np.float32), np.zeros(0, np.float32)
    mod.add(P(z0, [4]), e0, e0).sync()                       # no block
    mod.add(P(z0, [4]), e0, e0).launch().wait()
    z2 = np.zeros((3, 0), np.float32)
    mod.rows(P(z2, [1, 8]), np.zeros((3, 0), np.float32)).sync()
    z4 = np.full(4, 7.0, np.float32)
    mod.add(P(z4, [4]), e0, e0).sync()                       # inputs read past their end: zeros
    np.testing.assert_array_equal(z4, np.zeros(4))
    assert mod.total(e0) == 0.0
    assert mod.twice(np.zeros((0, 3), np.float32)).shape == (0, 3)
    e = np.zeros(0, np.float32)
    mod.double(e)
    assert e.shape == (0,)


def test_an_index_into_an_empty_axis_says_it_is_empty(mod: tilelang.Module) -> None:
    with pytest.raises(tilelang.TileError) as e:
        mod.first(np.zeros(0, np.float16))
    assert e.value.code == "E0721" and "the axis is empty" in str(e.value) and "index -1" not in str(e.value)
    assert mod.first(np.array([1.5, 2], np.float16)) == 1.5
    from tilelang.diagnostics.bounds import index_out_of_bounds

    assert "one past the end" in index_out_of_bounds(3, 3).help and "`t[2]`" in index_out_of_bounds(3, -1).help


@pytest.mark.parametrize(("s", "want"), [(np.array(2.0, np.float32), 2.0), (np.array(2.5), 2.5),
                                         (np.float16(1.5), 1.5), (np.array(3), 3.0), (3, 3.0)])
def test_0d_arrays_and_numpy_scalars_are_scalars(mod: tilelang.Module, s: object, want: float) -> None:
    z, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    mod.scale(P(z, [4]), x, s).sync()
    np.testing.assert_array_equal(z, x * np.float32(want))


def test_a_one_element_array_is_not_a_scalar(mod: tilelang.Module) -> None:
    z, x = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    with pytest.raises(tilelang.CallError) as e:
        mod.scale(P(z, [4]), x, np.array([2.0], np.float32)).sync()
    assert e.value.code == "E0203" and "shape (1,)" in str(e.value)
    with pytest.raises(tilelang.CallError) as e:
        mod.total(np.array(3.0, np.float32))        # and a 0-d array is not a tensor
    assert e.value.code == "E0503"


def test_a_big_endian_array_is_refused_and_its_help_runs(mod: tilelang.Module) -> None:
    xb = np.arange(10, dtype=">f4")
    z, y = np.zeros(10, np.float32), np.ones(10, np.float32)
    with pytest.raises(tilelang.CallError) as e:
        mod.add(P(z, [4]), xb, y).sync()
    assert e.value.code == "E0801" and "`x.astype(numpy.float32)`" in str(e.value)
    mod.add(P(z, [4]), xb.astype(np.float32), y).sync()
    np.testing.assert_array_equal(z, np.arange(10) + 1)


def test_an_output_that_overlaps_an_input_is_refused(mod: tilelang.Module) -> None:
    a = np.arange(20, dtype=np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.add(P(a[0:10], [4]), a[5:15], np.ones(10, np.float32)).sync()
    assert e.value.code == "E0303"


def test_a_generic_dot_cast_where_it_is_made_runs_on_numpy_s_float16_and_int8() -> None:
    # round 13 left `dot(a, b) as f32` of a generic `T` refused (E0206) for T = f16: the cast sees the sums only
    m = tilelang.compile("kernel fn gram<T>(g: &mut Tensor<f32, [4, 4]>, a: &Tensor<T, [?, ?]>) {\n"
                         "    let t = a.partition([8, 4]).load([0, 0]);\n"
                         "    g.store(dot(t.transpose(), t) as f32);\n}\n")
    rng = np.random.default_rng(14)
    for a in (rng.standard_normal((8, 4)).astype(np.float16), rng.integers(-128, 128, (8, 4), dtype=np.int8)):
        g = np.zeros((4, 4), np.float32)
        m.gram(P(g, [4, 4]), a).sync()
        w = a.astype(np.float64)
        np.testing.assert_allclose(g, w.T @ w, rtol=1e-6)   # f32 sums of exact f16 products; i8 sums in i32
    n = tilelang.compile("kernel fn gram<T>(g: &mut Tensor<T, [4, 4]>, a: &Tensor<T, [?, ?]>) {\n"
                         "    let t = a.partition([8, 4]).load([0, 0]);\n    g.store(dot(t.transpose(), t));\n}\n")
    h = np.zeros((4, 4), np.float16)
    with pytest.raises(tilelang.TileError) as e:   # without the cast: still refused, and the help says the cast
        n.gram(P(h, [4, 4]), np.ones((8, 4), np.float16)).sync()
    assert e.value.code == "E0206" and "`dot(a, b) as T`" in str(e.value)


def test_a_tuned_generic_no_tile_names_is_picked_from_python(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Tile source must give `BK` (E0215, whose help now says so, test_user_wrong14); a Python call leaves it
    # to the tuner, as the README says
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    m = tilelang.compile("use std::math::cdiv;\n#[autotune(BK = [16, 64])]\n"
                         "kernel fn row_sums<const BK: i32>(s: &mut Tensor<f32, [1]>, x: &Tensor<f32, [?, ?]>) {\n"
                         "    let mut acc = 0.0;\n    for j in 0..cdiv(x.shape()[1], BK) {\n"
                         "        acc += x.partition([1, BK]).load([block_id(0), j]).sum(1).item();\n    }\n"
                         "    s.store(full::<f32>([1], acc));\n}\n")
    x = np.arange(400, dtype=np.float32).reshape(4, 100)
    s = np.zeros(4, np.float32)
    m.row_sums(P(s, [1]), x).sync()
    np.testing.assert_array_equal(s, x.astype(np.float64).sum(1))
