"""Tuning the launches of a Tile program (`tilec run`, `tilec tune FILE.tile`).

A Tile launch fixes every const generic (the type checker asks for each,
E0215), so in Tile source only the hints an `#[autotune]` attribute lists
(`num_warps`, `stages`) are left to the tuner; Python callers can also leave
generics and tile shapes open (`tuner.py`). The first launch of a kernel
instance with a new key (the IR of the instance, the tensors' shapes and
element types, the device) times each hint candidate on the launch's own
tensors, restoring the tensors it writes (`&mut`, and `&` ones its `unsafe` code
writes) after each, and records the fastest
beside the compile cache; later launches and runs use the record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
import time
from typing import Any

from tilelang.diagnostics.model import TileError
from tilelang.memo import ByIdentity
from tilelang.runtime.tensor import Partition, Tensor
from tilelang.tuner import state
from tilelang.tuner.records import Record, default_store, record_key
from tilelang.tuner.space import HINTS, TuneSpec, hinted_fields, tune_spec

_SPECS = ByIdentity()  # a kernel declaration -> its hint-only spec


def hint_spec(decl: Any) -> TuneSpec | None:
    """The hints part of `decl`'s `#[autotune]`, or None."""
    return _SPECS.get(decl, lambda: _hint_spec(decl))


def _hint_spec(decl: Any) -> TuneSpec | None:
    spec = tune_spec(decl)
    if spec is not None:
        hints = tuple((n, v) for n, v in spec.candidates if n in HINTS)
        spec = TuneSpec(hints, spec.key) if hints else None
    return spec


def tuned_prepared(runtime: Any, op: Any, kir: Any, prepared: Any, stream: Any) -> Any:
    """The prepared kernel to run `op` with: `prepared` itself, or the one
    compiled with the hints the record (or a tuning now) chose."""
    spec = hint_spec(op.kernel)
    if spec is None:
        return prepared
    from tilelang.ir.printer import print_kernel

    dev = runtime.device
    tensors = [(p.name.name, a) for p, a in zip(op.kernel.params, op.bound.args, strict=False)]
    key_values = {
        n: [list(t.shape), t.dtype.value]
        for n, a in tensors
        if isinstance(t := (a.tensor if isinstance(a, Partition) else a), Tensor)
    }
    info = getattr(getattr(dev, "ctx", None), "info", None)
    device = "cpu" if dev.kind == "cpu" else f"{dev.name} {getattr(info, 'name', '')}".strip()
    key = record_key(
        hashlib.sha256(print_kernel(kir).encode()).hexdigest(), spec.describe(), key_values, device
    )
    store = default_store()
    rec = None if state.FORCE else store.get(key)
    if rec is None:
        rec = _tune(runtime, op, kir, spec, key, key_values, device, stream)
        store.put(rec)
    return _hinted(runtime, kir, rec.best)


def _hinted(runtime: Any, kir: Any, hints: dict[str, int]) -> Any:
    fields = hinted_fields(kir, hints)
    memo = ("hinted", id(kir), *sorted(fields.items()))
    hit = runtime.kernels.get(memo)
    if hit is None or hit[0] is not kir:
        new = dataclasses.replace(kir, **fields)
        hit = (kir, runtime.device.prepare(new))
        runtime.kernels[memo] = hit
    return hit[1]


def _tune(
    runtime: Any,
    op: Any,
    kir: Any,
    spec: TuneSpec,
    key: str,
    key_values: dict[str, Any],
    device: str,
    stream: Any,
) -> Record:
    dev = runtime.device
    written = _written(op, kir)
    saved = [t.numpy().copy() for t in written]
    args = _device_args(op, kir)
    timings: list[tuple[dict[str, int], float]] = []
    skipped: list[tuple[dict[str, int], str]] = []
    for cfg in spec.configs():
        try:
            prepared = _hinted(runtime, kir, cfg)
            samples = []
            for i in range(4):
                t0 = time.perf_counter()
                dev.run(prepared, op.bound.grid, args, stream, op.span)
                dev.sync(stream)
                if i:  # the first run compiles
                    samples.append(time.perf_counter() - t0)
            timings.append((cfg, statistics.median(samples)))
        except TileError as e:
            skipped.append((cfg, state.why_skipped(e)))
        finally:
            for t, host in zip(written, saved, strict=True):
                t.write(host)
    best = min(timings, key=lambda c: c[1]) if timings else (fallback_hints(kir), float("nan"))
    return Record(
        key=key,
        kernel=kir.name,
        module="",
        device=device,
        key_values=key_values,
        best=best[0],
        best_seconds=best[1],
        timings=timings,
        skipped=skipped,
        created=time.time(),
        instance=", ".join(f"{k}={v}" for k, v in kir.instantiation),
    )


def fallback_hints(kir: Any) -> dict[str, int]:
    """The record's choice where no candidate could run: the hints the kernel gives itself, so that it runs
    as untuned. (It recorded the IR's `num_warps`, 4 where the source names none, which `hinted_fields` marks
    given: the kernel then ran at 4 where the backend's rule takes 1 or 2 for small tiles or more for big ones,
    `lift.default_warps`.)"""
    given = {"num_warps": kir.num_warps} if "num_warps" in kir.hints else {}
    return {**given, "stages": kir.num_stages, "max_blocks": kir.max_blocks}


def _written(op: Any, kir: Any) -> list[Tensor]:
    """The tensors a candidate's runs write, to put back after each: the `&mut`
    partitions and the `&` tensors the kernel's `unsafe` code stores to or
    updates atomically (an atomic total would otherwise hold every timed run's
    additions: 400 for 16 at four runs of six candidates)."""
    from tilelang.ir import nodes as ir

    names = {o.tensor for o in ir.walk(kir.body) if isinstance(o, ir.Store | ir.AtomicRMW)}
    out: list[Tensor] = []
    for p, a in zip(op.kernel.params, op.bound.args, strict=False):
        t = a.tensor if isinstance(a, Partition) else a
        if isinstance(t, Tensor) and (isinstance(a, Partition) or p.name.name in names) \
                and all(t.storage is not w.storage for w in out):
            out.append(t)
    return out


def _device_args(op: Any, kir: Any) -> list[Any]:
    by_name: dict[str, Any] = {}
    for p, a in zip(op.kernel.params, op.bound.args, strict=False):
        t = a.tensor if isinstance(a, Partition) else a
        by_name[p.name.name] = t.storage if isinstance(t, Tensor) else t
    names = [p.name for p in getattr(kir, "params", ())] or list(by_name)
    return [by_name[n] for n in names]
