"""`tilelang.frozen`: the record classes of the AST and the semantic types
behave as `@dataclass(frozen=True, slots=True)` ones do."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from tilelang.dtypes import DType
from tilelang.frozen import frozen
from tilelang.sema.types import Dim, ScalarT, TileT
from tilelang.source import Span
from tilelang.syntax import ast


@frozen
class Node:
    name: str
    size: int = 4


@frozen(eq=True)
class Value:
    a: int
    b: tuple[int, ...] = ()

    def total(self) -> int:
        return self.a + sum(self.b)


def test_init_defaults_repr_and_match() -> None:
    n = Node("x")
    assert (n.name, n.size) == ("x", 4)
    assert repr(n) == "Node(name='x', size=4)"
    assert Node.__match_args__ == ("name", "size")
    match Node("y", 2):
        case Node(name, size):
            assert (name, size) == ("y", 2)
    with pytest.raises(TypeError):
        Node()  # type: ignore[call-arg]


def test_frozen_and_slotted() -> None:
    n = Node("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.name = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del n.size  # type: ignore[misc]
    assert not hasattr(n, "__dict__")


def test_identity_or_value_equality() -> None:
    assert Node("x") != Node("x") and Node("x") is not Node("x")
    assert Value(1, (2,)) == Value(1, (2,)) and hash(Value(1, (2,))) == hash(Value(1, (2,)))
    assert Value(1) != Value(2) and Value(1).total() == 1
    assert {Value(1), Value(1)} == {Value(1)}


def test_dataclasses_functions_work() -> None:
    v = Value(1, (2, 3))
    assert dataclasses.is_dataclass(v)
    assert [f.name for f in dataclasses.fields(v)] == ["a", "b"]
    assert dataclasses.replace(v, a=5) == Value(5, (2, 3))


def test_pickle_and_copy() -> None:
    v = Value(1, (2, 3))
    assert pickle.loads(pickle.dumps(v)) == v
    n = Node("x", 7)
    for clone in (copy.copy(n), copy.deepcopy(n), pickle.loads(pickle.dumps(n))):
        assert (clone.name, clone.size) == ("x", 7)


def test_field_objects_are_refused() -> None:
    with pytest.raises(TypeError):
        @frozen
        class Bad:
            xs: list[int] = dataclasses.field(default_factory=list)


def test_the_ast_and_the_types_use_it() -> None:
    span = Span(0, 0, 1)
    name = ast.Ident("x", span)
    assert dataclasses.fields(name)[0].name == "name"
    with pytest.raises(dataclasses.FrozenInstanceError):
        name.name = "y"  # type: ignore[misc]
    assert ScalarT(DType.F32) == ScalarT(DType.F32)
    assert hash(TileT(DType.F32, (Dim.const(4),))) == hash(TileT(DType.F32, (Dim.const(4),)))
