"""Round 28 of the independent user's programs (huser29, 2026-12-07): a NumPy/PyTorch user who checks numerics
at the edges, written from BRIEF.md, README.md, docs/reference.md and examples/ alone. Each program's tensors
are checked against NumPy written from the docs' rules (bit for bit where the docs promise exact results: integer
ops, casts, comparisons, `where`, max/min/argmax, atomics; within a tolerance for sums and the approximated
`exp`/`log`), and the same checks run on the NVPTX simulator's tensors (sm_90a).

- h04: f32 `atomic_max`/`atomic_min` with a NaN in a block's value or in the tensor before the launch, -0.0
  against 0.0 in both directions, infinities.
- h05: integer edges in i8, u8, i16, u16, i64, u64 (one generic kernel): MIN / -1, `/` and `%` of negatives and by
  0, shifts by the width and by negative amounts, wrapping products, `maximum`/`minimum`/`!`.
- h06: float -> int casts of NaN, infinities and values past every range (saturating), f32 -> f16 -> u16, and
  u64/i64 -> f32/f16/bf16/f64 rounded once from the exact value (2^24 + 1, 2^53 + 1, 65519, 2^64 - 1 ..).
- h07: row reductions and scans of rows of -0.0, both zeros in either order, -inf, both infinities, a NaN in
  the middle and first, ties, +inf, subnormals; the host's reductions of the same rows print the same.
- h08: literal right-hand sides on run-time values (`t / -1` of MIN, `t << 32`, `t >> 40`, u32 and i8 shifts past
  the width, `t / 0.0`) and constant casts that saturate.
- h09: f16 and bf16 overflow to infinity (and the sum that rounds back below it), subnormals kept through
  products, untyped literals in the tile's type, an f16 row sum.
- h10: a masked tail: `load_padded` with -inf/+inf keeps the padding out of max/argmax/min/argmin, a plain
  `load`'s zeros win (as documented), a global maximum by `atomic_max`.
- h11: std::nn's softmax and log_softmax on rows with -inf, all -inf (NaN), +inf, a NaN and values near f32's top.
- h12: comparisons of -0.0, NaN and infinities into bool tiles, bool logic and reductions, bools as i32.
- h13: reductions and scans of one-element tiles keep the element's bits (-0.0, NaN, -inf, a subnormal).
- h14: a sort of f32 rows by their bits (the docs' `to_bits` recipe): -inf first, -0.0 before 0.0, NaN last,
  ties in order; the values back by `from_bits`, the permutation as indices.
- h15: integer atomics: u32 max/min past 2^31 (unsigned order), wrapping u32/i32/i64 sums, i64 from MIN/MAX, u64
  past 2^63.
- h16: the same shifts, `/`, `%` (i32, u8) and float `%` edges on host tensors and in a kernel: the same bits.

Found on the way (tests in test_user_wrong32.py): `t / 0` of an integer tile passed `tilec check` and was
refused by `tilec run`; NumPy helps (`sign`, `round`, `rint`) wrong at NaN and -0.0, `signbit` offered `sin`,
`nanmax`/`nanmin` offered `max`/`min`. The engines agreed bit for bit on every tensor of h04-h16 (log_softmax's
`exp`/`log` within their documented tolerance), and the interpreter matched the docs' rules everywhere.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import both_archs, program_suite

Tensors = dict[str, np.ndarray]
f32 = np.float32


def same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bit for bit (the sign of a zero too), NaN where NaN (a NaN's sign and payload are not kept)."""
    got, want = np.asarray(got), np.asarray(want, dtype=got.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.dtype.kind == "f":
        u = np.dtype(f"u{got.dtype.itemsize}")
        ok = (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
    else:
        ok = got == want
    assert ok.all(), (what, np.argwhere(~ok)[:5].tolist(), got[~ok][:5], want[~ok][:5])


def ieee_max(a: float, b: float) -> float:
    """`maximum`'s rule: NaN propagates, -0.0 < 0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1, a) > 0 else b
    return max(a, b)


def ieee_min(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0.0:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def fold(fn: Callable[[float, float], float], vals: np.ndarray, start: float | None = None) -> float:
    acc = float(vals[0]) if start is None else start
    for v in vals[0 if start is not None else 1:]:
        acc = fn(acc, float(v))
    return acc


def _h04(t: Tensors, out: str) -> None:
    x = t["x"]
    blocks = x.reshape(4, 4)
    bmax = [fold(ieee_max, b) for b in blocks]
    bmin = [fold(ieee_min, b) for b in blocks]
    hi0 = [math.nan, -100.0, -0.0, -100.0, -100.0, -100.0]
    lo0 = [100.0, 100.0, 0.0, -math.inf, 100.0, 100.0]
    hi = [ieee_max(hi0[b], bmax[b]) for b in range(4)] + [fold(ieee_max, np.array(bmax), hi0[4]),
                                                           fold(ieee_max, np.array(bmin), hi0[5])]
    lo = [ieee_min(lo0[b], bmin[b]) for b in range(4)] + [fold(ieee_min, np.array(bmin), lo0[4]),
                                                           fold(ieee_min, np.array(bmax), lo0[5])]
    same_bits(t["hi"], np.array(hi, f32), "hi")
    same_bits(t["lo"], np.array(lo, f32), "lo")
    # the edges the program is about, spelled out: the NaNs, and the zeros' signs
    assert np.isnan(t["hi"][[0, 1, 4, 5]]).all() and np.signbit(t["lo"][2]) and not np.signbit(t["hi"][2])
    same_bits(t["seen"], np.arange(4, dtype=np.int32), "seen")
    assert out.split()[-1] == "NaN]", out


def _int_rules(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The docs' integer rules in x's type: `/` toward zero, `%` the dividend's sign, `x / 0 == 0`, `x % 0 ==
    x`, `MIN / -1 == MIN`; a shift amount read unsigned, at least the width: 0 (`<<`, unsigned `>>`) or the
    sign fill; everything wrapping."""
    dt = x.dtype
    bits = dt.itemsize * 8

    def wrap(v: int) -> int:
        v &= (1 << bits) - 1
        return v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v

    cols: list[list[int]] = [[], [], [], [], [], []]
    for a, b in zip(x.tolist(), y.tolist(), strict=True):
        if b == 0:
            q, r = 0, a
        else:
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            r = a - b * q
        amt = b & ((1 << bits) - 1)
        sl, sr = (0, -1 if a < 0 else 0) if amt >= bits else (a << amt, a >> amt)
        for col, v in zip(cols, (q, r, sl, sr, a * b + a - b, max(a, b) ^ min(a, b) ^ ~a), strict=True):
            col.append(wrap(v))
    return [np.array(c, dtype=object).astype(dt) for c in cols]


def _h05(t: Tensors, out: str) -> None:
    i = np.arange(32)
    x = np.where(i < 4, -128, (i * 37 + 11) % 256 - 128).astype(np.int8)
    same_bits(t["x"], x, "x")
    for suffix, xs, ys in (("", "x", "y"), ("u", "xu", "yu"), ("16", "x16", "y16"), ("u16", "xu16", "yu16"),
                           ("64", "x64", "y64"), ("u64", "xu64", "yu64")):
        for name, want in zip(("q", "r", "sl", "sr", "w", "m"), _int_rules(t[xs], t[ys]), strict=True):
            same_bits(t[name + suffix], want, name + suffix)
    # the edges by name: i8 MIN / -1 is MIN, its remainder 0; a shift by the width is 0; by -1 (255) the sign fill
    assert t["q"][0] == -128 and t["r"][0] == 0 and t["q"][1] == 0 and t["r"][1] == -128
    assert t["sl"][2] == 0 and t["sr"][2] == -1 and t["sl64"][2] == 0 and t["sr64"][2] == -1
    assert out == f"{int(t['q'].sum(dtype=np.int8)) + int(t['r'].sum(dtype=np.int8))}\n"


def _float_to_int(v: np.ndarray, dt: type) -> np.ndarray:
    """`as` from a float: toward zero, saturating, NaN -> 0."""
    info = np.iinfo(dt)
    out = [0 if math.isnan(a) else min(max(int(a) if math.isfinite(a) else (info.max if a > 0 else info.min),
                                           info.min), info.max) for a in v.astype(np.float64).tolist()]
    return np.array(out, dtype=object).astype(dt)


def _round_int(n: int, mant: int, top: float) -> float:
    """The float of `mant` significant bits nearest to the integer n (ties to even), once; past `top`: inf."""
    s, m = (-1 if n < 0 else 1), abs(n)
    e = m.bit_length() - mant
    if e > 0:
        q, r = divmod(m, 1 << e)
        half = 1 << (e - 1)
        q += 1 if r > half or (r == half and q & 1) else 0
        m = q << e
    return s * math.inf if m > top else float(s * m)


def _h06(t: Tensors, out: str) -> None:
    x, y = t["x"], t["y"]
    for name, dt in (("a", np.uint64), ("b", np.int64), ("c", np.int8)):
        same_bits(t[name], _float_to_int(x, dt), name)
    with np.errstate(over="ignore"):   # (65520 rounds to inf in f16)
        same_bits(t["d"], _float_to_int(x.astype(np.float16).astype(np.float32), np.uint16), "d")
    same_bits(t["e"], _float_to_int(y, np.uint64), "e")
    same_bits(t["f"], _float_to_int(y, np.int64), "f")
    xu, yi = [int(v) for v in t["xu"].tolist()], [int(v) for v in t["yi"].tolist()]
    f32max, f16max, bf16max = float(np.finfo(f32).max), 65504.0, float(np.float32(3.3895314e38))
    same_bits(t["a2"], np.array([_round_int(n, 24, f32max) for n in xu], f32), "a2")
    same_bits(t["b2"], np.array([_round_int(n, 11, f16max) for n in xu], np.float16), "b2")
    same_bits(t["c2"], np.array([_round_int(n, 8, bf16max) for n in yi], f32), "c2")   # bf16 values, held in f32
    same_bits(t["d2"], np.array([_round_int(n, 53, 1.8e308) for n in yi], np.float64), "d2")
    same_bits(t["e2"], np.array([_round_int(n, 24, f32max) for n in yi], f32), "e2")
    same_bits(t["f2"], np.array([_round_int(n, 11, f16max) for n in yi], np.float16), "f2")
    # by name: 2^24 + 1 ties to 2^24, 2^53 + 1 to 2^53, 65519 to 65504 and -65520 to -inf in f16, 2049 to 2048
    assert t["e2"][2] == 16777216.0 and t["d2"][7] == 2.0 ** 53 and t["f2"][4] == 65504 and t["f2"][5] == -np.inf
    assert t["f2"][3] == 2048 and t["a"][0] == 0 and t["b"][1] == 2 ** 63 - 1 and t["c"][9] == -128
    assert len(out.split()) > 40


def _h07(t: Tensors, out: str) -> None:
    x = t["x"]
    mx = [fold(ieee_max, r) for r in x]
    mn = [fold(ieee_min, r) for r in x]

    def arg(r: np.ndarray, best: float) -> int:  # the first NaN's index, else the first equal (== : zeros tie)
        nan = np.flatnonzero(np.isnan(r))
        return int(nan[0]) if nan.size else int(np.flatnonzero(r == best)[0])

    same_bits(t["mx"], np.array(mx, f32), "mx")
    same_bits(t["mn"], np.array(mn, f32), "mn")
    same_bits(t["am"], np.array([arg(r, m) for r, m in zip(x, mx, strict=True)], np.int32), "am")
    same_bits(t["an"], np.array([arg(r, m) for r, m in zip(x, mn, strict=True)], np.int32), "an")
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(t["sm"], x.astype(np.float64).sum(1), rtol=1e-6, atol=1e-45, equal_nan=True)
        np.testing.assert_allclose(t["pr"], x.astype(np.float64).prod(1).astype(f32), rtol=1e-6, equal_nan=True)
        np.testing.assert_allclose(t["cs"], np.cumsum(x, 1), rtol=1e-6, atol=1e-45, equal_nan=True)
    assert np.signbit(t["sm"][0]) and not np.signbit(t["sm"][1])   # all -0.0 sums to -0.0; with a 0.0, to 0.0
    same_bits(t["cm"], np.array([[fold(ieee_max, r[:k + 1]) for k in range(8)] for r in x], f32), "cm")
    same_bits(t["cn"], np.array([[fold(ieee_min, r[:k + 1]) for k in range(8)] for r in x], f32), "cn")
    words = out.split()   # the kernels' six results printed, then the host's six of the same rows: the same text
    assert words[:len(words) // 2] == words[len(words) // 2:], out


def _h08(t: Tensors, out: str) -> None:
    x = [int(v) for v in t["x"].tolist()]

    def w(v: int, bits: int = 32, signed: bool = True) -> int:
        v &= (1 << bits) - 1
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v

    def tdiv(a: int, b: int) -> tuple[int, int]:
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q, a - b * q

    same_bits(t["b"], np.array([w(-a) for a in x], np.int32), "b")   # t / -1 wraps at MIN; t % -1 is 0
    same_bits(t["c"], np.array([w(0 + (-1 if a < 0 else 0) + (a << 31)) for a in x], np.int32), "c")
    same_bits(t["d"], np.array([a >> 31 for a in x], np.int32), "d")
    same_bits(t["e"], np.array([w(sum(tdiv(a, 2)) + sum(tdiv(a, -2))) for a in x], np.int32), "e")
    same_bits(t["f"], np.array([(a & 0xFFFFFFFF) >> 31 for a in x], np.uint32), "f")
    g = [w(0 + (-1 if w(a, 8) < 0 else 0) + w(-w(a, 8), 8), 8) for a in x]
    same_bits(t["g"], np.array(g, np.int8), "g")
    assert np.isnan(t["h"]).all()   # x / 0.0 is an infinity (or NaN), x % 0.0 is NaN: NaN
    m = f32(2147483648.0) + f32(0) + f32(0) + f32(255) + f32(-4)
    same_bits(t["m"], np.full(4, m, f32), "m")
    assert out.split() == [str(t["b"][0]), str(t["c"][1]), str(t["g"][0]), "2147484000.0"], out


def _bf16(v: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even), held in f32."""
    u = np.asarray(v, f32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(f32)
    return np.where(np.isnan(v), np.nan, r).astype(f32)


def _h09(t: Tensors, out: str) -> None:
    x, y = t["x"], t["y"]
    with np.errstate(all="ignore"):
        same_bits(t["h"], x * np.float16(2) + x, "h")   # NumPy's f16 arithmetic rounds each step
        k = np.float16(0.0009765625)
        same_bits(t["hs"], x * k * k, "hs")
        xf = x.astype(f32)
        same_bits(t["hw"], xf * f32(2) + xf, "hw")
        same_bits(t["b"], _bf16(_bf16(y * y) - y), "b")
        same_bits(t["bw"], y * y - y, "bw")
    assert t["h"][0] == np.inf and t["h"][1] == 65472 and t["hw"][0] == 65520   # 3 x 21840 rounds up to inf
    assert t["hs"][3] == 0 and np.signbit(t["hs"][4]) and t["b"][0] == np.inf
    assert t["s"][0] == -np.inf
    assert out.split() == ["inf", "65470.0", "0.0", "0.0", "-inf"], out


def _h10(t: Tensors, out: str) -> None:
    x = t["x"]
    parts = (x[:8], x[8:])
    same_bits(t["mx"], np.array([p.max() for p in parts], f32), "mx")
    same_bits(t["am"], np.array([p.argmax() + 8 * b for b, p in enumerate(parts)], np.int32), "am")
    same_bits(t["mn"], np.array([p.min() for p in parts], f32), "mn")
    same_bits(t["an"], np.array([p.argmin() + 8 * b for b, p in enumerate(parts)], np.int32), "an")
    padded = np.concatenate([x, np.zeros(3, f32)])[8:]   # a plain load reads zeros past the edge
    same_bits(t["zmx"], np.array([x[:8].max(), padded.max()], f32), "zmx")
    same_bits(t["zam"], np.array([x[:8].argmax(), 8 + padded.argmax()], np.int32), "zam")
    same_bits(t["g"], np.array([x.max()], f32), "g")
    assert t["am"][1] == 9 and t["zam"][1] == 13 and t["g"][0] == -0.5
    assert out.split()[-1] == "[-0.5]", out


def _h11(t: Tensors, out: str) -> None:
    x = t["x"].astype(np.float64)
    with np.errstate(all="ignore"):
        m = x.max(1, keepdims=True)
        m = np.where(np.isnan(x).any(1, keepdims=True), np.nan, m)   # the row max propagates NaN
        e = np.exp(x - m)
        p = e / e.sum(1, keepdims=True)
        s = x - m
        lsm = s - np.log(np.exp(s).sum(1, keepdims=True))
    np.testing.assert_allclose(t["p"], p, rtol=2e-5, atol=1e-7, equal_nan=True)
    np.testing.assert_allclose(t["l"], lsm, rtol=2e-5, atol=1e-6, equal_nan=True)
    nan_rows = np.isnan(t["p"]).all(1)
    assert nan_rows.tolist() == [False, False, True, True, False, True, False, False]
    assert t["p"][1, 5] == 1.0 and (t["p"][1, :5] == 0).all() and t["p"][0, 3] == 0 and t["l"][1, 0] == -np.inf


def _h12(t: Tensors, out: str) -> None:
    a, b = t["x"], t["y"]
    e, lt, ge, ne = a == b, a < b, a >= b, a != b
    i32 = np.int32
    same_bits(t["eq"], (e.astype(i32) + lt * 2 + ge * 4 + ne * 8).astype(i32), "eq")
    same_bits(t["bits"], ((e & ~ne).astype(i32) + (lt | ge) * 2 + (e ^ ne) * 4 + np.isnan(a) * 8).astype(i32),
              "bits")
    with np.errstate(all="ignore"):   # (inf * 0)
        sel = np.where(ne, np.where(np.isnan(a), a, f32(-0.0)), b * f32(0)) + np.where(lt, f32(0), f32(-0.0)) * f32(0)
    same_bits(t["sel"], sel.astype(f32), "sel")
    none = a > np.inf
    base = int(e.max()) + int(e.min()) * 2 + int(none.max()) * 4
    red = np.full(8, base, i32)
    red[1] += int(e.argmax())
    red[2] += int(ne.argmin())
    red[3] += int(ne.sum())
    red[4] += int(none.argmax())
    red[5] += int(e.sum())
    same_bits(t["red"], red, "red")
    assert t["eq"][0] == 5 and t["eq"][1] == 8   # -0.0 == 0.0; NaN only !=
    assert out.split()[-8:] == [f"{v}," for v in red[:7].tolist()] + [f"{red[7]}]"], out


def _h13(t: Tensors, out: str) -> None:
    x = t["x"]
    with np.errstate(all="ignore"):   # each reduction of one element is the element; six of them added
        want = x + x + x + x + x * 1 + x   # (-0.0 + -0.0 is -0.0; -inf stays; NaN stays; 1e-45 * 6 is 8e-45)
    same_bits(t["z"], want.astype(f32), "z")
    assert np.signbit(t["z"][1]) and t["z"][3] == f32(1e-45) * 6
    same_bits(t["a"], np.zeros(4, np.int32), "a")
    assert out.split()[-4:] == ["[0,", "0,", "0,", "0]"], out


def _h14(t: Tensors, out: str) -> None:
    x = t["x"]
    u = x.view(np.uint32)
    key = np.where(u >> 31 == 1, ~u, u | np.uint32(0x80000000))
    order = np.argsort(key, axis=1, kind="stable")   # NumPy's stable sort of the same keys
    same_bits(t["idx"], order.astype(np.int32), "idx")
    same_bits(t["z"], np.take_along_axis(x, order, 1), "z")
    # the order the keys promise: -inf first, -0.0 before 0.0, the subnormals around the zeros, NaN last
    assert t["z"][0, 0] == -np.inf and np.isnan(t["z"][0, -1]) and t["z"][0, -2] == np.inf
    zeros = t["z"][1][t["z"][1] == 0]
    assert np.signbit(zeros).tolist() == [True, True, False, False]
    same_bits(t["idx"][2], np.arange(16, dtype=np.int32), "a row of equal values keeps its order")
    assert out.split()[:2] == ["Tensor<i32,", "[3,"], out


def _h15(t: Tensors, out: str) -> None:
    x, y = t["x"], t["y"]
    bx, by = x.reshape(4, 4), y.reshape(4, 4)
    u32, i64 = np.uint32, np.int64
    with np.errstate(over="ignore"):
        block_sums = bx.sum(1, dtype=u32)   # each block's `t.sum(0)` wraps in u32, then the atomics add them
        same_bits(t["mu"], np.array([bx.max(), min(bx.min(), 0xFFFFFFFF), block_sums.sum(dtype=u32)], u32), "mu")
        same_bits(t["mi"], np.array([by.max(), by.min(), by.sum(1, dtype=i64).sum(dtype=i64)], i64), "mi")
        hi = x.astype(np.uint64) << np.uint64(32)
        same_bits(t["mu64"], np.array([hi.max(), hi.min()], np.uint64), "mu64")
        s = x.view(np.int32).reshape(4, 4)
        same_bits(t["ai"], np.array([s.sum(1, dtype=np.int32).sum(dtype=np.int32), max(s.max(), 0), min(s.min(), 0)],
                                    np.int32), "ai")
    assert t["mu"][0] > 2 ** 31 and t["mu"][1] == 1 and t["mi"][1] == -2 ** 63 and t["mu64"][0] > 2 ** 63
    assert out.split()[:2] == ["Tensor<u32,", "[3]>"], out


def _h16(t: Tensors, out: str) -> None:
    x, y = t["x"], t["yz"]
    q, r, sl, sr, _, _ = _int_rules(x, y)
    with np.errstate(over="ignore"):
        want = sr + sl + q + r
        qu, ru, slu, sru, _, _ = _int_rules(x.astype(np.uint8), y.astype(np.uint8))
        wantu = sru + slu + qu + ru
    for k, w in (("a", want), ("ha", want), ("c", wantu), ("hc", wantu)):
        same_bits(t[k], w, k)
    with np.errstate(invalid="ignore"):
        fm = np.fmod(t["f"], t["g"])   # C's fmod: the dividend's sign, NaN of inf and of a 0.0 divisor
    same_bits(t["b"], fm, "b")
    same_bits(t["hb"], fm, "hb")
    assert np.signbit(t["b"][0]) and t["b"][6] == t["f"][6]   # -0.0 % -2.0 is -0.0; x % -inf is x
    lines = out.splitlines()   # each line: the kernel's tensor, then the host's, printed alike
    assert len(lines) == 3 and all(ln[:len(ln) // 2].strip() == ln[len(ln) // 2:].strip() for ln in lines), out


CHECKS = {"h04_atomic_extremes_nan_signed_zero": _h04, "h05_int_div_shift_wrap_every_width": _h05,
          "h06_casts_saturate_round_once": _h06, "h07_row_reductions_nan_inf_signed_zero": _h07,
          "h08_literal_operands_at_the_edges": _h08, "h09_half_overflow_subnormals_literals": _h09,
          "h10_masked_tail_extremes": _h10, "h11_softmax_rows_at_the_edges": _h11,
          "h12_bool_and_compare_edges": _h12, "h13_one_element_reductions": _h13,
          "h14_float_sort_by_bits": _h14, "h15_integer_atomics_unsigned_wrap": _h15,
          "h16_host_and_kernel_same_edges": _h16}

# the simulations: h04 (atomics of NaN and signed zeros, the one default) and the rest `heavy` (TILE_SLOW=1);
# PTX for sm_90a of all, h04's by default
SIM = both_archs([]) + [(n, "sm_90a") for n in CHECKS]

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    ("h0[4-9]_*.tile", "h1[0-9]_*.tile"), CHECKS, SIM, sim_tol={"h11_softmax_rows_at_the_edges": 2e-5},
    ptx=[(n, "sm_90a") for n in CHECKS],
    heavy=[n for n in CHECKS if n != "h04_atomic_extremes_nan_signed_zero"],
    heavy_ptx=[n for n in CHECKS if n != "h04_atomic_extremes_nan_signed_zero"])
