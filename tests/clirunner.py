"""Run `tilec` in-process for tests: `invoke(*args, input=...)` and
`run(*args, env=...)`.

`invoke`: `cli.main` is called with `sys.stdin`/`stdout`/`stderr` replaced
(stdin has a `.buffer`, as a real one does), and its `SystemExit` caught; the
result has `exit_code`, `stdout`, `stderr` and `output` (stdout, then stderr).

`run`: `cli.run` (what `python -m tilelang` calls, without `main`'s report of
an internal error) with stdout and stderr captured, as a
`subprocess.CompletedProcess`: the status, output and files of the subprocess
without a new interpreter's imports a call (tests/cli covers the console
script's own exit path). An exception escaping the CLI fails the test with
its traceback (the console script would report it as an ICE, status 101).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def invoke(*args: str, input: str | bytes | None = None) -> Result:
    from tilelang import cli
    from tilelang.diagnostics import render

    data = input.encode() if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    rendering = render.settings()  # `--error-format`/`--color` last for a process, not a test
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        cli.main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
        render.configure(format=rendering.format, color=rendering.color)
    return Result(code, out.getvalue(), err.getvalue())


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tilec ARGS` through `cli.run` in this process, with `env` in the
    environment for the call (see the module docstring)."""
    from tilelang import cli
    from tilelang.diagnostics import render

    out, err = io.StringIO(), io.StringIO()
    saved, before = render.settings(), {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.run(list(args))
    finally:
        render.configure(format=saved.format, color=saved.color)  # `cli.run` configures the process's rendering
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess([sys.executable, "-m", "tilelang", *args], status, out.getvalue(),
                                       err.getvalue())
