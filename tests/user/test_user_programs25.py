"""Round 25 of the independent user's programs (huser26, 2026-12-07): pieces of a PyTorch model ported to Tile
by a demanding ML engineer, in areas rounds 1-24 took least, written from BRIEF.md, README.md, docs/reference.md
and examples/ alone.

- n01: cross-entropy over a vocabulary of 1000 in chunks (online log-sum-exp), `ignore_index` and label
  smoothing, the mean by atomics, and its backward from the saved log-sum-exp.
- n02: AdamW over three parameters of different shapes (1-D and 2-D kernels), five steps in place.
- n03: GroupNorm forward and backward on [N * G, C / G, H * W] tiles wider than the pixels, dgamma and dbeta by
  atomics.
- n04: a GRU cell over a 5-step sequence, the hidden rows updated in place, gates from a tuple-returning
  generic device function.
- n05: a repetition penalty, temperature and top-p sampling by pairwise ranks, a token drawn by inverse CDF.
- n06: a 4-bit weight-only quantised linear layer: packing by a kernel, dequantised in the K loop into `mma`s.
- n07: Mamba's decoding step (conv state shifted by a 0/1 product, selective state update) over 4 tokens.
- n08: a KV-cache append at per-sequence run-time positions read on the device, then GQA decoding.
- n09: Qwen3's per-head QK RMSNorm + NeoX RoPE in place through one generic device function. Found: its
  `[BT, H, D]` tile reshaped to `[BT, H, 2, D / 2]` was E0208 with "write the tile's dimensions with the generics
  of `BT * H * (D / 2) * 2`", then the function's `[.., 2 * HD]` parameters could not give `HD` (E0215, "give it
  explicitly: `norm_rope::<..>(..)`", even from a kernel whose own tile was `[.., 2 * HD]`), and the explicit
  `{ D / 2 }` a mismatch of `(D / 2) * 2` against `D`: test_user_wrong28.py's s02 and its fixes.
- n10: a top-2 MoE router: renormalised weights, per-expert counts and probability sums by atomics, the
  load-balancing loss, slots within each expert by a `cumsum`, a capacity.
- n11: the embedding backward with `padding_idx` and `scale_grad_by_freq`: counts and rows by atomics, against
  a one-hot `dot` a vocabulary row.
- n12: dynamic loss scaling (unscale, an inf/NaN flag by `atomic_max`, skipped steps) with the global-norm clip
  and SGD with momentum.
- n13: LAMB: the trust ratio of each layer from partial norms summed by the group's last block.
- n14: a softmax-regression training step as four kernels of one module, also driven from Python on NumPy
  arrays in place for five steps (`test_the_train_step_module_runs_from_python_on_numpy_arrays_in_place`).
- n15: beam search bookkeeping: log-softmax + scores, the best 3 of 3 x 20 by repeated argmax, finished beams
  offering only EOS, histories rebuilt from the parents' rows into a second buffer swapped by moves.
- n16: the SwiGLU backward in bf16 (and f32) from one generic kernel, each value the f32 one rounded once.
- n17: a distillation KL over a vocabulary of 3000 in chunks (f16 logits, a masked teacher row, a student row
  equal to its teacher) and its gradient.
- n18: an NF4 GEMV: 4-bit codes unpacked by a `where` + reshape, looked up in the table by a one-hot sum, the
  double-quantised absmax.
- n19: the backward of a fused residual add + RMSNorm, dw summed by the group's last block in the same launch.
- n20: n14's kernels imported with `use`, recorded in a `graph { }` with a kernel zeroing the loss, replayed 6
  times.
- n21: Mamba-2's chunked SSD scan: segment sums by `cumsum`, the intra-chunk product, the carried state, each
  chunk's rows stored by a nested partition's `store`, against the sequential recurrence.
- n22: n04's GRU step as a tile walk (`for s in tiles(0)`), the weights loaded once a block before the walk.
- n23: speculative decoding's acceptance: a draft token accepted with probability min(1, p / q), else one drawn
  from the residual max(p - q, 0) by inverse CDF along a `cumsum`.
- n24: Liger's fused linear + cross-entropy forward: each vocabulary chunk's logits one `mma` folded into an online
  log-sum-exp, never stored, against materialised logits.

Each runs on the interpreter and is checked against NumPy from its own inputs, in the NVPTX simulator at sm_90a
(the slow ones `heavy`), and its PTX assembles for sm_90a.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even), as f32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def _n01(t: Tensors, out: str) -> None:
    x, tgt = t["x"].astype(np.float64), t["target"]
    n, v = x.shape
    eps = 0.1
    lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    keep = tgt != -100
    safe = np.where(keep, tgt, 0)
    row = lse - (1 - eps) * x[np.arange(n), safe] - eps / v * x.sum(1)
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-5)
    np.testing.assert_allclose(t["loss"], np.where(keep, row, 0), rtol=1e-5, atol=1e-5)
    assert int(t["kept"][0]) == keep.sum() == 30
    np.testing.assert_allclose(t["total"][0], row[keep].sum(), rtol=1e-5)
    p = np.exp(x - lse[:, None])
    want = np.full((n, v), eps / v)
    want[np.arange(n), safe] += 1 - eps
    dx = np.where(keep[:, None], (p - want) / keep.sum(), 0)
    np.testing.assert_allclose(t["dx"], dx, rtol=1e-4, atol=1e-7)
    assert (tgt[keep] < v).all() and (t["loss"][~keep] == 0).all() and out == "30 true true 0.0\n"


def _adamw(p: np.ndarray, gs: np.ndarray) -> np.ndarray:
    p = p.astype(np.float64)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for step, g in enumerate(gs.astype(np.float64), 1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        p = p * (1 - 1e-2 * 0.01) - 1e-2 * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return p


def _n02(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["bias"], _adamw(t["bias0"], t["gbs"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["w"], _adamw(t["w0"], t["gws"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["conv"], _adamw(t["conv0"], t["gcs"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["mw"], 0.1 * sum(0.9 ** (4 - i) * t["gws"][i] for i in range(5)), rtol=1e-5,
                               atol=1e-6)
    assert t["gws"].shape == (5, 17, 40) and out == "true true true\n"


def _n03(t: Tensors, out: str) -> None:
    x, dy = t["x"].astype(np.float64), t["dy"].astype(np.float64)
    groups = 4
    gamma = t["gamma"].astype(np.float64)[np.arange(12) % groups][:, :, None]
    beta = t["beta"].astype(np.float64)[np.arange(12) % groups][:, :, None]
    mean = x.mean((1, 2), keepdims=True)
    rstd = 1 / np.sqrt(x.var((1, 2), keepdims=True) + 1e-5)
    xhat = (x - mean) * rstd
    np.testing.assert_allclose(t["y"], xhat * gamma + beta, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t["stats"], np.stack([mean.ravel(), rstd.ravel()], 1), rtol=1e-5, atol=1e-6)
    wdy = dy * gamma
    dx = rstd * (wdy - wdy.mean((1, 2), keepdims=True) - xhat * (wdy * xhat).mean((1, 2), keepdims=True))
    np.testing.assert_allclose(t["dx"], dx, rtol=1e-4, atol=1e-5)
    dg = (dy * xhat).sum(2).reshape(3, groups, 3).sum(0)
    np.testing.assert_allclose(t["dgamma"], dg, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["dbeta"], dy.sum(2).reshape(3, groups, 3).sum(0), rtol=1e-4, atol=1e-4)
    assert out == "[12, 3, 50] true true\n"


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _n04(t: Tensors, out: str) -> None:
    w_ih, w_hh = t["w_ih"].astype(np.float64), t["w_hh"].astype(np.float64)
    b_ih, b_hh = t["b_ih"].astype(np.float64), t["b_hh"].astype(np.float64)
    h = t["h0"].astype(np.float64)
    for x in t["xs"].astype(np.float64):
        gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        r = _sig(gi[:, :24] + gh[:, :24])
        z = _sig(gi[:, 24:48] + gh[:, 24:48])
        n = np.tanh(gi[:, 48:] + r * gh[:, 48:])
        h = (1 - z) * n + z * h
    np.testing.assert_allclose(t["h"], h, rtol=1e-4, atol=1e-5)
    assert out == "[6, 24] true\n"


def _n05(t: Tensors, out: str) -> None:
    logits, hist, u = t["logits"].astype(np.float64), t["hist"], t["u"].astype(np.float64)
    rows, v = logits.shape
    toks, kept = [], []
    for r in range(rows):
        x = logits[r].copy()
        seen = np.isin(np.arange(v), hist[r])
        x = np.where(seen, np.where(x > 0, x / 1.3, x * 1.3), x) / 0.7
        p = np.exp(x - x.max())
        p /= p.sum()
        order = np.argsort(-p, kind="stable")
        before = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
        keep_sorted = before < 0.8
        keep = np.zeros(v, bool)
        keep[order[keep_sorted]] = True
        q = np.where(keep, p, 0) / p[keep].sum()
        np.testing.assert_allclose(t["probs"][r], q, rtol=1e-4, atol=1e-7)
        cq = np.cumsum(q[order])
        pick = order[np.searchsorted(cq, u[r], side="right")]
        toks.append(pick)
        kept.append(keep.sum())
    np.testing.assert_array_equal(t["kept"], kept)
    np.testing.assert_array_equal(t["tok"], toks)
    assert (hist < 0).any() and min(kept) > 1 and out == "true true true\n"


def _n06(t: Tensors, out: str) -> None:
    q = t["q"].astype(np.int64)
    lo = q.reshape(8, 2, 16, 96)[:, 0].reshape(128, 96)
    hi = q.reshape(8, 2, 16, 96)[:, 1].reshape(128, 96)
    np.testing.assert_array_equal(t["packed"], (lo | (hi << 4)).astype(np.uint8))
    s = t["scales"].astype(np.float32)
    z = t["zeros_"].astype(np.float32)
    grp = np.arange(256) // 32
    w = ((q.astype(np.float16) - t["zeros_"][grp]) * t["scales"][grp]).astype(np.float16)   # f16 as in the kernel
    assert np.allclose(w.astype(np.float32), (q - z[grp]) * s[grp], rtol=2e-3, atol=1e-4)
    want = t["x"].astype(np.float64) @ w.astype(np.float64) + t["bias"].astype(np.float64)
    np.testing.assert_allclose(t["y"], want, rtol=1e-4, atol=1e-3)
    assert out == "[128, 96] 255 [40, 96]\n"


def _n07(t: Tensors, out: str) -> None:
    f = {k: t[k].astype(np.float64) for k in ("xs", "zs", "dts", "bs", "cs", "conv_w", "conv_b", "a", "dt_bias",
                                              "dskip", "conv0", "ssm0")}
    conv, h = f["conv0"].copy(), f["ssm0"].copy()
    ch = np.arange(64) % 32
    seq = np.arange(64) // 32
    ys = []
    for s in range(4):
        conv = np.concatenate([conv[:, 1:], f["xs"][s][:, None]], 1)
        u = (conv * f["conv_w"][ch]).sum(1) + f["conv_b"][ch]
        xc = u * _sig(u)
        raw = f["dts"][s] + f["dt_bias"][ch]
        dt = np.where(raw > 20, raw, np.log1p(np.exp(raw)))
        h = h * np.exp(dt[:, None] * f["a"][ch]) + dt[:, None] * f["bs"][s][seq] * xc[:, None]
        z = f["zs"][s]
        ys.append(((h * f["cs"][s][seq]).sum(1) + f["dskip"][ch] * xc) * z * _sig(z))
    np.testing.assert_allclose(t["conv_state"], conv, rtol=1e-6)
    np.testing.assert_allclose(t["ssm_state"], h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t["ys"], np.array(ys), rtol=1e-4, atol=1e-5)
    assert out == "[4, 64] [64, 4]\n"


def _n08(t: Tensors, out: str) -> None:
    kc, vc = t["k0"].astype(np.float64).copy(), t["_v0"].astype(np.float64).copy()
    pos = t["_pos0"].copy()
    outs = []
    for s in range(3):
        for row in range(6):
            kc[row, pos[row // 2]] = t["k_news"][s][row]
            vc[row, pos[row // 2]] = t["v_news"][s][row]
        o = np.zeros((6, 4, 32))
        for row in range(6):
            n = pos[row // 2] + 1
            sc = t["qs"][s][row].astype(np.float64) @ kc[row, :n].T * 0.17677669
            p = np.exp(sc - sc.max(1, keepdims=True))
            o[row] = (p / p.sum(1, keepdims=True)) @ vc[row, :n]
        outs.append(o)
        pos = pos + 1
    np.testing.assert_allclose(t["kc"], kc, rtol=0, atol=0)
    np.testing.assert_allclose(t["vc"], vc, rtol=0, atol=0)
    np.testing.assert_allclose(t["outs"], np.array(outs), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(t["pos"], [8, 25, 42])
    assert out == "Tensor<i32, [3]> [ 8, 25, 42] true [3, 6, 4, 32]\n"


def _norm_rope(x: np.ndarray, w: np.ndarray, pos: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    d = x.shape[-1]
    xn = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w.astype(np.float64)
    inv = 1e6 ** (-2 * np.arange(d // 2) / d)
    ang = pos[:, None, None].astype(np.float64) * inv
    a, b = xn[..., :d // 2], xn[..., d // 2:]
    return np.concatenate([a * np.cos(ang) - b * np.sin(ang), b * np.cos(ang) + a * np.sin(ang)], -1)


def _n09(t: Tensors, out: str) -> None:
    np.testing.assert_array_equal(t["pos"], np.arange(21) + 29)
    np.testing.assert_allclose(t["q"], _norm_rope(t["q0"], t["wq"], t["pos"]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["k"], _norm_rope(t["k0"], t["wk"], t["pos"]), rtol=1e-4, atol=1e-4)
    assert out == "[21, 8, 64] [21, 2, 64]\n"


def _n10(t: Tensors, out: str) -> None:
    x = t["logits"].astype(np.float64)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    first = p.argmax(1)
    second = np.where(np.arange(8) == first[:, None], -1, p).argmax(1)
    np.testing.assert_array_equal(t["experts"], np.stack([first, second], 1))
    p1, p2 = p[np.arange(50), first], p[np.arange(50), second]
    np.testing.assert_allclose(t["weights"], np.stack([p1, p2], 1) / (p1 + p2)[:, None], rtol=1e-5)
    counts = np.bincount(first, minlength=8) + np.bincount(second, minlength=8)
    np.testing.assert_array_equal(t["counts"], counts)
    np.testing.assert_allclose(t["psum"], p.sum(0), rtol=1e-5)
    aux = 8 * (counts / 100 * p.mean(0)).sum()
    slot = np.zeros((50, 2), np.int64)
    fill = np.zeros(8, np.int64)
    for col, ch in ((0, first), (1, second)):
        for i in range(50):
            slot[i, col] = fill[ch[i]]
            fill[ch[i]] += 1
    np.testing.assert_array_equal(t["slot"], np.where(slot < 12, slot, -1))
    assert counts.max() > 12 and aux > 0.9 and out == "100 true 11 true\n"


def _n11(t: Tensors, out: str) -> None:
    ids, g = t["ids"], t["g"].astype(np.float64)
    counts = np.bincount(ids, minlength=50)
    np.testing.assert_array_equal(t["counts"], counts)
    want = np.zeros((50, 48))
    np.add.at(want, ids, g / counts[ids][:, None])
    want[0] = 0
    np.testing.assert_allclose(t["gw"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["gw2"], want, rtol=1e-5, atol=1e-5)
    assert counts[0] > 0 and (counts == 0).any() and out == "300 true 0.0\n"


def _n12(t: Tensors, out: str) -> None:
    w1, w2 = t["w1_0"].astype(np.float64), t["w2_0"].astype(np.float64)
    b1, b2 = np.zeros_like(w1), np.zeros_like(w2)
    scale, tracker, norms, scales = 65536.0, 0, [], []
    for it in range(4):
        boost = 4.0 if it == 1 else 0.01
        spoil = np.where(np.arange(660) == 17, np.nan if it == 3 else 0.0, 0.0).astype(np.float32)
        with np.errstate(over="ignore"):
            g1 = (t["raw1"][it] * np.float32(boost) * np.float32(scale)).astype(np.float16)
            g2 = ((t["raw2"][it] * np.float32(boost) + spoil) * np.float32(scale)).astype(np.float16)
        u1, u2 = g1.astype(np.float32) * np.float32(1 / scale), g2.astype(np.float32) * np.float32(1 / scale)
        bad = ~np.isfinite(np.concatenate([u1, u2]))
        norm = np.sqrt(sum((u[np.isfinite(u)].astype(np.float64) ** 2).sum() for u in (u1, u2)))
        norms.append(norm)
        scales.append(scale)
        if bad.any():
            scale *= 0.5
            tracker = 0
        else:
            clip = min(1.0, 1.0 / (norm + 1e-6))
            b1 = 0.9 * b1 + u1 * clip
            b2 = 0.9 * b2 + u2 * clip
            w1, w2 = w1 - 0.1 * b1, w2 - 0.1 * b2
            tracker += 1
            if tracker == 2:
                scale *= 2
                tracker = 0
    np.testing.assert_allclose(t["w1"], w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["w2"], w2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["norms"], norms, rtol=1e-5)
    np.testing.assert_array_equal(t["scales"], scales)
    assert scales == [65536.0, 65536.0, 32768.0, 32768.0] and norms[1] > 5 and out == "2 16384.0 true true\n"


def _lamb(w: np.ndarray, gs: np.ndarray) -> tuple[np.ndarray, list[float]]:
    w = w.astype(np.float64)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    ratios = []
    for step, g in enumerate(gs.astype(np.float64), 1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        u = (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-6) + 0.01 * w
        wn, un = np.linalg.norm(w), np.linalg.norm(u)
        r = wn / un if wn > 0 and un > 0 else 1.0
        ratios.append(r)
        w = w - 0.01 * r * u
    return w, ratios


def _n13(t: Tensors, out: str) -> None:
    w1, r1 = _lamb(t["w1_0"], t["gs1"])
    w2, r2 = _lamb(np.zeros(300), t["gs2"])
    np.testing.assert_allclose(t["w1"], w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["w2"], w2, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["ratios"], np.stack([r1, r2], 1), rtol=1e-4)
    assert r2[0] == 1.0 and r2[1] < 0.1 and out == "1.0 true true\n"


CHECKS = {"n01_cross_entropy_lse_fwd_bwd": _n01, "n02_adamw_several_tensors": _n02, "n03_group_norm_fwd_bwd": _n03,
          "n04_gru_cell_sequence": _n04, "n05_top_p_repetition_penalty": _n05, "n06_int4_dequant_matmul": _n06,
          "n07_mamba_decode_step": _n07, "n08_kv_append_decode_gqa": _n08, "n09_qk_norm_rope_in_place": _n09,
          "n10_moe_top2_router": _n10, "n11_embedding_backward_freq": _n11, "n12_loss_scaling_clip_norm": _n12,
          "n13_lamb_trust_ratio_last_block": _n13}



def _n14(t: Tensors, out: str) -> None:
    x, y = t["x"].astype(np.float64), t["y"]
    w, b = t["w0"].astype(np.float64), np.zeros(10)
    z = x @ w + b
    e = np.exp(z - z.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    n = len(y)
    loss = -np.log(p[np.arange(n), y]).mean()
    d = (p - np.eye(10)[y]) / n
    np.testing.assert_allclose(t["logits"], z, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["loss"][0], loss, rtol=1e-5)
    np.testing.assert_allclose(t["dlogits"], d, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(t["dw"], x.T @ d, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["w"], w - 0.5 * x.T @ d, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["b"], -0.5 * d.sum(0), rtol=1e-4, atol=1e-7)
    assert out == "true true\n"


def _n15(t: Tensors, out: str) -> None:
    la = t["logits_all"].astype(np.float64)
    b, k = 2, 3
    hist = np.full((6, 8), -1)
    fin = np.zeros(6, np.int64)
    scores = np.where(np.arange(k) == 0, 0.0, -np.inf)[None].repeat(b, 0)
    for step in range(5):
        x = la[step]
        lp = x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True))
        new_hist, new_fin, new_scores = hist.copy(), fin.copy(), np.zeros((b, k))
        for bi in range(b):
            cand = np.full((k, 32), -np.inf)
            for j in range(k):
                r = bi * k + j
                if fin[r]:
                    cand[j, 0] = scores[bi, j]
                else:
                    cand[j, :20] = scores[bi, j] + lp[r]
            flat = cand.ravel()
            order = np.argsort(-flat, kind="stable")[:k]
            for j, f in enumerate(order):
                par, tok = f // 32, f % 32
                src = bi * k + par
                new_hist[bi * k + j] = hist[src]
                new_hist[bi * k + j, step] = tok
                new_fin[bi * k + j] = 1 if fin[src] or tok == 0 else 0
                new_scores[bi, j] = flat[f]
        hist, fin, scores = new_hist, new_fin, new_scores
    np.testing.assert_array_equal(t["hist"], hist)
    np.testing.assert_array_equal(t["fin"].ravel(), fin)
    np.testing.assert_allclose(t["scores"], scores, rtol=1e-5)
    assert 0 < fin.sum() < 6 and (hist[:, :5] >= 0).all() and out == "[6, 8] true true\n"


def _n16(t: Tensors, out: str) -> None:
    g, u, dh = (t[k].astype(np.float64) for k in ("g", "u", "dh"))
    sg = _sig(g)
    du, dg, h = dh * g * sg, dh * u * sg * (1 + g * (1 - sg)), g * sg * u
    np.testing.assert_allclose(t["du32"], du, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["dg32"], dg, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["h32"], h, rtol=1e-5, atol=1e-5)
    for k, want in (("du", t["du32"]), ("dg", t["dg32"]), ("h", t["h32"])):
        got = t[k].astype(np.float32)
        np.testing.assert_array_equal(got, _bf16(want), err_msg=k)     # the f32 value rounded once to bf16
    assert np.abs(g).max() > 5 and out == "[37, 688] true\n"


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(1, keepdims=True))


def _n17(t: Tensors, out: str) -> None:
    s, te = t["s"].astype(np.float64) / 2, t["t"].astype(np.float64) / 2
    a, b = _log_softmax(s), _log_softmax(te)
    lse = np.stack([(s - a)[:, 0], (te[:, :1] - b[:, :1])[:, 0]], 1)   # column 0: finite in every row
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-5)
    pt = np.exp(b)
    with np.errstate(invalid="ignore"):
        terms = np.where(pt > 0, pt * (b - a), 0)
    kl = terms.sum(1) * 4 / 12
    np.testing.assert_allclose(t["kl"].sum(1), kl, rtol=1e-4, atol=1e-6)
    assert t["kl"][7].sum() == 0 and np.isneginf(t["t"][4, 2900:]).all()
    ds = (np.exp(a) - pt) * 2 / 12
    np.testing.assert_allclose(t["ds"].astype(np.float64), ds, rtol=2e-3, atol=1e-7)
    assert t["ds"].dtype == np.float16 and out == "true 0.0 true\n"


NF4 = [-1.0, -0.6961928, -0.5250731, -0.3949175, -0.28444138, -0.18477343, -0.09105004, 0.0, 0.0795803, 0.1609302,
       0.2461123, 0.33791524, 0.44070983, 0.5626170, 0.7229568, 1.0]


def _n18(t: Tensors, out: str) -> None:
    np.testing.assert_array_equal(t["nf4"], np.array(NF4, np.float32))
    codes = t["codes"].astype(np.int64)
    np.testing.assert_array_equal(codes, (np.arange(48 * 160).reshape(48, 160) * 7919 + 12345) % 256)
    q = np.stack([codes & 15, codes >> 4], 2).reshape(48, 320)
    amax = t["absmax_q"].astype(np.float64) * t["dq_scale"].astype(np.float64)[:, None]
    w = np.array(NF4)[q] * np.repeat(amax, 64, 1)
    np.testing.assert_allclose(t["y"], w @ t["x"].astype(np.float64), rtol=1e-4, atol=1e-5)
    assert out == "[48] -1.0 1.0\n"


def _n19(t: Tensors, out: str) -> None:
    s = t["x"].astype(np.float64) + t["r"]
    w, dy = t["w"].astype(np.float64), t["dy"].astype(np.float64)
    inv = 1 / np.sqrt((s * s).mean(1, keepdims=True) + 1e-6)
    c = (dy * w * s).mean(1, keepdims=True)
    np.testing.assert_allclose(t["ds"], dy * w * inv - s * c * inv ** 3 + t["dres"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t["dw"][0], (dy * s * inv).sum(0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["part"].sum(0), t["dw"][0], rtol=1e-5, atol=1e-4)
    assert out == "[45, 384] [1, 384] true\n"


def _n20(t: Tensors, out: str) -> None:
    x, y = t["x"].astype(np.float64), t["y"]
    w, b = t["w0"].astype(np.float64), np.zeros(10)
    n = len(y)
    losses = []
    for _ in range(6):
        z = x @ w + b
        e = np.exp(z - z.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        losses.append(-np.log(p[np.arange(n), y]).mean())
        d = (p - np.eye(10)[y]) / n
        w, b = w - 0.5 * x.T @ d, b - 0.5 * d.sum(0)
    np.testing.assert_allclose(t["losses"], losses, rtol=1e-5)
    np.testing.assert_allclose(t["w"], w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["b"], b, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["loss"][0], losses[-1], rtol=1e-5)
    assert all(a > c for a, c in itertools.pairwise(losses)) and out == "true true\n"


def _n21(t: Tensors, out: str) -> None:
    x, dt, a, b, c = (t[k].astype(np.float64) for k in ("x", "dt", "a", "b", "c"))
    y = np.zeros_like(x)
    for h in range(3):
        st = np.zeros((16, 32))
        for s in range(80):
            st = np.exp(dt[h, s] * a[h]) * st + dt[h, s] * np.outer(b[h, s], x[h, s])
            y[h, s] = c[h, s] @ st
    np.testing.assert_allclose(t["y"], y, rtol=1e-4, atol=1e-5)
    assert (a < 0).all() and out == "[3, 80, 32] true\n"


def _n22(t: Tensors, out: str) -> None:
    w_ih, w_hh = t["w_ih"].astype(np.float64), t["w_hh"].astype(np.float64)
    b_ih, b_hh = t["b_ih"].astype(np.float64), t["b_hh"].astype(np.float64)
    h = t["h0"].astype(np.float64)
    for x in t["xs"].astype(np.float64):
        gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        r = _sig(gi[:, :24] + gh[:, :24])
        z = _sig(gi[:, 24:48] + gh[:, 24:48])
        h = (1 - z) * np.tanh(gi[:, 48:] + r * gh[:, 48:]) + z * h
    np.testing.assert_allclose(t["h"], h, rtol=1e-4, atol=1e-5)
    assert out == "[100, 24] true\n"


def _n23(t: Tensors, out: str) -> None:
    tl, dl, u = t["tl"].astype(np.float64), t["dl"].astype(np.float64), t["u"].astype(np.float64)
    draft = t["draft"]
    toks, oks, masses = [], [], []
    for r in range(6):
        p = np.exp(tl[r] - tl[r].max())
        p /= p.sum()
        q = np.exp(dl[r] - dl[r].max())
        q /= q.sum()
        tk = draft[r]
        yes = u[r, 0] * q[tk] < p[tk]
        res = np.maximum(p - q, 0)
        m = res.sum()
        c = np.cumsum(res / max(m, 1e-30))
        pick = min(int(np.argmax(c > u[r, 1])) if (c > u[r, 1]).any() else 500, 499)
        toks.append(tk if yes else pick)
        oks.append(yes)
        masses.append(m)
    np.testing.assert_array_equal(t["ok"], oks)
    np.testing.assert_array_equal(t["tok"], toks)
    np.testing.assert_allclose(t["mass"], masses, rtol=1e-4, atol=1e-6)
    assert oks[2] and 0 < sum(oks) < 6 and out == "true true true\n"


def _n24(t: Tensors, out: str) -> None:
    logits = t["h"].astype(np.float64) @ t["w"].astype(np.float64).T
    tg = t["target"]
    m = logits.max(1)
    lse = m + np.log(np.exp(logits - m[:, None]).sum(1))
    keep = tg != -100
    want = np.where(keep, lse - logits[np.arange(70), np.where(keep, tg, 0)], 0)
    np.testing.assert_allclose(t["logits"], logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["loss"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["loss2"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["zl"], lse ** 2, rtol=1e-4)
    assert (~keep).sum() == 8 and out == "true 0.0\n"


CHECKS["n14_linear_xent_train_step"] = _n14
CHECKS["n15_beam_search_eos_history"] = _n15
CHECKS["n16_swiglu_backward_bf16"] = _n16
CHECKS["n17_distillation_kl_chunked"] = _n17
CHECKS["n18_nf4_lookup_gemv"] = _n18
CHECKS["n19_add_rmsnorm_backward_last_block"] = _n19
CHECKS["n20_train_loop_graph_replay"] = _n20
CHECKS["n21_mamba2_ssd_chunked"] = _n21
CHECKS["n22_gru_walk_weights_once"] = _n22
CHECKS["n23_speculative_accept_resample"] = _n23
CHECKS["n24_fused_linear_cross_entropy"] = _n24

# simulated by default: the cheap ones (~1 s each, 2-core CI); the others (2.5-80 s in llsim: n11's scalar row loop
# of atomics) and most PTX tests run with TILE_SLOW=1
_SIM_DEFAULT = {"n03_group_norm_fwd_bwd", "n07_mamba_decode_step", "n10_moe_top2_router",
                "n12_loss_scaling_clip_norm"}
_PTX_DEFAULT = {"n06_int4_dequant_matmul", "n09_qk_norm_rope_in_place", "n13_lamb_trust_ratio_last_block",
                "n16_swiglu_backward_bf16"}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "n*.tile", CHECKS, [(n, "sm_90a") for n in CHECKS], ptx=[(n, "sm_90a") for n in CHECKS],
    heavy=set(CHECKS) - _SIM_DEFAULT, heavy_ptx=set(CHECKS) - _PTX_DEFAULT)


def test_the_train_step_module_runs_from_python_on_numpy_arrays_in_place() -> None:
    """n14's four kernels driven from Python as a training loop would: one `tilelang.load`, NumPy arrays written
    in place (the loss by the kernel's atomics into a `&` array held by a name, zeroed in place each step), the
    generics the partitions leave open given by position and by name, five steps against NumPy's, the loss
    falling; the arrays the launch lends are read-only until `.wait()`."""
    import pytest
    from userprog import DIR

    import tilelang

    mod = tilelang.load(DIR / "n14_linear_xent_train_step.tile")
    rng = np.random.default_rng(26)
    n = 90
    x = rng.standard_normal((n, 16)).astype(np.float32)
    y = rng.integers(0, 10, n).astype(np.int32)
    w = (rng.standard_normal((16, 10)) * 0.1).astype(np.float32)
    b = np.zeros(10, np.float32)
    logits, dlogits = np.zeros((n, 10), np.float32), np.zeros((n, 10), np.float32)
    dw, loss = np.zeros((16, 10), np.float32), np.zeros(1, np.float32)
    rw, rb = w.astype(np.float64), b.astype(np.float64)
    losses = []
    for _ in range(5):
        loss[:] = 0
        mod.linear_fwd(tilelang.partition(logits, [32, 10]), x, w, b).sync()
        mod.xent_grad(tilelang.partition(dlogits, [32, 10]), logits, y, loss).sync()
        mod.weight_grad[16, 10, 32](tilelang.partition(dw, [16, 10]), x, dlogits).sync()
        h = mod.sgd[{"BN": 32}](tilelang.partition(w, [16, 10]), tilelang.partition(b, [10]), dw, dlogits, 0.5).launch()
        with pytest.raises(ValueError, match="read-only"):
            w[0, 0] = 0.0
        h.wait()
        losses.append(float(loss[0]))
        z = x @ rw + rb
        pr = np.exp(z - z.max(1, keepdims=True))
        pr /= pr.sum(1, keepdims=True)
        np.testing.assert_allclose(losses[-1], -np.log(pr[np.arange(n), y]).mean(), rtol=1e-5)
        d = (pr - np.eye(10)[y]) / n
        rw, rb = rw - 0.5 * x.T @ d, rb - 0.5 * d.sum(0)
        np.testing.assert_allclose(w, rw, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(b, rb, rtol=1e-4, atol=1e-6)
    assert all(a > b for a, b in itertools.pairwise(losses)) and losses[0] > 2.0
