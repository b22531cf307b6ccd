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
    goes to `cubin` when given (for nvdisasm), otherwise it is discarded.
    ptxas runs once a process for the same PTX and architecture (its output
    is a function of them: a test that reads the report and the machine code,
    `sass`, of one kernel, and tests that assemble the same kernel, share it)."""
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    key = (arch, ptx)
    if key not in _ASSEMBLED:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "k.cubin"
            r = run_ptxas(ptx, arch, verbose=True, cubin=out)
            assert r.returncode == 0, r.stderr[-2000:]
            _ASSEMBLED[key] = (parse(r.stderr), out.read_bytes())
        while sum(len(k[1]) + len(v[1]) for k, v in _ASSEMBLED.items()) > 64 << 20 and len(_ASSEMBLED) > 1:
            del _ASSEMBLED[next(iter(_ASSEMBLED))]
    report, code = _ASSEMBLED[key]
    if cubin is not None:
        Path(cubin).write_bytes(code)
    return report


_ASSEMBLED: dict[tuple[str, str], tuple[PtxasReport, bytes]] = {}  # (arch, PTX) -> report, cubin


def sass(ptx: str, arch: str = "sm_90a") -> str:
    """The machine code ptxas makes of `ptx` for `arch`, as nvdisasm prints it
    (the test is skipped where ptxas or nvdisasm is missing)."""
    import subprocess
    import tempfile

    from gpu_probe import nvdisasm_path

    tool = nvdisasm_path()
    if tool is None:
        pytest.skip("nvdisasm is not installed")
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / "k.cubin"
        assemble(ptx, arch, cubin)
        return subprocess.run([tool, str(cubin)], check=True, capture_output=True, text=True).stdout


def hinted_copy_faults(code: str) -> list[str]:
    """The `LDGSTS` (cp.async) of `code` (nvdisasm's text) that ptxas 13.0
    encodes wrongly when the copy carries an L2 cache policy (`desc[URn]`):
    a shared address with a uniform-register part (`[R+URm]`: it then names
    registers it never wrote, an illegal instruction on the H200), or a
    descriptor register that no other instruction writes."""
    lines = code.splitlines()
    copies = [ln for ln in lines if "LDGSTS" in ln]
    bad = [ln.strip() for ln in copies if "desc[" in ln and re.search(r"LDGSTS\S*\s+\[[^\]]*\bUR\d+", ln)]
    written = " ".join(ln for ln in lines if "LDGSTS" not in ln)
    for d in sorted({m for ln in copies for m in re.findall(r"desc\[(UR\d+)\]", ln)}):
        if not re.search(rf"\b[A-Z0-9.]+\s+{d}\b,", written):
            bad.append(f"descriptor {d} is never written")
    return bad


def hgmma_desc_faults(code: str, hi: int = 0x40000040) -> list[str]:
    """The `HGMMA` (wgmma) of `code` (nvdisasm's text) whose shared-memory descriptors ptxas 13.0 built without
    their layout fields: the PTX adds a thread's offset (a warpgroup's columns) to a descriptor in 64 bits and
    then a constant holding SBO and the swizzle in its high word (`hi`, 0x40000040: 128-byte swizzle, SBO 1024),
    and ptxas made the pair by a `UIMAD.WIDE.U32` whose addend's high word is zero and never added `hi` (hwg: FA2's
    dK/dV wrong on the H100, right in llsim, which runs the LLVM IR). Each descriptor's high register is traced
    back through the straight-line code before the HGMMA (moves, 64-bit adds and wide multiply-adds of another
    pair) to where it was set: a constant must be `hi`, a carrying add must add `hi`, zero is a fault; a value
    from a regular register (`R2UR`) or from before the block is not followed."""
    ins: list[str | None] = []  # instruction text; None at a label (a block starts)
    for ln in code.splitlines():
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", ln)
        if m:
            ins.append(m.group(1))
        elif re.match(r"\s*\.?L\w*:", ln) or re.match(r"\s*\.L_x_\d+:", ln):
            ins.append(None)

    def writes(text: str) -> tuple[str, int, int] | None:  # (opcode, first register written, how many)
        m = re.match(r"(?:@!?U?P\w+\s+)?(U\w+(?:\.\w+)*)\s+UR(\d+)\b", text)
        if not m:
            return None
        op = m.group(1)
        return op, int(m.group(2)), 2 if ".64" in op or ".WIDE" in op else 1

    def high_ok(reg: int, at: int, depth: int = 0) -> bool:
        for j in range(at - 1, -1, -1):
            text = ins[j]
            if text is None or depth > 16:
                return True  # (set before the block: not followed)
            w = writes(text)
            if w is None or not w[1] <= reg < w[1] + w[2]:
                continue
            op, d, _ = w
            srcs = [s.strip() for s in text.split(",")[1:]]
            if op.startswith("UMOV"):
                s = srcs[0]
                if s == "URZ":
                    return False
                if s.startswith("UR"):
                    return high_ok(int(s[2:]), j, depth + 1)
                return int(s, 16) == hi
            if op.startswith("UIADD3.X"):
                return f"{hi:#x}" in text
            if ".64" in op and reg == d + 1:  # a 64-bit add: the high word of its first operand (+ a small immediate)
                return srcs[0].startswith("UR") and high_ok(int(srcs[0][2:]) + 1, j, depth + 1)
            if ".WIDE" in op and reg == d + 1:  # d:d+1 = a * b + c:c+1 (32-bit a, b: the product's high word is small)
                return srcs[2].startswith("UR") and high_ok(int(srcs[2][2:]) + 1, j, depth + 1)
            return True  # (another instruction: not followed)
        return True

    bad = []
    for i, text in enumerate(ins):
        m = re.search(r"HGMMA\S*\s+\S+\s+gdesc\[UR(\d+)\]", text or "")
        if m:
            n = int(m.group(1))
            bad += [f"{text}: {name} descriptor's high word (UR{n + k}) lacks {hi:#x}"
                    for name, k in (("A", 1), ("B", 3)) if not high_ok(n + k, i)]
    return bad
