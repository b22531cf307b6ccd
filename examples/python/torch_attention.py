"""Tile's flash attention inside a PyTorch model's forward pass.

`SelfAttention` is a grouped-query causal self-attention layer (the attention
of a Llama-style block: 8 query heads sharing 2 key/value heads). Its
projections are PyTorch; its attention is `std::attention::flash_attention`,
a Tile kernel called on PyTorch's own tensors: the `[B, H, S, D]` query, key,
value and output tensors are viewed as `[B * H, S, D]` without a copy, the
kernel writes the output tensor PyTorch allocated in place, and it runs on
PyTorch's current CUDA stream (or, for CPU tensors, on Tile's interpreter).

    python examples/python/torch_attention.py          # GPU if there is one

The layer's output is checked against the same layer with PyTorch's
`scaled_dot_product_attention`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

import tilelang

# The stdlib kernel, imported by a one-line module.
TILE = tilelang.compile("use std::attention::flash_attention;\n")
ELEM = {torch.float16: "f16", torch.bfloat16: "bf16"}


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True) -> torch.Tensor:
    """softmax(q k^T / sqrt(D) [+ causal mask]) v, in Tile.

    q: [B, H, S_q, D]; k, v: [B, Hkv, S_k, D] with H a multiple of Hkv
    (grouped-query attention). f16 or bf16 (bf16 on the GPU only: NumPy,
    which the interpreter reads CPU tensors through, has no bf16)."""
    b, h, s, d = q.shape
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # Tile reads row-major tensors
    o = torch.empty_like(q)
    bm, bn = (128, 64) if q.is_cuda else (64, 64)
    TILE.flash_attention[ELEM[q.dtype], bm, bn, d](
        tilelang.partition(o.view(b * h, s, d), [1, bm, d]),  # block (bh, i) writes its rows of `o`
        q.view(b * h, s, d),
        k.view(-1, k.shape[2], d),
        v.view(-1, v.shape[2], d),
        d**-0.5,
        causal,
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, dim = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.wkv(x).view(b, s, 2, self.kv_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.use_tile:
            a = flash_attention(q, k, v, causal=True)
        else:
            group = self.heads // self.kv_heads
            a = F.scaled_dot_product_attention(
                q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), is_causal=True
            )
        return self.wo(a.transpose(1, 2).reshape(b, s, dim))


def run(device: str | None = None, batch: int = 2, seq: int = 200) -> float:
    """The layer on random input with Tile's attention and with PyTorch's;
    the largest difference of their outputs relative to PyTorch's largest."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device == "cuda" else torch.float16
    torch.manual_seed(0)
    tile_layer = SelfAttention(512, heads=8, kv_heads=2).to(device, dtype)
    torch_layer = SelfAttention(512, heads=8, kv_heads=2, use_tile=False).to(device, dtype)
    torch_layer.load_state_dict(tile_layer.state_dict())
    x = torch.randn(batch, seq, 512, device=device, dtype=dtype)  # seq: not a multiple of the blocks
    with torch.no_grad():
        got, want = tile_layer(x).float(), torch_layer(x).float()
    return float((got - want).abs().max() / want.abs().max())


if __name__ == "__main__":
    err = run()
    print(f"Tile attention vs PyTorch SDPA in the layer: max relative difference {err:.2e}")
    assert err < 2e-2, err
