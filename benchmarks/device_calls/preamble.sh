# Sourced by the call scripts here, from the checkout's root on the device machine: the wheels the device lacks
# (.whl: lark; .dev/xd: pytest-xdist and the LSP's, put there by prepare.sh) into /tmp/site, the checkout
# installed, the compile cache and $OUT, the commit and the card printed, t0 for the steps' elapsed seconds.
set -uo pipefail
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  .dev/xd/*.whl && export PYTHONPATH=/tmp/site
pip install -q --no-deps -e . >/dev/null 2>&1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} TILEC_CACHE_DIR=/tmp/tilec-cache OUT=${OUT:-/tmp/out}
export PREAMBLE_DONE=1; echo "commit $(cat .dev/final_commit)"; nvidia-smi -L; date -u; t0=$SECONDS

# The steps' helpers (call24.sh, call34.sh on; a script's own definitions after this file win): `call_log N` makes
# W=$OUT/cN, which pk packs into $OUT/callN.tgz; left: the seconds left of LIMIT (575 unless set); want NAME: STEPS
# (all when unset) names it; step NAME CMD...: CMD (with VAR=VALUE first) logged to $W/NAME.log, rc and the log's
# last TAILN (25) lines printed; gpu_suite: the -m gpu suite if wanted and 90 s are left (at most 120 s); the
# issues' tables (tables.sh runs all three): prefill_table [TAG [VAR=VALUE...]], decode_table, engine_table.
call_log() { CALL=$1; W=$OUT/c$1; mkdir -p "$W"; }
left() { echo $(( ${LIMIT:-575} - (SECONDS - t0) )); }
pk() { tar -C "$OUT" -czf "$OUT/call$CALL.tgz" "c$CALL" 2>/dev/null; }
want() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
step() { local name=$1; shift; echo "== $name ($((SECONDS-t0)) s)"; env "$@" > "$W/$name.log" 2>&1; echo "rc=$?"; tail -${TAILN:-25} "$W/$name.log" | cut -c1-200; pk; }
gpu_suite() {
  want suite && [ $(left) -gt 90 ] && { echo "== suite ($((SECONDS-t0)) s)"
    timeout $(( $(left) < 130 ? $(left) - 10 : 120 )) python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
    echo "suite rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -12 | cut -c1-220; pk; }
}
prefill_table() { local tag=${1:-}; shift $(( $# > 0 )); echo "== prefill${tag:+ $tag} ($((SECONDS-t0)) s)"
  env ATTN_TRITON=0 "$@" timeout 110 python3 -W ignore benchmarks/attention.py --prefill-only --reps 5 --out "$W/prefill${tag:+_$tag}" > "$W/prefill${tag:+_$tag}.log" 2>&1
  echo "rc=$?"; grep -E "^\| (f16|bf16)" "$W/prefill${tag:+_$tag}.log" | tail -24 | cut -c1-130; pk; }
decode_table() { echo "== decode ($((SECONDS-t0)) s)"
  timeout 60 python3 -W ignore benchmarks/attention.py --decode-only --reps 5 --out "$W/decode" > "$W/decode.log" 2>&1
  echo "rc=$?"; grep -E "^\| decode" "$W/decode.log" | cut -c1-200; pk; }
engine_table() { echo "== engine 4B ($((SECONDS-t0)) s)"
  timeout 90 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 32 --eager-tokens 4 --prefill 0 \
    --out "$W/engine4b" > "$W/engine4b.log" 2>&1; echo "rc=$?"; grep -E "ctx" "$W/engine4b.log" | tail -2; pk; }
