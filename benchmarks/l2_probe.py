"""What an L2 prefetch buys a decode GEMV on this card (issue 17): the
issuer's cost and the reader's gain, each launch timed alone between CUDA
events, every sequence after an L2 flush (a 256 MB fill), the median of
`--reps` sequences.

The reader is the engine's O projection at Qwen3-4B's shape (`std::llm`'s
`gemv_add` [8, 2048], MB 3: 21 MB of bf16 weights, 320 blocks). The issuers
are 320-block kernels that do nothing but `p.prefetch` the reader's whole
matrix ([8, 4096] tiles, one a block) and store one number: `pf` with
PL = 0 (sm_90's `cp.async.bulk.prefetch.L2`, a row a request) or PL = 1
(`prefetch.global.L2` a 128-byte line: hint `prefetch_lines = PL`). Rows:

- issuer alone, nothing / bulk / lines: if a block's exit waits for its
  prefetches, the issuer takes about the bytes' time at copy bandwidth;
- reader cold / after a bulk or lines prefetch (the issuer, then a 20 us
  spin, then the reader) / warm (the reader twice): what reading from L2
  saves;
- issuer then reader back to back (no spin), timed together: the form the
  engine's GEMV-tail prefetch has.

    python benchmarks/l2_probe.py [--reps 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))

SRC = """
#[hints(num_warps = 8, prefetch_lines = PL)]
kernel fn pf<const PR: i32, const PC: i32, const PL: i32>(z: &mut Tensor<f32, [1]>, w: &Tensor<bf16, [?, ?]>, nn: i32) {
    let p = w.partition([PR, PC]);
    let mut t = block_id(0);
    while t < nn {
        p.prefetch([t, 0]);
        t = t + num_blocks(0);
    }
    z.store(zeros::<f32>([1]));
}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args(argv)
    import torch
    from engine import load_kernels

    import tilelang

    P = tilelang.partition
    n, kk = 2560, 4096
    g = torch.Generator(device="cuda").manual_seed(0)
    w = torch.randn(n, kk, device="cuda", generator=g).to(torch.bfloat16)
    x = torch.randn(kk, device="cuda", generator=g)
    y = torch.zeros(n, device="cuda")
    z = torch.zeros(320, device="cuda")
    flush = torch.empty(64 << 20, device="cuda")  # 256 MB: more than the L2
    probe = tilelang.compile(SRC)
    llm = load_kernels()
    reader = llm.gemv_add[8, 2048, 1, 3, 0, 0, 0, 0](P(y, [8]), w, x, 0, w, 0, 0)
    y2 = torch.zeros(n, device="cuda")  # a first reader of its own output: both may be in flight
    warmer = llm.gemv_add[8, 2048, 1, 3, 0, 0, 0, 0](P(y2, [8]), w, x, 0, w, 0, 0)
    issuers = {
        "none": probe.pf[8, 4096, 0](P(z, [1]), w, 0),
        "bulk": probe.pf[8, 4096, 0](P(z, [1]), w, 320),
        "lines": probe.pf[8, 4096, 1](P(z, [1]), w, 320),
    }
    for op in [reader, warmer, *issuers.values()]:
        op.sync()  # compiled and loaded

    def timed(*ops, spin_before_last: bool = False) -> float:
        """us from before the first op (`spin_before_last`: the last) to after
        the last, launched without host waits."""
        flush.fill_(1.0)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        hs = []
        for i, op in enumerate(ops):
            if spin_before_last and i == len(ops) - 1:
                torch.cuda._sleep(40_000)  # ~20 us: the prefetches land first
                e0.record()
            elif i == 0 and not spin_before_last:
                e0.record()
            hs.append(op.launch())
        e1.record()
        for h in hs:
            h.wait()
        e1.synchronize()
        return e0.elapsed_time(e1) * 1e3

    def med(f) -> float:  # type: ignore[no-untyped-def]
        return statistics.median(f() for _ in range(a.reps))

    mb = w.numel() * 2 / 1e6
    print(f"{torch.cuda.get_device_name()}: reader gemv_add [8, 2048] MB 3 over {mb:.1f} MB; "
          f"issuers prefetch all of it ([8, 4096] tiles, 320 blocks); median of {a.reps}", flush=True)
    rows = [(f"issuer alone: {k}", lambda op=op: timed(op)) for k, op in issuers.items()]
    rows.append(("reader cold", lambda: timed(issuers["none"], reader, spin_before_last=True)))
    for k in ("bulk", "lines"):
        rows.append((f"reader after a {k} prefetch and a spin",
                     lambda op=issuers[k]: timed(op, reader, spin_before_last=True)))
    rows.append(("reader warm (after another reader and a spin)",
                 lambda: timed(warmer, reader, spin_before_last=True)))
    for k in ("none", "bulk", "lines"):
        rows.append((f"issuer ({k}) + reader back to back", lambda op=issuers[k]: timed(op, reader)))
    for name, f in rows:
        us = med(f)
        print(f"{name:45s} {us:8.2f} us  ({mb / us:5.2f} TB/s over the matrix)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
