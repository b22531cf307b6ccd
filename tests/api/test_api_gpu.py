"""The Python API on the GPU: PyTorch and CuPy CUDA tensors used in place on
the caller's stream (torch.bfloat16 in its own 2-byte memory), NumPy arrays through copies on a `device="gpu"` module,
and `tilelang.testing.compare` (interpreter vs GPU) over the examples.

Marked `gpu`: skipped without a CUDA device; the torch and cupy tests also
skip when their library (or its CUDA build) is missing.
"""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import numpy as np
import pytest

import tilelang
import tilelang.testing as tt
from tilelang.api import in_flight

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
P = tilelang.partition


def _torch():  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    return torch


@pytest.fixture(scope="module")
def add():  # type: ignore[no-untyped-def]
    return tilelang.load(EX / "add.tile")


@pytest.fixture(autouse=True)
def _nothing_left_in_flight():  # type: ignore[no-untyped-def]
    yield
    assert in_flight() == 0


# ---------------------------------------------------------------- PyTorch
def test_torch_cuda_in_place_no_copy(add) -> None:  # type: ignore[no-untyped-def]
    torch = _torch()
    x = torch.randn(100_000, device="cuda")
    y = torch.randn(100_000, device="cuda")
    z = torch.zeros(100_000, device="cuda")
    ptr = z.data_ptr()
    op = add.add(P(z, [1024]), x, y)
    assert op.grid == (98,)
    op.sync()
    assert z.data_ptr() == ptr
    torch.testing.assert_close(z, x + y)


def test_torch_current_stream_orders_the_kernel(add) -> None:  # type: ignore[no-untyped-def]
    """Work queued on a side stream before and after the kernel, with no
    synchronisation in between, sees the kernel's writes in order."""
    torch = _torch()
    s = torch.cuda.Stream()
    n = 1 << 22
    with torch.cuda.stream(s):
        x = torch.ones(n, device="cuda")
        y = torch.full((n,), 2.0, device="cuda")
        z = torch.empty(n, device="cuda")
        for _ in range(3):
            x.mul_(1.0)  # some queued work before the kernel
        h = add.add(P(z, [1024]), x, y).launch()
        w = z * 10  # queued after the kernel on the same stream
        h.wait()
    torch.cuda.synchronize()
    assert float(w.min()) == 30.0 and float(w.max()) == 30.0


def test_torch_training_example_on_the_gpu() -> None:
    _torch()
    import sys

    sys.path.insert(0, str(EX / "python"))
    try:
        import torch_softmax
    finally:
        sys.path.pop(0)
    losses = torch_softmax.train(steps=10, device="cuda")
    assert losses[-1] < losses[0]


def test_torch_attention_example_on_the_gpu() -> None:
    _torch()
    import sys

    sys.path.insert(0, str(EX / "python"))
    try:
        import torch_attention
    finally:
        sys.path.pop(0)
    assert torch_attention.run(device="cuda", batch=2, seq=300) < 2e-2  # bf16, in place, torch's stream


def test_torch_decode_attention_in_a_cuda_graph() -> None:
    # the example's decode step (on sm_90 the merge launched with PDL, `merge_pdl`)
    # eager and captured by PyTorch into a CUDA graph, with either split: the
    # graph's replay gives the eager step's numbers, both SDPA's in f32 to bf16
    # tolerance, and NaN in the cache past cache_len reaches neither
    torch = _torch()
    import sys

    sys.path.insert(0, str(EX / "python"))
    try:
        import torch_attention
        from decode_plan import merge_pdl
    finally:
        sys.path.pop(0)
    from tilelang.runtime import cuda_pdl

    g = torch.Generator(device="cuda").manual_seed(15)
    b, h, hkv, d, smax, clen = 1, 32, 8, 128, 1024, 1000
    q = torch.randn(b, h, 1, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(b, hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(b, hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k[:, :, clen:] = float("nan")
    v[:, :, clen:] = float("nan")
    rep = h // hkv
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k[:, :, :clen].float().repeat_interleave(rep, 1), v[:, :, :clen].float().repeat_interleave(rep, 1))
    props = torch.cuda.get_device_properties(0)
    for split in ("tc", "fma") if props.major >= 9 else ("fma",):
        before = cuda_pdl.LAUNCHES
        eager = torch_attention.decode_attention(q, k, v, clen, split=split)
        torch.cuda.synchronize()
        assert cuda_pdl.LAUNCHES - before == int(merge_pdl(10 * props.major + props.minor))
        assert float((eager.float() - ref).abs().max() / ref.abs().max()) < 2e-2
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = torch_attention.decode_attention(q, k, v, clen, split=split)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, eager), split


def test_torch_gpu_refusals(add) -> None:  # type: ignore[no-untyped-def]
    torch = _torch()
    z = torch.zeros(64, device="cuda")
    with pytest.raises(tilelang.CallError, match="must be on one device"):
        add.add(P(z, [64]), np.ones(64, np.float32), torch.ones(64, device="cuda"))
    # bf16 CUDA tensors are taken by `bf16` parameters only; `add`'s are f32
    with pytest.raises(tilelang.CallError, match=r"must hold `f32`, but it is a torch.bfloat16 PyTorch tensor on the GPU"):
        add.add(P(z, [64]), torch.ones(64, device="cuda", dtype=torch.bfloat16), torch.ones(64, device="cuda"))
    with pytest.raises(tilelang.CallError, match="not contiguous"):
        add.add(P(z, [64]), torch.ones(128, device="cuda")[::2], torch.ones(64, device="cuda"))
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        add.add(P(z, [64]), z, torch.ones(64, device="cuda"))


def test_torch_pending_launch_is_a_borrow(add) -> None:  # type: ignore[no-untyped-def]
    torch = _torch()
    x, y, z = (torch.ones(1 << 20, device="cuda") for _ in range(3))
    h = add.add(P(z, [1024]), x, y).launch()
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        add.add(P(x, [1024]), z, y).sync()
    h.wait()
    add.add(P(x, [1024]), z, y).sync()
    assert float(x.min()) == 3.0


def test_torch_dropped_handle_waits(add) -> None:  # type: ignore[no-untyped-def]
    torch = _torch()
    x, y, z = (torch.ones(4096, device="cuda") for _ in range(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        add.add(P(z, [1024]), x, y).launch()
        gc.collect()
    assert any("dropped" in str(w.message) for w in caught)
    assert float(z.min()) == 2.0


def test_device_assert_through_torch() -> None:
    torch = _torch()
    mod = tilelang.compile(
        "kernel fn check<const B: i32>(z: &mut Tensor<f32, [B]>) {\n"
        "    assert(block_id(0) < 1, \"only one block\");\n"
        "    z.store(zeros::<f32>([B]));\n}\n")
    z = torch.ones(64, device="cuda")
    with pytest.raises(tilelang.ExecutionError, match="only one block"):
        mod.check(P(z, [16])).sync()
    mod.check(P(z, [64])).sync()
    assert float(z.abs().max()) == 0.0


def test_torch_f16_and_int_tensors() -> None:
    torch = _torch()
    mod = tilelang.compile(
        "kernel fn copy<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {\n"
        "    z.store(x.load_like(z));\n}\n")
    for dt in (torch.float16, torch.int32, torch.int64, torch.uint8):
        x = torch.arange(1000, device="cuda").to(dt)
        z = torch.zeros(1000, device="cuda", dtype=dt)
        mod.copy(P(z, [256]), x).sync()
        assert torch.equal(z, x), dt


BF16_SOURCE = """
kernel fn scale_add<const B: i32>(z: &mut Tensor<bf16, [B]>, x: &Tensor<bf16, [?]>, y: &Tensor<bf16, [?]>) {
    z.store(x.load_like(z) * 0.5 + y.load_like(z));
}

kernel fn widen<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<bf16, [?]>) {
    z.store(x.load_like(z) as f32 * 3.0);
}

kernel fn copy<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {
    z.store(x.load_like(z));
}
"""


def _bf16_inputs(torch, n: int):  # type: ignore[no-untyped-def]
    gen = torch.Generator(device="cuda").manual_seed(7)
    x = (torch.randn(n, device="cuda", generator=gen) * 3).to(torch.bfloat16)
    y = torch.randn(n, device="cuda", generator=gen).to(torch.bfloat16)
    return x, y


def test_torch_bf16_cuda_in_place_matches_the_interpreter() -> None:
    torch = _torch()
    mod = tilelang.compile(BF16_SOURCE)
    n = 5000
    x, y = _bf16_inputs(torch, n)
    z = torch.zeros(n, device="cuda", dtype=torch.bfloat16)
    ptr = z.data_ptr()
    mod.scale_add(P(z, [1024]), x, y).sync()
    assert z.data_ptr() == ptr and z.dtype == torch.bfloat16  # written in place, 2-byte memory
    # the reference: the CPU interpreter on float32 arrays holding the same values
    want = np.zeros(n, np.float32)
    mod.scale_add(P(want, [1024]), x.float().cpu().numpy(), y.float().cpu().numpy()).sync()
    np.testing.assert_array_equal(z.float().cpu().numpy(), want)
    # torch's bf16 ops also round once per op: the same values
    assert torch.equal(z, x * 0.5 + y)
    # .launch() on the caller's stream, then torch reads the result after it
    z2 = torch.zeros(n, device="cuda", dtype=torch.bfloat16)
    h = mod.scale_add(P(z2, [1024]), x, y).launch()
    w = z2.float() * 2
    h.wait()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(w.cpu().numpy(), want * 2)


def test_torch_bf16_and_float32_layouts_agree() -> None:
    """The same `bf16` parameter takes 2-byte bf16 memory or float32 memory
    (the compile cache keys on which); a bf16 input can widen into f32."""
    torch = _torch()
    mod = tilelang.compile(BF16_SOURCE)
    n = 3000
    x, _ = _bf16_inputs(torch, n)
    z16 = torch.zeros(n, device="cuda")
    z32 = torch.zeros(n, device="cuda")
    mod.widen(P(z16, [512]), x).sync()
    mod.widen(P(z32, [512]), x.float()).sync()  # float32 memory, bf16 values
    assert torch.equal(z16, z32)
    assert torch.equal(z16, x.float() * 3.0)


def test_torch_bf16_binds_a_type_generic_kernel() -> None:
    torch = _torch()
    mod = tilelang.compile(BF16_SOURCE)
    x, _ = _bf16_inputs(torch, 2000)
    z = torch.zeros(2000, device="cuda", dtype=torch.bfloat16)
    mod.copy(P(z, [256]), x).sync()
    assert torch.equal(z, x)


def test_torch_bf16_on_the_cpu_is_refused() -> None:
    torch = _torch()
    mod = tilelang.compile(BF16_SOURCE)
    with pytest.raises(tilelang.CallError, match=r"torch.bfloat16 tensor on the CPU cannot be used in place"):
        mod.copy(P(torch.zeros(64, dtype=torch.bfloat16), [64]), torch.ones(64, dtype=torch.bfloat16))


# ---------------------------------------------------------------- CuPy
def test_cupy_in_place(add) -> None:  # type: ignore[no-untyped-def]
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(5000, dtype=cupy.float32)
    y = cupy.ones(5000, dtype=cupy.float32)
    z = cupy.zeros(5000, dtype=cupy.float32)
    add.add(P(z, [1024]), x, y).sync()
    assert bool((z == x + 1).all())
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        add.add(P(z, [1024]), y, y).launch().wait()
        w = z * 3
    s.synchronize()
    assert bool((w == 6).all())


# ---------------------------------------------------------------- NumPy on the GPU, and tilelang.testing
def test_numpy_on_a_gpu_module_copies_back(add) -> None:  # type: ignore[no-untyped-def]
    gpu = add.on("gpu")
    x = np.arange(3000, dtype=np.float32)
    z = np.zeros(3000, np.float32)
    h = gpu.add(P(z, [1024]), x, x).launch()
    h.wait()
    np.testing.assert_array_equal(z, 2 * x)


@pytest.mark.parametrize("case", ["add", "saxpy", "softmax", "gemm", "layernorm"])
def test_compare_engines_on_examples(case: str) -> None:
    rng = np.random.default_rng(5)
    if case == "add":
        mod = tilelang.load(EX / "add.tile")
        x, y = rng.standard_normal((2, 5000)).astype(np.float32)
        tt.compare(mod.add, P(np.zeros(5000, np.float32), [1024]), x, y)
    elif case == "saxpy":
        mod = tilelang.load(EX / "saxpy.tile")
        x, y = rng.standard_normal((2, 5000)).astype(np.float32)
        tt.compare(mod.saxpy, P(y, [1024]), x, 2.5)
    elif case == "softmax":
        mod = tilelang.load(EX / "softmax.tile")
        x = (rng.standard_normal((300, 128)) * 3).astype(np.float32)
        tt.compare(mod.softmax_rows, P(np.zeros_like(x), [16, 128]), x, atol=1e-6)
    elif case == "gemm":
        mod = tilelang.load(EX / "gemm.tile")
        a = rng.standard_normal((192, 200)).astype(np.float16)
        b = rng.standard_normal((200, 160)).astype(np.float16)
        tt.compare(mod.gemm[64, 64, 32], P(np.zeros((192, 160), np.float32), [64, 64]), a, b,
                   rtol=1e-4, atol=1e-3)
    else:
        mod = tilelang.load(EX / "layernorm.tile")
        x = (rng.standard_normal((100, 256)) * 2 + 0.5).astype(np.float32)
        w = (rng.random(256) + 0.5).astype(np.float32)
        b = rng.standard_normal(256).astype(np.float32)
        tt.compare(mod.layernorm, P(np.zeros_like(x), [8, 256]), x, w, b, 1e-5, atol=1e-4)
