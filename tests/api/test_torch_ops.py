"""Tile kernels as PyTorch custom operators (`tilelang.torch_op`) on the CPU:
the schema and the fake implementation come from the Tile signature,
`torch.library.opcheck` accepts them, `torch.compile(fullgraph=True)` traces
models that call them without graph breaks, and a wrong call fails while
tracing with the Tile parameter's error. Skipped without torch."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import tilelang

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

SOURCE = """
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
kernel fn axpy<const B: i32>(y: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, a: f32) {
    y.store(a * x.load_like(y) + y.load());
}
kernel fn head<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [64]>) {
    z.store(x.load_like(z));
}
kernel fn both<T, const B: i32>(s: &mut Tensor<T, [B]>, d: &mut Tensor<T, [B]>,
                                x: &Tensor<T, [?]>, y: &Tensor<T, [?]>) {
    let a = x.load_like(s);
    let b = y.load_like(s);
    s.store(a + b);
    d.store(a - b);
}
kernel fn scale<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>, a: T) {
    z.store(x.load_like(z) * a);
}
kernel fn tally<const B: i32>(z: &mut Tensor<f32, [B]>, total: &Tensor<f32, [1]>) {
    z.store(z.load());
    unsafe { atomic_add(&total, [0], z.load().sum(0)); }
}
"""

_N = [0]


@pytest.fixture(scope="module")
def mod():  # type: ignore[no-untyped-def]
    return tilelang.compile(SOURCE, name="ops")


def _name(base: str) -> str:
    _N[0] += 1
    return f"{base}_{_N[0]}"


def test_a_mutating_operator(mod) -> None:  # type: ignore[no-untyped-def]
    op = tilelang.torch_op(mod.add, tiles={"z": [64]}, name=_name("add"))
    assert "Tensor(a!) z, Tensor x, Tensor y) -> ()" in str(op._opoverload._schema)
    x, y, z = torch.randn(300), torch.randn(300), torch.zeros(300)
    assert op(z, x, y) is None
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)
    torch.library.opcheck(op, (torch.zeros(300), x, y))


def test_an_operator_in_a_tile_graph_block_is_refused(mod) -> None:  # type: ignore[no-untyped-def]
    # hrev10: in `with tilelang.graph()` the operator's kernel call was recorded, not run: PyTorch
    # read a result nothing had written (`torch.empty`'s memory for an `outputs=` one)
    op = tilelang.torch_op(mod.add, tiles={"z": [64]}, name=_name("add_g"))
    x, y, z = torch.randn(300), torch.randn(300), torch.zeros(300)
    with tilelang.graph() as g:
        with pytest.raises(tilelang.CallError, match="E0228"):
            op(z, x, y)
    assert not g.operations and not z.any()
    op(z, x, y)  # outside the block it runs
    torch.testing.assert_close(z, x + y, rtol=0, atol=0)


def test_an_unsafe_written_shared_parameter_is_mutated(mod) -> None:  # type: ignore[no-untyped-def]
    """`tally` adds into its `&` parameter `total` with an atomic: PyTorch must
    know the operator mutates it (or a compiled graph could reorder or drop
    the update)."""
    op = tilelang.torch_op(mod.tally, tiles={"z": [64]}, name=_name("tally"))
    assert "Tensor(a!) z, Tensor(b!) total) -> ()" in str(op._opoverload._schema)
    z, total = torch.ones(256), torch.zeros(1)
    op(z, total)
    assert float(total) == 256.0
    torch.library.opcheck(op, (torch.ones(256), torch.zeros(1)))


def test_a_functional_operator_with_a_number(mod) -> None:  # type: ignore[no-untyped-def]
    op = tilelang.torch_op(mod.axpy, tiles={"y": [64]}, outputs={"y": "x"}, name=_name("axpy"))
    assert str(op._opoverload._schema).endswith("(Tensor x, float a) -> Tensor")
    x = torch.randn(100)
    y = op(x, 2.0)
    assert y.shape == x.shape and y.dtype == torch.float32
    # `y` is fresh memory the kernel read (`y.load()`): only compare what it wrote with a
    # zero-initialised output through the mutating form
    z = torch.zeros(100)
    tilelang.torch_op(mod.axpy, tiles={"y": [64]}, name=_name("axpy_m"))(z, x, 2.0)
    torch.testing.assert_close(z, 2 * x, rtol=0, atol=0)
    torch.library.opcheck(op, (x, 3.0), test_utils=("test_schema", "test_faketensor"))


def test_a_number_of_a_type_parameter(mod) -> None:  # type: ignore[no-untyped-def]
    """`a: T` is a `Scalar`: an int for an integer `T`, a float for a float one."""
    op = tilelang.torch_op(mod.scale, tiles={"z": [32]}, outputs={"z": "x"}, name=_name("scale"))
    assert str(op._opoverload._schema).endswith("(Tensor x, Scalar a) -> Tensor")
    xi = torch.arange(70, dtype=torch.int32)
    torch.testing.assert_close(op(xi, 3), xi * 3, rtol=0, atol=0)
    xd = torch.randn(70, dtype=torch.float64)
    torch.testing.assert_close(op(xd, 0.5), xd * 0.5, rtol=0, atol=0)
    with pytest.raises(tilelang.CallError, match=r"is an integer \(`i32`\), but it is 2.5"):
        op(xi, 2.5)


def test_several_outputs_and_type_parameters(mod) -> None:  # type: ignore[no-untyped-def]
    op = tilelang.torch_op(
        mod.both, tiles={"s": [32], "d": [32]}, outputs={"s": "x", "d": "x"}, name=_name("both")
    )
    x, y = torch.randn(70, dtype=torch.float64), torch.randn(70, dtype=torch.float64)
    s, d = op(x, y)
    assert s.dtype == torch.float64 and d.shape == (70,)
    torch.testing.assert_close(s, x + y, rtol=0, atol=0)
    torch.testing.assert_close(d, x - y, rtol=0, atol=0)
    torch.library.opcheck(op, (x, y))


def test_fake_implementation_follows_the_signature(mod) -> None:  # type: ignore[no-untyped-def]
    from torch._subclasses.fake_tensor import FakeTensorMode

    op = tilelang.torch_op(mod.axpy, tiles={"y": [64]}, outputs={"y": "x"}, name=_name("axpy"))
    with FakeTensorMode():
        out = op(torch.empty(12345), 1.0)
        assert out.shape == (12345,) and out.dtype == torch.float32
        with pytest.raises(
            tilelang.CallError, match=r"E0502.*must hold `f32`, but it is a torch.float16"
        ):
            op(torch.empty(10, dtype=torch.float16), 1.0)
        with pytest.raises(tilelang.CallError, match="E0503"):
            op(torch.empty(3, 4), 1.0)
    # a mutated argument's fix keeps the converted copy (`y.to(..)` in the
    # call would take the results away: hrev round 9)
    inplace = tilelang.torch_op(mod.axpy, tiles={"y": [64]}, name=_name("axpym"))
    with FakeTensorMode():
        with pytest.raises(tilelang.CallError, match=r"E0502(.|\n)*help: convert it first and keep the "
                           r"copy, which the operator writes: `y = y.to\(torch.float32\)`"):
            inplace(torch.empty(10, dtype=torch.float16), torch.empty(10), 1.0)
        with pytest.raises(tilelang.CallError, match=r"E0502(.|\n)*help: convert it first: `x.to\(torch.float32\)`"):
            inplace(torch.empty(10), torch.empty(10, dtype=torch.float16), 1.0)
    head = tilelang.torch_op(mod.head, tiles={"z": [64]}, name=_name("head"))
    with (
        FakeTensorMode(),
        pytest.raises(tilelang.CallError, match=r"E0501.*is 65, but the kernel expects 64"),
    ):
        head(torch.empty(64), torch.empty(65))


def test_compiles_with_fullgraph_and_no_graph_breaks(mod) -> None:  # type: ignore[no-untyped-def]
    add = tilelang.torch_op(mod.add, tiles={"z": [64]}, outputs={"z": "x"}, name=_name("addf"))
    addm = tilelang.torch_op(mod.add, tiles={"z": [64]}, name=_name("addm"))

    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = add(x * 2, y)
        w = torch.empty_like(z)
        addm(w, z, y)  # mutated in place inside the graph
        return torch.relu(w) + 1

    x, y = torch.randn(500), torch.randn(500)
    explain = torch._dynamo.explain(f)(x, y)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x, y), torch.relu(2 * x + 2 * y) + 1)
    x2, y2 = torch.randn(777), torch.randn(777)  # another size: the fake impl gives the shape
    torch.testing.assert_close(compiled(x2, y2), torch.relu(2 * x2 + 2 * y2) + 1)


def test_a_wrong_call_fails_while_tracing(mod) -> None:  # type: ignore[no-untyped-def]
    add = tilelang.torch_op(mod.add, tiles={"z": [64]}, outputs={"z": "x"}, name=_name("addf"))
    compiled = torch.compile(lambda x, y: add(x, y), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"E0502.*`y` of kernel `add` must hold `f32`"):
        compiled(torch.randn(10), torch.randn(10, dtype=torch.float64))


def test_registration_errors(mod) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(tilelang.CallError, match="gives no tile shape for `&mut` parameter `z`"):
        tilelang.torch_op(mod.add)
    with pytest.raises(tilelang.CallError, match="no parameter `w`"):
        tilelang.torch_op(mod.add, tiles={"z": [64], "w": [1]})
    with pytest.raises(tilelang.CallError, match="only `&mut` parameters can be outputs"):
        tilelang.torch_op(mod.add, tiles={"z": [64]}, outputs={"x": "y"})
    name = _name("dup")
    tilelang.torch_op(mod.add, tiles={"z": [64]}, name=name)
    with pytest.raises(tilelang.CallError, match="registered already"):
        tilelang.torch_op(mod.add, tiles={"z": [64]}, name=name)


def test_the_autograd_example_trains_compiled() -> None:
    spec = importlib.util.spec_from_file_location(
        "torch_compile_example", ROOT / "examples/python/torch_compile.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules["torch_compile_example"] = example
    spec.loader.exec_module(example)
    losses = example.train(steps=6, device="cpu")
    assert losses[-1] < losses[0]
    x = torch.randn(40, 64, dtype=torch.float32, requires_grad=True)
    y = example.TileSiLU.apply(x)
    torch.testing.assert_close(y, torch.nn.functional.silu(x), rtol=1e-5, atol=1e-6)
