"""Code generation of `CopyToShared`: the Hopper pipeline's register-copy
producer, for operands TMA cannot describe (a base or a row stride that is not
a multiple of 16 bytes, e.g. an 8191-column f16 matrix).

The role's threads copy the [R, C] tile at (row0, col0) of a 2-D 16-bit
tensor into one ring stage, in the slab + swizzle layout TMA would write
(`layouts.Shared`: slab `c // E` of `R` rows of `sw` bytes, 16-byte chunk
`(c % E) // 8` of row r stored at chunk `chunk ^ ((r >> shift) & (7 >> shift))`).
Out-of-bounds elements are zero, the interpreter's edge rule for loads
without mask or padding, and no load leaves the tensor.

The fast form (`_copy_pairs`): each thread owns one pair of adjacent columns
(`2 * (t % P)`, P = C / 2 pairs per row) and every `RS = T / P`-th row, so
per pair it does two 2-byte loads from a row pointer it advances by
`RS * stride`, packs them and does one 4-byte shared store at an offset that
is a per-thread constant plus a compile-time one (the swizzle phase repeats
every 8 rows). A tile wholly inside the tensor (all but the edge tiles) runs
without any mask; an edge tile runs the same loop with a row check per pair
and per-thread column masks, out-of-bounds loads redirected to the tensor's
first element (none where the tensor has no element: it reads zeros). Groups of `U` pairs issue all their
loads before their stores,
so `2 U` loads per thread are in flight.

Shapes the fast form does not cover (a pair count that does not divide the
role's threads) take `_copy_elements`: one element per step, its coordinates
and swizzled position computed from its flat index.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.layouts import Shared

_SHIFT = {128: 0, 64: 1, 32: 2}


def copy_to_shared(em: Any, op: g.CopyToShared) -> None:
    lay = em.layouts[op.dst.id]
    assert isinstance(lay, Shared)
    _, R, C = op.dst.shape
    T = em.role_threads
    P = C // 2
    if C % 2 == 0 and T % P == 0 and R % (T // P) == 0:
        RS = T // P
        NP = R // RS
        q = 8 // RS if RS < 8 else 1
        for U in (16, 8, 4, 2):
            if NP % U == 0 and U % q == 0:
                _copy_pairs(em, op, lay.swizzle, R, C, RS, NP, q, U)
                return
    _copy_elements(em, op, lay.swizzle, R, C)


def _bits(em: Any, info: Any, addr: str, ne: str | None = None) -> str:
    """The 16 bits of the element at `addr`, as an i32; where `ne` (the tensor has an element) does not hold,
    0 and no load (an outside element's load is redirected to element (0, 0), which an empty tensor lacks)."""
    mt = em.mty(info)
    meta = ", !invariant.load !0" if info.readonly else ""
    none = join = ""  # (the labels of the branch on `ne`, where there is one)
    if ne is not None:
        go, none, join = em.new_label("be"), em.new_label("bz"), em.new_label("bj")
        em.cbr(ne, go, none)
        em.label(go)
    if mt == "float":  # a bf16 tensor held as f32 values: round to bf16 bits
        v = em.emit(f"load float, ptr addrspace(1) {addr}, align 4{meta}")
        v = em.emit(f"bitcast bfloat {em.emit(f'fptrunc float {v} to bfloat')} to i16")
    else:
        v = em.emit(f"load i16, ptr addrspace(1) {addr}, align 2{meta}")
    v = em.emit(f"zext i16 {v} to i32")
    return em.join_or(ne, "i32", v, "0", none, join)  # type: ignore[no-any-return]


def _copy_pairs(
    em: Any, op: g.CopyToShared, sw: int, R: int, C: int, RS: int, NP: int, q: int, U: int
) -> None:
    info = em.tensors[op.tensor]
    P = C // 2
    t = em.role_tid
    mt, ms = em.mty(info), em.msize(info)
    stride = em.tensor_strides(info)[0]  # i64 elements per row
    nrows, ncols = info.dims
    r0, c0 = (em.scalar(o) for o in op.offsets)
    pc = em.emit(f"urem i32 {t}, {P}")
    rt = em.emit(f"udiv i32 {t}, {P}")
    col = em.emit(f"shl i32 {pc}, 1")
    gc = em.emit(f"add i32 {c0}, {col}")
    gr = em.emit(f"add i32 {r0}, {rt}")
    # shared offsets: thread part for the first q rows (the phase repeats every 8 rows)
    base = em.emit(f"ptrtoint ptr addrspace(3) {em.smem_at(op.dst, op.stage)} to i32")
    E = sw // 2
    shift = _SHIFT[sw]
    slab = em.emit(f"udiv i32 {col}, {E}")
    cc = em.emit(f"urem i32 {col}, {E}")
    chunk = em.emit(f"lshr i32 {cc}, 3")
    within = em.emit(f"shl i32 {em.emit(f'and i32 {cc}, 7')}, 1")
    fixed = em.emit(f"add i32 {em.emit(f'mul i32 {slab}, {R * sw}')}, {within}")
    fixed = em.emit(f"add i32 {fixed}, {base}")
    offs = []
    for i in range(q):
        r = em.emit(f"add i32 {rt}, {i * RS}")
        ph = em.emit(f"and i32 {em.emit(f'lshr i32 {r}, {shift}')}, {7 >> shift}")
        sc = em.emit(f"shl i32 {em.emit(f'xor i32 {chunk}, {ph}')}, 4")
        o = em.emit(f"add i32 {em.emit(f'mul i32 {r}, {sw}')}, {sc}")
        offs.append(em.emit(f"add i32 {o}, {fixed}"))
    # global: the thread's first row pointer, the step between its rows
    gr64 = em.emit(f"sext i32 {gr} to i64")
    gc64 = em.emit(f"sext i32 {gc} to i64")
    first = em.emit(f"add i64 {em.emit(f'mul i64 {gr64}, {stride}')}, {gc64}")
    step = em.emit(f"mul i64 {stride}, {RS * U}")
    # the whole tile inside the tensor: no masks (`r0 + R <= nrows` as
    # `r0 <= nrows - R`: the add wraps for an offset near i32::MAX)
    inside = em.and_all(
        [
            em.emit(f"icmp sge i32 {r0}, 0"),
            em.emit(f"icmp sge i32 {c0}, 0"),
            em.emit(f"icmp sle i32 {r0}, {em.emit(f'sub i32 {nrows}, {R}')}"),
            em.emit(f"icmp sle i32 {c0}, {em.emit(f'sub i32 {ncols}, {C}')}"),
        ]
    )
    fast, slow, done = em.new_label("cp_fast"), em.new_label("cp_edge"), em.new_label("cp_done")
    em.cbr(inside, fast, slow)
    rows_per_group = RS * U

    def group(masked: bool) -> None:
        ok0 = ok1 = colmask = None
        if masked:
            ok0 = em.emit(f"icmp ult i32 {gc}, {ncols}")
            ok1 = em.emit(f"icmp ult i32 {em.emit(f'add i32 {gc}, 1')}, {ncols}")
            lo = em.emit(f"select i1 {ok0}, i32 65535, i32 0")
            hi = em.emit(f"select i1 {ok1}, i32 -65536, i32 0")
            colmask = em.emit(f"or i32 {lo}, {hi}")

        def body(it: str, cur: list[str]) -> list[str]:
            (elem,) = cur  # i64 element index of the thread's first row of this group
            vals = []
            for u in range(U):
                e = (
                    elem
                    if u == 0
                    else em.emit(f"add i64 {elem}, {em.emit(f'mul i64 {stride}, {u * RS}')}")
                )
                if masked:
                    rel = em.emit(f"mul i32 {it}, {rows_per_group}")
                    grow = em.emit(f"add i32 {gr}, {em.emit(f'add i32 {rel}, {u * RS}')}")
                    rok = em.emit(f"icmp ult i32 {grow}, {nrows}")
                    e0 = em.emit(f"select i1 {em.emit(f'and i1 {rok}, {ok0}')}, i64 {e}, i64 0")
                    e1 = em.emit(
                        f"select i1 {em.emit(f'and i1 {rok}, {ok1}')}, i64 {em.emit(f'add i64 {e}, 1')}, i64 0"
                    )
                    a0 = em.emit(f"getelementptr {mt}, ptr addrspace(1) {info.base}, i64 {e0}")
                    a1 = em.emit(f"getelementptr {mt}, ptr addrspace(1) {info.base}, i64 {e1}")
                else:
                    a0 = em.emit(f"getelementptr {mt}, ptr addrspace(1) {info.base}, i64 {e}")
                    a1 = em.emit(f"getelementptr i8, ptr addrspace(1) {a0}, i64 {ms}")
                ne = em.nonempty(info) if masked else None  # (an edge tile's redirected loads: hrev18)
                v = em.emit(
                    f"or i32 {_bits(em, info, a0, ne)}, {em.emit(f'shl i32 {_bits(em, info, a1, ne)}, 16')}"
                )
                if masked:
                    rm = em.emit(f"select i1 {rok}, i32 {colmask}, i32 0")
                    v = em.emit(f"and i32 {v}, {rm}")
                vals.append(v)
            # pair j = it * U + u is row rt + j * RS; U % q == 0, so its phase is
            # that of row rt + (u % q) * RS, and the rest is whole 8-row blocks
            goff = em.emit(f"mul i32 {it}, {U * RS * sw}")
            for u, v in enumerate(vals):
                k = u % q
                off = em.emit(f"add i32 {offs[k]}, {goff}")
                if u != k:
                    off = em.emit(f"add i32 {off}, {(u - k) * RS * sw}")
                p = em.emit(f"inttoptr i32 {off} to ptr addrspace(3)")
                em.stmt(f"store i32 {v}, ptr addrspace(3) {p}, align 4")
            return [em.emit(f"add i64 {elem}, {step}")]

        em.counted_loop(0, NP // U, [("i64", first)], body)
        em.br(done)

    em.label(fast)
    group(False)
    em.label(slow)
    group(True)
    em.label(done)


def _copy_elements(em: Any, op: g.CopyToShared, sw: int, R: int, C: int) -> None:
    """One element per step (consecutive threads take consecutive elements of a
    row: coalesced 2-byte loads, `unroll` in flight per thread, branch-free
    but for the last step: an out-of-bounds element reads the tensor's first
    element and is replaced by zero)."""
    info = em.tensors[op.tensor]
    E = sw // 2
    T = em.role_threads
    total = R * C
    unroll = 16
    per_iter = T * unroll
    steps = -(-total // per_iter)
    base = em.smem_at(op.dst, op.stage)
    base_i = em.emit(f"ptrtoint ptr addrspace(3) {base} to i32")
    r0, c0 = (em.scalar(o) for o in op.offsets)
    t = em.role_tid
    shift = _SHIFT[sw]

    def body(it: str, cur: list[str]) -> list[str]:
        vals, dsts = [], []
        for u in range(unroll):
            base_it = em.emit(f"mul i32 {it}, {per_iter}")
            idx = em.emit(f"add i32 {base_it}, {u * T}")
            idx = em.emit(f"add i32 {idx}, {t}")
            live = None if total % per_iter == 0 else em.emit(f"icmp ult i32 {idx}, {total}")
            r = em.emit(f"udiv i32 {idx}, {C}")
            c = em.emit(f"urem i32 {idx}, {C}")
            gr = em.emit(f"add i32 {r0}, {r}")
            gc = em.emit(f"add i32 {c0}, {c}")
            ok = em.and_all([em.in_bounds(info, [gr, gc]), live])
            sr = em.emit(f"select i1 {ok}, i32 {gr}, i32 0")
            sc = em.emit(f"select i1 {ok}, i32 {gc}, i32 0")
            addr = em.address(info, [sr, sc])
            v = em.emit(f"trunc i32 {_bits(em, info, addr, em.nonempty(info))} to i16")
            v = em.emit(f"select i1 {ok}, i16 {v}, i16 0")
            slab = em.emit(f"udiv i32 {c}, {E}")
            cc = em.emit(f"urem i32 {c}, {E}")
            chunk = em.emit(f"lshr i32 {cc}, 3")
            rs = r if shift == 0 else em.emit(f"lshr i32 {r}, {shift}")
            chunk = em.emit(f"xor i32 {chunk}, {em.emit(f'and i32 {rs}, {7 >> shift}')}")
            off = em.emit(
                f"add i32 {em.emit(f'mul i32 {slab}, {R * sw}')}, {em.emit(f'mul i32 {r}, {sw}')}"
            )
            off = em.emit(f"add i32 {off}, {em.emit(f'shl i32 {chunk}, 4')}")
            w2 = em.emit(f"shl i32 {em.emit(f'and i32 {cc}, 7')}, 1")
            off = em.emit(f"add i32 {off}, {w2}")
            dsts.append((em.emit(f"add i32 {base_i}, {off}"), live))
            vals.append(v)
        for v, (d, live) in zip(vals, dsts, strict=True):
            p = em.emit(f"inttoptr i32 {d} to ptr addrspace(3)")
            if live is None:
                em.stmt(f"store i16 {v}, ptr addrspace(3) {p}, align 2")
            else:
                go, nxt = em.new_label("cs"), em.new_label("csn")
                em.cbr(live, go, nxt)
                em.label(go)
                em.stmt(f"store i16 {v}, ptr addrspace(3) {p}, align 2")
                em.br(nxt)
                em.label(nxt)
        return []

    em.counted_loop(0, steps, [], body)
