"""std::llm's decode kernels with small tiles held whole by every thread
(`TILEC_REPLICATE_SMALL=1`, the engine's `Plan.rs`) in the simulator of the
NVPTX IR (racecheck on), against the interpreter: the checks of
`test_kernels_sim.py` for the kernels the option changes (every decode
attention form, those no GPU plan launches by default `heavy`; the split
merges, the cache append), run again with it on (`combine_rows` and the
prefill's row kernels: their LLVM is checked to be unchanged);
and one decode step of the tiny model's GPU
plan, every launch of each step form in the simulator, against the same
step in the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
import test_kernels_sim as base
from llsim import SimDevice
from test_gemv_registers import _facts

import tilelang

P = tilelang.partition


@pytest.fixture(autouse=True)
def _replicate_small(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")


# The option is off by default in the process, on in the engine's sm_90 plans (`Plan.rs` 1, `plan_for`); the
# default run keeps it on the attention forms the GPU plans launch by default (the ring, TC 4, and the early
# ring, EA 3), the opt-in 8-warp ring at EA 3, the merges, the cache append and the prefill's row kernels. `heavy`: the forms no GPU plan launches by default (TC 0, 1, 2
# and EA 1: each runs without the option in test_kernels_sim.py) and the 8-warp ring at EA 0.
HEAVY = pytest.mark.heavy


@pytest.mark.parametrize("tc", [pytest.param(0, marks=HEAVY), pytest.param(1, marks=HEAVY),
                                pytest.param(2, marks=HEAVY), 4])
def test_attn_decode(k, tc: int) -> None:  # type: ignore[no-untyped-def]
    base.test_attn_decode_folds_the_current_token_into_the_last_split(k, tc)


@pytest.mark.parametrize("ea", [pytest.param(1, marks=HEAVY), 3])
def test_attn_decode_ring_early(k, ea: int) -> None:  # type: ignore[no-untyped-def]
    base.test_attn_decode_ring_early_gives_the_ring_attentions_shares(k, ea)


@pytest.mark.parametrize("ea", [pytest.param(0, marks=HEAVY), 3])
def test_attn_decode_ring_w8(k, ea: int) -> None:  # type: ignore[no-untyped-def]
    base.test_attn_decode_ring_w8_gives_the_ring_attentions_shares(k, ea)


def test_attn_decode_ring_merge(k) -> None:  # type: ignore[no-untyped-def]
    base.test_attn_decode_ring_merge_merges_its_splits_in_its_last_block(k, 2)


@pytest.mark.parametrize("dc", [32, 8])
def test_combine_splits(k, dc: int) -> None:  # type: ignore[no-untyped-def]
    base.test_combine_splits(k, dc)


def test_kv_append(k) -> None:  # type: ignore[no-untyped-def]
    base.test_kv_append_writes_every_layer_once_a_step(k)


def _llvm(op) -> str:  # type: ignore[no-untyped-def]
    """`op`'s kernel as LLVM for sm_90a, with the facts its arrays give (as `SimDevice.run` derives them)."""
    from tilelang.backend import lower_gpu
    from tilelang.backend.llvm import emit_llvm_text

    kir = op._plan.kir
    facts = _facts(op)
    gk = lower_gpu(kir, "sm_90a", facts)
    op.discard()  # compiled, never run
    return emit_llvm_text(gk, gk.facts)[0]


def test_the_option_leaves_combine_rows_and_the_prefill_row_kernels_alone(k, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`combine_rows` and the prefill's row kernels (`add_rms_rows`, `swiglu_rows`) at test_kernels_sim.py's
    shapes are the same LLVM text with the option on and off: their simulations there are theirs with it on
    too (run again here they were the same launches)."""
    z = np.zeros
    hkv, g, d, m, kk, i = 2, 4, 128, 3, 2560, 1024
    ops = [lambda: k.add_rms_rows[4096](P(z((m, kk), np.float32), [1, 4096]), P(z((m, kk), np.float32), [1, 4096]),
                                        z((m, kk), np.float32), z(kk, np.float32), True, 1e-6),
           lambda: k.swiglu_rows[512](P(z((m, i), np.float32), [1, 512]), z((m, 2 * i), np.float32))]
    ops += [lambda ns=ns, st=st: k.combine_rows[ns, d, st, 0](P(z((hkv, g, d), np.float32), [1, 1, d]),
                                                          z((hkv, ns, g * d), np.float32), z((hkv, ns, g), np.float32))
            for ns, st in ((8, 8), (8, 3), (16, 16))]
    for make in ops:
        on = _llvm(make())
        monkeypatch.setenv("TILEC_REPLICATE_SMALL", "0")
        assert _llvm(make()) == on
        monkeypatch.setenv("TILEC_REPLICATE_SMALL", "1")


def _step(form: str, sim: bool, splits: tuple[int, int] | None) -> dict[str, np.ndarray]:
    """One decode step of the tiny model under the GPU plan (132 SMs,
    Hopper), position 5, in the interpreter or with every launch in the
    simulator: the residual stream and the logits after it. `splits`: the
    long and the short form's splits a KV head in place of the plan's own
    (32 and 16; None keeps them)."""
    import dataclasses

    from engine import TileQwen3, plan_for
    from model import Qwen3Config, random_weights

    cfg = Qwen3Config.load("tiny")
    plan = plan_for(cfg, 64, 132, hopper=True)
    if splits is not None:
        plan = dataclasses.replace(plan, ns=splits[0], short_ns=splits[1])
    eng = TileQwen3(cfg, random_weights(cfg, 0), max_seq=64, plan=plan)
    eng.be.write(eng.pos, np.array([5], np.int32))
    for op in eng._form_ops[form]:
        if not sim:
            op.sync()
            continue
        args = op._kernel_args(op._hosts)
        kir = op._plan.kir
        facts = _facts(op, args)
        SimDevice("sm_90a").run(kir, op.grid, args, facts)
    return {"x": np.array(eng.x), "logits": np.array(eng.logits)}


@pytest.mark.slow
# (heavy: the short form: its launches but the attention and its merge are the long form's, the same LLVM on
# the same buffers (the GEMVs, norms and cache append: `llsim.MEMO` hits when both run in one process); its early
# ring at 2 splits and their merge run with the option in test_attn_decode_ring_early[3] and
# test_combine_splits; the long form keeps the whole step in the default run)
@pytest.mark.parametrize("form", ["long", pytest.param("short", marks=HEAVY)])
@pytest.mark.parametrize(
    "splits",
    [
        pytest.param((4, 2), id="splits4-2"),
        # the plan's own 32 and 16 splits: the same kernels with the same
        # constants as (4, 2) (the splits are the attention's grid and
        # `combine_splits`' count), 8x the attention's blocks; at position 5
        # as with (4, 2) the first split has the one cached key block, the
        # others none and the last folds in the current token
        pytest.param(None, marks=pytest.mark.heavy, id="plan-splits"),
    ],
)
def test_a_decode_step_of_the_gpu_plan(form: str, splits: tuple[int, int] | None) -> None:
    # both step forms (the long cache's splits and the short one's), every
    # launch in the simulator with the option on, as the interpreter steps
    want, got = _step(form, False, splits), _step(form, True, splits)
    for name in want:
        scale = float(np.abs(want[name]).max())
        assert scale > 0.01, name
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4 * scale, err_msg=name)
    assert int(np.argmax(got["logits"])) == int(np.argmax(want["logits"]))
