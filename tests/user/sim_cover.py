"""Which user programs' simulations another default-simulated program covers
(`userprog.SIM_COVERED`): `python tests/user/sim_cover.py DURATIONS`, where
DURATIONS is the output of `pytest --durations=0 -k simulated` over
tests/user/test_user_programs*.py (each program's simulation cost).

Each program simulated by default runs on the interpreter with every launch also
compiled for the archs its test simulates, recording (a) the arcs (line to
line, by file) of tilelang/backend that compile takes and (b) the forms of
the LLVM instructions it emits (registers and numbers left out). Then, from
the costliest program down, a program whose arcs and forms all are some
other still-kept program's is dropped (but the few whose point is the
values, `VALUES`, and those under `MIN_COST`); each dropped one is printed with the
kept programs that cover it (greedily). Not a test: it takes ~2 minutes."""

from __future__ import annotations

import importlib
import io
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for _dir in (ROOT, ROOT / "tests", ROOT / "tests" / "backend", ROOT / "tests" / "user"):
    sys.path.insert(0, str(_dir))

import numpy as np  # noqa: E402

import tilelang.run as run  # noqa: E402
from tilelang.backend import lower_gpu  # noqa: E402
from tilelang.backend.facts import TensorFacts  # noqa: E402
from tilelang.backend.llvm import emit_llvm_text  # noqa: E402
from tilelang.ir import nodes as ir  # noqa: E402
from tilelang.runtime.cpu import CpuDevice  # noqa: E402

BACKEND = str(ROOT / "tilelang" / "backend")
MODULES = tuple(sorted(p.stem for p in (ROOT / "tests" / "user").glob("test_user_programs*.py")))
MIN_COST = 0.15  # seconds of simulation under which a program stays whole anyway (1.5 until 2026-12-07 17:16
# session, wall then: the lead lowered it for hci5, whose costs were process CPU of a -n 0 run)
# programs whose point is the values (NaN, infinities, number and math edges): the same instructions on other
# values are not the same check
VALUES = ("p01_nan_inf", "u15_number_edges", "p16_math_edges")
# programs whose point is a path of the simulated device's runtime, which the arcs (tilelang/backend) leave out:
# m10 is the only default simulation of a `graph { }` replayed
RUNTIME = ("m10_power_iteration_graph",)


def _form(line: str) -> str | None:
    """An LLVM instruction's form: registers and numbers left out; None for what is not an instruction."""
    line = line.strip()
    if not line or line.endswith(":") or line.startswith((";", "}", "define", "declare", "!", "attributes", "target")):
        return None
    line = re.sub(r"^%[\w.$]+ = ", "", line)
    line = re.sub(r"%[\w.$]+", "%", line)
    line = re.sub(r"\b(0x[0-9A-Fa-f]+|-?\d+(\.\d+)?(e[+-]?\d+)?)\b", "#", line)
    return re.sub(r", !.*$", "", line)


class _Recorder(CpuDevice):
    """The CPU device, each launch's kernel also compiled for `archs` with the backend's arcs traced."""

    name = "cover"
    archs: tuple[str, ...] = ()
    arcs: set[tuple[str, int, int]] = set()
    forms: set[str] = set()

    def _trace(self, frame: Any, event: str, arg: Any) -> Any:
        if not frame.f_code.co_filename.startswith(BACKEND):
            return None
        file, last = frame.f_code.co_filename, [frame.f_lineno]

        def line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                self.arcs.add((file, last[0], frame.f_lineno))
                last[0] = frame.f_lineno
            return line

        return line

    def run(self, prepared: Any, grid: tuple[int, ...], args: list[Any], stream: Any = None, span: Any = None) -> None:
        facts = {p.name: TensorFacts(True, tuple(d % 16 == 0 for d in np.asarray(a).shape))
                 for p, a in zip(prepared.params, args, strict=True) if isinstance(p, ir.TensorParam)}
        for arch in self.archs:
            sys.settrace(self._trace)
            try:
                gk = lower_gpu(prepared, arch, facts)
                text = emit_llvm_text(gk, gk.facts)[0]
            finally:
                sys.settrace(None)
            self.forms |= {f for f in map(_form, text.splitlines()) if f}
        super().run(prepared, grid, args, stream, span)


def _default_simulations(test: Any) -> dict[str, list[str]]:
    """Program -> archs of a module's simulation test (`userprog.program_suite`'s), for the programs it
    simulates in the default run (the `heavy` ones left out: they cover nothing)."""
    free = dict(zip(test.__code__.co_freevars, (c.cell_contents for c in test.__closure__ or ()), strict=True))
    names = set()
    for mark in test.pytestmark:
        for p in mark.args[1] if mark.name == "parametrize" else ():
            if isinstance(p, str):
                names.add(p)
            elif not any(x.name == "heavy" for x in p.marks):
                names.add(p.values[0])
    return {n: a for n, a in free["archs"].items() if n in names}


def covered(seen: Mapping[str, tuple[set[Any], ...]], n: str, by: set[str]) -> bool:
    """Whether the programs `by` together hold each of program `n`'s sets (arcs, forms, ..)."""
    return all(mine <= set().union(*(seen[m][i] for m in by)) for i, mine in enumerate(seen[n]))


def greedy_cover(seen: Mapping[str, tuple[set[Any], ...]], n: str, keep: set[str]) -> tuple[str, ...]:
    """Kept programs that together hold program `n`'s sets, taken greedily: each the one that holds the most of
    what is left (ties to the first by name)."""
    left, by = [set(x) for x in seen[n]], []
    while any(left):
        best = max(sorted(keep), key=lambda m: sum(len(x & y) for x, y in zip(left, seen[m], strict=True)))
        by.append(best)
        left = [x - y for x, y in zip(left, seen[best], strict=True)]
    return tuple(by)


def durations(path: str, test: str) -> dict[str, float]:
    """Program -> the seconds its cases of `test` took (summed over archs: `[name-sm_80]`), read from a pytest
    `--durations=0 -vv` report."""
    costs: dict[str, float] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = re.match(rf"([\d.]+)s \w+\s+\S+::{test}\[(\w+)(?:-sm_\w+)?\]", line)
        if m:
            costs[m.group(2)] = costs.get(m.group(2), 0.0) + float(m.group(1))
    return costs


def cover(costs: dict[str, float]) -> dict[str, tuple[str, ...]]:
    """Program -> the kept programs covering it, for every program dropped."""
    from userprog import DIR, SIM_COVERED

    seen: dict[str, tuple[set[tuple[str, int, int]], set[str]]] = {}
    for mod in MODULES:
        m = importlib.import_module(mod)
        test = getattr(m, "test_the_simulated_gpu_gives_the_same_tensors", None)
        if test is None:
            continue
        archs = _default_simulations(test)
        for name, a in archs.items():
            out = io.StringIO()
            dev = _Recorder(lambda s, out=out: out.write(s + "\n"))
            dev.archs, dev.arcs, dev.forms = tuple(a), set(), set()
            run.make_device = lambda choice, o, dev=dev: dev  # type: ignore[assignment]
            run.execute(str(DIR / f"{name}.tile"), "cpu", out=out)
            seen[name] = (dev.arcs, dev.forms)
    keep = set(seen)
    covering = {c for cs in SIM_COVERED.values() for c in cs}  # (already `heavy` programs' cover: kept)
    for n in sorted(seen, key=lambda n: -costs.get(n, 0.0)):
        if costs.get(n, 0.0) >= MIN_COST and n not in VALUES + RUNTIME and n not in covering \
                and covered(seen, n, keep - {n}):
            keep.discard(n)
    return {n: greedy_cover(seen, n, keep)
            for n in sorted(set(seen) - keep, key=lambda n: -costs.get(n, 0.0))}


def main(report: str) -> None:
    costs = durations(report, "test_the_simulated_gpu_gives_the_same_tensors")
    for name, by in cover(costs).items():
        print(f"    {name!r}: {by!r},  # {costs.get(name, 0.0):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1])
