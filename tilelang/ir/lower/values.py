"""What a Tile expression lowers to, before it is IR.

The lowering evaluates each expression to one of these (`LV`): an
`ir.Value` (a scalar or tile computed at run time), a `CVal` (a compile-time
scalar, folded in Python), a `TensorRef` (a tensor parameter, with its own
tile's offsets for a `&mut` one), a `ViewRef` (a partition of one inside the
kernel), a tuple, a shape literal or a string. `Unsupported` is a construct
the lowering does not support yet (E0701 at the construct); the flags `BRK`,
`CONT`, `RET` are the synthetic variables of the jump lowering.
"""

from __future__ import annotations

from typing import Any

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir
from tilelang.source import Span

I32 = DType.I32
BOOL = DType.BOOL


@frozen(eq=True)
class CVal:
    """A compile-time scalar: `dtype` None is an untyped literal (its dtype
    comes from the other operand, else i32 / f32)."""

    value: bool | int | float
    dtype: DType | None = None


@frozen(eq=True)
class TensorRef:
    """A tensor parameter; `own` are the element offsets of a `&mut` param's
    own tile (None for `&` params). `group` (an axis): `z.group()` inside
    `if last_block(axis)`, the tiles of every block of the group, read only;
    `own` is then the group's first tile (the own offsets, 0 along the axis)."""

    param: ir.TensorParam
    own: tuple[ir.Value, ...] | None
    group: int | None = None


@frozen(eq=True)
class ViewRef:
    """`x.partition([..])` inside a kernel: `tile` is the view's tile shape.
    `nested` views (of a `&mut` param) index tiles local to the own tile."""

    tensor: TensorRef
    tile: tuple[int, ...]
    nested: bool


@frozen(eq=True)
class TupleVal:
    elems: tuple[Any, ...]


@frozen(eq=True)
class ArrayVal:
    """`[a, b, c]`: a shape or a tile index."""

    elems: tuple[Any, ...]


@frozen(eq=True)
class StrVal:
    value: str


UNIT = TupleVal(())


# Synthetic variables of the jump lowering; `%` keeps them apart from user names.
BRK, CONT, RET, RETV, ITER = "%break", "%continue", "%return", "%retval", "%iter"
END = "%end"  # an inclusive range's last round has run
QTILE = "%queue"  # `for s in queue(axis)`: the tile index pulled last (carried by the loop)


LV = ir.Value | CVal | TensorRef | ViewRef | TupleVal | ArrayVal | StrVal


class Unsupported(Exception):
    def __init__(self, span: Span, what: str, help_: str = "") -> None:
        super().__init__(what)
        self.span = span
        self.what = what
        self.help = help_


class InstanceDomain(Exception):
    """An operator of a type-generic body that this instance's `T` does not
    have, where its operands are untyped constants that the lowering would
    fold (`!c` or `c << 16` of `let c = 1;` with `T = f64`): E0204 at the
    operator, as the IR's instance check (`ir.verify.domain_problem`) and
    the host's instance (`runtime/host_domains.py`) say it."""

    def __init__(self, span: Span | None, what: str, dtype: Any, need: str) -> None:
        super().__init__(f"{what} on {dtype}")
        self.span = span
        self.what = what
        self.dtype = dtype
        self.need = need


class InstanceFloatValue(Exception):
    """A float value (an untyped `let c = 256 / 0.1;`) in arithmetic that
    this instance's integer `T` types, outside a cast: E0201 at the operand,
    as the host's instance says it (`diagnostics.instances`)."""

    def __init__(self, span: Span | None, value_dtype: Any, dtype: Any, name: str | None = None) -> None:
        super().__init__(f"{value_dtype} in {dtype}")
        self.span = span
        self.value_dtype = value_dtype
        self.dtype = dtype
        self.name = name  # a float variable or constant read as `T` (`return c;`)


class InstanceDot(Exception):
    """`dot(a, b)` of a generic `T` whose instance accumulates in another type
    than `T` (`T = f16`: an f32 result; `T = i8`: i32), where the checker typed
    the result `Tile<T, ..>`: E0206 at the call, reported by `lower_kernel`."""

    def __init__(self, span: Span | None, dtype: Any, acc: Any, param: str) -> None:
        super().__init__(f"dot of {dtype} gives {acc}")
        self.span = span
        self.dtype = dtype
        self.acc = acc
        self.param = param


class InstanceArange(Exception):
    """`arange::<T>(N)` whose values this instance's `T` cannot hold (`why`,
    `dtypes.arange_problem`): E0231 at the call, as the checker reports
    `arange::<i8>(300)`, reported by `lower_kernel` with the instance."""

    def __init__(self, span: Span | None, n: int, dtype: Any, why: str) -> None:
        super().__init__(why)
        self.span = span
        self.n = n
        self.dtype = dtype
        self.why = why


class InstanceConstGeneric(Exception):
    """A const generic's value that does not fit the type its read (or the
    constant arithmetic of it) settled to, which only an instance knows: a
    `B` of 256 read as an `i8` (E0222, as the literal `256` is), `B * B` as
    an `i16` (E0227, as `256 * 256` is). `name` is the generic of a read,
    None for arithmetic; `value` the exact value."""

    def __init__(self, span: Span | None, name: str | None, value: int, dtype: Any, kind: str = "generic") -> None:
        super().__init__(f"{name or 'arithmetic'} = {value} as {dtype}")
        self.span = span
        self.name = name
        self.value = value
        self.dtype = dtype
        self.kind = kind  # "generic", or "let": an untyped `let` of one (`let c = C;`)


class InstanceOverflow(Exception):
    """A constant shift whose amount does not fit the width of its left
    operand's type, which only an instance knows (`c << 40` with `c: T` a
    constant and `T = i32`): E0227 at the shift, as the checker reports
    `1 << 40` on `i32`, reported by `lower_kernel` with the instance."""

    def __init__(self, span: Span, dtype: Any, amount: int) -> None:
        super().__init__(f"shift of {dtype} by {amount}")
        self.span = span
        self.dtype = dtype
        self.amount = amount


class StoreShape(Exception):
    """A store into a `&mut` tile whose shape only the kernel fixes (a device function's `&mut Tensor<T, [?]>`
    parameter, which takes any kernel's own tile) of a tile that does not broadcast to it: E0218 at the store,
    as the checker says of the same store written in a kernel (hrev31: it was E0701, "cannot broadcast")."""

    def __init__(self, span: Span, param: str, value: tuple[int, ...], tile: tuple[int, ...]) -> None:
        super().__init__(f"store of {list(value)} into {list(tile)}")
        self.span = span
        self.param = param
        self.value = value
        self.tile = tile


class InstanceMismatch(Exception):
    """A literal that the checker accepted for a type parameter `T` (any type)
    but that this instance's `T` cannot hold (`a * 0.5` with `T = i32`): E0201
    at the literal, reported by `lower_kernel` with the instance."""

    def __init__(self, span: Span | None, value: Any, dtype: Any) -> None:
        super().__init__(f"{value!r} as {dtype}")
        self.span = span
        self.value = value
        self.dtype = dtype
