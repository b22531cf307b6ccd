"""Reshapes that split or merge dims, in registers (`layout_assign.reshape_blocked`,
`fold_reps`, `codegen/views.reshape_register_map`), conversions of loop-invariant
values placed before the loop (`convert`), and products summed right away
contracted to FMAs. The layout algebra is checked against the code
generator's thread-by-thread map; a kernel that splits its rows per warp runs
in `llsim` against the interpreter."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from llsim import SimDevice

from tilelang import driver
from tilelang.backend import emit_llvm, lower_gpu
from tilelang.backend.codegen.views import reshape_register_map, view_of
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.layouts import Blocked, blocked_for
from tilelang.backend.gpu.passes.layout_assign import fold_reps, reshape_blocked
from tilelang.backend.gpu.printer import print_gpu_kernel


def test_splitting_rows_keeps_each_element_in_its_thread() -> None:
    load = Blocked((1, 1, 8), (1, 2, 16), (1, 4, 1), (2, 1, 0))  # a [1, 64, 128] bf16 load's layout
    # rows split [64] -> [4, 16]: lanes, warps and repetitions stay where they were
    split = reshape_blocked((1, 64, 128), (4, 16, 128), load)
    assert split == Blocked((1, 1, 8), (1, 2, 16), (1, 4, 1), (2, 1, 0))
    # the layout a per-warp [W, R, D] tile wants (warps on dim 0) has repetitions
    # below the warps: no blocked layout of [1, 64, 128] holds it ...
    want = blocked_for((4, 16, 128), 128, 2, warps_first=0)
    assert want.warps_per_cta == (4, 1, 1) and reshape_blocked((4, 16, 128), (1, 64, 128), want) is None
    # ... unless each thread's rows of a warp are one run (its repetitions folded)
    folded = fold_reps(want, (4, 16, 128))
    assert folded.size_per_thread == (1, 8, 8)
    assert reshape_blocked((4, 16, 128), (1, 64, 128), folded) == Blocked((1, 8, 8), (1, 2, 16), (1, 4, 1),
                                                                          (2, 1, 0))
    # not powers of two, replicas or a product that differs: no plan
    assert reshape_blocked((1, 48, 128), (4, 12, 128), load) is None
    assert reshape_blocked((1, 64, 128), (4, 16, 64), load) is None
    assert reshape_blocked((1, 2, 8), (2, 8), Blocked((1, 1, 8), (1, 2, 16), (1, 4, 1), (2, 1, 0))) is None


def test_a_split_into_lane_groups_keeps_the_unsplit_layout() -> None:
    # [1, 64, 128] rows split [W, L, R, D] = [4, 2, 8, 128] (decode's lane groups):
    # neither the result's default nor its folded form is a layout of the input
    # (their lanes sit on the inner dim R, below registers), so the pass takes the
    # input's folded default read in the result's shape: each thread's 8 rows a
    # run (R in registers), the lane bit on L, warps on W
    xs, rs = (1, 64, 128), (4, 2, 8, 128)
    for cand in (blocked_for(rs, 128, 2, warps_first=0), fold_reps(blocked_for(rs, 128, 2, warps_first=0), rs)):
        assert reshape_blocked(rs, xs, cand) is None
    lx = fold_reps(blocked_for(xs, 128, 2, warps_first=0), xs)
    assert lx == Blocked((1, 8, 8), (1, 2, 16), (1, 4, 1), (2, 1, 0))
    assert reshape_blocked(xs, rs, lx) == Blocked((1, 1, 8, 8), (1, 2, 1, 16), (4, 1, 1, 1), (3, 2, 1, 0))
    result = driver.compile("""
kernel fn groups(o: &mut Tensor<f32, [8, 128]>, x: &Tensor<bf16, [?, 128]>) {
    let t = x.partition([64, 128]).load([0, 0]).reshape([4, 2, 8, 128]) as f32;
    o.store((t.sum(2).reshape([4, 2, 1, 128]) + t.sum(3).sum(2).reshape([4, 2, 1, 1])).reshape([8, 128]));
}
""", "ir", options=driver.Options(kernel="groups"))
    assert result.ok, result.diagnostics
    text = print_gpu_kernel(lower_gpu(result.output[0], "sm_90a"))
    assert "-> bf16[4, 2, 8, 128] #blocked<spt=[1, 1, 8, 8], tpw=[1, 2, 1, 16], wpc=[4, 1, 1, 1]" in text


SHAPES = [((64, 128), (4, 16, 128)), ((1, 32, 64), (4, 8, 64)), ((8, 4, 32), (32, 32)),
          ((32, 16), (512,)), ((2, 64, 16), (2, 8, 8, 16)), ((128, 8), (4, 32, 8))]


@pytest.mark.parametrize(("xs", "rs"), SHAPES, ids=[f"{a}-{b}" for a, b in SHAPES])
def test_the_algebra_agrees_with_the_register_map(xs, rs) -> None:  # type: ignore[no-untyped-def]
    """Wherever `reshape_blocked` plans a layout, every thread holds the same
    elements before and after (the code generator's brute-force map finds each
    one in the same slot for all threads); both directions."""
    planned = 0
    for itemsize, warps_first, fold in itertools.product((2, 4), (None, 0), (False, True)):
        for a, b in ((xs, rs), (rs, xs)):
            lay = blocked_for(a, 128, itemsize, warps_first=warps_first)
            if fold:
                lay = fold_reps(lay, a)
            got = reshape_blocked(a, b, lay)
            if got is None:
                continue
            planned += 1
            m = reshape_register_map(view_of(lay, a, 128, itemsize), view_of(got, b, 128, itemsize))
            assert m is not None, (a, b, lay, got)
            assert sorted(m) == list(range(len(m)))  # a permutation of the thread's registers
    assert planned > 0


SRC = """
kernel fn warp_rows<const W: i32, const R: i32, const D: i32, const G: i32>(o: &mut Tensor<f32, [1, W, G]>,
        x: &Tensor<f16, [?, ?, D]>, c: &Tensor<f32, [?, D]>, n: i32) {
    let px = x.partition([1, W * R, D]);
    // loop-invariant, laid for its own load: the loop needs it in another layout
    let q = c.partition([G, D]).load([0, 0]).reshape([1, G, D]).reshape([1, G, 1, D]);
    let mut acc = zeros::<f32>([W, G, 1]);
    for j in 0..n {
        let t = (px.load([block_id(0), j, 0]).reshape([W, R, D]) as f32).reshape([W, 1, R, D]);  // warp w: rows w*R ..
        acc = acc + (t * q).sum(3).reshape([W, G, R, 1]).sum(2);
    }
    o.store(acc.reshape([1, W, G]));
}

kernel fn dot_rows<const B: i32>(o: &mut Tensor<f32, [B]>, a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {
    let pa = a.partition([B, 32]);
    let pb = b.partition([B, 32]);
    o.store((pa.load([block_id(0), 0]) * pb.load([block_id(0), 0])).sum(1));
}

kernel fn mul_add<const B: i32>(o: &mut Tensor<f32, [B]>, a: &Tensor<f32, [?]>, b: &Tensor<f32, [?]>) {
    let x = a.load_like(o);
    o.store(x * b.load_like(o) + x);
}

fn main() {
    let x = zeros::<f16>([2, 96, 64]);
    let c = zeros::<f32>([4, 64]);
    let mut o = zeros::<f32>([2, 4, 4]);
    warp_rows::<4, 4, 64, 4>(o.partition([1, 4, 4]), &x, &c, 6).sync();
    let a = zeros::<f32>([64, 32]);
    let mut z = zeros::<f32>([64]);
    dot_rows::<16>(z.partition([16]), &a, &a).sync();
    mul_add::<64>(z.partition([64]), &z.clone(), &z.clone()).sync();
}
"""


def _kernel(name: str):  # type: ignore[no-untyped-def]
    result = driver.compile(SRC, "ir", options=driver.Options(kernel=name))
    assert result.ok, result.diagnostics
    return result.output[0]


def test_per_warp_rows_load_in_place_and_the_invariant_converts_before_the_loop() -> None:
    k = _kernel("warp_rows")
    facts = {p.name: TensorFacts.assumed(p.rank) for p in k.tensor_params}
    text = print_gpu_kernel(lower_gpu(k, "sm_90", facts))
    head, loop = text.split(" = for ", 1)
    assert "convert_layout" in head and "convert_layout" not in loop  # hoisted
    # the [1, 16, 64] load is laid for the [4, 4, 64] split: warp w holds rows 4w .. 4w + 3
    assert "load @x" in loop and "f16[1, 16, 64] #blocked<spt=[1, 1, 8], tpw=[1, 4, 8], wpc=[1, 4, 1]" in loop
    assert "-> f16[4, 4, 64] #blocked<spt=[1, 1, 8], tpw=[1, 4, 8], wpc=[4, 1, 1]" in loop


def test_per_warp_rows_run_like_the_interpreter() -> None:
    rng = np.random.default_rng(3)
    k = _kernel("warp_rows")
    x = rng.standard_normal((2, 96, 64)).astype(np.float16)
    c = rng.standard_normal((4, 64)).astype(np.float32)
    n = 6
    rows = x.astype(np.float64)[:, :n * 16].reshape(2, n, 4, 4, 64)  # [block, j, W, R, D]
    want = np.einsum("bjwrd,gd->bwg", rows, c.astype(np.float64))
    got = np.zeros((2, 4, 4), np.float32)
    SimDevice("sm_90").run(k, (2, 1, 1), [got, x, c, n])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def test_products_summed_at_once_are_fmas_and_others_are_not() -> None:
    ll = emit_llvm(_kernel("dot_rows"), "sm_90", {"o": TensorFacts.assumed(1), "a": TensorFacts.assumed(2),
                                                   "b": TensorFacts.assumed(2)})
    assert "fmul contract float" in ll and "fadd contract float" in ll
    plain = emit_llvm(_kernel("mul_add"), "sm_90", {n: TensorFacts.assumed(1) for n in "oab"})
    assert "fmul contract float" in plain and "fadd contract" not in plain  # a * b + c: two roundings


GN = """
kernel fn gn<const C: i32, const P: i32>(y: &mut Tensor<f32, [1, C, P]>, s: &mut Tensor<f32, [1, C]>,
                                         x: &Tensor<f32, [?, C, P]>) {
    let t = x.load_like(y).reshape([C, P]);
    let mean = t.sum(1).sum(0) / (C * P) as f32;
    s.store(t.sum(1).reshape([1, C]));
    y.store((t - mean).reshape([1, C, P]));
}

fn main() {
    let x = zeros::<f32>([3, 4, 2048]);
    let mut y = zeros::<f32>([3, 4, 2048]);
    let mut s = zeros::<f32>([3, 4]);
    gn::<4, 2048>(y.partition([1, 4, 2048]), s.partition([1, 4]), &x).sync();
}
"""


def test_a_unit_dim_dropped_keeps_the_rows_reduction_on_shuffles() -> None:
    """A [1, C, P] load reshaped to [C, P] (n03's GroupNorm) is the load's
    layout without its size-1 dim, not a slice of it: `t.sum(1)` then takes
    the shuffle path (one partial a warp through shared memory) instead of
    staging the whole tile and summing each row in a serial loop (4.3 ms
    against torch's 0.25 ms at [1024, 8, 4096] on an H100). Runs in llsim."""
    result = driver.compile(GN, "ir", options=driver.Options(kernel="gn"))
    assert result.ok, result.diagnostics
    k = result.output[0]
    text = print_gpu_kernel(lower_gpu(k, "sm_90a"))
    assert "axis 1 : f32[4] #slice<dim=1, #blocked<" in text, text
    assert "convert_layout" not in text
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 2048)).astype(np.float32)
    y, s = np.zeros_like(x), np.zeros((3, 4), np.float32)
    SimDevice("sm_90").run(k, (3, 1, 1), [y, s, x])
    np.testing.assert_allclose(s, x.astype(np.float64).sum(2), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(y, x - x.astype(np.float64).mean((1, 2), keepdims=True), rtol=1e-4, atol=1e-4)
