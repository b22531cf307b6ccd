"""Where a cold first launch of the 128x256x64 wgmma GEMM spends its time, piece
by piece, in a fresh process with PyTorch's CUDA context up (issue 14): the
toolchain prewarm (llvmlite import and target init, nvJitLink's library load),
GPU IR + LLVM text, LLVM -> PTX at the IR levels the backend may use, then the
PTX -> cubin routes the runtime could take: nvJitLink (cold, then warm), the
driver's linker (cuLinkCreate/AddData/Complete, cold then warm), the driver
JIT (cuModuleLoadDataEx on the PTX, CUDA_CACHE_DISABLE=1), and the module load
of a cubin. Each route is timed on its own; a number here is a piece of
`benchmarks/gemm.py --only first`'s total, not a replacement for it.

    CUDA_CACHE_DISABLE=1 python benchmarks/first_launch_probe.py
"""

from __future__ import annotations

import ctypes
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backend"))

T: dict[str, float] = {}


def timed(name: str, fn, *args):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    try:
        return fn(*args)
    except Exception as e:  # one route failing does not hide the others
        print(f"PROBE {name} failed: {type(e).__name__}: {str(e)[:300]}")
        return None
    finally:
        T[name] = time.perf_counter() - t


def main() -> None:
    import torch

    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    from gemm_cases import GemmConfig

    from tilelang import driver
    from tilelang.backend import lower_gpu
    from tilelang.backend.facts import TensorFacts
    from tilelang.backend.llvm import emit_llvm_text
    from tilelang.backend.target import Target, llvm_to_ptx, prewarm
    from tilelang.runtime import cuda as C

    tgt = Target("sm_90a")
    timed("prewarm llvmlite (import, init, target machine)", prewarm, tgt)
    timed("nvJitLink module + library load", lambda: __import__("cuda.bindings.nvjitlink", fromlist=["x"]).version())
    cfg = GemmConfig(128, 256, 64, warps=8, stages=4)
    src = cfg.source() + ("\nfn main() { let a = zeros::<f16>([8, 8]); let b = zeros::<f16>([8, 8]);"
                          " let mut o = zeros::<f16>([8, 8]);"
                          " gemm::<128, 256, 64>(o.partition([128, 256]), &a, &b).sync(); }\n")
    k = timed("check + Tile IR (driver.compile until ir)", lambda: driver.compile(src, "ir").output[0])
    gk = timed("lower_gpu", lower_gpu, k, tgt, {n: TensorFacts.assumed(2) for n in "abc"})
    ll, _ = timed("emit_llvm_text", emit_llvm_text, gk, gk.facts)
    for lvl in (1, 0, 1):
        ptx = timed(f"llvm_to_ptx ir_opt={lvl}", llvm_to_ptx, ll, tgt, lvl)
    ctx = C.context()
    arch = C.link_arch(ptx, ctx.info.arch)
    cubin = timed("nvJitLink link (first)", C._nvjitlink_cubin, ptx, arch)
    timed("nvJitLink link (again)", C._nvjitlink_cubin, ptx, arch)
    d = ctx.d

    def culink() -> bytes:
        state = C._check(d.cuLinkCreate(0, [], []), "cuLinkCreate")
        data = ptx.encode() + b"\0"
        C._check(d.cuLinkAddData(state, d.CUjitInputType.CU_JIT_INPUT_PTX, data, len(data), b"k.ptx", 0, [], []),
                 "cuLinkAddData")
        err, ptr, size = d.cuLinkComplete(state)
        if err != d.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLinkComplete: {err}")
        out = ctypes.string_at(int(ptr), size)
        d.cuLinkDestroy(state)
        return out

    dcubin = timed("driver cuLink (first)", culink)
    timed("driver cuLink (again)", culink)
    timed("driver JIT cuModuleLoadDataEx(PTX)", lambda: d.cuModuleLoadDataEx(ptx.encode() + b"\0", 0, [], []))
    timed("cuModuleLoadData(nvJitLink cubin)", lambda: d.cuModuleLoadData(cubin))
    timed("cuModuleLoadData(driver cubin)", lambda: d.cuModuleLoadData(dcubin))
    print(f"PROBE sizes: ll {len(ll)} B, ptx {len(ptx)} B, cubin nvJitLink {len(cubin or b'')} B, "
          f"driver {len(dcubin or b'')} B")
    for name, secs in T.items():
        print(f"PROBE {secs:8.4f} s  {name}")


if __name__ == "__main__":
    main()
