"""The register budget (`backend/codegen/budget.py`): a tile that would put more
than `MAX_SLOTS_PER_THREAD` elements in each thread is refused with E0603 at
the op that makes it, before any LLVM text is emitted (such a kernel once
took minutes to emit and optimise, and hung an autotuner's GPU test), and
the count agrees with the code generator's own view of each layout."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import tilelang
from tilelang.backend import CodegenError, compile_kernel, lower_gpu
from tilelang.backend.codegen.budget import MAX_SLOTS_PER_THREAD, slots_per_thread
from tilelang.backend.codegen.views import view_of
from tilelang.backend.gpu import layouts as L

# 4 warps named: without the hint the backend takes more warps for a big tile (`lift.default_warps`)
ROWSUM = """
#[hints(num_warps = 4)]
kernel fn rowsum<const BR: i32, const BC: i32>(out: &mut Tensor<f32, [BR]>, x: &Tensor<f32, [?, ?]>) {
    let px = x.partition([BR, BC]);
    let mut acc = zeros::<f32>([BR]);
    for j in 0..px.num_tiles(1) {
        acc = acc + px.load([block_id(0), j]).sum(1);
    }
    out.store(acc);
}
"""


def _rowsum_ir(br: int, bc: int):  # type: ignore[no-untyped-def]
    mod = tilelang.compile(ROWSUM, device="cpu")
    out = np.zeros(512, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # built, never run
        op = mod.rowsum[br, bc](tilelang.partition(out, [br]), np.zeros((512, 300), np.float32))
        op._runs = 1
    return op._plan.kir


def test_an_oversized_tile_is_refused_before_emission() -> None:
    kir = _rowsum_ir(1024, 1024)  # 2^20 elements: within the language's limit
    t0 = time.process_time()  # CPU time: a loaded machine's waits are not the compiler's
    with pytest.raises(CodegenError) as e:
        compile_kernel(kir, "sm_90")
    assert time.process_time() - t0 < 5  # was minutes of emission and LLVM (~0.01 s now)
    d = e.value.diag
    assert d.code == "E0603"
    assert (
        "1024x1024" in d.message and "8192 elements in each of the block's 128 threads" in d.message
    )
    span = d.primary_span
    assert span is not None and span.file is not None  # located at the op in the source
    assert any("num_warps" in h for h in d.help)


def test_a_tile_within_the_budget_compiles() -> None:
    ck = compile_kernel(_rowsum_ir(16, 64), "sm_90")
    assert ".entry" in ck.ptx


@pytest.mark.parametrize(
    "shape",
    [(16, 64), (1024, 64), (1, 2560), (7, 5), (3, 1000), (256, 256), (1024,), (1000, 3, 8)],
)
@pytest.mark.parametrize("threads", [128, 256])
def test_the_count_is_the_code_generators(shape: tuple[int, ...], threads: int) -> None:
    for lay in (
        L.blocked_for(shape, threads),
        L.blocked_for(shape, threads, warps_first=0),
        L.chunked_for(shape, threads),
    ):
        n = slots_per_thread(lay, shape, threads)
        assert n == view_of(lay, shape, threads).E, (lay, shape)
    if len(shape) > 1:  # a reduction's result: the slice of its input's layout
        parent = L.blocked_for(shape, threads)
        for dim in range(len(shape)):
            rest = shape[:dim] + shape[dim + 1 :]
            lay = L.Slice(dim, parent)
            assert slots_per_thread(lay, rest, threads) == view_of(lay, rest, threads).E


def test_every_value_of_a_kernel_is_counted() -> None:
    gk = lower_gpu(_rowsum_ir(1024, 64), "sm_90")
    from tilelang.backend.gpu.nodes import results, walk

    counts = [
        slots_per_thread(gk.layouts[v.id], v.type.shape, gk.num_warps * 32)
        for op in walk(gk.body)
        for v in results(op)
        if v.type.shape and v.id in gk.layouts
    ]
    assert max(c for c in counts if c is not None) == 512 <= MAX_SLOTS_PER_THREAD
