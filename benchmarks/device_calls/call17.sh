#!/usr/bin/env bash
# The 2026-12-06 12:36 session's call on comb (.dev/comb: main + hgemm 17b2b73c + hattn2 84b2c3df + hrev17
# 9454d40b), in the order of what each answer decides:
#   1. hgemm's persistent / pingpong / split-K GEMM variants against torch (gemm_persistent.py; its header's
#      expectations: 128x128x64 coop 0.88-0.92x, pingpong 0.93-0.98x);
#   2. hattn2's exp without its error term on the user's attention loops (cliffs.py --only attn; header: attn
#      ~0.87-0.90x, D=64 ~0.8x, bf16 ~0.84x; std rows unchanged);
#   3. hrev17's run-time tile index guard (hrev17_device.sh: the program's two lines, decode 4B 1,024 ON/OFF
#      within 1 %);
#   4. the prefill host probe on comb and on tree 137b95b2 (call16.sh's question: host ms a launch call against
#      the ~1 ms sleep, ev2M against ev20M);
#   5. the -m gpu suite on comb with what is left.
. benchmarks/device_calls/preamble.sh
W=$OUT/c17; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call17.tgz" c17; }
left() { echo $(( ${BUDGET:-575} - (SECONDS - t0) )); }
ROOT=$PWD; C=$ROOT/.dev/comb; OLD=$ROOT/.dev/old
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 1000 > "$W/smi.csv" 2>/dev/null & SMI=$!
cd "$C"; export PYTHONPATH=$C:/tmp/site TILEC_CACHE_DIR=/tmp/tilec-cache-comb
echo "== gemm_persistent ($((SECONDS-t0)) s)"
timeout ${T_GEMM:-110} python3 -W ignore benchmarks/gemm_persistent.py > $W/gemm.log 2>&1; echo "rc=$?"
cut -c1-190 $W/gemm.log | tail -34; pk
echo "== cliffs attn ($((SECONDS-t0)) s)"
timeout ${T_CLIFFS:-80} python3 -W ignore benchmarks/cliffs.py --only attn --jobs 14 > $W/cliffs.log 2>&1; echo "rc=$?"
cut -c1-160 $W/cliffs.log | tail -24; pk
echo "== hrev17 ($((SECONDS-t0)) s)"
OUT=$W timeout ${T_REV:-130} bash benchmarks/hrev17_device.sh 2>&1 | tail -12; pk
cp "$C/benchmarks/prefill_host_probe.py" "$OLD/benchmarks/" 2>/dev/null
for t in comb old; do
  [ $(left) -gt 80 ] || break
  if [ $t = old ]; then P=$OLD; CC=/tmp/cache-old; else P=$C; CC=/tmp/tilec-cache-comb; fi
  echo "== probe $t ($((SECONDS-t0)) s)"
  (cd $P && PYTHONPATH=$P:/tmp/site TILEC_CACHE_DIR=$CC timeout ${T_PROBE:-90} python3 -W ignore benchmarks/prefill_host_probe.py 2>&1 | tail -8)
  pk
done
kill $SMI 2>/dev/null
T=$(left); if [ $T -gt 40 ]; then
  timeout $T python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' > "$W/suite.log" 2>&1
  echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20
fi
pk; echo "total $((SECONDS-t0)) s"
