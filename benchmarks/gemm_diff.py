"""A differential of GEMM loops without tensor cores (hrev round 18): random `mma` loops of f32, f64, i32, u32,
i64 or u64 tiles (nn, nt or tn operands; M, N from 1 to 90 and K from 0 to 70, so edges and empty operands;
tiles of 8-64 x 8-64 x 4-32; `num_warps` and `stages` hints or not; an accumulator from zeros, a constant or
the own tile; sm_80 or sm_90a; the operands' 16-byte alignment fact on or off), on the interpreter and in
llsim (the FMA ring, `passes/pipeline_fma.py`, or the scalar FMA loop where it does not apply): integers
bit for bit (products and sums wrap), floats within 1e-5 of the sum of the products' magnitudes. It found
sm_80's element copies reading element 0 of an operand with no elements (K = 0).

    python benchmarks/gemm_diff.py SEED COUNT [SECONDS]

prints a line per disagreement, a lowering or simulation error, and `ran N (B bad)`. CPU only, ~1 case a
second."""
import os, random, sys, time
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(R, "tests", "backend"))
sys.path.insert(0, os.path.join(R, "tests"))
import numpy as np
from llsim import SimDevice
import tilelang
from tilelang import driver
from tilelang.backend import lower_gpu
from tilelang.backend.facts import TensorFacts
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64}
if len(sys.argv) < 3 or not (sys.argv[1].isdigit() and sys.argv[2].isdigit()):
    print((__doc__ or "").strip(), file=sys.stderr)
    raise SystemExit(0 if "--help" in sys.argv or "-h" in sys.argv else 2)
seed, count = int(sys.argv[1]), int(sys.argv[2])
deadline = time.time() + float(sys.argv[3]) if len(sys.argv) > 3 else 1e18
ran = bad = 0
for i in range(count):
    if time.time() > deadline:
        break
    r = random.Random(f"{seed}:{i}")
    T = r.choice(list(NP))
    lay = r.choice(["nn", "nt", "tn"])
    BM, BN, BK = r.choice([8, 16, 32, 64]), r.choice([8, 16, 32, 64]), r.choice([4, 8, 16, 32])
    M, N, K = r.randint(1, 90), r.randint(1, 90), r.randint(0, 70)
    warps = r.choice([None, None, 1, 2, 4, 8])
    stages = r.choice([None, None, 2, 3, 5])
    init = r.choice(["zeros::<T>([BM, BN])", "c.load()", "full::<T>([BM, BN], 3 as T)"])
    arch = r.choice(["sm_80", "sm_90a"])
    hints = ", ".join(f"{k} = {v}" for k, v in (("num_warps", warps), ("stages", stages)) if v is not None)
    la = "pa.load([block_id(0), k])" if lay != "tn" else "pa.load([k, block_id(0)]).transpose()"
    pa = "[BM, BK]" if lay != "tn" else "[BK, BM]"
    lb = "pb.load([k, block_id(1)])" if lay != "nt" else "pb.load([block_id(1), k]).transpose()"
    pb = "[BK, BN]" if lay != "nt" else "[BN, BK]"
    kt = "pa.num_tiles(1)" if lay != "tn" else "pa.num_tiles(0)"
    src = (f"{'#[hints(' + hints + ')]' if hints else ''}\n"
           f"kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<T, [BM, BN]>, a: &Tensor<T, [?, ?]>, b: &Tensor<T, [?, ?]>) {{\n"
           f"    let pa = a.partition({pa});\n    let pb = b.partition({pb});\n    let mut acc = {init};\n"
           f"    for k in 0..{kt} {{\n        acc = mma({la}, {lb}, acc);\n    }}\n    c.store(acc);\n}}\n").replace("<T,", f"<{T},").replace("::<T>", f"::<{T}>").replace("as T", f"as {T}")
    main = (f"fn main() {{ let a = zeros::<{T}>([8, 8]); let b = zeros::<{T}>([8, 8]); let mut c = zeros::<{T}>([8, 8]);"
            f" g::<{BM}, {BN}, {BK}>(c.partition([{BM}, {BN}]), &a, &b).sync(); }}\n")
    res = driver.compile(src + main, "ir")
    if res.output is None:
        continue
    k = res.output[0]
    rng = np.random.default_rng(i)
    big = T in ("i32", "u32", "i64", "u64") and r.random() < 0.5
    def arr(shape):
        if T.startswith("f"):
            return rng.standard_normal(shape).astype(NP[T])
        hi = 2**31 if big else 8
        return rng.integers(0 if T.startswith("u") else -hi, hi, shape).astype(NP[T])
    a = arr((M, K) if lay != "tn" else (K, M))
    b = arr((K, N) if lay != "nt" else (N, K))
    c0 = arr((M, N))
    facts = {n: TensorFacts(r.random() < 0.8, tuple(d % 16 == 0 for d in x.shape)) for n, x in (("a", a), ("b", b), ("c", c0))}
    try:
        gk = lower_gpu(k, arch, facts)
    except Exception as e:
        print(f"{seed}:{i} LOWER {type(e).__name__} {e}"[:300], flush=True); bad += 1; continue
    want = c0.copy()
    tilelang.compile(src).g[BM, BN, BK](tilelang.partition(want, [BM, BN]), a, b).sync()
    got = c0.copy()
    gm, gn = -(-M // BM), -(-N // BN)
    try:
        SimDevice(arch).run(k, (gm, gn), [got, a, b], facts)
    except Exception as e:
        print(f"{seed}:{i} SIM {type(e).__name__} {str(e)[:200]} T={T} {lay} {M}x{N}x{K} {BM}x{BN}x{BK} {hints} {arch}", flush=True); bad += 1; continue
    ran += 1
    if T.startswith("f"):
        ref = np.abs(a.astype(np.float64) if lay != "tn" else a.T.astype(np.float64)) @ np.abs(b.astype(np.float64) if lay != "nt" else b.T.astype(np.float64))
        ok = np.all(np.abs(got.astype(np.float64) - want) <= 1e-5 * (ref + np.abs(c0) + 1))
    else:
        ok = np.array_equal(got, want)
    if not ok:
        bad += 1
        print(f"{seed}:{i} DIFF T={T} {lay} {M}x{N}x{K} {BM}x{BN}x{BK} hints[{hints}] init={init} {arch} aligned={facts['a'].aligned16}", flush=True)
print(f"ran {ran} ({bad} bad)")
