"""Round 12 of the independent user's programs (huser12, 2026-12-06): domains
rounds 1-11 did not take, written from README.md, docs/reference.md and
examples/ alone.

- g01: pooling: a 2x2 max pool with stride 2 (a tile reshaped to rank 4 and
  reduced over two axes), and a 3x3 box blur with zero padding (a block's
  three rows, the first block's row above read at tile index -1: zeros; the
  neighbours along a row summed by a band matrix through `dot`).
- g02: a real DFT as two matrix products with twiddle matrices made in the
  kernel (`cos`/`sin` of `arange` products taken mod N), the power spectrum,
  and the inverse transform back to the rows (a device function returning a
  tuple of tiles).
- g03: Conway's life on a 12 x 20 torus of u8 cells, 8 generations: wrapped
  rows by tile index `(r + h - 1) % h`, wrapped columns by a circulant 0/1
  matrix, boards swapped by moves, the population counted by a u32 atomic.
- g04: batch normalisation's training forward: per-block count, mean and M2
  merged by Chan's rule in the last block of each column of blocks (scratch
  tiles read through `group()`, padded past the group's 4 tiles), data at
  an offset of 100, then the normalisation with a scale and a shift.
- g05: a batch of f64 lower-triangular solves by forward substitution, one
  system a block; `dot` takes no f64, and E0206's help said to cast to f32
  (losing what f64 was chosen for): it now writes the multiply-and-sum the
  reference gives, in the call's own names and shapes (test_user_wrong12),
  which this program uses.

Each program runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs; each runs in the
NVPTX simulator at sm_90a and sm_80, and its PTX assembles on both;
`test_user_gpu.py` runs them on a GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]
f32 = np.float32


def _g01(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    assert x.shape == (18, 26)
    np.testing.assert_array_equal(t["m"], t["x"].reshape(9, 2, 13, 2).max(axis=(1, 3)))
    xp = np.pad(x, 1)
    blur = sum(xp[i:i + 18, j:j + 26] for i in range(3) for j in range(3)) / 9
    np.testing.assert_allclose(t["b"], blur, rtol=1e-5, atol=1e-6)
    assert out == "[9, 13] [18, 26] true\n"


def _g02(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    spec = np.fft.fft(x, axis=1)
    np.testing.assert_allclose(t["re"], spec.real, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["im"], spec.imag, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["pw"], np.abs(spec) ** 2, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(t["y"], x, rtol=1e-4, atol=1e-4)
    assert out == "[20, 64] true\n"


def _g03(t: Tensors, out: str) -> None:
    i = np.arange(240).reshape(12, 20)
    a = (((i * 7 + i // 20 * 3) % 5) == 0).astype(np.int64)
    np.testing.assert_array_equal(t["first"], a)
    pops = []
    for _ in range(8):
        n = sum(np.roll(np.roll(a, dr, 0), dc, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)) - a
        a = ((n == 3) | ((n == 2) & (a == 1))).astype(np.int64)
        pops.append(a.sum())
    assert t["a"].dtype == np.uint8
    np.testing.assert_array_equal(t["a"], a)
    np.testing.assert_array_equal(t["pop"], pops)
    assert out == f"Tensor<u32, [8]> [{', '.join(str(p) for p in pops)}] {pops[-1]} {t['first'].sum()}\n"


def _g04(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    assert abs(x.mean() - 100) < 1
    mu, var = x.mean(0), x.var(0)
    np.testing.assert_allclose(t["mean"][0], mu, rtol=1e-6)
    np.testing.assert_allclose(t["var"][0], var, rtol=1e-4)  # Chan's merge, not the sum of squares near 100
    np.testing.assert_array_equal(t["pn"][:, 0], [32, 32, 32, 4])
    g, b = np.arange(48) * 0.1 + 0.5, np.arange(48) * -0.05
    np.testing.assert_allclose(t["y"], (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(t["running"][0], 90 + 0.1 * mu, rtol=1e-6)
    assert out == "4800.0 [1, 48] [100, 48]\n"


def _g05(t: Tensors, out: str) -> None:
    lo, b = t["l"].reshape(6, 16, 16), t["b"].reshape(6, 16, 8)
    assert (np.triu(lo, 1) == 0).all()
    np.testing.assert_allclose(t["x"].reshape(6, 16, 8), np.linalg.solve(lo, b), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(t["back"], t["b"], rtol=1e-12, atol=1e-12)
    assert out == "[96, 8] true\n"


CHECKS = {
    "g01_pooling": _g01,
    "g02_dft_matmul": _g02,
    "g03_life_torus": _g03,
    "g04_batchnorm_chan": _g04,
    "g05_f64_trsm": _g05,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "g*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    # g04: y = (x - mean) * ..: a mean near 100 summed in another order moves by an ulp of 100, 1e-4 of x - mean
    sim_tol={"g04_batchnorm_chan": 1e-3},
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")])
