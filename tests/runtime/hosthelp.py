"""Run host code through the evaluator alone: parse, no type checker, and a
lowering stub that maps kernel names to the IR samples of `tilelang.ir.samples`.

It tests the evaluator's own logic independently of the checker and the
lowering; the full pipeline is exercised by `tests/run/` and the examples.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.diagnostics.model import DiagnosticSink, TileError
from tilelang.runtime.cpu import CpuDevice
from tilelang.runtime.host import HostEvaluator
from tilelang.runtime.launch import Runtime
from tilelang.sema.program import Program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse


@dataclass
class HostRun:
    out: str
    locals: dict[str, Any]
    error: TileError | None
    sources: SourceMap
    device: CpuDevice
    runtime: Runtime

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.error.diagnostics] if self.error else []

    def line_of(self, diag_index: int = 0) -> int:
        assert self.error is not None
        span = self.error.diagnostics[diag_index].primary_span
        assert span is not None
        return self.sources.get(span.file).line_col(span.start)[0]


def run_host(text: str, lowerings: dict[str, Callable[[dict], Any]] | None = None) -> HostRun:
    sources = SourceMap()
    sf = sources.add("test.tile", text)
    sink = DiagnosticSink()
    module = parse(sf, sink)
    assert not sink.diagnostics, [d.message for d in sink.diagnostics]
    out = io.StringIO()
    lowerings = lowerings or {}

    def lower(program: Any, name: str, inst: dict, facts: dict) -> Any:
        return lowerings[name](inst)

    device = CpuDevice(out=lambda s: out.write(s + "\n"))
    program = Program.unchecked(module, "test.tile")  # no side tables: the evaluator uses values
    runtime = Runtime(device, program, lower=lower)
    ev = HostEvaluator(program, module, sources, runtime, out=out)
    error = None
    try:
        ev.run_main(ev.find_main())
    except TileError as e:
        error = e
    return HostRun(out.getvalue(), ev.main_locals, error, sources, device, runtime)
