"""The decode step's attention chain block by block: the Qwen3 engine's step
graph traced (`TILEC_TRACE=blocks`) at positions where every step of the
recorded bursts has the same number of key tiles a split, so each attention
block's time can be put against the key tiles it reads.

    python benchmarks/attn_chain.py --model 4b --positions 481,993,1025,2017 \\
        --variants '[{}, {"aw": 8}]' [--ring-mark] [--out DIR]

For each plan variant and position P (the recorded steps are P .. P + 15:
pick P so that cdiv(P, bt) and cdiv(P + 15, bt) agree), per attention launch
(medians over the 36 layers x 16 steps), times from the QKV GEMV's last
block end (t0): the attention's first block start, each block's time by the
key tiles its split reads (the plan's `cdiv(cdiv(pos, bt), splits)` a split,
the last ones empty), its end, the attention's last block end; the merge's
(`combine_splits`) first start, its wait's return and its blocks' time after
it, its last end; the O GEMV's first start (the whole chain). `--ring-mark`:
the same plans under PDL off with `TILEC_TRACE_MARK=ring` (the attention has
no PDL wait there, so the record's wait field is thread 0's last pass
through the ring's wait: the last key tile in), split into start -> last tile
in -> end by key tiles.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "llm"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _med(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def chain(tr, layers: int, hkv: int, splits: int, bt: int, p0: int, marked: bool) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Per attention launch of `tr` (in order), the chain's times (us) from
    the launch before it (the QKV GEMV), by key tiles a split; medians."""
    las = sorted(tr.launches, key=lambda la: la.first_start)
    out: dict[str, list[float]] = {}

    def put(key: str, v: float) -> None:
        out.setdefault(key, []).append(v)

    n_att = 0
    for i, la in enumerate(las):
        if not la.name.startswith("attn_decode") or i == 0 or i + 2 >= len(las):
            continue
        pos = p0 + n_att // layers
        n_att += 1
        tiles = _cdiv(pos, bt)
        per = _cdiv(tiles, splits)
        t0 = las[i - 1].last_end
        put("attn_first_start", (la.first_start - t0) / 1e3)
        put("attn_last_end", (la.last_end - t0) / 1e3)
        for b, s, w, e in zip(
            la.block.tolist(), la.start.tolist(), la.wait.tolist(), la.end.tolist(), strict=True
        ):
            sp = b % splits
            n = max(0, min(sp * per + per, tiles) - sp * per)
            put(f"block_{n}", (e - s) / 1e3)
            put(f"end_{n}", (e - t0) / 1e3)
            if marked and la.waits:
                put(f"mark_{n}", (w - s) / 1e3)  # start -> the last key tile in
                put(f"after_{n}", (e - w) / 1e3)
        m, o = las[i + 1], las[i + 2]
        put("merge_first_start", (m.first_start - la.last_end) / 1e3)
        put("merge_wait", (statistics.median(m.wait.tolist()) - la.last_end) / 1e3)
        put("merge_block_after_wait", statistics.median((m.end - m.wait).tolist()) / 1e3)
        put("merge_last_end", (m.last_end - la.last_end) / 1e3)
        put("o_first_start", (o.first_start - m.last_end) / 1e3)
        put("chain", (o.first_start - t0) / 1e3)
    res = {k: _med(v) for k, v in sorted(out.items())}
    res["launches"] = n_att
    res["tiles_a_split"] = _cdiv(_cdiv(p0, bt), splits)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="4b")
    ap.add_argument("--positions", default="481,993,1025,2017")
    ap.add_argument(
        "--variants", default="[{}]", help="JSON list of plan-field overrides (decode_ab.py's)"
    )
    ap.add_argument("--replays", type=int, default=2, help="burst replays recorded a position")
    ap.add_argument("--ring-mark", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    os.environ.setdefault("TILEC_TRACE_RECORDS", str(1 << 22))
    import torch
    from decode_ab import _variant_plan
    from decode_trace import _tok_s
    from engine import TileQwen3, load_kernels
    from model import Qwen3Config, random_weights

    from tilelang.runtime import trace

    positions = [int(p) for p in a.positions.split(",")]
    cfg = Qwen3Config.load(a.model if a.model in ("tiny", "small") else f"qwen3-{a.model}")
    w = random_weights(cfg, 0, backend="torch")
    eng = TileQwen3(
        cfg, w, max_seq=max(positions) + 16 * a.replays + 64, backend="torch", graph_api="torch"
    )
    base = eng.plan
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(
        f"{torch.cuda.get_device_name()}; {a.model}; positions {positions}; base plan: ns {base.ns}, short_ns "
        f"{base.short_ns}, bt {base.bt}, ea {base.ea}, pdl {base.pdl}",
        flush=True,
    )
    runs = [(v, False) for v in json.loads(a.variants)]
    if a.ring_mark:
        runs += [({**v, "pdl": False}, True) for v in json.loads(a.variants)]
    rows = []
    for v, marked in runs:
        if marked:
            os.environ["TILEC_TRACE_MARK"] = "ring"
        trace.set_trace(True)
        eng.k = load_kernels()  # the API's launch plans keep their kernels: new ones, traced
        plan = _variant_plan(base, v, sms)
        eng.replan(plan)
        _tok_s(eng, positions[0], 1, 2)  # captured and warm
        for p in positions:
            short = (
                plan.fma_until > 0 and p + 16 * a.replays <= plan.fma_until
            )  # the engine's choice
            splits = (plan.short_ns or plan.ns) if short else plan.ns
            eng.be.write(eng.pos, [p])
            torch.cuda.synchronize()
            trace.reset()
            for _ in range(a.replays):
                eng._burst_graph.replay()
            torch.cuda.synchronize()
            tr = trace.collect()
            res = chain(
                tr, cfg.num_hidden_layers, cfg.num_key_value_heads, splits, plan.bt, p, marked
            )
            row = {"variant": v, "mark": marked, "position": p, "splits": splits, **res}
            rows.append(row)
            print(json.dumps(row), flush=True)
        trace.set_trace(False)
        os.environ.pop("TILEC_TRACE_MARK", None)
    keys = [
        "attn_first_start",
        "block_0",
        "block_1",
        "block_2",
        "block_3",
        "block_4",
        "attn_last_end",
        "merge_first_start",
        "merge_wait",
        "merge_block_after_wait",
        "merge_last_end",
        "o_first_start",
        "chain",
    ]
    print("\n| variant | P | tiles/split | " + " | ".join(keys) + " |")
    print("|" + "---|" * (3 + len(keys)))
    for r in rows:
        tag = json.dumps(r["variant"]) + (" ring mark" if r["mark"] else "")
        print(
            f"| {tag} | {r['position']} | {r['tiles_a_split']} | "
            + " | ".join(str(r.get(k)) for k in keys)
            + " |"
        )
    if a.ring_mark:
        print(
            "\n| variant (PDL off, ring mark) | P | tiles | start -> last tile in | last tile in -> end | block |"
        )
        print("|---|---|---|---|---|---|")
        for r in rows:
            if r["mark"]:
                for n in range(5):
                    if r.get(f"block_{n}") is not None:
                        print(
                            f"| {json.dumps(r['variant'])} | {r['position']} | {n} | {r.get(f'mark_{n}')} | "
                            f"{r.get(f'after_{n}')} | {r.get(f'block_{n}')} |"
                        )
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "attn_chain.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
