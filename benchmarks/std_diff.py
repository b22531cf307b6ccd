"""A differential of the standard library's entry points given run-time numbers and shapes (hrev round 31).

Each case is a small Tile program that calls one `std::` kernel (or a pair: a decode split and its merge) with
shapes and numbers drawn at the edges of what its documentation allows and past them, each known to the checker
(a literal) or only to the run (a number computed from data, `zeros::<i32>([1]).sum() + 5`). Families:

- `prefill`: `std::attention::flash_attention` / `flash_attention_lse`, S_q != S_k (each 0 to 40), causal or not,
  query heads a multiple of the KV heads or not, a `v` shorter than `k`, an output with other rows, scales that
  are not positive;
- `decode`: `decode_split` + `decode_combine`, `decode_fused`, `decode_split_varlen` (lengths on the device,
  negative, past the cache, i32::MAX) + `decode_combine`, `decode_split_tc` + `decode_combine`: cache lengths
  -1, 0, 1, S - 1, S, S + 1; splits, NS and NC that do or do not fit; q with another head count;
- `llm`: `std::llm`'s `embed` / `embed_rows` (token ids on the device: in range, -1, the vocabulary's size,
  i32::MIN/MAX) and the greedy picks `argmax_step` / `argmax_fold` / `argmax_wide` (a position on the device at
  -2, -1, the history's end and past it; block maxima of any count, ties and NaN) and the temperature / top-p
  chain (temperatures 0, negative, tiny; top_p 0, past 1, negative, NaN; logits with inf and NaN);
- `llmattn`: `std::llm`'s decode attention (`attn_decode` in its three loop forms, `attn_decode_short`,
  `attn_decode_ring`), its position on the device never clamped: past the cache, negative, i32::MAX; compared
  engine against engine only; a layer past the caches is refused (hrev32);
- `gemv` (hrev32): std::llm's stacked GEMVs at layers inside and past the stack, vectors of w's columns or not, norm
  weights with or without the layer's row, a layer's rows a multiple of BN or not;

The oracle, per case: what the documentation rules out (`bad`) must be refused, at `tilec check` or at the
launch (a `TileError`: E05xx / E07xx, never another exception); everything else must run on the interpreter
and give NumPy's answer (attention in f64 from the same inputs, the embedding row or zeros, the first maximum's
token and the clamped history slot), and the same program run by llsim (`--sim`: the NVPTX simulator, sm_80 or
sm_90a at random) must touch no byte outside a buffer (llsim raises on one), race nothing, and agree with the
interpreter. Outcomes: `ok` (ran, right), `refused` (bad, refused), `MISS` (bad, ran), `FALSE` (good, refused),
`WRONG` (ran, not NumPy's answer), `SIM` (llsim raised), `DIFFER` (llsim's tensors not the interpreter's),
`ICE` (an exception other than a TileError).

    python benchmarks/std_diff.py SEED COUNT [--family prefill|decode|llm|llmattn|gemv] [--sim | --gpu] [--seconds S]

`--gpu` runs each accepted case on the GPU (`tilec run --device gpu`) in place of llsim (benchmarks/hrev31_device.sh);
`--seconds S` stops after S seconds.

CPU only; the programs are written under /tmp/std_diff/.
"""

from __future__ import annotations

import io
import os
import random
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "backend"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "user"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import tilelang.run as run
from tilelang import driver
from tilelang.diagnostics.model import TileError

OUT = Path("/tmp/std_diff")
I32_MAX = 2**31 - 1


class Prog:
    """A program's lines, its numbers (each a literal or, at random, one only the run knows) and the oracle's
    facts: `bad` (why the documentation rules it out, or "") and `check(tensors)` (NumPy's answer)."""

    def __init__(self, r: random.Random, stem: str) -> None:
        self.r = r
        self.stem = stem
        self.uses: list[str] = []
        self.lines: list[str] = []
        self.bad: list[str] = []
        self.runtime = r.random() < 0.5
        self.check: Any = None
        self.items: list[str] = []

    def num(self, v: int) -> str:
        """`v` as the checker sees a literal, or as only the run knows it."""
        if self.runtime and -2**30 < v < 2**30:
            return f"(n0 + {v})" if v >= 0 else f"(n0 - {-v})"
        return str(v) if v >= 0 else f"({v})"

    def npy(self, name: str, a: np.ndarray) -> str:
        """A host expression of the array `a` (written beside the program, read with `load_npy`)."""
        path = OUT / f"{self.stem}_{name}.npy"
        np.save(path, a)
        t = {"int32": "i32", "float32": "f32"}[str(a.dtype)]
        return f'load_npy::<{t}>("{path}")'

    def source(self) -> str:
        head = "".join(f"use {u};\n" for u in self.uses) + "".join(self.items)
        return head + "fn main() {\n    let n0 = zeros::<i32>([1]).sum();\n" + "".join(
            f"    {ln}\n" for ln in self.lines) + "}\n"


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool, n: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """O and the natural log-sum-exp of `q: [BH, Sq, D]` against `k`, `v: [BKV, Sk, D]` (GQA: head h reads KV
    head h / (BH / BKV)), bottom-right causal, the first `n` keys; rows that see no key: zeros and -inf."""
    bh, sq, _ = q.shape
    bkv, sk, _ = k.shape
    if n is not None:
        k, v, sk = k[:, :n], v[:, :n], n
    g = bh // bkv
    kk = np.repeat(k.astype(np.float64), g, axis=0)
    vv = np.repeat(v.astype(np.float64), g, axis=0)
    s = np.einsum("hqd,hkd->hqk", q.astype(np.float64), kk) * scale
    if causal:
        seen = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        s = np.where(seen[None], s, -np.inf)
    m = s.max(-1, keepdims=True) if sk else np.full((bh, sq, 1), -np.inf)
    live = np.isfinite(m)
    p = np.exp(np.where(live, s - np.where(live, m, 0), -np.inf)) if sk else np.zeros((bh, sq, 0))
    den = p.sum(-1, keepdims=True)
    o = np.where(live, np.einsum("hqk,hkd->hqd", p, vv) / np.where(den > 0, den, 1), 0.0)
    lse = np.where(live[..., 0], (m[..., 0] + np.log(np.where(den[..., 0] > 0, den[..., 0], 1))), -np.inf)
    return o, lse


def _close(got: np.ndarray, want: np.ndarray, tol: float) -> str:
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    g = got.astype(np.float64)
    bad = ~np.isclose(g, want, rtol=tol, atol=tol, equal_nan=True)
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        return f"at {i}: {g[i]} != {want[i]} ({int(bad.sum())} of {bad.size})"
    return ""


# ---------------------------------------------------------------- prefill

def prefill(p: Prog) -> None:
    r = p.r
    t = r.choice(["f16", "bf16"])
    big = r.random() < 0.4   # the shapes the GPU's attention pipelines take (sm_90a: TMA, wgmma)
    bm, bn, d = (64, 64, 64) if big else (r.choice([16, 32]), r.choice([16, 32]), r.choice([16, 32]))
    bkv = r.choice([1, 2]) if not big else 1
    bh = bkv * r.choice([1, 2, 3])
    if r.random() < 0.15:
        bh, why = bh + 1, "query heads not a multiple of KV heads"
        if bh % bkv:
            p.bad.append(why)
    sq, sk = r.choice([0, 1, 5, 16, 17, 33, 40]), r.choice([0, 1, 7, 16, 31, 40])
    if big:
        sq, sk = r.choice([1, 63, 64, 65, 100]), r.choice([0, 1, 63, 64, 65, 130])
    skv = sk
    if r.random() < 0.15 and sk > 0:
        skv = sk - r.choice([1, sk])
        p.bad.append("v shorter than k")
    sqo = sq
    if r.random() < 0.1:
        sqo = sq + r.choice([bm, -sq, 1, -1]) if sq else r.choice([bm, 1])
        if sqo != sq:   # (hrev32: a row more or fewer within the same tiles ran too)
            p.bad.append("o's rows not q's")
    causal = r.random() < 0.5
    scale: Any = r.choice([0.25, 0.125, -0.5, 0.0] + (["f32::NAN", "f32::INFINITY"] if r.random() < 0.1 else []))
    lse = r.random() < 0.4
    kern = "flash_attention_lse" if lse else "flash_attention"
    p.uses.append(f"std::attention::{kern}")
    p.lines += [f"let q = randn::<{t}>([{p.num(bh)}, {p.num(sq)}, {d}], 1);",
                f"let k = randn::<{t}>([{p.num(bkv)}, {p.num(sk)}, {d}], 2);",
                f"let v = randn::<{t}>([{p.num(bkv)}, {p.num(skv)}, {d}], 3);",
                f"let mut o = full::<{t}>([{p.num(bh)}, {p.num(sqo)}, {d}], 7.0);"]
    args = f"o.partition([1, {bm}, {d}])"
    if lse:
        p.lines.append(f"let mut lse = full::<f32>([{p.num(bh)}, {p.num(sqo)}], 7.0);")
        args += f", lse.partition([1, {bm}])"
    p.lines.append(f"{kern}::<{t}, {bm}, {bn}, {d}>({args}, &q, &k, &v, {scale}, {str(causal).lower()}).sync();")

    def check(ts: dict[str, np.ndarray]) -> str:
        if isinstance(scale, str):   # a scale of NaN or inf: the engines must agree (`--sim`), NumPy says nothing
            return ""
        o, ls = _attention(ts["q"], ts["k"], ts["v"], scale, causal)
        why = _close(ts["o"], o, 3e-2)
        if not why and lse:
            why = _close(ts["lse"], ls, 3e-2)
        return why

    p.check = check


# ---------------------------------------------------------------- decode

def decode(p: Prog) -> None:
    r = p.r
    t = r.choice(["f16", "bf16"])
    form = r.choice(["split", "fused", "varlen", "tc"])
    g = r.choice([1, 2, 4, 8]) if form != "tc" else r.choice([1, 2, 4, 8, 16])
    big = r.random() < 0.4   # the shapes the GPU's decode paths take (sm_90a: TMA, wgmma; sm_80: cp.async rings)
    bn, d = (64, 64) if big else (r.choice([16, 32]), r.choice([16, 32]))
    hkv = r.choice([1, 2, 3]) if not big else r.choice([1, 2])
    s = r.choice([1, 7, 16, 33, 64]) if not big else r.choice([63, 64, 65, 130])
    splits = r.choice([1, 2, 3, 4])
    ns = 1
    while ns < splits:
        ns *= 2
    if r.random() < 0.2:
        ns = r.choice([1, 2, 4, 8])
        if ns < splits:
            p.bad.append("more splits than NS")
    qh = hkv
    if r.random() < 0.1:
        qh = hkv + 1
        p.bad.append("q's heads not k's")
    sv = s
    if r.random() < 0.1:
        sv = s - 1
        p.bad.append("v shorter than k")
    scale = r.choice([0.25, 0.5, -0.25])
    p.lines += [f"let q = randn::<{t}>([{p.num(qh)}, {g}, {d}], 1);",
                f"let k = randn::<{t}>([{p.num(hkv)}, {p.num(s)}, {d}], 2);",
                f"let v = randn::<{t}>([{p.num(hkv)}, {p.num(sv)}, {d}], 3);"]
    lens: list[int] = []
    if form == "varlen":
        b = r.choice([b for b in (1, hkv) if hkv % b == 0])
        lens = [r.choice([0, 1, s - 1, s, s + 1, -1, -7, I32_MAX, -2**31, r.randrange(s + 1)]) for _ in range(b)]
        if r.random() < 0.1:
            lens.append(1)
            if hkv % len(lens):
                p.bad.append("KV heads not a multiple of the lengths")
        p.lines.append(f"let lens = {p.npy('lens', np.array(lens, np.int32))};")
        clen = "&lens"
        n_of = [max(0, min(lens[h // (hkv // len(lens))] if hkv % len(lens) == 0 else 0, s)) for h in range(hkv)]
    else:
        cl = r.choice([0, 1, s - 1, s, s, s + 1, -1, r.randrange(s + 1)] + ([bn - 1, bn, bn + 1] if bn <= s else []))
        if not 0 <= cl <= s:
            p.bad.append("cache_len outside the cache")
        clen = p.num(cl)
        n_of = [cl] * hkv
    p.uses.append("std::attention::{decode_split, decode_fused, decode_split_varlen, decode_split_tc, "
                  "decode_combine}")
    dc = r.choice([d, d // 2]) if r.random() < 0.3 else d
    od, og = d, g   # the merged output's width and rows: o_part's, or (bad) twice them
    if form != "fused" and r.random() < 0.1:
        od, og = r.choice([(2 * d, g), (d, 2 * g)])
        p.bad.append("o's tiles not o_part's")
    if form == "tc":
        sp = splits if r.random() > 0.1 else r.choice([0, -1])
        if sp < 1:
            p.bad.append("splits < 1")
        rows = hkv * max(sp, 1)
        pg = g if r.random() > 0.1 else r.choice([g + 1, 2 * g, max(g - 1, 1)])   # the partials' rows (hrev32)
        if pg != g:
            p.bad.append("o_part's rows not q's G")
        p.lines += [f"let mut op = zeros::<f32>([{p.num(rows)}, {p.num(pg)}, {d}]);",
                    f"let mut lp = zeros::<f32>([{p.num(rows)}, {p.num(pg)}]);",
                    f"decode_split_tc::<{t}, {bn}, {d}>(op.partition([1, 64, {d}]), lp.partition([1, 64]), &q, &k, "
                    f"&v, {clen}, {scale}, {p.num(sp)}).sync();",
                    f"let mut o = full::<{t}>([{p.num(hkv)}, {og}, {od}], 7.0);",
                    f"decode_combine::<{t}, {g}, {ns}, {dc}>(o.partition([1, {g}, {dc}]), "
                    f"&op.reshape([{p.num(hkv)}, {p.num(max(sp, 1) * pg)}, {d}]), "
                    f"&lp.reshape([{p.num(hkv)}, {p.num(max(sp, 1) * pg)}])).sync();"]
    else:
        p.lines += [f"let mut op = zeros::<f32>([{p.num(hkv)}, {p.num(splits * g)}, {d}]);",
                    f"let mut lp = zeros::<f32>([{p.num(hkv)}, {p.num(splits * g)}]);",
                    f"let mut o = full::<{t}>([{p.num(hkv)}, {og}, {od}], 7.0);"]
        parts = f"op.partition([1, {g}, {d}]), lp.partition([1, {g}])"
        if form == "fused":
            nc = r.choice([c for c in (1, 2, 4, 8) if c <= ns] + ([3] if r.random() < 0.1 else []))
            if ns % nc:
                p.bad.append("NC not dividing NS")
            p.lines.append(f"decode_fused::<{t}, {g}, {bn}, {d}, {ns}, {nc}>({parts}, o.partition([1, {g}, {d}]), "
                           f"&q, &k, &v, {clen}, {scale}).sync();")
        else:
            kern = "decode_split_varlen" if form == "varlen" else "decode_split"
            p.lines += [f"{kern}::<{t}, {g}, {bn}, {d}>({parts}, &q, &k, &v, {clen}, {scale}).sync();",
                        f"decode_combine::<{t}, {g}, {ns}, {dc}>(o.partition([1, {g}, {dc}]), &op, &lp).sync();"]

    def check(ts: dict[str, np.ndarray]) -> str:
        q, k, v = ts["q"], ts["k"], ts["v"]
        want = np.zeros(ts["o"].shape)
        for h in range(hkv):
            n = max(0, min(n_of[h], s))
            if n:
                want[h] = _attention(q[h:h + 1], k[h:h + 1], v[h:h + 1], scale, False, n)[0][0]
        return _close(ts["o"], want, 3e-2)

    p.check = check


# ---------------------------------------------------------------- llm

SAMPLER = """kernel fn block_max<const BC: i32>(bmax: &mut Tensor<f32, [1]>, logits: &Tensor<f32, [?]>) {
    let t = logits.partition([BC]).load_padded([block_id(0)], f32::NEG_INFINITY);
    bmax.store(full::<f32>([1], t.max(0)));
}
"""


def sample(p: Prog) -> None:
    """std::llm's temperature / top-p chain (tests/user/programs/v06_std_top_p.tile's launches) with temperatures
    and top_p at and past their edges (0, negative, NaN, past 1): no requirement, so it must run, in bounds, the
    engines agreeing; where the temperature is positive and top_p a number, the token is one of the vocabulary's."""
    r = p.r
    v = r.choice([1, 5, 128, 129, 300])
    temp = r.choice([1.0, 0.5, 2.0, 0.0, -1.0, 1e-30])
    top_p = r.choice([0.0, 0.3, 0.9, 1.0, 2.0, -1.0, "f32::NAN"])
    rounds = r.choice([1, 3])
    seed = r.randrange(100)
    hist_len = r.choice([1, 4])
    pos = r.choice([0, hist_len - 1, hist_len, -1])
    p.uses.append("std::llm::sampling::{sample_prep, nucleus_round, nucleus_kept, sample_pick}")
    p.items.append(SAMPLER)
    nc = (v + 127) // 128
    exlen = v
    if v > 128 and r.random() < 0.1:
        exlen = (nc - 1) * 128
        p.bad.append("ex a chunk short of the logits")
    logits = np.random.default_rng(seed).standard_normal(v).astype(np.float32) * 2
    if r.random() < 0.2:
        logits[r.randrange(v)] = r.choice([np.inf, -np.inf, np.nan, 3e38])
    p.lines += [f"let logits = {p.npy('logits', logits)};",
                f"let mut bmax = zeros::<f32>([{p.num(nc)}]);",
                "block_max::<128>(bmax.partition([1]), &logits).sync();",
                f"let mut ex = zeros::<f32>([{p.num(exlen)}]);",
                f"let mut zpart = zeros::<f32>([{p.num(nc)}]);",
                f"sample_prep::<128>(ex.partition([128]), zpart.partition([1]), &logits, &bmax, {temp}).sync();",
                f"let mut ma = zeros::<f32>([{p.num(nc)}, 8]);", f"let mut mb = zeros::<f32>([{p.num(nc)}, 8]);",
                f"let mut ba = zeros::<f32>([{p.num(nc)}, 2]);", f"let mut bb = zeros::<f32>([{p.num(nc)}, 2]);",
                "nucleus_round::<128, 8, 8>(ma.partition([1, 8]), ba.partition([1, 2]), &ex, &zpart, &mb, &bb, "
                f"{top_p}, true).sync();"]
    for _ in range(rounds - 1):
        p.lines += ["nucleus_round::<128, 8, 8>(mb.partition([1, 8]), bb.partition([1, 2]), &ex, &zpart, &ma, &ba, "
                    f"{top_p}, false).sync();",
                    "nucleus_round::<128, 8, 8>(ma.partition([1, 8]), ba.partition([1, 2]), &ex, &zpart, &mb, &bb, "
                    f"{top_p}, false).sync();"]
    p.lines += [f"let mut kept = zeros::<f32>([{p.num(nc)}]);", f"let mut band = zeros::<f32>([{p.num(nc)}, 2]);",
                "nucleus_kept::<128, 8, 8>(kept.partition([1]), band.partition([1, 2]), &ex, &zpart, &ma, &ba, "
                f"{top_p}).sync();",
                "let mut tok = full::<i32>([1], -9);", f"let mut pos = full::<i32>([1], {pos});",
                f"let mut hist = full::<i32>([{hist_len}], -9);",
                f"sample_pick::<128, 8, {hist_len}>(tok.partition([1]), pos.partition([1]), "
                f"hist.partition([{hist_len}]), &ex, &kept, &band, {seed}).sync();"]

    def check(ts: dict[str, np.ndarray]) -> str:
        t = int(ts["tok"][0])
        slot = min(max(pos + 1, 0), hist_len - 1)
        if int(ts["hist"][slot]) != t or int(ts["pos"][0]) != pos + 1:
            return f"bookkeeping: tok {t}, pos {ts['pos'].tolist()}, hist {ts['hist'].tolist()}"
        finite = np.isfinite(logits).all()
        if temp > 1e-20 and top_p != "f32::NAN" and finite and not 0 <= t < v:
            return f"token {t} outside the vocabulary of {v}"
        return ""

    p.check = check


def llm(p: Prog) -> None:
    r = p.r
    kind = r.choice(["embed", "embed_rows", "argmax_step", "argmax_fold", "argmax_wide", "sample"])
    if kind == "sample":
        sample(p)
        return
    if kind.startswith("embed"):
        vocab, width = r.choice([1, 5, 40]), r.choice([8, 16, 24, 40])
        bh = r.choice([8, 16, 32])
        toks = [r.choice([0, vocab - 1, vocab, -1, I32_MAX, -2**31, r.randrange(vocab)])
                for _ in range(1 if kind == "embed" else r.choice([1, 3]))]
        p.uses.append(f"std::llm::{'gemv::embed' if kind == 'embed' else 'prefill::embed_rows'}")
        p.lines += [f"let table = randn::<bf16>([{p.num(vocab)}, {p.num(width)}], 1);",
                    f"let toks = {p.npy('toks', np.array(toks, np.int32))};"]
        xw = width
        if r.random() < 0.1 and (width + bh - 1) // bh > 1:
            xw = width - bh
            p.bad.append("x narrower than the table")
        if kind == "embed":
            p.lines += [f"let mut x = full::<f32>([{p.num(xw)}], 7.0);",
                        f"embed::<{bh}>(x.partition([{bh}]), &table, &toks).sync();"]
        else:
            p.lines += [f"let mut x = full::<f32>([{p.num(len(toks))}, {p.num(xw)}], 7.0);",
                        f"embed_rows::<{bh}>(x.partition([1, {bh}]), &table, &toks).sync();"]

        def check(ts: dict[str, np.ndarray]) -> str:
            tab = ts["table"].astype(np.float64)
            rows = [tab[n] if 0 <= n < vocab else np.zeros(width) for n in toks]
            return _close(ts["x"], np.array(rows[0] if kind == "embed" else rows), 0)

        p.check = check
        return
    nb = r.choice([1, 3, 16, 17, 40])
    bc = r.choice([8, 16, 64])
    if kind == "argmax_wide" and nb > bc:
        p.bad.append("more block maxima than BC")
    nargs = nb
    if nb > 1 and r.random() < 0.1:
        nargs = nb - 1
        p.bad.append("fewer tokens than block maxima")
    hist_len = r.choice([1, 4, 9])
    pos = r.choice([-3, -2, -1, 0, hist_len - 2, hist_len - 1, hist_len, I32_MAX - 1, -2**31])
    vals = [r.choice([0.5, -1.0, 3.0, 3.0, float("-inf"), -3e38]) for _ in range(nb)]
    if r.random() < 0.2:
        vals[r.randrange(nb)] = float("nan")
    p.uses.append(f"std::llm::sampling::{kind}")
    p.lines += [f"let bmax = {p.npy('bmax', np.array(vals, np.float32))};",
                f"let barg = arange::<i32>({p.num(nargs)}) * 10 + 3;",
                "let mut tok = full::<i32>([1], -9);", f"let mut pos = full::<i32>([1], {pos});",
                f"let mut hist = full::<i32>([{p.num(hist_len)}], -9);"]
    p.lines.append(f"{kind}::<{bc}, {p.num(hist_len) if not p.runtime else hist_len}>(tok.partition([1]), "
                   f"pos.partition([1]), hist.partition([{hist_len}]), &bmax, &barg).sync();")

    def check(ts: dict[str, np.ndarray]) -> str:
        b = np.array(vals, np.float32)
        first = int(np.argmax(b))   # NumPy's: the first NaN, else the first maximum
        want_tok = first * 10 + 3
        want_hist = np.full(hist_len, -9, np.int32)
        want_hist[min(max(pos + 1 if pos < I32_MAX else -2**31, 0), hist_len - 1)] = want_tok
        got = (int(ts["tok"][0]), int(ts["pos"][0]), ts["hist"].tolist())
        want = (want_tok, (pos + 1 + 2**31) % 2**32 - 2**31, want_hist.tolist())
        return "" if got == want else f"{got} != {want}"

    p.check = check


def llmattn(p: Prog) -> None:
    """std::llm's decode attention (`attn_decode` in its three loop forms, `attn_decode_short`,
    `attn_decode_ring`), whose position and layer come from the device or a scalar and are never clamped: a
    position past the cache (keys past its length read as zeros and attended to), negative, i32::MAX; a layer
    past the caches' heads, refused since hrev32 (E0513). The rest must run, in bounds, the engines agreeing
    (llsim)."""
    r = p.r
    g, h, bt = r.choice([1, 2, 4]), r.choice([8, 16]), r.choice([16, 32])
    hkv, layers, s = r.choice([1, 2]), r.choice([1, 2]), r.choice([16, 40, 64])
    ns = r.choice([1, 2, 3])
    pos = r.choice([0, 1, s - 1, s, s + 1, s + bt, 2 * s, -1, -bt, I32_MAX, r.randrange(s)])
    layer = r.choice([0, layers - 1, layers - 1, layers, -1])
    if not 0 <= layer < layers:
        p.bad.append("layer past the caches")   # (hrev32: it read zeros for every key, query and norm weight)
    kern, gens = r.choice([("attn_decode", "{TC}"), ("attn_decode", "{TC}"), ("attn_decode_short", ""),
                           ("attn_decode_ring", "0")])
    gens = gens.replace("{TC}", str(r.choice([0, 1, 2])))
    generics = f"{g}, {h}, {bt}" + (f", {gens}" if gens else "")
    hq = g * hkv
    p.uses.append(f"std::llm::attention::{kern}")
    p.lines += [f"let qkv = randn::<f32>([{p.num(hq + 2 * hkv)}, 2, {p.num(h)}], 1);",
                f"let qn = randn::<bf16>([{p.num(layers)}, {p.num(2 * h)}], 2) * 0.1 + 1.0;",
                f"let kn = randn::<bf16>([{p.num(layers)}, {p.num(2 * h)}], 3) * 0.1 + 1.0;",
                f"let cs = randn::<f32>([{p.num(s)}, {p.num(h)}], 4);",
                f"let sn = randn::<f32>([{p.num(s)}, {p.num(h)}], 5);",
                f"let kc = randn::<bf16>([{p.num(layers * hkv)}, {p.num(s)}, {2 * h}], 6);",
                f"let vc = randn::<bf16>([{p.num(layers * hkv)}, {p.num(s)}, {2 * h}], 7);",
                f"let pos = full::<i32>([1], {pos});",
                f"let mut op = full::<f32>([{p.num(hkv)}, {p.num(ns * g)}, {2 * h}], 7.0);",
                f"let mut lp = full::<f32>([{p.num(hkv)}, {p.num(ns * g)}], 7.0);",
                f"{kern}::<{generics}>(op.partition([1, {g}, {2 * h}]), lp.partition([1, {g}]), &qkv, &qn, &kn, "
                f"&cs, &sn, &kc, &vc, &pos, {p.num(layer)}, 0.000001).sync();"]
    p.check = lambda ts: ""


def gemv(p: Prog) -> None:
    """std::llm's stacked GEMVs (hrev32): `gemv`, `gemv_add`, `rms_gemv`, `rms_gate_up`, `gemv_add_queue` and
    `gemv_rows_add` at layers inside, past and before an L-layer stack, with an `x` of w's columns or not, a norm
    weight with or without the layer's row, and a layer's rows N a multiple of BN or not (gate/up's up rows start
    at row N of a layer: a multiple of BN always; the others past layer 0). The rest must give NumPy's product."""
    r = p.r
    kind = r.choice(["gemv", "gemv_add", "rms_gemv", "rms_gate_up", "gemv_add_queue", "gemv_rows_add"])
    layers, bn, bk, kk = r.choice([1, 2, 3]), r.choice([8, 16]), r.choice([16, 32]), r.choice([16, 40, 64])
    n = r.choice([1, 2, 3]) * bn + (r.choice([-3, 5]) if r.random() < 0.15 else 0)
    layer = r.choice([0, layers - 1, layers - 1, layers, -1])
    xk = kk if r.random() > 0.15 else kk + r.choice([-8, 8])
    normed, gate = kind in ("rms_gemv", "rms_gate_up"), kind == "rms_gate_up"
    gl = layers if r.random() > 0.15 else max(layer, 0)
    if not 0 <= layer < layers:
        p.bad.append("layer past the stack")
    if xk != kk:
        p.bad.append("x not w's columns")
    if normed and 0 <= layer < layers and gl <= layer:
        p.bad.append("g without the layer's row")
    if n % bn and (gate or layer != 0):
        p.bad.append("N not a multiple of BN")
    rows = layers * n * (2 if gate else 1)
    p.uses.append(f"std::llm::{'queue' if 'queue' in kind else 'rows' if 'rows' in kind else 'gemv'}::{kind}")
    p.lines += [f"let w = randn::<bf16>([{p.num(rows)}, {p.num(kk)}], 1);",
                f"let x = randn::<f32>([{p.num(xk)}], 2);",
                f"let g = randn::<bf16>([{p.num(gl)}, {p.num(kk)}], 3);",
                f"let mut y = full::<f32>([{p.num(n)}], 0.5);"]
    ly, yp = p.num(layer), f"y.partition([{bn}])"
    call = {"gemv": f"gemv::<{bn}, {bk}, 1, 0>({yp}, &w, &x, {ly})",
            "gemv_add": f"gemv_add::<{bn}, {bk}, 1, 0, 0, {bk}, 0, 0>({yp}, &w, &x, {ly}, &w, 0, 0)",
            "rms_gemv": f"rms_gemv::<{bn}, {bk}, 1, 0, 0, {bk}, 0, 0>({yp}, &w, &x, &g, {ly}, 0.000001, &w, 0, 0)",
            "rms_gate_up": f"rms_gate_up::<{bn}, {bk}, 1, 0, 0, {bk}, 0, 0>({yp}, &w, &x, &g, {ly}, 0.000001, &w, 0, 0)",
            "gemv_add_queue": f"gemv_add_queue::<{bn}, {bk}, 1, 0>({yp}, &w, &x, {ly}, {p.num(n)})",
            "gemv_rows_add": f"gemv_rows_add::<{bn}, 64, 0>({yp}, &w, &x, {ly}, {p.num(n)})"}[kind]
    p.lines.append(call + ".sync();")

    def check(ts: dict[str, np.ndarray]) -> str:
        w, x, g = (ts[k].astype(np.float64) for k in ("w", "x", "g"))
        if normed:
            x = x / np.sqrt((x * x).mean() + 1e-6) * g[layer]
        if gate:
            a, b = w[2 * layer * n:(2 * layer + 1) * n] @ x, w[(2 * layer + 1) * n:(2 * layer + 2) * n] @ x
            want = a / (1 + np.exp(-a)) * b
        else:
            want = w[layer * n:(layer + 1) * n] @ x + (0.5 if kind in ("gemv_add", "gemv_add_queue",
                                                                        "gemv_rows_add") else 0.0)
        return _close(ts["y"], want, 1e-3 * max(1.0, float(np.abs(want).max())))

    p.check = check


FAMILIES = {"prefill": prefill, "decode": decode, "llm": llm, "llmattn": llmattn, "gemv": gemv}


def _interp(path: Path) -> tuple[dict[str, np.ndarray] | None, str, str]:
    """(tensors or None, the refusal's code or "", an ICE's traceback or "")."""
    from userprog import program_tensors

    try:
        ex = run.execute(str(path), "cpu", out=io.StringIO())
    except TileError as e:
        return None, e.diagnostics[0].code if e.diagnostics else "TileError", ""
    except Exception:  # anything else is a bug
        return None, "", traceback.format_exc(limit=3)
    return program_tensors(ex), "", ""


def _on_gpu(path: Path) -> tuple[dict[str, np.ndarray] | None, str]:
    from userprog import program_tensors

    try:
        ex = run.execute(str(path), "gpu", out=io.StringIO())
        if ex.device.kind != "gpu":
            return None, "no GPU"
        return program_tensors(ex), ""
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _simulated(path: Path, arch: str) -> tuple[dict[str, np.ndarray] | None, str]:
    from userprog import simulated_program

    try:
        return simulated_program(path, arch), ""
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def case(seed: int, i: int, family: str | None, sim: bool, gpu: bool = False) -> tuple[str, str]:
    r = random.Random(seed * 1_000_003 + i)
    fam = family or r.choice(sorted(FAMILIES))
    p = Prog(r, f"c{seed}_{i}")
    FAMILIES[fam](p)
    path = OUT / f"c{seed}_{i}.tile"
    path.write_text(p.source(), encoding="utf-8")
    errs = [d.code for d in driver.check(path).diagnostics if d.severity.value == "error"]
    where = f"{path} ({fam}; {'; '.join(p.bad) or 'good'})"
    if errs:
        if not p.bad:
            return "FALSE", f"{where}: check {errs}"
        return "refused", ""
    tensors, code, ice = _interp(path)
    if ice:
        return "ICE", f"{where}: {ice}"
    if tensors is None:
        return ("refused", "") if p.bad else ("FALSE", f"{where}: run {code}")
    if p.bad:
        return "MISS", f"{where}: ran"
    why = p.check(tensors)
    if why:
        return "WRONG", f"{where}: {why}"
    if sim or gpu:
        arch = "gpu" if gpu else r.choice(["sm_80", "sm_90a"])
        got, err = _on_gpu(path) if gpu else _simulated(path, arch)
        if got is None:
            return "GPU" if gpu else "SIM", f"{where} {arch}: {err}"
        for name, want in tensors.items():
            why = _close(got[name], want.astype(np.float64), 2e-2) if want.dtype.kind == "f" else (
                "" if np.array_equal(got[name], want) else f"{got[name].tolist()} != {want.tolist()}")
            if why:
                return "DIFFER", f"{where} {arch} `{name}`: {why}"
    return "ok", ""


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seed, count = int(args[0]), int(args[1])
    family = None
    if "--family" in sys.argv:
        family = sys.argv[sys.argv.index("--family") + 1]
        args.remove(family)
    sim = "--sim" in sys.argv
    gpu = "--gpu" in sys.argv
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else None
    if seconds is not None:
        args.remove(sys.argv[sys.argv.index("--seconds") + 1])
    import time

    start = time.monotonic()
    OUT.mkdir(exist_ok=True)
    tally: dict[str, int] = {}
    for i in range(count):
        if seconds is not None and time.monotonic() - start > seconds:
            break
        kind, msg = case(seed, i, family, sim, gpu)
        tally[kind] = tally.get(kind, 0) + 1
        if kind not in ("ok", "refused"):
            print(kind, msg, flush=True)
    print(" ".join(f"{k} {v}" for k, v in sorted(tally.items())))


if __name__ == "__main__":
    main()
