"""Generate text (or token ids) with the Tile Qwen3 engine.

    python examples/llm/generate.py --config qwen3-4b --random-weights --tokens 256
    python examples/llm/generate.py --model ~/models/Qwen3-0.6B --prompt "Hello" --tokens 64
    python examples/llm/generate.py --config tiny --random-weights --tokens 16 --device cpu

Prints the tokens (text when the model directory has a `tokenizer.json` and
the `tokenizers` package is installed), a progress bar while decoding, and the
decode speed: tokens/s and the fraction of the memory roofline, i.e. of
(weight bytes + KV bytes read per token) / (measured copy bandwidth).
On the GPU the step is one CUDA graph, replayed per token; on the CPU the
kernels run on Tile's interpreter (use a tiny config there).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from engine import TileQwen3, hbm_bytes_per_token, outside_vocabulary, temperature_problem
from model import Qwen3Config, load_safetensors, random_weights


I32_MAX = 2**31 - 1
MAX_SEQ = 2**30  # positions are i32 on the device, and the cache's length a power of 2
CPU_WEIGHT_BYTES = 256e6  # `small` is 8 MB; qwen3-0.6b 1.5 GB: hours a token on the interpreter


def _gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def copy_bandwidth(device: str = "cuda", nbytes: int = 1 << 30) -> float:
    """Bytes per second a device-to-device copy moves (read + write): the
    best of five rounds of 10 copies timed by events, after ~0.3 s of
    copies, each round queued behind a sleeping kernel. (One round timed
    from the host, first thing in
    `benchmarks/decode_ab.py`, read 0.7-3.8 TB/s on an H200 that copies 4.2;
    likeliest cause: the host thread, sharing the interpreter with `import
    tilelang`'s prewarm thread, left the GPU idle between copies.)"""
    import torch

    a = torch.empty(nbytes, dtype=torch.uint8, device=device)
    b = torch.empty_like(a)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.3:
        b.copy_(a)
        torch.cuda.synchronize(device)
    best = 0.0
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # The GPU sleeps (~20 ms) while the host queues the timed copies, so a
        # host slowed by other threads (the toolchain's prewarm holds the GIL in
        # bursts) cannot leave the GPU idle between them: the final call of
        # 2026-12-02 read 2.22 TB/s here on an H200 that copies 4.28.
        torch.cuda._sleep(40_000_000)
        e0.record()
        for _ in range(10):
            b.copy_(a)
        e1.record()
        e1.synchronize()
        best = max(best, 2 * nbytes * 10 / (e0.elapsed_time(e1) / 1e3))
    del a, b
    return best


class Progress:
    """A one-line progress bar on stderr: `[#####.....] 120/256  95.3 tok/s`."""

    def __init__(self, total: int, enabled: bool = True, width: int = 30) -> None:
        self.total, self.enabled, self.width = total, enabled, width
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < self.total and now - self.last < 0.1:
            return
        self.last = now
        rate = done / max(now - self.t0, 1e-9)
        fill = int(self.width * done / self.total)
        bar = "#" * fill + "." * (self.width - fill)
        sys.stderr.write(f"\r[{bar}] {done}/{self.total} {rate:8.1f} tok/s")
        if done >= self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="generate.py", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--config",
        help="a preset (qwen3-0.6b, qwen3-4b, qwen3-8b, tiny, small), "
        "a config.json or a directory holding one",
    )
    ap.add_argument(
        "--model",
        help="a Hugging Face model directory (config.json, *.safetensors, optional tokenizer.json)",
    )
    ap.add_argument("--random-weights", action="store_true", help="random bf16 weights")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    ap.add_argument("--tokens", type=int, default=32, help="tokens to generate")
    ap.add_argument("--prompt", default=None, help="prompt text (needs tokenizer.json)")
    ap.add_argument("--prompt-ids", default=None, help="prompt token ids, comma-separated")
    ap.add_argument(
        "--context",
        type=int,
        default=0,
        help="fill the KV cache with this many random prompt tokens first",
    )
    ap.add_argument("--max-seq", type=int, default=0, help="KV cache capacity (default: enough)")
    ap.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    ap.add_argument(
        "--bandwidth",
        type=float,
        default=0.0,
        help="bytes/s for the roofline (default: measured on the GPU)",
    )
    ap.add_argument(
        "--token-prompt",
        action="store_true",
        help="feed the prompt through the decode step, one token at a time",
    )
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(argv)

    if not (a.config or a.model):
        ap.error("give --config or --model")
    if not a.model and not a.random_weights:
        ap.error("without --model, pass --random-weights")
    for flag, value, low, high in (
        ("--tokens", a.tokens, 1, I32_MAX),
        ("--context", a.context, 0, I32_MAX),
        ("--max-seq", a.max_seq, 0, MAX_SEQ),
        ("--seed", a.seed, 0, None),  # NumPy's and PyTorch's generators take seeds >= 0
        ("--sample-seed", a.sample_seed, -I32_MAX - 1, I32_MAX),  # the sampler's `seed: i32`
    ):
        if value < low:
            ap.error(f"{flag} must be at least {low} (got {value})")
        if high is not None and value > high:
            ap.error(f"{flag} must be at most {high} (got {value})")
    if not a.temperature >= 0.0:
        ap.error(f"--temperature must be 0 (greedy) or positive (got {a.temperature})")
    problem = temperature_problem(a.temperature) if a.temperature > 0 else None
    if problem:
        ap.error(f"--temperature {problem}")
    if not 0.0 < a.top_p <= 1.0:
        ap.error(f"--top-p must be in (0, 1] (got {a.top_p})")
    if not 0.0 <= a.bandwidth < float("inf"):
        ap.error(f"--bandwidth must be positive bytes/s (got {a.bandwidth})")
    gpu = a.device == "gpu" or (a.device == "auto" and _gpu())
    if a.device == "gpu" and not _gpu():
        print("error: --device gpu needs PyTorch with a CUDA device", file=sys.stderr)
        return 3
    backend = "torch" if gpu else "numpy"
    try:
        cfg = Qwen3Config.load(a.config or a.model)
    except (OSError, ValueError, TypeError) as e:  # no such file, bad JSON, missing or odd fields
        ap.error(f"cannot read the model's config: {e}")
    if not gpu and cfg.weight_bytes() > CPU_WEIGHT_BYTES:
        # README's first command on a machine without a GPU: `auto` fell back to
        # the interpreter, which would allocate the model as float32 and take
        # hours a token
        what = f"{cfg.weight_bytes() / 1e9:.2f} GB of weights"
        if a.device == "auto":
            ap.error(
                f"no CUDA GPU (PyTorch with CUDA) found, and the CPU interpreter would take hours a "
                f"token for {what}: use --config tiny or small on the CPU, or --device cpu to run it anyway"
            )
        print(f"note: {what} on the CPU interpreter: expect hours a token", file=sys.stderr)

    tokenizer = None
    if a.model and (Path(a.model) / "tokenizer.json").exists():
        try:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(Path(a.model) / "tokenizer.json"))
        except ImportError:
            print(
                "note: tokenizer.json found but `tokenizers` is not installed; using token ids",
                file=sys.stderr,
            )
        except Exception as e:  # the tokenizers package raises a plain Exception
            ap.error(
                f"cannot read {Path(a.model) / 'tokenizer.json'}: {e} (a Hugging Face "
                "tokenizer.json is expected; without the file, tokens print as ids)"
            )
    rng = np.random.default_rng(a.seed + 1)
    if a.prompt is not None:
        if tokenizer is None and a.model and (Path(a.model) / "tokenizer.json").exists():
            ap.error(
                "--prompt needs the `tokenizers` package to read tokenizer.json: "
                "pip install 'tilec[llm]', or use --prompt-ids"
            )
        if tokenizer is None:
            ap.error("--prompt needs a --model directory with tokenizer.json; use --prompt-ids")
        prompt = tokenizer.encode(a.prompt).ids
    elif a.prompt_ids is not None:  # "" too: an empty prompt, not a random one
        try:
            prompt = [int(t) for t in a.prompt_ids.split(",")]
        except ValueError:
            ap.error(
                f"--prompt-ids takes comma-separated integers, e.g. 1,2,3 (got {a.prompt_ids!r})"
            )
    else:
        prompt = [int(rng.integers(0, cfg.vocab_size))]
    if not prompt:
        ap.error("the prompt is empty: give --prompt-ids or a --prompt that has tokens")
    bad = outside_vocabulary(prompt, cfg.vocab_size)  # before the weights load, not after
    if bad:
        ap.error(bad)
    if a.context > len(prompt):
        prompt = prompt + [int(t) for t in rng.integers(0, cfg.vocab_size, a.context - len(prompt))]
    need = len(prompt) + a.tokens + 1
    if a.max_seq and a.max_seq < need:
        ap.error(
            f"--max-seq {a.max_seq} cannot hold the prompt ({len(prompt)} tokens) and {a.tokens} new "
            f"tokens: give at least {need}, or leave it out"
        )
    max_seq = a.max_seq or need
    if max_seq > MAX_SEQ:
        ap.error(f"the prompt and --tokens need {need} positions; the engine holds at most {MAX_SEQ}")

    t0 = time.perf_counter()
    if a.model and not a.random_weights:
        try:
            weights = load_safetensors(a.model, cfg, backend=backend)
        except (
            OSError,
            KeyError,
            ValueError,
        ) as e:  # no checkpoint, a missing tensor, a wrong shape
            ap.error(f"cannot load the weights from {a.model}: {e}")
    else:
        weights = random_weights(cfg, a.seed, backend=backend)
    sampling = None if a.temperature <= 0 else (a.temperature, a.top_p, a.sample_seed)
    try:
        eng = TileQwen3(cfg, weights, max_seq=max_seq, backend=backend, sampling=sampling)
    except MemoryError:
        ap.error(
            f"not enough memory for a KV cache of {max_seq} positions "
            f"({cfg.kv_bytes(max_seq) / 1e9:.1f} GB) and the step's buffers: give a smaller --max-seq"
        )
    del weights
    where = "GPU (one CUDA graph per step)" if gpu else "CPU interpreter"
    print(
        f"{cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}, "
        f"{cfg.weight_bytes() / 1e9:.2f} GB of bf16 weights, {len(eng.ops)} kernels a step, "
        f"on the {where}; start-up {time.perf_counter() - t0:.1f} s"
    )

    eng.reset()
    tp = time.perf_counter()
    if a.token_prompt:
        eng.prompt(prompt)
    else:
        eng.prefill(prompt)
    eng.be.sync()
    tp = time.perf_counter() - tp
    first = int(eng.be.read(eng.tok)[0])
    mem0 = eng.be.memory()
    bar = Progress(max(1, a.tokens - 1), enabled=not a.no_progress)
    td = time.perf_counter()
    rest = eng.decode(a.tokens - 1, progress=bar) if a.tokens > 1 else []
    td = time.perf_counter() - td
    out = ([first, *rest])[: a.tokens]

    if tokenizer is not None:
        print(tokenizer.decode(out))
    else:
        print("tokens:", " ".join(map(str, out)))
    n = len(rest)
    how = "token by token" if a.token_prompt else "batched prefill"
    print(f"prompt: {len(prompt)} tokens in {tp:.2f} s ({how}, including its first compile)")
    if n:
        rate = n / td
        ctx = len(prompt) + a.tokens // 2
        need = hbm_bytes_per_token(cfg, ctx)
        line = f"decode: {n} tokens in {td:.2f} s = {rate:.1f} tokens/s"
        bw = a.bandwidth or (copy_bandwidth() if gpu else 0.0)
        if bw:
            roof = bw / need
            line += (
                f"; roofline {roof:.0f} tokens/s at {bw / 1e12:.2f} TB/s "
                f"({need / 1e9:.2f} GB a token) -> {rate / roof:.1%} of the roofline"
            )
        else:
            line += f" ({need / 1e6:.1f} MB a token; no roofline on the CPU interpreter)"
        print(line)
    if gpu:
        print(
            f"device memory: {mem0 / 1e9:.3f} GB after the prompt, "
            f"{eng.be.memory() / 1e9:.3f} GB after decoding"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
