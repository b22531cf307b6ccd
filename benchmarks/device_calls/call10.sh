#!/usr/bin/env bash
# The 2026-12-06 09:49 session's first call: a roll for the issues' card. On an H200 (every target of issues 15
# and 17 is an H200 number; none measured since 2026-12-04) it runs call5.sh's tables (prefill + decode attention,
# the 4B engine at 1,024 / 8,192 / 32,768 with the prefill of 2,048, 0.6B and 8B) on main; on an H100 it stops at
# once (those tables were measured on main's kernels in the 07:04 session: RESULTS.md "call 6" / "call 8").
# Expected on an H200 (before the run): prefill rows as 2026-12-04's H200 table or better; engine 4B ~79-80 % of
# the roofline (the 2026-12-05 model), 8B above, 0.6B ~55 %.
. benchmarks/device_calls/preamble.sh
if ! nvidia-smi -L | grep -q H200; then echo "not an H200: stopping"; exit 0; fi
T_SUITE=${T_SUITE:-90} bash benchmarks/device_calls/call5.sh
