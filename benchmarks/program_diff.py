"""Whole-program differentials of kernel forms the other fuzzers do not write (hrev round 19): each program is
run by the interpreter and by the GPU code path in llsim (sm_80 and sm_90a; llsim also reports races), and
every tensor of `main` and the printed output must be the same, integers bit for bit.

- `--loops`: nested `for`/`while` loops (up to three deep, `break`s, `if` assignments) carrying tiles of
  [N, N], [N], [N, 1] and [1, N] and a scalar, inits constant or computed (hcliff3's TILEC_NESTED_CARRY),
  index patterns and band matrices of `arange` fed to `dot` (TILEC_REMAKE_FREE), reductions, arg-reductions,
  scans, transposes, broadcasts, loads by loop index, `num_warps` hints, N of 8 to 32; i32 data.
- `--gemm`: `mma` loops without tensor cores (hf32's FMA ring: f32/f64 of integer values, i32, u32, i64 with
  large values that wrap) in nn/nt/tn/tt, loops from 1, counted down, by steps of 2, `while`, a `break`, a
  second accumulator, a loop-carried row sum of A, operands changed before the product, epilogues reading
  `block_id`/`num_blocks`, a bias, a count; M, N, K odd.
- `--stores`: stores and loads of nested tiles of the own tile (rows, columns, blocks, single elements) in
  sequence, in loops and under `if`, with values that read earlier stores through reductions, `z.load()` and
  `z.store()` between them: the block's threads must order every store before a load of it.

- `--int8` (hrev21): i8/u8 GEMMs into i32 on the int8 tensor-core ring (on by default since hcliff6), starts
  near i32::MAX, i32/f32 epilogues with a bias row or a column vector, B either layout, edges.

- `--onehot` (hrev24): products by one-hot matrices of index comparisons (`codegen/gather_dot.py`'s forms and
  forms near them it must refuse: `2 * k == i`, conditions under `&`/`||`, weights that scale), indices at the
  edges (-1, K, i32::MIN/MAX, duplicates), rows and weights with inf/NaN/-0.0, i64 indices, a -0.0 start.
- `--edges` (hrev24): tiles partially out of range at every edge (`load_like` of inputs of other shapes,
  partition loads at negative and past-the-end indices, `load_padded`, transposed and reshaped loads, nested
  tiles of a partial own tile stored and read back).
- `--odd` (hrev24): tiles of any size ([A, B], A and B in 1..13) through reductions, arg-reductions, scans,
  transposes, reshapes, broadcasts and `dot`s: the padding lanes of a power-of-two layout must change nothing.
- `--walks` (hrev24): `tiles(axis)` walks and `queue(axis)`s over grids of rank 1 to 3, partial tiles, `continue`.

    python benchmarks/program_diff.py (--loops | --gemm | --stores | --tc | --int8 | --onehot | --edges | --odd
                                       | --walks) SEED COUNT [--seconds S] [--sms N]

With LLSIM_MISALIGN=1 every tensor starts one element past a 16-byte boundary (the facts of another library's
array at an offset); with LLSIM_BF16_F32=1 bf16 tensors are f32 memory (`tests/backend/llsim.py`, hrev24).

prints a line per disagreement (floats bit for bit, NaNs equal; or a refused program: the generators write
valid ones, but for a few of `--onehot`'s shapes and `--walks`' reductions), then
`{'ran': .., 'refused': .., 'bad': ..}`; programs under /tmp/program_diff/. CPU only, ~1 program a second
(`--gemm` ~0.2). Round 19 (FUZZING.md): --loops seeds 5100-5700, --gemm 100-260, --stores 100-600, --tc
100-199: none.
"""
import io
import os
import random
import sys
import time
import traceback

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [R, os.path.join(R, "tests", "backend"), os.path.join(R, "tests"), os.path.join(R, "tests", "user")]
import numpy as np  # noqa: E402
import tilelang.run as run  # noqa: E402
from llsim import sim_runtime_device  # noqa: E402
from userprog import program_tensors  # noqa: E402

from tilelang.diagnostics.model import TileError  # noqa: E402

N = 16


KINDS = ["m", "v", "r", "c"]

class G:
    def __init__(s, r): s.r = r; s.env = {k: [] for k in KINDS + ["s"]}; s.n = 0
    def var(s, k): s.n += 1; return f"{k}{s.n}"
    def scal(s, d=1):
        r = s.r; c = list(s.env["s"])
        if d <= 0 or r.random() < 0.5:
            return r.choice(c + ["block_id(0)", str(r.randint(0, 5))])
        return f"({s.scal(d-1)} {r.choice(['+', '-', '*'])} {s.scal(d-1)})"
    def e(s, k, d):
        r = s.r
        vs = s.env[k]
        if d <= 0 or r.random() < 0.25:
            if vs and r.random() < 0.8: return r.choice(vs)
            return s.leaf(k)
        a = lambda kk=k: s.e(kk, d - 1)
        ch = r.randrange(14)
        if ch < 3: return f"({a()} {r.choice(['+', '-', '*', '&', '|', '^', '+'])} {a()})"
        if ch == 3: return f"{r.choice(['maximum', 'minimum'])}({a()}, {a()})"
        if ch == 4: return f"where({a()} {r.choice(['<', '>', '==', '!='])} {a()}, {a()}, {a()})"
        if ch == 5: return f"({a()} + {s.scal()})"
        if ch == 6:  # from other kinds
            if k == "v": return r.choice([f"{s.e('m', d-1)}.{r.choice(['sum','max','min'])}({r.choice([0,1])})",
                                          f"({s.e('m', d-1)}.{r.choice(['argmax','argmin'])}({r.choice([0,1])}) as i32)",
                                          f"{s.e('r', d-1)}.reshape([{N}])", f"{s.e('c', d-1)}.reshape([{N}])"])
            if k == "m": return r.choice([f"({s.e('r', d-1)} + {s.e('c', d-1)})", f"{a()}.transpose()",
                                          f"cumsum({a()}, {r.choice([0,1])})",
                                          f"{s.e('r', d-1)}.broadcast([{N}, {N}])"])
            if k == "r": return r.choice([f"{s.e('v', d-1)}.reshape([{N}, 1])", f"{s.e('m', d-1)}.{r.choice(['sum','max'])}(1).reshape([{N}, 1])"])
            if k == "c": return r.choice([f"{s.e('v', d-1)}.reshape([1, {N}])", f"{s.e('m', d-1)}.{r.choice(['sum','min'])}(0).reshape([1, {N}])"])
        if ch == 7 and k == "v": return f"cumsum({a()}, 0)"
        if ch == 8 and k == "m": return f"dot({a()} & 3, {a()} & 3)"
        if ch == 9: return f"((({a()} as f32) * 0.5 {r.choice(['<','>='])} 3.0) as i32)"
        return f"({a()} {r.choice(['+', '-'])} {a()})"
    def leaf(s, k):
        r = s.r
        ch = r.randrange(5)
        if k == "m":
            if ch == 0: return f"((arange::<i32>({N}).reshape([{N}, 1]) + {r.randint(0,2)} == arange::<i32>({N}).reshape([1, {N}])) as i32)"
            if ch == 1: return f"px.load([{s.scal()} & 3, 0])"
            if ch == 2: return f"full::<i32>([{N}, {N}], {r.randint(-3, 3)})"
            return f"px.load([{r.randint(0,3)}, 0])"
        if k == "v":
            if ch == 0: return f"arange::<i32>({N})"
            if ch == 1: return f"pv.load([{s.scal()} & 3])"
            return f"full::<i32>([{N}], {r.randint(-3, 3)})"
        if k == "r": return r.choice([f"arange::<i32>({N}).reshape([{N}, 1])", f"zeros::<i32>([{N}, 1])"])
        return r.choice([f"(arange::<i32>({N}) * 3).reshape([1, {N}])", f"full::<i32>([1, {N}], 1)"])

    def init(s, k):
        r = s.r
        if r.random() < 0.5:
            return {"m": f"zeros::<i32>([{N}, {N}])", "v": f"full::<i32>([{N}], {r.choice(['i32::MIN', '0', '5'])})",
                    "r": f"zeros::<i32>([{N}, 1])", "c": f"full::<i32>([1, {N}], 2)"}[k]
        return s.e(k, 1)

    def block(s, depth, ind, loopvar):
        r = s.r; out = []
        # new carried values
        mine = []
        for _ in range(r.randint(1, 3)):
            k = r.choice(KINDS); v = s.var(k)
            out.append(f"{ind}let mut {v} = {s.init(k)};"); mine.append((k, v))
        for k, v in mine: s.env[k].append(v)
        lv = f"i{depth}"
        hi = r.randint(1, 4)
        w = r.random() < 0.2
        if w:
            out.append(f"{ind}let mut {lv} = 0;"); out.append(f"{ind}while {lv} < {hi} {{")
        else:
            out.append(f"{ind}for {lv} in 0..{hi} {{")
        s.env["s"].append(lv)
        ind2 = ind + "    "
        body = []
        for _ in range(r.randint(1, 3)):
            allv = [(k, v) for k in KINDS for v in s.env[k]]
            k, v = r.choice(allv)
            if r.random() < 0.2:
                body.append(f"{ind2}{v} = if {lv} % 2 == {r.randint(0,1)} {{ {s.e(k, 2)} }} else {{ {s.e(k, 2)} }};")
            elif r.random() < 0.15:
                body.append(f"{ind2}if {lv} == {r.randint(0, hi)} {{ {v} = {s.e(k, 2)}; }}")
            else:
                body.append(f"{ind2}{v} = {s.e(k, 2)};")
        if r.random() < 0.3:
            out.append(f"{ind2}sc = sc + {s.e('v', 1)}.{r.choice(['sum', 'max', 'min'])}(0);")
        if r.random() < 0.1:
            out.append(f"{ind2}if {lv} == 1 {{ print(sc); }}")
        out += body[: len(body) // 2 + 1]
        if depth < 2 and r.random() < 0.8:
            out += s.block(depth + 1, ind2, lv)
        out += body[len(body) // 2 + 1:]
        if r.random() < 0.3 and depth > 0:
            k, v = r.choice(mine)
            out.append(f"{ind2}if {lv} == {r.randint(1, 3)} {{ break; }}")
        if w: out.append(f"{ind2}{lv} += 1;")
        out.append(f"{ind}}}")
        s.env["s"].remove(lv)
        # after the loop: fold mine into outer ones
        for k, v in mine:
            outer = [x for x in s.env[k] if x not in [m for _, m in mine]]
            if outer and r.random() < 0.7:
                o = r.choice(outer); out.append(f"{ind}{o} = {o} + {v};")
        for k, v in mine: s.env[k].remove(v)
        s.env.setdefault("fin_" + str(depth), []).extend(mine)
        return out

def loops_program(seed):
    global N
    r = random.Random(seed)
    N = r.choice([8, 16, 16, 32])
    hint = f"#[hints(num_warps = {r.choice([1, 2, 4, 8])})]\n" if r.random() < 0.4 else ""
    g = G(r)
    lines = []
    # top-level accumulators
    top = []
    for k in KINDS:
        v = g.var(k); lines.append(f"    let mut {v} = {g.init(k) if r.random()<0.5 else g.leaf(k)};"); g.env[k].append(v); top.append((k, v))
    lines.append("    let mut sc = 0;")
    lines += g.block(0, "    ", None)
    mv = " + ".join([v for k, v in top if k == "m"] + [f"({v} + {w})" for k, v in top if k == 'r' for kk, w in top if kk == 'c'])
    vv = " + ".join([v for k, v in top if k == "v"])
    body = "\n".join(lines)
    return f"""{hint}kernel fn k(o2: &mut Tensor<i32, [{N}, {N}]>, o1: &mut Tensor<i32, [{N}]>, x: &Tensor<i32, [?, ?]>, xv: &Tensor<i32, [?]>) {{
    let px = x.partition([{N}, {N}]);
    let pv = xv.partition([{N}]);
{body}
    o2.store({mv});
    o1.store({vv} + sc);
}}
fn main() {{
    let x = (randn::<f32>([{4*N}, {N}], 3) * 4.0) as i32;
    let xv = (randn::<f32>([{4*N}], 4) * 4.0) as i32;
    let mut o2 = zeros::<i32>([{2*N}, {N}]);
    let mut o1 = zeros::<i32>([{2*N}]);
    k(o2.partition([{N}, {N}]), o1.partition([{N}]), &x, &xv).sync();
    print(o1.sum());
}}
"""



def gemm_program(seed):
    r = random.Random(seed)
    T = r.choice(["f32", "f32", "i32", "i64", "f64", "u32"])
    isf = T.startswith("f")
    lay = r.choice(["nn", "nt", "tn", "tt"])
    BM, BN, BK = r.choice([8, 16, 32, 64]), r.choice([8, 16, 32, 64]), r.choice([4, 8, 16, 32])
    M, N, K = r.randint(1, 100), r.randint(1, 100), r.randint(1, 90)
    hints = []
    if r.random() < 0.4: hints.append(f"num_warps = {r.choice([1, 2, 4, 8])}")
    if r.random() < 0.3: hints.append(f"stages = {r.choice([2, 3, 4])}")
    hint = f"#[hints({', '.join(hints)})]\n" if hints else ""
    iexp = r.choice(["block_id(0)", "block_id(0)", "num_blocks(0) - 1 - block_id(0)"])
    la = f"pa.load([{iexp}, k])" if lay[0] == "n" else f"pa.load([k, {iexp}]).transpose()"
    pa = "[BM, BK]" if lay[0] == "n" else "[BK, BM]"
    lb = "pb.load([k, block_id(1)])" if lay[1] == "n" else "pb.load([block_id(1), k]).transpose()"
    pb = "[BK, BN]" if lay[1] == "n" else "[BN, BK]"
    kt = "pa.num_tiles(1)" if lay[0] == "n" else "pa.num_tiles(0)"
    if r.random() < 0.2: la = f"({la} {r.choice(['*', '+'])} (2 as T))"
    if r.random() < 0.1: lb = f"maximum({lb}, (0 as T))"
    init = r.choice(["zeros::<T>([BM, BN])", "c.load()", "full::<T>([BM, BN], 3 as T)"])
    head = r.choice(["for k in 0..KT {", "for k in 0..KT {", "for k in 1..KT {", "for r0 in 0..KT { let k = KT - 1 - r0;",
                     "for k2 in 0..(KT + 1) / 2 { let k = k2 * 2;", "WHILE", "for k in 0..KT { if k == 2 { break; }"])
    pre, post = "", ""
    if head == "WHILE":
        pre = "    let mut k = 0;\n"; head = "while k < KT {"; post = "        k += 1;\n"
    head = head.replace("KT", kt)
    body = f"        acc = mma({la}, {lb}, acc);\n"
    extra = r.randrange(6)
    if extra == 0: body += "        cnt += 1;\n"
    elif extra == 1: body = f"        acc = mma({la}, {lb}, acc) + (1 as T);\n"
    elif extra == 2: body += f"        acc2 = mma({lb.replace('block_id(1)', 'block_id(1)')}.transpose(), {la}.transpose(), acc2);\n" if BM == BN else ""
    elif extra == 3: body = f"        let t = {la};\n        acc = mma(t, {lb}, acc);\n        s = s + t.sum(1).reshape([BM, 1]);\n"
    epi = r.choice(["acc", "acc + (cnt as T)", "acc + bias.partition([BN]).load([block_id(1)]).reshape([1, BN])",
                    "where(acc > (0 as T), acc, (1 as T))", "acc + s", "acc + acc2.transpose()" if BM == BN else "acc",
                    "acc * (block_id(0) as T) + (num_blocks(1) as T)"])
    src = f"""{hint}kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<T, [BM, BN]>, a: &Tensor<T, [?, ?]>, b: &Tensor<T, [?, ?]>, bias: &Tensor<T, [?]>) {{
    let pa = a.partition({pa});
    let pb = b.partition({pb});
    let mut acc = {init};
    let mut acc2 = zeros::<T>([BN, BM]);
    let mut s = zeros::<T>([BM, 1]);
    let mut cnt = 0;
{pre}    {head}
{body}{post}    }}
    c.store({epi});
}}
"""
    big = (not isf) and r.random() < 0.4
    def mk(shape, sd):
        if isf: return f"((randn::<f32>({shape}, {sd}) * 4.0) as i32 as {T})"
        if big: return f"((randn::<f32>({shape}, {sd}) * 1000000000.0) as i64 as {T})"
        return f"((randn::<f32>({shape}, {sd}) * 4.0) as i32 as {T})"
    ash = f"[{M}, {K}]" if lay[0] == "n" else f"[{K}, {M}]"
    bsh = f"[{K}, {N}]" if lay[1] == "n" else f"[{N}, {K}]"
    main = f"""fn main() {{
    let a = {mk(ash, 1)};
    let b = {mk(bsh, 2)};
    let bias = {mk(f'[{N}]', 3)};
    let mut c = {mk(f'[{M}, {N}]', 4)};
    g::<{BM}, {BN}, {BK}>(c.partition([{BM}, {BN}]), &a, &b, &bias).sync();
}}
"""
    return (src + main).replace("<T,", f"<{T},").replace("::<T>", f"::<{T}>").replace("as T)", f"as {T})")



def tc_program(seed):
    """`--tc`: tensor-core GEMMs (f16/bf16 operands of small integers, f32 sums: exact) on the paths whose variants
    the runtime picks by the launch (split-K for few tiles, wide tiles for many: `sim_runtime_device`'s `sms`)."""
    r = random.Random(seed)
    T = r.choice(["f16", "bf16"])
    BM, BN, BK = r.choice([64, 64, 128, 32, 16]), r.choice([64, 128]), r.choice([32, 64, 128])
    M, N, K = r.randint(1, 200), r.randint(1, 260), r.choice([64, 128, 200, 256, 512])
    nt = r.random() < 0.5
    lb = "pb.load([block_id(1), k]).transpose()" if nt else "pb.load([k, block_id(1)])"
    pbs = "[BN, BK]" if nt else "[BK, BN]"
    init = r.choice(["zeros::<f32>([BM, BN])", "zeros::<f32>([BM, BN])", "c.load()", "full::<f32>([BM, BN], 0.5)"])
    pre = r.choice(["", "", "    let bb = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);\n"])
    epi = r.choice([
        "acc", "maximum(acc, 0.0)", "where(block_id(0) == 0, acc, acc * 2.0)", "acc + (block_id(1) as f32)",
        "where(block_id(1) == num_blocks(1) - 1, acc + 1.0, acc)", "acc * 0.5 + c.load()",
        "acc + bias.partition([BN]).load([block_id(1)]).reshape([1, BN])", "(acc + 0.25) * 2.0",
        "acc + d.partition([BM, BN]).load([block_id(0), block_id(1)])", "maximum(acc, 0.0) - 1.0"])
    if pre:
        epi = f"({epi}) + bb"
    hint = f"#[hints(num_warps = {r.choice([4, 8])})]\n" if r.random() < 0.2 else ""
    src = f"""{hint}kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, a: &Tensor<T, [?, ?]>,
        b: &Tensor<T, [?, ?]>, bias: &Tensor<f32, [?]>, d: &Tensor<f32, [?, ?]>) {{
    let pa = a.partition([BM, BK]);
    let pb = b.partition({pbs});
{pre}    let mut acc = {init};
    for k in 0..pa.num_tiles(1) {{
        acc = mma(pa.load([block_id(0), k]), {lb}, acc);
    }}
    c.store({epi});
}}
fn main() {{
    let a = (randn::<f32>([{M}, {K}], 1) * 2.0) as i32 as T;
    let b = (randn::<f32>({[N, K] if nt else [K, N]}, 2) * 2.0) as i32 as T;
    let bias = (randn::<f32>([{N}], 3) * 2.0) as i32 as f32;
    let d = (randn::<f32>([{M}, {N}], 4) * 2.0) as i32 as f32;
    let mut c = (randn::<f32>([{M}, {N}], 5) * 2.0) as i32 as f32;
    g::<{BM}, {BN}, {BK}>(c.partition([{BM}, {BN}]), &a, &b, &bias, &d).sync();
}}
"""
    return src.replace("<T,", f"<{T},").replace("as T;", f"as {T};")


def int8_program(seed):
    """`--int8` (hrev21): i8/u8 GEMMs into i32 (hcliff6's tensor-core ring, on by default: sm_80's cp.async ring,
    and sm_90a's fallback to it), B [K, N] or [N, K], edges in M, N and K, starts near i32::MAX (the sums wrap),
    i32 and f32 epilogues (scales, a bias row, a column vector, `block_id`), a second product in the loop."""
    r = random.Random(seed)
    T = r.choice(["i8", "u8"])
    BM, BN, BK = r.choice([16, 32, 64, 64, 128]), r.choice([32, 64, 128]), r.choice([32, 64, 128])
    M, N, K = r.randint(1, 150), r.randint(1, 200), r.choice([32, 64, 96, 128, 200, 256])
    nt = r.random() < 0.4
    lb = "pb.load([block_id(1), k]).transpose()" if nt else "pb.load([k, block_id(1)])"
    pbs = "[BN, BK]" if nt else "[BK, BN]"
    init = r.choice(["zeros::<i32>([BM, BN])", "zeros::<i32>([BM, BN])", "full::<i32>([BM, BN], 2147480000)",
                     "full::<i32>([BM, BN], -7)", "c.load()"])
    body = f"        acc = mma(pa.load([block_id(0), k]), {lb}, acc);\n"
    if r.random() < 0.2:
        body += f"        acc = acc + (k as i32);\n"
    epi = r.choice([
        "acc", "acc", "acc * 3 + (block_id(1) as i32)", "((acc as f32) * 0.5) as i32",
        "acc + rs.partition([BN]).load([block_id(1)]).reshape([1, BN])",
        "((acc as f32) * (cs.partition([BM]).load([block_id(0)]).reshape([BM, 1]) as f32)) as i32",
        "where(acc > 0, acc, 0)", "acc - c.load()"])
    hint = f"#[hints(num_warps = {r.choice([2, 4, 8])})]\n" if r.random() < 0.2 else ""
    off = "" if T == "i8" else " + 128.0"  # (`as` from a float saturates)
    src = f"""{hint}kernel fn g<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<i32, [BM, BN]>, a: &Tensor<T, [?, ?]>,
        b: &Tensor<T, [?, ?]>, rs: &Tensor<i32, [?]>, cs: &Tensor<i32, [?]>) {{
    let pa = a.partition([BM, BK]);
    let pb = b.partition({pbs});
    let mut acc = {init};
    for k in 0..pa.num_tiles(1) {{
{body}    }}
    c.store({epi});
}}
fn main() {{
    let a = (randn::<f32>([{M}, {K}], 1) * 90.0{off}) as T;
    let b = (randn::<f32>({[N, K] if nt else [K, N]}, 2) * 90.0{off}) as T;
    let rs = (randn::<f32>([{N}], 3) * 100.0) as i32;
    let cs = (randn::<f32>([{M}], 4) * 3.0) as i32;
    let mut c = (randn::<f32>([{M}, {N}], 5) * 1000.0) as i32;
    g::<{BM}, {BN}, {BK}>(c.partition([{BM}, {BN}]), &a, &b, &rs, &cs).sync();
}}
"""
    return src.replace("<T,", f"<{T},").replace("as T;", f"as {T};")


def stores_program(seed):
    r = random.Random(seed)
    R, C = r.choice([(16, 16), (8, 32), (32, 8), (16, 32), (4, 64), (64, 64)])
    views = {}
    cand = [(1, C), (R, 1), (R // 2, C // 2), (2, C), (R, C // 4), (R // 4, C // 4), (R, C), (1, 1)]
    lines = ["    let mut s0 = x.load_like(z).sum(0).sum(0) % 1000;"]
    for vi, (a, b) in enumerate(r.sample(cand, 3)):
        lines.append(f"    let q{vi} = z.partition([{a}, {b}]);")
        views[f"q{vi}"] = (a, b)
    def val(a, b, extra):
        return f"(full::<i32>([{a}, {b}], s0 % 1000) + arange::<i32>({b}).reshape([1, {b}]) * {r.randint(1, 5)} + arange::<i32>({a}).reshape([{a}, 1]) + {extra})"
    for step in range(r.randint(3, 10)):
        k = r.randrange(8)
        qv = r.choice(list(views)); a, b = views[qv]
        nr, nc = R // a, C // b
        if k <= 1:
            ii, jj = r.randrange(nr), r.randrange(nc)
            lines.append(f"    {qv}.store({val(a, b, step)}, [{ii}, {jj}]);")
        elif k == 2:
            lines.append(f"    for i in 0..{qv}.num_tiles(0) {{")
            lines.append(f"        for j in 0..{qv}.num_tiles(1) {{")
            lines.append(f"            {qv}.store({val(a, b, 'i * 3 + j')}, [i, j]);")
            if r.random() < 0.5:
                lines.append(f"            s0 = s0 + {qv}.load([i, j]).{r.choice(['sum', 'max'])}(0).sum(0) % 7;")
            lines.append(f"        }}")
            lines.append(f"    }}")
        elif k == 3:
            lines.append(f"    s0 = s0 + z.load().{r.choice(['sum', 'max', 'min'])}({r.randint(0, 1)}).sum(0) % 1000;")
        elif k == 4:
            ii, jj = r.randrange(nr), r.randrange(nc)
            lines.append(f"    s0 = s0 * 3 + {qv}.load([{ii}, {jj}]).sum(0).{r.choice(['sum', 'max'])}(0) % 1000;")
        elif k == 5:
            lines.append(f"    for i in 0..{qv}.num_tiles(0) {{")
            jj = r.randrange(nc)
            lines.append(f"        let u = {qv}.load([i, {jj}]);")
            lines.append(f"        {qv}.store(u * 2 + i, [i, {r.randrange(nc)}]);")
            lines.append(f"        s0 = s0 + u.max(1).sum(0) % 100;")
            lines.append(f"    }}")
        elif k == 6:
            lines.append(f"    z.store(z.load(){r.choice(['', '.transpose().transpose()'])} * 2 - s0);" if R != C else f"    z.store(z.load().transpose() - s0);")
        else:
            lines.append(f"    if s0 % 2 == 0 {{ {qv}.store({val(a, b, 7)}, [{r.randrange(nr)}, {r.randrange(nc)}]); }}")
    lines.append(f"    w.store(z.load() + s0);")
    body = "\n".join(lines)
    nb = r.choice([1, 2, 3])
    hint = f"#[hints(num_warps = {r.choice([1, 2, 4, 8])})]\n" if r.random() < 0.5 else ""
    return f"""{hint}kernel fn k(z: &mut Tensor<i32, [{R}, {C}]>, w: &mut Tensor<i32, [{R}, {C}]>, x: &Tensor<i32, [?, ?]>) {{
{body}
}}
fn main() {{
    let x = (randn::<f32>([{R * nb}, {C}], 3) * 10.0) as i32;
    let mut z = zeros::<i32>([{R * nb}, {C}]);
    let mut w = zeros::<i32>([{R * nb}, {C}]);
    k(z.partition([{R}, {C}]), w.partition([{R}, {C}]), &x).sync();
    print(w.sum());
}}
"""



def onehot_program(seed, d="/tmp/program_diff"):
    """`--onehot` (hrev24): products by one-hot matrices of index comparisons (gather_dot's forms and forms near
    them it must refuse), indices at the edges (-1, K, i32::MIN/MAX, duplicates), weights and rows with inf/NaN/-0."""
    r = random.Random(seed)
    M = r.choice([1, 2, 4])
    K = r.choice([8, 16, 32, 32, 64])
    N = r.choice([1, 4, 8, 16, 16, 8])
    left = r.random() < 0.3
    it = "i64" if r.random() < 0.2 else "i32"
    # data
    rx = np.array([r.choice([0.0, 1.0, -2.0, 0.5, -0.0, 3.0, -1.5]) for _ in range(4 * 32 * 16)], dtype=np.float32)
    for _ in range(r.choice([0, 0, 1, 2])):
        rx[r.randrange(rx.size)] = r.choice([np.inf, -np.inf, np.nan])
    pool = [-1, 0, 1, K - 1, K, K + 1, -2147483648, 2147483647, 2, 3, -K]
    ix = np.array([r.choice(pool) if r.random() < 0.5 else r.randrange(K) for _ in range(4 * 16)], dtype=np.int32)
    # (powers of two and their sums: products and quotients exact, so any order of the sums gives the same bits)
    wv = np.array([r.choice([0.0, -0.0, 0.5, 1.0, 0.25, -4.0, 2.0]) for _ in range(4 * 16)], dtype=np.float32)
    if r.random() < 0.2:
        wv[r.randrange(wv.size)] = r.choice([np.inf, np.nan])
    bv = np.array([r.random() < 0.5 for _ in range(16)], dtype=np.bool_)
    stem = f"{d}/onehot{seed}"
    np.save(stem + "_x.npy", rx.reshape(4 * 32, 16))
    np.save(stem + "_i.npy", ix); np.save(stem + "_w.npy", wv); np.save(stem + "_b.npy", bv)
    F = M if left else N  # the free coordinate's extent
    # matrix built [K, F] with k along rows (transposed at the end for the left operand, or built [F, K] directly)
    direct_left = left and r.random() < 0.5
    if direct_left:  # [F, K]: k along columns
        kk, ff = "kc", "kr"
        ishape, fshape = f"[{F}, 1]", f"[{F}, 1]"
    else:
        kk, ff = "kr", "kc"
        ishape, fshape = f"[1, {F}]", f"[1, {F}]"
    idxs = [f"ix.partition([{F}]).load([{j}]).reshape({ishape})" for j in range(4)]
    wts = [f"wv.partition([{F}]).load([{j}]).reshape({fshape})" for j in range(4)]
    cast = (lambda s: f"({s}) as i64") if it == "i64" else (lambda s: s)
    kv = f"k64" if it == "i64" else kk
    def idx():
        c = r.randrange(10)
        if c < 3 or c > 7: return cast(r.choice(idxs))
        if c == 3: return cast(f"minimum({r.choice(idxs)} + 1, {K - 3})")
        if c == 4: return cast(f"({ff} + {r.randint(-2, 2)})")
        if c == 5: return cast(f"({r.randint(0, K)} - {ff})")
        if c == 6: return str(r.randint(-1, K))
        return cast(f"(2 * {ff})")
    def eq():
        c = r.randrange(16)
        i = idx()
        if c == 0: return f"({kv} == {i})"
        if c == 1: return f"({i} == {kv})"
        if c == 2: return f"({kv} + {r.randint(-3, 3)} == {i})"
        if c == 3: return f"({r.randint(0, K)} - {kv} == {i})"
        if c == 4: return f"(-{kv} == {i})"
        if c == 5: return f"(2 * {kv} == {i})"
        return f"({kv} == {i})"  # not a = +-1: the FMA loop
    def cond(d=0):
        c = r.randrange(10)
        if c < 3 or c > 6 or d > 1: return eq()
        if c == 3: return f"({cond(d + 1)} || {cond(d + 1)})"
        if c == 4: return f"({cond(d + 1)} & ({kv} {r.choice(['<', '>=', '!=', '<='])} {idx()}))"
        if c == 5: return f"({cond(d + 1)} & bb)"
        return f"(({kv} {r.choice(['<', '>='])} {idx()}) & {cond(d + 1)})"
    def wt():
        c = r.randrange(6)
        if c < 2: return r.choice(wts)
        if c == 2: return f"(1.0 - {r.choice(wts)})"
        if c == 3: return r.choice(["0.5", "-2.5", "1.0", "-0.0", "s"])
        if c == 4: return f"({r.choice(wts)} * 2.0)"
        return "f32::INFINITY" if r.random() < 0.3 else "0.0"
    def leaf(d=0):
        c = r.randrange(6)
        if c < 2: return f"where({cond()}, {wt()}, {r.choice(['0.0', '-0.0']) if d > 1 or r.random() < 0.6 else leaf(d + 1)})"
        if c == 2: return f"({cond()} as f32)"
        if c == 3: return f"(({cond()} as f32) * {wt()})"
        if c == 4: return f"(({cond()} as f32) / {wt()})"
        return f"({wt()} * ({cond()} as f32))"
    m = leaf()
    for _ in range(r.choice([0, 0, 1, 1, 2])):
        m = f"({m} {r.choice(['+', '-', '+'])} {leaf()})"
    if left and not direct_left:
        m = f"({m}).transpose()"
    right_t = r.random() < 0.15 and not left
    if left:
        xin = f"x.partition([{K}, {N}]).load([block_id(0), 0])"
        prod = f"dot({m}, t)"
    else:
        xin = f"x.partition([{M}, {K}]).load([block_id(0), 0])"
        prod = f"dot(t, {m})"
    acc = ""
    if r.random() < 0.2:
        # (an accumulator of zeros: the FMA loop from a -0.0 start keeps -0.0 where every product is -0.0 and
        # the interpreter's sum then start gives +0.0, a sign of a zero within the sums' documented tolerance)
        prod = f"mma({prod[4:-1]}, {r.choice([f'zeros::<f32>([{M}, {N}])', f'full::<f32>([{M}, {N}], 0.0)'])})"
    hint = f"#[hints(num_warps = {r.choice([1, 2, 4, 8])})]\n" if r.random() < 0.3 else ""
    nb = r.choice([1, 2])
    src = f"""{hint}kernel fn g(y: &mut Tensor<f32, [{M}, {N}]>, x: &Tensor<f32, [?, ?]>, ix: &Tensor<i32, [?]>,
        wv: &Tensor<f32, [?]>, bv: &Tensor<bool, [?]>) {{
    let t = {xin};
    let kr = arange::<i32>({K if not direct_left else F}).reshape([{K if not direct_left else F}, 1]);
    let kc = arange::<i32>({F if not direct_left else K}).reshape([1, {F if not direct_left else K}]);
    let k64 = ({kk}) as i64;
    let bb = bv.partition([{F}]).load([0]).reshape({fshape});
    let s = wv.partition([1]).load([5]).item();
    y.store({prod});
}}
fn main() {{
    let x: Tensor<f32, [?, ?]> = load_npy("{stem}_x.npy");
    let ix: Tensor<i32, [?]> = load_npy("{stem}_i.npy");
    let wv: Tensor<f32, [?]> = load_npy("{stem}_w.npy");
    let bv: Tensor<bool, [?]> = load_npy("{stem}_b.npy");
    let mut y = zeros::<f32>([{M * nb}, {N}]);
    g(y.partition([{M}, {N}]), &x, &ix, &wv, &bv).sync();
}}
"""
    return src


def edges_program(seed):
    """`--edges` (hrev24): tiles partially out of range at every edge: the own tile, `load_like` of inputs of other
    shapes (smaller, larger, 1-row), partition loads at negative and past-the-end indices, `load_padded`, nested
    tiles of a partial own tile stored and read back, through transposes and reshapes; i32 data."""
    r = random.Random(seed)
    TR, TC = r.choice([(4, 8), (8, 8), (2, 16), (16, 4), (1, 32), (8, 1), (32, 32), (4, 4)])
    R, C = r.randint(1, 3 * TR + 1), r.randint(1, 3 * TC + 1)
    XR, XC = r.choice([R, R, r.randint(1, 3 * TR + 2)]), r.choice([C, C, r.randint(1, 3 * TC + 2)])
    lines = []
    def tile_expr():
        c = r.randrange(9)
        if c == 0: return "x.load_like(z)"
        if c == 1: return f"x.partition([{TR}, {TC}]).load([block_id(0) + {r.randint(-2, 2)}, block_id(1) + {r.randint(-2, 2)}])"
        if c == 2: return f"x.partition([{TR}, {TC}]).load_padded([block_id(0) + {r.randint(-1, 1)}, block_id(1)], {r.randint(-9, 9)})"
        if c == 3 and TR == TC: return f"x.partition([{TR}, {TC}]).load([block_id(1), block_id(0)]).transpose()"
        if c == 4: return f"x.partition([{TC}, {TR}]).load([block_id(1) + {r.randint(-1, 1)}, block_id(0)]).transpose()"
        if c == 5: return f"v.partition([{TR * TC}]).load([block_id(0) * num_blocks(1) + block_id(1)]).reshape([{TR}, {TC}])"
        if c == 6: return f"x.partition([1, {TC}]).load([block_id(0) * {TR} + {r.randint(-1, TR)}, block_id(1)]).broadcast([{TR}, {TC}])"
        if c == 7: return f"x.partition([{TR}, 1]).load([block_id(0), block_id(1) * {TC} + {r.randint(-1, TC)}]).broadcast([{TR}, {TC}])"
        return "z.load()"
    lines.append(f"    let mut acc = {tile_expr()};")
    for _ in range(r.randint(1, 4)):
        lines.append(f"    acc = acc * 3 + {tile_expr()};")
    # nested views of the own tile
    subs = [(a, b) for a in (1, 2, TR) for b in (1, 2, TC) if TR % a == 0 and TC % b == 0]
    a, b = r.choice(subs)
    lines.append(f"    z.store(acc);")
    lines.append(f"    let q = z.partition([{a}, {b}]);")
    na, nb = TR // a, TC // b
    for _ in range(r.randint(0, 3)):
        c = r.randrange(4)
        i, j = r.randrange(na), r.randrange(nb)
        if c == 0:
            lines.append(f"    q.store(q.load([{i}, {j}]) + 100, [{i}, {j}]);")
        elif c == 1:
            lines.append(f"    for i in 0..q.num_tiles(0) {{ q.store(q.load([i, {j}]) * 2 + i, [i, {j}]); }}")
        elif c == 2:
            lines.append(f"    let s = q.load([{i}, {j}]).sum(0).sum(0);")
            lines.append(f"    w.store(w.load() + s);")
        else:
            lines.append(f"    q.store(x.partition([{a}, {b}]).load([block_id(0) * {na} + {i}, block_id(1) * {nb} + {j}]) - 7, [{i}, {j}]);")
    lines.append(f"    w.store(w.load() + z.load().sum(1).reshape([{TR}, 1]));")
    body = "\n".join(lines)
    hint = f"#[hints(num_warps = {r.choice([1, 2, 4, 8])})]\n" if r.random() < 0.4 else ""
    return f"""{hint}kernel fn k(z: &mut Tensor<i32, [{TR}, {TC}]>, w: &mut Tensor<i32, [{TR}, {TC}]>, x: &Tensor<i32, [?, ?]>, v: &Tensor<i32, [?]>) {{
{body}
}}
fn main() {{
    let x = (randn::<f32>([{XR}, {XC}], {seed % 1000}) * 10.0) as i32;
    let v = x.reshape([{XR * XC}]);
    let mut z = full::<i32>([{R}, {C}], -5);
    let mut w = full::<i32>([{R}, {C}], 11);
    k(z.partition([{TR}, {TC}]), w.partition([{TR}, {TC}]), &x, &v).sync();
    print(z.sum(), w.sum());
}}
"""


def odd_program(seed):
    """`--odd` (hrev24): tiles of any size ([A, B] with A, B in 1..13, not powers of two) through reductions
    (sum, max, min, prod, argmax, argmin on either axis), scans, transposes, reshapes to other shapes of the same
    size, broadcasts, `dot`s, `where`s of `arange` comparisons and partial edge tiles: the padding lanes a
    power-of-two layout adds must change nothing; i32 data with edges (i32::MIN/MAX, 0, -1), wrapping."""
    r = random.Random(seed)
    A, B = r.randint(1, 13), r.randint(1, 13)
    if A * B == 1: B = 3
    def m(d):  # [A, B]
        if d <= 0 or r.random() < 0.2:
            return r.choice(["a", "a", "b", f"(arange::<i32>({B}).reshape([1, {B}]) + arange::<i32>({A}).reshape([{A}, 1]) * {r.randint(-3, 3)})", "(a - s0)"])
        c = r.randrange(12)
        if c < 3: return f"({m(d-1)} {r.choice(['+', '-', '*', '&', '|', '^'])} {m(d-1)})"
        if c == 3: return f"{r.choice(['maximum', 'minimum'])}({m(d-1)}, {m(d-1)})"
        if c == 4: return f"({m(d-1)}.{r.choice(['sum', 'max', 'min', 'prod'])}(1).reshape([{A}, 1]) + {m(d-1)})"
        if c == 5: return f"({m(d-1)}.{r.choice(['sum', 'max', 'min', 'prod'])}(0).reshape([1, {B}]) - {m(d-1)})"
        if c == 6:
            ax = r.choice([0, 1])
            sh = f"[1, {B}]" if ax == 0 else f"[{A}, 1]"
            return f"(({m(d-1)}.{r.choice(['argmax', 'argmin'])}({ax}) as i32).reshape({sh}) + {m(d-1)})"
        if c == 7: return f"{r.choice(['cumsum', 'cummax', 'cummin', 'cumprod'])}({m(d-1)}, {r.choice([0, 1])})"
        if c == 8: return f"{m(d-1)}.transpose().transpose()" if A != B else f"{m(d-1)}.transpose()"
        if c == 9:
            shapes = [(x, A * B // x) for x in range(1, A * B + 1) if (A * B) % x == 0]
            p, q = r.choice(shapes)
            red = r.choice(["", f".transpose().reshape([{p}, {q}])" if p == q else ""])
            return f"{m(d-1)}.reshape([{p}, {q}]){red}.reshape([{A}, {B}])"
        if c == 10: return f"where({m(d-1)} > {m(d-1)}, {m(d-1)}, {r.randint(-3, 3)})"
        return f"(dot({m(d-1)} & 7, ({m(d-1)}).transpose() & 7).{r.choice(['sum', 'max'])}(1).reshape([{A}, 1]) + {m(d-1)})"
    body = m(3)
    # argmax forms (the generator's placeholder above kept them out; here a real one)
    if r.random() < 0.5:
        ax = r.choice([0, 1])
        sh = f"[1, {B}]" if ax == 0 else f"[{A}, 1]"
        body = f"({body} + ({m(1)}.{r.choice(['argmax', 'argmin'])}({ax}) as i32).reshape({sh}))"
    RR, CC = r.randint(1, 3 * A), r.randint(1, 3 * B)
    hint = f"#[hints(num_warps = {r.choice([1, 2, 4, 8])})]\n" if r.random() < 0.4 else ""
    return f"""{hint}kernel fn k(z: &mut Tensor<i32, [{A}, {B}]>, x: &Tensor<i32, [?, ?]>, y: &Tensor<i32, [?, ?]>) {{
    let a = x.load_like(z);
    let b = y.partition([{A}, {B}]).load_padded([block_id(0), block_id(1)], {r.choice([-1, 7, 0])});
    let s0 = a.sum(0).sum(0) % 5;
    z.store({body});
}}
fn main() {{
    let base = (randn::<f32>([{RR}, {CC}], {seed % 997}) * 4.0) as i32;
    let x = where(base == 7, 2147483647, where(base == -7, -2147483647 - 1, base));
    let y = (randn::<f32>([{RR}, {CC}], {seed % 991 + 1}) * 3.0) as i32;
    let mut z = zeros::<i32>([{RR}, {CC}]);
    k(z.partition([{A}, {B}]), &x, &y).sync();
    print(z.sum());
}}
"""


def walks_program(seed):
    """`--walks` (hrev24): tile walks and queues (`tiles(axis)`, `queue(axis)`) over grids of rank 1 to 3 along any
    axis, partial tiles at the edges, `continue`, values loaded before the loop, loads by the walked index and by
    `block_id` of the other axes, `load_like`, nested tiles of the own tile, reductions; i32 data."""
    r = random.Random(seed)
    rank = r.choice([1, 2, 2, 3])
    axis = r.randrange(rank)
    tshape = [r.choice([1, 2, 4, 8, 3]) for _ in range(rank)]
    shape = [r.randint(1, 4 * t + 1) for t in tshape]
    if r.random() < 0.3:
        shape[axis] = r.randint(1, 3 * tshape[axis] + 2)  # few tiles along the walk
    ts = ", ".join(map(str, tshape))
    sh = ", ".join(map(str, shape))
    q = "?, " * (rank - 1) + "?"
    kind = r.choice(["tiles", "queue"])
    idx = [f"block_id({d})" if d != axis else "s" for d in range(rank)]
    lines = []
    pre = r.random() < 0.5
    if pre:
        idx0 = ["0"] * rank
        lines.append(f"    let pre = x.partition([{ts}]).load([{', '.join(idx0)}]);")
    lines.append(f"    for s in {kind}({axis}) {{")
    lines.append(f"        let t = x.partition([{ts}]).load([{', '.join(idx)}]);")
    body = "t * 2 + s"
    c = r.randrange(6)
    if c == 0: body = "x.load_like(z) - s"
    elif c == 1 and pre: body = "t + pre"
    elif c == 2: body = f"t + (t.sum({r.randrange(rank)}){'.sum(0)' * (rank - 1)} % 100)"
    elif c == 3:
        other = [d for d in range(rank) if d != axis]
        if other:
            body = f"t + block_id({other[0]}) * 1000 + num_blocks({other[0]})"
    elif c == 4:
        lines.append(f"        if (s + t.max({r.randrange(rank)}){'.max(0)' * (rank - 1)}) % 3 == 0 {{ z.store(t * 0 - s); continue; }}")
    lines.append(f"        z.store({body});")
    if r.random() < 0.3 and rank == 2 and tshape[1] % 2 == 0:
        lines.append(f"        let qv = z.partition([{tshape[0]}, {tshape[1] // 2}]);")
        lines.append(f"        qv.store(qv.load([0, 1]) + 5, [0, 0]);")
    lines.append("    }")
    body_s = "\n".join(lines)
    hint = f"#[hints(stages = {r.choice([2, 3])})]\n" if r.random() < 0.2 else ""
    return f"""{hint}kernel fn k(z: &mut Tensor<i32, [{ts}]>, x: &Tensor<i32, [{q}]>) {{
{body_s}
}}
fn main() {{
    let x = ((randn::<f32>([{sh}], {seed % 997}) * 10.0) as i32);
    let mut z = full::<i32>([{sh}], -3);
    k(z.partition([{ts}]), &x).sync();
    print(z.sum());
}}
"""


def go(path, arch):
    out = io.StringIO()
    run.make_device = ORIG if arch == "cpu" else (
        lambda choice, o, arch=arch: sim_runtime_device(arch, lambda s: o.write(s + "\n"), sms=SMS))
    try:
        ex = run.execute(path, "cpu", out=out)
        return program_tensors(ex), out.getvalue(), None
    except (TileError, run.CheckFailed) as e:
        return None, out.getvalue(), "TileError " + str(e)[:300]
    except BaseException as e:  # noqa: BLE001 (an internal error is a finding)
        return None, out.getvalue(), "".join(traceback.format_exception(type(e), e, e.__traceback__))[-1500:]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (floats: any NaN equals any NaN, -0.0 is not 0.0)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    u = np.dtype(f"u{a.itemsize}")
    return bool(np.all((np.isnan(a) & np.isnan(b)) | (a.view(u) == b.view(u))))


ORIG = run.make_device
# `--sms N` (8 unset): each launch runs the variant the runtime picks on a card of N multiprocessors
SMS = int(sys.argv[sys.argv.index("--sms") + 1]) if "--sms" in sys.argv else 8


def main() -> None:
    args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--")
            and sys.argv[i - 1] not in ("--seconds", "--sms")]
    modes = {"--loops": loops_program, "--gemm": gemm_program, "--stores": stores_program, "--tc": tc_program,
             "--int8": int8_program, "--onehot": onehot_program, "--edges": edges_program, "--odd": odd_program,
             "--walks": walks_program}
    mode = next((m for m in modes if m in sys.argv), None)
    if mode is None or len(args) < 2:
        print((__doc__ or "").strip(), file=sys.stderr)
        raise SystemExit(2)
    seed0, count = int(args[0]), int(args[1])
    deadline = time.time() + float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 1e18
    os.makedirs("/tmp/program_diff", exist_ok=True)
    stat = {"ran": 0, "refused": 0, "bad": 0}
    for seed in range(seed0, seed0 + count):
        if time.time() > deadline:
            break
        p = f"/tmp/program_diff/{mode[2:]}{seed}.tile"
        with open(p, "w") as f:
            f.write(modes[mode](seed))
        want, wout, werr = go(p, "cpu")
        if werr:
            stat["refused"] += 1
            print(seed, "REFUSED", werr[:300].replace("\n", " "), flush=True)
            continue
        stat["ran"] += 1
        for arch in ("sm_90a",) if mode == "--tc" else ("sm_80", "sm_90a"):
            got, gout, gerr = go(p, arch)
            msg = gerr or (f"stdout {gout!r} vs {wout!r}" if gout != wout else None)
            for k, w in ([] if msg else want.items()):
                if not _same(got[k], w):
                    msg = f"{k} differs in {int((got[k] != w).sum())} elements"
                    break
            if msg:
                print(seed, arch, msg, flush=True)
                stat["bad"] += 1
                break
    print(stat)


if __name__ == "__main__":
    main()
