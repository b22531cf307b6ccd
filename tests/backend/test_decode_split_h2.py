"""`decode_split_h2` (benchmarks/attention_variants.tile): std's FMA decode
split on the caches viewed as half-rows ([B * Hkv, 2 * S_max, D / 2]), so that
a [rows, D / 2] key tile puts 8 lanes along D / 2 and each thread holds both
halves of its keys (3 shuffle levels a score instead of 4, half the scores a
thread). Its partial outputs on the interpreter and on the sm_90a code in
`llsim` against NumPy (NaN and Inf past `cache_len`), and at the benchmark's
shape (BN 64, D 128, bf16; issue 15 B=1 32k) ptxas's registers and the key
loop's SASS: 48 lane shuffles a key block where std's `decode_split` has 128."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gpu_probe import nvdisasm_path
from test_decode_tc_pipeline import G, _assemble_sm90a, _inputs
from test_decode_wg_pipeline import _check, _lowered, _reference

import tilelang
from tilelang.dtypes import DType

VARIANTS = Path(__file__).resolve().parents[2] / "benchmarks" / "attention_variants.tile"
NVDISASM = nvdisasm_path()  # on PATH or from the nvidia-cuda-nvdisasm wheel (the test extra)

# (KV heads, cache positions, cache_len, splits, BN): a cache_len inside a key
# block (NaN/Inf after it), on a block's edge, a share with no key
CASES = [(2, 256, 150, 2, 64), (2, 256, 192, 3, 64), (1, 128, 37, 3, 32)]


def _views(q, k, v, splits: int):  # type: ignore[no-untyped-def]
    """The kernel's views: q [B*Hkv*G, 2, D/2], k and v [B*Hkv, 2*S, D/2], outputs."""
    bhkv, smax, d = k.shape
    o = np.full((bhkv * splits * G, 2, d // 2), np.nan, np.float32)
    lse = np.full((bhkv * splits, G), np.nan, np.float32)
    return (o, lse, q.reshape(bhkv * G, 2, d // 2), k.reshape(bhkv, 2 * smax, d // 2),
            v.reshape(bhkv, 2 * smax, d // 2))


@pytest.mark.parametrize(("bhkv", "smax", "clen", "splits", "bn"), CASES)
def test_decode_split_h2_on_the_interpreter(bhkv: int, smax: int, clen: int, splits: int, bn: int) -> None:
    d = 64
    q, k, v = _inputs(bhkv, smax, d, clen, 7)
    o, lse, q2, k2, v2 = _views(q, k, v, splits)
    tilelang.load(str(VARIANTS)).decode_split_h2["f16", G, bn, d // 2](
        tilelang.partition(o, [G, 2, d // 2]), tilelang.partition(lse, [1, G]), q2, k2, v2, clen, 0.125,
        splits).sync()
    _check(o.reshape(bhkv * splits, G, d), lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def _kernel_ir(bhkv: int, smax: int, splits: int, bn: int, d: int, dtype: str):  # type: ignore[no-untyped-def]
    t, f32 = DType.parse(dtype), DType.F32
    dh = d // 2
    params = [("o_part", f32, (bhkv * splits * G, 2, dh), (G, 2, dh)), ("lse_part", f32, (bhkv * splits, G), (1, G)),
              ("q", t, (bhkv * G, 2, dh), None), ("k", t, (bhkv, 2 * smax, dh), None),
              ("v", t, (bhkv, 2 * smax, dh), None)]
    return _lowered(tilelang.load(str(VARIANTS))._program, "decode_split_h2", {"T": t, "G": G, "BN": bn, "DH": dh}, params)


def test_decode_split_h2_in_the_simulator(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import llsim

    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    bhkv, smax, clen, splits, bn, d = 1, 256, 150, 2, 64, 128  # the benchmark's D; the last block cut by cache_len
    kir, facts = _kernel_ir(bhkv, smax, splits, bn, d, "f16")
    q, k, v = _inputs(bhkv, smax, d, clen, 8)
    o, lse, q2, k2, v2 = _views(q, k, v, splits)
    llsim.SimDevice("sm_90a").run(kir, (bhkv * splits, 1), [o, lse, q2, k2, v2, np.int32(clen), np.float32(0.125),
                                                            np.int32(splits)], facts)
    _check(o.reshape(bhkv * splits, G, d), lse, *_reference(q, k, v, clen, splits, bn, 0.125))


def _loop_sass(sass: str) -> list[str]:
    """The instructions of the longest loop (a backward branch's body)."""
    ins: list[str] = []
    labels: dict[str, int] = {}
    for line in sass.splitlines():
        if m := re.match(r"^(\.L_x_\d+):", line):
            labels[m.group(1)] = len(ins)
        elif m := re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line):
            ins.append(m.group(1))
    best: list[str] = []
    for i, t in enumerate(ins):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", t)
        if m and labels.get(m.group(1), i + 1) <= i and i + 1 - labels[m.group(1)] > len(best):
            best = ins[labels[m.group(1)]:i + 1]
    return best


@pytest.mark.skipif(shutil.which("ptxas") is None or NVDISASM is None, reason="ptxas/nvdisasm not installed")
def test_decode_split_h2_at_the_benchmark_shape(tmp_path: Path) -> None:
    kir, facts = _kernel_ir(8, 32768, 32, 64, 128, "bf16")
    err, stores = _assemble_sm90a(tmp_path, kir, facts, "h2")
    assert stores and max(stores) <= 8, err  # ptxas 13.0: one 4-byte value kept across the loop
    sass = subprocess.run([NVDISASM, "-c", str(tmp_path / "h2.cubin")], capture_output=True, text=True,
                          check=True).stdout
    loop = _loop_sass(sass)
    # the 4-byte spill is the masked last block's scratch address (reloaded once a share), not the hot path
    assert sum(x.split()[0] in ("STL", "LDL") for x in loop) <= 1, [x for x in loop if "LDL" in x or "STL" in x]
    shuffles = sum("SHFL" in x for x in loop)
    assert shuffles == 48, shuffles  # 16 scores a thread x 3 levels (std's decode_split: 32 x 4 = 128)
