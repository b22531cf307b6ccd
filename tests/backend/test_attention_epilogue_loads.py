"""A residual (or any tile of a tensor the kernel never writes) loaded after the attention loop and added to its
output (`o.store(((acc / l) + res.load(..)) as f16)`: huser16's note of 13:11, a fused block's residual) no
longer sends the whole loop to `mma.sync` with no pipeline ("a load of `res` after the loop"): the pipeline's
epilogue loads it as the key loop loads a bias, each consumer thread its own elements (`attention_match`).
llsim at sm_90a against the interpreter, also where the persistent walk's last round is split into pieces (the
merge runs the epilogue); what stays refused; the chained variant does not take such an epilogue."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice

import tilelang
from tilelang import driver
from tilelang.backend import explain, lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import cliffs_cases  # noqa: E402

STORE = "o.store((acc / l).reshape([1, BM, D]) as f16);"
RESIDUAL = ("o.store(((acc / l) + res.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]))"
            ".reshape([1, BM, D]) as f16);")


def _src(store: str = RESIDUAL) -> str:
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16").split("// own names")[0]
    assert STORE in src
    return src.replace("kernel fn attn<", "kernel fn attn_res<").replace(
        "q: &Tensor<f16, [?, ?, D]>, k:", "res: &Tensor<f32, [?, ?, D]>, q: &Tensor<f16, [?, ?, D]>, k:").replace(
        STORE, store)


def _kernel(bm: int, bn: int, d: int, store: str = RESIDUAL):  # type: ignore[no-untyped-def]
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let r = zeros::<f32>([2, 256, {d}]);"
            f" let mut o = zeros::<f16>([2, 256, {d}]);"
            f" attn_res::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &r, &q, &q, &q, 0.1).sync(); }}\n")
    return next(x for x in driver.compile(_src(store) + main, "ir").output if x.name == "attn_res")


FACTS = {n: TensorFacts(True, (False, False, True)) for n in ("o", "q", "k", "v", "res")}


def test_a_residual_after_the_loop_takes_the_pipeline(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gk = lower_gpu(_kernel(64, 64, 64), "sm_90a", FACTS)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    monkeypatch.setenv("TILEC_ATTN_LOADS", "0")  # (loads by the consumers off: refused, with a help)
    gk = lower_gpu(_kernel(64, 64, 64), "sm_90a", FACTS)
    (n,) = explain.refusals(gk)
    assert "a load of `res` after the loop" in n.message and "load the tile unmasked" in n.help[0]


def test_a_padded_residual_stays_refused() -> None:
    masked = RESIDUAL.replace("res.partition([1, BM, D]).load([h, block_id(1), 0])",
                              "res.partition([1, BM, D]).load_padded([h, block_id(1), 0], 1.0)")
    gk = lower_gpu(_kernel(64, 64, 64, masked), "sm_90a", FACTS)
    assert explain.path_of(gk) != "attention-pipeline"
    assert any("a load of `res` after the loop" in n.message for n in explain.refusals(gk))


def test_the_chained_variant_takes_no_epilogue_load() -> None:
    from tilelang.backend.gpu.passes import attention_chain

    k = _kernel(64, 64, 64)
    loads = [op for op in k.body.ops if type(op).__name__ == "Load" and op.tensor == "res"]
    assert loads and attention_chain.plan(loads, k.body.ops[0], 0, [], [], None) is None  # type: ignore[arg-type]


def _run(bm: int, bn: int, d: int, grid: tuple[int, ...] | None, b: int = 2, s: int = 0) -> None:
    k = _kernel(bm, bn, d)
    s = s or 2 * bm + 64
    rng = np.random.default_rng(bm + d)
    q, kk, v = (rng.standard_normal((b, s, d)).astype(np.float16) for _ in range(3))
    r = rng.standard_normal((b, s, d)).astype(np.float32)
    o = np.full((b, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, grid or (b, -(-s // bm), 1), [o, r, q, kk, v, scale], FACTS)
    want = np.zeros((b, s, d), np.float16)
    tilelang.compile(_src()).attn_res[bm, bn, d](tilelang.partition(want, [1, bm, d]), r, q, kk, v, scale).sync()
    assert not np.isnan(o.astype(np.float32)).any()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=4e-3, rtol=2e-3)


def test_a_residual_epilogue_in_the_simulator() -> None:
    _run(64, 64, 64, None, b=1, s=130)


@pytest.mark.heavy  # (the walk's last round in pieces, the merge running the epilogue; and 128 x 128, D = 128)
@pytest.mark.parametrize(("bm", "bn", "d", "ctas"), [(64, 64, 64, 4), (128, 64, 64, 3), (128, 128, 128, 4)])
def test_a_residual_epilogue_split_in_the_simulator(bm: int, bn: int, d: int, ctas: int) -> None:
    if d == 64:
        assert "split.save" in print_gpu_kernel(lower_gpu(_kernel(bm, bn, d), "sm_90a", FACTS))
    _run(bm, bn, d, (ctas, 1))


def test_a_residual_is_no_bias_for_the_exp(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A load in the epilogue leaves the key loop's exp plain (`codegen/arith.acc_loads` looks at the loops that
    also hold an exp; a bias loaded in the key loop keeps the error term: test_exp_ln2)."""
    from tilelang.backend import emit_llvm_text

    lls = {}
    for knob in ("1", "all"):
        monkeypatch.setenv("TILEC_EXP_NONPOS", knob)
        gk = lower_gpu(_kernel(64, 64, 64), "sm_90a", FACTS)
        lls[knob] = emit_llvm_text(gk, gk.facts, "")[0]
    assert lls["1"] == lls["all"]


# Q's own tile as the residual (`attention_reload`: loaded again after the loop, a transformer block's x + f(x))
QRES = "o.store(((acc / l) + qt as f32).reshape([1, BM, D]) as f16);"


def test_q_read_after_the_loop_is_loaded_again(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    gk = lower_gpu(_kernel(64, 64, 64, QRES), "sm_90a", FACTS)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    monkeypatch.setenv("TILEC_ATTN_RELOAD", "0")
    gk = lower_gpu(_kernel(64, 64, 64, QRES), "sm_90a", FACTS)
    assert explain.path_of(gk) != "attention-pipeline"
    assert any("the tile loaded from `q` has another use" in n.message for n in explain.refusals(gk))


def test_q_as_the_residual_in_the_simulator() -> None:
    k = _kernel(64, 64, 64, QRES)
    b, s, d = 1, 130, 64
    rng = np.random.default_rng(9)
    q, kk, v = (rng.standard_normal((b, s, d)).astype(np.float16) for _ in range(3))
    r = np.zeros((b, s, d), np.float32)  # (unused by this kernel)
    o = np.full((b, s, d), np.nan, np.float16)
    scale = np.float32(d ** -0.5)
    SimDevice("sm_90a").run(k, (b, 3, 1), [o, r, q, kk, v, scale], FACTS)
    want = np.zeros((b, s, d), np.float16)
    tilelang.compile(_src(QRES)).attn_res[64, 64, 64](tilelang.partition(want, [1, 64, d]), r, q, kk, v,
                                                      scale).sync()
    assert not np.isnan(o.astype(np.float32)).any()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=4e-3, rtol=2e-3)
