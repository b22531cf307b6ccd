"""Error codes of the `api` range (see `codes/__init__.py` for the ranges).

E08xx: failures only the Python API can have (a Python value where a Tile
program has a typed expression: an object that is not an array, an array
on the wrong device, a graph used out of order, ...). Each code's
explanation carries Python examples (```python blocks) instead of Tile
ones: the first raises a `tilelang.APIError` with exactly that code, the
second is the fixed call. Where a language code describes the same mistake
(an element type, a rank, a generic that cannot be inferred), the API uses
that code instead, so a Python caller and a Tile caller see one code.
"""

from tilelang.diagnostics.codes import define

NOT_AN_ARRAY = define(
    "E0800", "api-not-an-array",
    "a tensor parameter was given a Python value that is neither an array nor a partition")
UNUSABLE_ARRAY = define(
    "E0801", "api-unusable-array",
    "an array the API cannot use in place (its byte order, a CPU bf16 tensor, its device)")
NOT_CONTIGUOUS = define(
    "E0802", "api-array-not-contiguous",
    "an array argument is not one contiguous row-major block")
READ_ONLY_ARRAY = define(
    "E0803", "api-array-read-only", "a kernel writes an array that is read-only")
MIXED_DEVICES = define(
    "E0804", "api-mixed-devices",
    "the arrays of one call, or the operations of one graph, are on different devices")
HOST_ARRAY_EXPECTED = define(
    "E0805", "api-host-array-expected", "a host function was given an array in GPU memory")
UNKNOWN_DEVICE = define(
    "E0806", "api-unknown-device", "a device name other than \"cpu\", \"gpu\" or \"auto\"")
NO_GPU = define(
    "E0807", "api-no-gpu", "a module was asked to run on the GPU where there is none")
BAD_GENERIC = define(
    "E0808", "api-bad-generic",
    "an explicit generic names no generic of the kernel, or gives the wrong kind of value")
GRAPH_MISUSE = define(
    "E0809", "api-graph-misuse",
    "a `tilelang.graph()` recorded twice, nested, or replayed while it is recording")
ARRAY_CHANGED = define(
    "E0810", "api-array-changed",
    "an array got other memory, another shape or another element type after an operation was built on it")
TORCH_OP_SPEC = define(
    "E0811", "api-torch-op-spec",
    "`tilelang.torch_op` was given tiles or outputs that do not fit the kernel")
NEEDS_TORCH = define(
    "E0812", "api-needs-torch", "`tilelang.torch_op` needs PyTorch, which is not installed")
SOURCE_NOT_TEXT = define(
    "E0813", "api-source-not-text", "`tilelang.compile` was given something other than a `str`")
UNREADABLE_FILE = define(
    "E0814", "api-unreadable-file", "`tilelang.load` could not read the file")
NO_SUCH_NAME = define(
    "E0815", "api-no-such-name", "a module has no kernel or host function of that name")
NOT_CALLED = define(
    "E0816", "api-not-called",
    "`.sync()`, `.launch()` or `.wait()` asked of a kernel or host function itself, not of a call of it")
