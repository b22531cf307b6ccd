"""`benchmarks/attn_chain.py`'s arithmetic on a decoded block timeline (no
GPU): the attention chain of a step built by hand, each attention block's
split found from its block index (grid (KV heads, splits): block = head *
splits + split) and put against the key tiles its split reads."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from tilelang.runtime.trace import Launch, Trace

ROOT = Path(__file__).resolve().parents[2]


def _chain():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("attn_chain", ROOT / "benchmarks" / "attn_chain.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.chain


def _launch(name: str, start: int, durs: list[int], wait: int = 0, waits: bool = False) -> Launch:
    st = np.full(len(durs), start, np.int64)
    return Launch(0, name, 0, np.arange(len(durs)), np.arange(len(durs)) % 4, st, st + wait, st + np.array(durs), waits)


def test_blocks_by_their_splits_tiles_and_the_chain() -> None:
    # 2 KV heads x 4 splits, key tile 8, position 17 .. (3 tiles: 1 a split,
    # split 3 empty); an empty split's block takes 2,000 ns, a split with a
    # tile 3,000 (its mark at 1,200); 2 layers a step, 2 steps
    hkv, splits, bt, layers, p0 = 2, 4, 8, 2, 17
    las, t = [], 0
    for _ in range(2 * layers):
        las.append(_launch("rms_gemv", t, [5_000] * 4))
        t += 5_000
        durs = [2_000 if b % splits == 3 else 3_000 for b in range(hkv * splits)]
        las.append(_launch("attn_decode_ring_early", t + 400, durs, wait=1_200, waits=True))
        t += 400 + 3_000
        las.append(_launch("combine_splits", t + 250, [1_700] * 8, wait=250))  # wait returns 500 after
        t += 250 + 1_700
        las.append(_launch("gemv_add", t + 350, [6_000] * 4))
        t += 350 + 6_000
    res = _chain()(Trace(las, 0, 1), layers, hkv, splits, bt, p0, True)
    assert res["launches"] == 2 * layers and res["tiles_a_split"] == 1
    assert res["block_1"] == 3.0 and res["block_0"] == 2.0 and "block_2" not in res
    assert (res["mark_1"], res["after_1"]) == (1.2, 1.8)
    assert (res["attn_first_start"], res["attn_last_end"]) == (0.4, 3.4)
    assert (res["merge_first_start"], res["merge_wait"], res["merge_block_after_wait"]) == (0.25, 0.5, 1.45)
    assert (res["merge_last_end"], res["o_first_start"], res["chain"]) == (1.95, 0.35, 5.7)
    # the split is the block index modulo the splits: were it `block // hkv`, the
    # empty split's blocks (3 and 7) would not be the 2,000 ns ones
    assert res["end_0"] == 2.4 and res["end_1"] == 3.4
