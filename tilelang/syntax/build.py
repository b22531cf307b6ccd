"""Parse tree -> the frozen AST of `tilelang.syntax.ast`.

The tree is `lalr.Node`s and `lalr.Tok`s shaped as Lark's tree for
`grammar/tile.lark` (with `maybe_placeholders=True`, so optional parts are
`None` and children can be read by position). Spans come from the offsets
on tokens and nodes, which are already offsets into the whole file; `base`
only places a node that matched no text, when a chunk of a file was parsed
on its own.

The builder also reports the syntax errors that only show once a token is
known to be a name or a literal: a keyword used as a name (the contextual
lexer hands those over as NAME), a bad literal suffix, a bad escape, `_` as a
value. It never raises for user input; on a bad literal it emits a diagnostic
and builds the node anyway, so later stages still see a whole tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tilelang.diagnostics.codes import syntax as codes
from tilelang.diagnostics.model import Diagnostic, DiagnosticSink
from tilelang.limits import MAX_NESTING
from tilelang.source import Span
from tilelang.syntax import ast
from tilelang.syntax.lalr import Node, Tok

# A node of the parse tree (a `Node` or a `Tok`); its shape is the grammar's,
# which the type checker cannot see, so it is `Any` here.
PT = Any

KEYWORDS = frozenset({
    "as", "break", "const", "continue", "else", "false", "fn", "for", "graph", "if",
    "in", "kernel", "let", "mut", "return", "true", "unsafe", "use", "while",
})

INT_SUFFIXES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT_SUFFIXES = ("f16", "bf16", "f32", "f64")
# C's and CUDA's literal suffixes (`0.5f`, `1.0h`, `10u`, `3L`), with Tile's spelling
_C_SUFFIXES = {
    "f": "C's `f` suffix is Tile's `f32`: write `{0}f32` (or `{0}`: an untyped literal takes its type from context)",
    "F": "C's `F` suffix is Tile's `f32`: write `{0}f32` (or `{0}`: an untyped literal takes its type from context)",
    "h": "write `{0}f16` (or `{0}`: an untyped literal takes its type from context)",
    "d": "write `{0}f64`", "u": "write `{0}u32`", "U": "write `{0}u32`", "l": "write `{0}i64`", "L": "write `{0}i64`",
    "ll": "write `{0}i64`", "LL": "write `{0}i64`", "ul": "write `{0}u64`", "UL": "write `{0}u64`",
    "ull": "write `{0}u64`", "ULL": "write `{0}u64`",
}
# `1e` / `2.5E`: an exponent without its digits reads as a suffix
_EXPONENT_HELP = "an exponent needs its digits: `{0}{1}3` is {0} x 10^3, `{0}{1}-3` is {0} x 10^-3"

_NUMBER = re.compile(
    r"(?P<body>0[xX](?P<hex>[0-9A-Fa-f_]*)|0[oO](?P<oct>[0-7_]*)|0[bB](?P<bin>[01_]*)"
    r"|[0-9][0-9_]*(?P<frac>\.[0-9][0-9_]*)?(?P<exp>[eE][+-]?[0-9_]*[0-9][0-9_]*)?)"
    r"(?P<suffix>[A-Za-z_][A-Za-z0-9_]*)?$"
)
_UNICODE_ESCAPE = re.compile(r"u\{([0-9A-Fa-f]{1,6})\}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}

_MAX_INT = 2**64 - 1
# Digits of the largest 64-bit value in each base: more is too large at once.
_MAX_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}

# Binary operator precedence, Rust's: higher binds tighter. Comparisons (4)
# do not associate; every other level associates to the left.
_PREC = {"*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "&": 7, "^": 6, "|": 5,
         "==": 4, "!=": 4, "<": 4, ">": 4, "<=": 4, ">=": 4, "&&": 3, "||": 2}
_CMP = frozenset({"==", "!=", "<", ">", "<=", ">="})


class TooDeep(Exception):
    """The tree passed `MAX_NESTING` levels at `span`; caught per item.
    `chain`: (its operators, how many fit there) when a chain of binary
    operators is what passed it (most of the depth is the chain's own)."""

    def __init__(self, span: Span, chain: tuple[int, int] | None = None) -> None:
        super().__init__(span)
        self.span = span
        self.chain = chain


def too_deep(span: Span, chain: tuple[int, int] | None = None) -> Diagnostic:
    if chain is not None:
        ops, fit = chain
        return (Diagnostic.error(codes.NESTED_TOO_DEEPLY, f"a chain of {ops} operators is nested too deeply")
                .primary(span, f"operator {fit + 1} of the chain: past the limit of {MAX_NESTING} levels")
                .note("a chain `a + b + c` is a tree that leans left, one level per operator, and "
                      f"one item nests at most {MAX_NESTING} levels: here the chain can hold at most "
                      f"{fit} operators (of one precedence)")
                .with_help(f"split it into `let` bindings of at most {fit} operators each "
                           "(`let s1 = a + b + ..; let s2 = s1 + ..`), or sum a tensor of the terms"))
    return (Diagnostic.error(codes.NESTED_TOO_DEEPLY, "expression or block nested too deeply")
            .primary(span, f"this passes the limit of {MAX_NESTING} levels of nesting")
            .note("each block, statement, operator, call, cast, index, field, `if` and "
                  "`else if` is one level; a chain `a + b + c` is one level per operator")
            .with_help("split the expression with `let` bindings, or move the inner part "
                       "into a function"))


class Builder:
    """Builds AST nodes for one parsed piece of one file.

    It counts the depth of the tree it builds (`_depth`) and raises `TooDeep`
    past `MAX_NESTING`: `module` and the parser's entry points turn that into
    one E0023 per item, so no later stage sees a tree deeper than the limit.
    The parse tree is at most a few levels per AST level, so this recursion
    is bounded too.
    """

    def __init__(self, file_id: int, sink: DiagnosticSink, base: int = 0, text: str = "") -> None:
        self.file = file_id
        self.sink = sink
        self.base = base
        self.text = text  # the whole file, to quote operands in messages
        self._depth = 0
        # > 0 while building the arguments of `.partition(..)`: there `_` may
        # be a tile dimension the autotuner picks, which sema checks (E0229)
        self._tuner_dims = 0
        self._expr: dict[str, Callable[[PT], ast.Expr]] = {
            "number": self._number,
            "neg_number": self._neg_number,
            "string": self._string,
            "true": lambda t: ast.BoolLit(True, self.span(t)),
            "false": lambda t: ast.BoolLit(False, self.span(t)),
            "path_expr": self._path_expr,
            "call": self._call,
            "tuple": lambda t: ast.TupleExpr(self._exprs(t.children), self.span(t)),
            "array": lambda t: ast.ArrayExpr(self._exprs(t.children), self.span(t)),
            "binary_chain": self._binary_chain,
            "range": self._range,
            "cast": lambda t: ast.Cast(self.expr(t.children[0]), self.type(t.children[1]),
                                       self.span(t)),
            "neg": lambda t: ast.Unary("-", self.expr(t.children[0]), self.span(t)),
            "not_": lambda t: ast.Unary("!", self.expr(t.children[0]), self.span(t)),
            "ref": lambda t: ast.Ref(t.children[0] is not None, self.expr(t.children[1]),
                                     self.span(t)),
            "method_call": self._method_call,
            "field": self._field,
            "index": lambda t: ast.Index(self.expr(t.children[0]), self.expr(t.children[1]),
                                         self.span(t)),
            "block": self.block,
            "if_expr": self._if,
            "unsafe_block": lambda t: ast.UnsafeBlock(self.block(t.children[0]), self.span(t)),
            "graph_block": lambda t: ast.GraphBlock(self.block(t.children[0]), self.span(t)),
        }

    # ------------------------------------------------------------ spans, names
    def span(self, node: PT) -> Span:
        if node.start is None:  # a node that matched no text
            return Span(self.file, self.base, self.base)
        return Span(self.file, node.start, node.end)

    def ident(self, tok: PT) -> ast.Ident:
        span = self.span(tok)
        name = str(tok)
        if name in KEYWORDS:
            self.sink.emit(
                Diagnostic.error(codes.KEYWORD_AS_NAME, f"expected identifier, found keyword `{name}`")
                .primary(span, "expected identifier, found keyword")
                .with_help(f"`{name}` is a reserved word; choose another name, e.g. `{name}_`")
            )
        return ast.Ident(name, span)

    # ------------------------------------------------------------ module
    def _enter(self, node: PT) -> None:
        self._depth += 1
        if self._depth > MAX_NESTING:
            raise TooDeep(self.span(node))

    def module(self, tree: PT) -> ast.Module:
        """The items; one that nests too deeply is reported and left out."""
        items: list[ast.Item] = []
        for c in tree.children:
            self._depth = 0
            try:
                items.append(self.item(c))
            except TooDeep as e:
                self.sink.emit(too_deep(e.span, e.chain))
        return ast.Module(tuple(items), self.span(tree))

    def item(self, tree: PT) -> ast.Item:
        match tree.data:
            case "fn_decl":
                return self._fn(tree)
            case "const_decl":
                name, ty, value = tree.children
                return ast.ConstDecl(self.ident(name), self.opt_type(ty), self.expr(value),
                                     self.span(tree))
            case "use_decl":
                return self._use(tree)
            case "use_file":
                lit = self._string(tree.children[0])
                return ast.UseDecl((), None, False, lit, self.span(tree))
        raise AssertionError(f"unknown item {tree.data}")

    def _fn(self, tree: PT) -> ast.FnDecl:
        attrs, kernel, name, generics, params, ret, body = tree.children
        return ast.FnDecl(
            name=self.ident(name),
            is_kernel=kernel is not None,
            attrs=tuple(self._attribute(a) for a in attrs.children),
            generics=tuple(self._generic_param(g) for g in generics.children) if generics else (),
            params=tuple(self._param(p) for p in params.children if p is not None) if params else (),
            ret=self.type(ret.children[0]) if ret is not None else None,
            body=self.block(body),
            span=self.span(tree),
        )

    def _attribute(self, tree: PT) -> ast.Attribute:
        name, args = tree.children
        out: list[ast.AttrArg] = []
        if args is not None:
            for a in args.children:
                if a is None:
                    continue
                if a.data == "attr_kwarg":
                    out.append(ast.AttrArg(self.ident(a.children[0]), self.expr(a.children[1]),
                                           self.span(a)))
                else:
                    out.append(ast.AttrArg(None, self.expr(a.children[0]), self.span(a)))
        return ast.Attribute(self.ident(name), tuple(out), self.span(tree))

    def _generic_param(self, tree: PT) -> ast.GenericParam:
        if tree.data == "const_param":
            return ast.GenericParam(self.ident(tree.children[0]), True,
                                    self.type(tree.children[1]), self.span(tree))
        return ast.GenericParam(self.ident(tree.children[0]), False, None, self.span(tree))

    def _param(self, tree: PT) -> ast.Param:
        mut, name, ty = tree.children
        return ast.Param(self.ident(name), self.type(ty), mut is not None, self.span(tree))

    def _use(self, tree: PT) -> ast.UseDecl:
        path_tree = tree.children[0]
        segs_tree, group = path_tree.children
        segments = tuple(self.ident(t) for t in _flatten_left(segs_tree, "use_segments"))
        names: tuple[ast.Ident, ...] | None = None
        glob = False
        if group is not None:
            if group.data == "use_glob":
                glob = True
            else:
                names = tuple(self.ident(t) for t in group.children if t is not None)
        return ast.UseDecl(segments, names, glob, None, self.span(tree))

    # ------------------------------------------------------------ statements
    def block(self, tree: PT) -> ast.Block:
        *stmt_trees, tail_tree = tree.children
        self._enter(tree)
        try:
            return self.block_from_parts(stmt_trees, tail_tree, self.span(tree))
        finally:
            self._depth -= 1

    def block_from_parts(self, stmt_trees: list[PT], tail_tree: PT | None,
                         span: Span) -> ast.Block:
        stmts: list[ast.Stmt] = []
        for st in stmt_trees:
            if st.data == "empty_stmt":
                # `if c { } ;`: the `;` belongs to the block-like statement before it.
                if stmts and isinstance(stmts[-1], ast.ExprStmt) and not stmts[-1].semi:
                    prev = stmts[-1]
                    stmts[-1] = ast.ExprStmt(prev.expr, True, prev.span.to(self.span(st)))
                continue
            stmts.append(self.stmt(st))
        tail: ast.Expr | None = None
        if tail_tree is not None:
            if tail_tree.data == "tail":
                tail = self.expr(tail_tree.children[0])
            else:
                stmts.append(self._tail_stmt(tail_tree))
        elif stmts and isinstance(last := stmts[-1], ast.ExprStmt) and not last.semi:
            # Rust: a block-like expression ending a block is its value.
            stmts.pop()
            tail = last.expr
        return ast.Block(tuple(stmts), tail, span)

    def _tail_stmt(self, tree: PT) -> ast.Stmt:
        self._enter(tree)
        try:
            return self._tail_stmt_inner(tree)
        finally:
            self._depth -= 1

    def _tail_stmt_inner(self, tree: PT) -> ast.Stmt:
        match tree.data:
            case "return_tail":
                value = tree.children[0]
                return ast.Return(self.expr(value) if value is not None else None, self.span(tree))
            case "assign_tail":
                target, op, value = tree.children
                op_tok = op.children[0]
                return self._assign(self.expr(target), str(op_tok), self.expr(value),
                                    self.span(op_tok), self.span(tree))
            case "break_tail":
                return ast.Break(self.span(tree))
            case "continue_tail":
                return ast.Continue(self.span(tree))
        raise AssertionError(tree.data)

    def _assign(self, target: ast.Expr, op: str, value: ast.Expr, op_span: Span, span: Span) -> ast.Stmt:
        """`target op value;`. A destructuring assignment `(a, b) = value;`
        (Rust's, e.g. `(m, l) = step(m, l);`) becomes the block
        `{ let (t0, t1) = value; a = t0; b = t1; }`: the value is evaluated
        once and whole before any variable changes, so `(a, b) = (b, a)`
        swaps. The temporaries' names cannot be written in a program."""
        if op != "=" or not _destructurable(target):
            return ast.Assign(target, op, value, op_span, span)
        assigns: list[ast.Stmt] = []

        def pat(t: ast.Expr, v: ast.Expr) -> ast.Pattern:
            # `v`: the part of the value this target takes, where the value is written as a
            # tuple of the same shape (`(a, b) = (x, y)`), so an error names the element `y`
            if isinstance(t, ast.TupleExpr):
                vs = v.elems if isinstance(v, ast.TupleExpr) and len(v.elems) == len(t.elems) else (v,) * len(t.elems)
                return ast.TuplePat(tuple(pat(x, w) for x, w in zip(t.elems, vs, strict=True)), t.span)
            assert isinstance(t, ast.Name)
            tmp = ast.Ident(f"({t.ident.name})={len(assigns)}", t.span)  # see destructuring()
            assigns.append(ast.Assign(t, "=", ast.Name(tmp, v.span), op_span, t.span))
            return ast.NamePat(tmp, False, t.span)

        let = ast.Let(pat(target, value), None, value, span)
        return ast.ExprStmt(ast.Block((let, *assigns), None, span), False, span)

    def stmt(self, tree: PT) -> ast.Stmt:
        self._enter(tree)
        try:
            return self._stmt(tree)
        finally:
            self._depth -= 1

    def _stmt(self, tree: PT) -> ast.Stmt:
        span = self.span(tree)
        c = tree.children
        match tree.data:
            case "let_stmt":
                return ast.Let(self.pattern(c[0]), self.opt_type(c[1]),
                               self.expr(c[2]) if c[2] is not None else None, span)
            case "expr_stmt":
                return ast.ExprStmt(self.expr(c[0]), True, span)
            case "assign_stmt":
                op_tok = c[1].children[0]
                return self._assign(self.expr(c[0]), str(op_tok), self.expr(c[2]),
                                    self.span(op_tok), span)
            case "block_stmt":
                return ast.ExprStmt(self.expr(c[0]), False, span)
            case "for_stmt":
                return ast.For(self.pattern(c[0]), self.expr(c[1]), self.block(c[2]), span)
            case "while_stmt":
                return ast.While(self.expr(c[0]), self.block(c[1]), span)
            case "return_stmt":
                return ast.Return(self.expr(c[0]) if c[0] is not None else None, span)
            case "break_stmt":
                return ast.Break(span)
            case "continue_stmt":
                return ast.Continue(span)
        raise AssertionError(f"unknown statement {tree.data}")

    # ------------------------------------------------------------ patterns
    def pattern(self, node: PT) -> ast.Pattern:
        self._enter(node)
        try:
            return self._pattern(node)
        finally:
            self._depth -= 1

    def _pattern(self, node: PT) -> ast.Pattern:
        span = self.span(node)
        match node.data:
            case "name_pat":
                mut, name = node.children
                return ast.NamePat(self.ident(name), mut is not None, span)
            case "wild_pat":
                return ast.WildcardPat(span)
            case "tuple_pat":
                return ast.TuplePat(tuple(self.pattern(p) for p in node.children if p is not None),
                                    span)
        raise AssertionError(f"unknown pattern {node.data}")

    # ------------------------------------------------------------ types
    def opt_type(self, node: PT | None) -> ast.TypeExpr | None:
        return None if node is None else self.type(node)

    def type(self, node: PT) -> ast.TypeExpr:
        self._enter(node)
        try:
            return self._type(node)
        finally:
            self._depth -= 1

    def _type(self, node: PT) -> ast.TypeExpr:
        span = self.span(node)
        match node.data:
            case "named_type":
                name = node.children[0]
                args = node.children[1] if len(node.children) > 1 else None
                generic = self.generic_args(args.children[0]) if args is not None else ()
                return ast.NamedType(self.ident(name), generic, span)
            case "ref_type":
                mut, inner = node.children
                return ast.RefType(mut is not None, self.type(inner), span)
            case "tuple_type":
                return ast.TupleType(tuple(self.type(t) for t in node.children if t is not None),
                                     span)
            case "shape_type":
                return self._shape(node)
        raise AssertionError(f"unknown type {node.data}")

    def _shape(self, node: PT) -> ast.ShapeType:
        dims: list[ast.Expr | None] = []
        for d in node.children:
            if d is None:
                continue
            dims.append(None if isinstance(d, Node) and d.data == "unknown_dim" else self.expr(d))
        return ast.ShapeType(tuple(dims), self.span(node))

    def generic_args(self, node: PT) -> tuple[ast.TypeArg, ...]:
        out: list[ast.TypeArg] = []
        for a in node.children:
            if a is None:
                continue
            if a.data in ("named_type", "ref_type", "tuple_type", "shape_type"):
                out.append(self.type(a))
            else:
                out.append(self.expr(a))
        return tuple(out)

    # ------------------------------------------------------------ expressions
    def expr(self, node: PT) -> ast.Expr:
        try:
            build = self._expr[node.data]
        except KeyError:
            raise AssertionError(f"unknown expression {node.data}") from None
        self._enter(node)
        try:
            return build(node)
        finally:
            self._depth -= 1

    def _exprs(self, children: list[Any]) -> tuple[ast.Expr, ...]:
        # a list first: `tuple(<generator>)` recursed through C, which Python 3.12+ counts against a
        # fixed C recursion limit (nested tuples at MAX_NESTING were a RecursionError ICE there)
        return tuple([self.expr(c) for c in children if c is not None])

    def _binary_chain(self, node: PT) -> ast.Expr:
        """Precedence climbing over the flat chain `a op b op c ...` (Rust's table).

        Comparisons do not associate: `a < b < c` is reported here (E0011) and
        then built left-associated so the tree stays whole. The chain is one
        node of the parse tree but a tree of `Binary`s in the AST: its shape
        is worked out first, so each operand is built at its real depth.
        """
        children = node.children
        toks: list[PT] = [children[i].children[0] for i in range(1, len(children), 2)]
        # The shape: each operand's and each operator's depth below the chain's root.
        leaf_depth, op_depth = _chain_depths([_PREC[str(t)] for t in toks])
        deepest = max(op_depth, default=-1)
        fit = MAX_NESTING - self._depth  # operators of one precedence that fit here
        if self._depth + max(leaf_depth) > MAX_NESTING and max(leaf_depth) >= MAX_NESTING // 2:
            # the chain's own depth passes the limit (its operands are one
            # level below its deepest operator): say so in its terms
            raise TooDeep(self.span(toks[min(fit, len(toks) - 1)]), (len(toks), fit))
        if self._depth + deepest > MAX_NESTING:
            passes = MAX_NESTING - self._depth + 1  # the first depth past the limit
            raise TooDeep(self.span(toks[op_depth.index(passes)]))
        depth = self._depth
        leaves: list[ast.Expr] = []
        for k in range(len(toks) + 1):
            # `expr` counts one level; the operand is that much below its parent.
            self._depth = depth + leaf_depth[k] - 1
            try:
                leaves.append(self.expr(children[2 * k]))
            finally:
                self._depth = depth
        operands: list[ast.Expr] = [leaves[0]]
        ops: list[PT] = []
        chained: set[int] = set()  # ids of comparisons built from this chain
        reported = False

        def reduce() -> None:
            nonlocal reported
            op = ops.pop()
            rhs = operands.pop()
            lhs = operands.pop()
            if str(op) in _CMP and id(lhs) in chained and not reported:
                reported = True
                self._chained_comparison(lhs, op, rhs)
            b = ast.Binary(str(op), lhs, rhs, self.span(op),
                           self._with_parens(lhs.span).to(self._with_parens(rhs.span)))
            if str(op) in _CMP:
                chained.add(id(b))
            operands.append(b)

        for k, tok in enumerate(toks):
            prec = _PREC[str(tok)]
            while ops and _PREC[str(ops[-1])] >= prec:
                reduce()
            ops.append(tok)
            operands.append(leaves[k + 1])
        while ops:
            reduce()
        return operands[0]

    def _with_parens(self, span: Span) -> Span:
        """An operand's span widened over the parentheses around it: the tree
        drops them, and `(a + b) * c` must not start at `a`. A chain operand
        with `(` right before and `)` right after can only be parenthesised."""
        text, start, end = self.text, span.start, span.end
        while True:
            i, j = start - 1, end
            while i >= 0 and text[i] in " \t\r\n":
                i -= 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if i < 0 or j >= len(text) or text[i] != "(" or text[j] != ")":
                return Span(span.file, start, end)
            start, end = i, j + 1

    def _chained_comparison(self, first: ast.Expr, second: PT, third: ast.Expr) -> None:
        assert isinstance(first, ast.Binary)
        d = (Diagnostic.error(codes.CHAINED_COMPARISON, "comparison operators cannot be chained")
             .primary(self.span(second), "second comparison")
             .secondary(first.op_span, "first comparison"))
        lhs, mid = self._text(self._with_parens(first.lhs.span)), self._text(self._with_parens(first.rhs.span))
        if (first.op == "<" and str(second) == ">" and lhs and mid
                and isinstance(first.lhs, (ast.Name, ast.Path))):
            # `zeros<f32>([4])`: generic arguments written without the turbofish.
            d = d.with_help(f"use `::<...>` instead of `<...>` to give generic arguments: "
                            f"`{lhs}::<{mid}>`")
        elif isinstance(first.rhs, ast.Binary) and first.rhs.op in ("&", "|", "^") \
                and first.span.end == first.rhs.span.end and lhs and self._text(third.span):
            # `d >= 0 & d <= 9` (NumPy's and C's habit): `&` binds tighter than a comparison, as in Rust and
            # Python, so this is `d >= (0 & d) <= 9`; the help had split it at `0 & d` (round 23)
            mask = first.rhs
            a, b = self._text(self._with_parens(mask.lhs.span)), self._text(self._with_parens(mask.rhs.span))
            whole = f"({lhs} {first.op} {a}) {mask.op} ({b} {second} {self._text(third.span)})"
            d = d.with_help(f"`{mask.op}` binds tighter than `{first.op}` and `{second}`: put each comparison in "
                            f"parentheses: `{whole}`" if a and b else
                            f"`{mask.op}` binds tighter than a comparison: put each comparison in parentheses")
        elif lhs and mid:
            last = self._text(third.span) or "..."
            d = d.with_help(f"split the comparison into two: "
                            f"`{lhs} {first.op} {mid} && {mid} {second} {last}` (of host tensors, "
                            f"element-wise: `({lhs} {first.op} {mid}) & ({mid} {second} {last})`)")
        else:
            d = d.with_help("split the comparison into two joined by `&&`")
        self.sink.emit(d)

    def _text(self, span: Span) -> str:
        text = self.text[span.start:span.end]
        return text if len(text) <= 40 and "\n" not in text else ""

    def _range(self, node: PT) -> ast.RangeExpr:
        lhs, op, rhs = node.children
        return ast.RangeExpr(self.expr(lhs), self.expr(rhs), str(op.children[0]) == "..=",
                             self.span(node))

    def _path_expr(self, node: PT) -> ast.Name | ast.Path:
        toks = _flatten_left(node, "path_expr")
        if len(toks) == 1:
            ident = self.ident(toks[0])
            if ident.name == "_" and not self._tuner_dims:
                self.sink.emit(
                    Diagnostic.error(codes.UNDERSCORE_EXPR, "`_` can only be used in a pattern")
                    .primary(ident.span, "`_` is not a value")
                    .with_help("give the value a name with `let`, or write the value itself")
                )
            return ast.Name(ident, ident.span)
        return ast.Path(tuple(self.ident(t) for t in toks), self.span(node))

    def _args(self, node: PT | None) -> tuple[ast.Arg, ...]:
        if node is None:
            return ()
        out: list[ast.Arg] = []
        for a in node.children:
            if a is None:
                continue
            if isinstance(a, Node) and a.data == "kwarg":
                out.append(ast.Arg(self.ident(a.children[0]), self.expr(a.children[1]), self.span(a)))
            else:
                value = self.expr(a)
                out.append(ast.Arg(None, value, value.span))
        return tuple(out)

    def _call(self, node: PT) -> ast.Call:
        path, turbofish, args = node.children
        callee = self._path_expr(path)
        generics = self.generic_args(turbofish.children[0]) if turbofish is not None else ()
        return ast.Call(callee, generics, self._args(args), self.span(node))

    def _method_call(self, node: PT) -> ast.MethodCall:
        recv, name, turbofish, args = node.children
        generics = self.generic_args(turbofish.children[0]) if turbofish is not None else ()
        receiver = self.expr(recv)
        method = self.ident(name)
        tuner = method.name == "partition"  # `z.partition([_, 64])`: the tuner picks `_`
        self._tuner_dims += tuner
        try:
            built = self._args(args)
        finally:
            self._tuner_dims -= tuner
        return ast.MethodCall(receiver, method, generics, built, self.span(node))

    def _field(self, node: PT) -> ast.Field:
        recv, name = node.children
        if name.type == "TUPLE_INDEX":
            field = ast.Ident(str(self._int(name.value, 10, None, self.span(name)).value),
                              self.span(name))  # `t.01` is `t.1`; a huge index is E0019
        else:
            field = self.ident(name)
        return ast.Field(self.expr(recv), field, self.span(node))

    def _if(self, node: PT) -> ast.If:
        cond, then, else_ = node.children
        else_node: ast.Block | ast.If | None = None
        if else_ is not None:
            # `else if` nests one level (through `expr`, which counts it).
            else_node = self._else_if(else_) if else_.data == "if_expr" else self.block(else_)
        return ast.If(self.expr(cond), self.block(then), else_node, self.span(node))

    def _else_if(self, node: PT) -> ast.If:
        e = self.expr(node)
        assert isinstance(e, ast.If)
        return e

    # ------------------------------------------------------------ literals
    def _neg_number(self, node: PT) -> ast.Expr:
        inner = self._number_token(node.children[0])
        return ast.Unary("-", inner, self.span(node))

    def _number(self, node: PT) -> ast.Expr:
        return self._number_token(node.children[0])

    def _number_token(self, tok: PT) -> ast.IntLit | ast.FloatLit:
        text = str(tok)
        span = self.span(tok)
        m = _NUMBER.match(text)
        assert m is not None, text  # the grammar's NUMBER is this same pattern
        body, suffix = m.group("body"), m.group("suffix")
        is_float = bool(m.group("frac") or m.group("exp"))
        radix_digits = m.group("hex") if m.group("hex") is not None else (
            m.group("oct") if m.group("oct") is not None else m.group("bin"))
        if suffix is not None:
            allowed: tuple[str, ...] = (FLOAT_SUFFIXES if is_float
                                        else INT_SUFFIXES + FLOAT_SUFFIXES)
            if radix_digits is not None:
                allowed = INT_SUFFIXES
            if suffix not in allowed:
                kind = "float" if is_float else "number"
                suffix_span = Span(span.file, span.end - len(suffix), span.end)
                self.sink.emit(
                    Diagnostic.error(codes.INVALID_SUFFIX,
                                     f"invalid suffix `{suffix}` for {kind} literal")
                    .primary(suffix_span, "invalid suffix")
                    .with_help(_C_SUFFIXES[suffix].format(body) if suffix in _C_SUFFIXES and radix_digits is None
                               else _EXPONENT_HELP.format(body, suffix) if suffix in ("e", "E") and radix_digits is None
                               else "the suffix must be one of " + ", ".join(f"`{s}`" for s in allowed))
                )
                suffix = None
        if radix_digits is not None:
            digits = radix_digits.replace("_", "")
            radix = {"x": 16, "o": 8, "b": 2}[body[1].lower()]
            if not digits:
                self.sink.emit(
                    Diagnostic.error(codes.INVALID_NUMBER, "number literal has no digits")
                    .primary(span, "no digits after the base prefix")
                    .with_help("write digits after the prefix, e.g. `0x1F`, `0b101`, `0o17`")
                )
                return ast.IntLit(0, suffix, span)
            return self._int(digits, radix, suffix, span)
        if is_float or (suffix in FLOAT_SUFFIXES):
            return ast.FloatLit(float(body.replace("_", "")), suffix, text, span)
        return self._int(body.replace("_", ""), 10, suffix, span)

    def _int(self, digits: str, radix: int, suffix: str | None, span: Span) -> ast.IntLit:
        """The literal's value; one with more digits than any 64-bit value has
        is reported without converting it (Python's `int()` refuses strings
        of over 4,300 decimal digits, and the work would grow with them)."""
        significant = digits.lstrip("0") or "0"
        value = int(significant, radix) if len(significant) <= _MAX_DIGITS[radix] else _MAX_INT + 1
        if value > _MAX_INT:
            self.sink.emit(
                Diagnostic.error(codes.INVALID_NUMBER, "integer literal is too large")
                .primary(span, "does not fit in 64 bits")
                .with_help(f"the largest integer literal is {_MAX_INT} (`u64::MAX`); "
                           "write a float literal such as `1e30` for a larger number")
            )
            value = _MAX_INT  # a placeholder: the item does not check anyway
        return ast.IntLit(value, suffix, span)

    def _string(self, node: PT) -> ast.StrLit:
        tok = node if isinstance(node, Tok) else node.children[0]
        raw = str(tok)[1:-1]
        span = self.span(tok)
        out: list[str] = []
        i = 0
        while i < len(raw):
            ch = raw[i]
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            nxt = raw[i + 1] if i + 1 < len(raw) else ""
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt == "u":
                m = _UNICODE_ESCAPE.match(raw, i + 1)
                if m and int(m.group(1), 16) <= 0x10FFFF and not 0xD800 <= int(m.group(1), 16) <= 0xDFFF:
                    out.append(chr(int(m.group(1), 16)))
                    i = m.end()
                    continue
                if m:  # Rust's rule: a Unicode scalar value, no surrogate (it cannot be written as UTF-8)
                    at = span.start + 1 + i
                    v = int(m.group(1), 16)
                    self.sink.emit(
                        Diagnostic.error(codes.INVALID_ESCAPE, f"invalid unicode character escape `\\u{{{m.group(1)}}}`")
                        .primary(Span(span.file, at, span.start + 1 + m.end()),
                                 "a surrogate is not a character" if v <= 0x10FFFF else "past the last character, "
                                 "U+10FFFF")
                        .with_help("write a Unicode character: a value up to `10FFFF`, outside `D800`..`DFFF`")
                    )
                    out.append("\ufffd")
                    i = m.end()
                    continue
            at = span.start + 1 + i
            self.sink.emit(
                Diagnostic.error(codes.INVALID_ESCAPE, f"unknown character escape `\\{nxt}`")
                .primary(Span(span.file, at, at + 1 + len(nxt)), "unknown escape")
                .with_help("the escapes are `\\n`, `\\t`, `\\r`, `\\0`, `\\\\`, `\\\"`, "
                           "`\\'` and `\\u{...}`; a backslash itself is `\\\\` "
                           f"(`\\\\{nxt}`), and a path may use `/` instead")
            )
            out.append(nxt)
            i += 2
        return ast.StrLit("".join(out), span)


def _chain_depths(precs: list[int]) -> tuple[list[int], list[int]]:
    """Depths below the root (the root is 0) of the operands and operators of a
    chain with these operator precedences, as `Builder._binary_chain` builds
    it (left-associative precedence climbing); without recursion."""
    n = len(precs)
    # Build the tree over indices: a leaf is ("l", k), an operator ("o", k, lhs, rhs).
    operands: list[Any] = [("l", 0)]
    ops: list[int] = []

    def reduce() -> None:
        k = ops.pop()
        rhs = operands.pop()
        lhs = operands.pop()
        operands.append(("o", k, lhs, rhs))

    for k, prec in enumerate(precs):
        while ops and precs[ops[-1]] >= prec:
            reduce()
        ops.append(k)
        operands.append(("l", k + 1))
    while ops:
        reduce()
    leaf_depth = [0] * (n + 1)
    op_depth = [0] * n
    stack: list[tuple[Any, int]] = [(operands[0], 0)]
    while stack:
        t, d = stack.pop()
        if t[0] == "l":
            leaf_depth[t[1]] = d
        else:
            op_depth[t[1]] = d
            stack.append((t[2], d + 1))
            stack.append((t[3], d + 1))
    return leaf_depth, op_depth


def _flatten_left(node: PT, data: str) -> list[PT]:
    """Tokens of a left-recursive list rule `r: NAME | r "::" NAME`."""
    out: list[PT] = []
    while True:
        if len(node.children) == 1:
            out.append(node.children[0])
            break
        head, last = node.children
        out.append(last)
        if isinstance(head, Node) and head.data == data:
            node = head
        else:
            out.append(head)
            break
    out.reverse()
    return out


def _destructurable(t: ast.Expr) -> bool:
    """A tuple of variables (nested tuples allowed): `(a, (b, c))`."""
    return isinstance(t, ast.TupleExpr) and len(t.elems) > 0 and all(
        isinstance(x, ast.Name) or _destructurable(x) for x in t.elems)


def destructuring(s: ast.Stmt) -> tuple[ast.Expr, ast.Expr] | None:
    """The `(target, value)` of a destructuring assignment that
    `Builder._assign` desugared into `{ let (t0, ..) = value; a = t0; .. }`,
    or None when `s` is not one (the printer writes it back as written)."""
    if not (isinstance(s, ast.ExprStmt) and isinstance(s.expr, ast.Block)
            and s.expr.tail is None and s.expr.stmts):
        return None
    let = s.expr.stmts[0]
    if not isinstance(let, ast.Let) or let.value is None or let.ty is not None:
        return None
    targets: dict[str, ast.Expr] = {}
    for a in s.expr.stmts[1:]:
        if not (isinstance(a, ast.Assign) and isinstance(a.value, ast.Name)):
            return None
        targets[a.value.ident.name] = a.target

    def target(p: ast.Pattern) -> ast.Expr | None:
        if isinstance(p, ast.TuplePat):
            elems = [target(e) for e in p.elems]
            if any(e is None for e in elems):
                return None
            return ast.TupleExpr(tuple(e for e in elems if e is not None), p.span)
        if isinstance(p, ast.NamePat) and p.name.name.startswith("("):
            return targets.get(p.name.name)
        return None

    t = target(let.pattern)
    if t is None or len(targets) != len(s.expr.stmts) - 1:
        return None
    return t, let.value
