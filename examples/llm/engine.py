"""The Qwen3 decode engine: every kernel of a step is a Tile kernel from
`std::llm` (`stdlib/std/llm.tile`, which imports them from `stdlib/std/llm/`),
called through the Python API.

    eng = TileQwen3(cfg, weights, max_seq=512)          # NumPy -> CPU interpreter
    eng = TileQwen3(cfg, weights, backend="torch")      # torch CUDA tensors -> GPU
    logits = eng.feed(token)       # one step: the token at the next position
    toks = eng.generate(prompt, 100)

Start-up allocates everything a step touches (the KV cache for `max_seq`
positions, the activations, the block maxima of the LM head, the token
history) and builds the step's operations once, with fixed arguments: the
token and its position live in device tensors (`tok`, `pos`) that the last
kernel of the step updates, so the step is the same launches every token.
On the GPU the step is recorded once with `tilelang.graph()` (a CUDA graph)
and replayed per token, `decode` replaying a graph of `burst` steps at a
time; nothing is allocated after start-up. The weights are stacked over the
layers and the kernels take the layer (`_weights`).

A step, per layer (6 launches; split-K adds one for short matrices):
  rms_gemv        qkv = W_qkv (rmsnorm(x) g1)           (Q, K and V in one pass; `Plan.qr`:
                                                         `rms_gemv_rope`, q/k norm weights and rotary too)
  attn_decode_*   flash-decoding splits over the cache  (q: norm + rotary in its prologue, a
                  and the current token                  std::attention loop, the token's k, v)
  combine_splits  merge the splits                      (`Plan.fm`: inside the ring attention,
                                                         `attn_decode_ring_merge`, by its last block;
                                                         `Plan.fl`: in one pass, `attn_decode_ring_fold`)
  gemv_add        x += W_o attn                          (residual add in the epilogue)
                  (`Plan.om`: both in one launch, `merge_gemv_add`: a block a head and
                  rows, the head's merge in its prologue, atomic adds into x)
  rms_gate_up     h = silu(W_g n) (W_u n), n = rmsnorm(x) g2
  gemv_add        x += W_down h
then `kv_append` (every layer's k, v of this token -> cache[pos], one launch),
`rms_gemv_argmax` (final norm + LM head + per-block maxima) and
`argmax_step` or the sampling launches (`sampling_ops`: token choice, pos += 1, history).

Prefill runs a prompt in chunks of rows through `embed_rows`, then per layer
`add_rms_rows` (residual add, RMSNorm -> bf16 rows), `gemm` (QKV),
`rope_kv_rows` (q/k norm, rotary, cache rows), causal `attn_prefill` (bf16
out), `gemm` (O), `add_rms_rows`, `gemm` (gate and up stacked),
`swiglu_rows`, `gemm` (down); a last `add_rms_rows` adds the last output,
then the decode step's last two kernels run on the last row. `gemm` is the
plain tensor-core loop on bf16 operands read straight from memory, which
sm_90a runs as the TMA + wgmma pipeline (128 x 256 tiles); each chunk
length's launches are built once (and captured once on the GPU). The block
shapes, splits and forms of every launch are a `Plan` (`plan.py`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from backends import _Numpy, _Torch
from capture import TorchGraph, capture
from model import Qwen3Config, check_weights
from plan import Plan, _pow2_at_least, check_fold, check_ge, check_key_tiles, check_qr, plan_for
from reference import rope_tables
from steps import decode_step_ops, last_row_ops, prefill_chunk_ops
from tails import check_forms, hybrid_scratch

from tilelang.backend.target import parse_pdl

ROOT = Path(__file__).resolve().parents[2]


def load_kernels(name: str = "llm") -> Any:
    """`std::llm` (or another stdlib module) as a module whose kernels Python calls."""
    import tilelang

    return tilelang.load(ROOT / "stdlib" / "std" / f"{name}.tile")


def _held(ops: list[Any]) -> list[Any]:
    """Operations the engine holds on purpose (a step form or prefill chunk
    that a run may never need, or a plan replaced before it ran): no "never
    run" warning when they are collected (`Operation.discard`)."""
    for op in ops:
        discard = getattr(op, "discard", None)  # Tile operations (all of a step's today)
        if discard is not None:
            discard()
    return ops


def _with_pdl(fn: Any) -> Any:
    """A method that runs decode steps: under the engine's PDL setting
    (`Plan.pdl`) and carveout (`Plan.cv`), the process's own after (other code's launches keep
    theirs). Prefill is not under it (not measured with PDL)."""

    @functools.wraps(fn)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.launch_scope():
            return fn(self, *args, **kwargs)

    return run


@contextlib.contextmanager
def _replicate_small(n: int) -> Iterator[None]:
    """`Plan.rs`: `TILEC_REPLICATE_SMALL` for the launches inside the `with`
    (the kernels compiled for them, whose variant key holds it), the
    process's own after; 0 leaves the process's."""
    if not n:
        yield
        return
    old = os.environ.get("TILEC_REPLICATE_SMALL")
    os.environ["TILEC_REPLICATE_SMALL"] = str(n)
    try:
        yield
    finally:
        if old is None:
            del os.environ["TILEC_REPLICATE_SMALL"]
        else:
            os.environ["TILEC_REPLICATE_SMALL"] = old


def outside_vocabulary(tokens: list[int], vocab: int) -> str | None:
    """The message for the first token id outside 0..vocab-1, or None."""
    bad = next((t for t in tokens if not 0 <= int(t) < vocab), None)
    return None if bad is None else f"token id {bad} is outside the vocabulary (0..{vocab - 1})"


def temperature_problem(temperature: float) -> str | None:
    """Why a sampling temperature cannot be used, or None. The kernels take
    it as an `f32`: a positive value that rounds to 0 (or a subnormal) there
    would divide the logits by zero and pick token 0, where the limit is
    the greedy pick."""
    tiny = float(np.finfo(np.float32).tiny)
    if not temperature > 0:
        return f"must be positive for sampling (got {temperature}); 0 is greedy decoding"
    if temperature < tiny:
        return (
            f"{temperature} is below the smallest normal f32 ({tiny:.3g}), the kernels' "
            "type; use 0 for greedy decoding, which such a temperature approaches"
        )
    return None


class TileQwen3:
    """Batch-1 decode of a Qwen3 model with Tile kernels (see the module doc)."""

    def __init__(
        self,
        cfg: Qwen3Config,
        weights: dict[str, Any],
        *,
        max_seq: int = 256,
        backend: str = "numpy",
        device: str = "cuda",
        sm_count: int | None = None,
        sampling: tuple[float, float, int] | None = None,
        graph: bool | None = None,
        plan: Plan | None = None,
        burst: int = 8,
        graph_api: str = "tile",
    ) -> None:
        import tilelang

        if graph_api not in ("tile", "torch"):
            raise ValueError(f"graph_api is 'tile' or 'torch', not {graph_api!r}")
        self.tl = tilelang
        self.cfg = cfg
        self.be: Any = _Numpy() if backend == "numpy" else _Torch(device)
        hopper = False
        if backend != "numpy":
            import torch

            if sm_count is None:
                sm_count = torch.cuda.get_device_properties(device).multi_processor_count
            hopper = torch.cuda.get_device_capability(device)[0] == 9
        self.seq = _pow2_at_least(max_seq)
        self.plan = plan or plan_for(cfg, self.seq, sm_count, hopper)
        if max_seq < 1:
            raise ValueError(f"max_seq must be at least 1, not {max_seq}")
        if sampling is not None:
            t, p, seed = sampling
            problem = temperature_problem(t)
            if problem:
                raise ValueError(f"sampling temperature {problem}")
            if not 0.0 < p <= 1.0:
                raise ValueError(f"sampling top_p must be in (0, 1], not {p}")
            if not -(2**31) <= int(seed) < 2**31:
                raise ValueError(f"sampling seed {seed} does not fit the sampler's i32")
        check_weights(weights, cfg)  # a short matrix would run on the wrong rows
        self.sampling = sampling  # (temperature, top_p, seed); None: greedy
        self.k = load_kernels()
        # the PDL setting of this engine's launches (`Plan.pdl`), the one
        # `self.k`'s plans were made under; None until `_forms`
        self._pdl: tuple[bool, str, str] | None = None
        self._cv: int | None = None  # the carveout (`Plan.cv`) of the launches under `launch_scope`
        self._weights(weights)
        self._graph: Any = None
        self._burst_graph: Any = None
        self._buffers()
        self._forms()
        self.graph_mode = (backend != "numpy") if graph is None else graph
        # `decode` replays a graph of `burst` steps (the token and position
        # live on the device): one replay's host work per `burst` tokens.
        self.burst = max(1, burst)
        # bursts a host wait covers in `decode` (0: all of a call's, one
        # `replay(times=...)`; 1: a wait after every burst, as before)
        self.bursts_per_wait = 0
        # with a progress callback, `decode` waits and reports this often (tokens)
        self.progress_every = 64
        # "tile": `tilelang.graph()` (every replay checks the borrows and the
        # tensors' memory, then waits); "torch": the decode graphs captured by
        # `torch.cuda.graph` (a replay is PyTorch's: no checks, no wait), to
        # compare the two on the GPU (`benchmarks/decode.py`).
        self.graph_api = graph_api
        self.startup_memory = None

    # -- start-up ----------------------------------------------------------
    def _weights(self, w: dict[str, Any]) -> None:
        """The decode step's weights stacked over the layers (`self.w`: one
        tensor per kind, `[L * N, K]` matrices and `[L, K]` norm weights, the
        kernels take the layer), so a step's launches share a handful of
        tensors; `self.layers` holds each layer's views of them (prefill)."""
        be, c = self.be, self.cfg
        self.emb = be.weight(w["model.embed_tokens.weight"])
        self.lm = self.emb if c.tie_word_embeddings else be.weight(w["lm_head.weight"])
        self.norm = be.weight(w["model.norm.weight"]).reshape(1, -1)
        n = c.num_hidden_layers
        names = {
            "ln1": ["input_layernorm"],
            "qkv": ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"],
            "qn": ["self_attn.q_norm"],
            "kn": ["self_attn.k_norm"],
            "o": ["self_attn.o_proj"],
            "ln2": ["post_attention_layernorm"],
            "gate_up": ["mlp.gate_proj", "mlp.up_proj"],
            "down": ["mlp.down_proj"],
        }
        self.w: dict[str, Any] = {}
        for kind, parts in names.items():
            ts = [w[f"model.layers.{i}.{p}.weight"] for i in range(n) for p in parts]
            self.w[kind] = be.stack(ts) if len(np.shape(ts[0])) == 1 else be.concat(ts)
        self.layers = []
        for i in range(n):
            layer = {}
            for kind, t in self.w.items():
                rows = t.shape[0] // n
                layer[kind] = (
                    t[i] if kind in ("ln1", "ln2", "qn", "kn") else t[i * rows : (i + 1) * rows]
                )
            self.layers.append(layer)

    def _buffers(self) -> None:
        be, c, pl = self.be, self.cfg, self.plan
        d, hq, hkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
        self.tok = be.zeros((1,), "i32")
        self.pos = be.zeros((1,), "i32")
        self.hist = be.zeros((self.seq,), "i32")
        self.x = be.zeros((c.hidden_size,), "f32")
        # every layer's QKV output (layer l's heads are rows l * (hq + 2 hkv) ..):
        # the step's one `kv_append` reads each layer's key and value from it
        self.qkv = be.zeros((c.num_hidden_layers * (hq + 2 * hkv), 2, d // 2), "f32")
        # every layer's cache in one tensor: layer l's heads are rows l * hkv ..
        cache = (c.num_hidden_layers * hkv, self.seq, d)
        self.kc = be.zeros(cache, "bf16")
        self.vc = be.zeros(cache, "bf16")
        cos, sin = rope_tables(c, self.seq)
        self.cos, self.sin = be.table(cos), be.table(sin)
        # flash-decoding partials: per KV head, NS splits of G query heads
        # (one pair per split count the step's forms use)
        self.parts = {
            n: (be.zeros((hkv, n * c.group, d), "f32"), be.zeros((hkv, n * c.group), "f32"))
            for n in sorted({pl.ns, pl.short_ns or pl.ns})
        }
        self.o_part, self.lse_part = self.parts[pl.ns]
        # `Plan.qr`: each head's sum of squares in D / BN shares (`rms_gemv_rope`'s)
        shares = (c.num_hidden_layers * (hq + 2 * hkv), 1, d // pl.bn["qkv"])
        self.qss = be.zeros(shares, "f32") if pl.qr else None
        self.attn = be.zeros((hkv, c.group, d), "f32")  # = [HQ, D]
        self.h = be.zeros((c.intermediate_size,), "f32")
        self.logits = be.zeros((c.vocab_size,), "f32")
        nb = -(-c.vocab_size // pl.bn["lm"])
        self.bmax = be.zeros((nb,), "f32")
        self.barg = be.zeros((nb,), "i32")
        p = pl.prefill
        self.ptoks = be.zeros((p,), "i32")
        self.p0 = be.zeros((1,), "i32")
        self.px = be.zeros((p, c.hidden_size), "f32")
        self.pqkv = be.zeros((p * (hq + 2 * hkv), 2, d // 2), "f32")
        self.pq = be.zeros((hq, self.seq, d), "bf16")
        # the matrix products' bf16 inputs and f32 outputs (plain GEMMs)
        self.pxn = be.zeros((p, c.hidden_size), "bf16")
        self.pd = be.zeros((p, c.hidden_size), "f32")  # a sublayer's output
        self.po = be.zeros((p, hq, d), "bf16")
        self.pgu = be.zeros((p, 2 * c.intermediate_size), "f32")
        self.ph = be.zeros((p, c.intermediate_size), "bf16")
        self._prefill_ops: dict[tuple[int, int, bool], tuple[list[Any], Any]] = {}
        # the streaming GEMVs (`Plan.sk`): gate and up summed into slot l % m
        # of `gu` by layer l's launch, which clears slot l + 1's (the next
        # launch's: m divides the layers, so the next step's first layer finds
        # its slot cleared by the last); a slot is the grid's tiles, >= 2 I.
        # `sk_z`: the grid of the launches that clear nothing (one value a block)
        self.gu = self.sk_z = None
        check_forms(pl, c)  # the queued and hybrid GEMVs, the merge's form (`tails.py`)
        self.hy_z = hybrid_scratch(be, pl, c)
        if pl.sk:
            other = sorted(set(pl.sk) - {"o", "down", "gate_up"})
            if other:
                raise ValueError(f"Plan.sk streams o, down and gate_up, not {other}")
            if "gate_up" in pl.sk:
                _, bk_d, *_ = pl.sk.get("down", (0, 0))
                if "down" not in pl.sk:
                    raise ValueError(
                        "Plan.sk: a streamed gate_up needs a streamed down (it forms silu(g) u)"
                    )
                if c.intermediate_size % bk_d:
                    raise ValueError(
                        f"Plan.sk: down's K tile {bk_d} must divide the MLP's {c.intermediate_size}"
                    )
                if c.num_hidden_layers < 2:
                    raise ValueError(
                        "Plan.sk: a streamed gate_up takes turns over two slots: 2 layers at least"
                    )
                grid = pl.sk["gate_up"][4]
                self.gu_slots = 2 if c.num_hidden_layers % 2 == 0 else c.num_hidden_layers
                self.gu_zb = _pow2_at_least(-(-2 * c.intermediate_size // grid))
                self.gu = [be.zeros((grid * self.gu_zb,), "f32") for _ in range(self.gu_slots)]
            self.sk_z = be.zeros((max(v[4] for v in pl.sk.values()),), "f32")
        self.part = {
            k: be.zeros((s, n), "f32")
            for k, s, n in (
                ("o", pl.splitk["o"], c.hidden_size),
                ("down", pl.splitk["down"], c.hidden_size),
                ("om", hq if pl.om[0] else 1, c.hidden_size),  # merge_gemv_add's partials
            )
            if s > 1
        }

    def _forms(self) -> None:
        """The step's operations in each attention form (`plan.tc` with
        `plan.ns` splits, and `plan.short_tc` with `plan.short_ns` below
        `plan.fma_until`): `self.ops` is the form in use."""
        pl = self.plan
        want = parse_pdl(pl.pdl)  # a ValueError names the choices
        if pl.fm:
            if pl.fm & (pl.fm - 1) or pl.fm < 0:
                raise ValueError(
                    f"Plan.fm must be 0 or a power of two (shares a merge step), not {pl.fm}"
                )
            if 4 not in (pl.tc, pl.short_tc if pl.fma_until > 0 else pl.tc):
                raise ValueError(
                    "Plan.fm merges the ring attention's splits: no step form has tc = 4"
                )
            if pl.om[0]:
                raise ValueError("Plan.fm and Plan.om both replace `combine_splits`: choose one")
        if pl.ea not in (0, 1, 3, 7):
            raise ValueError(
                f"Plan.ea must be 0, 1, 3 or 7 (`attn_decode_ring_early`'s bits), not {pl.ea}"
            )
        if pl.ea and pl.fm:
            raise ValueError(
                "Plan.ea is a form of `attn_decode_ring`, Plan.fm of `attn_decode_ring_merge`: choose one"
            )
        check_fold(pl)
        if pl.rs < 0:
            raise ValueError(f"Plan.rs must be 0 (off), 1 (tiles of up to 16 elements) or N >= 2, not {pl.rs}")
        if pl.aw not in (0, 8):
            raise ValueError(f"Plan.aw must be 0 or 8 (the ring attention's warps), not {pl.aw}")
        check_key_tiles(pl)
        if pl.aw and (pl.fm or pl.qr or pl.ea & 4 or pl.bt % 8 or pl.sbt % 8):
            raise ValueError(
                "Plan.aw 8 is `attn_decode_ring_early`'s loop in 8 warps: it needs fm 0, qr 0, "
                f"ea 0, 1 or 3 and bt a multiple of 8 (fm {pl.fm}, qr {pl.qr}, ea {pl.ea}, bt {pl.bt}, sbt {pl.sbt})"
            )
        check_qr(pl, self.cfg.head_dim)
        check_ge(pl)
        blocks = -(-self.cfg.vocab_size // pl.bn["lm"])  # the LM head's per-block maxima
        if pl.tw and (pl.tk or pl.tw & (pl.tw - 1) or pl.tw < blocks):
            raise ValueError(
                f"Plan.tw (`argmax_wide`) takes the LM head's {blocks} block maxima as one tile: a power of two "
                f">= {blocks} (not {pl.tw}), and Plan.tk 0 (not {pl.tk})"
            )
        from tilelang.runtime import occupancy

        cv = occupancy.parse_carveout(pl.cv)  # a ValueError says why not
        if self._pdl is not None and (want, cv) != (self._pdl, self._cv):
            self.k = load_kernels()  # plans made under the new setting
        self._pdl, self._cv = want, cv
        self._form_ops = {"long": self._step_ops(pl.tc, pl.ns)}
        short = (pl.short_tc, pl.short_ns or pl.ns)
        if pl.fma_until > 0 and (pl.tc, pl.ns) != short:
            self._form_ops["short"] = self._step_ops(*short)
        for ops in self._form_ops.values():
            _held(ops)
        self._form = "long"
        self._stash: dict[str, tuple[Any, Any]] = {}
        self.ops = self._form_ops["long"]

    @contextlib.contextmanager
    def launch_scope(self) -> Iterator[None]:
        """The decode steps' launch settings (`Plan.pdl`, `Plan.cv`) for the
        launches inside the `with`, the process's own after."""
        from tilelang.runtime import cuda_pdl, occupancy

        assert self._pdl is not None
        with cuda_pdl.scoped(*self._pdl), occupancy.scoped(self._cv), _replicate_small(self.plan.rs):
            yield

    def _use_form(self, position: int, steps: int) -> None:
        """The form for `steps` steps from `position` (short while all of
        them are below `plan.fma_until`), with its graphs."""
        self._switch(self._form_of(position, steps))

    def _switch(self, form: str) -> None:
        if form != self._form:
            self._stash[self._form] = (self._graph, self._burst_graph)
            self._graph, self._burst_graph = self._stash.pop(form, (None, None))
            self._form = form
            self.ops = self._form_ops[form]

    def _capture_forms(self, steps: int) -> None:
        """The graph of `steps` steps (1, or `burst`) of every form at once,
        each run once (the kernels loaded, the CUDA graph instantiated): a
        form first needed in the middle of a decode then allocates nothing
        (device memory stays constant after start-up). A warm-up run writes
        what the real steps write again (cache rows past the position, the
        history); the token and the position are put back."""
        form = self._form
        tok, pos = self.be.read(self.tok).copy(), self.be.read(self.pos).copy()
        for f in self._form_ops:
            self._switch(f)
            if (self._graph if steps == 1 else self._burst_graph) is not None:
                continue
            g = self._capture_step(steps)
            if steps == 1:
                self._graph = g
            else:
                self._burst_graph = g
            if f != form and g is not None and not isinstance(g, TorchGraph):
                g.replay()  # (a TorchGraph ran its steps before capturing them)
                self.be.write(self.tok, tok)
                self.be.write(self.pos, pos)
        self._switch(form)

    def _step_ops(self, tc: int, ns: int) -> list[Any]:
        """The operations of one decode step (`steps.decode_step_ops`)."""
        return decode_step_ops(self, tc, ns)

    def replan(self, plan: Plan) -> None:
        """Another plan (block shapes, splits, attention forms) over the same
        weights: new buffers (the KV cache too) and step operations. A plan
        refused (a ValueError saying why) leaves the engine on its previous
        plan, with fresh buffers (never a new plan beside the old steps)."""
        old, self.plan = self.plan, plan
        self._graph = self._burst_graph = None
        try:
            self._buffers()
            self._forms()
        except ValueError:
            self.plan = old
            self._buffers()
            self._forms()
            raise

    def _prefill_step_ops(self, p0: int, m: int) -> list[Any]:
        """The launches of one prefill chunk (`steps.prefill_chunk_ops`)."""
        return prefill_chunk_ops(self, p0, m)

    def _last_row_ops(self, m: int) -> list[Any]:
        """Logits and the token choice from row m - 1 (`steps.last_row_ops`)."""
        return last_row_ops(self, m)

    def prefill(self, tokens: list[int]) -> None:
        """Run a prompt from position 0 with the batched kernels (chunks of
        `plan.prefill` rows): fills the cache, leaves the first generated
        token in `tok` and the position after the prompt in `pos`, as
        `prompt` does token by token."""
        n, chunk = len(tokens), self.plan.prefill
        self._check_prompt(tokens)
        for p0 in range(0, n, chunk):
            part = tokens[p0 : p0 + chunk]
            m = len(part)
            self.be.write(self.ptoks[:m], np.asarray(part, np.int32))
            self.be.write(self.p0, np.array([p0], np.int32))
            last = p0 + m == n
            key = (p0, m, last)
            if key not in self._prefill_ops:
                ops = self._prefill_step_ops(p0, m) + (self._last_row_ops(m) if last else [])
                self._prefill_ops[key] = (_held(ops), None)
            ops, graph = self._prefill_ops[key]
            if last:
                self.be.write(self.pos, np.array([n - 1], np.int32))
            if graph is None and self.graph_mode:
                graph = self._capture(ops)
                self._prefill_ops[key] = (ops, graph)
            if graph is not None:
                graph.replay()
            else:
                for op in ops:
                    op.sync()

    # -- running -------------------------------------------------------------
    @_with_pdl
    def _run_step(self, position: int | None = None) -> None:
        """One step at `position` (None: read from the device when the plan
        has two forms)."""
        if len(self._form_ops) > 1:
            self._use_form(self.position if position is None else position, 1)
        if self.graph_mode and self._graph is None:
            self._capture_forms(1)
        if self._graph is not None:
            self._graph.replay()
            return
        for op in self.ops:
            op.sync()

    @_with_pdl
    def _run_bursts(self, position: int, count: int = 1) -> None:
        """`count` bursts of `burst` steps from `position` (the step's
        launches recorded `burst` times in one graph, replayed `count` times
        with one wait: `Graph.replay(times=...)`), all in the form of the
        first (the caller keeps them on one side of `plan.fma_until`); step
        by step without graphs."""
        self._use_form(position, self.burst)
        if self.graph_mode and self._burst_graph is None:
            self._capture_forms(self.burst)
        if self._burst_graph is not None:
            self._burst_graph.replay(times=count)
            return
        for i in range(self.burst * count):
            self._run_step(position + i)

    @_with_pdl
    def _run_steps(self, position: int, count: int) -> None:
        """`count` single steps from `position`, all in the form of the
        first (the caller keeps them on one side of `plan.fma_until`): the
        one-step graph replayed `count` times with one wait."""
        if len(self._form_ops) > 1:
            self._use_form(position, 1)
        if self.graph_mode and self._graph is None:
            self._capture_forms(1)
        if self._graph is not None:
            self._graph.replay(times=count)
            return
        for _ in range(count):
            for op in self.ops:
                op.sync()

    def _form_of(self, position: int, steps: int) -> str:
        short = "short" in self._form_ops and position + steps <= self.plan.fma_until
        return "short" if short else "long"

    def _same_form(self, position: int, steps: int, count: int) -> int:
        """How many of `count` runs of `steps` steps from `position` take the
        form of the first (the short one only while all of a run's
        positions are below `plan.fma_until`)."""
        if self._form_of(position, steps) == "long":
            return count
        return max(1, min(count, (self.plan.fma_until - position) // steps))

    def _capture_step(self, steps: int) -> Any:
        """A graph of `steps` decode steps: `_capture`'s, or PyTorch's (`graph_api`)."""
        if self.graph_mode and self.graph_api == "torch":
            return TorchGraph(self, self.ops, steps)
        return self._capture(self.ops * steps)

    def _capture(self, ops: list[Any]) -> Any:
        """One graph for `ops` (`capture.capture`)."""
        return capture(self, ops)

    @property
    def position(self) -> int:
        return int(self.be.read(self.pos)[0])

    def reset(self) -> None:
        """Start a new sequence at position 0 (the cache is overwritten as it goes)."""
        self.be.write(self.pos, np.zeros(1, np.int32))

    def feed(self, token: int) -> np.ndarray:
        """Run one step on `token` at the current position; its logits."""
        self.be.write(self.tok, np.array([token], np.int32))
        self._run_step()
        return self.be.read(self.logits)

    def _check_prompt(self, tokens: list[int]) -> None:
        """A prompt fits the cache and names tokens of the vocabulary (the
        embedding's gather would read a row of zeros past its end: a wrong
        answer, not an error, so it is refused here)."""
        if not tokens:
            raise ValueError("the prompt needs at least one token")
        if len(tokens) + 1 > self.seq:
            raise ValueError(f"the prompt needs {len(tokens) + 1} positions; max_seq is {self.seq}")
        bad = outside_vocabulary(tokens, self.cfg.vocab_size)
        if bad:
            raise ValueError(bad)

    def prompt(self, tokens: list[int]) -> None:
        """Feed a prompt (teacher-forced, one step per token)."""
        self._check_prompt(tokens)
        for t in tokens:
            self.be.write(self.tok, np.array([t], np.int32))
            self._run_step()

    def decode(self, n: int, progress: Any = None) -> list[int]:
        """Generate `n` tokens after what was fed: each step feeds back the
        token the previous one chose (on the device), so the host only
        replays: `burst` steps a replay while at least `burst` remain, then
        one a replay, and every run of replays of one graph and form with
        one wait (`Graph.replay(times=...)`), so that the GPU does not idle
        while the host returns and replays again. With `progress`, the host
        waits (and reports) at least every `progress_every` tokens."""
        start = self.position
        if start + n > self.seq:
            raise ValueError(f"{start + n} positions needed; max_seq is {self.seq}")
        every = max(1, self.progress_every) if progress is not None else n
        i = 0
        while i < n:
            p = start + i
            if self.burst > 1 and n - i >= self.burst:
                k = (n - i) // self.burst
                k = self._same_form(p, self.burst, min(k, max(1, every // self.burst)))
                k = min(k, self.bursts_per_wait) if self.bursts_per_wait else k
                self._run_bursts(p, k)
                i += k * self.burst
            else:
                k = self._same_form(p, 1, min(n - i, every))
                self._run_steps(p, k)
                i += k
            if progress is not None:
                progress(i)
        self.be.sync()
        # The step at position p wrote its choice to hist[p + 1].
        return [int(t) for t in self.be.read(self.hist[start + 1 : start + 1 + n])]

    def generate(
        self, prompt: list[int], n: int, progress: Any = None, batched: bool = True
    ) -> list[int]:
        """The prompt (batched prefill, or token by token), then `n` new
        tokens (greedy or sampled, as configured)."""
        if not prompt:
            raise ValueError("the prompt needs at least one token")
        self.reset()
        if batched:
            self.prefill(prompt)
        else:
            self.prompt(prompt)
        # The prompt's last step chose the first new token and left it in `tok`.
        first = int(self.be.read(self.tok)[0])
        if n <= 1:
            return [first][:n]
        rest = self.decode(n - 1, progress)
        return [first, *rest]


def hbm_bytes_per_token(cfg: Qwen3Config, context: int) -> int:
    """The bytes a batch-1 decode step must read: all weights and the KV cache."""
    return cfg.weight_bytes() + cfg.kv_bytes(context)


def timed(fn: Any, sync: Any) -> float:
    sync()
    t = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run examples/llm/generate.py")
