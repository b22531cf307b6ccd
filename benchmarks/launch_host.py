"""Host time of a launch call from Python for Tile's fast kernels (GPU, one step, ~30-60 s; one line a row).

Call 17 (H100, 13:20) read 0.55-1.1 ms (median ~0.59) of host time a launch call of std::attention's prefill
kernel, `kern(tilelang.partition(o.view(b * h, s, d), [1, 128, 128]), q3, k3, v3, scale, causal).launch()`
(`prefill_host_probe.py`), ~0.07 ms a 128x128x64 GEMM's (`first_case_probe.py`), <= 8 us a vector add's
(`launch.py`). On the stub device (`launch_cpu_profile.py`, CPU only) the causes were: (1) a partition of a
PyTorch view made in the call took the whole checked path every call (the call key refuses an array only its
partition holds; the plan was looked up again only for NumPy arrays, which E0313 judges) - ~0.5 ms; (2) every
kernel with a TMA descriptor, counters or a device assert took the device's general path (`_run_slow`) at every
launch. hlaunch's tree fixes both (`cuda_fast.LaunchSlots`).

Rows (host us a launch call after a sync, min / median / max of N; `path`: fast = the API's FastLaunch,
general = `CudaDevice._run_slow` ran for k of the N launches; `wait`: median host us of `.wait()` once the
kernel has finished (std::attention's device assert reads its error words there: a synchronous 8-byte copy,
which the GEMM and the add do not make); `check`: the result against PyTorch):
  attn-view   std::attention prefill f16 D=128 S=1024 16x16, the output a view made in the call (call 17's spelling)
  attn-held   the same, the output view made once
  causal      the same, causal (the view made in the call)
  attn-newq   the held call alternating two Q tensors (a TMA descriptor re-encoded when the address changes,
              from the descriptor cache after) - the check compares both outputs with SDPA
  toggle      causal alternating False/True (the split form's guard: the general path each change, expected)
  gemm        a 128x128x64 f16 GEMM 4096^3 (cliffs.py's kernel)
  add         a 4,096-element f32 vector add
Expected on this tree: attn-* and causal <= 30 us (was ~590), gemm <= 30 us (was ~70), add <= 8 us (unchanged),
every path fast but toggle (general N), every check ok (max abs error <= 2e-2 vs SDPA / torch.matmul).
On main the attn rows read ~500-600 us, path general N.
Read (call 18, H100, hlaunch 8eaf3b30): attn-view 36, attn-held 25, causal 27, attn-newq 27, gemm 12, add 6 us
median, all fast, checks ok. Expected wait (not yet read): gemm/add ~3-6 us, attn ~10-20 us (the assert's copy).

    python benchmarks/launch_host.py [--n 50] [--only attn-view,gemm] [--profile attn-view]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tilelang  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from launch_cases import KERNELS, count_general, prefill_shape, view_call  # noqa: E402

P = tilelang.partition


def rows() -> dict[str, tuple[Any, Any]]:
    """name -> (a launch call returning its handle, a check returning 'ok ...' or 'BAD ...')."""
    attn = tilelang.compile("use std::attention::*;\n")
    mod = tilelang.compile(KERNELS)
    s, d = 1024, 128
    b, h = prefill_shape(s, d)
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v, q2 = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(4))
    o = torch.empty_like(q)
    o3 = o.view(b * h, s, d)
    q3, k3, v3, q23 = (t.view(b * h, s, d) for t in (q, k, v, q2))
    kern = attn.flash_attention["f16", 128, 128, d]
    scale = d**-0.5
    flip = [False]

    def attn_check(qq: Any, causal: bool) -> str:
        torch.cuda.synchronize()
        ref = F.scaled_dot_product_attention(qq, k, v, is_causal=causal)
        err = (o.float() - ref.float()).abs().max().item()
        return f"{'ok' if err <= 2e-2 else 'BAD'} max|err| {err:.1e}"

    def newq() -> Any:
        flip[0] = not flip[0]
        return kern(P(o3, [1, 128, d]), q23 if flip[0] else q3, k3, v3, scale, False).launch()

    def newq_check() -> str:
        kern(P(o3, [1, 128, d]), q23, k3, v3, scale, False).sync()
        one = attn_check(q2, False)
        kern(P(o3, [1, 128, d]), q3, k3, v3, scale, False).sync()
        return f"{one}; {attn_check(q, False)}"

    def toggle() -> Any:
        flip[0] = not flip[0]
        return kern(P(o3, [1, 128, d]), q3, k3, v3, scale, flip[0]).launch()

    n = 4096
    a_, b_ = (torch.randn(n, n, device="cuda", dtype=torch.float16, generator=g) / 16 for _ in range(2))
    c_ = torch.empty(n, n, device="cuda", dtype=torch.float16)

    def gemm_check() -> str:
        torch.cuda.synchronize()
        err = (c_.float() - (a_.float() @ b_.float())).abs().max().item()
        return f"{'ok' if err <= 2e-2 * 16 else 'BAD'} max|err| {err:.1e}"

    x, y = (torch.randn(4096, device="cuda", generator=g) for _ in range(2))
    z = torch.empty_like(x)

    def add_check() -> str:
        torch.cuda.synchronize()
        err = (z - (x + y)).abs().max().item()
        return f"{'ok' if err == 0 else 'BAD'} max|err| {err:.1e}"

    return {
        "attn-view": (view_call(kern, o, q, k, v, False), lambda: attn_check(q, False)),
        "attn-held": (lambda: kern(P(o3, [1, 128, d]), q3, k3, v3, scale, False).launch(),
                      lambda: attn_check(q, False)),
        "causal": (view_call(kern, o, q, k, v, True), lambda: attn_check(q, True)),
        "attn-newq": (newq, newq_check),
        "toggle": (toggle, lambda: "-"),
        "gemm": (lambda: mod.gemm[128, 128, 64](P(c_, [128, 128]), a_, b_).launch(), gemm_check),
        "add": (lambda: mod.add(P(z, [1024]), x, y).launch(), add_check),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--only", default="")
    ap.add_argument("--profile", default="")
    a = ap.parse_args()
    from tilelang.api import engines

    slow = count_general(engines._device("cuda:0"))
    print(f"# {torch.cuda.get_device_name()}; host us a launch call, min / median / max of {a.n}", flush=True)
    only = [x for x in a.only.split(",") if x]
    for name, (fn, check) in rows().items():
        if only and name not in only:
            continue
        try:
            for _ in range(4):  # the first calls compile, bind and make the launcher
                fn().wait()
            torch.cuda.synchronize()
            before = slow[0]
            ts, ws = [], []
            for _ in range(a.n):
                torch.cuda.synchronize()
                t = time.perf_counter()
                hd = fn()
                ts.append((time.perf_counter() - t) * 1e6)
                torch.cuda.synchronize()  # the kernel has finished: the wait's own host cost
                t = time.perf_counter()
                hd.wait()
                ws.append((time.perf_counter() - t) * 1e6)
            k = slow[0] - before
            path = "fast" if k == 0 else f"general {k}"
            print(f"{name:10s} {min(ts):7.1f} {statistics.median(ts):7.1f} {max(ts):8.1f} us  {path:11s} "
                  f"wait {statistics.median(ws):5.1f} us  check {check()}", flush=True)
            if a.profile == name:
                pr = cProfile.Profile()
                for _ in range(a.n):
                    torch.cuda.synchronize()
                    pr.enable()
                    hd = fn()
                    pr.disable()
                    hd.wait()
                st = pstats.Stats(pr)
                st.sort_stats("cumulative").print_stats(25)
                st.sort_stats("tottime").print_stats(12)
        except Exception as e:  # one row's failure is a line, the others still run
            print(f"{name:10s} FAILED {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
