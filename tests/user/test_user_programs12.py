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
- g03: Conway's life on a 12 x 20 torus of u8 cells, 4 generations: wrapped
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
- g06: a small language-model block for the Python API (test_user_api12):
  RMSNorm with f16 weights, a GEMV projection over token rows (its `D` from
  an input's run-time shape), the rotate-half rotary embedding (each half
  its own [1, 8] tile, written into nested tiles), and a host function
  that launches the three and returns the result.
- g07: symmetric int8 quantisation of bf16 rows (absmax / 127, rounding half
  away from zero by `floor`, clamped), a row of zeros whose 0 / 0 casts to
  0, and the dequantised rows within half a step.
- g08: Viterbi decoding in log space, one sequence a block in one launch:
  max-plus steps with `argmax` backpointers stored into nested tiles of
  the block's own tile, read back with `load()` and walked backwards.
- g09: log-cumsum-exp along rows of values near 100 (their exponentials
  overflow f32): a walk of [1, 32] tiles, each scanned relative to its
  maximum and merged with the carried value by log-add-exp.
- g10: bilinear upsampling by 2 (PyTorch's align_corners=False) as two
  matrix products with interpolation matrices a generic device function
  makes; its sizes `{ 2 * H }` (without braces, E0002's help now says so:
  test_user_wrong12's g03).
- g11: a causal depthwise conv1d (Mamba's, kernel 4) with SiLU, generic over
  the sequence's element type (f32 and f16; test_user_api12 calls it on
  float16 and float32 arrays): rows read one at a time at any row, t - k < 0
  reading zeros, stored into nested row tiles.
- g12: an embedding's forward (a gather of [1, D] rows at token ids read
  from a tensor, a padding id -1 reading zeros) and backward (a scatter-add
  of gradient rows with `atomic_add`, ids repeating, padding skipped by a
  branch), then a strided reduction on the host (every third column by a
  reshape and a masked sum).
- g13: `cummax` and `cummin`, new built-ins (NumPy's `maximum.accumulate`,
  PyTorch's `cummax`; round 11 had only a help for them, a masked [N, N]
  maximum): f32 rows with NaN, infinities and signed zeros (checked bit for
  bit: `maximum`'s rules), i32, u8 past 127, f16, a column scan, and a
  running maximum drawdown of price rows read with `-inf` padding.

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
    assert out == "[12, 64] true\n"


def _g03(t: Tensors, out: str) -> None:
    i = np.arange(240).reshape(12, 20)
    a = (((i * 7 + i // 20 * 3) % 5) == 0).astype(np.int64)
    np.testing.assert_array_equal(t["first"], a)
    pops = []
    for _ in range(4):
        n = sum(np.roll(np.roll(a, dr, 0), dc, 1) for dr in (-1, 0, 1) for dc in (-1, 0, 1)) - a
        a = ((n == 3) | ((n == 2) & (a == 1))).astype(np.int64)
        pops.append(a.sum())
    assert t["a"].dtype == np.uint8
    np.testing.assert_array_equal(t["a"], a)
    np.testing.assert_array_equal(t["pop"], pops)
    assert out == f"Tensor<u32, [4]> [{', '.join(str(p) for p in pops)}] {pops[-1]} {t['first'].sum()}\n"


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


def _g06(t: Tensors, out: str) -> None:
    from test_user_api12 import block_ref  # the Python API's test of the same block

    assert t["w"].dtype == np.float16 and t["wq"].dtype == np.float16 and t["wq"].shape == (48, 64)
    np.testing.assert_allclose(t["o"], block_ref(t["x"], t["w"], t["wq"], 7), rtol=1e-5, atol=1e-5)
    assert out == "[5, 48]\n"


def _g07(t: Tensors, out: str) -> None:
    x = t["x"]  # bf16 values, held as float32
    assert (x[3] == 0).all() and x[5].max() == 127 and (x[5] % 1 == 0.5).sum() == 19
    s = np.abs(x).max(1, keepdims=True) / f32(127)
    np.testing.assert_array_equal(t["scale"], s)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = x / s
    r = np.clip(np.sign(v) * np.floor(np.abs(v) + f32(0.5)), -127, 127)
    q = np.where(np.isnan(r), 0, r).astype(np.int8)  # the zero row: 0 / 0 is NaN, cast to 0
    np.testing.assert_array_equal(t["q"], q)
    np.testing.assert_array_equal(t["q"][5, :6], [-10, -10, -9, -9, -8, -8])  # -9.5 -> -10, -8.5 -> -9: away from 0
    np.testing.assert_allclose(t["y"], q * s, rtol=1e-6)
    assert (np.abs(t["y"] - x) <= s * 0.5 + 1e-6).all()
    assert out == "127 -127 true 0.0\n"


def _g08(t: Tensors, out: str) -> None:
    obs = t["obs"]
    la, lb, lp = (t[k].astype(np.float64) for k in ("loga", "logb", "logp"))
    np.testing.assert_allclose(np.exp(la).sum(1), 1, rtol=1e-5)
    for b in range(6):
        d, bps = lp + lb[:, obs[b, 0]], []
        for k in range(1, 12):
            sc = d[:, None] + la
            bps.append(sc.argmax(0))
            d = sc.max(0) + lb[:, obs[b, k]]
        s, path = d.argmax(), [d.argmax()]
        for bp in reversed(bps):
            s = bp[s]
            path.append(s)
        np.testing.assert_array_equal(t["bp"][b, 1:], bps)
        np.testing.assert_array_equal(t["path"][b], path[::-1])
        np.testing.assert_allclose(t["best"][b, 0], d.max(), rtol=1e-5)
    assert len({tuple(p) for p in t["path"]}) > 3 and len(set(t["path"][0])) > 3  # paths that move
    assert out == "[6, 12] true\n"


def _g09(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    assert x.max() > 89  # exp(x) is past f32's range
    np.testing.assert_allclose(t["y"], np.logaddexp.accumulate(x, axis=1), rtol=1e-6, atol=1e-4)
    assert out == "[7, 100] true\n"


def _g10(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64).reshape(3, 12, 20)

    def weights(n: int, m: int) -> np.ndarray:  # PyTorch's bilinear, align_corners=False, one axis
        s = np.maximum((np.arange(m) + 0.5) * n / m - 0.5, 0)
        lo = np.floor(s).astype(int)
        w = np.zeros((m, n))
        np.add.at(w, (np.arange(m), lo), 1 - (s - lo))
        np.add.at(w, (np.arange(m), np.minimum(lo + 1, n - 1)), s - lo)
        return w

    want = np.stack([weights(12, 24) @ c @ weights(20, 40).T for c in x]).reshape(72, 40)
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["y"][0, 0], x[0, 0, 0], rtol=1e-6)  # the corner: clamped, no neighbour mixed in
    assert out == "[72, 40] true true\n"


def _g11(t: Tensors, out: str) -> None:
    from test_user_api12 import conv1d_ref

    np.testing.assert_allclose(t["y"], conv1d_ref(t["x"], t["w"], t["b"]), rtol=1e-5, atol=1e-5)
    assert t["yh"].dtype == np.float16
    np.testing.assert_array_equal(t["yh"], conv1d_ref(t["xh"], t["w"], t["b"]).astype(np.float16))
    assert out == "[30, 24] true\n"


def _g12(t: Tensors, out: str) -> None:
    ids, w, g = t["ids"], t["w"], t["grad"].astype(np.float64)
    kept = ids >= 0
    assert (~kept).any() and (np.bincount(ids[kept]) > 1).any()  # padding, and ids that repeat
    np.testing.assert_array_equal(t["out"], np.where(kept[:, None], w[np.clip(ids, 0, None)], 0))
    dw = np.zeros((10, 12))
    np.add.at(dw, ids[kept], g[kept])
    np.testing.assert_allclose(t["dw"], dw, rtol=1e-5, atol=1e-6)  # f32 atomics: any order
    np.testing.assert_allclose(t["third"], dw[:, ::3], rtol=1e-5, atol=1e-6)
    mean = float(out.split()[-1])
    assert abs(mean - dw[:, ::3].mean()) < 1e-5
    assert out.startswith("[18, 12] 5 [10, 4] ")


def _running(x: np.ndarray, larger: bool) -> np.ndarray:
    """IEEE 754-2019 maximum (minimum) along the last axis, one element at a time: a NaN from where it is met
    on, -0.0 < +0.0."""
    out = x.copy()
    for i in range(1, x.shape[-1]):
        a, b = out[..., i - 1], x[..., i]
        best = np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b) if larger else np.minimum(a, b))
        zeros = (a == 0) & (b == 0)
        signed = np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0) if larger else \
            np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0)
        out[..., i] = np.where(zeros, signed, best)
    return out


def _g13(t: Tensors, out: str) -> None:
    x = t["x"]
    assert np.isnan(x).any() and np.isinf(x).any() and ((x == 0) & np.signbit(x)).any()
    for got, want in ((t["mx"], _running(x, True)), (t["mn"], _running(x, False))):
        np.testing.assert_array_equal(got, want)  # NaN where NaN
        assert (np.signbit(got) == np.signbit(want)).all()  # the zeros' signs too
    with np.errstate(invalid="ignore"):  # NaN and infinities cast: 0 and the saturated ends (the reference's rule)
        xd = x.astype(np.float64)  # (multiples of 0.25: x * 10 is exact in f32 too)
        i = np.where(np.isfinite(xd), xd * 10, np.where(np.isnan(xd), 0, np.sign(xd) * 2.0**40))
    i = np.clip(np.trunc(i), -2**31, 2**31 - 1).astype(np.int64)
    np.testing.assert_array_equal(t["im"], np.minimum.accumulate(i, axis=1))
    np.testing.assert_array_equal(t["um"], np.maximum.accumulate((i % 256).astype(np.uint8), axis=1))
    assert (t["um"] > 127).any()
    h = x.astype(np.float16)
    np.testing.assert_array_equal(t["hm"], _running(h, True))
    xi = t["xi"]
    np.testing.assert_array_equal(t["cm"], np.maximum.accumulate(xi, 0) - np.minimum.accumulate(xi, 0))
    p = t["prices"].astype(np.float64)
    np.testing.assert_allclose(t["dd"][:, 0], (np.maximum.accumulate(p, 1) - p).max(1), rtol=1e-6, atol=1e-5)
    assert out == "true inf -inf 0.0 -4.0 true\n"


CHECKS = {
    "g01_pooling": _g01,
    "g02_dft_matmul": _g02,
    "g03_life_torus": _g03,
    "g04_batchnorm_chan": _g04,
    "g05_f64_trsm": _g05,
    "g06_llm_block_api": _g06,
    "g07_int8_quantise_rows": _g07,
    "g08_viterbi": _g08,
    "g09_logcumsumexp": _g09,
    "g10_bilinear_upsample": _g10,
    "g11_causal_conv1d_generic": _g11,
    "g12_embedding_grad": _g12,
    "g13_cummax_cummin": _g13,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "g*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    # g04: y = (x - mean) * ..: a mean near 100 summed in another order moves by an ulp of 100, 1e-4 of x - mean
    sim_tol={"g04_batchnorm_chan": 1e-3},
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")])
