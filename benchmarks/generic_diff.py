"""A differential of generic instances (hrev round 13): random bodies of a
generic `fn f<T>(x: T) -> T` over `x`, untyped literals, casts `as T`,
arithmetic, bitwise operators, shifts and immutable `let`s, run as a host
function's instance and as a generic kernel's instance (`k<T>` storing the same
body, `x` its own tile) for one `T`; each must give the same value, or the same
error code (E0201 a literal `T` cannot hold, E0227 a constant shift past `T`'s
width, E0204 an operator outside `T`'s domain). It found the host's instance
wrapping/truncating literals and running constant shifts past the width.

    python benchmarks/generic_diff.py SEED COUNT [--concrete]

(`--concrete`: the same bodies with `T` written as the type, a host function
against a kernel. `--check` (round 14): also each host program's `tilec check`
against its run: an error that only the run finds is a disagreement, "late";
bodies may also end in a bare name or an `if`, where a float `let` meets `T`
without arithmetic. `--values`: `x` is an edge value of its type (MIN, MAX,
0, NaN, +-inf), not 3. `--const` (round 16): the concrete kernel with one
integer literal of the body against the same kernel with that literal made a
const generic `C` (`k::<300>(..)`), which is untyped where it is read as the
literal is: the same value, or an error in both (round 16 found `C` read as
an `i8` wrapped, and `C * C` in an `i64` context folded in `i32`). `--const --host` (round 17): the same for
a host function of `T = i32` bodies (a host function's const generic is an `i32`), the literal's against
`C`'s: a constant overflow the checker refuses for the literal must be refused for `C` too.)

prints one line per disagreement (a value against an error, or two values; two
errors of other codes are alike enough) and `ran N (E errors alike)`; the programs are
written under /tmp/generic_diff/. CPU only (interpreter), ~5 programs a second.
"""
import io
import os
import random
import re
import sys

import tilelang.run as run
from tilelang.diagnostics.model import TileError

TYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
START = {"i8": 3, "i16": 3, "i32": 3, "i64": 3, "u8": 3, "u16": 3, "u32": 3, "u64": 3,
         "f16": 1.5, "bf16": 1.5, "f32": 1.5, "f64": 1.5}


def lit(r: random.Random) -> str:
    return r.choice(["0", "1", "2", "3", "7", "9", "100", "127", "128", "255", "256", "300", "-1", "-128",
                     "32767", "65535", "65536", "0.5", "2.0", "1e3", "0.1"])


def expr(r: random.Random, d: int, names: list[str]) -> str:
    if d == 0 or r.random() < 0.25:
        return r.choice(["x", *names, lit(r), lit(r)])
    k = r.randrange(6)
    if k == 0:
        return f"({expr(r, d - 1, names)} as T)"
    if k == 1:
        return f"({expr(r, d - 1, names)} {r.choice(['+', '-', '*', '/', '%'])} {expr(r, d - 1, names)})"
    if k == 2:
        return f"({expr(r, d - 1, names)} {r.choice(['&', '|', '^'])} {expr(r, d - 1, names)})"
    if k == 3:
        amount = r.choice(["1", "3", "7", "8", "9", "15", "16", "31", "32", "33", "63", "64", "(3 + 6)"])
        return f"({expr(r, d - 1, names)} {r.choice(['<<', '>>'])} {amount})"
    if k == 4:
        return f"(!{expr(r, d - 1, names)})"
    return f"(-{expr(r, d - 1, names)})"


def body(r: random.Random) -> str:
    lets, names = [], []
    for i in range(r.randrange(3)):
        name = f"c{i}"
        ty = r.choice(["", ": T"])
        lets.append(f"let {name}{ty} = {expr(r, 1, names)};")
        names.append(name)
    tail = f"x + {expr(r, 3, names)}"
    if CHECK and names and r.random() < 0.2:
        tail = r.choice([r.choice(names), f"if x > x {{ {r.choice(names)} }} else {{ x }}"])
    return " ".join(lets) + " " + tail


CHECK = "--check" in sys.argv
VALUES = "--values" in sys.argv
CONST = "--const" in sys.argv
HOST_CONST = "--host" in sys.argv  # with --const: host functions, the literal's against the const generic's
_INT_LIT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


def as_generic(kern: str, r: random.Random) -> str | None:
    """`--const`: the kernel with one integer literal of its body made the const generic `C`, launched
    with the literal's value; None where the body has no integer literal."""
    head, sep, rest = kern.partition("z.store(zeros::<")
    start = rest.index("{ ") if "{ " in rest else -1
    if start < 0:
        return None
    end = rest.index(" });")
    hits = [m for m in _INT_LIT.finditer(rest) if start < m.start() < end]
    # not a shape, nor a cast's whole operand (`65535 as u8` is E0222, `C as u8` converts, as a `let` does)
    hits = [m for m in hits if not rest[m.end():].startswith(("]", " as "))]
    if not hits:
        return None
    m = r.choice(hits)
    rest = rest[:m.start()] + "C" + rest[m.end():]
    out = head.replace("kernel fn k(", "kernel fn k<const C: i32>(") + sep + rest
    return out.replace("k(z.partition([1])).sync();", f"k::<{m.group(1)}>(z.partition([1])).sync();")


def as_generic_host(host: str, r: random.Random) -> str | None:
    """`--const --host` (hrev17): the concrete host function with one integer literal of its body made its
    const generic `C` (an `i32`, as a host function's is: only `T = i32` bodies), called with the literal's
    value; None where the body has no such literal. A literal a float or a cast reads is left alone (`C` is
    an `i32` there, E0201 by design)."""
    head, sep, rest = host.partition("{\n")
    end = rest.index("\n}")
    hits = [m for m in _INT_LIT.finditer(rest) if m.start() < end and not rest[m.end():].startswith((" as ", "."))
            and not re.search(r"(\d\.\d|f32|f64|f16|as f)", rest[max(0, m.start() - 12):m.end() + 12])]
    if not hits:
        return None
    m = r.choice(hits)
    body = rest[:m.start()] + "C" + rest[m.end():]
    out = head.replace("fn f(", "fn f<const C: i32>(") + sep + body
    return out.replace("print(f(a));", f"print(f::<{m.group(1)}>(a));")


def edge_value(t: str, r: random.Random) -> str:
    """`--values`: `x` is one of the type's edge values, not 3 (or 1.5)."""
    if t.startswith(("i", "u")):
        bits = int(t[1:])
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t[0] == "i" else (0, (1 << bits) - 1)
        return str(r.choice([lo, hi, 0, 1, 3, -1 if lo else 2, hi // 2, lo // 2 if lo else 7]))
    # (not -0.0: the kernel stores `zeros + body`, which makes a -0.0 result +0.0)
    return r.choice(["0.0", "1.5", "-2.5", "inf", "-inf", "nan", "1e-3", "255.5", "65504.0"])


HOST = "fn f<T>(x: T) -> T {{\n    {b}\n}}\nfn main() {{\n    let a: {t} = {v};\n    print(f(a));\n}}\n"
KERNEL = ("kernel fn k<T>(z: &mut Tensor<T, [1]>) {{\n    let x = z.load().item();\n"
          "    z.store(zeros::<T>([1]) + {{ {b} }});\n}}\n"
          "fn main() {{\n    let mut z = full::<{t}>([1], {v});\n    k(z.partition([1])).sync();\n"
          "    print(z.sum());\n}}\n")


def outcome(src: str) -> str:
    out = io.StringIO()
    try:
        run.execute(src, "cpu", out=out, name="g.tile")
    except run.CheckFailed as e:
        return "error " + ",".join(sorted({d.code for d in e.diagnostics if d.severity.name == "ERROR"}))
    except TileError as e:
        return "error " + ",".join(sorted({d.code for d in e.diagnostics}))
    except Exception as e:  # an internal error: always a disagreement worth reading
        return f"ICE {type(e).__name__}: {str(e)[:120]}"
    return out.getvalue().strip()


def checked_codes(src: str) -> list[str]:
    from tilelang import driver

    result = driver.compile(src, until="checked", name="g.tile")
    return sorted({d.code for d in result.diagnostics if d.severity.name == "ERROR"})


def main() -> None:
    if len(sys.argv) < 3 or not (sys.argv[1].isdigit() and sys.argv[2].isdigit()):
        print((__doc__ or "").strip(), file=sys.stderr)  # (`--help`, or SEED COUNT missing: the usage, not a traceback)
        raise SystemExit(0 if "--help" in sys.argv or "-h" in sys.argv else 2)
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    concrete = "--concrete" in sys.argv  # `T` written as the type itself: the checker's typing, not an instance's
    os.makedirs("/tmp/generic_diff", exist_ok=True)
    bad = alike = 0
    for i in range(count):
        r = random.Random(f"{seed}:{i}")
        t = r.choice(TYPES)
        b = body(r)
        v = START[t] if not VALUES else edge_value(t, r)
        host = HOST.format(b=b, t=t, v=v)
        kern = KERNEL.format(b=b, t=t, v=v)
        if concrete or CONST:
            host = re.sub(r"\bT\b", t, host.replace("fn f<T>", "fn f"))
            kern = re.sub(r"\bT\b", t, kern.replace("kernel fn k<T>", "kernel fn k"))
        if CONST and HOST_CONST:  # the literal's host function against the const generic's (`i32` only)
            if t != "i32":
                continue
            gen = as_generic_host(host, r)
            if gen is None:
                continue
            kern, host = host, gen
        elif CONST:  # the literal's kernel against the const generic's (in place of the host's)
            gen = as_generic(kern, r)
            if gen is None:
                continue
            host = gen
        h, k = outcome(host), outcome(kern)
        if CHECK and h.startswith("error") and h != "error E0715":
            checked = checked_codes(host)
            if not checked:
                bad += 1
                print(f"{seed}:{i} T={t} late: check passes, run={h!r} body: {b}", flush=True)
        if h.startswith("error") and k.startswith("error") and h == k:
            alike += 1
        if h == "error E0715" and not k.startswith("error"):
            continue  # an integer division by zero: E0715 on the host, 0 in a kernel (the reference's rule)
        if h != k and not (h.startswith("error") and k.startswith("error")):
            bad += 1
            path = f"/tmp/generic_diff/{seed}_{i}{'c' if concrete else ''}"
            with open(path + "_host.tile", "w") as f:
                f.write(host)
            with open(path + "_kernel.tile", "w") as f:
                f.write(kern)
            print(f"{seed}:{i} T={t} host={h!r} kernel={k!r} body: {b}", flush=True)
    print(f"ran {count} ({alike} errors alike, {bad} disagreements)")


if __name__ == "__main__":
    main()
