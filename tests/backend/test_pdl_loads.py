"""PDL "+loads" (`Target.pdl_prefetch = "loads"`): a kernel's leading loads of
tensors the runtime found the previous launch does not write
(`TensorFacts.early`, `runtime/cuda_pdl.early_names`) come before its
`griddepcontrol.wait`, so they overlap the previous grid's drain; every
other load, and every store, after it. No GPU needed: the PTX's order, and
the runtime's decision on stand-in buffers."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gpu_probe import nvdisasm_path
from pdl_stand import buf as _buf
from pdl_stand import kernel as _kernel
from ptxas_report import assemble

import tilelang
from tilelang.backend import TensorFacts, compile_kernel
from tilelang.backend.target import Target, ptxas_available, run_ptxas
from tilelang.ir import nodes as ir
from tilelang.runtime import cuda_pdl

P = tilelang.partition

SRC = """
// the weight's first tile leads; `y` (which the previous kernel may write) after it
kernel fn gemv_add<const BN: i32, const BK: i32>(y: &mut Tensor<f32, [BN]>, w: &Tensor<bf16, [?, ?]>,
                                                 x: &Tensor<f32, [?]>) {
    let pw = w.partition([BN, BK]);
    let px = x.partition([BK]);
    let mut wt = pw.load([block_id(0), 0]);
    let y0 = y.load();
    let mut acc = zeros::<f32>([BN]);
    for k in 0..pw.num_tiles(1) {
        let next = pw.load([block_id(0), k + 1]);
        acc = acc + ((wt as f32) * px.load([k]).reshape([1, BK])).sum(1);
        wt = next;
    }
    y.store(y0 + acc);
}
"""


def _compiled(trigger: str, extra: str, early: set[str]):  # type: ignore[no-untyped-def]
    y = np.zeros(16, np.float32)
    op = tilelang.compile(SRC).gemv_add[8, 256](P(y, [8]), np.zeros((16, 1024), np.float32),
                                                np.zeros(1024, np.float32))
    op.discard()  # compiled, never run
    kir = op._plan.kir
    facts = {p.name: TensorFacts(True, (True,) * p.rank, False, p.name in early)
             for p in kir.params if isinstance(p, ir.TensorParam)}
    return compile_kernel(kir, Target("sm_90a", pdl=True, pdl_trigger=trigger, pdl_prefetch=extra), facts)


def _body(ck) -> str:  # type: ignore[no-untyped-def]
    return ck.ptx[ck.ptx.index(".entry"):]


def test_early_loads_come_before_the_wait() -> None:
    ck = _compiled("late", "loads", {"w"})
    body = _body(ck)
    wait = body.index("griddepcontrol.wait;")
    loads = [m.start() for m in re.finditer(r"\bld\.global", body)]
    # the first weight tile (8 x 256 bf16 over 128 threads: two 16-byte chunks
    # a thread) before the wait; `y`, `x` and the loop's tiles after it; the
    # trigger after the loop, the store last
    assert body.count("griddepcontrol.wait;") == 1
    assert sum(i < wait for i in loads) == 2 and sum(i > wait for i in loads) >= 3
    assert wait < body.index("griddepcontrol.launch_dependents;") < body.index("st.global")
    # without the fact, or with a mode that does not ask, the wait comes first
    for trigger, extra, early in (("late", "loads", set()), ("late", "", {"w"}), ("entry", "loads", {"w"})):
        other = _compiled(trigger, extra, early)
        assert _body(other).index("griddepcontrol.wait;") < _body(other).index("ld.global"), (trigger, extra)
        assert other.key != ck.key
    # `y`, which this kernel writes, is never read early, even when marked
    body_y = _body(_compiled("late", "loads", {"y"}))
    assert body_y.index("griddepcontrol.wait;") < body_y.index("ld.global")
    if ptxas_available():
        r = run_ptxas(ck.ptx, "sm_90a")
        assert r.returncode == 0, r.stderr



@pytest.mark.parametrize("trigger", ["late", "last"])
def test_early_loads_stay_before_the_wait_in_the_sass(trigger: str) -> None:
    # ptxas moves an `ld.global.nc` (a load LLVM knows invariant) below
    # `griddepcontrol.wait` (SASS `ACQBULK`), which made "+loads" a no-op: the
    # loads before the wait are plain `ld.global`, the loop's are still `.nc`
    ck = _compiled(trigger, "loads", {"w"})
    body = _body(ck)
    wait = body.index("griddepcontrol.wait;")
    assert re.findall(r"\bld\.global\.(?:nc\.)?\S+", body[:wait]) == ["ld.global.v4.b32"] * 2
    assert re.search(r"\bld\.global\.nc\.", body[wait:])
    nvd = nvdisasm_path()
    if not ptxas_available() or nvd is None:
        pytest.skip("needs ptxas and nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        assemble(ck.ptx, "sm_90a", cubin=cubin)
        sass = subprocess.run([nvd, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    before = sass[:sass.index("ACQBULK")]
    assert len(re.findall(r"\bLDG\.E\.128\b", before)) == 2, before


def test_runtime_reads_early_only_what_the_previous_launch_does_not_write(loads_mode) -> None:  # type: ignore[no-untyped-def]
    s = 7
    x, w, y = _buf(0x1000, 256), _buf(0x8000, 1024), _buf(0x2000, 64)  # y: bytes 0x2000..0x2100
    gemv = _kernel(("y", True), ("w", False), ("x", False))
    # nothing known about the launch before the first: nothing early
    assert cuda_pdl.early_names(s, gemv, [y, w, x], (8,)) == frozenset()
    # the next one reads `y` (the first wrote it), `w` (nobody writes it)
    reader = _kernel(("o", True), ("w", False), ("v", False))
    o = _buf(0x9000_0000, 16)
    assert cuda_pdl.early_names(s, reader, [o, w, y], (4,)) == frozenset({"w"})
    # a view overlapping what the previous launch wrote (`o`'s last bytes) is not early
    inside = _buf(0x9000_0000 + 60, 4)
    assert cuda_pdl.early_names(s, reader, [y, w, inside], (4,)) == frozenset({"w"})
    assert "v" not in cuda_pdl.early_names(s, reader, [_buf(0x5000, 4), w, _buf(0x2000 + 252, 1)], (4,))
    # another stream has its own predecessor; an empty grid launches nothing
    assert cuda_pdl.early_names(s + 1, reader, [o, w, x], (4,)) == frozenset()
    before = cuda_pdl._LAST[s]
    assert cuda_pdl.early_names(s, gemv, [x, w, y], (0,)) == frozenset() and cuda_pdl._LAST[s] == before
    # a predecessor that triggers before its own wait: neither what it writes
    # nor what the launch before it wrote (the last `reader`: 0x5000) is
    # early; a chain of them adds up; after a stream's first launch, nothing
    early = _kernel(("o", True), early_trigger=True)
    cuda_pdl.early_names(s, early, [_buf(0x7000, 4)], (1,))
    assert cuda_pdl.early_names(s, reader, [o, w, _buf(0x5000, 4)], (4,)) == frozenset({"w"})
    cuda_pdl.early_names(s, early, [_buf(0x7000, 4)], (1,))
    assert cuda_pdl.early_names(s, reader, [o, w, _buf(0x7000, 4)], (4,)) == frozenset({"w"})
    cuda_pdl.early_names(s, early, [_buf(0x6000, 4)], (1,))
    cuda_pdl.early_names(s, early, [_buf(0x7000, 4)], (1,))
    for v in (_buf(0x6000, 4), _buf(0x7000, 4), _buf(0x4000, 4)):  # the chain, and the late launch before it
        assert cuda_pdl.early_names(s, reader, [_buf(0x4000, 4), w, v], (4,)) == frozenset({"w"})
        cuda_pdl.early_names(s, early, [_buf(0x6000, 4)], (1,))
        cuda_pdl.early_names(s, early, [_buf(0x7000, 4)], (1,))
    assert cuda_pdl.early_names(s, reader, [_buf(0x4000, 4), w, x], (4,)) == frozenset({"w", "v"})
    assert cuda_pdl.early_names(s + 2, early, [_buf(0x7000, 4)], (1,)) == frozenset()
    assert cuda_pdl.early_names(s + 2, reader, [o, w, x], (4,)) == frozenset()
    # a change of setting forgets every predecessor; other settings: nothing early
    cuda_pdl.early_names(s, gemv, [y, w, x], (8,))
    cuda_pdl.set_pdl(True, "late", "loads")
    assert cuda_pdl.early_names(s, reader, [o, w, x], (4,)) == frozenset()
    cuda_pdl.set_pdl(True, "late", "bulk")
    assert cuda_pdl.early_names(s, reader, [o, w, x], (4,)) == frozenset()


def test_runtime_counts_unsafe_writes_of_shared_params(loads_mode) -> None:  # type: ignore[no-untyped-def]
    # a kernel that writes its `&` parameter `t` inside `unsafe` (an atomic):
    # `t` is never early for the kernel itself, and the next launch does not
    # read it early either
    src = """
    kernel fn bump<const B: i32>(z: &mut Tensor<f32, [B]>, t: &Tensor<f32, [?]>) {
        unsafe { atomic_add(&t, [0], 1.0); }
        z.store(z.load());
    }
    """
    z, t = np.zeros(16, np.float32), np.zeros(16, np.float32)
    op = tilelang.compile(src).bump[16](P(z, [16]), t)
    op.discard()  # compiled, never run
    kir = op._plan.kir
    zb, tb, w = _buf(0x1000, 16), _buf(0x2000, 16), _buf(0x8000, 64)
    s = 11
    cuda_pdl.early_names(s, _kernel(("o", True)), [_buf(0x9000, 4)], (1,))
    assert cuda_pdl.early_names(s, kir, [zb, tb], (1,)) == frozenset()  # `t` written here
    reader = _kernel(("o", True), ("w", False), ("v", False))
    assert cuda_pdl.early_names(s, reader, [_buf(0x9000, 4), w, tb], (4,)) == frozenset({"w"})
