#!/usr/bin/env bash
# What a user sees when the GPU path fails, on a real GPU (hgpuerr, 2026-12-07): the CPU tests
# (tests/runtime/test_gpu_errors_user.py) fake the driver; this runs the cases a card can show. <= ~90 s.
# (No kernel fault: safe code cannot make one, and `store_unchecked` is masked like every store.)
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hgpuerr_device.sh
# Prints one row a case: the exit status and stderr's first line. Expected (H100 80 GB / H200 141 GB):
#   oom         3  error[E0610]: out of GPU memory: 48.0 GiB more does not fit in the GPU's 79.1 GiB, of which
#                  this program's tensors hold 48.0 GiB   [the H200: the third tensor, 96.0 GiB held]
#   splitk=yes  3  error[E0604]: environment variable `TILEC_GEMM_SPLITK='yes'` is not a setting it takes: ...
#   arch=sm_100 3  error[E0604]: environment variable `TILEC_ARCH='sm_100'` is not a setting it takes: ...
#   arch=sm_80  0  (the sm_80 path on the Hopper card: runs)
#   flag=off    3  error[E0604]: environment variable `TILEC_SHIFT_DOT='off'` ... expected 0 or 1
#   auto        0  (no note: the GPU is there)
#   gemm256 gpu / cpu: the same sum of squares (relative difference ~1e-6)
set -uo pipefail
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
T=$(mktemp -d)
cat > "$T/oom.tile" <<'EOF'
fn main() {
    let a = zeros::<f32>([12, 1 << 30]);
    let b = zeros::<f32>([12, 1 << 30]);
    let c = zeros::<f32>([12, 1 << 30]);
    print(a.sum() + b.sum() + c.sum());
}
EOF
cat > "$T/gemm256.tile" <<'EOF'
kernel fn mm<const M: i32, const N: i32, const K: i32>(c: &mut Tensor<f32, [M, N]>, a: &Tensor<f16, [?, ?]>,
                                                       b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([M, K]);
    let pb = b.partition([K, N]);
    let mut acc = zeros::<f32>([M, N]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc);
}

fn main() {
    let a = randn::<f16>([512, 384], 1);
    let b = randn::<f16>([384, 512], 2);
    let mut c = zeros::<f32>([512, 512]);
    mm::<256, 256, 64>(c.partition([256, 256]), &a, &b).sync();
    print((c * c).sum());
}
EOF
row() {  # name, then the command
    local name=$1; shift
    local err rc
    err=$(timeout 60 "$@" 2>&1 >/dev/null); rc=$?
    printf '%-12s %3s  %s\n' "$name" "$rc" "$(printf '%s\n' "$err" | grep -v '^\s*$' | head -1 | cut -c1-150)"
}
echo "case         rc   first line of stderr"
row oom python3 -m tilelang run --device gpu "$T/oom.tile"
row splitk=yes env TILEC_GEMM_SPLITK=yes python3 -m tilelang run --device gpu examples/gemm.tile
row arch=sm_100 env TILEC_ARCH=sm_100 python3 -m tilelang run --device gpu examples/add.tile
row arch=sm_80 env TILEC_ARCH=sm_80 python3 -m tilelang run --device gpu examples/add.tile
row flag=off env TILEC_SHIFT_DOT=off python3 -m tilelang run --device gpu examples/add.tile
row auto python3 -m tilelang run examples/add.tile
# the 256 x 256 x 64 GEMM tile (E0603 on sm_90a before hgpuerr; sm_80's ring now): the two sums agree to ~1e-6
echo "gemm256 gpu: $(timeout 60 python3 -m tilelang run --device gpu "$T/gemm256.tile" 2>&1 | tail -1)"
echo "gemm256 cpu: $(timeout 60 python3 -m tilelang run --device cpu "$T/gemm256.tile" 2>&1 | tail -1)"
rm -rf "$T"
