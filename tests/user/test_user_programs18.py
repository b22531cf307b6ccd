"""Round 18 of the independent user's programs (huser18, 2026-12-06): kernels in domains rounds 1-17 did not
take, written from README.md, docs/reference.md and examples/ alone.

- t01: rotary embeddings' backward (GPT-NeoX's rotate-half), bf16 gradients, the halves read and stored as
  tiles 0 and 1 of a half-width partition; checked by the adjoint identity against its forward. Its own
  tile is `[1, BT, 2 * HD]`: a partition of [1, 16, 64] was "cannot infer `HD`" (the help: give it); a
  dimension linear in one generic is now solved (HD = 32), in Tile launches and in the Python API.
- t02: RMSNorm's backward (dx, and dw summed over the blocks' shares by the last block), rows of 80 in
  tiles of 128.
- t03: paged decode attention (vLLM): a block table of run-time page ids, pages of 16 positions, grouped
  query heads, lengths from a tensor.
- t04: all-pairs shortest paths by (min, +) squaring (a tiled GEMM in the tropical semiring, +inf padding)
  and by Floyd-Warshall (a launch a pivot, ping-pong on the host).
- t05: ELLPACK SpMV, the gather of x by a one-hot comparison over x's tiles.
- t06: a Markov chain's 37-step transition matrix by square-and-multiply on the host.
- t07: 4 x 4 rigid transforms of point clouds and their inverses ([1, 3, 3] and [1, 3, 1] tiles of a pose).
- t08: torchvision's sigmoid focal loss and BCEWithLogits(pos_weight) in stable forms, saturated logits,
  means by `atomic_add`.
- t09: F.interpolate(bilinear, align_corners=False) to run-time sizes, the columns by a weight-matrix product.
- t10: torch.linalg.lu_factor (partial pivoting) of a batch of 8 x 8 matrices, rows swapped by masks.
- t11: a count-min sketch of u32 keys (multiply-shift hashes, one-hot counts added by `atomic_add`).
- t12: an integral image (two carried scans) and rectangle sums by corner reads.
- t13: a polynomial product modulo 998244353 by number-theoretic transforms (u64 products, a launch a stage on
  the host's [groups, 2, h] view). Its `(2 * h) as u64` made the `let mut h = 1` a `u64`, and with it the
  `for j in 0..h` beside an `i32` `arange` (E0201): a cast of arithmetic on an untyped `let mut` converts the
  value and types nothing now, as a cast of the variable itself did since round 17.
- t14: connected components by label propagation: `atomic_min` of each edge's smaller label into both ends,
  host sweeps until nothing changes (its `(next != labels).max().item()`, PyTorch's habit, is u05).
- t15: torch.linalg.matrix_exp of 30 4 x 4 f64 matrices by scaling and squaring, the batched products as
  broadcast products summed over K (`dot` of [8, 4, 4] tiles, torch.matmul's batch, is u06).
- t16: nearest-neighbour retrieval by cosine similarity (bf16 `mma`, per-block best by `argmax`, merged by the
  last block of each query tile over the group's tiles).
- t17: a W8A8 linear layer: int8 activations (per-row scales) times int8 weights (per-column scales) by `mma` into
  i32, dequantised to bf16 with a bias. `--explain`: sm_80's cp.async ring with ldmatrix + mma.sync (the int8
  tensor cores, `mma.sync.m16n8k32`, on by default since 2026-12-06; `TILEC_INT8_MMA=0`: scalar FMAs).

Each runs on the interpreter and is checked against NumPy from its own inputs, in the NVPTX simulator at
sm_90a and sm_80 (over ~2.5 s there: `heavy`, each still run on the interpreter, through ptxas and in
test_user_gpu.py), and its PTX assembles on both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _f(t: Tensors, *names: str) -> tuple[np.ndarray, ...]:
    return tuple(t[k].astype(np.float64) for k in names)


def _t01(t: Tensors, out: str) -> None:
    dy, cos, sin, x = _f(t, "dy", "cos", "sin", "x")
    theta = 10000.0 ** (-np.arange(32) / 32)
    np.testing.assert_allclose(cos, np.cos((np.arange(50)[:, None] + 7) * theta), atol=2e-5)
    g1, g2 = dy[..., :32], dy[..., 32:]
    want = np.concatenate([g1 * cos + g2 * sin, g2 * cos - g1 * sin], -1)
    np.testing.assert_allclose(t["dx"], want, rtol=8e-3, atol=8e-3)   # a bf16 result
    x1, x2 = x[..., :32], x[..., 32:]
    np.testing.assert_allclose(t["y"], np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1), atol=1e-5)
    assert out == "[4, 50, 64] true\n"


def _t02(t: Tensors, out: str) -> None:
    x, w, dy = _f(t, "x", "w", "dy")
    r = 1 / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6)
    gw = dy * w
    dx = r * gw - x * r**3 * (gw * x).sum(1, keepdims=True) / 80
    np.testing.assert_allclose(t["dx"], dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t["dw"][0], (dy * x * r).sum(0), rtol=1e-4, atol=1e-4)
    assert out == "[70, 80] [1, 80]\n"


def _t03(t: Tensors, out: str) -> None:
    q, kp, vp = _f(t, "q", "k_pool", "v_pool")
    table, lens = t["table"], t["lens"]
    assert list(lens) == [37, 100, 5] and all(len(set(r)) == 8 for r in table)
    want = np.zeros((3, 4, 64))
    for b in range(3):
        pos = np.arange(lens[b])
        rows = table[b][pos // 16] * 16 + pos % 16   # each position's row of the pool
        for h in range(4):
            k, v = kp[h // 2][rows], vp[h // 2][rows]
            s = q[b, h] @ k.T * 0.125
            p = np.exp(s - s.max())
            want[b, h] = (p / p.sum()) @ v
    np.testing.assert_allclose(t["o"], want, rtol=2e-3, atol=2e-3)   # P rounded to f16 for the PV product
    assert out == "[3, 4, 64] 21 Tensor<i32, [3]> [ 37, 100,   5]\n"


def _t04(t: Tensors, out: str) -> None:
    d = t["d0"].astype(np.float64)
    n = len(d)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    assert np.array_equal(np.isfinite(d), ((i * 5 + j * 11) % 7 == 0) | (i == j))
    for k in range(n):   # Floyd-Warshall in NumPy
        d = np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :])
    np.testing.assert_array_equal(t["a"], d)   # sums of small integers: exact
    np.testing.assert_array_equal(t["f"], d)
    assert out == f"{int(np.isfinite(d).sum())} inf\n" and np.isinf(d).any()


def _t05(t: Tensors, out: str) -> None:
    cols, vals, x = t["cols"], t["vals"].astype(np.float64), t["x"].astype(np.float64)
    a = np.zeros((90, 70))
    for r in range(90):
        for s in range(6):
            if cols[r, s] >= 0:
                a[r, cols[r, s]] += vals[r, s]
            else:
                assert vals[r, s] == 0
    np.testing.assert_allclose(t["y"], a @ x, rtol=1e-5, atol=1e-5)
    assert out == "[90] 267 267\n"


def _t06(t: Tensors, out: str) -> None:
    (p,) = _f(t, "p")
    np.testing.assert_allclose(t["result"], np.linalg.matrix_power(p, 37), rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(t["base"], np.linalg.matrix_power(p, 32), rtol=1e-4, atol=1e-7)
    assert out == "[48, 48] true true\n"


def _t07(t: Tensors, out: str) -> None:
    poses, pts = _f(t, "poses", "pts")
    for b in range(5):
        r, tr = poses[b, :3, :3], poses[b, :3, 3]
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-6)   # a rotation
        np.testing.assert_allclose(poses[b, 3], [0, 0, 0, 1])
        np.testing.assert_allclose(tr, [b, -2 * b, 0.5], atol=1e-6)
        np.testing.assert_allclose(t["moved"][b], pts[b] @ r.T + tr, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t["back"], pts, atol=1e-4)
    assert out == "[5, 4, 4] [5, 70, 3] 1.0\n"


def _t08(t: Tensors, out: str) -> None:
    x, y = _f(t, "x", "y")
    assert (x == 40).any() and (x == -40).any() and (x == 0).any()
    p = 1 / (1 + np.exp(-x))
    ce = np.logaddexp(0, -x) * y + np.logaddexp(0, x) * (1 - y)
    p_t = p * y + (1 - p) * (1 - y)
    focal = (0.25 * y + 0.75 * (1 - y)) * ce * (1 - p_t) ** 2
    bce = 3.0 * y * np.logaddexp(0, -x) + (1 - y) * np.logaddexp(0, x)
    np.testing.assert_allclose(t["per"], focal, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["sums"], [focal.sum(), bce.sum()], rtol=1e-5)
    assert out == "[1000] true true\n"


def _resize(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """PyTorch's bilinear interpolation, align_corners=False, in float64."""
    def axis(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        src = np.maximum((np.arange(n_out) + 0.5) * np.float32(n_in / n_out) - 0.5, 0)
        i0 = np.floor(src).astype(int)
        return i0, np.minimum(i0 + 1, n_in - 1), src - i0
    y0, y1, ly = axis(img.shape[1], h)
    x0, x1, lx = axis(img.shape[2], w)
    rows = img[:, y0] * (1 - ly)[:, None] + img[:, y1] * ly[:, None]
    return rows[:, :, x0] * (1 - lx) + rows[:, :, x1] * lx


def _t09(t: Tensors, out: str) -> None:
    (img,) = _f(t, "img")
    up = _resize(img, 50, 29)
    np.testing.assert_allclose(t["up"], up, atol=1e-5)
    np.testing.assert_allclose(t["back"], _resize(t["up"].astype(np.float64), 37, 45), atol=1e-5)
    assert out == "[3, 50, 29] [3, 37, 45] true true\n"


def _t10(t: Tensors, out: str) -> None:
    a = t["a"].astype(np.float64)
    assert (a[::3, 0, 0] == 0).all()
    for b in range(21):
        m, piv = a[b].copy(), np.zeros(8, int)
        for k in range(8):   # LAPACK's getrf, unblocked
            p = k + int(np.argmax(np.abs(m[k:, k])))
            piv[k] = p + 1
            m[[k, p]] = m[[p, k]]
            m[k + 1:, k] /= m[k, k]
            m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
        np.testing.assert_array_equal(t["piv"][b], piv)
        np.testing.assert_allclose(t["lu"][b], m, rtol=1e-4, atol=1e-4)
        lo, up = np.tril(t["lu"][b], -1) + np.eye(8), np.triu(t["lu"][b])
        perm = np.arange(8)
        for k in range(8):
            perm[[k, piv[k] - 1]] = perm[[piv[k] - 1, k]]
        np.testing.assert_allclose(lo @ up, a[b][perm], atol=1e-4)   # P A = L U
    assert out == "[21, 8, 8] true true true\n"


def _t11(t: Tensors, out: str) -> None:
    keys, vals, mult = (t[k].astype(np.uint64) for k in ("keys", "vals", "mult"))
    m32 = np.uint64(0xFFFFFFFF)
    assert len(set(vals.tolist())) == 500
    sk = np.zeros((4, 128), np.int64)
    for r in range(4):
        np.add.at(sk[r], ((keys * mult[r]) & m32) >> np.uint64(25), 1)
    np.testing.assert_array_equal(t["sketch"], sk)
    est = np.min([sk[r][((vals * mult[r]) & m32) >> np.uint64(25)] for r in range(4)], 0)
    np.testing.assert_array_equal(t["est"], est)
    true = np.array([(keys == v).sum() for v in vals])
    assert (est >= true).all() and (est == true).sum() > 100   # never under, often exact
    assert out == "3000 12000 true\n"


def _t12(t: Tensors, out: str) -> None:
    img = t["img"].astype(np.int64)
    sat = img.cumsum(0).cumsum(1)
    np.testing.assert_array_equal(t["rows"], img.cumsum(1))
    np.testing.assert_array_equal(t["sat"], sat)
    want = [img[r0:r1 + 1, c0:c1 + 1].sum() for r0, c0, r1, c1 in t["rects"]]
    np.testing.assert_array_equal(t["sums"], want)
    assert out == "true [40]\n"


def _t13(t: Tensors, out: str) -> None:
    p = 998244353
    a, b = (t[k].astype(object) for k in ("a", "b"))
    assert not a[64:].any() and not b[64:].any()
    want = [sum(int(a[i]) * int(b[k - i]) for i in range(max(0, k - 63), min(k, 63) + 1)) % p for k in range(128)]
    np.testing.assert_array_equal(t["c"].astype(np.int64), want)
    fa = [sum(int(a[i]) * pow(3, (p - 1) // 128 * i * k, p) for i in range(64)) % p for k in range(128)]
    np.testing.assert_array_equal(t["fa"].astype(np.int64), fa)   # the forward transform: a(w^k), w = 3^((p-1)/128)
    assert out == "[128] true true\n"


def _t14(t: Tensors, out: str) -> None:
    u, v = t["u"], t["v"]
    parent = list(range(200))

    def find(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x
    for a, b in zip(u, v, strict=True):
        ra, rb = find(int(a)), find(int(b))
        parent[max(ra, rb)] = min(ra, rb)
    want = [find(x) for x in range(200)]   # each node's component's smallest index
    np.testing.assert_array_equal(t["labels"], want)
    assert len(set(want)) == 50 and out == "true 50 true\n"


def _t15(t: Tensors, out: str) -> None:
    a = t["a"]
    want = np.zeros_like(a)
    for b in range(len(a)):   # a longer series on a smaller scale: 30 terms of A / 2^10, squared 10 times
        x, term, total = a[b] / 1024, np.eye(4), np.eye(4)
        for k in range(1, 31):
            term = term @ x / k
            total = total + term
        for _ in range(10):
            total = total @ total
        want[b] = total
    np.testing.assert_allclose(t["e"], want, rtol=1e-10, atol=1e-12)
    assert out == "[30, 4, 4] true\n"


def _t16(t: Tensors, out: str) -> None:
    q, db = _f(t, "q", "db")
    s = q @ db.T
    best = s.max(1)
    got = t["out_i"][:, 0]
    np.testing.assert_allclose(s[np.arange(40), got], best, atol=1e-5)   # the best row (a near-tie either way)
    np.testing.assert_allclose(t["out_s"][:, 0], best, atol=1e-5)
    assert (got[::5] == (np.arange(0, 40, 5) * 37) % 1000).all()          # the planted neighbours
    for blk in range(8):   # each block's own best among its 128 rows
        part = s[:, blk * 128:(blk + 1) * 128]
        np.testing.assert_allclose(t["best_s"][:, blk], part.max(1), atol=1e-5)
        assert (t["best_i"][:, blk] >= blk * 128).all() and (t["best_i"][:, blk] < min(1000, blk * 128 + 128)).all()
    assert out == "true true true\n"


def _t17(t: Tensors, out: str) -> None:
    x, w, bias, sa, sb = _f(t, "x", "w", "bias", "sa", "sb")
    aq, bq = t["aq"].astype(np.int64), t["bq"].astype(np.int64)
    np.testing.assert_allclose(sa, np.abs(x).max(1) / 127, rtol=1e-6)
    np.testing.assert_array_equal(aq, np.floor(x / sa[:, None].astype(np.float32) + 0.5).astype(np.int64))
    want = (aq @ bq) * sa[:, None] * sb[None, :] + bias   # the i32 sums are exact
    np.testing.assert_allclose(t["c"], want, rtol=8e-3, atol=8e-3 * np.abs(want).max())   # a bf16 result
    assert np.abs(t["c"] - x @ w - bias).max() < 0.1 * np.abs(x @ w).max()   # near the unquantised layer
    assert out == "[72, 96] 127 127\n"


CHECKS = {"t01_rope_backward": _t01, "t02_rmsnorm_backward": _t02, "t03_paged_decode_attention": _t03,
          "t04_minplus_apsp": _t04, "t05_ell_spmv": _t05, "t06_markov_matrix_power": _t06,
          "t07_rigid_transforms": _t07, "t08_focal_bce_logits": _t08, "t09_bilinear_resize": _t09,
          "t10_batched_lu_pivoting": _t10, "t11_count_min_sketch": _t11, "t12_integral_image_queries": _t12,
          "t13_ntt_polymul": _t13, "t14_connected_components": _t14, "t15_batched_expm": _t15,
          "t16_nearest_neighbour_retrieval": _t16, "t17_int8_gemm_dequant_bf16": _t17}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "t*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    sim_tol={"t01_rope_backward": 1e-2, "t03_paged_decode_attention": 1e-4, "t06_markov_matrix_power": 1e-6},
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    # simulations over ~2.5 s on an idle core (2026-12-06, sm_90a: t03 3.9 s, t04 23 s, t06 3.1 s, t09 90 s
    # (11 s since hcliff8's gather_dot), t10 5.8 s, t11 21 s, t12 4.0 s, t13 8.9 s, t14 5.2 s, t16 9.2 s, t17 9.0 s)
    heavy=["t03_paged_decode_attention", "t04_minplus_apsp", "t06_markov_matrix_power", "t09_bilinear_resize",
           "t10_batched_lu_pivoting", "t11_count_min_sketch", "t12_integral_image_queries", "t13_ntt_polymul",
           "t14_connected_components", "t16_nearest_neighbour_retrieval", "t17_int8_gemm_dequant_bf16"])
