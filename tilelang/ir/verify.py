"""The IR verifier: is a `Kernel` well formed by the rules of `nodes.py`?

Checks types and shapes of every op, def-before-use with region scoping,
single assignment (one definition per value id, kernel-wide), region structure
(each region ends with exactly one `Yield`, typed as its parent op requires)
and the parameters. It never raises on ill-formed IR: `check_kernel` returns a
list of problems. `verify_kernel` raises `ICE` when there is any, since an
ill-formed IR is always a compiler bug, never the user's fault.

The lowering runs `verify_kernel` on every kernel it produces; so do the tests.
"""

from __future__ import annotations

from typing import assert_never

from tilelang.diagnostics.model import ICE
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

_LOGICAL = (ir.ElemOp.AND, ir.ElemOp.OR, ir.ElemOp.XOR, ir.ElemOp.NOT)


def verify_kernel(kernel: ir.Kernel) -> None:
    """Raise `ICE` (with the problems and the printed kernel) if ill-formed."""
    problems = check_kernel(kernel)
    if problems:
        from tilelang.ir.printer import print_kernel

        raise ICE(
            f"ill-formed IR for kernel `{kernel.name}`:\n  "
            + "\n  ".join(problems)
            + "\n"
            + print_kernel(kernel)
        )


def check_kernel(kernel: ir.Kernel) -> list[str]:
    return _Verifier(kernel).run()


def broadcast_ok(src: tuple[int, ...], dst: tuple[int, ...]) -> bool:
    """NumPy rules: `src` broadcasts to exactly `dst`."""
    if len(src) > len(dst):
        return False
    return all(not (s != d and s != 1) for s, d in zip(reversed(src), reversed(dst), strict=False))


class _Verifier:
    def __init__(self, kernel: ir.Kernel) -> None:
        self.k = kernel
        self.problems: list[str] = []
        self.defined: dict[int, ir.Type] = {}
        self.tensors: dict[str, ir.TensorParam] = {}

    def err(self, where: str, msg: str) -> None:
        self.problems.append(f"{where}: {msg}")

    # ------------------------------------------------------------------ driver
    def run(self) -> list[str]:
        k = self.k
        if not 1 <= k.grid_rank <= 3:
            self.err("kernel", f"grid_rank {k.grid_rank} not in 1..3")
        scope: set[int] = set()
        names: set[str] = set()
        for p in k.params:
            match p:
                case ir.TensorParam():
                    if p.name in names:
                        self.err("params", f"duplicate parameter `{p.name}`")
                    names.add(p.name)
                    self.tensors[p.name] = p
                    if len(p.dims) != p.rank:
                        self.err(p.name, f"dims {p.dims} do not have rank {p.rank}")
                    if p.mutable:
                        if p.tile_shape is None or len(p.tile_shape) != p.rank:
                            self.err(p.name, f"&mut tensor needs a tile_shape of rank {p.rank}")
                        elif any(d <= 0 for d in p.tile_shape):
                            self.err(p.name, f"tile_shape {p.tile_shape} has a dim <= 0")
                    elif p.tile_shape is not None:
                        self.err(p.name, "a & tensor has no tile_shape")
                case ir.ScalarParam():
                    if p.name in names:
                        self.err("params", f"duplicate parameter `{p.name}`")
                    names.add(p.name)
                    if not p.value.type.is_scalar:
                        self.err(p.name, "a scalar parameter must have shape ()")
                    self.define(p.value, scope, f"param {p.name}")
                case _:
                    assert_never(p)
        self.region(k.body, scope, (), "kernel body")
        return self.problems

    def define(self, v: ir.Value, scope: set[int], where: str) -> None:
        if v.id in self.defined:
            self.err(where, f"value %{v.id} defined twice (single assignment)")
        if any(d <= 0 for d in v.shape):
            self.err(where, f"value %{v.id} has a dim <= 0: {v.type}")
        self.defined[v.id] = v.type
        scope.add(v.id)

    def use(self, v: ir.Value | None, scope: set[int], where: str) -> None:
        if v is None:
            return
        if v.id not in scope:
            self.err(where, f"%{v.id} used before its definition or outside its region")
        elif self.defined.get(v.id) != v.type:
            self.err(where, f"%{v.id} used as {v.type} but defined as {self.defined.get(v.id)}")

    def region(
        self,
        region: ir.Region,
        outer: set[int],
        yield_types: tuple[ir.Type, ...] | None,
        where: str,
    ) -> None:
        """Check `region` in a copy of `outer`; it must end with a Yield of `yield_types`
        (None: checked by the caller, e.g. a while's cond)."""
        scope = set(outer)
        for a in region.args:
            self.define(a, scope, f"{where} args")
        if not region.ops or not isinstance(region.ops[-1], ir.Yield):
            self.err(where, "region does not end with `yield`")
        for i, op in enumerate(region.ops):
            if isinstance(op, ir.Yield) and i != len(region.ops) - 1:
                self.err(where, "`yield` before the end of a region")
            self.op(op, scope)
        if region.ops and isinstance(region.ops[-1], ir.Yield) and yield_types is not None:
            got = tuple(v.type for v in region.ops[-1].values)
            if got != yield_types:
                self.err(
                    where,
                    f"yields ({', '.join(map(str, got))}) but its op expects "
                    f"({', '.join(map(str, yield_types))})",
                )

    # ------------------------------------------------------------------ ops
    def tensor(self, name: str, where: str) -> ir.TensorParam | None:
        t = self.tensors.get(name)
        if t is None:
            self.err(where, f"no tensor parameter `{name}`")
        return t

    def scalar_int(self, v: ir.Value, where: str, what: str) -> None:
        if not (v.type.is_scalar and v.dtype.is_int):
            self.err(where, f"{what} must be an integer scalar, got {v.type}")

    def mask(self, m: ir.Value | None, shape: tuple[int, ...], where: str) -> None:
        if m is not None and m.type != ir.Type(DType.BOOL, shape):
            self.err(where, f"mask must be bool{list(shape)}, got {m.type}")

    def op(self, op: ir.Op, scope: set[int]) -> None:
        where = type(op).__name__.lower()
        for v in ir.op_operands(op):
            self.use(v, scope, where)
        match op:
            case ir.Const(result=r, value=cv):
                ok = (
                    isinstance(cv, bool)
                    if r.dtype is DType.BOOL
                    else isinstance(cv, int) and not isinstance(cv, bool)
                    if r.dtype.is_int
                    else isinstance(cv, (int, float)) and not isinstance(cv, bool)
                )
                if not ok:
                    self.err(where, f"constant {cv!r} does not fit dtype {r.dtype.value}")
            case ir.BlockId(result=r, axis=a) | ir.NumBlocks(result=r, axis=a):
                if r.type != ir.Type(DType.I32):
                    self.err(where, f"result must be i32, got {r.type}")
                if not 0 <= a < self.k.grid_rank:
                    self.err(where, f"axis {a} outside the grid's {self.k.grid_rank} axes")
            case ir.LastBlock(result=r, group=g, size=sz, axis=a):
                if r.type != ir.Type(DType.BOOL) or g.type != ir.Type(DType.I32) or sz.type != ir.Type(DType.I32):
                    self.err(where, "last_block takes i32 scalars and gives a bool")
                if not 0 <= a < 3:
                    self.err(where, f"axis {a} outside the grid's axes")
            case ir.ClusterGather(result=r, x=x):
                c = self.k.cluster_blocks
                if not self.k.cluster:
                    self.err(where, "cluster_gather in a kernel without a cluster shape")
                if r.dtype != x.dtype or r.shape != (c, *x.shape):
                    self.err(where, f"cluster_gather of {x.type} gives {r.type}, not [{c}, ..] of it")
            case ir.QueuePull(result=r, group=g, axis=a):
                if r.type != ir.Type(DType.I32) or g.type != ir.Type(DType.I32):
                    self.err(where, "queue_pull takes an i32 scalar and gives one")
                if not 0 <= a < 3:
                    self.err(where, f"axis {a} outside the grid's axes")
            case ir.QueueTake(result=r, ticket=t, group=g, size=sz, workers=w, axis=a):
                if any(x.type != ir.Type(DType.I32) for x in (r, t, g, sz, w)):
                    self.err(where, "queue_take takes i32 scalars and gives one")
                if not 0 <= a < 3:
                    self.err(where, f"axis {a} outside the grid's axes")
            case ir.TensorDim(result=r, tensor=t, axis=a):
                p = self.tensor(t, where)
                if p is not None and not 0 <= a < p.rank:
                    self.err(where, f"axis {a} outside `{t}`'s rank {p.rank}")
                if r.type != ir.Type(DType.I32):
                    self.err(where, f"result must be i32, got {r.type}")
            case ir.Arange(result=r):
                if r.type.rank != 1 or r.dtype is DType.BOOL:
                    self.err(where, f"arange gives a rank-1 numeric tile, got {r.type}")
            case ir.Load(result=r, tensor=t, offsets=offs, mask=m, padding=pad):
                p = self.tensor(t, where)
                if p is not None:
                    self._access(p, offs, r.type, where)
                    if pad is not None and pad.type != ir.Type(p.dtype):
                        self.err(where, f"padding must be a {p.dtype.value} scalar")
                self.mask(m, r.shape, where)
            case ir.Store(tensor=t, offsets=offs, value=v, mask=m):
                p = self.tensor(t, where)
                if p is not None:
                    self._access(p, offs, v.type, where)
                self.mask(m, v.shape, where)
            case ir.Prefetch(tensor=t, offsets=offs, shape=shape):
                p = self.tensor(t, where)
                if p is not None:
                    self._access(p, offs, ir.Type(p.dtype, shape), where)
                if any(d <= 0 for d in shape):
                    self.err(where, f"prefetch of an empty tile {list(shape)}")
            case ir.AtomicRMW(tensor=t, indices=idx, value=v, mask=m):
                p = self.tensor(t, where)
                if p is not None:
                    if len(idx) != p.rank:
                        self.err(where, f"{len(idx)} indices for rank-{p.rank} `{t}`")
                    if v.dtype is not p.dtype:
                        self.err(where, f"value dtype {v.dtype.value} != `{t}`'s {p.dtype.value}")
                for i in idx:
                    if not i.dtype.is_int or (i.shape != () and i.shape != v.shape):
                        self.err(
                            where,
                            f"index {i.type} must be an integer scalar or tile "
                            f"of the value's shape {list(v.shape)}",
                        )
                self.mask(m, v.shape, where)
            case ir.Elementwise(result=r, op=e, operands=xs):
                self._elementwise(r, e, xs, where)
            case ir.Cast(result=r, x=x, bits=bits):
                if r.shape != x.shape:
                    self.err(where, f"cast changes shape {x.type} -> {r.type}")
                if bits and (x.dtype.bits != r.dtype.bits or x.dtype.is_float == r.dtype.is_float):
                    self.err(where, f"a bit cast between {x.dtype.value} and {r.dtype.value}")
            case ir.Reduce(result=r, op=rop, x=x, axis=a):
                if not 0 <= a < x.type.rank:
                    self.err(where, f"axis {a} outside rank {x.type.rank}")
                else:
                    want_dtype = (
                        DType.I32 if rop in (ir.ReduceOp.ARGMAX, ir.ReduceOp.ARGMIN) else x.dtype
                    )
                    want = ir.Type(want_dtype, x.shape[:a] + x.shape[a + 1 :])
                    if r.type != want:
                        self.err(where, f"result {r.type}, expected {want}")
                if x.dtype is DType.BOOL:
                    self.err(where, "cannot reduce a bool tile (cast it first)")
            case ir.Scan(x=x) if x.dtype is DType.BOOL:
                self.err(where, "cannot scan a bool tile (cast it first)")
                self._scan(op, where)
            case ir.Scan():
                self._scan(op, where)
            case ir.Broadcast(result=r, x=x):
                if r.dtype is not x.dtype or not broadcast_ok(x.shape, r.shape):
                    self.err(where, f"cannot broadcast {x.type} to {r.type}")
            case ir.Reshape(result=r, x=x):
                if r.dtype is not x.dtype or r.type.numel != x.type.numel:
                    self.err(where, f"cannot reshape {x.type} to {r.type}")
            case ir.Permute(result=r, x=x, perm=perm):
                if sorted(perm) != list(range(x.type.rank)):
                    self.err(where, f"{perm} is not a permutation of rank {x.type.rank}")
                elif r.type != ir.Type(x.dtype, tuple(x.shape[i] for i in perm)):
                    self.err(where, f"result {r.type} != permuted {x.type}")
            case ir.Mma(result=r, a=a, b=b, acc=c):
                if a.type.rank != 2 or b.type.rank != 2 or c.type.rank != 2:
                    self.err(where, "mma operands must be rank 2")
                elif a.shape[1] != b.shape[0] or c.shape != (a.shape[0], b.shape[1]):
                    self.err(where, f"mma shapes {a.type} x {b.type} + {c.type} do not fit")
                if a.dtype is not b.dtype:
                    self.err(where, f"mma operand dtypes differ: {a.dtype.value}, {b.dtype.value}")
                if a.dtype is DType.BOOL or c.dtype is DType.BOOL:
                    self.err(where, "mma of bool")
                if r.type != c.type:
                    self.err(where, f"result {r.type} != accumulator {c.type}")
            case ir.For(results=rs, lower=lo, upper=hi, step=st, inits=inits, body=body):
                for v in (lo, hi, st):
                    self.scalar_int(v, where, "a loop bound")
                if not (lo.type == hi.type == st.type):
                    self.err(where, "loop bounds and step must share one type")
                if len(body.args) != 1 + len(inits):
                    self.err(where, "body args must be (iv, *carried)")
                else:
                    if body.args[0].type != lo.type:
                        self.err(where, "induction variable typed unlike the bounds")
                    self._same_types(body.args[1:], inits, where, "carried args")
                self._same_types(rs, inits, where, "results")
                self.region(body, scope, tuple(v.type for v in inits), "for body")
            case ir.If(results=rs, cond=c, then=t, else_=e):
                if c.type != ir.Type(DType.BOOL):
                    self.err(where, f"condition must be a bool scalar, got {c.type}")
                for reg, name in ((t, "then"), (e, "else")):
                    if reg.args:
                        self.err(where, f"`{name}` region takes no args")
                    self.region(reg, scope, tuple(v.type for v in rs), f"if {name}")
            case ir.While(results=rs, inits=inits, cond=c, body=b):
                self._same_types(c.args, inits, where, "cond args")
                self._same_types(b.args, inits, where, "body args")
                self._same_types(rs, inits, where, "results")
                self.region(c, scope, (ir.Type(DType.BOOL),), "while cond")
                self.region(b, scope, tuple(v.type for v in inits), "while body")
            case ir.Yield():
                pass
            case ir.Print(order=order, axis=axis):
                if order and (len(order) != 2 or not 0 <= axis < 3
                              or any(not v.type.is_scalar or v.dtype is not DType.I32 for v in order)):
                    self.err(where, "a print's order is (tile, tiles), two i32 scalars, on a grid axis")
            case ir.Assert(cond=c, order=order, axis=axis, region=region):
                if c.dtype is not DType.BOOL:
                    self.err(where, f"assert condition must be bool, got {c.type}")
                if order and (len(order) != 2 or not 0 <= axis < 3 or region not in ("walk", "queue", "last_block")
                              or any(not v.type.is_scalar or v.dtype is not DType.I32 for v in order)):
                    self.err(where, "an assert's order is (tile, tiles), two i32 scalars, on a grid axis, "
                                    "in a walk, queue or last_block region")
            case _:
                assert_never(op)
        for r in ir.op_results(op):
            self.define(r, scope, where)

    def _same_types(
        self, a: tuple[ir.Value, ...], b: tuple[ir.Value, ...], where: str, what: str
    ) -> None:
        if tuple(v.type for v in a) != tuple(v.type for v in b):
            self.err(
                where,
                f"{what} typed ({', '.join(str(v.type) for v in a)}), "
                f"expected ({', '.join(str(v.type) for v in b)})",
            )

    def _access(
        self, p: ir.TensorParam, offs: tuple[ir.Value, ...], ty: ir.Type, where: str
    ) -> None:
        if len(offs) != p.rank:
            self.err(where, f"{len(offs)} offsets for rank-{p.rank} `{p.name}`")
        for o in offs:
            self.scalar_int(o, where, "an offset")
        if ty.dtype is not p.dtype:
            self.err(where, f"tile dtype {ty.dtype.value} != `{p.name}`'s {p.dtype.value}")
        if ty.rank != p.rank:
            self.err(where, f"tile {ty} must have `{p.name}`'s rank {p.rank}")

    def _scan(self, op: ir.Scan, where: str) -> None:
        r, x, a = op.result, op.x, op.axis
        if not 0 <= a < x.type.rank:
            self.err(where, f"axis {a} outside rank {x.type.rank}")
        if r.type != x.type:
            self.err(where, f"result {r.type} != input {x.type}")

    def _elementwise(self, r: ir.Value, e: ir.ElemOp, xs: tuple[ir.Value, ...], where: str) -> None:
        where = f"{where} {e.value}"
        if len(xs) != e.arity:
            self.err(where, f"takes {e.arity} operands, got {len(xs)}")
            return
        for x in xs:
            if x.shape != r.shape:
                self.err(
                    where,
                    f"operand {x.type} does not have the result shape "
                    f"{list(r.shape)} (broadcast explicitly)",
                )
        if e is ir.ElemOp.WHERE:
            if xs[0].dtype is not DType.BOOL:
                self.err(where, "condition must be bool")
            data = xs[1:]
        else:
            data = xs
        dt = data[0].dtype
        if any(x.dtype is not dt for x in data):
            self.err(where, f"operand dtypes differ: {', '.join(x.dtype.value for x in data)}")
        want = DType.BOOL if e.is_comparison else dt
        if r.dtype is not want:
            self.err(where, f"result dtype {r.dtype.value}, expected {want.value}")
        need = _elem_domain(e, dt)
        if need is not None:
            self.err(where, f"needs {need}, got {dt.value}")


def _elem_domain(e: ir.ElemOp, dt: DType) -> str | None:
    """What element-wise `e` needs that `dt` is not (None: `dt` is fine)."""
    if e.float_only and not dt.is_float:
        return "a float operand"
    if e.int_only and not dt.is_int:
        return "an integer operand"
    if e in _LOGICAL and dt.is_float:
        return "a bool or integer operand"
    if e is ir.ElemOp.NEG and dt.is_int and not dt.is_signed:  # as the checker refuses `-x` of a `u32`
        return "a signed operand"
    if dt is DType.BOOL and not (e in _LOGICAL or e in (ir.ElemOp.EQ, ir.ElemOp.NE, ir.ElemOp.WHERE)):
        return "a number (it is not defined on bool)"
    return None


_SPELLING = {
    ir.ElemOp.NEG: "unary `-`", ir.ElemOp.NOT: "`!`", ir.ElemOp.ADD: "`+`", ir.ElemOp.SUB: "`-`",
    ir.ElemOp.MUL: "`*`", ir.ElemOp.DIV: "`/`", ir.ElemOp.REM: "`%`", ir.ElemOp.AND: "`&`",
    ir.ElemOp.OR: "`|`", ir.ElemOp.XOR: "`^`", ir.ElemOp.SHL: "`<<`", ir.ElemOp.SHR: "`>>`",
    ir.ElemOp.EQ: "`==`", ir.ElemOp.NE: "`!=`", ir.ElemOp.LT: "`<`", ir.ElemOp.LE: "`<=`",
    ir.ElemOp.GT: "`>`", ir.ElemOp.GE: "`>=`",
}


def domain_problem(op: ir.Op) -> tuple[str, DType, str] | None:
    """The element-type rule `op` breaks, as `(operation, dtype, what it
    needs)` in the source's words (`("`&`", DType.F16, "integer or `bool`
    elements")`), or None. These are the only rules a well-typed program can
    break after type checking: the checker checks a type-generic function once,
    for every `T`, so an instance (`T = f16` for a body that uses `&`) is
    checked here, when the lowering knows `T`."""
    match op:
        case ir.Elementwise(op=e, operands=xs) if len(xs) == e.arity:
            dt = (xs[1] if e is ir.ElemOp.WHERE else xs[0]).dtype
            if e.int_only and _elem_domain(e, dt) is None:
                dt = xs[-1].dtype  # a shift's amount (`x << s`, `s: T`) is an integer too
            if _elem_domain(e, dt) is None:
                return None
            what = _SPELLING.get(e, f"`{e.value}`")
            if e.float_only:
                return what, dt, "floating-point elements"
            if e.int_only:
                return what, dt, "integer elements"
            if e in _LOGICAL:
                return what, dt, "integer or `bool` elements"
            if e is ir.ElemOp.NEG and dt is not DType.BOOL:
                return what, dt, "signed numbers (an unsigned value has no negative)"
            return what, dt, "numbers"
        case ir.Reduce(op=r, x=x) if x.dtype is DType.BOOL:
            return f"`{r.value}`", x.dtype, "numbers (cast a `bool` tile with `as i32` first)"
        case ir.Scan(op=sc, x=x) if x.dtype is DType.BOOL:
            return f"`{sc.value}`", x.dtype, "numbers (cast a `bool` tile with `as i32` first)"
        case ir.Arange(result=r) if r.dtype is DType.BOOL:
            return "`arange`", r.dtype, "a numeric element type"
        case ir.Mma(a=a, acc=c) if DType.BOOL in (a.dtype, c.dtype):
            return "`dot`", DType.BOOL, "numbers"
    return None
