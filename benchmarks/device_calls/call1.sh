#!/usr/bin/env bash
# Step 1-3 of README.md here in one call (~480 s warm): the `-m gpu` suite on 14 workers, hpdl_device.sh (the PDL
# flake under load, the default's speed after the `.nc` fix), huser10_device.sh (wgmma_diff on the card).
. benchmarks/device_calls/preamble.sh
timeout ${T_SUITE:-230} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  -o junit_family=xunit2 --junitxml=$OUT/suite.xml > $OUT/suite.log 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" $OUT/suite.log | tail -40
echo "===== hpdl ($((SECONDS-t0)) s)"; bash benchmarks/hpdl_device.sh 2>&1 | tail -40
echo "===== huser10 ($((SECONDS-t0)) s)"; BUDGET=${BUDGET:-70} bash benchmarks/huser10_device.sh 2>&1 | tail -30
echo "total $((SECONDS-t0)) s"
