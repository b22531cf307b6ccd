"""The launches of the decode engine's steps, built once per form at
start-up (`engine.TileQwen3._forms`) and per prefill chunk: a decode step
(`decode_step_ops`, with the sampler's launches, `sampling_ops`), a prefill
chunk (`prefill_chunk_ops`) and the prefill's last row (`last_row_ops`).
Each takes the engine for its kernels (`eng.k`), plan and start-up buffers,
and returns the operations (the Python API's bound launches); nothing here
launches or allocates except `sampling_ops`' own buffers."""

from __future__ import annotations

from typing import Any

from plan import _divisor_tile, _pow2_at_least, gemv_pe
from tails import hybrid_op


def sampling_ops(
    k: Any,
    be: Any,
    logits: Any,
    bmax: Any,
    tok: Any,
    pos: Any,
    hist: Any,
    temperature: float,
    top_p: float,
    seed: int,
    bc: int = 1024,
    nt: int = 16,
    rounds: int = 6,
) -> list[Any]:
    """The launches of `std::llm`'s temperature/top-p sampler for `logits`
    (`bmax`: the LM head's per-block maxima), with their buffers allocated
    here, once: prep, `rounds` search rounds, kept sums, the pick."""
    import tilelang

    P = tilelang.partition
    v = logits.shape[0]
    nc = -(-v // bc)
    nb = min(1024, _pow2_at_least(nc))
    ex = be.zeros((v,), "f32")
    zpart = be.zeros((nc,), "f32")
    mass = [be.zeros((nc, nt), "f32") for _ in range(2)]
    band = [be.zeros((nc, 2), "f32") for _ in range(2)]
    kept = be.zeros((nc,), "f32")
    kband = be.zeros((nc, 2), "f32")
    t, p = float(temperature), float(top_p)
    ops = [k.sample_prep[bc](P(ex, [bc]), P(zpart, [1]), logits, bmax, t)]
    for r in range(rounds):
        cur, prev = r % 2, (r + 1) % 2
        ops.append(
            k.nucleus_round[bc, nt, nb](
                P(mass[cur], [1, nt]),
                P(band[cur], [1, 2]),
                ex,
                zpart,
                mass[prev],
                band[prev],
                p,
                r == 0,
            )
        )
    last = (rounds - 1) % 2
    ops.append(
        k.nucleus_kept[bc, nt, nb](
            P(kept, [1]), P(kband, [1, 2]), ex, zpart, mass[last], band[last], p
        )
    )
    seq = hist.shape[0]
    ops.append(
        k.sample_pick[bc, nb, seq](
            P(tok, [1]), P(pos, [1]), P(hist, [seq]), ex, kept, kband, int(seed)
        )
    )
    return ops


def decode_step_ops(eng: Any, tc: int, ns: int) -> list[Any]:
    """The operations of one decode step, built once (checked once), with
    the attention's form `tc` in `ns` splits a KV head."""
    k, tl, c, pl = eng.k, eng.tl, eng.cfg, eng.plan
    P = tl.partition
    eps = float(c.rms_norm_eps)
    d, g, hkv = c.head_dim, c.group, c.num_key_value_heads
    bk = pl.bk
    ops = [k.embed[pl.bh](P(eng.x, [pl.bh]), eng.emb, eng.tok)]

    def nxt(name: str, li: int) -> tuple[tuple[int, int, int], tuple[Any, int, int]]:
        """(PR, PC, PL) and (tensor, first tile, tiles) of the L2 prefetch a
        GEMV issues for matrix `name` of layer `li` (`Plan.pf`; none past the
        last layer)."""
        pr, pc, *lines = pl.pf.get(name, (0, 0))
        if not pr or li >= c.num_hidden_layers:
            return (0, 0, 0), (W["o"], 0, 0)
        n = W[name].shape[0] // c.num_hidden_layers  # the layer's rows
        return (pr, pc, int(bool(lines and lines[0]))), (W[name], li * n // pr, -(-n // pr))

    def stream(name: str, li: int, y: Any, x: Any, xf: int, g: Any, z: Any, zb: int) -> Any:
        """`std::llm::stream::gemv_stream` for matrix `name` of layer `li`
        (`Plan.sk`): y += W x (xf: what x is), clearing `z`'s tiles of `zb`."""
        bn, bkk, st, mb, grid = pl.sk[name]
        n = W[name].shape[0] // c.num_hidden_layers
        zt = P(z if zb > 1 else eng.sk_z[:grid], [zb])
        kt = -(-W[name].shape[1] // bkk)  # K tiles a row
        return k.gemv_stream[bn, bkk, st, mb, xf, zb, kt](zt, y, W[name], x, g, li, n, eps)

    def residual(name: str, v: Any, li: int, then: str, tli: int) -> list[Any]:
        bn, s, bk, st = pl.bn[name], pl.splitk[name], pl.bk[name], pl.st[name]
        w, mb = W[name], pl.mb.get(name, 0)
        if name in pl.sk:
            if name == "down" and "gate_up" in pl.sk:
                return [stream(name, li, eng.x, eng.gu[li % eng.gu_slots], 2, W["ln2"], None, 1)]
            return [stream(name, li, eng.x, v, 0, W["ln2"], None, 1)]
        if name in pl.hy:
            return [hybrid_op(k, pl, c, eng.hy_z, name, eng.x, w, v, li)]
        if name in pl.qg:
            bn, bk, st, mb = pl.qg[name]
            n = w.shape[0] // c.num_hidden_layers
            return [k.gemv_add_queue[bn, bk, st, mb](P(eng.x, [bn]), w, v, li, n)]
        if name in pl.xr:  # std::llm::rows: x in registers, a row a warp
            r, mbx, *walk = pl.xr[name]
            n = w.shape[0] // c.num_hidden_layers
            if walk and walk[0]:  # the static walk, `stages` = walk[0]
                return [
                    k.gemv_rows_add_walk[r, w.shape[1], mbx, walk[0]](P(eng.x, [r]), w, v, li, n)
                ]
            return [k.gemv_rows_add[r, w.shape[1], mbx](P(eng.x, [r]), w, v, li, n)]
        if s == 1:
            gen, pf = nxt(then, tli)
            pe = gemv_pe(pl, name)
            return [k.gemv_add[bn, bk, st, mb, *gen, pe](P(eng.x, [bn]), w, v, li, *pf)]
        part = eng.part[name]
        return [
            k.gemv_splitk[bn, bk, st, mb](P(part, [1, bn]), w, v, li),
            k.add_rows[bn, s](P(eng.x, [bn]), part),
        ]

    W = eng.w
    heads = c.num_attention_heads + 2 * hkv
    # the short form (below `fma_until`; the only form without one): `Plan.aw`
    short = pl.fma_until <= 0 or (tc, ns) == (pl.short_tc, pl.short_ns or pl.ns)
    bt = pl.sbt if short and pl.sbt else pl.bt  # the attention's key tile (`Plan.sbt`: the short form's)
    # the splits as `combine_splits` reads them (the same memory)
    o_part, lse_part = eng.parts[ns]
    o_part3 = o_part.reshape(hkv, ns, g * d)
    lse_part3 = lse_part.reshape(hkv, ns, g)
    for li in range(c.num_hidden_layers):
        qkv = eng.qkv[li * heads : (li + 1) * heads]
        bn = pl.bn["qkv"]
        gen, pf = nxt("o", li)
        if pl.qr:
            qss = eng.qss[li * heads : (li + 1) * heads]
            ops.append(
                k.rms_gemv_rope[bn, bk["qkv"], pl.st["qkv"], pl.mb.get("qkv", 0), *gen](
                    P(qkv, [1, 2, bn // 2]),
                    P(qss, [1, 1, 1]),
                    W["qkv"].reshape(-1, d // 2, c.hidden_size),
                    eng.x,
                    W["ln1"],
                    W["qn"].reshape(-1, 2, d // 2),
                    W["kn"].reshape(-1, 2, d // 2),
                    eng.cos,
                    eng.sin,
                    eng.pos,
                    li,
                    c.num_attention_heads,
                    eps,
                    *pf,
                )
            )
        elif "qkv" in pl.qg:
            bn, bkq, stq, mbq = pl.qg["qkv"]
            ops.append(
                k.rms_gemv_queue[bn, bkq, stq, mbq](
                    P(qkv.reshape(-1), [bn]), W["qkv"], eng.x, W["ln1"], li, heads * d, eps
                )
            )
        elif pl.kp:  # the layer's KV cache rows into L2 from the QKV GEMV's tail
            ops.append(
                k.rms_gemv_kv[bn, bk["qkv"], pl.st["qkv"], pl.mb.get("qkv", 0), *gen,
                              gemv_pe(pl, "qkv"), pl.kp, d](
                    P(qkv.reshape(-1), [bn]), W["qkv"], eng.x, W["ln1"], li, eps, *pf,
                    eng.kc, eng.vc, eng.pos, li * hkv, hkv,
                )
            )
        else:
            ops.append(
                k.rms_gemv[bn, bk["qkv"], pl.st["qkv"], pl.mb.get("qkv", 0), *gen,
                           gemv_pe(pl, "qkv")](
                    P(qkv.reshape(-1), [bn]), W["qkv"], eng.x, W["ln1"], li, eps, *pf
                )
            )
        merged = tc == 4 and pl.fm > 0  # the split merge inside the attention
        # ... in one pass, in this form (`Plan.fl`: 1 the short form, 2 the long)
        folded = tc == 4 and bool(pl.fl & (1 if short else 2))
        # `ring_split_early`'s EA: `Plan.ea`, and 8 for the balanced key ranges (`Plan.kb`)
        kb = 8 if pl.kb else 0
        # the ring attention's trigger at its entry: `pe` (with the merge's), or "attn" in `ge` alone
        pa = int(bool(pl.pe) or "attn" in pl.ge)
        if tc == 3:
            attn = k.attn_decode_short[g, d // 2, bt]
        elif merged:
            attn = k.attn_decode_ring_merge[g, d // 2, bt, pa, ns, min(pl.fm, ns)]
        elif folded:
            # at most 16 shares a step (32 at once spill at 4B's shapes: ptxas 13.0);
            # `fl` & 4: its PE 3, no trigger (the O GEMV scheduled at its exit); `fl` & 8: its AW 1,
            # the head's last split waits for the others and merges (`arrive_wait`)
            attn = k.attn_decode_ring_fold[g, d // 2, bt, 3 if pl.fl & 4 else pa, pl.ea | kb, ns, min(ns, 16),
                                            int(bool(pl.fl & 8))]
        elif tc == 4 and pl.aw == 8 and short:
            attn = k.attn_decode_ring_w8[g, d // 2, bt, pa, (pl.ea & 3) | kb]
        elif tc == 4 and pl.ea:
            attn = k.attn_decode_ring_early[g, d // 2, bt, pa, pl.ea | kb]
        elif tc == 4:
            attn = k.attn_decode_ring[g, d // 2, bt, pa]
        else:
            attn = k.attn_decode[g, d // 2, bt, tc]
        if pl.qr:
            attn_pre = k.attn_decode_ring_pre[g, d // 2, bt, pa, d // pl.bn["qkv"]]
            ops.append(
                attn_pre(
                    P(o_part, [1, g, d]),
                    P(lse_part, [1, g]),
                    qkv,
                    qss,
                    eng.kc,
                    eng.vc,
                    eng.pos,
                    li,
                    eps,
                )
            )
        else:
            merged_out = [P(eng.attn, [1, g, d])] if merged or folded else []
            ops.append(
                attn(
                    P(o_part, [1, g, d]),
                    P(lse_part, [1, g]),
                    *merged_out,
                    qkv,
                    W["qn"],
                    W["kn"],
                    eng.cos,
                    eng.sin,
                    eng.kc,
                    eng.vc,
                    eng.pos,
                    li,
                    eps,
                )
            )
        if merged or folded:
            ops += residual("o", eng.attn.reshape(-1), li, "gate_up", li)
        elif pl.om[0]:
            merge_o = k.merge_gemv_add[pl.om[0], d, ns, pl.om[1]]
            part = P(eng.part["om"], [1, pl.om[0]])
            ops.append(merge_o(part, eng.x, W["o"], o_part3, lse_part3, li))
        else:
            dc = pl.dc or d
            # the merge's trigger at its entry: `pe` (with the ring attention's), or `me` alone
            pe = int(bool(pl.pe and tc == 4) or bool(pl.me))
            if pl.mr:  # one warp folding the splits a row at a time
                merge = k.combine_rows[ns, dc, pl.mr, pe]
                ops.append(merge(P(eng.attn, [1, 1, dc]), o_part3, lse_part3))
            elif pl.mg:  # std::attention's merge: a block (KV head, chunk), [NS, G] weights
                ops.append(
                    k.decode_combine["f32", g, ns, dc](P(eng.attn, [1, g, dc]), o_part, lse_part)
                )
            else:
                merge = k.combine_splits[ns, dc, pe]
                ops.append(merge(P(eng.attn, [1, 1, dc]), o_part3, lse_part3))
            ops += residual("o", eng.attn.reshape(-1), li, "gate_up", li)
        bn = pl.bn["gate_up"]
        gen, pf = nxt("down", li)
        if "gate_up" in pl.sk:
            slot, nxt_slot = eng.gu[li % eng.gu_slots], eng.gu[(li + 1) % eng.gu_slots]
            ops.append(stream("gate_up", li, slot, eng.x, 1, W["ln2"], nxt_slot, eng.gu_zb))
        elif "gate_up" in pl.qg:
            bn, bkg, stg, mbg = pl.qg["gate_up"]
            ops.append(
                k.rms_gate_up_queue[bn, bkg, stg, mbg](
                    P(eng.h, [bn]), W["gate_up"], eng.x, W["ln2"], li, c.intermediate_size, eps
                )
            )
        elif "gate_up" in pl.xr:
            r, mbx, *walk = pl.xr["gate_up"]
            kern = (
                k.rms_gate_up_rows_walk[r, W["gate_up"].shape[1], mbx, walk[0]]
                if walk and walk[0]
                else k.rms_gate_up_rows[r, W["gate_up"].shape[1], mbx]
            )
            ops.append(
                kern(P(eng.h, [r]), W["gate_up"], eng.x, W["ln2"], li, c.intermediate_size, eps)
            )
        else:
            ops.append(
                k.rms_gate_up[bn, bk["gate_up"], pl.st["gate_up"], pl.mb.get("gate_up", 0), *gen,
                              gemv_pe(pl, "gate_up")](
                    P(eng.h, [bn]), W["gate_up"], eng.x, W["ln2"], li, eps, *pf
                )
            )
        ops += residual("down", eng.h, li, "qkv", li + 1)
    # every layer's key and value of this token into the caches, at once
    if pl.qr:
        append = k.kv_append_pre[hkv, pl.ch, d, d // pl.bn["qkv"]]
        ops.append(
            append(
                P(eng.kc, [hkv, pl.ch, d]),
                P(eng.vc, [hkv, pl.ch, d]),
                eng.qkv,
                eng.qss,
                eng.pos,
                c.num_attention_heads,
                eps,
            )
        )
    else:
        ops.append(
            k.kv_append[hkv, pl.ch, d](
                P(eng.kc, [hkv, pl.ch, d]),
                P(eng.vc, [hkv, pl.ch, d]),
                eng.qkv,
                W["kn"],
                eng.cos,
                eng.sin,
                eng.pos,
                c.num_attention_heads,
                eps,
            )
        )
    bn = pl.bn["lm"]
    ops.append(
        k.rms_gemv_argmax[bn, bk["lm"], pl.st["lm"], pl.mb.get("lm", 0)](
            P(eng.logits, [bn]),
            P(eng.bmax, [1]),
            P(eng.barg, [1]),
            eng.lm,
            eng.x,
            eng.norm,
            eps,
        )
    )
    n_before = len(ops)
    if eng.sampling is None:
        ops.append(
            (k.argmax_wide[pl.tw, eng.seq] if pl.tw
             else k.argmax_fold[pl.tk, eng.seq] if pl.tk else k.argmax_step[pl.bc, eng.seq])(
                P(eng.tok, [1]),
                P(eng.pos, [1]),
                P(eng.hist, [eng.seq]),
                eng.bmax,
                eng.barg,
            )
        )
    else:
        temperature, top_p, seed = eng.sampling
        ops += sampling_ops(
            k,
            eng.be,
            eng.logits,
            eng.bmax,
            eng.tok,
            eng.pos,
            eng.hist,
            temperature,
            top_p,
            seed,
            bc=pl.bc,
        )
    eng.n_choice = len(ops) - n_before
    return ops


def prefill_chunk_ops(eng: Any, p0: int, m: int) -> list[Any]:
    """The launches of one prefill chunk of `m` rows at positions p0 ..
    (views of the start-up buffers; built once per chunk, captured once:
    the attention takes p0 as an argument, the other kernels read it
    from `eng.p0`)."""
    k, tl, c, pl = eng.k, eng.tl, eng.cfg, eng.plan
    P = tl.partition
    eps = float(c.rms_norm_eps)
    d, g, hq, hkv = c.head_dim, c.group, c.num_attention_heads, c.num_key_value_heads
    bm, bn, bk = pl.mm
    x, xn, dd = eng.px[:m], eng.pxn[:m], eng.pd[:m]
    qkv = eng.pqkv[: m * (hq + 2 * hkv)]
    qkv2 = qkv.reshape(m, (hq + 2 * hkv) * d)
    o = eng.po[:m]
    gu, h = eng.pgu[:m], eng.ph[:m]
    bh = _pow2_at_least(c.hidden_size)  # a whole row a block
    bs = _divisor_tile(c.intermediate_size, 1024)

    def norm(g: Any, add: bool) -> Any:
        """x += the last sublayer's output (`add`); xn = rmsnorm(x) g in bf16."""
        return k.add_rms_rows[bh](P(x, [1, bh]), P(xn, [1, bh]), dd, g, add, eps)

    ops = [k.embed_rows[pl.bh](P(x, [1, pl.bh]), eng.emb, eng.ptoks[:m])]
    for li, L in enumerate(eng.layers):
        kc = eng.kc[li * hkv : (li + 1) * hkv]
        vc = eng.vc[li * hkv : (li + 1) * hkv]
        ops.append(norm(L["ln1"], li > 0))
        ops.append(k.gemm[bm, bn, bk](P(qkv2, [bm, bn]), xn, L["qkv"]))
        ops.append(
            k.rope_kv_rows[hkv, pl.chp, d, g](
                P(kc, [hkv, pl.chp, d]),
                P(vc, [hkv, pl.chp, d]),
                P(eng.pq, [hq, pl.chp, d]),
                qkv,
                L["qn"],
                L["kn"],
                eng.cos,
                eng.sin,
                eng.p0,
                m,
                eps,
            )
        )
        ops.append(k.attn_prefill[pl.bq, d, pl.bq, g](P(o, [pl.bq, 1, d]), eng.pq, kc, vc, p0, m))
        ops.append(k.gemm[bm, bn, bk](P(dd, [bm, bn]), o.reshape(m, hq * d), L["o"]))
        ops.append(norm(L["ln2"], True))
        ops.append(k.gemm[bm, bn, bk](P(gu, [bm, bn]), xn, L["gate_up"]))
        ops.append(k.swiglu_rows[bs](P(h, [1, bs]), gu))
        ops.append(k.gemm[bm, bn, bk](P(dd, [bm, bn]), h, L["down"]))
    ops.append(norm(eng.norm.reshape(-1), True))  # the last residual add
    return ops


def last_row_ops(eng: Any, m: int) -> list[Any]:
    """Logits and the token choice from row m - 1 of the last chunk."""
    k, tl, pl = eng.k, eng.tl, eng.plan
    P = tl.partition
    bn = pl.bn["lm"]
    ops = [
        k.rms_gemv_argmax[bn, pl.bk["lm"], pl.st["lm"], pl.mb.get("lm", 0)](
            P(eng.logits, [bn]),
            P(eng.bmax, [1]),
            P(eng.barg, [1]),
            eng.lm,
            eng.px[m - 1],
            eng.norm,
            float(eng.cfg.rms_norm_eps),
        )
    ]
    # the token choice (argmax_step, or the sampling kernels): tok, pos += 1, history
    return ops + eng.ops[-eng.n_choice :]
