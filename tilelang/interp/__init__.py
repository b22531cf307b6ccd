"""The CPU reference interpreter for Tile IR: it DEFINES what a kernel means.

API (used by the host runtime, `tilelang/runtime/cpu.py`, and the tests):

    from tilelang.interp import run_kernel
    run_kernel(kernel, grid, args, out=None, mode="auto")

- `kernel`: an `ir.Kernel` (from `tilelang.ir.lower.lower_kernel`, or built by
  hand with `tilelang.ir.builder.Builder`).
- `grid`: the number of blocks per grid axis, a tuple of `kernel.grid_rank`
  ints (shorter tuples are padded with 1s). For `&mut` partitions this is
  `ceil(dims[d] / tile_shape[d])` per axis; the caller computes it.
- `args`: one value per `kernel.params`, positionally or as a mapping by
  parameter name. A tensor is a C-contiguous NumPy array of the param's
  `dtype.np_dtype` (bf16: float32 holding bf16-rounded values) and rank; the
  interpreter reads it and writes `&mut`/atomic/unchecked stores IN PLACE. A
  `&mut` param gets the WHOLE partitioned tensor, not the tile. A scalar is a
  Python or NumPy number (converted to the param's dtype like a constant).
- `out`: where device `print` lines go (a `str -> None` callable; default
  `sys.stdout`, one line per executing block).
- `mode`: "block" runs blocks one at a time in row-major grid order (the
  definition); "vector" runs chunks of blocks at once with NumPy
  (`vector.py`, several times faster, with the same results, printed lines
  and assert errors for every kernel whose blocks do not read what other
  blocks write); "auto" (default) picks "vector" unless the grid has one
  block, or the kernel asserts and writes more than `vector.SNAPSHOT_BYTES`
  (a chunk that fails an assert is rolled back and replayed block by block).
  The environment variable `TILE_INTERP_MODE=block|vector` overrides "auto"
  (e.g. `TILE_INTERP_MODE=block tilec run ...` to debug block by block).
- Raises `TileError` (code E0700, primary label at the `assert`) when a device
  `assert` fails; the launch stops at the first failing block (blocks run in
  row-major grid order). Raises `ValueError` for arguments that do not fit the
  kernel (a caller bug: the host runtime checks launch facts before calling).

The numeric semantics are those documented in `tilelang/ir/nodes.py`;
`tilelang.interp.numeric` implements them op by op (keyed by IR opcode names).
"""

from tilelang.interp.machine import run_kernel
from tilelang.interp.numeric import round_bf16

__all__ = ["round_bf16", "run_kernel"]
