"""Distributed layouts as the code generator sees them: `view_of(layout, shape, T)`.

A view answers, for one tile value, what each thread holds: `E` slots, in
`K` chunks of `V` slots that are consecutive along the last dim (one vector
access when contiguous in memory); for slot j of chunk k its coordinates
(`slot_coords`), its row-major index in the tile (`flat`, for staging in
shared memory), whether the chunk holds live elements (`chunk_valid`, None
when always), and whether this thread is the one copy of replicated data that
writes it (`owner`, None when there are no replicas).

- `ChunkedView` (layout `Chunked`): the tile flattened row-major, chunk c of
  thread t at flat index `(c * T + t) * V`.
- `BlockedView` (layouts `Blocked` and `Slice`): along each dim d a thread
  holds `s_d` consecutive elements per repetition, at coordinate
  `tp_d + c_d` where `tp_d` depends on the thread only (computed once, in the
  entry block, from its lane and warp digits) and `c_d` is a constant of the
  slot. Dims smaller than the CTA tile are padded to a power of two and the
  threads past it hold replicas; elements past the logical size are masked
  lanes; chunks that are masked for every thread are not slots at all. A
  `Slice(dim, parent)` is the parent with `dim` of size 1, that dim left out of
  the coordinates: every thread along it holds the same values.

Views are plain Python (numbers and tables); methods that need IR values take
the emitter `em` and emit through it (`em.emit` for the current block,
`em.entry_emit` for values every block may use).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from tilelang.backend.gpu.layouts import AccTile, Blocked, Chunked, MmaTile, Slice, next_pow2, strides_of
from tilelang.frozen import frozen

from .accview import AccView, acc_register_map, acc_view


# ------------------------------------------------------------------ chunked
@frozen(eq=True)
class ChunkedView:
    shape: tuple[int, ...]
    T: int
    V: int
    K: int
    numel: int

    @property
    def E(self) -> int:
        return self.K * self.V

    @property
    def full(self) -> bool:
        return self.numel % (self.T * self.V) == 0

    def owner(self, em: Any) -> str | None:
        return None

    def flat(self, em: Any, k: int, j: int) -> str:
        """i32 flat element index of slot (k, j) of this thread."""
        key = (self.V, k, j, self.T)
        got = em._flat_cache.get(key)
        if got is None:
            # Computed in the entry block so every later block may use it. Inside a warp role the thread id is
            # the role's (`tid0`: `%tidv4.r128` in a role of thread 128) and T its threads (`.t128`)
            tid = em.tid0()
            tv = f"%tidv{self.V}{tid[4:]}"
            name = f"%f.{self.V}.{k}.{j}{tid[4:]}" + (f".t{self.T}" if k and self.T != em.k.num_warps * 32 else "")
            em._entry_lines.append(f"  {name} = add i32 {tv}, {(k * self.T) * self.V + j}")
            if tv not in em._tidv:
                em._tidv.add(tv)
                em._entry_lines.insert(0, f"  {tv} = mul i32 {tid}, {self.V}")
            em._flat_cache[key] = name
            got = name
        return got

    def chunk_valid(self, em: Any, k: int) -> str | None:
        """i1: chunk k of this thread holds live elements (None when always)."""
        if self.full or (k + 1) * self.T * self.V <= self.numel:
            return None
        return em.emit(f"icmp ult i32 {self.flat(em, k, 0)}, {self.numel}")

    def slot_coords(self, em: Any, k: int, j: int, valid: str | None = None) -> list[str]:
        """i32 coordinates of this thread's slot (k, j), all 0 on dead lanes when
        `valid` is given (so they can index shared memory safely).

        The flat index is C + u with C = k*T*V a constant and u = tid*V + j. When C
        is a multiple of the dim's period the coordinate depends on u alone and is
        computed once, in the entry block, for every k: large tiles then cost a few
        instructions per slot instead of a division chain each."""
        out = []
        C = k * self.T * self.V
        u = self.flat(em, 0, j)
        cache = em._coord_cache
        for d, (n, s) in enumerate(zip(self.shape, strides_of(self.shape), strict=True)):
            if n == 1:
                out.append("0")
                continue
            if d == 0 and C % s == 0:
                key = (self.V, j, s, -1, C)
                got = cache.get(key)
                if got is None:
                    q = cache.get((self.V, j, s, -1, 0))
                    if q is None:
                        q = u if s == 1 else em.entry_emit(f"udiv i32 {u}, {s}")
                        cache[(self.V, j, s, -1, 0)] = q
                    got = q if C == 0 else em.entry_emit(f"add i32 {q}, {C // s}")
                    cache[key] = got
                out.append(got)
            elif d > 0 and C % (s * n) == 0:
                key = (self.V, j, s, n, 0)
                got = cache.get(key)
                if got is None:
                    q = u if s == 1 else em.entry_emit(f"udiv i32 {u}, {s}")
                    got = em.entry_emit(f"urem i32 {q}, {n}")
                    cache[key] = got
                out.append(got)
            else:
                f = self.flat(em, k, j)
                q = f if s == 1 else em.emit(f"udiv i32 {f}, {s}")
                out.append(q if d == 0 else em.emit(f"urem i32 {q}, {n}"))
        if valid is not None:
            out = [c if c == "0" else em.emit(f"select i1 {valid}, i32 {c}, i32 0") for c in out]
        return out


def chunked_view(shape: tuple[int, ...], T: int, vec: int | None = None) -> ChunkedView:
    n = math.prod(shape)
    last = shape[-1] if shape else 1
    V = vec if vec is not None else 4 if last % 4 == 0 else 2 if last % 2 == 0 else 1
    return ChunkedView(tuple(shape), T, V, -(-n // (T * V)), n)


# ------------------------------------------------------------------ blocked
@frozen(eq=True)
class DimMap:
    """How one dim of a blocked layout maps to the threads."""

    size: int  # logical size S
    s: int  # consecutive elements per thread per repetition
    tpw: int
    wpc: int
    lshift: int  # bit offset of this dim's digit in the lane id
    wshift: int  # ... and in the warp id
    extent: int  # X: padded size (replicated dims) or reps * cov
    reps: int
    repl: bool  # threads whose position is past `extent` hold replicas

    @property
    def cov(self) -> int:
        return self.s * self.tpw * self.wpc

    @property
    def positions(self) -> int:
        """Distinct thread positions along this dim (the rest are replicas)."""
        return max(1, min(self.tpw * self.wpc, self.extent // self.s))

    @property
    def lanes(self) -> int:
        """Distinct lane positions along this dim inside a warp."""
        return max(1, min(self.tpw, self.extent // self.s))

    @property
    def warps(self) -> int:
        """Distinct warp positions along this dim."""
        return max(1, min(self.wpc, self.extent // (self.s * self.tpw)))

    def key(self) -> tuple[int, ...]:
        return (self.s, self.tpw, self.wpc, self.lshift, self.wshift, self.extent, int(self.repl))


def _dim_maps(lay: Blocked, full: tuple[int, ...]) -> tuple[DimMap, ...]:
    r = len(full)
    assert len(lay.size_per_thread) == r, (lay, full)
    lsh, wsh = [0] * r, [0] * r
    acc_l = acc_w = 0
    for d in lay.order:
        lsh[d], wsh[d] = acc_l, acc_w
        acc_l += lay.threads_per_warp[d].bit_length() - 1
        acc_w += lay.warps_per_cta[d].bit_length() - 1
    out = []
    for d in range(r):
        S = max(1, full[d])
        spt, tpw, wpc = lay.size_per_thread[d], lay.threads_per_warp[d], lay.warps_per_cta[d]
        cov = spt * tpw * wpc
        if cov <= S:
            reps = -(-S // cov)
            out.append(DimMap(S, spt, tpw, wpc, lsh[d], wsh[d], reps * cov, reps, False))
        else:
            X = next_pow2(S)
            s = min(spt, X)
            out.append(DimMap(S, s, tpw, wpc, lsh[d], wsh[d], X, 1, s * tpw * wpc > X))
    return tuple(out)


_TID = {"lane": "and i32 {}, 31", "warp": "lshr i32 {}, 5"}


def _tid_field(em: Any, kind: str, count: int, shift: int) -> str:
    """i32: `count` values (a power of two) of this thread's lane or warp index
    (`kind`) from bit `shift` up, emitted anew in the entry block."""
    base = em.entry_emit(_TID[kind].format(em.tid0()))
    sh = em.entry_emit(f"lshr i32 {base}, {shift}") if shift else base
    return em.entry_emit(f"and i32 {sh}, {count - 1}")  # type: ignore[no-any-return]


def _tid_digit(em: Any, kind: str, count: int, shift: int) -> str:
    """`_tid_field`, emitted once a kernel ("0" where `count` is 1)."""
    if count == 1:
        return "0"
    key = (kind, count, shift)
    got = em._coord_cache.get(key)
    if got is None:
        got = em._coord_cache[key] = _tid_field(em, kind, count, shift)
    return got  # type: ignore[no-any-return]


@frozen(eq=True)
class BlockedView:
    layout: Blocked
    full: tuple[int, ...]  # the shape in the layout's rank (a Slice's dim has size 1)
    drop: int | None  # the Slice's dim (left out of the coordinates), or None
    T: int
    dims: tuple[DimMap, ...]
    slots: tuple[tuple[int, ...], ...]  # the constant part of each slot's coordinates (full rank)
    V: int

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(n for d, n in enumerate(self.full) if d != self.drop)

    @property
    def E(self) -> int:
        return len(self.slots)

    @property
    def K(self) -> int:
        return len(self.slots) // self.V

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def full_tiles(self) -> bool:
        return all(m.extent == m.size for m in self.dims)

    def key(self) -> tuple[Any, ...]:
        return tuple(m.key() for m in self.dims)

    # -- thread geometry (entry block, cached on the emitter) ---------------------
    def _digit(self, em: Any, d: int) -> tuple[str, str]:
        """(raw position * s, position-in-extent * s) of this thread along dim d."""
        m = self.dims[d]
        key = ("bpos", *m.key())
        got = em._coord_cache.get(key)
        if got is not None:
            return got  # type: ignore[no-any-return]
        if m.tpw * m.wpc == 1:
            got = ("0", "0")
        else:
            parts = []
            if m.tpw > 1:
                parts.append(_tid_field(em, "lane", m.tpw, m.lshift))
            if m.wpc > 1:
                w = _tid_field(em, "warp", m.wpc, m.wshift)
                if m.tpw > 1:
                    w = em.entry_emit(f"shl i32 {w}, {m.tpw.bit_length() - 1}")
                parts.append(w)
            pos = parts[0] if len(parts) == 1 else em.entry_emit(f"or i32 {parts[0]}, {parts[1]}")
            raw = pos if m.s == 1 else em.entry_emit(f"shl i32 {pos}, {m.s.bit_length() - 1}")
            tp = em.entry_emit(f"and i32 {raw}, {m.extent - 1}") if m.repl else raw
            if m.extent == 1:
                tp = "0"
            got = (raw, tp)
        em._coord_cache[key] = got
        return got

    def tp(self, em: Any, d: int) -> str:
        return self._digit(em, d)[1]

    def raw(self, em: Any, d: int) -> str:
        """i32: this thread's position along dim d before replicas wrap it (a copy's index: `raw / extent`)."""
        return self._digit(em, d)[0]

    def lane_digit(self, em: Any, d: int) -> str:
        """i32: this thread's lane digit along dim d (0 .. tpw - 1)."""
        m = self.dims[d]
        return _tid_digit(em, "lane", m.tpw, m.lshift)

    def warp_digit(self, em: Any, d: int) -> str:
        """i32: this thread's warp digit along dim d (0 .. wpc - 1)."""
        m = self.dims[d]
        return _tid_digit(em, "warp", m.wpc, m.wshift)

    def live_or(self, em: Any, slots: list[str], i: int, ty: str, ident: str) -> str:
        """Slot i's value (of LLVM type `ty`), `ident` where its chunk holds no
        live element: what a reduction or scan folds."""
        valid = self.chunk_valid(em, i // self.V)
        if valid is None:
            return slots[i]
        return em.emit(f"select i1 {valid}, {ty} {slots[i]}, {ty} {ident}")  # type: ignore[no-any-return]

    def owner(self, em: Any, skip: int | None = None) -> str | None:
        """i1: this thread holds the first copy of its data (None: no replicas).
        `skip`: a dim whose replicas the caller handles itself."""
        conds = []
        for d, m in enumerate(self.dims):
            if not m.repl or d == skip:
                continue
            raw, _ = self._digit(em, d)
            key = ("own", d, *m.key())
            got = em._coord_cache.get(key)
            if got is None:
                got = em.entry_emit(f"icmp ult i32 {raw}, {m.extent}")
                em._coord_cache[key] = got
            conds.append(got)
        return em.and_all(conds)

    # -- slots ---------------------------------------------------------------------
    def _ragged(self, d: int) -> bool:
        return self.dims[d].extent != self.dims[d].size

    def chunk_valid(self, em: Any, k: int) -> str | None:
        c = self.slots[k * self.V]
        conds = []
        for d, m in enumerate(self.dims):
            if not self._ragged(d):
                continue
            last = (self.V - 1) if d == len(self.dims) - 1 else 0
            if c[d] + (m.positions - 1) * m.s + last < m.size:
                continue  # live for every thread
            conds.append(em.emit(f"icmp ult i32 {self.tp(em, d)}, {m.size - c[d]}"))
        return em.and_all(conds)

    def full_coords(self, em: Any, k: int, j: int) -> list[str]:
        c = self.slots[k * self.V + j]
        out = []
        for d in range(len(self.dims)):
            tp = self.tp(em, d)
            if tp == "0":
                out.append(str(c[d]))
            elif c[d] == 0:
                out.append(tp)
            else:
                out.append(em.emit(f"add i32 {tp}, {c[d]}"))
        return out

    def slot_coords(self, em: Any, k: int, j: int, valid: str | None = None) -> list[str]:
        out = [x for d, x in enumerate(self.full_coords(em, k, j)) if d != self.drop]
        if valid is not None:
            out = [x if x == "0" else em.emit(f"select i1 {valid}, i32 {x}, i32 0") for x in out]
        return out

    def flat(self, em: Any, k: int, j: int) -> str:
        """i32 row-major index of slot (k, j) in the tile (out of range on masked lanes)."""
        st = strides_of(self.shape)
        dims = [d for d in range(len(self.dims)) if d != self.drop]
        key = ("bflat", *self.key(), self.drop if self.drop is not None else -1, self.full)
        base = em._coord_cache.get(key)
        if base is None:
            base = "0"
            for d, stride in zip(dims, st, strict=True):
                tp = self.tp(em, d)
                if tp == "0":
                    continue
                term = tp if stride == 1 else em.entry_emit(f"mul i32 {tp}, {stride}")
                base = term if base == "0" else em.entry_emit(f"add i32 {base}, {term}")
            em._coord_cache[key] = base
        c = self.slots[k * self.V + j]
        off = sum(c[d] * stride for d, stride in zip(dims, st, strict=True))
        if base == "0":
            return str(off)
        return base if off == 0 else em.emit(f"add i32 {base}, {off}")

    def slot_of(self, const: tuple[int, ...]) -> int:
        """The slot whose constant coordinates are `const` (full rank)."""
        return self._index()[const]

    def _index(self) -> dict[tuple[int, ...], int]:
        return _slot_index(self)


_INDEX_CACHE: dict[int, dict[tuple[int, ...], int]] = {}


def _slot_index(v: BlockedView) -> dict[tuple[int, ...], int]:
    key = id(v.slots)
    got = _INDEX_CACHE.get(key)
    if got is None or len(got) != len(v.slots):
        got = {c: i for i, c in enumerate(v.slots)}
        _INDEX_CACHE[key] = got
    return got


def blocked_view(lay: Blocked | Slice, shape: tuple[int, ...], T: int, itemsize: int = 4) -> BlockedView:
    if isinstance(lay, Slice):
        full = list(shape)
        full.insert(lay.dim, 1)
        parent, drop = lay.parent, lay.dim
    else:
        full, parent, drop = list(shape), lay, None
    return _blocked_view(parent, tuple(full), drop, T, itemsize)


_VIEW_CACHE: dict[tuple[Any, ...], BlockedView] = {}


def _blocked_view(lay: Blocked, full: tuple[int, ...], drop: int | None, T: int, itemsize: int) -> BlockedView:
    key = (lay, full, drop, T, itemsize)
    got = _VIEW_CACHE.get(key)
    if got is not None:
        return got
    dims = _dim_maps(lay, full)
    r = len(full)
    last = dims[-1]
    V = last.s if drop != r - 1 else 1
    cap = max(1, 16 // max(1, itemsize))
    while cap < V:
        V //= 2
    per_dim = [[rep * m.cov + e for rep in range(m.reps) for e in range(m.s)] for m in dims]
    slots = []
    for c in itertools.product(*per_dim):
        # whole chunks only: the chunk's first slot decides (chunks never straddle the edge)
        if any(c[d] >= m.size for d, m in enumerate(dims)):
            continue
        slots.append(tuple(c))
    # keep chunks whole: a chunk is V consecutive slots along the last dim. A layout
    # made for another shape (a [1, 1] row max broadcast to [1, 3] keeps its 4-wide
    # vectors) leaves a thread fewer slots along a last dim that is not a multiple of
    # V: narrower chunks then (every access goes through the view's V)
    along_last = sum(1 for c in per_dim[-1] if c < last.size)
    while V > 1 and along_last % V:
        V //= 2
    # ... and along a last dim the layout covers past its size, the chunk of the thread whose
    # position reaches the size would straddle it (size 5 in 4-wide chunks: columns 4..7, of
    # which only 4 is live; `chunk_valid` reads a chunk's first slot): chunks that divide it
    if last.extent != last.size and drop != r - 1:
        while V > 1 and last.size % V:
            V //= 2
    assert len(slots) % V == 0, (lay, full, V)
    view = BlockedView(lay, full, drop, T, dims, tuple(slots), V)
    _VIEW_CACHE[key] = view
    return view


# ------------------------------------------------------------------ mma.sync tiles
@frozen(eq=True)
class MmaTileView:
    """`MmaTile`: warp (wm, wn) holds its block's 16x8 tiles; slot (mi, ni, h, j)
    of lane l is at (wm*WM + 16 mi + l/4 + 8h, wn*WN + 8 ni + 2(l%4) + j). Every
    slot is live (the block divides into whole tiles); two columns per chunk.
    `split16`: slot (mi, p, h, c) at (.. + 16 mi + l/4 + 8h, .. + 16 p + 4(l%4) + c)."""

    layout: MmaTile
    shape: tuple[int, ...]
    T: int
    slots: tuple[tuple[int, int], ...]  # constant part (row, col) of each slot

    V = 2

    @property
    def WM(self) -> int:
        return self.shape[0] // self.layout.warps_m

    @property
    def WN(self) -> int:
        return self.shape[1] // self.layout.warps_n

    @property
    def E(self) -> int:
        return len(self.slots)

    @property
    def K(self) -> int:
        return len(self.slots) // 2

    @property
    def numel(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def full(self) -> bool:
        return True

    def owner(self, em: Any) -> str | None:
        return None

    def chunk_valid(self, em: Any, k: int) -> str | None:
        return None

    def base(self, em: Any) -> tuple[str, str]:
        """(row, col) of this thread's slot (0, 0, 0, 0), in the entry block."""
        key = ("mmatile", self.layout, self.shape)
        got = em._coord_cache.get(key)
        if got is None:
            lt = em.entry_emit(f"and i32 {em.tid0()}, 31")
            w = em.entry_emit(f"lshr i32 {em.tid0()}, 5")
            wn = self.layout.warps_n
            wm_i = em.entry_emit(f"udiv i32 {w}, {wn}")
            wn_i = em.entry_emit(f"urem i32 {w}, {wn}")
            g = em.entry_emit(f"lshr i32 {lt}, 2")
            q2 = em.entry_emit(f"shl i32 {em.entry_emit(f'and i32 {lt}, 3')}, {2 if self.layout.split16 else 1}")
            row = em.entry_emit(f"add i32 {em.entry_emit(f'mul i32 {wm_i}, {self.WM}')}, {g}")
            col = em.entry_emit(f"add i32 {em.entry_emit(f'mul i32 {wn_i}, {self.WN}')}, {q2}")
            got = (row, col)
            em._coord_cache[key] = got
        return got  # type: ignore[no-any-return]

    def slot_coords(self, em: Any, k: int, j: int, valid: str | None = None) -> list[str]:
        r0, c0 = self.base(em)
        cr, cc = self.slots[k * 2 + j]
        return [r0 if cr == 0 else em.emit(f"add i32 {r0}, {cr}"), c0 if cc == 0 else em.emit(f"add i32 {c0}, {cc}")]

    def flat(self, em: Any, k: int, j: int) -> str:
        r, c = self.slot_coords(em, k, j)
        return em.emit(f"add i32 {em.emit(f'mul i32 {r}, {self.shape[1]}')}, {c}")


def mma_tile_view(lay: MmaTile, shape: tuple[int, ...], T: int) -> MmaTileView:
    M, N = shape
    WM, WN = M // lay.warps_m, N // lay.warps_n
    assert WM % 16 == 0 and WN % 8 == 0 and lay.warps_m * lay.warps_n * 32 == T, (lay, shape, T)
    if lay.split16:  # (mi, p, h, c): 4 consecutive columns of each 16-column group (see `MmaTile`)
        assert WN % 16 == 0, (lay, shape)
        slots = tuple((16 * mi + 8 * h, 16 * p + c) for mi in range(WM // 16) for p in range(WN // 16)
                      for h in range(2) for c in range(4))
        return MmaTileView(lay, tuple(shape), T, slots)
    slots = tuple((16 * mi + 8 * h, 8 * ni + j) for mi in range(WM // 16) for ni in range(WN // 8)
                  for h in range(2) for j in range(2))
    return MmaTileView(lay, tuple(shape), T, slots)


def view_of(layout: object, shape: tuple[int, ...], T: int, itemsize: int = 4) -> Any:
    """The view of a value of `shape` in `layout` (None: the generic chunked layout)."""
    if isinstance(layout, AccTile) or (isinstance(layout, Slice) and isinstance(layout.parent, AccTile)):
        return acc_view(layout, shape)
    if isinstance(layout, MmaTile):
        return mma_tile_view(layout, shape, T)
    if isinstance(layout, Blocked | Slice):
        return blocked_view(layout, shape, T, itemsize)
    if isinstance(layout, Chunked):
        return chunked_view(shape, layout.threads, layout.vec)
    return chunked_view(shape, T)


View = ChunkedView | BlockedView | MmaTileView | AccView


def register_map(src: View, dst: View, align: list[int | None]) -> list[int] | None:
    """For each slot of `dst`, the slot of `src` that holds the same element in the
    same thread, or None when some element would have to move between threads.

    `align[i]` is the dim of `src` that dim i of `dst` reads (None: a dim `src`
    broadcasts, read at coordinate 0); dims of `src` that nothing reads must
    have size 1. Two views agree on a dim when it maps to the threads the same
    way (same `DimMap`), so a broadcast of a reduction's result, a reshape that
    adds or drops size-1 dims and a conversion between equal placements move
    nothing."""
    if isinstance(src, AccView) or isinstance(dst, AccView):
        if isinstance(src, AccView) and isinstance(dst, AccView):
            return acc_register_map(src, dst, align)
        return None
    if isinstance(src, MmaTileView) or isinstance(dst, MmaTileView):
        return list(range(dst.E)) if src == dst else None
    if isinstance(src, ChunkedView) or isinstance(dst, ChunkedView):
        same = (isinstance(src, ChunkedView) and isinstance(dst, ChunkedView) and src.V == dst.V
                and src.K == dst.K and src.T == dst.T and src.numel == dst.numel
                and align == list(range(len(dst.shape))) and src.shape == dst.shape)
        return list(range(dst.E)) if same else None
    sf = [d for d in range(len(src.dims)) if d != src.drop]
    df = [d for d in range(len(dst.dims)) if d != dst.drop]
    used = {j for j in align if j is not None}
    for j, f in enumerate(sf):
        if j not in used and src.dims[f].size != 1:
            return None
    for i, j in enumerate(align):
        if j is None:
            continue
        a, b = src.dims[sf[j]], dst.dims[df[i]]
        if a.key() != b.key() or a.size != b.size:
            return None
    index = src._index()
    out = []
    for c in dst.slots:
        want = [0] * len(src.dims)
        for i, j in enumerate(align):
            if j is not None:
                want[sf[j]] = c[df[i]]
        got = index.get(tuple(want))
        if got is None:
            return None
        out.append(got)
    return out

def _thread_pos(v: BlockedView, t: int) -> list[int]:
    """Thread t's position along each dim of `v` (full rank): the `tp` that
    `BlockedView._digit` computes on the device, here in Python."""
    lane, warp = t & 31, t >> 5
    out = []
    for m in v.dims:
        pos = ((lane >> m.lshift) & (m.tpw - 1)) | (((warp >> m.wshift) & (m.wpc - 1)) << (m.tpw.bit_length() - 1))
        raw = pos * m.s
        out.append(0 if m.extent == 1 else raw & (m.extent - 1) if m.repl else raw)
    return out


_RESHAPE_CACHE: dict[tuple[Any, ...], list[int] | None] = {}


def reshape_register_map(src: View, dst: View) -> list[int] | None:
    """For a reshape (row-major, any split or merge of dims) from `src` to
    `dst`: for each slot of `dst`, the slot of `src` that holds the same
    element in the same thread, for every thread; None when some element
    would move between threads or the slot differs between threads (the
    code is the same for all). Checked thread by thread (a few thousand
    slots a tile), once per pair of views."""
    if not isinstance(src, BlockedView) or not isinstance(dst, BlockedView) or src.T != dst.T:
        return None
    key = (src.layout, src.full, src.drop, dst.layout, dst.full, dst.drop, src.T)
    if key in _RESHAPE_CACHE:
        return _RESHAPE_CACHE[key]
    sshape = src.shape
    sst, dst_st = strides_of(sshape), strides_of(dst.shape)
    sfull = [d for d in range(len(src.dims)) if d != src.drop]

    def source(coords: list[int], tps: list[int]) -> tuple[int, ...]:  # the same row-major element
        flat = sum(x * st for x, st in zip(coords, dst_st, strict=True))
        want = [0] * len(src.dims)
        for d, n, st in zip(sfull, sshape, sst, strict=True):
            want[d] = (flat // st) % n - tps[d]
        return tuple(want)

    out = _same_thread_map(src, dst, source)
    _RESHAPE_CACHE[key] = out
    return out


def _same_thread_map(src: BlockedView, dst: BlockedView, source: Any) -> list[int] | None:
    """For each slot of `dst`, the slot of `src` holding, in the same thread,
    the element `source` names (`source(coords, tps)`: the key of src's slot
    index for the element at `dst`'s full coordinates, relative to the
    thread's position `tps` in src), the same slot in every thread; None where some thread
    would read another's, or a slot no thread holds live (masked lanes skipped)."""
    dfull = [d for d in range(len(dst.dims)) if d != dst.drop]
    dshape = dst.shape
    out: list[int] = [-1] * dst.E
    index = src._index()
    for t in range(src.T):
        tps, tpd = _thread_pos(src, t), _thread_pos(dst, t)
        for i, c in enumerate(dst.slots):
            coords = [tpd[d] + c[d] for d in dfull]
            if any(x >= n for x, n in zip(coords, dshape, strict=True)):
                continue  # a masked lane of this thread: nothing to hold
            j = index.get(source(coords, tps))
            if j is None or out[i] not in (-1, j):
                return None
            out[i] = j
    return None if -1 in out else out


_THREAD_CACHE: dict[tuple[Any, ...], list[int] | None] = {}


def thread_register_map(src: View, dst: View, align: list[int | None]) -> list[int] | None:
    """`register_map` checked thread by thread (as `reshape_register_map`
    does): for each slot of `dst`, the slot of `src` holding the element it
    reads (through `align`) in the same thread, the same slot in every
    thread; None where some thread would read another's. Finds the maps
    `register_map`'s per-dim comparison misses: two blocked layouts that
    differ only in threads that hold replicas (a [1, 1, 64] row whose lanes
    wrap around it against one whose lanes also span a size-1 dim). Used
    with `TILEC_REPLICATE_SMALL` (`layouts.replicate_bound`)."""
    if not isinstance(src, BlockedView) or not isinstance(dst, BlockedView) or src.T != dst.T:
        return None
    key = (src.layout, src.full, src.drop, dst.layout, dst.full, dst.drop, src.T, tuple(align))
    if key in _THREAD_CACHE:
        return _THREAD_CACHE[key]
    sfull = [d for d in range(len(src.dims)) if d != src.drop]

    def source(coords: list[int], tps: list[int]) -> tuple[int, ...]:  # the element `align` reads
        want = [0] * len(src.dims)
        for di, j in enumerate(align):
            if j is not None:
                want[sfull[j]] = coords[di]
        return tuple(w - p for w, p in zip(want, tps, strict=True))

    out = _same_thread_map(src, dst, source)
    _THREAD_CACHE[key] = out
    return out


__all__ = [
    "BlockedView",
    "ChunkedView",
    "DimMap",
    "MmaTileView",
    "View",
    "blocked_view",
    "chunked_view",
    "mma_tile_view",
    "register_map",
    "reshape_register_map",
    "strides_of",
    "thread_register_map",
    "view_of",
]
