#!/usr/bin/env bash
# hrev19 (hostile review, round 19): an attention loop with a per-head scalar read before it (ALiBi: tests/user
# a12's program at 1 head of 500 queries and keys) on a GPU. One step, <= 90 s (a hang is cut at 75 s).
#  The launch's keys have at most 512 rows, so the runtime takes the attention pipeline's short keys' variant.
#  Expected "alibi 500 keys: OK <max difference>" (the interpreter's tensor within 2e-3). Before hrev19 that
#  variant broadcast the slope through shared memory between two `bar.sync 0` inside the consumers' tile walk,
#  which the producer warp never reaches: with 8 key blocks and 4 ring stages the CTA hangs (llsim: a deadlock,
#  tests/backend/test_role_barrier.py), here "TIMEOUT (a hang)". The fix makes them named barriers of the
#  consumers (codegen/core.ROLE_BARRIER).
# usage on the device machine, from the checkout's root:  bash benchmarks/hrev19_device.sh
set -uo pipefail
. benchmarks/device_env.sh hrev19
timeout 75 python3 - <<'PY'
import io
import numpy as np
import tilelang.run as run
src = open("tests/user/programs/a12_alibi_softcap_attention.tile").read()
src = src.replace("let h = 4;", "let h = 1;").replace("let s = 100;", "let s = 500;")
want = run.execute(src, "cpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
got = run.execute(src, "gpu", out=io.StringIO(), name="a.tile").main_locals["o"].numpy()
d = float(np.max(np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))))
print(f"alibi 500 keys: {'OK' if d <= 2e-3 else 'DIFFERS'} {d:.2e}", flush=True)
PY
rc=$?
[ $rc -eq 124 ] && echo "alibi 500 keys: TIMEOUT (a hang)"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "alibi 500 keys: FAILED rc=$rc"
exit 0
