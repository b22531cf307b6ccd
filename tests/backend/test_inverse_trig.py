"""`asin`, `acos`, `atan` and `atan2` (huser19: a quaternion slerp, an angle between vectors or a polar
coordinate had only the help "Tile has no inverse trigonometric functions"). `atan2` is an `ir.ElemOp`: f32 (f16,
bf16) by `interp/atan32.py`'s f32 algorithm on both engines (hnum; `TILEC_ATAN2_F32=0`: NumPy's `arctan2` in f64
rounded once on the interpreter, `f64math.atan2` widened and rounded once on the GPU), f64 by those in f64;
`asin`, `acos` and `atan` lower to it (`lower/intrinsics.inverse_trig`), so both engines run one formula. The
f64 atan2 is checked JIT-compiled for this CPU against NumPy (specials included); kernels on the interpreter
against NumPy, in the NVPTX simulator (f32 bit for bit, f64 within two ulp), and through ptxas."""

from __future__ import annotations

import io
import itertools
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang.backend import f64math
from tilelang.interp import atan32
from tilelang.interp.numeric import atan2_f32

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "user"))


def test_the_f64_atan2_is_numpy_s_within_two_ulp() -> None:
    from test_f64math import HostEmitter, compile_loop, loop_module

    em = HostEmitter()
    fn = compile_loop(loop_module(em, f64math.atan2(em, "%x", "%y"), arity=2), arity=2)
    r = np.random.default_rng(19)
    n = 100_000
    sp = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, 1e308]
    pairs = np.array(list(itertools.product(sp, sp))).T
    y = np.concatenate([r.normal(0, 1, n), r.uniform(-1e300, 1e300, n), r.normal(0, 1e-300, n), pairs[0]])
    x = np.concatenate([r.normal(0, 1, n), r.uniform(-1e300, 1e300, n), r.normal(0, 1, n), pairs[1]])
    got = np.empty_like(y)
    fn(y.ctypes.data, x.ctypes.data, got.ctypes.data, y.size)
    want = np.arctan2(y, x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    fin = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[fin]), np.signbit(want[fin]))   # the signs of zeros too
    big = np.abs(want[fin]) > 1e-300
    rel = np.abs(got[fin][big] - want[fin][big]) / np.abs(want[fin][big])
    assert rel.max() <= 4.5e-16, rel.max()   # two ulp
    special = got[-pairs.shape[1]:]
    np.testing.assert_array_equal(special, np.arctan2(pairs[0], pairs[1]))   # IEEE's table exactly


PROGRAM = """
kernel fn trig<const B: i32>(a: &mut Tensor<f32, [B]>, b: &mut Tensor<f32, [B]>, c: &mut Tensor<f32, [B]>,
        d: &mut Tensor<f32, [B]>, e: &mut Tensor<f16, [B]>, g: &mut Tensor<f64, [B]>, h: &mut Tensor<f64, [B]>,
        x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    let t = x.load_like(a);
    let s = y.load_like(a);
    a.store(asin(t));
    b.store(t.acos());
    c.store(atan(s * 10.0));
    d.store(atan2(s, t));
    e.store(asin(t as f16));
    g.store((s as f64).atan2(t as f64));
    h.store(acos(t as f64));
}

fn main() {
    let n = 150;
    let i = arange::<i32>(n);
    let x = where(i == 0, -0.0, where(i == 1, 1.0, where(i == 2, -1.0, rand::<f32>([n], 1) * 2.2 - 1.1)));
    let y = where(i < 3, 0.0, where(i == 3, f32::INFINITY, randn::<f32>([n], 2)));
    let mut a = zeros::<f32>([n]);
    let mut b = zeros::<f32>([n]);
    let mut c = zeros::<f32>([n]);
    let mut d = zeros::<f32>([n]);
    let mut e = zeros::<f16>([n]);
    let mut g = zeros::<f64>([n]);
    let mut h = zeros::<f64>([n]);
    trig(a.partition([64]), b.partition([64]), c.partition([64]), d.partition([64]), e.partition([64]),
         g.partition([64]), h.partition([64]), &x, &y).sync();
    print(atan2(1.0, -1.0), asin(x).max() != asin(x).max(), y.atan2(x).shape());
}
"""


def _run(tmp_path: Path, device: object | None = None) -> tuple[dict[str, np.ndarray], str]:
    from userprog import program_tensors

    f = tmp_path / "trig.tile"
    f.write_text(PROGRAM, encoding="utf-8")
    out = io.StringIO()
    real = run.make_device
    if device is not None:
        run.make_device = lambda choice, o: device  # type: ignore[assignment]
    try:
        ex = run.execute(str(f), "cpu", out=out)
    finally:
        run.make_device = real  # type: ignore[assignment]
    return program_tensors(ex), out.getvalue()


def _check(t: dict[str, np.ndarray], out: str) -> None:
    x, y = t["x"].astype(np.float64), t["y"].astype(np.float64)
    with np.errstate(all="ignore"):
        for k, want in (("a", np.arcsin(x)), ("b", np.arccos(x)), ("c", np.arctan(t["y"] * np.float32(10))),
                        ("d", np.arctan2(y, x))):
            np.testing.assert_allclose(t[k], want, rtol=2.5e-7, atol=1e-7, equal_nan=True, err_msg=k)
        # f32: `interp/atan32.py`'s algorithm (hnum), within 1.46 ulp; `TILEC_ATAN2_F32=0`: f64's rounded once
        want_d = atan2_f32(t["y"], t["x"]) if atan32.enabled() else np.arctan2(y, x).astype(np.float32)
        np.testing.assert_array_equal(t["d"], want_d)
        np.testing.assert_allclose(t["e"], np.arcsin(t["x"].astype(np.float16).astype(np.float64)), rtol=1e-3,
                                   equal_nan=True)
        np.testing.assert_allclose(t["g"], np.arctan2(y, x), rtol=5e-16, atol=0)
        np.testing.assert_allclose(t["h"], np.arccos(x), rtol=1e-15, atol=1e-15, equal_nan=True)
    assert np.isnan(t["a"]).sum() > 5 and t["d"][0] == np.float32(np.pi) and t["d"][1] == 0.0
    assert t["b"][2] == np.float32(np.pi) and t["a"][1] == np.float32(np.pi / 2)
    assert out == "2.3561945 true [150]\n"


def test_the_interpreter_gives_numpy_s_angles(tmp_path: Path) -> None:
    _check(*_run(tmp_path))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_simulated_gpu_gives_the_same_bits(arch: str, tmp_path: Path) -> None:
    import llsim

    want, _ = _run(tmp_path)
    got, out = _run(tmp_path, llsim.sim_runtime_device(arch))
    for k, w in want.items():   # the same values (NaN where NaN: its sign bit is no part of the value)
        if w.dtype == np.float64:   # f64math.atan2 against NumPy's: within two ulp (f32: rounded to the same)
            np.testing.assert_allclose(got[k], w, rtol=5e-16, atol=0, equal_nan=True, err_msg=k)
        else:
            np.testing.assert_array_equal(got[k], w, err_msg=k)
        fin = ~np.isnan(w.astype(np.float64)) if w.dtype.kind == "f" else np.ones(w.shape, bool)
        np.testing.assert_array_equal(np.signbit(got[k][fin]), np.signbit(w[fin]), err_msg=k)   # -0.0 too
    _check(got, out)


@pytest.mark.gpu
def test_the_gpu_gives_the_interpreter_s_angles(tmp_path: Path) -> None:
    """On a real GPU (the `-m gpu` suite; benchmarks/huser19_device.sh): what the simulator gives."""
    from userprog import gpu_tensors_match

    f = tmp_path / "k.tile"
    f.write_text(PROGRAM, encoding="utf-8")
    want, _ = _run(tmp_path)
    _check(*gpu_tensors_match(f, want))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_ptx_assembles(arch: str, tmp_path: Path) -> None:
    from userprog import tilec

    f = tmp_path / "trig.tile"
    f.write_text(PROGRAM, encoding="utf-8")
    r = tilec("emit", str(f), "--stage", "ptx", "--arch", arch, "-o", str(tmp_path / "k.ptx"))
    assert r.returncode == 0, r.stderr
    a = subprocess.run(["ptxas", "-arch", arch, "-o", str(tmp_path / "k.o"), str(tmp_path / "k.ptx")],
                       capture_output=True, text=True)
    assert a.returncode == 0, a.stderr


def test_numpy_s_names_lead_to_tile_s(tmp_path: Path) -> None:
    from tilelang import driver

    f = tmp_path / "k.tile"
    f.write_text("fn main() {\n    let x = ones::<f32>([4]) * 0.5;\n    print(arcsin(x), arctan2(x, x));\n}\n",
                 encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0102", "E0102"]
    assert any("`asin(x)`" in h for h in errs[0].help) and any("`atan2(y, x)`" in h for h in errs[1].help)
    fixed = tmp_path / "fixed.tile"
    fixed.write_text(f.read_text(encoding="utf-8").replace("arcsin(x)", "asin(x)").replace("arctan2", "atan2"),
                     encoding="utf-8")
    out = io.StringIO()
    run.execute(str(fixed), "cpu", out=out)
    assert out.getvalue() == "Tensor<f32, [4]> [0.5235988, 0.5235988, 0.5235988, 0.5235988] " \
                             "Tensor<f32, [4]> [0.7853982, 0.7853982, 0.7853982, 0.7853982]\n"
