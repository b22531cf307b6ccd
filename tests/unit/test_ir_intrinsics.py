"""Every kernel operation of the signature table has a lowering, and every IR
opcode has an interpreter implementation that runs."""

from __future__ import annotations

import numpy as np
import pytest

from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.intrinsics.signatures import OPERATIONS, Context
from tilelang.ir import nodes as ir
from tilelang.ir.lower import LOWERED_OPERATIONS


def test_every_kernel_operation_is_lowered() -> None:
    kernel_ops = {name for name, sig in OPERATIONS.items() if sig.context is not Context.HOST}
    assert kernel_ops - LOWERED_OPERATIONS == set()
    assert LOWERED_OPERATIONS - set(OPERATIONS) == set()  # no stale names


def test_every_opcode_is_implemented() -> None:
    names = {op.value for op in ir.ElemOp} | {op.value for op in ir.ReduceOp} | \
        {op.value for op in ir.ScanOp}
    assert names == set(num.IMPLEMENTED)


def _operands(op: ir.ElemOp, dt: DType) -> list[np.ndarray]:
    x = np.array([1, 2, 3], dtype=dt.np_dtype) if dt is not DType.BOOL else \
        np.array([True, False, True])
    if op is ir.ElemOp.WHERE:
        return [np.array([True, False, True]), x, x]
    return [x] * op.arity


@pytest.mark.parametrize("op", list(ir.ElemOp))
def test_elementwise_runs_on_its_dtypes(op: ir.ElemOp) -> None:
    dtypes = [DType.F16, DType.BF16, DType.F32, DType.F64]
    if not op.float_only:
        dtypes += [DType.I8, DType.I32, DType.U32, DType.I64]
    for dt in dtypes:
        if op.int_only and dt.is_float:
            continue
        if op in (ir.ElemOp.AND, ir.ElemOp.OR, ir.ElemOp.XOR, ir.ElemOp.NOT) and dt.is_float:
            continue
        with np.errstate(all="ignore"):
            r = num.elementwise(op, _operands(op, dt), dt)
        want = np.bool_ if op.is_comparison else dt.np_dtype
        assert r.dtype == want and r.shape == (3,), (op, dt)


@pytest.mark.parametrize("op", list(ir.ReduceOp))
def test_reductions_run(op: ir.ReduceOp) -> None:
    for dt in (DType.F16, DType.BF16, DType.F32, DType.I32, DType.U8):
        r = num.reduce(op, np.ones((2, 3), dt.np_dtype), dt, 1)
        want = np.int32 if op in (ir.ReduceOp.ARGMAX, ir.ReduceOp.ARGMIN) else dt.np_dtype
        assert r.dtype == want and r.shape == (2,)
