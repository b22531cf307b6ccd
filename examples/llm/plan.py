"""The decode step's plan: block shapes, splits and forms of every launch
(`Plan`), chosen for a device by `plan_for` from measurements on the H200
(RESULTS.md). `engine.TileQwen3` takes one and builds its step from it."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from model import Qwen3Config


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def _pow2_at_most(n: int) -> int:
    return 1 << max(0, math.floor(math.log2(max(1, n))))


def _divisor_tile(n: int, b: int) -> int:
    """The largest power of two <= b dividing n: a stacked matrix's layers
    must start on a row tile."""
    while b > 1 and n % b:
        b //= 2
    return b


# (BN, BK, ST, blocks an SM) of each decode GEMV on a GPU: rows per block, K
# tile, K steps in flight (`std::llm`), and how many of its 256-thread blocks
# an SM holds (the MB of a grid of many waves; a one-wave grid's MB is its
# blocks an SM). Measured on the H200 at Qwen3-4B's shapes with MB
# (`benchmarks/gemv_sweep.py` and the engine's per-kind profile, RESULTS.md
# 2026-12-02 third session): every block resident at once, 64-128 bytes of
# weights a thread a K step (QKV [16, 512] 10.1 us against 11.0 at [16,
# 1024]; gate/up [32, 512] 5 % faster than [32, 256] in the sweep but spills
# 68 bytes at MB 3); the LM head (many waves) through a shared-memory ring
# (ST 4: 186 us against 195 for ST 2 at [16, 512], sixth session; the ring lost
# 4-16 % on the one-wave matrices; in the head's own form, small row tiles in
# several waves, 5-30 % on gate/up and down, 2026-12-03). `plan_for` halves
# BN where a matrix has too few rows to fill the card, BK where it has more
# blocks than it holds.
MAX_MB = 4  # 256-thread GEMV blocks an SM: 64 registers each
GEMV_SHAPES = {
    "qkv": (16, 512, 1, 3),
    "o": (8, 2048, 1, 3),
    "gate_up": (32, 256, 1, 4),
    "down": (8, 2048, 1, 3),
    "lm": (16, 256, 4, 3),  # many waves: MB 3, a ring of 4 stages (8 KB each)
}


@dataclass(frozen=True)
class Plan:
    """Block shapes of one step, chosen for a device (`plan_for`)."""

    bk: dict[str, int]  # K tile (columns per step), per matrix: qkv, o, gate_up, down, lm
    bn: dict[str, int]  # rows per block, per matrix
    # std::llm's ST per matrix: 1, 2 (next tile in registers), -1 (first step peeled), >= 3 (ring)
    st: dict[str, int]
    splitk: dict[str, int]  # split-K factor (1: none) for o and down
    ns: int  # attention splits per KV head
    bt: int  # attention key tile
    ch: int  # KV-append chunk of positions
    bh: int  # embedding tile
    bc: int  # token-choice tile
    mm: tuple[int, int, int] = (64, 64, 64)  # prefill GEMM tile BM, BN, BK
    bq: int = 64  # prefill attention: query rows and key tile
    chp: int = 16  # prefill KV write: positions per block
    prefill: int = 2048  # prefill chunk (a multiple of bq)
    # decode attention (`attn_decode`'s TC): 2 std::attention's register
    # stream, 1 tensor-core products (rows repeated to 16), 0 FMA loops;
    # 3 `attn_decode_short` (FMA loops, every load that waits only on the
    # position issued before the query is formed)
    # 4 `attn_decode_ring` (the register stream's slabs, K and V copied
    # into a shared-memory ring 3 key blocks ahead: `stages = 4`)
    tc: int = 1
    # positions below which the step takes the form `short_tc` with
    # `short_ns` splits instead (a second step graph, chosen per replay by
    # the position: a short cache wants fewer, fuller blocks); 0: one form
    fma_until: int = 0
    short_tc: int = 0
    short_ns: int = 0  # the short form's splits per KV head (0: `ns`)
    # the short form's attention key tile (below `fma_until`, or the only
    # form; 0: `bt`): at 1,025-1,031 positions a tile of 64 gives the slowest
    # of 16 splits 2 tiles where 32 gives it 3, while the long form's two
    # ring blocks an SM keep 32 (two 128 KB rings do not fit an SM). Issue 17,
    # heng (2026-12-07): opt-in, not yet measured (`heng_device.sh` STEP=kern)
    sbt: int = 0
    # programmatic dependent launch (sm_90+, `runtime/cuda_pdl.py`): True,
    # or the trigger's place (`Target.pdl_trigger`: "entry", "late", "last"
    # (the main loop's last iteration), "exit"; True is "late") [+ what comes
    # before the wait, `Target.pdl_prefetch`: "+prefetch" per line, "+bulk"
    # per row; "+loads", the weight loads that lead a kernel before its wait
    # (the GEMVs' at ST -1), `TensorFacts.early`]. The decode steps only
    # (`_with_pdl`); a change reloads the kernels; the CPU ignores it.
    # H200, 4B at 1,024: "late" +2 %, "entry" -11 %, "+prefetch" -29 %, "+bulk" -6 %;
    # "+loads" read nothing early before 2026-12-03 (ptxas sank the early
    # `ld.global.nc` below the wait); really early, with the GEMVs at ST -1:
    # -3.0 %; "last" -4.4 %, "last+loads" -3.1 %, with `pe` 1 -1.5 % (RESULTS.md)
    pdl: bool | str = False
    # one preferred shared-memory carveout (percent of the SM's) for every
    # kernel of the decode steps (`runtime/occupancy.py`'s `scoped`: each
    # kernel its own copy, its `max_blocks` bound kept by its shared-memory
    # pad; a kernel whose block does not fit is refused); None: each kernel
    # its own (the driver's choice, or a bound's smallest configuration). So
    # that PDL's next grid may co-reside with the previous one's blocks: an
    # SM changes its L1/shared split only once drained (RESULTS.md, issue 17
    # form e: 8 of 132 SMs co-resident with differing carveouts, all with
    # one). The decode steps only (`_with_pdl`); a change reloads the
    # kernels; the CPU ignores it (no carveout)
    cv: int | None = None
    # blocks an SM must hold at once, per matrix (the GEMVs' MB: ptxas's
    # register budget; 0 none): the blocks of a one-wave grid per SM
    mb: dict[str, int] = field(default_factory=dict)
    # the merge's chunk of a head's row (`combine_splits`' D; 0: the whole
    # head): more, smaller merge blocks (no faster on the H200 at 4B)
    dc: int = 0
    # 1: the split merge's own launch is `std::attention::decode_combine` (a
    # block a KV head's G query rows and DC columns, the log-sum-exps as one
    # [NS, G] tile from 16 shares: h15d, RESULTS.md 2026-12-04, 1.10 us a block
    # after its wait against 1.69) instead of `combine_splits` (a block a query
    # head); `dc` its DC (0: the head). No `pe` trigger of its own
    mg: int = 0
    # ST > 0: the split merge's own launch is `combine_rows` (one warp a
    # block folding the splits in a row at a time, no barrier; the rows
    # through a cp.async ring of ST stages) instead of `combine_splits`; `dc`
    # its D (0: the head)
    mr: int = 0
    # (BN, MB) of `merge_gemv_add`: the split merge, the O projection and its
    # residual add in one launch, a block a (query head, BN rows); BN 0: the
    # merge's own launch (`combine_splits`) before the O GEMV
    om: tuple[int, int] = (0, 0)
    # NC > 0: the ring attention (tc 4) merges its own splits
    # (`attn_decode_ring_merge`: the block of a KV head that arrives last,
    # `if last_block(1)`, NC shares a step), no `combine_splits` launch;
    # 0: the merge's own launch
    fm: int = 0
    # the ring attention (tc 4) with its `pos`-only loads first
    # (`attn_decode_ring_early`, EA = ea): 1 the ring's first K/V copies
    # right after `pos` and the query's loads, before the query's norm and
    # rotary (`attn_decode_ring`: after them); 3 also the current token's
    # key and value rows before the key loop (used by the last split after
    # it); 0 `attn_decode_ring`. H200, 4B: 3 +0.3 % at 1,024, +0.6 % at
    # 8,192 (the attention alone 1.2 us faster); the GPU plans' default;
    # 7 (EA & 4, `ring_split_first`): the key range and the ring's first
    # copies right after `pos`, then the tables' loads, then the query's and
    # the token's rows: under `pdl` "+loads" all but those rows (the QKV
    # GEMV's output) are read before the kernel's wait
    ea: int = 0
    # the split merge folded into the early ring attention in one pass
    # (`attn_decode_ring_fold`: the block of each KV head that arrives last,
    # `if last_block(1)`, reads the head's shares and their log-sum-exps at
    # once and stores the merged rows; no `combine_splits` launch), in the
    # step forms whose bit is set: 1 the short form (below `fma_until`, or
    # the only form), 2 the long form; 0: the merge's own launch (issue 17,
    # h17q; `fm` merged NC shares a step, each step a dependent L2 round trip).
    # + 4: the folded attention never triggers the next launch under PDL
    # (`pdl_early = 3`: the O GEMV's blocks are scheduled at its exit, not
    # beside its last blocks while they merge). + 8: each head's last split
    # merges (`arrive_wait`: it polls the head's counter until the other
    # splits have arrived; they add to it with a release and leave at once,
    # without the arrival's atomic round trip, barrier and L1 invalidation:
    # their SMs free for the O GEMV's blocks as after the pair's attention).
    # Issue 17, h17r (2026-12-06): the fold was 0.6-0.9 us a layer faster
    # than the pair timed alone and -1.1 % in the step (O's blocks late).
    # H100, 4B 1,024, one process (call 25): fl 11 -0.75 %, fl 3 -0.76 % (the
    # waiting arrival changes nothing), fl 11 with O peeled -0.27 %; the fold
    # no faster than the pair alone since kb and rs (6.0 us a layer both)
    fl: int = 0
    # 1: the early ring attention's key ranges balanced (EA & 8 of
    # `ring_split_early` and `ring_split_first`: ea 1, 3 or 7, `aw` 8, `fl`):
    # the first T % NS of the NS splits take one of the T key blocks more
    # than the others' T / NS, where `cdiv(T, NS)` blocks a split leaves the
    # last splits short or empty (at 1,025 positions, 33 blocks over 16
    # splits are 11 of 3 and 5 of 0, balanced 1 of 3 and 15 of 2). The other
    # attention forms (ea 0's `attn_decode_ring`, `qr`, `fm`, tc != 4) keep
    # cdiv's ranges. sm_90's plans: 1 (issue 17, h17q; H100, one process,
    # 2026-12-06: 4B +0.36 % at 1,024, +0.46 % at 8,192, 8B +0.16 %, 0.6B
    # -0.05 %, the same tokens)
    kb: int = 0
    # KR > 0: the QKV GEMV's blocks, once their own loads are back, prefetch
    # into L2 the layer's KV cache rows the attention after it reads (K and V
    # rows 0 .. pos of every KV head, [1, KR, D] tiles dealt round the blocks:
    # `rms_gemv_kv`), so that the attention's key blocks come from L2 (issue
    # 17, h17q; the weight prefetches of `pf` all lost on the H200, their
    # GEMV readers bound by their SMs' intake); 0: none. Needs the QKV GEMV's
    # plain form (not `qr`, not on the tile queue)
    kp: int = 0
    # 8: the short step form's ring attention (below `fma_until`, or the
    # only form) with its key loop in 8 warps, each a slab of bt / 8 keys of
    # a key block (`attn_decode_ring_w8`, EA = ea & 3: `ring_split_early` in
    # 8 warps; ~200 registers, one block an SM: the long form's two blocks
    # an SM keep 4); 0: 4 warps (`attn_decode_ring_early` /
    # `attn_decode_ring`). Needs bt a multiple of 8, fm 0, qr 0, ea & 4 clear
    aw: int = 0
    # 1: the per-head q/k RMSNorm's weights and the rotary embedding in the
    # QKV GEMV's epilogue (`rms_gemv_rope`: a block owns BN / 2 rows of both
    # halves of a head, so each rotary pair; it stores its rows' share of the
    # head's sum of squares too), and the ring attention and the cache append
    # on those rows (`attn_decode_ring_pre`, `kv_append_pre`: the norm's
    # factor from the shares, no tables, no reduction over the head before
    # the key loop). Needs the ring (tc 4) in every step form, ea 0 and fm 0
    # (its attention is the early ring's form), and BN dividing the head
    qr: int = 0
    # 1: the QKV GEMV (`rms_gemv`) triggers at its entry (`pdl_early`): the
    # attention's blocks are scheduled from the QKV's start and take the SMs
    # its blocks leave during its tail (with `ea` 7 and "+loads", reading
    # `pos`, the ring's first K/V blocks and the tables there, before their wait)
    qe: int = 0
    # 1: the ring attention and the merge after it trigger at their entry
    # (`pdl_early`), so that under PDL the O GEMV's blocks are resident during
    # the attention (and under "+loads" read their first weight tile there)
    pe: int = 0
    # 1: the split merge alone (`combine_splits` / `combine_rows`) triggers at
    # its entry (`pdl_early`; the attention before it at its usual place), so
    # that under PDL the O GEMV's blocks are scheduled while the merge runs
    # (~1-2 us a layer in which the DRAM idles: the merge reads its partials
    # from L2), and under "+loads" with O at ST -1 read their first weight
    # tile then (issue 17, h17r; `pe` moved the attention's trigger too,
    # placing O's blocks beside the attention's: -1.5 % on the H200).
    # sm_90's plans: 1 where O's grid has more blocks than SMs (`plan_for`)
    me: int = 0
    # the one-wave GEMVs that trigger the next launch at their entry
    # (`pdl_early`): "o" (-> gate/up), "gate_up" (-> down), "down" (-> the
    # next layer's QKV; the last layer's -> the cache append). Every decode
    # GEMV takes one shared-memory configuration, so the next GEMV's blocks
    # can sit beside this one's (where registers allow) and take the SMs its
    # blocks leave during its tail, and under "+loads" with the next GEMV at
    # ST -1 read their first weight tile there (issue 17, h17r; the trigger
    # "last" for every kernel, the attention's and the merge's too, whose
    # configurations differ from the GEMVs': -4.4 % on the H200). "attn": the
    # ring attention alone (the merge after it at its usual place, unlike
    # `pe`), so that the merge's 32 blocks are scheduled while the attention
    # runs and wait there, and its launch latency leaves the chain (issue 17,
    # h17t). Empty: none; sm_90's plans ("o", "down"), with gate/up and QKV at
    # ST -1 under "late+loads" (`plan_for`)
    ge: tuple[str, ...] = ()
    # the one-wave GEMVs that trigger the next launch at the start of their K
    # loop's last iteration (`pdl_early = 2`, after their wait): "qkv" (->
    # the attention), "o", "gate_up", "down", as in `ge` but later, so that the
    # next grid's blocks (under "late+loads" at ST -1, their first K step read
    # before their wait) take the room this one's leave during its tail (the
    # ~1.5-3.5 us from its first block's end to its last, the DRAM part idle)
    # rather than beside its blocks from its start. Not "attn"; a name in `ge`
    # too is refused. Empty: none (issue 17, h17p; `pdl` "last" for every
    # kernel, the attention's and the merge's too: -4.4 % on the H200);
    # sm_90's plans ("gate_up",), with down at ST -1 (`plan_for`)
    gl: tuple[str, ...] = ()
    # L2 prefetch of a matrix's first columns by the GEMV before it (std::llm's
    # `prefetch_next`): matrix ("o", "gate_up", "down", "qkv" (the next
    # layer's)) -> (PR, PC[, PL]), the [PR, PC] tiles of every row of the
    # layer's matrix, issued by the previous GEMV's blocks once their own
    # loads are back (the QKV GEMV for "o": before the attention); PL 1: a
    # prefetch a line from the threads, not sm_90's bulk prefetch a row.
    # Empty: none (H200, 4B: every bulk form measured slower, RESULTS.md 2026-12-03)
    pf: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # the persistent streaming GEMVs (`std::llm::stream::gemv_stream`): matrix
    # ("o", "down", "gate_up") -> (BN, BK, ST, MB, G): a grid of G blocks (the
    # card's SMs x MB, all resident) walks the layer's [BN, BK] weight tiles in
    # equal contiguous shares through one cp.async ring of ST stages, adding
    # each row tile's sums into the output atomically. "gate_up" sums gate and
    # up into a cleared scratch and needs "down" too, which forms silu(g) u as
    # it reads it. Empty (the default): the one-wave register GEMVs (`stream_plan`
    # builds it; `STREAM_DOWN` the measured best for down)
    sk: dict[str, tuple[int, int, int, int, int]] = field(default_factory=dict)
    # the GEMVs on a tile queue (`std::llm::queue`): matrix ("qkv", "o",
    # "gate_up", "down") -> (BN, BK, ST, MB): one wave of MB blocks an SM
    # pulls the layer's BN-row tiles until none is left (a slow or crowded SM
    # takes fewer), each computing what the one-wave GEMV's block does for its
    # rows (the same bits). Empty: the one-wave GEMVs. A matrix in `sk` too
    # takes the stream
    qg: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    # the residual GEMVs with a static bulk and a dynamic remainder
    # (`std::llm::hybrid::gemv_add_hybrid`, `tails.py`): matrix ("o", "down")
    # -> (BN, BK, ST, MB, KB, BR, CR): each BN-row tile's first KB K tiles of BK
    # columns are one block's bulk, the rest of its row pieces of CR tiles of BR
    # columns that one wave of MB blocks an SM pulls from a queue once its
    # first item is done (fast SMs take more); every item adds into x
    # atomically. Empty: the one-wave GEMVs
    hy: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # the GEMVs with the vector in registers (`std::llm::rows`, issue 17, h17's
    # probe family x): matrix ("o", "gate_up", "down") -> (R, MB): one wave of
    # MB blocks an SM, each loading x (for gate/up rmsnorm(x) * g) once as a
    # whole [1, K] tile and pulling R-row tiles from a queue, a whole row a
    # warp (R 8), the row sums by shuffles. (R, MB, ST), ST >= 1: the row tiles
    # dealt by the static walk `for s in tiles(0)` (`*_rows_walk`, h17s)
    # instead of pulled (no atomic, no barrier a tile), `stages = ST` (2..4: the
    # weights through a cp.async ring). Opt-in (RESULTS.md, h17x, h17s).
    # Empty: the planned forms. A matrix in `sk`, `hy` or `qg` takes those
    xr: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # small tiles held whole by every thread in the decode steps' kernels
    # (`TILEC_REPLICATE_SMALL`, `gpu/passes/replicate.py`; h17, 2026-12-05):
    # 1 tiles of up to 16 elements (N >= 2: up to N), the reductions whose
    # small results later ops move between threads ending in an all-gather
    # instead (the attention's epilogue, 50 -> 13 barriers at 4B; the merge's
    # log-sum-exps loaded whole, 9 -> 1 at 16 shares, 32 shares need 32); 0: the
    # process's own setting. 1 on sm_90 (`plan_for`; H100 +0.4 % alone, +0.45 %
    # over `ge`'s triggers at 1,024 and 8,192)
    rs: int = 0
    # BC > 0: the greedy token choice as `argmax_fold` (the LM head's
    # per-block maxima folded lane by lane over chunks of BC, one max and one
    # min over the lanes at the end: 2 reductions a step instead of 3 a chunk
    # in `argmax_step`; issue 17, h17r); 0: `argmax_step` over chunks of `bc`.
    # The sampler's launches (temperature / top-p) are not changed by it
    tk: int = 0
    # BC > 0: the greedy token choice as `argmax_wide` (one block of 32 warps,
    # all of the LM head's per-block maxima as one tile of BC, a power of two
    # at least their count: two reductions; issue 17, h17t); instead of `tk`'s
    # and `bc`'s forms (4 warps, 74 maxima a thread at 4B). sm_90's plans: the
    # power of two at or above the maxima's count, up to 16,384 (`plan_for`)
    tw: int = 0


# `TILEC_DECODE_PLAN`'s profiles of sm_90's plan (`plan_for`): "default" the
# plan as promoted on H100s; "noearly" it without the forms that place the next
# launch's blocks early or read its weights before its wait (`pdl` "late",
# no `ge`, `gl` or `me`, the GEMVs unpeeled), keeping the kernels' own forms
# (`rs`, `kb`, `tw`, `ea`): issue 17, heng (2026-12-07), for the H200, where
# every such form measured so far lost ("late+loads" with the GEMVs peeled
# -3.0 %, "last" -4.4 %, `pe` -1.2..-1.5 %, 2026-12-03) and the H100's
# promotions since (+3 % there) moved the H200's step +0.5..+2 % (404.5 tok/s
# on 2026-12-07 against ~401 on 2026-12-03/04). Opt-in, not yet measured
PROFILES = ("default", "noearly")


def decode_profile() -> str:
    """`TILEC_DECODE_PLAN` (unset: "default"); another value than `PROFILES`'
    is an E0604 `SwitchError` naming them."""
    from tilelang.env_switch import mode

    return mode("TILEC_DECODE_PLAN", "default", PROFILES)


# the launches `Plan.ge` may name, and `Plan.gl`
GE_NAMES = ("o", "gate_up", "down", "attn")
GL_NAMES = ("qkv", "o", "gate_up", "down")


def check_ge(plan: Plan) -> None:
    """A ValueError naming what `plan.ge` or `plan.gl` has that no launch
    answers to (a misspelt name would leave the plan's triggers as they were,
    unsaid), or a launch both name."""
    if isinstance(plan.ge, str) or any(n not in GE_NAMES for n in plan.ge):
        raise ValueError(f"Plan.ge names launches among {GE_NAMES}, not {plan.ge!r}")
    if isinstance(plan.gl, str) or any(n not in GL_NAMES for n in plan.gl):
        raise ValueError(f"Plan.gl names launches among {GL_NAMES}, not {plan.gl!r}")
    both = sorted(set(plan.ge) & set(plan.gl))
    if both or (plan.qe and "qkv" in plan.gl):
        raise ValueError(
            f"Plan.ge (or qe) and Plan.gl both name {both or ['qkv']}: a launch triggers at one place"
        )


def gemv_pe(plan: Plan, name: str) -> int:
    """The PE (`pdl_early`) of the one-wave GEMV `name`: 1 at its entry
    (`ge`; the QKV's `qe`), 2 at its K loop's last iteration (`gl`), 0 late."""
    if name in plan.ge or (name == "qkv" and plan.qe):
        return 1
    return 2 if name in plan.gl else 0


def check_fold(plan: Plan) -> None:
    """A ValueError naming what `plan.fl` (the split merge folded into the
    early ring attention), `plan.kb` (its key ranges balanced) or `plan.kp`
    (the KV cache prefetched by the QKV GEMV) cannot run with."""
    if not 0 <= plan.fl <= 15 or (plan.fl & 3 == 0 and plan.fl) or plan.kb not in (0, 1):
        raise ValueError(f"Plan.fl must be 0-3 (1 the short form, 2 the long), + 4 for no trigger, + 8 for the "
                         f"last split's merge, and Plan.kb 0 or 1, not {plan.fl} and {plan.kb}")
    if plan.fl & 4 and (plan.pe or "attn" in plan.ge):
        raise ValueError("Plan.fl + 4 keeps the folded attention from triggering: not with pe or \"attn\" in ge, "
                         "which trigger it at its entry")
    short = (plan.short_tc, plan.short_ns or plan.ns) if plan.fma_until > 0 else (plan.tc, plan.ns)
    two = plan.fma_until > 0 and short != (plan.tc, plan.ns)
    forms = [("short", short[0], 1)] + ([("long", plan.tc, 2)] if two else [])
    for name, tc, bit in forms:
        if plan.fl & bit and tc != 4:
            raise ValueError(f"Plan.fl folds the merge into the ring attention: the {name} form has tc = {tc}, "
                             "not 4")
    if plan.fl and (plan.fm or plan.om[0] or plan.mr or plan.mg or plan.qr or plan.aw):
        raise ValueError("Plan.fl's attention merges its own splits in one pass: set fm, om, mr, mg, qr and aw "
                         "to 0 (choose one merge and one attention form)")
    if plan.kp < 0 or plan.kp & (plan.kp - 1) or (plan.kp and (plan.qr or "qkv" in plan.qg)):
        raise ValueError(f"Plan.kp ({plan.kp}) is the KV prefetch's rows a tile (a power of two, 0: none) in the QKV "
                         "GEMV's plain form: not with qr or the QKV on the tile queue (qg)")


def check_key_tiles(plan: Plan) -> None:
    """A ValueError naming a key tile (`plan.bt`, the short form's `plan.sbt`)
    the attention cannot take: a power of two of at least 4 (`sbt` 0: `bt`;
    under `aw` 8 a multiple of 8 too, which the engine's `aw` check says)."""
    for name, bt in (("bt", plan.bt), ("sbt", plan.sbt)):
        if (bt or name == "bt") and (bt < 4 or bt & (bt - 1)):
            raise ValueError(f"Plan.{name} must be a power of two of at least 4 (sbt 0: bt), not {bt}")


def check_qr(plan: Plan, head_dim: int) -> None:
    """A ValueError naming what `plan.qr` (the q/k norm's weights and the
    rotary embedding in the QKV GEMV's epilogue) cannot run with."""
    bn = plan.bn["qkv"]
    if plan.qr not in (0, 1):
        raise ValueError(f"Plan.qr must be 0 or 1, not {plan.qr}")
    if not plan.qr:
        return
    if plan.tc != 4 or (plan.fma_until > 0 and plan.short_tc != 4):
        raise ValueError(
            "Plan.qr's attention is the ring's (`attn_decode_ring_pre`): every step form needs tc = 4"
        )
    if plan.ea or plan.fm:
        raise ValueError(
            "Plan.qr's attention replaces Plan.ea's and Plan.fm's kernels: set ea and fm to 0"
        )
    if "qkv" in plan.qg or bn % 2 or head_dim % bn:
        raise ValueError(
            f"Plan.qr: the QKV GEMV's row tile ({bn}) must be even, divide the head ({head_dim}) "
            "and not be on the tile queue (Plan.qg)"
        )


def plan_for(cfg: Qwen3Config, max_seq: int, sm_count: int | None, hopper: bool = False) -> Plan:
    """sm_count None: the CPU interpreter (few big blocks: it runs a chunk of
    blocks as one NumPy operation, so fewer is faster). `hopper`: the card
    has wgmma (sm_90a), whose GEMM pipeline takes the prefill's 128 x 256
    tiles (two consumer warpgroups, an accumulator of 128 registers each)."""
    h, i, d = cfg.hidden_size, cfg.intermediate_size, cfg.head_dim
    hkv = cfg.num_key_value_heads
    rows = {
        "qkv": (cfg.num_attention_heads + 2 * hkv) * d,
        "o": h,
        "gate_up": i,
        "down": h,
        "lm": cfg.vocab_size,
    }
    cols = {"qkv": h, "o": cfg.num_attention_heads * d, "gate_up": h, "down": i, "lm": h}
    bk: dict[str, int] = {}
    bn: dict[str, int] = {}
    st: dict[str, int] = dict.fromkeys(rows, 1)
    splitk: dict[str, int] = {"o": 1, "down": 1}
    mb: dict[str, int] = dict.fromkeys(rows, 0)
    ge: tuple[str, ...] = ()  # the GEMVs that trigger at their entry (`Plan.ge`)
    gl: tuple[str, ...] = ()  # ... at their K loop's last iteration (`Plan.gl`)
    me = 0  # the split merge triggers O at its entry (`Plan.me`)
    rs = 0  # small tiles replicated (`Plan.rs`)
    kb = 0  # the early ring's key ranges balanced (`Plan.kb`)
    tw = 0  # the greedy token choice's tile (`Plan.tw`; 0: `argmax_step`)
    if sm_count is None:
        for k, n in rows.items():
            bn[k] = _divisor_tile(n, 16)
            bk[k] = min(512, _pow2_at_least(min(h, i)))
        ns, bt = 2, 8
        mm, bq, chp = (16, 16, 32), 8, 8
        tc, fma_until, short_tc, short_ns = 1, 0, 0, 0
        ea = 0
        pdl: bool | str = False
    else:
        # Batch-1 GEMVs are memory-bound: what a kernel has in flight is about
        # (resident blocks) x (one [BN, BK] bf16 tile each), so every block
        # should be resident at once (one wave) with the widest K step the
        # registers allow (GEMV_SHAPES; the LM head's ring measured on sm_90
        # only). BN >= 8 keeps a row in one warp; short matrices split K.
        want = 2 * sm_count
        for k, n in rows.items():
            b, kk, st[k], per_sm = GEMV_SHAPES[k] if hopper or k != "lm" else (16, 512, 2, 3)
            while b > 8 and -(-n // b) < want:
                b //= 2
            bn[k] = b if k == "lm" else _divisor_tile(n, b)
            blocks = -(-n // bn[k])
            if per_sm and blocks > per_sm * sm_count and kk > 1024:
                kk //= 2  # half the registers: more blocks an SM, one wave again
            bk[k] = min(kk, _pow2_at_least(cols[k]))
            if k in splitk and blocks < sm_count:
                tiles = -(-cols[k] // bk[k])  # no more splits than K steps
                splitk[k] = _pow2_at_most(min(tiles, _pow2_at_least(-(-want // blocks))))
            # one wave: ptxas gets the registers of the grid's blocks an SM and
            # issues each K step's loads ahead of its products within them
            # (H200, 4B: 3.0 -> 3.4 ms a token at 1,024, RESULTS.md); never
            # fewer than 64 registers (MB <= 4: below, some spilled)
            mb[k] = min(MAX_MB, -(-blocks * splitk.get(k, 1) // sm_count)) if k != "lm" else per_sm
        ns = _pow2_at_most(max(1, min(32, want // hkv)))
        bt = 32
        # H200, Qwen3-4B (RESULTS.md, 2026-12-02): the ring (the register
        # stream's slabs copied into shared memory 3 key blocks ahead) beat
        # the stream (+3.1 % tok/s at 8,192, +7.3 % at 32,768), which beat
        # tensor cores and FMA loops from ~1,500 positions; with half the
        # splits below 12,288 positions (one process): +5.3 % at 1,024 over
        # the FMA form (all splits: +0.7 %), +1.9 % at 8,192, -1.0 % at
        # 16,384, -4.8 % at 32,768; 0.6B +20 % at 1,024. The switch moved to
        # 8,192 (2026-12-04, h17): 32 splits now +0.8 % at 8,192 (357.6 against
        # 354.9 / 354.6 tok/s, the same tokens), -0.55 % at 1,024
        tc, fma_until, short_tc, short_ns = 4, 8192, 4, max(1, ns // 2)
        # the ring's first copies and the token's rows before the query is
        # formed (`attn_decode_ring_early`, H200 4B, one process, 2026-12-03):
        # +0.3 % at 1,024 (attention alone 6.00 -> 4.84 us), +0.6 % at 8,192
        ea = 3
        mm, bq, chp = ((128, 256, 64) if hopper else (64, 64, 64)), 64, 16
        pdl = "late" if hopper else False
        if hopper:
            # O and down trigger the next GEMV at their entry, whose blocks
            # (gate/up, the next QKV: first K step peeled) read that step's
            # weights before their wait, during the tail; the small tiles
            # replicated (`rs`: the attention's epilogue 50 -> 13 barriers,
            # the merge's 9 -> 1). H100, 4B, one process (h17r, 2026-12-05):
            # +0.85 % at 1,024 (309.6 against 307.0 tok/s), +0.95 % at 8,192
            # (275.6 against 273.0), the same tokens; the triggers and loads
            # alone +0.4 / +0.5 %, the triggers without the early loads -0.5 %
            pdl, ge, rs = "late+loads", ("o", "down"), 1
            st["gate_up"] = st["qkv"] = -1
            # gate/up triggers down at its K loop's last iteration (`gl`,
            # down's first K step peeled): down's blocks take the SMs gate/up's
            # leave in its tail and read their first weights there. H100, one
            # process, A B B A (2026-12-06): 4B +0.56 % at 1,024 and 8,192,
            # 0.6B +0.25 %, 8B +0.20 %, the same tokens
            gl = ("gate_up",)
            st["down"] = -1
            # the split merge triggers O at its entry (`me`) where O's grid has
            # more blocks than the card has SMs (its MB, the blocks an SM of
            # its one wave, above 1): O's blocks are scheduled while
            # the merge runs. The same call: 4B +0.45 % / +0.59 % (with `gl`
            # +1.09 % / +1.17 %), 8B +0.05 %; at 0.6B, whose O is one block an
            # SM (128 on 132, MB 1), -2.2 % (and -1.9 % on 2026-12-05): off there
            me = int(mb["o"] > 1)
            # the early ring attention's key ranges balanced (`kb`: at 1,025
            # positions 1 split of 3 key blocks and 15 of 2, not 11 of 3 and 5
            # empty). H100, one process, A B B A (h17q, 2026-12-06): 4B +0.36 %
            # at 1,024, +0.46 % at 8,192; 8B +0.16 %, 0.6B -0.05 %; the same tokens
            kb = 1
            # the greedy token choice as `argmax_wide` (one block of 32 warps,
            # all of the LM head's block maxima as one tile, at most 16,384: 16
            # a thread; more would spill): H100, 4B, one process (h17t,
            # 2026-12-05): +0.5 % at 1,024 (317.3 against 315.7 tok/s), +0.4 %
            # at 8,192 (281.7 against 280.7), the same tokens; on another H100
            # (the lead's last call): 4B +0.5 % / +0.4 %, 0.6B +1.8 %, 8B +0.3 %;
            # `argmax_step` walked 9,496 maxima in 10 chunks in 4 warps (18 us)
            tw = _pow2_at_least(-(-rows["lm"] // bn["lm"]))
            tw = tw if tw <= 16384 else 0
            if decode_profile() == "noearly":  # (`PROFILES`) the boundaries as before 2026-12-05
                pdl, ge, gl, me = "late", (), (), 0
                st["gate_up"] = st["qkv"] = st["down"] = 1
    ch = min(_pow2_at_least(max_seq), 1024, max(1, (1 << 20) // (hkv * d)))
    bh = min(512, _pow2_at_least(h))
    prefill = max(bq, min(2048, _pow2_at_most(max_seq) // 2))
    return Plan(
        bk=bk,
        bn=bn,
        st=st,
        splitk=splitk,
        ns=ns,
        bt=bt,
        ch=ch,
        bh=bh,
        bc=1024,
        mm=mm,
        bq=bq,
        chp=chp,
        prefill=prefill,
        tc=tc,
        fma_until=fma_until,
        ea=ea,
        short_tc=short_tc,
        short_ns=short_ns,
        mb=mb,
        pdl=pdl,
        ge=ge,
        gl=gl,
        me=me,
        rs=rs,
        tw=tw,
        kb=kb,
    )


# (BN, BK, ST) of the streaming form (`Plan.sk`) by default: the LM head's
# tile and ring (8 KB a stage, ST 4: 3 tiles in flight a block)
STREAM_SHAPE = (16, 256, 4)
# (BN, BK, ST, MB) of the fastest stream of the down projection on the H200
# at 4B (`gemv_sweep.py --stream`, five shapes; the ring's ST 3 is lowered to
# 2 by MB 3's share of shared memory: one 16 KB tile ahead a block): 13.95 ->
# 13.58 us a launch in the step, the step +0.1..+0.3 % (RESULTS.md,
# 2026-12-03): not the default (the residual's sums would then vary in their
# last bits from run to run, for a gain at the noise level)
STREAM_DOWN = (32, 256, 3, 3)


def stream_plan(
    plan: Plan,
    mats: tuple[str, ...],
    sm_count: int,
    mb: int = 3,
    shape: tuple[int, int, int] = STREAM_SHAPE,
) -> Plan:
    """`plan` with the matrices `mats` in the streaming form: `shape`'s tiles
    over a grid of `sm_count` x `mb` blocks (`Plan.sk`)."""
    bn, bk, st = shape
    return dataclasses.replace(
        plan, sk={**plan.sk, **dict.fromkeys(mats, (bn, bk, st, mb, sm_count * mb))}
    )


# (BN, BK, ST, MB) of each GEMV on the tile queue (`Plan.qg`) at Qwen3-4B's
# shapes: half the rows of the one-wave form's tiles (a quarter for O and
# down, whose 8-row tiles are fewer than 132 x 3 blocks), so that each of the
# 132 x MB blocks takes 2-3 tiles and the last ones are short; 16 KB of
# weights a block a K step (gate/up [8, 1024] spills 32 bytes at MB 3)
QUEUE_SHAPES = {
    "qkv": (8, 1024, 1, 3),
    "o": (4, 2048, 1, 3),
    "gate_up": (8, 512, 1, 3),
    "down": (4, 2048, 1, 3),
}


def queue_shapes(cfg: Qwen3Config, sm_count: int) -> dict[str, tuple[int, int, int, int]]:
    """`QUEUE_SHAPES` for `cfg` on `sm_count` SMs: each matrix's row tile
    halved (down to 4 rows) until its layer has 1.5 tiles a block of the
    queue's wave (SMs x MB) or more, and divides the layer's rows; the K tile no wider
    than the rows' power of two."""
    d, hkv = cfg.head_dim, cfg.num_key_value_heads
    rows = {"qkv": (cfg.num_attention_heads + 2 * hkv) * d, "o": cfg.hidden_size,
            "gate_up": cfg.intermediate_size, "down": cfg.hidden_size}  # fmt: skip
    cols = {"qkv": cfg.hidden_size, "o": cfg.num_attention_heads * d, "gate_up": cfg.hidden_size,
            "down": cfg.intermediate_size}  # fmt: skip
    out = {}
    for m, (bn, bk, st, mb) in QUEUE_SHAPES.items():
        bn = _divisor_tile(rows[m], bn)
        while bn > 4 and 2 * (rows[m] // bn) < 3 * mb * sm_count:
            bn = _divisor_tile(rows[m], bn // 2)
        out[m] = (bn, min(bk, _pow2_at_least(cols[m])), st, mb)
    return out


def queue_plan(
    plan: Plan, mats: tuple[str, ...], shapes: dict[str, tuple[int, int, int, int]] | None = None
) -> Plan:
    """`plan` with the GEMVs `mats` on the tile queue (`Plan.qg`), each in
    `shapes`' (BN, BK, ST, MB) (default `QUEUE_SHAPES`)."""
    shapes = {**QUEUE_SHAPES, **(shapes or {})}
    return dataclasses.replace(plan, qg={**plan.qg, **{m: tuple(shapes[m]) for m in mats}})


# (BN, BK, ST, MB, KB, BR, CR) of the hybrid residual GEMVs (`Plan.hy`) at
# Qwen3-4B's shapes: the one-wave form's 8-row tiles (320 a layer, for a wave
# of 396 blocks: the other 76 start on pieces), 3/4 (O) and 6/7 (down) of each
# row's columns its bulk, the rest pieces of 8 rows x 512 columns (8 KB)
HYBRID_SHAPES = {
    "o": (8, 1024, 1, 3, 3, 512, 1),
    "down": (8, 1024, 1, 3, 7, 512, 1),
}


def hybrid_plan(
    plan: Plan, mats: tuple[str, ...], shapes: dict[str, tuple[int, ...]] | None = None
) -> Plan:
    """`plan` with the residual GEMVs `mats` ("o", "down") hybrid (`Plan.hy`),
    each in `shapes`' (BN, BK, ST, MB, KB, BR, CR) (default `HYBRID_SHAPES`)."""
    shapes = {**HYBRID_SHAPES, **(shapes or {})}
    return dataclasses.replace(plan, hy={**plan.hy, **{m: tuple(shapes[m]) for m in mats}})


# (R, MB) of the register-vector GEMVs (`Plan.xr`) at Qwen3-4B's shapes
# (ptxas -v, sm_90a, no spill; not yet measured): O (K 4096) a row a warp in
# 207 registers (MB 1); gate/up (K 2560) a gate and an up row a warp, 183
# registers (MB 1; 128 at MB 2, no spill); down (K 9728) a row across 4 warps
# (R 2, 150 registers: a row a warp would hold 304 values of x a lane and spills)
ROWS_SHAPES = {"o": (8, 1), "gate_up": (8, 1), "down": (2, 1)}


def rows_plan(
    plan: Plan, mats: tuple[str, ...], shapes: dict[str, tuple[int, ...]] | None = None
) -> Plan:
    """`plan` with the GEMVs `mats` ("o", "gate_up", "down") reading x from
    registers (`Plan.xr`), each in `shapes`' (R, MB) or (R, MB, WALK) (default
    `ROWS_SHAPES`)."""
    shapes = {**ROWS_SHAPES, **(shapes or {})}
    return dataclasses.replace(plan, xr={**plan.xr, **{m: tuple(shapes[m]) for m in mats}})
