"""NumPy references for `std::attention` (f64, from the definitions)."""

from __future__ import annotations

import numpy as np


def attention(q, k, v, scale, causal, *, lse=False, cache_len=None):
    """softmax(scale q k^T + mask) v over [B*H, S_q, D] / [B*Hkv, S_k, D].

    Grouped-query: query head bh reads KV head bh // (BH / BHkv). Causal is
    aligned to the bottom right (key j visible to query i when
    j <= i + S_k - S_q); rows that see no key give 0 (and lse = -inf)."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    if cache_len is not None:
        k, v = k[:, :cache_len], v[:, :cache_len]
    bh, sq, _ = q.shape
    group = bh // k.shape[0]
    k = np.repeat(k, group, axis=0)
    v = np.repeat(v, group, axis=0)
    s = scale * np.einsum("bqd,bkd->bqk", q, k)
    sk = k.shape[1]
    if causal:
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        s = np.where(visible[None], s, -np.inf)
    m = s.max(axis=2, keepdims=True, initial=-np.inf)
    seen = np.isfinite(m)
    e = np.exp(s - np.where(seen, m, 0.0))
    den = e.sum(axis=2, keepdims=True)
    o = np.where(seen, np.einsum("bqk,bkd->bqd", e, v) / np.where(seen, den, 1.0), 0.0)
    if not lse:
        return o
    return o, np.where(seen, m + np.log(np.where(seen, den, 1.0)), -np.inf)[..., 0]
