"""Error codes of the `codegen` range, E0600-E0699 (see `codes/__init__.py`).

Owned by the NVPTX backend (`tilelang/backend/`) and the CUDA runtime
(`tilelang/runtime/cuda.py`): limits of the GPU that the language itself
does not have, and failures of the CUDA driver. (A failed device `assert` on
the GPU reports E0700, the same code as the interpreter.)
"""

from tilelang.diagnostics.codes import define

# Retired: reported for device `print` (which now runs on the GPU) and for a
# `num_warps` that is not a power of two (which `tilec check` reports first).
GPU_UNSUPPORTED_OP = define(
    "E0601", "gpu-unsupported-op", "an operation that the GPU backend cannot compile", retired=True
)
# Retired: reported for f64 transcendentals and for bf16, f64 max/min and bool
# atomics, which the GPU backend now compiles.
GPU_UNSUPPORTED_DTYPE = define(
    "E0602", "gpu-unsupported-dtype", "an element type that the GPU backend cannot compile for this operation",
    retired=True,
)
GPU_TILE_TOO_LARGE = define(
    "E0603", "gpu-tile-too-large", "a tile too large for one GPU thread block's registers or shared memory"
)
GPU_SCHEDULE_REFUSED = define(
    "E0604", "gpu-schedule-refused",
    "a `TILEC_*` variable set to a value the GPU backend refuses (not one the switch takes, or a schedule known to "
    "compute wrong results)",
)
CUDA_ERROR = define(
    "E0610", "cuda-error", "the CUDA driver reported an error while running a program on the GPU"
)
GPU_ARCH_FEATURE = define(
    "E0605", "gpu-arch-feature",
    "a kernel uses a feature that the target GPU architecture lacks (thread-block clusters before sm_90)",
)
