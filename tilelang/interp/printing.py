"""How Tile's `print` writes a value, on the host and in kernels alike.

`format_scalar` writes one scalar as a Rust program would (`1.0`, `-3`,
`true`, `NaN`; a bf16 with the shortest digits that round back to it);
`fmt_scalar` and `fmt_tile` write a kernel's scalar or tile with it. The host
runtime, the sequential and vectorised interpreters and the GPU print decoder
all use these, so a printed line reads the same whichever engine ran it.
"""

from __future__ import annotations

import numpy as np

from tilelang.dtypes import DType
from tilelang.interp.numeric import round_bf16


def fmt_scalar(x: np.ndarray, dt: DType) -> str:
    """A scalar as the host's `print` writes it (Rust style: `1.0`, `-3`, `true`)."""
    return format_scalar(x.reshape(()).item() if dt is DType.BF16 else x.reshape(())[()], dt)


def fmt_tile(x: np.ndarray, dt: DType) -> str:
    """A tile as a bracketed list of `fmt_scalar`s (long tiles elided like NumPy's)."""
    return np.array2string(
        np.asarray(x), separator=", ", threshold=64,
        formatter={"all": lambda v: fmt_scalar(np.asarray(v), dt)},
    )


def format_scalar(value: object, dtype: DType | None = None) -> str:
    """One scalar as a Rust program would print it: `1.0`, `-3`, `true`, `NaN`."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _format_float(value, dtype)
    return str(value)


def _format_float(value: float | np.floating, dtype: DType | None) -> str:
    if dtype is DType.BF16:
        # Shortest digits that round back to the same bf16 value.
        v32 = np.float32(value)
        for digits in range(1, 10):
            text = f"{float(v32):.{digits}g}"
            if round_bf16(np.array([float(text)], dtype=np.float32))[0] == v32:
                return _rustify(float(text), text)
        return _format_float(v32, DType.F32)
    if not isinstance(value, np.floating):
        value = np.float64(value)
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    mag = abs(float(value))
    if mag != 0.0 and (mag >= 1e16 or mag < 1e-5):
        text = np.format_float_scientific(value, unique=True, trim="-")
        mant, _, exp = text.partition("e")
        return f"{mant}e{int(exp)}"  # Rust style: `1e-7`, `1.5e20`
    return np.format_float_positional(value, unique=True, trim="0")


def _rustify(value: float, text: str) -> str:
    if "e" in text or "n" in text:
        return _format_float(np.float64(value), None)
    return text if "." in text else text + ".0"
