"""Run `tilec` in-process for tests: `invoke(*args, input=...)`.

`cli.main` is called with `sys.stdin`/`stdout`/`stderr` replaced (stdin has
a `.buffer`, as a real one does), and its `SystemExit` caught; the result
has `exit_code`, `stdout`, `stderr` and `output` (stdout, then stderr).
"""

from __future__ import annotations

import io
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
