"""A model of attention.py's non-causal prefill rows (issue 15; hattn3, 2026-12-06; no GPU: reads a table).

Every prefill row puts 16,384 tokens in a call, so a head dim makes the same number of 128 x 128 tiles at every S
(D = 128: 2,048; D = 64: 4,096) and the same last-round share on the card's SMs; what differs is the key blocks a
tile, n = S / BN. If a tile costs (n + c) key blocks' time, TFLOP/s = K n / (n + c). Two rows of one dtype and D fix
c and K; the script fits them from the two longest S and prints, for each row, the model's TFLOP/s, the
measured, the tile's boundary share c / (n + c), the persistent walk's last-round idle share (ceil(r) / r - 1 for
r = tiles / SMs rounds), and what c would reach `--target` TFLOP/s at each S.

    python benchmarks/prefill_model.py OUT/attention.json            (attention.py's JSON: its "rows")
    python benchmarks/prefill_model.py prefill.log --target 700      (or its markdown table, as call logs keep it)

Call 19 (H100, f16 D = 128 full: 581 / 673 / 701 at S = 1,024 / 4,096 / 16,384) fits c = 1.80 blocks, and
predicts 580 at 1,024 from the other two; 700 at 4,096 needs c <= 0.47 (RESULTS.md "hattn3").
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

BM = BN = 128  # the bench's blocks (attention.py's `blocks()` on a GPU)
TOKENS = 16384


def fit(n1: float, t1: float, n2: float, t2: float) -> tuple[float, float]:
    """(c, K) of t = K n / (n + c) through (n1, t1) and (n2, t2), n1 < n2."""
    r = t2 / t1
    c = n1 * n2 * (r - 1) / (n2 - r * n1)
    return c, t2 * (n2 + c) / n2


def need(n: float, k: float, target: float) -> float:
    """The c at which K n / (n + c) reaches `target` (negative: unreachable however small c gets)."""
    return n * (k / target - 1)


def idle(d: int, s: int, sms: int) -> float:
    """The persistent walk's last-round idle share for a non-causal row: tiles / SMs rounds run as whole rounds
    (before any split of the last round along the keys: the D = 64 long keys' kernel splits it by default)."""
    tiles = (TOKENS // s) * (2048 // d) * math.ceil(s / BM)
    r = tiles / sms
    return math.ceil(r) / r - 1


def read(path: Path) -> list[dict]:  # type: ignore[type-arg]
    """The non-causal prefill rows of attention.py's JSON (`rows`) or of its markdown table."""
    text = path.read_text()
    if path.suffix == ".json":
        rows = json.loads(text)["rows"]
        return [{"dtype": r["dtype"], "D": int(r["D"]), "S": int(r["S"]), "tflops": float(r["tile_tflops"])}
                for r in rows if r.get("kind") == "prefill" and not r["causal"]]
    out, seen = [], set()
    for m in re.finditer(r"^\| (f16|bf16) D=(\d+) full S=(\d+)[^|]*\| ([\d.]+) TFLOP/s", text, re.M):
        key = (m.group(1), int(m.group(2)), int(m.group(3)))
        if key not in seen:  # (a log may print the table twice)
            seen.add(key)
            out.append({"dtype": key[0], "D": key[1], "S": key[2], "tflops": float(m.group(4))})
    return out


def model(rows: list[dict], sms: int, target: float) -> list[str]:  # type: ignore[type-arg]
    lines = []
    for dt, d in sorted({(r["dtype"], r["D"]) for r in rows}):
        mine = sorted((r for r in rows if r["dtype"] == dt and r["D"] == d), key=lambda r: r["S"])
        if len(mine) < 2:
            continue
        a, b = mine[-2], mine[-1]
        c, k = fit(a["S"] / BN, a["tflops"], b["S"] / BN, b["tflops"])
        lines.append(f"{dt} D={d} full: c = {c:.2f} key blocks a tile (fit at S = {a['S']}, {b['S']}), "
                     f"K = {k:.1f} TFLOP/s as n -> inf")
        for r in mine:
            n = r["S"] / BN
            want = need(n, k, target)
            reach = f"{target:g} needs c <= {want:.2f}" if want >= 0 else f"{target:g} out of reach at this K"
            lines.append(f"  S={r['S']:6d} n={n:5.0f}  model {k * n / (n + c):6.1f}  measured {r['tflops']:6.1f}  "
                         f"boundary {c / (n + c):5.1%}  last round idle {idle(d, r['S'], sms):4.1%}  {reach}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("table", type=Path, help="attention.py's attention.json, or a log with its markdown table")
    ap.add_argument("--target", type=float, default=700.0)
    ap.add_argument("--sms", type=int, default=132)
    a = ap.parse_args(argv)
    rows = read(a.table)
    if not rows:
        print(f"{a.table}: no non-causal prefill rows", file=sys.stderr)
        return 1
    print("\n".join(model(rows, a.sms, a.target)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
