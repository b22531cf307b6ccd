"""Round 26 of the independent user's programs (huser27, 2026-12-07): a scientific-computing user's kernels
(physics, imaging, numerical methods), written from BRIEF.md, README.md, docs/reference.md and examples/ alone,
in the areas rounds 1-25 took least.

- q01: red-black Gauss-Seidel for a 2-D Poisson problem, a block a row, the two colours as two launches.
- q02: Newton's method for z^3 = 1 on a grid, complex numbers as pairs of f32 tiles with tuple-returning device
  functions for the product and quotient.
- q03: Monte Carlo pi from a counter-based integer hash (u32 arithmetic that wraps), per-block counts and an i64
  `atomic_add` total.
- q04: an f64 GEMM (alpha A B + beta C) with tails on every axis, and its transpose in [16, 32] -> [32, 16] tiles.
- q05: host code around .npy files: a u8 image saved, read back typed, gamma-corrected, saved and read again.
- q06: particle binning by a counting sort: one-hot counts by `atomic_add`, a host scan, ranks, a scatter by
  `store_unchecked`.
- q07: a radix-2 decimation-in-time FFT of rows of 32 (bit reversal as a 0/1 product, five butterfly stages as
  4-D views) and its inverse.
- q08: the Harris corner response of a batch of images (gradients, 3 x 3 box sums and 8-neighbour maxima all by
  band matrices through `dot`).
- q09: Ogita-Rump-Oishi Dot2 (TwoProduct by `fma`, TwoSum, a pairwise fold of the lanes) of ill-conditioned rows.
- q10: the 2-D Ising model by checkerboard Metropolis on a torus, i8 spins, a hash generator, observables a sweep.
- q11: 1-D FDTD (Yee) in place, three launches a step recorded in a `graph` and replayed, a step counter tensor.
- q12: a lattice-Boltzmann D2Q9 BGK step on a periodic grid; a shear wave decays at the viscous rate.
- q13: Durand-Kerner for the five complex roots of 40 quintics at once.
- q14: Gray-Scott reaction-diffusion on a torus in [16, 16] tiles with wrapped halo rows and columns.
- q15: Gauss-Legendre nodes and weights by Newton in f64 (one launch), then 200 integrals (a second).
- q16: Otsu's threshold of u8 images (histograms by `atomic_add`, between-class variance from `cumsum`s, `argmax`).
- q17: JPEG's DCT-II of 8 x 8 blocks, quantisation to i32, the inverse, u8 back.
- q18: adaptive-step RK23 (Bogacki-Shampine) for 100 driven pendulums, each lane its own step size, in f64.
- q19: SPH density and symmetric pressure accelerations, all pairs in tiles (momentum conserved).
- q20: conjugate gradients in f64 with a CSR SpMV (a block's nonzeros as one run, rows by counting row starts),
  partial dots, axpy kernels and a host `while` loop.
- q21: the 3-D wave equation by leapfrog in [4, 8, 8] tiles, each axis's shift by `permute` and a 0/1 product,
  the six halo faces read at any position, three buffers rotated by moves.

Each runs on the interpreter and is checked against NumPy written independently of the program; the NVPTX
simulator at sm_90a runs all but q05 (two by default, the rest `heavy`), and the PTX assembles for sm_90a.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]
f32 = np.float32


def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.broadcast_to(np.arange(h, dtype=f32)[:, None], (h, w)),
            np.broadcast_to(np.arange(w, dtype=f32)[None, :], (h, w)))


def _q01(t: Tensors, out: str) -> None:
    i, j = _grid(20, 24)
    f = (((i - 10) ** 2 + (j - 12) ** 2) < 9).astype(np.float64)
    u = np.where(i == 0, 1.0, np.where(j == 23, 0.5, 0.0))
    np.testing.assert_array_equal(t["f"], f)
    inner = np.zeros((20, 24), bool)
    inner[1:-1, 1:-1] = True

    def nb(a: np.ndarray) -> np.ndarray:
        p = np.pad(a, 1)
        return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]

    def res(a: np.ndarray) -> np.ndarray:
        return np.where(inner, np.abs(nb(a) - 4 * a + f), 0).max(1)

    r0 = res(u)
    for _ in range(20):
        for colour in (0, 1):
            u = np.where(inner & ((i + j) % 2 == colour), (nb(u) + f) / 4, u)
    np.testing.assert_allclose(t["u"], u, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["r0"][:, 0], r0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t["r1"][:, 0], res(u), rtol=1e-3, atol=1e-5)
    assert out == "true\n"


def _q02(t: Tensors, out: str) -> None:
    h, w = 48, 64
    r, c = _grid(h, w)
    zr = (f32(-2) + f32(4) * c / f32(w - 1)).astype(f32)
    zi = (f32(1.5) - f32(3) * r / f32(h - 1)).astype(f32)
    hit = np.full((h, w), -1)
    when = np.full((h, w), -1)
    roots = [(np.cos(f32(2.0943951) * k), np.sin(f32(2.0943951) * k)) for k in range(3)]
    with np.errstate(all="ignore"):
        for it in range(24):
            z2r, z2i = zr * zr - zi * zi, zr * zi + zi * zr
            z3r, z3i = z2r * zr - z2i * zi, z2r * zi + z2i * zr
            ar, ai, br, bi = z3r - 1, z3i, 3 * z2r, 3 * z2i
            d = br * br + bi * bi
            zr, zi = zr - (ar * br + ai * bi) / d, zi - (ai * br - ar * bi) / d
            for k, (kr, ki) in enumerate(roots):
                near = (zr - kr) ** 2 + (zi - ki) ** 2 < 1e-6
                when = np.where(near & (when < 0), it, when)
                hit = np.where(near, k, hit)
    z = t["z"]
    assert z.shape == (h, w, 2)
    np.testing.assert_allclose(z[..., 0], zr, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(z[..., 1], zi, rtol=1e-4, atol=1e-5)
    assert (t["root"] == hit).mean() > 0.995 and (t["first"] == when).mean() > 0.99
    assert {0, 1, 2} <= set(np.unique(t["root"]).tolist())
    assert out == "true true true true\n"


def _lowbias32(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint32(16))
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> np.uint32(16))


def _q03(t: Tensors, out: str) -> None:
    k = np.arange(37 * 4 * 1024, dtype=np.uint32)
    for seed, hits, total in ((12345, "hits", "total"), (0x9E3779B9, "hits2", "total2")):
        def u(c: np.ndarray, seed: int = seed) -> np.ndarray:
            return (_lowbias32(c ^ np.uint32(seed)) >> np.uint32(8)).astype(f32) * f32(1 / 16777216)
        x, y = u(2 * k), u(2 * k + 1)
        inside = (x * x + y * y <= f32(1)).reshape(37, 4096).sum(1)
        np.testing.assert_array_equal(t[hits], inside)
        assert t[total].tolist() == [inside.sum()] and t[total].dtype == np.int64
    assert abs(4 * t["total"][0] / (37 * 4096) - np.pi) < 0.02
    assert out == "true true true\n"


def _q04(t: Tensors, out: str) -> None:
    a, b, c0 = t["a"], t["b"], t["_c0"]
    assert a.shape == (70, 45) and b.shape == (45, 52) and a.dtype == np.float64
    want = 1.5 * a @ b - 0.5 * c0
    np.testing.assert_allclose(t["c"], want, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(t["ct"], t["c"].T)
    assert out == "[52, 70] 0.0\n"


def _q05(t: Tensors, out: str) -> None:
    i, j = _grid(40, 56)
    ramp = (i + j) * f32(255 / 94)
    made = np.where((i - 20) ** 2 + (j - 30) ** 2 < 64, f32(250), ramp).astype(np.uint8)
    np.testing.assert_array_equal(t["img"], made)
    np.testing.assert_array_equal(np.load("/tmp/tile_q05_image.npy"), made)
    p = made.astype(np.float64) / 255
    want = np.clip(np.floor(255 * np.maximum(p, 1e-12) ** (1 / 2.2) + 0.5), 0, 255)
    got = t["out"].astype(np.float64)
    assert np.abs(got - want).max() <= 1 and (got == want).mean() > 0.98
    np.testing.assert_array_equal(t["back"], t["out"])
    np.testing.assert_allclose(t["means"], t["back"].astype(np.float64).mean(1), rtol=1e-14)
    np.testing.assert_array_equal(np.load("/tmp/tile_q05_means.npy"), t["means"])
    assert out == "[40, 56] 0 255 0\n"


def _q06(t: Tensors, out: str) -> None:
    pos = t["pos"]
    c = np.minimum(np.floor(pos * 8).astype(int), 7)
    cell = c[:, 0] + 8 * c[:, 1]
    np.testing.assert_array_equal(t["cell"], cell)
    np.testing.assert_array_equal(t["counts"], np.bincount(cell, minlength=64))
    order = np.argsort(cell, kind="stable")
    np.testing.assert_array_equal(t["order"], order)
    rank = np.empty(300, int)
    rank[order] = np.arange(300)
    np.testing.assert_array_equal(t["r"], rank)
    np.testing.assert_array_equal(t["sorted"], pos[order])
    np.testing.assert_array_equal(t["done"], [64, 64, 64, 64, 44])
    assert out == "300 300 true\n"


def _q07(t: Tensors, out: str) -> None:
    x = t["xr"].astype(np.float64) + 1j * t["xi"]
    want = np.fft.fft(x, axis=1)
    scale = np.abs(want).max()
    np.testing.assert_allclose(t["fr"], want.real, atol=2e-5 * scale)
    np.testing.assert_allclose(t["fi"], want.imag, atol=2e-5 * scale)
    np.testing.assert_allclose(t["br"], t["xr"], atol=1e-5)
    np.testing.assert_allclose(t["bi"], t["xi"], atol=1e-5)
    assert out == "true true\n"


def _q08(t: Tensors, out: str) -> None:
    img = t["img"].astype(np.float64)
    peaks = []
    for b in range(3):
        p = np.pad(img[b], 1)
        gx = (p[1:-1, 2:] - p[1:-1, :-2]) / 2
        gy = (p[2:, 1:-1] - p[:-2, 1:-1]) / 2

        def box(a: np.ndarray) -> np.ndarray:
            q = np.pad(a, 1)
            return sum(q[1 + di:25 + di, 1 + dj:33 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1))

        sxx, syy, sxy = box(gx * gx), box(gy * gy), box(gx * gy)
        r = sxx * syy - sxy * sxy - 0.05 * (sxx + syy) ** 2
        np.testing.assert_allclose(t["resp"][b], r, atol=1e-5 * np.abs(r).max())
        rp = np.pad(r, 1)
        pk = r > 0.01
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                if di or dj:
                    pk &= r > rp[1 + di:25 + di, 1 + dj:33 + dj]
        peaks.append(int(pk.sum()))
    np.testing.assert_array_equal(t["peaks"], peaks)
    assert out == "true true\n"


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    z = s - a
    return s, (a - (s - z)) + (b - z)


def _q09(t: Tensors, out: str) -> None:
    x, y = t["x"], t["y"]
    assert x.dtype == f32 and x.shape == (6, 2000)
    xp = np.zeros((6, 2048), f32)
    yp = np.zeros((6, 2048), f32)
    xp[:, :2000], yp[:, :2000] = x, y
    want = []
    for r in range(6):
        s = np.zeros(128, f32)
        c = np.zeros(128, f32)
        for k in range(16):
            a, b = xp[r, k * 128:(k + 1) * 128], yp[r, k * 128:(k + 1) * 128]
            p = a * b
            e = (a.astype(np.float64) * b - p).astype(f32)    # fma(a, b, -p): exact in f64, and exactly an f32
            s, q = _two_sum(s, p)
            c = c + (q + e)
        while s.size > 1:
            lo, hi = s[0::2], s[1::2]
            s, e2 = _two_sum(lo, hi)
            c = e2 + (c[0::2] + c[1::2])
        want.append(s[0] + c[0])
    np.testing.assert_array_equal(t["acc"], np.array(want, f32))
    exact = (x.astype(np.float64) * y).sum(1)
    mag = np.abs(x.astype(np.float64) * y).sum(1)
    assert np.all(np.abs(t["acc"] - exact) <= 1e-6 * np.abs(exact) + 1e-9 * mag)
    assert np.abs(t["naive"] - exact).max() > 10 * np.abs(t["acc"] - exact).max()
    assert out == "true\n"


def _ising_hash(c: np.ndarray) -> np.ndarray:
    x = c * np.uint32(0x9E3779B1)
    x = x ^ (x >> np.uint32(15))
    x = x * np.uint32(0x2C1B3C6D)
    x = x ^ (x >> np.uint32(12))
    x = x * np.uint32(0x297A2D39)
    return x ^ (x >> np.uint32(15))


def _q10(t: Tensors, out: str) -> None:
    s = t["_s0"].astype(f32)
    ii, jj = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    site = (ii * 32 + jj).astype(np.uint32)
    mags, energies = [], []
    for step in range(12):
        for colour in (0, 1):
            nb = np.roll(s, 1, 0) + np.roll(s, -1, 0) + np.roll(s, 1, 1) + np.roll(s, -1, 1)
            de = f32(2) * s * nb
            u = (_ising_hash(site ^ np.uint32((step * 2 + colour) << 10)) >> np.uint32(8)).astype(f32) \
                * f32(1 / 16777216)
            flip = ((ii + jj) % 2 == colour) & (u < np.exp(f32(-0.6) * de))
            s = np.where(flip, -s, s)
        mags.append(s.mean())
        energies.append(-(s * (np.roll(s, -1, 1) + np.roll(s, -1, 0))).sum() / 1024)
    np.testing.assert_array_equal(t["s"], s.astype(np.int8))
    np.testing.assert_allclose(t["mag"], mags, atol=1e-6)
    np.testing.assert_allclose(t["energy"], energies, atol=1e-6)
    assert set(np.unique(t["s"]).tolist()) <= {-1, 1} and out == "true 1\n"


def _q11(t: Tensors, out: str) -> None:
    n, c = 300, 0.5
    e = np.zeros(n)
    h = np.zeros(n)
    for step in range(1, 61):
        h[:-1] += c * (e[1:] - e[:-1])
        h[-1] += c * (0 - e[-1])
        hp = np.concatenate([[0.0], h[:-1]])
        e += c * (h - hp)
        e[100] += np.exp(-((step - 30) / 10) ** 2)
        e[0] = e[-1] = 0
    np.testing.assert_allclose(t["e"], e, atol=2e-5)
    np.testing.assert_allclose(t["h"], h, atol=2e-5)
    assert t["step"].tolist() == [60] and out == "60 true 0.0 0.0\n"


def _q12(t: Tensors, out: str) -> None:
    cx = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1])
    cy = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1])
    w = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
    f = t["_f0"].astype(np.float64)
    y = np.arange(16, dtype=np.float64)[:, None] * np.ones((1, 32))
    ux0 = 0.05 * np.sin(2 * np.pi * y / 16)
    cu = cx[:, None, None] * ux0
    np.testing.assert_allclose(f, w[:, None, None] * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * ux0 * ux0), atol=1e-7)
    for _ in range(16):
        rho = f.sum(0)
        ux = (cx[:, None, None] * f).sum(0) / rho
        uy = (cy[:, None, None] * f).sum(0) / rho
        cu = cx[:, None, None] * ux + cy[:, None, None] * uy
        feq = w[:, None, None] * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * (ux * ux + uy * uy))
        post = f - (f - feq) / 0.8
        f = np.stack([np.roll(post[k], (cy[k], cx[k]), axis=(0, 1)) for k in range(9)])
    np.testing.assert_allclose(t["f"], f, atol=1e-6)
    amp = ((cx[:, None, None] * f).sum(0) / f.sum(0)).max()
    assert abs(amp / (0.05 * np.exp(-(0.1) * (2 * np.pi / 16) ** 2 * 16)) - 1) < 0.02
    assert out == "true true\n"


def _q13(t: Tensors, out: str) -> None:
    coef = t["coef"].astype(np.float64)
    got = t["rr"] + 1j * t["ri"]
    assert np.all(t["res"] < 1e-3 * np.maximum(1, np.abs(coef).sum(1, keepdims=True) * np.abs(got) ** 5))
    for p in range(40):
        want = np.roots(coef[p])
        for z in got[p]:
            assert np.abs(want - z).min() < 2e-3 * max(1, abs(z)), (p, z, want)
        # each of numpy's roots is found once
        assert sorted(int(np.abs(got[p] - w).argmin()) for w in want) == [0, 1, 2, 3, 4], (p, got[p], want)
    assert out == "true true\n"


def _q14(t: Tensors, out: str) -> None:
    u, v = t["_u0"].astype(np.float64), t["_v0"].astype(np.float64)

    def lap(a: np.ndarray) -> np.ndarray:
        return np.roll(a, 1, 0) + np.roll(a, -1, 0) + np.roll(a, 1, 1) + np.roll(a, -1, 1) - 4 * a

    for _ in range(30):
        uvv = u * v * v
        u, v = u + 0.16 * lap(u) - uvv + 0.035 * (1 - u), v + 0.08 * lap(v) + uvv - 0.1 * v
    np.testing.assert_allclose(t["u"], u, atol=2e-5)
    np.testing.assert_allclose(t["v"], v, atol=2e-5)
    assert out == "true true\n"


def _q15(t: Tensors, out: str) -> None:
    x, w = np.polynomial.legendre.leggauss(16)
    np.testing.assert_allclose(np.sort(t["nodes"]), x, atol=1e-15)
    np.testing.assert_allclose(t["weights"][np.argsort(t["nodes"])], w, atol=1e-14)
    a = (np.arange(200) + 1) * 0.01
    np.testing.assert_allclose(t["ie"], 2 * np.sinh(a) / a, rtol=1e-13)
    rule = (w / (1 + (a[:, None] * x) ** 2)).sum(1)   # the 16-point rule itself (it errs from arctan by ~4e-7)
    np.testing.assert_allclose(t["ir"], rule, rtol=1e-13)
    np.testing.assert_allclose(t["ir"], 2 * np.arctan(a) / a, rtol=1e-6)
    assert out == "true true\n"


def _q16(t: Tensors, out: str) -> None:
    img = t["img"]
    assert img.dtype == np.uint8 and img.shape == (4, 48, 40)
    for b in range(4):
        h = np.bincount(img[b].ravel(), minlength=256)
        np.testing.assert_array_equal(t["hist"][b], h)
        w0 = np.cumsum(h).astype(np.float64)
        m0 = np.cumsum(h * np.arange(256)).astype(np.float64)
        tot, mt = w0[-1], m0[-1]
        w1 = tot - w0
        with np.errstate(all="ignore"):
            var = np.where((w0 > 0) & (w1 > 0), (mt * w0 - tot * m0) ** 2 / (w0 * w1), 0)
        np.testing.assert_allclose(t["var"][b], var, rtol=1e-12)
        assert t["thr"][b] == np.argmax(var)
        np.testing.assert_array_equal(t["mask"][b], np.where(img[b] > np.argmax(var), 255, 0))
    assert out == "7680 true true\n"


def _q17(t: Tensors, out: str) -> None:
    img = t["img"].astype(np.float64)
    k = np.arange(8)[:, None]
    n = np.arange(8)[None, :]
    c = np.where(k == 0, np.sqrt(0.125), 0.5) * np.cos((2 * n + 1) * k * np.pi / 16)
    r, cc = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    q = 16 + 3 * r * cc + 4 * (r + cc)
    np.testing.assert_array_equal(t["q"], q)
    coef = np.zeros((40, 48))
    back = np.zeros((40, 48))
    for bi in range(5):
        for bj in range(6):
            x = img[bi * 8:bi * 8 + 8, bj * 8:bj * 8 + 8] - 128
            y = c @ x @ c.T / q
            qc = np.where(y < 0, -np.floor(-y + 0.5), np.floor(y + 0.5))
            coef[bi * 8:bi * 8 + 8, bj * 8:bj * 8 + 8] = qc
            back[bi * 8:bi * 8 + 8, bj * 8:bj * 8 + 8] = np.clip(np.floor(c.T @ (qc * q) @ c + 128 + 0.5), 0, 255)
    assert np.abs(t["coef"] - coef).max() <= 1 and (t["coef"] == coef).mean() > 0.995
    assert np.abs(t["out"].astype(np.float64) - back).max() <= 2 and (t["out"] == back).mean() > 0.95
    assert out == "true true\n"


def _q18(t: Tensors, out: str) -> None:
    a = np.arange(100) * 0.015

    def rhs(tt: np.ndarray, th: np.ndarray, om: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return om, -np.sin(th) - 0.1 * om + a * np.cos(tt)

    th, om, tt, h = np.full(100, 0.2), np.zeros(100), np.zeros(100), np.full(100, 0.01)
    acc, rej = np.zeros(100, int), np.zeros(100, int)
    while (tt < 4).any():
        live = tt < 4
        hh = np.minimum(h, 4 - tt)
        k1 = rhs(tt, th, om)
        k2 = rhs(tt + 0.5 * hh, th + 0.5 * hh * k1[0], om + 0.5 * hh * k1[1])
        k3 = rhs(tt + 0.75 * hh, th + 0.75 * hh * k2[0], om + 0.75 * hh * k2[1])
        nth = th + hh * (2 * k1[0] + 3 * k2[0] + 4 * k3[0]) / 9
        nom = om + hh * (2 * k1[1] + 3 * k2[1] + 4 * k3[1]) / 9
        k4 = rhs(tt + hh, nth, nom)
        et = hh * (-5 * k1[0] / 72 + k2[0] / 12 + k3[0] / 9 - k4[0] / 8)
        eo = hh * (-5 * k1[1] / 72 + k2[1] / 12 + k3[1] / 9 - k4[1] / 8)
        err = np.maximum(np.abs(et) / (1e-6 + 1e-6 * np.maximum(np.abs(th), np.abs(nth))),
                         np.abs(eo) / (1e-6 + 1e-6 * np.maximum(np.abs(om), np.abs(nom))))
        ok = live & (err <= 1)
        th, om, tt = np.where(ok, nth, th), np.where(ok, nom, om), np.where(ok, tt + hh, tt)
        acc += ok
        rej += live & (err > 1)
        h = np.where(live, hh * np.minimum(np.maximum(0.9 * np.exp(np.log(1 / np.maximum(err, 1e-10)) / 3), 0.2), 5),
                     h)
    np.testing.assert_allclose(t["theta"], th, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(t["omega"], om, rtol=1e-9, atol=1e-12)
    assert np.abs(t["steps"] - acc).max() <= 1 and np.abs(t["rejected"] - rej).max() <= 1
    # against a fine fixed-step RK4 of the same system
    x = np.stack([np.full(100, 0.2), np.zeros(100)])
    dt = 4 / 1600

    def g(tt: float, s: np.ndarray) -> np.ndarray:
        return np.stack([s[1], -np.sin(s[0]) - 0.1 * s[1] + a * np.cos(tt)])

    for n in range(1600):
        tt = n * dt
        k1 = g(tt, x)
        k2 = g(tt + dt / 2, x + dt / 2 * k1)
        k3 = g(tt + dt / 2, x + dt / 2 * k2)
        k4 = g(tt + dt, x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    np.testing.assert_allclose(t["theta"], x[0], atol=1e-3)   # (lanes 70-72 are the most sensitive)
    assert out == "true true\n"


def _q19(t: Tensors, out: str) -> None:
    x, y, m = (t[k].astype(np.float64) for k in ("x", "y", "m"))
    h = 0.08
    dx = x[:, None] - x[None, :]
    dy = y[:, None] - y[None, :]
    r = np.sqrt(dx * dx + dy * dy)
    q = r / h
    s = 10 / (7 * np.pi * h * h)
    wk = s * np.where(q < 1, 1 - 1.5 * q ** 2 + 0.75 * q ** 3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0))
    dw = s * np.where(q < 1, -3 * q + 2.25 * q ** 2, np.where(q < 2, -0.75 * (2 - q) ** 2, 0))
    rho = (m[None, :] * wk).sum(1)
    np.testing.assert_allclose(t["rho"], rho, rtol=1e-4)
    p = 1.0 * (rho - 0.8) / rho ** 2
    with np.errstate(all="ignore"):
        coef = np.where(r > 0, -m[None, :] * (p[:, None] + p[None, :]) * dw / (h * r), 0)
    ax, ay = (coef * dx).sum(1), (coef * dy).sum(1)
    scale = np.abs(ax).max()
    np.testing.assert_allclose(t["ax"], ax, atol=1e-4 * scale)
    np.testing.assert_allclose(t["ay"], ay, atol=1e-4 * scale)
    assert out == "true true true\n"


def _q20(t: Tensors, out: str) -> None:
    n = 100
    a = np.zeros((n, n))
    rp, ci, v = t["row_ptr"], t["col_idx"], t["vals"]
    assert rp[0] == 0 and rp[-1] == len(ci) == len(v) == 3 * n - 2
    for r in range(n):
        for k in range(rp[r], rp[r + 1]):
            a[r, ci[k]] += v[k]
    want = np.diag(2.5 + np.arange(n) / 100) - np.eye(n, k=1) - np.eye(n, k=-1)
    np.testing.assert_array_equal(a, want)
    b = np.sin(np.arange(n) * 0.3) + 1
    np.testing.assert_allclose(t["x"], np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(t["check"], a @ t["x"], rtol=1e-13, atol=1e-13)
    assert out == "true true\n"


def _q21(t: Tensors, out: str) -> None:
    z, y, x = np.meshgrid(np.arange(8), np.arange(16), np.arange(16), indexing="ij")
    u0 = np.exp(-0.5 * ((z - 3.5) ** 2 + (y - 7.0) ** 2 + (x - 8.0) ** 2))
    np.testing.assert_allclose(t["u0"], u0, rtol=1e-6, atol=1e-7)
    prev, u = u0.copy(), u0.copy()
    for _ in range(12):
        p = np.pad(u, 1)
        lap = (p[:-2, 1:-1, 1:-1] + p[2:, 1:-1, 1:-1] + p[1:-1, :-2, 1:-1] + p[1:-1, 2:, 1:-1]
               + p[1:-1, 1:-1, :-2] + p[1:-1, 1:-1, 2:] - 6 * u)
        prev, u = u, 2 * u - prev + 0.09 * lap
    np.testing.assert_allclose(t["u"], u, atol=2e-5)
    np.testing.assert_allclose(t["prev"], prev, atol=2e-5)
    assert out == "true true\n"


CHECKS = {"q01_red_black_gauss_seidel": _q01, "q02_newton_fractal_complex": _q02, "q03_monte_carlo_pi_hash": _q03,
          "q04_dgemm_f64_tails": _q04, "q05_npy_round_trip_gamma": _q05,
          "q06_particle_binning_counting_sort": _q06, "q07_radix2_fft_rows": _q07,
          "q08_harris_corners_batch": _q08, "q09_compensated_dot2": _q09,
          "q10_ising_checkerboard_metropolis": _q10, "q11_fdtd_yee_graph": _q11,
          "q12_lbm_d2q9_shear_wave": _q12, "q13_durand_kerner_roots": _q13,
          "q14_gray_scott_torus_tiles": _q14, "q15_gauss_legendre_f64": _q15,
          "q16_otsu_threshold_u8": _q16, "q17_jpeg_dct8_quantise": _q17,
          "q18_adaptive_rk23_pendulums": _q18, "q19_sph_density_pressure": _q19,
          "q20_cg_csr_f64_host_loop": _q20, "q21_wave3d_leapfrog_tiles": _q21}

# simulating a program takes ~1-130 s (2026-12-07, 2 busy cores); the default run simulates the cheapest two (q09's
# fma TwoProduct and TwoSum folds, q15's f64 Newton loop and recurrence), the rest are `heavy`. q05 writes fixed
# paths under /tmp, so only its interpreter run is in the suite (a simulated run beside it in another worker could
# read a file half written); its two small kernels are plain element-wise and row-sum work.
SIM_DEFAULT = ("q09_compensated_dot2", "q15_gauss_legendre_f64")
HEAVY = [n for n in CHECKS if n not in SIM_DEFAULT]

# emitting a program's PTX takes 0.3-5 s; the default run keeps q09's (fma, TwoSum)
HEAVY_PTX = [n for n in CHECKS if n != "q09_compensated_dot2"]

# q04: f64 products summed in another order; q09: its naive f32 sums of cancelling terms (5.7e-5 apart in llsim)
SIM_TOL = {"q04_dgemm_f64_tails": 1e-12, "q09_compensated_dot2": 1e-3}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "q*.tile", CHECKS, [(n, "sm_90a") for n in sorted(CHECKS) if n != "q05_npy_round_trip_gamma"], sim_tol=SIM_TOL,
    ptx=[(n, "sm_90a") for n in sorted(CHECKS)], heavy=HEAVY, heavy_ptx=HEAVY_PTX)


def test_a_complex_npy_file_is_told_how_to_keep_its_values(tmp_path: Path) -> None:
    """q07's spectrum saved by NumPy as complex64 (`np.save(path, np.fft.fft(x))`) and loaded by a Tile program:
    E0713, whose help listed Tile's types only; it now says to save the real and imaginary parts as a last axis
    of 2, which, applied, runs: a kernel's power spectrum of the pairs against NumPy's. A float128 file is told
    to save float64."""
    import io

    import tilelang.run as run
    from tilelang.diagnostics.model import TileError

    spec = np.fft.fft(np.random.default_rng(7).standard_normal((4, 16))).astype(np.complex64)
    path = tmp_path / "spec.npy"
    np.save(path, spec)
    prog = tmp_path / "power.tile"
    prog.write_text(
        "kernel fn power<const R: i32>(p: &mut Tensor<f32, [R, 16]>, z: &Tensor<f32, [?, 16, 2]>) {\n"
        "    let t = z.partition([R, 16, 2]).load([block_id(0), 0, 0]);\n"
        "    p.store((t * t).sum(2));\n}\n"
        f'fn main() {{\n    let z: Tensor<f32, [?, 16, 2]> = load_npy("{path}");\n'
        "    let mut p = zeros::<f32>([4, 16]);\n    power::<2>(p.partition([2, 16]), &z).sync();\n"
        "    print(p.shape());\n}\n", encoding="utf-8")
    try:
        run.execute(str(prog), "cpu", out=io.StringIO())
        raise AssertionError("a complex64 file loaded")
    except TileError as e:
        d = e.diagnostics[0]
        assert d.code == "E0713" and list(d.help) == [
            "Tile has no complex type: save the real and imaginary parts as a last axis of 2, `np.save(path, "
            "np.stack([a.real, a.imag], -1).astype(np.float32))`, and compute with them as pairs of f32 values"]
    a = spec
    np.save(path, np.stack([a.real, a.imag], -1).astype(np.float32))   # the help, applied
    from userprog import run_program

    tensors, out = run_program(prog)
    np.testing.assert_allclose(tensors["p"], np.abs(spec) ** 2, rtol=1e-5)
    assert out == "[4, 16]\n"
    np.save(path, np.ones(3, np.longdouble))
    try:
        run.execute(str(prog), "cpu", out=io.StringIO())
        raise AssertionError("a float128 file loaded")
    except TileError as e:
        d = e.diagnostics[0]
        assert list(d.help) == ["save it as float64 (`a.astype(np.float64)`), the widest float Tile has"]


def test_numpy_s_meshgrid_is_told_how_tile_writes_it(tmp_path: Path) -> None:
    """q08/q14's grids written first as `let (xx, yy) = meshgrid(&x, &y);`: "define it (`fn meshgrid(..) { .. }`),
    or import it with `use`". The help now writes both coordinates with `reshape` and `broadcast` (the call's own
    names, borrows or not), which, applied, gives NumPy's meshgrid."""
    from userprog import first_error, run_program

    f = tmp_path / "g.tile"
    head = "fn main() {\n    let xs = arange::<f32>(4) * 0.5;\n    let ys = arange::<f32>(3) - 1.0;\n"
    for call in ("meshgrid(&xs, &ys)", "meshgrid(xs, ys)"):
        f.write_text(head + f"    let (gx, gy) = {call};\n    print(gx.shape(), gy.shape());\n}}\n", encoding="utf-8")
        d = first_error(f)
        assert d.code == "E0102" and d.help[0].startswith(
            "`xs.reshape([1, NX]).broadcast([NY, NX])` and `ys.reshape([NY, 1]).broadcast([NY, NX])`, with NX and "
            "NY the lengths of `xs` and `ys`"), d.help
    f.write_text(head + "    let gx = xs.reshape([1, 4]).broadcast([3, 4]);\n"
                 "    let gy = ys.reshape([3, 1]).broadcast([3, 4]);\n    print(gx.shape(), gy.shape());\n}\n",
                 encoding="utf-8")
    tensors, out = run_program(f)
    want = np.meshgrid(np.arange(4) * 0.5, np.arange(3) - 1.0)
    np.testing.assert_array_equal(tensors["gx"], want[0])
    np.testing.assert_array_equal(tensors["gy"], want[1])
    assert out == "[3, 4] [3, 4]\n"
