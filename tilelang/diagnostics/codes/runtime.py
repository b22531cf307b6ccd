"""Error codes of the `runtime` range (see `codes/__init__.py` for the ranges).

E0700-E0709: device-side run-time errors (helper F1: the kernel interpreter).
E0710-E0749: host-side run-time errors (helper F2: `tilelang/runtime/host.py`,
`tilelang/run.py`).
"""

from tilelang.diagnostics.codes import define

# -- device (F1: the kernel interpreter) -------------------------------------
DEVICE_ASSERT = define(
    "E0700", "device-assert-failed", "a device `assert` inside a kernel failed")
KERNEL_UNSUPPORTED = define(
    "E0701", "kernel-construct-unsupported",
    "a kernel uses a construct the IR lowering does not support yet (by `tilec check` where it can, else at launch)")

# -- host runtime (F2) -------------------------------------------------------
HOST_ASSERT = define(
    "E0710", "assertion-failed", "a host `assert` failed")
NOT_CLOSE = define(
    "E0711", "tensors-not-close", "`assert_close` found elements that differ")
NPY_IO = define(
    "E0712", "npy-io-error", "`load_npy` or `save_npy` could not read or write the file")
NPY_FORMAT = define(
    "E0713", "npy-unsupported",
    "`load_npy` read a file that is not a `.npy` array of an element type Tile has")
HOST_SHAPE = define(
    "E0714", "host-shape-mismatch",
    "a host tensor operation got shapes that do not fit (element-wise, `reshape`, `assert_close`)")
HOST_DIV_ZERO = define(
    "E0715", "host-division-by-zero", "an integer division or remainder by zero in host code")
NO_MAIN = define(
    "E0717", "no-main", "`tilec run` found no `fn main()` to run")
HOST_STACK_OVERFLOW = define(
    "E0719", "host-recursion-too-deep", "host functions called each other too deeply (a stack overflow)")
HOST_OUT_OF_MEMORY = define(
    "E0720", "host-out-of-memory", "a host statement needed more memory than the machine could give")
HOST_INDEX = define(
    "E0721", "host-index-out-of-bounds", "a host tensor index, slice or `item` outside the tensor")
HOST_ARANGE_RANGE = define(
    "E0722", "host-arange-out-of-range",
    "a host `arange` whose length, known only at run time, makes values its element type cannot hold")
HOST_FORMAT_STRING = define(
    "E0723", "host-format-string",
    "a `print` format string held in a variable whose `{}` placeholders and arguments disagree (run time)")
HOST_BAD_TOLERANCE = define(
    "E0724", "host-bad-tolerance", "an `assert_close` tolerance, known only at run time, that is negative or NaN")

# -- the sanitizer (`tilec run --sanitize`, `TILE_SANITIZE=1`: interp/sanitize.py) --
BLOCKS_STORE_SAME = define(
    "E0730", "blocks-store-same-element",
    "two blocks of one launch store the same element (found by the sanitizer)")
BLOCK_READS_STORED = define(
    "E0731", "block-reads-stored-element",
    "a block reads or updates an element that another block of the launch stores (sanitizer)")
INFLIGHT_RACE = define(
    "E0732", "in-flight-race",
    "a launch or the host touches memory a launch not yet waited for writes (sanitizer)")
UNSAFE_OUT_OF_BOUNDS = define(
    "E0733", "unsafe-out-of-bounds",
    "an atomic or `store_unchecked` writes outside its tensor (found by the sanitizer)")
LOAD_OUTSIDE_TENSOR = define(
    "E0734", "load-outside-tensor",
    "a warning: a tile load of a `&` tensor lies wholly outside it (found by the sanitizer)")
