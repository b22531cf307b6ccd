"""Completion at the REPL prompt.

`completions(session, text)` gives the completions for the text before the
cursor: meta-commands and their arguments (files for `:load`, kernels for
`:ir`), methods after `.`, modules and items after `std::`, else the
session's items and variables, builtins, keywords and types.
"""

from __future__ import annotations

import os
import re
from typing import Any

from tilelang.repl.commands import COMMANDS
from tilelang.repl.core import SessionCore
from tilelang.repl.values import is_hidden


def completions(session: SessionCore, text: str) -> list[tuple[str, str]]:
    """Completions for the text before the cursor: (word, what it is),
    sorted; `word` replaces the identifier the text ends with."""
    from tilelang.highlight import BUILTIN_TYPES, DTYPES, KEYWORDS
    from tilelang.intrinsics.signatures import FUNCTIONS, METHODS

    line = text.rsplit("\n", 1)[-1]
    if text.lstrip().startswith(":") and "\n" not in text:
        head, space, rest = text.lstrip()[1:].partition(" ")
        if not space:
            return [(c, "command") for c in COMMANDS if c.startswith(head)]
        if head == "load":
            return _complete_path(rest)
        if head == "help":
            names = {*FUNCTIONS, *METHODS, "builtins"}
            names |= {it.name for it in session.items if it.name and not is_hidden(it.name)}
            return [(n, "help") for n in sorted(names) if n.startswith(rest.strip())]
        if head == "device":
            return [(d, "device") for d in ("cpu", "gpu", "auto") if d.startswith(rest.strip())]
        if head in ("ir", "llvm", "ptx"):
            kernels = [
                it.name
                for it in session.items
                if it.kind == "kernel" and it.name and not is_hidden(it.name)
            ]
            return [(k, "kernel") for k in sorted(kernels) if k.startswith(rest.strip())]
        line = rest
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)?$", line)
    word = (m.group(1) if m else None) or ""
    before = line[: len(line) - len(word)]
    found: dict[str, str] = {}
    if before.endswith("."):
        # the receiver's methods only, as the language server lists them
        # (`signatures.methods_for`): a host tensor has no `.load()`
        from tilelang.intrinsics.signatures import methods_for

        recv = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.$", before)
        kind = value_kind(session.env[recv.group(1)]) if recv and recv.group(1) in session.env \
            else None
        for sig in methods_for(kind, in_kernel=False):
            found[sig.name] = f"method: {sig.signature}"
    elif before.endswith("::"):
        return [(w, what) for w, what in _module_names(before) if w.startswith(word)]
    else:
        for it in session.items:
            if it.name is not None and not is_hidden(it.name):
                found[it.name] = it.kind
        for name in session.env:
            found[name] = f"variable: {session.types.get(name, '')}".rstrip(": ")
        for name, sig in FUNCTIONS.items():
            found.setdefault(name, f"builtin: {sig.signature}")
        for kw in KEYWORDS:
            found.setdefault(kw, "keyword")
        for ty in DTYPES + BUILTIN_TYPES:
            found.setdefault(ty, "type")
    return sorted((w, what) for w, what in found.items() if w.startswith(word) and w != word)


def value_kind(value: Any) -> str | None:
    """The receiver kind (`signatures.RECEIVERS`) of a session variable's value."""
    from tilelang.runtime.launch import Graph, Handle, Operation
    from tilelang.runtime.tensor import Partition, Tensor

    for cls, kind in ((Tensor, "tensor"), (Partition, "partition"), (Operation, "op"),
                      (Handle, "handle"), (Graph, "graph")):
        if isinstance(value, cls):
            return kind
    if isinstance(value, (bool, int, float)) or type(value).__module__ == "numpy":
        return "scalar"
    return None


def _module_names(before: str) -> list[tuple[str, str]]:
    """Completions after `std::` (the modules) or `std::nn::` (its items)."""
    from tilelang.resources import stdlib_dir

    m = re.search(r"((?:[A-Za-z_][A-Za-z0-9_]*::)+)$", before)
    if m is None:
        return []
    segments = m.group(1).split("::")[:-1]
    if segments[0] != "std":
        return []
    node: Any = stdlib_dir()
    for seg in segments:
        node = node.joinpath(seg)
    if len(segments) == 1:
        return sorted((p.name[:-5], "module") for p in node.iterdir() if p.name.endswith(".tile"))
    try:
        text = node.parent.joinpath(segments[-1] + ".tile").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return []
    items = re.findall(r"^(kernel fn|fn|const)\s+([A-Za-z_][A-Za-z0-9_]*)", text, re.MULTILINE)
    return sorted((name, kind) for kind, name in items)


def _complete_path(prefix: str) -> list[tuple[str, str]]:
    import glob

    prefix = prefix.strip()
    out = []
    for p in sorted(glob.glob(os.path.expanduser(prefix) + "*"))[:200]:
        if os.path.isdir(p):
            out.append((p + "/", "directory"))
        elif p.endswith(".tile"):
            out.append((p, "file"))
    return out
