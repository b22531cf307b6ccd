"""`#[hints(max_blocks = N)]`: at most N blocks of a kernel on an SM, by the
shared memory each launch asks for (`runtime/occupancy.py`). The arithmetic
against the hardware's rule (blocks = the carveout over each block's share,
the carveout rounded up to one of the SM's configurations), the driver calls
through a stand-in driver that applies that rule, the hint through the
language (IR text, ABI, errors, the tuner), and on a GPU the driver's own
occupancy calculator and the result against the interpreter."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import tilelang
from tilelang.backend import compile_kernel
from tilelang.diagnostics.model import TileError
from tilelang.ir.printer import print_kernel
from tilelang.runtime import occupancy
from tilelang.runtime.occupancy import CARVEOUTS_KB, GRANULE, SmLimits, plan
from tilelang.tuner.space import hinted_fields

H200 = SmLimits(smem=228 * 1024, reserved=1024, threads=2048, blocks=32, cc=(9, 0))
A100 = SmLimits(smem=164 * 1024, reserved=1024, threads=2048, blocks=32, cc=(8, 0))


def _config(sm: SmLimits, pct: int, table: tuple[int, ...] | None = None) -> int:
    """The carveout (bytes) the hardware takes for a preferred `pct`: the
    smallest configuration that holds pct % of the SM's shared memory."""
    want = sm.smem * pct / 100
    kb = table if table is not None else CARVEOUTS_KB[sm.cc]
    return min(c * 1024 for c in kb if c * 1024 >= want)


def _blocks(sm: SmLimits, carve: int, threads: int, smem: int) -> int:
    share = -(-(smem + sm.reserved) // GRANULE) * GRANULE
    return min(sm.threads // threads, sm.blocks, carve // share)


@pytest.mark.parametrize("sm", [H200, A100], ids=["sm_90", "sm_80"])
@pytest.mark.parametrize("threads", [128, 256, 512])
@pytest.mark.parametrize("smem", [0, 64, 4096, 20000])
def test_the_plan_holds_exactly_n_blocks(sm: SmLimits, threads: int, smem: int) -> None:
    for n in range(1, sm.threads // threads):
        p = plan(n, threads, smem, sm)
        if p is None:  # the kernel's own shared memory already holds it to n or fewer
            assert _blocks(sm, sm.smem, threads, smem) <= n
            continue
        assert p.smem >= smem and 1 <= p.carveout <= 100
        carve = _config(sm, p.carveout)
        got = _blocks(sm, carve, threads, p.smem)
        if got != n:  # only where the kernel's own memory leaves no room for n
            assert n * (smem + sm.reserved) > sm.smem and got < n, (n, threads, smem, p, carve, got)
        # no smaller configuration (of at least MIN_CARVEOUT) holds n blocks and
        # not n + 1: the L1 keeps the rest
        assert carve >= occupancy.MIN_CARVEOUT
        need = smem + sm.reserved
        for c in (c * 1024 for c in CARVEOUTS_KB[sm.cc] if occupancy.MIN_CARVEOUT <= c * 1024 < carve):
            assert not any(c // s == n for s in range(-(-need // GRANULE) * GRANULE, c + 1, GRANULE)), (n, c)


def test_no_plan_where_the_threads_already_bound_it() -> None:
    assert plan(8, 256, 64, H200) is None  # 2048 threads: 8 blocks of 256 at most anyway
    assert plan(2, 1024, 0, H200) is None
    assert plan(0, 256, 0, H200) is None  # 0: no bound
    assert plan(7, 256, 64, H200) is not None


def test_an_unknown_card_gets_a_share_of_all_its_memory() -> None:
    sm = SmLimits(smem=100 * 1024, reserved=1024, threads=1536, blocks=16, cc=(12, 0))
    p = plan(3, 128, 0, sm)
    assert p is not None and p.carveout == 100
    assert _blocks(sm, sm.smem, 128, p.smem) == 3


class _Driver:
    """The driver calls `occupancy.apply` makes, answering by the hardware's
    rule for `sm` with the configuration table `table`."""

    def __init__(self, sm: SmLimits, table: tuple[int, ...] | None = None, refuse: bool = False) -> None:
        self.sm, self.table, self.refuse = sm, table, refuse
        self.carveout = -1
        self.max_dynamic = 48 * 1024
        a = SimpleNamespace(
            CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR="smem",
            CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK="reserved",
            CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR="threads",
            CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR="blocks")
        self.CUdevice_attribute = a
        self.CUfunction_attribute = SimpleNamespace(
            CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT="carveout",
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="max_dynamic")

    def cuDeviceGetAttribute(self, what: str, dev: Any) -> tuple[int, int]:
        return 0, getattr(self.sm, what)

    def cuFuncSetAttribute(self, fn: Any, what: str, value: int) -> tuple[int]:
        if self.refuse:
            return (1,)
        setattr(self, what, value)
        return (0,)

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, fn: Any, threads: int, smem: int) -> tuple[int, int]:
        if smem > self.max_dynamic:
            return 0, 0
        carve = self.sm.smem if self.carveout < 0 else _config(self.sm, self.carveout, self.table)
        return 0, _blocks(self.sm, carve, threads, smem)


def _ctx(drv: _Driver) -> Any:
    return SimpleNamespace(d=drv, dev=0, info=SimpleNamespace(major=drv.sm.cc[0], minor=drv.sm.cc[1]))


def _fn(drv: _Driver) -> Any:
    """A loaded function of the runtime (`cuda.Function`) over the stand-in driver."""
    from tilelang.runtime.cuda import Function

    return Function(_ctx(drv), "fn", "k")


def test_apply_sets_the_carveout_and_checks_the_driver() -> None:
    drv = _Driver(H200)
    smem, got = occupancy.apply(_ctx(drv), _fn(drv), 5, 256, 64)  # type: ignore[misc]
    assert got == 5 and smem >= 64
    assert _config(H200, drv.carveout) < H200.smem  # not all of it: L1 keeps the rest


def test_apply_pads_further_when_the_card_has_other_configurations() -> None:
    # a card whose configurations the table does not know: the carveout rounds
    # up further than planned, more blocks would fit; the second try takes all
    # of the SM's memory as the carveout, each block a quarter of it (over the
    # 48 KB a launch may ask for without raising the function's limit)
    drv = _Driver(H200, table=(0, 100, 228))
    smem, got = occupancy.apply(_ctx(drv), _fn(drv), 4, 256, 64)  # type: ignore[misc]
    assert got == 4 and drv.carveout == 100 and smem > 48 * 1024 and drv.max_dynamic == smem


def test_apply_says_why_when_the_driver_refuses() -> None:
    drv = _Driver(H200, refuse=True)
    out = occupancy.apply(_ctx(drv), _fn(drv), 5, 256, 64)
    assert isinstance(out, str) and "carveout" in out


def test_apply_leaves_a_kernel_the_threads_already_bound() -> None:
    drv = _Driver(H200)
    assert occupancy.apply(_ctx(drv), _fn(drv), 8, 256, 64) == (64, 8)  # type: ignore[arg-type]
    assert drv.carveout == -1


# ---------------------------------------------------------------- the hint in the language
SRC = """
#[hints(num_warps = 8, max_blocks = MB)]
kernel fn softmax_rows<const N: i32, const MB: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, ?]>) {
    let t = x.partition([1, N]).load([block_id(0), 0]);
    let e = (t - t.max(1).reshape([1, 1])).exp();
    y.store(e / e.sum(1).reshape([1, 1]));
}
"""


def _kir(mb: int, n: int = 2560) -> Any:
    mod = tilelang.compile(SRC, device="cpu")
    y = np.zeros((4, n), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # built, never run
        op = mod.softmax_rows[n, mb](tilelang.partition(y, [1, n]), np.zeros((4, n), np.float32))
        op._runs = 1
    return op._plan.kir


def test_the_generic_sets_the_bound_the_text_and_the_abi() -> None:
    k5, k0 = _kir(5), _kir(0)
    assert k5.max_blocks == 5 and k0.max_blocks == 0
    assert "max_blocks 5" in print_kernel(k5) and "max_blocks" not in print_kernel(k0)
    assert compile_kernel(k5, "sm_90a").abi.max_blocks == 5
    assert compile_kernel(k0, "sm_90a").abi.max_blocks == 0
    # the PTX is the same: the bound is the launch's
    assert compile_kernel(k5, "sm_90a").ptx == compile_kernel(k0, "sm_90a").ptx


def test_a_generic_bound_below_min_blocks_is_an_error() -> None:
    src = SRC.replace("max_blocks = MB", "min_blocks = 4, max_blocks = MB")
    mod = tilelang.compile(src, device="cpu")
    y = np.zeros((4, 256), np.float32)
    with pytest.raises(TileError) as e:
        mod.softmax_rows[256, 2](tilelang.partition(y, [1, 256]), np.zeros((4, 256), np.float32)).sync()
    text = str(e.value)
    assert "max_blocks = 2" in text and "min_blocks = 4" in text


@pytest.mark.parametrize("hint", ["max_blocks", "min_blocks", "pdl_early"])
def test_a_negative_hint_from_a_generic_is_an_error(hint: str) -> None:
    # sema takes positive literals only; a const generic's value is known at a
    # launch, where a negative one was read as "no hint" (`stages` keeps that
    # reading: std::llm's GEMVs pass ST = -1 for a peeled first step)
    src = SRC.replace("max_blocks = MB", f"{hint} = MB")
    mod = tilelang.compile(src, device="cpu")
    y = np.zeros((4, 256), np.float32)
    with pytest.raises(TileError) as e:
        mod.softmax_rows[256, -3](tilelang.partition(y, [1, 256]), np.zeros((4, 256), np.float32)).sync()
    assert f"hint `{hint}` is -3 in this instance" in str(e.value)
    mod.softmax_rows[256, 0](tilelang.partition(y, [1, 256]), np.zeros((4, 256), np.float32)).sync()  # 0: none


def test_the_tuner_sets_it_as_a_hint() -> None:
    k = _kir(0)
    assert hinted_fields(k, {"max_blocks": 5, "num_warps": 8}) == {"max_blocks": 5}
    assert hinted_fields(k, {"max_blocks": 0, "stages": k.num_stages}) == {}
    src = SRC.replace("#[hints(num_warps = 8, max_blocks = MB)]", "#[autotune(max_blocks = [4, 6])]")
    tilelang.compile(src, device="cpu")  # an autotune list of it is accepted


# ---------------------------------------------------------------- on the GPU
@pytest.mark.gpu
def test_on_the_gpu_the_driver_holds_at_most_n_and_the_result_is_the_interpreters() -> None:
    n = 2560
    x = np.random.default_rng(7).standard_normal((300, n)).astype(np.float32) * 3
    ref = np.zeros_like(x)
    cpu = tilelang.compile(SRC, device="cpu")
    cpu.softmax_rows[n, 3](tilelang.partition(ref, [1, n]), x).sync()
    gpu = tilelang.compile(SRC, device="gpu")
    for mb in (3, 5, 0):
        y = np.full_like(x, np.nan)
        op = gpu.softmax_rows[n, mb](tilelang.partition(y, [1, n]), x)
        op.sync()
        np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-7)
        abi, fn = next(iter(op._plan.prepared.variants.values()))
        got = occupancy.resident(fn.ctx.d, fn.handle, abi.num_threads, abi.smem_bytes)
        if mb:
            assert abi.max_blocks == mb and 1 <= got <= mb, (mb, got, abi.smem_bytes)
            assert abi.smem_bytes > 64
        else:
            assert got > 3 and abi.smem_bytes < 1024  # unbounded: the threads' or registers' bound
    assert math.isfinite(float(ref.sum()))
