"""Unit tests of the semantic checker's `Program`: what later stages read."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.dtypes import DType
from tilelang.intrinsics.signatures import FUNCTIONS, METHODS, OPERATIONS, RECEIVERS, Context
from tilelang.sema import Program, SymbolKind, check_program
from tilelang.sema.rules import RULES
from tilelang.sema.types import (
    F32,
    I32,
    Dim,
    HandleT,
    OpT,
    PartitionT,
    ScalarT,
    TensorT,
    TileT,
    TileViewT,
    shape_of,
)
from tilelang.source import SourceMap
from tilelang.syntax import ast
from tilelang.syntax.parser import parse

ROOT = Path(__file__).resolve().parents[2]


def check(src: str, name: str = "test.tile") -> tuple[Program, list[str]]:
    sm = SourceMap()
    sink = DiagnosticSink()
    sf = sm.add(name, src)
    mod = parse(sf, sink)
    assert not sink.has_errors, [d.message for d in sink.diagnostics]
    prog = check_program(mod, sm, sink)
    return prog, [f"{d.code} {d.message}" for d in sink.diagnostics]


def ok(src: str) -> Program:
    prog, diags = check(src)
    assert diags == []
    return prog


def nodes(prog: Program, kind: type, pred=lambda n: True) -> list:  # type: ignore[no-untyped-def]
    return [n for n in list(prog.types) + list(prog.symbols) if isinstance(n, kind) and pred(n)]


ADD = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    let tx = x.load_like(z);
    let ty = y.load_like(z);
    z.store(tx + ty);
}

fn main() {
    let n = 1 << 20;
    let x = randn::<f32>([n], 0);
    let y = randn::<f32>([n], 1);
    let mut z = zeros::<f32>([n]);
    add(z.partition([1024]), &x, &y).sync();
    assert_close(&z, &(x + y));
    print(z.sum());
}
"""


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.tile")), ids=lambda p: p.name)
def test_every_example_checks_clean(path: Path) -> None:
    _, diags = check(path.read_text(), str(path))
    assert diags == []


@pytest.mark.parametrize("path", sorted((ROOT / "stdlib").rglob("*.tile")), ids=lambda p: p.name)
def test_stdlib_checks_clean(path: Path) -> None:
    _, diags = check(path.read_text(), str(path))
    assert diags == []


def test_brief_programs_check_clean() -> None:
    brief = Path("/work/shared/BRIEF.md")
    if not brief.exists():
        pytest.skip("the design brief is not on this machine")
    blocks = re.findall(r"```rust\n(.*?)```", brief.read_text(), re.S)
    assert blocks
    for b in blocks:
        _, diags = check(b)
        assert diags == []


# ---------------------------------------------------------------- the add program


def test_add_instantiation_and_tables() -> None:
    prog = ok(ADD)
    assert list(prog.kernels) == ["add"] and "main" in prog.functions
    calls = [c for c in prog.instantiations if isinstance(c, ast.Call)]
    kcall = [c for c in calls if prog.symbol_of(c).kind is SymbolKind.KERNEL]  # type: ignore[union-attr]
    assert len(kcall) == 1
    assert prog.instantiation_of(kcall[0]) == {"B": 1024}
    assert prog.type_of(kcall[0]) == OpT("add", (True, False, False))
    assert prog.callee_of(kcall[0]) is prog.kernels["add"]
    info = prog.kernels["add"]
    assert info.const_generics == ("B",)
    assert info.param_types[0].inner == TensorT(DType.F32, (Dim.var("B"),))  # type: ignore[union-attr]
    assert "main" in prog.host_fns


def test_host_types_are_static_where_known() -> None:
    prog = ok(ADD)
    parts = [n for n in prog.types if isinstance(n, ast.MethodCall) and n.method.name == "partition"]
    assert prog.type_of(parts[0]) == PartitionT(TensorT(DType.F32, shape_of(1 << 20)), shape_of(1024))
    sums = [n for n in prog.types if isinstance(n, ast.MethodCall) and n.method.name == "sum"]
    assert prog.type_of(sums[0]) == F32


def test_kernel_tiles_are_symbolic() -> None:
    prog = ok(ADD)
    loads = [n for n in prog.types if isinstance(n, ast.MethodCall) and n.method.name == "load_like"]
    assert all(prog.type_of(n) == TileT(DType.F32, (Dim.var("B"),)) for n in loads)


def test_uses_of_one_variable_share_one_symbol() -> None:
    prog = ok(ADD)
    zs = [n for n in prog.symbols if isinstance(n, ast.Name) and n.ident.name == "z"]
    kernel_z = {prog.symbol_of(n) for n in zs if prog.symbol_of(n).kind is SymbolKind.PARAM}  # type: ignore[union-attr]
    host_z = {prog.symbol_of(n) for n in zs if prog.symbol_of(n).kind is SymbolKind.LOCAL}  # type: ignore[union-attr]
    assert len(kernel_z) == 1 and len(host_z) == 1
    (hz,) = host_z
    assert hz.mutable and isinstance(hz.decl, ast.NamePat)


def test_builtins_and_methods_have_symbols() -> None:
    prog = ok(ADD)
    mc = next(n for n in prog.symbols if isinstance(n, ast.MethodCall) and n.method.name == "store")
    sym = prog.symbol_of(mc)
    assert sym is not None and sym.kind is SymbolKind.METHOD and sym.signature is METHODS["store"]
    call = next(n for n in prog.symbols if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name)
            and n.callee.ident.name == "randn")
    assert prog.symbol_of(call).kind is SymbolKind.BUILTIN  # type: ignore[union-attr]


# ---------------------------------------------------------------- literal typing


def test_literals_take_the_tile_type() -> None:
    prog = ok("""
kernel fn k<const B: i32>(z: &mut Tensor<f16, [B]>) {
    z.store(z.load() * 2.0 + 1);
}
""")
    lits = [n for n in prog.types if isinstance(n, (ast.FloatLit, ast.IntLit))]
    assert {prog.type_of(n) for n in lits} == {ScalarT(DType.F16)}


def test_unconstrained_literals_default() -> None:
    prog = ok("fn main() { let a = 1; let b = 2.5; let c = 10000000000; print(a); print(b); print(c); }")
    types = {n.text if isinstance(n, ast.FloatLit) else n.value: prog.type_of(n)
             for n in prog.types if isinstance(n, (ast.IntLit, ast.FloatLit))}
    assert types[1] == I32 and types["2.5"] == F32
    assert types[10000000000] == ScalarT(DType.I64)  # too big for i32


def test_immutable_literal_binding_adapts_at_use() -> None:
    prog = ok("""
kernel fn k<const B: i32>(z: &mut Tensor<bf16, [B]>) {
    let s = 0.5;
    z.store(z.load() * s);
}
""")
    uses = [n for n in prog.types if isinstance(n, ast.Name) and n.ident.name == "s"]
    assert [prog.type_of(n) for n in uses] == [ScalarT(DType.BF16)]


def test_dims_of_constant_expressions() -> None:
    prog = ok("""
const N: i32 = 64;
kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) {
    let t = zeros::<f32>([B * 2, N / 4]);
    z.store(z.load());
}
""")
    zc = next(n for n in prog.types if isinstance(n, ast.Call) and isinstance(n.callee, ast.Name)
          and n.callee.ident.name == "zeros")
    assert prog.type_of(zc) == TileT(DType.F32, (Dim.var("B") * 2, Dim.const(16)))
    arr = zc.args[0].value
    assert [prog.dim_of(x) for x in arr.elems] == [Dim.var("B") * 2, Dim.const(16)]
    assert prog.consts["N"] == 64


# ---------------------------------------------------------------- generics


def test_turbofish_with_module_const_and_static_shape_inference() -> None:
    prog = ok("""
const COLS: i32 = 64;
kernel fn rows<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>, x: &Tensor<f32, [?, N]>) {
    y.store(x.load_like(y));
}
kernel fn vec<const N: i32>(y: &mut Tensor<f32, [N]>, w: &Tensor<f32, [N]>) {
    y.store(w.load());
}
fn main() {
    let x = zeros::<f32>([100, COLS]);
    let mut y = zeros::<f32>([100, COLS]);
    rows::<16, COLS>(y.partition([16, COLS]), &x).sync();
    let w = zeros::<f32>([32]);
    let mut v = zeros::<f32>([32]);
    vec(v.partition([32]), &w).sync();
}
""")
    insts = sorted((prog.symbol_of(c).name, tuple(sorted(v.items())))  # type: ignore[union-attr]
                   for c, v in prog.instantiations.items())
    assert insts == [("rows", (("BM", 16), ("N", 64))), ("vec", (("N", 32),))]


def test_runtime_partition_dims_are_deferred() -> None:
    prog = ok("""
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>) {
    z.store(z.load() + 1.0);
}
fn run(n: i32) {
    let mut z = zeros::<f32>([4096]);
    add(z.partition([n])).sync();
}
fn main() {
    run(512);
}
""")
    (call,) = list(prog.deferred)
    assert prog.instantiation_of(call) == {}
    (expr,) = prog.deferred[call].values()
    assert isinstance(expr, ast.Name) and expr.ident.name == "n"


def test_device_fn_instantiation_is_symbolic_in_the_caller() -> None:
    prog = ok("""
use std::nn::softmax;
kernel fn k<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>) {
    y.store(softmax(y.load()));
}
""")
    (call,) = [c for c in prog.instantiations if prog.symbol_of(c).name == "softmax"]  # type: ignore[union-attr]
    assert prog.instantiation_of(call) == {"M": Dim.var("BM"), "N": Dim.var("N")}
    assert prog.type_of(call) == TileT(DType.F32, (Dim.var("BM"), Dim.var("N")))
    assert "std::nn::softmax" in prog.device_fns
    assert "std::nn" in prog.modules and "std::nn::softmax" in prog.items


def test_type_params_bind_dtypes() -> None:
    prog = ok("""
fn twice<T, const N: i32>(x: Tile<T, [N]>) -> Tile<T, [N]> {
    x + x
}
kernel fn k<const B: i32>(z: &mut Tensor<f16, [B]>) {
    z.store(twice(z.load()));
}
""")
    (call,) = [c for c in prog.instantiations if prog.symbol_of(c).name == "twice"]  # type: ignore[union-attr]
    assert prog.instantiation_of(call) == {"T": DType.F16, "N": Dim.var("B")}
    assert prog.type_of(call) == TileT(DType.F16, (Dim.var("B"),))


def test_views_handles_and_graphs() -> None:
    prog = ok("""
kernel fn k<const BM: i32>(z: &mut Tensor<f32, [BM, 32]>, x: &Tensor<f32, [?, ?]>) {
    let p = x.partition([BM, 32]);
    z.store(p.load([block_id(0), 0]));
}
fn main() {
    let x = zeros::<f32>([64, 32]);
    let mut z = zeros::<f32>([64, 32]);
    let h = k(z.partition([16, 32]), &x).launch();
    h.wait();
    let g = graph { k(z.partition([16, 32]), &x); };
    g.replay();
}
""")
    kinds = {type(prog.type_of(n)).__name__ for n in prog.types}
    assert {"TileViewT", "HandleT", "GraphT", "OpT"} <= kinds
    views = [t for t in prog.types.values() if isinstance(t, TileViewT)]
    assert views[0].tile_shape == (Dim.var("BM"), Dim.const(32)) and not views[0].mutable
    assert any(t == HandleT("k") for t in prog.types.values())


# ---------------------------------------------------------------- context and errors


def test_errors_do_not_cascade() -> None:
    _, diags = check("""
fn main() {
    let x = undefined_thing;
    let y = x + 1;
    let z = y.sum() * exp(y);
    print(z);
}
""")
    assert diags == ["E0101 cannot find value `undefined_thing` in this scope"]


def test_import_cycles_terminate(tmp_path: Path) -> None:
    (tmp_path / "a.tile").write_text('use "b.tile";\nfn fa() -> i32 { fb() }\n')
    (tmp_path / "b.tile").write_text('use "a.tile";\nfn fb() -> i32 { 1 }\nfn fb2() -> i32 { fa() }\n')
    root = tmp_path / "main.tile"
    root.write_text('use "a.tile";\nfn main() { print(fa()); }\n')
    prog, diags = check(root.read_text(), str(root))
    assert diags == []
    assert {"a", "b"} <= set(prog.modules)


def test_program_finds_items_by_name_across_modules() -> None:
    """The queries later stages use instead of probing a Program's fields:
    qualified names, the root's items first, then any module's."""
    prog = ok(
        "use std::math;\n"
        "const N: i32 = 4;\n"
        "kernel fn k(z: &mut Tensor<f32, [4]>) { z.store(z.load()); }\n"
        "fn main() { let x = math::cdiv(7, N); print(x); }\n"
    )
    assert [m.name for m in prog.all_modules()] == ["", "std::math"]
    assert prog.find_fn("k", kernel=True) is prog.kernels["k"].decl
    assert prog.find_fn("k", kernel=False) is None
    assert prog.find_fn("std::math::cdiv", kernel=False) is prog.functions["std::math::cdiv"].decl
    assert prog.find_fn("cdiv", kernel=False) is prog.functions["std::math::cdiv"].decl
    assert prog.find_const("N") == 4
    assert prog.find_const("std::math::PI") == prog.find_const("PI") == pytest.approx(3.14159265)
    assert prog.find_const("NOPE") is None
    call = next(c for c in prog.instantiations if isinstance(c, ast.Call))
    assert prog.deferred_of(call) == {}


def test_unchecked_program_answers_unknown() -> None:
    """`Program.unchecked(module)`: the program of a module no checker has
    seen, for stages that run without types (in their own tests)."""
    sf = SourceMap().add("u.tile", "const C: i32 = 3;\nfn f() -> i32 { C }\n")
    module = parse(sf, DiagnosticSink())
    prog = Program.unchecked(module, "u.tile")
    assert [m.ast for m in prog.all_modules()] == [module]
    assert prog.find_fn("f", kernel=False) is module.items[1]
    assert isinstance(prog.find_const("C"), ast.ConstDecl)  # not evaluated: its declaration
    assert prog.type_of(module.items[1].body) is None and prog.symbol_of(module.items[1]) is None


# ---------------------------------------------------------------- the signature table


def test_every_operation_has_a_typing_rule() -> None:
    for sig in OPERATIONS.values():
        assert callable(RULES.get(sig.rule)), sig.name
        assert sig.doc and sig.signature and isinstance(sig.context, Context)
        assert all(r in RECEIVERS for r in sig.receivers)
        assert sig.is_method == bool(sig.receivers)


def test_signature_table_covers_the_brief() -> None:
    kernel_fns = ["block_id", "num_blocks", "zeros", "full", "arange", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "tanh", "sigmoid", "floor", "ceil", "fma", "maximum", "minimum", "where", "sum", "max", "min", "prod", "argmax", "argmin", "cumsum", "mma", "dot", "print", "assert", "atomic_add", "atomic_max", "atomic_min", "store_unchecked"]
    host_fns = ["zeros", "ones", "full", "arange", "rand", "randn", "load_npy", "print", "assert", "assert_close"]
    methods = ["load", "store", "load_like", "partition", "num_tiles", "load_padded", "sum", "max", "min", "reshape", "broadcast", "transpose", "permute", "save_npy", "shape", "clone", "sync", "launch", "wait", "replay"]
    assert set(kernel_fns) <= set(FUNCTIONS) and set(host_fns) <= set(FUNCTIONS)
    assert set(methods) <= set(METHODS)
    assert FUNCTIONS["load_npy"].context is Context.HOST
    assert FUNCTIONS["block_id"].context is Context.KERNEL
    assert FUNCTIONS["print"].context is Context.BOTH


# ---------------------------------------------------------------- broadcasting vs NumPy

_shapes = st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3).map(tuple)


@settings(max_examples=40, deadline=None)
@given(_shapes, _shapes, st.sampled_from(["+", "*", "<", "-"]))
def test_tile_broadcasting_agrees_with_numpy(a: tuple[int, ...], b: tuple[int, ...], op: str) -> None:
    src = f"""
kernel fn k(z: &mut Tensor<f32, [8]>) {{
    let a = zeros::<f32>({list(a)});
    let b = zeros::<f32>({list(b)});
    let c = a {op} b;
    z.store(z.load());
}}
"""
    prog, diags = check(src)
    try:
        want: tuple[int, ...] | None = np.broadcast_shapes(a, b)
    except ValueError:
        want = None
    if want is None:
        assert [d.split()[0] for d in diags] == ["E0202"]
        return
    assert diags == []
    (pat,) = [n for n in prog.types if isinstance(n, ast.NamePat) and n.name.name == "c"]
    ty = prog.type_of(pat)
    assert isinstance(ty, TileT) and ty.shape == shape_of(*want)
    assert ty.dtype is (DType.BOOL if op == "<" else DType.F32)


def test_generic_from_a_runtime_shaped_tensor_is_deferred() -> None:
    prog = ok("""
kernel fn k<const B: i32, const N: i32>(z: &mut Tensor<f32, [B]>, w: &Tensor<f32, [N]>) {
    z.store(z.load() * w.load().sum(0));
}
fn main() {
    let w = load_npy("w.npy");
    let mut z = zeros::<f32>([64]);
    k(z.partition([64]), &w).sync();
}
""")
    (call,) = list(prog.deferred)
    assert prog.instantiation_of(call) == {"B": 64}
    assert isinstance(prog.deferred[call]["N"], ast.Ref)
