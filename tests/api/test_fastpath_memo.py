"""The memo of a plan on PyTorch tensors (`fastpath.memo_for`): a repeated
call is read with PyTorch's `TensorGuards` instead of the key, and a call
that differs in anything the key holds is never served by it (the shape,
dtype, strides, device, Python type, tile or a number's type), nor skips a
check (the overlap of its own arrays, launches in flight, moved memory)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.api import fastpath, in_flight

torch = pytest.importorskip("torch")

P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn scale<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>, a: f32) {
    z.store(x.load_like(z) * (a as T));
}
"""


@pytest.fixture
def mod():  # type: ignore[no-untyped-def]
    if fastpath._guard_class() is None:
        pytest.skip("this PyTorch has no usable TensorGuards")
    return tilelang.compile(SOURCE)


@pytest.fixture(autouse=True)
def _nothing_left_in_flight():  # type: ignore[no-untyped-def]
    yield
    assert in_flight() == 0, "a test left a launch in flight"


def _memo_op(kernel, args):  # type: ignore[no-untyped-def]
    """The operation the kernel's memo makes of `args` (not run), or None."""
    memo = kernel._memo
    op = memo(args) if memo is not None else None
    if op is not None:
        op._runs = 1  # looked at, not forgotten
    return op


def _served_by_memo(kernel, args) -> bool:  # type: ignore[no-untyped-def]
    return _memo_op(kernel, args) is not None


def test_a_repeated_call_is_read_by_the_memo_and_runs_on_the_new_tensors(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    first = mod.add(P(z, [256]), x, y)
    first.sync()
    plan = first._plan
    assert plan.guard is not None and mod.add._memo is plan.memo
    x2, y2, z2 = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    args = (P(z2, [256]), x2, y2)
    assert _served_by_memo(mod.add, args)
    hits = plan.stats["hits"]
    op = mod.add(*args)
    assert op._plan is plan and plan.stats["hits"] == hits + 1
    assert op._ptrs == [z2.data_ptr(), x2.data_ptr(), y2.data_ptr()]
    op.sync()
    torch.testing.assert_close(z2, x2 + y2, rtol=0, atol=0)


@pytest.mark.parametrize(
    "change",
    [
        "shape",
        "dtype",
        "stride",
        "device",
        "subclass",
        "requires_grad",
        "tile",
        "numpy",
    ],
)
def test_what_the_key_tells_apart_is_never_served_by_the_memo(mod, change) -> None:  # type: ignore[no-untyped-def]
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    mod.add(P(z, [256]), x, y).sync()
    plan = _memo_op(mod.add, (P(z, [256]), x, y))._plan
    tile = [256]
    if change == "shape":
        x, y, z = torch.randn(999), torch.randn(999), torch.zeros(999)
    elif change == "dtype":
        x = torch.randn(1000, dtype=torch.float64)
    elif change == "stride":
        x = torch.randn(2000)[::2]
    elif change == "device":
        x = torch.empty(1000, device="meta")
    elif change == "subclass":
        x = torch.nn.Parameter(torch.randn(1000), requires_grad=False)
    elif change == "requires_grad":
        x = torch.randn(1000, requires_grad=True)
    elif change == "tile":
        tile = [128]
    elif change == "numpy":
        x = x.numpy()
    args = (P(z, tile), x, y)
    assert not _served_by_memo(mod.add, args)
    try:
        op = mod.add(*args)
    except tilelang.CallError as e:  # refused by the checked path, as without a memo
        assert change in ("dtype", "stride", "device")
        want = {"dtype": "must hold `f32`", "stride": "not contiguous", "device": "meta"}
        assert want[change] in str(e)
        return
    assert change in ("shape", "subclass", "requires_grad", "tile", "numpy")
    # (`requires_grad`: the key holds it, huser19; a written leaf that requires grad is refused, E0803)
    assert op._plan is not plan
    op.sync()
    torch.testing.assert_close(z, (torch.as_tensor(x) + y).detach(), rtol=0, atol=0)


def test_a_numbers_type_is_checked_by_the_memo(mod) -> None:  # type: ignore[no-untyped-def]
    x, z = torch.randn(100), torch.zeros(100)
    mod.scale(P(z, [64]), x, 2.0).sync()
    op = _memo_op(mod.scale, (P(z, [64]), x, 3.0))
    assert op is not None and op._scalars == [3.0] and type(op._scalars[0]) is np.float32
    assert not _served_by_memo(mod.scale, (P(z, [64]), x, 3))  # an int: another key
    mod.scale(P(z, [64]), x, 3).sync()
    torch.testing.assert_close(z, x * 3, rtol=0, atol=0)
    with pytest.raises(tilelang.CallError, match="is a number"):
        mod.scale(P(z, [64]), x, "3")


def test_a_memo_hit_still_checks_overlap_and_launches_in_flight(mod) -> None:  # type: ignore[no-untyped-def]
    buf = torch.zeros(3000)
    x, y = torch.ones(1000), torch.ones(1000)
    mod.add(P(buf[:1000], [256]), x, y).sync()
    args = (P(buf[1000:2000], [256]), buf[500:1500], y)  # reads what it writes
    assert not _served_by_memo(mod.add, args)  # the key path words the error
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.add(*args)
    h = mod.add(P(buf[:1000], [256]), x, y).launch()
    args = (P(buf[1000:2000], [256]), buf[:1000], y)  # reads what the launch writes
    assert _served_by_memo(mod.add, args)
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        mod.add(*args).launch()
    h.wait()
    mod.add(*args).sync()
    assert float(buf[1000:2000].sum()) == 3000.0  # (1 + 1) + 1


def test_moved_memory_is_refused_at_the_launch(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    mod.add(P(z, [256]), x, y).sync()
    op = mod.add(P(z, [256]), x, y)
    assert op._plan.guard is not None
    z.set_(torch.zeros(1000).untyped_storage())  # other memory, the same metadata
    with pytest.raises(tilelang.CallError, match="other memory"):
        op.sync()
    op = mod.add(P(z, [256]), x, y)
    z.resize_(500)  # the same memory, another shape
    with pytest.raises(tilelang.CallError, match="another shape"):
        op.launch()
    x.requires_grad_(True)  # the guard refuses it, the memory check passes
    op = mod.add(P(torch.zeros(1000), [256]), x.detach(), y)
    op.sync()


def test_the_guard_self_test_refuses_each_change() -> None:
    check = fastpath.tensor_guard([torch.zeros(4, 3), torch.zeros(6)])
    if check is None:
        pytest.skip("this PyTorch has no usable TensorGuards")
    assert check(torch.ones(4, 3), torch.ones(6))
    assert not check(torch.ones(4, 3), torch.ones(7))
    assert not check(torch.ones(4, 3), np.ones(6, np.float32))
    assert not check(torch.ones(3, 4).t(), torch.ones(6))
