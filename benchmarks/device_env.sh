# Sourced by the one-call device scripts, from the checkout's root:
#   . benchmarks/device_env.sh NAME
# PYTHONPATH (the checkout first) and unbuffered output; $OUT made (default
# /tmp/out); $D a fresh log folder /tmp/NAME.XXXX/NAME; the compile cache
# (TILEC_CACHE_DIR, default /tmp/tilec-cache); `pack`: $D as the one file
# back, $OUT/NAME.tgz.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; D=$(mktemp -d "/tmp/$1.XXXX")/$1; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
pack() { tar -C "$(dirname "$D")" -czf "$OUT/$(basename "$D").tgz" "$(basename "$D")"; }
