"""A differential of the host checker's view of where a kernel's writes land (hrev round 27).

Each case is a host program that gives a kernel a tensor to write, by a random route, and then reads the tensor
it meant to write. The routes reach either an outer tensor `a` (held: the writes must land in it) or a tensor
that no name holds when the kernel runs: a tensor of a block dropped at the block's end
(`{ let t = zeros(..); &t }`), kept in a variable past its block (`let r = { .. &t };`), the tensor a variable had
before it was reassigned (`let r = &b; b = zeros(..);`), a temporary (`&zeros(..)`). Routes nest: blocks, `if`
arms (`if c { X } else { &a }`: may be lost), tuple fields, `let`s, `let mut` reassigned in a block. Two
kernels: `tally` (`&` parameter written by `unsafe` atomics) and `inc` (a `&mut` partition; the route's
reference is partitioned, `route.partition([2])`, or given to a host function `bump` that launches `inc` on
it), run by `.sync()`, as an operation kept in a variable, in a
`graph { }` replayed once, or `.launch()`ed and waited for. Each case is checked and, where accepted, run on the
interpreter:

- a route that may lose the writes must be refused (E0307 or E0313);
- an accepted program must print the writes in `a` (4.0: each of 4 blocks adds 1); a refused held route is only
  counted ("over").

    python benchmarks/host_drop_diff.py SEED COUNT

CPU only; the programs are written under /tmp/host_drop_diff/.
"""

from __future__ import annotations

import random
from pathlib import Path

import _fuzz

OUT = Path("/tmp/host_drop_diff")

HEAD = """kernel fn tally(z: &mut Tensor<f32, [1]>, t: &Tensor<f32, [?]>) {
    unsafe { atomic_add(t, [0], 1.0); }
    z.store(zeros::<f32>([1]));
}
kernel fn inc<const B: i32>(t: &mut Tensor<f32, [B]>) {
    t.store(t.load() + 0.5);
}
fn bump(t: &mut Tensor<f32, [?]>) {
    inc(t.partition([2])).sync();
}
"""


class Gen(_fuzz.Gen):
    def __init__(self, r: random.Random, mut: bool) -> None:
        super().__init__(r)
        self.mut = mut  # `&mut` routes (for `inc`'s partition)

    def ref(self, x: str) -> str:
        return f"&mut {x}" if self.mut else f"&{x}"

    def route(self, depth: int = 0) -> tuple[str, str]:
        """(an expression of a reference, how the writes through it may be lost: "" (they land in `a`), "drop"
        (a tensor no name holds when the kernel runs), "temp" (a temporary) or "kept" (a temporary that a variable
        binding the route holds: `let v = (&zeros(..), 1);` is readable through `v.0`; accepted))."""
        r = self.r
        k = r.randrange(17) if depth < 3 else r.choice([0, 0, 1])
        if k >= 13:
            return self.more(k)
        m = "mut " if self.mut else ""
        if k == 0:
            return self.ref("a"), ""
        if k == 1:  # a tensor of a block, dropped at its end
            t = self.fresh()
            return f"{{ let {m}{t} = zeros::<f32>([4]); {self.ref(t)} }}", "drop"
        if k == 2:
            e, lost = self.route(depth + 1)
            return f"{{ {e} }}", lost
        if k == 3:
            e, lost = self.route(depth + 1)
            q = self.fresh()
            return f"{{ let {q} = {e}; {q} }}", lost  # (a temporary it binds lives while a reference holds it)
        if k == 4:
            e, lost = self.route(depth + 1)
            if self.mut:  # two `&mut` borrows of `a` in one `if` is not the point here
                return f"if c {{ {e} }} else {{ {e} }}", lost
            return f"if c {{ {e} }} else {{ &a }}", lost
        if k == 5:
            e, lost = self.route(depth + 1)
            v = self.fresh()
            self.pre.append(f"let {v} = ({e}, 1);")
            return f"{v}.0", "kept" if lost in ("temp", "kept") else lost
        if k == 6:
            e, lost = self.route(depth + 1)
            v = self.fresh()
            self.pre.append(f"let {v} = {e};")
            return v, "kept" if lost in ("temp", "kept") else lost
        if k == 7:  # a variable's old tensor
            b = self.fresh()
            v = self.fresh()
            self.pre += [f"let mut {b} = zeros::<f32>([4]);", f"let {v} = {self.ref(b)};",
                         f"{b} = zeros::<f32>([4]);"]
            return v, "drop"
        if k == 8:  # a `let mut` re-pointed inside a block at the block's tensor
            v, t = self.fresh(), self.fresh()
            self.pre += [f"let mut {v} = {self.ref('a')};",
                         f"{{ let {m}{t} = zeros::<f32>([4]); {v} = {self.ref(t)}; }}"]
            return v, "drop"
        if k == 9:  # a temporary
            return self.ref("zeros::<f32>([4])"), "temp"
        if k == 10:
            e, lost = self.route(depth + 1)
            t = self.fresh()
            return f"{{ let {t} = ones::<f32>([4]); {e} }}", lost
        if k == 11:  # a reference kept in a variable past its block
            v, t = self.fresh(), self.fresh()
            self.pre.append(f"let {v} = {{ let {m}{t} = zeros::<f32>([4]); {self.ref(t)} }};")
            return v, "drop"
        e, lost = self.route(depth + 1)
        v = self.fresh()
        self.pre += [f"let mut {v} = {self.ref('a') if not self.mut else self.ref('spare')};", f"{v} = {e};"]
        return v, "kept" if lost in ("temp", "kept") else lost

    def more(self, k: int) -> tuple[str, str]:
        """Loops, tuple fields: a reference re-pointed in a loop at the loop body's tensor, a field of a block's
        tuple, a field of a tuple variable reassigned after the reference was taken, a field of a held tuple
        (kept: the writes are readable through it)."""
        m = "mut " if self.mut else ""
        v, t = self.fresh(), self.fresh()
        if k == 13:
            self.pre += [f"let mut {v} = {self.ref('a') if not self.mut else self.ref('spare')};",
                         f"for _i in 0..2 {{ let {m}{t} = zeros::<f32>([4]); {v} = {self.ref(t)}; }}"]
            return v, "drop"
        if k == 14:
            return f"{{ let {m}{t} = (zeros::<f32>([4]), 1); {self.ref(t + '.0')} }}", "drop"
        if k == 15:
            self.pre += [f"let mut {t} = (zeros::<f32>([4]), 1);", f"let {v} = {self.ref(t + '.0')};",
                         f"{t} = (zeros::<f32>([4]), 2);"]
            return v, "drop"
        self.pre.append(f"let {m}{t} = (zeros::<f32>([4]), 1);")
        return self.ref(t + ".0"), "kept"


def program(seed: int, i: int) -> tuple[str, str, bool]:
    r = random.Random(seed * 1_000_003 + i)
    mut = r.random() < 0.4
    g = Gen(r, mut)
    e, lost = g.route()
    op = f"inc(({e}).partition([2]))" if mut else f"tally(z.partition([1]), {e})"
    how = r.randrange(4)  # run now, kept in a variable, recorded in a graph, launched and waited for
    if mut and r.random() < 0.4:  # a host function that launches on its `&mut` parameter
        body = "\n".join(f"    {s}" for s in [*g.pre, f"bump({e});"])
        return (HEAD + "fn main() {\n    let c = ones::<f32>([1]).sum() > 0.0;\n    let mut a = zeros::<f32>([4]);\n"
                "    let mut spare = zeros::<f32>([4]);\n    let mut z = zeros::<f32>([4]);\n"
                f"{body}\n    print(a.sum(), c, z.sum(), spare.sum());\n}}\n"), lost, mut
    calls = [[f"{op}.sync();"], [f"let op = {op};", "op.sync();"], [f"let g = graph {{ {op}; }};", "g.replay();"],
             [f"let h = {op}.launch();", "h.wait();"]][how]
    body = "\n".join(f"    {s}" for s in g.pre + calls)
    src = (HEAD + "fn main() {\n    let c = ones::<f32>([1]).sum() > 0.0;\n    let mut a = zeros::<f32>([4]);\n"
           "    let mut spare = zeros::<f32>([4]);\n    let mut z = zeros::<f32>([4]);\n"
           f"{body}\n    print(a.sum(), c, z.sum(), spare.sum());\n}}\n")
    return src, lost, mut


def case(seed: int, i: int) -> tuple[str, str]:
    src, lost, mut = program(seed, i)
    path = _fuzz.write(OUT, f"{seed}_{i}.tile", src)
    codes = _fuzz.error_codes(path)
    if codes - {"E0307", "E0313"}:
        return "other", f"{seed}_{i}: {sorted(codes)}"
    if codes:
        return ("ok" if lost in ("drop", "temp") else "over"), f"{seed}_{i}"
    if lost == "temp" and mut:
        return "ok", f"{seed}_{i}"  # (a `&mut` temporary's partition: E0313 is the partition's, checked elsewhere)
    if lost == "kept":
        return "ok", f"{seed}_{i}"  # a temporary a variable holds: readable through it, accepted
    if lost:
        return "MISS", f"{seed}_{i}: the writes may be lost but the program was accepted"
    printed, err = _fuzz.interpret(path)
    if err:
        return "MISS", f"{seed}_{i}: accepted, then {err}"
    got = printed.split()
    want = "2.0" if mut else "4.0"
    if not got or got[0] != want:
        return "MISS", f"{seed}_{i}: accepted, `a` holds {got[:1]} where the writes give {want}"
    return "ok", f"{seed}_{i}"


if __name__ == "__main__":
    _fuzz.main(case, OUT)
