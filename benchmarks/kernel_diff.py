"""A differential of whole kernel bodies (hrev round 14): random element-wise
expressions over two input tiles of one element type (arithmetic, bitwise
operators, shifts by tile amounts, casts through another type and back,
`maximum`/`minimum`/`where`/`abs`, comparisons, a row reduction broadcast
back, `cumsum` of integers, untyped and suffixed literals), on the edges of
the type (MIN/MAX, 0, -1, NaN, +-inf, -0.0, subnormals), run by the
interpreter and by the GPU code path in llsim (sm_80 by default, `--arch`);
each stored result must agree bit for bit (a NaN's payload aside). The
operations numerics_cases.py checks one by one meet here in compositions,
through the lowering's folding, its literal typing and the backend's passes.
Float division and the transcendental functions are left out (approximate on
a GPU within `fastmath.tolerance`), as are float sums (their order).

    python benchmarks/kernel_diff.py SEED COUNT [--arch sm_90a | --device] [--wide] [--seconds S]

(`--wide`: also shapes (reshape, transpose, permute, broadcast), row
reductions and arg-reductions, scans, shifts by any amount, `bool` round trips.
`--host`: the kernel on the interpreter against the same body as a host
function of tensors, instead of llsim. `--device`: a real GPU instead of llsim.
`--seconds S`: stop after S seconds (the count run is printed). `--edge`:
tensors of 27 elements in tiles of 16 (two blocks, the second partial). `--generic`: the concrete kernel
against the same kernel generic over `T`, launched with that type; with
`--host`, the host functions. `--scalar`: the kernel's elements against the
same body as a host function of two scalars, element by element. `--exact`
(hrev15): also the float operations the backend computes exactly (`/`, `%`,
`sqrt`, `floor`, `ceil`, `fma`). `--bits` (hrev22): float bit edits through `to_bits` / `from_bits`, and the
inverse trigonometric functions of f16, bf16 and f32. `--cluster` (hrev15): the body's tile gathered
over `#[cluster(2)]` (4 blocks) and combined, the interpreter against llsim's
exchange; use `--arch sm_90a`, clusters are Hopper's. `--warps` (hrev15): the
kernel hinted `num_warps` 1, 2 or 8 (another layout of its tiles over the
threads; the interpreter ignores hints). `--bool` (hrev15): `bool` tiles only
(logical operators, `==`/`!=`, `where`, round trips through numbers).)

prints one line per disagreement and `ran N (E both refused, D disagreements)`;
the programs are written under /tmp/kernel_diff/. CPU only, ~3 programs a second.
"""
import io
import os
import random
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "backend"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import tilelang.run as run  # noqa: E402
from tilelang.diagnostics.model import TileError  # noqa: E402

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
N = 16
EDGE = "--edge" in sys.argv
CLUSTER = "--cluster" in sys.argv
BOOL = "--bool" in sys.argv  # `--bool` (hrev15): `bool` bodies (`bool_expr`)
WARPS = (1, 2, 8) if "--warps" in sys.argv else ()  # `--warps` (hrev15): `#[hints(num_warps = ..)]` of these
# `--edge`: 2 blocks of 16, the second partial (11 elements; loads past the end read 0); `--cluster`: 4 blocks
LEN = 27 if EDGE else 4 * N if CLUSTER else N


def edges(t: str, r: random.Random) -> np.ndarray:
    if t == "bool":
        return np.array([r.random() < 0.5 for _ in range(LEN)], dtype=np.bool_)
    if t in INTS:
        info = np.iinfo(NP[t])
        pool = [info.min, info.max, 0, 1, 2, 3, 7, 8, 31, 63, info.max // 2, info.min // 2 if info.min else 5]
        pool += [-1, -2, -7, -8, -100] if info.min else [100, 200, 255]
        vals = [r.choice(pool) if r.random() < 0.7 else r.randint(int(info.min), int(info.max)) for _ in range(LEN)]
        return np.array(vals, dtype=NP[t])
    pool = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.0, 65504.0, -65504.0, 1e-5, 6e-8, 1e30, -1e30,
            float("inf"), float("-inf"), float("nan"), 127.5, -128.5, 255.5, 1e9, 3e38]
    vals = [r.choice(pool) if r.random() < 0.7 else r.uniform(-300, 300) for _ in range(LEN)]
    if t == "bf16":
        return np.array(vals, dtype=np.float32)  # made bf16 in the program (`as bf16`)
    return np.array(vals, dtype=NP[t])


def lit(t: str, r: random.Random) -> str:
    if t in INTS:
        return r.choice(["0", "1", "2", "3", "7", "31", "100", f"1{t}", f"3{t}"])
    return r.choice(["0.0", "0.5", "1.0", "2.0", "-0.0", "3.5", "100.0", "1", "2"])


def bool_expr(r: random.Random, d: int) -> str:
    """`--bool` (hrev15): a `bool` body: logical operators, comparisons of `bool`s (`==`, `!=`), `where`,
    and round trips through numbers (`(a as u8) + 1 > 1`, `(v as f32) * 0.5 > 0.25`)."""
    if d == 0 or r.random() < 0.2:
        return r.choice(["x", "y", "x", "y", "true", "false"])
    a, b = bool_expr(r, d - 1), bool_expr(r, d - 1)
    k = r.randrange(7)
    if k == 0:
        return f"({a} {r.choice(['&', '|', '^'])} {b})"
    if k == 1:
        return f"(!{a})"
    if k == 2:
        return f"({a} {r.choice(['==', '!='])} {b})"
    if k == 3:
        return f"where({a}, {b}, {bool_expr(r, d - 1)})"
    if k == 4:
        u = r.choice(INTS)
        return f"((({a} as {u}) + ({b} as {u})) {r.choice(['>', '==', '<'])} (1 as {u}))"
    if k == 5:
        u = r.choice(FLOATS)
        return f"(((({a} as {u}) * 0.5) as {r.choice(INTS + FLOATS)}) as bool)"
    return f"({a} {r.choice(['&&', '||'])} {b})" if "--scalar" in sys.argv else f"({a} & (!{b}))"


def expr(t: str, r: random.Random, d: int) -> str:
    if t == "bool":
        return bool_expr(r, d)
    is_int = t in INTS
    if d == 0 or r.random() < 0.2:
        return r.choice(["x", "y", "x", "y", lit(t, r)])
    a, b = expr(t, r, d - 1), expr(t, r, d - 1)
    k = r.randrange(10)
    if k == 0:
        return f"({a} {r.choice(['+', '-', '*'])} {b})"
    if k == 1 and is_int:
        return f"({a} {r.choice(['/', '%'])} ({b} | 1))"  # an odd divisor: never 0
    if k == 2 and is_int:
        return f"({a} {r.choice(['&', '|', '^'])} {b})"
    if k == 3 and is_int:
        return f"({a} {r.choice(['<<', '>>'])} ({b} & 7))"
    if k == 4:
        u = r.choice(INTS + FLOATS)
        return f"(({a} as {u}) as {t})"
    if k == 5:
        return f"{r.choice(['maximum', 'minimum'])}({a}, {b})"
    if k == 6:
        return f"where({a} {r.choice(['<', '<=', '==', '!=', '>'])} {b}, {a}, {b})"
    if k == 7:
        if is_int or t in ("f32", "f64"):
            return f"abs({a})" if not t.startswith("u") else f"(!{a})" if is_int else f"abs({a})"
        return f"(-{a})"
    if k in (8, 9) and "--scalar" in sys.argv:
        return f"({a} {r.choice(['+', '-', '*'])} {b})"  # (no reductions or scans of scalars)
    if k == 8:
        red = r.choice(["max", "min"] + (["sum"] if is_int else []))
        return f"({a} + {expr(t, r, d - 1)}.{red}(0))"
    if k == 9 and is_int:
        return f"cumsum({a}, 0)"
    if BITS and r.random() < 0.6:
        return bits(t, r, a, b)
    if WIDE and r.random() < 0.5:
        return wide(t, r, a, b)
    if EXACT and not is_int and r.random() < 0.6:
        return exact(r, a, b, expr(t, r, d - 1), t)
    return f"({a} {r.choice(['+', '-', '*'])} {b})"


EXACT = "--exact" in sys.argv


def exact(r: random.Random, a: str, b: str, c: str, t: str = "f32") -> str:
    """`--exact` (hrev15): the float operations the backend's table calls exact
    (`fastmath.MATH`/`F64_MATH`: `div.rn`, the exact fmod, `sqrt.rn`, `cvt.rmi`/
    `cvt.rpi`, `fma.rn`), which the default mode leaves out with the approximate
    ones; f16/bf16 computed in f32 and rounded once on both engines. Below f64
    (herf): `erf` (one f32 algorithm on both engines) and `pow` by the constants
    2, 0.5, -1, 1 and 3 (`f32exact.pow_const`)."""
    if t != "f64" and r.random() < 0.3:
        if r.random() < 0.5:
            return f"erf({a})" if r.random() < 0.5 else f"({a}).erf()"
        e = r.choice(["2.0", "0.5", "-1.0", "1.0", "3.0", "2"])
        return f"pow({a}, {e})" if r.random() < 0.5 else f"({a}).pow({e})"
    k = r.randrange(6)
    if k == 0:
        return f"({a} / {b})"
    if k == 1:
        return f"({a} % {b})"
    if k == 2:
        return f"sqrt({a})"
    if k == 3:
        return f"{r.choice(['floor', 'ceil'])}({a})"
    if k == 4:
        return f"fma({a}, {b}, {c})"
    return f"({a}).{r.choice(['sqrt', 'floor', 'ceil', 'abs'])}()"


WIDE = "--wide" in sys.argv
BITS = "--bits" in sys.argv  # `--bits` (hrev22): `to_bits` / `from_bits` round trips and bit edits, `atan2`
_UBITS = {"f16": "u16", "bf16": "u16", "f32": "u32", "f64": "u64"}


def bits(t: str, r: random.Random, a: str, b: str) -> str:
    """`--bits` (hrev22): a float's bits edited and read back (`from_bits::<T>(x.to_bits() OP m)`: the sign
    flipped, low bits cleared, the next float up, the exponent's bits moved to make subnormals, infinities and
    NaNs), an integer's value read as a float's bits and back, and `atan2` / `asin` / `acos` / `atan` of f16,
    bf16 and f32 (one formula on both engines: the same bits; f64's is within 2 ulp of NumPy's, left out)."""
    if t in _UBITS:
        u = _UBITS[t]
        w = {"u16": 16, "u32": 32, "u64": 64}[u]
        k = r.randrange(6)
        if k == 0:
            return f"from_bits::<{t}>(({a}).to_bits() ^ {1 << (w - 1)}{u})"
        if k == 1:
            return f"from_bits::<{t}>(({a}).to_bits() & {((1 << w) - 1) ^ r.choice([1, 3, 255, 0xFFFF])}{u})"
        if k == 2:
            return f"from_bits::<{t}>(({a}).to_bits() + {r.choice([1, 2, 0x100, 1 << (w - 2)])}{u})"
        if k == 3:
            return f"from_bits::<{t}>(({a}).to_bits() >> {r.choice([1, 3, w // 2])}{u})"
        if k == 4 and t != "f64":
            f = r.choice(["asin", "acos", "atan"])
            return f"atan2({a}, {b})" if r.random() < 0.5 else f"{f}({a})"
        return f"(({a}).to_bits() {r.choice(['<', '==', '>'])} ({b}).to_bits()) as {t}"
    fl = r.choice(["f16", "bf16", "f32", "f64"])
    u = _UBITS[fl]
    return f"(from_bits::<{fl}>(({a}) as {u}).to_bits() as {t})"


def wide(t: str, r: random.Random, a: str, b: str) -> str:
    """`--wide`: shapes, scans, arg-reductions, shifts by any amount, `bool` round trips."""
    is_int = t in INTS
    k = r.randrange(8)
    if k == 0 and is_int:
        return f"({a} {r.choice(['<<', '>>'])} {b})"  # any amount: past the width, negative
    if k == 1:
        return f"((({a}) != ({b})) as {t})"
    if k == 2:
        return f"({a}).reshape([4, 4]).transpose().reshape([{N}])"
    if k == 3:
        red = r.choice(["max", "min"] + (["sum", "prod"] if is_int else []))
        return f"({a}).reshape([4, 4]).{red}(1).reshape([4, 1]).broadcast([4, 4]).reshape([{N}])"
    if k == 4:
        arg = r.choice(["argmax", "argmin"])
        return f"(({a}).reshape([4, 4]).{arg}({r.choice([0, 1])}) as {t}).reshape([1, 4]).broadcast([4, 4]).reshape([{N}])"
    if k == 5:
        scan = r.choice(["cummax", "cummin"] + (["cumsum", "cumprod"] if is_int else []))
        return f"{scan}(({a}).reshape([4, 4]), {r.choice([0, 1])}).reshape([{N}])"
    if k == 6:
        return f"({a}).reshape([2, 8]).permute([1, 0]).reshape([{N}])"
    return f"where(({a}) > ({b}), ({a}), ({b}).reshape([4, 4]).max(0).reshape([1, 4]).broadcast([4, 4]).reshape([{N}]))"


def clustered(t: str, body: str, r: random.Random) -> str:
    """`--bits` (hrev22): float bit edits through `to_bits` / `from_bits`, and the
inverse trigonometric functions of f16, bf16 and f32. `--cluster` (hrev15): the body's tile gathered over a cluster of 2 blocks (`#[cluster(2)]`, 4 blocks
    in all), each block storing a combination of the records (`program` adds the attribute): the
    interpreter's exchange against llsim's (sm_90a; `llsim._run_cluster`)."""
    is_int = t in INTS
    k = r.randrange(5)
    if k == 0:
        pick = f"p.{r.choice(['max', 'min'] + (['sum'] if is_int else []))}(0)"
    elif k == 1:
        pick = "p.reshape([2 * N]).reshape([2, N]).transpose().reshape([N, 2]).max(1)".replace("N", str(N))
    elif k == 2:
        pick = f"where(arange::<i32>(2).reshape([2, 1]) == (block_id(0) % 2), p, p.max(0).reshape([1, {N}])).min(0)"
    elif k == 3:
        pick = f"(p.reshape([2, {N}]).argmax(0) as {t})"
    else:
        pick = "p.transpose().max(1)" if r.random() < 0.5 else "p.min(0)"
    return f"{{ let p = cluster_gather({body}); {pick} }}"


def program(t: str, body: str) -> str:
    load = "load_npy(\"{p}\")"
    conv = " as bf16" if t == "bf16" else ""
    attr = "#[cluster(2)]\n" if CLUSTER else ""
    if WARPS:  # `--warps`: another layout of the tile over the block's threads
        attr += f"#[hints(num_warps = {WARPS[zlib.crc32(body.encode()) % len(WARPS)]})]\n"
    if CLUSTER:  # (`cluster_gather` only as a `let` at the top level of the body)
        inner = body[2:-2].split("; ", 1)
        return (f"{attr}kernel fn k(z: &mut Tensor<{t}, [{N}]>, a: &Tensor<{t}, [?]>, b: &Tensor<{t}, [?]>) {{\n"
                f"    let x = a.load_like(z);\n    let y = b.load_like(z);\n    {inner[0]};\n"
                f"    z.store({inner[1]});\n}}\n"
                f"fn main() {{\n    let a = {load.format(p='A')}{conv};\n    let b = {load.format(p='B')}{conv};\n"
                f"    let mut z = zeros::<{t}>([{LEN}]);\n    k(z.partition([{N}]), &a, &b).sync();\n"
                f"    {'z' if t != 'bf16' else '(z as f32)'}.save_npy(\"OUT\");\n}}\n")
    return (f"{attr}kernel fn k(z: &mut Tensor<{t}, [{N}]>, a: &Tensor<{t}, [?]>, b: &Tensor<{t}, [?]>) {{\n"
            f"    let x = a.load_like(z);\n    let y = b.load_like(z);\n    z.store({body});\n}}\n"
            f"fn main() {{\n    let a = {load.format(p='A')}{conv};\n    let b = {load.format(p='B')}{conv};\n"
            f"    let mut z = zeros::<{t}>([{LEN}]);\n    k(z.partition([{N}]), &a, &b).sync();\n"
            f"    {'z' if t != 'bf16' else '(z as f32)'}.save_npy(\"OUT\");\n}}\n")


def host_program(t: str, body: str) -> str:
    """`--host`: the same body as a host function of tensors (`x`, `y`)."""
    load = "load_npy(\"{p}\")"
    conv = " as bf16" if t == "bf16" else ""
    return (f"fn h(x: Tensor<{t}, [?]>, y: Tensor<{t}, [?]>) -> Tensor<{t}, [?]> {{\n    {body}\n}}\n"
            f"fn main() {{\n    let a = {load.format(p='A')}{conv};\n    let b = {load.format(p='B')}{conv};\n"
            f"    let z = h(a.clone(), b.clone());\n"
            f"    {'z' if t != 'bf16' else '(z as f32)'}.save_npy(\"OUT\");\n}}\n")


HOST = "--host" in sys.argv
GENERIC = "--generic" in sys.argv
SCALAR = "--scalar" in sys.argv


def scalar_program(t: str, body: str) -> str:
    """`--scalar`: the kernel's result printed element by element, then the same
    body as a host function of two scalars called on each pair of elements."""
    load = "load_npy(\"{p}\")"
    conv = " as bf16" if t == "bf16" else ""
    prints = "\n".join(f"    print(z[{i}]);" for i in range(N))
    calls = "\n".join(f"    print(h(a[{i}], b[{i}]));" for i in range(N))
    kernel = program(t, body).split("fn main()")[0]
    return (kernel + f"fn h(x: {t}, y: {t}) -> {t} {{\n    {body}\n}}\n"
            f"fn main() {{\n    let a: Tensor<{t}, [{N}]> = {load.format(p='A')}{conv};\n"
            f"    let b: Tensor<{t}, [{N}]> = {load.format(p='B')}{conv};\n"
            f"    let mut z = zeros::<{t}>([{N}]);\n    k(z.partition([{N}]), &a, &b).sync();\n"
            f"{prints}\n    print(\"--\");\n{calls}\n}}\n")


def printed(src: str) -> str:
    out = io.StringIO()
    try:
        run.execute(src, "cpu", out=out, name="k.tile")
    except run.CheckFailed as e:
        return "check " + ",".join(sorted({d.code for d in e.diagnostics if d.severity.name == "ERROR"}))
    except TileError as e:
        return "error " + ",".join(sorted({d.code for d in e.diagnostics}))
    except Exception as e:  # noqa: BLE001 - an internal error is a finding
        return f"ICE {type(e).__name__}: {str(e)[:160]}"
    return out.getvalue()


def generic_program(t: str, body: str) -> str:
    """`--generic`: the same kernel generic over its element type (`k<T>`, the
    type written `T`, a suffixed literal of it `(3 as T)`), launched with `T = t`."""
    import re

    body = re.sub(rf"\b(\d+){t}\b", r"(\1 as T)", body)
    body = re.sub(rf"\bas {t}\b", "as T", body)
    src = (host_program if HOST else program)(t, body)
    head, rest = src.split("\n", 1)
    head = head.replace("kernel fn k(", "kernel fn k<T>(").replace("fn h(", "fn h<T>(").replace(f"Tensor<{t},", "Tensor<T,")
    return head + "\n" + rest


def outcome(src: str, how: str, out_path: str) -> object:
    from llsim import sim_runtime_device

    old = run.make_device
    try:
        if how not in ("cpu", "gpu"):
            run.make_device = lambda choice, o, arch=how: sim_runtime_device(arch)
        run.execute(src.replace("OUT", out_path), "gpu" if how == "gpu" else "cpu", out=io.StringIO(), name="k.tile")
    except run.CheckFailed as e:
        return "check " + ",".join(sorted({d.code for d in e.diagnostics if d.severity.name == "ERROR"}))
    except TileError as e:
        return "error " + ",".join(sorted({d.code for d in e.diagnostics}))
    except Exception as e:  # noqa: BLE001 - an internal error is a finding
        return f"ICE {type(e).__name__}: {str(e)[:160]}"
    finally:
        run.make_device = old
    return np.load(out_path)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        bits = a.view(np.uint64 if a.itemsize == 8 else np.uint32 if a.itemsize == 4 else np.uint16)
        bbits = b.view(bits.dtype)
        return bool(np.all(both_nan | (bits == bbits)))
    return bool(np.array_equal(a, b))


def main() -> None:
    if len(sys.argv) < 3 or not (sys.argv[1].isdigit() and sys.argv[2].isdigit()):
        print((__doc__ or "").strip(), file=sys.stderr)  # (`--help`, or SEED COUNT missing: the usage, not a traceback)
        raise SystemExit(0 if "--help" in sys.argv or "-h" in sys.argv else 2)
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    arch = sys.argv[sys.argv.index("--arch") + 1] if "--arch" in sys.argv else "sm_80"
    if "--device" in sys.argv:
        arch = "gpu"  # a real GPU (cuda-python) instead of llsim
    limit = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else None
    import time

    start = time.monotonic()
    os.makedirs("/tmp/kernel_diff", exist_ok=True)
    bad = refused = 0
    for i in range(count):
        if limit is not None and time.monotonic() - start > limit:
            count = i
            break
        r = random.Random(f"{seed}:{i}")
        t = "bool" if BOOL else r.choice(INTS + FLOATS)
        body = expr(t, r, 3)
        if CLUSTER:
            body = clustered(t, body, r)
        stem = f"/tmp/kernel_diff/{seed}_{i}"
        np.save(stem + "_a.npy", edges(t, r))
        np.save(stem + "_b.npy", edges(t, r))
        src = program(t, body).replace('"A"', f'"{stem}_a.npy"').replace('"B"', f'"{stem}_b.npy"')
        if SCALAR:  # the kernel's elements against the host's scalar arithmetic
            ssrc = scalar_program(t, body).replace('"A"', f'"{stem}_a.npy"').replace('"B"', f'"{stem}_b.npy"')
            text = printed(ssrc)
            if "--" not in text.splitlines():
                if text.startswith("ICE"):
                    bad += 1
                    print(f"{seed}:{i} T={t} {text} body: {body}", flush=True)
                else:
                    refused += 1
                continue
            kern, host = text.split("--\n")
            if kern.split() != host.split():
                bad += 1
                with open(stem + ".tile", "w") as f:
                    f.write(ssrc)
                print(f"{seed}:{i} T={t} body: {body}\n  kernel={kern.split()}\n  host  ={host.split()}", flush=True)
            continue
        if GENERIC:  # the concrete kernel (host function) against its generic form's instance
            gsrc = generic_program(t, body).replace('"A"', f'"{stem}_a.npy"').replace('"B"', f'"{stem}_b.npy"')
            if HOST:
                src = host_program(t, body).replace('"A"', f'"{stem}_a.npy"').replace('"B"', f'"{stem}_b.npy"')
            got = [outcome(src, "cpu", f"{stem}_cpu.npy"), outcome(gsrc, "cpu", f"{stem}_generic.npy")]
        elif HOST:  # the kernel on the interpreter against the host function
            hsrc = host_program(t, body).replace('"A"', f'"{stem}_a.npy"').replace('"B"', f'"{stem}_b.npy"')
            got = [outcome(src, "cpu", f"{stem}_cpu.npy"), outcome(hsrc, "cpu", f"{stem}_host.npy")]
        else:
            got = [outcome(src, how, f"{stem}_{how}.npy") for how in ("cpu", arch)]
        if all(isinstance(g, str) for g in got):
            refused += 1
            if (got[0] != got[1] and not HOST and not GENERIC) or any(g.startswith("ICE") for g in got):  # type: ignore[union-attr]
                print(f"{seed}:{i} T={t} interp={got[0]!r} other={got[1]!r} body: {body}", flush=True)
                bad += 1
            continue
        if any(isinstance(g, str) for g in got) or not same(*got):  # type: ignore[arg-type]
            bad += 1
            with open(stem + ".tile", "w") as f:
                f.write(src)
            show = [g if isinstance(g, str) else np.array2string(g, max_line_width=400) for g in got]
            print(f"{seed}:{i} T={t} body: {body}\n  interp={show[0]}\n  {'host' if HOST else 'generic' if GENERIC else arch}={show[1]}",
                  flush=True)
    print(f"ran {count} ({refused} both refused, {bad} disagreements)")


if __name__ == "__main__":
    main()
