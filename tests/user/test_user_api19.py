"""Round 19 through the Python API (huser19, 2026-12-06): round 19's programs' kernels called from NumPy and
PyTorch (CPU) as a user's own code would call them.

- x09's 4-bit group quantisation on a NumPy weight of another shape (the generics from the partitions' tiles).
- x10's CLIP loss kernels inside a `torch.autograd.Function`, its gradient against PyTorch's autograd of
  `F.cross_entropy` both ways.
- An optimiser's step written as a kernel on an `nn.Parameter`: outside `torch.no_grad()` PyTorch refuses
  `p.sub_(..)` on such a leaf and so does the call now (E0803; it wrote the parameter without a word,
  huser18's open policy); the help's `torch.no_grad()` trains.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"


def test_int4_group_quantisation_from_numpy() -> None:
    mod = tilelang.load(PROGRAMS / "x09_int4_group_quant_pack.tile")
    rng = np.random.default_rng(19)
    w = (rng.standard_normal((48, 160)) * 0.05).astype(np.float32)   # 5 groups of 32 a row
    packed = np.zeros((48, 80), np.uint8)
    scale = np.zeros((48, 5), np.float32)
    zero = np.zeros((48, 5), np.uint8)
    mod.quantise(P(packed, [16, 16]), P(scale, [16, 1]), P(zero, [16, 1]), w).sync()
    back = np.zeros_like(w)
    mod.dequantise(P(back, [16, 32]), packed, scale, zero).sync()
    g = w.reshape(48, 5, 32)
    s = (np.maximum(g.max(2), 0) - np.minimum(g.min(2), 0)) / np.float32(15)
    np.testing.assert_allclose(scale, s, rtol=1e-6)
    assert np.abs(back - w).max() <= s.max() * 0.5 + 1e-6 and zero.max() <= 15
    x = rng.standard_normal(160).astype(np.float32)
    y = np.zeros(48, np.float32)
    mod.gemv_q4[16, 16](P(y, [16]), packed, scale, zero, x).sync()   # (H: no parameter's shape names it)
    np.testing.assert_allclose(y, back.astype(np.float64) @ x, rtol=1e-4, atol=1e-4)


def test_clip_loss_kernels_in_an_autograd_function() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.load(PROGRAMS / "x10_clip_contrastive_loss.tile")

    class ClipLoss(torch.autograd.Function):
        @staticmethod
        def forward(ctx, img, txt, scale):  # type: ignore[no-untyped-def]
            n = img.shape[0]
            l = torch.zeros(n, n)
            lse_r, lse_c = torch.zeros(n), torch.zeros(n)
            mod.logits[16, 64, 32](P(l, [16, 64]), img, txt, scale).sync()
            mod.row_lse[16, 64](P(lse_r, [16]), l).sync()
            mod.col_lse[64, 16](P(lse_c, [16]), l).sync()
            g = torch.zeros(n, n)
            mod.logit_grad[16, 64](P(g, [16, 64]), l, lse_r, lse_c).sync()
            ctx.save_for_backward(img, txt, g)
            ctx.scale = scale
            d = torch.diagonal(l)
            return ((lse_r - d).mean() + (lse_c - d).mean()) / 2

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            img, txt, g = ctx.saved_tensors
            d_img, d_txt = torch.zeros_like(img), torch.zeros_like(txt)
            mod.back_a[16, 64, 32](P(d_img, [16, 32]), g, txt, ctx.scale).sync()
            mod.back_b[16, 64, 32](P(d_txt, [16, 32]), g, img, ctx.scale).sync()
            return d_img * grad, d_txt * grad, None

    torch.manual_seed(19)
    a = torch.nn.functional.normalize(torch.randn(40, 32), dim=1).requires_grad_()
    b = torch.nn.functional.normalize(torch.randn(40, 32), dim=1).requires_grad_()
    loss = ClipLoss.apply(a, b, 14.3)
    loss.backward()
    a2, b2 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    logits = 14.3 * a2 @ b2.T
    labels = torch.arange(40)
    ref = (torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.T, labels)) / 2
    ref.backward()
    torch.testing.assert_close(loss.detach(), ref.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(a.grad, a2.grad, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(b.grad, b2.grad, rtol=1e-4, atol=1e-6)


SGD = """
kernel fn sgd<const B: i32>(w: &mut Tensor<f32, [B]>, g: &Tensor<f32, [?]>, lr: f32) {
    w.store(w.load() - g.load_like(w) * lr);
}
"""


def test_an_optimiser_step_on_a_parameter_follows_pytorch_s_rule() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SGD)
    torch.manual_seed(0)
    target = torch.randn(300)
    w = torch.nn.Parameter(torch.zeros(300))
    loss = ((w - target) ** 2).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.sub_(w.grad * 0.1)   # PyTorch's own refusal of the same step
    with pytest.raises(tilelang.CallError) as info:
        mod.sgd(P(w, [128]), w.grad, 0.1).sync()
    assert info.value.code == "E0803" and "torch.no_grad()" in str(info.value)
    assert float(w.detach().abs().sum()) == 0.0   # nothing was written
    losses = []
    for _ in range(5):   # the help: the step under `torch.no_grad()`
        w.grad = None
        loss = ((w - target) ** 2).sum()
        loss.backward()
        losses.append(float(loss.detach()))
        with torch.no_grad():
            mod.sgd(P(w, [128]), w.grad, 0.1).sync()
    assert losses == sorted(losses, reverse=True) and losses[-1] < 0.2 * losses[0]   # 0.64 a step
    torch.testing.assert_close(w.detach(), target * (1 - 0.8**5), rtol=1e-5, atol=1e-6)
