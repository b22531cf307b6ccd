"""What a kernel's `#[autotune(...)]` attribute asks for: the candidate values
of const generics and hints, and the parameters the records are keyed on.

    #[autotune(BM = [64, 128], BN = [64, 128], num_warps = [4, 8], stages = [2, 3], key = [a, b])]
    kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<f32, [BM, BN]>, ...)

The type checker (`sema/items.py`, `_check_autotune`) has accepted the
attribute, so this module only reads it. A candidate (`Config`) gives every
tuned name one value; the space is the product of the lists, less the
combinations that disagree with what the call fixes (an explicit generic, a
tile dimension the caller gave).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from tilelang.frozen import frozen
from tilelang.syntax import ast

# the hints `#[autotune]` may list, and the `ir.Kernel` field each sets
HINT_FIELDS = {"num_warps": "num_warps", "stages": "num_stages", "max_blocks": "max_blocks"}
HINTS = tuple(HINT_FIELDS)
GIVEN_MATTERS = ("num_warps",)  # the hints a pass treats differently when given (`hinted_fields`)


def hinted_fields(kir: object, hints: Mapping[str, int]) -> dict[str, object]:
    """The kernel fields `hints` change on `kir` (empty: nothing changes). A
    `num_warps` the configuration gives counts as given (`ir.Kernel.hints`) even
    where its value is the kernel's default: the backend reads a default
    `num_warps` as its own to choose (the Hopper GEMM's consumer warpgroups,
    sm_80's ring, the opt-in default warps) and a given one as the user's. (No
    pass reads whether `stages` or `max_blocks` was given: their values say it.)"""
    out: dict[str, object] = {}
    given = [n for n in hints if n in HINT_FIELDS]
    for name in given:
        f = HINT_FIELDS[name]
        if getattr(kir, f) != hints[name]:
            out[f] = hints[name]
    have = tuple(getattr(kir, "hints", ()))
    marked = [n for n in given if n in GIVEN_MATTERS and n not in have]
    if hasattr(kir, "hints") and marked:
        out["hints"] = have + tuple(marked)
    return out


@frozen(eq=True)
class TuneSpec:
    candidates: tuple[tuple[str, tuple[int, ...]], ...]  # (name, values) in attribute order
    key: tuple[str, ...] | None  # parameter names; None: every tensor parameter

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.candidates)

    def configs(self, fixed: Mapping[str, int] | None = None) -> list[dict[str, int]]:
        """Every candidate that agrees with `fixed`, in attribute order."""
        fixed = dict(fixed or {})
        lists: list[tuple[int, ...]] = []
        for name, values in self.candidates:
            if name in fixed:
                lists.append((fixed[name],))
            else:
                lists.append(values)
        names = self.names
        out = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*lists)]
        for name, value in fixed.items():  # fixed values of names the attribute does not list
            for cfg in out:
                cfg.setdefault(name, value)
        return out

    def describe(self) -> str:
        return ", ".join(f"{n} = {list(v)}" for n, v in self.candidates)


def tune_spec(decl: ast.FnDecl) -> TuneSpec | None:
    """The kernel's autotune attribute, or None when it has none."""
    for attr in decl.attrs:
        if attr.name.name != "autotune":
            continue
        cands: list[tuple[str, tuple[int, ...]]] = []
        key: tuple[str, ...] | None = None
        for arg in attr.args:
            if arg.name is None or not isinstance(arg.value, ast.ArrayExpr):
                continue
            elems = arg.value.elems
            if arg.name.name == "key":
                key = tuple(e.ident.name for e in elems if isinstance(e, ast.Name))
            else:
                values = tuple(e.value for e in elems if isinstance(e, ast.IntLit))
                if values:
                    cands.append((arg.name.name, values))
        return TuneSpec(tuple(cands), key)
    return None


def listed_generics(decl: ast.FnDecl) -> dict[str, tuple[int, ...]]:
    """The const generics a kernel's `#[autotune(..)]` lists, with their candidates (the hints left out):
    what the checker's helps offer for a generic nothing fixes."""
    spec = tune_spec(decl)
    consts = {g.name.name for g in decl.generics if g.is_const}
    return {n: v for n, v in spec.candidates if n in consts and n not in HINTS} if spec is not None else {}


def format_config(cfg: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in cfg.items())
