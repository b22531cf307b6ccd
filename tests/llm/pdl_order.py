"""A model of a decode step's ordering under programmatic dependent launch
(PDL, `runtime/cuda_pdl.py`), checked against the code the kernels compile to.

Under PDL a launch's blocks may start once the launch before it triggers
(`griddepcontrol.launch_dependents`), and `griddepcontrol.wait` returns once
that launch is complete with its writes visible. A launch that triggers
before its own wait (`pdl_early`; the trigger "entry" comes right after the
wait) lets the next one start while the launch before *it* still runs, so
the launches a kernel may overlap before its wait (its window) are the one
before it and, while the window's first one triggers before its wait, the
one before that. A race is
then any access before the wait to bytes a launch of the window writes (a
read: RAW; a write: WAW), or a write before the wait to bytes the window
reads (WAR).

What a kernel may access before its wait is read from its LLVM IR (the
emitter's output, before LLVM and ptxas): the global loads, stores, atomics
and `cp.async` copies textually before the wait call, and every load marked
`!invariant.load` wherever it is (`ld.global.nc`: LLVM and ptxas move such
loads across the wait; ptxas 13.0 hoisted them above it under "+prefetch").
L2 prefetches are hints (L2 is where every write lands) and are not
accesses. Where the kernel triggers (before or after its wait) is read from
the same text, not from the kernel's hints. The launch list is the engine's
(`steps.decode_step_ops`), two steps in a row (a burst graph's boundary: the
token choice, then the next embedding), after a fresh record
(`cuda_pdl.forget`: a graph starts after its stream's work is complete);
the facts each launch compiles with are the runtime's (`cuda_pdl.early_names`
on stand-ins at the arrays' own addresses, so views of one buffer overlap).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pdl_stand import of_array

from tilelang.backend import TensorFacts, lower_gpu
from tilelang.backend.codegen.llvm_types import param_reg
from tilelang.backend.gpu.layouts import replicate_bound
from tilelang.backend.llvm import emit_llvm_text
from tilelang.backend.target import parse_pdl
from tilelang.ir import nodes as ir
from tilelang.runtime import cuda_pdl

WAIT = '"griddepcontrol.wait;"'
TRIGGER = '"griddepcontrol.launch_dependents;"'
_ASSIGN = re.compile(r"^\s*(%[\w.]+) = (getelementptr|select|phi|ptrtoint|bitcast|addrspacecast)\b(.*)$")
_GLOBAL = re.compile(r"ptr addrspace\(1\) (%[\w.]+)")


# the runtime's counter buffers a kernel takes besides its tensors (`last_block`'s
# and a tile queue's counters, a split's counters and workspace): one buffer a
# stream, shared by the launches on it (`runtime/cuda_arrive.py`)
COUNTERS = ("%arrive", "%split", "%splitws")


@dataclasses.dataclass(frozen=True)
class Code:
    """What one compiled launch does around its wait: the tensor parameters
    (and `COUNTERS`) it may read and write before it, whether it triggers the
    next launch before it, and the counters it uses anywhere."""

    reads: frozenset[str]
    writes: frozenset[str]
    trigger_first: bool
    counters: frozenset[str] = frozenset()


def code_of(ll: str, tensors: set[str]) -> Code:
    """`Code` of one kernel's LLVM IR text (`tensors`: its tensor parameters)."""
    body = ll[ll.index("define ") :]
    lines = body.split("\n")
    wait = next(i for i, line in enumerate(lines) if WAIT in line)
    trig = next((i for i, line in enumerate(lines) if TRIGGER in line), None)
    root: dict[str, set[str]] = {param_reg(t): {t} for t in tensors} | {c: {c} for c in COUNTERS}
    reads: set[str] = set()
    writes: set[str] = set()
    counters: set[str] = set()
    for i, line in enumerate(lines):
        if "inttoptr" in line and "addrspace(1)" in line:
            raise ValueError(f"an address made from an integer, which the model cannot follow: {line.strip()}")
        m = _ASSIGN.match(line)
        if m:  # address arithmetic: the result points into its operands' tensors
            # (a phi's incoming values are `[ %v, %block ]` pairs: every name counts)
            names = re.findall(r"%[\w.]+", m.group(3)) if m.group(2) == "phi" else _GLOBAL.findall(m.group(3))
            got = set().union(*(root.get(p, set()) for p in names))
            if got:
                root[m.group(1)] = got
            continue
        ptrs = set().union(*(root.get(p, set()) for p in _GLOBAL.findall(line)))
        if not ptrs or "prefetch" in line or line.lstrip().startswith("define "):
            continue
        counters |= ptrs & set(COUNTERS)
        store = re.search(r"^\s*store\b|\batomicrmw\b|\bcmpxchg\b|\bst\.|\bred\.|\batom\.", line) is not None
        if i < wait:
            (writes if store else reads).update(ptrs)
        elif "!invariant.load" in line:
            reads.update(ptrs)  # ld.global.nc: may be moved above the wait
    return Code(frozenset(reads), frozenset(writes), trig is not None and trig < wait, frozenset(counters))


@dataclasses.dataclass
class Launch:
    """One launch of a step: its kernel (Tile IR), stand-ins of its arguments,
    grid, and once compiled, its facts' early names and `Code`."""

    op: Any
    kernel: Any
    args: list[Any]
    grid: tuple[int, ...]
    early: frozenset[str] = frozenset()
    code: Code | None = None

    @property
    def name(self) -> str:
        return str(self.kernel.name)

    def tensors(self) -> dict[str, Any]:
        return {p.name: a for p, a in zip(self.kernel.params, self.args, strict=True) if isinstance(p, ir.TensorParam)}


def launches(ops: list[Any]) -> list[Launch]:
    """The launches of `ops` (the Python API's operations, not run)."""
    out = []
    for op in ops:
        k = op._plan.kir
        args = op._kernel_args(op._hosts)
        stand = [of_array(a) if isinstance(p, ir.TensorParam) else a for p, a in zip(k.params, args, strict=True)]
        out.append(Launch(op, k, stand, tuple(op.grid)))
    return out


def written(kernel: Any) -> frozenset[str]:
    """The tensor parameters `kernel` may write: `&mut` ones and any a store or atomic names."""
    names = {p.name for p in kernel.params if isinstance(p, ir.TensorParam) and p.mutable}
    return frozenset(names | {op.tensor for op in ir.walk(kernel.body) if isinstance(op, ir.Store | ir.AtomicRMW)})


def _span(a: Any) -> tuple[int, int]:
    n = a.np_dtype.itemsize
    for d in a.shape:
        n *= d
    return a.ptr, a.ptr + n


def _overlap(a: Any, b: Any) -> bool:
    (lo, hi), (blo, bhi) = _span(a), _span(b)
    return lo < bhi and blo < hi


@contextmanager
def pdl_mode(mode: str) -> Iterator[None]:
    """The runtime's PDL setting `mode` (a `Plan.pdl` string) inside, off after."""
    on, trigger, extra = parse_pdl(mode)
    cuda_pdl.set_pdl(on, trigger, extra)
    try:
        yield
    finally:
        cuda_pdl.set_pdl(False, "late", "")


class Compiler:
    """Each launch's `Code` under a PDL mode, with the facts the runtime gives
    it (a kernel lowered once a set of facts, emitted once a mode)."""

    def __init__(self) -> None:
        self._lowered: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self._code: dict[tuple[Any, ...], Code] = {}

    def code(self, launch: Launch, mode: str) -> Code:
        tensors = launch.tensors()
        facts = {n: TensorFacts.of_launch(a.ptr, a.shape, False, n in launch.early) for n, a in tensors.items()}
        base = (id(launch.kernel), replicate_bound(), tuple(sorted((n, f.aligned16, f.dims_div16) for n, f in facts.items())))
        key = (*base, mode, launch.early)
        hit = self._code.get(key)
        if hit is not None:
            return hit
        low = self._lowered.get(base)
        if low is None:  # (lowering reads no PDL fact; the kernel is kept alive with it)
            low = self._lowered[base] = (launch.kernel, lower_gpu(launch.kernel, "sm_90a", facts))
        ll, _ = emit_llvm_text(low[1], facts, mode)
        out = self._code[key] = code_of(ll, set(tensors))
        return out


def window(codes: list[Code], i: int) -> list[int]:
    """The launches before launch i (by index, latest first) that may still
    run while its blocks start: the one before it, and while the earliest of
    them triggers before its own wait, the one before that."""
    out = []
    j = i - 1
    while j >= 0:
        out.append(j)
        if not codes[j].trigger_first:
            break
        j -= 1
    return out


def races(ops: list[Any], mode: str, compiler: Compiler, rs: int = 0, steps: int = 2) -> list[str]:
    """The races of `steps` steps of `ops` under PDL `mode` (`rs`: the
    plan's small tiles replicated, `Plan.rs`, as the engine compiles them): one line each
    (launch, kernel, tensor, the launch of its window that writes or reads
    it). Empty: every access before a wait is to bytes no launch the kernel
    may overlap writes (or, for a write, touches)."""
    seq = [launch for _ in range(steps) for launch in launches(ops)]
    stream = 0x5EED
    with pdl_mode(mode):
        cuda_pdl.forget(stream)
        for launch in seq:
            launch.early = cuda_pdl.early_names(stream, launch.kernel, launch.args, launch.grid)
        cuda_pdl.forget(stream)
    from engine import _replicate_small

    with _replicate_small(rs):
        codes = [compiler.code(launch, mode) for launch in seq]
    out = []
    for i, (launch, code) in enumerate(zip(seq, codes, strict=True)):
        launch.code = code
        mine = launch.tensors()
        for j in window(codes, i):
            other = seq[j].tensors()
            wrote = written(seq[j].kernel)
            for name in sorted((code.reads | code.writes) & codes[j].counters):
                out.append(f"{mode}: launch {i} ({launch.name}) touches the stream's counters `{name}` before its "
                           f"wait; launch {j} ({seq[j].name}), which it may overlap, uses them")
            for name in sorted((code.reads | code.writes) - set(COUNTERS)):
                for oname, buf in other.items():
                    hit = name in code.writes or oname in wrote
                    if hit and _overlap(mine[name], buf):
                        kind = "writes" if name in code.writes else "reads"
                        out.append(f"{mode}: launch {i} ({launch.name}) {kind} `{name}` before its wait; "
                                   f"launch {j} ({seq[j].name}), which it may overlap, "
                                   f"{'writes' if oname in wrote else 'reads'} it (`{oname}`)")
    return out
