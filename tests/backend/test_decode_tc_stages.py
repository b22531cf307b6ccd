"""`decode_split_tc6` (benchmarks/attention_variants.tile): std's
`decode_split_tc` with a ring of 6 key blocks instead of 4, for more of the
cache in flight a CTA. Its partial outputs on the interpreter and on the
sm_90a code in `llsim` against NumPy (NaN and Inf past `cache_len`), the
pipeline taking it with 6 stages, and ptxas's word on its registers and
shared memory at the benchmark's shape (BN 64, D 128, bf16)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_decode_tc_pipeline import CASES, G, M, _assemble_sm90a, _inputs
from test_decode_wg_pipeline import _check, _reference, _simulate

import tilelang
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel
from tilelang.dtypes import DType
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

VARIANTS = Path(__file__).resolve().parents[2] / "benchmarks" / "attention_variants.tile"


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES[:3])
def test_decode_split_tc6_on_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int) -> None:
    import numpy as np

    d = 64
    q, k, v = _inputs(bhkv, smax, d, clen, 5)
    o = np.full((bhkv * splits, G, d), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    tilelang.load(str(VARIANTS)).decode_split_tc6["f16", bn, d](
        tilelang.partition(o, [1, M, d]), tilelang.partition(lse, [1, M]), q, k, v, clen, 0.125, splits).sync()
    _check(o, lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def _kernel_ir(bhkv: int, smax: int, splits: int, bn: int, d: int, dtype: str = "f16"):  # type: ignore[no-untyped-def]
    t, f32 = DType.parse(dtype), DType.F32
    params = [("o_part", f32, (bhkv * splits, G, d), (1, M, d)), ("lse_part", f32, (bhkv * splits, G), (1, M)),
              ("q", t, (bhkv, G, d), None), ("k", t, (bhkv, smax, d), None), ("v", t, (bhkv, smax, d), None)]
    facts = {n: TensorFacts(True, tuple(x % 16 == 0 for x in shape), False) for n, _, shape, _ in params}
    kir = lower_kernel(tilelang.load(str(VARIANTS))._program, "decode_split_tc6", {"T": t, "BN": bn, "D": d},
                       {n: ArgFact(dt, shape, tile) for n, dt, shape, tile in params})
    return kir, facts


def test_decode_split_tc6_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    bhkv, smax, clen, splits, bn, d = 2, 512, 333, 2, 64, 64  # 4 and 3 key blocks a share: the ring wraps
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d)
    q, k, v = _inputs(bhkv, smax, d, clen, 6)
    _check(*_simulate(kir, facts, q, k, v, clen, splits), *_reference(q, k, v, clen, splits, bn, 0.125))


def test_the_pipeline_takes_six_stages() -> None:
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128, "bf16")
    text = print_gpu_kernel(lower_gpu(kir, "sm_90a", facts))
    assert "role consumer warps 4" in text and "wgmma" in text
    assert "stages 6 smem" in text, text[:600]  # 6 x 32 KB of K and V + the Q tile: 213 KB


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_decode_split_tc6_assembles_for_sm_90a_without_spills(tmp_path) -> None:  # type: ignore[no-untyped-def]
    kir, facts = _kernel_ir(8, 32768, 16, 64, 128, "bf16")
    err, stores = _assemble_sm90a(tmp_path, kir, facts)
    assert stores and max(stores) == 0, err
