#!/usr/bin/env bash
# hrev18 (hostile review, round 18): a launch's -0.0 scalar on a GPU. One step, ~20 s warm.
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
