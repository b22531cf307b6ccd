#!/usr/bin/env bash
# hrev24 (2026-12-07, round 24; no device time of its own): on a real GPU through the Python API and PyTorch,
# (1) a float32 CUDA tensor passed for `bf16` parameters (f32 memory, `TensorFacts.bf16_f32`) is read as bf16
# values, as the interpreter reads the same NumPy array (before the fix the GPU kept 1.1 where the interpreter
# has 1.1015625); (2) tensors one element past a 16-byte boundary (`x[1:]` of f16/f32/i8 tensors: aligned16
# False) through loads at the edges, nested stores and an f16 mma, against the interpreter: no fault, the
# same values. Expected (written before any run): three lines, each ending `ok`, then an informational
# line: a product that overflows inside `(x * y).sum(1)` gives inf on the interpreter and llsim, 3e38 on the GPU
# (the fused multiply-add of `fmul contract`; llsim does not fuse). ~20-40 s warm.
# usage: bash benchmarks/hrev24_device.sh
set -uo pipefail
. benchmarks/device_env.sh hrev24
timeout 120 python3 - <<'PY' 2>&1 | tail -6
import numpy as np, torch, tilelang
import sys
sys.path.insert(0, "tests/backend")  # the kernels the llsim tests run (one copy: shared_kernels.py)
from shared_kernels import BF16_COPY, MISALIGNED
SRC = BF16_COPY + MISALIGNED
m = tilelang.compile(SRC)
V = np.array([1.1, 2.2, 3.3, -0.7, 1e-3, 5.0, 1.0000001, 3.14159, 1.00390625, 1.01171875,
              -2.3, 7.77, 0.1, 100.3, 0.0, -0.0, 65519.0, 3e38, 1.5e-39, -1.2], np.float32)
want = [np.zeros(20, np.float32), np.zeros(20, np.float32), V[::-1].copy()]
m.k(*(tilelang.partition(a, [8]) for a in want), V.copy()).sync()
got = [torch.zeros(20, device="cuda"), torch.zeros(20, device="cuda"), torch.tensor(V[::-1].copy(), device="cuda")]
m.k(*(tilelang.partition(a, [8]) for a in got), torch.tensor(V, device="cuda")).sync()
torch.cuda.synchronize()
bad = [i for i, (g, w) in enumerate(zip(got, want)) if not np.array_equal(g.cpu().numpy().view(np.uint32), w.view(np.uint32))]
print("bf16 in f32 memory:", "ok" if not bad else f"DIFFERS in outputs {bad}")
bad = []
for dt, tdt in (("f16", torch.float16), ("f32", torch.float32), ("i8", torch.int8)):
    base = ((np.arange(13 * 24 + 1) % 23) - 11).astype({"f16": np.float16, "f32": np.float32, "i8": np.int8}[dt])
    x = base[1:].reshape(13, 24)
    zw = np.zeros((13, 24), x.dtype)
    m.cp(tilelang.partition(zw, [4, 8]), x.copy()).sync()
    xt = torch.tensor(base, device="cuda")[1:].view(13, 24)  # one element past the allocation's alignment
    zt = torch.zeros(13 * 24 + 1, dtype=tdt, device="cuda")[1:].view(13, 24)
    m.cp(tilelang.partition(zt, [4, 8]), xt).sync()
    torch.cuda.synchronize()
    if not np.array_equal(zt.cpu().numpy(), zw):
        bad.append(dt)
print("misaligned loads and nested stores:", "ok" if not bad else f"DIFFERS for {bad}")
a = ((np.arange(40 * 48 + 1) % 7) - 3).astype(np.float16)
b = ((np.arange(48 * 24 + 1) % 5) - 2).astype(np.float16)
cw = np.ones((40, 24), np.float32)
m.mm(tilelang.partition(cw, [16, 16]), a[1:].reshape(40, 48).copy(), b[1:].reshape(48, 24).copy()).sync()
ct = torch.ones(40 * 24 + 1, device="cuda")[1:].view(40, 24)
m.mm(tilelang.partition(ct, [16, 16]), torch.tensor(a, device="cuda")[1:].view(40, 48),
     torch.tensor(b, device="cuda")[1:].view(48, 24)).sync()
torch.cuda.synchronize()
print("misaligned f16 mma:", "ok" if np.array_equal(ct.cpu().numpy(), cw) else "DIFFERS")
# informational (not a check): `(x * y).sum(1)` is one fma on the GPU (`fmul contract`), which llsim does not fuse
rs = tilelang.compile("""
kernel fn rs(z: &mut Tensor<f32, [1, 1]>, a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) {
    z.store((a.partition([1, 2]).load([0, 0]) * b.partition([1, 2]).load([0, 0])).sum(1).reshape([1, 1]));
}
""")
a, b = np.array([[-3e38, 3e38]], np.float32), np.array([[1.0, 2.0]], np.float32)
zi = np.zeros((1, 1), np.float32)
rs.rs(tilelang.partition(zi, [1, 1]), a, b).sync()
zg = torch.zeros(1, 1, device="cuda")
rs.rs(tilelang.partition(zg, [1, 1]), torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda")).sync()
torch.cuda.synchronize()
print("fused product sum (info): interpreter", float(zi[0, 0]), "gpu", float(zg.cpu()[0, 0]), "(expected inf and 3e38)")
PY
