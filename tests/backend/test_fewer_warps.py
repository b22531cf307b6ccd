"""`lift.fewer_warps` (hcliff9; on by default, `TILEC_FEWER_WARPS=0` off): a kernel that names no warps and whose
largest built tile gives each thread at most 4 elements at half the warps runs at 1 warp (<= 128 elements) or 2
(<= 256) instead of 4 whose threads past the tile hold replicas. A product that `shift_dot` reads as a stencil
(a05's max-pool) or `gather_dot` as a gather (t09's resize) counts as its result, its matrix never built; any
other product keeps the kernel's warps. The kernels run in llsim at their new warps against the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu


@pytest.fixture(autouse=True)
def _default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_DEFAULT_WARPS", raising=False)
    monkeypatch.delenv("TILEC_FEWER_WARPS", raising=False)


ROWS = """
HINT
kernel fn softmax_rows<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    let e = exp(t - t.max(1).reshape([1, 1]));
    y.store(e / e.sum(1).reshape([1, 1]));
}
"""

# a05's window row: the previous pair's odd column shifted in by a band product (shift_dot), or by a product
# with a loaded matrix (no recognizer: the FMA loop over it)
SHIFT = """
kernel fn shifted<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, ?]>, m: &Tensor<f32, [?, ?]>) {
    let t = x.load_like(y);
    let s = MATRIX;
    y.store(dot(t, s) + t);
}
"""


def _kernel(src: str, main: str):  # type: ignore[no-untyped-def]
    return driver.compile(src + main, "ir").output[0]


def _rows(n: int, hint: str = ""):  # type: ignore[no-untyped-def]
    src = ROWS.replace("HINT", hint)
    main = f"fn main() {{ let x = zeros::<f32>([3, {n}]); let mut y = zeros::<f32>([3, {n}]); softmax_rows(y.partition([1, {n}]), &x).sync(); }}\n"
    return src, _kernel(src, main)


@pytest.mark.parametrize(("n", "hint", "warps"), [(16, "", 1), (128, "", 1), (256, "", 2), (512, "", 4),
                                                   (64, "#[hints(num_warps = 4)]", 4),
                                                   (64, "#[hints(min_blocks = 2)]", 4)])
def test_the_warps_follow_a_small_largest_tile(n: int, hint: str, warps: int) -> None:
    _src, k = _rows(n, hint)
    assert lower_gpu(k, "sm_90a").num_warps == warps


@pytest.mark.parametrize("switch", ["TILEC_FEWER_WARPS", "TILEC_DEFAULT_WARPS"])
def test_switched_off_a_small_kernel_keeps_four_warps(switch: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(switch, "0")
    _src, k = _rows(64)
    assert lower_gpu(k, "sm_90a").num_warps == 4


def _shift(matrix: str):  # type: ignore[no-untyped-def]
    src = SHIFT.replace("MATRIX", matrix)
    main = ("fn main() { let x = zeros::<f32>([2, 64]); let m = zeros::<f32>([64, 64]); let mut y = zeros::<f32>([2, 64]);"
            " shifted(y.partition([1, 64]), &x, &m).sync(); }\n")
    return src, _kernel(src, main)


BAND = "(arange::<i32>(N).reshape([N, 1]) + 1 == arange::<i32>(N).reshape([1, N])) as f32"


def test_a_product_read_as_a_stencil_counts_as_its_result() -> None:
    """The [64, 64] band matrix is never built (shift_dot): the largest tile is the [1, 64] row, so 1 warp; a
    loaded [64, 64] matrix is a real product (the FMA loop stages it): the kernel keeps its 4."""
    assert lower_gpu(_shift(BAND)[1], "sm_90a").num_warps == 1
    assert lower_gpu(_shift("m.partition([N, N]).load([0, 0])")[1], "sm_90a").num_warps == 4


@pytest.mark.parametrize(("n", "warps"), [(64, 1), (256, 2)])
def test_softmax_rows_at_fewer_warps_in_the_simulator(n: int, warps: int) -> None:
    src, k = _rows(n)
    assert lower_gpu(k, "sm_90a").num_warps == warps
    x = (np.random.default_rng(9).standard_normal((3, n)) * 4).astype(np.float32)
    want = np.zeros_like(x)
    tilelang.compile(src).softmax_rows(tilelang.partition(want, [1, n]), x).sync()  # the interpreter
    got = np.full_like(x, np.nan)
    SimDevice("sm_90a").run(k, (3,), [got, x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)


def test_the_band_product_at_one_warp_in_the_simulator() -> None:
    """The shift by a band product at 1 warp (`shift_dot`'s in-warp path: one line held by the warp), with an
    infinity and a NaN in the rows, bit for bit the interpreter's."""
    src, k = _shift(BAND)
    assert lower_gpu(k, "sm_80").num_warps == 1
    x = np.random.default_rng(10).standard_normal((2, 64)).astype(np.float32)
    x[1, 7], x[1, 30] = np.inf, np.nan
    m = np.zeros((64, 64), np.float32)
    want = np.zeros_like(x)
    tilelang.compile(src).shifted(tilelang.partition(want, [1, 64]), x, m).sync()
    got = np.full_like(x, -7.0)
    SimDevice("sm_80").run(k, (2,), [got, x, m])
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_the_pool_at_one_warp_on_a_gpu() -> None:
    """a05's max-pool (1 warp since `lift.fewer_warps`) at the benchmark's WO = 64 on a card prints what the
    interpreter prints: every pooled value and index."""
    import io

    from pathlib import Path

    import tilelang.run as run

    a05 = Path(__file__).resolve().parents[1] / "user" / "programs" / "a05_maxpool3x3_indices.tile"
    src = a05.read_text(encoding="utf-8")
    src = src[:src.index("fn main()")] + """fn main() {
    let x = randn::<f32>([3, 40, 112], 5);
    let mut y = zeros::<f32>([3, 20, 56]);
    let mut idx = zeros::<i32>([3, 20, 56]);
    pool3::<64>(y.partition([1, 1, 64]), idx.partition([1, 1, 64]), &x).sync();
    print(y.sum(), idx.sum(), y.max(), idx.min());
}
"""
    want, got = io.StringIO(), io.StringIO()
    run.execute(src, "cpu", out=want, name="p.tile")
    run.execute(src, "gpu", out=got, name="p.tile")
    assert got.getvalue() == want.getvalue()
