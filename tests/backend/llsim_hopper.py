"""llsim's Hopper parts (tests only): tensor maps and TMA copies, mbarriers,
the hazards of asynchronous copies into shared memory, and wgmma."""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from llsim_values import Memory, Race, Unsupported, _signed


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
    and wgmma have their own checks (`Memory.guard`, `guard_wgmma`).

    Until an epoch's first write, its reads are only noted (`pending`, in
    order): with no write in the epoch a read races with nothing, and what
    they record matters only to a later write of the same epoch; the first
    write records them, in their order, before its own check. An epoch with
    no write (the reads of what the last barrier published) never records
    its reads byte by byte. The same lists and errors as recording each read
    at once."""

    def __init__(self, nbytes: int) -> None:
        # Python lists, not arrays: an access is a few bytes, and a list
        # slice's `in` and assignment cost a fraction of NumPy's per-call work
        self.epoch = 0
        self.w_ep = [-1] * nbytes  # epoch of each byte's last write
        self.w_t = [0] * nbytes  # and its thread
        self.r_ep = [-1] * nbytes  # epoch of its last reads
        self.r_t = [0] * nbytes  # the reading thread, -2 for several
        self.pending: list[tuple[int, int, int]] | None = []  # this epoch's reads, before its first write

    def sync(self) -> None:
        self.epoch += 1
        self.pending = []

    def access(self, t: int, off: int, n: int, write: bool) -> None:
        pending = self.pending
        if pending is not None:
            if not write:
                pending.append((t, off, n))
                return
            self.pending = None  # the epoch's first write: its reads recorded first
            for rt, roff, rn in pending:
                self._access(rt, roff, rn, False)
        self._access(t, off, n, write)

    def _access(self, t: int, off: int, n: int, write: bool) -> None:
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


class _GlobalHazards:
    """Racecheck for a block's ordinary loads and stores of its kernel's
    tensors (global memory): a byte one thread of the block stored and
    another thread loads or stores with no block synchronisation between
    them is a race (the CUDA memory model gives it no order: the interpreter
    runs a block's statements in order, so `z.store(a); z.load()` in two
    layouts would read stale data on a GPU). Reads by several threads are
    fine. Sparse (only the bytes touched), one epoch counter with the
    block's `_Hazards`; other blocks are not compared (their tiles are
    disjoint by construction, the sanitizer's business). A tensor's loads
    before its first store of the epoch are only noted (`pending`), as
    `_Hazards` does: a tensor the block only reads never records its bytes."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.epoch = 0
        # this epoch's accesses, per tensor (an older epoch's never race, so a
        # synchronisation forgets them): byte -> the thread of its last store;
        # byte -> the thread that loaded it, -2 for several
        self.writes: dict[str, dict[int, int]] = {k: {} for k in names}
        self.reads: dict[str, dict[int, int]] = {k: {} for k in names}
        # per tensor, its loads of the epoch (in order) while it has had no store (None after one)
        self.pending: dict[str, list[tuple[int, int, int]] | None] = {k: [] for k in names}

    def sync(self) -> None:
        self.epoch += 1
        pending = self.pending
        for k, noted in pending.items():  # (a tensor's dicts hold bytes only once it has had a store)
            if noted is None:
                self.writes[k].clear()
                self.reads[k].clear()
                pending[k] = []
            elif noted:
                pending[k] = []

    def access(self, t: int, key: str, off: int, n: int, write: bool) -> None:
        pending = self.pending[key]
        if pending is not None:
            if not write:
                pending.append((t, off, n))
                return
            self.pending[key] = None  # the tensor's first store of the epoch: its loads recorded first
            for rt, roff, rn in pending:
                self._access(rt, key, roff, rn, False)
        self._access(t, key, off, n, write)

    def _access(self, t: int, key: str, off: int, n: int, write: bool) -> None:
        writes, reads = self.writes[key], self.reads[key]
        if not write:  # a load races only with another thread's store: the bytes in order, then the loads noted
            if writes:
                for b in range(off, off + n):
                    w = writes.get(b)
                    if w is not None and w != t:
                        raise Race(f"thread {t} loads byte {b} of tensor `{key}` that thread {w} stored with no "
                                   "barrier between them")
            for b in range(off, off + n):
                r = reads.get(b)
                reads[b] = t if r is None or r == t else -2
            return
        for b in range(off, off + n):
            w = writes.get(b)
            if w is not None and w != t:
                raise Race(f"thread {t} stores byte {b} of tensor `{key}` that thread {w} stored with no barrier "
                           "between them")
            r = reads.get(b)
            if r is not None and r != t:
                who = "several threads" if r == -2 else f"thread {r}"
                raise Race(f"thread {t} stores byte {b} of tensor `{key}` that {who} loaded with no "
                           "barrier between them")
            writes[b] = t


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


def _tma_guard(mem: Memory, dst: tuple[Any, int], tm: TensorMap) -> np.ndarray:
    """The swizzled shared-memory addresses [rows, cols] a TMA copy of one box
    to `dst` writes (each an element's first byte), checked against the live
    wgmmas' and TMA stores' reads (a Race)."""
    br, bc = tm.box
    i, j = np.meshgrid(np.arange(br), np.arange(bc), indexing="ij")
    addr = _swz(dst[1] + i * tm.swizzle + j * 2, tm.swizzle)
    if mem.wgmma_live:
        mem.guard_wgmma(addr.ravel(), "a TMA copy")
    if mem.bulk_live:
        mem.guard_bulk(np.concatenate([addr.ravel(), addr.ravel() + 1]), "a TMA copy")
    return addr  # type: ignore[no-any-return]


def _tma(mem: Memory, bars: dict[Any, _Barrier], dst: tuple[Any, int], bar: tuple[Any, int], tm: TensorMap,
         c0: int, c1: int, c2: int = 0) -> None:
    """Copy one box (zero outside the tensor) into swizzled shared memory; complete its bytes."""
    c0, c1, c2 = _signed(int(c0), 32), _signed(int(c1), 32), _signed(int(c2), 32)
    # (a view, not a copy: a box is read at once, and a `huge_array` tensor of 4 GiB would be copied a box)
    whole = np.frombuffer(mem.bufs[tm.key], np.uint16).reshape(tm.planes, tm.rows, tm.cols)
    src = whole[c2] if 0 <= c2 < tm.planes else np.zeros((tm.rows, tm.cols), np.uint16)
    br, bc = tm.box
    box = np.zeros((br, bc), np.uint16)
    r0, r1 = max(0, c1), min(tm.rows, c1 + br)
    q0, q1 = max(0, c0), min(tm.cols, c0 + bc)
    if r0 < r1 and q0 < q1:
        box[r0 - c1:r1 - c1, q0 - c0:q1 - c0] = src[r0:r1, q0:q1]
    sm = mem.bufs[dst[0]]
    addr = _tma_guard(mem, dst, tm)
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

    __slots__ = ("rec", "t", "value")

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


_FLOAT_TYPES = frozenset({float, np.float32, np.float64, np.float16})  # what `float(v)` converts exactly


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
    args = [[x.value if type(x) is _Pending else x for x in a] for a in args]  # the values
    out = [a[:nout] for a in args]  # (each thread's outputs, a new list: `args` has the warpgroup's 128)
    sm = bytes(mem.bufs["$smem"])
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
        lo = outs[0]
        run = outs == list(range(lo, lo + len(outs)))  # (consecutive outputs, the usual: one slice a thread)
        for o_t, vals in zip(out, acc.astype(np.float32)[rows, cols], strict=True):  # np.float32 elements
            if run:
                o_t[lo:lo + len(outs)] = list(vals)
                continue
            for o, v in zip(outs, list(vals), strict=True):
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
            take = operator.itemgetter(*outs) if len(outs) > 1 else lambda a, o=outs[0]: (a[o],)
            vals = [take(a) for a in args]
            if _FLOAT_TYPES.issuperset(map(type, itertools.chain.from_iterable(vals))):
                # (NumPy converts each float to f64 exactly, as `float` does; from one flat sequence, in 2/3 the
                # time of the nested one's)
                acc[rows, cols] = np.fromiter(itertools.chain.from_iterable(vals), np.float64,
                                              len(vals) * len(outs)).reshape(len(vals), len(outs))
            else:
                acc[rows, cols] = [[0.0 if v is None or isinstance(v, str) else float(v) for v in a] for a in vals]
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
    if mem.unfenced is not None:  # the async proxy reads what a thread wrote only after that thread's fence
        every = [a for rs, _, _ in groups for a in rs]
        if every:
            addr = np.concatenate(every)
            w = mem.unfenced[addr]
            if (w >= 0).any():
                raise Race(f"a wgmma reads smem+{int(addr[np.argmax(w >= 0)])} that thread {int(w.max())} wrote "
                           "with no fence.proxy.async after it")
    return out, groups
