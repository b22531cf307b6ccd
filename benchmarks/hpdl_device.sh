#!/usr/bin/env bash
# Issue 17's PDL flake (hpdl, 2026-12-05, session 20:34-23:34): tests/llm/test_engine_gpu.py::
# test_pdl_decodes_the_same_tokens decoded other tokens once in the 12-worker GPU suite (config "torch" /
# "late+prefetch", from step 7). Found on the CPU: under "+prefetch" / "+bulk" ptxas 13.0 hoisted the step's
# `ld.global.nc` loads (`tok` in `embed`, `x` in the GEMVs, the merge's partials) above `griddepcontrol.wait`
# (SASS `ACQBULK`): a read of what the launch before may still be writing. Fixed in backend/llvm.py: under PDL
# only the tensors the runtime found no overlapped launch writes (`TensorFacts.early`, "+loads") are `.nc`;
# tests/llm/test_pdl_order.py is the CPU model. The fix also changes the default plan's code (late+loads): the
# loads of activations (the merge's partials, O's and down's input vector, the token choice's maxima, `embed`'s
# token) are plain `ld.global` now, so step 3 times the default.
# One device step, <= ~120 s warm (after the GPU suite, whose engine tests fill the compile cache with the test's
# kernels; cold, step 1 compiles them and the loops' first repetitions may be cut) on a 16-core H100/H200, from
# the checkout's root after
# `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. the GPU test alone (its 13 configurations; compiles their kernels into the cache)              <= 40 s
#   2. load: 12 processes at once of `benchmarks/pdl_loop.py` (the test's loop, repeated for 30 s) over the
#      default plan and `ge` () (h17t's suggestion: no entry trigger), as the 12-worker suite loaded the card <= 45 s
#   3. decode_ab 4B ctx 1,024, the default plan first and last, 3 rounds                                  <= 35 s
# compute-sanitizer does not apply: racecheck and synccheck see a block's shared memory and barriers, not
# one grid's global loads against another grid's stores.
# Expected: benchmarks/RESULTS.md, section "hpdl". Prints one line a step (and each loop's line); writes
# $OUT/hpdl.tgz (logs, ab json).
# usage on the device machine, from the checkout's root:  bash benchmarks/hpdl_device.sh
set -uo pipefail
. benchmarks/device_env.sh hpdl
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
  -k "pdl_decodes_the_same_tokens" > "$D/test.log" 2>&1
echo "hpdl test alone (rc $?, $(el) s): $(tail -1 "$D/test.log")"; grep -E "^FAILED|^E  " "$D/test.log" | head -6
V=${V:-'[{}, {"ge": []}]'}
pids=()
for i in $(seq ${PROCS:-12}); do
  timeout -s INT ${LOOP_TIMEOUT:-45} python3 benchmarks/pdl_loop.py --seconds ${LOOP_SECONDS:-30} --variants "$V" \
    > "$D/loop$i.log" 2>&1 &
  pids+=($!)
done
rcs=""; for p in "${pids[@]}"; do wait "$p"; rcs="$rcs $?"; done
echo "hpdl loops under load (rcs$rcs, $(el) s):"
cat "$D"/loop*.log | grep -E "^pdl_loop" | sort | uniq -c
grep -hE "Error|Traceback" "$D"/loop*.log | sort | uniq -c | head -5
timeout ${AB_TIMEOUT:-35} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 6 \
  --variants '[{}, {}]' --out "$D/ab" > "$D/ab.log" 2>&1
echo "hpdl decode_ab 4b (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
pack; echo "hpdl done ($(el) s): $OUT/hpdl.tgz"
