"""A small builder for Tile IR: allocates fresh `Value`s and collects ops into
regions, so tests and the lowering can write IR without counting ids.

    b = Builder("add")
    z = b.tensor_param("z", DType.F32, rank=1, mutable=True, tile_shape=(1024,))
    x = b.tensor_param("x", DType.F32, rank=1)
    off = b.mul(b.block_id(0), b.const(1024, DType.I32))
    t = b.load("x", (off,), (1024,))
    b.store("z", (off,), t)
    kernel = b.finish()

Control flow uses context managers; the region's `Yield` is written by the
caller (`b.yield_(...)`), and results exist as soon as the op is opened:

    with b.for_(lo, hi, step, inits=(acc,)) as loop:
        iv, acc_in = loop.args
        b.yield_(b.add(acc_in, one))
    (acc_out,) = loop.results

The builder does light shape inference and raises `ValueError` for misuse (a
bug in the caller, not a user error); the verifier is the real check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from enum import Enum

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir
from tilelang.source import DUMMY_SPAN, Span


@dataclass(slots=True)
class Frame:
    args: tuple[ir.Value, ...]
    ops: list[ir.Op] = field(default_factory=list)
    pure: dict[tuple[object, ...], ir.Value] = field(default_factory=dict)  # CSE table

    def region(self) -> ir.Region:
        return ir.Region(self.args, tuple(self.ops))


@dataclass(slots=True)
class LoopHandle:
    """What `for_`/`while_` hand back: the region args and the op's results."""

    args: tuple[ir.Value, ...]
    results: tuple[ir.Value, ...]


@dataclass(slots=True)
class IfHandle:
    results: tuple[ir.Value, ...]
    _then: Frame | None = None
    _else: Frame | None = None


class Builder:
    def __init__(self, name: str = "kernel", *, span: Span = DUMMY_SPAN,
                 cse: bool = False) -> None:
        self.name = name
        # Common-subexpression elimination of pure ops: reuse an identical op
        # (same opcode, operands, attributes and result type) already defined
        # in this region or an enclosing one - it dominates every later op
        # there - instead of emitting another. Loads are not pure (a store may
        # come between). The lowering turns it on; hand-built IR keeps exactly
        # the ops it asked for.
        self.cse = cse
        self.span = span
        self.params: list[ir.Param] = []
        self._next_id = 0
        self._frames: list[Frame] = [Frame(())]
        # The CSE entries of every open frame in one table (a key is in at most
        # one open frame), and where each cached value came from: a lookup or a
        # rename is one probe, not one per enclosing region (quadratic when
        # regions nest hundreds deep).
        self._cse: dict[tuple[object, ...], ir.Value] = {}
        self._cse_home: dict[int, tuple[Frame, tuple[object, ...]]] = {}  # value id -> entry
        self.cur_span = span  # the span given to ops built without an explicit one
        # what defines each value, and each `for` variable's (lower, upper): read by
        # `ir/lower/ranges.int_range` (the bounds of an index)
        self.defs: dict[int, ir.Op] = {}
        self.loops: dict[int, tuple[ir.Value, ir.Value]] = {}

    # ---------------------------------------------------------------- basics
    def fresh(self, ty: ir.Type, hint: str = "") -> ir.Value:
        v = ir.Value(self._next_id, ty, hint)
        self._next_id += 1
        return v

    def emit(self, op: ir.Op) -> ir.Op:
        self._frames[-1].ops.append(op)
        r = getattr(op, "result", None)
        if r is not None:
            self.defs[r.id] = op
        elif isinstance(op, ir.If):
            for k in op.results:
                self.defs[k.id] = op
        return op

    def _sp(self, span: Span | None) -> Span:
        return self.cur_span if span is None else span

    def _pure(self, op: ir.Op, key: tuple[object, ...] | None = None) -> ir.Value:
        r: ir.Value = op.result  # type: ignore[union-attr]
        if not self.cse:
            self.emit(op)
            return r
        key = key or _op_key(op)
        hit = self._cse.get(key)
        if hit is not None:
            return hit
        self.emit(op)
        frame = self._frames[-1]
        frame.pure[key] = self._cse[key] = r
        self._cse_home[r.id] = (frame, key)
        return r

    def _push(self, frame: Frame) -> None:
        self._frames.append(frame)
        for key, v in frame.pure.items():  # a reopened frame brings its entries back
            self._cse.setdefault(key, v)

    def _pop(self) -> Frame:
        frame = self._frames.pop()
        for key, v in frame.pure.items():
            if self._cse.get(key) is v:
                del self._cse[key]
        return frame

    def name_last(self, v: ir.Value, hint: str) -> ir.Value:
        """Give `v` a source name for printing (replacing a default hint such as
        `pid`), when the op that defines it is the last one emitted (so nothing
        refers to it yet); else return `v` unchanged."""
        ops = self._frames[-1].ops
        if not ops or ir.op_results(ops[-1]) != (v,) or not hasattr(ops[-1], "result"):
            return v
        named = ir.Value(v.id, v.type, hint)
        ops[-1] = dataclasses.replace(ops[-1], result=named)  # type: ignore[arg-type]
        home = self._cse_home.get(v.id)  # the CSE table hands out the named value
        if home is not None:
            frame, key = home
            if frame.pure.get(key) is not None and frame.pure[key].id == v.id:
                frame.pure[key] = named
                if key in self._cse and self._cse[key].id == v.id:
                    self._cse[key] = named
        return named

    @property
    def in_nested_region(self) -> bool:
        return len(self._frames) > 1

    # ---------------------------------------------------------------- params
    def tensor_param(
        self,
        name: str,
        dtype: DType,
        rank: int,
        *,
        mutable: bool = False,
        tile_shape: Sequence[int] | None = None,
        dims: Sequence[int | None] | None = None,
        span: Span = DUMMY_SPAN,
    ) -> ir.TensorParam:
        p = ir.TensorParam(
            name,
            dtype,
            rank,
            mutable,
            tuple(tile_shape) if tile_shape is not None else None,
            tuple(dims) if dims is not None else (None,) * rank,
            span,
        )
        self.params.append(p)
        return p

    def scalar_param(self, name: str, dtype: DType, *, span: Span = DUMMY_SPAN) -> ir.Value:
        v = self.fresh(ir.Type(dtype), name)
        self.params.append(ir.ScalarParam(name, v, span))
        return v

    def finish(
        self,
        *,
        grid_rank: int | None = None,
        num_warps: int = 4,
        num_stages: int = 2,
        instantiation: Sequence[tuple[str, int]] = (),
        hints: Sequence[str] = (),
        min_blocks: int = 0,
        pdl_early: bool = False,
        max_blocks: int = 0,
        prefetch_lines: bool = False,
        cluster: Sequence[int] = (),
        walk: int = -1,
        evict_first: bool = False,
        pdl_last: bool = False,
        pdl_exit: bool = False,
        fast_math: bool = False,
        arrive_wait: bool = False,
        type_args: Sequence[tuple[str, str]] = (),
    ) -> ir.Kernel:
        if len(self._frames) != 1:
            raise ValueError("finish() inside an open region")
        frame = self._frames[0]
        if not frame.ops or not isinstance(frame.ops[-1], ir.Yield):
            frame.ops.append(ir.Yield((), self.span))
        if grid_rank is None:
            ranks = [p.rank for p in self.params if isinstance(p, ir.TensorParam) and p.mutable]
            grid_rank = max(1, min(3, max(ranks, default=1)))
        return ir.Kernel(
            self.name,
            tuple(self.params),
            frame.region(),
            grid_rank,
            num_warps,
            num_stages,
            tuple(sorted(instantiation)),
            self.span,
            tuple(sorted(hints)),
            max(0, min_blocks),
            bool(pdl_early),
            max(0, max_blocks),
            bool(prefetch_lines),
            tuple(cluster),
            walk,
            bool(evict_first),
            bool(pdl_last),
            bool(pdl_exit),
            bool(fast_math),
            bool(arrive_wait),
            tuple(sorted(type_args)),
        )

    def tensor(self, name: str) -> ir.TensorParam:
        for p in self.params:
            if isinstance(p, ir.TensorParam) and p.name == name:
                return p
        raise ValueError(f"no tensor parameter `{name}`")

    # ---------------------------------------------------------------- leaves
    def const(
        self,
        value: bool | int | float,
        dtype: DType,
        shape: Sequence[int] = (),
        *,
        span: Span | None = None,
        hint: str = "",
    ) -> ir.Value:
        r = self.fresh(ir.Type(dtype, tuple(shape)), hint)
        op = ir.Const(r, value, self._sp(span))
        if hint:  # a named constant is its own value
            self.emit(op)
            return r
        return self._pure(op, ("Const", type(value).__name__, repr(value), r.type))

    def block_id(self, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.I32), "pid")
        return self._pure(ir.BlockId(r, axis, self._sp(span)))

    def num_blocks(self, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.I32), "nblocks")
        return self._pure(ir.NumBlocks(r, axis, self._sp(span)))

    def last_block(self, group: ir.Value, size: ir.Value, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.BOOL), "last")
        self.emit(ir.LastBlock(r, group, size, axis, self._sp(span)))
        return r

    def cluster_gather(self, x: ir.Value, blocks: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(x.dtype, (blocks, *x.shape)), "parts")
        self.emit(ir.ClusterGather(r, x, self._sp(span)))
        return r

    def queue_pull(self, group: ir.Value, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.I32), "ticket")
        self.emit(ir.QueuePull(r, group, axis, self._sp(span)))
        return r

    def queue_take(self, ticket: ir.Value, group: ir.Value, size: ir.Value, workers: ir.Value, axis: int, *,
                   span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.I32), "tile")
        self.emit(ir.QueueTake(r, ticket, group, size, workers, axis, self._sp(span)))
        return r

    def tensor_dim(self, tensor: str, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(DType.I32), f"{tensor}_dim{axis}")
        return self._pure(ir.TensorDim(r, tensor, axis, self._sp(span)))

    def arange(self, n: int, dtype: DType = DType.I32, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(ir.Type(dtype, (n,)))
        return self._pure(ir.Arange(r, self._sp(span)))

    # ---------------------------------------------------------------- memory
    def load(
        self,
        tensor: str,
        offsets: Sequence[ir.Value],
        shape: Sequence[int],
        *,
        mask: ir.Value | None = None,
        padding: ir.Value | None = None,
        span: Span | None = None,
        hint: str = "",
    ) -> ir.Value:
        p = self.tensor(tensor)
        r = self.fresh(ir.Type(p.dtype, tuple(shape)), hint)
        self.emit(ir.Load(r, tensor, tuple(offsets), mask, padding, self._sp(span)))
        return r

    def prefetch(self, tensor: str, offsets: Sequence[ir.Value], shape: Sequence[int], *,
                 span: Span | None = None) -> None:
        self.emit(ir.Prefetch(tensor, tuple(offsets), tuple(shape), self._sp(span)))

    def store(
        self,
        tensor: str,
        offsets: Sequence[ir.Value],
        value: ir.Value,
        *,
        mask: ir.Value | None = None,
        span: Span | None = None,
        unchecked: bool = False,
    ) -> None:
        self.emit(ir.Store(tensor, tuple(offsets), value, mask, self._sp(span), unchecked))

    def atomic(
        self,
        op: ir.AtomicOp,
        tensor: str,
        indices: Sequence[ir.Value],
        value: ir.Value,
        *,
        mask: ir.Value | None = None,
        span: Span | None = None,
    ) -> None:
        self.emit(ir.AtomicRMW(op, tensor, tuple(indices), value, mask, self._sp(span)))

    # ---------------------------------------------------------------- compute
    def elementwise(
        self, op: ir.ElemOp, *xs: ir.Value, span: Span | None = None, hint: str = ""
    ) -> ir.Value:
        if len(xs) != op.arity:
            raise ValueError(f"`{op.value}` takes {op.arity} operands, got {len(xs)}")
        shape = xs[-1].shape
        if op.is_comparison:
            dtype = DType.BOOL
        elif op is ir.ElemOp.WHERE:
            dtype = xs[1].dtype
        else:
            dtype = xs[0].dtype
        r = self.fresh(ir.Type(dtype, shape), hint)
        return self._pure(ir.Elementwise(r, op, tuple(xs), self._sp(span)))

    def cast(self, x: ir.Value, dtype: DType, *, span: Span | None = None, bits: bool = False) -> ir.Value:
        r = self.fresh(x.type.with_dtype(dtype))
        return self._pure(ir.Cast(r, x, self._sp(span), bits))

    def reduce(
        self, op: ir.ReduceOp, x: ir.Value, axis: int, *, span: Span | None = None
    ) -> ir.Value:
        shape = x.shape[:axis] + x.shape[axis + 1 :]
        dtype = DType.I32 if op in (ir.ReduceOp.ARGMAX, ir.ReduceOp.ARGMIN) else x.dtype
        r = self.fresh(ir.Type(dtype, shape))
        return self._pure(ir.Reduce(r, op, x, axis, self._sp(span)))

    def scan(self, op: ir.ScanOp, x: ir.Value, axis: int, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(x.type)
        return self._pure(ir.Scan(r, op, x, axis, self._sp(span)))

    def broadcast(self, x: ir.Value, shape: Sequence[int], *, span: Span | None = None) -> ir.Value:
        if tuple(shape) == x.shape:
            return x
        r = self.fresh(x.type.with_shape(tuple(shape)))
        return self._pure(ir.Broadcast(r, x, self._sp(span)))

    def reshape(self, x: ir.Value, shape: Sequence[int], *, span: Span | None = None) -> ir.Value:
        if tuple(shape) == x.shape:
            return x
        r = self.fresh(x.type.with_shape(tuple(shape)))
        return self._pure(ir.Reshape(r, x, self._sp(span)))

    def permute(self, x: ir.Value, perm: Sequence[int], *, span: Span | None = None) -> ir.Value:
        perm = tuple(perm)
        r = self.fresh(x.type.with_shape(tuple(x.shape[i] for i in perm)))
        return self._pure(ir.Permute(r, x, perm, self._sp(span)))

    def transpose(self, x: ir.Value, *, span: Span | None = None) -> ir.Value:
        return self.permute(x, (1, 0), span=span)

    def mma(self, a: ir.Value, b: ir.Value, acc: ir.Value, *, span: Span | None = None) -> ir.Value:
        r = self.fresh(acc.type)
        return self._pure(ir.Mma(r, a, b, acc, self._sp(span)))

    # element-wise shorthands (operands must already agree in shape and dtype)
    def add(self, a: ir.Value, b: ir.Value, **kw) -> ir.Value:  # type: ignore[no-untyped-def]
        return self.elementwise(ir.ElemOp.ADD, a, b, **kw)

    def sub(self, a: ir.Value, b: ir.Value, **kw) -> ir.Value:  # type: ignore[no-untyped-def]
        return self.elementwise(ir.ElemOp.SUB, a, b, **kw)

    def mul(self, a: ir.Value, b: ir.Value, **kw) -> ir.Value:  # type: ignore[no-untyped-def]
        return self.elementwise(ir.ElemOp.MUL, a, b, **kw)

    def div(self, a: ir.Value, b: ir.Value, **kw) -> ir.Value:  # type: ignore[no-untyped-def]
        return self.elementwise(ir.ElemOp.DIV, a, b, **kw)

    def lt(self, a: ir.Value, b: ir.Value, **kw) -> ir.Value:  # type: ignore[no-untyped-def]
        return self.elementwise(ir.ElemOp.LT, a, b, **kw)

    # ---------------------------------------------------------------- side effects
    def print_(self, *parts: str | ir.Value, span: Span | None = None, order: tuple[ir.Value, ...] = (),
               axis: int = -1) -> None:
        self.emit(ir.Print(tuple(parts), self._sp(span), order, axis))

    def assert_(self, cond: ir.Value, message: str, *, span: Span | None = None,
                order: tuple[ir.Value, ...] = (), axis: int = -1, region: str = "") -> None:
        self.emit(ir.Assert(cond, message, self._sp(span), order, axis, region))

    def yield_(self, *values: ir.Value, span: Span | None = None) -> None:
        self.emit(ir.Yield(tuple(values), self._sp(span)))

    # ---------------------------------------------------------------- control flow
    @contextmanager
    def for_(
        self,
        lower: ir.Value,
        upper: ir.Value,
        step: ir.Value,
        inits: Sequence[ir.Value] = (),
        *,
        span: Span | None = None,
        iv_hint: str = "i",
    ) -> Iterator[LoopHandle]:
        sp = self._sp(span)
        iv = self.fresh(lower.type, iv_hint)
        self.loops[iv.id] = (lower, upper)
        carried = tuple(self.fresh(v.type, v.hint) for v in inits)
        results = tuple(self.fresh(v.type, v.hint) for v in inits)
        frame = Frame((iv, *carried))
        self._push(frame)
        try:
            yield LoopHandle((iv, *carried), results)
        finally:
            self._pop()
        self.emit(ir.For(results, lower, upper, step, tuple(inits), frame.region(), sp))

    @contextmanager
    def while_(
        self, inits: Sequence[ir.Value], *, span: Span | None = None
    ) -> Iterator[_WhileBuilder]:
        sp = self._sp(span)
        wb = _WhileBuilder(self, tuple(inits))
        yield wb
        if wb.cond_region is None or wb.body_region is None:
            raise ValueError("while_ needs both .cond() and .body() regions")
        self.emit(ir.While(wb.results, tuple(inits), wb.cond_region, wb.body_region, sp))

    @contextmanager
    def if_(
        self,
        cond: ir.Value,
        result_types: Sequence[ir.Type] = (),
        *,
        span: Span | None = None,
        hints: Sequence[str] = (),
    ) -> Iterator[_IfBuilder]:
        sp = self._sp(span)
        hs = list(hints) + [""] * (len(result_types) - len(hints))
        ib = _IfBuilder(
            self, tuple(self.fresh(t, h) for t, h in zip(result_types, hs, strict=False))
        )
        yield ib
        then = ib.then_region or ir.Region((), (ir.Yield((), sp),))
        else_ = ib.else_region or ir.Region((), (ir.Yield((), sp),))
        self.emit(ir.If(ib.results, cond, then, else_, sp))

    # ---------------------------------------------------------------- raw regions
    def open_region(self, args: Sequence[ir.Value] = ()) -> Frame:
        """Start collecting ops into a new region; `close_region` ends it. A closed
        frame can be `reopen`ed to append more ops (e.g. conversions before its
        `Yield` once the types of both branches of an `if` are known)."""
        frame = Frame(tuple(args))
        self._push(frame)
        return frame

    def reopen(self, frame: Frame) -> None:
        self._push(frame)

    def close_region(self, frame: Frame) -> ir.Region:
        if self._frames[-1] is not frame:
            raise ValueError("regions closed out of order")
        self._pop()
        return frame.region()

    @contextmanager
    def _region(self, args: tuple[ir.Value, ...]) -> Iterator[Frame]:
        frame = Frame(args)
        self._push(frame)
        try:
            yield frame
        finally:
            self._pop()


class _IfBuilder:
    def __init__(self, b: Builder, results: tuple[ir.Value, ...]) -> None:
        self._b = b
        self.results = results
        self.then_region: ir.Region | None = None
        self.else_region: ir.Region | None = None

    @contextmanager
    def then_(self) -> Iterator[None]:
        with self._b._region(()) as frame:
            yield
        self.then_region = frame.region()

    @contextmanager
    def else_(self) -> Iterator[None]:
        with self._b._region(()) as frame:
            yield
        self.else_region = frame.region()


class _WhileBuilder:
    def __init__(self, b: Builder, inits: tuple[ir.Value, ...]) -> None:
        self._b = b
        self.results = tuple(b.fresh(v.type, v.hint) for v in inits)
        self._inits = inits
        self.cond_region: ir.Region | None = None
        self.body_region: ir.Region | None = None

    def cond(self) -> AbstractContextManager[tuple[ir.Value, ...]]:
        return self._carried("cond_region")

    def body(self) -> AbstractContextManager[tuple[ir.Value, ...]]:
        return self._carried("body_region")

    @contextmanager
    def _carried(self, region: str) -> Iterator[tuple[ir.Value, ...]]:
        """A region whose arguments are the loop-carried values, kept in `region`."""
        args = tuple(self._b.fresh(v.type, v.hint) for v in self._inits)
        with self._b._region(args) as frame:
            yield args
        setattr(self, region, frame.region())


def _op_key(op: ir.Op) -> tuple[object, ...]:
    """What makes two pure ops the same computation: opcode, result type,
    operands (by value id) and attributes; never the span."""

    def norm(x: object) -> object:
        if isinstance(x, ir.Value):
            return ("%", x.id)
        if isinstance(x, tuple):
            return tuple(norm(e) for e in x)
        if isinstance(x, Enum):
            return x.value
        return x

    fields = [f.name for f in dataclasses.fields(op) if f.name not in ("result", "span")]
    r = op.result  # type: ignore[union-attr]
    return (type(op).__name__, r.type, *(norm(getattr(op, f)) for f in fields))
