"""What the API's lower modules need of `Module` and `Kernel`, as protocols, so
that `call.py`, `fastpath.py`, `operation.py`, `signature.py` and `hostfn.py`
import neither `module.py` nor `kernel.py` (which import them)."""

from __future__ import annotations

from typing import Any, Protocol

from tilelang.runtime.launch import ParamSpec, Runtime
from tilelang.source import SourceMap, Span
from tilelang.syntax import ast


class ModuleLike(Protocol):
    name: str
    device: str
    _sources: SourceMap
    _checked: set[int]
    _ownership: Any  # the ownership checker's `OwnershipFacts` (`unsafe_writes`)

    def _where(self, span: Span, what: str = "") -> str: ...

    def _runtime(self, engine: str) -> Runtime: ...

    def _evaluator(self, engine: str | None = None) -> Any: ...

    def _engine_for_host(self) -> str: ...


class KernelLike(Protocol):
    module: ModuleLike
    decl: ast.FnDecl
    key: str
    explicit: tuple[Any, ...]
    specs: tuple[ParamSpec, ...]
    signature: str
    _kinds: tuple[str, ...]
    _keyer: Any  # `fastpath.keyer_for(_kinds)`
    _keyer_held: Any  # `fastpath.keyer_for(_kinds, held=False)`
    _mut_at: tuple[int, ...]  # the `&mut` parameters' positions
    _check_at_top: bool  # E0313 decided at the top of `__call__` (`temporaries.py`)
    _written_params: list[Any]  # `temporaries.find_unheld`'s parameters
    _plans: dict[tuple[Any, ...], Any]
    _memo: Any  # `fastpath.memo_for` of the last plan used, or None

    @property
    def __name__(self) -> str: ...
