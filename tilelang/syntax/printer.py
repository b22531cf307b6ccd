"""Two printers for the surface AST.

- `format_ast(module, sources)`: a readable indented tree (`tilec emit --stage
  ast`): one node per line with its class name, its key scalar fields and the
  `line:col` where its span starts; children are indented under the field
  that holds them.
- `unparse(node)`: Tile source text for a node, fully parenthesised where
  precedence could matter, so that `parse(unparse(m))` gives back the same
  tree (the round-trip property the parser tests check).

Invariant: both are pure functions of the AST; neither prints.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilelang.source import SourceMap, Span
from tilelang.syntax import ast
from tilelang.syntax.build import destructuring

# Scalar fields shown inline, in this order, when a node has them.
_INLINE = ("name", "op", "value", "suffix", "mutable", "is_kernel", "is_const", "inclusive",
           "semi", "glob")


def format_ast(node: object, sources: SourceMap | None = None) -> str:
    """An indented tree of `node` (usually an `ast.Module`)."""
    lines: list[str] = []
    _format(node, sources, 0, "", lines)
    return "\n".join(lines) + "\n"


def _where(span: Span, sources: SourceMap | None) -> str:
    if sources is None or span.file < 0:
        return f"@{span.start}..{span.end}"
    try:
        line, col = sources.get(span.file).line_col(span.start)
    except IndexError:
        return f"@{span.start}..{span.end}"
    return f"@{line}:{col}"


def _is_node(x: object) -> bool:
    return dataclasses.is_dataclass(x) and not isinstance(x, type) and hasattr(x, "span")


def _format(node: object, sources: SourceMap | None, depth: int, label: str,
            lines: list[str]) -> None:
    pad = "  " * depth
    prefix = f"{label}: " if label else ""
    if node is None:
        lines.append(f"{pad}{prefix}-")
        return
    if isinstance(node, ast.Ident):
        lines.append(f"{pad}{prefix}`{node.name}` {_where(node.span, sources)}")
        return
    if isinstance(node, ast.Name):
        lines.append(f"{pad}{prefix}Name `{node.ident.name}` {_where(node.span, sources)}")
        return
    if not _is_node(node):
        lines.append(f"{pad}{prefix}{node!r}")
        return
    head = [type(node).__name__]
    children: list[tuple[str, Any]] = []
    for f in dataclasses.fields(node):  # type: ignore[arg-type]
        if f.name in ("span", "op_span", "text"):
            continue
        value = getattr(node, f.name)
        if isinstance(value, ast.Ident) and f.name in ("name", "method", "field"):
            head.append(f"{f.name}=`{value.name}`")
        elif f.name in _INLINE and not _is_node(value) and not isinstance(value, tuple):
            if isinstance(value, bool):
                if value:
                    head.append(f.name)
            elif value is not None:
                head.append(f"{f.name}={value!r}")
        elif value is None or (isinstance(value, tuple) and not value):
            continue
        else:
            children.append((f.name, value))
    head.append(_where(node.span, sources))  # type: ignore[attr-defined]
    lines.append(f"{pad}{prefix}{' '.join(head)}")
    for name, value in children:
        if isinstance(value, tuple):
            lines.append(f"{pad}  {name}:")
            for v in value:
                if v is None and isinstance(node, ast.ShapeType):
                    lines.append(f"{pad}    ?")  # a dimension known only at run time
                    continue
                _format(v, sources, depth + 2, "", lines)
        else:
            _format(value, sources, depth + 1, name, lines)


# ---------------------------------------------------------------- unparse
def unparse(node: object, indent: int = 0) -> str:
    """Source text for an AST node; re-parsing it yields the same tree."""
    return _Unparser().node(node, indent)


class _Unparser:
    def node(self, n: object, ind: int) -> str:
        match n:
            case ast.Module():
                return "\n".join(self.item(i) for i in n.items) + "\n"
            case ast.FnDecl() | ast.ConstDecl() | ast.UseDecl():
                return self.item(n)
            case ast.Block():
                return self.block(n, ind)
            case _:
                if isinstance(n, (ast.Let, ast.Assign, ast.ExprStmt, ast.For, ast.While,
                                  ast.Return, ast.Break, ast.Continue)):
                    return self.stmt(n, ind)
                if isinstance(n, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType)):
                    return self.type(n)
                return self.expr(n, ind)  # type: ignore[arg-type]

    # -------------------------------------------------------- items
    def item(self, it: ast.Item) -> str:
        match it:
            case ast.FnDecl():
                attrs = "".join(self.attr(a) + "\n" for a in it.attrs)
                gen = ""
                if it.generics:
                    gen = "<" + ", ".join(
                        f"const {g.name.name}: {self.type(g.ty)}" if g.is_const and g.ty
                        else g.name.name for g in it.generics) + ">"
                params = ", ".join(("mut " if p.mutable else "") + f"{p.name.name}: "
                                   + self.type(p.ty) for p in it.params)
                ret = f" -> {self.type(it.ret)}" if it.ret is not None else ""
                kw = "kernel fn" if it.is_kernel else "fn"
                return f"{attrs}{kw} {it.name.name}{gen}({params}){ret} {self.block(it.body, 0)}\n"
            case ast.ConstDecl():
                ty = f": {self.type(it.ty)}" if it.ty is not None else ""
                return f"const {it.name.name}{ty} = {self.expr(it.value, 0)};\n"
            case ast.UseDecl():
                if it.file is not None:
                    return f"use {self.expr(it.file, 0)};\n"
                path = "::".join(s.name for s in it.path)
                if it.glob:
                    return f"use {path}::*;\n"
                if it.names is not None:
                    return f"use {path}::{{{', '.join(n.name for n in it.names)}}};\n"
                return f"use {path};\n"
        raise AssertionError(type(it).__name__)

    def attr(self, a: ast.Attribute) -> str:
        if not a.args:
            return f"#[{a.name.name}]"
        args = ", ".join((f"{x.name.name} = " if x.name else "") + self.expr(x.value, 0)
                         for x in a.args)
        return f"#[{a.name.name}({args})]"

    # -------------------------------------------------------- statements
    def block(self, b: ast.Block, ind: int) -> str:
        pad = "    " * (ind + 1)
        parts = [pad + self.stmt(s, ind + 1) for s in b.stmts]
        if isinstance(b.tail, ast.Block) and destructuring(
                as_stmt := ast.ExprStmt(b.tail, False, b.tail.span)) is not None:
            parts.append(pad + self.stmt(as_stmt, ind + 1))  # `(a, b) = v;` last in a block
        elif b.tail is not None:
            parts.append(pad + self.expr(b.tail, ind + 1, stmt_start=True))
        if not parts:
            return "{ }"
        return "{\n" + "\n".join(parts) + "\n" + "    " * ind + "}"

    def stmt(self, s: ast.Stmt, ind: int) -> str:
        match s:
            case ast.Let():
                ty = f": {self.type(s.ty)}" if s.ty is not None else ""
                val = f" = {self.expr(s.value, ind)}" if s.value is not None else ""
                return f"let {self.pattern(s.pattern)}{ty}{val};"
            case ast.Assign():
                return f"{self.expr(s.target, ind, stmt_start=True)} {s.op} {self.expr(s.value, ind)};"
            case ast.ExprStmt():
                if (d := destructuring(s)) is not None:
                    return f"{self.expr(d[0], ind, stmt_start=True)} = {self.expr(d[1], ind)};"
                text = self.expr(s.expr, ind, stmt_start=True)
                return text + (";" if s.semi else "")
            case ast.For():
                return (f"for {self.pattern(s.pattern)} in {self.expr(s.iter, ind)} "
                        f"{self.block(s.body, ind)}")
            case ast.While():
                return f"while {self.expr(s.cond, ind)} {self.block(s.body, ind)}"
            case ast.Return():
                return "return;" if s.value is None else f"return {self.expr(s.value, ind)};"
            case ast.Break():
                return "break;"
            case ast.Continue():
                return "continue;"
        raise AssertionError(type(s).__name__)

    def pattern(self, p: ast.Pattern) -> str:
        match p:
            case ast.NamePat():
                return ("mut " if p.mutable else "") + p.name.name
            case ast.WildcardPat():
                return "_"
            case ast.TuplePat():
                if len(p.elems) == 1:
                    return f"({self.pattern(p.elems[0])},)"
                return "(" + ", ".join(self.pattern(e) for e in p.elems) + ")"
        raise AssertionError(type(p).__name__)

    # -------------------------------------------------------- types
    def type(self, t: ast.TypeExpr | None) -> str:
        match t:
            case ast.NamedType():
                if not t.args:
                    return t.name.name
                return f"{t.name.name}<{', '.join(self.type_arg(a) for a in t.args)}>"
            case ast.ShapeType():
                return "[" + ", ".join("?" if d is None else self.expr(d, 0) for d in t.dims) + "]"
            case ast.RefType():
                return ("&mut " if t.mutable else "&") + self.type(t.inner)
            case ast.TupleType():
                if len(t.elems) == 1:
                    return f"({self.type(t.elems[0])},)"
                return "(" + ", ".join(self.type(e) for e in t.elems) + ")"
        raise AssertionError(type(t).__name__)

    def type_arg(self, a: ast.TypeArg) -> str:
        if isinstance(a, (ast.NamedType, ast.ShapeType, ast.RefType, ast.TupleType)):
            return self.type(a)
        if isinstance(a, (ast.IntLit, ast.FloatLit)):
            return self.expr(a, 0)
        if isinstance(a, ast.Unary) and isinstance(a.operand, (ast.IntLit, ast.FloatLit)):
            return "-" + self.expr(a.operand, 0)
        if isinstance(a, ast.Block):
            return self.block(a, 0)
        return "{ " + self.expr(a, 0) + " }"

    # -------------------------------------------------------- expressions
    def expr(self, e: ast.Expr, ind: int, stmt_start: bool = False) -> str:
        text = self._expr(e, ind)
        if stmt_start and not isinstance(e, (ast.Block, ast.If, ast.UnsafeBlock,
                                             ast.GraphBlock)) and _starts_block_like(e):
            return f"({text})"
        return text

    def _sub(self, e: ast.Expr, ind: int) -> str:
        """An operand: parenthesised unless it is atomic."""
        text = self._expr(e, ind)
        if isinstance(e, (ast.IntLit, ast.FloatLit, ast.BoolLit, ast.StrLit, ast.Name, ast.Path,
                          ast.Call, ast.MethodCall, ast.Field, ast.Index, ast.TupleExpr,
                          ast.ArrayExpr, ast.Block, ast.UnsafeBlock, ast.GraphBlock)):
            if isinstance(e, ast.IntLit | ast.FloatLit) and text.startswith("-"):
                return f"({text})"
            return text
        return f"({text})"

    def _recv(self, e: ast.Expr, ind: int) -> str:
        """A receiver before `.`: `(1).0`, since `1.0` would read as a float."""
        if isinstance(e, ast.IntLit):
            return f"({self._expr(e, ind)})"
        return self._sub(e, ind)

    def _args(self, args: tuple[ast.Arg, ...], ind: int) -> str:
        return ", ".join((f"{a.name.name} = " if a.name else "") + self._expr(a.value, ind)
                         for a in args)

    def _generics(self, gens: tuple[ast.TypeArg, ...]) -> str:
        return "::<" + ", ".join(self.type_arg(g) for g in gens) + ">" if gens else ""

    def _expr(self, e: ast.Expr, ind: int) -> str:
        match e:
            case ast.IntLit():
                return f"{e.value}{e.suffix or ''}"
            case ast.FloatLit():
                return e.text
            case ast.BoolLit():
                return "true" if e.value else "false"
            case ast.StrLit():
                return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"').replace(
                    "\n", "\\n").replace("\t", "\\t").replace("\r", "\\r").replace(
                    "\0", "\\0") + '"'
            case ast.Name():
                return e.ident.name
            case ast.Path():
                return "::".join(s.name for s in e.segments)
            case ast.Call():
                return f"{self._expr(e.callee, ind)}{self._generics(e.generics)}({self._args(e.args, ind)})"
            case ast.MethodCall():
                return (f"{self._recv(e.receiver, ind)}.{e.method.name}{self._generics(e.generics)}"
                        f"({self._args(e.args, ind)})")
            case ast.Field():
                return f"{self._recv(e.receiver, ind)}.{e.field.name}"
            case ast.Index():
                return f"{self._sub(e.receiver, ind)}[{self._expr(e.index, ind)}]"
            case ast.Unary():
                return f"{e.op}{self._sub(e.operand, ind)}"
            case ast.Binary():
                return f"{self._sub(e.lhs, ind)} {e.op} {self._sub(e.rhs, ind)}"
            case ast.Cast():
                return f"{self._sub(e.expr, ind)} as {self.type(e.ty)}"
            case ast.Ref():
                return ("&mut " if e.mutable else "&") + self._sub(e.expr, ind)
            case ast.TupleExpr():
                if len(e.elems) == 1:
                    return f"({self._expr(e.elems[0], ind)},)"
                return "(" + ", ".join(self._expr(x, ind) for x in e.elems) + ")"
            case ast.ArrayExpr():
                return "[" + ", ".join(self._expr(x, ind) for x in e.elems) + "]"
            case ast.RangeExpr():
                op = "..=" if e.inclusive else ".."
                return f"{self._sub(e.start, ind)}{op}{self._sub(e.end, ind)}"
            case ast.Block():
                return self.block(e, ind)
            case ast.If():
                text = f"if {self._expr(e.cond, ind)} {self.block(e.then, ind)}"
                if e.else_ is not None:
                    text += " else " + (self._expr(e.else_, ind) if isinstance(e.else_, ast.If)
                                        else self.block(e.else_, ind))
                return text
            case ast.UnsafeBlock():
                return "unsafe " + self.block(e.body, ind)
            case ast.GraphBlock():
                return "graph " + self.block(e.body, ind)
        raise AssertionError(type(e).__name__)


def _starts_block_like(e: ast.Expr) -> bool:
    """Whether the text of `e` would begin with a block-like expression."""
    while True:
        match e:
            case ast.Block() | ast.If() | ast.UnsafeBlock() | ast.GraphBlock():
                return True
            case ast.Binary():
                e = e.lhs
            case ast.Cast():
                e = e.expr
            case ast.RangeExpr():
                e = e.start
            case ast.MethodCall() | ast.Field() | ast.Index():
                e = e.receiver
            case _:
                return False
