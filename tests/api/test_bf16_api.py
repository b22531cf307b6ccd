"""torch.bfloat16 through the Python API without torch or a GPU: a fake
PyTorch tensor class (its module is `torch`, as `arrays.describe` checks) over
host memory, and the fake CUDA device of `test_cuda_plumbing.py`. A CUDA
bf16 tensor is accepted for `bf16` parameters and wrapped in place as 2-byte
bf16 memory; a CPU one is refused with the fix; a bf16 tensor for an `f32`
parameter is a dtype mismatch. `test_api_gpu.py` runs the real thing."""

from __future__ import annotations

import sys
from collections import namedtuple
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_cuda_plumbing import FakeCudaArray, FakeCudaDevice

import tilelang
from tilelang.api import arrays, in_flight, module
from tilelang.dtypes import DType
from tilelang.runtime.cuda import bf16_bits, bf16_values

P = tilelang.partition

SOURCE = """
kernel fn axpy<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<bf16, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) as f32 * 2.0 + y.load_like(z));
}

kernel fn half<const B: i32>(z: &mut Tensor<bf16, [B]>, x: &Tensor<bf16, [?]>) {
    z.store(x.load_like(z) * 0.5);
}

kernel fn twice<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * 2.0);
}
"""


_FakeDevice = namedtuple("_FakeDevice", "index type")


class FakeTorchTensor:
    """Enough of a torch.Tensor for `arrays._torch`: bf16 bits in a uint16 array."""

    __module__ = "torch"

    def __init__(self, bits: np.ndarray, cuda: bool) -> None:
        self.bits = bits
        self.is_cuda = cuda
        self.dtype = "torch.bfloat16"
        self.shape = bits.shape
        # hashable, as torch.device is (the fast path's call key holds it)
        self.device = _FakeDevice(0 if cuda else None, "cuda" if cuda else "cpu")

    def data_ptr(self) -> int:
        return int(self.bits.ctypes.data)

    def stride(self) -> tuple[int, ...]:
        return tuple(s // 2 for s in self.bits.strides)

    def is_contiguous(self) -> bool:
        return bool(self.bits.flags.c_contiguous)

    def numel(self) -> int:
        return int(self.bits.size)

    def element_size(self) -> int:
        return 2


class Bf16FakeDevice(FakeCudaDevice):
    """Records each `wrap_external`; 2-byte bf16 memory is read into the f32
    values the CPU interpreter works on (a copy: read-only use only)."""

    def __init__(self) -> None:
        super().__init__()
        self.wrapped: list[tuple[Any, ...]] = []

    def wrap_external(self, ptr: int, shape: tuple[int, ...], np_dtype: Any, nbytes: int,
                      bf16: bool = False) -> np.ndarray:
        self.wrapped.append((np.dtype(np_dtype), nbytes, bf16))
        raw = super().wrap_external(ptr, shape, np_dtype, nbytes)
        return bf16_values(raw) if bf16 else raw


@pytest.fixture
def fake(monkeypatch):  # type: ignore[no-untyped-def]
    dev = Bf16FakeDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(
        cuda=SimpleNamespace(current_stream=lambda device: SimpleNamespace(cuda_stream=7))))
    yield dev
    assert in_flight() == 0


def _bf16(values: list[float]) -> np.ndarray:
    return bf16_bits(np.array(values, np.float32))


def test_describe_cuda_bf16_is_two_byte_bf16(fake) -> None:  # type: ignore[no-untyped-def]
    bits = _bf16([1.0] * 6).reshape(2, 3)
    ref = arrays.describe(FakeTorchTensor(bits, cuda=True))
    assert ref.dtype is DType.BF16 and ref.is_cuda and ref.library == "torch"
    assert ref.nbytes == 12 and ref.ptr == bits.ctypes.data and ref.shape == (2, 3)
    assert ref.stream == 7 and ref.dtype_name == "torch.bfloat16"


def test_cuda_bf16_tensor_is_read_in_place_as_bf16_memory(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([1.0, 1.5, -2.0, 3.0 + 2**-6] * 16), cuda=True)
    y = np.arange(64, dtype=np.float32)
    z = np.zeros(64, np.float32)
    mod.axpy(P(FakeCudaArray(z), [16]), x, FakeCudaArray(y)).sync()
    # the kernel saw the bf16 values, not the bits as f32 or half as many elements
    np.testing.assert_array_equal(z, bf16_values(x.bits) * 2 + y)
    # bf16 memory was wrapped as 2-byte bf16, the f32 arrays as they were
    assert (np.dtype(np.uint16), 128, True) in fake.wrapped
    assert sum(1 for w in fake.wrapped if w[2]) == 1
    assert fake.ran_on == [fake.streams[7]]


def test_cuda_bf16_tensor_binds_a_mut_bf16_parameter(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([4.0] * 32), cuda=True)
    z = FakeTorchTensor(_bf16([0.0] * 32), cuda=True)
    op = mod.half(P(z, [16]), x)
    assert op.grid == (2,)
    op.sync()
    assert [w[2] for w in fake.wrapped] == [True, True]


def test_cpu_bf16_tensor_is_refused_with_the_fix(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([1.0] * 16), cuda=False)
    with pytest.raises(tilelang.CallError, match=r"argument `x` of kernel `half`: a torch.bfloat16 tensor on the CPU "
                       r"cannot be used in place(.|\n)*`x.float\(\)`(.|\n)*`x.cuda\(\)`"):
        mod.half(P(np.zeros(16, np.float32), [16]), x)


def test_cuda_bf16_tensor_for_an_f32_parameter_is_a_dtype_mismatch(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([1.0] * 16), cuda=True)
    with pytest.raises(tilelang.CallError, match=r"E0502(.|\n)*must hold `f32`, but it is a torch.bfloat16 PyTorch "
                       r"tensor on the GPU(.|\n)*`x.to\(torch.float32\)`"):
        mod.twice(P(FakeCudaArray(np.zeros(16, np.float32)), [16]), x)
    assert fake.wrapped == []  # refused before anything was wrapped


def test_host_function_names_the_cpu_bf16_fix(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile("fn total(x: &Tensor<bf16, [?]>) -> f32 {\n    return x.sum() as f32;\n}\n")
    x = FakeTorchTensor(_bf16([1.0] * 4), cuda=False)
    with pytest.raises(tilelang.CallError, match=r"argument `x` of function `total`: a torch.bfloat16 tensor on "
                       r"the CPU(.|\n)*`x.float\(\)`"):
        mod.total(x)
    assert mod.total(np.ones(4, np.float32)) == 4.0


def test_a_tensor_given_other_strides_at_its_address_is_not_run(fake) -> None:  # type: ignore[no-untyped-def]
    # hrev round 8: a built operation compared a PyTorch tensor's address and
    # shape only; `as_strided_` (or `set_` with a stride) keeps both, and the
    # kernel wrote 32 contiguous elements where the tensor's are every second one
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([4.0] * 32), cuda=True)
    big = _bf16([0.0] * 64)
    z = FakeTorchTensor(big[:32], cuda=True)
    op = mod.half(P(z, [16]), x)
    z.bits = big[::2]  # the same address and shape, strides of 2 elements
    with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `half` has other memory, another shape, "
                       r"layout or element type than when the operation was built \(`set_`, `resize_`, "
                       r"`as_strided_`, `.data =`; now torch.bfloat16 \(32,\), then torch.bfloat16 \(32,\)\)"):
        op.sync()
    assert not big.any() and fake.ran_on == []
    z.bits = big[:32]  # as it was: runs (the fake device reads bf16 memory through a copy)
    op.sync()
    assert fake.ran_on == [fake.streams[7]]


class GraphFakeDevice(Bf16FakeDevice):
    """Captures by running: a graph's first replay runs its operations once
    (`_capture` starts each on the capturing stream); later replays run nothing."""

    def new_stream(self) -> object:
        return object()

    def capture(self, stream: object) -> None:
        pass

    def end_capture(self, stream: object) -> str:
        return "graph"

    def replay(self, graph: str, stream: object) -> None:
        pass


def test_a_graph_replay_checks_each_tensors_layout_and_element_type(fake, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: a GPU replay checks every PyTorch tensor of the recording
    # at once (`graphs._TorchArrays`: address, shape, contiguity), which no
    # test ran; and it missed the element type, which `t.data = t.view(torch.int16)`
    # changes at the same address, shape and strides (the kernel would write
    # bf16 values into an int16 tensor). So did a built operation's check.
    dev = GraphFakeDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    monkeypatch.setattr(sys.modules["torch"], "Tensor", FakeTorchTensor, raising=False)
    mod = tilelang.compile(SOURCE)
    x = FakeTorchTensor(_bf16([4.0] * 32), cuda=True)
    big = _bf16([0.0] * 64)
    z = FakeTorchTensor(big[:32], cuda=True)
    op = mod.half(P(z, [16]), x)
    with tilelang.graph() as g:
        op.sync()
    g.replay()
    assert len(dev.ran_on) == 1  # captured (run once by this fake)
    for change, now in (("strides", "torch.bfloat16"), ("dtype", "torch.int16")):
        if change == "strides":
            z.bits = big[::2]  # the same address and shape, strides of 2 elements
        else:
            z.dtype = "torch.int16"  # the same address, shape and strides
        for run in (g.replay, op.sync):
            with pytest.raises(tilelang.CallError, match=r"E0810.*`z` of kernel `half` has other memory, "
                               rf"another shape, layout or element type than when the operation was built "
                               rf"(.|\n)*now {now} \(32,\), then torch.bfloat16 \(32,\)"):
                run()
        z.bits, z.dtype = big[:32], "torch.bfloat16"
    assert len(dev.ran_on) == 1  # nothing ran on the changed tensor
    g.replay()  # as it was: replays (this fake's replay runs nothing)
    op.sync()
    assert len(dev.ran_on) == 2
