"""What the launch-cost scripts launch, in one place: `launch_host.py` (GPU), `launch_profile.py` (GPU),
`prefill_host_probe.py` (GPU), `launch_cpu_profile.py` (the stub device, CPU) and `tests/api/test_launch_slots.py`
(the stub device) import it.

- `KERNELS`: a vector add and a TMA GEMM (`ADD`, `GEMM`; the test adds its own kernels after them), `GEMM_NT`
  the GEMM with B stored [N, K]; `gemm_tensors`: the GEMM's operands and outputs on the GPU or the stub device
  (`hgemm3_device.py` too);
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

ADD = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
"""

GEMM = """
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

# B stored [N, K] (a linear layer's weight), used transposed
GEMM_NT = """
kernel fn gemm_nt<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f16, [BM, BN]>,
                                                              a: &Tensor<f16, [?, ?]>,
                                                              b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([block_id(1), k]).transpose(), acc);
    }
    c.store(acc as f16);
}
"""

KERNELS = ADD + GEMM


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


def gemm_tensors(m: int, stub: bool = False, outs: int = 0, seed: int = 0) -> tuple[Any, Any, Any, list[Any], Any]:
    """The 4096^3-style GEMM's operands a, b ([m, m] f16, standard normal / 16 from `seed`), its output c, `outs`
    more outputs (queued launches write apart: E0309 otherwise) and the sync to time with: PyTorch tensors on the
    GPU, or zeros on the stub device (`stub`: `cuda_stub.DevArray`, no GPU, no torch; sync does nothing)."""
    if stub:
        import numpy as np

        from tilelang.runtime.cuda_stub import DevArray

        a, b, c = (DevArray.zeros((m, m), np.float16) for _ in range(3))
        return a, b, c, [DevArray.zeros((m, m), np.float16) for _ in range(outs)], lambda: None
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a, b = (torch.randn(m, m, device="cuda", dtype=torch.float16, generator=g) / 16 for _ in range(2))
    c = torch.empty(m, m, device="cuda", dtype=torch.float16)
    return a, b, c, [torch.empty_like(c) for _ in range(outs)], torch.cuda.synchronize


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


__all__ = ["ADD", "GEMM", "GEMM_NT", "KERNELS", "TOKENS", "count_general", "gemm_tensors", "prefill_shape", "view_call"]
