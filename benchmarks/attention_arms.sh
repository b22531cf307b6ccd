# Sourced by the attention A/B device scripts (h15u, h15v, h15w, h15x), from the checkout's root:
#   NAME=h15v; . benchmarks/attention_arms.sh
# then the script defines `arm` (the environment of an arm, by its letter). Sets: PYTHONPATH (the checkout
# first), unbuffered output, the compile cache (TILEC_CACHE_DIR, default /tmp/tilec-cache); $OUT (default
# /tmp/out) and $D = $OUT/$NAME made; every attention switch unset (each arm sets its own); `el` (seconds since
# the start), `cubin` (--cubin sm_90 where ptxas is), `name` (an arm's environment, or "default"), `jobs` (a
# third of the cores), `bench` (one timed run of benchmarks/attention.py under an arm), `pack` ($D as
# $OUT/$NAME.tgz).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/$NAME"; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
unset TILEC_ATTN_QDOUBLE TILEC_ATTN_XROT TILEC_ATTN_CHAIN TILEC_ATTN_ROTATE TILEC_ATTN_SPLIT TILEC_ATTN_SPLIT_FORMS \
  TILEC_ATTN_STAMPS TILEC_ATTN_TAIL TILEC_PERSISTENT_SMS TILEC_ATTN_CHAIN_SPLIT TILEC_ATTN_CHAIN_TAIL TILEC_ATTN_CHAIN_EPI2 \
  TILEC_ATTN_CHAIN_HALVES \
  ATTN_DATA
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
name() { local e; e=$(arm "$1"); echo "${e:-default}"; }
jobs=$(( $(nproc) / 3 > 0 ? $(nproc) / 3 : 1 ))
bench() {  # arm $1, label $2, timeout $3, then attention.py's row options (e.g. --only f16-64 --seqs 1024)
  local a=$1 label=$2 limit=$3
  shift 3
  env $(arm "$a") timeout "$limit" python3 benchmarks/attention.py --prefill-only "$@" --reps ${REPS:-5} \
    --out "$D/run$label" > "$D/bench$label.log" 2>&1
  local rc=$?  # (before the echo's $(name ..), which would set $? to its own 0)
  echo "$NAME bench $label, arm $a ($(name "$a")) (rc $rc, $(el) s):"
  grep -E "^\| (f16|bf16)" "$D/bench$label.log" | awk '!s[$0]++'
}
pack() { tar czf "$OUT/$NAME.tgz" -C "$OUT" "$NAME" && rm -rf "$D"; }
