"""A differential of constant expressions (hrev round 12): random expressions of
literals of every type (casts, arithmetic, bitwise ops, shifts, comparisons,
negations, typed and untyped literals) evaluated four ways -- as a `const` item
(the checker's folding), as a host `let`, by a kernel's lowering (its constant
folding), and by a kernel that reads the `const` -- which must give the same
bits (signed zeros and NaN included). It found `const`s that computed in f64,
integer literals of a float context computed as integers, `!` and `&`, `|`, `^`
of constants and float-to-int casts with no checked value, and unrounded casts.

    python benchmarks/const_diff.py SEED0 SEED1

prints one line per disagreement and `ran N of M` (programs that fail the check,
mostly E0227 overflows, are skipped); the programs are written under
/tmp/const_diff/. CPU only, ~2 programs a second.
"""
import io, os, random, sys, math
import numpy as np
import tilelang.run as run

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]

def lit(r, t):
    if t in FLOATS:
        v = r.choice([0.1, 0.5, 1.0, 2.0, 3.0, 1e-3, 65504.0, 2048.0, 1.5, 0.0, 7.25, 100.0, 1e4, 3.3, 1e-6, 3e38, 1e300, 255.9, 2147483648.0, 4294967296.5, 1e19])
        if t in ("f16",) and v > 65504: v = 65504.0
        if t in ("bf16", "f32") and v > 3e38: v = 3e38
        s = repr(v)
        if "e" not in s and "." not in s: s += ".0"
        if r.random() < 0.3:
            return s if r.random() < 0.5 or v != int(v) or v > 1e6 else str(int(v))
        return f"{s}{t}"
    hi = {"i8": 127, "i16": 32767, "i32": 2**31 - 1, "i64": 2**63 - 1, "u8": 255, "u16": 65535, "u32": 2**32 - 1, "u64": 2**64 - 1}[t]
    v = r.choice([0, 1, 2, 3, 5, 7, 100, 127, hi, hi // 2, hi - 1, 16, 255])
    v = min(v, hi)
    if r.random() < 0.3 and v < 2**31:
        return str(v)
    return f"{v}{t}"

def expr(r, t, d):
    if d == 0 or r.random() < 0.25:
        return lit(r, t)
    k = r.randrange(5)
    if k == 0:
        src = r.choice(INTS + FLOATS)
        return f"({expr(r, src, d - 1)} as {t})"
    if k == 1 and t in FLOATS:
        op = r.choice(["+", "-", "*", "/", "%"])
        return f"({expr(r, t, d - 1)} {op} {expr(r, t, d - 1)})"
    if k == 1:
        op = r.choice(["+", "-", "*", "&", "|", "^", "/", "%"])
        return f"({expr(r, t, d - 1)} {op} {expr(r, t, d - 1)})"
    if k == 2 and t not in FLOATS:
        op = r.choice(["<<", ">>"])
        bits = int("".join(ch for ch in t if ch.isdigit()))
        return f"({expr(r, t, d - 1)} {op} {r.choice([a for a in [0, 1, 3, 7, 15, 31, 63] if a < bits])}{t})"
    if k == 3 and t in ["i8", "i16", "i32", "i64"] + FLOATS:
        return f"(-{expr(r, t, d - 1)})"
    if k == 4 and t not in FLOATS:
        return f"(!{expr(r, t, d - 1)})"
    if k == 4:
        src = r.choice(INTS + FLOATS)
        return f"(({expr(r, src, d - 1)} {r.choice(['<', '==', '>=', '!='])} {expr(r, src, d - 1)}) as {t})"
    return lit(r, t)

def program(seed, n=4):
    r = random.Random(seed)
    items = []
    for j in range(n):
        t = r.choice(INTS + FLOATS)
        items.append((t, expr(r, t, r.choice([2, 3, 4]))))
    consts = "\n".join(f"const C{j}: {t} = {e};" for j, (t, e) in enumerate(items))
    kern = "\n".join(f"    let k{j}: {t} = {e};\n    t = where(i == {j}, full::<f64>([{n}], k{j} as f64), t);" for j, (t, e) in enumerate(items))
    kc = "\n".join(f"    t = where(i == {j}, full::<f64>([{n}], C{j} as f64), t);" for j, (t, e) in enumerate(items))
    host = "\n".join(f"    let h{j}: {t} = {e};" for j, (t, e) in enumerate(items))
    hostv = "zeros::<f64>([%d])" % n
    cv = "zeros::<f64>([%d])" % n
    for j in range(n):
        hostv = f"where(i == {j}, full::<f64>([{n}], h{j} as f64), {hostv})"
        cv = f"where(i == {j}, full::<f64>([{n}], C{j} as f64), {cv})"
    return f"""{consts}
#[allow(warnings)]
kernel fn k(z: &mut Tensor<f64, [{n}]>, c: &mut Tensor<f64, [{n}]>) {{
    let i = arange::<i32>({n});
    let mut t = zeros::<f64>([{n}]);
{kern}
    z.store(t);
    t = zeros::<f64>([{n}]);
{kc}
    c.store(t);
}}
fn main() {{
    let i = arange::<i32>({n});
{host}
    let h = {hostv};
    let hc = {cv};
    let mut z = zeros::<f64>([{n}]);
    let mut c = zeros::<f64>([{n}]);
    k(z.partition([{n}]), c.partition([{n}])).sync();
}}
"""

s0, s1 = int(sys.argv[1]), int(sys.argv[2])
os.makedirs("/tmp/const_diff", exist_ok=True)
ok = 0
for seed in range(s0, s1):
    src = program(seed)
    p = f"/tmp/const_diff/s{seed}.tile"
    open(p, "w").write(src)
    try:
        ex = run.execute(p, "cpu", out=io.StringIO())
    except Exception as e:
        nm = type(e).__name__
        if nm not in ("CheckFailed", "TileError"):
            print(f"seed {seed}: {nm}: {str(e)[:300]}", flush=True)
        elif nm == "TileError":
            print(f"seed {seed}: run-time TileError: {str(e)[:200]}", flush=True)
        continue
    ok += 1
    L = ex.main_locals
    vals = {k: np.asarray(L[k].numpy()) for k in ("h", "hc", "z", "c")}
    for k in ("hc", "z", "c"):
        a, b = vals["h"], vals[k]
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        same &= (np.signbit(a) == np.signbit(b)) | np.isnan(a)
        if not same.all():
            bad = np.nonzero(~same)[0]
            print(f"seed {seed}: host vs {k} differ at {bad.tolist()}: host {a[bad].tolist()} {k} {b[bad].tolist()}", flush=True)
print("ran", ok, "of", s1 - s0)
