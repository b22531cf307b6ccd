"""Error codes of the `ownership` range: host-side borrows of tensors (BRIEF §6).

Emitted by `tilelang.ownership.host`. One rule per code; each has an explain
file under `tilelang/diagnostics/explain/`.
"""

from tilelang.diagnostics.codes import define

MUT_TENSOR_WITHOUT_PARTITION = define(
    "E0301", "mut-tensor-without-partition",
    "a mutable tensor is passed to a kernel without `.partition(...)`")
# E0302 is deliberately unused: a partition whose tile shape disagrees with the
# kernel's `&mut` parameter (BRIEF §6 rule 2) is a type error, E0216, reported
# by the type checker together with the const generics it infers.
CONFLICTING_BORROWS_IN_LAUNCH = define(
    "E0303", "conflicting-borrows-in-launch",
    "one launch borrows the same tensor twice mutably, or mutably and shared")
MUT_USE_OF_IMMUTABLE = define(
    "E0304", "mut-use-of-immutable",
    "`.partition` or `&mut` of a tensor that is not declared `mut`")
USE_WHILE_IN_FLIGHT = define(
    "E0305", "use-while-in-flight",
    "a tensor is used while a launched kernel that borrows it may still be running")
USE_AFTER_MOVE = define(
    "E0306", "use-after-move",
    "a tensor (or handle, or graph) is used after it was moved")
MOVE_OF_CAPTURED = define(
    "E0307", "move-of-captured",
    "a tensor captured by a live graph is moved or dropped")
HANDLE_DROPPED = define(
    "E0308", "handle-dropped",
    "a launch handle is dropped while its launch may still be running")
CONCURRENT_WRITES = define(
    "E0309", "concurrent-writes",
    "two launches in flight at the same time write the same tensor")
HANDLE_ESCAPES = define(
    "E0310", "handle-escapes",
    "a launch handle or a graph leaves the function that created it")
REF_RETURNED = define(
    "E0311", "reference-returned",
    "a host function returns a reference to a tensor, which the checker cannot follow")
UNSAFE_WRITE_THROUGH_SHARED = define(
    "E0312", "unsafe-write-through-shared-param",
    "a host function launches a kernel whose `unsafe` code writes a `&` reference parameter")
PARTITION_OF_TEMPORARY = define(
    "E0313", "partition-of-temporary",
    "`.partition` of a value that is no tensor variable (a `reshape`, an arithmetic result, a call's "
    "result), or one lent to a parameter that writes it: the writes would go to a temporary that is "
    "dropped")
