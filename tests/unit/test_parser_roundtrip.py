"""Property: for a random AST, `parse(unparse(ast))` gives back the same tree.

This exercises precedence, associativity, the statement rule for block-like
expressions and every expression form through the builder, far beyond what
hand-written cases reach.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_parser import shape

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import DUMMY_SPAN, SourceMap
from tilelang.syntax import ast
from tilelang.syntax.parser import parse
from tilelang.syntax.printer import unparse

S = DUMMY_SPAN


def ident(name: str) -> ast.Ident:
    return ast.Ident(name, S)


names = st.sampled_from(["x", "y", "acc", "tile", "n"])

leaves: st.SearchStrategy[ast.Expr] = st.one_of(
    st.builds(lambda v, s: ast.IntLit(v, s, S), st.integers(0, 10**6),
              st.sampled_from([None, None, "u32", "i64"])),
    st.builds(lambda v: ast.FloatLit(v, None, repr(v), S),
              st.sampled_from([0.5, 1.25, 2.0, 1e-05])),
    st.builds(lambda v: ast.BoolLit(v, S), st.booleans()),
    st.builds(lambda v: ast.StrLit(v, S), st.sampled_from(["", "hi", 'q"t', "a\nb"])),
    st.builds(lambda n: ast.Name(ident(n), S), names),
)


def _block(stmts: list[ast.Stmt], tail: ast.Expr | None) -> ast.Block:
    return ast.Block(tuple(stmts), tail, S)


def extend(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    args = st.lists(st.builds(lambda v: ast.Arg(None, v, S), inner), max_size=3).map(tuple)
    simple_block = st.builds(lambda e: _block([], e), inner)
    return st.one_of(
        st.builds(lambda op, a, b: ast.Binary(op, a, b, S, S),
                  st.sampled_from(ast.BINARY_OPS), inner, inner),
        st.builds(lambda op, a: ast.Unary(op, a, S), st.sampled_from(ast.UNARY_OPS), inner),
        st.builds(lambda a, t: ast.Cast(a, ast.NamedType(ident(t), (), S), S), inner,
                  st.sampled_from(["f32", "i32", "f16"])),
        st.builds(lambda m, a: ast.Ref(m, a, S), st.booleans(), inner),
        st.builds(lambda n, a: ast.Call(ast.Name(ident(n), S), (), a, S),
                  st.sampled_from(["f", "exp", "load"]), args),
        st.builds(lambda r, m, a: ast.MethodCall(r, ident(m), (), a, S), inner,
                  st.sampled_from(["sum", "load", "store"]), args),
        st.builds(lambda r, f: ast.Field(r, ident(f), S), inner, st.sampled_from(["0", "1"])),
        st.builds(lambda r, i: ast.Index(r, i, S), inner, inner),
        st.builds(lambda xs: ast.TupleExpr(tuple(xs), S), st.lists(inner, max_size=3)),
        st.builds(lambda xs: ast.ArrayExpr(tuple(xs), S), st.lists(inner, max_size=3)),
        st.builds(lambda c, a, b: ast.If(c, a, b, S), inner, simple_block,
                  st.one_of(st.none(), simple_block)),
        simple_block,
        st.builds(lambda b: ast.UnsafeBlock(b, S), simple_block),
    )


exprs = st.recursive(leaves, extend, max_leaves=12)
target = st.builds(lambda n: ast.Name(ident(n), S), names)
pattern = st.builds(lambda n, m: ast.NamePat(ident(n), m, S), names, st.booleans())

stmts: st.SearchStrategy[ast.Stmt] = st.one_of(
    st.builds(lambda p, v: ast.Let(p, None, v, S), pattern, exprs),
    st.builds(lambda t, op, v: ast.Assign(t, op, v, S, S), target,
              st.sampled_from(ast.ASSIGN_OPS), exprs),
    st.builds(lambda e: ast.ExprStmt(e, True, S), exprs),
    st.builds(lambda c, e: ast.While(c, _block([ast.ExprStmt(e, True, S)], None), S),
              exprs, exprs),
    st.builds(lambda p, a, b, inc: ast.For(p, ast.RangeExpr(a, b, inc, S),
                                           _block([ast.Break(S), ast.Continue(S)], None), S),
              pattern, leaves, leaves, st.booleans()),
    st.builds(lambda v: ast.Return(v, S), st.one_of(st.none(), exprs)),
)


def _fn(body: ast.Block) -> ast.Module:
    fn = ast.FnDecl(ident("f"), False, (), (), (), None, body, S)
    return ast.Module((fn,), S)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(stmts, max_size=4), st.one_of(st.none(), exprs))
def test_unparse_then_parse_is_the_identity(body: list[ast.Stmt], tail: ast.Expr | None) -> None:
    module = _fn(_block(body, tail))
    text = unparse(module)
    sink = DiagnosticSink()
    again = parse(SourceMap().add("rt.tile", text), sink)
    assert not sink.diagnostics, (text, [d.message for d in sink.diagnostics])
    assert shape(again) == shape(module), text
