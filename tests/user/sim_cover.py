"""Which user programs' simulations other default-simulated programs cover
(`userprog.SIM_COVERED`): `python tests/user/sim_cover.py DURATIONS`, where
DURATIONS is the output of `pytest --durations=0 -k simulated` over
tests/user/test_user_programs*.py (each program's simulation cost; a
`benchmarks/suite_cpu.py` run's CPU written in that form serves too).

Each program simulated by default, and each of `SIM_COVERED`, runs on the
interpreter with every launch also compiled for the archs its test simulates,
recording (a) the arcs (line to line, by file) of tilelang/backend that compile
takes and (b) the forms of the LLVM instructions it emits (registers and
numbers left out). The default simulations kept are then the cheapest set
found (a weighted greedy set cover, cost by DURATIONS, then pruned costliest
first) whose arcs and forms hold every program's, `SIM_COVERED`'s included;
kept whatever the cover: those whose point is the values (`VALUES`), a path of
the runtime (`RUNTIME`), those under `MIN_COST`, and those whose simulation is
their kernels' one default GPU compile (no default PTX test: `PTX_COVERED`'s
and the modules' `heavy_ptx`). Each program left out (newly, or of
`SIM_COVERED`) is printed with the kept programs that cover it (greedily); an
arc or form no default simulation takes (code moved since a cover was measured)
is printed too, and left out. Not a test: ~10 minutes here (2 cores, shared)."""

from __future__ import annotations

import collections
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
VALUES = ("p01_nan_inf", "u15_number_edges", "p16_math_edges", "n12_loss_scaling_clip_norm",  # (n12's overflow skip,
           "q09_compensated_dot2", "a11_kahan_sum", "a09_amp_adamw_skip_step")  # the compensated sums, AMP's skip)
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


def _marked(test: Any) -> list[tuple[tuple[Any, ...], bool]]:
    """A `program_suite` test's parameters (the values) and whether each is default (not `heavy`)."""
    out = []
    for mark in test.pytestmark:
        for p in mark.args[1] if mark.name == "parametrize" else ():
            if hasattr(p, "marks"):
                out.append((tuple(p.values), not any(x.name == "heavy" for x in p.marks)))
            else:
                out.append((p if isinstance(p, tuple) else (p,), True))
    return out


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
        if not any(x & y for x, y in zip(left, seen[best], strict=True)):
            break  # (what is left no kept program holds)
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


def cover(costs: dict[str, float]) -> tuple[dict[str, tuple[str, ...]], set[tuple[str, Any]]]:
    """Program -> the kept programs covering it, for every program left out; and the arcs and forms no default
    simulation takes."""
    from userprog import DIR, PTX_COVERED, SIM_COVERED

    seen: dict[str, tuple[set[tuple[str, int, int]], set[str]]] = {}
    default: set[str] = set()
    ptx_default: set[str] = set()
    for mod in MODULES:
        m = importlib.import_module(mod)
        ptx = getattr(m, "test_the_ptx_assembles", None)
        ptx_default |= {v[0] for v, d in _marked(ptx) if d} if ptx is not None else set()
        test = getattr(m, "test_the_simulated_gpu_gives_the_same_tensors", None)
        if test is None:
            continue
        archs = _default_simulations(test)
        default |= set(archs)
        free = dict(zip(test.__code__.co_freevars, (c.cell_contents for c in test.__closure__ or ()), strict=True))
        # (the default programs first: the first compile in the process takes the backend modules' import-time
        # arcs, which a covered program's must not be alone in holding)
        for name, a in {**archs, **{n: a for n, a in free["archs"].items() if n in SIM_COVERED}}.items():
            out = io.StringIO()
            dev = _Recorder(lambda s, out=out: out.write(s + "\n"))
            dev.archs, dev.arcs, dev.forms = tuple(a), set(), set()
            run.make_device = lambda choice, o, dev=dev: dev  # type: ignore[assignment]
            run.execute(str(DIR / f"{name}.tile"), "cpu", out=out)
            seen[name] = (dev.arcs, dev.forms)
    els = {n: {(0, x) for x in v[0]} | {(1, x) for x in v[1]} for n, v in seen.items()}
    orphans = set().union(*els.values()) - set().union(*(els[n] for n in default))
    want = set().union(*els.values()) - orphans
    forced = {n for n in default if costs.get(n, 0.0) < MIN_COST or n in VALUES + RUNTIME or n in PTX_COVERED
              or n not in ptx_default}
    keep = set(forced)
    left = want - set().union(*(els[n] for n in keep))
    while left:  # the most of what is left a second of simulation
        best = max(sorted(default - keep), key=lambda n: len(els[n] & left) / max(costs.get(n, 0.0), 0.01))
        keep.add(best)
        left -= els[best]
    held = collections.Counter(e for n in keep for e in els[n] & want)
    for n in sorted(keep - forced, key=lambda n: -costs.get(n, 0.0)):  # a kept program the others now cover
        if all(held[e] >= 2 for e in els[n] & want):
            keep.discard(n)
            held.subtract(els[n] & want)
    mine = {n: (v[0] - {x for i, x in orphans if i == 0}, v[1] - {x for i, x in orphans if i == 1})
            for n, v in seen.items()}
    return ({n: greedy_cover(mine, n, keep) for n in sorted(set(seen) - keep, key=lambda n: -costs.get(n, 0.0))},
            orphans)


def main(report: str) -> None:
    costs = durations(report, "test_the_simulated_gpu_gives_the_same_tensors")
    dropped, orphans = cover(costs)
    for name, by in dropped.items():
        print(f"    {name!r}: {by!r},  # {costs.get(name, 0.0):.1f} s")
    for e in sorted(orphans, key=str):
        print(f"# no default simulation takes {e}")


if __name__ == "__main__":
    main(sys.argv[1])
