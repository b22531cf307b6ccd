"""The greedy token choice is NumPy's `argmax` over the whole vocabulary, on
every edge (hrev round 11, on the interpreter; the GPU runs the same kernels).

`std::llm`'s three choices over the LM head's block maxima (`argmax_step`, in
chunks; `argmax_fold`, lane by lane, `Plan.tk`; `argmax_wide`, one tile, the
sm_90 plans' default, `Plan.tw`) padded the maxima past the last block with
the finite `NEG_BIG` (-3e38) and took the padding lanes' token (0, a load past
the edge) where they tied, or kept token 0 where nothing beat `NEG_BIG`: a
maximum of -3e38 or below (finite), and NaN, gave three answers: a NaN logit
picked token 2147483647 in `argmax_wide` (past the vocabulary: the next step
embedded a row of zeros), token 0 in `argmax_step` and the maximum before the
NaN in `argmax_fold`. NumPy's rule, which `argmax` of a tile keeps too: the
first maximum, and a NaN is the maximum (its first one).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang

ROOT = Path(__file__).resolve().parents[2]
P = tilelang.partition
NAN, INF = np.nan, np.inf

# (block maxima, the tokens of those maxima: increasing, one block after another)
CASES = {
    "ties": ([1, 5, 5, 2, 5], [3, 10, 20, 30, 40]),
    "nan": ([1, NAN, 5, NAN, 2], [3, 10, 20, 30, 40]),
    "nan_after_the_max": ([9, 1, NAN, 2, 3], [3, 10, 20, 30, 40]),
    "nan_in_the_last_chunk": ([1, 2, 3, 4, 5, 6, 7, 8, NAN], list(range(5, 14))),
    "every_one_minus_inf": ([-INF] * 5, [0, 10, 20, 30, 40]),
    "a_max_of_neg_big": ([-INF, -3e38, -INF], [0, 10, 20]),
    "below_neg_big": ([-3.2e38, -3.3e38, -3.1e38], [5, 6, 7]),
    "every_lane_equal": ([2.0] * 9, list(range(1, 10))),
    "the_max_last": ([0, 1, 2, 3, 4, 5, 6, 7, 8.5], list(range(100, 109))),
    "one_block": ([7.0], [42]),
}


@pytest.fixture(scope="module")
def llm() -> tilelang.Module:
    sys.path.insert(0, str(ROOT / "examples" / "llm"))
    from engine import load_kernels

    return load_kernels()


def _pick(llm: tilelang.Module, kernel: str, case: str) -> None:
    maxima, tokens = (np.array(x) for x in CASES[case])
    bmax, barg = maxima.astype(np.float32), tokens.astype(np.int32)
    tok, pos, hist = np.zeros(1, np.int32), np.full(1, 2, np.int32), np.zeros(8, np.int32)
    bc = 16 if kernel == "argmax_wide" else 4  # chunks of 4 (a partial last one); one tile of 16
    getattr(llm, kernel)[bc, 8](P(tok, [1]), P(pos, [1]), P(hist, [8]), bmax, barg).sync()
    want = int(barg[int(np.argmax(bmax))])
    assert (int(tok[0]), int(pos[0]), int(hist[3])) == (want, 3, want)


@pytest.mark.parametrize("kernel", ["argmax_step", "argmax_fold", "argmax_wide"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_token_is_numpys_first_maximum(llm: tilelang.Module, kernel: str, case: str) -> None:
    _pick(llm, kernel, case)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["argmax_step", "argmax_fold", "argmax_wide"])
def test_the_gpu_picks_numpys_first_maximum_too(kernel: str) -> None:
    gpu = tilelang.load(ROOT / "stdlib" / "std" / "llm.tile", device="gpu")
    for case in CASES:
        _pick(gpu, kernel, case)
