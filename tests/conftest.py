"""Test-suite configuration: the `.tile` plugin, hypothesis profiles, GPU gating.

- `tileplugin` collects `tests/ui/**.tile` and `tests/run/**.tile` (see tests/README.md).
- hypothesis profiles: `ci` (derandomised, no deadline, 50 examples; the default
  when `CI` is set) and `dev` (200 examples); pick one with HYPOTHESIS_PROFILE.
- Tests marked `gpu` (or using the `cuda_device` fixture) are skipped cleanly
  when cuda-python finds no CUDA device; the probe runs only if such a test is
  collected, so a CPU-only run never imports cuda-python.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))  # so `import tileplugin` works in any import mode
if str(_TESTS.parent) not in sys.path:
    sys.path.insert(0, str(_TESTS.parent))  # the checkout, when tilec is not installed

pytest_plugins = ["tileplugin"]

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci",
        derandomize=True,
        deadline=None,
        max_examples=50,
        suppress_health_check=[HealthCheck.too_slow],
        print_blob=True,
    )
    settings.register_profile("dev", deadline=None, max_examples=200)
    settings.load_profile(
        os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
    )
except ImportError:  # hypothesis is a test extra; the plugin works without it
    pass


@functools.cache
def cuda_device_count() -> int:
    """The number of CUDA devices cuda-python sees; 0 when there is no driver,
    no device, or no cuda-python (never raises)."""
    if os.environ.get("TILE_NO_GPU"):
        return 0
    try:
        from cuda.bindings import driver as cu
    except Exception:
        try:
            from cuda import cuda as cu  # type: ignore[no-redef]  # cuda-python < 12.6
        except Exception:
            return 0
    try:
        (err,) = cu.cuInit(0)
        if err != cu.CUresult.CUDA_SUCCESS:
            return 0
        err, count = cu.cuDeviceGetCount()
        return int(count) if err == cu.CUresult.CUDA_SUCCESS else 0
    except Exception:
        return 0


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None and cuda_device_count() == 0:
        pytest.skip("needs an NVIDIA GPU (cuda-python found no CUDA device)")


@pytest.fixture
def cuda_device() -> int:
    """Skips the test when there is no CUDA device; else the device count."""
    n = cuda_device_count()
    if n == 0:
        pytest.skip("needs an NVIDIA GPU (cuda-python found no CUDA device)")
    return n
