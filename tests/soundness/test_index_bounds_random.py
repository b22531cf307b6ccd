"""The kernel checker's bounds of a nested tile index against the values it takes (hrev19): random index
expressions of a tensor value `j` (unbounded: any i32) and a loop variable `i` (0..=5) under `+ - * / %`, `&`,
`>>`, casts through narrow and unsigned types, `minimum`/`maximum` and `if` expressions. Each one the checker
accepts as an index of 4 nested tiles (no E0403, E0407 or launch-time check) must be in 0..4 for every `j` of
an edge set and every `i`, computed here with the language's integer rules (i32 wrapping, truncated division,
arithmetic shifts, casts that wrap; hrev20: casts through a float, which rounds, and a bool, and values near
i32::MIN, whose negation wraps). Round 19 taught the checker `&`, `>>`, a remainder of any dividend and
`if` expressions; an unsound rule there would store into another block's tile."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tilelang import driver

RANGES = {"i8": (8, True), "u8": (8, False), "i16": (16, True), "u16": (16, False), "i32": (32, True),
          "u32": (32, False), "i64": (64, True)}
EDGES = [0, 1, 2, 3, 4, 5, 7, -1, -2, -3, -4, -5, -7, 127, 128, -128, 255, 256, 65535, 65536, -32768, 1 << 30,
         (1 << 31) - 1, -(1 << 31), -(1 << 31) + 1, 1431655765, -1431655766, 123456789, -987654321]


def wrap(v: int, ty: str) -> int:
    bits, signed = RANGES[ty]
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def gen(r: random.Random, d: int) -> tuple[str, object]:
    """(source text, evaluator taking (j, i)) of an i32 expression."""
    if d == 0 or r.random() < 0.25:
        k = r.randrange(4)
        if k == 0:
            return "j", lambda j, i: j
        if k == 1:
            return "i", lambda j, i: i
        c = r.choice([0, 1, 2, 3, 4, 7, 8, 15, -1, -4, 30, 31, 259, 2051, 16777219])  # (the last: a float rounds)
        return (f"({c})" if c < 0 else str(c)), lambda j, i, c=c: c
    (ta, fa), (tb, fb) = gen(r, d - 1), gen(r, d - 1)
    k = r.randrange(10)
    if k <= 2:
        op = r.choice(["+", "-", "*", "&", "&", "%", "/"])
        if op in ("%", "/"):
            c = r.choice([1, 2, 3, 4, 8])
            tb, fb = str(c), (lambda j, i, c=c: c)

            def f(j, i, fa=fa, fb=fb, op=op):  # type: ignore[no-untyped-def]
                a, b = fa(j, i), fb(j, i)
                q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
                return wrap(q if op == "/" else a - q * b, "i32")
            return f"({ta} {op} {tb})", f
        return f"({ta} {op} {tb})", lambda j, i, fa=fa, fb=fb, op=op: wrap(
            fa(j, i) + fb(j, i) if op == "+" else fa(j, i) - fb(j, i) if op == "-" else
            fa(j, i) * fb(j, i) if op == "*" else fa(j, i) & fb(j, i), "i32")
    if k == 3:
        c = r.choice([0, 1, 2, 29, 30, 31])
        return f"({ta} >> {c})", lambda j, i, fa=fa, c=c: fa(j, i) >> c
    if k == 4 and ta.strip("()-").isdigit():
        return f"({ta} + j)", lambda j, i, fa=fa: wrap(fa(j, i) + j, "i32")  # (no cast of a literal)
    if k == 4:
        ty = r.choice(["i8", "u8", "i16", "u16", "u32", "i64"])
        bits = RANGES[ty][0]
        c = r.choice([0, 1, bits - 2, bits - 1])
        if r.random() < 0.5:
            return (f"((({ta}) as {ty} >> {c}{ty}) as i32)",
                    lambda j, i, fa=fa, ty=ty, c=c: wrap(wrap(fa(j, i), ty) >> c, "i32"))
        m = r.choice([3, 1, 7])
        return (f"((({ta}) as {ty} & {m}{ty}) as i32)",
                lambda j, i, fa=fa, ty=ty, m=m: wrap(wrap(fa(j, i), ty) & m, "i32"))
    if k == 5:
        fn = r.choice(["minimum", "maximum"])
        return f"{fn}({ta}, {tb})", lambda j, i, fa=fa, fb=fb, fn=fn: (min if fn == "minimum" else max)(fa(j, i), fb(j, i))
    if k == 6:
        return _if(r, d)
    if k == 7:
        return f"(-{ta})", lambda j, i, fa=fa: wrap(-fa(j, i), "i32")
    if k == 8:  # (hrev20) through a float, which rounds past 2^p, or a bool; near i32::MIN, where `-` wraps
        ty = r.choice(["f16", "bf16", "f32", "f64", "bool", "min"])
        if ty == "min":
            return f"({ta} - 2147483647 - 1)", lambda j, i, fa=fa: wrap(fa(j, i) - 2147483648, "i32")
        if ty == "bool":
            return f"(({ta}) as bool as i32)", lambda j, i, fa=fa: int(fa(j, i) != 0)
        return f"(({ta}) as {ty} as i32)", lambda j, i, fa=fa, ty=ty: _through_float(fa(j, i), ty)
    return f"({ta} + {tb})", lambda j, i, fa=fa, fb=fb: wrap(fa(j, i) + fb(j, i), "i32")


def _through_float(v: int, ty: str) -> int:
    """`v as ty as i32`: rounded to the float type's nearest value (ties to even), truncated back, saturated."""
    if ty == "bf16":  # (f32's bits rounded to the top 16, ties to even)
        b = int(np.array(v, np.float32).view(np.uint32))
        b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
        x = float(np.array(b, np.uint32).view(np.float32))
    else:
        with np.errstate(over="ignore"):
            x = float({"f16": np.float16, "f32": np.float32, "f64": np.float64}[ty](v))
    return int(max(-(1 << 31), min((1 << 31) - 1, x))) if np.isfinite(x) else ((1 << 31) - 1 if x > 0 else -(1 << 31))


def _if(r: random.Random, d: int) -> tuple[str, object]:
    """An `if` expression of `gen`'s expressions, with its evaluator."""
    (ta, fa), (tb, fb), (tc, fc) = gen(r, d - 1), gen(r, d - 1), gen(r, d - 1)
    c = r.choice([0, 2])
    return f"(if {tc} > {c} {{ {ta} }} else {{ {tb} }})", lambda j, i: fa(j, i) if fc(j, i) > c else fb(j, i)


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.heavy)])  # (heavy: ~3 s, more of the same)
def test_every_accepted_index_is_in_range(seed: int) -> None:
    r = random.Random(seed)
    cases = []
    while len(cases) < 120:
        t, f = gen(r, r.randint(1, 4))
        if r.random() < 0.5:  # a clamp or `&` at the top, so that many are accepted
            t, f = (f"({t} & 3)", lambda j, i, f=f: f(j, i) & 3) if r.random() < 0.5 else \
                (f"(({t} % 4 + 4) % 4)", lambda j, i, f=f: (lambda a: wrap(((a - int(a / 4) * 4) + 4) % 4, "i32"))(f(j, i)))
        cases.append((t, f))
    while True:  # (a line with a type error, a constant shift the checker folds, is dropped: it stops the check)
        lines = "\n".join(f"        q.store(v, [{t}, 0]);" for t, _ in cases)
        src = (f"kernel fn k(z: &mut Tensor<i32, [4, 1]>, x: &Tensor<i32, [?]>) {{\n"
               f"    let q = z.partition([1, 1]);\n    let j = x.partition([1]).load([block_id(0)]).sum(0);\n"
               f"    let v = full::<i32>([1, 1], 1);\n    for i in 0..6 {{\n{lines}\n    }}\n}}\n"
               f"fn main() {{ let x = zeros::<i32>([4]); let mut z = zeros::<i32>([16, 1]);"
               f" k(z.partition([4, 1]), &x).sync(); }}\n")
        res = driver.compile(src, "checked")
        first = src.count("\n", 0, src.index("        q.store"))
        line = {id(d): src.count("\n", 0, d.primary_span.start) - first for d in res.diagnostics
                if d.primary_span is not None}
        other = {line[id(d)] for d in res.diagnostics if d.code not in ("E0403", "E0407")}
        assert all(id(d) in line for d in res.diagnostics)
        if not other:
            break
        cases = [c for n, c in enumerate(cases) if n not in other]
    refused = set(line.values())
    accepted = [(n, t, f) for n, (t, f) in enumerate(cases) if n not in refused]  # (no generics: no launch-time checks)
    assert len(accepted) > 40, len(accepted)
    for n, t, f in accepted:
        for j in EDGES:
            for i in range(6):
                v = f(j, i)  # type: ignore[operator]
                assert 0 <= v < 4, (t, j, i, v)
