"""Code generation of `g.Stamp`: cycle stamps inside a kernel, for measuring
where a persistent attention tile's time goes (`TILEC_ATTN_STAMPS=1`;
`benchmarks/probes/attention_stamps.py` reads them).

The stamps live in a module global, `@tilec_stamps`, a table of u64
`%clock64` values (the SM's cycle counter: stamps of one CTA compare, stamps
of two SMs do not), indexed

    ((CTA % CTAS) * TILES + min(tile, TILES - 1)) * UNITS + unit) * SLOTS + slot

where `unit` is the stamping thread's warpgroup (`%tid / 128`: the consumer
warpgroups first, then the producer's), and only each warpgroup's first
thread (`%tid % 128 == 0`) writes. The host reads the table with
`cuModuleGetGlobal` after a launch (and zeroes it before the next). A
kernel without stamps has no global and no code from here.

Invariant: this module imports no CUDA library and builds text only.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.gpu import nodes as g

GLOBAL = "tilec_stamps"
CTAS = 256
TILES = 64
UNITS = 4
SLOTS = 16  # 0-6 the tile's phases; 8-13 inside the chained first iteration (`TILEC_ATTN_STAMPS=2`)
ENTRIES = CTAS * TILES * UNITS * SLOTS


def emit_op(em: Any, op: object) -> bool:
    """Emit a `g.Stamp`; False for any other op."""
    if not isinstance(op, g.Stamp):
        return False
    em.declare(f"@{GLOBAL} = addrspace(1) global [{ENTRIES} x i64] zeroinitializer, align 8")
    em.declare("declare i64 @llvm.nvvm.read.ptx.sreg.clock64()")
    em.declare("declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()")
    lane = em.emit("and i32 %tid, 127")
    first = em.emit(f"icmp eq i32 {lane}, 0")
    go, done = em.new_label("stamp"), em.new_label("stamped")
    em.cbr(first, go, done)
    em.label(go)
    t = em.emit('call i64 asm sideeffect "mov.u64 $0, %clock64;", "=l"()')
    cta = em.emit(f"and i32 {em.call('i32', 'llvm.nvvm.read.ptx.sreg.ctaid.x', '')}, {CTAS - 1}")
    tile = em.scalar(op.tile)
    tl = em.emit(f"call i32 @llvm.umin.i32(i32 {tile}, i32 {TILES - 1})")
    em.declare("declare i32 @llvm.umin.i32(i32, i32)")
    unit = em.emit(f"call i32 @llvm.umin.i32(i32 {em.emit('lshr i32 %tid, 7')}, i32 {UNITS - 1})")
    i = em.emit(f"mul i32 {cta}, {TILES}")
    i = em.emit(f"add i32 {i}, {tl}")
    i = em.emit(f"mul i32 {i}, {UNITS}")
    i = em.emit(f"add i32 {i}, {unit}")
    i = em.emit(f"mul i32 {i}, {SLOTS}")
    i = em.emit(f"add i32 {i}, {op.slot}")
    p = em.emit(f"getelementptr i64, ptr addrspace(1) @{GLOBAL}, i32 {i}")
    em.stmt(f"store volatile i64 {t}, ptr addrspace(1) {p}, align 8")
    em.br(done)
    em.label(done)
    return True
