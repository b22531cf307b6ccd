"""The decode step's model from a block timeline: per kind of launch its HBM
bytes, its floor at the card's copy bandwidth, what it adds to the step, and
how far over its floor it is; then how much the step must lose to reach a
fraction of the roofline (issue 17: 85 %).

    python benchmarks/step_model.py DIR/picture.json [--target 0.85] [--bandwidth 4.27]

DIR/picture.json is `decode_trace.py --out DIR`'s. A traced step is slower
than an untraced one by the stamps' cost (`decode_trace.py` prints it, ~3 %
on the H200, ~0.3 us a launch): the table is the traced step's, the line
under it scales the over-the-floor total to the untraced step. The
bandwidth is the run's own (the roofline it printed times the bytes), unless
given. Reads JSON and does arithmetic only: no GPU, no tilelang import.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def model(pic: dict, bandwidth: float, layers: int) -> dict:  # type: ignore[type-arg]
    """Per kind: bytes (all launches of the kind), floor (us at `bandwidth`,
    bytes/s), adds (us, the trace's), over = adds - floor, per layer (/
    `layers`: the step's per-layer kinds are `layers` launches each), share
    of the step's adds. Kinds sorted by over, largest first."""
    kinds = []
    for k in pic["kinds"]:
        nbytes = k["bytes_each"] * k["n"]
        floor = nbytes / bandwidth * 1e6
        kinds.append({"kind": f"{k['kernel']} {k['generics']}".strip(), "n": k["n"], "blocks": k["blocks"],
                      "bytes": nbytes, "floor_us": floor, "adds_us": k["adds_us"],
                      "over_us": k["adds_us"] - floor, "tail_us": k["tail_us"], "gap_us": k["gap_us"]})  # fmt: skip
    step = pic["step_adds_us"]
    for k in kinds:
        k["share"] = k["adds_us"] / step if step else 0.0
        k["over_layer_us"] = k["over_us"] / layers if k["n"] == layers else None
    kinds.sort(key=lambda k: -k["over_us"])
    floor = sum(k["floor_us"] for k in kinds)
    return {"kinds": kinds, "step_us": step, "floor_us": floor, "over_us": step - floor,
            "bytes": sum(k["bytes"] for k in kinds), "bandwidth": bandwidth}


def budget(m: dict, untraced_us: float | None, target: float) -> dict:  # type: ignore[type-arg]
    """What the step must lose to read at `target` of the roofline: against
    the untraced step where known (the traced one otherwise)."""
    step = untraced_us or m["step_us"]
    want = m["floor_us"] / target
    return {"step_us": step, "fraction": m["floor_us"] / step, "target_us": want, "cut_us": step - want}


def render(m: dict, b: dict, layers: int, target: float) -> str:  # type: ignore[type-arg]
    bw = m["bandwidth"] / 1e12
    lines = [
        f"| kind (sum over the step) | n | blocks | MB | floor at {bw:.2f} TB/s | adds | over | over a layer "
        "| share of the step | tail | gap |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k in m["kinds"]:
        per = f"{k['over_layer_us']:.2f}" if k["over_layer_us"] is not None else ""
        lines.append(f"| {k['kind']} | {k['n']} | {k['blocks']} | {k['bytes'] / 1e6:.1f} | {k['floor_us']:.1f} | "
                     f"{k['adds_us']:.1f} | {k['over_us']:.1f} | {per} | {k['share']:.1%} | {k['tail_us']:.1f} | "
                     f"{k['gap_us']:.1f} |")  # fmt: skip
    lines.append(f"| **step** | | | {m['bytes'] / 1e6:.1f} | {m['floor_us']:.1f} | {m['step_us']:.1f} | "
                 f"{m['over_us']:.1f} | {m['over_us'] / layers:.2f} | | | |")  # fmt: skip
    scale = b["step_us"] / m["step_us"]
    lines += [
        "",
        f"traced step {m['step_us']:.1f} us, floor {m['floor_us']:.1f} us ({m['floor_us'] / m['step_us']:.1%}); "
        f"untraced step {b['step_us']:.1f} us = {b['fraction']:.1%} of the roofline "
        f"(over the floor {b['step_us'] - m['floor_us']:.1f} us, the table's over x {scale:.3f})",
        f"{target:.0%} of the roofline: a step of {b['target_us']:.1f} us, {b['cut_us']:.1f} us less "
        f"({b['cut_us'] / layers:.2f} us a layer over {layers} layers)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("picture", help="decode_trace.py's picture.json")
    ap.add_argument("--target", type=float, default=0.85, help="fraction of the roofline")
    ap.add_argument("--bandwidth", type=float, default=0.0, help="TB/s (default: the run's own)")
    ap.add_argument("--layers", type=int, default=0, help="default: the most frequent kind's launch count")
    a = ap.parse_args(argv)
    rows = json.loads(Path(a.picture).read_text())
    for row in rows:
        pic = row["picture"]
        if "error" in pic:
            print(f"variant {json.dumps(row['variant'])}: {pic['error']}")
            continue
        layers = a.layers or statistics.mode(k["n"] for k in pic["kinds"])
        nbytes = sum(k["bytes_each"] * k["n"] for k in pic["kinds"])
        bw = a.bandwidth * 1e12 if a.bandwidth else row["roofline"] * nbytes
        m = model(pic, bw, layers)
        sp = row.get("speeds", {})
        untraced = [s["tok_s"] for key, s in sp.items() if key.startswith("untraced")]
        b = budget(m, 1e6 / statistics.mean(untraced) if untraced else None, a.target)
        print(f"variant {json.dumps(row['variant'])}:")
        print(render(m, b, layers, a.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
