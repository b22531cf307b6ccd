"""`#[requires(cond, "message")]`: a kernel's launch requirements.

A requirement is a condition on what a launch is given: the run-time
shapes of the kernel's `&` tensors (`k.shape()[1]`) and of the tensors its
`&mut` partitions split (`o.tensor_shape()[1]`: in the kernel `o.shape()` is
the tile's, so a requirement names the whole tensor's otherwise), its scalar
arguments (`cache_len`), its const generics and its grid (`num_blocks(0)`:
the blocks the `&mut` partitions give), combined with integer and float
arithmetic (`+ - * / %`), comparisons, `&&`, `||`, `!` and unary `-`. The
host checks every requirement of a launch before the launch starts, on
every engine (`runtime/launch.py` `bind_launch`; a repeated Python API call
with other numbers in `api/call.py` `_from_plan`), and refuses a launch that
breaks one (E0513). A requirement is never compiled into the kernel: it
costs the device nothing, and a kernel's PTX is the same with or without
it. What a block computes from its tiles cannot be required; that is what
a kernel's `assert` is for.

One reading of the attribute for the type checker (`check`: the forms a
condition may take, each refusal with a span, a message and a help) and for
the launch (`evaluate`). Integers are Python's (no overflow); `/` truncates
toward zero and `%` has the sign of the dividend, as in kernels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tilelang.dtypes import float_rem, trunc_div, trunc_rem
from tilelang.memo import ByIdentity
from tilelang.source import Span
from tilelang.syntax import ast

NAME = "requires"
# `o.tensor_shape()[i]`: in a requirement, the shape of the tensor a launch
# partitions for `&mut` parameter `o` (the kernel sees only its tile)
WHOLE = "tensor_shape"

_INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
_FLOATS = ("f16", "bf16", "f32", "f64")
_ARITH = ("+", "-", "*", "/", "%")
_ORDER = ("<", ">", "<=", ">=")
_EQ = ("==", "!=")
_LOGIC = ("&&", "||")
_A = {"int": "an integer", "float": "a float", "bool": "a condition"}

FORMS_HELP = ("a requirement reads the launch's numbers only: `t.shape()[i]` of a `&` tensor parameter, "
              "`o.tensor_shape()[i]` of a `&mut` one (the partitioned tensor's), scalar parameters, const "
              "generics and `num_blocks(axis)`, with `+ - * / %`, comparisons, `&&`, `||` and `!`")


@dataclass(frozen=True, slots=True)
class Requirement:
    cond: ast.Expr
    message: str
    span: Span  # the attribute


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an attribute's condition cannot be a requirement (for the type checker)."""

    kind: str  # "form" (E0204), "type" (E0203)
    span: Span
    message: str
    label: str
    help: str


_KNOWN = ByIdentity()  # a kernel declaration -> its requirements


def requirements(decl: ast.FnDecl) -> tuple[Requirement, ...]:
    """The well-formed `#[requires(cond, "message")]` of kernel `decl`, in order
    (those `check` accepts; the type checker refuses the others before
    anything launches). Read once a declaration."""
    return _KNOWN.get(decl, lambda: tuple(
        Requirement(attr.args[0].value, attr.args[1].value.value, attr.span)  # type: ignore[attr-defined]
        for attr in decl.attrs
        if attr.name.name == NAME and decl.is_kernel and not check(decl, attr, lambda node: "...")))


def grid_axis(e: ast.Expr) -> int | None:
    """The axis of `num_blocks(axis)` with a literal axis 0..2, else None."""
    if isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name == "num_blocks" \
            and len(e.args) == 1 and e.args[0].name is None and isinstance(e.args[0].value, ast.IntLit) \
            and 0 <= e.args[0].value.value <= 2:
        return e.args[0].value.value
    return None


def grid_values(grid: tuple[int, ...]) -> dict[str, int]:
    """`num_blocks(0..2)` of a launch grid (1 along the axes past it)."""
    full = tuple(grid) + (1,) * (3 - len(grid))
    return {f"num_blocks({axis})": int(n) for axis, n in enumerate(full[:3])}


def constant_grid(parts: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> tuple[int, ...] | None:
    """The grid of a launch's `&mut` partitions (tensor shape, tile shape),
    by the launch's rule (`runtime/launch.py` `bind_launch`): grids equal up
    to trailing 1s, the longest; None where they disagree or there is none."""
    grid: tuple[int, ...] | None = None
    for shape, tile in parts:
        if len(shape) != len(tile) or any(n < 0 or t <= 0 for n, t in zip(shape, tile, strict=True)):
            return None
        g = tuple(-(-n // t) for n, t in zip(shape, tile, strict=True))
        if grid is not None and trim_grid(g) != trim_grid(grid):
            return None
        if grid is None or len(g) > len(grid):
            grid = g
    return grid if grid is not None and len(grid) <= 3 else None


def trim_grid(grid: tuple[int, ...]) -> tuple[int, ...]:
    """`grid` without its trailing 1s (at least one axis): grids equal up to
    trailing 1s are one grid (CUDA's rule)."""
    n = len(grid)
    while n > 1 and grid[n - 1] == 1:
        n -= 1
    return grid[:n]


def read_names(req: Requirement) -> frozenset[str]:
    """The names a requirement reads: tensors (through their shapes), scalar
    parameters, const generics and `num_blocks(axis)`."""
    names: set[str] = set()

    def visit(e: ast.Expr) -> None:
        if isinstance(e, ast.Name):
            names.add(e.ident.name)
        elif grid_axis(e) is not None:
            names.add(f"num_blocks({grid_axis(e)})")
        elif isinstance(e, ast.Index) and isinstance(e.receiver, ast.MethodCall):
            visit(e.receiver.receiver)
        elif isinstance(e, ast.Binary):
            visit(e.lhs)
            visit(e.rhs)
        elif isinstance(e, ast.Unary):
            visit(e.operand)

    visit(req.cond)
    return frozenset(names)


# ---------------------------------------------------------------- the type checker's reading
def _params(decl: ast.FnDecl) -> dict[str, tuple[str, Any]]:
    """name -> ("ref", rank) / ("mut", rank) / ("scalar", element type name) / ("other", None)."""
    out: dict[str, tuple[str, Any]] = {}
    for p in decl.params:
        ty = p.ty
        if isinstance(ty, ast.RefType):
            inner = ty.inner
            rank = None
            if isinstance(inner, ast.NamedType) and len(inner.args) > 1 and isinstance(inner.args[1], ast.ShapeType):
                rank = len(inner.args[1].dims)
            out[p.name.name] = ("mut" if ty.mutable else "ref", rank)
        elif isinstance(ty, ast.NamedType) and not ty.args:
            out[p.name.name] = ("scalar", ty.name.name)
        else:
            out[p.name.name] = ("other", None)
    return out


def check(decl: ast.FnDecl, attr: ast.Attribute, snippet: Any,
          module_const: Any = None) -> list[Refusal]:
    """Why `attr` (a `#[requires(..)]` of kernel `decl`) is not a requirement;
    [] when it is one. `snippet(node)` is the source text of a node;
    `module_const(name)` the value of a module constant the kernel sees (or None),
    for the help of a requirement that names one."""
    if len(attr.args) != 2 or any(a.name is not None for a in attr.args) \
            or not isinstance(attr.args[1].value, ast.StrLit):
        return [Refusal("type", attr.span, "`#[requires(..)]` takes a condition and a message",
                        "not a condition and a string",
                        'write `#[requires(cond, "what the launch must give")]`, e.g. '
                        '`#[requires(v.shape()[1] == k.shape()[1], "v must have k\'s length")]`')]
    params = _params(decl)
    consts = {g.name.name for g in decl.generics if g.is_const}
    out: list[Refusal] = []
    kind = _kind(attr.args[0].value, params, consts, snippet, out, module_const)
    if not out and kind != "bool":
        e = attr.args[0].value
        out.append(Refusal("type", e.span, f"a requirement is a condition, but `{snippet(e)}` is {_A[kind]}",
                           f"{_A[kind]}, not a `bool`", "compare it: e.g. `n > 0`"))
    return out


def _kind(e: ast.Expr, params: Mapping[str, tuple[str, Any]], consts: set[str], snippet: Any,
          out: list[Refusal], module_const: Any = None) -> str | None:
    """"int", "float" or "bool" (None after a refusal, appended to `out`)."""
    if isinstance(e, ast.BoolLit):
        return "bool"
    if isinstance(e, ast.IntLit):
        return "float" if e.suffix in _FLOATS else "int"
    if isinstance(e, ast.FloatLit):
        return "float"
    if isinstance(e, ast.Name):
        name = e.ident.name
        if name in consts:
            return "int"
        what = params.get(name)
        if what is not None and what[0] == "scalar":
            elem = what[1]
            if elem in _INTS:
                return "int"
            if elem in _FLOATS:
                return "float"
            if elem == "bool":
                return "bool"
            out.append(Refusal("type", e.span, f"`{name}` is a scalar of type parameter `{elem}`, whose kind a "
                               "requirement cannot know", "of a type parameter",
                               f"require something of a scalar of a number type, or drop `{name}` here"))
            return None
        if what is not None and what[0] in ("ref", "mut"):
            out.append(Refusal("form", e.span, f"a requirement reads a tensor only through its shape: "
                               f"`{name}.{'shape' if what[0] == 'ref' else WHOLE}()[0]`", "a tensor", FORMS_HELP))
            return None
        value = module_const(name) if module_const is not None else None
        if value is not None:
            out.append(Refusal("form", e.span, f"a requirement cannot read module constant `{name}`",
                               "a module constant",
                               f"write its value here, `{_literal(value)}`, or take it as a const generic of "
                               f"the kernel (`<const {name}: i32>`, given at the launch)"))
            return None
        out.append(Refusal("form", e.span, f"`{name}` is not a parameter or const generic of this kernel",
                           "not known at the launch", FORMS_HELP))
        return None
    if grid_axis(e) is not None:
        return "int"
    if isinstance(e, ast.Call) and isinstance(e.callee, ast.Name) and e.callee.ident.name == "num_blocks":
        out.append(Refusal("form", e.span, "`num_blocks` of a requirement takes a literal axis 0, 1 or 2",
                           "not a literal grid axis", "write e.g. `num_blocks(0)`"))
        return None
    if isinstance(e, ast.Index):
        r = e.receiver
        if isinstance(r, ast.MethodCall) and r.method.name == WHOLE and not r.args \
                and isinstance(r.receiver, ast.Name):
            return _whole_axis(e, r.receiver, params, out)
        if isinstance(r, ast.MethodCall) and r.method.name == "shape" and not r.args \
                and isinstance(r.receiver, ast.Name):
            name = r.receiver.ident.name
            what = params.get(name)
            if what is None or what[0] not in ("ref", "mut"):
                out.append(Refusal("form", r.receiver.span, f"`{name}` is not a tensor parameter of this kernel",
                                   "not a tensor parameter", FORMS_HELP))
                return None
            if what[0] == "mut":
                out.append(Refusal("form", r.receiver.span,
                                   f"`{name}` is a `&mut` parameter: in the kernel its shape is the tile's, "
                                   "the same for every launch", "a `&mut` parameter",
                                   f"to require something of the tensor the launch partitions for `{name}`, "
                                   f"read `{name}.tensor_shape()[{_axis_text(e)}]`; a `&mut` parameter's tile "
                                   "shape is its type's"))
                return None
            return _axis(e, name, what[1], "shape", out)
    if isinstance(e, ast.Unary):
        k = _kind(e.operand, params, consts, snippet, out, module_const)
        if k is None:
            return None
        if (e.op == "!") != (k == "bool"):
            out.append(Refusal("type", e.span, f"`{e.op}` does not apply to {_A[k]}", _A[k],
                               "`!` negates a condition, `-` a number"))
            return None
        return k
    if isinstance(e, ast.Binary) and e.op in _ARITH + _ORDER + _EQ + _LOGIC:
        a = _kind(e.lhs, params, consts, snippet, out, module_const)
        b = _kind(e.rhs, params, consts, snippet, out, module_const)
        if a is None or b is None:
            return None
        if e.op in _LOGIC:
            if a != "bool" or b != "bool":
                out.append(Refusal("type", e.span, f"`{e.op}` joins two conditions, not {_A[a]} and {_A[b]}",
                                   f"{_A[a]} {e.op} {_A[b]}", "compare the numbers first: `n > 0 && m > 0`"))
                return None
            return "bool"
        if {a, b} == {"int", "float"} and any(isinstance(x, ast.IntLit) and x.suffix is None
                                                for x in (e.lhs if a == "int" else e.rhs,)):
            a = b = "float"  # an untyped integer literal beside a float: `scale > 0`
        if a != b or (a == "bool" and e.op not in _EQ):
            out.append(Refusal("type", e.span, f"`{e.op}` of {_A[a]} and {_A[b]}", f"{_A[a]} {e.op} {_A[b]}",
                               "compare integers with integers and floats with floats (a float literal is "
                               "written `1.0`)"))
            return None
        return "bool" if e.op in _ORDER + _EQ else a
    out.append(Refusal("form", e.span, f"`{snippet(e)}` cannot be decided before the launch", "not a launch's number",
                       FORMS_HELP))
    return None


def _axis_text(e: ast.Index) -> str:
    """The axis written in `t.shape()[axis]`, for a help (`0` where it is not a literal)."""
    return str(e.index.value) if isinstance(e.index, ast.IntLit) else "0"


def _whole_axis(e: ast.Index, receiver: ast.Name, params: Mapping[str, tuple[str, Any]],
                out: list[Refusal]) -> str | None:
    """`o.tensor_shape()[axis]` of a `&mut` parameter `o`: an axis of the tensor
    the launch partitions for it (the host's; in the kernel `o.shape()` is the
    tile's). "int", or None after a refusal."""
    name = receiver.ident.name
    what = params.get(name)
    if what is None or what[0] != "mut":
        out.append(Refusal("form", receiver.span,
                           f"`{WHOLE}()` reads the tensor a launch partitions for a `&mut` parameter, and `{name}` "
                           "is not one", "not a `&mut` parameter",
                           f"read a `&` parameter's shape as `{name}.shape()[{_axis_text(e)}]`"
                           if what is not None and what[0] == "ref" else FORMS_HELP))
        return None
    return _axis(e, name, what[1], WHOLE, out)


def _axis(e: ast.Index, name: str, rank: int | None, method: str, out: list[Refusal]) -> str | None:
    """The axis of `name.method()[axis]`: an integer literal below the tensor's rank (when known). "int", or
    None after a refusal."""
    if not isinstance(e.index, ast.IntLit) or (rank is not None and not 0 <= e.index.value < rank):
        out.append(Refusal("form", e.index.span, f"an axis of `{name}` must be an integer literal"
                           + (f" below its rank {rank}" if rank is not None else ""),
                           "not an axis of the tensor", f"write e.g. `{name}.{method}()[0]`"))
        return None
    return "int"


def _literal(v: Any) -> str:
    """A constant's value as a Tile literal: `true`, `64`, `0.5`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return f"{v:.1f}"
    return repr(v)


# ---------------------------------------------------------------- the launch's reading
class DivisionByZero(Exception):
    pass


def evaluate(e: ast.Expr, shapes: Mapping[str, tuple[int, ...]], values: Mapping[str, Any]) -> Any:
    """A (checked) condition's value: `shapes` of the `&` tensors and of the
    tensors the `&mut` partitions split (by parameter name: `check` lets a
    `&` parameter be read only by `shape()`, a `&mut` one only by
    `tensor_shape()`), `values` of the scalars and const generics (Python
    numbers or NumPy scalars)."""
    if isinstance(e, (ast.BoolLit, ast.FloatLit)):
        return e.value
    if isinstance(e, ast.IntLit):
        return float(e.value) if e.suffix in _FLOATS else e.value
    if isinstance(e, ast.Name):
        v = values[e.ident.name]
        return v.item() if hasattr(v, "item") else v
    axis = grid_axis(e)
    if axis is not None:
        return values[f"num_blocks({axis})"]
    if isinstance(e, ast.Index):
        assert isinstance(e.receiver, ast.MethodCall) and isinstance(e.receiver.receiver, ast.Name)
        assert isinstance(e.index, ast.IntLit)
        return shapes[e.receiver.receiver.ident.name][e.index.value]
    if isinstance(e, ast.Unary):
        v = evaluate(e.operand, shapes, values)
        return (not v) if e.op == "!" else -v
    assert isinstance(e, ast.Binary)
    if e.op == "&&":
        return bool(evaluate(e.lhs, shapes, values)) and bool(evaluate(e.rhs, shapes, values))
    if e.op == "||":
        return bool(evaluate(e.lhs, shapes, values)) or bool(evaluate(e.rhs, shapes, values))
    a = evaluate(e.lhs, shapes, values)
    b = evaluate(e.rhs, shapes, values)
    op = e.op
    if op in ("/", "%") and isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        if b == 0:
            raise DivisionByZero(op)
        return trunc_div(a, b) if op == "/" else trunc_rem(a, b)
    if op == "%":  # floats: fmod, as in kernels (NaN for a zero divisor)
        return float_rem(float(a), float(b))
    if op == "/":  # floats: IEEE (a zero divisor gives inf or NaN, as in kernels)
        import numpy as np  # (here: `tilec check` imports this module and stays without NumPy)

        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b))
    return {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
        "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b,
        "<=": lambda: a <= b, ">=": lambda: a >= b,
    }[op]()


def quoted(e: ast.Expr, shapes: Mapping[str, tuple[int, ...]], values: Mapping[str, Any], snippet: Any) -> str:
    """`k.shape()[1]` = 12, `cache_len` = 40: the launch's value of each
    shape and name the condition reads, for the error's note."""
    seen: dict[str, Any] = {}

    def visit(x: ast.Expr) -> None:
        if isinstance(x, ast.Name) or grid_axis(x) is not None or \
                (isinstance(x, ast.Index) and not isinstance(x.receiver, ast.Index)):
            try:
                seen.setdefault(snippet(x), evaluate(x, shapes, values))
            except (KeyError, IndexError, AssertionError):
                pass
        elif isinstance(x, ast.Binary):
            visit(x.lhs)
            visit(x.rhs)
        elif isinstance(x, ast.Unary):
            visit(x.operand)

    visit(e)
    return ", ".join(f"`{k}` = {v}" for k, v in seen.items())
