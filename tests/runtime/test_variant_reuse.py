"""One compile for two variants whose LLVM texts are the same (hattn5, issue 15).

The compile cache keys a kernel's PTX by what the PTX is a function of (the LLVM text, the target, the IR
level, the toolchain), not by the facts the variant was lowered with, and the runtime names the module it
loads by that key: a variant whose text equals one compiled before reuses its PTX and its loaded module.
Before, the D = 128 attention kernel's short keys' variant (byte for byte the long keys' kernel since hattn4)
was compiled and loaded a second time at a user's first launch with S_k <= 1,024."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tilelang
import tilelang.backend as backend
from tilelang.backend import TensorFacts, compile_kernel
from tilelang.ir.samples import vector_add
from tilelang.runtime import cuda_stub
from tilelang.runtime.cuda_stub import DevArray


@pytest.fixture
def counted(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A fresh compile cache; the list of LLVM texts `llvm_to_ptx` compiles."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    seen: list[str] = []
    real = backend.llvm_to_ptx

    def llc(ll: str, *args: Any, **kw: Any) -> str:
        seen.append(ll)
        return real(ll, *args, **kw)

    monkeypatch.setattr(backend, "llvm_to_ptx", llc)
    return seen


def test_facts_that_leave_the_text_alone_share_one_compile(counted) -> None:  # type: ignore[no-untyped-def]
    """A fact the kernel does not read (`rows_at_most`: only attention and the GEMM's rows ask for it) gives
    the same LLVM text, so the second compile is the first's PTX under the same key; a fact that changes
    the text (the alignment: vector loads) is compiled again under its own key."""
    k = vector_add(1024)
    plain = {n: TensorFacts(True, (True,)) for n in ("x", "y", "z")}
    short = {**plain, "x": TensorFacts(True, (True,), rows_at_most=512)}
    odd = {n: TensorFacts(False, (False,)) for n in ("x", "y", "z")}
    a = compile_kernel(k, "sm_90a", plain)
    b = compile_kernel(k, "sm_90a", short)
    assert len(counted) == 1 and a.key == b.key and a.ptx == b.ptx
    c = compile_kernel(k, "sm_90a", odd)
    assert len(counted) == 2 and counted[1] != counted[0] and c.key != a.key


# ~3 s (the D = 128 kernel's sm_90a PTX once; lowered twice): heavy
@pytest.mark.heavy
def test_the_d128_short_keys_variant_is_the_long_kernels_module(counted, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """std::attention at D = 128 launched with S_k = 4,096 and then 1,024 on the stub device (an H100's
    ABI): two variants (the second lowered with the fact the first asks for), one LLVM -> PTX compile and
    one module, whose one function both variants launch. At D = 64 the short variant is the chained
    kernel, another text: a second compile and a second module (the count can see one)."""
    for var in ("TILEC_ATTN_CHAIN", "TILEC_ATTN_SHORT_D", "TILEC_ATTN_FASTDIV", "TILEC_ATTN_QEARLY",
                "TILEC_ATTN_PRODUCER_REGS"):
        monkeypatch.delenv(var, raising=False)
    dev = cuda_stub.stub_device("sm_90a", 132)
    with cuda_stub.installed(dev):
        attn = tilelang.compile("use std::attention::*;\n")
        for d, texts in ((128, 1), (64, 2)):
            before, loads = len(counted), dev.ctx.loads
            kern = attn.flash_attention["f16", 128, 128, d]
            for s in (4096, 1024):
                q, k, v, o = (DevArray.zeros((2, s, d), np.float16) for _ in range(4))
                kern(tilelang.partition(o, [1, 128, d]), q, k, v, d**-0.5, False).sync()
            pks = {id(plan.prepared): plan.prepared for plan in kern._plans.values()}
            variants = [v for pk in pks.values() for v in pk.variants.values()]
            assert len(variants) == 2, d
            (long_abi, long_fn), (short_abi, short_fn) = variants
            assert long_abi.short is not None and short_abi.short is None  # two variants, the second asked for
            assert len(counted) - before == texts and dev.ctx.loads - loads == texts, d
            assert (long_fn is short_fn) == (texts == 1), d

