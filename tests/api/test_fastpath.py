"""The fast path of repeated kernel calls (`tilelang/api/fastpath.py`) on the
CPU: a call with the same argument kinds reuses the plan of an earlier call,
and nothing that could change the verdict of a check is served from it (a
changed shape, dtype, stride, writeability, device, generics, a number out of
range, overlapping arrays, a borrow in flight)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.api import fastpath, in_flight

ROOT = Path(__file__).resolve().parents[2]
P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn fixed<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [256]>) {
    z.store(x.load_like(z));
}
kernel fn shift<const B: i32>(z: &mut Tensor<i32, [B]>, x: &Tensor<i32, [?]>, k: i8) {
    z.store(x.load_like(z) + (k as i32));
}
kernel fn twice<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {
    z.store(x.load_like(z) + x.load_like(z));
}
"""


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE)


@pytest.fixture(autouse=True)
def _nothing_left_in_flight():  # type: ignore[no-untyped-def]
    yield
    assert in_flight() == 0, "a test left a launch in flight"


def _vecs(n: int = 1000, dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return (
        rng.standard_normal(n).astype(dtype),
        rng.standard_normal(n).astype(dtype),
        np.zeros(n, dtype),
    )


def _plan_of(op):  # type: ignore[no-untyped-def]
    return op._plan


def test_a_repeated_call_reuses_its_plan_with_the_new_arrays(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    first = mod.add(P(z, [256]), x, y)
    first.sync()
    x2, y2, z2 = _vecs()
    x2 += 1
    second = mod.add(P(z2, [256]), x2, y2)
    assert _plan_of(second) is _plan_of(first)  # served from the cache
    assert _plan_of(second).stats["hits"] >= 1
    second.sync()
    np.testing.assert_array_equal(z2, x2 + y2)  # the new arrays, not the first call's
    np.testing.assert_array_equal(z, x + y)


def test_a_changed_shape_is_a_new_plan_and_is_checked(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs(1000)
    a = mod.add(P(z, [256]), x, y)
    a.sync()
    x, y, z = _vecs(3000)
    b = mod.add(P(z, [256]), x, y)
    assert _plan_of(b) is not _plan_of(a) and b.grid == (12,)
    b.sync()
    np.testing.assert_array_equal(z, x + y)
    # a static dimension: right once, then a wrong shape of the same kinds
    z = np.zeros(256, np.float32)
    mod.fixed(P(z, [64]), np.ones(256, np.float32)).sync()
    with pytest.raises(tilelang.CallError, match="E0501"):
        mod.fixed(P(z, [64]), np.ones(300, np.float32))


def test_a_changed_tile_is_a_new_plan(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs(1000)
    a = mod.add(P(z, [256]), x, y)
    b = mod.add(P(z, [128]), x, y)
    assert a.generics == {"B": 256} and b.generics == {"B": 128} and b.grid == (8,)
    a.sync()
    b.sync()
    c = mod.add(P(z, [100]), x, y)  # any tile size runs: another plan
    assert c.generics == {"B": 100} and c._plan is not a._plan
    c.sync()
    np.testing.assert_array_equal(z, x + y)
    with pytest.raises(tilelang.CallError, match="E0213"):
        mod.add(P(np.zeros(3_000_000, np.float32), [2_000_000]), x, y)  # too many elements


def test_a_changed_dtype_is_refused_after_a_good_call(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(P(z, [256]), x, y).sync()
    with pytest.raises(tilelang.CallError, match=r"E0502.*must hold `f32`, but it is a float64"):
        mod.add(P(z, [256]), x.astype(np.float64), y)


def test_a_changed_stride_is_refused_after_a_good_call(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs(2000)
    mod.add(P(z[:1000], [256]), x[:1000], y[:1000]).sync()
    with pytest.raises(tilelang.CallError, match="is not contiguous"):
        mod.add(P(z[:1000], [256]), x[::2], y[:1000])  # same shape and dtype, other strides


def test_read_only_output_is_refused_after_a_writeable_one(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(P(z, [256]), x, y).sync()
    z.flags.writeable = False
    with pytest.raises(tilelang.CallError, match="read-only"):
        mod.add(P(z, [256]), x, y)


def test_overlap_within_a_call_is_checked_on_every_call(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(P(z, [256]), x, y).sync()
    # the same kinds as the cached call, but z is also read as `x`: E0303
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.add(P(z, [256]), z, y)
    buf = np.zeros(2000, np.float32)
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.add(P(buf[:1000], [256]), buf[500:1500], y)  # partly overlapping views
    mod.add(P(buf[:1000], [256]), buf[1000:], y).sync()  # adjacent, not overlapping


def test_an_in_flight_borrow_is_never_served_from_the_cache(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(P(z, [256]), x, y).sync()  # the plan exists
    h = mod.add(P(z, [256]), x, y).launch()
    op = mod.add(P(x, [256]), z, y)  # building is fine; starting would race with `h`
    assert _plan_of(op) is not None
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        op.launch()
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        mod.add(P(z, [256]), x, y).sync()  # two writers of z
    h.wait()
    op.sync()  # after the wait, the same operation starts
    assert in_flight() == 0


def test_numbers_are_checked_on_every_call(mod) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(1000, dtype=np.int32)
    z = np.zeros(1000, np.int32)
    mod.shift(P(z, [256]), x, 3).sync()
    np.testing.assert_array_equal(z, x + 3)
    with pytest.raises(tilelang.CallError, match=r"`i8`, and 300 does not fit"):
        mod.shift(P(z, [256]), x, 300)  # same key (an int), a value out of range
    with pytest.raises(tilelang.CallError, match="integer"):
        mod.shift(P(z, [256]), x, 2.5)
    mod.shift(P(z, [256]), x, -7).sync()
    np.testing.assert_array_equal(z, x - 7)


def test_type_parameters_follow_the_arrays(mod) -> None:  # type: ignore[no-untyped-def]
    x32 = np.arange(100, dtype=np.float32)
    z32 = np.zeros(100, np.float32)
    mod.twice(P(z32, [64]), x32).sync()
    x16, z16 = x32.astype(np.float16), np.zeros(100, np.float16)
    op = mod.twice(P(z16, [64]), x16)
    assert op.generics["T"].value == "f16"
    op.sync()
    np.testing.assert_array_equal(z16, (x16 * 2).astype(np.float16))
    with pytest.raises(tilelang.CallError, match=r"E0504.*`T`"):
        mod.twice(P(z16, [64]), x32)  # T is f16 from z, f32 from x


def test_explicit_generics_have_their_own_plans(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    assert mod.add[256] is mod.add[256]  # one kernel object per list of generics
    mod.add[256](P(z, [256]), x, y).sync()
    with pytest.raises(tilelang.CallError, match=r"E0504.*`B`"):
        mod.add[128](P(z, [256]), x, y)  # the explicit 128 disagrees with the tile


def test_keyword_arguments_take_the_checked_path(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    mod.add(z=P(z, [256]), x=x, y=y).sync()
    np.testing.assert_array_equal(z, x + y)


def test_a_resized_array_is_not_taken_for_its_old_memory(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs(1000)
    mod.add(P(z, [256]), x, y).sync()
    x.resize(4000)  # a new buffer (and a new shape); refcheck: nothing of ours holds `x`
    x[:] = 1
    assert fastpath._np_ptr(x) == x.__array_interface__["data"][0]
    mod.add(P(z, [256]), x, y).sync()
    np.testing.assert_array_equal(z, 1 + y)


def test_plan_cache_is_bounded(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs(64)
    for n in range(1, fastpath.MAX_PLANS + 10):
        mod.add(P(z[:n], [64]), x[:n], y[:n]).sync()
    assert len(mod.add._plans) <= fastpath.MAX_PLANS


def test_operations_are_reusable_and_rerun_with_current_values(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, z = _vecs()
    op = mod.add(P(z, [256]), x, y)
    op.sync()
    x[:] = 5
    op.sync()
    np.testing.assert_array_equal(z, 5 + y)


def test_torch_cpu_tensors_use_the_fast_path() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SOURCE)
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    a = mod.add(P(z, [256]), x, y)
    a.sync()
    x2, y2 = torch.randn(1000), torch.randn(1000)
    b = mod.add(P(z, [256]), x2, y2)
    assert b._plan is a._plan
    b.sync()
    torch.testing.assert_close(z, x2 + y2, rtol=0, atol=0)
    # a NumPy array of the same shape is another device/library: another plan
    c = mod.add(P(z.numpy(), [256]), x2.numpy(), y2.numpy())
    assert c._plan is not a._plan
    c.sync()
    # the version counter of the written tensor moves on every run
    v = z._version
    mod.add(P(z, [256]), x, y).sync()
    assert z._version > v
    # storage swapped under the same tensor object: the new memory is used
    z.set_(torch.zeros(1000).untyped_storage())
    mod.add(P(z, [256]), x, y).sync()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)


def test_the_fast_launcher_packs_what_changes_and_nothing_else() -> None:
    """`runtime/cuda.py`'s FastLaunch over a recording stand-in for the driver:
    addresses and numbers are rewritten per launch, dims stay, and an address
    of another alignment than the compiled variant's is refused."""
    import ctypes
    from types import SimpleNamespace

    from tilelang.backend import compile_kernel
    from tilelang.ir import samples
    from tilelang.runtime import cuda

    k = samples.saxpy(256)
    ck = compile_kernel(k, "sm_90")
    calls: list[tuple] = []

    def launch(handle, gx, gy, gz, bx, by, bz, smem, stream, address, extra):  # type: ignore[no-untyped-def]
        ptrs = (ctypes.c_void_p * len(ck.abi.slots)).from_address(address)
        vals = []
        for slot, p in zip(ck.abi.slots, ptrs, strict=True):
            ct = cuda.CTYPES[slot.kind]
            vals.append(ct.from_address(p).value)
        calls.append((handle, (gx, gy, gz), bx, smem, stream, vals))
        return (0,)

    driver = SimpleNamespace(cuLaunchKernel=launch, CUresult=SimpleNamespace(CUDA_SUCCESS=0))
    dev = SimpleNamespace(
        ctx=SimpleNamespace(d=driver), launches=0, _err=SimpleNamespace(ptr=0x9990)
    )
    fn = SimpleNamespace(handle="fn", name="saxpy")

    def buf(ptr: int, n: int) -> cuda.CudaBuffer:
        return cuda.CudaBuffer(
            cuda.DeviceBuffer(ptr, 4 * n, 4 * n, None), (n,), np.dtype(np.float32)
        )

    args = [
        buf(0x10000, 1000),
        np.float32(2.0),
        buf(0x20000, 1000),
        buf(0x30000, 1000),
    ]  # kir order: z, a, x, y
    index = {p.name: i for i, p in enumerate(k.params)}
    fl = cuda.FastLaunch.make(dev, fn, ck.abi, (4,), args, index)  # type: ignore[arg-type]
    assert fl is not None
    assert fl([0x40000, 3.5, 0x50000, 0x60000], "s1") is True
    handle, grid, threads, _, stream, vals = calls[-1]
    assert (handle, grid, threads, stream) == ("fn", (4, 1, 1), ck.abi.num_threads, "s1")
    by_what = {(s.param, s.what): v for s, v in zip(ck.abi.slots, vals, strict=True)}
    assert by_what[("z", "ptr")] == 0x40000 and by_what[("x", "ptr")] == 0x50000
    assert by_what[("y", "ptr")] == 0x60000 and by_what[("a", "value")] == 3.5
    assert by_what[("z", "dim0")] == 1000 and by_what[("", "err")] == 0x9990 and dev.launches == 1
    assert fl([0x40004, 3.5, 0x50000, 0x60000], "s1") is False  # not 16-byte aligned: general path
    assert len(calls) == 1


SCALARS = """
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32, on: bool) {
    if on { z.store(x.load_like(z) * a); } else { z.store(x.load_like(z)); }
}
"""


def test_the_quick_number_checks_agree_with_the_full_ones() -> None:
    """A plan checks the common kind of number (an in-range `float` for an
    `f32`, a `bool` for a `bool`) without the full check; everything else
    takes the full check, and both give the kernel the same value."""
    mod = tilelang.compile(SCALARS)
    x = np.linspace(-2, 2, 300).astype(np.float32)
    z = np.zeros_like(x)
    mod.scale(P(z, [128]), x, 1.5, True).sync()  # the plan
    first = mod.scale(P(z, [128]), x, 0.1, True)
    first.sync()
    plan = first._plan
    quick = dict(plan.quick)
    assert quick[2][0] is float and quick[3][0] is bool
    for a in (0.1, 3, np.float32(0.1), np.float64(2.5), float("inf"), float("nan"), -0.0, 3e38):
        op = mod.scale(P(z, [128]), x, a, True)
        assert type(op._scalars[0]) is np.float32
        assert (op._plan is plan) == (type(a) is float)  # the key holds the number's type
        op.sync()
        np.testing.assert_array_equal(z, x * np.float32(a))
    for bad, what in ((True, "not a `bool`"), (1 + 2j, "complex"), ("1", "a number")):
        with pytest.raises(tilelang.CallError, match=what):
            mod.scale(P(z, [128]), x, bad, True)
    with pytest.raises(tilelang.CallError, match="is a `bool`, but it is 1"):
        mod.scale(P(z, [128]), x, 1.0, 1)
    mod.scale(P(z, [128]), x, 2.0, np.bool_(False)).sync()
    np.testing.assert_array_equal(z, x)


def test_the_call_key_is_read_by_code_made_per_parameter_kinds() -> None:
    from tilelang.api.partition import Partition

    keyer = fastpath.keyer_for(("mut", "ref", "scalar"))
    assert fastpath.keyer_for(("mut", "ref", "scalar")) is keyer  # one per list of kinds
    z = np.zeros(8, np.float32)
    x = np.ones(8, np.float32)
    key, ptrs, objs = keyer((Partition(z, (4,)), x, 3))
    assert key == ((4,), fastpath.probe(z)[0], fastpath.probe(x)[0], int)  # type: ignore[index]
    assert ptrs == [z.__array_interface__["data"][0], x.__array_interface__["data"][0]]
    assert objs[0] is z and objs[1] is x
    assert keyer((z, x, 3)) is None  # a bare array for `&mut`: the checked path words it
    assert keyer((Partition(z, (4,)), x)) is None  # too few
    assert keyer((Partition(z, (4,)), [1.0] * 8, 3)) is None  # not an array the fast path reads
    assert keyer((Partition(z, (4,)), x, 3.0))[0][-1] is float  # type: ignore[index]
    assert fastpath.keyer_for(("other",))((1,)) is None
    assert fastpath.keyer_for(())(()) == ((), [], [])


def test_torch_device_and_contiguity_are_in_the_key() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SOURCE)
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    mod.add(P(z, [256]), x, y).sync()
    with pytest.raises(tilelang.CallError, match="not contiguous"):
        mod.add(P(z, [256]), torch.randn(2000)[::2], y)  # same shape and dtype
    with pytest.raises(tilelang.CallError, match="meta"):
        mod.add(P(z, [256]), torch.empty(1000, device="meta"), y)  # same shape, another device
    mod.add(P(z, [256]), x, y).sync()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)


def test_the_negative_bit_is_in_the_key() -> None:
    """A repeat call with `torch._neg_view(x)` of a first call's `x` (the same memory, shape and strides) is
    refused as a first call with it is (E0801): the key left the bit out, so the call took the first call's
    plan, and read the un-negated memory on a GPU and raised NumPy's RuntimeError (a traceback) on the CPU
    (hrev18, found by huser17)."""
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SOURCE)
    x, y, z = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    mod.add(P(z, [256]), x, y).sync()
    xn = torch._neg_view(x)
    assert xn.is_neg() and xn.data_ptr() == x.data_ptr()
    for _ in range(2):  # (the second through whatever the first refusal left)
        with pytest.raises(tilelang.CallError, match="negative bit") as e:
            mod.add(P(z, [256]), xn, y).sync()
        assert e.value.code == "E0801"
    mod.add(P(z, [256]), xn.resolve_neg(), y).sync()  # the help's form
    torch.testing.assert_close(z, y - x, rtol=0, atol=0)


def test_a_launch_in_flight_is_checked_against_each_new_one_by_address(mod) -> None:  # type: ignore[no-untyped-def]
    """The launches in flight are kept by the API (`engines._PENDING`); a new
    launch is tested against each by address ranges, in its own address space."""
    from tilelang.api import engines

    buf = np.zeros(3000, np.float32)
    x, y = np.ones(1000, np.float32), np.ones(1000, np.float32)
    h1 = mod.add(P(buf[:1000], [256]), x, y).launch()
    h2 = mod.add(P(buf[1000:2000], [256]), x, y).launch()  # adjacent memory: no conflict
    assert in_flight() == 2 and set(engines._PENDING.values()) == {h1.operation, h2.operation}
    with pytest.raises(tilelang.BorrowError, match=r"E0309.*\(as `z`\)"):
        mod.add(P(buf[1999:2500], [256]), x, y).launch()  # one element of h2's output
    with pytest.raises(tilelang.BorrowError, match=r"E0305.*reads memory .* writing"):
        mod.add(P(buf[2000:3000], [256]), buf[500:1500], y).launch()
    h3 = mod.add(P(buf[2000:], [256]), x, y).launch()  # reading what h1 and h2 read is fine
    for h in (h1, h2, h3):
        h.wait()
    assert in_flight() == 0 and not engines._PENDING
    np.testing.assert_array_equal(buf, np.full(3000, 2, np.float32))
