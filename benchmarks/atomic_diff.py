"""A differential of tile atomics in every layout (hrev round 30): random kernels whose `unsafe` atomic
(`atomic_add`, `atomic_max`, `atomic_min`, or a `store_unchecked`: blocks' overlapping stores land in block order
on both engines) takes a tile that the GPU layout may hold several copies of (a
reduction's result, a broadcast, a reshape of one, a plain loaded tile, a 3-D tile reduced to 2-D), of every
integer type and of floats holding small integers (so every order of the adds gives the same bits), at an
element index that is a constant, a block's own, one near the tensor's end (some elements dropped) or near
`i32::MAX` (every element dropped), in a 1-D or 2-D target, with `num_warps` hinted or not, and with a masked
`where` of the value; run by the interpreter and by the GPU code path in llsim (sm_80 and sm_90a; hcliff13's
`codegen/atomic_spread.py` shares a replicated tile's atomics among its copies, `TILEC_ATOMIC_SPREAD`), the
target's elements must agree bit for bit: each element added once, by one copy, and none outside the tensor.

    python benchmarks/atomic_diff.py SEED COUNT [--arch sm_90a] [--spread 0] [--seconds S]

prints one line per disagreement and `ran N (E both refused, D disagreements)`; the programs are written under
/tmp/atomic_diff/. CPU only, ~1-2 programs a second.
"""
from __future__ import annotations

import io
import os
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "backend"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import tilelang.run as run
from tilelang.diagnostics.model import TileError

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
SIZES = [1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 256]
I32_MAX = 2**31 - 1


def value_expr(r: random.Random, t: str, R: int, C: int) -> tuple[str, list[int]]:
    """A tile expression of `t` built from `t0` ([R, C], loaded) and its shape."""
    red = r.choice(["sum", "max", "min"]) if t in INTS or r.random() < 0.5 else r.choice(["max", "min"])
    if t in FLOATS:
        red = r.choice(["sum", "max", "min"])
    form = r.choice(["reduce0", "reduce1", "plain", "bcast", "reshape", "reduce3", "double"])
    if form == "reduce0":
        return f"t0.{red}(0)", [C]
    if form == "reduce1":
        return f"t0.{red}(1)", [R]
    if form == "plain":
        return "t0", [R, C]
    if form == "bcast":  # a reduction's copies spread again along a new dim
        k = r.choice([1, 2, 4, 3])
        return f"t0.{red}(0).reshape([1, {C}]).broadcast([{k}, {C}])", [k, C]
    if form == "reshape":
        return f"t0.reshape([{R * C}])", [R * C]
    if form == "reduce3":  # a 3-D tile reduced along its middle or last dim
        if C % 2 == 0:
            return f"t0.reshape([{R}, 2, {C // 2}]).{red}(1)", [R, C // 2]
        return f"t0.reshape([{R}, {C}, 1]).{red}(2)", [R, C]
    return f"full::<{t}>([1], t0.{red}(1).{red}(0))", [1]


def program(r: random.Random, t: str) -> tuple[str, dict[str, np.ndarray], str]:
    R, C = r.choice(SIZES), r.choice(SIZES)
    while R * C > 4096:
        R, C = r.choice(SIZES), r.choice(SIZES)
    grid = r.choice([1, 2, 3])
    rows = grid * R - (r.randrange(R) if R > 1 and r.random() < 0.5 else 0)
    op = r.choice(["atomic_add", "atomic_max", "atomic_min", "store_unchecked"])
    val, shape = value_expr(r, t, R, C)
    if r.random() < 0.25:  # a masked value: the elements a `where` keeps (the rest adds 0 / keeps the target)
        neutral = "0"
        cond_dim = shape[-1]
        idx = f"arange::<i32>({cond_dim})" + ("" if len(shape) == 1 else f".reshape([1, {cond_dim}]).broadcast({shape})")
        val = f"where(({idx} % 3) != 1, {val}, full::<{t}>({shape}, {neutral} as {t}))"
    two_d = len(shape) == 2 or (len(shape) == 1 and r.random() < 0.3)
    if len(shape) == 1 and two_d:
        val = f"({val}).reshape([1, {shape[0]}])"
        shape = [1, shape[0]]
    # the target: its size, and where the block puts its tile
    if two_d:
        T0 = r.choice([shape[0], shape[0] + 1, grid * shape[0], max(1, shape[0] - 1), 2])
        T1 = r.choice([shape[1], shape[1] + 3, max(1, shape[1] - 2)])
        where = r.choice(["0, 0", "block_id(0), 0", "0, 1", f"{T0 - 1}, 0", "block_id(0) * 2, 1",
                          f"{I32_MAX - 1}, 0", f"0, {I32_MAX - 2}"])
        target_shape = [T0, T1]
    else:
        n = shape[0]
        T0 = r.choice([n, n + 5, grid * n, max(1, n - 3), 1, 3 * n + 1])
        where = r.choice(["0", "block_id(0)", f"block_id(0) * {n}", f"{max(0, T0 - n // 2)}", "1",
                          f"{I32_MAX - max(1, n // 2)}", f"{I32_MAX}", f"block_id(0) * {I32_MAX // 2}"])
        target_shape = [T0]
    stmt = f"{op}(&out, [{where}], {val});"
    wrap = r.choice(["", "", "", "if", "for"])
    if op == "store_unchecked" and wrap == "for":  # (two steps of two blocks' overlapping stores: a race whose
        wrap = ""  # interleaving the engines need not share; one store a block lands in block order on both)
    if wrap == "if":  # only some blocks add: a uniform condition around the atomic
        stmt = f"if block_id(0) % 2 == {r.randrange(2)} {{ {stmt} }}"
    elif wrap == "for":  # the same tile added twice, the second time one element on (or the same place again)
        first = where.split(", ")
        first[-1] = f"({first[-1]}) + i * {r.choice([0, 1])}"
        stmt = f"for i in 0..2 {{ {op}(&out, [{', '.join(first)}], {val}); }}"
    hint = r.choice(["", "", "#[hints(num_warps = 1)]\n", "#[hints(num_warps = 2)]\n", "#[hints(num_warps = 4)]\n",
                     "#[hints(num_warps = 8)]\n"])
    conv = " as bf16" if t == "bf16" else ""
    save = "(out as f32)" if t == "bf16" else "out"
    src = (f"{hint}kernel fn k(seen: &mut Tensor<i32, [1]>, x: &Tensor<{t}, [?, {C}]>,\n"
           f"                                        out: &Tensor<{t}, [{', '.join('?' for _ in target_shape)}]>) {{\n"
           f"    let t0 = x.partition([{R}, {C}]).load([block_id(0), 0]);\n"
           f"    seen.store(full::<i32>([1], 1));\n"
           f"    unsafe {{\n        {stmt}\n    }}\n}}\n\n"
           f"fn main() {{\n    let x = load_npy(\"X\"){conv};\n    let out = load_npy(\"O\"){conv};\n"
           f"    let mut seen = zeros::<i32>([{grid}]);\n"
           f"    k(seen.partition([1]), &x, &out).sync();\n    {save}.save_npy(\"OUT\");\n}}\n")
    if t in INTS:
        info = np.iinfo(NP[t])
        lo, hi = (max(int(info.min), -100), min(int(info.max), 100)) if r.random() < 0.6 else (int(info.min),
                                                                                                 int(info.max))
        xs = np.array([r.randint(lo, hi) for _ in range(rows * C)], NP[t]).reshape(rows, C)
        os_ = np.array([r.randint(lo, hi) for _ in range(int(np.prod(target_shape)))], NP[t]).reshape(target_shape)
    else:  # small integers: every order of float adds is exact (f16: sums below 2048; bf16: below 256)
        lim = 2 if t == "bf16" else 4
        dt = np.float32 if t == "bf16" else NP[t]
        xs = np.array([r.randint(-lim, lim) for _ in range(rows * C)], dt).reshape(rows, C)
        os_ = np.array([r.randint(-lim, lim) for _ in range(int(np.prod(target_shape)))], dt).reshape(target_shape)
    return src, {"X": xs, "O": os_}, f"T={t} R={R} C={C} rows={rows} {stmt} into {target_shape}"


def outcome(src: str, how: str, out_path: str) -> object:
    from llsim import sim_runtime_device

    old = run.make_device
    try:
        if how != "cpu":
            run.make_device = lambda choice, o, arch=how: sim_runtime_device(arch)
        run.execute(src.replace("OUT", out_path), "cpu", out=io.StringIO(), name="k.tile")
    except run.CheckFailed as e:
        return "check " + ",".join(sorted({d.code for d in e.diagnostics if d.severity.name == "ERROR"}))
    except TileError as e:
        return "error " + ",".join(sorted({d.code for d in e.diagnostics}))
    except Exception as e:
        return f"ICE {type(e).__name__}: {str(e)[:200]}"
    finally:
        run.make_device = old
    return np.load(out_path)


def main() -> None:
    words = [a for a in sys.argv[1:] if a.isdigit()]
    if len(words) < 2:
        print((__doc__ or "").strip(), file=sys.stderr)
        raise SystemExit(0 if "--help" in sys.argv else 2)
    seed, count = int(words[0]), int(words[1])
    arch = sys.argv[sys.argv.index("--arch") + 1] if "--arch" in sys.argv else "sm_80"
    if "--spread" in sys.argv:
        os.environ["TILEC_ATOMIC_SPREAD"] = sys.argv[sys.argv.index("--spread") + 1]
    limit = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else None
    os.environ.setdefault("LLSIM_MEMO", "0")
    os.makedirs("/tmp/atomic_diff", exist_ok=True)
    start = time.monotonic()
    bad = refused = ran = 0
    codes: dict[str, int] = {}
    for i in range(count):
        if limit is not None and time.monotonic() - start > limit:
            break
        r = random.Random(f"{seed}:{i}")
        t = r.choice(INTS + FLOATS)
        src, arrays, what = program(r, t)
        stem = f"/tmp/atomic_diff/{seed}_{i}"
        for name, a in arrays.items():
            np.save(f"{stem}_{name}.npy", a)
            src = src.replace(f'"{name}"', f'"{stem}_{name}.npy"')
        ran += 1
        got = [outcome(src, how, f"{stem}_{how}.npy") for how in ("cpu", arch)]
        if all(isinstance(g, str) for g in got):
            refused += 1
            codes[str(got[0])] = codes.get(str(got[0]), 0) + 1
            if got[0] != got[1] or any(g.startswith("ICE") for g in got):  # type: ignore[union-attr]
                bad += 1
                print(f"{seed}:{i} {what}\n  interp={got[0]!r}\n  {arch}={got[1]!r}", flush=True)
            continue
        if any(isinstance(g, str) for g in got) or not np.array_equal(
                np.asarray(got[0]).view(np.uint8), np.asarray(got[1]).view(np.uint8)):
            bad += 1
            with open(stem + ".tile", "w") as f:
                f.write(src)
            print(f"{seed}:{i} {what}\n  interp={got[0]!r}\n  {arch}={got[1]!r}", flush=True)
    print(f"ran {ran} ({refused} both refused, {bad} disagreements)")
    if codes:
        print("refused:", ", ".join(f"{k} {v}" for k, v in sorted(codes.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
