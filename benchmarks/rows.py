"""Row kernels at the memory limit: softmax and layernorm (f32), Tile against
Triton and PyTorch, in one run (issue 14's targets), plus the vector add.

    python benchmarks/rows.py [--out DIR] [--quick]     # on a GPU: the table
    python benchmarks/rows.py --ptxas                   # anywhere: registers and
                                                        # spills of every Tile config

Tile's kernels are `benchmarks/rows.tile`, called through the Python API on
PyTorch CUDA tensors (in place, on PyTorch's stream), with
`#[hints(num_warps = W)]` added per configuration (and each also bounded to
about `--cap-warps` resident warps an SM by `max_blocks`): for each shape the table
shows the best Tile configuration (one-tile rows, or rows walked in column
tiles) and the best Triton one (one row per program, the whole row in one
block, `num_warps` in {4, 8, 16, 32}; layernorm as Triton's tutorial, walking
the row in blocks of at most 16384 or of the whole row). GB/s counts the bytes
read and written once (2 * M * N * 4). Timing: CUDA events around one launch,
with the stream kept busy by a 2 ms sleep kernel while the host submits (so
the host's work per call, larger for a checked Tile call than for Triton's
launcher, is not counted: this is device time), median of `--reps`; every output is checked against PyTorch (in f64 for the error) after
poisoning it with NaN.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SRC = (ROOT / "rows.tile").read_text(encoding="utf-8")

SHAPES = [(32768, 8192), (4096, 32768), (65536, 1024), (32768, 2560)]
OPS = ("softmax", "layernorm")
EPS = 1e-5


def tile_configs(n: int, op: str = "softmax", quick: bool = False) -> list[tuple[str, int, int, int]]:
    """(kind, BM, BN, num_warps) to try for rows of width n (BN = 0: one tile).
    Chosen from `--ptxas` (no spills): about 8 to 32 values a thread."""
    if n <= 1024:
        out = [("rows", 1, 0, 4), ("rows", 4, 0, 4), ("rows", 2, 0, 4), ("rows", 8, 0, 8)]
    elif n <= 4096:
        out = [("rows", 1, 0, 8), ("rows", 1, 0, 4), ("rows", 2, 0, 8), ("rows", 4, 0, 16)]
        if op == "softmax":  # a warp a row: no barrier in the block (layernorm's spills there)
            out += [("rows", 4, 0, 4), ("rows", 1, 0, 1)]
    elif n <= 8192:
        out = [("rows", 1, 0, 16), ("rows", 1, 0, 32), ("rows", 1, 0, 8), ("looped", 1, 2048, 8)]
    else:
        out = [("looped", 1, 8192, 32), ("looped", 1, 4096, 16)]
        if op == "softmax":  # layernorm's whole row spills at 16 and 32 warps
            out[:0] = [("rows", 1, 0, 32), ("rows", 1, 0, 16)]
    return out[:2] if quick else out


def tile_source(kind: str, op: str, warps: int, max_blocks: int = 0) -> str:
    name = f"kernel fn {op}_{kind}<"
    assert name in SRC, name
    cap = f", max_blocks = {max_blocks}" if max_blocks else ""
    return SRC.replace(name, f"#[hints(num_warps = {warps}{cap})]\n{name}")


def capped(configs: list[tuple[str, int, int, int]], warps_an_sm: tuple[int, ...]) -> list[tuple[str, int, int, int, int]]:
    """Each configuration as is (max_blocks 0) and bounded to about each of
    `warps_an_sm` resident warps an SM (`#[hints(max_blocks = ..)]`), where
    that is below the 64 the threads allow."""
    out = []
    for kind, bm, bn, w in configs:
        out.append((kind, bm, bn, w, 0))
        for mb in sorted({max(1, cap // w) for cap in warps_an_sm if cap // w < 64 // w}):
            out.append((kind, bm, bn, w, mb))
    return out


# ---------------------------------------------------------------- ptxas report (no GPU)
def tile_ptx(kind: str, op: str, bm: int, n: int, bn: int, w: int, arch: str = "sm_90a") -> str:
    """The PTX of one configuration of `rows.tile`'s kernels (`bn` 0: one tile a
    row), through a `main` that instantiates it."""
    from tilelang import driver

    src = tile_source(kind, op, w)
    gen = f"::<{bm}, {n}, {bn}>" if bn else f"::<{bm}, {n}>"
    extra = ", &w, &b, 1e-5" if op == "layernorm" else ""
    src += (f"\nfn main() {{\n    let x = zeros::<f32>([4, {n}]);\n    let w = zeros::<f32>([{n}]);\n"
            f"    let b = zeros::<f32>([{n}]);\n    let mut y = zeros::<f32>([4, {n}]);\n"
            f"    {op}_{kind}{gen}(y.partition([{bm}, {n}]), &x{extra}).sync();\n}}\n")
    with tempfile.NamedTemporaryFile("w", suffix=".tile", delete=False) as f:
        f.write(src)
    try:
        r = driver.compile(Path(f.name), "ptx", options=driver.Options(kernel=f"{op}_{kind}", arch=arch))
    finally:
        os.unlink(f.name)
    assert r.ok, r.diagnostics
    return driver.format_output("ptx", r)


def ptxas_report(arch: str = "sm_90a") -> list[dict[str, Any]]:
    """Registers, spill stores and barriers of every configuration, from ptxas -v."""
    rows = []
    for op in OPS:
        for _, n in SHAPES:
            for kind, bm, bn, w in tile_configs(n, op):
                ptx = tile_ptx(kind, op, bm, n, bn, w, arch)
                with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                    f.write(ptx)
                p = subprocess.run(["ptxas", f"-arch={arch}", "-v", "-o", os.devnull, f.name],
                                   capture_output=True, text=True)
                os.unlink(f.name)
                regs = re.search(r"Used (\d+) registers", p.stderr)
                spill = re.search(r"(\d+) bytes spill stores", p.stderr)
                stack = re.search(r"(\d+) bytes cumulative stack size", p.stderr)
                rows.append({"op": op, "n": n, "kind": kind, "bm": bm, "bn": bn, "warps": w,
                             "regs": int(regs.group(1)) if regs else -1,
                             "spill": int(spill.group(1)) if spill else 0,
                             "stack": int(stack.group(1)) if stack else 0,
                             "bar": ptx.count("bar.sync"), "ok": p.returncode == 0})
                print(f"{op:9} N={n:6} {kind:6} BM={bm} BN={bn:5} W={w:2}: regs {rows[-1]['regs']:3} "
                      f"stack {rows[-1]['stack']:4} bar {rows[-1]['bar']}", flush=True)
    return rows


# ---------------------------------------------------------------- timing
def timer(torch: Any, reps: int) -> Callable[[Callable[[], Any], Callable[[Any], None]], float]:
    """Median device time (ms) of `start()`; `finish(h)` waits for its handle."""

    def run(start: Callable[[], Any], finish: Callable[[Any], None]) -> float:
        ts = []
        for i in range(reps + 2):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            # Keep the stream busy (about 2 ms) while the host submits: a Tile call
            # through the Python API checks its arguments and borrows on the host
            # (a few hundred microseconds), which must not count as kernel time.
            torch.cuda._sleep(4_000_000)
            e0.record()
            h = start()
            e1.record()
            finish(h)
            e1.synchronize()
            if i >= 2:
                ts.append(e0.elapsed_time(e1))
        return statistics.median(ts)

    return run


def triton_kernels() -> dict[str, Any]:
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * stride + offs, y, mask=mask)

    @triton.jit
    def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        row = tl.program_id(0).to(tl.int64)
        x_ptr += row * stride
        y_ptr += row * stride
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            a = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
            a = tl.where(cols < n_cols, a - mean, 0.0)
            acc += a * a
        rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for off in range(0, n_cols, BLOCK):
            cols = off + tl.arange(0, BLOCK)
            mask = cols < n_cols
            w = tl.load(w_ptr + cols, mask=mask)
            b = tl.load(b_ptr + cols, mask=mask)
            a = tl.load(x_ptr + cols, mask=mask, other=0.0)
            tl.store(y_ptr + cols, (a - mean) * rstd * w + b, mask=mask)

    return {"softmax": softmax_kernel, "layernorm": layernorm_kernel}


def triton_configs(op: str, n: int) -> list[tuple[int, int]]:
    """(BLOCK, num_warps): Triton's usual choices for a row of width n (its
    tutorials' heuristics and their neighbours)."""
    p2 = 1 << (n - 1).bit_length()
    warps = (4, 8) if p2 <= 2048 else (4, 8, 16) if p2 <= 4096 else (8, 16, 32)
    blocks = [p2] if op == "softmax" else sorted({min(16384, p2), p2})
    return [(b, w) for b in blocks for w in warps]


# ---------------------------------------------------------------- the run
def bench(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    import tilelang

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    res: dict[str, Any] = {"device": props.name, "sms": props.multi_processor_count,
                           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": []}
    tk = triton_kernels()
    t = timer(torch, args.reps)
    mods: dict[tuple[str, str, int, int], Any] = {}

    def module(kind: str, op: str, w: int, mb: int) -> Any:
        key = (kind, op, w, mb)
        if key not in mods:
            mods[key] = tilelang.compile(tile_source(kind, op, w, mb), name=f"rows_{kind}_{op}_w{w}_mb{mb}.tile")
        return mods[key]

    shapes = [s for s in SHAPES if not args.shapes or f"{s[0]}x{s[1]}" in args.shapes.split(",")]
    for m, n in shapes:
        gen = torch.Generator(device=dev).manual_seed(m + n)
        x = torch.randn((m, n), device=dev, generator=gen, dtype=torch.float32) * 2
        w = torch.rand((n,), device=dev, generator=gen) + 0.5
        b = torch.randn((n,), device=dev, generator=gen)
        y = torch.empty_like(x)
        nbytes = 2 * m * n * 4
        for op in OPS:
            if op == "softmax":
                ref = torch.softmax(x, dim=1)
                torch_fn = lambda x=x: torch.softmax(x, dim=1)  # noqa: E731
            else:
                ref = torch.nn.functional.layer_norm(x, (n,), w, b, EPS)
                torch_fn = lambda x=x, n=n, w=w, b=b: torch.nn.functional.layer_norm(x, (n,), w, b, EPS)  # noqa: E731
            refn = ref[:256].double()

            def err(y: Any = y, refn: Any = refn) -> float:
                got = y[:256].double()
                if torch.isnan(y).any():
                    return float("inf")
                return float((got - refn).norm() / refn.norm())

            row: dict[str, Any] = {"op": op, "shape": f"{m}x{n}", "tile": {}, "triton": {}}
            row["torch_gbs"] = nbytes / t(torch_fn, lambda h: None) / 1e6
            for kind, bm, bn, wp, mb in capped(tile_configs(n, op, args.quick), args.cap_warps):
                name = f"{kind} BM={bm}{f' BN={bn}' if bn else ''} W={wp}{f' MB={mb}' if mb else ''}"
                try:
                    mod = module(kind, op, wp, mb)
                    k = getattr(mod, f"{op}_{kind}")
                    if bn:
                        k = k[bm, n, bn]
                    extra = (w, b, EPS) if op == "layernorm" else ()

                    def call(k=k, bm=bm, extra=extra, x=x, y=y, n=n) -> Any:  # type: ignore[no-untyped-def]
                        return k(tilelang.partition(y, [bm, n]), x, *extra)

                    y.fill_(float("nan"))
                    call().sync()
                    e = err()
                    ms = t(lambda call=call: call().launch(), lambda h: h.wait())
                    row["tile"][name] = {"gbs": nbytes / ms / 1e6, "err": e}
                except Exception as ex:  # keep going: one broken config must not hide the rest
                    row["tile"][name] = {"error": repr(ex)[:300]}
                print(f"  tile {op} {m}x{n} {name}: {row['tile'][name]}", flush=True)
            for block, wp in triton_configs(op, n):
                name = f"BLOCK={block} W={wp}"
                try:
                    kern = tk[op]
                    if op == "softmax":
                        launch = lambda kern=kern, block=block, wp=wp, x=x, y=y, m=m, n=n: kern[(m,)](  # noqa: E731
                            x, y, n, x.stride(0), BLOCK=block, num_warps=wp)
                    else:
                        launch = lambda kern=kern, block=block, wp=wp, x=x, y=y, w=w, b=b, m=m, n=n: kern[(m,)](  # noqa: E731
                            x, y, w, b, n, x.stride(0), EPS, BLOCK=block, num_warps=wp)
                    y.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                    e = err()
                    ms = t(launch, lambda h: None)
                    row["triton"][name] = {"gbs": nbytes / ms / 1e6, "err": e}
                except Exception as ex:
                    row["triton"][name] = {"error": repr(ex)[:300]}
                print(f"  triton {op} {m}x{n} {name}: {row['triton'][name]}", flush=True)

            def best(d: dict[str, Any]) -> tuple[str, float]:
                ok = [(k2, v["gbs"]) for k2, v in d.items() if "gbs" in v and v["err"] < 1e-4]
                return max(ok, key=lambda kv: kv[1]) if ok else ("none", float("nan"))

            row["tile_best"], row["triton_best"] = best(row["tile"]), best(row["triton"])
            res["rows"].append(row)
            print(f"{op} {m}x{n}: tile {row['tile_best']} triton {row['triton_best']} "
                  f"torch {row['torch_gbs']:.0f} GB/s", flush=True)
        torch.cuda.empty_cache()

    # vector add (examples/add.tile), 2^28 f32
    nv = 1 << 28
    a = torch.randn(nv, device=dev)
    c = torch.randn(nv, device=dev)
    z = torch.empty_like(a)
    add = tilelang.load(ROOT.parent / "examples" / "add.tile").add
    add(tilelang.partition(z, [1024]), a, c).sync()
    ok = bool(torch.equal(z, a + c))
    ms = t(lambda: add(tilelang.partition(z, [1024]), a, c).launch(), lambda h: h.wait())
    tms = t(lambda: torch.add(a, c, out=z), lambda h: None)
    t0 = time.perf_counter()
    for _ in range(20):
        add(tilelang.partition(z, [1024]), a, c).launch().wait()
    host_us = (time.perf_counter() - t0) / 20 * 1e6
    res["vector_add"] = {"tile_tbs": 3 * nv * 4 / ms / 1e9, "torch_tbs": 3 * nv * 4 / tms / 1e9, "exact": ok,
                         "tile_call_launch_wait_us": host_us}
    return res


def table(res: dict[str, Any]) -> str:
    lines = [f"{res['device']} ({res['sms']} SMs), {res['date']}", "",
             "| op | shape | Tile GB/s (config) | Triton GB/s (config) | PyTorch GB/s | Tile/Triton | Tile/PyTorch |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in res["rows"]:
        (tc, tg), (rc, rg) = r["tile_best"], r["triton_best"]
        lines.append(f"| {r['op']} | {r['shape']} | {tg:.0f} ({tc}) | {rg:.0f} ({rc}) | {r['torch_gbs']:.0f} | "
                     f"{tg / rg:.2f} | {tg / r['torch_gbs']:.2f} |")
    va = res.get("vector_add")
    if va:
        lines.append("")
        lines.append(f"vector add 2^28 f32: Tile {va['tile_tbs']:.2f} TB/s, PyTorch {va['torch_tbs']:.2f} TB/s, "
                     f"exact {va['exact']}; one Tile call + launch + wait: {va['tile_call_launch_wait_us']:.0f} us")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="fewer Tile configurations")
    ap.add_argument("--shapes", default="", help="comma-separated MxN subset")
    ap.add_argument("--cap-warps", type=lambda v: tuple(int(x) for x in v.split(",") if x), default=(24, 40),
                    help="also each configuration with max_blocks bounding it to about these resident warps an SM ('': none)")
    ap.add_argument("--ptxas", action="store_true", help="only report ptxas registers/spills (no GPU)")
    a = ap.parse_args()
    if a.ptxas:
        ptxas_report()
        return 0
    res = bench(a)
    text = table(res)
    print(text)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "rows.json").write_text(json.dumps(res, indent=1, default=str))
    (Path(a.out) / "rows.md").write_text(text + "\n")
    print(roofline(res, Path(a.out) / "roofline_rows.png"))
    return 0


# FLOPs counted per element for the roofline: softmax max, subtract, exp, sum,
# scale; layernorm sum, subtract, square, sum, rsqrt-scale, weight, bias.
FLOPS_PER_ELEMENT = {"softmax": 5, "layernorm": 7}


def roofline(res: dict[str, Any], path: Path) -> str:
    """The best Tile, Triton and PyTorch point of each row shape (and the
    vector add) on the card's roofline (`_roofline.py`)."""
    import _roofline

    points = []
    for r in res.get("rows", []):
        m, n = (int(v) for v in str(r["shape"]).lower().split("x"))
        nbytes = 2 * m * n * 4
        flops = FLOPS_PER_ELEMENT.get(r["op"], 1) * m * n
        for who, gbs in (("Tile", r["tile_best"][1]), ("Triton", r["triton_best"][1]),
                         ("PyTorch", r["torch_gbs"])):  # fmt: skip
            if gbs:
                points.append((f"{who} {r['op']} {m}x{n}", flops, nbytes, nbytes / (gbs * 1e9)))
    va = res.get("vector_add")
    if va:
        nv = 1 << 28
        for who, tbs in (("Tile", va["tile_tbs"]), ("PyTorch", va["torch_tbs"])):
            points.append((f"{who} add 2^28", nv, 12 * nv, 12 * nv / (tbs * 1e12)))
    return _roofline.write(points, path, "rows.py", str(res.get("device", "")) or None)


if __name__ == "__main__":
    sys.exit(main())
