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
