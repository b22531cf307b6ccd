"""A differential search for the tensor-core paths (huser10, 2026-12-05): the
sibling of `layout_diff.py` (whose `mma`s are small and never reach wgmma) for
the shapes and loops the sm_90a backend lowers to warpgroup MMA, run on the
interpreter and in the NVPTX simulator (tests/backend/llsim) at sm_90a and,
for a share of the seeds, sm_80 (the same program on mma.sync).

Two forms, each with random near-misses that send it to another engine:

- `gemm`: the Hopper GEMM loop (`passes/pipeline.py`): f16/bf16 tiles of
  64/128 x 8..256 x 16/32/64, A and/or B loaded transposed (MN-major / K-major
  descriptors), A A^T from one tensor, edges in M, N and K, row strides TMA can
  and cannot describe (register-copy producer), zero / constant / -0.0 / loaded
  starts, a trip count from `num_tiles` or a parameter (0 too), an epilogue of
  element-wise ops with a scalar parameter, casts (f16, bf16, i32) and stores
  to one or two outputs, num_warps / stages hints; near-misses: a reduction in
  the epilogue, a second product in the loop, an accumulator fed into a second
  loop, a padded operand, the loop inside a tile walk or queue, a first product
  peeled off, a transposed store, a bias loaded after the loop.
- `attn`: a two-product loop the attention pipeline takes (`attention_match`):
  S = Q K^T, a random body of row statistics, masks, position and row biases,
  clamps and scales, a cast of a body value as the register A of the second
  product with V, carried row statistics and rescaled accumulators, 2-D or 3-D
  (head) tensors, an epilogue and an optional second output of a row
  statistic; or a real online softmax (`soft`, a tolerance).

Inputs are small integers (|x| <= 4), every product and partial sum below 2^24
and every scale a power of two, so both engines must agree bit for bit (casts
round to nearest even on both); `exp` outputs (the `soft` variant) get a
tolerance.

    python benchmarks/wgmma_diff.py SEED0 SEED1 [--arch sm_90a,sm_80] [--sm80 0.3] [--show] [--mutate M:OLD=>NEW]

prints one line per disagreement and a summary with how many programs each
engine ran (a search that never reaches wgmma finds nothing there). Not a test.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from layout_diff import run_one  # noqa: E402

BNS = (8, 16, 24, 32, 40, 48, 64, 64, 72, 96, 128, 128, 136, 192, 256)


def _int_input(name: str, rows: int, cols: int, dt: str, r: random.Random, lim: int = 4) -> str:
    mod = 2 * lim + 1
    return (f"    let {name} = (((arange::<i32>({rows * cols}) * {r.choice([7, 13, 29, 37, 11])} + {r.randrange(50)})"
            f" % {mod} - {lim}) as {dt}).reshape([{rows}, {cols}]);")


def gemm(seed: int, r: random.Random) -> tuple[str, dict[str, bool], str]:
    dt = r.choice(["f16", "bf16"])
    BM = r.choice([64, 64, 128])
    BK = r.choice([16, 32, 64])
    ta = r.random() < 0.25  # A stored [K, M], loaded [BK, BM] and transposed (MN-major A)
    tb = r.random() < 0.5  # B stored [N, K], loaded [BN, BK] and transposed (K-major B)
    BN = r.choice(BNS)
    if BM * BN > 128 * 128 and r.random() < 0.8:  # (128 x 256: two consumer warpgroups; a slow simulation)
        BN = r.choice([64, 128])
    gm, gn = r.choice([1, 1, 2]), r.choice([1, 1, 2])
    nk = r.choice([1, 2, 3, 4])
    K = max(1, nk * BK - r.choice([0, 0, 8, 16, 5]))
    M = max(1, gm * BM - r.choice([0, 0, 7, 36]))
    N = max(1, gn * BN - (r.choice([0, 0, 3, 8]) if BN > 8 else 0))
    if r.random() < 0.3:  # a row stride TMA cannot take: the register-copy producer
        K += r.choice([1, 3]) if K < nk * BK else 0
    near = r.choice(["none"] * 6 + ["reduce", "two", "feed", "padded", "walk", "init_load", "prologue", "tstore",
                                    "bias"])
    gram = near == "none" and r.random() < 0.15  # A A^T: both operands TMA copies of one tensor
    if gram:
        ta, tb, N, BN = False, True, M, r.choice([64, 128])
    hint = r.choice(["", "", f"#[hints(num_warps = {r.choice([4, 8])})]\n",
                     f"#[hints(stages = {r.choice([2, 3])})]\n"])
    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    host = [_int_input("a", *a_shape, dt, r), _int_input("b", *b_shape, dt, r)]
    params = [f"a: &Tensor<{dt}, [?, ?]>", f"b: &Tensor<{dt}, [?, ?]>"]
    args = ["&a", "&b"]
    body: list[str] = []
    walk = near == "walk"
    bi0, bi1 = "block_id(0)", "s" if walk else "block_id(1)"
    if near == "tstore":  # the grid runs over the transposed output: axis 0 along N
        bi0, bi1 = "block_id(1)", "block_id(0)"
    if ta:
        la = f"a.partition([BK, BM]).load([j, {bi0}]).transpose()"
    else:
        la = "a.partition([BM, BK]).load" + f"{'_padded' if near == 'padded' else ''}([{bi0}, j]" + (
            f", {_zero(dt)})" if near == "padded" else ")")
    lb = (f"{'a' if gram else 'b'}.partition([BN, BK]).load([{bi1}, j]).transpose()" if tb else
          f"b.partition([BK, BN]).load([j, {bi1}])")
    init = r.choice(["zeros::<f32>([BM, BN])", "zeros::<f32>([BM, BN])", "full::<f32>([BM, BN], 3.0)",
                     "full::<f32>([BM, BN], -0.0)"])
    if near == "init_load":
        params.append(f"c: &Tensor<f32, [?, ?]>")
        args.append("&c")
        host.append(_int_input("c", M, N, "f32", r))
        init = f"c.partition([BM, BN]).load([{bi0}, {bi1}])"
    ktiles = "a.partition([BK, BM]).num_tiles(0)" if ta else "a.partition([BM, BK]).num_tiles(1)"
    if r.random() < 0.2:  # the trip count a scalar parameter
        params.append("nk: i32")
        args.append(f"{-(-K // BK) if r.random() < 0.85 else 0}")  # 0: the loop never runs (acc is its start)
        ktiles = "nk"
    ind = "        " if walk else "    "
    body.append(f"{ind}let mut acc = {init};")
    lo = "0"
    if near == "prologue":
        body.append(f"{ind}{{ let j = 0; acc = mma({la}, {lb}, acc); }}")
        lo = "1"
    body.append(f"{ind}for j in {lo}..{ktiles} {{")
    if near == "two":
        body.append(f"{ind}    let x = {la};")
        body.append(f"{ind}    acc = mma(x, {lb}, acc);")
        body.append(f"{ind}    acc = mma(x, {lb}, acc);")
    else:
        body.append(f"{ind}    acc = mma({la}, {lb}, acc);")
    body.append(f"{ind}}}")
    if near == "feed":  # the accumulator of one loop is the start of another (over the same K, halved)
        body.append(f"{ind}for j in 0..{ktiles} {{")
        body.append(f"{ind}    acc = mma({la}, {lb}, acc * 0.5);")
        body.append(f"{ind}}}")
    # the epilogue
    outs: dict[str, bool] = {}
    x = "acc"
    if r.random() < 0.3:  # a scalar parameter (and one made from it) in the epilogue
        params.append("alpha: f32")
        args.append(r.choice(["2.0", "0.5", "-1.0"]))
        body.append(f"{ind}let e_s = acc * alpha + (alpha * 4.0);")
        x = "e_s"
    if near == "bias":  # a bias row loaded after the loop
        params.append("bias: &Tensor<f32, [?]>")
        args.append("&bias")
        host.append(f"    let bias = (arange::<f32>({N}) % 7.0) - 3.0;")
        body.append(f"{ind}let e_b = {x} + bias.partition([BN]).load([{bi1}]).reshape([1, BN]);")
        x = "e_b"
    for i in range(r.randrange(0, 4)):
        e = r.choice(["{x} * 2.0 + 1.0", "maximum({x}, 0.0)", "{x} - 3.0", "where({x} > 0.0, {x}, {x} * 0.5)",
                      "minimum({x}, 100.0)", "abs({x})", "{x} * 0.25"])
        body.append(f"{ind}let e{i} = {e.format(x=x)};")
        x = f"e{i}"
    odt = r.choice(["f32", "f32", "f16", "bf16", "i32"])
    val = x if odt == "f32" else f"{x} as {odt}"
    if near == "tstore":  # the transposed product stored into a [BN, BM] tile
        params.insert(0, f"o: &mut Tensor<{odt}, [BN, BM]>")
        args.insert(0, f"o.partition([{BN}, {BM}])")
        host.append(f"    let mut o = zeros::<{odt}>([{N}, {M}]);")
        val = f"({val}).transpose()"
        body.append(f"{ind}o.store({val});")
        val = ""
    else:
        params.insert(0, f"o: &mut Tensor<{odt}, [BM, BN]>")
        args.insert(0, f"o.partition([{BM}, {BN}])")
        host.append(f"    let mut o = zeros::<{odt}>([{M}, {N}]);")
    if val:
        body.append(f"{ind}o.store({val});")
    outs["o"] = True
    if (r.random() < 0.3 or near == "reduce") and near != "tstore":
        odt2 = r.choice(["f32", "f16"])
        params.insert(1, f"p: &mut Tensor<{odt2}, [BM, BN]>")
        args.insert(1, f"p.partition([{BM}, {BN}])")
        host.append(f"    let mut p = zeros::<{odt2}>([{M}, {N}]);")
        v2 = "acc" if odt2 == "f32" else f"acc as {odt2}"
        if near == "reduce":
            ax = r.choice([0, 1])
            v2 = f"({x} - {x}.{r.choice(['max', 'min', 'sum'])}({ax}).reshape([{'1, BN' if ax == 0 else 'BM, 1'}]))"
            v2 = v2 if odt2 == "f32" else f"{v2} as {odt2}"
        body.append(f"{ind}p.store({v2});")
        outs["p"] = True
    if walk:
        body = [f"    for s in {r.choice(['tiles', 'queue'])}(1) {{"] + body + ["    }"]
    src = (f"// wgmma_diff seed {seed} (gemm, near-miss {near})\n#[allow(warnings)]\n{hint}"
           f"kernel fn kern<const BM: i32, const BN: i32, const BK: i32>({', '.join(params)}) {{\n" + "\n".join(body)
           + "\n}\n\nfn main() {\n" + "\n".join(host)
           + f"\n    kern::<{BM}, {BN}, {BK}>({', '.join(args)}).sync();\n}}\n")
    return src, outs, f"gemm/{'gram' if gram else near}"


def _zero(dt: str) -> str:
    return f"(0.0 as {dt})"


def attn(seed: int, r: random.Random) -> tuple[str, dict[str, bool], str]:
    dt = r.choice(["f16", "bf16"])
    BM = r.choice([64, 64, 128])
    BN = r.choice([16, 32, 64, 64, 128])
    D = r.choice([64, 64, 128])
    if BM == 128 and D == 128:
        BN = min(BN, 64)
    soft = r.random() < 0.3  # a real online softmax (exp): a tolerance
    rowb = False
    SQ = max(1, r.choice([1, 1, 2]) * BM - r.choice([0, 0, 5, 33]))
    SK = max(1, r.choice([1, 2, 3]) * BN - r.choice([0, 0, 1, 7, BN // 2]))
    heads = r.random() < 0.25  # [H, S, D] tensors, one head a grid row: tiles [1, B, D] reshaped to [B, D]
    kt = not heads and r.random() < 0.25  # K stored [D, SK]: loaded [D, BN], no transpose (MN-major K)
    # a KV cache valid up to a run-time length n < its rows, V's rows past it NaN: the product must read the
    # where's zeros there (`attention_vmask`: the consumers zero those rows of the stage)
    cache = not heads and r.random() < 0.2
    valid = max(1, SK - r.choice([1, 5, BN // 2, BN]))
    host = [_int_input("q", SQ, D, dt, r, 2), _int_input("k", D, SK, dt, r, 2) if kt else
            _int_input("k", SK, D, dt, r, 2), _int_input("v", SK, D, dt, r, 2)]
    if cache:
        host[2] = host[2].replace("let v = ", "let v0 = ")
        host.append(f"    let v = where(arange::<i32>({SK}).reshape([{SK}, 1]) < {valid}, v0, {dt}::NAN);")
    lk = "k.partition([D, BN]).load([0, j])" if kt else "k.partition([BN, D]).load([j, 0]).transpose()"
    lv = ("where(arange::<i32>(BN).reshape([BN, 1]) + j * BN < n, v.partition([BN, D]).load([j, 0]), 0.0)"
          if cache else "v.partition([BN, D]).load([j, 0])")
    body = ["    let qt = q.partition([BM, D]).load([block_id(0), 0]);",
            "" if cache else "    let n = v.shape()[0];",
            "    let mut acc = zeros::<f32>([BM, D]);"]
    carried = ["acc"]
    stat = r.random() < 0.5
    rowb = not soft and r.random() < 0.2  # a per-row bias loaded before the loop
    if rowb:
        body.append("    let rb = (q.partition([BM, D]).load([block_id(0), 0]) as f32).sum(1).reshape([BM, 1]);")
    if stat or soft:
        body.append("    let mut l = zeros::<f32>([BM, 1]);")
        carried.append("l")
    if soft:
        body.append("    let mut m = full::<f32>([BM, 1], -1.0e30);")
    body.append(f"    for j in 0..(n + BN - 1) / BN {{")
    body.append(f"        let s = mma(qt, {lk}, zeros::<f32>([BM, BN]));")
    x = "s"
    inner: list[str] = []
    masked = r.random() < 0.6
    posb = r.random() < 0.25  # an ALiBi-like position bias (keys - rows) / 4
    causal = r.random() < 0.3
    if masked or posb:
        inner.append("        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;")
    if causal or posb:
        inner.append("        let rows = arange::<i32>(BM).reshape([BM, 1]) + block_id(0) * BM;")
    fill = "-1.0e30" if soft else "0.0"
    if soft:
        sc = r.choice(["0.125", "0.0625", "0.25"])
        inner.append(f"        let t0 = s * {sc};")
        x = "t0"
        if masked:
            cond = "keys < n" + (" && keys <= rows" if causal else "")
            inner.append(f"        let t1 = where({cond}, {x}, {fill});")
            x = "t1"
        inner.append(f"        let mn = maximum(m, {x}.max(1).reshape([BM, 1]));")
        inner.append(f"        let p = exp({x} - mn);")
        inner.append("        let alpha = exp(m - mn);")
        inner.append("        l = l * alpha + p.sum(1).reshape([BM, 1]);")
        inner.append(f"        acc = mma(p as {dt}, {lv}, acc * alpha);")
        inner.append("        m = mn;")
    else:
        if posb:
            inner.append("        let t_pb = s + ((keys - rows) as f32) * 0.25;")
            x = "t_pb"
        if rowb:
            inner.append(f"        let t_rb = {x} + rb;")
            x = "t_rb"
        for i in range(r.randrange(1, 5)):
            e = r.choice(["{x} - {x}.max(1).reshape([BM, 1])", "{x} - {x}.min(1).reshape([BM, 1])",
                          "{x} * 0.5", "maximum({x}, 0.0)", "abs({x}) - 4.0", "{x} + 1.0",
                          "where({x} > 2.0, {x}, -{x})", "{x} - {x}.sum(1).reshape([BM, 1]) * 0.0078125"])
            inner.append(f"        let t{i} = {e.format(x=x)};")
            x = f"t{i}"
        if masked:
            cond = "keys < n" + (" && keys <= rows" if causal else "")
            inner.append(f"        let tm = where({cond}, {x}, 0.0);")
            x = "tm"
        lim = r.choice([4.0, 8.0, 16.0])
        inner.append(f"        let p = minimum(maximum({x}, -{lim}), {lim});")
        if stat:
            inner.append(f"        l = l + p.{r.choice(['sum', 'max', 'min'])}(1).reshape([BM, 1]);")
        upd = r.choice(["acc", "acc", "acc * 0.5", "acc - 1.0", "acc * alpha"])
        if upd == "acc * alpha":  # a per-row rescale made in the body (not an exp): 1/2 where the row's max grew
            inner.insert(len(inner) - (1 if stat else 0),
                         "        let alpha = where(p.max(1).reshape([BM, 1]) > 2.0, 0.5, 1.0);")
        inner.append(f"        acc = mma(p as {dt}, {lv}, {upd});")
    body += inner
    body.append("    }")
    odt = r.choice(["f32", "f32", dt])
    if soft:
        fin = "acc / l"
    elif stat:
        fin = r.choice(["acc + l", "acc - l * 2.0", "acc"])
    else:
        fin = r.choice(["acc", "acc * 0.5", "maximum(acc, 0.0)"])
    fin = f"({fin})" + (f" as {odt}" if odt != "f32" else "")
    body.append(f"    o.store({fin});")
    lse = r.random() < 0.3  # a second output: a row statistic after the loop (flash attention's LSE)
    if lse:
        body.append("    r.store(" + ("m + log(l)" if soft else "l" if stat else
                                     f"acc.{r.choice(['sum', 'max'])}(1).reshape([BM, 1])") + ");")
    hint = r.choice(["", "", "#[hints(num_warps = 8)]\n" if BM == 128 else ""])
    src = (f"// wgmma_diff seed {seed} (attn{', softmax' if soft else ''})\n#[allow(warnings)]\n{hint}"
           f"kernel fn kern<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<{odt}, [BM, D]>, "
           + ("r: &mut Tensor<f32, [BM, 1]>, " if lse else "") +
           f"q: &Tensor<{dt}, [?, D]>, k: &Tensor<{dt}, [?, ?]>, v: &Tensor<{dt}, [?, D]>"
           + (", n: i32" if cache else "") + ") {\n" + "\n".join(b for b in body if b) + "\n}\n\nfn main() {\n" + "\n".join(host)
           + f"\n    let mut o = zeros::<{odt}>([{SQ}, {D}]);"
           + (f"\n    let mut r = zeros::<f32>([{SQ}, 1]);" if lse else "")
           + f"\n    kern::<{BM}, {BN}, {D}>(o.partition([{BM}, {D}]), "
           + (f"r.partition([{BM}, 1]), " if lse else "") + "&q, &k, &v" + (f", {valid}" if cache else "")
           + ").sync();\n}\n")
    if heads and lse:
        heads = False
    if heads:
        src = _three_d(src, SQ, SK, D)
    outs = {"o": not soft} | ({"r": not soft} if lse else {})
    return src, outs, (("attn/soft" if soft else "attn") + ("/3d" if heads else "") + ("/lse" if lse else "")
                       + ("/cache" if cache else ""))


def _three_d(src: str, SQ: int, SK: int, D: int) -> str:
    """The attention program with [2, S, D] tensors: a head a grid row, [1, B, D] tiles reshaped to [B, D]."""
    head, _, rest = src.partition("fn main() {")
    for old, new in (("q.partition([BM, D]).load([block_id(0), 0])",
                      "q.partition([1, BM, D]).load([block_id(0), block_id(1), 0]).reshape([BM, D])"),
                     ("k.partition([BN, D]).load([j, 0])",
                      "k.partition([1, BN, D]).load([block_id(0), j, 0]).reshape([BN, D])"),
                     ("v.partition([BN, D]).load([j, 0])",
                      "v.partition([1, BN, D]).load([block_id(0), j, 0]).reshape([BN, D])"),
                     ("v.shape()[0]", "v.shape()[1]"), ("+ block_id(0) * BM", "+ block_id(1) * BM"),
                     ("Tensor<{0}, [BM, D]>", "Tensor<{0}, [1, BM, D]>"), (", [?, D]>", ", [?, ?, D]>"),
                     (", [?, ?]>", ", [?, ?, D]>")):
        if "{0}" in old:
            dt = re.search(r"o: &mut Tensor<(\w+),", head).group(1)  # type: ignore[union-attr]
            old, new = old.format(dt), new.format(dt)
        head = head.replace(old, new)
    head = re.sub(r"    o\.store\((.*)\);\n", r"    o.store((\1).reshape([1, BM, D]));\n", head)
    for name, rows in (("q", SQ), ("k", SK), ("v", SK)):
        rest = rest.replace(f"% 5 - 2) as", f"% 5 - 2) as", 1)
        rest = re.sub(rf"(let {name} = \(\(\(arange::<i32>\()(\d+)(\).*?\.reshape\(\[){rows}, {D}\]\);",
                      lambda m: f"{m.group(1)}{2 * int(m.group(2))}{m.group(3)}2, {rows}, {D}]);", rest)
    rest = rest.replace(f"zeros::<", "zeros::<", 1)
    rest = re.sub(rf"let mut o = zeros::<(\w+)>\(\[{SQ}, {D}\]\);", rf"let mut o = zeros::<\1>([2, {SQ}, {D}]);", rest)
    rest = rest.replace(f"o.partition([", "o.partition([1, ", 1)
    return head + "fn main() {" + rest


def program(seed: int) -> tuple[str, dict[str, bool], str]:
    r = random.Random(seed)
    return (attn if r.random() < 0.4 else gemm)(seed, r)


ENGINES: list[str] = []


def _record_engines() -> None:
    """Wrap the simulator's compile: note which tensor-core path each launch's kernel took."""
    import llsim

    from tilelang.backend.gpu import nodes as g

    old = llsim.SimDevice.compile

    def compile(self, kernel, facts=None):  # type: ignore[no-untyped-def]
        prog, abi, gk = old(self, kernel, facts)
        kinds = set()
        for op in g.walk(gk.body):
            name = type(op).__name__
            if name == "WgmmaRegA":
                kinds.add("wgmma-rs")
            elif name == "Wgmma":
                kinds.add("wgmma")
            elif name == "DotOp":
                kinds.add(op.engine)  # type: ignore[attr-defined]
            elif name in ("SmemDot",):
                kinds.add("smem-mma")
            elif name == "ZeroRows":
                kinds.add("vmask")
        ENGINES.append(f"{self.arch}:{'+'.join(sorted(kinds)) or 'none'}")
        return prog, abi, gk

    llsim.SimDevice.compile = compile  # type: ignore[method-assign]


def mutate(spec: str) -> None:
    """A planted bug, in this process only (`--mutate tilelang.x.y:OLD=>NEW`): the module's source with OLD (which
    must occur once) replaced by NEW, re-executed in place, and every name other modules imported from it
    rebound to the new definition. A search that passes its own mutants finds nothing."""
    import importlib

    name, _, edit = spec.partition(":")
    old, _, new = edit.partition("=>")
    m = importlib.import_module(name)
    import tilelang.backend  # noqa: F401  (the importers of the patched names, loaded first)
    import tilelang.backend.hopper  # noqa: F401

    src = Path(m.__file__).read_text(encoding="utf-8")  # type: ignore[arg-type]
    assert src.count(old) == 1, f"{old!r} occurs {src.count(old)} times in {name}"
    before = {k: v for k, v in m.__dict__.items() if callable(v)}
    exec(compile(src.replace(old, new), m.__file__, "exec"), m.__dict__)  # type: ignore[arg-type]
    for mod in list(sys.modules.values()):
        for k, v in list(getattr(mod, "__dict__", {}).items()):
            if mod is not m and k in before and v is before[k]:
                setattr(mod, k, m.__dict__[k])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("seed0", type=int)
    ap.add_argument("seed1", type=int)
    ap.add_argument("--arch", default="sm_90a,sm_80")
    ap.add_argument("--sm80", type=float, default=0.3, help="share of the seeds also run at sm_80")
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--out", default="/tmp/wgmma_diff")
    ap.add_argument("--budget", type=float, default=0.0)
    ap.add_argument("--mutate", default="", help="MODULE:OLD=>NEW, a planted bug (see `mutate`)")
    a = ap.parse_args()
    if a.mutate:
        mutate(a.mutate)
    import llsim

    llsim.UNDEF_FLOAT = "nan"
    _record_engines()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    bad = ran = 0
    engines: Counter[str] = Counter()
    forms: Counter[str] = Counter()
    start = time.monotonic()
    for seed in range(a.seed0, a.seed1):
        if a.budget and time.monotonic() - start > a.budget:
            break
        ran += 1
        src, onames, form = program(seed)
        forms[form] += 1
        p = out / f"s{seed}.tile"
        try:
            want = run_one(src, None, p)
        except Exception as e:  # noqa: BLE001
            print(f"seed {seed} ({form}): interpreter: {type(e).__name__}: {str(e).splitlines()[0][:200]}",
                  flush=True)
            bad += 1
            continue
        archs = [x for x in a.arch.split(",") if x != "sm_80" or random.Random(-seed).random() < a.sm80]
        for arch in archs:
            ENGINES.clear()
            try:
                got = run_one(src, arch, p)
            except Exception as e:  # noqa: BLE001
                print(f"seed {seed} {arch} ({form}): {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:300] if str(e) else ''}", flush=True)
                if a.show:
                    traceback.print_exc()
                bad += 1
                continue
            engines.update(ENGINES)
            for k, must in onames.items():
                w, gt = want[k], got[k]
                if must or w.dtype.kind in "iub":
                    ok = np.array_equal(w, gt, equal_nan=w.dtype.kind == "f")
                else:
                    w64, g64 = w.astype(np.float64), gt.astype(np.float64)
                    ok = np.allclose(g64, w64, rtol=2e-2, atol=2e-2, equal_nan=True)
                if not ok:
                    bad += 1
                    diff = np.argwhere(~np.isclose(gt.astype(np.float64), w.astype(np.float64), rtol=1e-6,
                                                   atol=1e-6, equal_nan=True))
                    print(f"seed {seed} {arch} ({form}, {'/'.join(ENGINES)}) {k}: DISAGREE at {len(diff)} of "
                          f"{w.size}, first {diff[:3].tolist()} -> {p}", flush=True)
                    if a.show:
                        print(src)
    print(f"wgmma_diff {a.arch} seeds {a.seed0}..{a.seed0 + ran}: {ran} programs, {bad} problems "
          f"({time.monotonic() - start:.0f} s); forms {dict(forms)}; engines {dict(engines)}", flush=True)


if __name__ == "__main__":
    main()
