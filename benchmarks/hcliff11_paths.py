"""hcliff11's natural kernels (`benchmarks/hcliff11.tile`, written the way the docs and examples/ show) on the GPU
against their PyTorch equivalents, and, on the CPU, what their sm_90a code looks like.

    python benchmarks/hcliff11_paths.py                 # GPU: every case, one line each (ours, torch, ratio, err)
    python benchmarks/hcliff11_paths.py --only softmax  # the cases whose name holds the text
    python benchmarks/hcliff11_paths.py --dry           # CPU: each case's warps, ptxas registers / spills, and the
                                                        # PTX's global loads and stores by width (no GPU)

`ratio` = torch time / ours (> 1: faster than torch). A line's GB/s counts each tensor's bytes once (read or
written). The switches a case's kernel is compiled under are read when the kernel is lowered: an arm a process.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

import user_paths  # noqa: E402
from user_paths import report, timed  # noqa: E402

SRC = (ROOT / "benchmarks" / "hcliff11.tile").read_text(encoding="utf-8")
KERNELS = SRC[:SRC.index("fn main()")]


@dataclass
class Case:
    """A launch: the kernel, its generics (name, value: the Python API's order), its arguments ("t", name, dtype,
    shape, tile or None) / ("s", value), the bytes it moves and what torch runs (`_torch`)."""

    name: str
    kernel: str
    generics: tuple[tuple[str, Any], ...]
    args: list[tuple[Any, ...]]
    torch: str
    extra: dict[str, Any] = field(default_factory=dict)

    def nbytes(self) -> int:
        size = {"f32": 4, "i32": 4, "f16": 2, "bf16": 2}
        total = 0
        for a in self.args:
            if a[0] == "t" and not (self.torch == "embed" and a[1] == "table"):
                n = 1
                for d in a[3]:
                    n *= d
                total += n * size[a[2]]
        if self.torch == "embed":  # the rows read
            total += self.args[0][3][0] * self.args[0][3][1] * 2
        return total


def cases() -> list[Case]:
    out = []
    for n, m in ((1024, 16384), (8192, 4096), (65536, 256)):
        out.append(Case(f"softmax {n // 1024}k", "softmax_rows", (("N", n),),
                        [("t", "y", "f32", (m, n), (1, n)), ("t", "x", "f32", (m, n), None)], "softmax"))
    out.append(Case("transpose", "transpose", (("BM", 32), ("BN", 64)),
                    [("t", "y", "f32", (8192, 8192), (64, 32)), ("t", "x", "f32", (8192, 8192), None)], "transpose"))
    t, n = 16384, 4096
    out.append(Case("add_rmsnorm", "add_rmsnorm", (("BM", 1), ("N", n)),
                    [("t", "h", "f16", (t, n), (1, n)), ("t", "y", "f16", (t, n), (1, n)), ("t", "x", "f16", (t, n), None),
                     ("t", "r", "f16", (t, n), None), ("t", "w", "f16", (n,), None)], "add_rmsnorm"))
    out.append(Case("dwconv", "dwconv", (("K", 4), ("C", 2048)),
                    [("t", "y", "f16", (t, 2048), (1, 2048)), ("t", "x", "f16", (t, 2048), None),
                     ("t", "w", "f32", (4, 2048), None)], "dwconv"))
    out.append(Case("cumsum", "row_cumsum", (("BM", 1), ("N", n)),
                    [("t", "y", "f32", (t, n), (1, n)), ("t", "x", "f32", (t, n), None)], "cumsum"))
    out.append(Case("argmax", "vocab_argmax", (("BV", 32768),),
                    [("t", "idx", "i32", (256,), (1,)), ("t", "logits", "f32", (256, 32000), None)], "argmax"))
    out.append(Case("embed", "embed", (("D", 1024),),
                    [("t", "out", "f16", (t, 1024), (1, 1024)), ("t", "table", "f16", (50000, 1024), None),
                     ("t", "ids", "i32", (t,), None)], "embed"))
    out.append(Case("gemv", "gemv", (("BM", 64), ("BK", 64), ("NB", 4)),
                    [("t", "y", "f16", (8192, 4), (64, 4)), ("t", "w", "f16", (8192, 8192), None),
                     ("t", "x", "f16", (8192, 4), None)], "gemv"))
    out.append(Case("bias_silu", "bias_silu_mul", (("BM", 64), ("BN", 64)),
                    [("t", "y", "bf16", (t, n), (64, 64)), ("t", "x", "bf16", (t, n), None), ("t", "b", "bf16", (n,), None),
                     ("t", "g", "bf16", (t, n), None)], "bias_silu"))
    out.append(Case("col_sum", "col_sum", (("BM", 32), ("BN", 128)),
                    [("t", "s", "f32", (8192,), (128,)), ("t", "x", "f32", (8192, 8192), None)], "col_sum"))
    return out


_MOD: list[Any] = []


def module() -> Any:
    import tilelang

    if not _MOD:
        _MOD.append(tilelang.compile(KERNELS))
    return _MOD[0]


def lowered(c: Case) -> tuple[Any, Any]:
    """The case's GPU kernel (sm_90a, the launch's facts) and its PTX."""
    from tilelang.backend import compile_kernel, lower_gpu
    from tilelang.backend.facts import TensorFacts
    from tilelang.dtypes import DType
    from tilelang.ir.lower import lower_kernel
    from tilelang.runtime.launch import ArgFact

    names = [s.name for s in getattr(module(), c.kernel).specs]
    facts = {names[i]: ArgFact(DType.parse(a[2]), a[3], a[4]) for i, a in enumerate(c.args) if a[0] == "t"}
    kir = lower_kernel(module()._program, c.kernel, dict(c.generics), facts)
    tf = {names[i]: TensorFacts.of_launch(256, a[3]) for i, a in enumerate(c.args) if a[0] == "t"}
    return lower_gpu(kir, "sm_90a", tf), compile_kernel(kir, "sm_90a", tf).ptx


def ptx_counts(ptx: str) -> str:
    """The PTX's global loads and stores by width (`ld.global.v4.f32` -> `ld v4.f32`), counted as written."""
    seen: dict[str, int] = {}
    for m in re.finditer(r"\b(ld|st)\.global(?:\.[a-z0-9_]+)*?((?:\.v[248])?\.[bfus]\d+)\s", ptx):
        key = f"{m.group(1)}{m.group(2)}"
        seen[key] = seen.get(key, 0) + 1
    rings = len(re.findall(r"\bcp\.async\.c[ag]\.shared\.global", ptx))
    return " ".join(f"{k}:{v}" for k, v in sorted(seen.items())) + (f" cp.async:{rings}" if rings else "") or "-"


def dry(names: list[str]) -> None:
    from cliffs import path_of

    for c in cases():
        if c.name not in names:
            continue
        try:
            gk, ptx = lowered(c)
            regs = ""
            if shutil.which("ptxas"):
                from ptxas_report import assemble

                r = assemble(ptx, "sm_90a")
                regs = f"regs {max(r.registers)} spills {max(r.spill_stores)}/{max(r.spill_loads)} B"
            print(f"{c.name:12s} {path_of(gk)}  {regs}  {ptx_counts(ptx)}", flush=True)
        except Exception as e:  # say so and go on
            print(f"{c.name:12s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
                  flush=True)


def _tensors(c: Case) -> dict[str, Any]:
    import torch

    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32}
    g = torch.Generator(device="cuda").manual_seed(11)
    out: dict[str, Any] = {}
    for a in c.args:
        if a[0] != "t":
            continue
        _, name, d, shape, tile = a
        if tile is not None:
            out[name] = torch.zeros(shape, device="cuda", dtype=dt[d])
        elif name == "ids":
            out[name] = torch.randint(0, 50000, shape, device="cuda", generator=g, dtype=torch.int32)
        else:
            out[name] = torch.randn(shape, device="cuda", generator=g, dtype=torch.float32).to(dt[d])
    return out


def _torch(c: Case, t: dict[str, Any]) -> tuple[Any, Any]:
    """What a PyTorch user writes for the case (a function), and the output(s) to compare (ours, want)."""
    import torch
    import torch.nn.functional as F

    kind = c.torch
    if kind == "softmax":
        return (lambda: torch.softmax(t["x"], 1)), lambda: (t["y"], torch.softmax(t["x"], 1))
    if kind == "transpose":
        return (lambda: t["x"].t().contiguous()), lambda: (t["y"], t["x"].t())
    if kind == "add_rmsnorm":
        n = t["x"].shape[1]

        def ref() -> Any:
            h = t["x"] + t["r"]
            return h, F.rms_norm(h, (n,), t["w"], 1e-6)
        return ref, lambda: (t["y"].float(), F.rms_norm((t["x"].float() + t["r"].float()), (n,), t["w"].float(), 1e-6))
    if kind == "dwconv":
        k = t["w"].shape[0]
        xt = t["x"].t().contiguous()[None]  # torch's own layout [1, C, T], made once (not timed)
        wt = t["w"].t().flip(1).contiguous()[:, None, :].half()  # [C, 1, K]: conv1d correlates, so taps reversed

        def ref() -> Any:
            return F.conv1d(xt, wt, padding=k - 1, groups=xt.shape[1])[..., :xt.shape[2]]
        return ref, lambda: (t["y"].float(), ref()[0].t().float())
    if kind == "cumsum":
        return (lambda: torch.cumsum(t["x"], 1)), lambda: (t["y"], torch.cumsum(t["x"], 1))
    if kind == "argmax":
        return (lambda: torch.argmax(t["logits"], 1)), lambda: (t["idx"].float(), torch.argmax(t["logits"], 1).float())
    if kind == "embed":
        return (lambda: F.embedding(t["ids"], t["table"])), lambda: (t["out"].float(), F.embedding(t["ids"], t["table"]).float())
    if kind == "gemv":
        return (lambda: t["w"] @ t["x"]), lambda: (t["y"].float(), t["w"].float() @ t["x"].float())
    if kind == "bias_silu":
        return ((lambda: F.silu(t["x"] + t["b"]) * t["g"]),
                lambda: (t["y"].float(), (F.silu(t["x"].float() + t["b"].float()) * t["g"].float())))
    if kind == "col_sum":
        return (lambda: t["x"].sum(0)), lambda: (t["s"], t["x"].sum(0))
    raise ValueError(kind)


def run(names: list[str], reps: int) -> None:
    import tilelang

    for c in cases():
        if c.name not in names:
            continue
        try:
            t = _tensors(c)
            kern = getattr(module(), c.kernel)[tuple(v for _, v in c.generics)]
            args = [tilelang.partition(t[a[1]], list(a[4])) if a[0] == "t" and a[4] is not None
                    else t[a[1]] if a[0] == "t" else a[1] for a in c.args]
            ref, check = _torch(c, t)
            if (tt := timed(c.name, lambda kern=kern, args=args: kern(*args).launch(), ref, reps, width=12)) is None:
                continue
            ours, want = check()
            err = float((ours.float() - want.float()).abs().max() / max(float(want.float().abs().max()), 1e-30))
            report(c.name, *tt, err, what=f"({c.nbytes() / tt[0] / 1e6:.0f} GB/s) torch", width=12)
        except Exception as e:  # say so and go on
            print(f"{c.name:12s} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}",
                  flush=True)


def main(argv: list[str] | None = None) -> int:
    return user_paths.main(argv, [c.name for c in cases()], run, dry)


if __name__ == "__main__":
    sys.exit(main())
