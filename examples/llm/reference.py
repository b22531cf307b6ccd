"""Reference implementations of the Qwen3 architecture the engine runs.

`NumpyQwen3` (the CPU reference) and `TorchQwen3` (the GPU reference, also
the baseline `benchmarks/decode.py` times eagerly and as a CUDA graph) compute
the same thing as the Tile engine, written the plain way:

    x = embed[tok]
    per layer:  qkv = W_qkv · rmsnorm(x) * g1
                q, k = rmsnorm per head (q_norm, k_norm), rotary at pos
                k, v -> the KV cache (stored as bf16)
                x += W_o · softmax(q kᵀ / sqrt(D)) v     (GQA: G query heads per KV head)
                x += W_down · silu(W_gate · n) * (W_up · n),  n = rmsnorm(x) * g2
    logits = W_lm · rmsnorm(x) * g_final

Weights are bf16 values; activations are f32 (the engine keeps the residual
stream and every projection in f32 too), so the engine and the references
differ only by the order of f32 sums. `TorchQwen3(dtype=torch.bfloat16)` is
the usual bf16 inference instead (activations rounded to bf16: the baseline).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from model import Qwen3Config, round_bf16, to_numpy


def rope_tables(cfg: Qwen3Config, positions: int) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin: [positions, head_dim / 2] f32, computed in f64 (the angles of
    late positions are large; their f32 cosines must not lose digits)."""
    half = cfg.head_dim // 2
    inv = cfg.rope_theta ** (-np.arange(half, dtype=np.float64) * 2.0 / cfg.head_dim)
    ang = np.arange(positions, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def _rms(x: np.ndarray, g: np.ndarray, eps: float) -> np.ndarray:
    x = x.astype(np.float32)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(eps)) * g


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


class NumpyQwen3:
    """Token-by-token decode with a KV cache, in NumPy float32."""

    def __init__(self, cfg: Qwen3Config, weights: dict[str, Any], max_seq: int = 256) -> None:
        self.cfg = cfg
        self.w = {k: to_numpy(v) for k, v in weights.items()}
        if cfg.tie_word_embeddings:
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]
        self.cos, self.sin = rope_tables(cfg, max_seq)
        shape = (cfg.num_hidden_layers, cfg.num_key_value_heads, max_seq, cfg.head_dim)
        self.k = np.zeros(shape, np.float32)
        self.v = np.zeros(shape, np.float32)
        self.pos = 0

    def step(self, token: int) -> np.ndarray:
        """Feed `token` at the next position; the logits that follow it."""
        c, w, p = self.cfg, self.w, self.pos
        d, hq, hkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
        x = w["model.embed_tokens.weight"][token].astype(np.float32)
        for layer in range(c.num_hidden_layers):
            pre = f"model.layers.{layer}."
            n = _rms(x, w[pre + "input_layernorm.weight"], c.rms_norm_eps)
            q = (w[pre + "self_attn.q_proj.weight"] @ n).reshape(hq, d)
            k = (w[pre + "self_attn.k_proj.weight"] @ n).reshape(hkv, d)
            v = (w[pre + "self_attn.v_proj.weight"] @ n).reshape(hkv, d)
            q = _rope(
                _rms(q, w[pre + "self_attn.q_norm.weight"], c.rms_norm_eps),
                self.cos[p],
                self.sin[p],
            )
            k = _rope(
                _rms(k, w[pre + "self_attn.k_norm.weight"], c.rms_norm_eps),
                self.cos[p],
                self.sin[p],
            )
            self.k[layer, :, p] = round_bf16(k)
            self.v[layer, :, p] = round_bf16(v)
            keys = np.repeat(self.k[layer, :, : p + 1], c.group, axis=0)  # [hq, p+1, d]
            vals = np.repeat(self.v[layer, :, : p + 1], c.group, axis=0)
            s = np.einsum("hd,hsd->hs", q, keys) / np.float32(np.sqrt(d))
            s = np.exp(s - s.max(axis=1, keepdims=True))
            o = np.einsum("hs,hsd->hd", s / s.sum(axis=1, keepdims=True), vals)
            x = x + w[pre + "self_attn.o_proj.weight"] @ o.reshape(-1)
            n = _rms(x, w[pre + "post_attention_layernorm.weight"], c.rms_norm_eps)
            gate = w[pre + "mlp.gate_proj.weight"] @ n
            up = w[pre + "mlp.up_proj.weight"] @ n
            x = x + w[pre + "mlp.down_proj.weight"] @ (gate / (1 + np.exp(-gate)) * up)
        n = _rms(x, w["model.norm.weight"], c.rms_norm_eps)
        self.pos += 1
        return (w["lm_head.weight"] @ n).astype(np.float32)

    def greedy(self, prompt: list[int], new_tokens: int) -> list[int]:
        logits = None
        for t in prompt:
            logits = self.step(t)
        out: list[int] = []
        for _ in range(new_tokens):
            assert logits is not None
            t = int(np.argmax(logits))
            out.append(t)
            logits = self.step(t)
        return out


class TorchQwen3:
    """The same model in PyTorch, on any device, for a batch of one.

    `step(tok, pos)` takes device tensors and does no host synchronisation
    and no allocation that depends on the position (the attention masks the
    static cache), so it can be captured once as a CUDA graph and replayed
    (`benchmarks/decode.py` does). `prefill(tokens)` runs a whole prompt with
    causal attention and fills the cache.
    """

    def __init__(
        self,
        cfg: Qwen3Config,
        weights: dict[str, Any],
        max_seq: int = 256,
        device: str = "cpu",
        dtype: Any = None,
    ) -> None:
        import torch

        self.torch = torch
        self.cfg = cfg
        self.dtype = dtype or torch.float32
        self.device = device
        self.w = {}
        for k, v in weights.items():
            t = v if isinstance(v, torch.Tensor) else torch.from_numpy(np.asarray(v))
            self.w[k] = t.to(device=device, dtype=self.dtype)
        if cfg.tie_word_embeddings:
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]
        cos, sin = rope_tables(cfg, max_seq)
        self.cos = torch.from_numpy(cos).to(device=device, dtype=self.dtype)
        self.sin = torch.from_numpy(sin).to(device=device, dtype=self.dtype)
        shape = (cfg.num_hidden_layers, cfg.num_key_value_heads, max_seq, cfg.head_dim)
        # The cache holds bf16 values (as the engine's does), in the compute dtype.
        self.k = torch.zeros(shape, device=device, dtype=self.dtype)
        self.v = torch.zeros(shape, device=device, dtype=self.dtype)
        self.positions = torch.arange(max_seq, device=device)
        self.max_seq = max_seq

    def _rms(self, x: Any, g: Any) -> Any:
        xf = x.float()
        r = xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg.rms_norm_eps)
        return r.to(self.dtype) * g

    @staticmethod
    def _rope(x: Any, cos: Any, sin: Any) -> Any:
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return __import__("torch").cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def _bf16(self, x: Any) -> Any:
        return x.to(self.torch.bfloat16).to(self.dtype)

    def step(self, tok: Any, pos: Any) -> Any:
        """tok, pos: int64 device tensors of shape [1]; the logits [V] (f32)."""
        torch, c, w = self.torch, self.cfg, self.w
        d, hq, hkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
        x = w["model.embed_tokens.weight"].index_select(0, tok)[0]
        cos = self.cos.index_select(0, pos)
        sin = self.sin.index_select(0, pos)
        mask = self.positions <= pos  # [S]
        for layer in range(c.num_hidden_layers):
            pre = f"model.layers.{layer}."
            n = self._rms(x, w[pre + "input_layernorm.weight"])
            q = (w[pre + "self_attn.q_proj.weight"] @ n).view(hq, d)
            k = (w[pre + "self_attn.k_proj.weight"] @ n).view(hkv, d)
            v = (w[pre + "self_attn.v_proj.weight"] @ n).view(hkv, d)
            q = self._rope(self._rms(q, w[pre + "self_attn.q_norm.weight"]), cos, sin)
            k = self._rope(self._rms(k, w[pre + "self_attn.k_norm.weight"]), cos, sin)
            self.k[layer].index_copy_(1, pos, self._bf16(k)[:, None, :])
            self.v[layer].index_copy_(1, pos, self._bf16(v)[:, None, :])
            keys = self.k[layer].repeat_interleave(c.group, dim=0)  # [hq, S, d]
            vals = self.v[layer].repeat_interleave(c.group, dim=0)
            s = torch.einsum("hd,hsd->hs", q, keys).float() / float(np.sqrt(d))
            s = s.masked_fill(~mask, float("-inf"))
            o = torch.einsum("hs,hsd->hd", torch.softmax(s, dim=-1).to(self.dtype), vals)
            x = x + w[pre + "self_attn.o_proj.weight"] @ o.reshape(-1)
            n = self._rms(x, w[pre + "post_attention_layernorm.weight"])
            gate = w[pre + "mlp.gate_proj.weight"] @ n
            up = w[pre + "mlp.up_proj.weight"] @ n
            x = x + w[pre + "mlp.down_proj.weight"] @ (torch.nn.functional.silu(gate) * up)
        n = self._rms(x, w["model.norm.weight"])
        return (w["lm_head.weight"] @ n).float()

    def prefill(self, tokens: Any) -> Any:
        """Run the prompt `tokens` (int64 [T]) from position 0; the last logits."""
        torch, c, w = self.torch, self.cfg, self.w
        d, hq, hkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
        t = tokens.shape[0]
        x = w["model.embed_tokens.weight"][tokens]
        cos, sin = self.cos[:t][:, None, :], self.sin[:t][:, None, :]
        for layer in range(c.num_hidden_layers):
            pre = f"model.layers.{layer}."
            n = self._rms(x, w[pre + "input_layernorm.weight"])
            q = (n @ w[pre + "self_attn.q_proj.weight"].T).view(t, hq, d)
            k = (n @ w[pre + "self_attn.k_proj.weight"].T).view(t, hkv, d)
            v = (n @ w[pre + "self_attn.v_proj.weight"].T).view(t, hkv, d)
            q = self._rope(self._rms(q, w[pre + "self_attn.q_norm.weight"]), cos, sin)
            k = self._rope(self._rms(k, w[pre + "self_attn.k_norm.weight"]), cos, sin)
            self.k[layer, :, :t] = self._bf16(k).transpose(0, 1)
            self.v[layer, :, :t] = self._bf16(v).transpose(0, 1)
            o = (
                torch.nn.functional.scaled_dot_product_attention(
                    q.transpose(0, 1)[None],
                    self.k[layer, :, :t][None],
                    self.v[layer, :, :t][None],
                    is_causal=True,
                    enable_gqa=True,
                )[0]
                .transpose(0, 1)
                .reshape(t, hq * d)
            )
            x = x + o @ w[pre + "self_attn.o_proj.weight"].T
            n = self._rms(x, w[pre + "post_attention_layernorm.weight"])
            h = torch.nn.functional.silu(n @ w[pre + "mlp.gate_proj.weight"].T) * (
                n @ w[pre + "mlp.up_proj.weight"].T
            )
            x = x + h @ w[pre + "mlp.down_proj.weight"].T
        n = self._rms(x[-1], w["model.norm.weight"])
        return (w["lm_head.weight"] @ n).float()


# ---------------------------------------------------------------- sampling
def uniform(seed: int, counter: int) -> float:
    """`std::llm::uniform`: a 32-bit integer hash of (seed, counter) -> [0, 1)."""
    m = 0xFFFFFFFF
    h = ((seed & m) * 747796405 + (counter & m) * 2891336453 + 1) & m
    h = ((h ^ (h >> 16)) * 73244475) & m
    h = ((h ^ (h >> 16)) * 73244475) & m
    h ^= h >> 16
    return (h >> 8) / 16777216.0


def nucleus_reference(
    logits: np.ndarray, temperature: float, top_p: float, rounds: int = 6, nt: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """e = exp((l - max) / T) in float64 and the nucleus {i : e_i >= tau} that
    `std::llm`'s search finds: tau is the lower end of the band left by
    `rounds` splits of [0, 1] into nt + 1 parts, each keeping the part where
    the mass above the threshold crosses top_p (every token when top_p >= 1)."""
    e = np.exp((logits.astype(np.float64) - logits.max()) / temperature)
    z = e.sum()
    lo, hi = 0.0, 1.0
    for _ in range(rounds):
        step = (hi - lo) / (nt + 1)
        th = lo + (np.arange(nt) + 1) * step
        masses = np.array([e[e >= t].sum() for t in th])
        count = int((masses >= min(top_p, 1.0) * z).sum())
        lo, hi = lo + count * step, lo + (count + 1) * step
    return e, e >= (0.0 if top_p >= 1.0 else lo)


def draw(e: np.ndarray, keep: np.ndarray, u: float) -> int:
    """The inverse CDF of u over the kept e, in vocabulary order."""
    q = np.where(keep, e, 0.0)
    idx = int(np.searchsorted(np.cumsum(q), u * q.sum(), side="right"))
    return min(idx, int(np.flatnonzero(keep)[-1]))


def sample_reference(
    logits: np.ndarray, temperature: float, top_p: float, seed: int, pos: int
) -> tuple[int, np.ndarray]:
    """What `std::llm`'s sampling kernels pick (float64): the token and the nucleus."""
    e, keep = nucleus_reference(logits, temperature, top_p)
    return draw(e, keep, uniform(seed, pos)), keep
