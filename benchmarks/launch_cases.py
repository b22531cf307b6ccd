"""What the launch-cost scripts launch, in one place: `launch_host.py` (GPU), `launch_profile.py` (GPU),
`prefill_host_probe.py` (GPU), `launch_cpu_profile.py` (the stub device, CPU) and `tests/api/test_launch_slots.py`
(the stub device) import it.

- `KERNELS`: a vector add and a TMA GEMM (the test adds its own kernels after them);
- `prefill_shape` / `view_call`: std::attention's prefill launch as `benchmarks/attention.py` shapes it (16,384
  tokens a call, 2048 / D heads) and as a user spells it on PyTorch tensors, the output's view made in the call
  (`kern(tilelang.partition(o.view(b * h, s, d), [1, BM, D]), q3, k3, v3, D^-0.5, causal).launch()`: call 17's
  spelling, the one that cost 0.59 ms then);
- `count_general`: the device's general launches (`CudaDevice._run_slow`) counted, so a row or a test can say
  which launches left the fast path.

Imports no GPU library: `tilelang` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tilelang

KERNELS = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}

kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f16, [BM, BN]>,
                                                           a: &Tensor<f16, [?, ?]>,
                                                           b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc as f16);
}
"""

TOKENS = 16384  # a prefill call's tokens (benchmarks/attention.py)


def prefill_shape(s: int, d: int, tokens: int = TOKENS) -> tuple[int, int]:
    """(batch, heads) of benchmarks/attention.py's prefill row at sequence length `s` and head dim `d`."""
    return max(1, tokens // s), 2048 // d


def view_call(kern: Any, o: Any, q: Any, k: Any, v: Any, causal: bool, bm: int = 128) -> Callable[[], Any]:
    """std::attention's prefill kernel `kern` (`flash_attention[T, BM, BN, D]`) on [B, H, S, D] PyTorch tensors
    as call 17 timed it: a function making one launch call, `kern(tilelang.partition(o.view(b * h, s, d), [1, bm,
    d]), q3, k3, v3, d^-0.5, causal).launch()`, the output's view made in the call (the inputs' made once)."""
    b, h, s, d = (int(x) for x in o.shape)
    q3, k3, v3 = (t.view(b * h, s, d) for t in (q, k, v))
    scale = d**-0.5
    P = tilelang.partition

    def call() -> Any:
        return kern(P(o.view(b * h, s, d), [1, bm, d]), q3, k3, v3, scale, causal).launch()

    return call


def count_general(dev: Any) -> list[int]:
    """Count `dev`'s general-path launches from now on: a one-element list the wrapper increments (the
    device keeps the wrapper)."""
    slow = [0]
    general = dev._run_slow

    def counted(*args: Any) -> None:
        slow[0] += 1
        general(*args)

    dev._run_slow = counted
    return slow


__all__ = ["KERNELS", "TOKENS", "count_general", "prefill_shape", "view_call"]
