"""What the user rounds' GPU scripts (huser16_paths.py, huser17_paths.py, huser18_paths.py) share: a kernel's
sm_90a path and notes from `tilec emit --explain` (their `--dry`), one case timed against torch with a failure
said and the run going on, the result line, and the command line (`--reps`, `--only`, `--dry`).

A case's line: `CASE  ours ms  [TFLOP/s]  WHAT ref ms  ratio (ref / ours: > 1 is faster than torch)  err`.
The timing itself is cliffs.time_pair's (medians of interleaved runs after `warm_up`)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def explain(src: str) -> tuple[int, list[str], str]:
    """`tilec emit --stage gpu --arch sm_90a --explain` of the Tile source `src` (a program with a `main` whose
    launches fix the generics): its status, its `note:` lines and its whole stderr."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "k.tile"
        f.write_text(src, encoding="utf-8")
        r = subprocess.run([sys.executable, "-m", "tilelang", "emit", str(f), "--stage", "gpu", "--arch", "sm_90a",
                            "--explain"], capture_output=True, text=True, cwd=ROOT)
    return r.returncode, [ln for ln in r.stderr.splitlines() if ln.startswith("note:")], r.stderr


def print_notes(case: str, src: str, width: int = 10) -> None:
    """Every note of `explain(src)`, one line each after the case's name (or `?` with the status)."""
    rc, lines, err = explain(src)
    if not lines:
        print(f"{case:{width}s} ? (status {rc}) {err[:300]}", flush=True)
    for ln in lines:
        print(f"{case:{width}s} {ln[6:]}", flush=True)


def timed(case: str, ours: Callable[[], Any], ref: Callable[[], Any], reps: int,
          width: int = 10) -> tuple[float, float] | None:
    """`ours` once (compiling it), then the medians (ms) of `reps` interleaved timings of `ours` and `ref`;
    None, with a FAILED line, where either raises."""
    from cliffs import time_pair

    try:
        h = ours()
        if h is not None and hasattr(h, "wait"):
            h.wait()
        return time_pair(ours, ref, reps)
    except Exception as e:  # say so and go on
        print(f"{case:{width}s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}",
              flush=True)
        return None


def report(case: str, t: float, t_ref: float, err: float, flops: float = 0.0, what: str = "torch",
           width: int = 10) -> None:
    """The result line of one case (ms; `flops` of ours, 0: no rate)."""
    rate = f"{flops / t / 1e9:6.1f} TFLOP/s  " if flops else ""
    print(f"{case:{width}s} {t:.4f} ms {rate}{what} {t_ref:.4f} ms  ratio {t_ref / t:.2f}  err {err:.1e}",
          flush=True)


def each(runs: dict[str, Callable[[int], None]], width: int = 10) -> Callable[[list[str], int], None]:
    """A `run(cases, reps)` that runs each case's function, a failure said and the next case run."""
    def run(cases: list[str], reps: int) -> None:
        for case in cases:
            try:
                runs[case](reps)
            except Exception as e:  # say so and go on
                print(f"{case:{width}s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}",
                      flush=True)
    return run


def main(argv: list[str] | None, cases: Iterable[str], run: Callable[[list[str], int], None],
         dry: Callable[[list[str]], None]) -> int:
    """`--only TEXT` picks the cases whose name holds it, `--dry` prints their paths (CPU), else the device's
    name, a warm-up and `run(cases, reps)`."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="")
    ap.add_argument("--dry", action="store_true")
    args = ap.parse_args(argv)
    picked = [c for c in cases if args.only in c]
    if args.dry:
        dry(picked)
        return 0
    import torch

    from cliffs import warm_up

    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    warm_up(2.0)
    run(picked, args.reps)
    return 0
