"""The one-function `.launch()`/`.sync()` of a plan (`operation._make_fast`), the
path a GPU launch on PyTorch tensors takes once the native launcher is loaded:
here on a fake CUDA device whose native launcher is the real extension built
against a stand-in libcuda (it records each launch), PyTorch CPU tensors
described as `cuda:0` memory. Every check still runs: a launch in flight, a
tensor given other memory or shape, another current stream, a profiler, a
driver refusal and an address of another alignment all leave the fast path
for the general one (which words the errors) before anything ran.
Skipped where there is no C compiler, no `Python.h` or no PyTorch."""

from __future__ import annotations

import ctypes
import warnings
from types import SimpleNamespace
from typing import Any

import pytest

import tilelang
from tilelang.api import in_flight
from tilelang.runtime import cuda_fake

torch = pytest.importorskip("torch")
P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
"""

_count, _last = cuda_fake.count, cuda_fake.last


@pytest.fixture(scope="module")
def native(tmp_path_factory):  # type: ignore[no-untyped-def]
    if not cuda_fake.can_build():
        pytest.skip("no C compiler or no Python.h")
    return cuda_fake.stub_native(tmp_path_factory.mktemp("fastnative"))


@pytest.fixture
def fake(native, monkeypatch):  # type: ignore[no-untyped-def]
    nat, lib = native
    monkeypatch.delenv("TILEC_LAUNCH", raising=False)
    warnings.simplefilter("ignore", RuntimeWarning)
    with cuda_fake.installed(nat, lib) as state:
        yield SimpleNamespace(dev=state.dev, lib=lib, current=state.current, nat=nat)
        assert in_flight() == 0, "a test left a launch in flight"


def _aligned(n: int) -> Any:
    """A float32 tensor whose memory starts on a 16-byte boundary."""
    t = torch.zeros(n + 4)
    k = (-t.data_ptr() % 16) // 4
    return t[k : k + n]


def _ready(mod: Any) -> tuple[Any, Any, Any, Any]:
    x, y, z = _aligned(1000), _aligned(1000), _aligned(1000)
    x += 1.0
    op = mod.add(P(z, [256]), x, y)
    op.sync()  # the general path: makes the launcher (and the one-function launch)
    op.sync()
    assert op._plan.fast_launch is not None and op._plan.fast_sync is not None
    return op, x, y, z


def test_a_launch_is_one_native_call_with_its_borrows(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    n, runs = _count(fake.lib, "n_launch"), fake.dev.runs
    version = z._version
    h = op.launch()
    assert _count(fake.lib, "n_launch") == n + 1 and fake.dev.runs == runs  # native, not general
    last = _last(fake.lib)
    assert last[0] == 0x5151 and last[1] == 4 and last[8] == 0
    assert last[9] == ctypes.addressof(plan.launcher._own[1])  # its own parameter block
    assert list(plan.launcher._own[0]) == [z.data_ptr(), x.data_ptr(), y.data_ptr()]
    assert in_flight() == 1 and z._version > version  # borrowed; autograd told
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        op.launch()  # the same memory written twice in flight: the general path refuses
    assert in_flight() == 1 and _count(fake.lib, "n_launch") == n + 1
    h.wait()
    assert in_flight() == 0
    syncs = _count(fake.lib, "n_sync")
    mod.add(P(z, [256]), x, y).sync()  # a fresh call: the memo, then the one function
    assert _count(fake.lib, "n_launch") == n + 2 and _count(fake.lib, "n_sync") == syncs + 1
    assert fake.dev.runs == runs


def test_changed_memory_and_streams_leave_the_fast_path(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    n = _count(fake.lib, "n_launch")
    z.set_(_aligned(1000).detach().clone().untyped_storage())  # other memory
    with pytest.raises(tilelang.CallError, match="other memory"):
        op.sync()
    assert _count(fake.lib, "n_launch") == n and in_flight() == 0
    op = mod.add(P(z, [256]), x, y)
    fake.current["raw"] = 0x77  # another current stream: launched and waited there
    op.sync()
    assert _count(fake.lib, "n_launch") == n + 1 and _last(fake.lib)[8] == 0x77
    assert _last(fake.lib)[11] == 0x77
    fake.current["raw"] = 0
    with tilelang.profile(print_table=False) as prof:  # the profiler's path: not this one
        op.sync()
    assert len(prof.records) == 1 and _count(fake.lib, "n_launch") == n + 2


def test_a_refusal_of_the_driver_or_the_alignment_takes_the_general_path(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    n, runs = _count(fake.lib, "n_launch"), fake.dev.runs
    ctypes.c_int.in_dll(fake.lib, "fail_with").value = 201  # no current context
    try:
        with pytest.raises(tilelang.ExecutionError, match="launching `add`"):
            op.sync()  # nothing launched; the general path made it current, retried, reported
    finally:
        ctypes.c_int.in_dll(fake.lib, "fail_with").value = 0
    assert fake.dev.made_current >= 1 and in_flight() == 0 and _count(fake.lib, "n_launch") == n
    buf = torch.zeros(1004)
    k = (-buf.data_ptr() % 16) // 4 + 1  # 4 bytes past a 16-byte boundary
    odd = buf[k : k + 1000]
    mod.add(P(odd, [256]), x, y).sync()  # compiled for aligned memory: the general path
    assert fake.dev.runs == runs + 1 and _count(fake.lib, "n_launch") == n


# ---------------------------------------------------------------- the plan in C
def _c_plan(plan: Any) -> bool:
    """Whether `plan`'s memo and launch are the native launcher's `FastPlan`."""
    return all(
        type(f).__name__ == "builtin_function_or_method" and type(f.__self__).__name__ == "FastPlan"
        for f in (plan.memo, plan.fast_launch, plan.fast_sync)
    )


def test_a_repeated_call_and_its_launch_are_one_c_call_each(fake) -> None:  # type: ignore[no-untyped-def]
    from tilelang.api import engines
    from tilelang.api.operation import Handle, Operation

    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    assert _c_plan(plan) and mod.add._memo == plan.memo
    hits = plan.stats["hits"]
    fresh = mod.add(P(z, [256]), x, y)  # the C memo: the same operation the Python path makes
    assert type(fresh) is Operation and fresh._plan is plan and plan.stats["hits"] == hits + 1
    assert fresh._ptrs == [z.data_ptr(), x.data_ptr(), y.data_ptr()]
    assert all(a is b for a, b in zip(fresh._objs, (z, x, y), strict=True))
    assert fresh._scalars == [] and fresh._runs == 0 and fresh._args is None
    assert fresh._host_list is None and fresh._region_list is None and fresh._wrapped is None
    n, syncs, version = _count(fake.lib, "n_launch"), _count(fake.lib, "n_sync"), z._version
    fake.current["raw"] = 0x99
    h = fresh.launch()
    assert type(h) is Handle and h.operation is fresh and not h.done and h._raw == 0x99
    assert h._writeback == () and engines._PENDING[h._token] is fresh and in_flight() == 1
    assert _count(fake.lib, "n_launch") == n + 1 and _last(fake.lib)[8] == 0x99
    assert list(plan.launcher._own[0]) == fresh._ptrs and z._version > version
    h.wait()
    h.wait()  # waiting twice is fine
    assert in_flight() == 0 and h.done and _count(fake.lib, "n_sync") == syncs + 1
    assert _last(fake.lib)[11] == 0x99  # waited on the stream it ran on
    fake.current["raw"] = 0
    assert fresh.sync() is None and _count(fake.lib, "n_launch") == n + 2 and in_flight() == 0


def test_the_c_memo_serves_no_call_the_key_tells_apart(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    assert _c_plan(plan)
    short = [_aligned(500) for _ in range(3)]
    other = mod.add(P(short[0], [256]), short[1], short[2])  # another shape: another plan
    assert other._plan is not plan and other._plan.bound.grid == (2,)
    other._runs = 1
    tiled = mod.add(P(z, [128]), x, y)  # another tile: another plan, another B
    assert tiled._plan is not plan and tiled.generics == {"B": 128}
    tiled._runs = 1
    with pytest.raises(tilelang.CallError, match=r"E0502|f32|float32"):
        mod.add(P(z, [256]), x.double(), y)  # another dtype: refused by the checked path
    with pytest.raises(tilelang.CallError, match="contiguous"):
        mod.add(P(z, [256]), torch.zeros(2000)[::2], y)  # other strides
    with pytest.raises(tilelang.BorrowError, match="E0303"):
        mod.add(P(z, [256]), z, y)  # the call's own arrays overlap, one written
    with pytest.raises(tilelang.CallError, match="meta"):
        mod.add(P(z, [256]), torch.zeros(1000, device="meta"), y)  # another device
    with pytest.raises(tilelang.BorrowError, match="E0301"):
        mod.add(z, x, y)  # a tensor where a partition is due
    grad = _aligned(1000).requires_grad_(True)
    g = mod.add(P(z, [256]), grad.detach(), y)  # the memo's guard, the key agree: same plan
    assert g._plan is plan
    g._runs = 1
    # a tensor reshaped after its operation was made: the launch refuses it
    own = torch.zeros(1000)
    mod.add(P(own, [256]), x, y).sync()
    made = mod.add(P(own, [256]), x, y)
    own.resize_(2000)
    with pytest.raises(tilelang.CallError, match="another shape"):
        made.sync()
    assert in_flight() == 0


def test_an_in_flight_borrow_is_checked_by_the_c_launch(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    assert _c_plan(op._plan)
    h = mod.add(P(z, [256]), x, y).launch()
    n = _count(fake.lib, "n_launch")
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        mod.add(P(x, [256]), z, y).launch()  # reads `z`, which the launch in flight writes
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        mod.add(P(z, [256]), y, x).sync()  # writes `z` again
    w = _aligned(1000)
    h2 = mod.add(P(w, [256]), x, y).launch()  # both read `x`, `y`: allowed (the general path)
    assert in_flight() == 2 and _count(fake.lib, "n_launch") == n + 1
    h.wait()
    h2.wait()
    assert in_flight() == 0


UNUSED = """
kernel fn pick<const B: i32>(z: &mut Tensor<f32, [B]>, w: &Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z));
}
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, a: f32, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * a);
}
"""


def test_the_c_launch_writes_each_address_into_its_kernel_parameter(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(UNUSED)
    z, w, x = _aligned(1000), _aligned(1000), _aligned(1000)
    for _ in range(2):
        op = mod.pick(P(z, [256]), w, x)
        op.sync()
    plan = op._plan
    assert _c_plan(plan)
    mod.pick(P(z, [256]), w, x).sync()
    # the launched block holds, per pointer parameter of the lowered kernel, its array's address
    names = [p.name for p in plan.prepared.params]
    want = {"z": z.data_ptr(), "w": w.data_ptr(), "x": x.data_ptr()}
    got = list(plan.launcher._own[0])
    assert got == [want[names[j]] for j in plan.launcher._ptr_args]
    w2 = _aligned(1000)
    mod.pick(P(z, [256]), w2, x).sync()  # a new address for the unread one: written too
    assert list(plan.launcher._own[0]) == [
        {**want, "w": w2.data_ptr()}[names[j]] for j in plan.launcher._ptr_args
    ]


def test_numbers_keep_their_checks_behind_the_c_memo(fake) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    mod = tilelang.compile(UNUSED)
    z, x = _aligned(1000), _aligned(1000)
    for _ in range(2):
        mod.scale(P(z, [256]), 2.0, x).sync()
    op = mod.scale(P(z, [256]), 2.5, x)
    plan = op._plan
    memo = plan.memo
    assert type(memo.__self__).__name__ == "FastPlan"  # the memo in C; its numbers in Python
    assert op._scalars == [np.float32(2.5)] and type(op._scalars[0]) is np.float32
    op._runs = 1
    with pytest.raises(tilelang.CallError, match="f32"):
        mod.scale(P(z, [256]), 1e300, x)  # out of f32's range: the number's check still runs
    with pytest.raises(tilelang.CallError):
        mod.scale(P(z, [256]), "2", x)  # another type: the key path refuses it
    assert in_flight() == 0


def test_the_c_path_keeps_no_reference_it_should_not(fake) -> None:  # type: ignore[no-untyped-def]
    import gc
    import sys

    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    assert _c_plan(plan)
    for _ in range(3):  # warm: the stream object, the token counter
        mod.add(P(z, [256]), x, y).launch().wait()
    gc.collect()
    before = [sys.getrefcount(o) for o in (x, y, z, plan, plan.stats, fake.dev)]
    for _ in range(200):
        mod.add(P(z, [256]), x, y).launch().wait()
        mod.add(P(z, [256]), x, y).sync()
        op.launch().wait()
    gc.collect()
    assert [sys.getrefcount(o) for o in (x, y, z, plan, plan.stats, fake.dev)] == before
    assert in_flight() == 0


def test_without_the_c_plan_the_generated_python_launch_makes_the_same_checks(
    fake, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from tilelang.api import operation

    monkeypatch.setattr(operation, "_native_memo", lambda plan, nat: None)
    mod = tilelang.compile(SOURCE)
    op, x, y, z = _ready(mod)
    plan = op._plan
    assert not _c_plan(plan) and plan.fast_launch is not None
    assert type(plan.fast_launch).__name__ == "function"
    n = _count(fake.lib, "n_launch")
    h = mod.add(P(z, [256]), x, y).launch()
    assert in_flight() == 1 and _count(fake.lib, "n_launch") == n + 1
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        op.launch()
    h.wait()
    assert in_flight() == 0


def test_the_profiler_holds_the_stream_from_its_start_event_to_its_end_event(fake) -> None:  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SOURCE)
    op, *_ = _ready(mod)
    n = _count(fake.lib, "n_launch")
    with tilelang.profile(print_table=False) as prof:
        op.sync()  # the first also records the timeline's reference event
        n += 1
        fake.dev.log.clear()
        op.sync()
        # held before the start event; the launch; the end event; then opened
        assert fake.dev.log == [("hold", n), ("event", n), ("event", n + 1), ("open", n + 1)]
        fake.dev.log.clear()
        fake.dev.capturing = True  # captured into a graph: never held (a replay would hang)
        try:
            h = op.launch()
        finally:
            fake.dev.capturing = False
        h.wait()
        assert [w for w, _ in fake.dev.log] == ["event", "event"]
        fake.dev.log.clear()
        ctypes.c_int.in_dll(fake.lib, "fail_with").value = 999  # refused: the general path
        try:
            with pytest.raises(tilelang.ExecutionError):
                op.sync()
        finally:
            ctypes.c_int.in_dll(fake.lib, "fail_with").value = 0
        # opened before the general path ran, which may wait for the stream
        assert [w for w, _ in fake.dev.log][:3] == ["hold", "event", "open"]
    assert len(prof.records) == 3 and all(r.seconds > 0 for r in prof.records)
    assert in_flight() == 0


def test_kernel_call_and_launch_become_c_methods_that_fall_back_to_python(fake) -> None:  # type: ignore[no-untyped-def]
    import inspect

    from tilelang.api import operation
    from tilelang.api.kernel import Kernel
    from tilelang.api.operation import Handle, Operation

    mod = tilelang.compile(SOURCE)
    signature = inspect.signature(mod.add)
    op, x, y, z = _ready(mod)
    assert type(Kernel.__dict__["__call__"]).__name__ == "method_descriptor"
    assert type(Operation.__dict__["launch"]).__name__ == "method_descriptor"
    assert operation._PY_METHODS["call"].__name__ == "__call__"  # the Python ones, kept
    assert inspect.signature(mod.add) == signature
    fresh = mod.add(P(z, [256]), x, y)  # the C `__call__` and the C memo
    assert type(fresh) is Operation and fresh._plan is op._plan and fresh._runs == 0
    h = fresh.launch()  # the C `launch`
    assert type(h) is Handle and fresh._runs == 1 and in_flight() == 1
    with pytest.raises(tilelang.BorrowError, match="E0309"):
        fresh.launch()  # refused by the C path before anything ran; the Python one words it
    assert fresh._runs == 2 and in_flight() == 1
    h.wait()
    by_name = mod.add(z=P(z, [256]), x=x, y=y)  # keywords: the Python method's checked path
    assert by_name.generics == {"B": 256} and by_name._objs[0] is z
    by_name._runs = 1
    with tilelang.graph() as g:  # recording: the Python method records, nothing runs
        n = _count(fake.lib, "n_launch")
        rec = mod.add(P(z, [256]), x, y)
        rh = rec.launch()
        assert rh.done and _count(fake.lib, "n_launch") == n and rec._runs == 1
    del g
    with pytest.raises(TypeError):
        mod.add(P(z, [256]), x)  # a missing argument: the Python method reports it
    assert in_flight() == 0


def test_the_c_finalisers_keep_the_warnings_and_the_wait_of_a_dropped_handle(fake) -> None:  # type: ignore[no-untyped-def]
    import gc

    from tilelang.api.operation import Handle, Operation

    mod = tilelang.compile(SOURCE)
    _, x, y, z = _ready(mod)
    assert type(Operation.__dict__["__del__"]).__name__ == "method_descriptor"
    assert type(Handle.__dict__["__del__"]).__name__ == "method_descriptor"
    with pytest.warns(RuntimeWarning, match="never run"):
        mod.add(P(z, [256]), x, y)  # built, dropped: a forgotten `.sync()`
        gc.collect()
    syncs = _count(fake.lib, "n_sync")
    with pytest.warns(ResourceWarning, match="dropped without"):
        mod.add(P(z, [256]), x, y).launch()  # dropped while in flight: waited for now
        gc.collect()
    assert in_flight() == 0 and _count(fake.lib, "n_sync") == syncs + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod.add(P(z, [256]), x, y).launch().wait()  # ran and waited: nothing to say
        mod.add(P(z, [256]), x, y).sync()
        gc.collect()


NUMBERS = """
kernel fn mix<const B: i32>(z: &mut Tensor<f32, [B]>, a: f32, k: i32, on: bool, x: &Tensor<f32, [?]>, w: f64) {
    let t = x.load_like(z) * a + (k as f32) + (w as f32);
    z.store(where(on, t, t * 0.0));
}
"""


def test_a_kernel_with_numbers_launches_in_c_with_each_number_in_its_cell(fake) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from tilelang.runtime.cuda_driver import CTYPES

    mod = tilelang.compile(NUMBERS)
    z, x = _aligned(1000), _aligned(1000)
    for _ in range(3):
        mod.mix(P(z, [256]), 1.5, 7, True, x, 0.25).sync()
    op = mod.mix(P(z, [256]), 2.5, -3, False, x, 1e300)
    plan = op._plan
    assert _c_plan(plan)  # numbers too: the launch is the C path's
    n = _count(fake.lib, "n_launch")
    op.sync()
    assert _count(fake.lib, "n_launch") == n + 1 and fake.dev.runs == 1  # only the first ran generally
    params = plan.prepared.params
    slots = (ctypes.c_void_p * len(params)).from_address(_last(fake.lib)[9])
    got = {}
    for p, address in zip(params, slots, strict=True):
        kind = "ptr" if p.name in ("z", "x") else p.value.type.dtype.value
        got[p.name] = CTYPES[kind].from_address(address).value
    assert got == {"z": z.data_ptr(), "a": 2.5, "k": -3, "on": 0, "x": x.data_ptr(), "w": 1e300}
    assert np.float32(got["a"]) == np.float32(2.5)
    # the Python path's cells hold the same values for the same numbers (its own launch)
    fl = plan.launcher
    assert fl([z.data_ptr(), *op._scalars[:3], x.data_ptr(), op._scalars[3]], "s", None)
    python_cells = {
        p.name: fl.packed.values[i].value for i, p in enumerate(params) if p.name not in ("z", "x")
    }
    assert python_cells == {k: v for k, v in got.items() if k not in ("z", "x")}
    assert in_flight() == 0
