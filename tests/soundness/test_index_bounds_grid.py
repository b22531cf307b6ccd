"""The kernel checker's bounds of a nested tile index made of the grid (hfix2): random index expressions of
`block_id(0)`, `num_blocks(0)` and a loop variable `i` (0..=5) under `+ - * / % >>`, `&`, `minimum`/`maximum`,
with constant divisors and divisors known only at the launch (`num_blocks(0)`, `num_blocks(0) - 2`). A line the
checker accepts (no E0403 or E0407 at compile time) leaves the launch-time checks of its span; for every grid
size whose checks all hold, every block's index must be in 0..4, computed here with the language's integer
rules (i32 wrapping, truncated division and remainder, `x / 0 == 0` and `x % 0 == x`, arithmetic shifts).
huser21's `(num_blocks(0) - 1) % 2` was E0403 "can be -1": the checker took any remainder of a dividend with a
bound known only at the launch as -1..=1; those bounds are symbolic now, which these launches test."""

from __future__ import annotations

import random

import pytest

from tilelang import driver
from tilelang.ownership.facts import LaunchCheck

GRIDS = [1, 2, 3, 4, 5, 7, 8, 9, 64, 1000, 1 << 20, (1 << 31) - 1]


def wrap(v: int) -> int:
    v &= (1 << 32) - 1
    return v - (1 << 32) if v >= 1 << 31 else v


def kdiv(a: int, b: int, op: str) -> int:
    if b == 0:
        return 0 if op == "/" else a
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
    return wrap(q if op == "/" else a - q * b)


def gen(r: random.Random, d: int) -> tuple[str, object]:
    """(source text, evaluator taking (block, grid, i)) of an i32 expression."""
    if d == 0 or r.random() < 0.25:
        k = r.randrange(5)
        if k == 0:
            return "block_id(0)", lambda b, n, i: b
        if k == 1:
            return "num_blocks(0)", lambda b, n, i: n
        if k == 2:
            return "i", lambda b, n, i: i
        c = r.choice([0, 1, 2, 3, 4, 7, -1, -2, 2147483640])
        return (f"({c})" if c < 0 else str(c)), lambda b, n, i, c=c: c
    (ta, fa), (tb, fb) = gen(r, d - 1), gen(r, d - 1)
    k = r.randrange(8)
    if k <= 1:
        op = r.choice(["+", "-", "*", "&"])
        return f"({ta} {op} {tb})", lambda b, n, i, fa=fa, fb=fb, op=op: wrap(
            fa(b, n, i) + fb(b, n, i) if op == "+" else fa(b, n, i) - fb(b, n, i) if op == "-" else
            fa(b, n, i) * fb(b, n, i) if op == "*" else fa(b, n, i) & fb(b, n, i))
    if k <= 4:
        op = r.choice(["%", "/"])
        t, c = r.choice([("2", 2), ("3", 3), ("4", 4), ("num_blocks(0)", None), ("(num_blocks(0) - 2)", -2)])
        return f"({ta} {op} {t})", lambda b, n, i, fa=fa, op=op, c=c: kdiv(
            fa(b, n, i), c if c is not None and c > 0 else wrap(n + (c or 0)), op)
    if k == 5:
        c = r.choice([0, 1, 2, 30])
        return f"({ta} >> {c})", lambda b, n, i, fa=fa, c=c: fa(b, n, i) >> c
    if k == 6:
        fn = r.choice(["minimum", "maximum"])
        return f"{fn}({ta}, {tb})", lambda b, n, i, fa=fa, fb=fb, fn=fn: (min if fn == "minimum" else max)(
            fa(b, n, i), fb(b, n, i))
    return f"({ta} + {tb})", lambda b, n, i, fa=fa, fb=fb: wrap(fa(b, n, i) + fb(b, n, i))


def blocks(n: int) -> list[int]:
    return list(range(n)) if n <= 9 else sorted({0, 1, 2, n // 3, n // 2, n - 3, n - 2, n - 1})


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.heavy)])
def test_every_index_accepted_for_a_grid_is_in_range(seed: int) -> None:
    r = random.Random(seed)
    cases = []
    while len(cases) < 100:
        t, f = gen(r, r.randint(1, 3))
        if r.random() < 0.6:  # a remainder at the top, so that many are accepted
            t, f = f"({t} % 4)", lambda b, n, i, f=f: kdiv(f(b, n, i), 4, "%")
        cases.append((t, f))
    while True:  # (a line that a constant folding refuses, `2147483640 + 7`, stops the check: it is dropped)
        lines = "\n".join(f"        q.store(v, [{t}, 0]);" for t, _ in cases)
        src = (f"kernel fn k(z: &mut Tensor<i32, [4, 1]>) {{\n    let q = z.partition([1, 1]);\n"
               f"    let v = full::<i32>([1, 1], 1);\n    for i in 0..6 {{\n{lines}\n    }}\n}}\n"
               f"fn main() {{ go(16); }}\n"
               f"fn go(n: i32) {{ let mut z = zeros::<i32>([n, 1]); k(z.partition([4, 1])).sync(); }}\n")
        res = driver.compile(src, "checked")
        first = src.count("\n", 0, src.index("        q.store"))

        def line(at: int, first: int = first, src: str = src) -> int:
            return src.count("\n", 0, at) - first

        assert all(d.primary_span is not None for d in res.diagnostics)
        other = {line(d.primary_span.start) for d in res.diagnostics if d.code not in ("E0403", "E0407")}
        if not other:
            break
        cases = [c for n, c in enumerate(cases) if n not in other]
    refused = {line(d.primary_span.start) for d in res.diagnostics}
    checks: dict[int, list[LaunchCheck]] = {}
    for c in res.context.outputs["checked"].ownership.checks_for("k"):
        checks.setdefault(line(c.span.start), []).append(c)
    accepted = [(n, t, f) for n, (t, f) in enumerate(cases) if n not in refused]
    assert len(accepted) > 30 and len(checks) > 10, (len(accepted), len(checks))
    held = 0
    for n, t, f in accepted:
        for g in GRIDS:
            if not all(c.holds({"num_blocks(0)": g}) for c in checks.get(n, ())):
                continue
            held += 1
            for b in blocks(g):
                for i in range(6):
                    v = f(b, g, i)  # type: ignore[operator]
                    assert 0 <= v < 4, (t, g, b, i, v)
    assert held > 200, held
