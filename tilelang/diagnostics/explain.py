"""Long explanations of error codes: `tilelang/diagnostics/explain/<CODE>.md`.

Each file is Markdown: a title line, a paragraph, a ```tile block with a
program that fails with exactly that code, then a fixed version in a second
```tile block. A fence may carry flags after `tile`: `gpu` (the example fails
only on a GPU: the meta-test runs it with `--device gpu`, and skips it without one), `run` (it fails only when
run), `ptx` (only when compiled to PTX). `tilec explain CODE` prints it; the registry meta-tests check
that every registered code has one and that its first example fails with it.

The Python API's codes (E08xx) have no Tile program to show: their
examples are ```python blocks, the first raising a `tilelang.APIError`
with that code, the second the fixed call. Their flags: `gpu` (needs a
CUDA device), `nogpu` (fails only where there is none), `torch` (needs
PyTorch), `without-torch` (runs as if PyTorch were not installed).

Invariant: the files ship inside the package (they sit under `tilelang/`), so
an installed wheel finds them through `importlib.resources`.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.abc import Traversable

_CODE = re.compile(r"^[EW]\d{4}$")
# ```tile, optionally followed by flags: ```tile gpu (the example needs a GPU
# to fail), ```tile run (it fails only when run), ```tile ptx (only when
# compiled to PTX). Without flags the range of the code decides.
_FENCE = re.compile(r"^```tile(?P<info>[ \t][^\n]*)?\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_PY_FENCE = re.compile(r"^```python(?P<info>[ \t][^\n]*)?\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)


def explain_dir() -> Traversable:
    return resources.files("tilelang.diagnostics") / "explain"


def normalize_code(text: str) -> str | None:
    """`e0302`, `E302` and `302` all mean `E0302`; None if it is no code shape."""
    t = text.strip().upper()
    if t.isdigit():
        t = "E" + t
    if len(t) >= 2 and t[0] in "EW" and t[1:].isdigit() and len(t) <= 5:
        t = t[0] + t[1:].zfill(4)
    return t if _CODE.match(t) else None


def is_registered(code: str) -> bool:
    from tilelang.diagnostics.codes import REGISTRY

    return code in REGISTRY


def explain_text(code: str) -> str | None:
    """The Markdown explanation of `code`, or None if there is none."""
    path = explain_dir() / f"{code}.md"
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8")


def explained_codes() -> list[str]:
    """Every code that has an explanation file, sorted."""
    d = explain_dir()
    if not d.is_dir():
        return []
    return sorted(
        p.name[:-3] for p in d.iterdir() if p.name.endswith(".md") and _CODE.match(p.name[:-3])
    )


def _blocks(fence: re.Pattern[str], text: str) -> list[tuple[frozenset[str], str]]:
    return [(frozenset((m.group("info") or "").split()), m.group("body")) for m in fence.finditer(text)]


def tile_blocks(text: str) -> list[tuple[frozenset[str], str]]:
    """The ```tile code blocks of an explanation, in order, with their flags."""
    return _blocks(_FENCE, text)


def python_blocks(text: str) -> list[tuple[frozenset[str], str]]:
    """The ```python code blocks of an explanation (the API's E08xx), in order,
    with their flags."""
    return _blocks(_PY_FENCE, text)


def tile_examples(text: str) -> list[str]:
    """The ```tile code blocks of an explanation, in order."""
    return [body for _, body in tile_blocks(text)]


def failing_example(code: str) -> str | None:
    """The first ```tile block of `code`'s explanation: fails with `code`."""
    text = explain_text(code)
    if text is None:
        return None
    blocks = tile_examples(text)
    return blocks[0] if blocks else None
