"""Thread ids inside a warp role are the role's (hrev20). The code generator's helpers picked "thread 0", a lane,
a warp or a thread's elements of a layout from the block-wide thread id (`%tid`); a role's layouts are assigned
over its own warps (`layout_assign`), so inside a role that does not start at warp 0 they elected no thread or
the wrong one (the attention consumers' accumulator rows `AccView`, `%tid < 4` as the owner of a row vector,
chunked elements, reductions, `print`'s and a scalar atomic's thread 0). No pipeline put such an op in a role of
a nonzero warp yet: the attention pipeline's consumers come first (warp 0) and the GEMM's consumers (warp 4) run
only its epilogue's per-register ops. Now each helper reads `EmitterCore.tid0()` (the id relative to the role,
made in the entry block) and a role's thread count; outside roles and in a role of warp 0 both are what they
were (the 126 tuned kernels' PTX is byte-identical). The test puts the attention consumers after the producer
(warps 4-7): before the fix most of a user's ALiBi attention came out wrong in llsim (64 % at 150 keys)."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

import numpy as np
import pytest
from llsim import SimDevice, sim_runtime_device

import tilelang.backend as backend
import tilelang.run as run
from tilelang import driver
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g

A12 = (Path(__file__).parents[1] / "user" / "programs" / "a12_alibi_softcap_attention.tile").read_text(encoding="utf-8")
SRC = A12.replace("let h = 4;", "let h = 1;").replace("let s = 100;", "let s = 64;")


def _facts() -> dict[str, TensorFacts]:
    """The launch's facts, in the short keys' variant the runtime takes for 64 keys (`facts.Short`), whose
    consumers broadcast the slope through scratch shared memory (hrev19)."""
    shapes = {"o": (1, 64, 64), "q": (1, 64, 64), "k": (1, 64, 64), "v": (1, 64, 64), "slopes": (1,)}
    facts = {n: TensorFacts.of_launch(0, s) for n, s in shapes.items()}
    facts["k"] = dataclasses.replace(facts["k"], rows_at_most=512)
    return facts


def _producer_first(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Lowering puts the attention consumers after the producer: their role starts at warp 4."""
    lower = backend.lower_gpu

    def swapped(kernel, arch, facts):  # type: ignore[no-untyped-def]
        gk = lower(kernel, arch, facts)
        ops = []
        for op in gk.body.ops:
            if isinstance(op, g.WarpSpecialize) and [r.name for r in op.roles] == ["consumer", "producer"]:
                op = dataclasses.replace(op, roles=op.roles[::-1])
            ops.append(op)
        return dataclasses.replace(gk, body=dataclasses.replace(gk.body, ops=tuple(ops)))

    monkeypatch.setattr(backend, "lower_gpu", swapped)


def _block_wide_reads(text: str) -> dict[str, list[str]]:
    """For each warp role that does not start at thread 0 (its region: its label to the next role's; its first
    thread: the `%tid - base` it computes), the instructions that read a value made from the block-wide `%tid`
    other than its lane (`%tid & 31` and below) or the role's own id."""
    defs = dict(re.findall(r"^  (%[\w.]+) = (.*)$", text, re.M))
    labels = list(re.finditer(r"^(role_\w+?|roles_done)\d+:", text, re.M))
    out: dict[str, list[str]] = {}
    for m, nxt in zip(labels, labels[1:], strict=False):
        body = text[m.end():nxt.start()]
        base = re.search(r"= sub i32 %tid, (\d+)$", body, re.M)
        if m.group(1) in ("roles_done", "role_next") or base is None:
            continue
        made: set[str] = {"%tid"}
        for name, rhs in defs.items():  # (SSA: a definition follows its operands in the text, but for phis)
            lane = re.fullmatch(r"and i32 %tid, (\d+)", rhs)
            if rhs == f"sub i32 %tid, {base.group(1)}" or lane and int(lane.group(1)) < 32:
                continue
            if set(re.findall(r"%[\w.]+", rhs)) & made:
                made.add(name)
        out[m.group(0)] = [line for line in body.splitlines() if not line.endswith(f"sub i32 %tid, {base.group(1)}")
                           and set(re.findall(r"%[\w.]+", line.split(" = ", 1)[-1])) & made]
    return out


def test_a_role_of_warp_4_reads_its_own_thread_ids(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _producer_first(monkeypatch)
    k = next(x for x in driver.compile(SRC, "ir").output if x.name == "alibi_attn")
    facts = _facts()
    text = SimDevice("sm_90a").compile(k, facts)[0].source
    assert re.search(r"^role_producer\d+:", text, re.M).start() < re.search(r"^role_consumer\d+:", text, re.M).start()
    entry = text[text.index("entry:"):text.index("start:")]
    assert "%tid.r128 = sub i32 %tid, 128" in entry  # the consumers' row geometry: rows of warp (%tid - 128) / 32
    assert re.search(r"lshr i32 %tid\.r128, 5", entry) and not re.search(r"icmp ult i32 %tid, 4\b", entry)
    # every op the consumers run, not only those the values below exercise (before: 126 instructions of the
    # consumers' role read the block's `%tid` through the rows of `AccView` and its owner test)
    got = _block_wide_reads(text)
    assert len(got) == 1 and not any(got.values()), got  # (the consumers: the producer runs at warp 0 now)
    assert any(_block_wide_reads(text.replace("%tid.r128", "%tid")).values())  # (the check sees them)


def test_a_role_of_warp_4_computes_the_interpreters_values(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    want = run.execute(SRC, "cpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
    _producer_first(monkeypatch)
    monkeypatch.setattr(run, "make_device", lambda choice, o: sim_runtime_device("sm_90a", sms=8))
    got = run.execute(SRC, "cpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=2e-3, atol=2e-3)


def test_the_gemm_consumers_of_warp_4_read_their_own_ids() -> None:
    """The Hopper GEMM's consumers start at warp 4 (the producer first): its epilogue's ops, in every form the
    epilogue tests run (one tile a CTA, the pingpong's two consumer roles of warps 4 and 8), read the roles'
    own ids."""
    import os
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import hgemm4_device

    epi = """let col = arange::<i32>(BN) + block_id(1) * BN;
    let t = scale.partition([1]).load([1]).item() * s;
    c.store(where((col < n).reshape([1, BN]), acc * t + bias.partition([BN]).load([block_id(1)]).reshape([1, BN]),
        -1.0) as f32);"""
    src = hgemm4_device.SRC.replace("EPILOGUE", epi).replace("OUT", "f32").replace("BT", "f32")
    main = ("fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f32>([8]); let s = zeros::<f32>([8]);"
            " let mut c = zeros::<f32>([8, 8]);"
            " mm::<64, 64, 16>(c.partition([64, 64]), &a, &a, &b, &s, 0.5, 7).sync(); }\n")
    k = driver.compile(src + main, "ir").output[0]
    facts = {n: TensorFacts(True, tuple(d % 16 == 0 for d in sh)) for n, sh in
             {"c": (100, 150), "a": (100, 48), "w": (150, 48), "bias": (150,), "scale": (100,)}.items()}
    for persistent, roles in (("0", 1), ("2", 2)):
        os.environ["TILEC_GEMM_PERSISTENT"] = persistent
        try:
            text = SimDevice("sm_90a").compile(k, facts)[0].source
        finally:
            del os.environ["TILEC_GEMM_PERSISTENT"]
        got = _block_wide_reads(text)
        assert len(got) == roles and not any(got.values()), got


def test_outside_roles_the_thread_id_is_the_blocks() -> None:
    """A kernel without roles reads `%tid` itself: no `%tid.r` line (its LLVM as before)."""
    src = ("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) { z.store(x.load_like(z)"
           " + x.load_like(z).sum(0)); }\n"
           "fn main() { let x = ones::<f32>([256]); let mut z = zeros::<f32>([256]); k(z.partition([128]), &x).sync(); }")
    k = driver.compile(src, "ir").output[0]
    facts = {"z": TensorFacts.of_launch(0, (256,)), "x": TensorFacts.of_launch(0, (256,))}
    text = SimDevice("sm_90a").compile(k, facts)[0].source
    assert "%tid.r" not in text and "%tid" in text


def test_two_roles_exchanging_through_one_scratch_area_are_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The GEMM's pingpong consumers (`Role.slot` 0 and 1) run at the same time; each stages its stores in an area
    of its own (`hopper.store_wgmma`), but any other scratch exchange starts at the scratch's byte 0 and a
    role's barrier orders only its threads. Two roles that both exchange (here the attention consumers' `.item()`
    broadcast, the consumer role run twice as slots 0 and 1) are refused by the emitter (before: emitted, the
    two roles' writes to byte 0 unordered)."""
    lower = backend.lower_gpu

    def twice(kernel, arch, facts):  # type: ignore[no-untyped-def]
        gk = lower(kernel, arch, facts)
        ops = []
        for op in gk.body.ops:
            if isinstance(op, g.WarpSpecialize) and [r.name for r in op.roles] == ["consumer", "producer"]:
                c, p = op.roles
                op = dataclasses.replace(op, roles=(c, dataclasses.replace(c, slot=1), p))
            ops.append(op)
        return dataclasses.replace(gk, body=dataclasses.replace(gk.body, ops=tuple(ops)))

    k = next(x for x in driver.compile(SRC, "ir").output if x.name == "alibi_attn")
    facts = _facts()
    text = SimDevice("sm_90a").compile(k, facts)[0].source  # one consumer role: its exchange is its own
    assert re.search(r"barrier\.cta\.sync\.aligned\.count\(i32 14, i32 128\)", text)
    monkeypatch.setattr(backend, "lower_gpu", twice)
    with pytest.raises(AssertionError, match=r"used by two warp roles that run at the same time \(`consumer` and "
                                             r"`consumer` \(slot 1\)\)"):
        SimDevice("sm_90a").compile(k, facts)
