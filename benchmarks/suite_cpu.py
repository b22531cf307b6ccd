"""Where the default suite's CPU goes, per test, per file and per directory (hci6): a pytest plugin and the
report that reads what it wrote. CPU, not wall: the helpers' machine is shared, and a test's process CPU (user +
system, with the children it waited for: ptxas, nvdisasm, a `tilec` subprocess) moves far less with the load than
its wall does (under a load of 8-10 on 2 cores it still rose ~1.8x: compare runs made side by side, or shares).

    PYTHONPATH=$PWD/benchmarks SUITE_CPU=/tmp/base CI=true HYPOTHESIS_PROFILE=ci TILEC_CACHE_DIR=$(mktemp -d) \\
        python -m pytest -q -n 2 --dist worksteal -p suite_cpu
    python benchmarks/suite_cpu.py /tmp/base [FILES] [TESTS]     # the tables (FILES, TESTS rows: 60, 60)
    python benchmarks/suite_cpu.py /tmp/base /tmp/after --diff   # per file, two runs' CPU side by side

Each process (an xdist worker, or the one process of `-n 0`) writes `<SUITE_CPU>.<worker>.json`: every test's
CPU and wall (setup, call and teardown together) and the process's total, whose difference from the tests' sum
is collection, imports and the end of the session.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import sys
import time
from typing import Any

import pytest

_TESTS: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: Any, nextitem: Any):  # type: ignore[no-untyped-def]
    c0, w0 = _cpu(), time.perf_counter()
    yield
    _TESTS[item.nodeid] = (_cpu() - c0, time.perf_counter() - w0)



def pytest_sessionfinish(session: Any) -> None:
    out = os.environ.get("SUITE_CPU")
    if not out or ("PYTEST_XDIST_WORKER" not in os.environ and not _TESTS):
        return  # (the xdist controller runs no test: its children's CPU is the workers')
    with open(f"{out}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json", "w") as f:
        json.dump({"tests": _TESTS, "total": _cpu()}, f)


def load(prefix: str) -> tuple[dict[str, tuple[float, float]], float]:
    """Every test's (CPU, wall) of a run, and its processes' total CPU."""
    tests: dict[str, tuple[float, float]] = {}
    total = 0.0
    for path in sorted(glob.glob(f"{prefix}.*.json")):
        with open(path) as f:
            d = json.load(f)
        tests.update({k: tuple(v) for k, v in d["tests"].items()})  # type: ignore[misc]
        total += d["total"]
    return tests, total


def by_file(tests: dict[str, tuple[float, float]]) -> tuple[collections.Counter[str], collections.Counter[str]]:
    cpu: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for k, (c, _) in tests.items():
        f = k.split("::")[0]
        cpu[f] += c
        count[f] += 1
    return cpu, count


def report(prefix: str, files: int = 60, top: int = 60) -> None:
    tests, total = load(prefix)
    cpu, count = by_file(tests)
    dirs: collections.Counter[str] = collections.Counter()
    for f, c in cpu.items():
        dirs["/".join(f.split("/")[:2])] += c
    print(f"{len(tests)} tests: {sum(cpu.values()):.1f} CPU-s in tests, {total:.1f} in the processes")
    for d, c in dirs.most_common():
        print(f"  {c:8.1f}  {d}")
    print("files (CPU-s, tests, file):")
    for f, c in cpu.most_common(files):
        print(f"  {c:8.1f} {count[f]:5d}  {f}")
    print("tests:")
    for k, (c, _) in sorted(tests.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"  {c:8.2f}  {k}")


def diff(a: str, b: str) -> None:
    ca, _ = by_file(load(a)[0])
    cb, _ = by_file(load(b)[0])
    print(f"{'before':>8} {'after':>8} {'change':>8}  file")
    for f in sorted(set(ca) | set(cb), key=lambda f: -(ca[f] - cb[f])):
        if abs(ca[f] - cb[f]) >= 0.05:
            print(f"{ca[f]:8.1f} {cb[f]:8.1f} {cb[f] - ca[f]:+8.1f}  {f}")
    print(f"{sum(ca.values()):8.1f} {sum(cb.values()):8.1f} {sum(cb.values()) - sum(ca.values()):+8.1f}  (all)")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--diff"]
    if "--diff" in sys.argv:
        diff(args[0], args[1])
    else:
        report(args[0], *(int(a) for a in args[1:3]))
