"""The prefill launch rule (`examples/python/prefill_plan.py`): the blocks it gives each head dim and card, and
`TILEC_PREFILL_WG3`, which takes three consumer warpgroups (BM = 192) at D = 64 on sm_90 only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
from prefill_plan import prefill_blocks

from tilelang.env_switch import SwitchError


@pytest.mark.parametrize("wg3", [None, "0", "1"])
def test_the_blocks_of_each_head_dim_and_card(wg3: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if wg3 is None:
        monkeypatch.delenv("TILEC_PREFILL_WG3", raising=False)
    else:
        monkeypatch.setenv("TILEC_PREFILL_WG3", wg3)
    three = wg3 == "1"
    assert prefill_blocks(64, 90) == ((192, 128) if three else (128, 128))
    assert prefill_blocks(128, 90) == (128, 128)  # (D = 128: two consumer warpgroups whatever the switch)
    assert prefill_blocks(256, 90) == (128, 64)
    for d in (64, 128, 256):
        assert prefill_blocks(d, 80) == (128, 64)  # (no Hopper pipeline: the switch never applies)
    for d in (64, 128):
        bm, _ = prefill_blocks(d, 90)
        assert bm % 64 == 0 and bm // 64 in (2, 3)  # whole consumer warpgroups of 64 query rows


def test_a_setting_the_switch_does_not_take_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_PREFILL_WG3", "yes")
    with pytest.raises(SwitchError, match="TILEC_PREFILL_WG3"):
        prefill_blocks(64, 90)
