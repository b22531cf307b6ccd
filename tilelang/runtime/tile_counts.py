"""E0514: a tensor dimension within a tile of 2^31, launched to a kernel that
counts tiles.

A kernel counts the tiles of a run-time dimension as `(dim + t - 1) / t` in
`i32` (a view's `p.num_tiles(axis)`, a tile walk's or queue's tiles along
its axis): for a dimension within `t` of 2^31 the sum passes `i32`'s
maximum and the count comes out negative, on both engines alike, so a loop
`for k in 0..p.num_tiles(0)` runs no round and a walk writes no tile while
the launch's grid (counted on the host) has them all. The count is not
computed another way in the kernel: every exact form tried (in `u32`, or
`dim / t` plus one for a remainder) moved the register allocation of the
LLM GEMVs, which sit at their register budget, into spills
(`tests/llm/test_gemv_registers.py`, `test_queue_gemv.py`). So the launch
refuses such a dimension, before any work, for a kernel that counts tiles
(in its body or a device function it calls, at any depth): every tile is
at most 2^20 elements, so a dimension below 2^31 - 2^20 never meets it.

E0515 (hrev30): a `last_block(axis)` region's and a tile queue's
(`for s in queue(axis)`) counters are one a group (the blocks that differ
only along `axis`), and the kernel computes its group's index from the
block's position on the other axes in `i32` (`ir/lower/context.group_index`,
the counter's address `codegen/arrive._counter`). A launch of more than
2^31 - 1 groups (tiles of one element over a tensor of 2^31, as a
[1, 46341, 46341] `u8` tensor in [1, 1, 1] tiles gives with `last_block(0)`)
wrapped the index below zero: on a GPU the atomic of the arrival went to
memory before the counter buffer (gigabytes before it), on the interpreter
two groups shared a counter once there were 2^32. Such a launch is refused.

Entry points: `check_tile_counts(program, decl, args, launch)` and
`check_group_counts(decl, grid, launch)`, from the launch-time checks of
every launch (`HostEvaluator.check_deferred`, which the Python API's checked
path calls too).
"""

from __future__ import annotations

from typing import Any

from tilelang.diagnostics.codes import launch as codes
from tilelang.diagnostics.grid import group_count_error
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.memo import ByIdentity
from tilelang.runtime.tensor import Partition, Tensor
from tilelang.share_queue import axis_of as walk_axis
from tilelang.source import Span
from tilelang.syntax import ast

# A tile holds at most 2^20 elements (E0213), so `dim + t - 1` stays in i32
# for every tile when `dim` is at most this.
SAFE_DIM = (1 << 31) - (1 << 20)

# a program -> {a kernel declaration's id -> where it counts tiles}: by program too, as the device functions a
# declaration calls are its program's (compiles of one text share its parsed declarations, `parser.parse_once`)
_SITES = ByIdentity(64)


def counting_site(program: Any, decl: ast.FnDecl) -> tuple[Span, str] | None:
    """Where `decl` (a kernel), or a device function it calls at any depth,
    counts tiles: (span, what), or None."""
    sites: dict[int, Any] = _SITES.get(program, dict)
    if id(decl) not in sites:  # (the program holds its declarations: no id is reused while it lives)
        sites[id(decl)] = _find_counting_site(program, decl)
    return sites[id(decl)]  # type: ignore[no-any-return]


def _find_counting_site(program: Any, decl: ast.FnDecl) -> tuple[Span, str] | None:
    seen = {id(decl)}
    stack = [decl]
    while stack:
        fn = stack.pop()
        for n in ast.walk(fn.body):
            if isinstance(n, ast.MethodCall) and n.method.name == "num_tiles":
                return n.span, f"`.num_tiles(..)` in `{fn.name.name}`"
            if isinstance(n, ast.For) and walk_axis(n.iter) is not None:
                return n.iter.span, f"the tile walk of `{fn.name.name}`"
            if isinstance(n, ast.Call):
                info = program.callee_of(n)
                if info is not None and not info.is_kernel and id(info.decl) not in seen:
                    seen.add(id(info.decl))
                    stack.append(info.decl)
    return None


def check_tile_counts(program: Any, decl: ast.FnDecl, args: list[Any], launch: Span) -> None:
    """E0514 at `launch` for a tensor argument with a dimension past
    `SAFE_DIM`, when the kernel counts tiles."""
    big = None
    for p, a in zip(decl.params, args, strict=False):
        t = a.tensor if isinstance(a, Partition) else a
        if isinstance(t, Tensor):
            d = next((d for d in t.shape if d > SAFE_DIM), None)
            if d is not None:
                big = (p.name.name, d)
                break
    if big is None:
        return
    site = counting_site(program, decl)
    if site is None:
        return
    name, d = big
    span, what = site
    raise TileError(
        Diagnostic.error(
            codes.TILE_COUNT_RANGE,
            f"`{name}` of kernel `{decl.name.name}` has a dimension of {d} elements, within a "
            "tile of 2^31: the kernel's count of its tiles would pass `i32`",
        )
        .primary(launch, "this launch")
        .secondary(span, f"{what} counts tiles as `(dim + tile - 1) / tile` in `i32`")
        .note(f"a kernel that counts tiles takes dimensions up to {SAFE_DIM} (2^31 - 2^20: a tile "
              "holds at most 2^20 elements)")
        .with_help(f"split that dimension of `{name}` in two (`.reshape(..)` with one more "
                   "dimension), or pass the tensor in parts")
    )


def check_group_counts(decl: ast.FnDecl, grid: tuple[int, ...], launch: Span) -> None:
    """`diagnostics.grid.group_count_error`, raised (the launch's check)."""
    diag = group_count_error(decl, grid, launch)
    if diag is not None:
        raise TileError(diag)
