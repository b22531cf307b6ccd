"""A CPU simulator for the NVPTX LLVM IR that `backend/llvm.py` emits (tests only).

The GPU tests need a GPU; this runs the code generator's own output on the
CPU instead, one Python generator per thread, so layouts, reductions,
shuffles and shared-memory staging can be checked against the interpreter in
CI. It understands the subset of LLVM IR text the emitter writes (integer and
float arithmetic, compares, selects, casts, phis, branches, loads and stores
to global and shared memory incl. vectors, atomics, the NVVM special
registers, barriers and `shfl.sync`, the math intrinsics); anything else
raises `Unsupported`. Threads run until they reach a barrier (the whole
block) or a shuffle (the whole warp); a block whose threads cannot all reach
the same point is a deadlock and raises. Shared memory starts as NaN bytes
(0xFF), so a read of something no thread wrote shows up.

Approximate hardware instructions (`ex2.approx`, `rsqrt.approx`, ...) are
computed exactly in f32; compare results with a tolerance.

    sim = SimDevice()
    sim.run(kernel_ir, grid, args)       # numpy arrays (tensors, written back) and scalars
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import os
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llsim_blocks import thread as _compiled_thread

# Threads run the kernel's blocks compiled to Python functions (llsim_blocks);
# False: one closure an instruction (`_thread`), the reference the compiled
# blocks are tested against (also LLSIM_COMPILED=0 in the environment).
COMPILED = os.environ.get("LLSIM_COMPILED", "1") != "0"

_TIMER = itertools.count(1 << 20, 32)  # `%globaltimer`: every read a later time


class Unsupported(Exception):
    pass


class Deadlock(Exception):
    pass


class Race(Exception):
    """Shared memory read or written while an asynchronous copy into it is in flight."""


# ---------------------------------------------------------------- values and types
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


# What an `undef` / `poison` float reads as: 0.0, or "nan" (a test that must
# show no undefined value reaches a result sets it: NaN propagates where 0
# would pass unseen). `zeroinitializer` is always 0.
UNDEF_FLOAT = "0.0"


def _const(tok: str, ty: str) -> Any:
    if tok in ("undef", "poison", "zeroinitializer"):
        fz = UNDEF_FLOAT if tok != "zeroinitializer" else "0.0"
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(_const("0", el) if el not in _FLOATS and el != "bfloat" else _const(fz, el)
                         for _ in range(n))
        return _const(fz, ty) if ty in _FLOATS or ty == "bfloat" else 0
    if tok == "true":
        return 1
    if tok == "false":
        return 0
    if ty in _FLOATS or ty == "bfloat":
        if tok.startswith("0x"):
            d = struct.unpack("<d", struct.pack("<Q", int(tok[2:], 16)))[0]
        else:
            d = float(tok)
        return _bf16(d) if ty == "bfloat" else _FLOATS[ty](d)
    return int(tok) & ((1 << _bits(ty)) - 1)


# ---------------------------------------------------------------- memory
@dataclass
class Memory:
    bufs: dict[Any, bytearray] = field(default_factory=dict)
    # 16-byte chunks of shared memory an issued cp.async has not written yet
    # (it lands at the wait_group that retires its group): chunk -> copies
    inflight: dict[int, int] = field(default_factory=dict)
    # wgmma groups issued and not yet retired by every thread of their
    # warpgroup (the shared memory each reads: writes to it are races)
    wgmma_live: list[Any] = field(default_factory=list)
    # the threads' own shared-memory accesses since the last synchronisation
    # (racecheck; set per block by `SimDevice.run`, None: not checked)
    hazards: Any = None
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

    def guard_bulk(self, addrs: Any, what: str) -> None:
        if self.bulk_reads[addrs].any():
            hit = np.arange(len(self.bulk_reads))[addrs]
            t = next(t for t, reads in self.bulk_live if np.isin(hit, reads).any())
            raise Race(f"{what} writes shared memory that a TMA store of thread {t} still reads "
                       f"(no cp.async.bulk.wait_group.read retired it)")

    def track(self, t: int, ptr: tuple[Any, int], ty: str, write: bool) -> None:
        if self.hazards is not None and ptr[0] == "smem":
            self.hazards.access(t, ptr[1], _size(ty), write)

    def guard(self, key: Any, off: int, n: int, what: str) -> None:
        if key == "smem" and self.inflight and any(c in self.inflight for c in range(off // 16, (off + n + 15) // 16)):
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
        self.guard(key, off, n, "load")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"load of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        raw = bytes(buf[off:off + n])
        if ty.startswith("<"):
            return _decode_any(raw, ty)
        return _decode(raw, ty)

    def store(self, ptr: tuple[Any, int], ty: str, v: Any) -> None:
        key, off = ptr
        buf = self.bufs[key]
        n = _size(ty)
        self.guard(key, off, n, "store")
        if off < 0 or off + n > len(buf):
            raise IndexError(f"store of {n} bytes at {off} outside buffer {key!r} ({len(buf)} bytes)")
        if ty.startswith("<"):
            raw = _encode_any(v, ty)
        else:
            raw = _encode(v, ty)
        if key == "smem" and self.wgmma_live:
            self.guard_wgmma(slice(off, off + n), "a store")
        if key == "smem" and self.bulk_live:
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


# ---------------------------------------------------------------- parsing
def _split_args(s: str) -> list[str]:
    """Split at top-level commas (not inside <>, (), {}, [])."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _take_type(s: str) -> tuple[str, str]:
    """(type, rest) from the start of `s`."""
    s = s.strip()
    if s[0] in "<{":
        close = ">" if s[0] == "<" else "}"
        depth = 0
        for i, ch in enumerate(s):
            if ch in "<{":
                depth += 1
            elif ch in ">}":
                depth -= 1
                if depth == 0:
                    assert ch == close
                    return s[:i + 1], s[i + 1:].strip()
    m = re.match(r"(ptr addrspace\(\d+\)|ptr|%[\w.]+|[a-z0-9]+)\s*(.*)$", s, re.S)
    assert m, s
    return m.group(1), m.group(2)


_FLAGS = {"nsw", "nuw", "exact", "afn", "contract", "fast", "nnan", "ninf", "nsz", "arcp", "reassoc",
          "inbounds", "disjoint", "nneg", "samesign"}


def _strip_flags(s: str) -> str:
    words = s.split(" ")
    while words and words[0] in _FLAGS:
        words.pop(0)
    return " ".join(words)


@dataclass
class _Ins:
    dst: str | None
    fn: Callable[[dict[str, Any]], Any] | None  # plain instruction: regs -> value
    sync: Callable[[dict[str, Any]], tuple] | None = None  # a request to the scheduler
    text: str = ""
    # the same computation as Python source over `r` (the registers) and the
    # names in `Program.ns`, for the block compiler (llsim_blocks); None: `fn`
    # (or `sync`) is called
    src: str | None = None
    sync_src: str | None = None


@dataclass
class _Block:
    name: str
    phis: list[tuple[str, list[tuple[Callable[[dict[str, Any]], Any], str]]]]
    body: list[_Ins]
    term: Callable[[dict[str, Any]], str | None]
    term_src: str = ""  # the terminator as a Python statement (llsim_blocks)
    phi_srcs: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)  # phis' arms as source


class Program:
    """One parsed kernel."""

    def __init__(self, text: str) -> None:
        self.blocks: dict[str, _Block] = {}
        self.params: list[tuple[str, str]] = []
        self.ns: dict[str, Any] = {}  # the objects the instructions' `src` names
        self.compiled: dict[str, Any] | None = None  # llsim_blocks: block -> (function, is a generator)
        lines = text.splitlines()
        i = 0
        while not lines[i].startswith("define "):
            i += 1
        head = lines[i]
        m = re.match(r"define ptx_kernel void @([\w.$]+)\((.*)\) #0 \{$", head)
        assert m, head
        self.name = m.group(1)
        for p in _split_args(m.group(2)):
            ty, rest = _take_type(p)
            name = rest.split()[-1]
            self.params.append((ty, name))
        i += 1
        cur_name, phis, body, phi_srcs = None, [], [], []
        for line in lines[i:]:
            if line == "}":
                break
            for sub in line.split("\n"):
                if not sub.strip():
                    continue
                if not sub.startswith(" "):
                    cur_name = sub.rstrip(":")
                    phis, body, phi_srcs = [], [], []
                    continue
                ins = sub.strip()
                if ins.startswith("br ") or ins == "ret void":
                    self.blocks[cur_name] = _Block(cur_name, phis, body, self._term(ins),  # type: ignore[index]
                                                   self._term_src(ins), phi_srcs)
                    continue
                dst, rhs = (ins.split(" = ", 1) if re.match(r"%[\w.]+ = ", ins) else (None, ins))
                if rhs.startswith("phi "):
                    ty, rest = _take_type(rhs[4:])
                    arms = []
                    for arm in re.findall(r"\[ ([^,\]]+), %([\w.]+) \]", rest):
                        arms.append((self._val(arm[0], ty), arm[1]))
                    phis.append((dst, arms))  # type: ignore[arg-type]
                    phi_srcs.append((dst, [(self._src(a[0], ty), a[1])  # type: ignore[misc]
                                           for a in re.findall(r"\[ ([^,\]]+), %([\w.]+) \]", rest)]))
                    continue
                body.append(self._ins(dst, rhs))

    # -- operands
    def _val(self, tok: str, ty: str) -> Callable[[dict[str, Any]], Any]:
        tok = tok.strip()
        if tok.startswith("%"):
            return operator.itemgetter(tok)  # a register read: the most frequent operation
        if tok.startswith("@"):
            if tok == "@tilec_trace":  # the block timeline's module global (`SimDevice(trace=True)`)
                return lambda r: ("tilec_trace", 0)
            assert tok == "@smem", tok
            return lambda r: ("smem", 0)
        m = re.match(r"getelementptr \(i8, ptr addrspace\(3\) @smem, i32 (\d+)\)$", tok)
        if m:  # the scratch area after the buffers GPU IR allocated
            off = int(m.group(1))
            return lambda r, off=off: ("smem", off)
        c = _const(tok, ty)
        return lambda r, c=c: c

    def _bind(self, obj: Any) -> str:
        """A name in `ns` for `obj` (source of the compiled blocks)."""
        name = f"_k{len(self.ns)}"
        self.ns[name] = obj
        return name

    def _src(self, tok: str, ty: str) -> str:
        """`_val(tok, ty)` as a Python expression over `r`."""
        tok = tok.strip()
        if tok.startswith("%"):
            return f"r[{tok!r}]"
        return self._bind(self._val(tok, ty)(None))  # type: ignore[arg-type]  # a constant or a smem address

    def _typed_src(self, s: str) -> str:
        ty, rest = _take_type(s)
        rest = re.sub(r"^(align \d+|noundef)\s+", "", rest)
        return self._src(rest, ty)

    def _binop_src(self, op: str, fn: Any, ty: str, sa: str, sb: str) -> str:
        """`fn(a, b, ty)` as source: the scalar fast paths of `_scalar_binop` inline."""
        if ty.startswith("<"):
            return f"{self._bind(fn)}({sa}, {sb}, {ty!r})"
        if getattr(fn, "int_op", None) is not None:
            bits = _bits(ty)
            if op in _INLINE_OPS:
                return f"((int({sa}) {_INLINE_OPS[op]} int({sb})) & {(1 << bits) - 1})"
            return f"({self._bind(fn.int_op)}(int({sa}), int({sb}), {bits}) & {(1 << bits) - 1})"
        conv = self._bind(_bf16 if ty == "bfloat" else _FLOATS[ty])
        if op in _INLINE_OPS:
            return f"{conv}({sa} {_INLINE_OPS[op]} {sb})"
        return f"{conv}({self._bind(fn.float_op)}({sa}, {sb}))"

    def _term_src(self, ins: str) -> str:
        if ins == "ret void":
            return "return None"
        m = re.match(r"br label %([\w.]+)$", ins)
        if m:
            return f"return {m.group(1)!r}"
        m = re.match(r"br i1 (\S+), label %([\w.]+), label %([\w.]+)$", ins)
        assert m, ins
        return f"return {m.group(2)!r} if {self._src(m.group(1), 'i1')} else {m.group(3)!r}"

    def _typed(self, s: str) -> tuple[str, Callable[[dict[str, Any]], Any]]:
        ty, rest = _take_type(s)
        rest = re.sub(r"^(align \d+|noundef)\s+", "", rest)
        return ty, self._val(rest, ty)

    def _term(self, ins: str) -> Callable[[dict[str, Any]], str | None]:
        if ins == "ret void":
            return lambda r: None
        m = re.match(r"br label %([\w.]+)$", ins)
        if m:
            return lambda r, t=m.group(1): t
        m = re.match(r"br i1 (\S+), label %([\w.]+), label %([\w.]+)$", ins)
        assert m, ins
        c = self._val(m.group(1), "i1")
        return lambda r, c=c, a=m.group(2), b=m.group(3): a if c(r) else b

    def _ins(self, dst: str | None, rhs: str) -> _Ins:
        op, _, rest = rhs.partition(" ")
        rest = _strip_flags(rest)
        fn = _BINOPS.get(op)
        if fn is not None:
            ty, rest2 = _take_type(rest)
            a, b = _split_args(rest2)
            va, vb = self._val(a, ty), self._val(b, ty)
            return _Ins(dst, _scalar_binop(fn, ty, va, vb) or (lambda r: fn(va(r), vb(r), ty)), text=rhs,
                        src=self._binop_src(op, fn, ty, self._src(a, ty), self._src(b, ty)))
        if op == "fneg":
            ty, v = self._typed(rest)
            return _Ins(dst, lambda r: -v(r), text=rhs, src=f"-{self._typed_src(rest)}")
        if op in ("icmp", "fcmp"):
            pred, rest2 = rest.split(" ", 1)
            ty, rest3 = _take_type(rest2)
            a, b = _split_args(rest3)
            va, vb = self._val(a, ty), self._val(b, ty)
            cmp = _icmp(pred, ty) if op == "icmp" else _fcmp(pred)
            sa, sb = self._src(a, ty), self._src(b, ty)
            if op == "icmp" and pred in _UCMP:  # unsigned: `int(op(int(a), int(b)))`
                src = f"int(int({sa}) {_UCMP[pred]} int({sb}))"
            elif op == "icmp" and pred in _SCMP:  # signed: both sides through `_signed(int(v), bits)`
                n = _bits(ty)
                sx = [f"(_x{j} - {1 << n} if (_x{j} := int({v})) >= {1 << (n - 1)} else _x{j})" for j, v in ((0, sa), (1, sb))]
                src = f"int({sx[0]} {_SCMP[pred]} {sx[1]})"
            else:
                src = f"{self._bind(cmp)}({sa}, {sb})"
            return _Ins(dst, lambda r: cmp(va(r), vb(r)), text=rhs, src=src)
        if op == "select":
            c, a, b = _split_args(rest)
            vc = self._typed(c)[1]
            va, vb = self._typed(a)[1], self._typed(b)[1]
            return _Ins(dst, lambda r: va(r) if vc(r) else vb(r), text=rhs,
                        src=f"({self._typed_src(a)} if {self._typed_src(c)} else {self._typed_src(b)})")
        if op in _CASTS:
            m = re.match(r"(.+?) (\S+) to (.+)$", rest)
            assert m, rhs
            src_ty, v, dst_ty = m.group(1), self._val(m.group(2), m.group(1)), m.group(3)
            cast = _CASTS[op]
            sv = self._src(m.group(2), src_ty)
            fast = _scalar_cast(op, v, src_ty, dst_ty)
            src = (f"{self._bind(_FLOATS[dst_ty])}({sv})" if fast is not None
                   else f"{self._bind(cast)}({sv}, {src_ty!r}, {dst_ty!r})")
            word = _WORD.get((src_ty, dst_ty)) if op == "bitcast" else None
            if word is not None:  # `_cast_bitcast`'s word paths inline
                a, w0, w1 = self._bind(np.array), self._bind(word[0]), self._bind(word[1])
                src = (f"{a}(int({sv}) & {(1 << _bits(src_ty)) - 1}, {w0}).view({w1})[()]" if src_ty[0] == "i"
                       else f"int({a}({sv}, {w0}).view({w1}))")
            return _Ins(dst, fast or (lambda r: cast(v(r), src_ty, dst_ty)), text=rhs, src=src)
        if op == "getelementptr":
            parts = _split_args(rest)
            ety = parts[0]
            base = self._typed(parts[1])[1]
            idxs = [self._typed(p) for p in parts[2:]]
            assert len(idxs) == 1, rhs
            ity, iv = idxs[0]
            es = _size(ety)
            bits = _bits(ity)
            # _signed(i, bits) inline, on the index evaluated once
            src = (f"((_p := {self._typed_src(parts[1])})[0], _p[1] + ((_i - {1 << bits} if _i >= {1 << (bits - 1)}"
                   f" else _i) if (_i := {self._typed_src(parts[2])}) is not None else 0) * {es})")
            return _Ins(dst, lambda r: (base(r)[0], base(r)[1] + _signed(iv(r), bits) * es), text=rhs, src=src)
        if op == "load":
            atomic = rest.startswith("atomic ")
            if atomic:
                rest = rest[7:]
            parts = _split_args(rest)
            ty = parts[0]
            p = self._typed(parts[1])[1]
            return _Ins(dst, None, sync=lambda r: ("load", p(r), ty), text=rhs,
                        sync_src=f"('load', {self._typed_src(parts[1])}, {ty!r})")
        if op == "store":
            parts = _split_args(rest)
            ty, v = self._typed(parts[0])
            p = self._typed(parts[1])[1]
            return _Ins(None, None, sync=lambda r: ("store", p(r), ty, v(r)), text=rhs,
                        sync_src=f"('store', {self._typed_src(parts[1])}, {ty!r}, {self._typed_src(parts[0])})")
        if op == "extractelement":
            a, b = _split_args(rest)
            v, i = self._typed(a)[1], self._typed(b)[1]
            return _Ins(dst, lambda r: v(r)[i(r)], text=rhs, src=f"{self._typed_src(a)}[{self._typed_src(b)}]")
        if op == "insertelement":
            a, b, c = _split_args(rest)
            v, x, i = self._typed(a)[1], self._typed(b)[1], self._typed(c)[1]

            def ins(r: dict[str, Any]) -> Any:
                t = list(v(r))
                t[i(r)] = x(r)
                return tuple(t)

            return _Ins(dst, ins, text=rhs)
        if op == "extractvalue":
            parts = _split_args(rest)
            v = self._typed(parts[0])[1]
            n = int(parts[1])
            return _Ins(dst, lambda r: v(r)[n], text=rhs, src=f"{self._typed_src(parts[0])}[{n}]")
        if op == "atomicrmw":
            m = re.match(r"(\w+) (.+)$", rest)
            assert m
            kind = m.group(1)
            parts = _split_args(m.group(2))
            p = self._typed(parts[0])[1]
            ty, v = self._typed(parts[1].replace(" monotonic", ""))
            return _Ins(dst, None, sync=lambda r: ("atomic", kind, p(r), ty, v(r)), text=rhs)
        if op == "cmpxchg":
            parts = _split_args(rest)
            p = self._typed(parts[0])[1]
            ty, old = self._typed(parts[1])
            _, new = self._typed(parts[2].replace(" monotonic monotonic", ""))
            return _Ins(dst, None, sync=lambda r: ("cas", p(r), ty, old(r), new(r)), text=rhs)
        if op == "call":
            return self._call(dst, rest, rhs)
        raise Unsupported(rhs)

    def _call(self, dst: str | None, rest: str, rhs: str) -> _Ins:
        m = re.match(r'(.+?) asm (?:sideeffect )?"(.*?)", "(.*?)"\((.*)\)$', rest)
        if m:
            return self._asm(dst, m.group(2), [self._typed(a)[1] for a in _split_args(m.group(4))], rhs)
        m = re.match(r"(.+?) @([\w.$]+)\((.*)\)$", rest)
        if not m:
            raise Unsupported(rhs)
        name = m.group(2)
        args = [self._typed(a) for a in _split_args(m.group(3))] if m.group(3).strip() else []
        vals = [v for _, v in args]
        tys = [t for t, _ in args]
        if name == "llvm.nvvm.read.ptx.sreg.globaltimer":  # ticks 32 ns a read
            return _Ins(dst, lambda r: next(_TIMER), text=rhs)
        if name.startswith("llvm.nvvm.read.ptx.sreg."):
            reg = name[len("llvm.nvvm.read.ptx.sreg."):]
            return _Ins(dst, lambda r: r["$" + reg], text=rhs, src=f"r[{'$' + reg!r}]")
        if name == "llvm.nvvm.barrier.cta.sync.aligned.all":
            return _Ins(None, None, sync=lambda r: ("bar",), text=rhs)
        if name.startswith("llvm.nvvm.shfl.sync."):
            mode = name.split(".")[4]
            return _Ins(dst, None, sync=lambda r: ("shfl", mode, vals[1](r), vals[2](r), vals[3](r)), text=rhs)
        if name.startswith("llvm.nvvm.cp.async.cg.shared.global."):
            # an asynchronous copy: it reads now and lands at the wait_group that retires its group
            return _Ins(None, None, sync=lambda r: ("copy", vals[0](r), vals[1](r),
                                                    int(name.split(".")[-2 if name.endswith(".s") else -1]),
                                                    vals[2](r) if len(vals) > 2 else None), text=rhs)
        if name == "llvm.nvvm.cp.async.commit.group":
            return _Ins(None, None, sync=lambda r: ("cp_commit",), text=rhs)
        if name == "llvm.nvvm.cp.async.wait.group":
            return _Ins(None, None, sync=lambda r: ("cp_wait", int(vals[0](r))), text=rhs)
        if name == "llvm.nvvm.cp.async.wait.all":
            return _Ins(None, None, sync=lambda r: ("cp_wait", 0), text=rhs)
        if name.startswith(("llvm.nvvm.ldmatrix.", "llvm.nvvm.mma.", "llvm.nvvm.vote.")):
            return _Ins(dst, None, sync=lambda r: ("warp", name, [v(r) for v in vals]), text=rhs)
        hop = _hopper_call(name, vals, dst, rhs)
        if hop is not None:
            return hop
        base = re.sub(r"\.(f32|f64|i\d+|f)$", "", name)
        if base.startswith("llvm.fptosi.sat") or base.startswith("llvm.fptoui.sat"):
            base = ".".join(base.split(".")[:3])
        f = _INTRINSICS.get(base)
        if f is None:
            raise Unsupported(rhs)
        srcs = [self._typed_src(a) for a in _split_args(m.group(3))] if m.group(3).strip() else []
        src = f"{self._bind(f)}({''.join(x + ', ' for x in srcs)}tys={self._bind(tys)}, name={name!r})"
        if hasattr(f, "fast"):  # min/max: their f32 path without np.isnan
            src = f"{self._bind(f.fast)}({srcs[0]}, {srcs[1]})"
        elif hasattr(f, "unary"):  # `_unary`'s g inline
            conv = self._bind(np.float64 if tys[0] == "double" else np.float32)
            src = f"{conv}({self._bind(f.unary)}({srcs[0]}))"
        return _Ins(dst, lambda r: f(*[v(r) for v in vals], tys=tys, name=name), text=rhs, src=src)


    def _asm(self, dst: str | None, text: str, vals: list[Callable[[dict[str, Any]], Any]], rhs: str) -> _Ins:
        if text == "" and dst is None:  # `g.Touch`: registers kept live, no instruction
            return _Ins(None, lambda r: None, text=rhs)
        if text == "mov.b32 $0, $1;":  # `g.Opaque`: a copy
            return _Ins(dst, lambda r: vals[0](r), text=rhs)
        if text == ("{ .reg .b32 t; .reg .pred q; mad.lo.u32 t, $1, $1, $1; and.b32 t, t, 1; setp.ne.u32 q, t, 0; "
                    "vote.sync.any.pred q, q, -1; selp.u32 t, 1, 0, q; or.b32 $0, $2, t; }"):
            # a wait's parity pinned after values (`hopper._after`): computed as written, mod 2^32, each thread's
            # own t for the warp's vote (t is 0 in every lane, so the vote of the lanes is each lane's)
            def pinned(r: dict[str, Any]) -> Any:
                b, ph = int(vals[0](r)) & 0xFFFFFFFF, vals[1](r)
                return type(ph)(int(ph) | (((b * b + b) & 0xFFFFFFFF) & 1))
            return _Ins(dst, pinned, text=rhs)
        if text.startswith("wgmma.wait_group"):
            # the registers pass through, once the groups they come from are retired
            n = int(re.search(r"wait_group\.sync\.aligned (\d+)", text).group(1))  # type: ignore[union-attr]
            return _Ins(dst, None, sync=lambda r: ("wg_wait", n, tuple(v(r) for v in vals)), text=rhs)
        if text.startswith("wgmma.mma_async") or text.startswith("wgmma.fence.sync.aligned;"):
            return _Ins(dst, None, sync=lambda r: ("wg", text, [v(r) for v in vals]), text=rhs)
        if text.startswith("atom.acq_rel.gpu.global.add.u32 $0, [$1], 1;"):  # `last_block`'s arrival
            return _Ins(dst, None, sync=lambda r: ("atomic", "add", vals[0](r), "i32", 1), text=rhs)
        if text.startswith("{ .reg .pred %p; setp.eq.u32 %p, $1, 0; mov.u32 $0, 0; "
                           "@%p atom.relaxed.gpu.global.add.u32 $0, [$2], 1; }"):  # a queue's pull (thread 0)
            return _Ins(dst, None, sync=lambda r: ("qpull", vals[0](r), vals[1](r)), text=rhs)
        if text == "st.relaxed.gpu.global.u32 [$0], 0;":  # its counter's reset
            return _Ins(None, None, sync=lambda r: ("atomic", "xchg", vals[0](r), "i32", 0), text=rhs)
        if text == "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;":  # an L2 policy: opaque here
            return _Ins(dst, lambda r: 0x12F0000000000000, text=rhs)
        if text.startswith("{ .reg .b64 c; mov.u64 c, %clock64; shr.u64 c, c, 63;"):  # the ring's opaque zero
            return _Ins(dst, lambda r: 0, text=rhs)
        if text == "cp.async.cg.shared.global.L2::cache_hint [$0], [$1], 16, $2, $3;":
            # a ring copy with an L2 policy (`codegen/ring.py`): the shared address as an i32
            return _Ins(None, None, sync=lambda r: ("copy", ("smem", int(vals[0](r))), vals[1](r), 16,
                                                    vals[2](r)), text=rhs)
        if re.search(r"(^|@pf )(cp\.async\.bulk\.prefetch\.L2\.global|prefetch\.global\.L2) ", text):
            # an L2 prefetch (`p.prefetch`, PDL's pre-wait forms): a hint, no effect here
            return _Ins(None, lambda r: None, text=rhs)
        raise Unsupported(rhs)


# ---------------------------------------------------------------- Hopper: mbarriers, TMA, wgmma
def _hopper_call(name: str, vals: list[Callable[[dict[str, Any]], Any]], dst: str | None, rhs: str) -> _Ins | None:
    """The sm_90 intrinsics the Hopper path emits (`backend/hopper.py`)."""
    def nop(r: dict[str, Any]) -> None:
        return None

    if name == "llvm.nvvm.wgmma.commit_group.sync.aligned":
        return _Ins(None, None, sync=lambda r: ("wg_commit",), text=rhs)
    if name == "llvm.nvvm.bar.warp.sync":
        # __syncwarp: every lane of the warp gets there before any goes on
        return _Ins(None, None, sync=lambda r: ("warp", name, []), text=rhs)
    if name == "llvm.nvvm.fence.proxy.async.shared_cta":
        return _Ins(None, None, sync=lambda r: ("fence_async",), text=rhs)
    if name.startswith("llvm.nvvm.cp.async.bulk.tensor.s2g.tile."):  # a TMA store: src, map, coords innermost first
        n = int(name[-2])
        return _Ins(None, None, sync=lambda r: ("tma_store", vals[0](r), vals[1](r), *[vals[2 + i](r) for i in range(n)]),
                    text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.commit.group":
        return _Ins(None, None, sync=lambda r: ("bulk_commit",), text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.wait.group.read":
        return _Ins(None, None, sync=lambda r: ("bulk_wait", vals[0](r)), text=rhs)
    if (name == "llvm.nvvm.wgmma.fence.sync.aligned" or name.startswith("llvm.nvvm.setmaxnreg.")
            or name.startswith("llvm.nvvm.prefetch.tensormap.")):  # (a tensor map's prefetch: a hint)
        return _Ins(None, nop, text=rhs)
    if name == "llvm.nvvm.barrier.cta.sync.aligned.count":
        return _Ins(None, None, sync=lambda r: ("nbar", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.barrier.cta.arrive.aligned.count":
        return _Ins(None, None, sync=lambda r: ("nbar_arrive", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.mbarrier.init.shared":
        return _Ins(None, None, sync=lambda r: ("mbar_init", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta":
        return _Ins(dst, None, sync=lambda r: ("mbar_arrive", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.mbarrier.arrive.shared":
        return _Ins(dst, None, sync=lambda r: ("mbar_arrive", vals[0](r), 0), text=rhs)
    if name == "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta":
        return _Ins(dst, None, sync=lambda r: ("mbar_try", vals[0](r), vals[1](r)), text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.2d":
        return _Ins(None, None, sync=lambda r: ("tma", vals[0](r), vals[1](r), vals[2](r), vals[3](r), vals[4](r)),
                    text=rhs)
    if name == "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.3d":
        # the outermost coordinate (the 3-D map's first dim) is folded into the row
        return _Ins(None, None, sync=lambda r: ("tma", vals[0](r), vals[1](r), vals[2](r), vals[3](r), vals[4](r),
                                                vals[5](r)), text=rhs)
    return None


@dataclass
class TensorMap:
    """What `cuTensorMapEncodeTiled` encodes, for the simulator: a row-major 2-D
    tensor in buffer `key`, boxes of `box` elements, `swizzle`-byte swizzle."""

    key: Any
    rows: int
    cols: int
    box: tuple[int, int]
    swizzle: int
    itemsize: int = 2
    planes: int = 1  # a 3-D tensor [planes, rows, cols] (boxes of one plane)


def _swz(addr: np.ndarray | int, width: int) -> Any:
    """The hardware's shared-memory swizzle of `width` bytes (CUTLASS Swizzle<b,4,3>):
    address bits [4, 4+b) ^= bits [7, 7+b)."""
    b = {128: 3, 64: 2, 32: 1, 0: 0}[width]
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


class _Hazards:
    """Racecheck for ordinary shared-memory loads and stores: two threads of a
    block touching one byte with no synchronisation between them, one of them
    writing, is a race. Every synchronisation the simulator performs (the block
    barrier, a named barrier's release, an mbarrier phase, `bar.warp.sync`)
    starts a new epoch for all threads: coarser than the hardware's
    happens-before for partial barriers, so it can miss a race there but never
    reports one where an ordering exists. Asynchronous copies, TMA, ldmatrix
    and wgmma have their own checks (`Memory.guard`, `guard_wgmma`)."""

    def __init__(self, nbytes: int) -> None:
        # Python lists, not arrays: an access is a few bytes, and a list
        # slice's `in` and assignment cost a fraction of NumPy's per-call work
        self.epoch = 0
        self.w_ep = [-1] * nbytes  # epoch of each byte's last write
        self.w_t = [0] * nbytes  # and its thread
        self.r_ep = [-1] * nbytes  # epoch of its last reads
        self.r_t = [0] * nbytes  # the reading thread, -2 for several

    def sync(self) -> None:
        self.epoch += 1

    def access(self, t: int, off: int, n: int, write: bool) -> None:
        e, end = self.epoch, off + n
        w_ep, r_ep = self.w_ep, self.r_ep
        wep = w_ep[off:end]
        k = len(wep)  # the bytes of the buffer in [off, off + n)
        if e in wep:  # bytes written in this epoch: by another thread?
            w_t = self.w_t
            for i, ep in enumerate(wep):
                if ep == e and w_t[off + i] != t:
                    raise Race(f"thread {t} {'writes' if write else 'reads'} smem+{off + i} that thread "
                               f"{w_t[off + i]} wrote with no barrier between them")
        rep = r_ep[off:end]
        if write:
            if e in rep:
                r_t = self.r_t
                for i, ep in enumerate(rep):
                    if ep == e and r_t[off + i] != t:
                        who = "several threads" if r_t[off + i] == -2 else f"thread {r_t[off + i]}"
                        raise Race(f"thread {t} writes smem+{off + i} that {who} read with no barrier between them")
            w_ep[off:end] = [e] * k
            self.w_t[off:end] = [t] * k
        else:
            if e in rep:  # a byte another thread read in this epoch: read by several
                r_t = self.r_t
                for i, ep in enumerate(rep):
                    r_t[off + i] = -2 if ep == e and r_t[off + i] != t else t
            else:
                self.r_t[off:end] = [t] * k
            r_ep[off:end] = [e] * k


class _Barrier:
    def __init__(self, count: int) -> None:
        self.count = count
        self.pending = count
        self.tx = 0
        self.phases = 0  # completed phases

    def check(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.phases += 1
            self.pending = self.count


def _tma(mem: Memory, bars: dict[Any, _Barrier], dst: tuple[Any, int], bar: tuple[Any, int], tm: TensorMap,
         c0: int, c1: int, c2: int = 0) -> None:
    """Copy one box (zero outside the tensor) into swizzled shared memory; complete its bytes."""
    c0, c1, c2 = _signed(int(c0), 32), _signed(int(c1), 32), _signed(int(c2), 32)
    whole = np.frombuffer(bytes(mem.bufs[tm.key]), np.uint16).reshape(tm.planes, tm.rows, tm.cols)
    src = whole[c2] if 0 <= c2 < tm.planes else np.zeros((tm.rows, tm.cols), np.uint16)
    br, bc = tm.box
    box = np.zeros((br, bc), np.uint16)
    r0, r1 = max(0, c1), min(tm.rows, c1 + br)
    q0, q1 = max(0, c0), min(tm.cols, c0 + bc)
    if r0 < r1 and q0 < q1:
        box[r0 - c1:r1 - c1, q0 - c0:q1 - c0] = src[r0:r1, q0:q1]
    sm = mem.bufs[dst[0]]
    i, j = np.meshgrid(np.arange(br), np.arange(bc), indexing="ij")
    addr = _swz(dst[1] + i * tm.swizzle + j * 2, tm.swizzle)
    if mem.wgmma_live:
        mem.guard_wgmma(addr.ravel(), "a TMA copy")
    if mem.bulk_live:
        mem.guard_bulk(np.concatenate([addr.ravel(), addr.ravel() + 1]), "a TMA copy")
    view = np.frombuffer(sm, np.uint8)
    raw = box.view(np.uint8).reshape(br, bc, 2)
    for b in range(2):
        view[(addr + b).ravel()] = raw[:, :, b].ravel()
    bars[bar].tx -= br * bc * 2
    bars[bar].check()


def _tma_store(mem: Memory, t: int, src: tuple[Any, int], tm: TensorMap, c0: int, c1: int, c2: int = 0) -> np.ndarray:
    """One TMA store of a box from swizzled shared memory, clipped at the
    tensor's bounds (nothing is written outside it): done at once (nothing
    reads the tensor in the same launch); the shared bytes it reads must have
    been fenced by their writers (`fence.proxy.async`), and are returned: they
    stay read until the thread's `cp.async.bulk.wait_group.read`."""
    c0, c1, c2 = _signed(int(c0), 32), _signed(int(c1), 32), _signed(int(c2), 32)
    br, bc = tm.box
    i, j = np.meshgrid(np.arange(br), np.arange(bc), indexing="ij")
    addr = _swz(src[1] + i * tm.swizzle + j * 2, tm.swizzle)
    both = np.concatenate([addr.ravel(), addr.ravel() + 1])
    if mem.unfenced is not None:
        w = mem.unfenced[both]
        if (w >= 0).any():
            raise Race(f"thread {t}'s TMA store reads smem+{int(both[np.argmax(w >= 0)])} that thread {int(w.max())} "
                       "wrote with no fence.proxy.async after it")
    if mem.hazards is not None:
        mem.hazards.access(t, int(both.min()), int(both.max() - both.min() + 1), False)
    raw = np.frombuffer(bytes(mem.bufs[src[0]]), np.uint8)
    box = (raw[addr].astype(np.uint16) | (raw[addr + 1].astype(np.uint16) << 8))
    whole = np.frombuffer(mem.bufs[tm.key], np.uint16).reshape(tm.planes, tm.rows, tm.cols)
    r0, r1 = max(0, c1), min(tm.rows, c1 + br)
    q0, q1 = max(0, c0), min(tm.cols, c0 + bc)
    if 0 <= c2 < tm.planes and r0 < r1 and q0 < q1:
        whole[c2, r0:r1, q0:q1] = box[r0 - c1:r1 - c1, q0 - c0:q1 - c0]
    return both


def _operand(sm: bytes, desc: int, rows: int, trans: int, ty: str, reads: list[Any] | None = None) -> np.ndarray:
    """The [rows, 16] (K-major, trans 0) or [16, rows]^T (MN-major, trans 1) operand
    a wgmma descriptor points at, as a [rows, 16] float array (row r = m or n);
    the byte offsets it reads are appended to `reads`."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    width = {1: 128, 2: 64, 3: 32, 0: 16}[desc >> 62]
    r, k = np.meshgrid(np.arange(rows), np.arange(16), indexing="ij")
    if trans == 0:  # K-major: row r is contiguous in K
        addr = start + (r // 8) * sbo + (r % 8) * width + k * 2
    else:  # MN-major: slabs of width/2 elements of r, K rows 8 at a time
        e = width // 2
        addr = start + (r // e) * lbo + (k // 8) * sbo + (k % 8) * width + (r % e) * 2
    addr = _swz(addr, width)
    if reads is not None:
        reads += [addr.ravel(), addr.ravel() + 1]
    raw = np.frombuffer(sm, np.uint8)
    u = raw[addr].astype(np.uint16) | (raw[addr + 1].astype(np.uint16) << 8)
    if ty == "f16":
        return u.view(np.float16).astype(np.float64)
    return (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class _Group:
    """One wgmma commit group of a warpgroup: the shared memory it reads and
    the threads that have not yet retired it (`wgmma.wait_group`)."""

    def __init__(self, group: int, size: int, threads: list[int]) -> None:
        self.group = group
        self.reads = np.zeros(size, bool)
        self.pending = set(threads)


class _Pending:
    """A register a wgmma writes, as its thread sees it before the
    `wgmma.wait_group` that retires the wgmma's group: reading it is a race
    (the hardware writes it asynchronously); another wgmma may take it as
    its accumulator, and a wait passes it through."""

    __slots__ = ("value", "rec", "t")

    def __init__(self, value: Any, rec: _Group, t: int) -> None:
        self.value, self.rec, self.t = value, rec, t

    def get(self) -> Any:
        if self.t in self.rec.pending:
            raise Race(f"thread {self.t} reads a register of an in-flight wgmma (no wgmma.wait_group retired it)")
        return self.value

    def __float__(self) -> float:
        return float(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        return getattr(ufunc, method)(*(x.get() if isinstance(x, _Pending) else x for x in inputs), **kw)


def _forward(name: str) -> Callable[..., Any]:
    def f(self: _Pending, *a: Any) -> Any:
        return getattr(self.get(), name)(*a)
    return f


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__neg__", "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__pow__", "__rpow__"):
    setattr(_Pending, _name, _forward(_name))


def _plain(v: Any) -> Any:
    return v.value if isinstance(v, _Pending) else v


@functools.cache
def _acc_layout(n: int) -> tuple[np.ndarray, np.ndarray]:
    """[128, n] rows and columns of a wgmma accumulator's register i in thread t."""
    t, i = np.meshgrid(np.arange(128), np.arange(n), indexing="ij")
    w, lane = t // 32, t % 32
    return 16 * w + lane // 4 + np.where(i % 4 >= 2, 8, 0), 8 * (i // 4) + 2 * (lane % 4) + (i % 2)


# [thread, register, half] rows and columns of a wgmma's A operand in registers
_A_T, _A_I, _A_H = np.meshgrid(np.arange(128), np.arange(4), np.arange(2), indexing="ij")
_A_ROWS = 16 * (_A_T // 32) + (_A_T % 32) // 4 + np.where(_A_I % 2 == 1, 8, 0)
_A_COLS = 2 * ((_A_T % 32) % 4) + _A_H + np.where(_A_I >= 2, 8, 0)


def _wgmma(text: str, args: list[list[Any]], mem: Memory) -> tuple[list[list[Any]], list[tuple[list[Any], list[int], bool]]]:
    """The asm statement's wgmmas, run at once on the warpgroup's 128 threads.
    `$k` counts the asm's outputs first: output i is tied to the call's
    argument i, and `$k` past the outputs is argument k - outputs. Each
    commit group (or the whole statement) accumulates into its own outputs.
    Also returns the statement's groups: (shared memory read, outputs,
    committed in the statement)."""
    lines = [ln.strip() for ln in text.replace("\\0A", "\n").split("\n")
             if ln.strip() and not ln.strip().startswith("wgmma.fence")]
    firsts = [re.search(r"\{([^}]*)\}", ln) for ln in lines if ln.startswith("wgmma.mma_async")]
    nout = 1 + max(int(x.strip()[1:]) for f in firsts if f for x in f.group(1).split(","))
    args = [[_plain(x) for x in a] for a in args]
    out = [[args[t][i] for i in range(nout)] for t in range(128)]
    sm = bytes(mem.bufs["smem"])
    acc: np.ndarray | None = None
    outs: list[int] = []
    groups: list[tuple[list[Any], list[int], bool]] = []
    reads: list[Any] = []

    def arg(k: str) -> int:
        return int(args[0][int(k) - nout])

    def flush() -> None:
        nonlocal acc
        if acc is None:
            return
        rows, cols = _acc_layout(len(outs))
        for o_t, vals in zip(out, acc.astype(np.float32)[rows, cols], strict=True):  # np.float32 elements
            for o, v in zip(outs, vals, strict=True):
                o_t[o] = v
        acc = None

    for ln in lines:
        if ln.startswith("wgmma.commit_group"):
            if acc is not None:
                groups.append((reads, list(outs), True))
            reads = []
            flush()
            continue
        head = re.match(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(\w+)\.\w+ \{([^}]*)\}, (.*);$", ln)
        if not head:
            raise Unsupported(ln)
        N, ty = int(head.group(1)), head.group(2)
        regs = [int(x.strip()[1:]) for x in head.group(3).split(",")]
        if acc is None:
            outs = regs
            acc = np.zeros((64, N))
            rows, cols = _acc_layout(len(outs))
            acc[rows, cols] = [[0.0 if v is None or isinstance(v, str) else float(v) for v in (a[o] for o in outs)]
                               for a in args]
        rest = head.group(4)
        rs = re.match(r"\{\$(\d+),\$(\d+),\$(\d+),\$(\d+)\}, \$(\d+), \$(\d+), 1, 1, (\d)$", rest)
        if rs:  # A from registers
            ra = [int(rs.group(1 + i)) - nout for i in range(4)]
            db, pr, tb = rs.group(5), rs.group(6), int(rs.group(7))
            A = np.zeros((64, 16))
            words = np.array([[int(a[reg]) & 0xFFFFFFFF for reg in ra] for a in args], np.uint32)
            u = words.view(np.uint16).reshape(128, 4, 2)  # [thread, register, half]: the low half first
            A[_A_ROWS, _A_COLS] = (u.view(np.float16).astype(np.float64) if ty == "f16"
                                   else (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64))
        else:
            m = re.match(r"\$(\d+), \$(\d+), \$(\d+), 1, 1, (\d), (\d)$", rest)
            if not m:
                raise Unsupported(ln)
            A = _operand(sm, arg(m.group(1)), 64, int(m.group(4)), ty, reads)
            db, pr, tb = m.group(2), m.group(3), int(m.group(5))
        B = _operand(sm, arg(db), N, tb, ty, reads)
        acc = (acc if arg(pr) else 0.0) + A @ B.T
        acc = acc.astype(np.float32).astype(np.float64)
    if acc is not None:
        groups.append((reads, list(outs), False))
    flush()
    return out, groups


# ---------------------------------------------------------------- semantics
def _ibin(f: Callable[[int, int, int], int]) -> Callable[[Any, Any, str], Any]:
    def g(a: Any, b: Any, ty: str) -> Any:
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(g(x, y, el) for x, y in zip(a, b, strict=True))
        bits = _bits(ty)
        return f(int(a), int(b), bits) & ((1 << bits) - 1)
    g.int_op = f  # type: ignore[attr-defined]
    return g


def _fbin(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any, str], Any]:
    def g(a: Any, b: Any, ty: str) -> Any:
        if ty.startswith("<"):
            n, el = _vec(ty)
            return tuple(g(x, y, el) for x, y in zip(a, b, strict=True))
        r = f(a, b)  # run_block ignores floating-point warnings
        return _bf16(r) if ty == "bfloat" else _FLOATS[ty](r)
    g.float_op = f  # type: ignore[attr-defined]
    return g


def _sdiv(a: int, b: int, n: int) -> int:
    x, y = _signed(a, n), _signed(b, n)
    if y == 0:
        raise ZeroDivisionError("sdiv by zero (poison in LLVM)")
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _srem(a: int, b: int, n: int) -> int:
    x, y = _signed(a, n), _signed(b, n)
    if y == 0:
        raise ZeroDivisionError("srem by zero")
    return x - _sdiv(a, b, n) * y


def _udiv(a: int, b: int, n: int) -> int:
    if b == 0:
        raise ZeroDivisionError("udiv by zero")
    return a // b


def _urem(a: int, b: int, n: int) -> int:
    if b == 0:
        raise ZeroDivisionError("urem by zero")
    return a % b


def _shift_ok(b: int, n: int) -> int:
    if b >= n:
        raise ValueError("shift by >= bit width (poison in LLVM)")
    return b


_BINOPS: dict[str, Callable[[Any, Any, str], Any]] = {
    "add": _ibin(lambda a, b, n: a + b),
    "sub": _ibin(lambda a, b, n: a - b),
    "mul": _ibin(lambda a, b, n: a * b),
    "udiv": _ibin(_udiv),
    "sdiv": _ibin(_sdiv),
    "urem": _ibin(_urem),
    "srem": _ibin(_srem),
    "shl": _ibin(lambda a, b, n: a << _shift_ok(b, n)),
    "lshr": _ibin(lambda a, b, n: a >> _shift_ok(b, n)),
    "ashr": _ibin(lambda a, b, n: _signed(a, n) >> _shift_ok(b, n)),
    "and": _ibin(lambda a, b, n: a & b),
    "or": _ibin(lambda a, b, n: a | b),
    "xor": _ibin(lambda a, b, n: a ^ b),
    "fadd": _fbin(lambda a, b: a + b),
    "fsub": _fbin(lambda a, b: a - b),
    "fmul": _fbin(lambda a, b: a * b),
    "fdiv": _fbin(lambda a, b: np.divide(a, b)),
    "frem": _fbin(lambda a, b: np.fmod(a, b)),
}


# the operations the block compiler writes inline (the `_BINOPS` lambdas' own expressions)
_INLINE_OPS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
               "fadd": "+", "fsub": "-", "fmul": "*"}
_UCMP = {"eq": "==", "ne": "!=", "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}  # icmp's unsigned predicates
_SCMP = {"slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}


def _icmp(pred: str, ty: str) -> Callable[[Any, Any], int]:
    bits = _bits(ty) if not ty.startswith("ptr") else 64
    s = (lambda v: _signed(int(v), bits)) if pred[0] == "s" else (lambda v: int(v))
    if ty.startswith("ptr"):
        raise Unsupported("icmp on pointers")
    op = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
          "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
          "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}[pred if pred in ("eq", "ne") else pred[1:]]
    return lambda a, b: int(op(s(a), s(b)))


def _fcmp(pred: str) -> Callable[[Any, Any], int]:
    if pred == "ord":
        return lambda a, b: int(not (np.isnan(a) or np.isnan(b)))
    if pred == "uno":
        return lambda a, b: int(bool(np.isnan(a) or np.isnan(b)))
    if pred in ("true", "false"):
        return lambda a, b: int(pred == "true")
    unordered = pred[0] == "u"
    op = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
          "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}[pred[1:]]

    def f(a: Any, b: Any) -> int:
        if np.isnan(a) or np.isnan(b):
            return int(unordered)
        return int(bool(op(a, b)))
    return f


def _float_of(v: Any, ty: str) -> float:
    return float(v)


def _cast_trunc(v: Any, s: str, d: str) -> Any:
    return int(v) & ((1 << _bits(d)) - 1)


def _cast_zext(v: Any, s: str, d: str) -> Any:
    return int(v)


def _cast_sext(v: Any, s: str, d: str) -> Any:
    return _signed(int(v), _bits(s)) & ((1 << _bits(d)) - 1)


def _cast_fptrunc(v: Any, s: str, d: str) -> Any:
    if d.startswith("<"):  # element-wise over a vector
        _, el = _vec(d)
        if el in _FLOATS:  # each element rounded once, as `_FLOATS[el](x)`
            return tuple(np.array(v, _FLOATS[el]))
        return tuple(_cast_fptrunc(x, "", el) for x in v)
    return _bf16(np.float32(v)) if d == "bfloat" else _FLOATS[d](v)


def _cast_fpext(v: Any, s: str, d: str) -> Any:
    return _FLOATS[d](v)


def _cast_sitofp(v: Any, s: str, d: str) -> Any:
    x = _signed(int(v), _bits(s))
    return _bf16(float(x)) if d == "bfloat" else _FLOATS[d](x)


def _cast_uitofp(v: Any, s: str, d: str) -> Any:
    return _bf16(float(v)) if d == "bfloat" else _FLOATS[d](int(v))


def _cast_fptosi(v: Any, s: str, d: str) -> Any:
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        raise ValueError("fptosi of nan/inf (poison)")
    return int(f) & ((1 << _bits(d)) - 1)


def _cast_fptoui(v: Any, s: str, d: str) -> Any:
    return _cast_fptosi(v, s, d)


_WORD = {("float", "i32"): (np.float32, np.uint32), ("i32", "float"): (np.uint32, np.float32),
         ("double", "i64"): (np.float64, np.uint64), ("i64", "double"): (np.uint64, np.float64)}


def _cast_bitcast(v: Any, s: str, d: str) -> Any:
    if s == d:
        return v
    word = _WORD.get((s, d))
    if word is not None:  # `_decode(_encode(v, s), d)` without the bytes
        if s[0] == "i":
            return np.array(int(v) & ((1 << _bits(s)) - 1), word[0]).view(word[1])[()]
        return int(np.array(v, word[0]).view(word[1]))
    if s.startswith("<") or d.startswith("<"):
        return _decode_any(_encode_any(v, s), d)
    return _decode(_encode(v, s), d)


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


def _cast_ptrtoint(v: Any, s: str, d: str) -> Any:
    key, off = v
    base = 0 if key == "smem" else 1 << 32  # global buffers are 256-byte aligned, shared at 0
    return (base + off) & ((1 << _bits(d)) - 1)


_CASTS: dict[str, Callable[[Any, str, str], Any]] = {
    "trunc": _cast_trunc, "zext": _cast_zext, "sext": _cast_sext, "fptrunc": _cast_fptrunc,
    "fpext": _cast_fpext, "sitofp": _cast_sitofp, "uitofp": _cast_uitofp, "fptosi": _cast_fptosi,
    "fptoui": _cast_fptoui, "bitcast": _cast_bitcast, "ptrtoint": _cast_ptrtoint,
    "addrspacecast": lambda v, s, d: v, "inttoptr": lambda v, s, d: ("smem", int(v)),
}


def _scalar_binop(fn: Any, ty: str, va: Any, vb: Any) -> Callable[[dict[str, Any]], Any] | None:
    """`fn(va(r), vb(r), ty)` for a scalar `ty` without the per-call type
    dispatch (the simulator's hottest path); None for vectors."""
    if ty.startswith("<"):
        return None
    op = getattr(fn, "int_op", None)
    if op is not None:
        bits = _bits(ty)
        mask = (1 << bits) - 1
        return lambda r: op(int(va(r)), int(vb(r)), bits) & mask
    fop = getattr(fn, "float_op", None)
    if fop is None:
        return None
    conv = _bf16 if ty == "bfloat" else _FLOATS[ty]
    return lambda r: conv(fop(va(r), vb(r)))


def _scalar_cast(op: str, v: Any, s: str, d: str) -> Callable[[dict[str, Any]], Any] | None:
    """A scalar float cast without the per-call dispatch; None where the
    general `_CASTS` entry is needed."""
    if s.startswith("<") or d.startswith("<") or d not in _FLOATS or op not in ("fptrunc", "fpext"):
        return None
    conv = _FLOATS[d]
    return lambda r: conv(v(r))


def _f32(x: Any) -> Any:
    return np.float32(x)


def _unary(f: Callable[[float], float]) -> Callable[..., Any]:
    def g(x: Any, tys: list[str], name: str) -> Any:
        r = f(x)
        return np.float64(r) if tys[0] == "double" else np.float32(r)
    g.unary = f  # type: ignore[attr-defined]
    return g


def _fma(a: Any, b: Any, c: Any, tys: list[str], name: str) -> Any:
    if tys[0] == "double":
        from fractions import Fraction

        fa, fb, fc = float(a), float(b), float(c)
        if not all(math.isfinite(v) for v in (fa, fb, fc)):
            return np.float64(fa * fb + fc)
        return np.float64(float(Fraction(fa) * Fraction(fb) + Fraction(fc)))
    # fma.rn.f32 rounds once: the f32 product is exact in f64, the f64 add is
    # rounded to odd (as the interpreter does), then the one rounding to f32;
    # a plain f64 add would round twice (a * b + c at a tie of f32 with a
    # small c went the wrong way)
    from tilelang.interp.numeric import _add_round_odd

    return np.float32(_add_round_odd(np.asarray(np.float64(a) * np.float64(b)), np.asarray(np.float64(c))))


def _minmax(is_max: bool) -> Callable[..., Any]:
    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        if np.isnan(a):
            return b
        if np.isnan(b):
            return a
        return max(a, b) if is_max else min(a, b)

    def fast(a: Any, b: Any) -> Any:  # `g` on two f32 scalars without np.isnan (x != x: NaN)
        if type(a) is not np.float32 or type(b) is not np.float32:
            return g(a, b, [], "")
        if a != a:
            return b
        if b != b:
            return a
        return max(a, b) if is_max else min(a, b)
    g.fast = fast  # type: ignore[attr-defined]
    return g


def _nanminmax(is_max: bool) -> Callable[..., Any]:
    # llvm.maximum / llvm.minimum (PTX max.NaN / min.NaN): NaN-propagating, -0.0 < +0.0
    def zeros(a: Any, b: Any) -> Any:
        return a + b if is_max else -((-a) + (-b))  # two zeros: the larger is their sum

    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        if np.isnan(a) or np.isnan(b):
            return type(a)(np.nan)
        if a == 0 and b == 0:
            return zeros(a, b)
        return max(a, b) if is_max else min(a, b)

    def fast(a: Any, b: Any) -> Any:  # `g` on two f32 scalars without np.isnan
        if type(a) is not np.float32 or type(b) is not np.float32:
            return g(a, b, [], "")
        if a != a or b != b:
            return np.float32(np.nan)
        if a == 0 and b == 0:
            return zeros(a, b)
        return max(a, b) if is_max else min(a, b)
    g.fast = fast  # type: ignore[attr-defined]
    return g


def _iabs(a: Any, poison: Any, tys: list[str], name: str) -> Any:
    bits = _bits(tys[0])
    return abs(_signed(int(a), bits)) & ((1 << bits) - 1)


def _fpto_sat(a: Any, tys: list[str], name: str) -> Any:
    bits = int(name.split(".")[3][1:])
    f = float(a)
    if math.isnan(f):
        return 0
    if ".fptosi." in name:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    else:
        lo, hi = 0, (1 << bits) - 1
    if math.isinf(f):
        return (hi if f > 0 else lo) & ((1 << bits) - 1)
    return max(lo, min(hi, int(f))) & ((1 << bits) - 1)


def _iminmax(kind: str) -> Callable[..., Any]:
    def g(a: Any, b: Any, tys: list[str], name: str) -> Any:
        bits = _bits(tys[0])
        if kind[0] == "s":
            x, y = _signed(int(a), bits), _signed(int(b), bits)
        else:
            x, y = int(a), int(b)
        return (max(x, y) if kind[1:] == "max" else min(x, y)) & ((1 << bits) - 1)
    return g


def _copysign(a: Any, b: Any, tys: list[str], name: str) -> Any:
    return (np.float64 if tys[0] == "double" else np.float32)(np.copysign(a, b))


def _ff2x2(el: str) -> Callable[..., Any]:
    """cvt.rn.{f16,bf16}x2.f32: two f32 rounded into one pair, the first operand the high half."""
    def f(hi: Any, lo: Any, tys: list[str], name: str) -> Any:
        return (_cast_fptrunc(lo, "float", el), _cast_fptrunc(hi, "float", el))
    return f


_INTRINSICS: dict[str, Callable[..., Any]] = {
    "llvm.nvvm.ff2f16x2.rn": _ff2x2("half"),
    "llvm.nvvm.ff2bf16x2.rn": _ff2x2("bfloat"),
    "llvm.fma": _fma,
    "llvm.nvvm.ex2.approx": _unary(np.exp2),
    "llvm.nvvm.ex2.approx.ftz": _unary(np.exp2),
    "llvm.nvvm.lg2.approx": _unary(np.log2),
    "llvm.nvvm.lg2.approx.ftz": _unary(np.log2),
    "llvm.nvvm.rsqrt.approx": _unary(lambda x: 1.0 / np.sqrt(np.float64(x))),
    "llvm.nvvm.rsqrt.approx.ftz": _unary(lambda x: 1.0 / np.sqrt(np.float64(x))),
    "llvm.nvvm.rcp.approx.ftz": _unary(lambda x: 1.0 / np.float64(x)),
    "llvm.nvvm.sin.approx": _unary(lambda x: np.sin(np.float64(x))),
    "llvm.nvvm.cos.approx": _unary(lambda x: np.cos(np.float64(x))),
    "llvm.sqrt": _unary(np.sqrt),
    "llvm.fabs": _unary(np.abs),
    "llvm.floor": _unary(np.floor),
    "llvm.ceil": _unary(np.ceil),
    "llvm.trunc": _unary(np.trunc),
    "llvm.rint": _unary(np.rint),
    "llvm.maxnum": _minmax(True),
    "llvm.maximum": _nanminmax(True),
    "llvm.minimum": _nanminmax(False),
    "llvm.minnum": _minmax(False),
    "llvm.abs": _iabs,
    "llvm.fptosi.sat": _fpto_sat,
    "llvm.fptoui.sat": _fpto_sat,
    "llvm.smax": _iminmax("smax"),
    "llvm.smin": _iminmax("smin"),
    "llvm.umax": _iminmax("umax"),
    "llvm.umin": _iminmax("umin"),
    "llvm.copysign": _copysign,
}


def _shfl(mode: str, vals: list[int], arg: int, c: int) -> list[int]:
    out = []
    for lane in range(32):
        if mode == "bfly":
            src = lane ^ arg
        elif mode == "idx":
            src = arg if isinstance(arg, int) else arg
        elif mode == "up":
            src = lane - arg if lane - arg >= 0 else lane
        elif mode == "down":
            src = lane + arg if lane + arg < 32 else lane
        else:
            raise Unsupported(mode)
        out.append(vals[src if 0 <= src < 32 else lane])
    return out


# ---------------------------------------------------------------- execution
def _thread(prog: Program, regs: dict[str, Any]) -> Iterator[tuple]:
    blocks = prog.blocks
    name: str | None = "entry"
    prev = ""
    steps = 0
    while name is not None:
        b = blocks[name]
        if b.phis:
            vals = []
            for dst, arms in b.phis:
                for f, pred in arms:
                    if pred == prev:
                        vals.append((dst, f(regs)))
                        break
                else:
                    raise AssertionError(f"phi {dst} in {name} has no arm for {prev}")
            for dst, v in vals:
                regs[dst] = v
        for ins in b.body:
            if ins.sync is not None:
                got = yield ins.sync(regs)
                if ins.dst is not None:
                    regs[ins.dst] = got
            else:
                regs[ins.dst] = ins.fn(regs)  # type: ignore[index,misc]
        steps += 1
        if steps > 10_000_000:
            raise RuntimeError("runaway loop")
        prev, name = name, b.term(regs)


def run_block(prog: Program, mem: Memory, base_regs: dict[str, Any], T: int) -> None:
    """Run one block of `T` threads to the end. Floating-point operations
    follow IEEE (overflow to inf, 0/0 to nan) without NumPy's warnings: the
    whole block runs under one `errstate` (entering one an instruction cost
    a tenth of the simulator's time)."""
    with np.errstate(all="ignore"):
        _run_block(prog, mem, base_regs, T)


def _run_block(prog: Program, mem: Memory, base_regs: dict[str, Any], T: int) -> None:
    gens: dict[int, Iterator[tuple]] = {}
    waiting: dict[int, tuple] = {}
    arrived: dict[int, int] = {}  # bar.arrive counts per named barrier id, not yet consumed by a sync
    open_copies: dict[int, list[tuple[int, bytes]]] = {t: [] for t in range(T)}  # cp.async not yet committed
    cp_groups: dict[int, list[list[tuple[int, bytes]]]] = {t: [] for t in range(T)}  # committed, not yet waited for
    bars: dict[Any, _Barrier] = {}
    regs_of: dict[int, dict[str, Any]] = {}
    wg_open: dict[int, _Group | None] = {t: None for t in range(T)}  # wgmmas issued, not yet committed
    wg_done: dict[int, list[_Group]] = {t: [] for t in range(T)}  # committed, not yet retired
    bulk_open: dict[int, list[Any]] = {t: [] for t in range(T)}  # TMA stores issued, not yet committed
    bulk_groups: dict[int, list[list[Any]]] = {t: [] for t in range(T)}  # committed, not yet waited for
    for t in range(T):
        regs = dict(base_regs)
        regs["$tid.x"] = t
        regs_of[t] = regs
        gens[t] = (_compiled_thread if COMPILED else _thread)(prog, regs)
    if mem.regs_out is not None:  # a test compares the threads' registers after the block
        mem.regs_out.append(regs_of)

    def sync() -> None:
        if mem.hazards is not None:
            mem.hazards.sync()

    def wake(key: Any) -> None:
        """Run the threads spinning on mbarrier `key` as soon as its phase
        completes, before the thread that completed it goes on: a release
        that comes too early (a stage freed while a wgmma or a load still
        reads it) lets the producer overwrite it at once, where the checks
        above see it."""
        sync()
        for t2 in [x for x in gens if waiting.get(x, ("",))[0] == "mbar_try" and waiting[x][1] == key]:
            if t2 in waiting and (bars[key].phases & 1) != (int(waiting[t2][2]) & 1):
                waiting.pop(t2)
                advance(t2, 1)

    def advance(t: int, value: Any) -> None:
        g = gens[t]
        while True:
            try:
                req = g.send(value)
            except StopIteration:
                del gens[t]
                waiting.pop(t, None)
                if open_copies[t] or cp_groups[t]:
                    raise Race(f"thread {t} exited with cp.async copies it never waited for")
                if bulk_open[t] or bulk_groups[t]:
                    raise Race(f"thread {t} exited with TMA stores whose reads it never waited for") from None
                return
            kind = req[0]
            if kind == "load":
                mem.track(t, req[1], req[2], False)
                value = mem.load(req[1], req[2])
                continue
            if kind == "store":
                if req[1][0] != "smem" and req[1][1] % _size(req[2]):
                    # the GPU faults on a misaligned access ("misaligned address")
                    raise IndexError(f"store of {req[2]} at {req[1][1]} in {req[1][0]!r}: not {_size(req[2])}-byte aligned")
                mem.track(t, req[1], req[2], True)
                mem.store(req[1], req[2], req[3])
                if mem.unfenced is not None and req[1][0] == "smem":
                    mem.unfenced[req[1][1]:req[1][1] + _size(req[2])] = t
                value = None
                continue
            if kind == "fence_async":
                if mem.unfenced is not None:
                    mem.unfenced[mem.unfenced == t] = -1
                value = None
                continue
            if kind == "tma_store":
                rec = (t, _tma_store(mem, t, req[1], req[2], *req[3:]))
                bulk_open[t].append(rec)
                mem.bulk_live.append(rec)
                if mem.bulk_reads is None:
                    mem.bulk_reads = np.zeros(len(mem.bufs["smem"]), np.int64)
                np.add.at(mem.bulk_reads, rec[1], 1)
                value = None
                continue
            if kind == "bulk_commit":
                bulk_groups[t].append(bulk_open[t])
                bulk_open[t] = []
                value = None
                continue
            if kind == "bulk_wait":  # the reads of all but the newest n groups are done
                keep = int(req[1])
                done = bulk_groups[t][:len(bulk_groups[t]) - keep] if keep else bulk_groups[t]
                bulk_groups[t] = bulk_groups[t][len(done):]
                for grp in done:
                    for rec in grp:
                        mem.bulk_live = [x for x in mem.bulk_live if x is not rec]
                        np.add.at(mem.bulk_reads, rec[1], -1)
                value = None
                continue
            if kind == "copy":
                _, dst, src, n, size = req
                size = n if size is None else int(size)
                data = bytes(mem.bufs[src[0]][src[1]:src[1] + size]) if size else b""
                if size and len(data) != size:
                    raise IndexError(f"cp.async of {size} bytes at {src[1]} outside buffer {src[0]!r}")
                if dst[0] != "smem" or dst[1] % 16 or n != 16 or (src[1] % 16 and size):
                    raise IndexError(f"cp.async of {n} bytes to {dst} from {src}: not 16-byte aligned")
                mem.guard("smem", dst[1], n, "cp.async")
                mem.inflight[dst[1] // 16] = 1
                open_copies[t].append((dst[1], data + b"\0" * (n - size)))
                value = None
                continue
            if kind == "cp_commit":
                cp_groups[t].append(open_copies[t])
                open_copies[t] = []
                value = None
                continue
            if kind == "cp_wait":
                keep = int(req[1])
                done = cp_groups[t][:len(cp_groups[t]) - keep] if keep else cp_groups[t]
                cp_groups[t] = cp_groups[t][len(done):]
                for grp in done:
                    for off, raw in grp:
                        del mem.inflight[off // 16]
                        mem.bufs["smem"][off:off + len(raw)] = raw
                value = None
                continue
            if kind == "atomic":
                _, op, p, ty, v = req
                old = mem.load(p, ty)
                mem.store(p, ty, _atomic(op, old, v, ty))
                value = old
                continue
            if kind == "qpull":
                _, tid, p = req
                value = 0
                if int(tid) == 0:
                    value = mem.load(p, "i32")
                    mem.store(p, "i32", _atomic("add", value, 1, "i32"))
                continue
            if kind == "cas":
                _, p, ty, expect, new = req
                old = mem.load(p, ty)
                ok = int(old == expect)
                if ok:
                    mem.store(p, ty, new)
                value = (old, ok)
                continue
            if kind == "mbar_init":
                bars[req[1]] = _Barrier(int(req[2]))
                value = None
                continue
            if kind == "mbar_arrive":
                b = bars[req[1]]
                b.tx += int(req[2])
                b.pending -= 1
                if b.pending < 0:
                    raise Deadlock(f"more arrivals than the mbarrier at {req[1]} expects")
                before = b.phases
                b.check()
                if b.phases != before:
                    wake(req[1])
                value = 0
                continue
            if kind == "nbar_arrive":  # counts toward the named barrier without waiting
                arrived[int(req[1])] = arrived.get(int(req[1]), 0) + 1
                value = None
                continue
            if kind == "tma":
                before = bars[req[2]].phases
                _tma(mem, bars, req[1], req[2], req[3], *req[4:])
                if bars[req[2]].phases != before:
                    wake(req[2])
                value = None
                continue
            if kind == "wg_commit":
                if wg_open[t] is not None:
                    wg_done[t].append(wg_open[t])  # type: ignore[arg-type]
                    wg_open[t] = None
                value = None
                continue
            if kind == "wg_wait":
                keep = int(req[1])
                done = wg_done[t][:len(wg_done[t]) - keep] if keep else wg_done[t]
                wg_done[t] = wg_done[t][len(done):]
                for rec in done:
                    rec.pending.discard(t)
                    if not rec.pending:
                        mem.wgmma_live.remove(rec)
                # registers of groups still in flight pass through as they are
                value = tuple(v.value if isinstance(v, _Pending) and t not in v.rec.pending else v for v in req[2])
                continue
            if kind == "mbar_try":
                b = bars[req[1]]
                if (b.phases & 1) != (int(req[2]) & 1):
                    value = 1
                    continue
            waiting[t] = req
            return

    for t in range(T):
        advance(t, None)
    while gens:
        progressed = False
        for w in range(-(-T // 32)):
            lanes = [t for t in range(32 * w, min(T, 32 * w + 32)) if t in gens]
            if lanes and all(waiting.get(t, ("",))[0] in ("shfl", "warp") for t in lanes):
                if len(lanes) != 32:
                    raise Deadlock(f"shuffle in warp {w} with {len(lanes)} live lanes")
                reqs = [waiting.pop(t) for t in lanes]
                modes = {r[1] for r in reqs}
                if len(modes) != 1:
                    raise Deadlock("lanes of one warp at different shuffles")
                mode = reqs[0][1]
                if reqs[0][0] == "warp":
                    if mode == "llvm.nvvm.bar.warp.sync":
                        sync()
                    res = _warp_op(mode, [r[2] for r in reqs], mem)
                    for t, v in zip(lanes, res, strict=True):
                        advance(t, v)
                    progressed = True
                    continue
                vals = [r[2] for r in reqs]
                if mode == "idx":
                    res = [vals[reqs[i][3] & 31] for i in range(32)]
                else:
                    args = {r[3] for r in reqs}
                    if len(args) != 1:
                        raise Deadlock("lanes of one warp at shuffles with different offsets")
                    res = _shfl(mode, vals, reqs[0][3], reqs[0][4])
                for t, v in zip(lanes, res, strict=True):
                    advance(t, v)
                progressed = True
        if progressed:
            continue
        # spinning mbarrier waits whose phase completed meanwhile
        for t in [t for t in gens if waiting.get(t, ("",))[0] == "mbar_try"]:
            req = waiting[t]
            if (bars[req[1]].phases & 1) != (int(req[2]) & 1):
                waiting.pop(t)
                advance(t, 1)
                progressed = True
        if progressed:
            continue
        # named barriers: `count` threads at the same id
        named: dict[int, list[int]] = {}
        for t in gens:
            req = waiting.get(t, ("",))
            if req[0] == "nbar":
                named.setdefault(int(req[1]), []).append(t)
        for bid, ts in named.items():
            count = int(waiting[ts[0]][2])
            if len(ts) + arrived.get(bid, 0) >= count:
                sync()
                arrived[bid] = arrived.get(bid, 0) - (count - len(ts))
                for t in ts:
                    waiting.pop(t)
                    advance(t, None)
                progressed = True
        if progressed:
            continue
        # warpgroup MMAs: the 128 threads of one warpgroup at one wgmma
        groups: dict[int, list[int]] = {}
        for t in gens:
            if waiting.get(t, ("",))[0] == "wg":
                groups.setdefault(t // 128, []).append(t)
        for gid, ts in groups.items():
            if len(ts) == 128:
                ts = sorted(ts)
                res, parts = _wgmma(waiting[ts[0]][1], [waiting[t][2] for t in ts], mem)
                for reads, outs, committed in parts:
                    rec = wg_open[ts[0]]
                    if rec is None:
                        rec = _Group(gid, len(mem.bufs["smem"]), ts)
                        mem.wgmma_live.append(rec)
                    for r in reads:
                        rec.reads[r] = True
                    for i, t in enumerate(ts):
                        for o in outs:
                            res[i][o] = _Pending(res[i][o], rec, t)
                        if committed:
                            wg_done[t].append(rec)
                            wg_open[t] = None
                        else:
                            wg_open[t] = rec
                for t, v in zip(ts, res, strict=True):
                    waiting.pop(t)
                    advance(t, tuple(v))
                progressed = True
        if progressed:
            continue
        if gens and all(waiting.get(t, ("",))[0] == "bar" for t in gens):
            if len(gens) != T:
                raise Deadlock(f"barrier reached by {len(gens)} of {T} threads (others exited)")
            sync()
            for t in list(gens):
                waiting.pop(t)
                advance(t, None)
            continue
        kinds = sorted({waiting.get(t, ("running",))[0] for t in gens})
        raise Deadlock(f"threads wait at {kinds}")
    # an arrival no sync consumed would complete a later phase early (the
    # hardware's barrier counts arrivals, whoever waits)
    left = {b: n for b, n in arrived.items() if n}
    if left:
        raise Deadlock(f"named barrier arrivals left when the block ended: {left}")


def _halves(word: int, ty: str) -> tuple[float, float]:
    lo, hi = word & 0xFFFF, word >> 16
    if ty == "half":
        return tuple(float(np.array(h, np.uint16).view(np.float16)) for h in (lo, hi))  # type: ignore[return-value]
    return tuple(float(np.array(h << 16, np.uint32).view(np.float32)) for h in (lo, hi))  # type: ignore[return-value]


def _warp_op(name: str, args: list[list[Any]], mem: Memory) -> list[Any]:
    """ldmatrix and mma.sync.m16n8k16 over the 32 lanes' operands (and
    `bar.warp.sync`, which only gathers them)."""
    if name == "llvm.nvvm.bar.warp.sync":
        return [None] * len(args)
    if name in ("llvm.nvvm.vote.all.sync", "llvm.nvvm.vote.any.sync"):  # full mask only
        if any(a[0] & 0xFFFFFFFF != 0xFFFFFFFF for a in args):
            raise Unsupported(f"{name} with a partial mask")
        got = [bool(a[1]) for a in args]
        return [int(all(got) if name.endswith("all.sync") else any(got))] * len(args)
    if name.startswith("llvm.nvvm.ldmatrix.sync.aligned.m8n8."):
        n = int(re.search(r"\.x(\d)", name).group(1))  # type: ignore[union-attr]
        trans = ".trans" in name
        rows = [a[0] for a in args]  # lane t: address of row t % 8 of matrix t // 8
        out = []
        for lane in range(32):
            regs = []
            for i in range(n):
                if trans:
                    # element (r, c) of matrix i lives at row r; lane gets (2q, g), (2q+1, g)
                    g, q = lane // 4, lane % 4
                    e0 = mem.load((rows[8 * i + 2 * q][0], rows[8 * i + 2 * q][1] + 2 * g), "i16")
                    e1 = mem.load((rows[8 * i + 2 * q + 1][0], rows[8 * i + 2 * q + 1][1] + 2 * g), "i16")
                else:
                    g, q = lane // 4, lane % 4
                    base = rows[8 * i + g]
                    e0 = mem.load((base[0], base[1] + 4 * q), "i16")
                    e1 = mem.load((base[0], base[1] + 4 * q + 2), "i16")
                regs.append(e0 | (e1 << 16))
            out.append(tuple(regs))
        return out
    if name.startswith("llvm.nvvm.mma.m16n8k16.row.col."):
        ty = "bfloat" if name.endswith("bf16") else "half"

        def word(x: Any) -> int:
            if isinstance(x, tuple):  # <2 x half>
                return int(np.array(x[0], np.float16).view(np.uint16)) | (int(np.array(x[1], np.float16).view(np.uint16)) << 16)
            return int(x)

        A = np.zeros((16, 16))
        B = np.zeros((16, 8))
        C = np.zeros((16, 8))
        for lane, a in enumerate(args):
            g, q = lane // 4, lane % 4
            w = [word(x) for x in a[:6]]
            for (r, c), x in zip([(g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8), (g + 8, 2 * q + 8)], w[:4], strict=True):
                A[r, c], A[r, c + 1] = _halves(x, ty)
            for k0, x in zip((2 * q, 2 * q + 8), w[4:6], strict=True):
                B[k0, g], B[k0 + 1, g] = _halves(x, ty)
            cs = [float(x) for x in a[6:10]]
            C[g, 2 * q], C[g, 2 * q + 1], C[g + 8, 2 * q], C[g + 8, 2 * q + 1] = cs
        D = (A @ B + C).astype(np.float32)
        out = []
        for lane in range(32):
            g, q = lane // 4, lane % 4
            out.append((D[g, 2 * q], D[g, 2 * q + 1], D[g + 8, 2 * q], D[g + 8, 2 * q + 1]))
        return out
    raise Unsupported(name)


def _atomic(op: str, old: Any, v: Any, ty: str) -> Any:
    if op == "fadd":
        return _FLOATS[ty](old + v) if ty in _FLOATS else _bf16(old + v)
    if op in ("fmax", "fmin"):
        return (max if op == "fmax" else min)(old, v)
    bits = _bits(ty)
    m = (1 << bits) - 1
    so, sv = _signed(int(old), bits), _signed(int(v), bits)
    return {"add": (int(old) + int(v)) & m, "max": max(so, sv) & m, "min": min(so, sv) & m,
            "umax": max(int(old), int(v)), "umin": min(int(old), int(v)),
            "or": int(old) | int(v), "and": int(old) & int(v), "xchg": int(v)}[op]


# ---------------------------------------------------------------- the device
_MEM_NP = {"float": np.float32, "double": np.float64, "half": np.float16, "i8": np.uint8,
           "i16": np.int16, "i32": np.int32, "i64": np.int64}


class SimDevice:
    """Runs Tile IR kernels through the GPU code generator and this simulator."""

    def __init__(self, arch: str = "sm_80", trace: bool = False, trace_records: int = 64, trace_mark: str = "") -> None:
        assert trace_records & (trace_records - 1) == 0, "the ring's capacity is a power of two"
        self.arch = arch
        # the block timeline (`Target.trace`): the ring the kernel writes, kept
        # after `run` in `trace_buffer` (the trace id is 7, `smid` the block's
        # linear index mod 4)
        self.trace = trace
        self.trace_mark = trace_mark  # `Target.trace_mark` (with `trace`)
        self.trace_records = trace_records
        self.trace_buffer = b""
        self.split_records = b""

    def compile(self, kernel: Any, facts: dict[str, Any] | None = None) -> tuple[Program, Any, Any]:
        from tilelang.backend import lower_gpu
        from tilelang.backend.llvm import emit_llvm_text

        gk = lower_gpu(kernel, self.arch, facts)
        text, abi = emit_llvm_text(gk, gk.facts, trace=self.trace, mark=self.trace_mark if self.trace else "")
        return Program(text), abi, gk

    def run(self, kernel: Any, grid: tuple[int, ...], args: list[Any],
            facts: dict[str, Any] | None = None, queue_blocks: int = 3) -> None:
        """Launch on `grid`; tensors (numpy arrays, in the param's dtype) are written back.
        A kernel with a tile queue (or a static walk, `for s in tiles(axis)`)
        runs `queue_blocks` blocks a row along its axis."""
        from tilelang.backend.llvm import mem_ty
        from tilelang.dtypes import DType
        from tilelang.ir import nodes as ir

        if getattr(kernel, "cluster", ()):
            raise Unsupported("thread-block clusters (`#[cluster(..)]`): a cluster's blocks run at once and read "
                              "each other's shared memory, and llsim runs one block at a time")
        if facts is None:  # what the CUDA runtime computes for a launch (buffers here are aligned)
            from tilelang.backend.facts import TensorFacts

            facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in np.asarray(a).shape))
                     for p, a in zip(kernel.params, args, strict=True) if isinstance(p, ir.TensorParam)}
        prog, abi, gk = self.compile(kernel, facts)
        mem = Memory()
        regs: dict[str, Any] = {}
        views = []
        by_name = {p.name: (p, a) for p, a in zip(kernel.params, args, strict=True)}
        params = iter(prog.params)
        for slot in abi.slots:
            ty, reg = next(params)
            if slot.what == "err":
                mem.bufs["err"] = bytearray(4)
                regs[reg] = ("err", 0)
                continue
            if slot.what == "print":
                raise Unsupported("device print")
            if slot.what.startswith(("arrive:", "queue:")):  # `last_block`'s or a queue's counters, zeroed
                axis = int(slot.what.split(":")[1])
                mem.bufs["arrive"] = bytearray(4 * max(1, int(np.prod([g for d, g in enumerate(grid) if d != axis]))))
                regs[reg] = ("arrive", 0)
                continue
            if slot.what == "split":  # a split's counters (codegen/split.py): one a CTA, zeroed
                mem.bufs["split"] = bytearray(4 * max(1, int(np.prod(grid))))
                regs[reg] = ("split", 0)
                continue
            if slot.what.startswith("splitws:"):  # its records, never zeroed: NaN until written
                _, w, t, r = slot.what.split(":")
                mem.bufs["splitws"] = bytearray(b"\xff" * (4 * max(1, int(np.prod(grid))) * int(r) * int(w) * int(t)))
                regs[reg] = ("splitws", 0)
                continue
            p, a = by_name[slot.param]
            if slot.what.startswith("tmap:"):
                _, box, sw = slot.what.split(":")
                dims = [int(x) for x in box.split("x")]
                br, bc = dims[-2:]
                shape = np.asarray(a).shape
                planes = shape[0] if len(shape) == 3 else 1
                regs[reg] = TensorMap(p.name, shape[-2], shape[-1], (br, bc), int(sw), planes=planes)
                continue
            if slot.what == "ptr":
                mt = mem_ty(p.dtype, bool(gk.facts.get(p.name) and gk.facts[p.name].bf16_f32))
                arr = np.asarray(a)
                if mt == "bfloat":
                    raw = bytearray(np.frombuffer(np.asarray(arr, np.float32).tobytes(), np.uint16)[1::2].tobytes())
                elif p.dtype is DType.BOOL:
                    raw = bytearray(np.asarray(arr, np.uint8).tobytes())
                else:
                    raw = bytearray(np.ascontiguousarray(arr, _MEM_NP[mt]).tobytes())
                mem.bufs[p.name] = raw
                regs[reg] = (p.name, 0)
                views.append((p, a, mt))
            elif slot.what.startswith("dim"):
                regs[reg] = int(np.asarray(a).shape[int(slot.what[3:])])
            else:
                v = a
                dt = p.value.dtype
                if slot.kind == "f32":
                    regs[reg] = np.float32(v)
                elif dt is DType.BOOL:
                    regs[reg] = int(bool(v))
                elif dt.is_float:
                    regs[reg] = np.float64(v)
                else:
                    regs[reg] = int(v) & ((1 << dt.bits) - 1)
        mem.bufs["smem"] = bytearray()
        if self.trace:
            from tilelang.backend.codegen import trace as layout

            ring = bytearray(layout.RECORDS + self.trace_records * layout.RECORD)
            ring[layout.HEADER_CAPACITY:layout.HEADER_CAPACITY + 4] = self.trace_records.to_bytes(4, "little")
            mem.bufs["trace"] = ring
            mem.bufs["tilec_trace"] = bytearray(8) + (7 | (self.trace_records - 1) << 32).to_bytes(8, "little")
            mem.pointers[("tilec_trace", 0)] = ("trace", 0)
        queue = abi.queue if abi.queue >= 0 else None
        if queue is not None:  # a tile queue (a static walk): `queue_blocks` blocks a row take the tiles along its axis
            g = [*grid, 1, 1, 1][:3]
            g[queue] = max(1, min(g[queue], queue_blocks))
            grid = tuple(g)
        gx, gy, gz = (*grid, 1, 1)[:3]
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    mem.bufs["smem"] = bytearray(b"\xff" * max(abi.smem_bytes, 16))
                    mem.hazards = _Hazards(len(mem.bufs["smem"]))
                    mem.unfenced = np.full(len(mem.bufs["smem"]), -1, np.int64)
                    mem.bulk_reads = None
                    base = dict(regs)
                    base.update({"$ctaid.x": x, "$ctaid.y": y, "$ctaid.z": z,
                                 "$nctaid.x": gx, "$nctaid.y": gy, "$nctaid.z": gz,
                                 "$smid": ((x * gy + y) * gz + z) % 4})
                    run_block(prog, mem, base, abi.num_threads)
        if self.trace:
            self.trace_buffer = bytes(mem.bufs["trace"])
        if any(mem.bufs.get("arrive", b"")):
            raise AssertionError("a group counter of `last_block` or a queue was not reset to 0")
        if any(mem.bufs.get("split", b"")):
            raise AssertionError("a split's counter was not reset to 0")
        self.split_records = bytes(mem.bufs.get("splitws", b""))  # a split's records (tests count the written)
        err = int.from_bytes(mem.bufs["err"], "little")
        if err:
            raise AssertionError(f"device assert {err} failed: {abi.asserts[err - 1][1]}")
        for p, a, mt in views:
            if not isinstance(p, ir.TensorParam) or not isinstance(a, np.ndarray):
                continue
            raw = bytes(mem.bufs[p.name])
            if mt == "bfloat":
                u = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
                got = u.view(np.float32)
            elif p.dtype is DType.BOOL:
                got = np.frombuffer(raw, np.uint8).astype(bool)
            else:
                got = np.frombuffer(raw, _MEM_NP[mt])
            a[...] = got.reshape(a.shape).astype(a.dtype)


__all__ = ["Deadlock", "Program", "SimDevice", "Unsupported", "run_block"]


def sim_runtime_device(arch: str = "sm_80", out: Callable[[str], None] | None = None) -> Any:
    """A runtime `Device` (the CPU device's buffers) whose kernels run through the
    GPU code generator and this simulator: `tilelang.run.execute` with it runs a
    whole program's launches as the GPU would compute them."""
    from tilelang.backend.facts import TensorFacts
    from tilelang.ir import nodes as ir
    from tilelang.runtime.cpu import CpuDevice

    sim = SimDevice(arch)

    class SimRuntime(CpuDevice):
        name = "sim"

        def run(self, prepared: Any, grid: tuple[int, ...], args: list[Any],
                stream: Any = None, span: Any = None) -> None:
            self.launches += 1
            facts = {}
            for p, a in zip(prepared.params, args, strict=True):
                if isinstance(p, ir.TensorParam):
                    shape = np.asarray(a).shape
                    facts[p.name] = TensorFacts(True, tuple(d % 16 == 0 for d in shape))
            sim.run(prepared, grid, args, facts)

    return SimRuntime(out)


__all__ += ["sim_runtime_device"]
