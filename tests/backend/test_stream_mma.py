"""The `stream_mma` pass (`passes/stream_mma.py`): a K loop whose `mma` operand is computed from loaded tiles
(a weight dequantised in the loop: W4A16, W8A16), which no tensor-core pipeline takes, gets its raw loads
through per-thread cp.async rings, S - 1 iterations ahead (`stream_loads`' ring).

Without a GPU: the GPU IR shows the rings where the loads feed the product (and a load that cannot go through
one says why in a note), `--explain`'s line names the path and its stages, a `stages` hint is honoured or a note
says why not; the kernels run in `llsim` (which lands a cp.async only at the wait that retires its group and
raises `Race` on a slot read too early) against the interpreter: int4 and int8 weights, f16 and bf16, K, M and N
tails, 1 to 8 warps; ptxas assembles them for sm_80 and sm_90a with no spills. On the GPU (marked `gpu`): the
same kernels against the interpreter.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from ptxas_report import assemble

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "backend"))

from llsim import SimDevice  # noqa: E402

import tilelang  # noqa: E402
from tilelang.backend import emit_ptx, explain, lower_gpu  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.gpu.passes import stream_mma  # noqa: E402
from tilelang.backend.gpu.printer import print_gpu_kernel  # noqa: E402


@pytest.fixture(autouse=True)
def _rings_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rings are opt-in since call 43 (slower on an H100); these tests are of the pass itself. A test that sets
    `TILEC_MMA_RING` itself overrides this."""
    monkeypatch.setenv("TILEC_MMA_RING", "1")

P = tilelang.partition

# n06's W4A16 (tests/user/programs/n06): u4 weights two a byte (a group's first 16 rows in the low nibbles),
# an f16 scale and zero point a (group, column), two products a group
W4 = """
HINTS
kernel fn w4<const BM: i32, const BN: i32>(y: &mut Tensor<f32, [BM, BN]>, x: &Tensor<T, [?, ?]>,
                                           packed: &Tensor<u8, [?, ?]>, scales: &Tensor<T, [?, ?]>,
                                           zeros_: &Tensor<T, [?, ?]>) {
    let px = x.partition([BM, 16]);
    let pw = packed.partition([16, BN]);
    let ps = scales.partition([1, BN]);
    let pz = zeros_.partition([1, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for g in 0..pw.num_tiles(0) {
        let w = pw.load([g, block_id(1)]);
        let s = ps.load([g, block_id(1)]);
        let z = pz.load([g, block_id(1)]);
        acc = mma(px.load([block_id(0), 2 * g]), ((w & 15) as T - z) * s, acc);
        acc = mma(px.load([block_id(0), 2 * g + 1]), ((w >> 4) as T - z) * s, acc);
    }
    y.store(acc);
}
"""

# W8A16: i8 weights [K, N], a scale a (group of BK rows, column); the column's bias loaded before the loop
W8 = """
HINTS
kernel fn w8<const BM: i32, const BN: i32, const BK: i32>(y: &mut Tensor<f32, [BM, BN]>, x: &Tensor<T, [?, ?]>,
                                                          w: &Tensor<i8, [?, ?]>, scales: &Tensor<T, [?, ?]>,
                                                          bias: &Tensor<f32, [?, ?]>) {
    let px = x.partition([BM, BK]);
    let pw = w.partition([BK, BN]);
    let ps = scales.partition([1, BN]);
    let b = bias.partition([1, BN]).load([0, block_id(1)]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..px.num_tiles(1) {
        acc = mma(px.load([block_id(0), k]), (pw.load([k, block_id(1)]) as T) * ps.load([k, block_id(1)]), acc);
    }
    y.store(acc + b);
}
"""


def _src(text: str, dt: str, hints: str) -> str:
    return text.replace("HINTS", hints).replace("as T", f"as {dt}").replace("<T,", f"<{dt},")


def _cast(a: np.ndarray, dt: str) -> np.ndarray:
    """`a` as the host array of a `dt` tensor (bf16: f32 holding bf16 values, the interpreter's storage)."""
    if dt == "f16":
        return a.astype(np.float16)
    return (a.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)


def _w4_args(m: int, k: int, n: int, dt: str = "f16", hints: str = "", bm: int = 32, bn: int = 32, seed: int = 0):  # type: ignore[no-untyped-def]
    """(the kernel, its arguments with the output partitioned, the grid)."""
    rng = np.random.default_rng(seed)
    groups = -(-k // 32)
    packed = rng.integers(0, 256, (groups * 16, n)).astype(np.uint8)
    scales = _cast(rng.random((groups, n)) * 0.02 + 0.005, dt)
    zeros_ = _cast(np.floor(rng.random((groups, n)) * 15), dt)
    x = _cast(rng.standard_normal((m, k)), dt)
    y = np.zeros((m, n), np.float32)
    fn = tilelang.compile(_src(W4, dt, hints)).w4[bm, bn]
    return fn, (P(y, [bm, bn]), x, packed, scales, zeros_), (-(-m // bm), -(-n // bn))


def _w8_args(m: int, k: int, n: int, dt: str = "f16", hints: str = "", bm: int = 32, bn: int = 32, bk: int = 32,
             seed: int = 0):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    scales = _cast(rng.random((-(-k // bk), n)) * 0.02 + 0.005, dt)
    x = _cast(rng.standard_normal((m, k)), dt)
    bias = rng.standard_normal((1, n)).astype(np.float32)
    y = np.zeros((m, n), np.float32)
    fn = tilelang.compile(_src(W8, dt, hints)).w8[bm, bn, bk]
    return fn, (P(y, [bm, bn]), x, w, scales, bias), (-(-m // bm), -(-n // bn))


def _w4(*a, **kw):  # type: ignore[no-untyped-def]
    fn, args, grid = _w4_args(*a, **kw)
    return fn(*args), grid


def _w8(*a, **kw):  # type: ignore[no-untyped-def]
    fn, args, grid = _w8_args(*a, **kw)
    return fn(*args), grid


def _facts(op):  # type: ignore[no-untyped-def]
    """What the runtime computes for the launch's arrays (all aligned here)."""
    return {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in np.asarray(a).shape))
            for p, a in zip(op._plan.kir.tensor_params, op._hosts, strict=True)}


def _lowered(op, arch: str = "sm_90a"):  # type: ignore[no-untyped-def]
    return lower_gpu(op._plan.kir, arch, _facts(op))


def _simulate(op, grid, arch: str = "sm_90a") -> None:  # type: ignore[no-untyped-def]
    copies = [np.array(h) for h in op._hosts]
    SimDevice(arch).run(op._plan.kir, grid, op._kernel_args(copies))
    op.sync()
    np.testing.assert_allclose(copies[0], op._hosts[0], rtol=1e-4, atol=2e-3)


def test_the_rings_of_a_dequantised_operand() -> None:
    """n06's loop: the u8 weights, the scale and zero rows and both A tiles through 4-stage rings (unhinted:
    `DEFAULT_STAGES`), no load left in the loop, the waits without a barrier; `--explain` names the path."""
    op, _ = _w4(40, 256, 96)
    gk = _lowered(op)
    text = print_gpu_kernel(gk)
    loop = text.split(" = for ")[1].split("\n  }")[0]
    for t in ("packed", "scales", "zeros_", "x"):
        assert f"cp.async.own @{t}[" in loop and f"load @{t}" not in loop, t
    assert loop.count("ring.read") == 5 and "cp.async.wait 2\n" in loop
    assert text.count("smem.alloc : ") == 5 and "u8[4, 2048]" in text  # 128 threads x 16 bytes of u8 a stage
    assert explain.path_of(gk) == "mma.sync-ring"
    assert explain.describe(gk).startswith(explain.PATHS["mma.sync-ring"] + ", 4 stages, 4 warps")
    assert not [n for n in gk.notes if "load ring" in n.message]
    # the scale and zero rows copied in the layout their broadcasts read: no conversion a step (`_relaid`)
    assert "convert_layout" not in loop and "f16[4, 2048]" in text
    op.discard()


def test_the_relay_switch(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_MMA_RING_RELAY", "0")
    op, _ = _w4(40, 256, 96)
    loop = print_gpu_kernel(_lowered(op)).split(" = for ")[1].split("\n  }")[0]
    assert loop.count("convert_layout") == 2 and loop.count("ring.read") == 5
    op.discard()


def test_stages_hints_are_honoured_or_explained(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`stages = 3`: 3 stages; `stages = 1`: the loads stay and a note says the hint kept them; a hint past
    the shared memory: lowered, with a note; rings that do not fit twice: a note; `TILEC_MMA_RING=0`: no ring."""
    def lowered(hints: str):  # type: ignore[no-untyped-def]
        op, _ = _w4(64, 256, 64, hints=hints)
        gk = _lowered(op)
        op.discard()
        return gk, print_gpu_kernel(gk)

    gk, text = lowered("#[hints(stages = 3)]")
    assert "u8[3, 2048]" in text and explain.describe(gk).startswith(explain.PATHS["mma.sync-ring"] + ", 3 stages")
    gk, text = lowered("#[hints(stages = 1)]")
    assert "ring" not in text and explain.path_of(gk) == "mma.sync"
    assert any("load ring does not take this loop: the hints' `stages = 1`" in n.message for n in gk.notes)
    gk, text = lowered("#[hints(stages = 64)]")
    stages = int(text.split("smem.alloc : u8[")[1].split(",")[0])
    assert 2 <= stages < 64 and stages * 14 * 1024 <= 228 * 1024
    assert any(f"the hints asked `stages = 64`; the cp.async load ring takes this loop with {stages}" in n.message
               for n in gk.notes)
    assert "(the hints asked `stages = 64`)" in explain.describe(gk)
    # 8 blocks an SM: a block's share of the shared memory holds no two stages (14 KB each) beside the scratch
    gk, text = lowered("#[hints(min_blocks = 8)]")
    assert "ring" not in text and explain.path_of(gk) == "mma.sync"
    assert any("two stages of its loads take 28672 bytes" in n.message for n in gk.notes), [n.message for n in gk.notes]
    monkeypatch.setenv("TILEC_MMA_RING", "0")
    gk, text = lowered("")
    assert "ring" not in text and explain.path_of(gk) == "mma.sync"


def test_by_default_only_a_stages_hint_asks_for_the_rings(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Call 43 (H100) timed the rings slower than the plain loop on n06 and W8A16, so they are not the default: an
    unhinted loop keeps its loads; `stages = 3` is a user asking for them and gets them (a hint is never ignored)."""
    monkeypatch.delenv("TILEC_MMA_RING", raising=False)
    for hints, ring in (("", False), ("#[hints(stages = 3)]", True)):
        op, _ = _w4(64, 256, 64, hints=hints)
        gk = _lowered(op)
        op.discard()
        assert explain.path_of(gk) == ("mma.sync-ring" if ring else "mma.sync"), hints
        assert ("u8[3, 2048]" in print_gpu_kernel(gk)) == ring


def test_a_load_the_ring_cannot_take_says_why() -> None:
    """N = 40 (not a multiple of 16): the weights' and the scales' rows are not whole 16-byte chunks, so they stay
    plain loads with a note each; the A tiles still stream (and the kernel is right in llsim at sm_80)."""
    op, grid = _w8(32, 64, 40, bn=32)
    gk = _lowered(op, "sm_80")
    text = print_gpu_kernel(gk)
    loop = text.split(" = for ")[1].split("\n  }")[0]
    assert "cp.async.own @x[" in loop and "load @w" in loop and "load @scales" in loop
    why = [n.message for n in gk.notes if "leaves this load" in n.message]
    assert any("`w`'s rows are not whole 16-byte chunks" in m for m in why), why
    assert any("`scales`'s rows are not whole 16-byte chunks" in m for m in why), why
    _simulate(op, grid, "sm_80")


@pytest.mark.parametrize(("m", "k", "n", "dt", "warps", "bm", "bn"), [
    (24, 80, 48, "f16", 4, 32, 32),  # M, N and K tails (the third group half past K's edge), 2 blocks
])
def test_w4_in_the_simulator(m: int, k: int, n: int, dt: str, warps: int, bm: int, bn: int) -> None:
    op, grid = _w4(m, k, n, dt, f"#[hints(num_warps = {warps})]", bm, bn, seed=k)
    assert "cp.async.own @packed[" in print_gpu_kernel(_lowered(op))
    _simulate(op, grid)


@pytest.mark.heavy
@pytest.mark.parametrize(("m", "k", "n", "dt", "warps", "bm", "bn"), [
    (64, 256, 64, "bf16", 2, 32, 32),
    (16, 96, 32, "f16", 1, 16, 32),  # one warp
    (40, 208, 80, "f16", 4, 32, 32),  # the bench's kernel, 6 blocks
    (64, 64, 128, "bf16", 8, 64, 64),
])
def test_w4_in_the_simulator_more(m: int, k: int, n: int, dt: str, warps: int, bm: int, bn: int) -> None:
    test_w4_in_the_simulator(m, k, n, dt, warps, bm, bn)


@pytest.mark.parametrize(("m", "k", "n", "dt", "warps", "bm", "bn", "bk"), [
    (24, 80, 48, "bf16", 2, 32, 32, 32),  # M, N and K tails (80: the last K tile half past the edge), 2 blocks
])
def test_w8_in_the_simulator(m: int, k: int, n: int, dt: str, warps: int, bm: int, bn: int, bk: int) -> None:
    op, grid = _w8(m, k, n, dt, f"#[hints(num_warps = {warps})]", bm, bn, bk, seed=k)
    text = print_gpu_kernel(_lowered(op))
    assert "cp.async.own @w[" in text and "cp.async.own @x[" in text and "cp.async.own @bias" not in text
    _simulate(op, grid)


@pytest.mark.heavy
@pytest.mark.parametrize(("m", "k", "n", "dt", "warps", "bm", "bn", "bk"), [
    (32, 128, 64, "f16", 4, 32, 64, 32),
    (64, 96, 64, "f16", 8, 64, 64, 32),
    (16, 64, 16, "bf16", 1, 16, 16, 32),
])
def test_w8_in_the_simulator_more(m: int, k: int, n: int, dt: str, warps: int, bm: int, bn: int, bk: int) -> None:
    test_w8_in_the_simulator(m, k, n, dt, warps, bm, bn, bk)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_rings_assemble(arch: str) -> None:
    if shutil.which("ptxas") is None:
        pytest.skip("no ptxas")
    for op, _ in (_w4(64, 256, 64), _w8(64, 256, 64, "bf16", bm=64, bn=64)):
        ptx = emit_ptx(op._plan.kir, arch, _facts(op))
        op.discard()
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx
        r = assemble(ptx, arch)
        assert r.max_spill_stores == 0, r.text


def test_the_switch_is_checked(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TILEC_MMA_RING", "yes")
    with pytest.raises(ValueError, match="TILEC_MMA_RING"):
        stream_mma.enabled()


@pytest.mark.gpu
@pytest.mark.parametrize(("kind", "m", "k", "n", "dt"), [("w4", 40, 208, 80, "f16"), ("w4", 64, 4096, 256, "bf16"),
                                                         ("w8", 48, 80, 48, "bf16"), ("w8", 96, 2048, 192, "f16")])
def test_on_the_gpu(kind: str, m: int, k: int, n: int, dt: str) -> None:
    import tilelang.testing as tt

    fn, args, _ = (_w4_args if kind == "w4" else _w8_args)(m, k, n, dt)
    tt.compare(fn, *args, devices=("cpu", "gpu"), rtol=1e-3, atol=2e-2)
