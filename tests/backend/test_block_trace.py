"""The block timeline (`TILEC_TRACE=blocks`: `backend/codegen/trace.py`,
`runtime/trace.py`).

CPU: off, a kernel's LLVM text and PTX are the untraced kernel's (the traced
text less its stamp lines is the untraced text, and the PTX has no stamp);
on, the PTX has the stamps where they belong and assembles for sm_90a and
sm_80; llsim runs traced kernels (a plain one, a PDL one, the Hopper GEMM
with warp roles) and the host decodes what they wrote; the decoder's
launches, gaps, tails, idle SM time, ring wrap and JSON; on the CPU the
session says there are no blocks. GPU (marked `gpu`): one launch and a graph
replayed three times record every block, once, with sane times.
"""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest

from tilelang.backend import compile_kernel
from tilelang.backend.codegen import trace as layout
from tilelang.backend.llvm import emit_llvm_text
from tilelang.backend.target import Target, ptxas_available, run_ptxas
from tilelang.ir.samples import gemm, row_softmax, vector_add
from tilelang.runtime import trace

KERNELS = {"vector_add": lambda: vector_add(256), "gemm": lambda: gemm(32, 32, 16),
           "row_softmax": lambda: row_softmax(4, 64)}


def _strip(text: str) -> str:
    """The traced LLVM text less what `codegen/trace.py` adds."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if "trace" in line or line.startswith("declare"):
            continue
        if "barrier.cta.sync.aligned.all(i32 0)" in line and i + 1 < len(lines) and "%trace.t1" in lines[i + 1]:
            continue
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("pdl", ["", "late", "late+prefetch"])
def test_off_is_the_untraced_kernel_and_on_only_adds_stamps(name: str, pdl: str) -> None:
    from tilelang.backend import lower_gpu

    gk = lower_gpu(KERNELS[name](), "sm_90a")
    off, abi_off = emit_llvm_text(gk, gk.facts, pdl)
    plain, _ = emit_llvm_text(gk, gk.facts, pdl, trace=False)
    on, abi_on = emit_llvm_text(gk, gk.facts, pdl, trace=True)
    assert off == plain and "trace" not in off and "globaltimer" not in off
    assert abi_on == abi_off  # no kernel parameter changes
    assert _strip(on) == _strip(off)
    decls_on = {x for x in on.splitlines() if x.startswith("declare")}
    decls_off = {x for x in off.splitlines() if x.startswith("declare")}
    assert decls_off <= decls_on
    assert all("sreg" in d or "barrier" in d for d in decls_on - decls_off)
    # one wait stamp, right after the one wait, where the kernel waits
    assert on.count("%trace.tw = ") == (1 if pdl else 0)
    if pdl:
        i = on.index("griddepcontrol.wait;")
        assert "%trace.tw = " in on[i:].splitlines()[1]


def test_ptx_is_byte_identical_off_and_has_the_stamps_on() -> None:
    for arch in ("sm_80", "sm_90a"):
        base = compile_kernel(gemm(32, 32, 16), Target(arch))
        off = compile_kernel(gemm(32, 32, 16), Target(arch, trace=False))
        on = compile_kernel(gemm(32, 32, 16), Target(arch, trace=True))
        assert off.ptx == base.ptx and off.key == base.key
        assert on.key != off.key  # the flag is part of the compile-cache key
        assert "globaltimer" not in off.ptx and layout.GLOBAL not in off.ptx
        body = on.ptx[on.ptx.index(".entry"):]
        assert body.count("%globaltimer") == 2 and body.count("%smid") == 1
        assert re.search(rf"\.global \.align 8 \.b8 {layout.GLOBAL}\[16\]", on.ptx)
        # the entry stamp before any memory access, the exit stamp after the last barrier
        first_mem = re.search(r"\b(ld|st)\.global", body)
        assert first_mem is not None and body.index("%globaltimer") < first_mem.start()
        last_bar = body.rindex("bar.sync")
        assert body.rindex("%globaltimer") > last_bar


def test_pdl_kernel_stamps_after_its_wait() -> None:
    on = compile_kernel(gemm(32, 32, 16), Target("sm_90a", pdl=True, trace=True))
    body = on.ptx[on.ptx.index(".entry"):]
    assert body.count("%globaltimer") == 3
    wait = body.index("griddepcontrol.wait;")
    stamps = [m.start() for m in re.finditer("%globaltimer", body)]
    assert stamps[0] < wait < stamps[1] < stamps[2]


@pytest.mark.skipif(not ptxas_available(), reason="ptxas not installed")
@pytest.mark.parametrize(("arch", "pdl"), [("sm_80", False), ("sm_90a", False), ("sm_90a", True)])
def test_traced_ptx_assembles(arch: str, pdl: bool) -> None:
    for make in KERNELS.values():
        ck = compile_kernel(make(), Target(arch, pdl=pdl, trace=True))
        r = run_ptxas(ck.ptx, arch)
        assert r.returncode == 0, r.stderr


def _sim_records(sim) -> np.ndarray:  # type: ignore[no-untyped-def]
    raw = sim.trace_buffer
    cursor = struct.unpack_from("<Q", raw, 0)[0]
    n = min(cursor, sim.trace_records)
    return raw, cursor, n


def test_llsim_runs_a_traced_kernel_and_the_host_decodes_it() -> None:
    from llsim import SimDevice

    n, block = 1000, 256
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    z = np.zeros(n, np.float32)
    sim = SimDevice("sm_80", trace=True)
    sim.run(vector_add(block), (4,), [z, x, y])
    np.testing.assert_array_equal(z, x + 1)  # the stamps change nothing else
    raw, cursor, n_rec = _sim_records(sim)
    assert cursor == 4
    tr = trace.decode(raw[layout.RECORDS:layout.RECORDS + n_rec * layout.RECORD], cursor, sim.trace_records,
                      ["k"] * 7 + ["vector_add"], 4)
    assert len(tr.launches) == 1
    la = tr.launches[0]
    assert la.name == "vector_add" and la.instance == 0 and not la.waits
    assert sorted(la.block.tolist()) == [0, 1, 2, 3] and sorted(la.sm.tolist()) == [0, 1, 2, 3]
    assert (la.end > la.start).all()  # llsim's timer ticks at every read
    counters = struct.unpack_from("<I", raw, layout.COUNTERS + 4 * 7)[0]
    assert counters == 4


def test_llsim_counts_launch_instances_and_wraps_the_ring() -> None:
    from llsim import SimDevice

    sim = SimDevice("sm_80", trace=True, trace_records=4)
    # one device run = one launch; the simulator's buffer is fresh each run,
    # so instances come from one run of 3 blocks x 2 rows of the grid
    z = np.zeros((2, 3 * 256), np.float32)
    sim.run(_rows_kernel(), (2, 3), [z])
    raw, cursor, n_rec = _sim_records(sim)
    assert cursor == 6 and n_rec == 4
    tr = trace.decode(raw[layout.RECORDS:layout.RECORDS + 4 * layout.RECORD], cursor, 4, ["k"] * 8, 4)
    assert any("wrapped" in note for note in tr.notes) and any("miss blocks" in note for note in tr.notes)
    assert sum(la.block.size for la in tr.launches) == 4


def _rows_kernel():  # type: ignore[no-untyped-def]
    from tilelang.dtypes import DType
    from tilelang.ir.builder import Builder

    b = Builder("rows")
    b.tensor_param("z", DType.F32, 2, mutable=True, tile_shape=(1, 256))
    r, c = b.block_id(0), b.block_id(1)
    off = b.mul(c, b.const(256, DType.I32))
    b.store("z", (r, off), b.broadcast(b.const(1.0, DType.F32), (1, 256)))
    return b.finish()


def test_llsim_runs_the_traced_hopper_gemm_with_warp_roles() -> None:
    """The exit barrier waits for every warp role (a deadlock would raise)."""
    from gemm_cases import GemmConfig
    from llsim import SimDevice
    from test_sim_hopper import _facts, _kernel

    cfg = GemmConfig(64, 64, 32, out="f32")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    sim = SimDevice("sm_90a", trace=True)
    sim.run(_kernel(cfg), (1, 1), [c, a, b], _facts(a.shape, b.shape, c.shape))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-2)
    _, cursor, _ = _sim_records(sim)
    assert cursor == 1


def test_llsim_the_mark_of_the_traced_hopper_gemm() -> None:
    """`Target.trace_mark` "wait1": the return of the first mbarrier wait of
    thread 0's role (here the producer's, a free stage) in the record's wait
    field, between the entry and the exit; the result unchanged."""
    from gemm_cases import GemmConfig
    from llsim import SimDevice
    from test_sim_hopper import _facts, _kernel

    cfg = GemmConfig(64, 64, 32, out="f32")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    sim = SimDevice("sm_90a", trace=True, trace_mark="wait1")
    sim.run(_kernel(cfg), (1, 1), [c, a, b], _facts(a.shape, b.shape, c.shape))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-2)
    raw, cursor, n = _sim_records(sim)
    assert cursor == 1
    tr = trace.decode(raw[layout.RECORDS:layout.RECORDS + n * layout.RECORD], cursor, sim.trace_records,
                      ["k"] * 7 + ["gemm"], 4)
    la = tr.launches[0]
    assert la.waits  # the mark is in the wait's field
    assert (la.start < la.wait).all() and (la.wait < la.end).all()


def test_llsim_the_store_mark_of_a_plain_kernel() -> None:
    """"store1": thread 0's first store; every block's record has it, and a
    kernel's blocks decode as before."""
    from llsim import SimDevice

    n = 1000
    x = np.arange(n, dtype=np.float32)
    z = np.zeros(n, np.float32)
    sim = SimDevice("sm_80", trace=True, trace_mark="store1")
    sim.run(vector_add(256), (4,), [z, x, np.ones(n, np.float32)])
    np.testing.assert_array_equal(z, x + 1)
    raw, cursor, n_rec = _sim_records(sim)
    tr = trace.decode(raw[layout.RECORDS:layout.RECORDS + n_rec * layout.RECORD], cursor, sim.trace_records,
                      ["k"] * 7 + ["vector_add"], 4)
    la = tr.launches[0]
    assert la.waits and sorted(la.block.tolist()) == [0, 1, 2, 3]
    assert (la.start < la.wait).all() and (la.wait < la.end).all()


def test_the_mark_is_emitted_once_and_only_where_asked() -> None:
    from gemm_cases import GemmConfig
    from test_sim_hopper import _facts, _kernel

    from tilelang.backend import lower_gpu
    from tilelang.backend.llvm import emit_llvm_text
    from tilelang.backend.target import Target

    cfg = GemmConfig(64, 64, 32, out="f32")
    gk = lower_gpu(_kernel(cfg), "sm_90a", _facts((64, 64), (64, 64), (64, 64)))
    plain = emit_llvm_text(gk, gk.facts, "", True)[0]
    # (the GEMM's stores are its consumers', not thread 0's role: no "store1" point)
    for mark, points in (("wait1", 1), ("store1", 0)):
        text = emit_llvm_text(gk, gk.facts, "", True, False, mark)[0]
        assert len(re.findall(r"^trace_mark\d+:$", text, re.M)) == points, mark
        assert "%trace.mrec" in text and "trace_mark" not in plain
        # the entry writes NO_WAIT there, the exit leaves the wait field to the mark
        assert "store i32 -1, ptr addrspace(1) %trace.mrec0" in text
        assert "%trace.p24" not in text and "%trace.p24" in plain
    # a PDL kernel's field is its wait's: no mark
    pdl = emit_llvm_text(gk, gk.facts, "late", True, False, "wait1")[0]
    assert "trace_mark" not in pdl and "%trace.tw" in pdl
    # untraced, the mark changes nothing
    assert emit_llvm_text(gk, gk.facts, "", False, False, "wait1")[0] == emit_llvm_text(gk, gk.facts)[0]
    assert Target("sm_90a", trace=True, trace_mark="wait1").key().endswith("-trace-mark-wait1")
    assert Target("sm_90a", trace=False, trace_mark="wait1").key() == Target("sm_90a").key()
    with pytest.raises(ValueError, match="unknown trace mark"):
        Target("sm_90a", trace_mark="first")


def test_a_mistyped_trace_mark_is_refused(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.backend.env_switch import SwitchError
    from tilelang.backend.target import Target

    monkeypatch.setenv("TILEC_TRACE_MARK", "wait")  # E0604 (hfix6; was a warning, read as none)
    with pytest.raises(SwitchError, match="TILEC_TRACE_MARK='wait'.*wait1, store1 or ring"):
        Target("sm_90a", trace=True)
    monkeypatch.setenv("TILEC_TRACE_MARK", "store1")
    assert Target("sm_90a", trace=True).trace_mark == "store1"


def _records(rows: list[tuple[int, int, int, int, int | None, int]], grids: dict[int, list[int]]) -> bytes:
    """Records as a kernel writes them, from (kid, block, sm, t0, wait or None,
    end) in the order the blocks count: `grids[kid]` the grid sizes of the
    kid's launches in order (a block's count and its launch's size)."""
    counted: dict[int, int] = {}
    out = []
    for kid, block, sm, t0, tw, t1 in rows:
        n = counted.get(kid, 0)
        counted[kid] = n + 1
        sizes, seen = grids[kid], 0
        for nb in sizes:
            if n < seen + nb:
                break
            seen += nb
        dw = layout.NO_WAIT if tw is None else tw - t0
        out.append(struct.pack("<IIIIQII", kid, n, block, sm | nb << 8, t0, dw, t1 - t0))
    return out  # type: ignore[return-value]


def test_decode_launches_gaps_tails_and_idle_time() -> None:
    # launch A (kid 0): 4 blocks on 2 SMs; launch B (kid 1) starts 500 ns
    # before A's last block ends (PDL) and waits until A's end; then A again
    # with a grid of 3 blocks (the same module, another grid size)
    rows = [
        (0, 0, 0, 1000, None, 3000), (0, 1, 1, 1000, None, 2000), (0, 2, 1, 2000, None, 4000),
        (0, 3, 0, 3000, None, 4000),
        (1, 0, 0, 3500, 4000, 6000), (1, 1, 1, 3600, 4000, 5000),
        (0, 1, 1, 7000, None, 7500), (0, 0, 0, 7000, None, 9000), (0, 2, 1, 7500, None, 8000),
    ]
    recs = _records(rows, {0: [4, 3], 1: [2]})
    scrambled = b"".join(recs[i] for i in (4, 0, 6, 1, 8, 2, 5, 3, 7))
    tr = trace.decode(scrambled, len(rows), 100, ["a", "b"], 2)
    assert [(la.name, la.instance) for la in tr.launches] == [("a", 0), ("b", 0), ("a", 1)]
    r = tr.rows()
    assert r[0]["start_us"] == 0 and r[0]["end_us"] == 3.0 and r[0]["gap_us"] is None
    assert r[0]["ramp_us"] == 2.0 and r[0]["tail_us"] == 2.0 and r[0]["span_us"] == 3.0
    assert r[0]["idle_sm_us"] == 0.0  # both SMs busy from 1000 to 4000
    assert r[1]["gap_us"] == -0.5 and r[1]["wait_us"] == pytest.approx(0.45)
    assert r[1]["idle_sm_us"] == pytest.approx((2 * 2500 - 2500 - 1400) / 1e3)
    assert r[2]["gap_us"] == 1.0  # B ended at 6000, the second A starts at 7000
    assert r[2]["blocks"] == 3 and r[2]["span_us"] == 2.0
    assert tr.granularity_ns == 100
    assert tr.notes == []
    s = tr.summary()
    assert "3 launches, 9 block records" in s and s.splitlines()[1].split()[1] == "a"


def test_chrome_trace_is_valid_json_with_a_track_per_sm(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = [(0, 0, 3, 1000, 1500, 3000), (0, 1, 5, 1200, 1500, 2000)]
    tr = trace.decode(b"".join(_records(rows, {0: [2]})), 2, 100, ["k"], 8)
    path = tmp_path / "t.json"
    tr.write(path)
    data = json.loads(path.read_text())
    ev = data["traceEvents"]
    threads = {e["tid"] for e in ev if e.get("name") == "thread_name"}
    assert threads == {3, 5}
    blocks = [e for e in ev if e.get("cat") == "block"]
    assert len(blocks) == 2 and all(e["ph"] == "X" and e["dur"] > 0 for e in blocks)
    assert sum(e.get("cat") == "wait" for e in ev) == 2
    assert data["otherData"]["launches"][0]["blocks"] == 2


def test_mode_setting_is_parsed_and_a_typo_is_refused() -> None:
    assert trace.parse_mode("blocks") and not trace.parse_mode("") and not trace.parse_mode("0")
    with pytest.raises(ValueError, match="unknown trace mode `block`"):
        trace.parse_mode("block")


def test_on_the_cpu_the_session_says_there_are_no_blocks(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import tilelang

    monkeypatch.setattr(trace, "_DEVICE", None)
    src = "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(full([B], 1.0)); }\n"
    mod = tilelang.compile(src)
    z = np.zeros(8, np.float32)
    with tilelang.block_trace() as t:
        assert trace.ENABLED
        mod.k(tilelang.partition(z, [4])).sync()
    assert not trace.ENABLED
    assert t.trace is not None and t.trace.launches == []
    assert "the interpreter has none" in t.trace.summary()
    np.testing.assert_array_equal(z, 1.0)


@pytest.mark.gpu
def test_gpu_records_every_block_once_in_a_launch_and_a_graph(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import tilelang

    src = "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(full([B], 2.0)); }\n"
    mod = tilelang.compile(src, device="gpu")
    z = np.zeros(300 * 256, np.float32)
    with tilelang.block_trace(tmp_path / "t.json") as t:
        mod.k(tilelang.partition(z, [256])).sync()
    assert t.trace is not None
    (la,) = t.trace.launches
    assert sorted(la.block.tolist()) == list(range(300)) and la.instance == 0
    assert (la.end >= la.start).all() and la.sm.max() < 256
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    np.testing.assert_array_equal(z, 2.0)


def test_tilec_run_block_trace_on_the_cpu_notes_there_are_no_blocks(tmp_path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang import cli

    monkeypatch.setattr(trace, "_DEVICE", None)
    prog = tmp_path / "p.tile"
    prog.write_text("kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(full([B], 1.0)); }\n"
                    "fn main() { let mut z = zeros::<f32>([8]); k(z.partition([4])).sync(); print(z.sum()); }\n")
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "--device", "cpu", "--block-trace", str(tmp_path / "t.json"), str(prog)])
    assert e.value.code == 0
    out = capsys.readouterr()
    assert "8.0" in out.out and "the interpreter has none" in out.err
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]


def test_decode_survives_a_damaged_record() -> None:
    """A record whose grid size reads 0 (memory not written by a kernel) is a
    launch of its own, never an endless walk."""
    bad = struct.pack("<IIIIQII", 0, 3, 0, 1, 1000, layout.NO_WAIT, 10) * 2
    tr = trace.decode(bad, 2, 10, ["k"], 4)
    assert sum(la.block.size for la in tr.launches) == 2
