"""Golden IR: the canonical text of the kernels of `ir_goldens/*.tile` (copies
of the examples, frozen here so that editing an example does not move this
test), at the instantiations their `main` launches them with. `pytest --bless`
rewrites the `.ir` goldens; review the diff like code (it is the contract the
backend compiles). To follow a changed example, copy it here and bless."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.ir.lower import lower_kernel
from tilelang.ir.printer import print_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

GOLDEN = Path(__file__).resolve().parent / "ir_goldens"
EXAMPLES = sorted(GOLDEN.glob("*.tile"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_ir_golden(path: Path, golden) -> None:  # type: ignore[no-untyped-def]
    sm = SourceMap()
    f = sm.add(str(path), path.read_text())  # `use std::..` still reads the stdlib
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
