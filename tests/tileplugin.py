"""The pytest plugin that runs `.tile` test programs (see tests/README.md).

Collects every `*.tile` under `tests/ui/` and `tests/run/`. Each file is one
test; what it checks is written inside it:

    //@ check-pass | check-fail | run-pass | run-fail     the mode (one per file)
    //@ ignore: reason                                    skip the file
    let b = &mut z;   // error[E0302]: substring of the message
                      // note: substring of a note        (attach to the error above)
                      // help: substring of a help line
                      // label: substring of a secondary label's message
                      // label@7: ... whose span starts on line 7
    //~^ error[E0201]: ...       the error is one line up (one `^` per line)
    // expect: 42                 run-pass: the next line of stdout, exactly

Default mode: under `tests/run/` run-pass; elsewhere check-fail when the file
has error annotations, else check-pass. Every emitted error or warning must be
annotated and every annotation emitted; the line is the primary label's start
line. A `foo.stderr` next to `foo.tile` holds the full human rendering
(`--color never`, the test's directory written `$DIR`) and is compared when
present; `pytest --bless` (or TILE_BLESS=1) rewrites it.

Both kinds run in-process (fast): check modes through `tilelang.driver.check`,
run modes through the host runtime that `tilec run --device cpu` uses
(`tilelang.run`), with stdout captured; a crash is reported with its traceback.
Every run test runs twice: as `run-pass` (or `run-fail`) and as
`run-pass+sanitize` under the sanitizer (`tilec run --sanitize`), with the same
expectations; the sanitizer's own diagnostics (E0730-E0734, e.g.
`// warning[E0734]`) are expected only in the sanitized run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
COLLECT_DIRS = ("ui", "run")
MODES = ("check-pass", "check-fail", "run-pass", "run-fail")
# The sanitizer's codes (`tilelang.interp.sanitize`): reported only under it.
SANITIZER_CODES = frozenset(("E0730", "E0731", "E0732", "E0733", "E0734"))
RUN_TIMEOUT_S = 120

_DIRECTIVE = re.compile(r"^\s*//@\s*(?P<name>[\w-]+)\s*(?::\s*(?P<arg>.*?))?\s*$")
_ERROR = re.compile(
    r"//(?P<up>~\^*|\^+)?\s*(?P<kind>error|warning)\[(?P<code>[EW]\d{4})\](?::[ \t]?(?P<msg>.*))?$"
)
_ATTACHED = re.compile(r"^\s*//\s*(?P<kind>note|help|label)(?:@(?P<line>\d+))?:[ \t]?(?P<msg>.*)$")
_EXPECT = re.compile(r"//\s*expect:[ ]?(?P<text>.*)$")


class SpecError(Exception):
    """A malformed test file (a typo in a directive, a dangling `//~^`)."""


@dataclass(slots=True)
class Expectation:
    kind: str  # "error" | "warning"
    code: str
    line: int
    message: str  # a substring of the emitted message
    notes: list[str] = field(default_factory=list)
    helps: list[str] = field(default_factory=list)
    labels: list[tuple[int | None, str]] = field(default_factory=list)

    def describe(self) -> str:
        text = f"{self.line:>4}  {self.kind}[{self.code}]: {self.message}"
        extra = [f"note: {n}" for n in self.notes] + [f"help: {h}" for h in self.helps]
        extra += [f"label{'@' + str(ln) if ln else ''}: {m}" for ln, m in self.labels]
        return text + "".join(f"\n        {e}" for e in extra)


@dataclass(slots=True)
class Spec:
    mode: str
    expectations: list[Expectation]
    stdout: list[str]
    ignore: str | None = None


@dataclass(slots=True)
class Emitted:
    """One diagnostic, reduced to what annotations can talk about."""

    kind: str
    code: str
    file: str | None
    line: int | None
    col: int | None
    message: str
    notes: list[str]
    helps: list[str]
    labels: list[tuple[int | None, str, bool]]  # (line, message, primary)

    def describe(self, test_file: str) -> str:
        where = f"{self.line:>4}" if self.file == test_file else f"{self.file}:{self.line}"
        return f"{where}  {self.kind}[{self.code}]: {self.message}"


def parse_spec(text: str, path: Path | None = None) -> Spec:
    """Read the directives, annotations and `// expect:` lines of a test."""
    mode: str | None = None
    ignore: str | None = None
    expectations: list[Expectation] = []
    stdout: list[str] = []
    last: Expectation | None = None  # the error that note/help lines attach to
    for n, line in enumerate(text.splitlines(), start=1):
        d = _DIRECTIVE.match(line)
        if d:
            name, arg = d.group("name"), d.group("arg")
            if name in MODES:
                if mode is not None and mode != name:
                    raise SpecError(f"line {n}: two modes, `{mode}` and `{name}`")
                mode = name
            elif name == "ignore":
                ignore = arg or "ignored"
            else:
                raise SpecError(f"line {n}: unknown directive `//@ {name}`")
            last = None
            continue
        e = _ERROR.search(line)
        if e:
            up = e.group("up") or ""
            target = n - up.count("^")
            if target < 1:
                raise SpecError(f"line {n}: `//~^` points above the first line")
            last = Expectation(
                e.group("kind"), e.group("code"), target, (e.group("msg") or "").strip()
            )
            expectations.append(last)
            continue
        a = _ATTACHED.match(line)
        if a and last is not None:
            msg = a.group("msg").strip()
            match a.group("kind"):
                case "note":
                    last.notes.append(msg)
                case "help":
                    last.helps.append(msg)
                case _:
                    ln = a.group("line")
                    last.labels.append((int(ln) if ln else None, msg))
            continue
        last = None
        x = _EXPECT.search(line)
        if x:
            stdout.append(x.group("text").rstrip())
    if mode is None:
        in_run = path is not None and (TESTS_DIR / "run") in path.resolve().parents
        if in_run:
            mode = "run-pass"
        else:
            has_errors = any(x.kind == "error" for x in expectations)
            mode = "check-fail" if has_errors else "check-pass"
    return Spec(mode, expectations, stdout, ignore)


# ---------------------------------------------------------------- running tilec
def emitted_from_diagnostics(diags: list[Any], sources: Any) -> list[Emitted]:
    from tilelang.diagnostics.render import location

    out = []
    for d in diags:
        primary = d.primary_span
        plabel = next((lb for lb in d.labels if lb.primary), d.labels[0] if d.labels else None)
        loc = location(plabel, sources) if primary is not None and plabel is not None else None
        labels = []
        for lb in d.labels:
            lloc = location(lb, sources)
            labels.append((lloc[1] if lloc else None, lb.message, lb.primary))
        out.append(
            Emitted(
                d.severity.value,
                d.code,
                loc[0] if loc else None,
                loc[1] if loc else None,
                loc[2] if loc else None,
                d.message,
                list(d.notes),
                list(d.help),
                labels,
            )
        )
    return out


def emitted_from_json(lines: list[str]) -> tuple[list[Emitted], list[str]]:
    """Diagnostics from `--error-format json` stderr; also the other lines."""
    out, other = [], []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if not isinstance(obj, dict) or "code" not in obj:
            other.append(line)
            continue
        labels = obj.get("labels") or []
        primary = next((lb for lb in labels if lb.get("primary")), labels[0] if labels else None)
        out.append(
            Emitted(
                obj.get("severity", "error"),
                obj.get("code", ""),
                primary.get("file") if primary else None,
                primary.get("line") if primary else None,
                primary.get("col") if primary else None,
                obj.get("message", ""),
                list(obj.get("notes") or []),
                list(obj.get("help") or []),
                [(lb.get("line"), lb.get("message", ""), bool(lb.get("primary"))) for lb in labels],
            )
        )
    return out, other


def check_file(path: Path) -> Any:
    """Run `tilec check` on one file in-process; the driver's CompileResult."""
    from tilelang import driver

    return driver.check(path)


def tilec_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tilelang", *args]


def tilec_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.pop("FORCE_COLOR", None)
    env["NO_COLOR"] = "1"
    return env


def run_tilec(
    *args: str, cwd: Path | None = None, timeout: int = RUN_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """`tilec ARGS` in a subprocess, from the checkout, without colour."""
    return subprocess.run(
        tilec_command(*args),
        cwd=cwd,
        env=tilec_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def run_program(path: Path, sanitize: bool = False) -> tuple[int, str, list[Emitted], str | None, str]:
    """Run a checked program's `main` on the CPU, in-process, as `tilec run`
    (`--sanitize`) would: (exit status, stdout, run-time diagnostics and
    sanitizer warnings, crash report or None, the human rendering of the
    diagnostics). Status 3 is a run-time error."""
    import io
    import traceback

    from tilelang import run as run_mod
    from tilelang.diagnostics.model import TileError
    from tilelang.diagnostics.render import render_human
    from tilelang.source import SourceMap

    out = io.StringIO()
    # Run with our own SourceMap so run-time diagnostics can be rendered
    # (they may point into stdlib files too, not only the root file).
    sources = SourceMap()
    sf = sources.add(str(path), path.read_text(encoding="utf-8"))
    cwd = os.getcwd()
    os.chdir(path.parent)  # relative `load_npy` paths resolve as under `tilec run`
    warnings: list[Any] = []
    try:
        ex = run_mod._execute_source(sf, sources, "cpu", out, sanitize=sanitize, warnings=warnings)
        wrong = static_shape_mismatches(ex)
        if wrong:  # the checker's constant dims are what the program runs with
            return 101, out.getvalue(), [], "static shapes differ from the run:\n" + "\n".join(wrong), ""
        return (0, out.getvalue(), emitted_from_diagnostics(warnings, sources), None,
                render_human(warnings, sources, color=False) if warnings else "")
    except run_mod.CheckFailed as e:
        diags = list(e.diagnostics)
        return (
            1,
            out.getvalue(),
            emitted_from_diagnostics(diags, e.sources),
            None,
            render_human(diags, e.sources, color=False),
        )
    except TileError as e:
        diags = [*warnings, *e.diagnostics]
        return (
            3,
            out.getvalue(),
            emitted_from_diagnostics(diags, sources),
            None,
            render_human(diags, sources, color=False),
        )
    except Exception as e:  # a crash is a test failure, reported with its traceback
        return 101, out.getvalue(), [], "".join(traceback.format_exception(e)), ""
    finally:
        os.chdir(cwd)


def static_shape_mismatches(ex: Any) -> list[str]:
    """`main`'s top-level `let` tensors whose type's constant dimensions are
    not the ones they ran with (the check-time rules that read them, E0721,
    E0500, E0714, would refuse valid programs or pass wrong ones)."""
    from tilelang.runtime.tensor import Tensor
    from tilelang.sema.types import RefT, TensorT
    from tilelang.syntax import ast

    ev = ex.evaluator
    main = next((it for it in ev.root.items if isinstance(it, ast.FnDecl) and it.name.name == "main"), None)
    if main is None:
        return []
    last = {st.pattern.name.name: st.pattern for st in main.body.stmts
            if isinstance(st, ast.Let) and isinstance(st.pattern, ast.NamePat)}
    out = []
    for name, pat in last.items():
        v, ty = ex.main_locals.get(name), ev.program.type_of(pat)
        ty = ty.inner if isinstance(ty, RefT) else ty
        if isinstance(v, Tensor) and isinstance(ty, TensorT) and ty.shape is not None:
            static = [d.const_value if d is not None else None for d in ty.shape]
            if len(static) != len(v.shape) or any(s is not None and s != r for s, r in zip(static, v.shape)):
                out.append(f"`{name}` is `{ty}` to the checker but ran with shape {list(v.shape)}")
    return out


# ---------------------------------------------------------------- comparing
def compare(expectations: list[Expectation], emitted: list[Emitted], test_file: str) -> list[str]:
    """Match annotations against emitted diagnostics; the problems, readably."""
    unmatched = list(emitted)
    missing: list[Expectation] = []
    incomplete: list[str] = []
    for exp in expectations:
        hit = next(
            (
                e
                for e in unmatched
                if e.kind == exp.kind
                and e.code == exp.code
                and e.line == exp.line
                and e.file == test_file
                and exp.message in e.message
            ),
            None,
        )
        if hit is None:
            missing.append(exp)
            continue
        unmatched.remove(hit)
        problems = []
        for note in exp.notes:
            if not any(note in n for n in hit.notes):
                problems.append(f"no note containing {note!r} (notes: {hit.notes})")
        for h in exp.helps:
            if not any(h in x for x in hit.helps):
                problems.append(f"no help containing {h!r} (help: {hit.helps})")
        for ln, msg in exp.labels:
            if not any(
                not primary and msg in m and (ln is None or ln == lline)
                for lline, m, primary in hit.labels
            ):
                where = f" on line {ln}" if ln else ""
                have = [(lline, m) for lline, m, p in hit.labels if not p]
                problems.append(f"no secondary label{where} containing {msg!r} (labels: {have})")
        if problems:
            incomplete.append(hit.describe(test_file) + "".join(f"\n        {p}" for p in problems))
    out = []
    if unmatched:
        out.append("unexpected (emitted but not annotated):")
        out.extend("  " + e.describe(test_file) for e in unmatched)
    if missing:
        out.append("missing (annotated but not emitted):")
        out.extend("  " + m.describe() for m in missing)
    if incomplete:
        out.append("emitted, but the attached expectations differ:")
        out.extend("  " + i for i in incomplete)
    return out


def normalise_paths(text: str, directory: Path) -> str:
    return text.replace(str(directory.resolve()), "$DIR").replace(str(directory), "$DIR")


# ---------------------------------------------------------------- pytest glue
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bless",
        action="store_true",
        default=False,
        help="rewrite .stderr (and other) goldens from the current output",
    )


def bless_enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("--bless", default=False) or os.environ.get("TILE_BLESS"))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix != ".tile":
        return None
    resolved = file_path.resolve()
    if any((TESTS_DIR / d) in resolved.parents for d in COLLECT_DIRS):
        return TileFile.from_parent(parent, path=file_path)
    return None


class TileFile(pytest.File):
    def collect(self):  # type: ignore[no-untyped-def]
        text = self.path.read_text(encoding="utf-8")
        try:
            spec = parse_spec(text, self.path)
        except SpecError as e:
            yield TileItem.from_parent(self, name="malformed", spec=None, spec_error=str(e))
            return
        yield TileItem.from_parent(self, name=spec.mode, spec=spec, spec_error=None)
        if spec.mode in ("run-pass", "run-fail"):
            yield TileItem.from_parent(self, name=spec.mode + "+sanitize", spec=spec,
                                       spec_error=None, sanitize=True)


class TileFailure(Exception):
    pass


class TileItem(pytest.Item):
    def __init__(self, *, spec: Spec | None, spec_error: str | None, sanitize: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.spec_error = spec_error
        self.sanitize = sanitize

    # -- running -------------------------------------------------------------
    def runtest(self) -> None:
        if self.spec_error is not None:
            raise TileFailure(f"malformed test file: {self.spec_error}")
        spec = self.spec
        assert spec is not None
        if spec.ignore:
            pytest.skip(spec.ignore)
        if spec.mode in ("check-pass", "check-fail"):
            self._run_check(spec)
        else:
            self._run_program(spec)

    def _check(self) -> tuple[Any, list[Emitted]]:
        result = check_file(self.path)
        return result, emitted_from_diagnostics(result.diagnostics, result.sources)

    def _run_check(self, spec: Spec) -> None:
        result, emitted = self._check()
        problems = compare(spec.expectations, emitted, str(self.path))
        errors = [e for e in emitted if e.kind == "error"]
        if spec.mode == "check-pass" and errors:
            problems.insert(0, "expected the program to pass the checks, but it has errors")
        if spec.mode == "check-fail" and not errors:
            problems.insert(0, "expected the checks to fail, but there were no errors")
        from tilelang.diagnostics.render import render_human

        rendered = normalise_paths(
            render_human(result.diagnostics, result.sources, color=False), self.path.parent
        )
        problems += self._golden(".stderr", rendered)
        if problems:
            raise TileFailure(self._report(problems, rendered))

    def _run_program(self, spec: Spec) -> None:
        result, emitted = self._check()
        dynamic = [x for x in spec.expectations if x.code in SANITIZER_CODES]
        static = [x for x in spec.expectations if x.kind == "warning" and x not in dynamic]
        problems = compare(static, emitted, str(self.path))
        if any(e.kind == "error" for e in emitted):
            from tilelang.diagnostics.render import render_human

            raise TileFailure(
                self._report(
                    ["a run test must pass the checks first", *problems],
                    render_human(result.diagnostics, result.sources, color=False),
                )
            )
        status, stdout, runtime, crash, rendered = run_program(self.path, self.sanitize)
        run_exps = [x for x in spec.expectations
                    if (x.kind == "error" and x not in dynamic) or (self.sanitize and x in dynamic)]
        problems += compare(run_exps, runtime, str(self.path))
        if crash:
            problems.append(f"tilec crashed:\n{crash}")
        if spec.mode == "run-pass" and status != 0:
            problems.append(f"expected exit status 0, got {status}")
        if spec.mode == "run-fail" and status in (0, 101):
            problems.append(f"expected a run-time failure, got exit status {status}")
        got = [ln.rstrip() for ln in stdout.splitlines()]
        if spec.mode == "run-pass" and got != spec.stdout:
            problems.append("stdout differs from the `// expect:` lines:")
            problems.append(_side_by_side(spec.stdout, got))
        if not self.sanitize:
            problems += self._golden(".stderr", normalise_paths(rendered, self.path.parent))
        if problems:
            raise TileFailure(self._report(problems, rendered + (crash or "")))

    def _golden(self, suffix: str, actual: str) -> list[str]:
        golden = self.path.with_suffix(suffix)
        if not golden.exists():
            return []
        expected = golden.read_text(encoding="utf-8")
        if expected == actual:
            return []
        if bless_enabled(self.config):
            golden.write_text(actual, encoding="utf-8")
            return []
        import difflib

        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"{golden.name} (expected)",
                f"{golden.name} (actual)",
            )
        )
        return [f"{golden.name} differs (rerun with --bless to accept):", diff.rstrip("\n")]

    def _report(self, problems: list[str], output: str) -> str:
        body = "\n".join(problems)
        return f"{self.path}:\n{body}\n\n--- full output ---\n{output.rstrip()}"

    # -- reporting -----------------------------------------------------------
    def repr_failure(self, excinfo, style=None):  # type: ignore[no-untyped-def, override]
        if isinstance(excinfo.value, TileFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):  # type: ignore[no-untyped-def]
        return (
            self.path,
            0,
            f"{self.path.relative_to(REPO_ROOT) if REPO_ROOT in self.path.parents else self.path}::{self.name}",
        )


def _side_by_side(expected: list[str], got: list[str]) -> str:
    rows = ["    expected                                 | got"]
    for i in range(max(len(expected), len(got))):
        a = expected[i] if i < len(expected) else "<none>"
        b = got[i] if i < len(got) else "<none>"
        mark = " " if a == b else "!"
        rows.append(f"  {mark} {a[:40]:<40} | {b}")
    return "\n".join(rows)


# ---------------------------------------------------------------- golden fixture
@pytest.fixture
def golden(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """`golden(path, actual)`: assert `actual` equals the file at `path`; with
    `--bless` (or TILE_BLESS=1) write it instead. A missing golden fails
    unless blessing, so a new case is created by running once with --bless."""

    def check(path: Path, actual: str) -> None:
        if bless_enabled(request.config):
            if not path.exists() or path.read_text(encoding="utf-8") != actual:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(actual, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden {path.name} does not exist: run with --bless to create it")
        expected = path.read_text(encoding="utf-8")
        if expected != actual:
            import difflib

            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(keepends=True),
                    actual.splitlines(keepends=True),
                    f"{path.name} (expected)",
                    f"{path.name} (actual)",
                )
            )
            pytest.fail(
                f"{path.name} differs (rerun with --bless to accept):\n{diff}", pytrace=False
            )

    return check
