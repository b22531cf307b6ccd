"""A card's peak memory bandwidth and arithmetic rates, for the profiler's
"percent of peak" and the roofline charts.

Known cards come from their vendors' data sheets (dense rates, no
sparsity); any other NVIDIA card gets estimates from the driver's
attributes (memory clock x bus width x 2 for DDR; SMs x clock x 128 FP32
lanes x 2 for FMA; tensor cores: 16x the FP32 rate, the ratio of the
Ampere/Hopper data-center parts). The CPU interpreter has no peak.
"""

from __future__ import annotations

from tilelang.frozen import frozen


@frozen(eq=True)
class Peak:
    name: str
    bandwidth: float  # bytes/s
    fp32: float  # FLOP/s, FMA counted as 2
    tensor: float  # FLOP/s of f16/bf16 mma with f32 accumulation
    source: str  # "data sheet" or "estimated from device attributes"


_KNOWN: tuple[tuple[str, float, float, float], ...] = (
    # substring of the device name, TB/s, FP32 TFLOP/s, dense f16 tensor TFLOP/s
    ("H200", 4.8, 67.0, 989.0),
    ("H100 PCIe", 2.0, 51.0, 756.0),
    ("H100 NVL", 3.9, 60.0, 835.0),
    ("H100", 3.35, 67.0, 989.0),
    ("GH200", 4.0, 67.0, 989.0),
    ("A100-SXM4-80GB", 2.039, 19.5, 312.0),
    ("A100 80GB PCIe", 1.935, 19.5, 312.0),
    ("A100", 1.555, 19.5, 312.0),
    ("L40S", 0.864, 91.6, 362.0),
    ("L4", 0.3, 30.3, 121.0),
    ("A10", 0.6, 31.2, 125.0),
    ("RTX 4090", 1.008, 82.6, 165.2),
)


def peak_for(name: str, attrs: dict[str, int] | None = None) -> Peak | None:
    """The peaks of the card called `name` (as the driver names it); `attrs`
    (multiprocessors, clock_khz, memory_clock_khz, bus_width_bits) estimate
    an unknown one. None when neither applies."""
    for key, tb, fp32, tensor in _KNOWN:
        if key in name:
            return Peak(name, tb * 1e12, fp32 * 1e12, tensor * 1e12, "data sheet")
    if not attrs:
        return None
    try:
        bw = attrs["memory_clock_khz"] * 1e3 * 2 * attrs["bus_width_bits"] / 8
        fp32 = attrs["multiprocessors"] * attrs["clock_khz"] * 1e3 * 128 * 2
    except KeyError:
        return None
    return Peak(name, bw, fp32, fp32 * 16, "estimated from device attributes")
