"""Round 4's programs through the Python API (huser, 2026-12-05): the
kernels and host functions of `programs/s*.tile` called on NumPy arrays,
each result checked against NumPy: f16 norms at odd widths, the generic
integer kernel through its generic host function (`mod.run[np.int16, 16]`,
and with `T` and `W` taken from the arrays), an explicit type parameter no
argument names (`mod.make[np.int8](3)`, which built f32 zeros before), the
scatter into a `&` array with `store_unchecked`, the histogram's atomics;
and what such a caller gets wrong, each a `TileError` with its code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = Path(__file__).parent / "programs"


def _mod(name: str) -> tilelang.Module:
    return tilelang.load(str(P / f"{name}.tile"))


def test_norms_at_odd_widths_from_python() -> None:
    m = _mod("s06_norms_odd_widths")
    rng = np.random.default_rng(4)
    for n in (1, 7, 45):
        x = (rng.standard_normal((6, n)) * 3).astype(np.float16)
        w = (rng.random(n) + 0.5).astype(np.float16)
        sm, ln, rn = (np.zeros((6, n), np.float16) for _ in range(3))
        m.norms[2, 64](tilelang.partition(sm, [2, 64]), tilelang.partition(ln, [2, 64]),
                       tilelang.partition(rn, [2, 64]), x, w).sync()
        xf, wf = x.astype(np.float64), w.astype(np.float64)
        e = np.exp(xf - xf.max(1, keepdims=True))
        mu = xf.mean(1, keepdims=True)
        d = xf - mu
        np.testing.assert_allclose(sm, e / e.sum(1, keepdims=True), rtol=4e-3, atol=4e-3)
        want_ln = d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * wf
        np.testing.assert_allclose(ln, want_ln, rtol=4e-3, atol=4e-3)
        want_rn = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * wf
        np.testing.assert_allclose(rn, want_rn, rtol=4e-3, atol=4e-3)
    with pytest.raises(tilelang.TileError) as err:  # f32 inputs for an f16 kernel
        m.norms[2, 64](tilelang.partition(sm, [2, 64]), tilelang.partition(ln, [2, 64]),
                       tilelang.partition(rn, [2, 64]), x.astype(np.float32), w).sync()
    assert err.value.code == "E0502"


def test_the_generic_host_function_from_python() -> None:
    m = _mod("s04_int_types_generic")
    x = (np.arange(13) * 4099 - 30000).astype(np.int16)
    d = (np.arange(13) % 4 - 1).astype(np.int16)
    pop, top, rot, mix, dv, md = m.run[np.int16, 16](x, d)
    assert rot.dtype == np.int16 and dv.dtype == np.int16 and pop.dtype == np.int32
    u = x.view(np.uint16).astype(np.int64)
    np.testing.assert_array_equal(pop, [bin(v).count("1") for v in u])
    np.testing.assert_array_equal(top, [int(v).bit_length() - 1 for v in u])
    q = [0 if b == 0 else int(np.trunc(a / b)) for a, b in zip(x.tolist(), d.tolist(), strict=True)]
    np.testing.assert_array_equal(dv, np.array(q, np.int64).astype(np.int16))
    rem = [a if b == 0 else a - b * t for a, b, t in zip(x.tolist(), d.tolist(), q, strict=True)]
    np.testing.assert_array_equal(md, rem)
    # `T` from the arrays, `W` given: the same answer
    again = m.run[{"W": 16}](x, d)
    for a, b in zip(again, (pop, top, rot, mix, dv, md), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(tilelang.TileError) as err:  # `T` is i16 from `x` but u16 from `d`
        m.run[{"W": 16}](x, d.view(np.uint16))
    assert err.value.code == "E0504"


def test_an_explicit_type_parameter_no_argument_names() -> None:
    m = tilelang.compile("fn make<T>(n: i32) -> Tensor<T, [?]> { zeros::<T>([n]) + (3.7 as T) }\n")
    a = m.make[np.int8](3)
    assert a.dtype == np.int8 and a.tolist() == [3, 3, 3]
    h = m.make[np.float16](2)
    assert h.dtype == np.float16 and h.tolist() == [np.float16(3.7)] * 2
    with pytest.raises(tilelang.TileError) as err:  # nothing says what `T` is
        m.make(3)
    assert err.value.code == "E0215" and "make[np.float32]" in str(err.value)


def test_scatter_and_histogram_from_python() -> None:
    m = _mod("s08_gather_scatter")
    rng = np.random.default_rng(5)
    perm = rng.permutation(11).astype(np.int32)
    x = rng.standard_normal((11, 5)).astype(np.float32)
    out = np.zeros_like(x)  # a `&` parameter the kernel writes through `store_unchecked`
    seen = np.zeros(11, np.int32)
    m.scatter[5](tilelang.partition(seen, [1]), x, perm, out).sync()
    want = np.zeros_like(x)
    want[perm] = x
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(seen, perm)
    m = _mod("s09_histogram_atomics")
    v = rng.integers(0, 256, 150).astype(np.uint8)
    counts, hi, lo = np.zeros(37, np.int64), np.zeros(37, np.uint32), np.full(37, 1000, np.int16)
    mine = np.zeros(10, np.int32)
    m.hist[16](tilelang.partition(mine, [1]), v, counts, hi, lo).sync()
    np.testing.assert_array_equal(counts, np.bincount(v // 7, minlength=37))
    np.testing.assert_array_equal(mine, [16] * 9 + [6])
    b = v // 7
    np.testing.assert_array_equal(hi, [v[b == k].max() if (b == k).any() else 0 for k in range(37)])
    with pytest.raises(tilelang.TileError) as err:  # i32 counts where the kernel adds i64
        m.hist[16](tilelang.partition(mine, [1]), v, counts.astype(np.int32), hi, lo).sync()
    assert err.value.code == "E0502"


def test_a_scalar_type_parameter_takes_the_numpy_scalar_s_type() -> None:
    # `one(np.float16(1.5))` ran with `T` read as f32 (the scalar became a Python float on the way in)
    m = tilelang.compile("fn first<T>(p: (T, i32)) -> T { p.0 + (1 as T) }\nfn one<T>(v: T) -> T { v * (2 as T) }\n")
    got = m.one(np.float16(1.5))
    assert isinstance(got, np.float16) and got == 3.0
    got = m.one(np.int8(100))
    assert isinstance(got, np.int8) and got == -56  # 200 wraps in i8, as Tile's arithmetic does
    got = m.first((np.uint8(255), 3))
    assert isinstance(got, np.uint8) and got == 0
    assert m.one(3) == 6 and m.one(2.5) == 5.0  # Python numbers: a literal's default, i32 and f32
