#!/usr/bin/env bash
# The 2026-12-06 07:04 session's check of landing L4 (hcliff's default warps made opt-in after call 8's two
# failures, `benchmarks/ptx_sha.py`, `tests/backend/test_gpu_cliff_paths.py` never run on a GPU), and the bf16
# D = 64 rows that read 0.91-0.93x in call 8 with PTX identical to call 6's.
# Expected (before the run): the suite all green (700 + hcliff's 3 cliff-path tests); the bf16 D = 64 rows as
# call 6 (1.00-1.04x at S >= 4,096) if call 8's two rows were the machine's state.
. benchmarks/device_calls/preamble.sh
W=$OUT/c9; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call9.tgz" c9; }
timeout ${T_SUITE:-150} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  > "$W/suite.log" 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20; pk
timeout ${T_PREFILL:-90} python3 -W ignore benchmarks/attention.py --prefill-only --only bf16-64 --reps 5 > "$W/prefill.log" 2>&1
echo "prefill rc=$? ($((SECONDS-t0)) s)"; grep -E "^\| (f16|bf16)" "$W/prefill.log" | head -6; pk
echo "total $((SECONDS-t0)) s"
