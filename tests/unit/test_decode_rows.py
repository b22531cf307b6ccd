"""`benchmarks/decode.py`'s row list (no GPU): which contexts and which
prefill each model is timed at, `--issue17`'s table in one process, and the
names that would time nothing refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import decode  # noqa: E402


def test_issue17_is_the_issues_table_in_one_process() -> None:
    # issue 17's rows: 4B at 1,024 / 8,192 / 32,768 with the prefill of 2,048, then 0.6B and 8B at 1,024
    assert decode.ISSUE17["tokens"] == 128  # the host's fixed cost of a call 0.3 % of the tokens, not 1.2 %
    assert decode.rows_wanted(**{k: v for k, v in decode.ISSUE17.items() if k != "tokens"}) == [
        ("4b", [1024, 8192, 32768], 2048), ("0.6b", [1024], 0), ("8b", [1024], 0)]


def test_a_model_takes_its_own_contexts_and_the_prefill_where_named() -> None:
    assert decode.rows_wanted("0.6b,4b", "1024") == [("0.6b", [1024], 0), ("4b", [1024], 0)]
    # before these options every model took --contexts and --prefill: still so without them
    assert decode.rows_wanted("0.6b,4b", "1024,8192", prefill=512) == [
        ("0.6b", [1024, 8192], 512), ("4b", [1024, 8192], 512)]
    assert decode.rows_wanted("0.6b, 8b", "1024", "8b=2048, 4096 ; ", 64, "8b") == [
        ("0.6b", [1024], 0), ("8b", [2048, 4096], 64)]


@pytest.mark.parametrize(("mc", "pm", "word"), [("4b=1024", "", "not in --models"),
                                                ("", "8b", "not in --models"),
                                                ("4b", "", "MODEL=CTX"), ("4b=", "", "MODEL=CTX")])
def test_names_that_would_time_nothing_are_refused(mc: str, pm: str, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        decode.rows_wanted("0.6b", "1024", mc, 2048, pm)
