#!/usr/bin/env bash
# The 2026-12-07 08:53 session's last call (lead), on landed main (or dev40.patch). On any card: the -m gpu suite on
# the landed tree, then issue 15's decode table and issue 17's engine 4B at 1,024 on this card (hstatic's static
# dims changed the decode and engine kernels' PTX: folds only; expected within the spread of the last H100 numbers:
# decode B=1 32k ~ call 32's, engine 4B ~314 tok/s, 85.4 % of the H100 roofline), and on an H200 also the prefill
# table first (tables.sh). STEPS picks steps.
[ -f dev40.patch ] && git apply dev40.patch && rm dev40.patch && echo "applied dev40.patch"
. benchmarks/device_calls/preamble.sh
call_log 40
if want tables && nvidia-smi -L | grep -q H200; then
  . benchmarks/device_calls/tables.sh
fi
gpu_suite
want decode && ! nvidia-smi -L | grep -q H200 && [ $(left) -gt 70 ] && decode_table
want engine && ! nvidia-smi -L | grep -q H200 && [ $(left) -gt 100 ] && engine_table
pk; echo "total $((SECONDS-t0)) s"
