"""Round 6 through the Python API (huser, 2026-12-05 09:03): std::attention
called from NumPy the way the README and the kernel's header say (generics
by name, `[B * H, S, D]` arrays), against attention by its definition, and
the mistakes a user makes there: a value tensor shorter than the keys (it
was read as zeros past its end: a wrong answer, then the kernel's assert,
E0700; since round 8 the kernel's `#[requires(..)]`, E0513 before the
launch), query heads no multiple of the KV heads (the same), bf16 asked of
float32 arrays (E0504, whose help said "make both sources give `T` the same
value": it now says NumPy has no bf16 and what to pass)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from test_user_programs6 import _attention

P = tilelang.partition


@pytest.fixture(scope="module")
def att() -> tilelang.Module:
    return tilelang.compile("use std::attention::{flash_attention, flash_attention_lse};\n")


def _qkv(h: int, hkv: int, sq: int, sk: int, d: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(h * 100 + sk)
    return tuple((rng.standard_normal(s) * 0.5).astype(np.float16) for s in ((h, sq, d), (hkv, sk, d), (hkv, sk, d)))


def test_causal_grouped_query_attention_from_numpy(att: tilelang.Module) -> None:
    q, k, v = _qkv(6, 2, 19, 27, 24)  # G = 3, S_q < S_k, D = 24
    o, lse = np.zeros_like(q), np.zeros(q.shape[:2], np.float32)
    att.flash_attention_lse[{"BN": 16}](P(o, [1, 16, 24]), P(lse, [1, 16]), q, k, v, 24**-0.5, True).sync()
    want_o, want_lse = _attention(q, k, v, 24**-0.5, True)
    np.testing.assert_allclose(o, want_o, rtol=0, atol=2e-3)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)


def test_attention_mistakes_from_numpy(att: tilelang.Module) -> None:
    q, k, v = _qkv(6, 2, 10, 12, 32)
    o = np.zeros_like(q)
    with pytest.raises(tilelang.TileError) as e:  # v of 5 positions for 12 keys: read as zeros before
        att.flash_attention[{"BN": 16}](P(o, [1, 16, 32]), q, k, v[:, :5].copy(), 0.2, False).sync()
    assert e.value.code == "E0513" and "v must have k's shape" in str(e.value)
    q4, k4, v4 = _qkv(6, 4, 10, 12, 32)
    with pytest.raises(tilelang.TileError) as e:
        att.flash_attention[{"BN": 16}](P(o, [1, 16, 32]), q4, k4, v4, 0.2, False).sync()
    assert e.value.code == "E0513" and "multiple of KV heads" in str(e.value) and "`k.shape()[0]` = 4" in str(e.value)
    f = [a.astype(np.float32) for a in (o, q, k, v)]
    with pytest.raises(tilelang.TileError) as e:  # bf16 of float32 arrays: NumPy has no bf16
        att.flash_attention["bf16", 16, 16, 32](P(f[0], [1, 16, 32]), *f[1:], 0.2, False).sync()
    assert e.value.code == "E0504" and "NumPy has no bf16" in str(e.value) and "leave `T` out" in str(e.value)
    att.flash_attention[{"BN": 16}](P(f[0], [1, 16, 32]), *f[1:], 0.2, False).sync()  # the help's way: f32
    np.testing.assert_allclose(f[0], _attention(q, k, v, 0.2, False)[0], rtol=0, atol=1e-5)


def test_the_dtype_help_of_an_output_keeps_the_array_the_kernel_writes() -> None:
    # `partition(z.astype(numpy.float32), ..)`, the help's spelling, ran the kernel into a copy
    # that was dropped: `z` stayed zeros without a word
    m = tilelang.compile("kernel fn add1<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
                         "    z.store(x.load_like(z) + 1.0);\n}\n")
    z, x = np.zeros(8), np.arange(8, dtype=np.float32)
    with pytest.raises(tilelang.TileError) as e:
        m.add1(P(z, [4]), x).sync()
    assert e.value.code == "E0502" and "`z = z.astype(numpy.float32)`" in str(e.value)
    z = z.astype(np.float32)
    m.add1(P(z, [4]), x).sync()
    np.testing.assert_array_equal(z, x + 1)
    with pytest.raises(tilelang.TileError) as e:  # an input: no rebinding needed
        m.add1(P(z, [4]), x.astype(np.float64)).sync()
    assert "convert it first: `x.astype(numpy.float32)`" in str(e.value)
