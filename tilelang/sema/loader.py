"""Finding, reading and parsing the modules a program `use`s.

`use std::nn::softmax;` looks in the stdlib (`tilelang.resources.stdlib_dir()`,
`std/nn.tile`); `use "other.tile";` and `use helpers::f;` look relative to the
importing file. Each file is read and parsed once per loader (a cache keyed by
resolved path, the root included), which is also what makes import cycles
terminate: a module's own items are defined before its `use`s are followed,
so modules that import each other see each other's items. Files are read
with `tilelang.source.read_source` (bounded, UTF-8); why one could not be
read is kept for the diagnostic (`failure`).

A REPL or the LSP can subclass `ModuleLoader` and override `read` to serve
unsaved buffers.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceFile, SourceMap, SourceReadError, read_source
from tilelang.syntax import ast

if TYPE_CHECKING:
    from importlib.abc import Traversable  # importing it imports importlib.resources (slow)

#: folders where a source of no file also finds its modules (`user_module_path`): the REPL sets them to the
#: folders of its `:load`ed files for each check of the session (`repl/synth.check_session`)
SEARCH: ContextVar[tuple[Path, ...]] = ContextVar("tile_module_search", default=())
#: where the REPL's session program has the entry's shown expression (its tail, written without `;`), for
#: the checker to let a function named there be shown (`twice` at the prompt); -1: none (`twice;`)
SHOWN_AT: ContextVar[int] = ContextVar("tile_repl_shown_at", default=-1)


@dataclass(slots=True)
class LoadedFile:
    key: str  # the resolved path, as registered in the SourceMap
    module: ast.Module


def is_file(p: Traversable | Path) -> bool:
    """Whether `p` is a file; False for a name the system refuses to look up
    (longer than a file name may be: `use std::nnnn..;` of 5,000 letters)."""
    try:
        return p.is_file()
    except (OSError, ValueError):
        return False


class ModuleLoader:
    def __init__(self, std_root: Traversable | Path | None = None) -> None:
        if std_root is None:
            from tilelang.resources import stdlib_dir

            std_root = stdlib_dir()
        self.std_root = std_root
        self._cache: dict[str, LoadedFile | None] = {}
        self._failures: dict[str, str] = {}  # key -> why it could not be read

    # -- locating -------------------------------------------------------------
    def std_module_path(self, segments: list[str]) -> Traversable | None:
        """`["std", "nn"]` -> the stdlib file `std/nn.tile`, if it exists."""
        node: Traversable = self.std_root
        for seg in segments[:-1]:
            node = node / seg
        node = node / f"{segments[-1]}.tile"
        return node if is_file(node) else None

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

    def std_items(self) -> dict[str, list[str]]:
        """Every stdlib function, kernel and constant name -> the modules that
        define it (`softmax` -> [`std::nn`]), for the help of a call of a
        function that is not imported. Read off the files' text, once."""
        cached: dict[str, list[str]] | None = getattr(self, "_std_items", None)
        if cached is not None:
            return cached
        items: dict[str, list[str]] = {}
        consts: dict[str, list[str]] = {}
        arity: dict[str, int | None] = {}
        for module in self.std_modules():
            path = self.std_module_path(["std", *module.split("::")[1:]]) if module.startswith("std::") else None
            try:
                text = self.read(path) if path is not None else ""
            except OSError:
                continue
            for name, is_const, count in _std_defs(text):
                items.setdefault(name, []).append(module)
                if is_const:
                    consts.setdefault(name, []).append(module)
                else:
                    arity.setdefault(name, count)
        self._std_items = items
        self._std_consts = consts
        self._std_arity = arity
        return items

    def std_arity(self, name: str) -> int | None:
        """How many parameters the stdlib function `name` takes (its first definition's), or None."""
        self.std_items()
        return getattr(self, "_std_arity", {}).get(name)

    def std_constants(self) -> dict[str, list[str]]:
        """Every stdlib constant's name -> the modules that define it (`PI` -> [`std::math`])."""
        self.std_items()
        return self._std_consts

    def std_entry(self, name: str) -> str | None:
        """`tilec doc NAME` of a standard-library item (round 12: `tilec doc softmax` said "no entry ...; did you
        mean `max`?"): where it is, how to import it, its comment and its first line, as Markdown."""
        import re

        out = []
        for module in self.std_items().get(name, []):
            path = self.std_module_path(module.split("::"))
            text = self.read(path) if path is not None else ""
            m = re.search(rf"^(?:kernel\s+)?fn\s+{re.escape(name)}\b.*$|^const\s+{re.escape(name)}\b.*$", text, re.M)
            if m is None:
                continue
            lines = text[:m.start()].splitlines()
            comment: list[str] = []
            while lines and lines[-1].startswith("//"):
                comment.insert(0, lines.pop()[2:].strip())
            out.append(f"`{name}` is in the standard library, `{module}` (`stdlib/{module.replace('::', '/')}.tile`): "
                       f"`use {module}::{name};`\n\n```tile\n{m.group(0).rstrip(' {')}\n```\n\n"
                       + " ".join(comment))
        return "\n\n".join(out) or None

    def std_module_entry(self, name: str) -> str | None:
        """`tilec doc std`, `tilec doc std::math` or `tilec doc math` (round 21: "Tile has no `math`", Python's
        module): the standard library's modules, or one module's items and how to import them."""
        mods = self.std_modules()
        if name.strip() == "std":
            return ("The standard library, written in Tile under `stdlib/std/`: " + ", ".join(f"`{m}`" for m in mods)
                    + ". `tilec doc std::math` lists a module's items.")
        module = name.strip() if name.strip() in mods else f"std::{name.strip()}"
        if module not in mods:
            return None
        items = sorted(n for n, homes in self.std_items().items() if module in homes)
        subs = [m for m in mods if m.startswith(module + "::")]
        path = f"stdlib/{module.replace('::', '/')}.tile"
        held = ("holds " + ", ".join(f"`{n}`" for n in items) if items else
                "re-exports the items of " + ", ".join(f"`{m}`" for m in subs))
        return (f"`{module}` (`{path}`) {held}. Import one with `use {module}::NAME;` (or all, "
                f"`use {module}::*;`); `tilec doc NAME` prints it.")

    @staticmethod
    def user_module_path(importer: str, segments: list[str] | None = None,
                         file: str | None = None) -> Path:
        """The file a module path (`segments`) or a `use "file";` names, relative to the importing file; for a
        source of no file (`<repl>`, `<input>`), relative to the working directory, or else to a folder of
        `SEARCH` where it exists there (the folders of the files the REPL `:load`ed, whose `use`s name files
        beside them: round 22, `:load dir/prog.tile` looked for its modules in the working directory)."""
        def at(base: Path) -> Path:
            if file is not None:
                return base / file
            assert segments
            return base.joinpath(*segments[:-1]) / f"{segments[-1]}.tile"

        if importer and not importer.startswith("<"):
            return at(Path(importer).parent)
        here = at(Path.cwd())
        if not here.exists():
            for base in SEARCH.get():
                if at(base).exists():
                    return at(base)
        return here

    # -- reading --------------------------------------------------------------
    def read(self, path: Traversable | Path) -> str:
        """The text of a module file; raises `OSError` (`SourceReadError`
        when it is not UTF-8, too large, a directory or a device). Reads are
        bounded, and only regular files are modules (`use "/dev/stdin"`
        would wait for input)."""
        import stat

        if isinstance(path, Path) and path.exists():
            mode = path.stat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # read_source words a directory
                raise SourceReadError(str(path), "it is not a regular file")
        return read_source(path)

    def failure(self, path: Traversable | Path) -> str | None:
        """Why `load(path)` gave None, in words; None if the file does not exist."""
        return self._failures.get(os.path.normpath(str(path)))

    def register(self, name: str, module: ast.Module) -> str:
        """Make an already parsed file (the root) what `load` returns for its
        path, so an import cycle through it ends there; its key."""
        key = os.path.normpath(name)
        self._cache.setdefault(key, LoadedFile(key, module))
        return key

    def load(self, path: Traversable | Path, sources: SourceMap,
             sink: DiagnosticSink, display: str | None = None) -> LoadedFile | None:
        """Read and parse `path` once; None when it cannot be read. `display`
        is the name diagnostics show (`<stdlib>/std/nn.tile`), default the path."""
        key = os.path.normpath(str(path))
        if key in self._cache:
            return self._cache[key]
        shown = display or key
        existing = sources.by_name(shown)
        if existing is not None:
            text = existing.text
        else:
            try:
                text = self.read(path)
            except FileNotFoundError:
                self._cache[key] = None
                return None
            except OSError as e:
                self._failures[key] = e.strerror or type(e).__name__
                self._cache[key] = None
                return None
        sf = existing if existing is not None else sources.add(shown, text)
        loaded = LoadedFile(key, parse_module(sf, sink))
        self._cache[key] = loaded
        return loaded


def parse_module(sf: SourceFile, sink: DiagnosticSink) -> ast.Module:
    """`syntax.parser.parse(sf, sink)`, once a process for a clean file (`parser.parse_once`)."""
    from tilelang.syntax.parser import parse_once

    return parse_once(sf, sink)


# `_std_defs` by a module's text: each loader reads the std files again (an edited file is read as it is now),
# but a text is scanned once a process (20 ms for all of std: every compile whose help names a std function)
_STD_DEFS: dict[str, tuple[tuple[str, bool, int | None], ...]] = {}


def _std_defs(text: str) -> tuple[tuple[str, bool, int | None], ...]:
    """The functions, kernels and constants a std module's text defines, in order: (name, whether a constant,
    a function's parameter count)."""
    got = _STD_DEFS.get(text)
    if got is None:
        import re

        got = tuple((m.group(1) or m.group(2), bool(m.group(2)), None if m.group(2) else _param_count(text, m.end()))
                    for m in re.finditer(r"^(?:kernel\s+)?fn\s+([A-Za-z_]\w*)|^const\s+([A-Za-z_]\w*)", text, re.M))
        if len(_STD_DEFS) >= 256:
            _STD_DEFS.clear()
        _STD_DEFS[text] = got
    return got


def _param_count(text: str, at: int) -> int | None:
    """The number of parameters of the `fn` whose name ends at `at` in `text` (its generics skipped), by the
    commas at the parameter list's own depth; None where the text does not read as a signature."""
    i, n = at, len(text)
    while i < n and text[i].isspace():
        i += 1
    if i < n and text[i] == "<":
        depth = 0
        while i < n:
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
    while i < n and text[i].isspace():
        i += 1
    if i >= n or text[i] != "(":
        return None
    depth, count, seen = 0, 0, False
    for ch in text[i:]:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
            if depth == 0:
                return count + (1 if seen else 0)
        elif ch == "," and depth == 1:
            count += 1
            seen = False
            continue
        if depth >= 1 and not ch.isspace() and not (depth == 1 and ch == "("):
            seen = True
    return None

