"""Finding, reading and parsing the modules a program `use`s.

`use std::nn::softmax;` looks in the stdlib (`tilelang.resources.stdlib_dir()`,
`std/nn.tile`); `use "other.tile";` and `use helpers::f;` look relative to the
importing file. Each file is read and parsed once per loader (a cache keyed by
resolved path), which is also what makes import cycles terminate.

A REPL or the LSP can subclass `ModuleLoader` and override `read` to serve
unsaved buffers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.abc import Traversable
from pathlib import Path

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceMap
from tilelang.syntax import ast


@dataclass(slots=True)
class LoadedFile:
    key: str  # the resolved path, as registered in the SourceMap
    module: ast.Module


class ModuleLoader:
    def __init__(self, std_root: Traversable | Path | None = None) -> None:
        if std_root is None:
            from tilelang.resources import stdlib_dir

            std_root = stdlib_dir()
        self.std_root = std_root
        self._cache: dict[str, LoadedFile | None] = {}

    # -- locating -------------------------------------------------------------
    def std_module_path(self, segments: list[str]) -> Traversable | None:
        """`["std", "nn"]` -> the stdlib file `std/nn.tile`, if it exists."""
        node: Traversable = self.std_root
        for seg in segments[:-1]:
            node = node / seg
        node = node / f"{segments[-1]}.tile"
        return node if node.is_file() else None

    def std_modules(self) -> list[str]:
        """Every stdlib module name (`std::nn`, ...), for "did you mean"."""
        out: list[str] = []

        def walk(node: Traversable, prefix: list[str]) -> None:
            if not node.is_dir():
                return
            for child in node.iterdir():
                if child.is_dir():
                    walk(child, [*prefix, child.name])
                elif child.name.endswith(".tile"):
                    out.append("::".join([*prefix, child.name[:-5]]))

        walk(self.std_root, [])
        return sorted(out)

    @staticmethod
    def user_module_path(importer: str, segments: list[str] | None = None,
                         file: str | None = None) -> Path:
        base = Path(importer).parent if importer and not importer.startswith("<") else Path.cwd()
        if file is not None:
            return base / file
        assert segments
        return base.joinpath(*segments[:-1]) / f"{segments[-1]}.tile"

    # -- reading --------------------------------------------------------------
    def read(self, path: Traversable | Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def load(self, path: Traversable | Path, sources: SourceMap,
             sink: DiagnosticSink, display: str | None = None) -> LoadedFile | None:
        """Read and parse `path` once; None when it cannot be read. `display`
        is the name diagnostics show (`<stdlib>/std/nn.tile`), default the path."""
        key = os.path.normpath(str(path))
        if key in self._cache:
            return self._cache[key]
        shown = display or key
        existing = sources.by_name(shown)
        text = existing.text if existing is not None else self.read(path)
        if text is None:
            self._cache[key] = None
            return None
        from tilelang.syntax.parser import parse

        sf = existing if existing is not None else sources.add(shown, text)
        loaded = LoadedFile(key, parse(sf, sink))
        self._cache[key] = loaded
        return loaded
