"""The `TILEC_*` (and `TILE_*`) environment switches read and refused in one way.

A switch set to a value it does not take is the user's setting, not a bug in
tilec: `SwitchError` is an E0604 diagnostic that names the variable, the value
and the values it takes, with a help to unset it. It is a `TileError` (the
runtime reports it at the launch that compiled the kernel), a `ValueError`
(what the readers raised before) and is reported as a diagnostic by the
driver's GPU stages (`backend._reporting`): `tilec emit` and `tilec run` print
it and exit 1 / 3, never an internal compiler error (which they did before,
2026-12-07 hgpuerr).

A leaf module (it imports only the diagnostics' model) so that `split_form.py`,
which the GPU IR's nodes import, the runtime and the interpreter can use it
without loading the backend (`backend/env_switch.py` is its name there).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

from tilelang.diagnostics.model import Diagnostic, TileError


def _choices(allowed: tuple[str, ...]) -> str:
    return ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]


class SwitchError(TileError, ValueError):
    """`name` set to `value`, which it does not take (`expected`: the values it takes, in words)."""

    def __init__(self, name: str, value: str, expected: str) -> None:
        from tilelang.diagnostics.codes.codegen import GPU_SCHEDULE_REFUSED

        diag = (Diagnostic.error(GPU_SCHEDULE_REFUSED, f"environment variable `{name}={value!r}` is not a setting "
                                 f"it takes: expected {expected}")
                .with_help(f"unset `{name}` (its default is the tested setting) or set it to one of the values "
                           "above; the program itself need not change"))
        TileError.__init__(self, diag)
        self.diag = diag  # (a `CodegenError`'s face: the backend's callers read `.diag`)
        self.name, self.value = name, value


def mode(name: str, default: str, allowed: tuple[str, ...]) -> str:
    """The value of switch `name` (unset: `default`); a value not in `allowed` is a `SwitchError` naming the
    switch and the values it takes ("TILEC_GEMM_WIDEN='yes': expected 0, 1 or auto"). Empty: unset."""
    want = os.environ.get(name, "") or default
    if want not in allowed:
        raise SwitchError(name, want, _choices(allowed))
    return want


def flag(name: str, default: str) -> bool:
    """Switch `name` of "0" (off) or "1" (on); unset or empty: `default`. Anything else is a `SwitchError`:
    `TILEC_SHIFT_DOT=off` was on (every value but "0" was), `TILEC_TMA_PREFETCH=yes` off (every value but "1")."""
    want = os.environ.get(name, "") or default
    if want not in ("0", "1"):
        raise SwitchError(name, want, "0 or 1")
    return want == "1"


def number(name: str, default: int, lowest: int = 0, what: str = "") -> int:
    """Switch `name` as an integer of at least `lowest` (unset or empty: `default`); anything else is a
    `SwitchError` (`what`: the words for the values it takes, if not "an integer >= lowest")."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = lowest - 1
    if n < lowest:
        raise SwitchError(name, raw, what or f"an integer of at least {lowest}")
    return n


def numbers(name: str, default: tuple[int, ...], lowest: int = 1) -> tuple[int, ...]:
    """Switch `name` as integers of at least `lowest` separated by commas ("64,128"; unset or empty: `default`);
    anything else is a `SwitchError`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    parts = [x.strip() for x in raw.split(",") if x.strip()]
    if not parts or not all(x.isdigit() and int(x) >= lowest for x in parts):
        raise SwitchError(name, raw, f"integers of at least {lowest} separated by commas (\"64,128\")")
    return tuple(int(x) for x in parts)


class Switch(NamedTuple):
    """One environment switch: `name`; `code`, what its value does to a kernel's generated code: "compile" (the
    backend reads it as it compiles a kernel, so it can change the LLVM text, the PTX or the ABI: its value is in
    the compiled kernels' keys, `codegen_key`), "start" (it can change the code but is read once, as the runtime
    starts: the runtime's own state, which keys the variants, holds it; a change later in the process does
    nothing), or "none" (never the code: the runtime's launches, buffers, tools, the interpreter); `what`: a few
    words."""

    name: str
    code: str
    what: str


_CODE, _START, _NONE = "compile", "start", "none"

#: Every `TILEC_*` / `TILE_*` switch tilec reads (tests/runtime/test_codegen_switches.py: each name read in the
#: package is here, each here is read). The audit (hnum, 2026-12-07): every switch the backend reads while compiling
#: (`backend/`: passes, codegen, fastmath, target, llvm, split forms, layouts) is "compile" but `TILEC_EXPLAIN`
#: (it prints the path taken) and `TILEC_PRINT_BUFFER_MB` (the runtime's print buffer; a kernel reads its capacity
#: from the buffer's header); `TILEC_ERF_F32` and `TILEC_ATAN2_F32` are read by the interpreter too. A new switch
#: gets an entry here (its `code` by the same question: can its value change a kernel's LLVM text, PTX or ABI?).
SWITCHES: dict[str, Switch] = {s.name: s for s in (
    Switch("TILEC_ACC_PAIRS", _CODE, "a GEMM epilogue's two adjacent narrow columns in one load (hcliff13)"),
    Switch("TILEC_ACC_REDUCE_CHAINS", _CODE, "independent chains of an accumulator-layout reduction"),
    Switch("TILEC_ARCH", _START, "the PTX target (read as the CUDA device is made)"),
    Switch("TILEC_ATAN2_F32", _CODE, "f32 atan2's algorithm (the interpreter's too)"),
    Switch("TILEC_ATOMIC_SPREAD", _CODE, "a replicated tile's atomics shared among its copies (hcliff13)"),
    Switch("TILEC_ATTN_CHAIN", _CODE, "attention: the chained softmax"),
    Switch("TILEC_ATTN_CHAIN_EPI2", _CODE, "attention: the chain's second epilogue"),
    Switch("TILEC_ATTN_CHAIN_HALVES", _CODE, "attention: the chain's query halves"),
    Switch("TILEC_ATTN_CHAIN_PEEL", _CODE, "attention: the chain's peeled iteration"),
    Switch("TILEC_ATTN_CHAIN_SPLIT", _CODE, "attention: the chain's split"),
    Switch("TILEC_ATTN_CHAIN_TAIL", _CODE, "attention: the chain's tail"),
    Switch("TILEC_ATTN_DIVS_IN_ROLE", _CODE, "attention: divisions in the warp roles"),
    Switch("TILEC_ATTN_DROP_ZEROS", _CODE, "attention: zero initialisations dropped"),
    Switch("TILEC_ATTN_EARLY_VOTE", _CODE, "attention: the early vote"),
    Switch("TILEC_ATTN_EDGE", _CODE, "attention: the edge tiles' form"),
    Switch("TILEC_ATTN_FASTDIV", _CODE, "attention: fast divisions of the tile walk"),
    Switch("TILEC_ATTN_KVFIRST", _CODE, "attention: K/V loads first"),
    Switch("TILEC_ATTN_LAST_BLOCK", _CODE, "attention: `last_block` regions"),
    Switch("TILEC_ATTN_LOADS", _CODE, "attention: the loads' form"),
    Switch("TILEC_ATTN_ONCE", _CODE, "attention: the once variant"),
    Switch("TILEC_ATTN_OSTORE", _CODE, "attention: the output store"),
    Switch("TILEC_ATTN_OSTORE_BY", _CODE, "attention: the output store's unit"),
    Switch("TILEC_ATTN_PEEL", _CODE, "attention: the peeled iteration"),
    Switch("TILEC_ATTN_PERSISTENT", _CODE, "attention: persistent CTAs"),
    Switch("TILEC_ATTN_PINGPONG", _CODE, "attention: ping-pong consumers"),
    Switch("TILEC_ATTN_PINWAIT", _CODE, "attention: the pinned wait"),
    Switch("TILEC_ATTN_PRODUCER3", _CODE, "attention: the three-stage producer"),
    Switch("TILEC_ATTN_PRODUCER_REGS", _CODE, "attention: the producer's registers"),
    Switch("TILEC_ATTN_QDOUBLE", _CODE, "attention: doubled query tiles"),
    Switch("TILEC_ATTN_QEARLY", _CODE, "attention: early query loads"),
    Switch("TILEC_ATTN_RELOAD", _CODE, "attention: reloads"),
    Switch("TILEC_ATTN_ROTATE", _CODE, "attention: the rotated schedule"),
    Switch("TILEC_ATTN_ROTATE_PACK", _CODE, "attention: the rotated schedule's packing"),
    Switch("TILEC_ATTN_ROTATE_TOPWAIT", _CODE, "attention: the rotated schedule's top wait"),
    Switch("TILEC_ATTN_ROWSKIP", _CODE, "attention: row skips of the accumulator view"),
    Switch("TILEC_ATTN_ROWSTORE", _CODE, "attention: row stores of the accumulator view"),
    Switch("TILEC_ATTN_SAHEAD", _CODE, "attention: S computed ahead"),
    Switch("TILEC_ATTN_SAHEAD_UNROLL", _CODE, "attention: S ahead, unrolled"),
    Switch("TILEC_ATTN_SCALAR_READS", _CODE, "attention: scalar reads"),
    Switch("TILEC_ATTN_SCHEDULE", _CODE, "attention: the schedule"),
    Switch("TILEC_ATTN_SHORT_D", _CODE, "attention: the short head dims"),
    Switch("TILEC_ATTN_SPECULATE", _CODE, "attention: speculation"),
    Switch("TILEC_ATTN_SPLIT", _CODE, "attention: the key split"),
    Switch("TILEC_ATTN_SPLIT_EDGE", _CODE, "attention: the split's edge"),
    Switch("TILEC_ATTN_SPLIT_FORMS", _CODE, "attention: the split as a second compiled form"),
    Switch("TILEC_ATTN_SPLIT_MERGE", _CODE, "attention: the split's merge"),
    Switch("TILEC_ATTN_SPLIT_PAIRS", _CODE, "attention: the split form's pairs"),
    Switch("TILEC_ATTN_SPLIT_WIDE", _CODE, "attention: the wide split"),
    Switch("TILEC_ATTN_STAGES", _CODE, "attention: the pipeline's stages"),
    Switch("TILEC_ATTN_STAMPS", _CODE, "attention: time stamps"),
    Switch("TILEC_ATTN_STORE16", _CODE, "attention: 16-bit stores"),
    Switch("TILEC_ATTN_TAIL", _CODE, "attention: the causal tail variant"),
    Switch("TILEC_ATTN_TAIL_D", _CODE, "attention: the tail variant's head dims"),
    Switch("TILEC_ATTN_WALK", _CODE, "attention: the tile walk"),
    Switch("TILEC_ATTN_XROT", _CODE, "attention: the cross rotation"),
    Switch("TILEC_CACHE_DIR", _NONE, "the compile cache's directory"),
    Switch("TILEC_CARVEOUT", _NONE, "the shared-memory carveout of every launch (read at start)"),
    Switch("TILEC_CONVERT_TOGETHER", _CODE, "layout conversions together"),
    Switch("TILEC_COPY_PRODUCER", _CODE, "a copy producer warp"),
    Switch("TILEC_DECODE_PLAN", _NONE, "the LLM example's decode plan profile (examples/llm/plan.py)"),
    Switch("TILEC_DEFAULT_WARPS", _CODE, "the default warp count"),
    Switch("TILEC_DROP_DEAD_BROADCASTS", _CODE, "dead broadcasts dropped"),
    Switch("TILEC_ERF_F32", _CODE, "f32 erf's algorithm (the interpreter's too)"),
    Switch("TILEC_EXP2_POLY", _CODE, "exp2 on the FMA pipe"),
    Switch("TILEC_EXPLAIN", _NONE, "print each compiled kernel's path"),
    Switch("TILEC_EXP_LN2", _CODE, "exp's ln2 form"),
    Switch("TILEC_EXP_NONPOS", _CODE, "exp of non-positive arguments"),
    Switch("TILEC_FEWER_WARPS", _CODE, "fewer warps for small tiles"),
    Switch("TILEC_FMA_HALF_STAGES", _CODE, "the FMA pipeline's stage rule for 2-byte products (hgemv)"),
    Switch("TILEC_FMA_KSPLIT", _CODE, "the FMA pipeline's split-K among warps (hgemv)"),
    Switch("TILEC_FMA_MAXNREG", _CODE, "the FMA pipeline's register cap"),
    Switch("TILEC_FMA_NARROW", _CODE, "1- and 2-token 2-byte products on the FMA pipeline (hgemv)"),
    Switch("TILEC_FMA_PIPELINE", _CODE, "the FMA pipeline"),
    Switch("TILEC_FMA_PREFETCH", _CODE, "the FMA pipeline's prefetch"),
    Switch("TILEC_FMA_TRANSPOSE", _CODE, "the FMA pipeline's transposed ring"),
    Switch("TILEC_FMA_WIDEN", _CODE, "a 2-byte FMA-pipeline operand widened once a CTA (hgemv)"),
    Switch("TILEC_GATHER_DOT", _CODE, "gathered dot products"),
    Switch("TILEC_GEMM_BLOCKS", _CODE, "GEMM: blocks an SM"),
    Switch("TILEC_GEMM_EPILOGUE_OPS", _CODE, "GEMM: epilogue ops"),
    Switch("TILEC_GEMM_PAD", _CODE, "GEMM: padding"),
    Switch("TILEC_GEMM_PARTS", _CODE, "GEMM: parts"),
    Switch("TILEC_GEMM_PERSISTENT", _CODE, "GEMM: persistent CTAs"),
    Switch("TILEC_GEMM_ROWS", _CODE, "GEMM: coarsened rows"),
    Switch("TILEC_GEMM_SPLITK", _CODE, "GEMM: split-K"),
    Switch("TILEC_GEMM_WIDEN", _CODE, "GEMM: wide tiles"),
    Switch("TILEC_GEMM_WIDE_RING", _CODE, "GEMM: the wide tiles' ring"),
    Switch("TILEC_HISTORY", _NONE, "the REPL's history file"),
    Switch("TILEC_ICE_DIR", _NONE, "where internal-error reports go"),
    Switch("TILEC_IF_PUSH", _CODE, "conversions pushed into `if`s"),
    Switch("TILEC_INT8_MMA", _CODE, "int8 tensor-core products"),
    Switch("TILEC_INT8_RING", _CODE, "int8 rings"),
    Switch("TILEC_L2_EVICT", _CODE, "L2 eviction hints"),
    Switch("TILEC_LAUNCH", _NONE, "the launch call's route"),
    Switch("TILEC_LDG_EARLY", _CODE, "early global loads"),
    Switch("TILEC_MBAR_ONE_INIT", _CODE, "one barrier initialisation"),
    Switch("TILEC_MMA_RING", _CODE, "mma.sync loops' loads through cp.async rings (hcliff15)"),
    Switch("TILEC_MMA_RING_RELAY", _CODE, "those rings' loads in their conversion's layout (hcliff15)"),
    Switch("TILEC_NESTED_CARRY", _CODE, "nested loops' carried layouts"),
    Switch("TILEC_NO_CTYPES_LAUNCH", _NONE, "no ctypes launch"),
    Switch("TILEC_PDL", _START, "programmatic dependent launch (read at start; `set_pdl` after)"),
    Switch("TILEC_PERSISTENT_SMS", _NONE, "persistent kernels' SM cap (the grid)"),
    Switch("TILEC_PREFILL_WG3", _NONE, "the prefill plan's three consumer warpgroups at D = 64 (examples/python/prefill_plan.py, hattn9)"),
    Switch("TILEC_PREWARM", _NONE, "the toolchain's prewarm"),
    Switch("TILEC_PRINT_BUFFER_MB", _NONE, "the device print buffer's size"),
    Switch("TILEC_PRODUCTS_COLS", _CODE, "products: columns"),
    Switch("TILEC_PRODUCTS_PIPELINE", _CODE, "products: the pipeline"),
    Switch("TILEC_PRODUCTS_STAGES", _CODE, "products: stages"),
    Switch("TILEC_PRODUCTS_WGMMA", _CODE, "products: wgmma"),
    Switch("TILEC_QUEUE_PER_SM", _NONE, "a tile queue's CTAs an SM (the grid)"),
    Switch("TILEC_REDUCE_STAGED", _CODE, "a staged reduction by groups of threads an output (hred)"),
    Switch("TILEC_REDUCE_XPOSE", _CODE, "a transposing butterfly for several rows a thread (hred)"),
    Switch("TILEC_REMAKE_FREE", _CODE, "free values remade"),
    Switch("TILEC_REPLICATE_SMALL", _CODE, "small tiles replicated"),
    Switch("TILEC_SHIFT_DOT", _CODE, "shifted dot products"),
    Switch("TILEC_SHIFT_DOT_WARP", _CODE, "shifted dot products a warp"),
    Switch("TILEC_SIBLING_CONVERT", _CODE, "sibling conversions"),
    Switch("TILEC_SKIP_UNIT_SCALE", _CODE, "unit scales skipped"),
    Switch("TILEC_SM80_FALLBACK", _CODE, "the sm_80 pipeline's fallback"),
    Switch("TILEC_STATIC_DIMS", _CODE, "dims the type fixes as constants"),
    Switch("TILEC_STREAM_AUTO", _CODE, "hint-free loops streamed"),
    Switch("TILEC_TANH_DIV", _CODE, "tanh's quotient (hcliff13)"),
    Switch("TILEC_TMA_PREFETCH", _CODE, "TMA prefetches"),
    Switch("TILEC_TRACE", _START, "block timelines (read at start; `set_trace` after)"),
    Switch("TILEC_TRACE_MARK", _CODE, "block timelines' marks"),
    Switch("TILEC_TRACE_RECORDS", _NONE, "block timelines' ring size"),
    Switch("TILEC_UNROLL", _CODE, "short constant loops unrolled (hcliff13)"),
    Switch("TILEC_WARPS_ON_COLUMNS", _CODE, "warps on columns"),
    Switch("TILE_INTERP_MODE", _NONE, "the interpreter's strategy (block or vector: the same values)"),
    Switch("TILE_SANITIZE", _NONE, "the interpreter's race and bounds oracle"),
)}

#: the switches whose values are in every compiled kernel's key (`Switch.code` "compile"), in a fixed order
CODEGEN: tuple[str, ...] = tuple(n for n, s in SWITCHES.items() if s.code == _CODE)
_CODEGEN_KEYS = tuple(map(os.environ.encodekey, CODEGEN))  # (the environment table's own keys: bytes on POSIX)


def codegen_key() -> tuple[object, ...]:
    """The values of the `CODEGEN` switches in the environment now, in that order (None: unset): part of the key
    of a compiled kernel, in the runtime's memory (`CudaDevice._variant`) and, as `codegen_setting`, on disk
    (`backend.compile_kernel`'s PTX entries, the tuner's records), so a switch set or changed in the process
    compiles a kernel again (hnum: `TILEC_ERF_F32=0` set after a launch kept the first code). One lookup a switch
    in the environment's own table (~2 us for ~100; `os.environ.get` each: ~40 us)."""
    data = getattr(os.environ, "_data", None)
    if type(data) is dict:
        return tuple(map(data.get, _CODEGEN_KEYS))
    return tuple(map(os.environ.get, CODEGEN))


def codegen_setting() -> str:
    """`codegen_key` in words, for a key on disk: "NAME=value" of each codegen switch set (non-empty), joined by
    newlines; "" when none is (then the keys are the ones the switches' defaults always had)."""
    return "\n".join(f"{n}={v}" for n in CODEGEN if (v := os.environ.get(n, "")))


_HOOKS: list[Callable[[], None]] = []
_CODEGEN_NAMES = frozenset(CODEGEN)


def on_codegen_change(hook: Callable[[], None]) -> None:
    """Call `hook` after each time a codegen switch is set, changed or removed in `os.environ` in this process:
    the launch memos that skip the variant lookup (`codegen_key`'s) drop what they hold (the runtime's
    `PreparedKernel.fast`, the Python API's plans), so the next launch finds the variant of the new setting."""
    _HOOKS.append(hook)


def clear_on_codegen_change(holders: weakref.WeakSet[Any], attr: str) -> None:
    """`on_codegen_change`'s hook that clears the memo `attr` (a dict) of each object in `holders` (a weak set the
    caller adds its objects to): the runtime's `PreparedKernel.fast`."""
    def hook() -> None:
        for h in list(holders):
            getattr(h, attr).clear()

    on_codegen_change(hook)


def _changed() -> None:
    for hook in list(_HOOKS):
        hook()


class _Environ(os._Environ[str]):
    """`os.environ`'s own class with its writes of a codegen switch told to `on_codegen_change`'s hooks: a
    launch served by a memo (the same kernel and argument kinds as an earlier call) reads no switch, so without
    this a switch set in the process after a kernel's first launch kept its first code there (`TILEC_ERF_F32=0`
    after a call: the f32 algorithm still ran). Only `[]=` and `del` are its own (`update`, `pop`, `clear`,
    `setdefault` and `monkeypatch.setenv` go through them); a process-level write that bypasses `os.environ`
    (`os.putenv`) is seen neither here nor by the switches' readers."""

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        if key in _CODEGEN_NAMES:
            _changed()

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        if key in _CODEGEN_NAMES:
            _changed()


_was = type(os.environ)
if _was is getattr(os, "_Environ", None) or (_was.__name__ == "_Environ" and _was.__module__ == __name__):
    os.environ.__class__ = _Environ  # (the second: this module loaded again, its hooks list a new one)


__all__ = ["CODEGEN", "SWITCHES", "Switch", "SwitchError", "clear_on_codegen_change", "codegen_key", "codegen_setting",
           "flag", "mode", "number", "numbers", "on_codegen_change"]
