"""Round 29 of the independent user's programs (huser30, 2026-12-07): an LLM-inference engineer porting a serving
stack's custom ops from Triton and CUDA, written from BRIEF.md, README.md, docs/reference.md and examples/ alone.
Each program's tensors are checked against NumPy written from the docs' rules (exactly where the docs promise
exact results: integer ops, casts, comparisons, `where`, max/argmax, int8 rounding; within a tolerance for sums
and `exp`/`log`), and the same checks run on the NVPTX simulator's tensors.

- v07: vLLM's `reshape_and_cache` into a paged int8 KV cache (per token-head scales, padding slots -1 skipped,
  `store_unchecked` at (slot / page, slot % page)), then a gather of each sequence's pages back to rows.
- v08: NeoX rotary with position ids (scattered, 0 and max_pos - 1), a cos/sin cache built on the host, partial
  rotary (32 of 64), bf16 q and k in place through nested tiles of the own tile.
- v09: vLLM's fused_add_rms_norm, bf16 in place on rows of 640 in [2, 1024] tiles, the width from a `&` shape.
- v10: per-token dynamic int8 and fp8-e4m3 quantisation (the e4m3 codes built from the f32 bits in a u8 tensor,
  subnormals included) and dequantisation; checked against a table search over the format's 127 values.
- v11: an MoE layer's data movement: softmax top-2 routing (padding tokens masked), per-block expert counts, the
  host's scan, permutation by one-hot `cumsum` ranks and `store_unchecked`, stand-in experts, un-permute.
- v12: a grouped GEMM over experts whose group sizes (0, 13, 40, 1, 0, 46) are read on the device; a tile whose
  rows cross groups runs the K loop per group.
- v13: a sampler with per-row temperature (0: greedy), top-k and top-p (vLLM's order), by bisection on the
  probabilities' bits, one inverse-CDF draw a row, and the chosen token's log-probability.
- v14: cross-entropy forward and in-place backward with ignore_index -100 and label smoothing, over a vocab of
  5000 in chunks, the mean's sum and count by atomics.
- v15: log-softmax over a 151,936 vocab (the padded tail -inf) split over 38 blocks a row, merged by `last_block`.
- v16: a ragged speculative-decoding rejection sampler (0-5 drafts a sequence, `while` with `break`, the
  recovered token from the residual, the bonus token).
- v17: a rolling (sliding-window) KV cache appended at run-time positions (`store_unchecked` at p % W, an idle
  sequence at -1) and decoded over the ring from a host loop of 4 steps (the ring wraps).
- v18: DeepSeek-V3's grouped top-k router (sigmoid scores plus a correction bias choose, 24 experts in 6 groups
  of 4 as [BT, 6, 4] tiles, top-2 sums a group, 3 groups, 4 experts, ties to the lowest index).
- v19: Punica's multi-LoRA bgmv (an adapter id a token, -1 for none, rank 12 with a zero-padded rank-8 adapter).
- v20: cascade attention's `merge_attn_states` with empty parts (lse -inf) and a head where both are empty.
- v21: DeepSeek's block-wise fp8 linear layer: u8 e4m3 codes decoded on the fly into exact bf16 products,
  per-token-group and per-block scales, the quantisers as kernels.
- v22: prefix caching's chained block hashes in wrapping u64 (a `cumprod` of powers, xor-shift mixing), full
  blocks only; shared prefixes share hashes.
- v23: chunked prefill over a paged KV cache (a page id read with `item()` in the loop, 64-row query blocks, 16-key
  pages, causal from the cached prefix's end). `--explain`: the Hopper attention pipeline refuses the loop for the
  `item()` (a reduce in the loop), so it runs mma.sync with no pipeline: no spelling of a paged K/V walk takes it.
- v24: the MoE combine as a CUDA-style scatter-add (`atomic_add` of weighted [1, 64] rows at run-time token
  rows, padding rows -1 skipped, several blocks into one token) against the gather form.
- v25: flash-decoding whose split-KV merge runs inside a thread-block cluster (`cluster_gather` of the partial
  max, sum and [1, 64] output), each block writing its quarter of the head (by a 0/1 product: tiles have no
  slicing), lengths 256, 100 and 1 (blocks with no key weigh 0).
- Python: vLLM's penalties with int64 token ids, a decode step recorded with `tilelang.graph()` and replayed with
  positions written in place, v11's MoE kernels driven from Python with the scan in NumPy.

The engines agreed on every tensor of v07-v25 (the simulator on sm_90a; v23 within 1e-4, f16 probabilities).
Found on the way (tests in test_user_wrong33.py and tests/ui/lints/own_tile_shape_as_float.tile): a read of
`let slot = atomic_add(..)` (CUDA's and Triton's atomics return the old value) gave "cannot cast `()` as `f32`"
or "`where` expects tiles or scalars"; PyTorch's `keepdim = true` was told to drop `keepdim =`, which left a
second error; `x.reshape(BT, 1)` (PyTorch's spread-out sizes) was told "call it with 1 argument"; a window of a
computed tile (`row[64..128]` of a fused QKV row) was offered only a tile of its own or a 0/1 product; Triton's
`float("-inf")` was told "`x as f32`"; label smoothing's `eps / (logits.shape()[1] as f32)` divided by the own
tile's width with no warning (W0010 now says so). Left: the Hopper attention pipeline refuses a paged K/V walk
(v23: the page id's `item()` in the loop), so paged attention runs mma.sync unpipelined.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]
f32 = np.float32


def rint_f32(y: np.ndarray) -> np.ndarray:
    """Half to even, as torch.round (the docs' `round` recipe)."""
    return np.rint(y).astype(f32)


def _v07(t: Tensors, out: str) -> None:
    x, slots = t["k_new"], t["slots"]
    pages, page, h, d = t["k_cache"].shape
    amax = np.abs(x).max(2, keepdims=True)
    scale = np.where(amax > 0, amax / f32(127), f32(1)).astype(f32)
    q = np.clip(rint_f32(x / scale), -127, 127).astype(np.int8)
    cache = np.zeros((pages * page, h, d), np.int8)
    sc = np.zeros((pages * page, h), f32)
    keep = slots >= 0
    cache[slots[keep]] = q[keep]
    sc[slots[keep]] = scale[keep, :, 0]
    np.testing.assert_array_equal(t["k_cache"], cache.reshape(pages, page, h, d))
    np.testing.assert_array_equal(t["k_scale"], sc.reshape(pages, page, h))
    np.testing.assert_array_equal(t["written"], slots)
    assert (t["k_scale"][4, 4] == 1.0).all()   # the all-zero token's scale
    want = np.zeros((2, 16, h * d), f32)
    for s in range(2):
        for p in range(t["lens"][s]):
            slot = t["table"][s, p // page] * page + p % page
            want[s, p] = (cache[slot].astype(f32) * sc[slot][:, None]).reshape(-1)
    np.testing.assert_array_equal(t["out"], want)
    assert out.split()[-3:] == ["[2,", "16,", "64]"], out


def bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even), as f32."""
    u = np.asarray(x, f32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(f32)


def close_bf16(got: np.ndarray, want: np.ndarray, what: str, ulps: int = 1) -> None:
    """Within `ulps` bf16 steps (an f32 product contracted into an fma may round the other way)."""
    np.testing.assert_allclose(got, want, rtol=ulps * 2.0 ** -7, atol=1e-6, err_msg=what)


def _v08(t: Tensors, out: str) -> None:
    pos = t["positions"]
    assert pos.tolist() == [4095, 0, 999, 1000, 1001, 17]
    r2 = 16
    ang = np.arange(4096)[:, None] * (10000.0 ** (-2 * np.arange(r2) / 32))[None, :]
    np.testing.assert_allclose(t["cos_sin"], np.concatenate([np.cos(ang), np.sin(ang)], 1), atol=2e-3)
    cs = t["cos_sin"][pos]
    c, s = cs[:, None, :r2], cs[:, None, r2:]
    for name in ("q", "k"):
        x = t[name + "0"]
        x1, x2 = x[..., :r2], x[..., r2:2 * r2]
        want = x.copy()
        want[..., :r2] = bf16(x1 * c - x2 * s)
        want[..., r2:2 * r2] = bf16(x2 * c + x1 * s)
        close_bf16(t[name], want, name)
        np.testing.assert_array_equal(t[name][..., 2 * r2:], x[..., 2 * r2:], err_msg=name)  # not rotated
        np.testing.assert_array_equal(t[name][1], x[1], err_msg=name)   # position 0: cos 1, sin 0
    assert out.split()[-2:] == ["true", "true"], out


def _v09(t: Tensors, out: str) -> None:
    x, r, w = t["_x0"], t["_r0"], t["w"]
    z = bf16(x + r)
    np.testing.assert_array_equal(t["residual"], z)
    var = (z.astype(np.float64) ** 2).mean(1, keepdims=True)
    want = bf16(bf16(z / np.sqrt(var + 1e-6)) * w)
    close_bf16(t["x"], want, "x", ulps=2)   # the sum of squares in another order, then two bf16 roundings
    assert out == "[5, 640] [5, 640]\n", out


def e4m3_table() -> np.ndarray:
    """The value of each fp8 e4m3fn code 0..126 (positive, finite; 127 is NaN), from the format's definition."""
    vals = []
    for c in range(127):
        e, m = c >> 3, c & 7
        vals.append(m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(vals)


def e4m3_encode(a: np.ndarray) -> np.ndarray:
    """The nearest code to each |value| <= 448, a tie to the even code (a table search, not the bit trick)."""
    table = e4m3_table()
    a = np.asarray(a, np.float64)
    hi = np.clip(np.searchsorted(table, a), 1, 126)
    lo = hi - 1
    dlo, dhi = a - table[lo], table[hi] - a
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    return np.where(a >= table[126], 126, pick).astype(np.uint8)


def _v10(t: Tensors, out: str) -> None:
    x = t["x"]
    amax = np.abs(x).max(1, keepdims=True)
    sf = np.where(amax > 0, amax / f32(448), f32(1)).astype(f32)
    si = np.where(amax > 0, amax / f32(127), f32(1)).astype(f32)
    np.testing.assert_array_equal(t["scales"], np.concatenate([sf, si], 1))
    a = np.minimum(np.abs(x / sf), f32(448))
    codes = e4m3_encode(a) | np.where(x < 0, 128, 0).astype(np.uint8)
    np.testing.assert_array_equal(t["codes"], codes)
    table = e4m3_table()
    deq = np.where(codes & 128, -1, 1) * table[codes & 127]
    np.testing.assert_array_equal(t["xf"], (deq.astype(f32) * sf).astype(f32))
    q8 = np.clip(np.rint(x / si), -127, 127).astype(np.int8)
    np.testing.assert_array_equal(t["q8"], q8)
    np.testing.assert_array_equal(t["xi"], q8.astype(f32) * si)
    # the rows' edges: the zero row is code 0 and scale 1; the outlier is 448, the rest of its row subnormal
    assert (t["codes"][1] == 0).all() and t["scales"][1].tolist() == [1.0, 1.0]
    assert t["codes"][2, 7] == 126 and (t["codes"][2] & 127).max() == 126 and np.median(t["codes"][2] & 127) < 8
    assert np.abs(t["xf"] - x).max() <= np.abs(x).max() / 16   # fp8's 3 mantissa bits: half a step of 1/8
    assert out == "254 [4, 2]\n", out


def _v11(t: Tensors, out: str) -> None:
    logits, x = t["logits"].astype(np.float64), t["x"]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    order = np.argsort(-p, 1, kind="stable")[:, :2]
    np.testing.assert_array_equal(t["ids"], order)
    pw = np.take_along_axis(p, order, 1)
    np.testing.assert_allclose(t["wts"], pw / pw.sum(1, keepdims=True), rtol=1e-5)
    flat = t["ids"].reshape(-1)
    np.testing.assert_array_equal(t["per_expert"], np.bincount(flat, minlength=8))
    np.testing.assert_array_equal(t["counts"], [np.bincount(flat[b * 32:(b + 1) * 32], minlength=8)
                                                for b in range(3)])
    perm = np.argsort(flat, kind="stable")   # the sorted order: by expert, then by (token, slot)
    place = np.empty_like(perm)
    place[perm] = np.arange(perm.size)
    np.testing.assert_array_equal(t["place"], place.reshape(-1, 2))
    np.testing.assert_array_equal(t["x_sorted"], x[perm // 2])
    np.testing.assert_array_equal(t["y_sorted"], x[perm // 2] * (flat[perm] + 1)[:, None].astype(f32))
    want = (t["wts"][:, :, None] * x[:, None, :] * (t["ids"] + 1)[:, :, None]).sum(1)
    np.testing.assert_allclose(t["out"], want, rtol=1e-5, atol=1e-6)
    assert out.startswith("74 Tensor<i32, [8]>"), out


def _v12(t: Tensors, out: str) -> None:
    x, w, ends = t["x"].astype(np.float64), t["w"].astype(np.float64), t["ends"]
    assert ends.tolist() == [0, 13, 53, 54, 54, 100]
    assert (t["x"] == bf16(t["x"])).all() and (t["w"] == bf16(t["w"])).all()
    group = np.searchsorted(ends, np.arange(100), side="right")
    want = np.einsum("mk,mkn->mn", x, w[group])
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-4)
    assert out.startswith("100 Tensor<i32, [6]>"), out


def _v13(t: Tensors, out: str) -> None:
    """vLLM's sampler with sorts: top-k on the tempered probabilities, top-p on what top-k left, renormalised."""
    logits = t["logits"]
    assert t["temps"].tolist() == np.array([0.0, 1.0, 0.7, 1.0, 1.3, 1.0], f32).tolist() and t["top_k"].tolist() == [0, 0, 50, 0, 20, 1]
    for r in range(6):
        temp, k, p, u = float(t["temps"][r]), int(t["top_k"][r]), float(t["top_p"][r]), float(t["u"][r])
        z = logits[r].astype(np.float64) / (temp if temp > 0 else 1.0)
        probs = np.exp(z - z.max())
        probs /= probs.sum()
        order = np.argsort(-probs, kind="stable")
        keep = np.zeros(probs.size, bool)
        keep[order[:k] if k > 0 else order] = True
        q = np.where(keep, probs, 0.0)
        q /= q.sum()
        if p < 1.0:
            qs = q[order]
            n = int(np.searchsorted(np.cumsum(qs), p - 1e-6)) + 1   # the smallest head whose mass reaches p
            keep2 = np.zeros(probs.size, bool)
            keep2[order[:n]] = True
            q = np.where(keep2, q, 0.0)
        if temp == 0.0:
            want = int(np.argmax(logits[r]))
        else:
            cdf = np.cumsum(q)
            want = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
        assert t["tok"][r] == want, (r, t["tok"][r], want)
        np.testing.assert_allclose(t["logp"][r], np.log(probs[want]), rtol=1e-5, atol=1e-5)
        if k == 1 or temp == 0.0:
            assert want == int(np.argmax(logits[r]))
        if k > 0 or p < 1.0:
            assert q[want] > 0 and (q > 0).sum() <= max(k, 1) if k > 0 else (q > 0).sum() < probs.size
    assert out == f"Tensor<i32, [6]> [{', '.join(f'{v:3d}' for v in t['tok'])}]\n", out


def _v14(t: Tensors, out: str) -> None:
    x, labels, eps = t["x0"].astype(np.float64), t["labels"], 0.1
    rows, v = x.shape
    valid = labels != -100
    assert valid.tolist() == [True, False, True, True, False, True] and labels[2] == v - 1
    lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-6)
    safe = np.where(valid, labels, 0)
    nll = lse - x[np.arange(rows), safe]
    smooth = lse - x.mean(1)
    loss = np.where(valid, (1 - eps) * nll + eps * smooth, 0.0)
    np.testing.assert_allclose(t["loss"], loss, rtol=1e-5, atol=1e-6)
    assert t["n_valid"].tolist() == [4]
    np.testing.assert_allclose(t["mean"], [loss.sum() / 4], rtol=1e-5)
    sm = np.exp(x - lse[:, None])
    target = np.full_like(x, eps / v)
    target[np.arange(rows), safe] += 1 - eps
    grad = np.where(valid[:, None], (sm - target) / 4, 0.0)
    np.testing.assert_allclose(t["logits"], grad, rtol=1e-4, atol=1e-8)
    assert (t["logits"][[1, 4]] == 0).all()
    np.testing.assert_allclose(t["logits"].sum(1), 0.0, atol=1e-6)   # a softmax's gradient sums to 0
    assert out == "Tensor<i32, [1]> [4] [1]\n", out


def _v15(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    assert (t["x"] == bf16(t["x32"])).all()
    real = 151646
    assert np.isneginf(x[:, real:]).all() and np.isfinite(x[:, :real]).all()
    m = x.max(1, keepdims=True)
    lse = m + np.log(np.exp(x - m).sum(1, keepdims=True))
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-6)
    y = t["y"]
    assert np.isneginf(y[:, real:]).all()
    np.testing.assert_allclose(y[:, :real], (x - lse)[:, :real], rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(np.exp(y.astype(np.float64)).sum(1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(y[2, :real], -np.log(real), rtol=1e-6)   # the constant row
    assert t["pm"][1].max() == 88.0 and t["pm"].shape == (3, 38)
    np.testing.assert_allclose(y[1, 100000], 0.0, atol=1e-6)   # the overflowing logit takes all the mass
    assert out == "38 true\n", out


def _softmax_last(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _v16(t: Tensors, out: str) -> None:
    p, q, draft, u = t["p"], t["q"], t["draft"], t["u"]
    np.testing.assert_allclose(p, _softmax_last(t["tl"].astype(np.float64)), rtol=1e-5, atol=1e-9)
    np.testing.assert_array_equal(draft, q.argmax(2))
    assert (t["p"][0] == t["q"][0]).all()
    for b in range(4):
        nd = int(t["n_draft"][b])
        toks, j = [], 0
        while j < nd:
            x = draft[b, j]
            if u[b, j] * q[b, j, x] < p[b, j, x]:
                toks.append(int(x))
                j += 1
                continue
            res = np.maximum(p[b, j] - q[b, j], 0).astype(np.float64)
            c = np.cumsum(res)
            toks.append(min(int(np.searchsorted(c, u[b, 5] * c[-1], side="right")), 699))
            break
        else:
            toks.append(int(t["bonus"][b]))
        assert t["n_acc"][b] == j, (b, t["n_acc"][b], j)
        assert t["out"][b].tolist() == toks + [-1] * (6 - len(toks)), (b, t["out"][b], toks)
    assert t["n_acc"][0] == 5 and t["out"][0, 5] == 7 and t["n_acc"][1] == 0 and t["out"][1, 0] == 107
    assert out.startswith("Tensor<i32, [4]> [5, 0, 0, 1]"), out


def _v17(t: Tensors, out: str) -> None:
    b, h, d, w = 3, 2, 32, 16
    kc = np.zeros((b, w, h, d), f32)
    vc = np.zeros((b, w, h, d), f32)
    pos = np.array([14, -1, 3])
    for step in range(4):
        for s in range(b):
            if pos[s] >= 0:
                kc[s, pos[s] % w] = t["k_all"][step, s]
                vc[s, pos[s] % w] = t["v_all"][step, s]
        for s in range(b):
            for hh in range(h):
                n = min(pos[s] + 1, w)
                if n <= 0:
                    want = np.zeros(d)
                else:
                    sc = kc[s, :n, hh].astype(np.float64) @ t["q_all"][step, s, hh] * 0.17677669
                    e = np.exp(sc - sc.max())
                    want = (e / e.sum()) @ vc[s, :n, hh]
                np.testing.assert_allclose(t["outs"][step, s, hh], want, rtol=1e-5, atol=1e-5, err_msg=f"{step}")
        pos = np.where(pos >= 0, pos + 1, pos)
    np.testing.assert_array_equal(t["kc"], kc)
    np.testing.assert_array_equal(t["vc"], vc)
    assert (t["kc"][1] == 0).all() and (t["outs"][:, 1] == 0).all()   # the idle sequence
    assert not (t["kc"][0, 0] == 0).all()   # sequence 0's ring wrapped: position 16 went to slot 0
    assert out.startswith("Tensor<i32, [3]> [18, -1,  7] Tensor<i32, [3]> [17, -1,  6]"), out


def _v18(t: Tensors, out: str) -> None:
    """vLLM's grouped_topk (DeepSeek-V3: biased scores choose, unbiased weigh), with stable sorts for ties."""
    lg, bias = t["logits"], t["bias"]
    s = (1 / (1 + np.exp(-lg.astype(np.float64))))
    b = s + bias
    g = b.reshape(-1, 6, 4)
    top2 = -np.sort(-g, 2)[:, :, :2].sum(2)
    groups = np.argsort(-top2, 1, kind="stable")[:, :3]
    mask = np.zeros((lg.shape[0], 6), bool)
    np.put_along_axis(mask, groups, True, 1)
    cand = np.where(np.repeat(mask, 4, 1), b, -np.inf)
    ids = np.argsort(-cand, 1, kind="stable")[:, :4]
    np.testing.assert_array_equal(t["ids"], ids)
    w = np.take_along_axis(s, ids, 1)
    np.testing.assert_allclose(t["wts"], w / w.sum(1, keepdims=True) * 2.5, rtol=1e-5)
    assert t["ids"][5].tolist() == [12, 13, 14, 15]   # the tied token: each pair's lower index first
    assert (np.sort(t["ids"] // 4, 1)[:, None, :] == np.sort(groups, 1)[:, :, None]).any(1).all()  # in its groups
    assert out.startswith("Tensor<i32, [4]> [12, 13, 14, 15] 2.5"), out


def _v19(t: Tensors, out: str) -> None:
    x, w, a, b = (t[k].astype(np.float64) for k in ("x", "w", "a", "b"))
    assert all((t[k] == bf16(t[k])).all() for k in ("x", "w", "a", "b"))
    assert (t["a"][2][:, 8:] == 0).all() and (t["a"][2][:, :8] != 0).any()
    want = x @ w
    for i, lid in enumerate(t["lora"]):
        if lid >= 0:
            want[i] += (x[i] @ a[lid]) @ b[lid] * t["scale"][lid]
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-5)
    assert t["lora"].tolist() == [-1, 1, 2, -1, 1, 2, 0]
    np.testing.assert_allclose(t["y"][[0, 3]], (x @ w)[[0, 3]], rtol=1e-5, atol=1e-6)   # no adapter: the base
    assert out == "Tensor<i32, [7]> [-1,  1,  2, -1,  1,  2,  0] [7, 96]\n", out


def _v20(t: Tensors, out: str) -> None:
    pl, sl = t["p_lse"].astype(np.float64), t["s_lse"].astype(np.float64)
    po, so = t["p_out"].astype(np.float64), t["s_out"].astype(np.float64)
    o, lse = np.zeros_like(po), np.full_like(pl, -np.inf)
    for i in range(5):
        for h in range(4):
            parts = [(lv, ov) for lv, ov in ((pl[i, h], po[i, h]), (sl[i, h], so[i, h])) if lv > -np.inf]
            if parts:
                m = max(lv for lv, _ in parts)
                ws = [np.exp(lv - m) for lv, _ in parts]
                o[i, h] = sum(w * ov for w, (_, ov) in zip(ws, parts, strict=True)) / sum(ws)
                lse[i, h] = m + np.log(sum(ws))
    np.testing.assert_allclose(t["o"], o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-6)
    np.testing.assert_array_equal(t["o"][1], t["s_out"][1])   # no prefix: the suffix alone, exactly
    np.testing.assert_array_equal(t["o"][2], t["p_out"][2])   # an empty suffix: the prefix alone
    assert (t["o"][3, 2] == 0).all() and t["lse"][3, 2] == -np.inf and not np.isnan(t["o"]).any()
    assert out == "-inf false\n", out


def _v21(t: Tensors, out: str) -> None:
    x, wf = t["x"], t["wf"]
    table = e4m3_table()

    def decode(c: np.ndarray) -> np.ndarray:
        return np.where(c & 128, -1, 1) * table[c & 127]

    # the activations: a scale per token and group of 128
    amax = np.abs(x).reshape(48, 3, 128).max(2)
    sa = np.where(amax > 0, amax / f32(448), f32(1)).astype(f32)
    np.testing.assert_array_equal(t["a_scale"], sa)
    ya = (x.reshape(48, 3, 128) / sa[:, :, None]).reshape(48, 384)
    ca = e4m3_encode(np.minimum(np.abs(ya), 448)) | np.where(ya < 0, 128, 0).astype(np.uint8)
    np.testing.assert_array_equal(t["a"], ca)
    np.testing.assert_array_equal(t["a_deq"], (decode(ca).reshape(48, 3, 128) * sa[:, :, None]).reshape(48, 384)
                                  .astype(f32))
    # the weights: a scale per [128, 128] block
    blocks = np.abs(wf).reshape(2, 128, 3, 128).max((1, 3))
    sw = np.where(blocks > 0, blocks / f32(448), f32(1)).astype(f32)
    np.testing.assert_array_equal(t["w_scale"], sw)
    sw_full = np.repeat(np.repeat(sw, 128, 0), 128, 1)
    cw = e4m3_encode(np.minimum(np.abs(wf / sw_full), 448)) | np.where(wf < 0, 128, 0).astype(np.uint8)
    np.testing.assert_array_equal(t["w"], cw)
    # the product: each K block's exact sum of e4m3 products, scaled by both scales
    want = np.zeros((48, 256))
    da, dw = decode(ca), decode(cw)
    for kb in range(3):
        ks = slice(kb * 128, (kb + 1) * 128)
        want += (da[:, ks] @ dw[:, ks].T) * sa[:, kb:kb + 1] * np.repeat(sw[:, kb], 128)[None, :]
    np.testing.assert_allclose(t["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["y"], t["a_deq"].astype(np.float64) @ t["w_deq"].T, rtol=1e-4, atol=1e-4)
    assert np.abs(t["y"] - x.astype(np.float64) @ wf.T).max() < 0.1 * np.abs(x @ wf.T).max()   # fp8 is close
    assert out == "[48, 256]\n", out


def _v22(t: Tensors, out: str) -> None:
    """The chained block hashes in Python integers mod 2^64 (no NumPy wrap involved)."""
    mask = (1 << 64) - 1
    p = 1099511628211
    toks, lens = t["toks"], t["lens"]
    want = np.zeros((4, 4), np.uint64)
    for s in range(4):
        h = 14695981039346656037
        for b in range(4):
            if (b + 1) * 16 <= lens[s]:
                own = sum(int(v) * pow(p, i + 1, 1 << 64) for i, v in enumerate(toks[s, b * 16:(b + 1) * 16])) & mask
                h = ((h ^ own) * 0x9E3779B97F4A7C15) & mask
                h ^= h >> 29
                want[s, b] = h
    np.testing.assert_array_equal(t["hashes"], want)
    hs = t["hashes"]
    assert (hs[0, :2] == hs[1, :2]).all() and hs[0, 2] != hs[1, 2] and hs[1, 3] == 0   # the shared prefix, then 50
    assert (hs[0, :2] == hs[2, :2]).all() and (hs[0, 2:] != hs[2, 2:]).all()          # a change in block 2
    assert (hs[3] == 0).all() and len(set(hs[0].tolist())) == 4                       # 15 tokens: no full block
    assert out == "true false 0\n", out


def _v23(t: Tensors, out: str) -> None:
    table = t["table"]
    assert table.tolist() == [(7 * j + 5) % 24 for j in range(11)]
    rows = (table[:, None] * 16 + np.arange(16)[None, :]).reshape(-1)   # the sequence's positions in the pool
    k, v = t["k_pool"][rows].astype(np.float64), t["v_pool"][rows].astype(np.float64)
    q = t["q"].astype(np.float64)
    s = q @ k.T * 0.125
    qpos = 40 + np.arange(128)
    s = np.where(np.arange(176)[None, :] <= qpos[:, None], s, -np.inf)
    p = np.exp(s - s.max(1, keepdims=True))
    want = (p / p.sum(1, keepdims=True)) @ v
    # the probabilities go through f16 on the tensor cores (`e as f16`): within f16's rounding of them
    np.testing.assert_allclose(t["o"], want, rtol=2e-3, atol=2e-3)
    assert out.startswith("Tensor<i32, [11]> [ 5, 12, 19,  2,  9, 16, 23,  6, 13, 20,  3] [128, 64]"), out


def _v24(t: Tensors, out: str) -> None:
    tok, w, y = t["token_of"], t["weight_of"].astype(np.float64), t["y_sorted"].astype(np.float64)
    assert (tok[69:] == -1).all() and np.bincount(tok[:69], minlength=23).tolist() == [3] * 23
    want = np.zeros((23, 64))
    np.add.at(want, tok[:69], y[:69] * w[:69, None])
    np.testing.assert_allclose(t["out"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["g"], want, rtol=1e-5, atol=1e-5)
    assert (tok[t["place"]] == np.arange(23)[:, None]).all()   # the gather form's rows are each token's three
    np.testing.assert_array_equal(t["seen"], tok)
    assert out == "-1 [23, 64]\n", out


def _v25(t: Tensors, out: str) -> None:
    q, k, v = (t[n].astype(np.float64) for n in ("q", "kc", "vc"))
    lens = t["lens"]
    want = np.zeros((6, 64))
    for r in range(6):
        n = lens[r // 2]
        sc = k[r, :n] @ q[r] * 0.125
        e = np.exp(sc - sc.max())
        want[r] = e @ v[r, :n] / e.sum()
    np.testing.assert_allclose(t["o"].reshape(6, 64), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t["o"].reshape(6, 64)[4:], v[4:, 0], rtol=1e-6, atol=1e-6)   # one key: its value
    assert out == "[6, 4, 16]\n", out


CHECKS = {"v07_paged_kv_write_int8_gather": _v07, "v08_rope_position_ids_partial_bf16": _v08,
          "v09_fused_add_rmsnorm_bf16_wide": _v09, "v10_per_token_int8_fp8_quant": _v10,
          "v11_moe_route_permute_unpermute": _v11, "v12_grouped_gemm_runtime_groups": _v12,
          "v13_sampling_temp_topk_topp_rows": _v13, "v14_cross_entropy_ignore_smoothing_inplace": _v14,
          "v15_log_softmax_150k_vocab_split": _v15, "v16_spec_decode_ragged_rejection": _v16,
          "v17_kv_append_ring_window_decode": _v17, "v18_deepseek_grouped_topk_routing": _v18,
          "v19_multi_lora_bgmv_ragged_ranks": _v19, "v20_merge_attn_states_cascade": _v20,
          "v21_fp8_block_scaled_gemm": _v21, "v22_prefix_cache_block_hashes_u64": _v22,
          "v23_chunked_prefill_paged_kv": _v23, "v24_moe_combine_scatter_add": _v24,
          "v25_cluster_split_kv_decode": _v25}

# the simulations on sm_90a: v09 by default (0.6 s: the fused residual + RMSNorm, in-place bf16 on a tile wider
# than its row), the rest `heavy` (TILE_SLOW=1: 1.7-26 s each); PTX for sm_90a of all, v09's and v11's by default
DEFAULT_SIM = {"v09_fused_add_rmsnorm_bf16_wide"}
DEFAULT_PTX = {"v09_fused_add_rmsnorm_bf16_wide", "v11_moe_route_permute_unpermute"}
SIM = [(n, "sm_90a") for n in CHECKS]

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    ("v0[7-9]_*.tile", "v1[0-9]_*.tile", "v2[0-5]_*.tile"), CHECKS, SIM, ptx=[(n, "sm_90a") for n in CHECKS],
    # (v23: the GPU's `exp` within its documented 2e-6, then `e as f16` for the tensor cores: a probability one
    # f16 step apart moves an output by ~1e-5, one element of 8192 in llsim)
    sim_tol={"v23_chunked_prefill_paged_kv": 1e-4},
    heavy=[n for n in CHECKS if n not in DEFAULT_SIM], heavy_ptx=[n for n in CHECKS if n not in DEFAULT_PTX])


# ---- the same user from Python, on NumPy arrays (the serving loop's glue is Python)

_PENALTIES = """
// vLLM's apply_penalties on a [B, V] batch of logits in place; token ids as PyTorch gives them (int64, -1 padding)
kernel fn penalties<const BV: i32, const LO: i32, const LP: i32>(logits: &mut Tensor<f32, [1, BV]>,
        out_ids: &Tensor<i64, [?, LO]>, prompt_ids: &Tensor<i64, [?, LP]>, rep: &Tensor<f32, [?]>,
        freq: &Tensor<f32, [?]>, pres: &Tensor<f32, [?]>) {
    let b = block_id(0);
    let cols = (arange::<i32>(BV) + block_id(1) * BV).reshape([1, BV]) as i64;
    let o = out_ids.partition([1, LO]).load([b, 0]).reshape([LO, 1]);
    let p = prompt_ids.partition([1, LP]).load([b, 0]).reshape([LP, 1]);
    let counts = ((o == cols) as i32).sum(0).reshape([1, BV]);
    let in_prompt = ((p == cols) as i32).max(0).reshape([1, BV]) > 0;
    let r = rep.partition([1]).load([b]).item();
    let f = freq.partition([1]).load([b]).item();
    let pr = pres.partition([1]).load([b]).item();
    let x = logits.load();
    let x = where(in_prompt | (counts > 0), where(x > 0.0, x / r, x * r), x);
    logits.store(x - f * counts as f32 - pr * (counts > 0) as f32);
}
"""


def test_penalties_from_python_with_int64_token_ids() -> None:
    """Repetition, frequency and presence penalties (vLLM's order) over a vocab of 1000 in tiles of 256, the token
    histories int64 with -1 padding (never counted, never matching a column), a row with no prompt."""
    import tilelang

    mod = tilelang.compile(_PENALTIES)
    rng = np.random.default_rng(29)
    b, v, lo, lp = 3, 1000, 12, 20
    logits = rng.standard_normal((b, v)).astype(f32)
    out_ids = rng.integers(0, v, (b, lo))
    out_ids[1, 5:] = -1
    out_ids[0, :4] = 999                      # the last column, in the last (partial) tile, four times
    prompt_ids = rng.integers(0, v, (b, lp))
    prompt_ids[2] = -1
    rep, freq, pres = (np.array(a, f32) for a in ([1.2, 1.0, 2.0], [0.5, 0.0, 0.1], [0.3, 1.0, 0.0]))
    want = logits.astype(np.float64)
    for r in range(b):
        cnt = np.bincount(out_ids[r][out_ids[r] >= 0], minlength=v)
        seen = cnt > 0
        seen[prompt_ids[r][prompt_ids[r] >= 0]] = True
        x = np.where(seen, np.where(want[r] > 0, want[r] / rep[r], want[r] * rep[r]), want[r])
        want[r] = x - freq[r] * cnt - pres[r] * (cnt > 0)
    mod.penalties(tilelang.partition(logits, [1, 256]), out_ids, prompt_ids, rep, freq, pres).sync()
    np.testing.assert_allclose(logits, want, rtol=1e-6, atol=1e-6)
    assert abs(logits[0, 999] - want[0, 999]) < 1e-6 and out_ids[0, :4].tolist() == [999] * 4


_DECODE = """
kernel fn append<const H: i32, const D: i32>(seen: &mut Tensor<i32, [1]>, k_new: &Tensor<f32, [?, H, D]>,
        pos: &Tensor<i32, [?]>, kc: &Tensor<f32, [?, ?, H, D]>) {
    let b = block_id(0);
    let p = pos.partition([1]).load([b]).item();
    unsafe {
        store_unchecked(&kc, [b, p, 0, 0], k_new.partition([1, H, D]).load([b, 0, 0]).reshape([1, 1, H, D]));
    }
    seen.store(full::<i32>([1], p));
}

kernel fn norms<const S: i32, const H: i32, const D: i32>(o: &mut Tensor<f32, [1, S]>,
        kc: &Tensor<f32, [?, S, H, D]>, pos: &Tensor<i32, [?]>) {
    let b = block_id(0);
    let p = pos.partition([1]).load([b]).item();
    let k = kc.partition([1, S, H, D]).load([b, 0, 0, 0]).reshape([S, H * D]);
    o.store(where(arange::<i32>(S).reshape([1, S]) <= p, (k * k).sum(1).reshape([1, S]), -1.0));
}
"""


def test_a_decode_step_recorded_once_and_replayed_with_new_positions() -> None:
    """A serving loop's CUDA-graph habit on the interpreter: the step (a KV append at positions read on the device,
    then a kernel over the cache) recorded once with `tilelang.graph()`, replayed three times with the new keys and
    positions written into the recorded arrays in place; the cache and the output follow the positions."""
    import tilelang

    mod = tilelang.compile(_DECODE)
    b, s, h, d = 2, 8, 2, 4
    kc = np.zeros((b, s, h, d), f32)
    pos = np.array([0, 3], np.int32)
    k_new = np.zeros((b, h, d), f32)
    seen = np.zeros(b, np.int32)
    o = np.zeros((b, s), f32)
    with tilelang.graph() as g:
        mod.append(tilelang.partition(seen, [1]), k_new, pos, kc).sync()
        mod.norms(tilelang.partition(o, [1, s]), kc, pos).sync()
    assert not kc.any()   # recorded, not run
    ref = np.zeros_like(kc)
    rng = np.random.default_rng(7)
    for _ in range(3):
        k_new[:] = rng.standard_normal(k_new.shape)
        g.replay()
        ref[np.arange(b), pos] = k_new
        np.testing.assert_array_equal(kc, ref)
        want = np.where(np.arange(s)[None] <= pos[:, None], (ref.reshape(b, s, -1) ** 2).sum(2), -1)
        np.testing.assert_allclose(o, want, rtol=1e-6)
        np.testing.assert_array_equal(seen, pos)
        pos += 1


def test_the_moe_pipeline_from_python_with_the_scan_in_numpy() -> None:
    """v11's kernels loaded from its file and driven from Python as a server does: the route launch, the scan of
    the per-block counts in NumPy, permute, experts, un-permute; 50 tokens in blocks of 16 (a partial last block)."""
    import tilelang

    from tilelang import partition as part

    mod = tilelang.load(Path(__file__).parent / "programs" / "v11_moe_route_permute_unpermute.tile")
    rng = np.random.default_rng(11)
    t, e, d, bt = 50, 8, 64, 16
    nb = -(-t // bt)
    logits = (rng.standard_normal((t, e)) * 2).astype(f32)
    x = rng.standard_normal((t, d)).astype(f32)
    ids, wts = np.zeros((t, 2), np.int32), np.zeros((t, 2), f32)
    counts = np.zeros((nb, e), np.int32)
    mod.route(part(ids, [bt, 2]), part(wts, [bt, 2]), part(counts, [1, e]), logits, t).sync()
    per = counts.sum(0)
    starts = (np.cumsum(per) - per).astype(np.int32)
    base = (starts[None] + np.cumsum(counts, 0) - counts).astype(np.int32)
    place = np.zeros((t, 2), np.int32)
    xs = np.zeros((2 * t, d), f32)
    mod.permute(part(place, [bt, 2]), ids, base, x, xs, t).sync()
    ys = np.zeros((2 * t, d), f32)
    mod.experts(part(ys, [16, d]), xs, starts).sync()
    out = np.zeros((t, d), f32)
    mod.unpermute(part(out, [1, d]), ys, place, wts).sync()
    perm = np.argsort(ids.reshape(-1), kind="stable")
    np.testing.assert_array_equal(xs, x[perm // 2])
    want = (wts[:, :, None] * x[:, None, :] * (ids + 1)[:, :, None]).sum(1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert per.sum() == 2 * t
