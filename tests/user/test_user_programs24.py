"""Round 24 of the independent user's programs (huser25, 2026-12-07): kernels a user writes in a first week, in
areas rounds 1-23 took least, written from BRIEF.md, README.md, docs/reference.md and examples/ alone.

- l01: prefix sums of one long vector by the three textbook phases (block totals, their scan, each block's scan
  plus its carry), an i64 scan past 2^31 with the carry summed in a loop, a suffix sum through reversing `dot`s.
- l02: a u8 RGB image's [3, 256] histogram by a one-hot sum and one tile `atomic_add`, the per-channel minimum and
  maximum by `atomic_min` on u8 and `atomic_max` on i16, a weighted 16-bin histogram with f32 atomics.
- l03: top-5 of rows with many ties (stable: the lowest column first), on f32 and i32 rows, the first and last
  position of a row's maximum, `argmin` down f16 columns.
- l04: a stable rank sort of rows (and the argsort), -0.0 kept, and a descending u32 sort carrying an f16 payload.
- l05: CSR SpMV with bf16 values (a row's nonzeros through the aligned tiles that cover them), the transposed
  product by scalar `atomic_add`s, a gather with `padding_idx`.
- l06: SWAR popcount, count-leading-zeros, bit reversal, FNV-1a over byte rows, murmur3's 64-bit finaliser, and
  the saturating float-to-integer casts with NaN and infinities.
- l07: u8 alpha blending, saturating add and subtract, a Sobel magnitude with a replicated border. Found: Rust's
  `a.saturating_add(b)` of u8 tiles got `minimum(a as i64 + b as i64, i32::MAX as i64) as i32` (the help of every
  type); test_user_wrong26.py's o01 and its fix.
- l08: bf16 `mma` with an f32 accumulator and an f16 bias, f16 row sums past 65504 (inf) beside f32 ones, a generic
  f16/bf16 normalisation in f32.
- l09: sums, maxima and argmaxes along each axis of a 3-D tensor, per-slice mean and variance, any-per-row.
- l10: Aᵀ·B and A·Bᵀ from operands stored the other way, NCHW -> NHWC by `permute`, a stride-2 column view. Found:
  a 4-D `&mut` output is E0701, which neither the reference's Limits nor `tilec explain E0701` said (both do now).
- l11: six outputs of one row pass (count of finite values, Welford mean and variance merged over chunks from a
  tuple-returning device function, the minimum and its column, a NaN flag).
- l12: a GEMM epilogue, residual + tanh-GELU(x·W + b), f16 in, f32 accumulate, and a ReLU/scale/clamp variant by a
  `bool` parameter.
- l13: RoPE in the NeoX and GPT-J layouts through 4-D reshapes, angles from positions in the kernel, a bf16 form.
- l14: softmax with causal, key-length and keep masks at once, empty rows giving zeros and an lse of -inf.
- l15: dropout by a hand-written Philox4x32-10 (u64 products split into halves), against Random123's known answer.
- l16: an f64 Jacobi stencil with halo rows and columns read at any offset, two launches in a replayed `graph`.
- l17: a program in three files (a module constant as a tile and tensor dimension, a generic device function, a
  host function of a module one directory down). Found: an imported constant (or one declared below the kernel)
  as a signature's dimension was "not a compile-time constant"; Rust's `super::` pointed at a file "beside"
  the importer; a clash with a whole-file `use` was told to import only what it needs (not possible there).
- l18: u8 running sums that wrap, an i64 running product past 2^63, `cummin` of i8, `argmax` of bool and NaN rows,
  i8/i16 shifts by amounts past the width, u16 rotations.
- l19: a global argmax and argmin of 10000 floats in one launch: order-preserving u32 keys packed with the index
  into u64 and one `atomic_max` / `atomic_min`, decoded back. Found: written first as `atomic_max(&best, [0], hi)`
  of the block's whole tile into the one-element `best`, it kept the blocks' first keys, silently: new warning
  W0012 (test_user_wrong26.py).
- l20: grey-scale erosion, dilation, opening and closing of a u8 image from one kernel with a `bool` parameter.
- l21: an RMS norm over a tile walk (`for s in tiles(0)`, the gain loaded once a block, `#[requires]`) against a
  plain grid, bit for bit, and a row softmax split over the 4 blocks of a `#[cluster(1, 4)]` (`cluster_gather`).
- l22: host code around kernels: a generic host function that partitions a `&mut` argument and returns a tuple,
  a Hillis-Steele i64 scan by log2(n) launches ping-ponging two buffers by moves, two launches in flight. Found:
  its shift by a [256, 256] i64 0/1 matrix ran on the interpreter and was E0603 on the GPU (512 KiB of shared
  memory), where the reference said such a matrix is never built (only an f32 one runs as a shift); the
  reference says so now.
- l23: EmbeddingBag over a bf16 table with bags of 0 to 40 ids pulled from a queue (`for s in queue(0)`), weighted
  sums, means and maxima in f32 stored in bf16, against one bag a block.

Each runs on the interpreter and is checked against NumPy (or Python) from its own inputs, in the NVPTX simulator
at sm_90a (the slow ones `heavy`), and its PTX assembles for sm_90a (all but one `heavy`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _l01(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    np.testing.assert_allclose(t["tot"], [x[i:i + 256].sum() for i in range(0, 5000, 256)], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t["inc"], np.cumsum(x), rtol=1e-5, atol=2e-4)
    np.testing.assert_allclose(t["exc"], np.cumsum(x) - x, rtol=1e-5, atol=2e-4)
    assert t["exc"][0] == 0 and t["carry"][0] == 0
    k = np.arange(3000, dtype=np.int64)
    big = (k * 2654435761) % 4000000000 - 1000000000
    np.testing.assert_array_equal(t["big"], big)
    np.testing.assert_array_equal(t["sc"], np.cumsum(big))
    assert np.abs(np.cumsum(big)).max() > 2 ** 31
    m = t["m"].astype(np.float64)
    np.testing.assert_allclose(t["suf"], np.cumsum(m[:, ::-1], 1)[:, ::-1], rtol=1e-5, atol=1e-5)
    assert out == "20 [5000] true [37, 24]\n"


def _l02(t: Tensors, out: str) -> None:
    img = t["img"]
    want = np.stack([np.bincount(img[..., c].ravel(), minlength=256) for c in range(3)])
    np.testing.assert_array_equal(t["hist"], want)
    np.testing.assert_array_equal(t["lo"], img.reshape(-1, 3).min(0))
    np.testing.assert_array_equal(t["hi"], img.reshape(-1, 3).max(0))
    np.testing.assert_array_equal(t["seen"], [8] * 5 + [5])
    luma = t["luma"]
    lh = np.zeros(16)
    np.add.at(lh, luma >> 4, t["wts"].astype(np.float64))
    np.testing.assert_allclose(t["lh"], lh, rtol=1e-5)
    assert img.min() < 5 and img.max() > 250 and out == \
        "Tensor<i32, [3]> [1440, 1440, 1440] 45 Tensor<u8, [3]> [0, 0, 0] Tensor<i16, [3]> [255, 255, 255] 8\n"


def _topk(x: np.ndarray, k: int) -> np.ndarray:
    return np.argsort(-x, axis=1, kind="stable")[:, :k]


def _l03(t: Tensors, out: str) -> None:
    x = t["x"]
    want = _topk(x, 5)
    np.testing.assert_array_equal(t["idx"], want)
    np.testing.assert_array_equal(t["val"], np.take_along_axis(x, want, 1))
    np.testing.assert_array_equal(t["idx2"], _topk(t["xi"], 5))
    np.testing.assert_array_equal(t["first"], x.argmax(1))
    np.testing.assert_array_equal(t["last"], x.shape[1] - 1 - x[:, ::-1].argmax(1))
    np.testing.assert_array_equal(t["am"], t["xh"].argmin(0))
    assert (t["last"] > t["first"]).all() and out == f"5.0 {want.max()} true 8\n"


def _l04(t: Tensors, out: str) -> None:
    x = t["x"]
    order = np.argsort(x, axis=1, kind="stable")
    np.testing.assert_array_equal(t["order"], order)
    s = np.take_along_axis(x, order, 1)
    np.testing.assert_array_equal(t["sorted"], s)
    np.testing.assert_array_equal(np.signbit(t["sorted"]), np.signbit(s))   # -0.0 kept where it sorted
    assert (np.signbit(x) & (x == 0)).any()
    k, v = t["k"], t["v"]
    o = np.argsort(-k.astype(np.int64), axis=1, kind="stable")
    np.testing.assert_array_equal(t["ks"], np.take_along_axis(k, o, 1))
    np.testing.assert_array_equal(t["vs"], np.take_along_axis(v, o, 1))
    assert any(len(set(r)) < len(r) for r in k) and out == "-2.5 2.5 276 true\n"


def _l05(t: Tensors, out: str) -> None:
    ip, cols, vals = t["built"], t["cols"], t["vals"].astype(np.float64)
    a = np.zeros((70, 90))
    for r in range(70):
        np.add.at(a[r], cols[ip[r]:ip[r + 1]], vals[ip[r]:ip[r + 1]])
    np.testing.assert_array_equal(np.diff(ip), (np.arange(70) * 7 + np.arange(70) // 5) % 20)
    np.testing.assert_allclose(t["y"], a @ t["x"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["z"], a.T @ t["w"], rtol=1e-5, atol=1e-5)
    ids = t["ids"]
    want = np.where(ids[:, None] >= 0, t["x"][np.maximum(ids, 0)][:, None], 0)
    np.testing.assert_array_equal(t["g"], want)
    assert (ids < 0).sum() == 1 and (np.diff(ip) == 0).any() and out == "640 [70] true 640\n"


def _sat(v: np.ndarray, dt: type) -> np.ndarray:
    info = np.iinfo(dt)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(v), 0, np.clip(np.trunc(np.nan_to_num(v, nan=0.0, posinf=info.max, neginf=info.min)),
                                               info.min, info.max)).astype(dt)


def _l06(t: Tensors, out: str) -> None:
    x = [int(v) for v in t["x"]]
    np.testing.assert_array_equal(t["pc"], [bin(v).count("1") for v in x])
    np.testing.assert_array_equal(t["lz"], [32 - v.bit_length() for v in x])
    np.testing.assert_array_equal(t["rv"], [int(f"{v:032b}"[::-1], 2) for v in x])
    m = (1 << 64) - 1
    fm = []
    for h in map(int, t["k"]):
        h ^= h >> 33
        h = h * 0xff51afd7ed558ccd & m
        h ^= h >> 33
        h = h * 0xc4ceb9fe1a85ec53 & m
        fm.append(h ^ h >> 33)
    np.testing.assert_array_equal(t["fm"], np.array(fm, np.uint64))
    want = []
    for row, n in zip(t["bytes"], t["len"], strict=True):
        h = 2166136261
        for b in row[:n]:
            h = (h ^ int(b)) * 16777619 & 0xFFFFFFFF
        want.append(h)
    np.testing.assert_array_equal(t["hash"], want)
    f = t["f"]
    for name, dt in (("a", np.uint8), ("b", np.int8), ("c", np.int16), ("d", np.uint32)):
        np.testing.assert_array_equal(t[name], _sat(f.astype(np.float64), dt), err_msg=name)
    np.testing.assert_array_equal(t["e"], np.clip(t["g"], 0, 255))
    np.testing.assert_array_equal(t["w"], t["g"].astype(np.uint8))
    assert np.isnan(f).any() and (t["x"] == 0).any() and len(set(t["len"])) == 25
    assert out == f"32 32 {t['rv'][2]} 2166136261 255 -128 -32768 255\n"


def _l07(t: Tensors, out: str) -> None:
    a, b, al = (t[k].astype(np.int64) for k in ("a", "b", "alpha"))
    np.testing.assert_array_equal(t["out"], (a * al + b * (255 - al) + 127) // 255)
    np.testing.assert_array_equal(t["sat"], np.clip(a + b, 0, 255))
    np.testing.assert_array_equal(t["dif"], np.clip(a - b, 0, 255))
    p = np.pad(a, 1, mode="edge")
    win = lambda dy, dx: p[1 + dy:1 + dy + a.shape[0], 1 + dx:1 + dx + a.shape[1]]  # noqa: E731
    gx = (win(-1, 1) + 2 * win(0, 1) + win(1, 1)) - (win(-1, -1) + 2 * win(0, -1) + win(1, -1))
    gy = (win(1, -1) + 2 * win(1, 0) + win(1, 1)) - (win(-1, -1) + 2 * win(-1, 0) + win(-1, 1))
    np.testing.assert_array_equal(t["mag"], np.clip(np.abs(gx) + np.abs(gy), 0, 255))
    assert (a + b > 255).any() and (a < b).any() and 0 < (np.abs(gx) + np.abs(gy) > 255).mean() < 1
    assert out == f"{t['out'].max()} {t['sat'].min()} {t['dif'].max()} 255\n"


def _bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even), as f32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def _l08(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(np.float64), t["b"].astype(np.float64)
    want = a @ b + t["bias"].astype(np.float64)
    np.testing.assert_allclose(t["c32"], want, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(t["c"].astype(np.float32), _bf16(t["c32"]))
    assert t["c"].dtype == np.float32 or str(t["c"].dtype) == "bfloat16"
    np.testing.assert_array_equal(t["s32"], t["x"].astype(np.float32).sum(1))
    assert np.isinf(t["s16"]).all() and t["s16"].dtype == np.float16
    for y, x, tol in ((t["yh"], t["xh"], 1e-3), (t["yb"], t["xb"], 8e-3)):   # an ulp of the storage type
        v = x.astype(np.float64)
        z = (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(y.astype(np.float64), z, rtol=tol, atol=tol)
    np.testing.assert_array_equal(t["xb"], _bf16(t["xb"]))   # bf16 values, held as f32
    assert out.startswith("Tensor<f16, [4]> [inf, inf, inf, inf] Tensor<f32, [4]> [102400.0, ")


def _l09(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    for ax, name in ((2, "s2"), (1, "s1"), (0, "s0")):
        np.testing.assert_allclose(t[name], x.sum(ax), rtol=1e-5, atol=1e-5, err_msg=name)
    np.testing.assert_array_equal(t["m2"], t["x"].max(2))
    np.testing.assert_array_equal(t["m0"], t["x"].max(0))
    np.testing.assert_array_equal(t["i0"], t["x"].argmax(0))
    np.testing.assert_array_equal(t["a1"], t["x"].argmax(1))
    np.testing.assert_array_equal(t["neg"], (x < -2).any(2))
    np.testing.assert_allclose(t["tot"], x.sum((1, 2)), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t["mean"], x.mean((1, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["var"], x.var((1, 2)), rtol=1e-5)
    assert 0 < t["neg"].mean() < 1 and out == f"{t['neg'].sum()} 6 {t['a1'].max()}\n"


def _l10(t: Tensors, out: str) -> None:
    a, b = t["a"].astype(np.float64), t["b"].astype(np.float64)
    np.testing.assert_array_equal(t["at"], t["a"].T)
    np.testing.assert_allclose(t["c1"], a @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(t["c2"], a @ b, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(t["y"], t["x"].transpose(0, 2, 3, 1).reshape(20, 6, 3))
    np.testing.assert_array_equal(t["ev"], t["z"][:, ::2])
    assert out == "[72, 48] [20, 6, 3] 196.0\n"


def _l11(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    fin = np.isfinite(x)
    n = fin.sum(1)
    np.testing.assert_array_equal(t["count"], n)
    xm = np.where(fin, x, np.nan)
    np.testing.assert_allclose(t["mean"], np.nanmean(xm, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["var"], np.nanvar(xm, 1), rtol=1e-5)
    np.testing.assert_array_equal(t["lo"], np.nanmin(xm, 1))
    np.testing.assert_array_equal(t["at"], np.nanargmin(xm, 1))
    np.testing.assert_array_equal(t["nan"], np.isnan(x).any(1))
    assert 0 < t["nan"].sum() < 50 and np.isinf(x).any() and out == f"{n.min()} {n.max()} {t['nan'].sum()}\n"


def _l12(t: Tensors, out: str) -> None:
    h = t["x"].astype(np.float64) @ t["w"].astype(np.float64) + t["b"]
    g = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    want = (t["res"].astype(np.float64) + g).astype(np.float16)
    np.testing.assert_allclose(t["y"].astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
    relu = np.minimum(np.maximum(h, 0) * t["scale"], 65504).astype(np.float16)
    np.testing.assert_allclose(t["r"].astype(np.float64), relu.astype(np.float64), rtol=2e-3, atol=2e-3)
    assert (t["r"] == 65504).any() and not np.isinf(t["r"]).any() and (t["r"] == 0).any()
    assert out == "[100, 72] 65500.0\n"


def _rope_ref(x: np.ndarray, pos: np.ndarray, interleaved: bool) -> np.ndarray:
    d = x.shape[-1]
    inv = 10000.0 ** (-2 * np.arange(d // 2) / d)
    ang = pos[:, None, None].astype(np.float64) * inv
    c, s = np.cos(ang), np.sin(ang)
    x = x.astype(np.float64)
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = a * c - b * s, b * c + a * s
        return out
    a, b = x[..., :d // 2], x[..., d // 2:]
    return np.concatenate([a * c - b * s, b * c + a * s], -1)


def _l13(t: Tensors, out: str) -> None:
    pos = t["pos"]
    np.testing.assert_allclose(t["yn"], _rope_ref(t["x"], pos, False), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["yj"], _rope_ref(t["x"], pos, True), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["yb"], _rope_ref(t["xb"], pos, False), rtol=2e-2, atol=2e-2)
    np.testing.assert_array_equal(t["yb"], _bf16(t["yb"]))
    assert pos.min() == 100 and not np.allclose(t["yn"], t["yj"]) and out == "[20, 3, 32] [20, 3, 32]\n"


def _masked_softmax(x: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xm = np.where(ok, x, -np.inf)
    m = xm.max(1, keepdims=True)
    safe = np.where(np.isneginf(m), 0, m)
    e = np.exp(xm - safe)
    tot = e.sum(1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tot > 0, e / tot, 0), (safe + np.log(tot))[:, 0]


def _l14(t: Tensors, out: str) -> None:
    rows = np.arange(160)
    q = (rows % 40)[:, None]
    keys = np.arange(40)[None]
    lens = t["lens"][:, None]
    np.testing.assert_array_equal(t["lens"], np.repeat([40, 17, 1, 0], 40))
    ok = (keys <= q) & (keys < lens)
    p, lse = _masked_softmax(t["s"].astype(np.float64) * 0.5, ok & t["keep"])
    np.testing.assert_allclose(t["p"], p, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(t["lse"], lse, rtol=1e-5)
    assert np.isneginf(t["lse"][120:]).all() and (t["p"][120:] == 0).all()
    ph, _ = _masked_softmax(t["sh"].astype(np.float64), ok)
    np.testing.assert_allclose(t["ph"].astype(np.float64), ph, rtol=2e-3, atol=1e-4)
    empty = ~(ok & t["keep"]).any(1)
    assert 40 < empty.sum() < 80 and out.startswith("1.0") and " 0.0 -inf " in out


def _philox4x32_10(c: tuple[np.ndarray, ...], k0: int, k1: int) -> tuple[np.ndarray, ...]:
    """Random123's Philox4x32-10 on uint64 arrays holding 32-bit lanes."""
    x0, x1, x2, x3 = (np.asarray(v, np.uint64) for v in c)
    m32 = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0, p1 = x0 * np.uint64(0xD2511F53), x2 * np.uint64(0xCD9E8D57)
        x0, x1, x2, x3 = ((p1 >> np.uint64(32)) ^ x1 ^ np.uint64(k0), p1 & m32,
                          (p0 >> np.uint64(32)) ^ x3 ^ np.uint64(k1), p0 & m32)
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return x0, x1, x2, x3


def _l15(t: Tensors, out: str) -> None:
    z = np.zeros(1, np.uint64)
    kat = [int(v[0]) for v in _philox4x32_10((z, z, z, z), 0, 0)]
    assert kat == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]            # Random123's known answer
    seed = 0x0123456789ABCDEF
    idx = np.arange(3000, dtype=np.uint64)
    x = t["x"].astype(np.float32)
    for off, sfx in ((0, ""), (1, "2")):
        r0 = _philox4x32_10((idx, np.full_like(idx, off), 0 * idx, 0 * idx), seed & 0xFFFFFFFF, seed >> 32)[0]
        np.testing.assert_array_equal(t["bits" + sfx], r0)
        u = (r0 >> np.uint64(8)).astype(np.float32) * np.float32(1 / 16777216)
        keep = u >= np.float32(0.25)
        np.testing.assert_array_equal(t["keep" + sfx], keep)
        np.testing.assert_array_equal(t["y" + sfx], np.where(keep, x * (np.float32(1) / np.float32(0.75)), 0))
    r0 = _philox4x32_10((idx, 0 * idx, 0 * idx, 0 * idx), seed & 0xFFFFFFFF, seed >> 32)[0]
    keep = (r0 >> np.uint64(8)).astype(np.float32) * np.float32(1 / 16777216) >= np.float32(0.25)
    np.testing.assert_array_equal(t["yb"], _bf16(np.where(keep, t["xb"] / np.float32(0.75), 0).astype(np.float32)))
    assert 0.45 < (t["keep"] == t["keep2"]).mean() < 0.75 and out == f"true false {t['bits'][0]}\n"


def _l16(t: Tensors, out: str) -> None:
    u = t["boundary"].astype(np.float64).copy()
    assert u[0, 5] == 100 and u[20, 19] == 70 and u[20, 10] == 0
    prev = u
    for _ in range(16):
        prev = u
        v = u.copy()
        v[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) * 0.25
        u = v
    np.testing.assert_allclose(t["a"], u, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(t["b"], prev, rtol=1e-13, atol=1e-12)
    assert t["a"].dtype == np.float64 and u[1:-1, 1:-1].min() >= 0 and u[5, 5] > 1 and out == "true 100.0 70.0\n"
    assert np.abs(u - prev).max() < 5


def _fmix32(k: np.ndarray) -> np.ndarray:
    u = np.uint32
    with np.errstate(over="ignore"):
        h = k ^ (k >> u(16))
        h = h * u(0x85EBCA6B)
        h = h ^ (h >> u(13))
        h = h * u(0xC2B2AE35)
        return h ^ (h >> u(16))


def _l17(t: Tensors, out: str) -> None:
    keys = t["keys"]
    with np.errstate(over="ignore"):
        assert (keys == np.arange(1000, dtype=np.uint32) * np.uint32(2654435761) + np.uint32(12345)).all()
    b = (_fmix32(keys) % np.uint32(16)).astype(np.int32)
    np.testing.assert_array_equal(t["b"], b)
    np.testing.assert_array_equal(t["h1"], np.bincount(b, minlength=16))
    np.testing.assert_array_equal(t["h2"], np.bincount(b, minlength=16))
    np.testing.assert_array_equal(t["seen"], [256, 256, 256, 232])
    assert np.bincount(b).min() > 30 and out == "1000 1000 3.0 4.5 16 true\n"


def _shift(v: int, k: int, bits: int, left: bool) -> int:
    """PTX's rule (the reference's): an amount of the width or more gives 0 for `<<` and the sign for `>>`."""
    if left:
        r = 0 if k >= bits else (v << k) & ((1 << bits) - 1)
        return r - (1 << bits) if r >= 1 << (bits - 1) else r
    return (-1 if v < 0 else 0) if k >= bits else v >> k


def _l18(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.int64)
    np.testing.assert_array_equal(t["w8"], np.cumsum(x, 1) % 256)
    np.testing.assert_array_equal(t["w32"], np.cumsum(x, 1))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(t["p64"], np.cumprod(x + 1000, 1))   # NumPy's int64 wraps as Tile's does
    np.testing.assert_array_equal(t["m8"], np.minimum.accumulate(x.astype(np.uint8).astype(np.int8), 1))
    np.testing.assert_array_equal(t["first"], t["f"].argmax(1))
    np.testing.assert_array_equal(t["nan_at"], np.isnan(t["g"]).argmax(1))
    v, k = t["v"].astype(np.int64), t["s"].astype(np.int64)
    v8 = v.astype(np.int16).astype(np.int8).astype(np.int64)
    np.testing.assert_array_equal(t["l8"], [_shift(a, b, 8, True) for a, b in zip(v8, k, strict=True)])
    np.testing.assert_array_equal(t["r8"], [_shift(a, b, 8, False) for a, b in zip(v8, k, strict=True)])
    np.testing.assert_array_equal(t["l16"], [_shift(a, b, 16, True) for a, b in zip(v, k, strict=True)])
    np.testing.assert_array_equal(t["r16"], [_shift(a, b, 16, False) for a, b in zip(v, k, strict=True)])
    u = v.astype(np.int16).astype(np.uint16).astype(np.int64)
    kk = k % 16
    np.testing.assert_array_equal(t["ru"], ((u << kk) | (u >> ((16 - kk) % 16))) & 0xFFFF)
    assert (v < 0).any() and (k >= 16).any() and np.isnan(t["g"]).any(1).all()
    assert out == f"Tensor<i32, [6]> [{', '.join(f'{a:2d}' for a in t['first'])}] Tensor<i32, [6]> [13, 14, 15, 16, 17, 18] true\n"


def _l19(t: Tensors, out: str) -> None:
    x = t["x"]
    hi, lo = int(x.argmax()), int(x.argmin())
    np.testing.assert_array_equal(t["at"], [hi, lo])
    np.testing.assert_array_equal(t["out"], [x[hi], x[lo]])
    b, w = int(t["best"][0]), int(t["worst"][0])
    assert b & 0xFFFFFFFF == 0xFFFFFFFF - hi and w & 0xFFFFFFFF == lo
    bits = x.view(np.uint32).astype(np.uint64)
    keys = np.where(bits >> np.uint64(31) == 1, ~bits & np.uint64(0xFFFFFFFF), bits | np.uint64(0x80000000))
    assert b >> 32 == keys.max() and w >> 32 == keys.min()
    order = np.argsort(keys, kind="stable")
    assert (np.diff(x[order]) >= 0).all()                                      # the keys sort as the floats
    assert (x == x.max()).sum() > 5 and (x == x.min()).sum() > 5 and np.signbit(x[x == 0]).any()
    assert out == f"Tensor<f32, [2]> [ 250.0, -250.0] Tensor<i32, [2]> [{hi}, {lo}] {hi} {lo} 10000\n"


def _morph(img: np.ndarray, erode: bool) -> np.ndarray:
    p = np.pad(img.astype(np.int64), 1, constant_values=255 if erode else 0)
    wins = [p[1 + dy:1 + dy + img.shape[0], 1 + dx:1 + dx + img.shape[1]] for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    return (np.min(wins, 0) if erode else np.max(wins, 0)).astype(np.uint8)


def _l20(t: Tensors, out: str) -> None:
    img = t["img"]
    er, di = _morph(img, True), _morph(img, False)
    np.testing.assert_array_equal(t["er"], er)
    np.testing.assert_array_equal(t["di"], di)
    np.testing.assert_array_equal(t["opened"], _morph(er, False))
    np.testing.assert_array_equal(t["closed"], _morph(di, True))
    np.testing.assert_array_equal(t["grad"], di - er)
    assert er[0].min() < 20 and di[-1].max() > 240 and out == f"true true {(di - er).max()}\n"


def _l21(t: Tensors, out: str) -> None:
    x, g = t["x"].astype(np.float64), t["g"].astype(np.float64)
    want = x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(t["y1"], want, rtol=2e-5, atol=1e-5)
    np.testing.assert_array_equal(t["y1"], t["y2"])
    s = t["s"].astype(np.float64)
    e = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(t["p1"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(t["p2"], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-8)
    assert out == "[37, 384] true true\n"


def _l22(t: Tensors, out: str) -> None:
    np.testing.assert_allclose(t["yf"], np.cumsum(t["xf"].astype(np.float64), 1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(t["yi"], np.cumsum(t["xi"], 1))
    np.testing.assert_array_equal(t["lasti"], t["xi"].sum(1))
    np.testing.assert_array_equal(t["maxi"], t["xi"].max(1))
    np.testing.assert_array_equal(t["maxf"], t["xf"].max(1))
    np.testing.assert_array_equal(t["c1"], t["yf"])
    np.testing.assert_array_equal(t["c2"], t["yi"])
    v = (np.arange(1024, dtype=np.int64) * 7919) % 1000 - 500
    np.testing.assert_array_equal(t["v"], v)
    np.testing.assert_array_equal(t["a"], np.cumsum(v))
    assert t["lastf"].dtype == np.float32 and t["lasti"].dtype == np.int32 and out == "10 [6] 8 true [6]\n"


def _l23(t: Tensors, out: str) -> None:
    off, ids, w, table = t["offsets"], t["ids"], t["w"].astype(np.float32), t["table"].astype(np.float32)
    sums, means, maxes = [], [], []
    for b in range(24):
        rows, ws = table[ids[off[b]:off[b + 1]]], w[off[b]:off[b + 1]]
        acc = np.zeros(64, np.float32)
        for r, x in zip(rows, ws, strict=True):   # in order, in f32, as the kernel adds
            acc = acc + r * x
        sums.append(acc)
        means.append(rows.sum(0) / max(len(rows), 1) if len(rows) else np.zeros(64))
        maxes.append(rows.max(0) if len(rows) else np.zeros(64))
    np.testing.assert_array_equal(t["sums"], _bf16(np.array(sums, np.float32)))
    np.testing.assert_allclose(t["means"], _bf16(np.array(means, np.float32)), rtol=8e-3, atol=1e-6)
    np.testing.assert_array_equal(t["maxes"], np.array(maxes, np.float32))
    np.testing.assert_array_equal(t["sums2"], t["sums"])
    sizes = np.diff(off)
    assert (sizes == 0).sum() >= 3 and sizes.max() == 40 and out == f"{off[-1]} 40 true\n"


CHECKS = {"l01_three_phase_scan": _l01, "l02_u8_histograms_atomics": _l02, "l03_topk_ties": _l03,
          "l04_rank_sort_rows": _l04, "l05_csr_spmv_both_ways": _l05,
          "l06_bits_hashes_saturation": _l06,
          "l07_u8_blend_sobel": _l07,
          "l08_half_inputs_f32_accumulate": _l08,
          "l09_three_axis_reductions": _l09,
          "l10_transposed_operands": _l10,
          "l11_row_stats_six_outputs": _l11,
          "l12_gemm_bias_gelu_residual": _l12,
          "l13_rope_neox_and_gptj": _l13,
          "l14_masked_softmax_lengths": _l14,
          "l15_philox_dropout": _l15,
          "l16_jacobi_f64_halo_graph": _l16,
          "l17_use_modules_hashing": _l17,
          "l18_narrow_int_scans_shifts": _l18,
          "l19_global_argmax_packed_atomic": _l19,
          "l20_u8_morphology_open_close": _l20,
          "l21_tile_walk_cluster_rows": _l21,
          "l22_host_helpers_power_of_two_scan": _l22,
          "l23_embedding_bag_queue_bf16": _l23}


def test_a_module_constant_sizes_a_signature_from_anywhere(tmp_path: Path) -> None:
    """l17 as first written: `hist: &Tensor<i32, [BUCKETS]>` with `BUCKETS` a constant of an imported file was
    "array dimension is not a compile-time constant" (its help: "use a `const`"), and so was a constant of the
    same file declared below the kernel: the signatures were resolved before the constants of modules (and
    items) that came later. Both now run, through a string path, a module path and the same file."""
    from userprog import run_program

    (tmp_path / "lib.tile").write_text("const NB: i32 = 6;\n", encoding="utf-8")
    body = ("kernel fn k(z: &mut Tensor<i32, [NB]>, x: &Tensor<i32, [NB]>) {\n"
            "    z.store(x.load_like(z) + arange::<i32>(NB));\n}\n"
            "fn twice(x: &Tensor<i32, [NB]>) -> Tensor<i32, [NB]> {\n    x * 2\n}\n"
            "fn main() {\n    let x = ones::<i32>([NB]);\n    let mut z = zeros::<i32>([NB]);\n"
            "    k(z.partition([NB]), &x).sync();\n    print(twice(&z).sum());\n}\n")
    for head, tail in (('use "lib.tile";\n', ""), ("use lib::NB;\n", ""), ("", "const NB: i32 = 6;\n")):
        prog = tmp_path / "main.tile"
        prog.write_text(head + body + tail, encoding="utf-8")
        tensors, out = run_program(prog)
        assert out == "42\n" and list(tensors["z"]) == [1, 2, 3, 4, 5, 6], (head, tail, out)


def test_a_rust_super_path_and_a_whole_file_clash_get_helps_that_lead_somewhere(tmp_path: Path) -> None:
    """l17's reduce module, one directory below hashing: Rust's `use super::hashing::fmix32;` was told "`hashing::
    fmix32` names `hashing.tile` beside this file: `use hashing::fmix32;`", a file that is not there (a module path
    names no file above its importer's directory); the help now gives the string path that imports it. And its
    own `scale` beside `use "../hashing.tile";` (which brings hashing's `scale`) was "rename the local item or
    import only what you need", which a file above cannot do: the help says the `use` imports every item."""
    from tilelang import driver

    (tmp_path / "ops").mkdir()
    (tmp_path / "hashing.tile").write_text("fn scale(x: f32) -> f32 {\n    x * 2.0\n}\nconst K: i32 = 3;\n",
                                           encoding="utf-8")
    prog = tmp_path / "ops" / "reduce.tile"

    def first_help(src: str) -> tuple[str, str]:
        prog.write_text(src, encoding="utf-8")
        errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
        return errs[0].code, errs[0].help[0]

    main = "fn main() {\n    print(scale(1.5), K);\n}\n"
    code, got = first_help("use super::hashing::{scale, K};\n" + main)
    assert code == "E0109" and got.endswith('`use "../hashing.tile";` imports every item of `../hashing.tile`'), got
    prog.write_text('use "../hashing.tile";\n' + main, encoding="utf-8")
    assert not [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]   # the help, applied
    code, got = first_help("use super::nothing::f;\n" + main)
    assert got.endswith("but there is no `nothing.tile` there"), got
    code, got = first_help('use "../hashing.tile";\nfn scale(x: f32) -> f32 {\n    x * 3.0\n}\n' + main)
    assert code == "E0106" and got == 'rename one of the two: `use "../hashing.tile";` imports every item of that file'
    (tmp_path / "ops" / "near.tile").write_text("const K: i32 = 4;\n", encoding="utf-8")
    code, got = first_help('use "near.tile";\nconst K: i32 = 5;\nfn main() {\n    print(K);\n}\n')
    assert got.endswith("or import only what you need by its module path: `use near::{..};`"), got


# simulating a program takes 0.6-18 s (2026-12-07, 2 busy cores); the default run simulates the cheapest three
# (l01's three-phase scan and i64 carry loop, l06's u32/u64 bit tricks and saturating casts, l03's top-k rounds)
HEAVY = [n for n in CHECKS if n not in ("l01_three_phase_scan", "l06_bits_hashes_saturation", "l03_topk_ties")]

# emitting a program's PTX takes 1-5 s; the default run keeps l06's (u64 multiplies, every saturating cast)
HEAVY_PTX = [n for n in CHECKS if n != "l06_bits_hashes_saturation"]

# l12's tanh GELU: the GPU's `tanh` (within its documented bound) moves an f16 output by an ulp
SIM_TOL = {"l12_gemm_bias_gelu_residual": 1e-3}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "l*.tile", CHECKS, [(n, "sm_90a") for n in sorted(CHECKS)], sim_tol=SIM_TOL,
    ptx=[(n, "sm_90a") for n in sorted(CHECKS)], heavy=HEAVY, heavy_ptx=HEAVY_PTX)


def test_a_four_dimensional_output_is_refused_as_the_limits_say() -> None:
    """l10 as first written: an NCHW -> NHWC copy into `y: &mut Tensor<f32, [1, BH, W, C]>` passed `tilec check`
    alone (E0510 when it ran) and was E0701 beside l10's other kernels (whose generics made `tilec check` lower
    every instance); neither the reference's Limits nor `tilec explain E0701`/`E0510` said so. Both programs are
    now E0510 at `tilec check` (every shape a constant), and the documents say how to merge (o02, in
    test_user_wrong26.py, applies the help)."""
    from userprog import DIR

    from tilelang import driver
    from tilelang.diagnostics.explain import explain_text

    src = (DIR / "l10_transposed_operands.tile").read_text(encoding="utf-8")
    assert "y: &mut Tensor<f32, [BH, W, C]>" in src and "x: &Tensor<f32, [?, C, ?, W]>" in src
    first = ("kernel fn nchw_to_nhwc<const BH: i32, const W: i32, const C: i32>(y: &mut Tensor<f32, [1, BH, W, C]>,\n"
             "                                                                 x: &Tensor<f32, [?, C, ?, W]>) {\n"
             "    let t = x.partition([1, C, BH, W]).load([block_id(0), 0, block_id(1), 0]);\n"
             "    y.store(t.permute([0, 2, 3, 1]));\n}\nfn main() {\n    let x = randn::<f32>([2, 3, 10, 6], 1);\n"
             "    let mut y = zeros::<f32>([2, 10, 6, 3]);\n"
             "    nchw_to_nhwc::<5, 6, 3>(y.partition([1, 5, 6, 3]), &x).sync();\n}\n")
    other = ("kernel fn even<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {\n"
             "    y.store(x.partition([2 * B]).load([block_id(0)]).reshape([B, 2]).sum(1));\n}\n")
    for text in (first, other + first):
        errs = [d for d in driver.check(text, name="m.tile").diagnostics if d.severity.value == "error"]
        assert [d.code for d in errs] == ["E0510"], [(d.code, d.message) for d in errs]
        # (huser26: at the 4-D parameter itself, whatever the shapes, its type rewritten; wrong/s01 and o02)
        assert errs[0].help[0].startswith("merge the leading axes: `y: &mut Tensor<f32, [BH, W, C]>`")
    ref = (DIR.parents[2] / "docs" / "reference.md").read_text(encoding="utf-8")
    assert "`&mut` parameters at most 3, one grid axis each (a `&mut`\n  parameter of more is E0510" in ref
    assert "more than 3 dimensions is not this error but E0510" in (explain_text("E0701") or "")
    assert "`tilec check` refuses a `&mut` parameter of\nmore than three dimensions where it is declared" in \
        (explain_text("E0510") or "")

def test_an_integer_shift_by_a_band_matrix_is_built_on_the_gpu_as_the_reference_now_says(tmp_path: Path) -> None:
    """l22 as first written: its Hillis-Steele step shifted an i64 tile of 256 by a [256, 256] 0/1 matrix, which
    the interpreter runs and the GPU refused at compile (E0603: 512 KiB of shared memory), where the reference
    said such a matrix is "never built": only an f32 product by one runs as the shift it is. The reference now
    says so, and l22 shifts tiles of 64."""
    from userprog import DIR, tilec

    src = ("kernel fn shift<const B: i32>(out: &mut Tensor<ELT, [B]>, inp: &Tensor<ELT, [?]>) {\n"
           "    let k = arange::<i32>(B).reshape([B, 1]);\n    let j = arange::<i32>(B).reshape([1, B]);\n"
           "    out.store(dot(inp.load_like(out).reshape([1, B]), (k + 1 == j) as ELT).reshape([B]));\n}\n"
           "fn main() {\n    let x = arange::<ELT>(512);\n    let mut y = zeros::<ELT>([512]);\n"
           "    shift::<256>(y.partition([256]), &x).sync();\n    print(y[1]);\n}\n")
    prog = tmp_path / "i64.tile"   # (the f32 band's shift: tests/backend's shift_dot tests)
    prog.write_text(src.replace("ELT", "i64"), encoding="utf-8")
    r = tilec("emit", str(prog), "--stage", "llvm", "-o", str(tmp_path / "i64.ll"))
    assert r.returncode == 1 and "error[E0603]" in r.stderr and "526336 bytes" in r.stderr, r.stderr[:300]
    ref = (DIR.parents[2] / "docs" / "reference.md").read_text(encoding="utf-8")
    assert "of\nother element types the matrix is built in shared memory" in ref and "never being built" not in ref
    assert "shift_add::<64>" in (DIR / "l22_host_helpers_power_of_two_scan.tile").read_text(encoding="utf-8")


def test_hovering_a_generic_call_inside_a_generic_kernel_names_the_callers_generic() -> None:
    """l17 in an editor: hovering `fmix32(k)` inside `bucket_hist<const B: i32>` said "instantiated with `B = B`";
    it now says the device function's `B` is the caller's `B`, and a launch's constant stays `B = 128`."""
    from userprog import DIR

    from tilelang.lsp import analysis, hover

    p = DIR / "l17_use_modules_hashing.tile"
    text = p.read_text(encoding="utf-8")
    an = analysis.analyze(text, str(p))
    inside = hover.hover(an, text.index("fmix32(k)") + 1)
    launch = hover.hover(an, text.index("bucket(b.partition") + 1)
    assert inside is not None and "instantiated with `B` the caller's `B`" in inside.markdown, inside
    assert launch is not None and "instantiated with `B = 128`" in launch.markdown, launch
