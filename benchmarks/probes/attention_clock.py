"""The SM clock and the board power while attention prefill runs (issue 15).

    python benchmarks/probes/attention_clock.py [--seconds 1.5] [--rounds 2] [--out DIR]

f16 and bf16, S = 4096, D = 128, not causal (benchmarks/attention.py's row:
4 sequences of 16 heads), Tile's `std::attention::flash_attention` (128 x
128 blocks) and PyTorch's `scaled_dot_product_attention` in turn, each
launched back to back for `--seconds` while `nvidia-smi` samples the SM
clock, power draw and the active clock-throttle reasons every 20 ms. Each
phase's samples (by their timestamps, the first and last 100 ms dropped)
give its mean SM clock and power, beside its TFLOP/s (CUDA events). The
order alternates over `--rounds` so that heat does not favour one phase.
If f16 runs at a lower clock than bf16 at the power cap, the clock bounds
what a schedule can do in f16 (the issue's 700 TFLOP/s is met in bf16).
Writes `clock.json` (phases and raw samples) to `--out`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tilelang  # noqa: E402

QUERY = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active"


def phase(fn, seconds: float, flops: float) -> dict:  # type: ignore[no-untyped-def]
    """Launch `fn` back to back for about `seconds`; wall-clock bounds and TFLOP/s."""
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.time()
    a.record()
    n = 0
    while time.time() - t0 < seconds:
        for _ in range(8):
            fn()
        n += 8
        torch.cuda.synchronize()  # keep the queue short: the phase ends when the wall clock says
    b.record()
    b.synchronize()
    t1 = time.time()
    ms = a.elapsed_time(b) / n
    return {"t0": t0, "t1": t1, "calls": n, "ms": ms, "tflops": flops / ms / 1e9}


def parse(lines: list[str]) -> list[tuple[float, float, float, float, str]]:
    out = []
    for ln in lines:
        parts = [p.strip() for p in ln.split(",")]
        if len(parts) < 4:
            continue
        try:
            ts = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((ts, float(parts[1]), float(parts[2]), float(parts[3]), parts[4] if len(parts) > 4 else "?"))
        except ValueError:
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args(argv)
    attn = tilelang.compile("use std::attention::*;\n")
    s, d, h, b = 4096, 128, 16, 4
    flops = 4 * b * h * s * s * d
    fns = {}
    for name, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        g = torch.Generator(device="cuda").manual_seed(s + d)
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt, generator=g) for _ in range(3))
        o = torch.empty_like(q)
        kern = attn.flash_attention[name, 128, 128, d]
        q3, k3, v3 = (t.view(b * h, s, d) for t in (q, k, v))
        part = tilelang.partition(o.view(b * h, s, d), [1, 128, d])

        def tile(kern=kern, part=part, q3=q3, k3=k3, v3=v3):  # type: ignore[no-untyped-def]
            return kern(part, q3, k3, v3, d**-0.5, False).launch()

        def sdpa(q=q, k=k, v=v):  # type: ignore[no-untyped-def]
            return F.scaled_dot_product_attention(q, k, v)

        fns[f"{name} tile"], fns[f"{name} sdpa"] = tile, sdpa
    query = QUERY  # the throttle field's name differs between drivers: without it where refused
    if subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv"], capture_output=True).returncode:
        query = query.rsplit(",", 1)[0]
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-lms", "20",
                            "-i", str(torch.cuda.current_device())], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    order = ["f16 tile", "bf16 tile", "f16 sdpa", "bf16 sdpa"]
    phases = []
    for r in range(a.rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            phases.append({"name": name, "round": r, **phase(fns[name], a.seconds, flops)})
            time.sleep(0.2)
    time.sleep(0.3)
    smi.terminate()
    samples = parse(smi.communicate()[0].splitlines())
    rows = []
    for p in phases:
        inside = [x for x in samples if p["t0"] + 0.1 <= x[0] <= p["t1"] - 0.1]
        p["samples"] = len(inside)
        if inside:
            p["sm_mhz"] = statistics.mean(x[1] for x in inside)
            p["sm_mhz_min"] = min(x[1] for x in inside)
            p["power_w"] = statistics.mean(x[2] for x in inside)
            p["temp_c"] = max(x[3] for x in inside)
            p["throttle"] = sorted({x[4] for x in inside})
        rows.append(p)
        print(f"{p['name']:10s} round {p['round']}: {p['tflops']:6.1f} TFLOP/s, SM {p.get('sm_mhz', 0):6.0f} MHz "
              f"(min {p.get('sm_mhz_min', 0):.0f}), {p.get('power_w', 0):5.0f} W, {p.get('temp_c', 0):.0f} C, "
              f"throttle {p.get('throttle')}, {p['samples']} samples", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "clock.json").write_text(json.dumps({"phases": rows, "samples": samples}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
