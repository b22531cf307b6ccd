"""Unit tests of the ownership checker's outputs: symbolic launch checks, the
facts a kernel records, and the host checker's structural guarantees."""

from __future__ import annotations

import pytest

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ownership import LaunchCheck, check_ownership
from tilelang.ownership.facts import BinOp, Const, Sym, evaluate, simplify
from tilelang.source import SourceMap, Span
from tilelang.syntax.parser import parse


def _check(text: str):
    sources = SourceMap()
    sf = sources.add("t.tile", text)
    sink = DiagnosticSink()
    module = parse(sf, sink)
    assert not sink.has_errors
    from tilelang.sema import check_program

    program = check_program(module, sources, sink)
    assert not sink.has_errors, [d.message for d in sink.diagnostics]
    facts = check_ownership(program, sink)
    return sf, sink.diagnostics, facts


def test_evaluate_truncates_like_rust() -> None:
    assert evaluate(BinOp("/", Const(-7), Const(2)), {}) == -3
    assert evaluate(BinOp("%", Const(-7), Const(2)), {}) == -1
    assert evaluate(BinOp("/", Sym("B"), Const(4)), {"B": 1024}) == 256
    # a zero divisor as a kernel computes it (hrev10: it was -1, which passed
    # `B % (B / C) == 0` and `B - 1 + B % C < B` with C = 0)
    assert evaluate(BinOp("/", Sym("B"), Sym("C")), {"B": 8, "C": 0}) == 0
    assert evaluate(BinOp("%", Sym("B"), Sym("C")), {"B": 8, "C": 0}) == 8


def test_simplify_identities() -> None:
    assert simplify(BinOp("/", Sym("B"), Sym("B"))) == Const(1)
    assert simplify(BinOp("-", BinOp("*", Sym("B"), Const(1)), Const(0))) == Sym("B")
    assert simplify(BinOp("+", Const(2), Const(3))) == Const(5)


def test_launch_check_holds_and_diagnostic() -> None:
    span = Span(0, 10, 11)
    c = LaunchCheck(
        "k",
        "tile-index",
        Sym("num_blocks(0)"),
        "<",
        Const(4),
        span,
        "E0403",
        "tile index `block_id(0)` of `q` along axis 0",
    )
    assert c.holds({"num_blocks(0)": 3})
    assert not c.holds({"num_blocks(0)": 4})
    with pytest.raises(KeyError):
        c.holds({})
    d = c.diagnostic({"num_blocks(0)": 9}, Span(0, 0, 5))
    assert d.code == "E0403"
    assert d.primary_span == Span(0, 0, 5)
    assert any("9 < 4" in lab.message for lab in d.labels)
    assert c.symbols == frozenset({"num_blocks(0)"})


NESTED_GENERIC = """
kernel fn rows<const BM: i32, const BN: i32>(z: &mut Tensor<f32, [BM, BN]>) {
    let q = z.partition([BM / 2, BN]);
    for j in 0..2 {
        q.store(zeros::<f32>([BM / 2, BN]), [j, 0]);
    }
}

fn main() {
    let mut z = zeros::<f32>([64, 32]);
    rows(z.partition([8, 32])).sync();
}
"""


def test_symbolic_nested_tiles_become_launch_checks() -> None:
    _, diags, facts = _check(NESTED_GENERIC)
    assert not diags
    checks = facts.checks_for("rows")
    kinds = sorted(c.kind for c in checks)
    # BM % (BM / 2) == 0, and j <= 1 < BM / (BM / 2) (2 nested tiles only when BM is even)
    assert kinds == ["tile-divides", "tile-index"]
    env_ok = {"BM": 8, "BN": 32}
    env_bad = {"BM": 1, "BN": 32}  # BM / 2 == 0: no room for two nested tiles
    assert all(c.holds(env_ok) for c in checks)
    assert not all(c.holds(env_bad) for c in checks)
    assert facts.checks_for("main") == []


def test_num_tiles_loop_needs_no_check() -> None:
    src = NESTED_GENERIC.replace("for j in 0..2", "for j in 0..q.num_tiles(0)")
    _, diags, facts = _check(src)
    assert not diags
    assert [c.kind for c in facts.checks_for("rows")] == ["tile-divides"]


def test_block_id_index_is_a_launch_check() -> None:
    src = """
kernel fn k(z: &mut Tensor<f32, [64]>) {
    let q = z.partition([16]);
    q.store(zeros::<f32>([16]), [block_id(0)]);
}

fn main() {
    let mut z = zeros::<f32>([256]);
    k(z.partition([64])).sync();
}
"""
    _, diags, facts = _check(src)
    assert not diags
    (c,) = facts.checks_for("k")
    assert c.holds({"num_blocks(0)": 4}) and not c.holds({"num_blocks(0)": 5})


def test_device_fn_symbolic_fact_is_decided_for_each_call() -> None:
    """A device function's fact in its own generic (`N / 2` nested tiles of its `[N]` tile) is decided for the
    call's value (hrev29: it was E0402/E0403 at every instance): `N` = 64 holds, so no error and no launch
    check; `N` = 63 breaks both facts, reported at the call's kernel."""
    src = """
fn half<const N: i32>(t: &mut Tensor<f32, [N]>) {
    let q = t.partition([N / 2]);
    q.store(zeros::<f32>([N / 2]), [1]);
}

kernel fn k(z: &mut Tensor<f32, [W]>) {
    half(z);
}

fn main() {
    let mut z = zeros::<f32>([256]);
    k(z.partition([W])).sync();
}
"""
    _, diags, facts = _check("const W: i32 = 64;" + src)
    assert not [d for d in diags if d.severity.value == "error"]
    assert facts.launch_checks == []
    _, diags, facts = _check("const W: i32 = 63;" + src)
    assert {d.code for d in diags} == {"E0402"}
    assert all("in device function `half` with `N` = 63" in d.message for d in diags)
    assert facts.launch_checks == []


def test_waits_table_links_wait_to_launch() -> None:
    src = """
kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}

fn main() {
    let mut z = zeros::<f32>([1024]);
    let h = inc(z.partition([256])).launch();
    h.wait();
}
"""
    _, diags, facts = _check(src)
    assert not diags
    ((wait, launches),) = facts.waits.items()
    assert wait.method.name == "wait"
    assert [t.method.name for t in launches] == ["launch"]


@pytest.mark.parametrize(
    "text",
    [
        "fn main() { let x = 1; let y = x; let z = x; }",
        "fn main() { let h = 3; let g = h; print(h + g); }",
        "fn main() { let t = (1, 2.0); let u = t; let v = t; print(u.0 + v.0); }",
        "fn f() { for i in 0..3 { if i > 1 { break; } } }",
    ],
)
def test_no_false_errors_on_untracked_values(text: str) -> None:
    _, diags, _ = _check(text)
    assert not diags
