"""The attention pipeline with Q computed from its loaded tile before the loop (`passes/attention_qx.py`):
the consumers read Q's tile from shared memory once it is in, run the program's element-wise ops on it in the
accumulator layout and write it back before the first S (before, such a loop took the generic path:
`benchmarks/cliffs.py`'s `attn_qscale`, 0.02x SDPA on the H100). Run in llsim at sm_90a against the
interpreter: Q scaled (cliffs.py's own kernel), a RoPE-like `q * cos + q_rot * sin` of loaded tiles with
a per-row position factor and a per-column weight, at D = 64 (the overlapped loop, split or not) and D = 128
(the rotated loop, and the short keys' chained variant), BM = 64, 128 and 192, edges in queries and keys;
llsim refuses the write-back without its fence; the loops the pass still refuses say why."""

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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cliffs_cases  # noqa: E402

SRC = cliffs_cases._elem(cliffs_cases.ATTN, "f16")

ROPE = """
kernel fn attn_rope<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f16, [1, BM, D]>,
        q: &Tensor<f16, [?, ?, D]>, qr: &Tensor<f16, [?, ?, D]>, cos: &Tensor<f32, [?, D]>,
        sin: &Tensor<f32, [?, D]>, w: &Tensor<f32, [D]>, k: &Tensor<f16, [?, ?, D]>, v: &Tensor<f16, [?, ?, D]>,
        scale: f32) {
    let h = block_id(0);
    let i = block_id(1);
    let c = cos.partition([BM, D]).load([i, 0]);
    let s = sin.partition([BM, D]).load([i, 0]);
    let wt = w.partition([D]).load([0]).reshape([1, D]);
    let pos = (arange::<i32>(BM).reshape([BM, 1]) + i * BM) as f32;
    let q0 = q.partition([1, BM, D]).load([h, i, 0]).reshape([BM, D]) as f32;
    let q1 = qr.partition([1, BM, D]).load([h, i, 0]).reshape([BM, D]) as f32;
    let qt = ((q0 * c + q1 * s) * wt * (1.0 + pos * 0.001) * scale) as f16;
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let sc = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN]));
        let mn = maximum(m, sc.max(1).reshape([BM, 1]));
        let p = exp(sc - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as f16);
}
"""


def _main(name: str, bm: int, bn: int, d: int) -> str:
    if name == "attn_rope":
        return (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let c = zeros::<f32>([256, {d}]);"
                f" let w = zeros::<f32>([{d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
                f" attn_rope::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &c, &c, &w, &q, &q, 0.1)"
                ".sync(); }\n")
    return (f"fn main() {{ let q = zeros::<f16>([2, 256, {d}]); let mut o = zeros::<f16>([2, 256, {d}]);"
            f" {name}::<{bm}, {bn}, {d}>(o.partition([1, {bm}, {d}]), &q, &q, &q, 0.1).sync(); }}\n")


def _kernel(src: str, name: str, bm: int, bn: int, d: int):  # type: ignore[no-untyped-def]
    return next(k for k in driver.compile(src + _main(name, bm, bn, d), "ir").output if k.name == name)


def _facts(names: str, bh: int, s: int, d: int) -> dict[str, TensorFacts]:
    f = {n: TensorFacts(True, (bh % 16 == 0, s % 16 == 0, True)) for n in names}
    return {**f, "cos": TensorFacts(True, (s % 16 == 0, True)), "sin": TensorFacts(True, (s % 16 == 0, True)),
            "w": TensorFacts(True, (True,))}


def _qscale_args(rng: np.random.Generator, bh: int, s: int, d: int) -> list[object]:
    q, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(3))
    return [q, kk, v, np.float32(d ** -0.5)]


def _rope_args(rng: np.random.Generator, bh: int, s: int, d: int) -> list[object]:
    q, qr, kk, v = (rng.standard_normal((bh, s, d)).astype(np.float16) for _ in range(4))
    ang = np.arange(s)[:, None] * (1e-2 * np.arange(1, d + 1))[None, :]
    w = (0.5 + rng.random(d)).astype(np.float32)
    return [q, qr, np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32), w, kk, v, np.float32(d ** -0.5)]


def _run(src: str, name: str, bm: int, bn: int, d: int, s: int, ctas: int, facts=None, seed: int = 0) -> None:  # type: ignore[no-untyped-def]
    bh = 2
    k = _kernel(src, name, bm, bn, d)
    facts = facts or _facts("oqkv" + ("r" if name == "attn_rope" else ""), bh, s, d)
    if name == "attn_rope":
        facts = {**facts, "qr": facts["q"]}
    gk = lower_gpu(k, "sm_90a", facts)
    assert explain.path_of(gk) == "attention-pipeline" and explain.refusals(gk) == [], gk.notes
    rng = np.random.default_rng(bm + bn + d + s + seed)
    args = (_rope_args if name == "attn_rope" else _qscale_args)(rng, bh, s, d)
    o = np.full((bh, s, d), np.nan, np.float16)
    SimDevice("sm_90a").run(k, (ctas, 1), [o, *args], facts)
    want = np.zeros((bh, s, d), np.float16)
    getattr(tilelang.compile(src), name)[bm, bn, d](tilelang.partition(want, [1, bm, d]), *args).sync()
    np.testing.assert_allclose(o.astype(np.float64), want.astype(np.float64), atol=2e-3, rtol=1e-2)


# (192-3-0 heavy, htier1: `TILEC_ATTN_SPLIT=0` is not the default at D = 64; 150-2-1, the default split kernel,
# computes Q in its whole tiles' walk and in the pieces, keys and queries past the edge)
@pytest.mark.parametrize(("bm", "bn", "d", "s", "ctas", "split"), [
    (64, 64, 64, 150, 2, "1"), pytest.param(64, 64, 64, 192, 3, "0", marks=pytest.mark.heavy),
    pytest.param(128, 128, 128, 200, 1, "1", marks=pytest.mark.heavy),
    pytest.param(128, 64, 64, 256, 2, "1", marks=pytest.mark.heavy),
    pytest.param(192, 128, 64, 200, 1, "1", marks=pytest.mark.heavy)])
def test_q_scaled_before_the_loop_in_the_simulator(bm: int, bn: int, d: int, s: int, ctas: int, split: str,
                                                   monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_ATTN_SPLIT", split)
    _run(SRC, "attn_qscale", bm, bn, d, s, ctas)


@pytest.mark.parametrize(("bm", "bn", "d", "s", "ctas"), [
    (64, 64, 64, 150, 2),
    pytest.param(128, 128, 128, 200, 1, marks=pytest.mark.heavy),
    pytest.param(128, 64, 128, 130, 2, marks=pytest.mark.heavy)])
def test_a_rope_like_q_of_loaded_tiles_in_the_simulator(bm: int, bn: int, d: int, s: int, ctas: int) -> None:
    _run(ROPE, "attn_rope", bm, bn, d, s, ctas)


def test_the_short_keys_variant_computes_q_too() -> None:
    """The variant a launch of short keys compiles (`facts.Short`, `attention_chain`: chained tiles, the
    previous tile's last P V pending while this tile's Q is computed)."""
    bm, bn, d, s = 128, 128, 128, 200
    k = _kernel(SRC, "attn_qscale", bm, bn, d)
    base = _facts("oqkv", 2, s, d)
    short = lower_gpu(k, "sm_90a", base).short
    assert short is not None
    facts = short.refine(base, (2, s, d))
    assert facts is not None
    _run(SRC, "attn_qscale", bm, bn, d, s, 2, facts)


def test_the_consumers_compute_q_once_in() -> None:
    """The GPU IR: Q's wait, then its tile read, the program's ops, the write back, then the first S."""
    from tilelang.backend.gpu import nodes as g

    gk = lower_gpu(_kernel(SRC, "attn_qscale", 64, 64, 64), "sm_90a", _facts("oqkv", 2, 192, 64))
    role = next(op for op in g.walk(gk.body) if isinstance(op, g.WarpSpecialize)).roles[0]
    ops = list(g.walk(role.body))
    kinds = [type(op).__name__ for op in ops]
    reads = [i for i, x in enumerate(kinds) if x == "SmemTileRead"]
    assert len(reads) == 2  # the split walk's tile and its copy without the split (`attention_split.whole_copy`)
    for read in reads:
        write = kinds.index("SmemTileWrite", read)
        wait = max(i for i, op in enumerate(ops[:read]) if isinstance(op, g.BarrierWait))
        assert ops[wait].bar.hint == "qbar" and write < kinds.index("Wgmma", read)  # type: ignore[attr-defined]
        assert "Cast" in kinds[read:write] and "Wgmma" not in kinds[wait:write]


def test_the_simulator_refuses_the_write_back_without_its_fence(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from llsim import Race

    from tilelang.backend.codegen import smem_tile

    orig = smem_tile.write

    def unfenced(em, op):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(em, "proxy_fence", lambda: None)
        orig(em, op)

    monkeypatch.setattr(smem_tile, "write", unfenced)
    monkeypatch.setenv("LLSIM_MEMO", "0")
    with pytest.raises(Race, match=r"wgmma reads .* no fence\.proxy\.async"):
        _run(SRC, "attn_qscale", 64, 64, 64, 150, 2, seed=1)


REFUSED = """
kernel fn q_f32<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<f16, [1, BM, D]>,
        q: &Tensor<f32, [?, ?, D]>, k: &Tensor<f16, [?, ?, D]>, v: &Tensor<f16, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let qt = (q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]) * scale) as f16;
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN]));
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as f16);
}
"""


def test_a_q_of_an_f32_tensor_is_refused_and_says_why() -> None:
    """No f16/bf16 tile for TMA to copy: the generic path, and the note names what the pipeline needs."""
    main = ("fn main() { let q = zeros::<f32>([2, 256, 64]); let kv = zeros::<f16>([2, 256, 64]);"
            " let mut o = zeros::<f16>([2, 256, 64]);"
            " q_f32::<64, 64, 64>(o.partition([1, 64, 64]), &q, &kv, &kv, 0.1).sync(); }\n")
    k = next(x for x in driver.compile(REFUSED + main, "ir").output if x.name == "q_f32")
    gk = lower_gpu(k, "sm_90a", _facts("oqkv", 2, 192, 64))
    assert explain.path_of(gk) != "attention-pipeline"
    msg = " ".join(n.message for n in gk.notes)
    assert "nor computed element-wise from one before the loop" in msg and "f16 [64, 64] tile loaded" in msg
