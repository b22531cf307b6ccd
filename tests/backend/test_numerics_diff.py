"""The GPU code path against the interpreter, op by op: every element-wise,
cast, reduction and scan operation on every dtype it takes, on the edges of
each type (signed zeros, subnormals, tiny and huge values, infinities, NaN,
the integer extremes) and random values (`numerics_cases.py` builds the
kernels from its table). The generated LLVM IR runs on the CPU in `llsim`,
for sm_90a (and sm_80 in the sweep: the element-wise code is the same), and
each kernel is assembled by ptxas for sm_90a and for sm_80 (by default only
where sm_80's PTX is not sm_90a's but the target line: `ARCH_SPECIFIC`; and for
sm_90a by default every float case, the integers at 8 and 64 bits and each
constant kernel's first constant: `_assembled_by_default`). The
math is also run with every approximate instruction off by its documented
worst error, up and down (`llsim.APPROX_ERROR`), so the tolerance a result
must meet (`fastmath.tolerance`, printed in docs/reference.md) holds for
what a GPU may compute, not only for exact hardware.

`TILE_NUMERICS_SWEEP=N` runs N random values a scale (and 4N random pairs,
every pair of the edges) instead of the default few, on both architectures
and every narrow type at the worst error (CI runs the default size).
"""

from __future__ import annotations

import dataclasses
import re

import llsim
import numerics_cases as nc
import numpy as np
import pytest
from llsim import SimDevice

from tilelang.backend import emit_ptx, fastmath
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

CASES = nc.cases()
# the cases with approximate instructions in them: the unary math of f32
# (f16 runs the same code as bf16; f64 has no approximations, and neither
# have the binary ops, fma, pow and erf)
FLOAT_MATH = [c for c in CASES if c.group == "unary" and c.dtype in
              ((DType.F32, DType.BF16, DType.F16) if nc.SWEEP else (DType.F32, DType.BF16))]
# sm_80 and sm_90a emit the same element-wise code; the sweep runs both
ARCHS = ["sm_80", "sm_90a"] if nc.SWEEP else ["sm_90a"]

# Where the GPU is documented to differ from the interpreter, and what it
# gives there: (op, dtype) -> (the domain sentence of `fastmath`'s table
# that says so, where it applies, the result the GPU gives there).
DOCUMENTED_LIMITS = {
    ("sin", DType.F64): ("|x| < 2^50 (NaN beyond)", lambda x: np.abs(x) >= 2.0**50, np.nan),
    ("cos", DType.F64): ("|x| < 2^50 (NaN beyond)", lambda x: np.abs(x) >= 2.0**50, np.nan),
}


def _compare(case: nc.Case, got: list[np.ndarray], want: list[np.ndarray]) -> list[str]:
    problems = []
    for op, g, w in zip(case.ops, got, want, strict=True):
        limit = DOCUMENTED_LIMITS.get((getattr(op, "value", ""), case.dtype))
        if limit is not None:
            outside = limit[1](np.asarray(case.inputs[0], np.float64))
            expect = np.asarray(g)[outside]
            assert np.all(np.isnan(expect)) if np.isnan(limit[2]) else np.all(expect == limit[2]), \
                f"{op} on {case.dtype.value} outside `{limit[0]}`: {expect}"
            g, w = g.copy(), w.copy()
            g[outside] = w[outside] = 0
        problems += nc.disagreements(case, op, g, w, case.inputs)
    return problems


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_gpu_code_agrees_with_the_interpreter(case: nc.Case, arch: str) -> None:
    k = case.kernel()
    want = nc.run_interp(case, k)
    got = nc.run_sim(case, k, arch, SimDevice)
    problems = _compare(case, got, want)
    assert not problems, f"{case.id} ({arch}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("error", [1, -1], ids=["up", "down"])
@pytest.mark.parametrize("case", FLOAT_MATH, ids=lambda c: c.id)
def test_within_tolerance_at_the_hardwares_worst_error(case: nc.Case, error: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llsim, "APPROX_ERROR", error)
    k = case.kernel()
    want = nc.run_interp(case, k)
    got = nc.run_sim(case, k, "sm_90a", SimDevice)
    problems = _compare(case, got, want)
    assert not problems, f"{case.id} (approximations {error:+d} worst error):\n  " + "\n  ".join(problems)


# The cases whose sm_80 PTX is not their sm_90a PTX but for the `.target` line (conversions with an
# instruction of their own on sm_90; the LLVM text is the same): each sm_90a case below checks that a case in
# it is, and the (`heavy`) sm_80 case of every other that it is not.
ARCH_SPECIFIC = {"ternary-bf16", "cast-bool", "cast-i8", "cast-i16", "cast-u8", "cast-u16"}


# The integer types whose cases ptxas assembles by default: the narrowest (an 8-bit value lives in a 16-bit
# register, its operations widened) and the widest (64 bits, signed and unsigned: a reduction's shuffles split
# them; the reductions and scans have no u64 case); the other integer widths' cases of a group are the same
# operations at widths between (`heavy`: TILE_SLOW=1 assembles them), their values still checked on llsim by
# test_the_gpu_code_agrees_with_the_interpreter. ARCH_SPECIFIC cases, the floats and bool stay whole.
ASSEMBLED_INTS = {DType.I8, DType.I64, DType.U64}


def _assembled_by_default(c: nc.Case) -> bool:
    """Whether the default run assembles `c`'s sm_90a PTX: every float, bool and ARCH_SPECIFIC case, the
    integer cases of `ASSEMBLED_INTS` (and the one integer `where`), and a constant kernel's first constant
    (the others are the same instructions with another immediate)."""
    if c.id in ARCH_SPECIFIC or (c.group == "const" and not c.id.endswith("-c0")):
        return c.id in ARCH_SPECIFIC
    return not c.dtype.is_int or c.dtype in ASSEMBLED_INTS or c.id == "where-u8" or c.group == "const"


def _assemble_params() -> list[object]:
    """(case, arch) for every case and both architectures; sm_80 is `heavy` where its PTX is the sm_90a case's
    text but the target line (TILE_SLOW=1 assembles those for sm_80 too, and checks that), sm_90a where
    `_assembled_by_default` says so."""
    out = []
    for c in CASES:
        heavy = () if c.id in ARCH_SPECIFIC else (pytest.mark.heavy,)
        heavy90 = () if _assembled_by_default(c) else (pytest.mark.heavy,)
        out += [pytest.param(c, "sm_80", id=f"{c.id}-sm_80", marks=heavy),
                pytest.param(c, "sm_90a", id=f"{c.id}-sm_90a", marks=heavy90)]
    return out


def _llvm(k: ir.Kernel, arch: str) -> tuple[str, int]:
    """The LLVM text `compile_kernel` hands NVPTX for `arch`, and its IR level (the rest of the PTX's key)."""
    from tilelang.backend import _target, ir_level, lower_gpu
    from tilelang.backend.llvm import emit_llvm_text

    tgt = _target(arch)
    gk = lower_gpu(k, tgt)
    text, _ = emit_llvm_text(gk, gk.facts, tgt.pdl_mode, tgt.trace, tgt.tma_prefetch, "", tgt.l2_evict, tgt.ldg_early)
    return text, ir_level(gk, tgt)


def _same_ptx(k: ir.Kernel, sm_90a_ptx: str) -> bool:
    """Whether the kernel's sm_80 PTX is `sm_90a_ptx` but the `.target` line."""
    return emit_ptx(k, "sm_80").replace(".target sm_80", ".target sm_90a", 1) == sm_90a_ptx


@pytest.mark.parametrize(("case", "arch"), _assemble_params())
def test_every_generated_kernel_assembles(case: nc.Case, arch: str) -> None:
    """No spills; for sm_90a also: the case's sm_80 LLVM text (and IR level) is this one's, so NVPTX alone
    can make their PTX differ, and it does for the cases in `ARCH_SPECIFIC` (whose sm_80 PTX the default run
    assembles); the sm_80 case of any other (`heavy`) checks that its PTX is sm_90a's but the `.target` line,
    so the default run may leave its NVPTX compile and ptxas out (the same text; one LLVM -> PTX a case less,
    ~0.1 CPU-s each with a cold compile cache)."""
    from ptxas_report import assemble

    k = case.kernel()
    ptx = emit_ptx(k, arch)
    if arch == "sm_90a":
        assert _llvm(k, "sm_80") == _llvm(k, "sm_90a"), case.id
        if case.id in ARCH_SPECIFIC:
            assert not _same_ptx(k, ptx), f"{case.id}: its sm_80 PTX is sm_90a's (leave it out of ARCH_SPECIFIC)"
    elif case.id not in ARCH_SPECIFIC:
        assert _same_ptx(k, emit_ptx(k, "sm_90a")), f"{case.id}: its sm_80 PTX differs (put it in ARCH_SPECIFIC)"
    r = assemble(ptx, arch)
    assert r.max_spill_stores == 0, r.text


_WIDE_SHIFT = re.compile(r"\b(?:shl\.b64|shr\.[us]64)\s+%rd\d+,\s*%rd\d+,\s*(%r\d+);")
_DEF = re.compile(r"\s*([\w.]+)\s+(%\w+),\s*(.*);")


def _unguarded_wide_shifts(ptx: str) -> list[str]:
    """The 64-bit shifts whose (32-bit) amount register is not masked to 0..63 (`and ..., 63`, or a
    `min.u64 ..., 63` for an arithmetic right shift) before it: PTX takes a 64-bit shift's amount as
    32 bits, so an unmasked 64-bit amount of 2^32 shifts by 0."""
    defs = {m.group(2): (m.group(1), m.group(3)) for m in map(_DEF.match, ptx.splitlines()) if m}
    bad = []
    for line in ptx.splitlines():
        if not (m := _WIDE_SHIFT.search(line)):
            continue
        op, args = defs.get(m.group(1), ("", ""))
        if op == "cvt.u32.u64":
            op, args = defs.get(args.strip(), ("", ""))
        if not (op in ("and.b32", "and.b64", "min.u64") and args.endswith(", 63")):
            bad.append(line.strip())
    return bad


def test_a_64_bit_shift_amount_is_masked_before_ptx_truncates_it() -> None:
    """Found on an H100 (numerics table, const-i64): `-1 << x` gave -1 for x = 2^32 and -2^63. The
    `select x >= 64` guard was folded away by LLVM's NVPTX backend (PTX clamps an amount past 64) after
    the amount had been truncated to 32 bits; llsim runs the LLVM IR, where the guard holds, so the
    PTX itself is checked here."""
    wide = [c for c in CASES if c.group in ("shift", "const") and c.dtype.bits == 64 and c.dtype.is_int]
    assert {c.dtype for c in wide} >= {DType.I64, DType.U64}, [c.id for c in wide]
    for c in wide:
        ptx = emit_ptx(c.kernel(), "sm_90a")
        assert _WIDE_SHIFT.search(ptx) or c.group == "const", c.id
        assert not _unguarded_wide_shifts(ptx), (c.id, _unguarded_wide_shifts(ptx))
    assert _unguarded_wide_shifts("cvt.u32.u64 %r1, %rd4;\n shl.b64 %rd2, %rd1, %r1;")  # the check can fail


def test_the_table_covers_every_operation() -> None:
    """A new op, reduction, scan or dtype that the table forgot is a failure
    here, not a silent gap."""
    seen: dict[object, set[DType]] = {}
    for c in CASES:
        for op in c.ops:
            seen.setdefault(op, set()).add(c.dtype)
    floats, ints = set(nc.FLOATS), set(nc.INTS)
    for op in ir.ElemOp:
        if op is ir.ElemOp.WHERE:
            assert seen[op] >= {DType.F32, DType.BF16, DType.I32, DType.U8}
            continue
        if not op.int_only:
            assert seen.get(op, set()) >= floats or op in (ir.ElemOp.AND, ir.ElemOp.OR, ir.ElemOp.XOR,
                                                           ir.ElemOp.NOT), op
        if not op.float_only:
            assert seen.get(op, set()) >= ints, op
    for rop in ir.ReduceOp:
        assert seen[rop] >= floats, rop
    for sop in ir.ScanOp:
        assert seen[sop] >= floats, sop
    every = set(nc.CAST_TYPES)
    for src in every:
        casts = next(c for c in CASES if c.group == "cast" and c.dtype is src)
        assert set(casts.ops) == every - {src}, src
    assert set(DType) == every  # every dtype is a cast source and target


def test_the_inputs_hold_the_edges() -> None:
    for dt in nc.FLOATS:
        x = np.asarray(nc.float_values(dt), np.float64)
        assert np.any(np.isnan(x)) and np.any(x == np.inf) and np.any(x == -np.inf)
        assert np.any((x == 0) & np.signbit(x)) and np.any((x == 0) & ~np.signbit(x))
        tiny = {DType.F32: 2.0**-126, DType.F64: 2.0**-1022, DType.F16: 2.0**-14, DType.BF16: 2.0**-126}[dt]
        assert np.any((x != 0) & (np.abs(x) < tiny)), f"{dt}: no subnormal"
    for dt in nc.INTS:
        x = nc.int_values(dt)
        info = np.iinfo(dt.np_dtype)
        assert info.min in x and info.max in x and 0 in x


def test_documented_limits_are_the_tables() -> None:
    for (op, dt), (domain, _, _) in DOCUMENTED_LIMITS.items():
        table = fastmath.F64_MATH if dt is DType.F64 else fastmath.MATH
        assert table[op].domain == domain, (op, dt)


def test_a_planted_disagreement_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tester can fail: tanh by its exp formula all the way down to 0 (as
    it was before the polynomial) loses tanh(1e-6) to cancellation."""
    monkeypatch.setattr(fastmath, "TANH_POLY_BELOW", 0.0)
    case = next(c for c in CASES if c.id == "unary-f32")
    case = dataclasses.replace(case, ops=(ir.ElemOp.TANH,))
    k = case.kernel()
    problems = _compare(case, nc.run_sim(case, k, "sm_80", SimDevice), nc.run_interp(case, k))
    assert any(p.startswith(("tanh(9.99999997475e-07)", "tanh(2.9999998929")) for p in problems), problems


def _tanh_poly(x: np.ndarray) -> np.ndarray:
    """`codegen/arith.ftanh`'s polynomial, in f32 (fma exact in f64, rounded once)."""
    f32 = np.float32
    t = (x * x).astype(f32)
    p = np.full_like(x, f32(fastmath.TANH_POLY[-1]))
    for coef in fastmath.TANH_POLY[-2::-1]:
        p = (p.astype(np.float64) * t + np.float64(f32(coef))).astype(f32)
    x3 = (x * t).astype(f32)
    return (x3.astype(np.float64) * p + x).astype(f32)


def test_the_tanh_polynomial_is_relative_to_an_ulp_on_its_range() -> None:
    x = np.concatenate([np.linspace(0, fastmath.TANH_POLY_BELOW, 200_001, dtype=np.float32)[1:],
                        np.geomspace(1e-38, 1e-3, 20_000).astype(np.float32)])
    got = _tanh_poly(x).astype(np.float64)
    want = np.tanh(x.astype(np.float64))
    assert np.max(np.abs(got / want - 1)) < 1e-7
    assert fastmath.MATH["tanh"].rtol >= 1e-7 and fastmath.MATH["tanh"].atol <= 1e-30


@pytest.mark.parametrize("dt", [DType.F32, DType.F16, DType.BF16], ids=lambda d: d.value)
def test_tanh_is_relative_at_small_x(dt: DType) -> None:
    """The three values of the report that opened this (tanh(3e-8) = 0,
    4.6 % off at 1e-6, 1.7e-4 relative at 1e-4), and -0.0 kept."""
    x = nc.as_dtype(np.array([3e-8, 1e-6, 1e-4, -1e-4, 0.3, 0.59, 0.61, -0.0, 1e-30] + [0.0] * 55), dt)
    case = nc.Case("unary", dt, (ir.ElemOp.TANH,), (x,))
    k = case.kernel()
    (got,) = nc.run_sim(case, k, "sm_80", SimDevice)
    want = nc.as_dtype(np.tanh(np.asarray(x, np.float64)), dt)
    rtol = fastmath.tolerance("tanh", dt)[0]
    g, w = np.asarray(got, np.float64)[:9], np.asarray(want, np.float64)[:9]
    assert np.all(np.abs(g - w) <= rtol * np.abs(w) + 1e-30), (g, w)
    assert np.signbit(g[7]) and g[7] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_gpu_agrees_with_the_interpreter(case: nc.Case) -> None:
    """The same table on a real GPU (skipped without one): the hardware's own
    approximations, not llsim's model of them."""
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    dev = cuda.device()
    k = case.kernel()
    want = nc.run_interp(case, k)
    args = case.args()
    gpu = [dev.upload(a, p.dtype) for p, a in zip(k.params, args, strict=True)]
    dev.run(dev.prepare(k), case.grid(), gpu)
    dev.sync()
    outs = k.params[len(case.inputs):]
    got = [dev.download(g, p.dtype, a.shape) for p, g, a in zip(outs, gpu[len(case.inputs):],
                                                                 args[len(case.inputs):], strict=True)]
    problems = _compare(case, got, want)
    assert not problems, f"{case.id} (GPU):\n  " + "\n  ".join(problems)
