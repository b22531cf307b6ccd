"""Why Triton's row softmax reads ~1 % faster than Tile's at 32768x2560 (issue 14):
both kernels' PTX, edited one difference at a time, launched the same way.

    python benchmarks/softmax_ab.py [--shape 32768x2560] [--rounds 40] [--out DIR]

Every candidate is timed as `rows.py` times a launch (a ~2 ms sleeping kernel,
then events around one launch), all candidates interleaved round by round
(the order reversed every other round), medians in GB/s:

- `triton` / `tile api`: each kernel through its own launcher;
- `raw <base>[+edit]`: the PTX of Triton's 8-warp kernel (taken from the
  compiled kernel) or of Tile's one-row, 8-warp kernel (`rows.tile_ptx`),
  loaded by the driver's JIT through CuPy and launched the same way, unedited
  or with one edit of `EDITS` (each turns one instruction form of one kernel
  into the other kernel's);
- `occ <base> k`: the unedited PTX with k blocks an SM at most, by a dummy
  dynamic shared-memory request, every `occ` row under the same fixed
  shared-memory carveout (so every one has the same L1).

Each candidate's output is checked against `torch.softmax` first. A GPU, PyTorch,
Triton and CuPy are needed; `EDITS` and `tile_ptx` are plain text work, tested on
the CPU (`tests/benchmarks/test_softmax_ab.py`).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rows

SMEM_PER_SM = 228 * 1024
CARVEOUT_PCT = 50  # the fixed carveout of the `occ` rows: room for 8 blocks' dummy buffers


def _must(new: str, old: str, what: str) -> str:
    if new == old:
        raise ValueError(f"edit {what!r} changed nothing: the PTX has another form")
    return new


def triton_ftz(ptx: str) -> str:
    """Triton's exp2 flushes denormals as Tile's does."""
    return _must(ptx.replace("ex2.approx.f32", "ex2.approx.ftz.f32"), ptx, "triton_ftz")


def triton_rcp(ptx: str) -> str:
    """Triton divides by the row sum as Tile does: one `rcp.rn`, then a multiply each."""
    m = re.search(r"div\.full\.f32\s+%r\d+, %r\d+, (%r\d+);", ptx)
    if m is None:
        raise ValueError("edit 'triton_rcp': no div.full.f32 in the PTX")
    den = m.group(1)
    decl = re.search(r"\.reg \.b32\s+%r<\d+>;", ptx)
    assert decl is not None
    out = ptx[:decl.end()] + "\n\t.reg .b32 \t%rinv;" + ptx[decl.end():]
    first = out.index(m.group(0))
    out = out[:first] + f"rcp.rn.f32 \t%rinv, {den};\n\t" + out[first:]
    out = re.sub(rf"div\.full\.f32(\s+)(%r\d+), (%r\d+), {den};", r"mul.f32\1\2, \3, %rinv;", out)
    return _must(out, ptx, "triton_rcp")


def triton_no_dead_chunk(ptx: str) -> str:
    """Without the chunk every thread masks off (Triton pads 2560 to 4096: its
    fourth 16-byte chunk is never in bounds): its load and store go."""
    lines = ptx.split("\n")
    preds = [re.match(r"\s*@(%p\d+) ld\.global", x) for x in lines]
    loads = [m.group(1) for m in preds if m]
    if not loads:
        raise ValueError("edit 'triton_no_dead_chunk': no predicated loads")
    dead = loads[-1]
    out = [x for x in lines if not re.match(rf"\s*@{dead} (ld|st)\.global", x)]
    return _must("\n".join(out), ptx, "triton_no_dead_chunk")


def tile_rcp_approx(ptx: str) -> str:
    """Tile's reciprocal of the row sum without the IEEE path (Triton's div.full is approximate)."""
    return _must(ptx.replace("rcp.rn.f32", "rcp.approx.ftz.f32"), ptx, "tile_rcp_approx")


def tile_max(ptx: str) -> str:
    """Tile's row max without NaN propagation (Triton's `max.f32`)."""
    return _must(ptx.replace("max.NaN.f32", "max.f32"), ptx, "tile_max")


def tile_plain_loads(ptx: str) -> str:
    """Tile's loads through the ordinary path (Triton's), not the read-only one."""
    return _must(ptx.replace("ld.global.nc.", "ld.global."), ptx, "tile_plain_loads")


def tile_all(ptx: str) -> str:
    return tile_plain_loads(tile_max(tile_rcp_approx(ptx)))


EDITS: dict[str, tuple[str, Callable[[str], str]]] = {
    "ftz": ("triton", triton_ftz),
    "rcp": ("triton", triton_rcp),
    "no_dead_chunk": ("triton", triton_no_dead_chunk),
    "rcp_approx": ("tile", tile_rcp_approx),
    "max": ("tile", tile_max),
    "plain_loads": ("tile", tile_plain_loads),
    "all3": ("tile", tile_all),
}


def dummy_smem(blocks: int, pct: int = CARVEOUT_PCT) -> int:
    """Dynamic shared memory a block asks for so that at most `blocks` fit the
    carveout of `pct` % (each block also holds 1 KB the hardware reserves)."""
    carve = SMEM_PER_SM * pct // 100
    return carve // (blocks + 1) + 1 if blocks < 32 else 0


def bench(args: argparse.Namespace) -> dict[str, Any]:
    import cupy as cp
    import numpy as np
    import torch
    from cuda.bindings import driver as cu

    import tilelang

    m, n = (int(v) for v in args.shape.split("x"))
    x = torch.randn((m, n), device="cuda") * 2
    y = torch.empty_like(x)
    ref = torch.softmax(x, 1)
    flag = torch.zeros(16, dtype=torch.int32, device="cuda")
    nbytes = 2 * m * n * 4
    block = 1 << (n - 1).bit_length()
    tk = rows.triton_kernels()["softmax"]
    compiled = tk[(m,)](x, y, n, x.stride(0), BLOCK=block, num_warps=8)
    bases = {"triton": compiled.asm["ptx"], "tile": rows.tile_ptx("rows", "softmax", 1, n, 0, 8)}
    triton_smem = int(compiled.metadata.shared)
    targs = (np.uint64(x.data_ptr()), np.uint64(y.data_ptr()), np.int32(n), np.int32(n), np.uint64(0), np.uint64(0))
    largs = (np.uint64(y.data_ptr()), np.uint32(m), np.uint32(n), np.uint64(x.data_ptr()), np.uint32(m),
             np.uint32(n), np.uint64(flag.data_ptr()))
    tmp = Path(args.out) / "softmax_ab_ptx"
    tmp.mkdir(parents=True, exist_ok=True)
    carve_attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    smem_attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

    def raw(base: str, ptx: str, smem: int = 0, carve: int | None = None) -> tuple[Callable[[], Any], int, int]:
        """A raw launch of `ptx` (Triton's or Tile's parameters), its registers,
        and the blocks an SM the driver allows it."""
        path = tmp / f"{base}_{len(list(tmp.iterdir()))}.ptx"
        path.write_text(ptx)
        fn = cp.RawModule(path=str(path)).get_function("softmax_kernel" if base == "triton" else "softmax_rows")
        h = cu.CUfunction(int(getattr(fn, "kernel", fn).ptr))
        if carve is not None:
            assert cu.cuFuncSetAttribute(h, carve_attr, carve)[0] == cu.CUresult.CUDA_SUCCESS
        if smem > 48 * 1024:
            assert cu.cuFuncSetAttribute(h, smem_attr, smem)[0] == cu.CUresult.CUDA_SUCCESS
        a = targs if base == "triton" else largs
        sm = (triton_smem if base == "triton" else 64) + smem
        occ = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(h, 256, sm)
        assert occ[0] == cu.CUresult.CUDA_SUCCESS, occ
        return (lambda: fn((m, 1, 1), (256, 1, 1), a, shared_mem=sm)), fn.num_regs, int(occ[1])

    cands: dict[str, tuple[Callable[[], Any], Callable[[Any], None] | None]] = {}
    cands["triton"] = (lambda: tk[(m,)](x, y, n, x.stride(0), BLOCK=block, num_warps=8), None)
    k = tilelang.compile(rows.tile_source("rows", "softmax", 8), name="softmax_ab_w8.tile").softmax_rows
    cands["tile api"] = (lambda: k(tilelang.partition(y, [1, n]), x).launch(), lambda h: h.wait())
    for base, ptx in bases.items():
        f, regs, occ = raw(base, ptx)
        cands[f"raw {base} ({regs} regs, {occ} blocks an SM)"] = (f, None)
    for name, (base, edit) in EDITS.items():
        f, regs, occ = raw(base, edit(bases[base]))
        cands[f"raw {base}+{name} ({regs} regs, {occ} blocks an SM)"] = (f, None)
    for base, ptx in bases.items():
        for blocks in args.occupancy:
            f, _, occ = raw(base, ptx, dummy_smem(blocks), CARVEOUT_PCT)
            cands[f"occ {base} <= {blocks} (driver: {occ} blocks an SM)"] = (f, None)
    for blocks in args.grid_blocks:  # Tile's PTX at `blocks` an SM under each carveout
        for kb in args.grid_carve:
            share = kb * 1024 // blocks // 128 * 128  # as runtime/occupancy.plan pads
            if share < 1024 + 64 or (blocks + 1) * share <= kb * 1024:
                continue  # too small for the kernel, or does not bound it
            pct = max(1, kb * 1024 * 100 // SMEM_PER_SM)
            f, _, occ = raw("tile", bases["tile"], share - 1024 - 64, pct)
            cands[f"grid tile {blocks} blocks, carveout {kb} KB (driver: {occ})"] = (f, None)
    for mb in args.api_caps:
        kc = tilelang.compile(rows.tile_source("rows", "softmax", 8, mb), name=f"softmax_ab_w8_mb{mb}.tile").softmax_rows
        cands[f"tile api max_blocks {mb}"] = (lambda kc=kc: kc(tilelang.partition(y, [1, n]), x).launch(),
                                              lambda h: h.wait())
    cands["copy"] = (lambda: y.copy_(x), None)

    errors = {}
    for name, (start, fin) in cands.items():
        y.fill_(float("nan"))
        h = start()
        if fin:
            fin(h)
        torch.cuda.synchronize()
        if name != "copy":
            errors[name] = float((y.double() - ref.double()).norm() / ref.double().norm())
    ts: dict[str, list[float]] = {c: [] for c in cands}
    order = list(cands)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            start, fin = cands[name]
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(4_000_000)
            e0.record()
            h = start()
            e1.record()
            if fin:
                fin(h)
            e1.synchronize()
            ts[name].append(e0.elapsed_time(e1))
    gbs = {c: nbytes / statistics.median(v) / 1e6 for c, v in ts.items()}
    return {"device": torch.cuda.get_device_name(), "shape": args.shape, "rounds": args.rounds,
            "gbs": gbs, "best_gbs": {c: nbytes / min(v) / 1e6 for c, v in ts.items()}, "errors": errors}


def table(res: dict[str, Any]) -> str:
    ref = res["gbs"]["triton"]
    lines = [f"{res['device']}, softmax {res['shape']} f32, {res['rounds']} interleaved rounds", "",
             "| candidate | GB/s (median) | best | / Triton | error |", "| --- | --- | --- | --- | --- |"]
    for c, v in sorted(res["gbs"].items(), key=lambda kv: -kv[1]):
        err = res["errors"].get(c)
        lines.append(f"| {c} | {v:.1f} | {res['best_gbs'][c]:.1f} | {v / ref:.4f} | "
                     f"{'' if err is None else f'{err:.1e}'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shape", default="32768x2560")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--occupancy", type=lambda s: [int(v) for v in s.split(",") if v], default=[4, 5, 6, 7, 8])
    ap.add_argument("--grid-blocks", type=lambda s: [int(v) for v in s.split(",") if v], default=[])
    ap.add_argument("--grid-carve", type=lambda s: [int(v) for v in s.split(",") if v], default=[8, 32, 64, 100, 132, 164],
                    help="carveouts (KB) of the --grid-blocks rows")
    ap.add_argument("--api-caps", type=lambda s: [int(v) for v in s.split(",") if v], default=[],
                    help="also Tile's kernel through the API with these max_blocks hints")
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    res = bench(args)
    print(table(res))
    Path(args.out, "softmax_ab.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
