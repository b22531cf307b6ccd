"""The front end's per-process memos (hfront): `ast.walk`'s kept walks, `parser.parse_once` for the program's
own text, `loader._std_defs` by a std file's text, and `tile_counts.counting_site` by program. Each answers as
the computation it saves would (a walk as the uncached traversal), two different inputs get their own answers,
an edited file its new one, and what they hold stays bounded over thousands of inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tilelang import driver
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.resources import stdlib_dir
from tilelang.sema import loader
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast
from tilelang.syntax import parser as parser_mod


def _reference_walk(node: Any, stop: Any = None) -> list[Any]:
    """The traversal `walk` had before it kept walks (pre-order, slots in order, `stop` cuts below)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__slots__") or isinstance(n, Span):
            continue
        out.append(n)
        if stop is not None and isinstance(n, stop) and n is not node:
            continue
        for slot in reversed(type(n).__slots__):
            child = getattr(n, slot, None)
            if isinstance(child, tuple) or hasattr(child, "__slots__"):
                stack.append(child)
    return out


def _parse(text: str, name: str = "<t>") -> ast.Module:
    sink = DiagnosticSink()
    module = parser_mod.parse(SourceMap().add(name, text), sink)
    assert not sink.diagnostics, sink.diagnostics
    return module


@pytest.fixture
def fresh_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ast, "_WALKS", {})
    monkeypatch.setattr(ast, "_walk_held", 0)


def test_kept_walks_are_the_traversal_from_every_node_with_every_stop(fresh_walks: None) -> None:
    module = _parse((Path(str(stdlib_dir())) / "std" / "nn.tile").read_text(), "nn.tile")
    nodes = _reference_walk(module)
    assert len(nodes) > 400
    for stop in (None, ast.UnsafeBlock, ast.FnDecl, (ast.Call, ast.Block)):
        for node in nodes[::3]:
            expect = _reference_walk(node, stop)
            for _ in range(2):  # computed, then kept
                got = list(ast.walk(node, stop))
                assert len(got) == len(expect) and all(a is b for a, b in zip(got, expect, strict=True))
        fns = tuple(i for i in module.items if isinstance(i, ast.FnDecl))
        for root in (fns, (fns[0].params, (fns[-1],)), (fns[0], "text", 3)):  # tuples: from their parts
            assert [id(n) for n in ast.walk(root, stop)] == [id(n) for n in _reference_walk(root, stop)]
    assert ast.preorder(module) is ast.preorder(module)  # (one walk kept, not one a call)


def test_two_programs_get_their_own_walks(fresh_walks: None) -> None:
    a = _parse("fn main() { let x = 1 + 2; print(x); }\n")
    b = _parse("fn main() { let y = 3; print(y * 2); }\n")
    names = [[n.name for n in ast.walk(m) if isinstance(n, ast.Ident)] for m in (a, b)]
    assert names == [["main", "x", "print", "x"], ["main", "y", "print", "y"]]
    assert [type(n) for n in ast.walk(a)] == [type(n) for n in _reference_walk(a)]


def test_kept_walks_stay_within_their_budget(monkeypatch: pytest.MonkeyPatch, fresh_walks: None) -> None:
    monkeypatch.setattr(ast, "_WALK_BUDGET", 100)
    span = Span(0, 0, 1)
    for i in range(3000):  # thousands of compiles' trees, each walked twice
        block = ast.Block(tuple(ast.ExprStmt(ast.IntLit(i + k, None, span), True, span) for k in range(i % 9)),
                          None, span)
        for _ in range(2):
            got = list(ast.walk(block))
            assert got[0] is block and len(got) == 1 + 2 * (i % 9)
            assert [n.value for n in got if isinstance(n, ast.IntLit)] == [i + k for k in range(i % 9)]
        assert ast._walk_held == sum(len(nodes) for _, nodes in ast._WALKS.values()) <= 100
    big = ast.Block(tuple(ast.ExprStmt(ast.IntLit(k, None, span), True, span) for k in range(80)), None, span)
    assert len(list(ast.walk(big))) == 161  # (a walk past the budget is given, not kept)
    assert ast._walk_held <= 100


def test_parse_once_shares_a_clean_program_s_tree_and_only_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parser_mod, "_PARSED", {})
    monkeypatch.setattr(parser_mod, "_PARSED_LIMIT", 4)
    one = "fn main() { print(1); }\n"
    first = driver.compile(one, "ast").output
    assert driver.compile(one, "ast").output is first  # the program's own text: parsed once
    other = driver.compile(one.replace("1", "2"), "ast").output
    assert other is not first and [n.value for n in ast.walk(other) if isinstance(n, ast.IntLit)] == [2]
    broken = driver.compile("fn main() { print(1 + ); }\n", "ast")
    assert not broken.ok and all("{" not in k[2] or "+ )" not in k[2] for k in parser_mod._PARSED)
    again = driver.compile("fn main() { print(1 + ); }\n", "ast")  # an error is reported each time
    assert [d.code for d in again.diagnostics] == [d.code for d in broken.diagnostics] != []
    for i in range(20):
        assert driver.compile(f"fn main() {{ print({i}); }}\n", "ast").ok
        assert len(parser_mod._PARSED) <= 4


def test_std_items_read_an_edited_std_file_anew(tmp_path: Path) -> None:
    mod = tmp_path / "std" / "m.tile"
    mod.parent.mkdir()
    mod.write_text("// one\nfn a(x: i32, y: i32) -> i32 { x }\nconst K: i32 = 1;\n")
    first = loader.ModuleLoader(tmp_path)
    assert first.std_items() == {"a": ["std::m"], "K": ["std::m"]} and first.std_arity("a") == 2
    mod.write_text("kernel fn b<const B: i32>(z: &mut Tensor<f32, [B]>) { }\n")
    second = loader.ModuleLoader(tmp_path)
    assert second.std_items() == {"b": ["std::m"]} and second.std_arity("b") == 1 and second.std_arity("a") is None
    assert loader.ModuleLoader(tmp_path).std_constants() == {}


LIB = """fn total(x: &Tensor<f32, [?]>) -> f32 {
    let p = x.partition([16]);
    let mut s = 0.0;
    for k in 0..p.num_tiles(0) {
        s = s + p.load([k]).sum();
    }
    s
}
"""
MAIN = """use "lib.tile";
kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(full::<f32>([B], total(x)));
}
fn main() {
    let x = ones::<f32>([64]);
    let mut z = zeros::<f32>([16]);
    k(z.partition([16]), &x).sync();
}
"""


def test_a_kernel_s_tile_counting_is_its_program_s(tmp_path: Path) -> None:
    """One text, so one parsed kernel declaration, in two programs whose `total` differs: each program's answer
    (E0514's site is where the kernel, or a function it calls, counts tiles)."""
    from tilelang.runtime.tile_counts import counting_site

    lib, main = tmp_path / "lib.tile", tmp_path / "main.tile"
    main.write_text(MAIN)
    sites = []
    decls = []
    for body in (LIB, LIB.replace("p.num_tiles(0)", "4")):
        lib.write_text(body)
        r = driver.compile(MAIN, "checked", name=str(main))
        assert r.ok, r.diagnostics
        program = r.output.program
        decls.append(program.kernels[next(iter(program.kernels))].decl)
        sites.append(counting_site(program, decls[-1]))
    assert decls[0] is decls[1]
    assert sites[0] is not None and sites[0][1] == "`.num_tiles(..)` in `total`" and sites[1] is None


def test_let_values_are_each_declaration_s_own() -> None:
    from tilelang.sema.consts import let_values

    a = _parse("fn f() { let x = 1; let mut y = 2; let z = x + 3; }\nfn g() { let w = 4; }\n")
    b = _parse("fn f() { let x = 5; }\n")
    fa, ga = a.items
    got = let_values([fa, ga])
    assert [(p.name.name, type(v).__name__) for p, v in got.items()] == \
        [("x", "IntLit"), ("y", "IntLit"), ("z", "Binary"), ("w", "IntLit")]
    assert let_values([fa, ga]) == got and let_values([ga]) == {p: v for p, v in got.items() if p.name.name == "w"}
    assert [v.value for v in let_values(b.items).values()] == [5]
    got.clear()  # (a caller's dict is its own)
    assert len(let_values([fa])) == 3
