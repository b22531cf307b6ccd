"""The decode GEMVs as the engine plans them for a big card (132 SMs, sm_90a;
Qwen3-0.6B, 4B and 8B shapes): each kernel's MB (`min_blocks`, the blocks an
SM must hold) gives ptxas the registers it schedules the K step's loads in
(the LM head's weights go through a cp.async ring), and none of them may
spill to local memory (MB 5-6 did, at a third of the bandwidth:
RESULTS.md); the ring decode attention (Plan.tc = 4) streams its
keys through shared memory without spilling. Needs `ptxas`; no GPU."""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Collection
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import TileQwen3, load_kernels, plan_for  # noqa: E402
from model import Qwen3Config  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import TensorFacts, emit_ptx  # noqa: E402
from tilelang.backend.target import Target, ptxas_available  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402

P = tilelang.partition
pytestmark = pytest.mark.skipif(not ptxas_available(), reason="ptxas is not on PATH")


def _op(k, mat: str, cfg: Qwen3Config, plan, pf: tuple[int, int] = (0, 0), pe: int = 0):  # type: ignore[no-untyped-def]
    """The plan's launch for `mat`, on small stand-in arrays (the compiled
    code depends on the generics and the arrays' alignment, not their rows);
    `pe` its PE (`pdl_early`)."""
    h, i, d = cfg.hidden_size, cfg.intermediate_size, cfg.head_dim
    n, kk = {
        "qkv": ((cfg.num_attention_heads + 2 * cfg.num_key_value_heads) * d, h),
        "o": (h, cfg.num_attention_heads * d),
        "gate_up": (i, h),
        "down": (h, i),
        "lm": (cfg.vocab_size, h),
    }[mat]
    gen = (plan.bn[mat], plan.bk[mat], plan.st[mat], plan.mb[mat])
    # a stack of 2 layers (the launches below read layer 1; the LM head one matrix): calloc's pages, which
    # nothing touches (the operations are compiled, never run)
    rows = {"lm": n, "gate_up": 4 * n}.get(mat, 2 * n)
    w, x, g = np.zeros((rows, kk), np.float32), np.zeros(kk, np.float32), np.ones((2, kk), np.float32)
    y = P(np.zeros(n, np.float32), [gen[0]])
    if mat == "lm":
        nb = -(-n // gen[0])
        bm, ba = P(np.zeros(nb, np.float32), [1]), P(np.zeros(nb, np.int32), [1])
        return k.rms_gemv_argmax[gen](y, bm, ba, w, x, g[:1], 1e-6)
    full = (*gen, *pf, 0)  # pf: the next weights' prefetch tile (`Plan.pf`), 5 tiles of `w`
    if mat == "qkv":
        return k.rms_gemv[(*full, pe)](y, w, x, g, 1, 1e-6, w, 0, 5)
    if mat == "gate_up":
        return k.rms_gate_up[(*full, pe)](y, w, x, g, 1, 1e-6, w, 0, 5)
    return k.gemv_add[(*full, pe)](y, w, x, 1, w, 0, 5)


def _facts(op, args=None, early: Collection[str] = ()) -> dict[str, TensorFacts]:  # type: ignore[no-untyped-def]
    """The facts of an operation's tensor arguments (its own arrays, or `args`):
    16-byte aligned and which dims are multiples of 16, as `CudaDevice` derives
    them; `early` the tensors a PDL kernel may read before its wait."""
    args = op._kernel_args(op._hosts) if args is None else args
    return {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in np.asarray(a).shape), False, p.name in early)
            for p, a in zip(op._plan.kir.params, args, strict=True) if isinstance(p, ir.TensorParam)}


def _ptx(op) -> str:  # type: ignore[no-untyped-def]
    """An operation's kernel as PTX for sm_90a, with the facts its arrays give."""
    return emit_ptx(op._plan.kir, "sm_90a", _facts(op))


@pytest.mark.parametrize(("model", "pf"), [("qwen3-0.6b", (0, 0)), ("qwen3-4b", (0, 0)), ("qwen3-8b", (0, 0)),
                                         ("qwen3-4b", (8, 4096))])
def test_planned_gemvs_fit_their_register_budget(model: str, pf: tuple[int, int]) -> None:
    # pf: with the next weights' L2 prefetch after the loop (`Plan.pf`, opt-in:
    # measured slower), on down's unpeeled form as it was measured (peeled,
    # sm_90's default since 2026-12-06, the prefetch adds 8 bytes of spill)
    cfg = Qwen3Config.load(model)
    plan = plan_for(cfg, 2048, 132, hopper=True)
    if pf != (0, 0):
        plan = dataclasses.replace(plan, st={**plan.st, "down": 1})
    k = load_kernels()
    for mat in ("qkv", "o", "gate_up", "down", "lm"):
        mb = plan.mb[mat]
        assert 1 <= mb <= 4, (mat, mb)
        op = _op(k, mat, cfg, plan, pf)
        op.discard()  # built to be compiled, never run
        ptx = _ptx(op)
        assert f".minnctapersm {mb}" in ptx
        r = assemble(ptx, "sm_90a")
        assert r.max_registers * 256 * mb <= 65536, (mat, r.max_registers, mb)
        assert r.max_spill_stores == 0, (model, mat, r.text)
        # the LM head streams its weights through the shared-memory ring (ST
        # 4: copies 3 K steps ahead); the one-wave matrices load into registers
        copies = ptx.count("cp.async.cg.shared.global")
        assert (copies > 0) == (mat == "lm"), (model, mat, copies)


def test_peeled_gemvs_lead_with_their_weights() -> None:
    # ST -1 at the plan's shapes (Qwen3-4B): no spill at the plan's MB, and
    # under PDL "+loads" with the weight and norm marked early (what the
    # runtime decides when the previous launch does not write them) the
    # first K step's weight loads come before `griddepcontrol.wait`, every
    # other load after it; without the marks the wait comes first
    from tilelang.backend import Target, compile_kernel

    cfg = Qwen3Config.load("qwen3-4b")
    base = plan_for(cfg, 2048, 132, hopper=True)
    plan = dataclasses.replace(base, st={**base.st, **dict.fromkeys(("qkv", "o", "gate_up", "down"), -1)})
    k = load_kernels()
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads")
    for mat in ("qkv", "o", "gate_up", "down"):
        op = _op(k, mat, cfg, plan)
        op.discard()  # built to be compiled, never run
        assert assemble(_ptx(op), "sm_90a").max_spill_stores == 0, mat
        kir = op._plan.kir
        args = op._kernel_args(op._hosts)
        for early in (set(), {"w", "g"}):
            ptx = compile_kernel(kir, tgt, _facts(op, args, early)).ptx
            pre, post = ptx[ptx.index(".entry"):].split("griddepcontrol.wait;")
            # the weight tile: BN x BK bf16 over 256 threads in 16-byte chunks (gate and up: two)
            chunks = plan.bn[mat] * plan.bk[mat] * 2 // (256 * 16) * (2 if mat == "gate_up" else 1)
            assert pre.count("ld.global") == (chunks if early else 0), (mat, early)
            assert post.count("ld.global") > 0


@pytest.mark.parametrize(("mat", "shape"), [("gate_up", (8, 256, 4, 3)), ("gate_up", (16, 256, 4, 3)),
                                           ("down", (4, 1024, 4, 3)), ("down", (4, 512, 4, 3))])
def test_many_wave_ring_gemvs_stream_without_spills(mat: str, shape: tuple[int, int, int, int]) -> None:
    # gate/up and down in the LM head's form (small row tiles: 608-1,216
    # blocks of gate/up, 640 of down at Qwen3-4B, several waves at MB 3; ST 4
    # through the cp.async ring): the weights are ringed (copies in the PTX),
    # nothing spills, the registers fit MB blocks an SM
    cfg = Qwen3Config.load("qwen3-4b")
    base = plan_for(cfg, 2048, 132, hopper=True)
    bn, bk, st, mb = shape
    plan = dataclasses.replace(base, bn={**base.bn, mat: bn}, bk={**base.bk, mat: bk},
                               st={**base.st, mat: st}, mb={**base.mb, mat: mb})  # fmt: skip
    op = _op(load_kernels(), mat, cfg, plan)
    op.discard()  # built to be compiled, never run
    ptx = _ptx(op)
    assert ptx.count("cp.async.cg.shared.global") > 0, (mat, shape)
    r = assemble(ptx, "sm_90a")
    assert r.max_registers * 256 * mb <= 65536 and r.max_spill_stores == 0, (mat, shape, r.text)


def _ring_ptx(kern, cfg, plan, merged: bool = False) -> str:  # type: ignore[no-untyped-def]
    """The PTX of one of the ring decode attentions (`kern`, its generics
    given) launched over 2 layers and a 64-position cache at `cfg`'s shapes;
    `merged`: with `attn_decode_ring_merge`'s merged output after the partials."""
    return _ptx(_ring_op(kern, cfg, plan, merged))


def _ring_op(kern, cfg, plan, merged: bool = False):  # type: ignore[no-untyped-def]
    """`_ring_ptx`'s launch, built to be compiled, never run."""
    g, d, hkv, layers, s = cfg.group, cfg.head_dim, cfg.num_key_value_heads, 2, 64
    z = np.zeros
    merged_out = [P(z((hkv, g, d), np.float32), [1, g, d])] if merged else []
    op = kern(
        P(z((hkv, plan.ns * g, d), np.float32), [1, g, d]),
        P(z((hkv, plan.ns * g), np.float32), [1, g]),
        *merged_out,
        z(((g + 2) * hkv, 2, d // 2), np.float32),
        z((layers, d), np.float32),
        z((layers, d), np.float32),
        z((s, d // 2), np.float32),
        z((s, d // 2), np.float32),
        z((layers * hkv, s, d), np.float32),
        z((layers * hkv, s, d), np.float32),
        np.array([s - 1], np.int32),
        1,
        1e-6,
    )
    op.discard()  # built to be compiled, never run
    return op


# (heavy: EA 0 and 1, forms no plan launches (the GPU plans' EA 3 by default), and 0.6B, 4B's kernel at a
# smaller group)
@pytest.mark.parametrize(("ea", "model"), [pytest.param(0, "4b", marks=pytest.mark.heavy),
                                           pytest.param(1, "4b", marks=pytest.mark.heavy), (3, "4b"),
                                           pytest.param(3, "0.6b", marks=pytest.mark.heavy), (3, "8b")])
def test_early_ring_attention_copies_before_forming_the_query(ea: int, model: str) -> None:
    # `attn_decode_ring_early` (Plan.ea) at Qwen3's decode shapes: the
    # ring's first copies (3 key blocks of K and V) come after the query's
    # loads and before the first barrier (the query's norm); in
    # `attn_decode_ring` (ea 0 here) they wait for the query's formation
    # (barriers before them). No spill either way (the default, EA 3, at
    # the three models' shapes)
    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d = cfg.group, cfg.head_dim
    k = load_kernels()
    kern = k.attn_decode_ring_early[g, d // 2, plan.bt, 0, ea] if ea else k.attn_decode_ring[g, d // 2, plan.bt, 0]
    ptx = _ring_ptx(kern, cfg, plan)
    head = ptx.split("cp.async.cg.shared.global")[0]
    assert ("bar.sync" in head) == (ea == 0)
    # the query's rows, its norm weights, the rotary rows (and the token's rows)
    assert head.count("ld.global.nc") >= (6 if ea == 0 else 7 + (4 if ea == 3 else 0))
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


def test_wide_token_choice_assembles_without_spills() -> None:
    # Plan.tw at 4B: `argmax_wide` over the LM head's 9,496 block maxima as one
    # tile of 16,384 in 1,024 threads (64 registers a thread at most): no
    # spill, and every load of the maxima and their tokens before the first
    # barrier (one L2 round trip; the position's load after the reductions)
    n = 9496
    op = load_kernels().argmax_wide[16384, 2048](P(np.zeros(1, np.int32), [1]), P(np.zeros(1, np.int32), [1]),
                                                 P(np.zeros(2048, np.int32), [2048]), np.zeros(n, np.float32),
                                                 np.zeros(n, np.int32))
    op.discard()  # compiled, never run
    ptx = _ptx(op)
    assert re.search(r"\.reqntid (\d+)", ptx).group(1) == "1024"  # type: ignore[union-attr]
    head, _, tail = ptx.partition("bar.sync")
    assert head.count("ld.global") >= 2 * 16 and tail.count("ld.global") == 1
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers <= 64, r.text


# (heavy: EA 0; Plan.aw is opt-in, and EA 3 at 4B and 8B check the same copies and registers)
@pytest.mark.parametrize(("ea", "model"), [(3, "4b"), pytest.param(0, "4b", marks=pytest.mark.heavy), (3, "8b")])
def test_eight_warp_ring_attention_assembles_without_spills(ea: int, model: str) -> None:
    # `attn_decode_ring_w8` (Plan.aw 8) at Qwen3's decode shapes: 256
    # threads, the ring's first copies issued before the key loop (3 key
    # blocks of K and V: 2 chunks of 16 bytes a thread each, each copy twice,
    # in and at the edge) after the query's loads and before its norm (no
    # barrier before them: `ring_split_early` at EA 0 too); ptxas fits it in
    # one block an SM (256 threads' registers) with no spill
    cfg = Qwen3Config.load(f"qwen3-{model}")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d = cfg.group, cfg.head_dim
    ptx = _ring_ptx(load_kernels().attn_decode_ring_w8[g, d // 2, plan.bt, 0, ea], cfg, plan)
    assert ".reqntid 256" in ptx
    pro = re.split(r"cp\.async\.wait_group\s+2;", ptx, maxsplit=1)[0]
    assert pro.count("cp.async.cg.shared.global") == 2 * 3 * 4
    head = ptx.split("cp.async.cg.shared.global")[0]
    assert "bar.sync" not in head and head.count("ld.global.nc") >= 7 + (4 if ea == 3 else 0)
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
    assert r.max_registers * 256 <= 65536


@pytest.mark.parametrize(("ns", "st"), [(16, 16), (32, 16), (16, 4)])
def test_merge_by_rows_has_no_barrier_and_copies_ahead(ns: int, st: int) -> None:
    # `combine_rows` (Plan.mr = ST) at Qwen3's merge shapes (4 query heads a
    # KV head, D 128): one warp, no barrier anywhere (no layout change: each
    # lane folds its 4 columns of every split's row), the rows' ST - 1 first
    # cp.async copies (16 bytes a lane, each twice: in and at the edge)
    # before the first fold's wait, and ptxas spills nothing
    hkv, g, d = 8, 4, 128
    o_part = np.zeros((hkv, ns, g * d), np.float32)
    lse = np.zeros((hkv, ns, g), np.float32)
    attn = np.zeros((hkv, g, d), np.float32)
    op = load_kernels().combine_rows[ns, d, st, 0](tilelang.partition(attn, [1, 1, d]), o_part, lse)
    op.discard()
    ptx = _ptx(op)
    assert ".reqntid 32" in ptx and "bar.sync" not in ptx and "barrier" not in ptx
    pro = re.split(r"cp\.async\.wait_group\s+\d+;", ptx, maxsplit=1)[0]
    assert pro.count("cp.async.cg.shared.global") == 2 * (min(st, ns) - 1)
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


# (heavy: fm 8, the opt-in merge in the last block: test_kernels_sim's
# test_attn_decode_ring_merge_merges_its_splits_in_its_last_block runs its code by default)
@pytest.mark.parametrize("fm", [0, pytest.param(8, marks=pytest.mark.heavy)])
def test_ring_decode_attention_streams_without_spills(fm: int) -> None:
    # `attn_decode_ring` (Plan.tc = 4) at Qwen3-4B's decode shapes (G 4,
    # D 128, key tile 32): K and V are cp.async'd into the shared-memory
    # ring inside the key loop (LDGSTS there), no barrier between the ring's
    # wait and the next block's copies, and ptxas spills nothing at 4 warps;
    # the same with the split merge in its last block (Plan.fm 8,
    # `attn_decode_ring_merge`: the arrival's one atomic a block)
    cfg = Qwen3Config.load("qwen3-4b")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    g, d = cfg.group, cfg.head_dim
    k = load_kernels()
    kern = k.attn_decode_ring_merge[g, d // 2, plan.bt, 0, plan.ns, fm] if fm else k.attn_decode_ring[g, d // 2, plan.bt, 0]
    ptx = _ring_ptx(kern, cfg, plan, merged=bool(fm))
    pro, loop = re.split(r"cp\.async\.wait_group\s+2;", ptx, maxsplit=1)
    # 3 key blocks issued before the loop (K and V: 4 chunks of 16 bytes a
    # thread each; each copy twice, the whole tile inside the cache and the
    # edge tile), then in the loop: the ring's slots read after the wait,
    # the next block copied, no barrier in between
    assert pro.count("cp.async.cg.shared.global") == 2 * 3 * 8
    head = loop.split("cp.async.cg.shared.global")[0]
    assert "ld.shared.v4" in head and "bar.sync" not in head and "ld.global" not in head
    assert loop.split("cp.async.commit_group")[0].count("cp.async.cg.shared.global") == 2 * 8
    assert ptx.count("atom.acq_rel.gpu.global.add.u32") == (1 if fm else 0)
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text


def _zero_weights(cfg: Qwen3Config) -> dict[str, np.ndarray]:
    """A checkpoint's tensors by name, zeros (the kernels are compiled, not run)."""
    return {k: np.zeros(v, np.float32) for k, v in cfg.shapes().items()}


@pytest.mark.parametrize(("model", "fields", "sampling"), [
    pytest.param("qwen3-0.6b", {}, None, marks=pytest.mark.heavy), ("qwen3-4b", {}, (0.7, 0.9, 1)),
    pytest.param("qwen3-8b", {}, None, marks=pytest.mark.heavy),  # (heavy: 4B's kernels at other sizes)
    ("qwen3-4b", {"aw": 8, "mr": 16, "tk": 4096, "tw": 0, "ge": ("o", "down", "attn")}, None),
])
def test_every_planned_kernel_assembles_without_spills(model: str, fields: dict, sampling: tuple | None,  # type: ignore[type-arg]
                                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # every kernel the GPU plan launches in a decode step (both step forms;
    # with `sampling`, the sampler's launches instead of `argmax_wide`; the
    # opt-in 8-warp ring, merge by rows, folded token choice and attention
    # triggering at its entry), at the model's shapes and under the plan's
    # small-tile setting (`Plan.rs`, as the engine compiles them): ptxas
    # (sm_90a) assembles it with no spill, and its block's registers fit an SM
    cfg = Qwen3Config.load(model)
    # (one layer, was 2: the 4B cases' same 14 and 12 kernels, each the same PTX, checked once 2026-12-08; a
    # kernel is compiled once by name and generics, so the second layer only cost its build)
    one = dataclasses.replace(cfg, num_hidden_layers=1)
    plan = dataclasses.replace(plan_for(cfg, 2048, 132, hopper=True), **fields)
    assert plan.rs == 1  # sm_90's plans
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", str(plan.rs))
    eng = TileQwen3(one, _zero_weights(one), max_seq=2048, plan=plan, sampling=sampling)
    seen: dict[tuple[str, tuple[int, ...]], int] = {}
    for ops in eng._form_ops.values():
        for op in ops:
            key = (op.kernel.__name__, tuple(op.generics.values()))
            if key in seen:
                continue
            op.discard()  # built to be compiled, never run
            ptx = _ptx(op)
            r = assemble(ptx, "sm_90a")
            threads = int(re.search(r"\.reqntid (\d+)", ptx).group(1))  # type: ignore[union-attr]
            assert r.max_spill_stores == 0, (key, r.text)
            assert r.max_registers * threads <= 65536, key
            seen[key] = r.max_registers
    names = {n for n, _ in seen}
    opt_in = {"attn_decode_ring_w8", "combine_rows", "argmax_fold"}
    assert opt_in <= names if fields else "attn_decode_ring_early" in names
    choice = "argmax_fold" if fields.get("tk") else "argmax_wide"  # sm_90's plans: `Plan.tw`
    assert ("nucleus_round" in names) == bool(sampling) and (choice in names) != bool(sampling)


@pytest.mark.parametrize("mat", ["qkv", "o", "gate_up", "down"])
def test_gemvs_triggering_at_their_last_iteration_assemble_as_the_plan_does(mat: str) -> None:
    # Plan.gl (PE 2, `pdl_early = 2`) at Qwen3-4B's shapes under sm_90's PDL
    # "late+loads" (the weights early, as the runtime proves them): the
    # trigger sits inside the K loop after the wait (no earlier, and not after
    # the loop as "late" puts it), the peeled first K step's weight loads
    # still lead the wait, and ptxas spills nothing, the registers within the
    # plan's MB blocks an SM and no more than the same GEMV's at PE 0 + 8
    cfg = Qwen3Config.load("qwen3-4b")
    plan = plan_for(cfg, 2048, 132, hopper=True)
    k = load_kernels()
    tgt = Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="loads")
    regs = {}
    for pe in (0, 2):
        op = _op(k, mat, cfg, plan, pe=pe)
        op.discard()
        ptx = emit_ptx(op._plan.kir, tgt, _facts(op, early=("w",)))
        body = ptx[ptx.index(".entry"):]
        wait, trig = body.index("griddepcontrol.wait;"), body.index("griddepcontrol.launch_dependents;")
        assert body.count("griddepcontrol.launch_dependents;") == 1
        if plan.st[mat] < 0:  # the peeled first K step's loads before the wait
            assert "ld.global" in body[:wait]
        if pe == 2:
            assert wait < trig < body.rindex("ld.global")  # in the loop, a K step's loads after it
        else:
            assert body.rindex("ld.global") < trig  # "late": after the loop's loads
        r = assemble(ptx, "sm_90a")
        assert r.max_spill_stores == 0, r.text
        assert r.max_registers * 256 * plan.mb[mat] <= 65536, (mat, r.max_registers)
        regs[pe] = r.max_registers
    assert regs[2] <= regs[0] + 8, regs


def test_short_form_key_tile_of_64_assembles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # `Plan.sbt` 64 (opt-in) at Qwen3-4B's shapes: the short form's early ring
    # attention (EA 3 + the balanced ranges, the plan's small-tile setting)
    # with key tiles of 64, where the long form keeps 32: ptxas spills nothing
    # and its 128 threads fit an SM's registers (255 a thread, ptxas 13.0)
    cfg = Qwen3Config.load("qwen3-4b")
    plan = dataclasses.replace(plan_for(cfg, 2048, 132, hopper=True), sbt=64)
    monkeypatch.setenv("TILEC_REPLICATE_SMALL", str(plan.rs))
    g, d = cfg.group, cfg.head_dim
    r = assemble(_ring_ptx(load_kernels().attn_decode_ring_early[g, d // 2, plan.sbt, 0, plan.ea | 8], cfg, plan),
                 "sm_90a")
    assert r.max_spill_stores == 0 and r.max_registers * 128 <= 65536, r.text
