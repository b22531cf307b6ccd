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


def test_an_output_leaf_that_requires_grad_is_refused_as_pytorch_refuses_it(add) -> None:  # type: ignore[no-untyped-def]
    """PyTorch refuses an in-place write to a leaf that requires grad ("a leaf Variable that requires grad is
    being used in an in-place operation"); a kernel's `&mut` write is one (huser19: it was written without a
    word). E0803, whose help gives `torch.no_grad()` and `.detach()`; each runs."""
    x, y = torch.ones(64), torch.ones(64)
    z = torch.zeros(64, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        z.add_(1.0)  # PyTorch's own refusal, which the API's follows
    for _ in range(2):  # (the second call: no plan or memo of the first serves it)
        with pytest.raises(tilelang.CallError, match=r"E0803(.|\n)*`z` of kernel `add` is a PyTorch leaf tensor "
                           r"that requires grad(.|\n)*`with torch.no_grad\(\):`(.|\n)*`z.detach\(\)`") as info:
            add.add(P(z, [64]), x, y)
    assert info.value.code == "E0803"
    assert float(z.detach().abs().sum()) == 0.0  # nothing ran
    with torch.no_grad():  # an optimiser's step: allowed, as PyTorch allows `z.add_(..)` there
        add.add(P(z, [64]), x, y).sync()
    assert float(z.detach().sum()) == 128.0 and z.requires_grad and z.grad is None
    add.add(P(z.detach(), [64]), x, torch.full((64,), 2.0)).sync()  # the help's other spelling: its memory
    assert float(z.detach().sum()) == 64 * 3
    with pytest.raises(tilelang.CallError, match="E0803"):  # the same tensor after the no_grad calls' plans
        add.add(P(z, [64]), x, y)


def test_a_plain_tensor_s_plan_does_not_serve_a_leaf_that_requires_grad(add) -> None:  # type: ignore[no-untyped-def]
    x, y, z = torch.ones(64), torch.ones(64), torch.zeros(64)
    for _ in range(3):  # a plan and a memo for a plain output
        add.add(P(z, [64]), x, y).sync()
    z.requires_grad_(True)
    with pytest.raises(tilelang.CallError, match="E0803"):
        add.add(P(z, [64]), x, y)
    w = torch.zeros(64, requires_grad=True)
    with pytest.raises(tilelang.CallError, match="E0803"):
        add.add(P(w, [64]), x, y)


def test_a_leaf_that_requires_grad_is_refused_when_an_operation_built_earlier_starts(add) -> None:  # type: ignore[no-untyped-def]
    """E0803 was decided when the call was made (hrev21): an operation built under `torch.no_grad()` then run
    outside it, or built on a plain tensor that then got `requires_grad_()`, wrote the leaf by `.sync()`,
    `.launch()`, a second `.sync()` or a graph's replay. Each start reads autograd's mode again, as PyTorch
    refuses the in-place write at the write."""
    x, y = torch.ones(64), torch.ones(64)
    z = torch.zeros(64, requires_grad=True)
    with torch.no_grad():
        op = add.add(P(z, [64]), x, y)
        op.sync()  # an optimiser's step: allowed
    for run in (op.sync, op.launch):
        with pytest.raises(tilelang.CallError, match=r"E0803(.|\n)*`z` of kernel `add` is a PyTorch leaf"):
            run()
    assert float(z.detach().sum()) == 128.0  # the one run under no_grad only
    w = torch.zeros(64)
    built = add.add(P(w, [64]), x, y)
    built.sync()
    with tilelang.graph() as g:
        add.add(P(w, [64]), x, y).sync()
    w.requires_grad_(True)
    for run in (built.sync, built.launch, g.replay):
        with pytest.raises(tilelang.CallError, match="E0803"):
            run()
    assert float(w.detach().sum()) == 128.0
    with torch.no_grad():  # still allowed where PyTorch allows it
        built.sync()
        g.replay()
        op.launch().wait()
    assert float(w.detach().sum()) == 128.0 and float(z.detach().sum()) == 128.0


def test_inputs_and_non_leaves_that_require_grad_are_still_taken(add) -> None:  # type: ignore[no-untyped-def]
    """PyTorch allows an in-place write to a non-leaf (autograd's version counter catches a backward pass
    that would read it: test_autograd_sees_the_kernels_writes), and reading a leaf is no write."""
    p = torch.ones(64, requires_grad=True)
    z = torch.zeros(64)
    add.add(P(z, [64]), p, p).sync()
    assert float(z.sum()) == 128.0
    h = p * 1.0  # a non-leaf that requires grad
    add.add(P(h, [64]), torch.ones(64), torch.ones(64)).sync()
    assert float(h.detach().sum()) == 128.0


def test_a_host_function_refuses_a_leaf_that_requires_grad() -> None:
    mod = tilelang.compile(
        "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {\n    z.store(z.load() + 1.0);\n}\n"
        "fn bump(x: &mut Tensor<f32, [?]>) {\n    k(x.partition([4])).sync();\n}\n")
    w = torch.zeros(8, requires_grad=True)
    with pytest.raises(tilelang.CallError, match=r"E0803(.|\n)*`x` of function `bump` is a PyTorch leaf tensor"):
        mod.bump(w)
    with torch.no_grad():
        mod.bump(w)
    assert float(w.detach().sum()) == 8.0


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
