"""`benchmarks/decode_timeline.py`'s arithmetic on a decoded block timeline
(no GPU): the per-replay numbers of a split + merge pair and of a split
alone, from launches built by hand with known stamps."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tilelang.runtime.trace import Launch

ROOT = Path(__file__).resolve().parents[2]


def _timeline():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("decode_timeline", ROOT / "benchmarks" / "decode_timeline.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _launch(name: str, starts: list[int], durs: list[int], wait: int = 0) -> Launch:
    """A launch of blocks starting at `starts` (ns) and taking `durs`; `wait`: its
    blocks' wait (or mark) return that long after their start."""
    st = np.array(starts, np.int64)
    return Launch(0, name, 0, np.arange(st.size), np.arange(st.size), st, st + wait, st + np.array(durs), wait > 0)


def test_a_pair_replay() -> None:
    tl = _timeline()
    las = []
    for i in range(3):  # replays every 14,000 ns: split blocks start 0/100 ns, end after 8,000 / 9,000
        t = 14_000 * i
        las.append(_launch("decode_split_tc", [t, t + 100], [8_000, 9_000]))
        # the merge's blocks start 700 ns after the split's last block end, wait 100, run 1,600
        las.append(_launch("decode_combine", [t + 9_800, t + 9_832], [1_700, 1_700], wait=100))
    rows = tl.replay_rows(las, True)
    assert len(rows) == 2  # the last replay has no next one to measure its period against
    r = rows[0]
    assert r["period"] == pytest.approx(14.0)
    assert r["s_ramp"] == pytest.approx(0.1)
    assert (r["s_min"], r["s_max"]) == (pytest.approx(8.0), pytest.approx(9.0))
    assert r["s_span"] == pytest.approx(9.1) and r["s_first_end"] == pytest.approx(8.0)
    assert r["s_tail"] == pytest.approx(1.1)
    assert r["m_start"] == pytest.approx(0.7)
    assert r["m_wait"] == pytest.approx(0.7 + 0.016 + 0.1)  # the median block's wait return
    assert r["m_adds"] == pytest.approx(9.832 + 1.7 - 9.1)
    assert r["m_block_after_wait"] == pytest.approx(1.6)
    assert r["graph_gap"] == pytest.approx(14.0 - (9.832 + 1.7))
    assert "s_mark_med" not in r  # the split records no mark


def test_the_split_mark() -> None:
    """With TILEC_TRACE_MARK the split (no PDL wait) has its mark in the wait's field."""
    tl = _timeline()
    las = []
    for i in range(3):
        t = 10_000 * i
        las.append(_launch("decode_split_tc", [t, t + 100], [6_000, 7_000], wait=2_500))
        las.append(_launch("decode_combine", [t + 7_800], [1_700], wait=100))
    r = tl.replay_rows(las, True)[0]
    assert (r["s_mark_min"], r["s_mark_med"], r["s_mark_max"]) == (pytest.approx(2.5),) * 3
    assert r["s_after_mark_med"] == pytest.approx(4.0)


def test_a_split_alone() -> None:
    tl = _timeline()
    las = [_launch("decode_split", [5_000 * i, 5_000 * i + 64], [3_000, 2_000]) for i in range(4)]
    rows = tl.replay_rows(las, False)
    assert len(rows) == 3
    assert rows[1]["period"] == pytest.approx(5.0)
    assert rows[1]["graph_gap"] == pytest.approx(5.0 - 3.0)
    assert "m_start" not in rows[1]
