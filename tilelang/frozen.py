"""`frozen`: frozen, slotted record classes that are cheap to define.

`@frozen` (identity equality, like `@dataclass(frozen=True, slots=True,
eq=False)`) and `@frozen(eq=True)` (value equality and hashing, like
`@dataclass(frozen=True, slots=True)`) make the same classes as the
standard decorator: `__init__` (defaults allowed), `__repr__`,
`__match_args__`, `__slots__`, assignment raising `FrozenInstanceError`,
pickling and copying, and `__dataclass_fields__`, so `dataclasses.fields`,
`dataclasses.replace` and `dataclasses.is_dataclass` work on them.

Why not `dataclasses.dataclass`: it compiles four or five small functions per
class and builds each slotted class twice. The AST and the semantic types are
about seventy classes that `tilec check` defines at every start, where that
was the largest single cost of start-up (`benchmarks/startup.py`). Here one
`__init__` is compiled per class and the other methods are shared: about ten
times faster to define, and instances are created a little faster too.

Only plain defaults are supported (no `field(...)`, no `default_factory`,
no `InitVar`/`ClassVar` annotations): a class that needs those uses
`dataclasses.dataclass`. If this Python's `dataclasses` lacks the internals
used to mark fields, `frozen` falls back to `dataclasses.dataclass`.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

_T = TypeVar("_T")

_FIELD_MARK = getattr(dataclasses, "_FIELD", None)


def _setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _repr(self: Any) -> str:
    parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__match_args__)
    return f"{type(self).__qualname__}({parts})"


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, n) for n in type(self).__match_args__)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for n, v in zip(type(self).__match_args__, state, strict=True):
        object.__setattr__(self, n, v)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _getstate(self) == _getstate(other)


def _hash(self: Any) -> int:
    return hash(_getstate(self))


def _make(cls: type[_T], eq: bool) -> type[_T]:
    if _FIELD_MARK is None:  # pragma: no cover - a Python whose dataclasses changed
        return dataclasses.dataclass(frozen=True, slots=True, eq=eq)(cls)
    own = inspect.get_annotations(cls)
    base_fields: dict[str, dataclasses.Field[Any]] = {}
    for base in reversed(cls.__mro__[1:]):
        base_fields.update(getattr(base, "__dataclass_fields__", {}))
    names = [*base_fields, *(n for n in own if n not in base_fields)]
    defaults: dict[str, Any] = {}
    for n in names:
        if n in cls.__dict__:
            value = cls.__dict__[n]
            if isinstance(value, dataclasses.Field):
                raise TypeError(f"{cls.__name__}.{n}: `frozen` takes plain defaults only")
            defaults[n] = value
        elif n in base_fields and base_fields[n].default is not dataclasses.MISSING:
            defaults[n] = base_fields[n].default
    seen_default = False
    for n in names:
        if n in defaults:
            seen_default = True
        elif seen_default:
            raise TypeError(f"{cls.__name__}: non-default field {n!r} follows a default one")

    params = ", ".join(f"{n}=_d_{n}" if n in defaults else n for n in names)
    body = "".join(f"    _set(self, {n!r}, {n})\n" for n in names) or "    pass\n"
    namespace: dict[str, Any] = {"_set": object.__setattr__}
    namespace.update({f"_d_{n}": v for n, v in defaults.items()})
    # generated from the class's own field names, never from input
    exec(f"def __init__(self{', ' if params else ''}{params}):\n{body}", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"

    fields: dict[str, dataclasses.Field[Any]] = {}
    for n in names:
        if n in base_fields:
            fields[n] = base_fields[n]
            continue
        f: dataclasses.Field[Any] = dataclasses.field(default=defaults.get(n, dataclasses.MISSING))
        f.name = n
        f.type = own[n]
        f._field_type = _FIELD_MARK  # type: ignore[attr-defined]
        fields[n] = f

    ns = {k: v for k, v in cls.__dict__.items()
          if k not in own and k not in ("__dict__", "__weakref__")}
    ns["__slots__"] = tuple(n for n in own if n not in base_fields)
    ns["__match_args__"] = tuple(names)
    ns["__dataclass_fields__"] = fields
    ns["__init__"] = init
    ns.setdefault("__repr__", _repr)
    ns["__setattr__"] = _setattr
    ns["__delattr__"] = _delattr
    ns["__getstate__"] = _getstate
    ns["__setstate__"] = _setstate
    if eq:
        ns.setdefault("__eq__", _eq)
        ns["__hash__"] = ns.get("__hash__") or _hash
    meta: Any = type(cls)
    new: type[_T] = meta(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    return new


@overload
def frozen(cls: type[_T], /) -> type[_T]: ...
@overload
def frozen(*, eq: bool = False) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, eq_default=False)
def frozen(cls: type[_T] | None = None, /, *, eq: bool = False) -> Any:
    """A frozen, slotted record class (see the module docstring)."""
    if cls is None:
        return lambda c: _make(c, eq)
    return _make(cls, eq)
