"""What a Tile launch chose, for the GPU benchmarks that print it: each `CudaDevice._choose` (the device,
the ABI and the loaded function of the launch) recorded in order, and the CTAs an SM that the driver's
occupancy calculator gives the last one (`gemm_hints_sweep.py`, `gemm_tiles_sweep.py`,
`prefill_variance.py`)."""

from __future__ import annotations

from typing import Any

CHOSEN: list[tuple[Any, Any, Any]] = []  # (device, abi, function) of each `_choose`, in order


def record() -> list[tuple[Any, Any, Any]]:
    """From now on, append each launch's choice to `CHOSEN` (once a process); returns `CHOSEN`."""
    from tilelang.runtime.cuda import CudaDevice

    orig = CudaDevice._choose
    if getattr(orig, "recorded", False):
        return CHOSEN

    def choose(self: Any, *a: Any, **k: Any) -> Any:
        got = orig(self, *a, **k)
        CHOSEN.append((self, got[0], got[1]))
        return got

    choose.recorded = True  # type: ignore[attr-defined]
    CudaDevice._choose = choose  # type: ignore[method-assign]
    return CHOSEN


def resident(entry: tuple[Any, Any, Any]) -> int:
    """The CTAs an SM the driver's occupancy calculator gives a recorded launch."""
    from tilelang.runtime import occupancy

    dev, abi, fn = entry
    return occupancy.resident(dev.ctx.d, fn.handle, abi.num_threads, abi.smem_bytes)


def occupancy_line() -> str:
    """"THREADSthr SMEMKB N/SM" of the last recorded launch ("?" before any)."""
    if not CHOSEN:
        return "?"
    abi = CHOSEN[-1][1]
    return f"{abi.num_threads}thr {abi.smem_bytes // 1024}KB {resident(CHOSEN[-1])}/SM"
