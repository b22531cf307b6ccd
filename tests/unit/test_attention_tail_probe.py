"""benchmarks/probes/attention_tail.py on the CPU: the snake walk's items per
CTA (what the probe compares each CTA's end against) and the analysis of one
launch's records."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "probes"))

from attention_tail import analyse, items_per_cta  # noqa: E402


def test_the_snake_walk_gives_the_last_round_to_the_last_ctas() -> None:
    # 4,096 tiles (D = 64, 16k tokens, 128-row tiles) on 132 CTAs: 31 rounds, then round 31 (odd) from the end
    c = items_per_cta(4096, 132)
    assert sum(c) == 4096 and [i for i, n in enumerate(c) if n == 32] == [128, 129, 130, 131]
    # 2,048 (D = 128): round 15 (odd) reaches CTAs 131 down to 64
    c = items_per_cta(2048, 132)
    assert sum(c) == 2048 and c[63] == 15 and c[64] == 16 and c.count(16) == 68
    assert items_per_cta(5, 8) == [1, 1, 1, 1, 1, 0, 0, 0]


def test_a_launch_is_read_against_its_walk() -> None:
    class Launch:  # the fields of runtime.trace.Launch the probe reads, in ns
        block = np.arange(4)
        start = np.array([0, 32, 64, 0])
        end = np.array([10_000, 10_032, 10_096, 15_000])

        first_start, last_start, last_end = 0, 64, 15_000

    r = analyse(Launch(), 6)  # 6 items on 4 CTAs: round 1 (odd) gives CTAs 3 and 2 a second
    assert r["few_items"] == 1 and r["few_ctas"] == 2 and r["many_ctas"] == 2
    assert r["span_us"] == 15.0 and r["item_us"] == 10.016 and r["end_p100"] == 15.0
    assert abs(r["idle_share"] - (1 - (10 + 10 + 10.032 + 15) / 60)) < 1e-9
