"""A differential of written sizes: is a size a program writes in a type honoured (hrev round 29)?

Each case is a program in which a tensor of `S` elements reaches a type that declares `E` for it, by a random
route, and either the checker knows `S` (a literal length) or only the run does (a length computed from data).
The types (kernel side): a device function's parameter (`t: &Tensor<f32, [E]>`), one given by a turbofish or by
the kernel's own const generic (`[N]`), a tensor inside a tuple parameter, a device function's result
(`-> &Tensor<f32, [E]>`), a kernel `let t: &Tensor<f32, [E]> = ..`, each also behind a device function that
passes it on (`[?]`); the routes to them: the kernel's parameter itself, a block, a block's `let`, a tuple's
field, an `if` on a constant (its other arm another tensor), a device function returning its `[?]` argument.
Host side: a host function's result type (`-> Tensor<f32, [E]>`) and a host `let`'s. The oracle:

- `E != S`: refused, at check (E0501 at the launch, E0203) where `S` is known there, else when it runs (E0501 at
  the launch, E0714 on the host); an accepted run is a miss;
- `E == S`: accepted and run on the interpreter, printing the first 4 elements (0 1 2 3); a refusal is a miss.

    python benchmarks/declared_diff.py SEED COUNT [--generic]

`--generic`: const generics declared `u8` or `i8` given values in and just past their range by every route that
fixes one (`generic_program`); out of range must be E0222 (at check where the checker knows the value), in
range must run and print the value.

CPU only; the programs are written under /tmp/declared_diff/. Before round 29's fixes every kernel-side and
host-side mismatch ran (main at 6945734c's parent: see FUZZING.md, round 29).
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import tilelang.run as run
from tilelang import driver
from tilelang.diagnostics.model import TileError

OUT = Path("/tmp/declared_diff")

SIZES = (4, 6, 8, 16)


class Case:
    def __init__(self, r: random.Random) -> None:
        self.r = r
        self.items: list[str] = []
        self.n = 0

    def fresh(self, base: str) -> str:
        self.n += 1
        return f"{base}{self.n}"

    def route(self, depth: int = 0) -> str:
        """An expression in the kernel that is `x` (the tensor of S elements)."""
        r = self.r
        k = r.randrange(7 if depth < 2 else 1)
        if k == 0:
            return "x"
        inner = self.route(depth + 1)
        if k == 1:
            return f"{{ {inner} }}"
        if k == 2:
            return f"{{ let q{depth} = {inner}; q{depth} }}"
        if k == 3:
            return f"({inner}, 1).0"
        if k == 4:
            return f"if C > 0 {{ {inner} }} else {{ y }}"
        if k == 5:
            name = self.fresh("same")
            self.items.append(f"fn {name}(a: &Tensor<f32, [?]>) -> &Tensor<f32, [?]> {{\n    a\n}}\n")
            return f"{name}({inner})"
        return f"if C < 0 {{ y }} else {{ {inner} }}"

    def reader(self, e: str) -> tuple[str, str]:
        """A device function that reads the first 4 elements of a tensor declared `[E]`, and how the kernel
        calls it on the route `A`: (the call's text with `A` for the route, the kernel's generics)."""
        r = self.r
        name = self.fresh("rd")
        k = r.randrange(6)
        read = "t.partition([4]).load([0])"
        if k == 0:
            self.items.append(f"fn {name}(t: &Tensor<f32, [{e}]>) -> Tile<f32, [4]> {{\n    {read}\n}}\n")
            call, gen = f"{name}(A)", ""
        elif k == 1:
            self.items.append(f"fn {name}<const M: i32>(t: &Tensor<f32, [M]>) -> Tile<f32, [4]> {{\n    {read}\n}}\n")
            call, gen = f"{name}::<{e}>(A)", ""
        elif k == 2:
            self.items.append(f"fn {name}<const M: i32>(t: &Tensor<f32, [M]>) -> Tile<f32, [4]> {{\n    {read}\n}}\n")
            call, gen = f"{name}::<N>(A)", "N"
        elif k == 3:
            self.items.append(f"fn {name}(p: (i32, &Tensor<f32, [{e}]>)) -> Tile<f32, [4]> {{\n"
                              f"    let t = p.1;\n    {read}\n}}\n")
            call, gen = f"{name}((2, A))", ""
        elif k == 4:
            self.items.append(f"fn {name}(a: &Tensor<f32, [?]>) -> &Tensor<f32, [{e}]> {{\n    a\n}}\n")
            call, gen = f"{name}(A).partition([4]).load([0])", ""
        else:
            call, gen = f"{{ let t: &Tensor<f32, [{e}]> = A; {read} }}", ""
        if r.random() < 0.3:  # behind a device function that passes the tensor on
            on = self.fresh("on")
            inner = call.replace("A", "s")
            params = "<const N: i32>" if gen else ""
            self.items.append(f"fn {on}{params}(s: &Tensor<f32, [?]>) -> Tile<f32, [4]> {{\n    {inner}\n}}\n")
            call = f"{on}::<N>(A)" if gen else f"{on}(A)"
        return call, gen


def program(seed: int, i: int) -> tuple[str, bool, bool]:
    """(source, whether the sizes disagree, whether the checker knows the size)."""
    r = random.Random(seed * 1_000_003 + i)
    c = Case(r)
    s, e = r.choice(SIZES), r.choice(SIZES)
    static = r.random() < 0.5
    length = str(s) if static else f"(ones::<f32>([{s}]).sum() as i32)"
    host = r.random() < 0.25
    if host:  # a host function's result type or a host `let`'s
        if r.random() < 0.5:
            c.items.append(f"fn mk(n: i32) -> Tensor<f32, [{e}]> {{\n    arange::<f32>(n)\n}}\n")
            make = f"mk({length})"
            ty = ""
        else:
            make, ty = f"arange::<f32>({length})", f": Tensor<f32, [{e}]>"
        c.items.append("kernel fn k(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>) {\n"
                       "    z.store(x.partition([4]).load([0]));\n}\n")
        body = (f"    let xs{ty} = {make};\n    let mut z = zeros::<f32>([4]);\n"
                "    k(z.partition([4]), &xs).sync();\n    print(z);\n")
    else:
        call, gen = c.reader(str(e))
        call = call.replace("A", c.route())
        generics = "<const N: i32>" if gen else ""
        c.items.append(f"kernel fn k{generics}(z: &mut Tensor<f32, [4]>, x: &Tensor<f32, [?]>, "
                       f"y: &Tensor<f32, [?]>) {{\n    z.store({call});\n}}\n")
        turbofish = f"::<{e}>" if gen else ""
        other = r.choice(SIZES)
        body = (f"    let xs = arange::<f32>({length});\n    let ys = ones::<f32>([{other}]);\n"
                f"    let mut z = zeros::<f32>([4]);\n    k{turbofish}(z.partition([4]), &xs, &ys).sync();\n"
                "    print(z);\n")
    src = "const C: i32 = 1;\n" + "".join(c.items) + "fn main() {\n" + body + "}\n"
    return src, s != e, static


GTYPES = {"u8": 255, "i8": 127}


def generic_program(seed: int, i: int) -> tuple[str, bool, bool, str]:
    """`--generic`: a const generic declared `u8` or `i8` given a value in its range or just past it, by a
    turbofish (kernel, host function, device function), a partition's tile, a device function's instance of
    the kernel's generic (`dev::<{B + d}>`), or a host function's tensor of that many elements made from data.
    (source, whether the value is out of range, whether the checker knows it, the printed value expected)."""
    r = random.Random(seed * 1_000_003 + i)
    ty = r.choice(sorted(GTYPES))
    hi = GTYPES[ty]
    v = r.choice((hi, hi + 1, hi - r.randrange(1, 20), hi + r.randrange(1, 20)))
    out = v > hi
    head = (f"fn dev<const N: {ty}>(t: Tile<f32, [1]>) -> Tile<f32, [1]> {{\n    t + N as f32\n}}\n"
            f"kernel fn k<const B: {ty}>(z: &mut Tensor<f32, [B]>) {{\n    z.store(zeros::<f32>([B]) + B as f32);\n}}\n"
            f"kernel fn kd<const B: i32>(z: &mut Tensor<f32, [1]>) {{\n    z.store(dev::<{{B + D}}>(zeros::<f32>([1])));\n}}\n"
            f"fn h<const N: {ty}>(_t: &Tensor<f32, [N]>) -> i32 {{\n    N as i32\n}}\n"
            f"fn hh<const N: {ty}>() -> i32 {{\n    N as i32\n}}\n")
    form = r.randrange(5)
    static = True
    d = r.randrange(0, 4)
    head = head.replace("B + D", f"B + {d}")
    if form == 0:
        body = f"    let mut z = zeros::<f32>([{v}]);\n    k::<{v}>(z.partition([{v}])).sync();\n    print(z.max());\n"
    elif form == 1:
        body = f"    let mut z = zeros::<f32>([{v}]);\n    k(z.partition([{v}])).sync();\n    print(z.max());\n"
    elif form == 2:
        body = (f"    let mut z = zeros::<f32>([1]);\n    kd::<{v - d}>(z.partition([1])).sync();\n"
                "    print(z.max());\n")
    elif form == 3:
        body = f"    print(hh::<{v}>() as f32);\n"
    else:
        static = False
        body = f"    let n = ones::<f32>([{v}]).sum() as i32;\n    print(h(&zeros::<f32>([n])) as f32);\n"
    return "const C: i32 = 1;\n" + head + "fn main() {\n" + body + "}\n", out, static, f"{float(v)}"


def generic_case(seed: int, i: int) -> tuple[str, str]:
    src, out_of_range, static, want = generic_program(seed, i)
    path = OUT / f"g{seed}_{i}.tile"
    path.write_text(src)
    res = driver.check(path)
    codes = {d.code for d in res.diagnostics if d.severity.value == "error"}
    if codes - {"E0222"}:
        return "other", f"g{seed}_{i}: {sorted(codes)}"
    if codes:
        return ("ok" if out_of_range else "MISS"), f"g{seed}_{i}: refused at check" + (
            "" if out_of_range else " though the value fits")
    o = io.StringIO()
    try:
        run.execute(str(path), "cpu", out=o)
    except TileError as e:
        got = {d.code for d in e.diagnostics}
        if out_of_range and got <= {"E0222"}:
            return ("late" if static else "ok"), f"g{seed}_{i}{' late' if static else ''}"
        return "MISS", f"g{seed}_{i}: refused when run ({sorted(got)})"
    if out_of_range:
        return "MISS", f"g{seed}_{i}: out of range, but the program ran and printed {o.getvalue().split()}"
    if o.getvalue().split() != [want]:
        return "MISS", f"g{seed}_{i}: printed {o.getvalue().split()}, want {want}"
    return "ok", f"g{seed}_{i}"


def case(seed: int, i: int) -> tuple[str, str]:
    src, differ, static = program(seed, i)
    path = OUT / f"{seed}_{i}.tile"
    path.write_text(src)
    res = driver.check(path)
    codes = {d.code for d in res.diagnostics if d.severity.value == "error"}
    if codes - {"E0501", "E0203"}:
        return "other", f"{seed}_{i}: {sorted(codes)}"
    if codes:
        return ("ok" if differ else "MISS"), f"{seed}_{i}: refused at check ({sorted(codes)})" + (
            "" if differ else " though the sizes agree")
    out = io.StringIO()
    try:
        run.execute(str(path), "cpu", out=out)
    except TileError as e:
        got = {d.code for d in e.diagnostics}
        if differ and got <= {"E0501", "E0714"}:
            return ("late" if static else "ok"), f"{seed}_{i}{' late' if static else ''}"  # late: known at check
        return "MISS", f"{seed}_{i}: refused when run ({sorted(got)}: {str(e).splitlines()[0]})"
    except Exception as e:  # (reported as a miss)
        return "MISS", f"{seed}_{i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if differ:
        return "MISS", f"{seed}_{i}: sizes differ, but the program ran"
    want = "[0.0, 1.0, 2.0, 3.0]"
    if want not in out.getvalue():
        return "MISS", f"{seed}_{i}: printed {out.getvalue()!r}"
    return "ok", f"{seed}_{i}"


def main() -> None:
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    one = generic_case if "--generic" in sys.argv else case
    OUT.mkdir(exist_ok=True)
    tally: dict[str, int] = {}
    for i in range(count):
        kind, msg = one(seed, i)
        tally[kind] = tally.get(kind, 0) + 1
        if kind in ("MISS", "other", "late"):
            print(kind, msg, flush=True)
    print(" ".join(f"{k} {v}" for k, v in sorted(tally.items())))


if __name__ == "__main__":
    main()
