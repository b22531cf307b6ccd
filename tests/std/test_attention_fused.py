"""`std::attention::decode_fused`: flash decoding in one launch, the merge done
by the last block of each KV head (`if last_block(1)`). On the CPU: the
interpreter against NumPy and against the split + merge pair, in two block
orders (another block is then the last of each head); the code generator's
output run by the NVPTX IR simulator (`tests/backend/llsim.py`), counters
included; the PTX assembled by ptxas for sm_90a and sm_80."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_llvm, emit_ptx  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.interp import run_kernel  # noqa: E402

ATTN = tilelang.compile("use std::attention::*;\n")
P = tilelang.partition


def _inputs(b_hkv: int, g: int, smax: int, clen: int, d: int, seed: int, dt=np.float16):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(dt) for s in ((b_hkv, g, d), (b_hkv, smax, d), (b_hkv, smax, d)))
    k[:, clen:] = np.nan  # past the cache length: garbage the kernel must not read into the result
    v[:, clen:] = np.nan
    return q, k, v


def _reference(q, k, v, clen, scale):  # type: ignore[no-untyped-def]
    s = np.einsum("bgd,bkd->bgk", q.astype(np.float64), k[:, :clen].astype(np.float64)) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bgk,bkd->bgd", p / p.sum(-1, keepdims=True), v[:, :clen].astype(np.float64))


def _fused(q, k, v, clen, bn, splits, ns, nc, scale=0.125):  # type: ignore[no-untyped-def]
    bh, g, d = q.shape
    o_part = np.zeros((bh, splits * g, d), np.float32)
    lse_part = np.zeros((bh, splits * g), np.float32)
    o = np.zeros_like(q)
    op = ATTN.decode_fused["f16", g, bn, d, ns, nc](P(o_part, [1, g, d]), P(lse_part, [1, g]), P(o, [1, g, d]),
                                                    q, k, v, clen, scale)
    return op, o, o_part, lse_part


@pytest.mark.parametrize(("bh", "g", "smax", "clen", "d", "bn", "splits", "ns", "nc", "dc"), [
    (2, 4, 130, 129, 64, 16, 4, 4, 4, 64),
    (3, 4, 256, 200, 32, 16, 5, 8, 2, 16),   # splits < NS, four steps of the merge
    (1, 8, 64, 1, 64, 16, 3, 4, 1, 32),     # one position: shares without a key
])
def test_fused_decoding_matches_numpy_and_the_pair(bh, g, smax, clen, d, bn, splits, ns, nc, dc) -> None:  # type: ignore[no-untyped-def]
    q, k, v = _inputs(bh, g, smax, clen, d, seed=bh + clen)
    op, o, _, _ = _fused(q, k, v, clen, bn, splits, ns, nc)
    op.sync()
    np.testing.assert_allclose(o.astype(np.float64), _reference(q, k, v, clen, 0.125), rtol=2e-3, atol=2e-3)
    o_part = np.zeros((bh, splits * g, d), np.float32)
    lse_part = np.zeros((bh, splits * g), np.float32)
    pair = np.zeros_like(q)
    ATTN.decode_split["f16", g, bn, d](P(o_part, [1, g, d]), P(lse_part, [1, g]), q, k, v, clen, 0.125).sync()
    ATTN.decode_combine["f16", g, ns, dc](P(pair, [1, g, dc]), o_part, lse_part).sync()
    # the same weights, summed in another order (an online softmax over the merge's steps)
    np.testing.assert_allclose(o.astype(np.float32), pair.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_whichever_block_arrives_last_the_result_is_the_same() -> None:
    q, k, v = _inputs(3, 4, 256, 200, 32, seed=5)
    op, o, o_part, lse_part = _fused(q, k, v, 200, 16, 5, 8, 2)
    kir, grid = op._plan.kir, (3, 5, 1)
    outs = []
    for order in ("row-major", "reverse"):
        args = [np.zeros_like(o_part), np.zeros_like(lse_part), np.zeros_like(o), q, k, v, 200, 0.125]
        run_kernel(kir, grid, args, order=order)
        outs.append(args[2])
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.abs(outs[0]).max() > 0.05
    op.sync()
    np.testing.assert_array_equal(o, outs[0])


def test_fused_decoding_in_the_simulator() -> None:
    q, k, v = _inputs(2, 4, 80, 70, 64, seed=3)
    op, o, o_part, lse_part = _fused(q, k, v, 70, 16, 2, 2, 1)
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90").run(op._plan.kir, (2, 2, 1), op._kernel_args(copies))  # raises unless every counter is 0 again
    op.sync()
    np.testing.assert_allclose(copies[0], o_part, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(copies[2].astype(np.float32), o.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert np.abs(o.astype(np.float32)).max() > 0.05


def _kir_f16():  # type: ignore[no-untyped-def]
    bh, g, d, splits = 8, 4, 128, 32
    o_part = np.zeros((bh, splits * g, d), np.float32)
    lse_part = np.zeros((bh, splits * g), np.float32)
    o = np.zeros((bh, g, d), np.float16)
    q = np.zeros((bh, g, d), np.float16)
    kv = np.zeros((bh, 64, d), np.float16)
    op = ATTN.decode_fused["f16", g, 64, d, 32, 8](P(o_part, [1, g, d]), P(lse_part, [1, g]), P(o, [1, g, d]),
                                                     q, kv, kv, 64, 0.1)
    facts = {p.name: TensorFacts(True, tuple(n % 16 == 0 for n in np.asarray(a).shape))
             for p, a in zip(op._plan.kir.tensor_params, op._hosts, strict=True)}
    op.sync()
    return op._plan.kir, facts


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_arrival_in_the_ptx(arch: str, tmp_path: Path) -> None:
    """One thread's acquire-release atomic on the group's counter between two
    barriers, its reset by the last block, the flag through shared memory;
    the region's loads after the second barrier. ptxas assembles it."""
    kir, facts = _kir_f16()
    ll = emit_llvm(kir, arch, facts)
    assert ll.count("atom.acq_rel.gpu.global.add.u32") == 1 and ll.count("st.relaxed.gpu.global.u32") == 1
    ptx = emit_ptx(kir, arch, facts)
    body = ptx.split("atom.acq_rel.gpu.global.add.u32")
    assert len(body) == 2 and "bar.sync" in body[0].rsplit("ld.global", 1)[-1] and "bar.sync" in body[1]
    assert "ld.global" in body[1].split("bar.sync", 1)[1]  # the merge reads after the second barrier
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not installed")
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    subprocess.run([ptxas, f"-arch={arch}", str(src), "-o", str(tmp_path / "k.cubin")], check=True)


def _fused_aw(q, k, v, clen, bn, splits, ns, nc, scale=0.125):  # type: ignore[no-untyped-def]
    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    bh, g, d = q.shape
    o_part = np.zeros((bh, splits * g, d), np.float32)
    lse_part = np.zeros((bh, splits * g), np.float32)
    o = np.zeros_like(q)
    op = variants.decode_fused_aw["f16", g, bn, d, ns, nc](P(o_part, [1, g, d]), P(lse_part, [1, g]),
                                                            P(o, [1, g, d]), q, k, v, clen, scale)
    return op, o, o_part, lse_part


@pytest.mark.heavy  # ~4 s; test_arrive_wait's row sums cover the waiting arrival's codegen by default
def test_the_waiting_fold_in_the_simulator() -> None:
    """benchmarks/attention_variants.tile's `decode_fused_aw` (`decode_fused` with `arrive_wait = 1`, the fold
    hattn6's device script times at B=1 8k): in llsim (blocks in the grid's order, the head's last share polling
    its counter; every counter 0 again) the values of the interpreter's `decode_fused` on the same inputs; its
    LLVM arrives by a release add and polls with acquires, no acquire-release atomic."""
    q, k, v = _inputs(2, 4, 80, 70, 64, seed=3)
    op, o, o_part, lse_part = _fused_aw(q, k, v, 70, 16, 3, 4, 2)
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90").run(op._plan.kir, (2, 3, 1), op._kernel_args(copies))
    ll = emit_llvm(op._plan.kir, "sm_90a", None)
    op.discard()
    ref, want, _, _ = _fused(q, k, v, 70, 16, 3, 4, 2)
    ref.sync()
    np.testing.assert_allclose(copies[2].astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(copies[2].astype(np.float64), _reference(q, k, v, 70, 0.125), rtol=2e-3, atol=2e-3)
    assert np.abs(copies[2].astype(np.float32)).max() > 0.05
    assert "red.release.gpu.global.add.u32" in ll and "ld.acquire.gpu.global.u32" in ll
    assert "atom.acq_rel" not in ll


@pytest.mark.heavy  # ~3 s
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_the_waiting_fold_assembles_without_spills(tmp_path: Path) -> None:
    """`decode_fused_aw` at std's B=1 8k plan (G = 4, BN = 64, D = 128, bf16, 16 shares merged 8 a step): ptxas
    (sm_90a) spills nothing, and its registers leave the block its SM as `decode_fused`'s do."""
    from ptxas_report import assemble

    variants = tilelang.load(str(ROOT / "benchmarks" / "attention_variants.tile"))
    bh, g, d, splits = 8, 4, 128, 16
    o_part = np.zeros((bh, splits * g, d), np.float32)
    lse_part = np.zeros((bh, splits * g), np.float32)
    o = np.zeros((bh, g, d), np.float16)
    kv = np.zeros((bh, 8192, d), np.float16)
    reps = []
    for kern in (variants.decode_fused_aw, ATTN.decode_fused):
        op = kern["f16", g, 64, d, 16, 8](P(o_part, [1, g, d]), P(lse_part, [1, g]), P(o, [1, g, d]),
                                          np.zeros_like(o), kv, kv, 8192, 0.1)
        facts = {p.name: TensorFacts(True, tuple(n % 16 == 0 for n in np.asarray(a).shape))
                 for p, a in zip(op._plan.kir.tensor_params, op._hosts, strict=True)}
        reps.append(assemble(emit_ptx(op._plan.kir, "sm_90a", facts), "sm_90a"))
        op.discard()
    aw, plain = reps
    assert max(aw.spill_stores) == 0 and max(aw.spill_loads) == 0, aw.text[-2000:]
    assert max(aw.registers) <= max(max(plain.registers), 128), (aw.registers, plain.registers)
