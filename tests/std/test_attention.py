"""`std::attention` on the CPU interpreter against a NumPy reference.

Every variant on small shapes: f16 and bf16, head dims 64 and 128, causal
and not, grouped-query (several query heads per KV head), the log-sum-exp
output, sequence lengths that are not multiples of the blocks, causal with
S_q != S_k both ways (bottom-right alignment, rows that see no key), and
flash decoding with a run-time cache length, splits that get no key, and
NS larger than the number of splits. The f16 kernels are called through
the Python API on NumPy arrays (`use std::attention::*;` compiled as a module: imported kernels are callable); the bf16
ones from Tile programs (`use std::attention::..`, tensors made by `randn`).
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import tilelang
from tilelang.interp.numeric import round_bf16
from tilelang.run import execute

from attention_ref import attention

# the stdlib kernels, imported by a one-line module
ATTN = tilelang.compile("use std::attention::*;\n")

# Output rounding (f16: 2^-11, bf16: 2^-8 relative) plus P rounded to the
# input type before the second mma, on outputs of magnitude ~1.
TOL = {"f16": dict(rtol=1e-2, atol=4e-3), "bf16": dict(rtol=4e-2, atol=3e-2)}


def _bf16_run(program: str) -> dict[str, np.ndarray]:
    ex = execute(program, "cpu", out=io.StringIO())
    return {k: t.numpy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}


def _inputs(rng: np.random.Generator, dtype: str, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    out = []
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        # f16 arrays for f16; bf16 parameters take float32 arrays, so round
        # them to bf16 here and the reference sees exactly the kernel's inputs
        out.append(x.astype(np.float16) if dtype == "f16" else round_bf16(x))
    return out


def _prefill(dtype, bh, hkv, sq, sk, d, bm, bn, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = _inputs(rng, dtype, (bh, sq, d), (hkv, sk, d), (hkv, sk, d))
    o = np.full_like(q, np.nan)  # every element must be written
    lse = np.full((bh, sq), np.nan, np.float32)
    scale = d**-0.5
    ATTN.flash_attention_lse[dtype, bm, bn, d](
        tilelang.partition(o, [1, bm, d]), tilelang.partition(lse, [1, bm]), q, k, v, scale, causal
    ).sync()
    return o, lse, attention(q, k, v, scale, causal, lse=True)


CASES = [
    # dtype, BH, BHkv, S_q, S_k, D, BM, BN, causal
    ("f16", 4, 4, 64, 64, 64, 32, 32, False),
    ("f16", 4, 4, 64, 64, 64, 32, 32, True),
    ("f16", 2, 2, 100, 100, 128, 32, 16, True),  # S not a multiple of either block
    ("f16", 4, 1, 70, 70, 64, 16, 32, False),  # multi-query: 4 query heads, 1 KV head
    ("f16", 2, 1, 40, 130, 64, 16, 32, True),  # causal, S_q < S_k: a chunk after a prefix
    ("f16", 2, 2, 130, 40, 64, 32, 16, True),  # causal, S_q > S_k: early rows see nothing
    ("f16", 2, 2, 33, 77, 64, 32, 32, False),  # S_q != S_k, not causal
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_flash_attention_matches_numpy(case):
    dtype, bh, hkv, sq, sk, d, bm, bn, causal = case
    o, lse, (ro, rlse) = _prefill(dtype, bh, hkv, sq, sk, d, bm, bn, causal, seed=sum(case[1:6]))
    np.testing.assert_allclose(o.astype(np.float64), ro, **TOL[dtype])
    seen = np.isfinite(rlse)
    np.testing.assert_allclose(lse[seen], rlse[seen], rtol=1e-5, atol=1e-4)
    # rows that see no key: zeros, and lse -inf (the log of an empty sum)
    assert np.all(o[~seen] == 0)
    assert np.all(lse[~seen] == -np.inf)
    if causal and sq > sk:
        assert not seen.all()  # the case really has such rows


def test_flash_attention_without_lse_is_the_same_output():
    rng = np.random.default_rng(5)
    q, k, v = _inputs(rng, "f16", (2, 50, 64), (1, 50, 64), (1, 50, 64))
    o = np.zeros_like(q)
    ATTN.flash_attention["f16", 16, 32, 64](tilelang.partition(o, [1, 16, 64]), q, k, v, 0.2, True).sync()
    o2 = np.zeros_like(q)
    lse = np.zeros((2, 50), np.float32)
    ATTN.flash_attention_lse["f16", 16, 32, 64](
        tilelang.partition(o2, [1, 16, 64]), tilelang.partition(lse, [1, 16]), q, k, v, 0.2, True
    ).sync()
    np.testing.assert_array_equal(o, o2)
    np.testing.assert_allclose(o.astype(np.float64), attention(q, k, v, 0.2, True), **TOL["f16"])


def test_causal_is_the_lower_triangle_when_lengths_agree():
    # one query block, two key blocks: the second is skipped for the first
    # half of the rows' block and masked at the diagonal
    rng = np.random.default_rng(9)
    q, k, v = _inputs(rng, "f16", (1, 32, 64), (1, 32, 64), (1, 32, 64))
    o = np.zeros_like(q)
    ATTN.flash_attention["f16", 16, 16, 64](tilelang.partition(o, [1, 16, 64]), q, k, v, 0.125, True).sync()
    # row 0 sees key 0 only: its output is v[0]
    np.testing.assert_array_equal(o[0, 0], v[0, 0])
    full = attention(q, k, v, 0.125, False)
    assert np.abs(o.astype(np.float64) - full).max() > 0.1  # the mask mattered


@pytest.mark.parametrize("scale", [1.0, 0.02, 0.5])
def test_softmax_scale(scale):
    # the scale multiplies the scores before the softmax (not a fixed 1 / sqrt(D))
    rng = np.random.default_rng(11)
    q, k, v = _inputs(rng, "f16", (2, 40, 64), (2, 40, 64), (2, 40, 64))
    o = np.zeros_like(q)
    ATTN.flash_attention["f16", 16, 16, 64](tilelang.partition(o, [1, 16, 64]), q, k, v, scale, False).sync()
    np.testing.assert_allclose(o.astype(np.float64), attention(q, k, v, scale, False), **TOL["f16"])
    other = attention(q, k, v, scale * 2, False)
    assert np.abs(o.astype(np.float64) - other).max() > 1e-2


def test_four_d_and_two_d_forms_in_place():
    # [B, H, S, D] and [B * H * S, D] arrays are the kernel's [B * H, S, D] as
    # views: the kernel writes the caller's own array
    rng = np.random.default_rng(12)
    b, h, hkv, s, d = 2, 4, 2, 45, 64
    q4, k4, v4 = _inputs(rng, "f16", (b, h, s, d), (b, hkv, s, d), (b, hkv, s, d))
    o4 = np.zeros_like(q4)
    ATTN.flash_attention["f16", 32, 16, d](
        tilelang.partition(o4.reshape(b * h, s, d), [1, 32, d]),
        q4.reshape(b * h, s, d), k4.reshape(b * hkv, s, d), v4.reshape(b * hkv, s, d), 0.125, True,
    ).sync()
    want = attention(q4.reshape(b * h, s, d), k4.reshape(b * hkv, s, d), v4.reshape(b * hkv, s, d), 0.125, True)
    np.testing.assert_allclose(o4.reshape(b * h, s, d).astype(np.float64), want, **TOL["f16"])
    q2, k2, v2 = (x.reshape(-1, d) for x in (q4, k4, v4))
    o2 = np.zeros_like(q2)
    ATTN.flash_attention["f16", 32, 16, d](
        tilelang.partition(o2.reshape(b * h, s, d), [1, 32, d]),
        q2.reshape(b * h, s, d), k2.reshape(b * hkv, s, d), v2.reshape(b * hkv, s, d), 0.125, True,
    ).sync()
    np.testing.assert_array_equal(o2, o4.reshape(-1, d))


def test_query_heads_must_be_a_multiple_of_kv_heads():
    rng = np.random.default_rng(1)
    q, k, v = _inputs(rng, "f16", (3, 16, 64), (2, 16, 64), (2, 16, 64))
    o = np.zeros_like(q)
    with pytest.raises(tilelang.TileError, match="multiple of KV heads"):
        ATTN.flash_attention["f16", 16, 16, 64](tilelang.partition(o, [1, 16, 64]), q, k, v, 0.1, False).sync()


# ---------------------------------------------------------------- decode

def _decode(dtype, b, hkv, g, smax, cache_len, d, bn, splits, ns, seed, dc=None):
    rng = np.random.default_rng(seed)
    q, k, v = _inputs(rng, dtype, (b * hkv, g, d), (b * hkv, smax, d), (b * hkv, smax, d))
    o_part = np.full((b * hkv, splits * g, d), np.nan, np.float32)
    lse_part = np.full((b * hkv, splits * g), np.nan, np.float32)
    o = np.full_like(q, np.nan)
    scale = d**-0.5
    ATTN.decode_split[dtype, g, bn, d](
        tilelang.partition(o_part, [1, g, d]), tilelang.partition(lse_part, [1, g]),
        q, k, v, cache_len, scale,
    ).sync()
    dc = dc or d
    ATTN.decode_combine[dtype, g, ns, dc](tilelang.partition(o, [1, g, dc]), o_part, lse_part).sync()
    # the reference: b * H query rows of one token each, over the valid cache
    ref = attention(q.reshape(b * hkv * g, 1, d), k, v, scale, False, cache_len=cache_len)
    return o, ref.reshape(o.shape), o_part


DECODE = [
    # dtype, B, Hkv, G, S_max, cache_len, D, BN, splits, NS
    ("f16", 1, 2, 4, 300, 300, 128, 32, 4, 4),  # 32 x 8 heads in small: G = 4
    ("f16", 2, 2, 4, 300, 257, 128, 32, 3, 4),  # cache_len not a multiple of BN; NS > splits
    ("f16", 2, 1, 8, 200, 131, 64, 16, 8, 8),
    ("f16", 1, 2, 2, 100, 20, 64, 16, 4, 8),  # more splits than key blocks: empty splits
    ("f16", 1, 1, 4, 64, 1, 64, 16, 2, 2),  # one cached token
    ("f16", 1, 2, 1, 80, 77, 64, 16, 2, 2),  # multi-head (G = 1: 16 copies of the row)
    ("f16", 1, 1, 3, 80, 50, 64, 16, 2, 2),  # G = 3: 5 copies, 15 rows
    ("f16", 1, 1, 32, 48, 48, 64, 16, 2, 2),  # G = 32: no copies
    ("f16", 1, 1, 4, 200, 199, 64, 40, 2, 2),  # BN 40: 10 keys a warp, not in 4 lane groups (one group)
    ("f16", 1, 1, 4, 200, 190, 96, 48, 2, 2),  # D 96 (3 lanes along the keys), 12 keys a warp: 3 groups of 4
]


@pytest.mark.parametrize("case", DECODE, ids=lambda c: "-".join(map(str, c)))
def test_flash_decoding_matches_numpy(case):
    o, ref, _ = _decode(*case, seed=sum(case[1:8]))
    np.testing.assert_allclose(o.astype(np.float64), ref, **TOL[case[0]])


@pytest.mark.parametrize("dc", [64, 16, 8])
def test_combine_by_column_chunks_is_the_same(dc):
    # o tiled [1, G, DC]: D / DC blocks per KV head, each merging its columns
    whole, ref, _ = _decode("f16", 2, 2, 4, 130, 129, 64, 16, 4, 4, seed=8)
    o, _, _ = _decode("f16", 2, 2, 4, 130, 129, 64, 16, 4, 4, seed=8, dc=dc)
    np.testing.assert_array_equal(o, whole)
    np.testing.assert_allclose(o.astype(np.float64), ref, **TOL["f16"])


def test_decoding_split_count_does_not_change_the_result():
    outs = [_decode("f16", 1, 1, 4, 256, 250, 64, 16, s, 16, seed=3)[0] for s in (1, 5, 16)]
    for o in outs[1:]:
        np.testing.assert_allclose(o.astype(np.float64), outs[0].astype(np.float64), atol=2e-3)


def test_decoding_reads_only_the_valid_cache():
    # positions past cache_len hold garbage (NaN) that must not leak
    rng = np.random.default_rng(2)
    q, k, v = _inputs(rng, "f16", (1, 4, 64), (1, 96, 64), (1, 96, 64))
    k[:, 70:] = np.nan
    v[:, 70:] = np.nan
    o_part = np.zeros((1, 8, 64), np.float32)
    lse_part = np.zeros((1, 8), np.float32)
    o = np.zeros_like(q)
    ATTN.decode_split["f16", 4, 32, 64](
        tilelang.partition(o_part, [1, 4, 64]), tilelang.partition(lse_part, [1, 4]), q, k, v, 70, 0.125
    ).sync()
    ATTN.decode_combine["f16", 4, 2, 64](tilelang.partition(o, [1, 4, 64]), o_part, lse_part).sync()
    ref = attention(q.reshape(4, 1, 64), k, v, 0.125, False, cache_len=70).reshape(o.shape)
    assert np.isfinite(o).all()
    np.testing.assert_allclose(o.astype(np.float64), ref, **TOL["f16"])


def test_empty_cache_gives_zeros():
    o, ref, o_part = _decode("f16", 1, 2, 2, 64, 0, 64, 16, 2, 2, seed=4)
    assert np.all(o == 0) and np.all(ref == 0) and np.all(o_part == 0)


def test_combine_refuses_more_splits_than_ns():
    with pytest.raises(tilelang.TileError, match="more splits than NS"):
        _decode("f16", 1, 1, 4, 64, 64, 64, 16, 4, 2, seed=1)


# ---------------------------------------------------------------- bf16, from Tile programs

BF16_PREFILL = [
    # BH, BHkv, S_q, S_k, D, BM, BN, causal
    (4, 2, 90, 90, 64, 32, 32, True),  # grouped-query, S not a multiple of the block
    (2, 2, 48, 48, 128, 16, 16, False),
    (2, 2, 70, 40, 64, 32, 16, True),  # causal, S_q > S_k
]


@pytest.mark.parametrize("case", BF16_PREFILL, ids=lambda c: "-".join(map(str, c)))
def test_bf16_flash_attention_from_tile(case):
    bh, hkv, sq, sk, d, bm, bn, causal = case
    v = _bf16_run(f"""
use std::attention::flash_attention_lse;
fn main() {{
    let q = randn::<bf16>([{bh}, {sq}, {d}], 1);
    let k = randn::<bf16>([{hkv}, {sk}, {d}], 2);
    let v = randn::<bf16>([{hkv}, {sk}, {d}], 3);
    let mut o = zeros::<bf16>([{bh}, {sq}, {d}]);
    let mut lse = zeros::<f32>([{bh}, {sq}]);
    flash_attention_lse::<bf16, {bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), lse.partition([1, {bm}]),
                                               &q, &k, &v, {d ** -0.5}, {str(causal).lower()}).sync();
}}
""")
    ro, rlse = attention(v["q"], v["k"], v["v"], d**-0.5, causal, lse=True)
    np.testing.assert_allclose(v["o"].astype(np.float64), ro, **TOL["bf16"])
    seen = np.isfinite(rlse)
    np.testing.assert_allclose(v["lse"][seen], rlse[seen], rtol=1e-5, atol=1e-4)
    assert np.all(v["o"][~seen] == 0)


def test_bf16_flash_decoding_from_tile():
    # 32 query heads over 8 KV heads (G = 4) in small: batch 2, 2 KV heads
    v = _bf16_run("""
use std::attention::{decode_split, decode_combine};
fn main() {
    let q = randn::<bf16>([4, 4, 128], 1);
    let k = randn::<bf16>([4, 300, 128], 2);
    let v = randn::<bf16>([4, 300, 128], 3);
    let mut o_part = zeros::<f32>([4, 3 * 4, 128]);
    let mut lse_part = zeros::<f32>([4, 3 * 4]);
    let mut o = zeros::<bf16>([4, 4, 128]);
    decode_split::<bf16, 4, 32, 128>(o_part.partition([1, 4, 128]), lse_part.partition([1, 4]),
                                     &q, &k, &v, 257, 0.08838834764831845).sync();
    decode_combine::<bf16, 4, 4, 128>(o.partition([1, 4, 128]), &o_part, &lse_part).sync();
}
""")
    ref = attention(v["q"].reshape(16, 1, 128), v["k"], v["v"], 0.08838834764831845, False, cache_len=257)
    np.testing.assert_allclose(v["o"].astype(np.float64), ref.reshape(4, 4, 128), **TOL["bf16"])


def test_varlen_decoding_reads_each_sequence_length_on_the_device():
    # batch 3, 2 KV heads of 4 query heads each; lengths 0, 37 and 100
    rng = np.random.default_rng(6)
    b, hkv, g, smax, d, splits = 3, 2, 4, 100, 64, 4
    q, k, v = _inputs(rng, "f16", (b * hkv, g, d), (b * hkv, smax, d), (b * hkv, smax, d))
    lens = np.array([0, 37, 100], np.int32)
    o_part = np.zeros((b * hkv, splits * g, d), np.float32)
    lse_part = np.zeros((b * hkv, splits * g), np.float32)
    o = np.full_like(q, np.nan)
    ATTN.decode_split_varlen["f16", g, 16, d](
        tilelang.partition(o_part, [1, g, d]), tilelang.partition(lse_part, [1, g]), q, k, v, lens, 0.125
    ).sync()
    ATTN.decode_combine["f16", g, splits, d](tilelang.partition(o, [1, g, d]), o_part, lse_part).sync()
    for s in range(b):
        rows = slice(s * hkv, (s + 1) * hkv)
        ref = attention(q[rows].reshape(hkv * g, 1, d), k[rows], v[rows], 0.125, False, cache_len=int(lens[s]))
        np.testing.assert_allclose(o[rows].astype(np.float64), ref.reshape(hkv, g, d), **TOL["f16"])
    assert np.all(o[:hkv] == 0)
