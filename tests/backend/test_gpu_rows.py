"""Row kernels, reductions and scans at odd widths and non-power-of-two tiles:
the GPU against the interpreter on fresh random inputs (`row_cases.py`).

Marked `gpu`: skipped cleanly where cuda-python finds no device. The same
cases that fit run on the CPU simulator of the generated code (`test_sim.py`)."""

from __future__ import annotations

import numpy as np
import pytest
from row_cases import CASES, compare, run_interp

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def dev():  # type: ignore[no-untyped-def]
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    return cuda.device()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gpu_matches_interpreter(dev, case) -> None:  # type: ignore[no-untyped-def]
    from tilelang.ir import nodes as ir

    seed = int(np.random.default_rng().integers(1 << 31))
    k = case.kernel()
    args = case.args(np.random.default_rng(seed), k)
    want = run_interp(k, case, args)
    bufs = [dev.upload(a, p.dtype) for p, a in zip(k.params, args, strict=True)]
    dev.run(dev.prepare(k), case.grid, bufs)
    dev.sync()
    got = [dev.download(b, p.dtype, a.shape) if isinstance(p, ir.TensorParam) else a
           for p, a, b in zip(k.params, args, bufs, strict=True)]
    try:
        compare(case, k, want, got)
    except AssertionError as e:
        raise AssertionError(f"seed {seed}: {e}") from None
