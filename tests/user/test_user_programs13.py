"""Round 13 of the independent user's programs (huser13, 2026-12-06): domains
rounds 1-12 did not take, written from README.md, docs/reference.md and
examples/ alone.

- j01: matrix products of integer and f64 tiles, which `dot` and `mma` take
  from this round on (they were E0206 with a multiply-and-sum help): an
  int8 GEMM with an i32 accumulator over a K loop and a partial row tile,
  u8 products past 2^15, i32 sums that wrap, an i64 `mma` onto a carried
  accumulator exact past 2^53, and an f64 A^T A whose columns differ by
  1e-9 around 1e4.
- j02: causal sliding-window attention (a run-time window of 6) on f16
  Q/K/V [40, 16]: query tiles of 16 (the last partial), key tiles of 8 with
  an online softmax; only the key tiles that meet the window are walked,
  and a key tile all masked for a row keeps its running max at -inf (the
  rescale guards exp(-inf - -inf)).
- j03: a grouped GEMM in one launch (a mixture of experts' layer): 37 rows
  sorted by expert in groups of 9, 0, 20 and 8, each group times its own
  weight from one stacked tensor; a block walks the experts its rows hold.
- j04: rotary embedding of GPT-J's interleaved pairs at positions offset by
  4093 (a run-time scalar), the angles in f64 (up to 4101 radians).
- j05: PyTorch's EmbeddingBag, one bag a block: bags by offsets (one
  empty), rows gathered by ids read from a tensor, a per-sample weighted
  sum, a mean and a max (zeros for the empty bag).
- j06: integer `/` and `%` by run-time values with negative operands: a
  scalar divisor, divisors 0 and -1 (with i32::MIN and i8's -128), i64;
  Python's floor division and modulo built from them; the host's on the
  nonzero divisors agreeing.
- j07: f16 at the edges of its range (ties to infinity, overflowing
  products, exp, reciprocals of subnormals, subnormal ties, f32 casts at
  65520, a tile sum accumulated in f32 and rounded once to infinity, casts
  of infinities and NaN to i32), bit for bit as NumPy's float16.
- j08: shapes at the edges: a transpose of [37, 23] in tiles of 16 (tile
  (j, i) read for tile (i, j)), the same into an output padded to [32, 48]
  with -1 past the input, a masked fill by a bool tensor in a kernel and
  the row softmax of it (a row all masked is NaN), and a 3-D tensor summed
  to one number through a [3, 2, 2] grid of partials.
- j09: log-softmax, cross-entropy with label smoothing 0.1 and an ignored
  label (-100), and its gradient, rows of 50 in tiles of 64 read with -inf
  padding, logits near 80 (their exp overflows f32).
- j10: a quantised 3x3 convolution of a u8 image with i8 weights (zero
  padding by reads past the edges), each input row times a band matrix of
  its taps by an integer `dot` (u8 and i8 widened to i16, summed in i32),
  requantised to u8 by TFLite's integer fixed point.
- j11: int8 and uint8 GEMMs of the tensor cores' shapes (16 x 8 x 32
  multiples; they run on `mma.sync.m16n8k32` unless `TILEC_INT8_MMA=0`,
  tests/backend/test_int8_mma.py), the u8 sums wrapping in i32.

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
i64 = np.int64


def _j01(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(i64), t["b"].astype(i64)
    assert t["a"].dtype == np.int8 and a.min() < -100 and a.max() > 100
    np.testing.assert_array_equal(t["c"], a @ b)  # |sum| < 40 * 2^14: no wrap
    ua, ub = t["ua"].astype(i64), t["ub"].astype(i64)
    assert t["ua"].dtype == np.uint8 and ua.max() > 250
    np.testing.assert_array_equal(t["uc"], ua @ ub)
    exact = t["ia"].astype(i64) @ t["ib"].astype(i64)
    assert exact.min() > 2**42  # every sum wraps
    np.testing.assert_array_equal(t["ic"], exact.astype(np.int32))  # two's complement: NumPy's wrap
    want = 9007199254740993 + t["la"] @ t["lb"]
    assert want.min() > 2**53
    np.testing.assert_array_equal(t["lc"], want)
    fa = t["fa"]
    g = fa.T @ fa
    np.testing.assert_allclose(t["g"], g, rtol=1e-15)
    d = t["g"][1, 1] - 2 * t["g"][0, 1] + t["g"][0, 0]  # |col1 - col0|^2 = 8 * (1e-9)^2, read through the sums
    assert abs(np.sum((fa[:, 1] - fa[:, 0]) ** 2) - 8e-18) < 1e-20 and abs(d) < 1e-6
    assert out == "[24, 16] true true true\n"


def _j02(t: Tensors, out: str) -> None:
    q, k, v = (t[n].astype(np.float64) for n in "qkv")
    s = q @ k.T * 0.25
    i, j = np.arange(40)[:, None], np.arange(40)[None, :]
    seen = (j <= i) & (j > i - 6)
    s = np.where(seen, s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    want = (p / p.sum(1, keepdims=True)) @ v
    np.testing.assert_allclose(t["o"], want, rtol=2e-3, atol=2e-3)  # p rounded to f16 before P V
    np.testing.assert_allclose(t["o"][0], v[0], rtol=0, atol=1e-6)  # the first query sees only itself
    assert out == "[40, 16] true\n"


def _j03(t: Tensors, out: str) -> None:
    x, w, eid = t["x"].astype(np.float64), t["w"].astype(np.float64).reshape(4, 32, 24), t["eid"]
    assert np.bincount(eid, minlength=4).tolist() == [9, 0, 20, 8]
    want = np.stack([x[r] @ w[eid[r]] for r in range(37)])
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-5)
    assert out == "[37, 24] 3 true\n"


def _j04(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    pos = 4093 + np.arange(9)[:, None, None]
    theta = pos * 10000.0 ** (-2 * np.arange(8) / 16)
    ev, od = x[..., 0::2], x[..., 1::2]
    want = np.empty_like(x)
    want[..., 0::2] = ev * np.cos(theta) - od * np.sin(theta)
    want[..., 1::2] = ev * np.sin(theta) + od * np.cos(theta)
    assert theta.max() > 4000
    np.testing.assert_allclose(t["o"], want, rtol=1e-5, atol=2e-6)
    assert out == "[9, 2, 16] true\n"


def _j05(t: Tensors, out: str) -> None:
    table, ids, off, wt = t["table"].astype(np.float64), t["ids"], t["offsets"], t["weights"].astype(np.float64)
    assert off.tolist() == [0, 3, 3, 10, 11, 23]
    for b in range(5):
        rows, w = table[ids[off[b]:off[b + 1]]], wt[off[b]:off[b + 1]]
        if len(rows) == 0:
            for k in ("sums", "means", "maxes"):
                np.testing.assert_array_equal(t[k][b], 0)
            continue
        assert b != 4 or len(set(ids[off[b]:off[b + 1]])) < len(rows)  # the last bag repeats ids
        np.testing.assert_allclose(t["sums"][b], (rows * w[:, None]).sum(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(t["means"][b], rows.mean(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(t["maxes"][b], rows.max(0).astype(np.float32))
    assert out == "Tensor<i32, [6]> [ 0,  3,  3, 10, 11, 23] 0.0 0.0\n"


def _trunc(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rust's `/` and `%` on Python integers, with a kernel's x / 0 == 0 and x % 0 == x."""
    q = [0 if y == 0 else abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(a.tolist(), b.tolist())]
    r = [x if y == 0 else x - y * qq for x, y, qq in zip(a.tolist(), b.tolist(), q)]
    return np.array(q, dtype=object), np.array(r, dtype=object)


def _wrap(v: np.ndarray, bits: int) -> np.ndarray:
    m = 1 << bits
    return np.array([(int(x) + m // 2) % m - m // 2 for x in v], dtype=np.int64)


def _j06(t: Tensors, out: str) -> None:
    x, y = t["x"].astype(np.int64), t["y"].astype(np.int64)
    assert x[0] == -2**31 and y[0] == -1 and (y == 0).any() and (y < 0).sum() > 5
    q, r = _trunc(x, y)
    np.testing.assert_array_equal(t["q"], _wrap(q, 32))  # MIN / -1 wraps to MIN
    np.testing.assert_array_equal(t["r"], _wrap(r, 32))
    qs, rs = _trunc(x, np.full(24, -7))
    np.testing.assert_array_equal(t["qs"], qs.astype(np.int64))
    np.testing.assert_array_equal(t["rs"], rs.astype(np.int64))
    nz = y != 0
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(t["fq"][nz & (x != -2**31)], (x // np.where(nz, y, 1))[nz & (x != -2**31)])
    np.testing.assert_array_equal(t["fm"][nz], (x % np.where(nz, y, 1))[nz])  # Python's modulo: the divisor's sign
    x8, y8 = _wrap(x, 8), _wrap(y, 8)
    assert x8[2] == -128 and y8[2] == -1
    q8, r8 = _trunc(x8, y8)
    np.testing.assert_array_equal(t["q8"], _wrap(q8, 8))
    np.testing.assert_array_equal(t["r8"], _wrap(r8, 8))
    q64, r64 = _trunc(x * 1000000007, y)
    np.testing.assert_array_equal(t["q64"], q64.astype(np.int64))
    np.testing.assert_array_equal(t["r64"], r64.astype(np.int64))
    assert out == "-2147483648 0 -128 0 0 2147483647 0\n"


def _j07(t: Tensors, out: str) -> None:
    x, y, w = t["x"], t["y"], t["w"]
    assert x.dtype == np.float16 and y.dtype == np.float16
    with np.errstate(all="ignore"):
        want = np.stack([x[0] + y[0], x[1] * y[1], np.exp(x[2]), x[3] / y[3], x[4] * y[4], w[5].astype(np.float16),
                         x[6] - y[6], x[7] * np.float16(0.5)])
    np.testing.assert_array_equal(t["o"], want)  # NaN where NaN
    assert np.isinf(want[0, :4]).all() and (want[0, 4:] == 65504).all() and np.isinf(want[2, :4]).all()
    assert (want[4, :4] == 0).all() and (want[4, 4:] == np.float16(2.0**-23)).all()
    assert (want[5, :2] == 65504).all() and (want[5, 2:4] == np.inf).all() and np.isnan(want[5, 6:]).all()
    np.testing.assert_array_equal(t["s"], np.full((1, 8), np.inf, np.float16))  # 80,000 rounded once
    np.testing.assert_array_equal(t["m32"], np.full((1, 8), 10000, np.float32))
    with np.errstate(invalid="ignore"):
        f = np.where(np.arange(8)[:, None] == 2, 0, want.astype(np.float64))
        ints = np.where(np.isnan(f), 0, np.clip(np.trunc(np.nan_to_num(f, nan=0, posinf=2**40, neginf=-2**40)),
                                                -2**31, 2**31 - 1)).astype(np.int64)
    np.testing.assert_array_equal(t["ints"], ints)
    assert out.startswith("Tensor<f16, [8]> [    inf,     inf,     inf,     inf, 65500.0, 65500.0, 65500.0, 65500.0] "
                          "inf 10000.0 Tensor<i32, [8]>\n")


def _j08(t: Tensors, out: str) -> None:
    x = t["x"]
    np.testing.assert_array_equal(t["o"], x.T)
    want = np.full((32, 48), -1, np.float32)
    want[:23, :37] = x.T
    np.testing.assert_array_equal(t["op"], want)
    s, mask = t["s"].astype(np.float64), t["mask"]
    r, c = np.arange(6)[:, None], np.arange(20)[None, :]
    assert (mask == ((c > r * 3) | (r == 4))).all()
    f = np.where(mask, -np.inf, s)
    with np.errstate(invalid="ignore"):
        e = np.exp(f - f.max(1, keepdims=True))
        want_p = e / e.sum(1, keepdims=True)
    assert np.isnan(want_p[4]).all()
    np.testing.assert_allclose(t["p"], want_p, rtol=1e-5, atol=1e-7, equal_nan=True)
    v = t["v"].astype(np.float64)
    parts = np.array([[[v[2 * i:2 * i + 2, 4 * j:4 * j + 4, 8 * k:8 * k + 8].sum() for k in range(2)]
                       for j in range(2)] for i in range(3)])
    np.testing.assert_allclose(t["part"], parts, rtol=1e-5)
    assert out == "[23, 37] -1.0 true true true\n"


def _j09(t: Tensors, out: str) -> None:
    x, labels = t["logits"].astype(np.float64), t["labels"]
    assert x[2].min() > 60 and (labels == -100).sum() == 1
    lp = x - (np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)) + x.max(1, keepdims=True))
    np.testing.assert_allclose(t["logp"], lp, rtol=1e-5, atol=1e-4)
    kept = labels != -100
    target = 0.1 / 50 + 0.9 * (np.arange(50)[None, :] == labels[:, None])
    n = kept.sum()
    loss = np.where(kept, -(target * lp).sum(1), 0) / n
    np.testing.assert_allclose(t["loss"][:, 0], loss, rtol=1e-5, atol=1e-6)
    grad = np.where(kept[:, None], np.exp(lp) - target, 0) / n
    np.testing.assert_allclose(t["grad"], grad, rtol=1e-4, atol=1e-7)
    # PyTorch's mean reduction: the sum of the rows' losses over the kept rows
    nll = -(lp[kept, labels[kept]]).mean()
    smooth = -lp[kept].mean(1).mean()
    np.testing.assert_allclose(t["loss"].sum(), 0.9 * nll + 0.1 * smooth, rtol=1e-5)
    assert out == "6 0.0 0.0 true true\n"


def _j10(t: Tensors, out: str) -> None:
    img, w = t["img"].astype(np.int64), t["w"].astype(np.int64).reshape(2, 3, 3)
    assert t["img"].dtype == np.uint8 and img.max() > 127 and w.min() < -100
    pad = np.pad(img, 1)
    acc = np.stack([sum(pad[dy:dy + 6, dx:dx + 12] * w[k, dy, dx] for dy in range(3) for dx in range(3))
                    for k in range(2)])
    want = np.clip(((acc * 300 + 32768) >> 16) + 128, 0, 255)
    assert (want == 0).any() and (want == 255).any()  # both clamps
    np.testing.assert_array_equal(t["y"], want.astype(np.uint8))
    assert out == "[2, 6, 12] 255 0 253\n"


def _j11(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(i64), t["b"].astype(i64)
    np.testing.assert_array_equal(t["c"], a @ b)
    exact = 2147480000 + t["ua"].astype(i64) @ t["ub"].astype(i64)
    assert exact.max() > 2**31  # some sums wrap
    np.testing.assert_array_equal(t["uc"], exact.astype(np.int32))
    assert out == "[40, 24] true\n"


CHECKS = {
    "j01_int_f64_products": _j01,
    "j02_sliding_window_attention": _j02,
    "j03_grouped_gemm_moe": _j03,
    "j04_rope_offset_interleaved": _j04,
    "j05_embedding_bag": _j05,
    "j06_int_div_runtime": _j06,
    "j07_f16_edges": _j07,
    "j08_transpose_pad_masked_fill": _j08,
    "j09_log_softmax_xent_grad": _j09,
    "j10_int8_conv2d_requant": _j10,
    "j11_int8_gemm_tensor_core_shapes": _j11,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "j*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")])
