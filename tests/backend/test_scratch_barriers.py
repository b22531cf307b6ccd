"""Barriers around the code generator's shared-memory scratch area.

A reduction across warps writes its partials to scratch, waits at a barrier
and reads them back; before its writes it needs a barrier only when an
earlier reader of the scratch area may still be reading (`scratch_fresh` in
`codegen/core.py`). The first scratch user of a kernel, at the top level of
its body, has none: its kernels lose one barrier. Inside a loop or after any
other shared-memory user the barrier stays.

The simulator's racecheck (`llsim._Hazards`) is what makes these claims
testable without a GPU: it raises `Race` when two threads touch one byte of
shared memory with no synchronisation between them, one of them writing.
"""

from __future__ import annotations

import numpy as np
import pytest
from llsim import Program, Race, SimDevice
from row_cases import RowCase, _softmax, _write, compare, run_interp

from tilelang import driver
from tilelang.backend.codegen.core import EmitterCore

BARRIER = "call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"

# One reduction a loop iteration: its scratch buffer is written again in the
# next iteration, after the last one's reads.
LOOP_ONE_REDUCTION = """
#[hints(num_warps = 4)]
kernel fn k<const BM: i32, const BN: i32>(y: &mut Tensor<f32, [BM]>, x: &Tensor<f32, [?, ?]>) {
    let p = x.partition([BM, BN]);
    let i = block_id(0);
    let mut acc = zeros::<f32>([BM]);
    for j in 0..p.num_tiles(1) {
        acc = acc + p.load([i, j]).sum(1);
    }
    y.store(acc);
}
fn main() {
    let x = zeros::<f32>([6, 600]);
    let mut y = zeros::<f32>([6]);
    k::<2, 256>(y.partition([2]), &x).sync();
}
"""


def _loop_case() -> RowCase:
    return RowCase("loop_one_reduction", LOOP_ONE_REDUCTION, {"x": (6, 600)}, {"y": (6,)}, (3,), {},
                   rtol=1e-5, atol=1e-5)


class _Mutated(SimDevice):
    """A simulator that runs the emitted code after `edit` (a mutation test)."""

    def __init__(self, edit) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.edit = edit

    def compile(self, kernel, facts=None):  # type: ignore[no-untyped-def]
        from tilelang.backend import lower_gpu
        from tilelang.backend.llvm import emit_llvm_text

        gk = lower_gpu(kernel, self.arch, facts)
        text, abi = emit_llvm_text(gk, gk.facts)
        return Program(self.edit(text)), abi, gk


def _run(case: RowCase, sim: SimDevice, seed: int = 0) -> None:
    k = case.kernel()
    args = case.args(np.random.default_rng(seed), k)
    want = run_interp(k, case, args)
    got = [a.copy() for a in args]
    sim.run(k, case.grid, got)
    compare(case, k, want, got)


def _emitted(case: RowCase) -> str:
    from tilelang.backend import lower_gpu
    from tilelang.backend.llvm import emit_llvm_text

    gk = lower_gpu(case.kernel(), "sm_90a", None)
    return emit_llvm_text(gk, gk.facts)[0]


def test_the_first_reduction_writes_scratch_before_any_barrier() -> None:
    text = _emitted(_softmax(8, 1000, 1, 8))
    # two reductions (max, sum) across 8 warps: one barrier each, none before the first writes
    assert text.count(BARRIER) == 2
    first_store = text.index("store float")  # the max partials (nothing else stores f32 to shared first)
    assert "addrspace(3)" in text[first_store:text.index("\n", first_store)]
    assert first_store < text.index(BARRIER)


def test_racecheck_passes_the_emitted_softmax() -> None:
    _run(_softmax(5, 300, 1, 4), SimDevice())
    _run(_softmax(6, 130, 2, 4), SimDevice(), seed=1)


def test_racecheck_catches_a_missing_barrier() -> None:
    """Drop the barrier between the max partials' writes and reads: a race."""
    case = _softmax(3, 300, 1, 4)
    with pytest.raises(Race, match="no barrier between them"):
        _run(case, _Mutated(lambda t: t.replace(BARRIER, "", 1)))


def test_a_reduction_in_a_loop_keeps_its_barrier() -> None:
    case = _loop_case()
    text = _emitted(case)
    # the reduction runs every iteration: a barrier before its writes and one before its reads
    assert text.count(BARRIER) == 2, text.count(BARRIER)
    _run(case, SimDevice())
    _run(case, SimDevice(), seed=3)


def test_without_the_loop_rule_the_racecheck_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """If every scratch writer counted as the first use, a reduction in a loop
    would overwrite partials the last iteration's slower warps still read."""
    monkeypatch.setattr(EmitterCore, "scratch_fresh", lambda self: True)
    with pytest.raises(Race):
        _run(_loop_case(), SimDevice())


def test_after_a_branch_that_used_scratch_the_barrier_stays() -> None:
    src = """
#[hints(num_warps = 4)]
kernel fn k<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    let s = if block_id(0) % 2 == 0 { t.max(1) } else { t.min(1) };
    y.store(t - s.reshape([BM, 1]) + t.sum(1).reshape([BM, 1]));
}
fn main() {
    let x = zeros::<f32>([4, 300]);
    let mut y = zeros::<f32>([4, 300]);
    k(y.partition([1, 300]), &x).sync();
}
"""
    case = RowCase("branch_then_sum", src, {"x": (4, 300)}, {"y": (4, 300)}, (4, 1), {}, rtol=1e-5, atol=1e-5)
    text = _emitted(case)
    # each branch's reduction (inside a region) and the sum after it: a barrier before and after the writes
    assert text.count(BARRIER) == 6
    _run(case, SimDevice())
    _run(case, SimDevice(), seed=2)


def test_the_kernel_compiles_for_the_gpu_path() -> None:
    """The PTX of the row softmax carries one barrier fewer (2) and assembles."""
    path = _write("softmax_ptx", _softmax(8, 2560, 1, 8).source)
    r = driver.compile(path, "ptx", options=driver.Options(kernel="k", arch="sm_90a"))
    assert r.ok, r.diagnostics
    ptx = driver.format_output("ptx", r)
    assert ptx.count("bar.sync") == 2
