"""The random-program differentials' shared harness (`alias_diff.py`, `host_drop_diff.py`, `vary_diff.py`).

- `Gen`: a generator's random source, its fresh names (`v1`, `v2`, ..) and the statements it puts before the
  expression it builds (`pre`); each driver subclasses it with its own routes.
- `write`, `error_codes`, `interpret`: a program written under the driver's folder, the checker's error codes
  for it, its output on the interpreter (or the error it raised, as one line).
- `main`: `SEED COUNT` from the command line (other words, `--flags`, are the driver's), each case's kind
  tallied, the kinds `show` names printed as they come, the tally last (`ok 2931 over 69`).
"""

from __future__ import annotations

import io
import random
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import tilelang.run as run
from tilelang import driver


class Gen:
    def __init__(self, r: random.Random) -> None:
        self.r = r
        self.pre: list[str] = []
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"


def write(out: Path, name: str, src: str) -> Path:
    path = out / name
    path.write_text(src)
    return path


def error_codes(path: Path) -> set[str]:
    return {d.code for d in driver.check(path).diagnostics if d.severity.value == "error"}


def interpret(path: Path) -> tuple[str, str]:
    """(what the program printed on the interpreter, "" or the exception it raised: `Type: first line`)."""
    out = io.StringIO()
    try:
        run.execute(str(path), "cpu", out=out)
    except Exception as e:  # a refusal or an error: the caller reports it
        return out.getvalue(), f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return out.getvalue(), ""


def main(case: Callable[[int, int], tuple[str, str]], out: Path, show: Iterable[str] = ("MISS", "other")) -> None:
    seed, count = (int(a) for a in [a for a in sys.argv[1:] if not a.startswith("--")][:2])
    out.mkdir(exist_ok=True)
    show = set(show)
    tally: dict[str, int] = {}
    for i in range(count):
        kind, msg = case(seed, i)
        tally[kind] = tally.get(kind, 0) + 1
        if kind in show:
            print(kind, msg, flush=True)
    print(" ".join(f"{k} {v}" for k, v in sorted(tally.items())))
