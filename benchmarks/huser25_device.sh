#!/usr/bin/env bash
# huser25 (2026-12-07, round 24; no device time of its own): round 24's user programs (tests/user/programs/l01-l20)
# on a real GPU, each run once: its tensors against the interpreter's (tests/user/test_user_gpu.py's tolerances:
# integers and bools exact, f32 2e-3, f16 2e-3, bf16 1.6e-2, f64 1e-6) and its own NumPy check
# (test_user_programs24.CHECKS) on the GPU's tensors; then benchmarks/huser25_bench.py: the eight kernels with a
# PyTorch equivalent, on CUDA tensors through the Python API, each result compared with PyTorch's and timed
# against it (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 20 "ok" lines (llsim agreed at sm_90a to 1e-5, l12 to 1e-3: the GPU's tanh),
# then 8 "same"/"kept" rows. Guesses for the ratios: the masked softmax, RoPE, dropout, slice moments and the
# histogram near PyTorch (0.6-1.5x: memory-bound, one pass each; the dropout's Philox is 10 rounds of u64
# multiplies a lane), the GEMM epilogue below cuBLAS (0.3-0.8x: 128 x 128 x 32 tiles, a generic k-loop), the
# top-5 (5 argmax rounds of a [1, 64] row a block) and the rank sort ([1, 32, 32] compares a row) well below
# (0.05-0.5x: one small row a block). ~100-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser25_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser25
nvidia-smi -L
names=$(cd tests/user/programs && ls l[0-9][0-9]_*.tile | sed 's/\.tile$//' | tr '\n' ' ')
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 100 python3 - $names <<'PY'
import io, sys, time
import numpy as np
sys.path[:0] = ["tests/user", "tests"]
import tilelang.run as run
from userprog import program_tensors
from test_user_programs24 import CHECKS
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
        print(f"{name:36s} ok      {time.time() - t0:5.1f} s", flush=True)
    except Exception as e:  # noqa: BLE001 - report and go on
        msg = str(e).strip().splitlines()
        print(f"{name:36s} FAILED  {type(e).__name__}: {' | '.join(msg[:3])[:200]}", flush=True)
PY
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 60 python3 benchmarks/huser25_bench.py 2>&1 | tail -22
