"""`#[hints(min_blocks = ..)]`: the blocks an SM must hold at once, as
CUDA's `__launch_bounds__` minimum. The backend writes `.minnctapersm` (what
ptxas budgets registers by: without it, a loop keeps only a few of its loads
ahead of their uses), bounded by the threads an SM has; the value, literal
or a const generic, is part of the kernel's IR text (the compile-cache key)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from ptxas_report import assemble

import tilelang
from tilelang.backend import compile_kernel
from tilelang.backend.target import ptxas_available
from tilelang.ir.printer import print_kernel

GEMV = """
#[hints(num_warps = WARPS, min_blocks = MB)]
kernel fn gemv<const BN: i32, const BK: i32, const MB: i32>(y: &mut Tensor<f32, [BN]>,
                                                           w: &Tensor<bf16, [?, ?]>,
                                                           x: &Tensor<f32, [?]>) {
    let pw = w.partition([BN, BK]);
    let px = x.partition([BK]);
    let mut acc = zeros::<f32>([BN]);
    for k in 0..pw.num_tiles(1) {
        acc = acc + ((pw.load([block_id(0), k]) as f32) * px.load([k]).reshape([1, BK])).sum(1);
    }
    y.store(acc);
}
"""


def _kir(mb: int, warps: int = 8, bk: int = 2048):  # type: ignore[no-untyped-def]
    mod = tilelang.compile(GEMV.replace("WARPS", str(warps)), device="cpu")
    y = np.zeros(64, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # built, never run
        op = mod.gemv[8, bk, mb](tilelang.partition(y, [8]), np.zeros((64, 4096), np.float32),
                                 np.zeros(4096, np.float32))  # fmt: skip
        op._runs = 1
    return op._plan.kir


def _minncta(ptx: str) -> int | None:
    m = re.search(r"\.minnctapersm (\d+)", ptx)
    return int(m.group(1)) if m else None


def test_the_generic_sets_the_bound_and_the_key() -> None:
    k3, k0 = _kir(3), _kir(0)
    assert k3.min_blocks == 3 and k0.min_blocks == 0
    assert "min_blocks 3" in print_kernel(k3) and "min_blocks" not in print_kernel(k0)
    assert _minncta(compile_kernel(k3, "sm_90a").ptx) == 3
    assert _minncta(compile_kernel(k0, "sm_90a").ptx) is None  # 0: no bound


def test_the_bound_is_what_the_threads_of_an_sm_allow() -> None:
    # 16 blocks of 256 threads never fit in the 2,048 threads of an SM: 8
    assert _minncta(compile_kernel(_kir(16), "sm_90a").ptx) == 8
    assert _minncta(compile_kernel(_kir(16, warps=32), "sm_90a").ptx) == 2


@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
def test_ptxas_budgets_registers_by_it() -> None:
    def regs(mb: int) -> int:
        return assemble(compile_kernel(_kir(mb), "sm_90a").ptx, "sm_90a").max_registers

    # 3 blocks of 256 threads: at most 85 registers; 8 blocks: at most 32
    assert regs(3) <= 85 and regs(8) <= 32 < regs(3)
