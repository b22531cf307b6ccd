"""`Plan.qr`: the per-head q/k RMSNorm's weights and the rotary embedding in
the QKV GEMV's epilogue (`rms_gemv_rope`), the ring attention and the cache
append on its rows (`attn_decode_ring_pre`, `kv_append_pre`). On the CPU
interpreter against the NumPy reference and the plain forms; the PTX at
Qwen3's decode shapes assembled for sm_90a (no spill, the GEMV within its
register budget, the attention's ring copies before its first barrier).
GPU runs are in `test_engine_gpu.py`."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "llm"))
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from engine import TileQwen3, load_kernels, plan_for  # noqa: E402
from model import Qwen3Config, random_weights  # noqa: E402
from reference import NumpyQwen3  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend.target import ptxas_available  # noqa: E402

P = tilelang.partition
TINY = Qwen3Config.load("tiny")


def _qr_plan(bnq: int, **fields):  # type: ignore[no-untyped-def]
    base = plan_for(TINY, 64, None)
    fields = {"tc": 4, "bt": 8, "ns": 4, "qr": 1, "short_tc": 4, "short_ns": 2, "fma_until": 8,
              "bn": {**base.bn, "qkv": bnq}, **fields}
    return dataclasses.replace(base, **fields)


# (Plan.qr is opt-in: BN 4 (four shares a head) by default; BN 16 (one) `heavy`, the same kernels)
@pytest.mark.parametrize("bnq", [pytest.param(16, marks=pytest.mark.heavy), 4])
def test_rotated_qkv_rows_decode_as_numpy_does(bnq: int) -> None:
    # BN 16: a block a head (one share of its sum of squares); BN 4: four
    # blocks a head (2 rows of each half), four shares; both step forms (4
    # splits, 2 below position 8); the cache holds what the plain form's holds
    w = random_weights(TINY, seed=0)
    eng = TileQwen3(TINY, w, max_seq=64, plan=_qr_plan(bnq))
    names = [op.kernel.__name__ for f in eng._form_ops.values() for op in f]
    layers = TINY.num_hidden_layers
    assert names.count("rms_gemv_rope") == names.count("attn_decode_ring_pre") == 2 * layers
    assert names.count("kv_append_pre") == 2
    assert not {"rms_gemv", "kv_append", "attn_decode_ring", "attn_decode_ring_early"} & set(names)
    plain = TileQwen3(TINY, w, max_seq=64, plan=_qr_plan(bnq, qr=0))
    ref = NumpyQwen3(TINY, w, max_seq=64)
    toks = [int(t) for t in np.random.default_rng(12).integers(0, TINY.vocab_size, 21)]
    for t in toks:
        a, b = eng.feed(t), ref.step(t)
        scale = float(np.abs(b).max())
        np.testing.assert_allclose(a, b, rtol=0, atol=scale * 2**-8)
        plain.feed(t)
    n = len(toks)
    for got, want in ((eng.kc, plain.kc), (eng.vc, plain.vc)):
        g, p = eng.be.read(got)[:, :n], eng.be.read(want)[:, :n]
        assert np.abs(g).max() > 0.1  # the rows were written
        np.testing.assert_allclose(g, p, rtol=2**-7, atol=2**-7 * float(np.abs(p).max()))


@pytest.mark.parametrize(("fields", "words"), [
    ({"qr": 2}, "must be 0 or 1"),
    ({"tc": 1}, "needs tc = 4"),
    ({"short_tc": 0}, "needs tc = 4"),
    ({"ea": 3}, "set ea and fm to 0"),
    ({"fm": 2}, "set ea and fm to 0"),
    ({"bn": {**plan_for(TINY, 64, None).bn, "qkv": 32}}, "divide the head"),
    ({"qg": {"qkv": (4, 64, 1, 1)}}, "tile queue"),
])
def test_rotated_qkv_refuses_plans_it_cannot_run(fields: dict, words: str) -> None:
    w = random_weights(TINY, seed=0)
    plan = dataclasses.replace(_qr_plan(16), **fields)
    with pytest.raises(ValueError, match=words):
        TileQwen3(TINY, w, max_seq=64, plan=plan)


@pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")
# (heavy: 0.6B and 8B, the same kernels and checks as 4B at other shapes; Plan.qr is opt-in)
@pytest.mark.parametrize("model", ["4b", pytest.param("0.6b", marks=pytest.mark.heavy),
                                   pytest.param("8b", marks=pytest.mark.heavy)])
def test_rotated_qkv_kernels_assemble_without_spills(model: str) -> None:
    from ptxas_report import assemble
    from test_gemv_registers import _ptx

    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d, hkv, hq = cfg.group, cfg.head_dim, cfg.num_key_value_heads, cfg.num_attention_heads
    heads, h, s, layers = hq + 2 * hkv, cfg.hidden_size, 64, 2
    bn, bk, st, mb = plan.bn["qkv"], plan.bk["qkv"], plan.st["qkv"], plan.mb["qkv"]
    nb = d // bn
    z, f = np.zeros, np.float32  # (calloc's pages: the weights, never run, cost no memory)
    k = load_kernels()
    qkv = z((heads, 2, d // 2), f)
    ss = z((heads, 1, nb), f)
    gemv = k.rms_gemv_rope[bn, bk, st, mb, 0, 0, 0](
        P(qkv, [1, 2, bn // 2]), P(ss, [1, 1, 1]), z((layers * heads * 2, d // 2, h), f), z(h, f), z((layers, h), f),
        z((layers, 2, d // 2), f), z((layers, 2, d // 2), f), z((s, d // 2), f), z((s, d // 2), f), np.array([3], np.int32),
        1, hq, 1e-6, z((64, h), f), 0, 0)
    attn = k.attn_decode_ring_pre[g, d // 2, plan.bt, 0, nb](
        P(z((hkv, plan.ns * g, d), f), [1, g, d]), P(z((hkv, plan.ns * g), f), [1, g]), qkv, ss,
        z((layers * hkv, s, d), f), z((layers * hkv, s, d), f), np.array([s - 1], np.int32), 1, 1e-6)
    for op in (gemv, attn):
        op.discard()  # built to be compiled, never run
    r = assemble(_ptx(gemv), "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers * 256 * mb <= 65536, r.text
    ptx = _ptx(attn)
    head = ptx.split("cp.async.cg.shared.global")[0]
    assert "bar.sync" not in head  # the ring's first copies wait for no reduction
    assert "cp.async.cg.shared.global" in ptx
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
