"""`decode_ab.py`'s rows folded by variant: where a run repeats variants in
mirrored order (A B C C B A), each variant's mean tok/s over its rows, its
spread, and its ratio to the first variant's mean (the baseline), per context.

    python benchmarks/ab_summary.py DIR/ab/ab_4b_1024_8192_nvjitlink.json
    python benchmarks/ab_summary.py DIR/ab.log    (its printed rows: a run cut short writes no JSON)

A ratio is read against the baseline's own spread: a variant whose gain is
not above both spreads has not shown one. Reads JSON only: no GPU.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def summary(rows: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    """One entry a (context, variant), in first-seen order: n rows, mean and
    spread ((max - min) / mean) of tok/s, the ratio to the context's first
    variant's mean, and whether every row decoded the first row's tokens."""
    groups: dict[tuple[int, str], list[dict]] = {}  # type: ignore[type-arg]
    for r in rows:
        groups.setdefault((r["ctx"], json.dumps(r["variant"], sort_keys=True)), []).append(r)
    base: dict[int, float] = {}
    out = []
    for (ctx, v), rs in groups.items():
        tok = [r["tok_s"] for r in rs]
        mean = statistics.mean(tok)
        base.setdefault(ctx, mean)
        out.append({"ctx": ctx, "variant": v, "n": len(rs), "tok_s": mean,
                    "spread": (max(tok) - min(tok)) / mean, "ratio": mean / base[ctx],
                    "roofline": rs[0]["roofline"], "same_tokens": all(r["same_tokens"] for r in rs)})  # fmt: skip
    return out


ROW = re.compile(r"^ctx\s+(\d+) ")
TAIL = re.compile(r"^\s*([\d.]+) tok/s .*? of (\d+); .*same tokens (True|False)")


def log_rows(text: str) -> list[dict]:  # type: ignore[type-arg]
    """The rows `decode_ab.py` printed ("ctx   1024 {variant} 401.2 tok/s (...) 77.0% of 521; ...
    same tokens True; ..."), as its JSON has them (ctx, variant, tok_s, roofline, same_tokens)."""
    out = []
    for line in text.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        try:
            v, end = json.JSONDecoder().raw_decode(line, m.end())
        except json.JSONDecodeError:
            continue
        t = TAIL.match(line[end:])
        if t:
            out.append({"ctx": int(m.group(1)), "variant": v, "tok_s": float(t.group(1)),
                        "roofline": float(t.group(2)), "same_tokens": t.group(3) == "True"})  # fmt: skip
    return out


def render(entries: list[dict]) -> str:  # type: ignore[type-arg]
    lines = ["| ctx | variant | rows | tok/s (mean) | spread | vs the first | of the roofline | same tokens |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for e in entries:
        lines.append(f"| {e['ctx']:,} | `{e['variant']}` | {e['n']} | {e['tok_s']:.1f} | {e['spread']:.2%} | "
                     f"{e['ratio'] - 1:+.2%} | {e['tok_s'] / e['roofline']:.1%} | {e['same_tokens']} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="decode_ab.py's ab_*.json, or its printed log")
    a = ap.parse_args(argv)
    for f in a.files:
        text = Path(f).read_text()
        rows = json.loads(text)["rows"] if f.endswith(".json") else log_rows(text)
        print(f"{f}:")
        print(render(summary(rows)) if rows else "no rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
