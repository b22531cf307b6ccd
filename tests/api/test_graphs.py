"""`tilelang.graph()` on the CPU interpreter and on a fake CUDA device that
captures: recording runs nothing, replays run the recording in order, the
borrow rules hold at every replay, a moved tensor is never replayed on its
old memory, and on a capturing device one capture serves every replay."""

from __future__ import annotations

import ctypes
import gc
import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tilelang
from tilelang.api import in_flight, module
from tilelang.runtime.cpu import CpuDevice

P = tilelang.partition

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32) {
    z.store(x.load_like(z) * a);
}
"""


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE)


@pytest.fixture(autouse=True)
def _nothing_left_in_flight():  # type: ignore[no-untyped-def]
    yield
    assert in_flight() == 0


def _vecs(n: int = 2000) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(1)
    return (
        *(rng.standard_normal(n).astype(np.float32) for _ in range(3)),
        np.zeros(n, np.float32),
        np.zeros(n, np.float32),
    )


def test_recording_runs_nothing_and_replay_runs_in_order(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, h, z = _vecs()
    with tilelang.graph() as g:
        mod.scale(P(h, [512]), x, 2.0).sync()  # h = 2x
        handle = mod.add(P(z, [512]), h, y).launch()  # z = h + y, reads what the first wrote
        handle.wait()
    assert handle.done and in_flight() == 0
    assert not h.any() and not z.any()  # nothing ran
    assert [op.kernel.__name__ for op in g.operations] == ["scale", "add"]
    g.replay()
    np.testing.assert_array_equal(h, 2 * x)
    np.testing.assert_array_equal(z, 2 * x + y)
    x[:] = 1  # the host updates a captured input between replays
    g.replay()
    np.testing.assert_array_equal(z, 2 + y)
    assert g.replays == 2


def test_a_refused_replay_runs_nothing(mod) -> None:  # type: ignore[no-untyped-def]
    # hrev round 9: on the CPU a replay ran its operations one by one, each
    # checking its own NumPy arrays as it started: one given other memory in
    # place refused the second operation after the first had written `h`
    x, y, _, h, z = _vecs()
    with tilelang.graph() as g:
        mod.scale(P(h, [512]), x, 2.0).sync()
        mod.add(P(z, [512]), h, y).sync()
    y.resize(4000, refcheck=False)  # the second operation's input, other memory
    with pytest.raises(tilelang.CallError, match=r"E0810.*`y` of kernel `add` has other memory"):
        g.replay()
    assert not h.any() and not z.any()


def _ping_pong(mod, x, y, h, z):  # type: ignore[no-untyped-def]
    """A recording whose runs depend on the last: h = 2 z, then z = h + y
    (z after k runs from 0: (2^k - 1) y)."""
    with tilelang.graph() as g:
        mod.scale(P(h, [512]), z, 2.0).sync()
        mod.add(P(z, [512]), h, y).sync()
    return g


def test_replay_times_runs_the_recording_that_many_times_in_order(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, h, z = _vecs()
    g = _ping_pong(mod, x, y, h, z)
    g.replay(times=3)
    np.testing.assert_allclose(z, 7 * y, rtol=1e-6)  # three runs, each after the last
    assert g.replays == 3 and g._on_host is True  # the interpreter: operation by operation
    g.replay(times=1)
    g.replay()
    np.testing.assert_allclose(z, 31 * y, rtol=1e-6)
    assert g.replays == 5


@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "3", None])
def test_replay_times_must_be_a_positive_count(mod, bad) -> None:  # type: ignore[no-untyped-def]
    x, y, _, h, z = _vecs()
    g = _ping_pong(mod, x, y, h, z)
    with pytest.raises(tilelang.CallError, match="positive int"):
        g.replay(times=bad)
    assert not z.any() and g.replays == 0  # refused before anything ran


def test_replay_times_checks_borrows_once_before_any_run(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, h, z = _vecs()
    g = _ping_pong(mod, x, y, h, z)
    pending = mod.scale(P(y, [512]), x, 3.0).launch()  # writes y, which the graph reads
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        g.replay(times=4)
    assert not z.any() and not h.any()
    pending.wait()
    g.replay(times=2)
    np.testing.assert_allclose(z, 3 * (3 * x), rtol=1e-6)


def test_operations_built_outside_the_block_are_recorded_when_run(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, _, z = _vecs()
    op = mod.add(P(z, [512]), x, y)
    with tilelang.graph() as g:
        op.launch()
        op.sync()
    assert g.operations == [op, op] and not z.any()
    g.replay()
    np.testing.assert_array_equal(z, x + y)


def test_replay_checks_borrows_in_flight(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, _, z = _vecs()
    with tilelang.graph() as g:
        mod.add(P(z, [512]), x, y).sync()
    pending = mod.scale(P(x, [512]), y, 3.0).launch()  # writes x, which the graph reads
    with pytest.raises(tilelang.BorrowError, match="E0305"):
        g.replay()
    assert not z.any()  # refused before anything ran
    pending.wait()
    g.replay()
    np.testing.assert_array_equal(z, 3 * y + y)


def test_misuse_is_reported(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, _, z = _vecs()
    with tilelang.graph() as g:
        with pytest.raises(tilelang.CallError, match="already being recorded"), tilelang.graph():
            pass
        with pytest.raises(tilelang.CallError, match="while it is being recorded"):
            g.replay()
        mod.add(P(z, [512]), x, y).sync()
    with pytest.raises(tilelang.CallError, match="recorded already"), g:
        pass
    g.replay()
    np.testing.assert_array_equal(z, x + y)
    empty = tilelang.graph()
    with empty:
        pass
    empty.replay()
    assert empty.replays == 1


def test_a_host_function_in_the_block_is_refused_not_run_once() -> None:
    # It ran at once: `total` read `z` before the recorded `inc` had run (0
    # where the block reads as 8), and `bump`'s launch ran once, at the
    # recording, and was never replayed (Tile's `graph { .. }`: E0228).
    m = tilelang.compile(
        "kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load() + 1.0); }\n"
        "fn total(t: &Tensor<f32, [?]>) -> f32 { t.sum() }\n"
        "fn bump(z: &mut Tensor<f32, [?]>) { inc(z.partition([4])).sync(); }\n")
    z = np.zeros(8, np.float32)
    with tilelang.graph() as g:
        m.inc(P(z, [4])).sync()
        for call in (lambda: m.total(z), lambda: m.bump(z)):
            with pytest.raises(tilelang.CallError, match=r"E0228.*host function `(total|bump)` runs at "
                               r"once(.|\n)*help: call it before or after the block"):
                call()
    assert not z.any() and len(g.operations) == 1
    g.replay()
    assert m.total(z) == 8.0  # outside the block it runs
    t = threading.Thread(target=lambda: m.bump(z))
    with tilelang.graph():  # another thread is not recording
        t.start()
        t.join()
    np.testing.assert_array_equal(z, 2.0)


def test_a_torch_operator_in_the_block_is_refused_not_recorded() -> None:
    # hrev10: an operator of `tilelang.torch_op` returns its results to PyTorch at once; in the
    # block its kernel call was recorded instead (not run): PyTorch got `torch.empty`'s memory for
    # an `outputs=` result, and the replays wrote a tensor it had already used. The operator's
    # check (without PyTorch here; tests/api/test_torch_ops.py runs the operator itself).
    from tilelang.api.torch_ops import _check_not_recording

    with tilelang.graph():
        with pytest.raises(tilelang.CallError, match=r"E0228.*PyTorch operator `tile::k` runs at once"
                           r"(.|\n)*help: call the kernel itself in the block"):
            _check_not_recording("tile::k")
        t = threading.Thread(target=lambda: _check_not_recording("tile::k"))  # not recording
        t.start()
        t.join()
    _check_not_recording("tile::k")  # outside the block


def test_other_threads_run_while_one_records(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, a, _, z = _vecs()
    out = np.zeros_like(a)
    with tilelang.graph() as g:
        t = threading.Thread(target=lambda: mod.add(P(out, [512]), a, y).sync())
        t.start()
        t.join()
        mod.add(P(z, [512]), x, y).sync()
    np.testing.assert_array_equal(out, a + y)  # ran at once, not recorded
    assert len(g.operations) == 1


def test_the_graph_keeps_its_arrays_alive(mod) -> None:  # type: ignore[no-untyped-def]
    x, y, _, _, _ = _vecs()
    z = np.zeros(2000, np.float32)
    with tilelang.graph() as g:
        mod.add(P(z, [512]), x, y).sync()
    del z  # (a temporary made in the call is E0313: its results could not be read)
    gc.collect()
    g.replay()  # the output is still alive: the graph holds it
    np.testing.assert_array_equal(g.operations[0]._objs[0], x + y)


# ---------------------------------------------------------------- a capturing device
class CapturingDevice(CpuDevice):
    """A fake CUDA device over host memory that captures: launches on a
    capturing stream are kept and run again by `replay`."""

    name = "fake-cuda"
    kind = "gpu"

    def __init__(self) -> None:
        super().__init__()
        self.ctx = SimpleNamespace(make_current=lambda: None)
        self.capturing: dict[int, list[Any]] = {}
        self.captures = 0
        self.replayed = 0
        self.runs = 0

    def wrap_external(
        self, ptr: int, shape: tuple[int, ...], np_dtype: Any, nbytes: int
    ) -> np.ndarray:
        raw = (ctypes.c_char * max(nbytes, 1)).from_address(ptr)
        return np.frombuffer(raw, dtype=np.uint8)[:nbytes].view(np_dtype).reshape(shape)

    def foreign_stream(self, handle: int) -> object:
        return ("stream", handle)

    def new_stream(self) -> object:
        return object()

    def sync_foreign(self, stream: object) -> None:
        pass

    def run(self, prepared, grid, args, stream=None, span=None) -> None:  # type: ignore[no-untyped-def]
        if id(stream) in self.capturing:
            self.capturing[id(stream)].append((prepared, grid, list(args)))
            return
        self.runs += 1
        super().run(prepared, grid, args, stream, span)

    def capture(self, stream: Any) -> None:
        self.capturing[id(stream)] = []

    def end_capture(self, stream: Any) -> Any:
        self.captures += 1
        return self.capturing.pop(id(stream))

    def replay(self, graph: Any, stream: Any = None) -> None:
        self.replayed += 1
        for prepared, grid, args in graph:
            super().run(prepared, grid, args)


class FakeCudaArray:
    def __init__(self, host: np.ndarray) -> None:
        self.host = host

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        h = self.host
        return {
            "shape": h.shape,
            "typestr": h.dtype.str,
            "data": (h.ctypes.data, False),
            "strides": None,
            "version": 3,
        }


def test_a_capturing_device_captures_once_and_replays_the_capture(monkeypatch, mod) -> None:  # type: ignore[no-untyped-def]
    dev = CapturingDevice()
    monkeypatch.setitem(module._DEVICES, "cuda:0", dev)
    x, y, _, h, z = _vecs()
    cx, cy, ch, cz = (FakeCudaArray(a) for a in (x, y, h, z))
    with tilelang.graph() as g:
        mod.scale(P(ch, [512]), cx, 2.0).sync()
        mod.add(P(cz, [512]), ch, cy).sync()
    assert dev.runs == 0
    g.replay()
    g.replay()
    assert (
        dev.captures == 1 and dev.replayed == 2 and dev.runs == 0
    )  # nothing ran outside the graph
    np.testing.assert_array_equal(z, 2 * x + y)
    g.replay(times=3)  # the capture launched three times, no new capture
    assert dev.captures == 1 and dev.replayed == 5 and dev.runs == 0 and g.replays == 5
    assert g._on_host is False  # decided at the first replay, not by walking the operations each time
    np.testing.assert_array_equal(z, 2 * x + y)
    with pytest.raises(tilelang.CallError, match="one device"), tilelang.graph():
        mod.add(P(cz, [512]), cx, cy).sync()
        mod.add(P(z, [512]), x, y).sync()


def test_a_torch_tensor_with_new_memory_is_not_replayed() -> None:
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SOURCE)
    x, y, z = torch.randn(100), torch.randn(100), torch.zeros(100)
    with tilelang.graph() as g:
        mod.add(P(z, [64]), x, y).sync()
    g.replay()
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    x.set_(torch.ones(100).untyped_storage())  # the graph recorded x's old memory
    with pytest.raises(tilelang.CallError, match="other memory"):
        g.replay()
    op = mod.add(P(z, [64]), x, y)
    z.resize_(50)
    with pytest.raises(tilelang.CallError, match="another shape"):
        op.sync()


def test_a_replay_bumps_the_versions_of_written_torch_tensors_only() -> None:
    """Autograd must see that a replay wrote `z` (as after one operation's
    run), and not `x`/`y`, which the kernels only read; the tensors are
    gathered once per graph, however many operations use them."""
    torch = pytest.importorskip("torch")
    mod = tilelang.compile(SOURCE)
    x, y, z = torch.randn(100), torch.randn(100), torch.zeros(100)
    with tilelang.graph() as g:
        mod.add(P(z, [64]), x, y).sync()
        mod.add(P(z, [64]), x, y).sync()
    vx, vy, vz = x._version, y._version, z._version
    g.replay()
    assert (x._version, y._version) == (vx, vy)
    assert z._version > vz
    v1 = z._version
    g.replay()
    assert z._version > v1
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
