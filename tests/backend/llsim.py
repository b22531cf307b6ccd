"""A CPU simulator for the NVPTX LLVM IR that `backend/llvm.py` emits (tests only).

The GPU tests need a GPU; this runs the code generator's own output on the
CPU instead, one Python generator per thread, so layouts, reductions,
shuffles and shared-memory staging can be checked against the interpreter in
CI. It understands the subset of LLVM IR text the emitter writes (integer and
float arithmetic, compares, selects, casts, phis, branches, loads and stores
to global and shared memory incl. vectors, atomics, the NVVM special
registers, barriers and `shfl.sync`, the math intrinsics); anything else
raises `Unsupported`. Threads run until they reach a barrier (the whole
block) or a shuffle (the whole warp); a block whose threads cannot all reach
the same point is a deadlock and raises. Shared memory starts as NaN bytes
(0xFF), so a read of something no thread wrote shows up.

Approximate hardware instructions (`ex2.approx`, `rsqrt.approx`, ...) are
computed exactly in f32 (or off by their documented worst error, up or
down: `APPROX_ERROR`); compare results with a tolerance.

    sim = SimDevice()
    sim.run(kernel_ir, grid, args)       # numpy arrays (tensors, written back) and scalars
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

# Settings tests change here (`monkeypatch.setattr(llsim, ...)`); the parts
# read them through `llsim_values.knob` at each use.
#
# Threads run the kernel's blocks compiled to Python functions (llsim_blocks);
# False: one closure an instruction (`_thread`), the reference the compiled
# blocks are tested against (also LLSIM_COMPILED=0 in the environment).
COMPILED = os.environ.get("LLSIM_COMPILED", "1") != "0"
# Whether the compiled blocks set every register in the thread's registers
# (`r`, which the tests that record registers, `Memory.regs_out`, read) or
# only those something outside the block's own statements reads (a phi,
# another block, a per-instruction closure: `llsim_blocks._read_outside`; the
# rest live in the block's locals, a fifth of a simulation's time less).
# None: every register where a test records them; True / False force it.
ALL_REGISTERS: bool | None = None
# What an `undef` / `poison` float reads as: 0.0, or "nan" (a test that must
# show no undefined value reaches a result sets it: NaN propagates where 0
# would pass unseen). `zeroinitializer` is always 0.
UNDEF_FLOAT = "0.0"
# The approximate instructions (`ex2.approx`, `lg2.approx`, `rsqrt.approx`,
# `sin.approx`, ...): 0 computes them exactly; +1 / -1 moves each result by
# its documented worst error up / down (`llsim_ops._APPROX_ERR`), as a GPU
# may (tests/backend/test_numerics_diff.py runs the math both ways).
APPROX_ERROR = 0
# `SimDevice.run` keeps the result of a launch (its buffers after the last
# block) by everything the simulation reads: the LLVM text, the ABI's slots,
# the grid and block order, the buffers and registers it starts from, and the
# settings above. A launch that would simulate the same thing again (sm_80
# and sm_90a give the same LLVM for most kernels; tests that compare two
# settings' kernels) takes the kept buffers instead: the simulation is
# deterministic, so they are what it would write. Not with a trace or a
# `%globaltimer` read (those differ run to run), nor while a test records
# the threads' registers (`Memory.regs_out`). A kernel's text is parsed once a
# process too (`_program`). False (or LLSIM_MEMO=0) simulates every launch
# and parses every kernel.
MEMO = os.environ.get("LLSIM_MEMO", "1") != "0"
# A seed (0: off) for a perturbed schedule (`llsim_exec`): TMA loads land late
# and out of order, wakes of mbarrier waiters are deferred, threads run in a
# random order; to look for races the default schedule never produces (a wait
# that a copy landing at its issue hides). Another schedule, not a stronger one
# (a release the default's immediate wake catches may pass it): run both.
# Perturbed launches are not memoised.
PERTURB = int(os.environ.get("LLSIM_PERTURB", "0"))
# Floating-point contraction as NVPTX does it (True; LLSIM_CONTRACT=0 turns it off): an `fmul contract` (or
# `fast`) is evaluated with each `fadd` / `fsub contract` of its basic block that uses it as one fma,
# rounded once (`llsim_parse._fusable`), as the PTX's `fma.rn` is; without it a sum of an overflowing or
# cancelling product (-3e38 * 1 + 3e38 * 2) differs from a card (hrev24). Read when a kernel is parsed.
CONTRACT = os.environ.get("LLSIM_CONTRACT", "1") != "0"
# True (or LLSIM_MISALIGN=1): a tensor whose launch facts do not say it is 16-byte aligned (`aligned16` False)
# starts one element past a 16-byte boundary, as another library's array of an offset does (a PyTorch slice
# `x[1:]`), so a vector access the code makes of it is misaligned and raises, as the GPU faults; and the
# whole-program device (`sim_runtime_device`, `choose_variant`) gives every tensor such facts (hrev24: the
# runtime's facts of a foreign array's address had no simulation; llsim's buffers start aligned).
MISALIGN = os.environ.get("LLSIM_MISALIGN", "0") != "0"
# True (or LLSIM_BF16_F32=1): the whole-program device gives every bf16 tensor f32 memory (`TensorFacts.bf16_f32`,
# as a float32 CUDA array of another library passed for a bf16 parameter is), the paths that read such memory.
BF16_F32 = os.environ.get("LLSIM_BF16_F32", "0") != "0"
# A set of (x, y, z) block indices, or None: `SimDevice.run` runs only these blocks of the grid (the others'
# tiles are left as they were), so a test of one far block of a huge launch (`huge_array`) runs one block.
ONLY_BLOCKS: set[tuple[int, int, int]] | None = None
_ELEM_BYTES = {"i8": 1, "half": 2, "bfloat": 2, "i16": 2, "float": 4, "i32": 4, "double": 8, "i64": 8}

import llsim_exec  # noqa: E402  (the parts read the settings above)
import llsim_hopper  # noqa: E402
import llsim_ops  # noqa: E402
import llsim_parse  # noqa: E402
import llsim_values  # noqa: E402
from llsim_exec import run_block  # noqa: E402
from llsim_hopper import TensorMap, _GlobalHazards, _Hazards  # noqa: E402
from llsim_parse import Program  # noqa: E402
from llsim_values import Deadlock, Memory, Race, Unsupported  # noqa: E402

from tilelang.diagnostics.model import TileError  # noqa: E402

# Every name of the parts is reachable as `llsim.<name>` too, as it was when
# they were one module (tests reach into `llsim._encode`, `llsim._Pending`, ...).
for _part in (llsim_values, llsim_ops, llsim_parse, llsim_hopper, llsim_exec):
    for _name, _value in vars(_part).items():
        if not _name.startswith("__") and _name not in globals():
            globals()[_name] = _value
del _part, _name, _value


# Threads run the kernel's blocks compiled to Python functions (llsim_blocks);
# False: one closure an instruction (`_thread`), the reference the compiled
# blocks are tested against (also LLSIM_COMPILED=0 in the environment).


# id -> a weak reference to an array `huge_array` made, which `SimDevice.run` simulates in place (its memory is
# the buffer: nothing copied in or back), so a tensor of more than 2^31 elements costs only the pages touched.
# Weak: the array (and its mmap, which it holds) goes when the test drops it, so a process that forks later (the
# fuzzer's child under a 4 GiB address-space limit) does not inherit gigabytes of mappings.
_HUGE: dict[int, Any] = {}


def huge_array(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A C-contiguous array of zeros backed by an anonymous mmap (only the pages written or read take memory),
    which `SimDevice.run` gives a kernel as its own buffer: a launch over a tensor of 2^31 elements or more (hrev30:
    64-bit addressing, i32 offsets that must not wrap) simulates without copying it. Tests write the elements a
    block reads and compare the ones it writes; `ONLY_BLOCKS` runs the block of interest alone."""
    import mmap
    import weakref

    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    arr = np.frombuffer(mmap.mmap(-1, max(1, n * dt.itemsize)), dt, count=n).reshape(shape)
    key = id(arr)
    _HUGE[key] = weakref.ref(arr, lambda _r, key=key: _HUGE.pop(key, None))
    return arr


def mmap_type() -> type:
    import mmap

    return mmap.mmap


def _huge_buffer(a: Any) -> Any:
    """The mmap under `a` when `huge_array` made it, else None."""
    ref = _HUGE.get(id(a))
    if ref is None or ref() is not a:
        return None
    base = a
    while base is not None and not isinstance(base, mmap_type() | memoryview):
        base = getattr(base, "base", None)
    return base.obj if isinstance(base, memoryview) else base


_MEM_NP = {"float": np.float32, "double": np.float64, "half": np.float16, "i8": np.uint8,
           "i16": np.int16, "i32": np.int32, "i64": np.int64}


class SimDevice:
    """Runs Tile IR kernels through the GPU code generator and this simulator."""

    def __init__(self, arch: str = "sm_80", trace: bool = False, trace_records: int = 64, trace_mark: str = "",
                 keep_compiles: bool = False) -> None:
        assert trace_records & (trace_records - 1) == 0, "the ring's capacity is a power of two"
        self.arch = arch
        # `keep_compiles` (the whole-program device's, `sim_runtime_device`): `compile` keeps what it made for a
        # kernel object, facts and environment, so a program that launches one kernel many times (a loop's steps,
        # `choose_variant`'s questions) lowers and emits it once, not once a launch (a sixth of tests/user's
        # simulations); kernel objects are the runtime's prepared ones, which one execution reuses
        self._compiles: dict[tuple[Any, ...], tuple[Any, tuple[Program, Any, Any]]] | None = (
            {} if keep_compiles else None)
        # the block timeline (`Target.trace`): the ring the kernel writes, kept
        # after `run` in `trace_buffer` (the trace id is 7, `smid` the block's
        # linear index mod 4)
        self.trace = trace
        self.trace_mark = trace_mark  # `Target.trace_mark` (with `trace`)
        self.trace_records = trace_records
        self.trace_buffer = b""
        self.split_records = b""
        self.failed_assert: tuple[Any, ...] | None = None  # the last failed device assert's error fields
        self.print_lines: list[str] = []  # the last launch's device `print` lines, decoded as the runtime does

    def compile(self, kernel: Any, facts: dict[str, Any] | None = None) -> tuple[Program, Any, Any]:
        from tilelang.backend import lower_gpu
        from tilelang.backend.llvm import emit_llvm_text

        key = None
        if self._compiles is not None:  # (`keep_compiles`: everything the lowering and the parse read)
            key = (id(kernel), self.arch, self.trace, self.trace_mark, UNDEF_FLOAT, CONTRACT, MEMO,
                   tuple(sorted((k, repr(v)) for k, v in (facts or {}).items())),
                   tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("TILEC_"))))
            kept = self._compiles.get(key)
            if kept is not None and kept[0] is kernel:
                return kept[1]
        gk = lower_gpu(kernel, self.arch, facts)
        text, abi = emit_llvm_text(gk, gk.facts, trace=self.trace, mark=self.trace_mark if self.trace else "")
        made = _program(text, abi.smem_bytes), abi, gk
        if key is not None:
            self._compiles[key] = (kernel, made)  # (the kernel held: its id stays its own)
        return made

    def run(self, kernel: Any, grid: tuple[int, ...], args: list[Any],
            facts: dict[str, Any] | None = None, queue_blocks: int = 3, order: str = "row-major") -> None:
        """Launch on `grid`; tensors (numpy arrays, in the param's dtype) are written back.
        A kernel with a tile queue (or a static walk, `for s in tiles(axis)`)
        runs `queue_blocks` blocks a row along its axis. `order` ("row-major",
        x fastest, or "reverse") is the order the blocks run in, one at a time
        (a GPU's is its own). Device `print` records go into a print buffer laid
        out as the runtime's (`backend/prints.py`), decoded into `print_lines`."""
        from tilelang.backend.llvm import mem_ty
        from tilelang.dtypes import DType
        from tilelang.ir import nodes as ir

        if facts is None:  # what the CUDA runtime computes for a launch (buffers here are aligned)
            from tilelang.backend.facts import TensorFacts

            facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in np.asarray(a).shape))
                     for p, a in zip(kernel.params, args, strict=True) if isinstance(p, ir.TensorParam)}
        prog, abi, gk = self.compile(kernel, facts)
        mem = Memory()
        regs: dict[str, Any] = {}
        views = []
        by_name = {p.name: (p, a) for p, a in zip(kernel.params, args, strict=True)}
        params = iter(prog.params)
        for slot in abi.slots:
            ty, reg = next(params)
            if slot.what == "err":
                mem.bufs["$err"] = bytearray(8)  # the number, then a region's place (as the runtime's)
                regs[reg] = ("$err", 0)
                continue
            if slot.what == "print":  # the runtime's buffer: the header zeroed, then the capacity
                from tilelang.backend.prints import HEADER

                cap = 1 << 16
                mem.bufs["$print"] = bytearray(HEADER) + bytearray(b"\xcd" * cap)
                mem.bufs["$print"][8:12] = cap.to_bytes(4, "little")
                regs[reg] = ("$print", 0)
                continue
            if slot.what.startswith(("arrive:", "queue:")):  # `last_block`'s or a queue's counters, zeroed
                axis = int(slot.what.split(":")[1])
                n = int(np.prod([g for d, g in enumerate(grid) if d != axis]))
                if abi.persistent:  # `grid` is the walk's CTAs: a group per tile of the logical grid (the
                    # partitions', as the runtime's `cuda_arrive.groups`) but along the axis, the largest
                    n = max((int(np.prod([-(-s // t) for d, (s, t) in enumerate(zip(np.asarray(a).shape, p.tile_shape,
                                                                                     strict=False)) if d != axis]))
                             for p, a in zip(kernel.params, args, strict=True)
                             if isinstance(p, ir.TensorParam) and p.mutable), default=n)
                mem.bufs["$arrive"] = bytearray(4 * max(1, n))
                regs[reg] = ("$arrive", 0)
                continue
            if slot.what == "split" or slot.what.startswith("split:"):  # a split's counters (codegen/split.py):
                per = int(slot.what[6:]) if slot.what != "split" else 1  # one a CTA (the pairs form's two), zeroed
                mem.bufs["$split"] = bytearray(4 * per * max(1, int(np.prod(grid))))
                regs[reg] = ("$split", 0)
                continue
            if slot.what.startswith("splitws:"):  # its records, never zeroed: NaN until written
                _, w, t, r = slot.what.split(":")
                mem.bufs["$splitws"] = bytearray(b"\xff" * (4 * max(1, int(np.prod(grid))) * int(r) * int(w) * int(t)))
                regs[reg] = ("$splitws", 0)
                continue
            p, a = by_name[slot.param]
            if slot.what.startswith("tmap:"):
                _, box, sw = slot.what.split(":")
                dims = [int(x) for x in box.split("x")]
                br, bc = dims[-2:]
                shape = np.asarray(a).shape
                planes = shape[0] if len(shape) == 3 else 1
                regs[reg] = TensorMap(p.name, shape[-2], shape[-1], (br, bc), int(sw), planes=planes)
                continue
            if slot.what == "ptr":
                mt = mem_ty(p.dtype, bool(gk.facts.get(p.name) and gk.facts[p.name].bf16_f32))
                if _huge_buffer(a) is not None:  # `huge_array`'s: its own memory, written in place
                    assert _MEM_NP.get(mt) == a.dtype or mt == "i8", f"a huge array of {a.dtype} for {mt}"
                    mem.bufs[p.name] = _huge_buffer(a)
                    regs[reg] = (p.name, 0)
                    continue
                arr = np.asarray(a)
                assert arr.nbytes < 1 << 30, f"`{p.name}` is {arr.nbytes} bytes: make it with `huge_array` (not copied)"
                if mt == "bfloat":
                    raw = bytearray(np.frombuffer(np.asarray(arr, np.float32).tobytes(), np.uint16)[1::2].tobytes())
                elif p.dtype is DType.BOOL:
                    raw = bytearray(np.asarray(arr, np.uint8).tobytes())
                else:
                    raw = bytearray(np.ascontiguousarray(arr, _MEM_NP[mt]).tobytes())
                f = gk.facts.get(p.name)
                off = _ELEM_BYTES.get(mt, 0) if MISALIGN and f is not None and not f.aligned16 else 0
                mem.bufs[p.name] = bytearray(b"\xff" * off) + raw
                regs[reg] = (p.name, off)
                views.append((p, a, mt, off))
            elif slot.what.startswith("dim"):
                regs[reg] = int(np.asarray(a).shape[int(slot.what[3:])])
            else:
                v = a
                dt = p.value.dtype
                if slot.kind == "f32":
                    regs[reg] = np.float32(v)
                elif dt is DType.BOOL:
                    regs[reg] = int(bool(v))
                elif dt.is_float:
                    regs[reg] = np.float64(v)
                else:
                    regs[reg] = int(v) & ((1 << dt.bits) - 1)
        mem.bufs["$smem"] = bytearray()
        if self.trace:
            from tilelang.backend.codegen import trace as layout

            ring = bytearray(layout.RECORDS + self.trace_records * layout.RECORD)
            ring[layout.HEADER_CAPACITY:layout.HEADER_CAPACITY + 4] = self.trace_records.to_bytes(4, "little")
            mem.bufs["$trace"] = ring
            mem.bufs["$tilec_trace"] = bytearray(8) + (7 | (self.trace_records - 1) << 32).to_bytes(8, "little")
            mem.pointers[("$tilec_trace", 0)] = ("$trace", 0)
        queue = abi.queue if abi.queue >= 0 else None
        tile_grid = grid  # the launch's grid (a walk's tiles), which a failed assert's place is on
        if queue is not None:  # a tile queue (a static walk): `queue_blocks` blocks a row take the tiles along its axis
            g = [*grid, 1, 1, 1][:3]
            g[queue] = max(1, min(g[queue], queue_blocks))
            grid = tuple(g)
        gx, gy, gz = (*grid, 1, 1)[:3]
        blocks = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)
                  if ONLY_BLOCKS is None or (x, y, z) in ONLY_BLOCKS]
        key = None  # (`MEMO`; not when the registers are recorded: `Memory.regs_out`)
        if (MEMO and not PERTURB and not self.trace and mem.regs_out is None and "globaltimer" not in prog.source
                and ONLY_BLOCKS is None and not any(isinstance(b, mmap_type()) for b in mem.bufs.values())):
            key = _launch_key(prog.source, abi, grid, order, mem, regs)
            kept = _LAUNCHES.get(key)
            if kept is not None:  # simulated before: its buffers, and no block runs again
                _LAUNCHES.move_to_end(key)
                mem.bufs = {k: bytearray(v) for k, v in kept.items()}
                blocks, key = [], None
        cluster = tuple(getattr(kernel, "cluster", ()) or ())

        def run_one(x: int, y: int, z: int, incoming: list[Any] = ()) -> None:  # type: ignore[assignment]
            mem.bufs["$smem"] = bytearray(b"\xff" * max(abi.smem_bytes, prog.smem_total, 16))
            mem.hazards = _Hazards(len(mem.bufs["$smem"]))
            mem.global_hazards = _GlobalHazards({p.name for p, _, _, _ in views})
            mem.unfenced = np.full(len(mem.bufs["$smem"]), -1, np.int64)
            mem.bulk_reads = None
            mem.cluster_in = {}
            for _, off, raw, bar in incoming:  # the other ranks' pushes, landed before this block reads them
                mem.bufs["$smem"][off:off + len(raw)] = raw
                mem.cluster_in[bar] = mem.cluster_in.get(bar, 0) + len(raw)
            base = dict(regs)
            base.update({"$ctaid.x": x, "$ctaid.y": y, "$ctaid.z": z,
                         "$nctaid.x": gx, "$nctaid.y": gy, "$nctaid.z": gz,
                         "$smid": ((x * gy + y) * gz + z) % 4})
            if cluster:
                cx, cy, _ = (*cluster, 1, 1)[:3]
                base["$cluster.ctarank"] = x % cx + cx * (y % cy) + cx * cy * (z % (*cluster, 1, 1)[2])
            run_block(prog, mem, base, abi.num_threads)

        if cluster:
            _run_cluster(mem, cluster, blocks if order != "reverse" else list(reversed(blocks)), run_one)
            blocks = []
        for x, y, z in (reversed(blocks) if order == "reverse" else blocks):
            run_one(x, y, z)
        if key is not None:
            _keep(key, mem.bufs)
        if self.trace:
            self.trace_buffer = bytes(mem.bufs["$trace"])
        if "$print" in mem.bufs:
            from tilelang.backend.prints import decode

            got = decode(abi.prints, bytes(mem.bufs["$print"]))
            assert not got.dropped, "llsim's print buffer is full"
            self.print_lines = got.lines
        if any(mem.bufs.get("$arrive", b"")):
            left = np.frombuffer(bytes(mem.bufs["$arrive"]), np.uint32)
            raise AssertionError(f"a group counter of `last_block` or a queue was not reset to 0: {left.tolist()}")
        if any(mem.bufs.get("$split", b"")):
            raise AssertionError("a split's counter was not reset to 0")
        self.split_records = bytes(mem.bufs.get("$splitws", b""))  # a split's records (tests count the written)
        from tilelang.runtime.cuda import assert_diagnostic, assert_words

        err, place = assert_words(int.from_bytes(mem.bufs["$err"][:4], "little"),
                                  int.from_bytes(mem.bufs["$err"][4:], "little"))
        if err:
            span, message, region, axis = abi.asserts[err - 1]
            # the runtime's error, on the grid the kernel's blocks see (a walk's tiles, not its wave)
            self.failed_assert = (span, message, region, axis, place, tuple(tile_grid))
            raise TileError(assert_diagnostic(*self.failed_assert))
        for p, a, mt, off in views:
            if not isinstance(p, ir.TensorParam) or not isinstance(a, np.ndarray):
                continue
            raw = bytes(mem.bufs[p.name])[off:]
            if mt == "bfloat":
                u = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
                got = u.view(np.float32)
            elif p.dtype is DType.BOOL:
                got = np.frombuffer(raw, np.uint8).astype(bool)
            else:
                got = np.frombuffer(raw, _MEM_NP[mt])
            a[...] = got.reshape(a.shape).astype(a.dtype)


_LAUNCHES: OrderedDict[bytes, dict[Any, bytes]] = OrderedDict()  # `MEMO`'s launches, least recently used first
_LAUNCH_BYTES = 256 << 20  # what it keeps at most (their buffers' bytes)


_PROGRAMS: OrderedDict[tuple[Any, ...], Program] = OrderedDict()  # `_program`'s, least recently used first
_PROGRAMS_KEPT = 12  # programs at most, and their texts' bytes (the parsed programs held ~20x their texts: 4.6 MB of
_PROGRAMS_TEXT = 4 << 20  # attention kernels' LLVM, +85 MB of a worker's peak)


def _program(text: str, smem_bytes: int) -> Program:
    """The parsed kernel of `text`, parsed (and its blocks compiled, `llsim_blocks`) once a process while
    `MEMO`: a test that compiles a kernel and then runs it, or runs one kernel on other inputs or grids, or
    another test of the same kernel, parsed it each time (a third of a large kernel's simulation). A `Program`
    keeps nothing of a launch (`compiled_ns["_mem"]` is set by each); the parse reads `UNDEF_FLOAT` and
    `CONTRACT`, so they are in the key."""
    if not MEMO:
        return Program(text, smem_bytes)
    key = (text, smem_bytes, UNDEF_FLOAT, CONTRACT)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = _PROGRAMS[key] = Program(text, smem_bytes)
        while len(_PROGRAMS) > 1 and (len(_PROGRAMS) > _PROGRAMS_KEPT
                                      or sum(len(k[0]) for k in _PROGRAMS) > _PROGRAMS_TEXT):
            _PROGRAMS.popitem(last=False)
        if len(_PROGRAMS) > _PROGRAMS_KEPT:  # (`_PROGRAMS_KEPT` 0: none kept)
            _PROGRAMS.popitem(last=False)
    else:
        _PROGRAMS.move_to_end(key)
    return prog


def _launch_key(text: str, abi: Any, grid: tuple[int, ...], order: str, mem: Memory, regs: dict[str, Any]) -> bytes:
    """A digest of everything a launch's simulation reads (`MEMO`)."""
    h = hashlib.blake2b(digest_size=32)
    for part in (text, repr((abi.num_threads, abi.smem_bytes, abi.queue,
                             [(s.what, s.param, s.kind) for s in abi.slots])),
                 repr((grid, order, COMPILED, UNDEF_FLOAT, APPROX_ERROR, CONTRACT, sorted(map(repr, mem.pointers.items()))))):
        h.update(part.encode() + b"\0")
    for name in sorted(mem.bufs, key=repr):
        h.update(repr(name).encode() + b"\0" + bytes(mem.bufs[name]) + b"\0")
    for reg in sorted(regs):  # (the type too: np.float32(1) and 1.0 are different registers)
        h.update(f"{reg}={type(regs[reg]).__name__}:{regs[reg]!r}".encode() + b"\0")
    return h.digest()


def _keep(key: bytes, bufs: dict[Any, bytearray]) -> None:
    _LAUNCHES[key] = {k: bytes(v) for k, v in bufs.items()}
    total = sum(len(v) for kept in _LAUNCHES.values() for v in kept.values())
    while total > _LAUNCH_BYTES and len(_LAUNCHES) > 1:
        _, old = _LAUNCHES.popitem(last=False)
        total -= sum(len(v) for v in old.values())


def _run_cluster(mem: Memory, cluster: tuple[int, ...], blocks: list[tuple[int, int, int]], run_one: Any) -> None:
    """The blocks of each thread-block cluster (`#[cluster(..)]`, hrev15): a cluster's blocks run
    at once on a GPU and push their records into each other's shared memory (`st.async`, completing
    bytes on the receiver's mbarrier). Here a block runs alone, with the pushes its peers have made
    so far already landed in its shared memory and counted on its mbarriers; a block that waits for a
    record not yet pushed stops (a deadlock of its own threads) and its effects on the tensors are
    undone; it runs again once a peer's run pushed more. Each exchange's record is its sender's
    value alone (written once, never reused), so the order does not change what a block reads; a
    round in which no block pushes anything new is a real deadlock."""
    cx, cy, cz = (*cluster, 1, 1)[:3]
    groups: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for x, y, z in blocks:
        groups.setdefault((x // cx, y // cy, z // cz), []).append((x, y, z))

    def rank(b: tuple[int, int, int]) -> int:
        return b[0] % cx + cx * (b[1] % cy) + cx * cy * (b[2] % cz)

    for members in groups.values():
        pushes: dict[tuple[int, int, int], list[Any]] = {b: [] for b in members}
        done: set[tuple[int, int, int]] = set()
        while len(done) < len(members):
            moved = False
            for b in members:
                if b in done:
                    continue
                incoming = [p for o in members if o != b for p in pushes[o] if p[0] == rank(b)]
                kept = {k: bytearray(v) for k, v in mem.bufs.items() if k != "$smem"}
                mem.cluster_out = []
                try:
                    run_one(*b, incoming)
                    done.add(b)
                    moved = True
                except Deadlock as e:
                    mem.bufs.update(kept)  # (this block runs again: its stores, prints and counters undone)
                    if "mbar_try" not in str(e):
                        raise
                if mem.cluster_out != pushes[b]:
                    pushes[b], moved = mem.cluster_out, True
                mem.cluster_out = None
            if not moved:
                raise Deadlock(f"the blocks {sorted(set(members) - done)} of a cluster wait for records no "
                               "block pushes")


def choose_variant(sim: SimDevice, kernel: Any, grid: tuple[int, ...], args: list[Any], sms: int
                   ) -> tuple[dict[str, Any], tuple[int, int, int]]:
    """The facts of the variant the CUDA runtime launches for this launch on a card of `sms` multiprocessors
    (`CudaDevice._choose`: the short variant where a tensor's rows allow it, the split-K one for few tiles, the
    wide one for many, a split form's), and the CUDA grid it launches (`launch_grid`: a persistent kernel's
    CTAs). Tensors' facts as `TensorFacts.of_launch` gives them (at an aligned address). hrev19: without it a
    whole program in llsim ran only the first variant (the split-K epilogue's wrong values, hgemm4's 19:11
    fix, were out of its reach). hstream: the streamed variant of `stream_rule.refine`."""
    import dataclasses

    from tilelang.backend import stream_rule
    from tilelang.backend.facts import TensorFacts, few_tiles
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.runtime.cuda_arrive import launch_grid

    at = 4 if MISALIGN else 0  # (an address past a 16-byte boundary: `MISALIGN`)
    facts = {p.name: TensorFacts.of_launch(at, tuple(np.asarray(a).shape), BF16_F32 and p.dtype is DType.BF16)
             for p, a in zip(kernel.params, args, strict=True) if isinstance(p, ir.TensorParam)}
    abi = sim.compile(kernel, facts)[1]
    if (short := abi.short) is not None:
        shape = next(tuple(np.asarray(a).shape) for p, a in zip(kernel.params, args, strict=True)
                     if p.name == short.param)
        more = short.refine(facts, shape)
        if more is not None:
            facts = more
            abi = sim.compile(kernel, facts)[1]
    few, tiles = few_tiles(getattr(abi, "few", ""), grid)
    if few and grid and few in facts and 2 * tiles <= sms:
        facts = {**facts, few: dataclasses.replace(facts[few], few_tiles=True)}
        abi = sim.compile(kernel, facts)[1]
    wide = getattr(abi, "wide", None)
    if wide and grid and wide[0] in facts and int(np.prod(grid)) >= 2 * wide[1] * sms:
        facts = {**facts, wide[0]: dataclasses.replace(facts[wide[0]], wide_tiles=True)}
        abi = sim.compile(kernel, facts)[1]
    more = stream_rule.refine(abi, facts, grid, sms, lambda: -1)  # (no occupancy calculator: the rule's estimate)
    if more is not None:  # an unhinted kernel's loops streamed for this grid (`backend/stream_rule.py`)
        facts = more[1]
        abi = sim.compile(kernel, facts)[1]
    form = getattr(abi, "split", None)
    if form is not None and grid:
        g = launch_grid(abi, grid, sms)
        dims = {p.name: tuple(np.asarray(a).shape) for p, a in zip(kernel.params, args, strict=True)
                if isinstance(p, ir.TensorParam)}
        values = {p.name: a for p, a in zip(kernel.params, args, strict=True) if isinstance(p, ir.ScalarParam)}
        if kind := form.splits(dims, values, g[0] * g[1] * g[2]):
            alt = form.refine(facts, kind)
            if launch_grid(sim.compile(kernel, alt)[1], grid, sms) == g:
                facts = alt
    return facts, launch_grid(sim.compile(kernel, facts)[1], grid, sms)


def sim_runtime_device(arch: str = "sm_80", out: Callable[[str], None] | None = None, sms: int | None = None) -> Any:
    """A runtime `Device` (the CPU device's buffers) whose kernels run through the
    GPU code generator and this simulator: `tilelang.run.execute` with it runs a
    whole program's launches as the GPU would compute them. With `sms`, each launch
    runs the variant the CUDA runtime would pick on a card of that many
    multiprocessors, on its CUDA grid (`choose_variant`); without, the first
    variant on the program's grid."""
    from tilelang.backend.facts import TensorFacts
    from tilelang.dtypes import DType
    from tilelang.ir import nodes as ir
    from tilelang.runtime.cpu import CpuDevice

    sim = SimDevice(arch, keep_compiles=True)

    class SimRuntime(CpuDevice):
        name = "sim"

        def run(self, prepared: Any, grid: tuple[int, ...], args: list[Any],
                stream: Any = None, span: Any = None) -> None:
            self.launches += 1
            facts = {}
            for p, a in zip(prepared.params, args, strict=True):
                if isinstance(p, ir.TensorParam):
                    shape = np.asarray(a).shape
                    facts[p.name] = TensorFacts(not MISALIGN, tuple(d % 16 == 0 for d in shape),
                                                BF16_F32 and p.dtype is DType.BF16)
            if sms is not None:
                facts, grid = choose_variant(sim, prepared, grid, args, sms)  # type: ignore[assignment]
            try:
                sim.run(prepared, grid, args, facts)
            except TileError:
                if sim.failed_assert is None:
                    raise
                from tilelang.runtime.cuda import assert_diagnostic

                # as `CudaDevice._check_asserts` reports it: with the launch
                raise TileError(assert_diagnostic(*sim.failed_assert, launch_span=span)) from None
            for line in sim.print_lines:  # as `CudaDevice._flush_prints` writes them
                if self.out is None:
                    sys.stdout.write(line + "\n")
                else:
                    self.out(line)
            sim.print_lines = []

    return SimRuntime(out)


__all__ = ["Deadlock", "Memory", "Program", "Race", "SimDevice", "Unsupported", "choose_variant", "run_block",
           "sim_runtime_device"]
