"""The surface AST of Tile: close to the text, every node with a `Span`.

Nodes are frozen, slotted dataclasses; children are tuples. Semantic facts
(types, symbols, borrows) live in side tables keyed by node identity
(`id(node)` or the node itself: nodes hash by identity, `eq=False`), never in
the nodes. Passes `match` on the closed unions `Item`, `Stmt`, `Expr`,
`TypeExpr`, `Pattern` and end with `assert_never`.

Conventions:
- `span` covers the whole construct; `name_span` (where present) covers just
  the identifier, which is where "undefined name"-style labels point.
- Operators are plain strings (`"+"`, `"&&"`, `"<<="` ...), listed in
  `BINARY_OPS`, `UNARY_OPS`, `ASSIGN_OPS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar, Union, dataclass_transform

from tilelang.frozen import frozen
from tilelang.source import Span

_T = TypeVar("_T")
_NODE_TYPES: set[type] = set()  # every node class (immutable all the way down: `walk` keeps their walks)


@dataclass_transform(frozen_default=True, eq_default=False)
def _node(cls: type[_T]) -> type[_T]:
    """`@dataclass(frozen=True, slots=True, eq=False)`, spelt so type checkers
    see it, and made by `tilelang.frozen` (much cheaper to define: start-up)."""
    made = frozen(cls)
    _NODE_TYPES.add(made)
    return made

BINARY_OPS = ("||", "&&", "==", "!=", "<", ">", "<=", ">=", "|", "^", "&", "<<", ">>",
              "+", "-", "*", "/", "%")
UNARY_OPS = ("-", "!")
ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=")


# ---------------------------------------------------------------- identifiers
@_node
class Ident:
    name: str
    span: Span


# ---------------------------------------------------------------- types
@_node
class NamedType:
    """`f32`, `i32`, `Tensor<f32, [B, ?]>`, `Tile<T, [N]>`, a generic type param `T`."""
    name: Ident
    args: tuple[TypeArg, ...]
    span: Span


@_node
class ShapeType:
    """`[B, ?, 64]` in type-argument position. A `None` dim is `?`."""
    dims: tuple[Expr | None, ...]
    span: Span


@_node
class RefType:
    """`&T` or `&mut T`."""
    mutable: bool
    inner: TypeExpr
    span: Span


@_node
class TupleType:
    """`(A, B)`; `()` is the unit type."""
    elems: tuple[TypeExpr, ...]
    span: Span


TypeExpr = Union[NamedType, ShapeType, RefType, TupleType]
# A generic argument: a type, a shape, or a constant expression (`gemm::<128, 64>`).
TypeArg = Union[NamedType, ShapeType, RefType, TupleType, "Expr"]


# ---------------------------------------------------------------- patterns
@_node
class NamePat:
    name: Ident
    mutable: bool
    span: Span


@_node
class TuplePat:
    elems: tuple[Pattern, ...]
    span: Span


@_node
class WildcardPat:
    span: Span


Pattern = Union[NamePat, TuplePat, WildcardPat]


# ---------------------------------------------------------------- expressions
@_node
class IntLit:
    value: int
    suffix: str | None  # "i32", "u8", ... or None for an untyped literal
    span: Span


@_node
class FloatLit:
    value: float
    suffix: str | None  # "f16", "f32", "bf16", "f64" or None
    text: str  # as written, for exact printing
    span: Span


@_node
class BoolLit:
    value: bool
    span: Span


@_node
class StrLit:
    value: str  # escapes already processed
    span: Span


@_node
class Name:
    """A plain identifier in expression position."""
    ident: Ident
    span: Span


@_node
class Path:
    """A qualified name `std::nn::softmax` in expression position (2+ segments)."""
    segments: tuple[Ident, ...]
    span: Span


@_node
class Arg:
    """A call argument; `name` is set for keyword arguments (`rtol = 1e-4`)."""
    name: Ident | None
    value: Expr
    span: Span


@_node
class Call:
    """`f(args)`, `f::<T, 4>(args)`, `std::nn::softmax(x)`.

    `callee` is a `Name` or `Path`; `generics` holds the turbofish arguments.
    """
    callee: Name | Path
    generics: tuple[TypeArg, ...]
    args: tuple[Arg, ...]
    span: Span


@_node
class MethodCall:
    """`recv.method::<T>(args)`."""
    receiver: Expr
    method: Ident
    generics: tuple[TypeArg, ...]
    args: tuple[Arg, ...]
    span: Span


@_node
class Field:
    """`t.0` (tuple field) or `x.name` (reserved; no structs yet)."""
    receiver: Expr
    field: Ident  # for `t.0` the name is "0"
    span: Span


@_node
class Index:
    """`a[i]` (reserved for tuples of shapes / future use)."""
    receiver: Expr
    index: Expr
    span: Span


@_node
class Unary:
    op: str  # one of UNARY_OPS
    operand: Expr
    span: Span


@_node
class Binary:
    op: str  # one of BINARY_OPS
    lhs: Expr
    rhs: Expr
    op_span: Span
    span: Span


@_node
class Cast:
    expr: Expr
    ty: TypeExpr
    span: Span


@_node
class Ref:
    """`&x` or `&mut x`."""
    mutable: bool
    expr: Expr
    span: Span


@_node
class TupleExpr:
    """`(a, b)`; `()` is the unit value."""
    elems: tuple[Expr, ...]
    span: Span


@_node
class ArrayExpr:
    """`[a, b, c]`: shapes and tile indices."""
    elems: tuple[Expr, ...]
    span: Span


@_node
class RangeExpr:
    """`a..b` or `a..=b` (only in `for` headers)."""
    start: Expr
    end: Expr
    inclusive: bool
    span: Span


@_node
class Block:
    """`{ stmts; tail }`: `tail` is the final expression without `;`, or None."""
    stmts: tuple[Stmt, ...]
    tail: Expr | None
    span: Span


@_node
class If:
    cond: Expr
    then: Block
    else_: Block | If | None
    span: Span


@_node
class UnsafeBlock:
    body: Block
    span: Span


@_node
class GraphBlock:
    """`graph { op1; op2; }`: records operations; evaluates to a graph."""
    body: Block
    span: Span


Expr = Union[
    IntLit, FloatLit, BoolLit, StrLit, Name, Path, Call, MethodCall, Field, Index,
    Unary, Binary, Cast, Ref, TupleExpr, ArrayExpr, RangeExpr, Block, If,
    UnsafeBlock, GraphBlock,
]


# ---------------------------------------------------------------- statements
@_node
class Let:
    pattern: Pattern
    ty: TypeExpr | None
    value: Expr | None
    span: Span


@_node
class Assign:
    """`target op value;` where op is one of ASSIGN_OPS."""
    target: Expr
    op: str
    value: Expr
    op_span: Span
    span: Span


@_node
class ExprStmt:
    """An expression used as a statement. `semi` says whether `;` followed."""
    expr: Expr
    semi: bool
    span: Span


@_node
class For:
    """`for i in a..b { }`."""
    pattern: Pattern
    iter: Expr
    body: Block
    span: Span


@_node
class While:
    cond: Expr
    body: Block
    span: Span


@_node
class Return:
    value: Expr | None
    span: Span


@_node
class Break:
    span: Span


@_node
class Continue:
    span: Span


Stmt = Union[Let, Assign, ExprStmt, For, While, Return, Break, Continue]


# ---------------------------------------------------------------- items
@_node
class AttrArg:
    """`num_warps = 8` or a bare value inside `#[name(...)]`."""
    name: Ident | None
    value: Expr
    span: Span


@_node
class Attribute:
    """`#[hints(num_warps = 8, stages = 3)]`."""
    name: Ident
    args: tuple[AttrArg, ...]
    span: Span


@_node
class GenericParam:
    """`const B: i32` (is_const, ty set) or a type parameter `T` (ty None)."""
    name: Ident
    is_const: bool
    ty: TypeExpr | None
    span: Span


@_node
class Param:
    name: Ident
    ty: TypeExpr
    mutable: bool  # `mut x: T` (a mutable local binding of the parameter)
    span: Span


@_node
class FnDecl:
    """`kernel fn` (is_kernel) or `fn`."""
    name: Ident
    is_kernel: bool
    attrs: tuple[Attribute, ...]
    generics: tuple[GenericParam, ...]
    params: tuple[Param, ...]
    ret: TypeExpr | None
    body: Block
    span: Span


@_node
class ConstDecl:
    name: Ident
    ty: TypeExpr | None
    value: Expr
    span: Span


@_node
class UseDecl:
    """`use std::nn::softmax;`, `use std::nn::{softmax, gelu};`, `use std::nn::*;`,
    `use "other.tile";`.

    Exactly one of `path` (module path segments) or `file` (a string) is set.
    For a path, `names` is the `{a, b}` group (None when the last segment is
    the imported item) and `glob` is set for `::*`.
    """
    path: tuple[Ident, ...]
    names: tuple[Ident, ...] | None
    glob: bool
    file: StrLit | None
    span: Span


Item = Union[FnDecl, ConstDecl, UseDecl]


@_node
class Module:
    items: tuple[Item, ...]
    span: Span


# ---------------------------------------------------------------- traversal
def walk(node: Any, stop: type | tuple[type, ...] | None = None) -> Iterator[Any]:
    """`node` and every AST node below it, pre-order, children in field order
    (which is source order). `node` may also be a tuple of nodes. Below a node
    of type `stop` (other than `node` itself), nothing.

    Nodes are found through the slots of the frozen dataclasses (faster than
    `dataclasses.fields`, and this runs over whole programs in `tilec check`);
    spans, strings and numbers are not nodes.

    A walk from an AST node is computed once (`preorder`) and kept: the nodes
    are immutable, and a compile's passes walk the same function bodies some
    twenty times. A walk from anything else (a tuple, another slotted value) is
    made from its parts' walks, or walked afresh."""
    if type(node) in _NODE_TYPES:
        return iter(preorder(node, stop))
    return _walk_other(node, stop)


def _walk_other(node: Any, stop: Any) -> Iterator[Any]:
    out: list[Any] = []
    if isinstance(node, tuple):  # the elements' own walks, in order (a `stop` element: itself alone)
        for n in node:
            if type(n) in _NODE_TYPES:
                yield from ((n,) if stop is not None and isinstance(n, stop) else preorder(n, stop))
            else:
                _collect(n, stop, node, out)
                yield from out
                out.clear()
        return
    _collect(node, stop, node, out)
    yield from out


def _collect(n: Any, stop: Any, root: Any, out: list[Any]) -> None:
    """Append the walk from `n` to `out` (`root`: the walk's start, which `stop` never cuts)."""
    stack = [n]
    pop, push, append = stack.pop, stack.append, out.append
    while stack:
        n = pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__slots__") or isinstance(n, Span):
            continue
        append(n)
        if stop is not None and isinstance(n, stop) and n is not root:
            continue
        for slot in reversed(type(n).__slots__):
            child = getattr(n, slot, None)
            if isinstance(child, tuple) or hasattr(child, "__slots__"):
                push(child)


# The walks kept, by the node's identity and `stop`: (the node, kept alive so that no other node can take its id
# while the entry stands, and its walk). Bounded by the nodes the walks hold together (`_WALK_BUDGET`): emptied
# whole past it, as the other memos are (what it held is walked again, never wrong; no iteration over it that
# another thread's compile could disturb).
_WALKS: dict[tuple[int, Any], tuple[Any, tuple[Any, ...]]] = {}
_WALK_BUDGET = 1 << 18  # (the entries keep their trees alive: ~40 MB of AST at most)
_walk_held = 0


def preorder(node: Any, stop: type | tuple[type, ...] | None = None) -> tuple[Any, ...]:
    """`tuple(walk(node, stop))` of an AST node, computed once a process (see `walk`)."""
    global _walk_held
    key = (id(node), stop)
    hit = _WALKS.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]
    out: list[Any] = []
    _collect(node, stop, node, out)
    nodes = tuple(out)
    if _walk_held + len(nodes) > _WALK_BUDGET:
        _WALKS.clear()
        _walk_held = 0
    if len(nodes) <= _WALK_BUDGET:
        _WALKS[key] = (node, nodes)
        _walk_held += len(nodes)
    return nodes
