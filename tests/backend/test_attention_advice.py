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
    (128, 256, 128, ["about 288 at BM = 128, BN = 256, D = 128, where 2 consumer warpgroups leave 240",  # (the producer at 24: `BOUNDARY_D`)
                     "one stage of K and V fits beside Q"]),
    (192, 128, 128, ["about 192 at BM = 192, BN = 128, D = 128, where 3 consumer warpgroups leave 160",
                     "BM = 192 gives three consumer warpgroups of 160 registers"]),
    # (D = 64: S, P and O fit the 160 registers since hattn9; what 192 rows give up is said)
    (192, 128, 64, ["BM = 192 gives three consumer warpgroups of 160 registers a thread: the persistent walk's key split"]),
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


def _user_ir(kern: str, bm: int = 128, bn: int = 128, d: int = 128):  # type: ignore[no-untyped-def]
    """cliffs.py's user kernel `kern` (f16) at `bm` x `bn`, D = `d`: (the cases' source, its Tile IR)."""
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" {kern}::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")
    return src, next(x for x in driver.compile(src + main, "ir").output if x.name == kern)


def _user(kern: str, bm: int = 128, bn: int = 128, d: int = 128):  # type: ignore[no-untyped-def]
    src, k = _user_ir(kern, bm, bn, d)
    return src, lower_gpu(k, "sm_90a", _facts([t.name for t in k.tensor_params], 3))


def _exp_note(notes):  # type: ignore[no-untyped-def]
    (n,) = [n for n in notes if "`exp` of the scores" in n.message]
    return n


def test_exp_of_the_scores_says_what_exp2_saves_at_its_line() -> None:
    src, gk = _user("attn")
    assert explain.refusals(gk) == []
    n = _exp_note(gk.notes)
    assert "`exp` of the scores costs a multiply an element more" in n.message and "write `exp2`" in n.help[0]
    assert f"where `exp` ran {attention_advice.EXP_MEASURED[0]}x" in n.help[0]  # (the plain exp's time)
    line = src[:n.labels[0].span.start].count("\n") + 1
    assert "let p = exp(s - mn);" in src.splitlines()[line - 1]
    for kern in ("attn_exp2", "attn_qscale", "attn_fma"):  # the exp2 spellings: nothing to say of their exp
        assert not any("`exp`" in n.message for n in _user(kern)[1].notes)


def test_exp_with_its_error_term_says_so(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXP_NONPOS", "0")  # (the softmax's exp keeps the error term)
    n = _exp_note(_user("attn")[1].notes)
    assert "keeps its accuracy promise" in n.message and "4 more instructions" in n.message
    assert "#[hints(fast_math = true)]" in n.help[0]
    assert f"where `exp` ran {attention_advice.EXP_TERM_MEASURED}x" in n.help[0]  # (with the error term)


def test_a_bias_loops_exp_keeps_its_error_term_and_says_so() -> None:
    src = cliffs_cases._elem(cliffs_cases.ATTN, "f16")
    main = ("fn main() { let q = zeros::<f16>([2, 256, 128]); let mut o = zeros::<f16>([2, 256, 128]);"
            " let b = zeros::<f32>([256, 256]);"
            " attn_bias::<128, 128, 128>(o.partition([1, 128, 128]), &q, &q, &q, &b, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(src + main, "ir").output if x.name == "attn_bias")
    gk = lower_gpu(k, "sm_90a", {**_facts("oqkv", 3), **_facts(["bias"], 2)})
    assert explain.path_of(gk) == "attention-pipeline"
    assert any("keeps its accuracy promise" in n.message for n in gk.notes)  # (`fastmath.exp_nonpos_plain`)


def test_scores_scaled_before_their_max_say_so_at_their_line() -> None:
    """`mma(..) * scale` ahead of the row max (the user's `attn`, `attn_exp2`): a note at that line whose help is
    std::attention's spelling (the max of the unscaled scores, the scale in the exponent's `fma`), which cliffs.py
    has as `attn_fma`: no such note there, nor where Q is scaled before the loop, nor in std::attention."""
    for kern, fewer in (("attn", "two instructions an element fewer"), ("attn_exp2", "one instruction an element fewer")):
        src, gk = _user(kern)
        (n,) = [n for n in gk.notes if "scaled before their row max" in n.message]
        assert fewer in n.help[0] and "exp2(fma(s, c, -mn))" in n.help[0] and "`attn_fma`" in n.help[0]
        line = src[:n.labels[0].span.start].count("\n") + 1
        assert "zeros::<f32>([BM, BN])) * " in src.splitlines()[line - 1], src.splitlines()[line - 1]
    src, gk = _user("attn_fma")
    assert explain.path_of(gk) == "attention-pipeline" and gk.notes == ()  # (attn_qscale's: the exp test's)
    assert not any("scaled before" in n.message for n in _notes(128, 128, 128))


def test_the_fma_spelling_computes_the_same_attention() -> None:
    """The help's spelling (`attn_fma`) against the user's `attn` on the interpreter: both NumPy's attention
    within f16's rounding of the output (the online softmax's sums in another order and units)."""
    import numpy as np

    import tilelang

    mod = tilelang.compile(cliffs_cases._elem(cliffs_cases.ATTN, "f16"))
    rng = np.random.default_rng(7)
    bh, s, d = 2, 192, 64
    q, k, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    scale = d**-0.5
    ref = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 2, 1) * scale
    ref = np.exp(ref - ref.max(2, keepdims=True))
    ref = (ref / ref.sum(2, keepdims=True)) @ v.astype(np.float64)
    outs = []
    for kern in ("attn", "attn_fma"):
        o = np.zeros((bh, s, d), np.float16)
        getattr(mod, kern)[64, 64, d](tilelang.partition(o, [1, 64, d]), q, k, v, scale).sync()
        assert np.abs(o - ref).max() < 2e-3, (kern, np.abs(o - ref).max())
        outs.append(o.astype(np.float64))
    assert np.abs(outs[0] - outs[1]).max() < 2e-3


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


@pytest.mark.heavy
@pytest.mark.parametrize(("bm", "bn", "d"), sorted(attention_advice.FMA_SASS))
def test_the_fma_spellings_sass_is_what_the_note_says(bm: int, bn: int, d: int) -> None:
    """`FMA_SASS` (the help's numbers) held to ptxas 13: the key loops of `attn` and `attn_fma` (nvdisasm)."""
    from ptxas_report import sass
    from test_attention_split import _key_loops

    from tilelang.backend import emit_ptx

    got = []
    for kern in ("attn", "attn_fma"):
        _, k = _user_ir(kern, bm, bn, d)
        loops = _key_loops(sass(emit_ptx(k, "sm_90a", _facts([t.name for t in k.tensor_params], 3))))
        got.append(len(loops[0]))  # (the consumers' key loop: the first; the split's pieces and the producer after)
    assert tuple(got) == attention_advice.FMA_SASS[(bm, bn, d)], got


@pytest.mark.heavy  # (~3.5 s: the interpreter test above holds its values, the GPU path test its GPU run)
@pytest.mark.parametrize("s", [100])
def test_the_fma_spelling_in_the_simulator(s: int) -> None:
    """`attn_fma` (the help's spelling) on the Hopper attention pipeline in llsim at sm_90a against the
    interpreter: 2 query blocks of 64 rows, the last partial, over 100 keys (the second key block masked)."""
    import numpy as np
    from llsim import SimDevice

    import tilelang
    from tilelang.backend.facts import TensorFacts

    src, k = _user_ir("attn_fma", 64, 64, 64)
    facts = {n: TensorFacts(True, (False, s % 16 == 0, True)) for n in "oqkv"}
    assert explain.path_of(lower_gpu(k, "sm_90a", facts)) == "attention-pipeline"
    rng = np.random.default_rng(s)
    q, kk, v = (rng.standard_normal((1, s, 64)).astype(np.float16) for _ in range(3))
    o = np.full((1, s, 64), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (1, 2), [o, q, kk, v, np.float32(0.125)], facts)
    want = np.zeros((1, s, 64), np.float16)
    tilelang.compile(src).attn_fma[64, 64, 64](tilelang.partition(want, [1, 64, 64]), q, kk, v, np.float32(0.125)).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)
