"""Which user programs' default PTX tests other programs' default PTX tests cover (`userprog.PTX_COVERED`):
`python tests/user/ptx_cover.py DURATIONS`, where DURATIONS is the output of `pytest --durations=0 -k ptx`
over tests/user/test_user_programs*.py with an empty compile cache (`TILEC_CACHE_DIR=$(mktemp -d)`: each
test's cost as a fresh CI runner pays it).

Each default `test_the_ptx_assembles[name-arch]` is run as the test runs it (`tilec emit --stage ptx` for
its arch, and for sm_90a of a program on both archs the sm_80 emission its check compares), recording (a) the
arcs (line to line, by file) of tilelang/backend the emissions take, (b) the forms of the LLVM instructions
each emission hands to NVPTX, by arch, (c) the forms of the PTX it gets back, by arch, and (d) the forms of
the PTX the test assembles, by ptxas's arch (forms: registers and numbers left out, `userprog.ptx_form`;
shared memory by its size's band, which ptxas bounds). Then, from the costliest program down, a program
simulated in the default run (its kernels' lowering and LLVM emission stay in a default test: only NVPTX and
ptxas are left to the cover) whose default PTX tests' arcs and forms all are some other still-kept programs'
default PTX tests' is dropped (not the programs a test's `ptx_refused` names, nor those `SIM_COVERED` or an
earlier `PTX_COVERED` entry keeps as a cover); each dropped one is printed with the kept programs that cover
it (greedily). Not a test: ~6 minutes with an empty compile cache."""

from __future__ import annotations

import importlib
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for _dir in (ROOT, ROOT / "tests", ROOT / "tests" / "backend", ROOT / "tests" / "user"):
    sys.path.insert(0, str(_dir))

import tilelang.backend as backend  # noqa: E402
from sim_cover import _default_simulations  # noqa: E402  (program -> archs of the default simulations)
from sim_cover import _form as _llvm_form  # noqa: E402
from sim_cover import covered, durations, greedy_cover  # noqa: E402  (the cover's steps, shared)

BACKEND = str(ROOT / "tilelang" / "backend")
MODULES = tuple(sorted(p.stem for p in (ROOT / "tests" / "user").glob("test_user_programs*.py")))

Sets = tuple[set[Any], set[Any], set[Any], set[Any]]


def ptx_form(line: str) -> str | None:
    """A PTX line's form: registers, labels, the kernel's own names and numbers left out (a static shared
    array's size by its band: ptxas bounds it); None for comments, blank lines and the header."""
    line = line.split("//", 1)[0].strip()
    if not line or line.startswith((".version", ".target", ".address_size")):
        return None
    if line.startswith((".visible", ".entry", ".func", ".globl")) or line.endswith("("):
        return re.sub(r"(\.entry|\.func|\.globl)\s+\w+", r"\1 _", line)
    band = ""
    if m := re.match(r".*\.shared\b.*\[(\d+)\]", line):
        band = f" ({int(m.group(1)) // 16384 * 16} KiB+)"
    line = re.sub(r"\b\w+_param_\d+\b", "param", line)
    line = re.sub(r"\$L\w+", "$L", line)
    line = re.sub(r"%(?!tid|ntid|ctaid|nctaid|laneid|warpid|clock|globaltimer|smid|nsmid|cluster)[a-z]+\d+", "%", line)
    line = re.sub(r"\b(0[fFdD][0-9A-Fa-f]+|0x[0-9A-Fa-f]+|-?\d+(\.\d+)?(e[+-]?\d+)?)\b", "#", line)
    return line + band


def _default_ptx_tests(test: Any) -> tuple[list[tuple[str, str]], set[str], set[tuple[str, str]]]:
    """A module's default (name, arch) PTX tests, its `twins` and its refused pairs (`program_suite`'s)."""
    free = dict(zip(test.__code__.co_freevars, (c.cell_contents for c in test.__closure__ or ()), strict=True))
    out = []
    for mark in test.pytestmark:
        for p in mark.args[1] if mark.name == "parametrize" else ():
            if not hasattr(p, "marks"):
                out.append(p)
            elif not any(x.name == "heavy" for x in p.marks):
                out.append(tuple(p.values))
    return out, set(free["twins"]), set(free["refused"])


def record(name: str, arch: str, twin: bool) -> Sets:
    """(arcs, LLVM forms by arch, PTX forms by arch, assembled PTX forms by arch) of one default PTX test."""
    from userprog import ARCH_SPECIFIC_PTX, emit_ptx

    arcs: set[tuple[str, int, int]] = set()
    llvm: set[tuple[str, str]] = set()

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if not frame.f_code.co_filename.startswith(BACKEND):
            return None
        file, last = frame.f_code.co_filename, [frame.f_lineno]

        def line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                arcs.add((file, last[0], frame.f_lineno))
                last[0] = frame.f_lineno
            return line

        return line

    real = backend.emit_llvm_text
    ptx: set[tuple[str, str]] = set()
    assembled: set[tuple[str, str]] = set()
    archs = [arch] + (["sm_80"] if arch == "sm_90a" and twin else [])
    for a in archs:
        def emit(*args: Any, a: str = a, **kw: Any) -> Any:
            text, abi = real(*args, **kw)
            llvm.update((a, f) for f in map(_llvm_form, text.splitlines()) if f)
            return text, abi

        backend.emit_llvm_text = emit
        with tempfile.TemporaryDirectory() as d:
            sys.settrace(trace)
            try:
                r = emit_ptx(name, a, Path(d))
            finally:
                sys.settrace(None)
                backend.emit_llvm_text = real
            if a != arch and r.returncode != 0:  # (the twin check's sm_80 emission may be refused: not the same)
                continue
            assert r.returncode == 0, (name, a, r.stderr)
            forms = {(a, f) for p in sorted(Path(d).glob("*.ptx")) for f in map(ptx_form, p.read_text().splitlines()) if f}
            ptx |= forms
            if a == arch:
                assembled |= {("ptxas " + a, f) for _, f in forms}
    assert not twin or arch != "sm_90a" or name in ARCH_SPECIFIC_PTX or \
        {f for a, f in ptx if a == "sm_80"} == {f for a, f in ptx if a == "sm_90a"}, name
    return arcs, llvm, ptx, assembled


def cover(costs: dict[str, float]) -> dict[str, tuple[str, ...]]:
    """Program -> the kept programs covering it, for every program dropped."""
    from userprog import PTX_COVERED, SIM_COVERED

    seen: dict[str, Sets] = {}
    simulated: set[str] = set()
    pinned: set[str] = {c for cs in (*SIM_COVERED.values(), *PTX_COVERED.values()) for c in cs}
    for mod in MODULES:
        m = importlib.import_module(mod)
        test = getattr(m, "test_the_ptx_assembles", None)
        if test is None:
            continue
        tests, twins, refused = _default_ptx_tests(test)
        pinned |= {n for n, _ in refused}
        sim = getattr(m, "test_the_simulated_gpu_gives_the_same_tensors", None)
        simulated |= set(_default_simulations(sim)) if sim is not None else set()
        for name, arch in tests:
            if (name, arch) in refused:
                continue
            sets = record(name, arch, name in twins)
            old = seen.setdefault(name, (set(), set(), set(), set()))
            for i in range(4):
                old[i].update(sets[i])
    keep = set(seen)
    for n in sorted(seen, key=lambda n: -costs.get(n, 0.0)):
        if n in simulated and n not in pinned and covered(seen, n, keep - {n}):
            keep.discard(n)
    return {n: greedy_cover(seen, n, keep)
            for n in sorted(set(seen) - keep, key=lambda n: -costs.get(n, 0.0))}


def main(report: str) -> None:
    costs = durations(report, "test_the_ptx_assembles")
    dropped = cover(costs)
    for name, by in dropped.items():
        print(f"    {name!r}: {by!r},  # {costs.get(name, 0.0):.2f} s")
    print(f"# {len(dropped)} programs, {sum(costs.get(n, 0.0) for n in dropped):.1f} s of {sum(costs.values()):.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
