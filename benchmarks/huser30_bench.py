"""huser30 (round 29): six serving-stack kernels of tests/user/programs/v07-v17 timed on the GPU against PyTorch on
the same CUDA tensors (the Python API, in place), each result compared with NumPy (or PyTorch's own result)
first. Run by benchmarks/huser30_device.sh; `--cpu` runs every call once on small NumPy arrays on the
interpreter (no PyTorch: a check of the calls themselves, no timings).

Columns: the Tile kernel's (or pipeline's) median ms between CUDA events, PyTorch's, and torch / tile (above 1:
Tile faster)."""

from __future__ import annotations

from typing import Any

import numpy as np
from _user_bench import CPU, ROWS, F, P, arr, bench, close, host, print_rows, torch

import tilelang

part = tilelang.partition


def bf16_np(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even), as f32: what a bf16 tensor holds."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)


def bf16(x: np.ndarray) -> Any:
    """A bf16 CUDA tensor of `x` (on the interpreter: the f32 array, which a `bf16` parameter takes)."""
    return x if CPU else torch.from_numpy(np.ascontiguousarray(x)).cuda().to(torch.bfloat16)


def main() -> None:
    rng = np.random.default_rng(30)

    # v09: fused residual add + RMSNorm, bf16 in place (both outputs), one row a block
    t9, h9 = (5, 640) if CPU else (4096, 4096)
    bn9 = 1024 if CPU else 4096
    m09 = tilelang.load(P / "v09_fused_add_rmsnorm_bf16_wide.tile")
    x9 = bf16_np(rng.standard_normal((t9, h9), dtype=np.float32))
    r9 = bf16_np(rng.standard_normal((t9, h9), dtype=np.float32) * 4)
    w9 = bf16_np(rng.random(h9, dtype=np.float32) + 0.5)
    X9, R9, W9 = bf16(x9), bf16(r9), bf16(w9)
    op09 = m09.fused_add_rms_norm(part(X9, [1, bn9]), part(R9, [1, bn9]), W9, 1e-6)
    z9 = bf16_np(x9 + r9)
    want9 = z9 / np.sqrt((z9.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6) * w9

    def ref09() -> Any:
        z = X9 + R9
        return (z.float() * torch.rsqrt(z.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16) * W9

    # (the op runs in place: the check reads the first call's result; the timed calls repeat it on its output)
    bench("v09 fused add+RMSNorm bf16 4096^2", op09.launch, True, None if CPU else ref09,
          lambda: close(X9, want9, 2e-2))

    # v10: per-token int8 + fp8-e4m3 quantisation (one pass writes both) vs torch's two
    t10, h10 = (4, 1000) if CPU else (4096, 4096)
    bn10 = 1024 if CPU else 4096
    m10 = tilelang.load(P / "v10_per_token_int8_fp8_quant.tile")
    x10 = rng.standard_normal((t10, h10), dtype=np.float32) * 3
    X10 = arr(x10)
    codes, q8, sc = arr(np.zeros((t10, h10), np.uint8)), arr(np.zeros((t10, h10), np.int8)), arr(
        np.zeros((t10, 2), np.float32))
    op10 = m10.quant_rows(part(codes, [1, bn10]), part(q8, [1, bn10]), part(sc, [1, 2]), X10)
    s10 = np.abs(x10).max(1, keepdims=True) / np.float32(127)
    want10 = np.clip(np.rint(x10 / s10), -127, 127)

    def ref10() -> Any:
        amax = X10.abs().amax(1, keepdim=True)
        qi = (X10 / (amax / 127)).round().clamp(-127, 127).to(torch.int8)
        qf = (X10 / (amax / 448)).clamp(-448, 448).to(torch.float8_e4m3fn)
        return qi, qf

    bench("v10 per-token int8+fp8 quant 4096^2", op10.launch, True, None if CPU else ref10,
          lambda: close(q8, want10, 0))

    # v13: the sampler, temperature / top-k / top-p a row, a row a block
    r13, v13 = (6, 1000) if CPU else (256, 32000)
    tile13 = 1024 if CPU else 32768
    m13 = tilelang.load(P / "v13_sampling_temp_topk_topp_rows.tile")
    lg13 = rng.standard_normal((r13, v13), dtype=np.float32) * 3
    L13 = arr(lg13)
    temps, topk = arr(np.full(r13, 0.8, np.float32)), arr(np.full(r13, 50, np.int32))
    topp, u13 = arr(np.full(r13, 0.9, np.float32)), arr(rng.random(r13, dtype=np.float32))
    tok13, lp13 = arr(np.zeros(r13, np.int32)), arr(np.zeros(r13, np.float32))
    op13 = m13.sample_rows[tile13](part(tok13, [1]), part(lp13, [1]), L13, temps, topk, topp, u13)

    def chk13() -> str:
        top50 = np.argsort(-host(L13), 1, kind="stable")[:, :50]
        return "same" if all(host(tok13)[r] in top50[r] for r in range(r13)) else "DIFFERENT (outside top-50)"

    def ref13() -> Any:   # vLLM's apply_top_k_top_p on sorted logits, then a draw
        lg = L13 / 0.8
        srt, idx = lg.sort(dim=-1, descending=False)
        kth = srt.gather(1, torch.full((r13, 1), v13 - 50, device=lg.device))
        srt = srt.masked_fill(srt < kth, -float("inf"))
        cum = srt.softmax(-1).cumsum(-1)
        srt = srt.masked_fill(cum <= 1 - 0.9, -float("inf"))
        probs = torch.empty_like(srt).scatter_(1, idx, srt).softmax(-1)
        return torch.multinomial(probs, 1)

    bench("v13 sampler 256 x 32000 (k 50, p 0.9)", op13.launch, True, None if CPU else ref13, chk13)

    # v14: cross-entropy forward + backward in place (ignore_index, smoothing 0.1) vs F.cross_entropy + autograd
    r14, v14 = (6, 5000) if CPU else (4096, 32000)
    m14 = tilelang.load(P / "v14_cross_entropy_ignore_smoothing_inplace.tile")
    lg14 = rng.standard_normal((r14, v14), dtype=np.float32) * 2
    lab14 = rng.integers(0, v14, r14).astype(np.int32)
    lab14[::7] = -100
    X14, LAB14 = arr(lg14.copy()), arr(lab14)
    G14 = arr(lg14.copy())
    lse14, loss14 = arr(np.zeros(r14, np.float32)), arr(np.zeros(r14, np.float32))
    tot14, nv14 = arr(np.zeros(1, np.float32)), arr(np.zeros(1, np.int32))

    def run14() -> None:
        m14.xent_fwd[4096](part(lse14, [1]), part(loss14, [1]), X14, LAB14, tot14, nv14, -100, 0.1).sync()
        m14.xent_bwd[4096](part(G14, [1, 4096]), lse14, LAB14, nv14, v14, -100, 0.1).sync()

    def chk14() -> str:
        x = lg14.astype(np.float64)
        lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
        return close(lse14, lse, 1e-5)

    def ref14() -> Any:
        xt = torch.from_numpy(lg14).cuda().requires_grad_(True)
        loss = F.cross_entropy(xt, LAB14.long(), ignore_index=-100, label_smoothing=0.1)
        loss.backward()
        return xt.grad

    # (times the two launches as a Python pipeline; torch's includes the autograd graph and a copy of the logits)
    bench("v14 xent fwd+bwd 4096 x 32000", run14, False, None if CPU else ref14, chk14)

    # v15: log-softmax over Qwen2's 151,936 vocab, bf16 logits -> f32 log-probs, split rows + last_block
    r15, v15 = (3, 151936) if CPU else (64, 151936)
    m15 = tilelang.load(P / "v15_log_softmax_150k_vocab_split.tile")
    lg15 = bf16_np(rng.standard_normal((r15, v15), dtype=np.float32) * 2)
    X15 = bf16(lg15)
    nc = -(-v15 // 4096)
    pm, ps, lse15 = (arr(np.zeros((r15, nc), np.float32)), arr(np.zeros((r15, nc), np.float32)),
                     arr(np.zeros((r15, 1), np.float32)))
    y15 = arr(np.zeros((r15, v15), np.float32))

    def run15() -> None:
        m15.chunk_lse[4096](part(pm, [1, 1]), part(ps, [1, 1]), part(lse15, [1, 1]), X15).sync()
        m15.sub_lse[4096](part(y15, [1, 4096]), X15, lse15).sync()

    x15 = lg15.astype(np.float64)
    want15 = x15 - (np.log(np.exp(x15 - x15.max(1, keepdims=True)).sum(1, keepdims=True)) + x15.max(1, keepdims=True))
    bench("v15 log_softmax 64 x 151936 bf16", run15, False,
          None if CPU else (lambda: torch.log_softmax(X15.float(), -1)), lambda: close(y15, want15, 1e-5))

    # v12: grouped GEMM over 8 experts with run-time group sizes vs a loop of per-expert matmuls
    e12, k12, n12 = (6, 96, 64) if CPU else (8, 2048, 2048)
    sizes = np.array([0, 13, 40, 1, 0, 46]) if CPU else rng.multinomial(8192, np.ones(8) / 8)
    ends = np.cumsum(sizes).astype(np.int32)
    m_tot = int(ends[-1])
    m12 = tilelang.load(P / "v12_grouped_gemm_runtime_groups.tile")
    x12 = bf16_np(rng.standard_normal((m_tot, k12), dtype=np.float32))
    w12 = bf16_np(rng.standard_normal((e12, k12, n12), dtype=np.float32) * 0.05)
    X12, W12, E12 = bf16(x12), bf16(w12), arr(ends)
    y12 = arr(np.zeros((m_tot, n12), np.float32))
    b12 = 32 if CPU else 64
    op12 = m12.grouped_gemm[b12, b12, 32, e12](part(y12, [b12, b12]), X12, W12, E12)
    starts = np.concatenate([[0], ends[:-1]])

    def chk12() -> str:
        r = slice(0, min(m_tot, 256))
        grp = np.searchsorted(ends, np.arange(m_tot)[r], side="right")
        want = np.einsum("mk,mkn->mn", x12[r].astype(np.float64), w12[grp].astype(np.float64))
        return close(host(y12)[r], want, 1e-3)

    def ref12() -> Any:
        return torch.cat([X12[int(s):int(t)] @ W12[g] for g, (s, t) in enumerate(zip(starts, ends, strict=True))])

    bench("v12 grouped GEMM 8 x (8192/8) x 2048^2", op12.launch, True, None if CPU else ref12, chk12)

    print_rows(ROWS)


if __name__ == "__main__":
    main()
