# The shared arm runner of the per-helper device scripts (hcliff12, hstream, hgemv, hnum, ..): each script keeps
# its header (what it measures, what it expects) and its arms; the setup and the loop's plumbing live here.
#
#     . "$(dirname "$0")/arms.sh" [SWITCH...]
#
# (Source it with the SWITCHes or from a script run without arguments: a bare `.` hands the script's own.)
# Sourcing it: goes to the checkout's root, puts it first on PYTHONPATH, a compile cache the arms share
# (TILEC_CACHE_DIR, a fresh folder unless set), unsets each SWITCH (so an arm runs with only the switches it names),
# prints the card's name and starts the clock (`t0`). Then:
#
#     gpu_tests PYTEST-ARGS...      `pytest -q -m gpu PYTEST-ARGS` unless TESTS=0; its last TESTS_TAIL lines (1)
#                                   as "gpu tests ..."; TEST_TIMEOUT seconds (60)
#     arm NAME [VAR=VALUE...] -- COMMAND...
#                                   one arm, a process (the switches are read when a kernel is lowered): COMMAND
#                                   under the VAR=VALUEs, ARM_TIMEOUT seconds (60), its lines but comments and
#                                   warnings (the last ARM_TAIL of them where set) prefixed with NAME, then
#                                   "(NAME done at N s)"
#
# A script sets its own defaults before calling (`: "${ARM_TIMEOUT:=50}"`). ARM_DRY=1 prints each test run and arm
# (NAME: VAR=VALUE.. COMMAND) instead of running it: a CPU check of what a script would run, no card needed.
# (The one-call scripts that pack a log folder source `device_env.sh`.)

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$(mktemp -d)}"
if [ $# -gt 0 ]; then unset "$@"; fi
ARM_DRY=${ARM_DRY:-0}
if [ "$ARM_DRY" = 1 ]; then
  echo "(ARM_DRY=1: the commands are printed, not run)"
else
  nvidia-smi --query-gpu=name --format=csv,noheader | head -1
fi
t0=$(date +%s)

gpu_tests() {
  [ "${TESTS:-1}" = 1 ] || return 0
  if [ "$ARM_DRY" = 1 ]; then
    echo "gpu tests: timeout ${TEST_TIMEOUT:-60} python3 -m pytest -q -p no:cacheprovider -m gpu $*"
    return 0
  fi
  timeout "${TEST_TIMEOUT:-60}" python3 -m pytest -q -p no:cacheprovider -m gpu "$@" 2>&1 | tail -"${TESTS_TAIL:-1}" \
    | sed "s/^/gpu tests /"
  echo "(tests done at $(( $(date +%s) - t0 )) s)"
}

arm() {
  local name=$1 sw=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sw+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  if [ "$ARM_DRY" = 1 ]; then
    echo "$name: ${sw[*]+${sw[*]} }timeout ${ARM_TIMEOUT:-60} $*"
    return 0
  fi
  env ${sw[@]+"${sw[@]}"} timeout "${ARM_TIMEOUT:-60}" "$@" 2>&1 | grep -v "^#\|Warn" \
    | if [ -n "${ARM_TAIL:-}" ]; then tail -n "$ARM_TAIL"; else cat; fi | sed "s/^/$name /"
  echo "($name done at $(( $(date +%s) - t0 )) s)"
}
