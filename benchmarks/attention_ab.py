"""The attention A/B scripts' runs folded by arm (`benchmarks/attention_arms.sh`: one process a run, its
`attention.json` in `$D/run<i><arm>`): each prefill row's mean Tile TFLOP/s over an arm's runs, the spread
((max - min) / mean) and the ratio to the baseline arm's mean (the first letter given, default A), and the
same for Tile / SDPA of the same process (which takes out a process's own clock).

    python benchmarks/attention_ab.py OUT/h15y            (every run<i><arm> folder under it)
    python benchmarks/attention_ab.py OUT/h15y --base A

A ratio is read against both arms' spreads: a gain not above them has not shown. Reads JSON only: no GPU.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def row_name(r: dict) -> str:  # type: ignore[type-arg]
    return f"{r['dtype']} D={r['D']} {'causal' if r['causal'] else 'full'} S={r['S']}"


def fold(runs: dict[str, list[list[dict]]], base: str) -> list[dict]:  # type: ignore[type-arg]
    """`runs`: arm -> its runs' prefill rows. One entry a (row, arm), rows in first-seen order, the base arm
    first: n, mean TFLOP/s, spread, ratio to the base arm's mean, and the mean Tile / SDPA with its ratio."""
    per: dict[tuple[str, str], list[dict]] = {}  # type: ignore[type-arg]
    order: list[str] = []
    for arm, rs in runs.items():
        for rows in rs:
            for r in rows:
                if r.get("kind") != "prefill":
                    continue
                name = row_name(r)
                if name not in order:
                    order.append(name)
                per.setdefault((name, arm), []).append(r)
    arms = [base, *sorted(a for a in runs if a != base)] if base in runs else sorted(runs)
    out = []
    for name in order:
        b = per.get((name, arms[0]))
        b_mean = statistics.fmean(x["tile_tflops"] for x in b) if b else None
        b_rel = statistics.fmean(x["sdpa_ms"] / x["tile_ms"] for x in b) if b else None
        for arm in arms:
            xs = per.get((name, arm))
            if not xs:
                continue
            t = [x["tile_tflops"] for x in xs]
            rel = statistics.fmean(x["sdpa_ms"] / x["tile_ms"] for x in xs)
            mean = statistics.fmean(t)
            out.append({"row": name, "arm": arm, "n": len(t), "mean": mean, "spread": (max(t) - min(t)) / mean,
                        "ratio": mean / b_mean if b_mean else None, "vs_sdpa": rel,
                        "vs_sdpa_ratio": rel / b_rel if b_rel else None})
    return out


def load(d: Path) -> dict[str, list[list[dict]]]:  # type: ignore[type-arg]
    """`d`'s run<i><arm> folders' rows, by arm (a run without its JSON is skipped: cut short)."""
    runs: dict[str, list[list[dict]]] = {}  # type: ignore[type-arg]
    for sub in sorted(d.iterdir()):
        m = re.fullmatch(r"run(\d+)([A-Z])", sub.name)
        f = sub / "attention.json"
        if m and f.is_file():
            runs.setdefault(m.group(2), []).append(json.loads(f.read_text())["rows"])
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--base", default="A")
    a = ap.parse_args(argv)
    runs = load(a.dir)
    if not runs:
        print(f"no run<i><arm>/attention.json under {a.dir}", file=sys.stderr)
        return 1
    print("| row | arm | n | Tile TFLOP/s | spread | vs base | Tile/SDPA | vs base |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for e in fold(runs, a.base):
        r = f"{e['ratio']:.4f}" if e["ratio"] else "-"
        v = f"{e['vs_sdpa_ratio']:.4f}" if e["vs_sdpa_ratio"] else "-"
        print(f"| {e['row']} | {e['arm']} | {e['n']} | {e['mean']:.1f} | {100 * e['spread']:.1f} % | {r} | "
              f"{e['vs_sdpa']:.3f}x | {v} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
