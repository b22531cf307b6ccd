"""llsim's bottom layer (tests only): its errors, LLVM IR types and constants
as Python values, the simulated memory (global buffers, shared memory, race
book-keeping) and the byte encodings of values. `knob` reads a setting tests
change on `llsim` itself."""

from __future__ import annotations

import functools
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Unsupported(Exception):
    pass


class Deadlock(Exception):
    pass


class Race(Exception):
    """Shared memory read or written while an asynchronous copy into it is in flight."""


_INT = re.compile(r"i(\d+)$")


_FLOATS = {"float": np.float32, "double": np.float64, "half": np.float16}


_SIZE = {"float": 4, "double": 8, "half": 2, "bfloat": 2, "ptr": 8}


@functools.cache
def _bits(ty: str) -> int:
    m = _INT.match(ty)
    assert m, ty
    return int(m.group(1))


@functools.cache
def _size(ty: str) -> int:
    if ty.startswith("<"):
        n, el = _vec(ty)
        return n * _size(el)
    if ty in _SIZE:
        return _SIZE[ty]
    return max(1, _bits(ty) // 8)


@functools.cache
def _vec(ty: str) -> tuple[int, str]:
    m = re.match(r"<(\d+) x (.+)>$", ty)
    assert m, ty
    return int(m.group(1)), m.group(2)


def _bf16(x: float) -> np.float32:
    """Round an f32 to bfloat16 (nearest even), returned as f32."""
    f = np.float32(x)
    if np.isnan(f):
        return f
    b = int(np.array(f, np.float32).view(np.uint32))
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return np.array(b, np.uint32).view(np.float32)[()]


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


@dataclass
class Memory:
    bufs: dict[Any, bytearray] = field(default_factory=dict)
    # 16-byte chunks of shared memory an issued cp.async has not written yet
    # (it lands at the wait_group that retires its group): chunk -> copies
    inflight: dict[int, int] = field(default_factory=dict)
    # the 4-byte words 4- and 8-byte cp.async copies (several share a chunk) have not written yet
    inflight_words: set[int] = field(default_factory=set)
    # wgmma groups issued and not yet retired by every thread of their
    # warpgroup (the shared memory each reads: writes to it are races)
    wgmma_live: list[Any] = field(default_factory=list)
    # the threads' own shared-memory accesses since the last synchronisation
    # (racecheck; set per block by `SimDevice.run`, None: not checked)
    hazards: Any = None
    # the same for the threads' loads and stores of the kernel's tensors
    # (`_GlobalHazards`; None: not checked)
    global_hazards: Any = None
    # per byte of shared memory, the thread whose ordinary store to it no
    # `fence.proxy.async` of that thread has followed yet (-1: none): a TMA
    # store (the async proxy) reading such a byte is a race
    unfenced: Any = None
    # TMA stores issued and not yet waited for by their thread's
    # `cp.async.bulk.wait_group.read`: (thread, the shared bytes they read)
    bulk_live: list[Any] = field(default_factory=list)
    bulk_reads: Any = None  # per byte: how many of those stores read it
    # pointers stored in memory (the trace global's buffer address): (buffer, offset) -> pointer
    pointers: dict[Any, Any] = field(default_factory=dict)
    regs_out: list[Any] | None = None  # a list: each block's registers of every thread are appended to it
    # a thread-block cluster's exchange (`llsim._run_cluster`): the bytes the other ranks pushed into this
    # block's shared memory, per mbarrier offset, and this block's pushes (rank, offset, bytes, barrier)
    cluster_in: dict[int, int] = field(default_factory=dict)
    cluster_out: list[Any] | None = None

    def guard_bulk(self, addrs: Any, what: str) -> None:
        if self.bulk_reads[addrs].any():
            hit = np.arange(len(self.bulk_reads))[addrs]
            t = next(t for t, reads in self.bulk_live if np.isin(hit, reads).any())
            raise Race(f"{what} writes shared memory that a TMA store of thread {t} still reads "
                       f"(no cp.async.bulk.wait_group.read retired it)")

    def guard(self, key: Any, off: int, n: int, what: str) -> None:
        if key == "$smem" and self.inflight:
            c0, c1 = off // 16, (off + n + 15) // 16
            if (c0 in self.inflight if c1 - c0 == 1  # (one chunk, most accesses: no generator)
                    else any(c in self.inflight for c in range(c0, c1))):
                raise Race(f"{what} of {n} bytes at smem+{off} while a cp.async into it is in flight")

    def guard_wgmma(self, addrs: Any, what: str) -> None:
        """Raise `Race` when shared memory at `addrs` (byte offsets) is written
        while a wgmma that reads it is in flight (issued, its group not yet
        waited for by every thread of the warpgroup)."""
        for rec in self.wgmma_live:
            if rec.reads[addrs].any():
                raise Race(f"{what} writes shared memory that an in-flight wgmma group reads "
                           f"(issued by warpgroup {rec.group}, not yet retired by wgmma.wait_group)")

    def load(self, ptr: tuple[Any, int], ty: str) -> Any:
        if ty.startswith("ptr"):
            return self.pointers[ptr]
        key, off = ptr
        buf = self.bufs[key]
        n = _size(ty)
        if self.inflight:  # (`guard`'s own test first: a call a load was a tenth of its time)
            self.guard(key, off, n, "load")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"load of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        return load_value(buf, off, ty)

    def store(self, ptr: tuple[Any, int], ty: str, v: Any) -> None:
        key, off = ptr
        buf = self.bufs[key]
        n = _size(ty)
        if self.inflight:
            self.guard(key, off, n, "store")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"store of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        raw = store_bytes(v, ty)
        if key == "$smem" and self.wgmma_live:
            self.guard_wgmma(slice(off, off + n), "a store")
        if key == "$smem" and self.bulk_live:
            self.guard_bulk(slice(off, off + n), "a store")
        buf[off:off + n] = raw


def _decode(raw: bytes, ty: str) -> Any:
    if ty in _FLOATS:
        return np.frombuffer(raw, _FLOATS[ty])[0]
    if ty == "bfloat":
        return np.frombuffer(b"\0\0" + raw, np.float32)[0]
    return int.from_bytes(raw, "little")


def _encode(v: Any, ty: str) -> bytes:
    if ty in _FLOATS:
        return np.array(v, _FLOATS[ty]).tobytes()
    if ty == "bfloat":
        return np.array(v, np.float32).tobytes()[2:]
    return (int(v) & ((1 << (8 * _size(ty))) - 1)).to_bytes(_size(ty), "little")


def _encode_any(v: Any, ty: str) -> bytes:
    if ty.startswith("<"):
        n, el = _vec(ty)
        if el in _FLOATS:  # `_encode` of each element
            return np.array(v, _FLOATS[el]).tobytes()
        return b"".join(_encode(x, el) for x in v)
    return _encode(v, ty)


def _decode_any(raw: bytes, ty: str) -> Any:
    if ty.startswith("<"):
        n, el = _vec(ty)
        if el in _FLOATS:  # `_decode` of each element: numpy scalars of its type
            return tuple(np.frombuffer(raw, _FLOATS[el]))
        es = _size(el)
        return tuple(_decode(raw[i * es:(i + 1) * es], el) for i in range(n))
    return _decode(raw, ty)


# The bytes of the scalar and vector types `struct` packs exactly, for the
# loads and stores: (the struct, the element type, a vector), None for the rest
_CODES = {"float": "f", "half": "e", "double": "d", "i1": "B", "i8": "B", "i16": "H", "i32": "I", "i64": "Q"}
_NZ = {"float": np.float32(-0.0), "half": np.float16(-0.0)}


@functools.cache
def _codec(ty: str) -> tuple[struct.Struct, str, bool] | None:
    n, el = _vec(ty) if ty.startswith("<") else (1, ty)
    code = _CODES.get(el)
    return None if code is None else (struct.Struct(f"<{n}{code}"), el, ty.startswith("<"))


def load_value(buf: bytearray, off: int, ty: str) -> Any:
    """`_decode_any(bytes(buf[off:off + _size(ty)]), ty)` (a load's value),
    without the copy and NumPy's per-call cost where that is exact: integers
    and floats that are not NaN unpack through `struct` (a float to a Python
    float, exactly; then the NumPy scalar as `-0.0 + x`, see `llsim_fast`);
    anything else (NaN payloads, bfloat, odd widths) decodes the bytes."""
    c = _codec(ty)
    if c is not None:
        st, el, vec = c
        xs = st.unpack_from(buf, off)
        if el[0] == "i":
            return xs if vec else xs[0]
        if not any(map(math.isnan, xs)):
            if el == "double":
                return tuple(map(np.float64, xs)) if vec else np.float64(xs[0])
            nz = _NZ[el]
            return tuple(map(nz.__add__, xs)) if vec else nz + xs[0]
    raw = bytes(buf[off:off + _size(ty)])
    return _decode_any(raw, ty)


def store_bytes(v: Any, ty: str) -> bytes:
    """`_encode_any(v, ty)` (a store's bytes), through `struct` where that is
    exact: integers, and NumPy floats of the type that are not NaN."""
    c = _codec(ty)
    if c is not None and not vec_len_differs(c, v):
        st, el, vec = c
        if el[0] == "i":
            m = (1 << (8 * _size(el))) - 1
            return st.pack(*(int(x) & m for x in v)) if vec else st.pack(int(v) & m)
        t = _FLOATS[el]
        if vec:
            if all(type(x) is t and x == x for x in v):
                return st.pack(*v)
        elif type(v) is t and v == v:
            return st.pack(v)
    return _encode_any(v, ty)


def vec_len_differs(c: tuple[struct.Struct, str, bool], v: Any) -> bool:
    """Whether a vector's value is not a tuple of its type's length (`_encode_any` encodes what it has)."""
    return c[2] and (type(v) is not tuple or len(v) * _size(c[1]) != c[0].size)


def knob(name: str) -> Any:
    """A setting of the simulator that tests change on `llsim` itself
    (`monkeypatch.setattr(llsim, "UNDEF_FLOAT", "nan")`, `llsim.COMPILED`),
    read there at each use so that the parts see the change (the module
    kept after the first use: an `import` statement a read was a tenth of
    an approximate instruction's time)."""
    if not _LLSIM:
        import llsim

        _LLSIM.append(llsim)
    return getattr(_LLSIM[0], name)


_LLSIM: list[Any] = []
