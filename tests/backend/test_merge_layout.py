"""The split merge's layout (`std::attention::decode_combine`): with 16
shares or more its partial outputs, loaded [1, NS * G, DC] and summed over
the NS shares, take `layout_assign.warps_on_last_dim` (the warps along DC
before the lanes), so the sum over the shares stays in each warp, and the
log-sum-exps are an [NS, G] tile every warp holds whole; with fewer, the
[NS, G, 1] form (one barrier); and `convert` drops the original of a
broadcast it made again in another layout, so nothing moves a value no one
reads. Checked on the GPU IR and the PTX (barriers), and run in `llsim`
against the interpreter where the shares do not fill NS and a share saw no
key."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang.backend import emit_ptx, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import Blocked
from tilelang.backend.gpu.passes.layout_assign import reshape_blocked, warps_on_last_dim
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

STD = tilelang.compile("use std::attention::decode_combine;\n")
G, D = 4, 128


def test_warps_on_the_last_dim() -> None:
    lay = warps_on_last_dim((16, 4, 16), 128, 4)
    assert lay == Blocked((1, 1, 4), (8, 4, 1), (1, 1, 4), (2, 1, 0))
    # a [1, NS * G, DC] load reshaped to it moves nothing: lanes on G then NS, warps on DC
    assert reshape_blocked((16, 4, 16), (1, 64, 16), lay) is not None
    assert warps_on_last_dim((32, 4, 8), 128, 4) is None  # 8 columns: two 16-byte vectors, not four warps
    assert warps_on_last_dim((4, 4, 64), 128, 4) == Blocked((1, 1, 4), (2, 4, 4), (1, 1, 4), (2, 1, 0))


def _merge(ns: int, dc: int, splits: int, rows: int = 2):  # type: ignore[no-untyped-def]
    f32, bf = DType.F32, DType.parse("bf16")
    params = [("o", bf, (rows, G, D), (1, G, dc)), ("o_part", f32, (rows, splits * G, D), None),
              ("lse_part", f32, (rows, splits * G), None)]
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    kir = lower_kernel(STD._program, "decode_combine", {"T": bf, "G": G, "NS": ns, "DC": dc},
                       {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
    return kir, facts


def test_the_merge_sums_the_shares_inside_each_warp(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """16 shares, DC = 16 (batch 1, 8,192 positions on the H200): the sum over
    the shares reads a layout with one warp along them (shuffles), and the
    kernel has 3 barriers (the log-sum-exps' load and the weights' move into
    the partials' layout); with the rule off the warps lay along the shares
    and the sums crossed them through shared memory (5)."""
    kir, facts = _merge(16, 16, 16)
    gk = lower_gpu(kir, "sm_90a", facts)
    sums = [op for op in g.walk(gk.body) if isinstance(op, ir.Reduce) and op.x.shape == (16, G, 16)]
    assert len(sums) == 1 and gk.layouts[sums[0].x.id].warps_per_cta[0] == 1
    assert emit_ptx(kir, "sm_90a", facts).count("bar.sync") == 3
    monkeypatch.setenv("TILEC_WARPS_ON_COLUMNS", "0")
    off = lower_gpu(kir, "sm_90a", facts)
    sums = [op for op in g.walk(off.body) if isinstance(op, ir.Reduce) and op.x.shape == (16, G, 16)]
    assert off.layouts[sums[0].x.id].warps_per_cta[0] > 1
    assert emit_ptx(kir, "sm_90a", facts).count("bar.sync") > 3


@pytest.mark.parametrize(("ns", "dc", "bars"), [(32, 8, 3), (8, 32, 1), (4, 64, 1)])
def test_the_merge_barriers_by_shares(ns: int, dc: int, bars: int) -> None:
    """32 shares (B=1 32k): the [NS, G] form, 3 barriers; 8 and 4 (B=4, B=8): the [NS, G, 1] form, 1."""
    kir, facts = _merge(ns, dc, ns)
    assert emit_ptx(kir, "sm_90a", facts).count("bar.sync") == bars


@pytest.mark.parametrize(("ns", "dc"), [(16, 16), (32, 8), (4, 64), (8, 32)])
def test_convert_leaves_no_unread_broadcast(ns: int, dc: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    kir, facts = _merge(ns, dc, ns)

    def unread(gk: g.GpuKernel) -> int:
        read = {v.id for op in g.walk(gk.body) for v in g.operands(op)}
        return sum(op.result.id not in read for op in g.walk(gk.body) if isinstance(op, ir.Broadcast))

    assert unread(lower_gpu(kir, "sm_90a", facts)) == 0
    if ns == 16:  # the weights' broadcast made again in the partials' layout: its original, unread, stays when off
        monkeypatch.setenv("TILEC_DROP_DEAD_BROADCASTS", "0")
        assert unread(lower_gpu(kir, "sm_90a", facts)) == 1


# (NS, DC, splits): batch 1 at 8,192 and 32,768 positions, batch 8, batch 4; 5 shares of NS = 8 (padded)
@pytest.mark.parametrize(("ns", "dc", "splits"), [(16, 16, 16), (32, 8, 32), (4, 64, 4), (8, 32, 5)])
def test_the_merge_in_the_simulator(ns: int, dc: int, splits: int) -> None:
    rng = np.random.default_rng(ns + dc)
    rows = 2
    o_part = rng.standard_normal((rows, splits * G, D)).astype(np.float32)
    lse = (rng.standard_normal((rows, splits * G)) * 3).astype(np.float32)
    lse[1, G:2 * G] = -1.0e30  # row 1's share 1 saw no key: weight 0
    o = np.full((rows, G, D), np.nan, np.float32).astype(np.float16)
    op = STD.decode_combine["f16", G, ns, dc](tilelang.partition(o, [1, G, dc]), o_part, lse)
    sim = [np.array(h) for h in op._hosts]
    SimDevice("sm_90a").run(op._plan.kir, (rows, 1, D // dc), op._kernel_args(sim))
    op.sync()
    want = op._hosts[0]
    w = np.exp2(lse.reshape(rows, splits, G) - lse.reshape(rows, splits, G).max(1, keepdims=True))
    ref = (w[..., None] * o_part.reshape(rows, splits, G, D)).sum(1) / w.sum(1)[..., None]
    np.testing.assert_allclose(want.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(sim[0].astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
