"""int8 GEMM loops on sm_80's cp.async ring (`passes/pipeline_sm80.py`, `codegen/sm80.py`): i8 x i8 or u8 x u8
into i32 by `mma.sync.m16n8k32`, A by `ldmatrix.x4`, a row-major B by `ldmatrix.x4.trans` of k-rows 4i + j + {0, 1}
and one `prmt` a register (the accumulator's n8 tiles the even and odd columns of each 16: `MmaTile.split16`, the
B ring's swizzle `SmemTile.quad`), a [N, K] B by plain `ldmatrix.x4`.

The default since the H100 ran it exact (2026-12-07, call 32); `TILEC_INT8_RING=0` is the way back to
`mma_int8_tensor_core` (through shared memory): `test_the_switch_decides_the_path`. In llsim at sm_80 and sm_90a
(where the Hopper pipeline refuses int8 and the ring is the fallback), against the interpreter, exactly: rows of
4 and 8 chunks (both quad swizzles), edges in M, N and K, element copies where rows are not whole chunks, a
transposed B, u8 sums wrapping in i32. ptxas: no spills. A mutated byte selection fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from llsim import SimDevice
from ptxas_report import assemble

from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel


SRC = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<i32, [BM, BN]>, a: &Tensor<T8, [?, ?]>,
                                                           b: &Tensor<T8, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = full::<i32>([BM, BN], START);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}
"""

SRC_NT = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<i32, [BM, BN]>, a: &Tensor<T8, [?, ?]>,
                                                           b: &Tensor<T8, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BN, BK]);
    let mut acc = full::<i32>([BM, BN], START);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([block_id(1), k]).transpose(), acc);
    }
    c.store(acc);
}
"""

# (dtype, B stored [N, K], tile, (M, N, K), the accumulator's start)
CASES = {
    "i8_nn_4chunks": ("i8", False, (64, 64, 64), (64, 128, 128), 0),      # 2 x 2 warps, B rows of 64 bytes
    "i8_nn_8chunks_edges": ("i8", False, (32, 128, 32), (40, 144, 96), 7),   # B rows of 128 bytes, edge in M and N
    "u8_nt_wraps": ("u8", True, (32, 32, 64), (48, 40, 80), 2147480000),  # B [N, K] (K % 64 != 0: element copies)
}


def _kernel(dtype: str, nt: bool, tile: tuple[int, int, int], start: int):  # type: ignore[no-untyped-def]
    src = (SRC_NT if nt else SRC).replace("T8", dtype).replace("START", str(start))
    bm, bn, bk = tile
    main = (f"fn main() {{ let a = zeros::<{dtype}>([8, 8]); let mut o = zeros::<i32>([8, 8]);"
            f" gemm::<{bm}, {bn}, {bk}>(o.partition([{bm}, {bn}]), &a, &a).sync(); }}\n")
    return src + main, driver.compile(src + main, "ir").output[0]


def _inputs(dtype: str, nt: bool, M: int, N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo, hi, ty = (-128, 128, np.int8) if dtype == "i8" else (0, 256, np.uint8)
    return (rng.integers(lo, hi, (M, K)).astype(ty), rng.integers(lo, hi, (N, K) if nt else (K, N)).astype(ty))


def _facts(**arrays: np.ndarray) -> dict[str, TensorFacts]:
    return {n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape)) for n, x in arrays.items()}


def _simulate(name: str, arch: str, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    import tilelang

    dtype, nt, tile, (M, N, K), start = CASES[name]
    src, k = _kernel(dtype, nt, tile, start)
    a, b = _inputs(dtype, nt, M, N, K, seed)
    facts = _facts(c=np.zeros((M, N)), a=a, b=b)
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    bm, bn, bk = tile
    got = np.full((M, N), -1, np.int32)
    SimDevice(arch).run(k, (-(-M // bm), -(-N // bn)), [got, a, b], facts)
    want = np.full((M, N), -1, np.int32)
    tilelang.compile(src).gemm[bm, bn, bk](tilelang.partition(want, [bm, bn]), a, b).sync()
    return got, want, text


@pytest.mark.parametrize("name", list(CASES))
def test_int8_ring_in_the_simulator(name: str) -> None:
    for arch in ("sm_80", "sm_90a"):
        got, want, text = _simulate(name, arch, seed=int(np.random.default_rng().integers(1 << 30)))
        assert "dot.mma.sync.smem" in text and "cp.async.commit" in text, text
        assert ("split16" in text) == (not CASES[name][1]), text
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {arch}")


@pytest.mark.parametrize("setting", [None, "1", "0"])
def test_the_switch_decides_the_path(setting: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILEC_INT8_RING` unset or "1": the GEMM loop on the ring (cp.async stages, the accumulator in
    registers); "0": the loop kept, each product `dot.mma.sync` staged through shared memory (its loads through
    `stream_mma`'s per-thread rings since hcliff15: `cp.async.own`)."""
    if setting is None:
        monkeypatch.delenv("TILEC_INT8_RING", raising=False)
    else:
        monkeypatch.setenv("TILEC_INT8_RING", setting)
    _, k = _kernel("i8", False, (64, 64, 64), 0)
    a, b = _inputs("i8", False, 64, 128, 128, 0)
    text = print_gpu_kernel(lower_gpu(k, "sm_80", _facts(c=np.zeros((64, 128)), a=a, b=b)))
    ring = setting != "0"
    assert ("dot.mma.sync.smem" in text) == ring and ("cp.async.commit" in text) == ring, text
    assert ("dot.mma.sync " in text) == (not ring), text


def test_a_mutated_byte_selection_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The even and odd columns' selectors swapped: the products land in the wrong columns."""
    from tilelang.backend.codegen import sm80

    real = sm80._Fragments.mma

    def swapped(self, frags, acc):  # type: ignore[no-untyped-def]
        calls = []
        emit = self.em.emit

        def spy(text: str) -> str:
            if "@llvm.nvvm.prmt" in text:
                text = text.replace("i32 25632)", "i32 SEL)").replace("i32 30001)", "i32 25632)").replace(
                    "i32 SEL)", "i32 30001)")
                calls.append(text)
            return emit(text)

        monkeypatch.setattr(self.em, "emit", spy)
        try:
            real(self, frags, acc)
        finally:
            monkeypatch.setattr(self.em, "emit", emit)
        assert calls

    monkeypatch.setattr(sm80._Fragments, "mma", swapped)
    got, want, _ = _simulate("i8_nn_4chunks", "sm_80", seed=3)
    assert not np.array_equal(got, want)


@pytest.mark.parametrize(("arch", "tile"), [("sm_80", 64), ("sm_90a", 64), ("sm_90a", 128)])
def test_w8a8_ring_assembles_without_spills(arch: str, tile: int) -> None:
    """tests/user t17's kernel at 64 x 64 x 64 (huser18_paths' w8a8 tile) and 128 x 128 x 64: the ring's
    instructions, no spills (at 128, 704 B spilled while the epilogue's row and column vectors were broadcast
    to [128, 128] tiles and converted whole to the accumulator's layout: `ShapeOps.convert_layout`)."""
    from pathlib import Path

    prog = Path(__file__).resolve().parents[1] / "user" / "programs" / "t17_int8_gemm_dequant_bf16.tile"
    src = prog.read_text(encoding="utf-8")
    src = src[:src.index("fn main()")] + (
        "fn main() { let a = zeros::<i8>([128, 128]); let s = zeros::<f32>([128]);"
        " let mut c = zeros::<bf16>([128, 128]);"
        f" w8a8::<{tile}, {tile}, 64>(c.partition([{tile}, {tile}]), &a, &a, &s, &s, &s).sync(); }}\n")
    ptx = driver.compile(src, "ptx", options=driver.Options(arch=arch)).output[0].text
    # CHECK: 16-byte cp.async, ldmatrix (A plain, B .trans), prmt, mma.sync.m16n8k32
    assert "cp.async.cg.shared.global" in ptx and "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "prmt.b32" in ptx and "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" in ptx
    r = assemble(ptx, arch)
    assert r.max_spill_stores == 0, r.text


@pytest.mark.parametrize("chunks", [4, 8])
def test_the_quad_swizzle_spreads_each_ldmatrix_over_the_banks(chunks: int) -> None:
    """The 8 k-rows one matrix of B's ldmatrix.x4.trans reads (4i + j + {0, 1}, j = 0 or 2, +16 or not) land in
    8 distinct 16-byte slots of a 128-byte line: no bank conflict."""
    from tilelang.backend.gpu.layouts import SmemTile

    for c in range(chunks):
        for base in (0, 2, 16, 18, 32):
            rows = [base + 4 * i + e for i in range(4) for e in (0, 1)]
            slots = {(r * chunks * 16 + (c ^ SmemTile.chunk_xor(r, chunks, quad=True)) * 16) % 128 for r in rows}
            assert len(slots) == 8, (chunks, c, base, sorted(slots))


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_w8a8_epilogue_vectors_in_the_ring_layout(arch: str) -> None:
    """t17's dequantising epilogue on the ring's accumulator (`MmaTile.split16`, 2 x 2 warps of 32 x 32): its
    row scales [BM, 1], column scales and bias [1, BN] each staged alone and read by the slots' rows and
    columns (`ShapeOps.convert_layout` of a broadcast), edges in M and N; as the interpreter gives it."""
    from pathlib import Path

    import tilelang

    prog = Path(__file__).resolve().parents[1] / "user" / "programs" / "t17_int8_gemm_dequant_bf16.tile"
    src = prog.read_text(encoding="utf-8")
    src = src[:src.index("fn main()")].replace("Tensor<bf16, [BM, BN]>", "Tensor<f32, [BM, BN]>").replace(
        "+ bb) as bf16)", "+ bb))") + (
        "fn main() { let a = zeros::<i8>([128, 128]); let s = zeros::<f32>([128]);"
        " let mut c = zeros::<f32>([128, 128]);"
        " w8a8::<64, 64, 64>(c.partition([64, 64]), &a, &a, &s, &s, &s).sync(); }\n")
    k = driver.compile(src, "ir").output[0]
    rng = np.random.default_rng(17)
    M, N, K = 80, 112, 192
    a = rng.integers(-127, 128, (M, K)).astype(np.int8)
    b = rng.integers(-127, 128, (K, N)).astype(np.int8)
    sa, sb, bias = (rng.random(n).astype(np.float32) for n in (M, N, N))
    arrays = {"c": np.zeros((M, N), np.float32), "a": a, "b": b, "sa": sa, "sb": sb, "bias": bias}
    facts = _facts(**arrays)
    assert "split16" in print_gpu_kernel(lower_gpu(k, arch, facts))
    got = np.full((M, N), np.nan, np.float32)
    SimDevice(arch).run(k, (2, 2), [got, a, b, sa, sb, bias], facts)
    want = np.full((M, N), np.nan, np.float32)
    tilelang.compile(src).w8a8[64, 64, 64](tilelang.partition(want, [64, 64]), a, b, sa, sb, bias).sync()
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_t17_on_the_ring_on_a_gpu_leaves_the_interpreter_s_tensors() -> None:
    """The `-m gpu` suite's check of the ring's int8 layout on a card (llsim's ldmatrix, prmt and m16n8k32 are
    the PTX ISA read by this project's authors): tests/user t17 (its 32 x 32 x 32 tiles take the ring, B
    row-major: `split16`) exactly as the interpreter gives it."""
    import io
    import sys
    from pathlib import Path

    import tilelang.run as run

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "user"))
    from userprog import DIR, program_tensors

    prog = str(DIR / "t17_int8_gemm_dequant_bf16.tile")
    want = program_tensors(run.execute(prog, "cpu", out=io.StringIO()))
    gpu = run.execute(prog, "gpu", out=io.StringIO())
    assert gpu.device.kind == "gpu"
    got = program_tensors(gpu)
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        np.testing.assert_array_equal(got[k], w, err_msg=k)
