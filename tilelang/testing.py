"""Testing helpers: run a kernel on several engines and compare the results.

The CPU interpreter defines what a kernel means (BRIEF §8); the GPU must
agree with it to floating-point tolerance. `compare` runs one kernel call on
each engine, each on its own copies of the NumPy arguments, and asserts that
every output (every array passed as a partition, and every `&` array the
kernel's `unsafe` code writes: a histogram's atomic counts) agrees:

    import tilelang, tilelang.testing as tt

    mod = tilelang.load("examples/softmax.tile")
    x = np.random.randn(300, 64).astype(np.float32)
    out = np.zeros_like(x)
    results = tt.compare(mod.softmax, tilelang.partition(out, [1, 64]), x)
    results["cpu"][0]        # the interpreter's `out`

Engines are "cpu" and "gpu"; without a GPU, `compare(..., devices=("cpu",
"gpu"))` skips the test through pytest when pytest is running and raises
`GpuUnavailable` otherwise. The caller's arrays are never written.

Tolerances: `tolerance(dtype)` is the default per element type (exact for
integers and bool); `rtol`/`atol` override it. Failures are `AssertionError`s
that say how many elements differ and show the worst few with their index.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from tilelang.api import engines
from tilelang.api.errors import CallError
from tilelang.api.module import Kernel, Partition, gpu_available
from tilelang.diagnostics.codes.api import GRAPH_MISUSE
from tilelang.dtypes import DType
from tilelang.interp.numeric import not_close

# Engine-to-engine tolerances (the GPU's fast math and reduction order; see
# backend/fastmath.py for op-by-op figures). Integers and bool are exact.
_TOLERANCE = {
    DType.F16: (1e-2, 1e-3),
    DType.BF16: (2e-2, 1e-2),
    DType.F32: (1e-4, 1e-5),
    DType.F64: (1e-12, 1e-12),
}


class GpuUnavailable(Exception):
    """A comparison asked for the GPU on a machine without one (outside pytest)."""


def tolerance(dtype: DType | np.dtype | type) -> tuple[float, float]:
    """(rtol, atol) for comparing two engines' results of `dtype`."""
    if not isinstance(dtype, DType):
        npd = np.dtype(dtype)
        dtype = next((d for d in DType if d is not DType.BF16 and d.np_dtype == npd), DType.F32)
    return _TOLERANCE.get(dtype, (0.0, 0.0))


def _copy_arg(a: Any, written: bool = False) -> Any:
    """A copy of an argument for one engine's run: partitions and NumPy
    arrays as NumPy copies; an array of another library that the kernel
    writes (a `&` one its `unsafe` code writes) as a NumPy copy where it is
    host memory, else through its library's own copy (`clone`/`copy`), so
    neither the caller's array nor the other engine's run sees the writes."""
    if isinstance(a, Partition):
        return Partition(np.array(np.asarray(a.array), copy=True), a.tile)
    if isinstance(a, np.ndarray):
        return np.array(a, copy=True)
    if written:
        try:
            return np.array(np.asarray(a), copy=True)
        except (TypeError, ValueError, RuntimeError):
            for name in ("clone", "copy"):
                copy = getattr(a, name, None)
                if callable(copy):
                    return copy()
    return a


def run(kernel: Kernel, *args: Any, device: str = "cpu") -> list[np.ndarray]:
    """Run `kernel(*args)` on `device` ("cpu" or "gpu") on copies of the
    NumPy arguments and return the outputs (the partitioned arrays and the
    `&` arrays its `unsafe` code writes, in parameter order) after the run.
    The caller's arrays are not written."""
    if device not in ("cpu", "gpu"):
        raise ValueError(f'device must be "cpu" or "gpu", not {device!r}')
    rec = engines.RECORDING
    if rec is not None and getattr(rec, "_thread", None) == threading.get_ident():
        # its `.sync()` would be recorded, not run: outputs nothing wrote
        # (and `compare` would find every engine agreeing on them)
        raise CallError(
            f"`tilelang.testing` runs `{kernel.__name__}` at once, but the `with tilelang.graph()` "
            "block around it records kernel calls instead of running them",
            help="compare outside the block",
            code=GRAPH_MISUSE,
        )
    if device == "gpu" and not gpu_available():
        _skip_or_raise("no CUDA device is available for the GPU side of this comparison")
    k = getattr(kernel.module.on(device), kernel.__name__)
    if kernel.explicit:
        k = k[kernel.explicit]
    outputs = set(_outputs(kernel))
    specs = kernel.specs
    copies = [_copy_arg(a, i < len(specs) and specs[i].name in outputs) for i, a in enumerate(args)]
    k(*copies).sync()
    return [
        a.array if isinstance(a, Partition) else a
        for spec, a in zip(kernel.specs, copies, strict=False)
        if spec.name in outputs
    ]


def _outputs(kernel: Kernel) -> list[str]:
    """The parameters a call of `kernel` writes, in order: its `&mut` ones
    (partitions) and the `&` ones its `unsafe` code writes (atomics,
    `store_unchecked`: a histogram's counts)."""
    writes_for = getattr(kernel.module._ownership, "writes_for", None)
    unsafe = writes_for(kernel.key) if writes_for is not None else frozenset()
    return [s.name for s in kernel.specs if s.kind == "mut" or s.name in unsafe]


def compare(
    kernel: Kernel,
    *args: Any,
    devices: Sequence[str] = ("cpu", "gpu"),
    rtol: float | None = None,
    atol: float | None = None,
) -> dict[str, list[np.ndarray]]:
    """Run `kernel(*args)` on each of `devices` and assert that the outputs of
    every engine agree with the first one's. Returns the outputs by device."""
    if "gpu" in devices and not gpu_available():  # before any engine runs
        _skip_or_raise("no CUDA device is available for the GPU side of this comparison")
    results = {d: run(kernel, *args, device=d) for d in devices}
    first = devices[0]
    names = _outputs(kernel)
    for d in devices[1:]:
        for name, want, got in zip(names, results[first], results[d], strict=True):
            assert_close(
                got,
                want,
                rtol=rtol,
                atol=atol,
                what=f"`{name}` of kernel `{kernel.__name__}` on {d} vs {first}",
            )
    return results


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    what: str = "arrays",
) -> None:
    """Assert `|actual - expected| <= atol + rtol * |expected|` elementwise
    (an infinity matches only the same infinity, NaN matches NaN); on
    failure, say how many differ and show the worst."""
    a = np.asarray(actual)
    e = np.asarray(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shapes differ: {a.shape} vs {e.shape}")
    dr, da = tolerance(e.dtype)
    rtol = dr if rtol is None else rtol
    atol = da if atol is None else atol
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not tol >= 0:  # negative or NaN: every element would fail, or pass where it should not
            raise ValueError(f"{name} = {tol!r}: a tolerance is a distance, zero or more "
                             f"(pass {name}=0.0 for an exact comparison)")
    a64 = a.astype(np.float64)
    e64 = e.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(a64 - e64)
    bad = not_close(a64, e64, rtol, atol, equal_nan=True)
    count = int(bad.sum())
    if not count:
        return
    idx = np.argwhere(bad)
    order = np.argsort(-np.nan_to_num(diff[bad], nan=np.inf))[:5]
    lines = [f"{what}: {count} of {a.size} elements differ (rtol = {rtol:g}, atol = {atol:g})"]
    for i in order:
        pos = tuple(int(x) for x in idx[i])
        lines.append(
            f"  at {list(pos)}: got {a[pos]!r}, expected {e[pos]!r} (difference {diff[pos]:.3g})"
        )
    raise AssertionError("\n".join(lines))


def _skip_or_raise(why: str) -> None:
    import sys

    if "pytest" in sys.modules:
        import pytest

        pytest.skip(why)
    raise GpuUnavailable(why)


__all__ = ["GpuUnavailable", "assert_close", "compare", "run", "tolerance"]
