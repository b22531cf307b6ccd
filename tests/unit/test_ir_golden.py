"""Golden IR: the canonical text of every example kernel, at the instantiation
its `main` launches it with. `pytest --bless` rewrites the goldens; review the
diff like code (it is the contract the backend compiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ir.lower import lower_kernel
from tilelang.ir.printer import print_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "ir_goldens"
EXAMPLES = sorted((ROOT / "examples").glob("*.tile"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_ir_golden(path: Path, golden) -> None:  # type: ignore[no-untyped-def]
    sm = SourceMap()
    f = sm.add(str(path), path.read_text())
    sink = DiagnosticSink()
    prog = check_program(parse(f, sink), sm, sink)
    assert not sink.has_errors
    texts: dict[str, str] = {}
    for call, inst in prog.instantiations.items():
        info = prog.callee_of(call)
        if info is None or not info.is_kernel:
            continue
        text = print_kernel(lower_kernel(prog, info.qualname, inst))
        texts.setdefault(text, text)  # one copy of each distinct instance
    assert texts
    golden(GOLDEN / f"{path.stem}.ir", "\n".join(sorted(texts)))
