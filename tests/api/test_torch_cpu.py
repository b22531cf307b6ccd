"""PyTorch CPU tensors through the Python API: NumPy views their memory, so
kernels run on the interpreter in place. Skipped where torch is not installed
(it is not a dependency of tilec)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
P = tilelang.partition


@pytest.fixture(scope="module")
def add():  # type: ignore[no-untyped-def]
    return tilelang.load(ROOT / "examples" / "add.tile")


def test_cpu_tensors_run_in_place(add) -> None:  # type: ignore[no-untyped-def]
    x = torch.randn(3000)
    y = torch.randn(3000)
    z = torch.zeros(3000)
    ptr = z.data_ptr()
    add.add(P(z, [1024]), x, y).sync()
    assert z.data_ptr() == ptr
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)


def test_output_that_requires_grad(add) -> None:  # type: ignore[no-untyped-def]
    x, y = torch.ones(64), torch.ones(64)
    z = torch.zeros(64, requires_grad=True)
    add.add(P(z, [64]), x, y).sync()
    assert float(z.detach().sum()) == 128.0


def test_mixing_torch_and_numpy_on_the_cpu(add) -> None:  # type: ignore[no-untyped-def]
    x = torch.arange(8, dtype=torch.float32)
    y = np.ones(8, np.float32)
    z = torch.zeros(8)
    add.add(P(z, [8]), x, y).sync()
    assert z.tolist() == [float(i + 1) for i in range(8)]


def test_refusals_name_the_torch_fix(add) -> None:  # type: ignore[no-untyped-def]
    z = torch.zeros(64)
    x = torch.randn(64, 2)
    with pytest.raises(tilelang.CallError, match=r"`x` of kernel `add` is not contiguous(.|\n)*`x.contiguous\(\)`"):
        add.add(P(z, [64]), x[:, 0], torch.ones(64))
    with pytest.raises(tilelang.CallError, match=r"must hold `f32`, but it is a torch.float64 PyTorch tensor"
                                                 r"(.|\n)*`x.to\(torch.float32\)`"):
        add.add(P(z, [64]), torch.ones(64, dtype=torch.float64), torch.ones(64))
    with pytest.raises(tilelang.CallError, match=r"torch.bfloat16 tensor on the CPU cannot be used in place(.|\n)*`x.float\(\)`(.|\n)*`x.cuda\(\)`"):
        add.add(P(z, [64]), torch.ones(64, dtype=torch.bfloat16), torch.ones(64))
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        add.add(P(z, [64]), z[:64], torch.ones(64))


def test_pending_launch_blocks_a_torch_tensor(add) -> None:  # type: ignore[no-untyped-def]
    x, y, z = torch.ones(64), torch.ones(64), torch.zeros(64)
    h = add.add(P(z, [64]), x, y).launch()
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        add.add(P(x, [64]), z, y).sync()
    h.wait()
    add.add(P(x, [64]), z, y).sync()
    assert float(x.sum()) == 64 * 3


def test_the_training_example_learns_on_the_cpu() -> None:
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    try:
        import torch_softmax
    finally:
        sys.path.pop(0)
    losses = torch_softmax.train(steps=4, device="cpu")
    assert losses[-1] < losses[0]


def test_the_attention_example_matches_sdpa_on_the_cpu() -> None:
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    try:
        import torch_attention
    finally:
        sys.path.pop(0)
    assert torch_attention.run(device="cpu", batch=1, seq=70) < 2e-2


def test_autograd_sees_the_kernels_writes(add) -> None:  # type: ignore[no-untyped-def]
    x = torch.randn(64, requires_grad=True)
    y = x.exp()  # autograd saves `y` for the backward pass
    add.add(P(y, [64]), torch.ones(64), torch.ones(64)).sync()  # ... and the kernel overwrites it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
