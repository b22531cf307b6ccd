"""huser26 (round 25): the kernels of tests/user/programs/n*.tile that PyTorch has an equivalent of, timed on the
GPU against PyTorch on the same CUDA tensors (the Python API, in place), each result compared with PyTorch's
first. Run by benchmarks/huser26_device.sh; `--cpu` runs every call once on tiny NumPy arrays on the interpreter
(no PyTorch: a check of the calls themselves, no timings).

Columns: the Tile kernel's median ms (CUDA events around `.launch()`), PyTorch's, and torch / tile (above 1:
Tile faster)."""

from __future__ import annotations

from typing import Any

import numpy as np
from _user_bench import CPU, F, P, arr, bench, close, torch

import tilelang


def main() -> None:
    rng = np.random.default_rng(26)

    # n01: cross-entropy forward (label smoothing 0.1, ignore_index -100): per-row loss and lse, the sum by atomics
    n, v = (16, 1000) if CPU else (4096, 32000)
    m01 = tilelang.load(P / "n01_cross_entropy_lse_fwd_bwd.tile")
    x = arr(rng.standard_normal((n, v), dtype=np.float32) * 3)
    tg = rng.integers(0, v, n).astype(np.int32)
    tg[::7] = -100
    T = arr(tg)
    loss, lse = arr(np.zeros(n, np.float32)), arr(np.zeros(n, np.float32))
    total, kept = arr(np.zeros(1, np.float32)), arr(np.zeros(1, np.int32))
    bv = 256 if CPU else 2048
    op = m01.xent_fwd[8, bv](tilelang.partition(loss, [8]), tilelang.partition(lse, [8]), x, T, total, kept, 0.1)

    def ref01() -> Any:
        return F.cross_entropy(x, T.long(), ignore_index=-100, label_smoothing=0.1, reduction="none")

    bench("n01 cross-entropy fwd (V=32000)", op.launch, True, ref01, lambda: "ran" if CPU else close(loss, ref01(), 1e-4))

    # n02: AdamW over one flat parameter (torch's fused AdamW on the same numbers)
    np_ = 4096 if CPU else 1 << 24
    m02 = tilelang.load(P / "n02_adamw_several_tensors.tile")
    p0 = rng.standard_normal(np_, dtype=np.float32)
    g = arr(rng.standard_normal(np_, dtype=np.float32))
    p, m, vv = arr(p0.copy()), arr(np.zeros(np_, np.float32)), arr(np.zeros(np_, np.float32))
    op = m02.adamw[1024](tilelang.partition(p, [1024]), tilelang.partition(m, [1024]), tilelang.partition(vv, [1024]),
                         g, 1, 1e-2, 0.01)
    if CPU:
        bench("n02 AdamW step (16M)", op.launch, True, lambda: None, lambda: "ran")
    else:
        tp = torch.nn.Parameter(torch.from_numpy(p0.copy()).cuda())
        tp.grad = g.clone()
        opt = torch.optim.AdamW([tp], lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, fused=True)

        def chk02() -> str:
            opt.step()
            return close(p, tp.detach(), 1e-5)

        bench("n02 AdamW step (16M)", op.launch, True, opt.step, chk02)

    # n03: GroupNorm forward, 32 groups of 8 channels x 64 x 64 pixels
    b3, c3, g3, hw = (2, 8, 4, 50) if CPU else (32, 256, 32, 4096)
    m03 = tilelang.load(P / "n03_group_norm_fwd_bwd.tile")
    x3 = rng.standard_normal((b3, c3, hw), dtype=np.float32)
    gam = rng.standard_normal(c3, dtype=np.float32)
    bet = rng.standard_normal(c3, dtype=np.float32)
    X3 = arr(x3.reshape(b3 * g3, c3 // g3, hw))
    y3 = arr(np.zeros((b3 * g3, c3 // g3, hw), np.float32))
    st = arr(np.zeros((b3 * g3, 2), np.float32))
    pw = 64 if CPU else 4096
    op = m03.gn_fwd[c3 // g3, pw](tilelang.partition(y3, [1, c3 // g3, pw]), tilelang.partition(st, [1, 2]), X3,
                                  arr(gam.reshape(g3, c3 // g3)), arr(bet.reshape(g3, c3 // g3)), g3)

    def ref03() -> Any:
        return F.group_norm(X3.reshape(b3, c3, hw), g3, arr(gam), arr(bet), 1e-5)

    bench("n03 GroupNorm fwd", op.launch, True, ref03, lambda: "ran" if CPU else close(y3.reshape(b3, c3, hw), ref03(), 1e-4))

    # n06: a 4-bit weight-only linear layer against an f16 matmul of the dequantised weight
    mm, kk, nn = (32, 256, 64) if CPU else (64, 4096, 4096)
    m06 = tilelang.load(P / "n06_int4_dequant_matmul.tile")
    q = rng.integers(0, 16, (kk, nn)).astype(np.uint8)
    sc = (rng.random((kk // 32, nn)) * 0.02 + 0.005).astype(np.float16)
    zp = np.floor(rng.random((kk // 32, nn)) * 15).astype(np.float16)
    xq = arr(rng.standard_normal((mm, kk)).astype(np.float16))
    bq = arr(rng.standard_normal(nn).astype(np.float16))
    packed = arr(np.zeros((kk // 2, nn), np.uint8))
    m06.pack4[32](tilelang.partition(packed, [16, 32]), arr(q)).sync()
    yq = arr(np.zeros((mm, nn), np.float32))
    op = m06.w4a16[32, 32](tilelang.partition(yq, [32, 32]), xq, packed, arr(sc), arr(zp), bq)
    grp = np.arange(kk) // 32
    wd = arr(((q.astype(np.float16) - zp[grp]) * sc[grp]).astype(np.float16))

    def ref06() -> Any:
        return (xq @ wd).float() + bq.float()

    bench("n06 W4A16 linear (vs f16 dense)", op.launch, True, ref06, lambda: "ran" if CPU else close(yq, ref06(), 2e-2))

    # n09: QK RMSNorm + NeoX RoPE in place on q [T, 32, 128]
    t9, h9 = (8, 8) if CPU else (8192, 32)
    m09 = tilelang.load(P / "n09_qk_norm_rope_in_place.tile")
    q0 = rng.standard_normal((t9, h9, 128), dtype=np.float32)
    wq = (rng.standard_normal(128) * 0.1 + 1).astype(np.float32)
    Q = arr(q0.copy())
    pos = arr(np.arange(t9, dtype=np.int32) + 29)
    Wq = arr(wq)
    op = m09.qk_norm_rope(tilelang.partition(Q, [4, h9, 128]), Wq, pos)
    Q0 = arr(q0)

    def ref09() -> Any:
        xn = Q0 * torch.rsqrt((Q0 * Q0).mean(-1, keepdim=True) + 1e-6) * Wq
        inv = 1e6 ** (-2 * torch.arange(64, device="cuda", dtype=torch.float32) / 128)
        ang = pos.float()[:, None, None] * inv
        a, b = xn[..., :64], xn[..., 64:]
        return torch.cat([a * torch.cos(ang) - b * torch.sin(ang), b * torch.cos(ang) + a * torch.sin(ang)], -1)

    def chk09() -> str:
        return "ran" if CPU else close(Q, ref09(), 1e-2)   # f32 angles at positions to 8,220: ~1e-3 rad apart

    # (in place: each timed launch rotates Q again; the check ran on the first)
    bench("n09 QK-norm + RoPE in place", op.launch, True, ref09, chk09)

    # n10: top-2 MoE routing of 64k tokens over 8 experts
    t10 = 64 if CPU else 1 << 16
    m10 = tilelang.load(P / "n10_moe_top2_router.tile")
    lg = arr(rng.standard_normal((t10, 8), dtype=np.float32))
    ex, wt = arr(np.zeros((t10, 2), np.int32)), arr(np.zeros((t10, 2), np.float32))
    cnt, ps = arr(np.zeros(8, np.int32)), arr(np.zeros(8, np.float32))
    op = m10.route[64, 8](tilelang.partition(ex, [64, 2]), tilelang.partition(wt, [64, 2]), lg, cnt, ps)

    def ref10() -> Any:
        pr = torch.softmax(lg, 1)
        val, idx = torch.topk(pr, 2, 1)
        return val / val.sum(1, keepdim=True), idx

    bench("n10 MoE top-2 router", op.launch, True, ref10, lambda: "ran" if CPU else close(wt, ref10()[0], 1e-5))

    # n16: SwiGLU backward, bf16 [8192, 11008]
    r16, c16 = (16, 300) if CPU else (8192, 11008)
    m16 = tilelang.load(P / "n16_swiglu_backward_bf16.tile")
    if CPU:
        g16, u16, d16 = (rng.standard_normal((r16, c16), dtype=np.float32) for _ in range(3))
        dg, du, hh = (np.zeros((r16, c16), np.float32) for _ in range(3))
    else:
        g16, u16, d16 = (torch.randn(r16, c16, device="cuda").bfloat16() for _ in range(3))
        dg, du, hh = (torch.zeros(r16, c16, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    op = m16.swiglu_bwd(tilelang.partition(dg, [8, 256]), tilelang.partition(du, [8, 256]),
                        tilelang.partition(hh, [8, 256]), g16, u16, d16)

    def ref16() -> Any:
        gf, uf, df = g16.float(), u16.float(), d16.float()
        s = torch.sigmoid(gf)
        return (df * uf * s * (1 + gf * (1 - s))).bfloat16(), (df * gf * s).bfloat16()

    bench("n16 SwiGLU backward bf16", op.launch, True, ref16, lambda: "ran" if CPU else close(dg, ref16()[0], 1e-2))

    # n19: fused add + RMSNorm backward with dw by the group's last block, [2048, 1024] in [32, 1024] tiles
    r19, d19 = (64, 384) if CPU else (2048, 1024)
    m19 = tilelang.load(P / "n19_add_rmsnorm_backward_last_block.tile")
    xs = [arr(rng.standard_normal((r19, d19), dtype=np.float32)) for _ in range(4)]
    w19 = arr((rng.standard_normal(d19) * 0.2 + 1).astype(np.float32))
    ds = arr(np.zeros((r19, d19), np.float32))
    nb = r19 // 32
    part, dw = arr(np.zeros((nb, d19), np.float32)), arr(np.zeros((1, d19), np.float32))
    nbp = 1 << max(0, (nb - 1).bit_length())
    op = m19.add_rmsnorm_bwd[32, d19, nbp](tilelang.partition(ds, [32, d19]), tilelang.partition(part, [1, d19]),
                                          tilelang.partition(dw, [1, d19]), xs[0], xs[1], w19, xs[2], xs[3])

    def ref19() -> Any:
        s = xs[0] + xs[1]
        inv = torch.rsqrt((s * s).mean(1, keepdim=True) + 1e-6)
        c = (xs[2] * w19 * s).mean(1, keepdim=True)
        return xs[2] * w19 * inv - s * c * inv ** 3 + xs[3], (xs[2] * s * inv).sum(0)

    bench("n19 add+RMSNorm bwd (+dw)", op.launch, True, ref19, lambda: "ran" if CPU else close(dw[0], ref19()[1], 1e-3))


if __name__ == "__main__":
    main()
