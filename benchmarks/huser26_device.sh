#!/usr/bin/env bash
# huser26 (2026-12-07, round 25; no device time of its own): round 25's user programs (tests/user/programs/n01-n24,
# a PyTorch model's pieces) on a real GPU, each run once: its tensors against the interpreter's
# (tests/user/test_user_gpu.py's tolerances: integers and bools exact, f32 2e-3, f16 2e-3, bf16 1.6e-2) and its
# own NumPy check (test_user_programs25.CHECKS) on the GPU's tensors; then benchmarks/huser26_bench.py: eight
# kernels with a PyTorch equivalent, on CUDA tensors through the Python API, each result compared with PyTorch's
# and timed against it (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 24 "ok" lines (llsim agreed on every one at sm_90a to 1e-5); then 8 rows
# "same". Guesses for torch / Tile: GroupNorm fwd, SwiGLU bwd, QK-norm + RoPE and add+RMSNorm bwd near PyTorch's
# (0.7-2x: one memory pass each where PyTorch's eager ops take several, its GroupNorm one fused kernel), the
# cross-entropy forward near (0.5-1.5x: one online pass of 32000 columns a row block against PyTorch's
# log_softmax + gather), AdamW near torch's fused AdamW (0.7-1.2x: both one pass of 4 streams), the MoE router
# above (1-3x: one launch against softmax + topk + div), the W4A16 linear below cuBLAS's f16 dense GEMM
# (0.2-0.8x: 32 x 32 tiles, two mmas of K = 16 a group). ~100-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser26_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser26
nvidia-smi -L
names=$(cd tests/user/programs && ls n[0-9][0-9]_*.tile | sed 's/\.tile$//' | tr '\n' ' ')
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 110 python3 - $names <<'PY'
import io, sys, time
import numpy as np
sys.path[:0] = ["tests/user", "tests"]
import tilelang.run as run
from userprog import program_tensors
from test_user_programs25 import CHECKS
from test_user_gpu import GPU_TOL, _is_bf16
for name in sys.argv[1:]:
    t0 = time.time()
    try:
        path = f"tests/user/programs/{name}.tile"
        cpu = run.execute(path, "cpu", out=io.StringIO())
        out = io.StringIO()
        gpu = run.execute(path, "gpu", out=out)
        assert gpu.device.kind == "gpu"
        want, got = program_tensors(cpu), program_tensors(gpu)
        assert sorted(got) == sorted(want)
        for k, w in want.items():
            if w.dtype.kind == "f":
                tol = GPU_TOL["bf16" if _is_bf16(cpu, k) else {2: "f16", 4: "f32", 8: "f64"}[w.dtype.itemsize]]
                np.testing.assert_allclose(got[k].astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                                           err_msg=k, equal_nan=True)
            else:
                np.testing.assert_array_equal(got[k], w, err_msg=k)
        CHECKS[name](got, out.getvalue())
        print(f"{name:40s} ok      {time.time() - t0:5.1f} s", flush=True)
    except Exception as e:  # noqa: BLE001 - report and go on
        msg = str(e).strip().splitlines()
        print(f"{name:40s} FAILED  {type(e).__name__}: {' | '.join(msg[:3])[:200]}", flush=True)
PY
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 60 python3 benchmarks/huser26_bench.py 2>&1 | tail -20
