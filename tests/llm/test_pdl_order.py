"""The decode step's ordering under programmatic dependent launch, on the CPU
(`pdl_order.py`'s model): for the plans sm_90 runs and every PDL mode
`test_engine_gpu.py::test_pdl_decodes_the_same_tokens` runs, no kernel
accesses before its `griddepcontrol.wait` bytes that a launch it may overlap
writes. That GPU test failed once in a loaded run (torch graphs,
"late+prefetch": other tokens from step 7): ptxas had hoisted the step's
`ld.global.nc` loads (`tok` in `embed`, `x` in the GEMVs, the merge's
partials) above the wait; under PDL only the tensors the runtime found no
overlapped launch writes are `.nc` now (`backend/llvm.py`)."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest
from pdl_order import Compiler, launches, races

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

from engine import TileQwen3  # noqa: E402
from model import Qwen3Config, random_weights  # noqa: E402
from plan import plan_for, queue_shapes  # noqa: E402

TINY_UNTIED = dataclasses.replace(Qwen3Config.load("tiny"), tie_word_embeddings=False)
# the GPU test's (trigger, Plan.pe, GEMV stages) configurations: the plan's
# ST; "two": every GEMV at ST 2 (its "tile" API's "+loads" rows); "peel":
# QKV, O, gate/up and down at ST -1 (its "torch" API's "+loads" rows, and the
# rows after them, which keep the last row's stages)
MODES = [("late", 0, "plan"), ("entry", 0, "plan"), ("exit", 0, "plan"), ("late+prefetch", 0, "plan"),
         ("late+bulk", 0, "plan"), ("late+loads", 0, "two"), ("late+loads", 0, "peel"), ("late", 1, "peel"),
         ("late+loads", 1, "peel"), ("last", 0, "peel"), ("last+loads", 0, "two"), ("last+loads", 0, "peel")]


@pytest.fixture(scope="module")
def eng() -> TileQwen3:
    plan = plan_for(TINY_UNTIED, 64, 132, hopper=True)  # an H100's plan: PDL late+loads, ge (o, down), rs 1, tw
    return TileQwen3(TINY_UNTIED, random_weights(TINY_UNTIED, seed=3), max_seq=64, plan=plan, graph=False)


@pytest.fixture(scope="module")
def compiler() -> Compiler:
    return Compiler()


def _step(eng: TileQwen3, over: dict, st: str) -> list:
    plan = plan_for(TINY_UNTIED, 64, 132, hopper=True)
    plan = dataclasses.replace(plan, **over)
    if st == "peel":
        plan = dataclasses.replace(plan, st={**plan.st, **dict.fromkeys(("qkv", "o", "gate_up", "down"), -1)})
    elif st == "two":
        plan = dataclasses.replace(plan, st=dict.fromkeys(plan.st, 2))
    eng.replan(plan)
    return eng._form_ops["short"]  # the GPU test's positions are below fma_until


# by default: the plain trigger, the flake's prologues, and the default's "+loads" in both stage forms
# (each failed before the fix); the rest `heavy`
DEFAULT_MODES = {("late", 0, "plan"), ("late+prefetch", 0, "plan"), ("late+bulk", 0, "plan"),
                 ("late+loads", 0, "peel"), ("late+loads", 0, "two"), ("last+loads", 0, "peel")}


@pytest.mark.parametrize(("mode", "pe", "st"),
                         [m if m in DEFAULT_MODES else pytest.param(*m, marks=pytest.mark.heavy) for m in MODES])
def test_no_kernel_of_the_default_step_reads_early_what_its_window_writes(eng, compiler, mode, pe, st) -> None:  # type: ignore[no-untyped-def]
    assert races(_step(eng, {"pe": pe}, st), mode, compiler, eng.plan.rs) == []


def test_the_code_reader_follows_addresses_and_the_wait() -> None:
    # what `code_of` counts as accessed before the wait: loads, stores and
    # atomics above it through address arithmetic (a select or phi of two
    # tensors' addresses counts both), `!invariant.load` loads anywhere; not
    # plain loads below it, not L2 prefetches, not the parameter list; an
    # address made from an integer is refused
    from pdl_order import code_of

    ll = """declare void @llvm.foo()
define ptx_kernel void @k(ptr addrspace(1) %p.x, ptr addrspace(1) %p.w, ptr addrspace(1) %p.y, ptr addrspace(1) %p.v, ptr addrspace(1) align 4 %arrive) #0 {
entry:
  call void asm sideeffect "griddepcontrol.launch_dependents;", "~{memory}"()
  %a = getelementptr float, ptr addrspace(1) %p.w, i64 4
  %b = getelementptr float, ptr addrspace(1) %a, i64 4
  %p = ptrtoint ptr addrspace(1) %p.v to i64
  call void asm sideeffect "prefetch.global.L2 [$0];", "l"(i64 %p)
  %c = load float, ptr addrspace(1) %b, align 4
  %n = getelementptr i32, ptr addrspace(1) %arrive, i64 1
  %o = atomicrmw add ptr addrspace(1) %n, i32 1 monotonic
  call void asm sideeffect "griddepcontrol.wait;", "~{memory}"()
  %s = select i1 true, ptr addrspace(1) %p.x, ptr addrspace(1) %p.y
  %q = phi ptr addrspace(1) [ %s, %entry ], [ %p.v, %entry ]
  %d = load float, ptr addrspace(1) %q, align 4, !invariant.load !0
  %e = load float, ptr addrspace(1) %p.v, align 4
  store float %d, ptr addrspace(1) %p.y, align 4
  ret void
}
"""
    code = code_of(ll, {"x", "w", "y", "v"})
    assert code.reads == {"w", "x", "y", "v"} and code.writes == {"%arrive"} and code.trigger_first
    assert code.counters == {"%arrive"}
    late = code_of(ll.replace("  call void asm sideeffect \"griddepcontrol.launch_dependents;\", \"~{memory}\"()\n", "", 1)
                   .replace("  ret void", "  call void asm sideeffect \"griddepcontrol.launch_dependents;\", \"~{memory}\"()\n  ret void"),
                   {"x", "w", "y", "v"})
    assert not late.trigger_first
    with pytest.raises(ValueError, match="cannot follow"):
        code_of(ll.replace("%e = load float, ptr addrspace(1) %p.v", "%i = inttoptr i64 %p to ptr addrspace(1)\n"
                           "  %e = load float, ptr addrspace(1) %i"), {"x", "w", "y", "v"})


# one field of sm_90's plan changed at a time (the forms and triggers the
# plan offers): under every mode, in both step forms
VARIANTS = {
    "ge ()": {"ge": ()}, "ge o": {"ge": ("o",)}, "ge gate_up": {"ge": ("gate_up",), "gl": ()}, "ge down": {"ge": ("down",)},
    "ge attn": {"ge": ("attn",)}, "gl": {"ge": (), "gl": ("qkv", "o", "gate_up", "down")},
    "gl gate_up": {"gl": ("gate_up",)}, "gl qkv ea 7": {"gl": ("qkv",), "ea": 7}, "pe": {"pe": 1}, "me": {"me": 1}, "qe": {"qe": 1}, "qe ea 7": {"qe": 1, "ea": 7},
    "ea 0": {"ea": 0}, "ea 1": {"ea": 1}, "st 1": {"st": {"qkv": 1, "o": 1, "gate_up": 1, "down": 1, "lm": 4}},
    "st 2": {"st": dict.fromkeys(("qkv", "o", "gate_up", "down", "lm"), 2)}, "rs 0": {"rs": 0}, "tw 0": {"tw": 0},
    "tk": {"tw": 0, "tk": 16}, "mr": {"mr": 2}, "mg": {"mg": 1}, "om": {"om": (8, 1)}, "fm": {"fm": 4, "ea": 0},
    "qr": {"qr": 1, "ea": 0}, "aw 8": {"aw": 8}, "fl kb": {"fl": 3, "kb": 1}, "kp": {"kp": 16},
    # the GEMV forms with atomics, cleared scratch and the stream's counters (4 SMs' grids)
    "sk": {"sk": dict.fromkeys(("o", "gate_up", "down"), (16, 128, 4, 3, 12))},
    "qg": {"qg": queue_shapes(TINY_UNTIED, 4)},
    "hy": {"hy": {"o": (8, 32, 1, 1, 1, 16, 1), "down": (8, 64, 1, 1, 1, 32, 1)}},
    "xr": {"xr": {"o": (8, 1), "gate_up": (8, 1), "down": (2, 1)}},
    "xr walk": {"xr": {"o": (8, 1, 2), "gate_up": (8, 1, 2), "down": (2, 1, 2)}},
}  # fmt: skip


def test_every_launch_triggering_at_its_entry_widens_no_window_into_a_race(eng, compiler) -> None:  # type: ignore[no-untyped-def]
    # the widest windows: every GEMV, the attention and the merge trigger
    # before their wait (Plan.ge with all four, qe, me), "+loads" reading early
    over = {"ge": ("o", "gate_up", "down", "attn"), "gl": (), "qe": 1, "me": 1, "ea": 7}
    ops = _step(eng, over, "peel")
    assert races(ops, "late+loads", compiler, eng.plan.rs) == []


def test_gemvs_triggering_at_their_last_iteration_bring_no_race(eng, compiler) -> None:  # type: ignore[no-untyped-def]
    # Plan.gl: the trigger inside each GEMV's K loop, after its wait (as the
    # target's "last"), the next GEMV peeled and reading its first K step early
    ops = _step(eng, {"ge": ("o",), "gl": ("qkv", "gate_up", "down")}, "peel")
    assert {op.generics["PE"] for op in ops if op.kernel.__name__ in ("rms_gemv", "rms_gate_up")} == {2}
    assert races(ops, "late+loads", compiler, eng.plan.rs) == []
    # the attention after it reading `pos`, its key range and first K/V blocks before its wait (ea 7)
    ops = _step(eng, {"gl": ("qkv",), "ea": 7}, "plan")
    assert races(ops, "late+loads", compiler, eng.plan.rs) == []
    from pdl_order import pdl_mode

    from tilelang.runtime import cuda_pdl

    seq = launches(ops) + launches(ops)  # the second step's launches have a recorded predecessor
    with pdl_mode("late+loads"):
        cuda_pdl.forget(0x5EED)
        early = [(la.name, cuda_pdl.early_names(0x5EED, la.kernel, la.args, la.grid)) for la in seq]
        cuda_pdl.forget(0x5EED)
    attn = [e for n, e in early[len(ops):] if n.startswith("attn_decode_ring_early")]
    assert attn and all({"kc", "vc", "pos_t"} <= e for e in attn), attn  # not vacuous: it does read early


def test_the_folded_merge_brings_no_race(eng, compiler) -> None:  # type: ignore[no-untyped-def]
    # Plan.fl + kb under "late+loads" (the heavy test above: every mode): the
    # attention's trigger comes before its last block reads the head's shares
    # (the O GEMV after it waits for the whole grid), the group counters; and
    # with every GEMV peeled (h17q_device.sh's FKO: O's first weight tile read
    # before its wait, while the last blocks merge; the merged rows after it)
    for st, kp, fl in (("plan", 0, 3), ("peel", 0, 3), ("plan", 16, 3), ("plan", 0, 7), ("plan", 0, 11)):
        # kp: the QKV prefetching the KV rows; fl 7: no trigger; fl 11: the last split waits and merges
        ops = _step(eng, {"fl": fl, "kb": 1, "kp": kp}, st)
        assert [op.kernel.__name__ for op in ops].count("attn_decode_ring_fold") == TINY_UNTIED.num_hidden_layers
        assert races(ops, "late+loads", compiler, eng.plan.rs) == [], st
    # the fold triggering the O GEMV at its entry ("attn" in ge: its PE 1), O peeled: O's first
    # weight tile read before its wait, during the attention (a form RESULTS' h17r section leaves
    # untried: it needs O's blocks beside the attention's, i.e. one carveout for both)
    for ge in (("o", "down", "attn"), ("down", "attn")):
        ops = _step(eng, {"fl": 11, "kb": 1, "ge": ge}, "peel")
        assert {op.generics["PE"] for op in ops if op.kernel.__name__ == "attn_decode_ring_fold"} == {1}
        assert races(ops, "late+loads", compiler, eng.plan.rs) == [], ge


@pytest.mark.heavy
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_no_plan_field_brings_a_race_under_any_mode(eng, compiler, variant) -> None:  # type: ignore[no-untyped-def]
    ran = 0
    for mode, pe, st in MODES:
        try:
            _step(eng, {**VARIANTS[variant], "pe": pe} if pe else VARIANTS[variant], st)
        except ValueError:  # a form with no early trigger of its own (mg, mr) refuses pe 1
            assert pe
            continue
        for form, ops in eng._form_ops.items():
            assert races(ops, mode, compiler, eng.plan.rs) == [], (variant, mode, form)
        ran += 1
    assert ran >= len(MODES) - 2


@pytest.mark.heavy
def test_the_samplers_launches_bring_no_race_under_any_mode(compiler) -> None:  # type: ignore[no-untyped-def]
    # temperature / top-p sampling: the sampler's rounds over ping-pong buffers after the LM head
    plan = plan_for(TINY_UNTIED, 64, 132, hopper=True)
    eng = TileQwen3(TINY_UNTIED, random_weights(TINY_UNTIED, seed=3), max_seq=64, plan=plan, graph=False,
                    sampling=(0.8, 0.9, 5))
    for mode, pe, st in MODES:
        ops = _step(eng, {"pe": pe}, st)
        assert sum(op._plan.kir.name == "nucleus_round" for op in ops) == 6
        assert races(ops, mode, compiler, eng.plan.rs) == [], mode


def test_the_model_finds_the_races_of_a_runtime_that_reads_too_early(eng, compiler, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # not vacuous: a runtime that let every launch read all it does not
    # write before its wait ("+loads" facts for every read-only tensor) has
    # the QKV GEMV read `x` while the down projection before it may still
    # add into it, the merge read the partials the attention writes, and
    # `embed` read the token the last step's choice writes
    from tilelang.runtime import cuda_pdl

    def everything(stream, kernel, args, grid, count=None, foreign=False):  # type: ignore[no-untyped-def]
        from pdl_order import written
        from tilelang.ir import nodes as ir

        real(stream, kernel, args, grid, count, foreign)  # (the record kept as the runtime keeps it)
        return frozenset(p.name for p in kernel.params if isinstance(p, ir.TensorParam)) - written(kernel)

    real = cuda_pdl.early_names
    monkeypatch.setattr(cuda_pdl, "early_names", everything)
    found = races(_step(eng, {}, "peel"), "late+loads", compiler, eng.plan.rs)
    assert any("(rms_gemv) reads `x`" in r and "(gemv_add)" in r for r in found), found
    assert any("(combine_splits) reads `o_part`" in r and "(attn_decode_ring_early)" in r for r in found), found
    assert any("(embed) reads `tok`" in r and "(argmax_wide)" in r for r in found), found


def test_entry_triggers_widen_the_window(eng, compiler) -> None:  # type: ignore[no-untyped-def]
    # O and down (`Plan.ge`) trigger before their wait (read from their
    # code, not their hints), so the gate/up GEMV's window holds O and the
    # merge before it; the trigger "entry" comes right after the wait
    from pdl_order import window

    one = launches(_step(eng, {}, "plan"))
    names = [launch.name for launch in one]
    codes = [compiler.code(launch, "late") for launch in one]
    assert [n for n, c in zip(names, codes, strict=True) if c.trigger_first] == ["gemv_add"] * 4  # O, down x 2
    gu = names.index("rms_gate_up")
    assert [names[j] for j in window(codes, gu)] == ["gemv_add", "combine_splits"]
    assert [names[j] for j in window(codes, gu + 2)] == ["gemv_add", "rms_gate_up"]  # the next QKV
    entry = [compiler.code(one[j], "entry").trigger_first for j in (gu - 1, gu, gu + 1)]  # O, gate/up, down
    assert entry == [True, False, True]


@pytest.mark.heavy
def test_prefetch_prologue_leaves_every_load_below_the_wait_in_the_sass(eng) -> None:  # type: ignore[no-untyped-def]
    # the flake's form: under "+prefetch" ptxas 13.0 hoisted `embed`'s loads
    # of the token and its embedding row (`ld.global.nc`) above `ACQBULK`;
    # plain loads stay below it, the L2 prefetch (`CCTL.E.PF2`) above
    from gpu_probe import nvdisasm_path
    from ptxas_report import sass

    from tilelang.backend import TensorFacts, compile_kernel
    from tilelang.backend.target import Target, ptxas_available

    if not ptxas_available() or nvdisasm_path() is None:
        pytest.skip("needs ptxas and nvdisasm")
    launch = launches(_step(eng, {}, "plan"))[0]
    assert launch.name == "embed"
    facts = {n: TensorFacts.of_launch(a.ptr, a.shape) for n, a in launch.tensors().items()}
    ptx = compile_kernel(launch.kernel, Target("sm_90a", pdl=True, pdl_trigger="late", pdl_prefetch="prefetch"),
                         facts).ptx
    code = sass(ptx)
    code = code[code.index(".text."):]
    assert code.count("ACQBULK") == 1
    before, after = code.split("ACQBULK")
    assert "CCTL.E.PF2" in before and not re.search(r"\bLDG", before), before
    assert len(re.findall(r"\bLDG\.E", after)) >= 2
