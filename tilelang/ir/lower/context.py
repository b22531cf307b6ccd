"""The shared state of one kernel's lowering, and the helpers every part uses.

`LowerCx` holds the checked program, the kernel's declaration, the IR
`Builder`, the current function frame (`FnFrame`: scopes, the values of the
const generics and type parameters of the kernel or of the inlined device
function) and the kernel's tensor parameters. Its helpers turn lowered values
into IR values of a dtype and shape (`mat`, `to_shape`, `unify`, `as_index`)
or into compile-time ints (`ints`, `const_int`, `need_int`), and resolve
written element types (`dtype`). Lowering an expression recurses through
`LowerCx.expr`, which `kernel.py` binds to `exprs.lower_expr`, so no part
imports one that imports it back.

Everything it knows of the program it reads from the checker's `Program`
(`find_fn`, `find_const`, `symbol_of`, `type_of`, `instantiation_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilelang.diagnostics.instances import literal_misfits
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.ir.builder import Builder
from tilelang.ir.lower.ranges import Ranges
from tilelang.ir.lower.fold import broadcast_shapes, convert_const, default_dtype
from tilelang.ir.lower.values import I32, ArrayVal, CVal, InstanceMismatch, TensorRef, Unsupported
from tilelang.sema.program import Program
from tilelang.sema.types import TypeParam
from tilelang.source import Span
from tilelang.syntax import ast


class FnFrame:
    """The lexical state of one function body being lowered (a kernel or an
    inlined device function)."""

    def __init__(self, generics: dict[str, int], type_params: dict[str, DType]) -> None:
        self.scopes: list[dict[str, Any]] = [{}]
        self.generics = generics
        self.type_params = type_params

    def lookup(self, name: str) -> dict[str, Any] | None:
        """The innermost scope that binds `name`."""
        return next((scope for scope in reversed(self.scopes) if name in scope), None)


def literal_dtype(program: Program, lit: ast.Expr) -> DType | None:
    """The dtype the checker settled an untyped literal to, only when it is a
    definite scalar type (so that context-free literals stay flexible)."""
    ty = program.type_of(lit)
    dt = getattr(ty, "dtype", None)
    return dt if isinstance(dt, DType) else None


class LowerCx:
    """The state of one kernel's lowering (see the module docstring)."""

    def __init__(self, program: Program, decl: ast.FnDecl, expr: Callable[[LowerCx, ast.Expr], Any]) -> None:
        self._lower_expr = expr
        self.program = program
        self.cast_depth = 0  # inside a cast's operand (`operators.float_operands`)
        self.cast_operand: ast.Expr | None = None  # the operand of the innermost cast (`intrinsics._generic_dot`)
        self.decl = decl
        self.b = Builder(decl.name.name, span=decl.span, cse=True)
        self.f = FnFrame({}, {})
        self.tensors: dict[str, TensorRef] = {}
        self.inline_depth = 0
        self.grid_rank = 1
        self.cluster: tuple[int, int, int] | None = None  # `#[cluster(..)]` of this instance
        self.walk = -1  # `for s in tiles(axis)`: the axis (`ir.Kernel.walk`)
        # in a tile queue's or walk's loop: (tile, tiles, axis), where a `print`'s line goes (`ir.Print.order`)
        self.print_order: tuple[Any, Any, int] | None = None
        self.order_region = ""  # what `print_order` is: "walk", "queue" or "last_block" (`ir.Assert.region`)
        # Defence in depth: refuse (ICE) what the ownership checker must have
        # refused (`views.refuse`); off only for programs run unchecked on purpose.
        self.defend = True
        self.type_args: dict[str, DType] = {}  # the kernel's type generics, once bound
        # the bounds of integer scalars (`ranges.int_range`) and of the grid they read (`ranges.Grid`;
        # `kernel.lower_kernel` sets it from the `&mut` tiles, unknown until then)
        self.ranges = Ranges(self.b)
        # the sizes inlined device functions declare for the kernel's `?` tensor dims (`ir.DimClaim`)
        self.claims: list[ir.DimClaim] = []

    def expr(self, e: ast.Expr) -> Any:
        """What `e` lowers to (`exprs.lower_expr`)."""
        return self._lower_expr(self, e)

    def mat(self, v: Any, dtype: DType | None = None, span: Span | None = None) -> ir.Value:
        """Materialise a scalar/tile value (a CVal becomes a `Const`)."""
        if isinstance(v, ir.Value):
            if dtype is not None and v.dtype is not dtype:
                return self.b.cast(v, dtype, span=span)
            return v
        if isinstance(v, CVal):
            dt = dtype or v.dtype or default_dtype(v.value)
            self.check_literal(v, dtype, span)
            return self.b.const(convert_const(v.value, dt), dt, span=span)
        raise Unsupported(span or self.decl.span, "expected a scalar or tile value here")

    def instance_literal_dtype(self, lit: ast.Expr, negated: bool = False) -> DType | None:
        """`literal_dtype` of a literal, and in an instance of a generic function the float
        type its `T` stands for: `x * (0.1 + 0.2)` with `T = f16` adds two f16 values, as the
        concrete `f16` function and the host do (folded in f64, it was 0.30004883, not
        0.29980469), and `x * (1 / 3)` with `T = f32` divides floats (folded as integers, it
        was 0). A `T` of an integer type types an integer literal that it holds and refuses
        one it does not (E0201, `InstanceMismatch`); a float literal stays untyped, for `check_literal`."""
        dt = literal_dtype(self.program, lit)
        if dt is not None:
            return dt
        tp = getattr(self.program.type_of(lit), "dtype", None)
        bound = self.f.type_params.get(tp.name) if isinstance(tp, TypeParam) else None
        if not isinstance(bound, DType) or bound is DType.BOOL:
            return None
        if bound.is_float:
            # one that rounds to infinity there (`x * 65536` with `T = f16`) is E0201, as the concrete
            # form's E0222 and the host's instance (under a minus it rounds to -infinity alike)
            if isinstance(lit, (ast.IntLit, ast.FloatLit)) and literal_misfits(
                    lit.value, bound, lit.text if isinstance(lit, ast.FloatLit) else None):
                raise InstanceMismatch(lit.span, -lit.value if negated else lit.value, bound)
            return bound
        # an integer `T`: the literal is a `T` (`(!0) >> 9` with `T = u8` shifts a `u8` 255: E0227, as
        # the concrete form and the host's instance are; folded as an untyped `-1 >> 9`, it was 255).
        # One that `T` cannot hold is the instance's E0201 here, at the literal, as the concrete form's
        # E0222 is: left untyped, `x + (256 - 1)` folded to a 255 that fits (the host refused the 256)
        # (`negated`: under a unary minus, whose `-128` an `i8` holds although not `128`)
        if isinstance(lit, ast.IntLit) and isinstance(lit.value, int):
            if literal_misfits(lit.value, bound) and (not negated or literal_misfits(-lit.value, bound)):
                raise InstanceMismatch(lit.span, -lit.value if negated else lit.value, bound)
            return bound
        return None

    def check_literal(self, v: CVal, dtype: DType | None, span: Span | None) -> None:
        """An untyped literal meets a type that cannot hold it (`0.5` as an
        `i32`, `1` as a `bool`, `300` as an `i8`) only in an instance of a
        generic function (`diagnostics.instances`; the host's instance keeps
        the same rule)."""
        if v.dtype is None and dtype is not None and literal_misfits(v.value, dtype):
            raise InstanceMismatch(span, v.value, dtype)

    def to_shape(self, v: ir.Value, shape: tuple[int, ...], span: Span | None = None) -> ir.Value:
        if v.shape == shape:
            return v
        if v.type.rank <= len(shape) and all(
                s == 1 or s == d for s, d in zip(reversed(v.shape), reversed(shape), strict=False)):
            return self.b.broadcast(v, shape, span=span)
        raise Unsupported(span or self.decl.span,
                          f"cannot broadcast {list(v.shape)} to {list(shape)}")

    def as_index(self, v: Any, span: Span) -> ir.Value:
        x = self.mat(v, None, span)
        if not x.type.is_scalar or not x.dtype.is_int:
            raise Unsupported(span, "an index must be an integer scalar")
        return x if x.dtype is I32 else self.b.cast(x, I32, span=span)

    def ints(self, v: Any, span: Span) -> tuple[int, ...]:
        if isinstance(v, ArrayVal):
            out = []
            for e in v.elems:
                if not (isinstance(e, CVal) and isinstance(e.value, int)):
                    raise Unsupported(span, "a shape must be compile-time integers")
                out.append(int(e.value))
            return tuple(out)
        raise Unsupported(span, "expected a shape `[..]`")

    def const_int(self, v: Any, span: Span) -> int:
        if isinstance(v, CVal) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return int(v.value)
        raise Unsupported(span, "this must be a compile-time integer")

    def unify(self, xs: Sequence[Any], span: Span) -> list[ir.Value]:
        """Materialise operands to one dtype (the first non-literal's) and one
        broadcast shape, as the checker types them."""
        dtype = None
        for x in xs:
            if isinstance(x, ir.Value):
                dtype = x.dtype
                break
        if dtype is None:
            for x in xs:
                if isinstance(x, CVal) and x.dtype is not None:
                    dtype = x.dtype
                    break
        vals = [self.mat(x, dtype if not isinstance(x, ir.Value) else None, span) for x in xs]
        shape = broadcast_shapes([v.shape for v in vals], span)
        return [self.to_shape(v, shape, span) for v in vals]

    def flag(self, name: str) -> Any:
        scope = self.f.lookup(name)
        return None if scope is None else scope[name]

    def dtype(self, ty: ast.TypeExpr | ast.Expr) -> DType:
        if isinstance(ty, ast.NamedType) and not ty.args:
            name = ty.name.name
        elif isinstance(ty, ast.Name):
            name = ty.ident.name
        else:
            raise Unsupported(ty.span, "this type is not a scalar element type here")
        if name in self.f.type_params:
            return self.f.type_params[name]
        dt = DType.parse(name)
        if dt is None:
            raise Unsupported(ty.span, f"unknown element type `{name}`")
        return dt

    def tensor_type(self, ty: ast.TypeExpr) -> tuple[DType, tuple[ast.Expr | None, ...]]:
        if (isinstance(ty, ast.NamedType) and ty.name.name in ("Tensor", "Tile")
                and len(ty.args) == 2 and isinstance(ty.args[1], ast.ShapeType)):
            return self.dtype(ty.args[0]), ty.args[1].dims
        raise Unsupported(ty.span, "a kernel parameter must be a scalar, `&Tensor` or `&mut Tensor`")

    def need_int(self, e: ast.Expr | None, span: Span) -> int:
        if e is None:
            raise Unsupported(span, "a `?` dimension where a compile-time size is needed")
        v = self.expr(e)
        if isinstance(v, CVal) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return int(v.value)
        raise Unsupported(e.span, "this must be a compile-time integer")

    def iota(self, shape: tuple[int, ...], axis: int, span: Span) -> ir.Value:
        """An i32 tile of `shape` holding each element's index along `axis`."""
        r = self.b.arange(shape[axis], I32, span=span)
        r = self.b.reshape(r, tuple(n if i == axis else 1 for i, n in enumerate(shape)), span=span)
        return self.to_shape(r, shape, span)

    def tensor_arg(self, v: Any, span: Span) -> TensorRef:
        if isinstance(v, TensorRef):
            return v
        raise Unsupported(span, "expected a tensor parameter")

    def index_list(self, v: Any, span: Span) -> tuple[ir.Value, ...]:
        if isinstance(v, ArrayVal):
            return tuple(self.as_index(x, span) for x in v.elems)
        return (self.as_index(v, span),)

    def group_index(self, axis: int, sp: Span) -> ir.Value:
        """The block's group along `axis` (`last_block`'s, a queue's row): its
        position on the other axes (axes past the partitions' rank have one
        block), as one index."""
        self.grid_rank = max(self.grid_rank, axis + 1)
        group: ir.Value = self.b.const(0, I32, span=sp)
        stride: ir.Value | None = None
        for d in range(self.grid_rank):
            if d == axis:
                continue
            bid = self.b.block_id(d, span=sp)
            group = self.b.add(group, bid if stride is None else self.b.mul(bid, stride, span=sp), span=sp)
            nb = self.b.num_blocks(d, span=sp)
            stride = nb if stride is None else self.b.mul(stride, nb, span=sp)
        return group

    def lower_args(self, args: tuple[ast.Arg, ...]) -> list[Any]:
        return [self.expr(a.value) for a in args]
