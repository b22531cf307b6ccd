"""A differential of the kernel checker's view of `unsafe` writes and reads (hrev round 25).

Each case is a random kernel over four `&` tensors `x0..x3` whose `unsafe` writes (atomics, `store_unchecked`,
direct or through device functions taking a tensor, a tuple or a tuple in a tuple, at depth 1 or 2) and loads (direct or through
device functions) name their tensor through a random route: the name, `&x`, `{ x }`, an `if` of a constant
condition, a `let`, a tuple's field, a destructuring `let`, a `let mut` reassigned, a device function that
returns one of its arguments or a tuple's field, `&` of any of these. The generator knows which tensor each route denotes; each
case is then checked and run three ways:

- `race`: the kernel launched and every `x_i` read on the host before the wait: the checker must refuse
  (E0305) the read of each tensor the kernel writes;
- `reads` / `writes`: the kernel with only its loads, or only its writes, run on the interpreter: the writes
  change exactly the tensors the generator says (a check of the generator itself), and the loads' sum
  (`x_i` holds 4^i, each load reads one element) decodes to the tensors it says;
- `pair`: the write half launched twice in flight (refused, E0309, where it stores with `store_unchecked`;
  atomics of one kind may share a tensor), and beside a kernel that takes `atomic_max` of every tensor
  (always refused: the kinds do not commute);
- `both`: the whole kernel must be refused (E0417) where a tensor is both read and written, and, with the
  loads moved into an `if last_block(1) { .. }` region, refused (E0410) likewise.

A checker that accepts where it must refuse is a finding (`MISS`); a refusal where nothing is read and
written is only counted (`over`: the checker's conservative answer for routes it cannot trace).

    python benchmarks/alias_diff.py SEED COUNT [--more] [--group]

`--more` (round 27) adds routes that shadow another parameter's name, destructuring assignments, nested tuple
fields, functions of `use`d modules and const-generic device functions; `--group` instead writes, in a
`last_block` region, through `part.group()` reached by a random route (each case must be E0416).

CPU only, a few cases a second; the programs are written under /tmp/alias_diff/.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import _fuzz

from tilelang import driver

N = 4
OUT = Path("/tmp/alias_diff")

LIB = """const C: i32 = 1;
fn bump(t: &Tensor<f32, [?]>) { unsafe { atomic_add(t, [0], 1.0); } }
fn bumpt(t: (&Tensor<f32, [?]>, i32)) { unsafe { atomic_add(t.0, [t.1], 1.0); } }
fn bumpn(t: ((&Tensor<f32, [?]>, i32), i32)) { let (a, _) = t; let (y, k) = a; unsafe { atomic_add(y, [k], 1.0); } }
fn bump2(a: &Tensor<f32, [?]>, b: &Tensor<f32, [?]>) { unsafe { atomic_add(b, [0], 1.0); } }
fn put(t: &Tensor<f32, [?]>) { unsafe { store_unchecked(t, [0], full::<f32>([1], 7.0)); } }
fn peek(t: &Tensor<f32, [?]>) -> f32 { t.partition([1]).load([1]).sum(0) }
fn peekt(t: (i32, &Tensor<f32, [?]>)) -> f32 { t.1.partition([1]).load([t.0]).sum(0) }
fn relay(t: (&Tensor<f32, [?]>, i32)) { bumpt(t); }
fn bumpv(t: &Tensor<f32, [?]>) { bump(t); }
fn peekn(t: ((i32, &Tensor<f32, [?]>), i32)) -> f32 { let (a, _) = t; peekt(a) }
fn pick(a: &Tensor<f32, [?]>, b: &Tensor<f32, [?]>) -> &Tensor<f32, [?]> { b }
fn fst(t: (&Tensor<f32, [?]>, &Tensor<f32, [?]>)) -> &Tensor<f32, [?]> { t.0 }
fn swapf(a: &Tensor<f32, [?]>, b: &Tensor<f32, [?]>) -> &Tensor<f32, [?]> { let a = b; a }
fn bumpc<const I: i32>(t: &Tensor<f32, [?]>) { unsafe { atomic_add(t, [I], 1.0); } }
fn peekc<const I: i32>(t: &Tensor<f32, [?]>) -> f32 { t.partition([1]).load([I]).sum(0) }
"""

# `--more` (hrev27): routes through modules a `use` brings in, one function a file (a function that no kernel
# calls is checked as a host function, where atomics and loads are refused)
MODULES = {"mpick": "fn mpick(a: &Tensor<f32, [?]>, b: &Tensor<f32, [?]>) -> &Tensor<f32, [?]> { let b2 = b; b2 }\n",
           "mbump": "fn mbump(t: &Tensor<f32, [?]>) { unsafe { atomic_add(t, [0], 1.0); } }\n",
           "mpeek": "fn mpeek(t: &Tensor<f32, [?]>) -> f32 { t.partition([1]).load([1]).sum(0) }\n"}
MORE = False  # `--more`: the routes, writes and reads that round 27 added (other seeds than the first ones')


class Gen(_fuzz.Gen):
    def route(self, p: int) -> str:
        """An expression of type `&Tensor<f32, [?]>` that denotes `x{p}`."""
        r = self.r
        q = r.choice([i for i in range(N) if i != p])
        x, y = f"x{p}", f"x{q}"
        k = r.randrange(20 if MORE else 12)
        if k >= 12:
            return self.more_route(k, x, y, p)
        if k == 0:
            return x
        if k == 1:
            return f"{{ {x} }}"
        if k == 2:
            return f"if C > 0 {{ {x} }} else {{ {y} }}"
        if k == 3:
            return f"if C < 0 {{ {y} }} else {{ {x} }}"
        if k == 4:
            v = self.fresh()
            self.pre.append(f"let {v} = {self.route(p)};")
            return v
        if k == 5:
            v = self.fresh()
            first = r.random() < 0.5
            self.pre.append(f"let {v} = ({x}, 1);" if first else f"let {v} = (1, {x});")
            return f"{v}.0" if first else f"{v}.1"
        if k == 6:
            v = self.fresh()
            self.pre.append(f"let ({v}, _) = ({x}, 0);")
            return v
        if k == 7:
            v = self.fresh()
            self.pre.append(f"let mut {v} = {y};")
            self.pre.append(f"{v} = {x};")
            return v
        if k == 8:
            return f"pick({y}, {x})"
        if k == 9:
            return f"fst(({x}, {y}))"
        if k == 10:
            return f"(&{self.route(p)})"
        return x

    def more_route(self, k: int, x: str, y: str, p: int) -> str:
        """Round 27's routes: another parameter's name shadowed (in a block, in a device function, in an `if`'s
        arm), a destructuring assignment, a field of a nested tuple expression, an immutable `let` of the
        constant as the condition, a local shadowed by a second `let`, a device function of a `use`d module."""
        if k == 12:
            return f"{{ let {y} = {x}; {y} }}"
        if k == 13:
            return f"swapf({y}, {x})"
        if k == 14:
            v, w = self.fresh(), self.fresh()
            self.pre += [f"let mut {v} = {y};", f"let mut {w} = {y};", f"({w}, {v}) = ({y}, {x});"]
            return v
        if k == 15:
            return f"if C > 0 {{ let {y} = {x}; {y} }} else {{ {y} }}"
        if k == 16:
            return f"(({y}, {self.route(p)}), 1).0.1"
        if k == 17:
            c = self.fresh()
            self.pre.append(f"let {c} = C;")
            return f"if {c} > 0 {{ {x} }} else {{ {y} }}"
        if k == 18:
            v = self.fresh()
            self.pre += [f"let {v} = {y};", f"let {v} = {self.route(p)};"]
            return v
        return f"mpick({y}, {x})"

    def write(self, p: int, raw: bool) -> str:
        """A write of `x{p}`: atomics, or (`raw`) unchecked stores (one kind a case: two kinds on a tensor
        the checker cannot tell apart are E0418, by design)."""
        t = self.route(p)
        if raw:
            return self.r.choice([f"put({t});", f"unsafe {{ store_unchecked({t}, [0], full::<f32>([1], 7.0)); }}"])
        k = self.r.randrange(9 if MORE else 7)
        return [f"unsafe {{ atomic_add({t}, [0], 1.0); }}", f"bump({t});", f"bumpt(({t}, 0));",
                f"bumpn((({t}, 0), 1));", f"bump2(x{(p + 1) % N}, {t});", f"relay(({t}, 0));",
                f"bumpv({t});", f"bumpc::<0>({t});", f"mbump({t});"][k]

    def read(self, p: int) -> str:
        t = self.route(p)
        k = self.r.randrange(7 if MORE else 5)
        return [f"{t}.partition([1]).load([1]).sum(0)", f"peek({t})", f"peekt((1, {t}))",
                f"{t}.partition([1]).load_padded([1], 0.0).sum(0)", f"peekn(((1, {t}), 0))",
                f"peekc::<1>({t})", f"mpeek({t})"][k]


PARAMS = ", ".join(f"x{i}: &Tensor<f32, [?]>" for i in range(N))


def kernel(pre: list[str], reads: list[str], writes: list[str], region: bool) -> str:
    acc = " + ".join(reads) if reads else "0.0"
    body = "\n".join(f"    {s}" for s in pre + writes)
    if not region:
        return (f"kernel fn k(z: &mut Tensor<f32, [1]>, {PARAMS}) {{\n{body}\n"
                f"    z.store(full::<f32>([1], {acc}));\n}}\n")
    return (f"kernel fn k(part: &mut Tensor<f32, [1, 1]>, out: &mut Tensor<f32, [1, 1]>, {PARAMS}) {{\n{body}\n"
            f"    part.store(full::<f32>([1, 1], 1.0));\n"
            f"    if last_block(1) {{\n        out.store(full::<f32>([1, 1], {acc}));\n    }}\n}}\n")


ARGS = ", ".join(f"&x{i}" for i in range(N))
TENSORS = "\n".join(f"    let x{i} = full::<f32>([2], {4 ** i}.0);" for i in range(N))


def main_run(region: bool) -> str:
    launch = ("k(part.partition([1, 1]), out.partition([1, 1]), " if region else "k(z.partition([1]), ") + ARGS + ")"
    outs = ("    let mut part = zeros::<f32>([1, 2]);\n    let mut out = zeros::<f32>([1, 1]);\n" if region
            else "    let mut z = zeros::<f32>([2]);\n")
    shown = "out.sum()" if region else "z.sum() / 2.0"
    return (f"fn main() {{\n{TENSORS}\n{outs}    {launch}.sync();\n"
            f"    print({shown}, {', '.join(f'x{i}.sum()' for i in range(N))});\n}}\n")


def main_race() -> str:
    reads = "\n".join(f"    print(x{i}.sum());" for i in range(N))
    return (f"fn main() {{\n{TENSORS}\n    let mut z = zeros::<f32>([2]);\n"
            f"    let h = k(z.partition([1]), {ARGS}).launch();\n{reads}\n    h.wait();\n}}\n")


MAXK = ("kernel fn km(z: &mut Tensor<f32, [1]>, " + PARAMS + ") {\n"
       + "".join(f"    unsafe {{ atomic_max(x{i}, [0], 9.0); }}\n" for i in range(N))
       + "    z.store(full::<f32>([1], 0.0));\n}\n")


def main_pair(other: str) -> str:
    """`k` and `other` (`k` again, or `km`: `atomic_max` on every tensor) launched together."""
    return (f"fn main() {{\n{TENSORS}\n    let mut z = zeros::<f32>([2]);\n    let mut w = zeros::<f32>([2]);\n"
            f"    let h = k(z.partition([1]), {ARGS}).launch();\n"
            f"    let h2 = {other}(w.partition([1]), {ARGS}).launch();\n    h.wait();\n    h2.wait();\n}}\n")


def lib(kern: str) -> str:
    """The helpers `kern` calls (a function no kernel calls is a host function, where atomics are refused)."""
    used = kern
    keep: list[str] = []
    while True:  # the helpers a kept helper calls too
        keep = [ln for ln in LIB.splitlines() if not ln.startswith("fn ")
                or re.search(rf"\b{re.split('[(<]', ln.split()[1])[0]}(::<[^>]*>)?\(", used)]
        grown = kern + "\n".join(keep)
        if grown == used:
            return "\n".join(keep) + "\n"
        used = grown


def prog(kern: str, main: str) -> str:
    use = "".join(f"use alias_{m}::{m};\n" for m in MODULES if re.search(rf"\b{m}\(", kern))
    return use + lib(kern) + kern + main


def check(src: str, name: str) -> list[tuple[str, int]]:
    res = driver.check(_fuzz.write(OUT, name, src))
    return [(d.code, res.sources.get(d.primary_span.file).line_col(d.primary_span.start)[0] if d.primary_span else 0)
            for d in res.diagnostics if d.severity.value == "error"]


def execute(src: str, name: str) -> list[float] | str:
    printed, err = _fuzz.interpret(_fuzz.write(OUT, name, src))
    return err or [float(v) for v in printed.split()]


def case(seed: int, i: int) -> tuple[str, str]:
    r = random.Random(seed * 1_000_003 + i)
    g = Gen(r)
    wr = sorted({r.randrange(N) for _ in range(r.randint(1, 2))})
    rd = sorted({r.randrange(N) for _ in range(r.randint(1, 3))})
    raw = r.random() < 0.3
    writes = [g.write(p, raw) for p in wr]
    pre_w = list(g.pre)
    g.pre = []
    reads = [g.read(p) for p in rd]
    pre_r = list(g.pre)
    tag = f"{seed}_{i}"
    # the generator's semantics, checked by running each half alone
    got_w = execute(prog(kernel(pre_w, [], writes, False), main_run(False)), f"{tag}_w.tile")
    got_r = execute(prog(kernel(pre_r, reads, [], False), main_run(False)), f"{tag}_r.tile")
    if isinstance(got_w, str) or isinstance(got_r, str):
        return "skip", f"{tag}: a half did not run: {got_w if isinstance(got_w, str) else got_r}"
    written = {j for j in range(N) if got_w[1 + j] != 2 * 4 ** j}
    total, read = int(got_r[0]), set()
    for j in range(N):
        if (total // 4 ** j) % 4:
            read.add(j)
    if written != set(wr) or read != set(rd):
        return "gen", f"{tag}: generator says writes {wr} reads {rd}, the run {sorted(written)} {sorted(read)}"
    # the launch in flight: every written tensor's host read refused
    kw = kernel(pre_w, [], writes, False)
    errs = check(prog(kw, main_race()), f"{tag}_race.tile")
    base = prog(kw, "").count("\n")
    refused = {ln - base - 8 for code, ln in errs if code == "E0305"}  # the prints are lines 8..11 of main
    miss = sorted(set(wr) - refused)
    if miss:
        return "MISS", f"{tag}: the launch writes x{miss} but the host's read in flight was accepted ({errs})"
    # two launches in flight: `k` twice may share its tensors only where it updates them with atomics of one
    # kind (E0309 where it stores, `raw`); beside `km`'s `atomic_max` on every tensor, never (E0309)
    out = "ok"
    for other, must in (("k", raw), ("km", True)):
        src = prog(kw + (MAXK if other == "km" else ""), main_pair(other))
        codes = {c for c, _ in check(src, f"{tag}_pair_{other}.tile")}
        if must and "E0309" not in codes:
            return "MISS", f"{tag}: `k` (writes x{wr}, {'stores' if raw else 'atomic_add'}) and `{other}` in flight " \
                           f"together were accepted ({sorted(codes)})"
        if not must and codes:
            out = "over"
    both = set(wr) & set(rd)
    for region, code in ((False, "E0417"), (True, "E0410")):
        src = prog(kernel(pre_w + pre_r, reads, writes, region), main_run(region))
        errs = check(src, f"{tag}_{'region' if region else 'both'}.tile")
        codes = {c for c, _ in errs}
        if both and code not in codes:
            return "MISS", f"{tag}: x{sorted(both)} read and written, no {code} ({sorted(codes)})"
        if not both and code in codes:
            out = "over"
    return out, tag


# `--group` (round 27): `unsafe` writes in a `last_block` region whose target reaches `part.group()` by a random
# route; each must be E0416 (the view is read only: its index counts from the tensor's origin and reaches other
# groups' tiles). The helpers take 2-D tensors.
GLIB = """const C: i32 = 1;
fn gbump(t: &Tensor<f32, [?, ?]>) { unsafe { atomic_add(t, [0, 0], 1.0); } }
fn gbumpt(t: (&Tensor<f32, [?, ?]>, i32)) { unsafe { atomic_add(t.0, [0, t.1], 1.0); } }
fn gput(t: &Tensor<f32, [?, ?]>) { unsafe { store_unchecked(t, [0, 0], full::<f32>([1, 1], 7.0)); } }
fn gpick(a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) -> &Tensor<f32, [?, ?]> { b }
fn gswap(a: &Tensor<f32, [?, ?]>, b: &Tensor<f32, [?, ?]>) -> &Tensor<f32, [?, ?]> { let a = b; a }
fn gfst(t: (&Tensor<f32, [?, ?]>, i32)) -> &Tensor<f32, [?, ?]> { t.0 }
"""


def group_route(g: Gen, x: str, depth: int = 0) -> str:
    """An expression that denotes the view `x` (`part.group()` or a name bound to it), the other arm `y`."""
    r = g.r
    k = r.randrange(12) if depth < 2 else 0
    y = "y"
    if k == 0:
        return x
    if k == 1:
        return f"{{ {group_route(g, x, depth + 1)} }}"
    if k == 2:
        return f"if C > 0 {{ {group_route(g, x, depth + 1)} }} else {{ {y} }}"
    if k == 3:
        v = g.fresh()
        g.pre.append(f"let {v} = {group_route(g, x, depth + 1)};")
        return v
    if k == 4:
        v = g.fresh()
        return f"{{ let {v} = {group_route(g, x, depth + 1)}; {v} }}"
    if k == 5:
        v = g.fresh()
        g.pre.append(f"let {v} = ({group_route(g, x, depth + 1)}, 1);")
        return f"{v}.0"
    if k == 6:
        return f"gpick({y}, {group_route(g, x, depth + 1)})"
    if k == 7:
        return f"gswap({y}, {group_route(g, x, depth + 1)})"
    if k == 8:
        return f"gfst(({group_route(g, x, depth + 1)}, 0))"
    if k == 9:
        v = g.fresh()
        g.pre += [f"let mut {v} = {y};", f"{v} = {group_route(g, x, depth + 1)};"]
        return v
    if k == 10:
        return f"if C > 0 {{ let {y} = {group_route(g, x, depth + 1)}; {y} }} else {{ {y} }}"
    v = g.fresh()
    return f"(({y}, {group_route(g, x, depth + 1)}), 1).0.1"


def group_case(seed: int, i: int) -> tuple[str, str]:
    r = random.Random(seed * 1_000_003 + i)
    g = Gen(r)
    t = group_route(g, "part.group()")
    w = r.choice([f"unsafe {{ atomic_add({t}, [0, 0], 1.0); }}", f"gbump({t});", f"gbumpt(({t}, 0));", f"gput({t});",
                  f"unsafe {{ store_unchecked({t}, [0, 0], full::<f32>([1, 1], 7.0)); }}"])
    body = "\n".join(f"        {x}" for x in [*g.pre, w])
    kern = ("kernel fn k(part: &mut Tensor<f32, [1, 1]>, y: &Tensor<f32, [?, ?]>) {\n"
            "    part.store(full::<f32>([1, 1], 1.0));\n    if last_block(1) {\n" + body + "\n    }\n}\n")
    used = [ln for ln in GLIB.splitlines() if not ln.startswith("fn ") or re.search(rf"\b{ln.split()[1].split('(')[0]}\(",
                                                                                    kern)]
    src = "\n".join(used) + "\n" + kern + ("fn main() {\n    let y = zeros::<f32>([3, 4]);\n"
                                           "    let mut part = zeros::<f32>([3, 4]);\n"
                                           "    k(part.partition([1, 1]), &y).sync();\n    print(part, y);\n}\n")
    codes = {c for c, _ in check(src, f"g{seed}_{i}.tile")}
    if "E0416" not in codes:
        return ("MISS" if not codes else "other"), f"g{seed}_{i}: no E0416 ({sorted(codes)})"
    return "ok", f"g{seed}_{i}"


def main() -> None:
    global MORE
    MORE = "--more" in sys.argv
    OUT.mkdir(exist_ok=True)
    for m, text in MODULES.items():
        (OUT / f"alias_{m}.tile").write_text(text)
    _fuzz.main(group_case if "--group" in sys.argv else case, OUT, show=("MISS", "gen", "skip"))


if __name__ == "__main__":
    main()
