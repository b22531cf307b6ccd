#!/usr/bin/env bash
# hrev18 (hostile review, round 18): a launch's -0.0 scalar and an empty GEMM operand on a GPU. One step, ~40 s warm.
#  tests/run/signed_zero_scalar_launch.tile on the GPU: four launches of one kernel with s = 0.0, -0.0, -0.0,
#  0.0 (`z = 1 / s`). Expected "inf -inf -inf inf" (the interpreter's line). Before hrev18 the CUDA runtime's
#  caches of a launch's packed arguments (`CudaDevice.run`'s fast key, `_run_slow`'s `packed`) were keyed by
#  the values, where -0.0 == 0.0: the GPU printed "inf inf inf inf" (the stub driver showed the +0.0 bits:
#  tests/api/test_signed_zero_launch.py). DIFFERS here means the sign is lost on a real launch path the stub
#  does not take: tell hrev18's successor.
# usage on the device machine, from the checkout's root:  bash benchmarks/hrev18_device.sh
set -uo pipefail
. benchmarks/device_env.sh hrev18
want="inf -inf -inf inf"
got=$(timeout 90 python3 -m tilelang run --device gpu tests/run/signed_zero_scalar_launch.tile 2>&1 \
      | grep -v "^warning\|^ \|^[0-9]* |\|^\.\.\.\|^$\|warnings emitted" | tr '\n' ' ')
if [ "$got" = "$want " ]; then echo "signed zero launches: $got OK"; else echo "signed zero launches: $got DIFFERS (want $want)"; fi
# 2. An empty operand (PyTorch: address 0) of a GEMM whose copies redirect an outside element's load to element 0
#    (this card's Hopper copy producer: b's rows of 42 bytes are no TMA box). Expected "empty operand: OK 1575.0"
#    (75 x 21 ones: the product of zeros plus 1). Before hrev18 the kernel loaded 2 bytes at address 0: a CUDA
#    illegal-address error (the context then unusable) - "FAILED" with the error's text.
python3 - <<'PY'
import torch, tilelang
src = open("tests/backend/test_empty_operand_copies.py").read().split('GEMM = """')[1].split('"""')[0]
src = src.replace("ACC", "f32").replace("<T,", "<f16,").replace("::<T>", "::<f16>").split("fn main")[0]
m = tilelang.compile(src)
a = torch.ones(75, 64, dtype=torch.float16, device="cuda")
b = torch.empty(0, 21, dtype=torch.float16, device="cuda")
c = torch.zeros(75, 21, dtype=torch.float32, device="cuda")
try:
    m.g[64, 64, 32](tilelang.partition(c, [64, 64]), a, b).sync()
    torch.cuda.synchronize()
    print("empty operand:", "OK" if float(c.sum()) == 1575.0 else "WRONG", float(c.sum()), "b.data_ptr() =", b.data_ptr())
except Exception as e:
    print("empty operand: FAILED", type(e).__name__, str(e).splitlines()[0][:200])
PY
