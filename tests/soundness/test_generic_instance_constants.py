"""A generic function's instance and a generic kernel's instance take one rule
for the literals and constant shifts that only the instance can judge (hostile
review, round 13). With `T = u8`, `x + 300`, `x * 0.5` and `x + (1 << 9)` were
E0201 / E0201 / E0227 in a kernel's instance (`ir/lower`: the instance check
`tilec check` runs) and, in a host function's instance, silently 47, 0 and 3:
the literal was wrapped or truncated into `T` (`to_scalar`) and the shift ran
past the width (0, the run-time rule). The concrete form is refused in both
(E0222, E0227). Now the host instance is refused too, with the kernel's code and
text; and an out-of-range literal that a kernel's instance folded before it met
`T` (`x + (256 - 1)`: 255, where the concrete `u8` form is E0222) is refused at
the literal in both."""

from __future__ import annotations

import io

import pytest

from tilelang.diagnostics.model import TileError
from tilelang.run import CheckFailed, execute

HOST = """
fn f<T>(x: T) -> T {{
    {body}
}}
fn main() {{
    let a: {ty} = 3;
    print(f(a));
}}
"""

KERNEL = """
kernel fn k<T>(z: &mut Tensor<T, [4]>) {{
    let x = z.load();
    z.store({{ {body} }});
}}
fn main() {{
    let mut z = full::<{ty}>([4], 3);
    k(z.partition([4])).sync();
    print(z.max());
}}
"""


def _outcome(src: str) -> tuple[str, str]:
    """(code, message) of the one error, or ("ok", the printed line)."""
    out = io.StringIO()
    try:
        execute(src, "cpu", out=out, name="g.tile")
    except (TileError, CheckFailed) as e:
        errors = [d for d in e.diagnostics if d.severity.name.lower() == "error"] or list(e.diagnostics)
        d = errors[0]
        assert d.primary_span is not None and d.help, d
        return d.code, d.message
    return "ok", out.getvalue().strip()


CASES = [
    # (T, body, expected code, expected text in the message or the printed value)
    ("u8", "x + 300", "E0201", "the integer literal `300` cannot be `u8`"),
    ("u8", "x + 256", "E0201", "the integer literal `256` cannot be `u8`"),
    ("i8", "x - 129", "E0201", "the integer literal `129` cannot be `i8`"),
    ("u8", "x + (256 - 1)", "E0201", "the integer literal `256` cannot be `u8`"),
    ("i32", "x * 0.5", "E0201", "the float literal `0.5` cannot be `i32`"),
    ("u8", "x + (1 << 9)", "E0227", "this shift overflows `u8`"),
    ("u8", "x + ((!0) >> 9)", "E0227", "this shift overflows `u8`"),
    ("u8", "x + ((1 as T) << (3 + 6))", "E0227", "this shift overflows `u8`"),
    ("u8", "let c: T = 1; let s = 9; x + (c << s)", "E0227", "this shift overflows `u8`"),
    ("i16", "x + (1 << 16)", "E0227", "this shift overflows `i16`"),
    ("u8", "x + (300 as T)", "E0201", "the integer literal `300` cannot be `u8`"),  # concrete: E0222
    # a typed `let` of a literal: the kernel converted it without a word
    ("i16", "let c: T = 2.0; x + c", "E0201", "the float literal `2.0` cannot be `i16`"),
    # an operator `T` has not got, of untyped constants the kernel folded (concrete: E0201, "this
    # integer expression cannot be `f64`"): the kernel stored -8.0 and -65536.0
    ("f64", "let c = 7; x + (!c)", "E0204", "`!` is not defined on `f64`"),
    ("f32", "let c = 1; x + (c << 16)", "E0204", "`<<` is not defined on `f32`"),
    ("f32", "x + (3 & 1)", "E0204", "`&` is not defined on `f32`"),
    # a float value (not a literal) in `T`'s arithmetic: the kernel's instance was an ill-formed-IR ICE
    # and the host 2563 (the concrete form is E0201)
    ("i16", "let c = 256 / 0.1; x + c", "E0201", "the float value `c` cannot be `i16`"),
    # an untyped `let` read as `T`: the kernel judged the shift by the `let`'s `i32` (-121 stored)
    ("i16", "let c = 32767 | 255; x + (-((127 - x) | (c << 16)))", "E0227", "this shift overflows `i16`"),
    ("i64", "let c = 65535; x + (!((c << 31) << 63))", "ok", "2"),  # the kernel: E0227 of `i32`
    # inside the domain: the same value on both
    ("i32", "x + (2.5 as T)", "ok", "5"),  # a cast converts a float literal, as `2.5 as i32` does
    ("i64", "x + ((-2.5) as T)", "ok", "1"),
    ("i32", "x + ((0.5 * 2.0) as T)", "ok", "4"),  # float arithmetic, then the cast (the host made 0)
    ("i32", "x + ((0.3 + 0.3 + 0.4) as T)", "ok", "4"),
    ("i64", "x + (!((127 + 1e3) as T))", "ok", "-1125"),  # the kernel: E0201 (127 a `T`, then 1e3 met it)
    ("u16", "x + ((-(-1e3)) as T)", "ok", "1003"),  # the kernel: E0204 (unary `-` of a `u16`)
    ("i8", "x + (((-x) * 0.5) as T)", "E0201", "the float literal `0.5` cannot be `i8`"),  # the host: 2
    ("i64", "let c = 255 % 1e3; x + ((-(255 - c)) as T)", "ok", "3"),  # a float value meets a constant
    ("i16", "x + (((-128 + 1e3) * x) as T)", "E0201", "a float value in arithmetic of `i16`"),  # the host: 2619
    ("i16", "x + ((-128 + 1e3) as T)", "ok", "875"),
    ("u8", "x + (255 as T)", "ok", "2"),
    ("u8", "x + 255 - 255", "ok", "3"),
    ("u8", "x + (1 << 7)", "ok", "131"),
    ("u8", "x + ((!0) >> 7)", "ok", "4"),
    ("i8", "x + (127 - 128)", "E0201", "the integer literal `128` cannot be `i8`"),  # concrete: E0222
    ("i8", "x + (-128 + 127)", "ok", "2"),
    ("f32", "x * 0.5", "ok", "1.5"),
    # a literal that rounds to infinity in a float `T` (concrete: E0222): both computed inf (round 14)
    ("f16", "x * 65536", "E0201", "the integer literal `65536` cannot be `f16`"),
    ("f16", "x + (-70000.0)", "E0201", "the float literal `70000.0` cannot be `f16`"),
    ("f16", "x * (65536 as T)", "E0201", "the integer literal `65536` cannot be `f16`"),
    ("f32", "let c: T = 1e39; x + c", "E0201", "cannot be `f32`"),
    ("f16", "x * 65504", "ok", "inf"),  # a finite literal, an infinite product: the run-time rule
    ("bf16", "x * 65536", "ok", "197000.0"),  # 196608, printed to bf16's digits
    ("u8", "x << 9", "ok", "0"),  # a shift of a value: the run-time rule, in both
    # a float `let` read as an integer `T` outside arithmetic: both converted it (2), silently (round 14;
    # the concrete `let d: i16 = c;` is E0203)
    ("i16", "let c = 2.5; let d: T = c; x + d", "E0201", "the float value `c` cannot be `i16`"),
    ("u8", "let c = 1e3; let d: T = c; x - x + d", "E0201", "the float value `c` cannot be `u8`"),
    ("i16", "let c = 2.5; x + (c as T)", "ok", "5"),  # the cast the help writes
    ("i16", "x + inf", "E0201", "the float value `inf` cannot be `i16`"),  # the host: -32766
]


@pytest.mark.parametrize(("ty", "body", "code", "text"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_host_and_kernel_instances_agree(ty: str, body: str, code: str, text: str) -> None:
    host = _outcome(HOST.format(body=body, ty=ty))
    kernel = _outcome(KERNEL.format(body=body, ty=ty))
    assert host[0] == kernel[0] == code, (host, kernel)
    assert text in host[1] and text in kernel[1], (host, kernel)


def test_the_host_instance_error_names_the_literal_and_the_call() -> None:
    src = HOST.format(body="x * 0.5", ty="i32")
    with pytest.raises(CheckFailed) as e:  # at `tilec check`, as a kernel instance's (`sema/host_instances.py`)
        execute(src, "cpu", out=io.StringIO(), name="g.tile")
    (d,) = [d for d in e.value.diagnostics if d.code == "E0201"]
    span = d.primary_span
    assert span is not None and src[span.start:span.end] == "0.5"
    assert any(lab.primary and lab.message == "`i32` in this instance" for lab in d.labels)
    assert any(not lab.primary and src[lab.span.start:lab.span.end] == "f(a)" for lab in d.labels)
    assert any("generic" in n for n in d.notes) and "`(0.5 as f32) as T`" in " ".join(d.help)


CONCRETE = """
kernel fn k(z: &mut Tensor<i32, [1]>) {{
    let x = z.load().item();
    z.store(zeros::<i32>([1]) + {{ {body} }});
}}
fn f(x: i32) -> i32 {{
    {body}
}}
fn main() {{
    let mut z = full::<i32>([1], 3);
    {call};
}}
"""


@pytest.mark.parametrize("body", ["x + (((!7) | (255 as i32)) >> 33)", "x + ((((!7) | 1) as i32) << 40)"])
def test_a_concrete_constant_shift_the_checker_cannot_fold(body: str) -> None:
    """`((!7) | (255 as i32)) >> 33` is a constant shift past `i32`'s width, which
    the checker does not fold (it does not follow an untyped `!`): a kernel's
    lowering folded it and refused it at the launch, as a generic instance
    ("in this instance", the generic note, on a kernel with no generics), and
    the host gave 0. Both refuse it now, in a concrete body's words, and
    `tilec check` says so first (round 14: it passed the checker, whose
    dimensions do not follow an untyped `!` or a cast; `consts.constant_shifts`)."""
    got = []
    for call in ("k(z.partition([1])).sync()", "print(f(3))"):
        code, message = _outcome(CONCRETE.format(body=body, call=call))
        got.append((code, message))
    assert got[0] == got[1] == ("E0227", "this shift overflows `i32`"), got
    for call in ("k(z.partition([1])).sync()", "print(f(3))"):
        with pytest.raises(CheckFailed) as e:
            execute(CONCRETE.format(body=body, call=call), "cpu", out=io.StringIO(), name="g.tile")
        errors = [d for d in e.value.diagnostics if d.severity.name == "ERROR"]
        assert [d.code for d in errors] == ["E0227", "E0227"], errors  # the kernel's and the function's
        for d in errors:
            assert not d.notes and "instance" not in " ".join(lab.message for lab in d.labels), d


def test_the_host_instance_literal_is_refused_at_check_time_where_the_call_is_static() -> None:
    """`tilec check` lowers a kernel's instances, so `x * 0.5` in `k<T>` launched
    with `T = i32` fails there; the same body in a host function passed
    `tilec check` and failed only when `tilec run` reached the call. Both fail
    at check now; a body the call never reaches (no static instance) runs."""
    from tilelang import driver

    def codes(src: str) -> list[str]:
        result = driver.compile(src, until="checked", name="g.tile")
        return [d.code for d in result.diagnostics if d.severity.name == "ERROR"]

    assert codes(HOST.format(body="x * 0.5", ty="i32")) == ["E0201"]
    assert codes(HOST.format(body="x + 300", ty="u8")) == ["E0201"]
    assert codes(HOST.format(body="x + ((0.5 * 2.0) as T) + (-128 as T)", ty="i8")) == []
    assert codes(HOST.format(body="x * 0.5", ty="f32")) == []


@pytest.mark.parametrize(("body", "code"), [
    ("let c = !7; x + ((c | (255 as i32)) >> 33)", "E0227"),  # through an immutable `let`
    ("x + ((255 as i32) >> (!(-34)))", "E0227"),  # an amount the dimensions do not follow
    ("x + ((3 as i32) << ((40 as i64) as i32))", "E0227"),
    ("let s = 31; x + (((!7) | (255 as i32)) >> s)", "ok"),
    ("let mut s = 40; s = 3; x + (((!7) | 1) >> s)", "ok"),  # a `let mut`: a value, not a constant
])
def test_check_and_run_agree_on_constant_shifts(body: str, code: str) -> None:
    """`tilec check` refuses a constant shift past the width exactly where the
    run refuses it (host and kernel), and passes the rest."""
    from tilelang import driver

    for call in ("k(z.partition([1])).sync()", "print(f(3))"):
        src = CONCRETE.format(body=body, call=call)
        result = driver.compile(src, until="checked", name="g.tile")
        checked = sorted({d.code for d in result.diagnostics if d.severity.name == "ERROR"}) or ["ok"]
        assert checked == [code], (call, result.diagnostics)
        if code == "ok":
            assert _outcome(src)[0] == "ok"


@pytest.mark.parametrize(("ty", "body", "code", "text"), [c for c in CASES if c[2] != "ok"],
                         ids=[f"{c[0]}:{c[1]}" for c in CASES if c[2] != "ok"])
def test_tilec_check_finds_what_the_host_instance_refuses(ty: str, body: str, code: str, text: str) -> None:
    """Every host instance refusal above is found by `tilec check` too, where
    the call fixes `T` (round 14: a constant shift, a float value meeting `T`,
    an operator outside `T`'s domain were found only when the call ran; a
    kernel's instance is lowered at check time and had them all)."""
    from tilelang import driver

    result = driver.compile(HOST.format(body=body, ty=ty), until="checked", name="g.tile")
    errors = [d for d in result.diagnostics if d.severity.name == "ERROR"]
    assert [d.code for d in errors] == [code], errors
    assert text in errors[0].message and errors[0].help
    assert any(not lab.primary and "makes this instance" in lab.message for lab in errors[0].labels)


CONST_READS = """
const C = 2.5;
fn f<T>(x: T) -> T {{
    {body}
}}
kernel fn k<T>(z: &mut Tensor<T, [1]>) {{
    let x = z.load().item();
    z.store(full::<T>([1], f(x)));
}}
fn main() {{
    {call};
}}
"""


@pytest.mark.parametrize("body", ["C", "x + C", "let d: T = C; d", "if x > x { x } else { C }"])
def test_a_float_constant_read_as_an_integer_instance(body: str) -> None:
    """`const C = 2.5;` read where an `i16` `T` is wanted: the host converted it
    (2, and `x + C` 5) where the kernel refused `x + C` (E0201) and converted the
    rest; both refuse it now, and `tilec check` first."""
    for call in ("let mut z = full::<i16>([1], 3); k(z.partition([1])).sync()", "print(f(3i16))"):
        code, message = _outcome(CONST_READS.format(body=body, call=call))
        assert (code, message) == ("E0201", "mismatched dtypes: the float value `C` cannot be `i16`"), call
    assert _outcome(CONST_READS.format(body="x + (C as T)", call="print(f(3i16))")) == ("ok", "5")
    assert _outcome(CONST_READS.format(body=body, call="print(f(3.0))"))[0] == "ok"
