#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 fourth session, round 2): the
# decode plan's variants that need no code, against main's plan in ONE
# process (main first and last: the card's drift): the ring attention at 16
# keys a block (`bt` 16: the positions past a multiple of BT x NS, 1,025-1,031
# in the burst, read 80 positions a split instead of 96) and the token
# choice in fewer chunks (`bc` 4096 / 8192: `argmax_step` 3 / 2 dependent
# rounds instead of 10), at 4B 1,024 with the per-kind profile of the first
# four rows, then 8,192. V1/V8: the variants; T1/T8: the steps' timeouts.
# From the checkout's root: OUT=dir bash benchmarks/ready_variants_device.sh;
# one file back, $OUT/rv.tgz.
set -uo pipefail
. benchmarks/device_env.sh rv
nvidia-smi -L; date -u; echo "tree $(cat COMMIT 2>/dev/null || git log -1 --format=%h)"
V1=${V1:-'[{}, {"bt": 16}, {"bc": 4096}, {"bc": 8192}, {"bt": 16, "bc": 4096}, {}]'}
V8=${V8:-'[{}, {"bt": 16}, {"bc": 4096}, {}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-70}; pack
}
ab rv_4b ${T1:-75} --model 4b --contexts 1024 --variants "$V1" --profile-first 4
TAIL=8 ab rv_4b_8k ${T8:-30} --model 4b --contexts 8192 --variants "$V8" --rounds 2
date -u
