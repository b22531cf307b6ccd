"""Code generation of `g.SmemFma` (`passes/pipeline_fma.py`): one ring stage
of an FMA GEMM, a register block of the accumulator a thread.

The accumulator's `Blocked` layout gives this thread the rows `tp0 + r_i`
and columns `tp1 + c_j` (`tp` its position, `r_i` / `c_j` constants; its
registers row-major over (i, j)). For each group of `v` k-steps the thread
reads A's values of its rows and B's of its columns with shared-memory
vector loads of `v` elements, then does the TM x TN x v FMAs (or an integer
multiply and add), k-step by k-step. Every load's address is the thread's
base for the operand plus the stage's offset plus a constant, so it is one
`ld.shared.v4 [reg + imm]`:

- K-contiguous operand (ring [rows, K'], rows padded): the vector at
  (row, k0 .. k0 + v - 1) of each of the thread's rows;
- M/N-contiguous operand (ring [K, rows]): the vector at (k, row .. row + v
  - 1) of each k-step and each of the thread's `v`-row runs (`spt` = v).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.llvm_types import mem_ty, reg_ty
from tilelang.backend.gpu import nodes as g


def emit_op(em: Any, op: object) -> bool:
    """Emit one of this module's ops; False for any other op."""
    if isinstance(op, g.SmemFma):
        smem_fma(em, op)
        return True
    if isinstance(op, g.FmaPartsSum):
        parts_sum(em, op)
        return True
    return False


def part_of(em: Any, view: Any, parts: int) -> str:
    """i32: which of the `parts` copies of the tile this thread's registers hold in a split-K accumulator's
    layout (`pipeline_fma.split_layout`): along each dim whose threads wrap past the tile (replicas), the
    thread's unwrapped position over the tile's extent, dim 0's digit first (0 .. parts - 1)."""
    part, scale = "0", 1
    for d, m in enumerate(view.dims):
        if not m.repl:
            continue
        r = em.emit(f"lshr i32 {view.raw(em, d)}, {m.extent.bit_length() - 1}")
        part = r if part == "0" else em.emit(f"add i32 {part}, {em.emit(f'mul i32 {r}, {scale}')}")
        scale *= m.cov // m.extent
    assert scale == parts, (view, parts)
    return part


def _runs(consts: list[int]) -> list[int]:
    """The distinct values of `consts` in first-seen order."""
    return list(dict.fromkeys(consts))


class _Operand:
    """One operand's ring: this thread's `count` rows (A) or columns (B) at `tp + consts[i]`."""

    def __init__(self, em: Any, ring: Any, tp: str, consts: list[int], kmajor: bool, v: int) -> None:
        self.em, self.ring, self.consts, self.kmajor, self.v = em, ring, consts, kmajor, v
        self.dt = ring.dtype
        self.item = 8 if self.dt.bits == 64 else self.dt.itemsize
        self.ty = reg_ty(self.dt)
        self.mty = mem_ty(self.dt)  # (f16 / bf16: read as such from the ring, widened to the f32 register)
        self.cols = ring.shape[2]  # the ring's row length, padding included
        ref = em.env[ring.id]
        self.off, self.stage_bytes = ref.offset, ref.stage_bytes
        # this thread's first element: row tp (K-contiguous) or column tp (the other)
        scale = self.cols * self.item if kmajor else self.item
        self.base = tp if scale == 1 else em.emit(f"mul i32 {tp}, {scale}")
        self.ptr = ""

    def skip(self, part: str, ks: int) -> None:
        """Start at k-step `part * ks` of each stage (a split-K part's share)."""
        step = ks * (self.item if self.kmajor else self.cols * self.item)
        self.base = self.em.emit(f"add i32 {self.base}, {self.em.emit(f'mul i32 {part}, {step}')}")

    def at_stage(self, stage: str) -> None:
        em = self.em
        s = em.emit(f"add i32 {em.emit(f'mul i32 {stage}, {self.stage_bytes}')}, {self.off}")
        self.ptr = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {em.emit(f'add i32 {self.base}, {s}')}")

    def _vec(self, byte: int, v: int) -> list[str]:
        em = self.em
        p = self.ptr if byte == 0 else em.emit(f"getelementptr i8, ptr addrspace(3) {self.ptr}, i32 {byte}")
        mt = self.mty
        if v == 1:
            got = [em.emit(f"load {mt}, ptr addrspace(3) {p}, align {self.item}")]
        else:
            vt = f"<{v} x {mt}>"
            x = em.emit(f"load {vt}, ptr addrspace(3) {p}, align {v * self.item}")
            got = [em.emit(f"extractelement {vt} {x}, i32 {e}") for e in range(v)]
        return got if mt == self.ty else [em.emit(f"fpext {mt} {h} to {self.ty}") for h in got]

    def group(self, k0: int, size: int) -> list[list[str]] | None:
        """K-contiguous: vals[kk][i], the value of k-step k0 + kk (kk < `size`) at this thread's
        i-th row (column), one vector load a row for the group; else None (`step` loads each k-step)."""
        if not self.kmajor:
            return None
        vals = [[""] * len(self.consts) for _ in range(size)]
        for i, c in enumerate(self.consts):
            got = self._vec((c * self.cols + k0) * self.item, size)
            for kk in range(size):
                vals[kk][i] = got[kk]
        return vals

    def step(self, k: int) -> list[str]:
        """The values of k-step `k` at this thread's rows (columns) of an M/N-contiguous
        ring, a vector load a run of `v`: loaded where they are used, so that a group's
        values of other k-steps do not hold registers meanwhile."""
        vals: list[str] = []
        for i0 in range(0, len(self.consts), self.v):
            vals += self._vec((k * self.cols + self.consts[i0]) * self.item, self.v)
        return vals


class _Group:
    """The values of one group of `v` k-steps of a stage: a K-contiguous operand's by one vector load a row
    for the group, an M/N-contiguous one's k-step by k-step (`need`), where they are used."""

    def __init__(self, A: _Operand, B: _Operand, k0: int, v: int) -> None:
        self.ops, self.k0, self.v = (A, B), k0, v
        self.grp = [x.group(k0, v) for x in self.ops]
        self.steps: list[dict[int, list[str]]] = [{}, {}]

    def need(self, kk: int) -> tuple[list[str], list[str]]:
        out = []
        for n, x in enumerate(self.ops):
            g_ = self.grp[n]
            if g_ is not None:
                out.append(g_[kk])
            else:
                if kk not in self.steps[n]:
                    self.steps[n][kk] = x.step(self.k0 + kk)
                out.append(self.steps[n][kk])
        return out[0], out[1]

    def first(self) -> list[str]:
        """The registers the first k-step needs (a prefetch carries them into the next iteration)."""
        regs: list[str] = []
        for n, x in enumerate(self.ops):
            g_ = self.grp[n]
            regs += [r for row in g_ for r in row] if g_ is not None else self.need(0)[n]
        return regs

    @staticmethod
    def carried(A: _Operand, B: _Operand, k0: int, v: int, regs: list[str]) -> _Group:
        """A group whose first registers came from the previous iteration (`first`'s order)."""
        grp = _Group.__new__(_Group)
        grp.ops, grp.k0, grp.v = (A, B), k0, v
        grp.grp, grp.steps = [None, None], [{}, {}]
        at = 0
        for n, x in enumerate((A, B)):
            cnt = len(x.consts)
            if x.kmajor:
                flat = regs[at:at + cnt * v]
                grp.grp[n] = [flat[kk * cnt:(kk + 1) * cnt] for kk in range(v)]
                at += cnt * v
            else:
                grp.steps[n][0] = regs[at:at + cnt]
                at += cnt
        return grp


def cp_async_transposed(em: Any, op: g.CpAsyncTile) -> None:
    """The [R, K] tile at `op.coords` (R = `op.cols`) into stage `op.stage` of the [K, R] ring `op.dst`, element
    (r, k) at (k, r). A thread copies a 16-byte run of one row (4 f32 / 2 8-byte k-steps) by one `cp.async.ca`
    an element, all at immediate offsets from one source and one shared address (`[p + 4 i]` -> `[q + R 4 i]`):
    the per-element copies (hf32's try) kept an address a copy live through the loop (211 registers at 64 x 64
    x 16 against 168). Consecutive threads take consecutive rows, so a warp's 32 shared stores of one k fall in
    32 banks; a row's 16 bytes are one sector's half, its other half the next run's (L1-cached: `.ca`). Source
    size 0 past the tensor's edge (the interpreter's zeros; a run's first element out means all are)."""
    _, K, R = op.dst.shape
    item = 8 if op.dst.dtype.bits == 64 else op.dst.dtype.itemsize
    run = 16 // item if K % (16 // item) == 0 else 1  # (1: a [K, 1] column into one ring row, an element a copy)
    info = em.tensors[op.tensor]
    *lead, r0, c0 = (em.scalar(v) for v in op.coords)
    ref = em.env[op.dst.id]
    stage = em.emit(f"add i32 {em.emit(f'mul i32 {em.scalar(op.stage)}, {ref.stage_bytes}')}, {ref.offset}")
    name = f"llvm.nvvm.cp.async.ca.shared.global.{item}.s"
    em.declare(f"declare void @{name}(ptr addrspace(3), ptr addrspace(1), i32)")
    st = em.tensor_strides(info)
    def wide(x: str, ext: str = "sext") -> str:
        return em.emit(f"{ext} i32 {x} to i64")

    first = em.emit(f"add i64 {em.emit(f'mul i64 {wide(r0)}, {st[-2]}')}, {wide(c0)}")
    for x, stride in zip(lead, st, strict=False):
        first = em.emit(f"add i64 {first}, {em.emit(f'mul i64 {wide(x)}, {stride}')}")
    tile_ptr = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {info.base}, i64 {first}")
    runs = R * (K // run)
    T = em.T
    for j in range(-(-runs // T)):
        u = em.emit(f"add i32 {em.tid0()}, {j * T}") if j else em.tid0()
        after = None
        if (j + 1) * T > runs:
            go, after = em.new_label("tc"), em.new_label("td")
            em.cbr(em.emit(f"icmp ult i32 {u}, {runs}"), go, after)
            em.label(go)
        r = em.emit(f"urem i32 {u}, {R}")
        k = em.emit(f"mul i32 {em.emit(f'udiv i32 {u}, {R}')}, {run}")
        r64, k64 = wide(r, "zext"), wide(k, "zext")
        local = em.emit(f"add i64 {em.emit(f'mul i64 {r64}, {st[-2]}')}, {k64}")
        at = em.emit(f"getelementptr {em.mty(info)}, ptr addrspace(1) {tile_ptr}, i64 {local}")
        row, col = em.emit(f"add i32 {r0}, {r}"), em.emit(f"add i32 {c0}, {k}")
        oks = [em.in_bounds(info, [*lead, row, col if i == 0 else em.emit(f"add i32 {col}, {i}")])
               for i in range(run)]
        src = at if oks[0] is None else em.emit(f"select i1 {oks[0]}, ptr addrspace(1) {at}, "
                                                f"ptr addrspace(1) {info.base}")
        at_k = em.emit(f"add i32 {em.emit(f'mul i32 {k}, {R}')}, {r}")
        dst = em.emit(f"add i32 {stage}, {em.emit(f'mul i32 {at_k}, {item}')}")
        for i, ok in enumerate(oks):
            s_i = src if i == 0 else em.emit(f"getelementptr i8, ptr addrspace(1) {src}, i64 {i * item}")
            d_i = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {dst}")
            if i:
                d_i = em.emit(f"getelementptr i8, ptr addrspace(3) {d_i}, i32 {i * R * item}")
            size = str(item) if ok is None else em.emit(f"select i1 {ok}, i32 {item}, i32 0")
            em.stmt(f"call void @{name}(ptr addrspace(3) {d_i}, ptr addrspace(1) {s_i}, i32 {size})")
        if after is not None:
            em.br(after)
            em.label(after)


def _operands(em: Any, op: g.SmemFma) -> tuple[_Operand, _Operand, int, int]:
    view = em.lay(op.result)
    rows = _runs([s[0] for s in view.slots])
    cols = _runs([s[1] for s in view.slots])
    assert list(view.slots) == [(r, c) for r in rows for c in cols], view
    v = min(4, 16 // (8 if op.a.dtype.bits == 64 else op.a.dtype.itemsize))  # `pipeline_fma.vec_of`
    A = _Operand(em, op.a, view.tp(em, 0), rows, op.a_mk, v)
    vb = v if op.b_nk else view.layout.size_per_thread[1]  # (N-contiguous: a run a thread, 1 or 2 tokens' narrower)
    B = _Operand(em, op.b if op.wide is None else op.wide, view.tp(em, 1), cols, op.b_nk, vb)
    if op.parts > 1:
        part = part_of(em, view, op.parts)
        A.skip(part, op.k // op.parts)
        B.skip(part, op.k // op.parts)
    return A, B, v, len(cols)


def prefetch_init(em: Any, op: g.SmemFma) -> tuple[list[str], list[str]]:
    """In a loop's preheader: (types, registers) of the first k-step's values of stage 0 (a
    prefetching `SmemFma` carries them from one iteration into the next)."""
    A, B, v, _ = _operands(em, op)
    A.at_stage("0")
    B.at_stage("0")
    regs = _Group(A, B, 0, v).first()
    return [A.ty] * len(regs), regs


def _widen(em: Any, op: g.SmemFma, stage: str) -> None:
    """Stage `stage` of B's 2-byte ring into the f32 buffer `op.wide`, 4 values a thread at a time (an 8-byte
    shared load, 4 widenings, a 16-byte store; the stage's padding too), then a CTA barrier: values that many
    threads read are widened once a CTA instead of once a thread (`pipeline_fma._wide`). The next write waits
    for every thread's reads at the next iteration's barrier (the loop's wait at its top)."""
    _, rows, cols = op.b.shape
    chunks = rows * cols // 4
    src, dst = em.env[op.b.id], em.env[op.wide.id]
    base = em.emit(f"add i32 {em.emit(f'mul i32 {stage}, {src.stage_bytes}')}, {src.offset}")
    mt, vt = mem_ty(op.b.dtype), "<4 x float>"
    for j in range(-(-chunks // em.T)):
        u = em.emit(f"add i32 {em.tid0()}, {j * em.T}") if j else em.tid0()
        after = None
        if (j + 1) * em.T > chunks:
            go, after = em.new_label("wd"), em.new_label("wdx")
            em.cbr(em.emit(f"icmp ult i32 {u}, {chunks}"), go, after)
            em.label(go)
        at = em.emit(f"add i32 {base}, {em.emit(f'mul i32 {u}, 8')}")
        p = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {at}")
        x = em.emit(f"load <4 x {mt}>, ptr addrspace(3) {p}, align 8")
        w = "poison"
        for e in range(4):
            h = em.emit(f"fpext {mt} {em.emit(f'extractelement <4 x {mt}> {x}, i32 {e}')} to float")
            w = em.emit(f"insertelement {vt} {w}, float {h}, i32 {e}")
        to = em.emit(f"add i32 {dst.offset}, {em.emit(f'mul i32 {u}, 16')}")
        q = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {to}")
        em.stmt(f"store {vt} {w}, ptr addrspace(3) {q}, align 16")
        if after is not None:
            em.br(after)
            em.label(after)
    em.barrier()


def smem_fma(em: Any, op: g.SmemFma) -> None:
    A, B, v, TN = _operands(em, op)
    stage = em.scalar(op.stage)
    if op.wide is not None:
        _widen(em, op, stage)
    A.at_stage(stage)
    B.at_stage(stage if op.wide is None else "0")
    acc = list(em.tile(op.acc))
    in_dt, acc_dt = op.a.dtype, op.acc.dtype
    aty = reg_ty(acc_dt)
    groups = op.k // op.parts // v

    def widen(x: str) -> str:
        return x if in_dt is acc_dt else em.cast(x, in_dt, acc_dt)

    for gi in range(groups):
        k0 = gi * v
        grp = _Group.carried(A, B, k0, v, em.loop_carried_in(op)) if gi == 0 and op.prefetch >= 0 \
            else _Group(A, B, k0, v)
        if op.prefetch >= 0 and gi == groups - 1:
            # every value of this stage read before the barrier (past it, a warp's next iteration may copy
            # into this stage); then the next stage's first values, carried into the next iteration
            for kk in range(v):
                grp.need(kk)
            em.declare("declare void @llvm.nvvm.cp.async.wait.group(i32)")
            em.stmt(f"call void @llvm.nvvm.cp.async.wait.group(i32 {op.prefetch})")
            em.barrier()
            up = em.emit(f"add i32 {stage}, 1")
            nstage = em.emit(f"select i1 {em.emit(f'icmp eq i32 {up}, {op.a.shape[0]}')}, i32 0, i32 {up}")
            NA, NB, _, _ = _operands(em, op)
            NA.at_stage(nstage)
            NB.at_stage(nstage)
            em.loop_carried_out(op, _Group(NA, NB, 0, v).first())
        for kk in range(v):
            a_k, b_k = (list(map(widen, x)) for x in grp.need(kk))
            for i, x in enumerate(a_k):
                for j, y in enumerate(b_k):
                    n = i * TN + j
                    if acc_dt.is_float:
                        acc[n] = em.fcall("fma", aty, [x, y, acc[n]])
                    else:
                        acc[n] = em.emit(f"add {aty} {acc[n]}, {em.emit(f'mul {aty} {x}, {y}')}")
    em.env[op.result.id] = acc


def parts_sum(em: Any, op: g.FmaPartsSum) -> None:
    """`op.result` = the sum of `op.acc`'s copies in part order: each thread writes its registers to
    [part, row, col] of the f32 scratch area, then, past a barrier, adds the `parts` values of each of its slots
    (every copy of a slot sums the same values in the same order, so the replicas stay equal)."""
    view = em.lay(op.acc)
    M, N = op.acc.shape
    vals = list(em.tile(op.acc))
    aty = reg_ty(op.acc.dtype)
    item = op.acc.dtype.itemsize
    em.scratch_barrier(em.scratch_fresh())
    em.need_smem(op.parts * M * N * item, op.span)
    tp0, tp1 = view.tp(em, 0), view.tp(em, 1)
    mine = em.emit(f"add i32 {em.emit(f'mul i32 {part_of(em, view, op.parts)}, {M}')}, {tp0}")
    mine = em.emit(f"add i32 {em.emit(f'mul i32 {mine}, {N}')}, {tp1}")  # this thread's first slot, part included
    first = em.emit(f"add i32 {em.emit(f'mul i32 {tp0}, {N}')}, {tp1}")  # ... in part 0

    def at(base: str, elem: int) -> str:
        idx = base if elem == 0 else em.emit(f"add i32 {base}, {elem}")
        return em.emit(f"getelementptr {aty}, ptr addrspace(3) {em.scratch}, i32 {idx}")

    for x, (r, c) in zip(vals, view.slots, strict=True):
        em.stmt(f"store {aty} {x}, ptr addrspace(3) {at(mine, r * N + c)}, align {item}")
    em.barrier()
    out = []
    for r, c in view.slots:
        acc = ""
        for p in range(op.parts):
            x = em.emit(f"load {aty}, ptr addrspace(3) {at(first, p * M * N + r * N + c)}, align {item}")
            add = "fadd" if op.acc.dtype.is_float else "add"
            acc = x if not acc else em.emit(f"{add} {aty} {acc}, {x}")
        out.append(acc)
    em.env[op.result.id] = out


__all__ = ["emit_op", "part_of", "parts_sum", "prefetch_init", "smem_fma"]
