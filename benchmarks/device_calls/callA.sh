#!/usr/bin/env bash
# Call A (see README.md here): GPU suite, heavy tests, rs A/B, decode + prefill tables, leak test.
. benchmarks/device_calls/preamble.sh
timeout ${T_SUITE:-230} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  -o junit_family=xunit2 --junitxml=$OUT/suite.xml > $OUT/suite.log 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" $OUT/suite.log | tail -40
echo "===== heavy (TILE_SLOW=1) tests on 14 CPU workers ($((SECONDS-t0)) s)"
TILE_SLOW=1 timeout 200 python3 -m pytest -q -p no:cacheprovider -m heavy -n 14 --dist worksteal tests > $OUT/heavy.log 2>&1; echo "heavy rc=$?"; tail -5 $OUT/heavy.log
echo "===== rs A/B ($((SECONDS-t0)) s)"
timeout 100 python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6 --variants '[{}, {"rs": 1}]' > $OUT/rs.log 2>&1; echo rc=$?
grep -vE "^\s*$" $OUT/rs.log | tail -22
echo "===== decode+prefill ($((SECONDS-t0)) s)"
STEPS="decode prefill" OUT=$OUT TAILN=30 bash benchmarks/final_call.sh 2>&1 | tail -75
echo "===== leak ($((SECONDS-t0)) s)"
timeout 70 python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py -k constant_over_10000 > $OUT/leak.log 2>&1
echo "leak rc=$? ($((SECONDS-t0)) s)"; tail -2 $OUT/leak.log
echo "total $((SECONDS-t0)) s"
