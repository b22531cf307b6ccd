"""Round 22 of the independent user's programs (huser22, 2026-12-07): kernels in domains rounds 1-21 did not
take, written from BRIEF.md, README.md and docs/reference.md alone.

- e01: a banded matrix (SciPy's DIA format, five diagonals at offsets read from a tensor) times a vector, x
  read at `i + off` from the aligned tiles before, at and after a block's own, shifted by 0/1 matrices.
- e02: the 1-D wave equation on 12 strings of 100 points, three buffers rotated by host moves
  (`let old = prev; prev = cur; cur = next; next = old;`) in a `while` whose step count the CFL condition sets
  at run time; a [1, 100] tile a string.
- e03: a linear layer's backward pass in bf16 with a run-time batch: dX = dY W^T and dW = X^T dY, the loaded
  tiles transposed into `mma`, and db summed beside dW.
- e04: zlib's CRC-32 of 70 messages of 0 to 96 bytes (u8), bit by bit in u32 with a wrapping mask, then the
  murmur3 finalizer (wrapping multiplies) into 8 buckets.
- e05: a constant-velocity Kalman filter for 40 tracks over 50 steps, five [1, B] tiles carried as one tuple
  through a device function returning a tuple, dropped readings (NaN) skipping the update.
- e06: Black-Scholes prices and deltas, one generic kernel over f32 and f64 (`erf`, an untyped module
  constant), compared with a host function. Found: in the f64 instance the constant was f32's value (fixed).
- e07: one generic kernel (scale, clamp, row maximum, a count of clamped elements in i32) called for f16,
  bf16, f32 and i32 with scalars of `T`, and from Python (below).
- e08: a program split into modules of its own (`e08_modules/kernels.tile`, `e08_modules/stats.tile`), imported
  by module paths and by a file `use`, host functions returning a tuple of tensors and writing a `&mut` one.
- e09: a stable sort of 300 keys with many ties by ranks (a counting comparison kernel, then each output
  position picks the key of its rank): no data-dependent store.
- e10: JPEG's RGB <-> YCbCr on an interleaved u8 image as [3500, 3] tiles of width 3 (`dot` with a [3, 3] tile),
  rounding half away from zero and saturating, and the luma summed with an i64 `atomic_add`.
- e11: the CTC loss of 6 sequences by the alpha recursion in log space (extended labels as the lanes of a
  [1, 16] tile, the states s - 1 and s - 2 by 0/1 shifts, so a finite -1e30 stands for log 0), a `while` up to
  each sequence's own length.
- e12: xorshift32 seeded by a wrapping hash per lane, Box-Muller normals and a Monte Carlo pi, counts added
  with `atomic_add` in `unsafe`.
- e13: linear regression trained by Adam over two parameter groups of different shapes (the weights kept flat),
  a host function taking a parameter and its moments `&mut` launching the update for each.
- e14: point-in-polygon by the crossing number against a 14-vertex star (`^` on `bool` tiles, vertices read
  as scalars), and the shoelace area through a wrapping shift.
- e15: the heat equation in f64 with untyped `let`s (`let r = 0.4;` read by f64 kernels at f64's value: the
  check is to 1e-13), two half-steps recorded as a `graph { }` in a block and replayed a run-time number of
  times, an odd step count ending with a plain launch.

Each runs on the interpreter and is checked against NumPy from its own inputs, in the NVPTX simulator at
sm_90a and sm_80 (the slow ones `heavy`), and its PTX assembles on both.
"""

from __future__ import annotations

import math

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _f(t: Tensors, *names: str) -> tuple[np.ndarray, ...]:
    return tuple(t[k].astype(np.float64) for k in names)


def _e01(t: Tensors, out: str) -> None:
    data, x = _f(t, "data", "x")
    offs = t["offs"]
    n = len(x)
    a = np.zeros((n, n))
    for d, off in enumerate(offs):
        for i in range(n):
            if 0 <= i + off < n:
                a[i, i + off] = data[d, i]
    np.testing.assert_allclose(t["y"], a @ x, rtol=1e-5, atol=1e-5)
    assert list(offs) == [-3, -1, 0, 2, 5] and out == "Tensor<i32, [5]> [-3, -1,  0,  2,  5] [203]\n"


def _e02(t: Tensors, out: str) -> None:
    speed = t["speed"].astype(np.float32)
    dx = np.float32(1.0 / 99.0)
    dt = np.float32(0.9) * dx / speed.max()
    r2 = (speed * speed * (dt * dt / (dx * dx))).astype(np.float64)
    xs = np.arange(100) * float(dx)
    cur = np.repeat(np.exp((xs - 0.3) ** 2 * -200.0)[None] * 0.01, 12, 0)
    prev = cur.copy()
    steps = int(np.ceil(0.25 / float(dt)))
    for _ in range(steps):
        lap = np.zeros_like(cur)
        lap[:, 1:-1] = cur[:, :-2] + cur[:, 2:] - 2 * cur[:, 1:-1]
        nxt = 2 * cur - prev + lap * r2[:, None]
        nxt[:, 0] = nxt[:, -1] = 0
        prev, cur = cur, nxt
    np.testing.assert_allclose(t["cur"], cur, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["prev"], prev, rtol=1e-4, atol=1e-6)
    moved = np.abs(cur - cur[:, ::-1]).max()   # the bump split and travelled (not the start)
    assert moved > 1e-3 and out == f"{steps} {str(dt)} true\n"


def _e03(t: Tensors, out: str) -> None:
    x, w, dy = _f(t, "x", "w", "dy")
    assert t["x"].dtype == t["w"].dtype == np.float32   # (bf16 tensors read back as float32)
    np.testing.assert_allclose(t["dx"], dy @ w.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["dw"], x.T @ dy, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["db"], np.repeat(dy.sum(0)[None], 3, 0), rtol=1e-4, atol=1e-4)
    assert out == "[77, 48] [48, 40] [3, 40]\n"


def _murmur_fmix(h: np.ndarray) -> np.ndarray:
    h = h.astype(np.uint32)
    with np.errstate(over="ignore"):
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h


def _e04(t: Tensors, out: str) -> None:
    msg, ln = t["msg"], t["len"][:, 0]
    want = np.array([zlib.crc32(msg[i, :ln[i]].tobytes()) for i in range(len(ln))], np.uint32)
    assert t["crc"].dtype == np.uint32
    np.testing.assert_array_equal(t["crc"][:, 0], want)
    np.testing.assert_array_equal(t["b"], (_murmur_fmix(want) % 8).astype(np.int32))
    assert len(set(t["b"])) == 8 and msg.max() > 250 and out == "0 96 true\n"


def _e05(t: Tensors, out: str) -> None:
    z = t["z"].astype(np.float64)
    dt, q, r = 0.1, 0.01, 0.04
    x, v, p00, p01, p11 = z[0], np.zeros(40), np.full(40, r), np.zeros(40), np.full(40, 100.0)
    pos = [x]
    for s in range(1, 50):
        xp = x + v * dt
        a00, a01, a11 = p00 + (2 * p01 + p11 * dt) * dt + q, p01 + p11 * dt, p11 + q
        seen = ~np.isnan(z[s])
        k0, k1 = np.where(seen, a00 / (a00 + r), 0), np.where(seen, a01 / (a00 + r), 0)
        innov = np.where(seen, z[s] - xp, 0)
        x, v, p00, p01, p11 = xp + k0 * innov, v + k1 * innov, a00 - k0 * a00, a01 - k0 * a01, a11 - k1 * a01
        pos.append(x)
    np.testing.assert_allclose(t["pos"], np.array(pos), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["last"], [v, p11], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(v, t["v0"][0], atol=1.0)   # the filter found each track's speed
    assert not np.isnan(t["pos"]).any() and out == "[50, 40] true\n"


def _bs(s: np.ndarray, k: np.ndarray, t: np.ndarray, r: float, v: float) -> tuple[np.ndarray, ...]:
    def ndtr(x: np.ndarray) -> np.ndarray:  # the standard normal CDF (scipy.special.ndtr; no scipy in the venv)
        return 0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2.0))

    d1 = (np.log(s / k) + (v * v / 2 + r) * t) / (v * np.sqrt(t))
    call = s * ndtr(d1) - k * np.exp(-r * t) * ndtr(d1 - v * np.sqrt(t))
    return call, call - s + k * np.exp(-r * t), ndtr(d1)


def _e06(t: Tensors, out: str) -> None:
    opt = t["opt64"]
    assert t["out64"].dtype == np.float64 and t["out32"].dtype == np.float32
    want = np.array(_bs(*opt, 0.03, 0.25))
    np.testing.assert_allclose(t["out64"], want, rtol=1e-12, atol=1e-12)   # f64 through: no f32 constant
    np.testing.assert_allclose(t["out32"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(t["opt32"], opt.astype(np.float32))
    assert want[0].min() < 0.5 < 20 < want[0].max() and out == "true true true\n"


def _saturate(x: np.ndarray, scale: object, lo: object, hi: object) -> tuple[np.ndarray, ...]:
    s = x * scale                      # in x's own type (f16 rounds here, as the kernel's `T` does)
    z = np.minimum(np.maximum(s, lo), hi)
    return z, z.max(1, keepdims=True), ((s < lo).astype(np.int32) + (s > hi)).sum(1, keepdims=True)


def _e07(t: Tensors, out: str) -> None:
    x = t["x"]
    h = np.float16
    for (y, top, n), (z, ztop, zn) in (
            ((t["yh"], t["toph"], t["nh"]), _saturate(x.astype(h), h(1.5), h(-2.0), h(2.5))),
            ((t["yf"], t["topf"], t["nf"]), _saturate(x, np.float32(1.5), -2.0, 2.5)),
            ((t["yi"], t["topi"], t["ni"]), _saturate((x * 40).astype(np.int32), 3, -200, 250))):
        assert y.dtype == z.dtype and top.dtype == z.dtype and n.dtype == np.int32
        np.testing.assert_array_equal(y, z)
        np.testing.assert_array_equal(top, ztop)
        np.testing.assert_array_equal(n, zn)
    # bf16 (read back as float32): x rounded to bf16, times 1.5 rounded to bf16, clamped
    xb = t["xb"].astype(np.float64)
    sb = (xb * 1.5).astype(np.float32)
    bits = sb.view(np.uint32)
    sb = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)).view(np.float32)
    np.testing.assert_array_equal(t["yb"], np.clip(sb, -2.0, 2.5))
    np.testing.assert_array_equal(t["nb"], ((sb < -2.0).astype(np.int32) + (sb > 2.5)).sum(1, keepdims=True))
    assert 0 < t["ni"].sum() < 37 * 24 and out == "2.5 -2.0 2.5 250 true true [37, 24]\n"


def _e08(t: Tensors, out: str) -> None:
    (x,) = _f(t, "x")
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(t["y"], (x - mu) / np.sqrt(var + 1e-5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["m"], 0, atol=1e-5)
    np.testing.assert_allclose(t["v"], var / (var + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(t["m2"], t["m"], atol=1e-6)
    np.testing.assert_allclose(t["v2"], t["v"], rtol=1e-6)
    assert t["m"].shape == (45, 1) and out == "true true true 8\n"


def _e09(t: Tensors, out: str) -> None:
    keys = t["keys"][:, 0]
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(t["perm"][0], order)
    np.testing.assert_array_equal(t["sorted"][0], keys[order])
    np.testing.assert_array_equal(t["rank"][order, 0], np.arange(300))
    assert len(set(keys)) < 60 and out == "0 299 true\n"   # ties: the order among them is the index's


def _round_u8(v: np.ndarray) -> np.ndarray:
    return np.clip(np.where(v < 0, np.ceil(v - 0.5), np.floor(v + 0.5)), 0, 255).astype(np.uint8)


def _e10(t: Tensors, out: str) -> None:
    rgb = t["rgb"].astype(np.float32)
    fwd = np.array([[0.299, -0.168736, 0.5], [0.587, -0.331264, -0.418688], [0.114, 0.5, -0.081312]], np.float32)
    ycc = _round_u8(rgb @ fwd + np.float32([0, 128, 128]))
    assert t["ycc"].dtype == np.uint8
    d = np.abs(t["ycc"].astype(int) - ycc)
    assert d.max() <= 1 and (d > 0).sum() <= 3, d.sum()   # (a sum exactly at .5 may round the other way)
    inv = np.array([[1.0, 1.0, 1.0], [0.0, -0.344136, 1.772], [1.402, -0.714136, 0.0]], np.float32)
    back = _round_u8((t["ycc"].astype(np.float32) - np.float32([0, 128, 128])) @ inv)
    d = np.abs(t["back"].astype(int) - back)
    assert d.max() <= 1 and (d > 0).sum() <= 3, d.sum()
    assert np.abs(t["back"].astype(int) - t["rgb"]).max() <= 2
    y = t["ycc"][:, 0].astype(np.int64)
    np.testing.assert_array_equal(t["part"], [y[i:i + 64].sum() for i in range(0, 3500, 64)])
    assert t["total"][0] == y.sum() and (t["rgb"] == 255).any() and out == "true true [3500, 3]\n"


def _ctc(logp: np.ndarray, labels: np.ndarray) -> float:
    ext = np.zeros(2 * len(labels) + 1, int)
    ext[1::2] = labels
    alpha = np.full(len(ext), -np.inf)
    alpha[:2] = logp[0, ext[:2]]
    for t in range(1, len(logp)):
        prev = alpha.copy()
        for s in range(len(ext)):
            terms = [prev[s]] + ([prev[s - 1]] if s >= 1 else []) + \
                    ([prev[s - 2]] if s >= 2 and ext[s] != 0 and ext[s] != ext[s - 2] else [])
            alpha[s] = np.logaddexp.reduce(terms) + logp[t, ext[s]]
    return -np.logaddexp(alpha[-1], alpha[-2])


def _e11(t: Tensors, out: str) -> None:
    (logp,) = _f(t, "logp")
    tg, tl, xl = t["targets"], t["tlen"], t["xlen"]
    np.testing.assert_allclose(np.exp(logp).sum(2), 1, rtol=1e-5)
    want = [_ctc(logp[b, :xl[b]], tg[b, :tl[b]]) for b in range(6)]
    np.testing.assert_allclose(t["loss"], want, rtol=1e-4)
    repeats = any((tg[b, 1:tl[b]] == tg[b, :tl[b] - 1]).any() for b in range(6))
    assert repeats and out == "true [6]\n"   # a repeated label: the skip is refused there


def _e12(t: Tensors, out: str) -> None:
    u32 = np.uint32
    with np.errstate(over="ignore"):
        x = np.arange(4096, dtype=u32) ^ u32(2026)
        x ^= x >> u32(16)
        x *= u32(0x7FEB352D)
        x ^= x >> u32(15)
        x *= u32(0x846CA68B)
        s = (x ^ (x >> u32(16))) | u32(1)
    sz, szz, inside = np.zeros(4096), np.zeros(4096), np.zeros(4096, np.int64)

    def nxt(s: np.ndarray) -> np.ndarray:
        s = s ^ (s << u32(13))
        s = s ^ (s >> u32(17))
        return s ^ (s << u32(5))

    for _ in range(16):
        s = nxt(s)
        u1 = ((s >> u32(8)).astype(np.float32) + np.float32(0.5)) * np.float32(2 ** -24)   # as the kernel rounds
        s = nxt(s)
        u2 = ((s >> u32(8)).astype(np.float32) + np.float32(0.5)) * np.float32(2 ** -24)
        inside += u1 * u1 + u2 * u2 < 1
        u1, u2 = u1.astype(np.float64), u2.astype(np.float64)
        r = np.sqrt(-2 * np.log(u1))
        z0, z1 = r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)
        sz += z0 + z1
        szz += z0 * z0 + z1 * z1
    np.testing.assert_allclose(t["stats"], np.stack([sz, szz], 1), rtol=1e-4, atol=2e-4)
    np.testing.assert_array_equal(t["hits"], inside.reshape(16, 256).sum(1))
    assert t["total"][0] == inside.sum() and out == "true true true true\n"


def _e13(t: Tensors, out: str) -> None:
    x, wt = _f(t, "x", "w_true")
    y = x @ wt + 0.5
    np.testing.assert_allclose(t["y"], y, rtol=1e-5, atol=1e-5)
    p = [np.zeros(64), np.zeros(4)]
    m = [np.zeros(64), np.zeros(4)]
    v = [np.zeros(64), np.zeros(4)]
    for step in range(1, 61):
        err = (x @ p[0].reshape(16, 4) + p[1] - y) * (2 / 200)
        g = [(x.T @ err).ravel(), err.sum(0)]
        if step == 60:
            np.testing.assert_allclose(t["gw"], g[0], rtol=1e-3, atol=1e-3)
        for i in range(2):
            m[i] = 0.9 * m[i] + 0.1 * g[i]
            v[i] = 0.999 * v[i] + 0.001 * g[i] ** 2
            p[i] = p[i] - 0.05 * (m[i] / (1 - 0.9 ** step)) / (np.sqrt(v[i] / (1 - 0.999 ** step)) + 1e-8)
    np.testing.assert_allclose(t["w"], p[0], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(t["b"], p[1], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(t["vb"], v[1], rtol=1e-3, atol=1e-6)
    assert np.abs(p[0] - wt.ravel()).max() < np.abs(wt).max() and out == "[64] [4] true\n"   # it learnt


def _e14(t: Tensors, out: str) -> None:
    vx, vy, px, py = t["vx"], t["vy"], t["px"], t["py"]
    odd = np.zeros(1000, bool)
    for i in range(14):
        j = i - 1 if i else 13
        crosses = (vy[i] > py) != (vy[j] > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (vx[j] - vx[i]) * (py - vy[i]) / (vy[j] - vy[i]) + vx[i]   # f32, as the kernel
        odd ^= crosses & (px < at)
    np.testing.assert_array_equal(t["flag"], odd)
    x, y = vx.astype(np.float64), vy.astype(np.float64)
    want = 0.5 * abs((x * np.roll(y, -1) - np.roll(x, -1) * y).sum())
    np.testing.assert_allclose(t["a"], [want], rtol=1e-5)
    assert 250 < odd.sum() < 400 and out == f"true {str(t['a'][0])}\n"


def _e15(t: Tensors, out: str) -> None:
    f = np.float32
    dt = f(0.4 * (1.0 / 49.0) * (1.0 / 49.0))   # `let dt = r * dx * dx;` of untyped `let`s: f64's, printed as f32
    steps = int(f(0.01) / dt) + 1
    u = np.sin(np.arange(50) * (1.0 / 49.0) * 3.141592653589793)[None] * (np.arange(6) + 1.0)[:, None]
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[:, 1:-1] = (u[:, :-2] + u[:, 2:]) - u[:, 1:-1] * 2.0
        u = u + lap * 0.4                                  # f64's 0.4 (the `let r = 0.4;` read by an f64)
        u[:, 0] = u[:, -1] = 0.0
    np.testing.assert_allclose(t["a"], u, rtol=1e-13, atol=1e-15)
    assert t["a"].dtype == np.float64 and steps % 2 == 1 and out == f"{steps} {str(dt)} true\n"


CHECKS = {"e01_banded_dia_matvec": _e01, "e02_wave_three_buffers_moved": _e02, "e03_linear_backward_bf16": _e03,
          "e04_crc32_messages": _e04, "e05_kalman_tracks_tuple_scan": _e05,
          "e06_black_scholes_generic": _e06, "e07_generic_saturate_four_types": _e07,
          "e08_host_modules": _e08, "e09_rank_sort_two_kernels": _e09,
          "e10_ycbcr_u8_width3": _e10, "e11_ctc_loss_forward": _e11,
          "e12_xorshift_box_muller": _e12, "e13_adam_param_groups": _e13,
          "e14_point_in_polygon": _e14, "e15_heat_f64_graph_pingpong": _e15}

# simulations over ~2 s on a shared core (2026-12-07, sm_90a + sm_80 in one test): e02 18.7 s (42 launches of
# [100, 100] shift products), e12 8.3 s, e06 5.3 s, e11 4.4 s, e09 4.1 s, e05 3.2 s, e03 2.8 s, e01 2.7 s,
# e10 2.7 s, e14 2.4 s, e04 2.0 s
HEAVY = ["e01_banded_dia_matvec", "e02_wave_three_buffers_moved", "e03_linear_backward_bf16", "e04_crc32_messages",
         "e05_kalman_tracks_tuple_scan", "e06_black_scholes_generic", "e09_rank_sort_two_kernels",
         "e10_ycbcr_u8_width3", "e11_ctc_loss_forward", "e12_xorshift_box_muller", "e14_point_in_polygon"]

# emitting a program's PTX takes 1.5-6 s (2026-12-07); the default run keeps the two cheapest (e02's shifts and
# e05's tuple of tiles; e06's generic f64 constant is emitted in `test_an_untyped_constant_in_a_generic_..`)
HEAVY_PTX = [n for n in CHECKS if n not in ("e02_wave_three_buffers_moved", "e05_kalman_tracks_tuple_scan")]

# e13 runs 180 launches (60 Adam steps): 137 s in the simulator, too long even for `heavy` (e15's 121 f64 launches:
# 202 s); their kernels' PTX assembles below, and `test_the_adam_kernels_agree_in_the_simulator` and
# `test_the_f64_heat_graph_agrees_in_the_simulator` run a few steps of each
SIMULATED = [n for n in CHECKS if n not in ("e13_adam_param_groups", "e15_heat_f64_graph_pingpong")]

# e06's f32 put is call - spot + discounted strike, ~100 cancelling to ~0.5: the GPU's f32 `exp`/`log` (within their
# documented ulps) move it by an ulp of 100, 1.5e-5 (its f64 prices are checked to 1e-12 on every engine)
SIM_TOL = {"e06_black_scholes_generic": 5e-5}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "e*.tile", CHECKS, [(n, a) for n in sorted(SIMULATED) for a in ("sm_90a", "sm_80")], sim_tol=SIM_TOL,
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")], heavy=HEAVY, heavy_ptx=HEAVY_PTX)


def test_an_untyped_constant_in_a_generic_kernel_takes_its_t(tmp_path: Path) -> None:
    """e06's bug: `d * C` with `const C = 0.7071067811865476;` in a generic kernel instantiated for f64 read f32's
    0.70710677 (`std::math::SQRT_2` too), where the concrete f64 kernel and the host read f64's value. Each
    instance now reads the constant in its `T`, on the interpreter and in the simulator (f16's and f32's values
    as before)."""
    from userprog import run_program, simulated_program

    prog = tmp_path / "p.tile"
    prog.write_text("""const C = 0.7071067811865476;

fn half_c<T, const B: i32>(t: Tile<T, [B]>) -> Tile<T, [B]> {
    t * (C * 0.5)
}

kernel fn k<T, const B: i32>(out: &mut Tensor<T, [3, B]>, x: &Tensor<T, [?]>) {
    let t = x.partition([B]).load([0]).reshape([1, B]);
    let rows = out.partition([1, B]);
    rows.store(t * C, [0, 0]);
    rows.store(t * std::math::SQRT_2, [1, 0]);
    rows.store(half_c::<T, B>(t.reshape([B])).reshape([1, B]), [2, 0]);
}

fn main() {
    let x = ones::<f64>([4]);
    let mut a = zeros::<f64>([3, 4]);
    let mut b = zeros::<f32>([3, 4]);
    let mut h = zeros::<f16>([3, 4]);
    k(a.partition([3, 4]), &x).sync();
    k(b.partition([3, 4]), &(x as f32)).sync();
    k(h.partition([3, 4]), &(x as f16)).sync();
}
""")
    got, _ = run_program(prog)
    c = 0.7071067811865476
    for name, dt in (("a", np.float64), ("b", np.float32), ("h", np.float16)):
        want = np.repeat(np.array([c, np.sqrt(2), dt(c) * dt(0.5) if dt is np.float16 else c * 0.5], dt)[:, None],
                         4, 1)
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    sim = simulated_program(prog)
    for name in "abh":
        np.testing.assert_array_equal(sim[name], got[name], err_msg=name)


@pytest.mark.heavy  # 3.6 s; element-wise updates and `dot`s of transposed tiles, simulated by default elsewhere
def test_the_adam_kernels_agree_in_the_simulator(tmp_path: Path) -> None:
    """e13's two kernels (its 60 steps are too long to simulate) over two steps: the simulator leaves the
    interpreter's parameters, moments and gradients."""
    from userprog import DIR, assert_same_tensors, run_program, simulated_program

    src = (DIR / "e13_adam_param_groups.tile").read_text(encoding="utf-8")
    assert "for step in 1..=60 {" in src
    prog = tmp_path / "e13.tile"
    prog.write_text(src.replace("for step in 1..=60 {", "for step in 1..=2 {"), encoding="utf-8")
    want, _ = run_program(prog)
    assert np.abs(want["w"]).max() > 0.05   # it moved
    assert_same_tensors(simulated_program(prog), want, 1e-5)


def test_the_python_api_runs_the_generic_kernel_the_modules_and_the_crc() -> None:
    """e07's generic kernel from NumPy arrays of f16, f32 and i32 (`T` from the arrays, the scalars as NumPy
    scalars of `T`), e08's host functions of its own modules (a `&mut` array written back, a tuple of arrays
    returned), and e04's CRC kernel on u8 arrays against zlib."""
    import tilelang

    from userprog import DIR

    sat = tilelang.load(DIR / "e07_generic_saturate_four_types.tile")
    rng = np.random.default_rng(22)
    for dt, scale, lo, hi in ((np.float16, 1.5, -2.0, 2.5), (np.float32, 0.5, -1.0, 1.0), (np.int32, 3, -20, 40)):
        x = (rng.standard_normal((21, 24)) * (10 if dt is np.int32 else 2)).astype(dt)
        y, top, n = np.zeros_like(x), np.zeros((21, 1), dt), np.zeros((21, 1), np.int32)
        sat.saturate(tilelang.partition(y, [8, 24]), tilelang.partition(top, [8, 1]), tilelang.partition(n, [8, 1]),
                     x, dt(scale), dt(lo), dt(hi)).sync()
        z, ztop, zn = _saturate(x, dt(scale), dt(lo), dt(hi))
        np.testing.assert_array_equal(y, z, err_msg=str(dt))
        np.testing.assert_array_equal(top, ztop, err_msg=str(dt))
        np.testing.assert_array_equal(n, zn, err_msg=str(dt))
        assert 0 < n.sum() < 21 * 24

    mods = tilelang.load(DIR / "e08_host_modules.tile")
    x = (rng.standard_normal((13, 16)) * 4 + 1).astype(np.float32)
    y = np.zeros_like(x)
    mods.zscore(y, x)
    mu, var = x.astype(np.float64).mean(1, keepdims=True), x.astype(np.float64).var(1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5), rtol=1e-5, atol=1e-5)
    m, v = mods.moments(x)
    np.testing.assert_allclose(m, mu, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v, var, rtol=1e-4)

    crc = tilelang.load(DIR / "e04_crc32_messages.tile")
    msgs = [b"", b"a", b"The quick brown fox jumps over the lazy dog", bytes(range(40))]
    buf = np.zeros((4, 48), np.uint8)
    for i, b in enumerate(msgs):
        buf[i, :len(b)] = np.frombuffer(b, np.uint8)
    lens = np.array([[len(b)] for b in msgs], np.int32)
    out = np.zeros((4, 1), np.uint32)
    crc.crc32(tilelang.partition(out, [16, 1]), buf, lens).sync()
    assert list(out[:, 0]) == [zlib.crc32(b) for b in msgs]


def test_an_untyped_float_let_is_the_literal_wherever_it_is_read(tmp_path: Path) -> None:
    """Found beside e06: `let c = 0.7071067811865476;` read by an f64 (`x * c`, a kernel's tile or the host's
    tensor, a generic instance's `T`) was f32's 0.70710677 on both engines (the `let` held the f32 the checker
    defaults it to), and an f16 read rounded twice, through f32. Each read now rounds the literal once to its
    type: `1.00048828218` (just above f16's midpoint between 1 and 1 + 2^-10, within f32's half ulp of it) is
    1 + 2^-10 in f16, where through f32 it tied down to 1. A `let` of literals' arithmetic (`1.0 / 3.0`) is the
    same expression written where it is read (f64's third, where it was f32's), and so is each literal of a
    tuple `let` (`let (dt, near) = (0.01, ..);`) and a `let` of untyped constants (`let p = PI;`, `HALF * PI`).
    The simulator agrees."""
    from userprog import run_program, simulated_program

    prog = tmp_path / "p.tile"
    prog.write_text("""use std::math::PI;

const HALF = 0.5;

fn scaled<T, const B: i32>(t: Tile<T, [B]>) -> Tile<T, [B]> {
    let c = 0.7071067811865476;
    t * c
}

kernel fn consts<const B: i32>(z: &mut Tensor<f64, [B]>) {
    let p = PI;
    let q = HALF * std::math::PI - 1.0 / 3.0;
    z.store(full::<f64>([B], p) + q);
}

kernel fn k<const B: i32>(a: &mut Tensor<f64, [3, B]>, h: &mut Tensor<f16, [2, B]>, x: &Tensor<f64, [?]>) {
    let t = x.partition([B]).load([0]);
    let (dt, (third, _)) = (0.01, (-1.0 / 3.0 + 2 * (0.5 - 0.25), 7));
    let c = -0.7071067811865476;
    let near = 1.00048828218;
    let ra = a.partition([1, B]);
    ra.store((t * dt + t * third - t * (0.5 - 1.0 / 3.0)).reshape([1, B]), [0, 0]);
    ra.store((t * c).reshape([1, B]), [1, 0]);
    ra.store(scaled::<f64, B>(t).reshape([1, B]), [2, 0]);
    let rh = h.partition([1, B]);
    rh.store(full::<f16>([1, B], near), [0, 0]);
    rh.store((t as f16 * c).reshape([1, B]), [1, 0]);
}

fn main() {
    let x = ones::<f64>([4]);
    let mut a = zeros::<f64>([3, 4]);
    let mut h = zeros::<f16>([2, 4]);
    k(a.partition([3, 4]), h.partition([2, 4]), &x).sync();
    let mut pq = zeros::<f64>([2]);
    consts(pq.partition([2])).sync();
    let p = PI;
    let host_pq = x * p + HALF * PI;
    let (dt, near) = (0.01, 1.00048828218);
    let third = 1.0 / 3.0;
    let host = x * dt + x * third - x * (1.0 / 3.0);
    let hh = full::<f16>([1], near);
    let f = zeros::<f32>([1]) + dt;
    print(dt, near);
}
""")
    got, out = run_program(prog)
    c = 0.7071067811865476
    third = -1.0 / 3.0 + 2 * (0.5 - 0.25)   # f64's, as the same expression written in place
    np.testing.assert_array_equal(got["a"], np.repeat(np.array([[(0.01 + third) - (0.5 - 1.0 / 3.0)], [-c], [c]]), 4,
                                                      1))
    np.testing.assert_array_equal(got["h"], np.repeat(np.array([[1 + 2 ** -10], [np.float16(-c)]], np.float16), 4, 1))
    np.testing.assert_array_equal(got["host"], np.full(4, (0.01 + 1.0 / 3.0) - 1.0 / 3.0))
    assert got["hh"][0] == np.float16(1 + 2 ** -10) and got["f"][0] == np.float32(0.01)
    np.testing.assert_array_equal(got["pq"], np.full(2, np.pi + (0.5 * np.pi - 1.0 / 3.0)))   # a `let` of constants
    np.testing.assert_array_equal(got["host_pq"], np.full(4, np.pi + 0.5 * np.pi))
    assert out == "0.01 1.0004883\n"   # printed as the `let`s' default type, f32
    sim = simulated_program(prog)
    for name in ("a", "h", "pq"):
        np.testing.assert_array_equal(sim[name], got[name], err_msg=name)


@pytest.mark.heavy  # 4 s (f64 shift products); `test_an_untyped_float_let_..` simulates f64 `let`s by default
def test_the_f64_heat_graph_agrees_in_the_simulator(tmp_path: Path) -> None:
    """e15 over 3 steps (one replay of its graph and the odd step's launch): the simulator leaves the
    interpreter's f64 rods bit for bit (its sums are of products by 0 and 1, and 0.4 is f64's in both)."""
    from userprog import DIR, run_program, simulated_program

    src = (DIR / "e15_heat_f64_graph_pingpong.tile").read_text(encoding="utf-8")
    assert "(0.01 / dt)" in src
    prog = tmp_path / "e15.tile"
    prog.write_text(src.replace("(0.01 / dt)", "(0.0004 / dt)"), encoding="utf-8")
    want, out = run_program(prog)
    assert out.startswith("3 ")
    got = simulated_program(prog)
    np.testing.assert_array_equal(got["a"], want["a"])
    np.testing.assert_array_equal(got["b"], want["b"])


def test_an_untyped_let_of_a_math_call_is_its_value_wherever_it_is_read(tmp_path: Path) -> None:
    """huser22's leftover: `let q = sqrt(2.0);` read by an f64 was f32's 1.4142135381698608 on both engines
    (the call of untyped literals took the `let`'s default type, f32, before the f64 read decided it), where
    `x * sqrt(2.0)` written in place is f64's; `exp(1.0)` in a kernel was NumPy's f32 exp (2.7182819843) and on
    the host f32's e (2.7182817459): the engines disagreed. A `let` of a float built-in of untyped numbers
    (function or method form, `pow`, `fma`, `atan`, earlier untyped `let`s among them: `let b = a * 3.0;`) now
    holds its f64 value and each read rounds it once to its type, as a `let` of literals does; E0209's help for
    `const C = sqrt(2.0);` ("compute it with a `let` where it is used") so gives f64's value. The simulator agrees."""
    from fractions import Fraction

    from userprog import first_error, fixed_program, run_program, simulated_program

    prog = tmp_path / "p.tile"
    prog.write_text("""
fn vals<T, const B: i32>(t: Tile<T, [B]>) -> Tile<T, [B]> {
    let q = sqrt(2.0);
    t * q
}

kernel fn k<const B: i32>(a: &mut Tensor<f64, [7, B]>, h: &mut Tensor<f16, [1, B]>, f: &mut Tensor<f32, [1, B]>,
                          x: &Tensor<f64, [?]>) {
    let t = x.partition([B]).load([0]);
    let q = sqrt(2.0);
    let e = exp(1.0);
    let m = (2.0).sqrt();
    let a0 = 0.1;
    let b = a0 * 3.0;
    let p = pow(2.0, 0.5) + fma(0.1, 10.0, 1.0 / 3.0);
    let pi = atan(1.0) * 4.0;
    let ra = a.partition([1, B]);
    ra.store((t * q).reshape([1, B]), [0, 0]);
    ra.store((t * e).reshape([1, B]), [1, 0]);
    ra.store((t * m).reshape([1, B]), [2, 0]);
    ra.store((t * b).reshape([1, B]), [3, 0]);
    ra.store((t * p).reshape([1, B]), [4, 0]);
    ra.store((t * pi).reshape([1, B]), [5, 0]);
    ra.store(vals::<f64, B>(t).reshape([1, B]), [6, 0]);
    h.store(full::<f16>([1, B], e));
    f.store(full::<f32>([1, B], e));
}

fn main() {
    let x = ones::<f64>([4]);
    let mut a = zeros::<f64>([7, 4]);
    let mut h = zeros::<f16>([1, 4]);
    let mut f = zeros::<f32>([1, 4]);
    k(a.partition([7, 4]), h.partition([1, 4]), f.partition([1, 4]), &x).sync();
    let q = sqrt(2.0);
    let e = exp(1.0);
    let a0 = 0.1;
    let b = a0 * 3.0;
    let host = x * q + x * e * 1000.0 + x * b * 1000000.0;
    let hf = zeros::<f32>([1]) + e;
    print(q, e);
}
""")
    got, out = run_program(prog)
    r2, e = math.sqrt(2.0), math.e
    fma = float(Fraction(0.1) * 10 + Fraction(1.0 / 3.0))   # one rounding
    want = np.array([r2, e, r2, 0.1 * 3.0, r2 + fma, math.pi, r2])
    np.testing.assert_array_equal(got["a"], np.repeat(want[:, None], 4, 1))
    assert got["h"][0, 0] == np.float16(e) and got["f"][0, 0] == np.float32(e) and got["hf"][0] == np.float32(e)
    np.testing.assert_array_equal(got["host"], np.full(4, r2 + e * 1000.0 + 0.1 * 3.0 * 1000000.0))
    assert out == "1.4142135 2.7182817\n"   # printed as the `let`s' default type, f32
    sim = simulated_program(prog)
    for name in ("a", "h", "f"):
        np.testing.assert_array_equal(sim[name], got[name], err_msg=name)
    # E0209's help for a `const` of a call, applied: the `let` where it is used reads f64's value
    bad = tmp_path / "c.tile"
    bad.write_text("""const R = sqrt(2.0);

kernel fn k(z: &mut Tensor<f64, [4]>, x: &Tensor<f64, [?]>) {
    z.store(x.load_like(z) * R);
}

fn main() {
    let x = ones::<f64>([4]);
    let mut z = zeros::<f64>([4]);
    k(z.partition([4]), &x).sync();
}
""")
    (tmp_path / "fixed").mkdir()
    d = first_error(bad)
    assert d.code == "E0209" and any("compute it with a `let` where it is used" in h for h in d.help), d.help
    fixed = fixed_program(bad, [("const R = sqrt(2.0);\n", ""), ("    z.store(", "    let R = sqrt(2.0);\n    z.store(")],
                          tmp_path / "fixed")
    np.testing.assert_array_equal(run_program(fixed)[0]["z"], np.full(4, r2))
