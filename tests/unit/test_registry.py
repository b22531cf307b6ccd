"""Meta-tests of the error-code registry and the explanation files.

- every registered code has `explain/<CODE>.md`, and every explanation file
  belongs to a registered code;
- each code is defined in the module of its range (`codes/syntax.py` holds E00xx ...);
- every `error[E....]` written in tests/ and every code string in tilelang/ is registered;
- each explanation's first ```tile example fails with exactly that code (and
  the second, the fixed version, passes the checks); for the Python API's
  E08xx, the first ```python example raises a `tilelang.APIError` with
  exactly that code and the second runs (each in a fresh interpreter);
- no rendering of a tests/ui program leaks internals (a traceback, a
  `tilelang/` path, a Lark `Token(`/`Tree(` repr).
"""

from __future__ import annotations

import importlib
import io
import re
from pathlib import Path

import pytest

from tilelang import driver
from tilelang.diagnostics import explain
from tilelang.diagnostics.codes import REGISTRY

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
PACKAGE = REPO / "tilelang"

CODE_RE = re.compile(r"\b(?:error|warning)\[([EW]\d{4})\]")
CODE_LITERAL_RE = re.compile(r"""[rRuU]?(["'])([EW]\d{4})\1""")
RANGES = {
    "syntax": "E00",
    "names": "E01",
    "types": "E02",
    "ownership": "E03",
    "kernel": "E04",
    "launch": "E05",
    "codegen": "E06",
    "runtime": "E07",
    "api": "E08",
    "warnings": "W00",
}
# Files whose codes are synthetic on purpose (renderer and plugin tests).
SYNTHETIC = {
    TESTS / "unit" / "test_render.py",
    TESTS / "unit" / "test_render_golden.py",
    TESTS / "unit" / "test_registry.py",
    TESTS / "cli" / "test_tileplugin.py",
    TESTS / "tileplugin.py",
}


def test_registry_is_not_empty_and_well_formed() -> None:
    assert REGISTRY
    names = [c.name for c in REGISTRY.values()]
    for code, entry in REGISTRY.items():
        assert re.fullmatch(r"[EW]\d{4}", code), code
        assert entry.code == code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry.name), f"{code}: name {entry.name!r}"
        assert entry.summary and not entry.summary.endswith("."), (
            f"{code}: summary {entry.summary!r}"
        )
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, f"names used by more than one code: {dupes}"


@pytest.mark.parametrize("module", sorted(RANGES))
def test_codes_live_in_their_range_module(module: str) -> None:
    mod = importlib.import_module(f"tilelang.diagnostics.codes.{module}")
    codes = {v for v in vars(mod).values() if isinstance(v, str) and v in REGISTRY}
    wrong = sorted(c for c in codes if not c.startswith(RANGES[module]))
    assert not wrong, f"codes/{module}.py holds codes outside {RANGES[module]}xx: {wrong}"


def test_every_code_has_an_explanation() -> None:
    missing = sorted(c for c in REGISTRY if explain.explain_text(c) is None)
    assert not missing, f"codes without tilelang/diagnostics/explain/<CODE>.md: {missing}"


def test_every_explanation_belongs_to_a_code() -> None:
    orphans = sorted(c for c in explain.explained_codes() if c not in REGISTRY)
    assert not orphans, f"explanation files for unregistered codes: {orphans}"


def test_explanations_have_title_and_two_examples() -> None:
    bad = []
    for code in explain.explained_codes():
        text = explain.explain_text(code) or ""
        first = text.splitlines()[0] if text else ""
        if not first.strip() or first.startswith("```"):
            bad.append(f"{code}: no title line")
        if code.startswith("E08"):  # the Python API's: Python examples
            if len(explain.python_blocks(text)) < 2:
                bad.append(f"{code}: fewer than two ```python examples (failing, then fixed)")
        elif len(explain.tile_examples(text)) < 2:
            bad.append(f"{code}: fewer than two ```tile examples (failing, then fixed)")
    assert not bad, "\n".join(bad)


def _codes_in(paths: list[Path], pattern: re.Pattern[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in paths:
        for code in pattern.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(code, []).append(str(path.relative_to(REPO)))
    return found


def test_codes_in_tests_are_registered() -> None:
    paths = [
        p
        for p in TESTS.rglob("*")
        if p.is_file()
        and p.suffix in (".tile", ".stderr", ".py")
        and p not in SYNTHETIC
        and TESTS / "golden" not in p.parents
    ]
    found = _codes_in(paths, CODE_RE)
    unknown = {c: sorted(set(f))[:3] for c, f in found.items() if c not in REGISTRY}
    assert not unknown, f"codes written in tests/ but not registered: {unknown}"


def _code_literals(path: Path) -> list[str]:
    """String literals in a Python file that are exactly a code (`"E0302"`);
    comments and prose in docstrings do not count."""
    import tokenize

    with path.open("rb") as f:
        tokens = list(tokenize.tokenize(f.readline))
    return [
        m.group(2)
        for t in tokens
        if t.type == tokenize.STRING and (m := CODE_LITERAL_RE.fullmatch(t.string))
    ]


def test_codes_in_the_package_are_registered() -> None:
    found: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        # a literal that is exactly a code is `"E0302"` in the text too: tokenize (~3 s for the whole
        # package) only the few files where that text is
        if not CODE_LITERAL_RE.search(path.read_text(encoding="utf-8")):
            continue
        for code in _code_literals(path):
            found.setdefault(code, []).append(str(path.relative_to(REPO)))
    assert len(found) >= len(REGISTRY) // 2, "the scan finds too few code literals: is it broken?"
    unknown = {c: sorted(set(f))[:3] for c, f in found.items() if c not in REGISTRY}
    assert not unknown, f"code strings in tilelang/ that are not registered: {unknown}"


# ---------------------------------------------------------------- examples
def _mode(code: str, flags: frozenset[str]) -> str:
    if "sanitize" in flags and "unchecked" in flags:
        # the sanitizer as the oracle: a program the ownership checker refuses,
        # run with the checker skipped (`execute(..., ownership=False)`)
        return "sanitize-unchecked"
    if "sanitize" in flags:
        return "sanitize"  # `tilec run --sanitize`: its errors and its warnings
    if "ptx" in flags:
        return "ptx"
    if "run" in flags or "gpu" in flags:  # a `gpu` example runs on the GPU (`tilec run --device gpu`)
        return "run"
    if code[:3] in ("E05", "E07"):
        return "run"
    if code[:3] == "E06":
        return "ptx"
    return "check"


def _error_codes(diags) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted({d.code for d in diags if d.severity.value == "error"})


def _warning_codes(diags) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted({d.code for d in diags if d.severity.value == "warning"})


def _emitted_codes(path: Path, mode: str, arch: str | None = None, device: str = "cpu",
                   seen: list | None = None) -> list[str]:  # type: ignore[type-arg]
    """The error codes `tilec check` (or run [--device], or emit --stage ptx [--arch]) reports;
    the diagnostics themselves are appended to `seen`."""
    seen = [] if seen is None else seen
    until = "ptx" if mode == "ptx" else "checked"
    result = driver.compile(path, until, options=driver.Options(arch=arch) if arch else None)
    seen.extend(result.diagnostics)
    codes = _error_codes(result.diagnostics)
    if mode == "sanitize-unchecked":
        # the host checker's codes (E03xx) or the kernel checker's (E04xx)
        assert codes and all(c.startswith(("E03", "E04")) for c in codes), (
            f"an `unchecked` example must be one the ownership checker refuses, got {codes}"
        )
        run = pytest.importorskip("tilelang.run")
        from tilelang.diagnostics.model import TileError

        try:
            run.execute(path, device="cpu", out=io.StringIO(), sanitize=True, ownership=False)
        except TileError as e:
            seen.extend(e.diagnostics)
            return _error_codes(e.diagnostics)
        return []
    if codes or mode not in ("run", "sanitize"):
        return codes
    from tilelang import run
    from tilelang.diagnostics.model import TileError

    try:
        ex = run.execute(path, device=device, out=io.StringIO(), sanitize=mode == "sanitize")
    except TileError as e:
        # a run-time error names where it happened (a device error too: the
        # statement or launch that met it), not only what
        assert all(d.labels for d in e.diagnostics), f"an unlocated run-time error: {e.diagnostics}"
        seen.extend(e.diagnostics)
        return _error_codes(e.diagnostics)
    except run.CheckFailed as e:
        seen.extend(e.diagnostics)
        return _error_codes(e.diagnostics)
    seen.extend(ex.warnings)
    return sorted({d.code for d in ex.warnings})


EXPLAINED = explain.explained_codes()


# A Python example runs in a fresh interpreter (a graph, a registered PyTorch
# operator or a hidden PyTorch stays in it) and prints the code of the
# `tilelang.APIError` it raised, or `none`; any other exception fails.
_PY_RUNNER = """
import sys
if "without-torch" in sys.argv[1:]:
    sys.modules["torch"] = None  # as if PyTorch were not installed
import tilelang
source = sys.stdin.read()
try:
    exec(compile(source, "<example>", "exec"), {"__name__": "__main__"})
except tilelang.APIError as e:
    print("raised", e.code)
    print(e, file=sys.stderr)
else:
    print("raised none")
"""

# The fresh interpreters come from one server a test process (`_py_server`):
# it imports what every example's run imports (NumPy and tilelang's front end
# and interpreter: most of a fresh `python -c`'s time), then forks a child
# for each example, which runs `_PY_RUNNER` as `python -c` would (its stdin,
# stdout and stderr files, its argv, its exit status; `atexit` handlers and a
# collection before it exits). No example runs in the server, which never
# imports PyTorch nor touches CUDA, so each child starts as a new process
# that has done those imports. A request is a JSON line; the answer, the
# child's exit status (-9: killed after `timeout` seconds).
_PY_SERVER = r"""
import json, os, sys, time
import numpy
import tilelang, tilelang.api, tilelang.driver, tilelang.interp, tilelang.run
assert "torch" not in sys.modules, "the server must not import PyTorch (`without-torch` examples)"
RUNNER = sys.argv[1]


def child(req):
    os.chdir(req["cwd"])
    for fd, path, flags in ((0, req["body"], os.O_RDONLY), (1, req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        f = os.open(path, flags, 0o644)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    sys.argv = ["-c", *req["flags"]]
    code = 0
    try:
        exec(compile(RUNNER, "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    import atexit, gc

    gc.collect()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(req)
        finally:
            os._exit(70)
    deadline = time.monotonic() + req["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            rc = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            rc = -9
            break
        time.sleep(0.005)
    print(json.dumps({"rc": rc}), flush=True)
"""


@pytest.fixture(scope="module")
def _py_server():  # type: ignore[no-untyped-def]
    """The fork server of `_PY_SERVER` (started by the first Python example of the module)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", _PY_SERVER, _PY_RUNNER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=60)


def _python_example(flags: frozenset[str], body: str, tmp_path: Path, server) -> str:  # type: ignore[no-untyped-def]
    """Run one ```python example (in a fresh interpreter of `server`); the code it raised, or "none"."""
    import importlib.util
    import json

    if "gpu" in flags or "nogpu" in flags:
        from gpu_probe import cuda_device_count

        has_gpu = cuda_device_count() > 0
        if "gpu" in flags and not has_gpu:
            pytest.skip("the example needs a GPU")
        if "nogpu" in flags and has_gpu:
            pytest.skip("the example fails only where there is no GPU")
    if "torch" in flags and importlib.util.find_spec("torch") is None:
        pytest.skip("the example needs PyTorch")
    files = {k: tmp_path / f"example.{k}" for k in ("body", "out", "err")}
    files["body"].write_text(body, encoding="utf-8")
    req = {"cwd": str(tmp_path), "flags": sorted(flags), "timeout": 120, **{k: str(v) for k, v in files.items()}}
    server.stdin.write(json.dumps(req) + "\n")
    server.stdin.flush()
    answer = server.stdout.readline()
    assert answer, f"the example server stopped (status {server.poll()})"
    rc = json.loads(answer)["rc"]
    stdout, stderr = (files[k].read_text(encoding="utf-8") for k in ("out", "err"))
    assert rc == 0, f"the example crashed (status {rc}):\n{stderr}"
    out = stdout.split()
    assert out[-2:-1] == ["raised"], stdout
    if out[-1] != "none":  # the error's text: a code, a message, a help line, nothing internal
        text = stderr
        assert text.startswith(f"error[{out[-1]}]: ") and "\n  help: " in text, text
        assert not any(leak in text for leak in LEAKS), text
    return out[-1]


@pytest.mark.parametrize("code", EXPLAINED)
def test_first_example_fails_with_exactly_its_code(code: str, tmp_path: Path, request, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if code.startswith("E08"):
        flags, body = explain.python_blocks(explain.explain_text(code) or "")[0]
        got = _python_example(flags, body, tmp_path, request.getfixturevalue("_py_server"))
        assert got == code, f"{code}.md's first example should raise {code}, got {got}"
        return
    blocks = explain.tile_blocks(explain.explain_text(code) or "")
    if not blocks:
        pytest.fail(f"{code}.md has no ```tile example")
    if REGISTRY[code].retired:
        pytest.skip(f"{code} is retired: tilec no longer reports it")
    flags, body = blocks[0]
    if "gpu" in flags:
        from gpu_probe import cuda_device_count

        if cuda_device_count() == 0:
            pytest.skip(f"{code}'s example needs a GPU")
    # `env=NAME=VALUE`: the example runs with that environment variable set;
    # `arch=sm_XX`: a `ptx` example compiles for that target
    arch = None
    for f in flags:
        if f.startswith("env="):
            name, _, value = f[4:].partition("=")
            monkeypatch.setenv(name, value)
        elif f.startswith("arch="):
            arch = f[5:]
    path = tmp_path / f"{code}.tile"
    path.write_text(body, encoding="utf-8")
    if code.startswith("W"):  # a warning: the example checks, with exactly that warning
        result = driver.check(path)
        got = (_error_codes(result.diagnostics), _warning_codes(result.diagnostics))
        assert got == ([], [code]), f"{code}.md's first example should warn {code}, got {got}"
        return
    seen: list = []  # type: ignore[type-arg]
    codes = _emitted_codes(path, _mode(code, flags), arch, device="gpu" if "gpu" in flags else "cpu", seen=seen)
    assert codes == [code], (
        f"{code}.md's first example should fail with exactly {code}, got {codes}"
    )
    # every diagnostic it gives proposes a fix (hrev 2026-12-04: E0001, E0002, E0103, E0105, E0115, E0205
    # and E0710 could be raised without a help line)
    bare = [f"{d.code}: {d.message}" for d in seen if d.severity.value == "error" and not d.help]
    assert not bare, f"{code}.md's first example gives errors without a help line: {bare}"


@pytest.mark.parametrize("code", EXPLAINED)
def test_fixed_example_passes_the_checks(code: str, tmp_path: Path, request) -> None:  # type: ignore[no-untyped-def]
    if code.startswith("E08"):
        flags, body = explain.python_blocks(explain.explain_text(code) or "")[1]
        got = _python_example(flags, body, tmp_path, request.getfixturevalue("_py_server"))
        assert got == "none", f"{code}.md's second (fixed) example should run, but raised {got}"
        return
    blocks = explain.tile_blocks(explain.explain_text(code) or "")
    if len(blocks) < 2:
        pytest.skip(f"{code}.md has no fixed example")
    path = tmp_path / f"{code}_fixed.tile"
    path.write_text(blocks[1][1], encoding="utf-8")
    result = driver.check(path)
    assert _error_codes(result.diagnostics) == [], (
        f"{code}.md's second (fixed) example should pass `tilec check`"
    )
    if code.startswith("W"):
        assert code not in _warning_codes(result.diagnostics), (
            f"{code}.md's second (fixed) example should not warn {code}")


# ---------------------------------------------------------------- leaks
LEAKS = ("Traceback", "tilelang/", "Token(", "Tree(", "<lark.", "__anon")


def test_ui_renderings_do_not_leak_internals() -> None:
    from tilelang.diagnostics.render import render_human, render_json

    files = sorted((TESTS / "ui").rglob("*.tile"))
    if not files:
        pytest.skip("no tests/ui programs yet")
    leaks = []
    for path in files:
        try:
            result = driver.check(path)
        except Exception as e:  # an ICE is a leak of its own kind
            leaks.append(f"{path.relative_to(REPO)}: crashed: {type(e).__name__}: {e}")
            continue
        text = render_human(result.diagnostics, result.sources) + render_json(
            result.diagnostics, result.sources
        )
        text = text.replace(str(REPO), "$ROOT")
        for needle in LEAKS:
            if needle in text:
                leaks.append(f"{path.relative_to(REPO)}: contains {needle!r}")
        # every error proposes a fix (hrev 2026-12-04: E0101, E0102, E0107, E0110 and E0306 had
        # forms without a help line)
        leaks += [f"{path.relative_to(REPO)}: error[{d.code}] {d.message!r} has no help line"
                  for d in result.diagnostics if d.severity.value == "error" and not d.help]
    assert not leaks, "\n".join(leaks)


def test_a_gpu_example_runs_on_the_gpu() -> None:
    # E0610's example (a device out of memory) compiled to PTX and never ran,
    # so it could not fail on any machine: a `gpu` example is run with
    # `--device gpu` (and skipped without a GPU, above)
    assert _mode("E0610", frozenset({"gpu"})) == "run"
    assert _mode("E0610", frozenset({"gpu", "ptx"})) == "ptx"
    assert _mode("E0610", frozenset()) == "ptx"
    flags, _ = explain.tile_blocks(explain.explain_text("E0610") or "")[0]
    assert "gpu" in flags
