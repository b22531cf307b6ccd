"""Reductions no register path takes, staged through shared memory and
reduced by groups of threads (`reduce_staged`): `ReductionOps.reduce`'s last
resort (an `mma` tile, a chunked input the shuffle paths refuse, a short-row
Slice-layout input; a long-row one stays in registers, `reduce.py`'s apart
mode, where `plan` says groups would pay).

The tile is written row-major to shared memory (`to_smem`), then each output
is reduced by a group of G threads (G a power of two, up to 8 warps): thread
g of a group folds the row's elements g, g + G, g + 2G, .. (consecutive
threads read consecutive words of a contiguous row: no bank conflict), in U
independent chains; the group's lanes combine their partials by a butterfly
(`shfl.sync.bfly`), the group's first lane of each warp writes the warp's
partial ([output][warp]), a barrier, and every thread folds the W partials of
each output its result layout gives it, in warp order. Outputs beyond T / G
take further rounds. Before, every thread summed whole rows in a serial loop
(hcliff14: GroupNorm's [C, 4096] rows, 1,365 iterations a thread).

`plan` keeps the serial loop where it reads no more a thread (short rows,
or as many outputs as threads): the decode kernels' 4-long sums, for one.
The order rules are the interpreter's: integer and min/max results are
exact in any order, `argmax`/`argmin` keep the first index of the best value
(`reduce.pick`: ties to the smaller index, NaN the largest), float sums and
products are combined in another order than NumPy's (which the IR allows;
f16/bf16 accumulate in f32 and round once). `TILEC_REDUCE_STAGED=0`: the
serial loop everywhere (the kernels as before).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.ir import nodes as ir

from .llvm_types import reg_ty, smem_size
from .reduce_ops import identity, pick
from .views import strides_of

R = ir.ReduceOp

UNROLL = 16  # elements a thread read without a loop
CHAINS = 4  # independent accumulators of a looped row
MAX_GROUP = 256  # threads an output: 8 warps' partials a reader folds
MAX_ROUNDS = 8


def plan(T: int, n_out: int, L: int, e_r: int) -> int | None:
    """G, the threads an output, or None where the serial loop reads no more.

    A thread's reads: the serial loop's `e_r * L` (its result slots times the
    row); the groups' `rounds * (J + log2 G)` (J elements and the shuffles of
    each round) and `e_r * W` partials, plus ~32 for the exchange's barrier
    and shared-memory round trip. The cheapest G, ties to the smaller."""
    if not flag("TILEC_REDUCE_STAGED", "1") or L <= 1:
        return None
    per = max(1, T // n_out)
    best: tuple[int, int] | None = None
    top = min(per, L, MAX_GROUP, T)
    size = 1
    while size <= top:
        rounds = -(-n_out // (T // size))
        if rounds <= MAX_ROUNDS:
            cost = rounds * (-(-L // size) + min(size, 32).bit_length() - 1) + e_r * max(1, size // 32)
            if best is None or cost < best[0]:
                best = (cost, size)
        size *= 2
    if best is None or e_r * L < 2 * best[0] + 32:
        return None
    return best[1]


@frozen
class _Rows:
    """One staged reduction's constants: the operation, the staged tile (at `off`, the row's step `step`,
    length L) and the groups (G threads an output, g this thread's index in its group)."""

    em: Any
    rop: R
    dt: DType
    off: int
    step: int
    L: int
    G: int
    g: str

    @property
    def is_arg(self) -> bool:
        return self.rop in (R.ARGMAX, R.ARGMIN)

    def combine(self, a: tuple[str, str], b: tuple[str, str]) -> tuple[str, str]:
        """Two (value, index) partials in one (the index only for argmax/argmin)."""
        if self.is_arg:
            return pick(self.em, self.rop, a, b, self.dt)
        return self.em.combine(self.rop, a[0], b[0], self.dt), "0"

    def tree(self, items: list[tuple[str, str]]) -> tuple[str, str]:
        while len(items) > 1:
            nxt = [self.combine(a, b) for a, b in zip(items[0::2], items[1::2], strict=False)]
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
        return items[0]

    def index(self, j: str | int) -> str:
        """i32: the row index g + j G (`j` a register or a constant)."""
        em, G, g = self.em, self.G, self.g
        jg = str(j * G) if isinstance(j, int) else em.emit(f"mul i32 {j}, {G}")
        return jg if g == "0" else g if jg == "0" else em.emit(f"add i32 {g}, {jg}")

    def element(self, start: str, j: int) -> tuple[str, str]:
        """Element g + j G of the row that starts at `start` + g step; the identity past its end."""
        em, G, step, ty = self.em, self.G, self.step, reg_ty(self.dt)
        at = start if j == 0 else em.emit(f"add i32 {start}, {j * G * step}")
        ok = None
        if (j + 1) * G > self.L:  # the last, partial step: live where g < L - j G
            ok = em.emit(f"icmp ult i32 {self.g}, {self.L - j * G}")
            at = em.emit(f"select i1 {ok}, i32 {at}, i32 {start}")
        v = em.smem_load(self.off, self.dt, at)
        if ok is not None:
            v = em.emit(f"select i1 {ok}, {ty} {v}, {ty} {identity(self.rop, self.dt)}")
        return v, self.index(j) if self.is_arg else "0"

    def partial(self, start: str) -> tuple[str, str]:
        """This thread's fold of its elements g, g + G, .. of a row: in U chains (a loop over whole steps of U
        elements where there are more than UNROLL, the rest unrolled), then a tree over the chains."""
        em, G, L, ty = self.em, self.G, self.L, reg_ty(self.dt)
        J = -(-L // G)
        U = min(CHAINS, J)
        chains: list[tuple[str, str]] = []
        first = 0
        if J > UNROLL:
            C = (L // G) // U
            first = C * U
            ident = identity(self.rop, self.dt)
            carried = [(ty, ident)] * U + ([("i32", "0")] * U if self.is_arg else [])

            def body(c: str, cur: list[str]) -> list[str]:
                at0 = em.emit(f"add i32 {start}, {em.emit(f'mul i32 {c}, {U * G * self.step}')}")
                j0 = em.emit(f"mul i32 {c}, {U}")
                got = []
                for u in range(U):
                    at = at0 if u == 0 else em.emit(f"add i32 {at0}, {u * G * self.step}")
                    v = em.smem_load(self.off, self.dt, at)
                    iv = self.index(em.emit(f"add i32 {j0}, {u}")) if self.is_arg else "0"
                    got.append(self.combine((cur[u], cur[U + u] if self.is_arg else "0"), (v, iv)))
                return [v for v, _ in got] + ([i for _, i in got] if self.is_arg else [])

            out = em.counted_loop(0, C, carried, body)
            chains = [(out[u], out[U + u] if self.is_arg else "0") for u in range(U)]
        for j in range(first, J):
            e = self.element(start, j)
            if len(chains) < U:
                chains.append(e)
            else:
                chains[j % U] = self.combine(chains[j % U], e)
        return self.tree(chains)

    def butterfly(self, part: tuple[str, str], acc_dt: DType) -> tuple[str, str]:
        """The group's lanes combined (every lane of the warp runs it: no branch around a shuffle)."""
        m = 1
        while m < min(self.G, 32):
            ov = self.em.shfl_xor(part[0], acc_dt, m)
            oi = self.em.shfl_xor(part[1], DType.I32, m) if self.is_arg else "0"
            part = self.combine(part, (ov, oi))
            m *= 2
        return part


def reduce_staged(em: Any, op: ir.Reduce) -> bool:
    """Emit `op` by groups of threads over its staged tile; False where `plan` keeps the serial loop."""
    x, r, axis = op.x, op.result, op.axis
    dt = x.dtype
    if dt is DType.BOOL:
        return False
    L = x.shape[axis]
    n_out = math.prod(r.shape)
    e_r = em.lay(r).E if r.shape else 1
    T = em.T
    G = plan(T, n_out, L, e_r)
    if G is None:
        return False
    # the bounds `plan` keeps, which the code below relies on: a group wider than the row or the block, or more
    # rounds, read past the staged row and raced on the partials (hrev33, with G forced)
    assert G & (G - 1) == 0 and G <= min(L, T, MAX_GROUP) and -(-n_out // (T // G)) <= MAX_ROUNDS, (G, L, T, n_out)
    is_arg = op.op in (R.ARGMAX, R.ARGMIN)
    acc_dt = DType.F32 if dt in (DType.F16, DType.BF16) else dt
    step = strides_of(x.shape)[axis]
    W = max(1, G // 32)  # warps an output: partials a reader folds
    Q = T // G  # outputs a round

    (off,) = em.to_smem([x], op.span)
    staged = -(-(math.prod(x.shape) * smem_size(dt)) // 16) * 16
    size_v = -(-(n_out * W * smem_size(acc_dt)) // 16) * 16 if (W > 1 or not is_arg) else 0
    off_v, off_i = staged, staged + size_v
    end = off_i + (-(-(n_out * W * 4) // 16) * 16 if is_arg else 0)
    em.need_smem(end, op.span)

    tid = em.tid0()
    g = em.emit(f"and i32 {tid}, {G - 1}") if G > 1 else "0"
    q = em.emit(f"lshr i32 {tid}, {G.bit_length() - 1}") if G > 1 else tid
    lane0 = em.emit(f"icmp eq i32 {em.emit(f'and i32 {g}, 31')}, 0") if G > 1 else None
    wslot = em.emit(f"lshr i32 {g}, 5") if W > 1 else None
    rows = _Rows(em, op.op, dt, off, step, L, G, g)
    for i in range(-(-n_out // Q)):
        o = q if i == 0 else em.emit(f"add i32 {q}, {i * Q}")
        live = em.emit(f"icmp ult i32 {o}, {n_out}") if (i + 1) * Q > n_out else None
        o = em.safe_index(live, o)
        # output o's row starts at (o / step) L step + o % step; this thread's first element g further
        if step == 1:
            base = em.emit(f"mul i32 {o}, {L}")
        else:
            hi, lo = em.emit(f"udiv i32 {o}, {step}"), em.emit(f"urem i32 {o}, {step}")
            base = em.emit(f"add i32 {em.emit(f'mul i32 {hi}, {L * step}')}, {lo}")
        gs = g if step == 1 or g == "0" else em.emit(f"mul i32 {g}, {step}")
        start = base if g == "0" else em.emit(f"add i32 {base}, {gs}")
        part = rows.butterfly(rows.partial(start), acc_dt)
        slot = o if W == 1 else em.emit(f"add i32 {em.emit(f'mul i32 {o}, {W}')}, {wslot}")
        go, jn = em.new_label("sw"), em.new_label("sx")
        em.cbr(em.and_all([lane0, live]) or "true", go, jn)
        em.label(go)
        if size_v:
            em.smem_store(off_v, acc_dt, slot, part[0])
        if is_arg:
            em.smem_store(off_i, DType.I32, slot, part[1])
        em.br(jn)
        em.label(jn)
    em.barrier()
    # the staged tile is read by now: a reduction next may write it without a barrier (`reduce.reduce_blocked`)
    em._red_mark = (em._bars, off_v if size_v else off_i, end)

    vals = []
    for _, _, f in em.out_slots(r):
        base = f if W == 1 else em.emit(f"mul i32 {f}, {W}")
        acc: tuple[str, str] | None = None
        for w in range(W):
            ix = base if w == 0 else em.emit(f"add i32 {base}, {w}")
            pv = em.smem_load(off_v, acc_dt, ix) if size_v else "0"
            pi = em.smem_load(off_i, DType.I32, ix) if is_arg else "0"
            acc = (pv, pi) if acc is None else rows.combine(acc, (pv, pi))
        assert acc is not None
        if is_arg:
            vals.append(em.cast(acc[1], DType.I32, r.dtype) if r.dtype is not DType.I32 else acc[1])
        else:
            vals.append(em.round_to(acc[0], dt))
    em.finish(r.shape, vals, r)
    return True


__all__ = ["plan", "reduce_staged"]
