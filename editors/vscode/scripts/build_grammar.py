"""Compile syntaxes/tile.tmLanguage.yaml (authored) to tile.tmLanguage.json (shipped).

    python editors/vscode/scripts/build_grammar.py          # rewrite the JSON
    python editors/vscode/scripts/build_grammar.py --check  # exit 1 if the JSON is stale

The JSON is committed because VS Code and vscode-tmgrammar-test read it; the
test `tests/editors/test_textmate.py` runs the same comparison as `--check`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

SYNTAXES = Path(__file__).resolve().parent.parent / "syntaxes"
SOURCE = SYNTAXES / "tile.tmLanguage.yaml"
TARGET = SYNTAXES / "tile.tmLanguage.json"


def render() -> str:
    """The JSON text the YAML compiles to (stable: key order as authored)."""
    grammar = yaml.safe_load(SOURCE.read_text(encoding="utf-8"))
    return json.dumps(grammar, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.name} is stale: run python {Path(__file__).as_posix()}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
