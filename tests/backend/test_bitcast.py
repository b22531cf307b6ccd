"""`x.to_bits()` and `from_bits::<T>(u)` (huser19): a float's bits as the unsigned integer of its width and back,
the IR's `Cast` with `bits` set. The interpreter's answer is NumPy's `.view` (bf16: the high half of its f32
storage); the NVPTX simulator at sm_90a and sm_80 gives the same bits (an LLVM `bitcast`, f16 through `half`,
bf16 by a shift of the f32 register's bits); ptxas assembles both; the checker's refusals have helps."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run
from tilelang import driver

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "user"))

PROGRAM = """
kernel fn bits<const B: i32>(u: &mut Tensor<u32, [B]>, f: &mut Tensor<f32, [B]>, ud: &mut Tensor<u64, [B]>,
        fd: &mut Tensor<f64, [B]>, uh: &mut Tensor<u16, [B]>, fh: &mut Tensor<f16, [B]>, ub: &mut Tensor<u16, [B]>,
        fb: &mut Tensor<bf16, [B]>, x: &Tensor<f32, [?]>, r: &Tensor<u32, [?]>, d: &Tensor<f64, [?]>,
        rd: &Tensor<u64, [?]>, h: &Tensor<f16, [?]>, rh: &Tensor<u16, [?]>, b: &Tensor<bf16, [?]>) {
    let t = x.load_like(u);
    let s = t.reshape([B, 1]).max(1).reshape([B]);             // (another value of the same elements)
    u.store(s.to_bits() ^ (x.partition([B]).load([0]).max(0).to_bits() & 0u32));
    f.store(from_bits::<f32>(r.load_like(u)));
    ud.store(d.load_like(u).to_bits());
    fd.store(from_bits::<f64>(rd.load_like(u)));
    uh.store(h.load_like(u).to_bits());
    fh.store(from_bits::<f16>(rh.load_like(u)));
    ub.store(b.load_like(u).to_bits());
    fb.store(from_bits::<bf16>(rh.load_like(u)));
}

kernel fn scalars(z: &mut Tensor<u32, [2]>, x: &Tensor<f32, [?]>) {
    let one = from_bits::<f32>(0x3F800000);
    let v = x.partition([1]).load([1]).item() + one;
    z.store(where(arange::<i32>(2) == 0, v.to_bits(), one.to_bits()));
}

fn main() {
    let n = 200;
    let i = arange::<i32>(n);
    let special = where(i == 0, -0.0, where(i == 1, f32::INFINITY, where(i == 2, f32::NEG_INFINITY,
                  where(i == 3, 1e-40, where(i == 4, -3.4e38, 0.0)))));
    let x = where(i < 5, special, randn::<f32>([n], 1) * 1000.0);
    let r = (arange::<u32>(n) * 2654435761u32) & 0xBFFFFFFFu32;    // finite f32s, subnormals among them
    let d = (x as f64) * 1.0000001;
    let rd = ((arange::<u64>(n) * 0x9E3779B97F4A7C15u64) & 0xBFFFFFFFFFFFFFFFu64);
    let h = x as f16;
    let rh = ((arange::<u32>(n) * 40503u32) & 0xBFFFu32) as u16;   // finite f16s and bf16s
    let b = x as bf16;
    let mut u = zeros::<u32>([n]);
    let mut f = zeros::<f32>([n]);
    let mut ud = zeros::<u64>([n]);
    let mut fd = zeros::<f64>([n]);
    let mut uh = zeros::<u16>([n]);
    let mut fh = zeros::<f16>([n]);
    let mut ub = zeros::<u16>([n]);
    let mut fb = zeros::<bf16>([n]);
    bits(u.partition([64]), f.partition([64]), ud.partition([64]), fd.partition([64]), uh.partition([64]),
         fh.partition([64]), ub.partition([64]), fb.partition([64]), &x, &r, &d, &rd, &h, &rh, &b).sync();
    let mut z = zeros::<u32>([2]);
    scalars(z.partition([2]), &x).sync();
    print(z);
}
"""


def _run(tmp_path: Path, device: object | None = None) -> tuple[dict[str, np.ndarray], str]:
    from userprog import program_tensors

    f = tmp_path / "bits.tile"
    f.write_text(PROGRAM, encoding="utf-8")
    out = io.StringIO()
    if device is None:
        ex = run.execute(str(f), "cpu", out=out)
    else:
        real = run.make_device
        run.make_device = lambda choice, o: device  # type: ignore[assignment]
        try:
            ex = run.execute(str(f), "cpu", out=out)
        finally:
            run.make_device = real  # type: ignore[assignment]
    return program_tensors(ex), out.getvalue()


def _check(t: dict[str, np.ndarray], out: str) -> None:
    x, h = t["x"], t["h"]
    np.testing.assert_array_equal(t["u"], x.view(np.uint32))
    assert t["u"][0] == 0x80000000 and t["u"][1] == 0x7F800000 and t["u"][3] == x[3:4].view(np.uint32)[0] != 0
    np.testing.assert_array_equal(t["f"].view(np.uint32), t["r"])
    np.testing.assert_array_equal(t["ud"], t["d"].view(np.uint64))
    np.testing.assert_array_equal(t["fd"].view(np.uint64), t["rd"])
    np.testing.assert_array_equal(t["uh"], h.view(np.uint16))
    np.testing.assert_array_equal(t["fh"].view(np.uint16), t["rh"])
    b32 = t["b"].astype(np.float32).view(np.uint32)   # bf16 values in f32 storage: the low half is zero
    assert not (b32 & 0xFFFF).any()
    np.testing.assert_array_equal(t["ub"], (b32 >> 16).astype(np.uint16))
    np.testing.assert_array_equal(t["fb"].astype(np.float32).view(np.uint32), t["rh"].astype(np.uint32) << 16)
    assert ((t["r"] >> 23) & 0xFF == 0).any()   # f32 subnormals read back
    v = np.float32(x[1] + np.float32(1.0))
    assert out == f"Tensor<u32, [2]> [{v.view(np.uint32)}, 1065353216]\n"


def test_the_interpreter_reads_numpy_s_bits(tmp_path: Path) -> None:
    _check(*_run(tmp_path))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_simulated_gpu_gives_the_same_bits(arch: str, tmp_path: Path) -> None:
    import llsim

    want, _ = _run(tmp_path)
    got, out = _run(tmp_path, llsim.sim_runtime_device(arch))
    for k, w in want.items():
        np.testing.assert_array_equal(got[k].view(np.uint8), w.view(np.uint8), err_msg=k)   # bit for bit
    _check(got, out)


@pytest.mark.gpu
def test_the_gpu_gives_the_interpreter_s_bits(tmp_path: Path) -> None:
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

    f = tmp_path / "bits.tile"
    f.write_text(PROGRAM, encoding="utf-8")
    r = tilec("emit", str(f), "--stage", "ptx", "--arch", arch, "-o", str(tmp_path / "k.ptx"))
    assert r.returncode == 0, r.stderr
    files = sorted(tmp_path.glob("k*.ptx"))
    assert len(files) == 2
    for p in files:
        a = subprocess.run(["ptxas", "-arch", arch, "-o", str(tmp_path / "k.o"), str(p)], capture_output=True,
                           text=True)
        assert a.returncode == 0, a.stderr


@pytest.mark.parametrize(("body", "code", "hint"), [
    ("let u = (t as i32).to_bits();", "E0204", "an integer's bits are its value"),
    ("let u = from_bits(t.to_bits());", "E0215", "`from_bits::<f32>(t.to_bits())`"),
    ("let u = from_bits::<f32>(t.to_bits() as i32);", "E0203", "`from_bits::<f32>(t.to_bits() as i32 as u32)`"),
    ("let u = from_bits::<f32>(t.to_bits() as u16);", "E0203", "`f32` is 32 bits wide: pass a `u32`"),
    ("let u = from_bits::<i32>(t.to_bits());", "E0203", "give the float type whose bits"),
    ("let u = 1.5.to_bits();", "E0215", "`1.5f32.to_bits()`"),
    ("let s = 1.5; let u = s.to_bits();", "E0215", "`(s as f32).to_bits()`"),   # (hrev22: was `sf32.to_bits()`)
    ("let u = (1.5 * 2.0).to_bits();", "E0215", "`((1.5 * 2.0) as f32).to_bits()`"),
])
def test_the_checker_s_refusals_say_what_to_write(body: str, code: str, hint: str, tmp_path: Path) -> None:
    f = tmp_path / "k.tile"
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {\n    let t = z.load();\n"
                 f"    {body}\n    z.store(t);\n}}\n", encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert errs, body
    assert any(hint in h for h in errs[0].help), (errs[0].code, errs[0].message, errs[0].help)
    assert errs[0].code == code, (errs[0].code, errs[0].message)


GENERIC = """
kernel fn neg<T>(z: &mut Tensor<T, [4]>) {
    let t = z.load();
    BODY
}

fn main() {
    let mut z = ones::<f32>([4]);
    neg(z.partition([4])).sync();
    print(z);
    let mut h = full::<f16>([4], 2.5);
    neg(h.partition([4])).sync();
    print(h);
}
"""


@pytest.mark.parametrize(("body", "hint"), [
    ("let b = t.to_bits();\n    z.store(t);", "`(t as f32).to_bits()`"),
    ("let b = (t as f32).to_bits();\n    z.store(from_bits::<T>(b));", "`from_bits::<f32>(b) as T`"),
])
def test_a_generic_float_s_bits_lead_to_a_program_that_runs(body: str, hint: str, tmp_path: Path) -> None:
    """`to_bits` / `from_bits::<T>` of a type parameter `T` (hrev22's note): the help said to call it on an `f16`,
    `bf16`, `f32` or `f64` tile, or gave `from_bits::<f32>(u)`, whose `f32` a `Tensor<T, ..>` does not take; it
    gives now the bits of the value as an `f32` and `from_bits::<f32>(b) as T`, which runs for every float `T`
    whose values an `f32` holds (here `f32` and `f16`: a sign flip on the bits)."""
    f = tmp_path / "g.tile"
    f.write_text(GENERIC.replace("BODY", body), encoding="utf-8")
    errs = [d for d in driver.check(f).diagnostics if d.severity.value == "error"]
    assert len(errs) == 1 and any(hint in h for h in errs[0].help), [(d.message, d.help) for d in errs]
    assert "a type parameter" in errs[0].message
    f.write_text(GENERIC.replace("BODY", "let b = (t as f32).to_bits();\n"
                                 "    z.store(from_bits::<f32>(b ^ 0x80000000u32) as T);"), encoding="utf-8")
    out = io.StringIO()
    run.execute(str(f), "cpu", out=out)
    assert out.getvalue() == "Tensor<f32, [4]> [-1.0, -1.0, -1.0, -1.0]\nTensor<f16, [4]> [-2.5, -2.5, -2.5, -2.5]\n"


def test_a_host_tensor_s_to_bits_leads_to_a_kernel(tmp_path: Path) -> None:
    """`x.to_bits()` of a host tensor (kernels only): the help said "a method of tiles or scalars", and a host
    scalar's is refused next (E0211); it says now to apply it in a kernel to the tile it loads, which runs."""
    f = tmp_path / "h.tile"
    f.write_text("fn main() {\n    let x = full::<f32>([4], 1.0);\n    print(x.to_bits());\n}\n", encoding="utf-8")
    (d,) = [x for x in driver.check(f).diagnostics if x.severity.value == "error"]
    assert d.code == "E0103" and any("`z.store(x.load_like(z).to_bits())` with `x` passed as `&x`" in h
                                     for h in d.help), d.help
    f.write_text("kernel fn k<const B: i32>(z: &mut Tensor<u32, [B]>, x: &Tensor<f32, [?]>) {\n"
                 "    z.store(x.load_like(z).to_bits());\n}\n\n"
                 "fn main() {\n    let x = full::<f32>([4], 1.0);\n    let mut z = zeros::<u32>([4]);\n"
                 "    k(z.partition([4]), &x).sync();\n    print(z);\n}\n", encoding="utf-8")
    out = io.StringIO()
    run.execute(str(f), "cpu", out=out)
    assert out.getvalue() == "Tensor<u32, [4]> [1065353216, 1065353216, 1065353216, 1065353216]\n"


NANS = """
kernel fn nans(z: &mut Tensor<u32, [8]>, h: &mut Tensor<u16, [8]>, b: &mut Tensor<u16, [8]>,
        d: &mut Tensor<u64, [8]>, x: &Tensor<f32, [?]>) {
    let t = x.partition([8]).load([0]);
    let zero = t - t;
    let q = zero / zero;                                                // x86: 0xFFC00000, NVIDIA: 0x7FFFFFFF
    let s = from_bits::<f32>(0x7F800001u32 + (arange::<u32>(8) & 0u32));  // a signalling NaN
    let i = arange::<i32>(8);
    let r = where(i == 0, q, where(i == 1, s + 1.0, where(i == 2, -q, where(i == 3, s,
            where(i == 4, sqrt(t - 5.0), where(i == 5, (s as f16) as f32, where(i == 6, t, -t)))))));
    z.store(r.to_bits());
    h.store((r as f16).to_bits());
    b.store((r as bf16).to_bits());
    d.store(((r as f64) * 2.0).to_bits());
    let h1 = from_bits::<f16>(0xFC01u16 + (arange::<u16>(8) & 0u16)).to_bits();  // a payload through f32 registers
    h.store(where(i == 7, h1, h.load()));
}

fn main() {
    let x = ones::<f32>([8]);
    let mut z = zeros::<u32>([8]);
    let mut h = zeros::<u16>([8]);
    let mut b = zeros::<u16>([8]);
    let mut d = zeros::<u64>([8]);
    nans(z.partition([8]), h.partition([8]), b.partition([8]), d.partition([8]), &x).sync();
    print(z);
    print(h);
    print(b);
    print(d);
}
"""

# the bits every engine gives: a NaN's are the canonical NaN of its type (positive, every mantissa bit set)
NAN_OUT = ("Tensor<u32, [8]>\n[2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647,\n"
           " 1065353216, 3212836864]\n"
           "Tensor<u16, [8]> [32767, 32767, 32767, 32767, 32767, 32767, 15360, 32767]\n"
           "Tensor<u16, [8]> [32767, 32767, 32767, 32767, 32767, 32767, 16256, 49024]\n"
           "Tensor<u64, [8]>\n[ 9223372036854775807,  9223372036854775807,  9223372036854775807,\n"
           "  9223372036854775807,  9223372036854775807,  9223372036854775807,\n"
           "  4611686018427387904, 13835058055282163712]\n")


def _run_nans(tmp_path: Path, where: str = "cpu", device: object | None = None) -> str:
    f = tmp_path / "nans.tile"
    f.write_text(NANS, encoding="utf-8")
    out = io.StringIO()
    real = run.make_device
    if device is not None:
        run.make_device = lambda choice, o: device  # type: ignore[assignment]
    try:
        ex = run.execute(str(f), where, out=out)
    finally:
        run.make_device = real  # type: ignore[assignment]
    if where == "gpu":
        assert ex.device.kind == "gpu"
    return out.getvalue()


def test_a_nan_s_bits_are_one_pattern_on_the_interpreter(tmp_path: Path) -> None:
    """Which NaN an operation makes is the engine's (x86's 0 / 0 is 0xFFC00000, negative; an NVIDIA GPU's
    0x7FFFFFFF; NumPy keeps a signalling NaN's payload through f16, a GPU's `cvt` does not): `to_bits` read
    them, so the engines disagreed (hrev21). A NaN's bits are the canonical NaN of its type now."""
    assert _run_nans(tmp_path) == NAN_OUT


def test_a_nan_s_bits_are_one_pattern_in_the_simulator(tmp_path: Path) -> None:
    import llsim

    assert _run_nans(tmp_path, device=llsim.sim_runtime_device("sm_90a")) == NAN_OUT


@pytest.mark.gpu
def test_a_nan_s_bits_are_one_pattern_on_the_gpu(tmp_path: Path) -> None:
    """The card's own NaNs (div, sqrt, add of a NaN, cvt to f16/bf16/f64): the interpreter's bits."""
    assert _run_nans(tmp_path, "gpu") == NAN_OUT


SCALAR_INDEX = """
kernel fn k(z: &mut Tensor<f32, [4]>, c: &mut Tensor<u32, [2]>, x: &Tensor<f32, [?]>) {
    let q = z.partition([1]);
    let p = x.partition([1]);
    let mut acc = 0u32;
    for j in 0..4 {
        let s = (j as f32).to_bits();
        acc = acc ^ s;
        let v = p.load([(from_bits::<f32>(s) as i32)]).item();
        q.store(full::<f32>([1], v), [(s >> 30) as i32]);
    }
    print(acc, (2.5f32).to_bits(), from_bits::<f64>(4611686018427387904u64));
    c.store(full::<u32>([2], acc));
}

fn main() {
    let x = arange::<f32>(4) + 10.0;
    let mut z = zeros::<f32>([4]);
    let mut c = zeros::<u32>([2]);
    k(z.partition([4]), c.partition([2]), &x).sync();
    print(z);
    print(c);
}
"""


@pytest.mark.parametrize("arch", [None, "sm_80"])
def test_a_scalar_s_bits_are_a_scalar(arch: str | None, tmp_path: Path) -> None:
    """hrev22: the interpreter's `to_bits` / `from_bits` of a scalar was a 1-element array (NumPy's
    `ascontiguousarray` of a 0-d array), so a nested tile or partition index made of it, which the checker
    accepts (`(s >> 30) as i32` of a `u32` is in 0..=3), was an internal error at the store. Its bits are a
    scalar, as on the GPU: the interpreter and llsim store the same."""
    import llsim

    f = tmp_path / "k.tile"
    f.write_text(SCALAR_INDEX, encoding="utf-8")
    out = io.StringIO()
    real = run.make_device
    if arch is not None:
        run.make_device = lambda choice, o: llsim.sim_runtime_device(arch)  # type: ignore[assignment]
    try:
        ex = run.execute(str(f), "cpu", out=out)
    finally:
        run.make_device = real  # type: ignore[assignment]
    from userprog import program_tensors

    t = program_tensors(ex)
    # j = 0..3 as f32: 0, 0x3F800000, 0x40000000, 0x40400000, whose bits >> 30 are 0, 0, 1, 1 and whose floats
    # read x's elements 10..13: q[0] = 11 then q[1] = 13
    acc = 0x3F800000 ^ 0x40000000 ^ 0x40400000
    np.testing.assert_array_equal(t["z"], np.array([11.0, 13.0, 0.0, 0.0], np.float32))
    np.testing.assert_array_equal(t["c"], np.array([acc, acc], np.uint32))
    if arch is None:
        assert out.getvalue().splitlines()[0] == f"{acc} 1075838976 2.0", out.getvalue()
