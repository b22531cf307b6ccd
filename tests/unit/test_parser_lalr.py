"""The fast LALR driver (`tilelang.syntax.lalr`) against Lark itself.

For every input Lark accepts, the driver must build the same tree (rule
names, children, `None` placeholders, token types, offsets), and it must
reject every input Lark rejects. A rejection of an input Lark accepts would
still parse (through Lark), but only slowly, so it fails here too.
"""

from __future__ import annotations

import heapq
import random
from pathlib import Path

import pytest
from lark.exceptions import UnexpectedInput

from tilelang.syntax.lalr import Node, Reject, Tok, from_lark
from tilelang.syntax.lexical import scan
from tilelang.syntax.parser import _tables, lark_parser

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(p for p in REPO.rglob("*.tile") if ".git" not in p.parts)


def both(code: str, rule: str, lo: int = 0, stop: int | None = None) -> tuple[str | None, str | None]:
    """(Lark's tree, the driver's tree) as reprs; None where one rejects."""
    stop = len(code) if stop is None else stop
    try:
        ref: str | None = repr(from_lark(lark_parser().parse(code[lo:stop], start=rule), lo))
    except UnexpectedInput:
        ref = None
    try:
        got: str | None = repr(_tables().parse(code, rule, lo, stop))
    except Reject:
        got = None
    return ref, got


def _shapes(tree: Node | Tok | None, out: set[tuple[str, str | None, str | None]]) -> None:
    """Each (rule, child, next child) of the driver's `tree` into `out` (`^` and `$` for the ends; a child is its
    rule's name, its token's type or None): the productions and the token types a tree shows, without the lengths
    of its lists."""
    if not isinstance(tree, Node):
        return
    kinds = ["^", *(c.data if isinstance(c, Node) else c.type if isinstance(c, Tok) else None
                    for c in tree.children), "$"]
    out.update((tree.data, a, b) for a, b in zip(kinds, kinds[1:], strict=False))
    for c in tree.children:
        _shapes(c, out)


def _covering(codes: list[str]) -> list[int]:
    """The indices of every code the driver rejects, and of codes it accepts that together show every
    (rule, child, next child) all of them show (`_shapes`), picked greedily by new shapes a character."""
    picked, shapes = [], []
    for i, code in enumerate(codes):
        seen: set[tuple[str, str | None, str | None]] = set()
        try:
            _shapes(_tables().parse(code, "module", 0, len(code)), seen)
        except Reject:
            picked.append(i)
        shapes.append(seen)
    left = set().union(*shapes)
    heap = [(-len(s) / (len(code) + 200), i) for i, (s, code) in enumerate(zip(shapes, codes, strict=True))]
    heapq.heapify(heap)
    while left:  # lazy greedy: a code's score only falls, so a rescored head that stays the head is the best
        _, i = heapq.heappop(heap)
        score = -len(shapes[i] & left) / (len(codes[i]) + 200)
        if heap and score > heap[0][0]:
            heapq.heappush(heap, (score, i))
            continue
        picked.append(i)
        left -= shapes[i]
    return sorted(picked)


def test_programs_showing_every_production_in_the_repository_give_lark_s_tree() -> None:
    """The default cut of the sweep below: every program the driver rejects, and a set of programs it accepts
    that show every (rule, child, next child) of all the repository's programs (about a quarter of the code;
    Lark's parse is most of the time)."""
    codes = [scan(p.read_text(encoding="utf-8")).code for p in PROGRAMS]
    picked = _covering(codes)
    assert 100 < len(picked) < len(codes)
    accepted = 0
    for i in picked:
        ref, got = both(codes[i], "module")
        assert got == ref, PROGRAMS[i]
        accepted += ref is not None
    assert accepted > 100


@pytest.mark.heavy
def test_every_program_in_the_repository_gives_lark_s_tree() -> None:
    accepted = 0
    for path in PROGRAMS:
        code = scan(path.read_text(encoding="utf-8")).code
        ref, got = both(code, "module")
        assert got == ref, path
        accepted += ref is not None
    assert accepted > 100  # the corpus is mostly valid programs


# Where the contextual lexer matters, and the shapes of the grammar's corners.
CASES = [
    ("module", "fn f(x: Tensor<Tile<f32, [4]>>) { let a = &&x; let b = x.0.1; }"),
    ("module", "fn g() { f::<Vec<Vec<i32>>>(); a >>= 1; b = c >> d && e; }"),
    ("module", "fn h() { let (_, y) = c; let _ = 2; let v = x.0.1.2; }"),
    ("module", "#[hints(num_warps = 4, 2,)] kernel fn k<const B: i32, T,>(mut a: &mut T,) -> () {}"),
    ("module", "use std::nn::{a, b,}; use std::*; use \"x.tile\"; const C: i32 = -1;"),
    ("module", "fn f() -> (i32, (f32,)) { if a { } else if b { 1 } else { 2 }; unsafe { } graph { } }"),
    ("module", "fn f() { for (i, _) in 0..=n { while x { break; continue; } } return; }"),
    ("module", "fn f() { ((a)) + (b) * -c as f32 < !d; f(x = 1, [1, 2,], (), (1,)) }"),
    ("module", ""),
    ("module", "   \n  "),
    ("repl_input", "let x = 1; x + 1"),
    ("repl_input", "fn f() {} f()"),
    ("repl_input", ""),
    ("repl_input", "return"),
    ("repl_input", "x += 1"),
    ("expr_input", "a.b::<[4, ?], 2, -3, { N }>(c)[0].1"),
    ("expr_input", "_"),
    ("expr_input", "1u7 + 0x_ + 1e5f32"),
    # rejected by both
    ("module", "fn f() { let = ; }"),
    ("module", "fn f() { $ }"),
    ("module", "fn f() {"),
    ("expr_input", "a < b <"),
]


@pytest.mark.parametrize(("rule", "text"), CASES)
def test_corner_cases_give_lark_s_tree(rule: str, text: str) -> None:
    ref, got = both(text, rule)
    assert got == ref


def test_a_chunk_of_a_file_keeps_whole_file_offsets() -> None:
    code = "fn a() {}\nfn b() { x }\n"
    lo = code.index("fn b")
    tree = _tables().parse(code, "module", lo, len(code))
    assert isinstance(tree, Node)
    names = [c for c in tree.children[0].children if isinstance(c, Tok) and c.type == "NAME"]
    assert (names[0].start, names[0].end) == (lo + 3, lo + 4)
    assert both(code, "module", lo, len(code))[0] == repr(tree)


FRAGMENTS = ["{", "}", "(", ")", ";", ",", "<", ">", ">>", "&&", "&", "_", "fn", "let", "x", "1",
             "1.", "0.1", ".", "..", "::", "as", "=", "==", "if", "else", "#[", "]", "x.0.1",
             "Tensor<Tensor<f32>>", "&&x", "a < b < c", "mut", "kernel", "$", "-", "!", "?"]


def _small_programs() -> list[str]:
    """The code of each program in the repository under 3,000 characters."""
    sources = [scan(p.read_text(encoding="utf-8")).code for p in PROGRAMS]
    return [s for s in sources if len(s) < 3000]


def _mutant(rng: random.Random, sources: list[str]) -> str:
    """One of `sources` with 1 to 3 random edits: a `FRAGMENTS` entry inserted,
    or 1 to 6 characters deleted."""
    text = rng.choice(sources)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            text = text[:i] + " " + rng.choice(FRAGMENTS) + " " + text[i:]
        else:
            text = text[:i] + text[i + rng.randint(1, 6):]
    return text


def test_mutated_programs_agree_with_lark() -> None:
    rng = random.Random(2026)
    sources = _small_programs()
    checked = 0
    for _ in range(300):
        text = _mutant(rng, sources)
        ref, got = both(text, "module")
        assert got == ref, text
        checked += ref is not None
    assert checked > 10


def test_lark_s_tree_builds_the_same_ast_when_the_driver_declines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`parse` falls back to Lark's tree (`from_lark`) whenever the driver rejects: the same AST and diagnostics
    on programs spread over the repository (every 80th: examples, std, the ui and user programs' errors too) and a
    text of lexical and syntax errors. (That Lark's tree is the driver's for every production is the covering
    test's above; the first 60 programs here, 295 KB of Lark parsing, were 9.5 of the suite's ~2,000 CPU-s.)"""
    from tilelang.diagnostics.model import DiagnosticSink
    from tilelang.source import SourceMap
    from tilelang.syntax import lalr
    from tilelang.syntax.parser import parse

    def run(text: str) -> tuple[str, str]:
        sink = DiagnosticSink()
        module = parse(SourceMap().add("t.tile", text), sink)
        return repr(module), repr(sink.diagnostics)

    texts = [p.read_text(encoding="utf-8") for p in PROGRAMS[::80]]
    texts.append("fn f() { let x = (a + 1u7) * 2 < 3 < 4; }\n#[x]\nfn g() { let _ = \"\\q\"; }")
    fast = [run(t) for t in texts]

    def decline(self: object, *args: object) -> object:
        raise lalr.Reject

    monkeypatch.setattr(lalr.Tables, "parse", decline)
    assert [run(t) for t in texts] == fast


def test_a_rejection_names_the_offset_of_lark_s_error() -> None:
    """`Reject.at` is where Lark's error is (so the recovery can compare
    offsets without running Lark, whose parse of a long item takes seconds)."""
    from tilelang.syntax.parser import _error_offset

    rng = random.Random(7)
    sources = _small_programs()
    compared = 0
    for _ in range(800):
        text = _mutant(rng, sources)
        lo = rng.randrange(len(text) // 2 + 1)
        lo = text.rfind("\n", 0, lo) + 1
        try:
            _tables().parse(text, "module", lo, len(text))
            continue
        except Reject as r:
            if r.at is None:
                continue
            at = r.at - lo
        try:
            lark_parser().parse(text[lo:], start="module")
        except UnexpectedInput as e:
            assert _error_offset(e, len(text) - lo) == at, text[lo:]
            compared += 1
    assert compared > 60


def test_the_error_parser_reports_what_lark_s_tree_parser_does() -> None:
    """`_error_lark` builds no trees, so its exceptions must give the same
    diagnostics as `lark_parser()`'s (the reporter reads the value stack)."""
    from tilelang.syntax.errors import ErrorReporter
    from tilelang.syntax.parser import _error_lark, _vocabulary

    rng = random.Random(11)
    sources = _small_programs()
    extra = ["fn main() { let x = 1.; }", "fn main() { let y = 2.foo(; }", "kernel add() {}",
             "fn main() { x. }", "fn f() { else { } }", "fn main() { let a = 1.e; }"]
    compared = 0
    for i in range(400):
        if i < len(extra):
            text = extra[i]
        else:
            text = _mutant(rng, sources)
        got = []
        for parser in (lark_parser(), _error_lark()):
            try:
                parser.parse(text, start="module")
            except UnexpectedInput as e:
                d = ErrorReporter(_vocabulary(), 0, text).parse_error(e, 0, len(text), "module")
                got.append((d.code, d.message, d.labels, d.help))
            else:
                got.append(None)
        assert got[0] == got[1], text
        compared += got[0] is not None
    assert compared > 60
