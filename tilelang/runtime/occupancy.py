"""`#[hints(max_blocks = N)]` at launch: at most N blocks of a kernel on an SM at once.

CUDA has no direct bound on the blocks an SM holds; shared memory gives one.
The launch asks for enough dynamic shared memory that N blocks fit the SM's
shared-memory carveout and N + 1 do not, and the function's preferred
carveout is set to the smallest configuration of at least `MIN_CARVEOUT`
that does that, so that the L1 cache keeps the rest of the SM's unified
memory (a smaller L1 costs a streaming kernel 2-3 %; benchmarks/RESULTS.md). A kernel's own shared memory
is at the start of the padded request, unchanged.

`plan` is the arithmetic (pure, tested on the CPU); `apply` sets the
attribute on a loaded function, asks the driver's occupancy calculator, and
pads further if the driver still fits more than N (an unknown card's
configurations), so the bound the hint promises holds or the launch is refused
with an error. Why fewer blocks can be faster: a row softmax of 2,560 f32 a
row reads 1 % faster with 5 blocks of 8 warps an SM than with the 8 the
threads allow (RESULTS, issue 14).

One carveout for a set of kernels (`set_carveout`, `scoped`, the
environment's `TILEC_CARVEOUT=P`, the LLM engine's `Plan.cv`): every kernel
loaded while it is set takes the preferred carveout P % (its own copy of the
module, so kernels loaded without it keep theirs), so that a kernel's blocks
may be scheduled on an SM still running the previous kernel's (an SM changes
its L1/shared split only once drained: with differing carveouts PDL's next
grid co-resided on 8 of 132 SMs, with one on all of them; RESULTS.md, issue
17 form e). A `max_blocks = N` bound still holds under it: the launch asks
for a share of P %'s configuration such that N blocks fit and N + 1 do not
(`uniform`), checked with the driver's occupancy calculator; a kernel whose
one block does not fit P % is refused with an error (the driver would take a
larger configuration for it, and the set would not share one).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Iterator
from typing import Any

from tilelang.frozen import frozen
from tilelang.source import Span

# The SM's shared-memory configurations in KB, by compute capability (the
# CUDA programming guide's "shared memory capacity" per architecture); a
# preferred carveout is rounded up to one of these.
CARVEOUTS_KB: dict[tuple[int, int], tuple[int, ...]] = {
    (8, 0): (0, 8, 16, 32, 64, 100, 132, 164),
    (8, 6): (0, 8, 16, 32, 64, 100),
    (8, 7): (0, 8, 16, 32, 64, 100, 132, 164),
    (8, 9): (0, 8, 16, 32, 64, 100),
    (9, 0): (0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
}
GRANULE = 128  # bytes: the unit shared memory is allocated to blocks in
# The smallest carveout a bound takes: on the H200 a row softmax bounded to 5
# blocks an SM read 4,205-4,222 GB/s under carveouts of 32 to 164 KB and 4,147
# under 8 KB, no faster than unbounded (benchmarks/RESULTS.md, issue 14).
MIN_CARVEOUT = 32 * 1024


@frozen(eq=True)
class CapPlan:
    smem: int  # dynamic shared memory each launch asks for (bytes)
    carveout: int  # percent of the SM's shared memory, for the preferred carveout


@frozen(eq=True)
class SmLimits:
    smem: int  # shared memory an SM has (bytes)
    reserved: int  # shared memory the system reserves per block (bytes)
    threads: int  # threads an SM holds
    blocks: int  # blocks an SM holds
    cc: tuple[int, int]  # compute capability


def _share_of_all(n: int, sm: SmLimits) -> int:
    """A block's dynamic shared memory when n blocks split all of the SM's."""
    return sm.smem // n // GRANULE * GRANULE - sm.reserved


def plan(n: int, threads: int, smem: int, sm: SmLimits) -> CapPlan | None:
    """How a kernel of `threads` threads a block, using `smem` bytes of shared
    memory, runs at most `n` blocks an SM; None when the SM's threads, block
    slots or shared memory already allow no more than `n`."""
    need = smem + sm.reserved
    if n <= 0 or min(sm.threads // threads, sm.blocks, sm.smem // (-(-need // GRANULE) * GRANULE)) <= n:
        return None
    configs = [kb * 1024 for kb in CARVEOUTS_KB.get(sm.cc, ()) if MIN_CARVEOUT <= kb * 1024 <= sm.smem] or [sm.smem]
    for c in configs:
        per = c // n // GRANULE * GRANULE  # each block's share: n fit in c ...
        if per >= need and (n + 1) * per > c:  # ... and n + 1 do not
            # c * 100 // smem percent is within 1 % of c, above the configuration
            # below it (8 KB or more apart): the driver rounds it up to c
            return CapPlan(per - sm.reserved, max(1, c * 100 // sm.smem))
    return CapPlan(_share_of_all(n, sm), 100)


def limits(ctx: Any) -> SmLimits:
    d = ctx.d
    a = d.CUdevice_attribute

    def get(x: Any) -> int:
        err, v = d.cuDeviceGetAttribute(x, ctx.dev)
        if int(err) != 0:
            raise ValueError(f"the driver did not say the device's {x} (error {int(err)})")
        return int(v)

    return SmLimits(
        smem=get(a.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
        reserved=get(a.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK),
        threads=get(a.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR),
        blocks=get(a.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
        cc=(ctx.info.major, ctx.info.minor),
    )


def resident(d: Any, handle: Any, threads: int, smem: int) -> int:
    """The blocks an SM holds at once by the driver's occupancy calculator."""
    err, v = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(handle, threads, smem)
    return int(v) if int(err) == 0 else -1


def blocks_of(ctx: Any, fn: Any, abi: Any) -> int:
    """The blocks of loaded function `fn` (its `KernelABI` `abi`) an SM holds, asked of the driver once a
    function (`stream_rule.refine`); -1 where the driver cannot say (a stub: the rule's estimate)."""
    memo = ctx.__dict__.setdefault("_blocks_of", {})
    if id(fn) not in memo:  # (the function kept with its count: its id is not reused while the memo lives)
        try:
            memo[id(fn)] = (fn, resident(ctx.d, fn.handle, abi.num_threads, abi.smem_bytes))
        except Exception:  # a driver without the occupancy calculator
            memo[id(fn)] = (fn, -1)
    return int(memo[id(fn)][1])


def streamed(ctx: Any, variant: Any, pk: Any, facts_key: tuple[Any, ...], facts: dict[str, Any],
             grid: tuple[int, ...], got: tuple[Any, Any], span: Span | None) -> tuple[Any, Any, Any]:
    """`CudaDevice._choose`'s step for a kernel whose first variant `got` (abi, function) asks the rule
    (`backend/stream_rule.py`): (facts key, facts, variant) of the launch on `grid`: the variant whose loops
    stream where `stream_rule.refine` says so and its own blocks an SM (its registers: ptxas's) still hold the
    bytes in flight it was chosen for (`stream_rule.holds`); else as given. `variant` is `CudaDevice._variant`."""
    from tilelang.backend import stream_rule

    sms = ctx.info.sm_count
    more = stream_rule.refine(got[0], facts, grid, sms, lambda: blocks_of(ctx, got[1], got[0]))
    if more is None:
        return facts_key, facts, got
    key, refined = (*facts_key, more[0]), more[1]
    alt = variant(pk, key, refined, span)
    ask, blocks, blocks_alt = got[0].stream, blocks_of(ctx, got[1], got[0]), blocks_of(ctx, alt[1], alt[0])
    if min(blocks, blocks_alt) > 0 and not stream_rule.holds(ask, refined[ask.tensor].stream, math.prod(grid), sms,
                                                             blocks, blocks_alt):
        return facts_key, facts, got  # (a driver that cannot say: the model's estimate stands)
    return key, refined, alt


def apply(ctx: Any, fn: Any, n: int, threads: int, smem: int,
          span: Span | None = None) -> tuple[int, int] | str:
    """Cap the loaded function `fn` (a `cuda.Function`) at `n` blocks an SM:
    sets its preferred carveout (and raises its dynamic shared-memory limit,
    `Function.ensure_smem`) and returns (the dynamic shared memory its
    launches ask for, the blocks the driver then allows), or a sentence
    saying why it cannot."""
    try:
        sm = limits(ctx)
    except ValueError as e:
        return str(e)
    p = plan(n, threads, smem, sm)
    if p is None:
        return smem, resident(ctx.d, fn.handle, threads, smem)
    d = ctx.d
    fa = d.CUfunction_attribute
    per_block = p.smem
    for carve in (p.carveout, 100):
        (err,) = d.cuFuncSetAttribute(fn.handle, fa.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carve)
        if int(err) != 0:
            return f"the driver refused a shared-memory carveout of {carve} % (error {int(err)})"
        if carve == 100:  # an unknown configuration table: each block a share of all of it
            per_block = max(per_block, _share_of_all(n, sm))
        fn.ensure_smem(per_block, span)  # the occupancy calculator counts only what a launch may ask for
        got = resident(d, fn.handle, threads, per_block)
        if 0 <= got <= n:
            return per_block, got
    return f"the driver still fits {got} blocks an SM with {per_block} bytes of shared memory each"


def cap_abi(ctx: Any, fn: Any, abi: Any, span: Span | None) -> Any:
    """The ABI of the loaded function `fn` (a `cuda.Function`) whose launches
    run at most `abi.max_blocks` blocks an SM: its shared memory padded."""
    from tilelang.runtime.cuda_driver import cuda_error

    got = apply(ctx, fn, abi.max_blocks, abi.num_threads, abi.smem_bytes, span)
    if isinstance(got, str):
        raise cuda_error(f"bounding `{fn.name}` to {abi.max_blocks} blocks an SM", got, span,
                         help="remove the `max_blocks` hint, or raise it")
    return dataclasses.replace(abi, smem_bytes=got[0])


# -- one carveout for a set of kernels ------------------------------------------------


def parse_carveout(value: object) -> int | None:
    """A uniform carveout setting: None or "" (off: each kernel its own), or
    a percent 0..100 of the SM's shared memory; a ValueError says why not."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"a shared-memory carveout is a percent 0..100, not {value!r}")
    try:
        pct = int(value)
    except ValueError:
        raise ValueError(f"a shared-memory carveout is a percent 0..100, not {value!r}") from None
    if not 0 <= pct <= 100:
        raise ValueError(f"a shared-memory carveout is a percent 0..100, not {pct}")
    return pct


_ENV = os.environ.get("TILEC_CARVEOUT", "")
# a setting it does not take: E0604 where a GPU device opens (`CudaDevice`; this module is imported before
# any, where no error can be placed): (variable, value, the values it takes); it was a warning, and ignored
BAD_SETTING: tuple[str, str, str] | None = None
try:
    CARVEOUT: int | None = parse_carveout(_ENV)  # the setting kernels are loaded under now
except ValueError:
    BAD_SETTING = ("TILEC_CARVEOUT", _ENV, "a percent of the SM's shared memory, 0 to 100")
    CARVEOUT = None


def set_carveout(pct: int | None) -> int | None:
    """Every kernel loaded from now on (by `CudaDevice`) takes the preferred
    carveout `pct` % (None: each its own, as before); the previous setting.
    Kernels already loaded under another setting keep theirs (the setting is
    part of a kernel's variant, `CudaDevice._variant`)."""
    global CARVEOUT
    old, CARVEOUT = CARVEOUT, parse_carveout(pct)
    return old


@contextlib.contextmanager
def scoped(pct: int | None) -> Iterator[None]:
    """The setting for the launches inside the `with`, the previous one after."""
    old = set_carveout(pct)
    try:
        yield
    finally:
        set_carveout(old)


def config_of(pct: int, sm: SmLimits) -> int:
    """The configuration (bytes) the SM takes for a preferred carveout of
    `pct` %: the smallest of the card's table that holds pct % of its shared
    memory (pct % itself on a card the table does not know)."""
    want = -(-sm.smem * pct // 100)
    table = [kb * 1024 for kb in CARVEOUTS_KB.get(sm.cc, ()) if want <= kb * 1024 <= sm.smem]
    return min(table) if table else want


def uniform(pct: int, n: int, threads: int, smem: int, sm: SmLimits) -> CapPlan | str:
    """A kernel of `threads` threads a block using `smem` bytes of shared
    memory under the preferred carveout `pct` %: the dynamic shared memory
    its launches ask for (unchanged, or padded so that at most `n` blocks
    fit when n > 0) and `pct`; or a sentence saying why it cannot."""
    c = config_of(pct, sm)
    share = -(-(smem + sm.reserved) // GRANULE) * GRANULE
    if share > c:
        return (f"one block's {share} bytes of shared memory do not fit a carveout of {pct} % "
                f"({c // 1024} KB): the driver would give this kernel a larger one")
    if n <= 0 or min(sm.threads // threads, sm.blocks, c // share) <= n:
        return CapPlan(smem, pct)
    per = c // n // GRANULE * GRANULE  # >= share: n + 1 shares fit c
    if (n + 1) * per <= c:
        return f"no share of a {c // 1024} KB carveout holds {n} blocks an SM and not {n + 1}"
    return CapPlan(per - sm.reserved, pct)


def apply_uniform(ctx: Any, fn: Any, pct: int, n: int, threads: int, smem: int,
                  span: Span | None = None) -> tuple[int, int] | str:
    """Set the loaded function `fn`'s preferred carveout to `pct` % and, when
    n > 0, pad its launches' shared memory so that at most `n` blocks an SM
    fit (`uniform`); (the dynamic shared memory its launches ask for, the
    blocks the driver then allows), or a sentence saying why it cannot."""
    try:
        sm = limits(ctx)
    except ValueError as e:
        return str(e)
    p = uniform(pct, n, threads, smem, sm)
    if isinstance(p, str):
        return p
    d = ctx.d
    fa = d.CUfunction_attribute
    (err,) = d.cuFuncSetAttribute(fn.handle, fa.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, pct)
    if int(err) != 0:
        return f"the driver refused a shared-memory carveout of {pct} % (error {int(err)})"
    fn.ensure_smem(p.smem, span)
    got = resident(d, fn.handle, threads, p.smem)
    if got == 0:
        return f"the driver fits no block of it under a carveout of {pct} %"
    if n > 0 and got > n:
        return f"the driver still fits {got} blocks an SM under a carveout of {pct} %"
    return p.smem, got


def carve_abi(ctx: Any, fn: Any, abi: Any, pct: int, span: Span | None) -> Any:
    """The ABI of the loaded function `fn` under the uniform carveout `pct` %
    (`apply_uniform`, its `max_blocks` bound kept): its shared memory padded."""
    from tilelang.runtime.cuda_driver import cuda_error

    got = apply_uniform(ctx, fn, pct, abi.max_blocks, abi.num_threads, abi.smem_bytes, span)
    if isinstance(got, str):
        raise cuda_error(f"giving `{fn.name}` a shared-memory carveout of {pct} %", got, span,
                         help="raise the carveout (TILEC_CARVEOUT, `Plan.cv`), or leave it unset")
    return dataclasses.replace(abi, smem_bytes=got[0])
