"""`#[hints(arrive_wait)]` (`codegen/arrive.py`, `_emit_waiting`): in `if
last_block(axis)`, the group's block of the largest index runs the region
after polling the group's counter until the others are in; the others add to
it with a release and leave. The same values as the default arrival: the
simulator of the NVPTX IR (`llsim`, blocks in the grid's order, every group
counter checked back at 0) against the interpreter, the PTX of both forms,
and the hint in the IR's text (the compile cache's key)."""

from __future__ import annotations

import numpy as np
from llsim import SimDevice

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.llvm import emit_llvm_text
from tilelang.ir.printer import print_kernel

P = tilelang.partition

# each block (r, c) stores r * 10 + c + x[r, c]; the last block of row r (group
# along axis 1) sums its row's parts (the region may not depend on which block
# runs it, E0410: so the hint can change no value)
SRC = """
#[hints(arrive_wait = W)]
kernel fn row_sum<const C: i32, const W: i32>(part: &mut Tensor<f32, [1, 1]>, out: &mut Tensor<f32, [1, 1]>,
                                              x: &Tensor<f32, [?, ?]>) {
    let r = block_id(0);
    let c = block_id(1);
    part.store(x.partition([1, 1]).load([r, c]) + ((r * 10 + c) as f32));
    if last_block(1) {
        out.store(part.group().partition([1, C]).load([0, 0]).sum(1).reshape([1, 1]));
    }
}
"""


def _op(w: int, x: np.ndarray):  # type: ignore[no-untyped-def]
    k = tilelang.compile(SRC)
    rows, cols = x.shape
    part = np.zeros((rows, cols), np.float32)
    out = np.zeros((rows, 1), np.float32)
    op = k.row_sum[cols, w](P(part, [1, 1]), P(out, [1, 1]), x)
    return op


def _simulate(op, grid):  # type: ignore[no-untyped-def]
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(op._plan.kir, grid, op._kernel_args(copies))
    return copies


def _llvm(op) -> str:  # type: ignore[no-untyped-def]
    gk = lower_gpu(op._plan.kir, "sm_90a", None)
    op.discard()  # built to be compiled, never run
    return emit_llvm_text(gk, gk.facts)[0]


def test_the_waiting_arrival_gives_the_default_s_values_in_the_simulator() -> None:
    # 3 groups of 5: both forms in llsim agree with the interpreter (the sums
    # of every part: the region ran once a group, after every store) and leave
    # every counter at 0 (llsim's own check)
    x = np.arange(15, dtype=np.float32).reshape(3, 5) / 4
    want = x.sum(1) + np.arange(3) * 50 + 10
    for w in (0, 1):
        op = _op(w, x)
        got = _simulate(op, (3, 5))
        op.sync()
        for out in (got[1], op._hosts[1]):
            np.testing.assert_allclose(out[:, 0], want, rtol=1e-6)


def test_the_waiting_arrival_signals_with_a_release_and_polls_with_acquires() -> None:
    x = np.ones((2, 4), np.float32)
    wait, plain = _llvm(_op(1, x)), _llvm(_op(0, x))
    assert "atom.acq_rel.gpu.global.add.u32" in plain and "red.release" not in plain
    assert "atom.acq_rel" not in wait
    assert wait.count('"red.release.gpu.global.add.u32 [$0], 1;"') == 1
    assert wait.count('"ld.acquire.gpu.global.u32 $0, [$1];"') == 1
    assert wait.count('"st.relaxed.gpu.global.u32 [$0], 0;"') == 1  # the waiter zeroes the counter
    texts = []
    for w in (1, 0):
        op = _op(w, x)
        texts.append(print_kernel(op._plan.kir))
        op.discard()
    assert "arrive_wait" in texts[0] and "arrive_wait" not in texts[1]
