"""Qwen3: the configuration, the weights and where they come from.

`Qwen3Config` reads a Hugging Face `config.json` (or names a preset:
`qwen3-0.6b`, `qwen3-4b`, `qwen3-8b` and the test sizes `tiny`, `small`).
`Weights` is a dict of Hugging Face tensor names to arrays of bf16 values:
NumPy float32 arrays (values rounded to bf16; the CPU interpreter's layout)
or torch.bfloat16 tensors (any device). They come from

- `random_weights(cfg, seed, backend)`: any config, deterministic for a seed
  (NumPy's PCG64 on the CPU, `torch.Generator` on the GPU, where a 4B model's
  weights are made in a second instead of a minute);
- `load_safetensors(dir_or_file, cfg, backend)`: one `model.safetensors` or
  the shards of a `model.safetensors.index.json`, read with the
  `safetensors` package (`pip install tilec[llm]`); `save_safetensors`
  writes the same layout (the tests' small checkpoints).

Checkpoints store bf16 (also f16/f32: converted); every tensor's shape is
checked against the config, and a missing or extra tensor is an error that
names it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

PRESETS: dict[str, dict[str, Any]] = {
    # The published Qwen3 shapes (config.json of each model).
    "qwen3-0.6b": {
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "num_hidden_layers": 28,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    },
    "qwen3-4b": {
        "hidden_size": 2560,
        "intermediate_size": 9728,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
    },
    "qwen3-8b": {
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "num_hidden_layers": 36,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
    },
    # Small shapes of the same architecture, for tests and the CPU interpreter.
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 96,
        "tie_word_embeddings": True,
    },
    "small": {
        "hidden_size": 256,
        "intermediate_size": 768,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 64,
        "vocab_size": 1000,
        "tie_word_embeddings": False,
    },
}


@dataclass(frozen=True)
class Qwen3Config:
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1_000_000.0
    tie_word_embeddings: bool = True

    def __post_init__(self) -> None:
        # A user's own config.json: every size a positive integer, the norm's
        # epsilon and the rotary base positive numbers (else the engine would
        # fail deep inside with a Python error, or divide by zero).
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "tie_word_embeddings":
                if not isinstance(v, bool):
                    raise ValueError(f"tie_word_embeddings must be true or false, not {v!r}")
            elif f.type in ("int", int):
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ValueError(f"{f.name} must be a positive integer, not {v!r}")
            elif (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not 0 < v < float("inf")
            ):
                raise ValueError(f"{f.name} must be a positive number, not {v!r}")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_key_value_heads})"
            )
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even for rotary embeddings, not {self.head_dim}")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Qwen3Config:
        if not isinstance(d, dict):
            raise ValueError(f"config.json holds a JSON {type(d).__name__}, not an object of fields")
        # What this engine does not implement must not be dropped in silence:
        # another architecture, rotary scaling, a sliding window, biases and
        # another activation would each give wrong logits, not an error.
        unsupported = [
            ("model_type", d.get("model_type", "qwen3") != "qwen3", "this engine runs Qwen3"),
            ("rope_scaling", d.get("rope_scaling") is not None, "rotary scaling is not implemented"),
            ("use_sliding_window", bool(d.get("use_sliding_window")), "sliding-window attention is not implemented"),
            ("attention_bias", bool(d.get("attention_bias")), "projection biases are not implemented"),
            ("hidden_act", d.get("hidden_act", "silu") != "silu", "the MLP is SwiGLU (silu)"),
        ]
        for key, bad, why in unsupported:
            if bad:
                raise ValueError(f"config.json has {key} = {d[key]!r}: {why}")
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if "head_dim" not in kw and "hidden_size" in kw and "num_attention_heads" in kw:
            for k in ("hidden_size", "num_attention_heads"):
                v = kw[k]
                if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                    raise ValueError(f"{k} must be a positive integer, not {v!r}")
            kw["head_dim"] = kw["hidden_size"] // kw["num_attention_heads"]
        missing = [
            f.name for f in fields(cls) if f.name not in kw and f.default is f.default_factory
        ]
        missing = [
            m for m in missing if m not in ("rms_norm_eps", "rope_theta", "tie_word_embeddings")
        ]
        if missing:
            raise ValueError(f"config.json lacks {', '.join(missing)}")
        return cls(**kw)

    @classmethod
    def load(cls, name_or_path: str | Path) -> Qwen3Config:
        """A preset name, a `config.json`, or a directory holding one."""
        key = str(name_or_path).lower()
        if key in PRESETS:
            return cls(**PRESETS[key])
        p = Path(name_or_path)
        if p.is_dir():
            p = p / "config.json"
        if not p.exists():
            raise FileNotFoundError(
                f"no preset or config.json named {name_or_path!r} (presets: {', '.join(PRESETS)})"
            )
        return cls.from_dict(json.loads(p.read_text()))

    def to_json(self) -> str:
        d = asdict(self)
        d["architectures"] = ["Qwen3ForCausalLM"]
        d["model_type"] = "qwen3"
        return json.dumps(d, indent=2)

    @property
    def group(self) -> int:
        """Query heads per KV head."""
        return self.num_attention_heads // self.num_key_value_heads

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Every tensor of the checkpoint, by its Hugging Face name."""
        h, i, d = self.hidden_size, self.intermediate_size, self.head_dim
        hq, hkv, v = self.num_attention_heads, self.num_key_value_heads, self.vocab_size
        out: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (v, h)}
        for layer in range(self.num_hidden_layers):
            p = f"model.layers.{layer}."
            out.update(
                {
                    p + "input_layernorm.weight": (h,),
                    p + "self_attn.q_proj.weight": (hq * d, h),
                    p + "self_attn.k_proj.weight": (hkv * d, h),
                    p + "self_attn.v_proj.weight": (hkv * d, h),
                    p + "self_attn.o_proj.weight": (h, hq * d),
                    p + "self_attn.q_norm.weight": (d,),
                    p + "self_attn.k_norm.weight": (d,),
                    p + "post_attention_layernorm.weight": (h,),
                    p + "mlp.gate_proj.weight": (i, h),
                    p + "mlp.up_proj.weight": (i, h),
                    p + "mlp.down_proj.weight": (h, i),
                }
            )
        out["model.norm.weight"] = (h,)
        if not self.tie_word_embeddings:
            out["lm_head.weight"] = (v, h)
        return out

    def weight_bytes(self) -> int:
        """Bytes of bf16 weights a decode step reads (the embedding row aside)."""
        n = sum(
            int(np.prod(s)) for k, s in self.shapes().items() if k != "model.embed_tokens.weight"
        )
        if self.tie_word_embeddings:
            n += self.vocab_size * self.hidden_size  # the LM head is the embedding
        return 2 * n

    def kv_bytes(self, context: int) -> int:
        """Bytes of the bf16 KV cache a decode step at `context` positions reads."""
        return 2 * 2 * self.num_hidden_layers * self.num_key_value_heads * self.head_dim * context


# ---------------------------------------------------------------- bf16 on NumPy
def round_bf16(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to the nearest bf16 (ties to even), as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    rounded = np.where(np.isnan(a), u | 0x00400000, rounded).astype(np.uint32)
    return rounded.view(np.float32)


def bf16_bits_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(a: np.ndarray) -> np.ndarray:
    return (round_bf16(a).view(np.uint32) >> 16).astype(np.uint16)


# ---------------------------------------------------------------- random weights
def _init(name: str, shape: tuple[int, ...]) -> tuple[str, float]:
    """(kind, scale): norm weights near 1, matrices with std 1/sqrt(fan_in),
    the embedding with std 1, so activations and logits keep a sane size."""
    if name.endswith("norm.weight"):
        return "norm", 0.1
    if name == "model.embed_tokens.weight":
        return "normal", 1.0
    return "normal", 1.0 / np.sqrt(shape[-1])


def random_weights(
    cfg: Qwen3Config, seed: int = 0, backend: str = "numpy", device: str = "cuda"
) -> dict[str, Any]:
    """Deterministic random weights for any config, as bf16 values."""
    out: dict[str, Any] = {}
    if backend == "numpy":
        rng = np.random.default_rng(seed)
        for name, shape in cfg.shapes().items():
            kind, scale = _init(name, shape)
            a = rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
            out[name] = round_bf16(a + 1.0 if kind == "norm" else a)
        return out
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    for name, shape in cfg.shapes().items():
        kind, scale = _init(name, shape)
        t = torch.empty(shape, dtype=torch.bfloat16, device=device)
        t.normal_(mean=1.0 if kind == "norm" else 0.0, std=scale, generator=gen)
        out[name] = t
    return out


# ---------------------------------------------------------------- safetensors
def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    index = path / "model.safetensors.index.json"
    if index.exists():
        weight_map = json.loads(index.read_text()).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(
                f"{index} has no \"weight_map\" (tensor name -> shard file); "
                "remove the index to read the directory's *.safetensors files"
            )
        shards = [path / s for s in sorted(set(weight_map.values()))]
        absent = [s.name for s in shards if not s.is_file()]
        if absent:
            raise FileNotFoundError(f"{index} names shard {absent[0]}, which is not in {path}")
        return shards
    single = path / "model.safetensors"
    if single.exists():
        return [single]
    found = sorted(path.glob("*.safetensors"))
    if not found:
        raise FileNotFoundError(f"no .safetensors files in {path}")
    return found


def _need_safetensors() -> Any:
    try:
        import safetensors
    except ImportError:
        raise SystemExit(
            "reading checkpoints needs the `safetensors` package: pip install 'tilec[llm]'"
        ) from None
    import safetensors

    return safetensors


def load_safetensors(
    path: str | Path, cfg: Qwen3Config, backend: str = "numpy", device: str = "cuda"
) -> dict[str, Any]:
    """The checkpoint's tensors, checked against `cfg`, as bf16 values
    (NumPy float32 arrays, or torch.bfloat16 tensors on `device`)."""
    _need_safetensors()
    from safetensors import safe_open

    from safetensors import SafetensorError

    want = cfg.shapes()
    out: dict[str, Any] = {}
    for f in _files(Path(path)):
        try:
            # Opened first for both backends: a file that is not a checkpoint
            # (truncated, empty, not safetensors) is one error naming it.
            with safe_open(str(f), framework="numpy") as fh:
                names = list(fh.keys())
        except SafetensorError as e:
            raise ValueError(f"{f} is not a readable safetensors file ({e})") from None
        header = _header(f)
        for name in names:  # the same dtypes on every backend (torch would convert any)
            _check_dtype(header[name]["dtype"], name)
        if backend == "numpy":
            # The NumPy view of a bf16 tensor: read its raw bits.
            raw = np.memmap(f, dtype=np.uint8, mode="r")
            base = 8 + int(np.frombuffer(raw[:8].tobytes(), "<u8")[0])
            for name in names:
                meta = header[name]
                lo, hi = meta["data_offsets"]
                buf = raw[base + lo : base + hi]
                out[name] = _decode(buf, meta["dtype"], tuple(meta["shape"]), name)
        else:
            import torch

            with safe_open(str(f), framework="pt", device="cpu") as fh:
                for name in fh:
                    t = fh.get_tensor(name)
                    out[name] = t.to(device=device, dtype=torch.bfloat16).contiguous()
    if cfg.tie_word_embeddings:
        out.pop("lm_head.weight", None)  # some tied checkpoints store the copy too
    check_weights(out, cfg, f"checkpoint {path}")
    return out


def check_weights(weights: dict[str, Any], cfg: Qwen3Config, what: str = "the weights dict") -> None:
    """Every tensor `cfg` needs, of its shape, and no other (ValueError naming
    the first that is not so): a missing one, a renamed one, one of another
    model's shape (the engine stacks the layers' matrices: a short one would
    run, on the wrong rows, without an error)."""
    want = cfg.shapes()
    have = set(weights) - ({"lm_head.weight"} if cfg.tie_word_embeddings else set())
    missing = sorted(set(want) - have)
    extra = sorted(have - set(want))
    if missing:
        n = len(missing)
        msg = f"{what} lacks {n} tensor{'s' * (n > 1)}, e.g. {missing[0]}"
        if extra:  # a renamed tensor, or another model's checkpoint
            msg += f", and has {len(extra)} this config does not use, e.g. {extra[0]}"
        raise ValueError(msg)
    if extra:
        raise ValueError(f"{what} has tensors this config does not use, e.g. {extra[0]}")
    for name, shape in want.items():
        got = tuple(weights[name].shape)
        if got != shape:
            raise ValueError(f"{name} has shape {got}; the config needs {shape}")


def _header(f: Path) -> dict[str, Any]:
    with open(f, "rb") as fh:
        n = int(np.frombuffer(fh.read(8), "<u8")[0])
        h = json.loads(fh.read(n))
    h.pop("__metadata__", None)
    return h


def _check_dtype(dtype: str, name: str) -> None:
    if dtype not in ("BF16", "F16", "F32"):
        raise ValueError(f"{name}: unsupported dtype {dtype} (bf16, f16 or f32 expected)")


def _decode(buf: np.ndarray, dtype: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    if dtype == "BF16":
        return bf16_bits_to_f32(buf.view("<u2")).reshape(shape)
    if dtype == "F16":
        return round_bf16(buf.view("<f2").astype(np.float32)).reshape(shape)
    if dtype == "F32":
        return round_bf16(buf.view("<f4")).reshape(shape)
    raise ValueError(f"{name}: unsupported dtype {dtype} (bf16, f16 or f32 expected)")


def save_safetensors(
    weights: dict[str, Any], path: str | Path, cfg: Qwen3Config, shards: int = 1
) -> None:
    """Write `weights` as a Hugging Face checkpoint directory: config.json and
    model.safetensors (or `shards` files with an index), bf16."""
    _need_safetensors()
    from safetensors.numpy import save_file

    d = Path(path)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(cfg.to_json())
    names = list(weights)
    groups = [names[i::shards] for i in range(shards)]
    weight_map: dict[str, str] = {}
    for k, group in enumerate(groups):
        fname = (
            "model.safetensors" if shards == 1 else f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        )
        arrays = {n: f32_to_bf16_bits(to_numpy(weights[n])) for n in group}
        save_file(arrays, str(d / fname))
        _retag_bf16(d / fname)
        weight_map.update(dict.fromkeys(group, fname))
    if shards > 1:
        (d / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {}, "weight_map": weight_map}, indent=2)
        )


def _retag_bf16(f: Path) -> None:
    """`safetensors.numpy` has no bf16 dtype: the bits were written as U16;
    mark them BF16 in the header (offsets are relative to the data, so only
    the header is rewritten)."""
    data = f.read_bytes()
    n = int(np.frombuffer(data[:8], "<u8")[0])
    header = json.loads(data[8 : 8 + n])
    for k, v in header.items():
        if k != "__metadata__":
            v["dtype"] = "BF16"
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    f.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + n :])


def to_numpy(a: Any) -> np.ndarray:
    """bf16 values as a float32 NumPy array, from NumPy or torch."""
    if isinstance(a, np.ndarray):
        return a.astype(np.float32, copy=False)
    return a.detach().float().cpu().numpy()
