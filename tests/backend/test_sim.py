"""The code generator's output, run on the CPU by `llsim` (a simulator of the
NVPTX LLVM IR it emits), against the interpreter: layouts, masked lanes of
non-power-of-two tiles, replicas, reductions (registers, shuffles, shared
memory across warps), scans and layout conversions are checked without a
GPU, on fresh random inputs. Kept small: the simulator runs one Python
generator per thread."""

from __future__ import annotations

import numpy as np
import pytest
from heavy_gate import HEAVY
from llsim import SimDevice
from row_cases import CASES, compare, run_interp

SIM_CASES = [c for c in CASES if c.sim]


@pytest.mark.parametrize("case", SIM_CASES, ids=[c.name for c in SIM_CASES])
def test_generated_code_matches_interpreter(case) -> None:  # type: ignore[no-untyped-def]
    seed = int(np.random.default_rng().integers(1 << 31))
    k = case.kernel()
    args = case.args(np.random.default_rng(seed), k)
    want = run_interp(k, case, args)
    got = [a.copy() for a in args]
    SimDevice().run(k, case.grid, got)
    try:
        compare(case, k, want, got)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from None


def test_every_output_element_is_written() -> None:
    """Poisoned outputs (7s): every element of the last, partial tile is stored."""
    case = SIM_CASES[0]
    k = case.kernel()
    args = case.args(np.random.default_rng(0), k)
    SimDevice().run(k, case.grid, args)
    assert not np.any(args[0] == 7)


def _interp_and_sim(suite, seed: int):  # type: ignore[no-untyped-def]
    """A `backend_cases.random_suite`'s kernel, its arguments from `seed` run
    by the interpreter (want) and by llsim (got)."""
    from tilelang.interp import run_kernel

    k = suite.kernel()
    args = suite.args(np.random.default_rng(seed))
    want = [a.copy() for a in args]
    run_kernel(k, suite.grid, want)
    got = [a.copy() for a in args]
    SimDevice().run(k, suite.grid, got)
    return k, want, got


def test_identity_permute_of_a_tile_laid_out_for_its_column_sums() -> None:
    """The H200's hypothesis run found it: x [2, 2, 64] loaded, summed along
    axis 0 (layout_assign gives it the warps on its last dim) and stored as
    `x.permute([0, 1, 2])`, whose result keeps the default layout. The
    identity permute reused x's registers as if the layouts were one: 3/4
    of the output landed in the wrong places."""
    from backend_cases import RandomSpec, random_suite

    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir

    spec = RandomSpec(dtype=DType.F32, tile=(2, 2, 64), cut=(0, 0, 0), red=ir.ReduceOp.SUM, axis=0,
                      perm=(0, 1, 2), warps=2)
    _, want, got = _interp_and_sim(random_suite(spec), 0)
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)


def test_random_kernels_match_interpreter_in_llsim() -> None:
    """The GPU suite's hypothesis differential test (random shapes, dtypes,
    reductions, scans, permutes and warp counts) on the CPU: llsim runs the
    generated code, so a layout rule that breaks a form fails here, before a
    GPU sees it (the identity-permute miscompile above was found only on
    the H200). 10 derandomised examples by default (~0.2 CPU-s each), the 30 they were with TILE_SLOW=1
    (the `heavy` runs: the lead's device calls and the session's full slow run)."""
    hypothesis = pytest.importorskip("hypothesis")
    from backend_cases import random_specs, random_suite

    @hypothesis.settings(max_examples=30 if HEAVY else 10, deadline=None, derandomize=True, database=None)
    @hypothesis.given(random_specs())
    def check(spec) -> None:  # type: ignore[no-untyped-def]
        suite = random_suite(spec)
        k, want, got = _interp_and_sim(suite, 1)
        for p, w, g_ in zip(k.params, want, got, strict=True):
            if p.name in suite.tols:
                rtol, atol = suite.tols[p.name]
                np.testing.assert_allclose(g_.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                           err_msg=f"`{p.name}` of {spec}")

    check()
