"""The decode GEMVs' forms that balance a launch's tail, as the engine wires
them: the tile queue's checks (`Plan.qg`, `std::llm::queue`) and the hybrid
residual GEMVs (`Plan.hy`, `std::llm::hybrid::gemv_add_hybrid`: each row
tile's first KB K tiles a block, the rest of its row in small pieces pulled
by whichever block finishes first), and the split merge's form's check
(`Plan.mg`). Kept apart from `engine.py` (the module
bound: the step's launches are `steps.py`'s)."""

from __future__ import annotations

from typing import Any

from model import Qwen3Config

from tilelang import partition as P

RESIDUAL = ("o", "down")


def layer_rows(c: Qwen3Config) -> dict[str, int]:
    """The rows a layer of each decode matrix."""
    qkv = (c.num_attention_heads + 2 * c.num_key_value_heads) * c.head_dim
    return {"qkv": qkv, "o": c.hidden_size, "gate_up": c.intermediate_size, "down": c.hidden_size}


def layer_cols(c: Qwen3Config) -> dict[str, int]:
    """The columns (K) of each decode matrix."""
    h = c.hidden_size
    return {
        "qkv": h,
        "o": c.num_attention_heads * c.head_dim,
        "gate_up": h,
        "down": c.intermediate_size,
    }


def hybrid_items(shape: tuple[int, ...], n: int, k: int) -> int:
    """The queue items of a hybrid GEMV of `n` rows and `k` columns in
    `shape` (BN, BK, ST, MB, KB, BR, CR): a bulk item a row tile and NC pieces
    a row tile (its columns KB BK .. in CR tiles of BR)."""
    bn, bk, _, _, kb, br, cr = shape
    tiles = -(-k // br)
    nc = max(0, -(-(tiles - kb * (bk // br)) // cr))
    return (n // bn) * (1 + nc)


def check_forms(pl: Any, c: Qwen3Config) -> None:
    """A ValueError naming what the plan's queued (`qg`), hybrid (`hy`) or
    register-vector (`xr`) GEMVs, or its merge form (`mg`, `mr`), cannot run with."""
    rows = layer_rows(c)
    bad = sorted(set(pl.qg) - set(rows))
    if bad:
        raise ValueError(f"Plan.qg queues qkv, o, gate_up and down, not {bad}")
    for m, (bn, *_) in pl.qg.items():
        if rows[m] % bn:
            raise ValueError(f"Plan.qg: {m}'s row tile {bn} must divide its {rows[m]} rows a layer")
    if pl.mg not in (0, 1) or (pl.mg and pl.pe):
        raise ValueError(
            f"Plan.mg ({pl.mg}) is 0 or 1, and its merge (`decode_combine`) has no early trigger: pe 0"
        )
    if pl.mr < 0 or (pl.mr and (pl.mg or pl.pe or pl.fm or pl.om[0])):
        raise ValueError(
            f"Plan.mr ({pl.mr}) is `combine_rows`' ring stages (0: `combine_splits`): it is the merge's own "
            "launch, with no early trigger (pe 0) and no other merge form (mg, fm, om)"
        )
    bad = sorted(set(pl.hy) - set(RESIDUAL))
    if bad:
        raise ValueError(f"Plan.hy balances the residual GEMVs o and down, not {bad}")
    for m, shape in pl.hy.items():
        if len(shape) != 7:
            raise ValueError(f"Plan.hy: {m} takes (BN, BK, ST, MB, KB, BR, CR), not {tuple(shape)}")
        bn, bk, st, _, kb, br, cr = shape
        if rows[m] % bn:
            raise ValueError(f"Plan.hy: {m}'s row tile {bn} must divide its {rows[m]} rows a layer")
        if br <= 0 or bk % br or kb < 0 or cr < 1 or st not in (1, 2):
            raise ValueError(
                f"Plan.hy: {m}'s pieces need BR dividing BK ({br}, {bk}), KB >= 0 ({kb}), "
                f"CR >= 1 ({cr}) and ST 1 or 2 ({st})"
            )
        if m in pl.sk or m in pl.qg:
            raise ValueError(f"Plan.hy: {m} is streamed (`sk`) or queued (`qg`) too")
    bad = sorted(set(pl.xr) - {"o", "gate_up", "down"})
    if bad:
        raise ValueError(f"Plan.xr reads x from registers for o, gate_up and down, not {bad}")
    for m, shape in pl.xr.items():
        walk = shape[2:3] or (0,)
        if len(shape) not in (2, 3) or rows[m] % shape[0] or shape[1] < 0 or not 0 <= walk[0] <= 4:
            raise ValueError(
                f"Plan.xr: {m} takes (R, MB) or (R, MB, WALK), R dividing its {rows[m]} rows a layer, "
                f"MB >= 0 and WALK 0 (a tile queue) or 1..4 (the static walk, its `stages`: 2..4 "
                f"a cp.async ring of the weights), not {tuple(shape)}"
            )


def hybrid_scratch(be: Any, pl: Any, c: Qwen3Config) -> Any:
    """The hybrid GEMVs' queue scratch (one value an item, cleared by each
    launch), or None without any."""
    if not pl.hy:
        return None
    rows, cols = layer_rows(c), layer_cols(c)
    return be.zeros(
        (max(hybrid_items(tuple(s), rows[m], cols[m]) for m, s in pl.hy.items()),), "f32"
    )


def hybrid_op(
    k: Any, pl: Any, c: Qwen3Config, z: Any, name: str, y: Any, w: Any, x: Any, li: int
) -> Any:
    """y += W x for matrix `name` of layer `li` as `gemv_add_hybrid` (`Plan.hy`)."""
    shape = tuple(pl.hy[name])
    n = layer_rows(c)[name]
    items = hybrid_items(shape, n, layer_cols(c)[name])
    return k.gemv_add_hybrid[shape](P(z[:items], [1]), y, w, x, li, n)
