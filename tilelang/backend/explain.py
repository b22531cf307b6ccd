"""Which path the backend took for a kernel, and why a faster one refused it.

A kernel's matrix products run on one of a few paths, whose speeds differ by up
to 50x on an H100 (`benchmarks/cliffs.py`): a block size or a spelling that a
pipeline does not take must not cost that silently. `path_of` names the path
of a lowered kernel (`GpuKernel`); the pipelines' matchers leave a note where
they refuse a loop (`PassContext.refuse`, `GpuKernel.notes`). Users see both
on request: `tilec emit FILE --stage gpu --arch sm_90a --explain` (the notes as
located diagnostics) and `TILEC_EXPLAIN=1` (`explain_lines`: a line a kernel
variant on stderr when a launch compiles it). Where the Hopper attention pipeline
takes a loop at a cost its blocks or spelling chose, a note says that too, and
what runs faster (`passes/attention_advice.py`). docs/reference.md, "Which path a
kernel takes".
"""

from __future__ import annotations

from typing import Any

from tilelang.ir import nodes as ir

# path key -> what it is, as a note says it
PATHS = {
    "attention-pipeline": "the Hopper attention pipeline (TMA K/V ring, wgmma, the softmax in registers)",
    "wgmma-pipeline": "the Hopper GEMM pipeline (TMA ring, warp-specialised wgmma)",
    "sm80-pipeline": "the cp.async ring with ldmatrix + mma.sync (sm_80's pipeline)",
    "products-pipeline": "cp.async rings with ldmatrix + mma.sync, several products a loop in registers",
    "products-wgmma-pipeline": "cp.async rings with warpgroup MMAs (wgmma), several products a loop in registers",
    "fma-pipeline": "the cp.async ring with register-blocked FMAs (no tensor cores)",
    "mma.sync-ring": "ldmatrix + mma.sync, the loop's loads through per-thread cp.async rings",
    "mma.sync": "ldmatrix + mma.sync with no pipeline",
    "fma": "scalar FMAs (no tensor cores)",
    "generic": "no matrix product (blocked layouts, registers)",
}


def path_of(gk: Any) -> str:
    """The key of `PATHS` for lowered kernel `gk`: the fastest machinery its products run on."""
    from tilelang.backend.gpu import nodes as g

    ops = list(g.walk(gk.body))
    kinds = {type(op) for op in ops}
    if g.WarpSpecialize in kinds and g.WgmmaRegA in kinds:
        return "attention-pipeline"
    if g.WarpSpecialize in kinds and g.Wgmma in kinds:
        return "wgmma-pipeline"
    if g.SmemDot in kinds:
        return "sm80-pipeline"
    if g.RingMma in kinds:
        return "products-pipeline"
    if g.CpAsyncTile in kinds and (g.Wgmma in kinds or g.WgmmaRegA in kinds):
        return "products-wgmma-pipeline"
    if g.SmemFma in kinds:
        return "fma-pipeline"
    engines = {op.engine for op in ops if isinstance(op, g.DotOp)}
    if any(isinstance(op, ir.For) and any(isinstance(x, g.RingRead) for x in op.body.ops)
           and any(isinstance(x, g.DotOp) and x.engine == "mma.sync" for x in op.body.ops) for op in ops):
        return "mma.sync-ring"  # (`passes/stream_mma.py`)
    if "mma.sync" in engines:
        return "mma.sync"
    if "fma" in engines or any(isinstance(op, ir.Mma) for op in ops):
        return "fma"
    return "generic"


def stencils(gk: Any) -> int:
    """How many of lowered kernel `gk`'s f32 products by a band matrix made of aranges the code generator runs
    as the stencil they are (`codegen/shift_dot.py`: a shift, a filter's taps on diagonals)."""
    from types import SimpleNamespace

    from tilelang.backend.codegen import shift_dot
    from tilelang.backend.gpu import nodes as g
    from tilelang.dtypes import DType

    if not shift_dot.enabled():
        return 0
    em = SimpleNamespace(k=gk)
    return sum(1 for op in g.walk(gk.body)
               if (isinstance(op, ir.Mma) or (isinstance(op, g.DotOp) and op.engine == "fma"))
               and op.a.dtype is DType.F32 and (shift_dot.band_of(em, op.b) or shift_dot.band_of(em, op.a)))


def gathers(gk: Any) -> int:
    """How many of lowered kernel `gk`'s f32 products by a one-hot matrix of index comparisons (not a band:
    `stencils`) the code generator runs as the gather they are (`codegen/gather_dot.py`)."""
    from types import SimpleNamespace

    from tilelang.backend.codegen import gather_dot
    from tilelang.backend.gpu import nodes as g

    if not gather_dot.enabled():
        return 0
    em = SimpleNamespace(k=gk)
    return sum(1 for op in g.walk(gk.body)
               if (isinstance(op, ir.Mma) or (isinstance(op, g.DotOp) and op.engine == "fma"))
               and gather_dot.gather_of(em, op) is not None)


def describe(gk: Any) -> str:
    """The path of lowered kernel `gk` as its `--explain` / `TILEC_EXPLAIN` line says it: the path, its stages
    and warps, and its products run as stencils."""
    path = path_of(gk)
    n = stencils(gk) if path in ("fma", "fma-pipeline") else 0
    h = gathers(gk) if path in ("fma", "fma-pipeline") else 0
    return (PATHS[path] + (f", {gk.num_stages} stages" if _staged(path) else "")
            + (f", {n} product{'s' if n > 1 else ''} by a band matrix as {'stencils' if n > 1 else 'a stencil'}"
               if n else "")
            + (f", {h} product{'s' if h > 1 else ''} by a one-hot matrix as {'gathers' if h > 1 else 'a gather'}"
               if h else "")
            + f", {gk.num_warps} warp{'s' if gk.num_warps != 1 else ''}" + _split(gk, path) + _against_hints(gk, path)
            + _streamed(gk))


def _streamed(gk: Any) -> str:
    """"; loads S - 1 tiles ahead ..." in the variant a launch of few bytes in flight runs (`stream_rule`)."""
    stages = next((f.stream for f in getattr(gk, "facts", {}).values() if f.stream), ())
    ahead = ", ".join(str(s - 1) for s in stages if s)
    return f"; loads {ahead} tiles ahead (the launch has few bytes in flight: `TILEC_STREAM_AUTO`)" if ahead else ""


def _against_hints(gk: Any, path: str) -> str:
    """Where the kernel runs with other warps or stages than its `#[hints(..)]` asked (a pipeline's shape, its
    registers or shared memory decided): " (the hints asked `num_warps = 4`)" (hrev29: a hint given and not
    honoured said nothing)."""
    src = getattr(gk, "source", None)
    hints = getattr(src, "hints", ())
    asked = [f"`num_warps = {src.num_warps}`" for _ in (1,) if "num_warps" in hints and src.num_warps != gk.num_warps]
    if "stages" in hints and _staged(path) and src.num_stages > 0 and src.num_stages != gk.num_stages:
        asked.append(f"`stages = {src.num_stages}`")
    return f" (the hints asked {' and '.join(asked)})" if asked else ""


def _staged(path: str) -> bool:
    """The path's kernels run a ring of `GpuKernel.num_stages` stages."""
    return path.endswith("pipeline") or path == "mma.sync-ring"


def _split(gk: Any, path: str) -> str:
    """" (R row blocks x C column parts)" where the products pipeline's warps split the columns too."""
    cols = max((getattr(x, "cols", 1) for x in gk.layouts.values()), default=1) if path.startswith("products") else 1
    return f" ({gk.num_warps // cols} row blocks x {cols} column parts)" if cols > 1 else ""


def refusals(gk: Any) -> list[Any]:
    """The notes of lowered kernel `gk` that say why a pipeline refused a loop (`PassContext.refuse`), not the
    ones on a loop a pipeline took at a cost (`PassContext.advise`)."""
    return [n for n in gk.notes if "does not take this loop" in n.message]


def enabled() -> bool:
    """`TILEC_EXPLAIN=1`: each kernel variant a launch compiles says its path and notes on stderr."""
    from tilelang.backend.env_switch import flag

    return flag("TILEC_EXPLAIN", "0")


def explain_lines(gk: Any) -> list[str]:
    """`TILEC_EXPLAIN`'s lines for lowered kernel `gk`: its path, then each note (with its help)."""
    inst = ", ".join(f"{k} = {v}" for k, v in (*getattr(getattr(gk, "source", gk), "type_args", ()),
                                                *gk.instantiation))
    head = f"tilec: kernel `{gk.name}`" + (f" [{inst}]" if inst else "") + f" on {gk.arch}"
    lines = [f"{head}: {describe(gk)}"]
    for n in gk.notes:
        lines.append(f"  note: {n.message}")
        lines += [f"  help: {h}" for h in n.help]
    return lines


__all__ = ["PATHS", "describe", "enabled", "explain_lines", "path_of", "refusals", "stencils"]
