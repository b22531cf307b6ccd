"""Flash decoding as the GPU runs it, without a GPU: the code generator's
output for `decode_split` (a stream: one slab of keys per warp loaded into
registers, per-warp softmax states merged after the loop, the last key
block masked, NaN garbage past the cache length)
and `decode_combine` (column chunks), run on the CPU by the NVPTX IR
simulator (`tests/backend/llsim.py`) against the interpreter on the same
inputs. Small shapes: the simulator runs one Python generator per thread."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_llvm, lower_gpu  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
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
    # the key loop is a stream: K and V land in registers in the layout the
    # warps compute in (no conversion, no shared memory, no barrier in the loop)
    text = print_gpu_kernel(lower_gpu(split._plan.kir, "sm_90"))
    loop = text.split(" = for ")[1].split("\n  }")[0]
    assert "dot." not in text and "convert_layout" not in loop.split(" = if ")[0]
    # the [16, 64] key tile split [W, L, BL, D] = [4, 4, 1, 64] in place: warp w owns
    # keys 4w .. 4w + 3, one a lane group (the 4 lanes along the keys)
    assert "-> f16[4, 4, 1, 64] #blocked<spt=[1, 1, 1, 8], tpw=[1, 4, 1, 8], wpc=[4, 1, 1, 1]" in loop
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


def test_decode_split_with_several_keys_per_thread_in_the_simulator() -> None:
    # D = 128, 32 keys a block: the [4, 8, 128] tile has two lanes across a warp's
    # 8 keys, so each thread holds 4 consecutive keys (the repetitions folded into
    # its run, `layout_assign.fold_reps`) and the split [32] -> [4, 8] moves nothing
    rng = np.random.default_rng(1)
    hkv, g, smax, clen, d, bn, splits = 1, 4, 96, 75, 128, 32, 2
    q, k, v = (rng.standard_normal(s).astype(np.float16) for s in ((hkv, g, d), (hkv, smax, d), (hkv, smax, d)))
    k[:, clen:] = np.nan
    v[:, clen:] = np.nan
    o_part = np.zeros((hkv, splits * g, d), np.float32)
    lse_part = np.zeros((hkv, splits * g), np.float32)
    split = ATTN.decode_split["f16", g, bn, d](P(o_part, [1, g, d]), P(lse_part, [1, g]), q, k, v, clen, 0.09)
    loop = print_gpu_kernel(lower_gpu(split._plan.kir, "sm_90")).split(" = for ")[1].split("\n  }")[0]
    assert "f16[1, 32, 128] #blocked<spt=[1, 4, 8], tpw=[1, 2, 16], wpc=[1, 4, 1]" in loop
    assert "convert_layout" not in loop.split(" = if ")[0]
    # one online-softmax state a lane group (`attend_lanes`: [W, L, BL] = [4, 2, 4] keys):
    # a key block's max, sum and P V reduce over a thread's own 4 keys (axis 3 is
    # one thread's run), only the score's sum over D crosses lanes
    group = [ln for ln in loop.splitlines() if "= reduce." in ln and ", axis 3 :" in ln]
    assert len(group) == 3 and all("spt=[1, 1, 1, 4, 8], tpw=[1, 1, 2, 1, 16]" in ln for ln in group)
    assert [ln.split(", axis")[0].split()[-2] for ln in loop.splitlines() if "= reduce." in ln] == \
        ["reduce.sum", "reduce.max", "reduce.sum", "reduce.sum"]
    # with the launch's facts (aligned, D a multiple of 16) the kernel's `stages = 4`
    # streams K and V through shared-memory rings: read at the top of the loop,
    # the block 3 ahead copied in it, a wait without a barrier, no global load left
    facts = {p.name: TensorFacts(True, tuple(n % 16 == 0 for n in a.shape))
             for p, a in zip(split._plan.kir.tensor_params, split._hosts, strict=True)}
    text = print_gpu_kernel(lower_gpu(split._plan.kir, "sm_90", facts))
    ring_loop = text.split(" = for ")[1].split("\n  }")[0]
    assert text.split(" = for ")[0].count("cp.async.own") == 6  # K and V of 3 blocks before the loop
    assert ring_loop.count("ring.read") == 2 and ring_loop.count("cp.async.own") == 2
    assert "cp.async.wait 2\n" in ring_loop and "barrier" not in ring_loop and "= load @" not in ring_loop
    (sim_o, o_part), (sim_lse, lse_part) = _simulate_then_interpret(split, (hkv, splits, 1))[:2]
    assert np.isfinite(sim_o).all() and np.abs(o_part).max() > 0.05
    np.testing.assert_allclose(sim_o, o_part, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(sim_lse, lse_part, rtol=1e-5, atol=1e-5)


BF16_SPLIT = tilelang.compile("""
use std::attention::decode_share;
#[hints(num_warps = 4, stages = 4)]
kernel fn split_bf16(o_part: &mut Tensor<f32, [1, 4, 128]>, lse_part: &mut Tensor<f32, [1, 4]>,
        q: &Tensor<bf16, [?, 4, 128]>, k: &Tensor<bf16, [?, ?, 128]>, v: &Tensor<bf16, [?, ?, 128]>,
        cache_len: i32, scale: f32) {
    let (o, lse) = decode_share::<bf16, 4, 32, 128>(q, k, v, cache_len, scale);
    o_part.store(o.reshape([1, 4, 128]));
    lse_part.store(lse.reshape([1, 4]));
}
""")


def test_bf16_decode_split_through_the_ring_in_the_simulator() -> None:
    # bf16 K and V through the shared-memory ring: slots read back as 32-bit
    # words split into two f32 with shl / and (no fpext), key blocks wholly
    # inside the cache copied without per-chunk bounds tests, the last one
    # (keys 64..95 of a 90-position tensor) zero-filled past the edge
    rng = np.random.default_rng(2)
    hkv, g, smax, clen, d, splits = 2, 4, 90, 75, 128, 2

    def bf16(x: np.ndarray) -> np.ndarray:  # exact bf16 values in f32 arrays
        return (x.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)

    q, k, v = (bf16(rng.standard_normal(s)) for s in ((hkv, g, d), (hkv, smax, d), (hkv, smax, d)))
    k[:, clen:] = np.nan
    v[:, clen:] = np.nan
    o_part = np.zeros((hkv, splits * g, d), np.float32)
    lse_part = np.zeros((hkv, splits * g), np.float32)
    split = BF16_SPLIT.split_bf16(P(o_part, [1, g, d]), P(lse_part, [1, g]), q, k, v, clen, 0.09)
    facts = {p.name: TensorFacts(True, tuple(n % 16 == 0 for n in a.shape))
             for p, a in zip(split._plan.kir.tensor_params, split._hosts, strict=True)}
    ll = emit_llvm(split._plan.kir, "sm_90", facts)
    copies = re.findall(r"call void @llvm\.nvvm\.cp\.async\.cg\.shared\.global\.16\.s\(.*, i32 (\S+)\)", ll)
    # K and V, 3 key blocks before the loop and 1 in it, each a fast and an edge
    # copy of the thread's 4 chunks ([32, 128] bf16 over 128 threads): half the
    # copies of 16 literal bytes
    assert len(copies) == 2 * 4 * 2 * 4 and copies.count("16") == len(copies) // 2
    assert len(re.findall(r"= and i32 %\S+, -65536", ll)) == 2 * 4 * 4  # K and V: 4 chunks of 4 words
    (sim_o, o_part), (sim_lse, lse_part) = _simulate_then_interpret(split, (hkv, splits, 1))[:2]
    assert np.isfinite(sim_o).all() and np.abs(o_part).max() > 0.05
    np.testing.assert_allclose(sim_o, o_part, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sim_lse, lse_part, rtol=1e-5, atol=1e-5)
