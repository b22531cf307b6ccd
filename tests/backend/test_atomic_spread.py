"""hcliff13: the atomics of a tile every thread holds a copy of (a reduction's result) are shared among the copies
(`codegen/atomic_spread.py`): tests/user l02's weighted histogram adds its 16 bins with one atomic instruction of
16 lanes, not 16 one-lane instructions from one thread; its RGB histogram (i32 adds of a [3, 256] tile, u8 `min`
and i16 `max` by compare-and-swap) too. The interpreter's values on llsim with the copies sharing and with the
first copy adding everything (`TILEC_ATOMIC_SPREAD=0`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang.backend import emit_ptx
from tilelang.backend.facts import TensorFacts
from tilelang.dtypes import DType
from tilelang.interp import run_kernel
from tilelang.ir.lower import lower_kernel
from tilelang.runtime.launch import ArgFact

L02 = Path(__file__).resolve().parents[1] / "user" / "programs" / "l02_u8_histograms_atomics.tile"
N, B = 1500, 1024  # two blocks, the second partial


def _luma() -> object:
    facts = {"seen": ArgFact(DType.I32, (2,), (1,)), "luma": ArgFact(DType.U8, (N,), None),
             "w": ArgFact(DType.F32, (N,), None), "hist": ArgFact(DType.F32, (16,), None)}
    return lower_kernel(tilelang.load(L02)._program, "luma_hist", {"B": B}, facts)


def _luma_args() -> list[np.ndarray]:
    r = np.random.default_rng(2)
    return [np.zeros(2, np.int32), r.integers(0, 256, N).astype(np.uint8), r.random(N, dtype=np.float32),
            np.zeros(16, np.float32)]


@pytest.mark.parametrize("spread", ["1", "0"])
def test_the_weighted_histogram_adds_each_bin_once(spread: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """l02's 16 bins: one `red`/`atom` of f32 in the PTX where the copies share them (16 with the switch off), and
    the interpreter's sums on llsim either way (f32 adds in another order: to rounding)."""
    monkeypatch.setenv("TILEC_ATOMIC_SPREAD", spread)
    monkeypatch.setenv("LLSIM_MEMO", "0")
    k = _luma()
    facts = {n: TensorFacts.of_launch(256, s) for n, s in (("seen", (2,)), ("luma", (N,)), ("w", (N,)),
                                                           ("hist", (16,)))}
    ptx = emit_ptx(k, "sm_90a", facts)
    adds = ptx.count("red.global.add.f32") + ptx.count("atom.global.add.f32")
    assert adds == (1 if spread == "1" else 16), adds
    want, got = _luma_args(), _luma_args()
    run_kernel(k, (2,), want)
    SimDevice("sm_90a").run(k, (2,), got, facts)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5)
    np.testing.assert_allclose(want[3], np.bincount(want[1] >> 4, want[2], 16), rtol=1e-4)


@pytest.mark.parametrize("spread", ["1", pytest.param("0", marks=pytest.mark.heavy)])  # (0: the old path)
def test_the_rgb_histogram_and_its_cas_atomics(spread: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """l02's `rgb_hist`: i32 adds of a [3, 256] tile, u8 `atomic_min` and i16 `atomic_max` of [3] tiles (the
    sub-word ones by compare-and-swap), on llsim at sm_80: the interpreter's integers exactly."""
    monkeypatch.setenv("TILEC_ATOMIC_SPREAD", spread)
    monkeypatch.setenv("LLSIM_MEMO", "0")
    h, w = 5, 8  # three blocks of 2 rows, the last one partial
    facts = {"rows_seen": ArgFact(DType.I32, (3,), (1,)), "img": ArgFact(DType.U8, (h, w, 3), None),
             "hist": ArgFact(DType.I32, (3, 256), None), "lo": ArgFact(DType.U8, (3,), None),
             "hi": ArgFact(DType.I16, (3,), None)}
    k = lower_kernel(tilelang.load(L02)._program, "rgb_hist", {"BH": 2, "W": w}, facts)
    r = np.random.default_rng(3)

    def args() -> list[np.ndarray]:
        return [np.zeros(3, np.int32), r.integers(0, 256, (h, w, 3)).astype(np.uint8),
                np.zeros((3, 256), np.int32), np.full(3, 255, np.uint8), np.zeros(3, np.int16)]

    want = args()
    got = [a.copy() for a in want]
    run_kernel(k, (3,), want)
    SimDevice("sm_80").run(k, (3,), got)
    for g, wv in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, wv)
    assert want[2].sum() == h * w * 3
