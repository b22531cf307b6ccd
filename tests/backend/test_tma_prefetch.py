"""`Target.tma_prefetch` (opt-in, `TILEC_TMA_PREFETCH=1`): a kernel that
copies tiles with TMA prefetches its tensor maps at its entry (thread 0,
`prefetch.param.tensormap`, before the barriers' set-up and any PDL wait);
off (the default) the text is as before, and the switch is part of the
compile-cache key. The decode split on tensor cores computes the same
partials in `llsim` with it (the simulator treats the prefetch as the hint
it is)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ptxas_report import assemble
from test_decode_tc_pipeline import _inputs, _kernel_ir
from test_decode_wg_pipeline import _check, _reference

from tilelang.backend import compile_kernel, emit_llvm_text, lower_gpu
from tilelang.backend.target import Target

PF = "call void @llvm.nvvm.prefetch.tensormap.p101(ptr addrspace(101) %tmap.pf."


def _llvm(tma_prefetch: bool, pdl: str = "") -> tuple[str, int]:
    """The decode tc split's LLVM text for sm_90a and its tensor-map count."""
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128)
    gk = lower_gpu(kir, "sm_90a", facts)
    return emit_llvm_text(gk, gk.facts, pdl, False, tma_prefetch)[0], len(gk.tma_params)


def _entry(text: str) -> str:
    """The kernel's first blocks up to the body's first label (`start:`)."""
    return text.split(" #0 {\n", 1)[1].split("\nstart:", 1)[0]


def test_every_tensor_map_is_prefetched_by_thread_0_first() -> None:
    text, maps = _llvm(True)
    assert maps == 3  # q, k, v
    entry = _entry(text)
    assert entry.count(PF) == maps
    # guarded by thread 0, before the thread index the body uses is read
    guard = re.search(r"%tmap\.pf\.c = icmp eq i32 %tmap\.pf\.t, 0\n  br i1 %tmap\.pf\.c, label %tmap\.pf,", entry)
    assert guard is not None and entry.index(PF) > guard.end()
    assert entry.index(PF) < entry.index("\nentry:") < entry.index("%tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    assert entry.startswith("tmap.pf.top:")  # the function's first block, before `entry`
    # before any barrier of the body is set up
    assert text.index(PF) < text.index("call void @llvm.nvvm.mbarrier.init.shared(")


def test_the_prefetch_comes_before_the_pdl_wait() -> None:
    text, _ = _llvm(True, "late")
    entry = _entry(text)
    assert entry.index(PF) < entry.index("griddepcontrol.wait")


def test_off_the_entry_has_no_prefetch() -> None:
    on, _ = _llvm(True)
    off, _ = _llvm(False)
    assert PF not in off and "tmap.pf" not in off
    # the rest of the kernel is the same text
    assert [ln for ln in on.splitlines() if "tmap.pf" not in ln
            and "prefetch.tensormap" not in ln and ln != "  br label %entry"] == off.splitlines()


def test_a_kernel_without_tma_has_no_prefetch() -> None:
    import tilelang
    from tilelang.dtypes import DType
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    f16, f32 = DType.parse("f16"), DType.F32
    params = [("o_part", f32, (8 * 4, 4, 128), (1, 4, 128)), ("lse_part", f32, (8 * 4, 4), (1, 4)),
              ("q", f16, (8, 4, 128), None), ("k", f16, (8, 1024, 128), None), ("v", f16, (8, 1024, 128), None)]
    kir = lower_kernel(tilelang.compile("use std::attention::decode_split;\n")._program, "decode_split",
                       {"T": f16, "G": 4, "BN": 64, "D": 128}, {n: ArgFact(dt, s, t) for n, dt, s, t in params})
    gk = lower_gpu(kir, "sm_90a")
    assert not gk.tma_params
    assert "prefetch.tensormap" not in emit_llvm_text(gk, gk.facts, "", False, True)[0]


def test_the_switch_is_in_the_target_and_its_key(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_TMA_PREFETCH", raising=False)
    assert not Target("sm_90a").tma_prefetch  # opt-in
    assert Target("sm_90a").key() == "sm_90a+ptx80-O3"  # the default's key as before
    assert Target("sm_90a", tma_prefetch=True).key().endswith("-tp")
    monkeypatch.setenv("TILEC_TMA_PREFETCH", "1")
    assert Target("sm_90a").tma_prefetch
    monkeypatch.setenv("TILEC_TMA_PREFETCH", "0")
    assert not Target("sm_90a").tma_prefetch


def test_the_default_emission_has_no_prefetch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_TMA_PREFETCH", raising=False)
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128)
    gk = lower_gpu(kir, "sm_90a", facts)
    assert "prefetch" not in emit_llvm_text(gk, gk.facts)[0]
    assert "prefetch" not in compile_kernel(kir, Target("sm_90a"), facts).ptx


@pytest.mark.heavy  # (`TILEC_TMA_PREFETCH` is opt-in: its default tests are the LLVM ones above)
def test_the_ptx_prefetches_and_assembles_for_sm_90a(tmp_path) -> None:  # type: ignore[no-untyped-def]
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128)
    on = compile_kernel(kir, Target("sm_90a", tma_prefetch=True), facts).ptx
    off = compile_kernel(kir, Target("sm_90a", tma_prefetch=False), facts).ptx
    # the param-space form, one a map: no generic address of a map kept live for it
    assert len(re.findall(r"prefetch\.param\.tensormap\b", on)) == 3
    assert not re.search(r"prefetch\.tensormap\b", on)
    assert "prefetch" not in off
    r = assemble(on, "sm_90a", cubin=tmp_path / "on.cubin")
    r_off = assemble(off, "sm_90a", cubin=tmp_path / "off.cubin")
    assert r.max_spill_stores == 0 and r.registers == r_off.registers, (r.text, r_off.text)


@pytest.mark.heavy  # (opt-in; llsim skips the prefetch, a hint, and test_off_the_entry_has_no_prefetch checks
# that the rest of the kernel is the default's text)
@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), [(2, 256, 150, 2, 64)])
def test_decode_split_tc_with_the_prefetch_in_the_simulator(bhkv: int, smax: int, clen: int, splits: int,
                                                            bn: int) -> None:
    d = 64
    q, k, v = _inputs(bhkv, smax, d, clen, 7)
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d)
    import llsim

    texts: list[str] = []

    def with_prefetch(kernel, facts=None):  # type: ignore[no-untyped-def]
        # `SimDevice.compile` with the prefetch on
        gk = lower_gpu(kernel, "sm_90a", facts)
        text, abi = emit_llvm_text(gk, gk.facts, "", False, True)
        texts.append(text)
        return llsim.Program(text), abi, gk

    sim = llsim.SimDevice("sm_90a")
    sim.compile = with_prefetch  # type: ignore[method-assign]
    o = np.full((bhkv * splits, 4, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, 4), np.nan, np.float32)
    sim.run(kir, (2, 1), [o, lse, q, k, v, np.int32(clen), np.float32(0.125), np.int32(splits)], facts)
    assert texts and PF in texts[0]
    _check(o, lse, *_reference(q, k, v, clen, splits, bn, 0.125))
