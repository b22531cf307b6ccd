"""Why the Hopper GEMM pipeline (`pipeline.py`) refuses an operand, in the words of the user's program: the
block size that makes a loaded tile one wgmma's shared layouts take, and a batched GEMM's 3-D operand."""

from __future__ import annotations

from typing import Any

from tilelang.ir import nodes as ir

from .. import nodes as g

_Refusal = tuple[Any, str, str]


def _layout_help(v: ir.Value, body: dict[int, object], want_k_first: bool, which: str) -> str:
    """Which block size makes operand `v`'s loaded tile one `_operand` takes, where its shape is the reason
    (round 16: a [32, 32] tile of B with N contiguous, 64-byte rows, was told "BK a multiple of 16 (64 for an
    MN-major operand)"; BK = 64 kept the refusal, BN = 64 is what wgmma's 128-byte MN-major rows need)."""
    op = body.get(v.id)
    perm = op if isinstance(op, ir.Permute) else None
    op = body.get(op.x.id) if isinstance(op, ir.Permute) else op
    if not isinstance(op, ir.Load) or len(op.result.shape) != 2:
        return ""
    rows, cols = op.result.shape
    kmajor = (perm is None) != want_k_first
    axis = "K" if kmajor else ("M" if which == "a" else "N")
    gen = f"B{axis}"
    other = {"K": "BM" if which == "a" else "BN", "M": "BK", "N": "BK"}[axis]
    if kmajor and not (cols in (16, 32) or cols % 64 == 0):
        return f"{gen} = {cols}: a K-contiguous tile is read in rows of 16, 32 or a multiple of 64 elements"
    if not kmajor and cols % 64:
        return (f"{gen} = {cols}: `{which}`'s tile has {axis} contiguous ({cols * 2}-byte rows), which wgmma reads "
                f"in 128-byte rows: {gen} a multiple of 64 (or `{which}` stored transposed, K contiguous)")
    sw = 128 if cols * 2 >= 128 else cols * 2
    if (rows * sw) % 1024:
        return f"{other} = {rows}: a multiple of {1024 // sw} for rows of {cols} elements"
    return ""


def batched_operand(op: object, defs: dict[int, object], k: g.GpuKernel) -> _Refusal | None:
    """The refusal of a batched GEMM's operand, a tile of a 3-D tensor reshaped to a matrix (round 15: its
    help was "do the other work before or after the loop", which a batch's reshape cannot): the pipeline
    reads 2-D tensors, and a batch stacked as one (the batch in the tile index) takes it. sm_80's
    cp.async ring (`pipeline_sm80._batched`) takes the batched form, on sm_90a as the fallback."""
    if not isinstance(op, ir.Reshape) or len(op.result.shape) != 2:
        return None
    load = defs.get(op.x.id)
    if not isinstance(load, ir.Load) or k.tensor(load.tensor).rank != 3 or load.result.shape[0] != 1:
        return None
    return (op.span, f"an operand is a tile of the 3-D tensor `{load.tensor}` reshaped to a matrix; the pipeline "
            "reads tiles of 2-D tensors (sm_80's cp.async ring takes it)",
            "stack the batch as a 2-D tensor (`[B * M, K]`: `x.reshape([..])` on the host, a view in NumPy) and put "
            "the batch in the tile index, `p.load([b * (M / BM) + i, k])`, where M and K are multiples of the "
            "tiles (a tile must not reach into the next matrix)")


__all__ = ["_layout_help", "batched_operand"]
