"""On the GPU against the interpreter: the paths hcliff opened (2026-12-06), each at shapes with edges, on fresh
inputs, outputs poisoned with NaN first. Marked `gpu` (CPU checks of the same paths: llsim in
test_gemm_epilogue_loads, test_dot_fold, test_sm80_fallback, test_attention_one_stage, test_attention_loads,
test_attention_edge, test_default_warps).

- a GEMM epilogue that loads a bias per column (`g.AccLoad`), and `acc = acc + dot(a, b)` (`fold_dot_adds`);
- a 32-row GEMM tile on sm_90a: sm_80's cp.async ring (`pipeline_sm80.fallback_enabled`), since hcliff2 the
  Hopper pipeline padded to 64 rows (16 rows stay on the ring); hcliff2's 128 x 512 tile in two column parts and 128x128x32
  at 8 stages (llsim: test_gemm_tiles);
- std::attention at 128 x 256, D = 128: the K/V ring of one stage;
- a user's flash loop with an additive bias read in the loop, and one with its edge mask on every block
  (`attention_edge`);
- softmax rows of 32,768 as one tile (16 warps by default; 4 with `TILEC_DEFAULT_WARPS=0`);
- hattn (2026-12-06 09:49): a user's flash loop with Q scaled before it (`attention_qx`; llsim:
  test_attention_qx), with `acc * alpha + dot(p, v)` (test_dot_fold), with a causal or window mask by `where`
  (test_attention_edge); std 192 x 128 with the producer at 24 registers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

pytestmark = pytest.mark.gpu


def _torch():  # type: ignore[no-untyped-def]
    return pytest.importorskip("torch")


def _both(kern, part: tuple[int, ...], out: np.ndarray, ins: list, gpu_dtypes: list) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def, type-arg]
    """(the interpreter's output, the GPU's) of `kern(partition(out, part), *ins)`; `gpu_dtypes`: each input's
    torch dtype on the GPU (None: a scalar, passed as is)."""
    import tilelang

    torch = _torch()
    want = out.copy()
    kern(tilelang.partition(want, list(part)), *ins).sync()
    tdt = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32}
    t_out = torch.tensor(out.astype(np.float32), device="cuda").to(tdt[out.dtype])
    t_ins = [x if dt is None else torch.tensor(np.asarray(x, np.float32), device="cuda").to(dt)
             for x, dt in zip(ins, gpu_dtypes, strict=True)]
    kern(tilelang.partition(t_out, list(part)), *t_ins).sync()
    return want.astype(np.float64), t_out.float().cpu().numpy().astype(np.float64)


def test_gemm_paths_on_the_gpu() -> None:
    import tilelang

    torch = _torch()
    src = cliffs_cases._elem(cliffs_cases.GEMM, "f16")
    mod = tilelang.compile(src)
    rng = np.random.default_rng(int(np.random.default_rng().integers(1 << 30)))
    M, N, K = 200, 336, 208
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    w = (rng.standard_normal((N, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.25).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    c0 = np.full((M, N), np.nan, np.float16)
    f16, f32 = torch.float16, torch.float32
    for name, kern, part, ins, dts in (
            ("linear+bias+relu", mod.linear[128, 128, 64], (128, 128), [a, w, bias], [f16, f16, f32]),
            ("acc + dot", mod.gemm_dot[128, 128, 64], (128, 128), [a, b], [f16, f16]),
            ("32-row tile (padded to 64 rows: hcliff2)", mod.gemm[32, 64, 32], (32, 64), [a, b], [f16, f16]),
            ("16-row tile (sm_80 ring)", mod.gemm[16, 64, 64], (16, 64), [a, b], [f16, f16]),
            ("128x512 tile (two column parts: hcliff2)", mod.gemm[128, 512, 32], (128, 512), [a, b], [f16, f16]),
            ("128x128x32 tile (8 stages: hcliff2)", mod.gemm[128, 128, 32], (128, 128), [a, b], [f16, f16])):
        want, got = _both(kern, part, c0, ins, dts)
        assert not np.isnan(got).any(), name
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2, err_msg=name)


def test_attention_paths_on_the_gpu() -> None:
    import tilelang

    torch = _torch()
    rng = np.random.default_rng(int(np.random.default_rng().integers(1 << 30)))
    f16, f32 = torch.float16, torch.float32
    std = tilelang.compile("use std::attention::*;\n")
    user = tilelang.compile(cliffs_cases._elem(cliffs_cases.ATTN, "f16"))
    bh, s = 2, 300  # not a multiple of any block
    for d, name, kern, bm, extra in (
            (128, "std 128x256 (one K/V stage)", std.flash_attention["f16", 128, 256, 128], 128, None),
            (64, "user loop, bias read in the loop", user.attn_bias[64, 64, 64], 64, "bias"),
            (128, "user loop, edge mask", user.attn[128, 128, 128], 128, None),
            # hattn: Q scaled before the loop, by the consumers in shared memory (`attention_qx`): one and
            # two consumer warpgroups, and three (BM = 192: named barriers 9-11)
            (64, "user loop, Q scaled before it", user.attn_qscale[64, 64, 64], 64, None),
            (128, "user loop, Q scaled before it", user.attn_qscale[128, 128, 128], 128, None),
            (64, "user loop, Q scaled before it", user.attn_qscale[192, 128, 64], 192, None),
            # hattn: `acc * alpha + dot(p, v)` folded (`mma_select`); causal and window masks by `where` on the
            # blocks they mask only (`attention_edge._general`); std at BM = 192 with the producer at 24 registers
            (128, "user loop, acc * alpha + dot(p, v)", user.attn_dot[128, 128, 128], 128, None),
            (64, "user loop, causal mask by where", user.attn_causal[64, 64, 64], 64, None),
            (128, "user loop, causal mask by where", user.attn_causal[128, 128, 128], 128, None),
            (64, "user loop, sliding window", user.attn_window[64, 64, 64, 100], 64, None),
            (128, "std 192x128 (three consumer warpgroups)", std.flash_attention["f16", 192, 128, 128], 192, None),
            # hattn3: the max of the unscaled scores, the scale in the exponent's fma (attention_advice's help)
            (128, "user loop, scale in the exponent's fma", user.attn_fma[128, 128, 128], 128, None),
            (64, "user loop, scale in the exponent's fma", user.attn_fma[128, 64, 64], 128, None)):
        q, k, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
        o = np.full((bh, s, d), np.nan, np.float16)
        scale = np.float32(d ** -0.5)
        ins: list = [q, k, v]  # type: ignore[type-arg]
        dts: list = [f16, f16, f16]  # type: ignore[type-arg]
        if extra == "bias":
            ins.append(rng.standard_normal((s, s)).astype(np.float32))
            dts.append(f32)
        ins.append(scale)
        dts.append(None)
        if name.startswith("std"):
            ins.append(False)
            dts.append(None)
        want, got = _both(kern, (1, bm, d), o, ins, dts)
        assert not np.isnan(got).any(), name
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=3e-3, err_msg=name)


def test_softmax_rows_of_32768_on_the_gpu() -> None:
    import tilelang

    torch = _torch()
    mod = tilelang.compile(cliffs_cases.ROWS)
    x = (np.random.default_rng().standard_normal((5, 32768)) * 3).astype(np.float32)
    y = np.full_like(x, np.nan)
    want, got = _both(mod.softmax_rows[32768], (1, 32768), y, [x], [torch.float32])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-9)
