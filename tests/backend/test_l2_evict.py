"""Hint `evict_first` (`codegen/ring.py`): the copies of the loads a kernel
streams through a shared-memory ring (`stages`) carry an evict-first L2
cache policy; without the hint they are plain `cp.async.cg`, and
`TILEC_L2_EVICT` (`Target.l2_evict`) forces either way for measurements.
The PTX assembles for sm_80 and sm_90a, and the machine code never gives a
hinted copy a shared address with a uniform-register part: ptxas 13.0
encodes such an LDGSTS with undefined registers (an illegal instruction on
the H200, 2026-12-04), which the ring's opaque select avoids (the engine's
kernels: tests/llm/test_evict_first_sass.py); the NVPTX IR simulator runs a
hinted ring (its select addresses) against the interpreter."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import hinted_copy_faults, sass

import tilelang
from tilelang.backend import compile_kernel
from tilelang.backend.facts import TensorFacts
from tilelang.backend.env_switch import SwitchError
from tilelang.backend.target import Target
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

HINT = "cp.async.cg.shared.global.L2::cache_hint"
POLICY = "createpolicy.fractional.L2::evict_first.b64"

STREAM = """
#[hints(num_warps = 4, stages = 3{extra})]
kernel fn rowsum<const BK: i32>(o: &mut Tensor<f32, [1, 128]>, w: &Tensor<f32, [?, ?]>, n: i32) {{
    let p = w.partition([128, BK]);
    let mut acc = zeros::<f32>([128, BK]);
    for j in 0..n {{
        acc = acc + p.load([block_id(0), j]);
    }}
    o.store(acc.sum(1).reshape([1, 128]));
}}
"""


def _rowsum(extra: str):  # type: ignore[no-untyped-def]
    prog = tilelang.compile(STREAM.format(extra=extra))._program
    f32 = DType.F32
    params = [("o", f32, (4, 128), (1, 128)), ("w", f32, (512, 1024), None), ("n", None, None, None)]
    kir = lower_kernel(prog, "rowsum", {"BK": 32}, {n: ArgFact(dt, s, t) for n, dt, s, t in params if dt})
    facts = {"o": TensorFacts(True, (True, True), False), "w": TensorFacts(True, (True, True), False)}
    return kir, facts


def _decode_split():  # type: ignore[no-untyped-def]
    bf, f32 = DType.parse("bf16"), DType.F32
    params = [("o_part", f32, (8 * 32, 4, 128), (1, 4, 128)), ("lse_part", f32, (8 * 32, 4), (1, 4)),
              ("q", bf, (8, 4, 128), None), ("k", bf, (8, 32768, 128), None), ("v", bf, (8, 32768, 128), None)]
    kir = lower_kernel(tilelang.compile("use std::attention::decode_split;\n")._program, "decode_split",
                       {"T": bf, "G": 4, "BN": 64, "D": 128}, {n: ArgFact(dt, s, t) for n, dt, s, t in params})
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in s), False) for n, _, s, _ in params}
    return kir, facts


def test_the_hint_marks_every_ring_copy() -> None:
    kir, facts = _rowsum(", evict_first = 1")
    assert kir.evict_first
    ptx = compile_kernel(kir, Target("sm_90a"), facts).ptx
    copies = ptx.count("cp.async.cg.shared.global")
    assert copies > 0 and ptx.count(HINT) == copies
    assert ptx.count(POLICY) == 1  # made once, at the entry


def test_without_the_hint_no_policy() -> None:
    kir, facts = _rowsum("")
    assert not kir.evict_first
    ptx = compile_kernel(kir, Target("sm_90a"), facts).ptx
    assert "cp.async.cg.shared.global" in ptx
    assert HINT not in ptx and "createpolicy" not in ptx and "%clock64" not in ptx


@pytest.mark.parametrize(("setting", "hinted", "marked"),
                         [("0", True, False), ("1", False, True), ("", True, True), ("", False, False)])
def test_the_setting_overrides_the_hint(setting: str, hinted: bool, marked: bool) -> None:
    kir, facts = _rowsum(", evict_first = 1" if hinted else "")
    tgt = Target("sm_90a", l2_evict=setting)
    assert (HINT in compile_kernel(kir, tgt, facts).ptx) is marked
    if setting:  # part of the compile-cache key
        assert tgt.key() != Target("sm_90a", l2_evict="").key()


def test_the_setting_is_read_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_L2_EVICT", "0")
    assert Target("sm_90a").l2_evict == "0"
    monkeypatch.setenv("TILEC_L2_EVICT", "yes")  # E0604 (hfix6; was a warning, read as unset)
    with pytest.raises(SwitchError, match="TILEC_L2_EVICT='yes'"):
        Target("sm_90a")


def test_a_const_generic_gives_the_hint() -> None:
    src = STREAM.replace("const BK: i32>", "const BK: i32, const EF: i32>").format(extra=", evict_first = EF")
    prog = tilelang.compile(src)._program
    f32 = DType.F32
    facts_in = {"o": ArgFact(f32, (4, 128), (1, 128)), "w": ArgFact(f32, (512, 1024), None)}
    assert lower_kernel(prog, "rowsum", {"BK": 32, "EF": 1}, facts_in).evict_first
    assert not lower_kernel(prog, "rowsum", {"BK": 32, "EF": 0}, facts_in).evict_first


def test_std_decode_split_is_hinted() -> None:
    kir, facts = _decode_split()
    assert kir.evict_first
    ptx = compile_kernel(kir, Target("sm_90a"), facts).ptx
    assert ptx.count(HINT) == ptx.count("cp.async.cg.shared.global") > 0


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_hinted_ring_assembles(arch: str, tmp_path: Path) -> None:
    kir, facts = _rowsum(", evict_first = 1")
    f = tmp_path / "k.ptx"
    f.write_text(compile_kernel(kir, Target(arch), facts).ptx)
    r = subprocess.run(["ptxas", f"-arch={arch}", str(f), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("kernel", ["decode_split", "rowsum"])
def test_no_hinted_copy_has_a_uniform_shared_offset(kernel: str) -> None:
    """std's decode split (the kernel that trapped first) and a plain ring:
    every LDGSTS addresses shared memory through its thread's registers
    only, and reads a descriptor register that the code defines."""
    kir, facts = _decode_split() if kernel == "decode_split" else _rowsum(", evict_first = 1")
    code = sass(compile_kernel(kir, Target("sm_90a"), facts).ptx)
    assert code.count("LDGSTS") >= (32 if kernel == "decode_split" else 3)
    assert hinted_copy_faults(code) == []


F16_STREAM = """
#[hints(num_warps = 4, stages = 3, evict_first = 1)]
kernel fn rowsum16<const BM: i32, const BK: i32>(o: &mut Tensor<f32, [BM, 1]>, x: &Tensor<f16, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let mut acc = zeros::<f32>([BM, BK]);
    for j in 0..px.num_tiles(1) {
        acc = acc + (px.load([block_id(0), j]) as f32);
    }
    o.store(acc.sum(1).reshape([BM, 1]));
}
"""


@pytest.mark.parametrize(("rows", "cols"), [(64, 208), (48, 256), (64, 64)])
def test_hinted_ring_in_the_simulator(rows: int, cols: int) -> None:
    """The hinted copies' addresses (the select on the opaque true, chunk k's
    offset added after it) land each chunk where the ring's reads look: the
    code generator's output run by the NVPTX IR simulator equals the
    interpreter, whole tiles (the fast path), a column tile half past the
    edge (208: zero-filled chunks) and a partial last row tile (48 rows)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from llsim import SimDevice

    rng = np.random.default_rng(cols + rows)
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    o = np.zeros((64, 1), np.float32)
    op = tilelang.compile(F16_STREAM).rowsum16[32, 64](tilelang.partition(o, [32, 1]), x)
    kir = op._plan.kir
    facts = {"o": TensorFacts(True, (True, False), False), "x": TensorFacts(True, (rows % 16 == 0, True), False)}
    assert compile_kernel(kir, Target("sm_90"), facts).ptx.count(HINT) > 0  # the hinted path is the one simulated
    sim = SimDevice("sm_90")
    copies = [np.array(h) for h in op._hosts]
    sim.run(kir, (2,), op._kernel_args(copies))
    op.sync()
    np.testing.assert_allclose(copies[0], op._hosts[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(op._hosts[0][:rows, 0], x.astype(np.float32).sum(1), rtol=1e-2, atol=1e-2)
