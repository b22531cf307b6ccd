"""A kernel's const generic is untyped where it is read, as a literal is: it takes
the type of what it meets (`t * B` of an `f16` tile is `f16` arithmetic,
`s / B` of an `f32` scalar divides floats). Its value is known only in an
instance, so what the checker says of a literal (E0222: `300` does not fit an
`i8`; E0227: `100 * 3` overflows one) is said of the instance when it is
lowered (hostile review, round 16). Before: a `B` of 256 read as an `i8`
wrapped to 0 silently, `S` of 100000 read as an `f16` was infinity, and
`B * B * B * B` in an `i64` context was folded in `i32` (0, not 2^32) on
every engine, where the literals give E0222, E0222 and 4294967296."""

from __future__ import annotations

import io

import pytest

from tilelang.diagnostics.model import TileError
from tilelang.run import CheckFailed, execute

KERNEL = """
kernel fn k<const B: i32>(z: &mut Tensor<{ty}, [B]>) {{
    let t = full::<{ty}>([B], 1);
    z.store({body});
}}
fn main() {{
    let mut z = zeros::<{ty}>([{n}]);
    k(z.partition([{n}])).sync();
    print(z.max());
}}
"""


def _outcome(src: str, mode: str = "run") -> tuple[str, str]:
    """(code, message + label) of the one error, or ("ok", the printed line)."""
    out = io.StringIO()
    try:
        execute(src, "cpu", out=out, name="g.tile")
    except (TileError, CheckFailed) as e:
        errors = [d for d in e.diagnostics if d.severity.name.lower() == "error"] or list(e.diagnostics)
        d = errors[0]
        assert d.primary_span is not None and d.help, d
        assert " with " in " ".join(lb.message for lb in d.labels), d  # the instance is named
        return d.code, d.message + " | " + " | ".join(lb.message for lb in d.labels) + " | " + " ".join(d.help)
    return "ok", out.getvalue().strip()


CASES = [
    # (element type, tile size, body, code, text in the message, a label or the help / the printed value)
    ("i8", 256, "t * B", "E0222", "`B` is 256, out of range for `i8`"),
    ("u8", 256, "t + B", "E0222", "`B` is 256, out of range for `u8`"),
    ("f16", 128, "t * (B * 600)", "ok", "inf"),  # f16 arithmetic overflows to infinity, as `128 * 600`'s does
    ("i16", 256, "t * (B * B)", "E0227", "65536"),
    ("i64", 256, "t * (B * B * B * B)", "ok", "4294967296"),  # folded in i64, as its type says
    ("i64", 256, "t * ((B * B * B * B) / B)", "ok", "16777216"),
    ("i8", 64, "t * B", "ok", "64"),
    ("i8", 256, "t * (B as i8)", "ok", "0"),  # a cast of the name converts (wraps), as for a `let`
    ("f32", 256, "t * (B / 3)", "ok", "85.333336"),  # untyped: a float division in an f32 context
    ("i32", 256, "t * (B / 3)", "ok", "85"),
    ("i8", 128, "t + -B", "ok", "-127"),  # under a minus, as the literal `-128` is (generic_diff --const)
    ("i8", 256, "t + -B", "E0222", "`-B` is -256, out of range for `i8`"),
    # generic_diff --const: an untyped `let` of a generic read as `i8` (it wrapped), a typed one's minus
    # folded past `i8` (wrapped), a divisor the instance knows is zero (ran as `x / 0 == 0`)
    ("i8", 256, "{ let c = B; t + c }", "E0222", "`c` is 256, out of range for `i8`"),
    ("i8", 128, "{ let c: i8 = -B; t + -c }", "E0227", "the value 128 does not fit in `i8`"),
    ("i32", 4, "t / (B - 4)", "E0226", "integer division by zero"),
    ("i32", 8, "t / (B - 4)", "ok", "0"),
]


@pytest.mark.parametrize(("ty", "n", "body", "code", "text"), CASES)
def test_a_const_generic_is_judged_like_a_literal_in_its_instance(ty: str, n: int, body: str, code: str,
                                                                  text: str) -> None:
    got_code, got = _outcome(KERNEL.format(ty=ty, n=n, body=body))
    assert got_code == code, got
    assert text in got, got


def test_the_float_context_that_rounds_to_infinity() -> None:
    """`B` read as an `f16` where it rounds to infinity (a scalar const generic, no tile named by it)."""
    src = """
kernel fn k<const S: i32>(z: &mut Tensor<f16, [4]>) {
    z.store(full::<f16>([4], 1.0) * S);
}
fn main() {
    let mut z = zeros::<f16>([4]);
    k::<100000>(z.partition([4])).sync();
    print(z.max());
}
"""
    code, text = _outcome(src)
    assert code == "E0222" and "`S` is 100000, out of range for `f16`" in text, text


def test_tilec_check_reports_it_before_the_run() -> None:
    # CheckFailed: `tilec check` refused it, before anything ran
    with pytest.raises(CheckFailed) as ei:
        execute(KERNEL.format(ty="i8", n=256, body="t * B"), "cpu", out=io.StringIO(), name="g.tile")
    assert [d.code for d in ei.value.diagnostics] == ["E0222"]


def test_the_help_leads_to_a_program_that_runs() -> None:
    """The help's forms: compute in a wider type, or a cast where wrapping is meant."""
    assert _outcome(KERNEL.format(ty="i8", n=256, body="((t as i32) * B) as i8"))[0] == "ok"
    assert _outcome(KERNEL.format(ty="i16", n=256, body="((t as i32) * (B * B)) as i16")) == ("ok", "0")


# A host function's const generics are `i32` values (the reference's Types): `+ - *` and `-` of generics and
# literals only that leaves `i32` is E0227 in the call, with the generics' values in the label (hrev17: it
# wrapped silently, `C * 1431655766 * 3` in `go::<1>()` was 2); other host arithmetic wraps at run time.
HOST = """
fn go<const C: i32, const D: i32>() -> i32 {{
    {body}
}}
fn main() {{
    print(go::<{c}, {d}>());
}}
"""


@pytest.mark.parametrize(("body", "c", "d", "code", "text"), [
    ("C * 1431655766 * 3", 1, 0, "E0227", "the value 4294967298 does not fit in `i32`"),
    ("C * 1431655766 * 3", 0, 0, "ok", "0"),
    ("-C", -2147483648, 0, "E0227", "the value 2147483648 does not fit in `i32`"),
    ("-C + 0", 5, 0, "ok", "-5"),
    ("C * D - 1", 65536, 32768, "E0227", "(C = 65536, D = 32768)"),
    ("C * D - 1", 65536, 32767, "ok", "2147418111"),
    ("C - D", -2147483648, 1, "E0227", "the value -2147483649"),
    ("(((C as i64) * (D as i64) - 1) / 4) as i32", 65536, 32768, "ok", "536870911"),  # the help's form
])
def test_host_generic_arithmetic_is_checked_in_each_call(body: str, c: int, d: int, code: str, text: str) -> None:
    out = io.StringIO()
    try:
        execute(HOST.format(body=body, c=c, d=d), "cpu", out=out, name="h.tile")
    except (TileError, CheckFailed) as e:
        dg = [x for x in e.diagnostics if x.severity.name.lower() == "error"][0]
        assert dg.code == code, dg
        assert dg.primary_span is not None and dg.help, dg
        assert all(f"({g} as i64)" in " ".join(dg.help) for g in "CD" if g in body), dg  # each generic widened
        assert text in " ".join(lb.message for lb in dg.labels), dg
        return
    assert code == "ok" and out.getvalue().strip() == text, out.getvalue()


RETURNS = """
fn go<const C: i32>() -> i32 {{
    {body}
}}
fn main() {{
    print(go::<{c}>());
}}
"""


@pytest.mark.parametrize(("body", "c", "goes", "want"), [
    ("C * 1431655766 * 3 + 2", 1, ("`go` returns: declare it `-> i64`", "-> i32", "-> i64"), "4294967300"),  # tail
    ("let d = (1 << C) + 1;\n    d", 40, ("`go` returns", "-> i32", "-> i64"), "1099511627777"),  # through a `let`
    ("if C > 0 { return -(C * 2147483647); }\n    0", 3, ("`go` returns", "-> i32", "-> i64"), "-6442450941"),
    ("let d: i32 = C * 1431655766 * 3;\n    print(d);\n    7", 1,
     ("which `d` holds: declare it `let d: i64`", "let d: i32", "let d: i64"), "4294967298\n7"),  # a typed `let`
    ("let d = C * 1431655766 * 3;\n    print(d);\n    7", 1, None, "4294967298\n7"),  # an untyped `let`: as is
])
def test_the_widened_help_widens_where_the_value_goes(body: str, c: int, goes: tuple[str, str, str] | None,
                                                      want: str) -> None:
    """hrev19: where the overflowing arithmetic is what a host function returns (or a typed `let` holds), E0227's
    wider form makes it return (hold) a wider type than declared; applied alone, it was E0203, whose help
    (`.. as i32`) wrapped the value again, silently. The help now says to declare the wider type; both applied,
    the program runs and prints the exact value."""
    src = RETURNS.format(body=body, c=c)
    with pytest.raises(CheckFailed) as ei:
        execute(src, "cpu", out=io.StringIO(), name="r.tile")
    d = [x for x in ei.value.diagnostics if x.severity.name.lower() == "error"][0]
    help_ = " ".join(d.help)
    assert d.code == "E0227" and (goes is None) == ("declare it" not in help_), help_
    assert goes is None or goes[0] in help_, help_
    wide = help_.split("compute in a wider type: `", 1)[1].split("`", 1)[0]
    start, end = d.primary_span.start, d.primary_span.end  # type: ignore[union-attr]
    fixed = src[:start] + wide + src[end:]
    if goes is not None:
        fixed = fixed.replace(goes[1], goes[2], 1)
    out = io.StringIO()
    execute(fixed, "cpu", out=out, name="r.tile")
    assert out.getvalue().strip() == want, fixed
