"""A digest of everything llsim computes, per test: for checking that a change
to the simulator (a speed-up) keeps its semantics exactly, on two checkouts.

As a pytest plugin it wraps `llsim.run_block`: after each simulated block it
hashes every thread's registers (name, NumPy type and bytes; NaN payloads and
signed zeros included), every buffer's bytes, and the type and message of any
exception a block raises (races, deadlocks, faults); a test's digest also
takes its own outcome. `LLSIM_DIGEST_SEED=N` makes the tests' unseeded
`np.random.default_rng()` draws seeded (test_sim, test_sm80, ... use fresh
inputs each run). Run the same tests in both checkouts, then compare:

    PYTHONPATH=$PWD:$PWD/benchmarks LLSIM_DIGEST=/tmp/a.json LLSIM_DIGEST_SEED=1 \\
        python -m pytest -p llsim_digest -p no:cacheprovider tests/backend/test_sim.py ...
    (the same in the other checkout with LLSIM_DIGEST=/tmp/b.json)
    python benchmarks/llsim_digest.py /tmp/a.json /tmp/b.json

Slow (every register of every thread of every block is hashed: ~3x a run).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

import numpy as np
import pytest

_DIGESTS: dict[str, str] = {}
_CURRENT: list[Any] = [None]


def _canon(v: Any, pending: Any) -> Any:
    if isinstance(v, np.generic):
        return (type(v).__name__, v.tobytes())
    if isinstance(v, tuple):
        return tuple(_canon(x, pending) for x in v)
    if pending is not None and isinstance(v, pending):
        return ("pending", _canon(v.value, pending), v.t)
    if isinstance(v, float):
        return ("float", np.float64(v).tobytes())
    return (type(v).__name__, v if isinstance(v, (int, str)) else repr(v))


def _wrap() -> None:
    llsim = sys.modules.get("llsim")
    if llsim is None or getattr(llsim, "_digest_wrapped", False):
        return
    llsim._digest_wrapped = True
    run_block = llsim.run_block

    def digest_run_block(prog: Any, mem: Any, base: Any, threads: int) -> None:
        h = _CURRENT[0]
        own = mem.regs_out is None  # (a test that records the registers keeps its list)
        if own:
            mem.regs_out = []
        start = len(mem.regs_out)
        try:
            run_block(prog, mem, base, threads)
        except BaseException as e:
            if h is not None:
                h.update(repr((type(e).__name__, str(e))).encode())
            raise
        finally:
            blocks = mem.regs_out[start:]
            if own:
                mem.regs_out = None
        if h is None:
            return
        pending = getattr(llsim, "_Pending", None)
        for blk in blocks:
            for t in sorted(blk):
                regs = blk[t]
                h.update(repr(sorted((k, _canon(v, pending)) for k, v in regs.items() if k is not None)).encode())
        for key in sorted(mem.bufs, key=repr):
            h.update(repr(key).encode() + bytes(mem.bufs[key]))

    llsim.run_block = digest_run_block


def pytest_configure(config: Any) -> None:
    seed = os.environ.get("LLSIM_DIGEST_SEED")
    if seed is not None:
        fresh = np.random.default_rng

        def seeded(*a: Any, **k: Any) -> Any:
            return fresh(*a, **k) if (a or k) else fresh(int(seed))
        np.random.default_rng = seeded  # type: ignore[assignment]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    _wrap()
    _CURRENT[0] = hashlib.sha256()
    outcome = yield
    if outcome.excinfo is not None:
        _CURRENT[0].update(repr((outcome.excinfo[0].__name__, str(outcome.excinfo[1])[:2000])).encode())
    _DIGESTS[item.nodeid] = _CURRENT[0].hexdigest()
    _CURRENT[0] = None


def pytest_sessionfinish(session: Any) -> None:
    with open(os.environ.get("LLSIM_DIGEST", "llsim_digest.json"), "w") as f:
        json.dump(_DIGESTS, f, indent=0, sort_keys=True)


def main(a: str, b: str) -> int:
    """Compare two digest files: 0 when every test both ran has one digest."""
    da, db = json.load(open(a)), json.load(open(b))
    both = sorted(set(da) & set(db))
    differ = [k for k in both if da[k] != db[k]]
    print(f"{len(both)} tests in both, {len(differ)} differ")
    for k in differ:
        print("differs:", k)
    for k in sorted(set(da) ^ set(db)):
        print("in one only:", k)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
