"""The parser works on a fresh machine, where Lark has no table cache yet.

Lark caches its parse tables in the temp directory; a table built fresh holds
`Token` objects where one loaded from the cache holds plain strings (rule
aliases, for one). A parse that only worked with a warm cache once slipped
through every test on the development machine, so this test parses every
example in a subprocess whose temp directory is empty, and compares the AST
with the one this process builds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse
from tilelang.syntax.printer import format_ast

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from pathlib import Path
from tilelang.diagnostics.model import DiagnosticSink
from tilelang.source import SourceMap
from tilelang.syntax.parser import _tables, parse
from tilelang.syntax.printer import format_ast
for name in sys.argv[1:]:
    tree = repr(_tables().parse(Path(name).read_text(), "module", 0, None))
    assert "Token(" not in tree, (name, "a Lark Token leaked into the parse tree")
    sources = SourceMap()
    sf = sources.add(name, Path(name).read_text())
    sink = DiagnosticSink()
    module = parse(sf, sink)
    assert not sink.diagnostics, (name, sink.diagnostics)
    sys.stdout.write(format_ast(module, sources) + "\\0")
"""


def _local(paths: list[str]) -> list[str]:
    out = []
    for name in paths:
        sources = SourceMap()
        sf = sources.add(name, Path(name).read_text())
        sink = DiagnosticSink()
        out.append(format_ast(parse(sf, sink), sources))
        assert not sink.diagnostics
    return out


def test_fresh_tables_parse_every_example_like_cached_ones(tmp_path):
    paths = sorted(str(p) for p in (ROOT / "examples").glob("*.tile"))
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *paths], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    fresh = proc.stdout.split("\0")[:-1]
    assert fresh == _local(paths)
    # The first run saved the fast driver's tables; a second run thaws them
    # (without Lark) and must build the same trees.
    assert list(tmp_path.glob("tilec-parser-*.marshal"))
    again = subprocess.run([sys.executable, "-c", SCRIPT, *paths], env=env,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split("\0")[:-1] == fresh


PROBE = """
import sys
from tilelang.cli import run
status = run(["check", sys.argv[1]])
print("STATUS", status, "LARK", any(m == "lark" or m.startswith("lark.") for m in sys.modules))
"""


def test_a_program_that_parses_does_not_import_lark(tmp_path):
    good = tmp_path / "good.tile"
    good.write_text("fn main() {\n    let x = 1;\n    print(x);\n}\n")
    bad = tmp_path / "bad.tile"
    bad.write_text("fn main() {\n    let x = 1\n    print(x);\n}\n")
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))

    def probe(path):
        proc = subprocess.run([sys.executable, "-c", PROBE, str(path)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()[-3:]

    assert probe(good) == ["0", "LARK", "True"]    # a fresh machine: the tables are built
    assert probe(good) == ["0", "LARK", "False"]   # then read from their cache file
    assert probe(bad) == ["1", "LARK", "True"]     # an error is worded with Lark's help
