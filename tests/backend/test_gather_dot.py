"""A product by a one-hot matrix of index comparisons is the gather it is (`codegen/gather_dot.py`,
`TILEC_GATHER_DOT`, hcliff8 2026-12-07): tests/user t09's bilinear resize builds its column weights as
`where(k == x0, 1.0 - lx, 0.0) + where(k == x1, lx, 0.0)` and multiplies a row by them (a tile has no load at
per-element indices); the FMA engine built the [128, 128] matrix, staged it in shared memory and ran 128 FMAs an
output. Now the row alone goes through shared memory and an output runs one FMA a distinct index its terms
name, with the FMA loop's value bit for bit (NaN where another element of its line is not finite)."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
T09 = HERE.parents[1] / "tests" / "user" / "programs" / "t09_bilinear_resize.tile"

# five one-hot products of a [2, 16] tile (or one row of it): t09's two weighted terms on the right (indices
# equal, swapped, out of range), a nested `where` on the left with a reversed index `3 - k` and a constant
# weight, a transpose of comparisons cast to f32 with an offset, i64 indices and -0.0 zeros on one line, a
# one-hot of ones on the left of a column, y10's sum of two diagonals (not `shift_dot`'s nested form) and a
# [N] index. An infinity in row 0, a NaN and -inf in row 2, -0.0 in row 1.
GATHERS = """
kernel fn gat<const N: i32>(y: &mut Tensor<f32, [2, N]>, z: &mut Tensor<f32, [N, 2]>, w: &mut Tensor<f32, [2, N]>,
                            u: &mut Tensor<f32, [1, N]>, v: &mut Tensor<f32, [N, 1]>, q: &mut Tensor<f32, [2, N]>,
                            x: &Tensor<f32, [?, ?]>, ix: &Tensor<i32, [?]>, lw: &Tensor<f32, [?]>) {
    let t = x.partition([2, N]).load([block_id(0), 0]);
    let i0 = ix.partition([N]).load([0]).reshape([1, N]);
    let i1 = minimum(i0 + 1, 13);
    let i2 = ix.partition([N]).load([1]).reshape([1, N]);
    let f = lw.partition([N]).load([0]).reshape([1, N]);
    let k = arange::<i32>(N).reshape([N, 1]);
    let kc = arange::<i32>(N).reshape([1, N]);
    y.store(dot(t, where(k == i0, 1.0 - f, 0.0) + where(k == i1, f, 0.0)));
    let e = where(kc == i0.reshape([N, 1]), f.reshape([N, 1]), where(3 - kc == i2.reshape([N, 1]), -2.5, 0.0));
    z.store(dot(e, t.transpose()));
    w.store(dot(t, ((kc + 2 == i2.reshape([N, 1])) as f32 + (kc == i0.reshape([N, 1])) as f32).transpose()));
    let r = x.partition([1, N]).load([3 * block_id(0), 0]);
    let k64 = arange::<i64>(N).reshape([N, 1]);
    u.store(dot(r, where(k64 == i2 as i64, 0.75, -0.0) + where(k == i0, f, -0.0)));
    v.store(dot(where(kc == i1.reshape([N, 1]), 1.0, 0.0), r.reshape([N, 1])));
    let i3 = ix.partition([N]).load([1]);
    q.store(dot(t, where(k == kc + 1, 1.0, 0.0) + where(k + 1 == kc, 1.0, 0.0) + where(k == i3, 0.5, 0.0)));
}

fn main() {
    let base = arange::<f32>(64).reshape([4, 16]) / 8.0 - 2.5;
    let x = where(base == -1.875, base * 1.0e38 * 1.0e38, where(base == 3.0, base * 0.0 / 0.0,
        where(base == 3.375, base * -1.0e38 * 1.0e38, where(base == -0.5, base * 0.0, base))));
    let ix = (arange::<i32>(32) * 7) % 19 - 2;
    let lw = (arange::<f32>(16) * 0.37) % 1.0;
    let mut y = zeros::<f32>([4, 16]);
    let mut z = zeros::<f32>([32, 2]);
    let mut w = zeros::<f32>([4, 16]);
    let mut u = zeros::<f32>([2, 16]);
    let mut v = zeros::<f32>([32, 1]);
    let mut q = zeros::<f32>([4, 16]);
    gat::<16>(y.partition([2, 16]), z.partition([16, 2]), w.partition([2, 16]), u.partition([1, 16]),
              v.partition([16, 1]), q.partition([2, 16]), &x, &ix, &lw).sync();
    print(y);
    print(z);
    print(w);
    print(u);
    print(v);
    print(q);
}
"""


# five more forms: a08's `||` of two comparisons with the column index on both sides, o03's / y05's `-` of two
# one-hots, an `&` with a bool constant along k (on the left), an index comparison under order comparisons of k (a
# bound of its own, a column-dependent one turned round), and one-hots times / over weights (0 * inf, 0 / 0)
GATHERS2 = """
kernel fn gat2<const N: i32>(y: &mut Tensor<f32, [2, N]>, z: &mut Tensor<f32, [2, N]>, w: &mut Tensor<f32, [N, 2]>,
                             q: &mut Tensor<f32, [2, N]>, s: &mut Tensor<f32, [2, N]>, x: &Tensor<f32, [?, ?]>,
                             ix: &Tensor<i32, [?]>,
                             lw: &Tensor<f32, [?]>) {
    let t = x.partition([2, N]).load([block_id(0), 0]);
    let i0 = ix.partition([N]).load([0]).reshape([1, N]);
    let i2 = ix.partition([N]).load([1]).reshape([1, N]);
    let f = lw.partition([N]).load([0]).reshape([1, N]);
    let k = arange::<i32>(N).reshape([N, 1]);
    let j = arange::<i32>(N).reshape([1, N]);
    // a08's neighbours: an `||` of two comparisons with the column index on both sides
    y.store(dot(t, ((k - j == 1) || (j - k == 1)) as f32));
    // o03's rotation / y05's difference: a `-` of two one-hots
    z.store(dot(t, where(j == k + 3, 1.0, 0.0) - where(j + 3 == k, f, 0.0)));
    // b09's pick under a bool constant along k, on the left: `&` with a [N, 1] bool
    let inside = i2.reshape([N, 1]) > 2;
    w.store(dot(where((i0.reshape([N, 1]) == j) & inside, 1.0, 0.0), t.transpose()));
    // an index comparison under order comparisons of k (its own bound, a column-dependent one turned round)
    q.store(dot(t, where((k == i0) & (k < 9) & (i2 <= 2 * k + j), f, 0.0) + where(k == i2, 0.5, 0.0)));
    // scaled: a one-hot times a weight with an infinity, plus one over a weight with a zero (0 * inf, 0 / 0:
    // NaN at every other k, so the whole column NaN)
    let g = where(j == 3, f32::INFINITY, f);
    let h = where(j == 5, 0.0, f + 1.0);
    s.store(dot(t, (k == i0) as f32 * g + where(k == i2, 1.0, 0.0) / h));
}

fn main() {
    let base = arange::<f32>(64).reshape([4, 16]) / 8.0 - 2.5;
    let x = where(base == -1.875, base * 1.0e38 * 1.0e38, where(base == 3.0, base * 0.0 / 0.0,
        where(base == 3.375, base * -1.0e38 * 1.0e38, where(base == -0.5, base * 0.0, base))));
    let ix = (arange::<i32>(32) * 7) % 19 - 2;
    let lw = (arange::<f32>(16) * 0.37) % 1.0 - 0.25;
    let mut y = zeros::<f32>([4, 16]);
    let mut z = zeros::<f32>([4, 16]);
    let mut w = zeros::<f32>([32, 2]);
    let mut q = zeros::<f32>([4, 16]);
    let mut s = zeros::<f32>([4, 16]);
    gat2::<16>(y.partition([2, 16]), z.partition([2, 16]), w.partition([16, 2]), q.partition([2, 16]),
               s.partition([2, 16]), &x, &ix, &lw).sync();
    print(y);
    print(z);
    print(w);
    print(q);
    print(s);
}
"""


def _sim(src: str, arch: str, monkeypatch: pytest.MonkeyPatch) -> str:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    got = io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
        run.execute(src, "cpu", out=got, name="p.tile")
    return got.getvalue()


def _numbers(text: str) -> list[float]:
    return [float(t) for t in re.findall(r"-?inf|NaN|-?\d+\.\d+(?:e[-+]?\d+)?", text)]


@pytest.mark.parametrize(("name", "arch"), [
    ("GATHERS", "sm_90a"), ("GATHERS2", "sm_80"),
    pytest.param("GATHERS", "sm_80", marks=pytest.mark.heavy),
    pytest.param("GATHERS2", "sm_90a", marks=pytest.mark.heavy)])
def test_the_simulated_gathers_are_the_interpreters_products(name: str, arch: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every product of the program takes the gather and prints the interpreter's values (its matmul sums in
    its own order: within f32's rounding; NaN and infinities at the same places)."""
    import numpy as np

    import tilelang.run as run

    src = {"GATHERS": GATHERS, "GATHERS2": GATHERS2}[name]
    taken = _spy(monkeypatch)
    got = _sim(src, arch, monkeypatch)
    assert taken == [True] * {"GATHERS": 6, "GATHERS2": 5}[name]
    want = io.StringIO()
    run.execute(src, "cpu", out=want, name="p.tile")
    a, b = np.array(_numbers(got)), np.array(_numbers(want.getvalue()))
    assert a.shape == b.shape == ({"GATHERS": 64 + 64 + 64 + 32 + 32 + 64, "GATHERS2": 5 * 64}[name],)
    assert 0 < np.isnan(a).sum() < a.size and np.isinf(a).any() and (a[np.isfinite(a)] != 0).sum() > 50
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.heavy  # (~5-10 s: the FMA loops over the [16, 16] matrices in llsim; the test above covers the path)
@pytest.mark.parametrize("name", ["GATHERS", "GATHERS2"])
def test_the_simulated_gathers_are_the_fma_loops_bit_for_bit(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The program prints what the FMA loop over the matrix printed (`TILEC_GATHER_DOT=0`): the same bits."""
    src = {"GATHERS": GATHERS, "GATHERS2": GATHERS2}[name]
    taken = _spy(monkeypatch)
    got = _sim(src, "sm_80", monkeypatch)
    n = len(taken)
    assert n >= 4 and all(taken)
    monkeypatch.setenv("TILEC_GATHER_DOT", "0")
    taken.clear()
    assert _sim(src, "sm_80", monkeypatch) == got
    assert taken == [False] * n


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    from tilelang.backend.codegen import gather_dot, mma

    taken: list[bool] = []

    def spy(em, op):  # type: ignore[no-untyped-def]
        taken.append(gather_dot.gather_dot(em, op))
        return taken[-1]

    monkeypatch.setattr(mma, "gather_dot", spy)
    return taken


# one matrix form a case at other shapes (several outputs a thread, index and weight tiles staged where no
# thread holds them at its outputs), on both sides of the product: new == old bits (`TILEC_GATHER_DOT=0`)
SHAPES = """
kernel fn gk<const M: i32, const K: i32, const N: i32>(y: &mut Tensor<f32, [M, N]>, z: &mut Tensor<f32, [M, N]>,
        x: &Tensor<f32, [?, ?]>, ix: &Tensor<i32, [?]>, lw: &Tensor<f32, [?]>) {
    let t = x.partition([M, K]).load([block_id(0), 0]);
    let i0 = ix.partition([N]).load([0]).reshape([1, N]);
    let i1 = ix.partition([N]).load([1]).reshape([1, N]);
    let f = lw.partition([N]).load([0]).reshape([1, N]);
    let k = arange::<i32>(K).reshape([K, 1]);
    let j = arange::<i32>(N).reshape([1, N]);
    let m = MATRIX;
    y.store(dot(t, m));
    z.store(dot(m.transpose(), t.transpose()).transpose());
}
fn main() {
    let r = randn::<f32>([2 * MM, KK], 5);
    let x = where(arange::<f32>(2 * MM * KK).reshape([2 * MM, KK]) == 3.0, r * 1.0e38 * 1.0e38, r);
    let ix = (arange::<i32>(2 * NN) * 7) % (KK + 3) - 2;
    let lw = (arange::<f32>(NN) * 0.37) % 1.0 - 0.3;
    let mut y = zeros::<f32>([2 * MM, NN]);
    let mut z = zeros::<f32>([2 * MM, NN]);
    gk::<MM, KK, NN>(y.partition([MM, NN]), z.partition([MM, NN]), &x, &ix, &lw).sync();
    print(y);
    print(z);
}
"""


@pytest.mark.heavy  # (~2-6 s a case in llsim, twice; GATHERS and GATHERS2 cover the forms at [2, 16])
@pytest.mark.parametrize(("m", "k", "n", "arch", "matrix"), [
    (4, 64, 32, "sm_80", "where(k == i0, 1.0 - f, 0.0) + where(k == i1, f, 0.0)"),
    (2, 32, 32, "sm_90a", "where((k == i0) || (k == j + 1), f, where(k + 2 == i1, 2.0, 0.0))"),
    (4, 16, 8, "sm_90a", "where((k == i0) & (k < 5) & (j > 1), f, 0.0) + where(K - 1 - k == i1, -1.5, 0.0)"),
    (1, 32, 16, "sm_80",
     "(k == i0) as f32 * where(j == 2, f32::INFINITY, f) - where(k == i1, 1.0, 0.0) / where(j == 1, 0.0, f)"),
])
def test_gathers_at_other_shapes_are_the_fma_loops_bit_for_bit(m: int, k: int, n: int, arch: str, matrix: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    src = SHAPES.replace("MATRIX", matrix).replace("MM", str(m)).replace("KK", str(k)).replace("NN", str(n))
    taken = _spy(monkeypatch)
    got = _sim(src, arch, monkeypatch)
    assert taken == [True, True]
    monkeypatch.setenv("TILEC_GATHER_DOT", "0")
    assert _sim(src, arch, monkeypatch) == got
    assert "NaN" in got


def _resize_ptx(arch: str = "sm_90a") -> str:
    from tilelang import driver
    from tilelang.backend import emit_ptx

    src = T09.read_text(encoding="utf-8")
    src = src[:src.index("fn main()")] + (
        "fn main() { let x = zeros::<f32>([2, 64, 64]); let mut y = zeros::<f32>([2, 96, 96]);"
        " resize_row::<128>(y.partition([1, 1, 128]), &x, 0.5, 0.5).sync(); }\n")
    k = next(x for x in driver.compile(src, "ir").output if x.name == "resize_row")
    return emit_ptx(k, arch)


def test_the_resizes_weights_are_no_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """t09 at 128 columns: no [128, 128] matrix (its 297 setp / 271 selp, 64 KB of shared memory, a barrier pair
    a conversion) and no 128-step FMA loop; the row through shared memory once (one barrier)."""
    now = _resize_ptx()
    monkeypatch.setenv("TILEC_GATHER_DOT", "0")
    before = _resize_ptx()
    assert now.count("bar.sync") == 1 < before.count("bar.sync")
    assert now.count("st.shared") == 1 < before.count("st.shared")
    assert now.count("setp.") * 2 < before.count("setp.")  # (each path computes its indices: 2 copies)
    assert 8 <= now.count("fma.rn.f32") <= 16  # 4 outputs a thread, 2 indices each (fast and counting paths)


def test_explain_and_the_dead_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--explain` names the gathers; the ops that only build the one-hot matrices are skipped, their index and
    weight values are kept (the gathers read them)."""
    from types import SimpleNamespace

    from tilelang import driver
    from tilelang.backend import explain, lower_gpu
    from tilelang.backend.codegen import gather_dot, shift_dot
    from tilelang.backend.gpu import nodes as g
    from tilelang.ir import nodes as ir

    k = next(x for x in driver.compile(GATHERS, "ir").output if x.name == "gat")
    gk = lower_gpu(k, "sm_90a", {})
    assert explain.gathers(gk) == 6
    assert "6 products by a one-hot matrix as gathers" in explain.describe(gk)
    em = SimpleNamespace(k=gk)
    dead = shift_dot.dead_band_ops(em, gather_dot.matrix_read)
    ops = list(g.walk(gk.body))
    cmp = [o for o in ops if isinstance(o, ir.Elementwise) and o.op is ir.ElemOp.EQ]
    assert len(cmp) == 10 and all(id(o) in dead for o in cmp)  # (12 written, two the same)
    defs = shift_dot.defining_ops(em)
    read = [v for o in ops if (hot := gather_dot.gather_of(em, o)) for v in gather_dot.sources(hot[0], hot[1])]
    assert len(read) == 14 and not any(id(defs[v.id]) in dead for v in read)
    monkeypatch.setenv("TILEC_GATHER_DOT", "0")
    assert explain.gathers(gk) == 0 and "gather" not in explain.describe(gk)
    assert not any(id(o) in shift_dot.dead_band_ops(SimpleNamespace(k=gk), gather_dot.matrix_read) for o in cmp)


NOT_ONE_HOT = """
kernel fn no<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, ?]>, ix: &Tensor<i32, [?]>) {
    let t = x.partition([1, N]).load([0, 0]);
    let i0 = ix.partition([N]).load([0]).reshape([1, N]);
    let k = arange::<i32>(N).reshape([N, 1]);
    let kc = arange::<i32>(N).reshape([1, N]);
    y.store(dot(t, where(k == i0, 1.0, 0.5)));                       // nonzero off the indices
    y.store(dot(t, where(2 * k == i0, 1.0, 0.0)));                   // not one index a comparison
    y.store(dot(t, where(k == i0 + k, 1.0, 0.0)));                   // the index varies along k
    y.store(dot(t, where(k == i0, t.reshape([N, 1]).broadcast([N, N]), 0.0)));   // the weight varies along k
    y.store(dot(t, 2.0 / (k == i0) as f32));                         // a weight over the one-hot (2 / 0 is inf)
    y.store(dot(t, where(k < i0, 1.0, 0.0)));                        // not a comparison for equality
}
"""


def test_what_is_not_a_one_hot_matrix_stays_a_product() -> None:
    from types import SimpleNamespace

    from tilelang import driver
    from tilelang.backend import lower_gpu
    from tilelang.backend.codegen import gather_dot
    from tilelang.backend.gpu import nodes as g
    from tilelang.ir import nodes as ir

    main = ("fn main() { let x = zeros::<f32>([1, 16]); let i = zeros::<i32>([16]); let mut y = zeros::<f32>([1, 16]);"
            " no::<16>(y.partition([1, 16]), &x, &i).sync(); }\n")
    k = next(x for x in driver.compile(NOT_ONE_HOT + main, "ir").output if x.name == "no")
    gk = lower_gpu(k, "sm_90a", {})
    em = SimpleNamespace(k=gk)
    prods = [o for o in g.walk(gk.body) if isinstance(o, ir.Mma | g.DotOp)]
    assert len(prods) == 6
    assert [gather_dot.gather_of(em, o) for o in prods] == [None] * 6


@pytest.mark.gpu
def test_the_gathers_on_a_gpu_are_the_interpreters_products() -> None:
    """The `-m gpu` check of the gathers (llsim reads the PTX ISA as this project's authors do): GATHERS on a
    card prints the interpreter's values, NaN and infinities at the same places."""
    import numpy as np

    import tilelang.run as run

    want, got = io.StringIO(), io.StringIO()
    run.execute(GATHERS, "cpu", out=want, name="p.tile")
    run.execute(GATHERS, "gpu", out=got, name="p.tile")
    a, b = np.array(_numbers(got.getvalue())), np.array(_numbers(want.getvalue()))
    assert a.shape == b.shape and np.isnan(a).any()
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
