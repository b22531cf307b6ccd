"""Error codes of the `types` range (see `codes/__init__.py` for the ranges).

Emitted by the semantic checker (`tilelang.sema`): dtypes, shapes,
broadcasting, operation signatures, host/kernel context, backend limits on
tile shapes, const generic inference.
"""

from tilelang.diagnostics.codes import define

MISMATCHED_DTYPES = define("E0201", "mismatched-dtypes", "operands with different element types and no cast")
SHAPE_MISMATCH = define("E0202", "shape-mismatch", "tile shapes that do not broadcast")
MISMATCHED_TYPES = define("E0203", "mismatched-types", "a value of another type than the one expected")
INVALID_OPERAND = define("E0204", "invalid-operand", "an operator or operation applied to a type it does not accept")
INVALID_CAST = define("E0205", "invalid-cast", "an `as` cast between types that cannot convert")
MMA_MISMATCH = define("E0206", "mma-mismatch", "`mma`/`dot` operands with incompatible shapes or dtypes")
AXIS_OUT_OF_RANGE = define("E0207", "axis-out-of-range", "an axis that is not a constant within the rank")
RESHAPE_COUNT = define("E0208", "reshape-count", "a reshape that changes the number of elements")
NOT_CONSTANT = define("E0209", "not-constant", "a tile dimension that is not a compile-time constant")
HOST_ONLY = define("E0210", "host-only-operation", "a host-only operation used inside a kernel")
KERNEL_ONLY = define("E0211", "kernel-only-operation", "a kernel-only operation used in host code")
TILE_DIM_NOT_POSITIVE = define("E0212", "tile-dim-not-positive", "a tile dimension that is zero or negative")
TILE_TOO_LARGE = define("E0213", "tile-too-large", "a tile with more elements than a tile block can hold")
GENERIC_CONFLICT = define("E0214", "generic-conflict", "two arguments give a const generic different values")
CANNOT_INFER = define("E0215", "cannot-infer-generic", "a const generic that no argument determines")
PARTITION_SHAPE = define("E0216", "partition-shape-mismatch", "a partition whose tile shape disagrees with the kernel parameter")
RANK_MISMATCH = define("E0217", "rank-mismatch", "an index or shape with the wrong number of dimensions")
STORE_SHAPE = define("E0218", "store-shape-mismatch", "a stored tile whose shape differs from the destination tile")
LOAD_UNKNOWN_SHAPE = define("E0219", "load-unknown-shape", "`load()` of a tensor parameter with no own tile and no static shape")
KERNEL_RETURNS = define("E0220", "kernel-returns-value", "a kernel declared with a return type")
INVALID_KERNEL_PARAM = define("E0221", "invalid-kernel-param", "a kernel parameter type that cannot be passed to a kernel")
LITERAL_OUT_OF_RANGE = define("E0222", "literal-out-of-range", "a literal that does not fit its type (an integer past its range, a float that rounds to infinity)")
NO_FIELD = define("E0223", "no-field", "a tuple field or index that does not exist")
UNUSED_OPERATION = define("E0224", "unused-operation", "a kernel call whose operation is never run")
RECURSIVE_DEVICE_FN = define("E0225", "recursive-device-function", "device code that calls itself (device functions are inlined)")
DIVISION_BY_ZERO = define("E0226", "division-by-zero", "integer division or remainder by a constant zero")
CONSTANT_OVERFLOW = define("E0227", "constant-overflow", "integer arithmetic on constants whose result does not fit its type")
HOST_EFFECT_IN_GRAPH = define("E0228", "host-effect-in-graph", "a host statement in a `graph` block, which runs once while recording and is not replayed")
TUNED_TILE_MISUSE = define("E0229", "tuned-tile-misuse", "a tile dimension left to the autotuner (`_`) where no tuner picks it")
NEGATIVE_DIM = define("E0230", "negative-dimension", "a host tensor shape with a constant negative dimension")
ARANGE_RANGE = define("E0231", "arange-out-of-range", "an `arange` whose values do not fit its element type (they would wrap)")
FORMAT_STRING = define("E0232", "format-string", "a `print` format string whose `{}` placeholders and arguments disagree, or with a brace that is no placeholder")
BAD_TOLERANCE = define("E0233", "bad-tolerance", "an `assert_close` tolerance that is negative or NaN")
