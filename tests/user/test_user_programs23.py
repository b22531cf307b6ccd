"""Round 23 of the independent user's programs (huser23, 2026-12-07): kernels in domains rounds 1-22 did not
take, written from BRIEF.md, README.md, docs/reference.md and examples/ alone.

- i01: Euclid's gcd of i64 pairs with Bezout's coefficients and the lcm, lanes of a tile in a `while` that stops
  when no remainder is left (the block's own pairs decide), and Stein's binary gcd of u32 pairs. Found: `x == 0u32
  & !zero` (C's precedence, which Rust and Tile do not share) got "cast with `as`" (fixed, below).
- i02: 37 polynomials of run-time degrees (0 to 16, read from a tensor) and their derivatives by Horner's rule
  with `fma`, walking down from the block's own highest degree in a `while`; one generic kernel over f64 and f32.
- i03: Howard Hinnant's civil-from-days and days-from-civil on 3000 day numbers from before year 0 to 9999 (floor
  division of negatives written out), the [B, 4] rows (year, month, day, weekday) built and read back by column.
- i04: the Luhn checksum of 500 ASCII card numbers of run-time lengths (13 to 19 digits), every second digit from
  each row's own right end doubled, rows with a non-digit invalid, and the check digit written back. Found: `d >=
  0 & d <= 9` (NumPy's and C's habit) got E0011's help "`d >= 0 & d && 0 & d <= 9`" (fixed, below).
- i05: 64 Sudoku boards validated by the 27 units' bit sums through a [128, 32] membership matrix, the first
  broken unit kept and the valid boards counted with `atomic_add`.
- i06: the nearest of 40 cities to 90 places by the haversine formula (`asin`, `sqrt`) in f64, the lanes past
  the last city masked before `argmin`, and the initial bearing by `atan2`.
- i07: fractal value noise on a 100 x 150 image: a wrapping u32 lattice hash, `floor`, smoothstep, a run-time
  octave count, the image's sum and maximum by atomics. Found: `img.shape()` of the `&mut` image is its own
  tile's shape, so the edge mask `rows < img.shape()[0]` kept one block's sum, silently (now warning W0010).
- i08: 300 leaky integrate-and-fire neurons over 100 steps with a refractory counter, spike counts and first
  spike times, then a second epoch with a gain the host computed from the first's counts.
- i09: 40 0/1 knapsack problems, the DP row over capacities a [1, 64] i32 tile shifted by each item's run-time
  weight through a masked [64, 64] sum.
- i10: an RBJ biquad low-pass (coefficients from the host in f64, passed as f32 scalars) along time over 24
  channels, the state carried through a `for` over rows stored by a nested partition of the block's band.
- i11: RGB -> HSV -> hue rotated by -75.5 degrees (float `%` of a negative), saturation scaled -> RGB through the
  hexcone's sectors, checked against Python's colorsys; a rotation by 720 degrees gives the input back.
- i12: Base64 encoding and decoding of 24 byte strings of 0 to 48 bytes: [16, 3] byte triples packed by shifts
  and a sum, cut into sextets by a [1, 4] tile of shift amounts, the alphabet by ranges; against Python's base64.
- i13: cloud-in-cell charge deposition of 600 particles onto a periodic grid of 50 cells through one-hot sums
  and tile `atomic_add`s whose lanes past the grid are dropped, with nearest-grid-point counts.
- i14: the integer square root of u32 and u64 values (0, 1, MAX, squares, squares minus one) by Newton's method
  from above, one generic kernel, with the remainder and a perfect-square flag; against `math.isqrt`.
- i15: a ray caster: a 60 x 90 image's rays against 5 spheres read as scalars, the nearest hit's sphere and its
  Lambert shade (`rsqrt`, `sqrt`, infinities for no hit).
- i16: KL and Jensen-Shannon divergences and entropies of rows with exact zeros (0 log 0 = 0, KL infinite where q
  is 0 and p is not). Found nothing new, but wrote `(i * 7 + j) % 5 == 0 & i % 4 != 0` and got the new E0011 help.
- i17: rotary embeddings applied in place to q (4 heads) and k (2 heads) of a packed batch in one launch, positions
  read per token, tile widths products of const generics (`[1, HQ * 2 * D2]`), undone by the negated angle.
- i18: Fibonacci numbers mod m (n up to 10^18) by 2x2 matrix powers in i64, the host walking 60 bits with a launch
  each, ping-pong buffers swapped by moves.
- i19: overlapping occurrences of a run-time-length byte pattern in text rows, bytes shifted to lanes by 0/1
  `dot`s, with the first match's position.
- i20: DDA rasterisation of 40 segments, a segment a block, scalar `atomic_add`/`atomic_max` at computed [y, x]
  pixels, those off the canvas clipped by an `if` (`--sanitize` reports an index outside as a bug, E0733; the
  reference now says so beside its rule that such writes are dropped).
- i21: 8-queens boards as u64 bitboards: rays by shifts with file masks stopping at the first queen (an `if` chain
  of shifts in a device function), a SWAR popcount of u64 with a wrapping multiply.

Each runs on the interpreter and is checked against NumPy (or Python's own libraries) from its own inputs, in the
NVPTX simulator at sm_90a and sm_80 (most `heavy`), and its PTX assembles on both (most `heavy`).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]


def _i01(t: Tensors, out: str) -> None:
    a, b = t["a"], t["b"]
    g = np.gcd(a, b)
    np.testing.assert_array_equal(t["g"], g)
    np.testing.assert_array_equal(a * t["s"] + b * t["t"], g)   # Bezout
    assert (np.abs(t["s"]) <= np.maximum(np.abs(b) // np.maximum(g, 1), 1)).all()   # Euclid's minimal pair
    np.testing.assert_array_equal(t["l"], np.lcm(a, b))
    np.testing.assert_array_equal(t["sg"], np.gcd(t["ua"].astype(np.int64), t["ub"].astype(np.int64)))
    assert (t["ua"] == 0).any() and g.max() > 100 and (t["sg"] > 1 << 10).any()
    assert out == f"true true {t['steps'].max()}\n" and t["steps"].max() > t["steps"].min()


def _i02(t: Tensors, out: str) -> None:
    deg, coef, x = t["deg"][:, 0], t["coef"], t["x"]
    want = np.array([np.polynomial.polynomial.polyval(x[r], coef[r, :deg[r] + 1]) for r in range(len(deg))])
    dwant = np.array([np.polynomial.polynomial.polyval(x[r], np.polynomial.polynomial.polyder(coef[r, :deg[r] + 1]))
                      if deg[r] > 0 else np.zeros(x.shape[1]) for r in range(len(deg))])
    np.testing.assert_allclose(t["p"], want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t["dp"], dwant, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t["p32"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t["dp32"], dwant, rtol=1e-4, atol=1e-4)
    assert t["p32"].dtype == np.float32 and (t["dp"][deg == 0] == 0).all() and out == "0 16 [37, 50]\n"


def _i03(t: Tensors, out: str) -> None:
    import datetime

    days = t["days"].astype(np.int64)
    want = []
    for z in days:
        shift = max(0, (-719162 - z + 146096) // 146097)    # whole 400-year eras to move into datetime's range
        d = datetime.date.fromordinal(int(z + shift * 146097) + 719163)
        want.append((d.year - 400 * shift, d.month, d.day, d.isoweekday() % 7))
    np.testing.assert_array_equal(t["ymdw"], np.array(want))
    np.testing.assert_array_equal(t["back"][:, 0], days)
    assert t["ymdw"][:, 0].min() < -2000 and t["ymdw"][:, 0].max() == 9997 and out == "-1503144 2932165 -2146\n"


def _luhn(s: str) -> bool:
    if not s.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(s)):
        v = int(ch) * (2 if i % 2 else 1)
        total += v - 9 if v > 9 else v
    return total % 10 == 0


def _i04(t: Tensors, out: str) -> None:
    num, ln = t["num"], t["len"][:, 0]
    rows = [bytes(num[i, :ln[i]]).decode() for i in range(len(ln))]
    np.testing.assert_array_equal(t["ok"][:, 0], [_luhn(s) for s in rows])
    fixed = [bytes(t["fixed"][i, :ln[i]]).decode() for i in range(len(ln))]
    for s, f in zip(rows, fixed):
        assert f[:-1] == s[:-1] and (_luhn(f) or not s[:-1].isdigit()), (s, f)
        assert [_luhn(f[:-1] + str(c)) for c in range(10)].count(True) == (1 if s[:-1].isdigit() else 0)
    np.testing.assert_array_equal(t["fixed"][:, 32 - 13:], num[:, 32 - 13:])   # past each row: untouched zeros
    bad = sum(not s.isdigit() for s in rows)
    assert bad == 14 and t["ok2"].sum() == len(rows) - bad and out == f"{t['ok'].sum()} {len(rows) - bad} 13 19\n"


def _sudoku_first_bad(b: np.ndarray) -> int:
    g = b.reshape(9, 9).astype(int)
    units = [g[r] for r in range(9)] + [g[:, c] for c in range(9)] + \
            [g[3 * (i // 3):3 * (i // 3) + 3, 3 * (i % 3):3 * (i % 3) + 3].ravel() for i in range(9)]
    return next((i for i, u in enumerate(units) if sorted(u) != list(range(1, 10))), 27)


def _i05(t: Tensors, out: str) -> None:
    want = np.array([_sudoku_first_bad(b) for b in t["boards"]])
    np.testing.assert_array_equal(t["first"][:, 0], want)
    n_ok = int((want == 27).sum())
    assert t["valid"][0] == n_ok and 30 < n_ok < 64 and set(want) - {27} and (t["boards"] == 10).any()
    assert out == f"Tensor<i32, [1]> [{n_ok}] 27 {want.min()}\n"


def _i06(t: Tensors, out: str) -> None:
    p1, l1 = np.radians(t["lat"])[:, None], np.radians(t["lon"])[:, None]
    p2, l2 = np.radians(t["clat"])[None], np.radians(t["clon"])[None]
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin((l2 - l1) / 2) ** 2
    d = 2 * 6371.0 * np.arcsin(np.sqrt(h))
    best = d.argmin(1)
    np.testing.assert_array_equal(t["idx"], best)
    np.testing.assert_allclose(t["km"], d.min(1), rtol=1e-12)
    r = np.arange(len(best))
    dl = (l2 - l1)[r, best]
    y = np.sin(dl) * np.cos(p2[0, best])
    x = np.cos(p1[:, 0]) * np.sin(p2[0, best]) - np.sin(p1[:, 0]) * np.cos(p2[0, best]) * np.cos(dl)
    np.testing.assert_allclose(t["bearing"], np.degrees(np.arctan2(y, x)) % 360.0, rtol=1e-10, atol=1e-9)
    assert len(set(best)) > 20 and t["bearing"].max() > 300 and out == "true true true\n"


def _hash01(ix: np.ndarray, iy: np.ndarray, seed: int) -> np.ndarray:
    u = np.uint32
    with np.errstate(over="ignore"):
        h = ix.astype(u) * u(374761393) + iy.astype(u) * u(668265263) + u(seed) * u(2246822519)
        h = (h ^ (h >> u(13))) * u(1274126177)
        h = h ^ (h >> u(16))
    return (h & u(0xFFFFFF)).astype(np.float32) / np.float32(16777216.0)


def _i07(t: Tensors, out: str) -> None:
    f = np.float32
    rows, cols = np.arange(100)[:, None], np.arange(150)[None]
    x = np.broadcast_to((cols.astype(f) + f(0.5)) * f(0.0625) - f(4.0), (100, 150)).astype(f)
    y = np.broadcast_to((rows.astype(f) + f(0.5)) * f(0.0625) - f(3.0), (100, 150)).astype(f)
    total, amp = np.zeros((100, 150), f), f(0.5)
    for o in range(5):
        x0, y0 = np.floor(x), np.floor(y)
        fx, fy = x - x0, y - y0
        ix, iy = x0.astype(np.int32), y0.astype(np.int32)
        u_, v_ = fx * fx * (f(3) - f(2) * fx), fy * fy * (f(3) - f(2) * fy)
        a, b = _hash01(ix, iy, 7 + o), _hash01(ix + 1, iy, 7 + o)
        c, d = _hash01(ix, iy + 1, 7 + o), _hash01(ix + 1, iy + 1, 7 + o)
        top, bottom = a + (b - a) * u_, c + (d - c) * u_
        total = total + (top + (bottom - top) * v_) * amp
        x, y, amp = x * f(2), y * f(2), amp * f(0.5)
    np.testing.assert_allclose(t["img"], total, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(t["stats"][:2], [total.sum(dtype=np.float64), total.max()], rtol=1e-5)
    assert (x0 < 0).any() and total.std() > 0.05 and out == "[100, 150] true true\n"


def _lif(cur: np.ndarray, gain: np.ndarray, t0: int, steps: int) -> tuple[np.ndarray, ...]:
    f = np.float32
    decay = np.exp(f(-0.001) / f(0.02))
    v, hold = np.zeros(cur.shape[1], f), np.zeros(cur.shape[1], np.int32)
    n, first = np.zeros_like(hold), np.full_like(hold, -1)
    for t in range(t0, t0 + steps):
        i = cur[t] * gain
        free = hold == 0
        v = np.where(free, v * decay + i * f(0.001), f(0))
        spike = free & (v >= 1)
        n += spike
        first = np.where(spike & (first < 0), t, first)
        v = np.where(spike, f(0), v)
        hold = np.where(spike, 3, np.maximum(hold - 1, 0))
    return n, first, v


def _i08(t: Tensors, out: str) -> None:
    cur = t["current"]
    n, first, v = _lif(cur, np.float32(1), 0, 100)
    np.testing.assert_array_equal(t["count"][0], n)   # the same f32 operations in the same order
    np.testing.assert_array_equal(t["first"][0], first)
    np.testing.assert_allclose(t["v"][0], v, rtol=1e-5, atol=1e-6)   # (the GPU's `exp`: an ulp of the decay)
    gain = (np.float32(1) / (np.float32(1) + t["count"][0].astype(np.float32) * np.float32(0.05))).astype(np.float32)
    np.testing.assert_allclose(t["gain"][0], gain, rtol=1e-6)
    n2, first2, _ = _lif(cur, gain, 100, 100)
    np.testing.assert_array_equal(t["count2"][0], n2)
    np.testing.assert_array_equal(t["first2"][0], first2)
    assert ((first2 >= 100) | (first2 < 0)).all() and (n == 0).any() and n.max() > 5 and (first < 0).any() and out == "true -1 true\n"


def _i09(t: Tensors, out: str) -> None:
    want = []
    for w, v, n, c in zip(t["weight"], t["value"], t["n_items"][:, 0], t["cap"][:, 0]):
        dp = [0] * (c + 1)
        for i in range(n):
            for cc in range(c, w[i] - 1, -1):
                dp[cc] = max(dp[cc], dp[cc - w[i]] + v[i])
        want.append(dp[c])
    np.testing.assert_array_equal(t["best"][:, 0], want)
    assert out == f"true true {max(want)}\n" and t["n_items"].min() == 4 and t["n_items"].max() == 12


def _i10(t: Tensors, out: str) -> None:
    fs, f0, q = 1000.0, 40.0, 0.7071
    w0 = 2 * math.pi * f0 / fs
    alpha = math.sin(w0) / (2 * q)
    a0 = 1 + alpha
    b = np.array([(1 - math.cos(w0)) / 2, 1 - math.cos(w0), (1 - math.cos(w0)) / 2]) / a0
    a = np.array([-2 * math.cos(w0), 1 - alpha]) / a0
    x = t["x"].astype(np.float64)
    y, z1, z2 = np.zeros_like(x), np.zeros(x.shape[1]), np.zeros(x.shape[1])
    for i in range(len(x)):
        y[i] = b[0] * x[i] + z1
        z1, z2 = b[1] * x[i] - a[0] * y[i] + z2, b[2] * x[i] - a[1] * y[i]
    np.testing.assert_allclose(t["y"], y, rtol=1e-4, atol=2e-5)
    assert abs(y[200:, 16:].mean() - 1) < 1e-3 and np.abs(y[200:, 8:16]).max() < 0.01 and out == "true true\n"


def _i11(t: Tensors, out: str) -> None:
    import colorsys

    rgb = t["rgb"].astype(np.float64)
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in rgb.T]).T
    h = (hsv[0] * 360 - 75.5) % 360
    s = np.minimum(hsv[1] * 1.3, 1)
    np.testing.assert_allclose(t["hsv"][0], h, atol=2e-4)
    np.testing.assert_allclose(t["hsv"][1:], [s, hsv[2]], atol=1e-6)
    want = np.array([colorsys.hsv_to_rgb(a / 360, b, c) for a, b, c in zip(h, s, hsv[2])]).T
    np.testing.assert_allclose(t["out"], want, atol=2e-6)
    np.testing.assert_allclose(t["same"], rgb, atol=2e-6)
    np.testing.assert_allclose(t["hsv0"][0], hsv[0] * 360, atol=2e-4)
    grey = np.arange(rgb.shape[1]) % 50 == 0
    assert (t["out"][:, grey] == 0.5).all() and (t["hsv"][1:, 2] == 0).all() and out == "true true true\n"


def _i12(t: Tensors, out: str) -> None:
    import base64

    ln = t["len"][:, 0]
    for i, n in enumerate(ln):
        want = base64.b64encode(bytes(t["data"][i, :n]))
        assert bytes(t["text"][i, :len(want)]) == want and not t["text"][i, len(want):].any(), i
    np.testing.assert_array_equal(t["back"], t["data"])
    assert {0, 48} <= set(ln) and {0, 1, 2} <= set(ln % 3) and out == "0 0 0 48\n"


def _i13(t: Tensors, out: str) -> None:
    f32 = np.float32
    pos = t["x"] / f32(10.0 / 50)
    i0 = np.floor(pos).astype(np.int64) % 50
    fr = pos - np.floor(pos)
    q = t["q"]
    rho = np.zeros(50)
    np.add.at(rho, i0, (q * (1 - fr)).astype(np.float64))
    np.add.at(rho, (i0 + 1) % 50, (q * fr).astype(np.float64))
    np.testing.assert_allclose(t["rho"], rho, rtol=1e-4, atol=1e-6)
    ngp = np.where(fr < 0.5, i0, (i0 + 1) % 50)
    np.testing.assert_array_equal(t["cell"], ngp)
    np.testing.assert_array_equal(t["count"], np.bincount(ngp, minlength=50))
    assert (i0 == 49).any() and (ngp == 0).sum() > (ngp == 25).sum() and out == "true 600 true\n"


def _i14(t: Tensors, out: str) -> None:
    for bits, a in ((64, t["edge"]), (32, t["a32"])):
        want = np.array([math.isqrt(int(v)) for v in a], dtype=a.dtype)
        np.testing.assert_array_equal(t[f"r{bits}"], want)
        np.testing.assert_array_equal(t[f"m{bits}"], a - want * want)
        np.testing.assert_array_equal(t[f"s{bits}"], a == want * want)
        assert t[f"it{bits}"].min() >= 1 and a.max() == 2 ** bits - 1 and (a == 0).any()
    assert t["s64"].sum() >= 60 and out == "4294967295 65535 true\n"



def _i15(t: Tensors, out: str) -> None:
    h, w = 60, 90
    sp = t["spheres"].astype(np.float64)
    py, px = np.arange(h)[:, None] + 0.5, np.arange(w)[None] + 0.5
    dx = (px / w * 2 - 1) * (w / h) * 0.6
    dy = (1 - py / h * 2) * 0.6
    n = 1 / np.sqrt(dx * dx + dy * dy + 1)
    d = np.stack(np.broadcast_arrays(dx * n, dy * n, -n))           # [3, h, w]
    best, which = np.full((h, w), np.inf), np.full((h, w), -1)
    for k, (cx, cy, cz, r) in enumerate(sp):
        b = d[0] * cx + d[1] * cy + d[2] * cz
        disc = b * b - (cx * cx + cy * cy + cz * cz - r * r)
        tt = b - np.sqrt(np.maximum(disc, 0))
        hit = (disc >= 0) & (tt > 0) & (tt < best)
        best, which = np.where(hit, tt, best), np.where(hit, k, which)
    # a pixel whose two nearest hits are within f32's rounding may pick either sphere
    agree = t["id"] == which
    assert agree.mean() > 0.999, agree.mean()
    c = sp[np.maximum(which, 0)]
    with np.errstate(invalid="ignore"):   # (inf * 0 where nothing is hit; masked below)
        hp = d * best - c[..., :3].transpose(2, 0, 1)
        lam = np.maximum((hp[0] * 0.4 + hp[1] * 0.7 + hp[2] * 0.59) / c[..., 3], 0)
    want = np.where(which >= 0, lam, -1)
    np.testing.assert_allclose(t["shade"][agree], want[agree], atol=2e-4)
    assert set(np.unique(which)) == {-1, 0, 1, 2, 3, 4} and (want > 0.5).any() and out == "4 -1 true\n"


def _i16(t: Tensors, out: str) -> None:
    p, q = t["p"].astype(np.float64), t["q"].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(p > 0, p * (np.log(p) - np.log(q)), 0).sum(1)
        m = (p + q) / 2
        js = 0.5 * (np.where(p > 0, p * np.log(p / m), 0) + np.where(q > 0, q * np.log(q / m), 0)).sum(1)
        h = -np.where(p > 0, p * np.log2(p), 0).sum(1)
    inf = np.isinf(kl)
    np.testing.assert_array_equal(np.isinf(t["kl"][:, 0]), inf)
    np.testing.assert_allclose(t["kl"][~inf, 0], kl[~inf], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["js"][:, 0], js, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(t["bits"][:, 0], h, rtol=1e-5)
    assert 10 < inf.sum() < 45 and not np.isnan(t["js"]).any() and (p == 0).any() and out == "true true true\n"


def _rope(x: np.ndarray, pos: np.ndarray, heads: int) -> np.ndarray:
    d2 = x.shape[1] // heads // 2
    freq = 10000.0 ** (-2 * np.arange(d2) / (2 * d2))
    ang = pos[:, None, None] * freq[None, None]
    xr = x.astype(np.float64).reshape(len(x), heads, 2, d2)
    x1, x2 = xr[:, :, 0], xr[:, :, 1]
    out = np.stack([x1 * np.cos(ang) - x2 * np.sin(ang), x2 * np.cos(ang) + x1 * np.sin(ang)], 2)
    return out.reshape(x.shape)


def _i17(t: Tensors, out: str) -> None:
    pos = t["pos"].astype(np.float64)
    assert list(t["pos"][4:8]) == [4, 5, 0, 1] and t["pos"].max() == 503
    np.testing.assert_allclose(t["q1"], _rope(t["q0"], pos, 4), rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(t["k1"], _rope(t["k0"], pos, 2), rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(t["q"], t["q0"], atol=1e-5)
    np.testing.assert_array_equal(t["q1"][0], t["q0"][0])           # position 0 is not rotated
    assert out == "[13, 128] [13, 64] true\n"


def _fib_mod(n: int, m: int) -> tuple[int, int]:
    """(F(n), F(n + 1)) mod m by fast doubling."""
    if n == 0:
        return 0, 1
    a, b = _fib_mod(n >> 1, m)
    c = a * ((2 * b - a) % m) % m
    d = (a * a + b * b) % m
    return (d, (c + d) % m) if n & 1 else (c, d)


def _i18(t: Tensors, out: str) -> None:
    n, m = t["n"][:, 0], t["m"][:, 0]
    want = np.array([[_fib_mod(int(a), int(b))[1], _fib_mod(int(a), int(b))[0], _fib_mod(int(a), int(b))[0],
                      (_fib_mod(int(a), int(b))[1] - _fib_mod(int(a), int(b))[0]) % int(b)] for a, b in zip(n, m)])
    np.testing.assert_array_equal(t["res"], want)
    np.testing.assert_array_equal(t["fib"], want[:, 1])
    assert _fib_mod(10, 1000) == (55, 89) and n.max() > 9 * 10 ** 17 and out == "[40] true true\n"


def _count_overlapping(s: bytes, p: bytes) -> tuple[int, int]:
    hits = [i for i in range(len(s) - len(p) + 1) if s[i:i + len(p)] == p]
    return len(hits), (hits[0] if hits else -1)


def _i19(t: Tensors, out: str) -> None:
    rows = [bytes(t["text"][i, :t["len"][i, 0]]) for i in range(len(t["len"]))]
    for pat, cn, fi in ((bytes(t["pat"]), "count", "first"), (b"b", "count_b", "first_b")):
        want = np.array([_count_overlapping(s, pat) for s in rows])
        np.testing.assert_array_equal(t[cn][:, 0], want[:, 0])
        np.testing.assert_array_equal(t[fi][:, 0], want[:, 1])
    assert bytes(t["pat"]) == b"aba" and any(b"ababa" in s for s in rows) and t["len"].max() == 64
    assert out == f"true {t['first'].min()} true\n" and t["first"].min() == -1


def _i20(t: Tensors, out: str) -> None:
    f = np.float32
    hits, top = np.zeros((40, 48), np.int64), np.full((40, 48), -1)
    steps = []
    for b, (x0, y0, x1, y1) in enumerate(t["seg"].astype(np.int64)):
        n = max(abs(x1 - x0), abs(y1 - y0))
        sx, sy = f(x1 - x0) / f(max(n, 1)), f(y1 - y0) / f(max(n, 1))
        steps.append(n + 1)
        for i in range(n + 1):
            fx, fy = f(x0) + sx * f(i), f(y0) + sy * f(i)
            px, py = int(fx + (f(-0.5) if fx < 0 else f(0.5))), int(fy + (f(-0.5) if fy < 0 else f(0.5)))
            if 0 <= py < 40 and 0 <= px < 48:
                hits[py, px] += 1
                top[py, px] = max(top[py, px], b)
    np.testing.assert_array_equal(t["steps"], steps)
    np.testing.assert_array_equal(t["hits"], hits)
    np.testing.assert_array_equal(t["top"], top)
    assert t["seg"].min() < 0 and t["seg"].max() >= 48 and out == "true true true\n"


def _queens_attacked(board: int) -> int:
    qs = {(b // 8, b % 8) for b in range(64) if board >> b & 1}
    seen = 0
    for r, c in qs:
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                if dr or dc:
                    y, x = r + dr, c + dc
                    while 0 <= y < 8 and 0 <= x < 8:
                        if (y, x) in qs:
                            seen |= 1 << (8 * y + x)
                            break
                        y, x = y + dr, x + dc
    return bin(seen).count("1")


def _i21(t: Tensors, out: str) -> None:
    boards = [int(b) for b in t["boards"]]
    np.testing.assert_array_equal(t["attacked"], [_queens_attacked(b) for b in boards])
    np.testing.assert_array_equal(t["count"], [bin(b).count("1") for b in boards])
    ok = (t["attacked"] == 0) & (t["count"] == 8)
    assert ok[8:16].all() and not ok[16:18].any() and t["boards"].max() > 2 ** 63 and out == "true 7 9\n"


CHECKS = {"i01_gcd_lcm_bezout": _i01, "i02_horner_runtime_degree": _i02, "i03_civil_calendar": _i03,
          "i04_luhn_check_digits": _i04, "i05_sudoku_validate": _i05, "i06_haversine_nearest_city": _i06,
          "i07_value_noise_fbm": _i07, "i08_lif_neurons_refractory": _i08, "i09_knapsack_dp_shift": _i09,
          "i10_biquad_iir_channels": _i10, "i11_hsv_hue_rotate": _i11, "i12_base64_round_trip": _i12,
          "i13_cic_charge_deposit": _i13, "i14_isqrt_newton_generic": _i14, "i15_ray_sphere_image": _i15,
          "i16_kl_js_divergence_zeros": _i16, "i17_rope_in_place_gqa": _i17,
          "i18_fibonacci_matrix_power_mod": _i18, "i19_substring_search_rows": _i19,
          "i20_dda_lines_atomics": _i20, "i21_queens_bitboards_u64": _i21}

# simulating a program takes 0.6-5 s (2026-12-07, 2 busy cores); the default run simulates the three cheapest
# (i02's generic f64/f32 Horner `while`, i03's i32 calendar arithmetic, i14's generic u32/u64 Newton `while`)
HEAVY = [n for n in CHECKS if n not in ("i02_horner_runtime_degree", "i03_civil_calendar", "i14_isqrt_newton_generic")]

# emitting a program's PTX takes 1.5-6 s; the default run keeps i14's (u64 division, generic instances)
HEAVY_PTX = [n for n in CHECKS if n != "i14_isqrt_newton_generic"]

# i15's grazing rays: the GPU's `rsqrt` (within its documented ulps) moves a shade near a sphere's rim by 6e-5
SIM_TOL = {"i15_ray_sphere_image": 1e-4}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "i*.tile", CHECKS, [(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")], sim_tol=SIM_TOL,
    ptx=[(n, a) for n in sorted(CHECKS) for a in ("sm_90a", "sm_80")], heavy=HEAVY, heavy_ptx=HEAVY_PTX)


def test_the_python_api_runs_the_generic_isqrt_base64_and_horner() -> None:
    """i14's generic kernel from NumPy u32 and u64 arrays (`T` from the arrays), i12's Base64 kernels on RFC 4648's
    test vectors (u8 arrays in, the characters compared with Python's `base64`), and i02's Horner on f32 arrays
    (no PyTorch in this environment: NumPy only)."""
    import base64

    import tilelang

    from userprog import DIR

    m = tilelang.load(DIR / "i14_isqrt_newton_generic.tile")
    for dt in (np.uint32, np.uint64):
        a = np.array([0, 1, 2, 3, 15, 16, 17, np.iinfo(dt).max, 99980001, 2 ** 31 + 5], dt)
        r, rem, sq, it = np.zeros_like(a), np.zeros_like(a), np.zeros(len(a), bool), np.zeros(1, np.int32)
        m.isqrt(tilelang.partition(r, [16]), tilelang.partition(rem, [16]), tilelang.partition(sq, [16]),
                tilelang.partition(it, [1]), a).sync()
        want = np.array([math.isqrt(int(v)) for v in a], dt)
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(rem, a - want * want)
        np.testing.assert_array_equal(sq, a == want * want)

    b64 = tilelang.load(DIR / "i12_base64_round_trip.tile")
    msgs = [b"", b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar", bytes(range(200, 248))]
    data = np.zeros((len(msgs), 48), np.uint8)
    for i, s in enumerate(msgs):
        data[i, :len(s)] = np.frombuffer(s, np.uint8)
    lens = np.array([[len(s)] for s in msgs], np.int32)
    text = np.zeros((len(msgs), 64), np.uint8)
    b64.encode(tilelang.partition(text, [1, 64]), data, lens).sync()
    assert [bytes(t).rstrip(b"\0") for t in text] == [base64.b64encode(s) for s in msgs]
    back = np.zeros_like(data)
    b64.decode(tilelang.partition(back, [1, 48]), text).sync()
    np.testing.assert_array_equal(back, data)

    h = tilelang.load(DIR / "i02_horner_runtime_degree.tile")
    coef = np.array([[1.0, 2.0, 3.0, 0.0], [5.0, 0, 0, 0], [0.5, -1.0, 0.0, 2.0]], np.float32)
    deg = np.array([[2], [0], [3]], np.int32)
    x = np.repeat(np.linspace(-1, 1, 10, dtype=np.float32)[None], 3, 0)
    p, dp = np.zeros_like(x), np.zeros_like(x)
    h.horner(tilelang.partition(p, [8, 64]), tilelang.partition(dp, [8, 64]), x, coef, deg).sync()
    np.testing.assert_allclose(p, [1 + 2 * x[0] + 3 * x[0] ** 2, np.full(10, 5.0), 0.5 - x[2] + 2 * x[2] ** 3],
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dp, [2 + 6 * x[0], np.zeros(10), -1 + 6 * x[2] ** 2], rtol=1e-6, atol=1e-6)
