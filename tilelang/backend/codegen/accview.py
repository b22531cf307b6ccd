"""The `AccTile` layout as the code generator sees it (`AccView`), and what
moves values between its shapes in registers: broadcasts and reshapes
(`acc_register_map`) and row reductions (`reduce_rows`, quad shuffles).

A value in `AccTile(W)` has at most two live dims, the row dim (size M) and
the column dim (size N); every other dim has size 1. Thread t = 32 w + l
holds rows `w * WM + l/4 + c_r` (WM = M / W, c_r = 16 mi + 8 h) and columns
`2 (l % 4) + c_c` (c_c = 8 ni + j). A size-1 row or column dim is coordinate
0 in every thread (replicas: `owner` picks the first copy). So two values
agree on a dim when both have it live with the same size, or both have it
size 1: broadcasts from [M, 1] or [1, N] to [M, N], and reshapes that add or
drop size-1 dims, move nothing. The row reduction of an [M, N] value folds a
thread's slots of each row, then the four lanes of a quad (`shfl.bfly` 1, 2).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.env_switch import flag, mode, number
from tilelang.backend.gpu.layouts import AccTile, Slice, strides_of
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir


@frozen(eq=True)
class AccView:
    layout: AccTile
    shape: tuple[int, ...]
    rdim: int | None  # the dim of `shape` holding rows (None: rows are size 1 / absent)
    cdim: int | None  # the dim holding columns
    M: int  # rows (1 when absent)
    N: int  # columns
    slots: tuple[tuple[int, int], ...]  # (row const, col const) of each slot

    @property
    def V(self) -> int:
        return 2 if self.N > 1 else 1

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
    def full(self) -> bool:
        return True

    @property
    def WM(self) -> int:
        return self.M // self.layout.warps

    def chunk_valid(self, em: Any, k: int) -> str | None:
        return None

    def _base(self, em: Any) -> tuple[str, str]:
        if self.layout.cols > 1:
            return self._base_cols(em)
        key = ("acctile", self.layout.warps, self.M, self.N)  # type: ignore[assignment]
        got = em._coord_cache.get(key)
        if got is None:
            lane = em.entry_emit(f"and i32 {em.tid0()}, 31")
            if self.M > 1:
                w = em.entry_emit(f"lshr i32 {em.tid0()}, 5")
                row = em.entry_emit(f"add i32 {em.entry_emit(f'mul i32 {w}, {self.WM}')}, "
                                    f"{em.entry_emit(f'lshr i32 {lane}, 2')}")
            else:
                row = "0"
            col = em.entry_emit(f"shl i32 {em.entry_emit(f'and i32 {lane}, 3')}, 1") if self.N > 1 else "0"
            got = (row, col)
            em._coord_cache[key] = got
        return got  # type: ignore[no-any-return]

    def _base_cols(self, em: Any) -> tuple[str, str]:
        """`_base` where warps split the columns too (`AccTile.cols`): warp w's rows are those of w % warps, its
        columns the (w / warps)-th of `cols` parts."""
        W, C = self.layout.warps, self.layout.cols
        key = ("acctile", W, C, self.M, self.N)
        got = em._coord_cache.get(key)
        if got is None:
            lane = em.entry_emit(f"and i32 {em.tid0()}, 31")
            w = em.entry_emit(f"lshr i32 {em.tid0()}, 5")
            row = col = "0"
            if self.M > 1:
                wr = em.entry_emit(f"urem i32 {w}, {W}")
                row = em.entry_emit(f"add i32 {em.entry_emit(f'mul i32 {wr}, {self.WM}')}, "
                                    f"{em.entry_emit(f'lshr i32 {lane}, 2')}")
            if self.N > 1:
                wc = em.entry_emit(f"udiv i32 {w}, {W}")
                q2 = em.entry_emit(f"shl i32 {em.entry_emit(f'and i32 {lane}, 3')}, 1")
                col = em.entry_emit(f"add i32 {em.entry_emit(f'mul i32 {wc}, {self.N // C}')}, {q2}")
            got = (row, col)
            em._coord_cache[key] = got
        return got  # type: ignore[no-any-return]

    def owner(self, em: Any) -> str | None:
        """i1: this thread holds the first copy of its values (None: no replicas)."""
        if self.layout.cols > 1:
            return self._owner_cols(em)
        conds = []
        if self.N == 1:
            conds.append(em.entry_emit(f"icmp eq i32 {em.entry_emit(f'and i32 {em.tid0()}, 3')}, 0"))
        if self.M == 1:
            conds.append(em.entry_emit(f"icmp ult i32 {em.tid0()}, 4"))
        return em.and_all(conds)

    def _owner_cols(self, em: Any) -> str | None:
        """`owner` where warps split the columns too: a value without columns is held by every column part's
        warps (the first: w < warps), one without rows by every row block's (the first: w % warps == 0)."""
        W = self.layout.warps
        conds = []
        w = em.entry_emit(f"lshr i32 {em.tid0()}, 5")
        if self.N == 1:
            conds.append(em.entry_emit(f"icmp eq i32 {em.entry_emit(f'and i32 {em.tid0()}, 3')}, 0"))
            conds.append(em.entry_emit(f"icmp ult i32 {w}, {W}"))
        if self.M == 1:
            conds.append(em.entry_emit(f"icmp ult i32 {em.entry_emit(f'and i32 {em.tid0()}, 31')}, 4"))
            conds.append(em.entry_emit(f"icmp eq i32 {em.entry_emit(f'urem i32 {w}, {W}')}, 0"))
        return em.and_all(conds)

    def _rc(self, em: Any, k: int, j: int) -> tuple[str, str]:
        r0, c0 = self._base(em)
        cr, cc = self.slots[k * self.V + j]
        row = r0 if cr == 0 else (str(cr) if r0 == "0" else em.emit(f"add i32 {r0}, {cr}"))
        col = c0 if cc == 0 else (str(cc) if c0 == "0" else em.emit(f"add i32 {c0}, {cc}"))
        return row, col

    def slot_coords(self, em: Any, k: int, j: int, valid: str | None = None) -> list[str]:
        row, col = self._rc(em, k, j)
        out = ["0"] * len(self.shape)
        if self.rdim is not None:
            out[self.rdim] = row
        if self.cdim is not None:
            out[self.cdim] = col
        return out

    def flat(self, em: Any, k: int, j: int) -> str:
        cs = self.slot_coords(em, k, j)
        st = strides_of(self.shape)
        acc = "0"
        for c, s in zip(cs, st, strict=True):
            if c == "0":
                continue
            term = c if s == 1 else em.emit(f"mul i32 {c}, {s}")
            acc = term if acc == "0" else em.emit(f"add i32 {acc}, {term}")
        return acc

    def dim_kind(self, d: int) -> tuple[str, int]:
        if d == self.rdim:
            return ("row", self.M)
        if d == self.cdim:
            return ("col", self.N)
        return ("one", 1)


def acc_view(layout: AccTile | Slice, shape: tuple[int, ...]) -> AccView:
    """The view of a value of `shape` in `layout` (`AccTile`, or a `Slice` of one for 1-D values)."""
    if isinstance(layout, Slice):
        lay = layout.parent
        assert isinstance(lay, AccTile) and len(shape) == 1, (layout, shape)
        n = shape[0]
        if layout.dim == 1:  # a row vector: the reduction of [M, N] along its columns
            rdim, cdim, M, N = (0 if n > 1 else None), None, n, 1
        else:
            rdim, cdim, M, N = None, (0 if n > 1 else None), 1, n
    else:
        lay = layout
        live = [d for d, x in enumerate(shape) if x > 1]
        assert len(live) <= 2, (layout, shape)
        if len(live) == 2:
            rdim, cdim = live
        elif len(live) == 1:
            d = live[0]
            kind = lay.kind or ("col" if d == len(shape) - 1 and len(shape) >= 2 else "row")
            rdim, cdim = (None, d) if kind == "col" else (d, None)
        else:
            rdim = cdim = None
        M = shape[rdim] if rdim is not None else 1
        N = shape[cdim] if cdim is not None else 1
    W, C = lay.warps, lay.cols
    assert M == 1 or M % (16 * W) == 0, (layout, shape)
    assert N == 1 or N % (8 * C) == 0, (layout, shape)
    rows = [16 * mi + 8 * h for mi in range(max(1, M // (16 * W))) for h in range(2)] if M > 1 else [0]
    if M > 1 and N > 1:
        slots = tuple((16 * mi + 8 * h, 8 * ni + j) for mi in range(M // (16 * W)) for ni in range(N // (8 * C))
                      for h in range(2) for j in range(2))
    elif M > 1:
        slots = tuple((r, 0) for r in rows)
    elif N > 1:
        slots = tuple((0, 8 * ni + j) for ni in range(N // (8 * C)) for j in range(2))
    else:
        slots = ((0, 0),)
    return AccView(lay, tuple(shape), rdim, cdim, M, N, slots)


def acc_register_map(src: AccView, dst: AccView, align: list[int | None]) -> list[int] | None:
    """For each slot of `dst`, the slot of `src` holding the same element in the same
    thread (see `views.register_map`), or None."""
    if src.layout.warps != dst.layout.warps or src.layout.cols != dst.layout.cols:
        return None
    used = {j for j in align if j is not None}
    for d in range(len(src.shape)):
        if d not in used and src.dim_kind(d)[0] != "one":
            return None
    for i, j in enumerate(align):
        if j is None:
            continue
        if src.dim_kind(j) != dst.dim_kind(i) and src.dim_kind(j)[0] != "one":
            return None
    index = {c: n for n, c in enumerate(src.slots)}
    out = []
    for k in range(dst.K):
        for jj in range(dst.V):
            cr, cc = dst.slots[k * dst.V + jj]
            want_r = cr if src.M > 1 else 0
            want_c = cc if src.N > 1 else 0
            # a dst row/col that src holds at size 1 reads coordinate 0 (broadcast)
            got = index.get((want_r, want_c))
            if got is None:
                return None
            out.append(got)
    return out


# Whether `store_rows` is taken when `TILEC_ATTN_ROWSTORE` is unset ("0": the
# generic store, a bounds test and a branch a pair of columns).
ROWSTORE_DEFAULT = "1"


# Pairs of columns a branch of `store_rows` stores (ptxas 13.0, 128 x 128 at
# D = 128: the epilogue's SASS 375 / 349 / 339 / 330 instructions for 2 / 4 /
# 8 / 16, but 4 spills 44 B in the peeled schedule at 128 x 64 and 8 spills
# 96 B in the overlap schedule: their S or P registers are still held there).
ROW_GROUP = 2


def rowstore_enabled() -> bool:

    return flag("TILEC_ATTN_ROWSTORE", ROWSTORE_DEFAULT)


def store_rows(em: Any, op: ir.Store) -> bool:
    """A store of an [M, N] `AccTile` value (the attention epilogue's), one
    bounds test a row: each row a thread holds is N / 4 pairs of columns, 16
    bytes apart, so where the tile's column range (and its leading dims) lie
    inside the tensor and the row does, every pair of the row is stored with
    no further test, at constant offsets from one address (one branch a row,
    not one a pair: the generic store tested each pair's row and column
    bounds in its own branch, ~14 SASS instructions a 4-byte store). A row at
    the tensor's edge takes the element-by-element path. False when `op` is
    not such a store (the caller goes on)."""
    lx = em.layouts.get(op.value.id)
    if not isinstance(lx, AccTile) or op.mask is not None or not rowstore_enabled():
        return False
    view = em.lay(op.value)
    if not isinstance(view, AccView) or view.M == 1 or view.N == 1:
        return False
    assert view.rdim is not None and view.cdim is not None
    info = em.tensors[op.tensor]
    dt = info.param.dtype
    mt, es = em.mty(info), em.msize(info)
    offs = [em.scalar(o) for o in op.offsets]
    conds: list[str | None] = []
    lead: list[str | None] = []  # the dims other than the rows' and the columns'
    for d, o in enumerate(offs):
        if d == view.cdim:
            conds += [em.emit(f"icmp sge i32 {o}, 0"),  # `o + N <= dim` without a wrapping add
                      em.emit(f"icmp sle i32 {o}, {em.emit(f'sub i32 {info.dims[d]}, {view.N}')}")]
        elif d != view.rdim:
            lead.append(em.emit(f"icmp ult i32 {o}, {info.dims[d]}"))
    tile_ok = em.and_all(conds + lead)
    lead_ok = em.and_all(lead)
    spec = em._specialised(info, op.offsets, view, False)
    regs = em.tile(op.value)
    mvals = [em.reg_to_mem(x, dt, mt) for x in regs]
    rows: dict[int, list[int]] = {}
    for k in range(view.K):
        rows.setdefault(view.slots[2 * k][0], []).append(k)
    vt = f"<2 x {mt}>"
    if lx.cols == 1 and store16_enabled(view.N) and es == 2 and all(len(ks) % 4 == 0 for ks in rows.values()):
        _store_rows_16(em, view, info, offs, tile_ok, regs, mvals, rows, mt)
        return True
    for ks in rows.values():
        first = em._chunk_coords(view, ks[0], offs)
        row = first[view.rdim]
        row_in = em.emit(f"icmp ult i32 {row}, {info.dims[view.rdim]}")
        ok = em.and_all([tile_ok, row_in])
        row_end = _skip_dead_row(em, em.and_all([lead_ok, row_in])) if es == 4 else None
        base = em.address(info, first)
        # a pair's address is the row's first plus a multiple of 8 elements:
        # aligned for the pair exactly when the first is
        fast = em._vector_ok(ok, base, 2 * es, []) if not spec else ok
        c_first = view.slots[2 * ks[0]][1]
        for g0 in range(0, len(ks), ROW_GROUP):
            group = ks[g0:g0 + ROW_GROUP]
            # the group's pairs are packed here, after the previous group's
            # stores: ptxas then computes each group's values just before
            # its stores (packed before the row's branch, every value of the
            # epilogue was live at once: spills where the schedule holds S)
            vecs = [_pair(em, regs[2 * k:2 * k + 2], mvals[2 * k:2 * k + 2], mt) for k in group]
            fast_l, slow_l, join = em.new_label("rf"), em.new_label("rs"), em.new_label("rj")
            em.cbr(fast or "true", fast_l, slow_l)
            em.label(fast_l)
            for k, vec in zip(group, vecs, strict=True):
                dc = view.slots[2 * k][1] - c_first
                ptr = base if dc == 0 else em.emit(f"getelementptr {mt}, ptr addrspace(1) {base}, i64 {dc}")
                em.stmt(f"store {vt} {vec}, ptr addrspace(1) {ptr}, align {2 * es}")
            em.br(join)
            em.label(slow_l)
            for k, vec in zip(group, vecs, strict=True):
                coords = em._chunk_coords(view, k, offs)
                for j in range(2):
                    cj = list(coords)
                    if j:
                        cj[view.cdim] = em.emit(f"add i32 {coords[view.cdim]}, 1")
                    _store_in_bounds(em, info, cj, mt, es, lambda j=j, vec=vec: em.emit(
                        f"extractelement {vt} {vec}, i32 {j}"))
            em.br(join)
            em.label(join)
        _end_row(em, row_end)
    return True


def _store_in_bounds(em: Any, info: Any, coords: list[str], mt: str, align: int, value: Any) -> None:
    """Store `value()` (emitted in the branch, an `mt`) at `coords` of tensor `info` where they are inside it."""
    st, nx = em.new_label("re"), em.new_label("rn")
    em.cbr(em.in_bounds(info, coords) or "true", st, nx)
    em.label(st)
    em.stmt(f"store {mt} {value()}, ptr addrspace(1) {em.address(info, coords)}, align {align}")
    em.br(nx)
    em.label(nx)


def store16_enabled(n: int) -> bool:
    """Whether `store_rows` stores a tile of 16-bit values with rows of `n`
    columns as 16-byte stores (`_store_rows_16`) instead of 4-byte pairs.
    `TILEC_ATTN_STORE16`: "auto" (the default) where `n >= STORE16_MIN_COLS`,
    "1" always, "0" never. Measured on the H200 (benchmarks/RESULTS.md, the
    lead's final call of 2026-12-03's fourth session, both orders): at
    D = 128 the attention's S = 1024 rows +5.8 % (full) and +2..+6 %
    (causal), S = 4096 +1.8 / +3.5 %, S = 16384 even or better; at D = 64
    -2..-3.5 % (the transpose's shuffles cost more than the 16 stores a
    thread they save there), hence the width rule."""
    v = mode("TILEC_ATTN_STORE16", "auto", ("auto", "0", "1"))
    if v == "auto":
        return n >= STORE16_MIN_COLS
    return v == "1"


STORE16_MIN_COLS = 128  # the narrowest row `store16_enabled` takes 16-byte stores for by default


def _store_rows_16(em: Any, view: AccView, info: Any, offs: list[str], tile_ok: str | None, regs: list[str],
                   mvals: list[str], rows: dict[int, list[int]], mt: str) -> None:
    """`store_rows` for f16/bf16 with rows of a multiple of 32 columns: the 4
    lanes of a quad hold a row's 8-column groups as 4-byte pairs (lane q the
    pair at 2q); a 4 x 4 transpose of the words of 4 consecutive groups
    across the quad (two butterfly stages, 2 shuffles each, all lanes: before
    any branch) leaves lane q the whole group q of the four, so each row is
    N / 32 stores of 16 bytes a lane instead of N / 8 of 4 (ncu, H200: the
    4-byte stores pace the attention epilogue, 8 rows a warp instruction). A
    row off the tensor's edge (or a misaligned one) stores element by
    element with bounds tests."""
    assert view.rdim is not None and view.cdim is not None
    q = em.entry_emit(f"and i32 {em.tid0()}, 3")
    bits = {s: em.entry_emit(f"icmp ne i32 {em.entry_emit(f'and i32 {q}, {s}')}, 0") for s in (1, 2)}
    words: dict[int, list[list[str]]] = {}
    for r, ks in rows.items():
        ks = sorted(ks, key=lambda k: view.slots[2 * k][1])
        rows[r] = ks
        sets = []
        for j in range(0, len(ks), 4):
            w = [em.emit(f"bitcast <2 x {mt}> {_pair(em, regs[2 * k:2 * k + 2], mvals[2 * k:2 * k + 2], mt)} to i32")
                 for k in ks[j:j + 4]]
            for s in (1, 2):
                for u in (0, 1, 2, 3):
                    if u & s:
                        continue
                    send = em.emit(f"select i1 {bits[s]}, i32 {w[u]}, i32 {w[u ^ s]}")
                    got = em.shfl_xor(send, DType.I32, s)
                    w[u], w[u ^ s] = (em.emit(f"select i1 {bits[s]}, i32 {got}, i32 {w[u]}"),
                                      em.emit(f"select i1 {bits[s]}, i32 {w[u ^ s]}, i32 {got}"))
            sets.append(w)
        words[r] = sets
    six_q, neg_2q = em.entry_emit(f"mul i32 {q}, 6"), em.entry_emit(f"mul i32 {q}, -2")
    for r, ks in rows.items():
        first = em._chunk_coords(view, ks[0], offs)
        row = first[view.rdim]
        ok = em.and_all([tile_ok, em.emit(f"icmp ult i32 {row}, {info.dims[view.rdim]}")])
        base = em.address(info, first)  # the lane's first pair: column c0 + 2q
        c0 = view.slots[2 * ks[0]][1]
        quad = em.emit(f"getelementptr {mt}, ptr addrspace(1) {base}, i32 {neg_2q}")  # the quad's first column
        fast = em._vector_ok(ok, quad, 16, [])
        fast_l, slow_l, join = em.new_label("rf"), em.new_label("rs"), em.new_label("rj")
        em.cbr(fast or "true", fast_l, slow_l)
        em.label(fast_l)
        for j, w in enumerate(words[r]):
            # this lane's group: columns c0 + 32 j + 8 q .. + 7, i.e. 32 j - c0 + 6 q past its first pair
            at = em.emit(f"add i32 {six_q}, {32 * j - c0}")
            ptr = em.emit(f"getelementptr {mt}, ptr addrspace(1) {base}, i32 {at}")
            vec = "undef"
            for e, x in enumerate(w):
                vec = em.emit(f"insertelement <4 x i32> {vec}, i32 {x}, i32 {e}")
            em.stmt(f"store <4 x i32> {vec}, ptr addrspace(1) {ptr}, align 16")
        em.br(join)
        em.label(slow_l)
        for j, w in enumerate(words[r]):
            for e in range(8):
                cj = list(first)
                dc = em.emit(f"add i32 {six_q}, {32 * j - c0 + e}")
                cj[view.cdim] = em.emit(f"add i32 {first[view.cdim]}, {dc}")
                _store_in_bounds(em, info, cj, mt, 2, lambda e=e, w=w: em.emit(
                    f"extractelement <2 x {mt}> {em.emit(f'bitcast i32 {w[e // 2]} to <2 x {mt}>')}, i32 {e % 2}"))
        em.br(join)
        em.label(join)


# Whether `store_rows` skips a row of 4-byte values outside the tensor with one
# branch (unset or "1"; "0": such a row goes through the element-by-element
# path, a bounds test a value, as before 2026-12-04). A tile can have many rows
# past the edge: `std::attention::decode_split_tc` stores a 64-row f32 tile of
# which G (4) rows are real, so 3 of its 4 warps held only dead rows and tested
# 64 values each (H200: its epilogue 0.99 -> 0.35 us, RESULTS.md, h15d
# 2026-12-04). Not for 16-bit tiles (prefill's outputs, a few rows past the
# edge in the last query block only): there the extra branch a row made ptxas
# spill 4 more bytes in the chained prefill kernel at D = 128.
def rowskip_enabled() -> bool:

    return flag("TILEC_ATTN_ROWSKIP", "1")


def _skip_dead_row(em: Any, live: str | None) -> str | None:
    """Opens the branch of one row's stores, taken where `live` (the row and
    the leading dims inside the tensor); returns the label `_end_row` closes
    it at (None: nothing opened)."""
    if live is None or not rowskip_enabled():
        return None
    body, end = em.new_label("rl"), em.new_label("rx")
    em.cbr(live, body, end)
    em.label(body)
    return end  # type: ignore[no-any-return]


def _end_row(em: Any, end: str | None) -> None:
    if end is not None:
        em.br(end)
        em.label(end)


def _pair(em: Any, regs: list[str], mvals: list[str], mt: str) -> str:
    """<2 x mt>: two registers of a store's value in memory form."""
    vt = f"<2 x {mt}>"
    lo, hi = (em.rounded.get(r) for r in regs)
    if mt in ("half", "bfloat") and lo is not None and hi is not None:
        # both rounded from f32 (a cast): one cvt.rn.{f16,bf16}x2.f32 of the
        # f32 values (the same rounding). As two fptruncs, LLVM moves them
        # above the user's selects, and ptxas then splits the packed pair to
        # select each half (PRMT, SEL, SEL, PRMT a pair).
        cvt = "llvm.nvvm.ff2f16x2.rn" if mt == "half" else "llvm.nvvm.ff2bf16x2.rn"
        em.declare(f"declare {vt} @{cvt}(float, float)")
        return em.emit(f"call {vt} @{cvt}(float {hi}, float {lo})")  # type: ignore[no-any-return]  # high half first
    vec = em.emit(f"insertelement {vt} undef, {mt} {mvals[0]}, i32 0")
    return em.emit(f"insertelement {vt} {vec}, {mt} {mvals[1]}, i32 1")  # type: ignore[no-any-return]


# Independent partial results a thread keeps while it folds its registers of
# one row (`reduce_rows`): a single chain makes each combine wait for the one
# before (31 dependent FMNMX a row at 128 x 128 before the softmax's exp2 can
# start); four chains and a pairwise finish cut that to 7 + 2 with the same
# number of instructions, but on the H200 (benchmarks/RESULTS.md, h15p
# 2026-12-03) four were not faster: -0.6..-1.1 % on std attention's full
# rows at D = 128, within +-1 % at D = 64 (the other warpgroup's work fills
# the chain's latency). So one chain; `TILEC_ACC_REDUCE_CHAINS=n` sets n.
REDUCE_CHAINS = 1


def reduce_chains() -> int:
    return max(1, number("TILEC_ACC_REDUCE_CHAINS", REDUCE_CHAINS))


def _fold(em: Any, rop: ir.ReduceOp, vals: list[str], dt: Any, chains: int) -> str:
    """`vals` combined by `rop` as `chains` interleaved chains (value i into
    chain i % chains), then the chains pairwise. The order of a sum changes
    with `chains` (all orders are within rounding of each other); max and min
    are the same in any order."""
    parts = list(vals[:chains])
    for i in range(len(parts), len(vals)):
        parts[i % chains] = em.combine(rop, parts[i % chains], vals[i], dt)
    while len(parts) > 1:
        parts = [em.combine(rop, parts[i], parts[i + 1], dt) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def reduce_rows(em: Any, op: ir.Reduce) -> bool:
    """A reduction along the columns of an `AccTile` value: registers, then the
    quad's lanes. False when `op` is not one (the caller goes on)."""
    lx = em.layouts.get(op.x.id)
    if not isinstance(lx, AccTile):
        return False
    xv = acc_view(lx, op.x.shape)
    assert lx.cols == 1, lx  # a row's columns in several warps: `attention_layout.moving_op` refuses it
    if op.axis != xv.cdim or xv.M == 1 or op.op not in (ir.ReduceOp.SUM, ir.ReduceOp.MAX, ir.ReduceOp.MIN):
        return False
    rv = em.lay(op.result) if op.result.shape else None
    if rv is not None and not isinstance(rv, AccView):
        return False
    dt = op.x.dtype
    slots = em.tile(op.x)
    rows: dict[int, list[str]] = {}
    for n, (cr, _) in enumerate(xv.slots):
        rows.setdefault(cr, []).append(slots[n])
    totals: dict[int, str] = {}
    chains = reduce_chains()
    for cr, vals in rows.items():
        acc = _fold(em, op.op, vals, dt, chains)
        for m in (1, 2):
            acc = em.combine(op.op, acc, em.shfl_xor(acc, dt, m), dt)
        totals[cr] = acc
    if rv is None:
        raise AssertionError("a row reduction to a scalar")
    em.env[op.result.id] = [totals[cr] for cr, _ in rv.slots]
    return True


__all__ = ["REDUCE_CHAINS", "AccView", "acc_register_map", "acc_view", "reduce_chains", "reduce_rows", "store16_enabled",
           "store_rows"]
