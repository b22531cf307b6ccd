"""Start-up time of `tilec`: `check` of a small file, `--help`, `--version`.

Runs each command in a fresh process N times (default 15) and reports the
best and the median wall time, and the best CPU time (user + system of the
child), so that a busy machine shows in the wall column but not in the CPU
one. The interpreter is this one (`sys.executable -m tilelang`), which is
what the `tilec` console script runs, without a wrapper such as a pyenv shim.

Bytecode: an installed `tilec` runs from `.pyc` files (pip compiles them at
install time), so the children run with a bytecode cache (a temporary
`PYTHONPYCACHEPREFIX`, warmed by the first run) even where the environment
sets `PYTHONDONTWRITEBYTECODE`; `--no-bytecode` measures without one.

    python benchmarks/startup.py            # a table
    python benchmarks/startup.py --json     # the numbers, for RESULTS.md

Target (issue 12, item 8): `tilec check` of a 10-line file under 0.25 s on
the project's 2-core machine. A test would be flaky on a shared machine;
this is a benchmark, and `benchmarks/RESULTS.md` records its numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SMALL = """\
// a 10-line program
const N: i32 = 8;

fn twice(x: i32) -> i32 { x * 2 }

fn main() {
    let a = twice(N);
    let z = zeros::<f32>([N]);
    print(a, z.sum());
}
"""


def _one(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(runs: int, bytecode: bool = True) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        if bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        small = Path(tmp) / "small.tile"
        small.write_text(SMALL, encoding="utf-8")
        base = [sys.executable, "-m", "tilelang"]
        commands = {
            "python -c pass (the floor)": [sys.executable, "-c", "pass"],
            "tilec check small.tile": [*base, "check", str(small)],
            "tilec --help": [*base, "--help"],
            "tilec --version": [*base, "--version"],
        }
        out: dict[str, dict[str, float]] = {}
        for name, cmd in commands.items():
            _one(cmd, env)  # warm the file cache and the parser's table cache
            walls, cpus = zip(*(_one(cmd, env) for _ in range(runs)), strict=True)
            out[name] = {"best_wall_s": min(walls), "median_wall_s": statistics.median(walls),
                         "best_cpu_s": min(cpus)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="compile every module from source in every run")
    args = ap.parse_args()
    results = measure(args.runs, bytecode=not args.no_bytecode)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'command':32} {'best wall':>10} {'median wall':>12} {'best cpu':>9}")
    for name, r in results.items():
        print(f"{name:32} {r['best_wall_s']:>9.3f}s {r['median_wall_s']:>11.3f}s "
              f"{r['best_cpu_s']:>8.3f}s")
    print(f"load average: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
