"""A cast of a constant rounds as a cast of a run-time value does (hrev round 12).

The reference: "Int to float and float to float round to nearest even". A
kernel folds a cast of a constant (`(16777217 as f32) as i32`, `0.1f32 as
f64`), and so does the checker in a `const` item; both kept the exact value
of the literal (a Python float or int) through every cast, so in a kernel
`(16777217 as f32) as i32` was 16777217, `(1e10f32 as f16) as f32` 1e10 and
`0.1f32 as f64` 0.1 (on the interpreter and the GPU alike), where the host
gives 16777216, infinity and 0.10000000149011612; a `const C: f32 = 0.1;`
read 0.1 where a kernel cast it to `f64`, and `const N: i32 = (16777217 as
f32) as i32;` was 16777217 while the same cast at run time is 16777216.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang.run as run

HERE = Path(__file__).resolve().parent

EXPRS = [
    "0.1f32 as f64", "(0.1f16 as f32) as f64", "((16777217 as f32) as i32) as f64", "x as f64",
    "((1e10f32 as f16) as f32) as f64", "0.1bf16 as f64", "((2147483647 as f32) as i64) as f64",
    "((0.1 as f16) as f64)", "C as f64", "H as f64", "((65519.0f32 as f16) as f64)", "((65520.0f32 as f16) as f64)",
    "(((3.0e38f64 as f32) as bf16) as f64)", "((1.0e-8f32 as f16) as f64)", "(((16777219 as f32) as i32) as f64)",
    "(((0.1f32 as f64) == 0.1f64) as i32) as f64",
]
N = 16
assert len(EXPRS) == N

SRC = f"""
const C: f32 = 0.1;
const H: f16 = 0.1;
const K: i32 = ((16777217 as f32) as i32) - 16777212;
const D: f64 = 0.1f32 as f64;
kernel fn k(z: &mut Tensor<f64, [{N}]>) {{
    let x: f32 = 0.1;
    let i = arange::<i32>({N});
    let mut t = zeros::<f64>([{N}]);
{chr(10).join(f"    t = where(i == {j}, full::<f64>([{N}], {e}), t);" for j, e in enumerate(EXPRS))}
    z.store(t);
}}
fn main() {{
    let mut z = zeros::<f64>([{N}]);
    k(z.partition([{N}])).sync();
    let x: f32 = 0.1;
    let n = 16777217 + zeros::<i32>([1]).sum();   // a value the checker cannot fold
    print({", ".join(EXPRS)});
    print(K, ((n as f32) as i32) - 16777212, D == (C as f64));
}}
"""


def _run(tmp_path: Path, device: object = None) -> tuple[list[str], np.ndarray]:
    path = tmp_path / "casts.tile"
    path.write_text(SRC)
    out = io.StringIO()
    ex = run.execute(str(path), "cpu", out=out)
    lines = out.getvalue().splitlines()
    return lines, np.asarray(ex.main_locals["z"].numpy()).copy()


def _printed(path: Path, src: str | None = None) -> list[str]:
    """The lines `tilec run` prints for `path` on the CPU (written with `src` first, if given)."""
    if src is not None:
        path.write_text(src)
    out = io.StringIO()
    run.execute(str(path), "cpu", out=out)
    return out.getvalue().splitlines()


def _host_values(line: str) -> np.ndarray:
    return np.array([float(w) for w in line.split()], np.float64)


def test_a_kernels_constant_casts_round_as_the_hosts(tmp_path: Path) -> None:
    lines, z = _run(tmp_path)
    host = _host_values(lines[0])
    assert host[2] == 16777216.0 and np.isinf(host[4]) and host[0] == float(np.float32(0.1))
    np.testing.assert_array_equal(z, host)


def test_a_constant_items_cast_rounds_as_at_run_time(tmp_path: Path) -> None:
    lines, _ = _run(tmp_path)
    assert lines[1].split() == ["4", "4", "true"]


def test_the_gpu_path_folds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the two engines run one IR, so they agreed before the fix too (both unrounded): this keeps
    # them together now that the host's value is the one both must give
    sys.path.insert(0, str(HERE.parent / "backend"))
    import llsim

    lines, want = _run(tmp_path)
    monkeypatch.setattr(run, "make_device", lambda choice, o: llsim.sim_runtime_device("sm_80"))
    _, got = _run(tmp_path)
    np.testing.assert_array_equal(got, want)


ARITH = """
const F: f16 = 2048.0 + 1.0 + 1.0;
const G: f32 = 16777216.0 + 1.0 + 1.0;
const B: bf16 = 256.0 + 1.0 + 1.0;
const D: f64 = 16777216.0 + 1.0 + 1.0;
kernel fn k(z: &mut Tensor<f32, [4]>) {
    let i = arange::<i32>(4);
    z.store(where(i == 0, full::<f32>([4], F as f32), where(i == 1, full::<f32>([4], G),
        where(i == 2, full::<f32>([4], B as f32), full::<f32>([4], (2048.0f16 + 1.0f16 + 1.0f16) as f32)))));
}
fn main() {
    let mut z = zeros::<f32>([4]);
    k(z.partition([4])).sync();
    let h: f16 = 2048.0;
    let g: f32 = 16777216.0;
    let b: bf16 = 256.0;
    print(F, G, B, D);
    print(h + 1.0 + 1.0, g + 1.0 + 1.0, b + 1.0 + 1.0);
    print(z);
}
"""


def test_a_constant_items_arithmetic_rounds_after_every_operation(tmp_path: Path) -> None:
    # "f16 and bf16 values are rounded to their type after every operation; f32 arithmetic is
    # done in f32" (the reference's Numbers): a `const` item summed in f64 (2050, 16777218, 258)
    lines = _printed(tmp_path / "arith.tile", ARITH)
    assert lines[0].split() == ["2048.0", "16777216.0", "256.0", "16777218.0"]
    assert lines[1].split() == lines[0].split()[:3]
    assert lines[2] == "Tensor<f32, [4]> [    2048.0, 16777216.0,      256.0,     2048.0]"


NOT = """
const Y: u16 = (!(65534u16 & 16u16)) >> 7u16;
const Z: f16 = ((!127u8) as f16) * 1.0f16;
const W: i64 = (!5u8) as i64;
fn main() {
    let a = 65534u16 + zeros::<u16>([1]).sum();   // values the checker cannot fold
    let b = 127u8 + zeros::<u8>([1]).sum();
    let c = 5u8 + zeros::<u8>([1]).sum();
    print(Y, Z, W);
    print((!(a & 16u16)) >> 7u16, ((!b) as f16) * 1.0f16, (!c) as i64);
}
"""


def test_a_constant_items_bitwise_not_stays_in_its_type(tmp_path: Path) -> None:
    # Python's `~16` is -17: `(!16u16) >> 7` kept the sign (65535 for 511), `!127u8` as f16 was -128
    lines = _printed(tmp_path / "not.tile", NOT)
    assert lines[0].split() == ["511", "128.0", "250"]
    assert lines[1] == lines[0]


GENERIC = """
fn hv<T>(x: T) -> f64 { ((x * (0.1 + 0.2)) as f64) }
fn hd<T>(x: T) -> f64 { ((x * (1 / 3)) as f64) }
kernel fn kd<T>(z: &mut Tensor<f64, [2]>, x: T) {
    z.store(full::<f64>([2], (x * (1 / 3)) as f64));
}
kernel fn k<T>(z: &mut Tensor<f64, [2]>, x: T) {
    let i = arange::<i32>(2);
    z.store(where(i == 0, full::<f64>([2], (x * (0.1 + 0.2)) as f64), full::<f64>([2], (x + 0.1 + 0.2) as f64)));
}
kernel fn kc(z: &mut Tensor<f64, [2]>, x: f16) {
    let i = arange::<i32>(2);
    z.store(where(i == 0, full::<f64>([2], (x * (0.1 + 0.2)) as f64), full::<f64>([2], (x + 0.1 + 0.2) as f64)));
}
fn main() {
    let mut a = zeros::<f64>([2]);
    let mut b = zeros::<f64>([2]);
    let mut c = zeros::<f64>([2]);
    k::<f16>(a.partition([2]), 1.0f16).sync();
    kc(b.partition([2]), 1.0f16).sync();
    k::<bf16>(c.partition([2]), 1.0bf16).sync();
    let mut d = zeros::<f64>([2]);
    kd::<f32>(d.partition([2]), 1.0f32).sync();
    print(hv::<f16>(1.0f16), hv::<bf16>(1.0bf16), hd::<f32>(1.0f32));
}
"""


def test_a_generic_instances_float_literals_are_its_types(tmp_path: Path) -> None:
    # `0.1 + 0.2` where `T = f16`: two f16 values added (0.2998046875), as in the concrete kernel and
    # the host's instance; the generic kernel's instance folded it in f64 (0.30004882812); and its
    # `1 / 3` where `T = f32` as integers (0)
    path = tmp_path / "generic.tile"
    path.write_text(GENERIC)
    out = io.StringIO()
    ex = run.execute(str(path), "cpu", out=out)
    host = [float(w) for w in out.getvalue().split()]
    a, b, c, d = (np.asarray(ex.main_locals[n].numpy()) for n in "abcd")
    np.testing.assert_array_equal(a, b)
    assert a[0] == host[0] == 0.2998046875 and c[0] == host[1]
    # `x * (1 / 3)` with `T = f32`: `1 / 3` in f32, as by context in a concrete kernel (it was 0)
    assert d[0] == host[2] == float(np.float32(1) / np.float32(3))


INT_LITERALS = """
const A: f32 = 1 / 3;
const B: f16 = 2049 + 1;
const C: f32 = 7 % 4 / 2;
fn main() {
    let a: f32 = 1 / 3;
    let b: f16 = 2049 + 1;
    let c: f32 = 7 % 4 / 2;
    print(A, B, C);
    print(a, b, c);
}
"""


def test_a_constant_items_integer_literals_take_its_float_type(tmp_path: Path) -> None:
    # integer literals typed `f32` by their context are f32 values in a `let` (`1 / 3` is 0.33333334);
    # a `const` item computed them as integers (0, 2050, 1.0)
    lines = _printed(tmp_path / "ints.tile", INT_LITERALS)
    assert lines[0].split() == ["0.33333334", "2048.0", "1.5"]
    assert lines[1] == lines[0]


def test_a_generic_instances_integer_literals_are_its_types(tmp_path: Path) -> None:
    # `(!0) >> 3` with `T = u8`: the instance folded `!0` as an untyped -1 and `-1 >> 3` as -1, and
    # stored 255 (the host's instance: 31). The literals are `u8`s now; and `(!0) >> 9` shifts by more
    # than the width: the instance's E0227 at `tilec check`, as a concrete `let v: u8 = (!0) >> 9;`
    kernels = """
kernel fn ks<T>(z: &mut Tensor<f64, [1]>) { let v: T = (!0) >> 9; z.store(full::<f64>([1], v as f64)); }
kernel fn kn<T>(z: &mut Tensor<f64, [1]>) { let v: T = (!0) >> 3; z.store(full::<f64>([1], v as f64)); }
fn gn<T>() -> f64 { let v: T = (!0) >> 3; v as f64 }
"""
    path = tmp_path / "shift.tile"
    path.write_text(kernels + """
fn main() {
    let mut b = zeros::<f64>([1]);
    kn::<u8>(b.partition([1])).sync();
    print(b.sum(), gn::<u8>());
}
""")
    assert " ".join(_printed(path)).split() == ["31.0", "31.0"]
    path.write_text(kernels + """
fn main() {
    let mut b = zeros::<f64>([1]);
    ks::<u8>(b.partition([1])).sync();
}
""")
    with pytest.raises(run.CheckFailed) as err:
        run.execute(str(path), "cpu", out=io.StringIO())
    assert [d.code for d in err.value.diagnostics] == ["E0227"]


def test_a_constant_items_integer_arithmetic_wraps_as_at_run_time(tmp_path: Path) -> None:
    # where the checker knows no operand's value (`!0` of an untyped literal) it cannot report E0227,
    # and the `const` held 132 in an `i8` (its comparison gave the other answer); it wraps as the host
    path = tmp_path / "wrap.tile"
    path.write_text("""
const C: f64 = ((126i8 >= (127 + ((!0) & 5i8))) as f64);
const D: i8 = 127 + ((!0) & 5);
fn main() {
    let c: f64 = ((126i8 >= (127 + ((!0) & 5i8))) as f64);
    let d: i8 = 127 + ((!0) & 5);
    print(C, c, D, d);
}
""")
    assert " ".join(_printed(path)).split() == ["1.0", "1.0", "-124", "-124"]
