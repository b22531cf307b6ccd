"""Device `print` on the GPU: the record format and its host-side decoder.

A kernel does not format text on the GPU (`vprintf` cannot print the
shortest round-trip digits the interpreter prints, nor NumPy's array
layout). Instead each executed `print` appends one binary *record* to a
print buffer, and the host formats the records after the launch with the
interpreter's own formatter, so a line is byte-for-byte what the interpreter
prints for the same values.

Buffer layout (little-endian, `HEADER` bytes of header, then records):

    [0, 8)    u64  cursor: bytes reserved so far (atomic add by thread 0 of a block)
    [8, 12)   u32  capacity of the record area in bytes (set by the host)
    [12, 16)  u32  records dropped because the area was full
    [16, 24)  u64  end of the last record that fit (atomic max): the records
                   in [0, end) are complete when the launch has finished
    [24, 32)  unused

A record (`PrintFormat.size` bytes, a multiple of 16, at a 16-byte aligned
offset of the record area): i32 print number (index into `KernelABI.prints`),
i32 linear block id (x * ny * nz + y * nz + z: the interpreter's block
order), 8 unused bytes, then each value part at its `PrintValue.offset`: the
elements row-major in `record_dtype` (bool as one byte, bf16 as its f32
value). Thread 0 reserves the record and writes the header and scalars;
every thread writes its own elements of a tile.

Ordering: records are sorted by (block, reservation order), which is the
interpreter's order (blocks in row-major grid order, each block's prints in
program order). The runtime synchronises after a launch that prints and
writes the lines at once, so device lines also keep their place among the
host's lines.

Invariant: this module imports no CUDA library (the decoder is tested on the CPU).
"""

from __future__ import annotations

import math
import os
import struct

import numpy as np

from tilelang.dtypes import DType
from tilelang.frozen import frozen

HEADER = 32
RECORD_HEADER = 16


@frozen(eq=True)
class PrintValue:
    dtype: DType
    shape: tuple[int, ...]
    offset: int  # byte offset of the first element inside the record


@frozen(eq=True)
class PrintFormat:
    parts: tuple[str | PrintValue, ...]
    size: int  # bytes of one record (header included), a multiple of 16


def record_ty(dt: DType) -> str:
    """The LLVM type of one element of a printed value inside a record."""
    if dt is DType.BOOL:
        return "i8"
    if dt is DType.F16:
        return "half"
    if dt in (DType.BF16, DType.F32):
        return "float"  # bf16 registers hold exact f32 values
    if dt is DType.F64:
        return "double"
    return f"i{dt.bits}"


def record_size(dt: DType) -> int:
    return {"i8": 1, "half": 2, "float": 4, "double": 8}.get(record_ty(dt), dt.itemsize)


def _np_record_dtype(dt: DType) -> np.dtype:
    return np.dtype(np.uint8) if dt is DType.BOOL else dt.np_dtype


def layout_format(parts: tuple[tuple[str, None] | tuple[None, tuple[DType, tuple[int, ...]]], ...]) -> PrintFormat:
    """Place the value parts of one `print` in a record: `parts` is, in order,
    ("text", None) or (None, (dtype, shape))."""
    out: list[str | PrintValue] = []
    pos = RECORD_HEADER
    for text, val in parts:
        if val is None:
            assert text is not None
            out.append(text)
            continue
        dt, shape = val
        n = math.prod(shape)
        out.append(PrintValue(dt, tuple(shape), pos))
        pos += -(-(n * record_size(dt)) // 8) * 8
    return PrintFormat(tuple(out), -(-pos // 16) * 16)


@frozen(eq=True)
class Decoded:
    lines: list[str]
    dropped: int  # prints lost because the buffer was full


def decode(formats: tuple[PrintFormat, ...], raw: bytes) -> Decoded:
    """The printed lines of one launch, in the interpreter's order, from the
    buffer's header followed by (at least) its complete records."""
    from tilelang.interp.printing import (  # the interpreter's formatter: one look
        fmt_scalar,
        fmt_tile,
    )

    _cursor, cap, dropped, end = struct.unpack_from("<QIIQ", raw, 0)
    limit = min(end, cap, len(raw) - HEADER)
    recs: list[tuple[int, int, int]] = []  # (block, position, print number)
    pos = 0
    while pos + RECORD_HEADER <= limit:
        num, block = struct.unpack_from("<iI", raw, HEADER + pos)
        if not 0 <= num < len(formats) or pos + formats[num].size > limit:
            break  # cannot happen for a buffer the kernel wrote; never read past the end
        recs.append((block, pos, num))
        pos += formats[num].size
    recs.sort()
    lines = []
    for _, pos, num in recs:
        text = []
        for part in formats[num].parts:
            if isinstance(part, str):
                text.append(part)
                continue
            n = math.prod(part.shape)
            at = HEADER + pos + part.offset
            arr = np.frombuffer(raw, dtype=_np_record_dtype(part.dtype), count=n, offset=at).copy()
            if part.dtype is DType.BOOL:
                arr = arr != 0
            arr = arr.reshape(part.shape)
            text.append(fmt_tile(arr, part.dtype) if part.shape else fmt_scalar(arr, part.dtype))
        lines.append("".join(text))
    return Decoded(lines, int(dropped))


def print_buffer_bytes() -> int:
    """Capacity of a launch's device-print record area: `TILEC_PRINT_BUFFER_MB`
    (default 16 MiB; records that do not fit are counted and reported)."""
    raw = os.environ.get("TILEC_PRINT_BUFFER_MB", "").strip() or "16"
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not mb >= 0:  # (NaN too)
        from tilelang.backend.env_switch import SwitchError

        raise SwitchError("TILEC_PRINT_BUFFER_MB", raw, "a size in MiB (16 by default)")
    return max(4096, min(int(mb * (1 << 20)), (1 << 32) - 4096)) // 16 * 16
