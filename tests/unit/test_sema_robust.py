"""The checker never raises: every builtin and method, called with arguments
of every kind, in kernel and host code, gives diagnostics or a type."""

from __future__ import annotations

import random

import pytest

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.intrinsics.signatures import FUNCTIONS, METHODS
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

KERNEL_ARGS = ["t", "u", "s", "1", "2.5", "true", "x", "z", "p", "q", "[0, 1]", "[4]", '"msg"',
               "&x", "(1, 2)", "i", "t > 0.0", "zeros::<f16>([8, 16])"]
HOST_ARGS = ["a", "&a", "b", "1", "2.5", "[8, 16]", "a.shape()", '"f.npy"', "op", "h", "g",
             "a.partition([4, 4])", "true", "(1, 2)", "&b"]
RECEIVERS_K = ["t", "s", "x", "z", "p", "q", "u"]
RECEIVERS_H = ["a", "&a", "op", "h", "g", "a.partition([4, 4])", "1"]
GENERICS = ["", "::<f32>", "::<i32>", "::<4>", "::<f16, 2>"]

KERNEL = """
kernel fn k<const BM: i32, const BN: i32>(z: &mut Tensor<f32, [BM, BN]>, x: &Tensor<f32, [?, ?]>, n: i32) {{
    let t = x.load_like(z);
    let u = zeros::<f32>([BM]);
    let s = 2.0;
    let i = block_id(0);
    let p = x.partition([BM, BN]);
    let q = z.partition([1, BN]);
    let r = {expr};
}}
"""
HOST = """
kernel fn kk<const B: i32>(z: &mut Tensor<f32, [B, B]>) {{
    z.store(z.load());
}}
fn main() {{
    let a = zeros::<f32>([8, 16]);
    let mut b = ones::<f32>([8, 16]);
    let op = kk(b.partition([4, 4]));
    let h = kk(b.partition([4, 4])).launch();
    let g = graph {{ kk(b.partition([4, 4])); }};
    let r = {expr};
}}
"""


def _check(src: str) -> None:
    sm = SourceMap()
    sink = DiagnosticSink()
    module = parse(sm.add("robust.tile", src), sink)
    if sink.has_errors:
        return
    check_program(module, sm, sink)


def _calls(rng: random.Random, kernel: bool) -> list[str]:
    pool = KERNEL_ARGS if kernel else HOST_ARGS
    out: list[str] = []
    for name in FUNCTIONS:
        for _ in range(3):
            n = rng.randint(0, 3)
            out.append(f"{name}{rng.choice(GENERICS)}({', '.join(rng.choice(pool) for _ in range(n))})")
    for name in METHODS:
        for _ in range(3):
            n = rng.randint(0, 2)
            recv = rng.choice(RECEIVERS_K if kernel else RECEIVERS_H)
            out.append(f"({recv}).{name}({', '.join(rng.choice(pool) for _ in range(n))})")
    return out


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "host"])
def test_builtins_with_any_arguments_never_raise(kernel: bool) -> None:
    rng = random.Random(1234 + kernel)
    template = KERNEL if kernel else HOST
    for expr in _calls(rng, kernel):
        _check(template.format(expr=expr))


def test_mutated_programs_never_raise() -> None:
    """Token-level mutations of the examples and the UI corpus: the checker
    gives diagnostics or a Program, never an exception."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = sorted([*(root / "examples").glob("*.tile"), *(root / "tests/ui/types").glob("*.tile"),
                    *(root / "stdlib").rglob("*.tile")])
    rng = random.Random(99)
    for _ in range(150):
        toks = re.findall(r"\w+|[^\w\s]|\s+", rng.choice(files).read_text())
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(toks))
            r = rng.random()
            if r < 0.4:
                toks[i] = rng.choice(toks)
            elif r < 0.7:
                del toks[i]
            else:
                toks.insert(i, rng.choice(toks))
        _check("".join(toks))
