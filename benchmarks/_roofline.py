"""The roofline chart every benchmark here writes beside its table (issue 16,
item 6): points of (label, FLOPs, bytes moved, seconds) placed under the
card's bandwidth and compute roofs (`tilelang.profiler.peaks`), drawn by
`tilelang.profiler.report.roofline` as a PNG. matplotlib is an optional extra
(`pip install tilelang[plot]`): without it nothing is drawn and the line the
benchmark prints says so."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def device_name() -> str:
    """The name of the card the benchmark ran on ("" without one)."""
    try:
        import torch

        if torch.cuda.is_available():
            return str(torch.cuda.get_device_name())
    except Exception:
        pass
    try:
        from tilelang.runtime import cuda

        return str(cuda.context().info.name) if cuda.is_available() else ""
    except Exception:
        return ""


def write(
    points: Sequence[tuple[str, float, float, float]],
    path: Path | str,
    title: str,
    device: str | None = None,
) -> str:
    """Draw `points` (label, FLOPs, bytes, seconds) at `path`; a line saying
    what was written. A point with no bytes or no time is left out."""
    from tilelang.profiler.peaks import peak_for
    from tilelang.profiler.report import roofline

    name = device_name() if device is None else device
    peak = peak_for(name) if name else None
    pts = [
        (label, flops / nbytes, flops / seconds)
        for label, flops, nbytes, seconds in points
        if nbytes > 0 and seconds > 0 and flops > 0
    ]
    if not pts:
        return "roofline: no points to draw"
    try:
        wrote = roofline(pts, peak, str(path), title)
    except Exception as e:  # a chart must never fail a benchmark run
        return f"roofline: not written ({type(e).__name__}: {e})"
    if not wrote:
        return "roofline: not written (matplotlib is not installed: pip install tilelang[plot])"
    return f"roofline: {path} ({len(pts)} points{', ' + peak.name if peak else ', no known peak'})"
