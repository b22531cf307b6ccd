"""Warning codes, W0001-W0099 (see `codes/__init__.py`).

Emitted only by `tilelang.sema.lints` (after the checks pass). A warning
never stops a program; `tilec check --deny warnings` makes them errors, and
`#[allow(lint)]` before a function silences one there (the lint names are
`tilelang.sema.lints.LINTS`). Each has `explain/<CODE>.md`.
"""

from tilelang.diagnostics.codes import define

UNUSED_VARIABLE = define("W0001", "unused-variables", "a variable or parameter that is never read")
UNUSED_OPERATION = define(
    "W0002", "unused-operations", "a kernel call bound to a variable that is never run")
UNREACHABLE_CODE = define(
    "W0003", "unreachable-code", "a statement after a `return`, `break` or `continue`")
UNUSED_UNSAFE = define("W0004", "unused-unsafe", "an `unsafe` block that needs no `unsafe`")
INEFFECTIVE_HINT = define(
    "W0005", "ineffective-hints",
    "a hint that cannot change the kernel: `stages` with no loop, `evict_first` with no `stages` or no loop, "
    "`prefetch_lines` with no `prefetch`")
PADDED_EXTREMUM = define(
    "W0006", "padded-extremum",
    "a maximum or minimum along an axis of a tile read with zero padding, where the tensor's length is `?`")
CONSTANT_BLOCK_ID = define(
    "W0007", "constant-block-id",
    "`block_id(axis)` or `num_blocks(axis)` of an axis past the kernel's grid: always 0 (or 1)")
MISALIGNED_REDUCTION = define(
    "W0008", "misaligned-reduction",
    "a reduction along an axis other than the first, broadcast back against a value of its source's rank")
SCALED_TILE_INDEX = define(
    "W0009", "scaled-tile-index",
    "a tile index multiplied by the tile's own size along that axis (an element offset written as a tile index)")
OWN_TILE_SHAPE = define(
    "W0010", "own-tile-shape",
    "`z.shape()` of a kernel's `&mut` parameter: the shape of the block's own tile, not of the partitioned tensor")
GRAPH_KEPT_VALUE = define(
    "W0011", "graph-kept-value",
    "a number a `graph { .. }` recorded, assigned afterwards while the graph is replayed: replays keep the old value")
ATOMIC_PAST_EDGE = define(
    "W0012", "atomic-past-edge",
    "an atomic (or `store_unchecked`) of a tile that runs past the edge of a tensor of constant shape in every launch")
NARROW_SUM_CAST = define(
    "W0013", "narrow-sum-cast",
    "an integer sum or product taken in a narrow type and cast to a wider one after it is taken (it wrapped first)")
