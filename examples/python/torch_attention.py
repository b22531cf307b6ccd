"""Tile's flash attention inside a PyTorch model's forward pass.

`SelfAttention` is a grouped-query causal self-attention layer (the attention
of a Llama-style block: 8 query heads sharing 2 key/value heads). Its
projections are PyTorch; its attention is `std::attention::flash_attention`,
a Tile kernel called on PyTorch's own tensors: the `[B, H, S, D]` query, key,
value and output tensors are viewed as `[B * H, S, D]` without a copy, the
kernel writes the output tensor PyTorch allocated in place, and it runs on
PyTorch's current CUDA stream (or, for CPU tensors, on Tile's interpreter).

The same layer generates: `forward(x, cache)` with one new token per
sequence appends its key and value to a preallocated KV cache (PyTorch) and
attends with flash decoding (`decode_split` + `decode_combine`, or
`decode_split_tc` on Hopper's tensor cores where the cache fits in L2:
`decode_attention` below), the cache length a run-time value.

    python examples/python/torch_attention.py          # GPU if there is one

The layer's outputs (a prompt, then decoding steps) are checked against the
same layer with PyTorch's `scaled_dot_product_attention`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from decode_plan import (  # the launch rule (no PyTorch in it)
    combine_ns,
    decode_plan,
    merge_pdl,
    split_kernel,
)
from prefill_plan import prefill_blocks  # the prefill's blocks (no PyTorch in it either)

import tilelang
from tilelang.runtime import cuda_pdl

# The stdlib kernel, imported by a one-line module.
TILE = tilelang.compile("use std::attention::{flash_attention, decode_split, decode_split_tc, decode_combine};\n")
ELEM = {torch.float16: "f16", torch.bfloat16: "bf16"}


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """softmax(q k^T / sqrt(D) [+ causal mask]) v, in Tile.

    q: [B, H, S_q, D]; k, v: [B, Hkv, S_k, D] with H a multiple of Hkv
    (grouped-query attention). f16 or bf16 (bf16 on the GPU only: NumPy,
    which the interpreter reads CPU tensors through, has no bf16)."""
    b, h, s, d = q.shape
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # Tile reads row-major tensors
    o = torch.empty_like(q)
    if q.is_cuda:  # the launch rule's blocks for this card (`prefill_plan`)
        major, minor = torch.cuda.get_device_capability(q.device)
        bm, bn = prefill_blocks(d, 10 * major + minor)
    else:
        bm, bn = 64, 64
    TILE.flash_attention[ELEM[q.dtype], bm, bn, d](
        tilelang.partition(o.view(b * h, s, d), [1, bm, d]),  # block (bh, i) writes its rows of `o`
        q.view(b * h, s, d),
        k.view(-1, k.shape[2], d),
        v.view(-1, v.shape[2], d),
        d**-0.5,
        causal,
    ).sync()
    return o


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, cache_len: int,
                     plan: tuple[int, int, int] | None = None, split: str | None = None) -> torch.Tensor:
    """One decoding step: softmax(q k^T / sqrt(D)) v over the first
    `cache_len` positions of the cache, in Tile (flash decoding).

    q: [B, H, 1, D]; k_cache, v_cache: [B, Hkv, S_max, D] with H a multiple
    of Hkv (the query heads of one KV head are one tile: the cache is read
    once for all of them). `split`: "tc" or "fma" instead of the rule's
    (`split_kernel`) split kernel. On sm_90 and later the merge is launched
    with programmatic dependent launch (`merge_pdl`: inside a CUDA graph its
    launch overlaps the split's end). Returns [B, H, 1, D]."""
    b, h, _, d = q.shape
    hkv = k_cache.shape[1]
    group = h // hkv
    props = torch.cuda.get_device_properties(q.device) if q.is_cuda else None
    sms = props.multi_processor_count if props else 4
    bn, splits, dc = plan or decode_plan(b * hkv, group, cache_len, d, sms, bn=None if q.is_cuda else 16)
    kind = split or (split_kernel(b * hkv, group, cache_len, d, 10 * props.major + props.minor, props.L2_cache_size)
                     if props else "fma")
    elem = ELEM[q.dtype]
    o_part = torch.empty(b * hkv, splits * group, d, device=q.device, dtype=torch.float32)
    lse_part = torch.empty(b * hkv, splits * group, device=q.device, dtype=torch.float32)
    o = torch.empty_like(q)
    qkv = (q.contiguous().view(b * hkv, group, d),  # the G query heads of a KV head are adjacent
           k_cache.view(b * hkv, -1, d), v_cache.view(b * hkv, -1, d))
    with cuda_pdl.scoped(False):  # the split without PDL (`merge_pdl`)
        if kind == "tc":  # block b: share b % splits of KV head b / splits, its G rows of a 64-row tile
            TILE.decode_split_tc[elem, bn, d](
                tilelang.partition(o_part.view(-1, group, d), [1, 64, d]),
                tilelang.partition(lse_part.view(-1, group), [1, 64]),
                *qkv, cache_len, d**-0.5, splits,
            ).sync()
        else:
            TILE.decode_split[elem, group, bn, d](
                tilelang.partition(o_part, [1, group, d]),   # block (kvh, s): split s of KV head kvh
                tilelang.partition(lse_part, [1, group]),
                *qkv, cache_len, d**-0.5,
            ).sync()
    with cuda_pdl.scoped(props is not None and merge_pdl(10 * props.major + props.minor), "late"):
        TILE.decode_combine[elem, group, combine_ns(splits), dc](
            tilelang.partition(o.view(b * hkv, group, d), [1, group, dc]), o_part, lse_part
        ).sync()
    return o


class SelfAttention(torch.nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, use_tile: bool = True) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = torch.nn.Linear(dim, dim, bias=False)
        self.wkv = torch.nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.wo = torch.nn.Linear(dim, dim, bias=False)
        self.use_tile = use_tile

    def forward(self, x: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        """x: [B, S, dim]. With a cache, the S new positions are appended to it
        and attend to everything cached (S = 1: a decoding step)."""
        b, s, dim = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.wkv(x).view(b, s, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        group = self.heads // self.kv_heads
        if cache is not None:
            k, v = cache.append(k, v)
        if self.use_tile and cache is not None and s == 1:
            a = decode_attention(q, cache.k, cache.v, cache.length)
        elif self.use_tile:
            a = flash_attention(q, k, v, causal=True)
        else:
            a = F.scaled_dot_product_attention(
                q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=s > 1
            ) if k.shape[2] == s or s == 1 else _causal_lower_right(q, k, v, group)
        return self.wo(a.transpose(1, 2).reshape(b, s, dim))


def _causal_lower_right(q, k, v, group):  # type: ignore[no-untyped-def]
    sq, sk = q.shape[2], k.shape[2]
    mask = torch.arange(sk, device=q.device)[None] <= torch.arange(sq, device=q.device)[:, None] + sk - sq
    return F.scaled_dot_product_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1),
                                          attn_mask=mask)


class KVCache:
    """A preallocated cache [B, Hkv, S_max, D]; `length` positions are valid."""

    def __init__(self, batch: int, kv_heads: int, max_len: int, head_dim: int, device: str,
                 dtype: torch.dtype) -> None:
        self.k = torch.zeros(batch, kv_heads, max_len, head_dim, device=device, dtype=dtype)
        self.v = torch.zeros_like(self.k)
        self.length = 0

    def append(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Writes the new positions; returns the valid prefix (views)."""
        n = self.length + k.shape[2]
        self.k[:, :, self.length:n] = k
        self.v[:, :, self.length:n] = v
        self.length = n
        return self.k[:, :, :n], self.v[:, :, :n]


def run(device: str | None = None, batch: int = 2, seq: int = 200, steps: int = 3) -> float:
    """The layer on random input with Tile's attention and with PyTorch's: a
    prompt of `seq` tokens into a KV cache, then `steps` decoding steps; the
    largest difference of their outputs relative to PyTorch's largest."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device == "cuda" else torch.float16
    torch.manual_seed(0)
    tile_layer = SelfAttention(512, heads=8, kv_heads=2).to(device, dtype)
    torch_layer = SelfAttention(512, heads=8, kv_heads=2, use_tile=False).to(device, dtype)
    torch_layer.load_state_dict(tile_layer.state_dict())
    caches = [KVCache(batch, 2, seq + steps, 64, device, dtype) for _ in range(2)]
    x = torch.randn(batch, seq, 512, device=device, dtype=dtype)  # seq: not a multiple of the blocks
    err = 0.0
    with torch.no_grad():
        for i in range(steps + 1):
            got = tile_layer(x, caches[0]).float()
            want = torch_layer(x, caches[1]).float()
            err = max(err, float((got - want).abs().max() / want.abs().max()))
            x = torch.randn(batch, 1, 512, device=device, dtype=dtype)  # the next token's input
    return err


if __name__ == "__main__":
    err = run()
    print(f"Tile attention vs PyTorch SDPA in the layer (prompt + decoding steps): max relative difference {err:.2e}")
    assert err < 2e-2, err
