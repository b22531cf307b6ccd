"""benchmarks/probes/qdouble_check.py on the CPU: where the persistent walk
puts a tile (CTA and ordinal), which the probe reports for every bad tile."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "probes"))

from attention_tail import items_per_cta  # noqa: E402
from qdouble_check import walk_place  # noqa: E402


def test_every_tile_has_one_place_and_each_cta_walks_its_count() -> None:
    # the benchmark's launch: 512 heads x 8 query blocks on 132 CTAs; full one tile an item, causal a pair
    for causal in (False, True):
        seen: dict[int, set[int]] = collections.defaultdict(set)
        for h in range(512):
            for b in range(8):
                c, r = walk_place(h, b, 8, 132, causal)
                assert r not in seen[c]
                seen[c].add(r)
        assert all(rs == set(range(len(rs))) for rs in seen.values())
        counts = [len(seen[c]) for c in range(132)]
        items = items_per_cta(4096 if not causal else 2048, 132)
        assert counts == (items if not causal else [2 * n for n in items])


def test_the_places_follow_the_snake_and_the_pairs() -> None:
    assert walk_place(0, 7, 8, 132, False) == (0, 0)  # item 0: the head's last query block first
    assert walk_place(16, 3, 8, 132, False) == (131 - 0, 1)  # item 132 (round 1, odd): the last CTA
    assert walk_place(511, 0, 8, 132, False) == (128, 31)  # item 4095, round 31 from the end: CTA 128
    # causal: head 0's pair 0 = query blocks 7 (heavy, even round) and 0 (light, the odd round after it)
    assert walk_place(0, 7, 8, 132, True) == (0, 0) and walk_place(0, 0, 8, 132, True) == (0, 1)
    assert walk_place(0, 4, 8, 132, True) == (3, 0) and walk_place(0, 3, 8, 132, True) == (3, 1)
