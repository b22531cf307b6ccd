"""Query rows that see no key, on the interpreter and on the generated code
(`llsim`): `flash_attention_lse` with causal S_q > S_k
gives those rows output zeros and log-sum-exp -inf (the log of an empty
sum), the same on both engines; flash decoding of an empty cache
(cache_len 0) and of shares past the cache's end gives zeros, never NaN."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

STD = tilelang.compile("use std::attention::*;\n")
F16, F32 = DType.F16, DType.F32


def _ir(kernel: str, generics: dict[str, object], params: list[tuple[str, DType, tuple[int, ...], object]]):  # type: ignore[no-untyped-def]
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    kir = lower_kernel(STD._program, kernel, generics, {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
    return kir, facts


def _both(kir, facts, grid, args, arch: str):  # type: ignore[no-untyped-def]
    """The outputs (the first `n` args) on the interpreter and on `arch`'s code in llsim."""
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(kir, grid, want)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    SimDevice(arch).run(kir, grid, got, facts)
    return want, got


# sm_90a's Hopper pipeline is checked on such rows by test_attention_pipeline
@pytest.mark.parametrize("arch", ["sm_80"])
def test_prefill_rows_without_keys_give_zeros_and_minus_inf(arch: str) -> None:
    bh, sq, sk, d, bm, bn = 2, 40, 8, 32, 16, 16  # causal, S_q > S_k: the first 32 queries see no key
    params = [("o", F16, (bh, sq, d), (1, bm, d)), ("lse", F32, (bh, sq), (1, bm)),
              ("q", F16, (bh, sq, d), None), ("k", F16, (bh, sk, d), None), ("v", F16, (bh, sk, d), None)]
    kir, facts = _ir("flash_attention_lse", {"T": F16, "BM": bm, "BN": bn, "D": d}, params)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((bh, sq, d), (bh, sk, d), (bh, sk, d)))
    o = np.full((bh, sq, d), np.nan, np.float16)
    lse = np.full((bh, sq), np.nan, np.float32)
    want, got = _both(kir, facts, (bh, -(-sq // bm)), [o, lse, q, k, v, np.float32(0.125), True], arch)
    none = np.arange(sq) < sq - sk  # query i sees key j when j <= i + (sk - sq)
    for o_, lse_ in ((want[0], want[1]), (got[0], got[1])):
        assert np.all(o_[:, none] == 0) and np.all(lse_[:, none] == -np.inf)
        assert np.all(np.isfinite(lse_[:, ~none])) and not np.isnan(o_).any()
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), atol=2e-3, rtol=1e-2)
    np.testing.assert_allclose(got[1][:, ~none], want[1][:, ~none], rtol=1e-5, atol=1e-5)
    # the reference: log(sum exp(scale * q.k)) over the keys a row sees
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), k.astype(np.float64)) * 0.125
    seen = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
    with np.errstate(divide="ignore"):
        ref = np.log(np.where(seen, np.exp(s), 0.0).sum(2))
    np.testing.assert_allclose(got[1], ref, rtol=1e-5, atol=1e-5)  # -inf where ref is -inf


@pytest.mark.parametrize("arch", ["sm_90a"])
@pytest.mark.parametrize("clen", [0, 5])
def test_decoding_an_empty_cache_or_share_gives_zeros(arch: str, clen: int) -> None:
    bhkv, g, smax, d, bn, splits = 2, 4, 64, 32, 16, 4  # clen 5: one key block, three empty shares
    params = [("o_part", F32, (bhkv, splits * g, d), (1, g, d)), ("lse_part", F32, (bhkv, splits * g), (1, g)),
              ("q", F16, (bhkv, g, d), None), ("k", F16, (bhkv, smax, d), None), ("v", F16, (bhkv, smax, d), None)]
    kir, facts = _ir("decode_split", {"T": F16, "G": g, "BN": bn, "D": d}, params)
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((bhkv, g, d), (bhkv, smax, d), (bhkv, smax, d)))
    o_part = np.full((bhkv, splits * g, d), np.nan, np.float32)
    lse_part = np.full((bhkv, splits * g), np.nan, np.float32)
    want, got = _both(kir, facts, (bhkv, splits), [o_part, lse_part, q, k, v, np.int32(clen), np.float32(0.125)],
                      arch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
    cparams = [("o", F16, (bhkv, g, d), (1, g, d)), ("o_part", F32, (bhkv, splits * g, d), None),
               ("lse_part", F32, (bhkv, splits * g), None)]
    ckir, cfacts = _ir("decode_combine", {"T": F16, "G": g, "NS": splits, "DC": d}, cparams)
    o = np.full((bhkv, g, d), np.nan, np.float16)
    cwant, cgot = _both(ckir, cfacts, (bhkv, 1, 1), [o, want[0], want[1]], arch)
    assert not np.isnan(cwant[0]).any() and not np.isnan(cgot[0]).any()
    np.testing.assert_allclose(cgot[0].astype(np.float32), cwant[0].astype(np.float32), atol=2e-3, rtol=1e-2)
    if clen == 0:
        assert np.all(cwant[0] == 0) and np.all(cgot[0] == 0)
    else:
        s = np.einsum("hgd,hkd->hgk", q.astype(np.float64), k[:, :clen].astype(np.float64)) * 0.125
        p = np.exp(s - s.max(2, keepdims=True))
        ref = np.einsum("hgk,hkd->hgd", p / p.sum(2, keepdims=True), v[:, :clen].astype(np.float64))
        np.testing.assert_allclose(cgot[0].astype(np.float64), ref, atol=3e-3, rtol=1e-2)
