"""Every kernel of every `.tile` program in the repository (examples, run and
UI tests) that checks clean: it lowers, verifies, and gives the same results,
printed lines and device-assert errors in the block-by-block and the
vectorised interpreter modes on synthetic arguments (random data, partial
edge tiles)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tilelang.diagnostics.model import DiagnosticSink, TileError
from tilelang.dtypes import DType
from tilelang.interp import round_bf16, run_kernel
from tilelang.ir import nodes as ir
from tilelang.ir.lower import lower_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("examples/*.tile"), *ROOT.glob("tests/run/**/*.tile"),
                *ROOT.glob("tests/ui/**/*.tile")])


def kernels(path: Path) -> list[ir.Kernel]:
    sm = SourceMap()
    f = sm.add(str(path), path.read_text())
    sink = DiagnosticSink()
    try:
        prog = check_program(parse(f, sink), sm, sink)
    except Exception:
        return []
    if sink.has_errors:
        return []
    out = []
    for call, inst in prog.instantiations.items():
        info = prog.callee_of(call)
        if info is None or not info.is_kernel:
            continue
        if call in prog.deferred or call in prog.tuned:
            continue  # a generic known only at run time (or the tuner's pick): the launch binds it
        if any(g not in inst for g in (*info.const_generics, *info.type_params)):
            continue  # a generic of the host function around the call (`k::<B>` in `fn f<const B: i32>`): each instance binds it
        try:
            # type-checked only: the ownership checker may reject the program,
            # so the lowering's defence in depth (an internal error) is off
            out.append(lower_kernel(prog, info.qualname, inst, defend=False))
        except TileError:
            continue  # programs the ownership checker rejects (store to `&`)
    return out


def synthetic_args(k: ir.Kernel) -> tuple[list[Any], tuple[int, ...]]:
    rng = np.random.default_rng(0)
    args: list[Any] = []
    grid: tuple[int, ...] | None = None
    for p in k.params:
        if isinstance(p, ir.ScalarParam):
            dt = p.value.dtype
            args.append(True if dt is DType.BOOL else 3 if dt.is_int else 1.5)
            continue
        if p.mutable:
            assert p.tile_shape is not None
            cl = (*k.cluster, 1, 1, 1)
            if k.cluster:  # whole clusters (the launch's rule, E0512), two along each axis
                dims = tuple(t * 2 * c - (1 if t > 1 else 0) for t, c in zip(p.tile_shape, cl, strict=False))
            else:
                dims = tuple(t * 2 + 1 for t in p.tile_shape)  # a partial edge tile
            grid = grid or tuple(-(-d // t) for d, t in zip(dims, p.tile_shape, strict=True))
        else:
            dims = tuple(37 if d is None else d for d in p.dims)
        if p.dtype.is_float:
            a = rng.standard_normal(dims).astype(np.float32)
            args.append(round_bf16(a) if p.dtype is DType.BF16 else a.astype(p.dtype.np_dtype))
        elif p.dtype is DType.BOOL:
            args.append(rng.random(dims) < 0.5)
        else:
            args.append(rng.integers(0, 8, dims).astype(p.dtype.np_dtype))
    grid = (grid or (2,))[: k.grid_rank]
    return args, grid + (1,) * (k.grid_rank - len(grid))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_corpus_kernel_modes_agree(path: Path) -> None:
    for k in kernels(path):
        results = []
        printed: list[list[str]] = []
        errors: list[object] = []
        for mode in ("block", "vector"):
            args, grid = synthetic_args(k)
            lines: list[str] = []
            try:
                run_kernel(k, grid, args, mode=mode, out=lines.append)
                errors.append(None)
            except TileError as e:  # a device assert the synthetic data fails
                errors.append(e.diagnostics)
            results.append(args)
            printed.append(lines)
        assert errors[0] == errors[1], f"{path.name}: {k.name} failed differently"
        for x, y in zip(*results, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y, err_msg=f"{path.name}: {k.name}")
        assert printed[0] == printed[1], f"{path.name}: {k.name} printed differently"
