"""Round 2 of the independent user's programs (huser, 2026-12-04, second
session), written from README.md, docs/reference.md and `tilec explain`
alone, in styles the first round (`test_user_programs.py`) does not have:
NaN and infinities through reductions and `where` masks, bf16/f16/i8/u8
casts, integer division of negatives and shifts past the width in every
integer type, a static tile walk and a queue under `stages`, tile atomics
with a group's last block, every hint on a streaming loop, std::nn and
std::math, generic host functions, multi-kernel host loops.

Each `p*.tile` runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs (never from its
outputs); most also run whole through the NVPTX simulator for sm_80 and
sm_90a and must leave the interpreter's tensors; every kernel's PTX
assembles with ptxas.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from userprog import both_archs, program_suite, run_program

_run = run_program


def _bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to bf16 (nearest, ties to even), as float32."""
    x = np.asarray(x, np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, r)


def _sat(x: np.ndarray, dt: type) -> np.ndarray:
    """Float to int as Tile casts: truncate, saturate, NaN -> 0."""
    info = np.iinfo(dt)
    x = np.nan_to_num(np.asarray(x, np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)
    return np.clip(np.trunc(x), info.min, info.max).astype(dt)


def _close(got: np.ndarray, want: np.ndarray, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=tol, atol=tol,
                               equal_nan=True)


def _p01(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(32, dtype=np.float32) - 3).reshape(4, 8)
    x.flat[2], x.flat[9], x.flat[12], x.flat[20] = np.nan, np.inf, -np.inf, np.inf
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(t["mx"][:, 0], x.max(1))
        np.testing.assert_array_equal(t["mn"][:, 0], x.min(1))
        np.testing.assert_array_equal(t["sm"][:, 0], [np.nan, np.nan, np.inf, x[3].sum()])
        np.testing.assert_array_equal(t["clean"], np.where(np.isnan(x), 0, np.clip(x, -100, 100)))
        _close(t["ex"], np.exp(x.astype(np.float64)) - np.exp2(np.minimum(x, 0).astype(np.float64)), 1e-6)
        np.testing.assert_array_equal(t["am"][:, 0], [2, 1, 4, 7])  # a NaN is the first maximum, as in NumPy


def _p02(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(50, dtype=np.float32) - 25) * np.float32(7.3)
    x[1], x[2], x[3], x[4] = np.nan, 70000, -1e6, 1.00390625
    n = (np.arange(50) - 25) * 37
    tb = _bf16(x)
    with np.errstate(over="ignore"):
        xh = x.astype(np.float16)
    np.testing.assert_array_equal(t["b"], _bf16(tb * 3))
    np.testing.assert_array_equal(t["h"], xh)
    np.testing.assert_array_equal(t["i"], _sat(tb, np.int8))
    np.testing.assert_array_equal(t["u"], _sat(xh, np.uint8))
    np.testing.assert_array_equal(t["w"], (n & 0xFF).astype(np.uint8).view(np.int8))
    np.testing.assert_array_equal(t["f"], (n & 0xFF).astype(np.float32) + tb * np.float32(0.5))
    np.testing.assert_array_equal(t["k"], (x > 0).astype(np.uint8) + 2 * (n != 0))
    assert out.split() == ["3.0", "inf", "-128", "255", "99"]


def _tdiv(a: np.ndarray, b: np.ndarray, bits: int, signed: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Tile's kernel division: toward zero, x / 0 == 0, x % 0 == x, MIN / -1 == MIN (wrapped)."""
    a, b = a.astype(object), b.astype(object)
    q = np.array([0 if d == 0 else (abs(x) // abs(d)) * (1 if (x >= 0) == (d >= 0) else -1)
                  for x, d in zip(a, b, strict=True)], dtype=object)
    r = np.array([x if d == 0 else x - qq * d for x, d, qq in zip(a, b, q, strict=True)], dtype=object)
    m = 1 << bits

    def wrap(v: np.ndarray) -> np.ndarray:
        w = np.array([int(e) % m for e in v], dtype=object)
        return np.array([e - m if signed and e >= m // 2 else e for e in w], dtype=object)

    return wrap(q), wrap(r)


def _p03(t: dict[str, np.ndarray], out: str) -> None:
    a = np.arange(40) - 20
    a[a == 0] = -128
    d = np.arange(40) % 7 - 3
    d[20] = -1
    q, r = _tdiv(a, d, 8)
    np.testing.assert_array_equal(t["q8"], q.astype(np.int64))
    np.testing.assert_array_equal(t["r8"], r.astype(np.int64))
    a16 = ((a * 300 + 32768) % 65536) - 32768  # (a as i16) * 300 wraps in i16
    np.testing.assert_array_equal(t["q16"], _tdiv(a16, d, 16)[0].astype(np.int64))
    q, r = _tdiv(a * 5000000000, d, 64)
    np.testing.assert_array_equal(t["q64"], q.astype(np.int64))
    np.testing.assert_array_equal(t["r64"], r.astype(np.int64))
    q, r = _tdiv(a % 65536, d % 65536, 16, signed=False)
    np.testing.assert_array_equal(t["qu"], ((q + r) % 65536).astype(np.int64))
    s = range(-2, 68)
    amt8, amt64 = [k % 256 for k in s], [k % (1 << 64) for k in s]  # the amount is read as unsigned
    v = -100
    l8 = np.array([0 if k >= 8 else ((v << k) + 128) % 256 - 128 for k in amt8])
    r8 = np.array([-1 if k >= 8 else v >> k for k in amt8])
    ru = np.array([0 if k >= 8 else (v % 256) >> k for k in amt8])
    big = -0x0123456789ABCDF0
    l64 = np.array([0 if k >= 64 else ((big << k) + (1 << 63)) % (1 << 64) - (1 << 63) for k in amt64])
    r64 = np.array([-1 if k >= 64 else big >> k for k in amt64])
    for k, want in (("l8", l8), ("sr8", r8), ("ru", ru), ("l64", l64), ("sr64", r64)):
        np.testing.assert_array_equal(t[k].astype(np.int64), want, err_msg=k)


def _p04(t: dict[str, np.ndarray], out: str) -> None:
    w = (np.arange(54 * 8, dtype=np.float32) * np.float32(0.01)).reshape(54, 8).astype(np.float64)
    v = (np.arange(16, dtype=np.float64) - 5).reshape(2, 8)
    _close(t["y"], v @ w.T, 1e-4)
    z = np.ones((3, 20)) * (np.arange(20) // 4 + 1) + np.arange(3).reshape(3, 1)
    np.testing.assert_array_equal(t["z"], z)
    assert out.split() == ["7.0", "[2,", "54]"]


def _p05(t: dict[str, np.ndarray], out: str) -> None:
    x = ((np.arange(300) * 5 + 3) % 8).reshape(3, 100)
    v = (np.arange(300, dtype=np.float32) * np.float32(1.7) - 200).reshape(3, 100)
    counts = np.stack([np.bincount(r, minlength=8) for r in x])
    np.testing.assert_array_equal(t["counts"], counts)
    _close(t["freq"], counts / counts.sum(1, keepdims=True), 1e-6)
    np.testing.assert_array_equal(t["hi"], v.max(1))
    np.testing.assert_array_equal(t["lo"], v.min(1))
    per_block = np.stack([[np.bincount(r[b * 32:(b + 1) * 32], minlength=8) for b in range(4)] for r in x])
    np.testing.assert_array_equal(t["seen"], per_block.reshape(3, 32))


def _p06(t: dict[str, np.ndarray], out: str) -> None:
    x = ((np.arange(37 * 24, dtype=np.float32) % 11) - 5).reshape(37, 24)
    np.testing.assert_array_equal(t["y1"][0], x.sum(0))
    np.testing.assert_array_equal(t["y2"][0], x.sum(0))
    xh = (np.arange(64, dtype=np.float32) * 0.25).astype(np.float16).astype(np.float32).reshape(4, 16)
    want = (xh * np.arange(1, 5, dtype=np.float32).reshape(4, 1)).sum(0).astype(np.float16)
    np.testing.assert_array_equal(t["z"], want)
    np.testing.assert_array_equal(t["z0"], want)


def _p07(t: dict[str, np.ndarray], out: str) -> None:
    x = ((np.arange(120, dtype=np.float32) * np.float32(0.37)) % np.float32(5) - np.float32(2.5)).reshape(6, 20)
    x = x.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    _close(t["sm"], e / e.sum(1, keepdims=True), 1e-5)
    _close(t["ls"], np.log(e / e.sum(1, keepdims=True)), 1e-5)
    m = x.mean(1, keepdims=True)
    _close(t["ln"], (x - m) / np.sqrt(((x - m) ** 2).mean(1, keepdims=True) + 1e-5), 1e-4)
    xh = x.astype(np.float16).astype(np.float64)
    _close(t["rn"], xh / np.sqrt((xh * xh).mean(1, keepdims=True) + 1e-6), 2e-3)
    _close(t["ge"], 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), 1e-5)
    _close(t["si"], x / (1 + np.exp(-x)), 1e-5)
    np.testing.assert_array_equal(t["re"], np.maximum(x, 0).astype(np.float32))
    c = np.clip(x, -1, 1.5)
    _close(t["cl"], c + (x - c) * 0.25, 1e-6)
    assert out.split()[:2] == ["3", "24"]


def _p08(t: dict[str, np.ndarray], out: str) -> None:
    i = np.arange(64).reshape(8, 8)
    r, c = i // 8, i % 8
    a = np.where(r == c, np.where(r == 0, 10.0, 1.0 + r * 0.1), 0.05)
    np.testing.assert_array_equal(t["a"], a.astype(np.float32))
    x = np.ones(8)
    lams = []
    for _ in range(3 + 12):
        y = a @ x
        lams.append(np.linalg.norm(y))
        x = y / lams[-1]
    _close(t["x"], x, 1e-6)
    _close(t["y"], y, 1e-6)
    _close(t["lams"], lams[3:], 1e-6)
    assert abs(lams[-1] - np.linalg.eigvalsh(a).max()) < 1e-4
    assert out.split() == ["12", "true", "[8]"]


def _p09(t: dict[str, np.ndarray], out: str) -> None:
    q, k, v = (t[n].astype(np.float64) for n in "qkv")
    k, v = np.repeat(k, 2, axis=0), np.repeat(v, 2, axis=0)  # query heads 2b, 2b + 1 share KV head b
    s = q @ k.transpose(0, 2, 1) * 0.25
    p = np.exp(s - s.max(2, keepdims=True))
    _close(t["o"], (p / p.sum(2, keepdims=True)) @ v, 2e-3)
    seen = np.arange(24)[None, :] <= np.arange(40)[:, None] - 16  # causal, aligned to the bottom right
    sc = np.where(seen, s, -np.inf)
    rows = slice(16, 40)  # the first 16 queries see no key: zeros
    pc = np.exp(sc[:, rows] - sc[:, rows].max(2, keepdims=True))
    _close(t["oc"][:, rows], (pc / pc.sum(2, keepdims=True)) @ v, 2e-3)
    np.testing.assert_array_equal(t["oc"][:, :16], 0)
    _close(t["lse"][:, rows], np.log(np.exp(sc[:, rows]).sum(2)), 1e-5)
    assert (t["lse"][:, :16] == -np.inf).all()  # a row of no keys: the log of an empty sum, not NaN


def _shift_ref(v: list[int], s: list[int], bits: int, signed: bool, left: bool) -> np.ndarray:
    """Shift `v` (already in the value's type) by amounts `s` of another type, Tile's rule: an amount
    below 0 or of at least the width gives 0 (`<<`, unsigned `>>`) or the sign fill (signed `>>`)."""
    out = []
    for x, k in zip(v, s, strict=True):
        if k < 0 or k >= bits:
            r = 0 if left or not signed or x >= 0 else -1
        else:
            r = x << k if left else x >> k
        m = r % (1 << bits)
        out.append(m - (1 << bits) if signed and m >= 1 << (bits - 1) else m)
    return np.array(out, dtype=np.int64)


def _wrap(v: list[int], bits: int, signed: bool) -> list[int]:
    m = [x % (1 << bits) for x in v]
    return [x - (1 << bits) if signed and x >= 1 << (bits - 1) else x for x in m]


def _p10(t: dict[str, np.ndarray], out: str) -> None:
    s = [i % 20 - 3 for i in range(40)]
    v = [(i - 20) * 123456789 for i in range(40)]
    s8 = _wrap(s, 8, False)  # `ts as u8`
    np.testing.assert_array_equal(t["a"], _shift_ref(v, s, 64, True, True))
    np.testing.assert_array_equal(t["b"], _shift_ref(_wrap(v, 8, False), s, 8, False, False))
    np.testing.assert_array_equal(t["c"], _shift_ref(_wrap(v, 16, True), s8, 16, True, False))
    np.testing.assert_array_equal(t["d"], _shift_ref(_wrap(v, 32, False), s, 32, False, True))
    np.testing.assert_array_equal(t["hz"], 0)
    np.testing.assert_array_equal(t["hn"], np.where(np.array(_wrap(v, 16, True)) < 0, -1, 0))
    assert out.split() == ["0", "0", "0", "-1", "0"]


def _p11(t: dict[str, np.ndarray], out: str) -> None:
    w, x, g = (t[n].astype(np.float64) for n in "wxg")
    np.testing.assert_array_equal(t["w"], _bf16(t["w"]))  # bf16 values
    _close(t["y1"], w @ x, 1e-5)
    _close(t["y2"], w @ x, 1e-5)
    _close(t["part"].sum(0), w @ x, 1e-5)
    _close(t["y3"], 1 + w @ x, 1e-5)
    logits = (w @ (x * g[0])) / np.sqrt((x * x).mean() + 1e-6)
    _close(t["logits"], logits, 1e-5)
    blocks = [logits[i:i + 16] for i in range(0, 40, 16)]
    _close(t["bmax"], [b.max() for b in blocks], 1e-5)
    np.testing.assert_array_equal(t["barg"], [i * 16 + b.argmax() for i, b in enumerate(blocks)])
    best = int(np.argmax(logits))
    np.testing.assert_array_equal(t["tok"], [best])
    np.testing.assert_array_equal(t["pos"], [5])
    np.testing.assert_array_equal(t["hist"], [-1] * 5 + [best] + [-1] * 2)
    assert out.split() == ["true", "5", "true"]


def _p12(t: dict[str, np.ndarray], out: str) -> None:
    x = (np.arange(30, dtype=np.float64) * 7 % 11).reshape(2, 3, 5)
    y = ((np.arange(42, dtype=np.float64) * 13) % 17 - 8).reshape(6, 7)
    np.testing.assert_array_equal(t["pm"], x.transpose(2, 0, 1) * 10)
    np.testing.assert_array_equal(t["rs"], x.reshape(3, 10) - 1)
    np.testing.assert_array_equal(t["tr"], y.astype(np.int16).T * 3)
    _close(t["cs"], np.cumsum(y, 0) + np.cumsum(y, 1) * 0.5)
    np.testing.assert_array_equal(t["am"][0], y.argmax(0) * 10 + y.argmin(0))
    col, row = y.max(1, keepdims=True), y.min(0, keepdims=True)
    np.testing.assert_array_equal(t["bc"], np.where(y > col * 0.5, col - row, row + col))


def _p13(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    _close(t["y"], e / e.sum(1, keepdims=True), 1e-6)


def _p15(t: dict[str, np.ndarray], out: str) -> None:
    x = np.arange(40, dtype=np.float64)
    want = np.concatenate([np.full(8, -1.0) if s % 2 else x[8 * s:8 * s + 8] * 2 + s for s in range(5)])
    np.testing.assert_array_equal(t["z"], want)
    np.testing.assert_array_equal(t["one"], x[:5] * 2)
    xi = (np.arange(72) % 13).reshape(3, 24)
    zi = np.concatenate([np.concatenate([np.full(4, -7) if xi[r, s:s + 4].sum() > 30 else np.cumsum(xi[r, s:s + 4])
                                         for s in range(0, 24, 4)])[None] for r in range(3)])
    np.testing.assert_array_equal(t["zi"], zi)
    # a partial tile of `zq` ([3, 3]) but a whole one of `xi` (24 columns): the sum is of 4
    zq = np.stack([np.full(3, -7) if xi[r, :4].sum() > 30 else np.cumsum(xi[r, :3]) for r in range(3)])
    np.testing.assert_array_equal(t["zq"], zq)


def _p16(t: dict[str, np.ndarray], out: str) -> None:
    x = t["x"].astype(np.float32)
    assert np.signbit(x[1]) and x[6] != 0 and x[23] != 0  # -0.0 and the subnormals reach the kernel
    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        erf = np.vectorize(math.erf)(np.nan_to_num(x64, nan=0.0))
        want = {"a": np.exp(x), "b": np.log(x), "c": np.sqrt(x), "d": 1 / np.sqrt(x), "e": np.tanh(x),
                "f": (1 / (1 + np.exp(-x64))).astype(np.float32), "g": np.exp2(x), "h": np.log2(x), "i": np.floor(x) + np.ceil(x),
                "j": np.abs(x) + np.sin(np.minimum(x, np.float32(100))) * np.float32(0), "k": x * x, "l": np.where(np.isnan(x), np.nan, erf)}
        for k, w in want.items():
            # subnormal results: one step. The GPU's tanh is 1 - 2 / (2^(2|x| log2 e) + 1): below |x| ~ 3e-8 it
            # is 0, and its error is absolute (~1e-7), within `assert_close`'s f32 atol (1e-5), not relative
            atol = 1e-5 if k == "e" else 1e-44
            np.testing.assert_allclose(t[k], w, rtol=2e-6, atol=atol, equal_nan=True, err_msg=k)
        np.testing.assert_array_equal(np.signbit(t["d"][:2]), [False, True])  # rsqrt(+-0) = +-inf
        xh = x.astype(np.float16).astype(np.float64)
        xb = _bf16(x).astype(np.float64)
        np.testing.assert_allclose(t["a16"], np.exp(xh).astype(np.float16), rtol=1e-3, equal_nan=True)
        np.testing.assert_allclose(t["b16"], _bf16(np.log(xb).astype(np.float32)), rtol=1e-2, equal_nan=True)
        c = (np.sqrt(xh).astype(np.float16).astype(np.float64) + np.tanh(xh).astype(np.float16))
        np.testing.assert_allclose(t["c16"], c.astype(np.float16), rtol=2e-3, equal_nan=True)
    assert out.split() == ["inf", "-inf", "-inf", "-inf"]


CHECKS: dict[str, Callable[[dict[str, np.ndarray], str], None]] = {
    "p01_nan_inf": _p01, "p02_mixed_precision": _p02, "p03_int_ops": _p03, "p04_walk": _p04,
    "p05_atomics_last": _p05, "p06_hints": _p06, "p07_std_nn": _p07, "p08_host_loops": _p08,
    "p09_std_attention": _p09, "p10_mixed_shifts": _p10,
    "p11_std_llm": _p11, "p12_shapes": _p12, "p13_cluster": _p13,
    "p15_walk_edges": _p15, "p16_math_edges": _p16,
}
SIMULATED = ("p01_nan_inf", "p02_mixed_precision", "p03_int_ops", "p04_walk", "p05_atomics_last", "p06_hints",
             "p07_std_nn", "p08_host_loops", "p09_std_attention", "p10_mixed_shifts",
             "p11_std_llm", "p12_shapes", "p15_walk_edges", "p16_math_edges")
NEEDS_SM90 = ("p13_cluster",)  # (llsim runs its clusters since hrev15: on sm_90a below)
# the GPU's f16 results may differ from the interpreter's by an f16 rounding (exp2's approximation)
SIM_TOL = {"p09_std_attention": 1e-3}


(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    "p*.tile", CHECKS, [*both_archs(SIMULATED), *((n, "sm_90a") for n in NEEDS_SM90)], SIM_TOL,
    both_archs(sorted(CHECKS)),
    {(n, "sm_80"): "error[E0605]" for n in NEEDS_SM90})  # clusters are Hopper's
