"""Round 5 of the independent user's programs (huser, 2026-12-05), written
from README.md, docs/reference.md and examples/ alone: host programs of
several kernels. A kernel launched from a host loop whose partition changes
each time round (tile widths 1, 3, 8, 64, 100 over 37 elements, read from a
shape value at run time); producers in flight together and their consumer,
then a chain of launches with host work while each runs; a graph of three
dependent launches replayed in a loop while the host rewrites a captured
input in place, resets a captured output and reads another; a reduction in
two kernels (per-block partials, then one block combining them: a sum, a
max padded with -inf, an i64 count); one generic host function used at f32,
f16 and i32, making its output and launching two generic kernels;
std::llm's temperature + top-p sampler driven by hand (a block-max kernel
of the user's, the prep, five rounds of the threshold search in two
alternating buffers, the kept sums, the pick) at vocabularies of 1000 and
129 in chunks of 128, against NumPy's nucleus and inverse CDF.

Each `v*.tile` runs on the interpreter and its tensors are checked against
answers computed here with NumPy from the program's inputs (never from its
outputs); the graph and reduction kernels' PTX assembles with ptxas (no
simulation: these programs add host-side structure, not GPU code paths;
`test_user_gpu.py` runs them on a GPU). Found on the way (fixed, with their
own tests): E0307's help for a rebound graph input now names in-place
compound assignment (`x *= 0.0; x += new;`), the spelling v03 uses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

from userprog import program_suite

Tensors = dict[str, np.ndarray]
f32 = np.float32


def _v01(t: Tensors, out: str) -> None:
    x = np.arange(37, dtype=f32) - 10
    np.testing.assert_array_equal(t["total"], sum(x * f32(k) + 1 for k in range(5)))
    np.testing.assert_array_equal(t["y"], x * 4 + 1)  # the last width's launch: 100, one partial block
    np.testing.assert_array_equal(t["ids"], (np.arange(37) // 8) * 1000 + np.arange(37) % 8)
    assert out == f"{float(t['total'].sum())} 4004\n"


def _v02(t: Tensors, out: str) -> None:
    x = np.arange(1000, dtype=f32) / 100 - 5
    np.testing.assert_allclose(t["z"], x * x - (x * 2 - 1), rtol=1e-6, atol=1e-5)
    a = x.copy()
    for _ in range(8):
        a = a * f32(0.5) + 1
    np.testing.assert_allclose(t["a"], a, rtol=1e-6)
    np.testing.assert_array_equal(t["b"], t["a"])


def _v03(t: Tensors, out: str) -> None:
    n = 300
    ramp = np.arange(n, dtype=f32) / 100
    m, c, seen = np.zeros(n, f32), np.zeros(n, np.int32), 0.0
    for step in range(6):
        x = ramp * f32(step)
        if step == 3:
            m[:] = 0
        m = m * f32(0.75) + x * f32(0.25)
        d = np.abs(x - m)
        c += d > 0.5
        seen += float(d.sum())
    np.testing.assert_allclose(t["m"], m, rtol=1e-6)
    np.testing.assert_allclose(t["d"], d, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(t["c"], c)
    np.testing.assert_array_equal(t["x"], ramp * 5)
    got_seen, got_c, got_max = out.split()
    assert abs(float(got_seen) - seen) < 1e-3 * seen and int(got_c) == c.sum() and float(got_max) == m.max()


def _v04(t: Tensors, out: str) -> None:
    x = (np.arange(1001, dtype=f32) % 97) * f32(-0.25) - 1
    blocks = [x[i:i + 128] for i in range(0, 1001, 128)]
    np.testing.assert_allclose(t["ps"], [b.sum() for b in blocks], rtol=1e-6)
    np.testing.assert_array_equal(t["pm"], [b.max() for b in blocks])
    np.testing.assert_array_equal(t["pn"], [(b < 0).sum() for b in blocks])
    np.testing.assert_allclose(t["s"], [x.sum()], rtol=1e-6)
    np.testing.assert_array_equal(t["mx"], [x.max()])  # -1.0: every value negative, the -inf padding lost
    np.testing.assert_array_equal(t["neg"], [1001])
    assert t["neg"].dtype == np.int64 and out.split()[2:] == ["1001", "8"]


def _tile_scan(y: np.ndarray) -> np.ndarray:
    return np.concatenate([np.cumsum(y[i:i + 16], dtype=y.dtype) for i in range(0, len(y), 16)])


def _v05(t: Tensors, out: str) -> None:
    xf = np.arange(50, dtype=f32) * f32(0.25)
    np.testing.assert_array_equal(t["rf.0"], _tile_scan(xf * 2))
    np.testing.assert_array_equal(t["rh.0"], _tile_scan((xf * 2).astype(np.float16)))  # exact in f16
    assert t["rh.0"].dtype == np.float16
    ri = _tile_scan((np.arange(50, dtype=np.int32) - 25) * -3)
    np.testing.assert_array_equal(t["ri.0"], ri)
    assert out == f"316.0 316.0 {ri.max()}\n"


def _uniform(seed: int, counter: int) -> float:
    """std::llm::sampling's counter hash, in Python integers (u32 arithmetic)."""
    m = (1 << 32) - 1
    h = (seed * 747796405 + counter * 2891336453 + 1) & m
    h = ((h ^ (h >> 16)) * 73244475) & m
    h = ((h ^ (h >> 16)) * 73244475) & m
    h ^= h >> 16
    return float(f32(h >> 8) / f32(16777216.0))


def _sampled(t: Tensors, name: str, logits: np.ndarray, temperature: float, top_p: float, seed: int) -> int:
    """One `sample(..)` of v06 against NumPy: the probabilities, the threshold (the largest `tau` whose
    tokens hold `top_p` of the mass, to the search's resolution), the chunks' kept mass, the token (the
    inverse CDF of the kept tokens in vocabulary order at the hash's draw)."""
    e = np.exp((logits - logits.max()) / f32(temperature)).astype(np.float64)
    np.testing.assert_allclose(t[f"{name}.3"], e, rtol=1e-5, atol=1e-7)
    z = e.sum()
    tau = float(t[f"{name}.2"][0, 0])
    if top_p >= 1:
        assert tau == 0.0
    else:
        s = np.sort(e)[::-1]
        tstar = s[np.searchsorted(np.cumsum(s), top_p * z)]
        assert tau <= tstar * (1 + 1e-6) and tstar - tau < 1e-4, (name, tau, tstar)  # 9^-5 of e's range
    keep = np.where(e >= tau, e, 0.0)
    assert keep.sum() >= min(top_p, 1.0) * z * (1 - 1e-6)
    np.testing.assert_allclose(t[f"{name}.1"], [keep[i:i + 128].sum() for i in range(0, len(e), 128)],
                               rtol=1e-5)
    target = _uniform(seed, 0) * keep.sum()
    cs = np.cumsum(keep)
    want = int(np.searchsorted(cs, target, side="right"))
    # the draw is not within rounding of a token's edge (else f32 sums in another order could differ)
    assert min(cs[want] - target, target - (cs[want - 1] if want else 0.0)) > 1e-4 * z, name
    assert t[f"{name}.0"][0] == want, (name, t[f"{name}.0"][0], want)
    return want


def _v06(t: Tensors, out: str) -> None:
    picks = [_sampled(t, "all", t["logits"], 1.0, 1.0, 11), _sampled(t, "half", t["logits"], 0.7, 0.5, 12),
             _sampled(t, "one", t["peaked"], 1.0, 0.01, 13), _sampled(t, "odd", t["small"], 2.0, 0.9, 14)]
    assert picks[2] == 613 and t["peaked"].argmax() == 613
    assert out == " ".join(map(str, picks)) + "\n"


CHECKS = {
    "v01_changing_partition": _v01,
    "v02_producer_consumer": _v02,
    "v03_graph_host_edits": _v03,
    "v04_two_kernel_reduction": _v04,
    "v05_generic_host_two_dtypes": _v05,
    "v06_std_top_p": _v06,
}

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 _simulated, test_the_ptx_assembles) = program_suite(
    "v0[1-6]_*.tile", CHECKS, [], ptx=[("v03_graph_host_edits", "sm_90a"), ("v04_two_kernel_reduction", "sm_80")])
del _simulated  # nothing simulated: see the docstring
