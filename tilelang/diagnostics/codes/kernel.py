"""Error codes of the `kernel` range: what a kernel may do with its tensors
(BRIEF §6 rule 8). Emitted by `tilelang.ownership.kernel`.
"""

from tilelang.diagnostics.codes import define

STORE_THROUGH_SHARED = define(
    "E0401", "store-through-shared",
    "a store through a `&` tensor parameter or a read-only view of one")
NESTED_TILE_OUTSIDE_OWN = define(
    "E0402", "nested-tile-outside-own",
    "a nested partition of a `&mut` parameter does not tile the block's own tile")
TILE_INDEX_OUT_OF_RANGE = define(
    "E0403", "tile-index-out-of-range",
    "a tile index is outside the partition's tiles (at compile time or at launch)")
MUT_PARAM_ESCAPES = define(
    "E0404", "mut-param-escapes",
    "a `&mut` tensor parameter escapes: returned, aliased, or stored in a variable")
UNSAFE_OP_OUTSIDE_UNSAFE = define(
    "E0405", "unsafe-op-outside-unsafe",
    "`atomic_add`, `atomic_max`, `atomic_min` or `store_unchecked` outside an `unsafe` block")
MUT_PARAM_AS_SHARED = define(
    "E0406", "mut-param-as-shared",
    "a `&mut` tensor parameter passed where a `&` tensor is expected")
UNBOUNDED_TILE_INDEX = define(
    "E0407", "unbounded-tile-index",
    "a nested tile index cannot be bounded from loop headers, constants and `block_id`")
MUT_PARAM_OUTSIDE_OWN = define(
    "E0408", "mut-param-outside-own-tile",
    "a `&mut` parameter is read outside the block's own tile (`b.load_like(a)`, another tile shape)")
LAST_BLOCK_PLACEMENT = define(
    "E0409", "last-block-placement",
    "`last_block(axis)` or `z.group()` where the checker cannot order it: not the whole condition "
    "of an `if` that ends the kernel's body, or a group read outside that `if`")
LAST_BLOCK_VARYING = define(
    "E0410", "last-block-varying",
    "inside `if last_block(axis) { .. }`, a value that may differ between the blocks of the group")
GROUP_TILE_MISUSE = define(
    "E0411", "group-tile-misuse",
    "a `&mut` parameter used both as a block's own tile and as the group's tile of "
    "`if last_block(axis) { .. }`")
QUEUE_PLACEMENT = define(
    "E0412", "queue-placement",
    "`queue(axis)` (or `tiles(axis)`) other than as the range of one `for` at the top level of a "
    "kernel's body, or a kernel with a queue (a tile walk) that a block may leave before its end "
    "(`return`, `break`, `last_block`)")
OWN_TILE_OUTSIDE_QUEUE = define(
    "E0413", "own-tile-outside-queue",
    "in a kernel with `for s in queue(axis)` (or `tiles(axis)`), a `&mut` parameter named outside "
    "that loop, where no tile is the block's")
QUEUE_WORKER_INDEX = define(
    "E0414", "queue-worker-index",
    "inside `for s in queue(axis)` (or `tiles(axis)`), `block_id(axis)` or `num_blocks(axis)`: the "
    "pulling (walking) block's position, not the tile's")
CLUSTER_PLACEMENT = define(
    "E0415", "cluster-exchange-placement",
    "`cluster_gather(..)` where the checker cannot prove that every block of the cluster reaches it "
    "exactly once: not the whole initializer of a `let` at the top level of a kernel's body, in a "
    "kernel without `#[cluster(..)]`, or in a kernel with `return` or a tile queue")
UNSAFE_WRITE_OWN_TILE = define(
    "E0416", "unsafe-write-own-tile",
    "an `unsafe` atomic or `store_unchecked` on a `&mut` parameter: its index is an element of the "
    "whole tensor, so it reaches the tiles that other blocks store to")
READ_OF_UNSAFE_WRITTEN = define(
    "E0417", "read-of-unsafe-written",
    "a kernel reads a `&` tensor that its own `unsafe` code writes (an atomic or `store_unchecked`): "
    "the other blocks write it while a block reads it")
MIXED_ATOMICS = define(
    "E0418", "mixed-atomics",
    "atomics of different kinds (`atomic_add`, `atomic_max`, `atomic_min`), or an atomic and "
    "`store_unchecked`, update one tensor where the checker cannot tell that they touch different "
    "elements: they do not commute")
