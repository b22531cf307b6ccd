"""The decode step's split merge as `std::attention::decode_combine`
(`Plan.mg` 1: a block a KV head's G query rows, the log-sum-exps as an [NS, G]
tile from 16 shares, [NS, G, 1] below) instead of `combine_splits`: the
engine's step against the NumPy reference at both forms' share counts, the
kernels it launches, and the plans it refuses."""

from __future__ import annotations

import dataclasses

import pytest
from engine import TileQwen3
from model import random_weights
from plan import plan_for
from reference import NumpyQwen3
from test_engine import TINY, _close, _tokens


@pytest.mark.parametrize(("ns", "dc"), [(2, 0), (16, 8)])
def test_std_merge_step_agrees(ns: int, dc: int) -> None:
    # 2 shares: the [NS, G, 1] weights, one block a KV head; 16 shares: the
    # [NS, G] weights, chunks of 8 of the head's 16 columns; 21 steps
    # teacher-forced against NumPy (past the 16 shares' first keys)
    w = random_weights(TINY, seed=0)
    plan = dataclasses.replace(plan_for(TINY, 64, None), mg=1, ns=ns, dc=dc)
    eng = TileQwen3(TINY, w, max_seq=64, plan=plan)
    names = [op.kernel.__name__ for op in eng.ops]
    assert names.count("decode_combine") == TINY.num_hidden_layers
    assert names.count("combine_splits") == 0
    ref = NumpyQwen3(TINY, w, max_seq=64)
    for t in _tokens(21, TINY.vocab_size, seed=5):
        _close(eng.feed(t), ref.step(t))


@pytest.mark.parametrize("fields", [{"mg": 2}, {"mg": 1, "pe": 1}])
def test_std_merge_plans_it_cannot_run_are_refused(fields: dict) -> None:
    plan = dataclasses.replace(plan_for(TINY, 64, None), **fields)
    with pytest.raises(ValueError, match=r"Plan\.mg"):
        TileQwen3(TINY, random_weights(TINY, seed=0), max_seq=64, plan=plan)
