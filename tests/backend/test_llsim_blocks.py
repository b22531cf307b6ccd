"""`llsim`'s block compiler (`llsim_blocks`: a basic block one Python
function) against its per-instruction interpreter (`llsim.COMPILED = False`,
one closure an instruction): the same kernels run both ways must leave every
thread's registers (values, their NumPy types and bits) and every output
byte identical, on kernels whose threads all take one path, on kernels whose
threads take different paths (masked edge lanes; a warp-specialised Hopper
pipeline whose producer and consumer warps run different blocks, with TMA,
mbarriers and wgmma), and on a kernel that races in shared memory (both
raise the same `Race`). Also the bytes-free fast paths of the casts against
the byte-level encoding they replace."""

from __future__ import annotations

from typing import Any

import llsim
import numpy as np
import pytest
from llsim import Program, Race, SimDevice
from row_cases import _softmax, compare, run_interp

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.llvm import emit_llvm_text

BARRIER = "call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)"


def _canon(v: Any) -> Any:
    """A register's value with its type: NumPy scalars by type and bits (NaN payloads too)."""
    if isinstance(v, np.generic):
        return (type(v).__name__, v.tobytes())
    if isinstance(v, tuple):
        return tuple(_canon(x) for x in v)
    if isinstance(v, llsim._Pending):
        return ("pending", _canon(v.value), v.t)
    if isinstance(v, float):
        return ("float", np.float64(v).tobytes())
    return (type(v).__name__, v if isinstance(v, (int, str)) else repr(v))


def _both(monkeypatch: pytest.MonkeyPatch, run: Any) -> list[dict[int, dict[str, Any]]]:
    """Run `run()` (which returns its output arrays) per instruction and
    compiled; assert identical registers and outputs; return the registers.
    Then compiled with only the registers read outside their blocks'
    statements set in `r` (`llsim.ALL_REGISTERS` False, the default where no
    test records them): the same outputs, and each register it set the same."""
    seen = []
    for compiled, every in ((False, None), (True, None), (True, False)):
        record: list[dict[int, dict[str, Any]]] = []

        class Recorded(llsim.Memory):
            def __init__(self, record: list[Any] = record) -> None:
                super().__init__()
                self.regs_out = record

        monkeypatch.setattr(llsim, "Memory", Recorded)
        monkeypatch.setattr(llsim, "COMPILED", compiled)
        monkeypatch.setattr(llsim, "ALL_REGISTERS", every)
        outs = run()
        regs = [{t: {k: _canon(v) for k, v in r.items()} for t, r in blk.items()} for blk in record]
        seen.append((regs, [(a.dtype.str, a.tobytes()) for a in outs]))
    assert seen[0][0] == seen[1][0], "registers differ"
    assert seen[0][1] == seen[1][1] == seen[2][1], "outputs differ"
    assert seen[0][0], "no block ran"
    full, kept = seen[1][0], seen[2][0]
    assert [sorted(b) for b in full] == [sorted(b) for b in kept]
    assert all(kept[i][t].items() <= r.items() for i, b in enumerate(full) for t, r in b.items())
    assert sum(map(len, (r for b in kept for r in b.values()))) < sum(map(len, (r for b in full for r in b.values())))
    return seen[1][0]


def _paths(regs: list[dict[int, dict[str, Any]]]) -> int:
    """How many different sets of registers the threads of a block defined
    (1: every thread ran the same instructions)."""
    return max(len({frozenset(r) for r in blk.values()}) for blk in regs)


def _row_case(case: Any, sim: SimDevice | None = None) -> Any:
    def run() -> list[np.ndarray]:
        k = case.kernel()
        args = case.args(np.random.default_rng(0), k)
        want = run_interp(k, case, args)
        got = [a.copy() for a in args]
        (sim or SimDevice()).run(k, case.grid, got)
        compare(case, k, want, got)
        return got
    return run


def test_threads_on_one_path_run_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    regs = _both(monkeypatch, _row_case(_softmax(2, 256, 1, 1)))  # one warp, 256 columns: no masked lane
    assert _paths(regs) == 1


def test_masked_edge_lanes_run_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    regs = _both(monkeypatch, _row_case(_softmax(4, 37, 4, 1)))  # 37 columns in 32-lane rows
    assert _paths(regs) > 1


def test_a_warp_specialised_hopper_pipeline_runs_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Producer warps (TMA, mbarrier arrivals) and consumer warps (wgmma,
    softmax) run different blocks: causal attention, S_k past the last full key block."""
    monkeypatch.setenv("TILEC_ATTN_SCHEDULE", "serial")
    src = ("use std::attention::flash_attention;\nfn main() { let q = zeros::<f16>([1, 64, 64]);"
           " let mut o = zeros::<f16>([1, 64, 64]);"
           " flash_attention::<f16, 64, 64, 64>(o.partition([1, 64, 64]), &q, &q, &q, 0.1, true).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    facts = {n: TensorFacts(True, (False, False, True)) for n in "oqkv"}

    def run() -> list[np.ndarray]:
        rng = np.random.default_rng(1)
        q = rng.standard_normal((1, 64, 64)).astype(np.float16)
        kk, v = (rng.standard_normal((1, 80, 64)).astype(np.float16) for _ in range(2))  # a partial key block
        o = np.full((1, 64, 64), np.nan, np.float16)
        SimDevice("sm_90a").run(k, (1, 1), [o, q, kk, v, np.float32(0.125), True], facts)
        assert np.isfinite(o).all()
        return [o]

    assert _paths(_both(monkeypatch, run)) > 1


class _Mutated(SimDevice):
    def __init__(self, edit: Any) -> None:
        super().__init__()
        self.edit = edit

    def compile(self, kernel: Any, facts: Any = None) -> Any:
        gk = lower_gpu(kernel, self.arch, facts)
        text, abi = emit_llvm_text(gk, gk.facts)
        return Program(self.edit(text)), abi, gk


def test_a_loop_of_one_block_runs_as_a_while_loop_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """An FMA `mma`'s k loop (`counted_loop`: one block that branches back to itself, its phis carried) is one
    `while` loop of the compiled block (`llsim_blocks._looped`: each trip's phis set in place, no call and no
    return a trip): the registers and outputs of the per-instruction interpreter, and the product."""
    import llsim_blocks

    src = ("kernel fn g(c: &mut Tensor<f32, [16, 16]>, a: &Tensor<f32, [?, ?]>) {\n"
           "    c.store(mma(a.partition([16, 16]).load([0, 0]), a.partition([16, 16]).load([0, 0]), "
           "zeros::<f32>([16, 16])));\n}\n"
           "fn main() { let a = zeros::<f32>([16, 16]); let mut c = zeros::<f32>([16, 16]); "
           "g(c.partition([16, 16]), &a).sync(); }\n")
    k = driver.compile(src, "ir").output[0]

    def run() -> list[np.ndarray]:
        a = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
        c = np.full((16, 16), np.nan, np.float32)
        SimDevice("sm_80").run(k, (1, 1), [c, a])
        np.testing.assert_allclose(c, a.astype(np.float64) @ a, rtol=1e-5, atol=1e-5)
        return [c]

    _both(monkeypatch, run)
    facts = {p.name: TensorFacts(True, (True, True)) for p in k.params}  # (`SimDevice.run`'s for these arrays)
    blocks = SimDevice("sm_80").compile(k, facts)[0].compiled[True]
    assert any("while True:" in s and name in blocks for s, name in llsim_blocks._CODE)


def test_a_shared_memory_race_is_caught_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """The softmax without the barrier between its max partials' writes and reads."""
    msgs = []
    for compiled in (False, True):
        monkeypatch.setattr(llsim, "COMPILED", compiled)
        with pytest.raises(Race, match="no barrier between them") as e:
            _row_case(_softmax(3, 300, 1, 4), _Mutated(lambda t: t.replace(BARRIER, "", 1)))()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


SPECIAL32 = [1.5, -0.0, 0.0, np.nan, -np.inf, np.inf, 3e-45, 3.4e38, -1e-40]


def test_cast_fast_paths_match_the_byte_encoding() -> None:
    with np.errstate(all="ignore"):
        for x in SPECIAL32:
            for s, d, v in (("float", "i32", np.float32(x)), ("double", "i64", np.float64(x))):
                got, want = llsim._cast_bitcast(v, s, d), llsim._decode(llsim._encode(v, s), d)
                assert type(got) is type(want) and got == want, (x, s)
        for w in (0, 1, 0x7FC00001, 0xFF800000, 0x80000000, (1 << 32) + 3):
            got, want = llsim._cast_bitcast(w, "i32", "float"), llsim._decode(llsim._encode(w, "i32"), "float")
            assert type(got) is type(want) and got.tobytes() == want.tobytes(), w
        for w in (0, (1 << 64) - 1, 0x7FF8000000000001):
            got, want = llsim._cast_bitcast(w, "i64", "double"), llsim._decode(llsim._encode(w, "i64"), "double")
            assert type(got) is type(want) and got.tobytes() == want.tobytes(), w
        for el, n in (("half", 2), ("float", 4)):
            ty = f"<{n} x {el}>"
            v = tuple(llsim._FLOATS[el](x) for x in SPECIAL32[:n])
            raw = b"".join(llsim._encode(x, el) for x in v)
            assert llsim._encode_any(v, ty) == raw
            back = llsim._decode_any(raw, ty)
            assert [type(x) for x in back] == [type(x) for x in v] and bytes(np.array(back).tobytes()) == raw
        wide = (np.float32(65520.0), np.float32(1.0001), np.float32(np.nan), np.float32(-6e-8))
        got = llsim._cast_fptrunc(wide, "<4 x float>", "<4 x half>")
        want = tuple(np.float16(x) for x in wide)
        assert [type(x) for x in got] == [type(x) for x in want]
        assert np.array(got).tobytes() == np.array(want).tobytes()


def test_the_racecheck_per_byte() -> None:
    """`_Hazards` (lists of per-byte epochs and threads): what races and what does not."""
    h = llsim._Hazards(64)
    h.access(0, 0, 4, True)
    h.access(0, 0, 4, False)  # the writer reads its own bytes
    h.access(1, 4, 4, True)  # the next bytes: no overlap
    with pytest.raises(Race, match=r"thread 2 reads smem\+2 that thread 0 wrote"):
        h.access(2, 2, 4, False)  # bytes 2..5: the first of thread 0's is reported
    h.sync()
    h.access(2, 0, 8, False)  # after a barrier: fine
    h.access(3, 6, 4, False)  # readers share bytes: fine
    with pytest.raises(Race, match=r"thread 4 writes smem\+6 that several threads read"):
        h.access(4, 6, 2, True)
    with pytest.raises(Race, match=r"thread 4 writes smem\+8 that thread 3 read"):
        h.access(4, 8, 2, True)
    h.access(3, 8, 2, True)  # the only reader writes: fine
    with pytest.raises(Race, match=r"thread 5 reads smem\+9 that thread 3 wrote"):
        h.access(5, 9, 8, False)
    h.access(6, 60, 8, True)  # past the end: the bytes inside are tracked, the rest is the load's to refuse
    assert h.w_t[60:] == [6] * 4 and len(h.w_t) == 64


def test_the_racechecks_note_reads_until_a_write_as_if_recorded() -> None:
    """`_Hazards` and `_GlobalHazards` note an epoch's reads until its first write (`pending`): against
    the same checks recording every read at once (`_access`, as before), on random accesses of 4 threads with
    barriers between: the same races (messages) at the same steps, and the same per-byte records of the
    epoch."""
    import random

    from llsim_hopper import _GlobalHazards

    class EagerSmem(llsim._Hazards):  # every read recorded at once (the check before `pending`)
        def access(self, t: int, off: int, n: int, write: bool) -> None:
            self._access(t, off, n, write)

    class EagerGlobal(_GlobalHazards):
        def access(self, t: int, key: str, off: int, n: int, write: bool) -> None:
            self._access(t, key, off, n, write)

        def sync(self) -> None:
            self.epoch += 1
            for d in (*self.writes.values(), *self.reads.values()):
                d.clear()

    rng = random.Random(3)
    races = [0, 0]  # the smem and the global checks' races seen (both kinds of outcome compared)
    for _ in range(40):
        lazy, eager, glazy, geager = llsim._Hazards(48), EagerSmem(48), _GlobalHazards({"x"}), EagerGlobal({"x"})
        for _ in range(rng.randrange(4, 30)):
            if rng.random() < 0.1:
                for h in (lazy, eager, glazy, geager):
                    h.sync()
                continue
            t, off, n, write = rng.randrange(4), rng.randrange(44), rng.choice((1, 2, 4)), rng.random() < 0.25
            got = []
            for call in (lambda: lazy.access(t, off, n, write), lambda: eager.access(t, off, n, write),
                         lambda: glazy.access(t, "x", off, n, write), lambda: geager.access(t, "x", off, n, write)):
                try:
                    call()
                    got.append("ok")
                except Race as e:
                    got.append(str(e))
            assert got[0] == got[1] and got[2] == got[3], got
            races[0] += got[0] != "ok"
            races[1] += got[2] != "ok"
            if got[0] != "ok" or got[2] != "ok":
                break
        lazy.access(0, 47, 1, True)  # a write records the noted reads
        eager.access(0, 47, 1, True)
        assert (lazy.w_t, lazy.w_ep) == (eager.w_t, eager.w_ep)
        # the reads of the epoch (an earlier epoch's never race: noted reads are dropped at a barrier)
        assert [(i, t) for i, (t, ep) in enumerate(zip(lazy.r_t, lazy.r_ep)) if ep == lazy.epoch] == \
               [(i, t) for i, (t, ep) in enumerate(zip(eager.r_t, eager.r_ep)) if ep == eager.epoch]
        glazy.access(0, "x", 999, 1, True)
        geager.access(0, "x", 999, 1, True)
        assert (glazy.reads, glazy.writes) == (geager.reads, geager.writes)
    assert min(races) >= 5, races


def test_a_misaligned_global_load_faults_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU faults on a misaligned global load ("misaligned address") as on a store: llsim
    checked only stores. `add`'s first vector load of `x` moved 4 bytes on: a 16-byte load
    at byte 4; the untouched kernel runs."""
    import re

    src = (
        "kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {\n"
        "    z.store(x.load_like(z) + y.load_like(z));\n}\n"
        "fn main() { let x = ones::<f32>([512]); let mut z = zeros::<f32>([512]);"
        " add(z.partition([512]), &x, &x).sync(); }\n")
    k = driver.compile(src, "ir").output[0]

    def shift(text: str) -> str:
        out, n = re.subn(r"getelementptr float, ptr addrspace\(1\) %p\.x, i64 %\w+",
                         "getelementptr i8, ptr addrspace(1) %p.x, i64 4", text, count=1)
        assert n == 1
        return out

    msgs = []
    for compiled in (False, True):
        monkeypatch.setattr(llsim, "COMPILED", compiled)
        x, z = np.ones(512, np.float32), np.zeros(512, np.float32)
        SimDevice().run(k, (1,), [z, x, x])
        assert (z == 2.0).all()
        with pytest.raises(IndexError, match=r"load of <4 x float> at 4 in 'x': not 16-byte aligned") as e:
            _Mutated(shift).run(k, (1,), [z, x, x])
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
