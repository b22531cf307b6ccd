"""Round 31 of the hostile review (hrev31, 2026-12-07): the standard library's entry points given numbers and
shapes their documentation rules out, each a silent wrong answer before (masked loads kept memory safe, and the
launch ran): now refused at the launch (E0513, a `#[requires(..)]` naming the fact), in Tile and from Python.

- s04 `std::attention::decode_fused` with NS (the shares its merge reads) below the splits of the launch: the merge
  read the first NS shares only (an output off by 0.5); NC (the shares a step) not dividing NS left shares out the
  same way, and NC past NS made the merge zero steps long (an output of NaN).
- `std::attention::decode_combine` given an output whose column tiles do not cover the partial outputs' D (the
  columns past them came out zeros), an output of more than one row tile a KV head (each a copy of the first), or
  log-sum-exps whose rows are not a whole number of splits of G (the shares read across the splits).
"""

from __future__ import annotations

import numpy as np
import pytest
from userprog import wrong_suite

import tilelang
from tilelang import partition as P

Tensors = dict[str, np.ndarray]

FIXES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "s04_fused_decode_merging_fewer_shares": (
        "pass arguments that meet the requirement",
        [("decode_fused::<f16, 4, 16, 16, 2, 2>", "decode_fused::<f16, 4, 16, 16, 4, 2>")]),
}


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, n: int, scale: float) -> np.ndarray:
    s = np.einsum("hgd,hsd->hgs", q.astype(np.float64), k[:, :n].astype(np.float64)) * scale
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("hgs,hsd->hgd", p / p.sum(-1, keepdims=True), v[:, :n].astype(np.float64))


def _s04(t: Tensors, out: str) -> None:
    want = _attention(t["q"], t["k"], t["v"], 64, 0.25)
    np.testing.assert_allclose(t["o"].astype(np.float64), want, atol=4e-3)
    assert abs(float(out) - want.sum()) < 0.1, (out, want.sum())


CHECKS = {"s04_fused_decode_merging_fewer_shares": _s04}

(test_every_mistake_has_a_fix, test_the_help_leads_to_a_working_program,
 test_the_editor_shows_the_same_first_error) = wrong_suite("s04_*.tile", FIXES, CHECKS)

H, G, D, S = 2, 4, 16, 128


@pytest.fixture(scope="module")
def att() -> tilelang.Module:
    return tilelang.compile("use std::attention::{decode_fused, decode_split, decode_combine};\n")


def _qkv() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.random.default_rng(31)
    return tuple(r.standard_normal(s).astype(np.float16) for s in ((H, G, D), (H, S, D), (H, S, D)))  # type: ignore[return-value]


@pytest.mark.parametrize(("splits", "ns", "nc", "says"), [
    (4, 2, 2, "more splits than NS"), (8, 8, 3, "NC must divide NS"), (2, 4, 8, "NC must divide NS"),
    (2, 4, 0, "NC must divide NS")])
def test_decode_fused_refuses_a_merge_that_leaves_shares_out(att: tilelang.Module, splits: int, ns: int, nc: int,
                                                             says: str) -> None:
    """Each ran and gave a wrong output (off by 0.5 and 0.24 at most, NaN for NC past NS); the right NS runs."""
    q, k, v = _qkv()
    op = np.zeros((H, splits * G, D), np.float32)
    lp = np.zeros((H, splits * G), np.float32)
    o = np.zeros((H, G, D), np.float16)
    with pytest.raises(tilelang.TileError) as info:
        att.decode_fused[{"BN": 16, "NS": ns, "NC": nc}](P(op, [1, G, D]), P(lp, [1, G]), P(o, [1, G, D]),
                                                         q, k, v, S, 0.25).sync()
    assert info.value.code == "E0513" and says in str(info.value), str(info.value)
    assert not o.any()   # refused before it started
    att.decode_fused[{"BN": 16, "NS": 8, "NC": 2}](P(op, [1, G, D]), P(lp, [1, G]), P(o, [1, G, D]),
                                                   q, k, v, S, 0.25).sync()
    np.testing.assert_allclose(o.astype(np.float64), _attention(q, k, v, S, 0.25), atol=4e-3)


def test_decode_combine_refuses_an_output_that_does_not_match_the_partials(att: tilelang.Module) -> None:
    """An output twice the partials' width (its second half came out zeros), of two row tiles a KV head (the
    second a copy of the first) and log-sum-exps of 5 columns for G = 4 each ran; the matching call runs."""
    q, k, v = _qkv()
    op = np.zeros((H, 2 * G, D), np.float32)
    lp = np.zeros((H, 2 * G), np.float32)
    att.decode_split[{"BN": 16}](P(op, [1, G, D]), P(lp, [1, G]), q, k, v, S, 0.25).sync()
    bad = [(np.zeros((H, G, 2 * D), np.float16), op, lp, "o must have o_part's shape"),
           (np.zeros((H, 2 * G, D), np.float16), op, lp, "o must have o_part's shape"),
           (np.zeros((H, G, D), np.float16), op[:, :5].copy(), lp[:, :5].copy(), "whole number of splits")]
    for o, parts, lse, says in bad:
        with pytest.raises(tilelang.TileError) as info:
            att.decode_combine[{"NS": 2}](P(o, [1, G, D]), parts, lse).sync()
        assert info.value.code == "E0513" and says in str(info.value), str(info.value)
    o = np.zeros((H, G, D), np.float16)
    att.decode_combine[{"NS": 2}](P(o, [1, G, D // 2]), op, lp).sync()   # DC = D / 2: two column tiles
    np.testing.assert_allclose(o.astype(np.float64), _attention(q, k, v, S, 0.25), atol=4e-3)


_PICKS = ("use std::llm::sampling::{argmax_step, argmax_fold};\n"
          "fn main() {\n    let bmax = arange::<f32>(40);\n    let barg = arange::<i32>(NARG) * 10 + 3;\n"
          "    let mut tok = zeros::<i32>([1]);\n    let mut pos = zeros::<i32>([1]);\n"
          "    let mut hist = zeros::<i32>([4]);\n"
          "    PICK::<16, 4>(tok.partition([1]), pos.partition([1]), hist.partition([4]), &bmax, &barg).sync();\n"
          "    print(tok);\n}\n")


@pytest.mark.parametrize("pick", ["argmax_step", "argmax_fold"])
def test_a_greedy_pick_refuses_tokens_fewer_than_maxima(pick: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`std::llm`'s greedy picks given 30 tokens for 40 block maxima chose token 0 (the maximum's token a load
    past `barg`'s end): E0513, as `argmax_wide` said; 40 tokens choose the last block's, 393."""
    from userprog import run_program

    from tilelang import driver

    prog = tmp_path / "pick.tile"
    prog.write_text(_PICKS.replace("NARG", "30").replace("PICK", pick), encoding="utf-8")
    errs = [d for d in driver.check(prog).diagnostics if d.severity.value == "error"]
    assert [d.code for d in errs] == ["E0513"] and "each block maximum needs its token" in errs[0].message
    prog.write_text(_PICKS.replace("NARG", "40").replace("PICK", pick), encoding="utf-8")
    assert run_program(prog)[0]["tok"].tolist() == [393]


def test_the_top_p_chain_refuses_probabilities_a_chunk_short() -> None:
    """`sample_prep` given an `ex` of 256 for 300 logits (its grid one chunk short) ran, and the chain never chose
    a token of the last chunk (130 where the logits peak at 290): E0513 names the fact; so do the later launches
    of the chain given tensors without a row a chunk."""
    m = tilelang.compile("use std::llm::sampling::{sample_prep, nucleus_round, sample_pick};\n")
    logits = np.zeros(300, np.float32)
    bmax = np.zeros(3, np.float32)
    for ex, zpart, says in ((np.zeros(256, np.float32), np.zeros(2, np.float32), "ex must have logits' length"),
                            (np.zeros(300, np.float32), np.zeros(2, np.float32), "partition grids disagree")):
        with pytest.raises(tilelang.TileError) as info:
            m.sample_prep[128](P(ex, [128]), P(zpart, [1]), logits, bmax, 1.0).sync()
        assert says in str(info.value), str(info.value)
    ex, zpart = np.zeros(300, np.float32), np.zeros(2, np.float32)
    mass, band = np.zeros((2, 8), np.float32), np.zeros((2, 2), np.float32)
    with pytest.raises(tilelang.TileError) as info:
        m.nucleus_round[128, 8, 8](P(mass, [1, 8]), P(band, [1, 2]), ex, zpart, mass.copy(), band.copy(), 0.5,
                                   True).sync()
    assert info.value.code == "E0513" and "a block and a zpart sum for each chunk" in str(info.value)
    tok, pos, hist = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(4, np.int32)
    with pytest.raises(tilelang.TileError) as info:
        m.sample_pick[128, 8, 4](P(tok, [1]), P(pos, [1]), P(hist, [4]), ex, np.zeros(2, np.float32), band, 3).sync()
    assert info.value.code == "E0513" and "kept must have a sum for each chunk" in str(info.value)


def test_an_embedding_lookup_refuses_an_output_of_another_shape() -> None:
    """`embed` given an `x` half the table's width copied half the row; `embed_rows` given fewer rows than tokens
    dropped the last tokens: E0513. A token past the vocabulary or negative reads a row of zeros (documented), on
    both kernels."""
    m = tilelang.compile("use std::llm::gemv::embed;\nuse std::llm::prefill::embed_rows;\n")
    table = np.arange(5 * 32, dtype=np.float32).reshape(5, 32) / 8   # bf16 values, in float32 (the API's bf16)
    with pytest.raises(tilelang.TileError) as info:
        m.embed[16](P(np.zeros(16, np.float32), [16]), table, np.array([2], np.int32)).sync()
    assert info.value.code == "E0513" and "x must have the table's width" in str(info.value)
    with pytest.raises(tilelang.TileError) as info:
        m.embed_rows[16](P(np.zeros((2, 32), np.float32), [1, 16]), table, np.array([1, 2, 3], np.int32)).sync()
    assert info.value.code == "E0513" and "a row for each token of toks" in str(info.value)
    want = table
    x = np.full(32, 7, np.float32)
    m.embed[16](P(x, [16]), table, np.array([5], np.int32)).sync()
    assert not x.any()
    xs = np.full((3, 32), 7, np.float32)
    m.embed_rows[16](P(xs, [1, 16]), table, np.array([4, -1, 2**31 - 1], np.int32)).sync()
    np.testing.assert_array_equal(xs, np.stack([want[4], np.zeros(32), np.zeros(32)]))


@pytest.mark.parametrize(("s", "p0", "m", "says"), [
    (80, 64, 40, "must be within the cache and q"), (128, 8, 20, "p0 must be a multiple of BQ"),
    (128, -16, 20, "p0 must be a multiple of BQ"), (128, 32, -1, "must be within the cache and q")])
def test_prefill_attention_refuses_a_chunk_past_the_cache(s: int, p0: int, m: int, says: str) -> None:
    """`std::llm::prefill::attn_prefill` (p0 and m launch arguments) given a chunk that passes the cache (keys past
    it read as zeros and attended to) or a p0 that is not a multiple of BQ (its queries read from the tile before:
    an output off by 1.0) ran: E0513; a chunk within the cache at a multiple of BQ runs (NumPy's causal attention)."""
    m_ = tilelang.compile("use std::llm::prefill::attn_prefill;\n")
    rng = np.random.default_rng(9)
    q, kc, vc = (rng.standard_normal(sh).astype(np.float32) for sh in ((2, s, 16), (1, s, 16), (1, s, 16)))
    out = np.zeros((max(m, 1), 2, 16), np.float32)
    with pytest.raises(tilelang.TileError) as info:
        m_.attn_prefill[16, 16, 16, 2](P(out, [16, 1, 16]), q, kc, vc, p0, m).sync()
    assert info.value.code == "E0513" and says in str(info.value), str(info.value)
    p0, m = 32, 40
    out = np.zeros((m, 2, 16), np.float32)
    m_.attn_prefill[16, 16, 16, 2](P(out, [16, 1, 16]), q, kc, vc, p0, m).sync()
    for h in range(2):
        sc = q[h, p0:p0 + m].astype(np.float64) @ kc[0, :p0 + m].T / 4.0
        sc = np.where(np.arange(p0 + m)[None, :] <= p0 + np.arange(m)[:, None], sc, -np.inf)
        pr = np.exp(sc - sc.max(1, keepdims=True))
        np.testing.assert_allclose(out[:, h], (pr / pr.sum(1, keepdims=True)) @ vc[0, :p0 + m], atol=2e-2)


@pytest.mark.parametrize("pre", [False, True])
def test_a_cache_append_at_a_negative_position_writes_nothing(pre: bool) -> None:
    """`kv_append` / `kv_append_pre` at a device position of -1 .. -(CH - 1) wrote the new key and value into the
    cache's row 0 (`-1 / CH` is 0, the row clamped): a valid row overwritten. Now a position outside the cache
    writes nothing; row 5 is still written at position 5."""
    m = tilelang.compile("use std::llm::attention::{kv_append, kv_append_pre};\n")
    qkv = np.ones((3, 2, 4), np.float32)
    for pos, rows in ((-1, []), (-3, []), (5, [5]), (8, []), (2**31 - 1, []), (-2**31, [])):
        kc, vc = np.full((1, 8, 8), 7, np.float32), np.full((1, 8, 8), 7, np.float32)
        at = np.array([pos], np.int32)
        if pre:
            m.kv_append_pre[1, 4, 8, 2](P(kc, [1, 4, 8]), P(vc, [1, 4, 8]), qkv, np.ones((3, 1, 2), np.float32), at,
                                        1, 1e-6).sync()
        else:
            m.kv_append[1, 4, 8](P(kc, [1, 4, 8]), P(vc, [1, 4, 8]), qkv, np.ones((1, 8), np.float32),
                                 np.ones((8, 4), np.float32), np.zeros((8, 4), np.float32), at, 1, 1e-6).sync()
        assert [i for i in range(8) if (kc[0, i] != 7).any() or (vc[0, i] != 7).any()] == rows, pos
