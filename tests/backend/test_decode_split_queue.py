"""`decode_split_queue` (benchmarks/attention_variants.tile): std's FMA decode
split with its shares pulled from a tile queue (`for s in queue(1)`). Its
partial outputs on the interpreter (any number of pulling blocks) and on the
sm_90a code in `llsim` against NumPy and `decode_split` (NaN and Inf past
`cache_len`), and at the benchmark's shape (BN 64, D 128, bf16, 128 shares a
KV head; issue 15 B=1 32k) ptxas without spills in the key loop."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from test_decode_tc_pipeline import G, _assemble_sm90a, _inputs
from test_decode_wg_pipeline import _check, _lowered, _reference

import tilelang
from tilelang.backend import emit_ptx
from tilelang.dtypes import DType
from tilelang.interp import run_kernel

VARIANTS = Path(__file__).resolve().parents[2] / "benchmarks" / "attention_variants.tile"
P = tilelang.partition

# (KV heads, cache positions, cache_len, splits, BN): a cache_len inside a key
# block (NaN/Inf after it), on a block's edge, shares with no key
CASES = [(2, 256, 150, 5, 16), (2, 256, 192, 3, 64), (1, 128, 37, 4, 16)]


def _outs(bhkv: int, splits: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.full((bhkv, splits * G, d), np.nan, np.float32), np.full((bhkv, splits * G), np.nan, np.float32))


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES)
def test_decode_split_queue_on_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int) -> None:
    d = 64
    q, k, v = _inputs(bhkv, smax, d, clen, 3)
    o, lse = _outs(bhkv, splits, d)
    op = tilelang.load(str(VARIANTS)).decode_split_queue["f16", G, bn, d](
        P(o, [1, G, d]), P(lse, [1, G]), q, k, v, clen, 0.125, splits)
    op.sync()
    want = _reference(q, k, v, clen, splits, bn, 0.125)
    _check(o.reshape(bhkv * splits, G, d), lse.reshape(bhkv * splits, G), *want)
    o2, lse2 = _outs(bhkv, splits, d)
    tilelang.compile("use std::attention::*;\n").decode_split["f16", G, bn, d](
        P(o2, [1, G, d]), P(lse2, [1, G]), q, k, v, clen, 0.125).sync()
    np.testing.assert_array_equal(o, o2)  # the same shares, the same arithmetic
    np.testing.assert_array_equal(lse, lse2)
    for blocks in (1, 3, 2 * splits):
        o[...] = np.nan
        run_kernel(op._plan.kir, (bhkv, splits), [o, lse, q, k, v, np.int32(clen), np.float32(0.125),
                                                  np.int32(splits)], queue_blocks=blocks, order="reverse")
        np.testing.assert_array_equal(o, o2)


def _kernel_ir(bhkv: int, smax: int, splits: int, bn: int, d: int, dtype: str):  # type: ignore[no-untyped-def]
    t, f32 = DType.parse(dtype), DType.F32
    params = [("o_part", f32, (bhkv, splits * G, d), (1, G, d)), ("lse_part", f32, (bhkv, splits * G), (1, G)),
              ("q", t, (bhkv, G, d), None), ("k", t, (bhkv, smax, d), None), ("v", t, (bhkv, smax, d), None)]
    return _lowered(tilelang.load(str(VARIANTS))._program, "decode_split_queue", {"T": t, "G": G, "BN": bn, "D": d}, params)


# (heavy: 5 pulling blocks for 4 shares a row, some pulling none; the same kernel pulls several a block at 2,
# and the interpreter runs more blocks than shares in test_decode_split_queue_on_the_interpreter)
@pytest.mark.parametrize("blocks", [2, pytest.param(5, marks=pytest.mark.heavy)])
def test_decode_split_queue_in_the_simulator(monkeypatch, blocks: int) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    bhkv, smax, clen, splits, bn, d = 2, 256, 150, 4, 64, 128  # the benchmark's D; a share with no key
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d, "f16")
    q, k, v = _inputs(bhkv, smax, d, clen, 8)
    o, lse = _outs(bhkv, splits, d)
    llsim.SimDevice("sm_90a").run(kir, (bhkv, splits), [o, lse, q, k, v, np.int32(clen), np.float32(0.125),
                                                        np.int32(splits)], facts, queue_blocks=blocks)
    _check(o.reshape(bhkv * splits, G, d), lse.reshape(bhkv * splits, G), *_reference(q, k, v, clen, splits, bn, 0.125))


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_decode_split_queue_at_the_benchmark_shape(tmp_path: Path) -> None:
    kir, facts = _kernel_ir(8, 32768, 128, 64, 128, "bf16")
    err, stores = _assemble_sm90a(tmp_path, kir, facts, "queue")
    assert stores and max(stores) <= 8, err  # as std's decode_split (at most one 4-byte value kept across)
    assert "atom.relaxed.gpu.global.add.u32" in emit_ptx(kir, "sm_90a", facts)


@pytest.mark.gpu
def test_decode_split_queue_against_sdpa_on_the_gpu() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    hkv, g, d, smax, clen, bn = 8, 4, 128, 4096, 3001, 64
    variants = tilelang.load(str(VARIANTS), device="gpu")
    std = tilelang.compile("use std::attention::*;\n", device="gpu")
    gen = torch.Generator(device="cuda").manual_seed(5)
    q = torch.randn(hkv, g, d, device="cuda", dtype=torch.bfloat16, generator=gen)
    k = torch.randn(hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=gen)
    v = torch.randn(hkv, smax, d, device="cuda", dtype=torch.bfloat16, generator=gen)
    k[:, clen:] = float("nan")
    v[:, clen:] = float("nan")
    want = torch.nn.functional.scaled_dot_product_attention(
        q.float().unsqueeze(2), k[:, None, :clen].float(), v[:, None, :clen].float()).squeeze(2)
    for splits in (16, 48, 128):
        o_part = torch.empty(hkv, splits * g, d, device="cuda")
        lse_part = torch.empty(hkv, splits * g, device="cuda")
        o = torch.empty(hkv, g, d, device="cuda", dtype=torch.bfloat16)
        ns = 1 << (splits - 1).bit_length()
        for _ in range(3):  # the counters zeroed by each launch's last pulls
            o.fill_(float("nan"))
            variants.decode_split_queue["bf16", g, bn, d](P(o_part, [1, g, d]), P(lse_part, [1, g]), q, k, v, clen,
                                                          d**-0.5, splits).sync()
            std.decode_combine["bf16", g, ns, 8](P(o, [1, g, 8]), o_part, lse_part).sync()
            err = float((o.float() - want).abs().max() / want.abs().max())
            assert err < 1e-2, (splits, err)
