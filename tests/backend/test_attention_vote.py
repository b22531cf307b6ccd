"""`TILEC_ATTN_EARLY_VOTE` (`passes/attention_rotated.py`): in the rotated
loop the O rescale `acc * alpha` is skipped where alpha is 1 in every row of
the warp, decided by one vote (`g.WarpAny`) before the spin on the next
stage, so that alpha's exp2s run before it and not, as ptxas 13.0 placed the
code generator's vote at the multiply, after the wait for the pending P V.
The GPU IR's form; the simulator against NumPy with maxima that move in later
key blocks (the rescale runs) and that do not (it is skipped), both settings."""

from __future__ import annotations

import numpy as np
import pytest
from test_attention_pipeline import _facts, _reference, _schedule, _std, whole_tiles  # noqa: F401

from tilelang.backend import lower_gpu
from tilelang.backend.gpu.printer import print_gpu_kernel


def _loop(text: str) -> str:
    """The consumers' key loop: from its first S issue to the loop's end."""
    body = text.split("role consumer")[1]
    return body[body.index("wgmma.rs"):]


@pytest.mark.parametrize(("vote", "d"), [("1", 64), ("0", 64), (None, 64), (None, 128), ("1", 128)])
@pytest.mark.usefixtures("whole_tiles")
def test_the_vote_comes_before_the_spin_and_the_wait(vote: str | None, d: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """On ("1"; unset: "auto", where the value rows are 64 wide) the vote before the spin, the rescale in a
    branch on it; off, none."""
    _schedule(monkeypatch, "overlap+rotate")
    if vote is None:
        monkeypatch.delenv("TILEC_ATTN_EARLY_VOTE", raising=False)
    else:
        monkeypatch.setenv("TILEC_ATTN_EARLY_VOTE", vote)
    loop = _loop(print_gpu_kernel(lower_gpu(_std("flash_attention", "f16", 128, 128, d), "sm_90a", _facts("oqkv", 3))))
    if vote == "0" or (vote is None and d == 128):
        assert "warp_any" not in loop
        return
    i_any, i_wait = loop.index("warp_any"), loop.index("pending 0")
    assert loop.count("warp_any") == 1 and i_any < i_wait
    assert loop.rfind("mbarrier.wait", 0, i_wait) > i_any  # the spin on the next stage after the vote
    assert " = if %moved" in loop[i_wait:]  # the rescale in a branch on it


@pytest.mark.parametrize(("vote", "causal", "sq", "sk"),
                         # (heavy: vote "0" without the mask, the kernel of the causal "0" case; htier1: the causal "0"
                         # case too, "0" at D = 64 being opt-in (the tiers, tests/README.md): the loop without the vote
                         # is D = 128's default, simulated in test_attention_boundary's causal_pairs)
                         [("1", False, 100, 300), pytest.param("0", False, 100, 300, marks=pytest.mark.heavy),
                          ("1", True, 130, 200), pytest.param("0", True, 130, 200, marks=pytest.mark.heavy)])
def test_rescales_where_a_later_block_moves_the_max(vote: str, causal: bool, sq: int, sk: int,  # type: ignore[no-untyped-def]
                                                    monkeypatch) -> None:
    """Keys 150.. score far higher than the earlier ones for the first query rows (alpha < 1 in a
    later block for them, 1 for the other rows of their warp's neighbours), and not at all for the rest."""
    import llsim
    from llsim import SimDevice

    _schedule(monkeypatch, "overlap+rotate")
    monkeypatch.setenv("TILEC_ATTN_EARLY_VOTE", vote)
    monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")
    d, bh = 64, 1
    k = _std("flash_attention_lse", "f16", 64, 64, d)
    facts = {**_facts("oqkv", 3), **_facts(["lse"], 2)}
    rng = np.random.default_rng(5)
    q = rng.standard_normal((bh, sq, d)).astype(np.float16)
    kk, v = (rng.standard_normal((bh, sk, d)).astype(np.float16) for _ in range(2))
    q[:, :20] = np.abs(q[:, :20])
    kk[:, 150:] = np.abs(kk[:, 150:]) * 4  # rows 0..19 see their max rise by far in key block 2 (keys 128..191)
    o = np.full((bh, sq, d), np.nan, np.float16)
    lse = np.full((bh, sq), np.nan, np.float32)
    SimDevice("sm_90a").run(k, (2, 1), [o, lse, q, kk, v, np.float32(0.125), causal], facts)
    for b in range(bh):
        ref, lref = _reference(q[b], kk[b], v[b], 0.125, causal)
        seen = np.isfinite(lref)
        np.testing.assert_allclose(o[b][seen].astype(np.float64), ref[seen], atol=3e-3, rtol=1e-2)
        np.testing.assert_allclose(lse[b][seen], lref[seen], atol=1e-3, rtol=1e-4)
