"""Code generation of `g.TmaStore` and `g.TmaStoreWait`: an accumulator-layout
tile stored through shared memory by TMA (FlashAttention-3's epilogue).

Each consumer warpgroup (or warp: `TmaStore.unit`) writes its rows of the
value, as 4-byte f16/bf16 pairs, into its own rows of a buffer laid out as
TMA reads it (64-column slabs of 128-byte rows, 128-byte swizzle: row r's
16-byte chunk c at chunk c ^ (r % 8)); a thread's pairs of one 8-column
group land in 32 distinct banks across its warp (8 rows, 4 lanes). Then
every thread fences the async proxy, the unit meets (its named barrier, or
`bar.warp.sync`), and its first thread issues one `cp.async.bulk.tensor`
store a slab and commits them as one bulk group: the tensor map's bounds
clip the rows past the tensor's edge, so no thread tests a bound. Nobody
waits for the global writes; the buffer is written again only after
`TmaStoreWait` (the issuing thread's `cp.async.bulk.wait_group.read 0`) and
whatever orders it before the next writer (the pass's barriers, or the Q
buffer's and the ring's mbarriers).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.codegen.accview import AccView, _pair
from tilelang.backend.codegen.llvm_types import param_reg
from tilelang.backend.gpu import nodes as g


def emit_op(em: Any, op: object) -> bool:
    """Emit one of this module's ops; False for any other op."""
    match op:
        case g.TmaStore():
            tma_store(em, op)
            return True
        case g.TmaStoreWait(pred=p):
            if p is None:
                wait_read(em)
                return True
            go, done = em.new_label("tsw"), em.new_label("tswd")
            em.cbr(em.scalar(p), go, done)
            em.label(go)
            wait_read(em)
            em.br(done)
            em.label(done)
            return True
    return False


def wait_read(em: Any) -> None:
    """This thread's TMA stores have read their shared memory."""
    em.declare("declare void @llvm.nvvm.cp.async.bulk.wait.group.read(i32 immarg)")
    em.stmt("call void @llvm.nvvm.cp.async.bulk.wait.group.read(i32 0)")


def fence(em: Any) -> None:
    """This thread's shared-memory writes made visible to the async proxy (TMA)
    (the store's own name for `proxy_fence`: tests remove it here alone to show
    the simulator refuses a TMA store without it)."""
    em.proxy_fence()


def _barrier(em: Any, group: str, unit: int) -> None:
    """The threads of one issuing unit meet: a warpgroup at its named barrier, a warp at `bar.warp.sync`."""
    if unit == 32:
        em.declare("declare void @llvm.nvvm.bar.warp.sync(i32)")
        em.stmt("call void @llvm.nvvm.bar.warp.sync(i32 -1)")
        return
    em.declare("declare void @llvm.nvvm.barrier.cta.sync.aligned.count(i32, i32)")
    bid = em.emit(f"add i32 {group}, {g.STORE_BARRIER}")
    em.stmt(f"call void @llvm.nvvm.barrier.cta.sync.aligned.count(i32 {bid}, i32 128)")


def swizzled_base(em: Any, view: AccView, start: str, group: bool = False) -> tuple[str, str, str]:
    """This thread's place in a staging buffer at byte `start` of `view`'s rows, laid out as TMA moves it
    (64-column slabs of 128-byte rows, 128-byte swizzle): (its row's address before the swizzle and its
    column pair's offset, its row within 8 shifted to the swizzle's XOR of 16-byte chunks, and with `group`
    its warpgroup, emitted between the warp and the lane as the store always had it; else ""). Shared with
    `smem_tile`, which reads the places this writes; `pair_place` gives each pair's address."""
    t = em.role_tid
    warp = em.emit(f"lshr i32 {t}, 5")
    grp = em.emit(f"lshr i32 {t}, 7") if group else ""
    lane = em.emit(f"and i32 {t}, 31")
    x = em.emit(f"lshr i32 {lane}, 2")  # the thread's row within 8: the swizzle's XOR
    xs = em.emit(f"shl i32 {x}, 4")
    row = em.emit(f"add i32 {em.emit(f'mul i32 {warp}, {view.WM}')}, {x}")
    q4 = em.emit(f"shl i32 {em.emit(f'and i32 {lane}, 3')}, 2")
    base = em.emit(f"add i32 {em.emit(f'mul i32 {row}, 128')}, {em.emit(f'add i32 {q4}, {start}')}")
    return base, xs, grp


def pair_place(em: Any, view: AccView, base: str, xs: str, chunk: dict[int, str], k: int) -> str:
    """The `ptr addrspace(3)` of this thread's pair k (registers 2k, 2k + 1) of `view` at `swizzled_base`'s
    (`base`, `xs`); `chunk` keeps each 8-column group's XOR for the pairs after it."""
    cr, cc = view.slots[2 * k]
    slab, i = divmod(cc, 64)
    i //= 8
    if i not in chunk:
        chunk[i] = em.emit(f"xor i32 {xs}, {i << 4}")
    at = em.emit(f"add i32 {base}, {em.emit(f'add i32 {chunk[i]}, {slab * view.M * 128 + cr * 128}')}")
    return str(em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {at}"))


def tma_store(em: Any, op: g.TmaStore) -> None:
    view = em.lay(op.value)
    assert isinstance(view, AccView) and view.rdim is not None and view.cdim is not None, view
    info = em.tensors[op.tensor]
    dt = info.param.dtype
    mt, es = em.mty(info), em.msize(info)
    assert es == 2 and view.N % 64 == 0, (mt, view.N)
    M, N, W = view.M, view.N, view.layout.warps
    groups = W // 4
    rows_g = M * op.unit // (32 * W)  # the rows one unit stores (a warpgroup's 64, a warp's 16)
    ref = em.env[op.buf.id]
    start = str(ref.offset)  # the buffer's first byte: the stage's, or `alt`'s where the loop did not run
    if op.stage is not None:
        start = em.emit(f"add i32 {em.emit(f'mul i32 {em.scalar(op.stage)}, {ref.stage_bytes}')}, {ref.offset}")
    if op.alt is not None:
        start = em.emit(f"select i1 {em.scalar(op.ran)}, i32 {start}, i32 {em.env[op.alt.id].offset}")
    t = em.role_tid
    base, xs, group = swizzled_base(em, view, start, group=True)
    unit = em.emit(f"lshr i32 {t}, {op.unit.bit_length() - 1}")  # the thread's issuing unit
    if op.first == "group":  # the previous store has read the buffer (the issuing thread waited)
        _barrier(em, group, op.unit)
    elif op.first == "all":  # every warpgroup's products are done with the stage; the generic proxy takes it
        em.named_barrier(1, 128 * groups)
        fence(em)
    regs = em.tile(op.value)
    mvals = [em.reg_to_mem(r, dt, mt) for r in regs]
    chunk: dict[int, str] = {}
    for k in range(len(regs) // 2):
        ptr = pair_place(em, view, base, xs, chunk, k)
        vec = _pair(em, regs[2 * k:2 * k + 2], mvals[2 * k:2 * k + 2], mt)
        em.stmt(f"store <2 x {mt}> {vec}, ptr addrspace(3) {ptr}, align 4")
    fence(em)
    _barrier(em, group, op.unit)
    lead = em.emit(f"icmp eq i32 {em.emit(f'and i32 {t}, {op.unit - 1}')}, 0")
    go, done = em.new_label("tst"), em.new_label("tstd")
    em.cbr(lead, go, done)
    em.label(go)
    rank = len(op.coords)
    name = f"llvm.nvvm.cp.async.bulk.tensor.s2g.tile.{rank}d"
    em.declare(f"declare void @{name}(ptr addrspace(3), ptr, {'i32, ' * rank}i64, i1 immarg)")
    coords = [em.scalar(c) for c in op.coords]
    r0 = em.emit(f"add i32 {coords[view.rdim]}, {em.emit(f'mul i32 {unit}, {rows_g}')}")
    gbytes = em.emit(f"mul i32 {unit}, {rows_g * 128}")
    for slab in range(N // 64):
        cs = list(coords)
        cs[view.rdim] = r0
        cs[view.cdim] = em.emit(f"add i32 {coords[view.cdim]}, {slab * 64}")
        off = em.emit(f"add i32 {gbytes}, {em.emit(f'add i32 {start}, {slab * M * 128}')}")
        src = em.emit(f"getelementptr i8, ptr addrspace(3) @smem, i32 {off}")
        args = ", ".join(f"i32 {c}" for c in reversed(cs))  # innermost first
        em.stmt(f"call void @{name}(ptr addrspace(3) {src}, ptr {param_reg(op.desc)}, {args}, i64 0, i1 false)")
    em.declare("declare void @llvm.nvvm.cp.async.bulk.commit.group()")
    em.stmt("call void @llvm.nvvm.cp.async.bulk.commit.group()")
    em.br(done)
    em.label(done)
