"""A Tile kernel inside a PyTorch training step, with no copies.

The forward pass of the softmax runs `softmax_rows` from `examples/softmax.tile`
directly on PyTorch's tensors (CUDA tensors on the GPU, on PyTorch's current
stream; CPU tensors on Tile's interpreter); the backward pass is PyTorch's.

    python examples/python/torch_softmax.py          # GPU if there is one
"""

from __future__ import annotations

from pathlib import Path

import torch

import tilelang

TILE = tilelang.load(Path(__file__).resolve().parents[1] / "softmax.tile")
ROWS_PER_BLOCK = 16


class TileSoftmax(torch.autograd.Function):
    """softmax over the last axis; forward in Tile, backward in PyTorch."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        x = x.contiguous()  # Tile reads row-major tensors; it refuses strided views
        y = torch.empty_like(x)
        # Each block writes its own [16, N] tile of `y`; N (128) comes from the tile.
        TILE.softmax_rows(tilelang.partition(y, [ROWS_PER_BLOCK, x.shape[1]]), x).sync()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(dim=1, keepdim=True))


def train(steps: int = 20, device: str | None = None) -> list[float]:
    """A linear classifier over 128 classes trained with the Tile softmax; the losses."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    features, classes, batch = 64, 128, 300
    inputs = torch.randn(batch, features, device=device)
    targets = torch.randint(0, classes, (batch,), device=device)
    model = torch.nn.Linear(features, classes).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        probs = TileSoftmax.apply(model(inputs))
        loss = -torch.log(probs[torch.arange(batch, device=device), targets] + 1e-9).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # The Tile softmax agrees with PyTorch's.
    with torch.no_grad():
        logits = model(inputs)
        torch.testing.assert_close(
            TileSoftmax.apply(logits), torch.softmax(logits, dim=1), rtol=1e-5, atol=1e-6
        )
    return losses


if __name__ == "__main__":
    losses = train()
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps")
