"""Hostile review round 15: what a generic host function's instance refuses is
refused by `tilec check` for every call that fixes its types, not only when
the call runs (round 14's open item: its tensor operators and built-ins), and
what the run refuses it refuses with a diagnostic.

Found here (each test failed before):
- `exp(v)`, `sqrt(v)`, `floor(v)` of an integer `T` computed a float and gave
  it back as `T` (`e(3i32)` was 20 from Python, `exp(-3i8)` printed 0.0498 as an
  `i8`), where the concrete form and a kernel's instance are E0204;
- `fma` of an integer `T` (or of a `load_npy` integer tensor) was an internal
  error (a Python `ValueError` from NumPy's side, a traceback from the Python API);
- `abs(x)` of a `bool` tensor (an instance's `T`, or a `load_npy`'s) gave `bool`s;
- tensor operators (`x << x` of `f32`, `x + x` of `bool`, `-x` of `u8`, `!x` of
  `f32`) and built-ins (`sum`, `cumsum`, `maximum`, `arange::<T>`, `pow`) of `T`
  passed `tilec check` and were refused only by the run (some as E0714);
- a generic host function called from another one's instance (`inner(x)` in
  `fn outer<U>`) was never judged at check, nor a kernel launched inside a
  generic host function with the element type its instance gives.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import tilelang
from tilelang.diagnostics.model import TileError
from tilelang.run import CheckFailed, execute

FNS = """
fn tsh<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x << x }
fn tand<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x & x }
fn tadd<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x + x }
fn tless<T>(x: &Tensor<T, [?]>) -> Tensor<bool, [?]> { x < x }
fn tneg<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { -x }
fn tnot<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { !x }
fn total<T>(x: &Tensor<T, [?]>) -> T { x.sum() }
fn cols<T>(x: &Tensor<T, [?, ?]>) -> Tensor<T, [?]> { x.prod(0) }
fn scan<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { cumsum(x, 0) }
fn run_max<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x.cummax(0) }
fn most<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { maximum(x, x) }
fn count<T>(n: i32) -> Tensor<T, [?]> { arange::<T>(n) }
fn tpow<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x.pow(x) }
fn tfma<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { fma(x, x, x) }
fn tabs<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { abs(x) }
fn e<T>(v: T) -> T { exp(v) }
fn root<T>(v: T) -> T { v.sqrt() }
fn fl<T>(v: T) -> T { floor(v) }
fn sfma<T>(v: T) -> T { fma(v, v, v) }
fn power<T>(a: T, b: T) -> T { pow(a, b) }
fn size<T>(v: T) -> T { abs(v) }
"""


def _check_fails(body: str) -> CheckFailed:
    with pytest.raises(CheckFailed) as e:  # CheckFailed: `tilec check` refused it, before anything ran
        execute(FNS + "fn main() {\n    " + body + "\n}\n", "cpu", out=io.StringIO(), name="g.tile")
    return e.value


@pytest.mark.parametrize(("body", "message", "shown"), [
    ("print(tsh(&full::<f32>([2], 1.0)));", "`<<` is not defined on `f32` tensors", "<<"),
    ("print(tand(&full::<f16>([2], 1.0f16)));", "`&` is not defined on `f16` tensors", "&"),
    ("print(tadd(&full::<bool>([2], true)));", "`+` is not defined on `bool` tensors", "+"),
    ("print(tless(&full::<bool>([2], true)));", "`<` is not defined on `bool` tensors", "<"),
    ("print(tneg(&full::<bool>([2], true)));", "`-` is not defined on `bool` tensors", "-x"),
    ("print(tneg(&full::<u8>([2], 3u8)));", "cannot negate `u8` tensors", "-x"),
    ("print(tnot(&full::<f32>([2], 1.0)));", "`!` is not defined on `f32` tensors", "!x"),
    ("print(total(&full::<bool>([3], true)));", "`sum` of `bool` elements", "x.sum()"),
    ("print(cols(&full::<bool>([3, 2], true)));", "`prod` of `bool` elements", "x.prod(0)"),
    ("print(scan(&full::<bool>([2], true)));", "cannot `cumsum` a `bool` tensor", "cumsum(x, 0)"),
    ("print(run_max(&full::<bool>([2], true)));", "`cummax` is not defined on `bool`", "x.cummax(0)"),
    ("print(most(&full::<bool>([2], true)));", "`maximum` of `bool` values", "maximum(x, x)"),
    ("print(count::<bool>(3));", "`arange` makes numbers, not `bool` values", "arange::<T>(n)"),
    ("print(tpow(&full::<i32>([2], 2)));", "`pow` is not defined on `i32`", "x.pow(x)"),
    ("print(tfma(&full::<i16>([2], 2i16)));", "`fma` is not defined on `i16`", "fma(x, x, x)"),
    ("print(tabs(&full::<bool>([2], true)));", "`abs` is not defined on `bool`", "abs(x)"),
    ("print(e(3));", "`exp` is not defined on `i32`", "exp(v)"),
    ("print(root(-3i8));", "`sqrt` is not defined on `i8`", "v.sqrt()"),
    ("print(fl(3u32));", "`floor` is not defined on `u32`", "floor(v)"),
    ("print(sfma(3i8));", "`fma` is not defined on `i8`", "fma(v, v, v)"),
    ("print(power(3, 3));", "`pow` is not defined on `i32`", "pow(a, b)"),
    ("print(size(true));", "`abs` is not defined on `bool`", "abs(v)"),
])
def test_an_instance_outside_a_builtins_domain_fails_the_check(body: str, message: str, shown: str) -> None:
    e = _check_fails(body)
    (d,) = [d for d in e.diagnostics if d.severity.name == "ERROR"]
    assert d.code == "E0204" and message in d.message, d.message
    primary = d.primary_span
    assert primary is not None and (FNS + "fn main() {\n    " + body)[primary.start:primary.end] == shown
    assert any(not lab.primary and "the call that makes this instance" in lab.message for lab in d.labels)
    assert d.help and d.notes


def test_the_same_instances_of_a_domain_run() -> None:
    out = io.StringIO()
    execute(FNS + """fn main() {
    let i = full::<i32>([2], 3);
    let f = full::<f32>([2], 0.5);
    print(tsh(&i), tand(&i), tadd(&i), tneg(&i), tnot(&full::<bool>([1], true)), total(&i), scan(&i));
    print(most(&i), count::<u8>(3), tpow(&f), tfma(&f), tabs(&full::<i8>([1], -3i8)));
    print(e(0.0), root(4.0f16), fl(2.5f64), sfma(2.0), power(2.0, 3.0), size(-3));
}
""", "cpu", out=out, name="g.tile")
    lines = out.getvalue().splitlines()
    assert lines[0] == ("Tensor<i32, [2]> [24, 24] Tensor<i32, [2]> [3, 3] Tensor<i32, [2]> [6, 6] "
                        "Tensor<i32, [2]> [-3, -3] Tensor<bool, [1]> [false] 6 Tensor<i32, [2]> [3, 6]")
    assert lines[1] == ("Tensor<i32, [2]> [3, 3] Tensor<u8, [3]> [0, 1, 2] Tensor<f32, [2]> [0.70710677, 0.70710677] "
                        "Tensor<f32, [2]> [0.75, 0.75] Tensor<i8, [1]> [3]")
    assert lines[2] == "1.0 2.0 2.0 6.0 8.0 3"


def test_from_python_the_run_refuses_them_with_a_diagnostic() -> None:
    # the Python API runs a host function with the arrays' types: no `tilec check` of that instance
    mod = tilelang.compile(FNS)
    for call, message in [
        (lambda: mod.e(np.int32(3)), "`exp` is not defined on `i32`"),  # was 20, silently
        (lambda: mod.tfma(np.ones(3, np.int32)), "`fma` is not defined on `i32`"),  # was a ValueError
        (lambda: mod.sfma(np.int8(3)), "`fma` is not defined on `i8`"),  # was a ValueError
        (lambda: mod.tabs(np.ones(3, np.bool_)), "`abs` is not defined on `bool`"),  # was [True, True, True]
    ]:  # (E0204 from the run, with the generic note)
        with pytest.raises(tilelang.TileError, match="E0204") as e:
            call()
        assert message in str(e.value)
    assert mod.e(np.float32(0.0)) == 1.0 and list(mod.tfma(np.ones(2, np.float32))) == [2.0, 2.0]


def test_a_load_npy_tensor_of_integers_in_fma_is_refused_not_an_internal_error(tmp_path) -> None:
    np.save(tmp_path / "i.npy", np.arange(3, dtype=np.int32))
    np.save(tmp_path / "b.npy", np.array([True, False]))
    for expr, message in [("fma(x, x, x)", "`fma` is not defined on `i32`"),
                          ("abs(b)", "`abs` is not defined on `bool`")]:
        src = (f'fn main() {{\n    let x = load_npy("{tmp_path / "i.npy"}");\n'
               f'    let b = load_npy("{tmp_path / "b.npy"}");\n    print({expr});\n    print(x, b);\n}}\n')
        with pytest.raises(TileError) as e:
            execute(src, "cpu", out=io.StringIO(), name="n.tile")
        (d,) = e.value.diagnostics
        assert d.code == "E0714" and message in d.message and d.primary_span is not None and d.help
        assert not d.notes  # no generic function here: the note about one would mislead


NESTED = """
fn inner<T>(x: &Tensor<T, [?]>) -> Tensor<T, [?]> { x + x }
fn outer<U>(x: &Tensor<U, [?]>) -> Tensor<U, [?]> { inner(x) }
fn lit<T>(v: T) -> T { v + 300 }
fn mid<U>(v: U) -> U { lit(v) }
fn main() {
    let b = full::<bool>([8], true);
    print(outer(&b));
    print(mid(3u8));
    print(mid(3), outer(&full::<i32>([1], 1)));
}
"""

LAUNCH = """
kernel fn k<T>(z: &mut Tensor<T, [4]>) {
    let t = z.load();
    z.store(t + t);
}
fn go<U>(z: &mut Tensor<U, [?]>) {
    k(z.partition([4])).sync();
}
fn main() {
    let mut i = full::<i32>([8], 1);
    go(&mut i);
    let mut b = full::<bool>([8], true);
    go(&mut b);
    print(i, b);
}
"""


@pytest.mark.parametrize(("src", "expected"), [
    (NESTED, [("E0204", "+", ["inner(x)", "outer(&b)"]), ("E0201", "300", ["lit(v)", "mid(3u8)"])]),
    (LAUNCH, [("E0204", "t + t", ["k(z.partition([4]))", "go(&mut b)"])]),
], ids=["nested_calls", "launch_inside"])
def test_instances_made_inside_generic_functions_are_judged_at_check(src: str, expected: list) -> None:
    with pytest.raises(CheckFailed) as e:
        execute(src, "cpu", out=io.StringIO(), name="nested.tile")
    errors = [d for d in e.value.diagnostics if d.severity.name == "ERROR"]
    # the primary in the generic body; the call there and the one that fixed its types as labels
    assert [(d.code, src[d.primary_span.start:d.primary_span.end],
             [src[lab.span.start:lab.span.end] for lab in d.labels if "makes this instance" in lab.message])
            for d in errors] == expected
    ok = src.replace("print(mid(3u8));", "").replace("&b", "&full::<f32>([1], 1.0)")
    ok = ok.replace("full::<bool>([8], true)", "full::<i16>([8], 1i16)")
    out = io.StringIO()
    execute(ok, "cpu", out=out, name="nested.tile")  # the other instances run
    assert out.getvalue().strip()


CONSTS = """
kernel fn k<const B: i32, const C: i32>(z: &mut Tensor<f32, [B]>) {
    let q = z.partition([C]);
    for j in 0..q.num_tiles(0) {
        q.store(full::<f32>([C], 1.0 + block_id(0) as f32), [j]);
    }
}
fn go<const C: i32, const D: i32>(z: &mut Tensor<f32, [?]>) {
    k::<4, C>(z.partition([4])).sync();
    k::<D, C>(z.partition([D])).sync();
    k::<{ D * 2 }, 1>(z.partition([{ D * 2 }])).sync();
}
fn twice<const E: i32>(z: &mut Tensor<f32, [?]>) {
    go::<E, { E * 2 }>(z);
}
fn main() {
    let mut z = zeros::<f32>([8]);
    go::<3, 2>(&mut z);
    twice::<2>(&mut z);
    print(z);
}
"""


def test_a_launch_check_of_a_host_functions_const_generics_is_decided_at_check() -> None:
    # `k::<4, C>` in `fn go<const C: i32>` called `go::<3>`: the nested tiles of 3 do not divide the
    # tile of 4 (E0402); it passed `tilec check` and was refused when the launch ran
    with pytest.raises(CheckFailed) as e:
        execute(CONSTS, "cpu", out=io.StringIO(), name="consts.tile")
    errors = [d for d in e.value.diagnostics if d.severity.name == "ERROR"]
    assert [(d.code, CONSTS[d.primary_span.start:d.primary_span.end],
             [CONSTS[lab.span.start:lab.span.end] for lab in d.labels if "makes this instance" in lab.message])
            for d in errors] == [
        ("E0402", "k::<4, C>(z.partition([4]))", ["go::<3, 2>(&mut z)"]),
        ("E0402", "k::<D, C>(z.partition([D]))", ["go::<3, 2>(&mut z)"]),
    ]
    assert all("with B = " in " ".join(d.notes) and d.help for d in errors)
    out = io.StringIO()  # `go::<2, 4>` and `twice::<2>` (`go::<2, 4>` again, through a generic call) hold
    execute(CONSTS.replace("go::<3, 2>", "go::<2, 4>"), "cpu", out=out, name="consts.tile")
    assert out.getvalue().strip() == "Tensor<f32, [8]> [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"
    with pytest.raises(CheckFailed) as e:  # `twice::<3>` makes `go::<3, 6>`: two calls labelled
        execute(CONSTS.replace("go::<3, 2>(&mut z);", "").replace("twice::<2>", "twice::<3>"), "cpu",
                out=io.StringIO(), name="consts.tile")
    (d, *_) = [d for d in e.value.diagnostics if d.severity.name == "ERROR"]
    assert [lab.message for lab in d.labels if "makes this instance" in lab.message] == [
        "the call that makes this instance of `go`, with C = 3, D = 6",
        "the call that makes this instance of `twice`, with E = 3"]


def test_an_instance_is_judged_once_for_its_types_whatever_its_constants() -> None:
    src = "fn f<T, const N: i32>(x: T) -> T { x + 300 }\nfn main() {\n    print(f::<u8, 1>(3u8), f::<u8, 2>(3u8));\n}\n"
    with pytest.raises(CheckFailed) as e:
        execute(src, "cpu", out=io.StringIO(), name="once.tile")
    assert [d.code for d in e.value.diagnostics if d.severity.name == "ERROR"] == ["E0201"]
