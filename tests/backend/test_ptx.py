"""PTX emission for every sample kernel, assembled with `ptxas` for sm_80 and sm_90.

No GPU needed. Skips only the ptxas step where `ptxas` is not installed.
"""

from __future__ import annotations

import re

import pytest

from tilelang.backend import CodegenError, compile_kernel, emit_llvm
from tilelang.backend.target import ptxas_available, run_ptxas

from backend_cases import all_sample_kernels

KERNELS = all_sample_kernels()


def _twins(items: list, specific: set[str], new: str, name=str) -> list[object]:  # type: ignore[no-untyped-def,type-arg]
    """(item, arch) for sm_80 and `new`; sm_80 `heavy` where its PTX is `new`'s but the `.target` line (its
    `name` not in `specific`: the `new` case checks it), as test_numerics_diff's sm_80 twins (TILE_SLOW=1
    assembles them)."""
    return [p for it in items for p in (
        pytest.param(it, "sm_80", id=f"{name(it)}-sm_80", marks=() if name(it) in specific else pytest.mark.heavy),
        pytest.param(it, new, id=f"{name(it)}-{new}"))]


def _same_but_target(a: list[str], b: list[str], arch_a: str, arch_b: str) -> bool:
    return [t.replace(f".target {arch_a}", ".target ?", 1) for t in a] == \
        [t.replace(f".target {arch_b}", ".target ?", 1) for t in b]


# the sample kernels whose sm_80 PTX is not their sm_90 PTX but for the target line (none today)
KERNELS_ARCH_SPECIFIC: set[str] = set()


@pytest.mark.parametrize(("name", "arch"), _twins(sorted(KERNELS), KERNELS_ARCH_SPECIFIC, "sm_90"))
def test_ptx_assembles(name: str, arch: str) -> None:
    ck = compile_kernel(KERNELS[name](), arch)
    assert f".target {arch}" in ck.ptx
    assert f".entry {ck.abi.name}(" in ck.ptx
    assert f".reqntid {ck.abi.num_threads}" in ck.ptx
    if arch == "sm_90":  # (a kernel whose sm_80 PTX differs: list it in KERNELS_ARCH_SPECIFIC)
        same = _same_but_target([compile_kernel(KERNELS[name](), "sm_80").ptx], [ck.ptx], "sm_80", arch)
        assert same == (name not in KERNELS_ARCH_SPECIFIC), name
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    r = run_ptxas(ck.ptx, arch)
    assert r.returncode == 0, r.stderr


def test_vector_add_uses_16_byte_accesses_when_specialised() -> None:
    from tilelang.backend import TensorFacts
    from tilelang.ir import samples

    facts = {n: TensorFacts(True, (True,)) for n in "zxy"}
    ptx = compile_kernel(samples.vector_add(1024), "sm_90", facts).ptx
    # CHECK: every global access is a v4 access and nothing falls back to scalars
    assert len(re.findall(r"ld\.global(\.nc)?\.v4\.b32", ptx)) == 4
    assert len(re.findall(r"st\.global\.v4\.b32", ptx)) == 2
    assert not re.search(r"ld\.global(\.nc)?\.b32", ptx)


def test_unspecialised_load_keeps_a_scalar_edge_path() -> None:
    from tilelang.ir import samples

    ptx = compile_kernel(samples.vector_add(1024), "sm_80").ptx
    assert re.search(r"ld\.global(\.nc)?\.v4\.b32", ptx)
    assert re.search(r"ld\.global(\.nc)?\.b32", ptx)  # the masked, misaligned fallback


def test_llvm_text_is_deterministic() -> None:
    from tilelang.ir import samples

    assert emit_llvm(samples.gemm(32, 32, 16)) == emit_llvm(samples.gemm(32, 32, 16))


@pytest.mark.parametrize("name", ["elementwise_f32", "elementwise_i64", "cast_f64", "structure"])
def test_op_suites_assemble_for_sm80(name: str) -> None:
    from backend_cases import SUITES

    suite = next(s for s in SUITES if s.name == name)
    ck = compile_kernel(suite.kernel(), "sm_80")
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    r = run_ptxas(ck.ptx, "sm_80")
    assert r.returncode == 0, r.stderr


def test_random_kernels_compile_and_assemble() -> None:
    """Random tile shapes (1-3 dims, partial edges), every reduction over any axis
    broadcast back, scans and permutes: LLVM verifies and ptxas assembles them."""
    hypothesis = pytest.importorskip("hypothesis")
    from backend_cases import random_specs, random_suite

    @hypothesis.settings(max_examples=15, deadline=None, derandomize=True)
    @hypothesis.given(random_specs())
    def check(spec) -> None:  # type: ignore[no-untyped-def]
        ck = compile_kernel(random_suite(spec).kernel(), "sm_80")
        if ptxas_available():
            r = run_ptxas(ck.ptx, "sm_80")
            assert r.returncode == 0, r.stderr

    check()


def test_device_assert_compiles_to_an_error_word_update() -> None:
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder
    from tilelang.source import Span

    b = Builder("chk")
    b.tensor_param("z", DType.F32, 1, mutable=True, tile_shape=(128,))
    off = b.mul(b.block_id(0), b.const(128, DType.I32))
    t = b.load("z", (off,), (128,))
    cond = b.lt(t, b.broadcast(b.const(10.0, DType.F32), (128,)))
    k = b.finish()
    span = Span(0, 3, 9)
    k = ir.Kernel(k.name, k.params, ir.Region((), (*k.body.ops[:-1], ir.Assert(cond, "m", span), k.body.ops[-1])))
    ck = compile_kernel(k, "sm_80")
    assert ck.abi.asserts == ((span, "m", "", -1),)
    assert ck.abi.slots[-1].what == "err"
    assert re.search(r"atom\.[a-z.]*global\.cas\.b32", ck.ptx)  # first failure wins


def test_every_opcode_has_a_lowering() -> None:
    """No element-wise, reduction, scan or atomic opcode of the IR lacks a GPU
    lowering (the backend's column of the intrinsic table)."""
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.ir.builder import Builder

    E = ir.ElemOp
    b = Builder("every_op")
    b.tensor_param("x", DType.F32, 1)
    b.tensor_param("xi", DType.I32, 1)
    b.tensor_param("hist", DType.I32, 1)
    b.tensor_param("o", DType.F32, 1)
    b.tensor_param("oi", DType.I32, 1)
    z = b.const(0, DType.I32)
    x = b.load("x", (z,), (64,))
    xi = b.load("xi", (z,), (64,))
    for op in E:
        v = xi if op.int_only or op in (E.NOT, E.AND, E.OR, E.XOR) else x
        if op is E.WHERE:
            args: tuple[ir.Value, ...] = (b.lt(x, x), v, v)
        else:
            args = (v,) * op.arity
        r = b.elementwise(op, *args)
        if r.dtype is DType.BOOL:
            r = b.cast(r, DType.I32)
        b.store("oi" if r.dtype is DType.I32 else "o", (z,), r)
    for rop in ir.ReduceOp:
        r = b.reduce(rop, b.reshape(x, (8, 8)), 1)
        b.store("oi" if r.dtype is DType.I32 else "o", (z,), r)
    for sop in ir.ScanOp:
        b.store("o", (z,), b.scan(sop, x, 0))
    for aop in ir.AtomicOp:
        b.atomic(aop, "hist", (xi,), xi)
    ck = compile_kernel(b.finish(), "sm_80")
    assert ck.ptx.count("atom.") >= len(ir.AtomicOp)


EXAMPLES = sorted((__import__("pathlib").Path(__file__).resolve().parents[2] / "examples").glob("*.tile"))


# the examples whose sm_80 PTX is not their sm_90a PTX but for the target line (wgmma, TMA)
EXAMPLES_ARCH_SPECIFIC = {"attention", "gemm"}


@pytest.mark.parametrize(("path", "arch"), _twins(EXAMPLES, EXAMPLES_ARCH_SPECIFIC, "sm_90a", lambda p: p.stem))
def test_example_ptx_assembles(path, arch: str) -> None:  # type: ignore[no-untyped-def]
    """Every kernel instance of every example, through the driver's gpu/ptx
    stages, assembles with ptxas for sm_80 and sm_90a; the sm_90a case checks
    whether its sm_80 PTX is the same text (`EXAMPLES_ARCH_SPECIFIC`: not)."""
    from tilelang import driver

    result = driver.compile(path, "ptx", options=driver.Options(arch=arch))
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.output, "no kernel instance"
    if arch == "sm_90a":  # (an example whose sm_80 PTX differs: list it in EXAMPLES_ARCH_SPECIFIC)
        sm80 = driver.compile(path, "ptx", options=driver.Options(arch="sm_80")).output
        same = _same_but_target([a.text for a in sm80], [a.text for a in result.output], "sm_80", arch)
        assert same == (path.stem not in EXAMPLES_ARCH_SPECIFIC), path.stem
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    for art in result.output:
        r = run_ptxas(art.text, arch)
        assert r.returncode == 0, f"{art.kernel}: {r.stderr}"


def test_ir_level_by_kernel(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """LLVM IR passes: none for a warp-role kernel whose loops hold no tile
    arithmetic (the wgmma GEMM), -O1 for one whose loops do (attention's
    softmax), the target's level for one whose loops copy through registers
    (the register-copy producer) and otherwise (the sm_80 GEMM); the PTX of the unoptimised
    GEMM still assembles. The level is part of the compile-cache key: the
    same LLVM text at another level is another PTX."""
    from pathlib import Path

    from gemm_cases import GemmConfig

    from tilelang import driver
    from tilelang.backend import ir_level, lower_gpu
    from tilelang.backend.facts import TensorFacts
    from tilelang.backend.target import Target

    cfg = GemmConfig(128, 256, 64, warps=8, stages=4)
    src = cfg.source() + ("fn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          " let mut o = zeros::<f16>([8, 8]);"
                          " gemm::<128, 256, 64>(o.partition([128, 256]), &a, &b).sync(); }\n")
    gemm = driver.compile(src, "ir").output[0]
    facts = {n: TensorFacts.assumed(2) for n in "abc"}
    assert ir_level(lower_gpu(gemm, "sm_90a", facts), Target("sm_90a")) == 0
    assert ir_level(lower_gpu(gemm, "sm_80", facts), Target("sm_80")) == 3
    # odd strides: operands copied through registers by the producer warps; without
    # IR passes ptxas spills there, and -O3 is 11 % faster than -O1 (H200)
    odd = {n: TensorFacts(True, (False, False)) for n in "abc"}
    assert ir_level(lower_gpu(gemm, "sm_90a", odd), Target("sm_90a")) == 3
    assert ir_level(lower_gpu(gemm, "sm_90a", odd), Target("sm_90a", opt=2)) == 2
    attn = driver.compile((Path(__file__).parent / "gpu_goldens" / "attention.tile").read_text(), "ir").output[0]
    gk = lower_gpu(attn, "sm_90a", {n: TensorFacts.assumed(2) for n in "oqkv"})
    assert ir_level(gk, Target("sm_90a")) == 1
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    ck = compile_kernel(gemm, "sm_90a", facts)
    ptx = ck.ptx
    assert "wgmma.mma_async" in ptx
    import tilelang.backend as backend

    monkeypatch.setattr(backend, "ir_level", lambda gk, tgt: 1)
    assert compile_kernel(gemm, "sm_90a", facts).key != ck.key
    if ptxas_available():
        r = run_ptxas(ptx, "sm_90a")
        assert r.returncode == 0, r.stderr
