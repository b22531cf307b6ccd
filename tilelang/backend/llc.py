"""LLVM IR text -> PTX (llvmlite's NVPTX backend): the compile cache's PTX step.

PTX is a function of the LLVM text, the target's arch, PTX ISA version and level, the IR level, llvmlite and
this module's code: `runtime/cache.PTX_STEP` hashes this module alone, so an edit elsewhere in the backend
(`target.py`'s settings included) keeps every PTX entry, and an edit here compiles every kernel again. Keep
here only what decides the PTX.

Invariants:
- No CUDA library is imported here: PTX is produced on any machine.
- `llvmlite.binding` is imported lazily, on the first emission, so importing
  the backend stays cheap for `tilec check`.
"""

from __future__ import annotations

import functools
import threading
from typing import Protocol

TRIPLE = "nvptx64-nvidia-cuda"


class PtxTarget(Protocol):
    """What of a `target.Target` the PTX is made from (the rest reaches the LLVM text): this module
    imports nothing of target.py, which re-exports it."""

    @property
    def arch(self) -> str: ...

    @property
    def ptx_version(self) -> str: ...

    @property
    def opt(self) -> int: ...


@functools.cache
def _llvm():  # type: ignore[no-untyped-def]
    import llvmlite.binding as llvm  # 0.50: llvm.initialize() raises; only these are needed

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # CodeGenPrepare restarts its walk over the whole function each time it
    # changes the dominator tree, unless the function counts as "huge" (more
    # basic blocks than this threshold, 10,000 by default), when it goes on
    # from the block it is in. Our kernels' guarded stores and loads make
    # many blocks, and the restarts made NVPTX code generation grow far
    # faster than the kernel: a u8 kernel of 30 guarded element-wise stores
    # took 28 s, of 60 stores 170 s. Treating every function as huge gives
    # byte-identical PTX on every kernel we compared (204: the numerics
    # table, the examples, std, the engine's decode launches, the attention
    # split forms) and the 30-store kernel in 0.8 s (tests/backend/
    # test_codegen_time.py). The option is process-wide LLVM state; setting
    # it again is harmless.
    llvm.set_option("tilec", "-cgpp-huge-func=0")
    return llvm


@functools.cache
def _target_machine(arch: str, features: str, opt: int):  # type: ignore[no-untyped-def]
    llvm = _llvm()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features=features, opt=opt)


_INIT_LOCK = threading.Lock()  # the cached initialisers may race with `prewarm`'s thread


def _ptx_version(target: PtxTarget, ll_text: str) -> str:
    """The target's PTX ISA version, raised to 8.1 for a module that uses
    `st.async` (the cluster exchange, `codegen/cluster.py`); the driver of
    an sm_90 GPU accepts it (CUDA 12.1 and later)."""
    v = target.ptx_version
    if "st.async" in ll_text and int(v.removeprefix("+ptx")) < 81:
        return "+ptx81"
    return v


def llvm_to_ptx(ll_text: str, target: PtxTarget, ir_opt: int | None = None) -> str:
    """Parse, verify, optimise (new PM, default<O`ir_opt`>, the target's level
    unless given) and print PTX (NVPTX codegen at the target's level)."""
    with _INIT_LOCK:
        llvm = _llvm()
        tm = _target_machine(target.arch, _ptx_version(target, ll_text), target.opt)
    mod = llvm.parse_assembly(ll_text)
    mod.verify()
    mod.triple = TRIPLE
    mod.data_layout = str(tm.target_data)
    level = target.opt if ir_opt is None else ir_opt
    if level > 0:
        pto = llvm.create_pipeline_tuning_options(speed_level=level)
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
    return str(tm.emit_assembly(mod))
