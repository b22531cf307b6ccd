"""Round 7 through the Python API (huser, 2026-12-05 11:48): std::attention's
decode kernels called the way their header says, with the two mistakes
round 6 left: a `v` shorter than `k` (read as zeros past its end: a wrong
answer) and a `cache_len` past the cache (attended to the whole cache
without a word). Both are refused now by the kernels' `#[requires(..)]`,
on the host before the launch (E0513), on a repeated call's fast path
too, and the kernels' code is unchanged (`benchmarks/huser_decode_ptx.py`
hashes their PTX). Shapes are the smallest the kernels take: cheap on the
interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang

P = tilelang.partition
G, D, BN, SMAX, HKV, SPLITS = 4, 16, 16, 40, 2, 2


@pytest.fixture(scope="module")
def att() -> tilelang.Module:
    return tilelang.compile(
        "use std::attention::{decode_split, decode_fused, decode_split_varlen, decode_split_tc, decode_combine};\n")


def _qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    q, k, v = ((rng.standard_normal(s) * 0.5).astype(np.float16) for s in
               ((HKV, G, D), (HKV, SMAX, D), (HKV, SMAX, D)))
    return q, k, v


def _reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, n: int, scale: float) -> np.ndarray:
    s = np.einsum("hgd,hkd->hgk", q.astype(np.float64), k[:, :n].astype(np.float64)) * scale
    w = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hgk,hkd->hgd", w / w.sum(-1, keepdims=True), v[:, :n].astype(np.float64))


def _parts() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros((HKV, SPLITS * G, D), np.float32), np.zeros((HKV, SPLITS * G), np.float32)


def _split(att: tilelang.Module, q: np.ndarray, k: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    o_part, lse_part = _parts()
    att.decode_split["f16", G, BN, D](P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v, n, 0.25).sync()
    o = np.zeros((HKV, G, D), np.float16)
    att.decode_combine["f16", G, SPLITS, D](P(o, [1, G, D]), o_part, lse_part).sync()
    return o


def _refused(call: object, phrase: str) -> str:
    with pytest.raises(tilelang.TileError) as e:
        call()  # type: ignore[operator]
    assert e.value.code == "E0513" and phrase in str(e.value), str(e.value)
    return str(e.value)


def test_decode_split_refuses_a_short_v_and_a_cache_len_past_the_cache(att: tilelang.Module) -> None:
    q, k, v = _qkv()
    np.testing.assert_allclose(_split(att, q, k, v, 33), _reference(q, k, v, 33, 0.25), atol=3e-3)
    text = _refused(lambda: _split(att, q, k, v[:, :30].copy(), 30), "v must have k's shape")
    assert "`v.shape()[1]` = 30" in text and "`k.shape()[1]` = 40" in text
    text = _refused(lambda: _split(att, q, k, v, SMAX + 1), "cache_len must be within the cache")
    assert "`cache_len` = 41" in text
    _refused(lambda: _split(att, q, k, v, -1), "cache_len must be within the cache")
    _refused(lambda: _split(att, q[:1].copy(), k, v, 8), "q must have a row of G query heads for each KV head")
    o_part, lse_part = (a[:1].copy() for a in _parts())  # partial results for one of the 2 KV heads
    text = _refused(lambda: att.decode_split["f16", G, BN, D](P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v,
                                                             8, 0.25).sync(),
                    "o_part and lse_part must have a tile for each KV head of k")
    assert "`num_blocks(0)` = 1" in text and "`k.shape()[0]` = 2" in text
    o_part, lse_part = _parts()
    o3 = np.zeros((HKV + 1, G, D), np.float16)  # one KV head too many: its row would read past o_part
    _refused(lambda: att.decode_combine["f16", G, SPLITS, D](P(o3, [1, G, D]), o_part, lse_part).sync(),
             "o must have a [G, D] row for each KV head of o_part")
    _refused(lambda: att.decode_combine["f16", G, SPLITS, D](P(o3[:HKV], [1, G, D]), o_part, lse_part[:1]).sync(),
             "`lse_part.shape()[0]` = 1")
    # the same key again with good numbers, then a bad one: the fast path checks the numbers too
    for n in (SMAX, 1, SMAX + 5, 2**31 - 1):
        if n <= SMAX:
            np.testing.assert_allclose(_split(att, q, k, v, n), _reference(q, k, v, n, 0.25), atol=3e-3)
        else:
            _refused(lambda n=n: _split(att, q, k, v, n), f"`cache_len` = {n}")


def test_decode_fused_varlen_and_tc_take_the_same_requirements(att: tilelang.Module) -> None:
    q, k, v = _qkv()
    short = v[:, :24].copy()
    o_part, lse_part = _parts()
    o = np.zeros((HKV, G, D), np.float16)
    fused = att.decode_fused["f16", G, BN, D, SPLITS, SPLITS]
    _refused(lambda: fused(P(o_part, [1, G, D]), P(lse_part, [1, G]), P(o, [1, G, D]), q, k, short, 8, 0.25).sync(),
             "v must have k's shape")
    _refused(lambda: fused(P(o_part, [1, G, D]), P(lse_part, [1, G]), P(o, [1, G, D]), q, k, v, 99, 0.25).sync(),
             "`cache_len` = 99")
    fused(P(o_part, [1, G, D]), P(lse_part, [1, G]), P(o, [1, G, D]), q, k, v, 21, 0.25).sync()
    np.testing.assert_allclose(o, _reference(q, k, v, 21, 0.25), atol=3e-3)

    varlen = att.decode_split_varlen["f16", G, BN, D]
    lens = np.array([40], np.int32)  # one sequence of 2 KV heads
    _refused(lambda: varlen(P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, short, lens, 0.25).sync(),
             "v must have k's shape")
    three = np.array([5, 6, 7], np.int32)  # 3 sequences for 2 KV heads
    _refused(lambda: varlen(P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v, three, 0.25).sync(),
             "the same number of KV heads for each sequence")
    _refused(lambda: varlen(P(o_part, [1, G, D]), P(lse_part, [1, G]), q, k, v, three[:0], 0.25).sync(),
             "divides by zero")  # no sequence at all: `k.shape()[0] % 0`

    tc = att.decode_split_tc["f16", BN, D]
    tc_o = np.zeros((HKV * SPLITS, G, D), np.float32)
    tc_l = np.zeros((HKV * SPLITS, G), np.float32)
    _refused(lambda: tc(P(tc_o, [1, 64, D]), P(tc_l, [1, 64]), q, k, v, 8, 0.25, 0).sync(), "splits must be at least 1")
    _refused(lambda: tc(P(tc_o, [1, 64, D]), P(tc_l, [1, 64]), q, k, v, SMAX + 1, 0.25, SPLITS).sync(),
             "`cache_len` = 41")
    _refused(lambda: tc(P(tc_o, [1, 64, D]), P(tc_l, [1, 64]), q, k, v, 8, 0.25, 3).sync(),  # 4 tiles, 2 x 3 shares
             "a tile for each KV head and share")
    assert not tc_o.any() and not tc_l.any()  # a refused launch writes nothing


def test_a_requirement_of_my_own_reads_numbers_as_kernels_do() -> None:
    # integers as in kernels (`/` toward zero, `%` the dividend's sign), floats IEEE; `n` even and
    # `scale` a positive finite float (NaN fails every comparison)
    mod = tilelang.compile(
        '#[requires(n % 2 == 0 && n / 2 >= -3 && -7 / 2 == -3 && -7 % 2 == -1, "n must be even, -6 at least")]\n'
        '#[requires(scale > 0 && scale / 0.0 > 1.0e30, "scale must be positive")]\n'
        "kernel fn scaled<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, n: i32, scale: f32) {\n"
        "    z.store(x.load_like(z) * scale + (n as f32));\n}\n")
    x, z = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    mod.scaled(P(z, [4]), x, -6, 0.5).sync()
    np.testing.assert_array_equal(z, x * 0.5 - 6)
    for n, scale, phrase in ((3, 1.0, "n must be even"), (-8, 1.0, "`n` = -8"), (2, -1.0, "`scale` = -1.0"),
                             (2, float("nan"), "scale must be positive"), (2, 0.0, "scale must be positive")):
        _refused(lambda n=n, scale=scale: mod.scaled(P(z, [4]), x, n, scale).sync(), phrase)
    np.testing.assert_array_equal(z, x * 0.5 - 6)  # refused launches wrote nothing


def test_one_tile_shape_that_gives_a_generic_two_values() -> None:
    # `[B, B]` tiles from `partition(z, [16, 8])`: "make both sources give `B` the same value" named
    # no fix (both sources are this one argument; Tile's E0214 said to pass the generics with `::<..>`,
    # which cannot help either)
    mod = tilelang.compile("kernel fn sq<const B: i32>(z: &mut Tensor<f32, [B, B]>) { z.store(full::<f32>([B, B], 1.0)); }")
    z = np.zeros((16, 16), np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.sq(P(z, [16, 8])).sync()
    assert e.value.code == "E0504" and "give them one value (16 or 8 for each)" in str(e.value), str(e.value)
    mod.sq(P(z, [16, 16])).sync()
    assert (z == 1).all()
