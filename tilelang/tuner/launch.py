"""Tile launches that leave tile dimensions to the autotuner.

    #[autotune(BM = [64, 128], BN = [64, 128], num_warps = [4, 8])]
    kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, ..)

    gemm::<_, _, 32>(..)          // not this: generics are given or inferred
    gemm(c.partition([_, _]), &a, &b).sync();     // the tuner picks BM and BN
    gemm(c.partition([_, 64]), &a, &b).sync();    // BN = 64 is given; the tuner picks BM

A tile dimension written `_` is the `&mut` parameter's declared tile
dimension (`BM`) with the value the tuner picks; the type checker accepts it
only for a const generic the kernel's `#[autotune]` lists (E0229), and the
tuner then also picks every other listed generic that nothing fixes. The
first launch for a new key (the source, the kernel, the attribute, what the
launch fixes, the tensors' shapes and element types, the device) builds one
operation per candidate with `make` (the evaluator's own launch path:
`bind_launch`'s E05xx checks and the ownership checker's deferred facts run
for every candidate, as for any launch), runs each on the launch's own
tensors and restores the `&mut` ones after it, keeps the fastest in a
record beside the compile cache and returns its operation; later launches
and later runs build only that one. A candidate that fails a check, fails
to compile or needs more than the device has is skipped with a note in the
record; the launch fails only when none is left. The hints the attribute
lists are tuned per candidate instance by `tuner/host.py`, as for any
`#[autotune]` launch.

Ownership: every block of a partition writes its own tile whatever the tile
shape, so the static proof does not depend on the choice; each candidate is
still checked at launch like any other launch.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from tilelang.diagnostics.codes import types as T
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.runtime.launch import LaunchArg, param_specs
from tilelang.runtime.tensor import TUNER_PICKS, Partition, Tensor
from tilelang.syntax import ast
from tilelang.tuner import state
from tilelang.tuner.records import Record, default_store, record_key
from tilelang.tuner.space import HINTS, TuneSpec, format_config, tune_spec


def tuned_operation(
    ev: Any,
    decl: ast.FnDecl,
    call: ast.Call,
    args: list[LaunchArg],
    generics: dict[str, tuple[Any, Any]],
    make: Callable[[list[LaunchArg], dict[str, tuple[Any, Any]]], Any],
    unsafe_writes: frozenset[str] = frozenset(),
) -> Any:
    """The operation of launch `call` of kernel `decl` whose partitions hold
    `TUNER_PICKS` dimensions, built with the recorded (or now tuned) choice.
    `unsafe_writes`: the `&` parameters the kernel's `unsafe` code writes (the
    ownership checker's), restored after each candidate with the `&mut` ones."""
    spec = tune_spec(decl)
    assert spec is not None  # sema: a `_` dimension needs an `#[autotune]` that lists it
    const_names = [g.name.name for g in decl.generics if g.is_const]
    fixed: dict[str, int] = {k: int(v) for k, (v, _) in generics.items() if k in const_names}
    for p, a in zip(param_specs(decl), args, strict=False):
        if p.kind == "mut" and isinstance(a.value, Partition):
            for dim, size in zip(p.dims or (), a.value.tile, strict=False):
                if size is not TUNER_PICKS and isinstance(dim, ast.Name) and dim.ident.name in const_names:
                    fixed.setdefault(dim.ident.name, int(size))
    space = TuneSpec(tuple((n, v) for n, v in spec.candidates if n not in HINTS and n in const_names), spec.key)
    tensors = {
        p.name: a.value.tensor if isinstance(a.value, Partition) else a.value
        for p, a in zip(param_specs(decl), args, strict=False)
    }
    key_values = {
        n: [list(t.shape), t.dtype.value]
        for n, t in tensors.items()
        if isinstance(t, Tensor) and (spec.key is None or n in spec.key)
    }
    dev = ev.runtime.device
    info = getattr(getattr(dev, "ctx", None), "info", None)
    device = "cpu" if dev.kind == "cpu" else f"{dev.name} {getattr(info, 'name', '')}".strip()
    source = ev.sources.get(decl.span.file).text
    key = record_key(
        hashlib.sha256(source.encode()).hexdigest(), decl.name.name, spec.describe(), key_values,
        sorted(fixed.items()), device, "tile-launch",
    )  # fmt: skip

    def build(cfg: dict[str, int]) -> Any:
        env = {**fixed, **cfg}
        picked: list[LaunchArg] = []
        for p, a in zip(param_specs(decl), args, strict=False):
            v = a.value
            if p.kind == "mut" and isinstance(v, Partition) and TUNER_PICKS in v.tile:
                tile = []
                for dim, size in zip(p.dims or (), v.tile, strict=False):
                    got = ev._eval_dim(dim, env) if size is TUNER_PICKS and dim is not None else size
                    if got is None or got is TUNER_PICKS:  # sema checked: never for a listed generic
                        raise TileError(Diagnostic.error(T.TUNED_TILE_MISUSE,
                                        f"the autotuner has no value for a tile dimension of `{p.name}`")
                                        .primary(a.span, "left to the tuner here")
                                        .with_help("name the dimension after a const generic of the kernel "
                                                   "that `#[autotune]` lists, or write it out"))
                    tile.append(int(got))
                v = Partition(v.tensor, tuple(tile))
            picked.append(LaunchArg(v, a.span, a.text))
        given = dict(generics)
        for n, val in cfg.items():
            given.setdefault(n, (val, call.span))
        return make(picked, given)

    store = default_store()
    rec = None if state.FORCE else store.get(key)
    if rec is None:
        rec = _tune(ev, decl, call, space, fixed, build, key, key_values, device, tensors, unsafe_writes)
        store.put(rec)
    return build({n: v for n, v in rec.best.items() if n not in fixed})


def _tune(
    ev: Any,
    decl: ast.FnDecl,
    call: ast.Call,
    space: TuneSpec,
    fixed: dict[str, int],
    build: Callable[[dict[str, int]], Any],
    key: str,
    key_values: dict[str, Any],
    device: str,
    tensors: dict[str, Any],
    unsafe_writes: frozenset[str] = frozenset(),
) -> Record:
    # an atomic total in a `&` tensor would otherwise hold every timed run's additions
    written = [t for p, t in zip(param_specs(decl), tensors.values(), strict=False)
               if (p.kind == "mut" or p.name in unsafe_writes) and isinstance(t, Tensor)]  # fmt: skip
    saved = [t.numpy().copy() for t in written]
    timings: list[tuple[dict[str, int], float]] = []
    skipped: list[tuple[dict[str, int], str]] = []
    names = space.names
    for cfg in space.configs(fixed):
        shown = {n: cfg[n] for n in names if n in cfg}
        try:
            op = build({n: v for n, v in cfg.items() if n not in fixed})
            timings.append((shown, _time(op)))
        except TileError as e:
            skipped.append((shown, state.why_skipped(e)))
        finally:
            for t, host in zip(written, saved, strict=True):
                t.write(host)
    if not timings:
        notes = "; ".join(f"{format_config(c)}: {w}" for c, w in skipped[:6])
        raise TileError(
            Diagnostic.error(T.TUNED_TILE_MISUSE,
                             f"no candidate of `#[autotune({space.describe()})]` for kernel "
                             f"`{decl.name.name}` could run: {notes}")
            .primary(call.span, "tuned here")
            .with_help("add candidates that pass the checks, or give the tile shape")
        )  # fmt: skip
    best = min(timings, key=lambda c: c[1])
    return Record(
        key=key,
        kernel=decl.name.name,
        module="",
        device=device,
        key_values=key_values,
        best={**best[0], **{n: v for n, v in fixed.items() if n in names}},
        best_seconds=best[1],
        timings=timings,
        skipped=skipped,
        created=time.time(),
    )


def _time(op: Any) -> float:
    """Seconds of one run of `op`: the median of a few, after one that compiles
    (each run is a launch like any other: in-flight checks, then wait)."""
    samples: list[float] = []
    start = time.perf_counter()
    for i in range(12):
        t0 = time.perf_counter()
        op.sync()
        if i:
            samples.append(time.perf_counter() - t0)
        if i >= 3 and time.perf_counter() - start > 0.2:
            break
    return float(statistics.median(samples))
