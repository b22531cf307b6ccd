"""GPU == interpreter on every backend case; the CUDA runtime's promises.

Marked `gpu`: skipped cleanly where cuda-python finds no device.
"""

from __future__ import annotations

import numpy as np
import pytest
from backend_cases import CASES, SUITES, Case, Suite

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def dev():  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    return cuda.device()


def run_both(dev, case: Case, seed: int = 0, typed: bool = True):  # type: ignore[no-untyped-def]
    """`typed`: upload with the tensor's dtype (bf16 as 2-byte bfloat16, as the
    runtime does); else bf16 stays f32 memory (as the Python API's CUDA arrays)."""
    from tilelang.interp import run_kernel
    from tilelang.ir import nodes as ir

    k = case.kernel()
    args = case.args(np.random.default_rng(seed))
    cpu_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(k, case.grid, cpu_args)
    gpu_args = [dev.upload(a, p.dtype if typed else None) if isinstance(a, np.ndarray) else a
                for p, a in zip(k.params, args, strict=True)]
    prepared = dev.prepare(k)
    dev.run(prepared, case.grid, gpu_args)
    dev.sync()
    outs = []
    for p, c, g in zip(k.params, cpu_args, gpu_args):
        if isinstance(p, ir.TensorParam):
            outs.append((p.name, c, dev.download(g, p.dtype, c.shape)))
    return outs


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gpu_matches_interpreter(dev, case: Case) -> None:  # type: ignore[no-untyped-def]
    for name, want, got in run_both(dev, case):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=case.rtol, atol=case.atol, err_msg=f"tensor `{name}` of {case.name}")


def test_thousands_of_launches_reuse_the_pool(dev) -> None:  # type: ignore[no-untyped-def]
    from tilelang.ir import samples

    k = dev.prepare(samples.vector_add(256))
    x = np.arange(1000, dtype=np.float32)
    before = None
    for i in range(2000):
        z, a, b = dev.upload(np.zeros(1000, np.float32)), dev.upload(x), dev.upload(x)
        dev.run(k, (4,), [z, a, b])
        if i == 10:
            dev.sync()
            before = dev.ctx.pool.allocations
    dev.sync()
    assert dev.ctx.pool.allocations == before  # freed buffers came back from the pool
    np.testing.assert_array_equal(dev.download(z, None, (1000,)), 2 * x)


def test_graph_replay_reruns_the_launches(dev) -> None:  # type: ignore[no-untyped-def]
    from tilelang.ir import samples

    k = dev.prepare(samples.vector_add(256))
    x = np.ones(512, np.float32)
    z, a = dev.upload(np.zeros(512, np.float32)), dev.upload(x)
    s = dev.new_stream()
    dev.capture(s)
    dev.run(k, (2,), [z, a, z], stream=s)  # z = x + z
    g = dev.end_capture(s)
    for _ in range(5):
        dev.replay(g)
    dev.sync()
    np.testing.assert_array_equal(dev.download(z, None, (512,)), 5 * x)


def test_device_assert_raises_located_error(dev) -> None:  # type: ignore[no-untyped-def]
    from tilelang.diagnostics.model import TileError
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder
    from tilelang.source import Span

    b = Builder("chk")
    b.tensor_param("z", DType.F32, 1, mutable=True, tile_shape=(128,))
    offs = (b.mul(b.block_id(0), b.const(128, DType.I32)),)
    t = b.load("z", offs, (128,))
    cond = b.lt(t, b.broadcast(b.const(10.0, DType.F32), (128,)))
    k = b.finish()
    span = Span(0, 3, 9)
    ops = (*k.body.ops[:-1], ir.Assert(cond, "too big", span), k.body.ops[-1])
    k = ir.Kernel(k.name, k.params, ir.Region((), ops))
    p = dev.prepare(k)
    ok = dev.upload(np.zeros(256, np.float32))
    dev.run(p, (2,), [ok])
    dev.sync()  # passes
    bad = np.zeros(256, np.float32)
    bad[200] = 11.0
    dev.run(p, (2,), [dev.upload(bad)])
    with pytest.raises(TileError) as e:
        dev.sync()
    d = e.value.diagnostics[0]
    assert d.code == "E0700" and "too big" in d.message and d.primary_span == span
    dev.run(p, (2,), [ok])
    dev.sync()  # the error word was reset


BF16_SUITES = [s for s in SUITES if "bf16" in s.name]


@pytest.mark.parametrize("typed", [True, False], ids=["bf16_memory", "f32_memory"])
@pytest.mark.parametrize("suite", BF16_SUITES, ids=[s.name for s in BF16_SUITES])
def test_bf16_suites_in_both_memory_layouts(dev, suite: Suite, typed: bool) -> None:  # type: ignore[no-untyped-def]
    test_gpu_ops_match_interpreter(dev, suite, typed)


def test_bf16_tensors_are_two_bytes_on_the_gpu(dev) -> None:  # type: ignore[no-untyped-def]
    from tilelang.dtypes import DType
    from tilelang.runtime.tensor import round_bf16

    x = round_bf16(np.random.default_rng(1).standard_normal(1000).astype(np.float32))
    x[:4] = [np.inf, -np.inf, 0.0, -0.0]
    buf = dev.upload(x, DType.BF16)
    assert buf.buf.nbytes == 2000 and buf.np_dtype == np.uint16
    back = dev.download(buf, DType.BF16, (1000,))
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, x)
    dev.write(buf, x * 2)
    np.testing.assert_array_equal(dev.download(buf, DType.BF16, (1000,)), x * 2)


@pytest.mark.parametrize("dt", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("aop", ["add", "max", "min"])
def test_float_atomics_match_interpreter(dev, dt: str, aop: str) -> None:  # type: ignore[no-untyped-def]
    """Colliding float atomics (CAS loops for max/min and bf16): NaN propagates
    through max/min as in the interpreter; the sums are exact here."""
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder
    from tilelang.runtime.tensor import round_bf16

    d = DType(dt)
    b = Builder(f"atom_{dt}_{aop}")
    b.tensor_param("x", d, 1)
    b.tensor_param("h", d, 1)
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    v = b.load("x", (off,), (128,))
    idx = b.elementwise(ir.ElemOp.REM, b.arange(128), b.broadcast(b.const(8, DType.I32), (128,)))
    b.atomic(ir.AtomicOp(f"atomic_{aop}"), "h", (idx,), v)
    case_k = b.finish()
    r = np.random.default_rng(3)
    # halves in [-2, 2]: every partial sum of a bin stays below 128 in magnitude
    # (checked: at most 82.5 for this seed), so it is exact in every float type
    # and in any order of the adds
    x = (r.integers(-4, 5, 1000) / 2.0).astype(np.float32)
    x[5] = np.nan  # bin 5
    x = round_bf16(x) if d is DType.BF16 else x.astype(d.np_dtype)
    h = np.zeros(8, x.dtype)
    case = Case(case_k.name, lambda: case_k, lambda _r: [x.copy(), h.copy()], (8,))
    (_, _, _), (_, want, got) = run_both(dev, case)
    assert np.isnan(want[5]) and np.isnan(got[5])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])


@pytest.mark.parametrize("suite", SUITES, ids=[s.name for s in SUITES])
def test_gpu_ops_match_interpreter(dev, suite: Suite, typed: bool = True) -> None:  # type: ignore[no-untyped-def]
    """Op by op, with the tolerance of the fast-math table (exact for the exact ops)."""
    case = Case(suite.name, suite.kernel, suite.args, suite.grid)
    bad = []
    for name, want, got in run_both(dev, case, typed=typed):
        if name not in suite.tols:
            continue
        rtol, atol = suite.tols[name]
        w, g = want.astype(np.float64), got.astype(np.float64)
        close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True) | (w == g)
        if not close.all():
            i = int(np.flatnonzero(~close)[0])
            bad.append(f"{name}: {int((~close).sum())} differ, first at {i}: gpu {g.flat[i]!r} vs interp {w.flat[i]!r}")
    assert not bad, "\n".join(bad)


def test_random_kernels_match_interpreter(dev) -> None:  # type: ignore[no-untyped-def]
    """Differential test with hypothesis: random shapes and ops, GPU vs interpreter."""
    hypothesis = pytest.importorskip("hypothesis")
    from backend_cases import random_specs, random_suite

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(random_specs())
    def check(spec) -> None:  # type: ignore[no-untyped-def]
        suite = random_suite(spec)
        case = Case(suite.name, suite.kernel, suite.args, suite.grid)
        for name, want, got in run_both(dev, case):
            if name in suite.tols:
                rtol, atol = suite.tols[name]
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                           atol=atol, err_msg=f"`{name}` of {spec}")

    check()


@pytest.mark.parametrize("aop", ["add", "max", "min"])
def test_bool_atomics_match_interpreter(dev, aop: str) -> None:  # type: ignore[no-untyped-def]
    """bool atomics (byte CAS loops): add and max are or, min is and (np.*.at on bool)."""
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    b = Builder(f"atom_bool_{aop}")
    b.tensor_param("x", DType.BOOL, 1)
    b.tensor_param("h", DType.BOOL, 1)
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    v = b.load("x", (off,), (128,))
    idx = b.elementwise(ir.ElemOp.REM, b.arange(128), b.broadcast(b.const(8, DType.I32), (128,)))
    b.atomic(ir.AtomicOp(f"atomic_{aop}"), "h", (idx,), v)
    k = b.finish()
    x = np.zeros(1024, np.bool_)  # whole tiles: no padded `false` joins the atomics
    x[[3, 11, 130, 998]] = True  # bins 3, 3, 2, 6
    x[[i for i in range(1024) if i % 8 == 5]] = True  # bin 5 all true
    h = np.ones(8, np.bool_) if aop == "min" else np.zeros(8, np.bool_)
    case = Case(k.name, lambda: k, lambda _r: [x.copy(), h.copy()], (8,))
    (_, _, _), (_, want, got) = run_both(dev, case)
    assert want.any() and not want.all()
    np.testing.assert_array_equal(got, want)


def _cast_kernel(src, dsts):  # type: ignore[no-untyped-def]
    from tilelang.dtypes import DType
    from tilelang.ir.builder import Builder

    b = Builder(f"cast_edges_{src.value}")
    b.tensor_param("x", src, 1)
    for d in dsts:
        b.tensor_param(f"o_{d.value}", d, 1)
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    x = b.load("x", (off,), (128,))
    for d in dsts:
        b.store(f"o_{d.value}", (off,), b.cast(x, d))
    return b.finish()


CAST_EDGES = {
    # one rounding (huser14: through f64 to nearest, 2^60 + 2^36 + 1 -> 2^60 + 2^36, a tie of f32 -> 2^60; the
    # interpreter's f64 is rounded to odd): f32 2^60 + 2^37, bf16 likewise
    "i64": [2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**62 + 2**49 + 1, 2**63 - 1, -(2**63), 12345],
    # correctly rounded from f64 (exact): 2^30 + 2^22 + 1 -> bf16 2^30 + 2^23 (not the f32 tie's 2^30)
    "i32": [2**30 + 2**22 + 1, -(2**30 + 2**22 + 1), 2**31 - 1, -(2**31), 16777217, 7],
    # f64 -> bf16 correctly rounded: 1 + 2^-8 + 2^-40 -> 1 + 2^-7 (via f32 it would tie to 1.0)
    "f64": [1 + 2.0**-8 + 2.0**-40, -(1 + 2.0**-8 + 2.0**-40), 1e300, -1e-300, 3.0, float("nan")],
}


@pytest.mark.parametrize("src", sorted(CAST_EDGES))
def test_casts_round_exactly_like_the_interpreter(dev, src: str) -> None:  # type: ignore[no-untyped-def]
    """int -> float and f64 -> bf16 round once, as in the interpreter (a
    conversion through f64 to nearest, or f32 to nearest, differs on these
    values)."""
    from tilelang.dtypes import DType

    s = DType(src)
    dsts = [DType.F32, DType.F16, DType.BF16] + ([DType.F64] if s.is_int else [])
    k = _cast_kernel(s, dsts)
    vals = np.array(CAST_EDGES[src], dtype=s.np_dtype)
    case = Case(k.name, lambda: k, lambda _r: [vals.copy(), *[np.zeros(len(vals), d.np_dtype) for d in dsts]], (1,))
    outs = run_both(dev, case)
    for name, want, got in outs[1:]:
        np.testing.assert_array_equal(got, want, err_msg=name)
    if src == "i64":  # one rounding: not the tie to 2^60 that a conversion through f64 makes
        assert outs[1][1][0] == np.float32(2.0**60 + 2.0**37)
    if src == "f64":
        assert outs[3][1][0] == np.float32(1 + 2.0**-7)


def test_f64_fma_rounds_once(dev) -> None:  # type: ignore[no-untyped-def]
    """fma on f64 is fused (one rounding, as `ir.ElemOp` specifies): equal to the
    exactly rounded a*b+c. (The interpreter rounds twice here: see the xfail in
    test_f64math.py.)"""
    from test_f64math import _fma_exact, _fma_inputs

    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    b = Builder("fma64")
    for nm in "abc":
        b.tensor_param(nm, DType.F64, 1)
    b.tensor_param("z", DType.F64, 1, mutable=True, tile_shape=(128,))
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    xs = [b.load(nm, (off,), (128,)) for nm in "abc"]
    b.store("z", (off,), b.elementwise(ir.ElemOp.FMA, *xs))
    k = b.finish()
    a, bb, c = _fma_inputs()
    bufs = [dev.upload(v) for v in (a, bb, c, np.zeros_like(a))]
    dev.run(dev.prepare(k), (-(-len(a) // 128),), bufs)
    dev.sync()
    np.testing.assert_array_equal(dev.download(bufs[3], DType.F64, a.shape), _fma_exact(a, bb, c))


def test_route_warmup_runs_the_driver_jit_in_the_device_context(dev) -> None:  # type: ignore[no-untyped-def]
    """The warm-up that `CudaDevice` starts (`cuda_link.prewarm_routes`) puts
    its kernel through the real driver JIT in the device's context; a
    thread started earlier in this process ended the same way."""
    from tilelang.runtime import cuda_link

    assert cuda_link._warm_driver_jit(dev.ctx.ctx, dev.arch) == "ok"
    for t in cuda_link._JIT_THREADS:
        t.join(timeout=60)
    assert set(cuda_link.JIT_WARMUP) <= {"ok"}
