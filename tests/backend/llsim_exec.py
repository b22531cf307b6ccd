"""llsim's scheduler (tests only): the threads of one block run as generators
(compiled blocks, `llsim_blocks`, or one closure an instruction) until a
barrier, a shuffle, an mbarrier or an asynchronous copy; deadlocks and
races raise."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
from llsim_blocks import compile_program
from llsim_blocks import thread as _compiled_thread
from llsim_fast import load, store
from llsim_hopper import _Barrier, _Group, _Pending, _tma, _tma_guard, _tma_store, _wgmma
from llsim_ops import _atomic, _shfl, _warp_op
from llsim_parse import Program
from llsim_values import Deadlock, Memory, Race, Unsupported, knob


def _thread(prog: Program, regs: dict[str, Any]) -> Iterator[tuple]:
    blocks = prog.blocks
    name: str | None = "entry"
    prev = ""
    steps = 0
    while name is not None:
        b = blocks[name]
        if b.phis:
            vals = []
            for dst, arms in b.phis:
                for f, pred in arms:
                    if pred == prev:
                        vals.append((dst, f(regs)))
                        break
                else:
                    raise AssertionError(f"phi {dst} in {name} has no arm for {prev}")
            for dst, v in vals:
                regs[dst] = v
        for ins in b.body:
            if ins.sync is not None:
                got = yield ins.sync(regs)
                if ins.dst is not None:
                    regs[ins.dst] = got
            else:
                regs[ins.dst] = ins.fn(regs)  # type: ignore[index,misc]
        steps += 1
        if steps > 10_000_000:
            raise RuntimeError("runaway loop")
        prev, name = name, b.term(regs)


# the requests that always wait for the scheduler (its rendezvous: shuffles, warp
# operations, barriers, named barriers, wgmma)
_PARK = frozenset({"shfl", "warp", "bar", "nbar", "wg"})


def run_block(prog: Program, mem: Memory, base_regs: dict[str, Any], T: int) -> None:
    """Run one block of `T` threads to the end. Floating-point operations
    follow IEEE (overflow to inf, 0/0 to nan) without NumPy's warnings: the
    whole block runs under one `errstate` (entering one an instruction cost
    a tenth of the simulator's time). Python's cycle collector is off while
    it runs: a block makes hundreds of thousands of objects that live until
    its end (registers, requests, a wgmma's pending values), which the
    collector walked again and again (a tenth of an attention test's time);
    it runs as usual once the block has ended, and nothing the simulation
    computes depends on it."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        with np.errstate(all="ignore"):
            _run_block(prog, mem, base_regs, T)
    finally:
        if getattr(prog, "compiled_ns", None) is not None:  # the cached program keeps no launch's buffers (hrev30:
            prog.compiled_ns["_mem"] = None  # a `huge_array`'s gigabytes of mappings outlived its test)
        if collecting:
            gc.enable()


def _run_block(prog: Program, mem: Memory, base_regs: dict[str, Any], T: int) -> None:
    gens: dict[int, Iterator[tuple]] = {}
    waiting: dict[int, tuple] = {}
    arrived: dict[int, int] = {}  # bar.arrive counts per named barrier id, not yet consumed by a sync
    open_copies: dict[int, list[tuple[int, bytes]]] = {t: [] for t in range(T)}  # cp.async not yet committed
    cp_groups: dict[int, list[list[tuple[int, bytes]]]] = {t: [] for t in range(T)}  # committed, not yet waited for
    bars: dict[Any, _Barrier] = {}
    # `llsim.PERTURB` (a seed; 0: off, the schedule below as it always was): TMA loads land late, at random
    # steps (each with a chance the seed draws) or when nothing else can run, in any order; some wakes of
    # mbarrier waiters are deferred (the thread that completed the phase goes on first); threads, warps and
    # spinning waiters in a random order
    rnd = random.Random(knob("PERTURB")) if knob("PERTURB") else None
    p_land, p_defer = (rnd.uniform(0.02, 0.5), rnd.uniform(0.2, 0.8)) if rnd is not None else (0.0, 0.0)
    landing: list[tuple] = []  # (perturbed) TMA loads issued, not yet landed

    def land(i: int) -> None:
        req = landing.pop(i)
        before = bars[req[2]].phases
        _tma(mem, bars, req[1], req[2], req[3], *req[4:])
        if bars[req[2]].phases != before:
            wake(req[2])
    regs_of: dict[int, dict[str, Any]] = {}
    # per warp: its live threads, and those of them waiting at a shuffle or a warp operation
    # (the scheduler's test of a warp, which it makes after every step, without a scan of its lanes)
    live = [len(range(32 * w, min(T, 32 * w + 32))) for w in range(-(-T // 32))]
    at_warp = [0] * len(live)
    wg_open: dict[int, _Group | None] = dict.fromkeys(range(T))  # wgmmas issued, not yet committed
    wg_done: dict[int, list[_Group]] = {t: [] for t in range(T)}  # committed, not yet retired
    bulk_open: dict[int, list[Any]] = {t: [] for t in range(T)}  # TMA stores issued, not yet committed
    bulk_groups: dict[int, list[list[Any]]] = {t: [] for t in range(T)}  # committed, not yet waited for
    # every register in the threads' dicts where a test records them (`ALL_REGISTERS` None), else only
    # those read outside their block's statements (`llsim_blocks.compile_program`)
    every = knob("ALL_REGISTERS")
    every = mem.regs_out is not None if every is None else every
    if knob("COMPILED"):  # the compiled blocks' loads and stores: this launch's memory
        compile_program(prog, every)
        prog.compiled_ns["_mem"] = mem
    for t in range(T):
        regs = dict(base_regs)
        regs["$tid.x"] = t
        regs_of[t] = regs
        gens[t] = _compiled_thread(prog, regs, every) if knob("COMPILED") else _thread(prog, regs)
    if mem.regs_out is not None:  # a test compares the threads' registers after the block
        mem.regs_out.append(regs_of)

    def sync() -> None:
        if mem.hazards is not None:
            mem.hazards.sync()
        if mem.global_hazards is not None:
            mem.global_hazards.sync()

    def wake(key: Any) -> None:
        """Run the threads spinning on mbarrier `key` as soon as its phase
        completes, before the thread that completed it goes on: a release
        that comes too early (a stage freed while a wgmma or a load still
        reads it) lets the producer overwrite it at once, where the checks
        above see it."""
        sync()
        if rnd is not None and rnd.random() < p_defer:
            return
        for t2 in _order(rnd, [x for x in gens if waiting.get(x, ("",))[0] == "mbar_try" and waiting[x][1] == key]):
            if t2 in waiting and (bars[key].phases & 1) != (int(waiting[t2][2]) & 1):
                waiting.pop(t2)
                advance(t2, 1)

    def advance(t: int, value: Any) -> None:
        g = gens[t]
        while True:
            try:
                req = g.send(value)
            except StopIteration:
                del gens[t]
                live[t >> 5] -= 1
                waiting.pop(t, None)
                if open_copies[t] or cp_groups[t]:
                    raise Race(f"thread {t} exited with cp.async copies it never waited for")
                if bulk_open[t] or bulk_groups[t]:
                    raise Race(f"thread {t} exited with TMA stores whose reads it never waited for") from None
                return
            kind = req[0]
            if kind in _PARK:  # (the end of the chain below, tested first)
                waiting[t] = req
                if kind == "shfl" or kind == "warp":
                    at_warp[t >> 5] += 1
                return
            if kind == "load":
                value = load(mem, t, req[1], req[2])
                continue
            if kind == "store":
                store(mem, t, req[1], req[2], req[3])
                value = None
                continue
            if kind == "fence_async":
                if mem.unfenced is not None:
                    mem.unfenced[mem.unfenced == t] = -1
                value = None
                continue
            if kind == "tma_store":
                rec = (t, _tma_store(mem, t, req[1], req[2], *req[3:]))
                bulk_open[t].append(rec)
                mem.bulk_live.append(rec)
                if mem.bulk_reads is None:
                    mem.bulk_reads = np.zeros(len(mem.bufs["$smem"]), np.int64)
                np.add.at(mem.bulk_reads, rec[1], 1)
                value = None
                continue
            if kind == "bulk_commit":
                bulk_groups[t].append(bulk_open[t])
                bulk_open[t] = []
                value = None
                continue
            if kind == "bulk_wait":  # the reads of all but the newest n groups are done
                keep = int(req[1])
                done = bulk_groups[t][:len(bulk_groups[t]) - keep] if keep else bulk_groups[t]
                bulk_groups[t] = bulk_groups[t][len(done):]
                for grp in done:
                    for rec in grp:
                        mem.bulk_live = [x for x in mem.bulk_live if x is not rec]
                        np.add.at(mem.bulk_reads, rec[1], -1)
                value = None
                continue
            if kind == "copy":
                _, dst, src, n, size = req
                size = n if size is None else int(size)
                data = bytes(mem.bufs[src[0]][src[1]:src[1] + size]) if size else b""
                if size and len(data) != size:
                    raise IndexError(f"cp.async of {size} bytes at {src[1]} outside buffer {src[0]!r}")
                if dst[0] != "$smem" or n not in (4, 8, 16) or dst[1] % n or (src[1] % n and size):
                    raise IndexError(f"cp.async of {n} bytes to {dst} from {src}: not {n}-byte aligned")
                if n == 16:
                    mem.guard("$smem", dst[1], n, "cp.async")
                else:  # a chunk several copies fill: a race only where one of its words is in flight
                    words = range(dst[1] // 4, (dst[1] + n) // 4)
                    if any(w in mem.inflight_words for w in words):
                        raise Race(f"cp.async of {n} bytes at smem+{dst[1]} while a cp.async into it is in flight")
                    mem.inflight_words.update(words)
                # a 16-byte chunk is in flight while any copy into it is
                mem.inflight[dst[1] // 16] = mem.inflight.get(dst[1] // 16, 0) + 1
                open_copies[t].append((dst[1], data + b"\0" * (n - size)))
                value = None
                continue
            if kind == "cp_commit":
                cp_groups[t].append(open_copies[t])
                open_copies[t] = []
                value = None
                continue
            if kind == "cp_wait":
                keep = int(req[1])
                done = cp_groups[t][:len(cp_groups[t]) - keep] if keep else cp_groups[t]
                cp_groups[t] = cp_groups[t][len(done):]
                for grp in done:
                    for off, raw in grp:
                        left = mem.inflight[off // 16] - 1
                        if left:
                            mem.inflight[off // 16] = left
                        else:
                            del mem.inflight[off // 16]
                        if len(raw) < 16:
                            mem.inflight_words.difference_update(range(off // 4, (off + len(raw)) // 4))
                        mem.bufs["$smem"][off:off + len(raw)] = raw
                value = None
                continue
            if kind == "atomic":
                _, op, p, ty, v = req
                old = mem.load(p, ty)
                mem.store(p, ty, _atomic(op, old, v, ty))
                value = old
                continue
            if kind == "qpull":
                _, tid, p = req
                value = 0
                if int(tid) == 0:
                    value = mem.load(p, "i32")
                    mem.store(p, "i32", _atomic("add", value, 1, "i32"))
                continue
            if kind == "cas":
                _, p, ty, expect, new = req
                old = mem.load(p, ty)
                ok = int(old == expect)
                if ok:
                    mem.store(p, ty, new)
                value = (old, ok)
                continue
            if kind == "mbar_init":
                bars[req[1]] = _Barrier(int(req[2]))
                value = None
                continue
            if kind == "mbar_arrive":
                b = bars[req[1]]
                b.tx += int(req[2])
                b.pending -= 1
                if b.pending < 0:
                    raise Deadlock(f"more arrivals than the mbarrier at {req[1]} expects")
                before = b.phases
                b.check()
                if b.phases != before:
                    wake(req[1])
                value = 0
                continue
            if kind == "cluster_init":  # thread 0: an mbarrier an exchange (the others' bytes already in)
                if int(req[1]) == 0:
                    for off, n in req[3]:
                        key = (req[2][0], req[2][1] + off)
                        bars[key] = _Barrier(n)
                        bars[key].tx -= mem.cluster_in.get(key[1], 0)
                value = None
                continue
            if kind == "cluster_expect":  # thread 0 arrives, expecting the others' bytes
                if int(req[1]) == 0:
                    b = bars[req[2]]
                    b.tx += int(req[3])
                    b.pending -= 1
                    before = b.phases
                    b.check()
                    if b.phases != before:
                        wake(req[2])
                value = None
                continue
            if kind == "st_async":  # 16 bytes into another rank's shared memory, completing them on its mbarrier
                _, dst, words, bar = req
                if mem.cluster_out is None or not str(dst[0]).startswith("smem@") or bar[0] != dst[0]:
                    raise Unsupported(f"st.async to {dst} (barrier {bar}) outside a cluster's exchange")
                raw = b"".join((int(w) & 0xFFFFFFFF).to_bytes(4, "little") for w in words)
                mem.cluster_out.append((int(dst[0][5:]), int(dst[1]), raw, int(bar[1])))
                value = None
                continue
            if kind == "nbar_arrive":  # counts toward the named barrier without waiting
                arrived[int(req[1])] = arrived.get(int(req[1]), 0) + 1
                value = None
                continue
            if kind == "tma" and rnd is not None:  # (perturbed) it lands later, or at once: checked now too
                _tma_guard(mem, req[1], req[3])
                landing.append(req)
                value = None
                continue
            if kind == "tma":
                before = bars[req[2]].phases
                _tma(mem, bars, req[1], req[2], req[3], *req[4:])
                if bars[req[2]].phases != before:
                    wake(req[2])
                value = None
                continue
            if kind == "wg_commit":
                if wg_open[t] is not None:
                    wg_done[t].append(wg_open[t])  # type: ignore[arg-type]
                    wg_open[t] = None
                value = None
                continue
            if kind == "wg_wait":
                keep = int(req[1])
                done = wg_done[t][:len(wg_done[t]) - keep] if keep else wg_done[t]
                wg_done[t] = wg_done[t][len(done):]
                for rec in done:
                    rec.pending.discard(t)
                    if not rec.pending:
                        mem.wgmma_live.remove(rec)
                # registers of groups still in flight pass through as they are
                value = tuple([v.value if type(v) is _Pending and t not in v.rec.pending else v for v in req[2]])
                continue
            if kind == "mbar_try":
                b = bars[req[1]]
                if (b.phases & 1) != (int(req[2]) & 1):
                    value = 1
                    continue
            waiting[t] = req
            if kind == "shfl" or kind == "warp":
                at_warp[t >> 5] += 1
            return

    for t in _order(rnd, range(T)):
        advance(t, None)
    while gens:
        progressed = False
        while landing and rnd is not None and rnd.random() < p_land:
            land(rnd.randrange(len(landing)))
        for w in _order(rnd, range(len(live))):
            if live[w] and at_warp[w] == live[w]:  # every live lane at a shuffle or a warp operation
                lanes = [t for t in range(32 * w, min(T, 32 * w + 32)) if t in gens]
                if len(lanes) != 32:
                    raise Deadlock(f"shuffle in warp {w} with {len(lanes)} live lanes")
                reqs = [waiting.pop(t) for t in lanes]
                at_warp[w] = 0
                modes = {r[1] for r in reqs}
                if len(modes) != 1:
                    raise Deadlock("lanes of one warp at different shuffles")
                mode = reqs[0][1]
                if reqs[0][0] == "warp":
                    if mode == "llvm.nvvm.bar.warp.sync":
                        sync()
                    res = _warp_op(mode, [r[2] for r in reqs], mem)
                    for t, v in zip(lanes, res, strict=True):
                        advance(t, v)
                    progressed = True
                    continue
                vals = [r[2] for r in reqs]
                if mode == "idx":
                    res = [vals[reqs[i][3] & 31] for i in range(32)]
                else:
                    args = {r[3] for r in reqs}
                    if len(args) != 1:
                        raise Deadlock("lanes of one warp at shuffles with different offsets")
                    res = _shfl(mode, vals, reqs[0][3], reqs[0][4])
                for t, v in zip(lanes, res, strict=True):
                    advance(t, v)
                progressed = True
        if progressed:
            continue
        # what each live thread waits at, in one pass (nothing below changes it until a thread advances, after
        # which the round starts again): spinning mbarrier waits, named barriers, warpgroup MMAs, the barrier
        spinning: list[int] = []
        named: dict[int, list[int]] = {}
        groups: dict[int, list[int]] = {}
        at_bar = bool(gens)
        for t in gens:
            req = waiting.get(t, ("",))
            kind = req[0]
            if kind != "bar":
                at_bar = False
                if kind == "mbar_try":
                    spinning.append(t)
                elif kind == "nbar":
                    named.setdefault(int(req[1]), []).append(t)
                elif kind == "wg":
                    groups.setdefault(t // 128, []).append(t)
        # spinning mbarrier waits whose phase completed meanwhile
        for t in _order(rnd, spinning):
            req = waiting[t]
            if (bars[req[1]].phases & 1) != (int(req[2]) & 1):
                waiting.pop(t)
                advance(t, 1)
                progressed = True
        if progressed:
            continue
        # named barriers: `count` threads at the same id
        for bid, ts in named.items():
            count = int(waiting[ts[0]][2])
            if len(ts) + arrived.get(bid, 0) >= count:
                sync()
                arrived[bid] = arrived.get(bid, 0) - (count - len(ts))
                for t in ts:
                    waiting.pop(t)
                    advance(t, None)
                progressed = True
        if progressed:
            continue
        # warpgroup MMAs: the 128 threads of one warpgroup at one wgmma
        for gid, ts in groups.items():
            if len(ts) == 128:
                ts = sorted(ts)
                res, parts = _wgmma(waiting[ts[0]][1], [waiting[t][2] for t in ts], mem)
                for reads, outs, committed in parts:
                    rec = wg_open[ts[0]]
                    if rec is None:
                        rec = _Group(gid, len(mem.bufs["$smem"]), ts)
                        mem.wgmma_live.append(rec)
                    for r in reads:
                        rec.reads[r] = True
                    for row, t in zip(res, ts):
                        for o in outs:
                            row[o] = _Pending(row[o], rec, t)
                        if committed:
                            wg_done[t].append(rec)
                            wg_open[t] = None
                        else:
                            wg_open[t] = rec
                for t, v in zip(ts, res, strict=True):
                    waiting.pop(t)
                    advance(t, tuple(v))
                progressed = True
        if progressed:
            continue
        if at_bar:
            if len(gens) != T:
                raise Deadlock(f"barrier reached by {len(gens)} of {T} threads (others exited)")
            sync()
            for t in list(gens):
                waiting.pop(t)
                advance(t, None)
            continue
        if landing and rnd is not None:  # (perturbed) nothing else can run: a copy lands
            land(rnd.randrange(len(landing)))
            continue
        kinds = sorted({waiting.get(t, ("running",))[0] for t in gens})
        raise Deadlock(f"threads wait at {kinds}")
    if landing:
        raise Race(f"{len(landing)} TMA loads still in flight when the block ended")
    # an arrival no sync consumed would complete a later phase early (the
    # hardware's barrier counts arrivals, whoever waits)
    left = {b: n for b, n in arrived.items() if n}
    if left:
        raise Deadlock(f"named barrier arrivals left when the block ended: {left}")


def _order(rnd: random.Random | None, xs: Any) -> Any:
    """`xs` shuffled by `rnd` (`llsim.PERTURB`: a list), or as they are without one."""
    if rnd is None:
        return xs
    out = list(xs)
    rnd.shuffle(out)
    return out
