#!/usr/bin/env bash
# hrev26 (2026-12-07): a card check of `lift.fewer_warps` after the review (not timing). ~60-90 s.
#
#     bash benchmarks/hrev26_device.sh
#
# 1. tests/backend/test_fewer_warps.py on the card (its gpu case: a05's pool at 1 warp) and the file's llsim cases.
# 2. Narrow rows at their new warps (i8 [4, 128] and u8 [512] at 1 warp, f16 [256] 1, bf16 [512] 2: hrev26's
#    count by a thread's 16-byte vector), reductions, arg-reductions and scans: `tilec run` on the GPU against the
#    interpreter, with TILEC_FEWER_WARPS on and off. Expect "same" on every line (integers exact; the f16/bf16
#    values are multiples of 1/16 within range, so sums are exact too).
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
timeout 120 python3 -m pytest -q -n 0 tests/backend/test_fewer_warps.py 2>&1 | tail -2
T=$(mktemp -d)
cat > "$T/narrow.tile" <<'TILE'
kernel fn n8(o: &mut Tensor<i8, [4, 128]>, r: &mut Tensor<i32, [128]>, q: &mut Tensor<i8, [4]>, x: &Tensor<i8, [?, ?]>) {
    let t = x.load_like(o);
    o.store(cumsum(t, 1) - cumsum(t, 0) + t.max(0).reshape([1, 128]) + t.min(1).reshape([4, 1]));
    r.store(t.argmax(0) * 1000 + t.sum(0) as i32 + t.argmin(0));
    q.store(t.max(1) + t.argmin(1) as i8);
}
kernel fn n16<T, const N: i32>(o: &mut Tensor<T, [N]>, a: &mut Tensor<i32, [2]>, x: &Tensor<T, [?]>) {
    let t = x.load_like(o);
    o.store(t - t.max(0) + where(t > t.min(0), t, t.max(0) - t));
    a.store(where(arange::<i32>(2) == 0, t.argmax(0), t.argmin(0)));
}
fn main() {
    let x = ((rand::<f32>([8, 128], 41) * 200.0) as i32 - 100) as i8;
    let mut o = zeros::<i8>([8, 128]);
    let mut r = zeros::<i32>([256]);
    let mut q = zeros::<i8>([8]);
    n8(o.partition([4, 128]), r.partition([128]), q.partition([4]), &x).sync();
    let xh = (((rand::<f32>([1024], 42) * 400.0).floor() - 200.0) / 16.0) as f16;
    let mut oh = zeros::<f16>([1024]);
    let mut ah = zeros::<i32>([8]);
    n16::<f16, 256>(oh.partition([256]), ah.partition([2]), &xh).sync();
    let xb = xh as bf16;
    let mut ob = zeros::<bf16>([1024]);
    let mut ab = zeros::<i32>([4]);
    n16::<bf16, 512>(ob.partition([512]), ab.partition([2]), &xb).sync();
    let xs = ((rand::<f32>([1024], 43) * 60000.0) as i32 - 30000) as i16;
    let mut os = zeros::<i16>([1024]);
    let mut as_ = zeros::<i32>([8]);
    n16::<i16, 256>(os.partition([256]), as_.partition([2]), &xs).sync();
    let xu = ((rand::<f32>([1024], 44) * 255.0) as i32) as u8;
    let mut ou = zeros::<u8>([1024]);
    let mut au = zeros::<i32>([4]);
    n16::<u8, 512>(ou.partition([512]), au.partition([2]), &xu).sync();
    let (o2, os2, ou2) = (o as i64, os as i64, ou as i64);
    let (oh2, ob2) = (oh as f64, ob as f64);
    print((o2 * o2).sum(), o2.sum(), (r as i64 * r as i64).sum(), q, (oh2 * oh2).sum(), oh.sum(), ah);
    print((ob2 * ob2).sum(), ob.sum(), ab, (os2 * os2).sum(), os2.sum(), as_, (ou2 * ou2).sum(), ou2.sum(), au);
}
TILE
python3 -m tilelang run "$T/narrow.tile" --device cpu > "$T/cpu.txt" 2>&1
for fw in 1 0; do
  TILEC_FEWER_WARPS=$fw python3 -m tilelang run "$T/narrow.tile" --device gpu > "$T/gpu$fw.txt" 2>&1
  if [ ! -s "$T/cpu.txt" ]; then echo "narrow: the interpreter printed nothing (not a comparison)"; cat "$T/cpu.txt"
  elif cmp -s "$T/cpu.txt" "$T/gpu$fw.txt"; then echo "narrow TILEC_FEWER_WARPS=$fw: same"; else echo "narrow TILEC_FEWER_WARPS=$fw: DIFFERS"; diff "$T/cpu.txt" "$T/gpu$fw.txt" | head -20; fi
done
