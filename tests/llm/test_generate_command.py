"""`examples/llm/generate.py`, the issue's command, on bad input: every mistake
a user can make on its command line or in a model directory ends in one
`generate.py: error: ...` line and exit status 2, never a traceback; and the
engine refuses token ids outside the vocabulary (its embedding gather would
read zeros past the table's end: a wrong answer, not an error)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "llm"))

import generate
import pytest
from engine import TileQwen3
from model import Qwen3Config, random_weights, save_safetensors

TINY = Qwen3Config.load("tiny")

BASE = ["--config", "tiny", "--random-weights", "--device", "cpu", "--no-progress"]


def _error(argv: list[str], capsys) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as e:
        generate.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("generate.py: error: "), err
    return line


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--tokens", "0"], "--tokens must be at least 1 (got 0)"),
        (["--tokens", "-3"], "--tokens must be at least 1"),
        (["--context", "-1"], "--context must be at least 0"),
        (["--temperature", "-1"], "--temperature must be 0 (greedy) or positive"),
        (["--temperature", "nan"], "--temperature must be 0"),
        (["--temperature", "1", "--top-p", "2"], "--top-p must be in (0, 1]"),
        (["--top-p", "0"], "--top-p must be in (0, 1]"),
        (["--prompt-ids", "1,x"], "--prompt-ids takes comma-separated integers"),
        (["--prompt-ids", f"1,{TINY.vocab_size}"], f"token id {TINY.vocab_size} is outside the vocabulary"),
        (["--prompt-ids", "-5"], "token id -5 is outside the vocabulary"),
        (["--context", "100", "--max-seq", "10"], "--max-seq 10 cannot hold the prompt (100 tokens)"),
        (["--prompt", "hello"], "--prompt needs a --model directory with tokenizer.json"),
    ],
)
def test_bad_arguments_get_one_clear_line(extra: list[str], says: str, capsys) -> None:  # type: ignore[no-untyped-def]
    assert says in _error(BASE + extra, capsys)


def test_an_unknown_config_names_the_presets(capsys) -> None:  # type: ignore[no-untyped-def]
    line = _error(["--config", "qwen9-nonesuch", "--random-weights", "--device", "cpu"], capsys)
    assert "no preset or config.json named 'qwen9-nonesuch'" in line and "qwen3-4b" in line


def test_a_broken_config_json(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.json").write_text('{"hidden_size": 64')
    assert "cannot read the model's config" in _error(["--model", str(tmp_path), "--device", "cpu"], capsys)
    (tmp_path / "config.json").write_text('{"hidden_size": 64}')
    assert "config.json lacks intermediate_size" in _error(["--model", str(tmp_path), "--device", "cpu"], capsys)


def test_a_model_directory_without_its_weights(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("safetensors")
    w = random_weights(TINY, 1)
    w.pop("model.layers.0.self_attn.k_proj.weight")
    save_safetensors(w, tmp_path / "missing", TINY)
    line = _error(["--model", str(tmp_path / "missing"), "--device", "cpu"], capsys)
    assert "cannot load the weights" in line and "model.layers.0.self_attn.k_proj.weight" in line

    w = random_weights(TINY, 1)
    name = "model.layers.0.self_attn.v_proj.weight"
    w[name] = w[name][:-1]
    save_safetensors(w, tmp_path / "short", TINY)
    line = _error(["--model", str(tmp_path / "short"), "--device", "cpu"], capsys)
    assert name in line and "the config needs" in line

    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text((tmp_path / "short" / "config.json").read_text())
    assert "no .safetensors files" in _error(["--model", str(tmp_path / "empty"), "--device", "cpu"], capsys)


def test_a_good_command_still_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    assert generate.main([*BASE, "--prompt-ids", "1,2", "--tokens", "3"]) == 0
    out = capsys.readouterr().out
    assert "prompt: 2 tokens" in out and "decode: 2 tokens" in out


@pytest.mark.parametrize("feed", ["prefill", "prompt"])
def test_the_engine_refuses_ids_outside_the_vocabulary(feed: str) -> None:
    eng = TileQwen3(TINY, random_weights(TINY, 2), max_seq=16)
    eng.reset()
    for bad in ([1, TINY.vocab_size], [-1]):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            getattr(eng, feed)(bad)
    with pytest.raises(ValueError, match="at least one token"):
        getattr(eng, feed)([])
    getattr(eng, feed)([1, TINY.vocab_size - 1])  # the last id is fine
