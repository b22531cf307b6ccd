"""GEMMs whose operands TMA cannot describe (row strides that are not a
multiple of 16 bytes, as in an 8191^3 product; edges in every dimension) take
a pipelined tensor-core path on both targets, and agree with the interpreter
EXACTLY: the inputs are small integers, so every product and partial sum is
exact in f32 whatever the order, and any difference is a wrong element or a
wrong edge (the interpreter reads zeros past a tensor's edge; the first
element of each operand is infinite, so a load past the edge that is not
masked to zero turns an in-bounds result into NaN).

- sm_90a: the warp-specialised wgmma pipeline with the register-copy
  producer (`codegen/smem_copy.py`): the paired-column copy (masked edge
  tiles and unmasked inner ones), the element-wise copy for tiles whose
  column pairs do not divide the producer's threads, and one operand by TMA
  with the other copied.
- sm_80: the cp.async ring with element copies for unaligned operands.

Run in `llsim` on the CPU; the interpreter through the Python API.
"""

from __future__ import annotations

import numpy as np
import pytest
from gemm_cases import GemmConfig
from llsim import SimDevice
from ptxas_report import assemble

import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu.printer import print_gpu_kernel

pytestmark = pytest.mark.filterwarnings(
    "ignore:invalid value encountered:RuntimeWarning"
)  # inf * 0


def _kernel(cfg: GemmConfig):  # type: ignore[no-untyped-def]
    src = cfg.source() + (
        f"\nfn main() {{ let a = zeros::<{cfg.dtype}>([8, 8]); let b = zeros::<{cfg.dtype}>([8, 8]);"
        f" let mut o = zeros::<{cfg.out}>([8, 8]);"
        f" gemm::<{cfg.bm}, {cfg.bn}, {cfg.bk}>(o.partition([{cfg.bm}, {cfg.bn}]), &a, &b).sync(); }}\n"
    )
    return driver.compile(src, "ir").output[0]


def _inputs(cfg: GemmConfig, M: int, N: int, K: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    np_in = np.float16 if cfg.dtype == "f16" else np.float32  # bf16 host arrays are f32
    a = rng.integers(-4, 5, (M, K)).astype(np_in)
    b = rng.integers(-4, 5, (N, K) if cfg.trans_b else (K, N)).astype(np_in)
    # An infinity where an unmasked out-of-bounds read would be redirected:
    # past the edge it would meet the other operand's zeros (inf * 0 = NaN)
    # inside the tile. The interpreter's result does not depend on the order
    # of the sums even so (inf, -inf and NaN absorb).
    a[0, 0] = np.inf
    b[0, 0] = np.inf
    return a, b


def _out(cfg: GemmConfig, M: int, N: int) -> np.ndarray:
    # poisoned with 0.5, which no product of integers is: an element no block writes fails
    return np.full((M, N), 0.5, np.float32 if cfg.out in ("f32", "bf16") else np.float16)


def _interpreted(cfg: GemmConfig, a: np.ndarray, b: np.ndarray, M: int, N: int) -> np.ndarray:
    mod = tilelang.compile(cfg.source())
    c = _out(cfg, M, N)
    mod.gemm[cfg.bm, cfg.bn, cfg.bk](tilelang.partition(c, [cfg.bm, cfg.bn]), a, b).sync()
    return c


def _simulated(
    cfg: GemmConfig, arch: str, a: np.ndarray, b: np.ndarray, M: int, N: int
) -> tuple[np.ndarray, str]:
    k = _kernel(cfg)
    c = _out(cfg, M, N)
    # what the CUDA runtime computes for such a launch: aligned bases, the dims' divisibility
    facts = {
        n: TensorFacts(True, tuple(d % 16 == 0 for d in x.shape))
        for n, x in (("c", c), ("a", a), ("b", b))
    }
    text = print_gpu_kernel(lower_gpu(k, arch, facts))
    SimDevice(arch).run(k, (-(-M // cfg.bm), -(-N // cfg.bn)), [c, a, b], facts)
    return c, text


def _check(cfg: GemmConfig, arch: str, shape: tuple[int, int, int], seed: int) -> str:
    M, N, K = shape
    a, b = _inputs(cfg, M, N, K, seed)
    got, text = _simulated(cfg, arch, a, b, M, N)
    want = _interpreted(cfg, a, b, M, N)
    assert not (want == 0.5).any()
    np.testing.assert_array_equal(got, want)  # NaN == NaN here
    return text


HOPPER_CASES = [
    # (config, (M, N, K), what the GPU IR must show)
    (GemmConfig(64, 64, 32), (67, 45, 37), "copy_to_shared @a|copy_to_shared @b"),  # odd everything
    (
        GemmConfig(64, 64, 32, dtype="bf16", out="f32", trans_b=True),
        (40, 70, 50),
        "copy_to_shared @b",
    ),
    (
        GemmConfig(64, 64, 64, out="f32"),
        (64, 45, 80),
        "tma.load @a|copy_to_shared @b",
    ),  # A by TMA, B copied
    (
        GemmConfig(64, 192, 32, out="f32"),
        (30, 197, 35),
        "copy_to_shared @b",
    ),  # 96 pairs a row: element copy
]


@pytest.mark.parametrize(
    ("cfg", "shape", "shows"),
    HOPPER_CASES,
    ids=["odd_nn", "bf16_nt", "tma_and_copy", "element_copy"],
)
def test_hopper_copy_producer_is_exact(cfg: GemmConfig, shape, shows: str) -> None:  # type: ignore[no-untyped-def]
    text = _check(cfg, "sm_90a", shape, seed=sum(shape))
    assert "warp_specialize" in text and "wgmma" in text
    assert all(s in text for s in shows.split("|")), text


@pytest.mark.parametrize(
    ("cfg", "shape"),
    [
        (GemmConfig(32, 32, 32, warps=4), (37, 29, 41)),
        (GemmConfig(32, 32, 16, warps=4, dtype="bf16", out="f32", trans_b=True), (33, 35, 23)),
    ],
    ids=["odd_nn", "bf16_nt"],
)
def test_sm80_odd_shapes_are_exact(cfg: GemmConfig, shape) -> None:  # type: ignore[no-untyped-def]
    text = _check(cfg, "sm_80", shape, seed=sum(shape))
    assert "dot.mma.sync.smem" in text and "copy.elements" in text, text


@pytest.mark.parametrize(
    "cfg",
    [
        GemmConfig(128, 256, 64, warps=8, stages=4),
        GemmConfig(128, 256, 64, trans_b=True, warps=8, stages=4),
        GemmConfig(128, 128, 64, dtype="bf16", out="bf16", warps=8),
    ],
    ids=lambda c: c.name,
)
def test_copy_producer_ptx_assembles_without_spills(cfg: GemmConfig, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Both operands copied through registers: the producer's register budget
    (`pipeline.COPY_PRODUCER_REGS`, set by setmaxnreg) holds its loads in
    flight without spilling, and the consumers' wgmma loop fits theirs.
    Compiled afresh (an empty compile cache), so an older PTX cannot stand in."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))

    from tilelang.backend import compile_kernel

    k = _kernel(cfg)
    facts = {p.name: TensorFacts(True, (False, False)) for p in k.tensor_params}
    ptx = compile_kernel(k, "sm_90a", facts).ptx
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" not in ptx
    assert "ld.global.nc.b16" in ptx and "st.shared.b32" in ptx  # column pairs
    r = assemble(ptx, "sm_90a")
    assert r.max_spill_stores == 0, r.text
    assert "ignored" not in r, r.text  # setmaxnreg honoured (no C7508)
