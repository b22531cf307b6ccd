"""The error-code registry: every code tilec can emit, in one place.

Codes are grouped by range, one module per range, each owned by one stage:

    E00xx syntax          (codes/syntax.py)
    E01xx names and items (codes/names.py)
    E02xx types, shapes   (codes/types.py)
    E03xx host ownership  (codes/ownership.py)
    E04xx kernel safety   (codes/kernel.py)
    E05xx launch checks   (codes/launch.py)
    E06xx codegen limits  (codes/codegen.py)
    E07xx run-time errors (codes/runtime.py)
    E08xx Python API      (codes/api.py)
    W00xx warnings        (codes/warnings.py)

A code is never reused or deleted; a retired one stays with `retired=True`.
Each code has a long explanation in `tilelang/diagnostics/explain/<CODE>.md`
whose first ```tile block is an example that fails with exactly that code
(```python for the API's E08xx: it raises a `tilelang.APIError` with it).
"""

from __future__ import annotations

from tilelang.frozen import frozen


@frozen(eq=True)
class ErrorCode:
    code: str
    name: str
    summary: str
    retired: bool = False


REGISTRY: dict[str, ErrorCode] = {}


def define(code: str, name: str, summary: str, *, retired: bool = False) -> str:
    """Register a code and return its string (the value diagnostics carry)."""
    if code in REGISTRY:
        raise ValueError(f"error code {code} defined twice")
    REGISTRY[code] = ErrorCode(code, name, summary, retired)
    return code


def _load_all() -> None:
    # Importing each range module registers its codes.
    from tilelang.diagnostics.codes import (  # noqa: F401
        api,
        codegen,
        kernel,
        launch,
        names,
        ownership,
        runtime,
        syntax,
        types,
        warnings,
    )


_load_all()
