"""The profiler's outputs: the launch table, the Chrome/Perfetto trace (JSON,
the "Trace Event Format": open it in https://ui.perfetto.dev or
chrome://tracing), and a roofline chart (PNG, needs matplotlib: tilec's
`plot` extra)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilelang.profiler import LaunchRecord
    from tilelang.profiler.peaks import Peak


def _num(x: float, digits: int = 2) -> str:
    return "-" if not isinstance(x, (int, float)) or math.isnan(x) else f"{x:.{digits}f}"


def table(records: Sequence[LaunchRecord], max_rows: int = 200) -> str:
    """One row per launch (the first `max_rows`), then a summary per kernel."""
    head = (
        f"{'#':>4}  {'kernel':<20} {'grid':<14} {'engine':<7} {'time us':>10} {'MB':>9} "
        f"{'GFLOP':>9} {'TB/s':>7} {'TFLOP/s':>8} {'% peak':>13}"
    )
    if not records:  # (not a table's header over no rows)
        return "tile profile: no kernel launches\n"
    lines = [f"tile profile: {len(records)} launch{'es' if len(records) != 1 else ''}", head]
    lines.append("-" * len(head))
    for i, r in enumerate(records[:max_rows]):
        pct = r.percent_of_peak()
        flops = r.cost.flops / 1e9
        lines.append(
            f"{i:>4}  {r.kernel[:20]:<20} {'x'.join(map(str, r.grid))[:14]:<14} "
            f"{r.engine:<7} {_num(r.seconds * 1e6, 1):>10} {_num(r.cost.bytes / 1e6, 3):>9} "
            f"{(_num(flops, 4) + ('' if r.cost.exact else '+')):>9} "
            f"{_num(r.bandwidth / 1e12, 3):>7} {_num(r.flop_rate / 1e12, 3):>8} "
            f"{(f'{pct[0]:.1f} {pct[1]}' if pct else '-'):>13}"
        )
    if len(records) > max_rows:
        lines.append(f"      ... {len(records) - max_rows} more launches (summary below)")
    by: dict[str, list[LaunchRecord]] = defaultdict(list)
    for r in records:
        by[r.kernel].append(r)
    if by:
        lines.append("")
        lines.append(
            f"{'kernel':<20} {'launches':>8} {'total us':>11} {'mean us':>10} {'mean TB/s':>10}"
        )
        for name, rs in sorted(
            by.items(), key=lambda kv: -sum(r.seconds for r in kv[1] if r.seconds > 0)
        ):
            times = [r.seconds for r in rs if r.seconds > 0]
            total = sum(times)
            bw = [r.bandwidth for r in rs if r.seconds > 0]
            lines.append(
                f"{name[:20]:<20} {len(rs):>8} {_num(total * 1e6, 1):>11} "
                f"{_num(total / len(times) * 1e6 if times else float('nan'), 2):>10} "
                f"{_num(sum(bw) / len(bw) / 1e12 if bw else float('nan'), 3):>10}"
            )
    peaks = {r.peak.name: r.peak for r in records if r.peak is not None}
    for p in peaks.values():
        lines.append(
            f"peak of {p.name} ({p.source}): {p.bandwidth / 1e12:.2f} TB/s, "
            f"{p.fp32 / 1e12:.1f} TFLOP/s fp32, {p.tensor / 1e12:.0f} TFLOP/s f16/bf16 mma"
        )
    if any(not r.cost.exact for r in records):
        lines.append(
            "+ : at least this many FLOPs (a loop's trip count depends on the block or on data)"
        )
    return "\n".join(lines) + "\n"


def trace_events(records: Sequence[LaunchRecord]) -> list[dict[str, Any]]:
    """Trace events: each launch on the host (the call) and, on the GPU, the
    kernel on the device's timeline; times in microseconds."""
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "host"}},
        {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "device"}},
    ]
    for i, r in enumerate(records):
        args = {
            "launch": i,
            "grid": list(r.grid),
            "engine": r.engine,
            "bytes": r.cost.bytes,
            "flops": r.cost.flops,
            "seconds": r.seconds,
        }
        events.append(
            {
                "name": r.kernel,
                "cat": "launch",
                "ph": "X",
                "pid": 1,
                "tid": 1,
                "ts": r.host_start_s * 1e6,
                "dur": max(r.host_s * 1e6, 0.001),
                "args": args,
            }
        )
        if r.gpu_start_s is not None and r.seconds > 0:
            events.append(
                {
                    "name": r.kernel,
                    "cat": "kernel",
                    "ph": "X",
                    "pid": 2,
                    "tid": r.engine,
                    "ts": r.gpu_start_s * 1e6,
                    "dur": r.seconds * 1e6,
                    "args": args,
                }
            )
    return events


def write_trace(records: Sequence[LaunchRecord], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": trace_events(records), "displayTimeUnit": "ns"}, f)


def roofline(
    points: Sequence[tuple[str, float, float]],
    peak: Peak | None,
    path: str,
    title: str = "roofline",
) -> bool:
    """A roofline chart: `points` are (label, arithmetic intensity FLOP/byte,
    achieved FLOP/s); the roofs are `peak`'s bandwidth and FP32/tensor rates.
    Writes a PNG at `path`; False (nothing written) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    xs = [p[1] for p in points if p[1] > 0] or [1.0]
    lo = min(min(xs) / 4, 0.01)
    hi = max(max(xs) * 4, 1000.0)
    if peak is not None:
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        for rate, label, style in ((peak.fp32, "fp32", "--"), (peak.tensor, "f16/bf16 mma", "-")):
            ax.plot(
                grid, [min(peak.bandwidth * x, rate) for x in grid], style, label=f"{label} roof"
            )
    for label, intensity, rate in points:
        if intensity > 0 and rate > 0:
            ax.scatter([intensity], [rate])
            ax.annotate(
                label, (intensity, rate), textcoords="offset points", xytext=(4, 4), fontsize=8
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(title + (f" ({peak.name})" if peak is not None else ""))
    ax.grid(True, which="both", alpha=0.3)
    if peak is not None:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
