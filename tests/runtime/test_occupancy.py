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
    info = SimpleNamespace(major=drv.sm.cc[0], minor=drv.sm.cc[1], max_smem_optin=drv.sm.smem - drv.sm.reserved,
                           name="a stand-in card", arch=f"sm_{drv.sm.cc[0]}{drv.sm.cc[1]}")
    return SimpleNamespace(d=drv, dev=0, info=info)


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


# ---------------------------------------------------------------- one carveout for a set of kernels
@pytest.mark.parametrize("sm", [H200, A100], ids=["sm_90", "sm_80"])
@pytest.mark.parametrize("pct", [100, 60, 15])
@pytest.mark.parametrize("threads", [128, 256])
@pytest.mark.parametrize("smem", [0, 4096, 20000])
def test_a_uniform_carveout_keeps_every_bound(sm: SmLimits, pct: int, threads: int, smem: int) -> None:
    carve = _config(sm, pct)
    assert occupancy.config_of(pct, sm) == carve
    for n in range(sm.threads // threads + 1):
        p = occupancy.uniform(pct, n, threads, smem, sm)
        if smem + sm.reserved > carve:  # one block does not fit: refused, never a larger carveout
            assert isinstance(p, str) and f"{pct} %" in p
            continue
        assert not isinstance(p, str) and p.carveout == pct and p.smem >= smem
        got = _blocks(sm, carve, threads, p.smem)
        if n == 0:  # no bound: the kernel's own memory, untouched
            assert p.smem == smem
        else:
            assert 1 <= got <= n, (n, p, got)  # the bound holds under the set's carveout
            if _blocks(sm, carve, threads, smem) >= n:
                assert got == n  # and no tighter than the kernel's own memory makes it


def test_a_uniform_carveout_refuses_a_block_that_does_not_fit() -> None:
    why = occupancy.uniform(25, 0, 256, 100_000, H200)  # 25 % of 228 KB: the 64 KB configuration
    assert isinstance(why, str) and "do not fit a carveout of 25 % (64 KB)" in why
    assert not isinstance(occupancy.uniform(50, 0, 256, 100_000, H200), str)  # 132 KB holds it


@pytest.mark.parametrize("bad", [101, -1, "full", 2.5, True])
def test_the_carveout_setting_says_what_it_takes(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"percent 0\.\.100"):
        occupancy.parse_carveout(bad)
    assert occupancy.parse_carveout("") is None and occupancy.parse_carveout("100") == 100


def test_scoped_sets_the_carveout_inside_only() -> None:
    old = occupancy.CARVEOUT
    with occupancy.scoped(100):
        assert occupancy.CARVEOUT == 100
        with occupancy.scoped(None):
            assert occupancy.CARVEOUT is None
        assert occupancy.CARVEOUT == 100
    assert old == occupancy.CARVEOUT


def test_apply_uniform_sets_the_carveout_and_pads_a_bound() -> None:
    drv = _Driver(H200)
    smem, got = occupancy.apply_uniform(_ctx(drv), _fn(drv), 100, 3, 256, 64)  # type: ignore[misc]
    assert drv.carveout == 100 and got == 3 and drv.max_dynamic == smem  # 76 KB a block: the limit raised
    assert _blocks(H200, H200.smem, 256, smem) == 3
    drv = _Driver(H200)  # no bound: the attribute only
    assert occupancy.apply_uniform(_ctx(drv), _fn(drv), 100, 0, 256, 64) == (64, 8)
    assert drv.carveout == 100 and drv.max_dynamic == 48 * 1024


def test_apply_uniform_says_why_when_the_driver_does_not_keep_the_bound() -> None:
    # a card whose configurations the table does not know (60 % of 228 KB is
    # 137 KB by the table's arithmetic, the driver takes 228): more blocks fit
    drv = _Driver(H200, table=(0, 100, 228))
    out = occupancy.apply_uniform(_ctx(drv), _fn(drv), 60, 3, 256, 64)
    assert isinstance(out, str) and "still fits 4 blocks" in out
    out = occupancy.apply_uniform(_ctx(_Driver(H200, refuse=True)), _fn(_Driver(H200)), 100, 0, 256, 64)
    assert isinstance(out, str) and "refused a shared-memory carveout of 100 %" in out


class _Loaded:
    """A stand-in context for `CudaDevice._variant`: modules memoised by key
    (as `Context.load_ptx`), each function a `cuda.Function` of its own
    handle over the stand-in driver, whose carveout it records per handle."""

    def __init__(self) -> None:
        self.drv = _Driver(H200)
        self.keys: list[str] = []
        self.mods: dict[str, Any] = {}
        self.carve: dict[int, int] = {}
        real_set = self.drv.cuFuncSetAttribute

        def set_attr(fn: Any, what: str, value: int) -> tuple[int]:
            if what == "carveout":
                self.carve[fn] = value
            self.drv.carveout = self.carve.get(fn, -1)
            return real_set(fn, what, value)

        def occ(fn: Any, threads: int, smem: int) -> tuple[int, int]:
            self.drv.carveout = self.carve.get(fn, -1)
            return _Driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(self.drv, fn, threads, smem)

        self.drv.cuFuncSetAttribute = set_attr  # type: ignore[method-assign]
        self.drv.cuOccupancyMaxActiveBlocksPerMultiprocessor = occ  # type: ignore[method-assign]
        self.ctx = _ctx(self.drv)
        self.ctx.load_ptx = self.load_ptx

    def load_ptx(self, ptx: str, key: str) -> Any:
        from tilelang.runtime.cuda import Function

        if key not in self.mods:
            self.keys.append(key)
            fn = Function(self.ctx, 100 + len(self.mods), "k")
            self.mods[key] = SimpleNamespace(function=lambda name, fn=fn: fn)
        return self.mods[key]


def test_the_device_gives_each_setting_its_own_function() -> None:
    # a kernel launched under a uniform carveout is its own copy of the module
    # (its own CUfunction, attribute set once at load), so one process's
    # variants with and without it do not change each other's kernels; its
    # max_blocks bound still holds (the shared-memory pad under the set's carveout)
    from tilelang.runtime.cuda import CudaDevice, PreparedKernel

    st = _Loaded()
    dev = SimpleNamespace(ctx=st.ctx)
    pk = PreparedKernel(_kir(3), "sm_90a")
    old = occupancy.set_carveout(None)
    try:
        abi0, f0 = CudaDevice._variant(dev, pk, (), {}, None)  # type: ignore[arg-type]
        occupancy.set_carveout(100)
        abi1, f1 = CudaDevice._variant(dev, pk, (), {}, None)  # type: ignore[arg-type]
        occupancy.set_carveout(None)
        assert CudaDevice._variant(dev, pk, (), {}, None)[1] is f0  # type: ignore[arg-type]
        occupancy.set_carveout(100)
        assert CudaDevice._variant(dev, pk, (), {}, None)[1] is f1  # type: ignore[arg-type]
    finally:
        occupancy.set_carveout(old)
    assert f0 is not f1 and len(st.keys) == 2 and st.keys[1] == st.keys[0].removesuffix("+mb3") + "+cv100"
    # off: the bound's own smallest configuration; on: 100 % for this function only
    assert st.carve[f0.handle] < 100 and st.carve[f1.handle] == 100
    for abi, fn in ((abi0, f0), (abi1, f1)):
        st.drv.carveout = st.carve[fn.handle]
        assert _blocks(H200, _config(H200, st.carve[fn.handle]), abi.num_threads, abi.smem_bytes) == 3
    assert abi1.smem_bytes > abi0.smem_bytes  # a third of 228 KB, not of the bound's smaller configuration


def test_variants_of_one_text_with_other_bounds_keep_their_own_carveout() -> None:
    """`max_blocks` is not in the kernel's text (the PTX is the same: the bound is the launch's), and variants
    of one text share one compile and, by its key, one loaded module (hattn5): the instances MB = 3 and
    MB = 5 (the tuner's candidates, a generic's values) set the preferred carveout on one CUfunction, so the
    first's launches ran under the second's carveout, more blocks an SM than its bound (and MB = 0's under a
    bound's). Each bound loads its own copy of the module now; the unbounded one keeps the plain key."""
    from tilelang.runtime.cuda import CudaDevice, PreparedKernel

    st = _Loaded()
    dev = SimpleNamespace(ctx=st.ctx)
    old = occupancy.set_carveout(None)
    try:
        got = {mb: CudaDevice._variant(dev, PreparedKernel(_kir(mb), "sm_90a"), (), {}, None)  # type: ignore[arg-type]
               for mb in (0, 3, 5)}
    finally:
        occupancy.set_carveout(old)
    fns = {mb: fn for mb, (_abi, fn) in got.items()}
    assert len({id(f) for f in fns.values()}) == 3, st.keys
    assert st.keys[1:] == [st.keys[0] + "+mb3", st.keys[0] + "+mb5"]
    assert fns[0].handle not in st.carve  # unbounded: no carveout set on its function
    for mb in (3, 5):
        abi, fn = got[mb]
        assert _blocks(H200, _config(H200, st.carve[fn.handle]), abi.num_threads, abi.smem_bytes) == mb


def test_the_device_refuses_a_kernel_the_uniform_carveout_cannot_hold() -> None:
    from tilelang.runtime.cuda import CudaDevice, PreparedKernel

    st = _Loaded()
    pk = PreparedKernel(_kir(0), "sm_90a")
    with occupancy.scoped(0), pytest.raises(TileError) as e:  # 0 KB: not even the block's reserved 1 KB
        CudaDevice._variant(SimpleNamespace(ctx=st.ctx), pk, (), {}, None)  # type: ignore[arg-type]
    assert "do not fit a carveout of 0 %" in str(e.value)
    assert "TILEC_CARVEOUT" in " ".join(e.value.diagnostics[0].help)


@pytest.mark.gpu
def test_on_the_gpu_a_uniform_carveout_keeps_the_bound_and_the_result() -> None:
    n = 2560
    x = np.random.default_rng(8).standard_normal((300, n)).astype(np.float32) * 3
    ref = np.zeros_like(x)
    tilelang.compile(SRC, device="cpu").softmax_rows[n, 3](tilelang.partition(ref, [1, n]), x).sync()
    gpu = tilelang.compile(SRC, device="gpu")
    for mb in (3, 0):
        y = np.full_like(x, np.nan)
        with occupancy.scoped(100):
            op = gpu.softmax_rows[n, mb](tilelang.partition(y, [1, n]), x)
            op.sync()
        np.testing.assert_allclose(y, ref, rtol=2e-6, atol=1e-7)
        # a variant's key ends (..., pdl, traced, carveout, l2): `CudaDevice._variant`
        ((abi, fn),) = [v for k, v in op._plan.prepared.variants.items() if k[-2] == 100]
        got = occupancy.resident(fn.ctx.d, fn.handle, abi.num_threads, abi.smem_bytes)
        sm = occupancy.limits(fn.ctx)
        if mb:  # a share of all of the SM's memory: mb + 1 blocks do not fit
            assert 1 <= got <= mb and (mb + 1) * (abi.smem_bytes + sm.reserved) > sm.smem, (got, abi.smem_bytes)
        else:
            assert got > 3 and abi.smem_bytes < 1024
