"""`benchmarks/attention_variants.tile`'s `decode_split_wg`: the decode split
as a 64-row prefill tile (the KV head's G query rows, the rest read as zeros
past q's edge), which the Hopper attention pipeline takes (TMA ring, wgmma,
a persistent walk of the shares). Its partial outputs and log-sum-exps,
on the interpreter and on the sm_90a code in `llsim`, against NumPy; the
rows past G are stores past the outputs' edge, dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

ROOT = Path(__file__).resolve().parents[2]
G, M = 4, 64


def _variants():  # type: ignore[no-untyped-def]
    return tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))


def _inputs(bhkv: int, smax: int, d: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((bhkv, G, d)).astype(np.float16)
    k, v = (rng.standard_normal((bhkv, smax, d)).astype(np.float16) for _ in range(2))
    return q, k, v


def _reference(q, k, v, cache_len: int, splits: int, bn: int, scale: float):  # type: ignore[no-untyped-def]
    """Each share's softmax-weighted values and its log-sum-exp in log2 units,
    rows [kvh * splits + share] as the kernel's outputs."""
    bhkv, _, d = q.shape
    sk = min(cache_len, k.shape[1])
    nb = -(-sk // bn)
    per = -(-nb // splits)
    o = np.zeros((bhkv * splits, G, d))
    lse = np.full((bhkv * splits, G), -1.0e30)
    for h in range(bhkv):
        for s in range(splits):
            a, b = s * per * bn, min((s + 1) * per * bn, sk)
            if a >= b:
                continue
            x = q[h].astype(np.float64) @ k[h, a:b].astype(np.float64).T * scale * np.log2(np.e)
            mx = x.max(1, keepdims=True)
            p = np.exp2(x - mx)
            o[h * splits + s] = p @ v[h, a:b].astype(np.float64) / p.sum(1, keepdims=True)
            lse[h * splits + s] = mx[:, 0] + np.log2(p.sum(1))
    return o, lse


def _check(o, lse, want_o, want_lse) -> None:  # type: ignore[no-untyped-def]
    seen = want_lse > -1e29
    np.testing.assert_allclose(o[seen], want_o[seen], atol=3e-3, rtol=1e-2)
    np.testing.assert_allclose(lse[seen], want_lse[seen], atol=2e-3, rtol=1e-4)
    assert (o[~seen] == 0).all() and (lse[~seen] < -1e29).all()


# (KV heads, cache positions, cache_len, splits, BN): a last key block cut
# by the tensor's end (zeros past it); a cache_len short of the tensor with
# finite values past it; a share with no key (more shares than key blocks)
CASES = [(2, 200, 200, 2, 64), (2, 256, 150, 2, 64), (1, 128, 128, 3, 64)]
# decode_split_wgl: key blocks of 128, a ring of 3 stages (a cut last block, a short cache_len)
LONG = [(2, 300, 300, 2, 128), (1, 512, 333, 3, 128)]


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES + LONG)
def test_decode_split_wg_on_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int) -> None:
    d = 64
    q, k, v = _inputs(bhkv, smax, d, 3)
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    kern = getattr(_variants(), "decode_split_wgl" if bn == 128 else "decode_split_wg")["f16", G, M, bn, d]
    kern(tilelang.partition(o, [1, M, d]), tilelang.partition(lse, [1, M]), q, k, v, clen, 0.125, splits).sync()
    _check(o, lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def _lowered(program, name: str, generics: dict, params: list):  # type: ignore[no-untyped-def]
    """Kernel `name` of `program` lowered with `generics` for the arguments
    `params` ((name, dtype, shape, tile shape or None) each), and the
    arguments' facts (16-byte aligned; which dims are multiples of 16)."""
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    kir = lower_kernel(program, name, generics, {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
    return kir, facts


def _split_params(bhkv: int, smax: int, splits: int, d: int) -> list:
    """The f16 decode split's arguments: partial outputs and log-sum-exps (an M-row tile a share), q, k, v."""
    f16, f32 = DType.parse("f16"), DType.F32
    return [("o_part", f32, (bhkv * splits, G, d), (1, M, d)), ("lse_part", f32, (bhkv * splits, G), (1, M)),
            ("q", f16, (bhkv, G, d), None), ("k", f16, (bhkv, smax, d), None), ("v", f16, (bhkv, smax, d), None)]


def _kernel_ir(bhkv: int, smax: int, splits: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    name = "decode_split_wgl" if bn == 128 else "decode_split_wg"
    return _lowered(_variants()._program, name, {"T": DType.parse("f16"), "G": G, "M": M, "BN": bn, "D": d},
                    _split_params(bhkv, smax, splits, d))


def _simulate(kir, facts, q, k, v, clen: int, splits: int):  # type: ignore[no-untyped-def]
    """The split's partial outputs and log-sum-exps from `llsim` (scale 0.125): a
    persistent grid of 2 CTAs walking the bhkv * splits shares."""
    import llsim

    bhkv, _, d = q.shape
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    llsim.SimDevice("sm_90a").run(kir, (2, 1), [o, lse, q, k, v, np.int32(clen), np.float32(0.125),
                                                np.int32(splits)], facts)
    return o, lse


def _sdpa_case(torch, batch: int, smax: int, clen: int):  # type: ignore[no-untyped-def]
    """The GPU tests' bf16 q [batch, 32, 1, 128], K and V caches [batch, 8, smax, 128]
    and SDPA's result in f32 over the first `clen` positions."""
    import torch.nn.functional as F

    hq, hkv, d = 32, 8, 128
    g = torch.Generator(device="cuda").manual_seed(clen)
    q = torch.randn(batch, hq, 1, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(batch, hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(batch, hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=g)
    want = F.scaled_dot_product_attention(q.float(), k[:, :, :clen].float(), v[:, :, :clen].float(), enable_gqa=True)
    return q, k, v, want


@pytest.mark.parametrize("bn", [64, 128])
def test_the_pipeline_takes_decode_split_wg(bn: int) -> None:
    kir, facts = _kernel_ir(8, 32768, 16, bn, 128)
    gk = lower_gpu(kir, "sm_90a", facts)
    text = print_gpu_kernel(gk)
    assert gk.persistent == 1 and "role consumer warps 4" in text and "wgmma.rs" in text
    assert text.count("tma.load") >= 3


# (heavy: (2, 200, 200, 2, 64) and (2, 300, 300, 2, 128), a benchmark variant's kernels that (2, 256, 150, 2, 64)
# and (1, 512, 333, 3, 128) simulate with a cache_len inside a key block too; all five run on the interpreter)
@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"),
                         [pytest.param(*c, marks=pytest.mark.heavy) if c in (CASES[0], LONG[0]) else c
                          for c in CASES + LONG])
def test_decode_split_wg_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int, bn: int,
                                          monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    d = 64
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d)
    q, k, v = _inputs(bhkv, smax, d, 4)
    _check(*_simulate(kir, facts, q, k, v, clen, splits), *_reference(q, k, v, clen, splits, bn, 0.125))


@pytest.mark.gpu
@pytest.mark.parametrize(("batch", "smax", "clen", "splits", "bn"), [(1, 8192, 8192, 16, 64), (2, 1024, 1000, 3, 64),
                                                                (8, 512, 300, 33, 64), (1, 8192, 8192, 16, 128),
                                                                (2, 1024, 1000, 3, 128)])
def test_decode_split_wg_with_std_merge_matches_sdpa(batch: int, smax: int, clen: int, splits: int, bn: int) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    d, rows = 128, batch * 8
    q, k, v, want = _sdpa_case(torch, batch, smax, clen)
    std = tilelang.compile("use std::attention::decode_combine;\n")
    ns = 1 << (splits - 1).bit_length()
    o = torch.full_like(q, float("nan"))
    opw = torch.empty(rows * splits, G, d, device="cuda")
    lpw = torch.empty(rows * splits, G, device="cuda")
    getattr(_variants(), "decode_split_wgl" if bn == 128 else "decode_split_wg")["bf16", G, M, bn, d](
        tilelang.partition(opw, [1, M, d]), tilelang.partition(lpw, [1, M]), q.view(rows, G, d),
        k.view(rows, smax, d), v.view(rows, smax, d), clen, d**-0.5, splits).sync()
    std.decode_combine["bf16", G, ns, 32](tilelang.partition(o.view(rows, G, d), [1, G, 32]),
                                          opw.view(rows, splits * G, d), lpw.view(rows, splits * G)).sync()
    err = float((o.float() - want).abs().max() / want.abs().max())
    assert err < 1e-2, err


def test_decode_read_sums_each_share_of_k_and_v() -> None:
    # the floor kernel of benchmarks/decode_floor.py: block (head, share) sums its keys' K and V
    _, k, v = _inputs(2, 200, 64, 5)
    out = np.full((2, 3), np.nan, np.float32)
    _variants().decode_read["f16", 32, 64](tilelang.partition(out, [1, 1]), k, v, 150).sync()
    per = -(-5 // 3) * 32  # keys a share: cdiv(cdiv(150, 32) = 5 blocks, 3 shares) blocks of 32
    for h in range(2):
        for s in range(3):
            a, b = s * per, min((s + 1) * per, 160)  # whole key blocks: 150 rounds up to 160
            want = k[h, a:b].astype(np.float64).sum() + v[h, a:b].astype(np.float64).sum()
            np.testing.assert_allclose(out[h, s], want, rtol=1e-4, atol=1e-2)
