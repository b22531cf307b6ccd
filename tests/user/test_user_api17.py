"""Round 17 through the Python API (huser17, 2026-12-06): round 17's kernels called on PyTorch CPU tensors as a
PyTorch user has them (the torch tests skip where PyTorch is not installed; the NumPy ones run everywhere).

- a01's GQA dQ kernel against PyTorch's own autograd: the forward in float64 PyTorch, `loss.backward()`, and
  the kernel fed the forward's saved log-sum-exp and delta = rowsum(dO * O) gives `q.grad`.
- a02's bf16 scaled GEMM on float32 tensors (a `bf16` parameter takes float32 memory on the CPU, the values
  rounded by the kernel) against PyTorch's bf16 matmul.
- A scalar parameter given a one-element tensor (`torch.tensor(0.125)`, a NumPy `[0.125]`, what a loss or a
  learning rate often is): E0203 "pass a Python number" now says `.item()`, which runs.
- A PyTorch tensor whose negative bit is set (a lazy negation: `torch._neg_view`, a conjugate's `.imag`) was a raw
  `RuntimeError` from NumPy ("Can't call numpy() on Tensor that has negative bit set") on the CPU, and on a GPU its
  memory, which holds the values before the negation, would have been read as they are: E0801 with
  `.resolve_neg()`, which runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"
SCALE = ("kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, s: f32) {\n"
         "    z.store(x.load_like(z) * s);\n}\n")


def test_gqa_dq_matches_pytorch_autograd() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "a01_gqa_attention_backward_dq.tile")
    g = torch.Generator().manual_seed(17)
    h, hkv, s, d = 4, 2, 80, 32
    q16, k16, v16, do16 = (torch.randn(n, s, d, generator=g).half() for n in (h, hkv, hkv, h))
    q = q16.double().requires_grad_()
    k, v = (t.double().repeat_interleave(h // hkv, 0) for t in (k16, v16))   # GQA: each KV head twice
    scale = d ** -0.5
    scores = q @ k.transpose(1, 2) * scale
    scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
    lse = scores.logsumexp(-1)
    o = torch.softmax(scores, -1) @ v
    o.backward(do16.double())
    delta = (do16.double() * o.detach()).sum(-1)
    dq = torch.zeros(h, s, d)
    mod.attn_dq[32, 16, 32, 2](P(dq, [1, 32, 32]), q16, k16, v16, do16, lse.detach().float(), delta.float(),
                               float(np.float32(scale))).sync()
    want = q.grad.numpy()
    np.testing.assert_allclose(dq.numpy(), want, rtol=3e-3, atol=3e-3 * np.abs(want).max())


def test_bf16_scaled_mm_on_float32_tensors_matches_pytorch_bf16() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "a02_scaled_mm_rowwise_bf16.tile")
    g = torch.Generator().manual_seed(2)
    m, n, kk = 72, 128, 128
    a = (torch.rand(m, kk, generator=g) * 2 - 1).bfloat16().float()   # values bf16 holds exactly
    b = (torch.rand(kk, n, generator=g) * 2 - 1).bfloat16().float()
    sa, sb, bias = torch.rand(m, generator=g) * 0.01, torch.rand(n, generator=g) * 0.02, torch.randn(n, generator=g)
    c = torch.zeros(m, n)
    mod.scaled_mm[64, 64, 64](P(c, [64, 64]), a, b, sa, sb, bias).sync()
    want = ((a.double() @ b.double()) * sa.double()[:, None] * sb.double()[None, :] + bias.double()).bfloat16()
    assert torch.equal(c, c.bfloat16().float())   # the kernel's results are bf16 values
    np.testing.assert_allclose(c.numpy(), want.float().numpy(), rtol=8e-3, atol=1e-2)


@pytest.mark.parametrize("make", ["numpy", "torch"])
def test_a_one_element_tensor_for_a_number_is_told_item(make: str) -> None:
    mod = tilelang.compile(SCALE)
    x = np.arange(8, dtype=np.float32)
    z = np.zeros(8, np.float32)
    if make == "torch":
        torch = pytest.importorskip("torch")
        s = torch.tensor(0.125)
    else:
        s = np.array([0.125], np.float32)   # (a 0-d NumPy array is taken as its number)
    with pytest.raises(tilelang.TileError) as e:
        mod.scale(P(z, [4]), x, s).sync()
    assert e.value.code == "E0203" and "`.item()` of the tensor is its one value" in str(e.value), str(e.value)
    mod.scale(P(z, [4]), x, s.item()).sync()   # the help
    np.testing.assert_array_equal(z, x * 0.125)
    with pytest.raises(tilelang.TileError) as e:   # two elements: no `.item()`
        mod.scale(P(z, [4]), x, np.array([1.0, 2.0], np.float32)).sync()
    assert "`.item()`" not in str(e.value)


def test_a_negated_view_is_refused_with_resolve_neg() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SCALE)
    x = torch.arange(8, dtype=torch.float32)._neg_view()
    assert x.is_neg() and x.is_contiguous()
    z = torch.zeros(8)
    with pytest.raises(tilelang.TileError) as e:
        mod.scale(P(z, [4]), x, 2.0).sync()
    assert e.value.code == "E0801" and "pass `x.resolve_neg()`" in str(e.value), str(e.value)
    mod.scale(P(z, [4]), x.resolve_neg(), 2.0).sync()
    np.testing.assert_array_equal(z.numpy(), -2 * np.arange(8, dtype=np.float32))
