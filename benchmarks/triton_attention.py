"""A Triton flash-attention forward: the peer in `attention.py`'s prefill table.

Written for this benchmark from the published algorithm (FlashAttention-2's
online softmax, one program a (query block, batch x head), keys streamed in
blocks, `exp2` with log2(e) folded into the scale, causal blocks above the
diagonal skipped and the diagonal block masked); what a Triton user writes
for [B, H, S, D] tensors. A few block configurations are tried by
`triton.autotune` per (S, D, causal), as a Triton user would.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

_CONFIGS = [
    triton.Config({"BM": 128, "BN": 64}, num_warps=4, num_stages=3),
    triton.Config({"BM": 128, "BN": 64}, num_warps=8, num_stages=3),
    triton.Config({"BM": 128, "BN": 128}, num_warps=8, num_stages=3),
    triton.Config({"BM": 64, "BN": 64}, num_warps=4, num_stages=4),
]


@triton.autotune(configs=_CONFIGS, key=["S", "D", "CAUSAL"])
@triton.jit
def _fwd(Q, K, V, O, qk_scale, S, D: tl.constexpr, CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * D
    rows = pid_m * BM + tl.arange(0, BM)
    cols = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * D + cols[None, :], mask=rows[:, None] < S, other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    hi = tl.minimum((pid_m + 1) * BM, S) if CAUSAL else S
    for start in range(0, hi, BN):
        keys = start + tl.arange(0, BN)
        kt = tl.load(K + base + keys[None, :] * D + cols[:, None], mask=keys[None, :] < S, other=0.0)
        s = tl.dot(q, kt) * qk_scale
        ok = keys[None, :] < S
        if CAUSAL:
            ok = ok & (keys[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * D + cols[None, :], mask=keys[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(O + base + rows[:, None] * D + cols[None, :], acc.to(O.dtype.element_ty), mask=rows[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, out: torch.Tensor | None = None
              ) -> torch.Tensor:
    """softmax(q k^T / sqrt(D)) v over contiguous [B, H, S, D] tensors (the same S for q and k)."""
    b, h, s, d = q.shape
    o = torch.empty_like(q) if out is None else out
    scale = d**-0.5 * 1.4426950408889634  # log2(e): the kernel's exponentials are exp2

    def grid(meta):  # type: ignore[no-untyped-def]
        return (triton.cdiv(s, meta["BM"]), b * h)

    _fwd[grid](q, k, v, o, scale, s, D=d, CAUSAL=causal)
    return o
