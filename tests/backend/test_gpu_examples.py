"""Every example runs on the GPU and its tensors equal the interpreter's run.

Runs `main` of each `examples/*.tile` on both engines through the host runtime
(`tilelang.run.execute`) and compares every tensor left in `main`'s locals.
Marked `gpu`: skipped where there is no CUDA device.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tile"))


def _tensors(ex):  # type: ignore[no-untyped-def]
    from tilelang.runtime.tensor import Tensor

    return {k: v for k, v in ex.main_locals.items() if isinstance(v, Tensor)}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_gpu_matches_cpu(path: Path) -> None:
    from tilelang.run import execute
    from tilelang.runtime import cuda

    if not cuda.is_available():
        pytest.skip("no CUDA device")
    try:
        cpu = execute(path, "cpu", out=io.StringIO())
    except Exception as e:  # the example itself is broken on the reference engine
        pytest.skip(f"example fails on the CPU interpreter: {e!r}")
    gpu = execute(path, "gpu", out=io.StringIO())
    want, got = _tensors(cpu), _tensors(gpu)
    assert set(want) == set(got)
    for name in want:
        a, b = want[name].numpy(), got[name].numpy()
        tol = 2e-2 if want[name].dtype.value in ("f16", "bf16") else 1e-4
        np.testing.assert_allclose(b.astype(np.float64), a.astype(np.float64), rtol=tol, atol=tol,
                                   err_msg=f"`{name}` in {path.name}")
