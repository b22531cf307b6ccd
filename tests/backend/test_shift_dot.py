"""A product by a shift matrix made of aranges is the shift it is (`codegen/shift_dot.py`, `TILEC_SHIFT_DOT`,
hcliff4 2026-12-06): tests/user a05's max-pool moves the window's odd column by one element with
`dot(t.reshape([1, N]), (arange(N).reshape([N, 1]) + 1 == arange(N).reshape([1, N])) as f32)` (`roll`'s help:
a tile has no element-offset load); the FMA engine staged the [64, 64] matrix in shared memory and ran 64 FMAs
an output. Now the row alone goes through shared memory and each output reads its source element, with the
FMA loop's value bit for bit: +0.0 for -0.0 and where no element moves in, NaN where another element of the
row is an infinity or a NaN (its product by zero), an infinity where it is the moved element."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
A05 = HERE.parents[1] / "tests" / "user" / "programs" / "a05_maxpool3x3_indices.tile"

SHIFTS = """
kernel fn sh<const N: i32>(y: &mut Tensor<f32, [2, N]>, z: &mut Tensor<f32, [2, N]>, x: &Tensor<f32, [?, ?]>) {
    let t = x.partition([2, N]).load([block_id(0), 0]);
    let s = (arange::<i32>(N).reshape([N, 1]) + 1 == arange::<i32>(N).reshape([1, N])) as f32;
    let u = (arange::<i32>(N).reshape([1, N]) == arange::<i32>(N).reshape([N, 1]) - 3) as f32;
    y.store(dot(t, s));
    z.store(dot(t, u));
}

fn main() {
    let base = arange::<f32>(96).reshape([6, 16]) - 40.0;
    // an infinity alone in row 0 (its element moves: inf there, NaN elsewhere), a NaN in row 4, -0.0 in row 2
    let x = where(base == -35.0, base * 1.0e38, where(base == 0.0, base * -1.0,
        where(base == 27.0, base * 1.0e38 - base * 1.0e38, base)));
    let mut y = zeros::<f32>([6, 16]);
    let mut z = zeros::<f32>([6, 16]);
    sh::<16>(y.partition([2, 16]), z.partition([2, 16]), &x).sync();
    print(y);
    print(z);
}
"""


A03 = HERE.parents[1] / "tests" / "user" / "programs" / "a03_gaussian_blur_separable.tile"


def _blur(main: str) -> str:
    src = A03.read_text(encoding="utf-8")
    return src[:src.index("fn main()")] + "fn main() { " + main + " }\n"


# a03's blur on a 20 x 40 image of [16, 32] tiles (edges both ways), an infinity at (3, 5) and a NaN at (17, 30)
BLUR = _blur("let r = rand::<f32>([20, 40], 7); let at = arange::<f32>(800).reshape([20, 40]);"
             " let img = where(at == 125.0, r * 1.0e38 * 1.0e10, where(at == 710.0, r * 0.0 / 0.0, r));"
             " let taps = arange::<f32>(5);"
             " let w = where(taps == 2.0, 6.0, where((taps == 1.0) || (taps == 3.0), 4.0, 1.0)) / 16.0;"
             " let mut tmp = zeros::<f32>([20, 40]); let mut out = zeros::<f32>([20, 40]);"
             " blur_rows::<16, 32>(tmp.partition([16, 32]), &img, &w).sync();"
             " blur_cols::<16, 32>(out.partition([16, 32]), &tmp, &w).sync();"
             " print(tmp); print(out);")


def _ptx(src: str, kernel: str) -> str:
    from tilelang import driver
    from tilelang.backend import emit_ptx

    k = next(x for x in driver.compile(src, "ir").output if x.name == kernel)
    return emit_ptx(k, "sm_90a")


def _pool() -> str:
    src = A05.read_text(encoding="utf-8")
    return src[:src.index("fn main()")] + (
        "fn main() { let x = zeros::<f32>([2, 112, 112]); let mut y = zeros::<f32>([2, 56, 56]);"
        " let mut i = zeros::<i32>([2, 56, 56]);"
        " pool3::<64>(y.partition([1, 1, 64]), i.partition([1, 1, 64]), &x).sync(); }\n")


def test_the_max_pools_shift_is_no_product(monkeypatch: pytest.MonkeyPatch) -> None:
    ptx = _ptx(_pool(), "pool3")
    assert "fma.rn" not in ptx  # the [1, 64] x [64, 64] product's FMAs
    stores = ptx.count("st.shared")
    monkeypatch.setenv("TILEC_SHIFT_DOT", "0")  # before: the matrix staged in shared memory, FMAs over it
    old = _ptx(_pool(), "pool3")
    assert "fma.rn" in old and old.count("st.shared") > stores


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulated_shift_is_the_interpreters_product(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    want = io.StringIO()
    run.execute(SHIFTS, "cpu", out=want, name="p.tile")
    assert "NaN" in want.getvalue() and "inf" in want.getvalue()
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
    run.execute(SHIFTS, "cpu", out=got, name="p.tile")
    assert got.getvalue() == want.getvalue()


def _sim(src: str, arch: str, monkeypatch: pytest.MonkeyPatch) -> str:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    got = io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
        run.execute(src, "cpu", out=got, name="p.tile")
    return got.getvalue()


def test_the_blurs_bands_are_stencils(monkeypatch: pytest.MonkeyPatch) -> None:
    """a03's band products (taps on 5 diagonals; on the right for rows, transposed on the left for columns):
    each of the 3 products a kernel is a stencil (the FMA loop over the [64, 64] band is not emitted)."""
    from tilelang.backend.codegen import mma, shift_dot

    src = _blur("let x = zeros::<f32>([64, 128]); let w = zeros::<f32>([5]); let mut y = zeros::<f32>([64, 128]);"
                " blur_rows::<32, 64>(y.partition([32, 64]), &x, &w).sync();"
                " blur_cols::<32, 64>(y.partition([32, 64]), &x, &w).sync();")
    taken: list[bool] = []

    def spy(em, op):  # type: ignore[no-untyped-def]
        taken.append(shift_dot.shift_dot(em, op))
        return taken[-1]

    monkeypatch.setattr(mma, "shift_dot", spy)
    for k in ("blur_rows", "blur_cols"):
        taken.clear()
        assert "fma.rn" in _ptx(src, k)
        assert taken == [True, True, True], k
    monkeypatch.setenv("TILEC_SHIFT_DOT", "0")
    taken.clear()
    _ptx(src, "blur_rows")
    assert taken == [False, False, False]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulated_blur_is_the_fma_loops_bit_for_bit(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every element, an infinity and a NaN among them (their rows and columns NaN where the FMA loop's
    products by zero make them so), as the FMA loop over the band computed it; and the interpreter's values
    (its matmul sums in its own order: within f32's rounding)."""
    import tilelang.run as run

    got = _sim(BLUR, arch, monkeypatch)
    monkeypatch.setenv("TILEC_SHIFT_DOT", "0")
    assert got == _sim(BLUR, arch, monkeypatch)
    want = io.StringIO()
    run.execute(BLUR, "cpu", out=want, name="p.tile")
    assert "NaN" in got and got.count("NaN") == want.getvalue().count("NaN")


def test_explain_says_the_products_run_as_stencils(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang import driver
    from tilelang.backend import explain, lower_gpu

    src = _blur("let x = zeros::<f32>([64, 128]); let w = zeros::<f32>([5]); let mut y = zeros::<f32>([64, 128]);"
                " blur_rows::<32, 64>(y.partition([32, 64]), &x, &w).sync();")
    k = next(x for x in driver.compile(src, "ir").output if x.name == "blur_rows")
    gk = lower_gpu(k, "sm_90a", {})
    assert explain.stencils(gk) == 3
    assert "scalar FMAs (no tensor cores), 3 products by a band matrix as stencils, 4 warps" in explain.describe(gk)
    monkeypatch.setenv("TILEC_SHIFT_DOT", "0")
    assert explain.stencils(gk) == 0 and "stencil" not in explain.describe(gk)


WRAPS = """
kernel fn sh(y: &mut Tensor<f32, [4, 64]>, z: &mut Tensor<f32, [4, 64]>, w: &mut Tensor<f32, [4, 64]>,
        x: &Tensor<f32, [?, ?]>) {
    let t = x.load_like(y);
    let r = arange::<i32>(64).reshape([64, 1]);
    w.store(dot(t, ((arange::<i32>(1).reshape([1, 1]) + r) == (arange::<i32>(64).reshape([1, 64]) + r)) as f32));
    let s = ((arange::<u8>(64).reshape([64, 1]) + 200u8) == arange::<u8>(64).reshape([1, 64])) as f32;
    let u = ((arange::<i32>(64).reshape([64, 1]) + 2147483647) == arange::<i32>(64).reshape([1, 64]) - 2147483647 - 1) as f32;
    y.store(dot(t, s));
    z.store(dot(t, u));
}

fn main() {
    let x = arange::<f32>(256).reshape([4, 64]);
    let mut y = zeros::<f32>([4, 64]);
    let mut z = zeros::<f32>([4, 64]);
    let mut w = zeros::<f32>([4, 64]);
    sh(y.partition([4, 64]), z.partition([4, 64]), w.partition([4, 64]), &x).sync();
    print((y * x).sum(), (z * x).sum(), (w * x).sum());
}
"""


def test_a_band_of_index_arithmetic_that_wraps_is_a_product(monkeypatch: pytest.MonkeyPatch) -> None:
    """hrev20: the band's linear form `r + 200 == c` took u8's `arange(64) + 200u8` as the diagonal -200 (no
    element), where the u8 sum wraps at row 56 to `r - 56` (ones at (56..63, 0..7)): `y` was zeros in llsim; now
    such a band stays a product. (i32's `r + 2147483647 == c - 2147483648`, the diagonal 1 once wrapped, too.)
    And an index along a dim of size 1 is 0: `arange(1).reshape([1, 1]) + r == c + r` is column 0 (`c == 0`),
    which the form read as the diagonal 0 (the [1, 1] arange's coefficient taken for the row's)."""
    import tilelang.run as run

    want = io.StringIO()
    run.execute(WRAPS, "cpu", out=want, name="p.tile")
    assert "0.0" not in want.getvalue().split()
    assert _sim(WRAPS, "sm_80", monkeypatch) == want.getvalue()


def test_the_band_matrices_are_not_emitted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ops that only build a band `shift_dot` reads as a stencil (`dead_band_ops`) are skipped: a05's
    max-pool kept a shared-memory conversion of its shift matrix's aranges, two barriers each, though the
    stencil reads none of it (17 barriers a window row -> 11); the taps a03's blur reads stay."""
    from tilelang.backend.codegen import shift_dot

    def bars() -> tuple[int, int]:
        pool = _ptx(_pool(), "pool3").count("bar.sync")
        blur = _ptx(_blur("let x = zeros::<f32>([64, 128]); let w = zeros::<f32>([5]);"
                          " let mut y = zeros::<f32>([64, 128]);"
                          " blur_cols::<32, 64>(y.partition([32, 64]), &x, &w).sync();"), "blur_cols")
        return pool, blur.count("fma.rn.f32")  # (a tap an FMA: the taps are still read)

    now = bars()
    monkeypatch.setattr(shift_dot, "dead_band_ops", lambda em, more=None: frozenset())
    before = bars()
    assert now[0] < before[0] and now[1] == before[1] > 0, (now, before)


# one line a product: a [1, 16] row (a b band: +1 and -3) and the same row as a [16, 1] column under an a band;
# an infinity alone in row 0 (moved: inf; elsewhere NaN), a NaN in row 4, -inf in row 5, -0.0 in row 2
ROW = """
kernel fn sh<const N: i32>(y: &mut Tensor<f32, [1, N]>, z: &mut Tensor<f32, [1, N]>, c: &mut Tensor<f32, [N, 1]>,
                           x: &Tensor<f32, [?, ?]>) {
    let t = x.partition([1, N]).load([block_id(0), 0]);
    let s = (arange::<i32>(N).reshape([N, 1]) + 1 == arange::<i32>(N).reshape([1, N])) as f32;
    let u = (arange::<i32>(N).reshape([1, N]) == arange::<i32>(N).reshape([N, 1]) - 3) as f32;
    y.store(dot(t, s));
    z.store(dot(t, u) * 2.0);
    c.store(dot(u, t.reshape([N, 1])));
}

fn main() {
    let base = arange::<f32>(96).reshape([6, 16]) - 40.0;
    let x = where(base == -35.0, base * 1.0e38, where(base == 0.0, base * -1.0,
        where(base == 27.0, base * 1.0e38 - base * 1.0e38, where(base == 50.0, base * -1.0e38, base))));
    let mut y = zeros::<f32>([6, 16]);
    let mut z = zeros::<f32>([6, 16]);
    let mut c = zeros::<f32>([96, 1]);
    sh::<16>(y.partition([1, 16]), z.partition([1, 16]), c.partition([16, 1]), &x).sync();
    print(y);
    print(z);
    print(c.reshape([6, 16]));
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_line_held_by_every_warp_shifts_by_shfl(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """hcliff7: where the other operand is one line that every warp holds whole (a05's [1, 64] row: 4 elements
    a lane, the other lanes and warps replicas), each output's band elements come from their lanes by `shfl`
    and the line's non-finite count from its lanes (one holder an element): no shared memory, no barrier. The
    same bits as the interpreter's product (both shift directions, a band on either side, inf/NaN/-0.0 rows),
    and every product of the kernel took that form."""
    import tilelang.run as run
    from tilelang.backend.codegen import shift_dot

    taken: list[bool] = []
    real = shift_dot._in_warp
    monkeypatch.setattr(shift_dot, "_in_warp", lambda *a: taken.append(real(*a)) or taken[-1])
    want = io.StringIO()
    run.execute(ROW, "cpu", out=want, name="p.tile")
    assert "NaN" in want.getvalue() and "-inf" in want.getvalue()
    assert _sim(ROW, arch, monkeypatch) == want.getvalue()
    assert taken and all(taken)


def test_the_max_pools_shift_stays_in_the_warp(monkeypatch: pytest.MonkeyPatch) -> None:
    """a05's pool3 at WO = 64: the shift of `odd` by `shfl.up` (its row in every warp) instead of shared memory
    and the row's count (11 -> 8 barriers a window row, no shared load of the shifted row)."""
    from tilelang.backend.codegen import shift_dot

    now = _ptx(_pool(), "pool3")
    monkeypatch.setattr(shift_dot, "_in_warp", lambda *a: False)
    before = _ptx(_pool(), "pool3")
    assert "shfl.sync.up" in now and "shfl.sync.up" not in before
    assert now.count("bar.sync") == before.count("bar.sync") - 3, (now.count("bar.sync"), before.count("bar.sync"))
    assert now.count("ld.shared") < before.count("ld.shared")


@pytest.mark.gpu
def test_a_line_held_by_every_warp_shifts_by_shfl_on_a_gpu() -> None:
    """The `-m gpu` check of the in-warp shift (llsim's shfl is the PTX ISA read by this project's authors): ROW
    on a card prints what the interpreter prints (NaN, infinities and -0.0 rows included)."""
    import tilelang.run as run

    want, got = io.StringIO(), io.StringIO()
    run.execute(ROW, "cpu", out=want, name="p.tile")
    run.execute(ROW, "gpu", out=got, name="p.tile")
    assert got.getvalue() == want.getvalue()
