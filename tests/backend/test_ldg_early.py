"""`Target.ldg_early` (`TILEC_LDG_EARLY=1`, `codegen/ldg_early.py`): a
read-only load whose value is first used after a CTA barrier is a plain
`ld.global`, which ptxas leaves issued before the barrier; as `ld.global.nc`
ptxas 13.0 sinks it below the barrier. std's `decode_combine` at B=1 8k's
plan (16 shares, DC 16): its partials' loads came after the barrier of the
log-sum-exps' exchange, i.e. after their round trip; with the option every
load is issued before the first barrier. Off (the default) the text is as
before. The simulator runs the kernel with the option against the
interpreter (a plain load reads what the `.nc` one read)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import sass

import tilelang
from tilelang.backend import compile_kernel
from tilelang.backend.facts import TensorFacts
from tilelang.backend.target import Target
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

NC = "ld.global.nc"


def _combine():  # type: ignore[no-untyped-def]
    bf, f32 = DType.parse("bf16"), DType.F32
    params = [("o", bf, (8, 4, 128), (1, 4, 16)), ("o_part", f32, (8, 64, 128), None), ("lse_part", f32, (8, 64), None)]
    kir = lower_kernel(tilelang.compile("use std::attention::decode_combine;\n")._program, "decode_combine",
                       {"T": bf, "G": 4, "NS": 16, "DC": 16}, {n: ArgFact(dt, s, t) for n, dt, s, t in params})
    # the partials as the runtime's PDL facts would have them where no launch the merge may
    # overlap writes them (`TensorFacts.early`): under PDL only those keep `ld.global.nc`
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False, n != "o") for n, _, s, _ in params}
    return kir, facts


def _loads_after_first_barrier(code: str) -> int:
    lines = [ln for ln in code.splitlines() if re.search(r"\bLDG\b|\bLDG\.|BAR\.SYNC", ln)]
    first = next(i for i, ln in enumerate(lines) if "BAR.SYNC" in ln)
    return sum("LDG" in ln for ln in lines[first:])


def test_off_by_default_and_in_the_key(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TILEC_LDG_EARLY", raising=False)
    assert not Target("sm_90a").ldg_early
    monkeypatch.setenv("TILEC_LDG_EARLY", "1")
    assert Target("sm_90a").ldg_early
    assert Target("sm_90a").key() != Target("sm_90a", ldg_early=False).key()


def test_the_merges_loads_become_plain_only_with_the_option() -> None:
    kir, facts = _combine()
    off = compile_kernel(kir, Target("sm_90a", pdl=True, pdl_trigger="late", ldg_early=False), facts).ptx
    on = compile_kernel(kir, Target("sm_90a", pdl=True, pdl_trigger="late", ldg_early=True), facts).ptx
    assert "@@ldg" not in off and "@@ldg" not in on
    assert off.count(NC) == 3 and on.count(NC) == 0  # the partials (2 a thread) and the log-sum-exps
    assert on.count("ld.global.v4") == 3


def test_with_the_option_every_load_is_issued_before_the_first_barrier() -> None:
    kir, facts = _combine()
    t = {"pdl": True, "pdl_trigger": "late"}
    off = sass(compile_kernel(kir, Target("sm_90a", **t, ldg_early=False), facts).ptx)
    on = sass(compile_kernel(kir, Target("sm_90a", **t, ldg_early=True), facts).ptx)
    assert _loads_after_first_barrier(off) == 2  # ptxas 13.0 sank the partials' two loads
    assert _loads_after_first_barrier(on) == 0


def test_a_load_used_before_any_barrier_stays_nc() -> None:
    src = """
kernel fn axpy(z: &mut Tensor<f32, [256]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) * 2.0);
}
"""
    prog = tilelang.compile(src)._program
    kir = lower_kernel(prog, "axpy", {}, {"z": ArgFact(DType.F32, (1024,), (256,)),
                                          "x": ArgFact(DType.F32, (1024,), None)})
    facts = {"z": TensorFacts(True, (True,)), "x": TensorFacts(True, (True,))}
    on = compile_kernel(kir, Target("sm_90a", ldg_early=True), facts).ptx
    assert NC in on


# (heavy: 16 splits; `TILEC_LDG_EARLY` is opt-in, and 4 runs the same merge with its plain loads)
@pytest.mark.parametrize("splits", [pytest.param(16, marks=pytest.mark.heavy), 4])
def test_the_merge_with_the_option_in_the_simulator(splits: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from llsim import SimDevice

    from tilelang.backend import llvm as llvm_mod

    rng = np.random.default_rng(splits)
    hkv, g, d, dc = 2, 4, 64, 16
    o_part = rng.standard_normal((hkv, splits * g, d)).astype(np.float32)
    lse_part = rng.standard_normal((hkv, splits * g)).astype(np.float32)
    o = np.zeros((hkv, g, d), np.float16)
    attn = tilelang.compile("use std::attention::*;\n")
    op = attn.decode_combine["f16", g, splits, dc](tilelang.partition(o, [1, g, dc]), o_part, lse_part)
    real = llvm_mod.emit_llvm_text
    seen = []

    def with_option(*args, **kwargs):  # type: ignore[no-untyped-def]
        text, abi = real(*args, **{**kwargs, "ldg_early": True})
        seen.append(text)
        return text, abi

    monkeypatch.setattr(llvm_mod, "emit_llvm_text", with_option)
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90").run(op._plan.kir, (hkv, 1, d // dc), op._kernel_args(copies))
    op.sync()
    assert len(seen) == 1 and "@@ldg" not in seen[0]
    if splits == 16:  # the [NS, G] form: every load crosses the exchange's barrier
        assert "!invariant.load" not in seen[0]
    np.testing.assert_allclose(copies[0].astype(np.float32), op._hosts[0].astype(np.float32), rtol=2e-3, atol=2e-3)
    assert np.abs(op._hosts[0]).max() > 0.1
