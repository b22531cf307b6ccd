"""GPU IR's generic access (`backend/gpu/nodes.py`: `results`, `operands`, `regions`, `walk`) by exact type
(hback): each op's accessor taken from a table gives what the `match`es give, and `walk` (a stack of
iterators) visits what the recursive pre-order walk visits, in its order, on kernels with every kind of
region: the attention pipeline (warp-specialised roles, loops, ifs), sm_80's GEMM ring."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from tilelang import driver
from tilelang.backend.facts import TensorFacts
from tilelang.backend.gpu import nodes as g
from tilelang.backend.gpu.passes import lower_to_gpu
from tilelang.ir import nodes as ir

GOLDEN = Path(__file__).resolve().parent / "gpu_goldens"


def _recursive(region: ir.Region) -> Iterator[object]:  # the walk as it was: a generator a nesting level
    for op in region.ops:
        yield op
        for sub in g._regions(op):
            yield from _recursive(sub)


@pytest.mark.parametrize(("stem", "kernel", "arch"), [("attention", "attn", "sm_90a"), ("gemm", "gemm", "sm_80")])
def test_the_tables_agree_with_the_matches(stem: str, kernel: str, arch: str) -> None:
    result = driver.compile(GOLDEN / f"{stem}.tile", "ir", options=driver.Options(kernel=kernel))
    assert result.ok, result.diagnostics
    seen: set[type] = set()
    for k in result.output:
        for op in _recursive(k.body):  # the Tile IR kernel (its `Mma`s before the passes take them)
            seen.add(type(op))
            assert g.operands(op) == ir.op_operands(op) and g.results(op) == ir.op_results(op)
            assert g.regions(op) == ir.op_regions(op)
        facts = {p.name: TensorFacts.assumed(p.rank) for p in k.tensor_params}
        body = lower_to_gpu(k, arch, facts).body
        ops = list(_recursive(body))
        assert list(g.walk(body)) == ops  # the same ops, the same order (identity: frozen nodes compare by value)
        assert [id(op) for op in g.walk(body)] == [id(op) for op in ops]
        for op in ops:
            seen.add(type(op))
            assert g.results(op) == g._results(op)
            assert g.operands(op) == g._operands(op)
            assert g.regions(op) == g._regions(op)
        assert list(g.defined_values(body)) == list(_defined(body))
    if arch == "sm_90a":
        assert g.WarpSpecialize in seen  # roles' regions went through the table
    assert {ir.For, ir.Mma, ir.Elementwise, ir.Const, ir.Yield} <= seen


def _defined(region: ir.Region) -> Iterator[ir.Value]:  # `defined_values` through the matches
    yield from region.args
    for op in region.ops:
        yield from g._results(op)
        for sub in g._regions(op):
            yield from _defined(sub)


def test_every_op_class_has_its_accessors_in_the_tables() -> None:
    for t in (*ir.Op.__args__, *g.GPU_OPS):  # type: ignore[attr-defined]
        assert t in g._RESULTS and t in g._OPERANDS and t in g._REGIONS, t.__name__
    regional = {ir.For, ir.If, ir.While, g.WarpSpecialize}
    assert g.LEAF_OPS == set(g._RESULTS) - regional  # `walk` and `rewrite.with_regions` skip these whole
    for t in g.LEAF_OPS:  # no field of a leaf op holds a region (or a role's)
        for f in dataclasses.fields(t):
            assert "Region" not in str(f.type) and "Role" not in str(f.type), (t.__name__, f.name)
    for t in g.GPU_OPS:  # no node class is a subclass of another: the exact type is the match's class
        assert not any(issubclass(t, u) for u in (*ir.Op.__args__, *g.GPU_OPS) if u is not t)  # type: ignore[attr-defined]


def test_a_type_the_tables_lack_takes_the_matches() -> None:
    class Foreign:
        result = "r"

    op = Foreign()
    assert g.results(op) == ("r",)  # `ir.op_results`'s default
    with pytest.raises(TypeError):
        g.operands(op)
    assert g.regions(op) == ()
