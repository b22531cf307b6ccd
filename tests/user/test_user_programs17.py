"""Round 17 of the independent user's programs (huser17, 2026-12-06): what a PyTorch or Triton user ports
next, in domains rounds 1-16 did not take, written from README.md, docs/reference.md and examples/ alone.

- a01: the dQ pass of a causal grouped-query attention backward (FlashAttention-2's recomputation of P from
  the saved log-sum-exp, dS = P * (dO V^T - delta), dQ = dS K * scale): 4 query heads on 2 KV heads, S = 80.
- a02: a bf16 GEMM with an fp8-style dequantising epilogue (torch._scaled_mm's rowwise scales: one per row
  of A, one per column of B) and a bias, M = 72 (a partial row tile).
- a03: a separable 5-tap Gaussian blur (zero padding 2) in two passes over [16, 32] tiles: the halo is the
  neighbour tiles (index -1 and past the end read zeros), mixed in by band products.
- a04: 37 diagonally dominant 8x8 matrices inverted by Gauss-Jordan, 4 a block as [4, 8, 8] tiles.
- a05: torch's max_pool2d(3, stride 2, padding 1, return_indices=True): overlapping windows, the column
  2j - 1 shifted in by a 0/1 product (f32::MIN padding: 0 x -inf is NaN), first-maximum indices.
- a06: top-p sampling by hand: a temperature softmax over 1000 logits, the nucleus's threshold by
  bisection (no sort), the token where the kept probabilities' running sum passes u times their mass.
- a07: reductions over i64 (sum past 2^31, max/min/argmax/argmin with neutral padding, the running sum,
  counts) and bool (any/all as max/min), on the device and on the host.
- a08: conjugate gradients for a 2-D Poisson problem, matrix-free (the stencil a row at a time), the dot
  products added on the host, a host `while` loop reading the residual.
- a09: a mixed-precision optimizer step (GradScaler's unscale with a non-finite flag by `atomic_max`, then
  AdamW on f32 master weights with a bf16 copy, or the step skipped and the scale halved). Its step counter,
  `let mut t = 0; t += 1;` read as `t as f32`, was an `f32` (the cast typed the variable): it printed `2.0`,
  and such a counter stops at 2^24; a cast now converts the variable's value and types nothing
  (tests/run/let_mut_cast_keeps_its_type.tile; `let mut w = 300; w as u8` was E0222).
- a10: a CSR sparse times dense product whose CSR arrays are built on the host from per-row counts (an
  exclusive running sum as a masked sum, each nonzero's row by counting row ends), one row and column tile a
  block walking its run-time number of nonzeros.
- a11: a Kahan-compensated sum of values 1e8 apart, the running sum and its compensation carried per lane
  across a `while` walk: the simulated GPU must leave the same bits (element-wise f32 in the program's order).
- a12: causal attention with ALiBi (a per-head slope read before the loop) and Gemma-2's soft-capping, its
  causal rows made once before the loop: at BM = BN the Hopper attention pipeline declined it in silence (the
  IR shares that `arange` with the keys' in the loop); it now takes it (tests/backend/
  test_attention_shared_arange.py).
- a13 (hcliff5, not huser17's): a01's other half as a user writes it, the dK/dV pass of the same GQA backward, a
  key block of a KV head a block, one loop over the group's query heads and the query blocks from the diagonal.

Each program runs on the interpreter and is checked against NumPy from its own inputs; each but a08 runs
in the NVPTX simulator at sm_90a and sm_80 (a08's ~100 launches take minutes there: its kernels are a
stencil row, a row dot and two updates, and it runs on the GPU in test_user_gpu.py), and the PTX of every
one assembles on both.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _f(t: Tensors, *names: str) -> tuple[np.ndarray, ...]:
    return tuple(t[k].astype(np.float64) for k in names)


def _a01(t: Tensors, out: str) -> None:
    q, k, v, do, lse, delta = _f(t, "q", "k", "v", "d_o", "lse", "delta")
    sc = float(np.float32(0.17677669))
    want = np.zeros(q.shape)
    causal = np.tril(np.ones((80, 80)))
    for h in range(4):
        kv = h // 2
        p = np.exp(q[h] @ k[kv].T * sc - lse[h][:, None]) * causal
        ds = (p * (do[h] @ v[kv].T - delta[h][:, None])).astype(np.float16).astype(np.float64)  # cast to f16
        want[h] = ds @ k[kv] * sc
    np.testing.assert_allclose(t["dq"], want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
    assert out == "[4, 80, 32] true\n"


def _a02(t: Tensors, out: str) -> None:
    a, b, sa, sb, bias, c = _f(t, "a", "b", "sa", "sb", "bias", "c")
    want = (a @ b) * sa[:, None] * sb[None, :] + bias[None, :]
    np.testing.assert_allclose(c, want, rtol=8e-3, atol=1e-3 * np.abs(want).max())  # a bf16 result
    assert out == "[72, 128] true\n"


def _a03(t: Tensors, out: str) -> None:
    (img,) = _f(t, "img")
    w = np.array([1, 4, 6, 4, 1]) / 16
    h, wd = img.shape
    pad = np.pad(img, 2)
    tmp = sum(w[k] * pad[2:-2, k:k + wd] for k in range(5))
    pt = np.pad(tmp, ((2, 2), (0, 0)))
    np.testing.assert_allclose(t["tmp"], tmp, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["out"], sum(w[k] * pt[k:k + h] for k in range(5)), rtol=1e-5, atol=1e-6)
    assert out == "1.0 [50, 70]\n"


def _a04(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["ainv"], np.linalg.inv(t["a"].astype(np.float64)), rtol=1e-4, atol=1e-5)
    assert out == "[37, 8, 8]\n"


def _a05(t: Tensors, out: str) -> None:
    x = t["x"]
    p, h, w = x.shape
    y, ix = np.zeros((p, 9, 11), np.float32), np.zeros((p, 9, 11), np.int64)
    for c in range(p):
        for i in range(9):
            for j in range(11):
                win = [(x[c, r, s], r * w + s) for r in range(2 * i - 1, 2 * i + 2) for s in range(2 * j - 1, 2 * j + 2)
                       if 0 <= r < h and 0 <= s < w]
                best = max(v for v, _ in win)
                y[c, i, j], ix[c, i, j] = best, next(at for v, at in win if v == best)  # the first maximum
    np.testing.assert_array_equal(t["y"], y)
    np.testing.assert_array_equal(t["idx"], ix)
    assert out == f"[{p}, 9, 11] {ix.max()}\n"


def _a06(t: Tensors, out: str) -> None:
    (lg,) = _f(t, "logits")
    lg = lg / 0.8
    p = np.exp(lg - lg.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    for b in range(p.shape[0]):
        order = np.argsort(-p[b])
        k = int(np.searchsorted(np.cumsum(p[b][order]), 0.9)) + 1  # the shortest prefix of mass >= 0.9
        q = np.zeros(p.shape[1])
        q[order[:k]] = p[b][order[:k]]
        assert t["kept"][b] == k and abs(t["mass"][b] - q.sum()) < 1e-5, (b, k, t["kept"][b])
        assert t["tok"][b] == int(np.argmax(np.cumsum(q) > t["u"][b] * q.sum())), b
    assert len(set(t["kept"])) > 1 and out == "true true\n"


def _a07(t: Tensors, out: str) -> None:
    x = t["x"]
    assert x.dtype == np.int64 and t["s"].dtype == np.int64
    want = np.stack([x.sum(1), x.max(1), x.min(1), x.argmax(1), x.argmin(1), np.cumsum(x, 1).max(1), (x > 0).sum(1),
                     np.zeros(len(x), np.int64)], 1)
    np.testing.assert_array_equal(t["s"], want)
    ev = (x % 2 == 0) | (np.arange(len(x)) == 0)[:, None]
    np.testing.assert_array_equal(t["flags"], np.stack([ev.any(1), ev.all(1)], 1))
    assert np.abs(want[:, 0]).max() > 2**31 and t["flags"][:, 1].any() and not t["flags"][:, 1].all()
    assert out == f"true {x.max()} {x.min()} {x.argmax()}\n", out


def _a08(t: Tensors, out: str) -> None:
    (f,) = _f(t, "f")
    h, w = f.shape
    a = 4 * np.eye(h * w)
    for i in range(h):
        for j in range(w):
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= i + di < h and 0 <= j + dj < w:
                    a[i * w + j, (i + di) * w + j + dj] = -1
    u = np.linalg.solve(a, f.ravel()).reshape(h, w)
    np.testing.assert_allclose(t["x"], u, rtol=0, atol=1e-4 * np.abs(u).max())
    # the recurrence's residual is the true one's, to f32's rounding
    np.testing.assert_allclose(t["res"], f - (a @ t["x"].astype(np.float64).ravel()).reshape(h, w), atol=1e-4)
    assert sorted(t) == ["f", "res", "x"] and out == "true true\n[12, 20] [12, 20]\n"


def _a09(t: Tensors, out: str) -> None:
    p = t["p0"].copy()
    m, v = np.zeros_like(p), np.zeros_like(p)
    scale, steps = np.float32(65536.0), 0
    for step in range(3):
        with np.errstate(over="ignore"):
            g16 = (t["grads"][step] * np.float32(1e4 if step == 1 else 1.0) * scale).astype(np.float16)
        g = g16.astype(np.float32) * (np.float32(1) / scale)
        if not np.isfinite(g).all():   # the skipped step: the scale halved
            scale *= np.float32(0.5)
            continue
        steps += 1
        c1, c2 = np.float32(1 - 0.9**steps), np.float32(1 - 0.999**steps)
        m = m * np.float32(0.9) + g * np.float32(0.1)
        v = v * np.float32(0.999) + g * g * np.float32(1 - 0.999)
        p = p * np.float32(1 - 1e-3 * 0.01) - np.float32(1e-3) * (m / c1) / (np.sqrt(v / c2) + np.float32(1e-8))
    np.testing.assert_allclose(t["p"], p, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(t["m"], m, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(t["pb"], p, rtol=8e-3)   # the bf16 copy
    # `t`, the steps taken, is an i32 counter though read as `t as f32` (it was an f32, printed `2.0`)
    assert out == "2 1 32768.0\n", out


def _a10(t: Tensors, out: str) -> None:
    counts = (np.arange(50) * 3) % 10
    rp = np.concatenate([[0], np.cumsum(counts)])
    np.testing.assert_array_equal(t["row_ptr"], rp)   # the host's CSR construction
    a = np.zeros((50, 70))
    for r in range(50):
        for e in range(counts[r]):
            assert t["col_idx"][rp[r] + e] == (r * 7 + e * 11) % 70
            a[r, t["col_idx"][rp[r] + e]] += t["vals"][rp[r] + e]
    np.testing.assert_allclose(t["c"], a @ t["b"].astype(np.float64), rtol=1e-5, atol=1e-5)
    assert out == "225 225 [50, 40]\n"


def _a11(t: Tensors, out: str) -> None:
    exact = math.fsum(t["x"].astype(np.float64))
    kahan = t["s"].astype(np.float64).sum() - t["c"].astype(np.float64).sum()
    plain = t["plain"].astype(np.float64).sum()
    assert abs(kahan - exact) < 1e-2 and abs(plain - exact) > 1e3, (kahan - exact, plain - exact)
    assert out == "true true\n"


def _a12(t: Tensors, out: str) -> None:
    q, k, v, sl = _f(t, "q", "k", "v", "slopes")
    h, s, _ = q.shape
    np.testing.assert_allclose(sl, 2.0 ** (-8.0 * (np.arange(h) + 1) / h))
    i, j = np.arange(s)[:, None], np.arange(s)[None, :]
    want = np.zeros(q.shape)
    for x in range(h):
        sc = np.tanh(q[x] @ k[x].T * 0.125 / 30.0) * 30.0 + (j - i) * sl[x]
        p = np.exp(np.where(j <= i, sc, -np.inf) - sc.max(1, keepdims=True))
        want[x] = (p / p.sum(1, keepdims=True)) @ v[x]
    np.testing.assert_allclose(t["o"].astype(np.float64), want, rtol=5e-3, atol=5e-3)   # f16 out, P in f16
    assert out == "[4, 100, 64] true\n"


def _a13(t: Tensors, out: str) -> None:
    q, k, v, do, lse, delta = _f(t, "q", "k", "v", "d_o", "lse", "delta")
    sc = float(np.float32(0.17677669))
    dk, dv = np.zeros(k.shape), np.zeros(v.shape)
    causal = np.tril(np.ones((80, 80)))
    f16 = lambda x: x.astype(np.float16).astype(np.float64)  # noqa: E731 (the products' operands)
    for h in range(4):
        kv = h // 2
        p = np.exp(q[h] @ k[kv].T * sc - lse[h][:, None]) * causal
        dv[kv] += f16(p).T @ do[h]
        dk[kv] += f16(p * (do[h] @ v[kv].T - delta[h][:, None])).T @ q[h] * sc
    np.testing.assert_allclose(t["dk"], dk, rtol=2e-3, atol=2e-3 * np.abs(dk).max())
    np.testing.assert_allclose(t["dv"], dv, rtol=2e-3, atol=2e-3 * np.abs(dv).max())
    assert out == "[2, 80, 32] [2, 80, 32] true true\n"


CHECKS = {"a01_gqa_attention_backward_dq": _a01, "a02_scaled_mm_rowwise_bf16": _a02,
          "a03_gaussian_blur_separable": _a03, "a04_batched_inverse_gauss_jordan": _a04,
          "a05_maxpool3x3_indices": _a05, "a06_top_p_bisection": _a06, "a07_int64_bool_reductions": _a07,
          "a08_conjugate_gradient_poisson": _a08, "a09_amp_adamw_skip_step": _a09,
          "a10_csr_spmm_host_built": _a10, "a11_kahan_sum": _a11, "a12_alibi_softcap_attention": _a12,
          "a13_gqa_attention_backward_dkdv": _a13}
SIMULATED = sorted(set(CHECKS) - {"a08_conjugate_gradient_poisson"})

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "a*.tile", CHECKS, [(n, a) for n in SIMULATED for a in ("sm_90a", "sm_80")],
    sim_tol={"a01_gqa_attention_backward_dq": 1e-4, "a13_gqa_attention_backward_dkdv": 1e-4, "a02_scaled_mm_rowwise_bf16": 1e-2, "a11_kahan_sum": 0.0,
             "a12_alibi_softcap_attention": 2e-3},
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")],
    # simulations over ~2.5 s on an idle core (a03 4.2 s, a06 ~5 s, a12 11 s: its sm_90a pipeline path is
    # test_attention_shared_arange's default simulation): each runs on the GPU in test_user_gpu.py, and on the
    # interpreter and through ptxas by default
    heavy=["a03_gaussian_blur_separable", "a06_top_p_bisection", "a12_alibi_softcap_attention"])


def test_a_loop_of_three_products_is_told_why_no_pipeline_takes_it() -> None:
    """a01's dQ loop (S = Q K^T, dP = dO V^T, dQ += dS K) ran on mma.sync with its loads into registers, and
    `--explain` said only the path: the attention pipeline's pass looks at loops of two products, the GEMM
    pipeline's matcher left a loop of more without a note. It now says how many and what each pipeline takes."""
    from tilelang import driver
    from tilelang.backend import explain, lower_gpu
    from userprog import DIR

    src = (DIR / "a01_gqa_attention_backward_dq.tile").read_text(encoding="utf-8")
    k = next(x for x in driver.compile(src, "ir").output if x.name == "attn_dq")
    gk = lower_gpu(k, "sm_90a", {})
    # since hcliff4 (2026-12-06) the products pipeline takes the loop; the note is the path before it
    assert explain.path_of(gk) == "products-pipeline" and explain.refusals(gk) == []
    with pytest.MonkeyPatch.context() as m:
        m.setenv("TILEC_PRODUCTS_PIPELINE", "0")
        gk = lower_gpu(k, "sm_90a", {})
    assert explain.path_of(gk) == "mma.sync"
    # (with no facts, `k` and `v` are not known to be 16-byte rows: `stream_mma`'s load ring says so too)
    (note,) = [n for n in explain.refusals(gk) if "load ring" not in n.message]
    assert "the loop holds 3 products" in note.message and "the attention pipeline two" in note.message, note.message
