"""Notes on a loop the Hopper attention pipeline takes at a cost its blocks or spelling chose
(`passes/attention_advice.py`): each block shape std::attention measured slower than 128 x 128 says why and
what runs faster (registers, one K/V stage, one consumer warpgroup, short key blocks); `exp` of the scores
says what `exp2` saves; the tuned blocks and the exp2 spellings say nothing. The register estimate is held to
ptxas: the shapes it says spill do, the tuned one does not."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_attention_pipeline import _facts, _std

from tilelang import driver
from tilelang.backend import compile_kernel, explain, lower_gpu
from tilelang.backend.gpu.passes import attention_advice

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import cliffs_cases  # noqa: E402


def _notes(bm: int, bn: int, d: int) -> list:  # type: ignore[type-arg]
    gk = lower_gpu(_std("flash_attention", "f16", bm, bn, d), "sm_90a", _facts("oqkv", 3))
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    return list(gk.notes)


@pytest.mark.parametrize(("bm", "bn", "d", "want"), [
    (128, 64, 128, ["BN = 64 makes 2 times the key blocks"]),
    (64, 128, 128, ["BM = 64 gives one consumer warpgroup"]),
    (128, 256, 128, ["about 296 at BM = 128, BN = 256, D = 128, where 2 consumer warpgroups leave 232",
                     "one stage of K and V fits beside Q"]),
    (192, 128, 128, ["about 200 at BM = 192, BN = 128, D = 128, where 3 consumer warpgroups leave 160"]),
    (192, 128, 64, ["about 168 at BM = 192, BN = 128, D = 64, where 3 consumer warpgroups leave 160"]),
])
def test_each_slower_block_shape_says_why_and_what_is_faster(bm: int, bn: int, d: int, want: list[str]) -> None:
    notes = _notes(bm, bn, d)
    assert len(notes) == len(want), [n.message for n in notes]
    for n, w in zip(notes, want, strict=True):
        assert n.message.startswith("the Hopper attention pipeline takes this loop, but ") and w in n.message
        best, here = attention_advice.MEASURED[(128, 128, d)], attention_advice.MEASURED[(bm, bn, d)]
        assert f"BM = BN = 128 (std::attention's tuning) ran {best}x SDPA" in n.help[0] and f"ran {here}x" in n.help[0]
        assert best > here


def test_the_tuned_blocks_say_nothing() -> None:
    assert _notes(128, 128, 128) == [] and _notes(128, 128, 64) == []


def _user(kern: str, bm: int = 128, bn: int = 128, d: int = 128):  # type: ignore[no-untyped-def]
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" {kern}::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == kern)
    return src, lower_gpu(k, "sm_90a", _facts([t.name for t in k.tensor_params], 3))


def test_exp_of_the_scores_says_what_exp2_saves_at_its_line() -> None:
    src, gk = _user("attn")
    assert explain.refusals(gk) == []
    (n,) = gk.notes
    assert "`exp` of the scores costs a multiply an element more" in n.message and "write `exp2`" in n.help[0]
    line = src[:n.labels[0].span.start].count("\n") + 1
    assert "let p = exp(s - mn);" in src.splitlines()[line - 1]
    for kern in ("attn_exp2", "attn_qscale"):  # the exp2 spellings: nothing to say
        assert _user(kern)[1].notes == ()


def test_exp_with_its_error_term_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXP_NONPOS", "0")  # (the softmax's exp keeps the error term)
    (n,) = _user("attn")[1].notes
    assert "keeps its accuracy promise" in n.message and "4 more instructions" in n.message
    assert "#[hints(fast_math = true)]" in n.help[0]


def test_a_bias_loops_exp_keeps_its_error_term_and_says_so() -> None:
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 128]); let mut o = zeros::<f16>([2, 256, 128]);"
            " let b = zeros::<f32>([256, 256]);"
            " attn_bias::<128, 128, 128>(o.partition([1, 128, 128]), &q, &q, &q, &b, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn_bias")
    gk = lower_gpu(k, "sm_90a", {**_facts("oqkv", 3), **_facts(["bias"], 2)})
    assert explain.path_of(gk) == "attention-pipeline"
    assert any("keeps its accuracy promise" in n.message for n in gk.notes)  # (`fastmath.exp_nonpos_plain`)


def test_explain_lines_carry_the_notes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXPLAIN", "1")
    ck = compile_kernel(_std("flash_attention", "f16", 192, 128, 128), "sm_90a", _facts("oqkv", 3))
    assert "Hopper attention pipeline" in ck.explain[0]
    assert any("takes this loop, but its consumer threads hold S, P and O" in x for x in ck.explain)
    assert any("help: BM = BN = 128" in x for x in ck.explain)


@pytest.mark.parametrize(("bm", "bn", "d"), [(128, 128, 128), (192, 128, 128), (128, 256, 64)])
def test_the_register_estimate_agrees_with_ptxas(bm: int, bn: int, d: int) -> None:
    """ptxas spills exactly where the note says the registers do not suffice."""
    from ptxas_report import assemble

    ptx = compile_kernel(_std("flash_attention", "f16", bm, bn, d), "sm_90a", _facts("oqkv", 3)).ptx
    spills = assemble(ptx).max_spill_stores > 0
    says = any("they spill to local memory" in n.message for n in _notes(bm, bn, d))
    assert spills == says, (spills, says)
