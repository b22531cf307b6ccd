"""Test-suite configuration: the `.tile` plugin, hypothesis profiles, GPU gating.

- `tileplugin` collects `tests/ui/**.tile` and `tests/run/**.tile` (see tests/README.md).
- hypothesis profiles: `ci` (derandomised, no deadline, 50 examples: the
  default, so a test's pass or fail never depends on the run; the README's
  bare `python -m pytest` ran `dev` when `CI` was unset) and `dev` (random
  examples, 200, the example database: for hunting new failures); pick one
  with HYPOTHESIS_PROFILE. The pool of constants hypothesis takes from the
  project's source is fixed at collection (`freeze_hypothesis_constants`).
- Tests marked `gpu` (or using the `cuda_device` fixture) are skipped cleanly
  when cuda-python finds no CUDA device; the probe runs only if such a test is
  collected, so a CPU-only run never imports cuda-python.
- Every `gpu` test that runs has a time limit (`TILE_GPU_TEST_TIMEOUT` seconds,
  default 120; `@pytest.mark.gpu(timeout=S)` for one test): a SIGALRM fails
  that test with the time it took, so a hang costs one test, not the device
  run. (A hang inside one C call that never returns to Python is left to the
  `timeout` around the whole run.)
- Tests marked `heavy` are heavier variants of a path that a default test
  already covers (more walk shapes, bigger grids, every form of an opt-in
  kernel in the simulator): they run with `TILE_SLOW=1` (the lead's device
  calls and a full `TILE_SLOW=1` run each session do), and are skipped with
  that reason otherwise, so the default run stays within CI's 10 minutes.
- Each xdist worker collects the whole suite; on a fresh checkout worker k of n
  first rewrites the asserts of the k-th of n slices of the test modules into
  pytest's cache (`share_rewriting`), so that each module is rewritten about
  once, not once a worker (~7 CPU-s of a 2-worker run's ~30 of collection).
- Python's cycle collector: off while the modules are collected, then what
  collection made is frozen (`gc.freeze`: never walked again) and the young
  generation is collected every 10,000 net allocations instead of 700, the
  whole heap after 100 collections of the middle one instead of 10
  (`suite_gc`). With the whole suite collected, the collector's repeated
  walks of those objects were about a fifth of a worker's CPU; nothing a
  test checks depends on when it runs (a test that needs a collection calls
  `gc.collect()`). llsim turns it off while a block runs (`llsim_exec`).
  At the session's end pytest's unraisable-exception plugin collects once,
  not five times (`END_COLLECTIONS`): each pass walked a worker's whole heap
  (1.9 s for 750,000 objects after tests/unit, ui and run), seconds of the
  run's wall at the end of every worker; one full collection still runs the
  finalizers it reports on.
- JAX is told not to preallocate 75% of the GPU's memory
  (`XLA_PYTHON_CLIENT_PREALLOCATE=false`) before any test imports it, so the
  tests after a JAX test still find memory.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))  # so `import tileplugin` works in any import mode
if str(_TESTS.parent) not in sys.path:
    sys.path.insert(0, str(_TESTS.parent))  # the checkout, when tilec is not installed

from gpu_probe import cuda_device_count  # noqa: E402
from heavy_gate import skip_unless_slow_run  # noqa: E402

pytest_plugins = ["tileplugin"]

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# the young generation's threshold after collection (CPython's default is 700), and the oldest's: a full
# collection after 100 collections of the middle generation (CPython's 10), each a walk of a worker's whole
# unfrozen heap (hci5: 7 of them took 1.5 of tests/unit + tests/std's 78 CPU-s; at 100 only the explicit ones)
GC_YOUNG = 10_000
GC_OLDEST = 100


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session):  # type: ignore[no-untyped-def]
    """Collection without the cycle collector (`share_rewriting` first), then `suite_gc`."""
    collecting = gc.isenabled()
    gc.disable()
    share_rewriting(session.config)
    yield
    if collecting:
        gc.enable()
    suite_gc()


def share_rewriting(config: pytest.Config, root: Path = _TESTS) -> int:
    """Each xdist worker collects the whole suite, and on a fresh checkout (CI's) each rewrote the asserts of
    every test module itself (pytest caches a rewritten module in `__pycache__`, but the workers start
    together and reach each module at about the same time): ~9 CPU-s a worker of the ~15 its collection took.
    Here worker k of n (k >= 1) first rewrites and caches the k-th of n slices of the test modules (by path, the
    order collection takes them), while worker 0 collects from the first: each module is rewritten about once,
    and a worker finds the others' in the cache (pytest's own check: the source's mtime and size). Only where
    pytest rewrites and writes its cache; pytest's private rewriting functions, so a pytest that moved them
    rewrites as before. Returns the modules rewritten here."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
    if not worker.startswith("gw") or not worker[2:].isdigit() or not count.isdigit():
        return 0
    k, n = int(worker[2:]), int(count)
    if k == 0 or k >= n or sys.dont_write_bytecode or config.getoption("assertmode", "rewrite") != "rewrite":
        return 0
    try:
        from _pytest.assertion import assertstate_key
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, get_cache_dir
    except ImportError:
        return 0
    state = config.stash.get(assertstate_key, None)
    if state is None:
        return 0
    files = sorted((p for p in root.rglob("*.py") if p.name == "conftest.py" or p.name.startswith("test_")),
                   key=lambda p: p.relative_to(root).parts)
    done = 0
    for fn in files[k * len(files) // n:(k + 1) * len(files) // n]:
        cache_dir = get_cache_dir(fn)
        pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            if _read_pyc(fn, pyc, state.trace) is not None:  # (another worker's, or an earlier run's)
                continue
            source_stat, co = _rewrite_test(fn, config)
            _write_pyc(state, co, source_stat, pyc)
        except (OSError, SyntaxError):  # (collection itself reports a module it cannot read)
            continue
        done += 1
    return done


END_COLLECTIONS = 1


def pytest_configure(config: pytest.Config) -> None:
    """`END_COLLECTIONS`: the stash key pytest's own pytester sets (to 0) for
    the same cost; a pytest without it keeps its default."""
    try:
        from _pytest.unraisableexception import gc_collect_iterations_key
    except ImportError:
        return
    config.stash[gc_collect_iterations_key] = END_COLLECTIONS


def suite_gc() -> None:
    """Collect once, freeze what is left (the test modules, their tables, the
    imported project) and raise the young and the oldest generation's thresholds."""
    gc.collect()
    gc.freeze()
    _, older, _ = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, older, GC_OLDEST)


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
    # (derandomize named: where CI is set, a profile derives from hypothesis' own derandomised one)
    settings.register_profile("dev", deadline=None, max_examples=200, derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is a test extra; the plugin works without it
    pass


def freeze_hypothesis_constants() -> bool:
    """Hypothesis draws, now and then, a constant from the source of the
    project's modules (tilelang's), pooled from the modules imported when it
    looks: the pool grew as tests imported more of tilelang, so a derandomised
    test's examples depended on which tests its worker had run before it
    (xdist's distribution, `-k`, the order). The pool is now the one of the
    first look (hypothesis' plugin looks at the end of collection, after every
    test module is imported: the same set in every worker) and never grows.
    False where this hypothesis has no such pool."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:
        return False
    collect = getattr(providers, "_get_local_constants", None)
    if collect is None:
        return False
    if getattr(collect, "frozen", False):
        return True
    pool: list[object] = []

    def first_pool():  # type: ignore[no-untyped-def]
        if not pool:
            pool.append(collect())
        return pool[0]

    first_pool.frozen = True  # type: ignore[attr-defined]
    providers._get_local_constants = first_pool
    return True


freeze_hypothesis_constants()


def pytest_runtest_setup(item: pytest.Item) -> None:
    skip_unless_slow_run(item)
    if item.get_closest_marker("gpu") is not None and cuda_device_count() == 0:
        pytest.skip("needs an NVIDIA GPU (cuda-python found no CUDA device)")


def gpu_test_timeout(item: pytest.Item) -> float | None:
    """Seconds a `gpu` test may take (setup, call and teardown together), or None."""
    marker = item.get_closest_marker("gpu")
    if marker is None:
        return None
    limit = marker.kwargs.get("timeout") or os.environ.get("TILE_GPU_TEST_TIMEOUT") or 120
    return float(limit) if float(limit) > 0 else None


class GpuTestTimeout(Exception):
    """A `gpu` test ran past its limit (raised from the SIGALRM handler)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    limit = gpu_test_timeout(item)
    if (
        limit is None
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise GpuTestTimeout(
            f"{item.nodeid} ran longer than {limit:g} s (TILE_GPU_TEST_TIMEOUT); "
            "stopped so the other GPU tests still run"
        )

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def cuda_device() -> int:
    """Skips the test when there is no CUDA device; else the device count."""
    n = cuda_device_count()
    if n == 0:
        pytest.skip("needs an NVIDIA GPU (cuda-python found no CUDA device)")
    return n


@pytest.fixture
def loads_mode():  # type: ignore[no-untyped-def]
    """PDL on with the "late" trigger and "+loads" (`runtime/cuda_pdl`) for the
    test; the process's previous setting afterwards."""
    from tilelang.runtime import cuda_pdl

    old = (cuda_pdl.ON, cuda_pdl.TRIGGER, cuda_pdl.PREFETCH)
    cuda_pdl.set_pdl(True, "late", "loads")
    yield
    cuda_pdl.set_pdl(*old)
