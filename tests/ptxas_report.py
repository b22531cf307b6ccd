"""`ptxas -v` for tests: assemble PTX for an architecture and read the report.

Many backend tests assert what ptxas says about the PTX we emit: that it
assembles, how many registers each function takes, how many bytes it
spills. They share this one runner and parser instead of each carrying its
own `subprocess.run` and regular expressions.

    from ptxas_report import assemble
    r = assemble(ptx, "sm_90a")          # skips the test where ptxas is missing
    assert r.max_spill_stores == 0, r.text
    assert r.registers[0] * 256 * 3 <= 65536

`assemble` skips the calling test when ptxas is not on PATH and fails it
(with the tail of ptxas's output) when the PTX does not assemble.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tilelang.backend.target import ptxas_available, run_ptxas


@dataclass(frozen=True)
class PtxasReport:
    """What `ptxas -v` printed, and the numbers tests ask of it (one entry a
    function, in the order ptxas reports them)."""

    text: str
    registers: tuple[int, ...]
    spill_stores: tuple[int, ...]
    spill_loads: tuple[int, ...]

    @property
    def max_registers(self) -> int:
        return max(self.registers)

    @property
    def max_spill_stores(self) -> int:
        return max(self.spill_stores)

    def __contains__(self, needle: str) -> bool:  # `"C7515" in report`
        return needle in self.text


def parse(text: str) -> PtxasReport:
    """The numbers of a `ptxas -v` report (its stderr)."""
    regs = tuple(int(x) for x in re.findall(r"Used (\d+) registers", text))
    stores = tuple(int(x) for x in re.findall(r"(\d+) bytes spill stores", text))
    loads = tuple(int(x) for x in re.findall(r"(\d+) bytes spill loads", text))
    assert regs and stores, f"not a ptxas -v report:\n{text[-2000:]}"
    return PtxasReport(text, regs, stores, loads)


def assemble(ptx: str, arch: str = "sm_90a", cubin: Path | None = None) -> PtxasReport:
    """Assemble `ptx` for `arch` with `ptxas -v` (the test is skipped where
    ptxas is missing, and fails where the PTX does not assemble); the cubin
    goes to `cubin` when given (for nvdisasm), otherwise it is discarded."""
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    r = run_ptxas(ptx, arch, verbose=True, cubin=cubin)
    assert r.returncode == 0, r.stderr[-2000:]
    return parse(r.stderr)
