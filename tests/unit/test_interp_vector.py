"""The vectorised-over-blocks mode gives bit-identical results to the
block-by-block mode, including when control flow diverges between blocks."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.dtypes import DType
from tilelang.interp import run_kernel, vector
from tilelang.ir import nodes as ir
from tilelang.ir import samples
from tilelang.ir.lower import lower_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse


def both_modes(kernel: ir.Kernel, grid: tuple[int, ...], args: list[object]) -> list[object]:
    """Run in both modes on copies; assert every array argument ends equal."""
    outs = []
    for mode in ("block", "vector"):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        run_kernel(kernel, grid, copies, mode=mode)
        outs.append(copies)
    for a, b in zip(*outs, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return outs[1]


def rnd(*shape: int, dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_samples_agree() -> None:
    both_modes(samples.vector_add(64), (16,), [np.zeros(1000, np.float32), rnd(1000), rnd(1000, seed=1)])
    both_modes(samples.row_softmax(4, 64), (3, 1), [np.zeros((10, 50), np.float32), rnd(10, 50)])
    both_modes(samples.row_sum(8, 32), (5,), [np.zeros(37, np.float32), rnd(37, 100)])
    both_modes(samples.gemm(16, 16, 8), (3, 2), [np.zeros((40, 20), np.float32),
                                                rnd(40, 30, dtype="float16"),
                                                rnd(30, 20, dtype="float16", seed=2)])
    both_modes(samples.gemm(32, 32, 16, DType.F32, DType.F32), (4, 3),
               [np.zeros((100, 90), np.float32), rnd(100, 70), rnd(70, 90, seed=3)])
    both_modes(samples.transpose(16, 32), (5, 2), [np.zeros((70, 45), np.float32), rnd(45, 70)])
    both_modes(samples.cumsum_rows(4, 128), (12, 1), [np.zeros((45, 70), np.float32), rnd(45, 70)])
    both_modes(samples.argmax_rows(4, 128), (12,), [np.zeros(45, np.int32), rnd(45, 70)])
    x = np.random.default_rng(5).integers(-2, 18, size=1000).astype(np.int32)
    out = both_modes(samples.histogram(128, 16), (8,), [np.zeros_like(x), x, np.zeros(16, np.int32)])
    assert out[2].sum() == ((x >= 0) & (x < 16)).sum()


def program(src: str):  # type: ignore[no-untyped-def]
    sm = SourceMap()
    f = sm.add("t.tile", src)
    sink = DiagnosticSink()
    prog = check_program(parse(f, sink), sm, sink)
    assert not sink.has_errors, [d.message for d in sink.diagnostics]
    return prog


DIVERGENT = """
kernel fn branchy<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    let pid = block_id(0);
    let mut acc = zeros::<f32>([B]);
    for i in 0..pid {
        if (i + pid) % 3 == 0 {
            acc = acc + t;
        } else {
            acc = acc - 0.5;
        }
    }
    let mut v = 1.0;
    let target = t.max(0);
    while v < target {
        v = v * 2.0;
    }
    let bonus = if pid % 2 == 0 { v } else { -v };
    z.store(acc + bonus);
}
"""


@pytest.mark.parametrize("n", [1, 100, 333])
def test_divergent_control_flow_agrees(n: int) -> None:
    k = lower_kernel(program(DIVERGENT), "branchy", {"B": 16})
    x = np.abs(rnd(n)) * 50
    both_modes(k, (-(-n // 16),), [np.zeros(n, np.float32), x])


def test_masked_store_and_atomic_in_divergent_branch() -> None:
    src = """
kernel fn k<const B: i32>(z: &mut Tensor<i32, [B]>, hist: &Tensor<i32, [4]>) {
    let pid = block_id(0);
    if pid % 2 == 1 {
        z.store(zeros::<i32>([B]) + pid);
        unsafe { atomic_add(&hist, [pid % 4], 1); }
    }
}
"""
    k = lower_kernel(program(src), "k", {"B": 8})
    out = both_modes(k, (7,), [np.full(56, -1, np.int32), np.zeros(4, np.int32)])
    z = out[0].reshape(7, 8)
    assert (z[1::2] == np.arange(1, 7, 2)[:, None]).all() and (z[::2] == -1).all()
    assert out[1].tolist() == [0, 2, 0, 1]


def test_chunking_keeps_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector, "CHUNK_ELEMENTS", 64)  # 1 block of 64 per chunk
    both_modes(samples.vector_add(64), (16,), [np.zeros(1000, np.float32), rnd(1000), rnd(1000, seed=1)])
    monkeypatch.setattr(vector, "CHUNK_ELEMENTS", 200)  # 3 blocks per chunk, ragged end
    both_modes(samples.row_softmax(4, 16), (5, 1), [np.zeros((18, 16), np.float32), rnd(18, 16)])


def test_print_vectorised_in_block_order() -> None:
    from tilelang.ir.builder import Builder

    b = Builder("p")
    b.tensor_param("z", DType.I32, 1, mutable=True, tile_shape=(1,))
    pid = b.block_id(0)
    b.print_("hi ", pid)
    odd = b.elementwise(ir.ElemOp.EQ, b.elementwise(ir.ElemOp.REM, pid, b.const(2, DType.I32)),
                        b.const(1, DType.I32))
    with b.if_(odd) as br, br.then_():
        b.print_("odd ", pid, " ", b.arange(2))
        b.yield_()
    b.print_("bye")
    k = b.finish()
    want = ["hi 0", "bye", "hi 1", "odd 1 [0, 1]", "bye", "hi 2", "bye"]
    for mode in ("block", "vector"):
        lines: list[str] = []
        run_kernel(k, (3,), [np.zeros(3, np.int32)], out=lines.append, mode=mode)
        assert lines == want, mode



def test_assert_in_vector_mode_replays_the_failing_chunk_exactly() -> None:
    from tilelang.diagnostics.model import TileError
    from tilelang.ir.builder import Builder
    from tilelang.source import Span

    # Block 1 fails the FIRST assert, block 0 the SECOND one: sequentially,
    # block 0 runs (and stores, and prints) first and its second assert is
    # the error; the vector mode must report the same, leave the same memory
    # and print the same lines.
    b = Builder("a")
    b.tensor_param("z", DType.I32, 1, mutable=True, tile_shape=(2,))
    pid = b.block_id(0)
    off = b.mul(pid, b.const(2, DType.I32))
    one = b.const(1, DType.I32)
    b.assert_(b.elementwise(ir.ElemOp.NE, pid, one), "first", span=Span(0, 1, 2))
    b.store("z", (off,), b.broadcast(b.add(pid, b.const(10, DType.I32)), (2,)))
    b.print_("stored ", pid)
    b.assert_(b.elementwise(ir.ElemOp.NE, pid, b.const(0, DType.I32)), "second",
              span=Span(0, 3, 4))
    k = b.finish()
    outcomes = []
    for mode in ("block", "vector"):
        z = np.full(6, -1, np.int32)
        lines: list[str] = []
        with pytest.raises(TileError) as info:
            run_kernel(k, (3,), [z], out=lines.append, mode=mode)
        outcomes.append((info.value.diagnostics, z.tolist(), lines))
    assert outcomes[0] == outcomes[1]
    diags, z_after, lines = outcomes[1]
    assert "second" in diags[0].message and any("block (0)" in n for n in diags[0].notes)
    assert z_after == [10, 10, -1, -1, -1, -1] and lines == ["stored 0"]


def _asserting_kernel() -> ir.Kernel:
    """z[b] = b in block b, after a device assert that always holds (`b >= 0`)."""
    from tilelang.ir.builder import Builder

    b = Builder("ok")
    b.tensor_param("z", DType.I32, 1, mutable=True, tile_shape=(1,))
    pid = b.block_id(0)
    b.assert_(b.elementwise(ir.ElemOp.GE, pid, b.const(0, DType.I32)), "fine")
    b.store("z", (pid,), b.reshape(pid, (1,)))
    return b.finish()


def test_assert_passing_in_vector_mode() -> None:
    k = _asserting_kernel()
    z = np.zeros(5, np.int32)
    run_kernel(k, (5,), [z], mode="vector")
    assert z.tolist() == [0, 1, 2, 3, 4]


def test_a_kernels_body_is_walked_once_for_its_launch_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """`vector.body_facts`: one walk a kernel object gives what a launch asks (asserts, written tensors, the
    biggest value, cluster gathers, last-block and queue ops); launches of that kernel walk it no more."""
    from tilelang.interp import machine
    from tilelang.ir.builder import Builder

    b = Builder("facts")
    b.tensor_param("z", DType.I32, 1, mutable=True, tile_shape=(4,))
    pid = b.block_id(0)
    b.assert_(b.elementwise(ir.ElemOp.GE, pid, b.const(0, DType.I32)), "fine")
    b.store("z", (b.mul(pid, b.const(4, DType.I32)),), b.broadcast(pid, (4,)))
    k = b.finish()
    facts = vector.body_facts(k)
    assert facts == vector.BodyFacts(True, frozenset({"z"}), 4, False, False, None)
    assert machine.queue_axis(k) is None and not machine.has_last_block(k) and vector.written_tensors(k) == {"z"}
    walks: list[object] = []
    walk = ir.walk
    monkeypatch.setattr(ir, "walk", lambda region: walks.append(region) or walk(region))
    z = np.zeros(12, np.int32)
    for mode in ("block", "vector"):
        run_kernel(k, (3,), [z], mode=mode)
    assert walks == [] and z.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    rows = samples.row_sum(8, 32)
    assert vector.body_facts(rows).biggest == 8 * 32 and walks[0] is rows.body  # a new kernel: walked


def test_big_asserting_kernels_fall_back_to_block_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.interp import machine

    monkeypatch.setattr(vector, "SNAPSHOT_BYTES", 0)
    calls: list[object] = []
    monkeypatch.setattr(machine, "run_vectorised", lambda *a, **k: calls.append(a))
    k = _asserting_kernel()
    z = np.zeros(5, np.int32)
    run_kernel(k, (5,), [z])  # auto: the snapshot would be too big
    assert calls == [] and z.tolist() == [0, 1, 2, 3, 4]


def test_env_var_forces_a_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.interp import machine

    calls: list[object] = []
    monkeypatch.setattr(machine, "run_vectorised", lambda *a, **k: calls.append(a))
    monkeypatch.setenv("TILE_INTERP_MODE", "block")
    z = np.zeros(1000, np.float32)
    run_kernel(samples.vector_add(64), (16,), [z, rnd(1000), rnd(1000, seed=1)])
    assert calls == [] and z.any()
    monkeypatch.setenv("TILE_INTERP_MODE", "vector")
    run_kernel(samples.vector_add(64), (16,), [z, rnd(1000), rnd(1000, seed=1)])
    assert len(calls) == 1
    monkeypatch.setenv("TILE_INTERP_MODE", "fast")
    with pytest.raises(ValueError, match="TILE_INTERP_MODE='fast'.*auto, block or vector") as e:  # E0604 (hfix6)
        run_kernel(samples.vector_add(64), (16,), [z, rnd(1000), rnd(1000, seed=1)])
    assert e.value.diag.code == "E0604"  # type: ignore[attr-defined]
