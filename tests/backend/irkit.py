"""A tiny IR builder for backend tests: hand-made kernels independent of the front end."""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir


class B:
    def __init__(self) -> None:
        self.n = 0
        self.ops: list[ir.Op] = []

    def val(self, dt: DType, shape: tuple[int, ...] = ()) -> ir.Value:
        self.n += 1
        return ir.Value(self.n, ir.Type(dt, tuple(shape)))

    def add(self, op: ir.Op) -> None:
        self.ops.append(op)

    def const(self, v, dt: DType = DType.I32, shape: tuple[int, ...] = ()) -> ir.Value:
        r = self.val(dt, shape)
        self.add(ir.Const(r, v))
        return r

    def bid(self, axis: int = 0) -> ir.Value:
        r = self.val(DType.I32)
        self.add(ir.BlockId(r, axis))
        return r

    def elem(self, op: ir.ElemOp, *xs: ir.Value, dt: DType | None = None) -> ir.Value:
        out = DType.BOOL if op.is_comparison else (dt or xs[-1].dtype)
        r = self.val(out, xs[-1].shape)
        self.add(ir.Elementwise(r, op, tuple(xs)))
        return r

    def load(self, t: str, dt: DType, offs, shape, mask=None, padding=None) -> ir.Value:
        r = self.val(dt, shape)
        self.add(ir.Load(r, t, tuple(offs), mask, padding))
        return r

    def store(self, t: str, offs, v: ir.Value, mask=None) -> None:
        self.add(ir.Store(t, tuple(offs), v, mask))

    def own_offsets(self, tile: tuple[int, ...]) -> list[ir.Value]:
        offs = []
        for d, n in enumerate(tile):
            b = self.bid(d)
            offs.append(self.elem(ir.ElemOp.MUL, b, self.const(n)))
        return offs

    def region(self, args=(), yields=()) -> ir.Region:
        r = ir.Region(tuple(args), tuple(self.ops) + (ir.Yield(tuple(yields)),))
        return r

    def kernel(self, name: str, params, grid_rank: int = 1, num_warps: int = 4) -> ir.Kernel:
        return ir.Kernel(name, tuple(params), self.region(), grid_rank=grid_rank, num_warps=num_warps)


def add_kernel(B_: int = 1024, dt: DType = DType.F32) -> ir.Kernel:
    b = B()
    offs = b.own_offsets((B_,))
    x = b.load("x", dt, offs, (B_,))
    y = b.load("y", dt, offs, (B_,))
    z = b.elem(ir.ElemOp.ADD, x, y)
    b.store("z", offs, z)
    params = [
        ir.TensorParam("z", dt, 1, True, (B_,), (None,)),
        ir.TensorParam("x", dt, 1, False, None, (None,)),
        ir.TensorParam("y", dt, 1, False, None, (None,)),
    ]
    return b.kernel("add", params)
