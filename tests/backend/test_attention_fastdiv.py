"""The persistent walk's divisions by launch constants as multiply-high, add and
shift (`TILEC_ATTN_FASTDIV=1`, `attention_tiles.fast_divisor` / `divide`)."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from llsim import SimDevice
from ptxas_report import assemble
from test_attention_pipeline import _facts, _reference, _run_lse_and_check, _schedule, _std

from tilelang import driver
from tilelang.backend import emit_ptx, lower_gpu


def _magic(d: int) -> tuple[int, int]:
    """`fast_divisor`'s multiplier and shift, in Python."""
    lg = sum(1 for i in range(31) if d > 1 << i)
    return ((((1 << lg) - d) << 32) // d + 1), lg


def test_the_round_up_division_is_exact_for_the_walks_dividends() -> None:
    """(mulhi(n, m) + n) >> l == n // d for 0 <= n < 2^31 and 1 <= d < 2^31: the edges of every power of two and
    random pairs (the rule `fast_divisor` and `divide` build; the simulator runs below check the ops themselves)."""
    rng = np.random.default_rng(3)
    ds = [*range(1, 600), *(2**k + e for k in range(1, 31) for e in (-1, 0, 1)), *rng.integers(1, 2**31, 400).tolist()]
    for d in (x for x in ds if x < 2**31):
        m, lg = _magic(d)
        assert 0 < m < 2**32
        ns = [0, 1, d - 1, d, d + 1, 2**31 - 1, *rng.integers(0, 2**31, 50).tolist(),
              *(k * d + e for k in (2, 1000, (2**31 - 1) // d) for e in (-1, 0, 1))]
        for n in (x for x in ns if 0 <= x < 2**31):
            assert (((n * m) >> 32) + n) >> lg == n // d, (n, d)


def test_the_switch_replaces_the_walks_divisions(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    k, facts = _std("flash_attention", "f16", 128, 128, 128), _facts("oqkv", 3)
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "0")
    off = emit_ptx(k, "sm_90a", facts)
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    on = emit_ptx(k, "sm_90a", facts)
    divs = [len(re.findall(r"\b(div|rem)\.s32\b", p)) for p in (off, on)]
    assert divs[1] < divs[0], divs  # the tile's position in each role: by the multipliers (one u64 division a CTA)


# "1" outside the short keys' variant is opt-in ("auto" takes the divisions there only: test_attention_chain's
# test_auto_short_variant_in_the_simulator runs them on causal walks of pairs and on more CTAs than tiles by
# default, and at D = 128 "auto" takes them in every kernel: test_attention_boundary's default walks); the default run
# keeps test_the_switch_replaces_the_walks_divisions and the last axis's remainder (htier1, the tiers in
# tests/README.md: three_ctas_five_items heavy too, "1" at D = 64 being opt-in)
@pytest.mark.parametrize(("schedule", "ctas", "walk", "bh", "sq", "causal"),
                         # (heavy: pairs, the pairs walk forced on a full launch; the divisions on a walk of pairs:
                         # test_attention_qdouble's chain_tiles_without_keys (the short variant, causal), the rest
                         # test_the_switch_replaces_the_walks_divisions)
                         [pytest.param("overlap", 2, "pairs", 2, 150, False, marks=pytest.mark.heavy),
                          # (heavy: the rotated loop's divisions: the short variant's walks, test_attention_qdouble's)
                          pytest.param("overlap+rotate", 2, "auto", 2, 150, True, marks=pytest.mark.heavy),
                          pytest.param("overlap+rotate", 3, "auto", 2, 300, False, marks=pytest.mark.heavy),
                          # (heavy: a causal walk of 3 heads on one CTA; the divisions on causal walks: the short
                          # variant's walks in test_attention_qdouble; several tiles a CTA: chain_tiles_without_keys)
                          pytest.param("overlap", 1, "auto", 3, 200, True, marks=pytest.mark.heavy)],
                         ids=["pairs", "rotate_causal", "three_ctas_five_items", "one_cta_causal"])
def test_fast_divisions_walk_every_tile_in_the_simulator(schedule: str, ctas: int, walk: str, bh: int, sq: int,  # type: ignore[no-untyped-def]
                                                        causal: bool, monkeypatch) -> None:
    """Several CTAs over tiles of several heads (items a head 3 or 5, pairs or single tiles): every tile's
    position comes from the fast divisions, and every row is right."""
    _schedule(monkeypatch, schedule)
    monkeypatch.setenv("TILEC_ATTN_WALK", walk)
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    k = _std("flash_attention_lse", "f16", 64, 64, 64)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    assert lower_gpu(k, "sm_90a", facts).persistent == 1
    _run_lse_and_check(k, facts, (ctas, 1), bh, bh, sq, 130, 64, causal, 11)  # (keys: 3 blocks, the last partial)


def test_a_grid_with_tiles_along_its_last_axis_takes_the_division(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """o [heads, S, 2 D] tiled [1, BM, D]: two tiles along the last axis, so the walk's position along the query
    blocks is a remainder (the branch `unravel` skips where the later axes are 1 wide); both halves of each row
    get the attention output. (`flash_attention`'s body in a kernel of the test's own: `std::attention`'s
    requires an `o` of q's shape since hrev32, where this one's second half was a copy.)"""
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    monkeypatch.setenv("TILEC_PERSISTENT_SMS", "1")
    bh, sq, d, bm = 2, 100, 64, 64
    src = ("use std::attention::{attention_tile, normalize};\n"
           "kernel fn twice<T, const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<T, [1, BM, D]>,\n"
           "        q: &Tensor<T, [?, ?, D]>, k: &Tensor<T, [?, ?, D]>, v: &Tensor<T, [?, ?, D]>, scale: f32,\n"
           "        causal: bool) {\n"
           "    let (m, l, acc) = attention_tile::<T, BM, BN, D>(q, k, v, scale, causal);\n"
           "    o.store(normalize(m, l, acc).reshape([1, BM, D]) as T);\n}\n"
           f"fn main() {{ let q = zeros::<f16>([2, 64, {d}]);"
           f" let mut o = zeros::<f16>([2, 64, {2 * d}]);"
           f" twice::<f16, {bm}, 64, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1, false).sync(); }}\n")
    k = driver.compile(src, "ir").output[0]
    facts = _facts("oqkv", 3)
    rng = np.random.default_rng(2)
    q, kk, v = (rng.standard_normal((bh, sq, d)).astype(np.float16) for _ in range(3))
    o = np.full((bh, sq, 2 * d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (2, 1), [o, q, kk, v, np.float32(0.125), False], facts)
    for b in range(bh):
        ref, _ = _reference(q[b], kk[b], v[b], 0.125, False)
        for half in (o[b, :, :d], o[b, :, d:]):
            np.testing.assert_allclose(half.astype(np.float64), ref, atol=3e-3, rtol=1e-2)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas not installed")
# (D = 64 heavy, htier1: "1" there is opt-in; D = 128's kernels take the divisions by default, "auto")
@pytest.mark.parametrize(("dt", "d"), [("f16", 128), ("bf16", 128), pytest.param("f16", 64, marks=pytest.mark.heavy),
                                       pytest.param("bf16", 64, marks=pytest.mark.heavy)])
def test_fast_divisions_assemble_without_spills(dt: str, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_FASTDIV", "1")
    r = assemble(emit_ptx(_std("flash_attention", dt, 128, 128, d), "sm_90a", _facts("oqkv", 3)), "sm_90a")
    assert r.max_spill_stores == 0, r.text
