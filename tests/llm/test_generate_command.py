"""`examples/llm/generate.py`, the issue's command, on bad input: every mistake
a user can make on its command line or in a model directory ends in one
`generate.py: error: ...` line and exit status 2, never a traceback; and the
engine refuses token ids outside the vocabulary (its embedding gather would
read zeros past the table's end: a wrong answer, not an error)."""

from __future__ import annotations

import importlib.util
import json
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
        (["--prompt-ids", ""], "--prompt-ids takes comma-separated integers"),  # was a random prompt
        (["--prompt-ids", f"1,{TINY.vocab_size}"], f"token id {TINY.vocab_size} is outside the vocabulary"),
        (["--prompt-ids", "-5"], "token id -5 is outside the vocabulary"),
        (["--context", "100", "--max-seq", "10"], "--max-seq 10 cannot hold the prompt (100 tokens)"),
        (["--prompt", "hello"], "--prompt needs a --model directory with tokenizer.json"),
        # NumPy's generator takes no negative seed; the sampler's seed is an i32
        (["--seed", "-1"], "--seed must be at least 0 (got -1)"),
        (["--temperature", "1", "--sample-seed", str(2**31)], "--sample-seed must be at most 2147483647"),
        # 1e-50 is 0 as the kernels' f32: the sampler divided by it and picked token 0
        (["--temperature", "1e-50"], "below the smallest normal f32"),
        (["--bandwidth", "nan"], "--bandwidth must be positive bytes/s (got nan)"),
        (["--max-seq", str(2**31)], "--max-seq must be at most 1073741824"),
        (["--tokens", str(2**31 - 1)], "the engine holds at most 1073741824"),
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
    # A user's own config.json with a bad value: one line naming the field
    # (these were a ZeroDivisionError, an AttributeError, an IndexError deep
    # in the engine, and NumPy's "high <= 0" for an empty vocabulary).
    good = TINY.to_json()
    for field, value, says in [
        ("num_key_value_heads", 0, "num_key_value_heads must be a positive integer, not 0"),
        ("num_hidden_layers", 0, "num_hidden_layers must be a positive integer, not 0"),
        ("vocab_size", 0, "vocab_size must be a positive integer, not 0"),
        ("hidden_size", "64", "hidden_size must be a positive integer, not '64'"),
        ("rms_norm_eps", -1e-6, "rms_norm_eps must be a positive number"),
        ("tie_word_embeddings", 1, "tie_word_embeddings must be true or false, not 1"),
        # what the engine does not implement: wrong logits if ignored
        ("model_type", "llama", "model_type = 'llama': this engine runs Qwen3"),
        ("rope_scaling", {"rope_type": "yarn", "factor": 4.0}, "rotary scaling is not implemented"),
        ("use_sliding_window", True, "sliding-window attention is not implemented"),
        ("hidden_act", "gelu", "the MLP is SwiGLU (silu)"),
    ]:
        d = json.loads(good)
        d[field] = value
        (tmp_path / "config.json").write_text(json.dumps(d))
        assert says in _error(["--model", str(tmp_path), "--device", "cpu"], capsys), field
    d = json.loads(good)
    d.pop("head_dim")
    d["hidden_size"] = 64.0  # head_dim derived from it
    (tmp_path / "config.json").write_text(json.dumps(d))
    assert "hidden_size must be a positive integer, not 64.0" in _error(["--model", str(tmp_path)], capsys)
    (tmp_path / "config.json").write_text("[64, 128]")
    assert "config.json holds a JSON list" in _error(["--model", str(tmp_path), "--device", "cpu"], capsys)


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

    # a renamed tensor: the message names both names
    w = random_weights(TINY, 1)
    name = "model.layers.1.mlp.up_proj.weight"
    w[name + "s"] = w.pop(name)
    save_safetensors(w, tmp_path / "renamed", TINY)
    line = _error(["--model", str(tmp_path / "renamed"), "--device", "cpu"], capsys)
    assert f"lacks 1 tensor, e.g. {name}, and has 1 this config does not use, e.g. {name}s" in line

    # files that are not checkpoints, a broken shard index, a broken tokenizer
    save_safetensors(random_weights(TINY, 1), tmp_path / "sharded", TINY, shards=2)
    index = tmp_path / "sharded" / "model.safetensors.index.json"
    shard = tmp_path / "sharded" / "model-00002-of-00002.safetensors"
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2])
    line = _error(["--model", str(tmp_path / "sharded"), "--device", "cpu"], capsys)
    assert f"{shard} is not a readable safetensors file" in line
    shard.write_bytes(b"")
    assert "is not a readable safetensors file" in _error(["--model", str(tmp_path / "sharded")], capsys)
    shard.unlink()
    line = _error(["--model", str(tmp_path / "sharded"), "--device", "cpu"], capsys)
    assert f"names shard {shard.name}, which is not in" in line
    index.write_text('{"metadata": {}}')
    assert 'has no "weight_map"' in _error(["--model", str(tmp_path / "sharded")], capsys)
    if importlib.util.find_spec("tokenizers"):
        (tmp_path / "renamed" / "tokenizer.json").write_text("{}")
        line = _error(["--model", str(tmp_path / "renamed"), "--device", "cpu"], capsys)
        assert "cannot read" in line and "tokenizer.json" in line

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


@pytest.mark.parametrize(
    ("sampling", "says"),
    [
        ((1e-50, 1.0, 0), "smallest normal f32"),  # 0 as an f32: it picked token 0
        ((0.0, 1.0, 0), "0 is greedy decoding"),
        ((1.0, 0.0, 0), "top_p must be in"),
        ((1.0, 1.0, 2**31), "does not fit the sampler's i32"),
    ],
)
def test_the_engine_refuses_a_sampling_it_cannot_run(sampling: tuple, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        TileQwen3(TINY, {}, max_seq=16, sampling=sampling)  # before the weights are read


def test_a_large_model_without_a_gpu_is_not_run_on_the_interpreter(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    # README's first command where PyTorch finds no GPU: `--device auto` fell
    # back to the interpreter, allocating 4B parameters as float32 and running
    # for hours a token, without a word
    monkeypatch.setattr(generate, "_gpu", lambda: False)
    line = _error(["--config", "qwen3-4b", "--random-weights", "--tokens", "2"], capsys)
    assert "no CUDA GPU" in line and "hours a token" in line and "--config tiny or small" in line


def test_the_engine_checks_the_weights_it_is_given() -> None:
    # a matrix of another shape ran (the layers are stacked: on the wrong rows) without an error
    w = random_weights(TINY, 1)
    name = "model.layers.0.mlp.up_proj.weight"
    w[name] = w[name][:-1]
    with pytest.raises(ValueError, match=r"up_proj.weight has shape \(127, 64\); the config needs \(128, 64\)"):
        TileQwen3(TINY, w, max_seq=16)
    del w[name]
    with pytest.raises(ValueError, match="the weights dict lacks 1 tensor, e.g. model.layers.0.mlp.up_proj"):
        TileQwen3(TINY, w, max_seq=16)
    with pytest.raises(ValueError, match="max_seq must be at least 1, not 0"):
        TileQwen3(TINY, random_weights(TINY, 1), max_seq=0)


def test_a_prompt_with_tokenizer_json_but_no_tokenizers_package(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    # it said "--prompt needs a --model directory with tokenizer.json" of a directory that has one
    (tmp_path / "config.json").write_text(TINY.to_json())
    (tmp_path / "tokenizer.json").write_text("{}")
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # `import tokenizers` raises ImportError
    line = _error(["--model", str(tmp_path), "--random-weights", "--device", "cpu", "--prompt", "hi"], capsys)
    assert "needs the `tokenizers` package" in line and "pip install 'tilec[llm]'" in line
