"""A thread's registers of one accumulator row are folded as interleaved
chains (`codegen/accview._fold`, `REDUCE_CHAINS`): the same combines, a
shorter dependency chain (the softmax's row max waits on it before any
exp2), checked on a stand-in emitter that writes each combine as text, and
in the LLVM of std's attention kernel."""

from __future__ import annotations

import re

import pytest

from tilelang import driver
from tilelang.backend import emit_llvm
from tilelang.backend.codegen.accview import REDUCE_CHAINS, _fold, reduce_chains
from tilelang.backend.facts import TensorFacts
from tilelang.ir import nodes as ir


class _Text:
    def combine(self, rop: object, a: str, b: str, dt: object) -> str:
        return f"({a} {b})"


def _depth(e: str) -> int:
    d = best = 0
    for c in e:
        d += c == "("
        d -= c == ")"
        best = max(best, d)
    return best


@pytest.mark.parametrize(("n", "chains", "depth"), [(32, 1, 31), (32, 4, 9), (16, 4, 5), (3, 4, 2), (1, 4, 0)])
def test_a_row_folds_as_interleaved_chains(n: int, chains: int, depth: int) -> None:
    vals = [f"v{i}" for i in range(n)]
    e = _fold(_Text(), ir.ReduceOp.MAX, vals, None, chains)
    assert sorted(re.findall(r"v\d+", e), key=lambda v: int(v[1:])) == vals  # each value once
    assert e.count("(") == n - 1  # the same number of combines
    assert _depth(e) == depth


def test_the_chains_follow_their_switch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert reduce_chains() == REDUCE_CHAINS == 1  # four measured no faster on the H200
    monkeypatch.setenv("TILEC_ACC_REDUCE_CHAINS", "4")
    assert reduce_chains() == 4


def test_std_attentions_row_max_with_four_chains(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """128 x 128 blocks: each thread holds 32 scores of a row; with
    `TILEC_ACC_REDUCE_CHAINS=4` the longest run of maxima that feed each
    other before the quad's shuffles is 7 + 2 (31 with the default chain)."""
    src = ("use std::attention::flash_attention;\nfn main() { let q = zeros::<f16>([2, 64, 128]);"
           " let mut o = zeros::<f16>([2, 64, 128]);"
           " flash_attention::<f16, 128, 128, 128>(o.partition([1, 128, 128]), &q, &q, &q, 0.1, true).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    facts = {n: TensorFacts(True, (False, False, True)) for n in "oqkv"}

    def longest(ll: str) -> int:
        depth: dict[str, int] = {}
        best = 0
        for m in re.finditer(r"(%[\w.]+) = call float @llvm\.maximum\.f32\(float (%[\w.]+), float (%[\w.]+)\)", ll):
            d = 1 + max(depth.get(m.group(2), 0), depth.get(m.group(3), 0))
            depth[m.group(1)] = d
            best = max(best, d)
        return best

    one = emit_llvm(k, "sm_90a", facts)
    monkeypatch.setenv("TILEC_ACC_REDUCE_CHAINS", "4")
    ll = emit_llvm(k, "sm_90a", facts)
    assert longest(one) >= 31, longest(one)
    assert longest(ll) <= longest(one) - 21, (longest(ll), longest(one))
