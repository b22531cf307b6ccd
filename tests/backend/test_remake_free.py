"""Values made of aranges, constants and scalars are computed again in the layout a use wants, and a
carried value of a loop nested in a loop whose init is free learns its layout from its own yield
(hcliff3, 2026-12-06: tests/user a05's max-pool ran at 0.04x of F.max_pool2d and a03's blur rows at
0.29x of conv2d on an H100, call 22).

- `layout_assign`: a running max over two nested loops (`best = where(v > best, v, best)` in the inner
  loop, `best` a constant before both) carried the default layout; every inner iteration converted it
  into the compare's layout and back through shared memory (42 barriers in a05's kernel, 18 after).
- `convert` (`TILEC_REMAKE_FREE`): an index pattern or band matrix (`arange(N).reshape([N, 1]) + 1 ==
  arange(N).reshape([1, N])`, a blur's taps put on diagonals) was built in one layout and moved
  through shared memory into the one its product or cast reads (20 conversions of [64, 64] tiles in
  a03's blur_rows); it is now computed again there in registers: 0 conversions, 51 -> 15 barriers.

Checked on the GPU IR and the PTX, and run in llsim (sm_80 and sm_90a) against the interpreter.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = ROOT / "tests" / "user" / "programs"


def _program(name: str, main: str) -> str:
    src = (PROGRAMS / f"{name}.tile").read_text(encoding="utf-8")
    return src[:src.index("fn main()")] + "fn main() { " + main + " }\n"


MAXPOOL = _program("a05_maxpool3x3_indices",
                   "let x = zeros::<f32>([2, 112, 112]); let mut y = zeros::<f32>([2, 56, 56]);"
                   " let mut i = zeros::<i32>([2, 56, 56]);"
                   " pool3::<64>(y.partition([1, 1, 64]), i.partition([1, 1, 64]), &x).sync();")
BLUR = _program("a03_gaussian_blur_separable",
                "let x = zeros::<f32>([64, 128]); let w = zeros::<f32>([5]); let mut y = zeros::<f32>([64, 128]);"
                " blur_rows::<32, 64>(y.partition([32, 64]), &x, &w).sync();"
                " blur_cols::<32, 64>(y.partition([32, 64]), &x, &w).sync();")


def _emit(src: str, stage: str, kernel: str, tmp_path: Path) -> str:
    from tilelang.cli import run as tilec

    f = tmp_path / "p.tile"
    f.write_text(src, encoding="utf-8")
    out = tmp_path / f"out.{stage}"
    assert tilec(["emit", "--stage", stage, "--arch", "sm_90a", "--kernel", kernel, str(f), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_a_running_max_over_nested_loops_carries_the_compares_layout(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # at 4 warps, whose conversions of the [64] rows go through shared memory (a05 runs at 1 warp since
    # `lift.fewer_warps`, where a conversion each iteration costs no barrier)
    monkeypatch.setenv("TILEC_FEWER_WARPS", "0")
    gpu = _emit(MAXPOOL, "gpu", "pool3", tmp_path)
    loops = re.findall(r"= for %d[rc]\.\d+ = .*? iter\((.*?)\) : \((.*?)\) \{", gpu)
    assert len(loops) == 2
    for _, lays in loops:
        # both loops carry best and at in the slice the compare and where compute in, not the default
        assert lays.count("#slice<dim=0") == 2 and "#blocked<spt=[4]" not in lays
    # no conversion of a carried value (the old round trip at each inner iteration)
    assert not re.search(r"convert_layout %(best|at)\.", gpu)
    bars = _emit(MAXPOOL, "ptx", "pool3", tmp_path).count("bar.sync")
    assert bars <= 18  # 42 before
    monkeypatch.setenv("TILEC_NESTED_CARRY", "0")  # as before: the default layout, converted each iteration
    assert re.search(r"convert_layout %(best|at)\.", _emit(MAXPOOL, "gpu", "pool3", tmp_path))
    assert _emit(MAXPOOL, "ptx", "pool3", tmp_path).count("bar.sync") >= bars + 20


@pytest.mark.parametrize("kernel", ["blur_rows", "blur_cols"])
def test_band_matrices_are_made_in_the_layout_their_product_reads(kernel: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # the band read as a product (not `shift_dot`'s stencil, whose `dead_band_ops` skips the band's conversions
    # with the band: hcliff6): the barriers the conversions would cost
    monkeypatch.setenv("TILEC_SHIFT_DOT", "0")
    gpu = _emit(BLUR, "gpu", kernel, tmp_path)
    assert "convert_layout" not in gpu
    bars = _emit(BLUR, "ptx", kernel, tmp_path).count("bar.sync")
    monkeypatch.setenv("TILEC_REMAKE_FREE", "0")
    assert _emit(BLUR, "gpu", kernel, tmp_path).count("convert_layout") >= 10
    assert _emit(BLUR, "ptx", kernel, tmp_path).count("bar.sync") >= bars + 30  # 51 -> 15, 57 -> 21


def test_no_unread_copy_is_left(tmp_path: Path) -> None:
    """A value converted for one use and made again for another: neither the original nor a copy that
    nothing reads stays (the code generator would still compute or move it)."""
    gpu = _emit(MAXPOOL, "gpu", "pool3", tmp_path)
    defined = re.findall(r"^\s*(%[\w.]+) = (?:reshape|broadcast|add|eq|cast|arange)", gpu, re.M)
    for v in defined:
        assert re.search(re.escape(v) + r"[,\s:]", gpu.split(v + " =", 1)[1]), v  # (printed names are unique)


REMADE = """
kernel fn mix<const N: i32>(y: &mut Tensor<f32, [N, N]>, x: &Tensor<f32, [?, ?]>, w: &Tensor<f32, [?]>,
                            idx: &mut Tensor<i32, [1, N]>) {
    let p = x.partition([N, N]);
    let i = block_id(0);
    let off = arange::<i32>(N).reshape([N, 1]) - arange::<i32>(N).reshape([1, N]);
    let pw = w.partition([1]);
    let band = where(off == -1, pw.load([0]).item(), where(off == 0, pw.load([1]).item(),
        where(off == 1, pw.load([2]).item(), 0.0)));
    y.store(dot(p.load([i, 0]), band) + (off as f32) * 0.5);
    let mut best = full::<f32>([N], f32::MIN);
    let mut at = zeros::<i32>([N]);
    for r in 0..2 {
        let t = p.load([i, r]);
        let odd = where(arange::<i32>(N).reshape([1, N]) % 2 == 1, t, 0.0).sum(0);
        let shifted = dot(odd.reshape([1, N]), (arange::<i32>(N).reshape([N, 1]) + 1
            == arange::<i32>(N).reshape([1, N])) as f32).reshape([N]);
        for c in 0..3 {
            let v = if c == 0 { shifted } else { t.max(0) - (c as f32) };
            let take = v > best;
            best = where(take, v, best);
            at = where(take, r * 10 + c, at);
        }
    }
    idx.store((at + (best > 0.0) as i32 * 100).reshape([1, N]));
}

fn main() {
    let x = randn::<f32>([64, 64], 5);
    let w = arange::<f32>(3) + 1.0;
    let mut y = zeros::<f32>([64, 32]);
    let mut idx = zeros::<i32>([2, 32]);
    mix::<32>(y.partition([32, 32]), &x, &w, idx.partition([1, 32])).sync();
    print(y.sum(), y.max(), idx.sum(), idx.max());
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulated_gpu_computes_the_interpreters_values(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(HERE))
    import llsim

    import tilelang.run as run

    want = io.StringIO()
    run.execute(REMADE, "cpu", out=want, name="remade.tile")
    assert len(want.getvalue().split()) == 4
    got = io.StringIO()
    monkeypatch.setattr(run, "make_device", lambda choice, out: llsim.sim_runtime_device(arch))
    run.execute(REMADE, "cpu", out=got, name="remade.tile")
    assert got.getvalue() == want.getvalue()
