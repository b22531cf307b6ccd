"""The autotuner's Python side: the first call of an `#[autotune]` kernel for
a new key times the candidates on the call's own arguments, keeps the fastest
in a record on disk (`tuner/records.py`), and every later call with that key,
in this process or another, builds its operation with the recorded choice.
(It lives in api/ because it is a kind of call: it calls `api/call.py` for
every candidate; `tuner/` holds what the API and the host side share.)

What the tuner may choose (the spelling, also in the README and BRIEF's
reference section):
- a const generic the attribute lists and the call leaves open: not given
  in `kernel[...]`, not fixed by an argument's shape;
- `num_warps` and `stages` when the attribute lists them;
- the tile shape of a `&mut` partition: `tilelang.partition(c, ...)` (all
  dimensions) or `tilelang.partition(c, [..., 64])` (some), an Ellipsis for
  "the tuner picks"; a picked dimension is the parameter's declared tile
  dimension (`Tensor<f32, [BM, BN]>`) evaluated with the candidate's generics.

Every candidate is an ordinary kernel call (`api/call.py`): it passes every
check a call passes, nothing is bypassed. Whether a launch races does not
depend on the tile shape (each block writes its own tile, for any tile
shape), so the ownership verdict is the same for every candidate: a call
that overlaps memory (E0303) or conflicts with a launch in flight is
refused as it would be untuned, before anything is timed. A candidate
that fails a launch check of its own (a tile dimension that is not a power
of two, too many elements), fails to compile, or needs more shared memory
than the device has, is skipped with a note in the record; the tuner fails
only when no candidate is left. `&mut` arrays are restored after each timed
candidate, so tuning leaves the arguments as the call found them and the
returned operation then runs once on them.

Timing: on the GPU, CUDA events around repeated launches on the call's
stream (the first launch compiles and warms up); on the CPU interpreter the
wall time of repeated runs. A progress line is written to stderr when it is
a terminal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from tilelang.api import arrays, engines
from tilelang.api.arrays import NotAnArray, Unsupported
from tilelang.api.call import call as plain_call
from tilelang.api.errors import BorrowError, CallError
from tilelang.api.operation import Operation
from tilelang.api.partition import Partition
from tilelang.api.protocols import KernelLike
from tilelang.api.signature import _match_args
from tilelang.diagnostics.codes.api import UNUSABLE_ARRAY
from tilelang.diagnostics.codes.types import TUNED_TILE_MISUSE
from tilelang.diagnostics.model import TileError
from tilelang.syntax import ast
from tilelang.tuner import state
from tilelang.tuner.records import Record, RecordStore, default_store, record_key
from tilelang.tuner.space import HINTS, TuneSpec, format_config, hinted_fields

_HINTED: dict[tuple[object, ...], Any] = {}  # (id(plan), (field, value)..) -> plan with those hints


def tuned_call(
    kernel: KernelLike, spec: TuneSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Operation:
    """`kernel(*args, **kwargs)` for a kernel with `#[autotune]`."""
    values = _match_args(kernel.__name__, "kernel", kernel.decl, args, kwargs, kernel.module)
    t = _TunedCall(kernel, spec, values)
    if not t.open_names:
        return plain_call(kernel, tuple(t.values_with_tiles({})), {})
    store = default_store()
    rec = None if state.FORCE else store.get(t.key)
    if rec is None:
        rec = t.tune(store)
    return t.build(rec.best)


class _TunedCall:
    def __init__(self, kernel: KernelLike, spec: TuneSpec, values: list[Any]) -> None:
        self.kernel = kernel
        self.spec = spec
        self.values = values
        decl = kernel.decl
        self.generic_names = [g.name.name for g in decl.generics if g.is_const]
        self.fixed = self._fixed()
        self.open_names = [n for n in spec.names if n not in self.fixed]
        missing = [(n, p) for n, p in self._needed() if n not in self.fixed and n not in spec.names]
        if missing:
            raise CallError(
                f"the tile of `{missing[0][1]}` is left to the tuner, but `{missing[0][0]}` "
                f"is not one of the names `#[autotune]` lists for kernel `{kernel.__name__}`",
                where=kernel.module._where(decl.name.span, f"`{kernel.signature}`"),
                help=f"add `{missing[0][0]} = [..]` to the attribute, or give the tile shape",
                code=TUNED_TILE_MISUSE,
            )
        self.key = self._key() if self.open_names else ""

    # -- what the call fixes ------------------------------------------------------------
    def _fixed(self) -> dict[str, int]:
        k = self.kernel
        decl = k.decl
        fixed: dict[str, int] = {}
        explicit = k.explicit
        if len(explicit) == 1 and isinstance(explicit[0], dict):
            fixed.update({n: v for n, v in explicit[0].items() if isinstance(v, int)})
        else:
            for g, v in zip(decl.generics, explicit, strict=False):
                if g.is_const and isinstance(v, int):
                    fixed[g.name.name] = v
        for spec, v in zip(k.specs, self.values, strict=True):
            if spec.kind == "mut" and isinstance(v, Partition):
                for dim, size in zip(spec.dims or (), v.tile, strict=False):
                    if size is not Ellipsis and isinstance(dim, ast.Name):
                        fixed.setdefault(dim.ident.name, int(size))
            elif spec.kind == "ref":
                # a generic an array's shape gives is the array's, not the tuner's
                shape = _shape_of(v)
                for dim, size in zip(spec.dims or (), shape or (), strict=False):
                    if isinstance(dim, ast.Name) and dim.ident.name in self.generic_names:
                        fixed.setdefault(dim.ident.name, int(size))
        return fixed

    def _needed(self) -> list[tuple[str, str]]:
        """(generic, parameter) for each tile dimension left to the tuner."""
        out = []
        for spec, v in zip(self.kernel.specs, self.values, strict=True):
            if spec.kind == "mut" and isinstance(v, Partition):
                for dim, size in zip(spec.dims or (), v.tile, strict=False):
                    if size is Ellipsis:
                        for name in _names_in(dim):
                            out.append((name, spec.name))
        return out

    def _key(self) -> str:
        k = self.kernel
        wanted = self.spec.key
        key_values: dict[str, Any] = {}
        device = "cpu"
        for spec, v in zip(k.specs, self.values, strict=True):
            arr = v.array if isinstance(v, Partition) else v
            if spec.kind in ("mut", "ref"):
                try:
                    ref = arrays.describe(arr)
                except (NotAnArray, Unsupported):
                    continue
                if ref.is_cuda:
                    device = ref.space
                if wanted is None or spec.name in wanted:
                    key_values[spec.name] = [list(ref.shape), ref.dtype_name]
            elif wanted is not None and spec.name in wanted:
                key_values[spec.name] = repr(v)
        engine = device if device != "cpu" else k.module._engine_for_host()
        self.device_name = _device_name(k, engine)
        self.key_values = key_values
        text = k.module._sources.get(k.decl.span.file).text
        return record_key(
            hashlib.sha256(text.encode()).hexdigest(),
            k.__name__,
            self.spec.describe(),
            key_values,
            sorted(self.fixed.items()),
            self.device_name,
        )

    # -- one candidate ------------------------------------------------------------------
    def values_with_tiles(self, cfg: dict[str, int]) -> list[Any]:
        out: list[Any] = []
        env = {**self.fixed, **cfg}
        for spec, v in zip(self.kernel.specs, self.values, strict=True):
            if spec.kind == "mut" and isinstance(v, Partition) and Ellipsis in v.tile:
                tile: list[int] = []
                for dim, size in zip(spec.dims or (), v.tile, strict=False):
                    if size is not Ellipsis:
                        tile.append(size)
                        continue
                    got = (
                        self.kernel.module._evaluator()._eval_dim(dim, env)
                        if dim is not None
                        else None
                    )
                    if got is None:
                        raise CallError(
                            f"the tuner cannot pick a tile dimension of `{spec.name}`: the "
                            "parameter's dimension is not a const generic",
                            help="give that dimension in the partition",
                            code=TUNED_TILE_MISUSE,
                        )
                    tile.append(int(got))
                v = Partition(v.array, tuple(tile))
            out.append(v)
        return out

    def build(self, cfg: dict[str, int]) -> Operation:
        generics = {n: v for n, v in cfg.items() if n in self.generic_names}
        generics.update({n: v for n, v in self.fixed.items() if n in self.generic_names})
        k = self.kernel
        explicit = k.explicit
        if explicit and not (len(explicit) == 1 and isinstance(explicit[0], dict)):
            # type parameters given positionally keep their values
            for g, v in zip(k.decl.generics, explicit, strict=False):
                if not g.is_const:
                    generics[g.name.name] = v
        elif explicit:
            generics.update(explicit[0])
        specialised = k[generics] if generics else k  # type: ignore[index]
        op = plain_call(specialised, tuple(self.values_with_tiles(cfg)), {})
        hints = {n: cfg[n] for n in HINTS if n in cfg}
        return _with_hints(op, hints) if hints else op

    # -- tuning -------------------------------------------------------------------------
    def tune(self, store: RecordStore) -> Record:
        with _not_recording():
            return self._tune(store)

    def _tune(self, store: RecordStore) -> Record:
        k = self.kernel
        configs = self.spec.configs(self.fixed)
        snapshots = _snapshot(self.values, k)
        timings: list[tuple[dict[str, int], float]] = []
        skipped: list[tuple[dict[str, int], str]] = []
        tty = sys.stderr.isatty()
        best: tuple[float, dict[str, int]] | None = None
        try:
            for i, cfg in enumerate(configs):
                shown = {n: cfg[n] for n in self.spec.names if n in cfg}
                try:
                    op = self.build(cfg)
                    seconds = _time(op, snapshots)
                except BorrowError:
                    raise  # the ownership verdict does not depend on the candidate
                except TileError as e:
                    skipped.append((shown, state.why_skipped(e)))
                    continue
                finally:
                    _restore(snapshots)
                timings.append((shown, seconds))
                if best is None or seconds < best[0]:
                    best = (seconds, shown)
                if tty:
                    sys.stderr.write(
                        f"\rtilec: tuning `{k.__name__}`: {i + 1}/{len(configs)} candidates, best "
                        f"{format_config(best[1])} {best[0] * 1e6:.1f} us   "
                    )
                    sys.stderr.flush()
        finally:
            if tty:
                sys.stderr.write("\n")
        if best is None:
            notes = "; ".join(f"{format_config(c)}: {w}" for c, w in skipped[:6])
            raise CallError(
                f"no candidate of `#[autotune({self.spec.describe()})]` for kernel `{k.__name__}` "
                f"could run: {notes}",
                where=k.module._where(k.decl.name.span, f"`{k.signature}`"),
                help="add candidates that pass the checks",
                code=TUNED_TILE_MISUSE,
            )
        rec = Record(
            key=self.key,
            kernel=k.__name__,
            module=k.module.name,
            device=self.device_name,
            key_values=self.key_values,
            best=best[1],
            best_seconds=best[0],
            timings=timings,
            skipped=skipped,
            created=time.time(),
        )
        store.put(rec)
        return rec


def _names_in(expr: Any) -> list[str]:
    if isinstance(expr, ast.Name):
        return [expr.ident.name]
    out: list[str] = []
    for f in dataclasses.fields(expr) if dataclasses.is_dataclass(expr) else ():
        v = getattr(expr, f.name)
        if dataclasses.is_dataclass(v):
            out += _names_in(v)
        elif isinstance(v, tuple):
            for x in v:
                if dataclasses.is_dataclass(x):
                    out += _names_in(x)
    return out


def _shape_of(v: Any) -> tuple[int, ...] | None:
    try:
        return arrays.describe(v).shape
    except (NotAnArray, Unsupported):
        return None


def _device_name(kernel: KernelLike, engine: str) -> str:
    if engine == "cpu":
        return "cpu"
    try:
        dev = kernel.module._runtime(engine).device
        return f"{engine} {dev.ctx.info.name}"  # type: ignore[attr-defined]
    except (AttributeError, TileError):
        return engine


def _with_hints(op: Operation, hints: dict[str, int]) -> Operation:
    """`op` compiled with the hints (`num_warps`, `stages`, `max_blocks`) overridden."""
    plan = op._plan
    fields = hinted_fields(plan.kir, hints)
    if not fields:
        return op
    memo = (id(plan), *sorted(fields.items()))
    hinted = _HINTED.get(memo)
    if hinted is None or hinted[0] is not plan:
        kir = dataclasses.replace(plan.kir, **fields)
        prepared = plan.runtime.device.prepare(kir)
        new = dataclasses.replace(
            plan, kir=kir, prepared=prepared, launcher=None, launcher_tried=False, memo=None
        )
        hinted = (plan, new)
        if len(_HINTED) > 1024:
            _HINTED.clear()
        _HINTED[memo] = hinted
    out = Operation(hinted[1], op._ptrs, op._objs, op._scalars, op._hosts)
    op._runs = 1  # replaced, not forgotten
    return out


def _snapshot(values: list[Any], kernel: KernelLike) -> list[tuple[Any, Any, str]]:
    """Copies of the arrays a candidate writes, to put back after each timed
    one: the `&mut` ones and the `&` ones the kernel's `unsafe` code writes
    (atomics, `store_unchecked`: a total would sum every timed run). Host
    memory of any library is copied through its NumPy view; CUDA memory of
    a library other than PyTorch's or CuPy's is refused (E0801): its writes
    would pile up over the timed runs."""
    writes_for = getattr(kernel.module._ownership, "writes_for", None)
    unsafe = writes_for(kernel.key) if writes_for is not None else frozenset()
    out = []
    for spec, v in zip(kernel.specs, values, strict=True):
        if spec.kind == "mut" and isinstance(v, Partition):
            a = v.array
        elif spec.name in unsafe and not isinstance(v, Partition):
            a = v
        else:
            continue
        lib = type(a).__module__.split(".", 1)[0]
        if lib == "torch":
            out.append((a, a.detach().clone(), lib))
        elif lib == "cupy":
            out.append((a, a.copy(), lib))
        else:
            # NumPy, and host memory of any other library through its NumPy view
            try:
                ref = arrays.describe(a)
            except (NotAnArray, Unsupported):
                continue  # the call refuses it (and says why)
            if ref.host is None:  # CUDA memory no library here can copy
                raise CallError(
                    f"kernel `{kernel.__name__}` is tuned on the call's arrays, and `{spec.name}` "
                    f"({ref.describe()}) must be put back after each timed candidate, but the "
                    "tuner cannot copy it",
                    where=kernel.module._where(kernel.decl.name.span, f"`{kernel.signature}`"),
                    help=f"pass `{spec.name}` as a PyTorch tensor or a CuPy array "
                    f"(`cupy.asarray({spec.name})`), or give the tuned generics explicitly",
                    code=UNUSABLE_ARRAY,
                )
            out.append((ref.host, ref.host.copy(), "numpy"))
    return out


def _restore(snapshots: list[tuple[Any, Any, str]]) -> None:
    for a, copy, lib in snapshots:
        if lib == "torch":
            with __import__("torch").no_grad():
                a.copy_(copy)
        else:
            a[...] = copy


@contextlib.contextmanager
def _not_recording() -> Iterator[None]:
    """Tuning inside `with tilelang.graph()` (the first call of a new key made
    in the block): the candidates' timed runs are runs, not part of the
    recording. They were recorded (43 operations for two candidates on the
    CPU), and every replay ran them all: an accumulating kernel added 43
    times. The block's own `.sync()` of the operation returned records it as
    usual. (Another thread's recording is not this one's.)"""
    rec = engines.RECORDING
    mine = rec is not None and getattr(rec, "_thread", None) == threading.get_ident()
    if mine:
        rec.paused += 1
    try:
        yield
    finally:
        if mine:
            rec.paused -= 1


def _time(op: Operation, snapshots: list[tuple[Any, Any, str]]) -> float:
    plan = op._plan
    op.sync()  # compiles and warms up; failures surface here
    _restore(snapshots)
    dev: Any = plan.runtime.device
    if plan.engine == "cpu" or plan.space == "cpu" or not hasattr(dev, "record_event"):
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < 3 or (len(times) < 20 and time.perf_counter() - start < 0.2):
            t0 = time.perf_counter()
            op.sync()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)
    stream = dev.foreign_stream(op._current_stream())
    reps = 10
    samples = []
    for _ in range(3):
        e0 = dev.record_event(stream)
        for _ in range(reps):
            op.launch()._end_borrows()  # in order on one stream; waited for below
        e1 = dev.record_event(stream)
        samples.append(dev.event_seconds(e0, e1) / reps)
        dev.release_event(e0)
        dev.release_event(e1)
    dev.sync_foreign(stream)
    return float(statistics.median(samples))
