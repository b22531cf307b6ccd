"""`passes/attention_softmax.py`: the proof that an attention loop's carried
state is an online softmax whose key range may be split and merged (the
persistent walk's last round, issue 15), and the split's meaning run in the
interpreter against the whole loop: `std::attention` (stale max, exp2, the
log-sum-exp epilogue; grouped query heads, causal with S_q != S_k, rows that
see no key, sequences not a multiple of the block, more pieces than key
blocks) and a user's own loop (natural log, exact max); and the loops and
epilogues it must refuse, each a small edit of the user's loop."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tilelang import driver
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.passes import attention_softmax as sm
from tilelang.backend.gpu.passes import lower_to_gpu
from tilelang.interp import run_kernel

sys.path.insert(0, str(Path(__file__).parent))
from test_attention_pipeline import USER, _std

LOOP = """        let mn = maximum(m, max(s, 1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + sum(p, 1).reshape([BM, 1]);
        acc = mma(p as f16, pv.load([j, 0]), acc * alpha);
        m = mn;"""
STORE = "    o.store((acc / l) as f16);"
NEG = float(np.float32(-1e30))  # the loops' `-1e30` as the f32 constant the IR holds (constants round to their type)


def _user(loop: str = LOOP, store: str = STORE, extra: str = ""):  # type: ignore[no-untyped-def]
    assert LOOP in USER and STORE in USER
    src = USER.replace(LOOP, loop).replace(STORE, store).replace("    let n = k.shape()[0];\n",
                                                                 "    let n = k.shape()[0];\n" + extra)
    return driver.compile(src, "ir").output[0]


def test_std_and_user_loops_are_proved() -> None:
    """std's prefill kernels (stale max, exp2, fma with the folded scale) and the user's loop (natural log,
    exact max), in the Tile IR and in the GPU IR the attention pass sees."""
    for name, dt, bm, d in (("flash_attention", "f16", 128, 64), ("flash_attention_lse", "bf16", 64, 128)):
        k = _std(name, dt, bm, 64, d)
        want = sm.Softmax(m=2, row_sum=0, acc=1, base2=True, init=NEG, monotone=True)
        assert sm.state(k) == want
        facts = {n: TensorFacts(True, (False, False, True)) for n in "oqkv"}
        assert sm.state(lower_to_gpu(k, "sm_90a", facts, until="block_order")) == want
    assert sm.state(_user()) == sm.Softmax(m=2, row_sum=0, acc=1, base2=False, init=NEG, monotone=True)


REFUSED = {
    "l_without_alpha": {"loop": LOOP.replace("l * alpha + sum", "l + sum")},
    "acc_scaled_twice": {"loop": LOOP.replace("acc * alpha)", "acc * alpha * alpha)")},
    "p_from_the_old_max": {"loop": LOOP.replace("exp(s - mn)", "exp(s - m)")},
    "scores_read_the_state": {"loop": LOOP.replace("exp(s - mn)", "exp(s + m - mn)")},
    "a_fourth_carried_value": {"extra": "    let mut c = zeros::<f32>([BM, 1]);\n", "loop": LOOP + "\n        c = c + 1.0;",
                               "store": "    o.store((acc / l + c) as f16);"},
    "m_stored": {"store": "    o.store((acc / l + m) as f16);"},
    "acc_stored_unnormalised": {"store": "    o.store(acc as f16);"},
    "l_stored": {"store": "    o.store((acc * 0.0 + l) as f16);"},
    "m_against_another_constant": {"store": "    o.store(where(m > 0.0, acc / l, 0.0) as f16);"},
    "log2_of_a_natural_sum": {"store": "    o.store((acc / l + (m + log2(l))) as f16);"},
    "seen_test_without_a_max_form": {"loop": LOOP.replace("maximum(m, max(s, 1).reshape([BM, 1]))",
                                                          "max(s, 1).reshape([BM, 1])"),
                                     "store": "    o.store(where(m > -1.0e30, acc / l, 0.0) as f16);"},
    "rows_mixed": {"store": "    o.store((acc / l.reshape([1, BM]).broadcast([BM, BM]).sum(1).reshape([BM, 1])) as f16);"},
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(case: str) -> None:
    """Each edit breaks the invariant the merge relies on (or makes the epilogue see the shift): no proof,
    and `split` refuses."""
    k = _user(**REFUSED[case])
    assert sm.state(k) is None
    with pytest.raises(ValueError, match="online softmax"):
        sm.split(k, 2)


def test_accepted_edits() -> None:
    """What the proof still takes: m' not a max (any m' keeps the invariant) with an epilogue blind to m, the
    seen-a-key test against m's initial constant with a max form, the natural log-sum-exp, scaled sums."""
    ok = [_user(loop=LOOP.replace("maximum(m, max(s, 1).reshape([BM, 1]))", "max(s, 1).reshape([BM, 1])")),
          _user(store="    o.store(where(m > -1.0e30, acc / l, 0.0) as f16);"),
          _user(store="    o.store((acc / l + (m + log(l)) * 0.0) as f16);"),
          _user(store="    o.store(((acc * 2.0 + acc) / (l * 3.0)) as f16);")]
    got = [sm.state(k) for k in ok]
    assert all(s is not None for s in got)
    assert [s.monotone for s in got] == [False, True, True, True]  # type: ignore[union-attr]


def _run(k, args: list, grid: tuple[int, ...]) -> list:  # type: ignore[no-untyped-def, type-arg]
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(k, grid, out)
    return out


@pytest.mark.parametrize(("bm", "bn", "bh", "hkv", "sq", "sk", "causal", "pieces"), [
    (16, 16, 2, 2, 40, 70, False, 2),     # keys not a multiple of the block
    (16, 16, 4, 2, 50, 37, True, 3),      # GQA, causal with S_q > S_k: rows that see no key
    (16, 8, 2, 1, 24, 61, True, 5),       # causal with S_q < S_k, GQA 2:1
    (16, 16, 2, 2, 20, 30, False, 4),     # more pieces than key blocks: empty pieces
])
def test_std_split_matches_the_whole_loop(bm: int, bn: int, bh: int, hkv: int, sq: int, sk: int, causal: bool,
                                          pieces: int) -> None:
    """`flash_attention_lse` split into pieces and merged against the whole loop, in the interpreter: the
    same O (to f16 rounding) and log-sum-exp, zeros and -inf exactly where a row sees no key; the
    scores scaled so that the stale max moves after a piece's first block."""
    k = _std("flash_attention_lse", "f16", bm, bn, 32)
    rng = np.random.default_rng(bm + sq + sk + pieces)
    q = (rng.standard_normal((bh, sq, 32)) * 3).astype(np.float16)
    kk, v = (rng.standard_normal((hkv, sk, 32)).astype(np.float16) for _ in range(2))
    o = np.full((bh, sq, 32), np.nan, np.float16)
    lse = np.full((bh, sq), np.nan, np.float32)
    args = [o, lse, q, kk, v, np.float32(0.5), causal]
    grid = (bh, -(-sq // bm))
    whole = _run(k, args, grid)
    part = _run(sm.split(k, pieces), args, grid)
    assert not np.isnan(whole[0]).any() and not np.isnan(part[0]).any()
    seen = whole[1] > -1e29
    if causal and sq > sk:
        assert not seen.all()
    np.testing.assert_array_equal(part[1][~seen], whole[1][~seen])
    np.testing.assert_array_equal(part[0][~seen], 0)
    np.testing.assert_allclose(part[0].astype(np.float32), whole[0].astype(np.float32), rtol=0, atol=4e-3)
    np.testing.assert_allclose(part[1][seen], whole[1][seen], rtol=1e-5, atol=1e-5)
    # a reference in f64: the whole loop is attention, so the split is too
    ref = np.einsum("hqk,hkd->hqd", *_softmax(q, kk, v, 0.5, causal, bh // hkv))
    np.testing.assert_allclose(part[0].astype(np.float64), np.nan_to_num(ref), atol=1e-2)


def _softmax(q, k, v, scale, causal, group):  # type: ignore[no-untyped-def]
    kk = np.repeat(k.astype(np.float64), group, 0)
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), kk) * scale
    sq, sk = s.shape[1:]
    if causal:
        s = np.where(np.arange(sk)[None, None] <= np.arange(sq)[None, :, None] + sk - sq, s, -np.inf)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(2, keepdims=True))
        p = p / p.sum(2, keepdims=True)
    return np.nan_to_num(p), np.repeat(v.astype(np.float64), group, 0)


@pytest.mark.parametrize("loop", ["exact", "no_max"])
def test_user_split_matches_the_whole_loop(loop: str) -> None:
    """The user's natural-log loop, and the same with m' = this block's max only (a valid online softmax the
    merge still takes), split in 3 over 70 keys of 16-key blocks."""
    body = LOOP if loop == "exact" else LOOP.replace("maximum(m, max(s, 1).reshape([BM, 1]))",
                                                     "max(s, 1).reshape([BM, 1])")
    src = USER.replace(LOOP, body).replace("attn::<64, 64, 64>", "attn::<16, 16, 64>") \
        .replace("o.partition([64, 64])", "o.partition([16, 64])")
    k = driver.compile(src, "ir").output[0]
    rng = np.random.default_rng(7)
    q, kk, v = (rng.standard_normal((70, 64)).astype(np.float16) for _ in range(3))
    o = np.zeros((70, 64), np.float16)
    args = [o, q, kk, v, np.float32(0.125)]
    whole = _run(k, args, (5, 1))
    part = _run(sm.split(k, 3), args, (5, 1))
    np.testing.assert_allclose(part[0].astype(np.float32), whole[0].astype(np.float32), atol=4e-3)
    p, vv = _softmax(q[None], kk[None], v[None], 0.125, False, 1)
    np.testing.assert_allclose(part[0].astype(np.float64), (p @ vv)[0], atol=1e-2)
