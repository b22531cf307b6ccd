"""Layouts: which thread (or which shared-memory byte) holds which tile element.

Every tile value of GPU IR carries one layout (`GpuKernel.layouts`, keyed by
value id); scalars are uniform (every thread holds the same value) and carry
none. A layout is a frozen dataclass; `str()` is its text in the GPU IR
printer (`#name<...>`).

Distributed layouts (registers):

- `Chunked(vec, threads)`: the generic layout. The tile is flattened
  row-major; thread t holds chunks of `vec` consecutive elements, chunk c of
  thread t starting at flat index `(c * threads + t) * vec`. One chunk is one
  vector access when it is contiguous in memory. Element-wise code is
  registers only; the code generator stages anything that moves data between
  threads through shared memory.
- `Blocked(size_per_thread, threads_per_warp, warps_per_cta, order)`:
  Triton's blocked layout (a CTA tile of `spt * tpw * wpc` elements per dim,
  repeated to cover the shape; `order` lists dims fastest first). It applies
  to any shape of its rank: a dim of size S at least the CTA tile is covered
  by ceil(S / tile) repetitions (the last one masked where S is not a
  multiple); a smaller dim is padded to the next power of two P, and threads
  whose position along it is past P hold copies (replicas) of the ones
  before. Elements at coordinates past S are masked lanes: they are never
  loaded, stored or combined into a reduction. `blocked_for` chooses the
  layout of a shape (coalesced 16-byte accesses along the last dim).
- `Slice(dim, parent)`: the layout of a reduction's result along `dim` of a
  `parent`-laid-out tile: every thread holds the values of the rows it held
  in the parent (replicated across the threads along `dim`), so broadcasting
  it back (`reshape` to a size-1 dim, then `broadcast`) moves no data.
- replicated (`replicated_for`, a `Blocked` whose `spt` covers the whole
  shape): every thread holds every element of a small tile. A reduction
  ends in an all-gather to give it; a broadcast, a reshape, an element-wise
  op or a conversion to any other layout reads it from registers (a select
  over its few values where a thread's coordinate is known only at run
  time); a store writes each element once (its first copy, thread 0).
  Opt-in: `TILEC_REPLICATE_SMALL` (`passes/layout_assign.py`).
- `MmaAcc(warps)`: the accumulator of `mma.sync.m16n8k16` spread over the
  CTA: warp w owns the 16x8 tiles w, w + W, ... (row-major over the tiles);
  in a tile, lane l holds (l/4, 2(l%4) + {0,1}) and the same at row + 8.
- `WgmmaAcc(warpgroups, m_per_group, instr_n)`: the accumulator of
  `wgmma.mma_async.m64nNk16`: warpgroup g owns rows
  `[g * m_per_group, (g + 1) * m_per_group)` (m64 blocks, one after the
  other); in an m64 block, warp w of the group owns rows 16w .. 16w + 15, and
  lane l holds d[4i + {0,1}] at (16w + l/4, 8i + 2(l%4) + {0,1}) and
  d[4i + {2,3}] at row + 8, for the `instr_n / 8` column blocks i of each
  instruction, instructions side by side along N.

Shared-memory layouts:

- `Shared(swizzle, major)`: a tile in shared memory in the canonical layout
  the tensor cores and TMA agree on (CUTLASS's GMMA layouts, Triton's
  NVMMA shared encoding): rows of the contiguous dim are split in slabs of
  `swizzle` bytes (one 128-byte row of a 1024-byte swizzle atom per 8 rows),
  slabs stored one after the other; 16-byte chunk c of row r is stored at chunk
  `c ^ (r % 8)` when `swizzle` is 128. `major` names the contiguous dim:
  "row" for row-major ([M, K] K-contiguous: K-major A), "col" when the first
  dim is contiguous. `swizzle=0` is plain row-major with no slabs.
- `Barriers()`: an array of 64-bit mbarriers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tilelang.backend.env_switch import number
from tilelang.frozen import frozen


@frozen(eq=True)
class Chunked:
    vec: int
    threads: int

    def __str__(self) -> str:
        return f"#chunked<vec={self.vec}, threads={self.threads}>"

    def chunks(self, numel: int) -> int:
        """How many chunks each thread holds for a tile of `numel` elements."""
        return -(-numel // (self.threads * self.vec))

    def owner(self, flat: int) -> tuple[int, int]:
        """(thread, register slot) holding the element at row-major index `flat`."""
        chunk, j = divmod(flat, self.vec)
        c, t = divmod(chunk, self.threads)
        return t, c * self.vec + j


def chunked_for(shape: tuple[int, ...], threads: int) -> Chunked:
    """The generic layout of a tile of `shape` over `threads` threads: the vector
    width is the largest of 4, 2, 1 that divides the last dim."""
    last = shape[-1] if shape else 1
    vec = 4 if last % 4 == 0 else 2 if last % 2 == 0 else 1
    return Chunked(vec, threads)


@dataclass(frozen=True, slots=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    def __post_init__(self) -> None:
        assert math.prod(self.threads_per_warp) == 32, self

    def __str__(self) -> str:
        def f(xs: tuple[int, ...]) -> str:
            return "[" + ", ".join(map(str, xs)) + "]"

        return (f"#blocked<spt={f(self.size_per_thread)}, tpw={f(self.threads_per_warp)}, "
                f"wpc={f(self.warps_per_cta)}, order={f(self.order)}>")


def _pow2_floor_div(n: int, cap: int) -> int:
    """The largest power of two that divides `n` and is at most `cap`."""
    v = 1
    while v < cap and n % (2 * v) == 0:
        v *= 2
    return v


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p <<= 1
    return p


def strides_of(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The row-major strides of `shape`, in elements."""
    out = []
    s = 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def blocked_for(shape: tuple[int, ...], threads: int, itemsize: int = 4,
                warps_first: int | None = None) -> Blocked:
    """The blocked layout of a tile of `shape` over `threads` threads: a
    thread holds a 16-byte vector along the last dim (as wide as the last dim's
    power-of-two factor allows), lanes fill the last dim first and then the
    ones before it, warps likewise (or dim `warps_first` first: the rows of a
    row-wise reduction, so it needs no shared memory). Threads left over when
    the tile is small hold replicas."""
    r = len(shape)
    pad = [next_pow2(max(1, s)) for s in shape]
    spt = [1] * r
    spt[-1] = min(_pow2_floor_div(max(1, shape[-1]), max(1, 16 // itemsize)), pad[-1])
    tpw = [1] * r
    lanes = 32
    for d in range(r - 1, -1, -1):
        t = min(lanes, max(1, pad[d] // spt[d]))
        tpw[d] = t
        lanes //= t
    tpw[-1] *= lanes
    wpc = [1] * r
    warps = max(1, threads // 32)
    dims = list(range(r - 1, -1, -1))
    if warps_first is not None:
        dims.remove(warps_first)
        dims.insert(0, warps_first)
    for d in dims:
        w = min(warps, max(1, pad[d] // (spt[d] * tpw[d])))
        wpc[d] = w
        warps //= w
    wpc[dims[0]] *= warps
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(range(r - 1, -1, -1)))


REPLICATE_DEFAULT = 16  # elements: 16 f32 registers a value, within any kernel's budget


def replicate_bound() -> int:
    """`TILEC_REPLICATE_SMALL`: unset or "0", off (0); "1", tiles of at most
    `REPLICATE_DEFAULT` elements; "N" (2 or more), at most N. Read by
    `layout_assign` (which values take the layout) and the code generator
    (which reads it in registers: with the option off, no kernel changes)."""
    n = number("TILEC_REPLICATE_SMALL", 0, 0)
    return REPLICATE_DEFAULT if n == 1 else n


def replicated_for(shape: tuple[int, ...], threads: int) -> Blocked:
    """The layout in which every one of `threads` threads holds every element
    of a tile of `shape` (powers of two): all of it in each thread's
    registers (`spt` the whole shape), the lanes and warps on the last dim,
    all of them replicas of the first."""
    r = len(shape)
    tpw = (1,) * (r - 1) + (32,)
    wpc = (1,) * (r - 1) + (max(1, threads // 32),)
    return Blocked(tuple(next_pow2(max(1, n)) for n in shape), tpw, wpc, tuple(range(r - 1, -1, -1)))


def is_replicated(lay: object, shape: tuple[int, ...]) -> bool:
    """Every thread holds every element of a `shape` tile in layout `lay`
    (a blocked layout, or a slice of one, whose threads all sit at position 0
    of every dim: `replicated_for`'s, a slice of it, or any such)."""
    if isinstance(lay, Slice):
        full = list(shape)
        full.insert(lay.dim, 1)
        lay, shape = lay.parent, tuple(full)
    if not isinstance(lay, Blocked) or len(lay.size_per_thread) != len(shape):
        return False
    for n, spt, tpw, wpc in zip(shape, lay.size_per_thread, lay.threads_per_warp, lay.warps_per_cta, strict=True):
        p = next_pow2(max(1, n))
        if tpw * wpc > 1 and spt < p:
            return False  # threads along this dim hold different elements
    return True  # (a dim on no thread digit is walked in each thread's registers)


@frozen(eq=True)
class Slice:
    dim: int
    parent: Blocked

    def __str__(self) -> str:
        return f"#slice<dim={self.dim}, {self.parent}>"


@frozen(eq=True)
class MmaAcc:
    warps: int

    def __str__(self) -> str:
        return f"#mma<m16n8, warps={self.warps}>"

    def tiles_per_warp(self, shape: tuple[int, ...]) -> int:
        M, N = shape
        return -(-((M // 16) * (N // 8)) // self.warps)


@frozen(eq=True)
class MmaTile:
    """The accumulator of `mma.sync.m16n8k16` over a grid of warps (the sm_80
    pipeline, `passes/pipeline_sm80.py`): warp w = (wm, wn) (w = wm * warps_n
    + wn) owns the block of rows [wm * BM / warps_m, ...) and columns
    [wn * BN / warps_n, ...); in it, lane l holds, for each 16x8 tile (mi, ni),
    (16 mi + l/4 + 8h, 8 ni + 2(l%4) + j) for h, j in {0, 1}: the mma's C
    fragment, registers in the order (mi, ni, h, j).

    `split16` (the int8 mma.sync.m16n8k32 with B read row-major by
    `ldmatrix.trans`, `codegen/sm80.py`): in each 16-column group p the n8
    tile 2p holds the group's even columns and 2p + 1 its odd ones, so lane l
    holds (16 mi + l/4 + 8h, 16 p + 4(l%4) + c) for c in 0..3, registers in
    the order (mi, p, h, c); the mma's C fragment j of tile 2p + e is c = 2j + e."""

    warps_m: int
    warps_n: int
    split16: bool = False

    def __str__(self) -> str:
        return f"#mma_tile<m16n8{', split16' if self.split16 else ''}, warps={self.warps_m}x{self.warps_n}>"


@frozen(eq=True)
class SmemTile:
    """A [stages, rows, cols] ring of 16-bit tiles in shared memory, row-major,
    16-byte chunks XOR-swizzled so that 8 consecutive rows read at one logical
    chunk (ldmatrix) hit 8 different bank groups: chunk c of row r is stored at
    chunk `c ^ xor(r)`, xor(r) = r % 8 for rows of 8 or more chunks, else
    (r / (8 / chunks)) % chunks.

    `quad` (the int8 ring of a row-major B, `codegen/sm80.py`): ldmatrix reads
    8 rows of the form 4i + j + {0, 1} (j in {0, 2}, i = 0..3) together, so
    the xor is taken from r / 4 and r % 2: ((r / 4) * 2 + r % 2) % 8 for rows
    of 8 or more chunks, (r / 4) % chunks for fewer."""

    quad: bool = False

    def __str__(self) -> str:
        return f"#smem_tile<row-major, xor{', quad' if self.quad else ''}>"

    @staticmethod
    def chunk_xor(r: int, chunks: int, quad: bool = False) -> int:
        if quad:
            if chunks >= 8:
                return ((r // 4) * 2 + r % 2) % 8
            return (r // 4) % chunks if chunks > 1 else 0
        if chunks >= 8:
            return r % 8
        return (r // (8 // chunks)) % chunks if chunks > 1 else 0


@frozen(eq=True)
class WgmmaAcc:
    warpgroups: int
    m_per_group: int  # rows each warpgroup owns (a multiple of 64)
    instr_n: int  # N of one wgmma instruction (8..256)

    def __str__(self) -> str:
        return f"#wgmma<groups={self.warpgroups}, rows={self.m_per_group}, m64n{self.instr_n}k16>"

    def regs(self, n: int) -> int:
        """f32 registers per thread for an accumulator with `n` columns."""
        return (self.m_per_group // 64) * (n // 8) * 4

    def coords(self, reg: int, tid: int, n: int) -> tuple[int, int]:
        """(row, col) of register `reg` of thread `tid` (tid counted from the
        first consumer thread), for an accumulator with `n` columns."""
        g, t = divmod(tid, 128)
        w, lane = divmod(t, 32)
        per_block = n // 8 * 4
        mb, r = divmod(reg, per_block)
        i, q = divmod(r, 4)
        row = g * self.m_per_group + mb * 64 + 16 * w + lane // 4 + (8 if q >= 2 else 0)
        col = 8 * i + 2 * (lane % 4) + (q % 2)
        return row, col


@frozen(eq=True)
class AccTile:
    """The warpgroup-MMA accumulator as a layout for whole computations in
    registers (the attention pipeline, `passes/attention.py`): `warps` warps,
    one above the other, the first warps of the CTA (a role that starts at
    warp 0). For a [M, N] tile (leading size-1 dims allowed) warp w owns rows
    [w * M / warps, (w + 1) * M / warps) in 16-row blocks mi; lane l holds
    (16 mi + l/4 + 8h, 8 ni + 2(l%4) + j), registers in the order (mi, ni, h, j):
    for M / warps = 16 exactly `wgmma`'s m64 accumulator fragment of each
    warpgroup (and, rounded to 16 bits, its A-operand fragment). A size-1
    row or column dim is held by every thread (replicas). A tile with one dim
    larger than 1 is a row vector (`kind` "row": that dim is held like the
    rows) or a column vector ("col"), whatever its rank.

    `cols` > 1 (the products pipeline's wide accumulators): the CTA has
    `warps * cols` warps, warp w the row block of warp w % warps and the
    columns [c N / cols, (c + 1) N / cols) of c = w / warps (a tile without
    columns is held alike by each of the `cols` warps of its rows)."""

    warps: int
    kind: str = ""  # "row" / "col" for tiles with one live dim
    cols: int = 1

    def __str__(self) -> str:
        c = f", cols={self.cols}" if self.cols > 1 else ""
        return f"#acc_tile<warps={self.warps}{', ' + self.kind if self.kind else ''}{c}>"


@frozen(eq=True)
class Shared:
    swizzle: int  # 0, 32, 64 or 128 (bytes)
    major: str  # "row": the last dim is contiguous; "col": the first dim is

    def __str__(self) -> str:
        return f"#shared<swizzle={self.swizzle}, {self.major}-major>"

    def offset(self, r: int, c: int, rows: int, cols: int, itemsize: int) -> int:
        """Byte offset of element (r, c) of one [rows, cols] buffer (the oracle the
        tests hold the TMA box order and the wgmma descriptors to)."""
        if self.major == "col":
            r, c, rows, cols = c, r, cols, rows
        if self.swizzle == 0:
            return (r * cols + c) * itemsize
        per_row = self.swizzle // itemsize  # elements of one slab row
        slab, cc = divmod(c, per_row)
        byte = cc * itemsize
        chunk, within = divmod(byte, 16)
        phase = r % 8 if self.swizzle == 128 else (r // 2) % 4 if self.swizzle == 64 else (r // 4) % 2
        chunk ^= phase
        return slab * rows * self.swizzle + r * self.swizzle + chunk * 16 + within


@frozen(eq=True)
class SmemRows:
    """A [stages, rows, cols'] ring of tiles of any element type in shared
    memory, row-major with no swizzle: a tile's rows of `cols` elements each
    start `cols'` elements apart (`cols'` - `cols` padding elements, the
    ring's last dim; `CpAsyncTile.cols`). The FMA pipeline's operands
    (`passes/pipeline_fma.py`): a K-contiguous operand's rows are padded by
    one 16-byte chunk where a row has an even number of chunks, so that the
    rows 4 or 8 lanes read at one k fall in distinct 16-byte bank groups."""

    def __str__(self) -> str:
        return "#smem_rows<row-major, padded>"


@frozen(eq=True)
class Barriers:
    def __str__(self) -> str:
        return "#mbarrier"


Distributed = Chunked | Blocked | Slice | MmaAcc | MmaTile | WgmmaAcc | AccTile
Layout = Distributed | Shared | SmemTile | SmemRows | Barriers

__all__ = [
    "AccTile",
    "Barriers",
    "Blocked",
    "Chunked",
    "Distributed",
    "Layout",
    "MmaAcc",
    "MmaTile",
    "Shared",
    "Slice",
    "SmemRows",
    "SmemTile",
    "WgmmaAcc",
    "blocked_for",
    "chunked_for",
    "is_replicated",
    "next_pow2",
    "replicate_bound",
    "replicated_for",
    "strides_of",
]
