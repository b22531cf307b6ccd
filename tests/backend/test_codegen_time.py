"""LLVM's NVPTX code generation must stay close to linear in a kernel's
length. Its CodeGenPrepare pass restarts its walk over the whole function
after each change to the dominator tree unless the function counts as
"huge"; our guarded loads and stores make many small blocks, and those
restarts made a u8 kernel of 30 guarded stores take 14 s of CPU (28 s wall) to PTX (60
stores: 170 s). `target._llvm` marks every function huge
(`-cgpp-huge-func=0`), which changes no PTX we compared (204 kernels) and
brings that kernel to under a second. The bound below is a complexity guard
with a wide margin (CPU time of this thread, so a loaded machine does not
matter), not a speed measurement."""

from __future__ import annotations

import time

import numerics_cases as nc

from tilelang.backend import emit_llvm, target
from tilelang.dtypes import DType


def _many_stores_kernel() -> object:
    """One u8 kernel that stores x op 0 and 0 op x for every integer binary
    op: 30 outputs, each store guarded by its own bounds check."""
    ops = tuple(nc.ConstOp(op, 0, left) for op in nc.INT_BINARY for left in (False, True)
                if not op.is_comparison or not left)
    assert len(ops) >= 28
    return nc.Case("const", DType.U8, ops, (nc.values(DType.U8),), name="many").kernel()


def test_a_kernel_of_many_guarded_stores_assembles_in_linear_time() -> None:
    ll = emit_llvm(_many_stores_kernel(), "sm_90a")
    assert ll.count("br i1") >= 30  # the guarded blocks that made it slow
    t = target.Target("sm_90a")
    start = time.thread_time()
    ptx = target.llvm_to_ptx(ll, t)
    spent = time.thread_time() - start
    assert ptx.count("st.global") >= 30
    assert spent < 5.0, f"NVPTX code generation took {spent:.1f} s of CPU (14 s without -cgpp-huge-func=0)"
