"""Round 12 through the Python API (huser12, 2026-12-06; torch is not
installed here): g06's small language-model block (RMSNorm with f16
weights, a GEMV projection over token rows, the rotary embedding) called on
NumPy arrays, as a host function of three launches, kernel by kernel and as
one recorded graph replayed on new inputs, against NumPy; g11's generic
conv1d on float16 and float32 arrays (`T` from the arrays); and the
mistakes a NumPy user makes on the first day (a
float64 array from `np.random`, an f32 weight for an f16 parameter, a float
position, an output passed without a partition or with a tile of the
wrong rank, a weight of the wrong width), each refused with its code, the
parameter and a fix that then runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilelang

P = tilelang.partition
PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def mod() -> tilelang.Module:
    return tilelang.load(PROGRAMS / "g06_llm_block_api.tile")


def block_ref(x: np.ndarray, w: np.ndarray, wq: np.ndarray, pos0: int) -> np.ndarray:
    """NumPy's block: RMSNorm (f16 result), x W^T, rotate-half rotary with theta 10000 over heads of 16."""
    x = x.astype(np.float64)
    y = (x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * w.astype(np.float64)).astype(np.float16)
    q = y.astype(np.float64) @ wq.astype(np.float64).T
    t, n = q.shape
    a, b = q.reshape(t, n // 16, 16)[..., :8], q.reshape(t, n // 16, 16)[..., 8:]
    ang = (np.arange(t) + pos0)[:, None, None] * np.exp(np.arange(8) * (-2.0 / 16) * np.log(10000.0))
    return np.concatenate([a * np.cos(ang) - b * np.sin(ang), b * np.cos(ang) + a * np.sin(ang)], -1).reshape(t, n)


def _inputs(seed: int, t: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((t, 64)).astype(np.float32), (rng.random(64) + 0.5).astype(np.float16),
            (rng.standard_normal((32, 64)) * 0.125).astype(np.float16))


def test_the_block_as_a_host_function_returns_numpy_s_answer(mod: tilelang.Module) -> None:
    x, w, wq = _inputs(0)
    o = mod.block(x, w, wq, 3)
    assert isinstance(o, np.ndarray) and o.dtype == np.float32 and o.shape == (7, 32)
    np.testing.assert_allclose(o, block_ref(x, w, wq, 3), rtol=1e-5, atol=1e-5)
    # a Fortran-ordered x (a view that is no C-order block) is copied in by a host function, with the same result
    np.testing.assert_array_equal(mod.block(np.asfortranarray(x), w, wq, 3), o)
    # another position moves only the rotation: token 0 at position 3 is token 3's angle at position 0
    o0 = mod.block(np.repeat(x[:1], 4, axis=0), w, wq, 0)
    np.testing.assert_allclose(o0[3], o[0], rtol=1e-5, atol=1e-5)


def test_the_kernels_one_by_one_in_place(mod: tilelang.Module) -> None:
    x, w, wq = _inputs(1, t=5)
    y = np.zeros((5, 64), np.float16)
    mod.rmsnorm(P(y, [1, 64]), x, w).sync()
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd * xd).mean(1, keepdims=True) + 1e-6) * w.astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    q = np.zeros((5, 32), np.float32)
    mod.project(P(q, [1, 16]), y, wq).sync()  # BN from the tile, D from y's shape
    np.testing.assert_allclose(q, y.astype(np.float64) @ wq.astype(np.float64).T, rtol=1e-5, atol=1e-5)
    o = np.zeros_like(q)
    h = mod.rotary(P(o, [1, 16]), q, 0, 10000.0).launch()
    with pytest.raises(ValueError, match="read-only"):
        q[0, 0] = 1.0  # an input of a launch in flight
    h.wait()
    np.testing.assert_allclose(o, block_ref(x, w, wq, 0), rtol=1e-5, atol=1e-5)
    assert np.allclose(o[0], q[0])  # position 0: no rotation


@pytest.mark.parametrize(("mistake", "code", "phrase"), [
    ("float64", "E0502", "help: convert it first: `x.astype(numpy.float32)`"),
    ("f32 weight", "E0502", "help: convert it first: `w.astype(numpy.float16)`"),
    ("float position", "E0203", "is an integer (`i32`), but it is 3.0"),
    ("whole output", "E0301", "must be a partition, so that each block writes only its own tile"),
    ("rank of the tile", "E0507", "`tilelang.partition(y, [1, 64])`"),
    ("narrow weight", "E0504", "64 from dimension 0 of `w` but 48 from the tile shape of `y`"),
])
def test_first_day_mistakes_are_refused_with_a_fix(mod: tilelang.Module, mistake: str, code: str,
                                                    phrase: str) -> None:
    x, w, wq = _inputs(2)
    y = np.zeros((7, 64), np.float16)
    calls = {
        "float64": (lambda: mod.block(x.astype(np.float64), w, wq, 3), lambda: mod.block(x, w, wq, 3)),
        "f32 weight": (lambda: mod.block(x, w.astype(np.float32), wq, 3), lambda: mod.block(x, w, wq, 3)),
        "float position": (lambda: mod.block(x, w, wq, 3.0), lambda: mod.block(x, w, wq, int(3.0))),
        "whole output": (lambda: mod.rmsnorm(y, x, w).sync(), lambda: mod.rmsnorm(P(y, [1, 64]), x, w).sync()),
        "rank of the tile": (lambda: mod.rmsnorm(P(y, [64]), x, w).sync(),
                             lambda: mod.rmsnorm(P(y, [1, 64]), x, w).sync()),
        "narrow weight": (lambda: mod.block(x[:, :48].copy(), w, wq, 3), lambda: mod.block(x, w, wq, 3)),
    }
    wrong, fixed = calls[mistake]
    with pytest.raises(tilelang.TileError) as info:
        wrong()
    assert info.value.code == code and phrase in str(info.value), str(info.value)
    assert "Traceback" not in str(info.value)
    fixed()  # the fix runs


def conv1d_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """PyTorch's causal depthwise conv1d (left padding K - 1, cross-correlation) plus bias, then SiLU, in f64."""
    k = w.shape[0]
    xp = np.concatenate([np.zeros((k - 1, x.shape[1])), x.astype(np.float64)])
    acc = b + sum(xp[j:j + len(x)] * w[j] for j in range(k))
    return acc / (1 + np.exp(-acc))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_generic_kernel_takes_its_element_type_from_the_arrays(dtype: type) -> None:
    mod = tilelang.load(PROGRAMS / "g11_causal_conv1d_generic.tile")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((30, 24)).astype(dtype)
    w = (rng.standard_normal((4, 24)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(24) * 0.1).astype(np.float32)
    y = np.zeros((30, 24), dtype)
    mod.conv1d(P(y, [8, 24]), x, w, b).sync()  # T from the arrays, K and C from the shapes, BT from the tile
    tol = 2e-3 if dtype is np.float16 else 1e-5
    np.testing.assert_allclose(y.astype(np.float64), conv1d_ref(x, w, b), rtol=tol, atol=tol)
    # an output of another element type than the input: `T` is given twice, differently
    with pytest.raises(tilelang.TileError) as info:
        mod.conv1d(P(np.zeros((30, 24), np.float64), [8, 24]), x, w, b).sync()
    assert info.value.code == "E0504" and "`T` of kernel `conv1d` is" in str(info.value), str(info.value)


def test_the_block_s_three_launches_replay_as_one_graph_on_new_tokens(mod: tilelang.Module) -> None:
    """A decode step's shape: the three kernels recorded once in a `tilelang.graph()`, replayed for each new
    token batch written into the same input array in place (a new array bound to the name would not be seen)."""
    x, w, wq = _inputs(4, t=6)
    y, q, o = np.zeros((6, 64), np.float16), np.zeros((6, 32), np.float32), np.zeros((6, 32), np.float32)
    with tilelang.graph() as g:
        mod.rmsnorm(P(y, [1, 64]), x, w).sync()
        mod.project(P(q, [1, 16]), y, wq).sync()
        mod.rotary(P(o, [1, 16]), q, 5, 10000.0).sync()
    assert not o.any()  # recorded, not run
    rng = np.random.default_rng(5)
    for _ in range(3):
        x[:] = rng.standard_normal((6, 64)).astype(np.float32)
        g.replay()
        np.testing.assert_allclose(o, block_ref(x, w, wq, 5), rtol=1e-5, atol=1e-5)
    g.replay(times=2)  # the same inputs twice: the same result
    np.testing.assert_allclose(o, block_ref(x, w, wq, 5), rtol=1e-5, atol=1e-5)
