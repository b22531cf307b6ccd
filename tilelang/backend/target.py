"""GPU targets (`Target`, the settings read from `TILEC_*`) and ptxas for tests; the LLVM-IR-text -> PTX
driver is `llc.py` (re-exported here: `llvm_to_ptx`), the one module the compile cache's PTX keys hash
(`runtime/cache.PTX_STEP`), so an edit here (a new setting) keeps every PTX entry.

Invariants:
- No CUDA library is imported here: PTX is produced on any machine.
- LLVM backend failures abort the process instead of raising (notes §9), so
  every target/feature combination we build is validated here first and only
  ever asks for instructions the chosen `arch` supports.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from tilelang.backend.env_switch import SwitchError, flag
from tilelang.backend.llc import (  # noqa: F401  (re-exported: the driver's one home is llc.py)
    _INIT_LOCK,
    TRIPLE,
    _llvm,
    _ptx_version,
    _target_machine,
    llvm_to_ptx,
)

SUPPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")
DEFAULT_ARCH = "sm_80"  # forward compatible: sm_80 PTX JIT-compiles on Hopper


# where a PDL kernel triggers its dependents (`Target.pdl_trigger`)
PDL_TRIGGERS = ("entry", "late", "last", "exit")
# what a PDL kernel prefetches into L2 before its wait (`Target.pdl_prefetch`):
# "prefetch", a `prefetch.global.L2` per line from every thread; "bulk", one
# `cp.async.bulk.prefetch.L2` per row of each tile (a thread a row); "loads",
# no prefetch: the kernel's leading loads of tensors the runtime found the
# previous launch does not write (`TensorFacts.early`) come before the wait
PDL_PREFETCHES = ("prefetch", "bulk", "loads")


# where a traced kernel's mark stamp is taken (`Target.trace_mark`, `codegen/trace.py`)
TRACE_MARKS = ("wait1", "store1", "ring")


def trace_mark_default() -> str:
    """`TILEC_TRACE_MARK`: "wait1", "store1" or "ring" (`Target.trace_mark`); unset or empty: none. Anything else
    is E0604 (`SwitchError`; it was a warning and read as none, hfix6: as every other switch's)."""
    v = os.environ.get("TILEC_TRACE_MARK", "")
    if v and v not in TRACE_MARKS:
        raise SwitchError("TILEC_TRACE_MARK", v, ", ".join(TRACE_MARKS[:-1]) + f" or {TRACE_MARKS[-1]}")
    return v


def tma_prefetch_default() -> bool:
    """`TILEC_TMA_PREFETCH=1` turns on the TMA descriptors' prefetch at a
    kernel's entry (`Target.tma_prefetch`); off otherwise."""
    return flag("TILEC_TMA_PREFETCH", "0")


def l2_evict_default() -> str:
    """`TILEC_L2_EVICT`: "1" marks every ring copy evict-first in L2, "0" none,
    "" (unset) the kernels hinted `evict_first` (`Target.l2_evict`); anything
    else is E0604 (`SwitchError`; it was a warning and read as unset, hfix6)."""
    v = os.environ.get("TILEC_L2_EVICT", "")
    if v not in ("", "0", "1"):
        raise SwitchError("TILEC_L2_EVICT", v, "0 or 1 (unset: the kernels hinted `evict_first`)")
    return v


def ldg_early_default() -> bool:
    """`TILEC_LDG_EARLY=1`: a read-only load that crosses a CTA barrier before
    its first use is a plain `ld.global`, which ptxas leaves issued before the
    barrier (`Target.ldg_early`, `codegen/ldg_early.py`); off otherwise."""
    return flag("TILEC_LDG_EARLY", "0")


def int8_mma_default() -> bool:
    """`TILEC_INT8_MMA` (unset or "1": on; "0": off, the FMA loop): `mma` of
    i8/u8 tiles into i32 of 16 x 8 x 32 multiples on `mma.sync.m16n8k32`
    (sm_80's ring, `passes/pipeline_sm80.py`, for a GEMM loop it takes;
    `codegen/mma.py` `mma_int8_tensor_core` elsewhere). On by default since
    the H100 ran w8a8 with it exact (2026-12-06, call 27: err 0)."""
    return flag("TILEC_INT8_MMA", "1")


def int8_ring_default() -> bool:
    """`TILEC_INT8_RING` (unset or "1": on; "0": off): an int8 GEMM loop takes
    sm_80's cp.async ring (`passes/pipeline_sm80.py`: 1-byte rings, B
    row-major by `ldmatrix.trans` + `prmt`, the accumulator in registers;
    exact against the interpreter in llsim). On by default since the H100 ran
    it exact (2026-12-07, call 32: w8a8 at 4096^3 err 0, 0.277 ms against
    `mma_int8_tensor_core`'s 2.89 ms, 4.88x torch._int_mm); "0", such a
    loop's products take `mma_int8_tensor_core` (through shared memory)."""
    return flag("TILEC_INT8_RING", "1")


def parse_pdl(setting: str | bool) -> tuple[bool, str, str]:
    """A PDL setting as `TILEC_PDL` and the LLM engine's `Plan.pdl` spell it:
    off (False, "", "0"), on with the trigger late (True, "1"), or
    `trigger[+prefetch]` with a trigger of `PDL_TRIGGERS` and a prefetch of
    `PDL_PREFETCHES` -> (on, trigger, prefetch). Anything else is a
    ValueError that names the choices (never a setting silently replaced)."""
    if isinstance(setting, bool):
        return setting, "late", ""
    if setting in ("", "0"):
        return False, "late", ""
    if setting == "1":
        return True, "late", ""
    trigger, plus, extra = setting.partition("+")
    if trigger not in PDL_TRIGGERS:
        raise ValueError(f"unknown PDL trigger `{trigger}` in `{setting}` (one of: {', '.join(PDL_TRIGGERS)}; "
                         "or 1 for late, 0 for off)")
    if plus and extra not in PDL_PREFETCHES:
        raise ValueError(f"unknown PDL prefetch `{extra}` in `{setting}` (one of: {', '.join(PDL_PREFETCHES)})")
    return True, trigger, extra


@dataclass(frozen=True, slots=True)
class Target:
    """What the PTX is built for; part of the compile-cache key."""

    arch: str = DEFAULT_ARCH
    ptx_version: str = "+ptx80"
    opt: int = 3
    # programmatic dependent launch: every kernel waits for the previous grid
    # before its first memory access (`griddepcontrol.wait`), so the runtime
    # may launch it with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    # (sm_90+ only); `pdl_trigger` says where it lets the next grid be
    # scheduled (`griddepcontrol.launch_dependents`): "entry" (at once),
    # "late" (before the first top-level statement that writes memory, i.e.
    # after the main loop of a kernel that stores at its end), "last" (at
    # the start of that main loop's last iteration, once its last loads are
    # about to be issued; "late" where there is no loop), "exit" (no
    # trigger: when its blocks exit)
    # `pdl_prefetch`: before its wait, a kernel prefetches into L2 the first
    # tiles it will read of tensors it never writes (`codegen/pdl.py`): True
    # or "prefetch" (every thread, a line at a time), "bulk" (a bulk copy
    # engine's prefetch of each tile row), False or "" none
    pdl: bool = False
    pdl_trigger: str = "late"
    pdl_prefetch: bool | str = False
    # the block timeline (`TILEC_TRACE=blocks`, `codegen/trace.py`): every
    # block stamps its start, its wait's return and its end into a buffer the
    # runtime owns; off, the PTX is the untraced kernel's byte for byte
    trace: bool = False
    # with `trace`, a kernel without a PDL wait also stamps thread 0's pass
    # through one point of its body into the record's wait field: "wait1"
    # the first mbarrier wait thread 0 emits (a Hopper pipeline's first tile
    # in), "store1" its first store (`TILEC_TRACE_MARK`; `codegen/trace.py`)
    trace_mark: str = field(default_factory=trace_mark_default)
    # a kernel that copies tiles with TMA prefetches its tensor maps (the
    # `__grid_constant__` descriptors) at its entry, one thread, before its
    # barriers are set up and before its PDL wait, so that the first copy
    # does not wait for the descriptor's fetch (`prefetch.tensormap`, as
    # CUTLASS does). Opt-in (`TILEC_TMA_PREFETCH=1`): on the H200 the decode
    # tc split's pair moved by -0.10..+0.16 us with it (RESULTS.md, issue 15,
    # 2026-12-04): the descriptor's fetch is not on its critical path
    tma_prefetch: bool = field(default_factory=tma_prefetch_default)
    # the L2 eviction priority of the loads a ring streams (`codegen/ring.py`):
    # "" the kernel's `evict_first` hint decides, "1" every ring copy is
    # evict-first, "0" none (`TILEC_L2_EVICT`, for A/B measurements)
    l2_evict: str = field(default_factory=l2_evict_default)
    # a read-only load whose value is first used after a CTA barrier is a
    # plain `ld.global`, not `.nc`: ptxas sinks an `.nc` load below the
    # barrier, behind the round trip the barrier waits for (std's
    # `decode_combine`, `codegen/ldg_early.py`). Opt-in (`TILEC_LDG_EARLY=1`):
    # not measured on a GPU yet
    ldg_early: bool = field(default_factory=ldg_early_default)

    def __post_init__(self) -> None:
        if self.arch not in SUPPORTED_ARCHS:
            raise ValueError(f"unsupported GPU arch `{self.arch}` (supported: {', '.join(SUPPORTED_ARCHS)})")
        if self.pdl_trigger not in PDL_TRIGGERS:
            raise ValueError(f"unknown PDL trigger `{self.pdl_trigger}` (one of: {', '.join(PDL_TRIGGERS)})")
        if self.trace_mark not in ("", *TRACE_MARKS):
            raise ValueError(f"unknown trace mark `{self.trace_mark}` (one of: {', '.join(TRACE_MARKS)})")
        if self.prefetch_kind not in ("", *PDL_PREFETCHES):
            raise ValueError(f"unknown PDL prefetch `{self.pdl_prefetch}` (one of: {', '.join(PDL_PREFETCHES)})")
        if self.pdl and self.sm < 90:
            raise ValueError(f"programmatic dependent launch (griddepcontrol) needs sm_90 or newer; "
                             f"the target is `{self.arch}`")

    @property
    def sm(self) -> int:
        """The numeric compute capability, e.g. 90 for `sm_90a`."""
        return int(self.arch[3:5])

    def key(self) -> str:
        return (f"{self.arch}{self.ptx_version}-O{self.opt}" + (f"-pdl-{self.pdl_mode}" if self.pdl else "")
                + ("-trace" if self.trace else "") + (f"-mark-{self.trace_mark}" if self.trace and self.trace_mark else "")
                + ("-tp" if self.tma_prefetch else "") + (f"-ev{self.l2_evict}" if self.l2_evict else "") + ("-le" if self.ldg_early else ""))

    @property
    def prefetch_kind(self) -> str:
        """`pdl_prefetch` as a word: "", "prefetch", "bulk" or "loads"."""
        p = self.pdl_prefetch
        return ("prefetch" if p else "") if isinstance(p, bool) else p

    @property
    def pdl_mode(self) -> str:
        """The emitter's PDL mode: "" (off), or the trigger [+ "+prefetch" | "+bulk"]."""
        kind = self.prefetch_kind
        return (self.pdl_trigger + (f"+{kind}" if kind else "")) if self.pdl else ""


def prewarm(target: Target | None = None) -> None:
    """Import llvmlite and build the target machine now (e.g. on a background
    thread while CUDA starts), so the first compilation does not pay for it."""
    t = target or Target()
    with _INIT_LOCK:
        _target_machine(t.arch, t.ptx_version, t.opt)


def llvmlite_version() -> str:
    import llvmlite

    return str(llvmlite.__version__)


def ptxas_available() -> bool:
    return shutil.which("ptxas") is not None


def run_ptxas(ptx: str, arch: str, *, verbose: bool = False,
              cubin: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Assemble PTX with `ptxas` (tests and `--verify`); returns the completed
    process. `verbose` adds `-v` (registers and spills a function, on
    stderr); the cubin goes to `cubin` when given, otherwise it is discarded.
    Without `cubin`, ptxas runs once a process for the same PTX, architecture,
    `-v` and ptxas binary (its output is a function of them; a fresh
    `CompletedProcess` each call): tests assemble one kernel's PTX from
    several tests (12 % of test_ptx/test_pdl/test_print's runs were repeats)."""
    global _ASSEMBLED_HELD
    key = (shutil.which("ptxas"), arch, verbose, ptx)
    if cubin is None and key in _ASSEMBLED:
        r = _ASSEMBLED[key]
        return subprocess.CompletedProcess(r.args, r.returncode, r.stdout, r.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        out = cubin if cubin is not None else Path(tmp) / "k.cubin"
        cmd = ["ptxas", f"-arch={arch}", *(["-v"] if verbose else []), str(src), "-o", str(out)]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if cubin is None and key[0] is not None:
        with _ASSEMBLED_LOCK:
            if key not in _ASSEMBLED:
                _ASSEMBLED[key] = r
                _ASSEMBLED_HELD += len(ptx)
            while len(_ASSEMBLED) > 1 and _ASSEMBLED_HELD > _ASSEMBLED_BYTES:  # the oldest out first
                oldest = next(iter(_ASSEMBLED))
                del _ASSEMBLED[oldest]
                _ASSEMBLED_HELD -= len(oldest[3])
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout, r.stderr)


_ASSEMBLED: dict[tuple[str | None, str, bool, str], subprocess.CompletedProcess[str]] = {}  # run_ptxas's memo
_ASSEMBLED_BYTES = 32 << 20  # the PTX texts it keeps at most (thousands of kernels)
_ASSEMBLED_HELD = 0  # the PTX texts' length it keeps now
_ASSEMBLED_LOCK = threading.Lock()
