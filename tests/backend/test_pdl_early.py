"""`#[hints(pdl_early = ..)]`: under programmatic dependent launch the kernel
triggers its dependents (`griddepcontrol.launch_dependents`) before its own
`griddepcontrol.wait`, once, and nowhere else; without the hint (or with a
const generic of 0) the target's trigger place holds; without PDL there is
no `griddepcontrol` at all. The flag is in the kernel's IR text (the
compile-cache key). No GPU needed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tilelang
from tilelang.backend import compile_kernel
from tilelang.backend.target import Target, ptxas_available, run_ptxas
from tilelang.ir.printer import print_kernel

SRC = """
#[hints(num_warps = 4, pdl_early = E)]
kernel fn merge<const B: i32, const E: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>,
                                            w: &Tensor<f32, [?, ?]>) {
    let pw = w.partition([B, B]);
    let mut acc = zeros::<f32>([B]);
    for k in 0..pw.num_tiles(1) {
        acc = acc + (pw.load([block_id(0), k]) * x.partition([B]).load([k]).reshape([1, B])).sum(1);
    }
    z.store(acc);
}
"""
WAIT, TRIGGER = "griddepcontrol.wait;", "griddepcontrol.launch_dependents;"


def _kir(e: int):  # type: ignore[no-untyped-def]
    mod = tilelang.compile(SRC, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # built, never run
        out = np.zeros(64, np.float32)  # (a temporary made in the call is E0313)
        op = mod.merge[32, e](tilelang.partition(out, [32]), np.zeros(64, np.float32),
                              np.zeros((64, 64), np.float32))  # fmt: skip
        op.discard()
    return op._plan.kir


def _body(ptx: str) -> str:
    return ptx[ptx.index(".entry"):]


@pytest.mark.parametrize("prefetch", [False, "bulk"])
def test_early_triggers_before_the_wait(prefetch) -> None:  # type: ignore[no-untyped-def]
    k1, k0 = _kir(1), _kir(0)
    assert k1.pdl_early and not k0.pdl_early
    assert "pdl_early" in print_kernel(k1) and "pdl_early" not in print_kernel(k0)
    tgt = Target("sm_90a", pdl=True, pdl_prefetch=prefetch)
    early, late = _body(compile_kernel(k1, tgt).ptx), _body(compile_kernel(k0, tgt).ptx)
    assert early.count(TRIGGER) == 1 and early.count(WAIT) == 1
    assert early.index(TRIGGER) < early.index(WAIT) < early.index("ld.global")
    # the default ("late"): after the loop's loads, before the store
    assert late.count(TRIGGER) == 1 and late.index(WAIT) < late.index("ld.global") < late.index(TRIGGER)
    if prefetch:  # the early trigger comes first, then the prefetches, then the wait
        assert early.index(TRIGGER) < early.index("cp.async.bulk.prefetch.L2") < early.index(WAIT)
    plain = compile_kernel(k1, Target("sm_90a")).ptx
    assert "griddepcontrol" not in plain
    if ptxas_available():
        r = run_ptxas(compile_kernel(k1, tgt).ptx, "sm_90a")
        assert r.returncode == 0, r.stderr


def test_two_triggers_at_the_main_loops_last_iteration() -> None:
    """`pdl_early = 2`: this kernel alone takes the target's "last" trigger (the
    loop's last iteration, after its wait), whatever the launch's trigger
    place but "entry"; it is not `pdl_early` (the runtime's "+loads" rule:
    the trigger comes after the wait)."""
    k2, k0 = _kir(2), _kir(0)
    assert k2.pdl_last and not k2.pdl_early and not k0.pdl_last
    assert "pdl_last" in print_kernel(k2) and "pdl_last" not in print_kernel(k0)
    for trigger in ("late", "exit"):
        ptx = compile_kernel(k2, Target("sm_90a", pdl=True, pdl_trigger=trigger)).ptx
        # the same code as the target's "last" for the kernel without the hint
        last = compile_kernel(k0, Target("sm_90a", pdl=True, pdl_trigger="last")).ptx
        assert _body(ptx) == _body(last)
        body = _body(ptx)
        assert body.count(TRIGGER) == 1 and body.count(WAIT) == 1
        assert body.index(WAIT) < body.index(TRIGGER)
        # inside the loop: a load of the loop's body after it, the store after that
        assert body.index(TRIGGER) < body.rindex("ld.global") < body.index("st.global")
    late = _body(compile_kernel(k0, Target("sm_90a", pdl=True)).ptx)
    assert late.rindex("ld.global") < late.index(TRIGGER)  # the default: after the loop
    entry = _body(compile_kernel(k2, Target("sm_90a", pdl=True, pdl_trigger="entry")).ptx)
    assert entry.index(TRIGGER) < entry.index("ld.global")  # "entry" stays the earlier place
    assert "griddepcontrol" not in compile_kernel(k2, Target("sm_90a")).ptx
    if ptxas_available():
        r = run_ptxas(compile_kernel(k2, Target("sm_90a", pdl=True)).ptx, "sm_90a")
        assert r.returncode == 0, r.stderr


def test_an_instance_whose_pdl_early_means_nothing_is_refused() -> None:
    """`pdl_early` is 0, 1, 2 or 3: a const generic of 4 gets its own error at the instance (it once meant "at
    entry", as every positive value did before 2 took the last iteration and 3 the exit)."""
    from tilelang.diagnostics.model import TileError

    with pytest.raises(TileError) as e:
        _kir(4)
    d = e.value.diagnostics[0]
    text = " ".join((d.message, *d.help))
    assert "`pdl_early` is 4" in text and "0 (not early), 1 (trigger at entry), 2" in text and "3 (at exit)" in text


def test_three_never_triggers_so_the_next_grid_starts_at_exit() -> None:
    """`pdl_early = 3`: this kernel alone never triggers its dependents (the
    target's "exit": the next grid is scheduled once its blocks have all
    exited), under the "late" and "last" trigger places; it still waits for
    its predecessor before its loads; "entry" stays the earlier place; it is
    neither `pdl_early` nor `pdl_last` (the runtime's "+loads" rule holds)."""
    k3, k0 = _kir(3), _kir(0)
    assert k3.pdl_exit and not k3.pdl_early and not k3.pdl_last and not k0.pdl_exit
    assert "pdl_exit" in print_kernel(k3) and "pdl_exit" not in print_kernel(k0)
    for trigger in ("late", "last"):
        body = _body(compile_kernel(k3, Target("sm_90a", pdl=True, pdl_trigger=trigger)).ptx)
        assert TRIGGER not in body and body.count(WAIT) == 1 and body.index(WAIT) < body.index("ld.global")
        # the kernel without the hint triggers there
        assert TRIGGER in _body(compile_kernel(k0, Target("sm_90a", pdl=True, pdl_trigger=trigger)).ptx)
    entry = _body(compile_kernel(k3, Target("sm_90a", pdl=True, pdl_trigger="entry")).ptx)
    assert entry.index(TRIGGER) < entry.index("ld.global")
    if ptxas_available():
        r = run_ptxas(compile_kernel(k3, Target("sm_90a", pdl=True)).ptx, "sm_90a")
        assert r.returncode == 0, r.stderr
