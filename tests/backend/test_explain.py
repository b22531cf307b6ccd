"""Which path a kernel takes and why a faster one refused it (`backend/explain.py`, `PassContext.refuse`):
`tilec emit --explain`'s notes, located at the op that caused them, with a help line where a rewrite helps;
`TILEC_EXPLAIN=1`'s lines on a compiled kernel; no note where a pipeline takes the loop."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from clirunner import invoke
from test_attention_pipeline import USER, _facts, _std

from tilelang import driver
from tilelang.backend import compile_kernel, explain, lower_gpu

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

QSCALED = USER.replace("let qt = q.load_like(o);", "let qt = ((q.load_like(o) as f32) * scale) as f16;") \
              .replace("zeros::<f32>([BM, BN])) * scale;", "zeros::<f32>([BM, BN]));")
# Q of an f32 tensor, scaled and cast before the loop: no 16-bit tile for TMA to copy (`attention_qx`)
QF32 = QSCALED.replace("q: &Tensor<f16, [?, D]>", "q: &Tensor<f32, [?, D]>") \
              .replace("let qt = ((q.load_like(o) as f32) * scale) as f16;", "let qt = (q.load_like(o) * scale) as f16;") \
              .replace("let q = randn::<f16>([200, 64], 1);", "let q = randn::<f32>([200, 64], 1);")
QLINE = "let qt = (q.load_like(o) * scale) as f16;"
BIAS = cliffs_cases._elem(cliffs_cases.ATTN, "f16")


def _user(src: str):  # type: ignore[no-untyped-def]
    return driver.compile(src, "ir").output[0]


def test_a_q_scaled_before_the_loop_takes_the_pipeline() -> None:
    """(It was refused, with a note, before `attention_qx`: the consumers now scale Q in shared memory.)"""
    assert QSCALED != USER
    gk = lower_gpu(_user(QSCALED), "sm_90a", _facts("oqkv", 2))
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []


def test_a_q_of_an_f32_tensor_is_noted_at_its_line() -> None:
    assert QF32 != QSCALED and "Tensor<f32, [?, D]>" in QF32
    gk = lower_gpu(_user(QF32), "sm_90a", _facts("oqkv", 2))
    assert explain.path_of(gk) == "mma.sync"
    (note,) = gk.notes
    assert "Hopper attention pipeline" in note.message and "(Q) is not a tile loaded as it is" in note.message
    assert "f16 [64, 64] tile loaded as it is" in note.message and "scale to the scores" in note.help[0]
    line = QF32[:note.labels[0].span.start].count("\n") + 1
    assert QLINE in QF32.splitlines()[line - 1]


def test_a_tensor_read_in_the_attention_loop_is_noted(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_LOADS", "0")  # (on, the pipeline reads the bias itself: test_attention_loads)
    main = ("fn main() { let q = zeros::<f16>([2, 256, 128]); let b = zeros::<f32>([256, 256]);"
            " let mut o = zeros::<f16>([2, 256, 128]);"
            " attn_bias::<128, 128, 128>(o.partition([1, 128, 128]), &q, &q, &q, &b, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(BIAS + main, "ir").output if x.name == "attn_bias")
    gk = lower_gpu(k, "sm_90a", {**_facts("oqkv", 3), **_facts(["bias"], 2)})
    assert explain.path_of(gk) == "mma.sync"
    assert any("a load of `bias` in the loop" in n.message for n in gk.notes)


def test_a_stages_hint_that_does_not_fit_is_noted() -> None:
    src = USER.replace("kernel fn attn", "#[hints(stages = 16)]\nkernel fn attn", 1)
    gk = lower_gpu(_user(src), "sm_90a", _facts("oqkv", 2))
    assert explain.path_of(gk) != "attention-pipeline"
    assert any("stages fit" in n.message and "asks for 16" in n.message for n in gk.notes)


def test_a_gemm_loop_with_more_work_is_noted() -> None:
    src = """
kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>,
                                                        a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]) * 2.0, pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
fn main() { let a = zeros::<f16>([64, 64]); let mut c = zeros::<f32>([64, 64]); g::<64, 64, 32>(c.partition([64, 64]), &a, &a).sync(); }
"""
    gk = lower_gpu(_user(src), "sm_90a", {n: _facts("x", 2)["x"] for n in "cab"})
    assert explain.path_of(gk) in ("sm80-pipeline", "mma.sync", "mma.sync-ring")
    assert any("Hopper GEMM pipeline" in n.message and "more than" in n.message for n in gk.notes)


def test_no_note_where_the_pipeline_takes_the_loop_at_its_tuned_blocks() -> None:
    gk = lower_gpu(_std("flash_attention", "f16", 128, 128, 128), "sm_90a", _facts("oqkv", 3))
    assert explain.path_of(gk) == "attention-pipeline" and gk.notes == ()


def test_other_blocks_get_a_note_of_what_they_cost_and_no_refusal() -> None:
    """(`attention_advice`; each shape's note: test_attention_advice.)"""
    gk = lower_gpu(_std("flash_attention", "bf16", 128, 64, 64), "sm_90a", _facts("oqkv", 3))
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == []
    (note,) = gk.notes
    assert "takes this loop, but BN = 64" in note.message and "BM = BN = 128" in note.help[0]


def test_tilec_explain_env_gives_a_compiled_kernel_its_lines(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_EXPLAIN", "1")
    ck = compile_kernel(_user(QF32), "sm_90a", _facts("oqkv", 2))
    assert ck.explain[0].startswith("tilec: kernel `attn` [BM = 64, BN = 64, D = 64] on sm_90a: ldmatrix + mma.sync")
    assert any("(Q) is not a tile loaded" in x for x in ck.explain) and any("help:" in x for x in ck.explain)
    monkeypatch.setenv("TILEC_EXPLAIN", "0")
    assert compile_kernel(_user(QF32), "sm_90a", _facts("oqkv", 2)).explain == ()


def test_tilec_emit_explain(tmp_path: Path) -> None:
    f = tmp_path / "q.tile"
    f.write_text(QF32, encoding="utf-8")
    r = invoke("emit", str(f), "--stage", "gpu", "--arch", "sm_90a", "--explain")
    assert r.exit_code == 0 and "gpu.kernel attn" in r.stdout
    assert "note: kernel `attn` [BM = 64, BN = 64, D = 64] runs on ldmatrix + mma.sync" in r.stderr
    assert "(Q) is not a tile loaded as it is" in r.stderr and "= help: " in r.stderr
    assert QLINE in r.stderr  # the line, shown
    quiet = invoke("emit", str(f), "--stage", "gpu", "--arch", "sm_90a")
    assert quiet.exit_code == 0 and "note:" not in quiet.stderr
    bad = invoke("emit", str(f), "--stage", "ir", "--explain")
    assert bad.exit_code == 2 and "`--explain` needs a GPU stage" in bad.stderr


HINTED_GEMM = """
#[hints(num_warps = 4, stages = 12)]
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<f16, [?, ?]>,
                                                             b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
fn main() {
    let a = zeros::<f16>([256, 256]);
    let mut c = zeros::<f32>([256, 256]);
    gemm::<128, 128, 64>(c.partition([128, 128]), &a, &a).sync();
}
"""


def test_the_path_says_where_it_runs_other_warps_or_stages_than_the_hints_asked() -> None:
    """hrev29: a hint given and not honoured (shared memory holds fewer stages; the Hopper pipeline's
    producer warpgroup comes on top of the consumers) said nothing; the path's line names what was asked."""
    (k,) = driver.compile(HINTED_GEMM, "ir").output
    sm80 = explain.describe(lower_gpu(k, "sm_80", {}))
    assert "5 stages, 4 warps (the hints asked `stages = 12`)" in sm80, sm80
    sm90 = explain.describe(lower_gpu(k, "sm_90a", {}))
    assert "(the hints asked `num_warps = 4` and `stages = 12`)" in sm90, sm90
    (k,) = driver.compile(HINTED_GEMM.replace("num_warps = 4, stages = 12", "num_warps = 4, stages = 3"), "ir").output
    assert "hints asked" not in explain.describe(lower_gpu(k, "sm_80", {}))
