"""`HostFunction`: a host `fn` of a loaded module, run at once from Python."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from tilelang.api import arrays, borrowed
from tilelang.api.arrays import NotAnArray, Unsupported, tile_dtype_name
from tilelang.api.engines import _LOCK, _PENDING, _TOKENS
from tilelang.api.errors import CallError, ExecutionError, NameLookupError, a_type, given, span_text
from tilelang.api.fastpath import torch_version_bump
from tilelang.api.scalars import scalar_value
from tilelang.api.temporaries import arg_counts, find_unheld
from tilelang.api.signature import (
    _doc_comments,
    _fix_dtype,
    _fix_not_an_array,
    _fix_rank,
    _header,
    _match_args,
    _py_signature,
)
from tilelang.diagnostics.codes import api as acodes
from tilelang.diagnostics.codes import launch as lcodes
from tilelang.diagnostics.codes.names import WRONG_GENERIC_COUNT
from tilelang.diagnostics.codes.types import HOST_EFFECT_IN_GRAPH, LITERAL_OUT_OF_RANGE, MISMATCHED_TYPES
from tilelang.diagnostics.model import TileError
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.runtime.tensor import Tensor
from tilelang.syntax import ast

if TYPE_CHECKING:
    from tilelang.api.protocols import ModuleLike

# who writes a host function's `&mut` argument, in E0801/E0803's messages
_WRITES = "the function writes it (`&mut`)"


class HostFunction:
    """A host `fn` of a loaded module. Calling it runs it at once on the
    module's engine: array arguments are copied in (a `&mut` one copied back
    afterwards), tensor results come back as new arrays: of the arguments'
    library when every array argument came from one (PyTorch, JAX, any
    library with `from_dlpack`), NumPy arrays otherwise."""

    def __init__(self, module: ModuleLike, decl: ast.FnDecl, key: str,
                 explicit: dict[str, Any] | None = None) -> None:
        self.module = module
        self.decl = decl
        self.key = key
        self.explicit = explicit or {}  # `f[4]`: generics given by the caller (name -> int or DType)
        self.__name__ = decl.name.name
        self.__qualname__ = decl.name.name
        self.signature = _header(decl, module._sources)
        doc = _doc_comments(decl, module._sources)
        names = ", ".join(p.name.name for p in decl.params)
        self.__doc__ = self.signature + (f"\n\n{doc}" if doc else "") + (
            f"\n\nCall from Python: `{self.__name__}({names})` runs it at once (arrays copied in, `&mut` ones "
            "copied back) and returns its result, tensors as new arrays.")
        self.__signature__ = _py_signature(decl, module._sources)
        # its `&mut` tensor parameters: an array no Python variable holds given
        # for one is E0313, as in Tile (`temporaries.py`)
        self._written_params = [(p.name.name, p.span, kind) for p in decl.params
                                 for kind in [_written_kind(p.ty)] if kind is not None]

    def __repr__(self) -> str:
        return f"<tile {self.signature}>"  # `<tile fn double(..) -> ..>`

    def __get__(self, obj: Any, objtype: Any = None) -> HostFunction:
        return self  # see `Kernel.__get__`

    def __getattr__(self, name: str) -> Any:
        if name in ("sync", "launch", "wait"):  # `mod.main.sync()`: a host function runs when called
            from tilelang.diagnostics.codes import api as acodes

            raise NameLookupError(
                f"host function `{self.__name__}` has no `.{name}()`: it runs when it is called",
                code=acodes.NOT_CALLED,
                help=f"call it: `mod.{self.__name__}(..)` runs it and returns its result")
        return object.__getattribute__(self, name)

    def __getitem__(self, generics: Any) -> HostFunction:
        """`f[4]` (in declaration order) or `f[{"N": 4}]` (by name): Tile's
        `f::<4>(..)`, for generics no argument determines (or to pin them:
        the arguments are then checked against them)."""
        gens = self.decl.generics
        where = self.module._where(self.decl.name.span, f"`{self.signature}`")
        if isinstance(generics, dict):
            unknown = [k for k in generics if k not in {g.name.name for g in gens}]
            if unknown:
                raise CallError(f"function `{self.__name__}` has no generic `{unknown[0]}`", where=where,
                                help=f"its generics: {', '.join(f'`{g.name.name}`' for g in gens) or 'none'}",
                                code=WRONG_GENERIC_COUNT)
            pairs = [(g, generics[g.name.name]) for g in gens if g.name.name in generics]
        else:
            values = generics if isinstance(generics, tuple) else (generics,)
            if len(values) > len(gens):
                raise CallError(f"function `{self.__name__}` takes {len(gens)} generic argument"
                                f"{'s' if len(gens) != 1 else ''} but {given(len(values))}", where=where,
                                help="give them in the order of the declaration" if gens
                                else f"it has none: call it without `[..]`, `mod.{self.__name__}(..)`",
                                code=WRONG_GENERIC_COUNT)
            pairs = list(zip(gens, values, strict=False))
        out = dict(self.explicit)
        for g, v in pairs:
            gwhere = self.module._where(g.span, "declared here")
            if g.is_const:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise CallError(f"const generic `{g.name.name}` of function `{self.__name__}` takes an "
                                    f"integer, not {v!r}", where=gwhere, help=f"give `{g.name.name}` a Python int",
                                    code=acodes.BAD_GENERIC)
                if not -(1 << 31) <= int(v) < (1 << 31):
                    raise CallError(f"const generic `{g.name.name}` of function `{self.__name__}` is an `i32`, "
                                    f"which cannot hold {int(v)}", where=gwhere,
                                    help="give a value in -2147483648..=2147483647 (as `f::<..>` takes in Tile)",
                                    code=LITERAL_OUT_OF_RANGE)
                out[g.name.name] = int(v)
            else:
                dt = _type_arg(v)
                if dt is None:
                    raise CallError(f"type parameter `{g.name.name}` of function `{self.__name__}` takes an "
                                    f'element type ("f32", numpy.float16, ...), not {v!r}', where=gwhere,
                                    help=f'give `{g.name.name}` a Tile type name ("f16") or a NumPy dtype',
                                    code=acodes.BAD_GENERIC)
                out[g.name.name] = dt
        return HostFunction(self.module, self.decl, self.key, out)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # first, while the arguments' counts are the caller's (`temporaries.py`)
        counts = arg_counts(args, kwargs) if self._written_params else None
        from tilelang.runtime.host import FnRef  # (after: `arg_counts` reads the caller's counts)

        m = self.module
        lost = None if counts is None else find_unheld(
            self, "function", self._written_params, args, kwargs, counts)
        self._check_not_recording()
        values = _match_args(self.__name__, "function", self.decl, args, kwargs, m)
        ev = m._evaluator()
        dev = ev.runtime.device
        converted: list[Any] = []
        writeback: list[tuple[np.ndarray, Tensor]] = []
        libraries: set[str] = set()
        token = self._check_borrows(values)
        held: list[np.ndarray] = []  # NumPy arguments made read-only while it runs
        try:
            for p, v in zip(self.decl.params, values, strict=True):
                where = m._where(p.span, f"`{span_text(p.span, m._sources)}` is declared here")
                converted.append(self._arg(p.name.name, p.ty, v, where, dev, writeback, libraries))
            self._check_type_params(converted)
            if lost is not None:  # after the other checks: their errors come first
                raise lost
            given = {k: v for k, v in self.explicit.items() if isinstance(v, (int, DType))}  # `f[4]`, `f[np.int8]`
            # while it runs (another thread may call meanwhile), its arguments
            # are borrowed as a launch's are: registered among the launches in
            # flight (`_check_borrows`) and its NumPy arrays read-only, written
            # back through views made before (a view keeps its own flag)
            writeback = [(host.view(), t) for host, t in writeback]
            held = borrowed.freeze_arrays(
                [v for _, _, v in self._array_args(values) if isinstance(v, np.ndarray)]
            )
            try:
                with np.errstate(all="ignore"):  # IEEE specials are results, not warnings
                    result = ev.call_fn(FnRef(self.decl, self.key), converted, self.decl.span, given)
            except TileError as e:
                # what it wrote before it failed is in its `&mut` arrays, as a kernel's writes are (in
                # place) and as the REPL keeps a failed entry's writes: they were lost with the copies
                try:
                    for host, t in writeback:
                        host[...] = t.numpy()
                    _bump_torch_versions(self._array_args(values))
                except Exception:  # a device that failed may not give them back: its error is the one to see
                    pass
                raise ExecutionError.from_tile_error(e, m._sources) from None
            for host, t in writeback:
                host[...] = t.numpy()
            _bump_torch_versions(self._array_args(values))
        finally:
            borrowed.thaw(held)
            _PENDING.pop(token, None)
        library = next(iter(libraries)) if len(libraries) == 1 else "numpy"
        return _from_value(result, library)

    def _array_args(self, values: list[Any]) -> list[tuple[str, ast.TypeExpr, Any]]:
        return _tensor_args([(p.name.name, p.ty, v) for p, v in zip(self.decl.params, values, strict=True)])

    def _check_not_recording(self) -> None:
        """A host function runs at once, also inside `with tilelang.graph()`,
        where kernel calls are recorded and run later: its reads would see
        none of the recorded launches, and its own launches would run once
        and never be replayed (a Tile `graph { .. }` block refuses host work
        the same way, E0228). Other threads are not recording."""
        from tilelang.api import engines

        rec = engines.RECORDING
        if rec is not None and getattr(rec, "_thread", None) == threading.get_ident():
            raise CallError(
                f"host function `{self.__name__}` runs at once, while the `with tilelang.graph()` "
                "block records kernel calls to run later: it would see none of the recorded "
                "launches, and its own launches would not be replayed",
                where=self.module._where(self.decl.name.span, f"`{self.signature}`"),
                help="call it before or after the block; to record its launches, call its "
                "kernels in the block",
                code=HOST_EFFECT_IN_GRAPH,
            )

    def _check_type_params(self, converted: list[Any]) -> None:
        """An explicit type parameter (`f[np.float16]`) is the element type
        of every tensor argument declared with it (E0504 otherwise), and the
        type its scalar arguments are converted to. A type parameter the call
        leaves to its arrays (`f(x, 2.5)` with `x: &Tensor<T, [?]>` an int32
        array) is the first such array's element type, and its scalar
        arguments must fit it too, as a kernel's do: 2.5 for an `i32` `T` is
        refused, not truncated (a conflict between arrays is the evaluator's
        E0504)."""
        from tilelang.runtime import host_ops as ops

        types = {k: v for k, v in self.explicit.items() if isinstance(v, DType)}
        type_params = {g.name.name for g in self.decl.generics if not g.is_const}
        scalar_types = dict(types)
        for p, v in zip(self.decl.params, converted, strict=True):
            inner = p.ty.inner if isinstance(p.ty, ast.RefType) else p.ty
            elem = inner.args[0] if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor" \
                and inner.args else None
            if isinstance(elem, ast.NamedType) and elem.name.name in type_params and isinstance(v, Tensor):
                scalar_types.setdefault(elem.name.name, v.dtype)
        if not scalar_types:
            return
        for i, (p, v) in enumerate(zip(self.decl.params, converted, strict=True)):
            inner = p.ty.inner if isinstance(p.ty, ast.RefType) else p.ty
            if not isinstance(inner, ast.NamedType):
                continue
            if inner.name.name in scalar_types:  # a scalar `a: T`: must fit `T`, as a kernel's does
                dt = scalar_types[inner.name.name]
                where = self.module._where(p.span, f"`{span_text(p.span, self.module._sources)}` is declared here")
                converted[i] = ops.to_scalar(scalar_value(f"argument `{p.name.name}` of function `{self.__name__}`",
                                                         v, dt, where=where), dt)
                continue
            elem = inner.args[0] if inner.name.name == "Tensor" and inner.args else None
            want = types.get(elem.name.name) if isinstance(elem, ast.NamedType) else None
            if want is not None and isinstance(v, Tensor) and v.dtype is not want:
                raise CallError(
                    f"`{elem.name.name}` of function `{self.__name__}` is `{want.value}` as given, but argument "
                    f"`{p.name.name}` holds `{v.dtype.value}`",
                    where=self.module._where(p.span, f"`{span_text(p.span, self.module._sources)}` is declared here"),
                    help=f"pass `{p.name.name}` as `{want.value}`, or give `{elem.name.name}` as `{v.dtype.value}`",
                    code=lcodes.GENERIC_CONFLICT)

    def _arg(
        self,
        name: str,
        ty: ast.TypeExpr,
        v: Any,
        where: str,
        dev: Any,
        writeback: list[tuple[np.ndarray, Tensor]],
        libraries: set[str],
    ) -> Any:
        """One argument as the host evaluator takes it: arrays copied into
        tensors (a `&mut` one copied back afterwards), tuples element by element."""
        mutable = isinstance(ty, ast.RefType) and ty.mutable
        inner = ty.inner if isinstance(ty, ast.RefType) else ty
        if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor":
            t = self._tensor(name, inner, v, where, dev, mutable)
            libraries.add(arrays.describe(v).library)
            if mutable:
                writeback.append((arrays.describe(v).host, t))  # type: ignore[arg-type]
            return t
        if isinstance(inner, ast.TupleType):
            if not isinstance(v, tuple) or len(v) != len(inner.elems):
                raise CallError(
                    f"argument `{name}` of function `{self.__name__}` must be a tuple of "
                    f"{len(inner.elems)}, not {_describe(v)}",
                    where=where,
                    help=f"pass a Python tuple of {len(inner.elems)} values",
                    code=MISMATCHED_TYPES,
                )
            return tuple(
                self._arg(f"{name}.{i}", t, x, where, dev, writeback, libraries)
                for i, (t, x) in enumerate(zip(inner.elems, v, strict=True))
            )
        dt = DType.parse(inner.name.name) if isinstance(inner, ast.NamedType) else None
        if dt is not None or not isinstance(v, (list, tuple, str)):
            checked = scalar_value(f"argument `{name}` of function `{self.__name__}`", v, dt, where=where)
            if dt is None and isinstance(v, np.generic) and isinstance(inner, ast.NamedType) \
                    and any(not g.is_const and g.name.name == inner.name.name for g in self.decl.generics):
                return v  # `a: T` given `np.float16(..)`: its NumPy type is what `T` is
            v = checked
        return v

    def _check_borrows(self, values: list[Any]) -> int:
        """The function reads its array arguments now (and writes its `&mut`
        ones): refused like a kernel call while a pending `.launch()` (or a
        call of a host function that another thread runs) writes one of them
        (E0309 for a `&mut` argument, E0305 for a read), or uses one that this
        call writes (E0305); one array passed as `&mut` and again (E0303) is
        refused as in Tile. The call is registered among the launches in
        flight until it returns (`_RunningCall`); its token."""
        from tilelang.api.errors import BorrowError
        from tilelang.diagnostics.codes import ownership as ocodes
        from tilelang.ownership.dynamic import Region

        m = self.module
        where = m._where(self.decl.name.span, f"`{self.signature}`")
        used: list[tuple[str, Region, str, bool]] = []  # (param, memory, space, written)
        for name, ty, v in self._array_args(values):
            try:
                ref = arrays.describe(v)
            except (Unsupported, NotAnArray):
                continue  # `_tensor` words the error
            mutable = isinstance(ty, ast.RefType) and ty.mutable
            if mutable and ref.host is not None and _elements_overlap(ref.host):
                # copied back element by element: the last copy would win
                raise BorrowError(
                    f"elements of argument `{name}` of function `{self.__name__}` share memory "
                    f"(a view of shape {list(ref.shape)} with strides {list(ref.byte_strides)} "
                    "in bytes), and it writes them: the results of different elements would "
                    "land on one",
                    code=ocodes.CONFLICTING_BORROWS_IN_LAUNCH,
                    where=where,
                    help=f"pass an array of distinct elements (`{name}.copy()`) and read the "
                    "results from it",
                )
            used.append((name, Region(*_extent(ref), name), ref.space, mutable))
        for j, (bn, b, bs, bw) in enumerate(used):
            for an, a, as_, aw in used[:j]:
                if as_ == bs and (aw or bw) and a.overlaps(b):
                    raise BorrowError(
                        f"arguments `{an}` and `{bn}` of function `{self.__name__}` share memory "
                        f"and it writes `{an if aw else bn}`",
                        code=ocodes.CONFLICTING_BORROWS_IN_LAUNCH,
                        where=where,
                        help="pass a copy for one of them",
                    )
        if not used:
            return 0  # no array: nothing to borrow
        me = _RunningCall(self.__name__, used)
        with _LOCK:
            # registered first, then checked (as a launch): of two calls made
            # at once by two threads, at least one sees the other
            token = next(_TOKENS)
            _PENDING[token] = me
            try:
                self._check_pending(token, used, where)
            except BaseException:
                _PENDING.pop(token, None)
                raise
        return token

    def _check_pending(self, token: int, used: list[Any], where: str) -> None:
        from tilelang.api.errors import BorrowError
        from tilelang.diagnostics.codes import ownership as ocodes

        if len(_PENDING) > 1:
            for key, op in list(_PENDING.items()):  # the fast launch registers without the lock
                if key == token:
                    continue
                space = op._plan.space
                for name, r, rs, write in used:
                    if rs != space:
                        continue
                    for old, old_write in op._regions:
                        if not (r.overlaps(old) and (write or old_write)):
                            continue
                        pending = f"{pending_what(op)} `{op.kernel.__name__}`"
                        code = ocodes.CONCURRENT_WRITES if write and old_write \
                            else ocodes.USE_WHILE_IN_FLIGHT
                        raise BorrowError(
                            f"argument `{name}` of function `{self.__name__}` "
                            f"{'writes' if write else 'reads'} memory that {pending} may still be "
                            f"{'writing' if old_write else 'reading'} (as `{old.name}`)",
                            code=code,
                            where=where,
                            help=pending_help(op),
                        )

    def _tensor(self, name: str, ty: ast.NamedType, value: Any, where: str, dev: Any, mutable: bool) -> Tensor:
        what = f"argument `{name}` of function `{self.__name__}`"
        try:
            ref = arrays.describe(value)
        except Unsupported as e:  # an array, but one this API cannot use (CPU bf16, ...)
            raise CallError(
                f"{what}: {e.why}", where=where, help=e.help.replace("`t.", f"`{name}."),
                code=acodes.UNUSABLE_ARRAY,
            ) from None
        except NotAnArray:
            want = DType.parse(ty.args[0].name.name) if ty.args and isinstance(ty.args[0], ast.NamedType) \
                else None
            raise CallError(
                f"{what} must be an array, not {a_type(value)}",
                where=where,
                help=_fix_not_an_array(value, name, tile_dtype_name(want) if want else "float32", mutable),
                code=acodes.NOT_AN_ARRAY,
            ) from None
        if ref.is_cuda or ref.host is None:
            raise CallError(
                f"{what} is {ref.describe()}, but host functions take host arrays",
                where=where,
                help=f"pass `{name}.cpu().numpy()` (host functions run on "
                "the module's engine and copy their arguments)",
                code=acodes.HOST_ARRAY_EXPECTED,
            )
        want = None
        if ty.args and isinstance(ty.args[0], ast.NamedType):
            want = DType.parse(ty.args[0].name.name)
        if want is not None and ref.dtype is not (DType.F32 if want is DType.BF16 else want):
            raise CallError(
                f"{what} must hold `{want.value}`, but it is {ref.describe()}",
                code=lcodes.DTYPE_MISMATCH,
                where=where,
                help=_fix_dtype(ref, name, DType.F32 if want is DType.BF16 else want, mutable),
            )
        if (
            len(ty.args) > 1
            and isinstance(ty.args[1], ast.ShapeType)
            and len(ty.args[1].dims) != len(ref.shape)
        ):
            rank = len(ty.args[1].dims)
            raise CallError(
                f"{what} must have {rank} dimension{'s' if rank != 1 else ''}, but it is "
                f"{ref.describe()}",
                code=lcodes.RANK_MISMATCH,
                where=where,
                help=_fix_rank(tuple(ref.shape), name, tuple(ty.args[1].dims), mutable, ref.host),
            )
        big = next((d for d in ref.shape if d >= 1 << 31), None)
        if big is not None:  # a Tile tensor's dimensions are `i32`
            raise CallError(
                f"{what} is {ref.describe()}: a dimension of {big} elements is more than the "
                f"{(1 << 31) - 1} a Tile tensor's dimension holds",
                where=where,
                help=f"split that dimension in two (`{name}.reshape(..)`), or pass the array in parts",
                code=acodes.UNUSABLE_ARRAY,
            )
        if mutable and ref.readonly:  # copied back after the call: refuse before running anything
            message, fix = arrays.read_only_text(ref, what, name, _WRITES)
            raise CallError(
                message,
                where=where,
                help=fix,
                code=acodes.READ_ONLY_ARRAY,
            )
        if mutable and arrays.grad_leaf(ref):  # PyTorch refuses an in-place write to it
            message, fix = arrays.grad_leaf_text(what, name, _WRITES, ref.obj)
            raise CallError(message, where=where, help=fix, code=acodes.READ_ONLY_ARRAY)
        if mutable and ref.copied:  # copied back into the export's copy: lost
            message, fix = arrays.copied_text(ref, what, name, _WRITES, True)
            raise CallError(message, where=where,
                            help=fix, code=acodes.UNUSABLE_ARRAY)
        dt = want or ref.dtype
        if dt is None:
            raise CallError(
                f"{what} is {ref.describe()}, an element type Tile does not have", where=where,
                code=lcodes.DTYPE_MISMATCH,
                help=arrays.foreign_dtype_help(ref, name),
            )
        return Tensor.from_numpy(np.array(ref.host, copy=True), dt, dev)


class _RunningCall:
    """A host function's call while it runs, among the launches in flight
    (`engines._PENDING`), as an operation looks to their checks: its
    arguments' memory (`_regions`; `_ptrs` and `_plan.arrays` for the
    interval tests of `Operation._check_in_flight`), `&mut` ones written."""

    pending_what = "a running call of host function"
    pending_help = (
        "let the call return first (another thread runs it): its arguments are borrowed "
        "until then, as a launch's until its wait"
    )

    def __init__(self, name: str, used: list[tuple[str, Any, str, bool]]) -> None:
        self.kernel = _Named(name)
        self._regions = [(r, w) for _, r, _, w in used]
        self._ptrs = [r.start for _, r, _, _ in used]
        self._plan = _CallPlan("cpu", tuple(_Slot(r.nbytes, w) for _, r, _, w in used))


@frozen
class _Slot:
    nbytes: int
    mutable: bool


@frozen
class _Named:
    __name__: str


@frozen
class _CallPlan:
    space: str
    arrays: tuple[Any, ...]


def pending_what(op: Any) -> str:
    """How an entry of `engines._PENDING` is named in an error."""
    return getattr(op, "pending_what", "a pending launch of")


def pending_help(op: Any) -> str:
    return getattr(op, "pending_help", "call `.wait()` on the pending launch's handle first")


def _extent(ref: arrays.ArrayRef) -> tuple[int, int]:
    """(lowest address, bytes) of the memory `ref`'s elements lie in: a
    host function takes any strides (it copies), and a reversed or strided
    view reaches below its address or past its element count."""
    if ref.host is None or ref.contiguous or not ref.nbytes:
        return ref.ptr, ref.nbytes
    a = ref.host
    lo = sum((d - 1) * s for d, s in zip(a.shape, a.strides, strict=True) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(a.shape, a.strides, strict=True) if s > 0)
    return ref.ptr + lo, hi - lo + a.itemsize


def _elements_overlap(a: np.ndarray) -> bool:
    """Whether two elements of `a` may be one memory (a stride of 0 from
    `broadcast_to`/`as_strided`, rows `as_strided` over each other): the
    steps, smallest first, must each pass the block of the smaller ones
    (sufficient; a layout of interleaved steps that passes no such test is
    taken as overlapping)."""
    if a.flags.c_contiguous or a.flags.f_contiguous or a.size <= 1:
        return False
    span = a.itemsize
    for d, s in sorted(((d, abs(s)) for d, s in zip(a.shape, a.strides, strict=True) if d > 1),
                       key=lambda ds: ds[1]):
        if s < span:
            return True
        span = s * (d - 1) + span
    return False


def _bump_torch_versions(args: list[tuple[str, ast.TypeExpr, Any]]) -> None:
    """The function wrote its `&mut` PyTorch tensors through NumPy views,
    behind autograd's back: their version counters are bumped, so a backward
    pass that needs the old values fails as after PyTorch's own in-place ops
    (a kernel call's launch does the same, `Operation._bump_torch_versions`)."""
    written = tuple(
        v for _, ty, v in args
        if isinstance(ty, ast.RefType) and ty.mutable and type(v).__module__.startswith("torch")
    )
    bump = torch_version_bump(sys.modules.get("torch") if written else None)
    if bump is not None:
        try:  # autograd bookkeeping must never fail a call that ran
            bump(written)
        except Exception:
            pass


def _tensor_args(args: list[tuple[str, ast.TypeExpr, Any]]) -> list[tuple[str, ast.TypeExpr, Any]]:
    """The tensor arguments among `(name, type, value)`, inside tuples too
    (named `p.0`, `p.1.0`, ...), with the type each is passed as."""
    out: list[tuple[str, ast.TypeExpr, Any]] = []
    for name, ty, v in args:
        inner = ty.inner if isinstance(ty, ast.RefType) else ty
        if isinstance(inner, ast.NamedType) and inner.name.name == "Tensor":
            out.append((name, ty, v))
        elif isinstance(inner, ast.TupleType) and isinstance(v, tuple):
            out += _tensor_args(
                [(f"{name}.{i}", t, x) for i, (t, x) in enumerate(zip(inner.elems, v, strict=False))]
            )
    return out


def _written_kind(ty: ast.TypeExpr) -> Any:
    """How a parameter of type `ty` is written, for `temporaries.find_unheld`:
    "written" (a `&mut` tensor), a tuple of the paths to its `&mut` tensors
    (a tuple parameter holding some), or None."""
    if isinstance(ty, ast.RefType) and ty.mutable and isinstance(ty.inner, ast.NamedType) \
            and ty.inner.name.name == "Tensor":
        return "written"
    if isinstance(ty, ast.TupleType):
        paths: list[tuple[int, ...]] = []
        for i, t in enumerate(ty.elems):
            inner = _written_kind(t)
            if inner == "written":
                paths.append((i,))
            elif isinstance(inner, tuple):
                paths += [(i, *q) for q in inner]
        return tuple(paths) or None
    return None


def _type_arg(v: Any) -> DType | None:
    """A Tile element type from a type name ("f16"), a DType or a NumPy dtype."""
    if isinstance(v, DType):
        return v
    if isinstance(v, str):
        return DType.parse(v)
    if isinstance(v, (type, np.dtype)):
        try:
            from tilelang.runtime.tensor import dtype_of_array

            return dtype_of_array(np.empty(0, v))
        except TypeError:
            return None
    return None


def _describe(v: Any) -> str:
    return f"a tuple of {len(v)}" if isinstance(v, tuple) else f"a `{type(v).__name__}`"


def _from_value(v: Any, library: str = "numpy") -> Any:
    if isinstance(v, Tensor):
        return _to_library(np.array(v.numpy(), copy=True), library)
    if isinstance(v, tuple):
        return None if v == () else tuple(_from_value(x, library) for x in v)
    if isinstance(v, np.generic):
        return v
    return v


def _to_library(a: np.ndarray, library: str) -> Any:
    """A new host array of `library` holding `a` (no copy where it can view it)."""
    if library == "numpy":
        return a
    mod = sys.modules.get(library)
    if library == "torch" and mod is not None:
        return mod.from_numpy(a)
    if library in ("jax", "jaxlib"):
        jnp = sys.modules.get("jax.numpy")
        if jnp is not None:
            return jnp.asarray(a)
    from_dlpack = getattr(mod, "from_dlpack", None)
    if from_dlpack is not None:
        try:
            return from_dlpack(a)
        except Exception:  # a library that cannot take host memory: NumPy it is
            return a
    return a
