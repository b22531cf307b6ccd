"""Flash decoding as the GPU runs it, without a GPU: the code generator's
output for `decode_split` (query rows repeated to the tensor-core M of 16,
`mma.sync`, the last key block masked, NaN garbage past the cache length)
and `decode_combine` (column chunks), run on the CPU by the NVPTX IR
simulator (`tests/backend/llsim.py`) against the interpreter on the same
inputs. Small shapes: the simulator runs one Python generator per thread."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import lower_gpu  # noqa: E402
from tilelang.backend.gpu.printer import print_gpu_kernel  # noqa: E402

ATTN = tilelang.compile("use std::attention::*;\n")
P = tilelang.partition


def _simulate_then_interpret(op, grid: tuple[int, ...]) -> list[tuple[np.ndarray, np.ndarray]]:  # type: ignore[no-untyped-def]
    copies = [np.array(h) for h in op._hosts]
    SimDevice("sm_90").run(op._plan.kir, grid, op._kernel_args(copies))
    op.sync()  # the interpreter, in place on the original arrays
    return list(zip(copies, op._hosts, strict=True))


def test_decode_split_and_combine_in_the_simulator() -> None:
    rng = np.random.default_rng(0)
    hkv, g, smax, clen, d, bn, splits = 1, 4, 80, 70, 64, 16, 2
    q = rng.standard_normal((hkv, g, d)).astype(np.float16)
    k = rng.standard_normal((hkv, smax, d)).astype(np.float16)
    v = rng.standard_normal((hkv, smax, d)).astype(np.float16)
    k[:, clen:] = np.nan  # past the cache length: garbage the kernel must not read into the result
    v[:, clen:] = np.nan
    o_part = np.zeros((hkv, splits * g, d), np.float32)
    lse_part = np.zeros((hkv, splits * g), np.float32)
    split = ATTN.decode_split["f16", g, bn, d](P(o_part, [1, g, d]), P(lse_part, [1, g]), q, k, v, clen, 0.125)
    # G = 4 query rows repeated to 16: both products on the tensor cores
    assert print_gpu_kernel(lower_gpu(split._plan.kir, "sm_90")).count("dot.mma.sync") == 2
    (sim_o, o_part), (sim_lse, lse_part) = _simulate_then_interpret(split, (hkv, splits, 1))[:2]
    assert np.isfinite(sim_o).all() and np.isfinite(sim_lse).all()
    np.testing.assert_allclose(sim_o, o_part, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sim_lse, lse_part, rtol=1e-5, atol=1e-5)

    o = np.zeros_like(q)
    dc = 16
    comb = ATTN.decode_combine["f16", g, splits, dc](P(o, [1, g, dc]), o_part, lse_part)
    (sim, want), *_ = _simulate_then_interpret(comb, (hkv, 1, d // dc))
    np.testing.assert_allclose(sim.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert np.abs(want).max() > 0.1
