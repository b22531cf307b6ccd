"""Helpers the passes share to rebuild regions (IR nodes are immutable).

- `map_ops(region, fn)`: rebuild `region`, replacing each op by `fn(op)` (a
  list of ops), after rebuilding the op's own nested regions the same way.
- `substitute(op, mapping)`: the op with every operand whose id is in
  `mapping` replaced (nested regions too); definitions are left alone.

Both work field by field on the frozen dataclasses, so they cover every op of
Tile IR and GPU IR without a case per op.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tilelang.ir import nodes as ir

from .. import nodes as g

_RESULT_FIELDS = ("result", "results")
_FIELDS: dict[type, tuple[str, ...]] = {}  # an op class's field names (`dataclasses.fields` builds a tuple a call)
_READ_FIELDS: dict[type, tuple[str, ...]] = {}  # those `substitute` maps: no result, no span


def _fields(t: type) -> tuple[str, ...]:
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t))  # type: ignore[arg-type]
    return names


def _read_fields(t: type) -> tuple[str, ...]:
    names = _READ_FIELDS.get(t)
    if names is None:
        names = _READ_FIELDS[t] = tuple(n for n in _fields(t) if n not in _RESULT_FIELDS and n != "span")
    return names


def _map_value(x: object, mapping: dict[int, ir.Value]) -> object:
    if isinstance(x, ir.Value):
        return mapping.get(x.id, x)
    if isinstance(x, tuple):
        return tuple(_map_value(y, mapping) for y in x)
    if isinstance(x, ir.Region):
        return substitute_region(x, mapping)
    if isinstance(x, g.Role):
        return dataclasses.replace(x, body=substitute_region(x.body, mapping))
    if isinstance(x, ir.Load):  # an op's own load (`g.AccLoad`): its offsets are the op's operands
        return substitute(x, mapping)
    return x


def substitute(op: object, mapping: dict[int, ir.Value]) -> object:
    if not mapping:
        return op
    changes = {}
    for name in _read_fields(type(op)):
        old = getattr(op, name)
        new = _map_value(old, mapping)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(op, **changes) if changes else op  # type: ignore[type-var]


def substitute_region(region: ir.Region, mapping: dict[int, ir.Value]) -> ir.Region:
    return ir.Region(region.args, tuple(substitute(op, mapping) for op in region.ops))  # type: ignore[misc]


def map_ops(region: ir.Region, fn: Callable[[object], list[object]]) -> ir.Region:
    out: list[object] = []
    for op in region.ops:
        out.extend(fn(with_regions(op, lambda r: map_ops(r, fn))))
    return ir.Region(region.args, tuple(out))  # type: ignore[arg-type]


def with_regions(op: object, fn: Callable[[ir.Region], ir.Region]) -> object:
    """`op` with each nested region replaced by `fn(region)`."""
    if type(op) in g.LEAF_OPS:  # (no field of such an op holds a region or a role)
        return op
    changes: dict[str, object] = {}
    for name in _fields(type(op)):
        x = getattr(op, name)
        if isinstance(x, ir.Region):
            changes[name] = fn(x)
        elif isinstance(x, tuple) and x and all(isinstance(r, g.Role) for r in x):
            changes[name] = tuple(dataclasses.replace(r, body=fn(r.body)) for r in x)
    return dataclasses.replace(op, **changes) if changes else op  # type: ignore[type-var]


def uses(region: ir.Region) -> dict[int, int]:
    """How many times each value id is read in `region` (nested regions included)."""
    count: dict[int, int] = {}
    for op in g.walk(region):
        for v in g.operands(op):
            count[v.id] = count.get(v.id, 0) + 1
    return count


__all__ = ["map_ops", "substitute", "substitute_region", "uses", "with_regions"]
