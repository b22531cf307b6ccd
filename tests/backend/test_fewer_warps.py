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


def test_the_reference_says_a_small_kernel_runs_at_fewer_warps() -> None:
    """hrev26: the Hints section said an unhinted kernel takes 4 warps or more; since `lift.fewer_warps` a small
    one takes 1 or 2, and the switch that keeps 4 is a user's to know."""
    from pathlib import Path

    import tilelang.doc

    hints = (Path(tilelang.doc.__file__).parent / "sections" / "07-hints.md").read_text(encoding="utf-8")
    assert "TILEC_FEWER_WARPS=0" in hints and "1 warp" in hints


def test_explain_counts_one_warp_in_the_singular() -> None:
    """hrev26: `--explain`'s path line of a kernel at 1 warp (common since `lift.fewer_warps`) said '1 warps'."""
    from tilelang.backend import explain

    line = explain.describe(lower_gpu(_rows(64)[1], "sm_90a"))
    assert line.endswith(", 1 warp"), line
    assert explain.describe(lower_gpu(_rows(256)[1], "sm_90a")).endswith(", 2 warps")


NARROW = """
kernel fn bump<T, const N: i32>(y: &mut Tensor<T, [N]>, x: &Tensor<T, [?]>) {
    let t = x.load_like(y);
    y.store(t + t.max(0) + cumsum(t, 0));
}
kernel fn bump_col<T, const N: i32>(y: &mut Tensor<T, [N, 1]>, x: &Tensor<T, [?, ?]>) {
    let t = x.load_like(y);
    y.store(t + t.max(0).reshape([1, 1]));
}
"""


@pytest.mark.parametrize(("dt", "n", "warps"), [("i8", 512, 1), ("i8", 1024, 2), ("i8", 2048, 4), ("f16", 256, 1),
                                                ("bf16", 512, 2), ("u16", 1024, 4), ("f32", 256, 2), ("f64", 128, 1),
                                                ("u8", 256, 1)])
def test_narrow_elements_count_by_the_vector_a_thread_holds(dt: str, n: int, warps: int) -> None:
    """hrev26: a thread holds a 16-byte vector of the last dim, 8 f16 or 16 i8 (`layouts.blocked_for`), so an i8
    [512] row at 4 warps was 3 warps of replicas of the first (the element count, 512, kept it at 4); the rule
    counts a tile's elements a thread by that vector (4 at least), and a column of narrow elements ([N, 1]: one
    a thread, no vector) as before."""
    main = (f"fn main() {{ let x = zeros::<{dt}>([{n}]); let mut y = zeros::<{dt}>([{n}]);"
            f" bump::<{dt}, {n}>(y.partition([{n}]), &x).sync(); }}\n")
    k = driver.compile(NARROW + main, "ir").output[0]
    assert lower_gpu(k, "sm_90a").num_warps == warps
    col = (f"fn main() {{ let x = zeros::<{dt}>([{n}, 1]); let mut y = zeros::<{dt}>([{n}, 1]);"
           f" bump_col::<{dt}, {n}>(y.partition([{n}, 1]), &x).sync(); }}\n")
    k = driver.compile(NARROW + col, "ir").output[0]
    assert lower_gpu(k, "sm_90a").num_warps == (1 if n <= 128 else 2 if n <= 256 else 4)


@pytest.mark.parametrize(("dt", "n", "arch"), [("i8", 512, "sm_80"), ("f16", 256, "sm_90a")])
def test_a_narrow_row_at_one_warp_in_the_simulator(dt: str, n: int, arch: str) -> None:
    """The i8 [512] and f16 [256] rows at 1 warp (16 and 8 elements a thread): the max, the scan and the sum,
    with the type's edges in them, bit for bit the interpreter's (two blocks)."""
    main = (f"fn main() {{ let x = zeros::<{dt}>([{2 * n}]); let mut y = zeros::<{dt}>([{2 * n}]);"
            f" bump::<{dt}, {n}>(y.partition([{n}]), &x).sync(); }}\n")
    src = NARROW + main
    k = driver.compile(src, "ir").output[0]
    assert lower_gpu(k, arch).num_warps == 1
    rng = np.random.default_rng(26)
    if dt == "i8":
        x = rng.integers(-128, 128, 2 * n).astype(np.int8)
        x[[3, 700]] = [127, -128]
    else:
        x = (rng.integers(-64, 64, 2 * n) / 8).astype(np.float16)
        x[[5, 300]] = [np.inf, -0.0]
    want = np.zeros_like(x)
    tilelang.compile(src).bump(tilelang.partition(want, [n]), x).sync()
    got = np.zeros_like(x) + 1
    SimDevice(arch).run(k, (2,), [got, x])
    bits = np.uint8 if dt == "i8" else np.uint16
    np.testing.assert_array_equal(got.view(bits), want.view(bits))
