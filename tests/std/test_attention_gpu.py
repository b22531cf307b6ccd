"""`std::attention` on the GPU against PyTorch's scaled_dot_product_attention.

Every variant, on PyTorch CUDA tensors used in place: f16 and bf16, head
dims 64 and 128, causal and not, grouped-query, the log-sum-exp output,
sequence lengths that are not multiples of the blocks, causal with
S_q != S_k (bottom-right aligned: SDPA gets the explicit mask), and flash
decoding (fixed and per-sequence cache lengths). The error is measured in
f32 against SDPA computed in f32 on the same (rounded) inputs.
"""

from __future__ import annotations

import pytest

import tilelang

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
F = torch.nn.functional

ATTN = tilelang.compile("use std::attention::*;\n")
ELEM = {torch.float16: "f16", torch.bfloat16: "bf16"}
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")


def reference(q, k, v, scale, causal, cache_len=None):
    """SDPA in f32 over [BH, S, D] tensors, GQA by repetition, bottom-right causal mask."""
    q, k, v = q.float(), k.float(), v.float()
    if cache_len is not None:
        k, v = k[:, :cache_len], v[:, :cache_len]
    g = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(g, 0), v.repeat_interleave(g, 0)
    sq, sk = q.shape[1], k.shape[1]
    mask = None
    if causal:
        mask = torch.arange(sk, device=q.device)[None, :] <= torch.arange(sq, device=q.device)[:, None] + (sk - sq)
    s = torch.einsum("bqd,bkd->bqk", q, k) * scale
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    o = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask, scale=scale)[0]
    return torch.nan_to_num(o), lse


def rel_err(got, want):
    return float((got.float() - want).abs().max() / want.abs().max().clamp_min(1e-6))


PREFILL = [
    # dtype, BH, BHkv, S_q, S_k, D, causal
    ("f16", 8, 8, 1024, 1024, 128, False),
    ("f16", 8, 8, 1024, 1024, 128, True),
    ("bf16", 8, 2, 1000, 1000, 128, True),  # GQA, S not a multiple of the block
    ("bf16", 16, 16, 777, 777, 64, False),
    ("f16", 16, 4, 513, 513, 64, True),
    ("bf16", 4, 1, 300, 1100, 128, True),  # causal, S_q < S_k
    ("f16", 4, 4, 900, 333, 64, True),  # causal, S_q > S_k: early rows see nothing
    ("bf16", 4, 4, 200, 700, 128, False),
]
# (BM, BN): two consumer warpgroups (BM = 128) on the Hopper path, key blocks of
# 64 and of 128 (the benchmark's) taken in turn, so that each head dim meets both
BLOCKS = [(128, 64), (128, 128)]


def blocks(case):
    return BLOCKS[PREFILL.index(case) % 2]


@pytest.mark.parametrize("case", PREFILL, ids=lambda c: "-".join(map(str, c)))
def test_flash_attention_matches_sdpa(case):
    check_prefill(case, *blocks(case))


def check_prefill(case, bm, bn):  # type: ignore[no-untyped-def]
    """`flash_attention_lse` at blocks BM x BN on `case` against SDPA in f32 (the rows that see no key: lse -inf,
    zeros), and `flash_attention` on the same inputs bit for bit (tests/std/test_attention_wg3_gpu.py too)."""
    dtype, bh, hkv, sq, sk, d, causal = case
    dt = DTYPES[dtype]
    g = torch.Generator(device="cuda").manual_seed(sum(case[1:6]))
    q = torch.randn(bh, sq, d, device="cuda", dtype=dt, generator=g)
    k = torch.randn(hkv, sk, d, device="cuda", dtype=dt, generator=g)
    v = torch.randn(hkv, sk, d, device="cuda", dtype=dt, generator=g)
    o = torch.full_like(q, float("nan"))
    lse = torch.full((bh, sq), float("nan"), device="cuda")
    scale = d**-0.5
    ATTN.flash_attention_lse[dtype, bm, bn, d](
        tilelang.partition(o, [1, bm, d]), tilelang.partition(lse, [1, bm]), q, k, v, scale, causal
    ).sync()
    want, want_lse = reference(q, k, v, scale, causal)
    assert rel_err(o, want) < 1e-2
    seen = torch.isfinite(want_lse)
    torch.testing.assert_close(lse[seen], want_lse[seen], rtol=1e-4, atol=1e-3)
    assert bool((o[~seen] == 0).all())
    o2 = torch.full_like(q, float("nan"))
    ATTN.flash_attention[dtype, bm, bn, d](tilelang.partition(o2, [1, bm, d]), q, k, v, scale, causal).sync()
    assert torch.equal(o, o2)


DECODE = [
    # dtype, B, Hkv, G, S_max, cache_len, D, BN, splits, DC
    ("bf16", 1, 8, 4, 8192, 8192, 128, 64, 16, 128),
    ("bf16", 1, 8, 4, 8192, 8000, 128, 32, 64, 16),  # the benchmark's plan for batch 1 before 2026-12-02 noon
    ("bf16", 1, 8, 4, 8192, 8100, 128, 64, 16, 16),  # decode_plan's for batch 1 since
    ("bf16", 8, 8, 4, 4096, 3001, 128, 64, 8, 64),
    ("f16", 2, 2, 8, 1000, 999, 64, 32, 5, 64),
    ("f16", 1, 4, 1, 500, 333, 128, 32, 4, 32),  # multi-head: G = 1, 16 copies of the row
    ("bf16", 1, 1, 32, 700, 650, 64, 32, 4, 64),  # multi-query: G = 32
]


@pytest.mark.parametrize("case", DECODE, ids=lambda c: "-".join(map(str, c)))
def test_flash_decoding_matches_sdpa(case):
    dtype, b, hkv, grp, smax, clen, d, bn, splits, dc = case
    dt = DTYPES[dtype]
    g = torch.Generator(device="cuda").manual_seed(clen)
    q = torch.randn(b * hkv, grp, d, device="cuda", dtype=dt, generator=g)
    k = torch.randn(b * hkv, smax, d, device="cuda", dtype=dt, generator=g)
    v = torch.randn(b * hkv, smax, d, device="cuda", dtype=dt, generator=g)
    k[:, clen:] = float("nan")  # the cache past its length: garbage
    v[:, clen:] = float("nan")
    o_part = torch.empty(b * hkv, splits * grp, d, device="cuda")
    lse_part = torch.empty(b * hkv, splits * grp, device="cuda")
    o = torch.empty_like(q)
    scale = d**-0.5
    ns = 1 << (splits - 1).bit_length()
    ATTN.decode_split[dtype, grp, bn, d](
        tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]), q, k, v, clen, scale
    ).sync()
    ATTN.decode_combine[dtype, grp, ns, dc](tilelang.partition(o, [1, grp, dc]), o_part, lse_part).sync()
    want, _ = reference(q.reshape(b * hkv * grp, 1, d), k, v, scale, False, cache_len=clen)
    assert rel_err(o.reshape(-1, 1, d), want) < 1e-2
    # the same with the lengths on the device, one per sequence
    lens = torch.full((b,), clen, device="cuda", dtype=torch.int32)
    o_v = torch.empty_like(q)
    ATTN.decode_split_varlen[dtype, grp, bn, d](
        tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]), q, k, v, lens, scale
    ).sync()
    ATTN.decode_combine[dtype, grp, ns, dc](tilelang.partition(o_v, [1, grp, dc]), o_part, lse_part).sync()
    assert torch.equal(o, o_v)


@pytest.mark.parametrize("case", DECODE, ids=[f"{c[0]}-b{c[1]}-s{c[5]}-sp{c[8]}" for c in DECODE])
def test_fused_decoding_matches_sdpa_and_the_pair(case):
    # `decode_fused`: the merge done by the last block of each KV head
    # (`if last_block(1)`), in one launch; the same numbers as the pair, eager
    # again and again (the group counters reset themselves) and replayed in a
    # CUDA graph
    dtype, b, hkv, grp, smax, clen, d, bn, splits, dc = case
    dt = DTYPES[dtype]
    g = torch.Generator(device="cuda").manual_seed(clen + 1)
    q = torch.randn(b * hkv, grp, d, device="cuda", dtype=dt, generator=g)
    k = torch.randn(b * hkv, smax, d, device="cuda", dtype=dt, generator=g)
    v = torch.randn(b * hkv, smax, d, device="cuda", dtype=dt, generator=g)
    k[:, clen:] = float("nan")
    v[:, clen:] = float("nan")
    o_part = torch.empty(b * hkv, splits * grp, d, device="cuda")
    lse_part = torch.empty(b * hkv, splits * grp, device="cuda")
    scale = d**-0.5
    ns = 1 << (splits - 1).bit_length()
    pair = torch.empty_like(q)
    ATTN.decode_split[dtype, grp, bn, d](
        tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]), q, k, v, clen, scale
    ).sync()
    ATTN.decode_combine[dtype, grp, ns, dc](tilelang.partition(pair, [1, grp, dc]), o_part, lse_part).sync()
    fused = ATTN.decode_fused[dtype, grp, bn, d, ns, min(8, ns)]
    o = torch.full_like(q, float("nan"))

    def step():
        return fused(tilelang.partition(o_part, [1, grp, d]), tilelang.partition(lse_part, [1, grp]),
                     tilelang.partition(o, [1, grp, d]), q, k, v, clen, scale)

    step().sync()
    first = o.clone()
    assert rel_err(first.reshape(-1, 1, d), pair.reshape(-1, 1, d).float()) < 4e-3
    for _ in range(3):  # the same numbers whichever block of a head arrives last
        o.fill_(float("nan"))
        step().sync()
        assert torch.equal(o, first)
    want, _ = reference(q.reshape(b * hkv * grp, 1, d), k, v, scale, False, cache_len=clen)
    assert rel_err(o.reshape(-1, 1, d), want) < 1e-2
    torch.cuda.synchronize()
    gr = torch.cuda.CUDAGraph()
    with torch.cuda.graph(gr):
        step().launch()
    for _ in range(20):
        o.fill_(float("nan"))
        gr.replay()
        torch.cuda.synchronize()
        assert torch.equal(o, first)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_four_d_tensors_in_place_with_a_scale(dtype):
    # PyTorch's [B, H, S, D] layout viewed as [B * H, S, D]: the kernel writes
    # the caller's 4-D output tensor; a softmax scale that is not 1 / sqrt(D)
    dt = DTYPES[dtype]
    b, h, hkv, s, d, scale = 2, 8, 2, 333, 64, 0.3
    g = torch.Generator(device="cuda").manual_seed(7)
    q = torch.randn(b, h, s, d, device="cuda", dtype=dt, generator=g)
    k = torch.randn(b, hkv, s, d, device="cuda", dtype=dt, generator=g)
    v = torch.randn(b, hkv, s, d, device="cuda", dtype=dt, generator=g)
    o = torch.zeros_like(q)
    bm, bn = BLOCKS[0] if dtype == "f16" else BLOCKS[1]
    ATTN.flash_attention[dtype, bm, bn, d](
        tilelang.partition(o.view(b * h, s, d), [1, bm, d]),
        q.view(b * h, s, d), k.view(b * hkv, s, d), v.view(b * hkv, s, d), scale, True,
    ).sync()
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True, scale=scale,
                                          enable_gqa=True)
    assert rel_err(o, want) < 1e-2
