"""Notes on a loop the Hopper attention pipeline takes at a cost its blocks or its spelling chose.

The pipeline takes any attention loop it can run (`attention_match`), at any of its block shapes and in any
spelling of the softmax, and refuses only what it cannot run: so a user who picks 192 x 128 at D = 128, or
writes `exp` where std::attention writes `exp2`, gets a correct kernel at a third or three quarters of the
speed, with no word. These notes say it (`PassContext.advise`: `tilec emit --explain`, `TILEC_EXPLAIN=1`),
each with the cause and what runs faster:

- the consumer threads' registers: S and P of a block (the rotated loop holds the next S beside this P) and
  O, about BN / 2 + BN / 4 + Dv / 2 + 32 a thread, against what `pipeline.role_registers` leaves C consumer
  warpgroups (ptxas 13, sm_90a: 192 x 128 spills 1,572 B at D = 128, 128 x 256 352 B and 684 B; 128 x 128 none;
  192 x 128 at D = 64, S 64 + P 32 + O 32, fits 160 with R157 in the key loop, 4 B spilled once a tile: hattn9);
- BM = 192: three consumer warpgroups of 160 registers a thread, beside which the persistent walk's key split and
  the short keys' chained variant do not fit (`attention_split.roomy`), and S_q cut into 192-row blocks;
- a K/V ring of one stage (128 x 256 at D = 128): each block's copy waits for the products before it;
- BM = 64: one consumer warpgroup, each K/V block copied for 64 query rows, no second warpgroup's softmax
  under the tensor cores;
- BN = 64: twice the key blocks of BN = 128, each with its ring wait, row max and sum shuffles and rescale;
- the scores scaled before their max (`mma(q, k.transpose(), zeros) * scale`, `scaled_scores`): an f32 multiply an
  element of every key block ahead of the max and the exponent; taking the max of the unscaled scores and folding
  the scale into the exponent by one `fma` (std::attention's spelling, `exp2(fma(s, c, -mn))`) saves it, and
  `exp`'s x * log2(e) with it where the loop writes `exp` (ptxas 13, 128 x 64, D = 64: cliffs.py's `attn` key loop
  414 SASS instructions, `attn_fma` 348: `FMA_SASS`);
- `exp` of the scores: an online softmax's `exp(s - mn)` (<= 0 by construction, `codegen/arith.
  nonpositive_exp_args`) is ex2.approx(x * log2(e)) (`fastmath.exp_nonpos_plain`), one multiply an element more
  than `exp2` with log2(e) in the scale (`benchmarks/probes/attn_spellings_sass.py`, 128 x 128, D = 128: the
  key loop 608 SASS instructions against 543, 0.89x SDPA against 0.93x on an H100; 941 with the error term,
  0.81x, 1,139 before `fastmath.exp_ln2`); any
  other `exp` keeps its error term (`codegen/arith.fexp_ln2`): 4 instructions an element more than `exp2`.

The speeds quoted are `benchmarks/cliffs.py`'s on an H100 (2026-12-06, call 8, and call 13 for 192 x 128:
S = 2,048, f16, against PyTorch's SDPA in the same process).
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import fastmath
from tilelang.backend.codegen.arith import nonpositive_exp_args
from tilelang.ir import nodes as ir

from .. import nodes as g

# std::attention's time against SDPA at (BM, BN, D), cliffs.py, H100, 2026-12-06 call 8 (192 x 128: call 13, with
# the producer at 24 registers; 0.33x and 0.79x at 40)
MEASURED = {
    (128, 128, 128): 0.99, (128, 64, 128): 0.88, (64, 128, 128): 0.75, (128, 256, 128): 0.64, (192, 128, 128): 0.89,
    (128, 128, 64): 0.96, (128, 64, 64): 0.82, (64, 128, 64): 0.64, (128, 256, 64): 0.54, (192, 128, 64): 0.90,
}
# the same loop with `exp` (and the scale on the scores) against `exp2` with log2(e) in the scale, 128 x 128, D = 128
# (call 17, H100, with the softmax's exp plain: `fastmath.exp_nonpos_plain`), and `exp` with its error term (the
# final call of the 09:49 session, against 0.92)
EXP_MEASURED = (0.89, 0.93)
EXP_TERM_MEASURED = 0.81
# the scores scaled before their max: cliffs.py's `attn` and `attn_fma` key loops (ptxas 13, SASS instructions, f16)
# at 128 x 64, D = 64 and 128 x 128, D = 128 (remeasured 2026-12-07 with hpromote's start defaults,
# TILEC_MBAR_ONE_INIT and TILEC_ATTN_DIVS_IN_ROLE: 128 x 128 was 745 -> 613 at hattn3's measurement, 753 -> 620 at
# fbb61911); not yet timed on a GPU (cliffs.py cases `user attn_fma`)
FMA_SASS = {(128, 64, 64): (414, 348), (128, 128, 128): (754, 621)}


def need_registers(BN: int, Dv: int) -> int:
    """About how many registers a consumer thread of the rotated loop holds: S and P of a block, O, the rest."""
    return BN // 2 + BN // 4 + Dv // 2 + 32


def _faster(BM: int, BN: int, D: int) -> str:
    here, best = MEASURED.get((BM, BN, D)), MEASURED.get((128, 128, D))
    if here is None or best is None:
        return "BM = BN = 128 (std::attention's tuning) runs faster"
    return (f"BM = BN = 128 (std::attention's tuning) ran {best}x SDPA at D = {D} where BM = {BM}, BN = {BN} ran "
            f"{here}x (H100, benchmarks/cliffs.py)")


def advise(p: Any, C: int, regs: int, ctx: Any, fast_math: bool = False) -> None:
    """The notes for plan `p` (`attention_match.AttnPlan`) run by C consumer warpgroups of `regs` registers
    (`fast_math`: the kernel's hint, every exp without its error term)."""
    BM, BN = p.BM, p.BN
    D = int(p.s_dot.a.shape[1])
    Dv = int(p.o_dot.result.shape[1])
    span = p.loop.span
    help = _faster(BM, BN, D)
    need = need_registers(BN, Dv)
    if (BM, BN) != (128, 128) and need > regs:
        ctx.advise(span, f"its consumer threads hold S, P and O in registers, about {need} at BM = {BM}, "
                   f"BN = {BN}, D = {Dv}, where {C} consumer warpgroups leave {regs}: they spill to local memory",
                   help)
    if C == 3:
        ctx.advise(span, f"BM = {BM} gives three consumer warpgroups of {regs} registers a thread: the persistent "
                   "walk's key split of its last round and the short keys' chained variant do not fit beside them, "
                   f"and the query rows are cut into {BM}-row blocks (the last one padded)", help)
    if p.stages == 1:
        ctx.advise(span, f"one stage of K and V fits beside Q at BN = {BN}, D = {D}: each key block's copy waits "
                   "for the products before it", help)
    if BM == 64:
        ctx.advise(span, "BM = 64 gives one consumer warpgroup: each K/V block is copied for 64 query rows, and no "
                   "second warpgroup's softmax runs under the tensor cores", help)
    if BN < 128 and BM >= 128:
        ctx.advise(span, f"BN = {BN} makes {128 // BN} times the key blocks of BN = 128, each with its ring wait, "
                   "row max and sum shuffles and rescale", help)
    scaled = scaled_scores(p)
    if scaled is not None:
        exp = any(isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.EXP for op in p.loop.body.ops)
        fewer = ("two instructions an element fewer (the scale's multiply, and `exp`'s x * log2(e) as `exp2`)" if exp
                 else "one instruction an element fewer (the scale's multiply)")
        sass = " and ".join(f"{a} -> {b} at {bm} x {bn}, D = {d}" for (bm, bn, d), (a, b) in FMA_SASS.items())
        ctx.advise(scaled.span, "the scores are scaled before their row max (an f32 multiply an element of every key "
                   "block, ahead of the max and the exponent)",
                   "take the row max of the unscaled scores and fold the scale into the exponent by one `fma` "
                   "(for a scale > 0, max(s * c) = max(s) * c), as std::attention does: `let mn = maximum(m, "
                   "s.max(1).reshape([BM, 1]) * c); let p = exp2(fma(s, c, -mn)); let alpha = exp2(m - mn);` with "
                   f"`c = scale * 1.4426950408889634` (log2(e)): {fewer}; the key loop of benchmarks/cliffs.py's "
                   f"`attn` -> `attn_fma`: {sass} SASS instructions (ptxas 13)")
    tanh = next((op for op in p.loop.body.ops if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.TANH
                 and len([x for x in op.result.shape if x > 1]) == 2), None)
    if tanh is not None and not fast_math:  # (round 17: a12's soft-capped ALiBi loop ran 0.50x SDPA + bias, H100)
        ctx.advise(tanh.span, "`tanh` of the scores (soft-capping) is the accurate f32 tanh: a polynomial below "
                   "|x| = 0.6, an `exp` and a division above, on every element of every key block (its cost beside "
                   "the loop's other work unmeasured)",
                   "`#[hints(fast_math = true)]` makes it one `tanh.approx` (rtol 5e-4, the PTX ISA's bound: for "
                   "activations, docs/reference.md, Hints), and the scores' `exp` ex2.approx")
    for op in p.loop.body.ops:
        if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.EXP and len([x for x in op.result.shape if x > 1]) == 2:
            loads = any(isinstance(o, ir.Load) and o is not p.k.load and o is not p.v.load
                        for o in g.walk(p.loop.body))  # (a bias: `fastmath.exp_nonpos_plain`)
            plain = fast_math or (fastmath.exp_nonpos_plain(loads)
                                  and op.operands[0].id in nonpositive_exp_args(p.loop.body))
            exp2 = ("write `exp2` of the scores scaled by `scale * 1.4426950408889634` (log2(e)) with the running "
                    "max in those units, as std::attention does: that spelling ran "
                    f"{EXP_MEASURED[1]}x SDPA where `exp` ran {EXP_MEASURED[0] if plain else EXP_TERM_MEASURED}x "
                    "(H100, 128 x 128, D = 128, benchmarks/cliffs.py)")
            if plain:
                ctx.advise(op.span, "`exp` of the scores costs a multiply an element more than `exp2` (x * log2(e); "
                           "ex2.approx of it, " + ("`fast_math`)" if fast_math else "the softmax's x <= 0)"), exp2)
            else:
                ctx.advise(op.span, "`exp` of the scores keeps its accuracy promise (the rounding error of x * "
                           "log2(e) fed back: 4 more instructions an element than `exp2`)",
                           exp2 + "; or hint the kernel `#[hints(fast_math = true)]`: every `exp` without its error "
                           "term, within 4.2e-6 (docs/reference.md, Hints)")
            break


def scaled_scores(p: Any) -> ir.Elementwise | None:
    """The loop body's `S * c` (plan `p`'s first product times a broadcast scalar, at the body's top level), or
    None: std::attention scales its scores only where the scale is not positive, in a branch."""
    s = p.s_dot.result
    made = {op.result.id: op for op in p.loop.body.ops if isinstance(op, ir.Broadcast)}
    for op in p.loop.body.ops:
        if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.MUL and any(v is s for v in op.operands):
            other = op.operands[1] if op.operands[0] is s else op.operands[0]
            b = made.get(other.id)
            if b is not None and not b.x.shape:
                return op
    return None


__all__ = ["EXP_MEASURED", "EXP_TERM_MEASURED", "FMA_SASS", "MEASURED", "advise", "need_registers", "scaled_scores"]
