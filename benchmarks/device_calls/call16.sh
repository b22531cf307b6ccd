#!/usr/bin/env bash
# The 2026-12-06 12:36 session's first call (lead). On an H200 first the issues' tables (call5.sh less its suite).
# Then the prefill A/B that the 11:53 call left unexplained (main's std prefill rows 0.47-1.03x SDPA on one H100,
# tree 137b95b2 beside it 0.93-1.03x, identical PTX and KernelABI): `prefill_host_probe.py` on both trees (host ms
# a launch call; the rows behind attention.py's 2M-cycle sleep and behind a 20M one), then attention.py's rows
# alternated old/new, 3 processes each as time allows, SM clock and power logged every 0.5 s. Then the suite
# with what is left. Expected (before the run): host ms a launch call well under the ~1 ms sleep on both trees
# (first_case_probe read 0.07 ms for a GEMM) and ev2M = ev20M within 2 %: then the old/new difference is the
# machine's, and 3+3 processes on a fresh card read both trees alike.
. benchmarks/device_calls/preamble.sh
W=$OUT/c16; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call16.tgz" c16; }
left() { echo $(( ${BUDGET:-570} - (SECONDS - t0) )); }
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 500 > "$W/smi.csv" 2>/dev/null & SMI=$!
if nvidia-smi -L | grep -q H200; then
  echo "H200: the issues' tables first"; T_SUITE=1 T_KDIFF=1 OUT=$W bash benchmarks/device_calls/call5.sh 2>&1 | tail -60; pk
fi
OLD=$PWD/.dev/old; cp benchmarks/prefill_host_probe.py "$OLD/benchmarks/"
probe() {  # tree-name
  if [ $1 = old ]; then P=$OLD; C=/tmp/cache-old; else P=$PWD; C=/tmp/tilec-cache; fi
  echo "== probe $1 ($((SECONDS-t0)) s)"
  (cd $P && PYTHONPATH=$P:/tmp/site TILEC_CACHE_DIR=$C timeout ${T_PROBE:-90} python3 -W ignore benchmarks/prefill_host_probe.py 2>&1 | tail -8)
}
ab() {  # tree-name run-index
  if [ $1 = old ]; then P=$OLD; C=/tmp/cache-old; else P=$PWD; C=/tmp/tilec-cache; fi
  echo "== $1 $2 ($((SECONDS-t0)) s)"
  (cd $P && PYTHONPATH=$P:/tmp/site TILEC_CACHE_DIR=$C ATTN_TRITON=0 timeout 100 python3 -W ignore benchmarks/attention.py \
     --prefill-only --only f16-128,bf16-64 --seqs 1024,4096 --reps 5 --out $W/ab/run$2$([ $1 = old ] && echo O || echo N) 2>&1 | grep -E "^\| (f16|bf16)" | head -8)
}
probe new; probe old; pk
if [ -d .dev/hgemm ]; then  # hgemm's persistent GEMM (off by default on its branch): its own tree, its own cache
  echo "== gemm_persistent ($((SECONDS-t0)) s)"
  (cd .dev/hgemm && PYTHONPATH=$PWD:/tmp/site TILEC_CACHE_DIR=/tmp/cache-hgemm timeout ${T_GEMM:-110} python3 -W ignore \
     benchmarks/gemm_persistent.py > $W/gemm_persistent.log 2>&1; echo "rc=$?"); cut -c1-180 $W/gemm_persistent.log | tail -30; pk
fi
for i in 1 2 3; do
  [ $(left) -gt 90 ] || break; ab old $i; pk
  [ $(left) -gt 60 ] || break; ab new $i; pk
done
[ $(left) -gt 60 ] && { probe new; probe old; pk; }
python3 benchmarks/attention_ab.py $W/ab --base O 2>&1 | tail -20
kill $SMI 2>/dev/null; pk
T=$(left); if [ $T -gt 40 ]; then
  timeout $T python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20; pk
fi
echo "total $((SECONDS-t0)) s"
