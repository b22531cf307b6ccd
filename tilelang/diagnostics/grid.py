"""The help of E0509 (a launched kernel without a `&mut` partition to size
its grid), shared by the checker (a Tile launch, `sema/launch.py`) and the
launch itself (a Python API call, `runtime/launch.py`): one text, so the two
never drift apart. So are E0500's help and E0515 (`group_count_error`: a
`last_block` or queue launch of more groups than `i32` numbers).

The parameter it offers has the rank of the grid the kernel reads (round 13:
a 1-D `seen: &mut Tensor<i32, [1]>` for a kernel reading `block_id(2)` made
a grid of one axis, where `block_id(1)` and `block_id(2)` are always 0) and
a `_` name, as nothing needs to store into it (`seen` was W0001 unused)."""

from __future__ import annotations

from tilelang import lastblock, share_queue
from tilelang.diagnostics.codes import launch as codes
from tilelang.diagnostics.model import Diagnostic
from tilelang.source import Span
from tilelang.syntax import ast

# The most groups a `last_block` or queue launch may have (E0515, hrev30): the largest group index, `groups - 1`,
# and every partial sum of it (`bid_1 + bid_2 * nb_1`, `ir/lower/context.group_index`) then fit `i32`.
MAX_GROUPS = (1 << 31) - 1


def no_grid_help(decl: ast.FnDecl) -> str:
    axes = [n.args[0].value.value for n in ast.walk(decl.body)
            if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name) and n.callee.ident.name == "block_id"
            and n.args and isinstance(n.args[0].value, ast.IntLit)]
    rank = min(max(axes, default=0), 2) + 1
    ones = ", ".join(["1"] * rank)
    grid = ", ".join(f"g{i}" for i in range(rank)) if rank > 1 else "n"
    return ("give the kernel a `&mut` parameter with one element a block, of the grid's rank"
            + (f" (it reads `block_id({rank - 1})`)" if rank > 1 else "")
            + f", e.g. `_grid: &mut Tensor<i32, [{ones}]>` (a `_` name: a parameter only for the grid, which "
            f"nothing needs to store into), and pass it `_grid.partition([{ones}])` of a "
            f"`zeros::<i32>([{grid}])` with the grid's size along each axis "
            "(the number of tiles along it: `std::math::cdiv(n, tile)`)")


def grid_mismatch_help(name: str, want: tuple[int, ...], got: tuple[int, ...], shape: tuple[int, ...],
                       tile: tuple[int, ...]) -> str:
    """E0500's help (two `&mut` partitions give other grids), shared as `no_grid_help` is. Where `name`'s 2-D
    grid is the other's transposed (round 15: a scan's [L, D] output in [L, BD] tiles, grid [1, 2], beside
    its final [D, N] state in [BD, N] tiles, grid [2, 1]), the tensor laid out transposed gives the grid."""
    if len(want) == len(got) == len(shape) == len(tile) == 2 and tuple(got[::-1]) == tuple(want) \
            and tuple(got) != tuple(want):
        g = f"[{want[0]}, {want[1]}]"
        return (f"`{name}`'s grid is the other's transposed: `{name}` laid out transposed, [{shape[1]}, "
                f"{shape[0]}] in tiles of [{tile[1]}, {tile[0]}], gives {g} (store the tile's `.transpose()` into "
                f"a parameter of tile shape [{tile[1]}, {tile[0]}])")
    p = len(want) - len(got)
    if p > 0 and tuple(want) == (1,) * p + tuple(got) and len(shape) == len(tile) == len(got):
        # round 16: an LSTM's [T, B, H] outputs in [T, 8, H] tiles (grid [1, 2, 1]) beside its last state
        # [B, H] in [8, H] tiles (grid [2, 1]): the state with leading axes of 1 gives the grid
        ones = "1, " * p
        return (f"`{name}`'s grid is the other's without its leading {'axis' if p == 1 else 'axes'} of 1: "
                f"`{name}` with {'a leading axis' if p == 1 else f'{p} leading axes'} of 1, "
                f"[{ones}{', '.join(map(str, shape))}] in tiles of [{ones}{', '.join(map(str, tile))}], gives "
                f"[{', '.join(map(str, want))}] (a parameter of tile shape [{ones}{', '.join(map(str, tile))}]; "
                f"store `t.reshape([{ones}..])`)")
    if p < 0 and tuple(got) == (1,) * -p + tuple(want) and len(shape) == len(tile) == len(got) \
            and all(x == 1 for x in tile[:-p]):
        rest = (shape[-p:], tile[-p:])
        return (f"`{name}`'s grid has {-p} leading {'axis' if p == -1 else 'axes'} of 1 more than the other's: "
                f"`{name}` without {'it' if p == -1 else 'them'}, [{', '.join(map(str, rest[0]))}] in tiles of "
                f"[{', '.join(map(str, rest[1]))}], gives [{', '.join(map(str, want))}]")
    if all(g == 1 for g in got) and any(w > 1 for w in want) and tuple(shape) == tuple(tile):
        # round 26: Gauss-Legendre nodes and weights ([16], one tile: every block would compute and store the
        # same) beside 200 integrals in tiles of 64 (grid [4]): the general advice led to one block for all
        n = 1
        for w in want:
            n *= w
        whole = ", ".join(map(str, tile))
        return (f"`{name}` is one tile, which each of the {n} blocks would store alike: write it in a launch of "
                f"its own (a kernel whose `&mut` parameters are its tile, `{name}.partition([{whole}])`), "
                f"then pass it to this one to read, `&{name}`; or choose tile shapes that split every `&mut` tensor "
                "into the same grid")
    return "choose tile shapes that split every `&mut` tensor into the same grid"


def merge_axes_help(shape: tuple[int, ...], tile: tuple[int, ...]) -> str:
    """E0510's help (a partition over more than 3 axes), for the checker (constant shapes) and the launch: the
    tensor and tile with the leading axes merged into three, where the tiles of all merged axes but the last are
    1 (then it is the same split: `[2, 3, 4, 4]` in `[1, 1, 2, 2]` is `[6, 4, 4]` in `[1, 2, 2]`); else the
    general advice."""
    k = len(tile) - 3  # axes 0..k become one
    if all(t == 1 for t in tile[:k]):
        lead = 1
        for n in shape[:k + 1]:
            lead *= n
        s3, t3 = [lead, *shape[k + 1:]], [tile[k], *tile[k + 1:]]
        merged = f"`.reshape([{', '.join(map(str, s3))}])`"
        if shape[k] % tile[k] == 0:
            return (f"merge the leading axes: {merged} and tiles of [{', '.join(map(str, t3))}] (in the kernel's "
                    "parameter too) split it the same way; reshape it back after")
        # (round 24: [2, 10, 6, 3] in [1, 4, 6, 3] was told [20, 6, 3] in [4, 6, 3], whose third tile holds rows
        # of two images: the same split only where the tile divides the axis it merges into)
        fit = max(d for d in range(1, tile[k] + 1) if shape[k] % d == 0)
        return (f"merge the leading axes: {merged} and tiles of [{', '.join(map(str, [fit, *tile[k + 1:]]))}] (in "
                f"the kernel's parameter too): along the merged axis a tile's size must divide {shape[k]}, which "
                f"{tile[k]} does not, or a tile would hold elements of two indices of axis {k - 1}; reshape it back "
                "after")
    return "reshape the tensor to at most three dimensions before partitioning it"


def group_count_error(decl: ast.FnDecl, grid: tuple[int, ...], launch: Span) -> Diagnostic | None:
    """E0515 at `launch` when `decl` (a kernel) has a `last_block(axis)` region or a tile queue along `axis`
    and the launch's `grid` has more than `MAX_GROUPS` groups (blocks that differ only along `axis`); else
    None. The launch's check and `tilec check`'s for a grid of constant shapes
    (`sema/launch.constant_grids`) give this one diagnostic (`runtime/tile_counts.check_group_counts` raises it)."""
    site: tuple[Span, str, int] | None = None
    found = lastblock.region(decl)
    if found is not None:
        site = (found[0].cond.span, f"`last_block({found[1]})`", found[1])
    else:
        walk = share_queue.loop(decl)
        if walk is not None and share_queue.kind_of(walk[0].iter) == share_queue.NAME:
            site = (walk[0].iter.span, f"`queue({walk[1]})`", walk[1])
    if site is None:
        return None
    span, what, axis = site
    g = tuple(grid) + (1,) * (3 - len(grid))
    others = [d for d in range(3) if d != axis]
    groups = g[others[0]] * g[others[1]]
    if groups <= MAX_GROUPS:
        return None
    shape = " x ".join(str(n) for n in g[:max(len(grid), axis + 1)])
    return (
        Diagnostic.error(
            codes.GROUP_COUNT_RANGE,
            f"this launch of kernel `{decl.name.name}` has {groups} groups of {what}, more than the "
            f"{MAX_GROUPS} the kernel can number",
        )
        .primary(launch, f"a grid of {shape} blocks")
        .secondary(span, f"one counter a group: the blocks that differ only along axis {axis}, "
                         f"numbered by their place on axes {others[0]} and {others[1]} in `i32`")
        .note(f"a group's number must fit `i32`: a launch of {what} takes at most {MAX_GROUPS} groups "
              f"(the product of its grid's axes {others[0]} and {others[1]})")
        .with_help(f"use larger tiles along axes {others[0]} and {others[1]} of the `&mut` partitions (fewer "
                   f"blocks there), or make the axis with the most tiles axis {axis}")
    )
