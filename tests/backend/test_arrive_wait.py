"""`#[hints(arrive_wait)]` (`codegen/arrive.py`, `_emit_waiting`): in `if
last_block(axis)`, the group's block of the largest index runs the region
after polling the group's counter until the others are in; the others add to
it with a release and leave. The same values as the default arrival: the
simulator of the NVPTX IR (`llsim`, blocks in the grid's order, every group
counter checked back at 0) against the interpreter, the PTX of both forms,
and the hint in the IR's text (the compile cache's key)."""

from __future__ import annotations

import numpy as np
import pytest
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


# An FMA GEMM of few tiles (2 on a card of 8 multiprocessors): the runtime picks the split-K variant (`fma_split`:
# CTAs walking pieces of tiles, `GpuKernel.persistent`) where the kernel may walk
SPLIT = """
#[hints(arrive_wait = AW)]
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(PARAMS, a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
    if last_block(0) {
        tot.store(c.group().partition([32, BN]).load([0, 0]).sum(0).reshape([1, BN]));
    }
}

fn main() {
    let a = (randn::<f32>([32, 256], 1) * 4.0) as i32 as f32;
    let b = (randn::<f32>([256, 16], 2) * 4.0) as i32 as f32;
    let mut c = zeros::<f32>([32, 16]);
    let mut tot = zeros::<f32>([1, 16]);
    g::<16, 16, 16>(ARGS, &a, &b).sync();
    g::<16, 16, 16>(ARGS, &a, &b).sync();
}
"""
C, TOT = "c: &mut Tensor<f32, [BM, BN]>", "tot: &mut Tensor<f32, [1, BN]>"
CA, TA = "c.partition([16, 16])", "tot.partition([1, 16])"


@pytest.mark.parametrize(("aw", "group_first"), [(1, False), (0, True)])
def test_a_last_block_kernel_walks_nothing(aw: int, group_first: bool, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """hrev22: the FMA GEMM's split-K walk (the runtime's pick for a launch of few tiles) took kernels with an
    `if last_block(axis)` region. Its grid is the largest `&mut` partition's, the first of equal rank: with the
    group's tile (one along the axis) first, the walk computed that axis's first tiles only (llsim: `c`'s second
    row of tiles zeros, `tot` wrong, without a word). And `arrive_wait`'s waiting form elects its block by
    `%ctaid`, the block index only where a CTA runs one block: a CTA of the last `%ctaid` waited for every tile
    it merged, the others left without the region, the group counter stayed non-zero (on a card a CTA could
    wait for an item it runs itself later). Such a kernel walks nothing (`gemm_persistent.walkable`), and the
    waiting form is never taken in a kernel that walks (`arrive.emit_last_block`); llsim on 8 multiprocessors
    gives the interpreter's tensors."""
    import io

    import llsim
    import tilelang.run as run
    from tilelang.backend.gpu.passes import fma_split

    taken: list[str] = []
    real = fma_split.mode
    monkeypatch.setattr(fma_split, "mode", lambda *a: taken.append(real(*a)) or taken[-1])
    params, args = (f"{TOT}, {C}", f"{TA}, {CA}") if group_first else (f"{C}, {TOT}", f"{CA}, {TA}")
    f = tmp_path / "g.tile"
    f.write_text(SPLIT.replace("PARAMS", params).replace("ARGS", args).replace("AW", str(aw))
                 .replace("#[hints(arrive_wait = 0)]\n", ""), encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    want = {k: np.array(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_80", sms=8))
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    for k, w in want.items():
        np.testing.assert_array_equal(np.array(ex.main_locals[k].numpy()), w, err_msg=k)
    assert taken and "split" not in taken, taken


def test_a_waiting_arrival_keeps_the_grid_s_order(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """hrev22: `block_order` launches a 2-D tensor-core kernel's blocks in grouped order (L2 reuse: `block_id`
    read from the launch position through a bijection), and the waiting arrival elects the block whose `%ctaid`
    along the axis is the group's last: with 9 x 2 blocks (past `GROUP_M`), some groups had no such block and
    some two, which poll for one arrival too many (llsim: "a block polls a counter the group's other blocks
    never complete"; a card hangs). A kernel with the waiting arrival keeps the grid's order (the waiter last in
    its group, as the hint's dispatch argument needs); without the hint the kernel is grouped as before."""
    import io

    import llsim
    import tilelang.run as run

    src = SPLIT.replace("PARAMS", f"{C}, {TOT}").replace("ARGS", "c.partition([16, 16]), tot.partition([1, 16])")
    src = (src.replace("AW", "1").replace("f32, [?, ?]>", "f16, [?, ?]>").replace("as i32 as f32;", "as i32 as f32 as f16;")
           .replace("[32, 256]", "[144, 16]").replace("[256, 16]", "[16, 32]").replace("[32, 16]", "[144, 32]")
           .replace("[1, 16]);", "[1, 32]);").replace("partition([32, BN])", "partition([144, BN])"))
    f = tmp_path / "g.tile"
    f.write_text(src, encoding="utf-8")
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    want = {k: np.array(v.numpy()) for k, v in ex.main_locals.items() if hasattr(v, "numpy")}
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_80"))
    ex = run.execute(str(f), "cpu", out=io.StringIO())
    for k, w in want.items():
        np.testing.assert_array_equal(np.array(ex.main_locals[k].numpy()), w, err_msg=k)
    from tilelang import driver
    from tilelang.backend import lower_gpu

    for aw, grouped in ((1, False), (0, True)):
        text_src = src if aw else src.replace("#[hints(arrive_wait = 1)]\n", "")
        k = next(x for x in driver.compile(text_src, "ir").output if x.name == "g")
        text = str(lower_gpu(k, "sm_80", None).body)
        assert ("launch_x" in text) == grouped, aw
