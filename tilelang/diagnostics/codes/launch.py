"""Error codes of the `launch` range (see `codes/__init__.py` for the ranges).

Launch-time checks: facts about a kernel launch that only the values of a run
can decide. The host runtime (`tilelang/runtime/launch.py`) checks all of them
before any kernel work starts; each diagnostic's primary label is the launch.
"""

from tilelang.diagnostics.codes import define

GRID_MISMATCH = define(
    "E0500", "partition-grids-disagree",
    "the `&mut` partitions of one launch give different grids")
DIM_MISMATCH = define(
    "E0501", "launch-dim-mismatch",
    "a tensor's run-time dimension differs from the static dimension of the kernel parameter")
DTYPE_MISMATCH = define(
    "E0502", "launch-dtype-mismatch",
    "a tensor's element type differs from the kernel parameter's at launch")
RANK_MISMATCH = define(
    "E0503", "launch-rank-mismatch",
    "a tensor's rank differs from the kernel parameter's at launch")
GENERIC_CONFLICT = define(
    "E0504", "launch-generic-conflict",
    "two arguments of a launch give one const generic different values")
TILE_SHAPE_MISMATCH = define(
    "E0505", "launch-tile-shape-mismatch",
    "a partition's tile shape differs from the kernel's `&mut` parameter at launch")
BAD_PARTITION = define(
    "E0507", "invalid-partition",
    "a partition's tile shape has the wrong rank or a dimension that is not positive")
NO_GRID = define(
    "E0509", "launch-without-grid",
    "a launched kernel has no `&mut` partition to size its grid")
GRID_RANK = define(
    "E0510", "launch-grid-rank",
    "a partitioned tensor has more than three dimensions, more than a grid has")
TILE_NOT_RUNNABLE = define(
    "E0511", "launch-tile-too-large",
    "a tile shape known only at run time has more elements than a tile block can hold")
REQUIREMENT_FAILED = define(
    "E0513", "launch-requirement-failed",
    "a launch's shapes or numbers break a `#[requires(..)]` condition of the kernel")
CLUSTER_GRID = define(
    "E0512", "launch-cluster-grid",
    "a launch's grid is not a whole number of the kernel's `#[cluster(..)]` blocks along some axis")
TILE_COUNT_RANGE = define(
    "E0514", "launch-tile-count-range",
    "a tensor dimension within a tile of 2^31, in a kernel that counts tiles (`num_tiles`, a walk)")
GROUP_COUNT_RANGE = define(
    "E0515", "launch-group-count-range",
    "a `last_block` or tile-queue launch of more than 2^31 - 1 groups (its counters are indexed in `i32`)")
