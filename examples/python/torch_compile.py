"""Tile kernels as PyTorch operators: an MLP whose activation is a Tile SiLU
(forward and backward both Tile kernels, registered with `tilelang.torch_op`
and tied together by a `torch.autograd.Function`), trained under
`torch.compile(fullgraph=True)`: no graph breaks, the Tile operators appear
in the graph as `torch.ops.tile.*`.

    python examples/python/torch_compile.py            # GPU if there is one
    python examples/python/torch_compile.py --backend eager
"""

from __future__ import annotations

import argparse

import torch

import tilelang

SOURCE = """
// y = x * sigmoid(x), one tile of rows per block
kernel fn silu_fwd<const BR: i32, const BC: i32>(y: &mut Tensor<f32, [BR, BC]>,
                                                x: &Tensor<f32, [?, ?]>) {
    let t = x.load_like(y);
    y.store(t * sigmoid(t));
}

// dx = dy * s * (1 + x * (1 - s)),  s = sigmoid(x)
kernel fn silu_bwd<const BR: i32, const BC: i32>(dx: &mut Tensor<f32, [BR, BC]>,
                                                dy: &Tensor<f32, [?, ?]>,
                                                x: &Tensor<f32, [?, ?]>) {
    let t = x.load_like(dx);
    let s = sigmoid(t);
    dx.store(dy.load_like(dx) * s * (1.0 + t * (1.0 - s)));
}
"""

TILE = tilelang.compile(SOURCE, name="silu")
TILES = [16, 64]
# y = silu_fwd(x): `y` is allocated by the operator, shaped like `x`
silu_fwd = tilelang.torch_op(TILE.silu_fwd, tiles={"y": TILES}, outputs={"y": "x"})
# dx = silu_bwd(dy, x)
silu_bwd = tilelang.torch_op(TILE.silu_bwd, tiles={"dx": TILES}, outputs={"dx": "x"})


class TileSiLU(torch.autograd.Function):
    """SiLU with a Tile forward and a Tile backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        x = x.contiguous()
        ctx.save_for_backward(x)
        return silu_fwd(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return silu_bwd(grad.contiguous(), x)


class MLP(torch.nn.Module):
    def __init__(self, features: int = 64, hidden: int = 128) -> None:
        super().__init__()
        self.up = torch.nn.Linear(features, hidden)
        self.down = torch.nn.Linear(hidden, features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(TileSiLU.apply(self.up(x)))


def train(steps: int = 10, device: str | None = None, backend: str = "aot_eager") -> list[float]:
    """Fit the MLP to a smooth target, the model compiled in one graph (AOT
    autograd compiles its backward, with the Tile backward in it); the losses."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = MLP().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(200, 64, device=device)
    target = torch.sin(x)

    compiled = torch.compile(model, fullgraph=True, backend=backend)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(compiled(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # The Tile activation agrees with PyTorch's, forward and backward.
    a = torch.randn(50, 100, device=device, requires_grad=True)
    b = a.detach().clone().requires_grad_()
    TileSiLU.apply(a).sum().backward()
    torch.nn.functional.silu(b).sum().backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5)
    return losses


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--backend", default="aot_eager", help="torch.compile backend (inductor, aot_eager, eager)"
    )
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    losses = train(args.steps, backend=args.backend)
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} compiled steps")
