"""The persistent attention walk's key split as a second compiled form,
picked at launch (`TILEC_ATTN_SPLIT_FORMS`, issue 15).

With the split in the kernel (`passes/attention_split.py`) every launch
carries its code, behind a branch on the walk's `Split.on`; at D = 128 its
presence alone changed ptxas's schedule of the key loop and every row lost
2.4-5.9 % on the H200, the rows that never split included (RESULTS.md
2026-12-04 session 21:15). With the forms on, the attention pass compiles
the kernel without the split (the launch that does not split runs the
default kernel, byte for byte) and attaches a `SplitForm`: the walk's own
scalar ops that compute `Split.on` (`attention_tiles.walk_setup`: tensor
dims, scalar parameters, the launch's CTA count; the ops the split form
itself runs, so the two always agree). The runtime evaluates it on the host
(`SplitForm.splits`, with the interpreter's arithmetic: `interp/numeric.py`;
cached a launch shape) and, where the launch's walk splits, launches the
variant compiled with the fact (`TensorFacts.split_walk` on `param`): the
split walk alone, no copy of the whole tiles' walk beside it. Two forms:
"single" (single tiles' last round split, as the kernel's own split) and
"pairs" (`TILEC_ATTN_SPLIT_PAIRS`: a causal walk's pairs of a heavy and a
light tile, each piece a range of the pair's two tiles' keys one after the
other, `attention_tiles._pair_piece`).

The evaluation reads only what a launch fixes: a plan whose ops need
anything else (a loaded value, a loop) is no plan (`plan` returns None) and
the pass keeps today's kernel (`attention_split.form_request` builds it).
This module imports no CUDA library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tilelang.backend import env_switch
from tilelang.ir import nodes as ir

# "1" (unset): with the forms on, causal walks (pairs) split too, each piece a range of its pair's two tiles' keys
PAIRS_DEFAULT = "1"
# "0" (until measured on a GPU: loans were paused the session it was written, RESULTS.md 2026-12-05 h15p):
# the split as today (in the kernel where it fits, behind `Split.on`); "1": two forms, picked at launch
FORMS_DEFAULT = "0"
_CACHE_LIMIT = 256  # launch shapes remembered a plan (a dict lookup a launch after the first)


def switch(name: str, default: str) -> bool:
    """Environment variable `name` (unset: `default`), "0" or "1"."""
    return env_switch.mode(name, default, ("0", "1")) == "1"


def enabled() -> bool:
    """`TILEC_ATTN_SPLIT_FORMS`: "1" the split in a form of its own, picked at launch; "0" (unset: `FORMS_DEFAULT`)."""
    return switch("TILEC_ATTN_SPLIT_FORMS", FORMS_DEFAULT)


def pairs() -> bool:
    """`TILEC_ATTN_SPLIT_PAIRS`: with the forms on, "1" (unset: `PAIRS_DEFAULT`) the walks of pairs (causal) split
    too (the "pairs" form); "0" single tiles only."""
    return switch("TILEC_ATTN_SPLIT_PAIRS", PAIRS_DEFAULT)


class SplitForm:
    """A kernel's request (`GpuKernel.split`, `KernelABI.split`): launch the
    variant compiled with `TensorFacts.split_walk` = the form's kind on
    tensor `param` where `splits` names a kind. `ops` compute each kind's
    bool (`ons`: "single" tiles, "pairs") from `TensorDim`s, the scalar
    parameters (`scalars`: name -> value id), `NumBlocks` (the launch's
    CTAs on axis 0, 1 on the others) and `BlockId`s (0: the plan is the
    same in every CTA); at most one holds (a walk hands out single tiles or
    pairs)."""

    __slots__ = ("_memo", "ons", "ops", "param", "scalars", "tensors")

    def __init__(self, param: str, ops: tuple[object, ...], ons: tuple[tuple[str, ir.Value], ...],
                 scalars: tuple[tuple[str, int], ...], tensors: tuple[str, ...]) -> None:
        self.param, self.ops, self.ons, self.scalars, self.tensors = param, ops, ons, scalars, tensors
        self._memo: dict[tuple[object, ...], str] = {}

    def splits(self, dims: Mapping[str, tuple[int, ...]], values: Mapping[str, Any], ctas: int) -> str:
        """The form ("single", "pairs"; "": none) of a launch with tensor
        shapes `dims`, scalar arguments `values` (by parameter name) on
        `ctas` CTAs: the kind whose walk splits its last round."""
        key = (ctas, *(tuple(dims[t]) for t in self.tensors), *(_plain(values[n]) for n, _ in self.scalars))
        got = self._memo.get(key)
        if got is None:
            if len(self._memo) >= _CACHE_LIMIT:
                self._memo.clear()
            env: dict[int, Any] = {}
            from tilelang.interp.numeric import const_array

            for (_, vid), v in zip(self.scalars, key[1 + len(self.tensors):], strict=True):
                env[vid] = v
            for op in self.ops:  # (the scalar parameters' dtypes are the ops' operands': set at first use)
                _eval(op, env, dims, ctas, const_array)
            got = self._memo[key] = next((kind for kind, on in self.ons if bool(env[on.id])), "")
        return got

    def refine(self, facts: dict[str, Any], kind: str = "single") -> dict[str, Any]:
        """`facts` with the split form's fact (`kind`) on `param`."""
        import dataclasses

        from tilelang.backend.facts import TensorFacts

        f = facts.get(self.param, TensorFacts())
        return {**facts, self.param: dataclasses.replace(f, split_walk=kind)}

    def key(self, kind: str = "single") -> tuple[object, ...]:
        """What the split form's variant (`kind`) adds to its facts' key."""
        return ("split-walk", self.param, kind)

    def reads(self) -> tuple[str, ...]:
        """The scalar parameters the plan reads (a launcher that skips the
        plan must see the same values: `runtime/cuda_fast.FastLaunch` guards)."""
        return tuple(n for n, _ in self.scalars)


# the ops a plan may hold (with `ir.If` and `ir.Yield` of them): a launch's integers
SCALAR_OPS = (ir.Const, ir.Elementwise, ir.Cast, ir.BlockId, ir.NumBlocks, ir.TensorDim)


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _eval(op: object, env: dict[int, Any], dims: Mapping[str, tuple[int, ...]], ctas: int, const_array: Any) -> None:
    """One scalar op of a plan, on 0-d arrays with the interpreter's arithmetic."""
    import numpy as np

    from tilelang.interp.numeric import bitcast, cast, elementwise

    def val(v: ir.Value) -> Any:
        x = env[v.id]
        if not isinstance(x, np.ndarray):  # a scalar argument: its value in the parameter's dtype
            x = env[v.id] = const_array(x, v.dtype, ())
        return x

    match op:
        case ir.Const(result=r, value=x):
            env[r.id] = const_array(x, r.dtype, ())
        case ir.Elementwise(result=r, op=code, operands=xs):
            env[r.id] = np.asarray(elementwise(code, [val(x) for x in xs], op.operand_dtype))
        case ir.Cast(result=r, x=x, bits=bits):
            env[r.id] = np.asarray((bitcast if bits else cast)(val(x), x.dtype, r.dtype))
        case ir.BlockId(result=r):
            env[r.id] = const_array(0, r.dtype, ())
        case ir.NumBlocks(result=r, axis=a):
            env[r.id] = const_array(ctas if a == 0 else 1, r.dtype, ())
        case ir.TensorDim(result=r, tensor=t, axis=a):
            env[r.id] = const_array(dims[t][a], r.dtype, ())
        case ir.If(results=rs, cond=c, then=t, else_=e):
            region = t if bool(val(c)) else e
            for o in region.ops[:-1]:
                _eval(o, env, dims, ctas, const_array)
            y = region.ops[-1]
            assert isinstance(y, ir.Yield)
            for r, v in zip(rs, y.values, strict=True):
                env[r.id] = val(v)
        case _:
            raise AssertionError(f"a split plan holds an op it cannot evaluate: {type(op).__name__}")


__all__ = ["FORMS_DEFAULT", "PAIRS_DEFAULT", "SCALAR_OPS", "SplitForm", "enabled", "pairs"]
