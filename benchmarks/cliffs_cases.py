"""The cases of `benchmarks/cliffs.py`: kernels written the way a user writes
them from docs/ and examples/ (not copied from stdlib), each with the PyTorch
call that does the same work.

A case is a Tile program, the kernel to launch, its generics, its arguments
(tensors with their shapes and, for `&mut` ones, the partition's tile;
scalars), a FLOP (or byte) count and the PyTorch function of the same
tensors. `cliffs.py` lowers each for sm_90a (`--dry`) or times it on the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------- programs

# examples/gemm.tile's loop, the element type a parameter, the output in the
# inputs' type (as torch.matmul gives it)
GEMM = """
kernel fn gemm<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ELEM, [BM, BN]>,
                                                           a: &Tensor<ELEM, [?, ?]>,
                                                           b: &Tensor<ELEM, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let i = block_id(0);
    let j = block_id(1);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([i, k]), pb.load([k, j]), acc);
    }
    c.store(acc as ELEM);
}

// B stored [N, K] (a linear layer's weight), used transposed
kernel fn gemm_nt<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ELEM, [BM, BN]>,
                                                              a: &Tensor<ELEM, [?, ?]>,
                                                              w: &Tensor<ELEM, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    c.store(acc as ELEM);
}

// A stored [K, M], used transposed
kernel fn gemm_tn<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ELEM, [BM, BN]>,
                                                              at: &Tensor<ELEM, [?, ?]>,
                                                              b: &Tensor<ELEM, [?, ?]>) {
    let pa = at.partition([BK, BM]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pb.num_tiles(0) {
        acc = mma(pa.load([k, block_id(0)]).transpose(), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc as ELEM);
}

// a linear layer: B stored [N, K], a bias per column and a ReLU in the epilogue
kernel fn linear<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ELEM, [BM, BN]>,
                                                             a: &Tensor<ELEM, [?, ?]>,
                                                             w: &Tensor<ELEM, [?, ?]>,
                                                             bias: &Tensor<f32, [?]>) {
    let pa = a.partition([BM, BK]);
    let pw = w.partition([BN, BK]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pw.load([block_id(1), k]).transpose(), acc);
    }
    let b = bias.partition([BN]).load([block_id(1)]).reshape([1, BN]);
    c.store(maximum(acc + b, 0.0) as ELEM);
}

// the same product spelled with `dot` and `+`
kernel fn gemm_dot<const BM: i32, const BN: i32, const BK: i32>(c: &mut Tensor<ELEM, [BM, BN]>,
                                                               a: &Tensor<ELEM, [?, ?]>,
                                                               b: &Tensor<ELEM, [?, ?]>) {
    let pa = a.partition([BM, BK]);
    let pb = b.partition([BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for k in 0..pa.num_tiles(1) {
        acc = acc + dot(pa.load([block_id(0), k]), pb.load([k, block_id(1)]));
    }
    c.store(acc as ELEM);
}
"""

# A flash-attention loop as a user writes it from the brief and
# examples/attention.tile's tensors ([B * H, S, D], one block per (head, BM
# query rows)): natural `exp`, the scale on the scores, the keys past the end
# masked. The spellings below change one thing each.
ATTN = """
kernel fn attn<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let n = k.shape()[1];
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys < n, s, -1.0e30);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// own names, exp2 with log2(e) folded into the scale
kernel fn attn_exp2<const BM: i32, const BN: i32, const D: i32>(out: &mut Tensor<ELEM, [1, BM, D]>,
        query: &Tensor<ELEM, [?, ?, D]>, key: &Tensor<ELEM, [?, ?, D]>, value: &Tensor<ELEM, [?, ?, D]>,
        sm_scale: f32) {
    let head = block_id(0);
    let c = sm_scale * 1.4426950408889634;
    let qb = query.partition([1, BM, D]).load([head, block_id(1), 0]).reshape([BM, D]);
    let kp = key.partition([1, BN, D]);
    let vp = value.partition([1, BN, D]);
    let mut row_max = full::<f32>([BM, 1], -1.0e30);
    let mut denom = zeros::<f32>([BM, 1]);
    let mut o = zeros::<f32>([BM, D]);
    for blk in 0..kp.num_tiles(1) {
        let kb = kp.load([head, blk, 0]).reshape([BN, D]);
        let vb = vp.load([head, blk, 0]).reshape([BN, D]);
        let scores = mma(qb, kb.transpose(), zeros::<f32>([BM, BN])) * c;
        let new_max = maximum(row_max, max(scores, 1).reshape([BM, 1]));
        let w = exp2(scores - new_max);
        let corr = exp2(row_max - new_max);
        denom = denom * corr + sum(w, 1).reshape([BM, 1]);
        o = mma(w as ELEM, vb, o * corr);
        row_max = new_max;
    }
    out.store((o / denom).reshape([1, BM, D]) as ELEM);
}

// the scale applied to q once, before the loop
kernel fn attn_qscale<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let qt = ((q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]) as f32) * (scale * 1.4426950408889634)) as ELEM;
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN]));
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp2(s - mn);
        let alpha = exp2(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// `attn` with the scale folded into the exponent by one fma and the max taken on the unscaled scores
// (std::attention's spelling, without its stale max; for a scale > 0, max(s * c) = max(s) * c): what
// attention_advice's note on scores scaled before their max proposes
kernel fn attn_fma<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let c = scale * 1.4426950408889634;
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let n = k.shape()[1];
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN]));
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys < n, s, -1.0e30);
        let mn = maximum(m, s.max(1).reshape([BM, 1]) * c);
        let p = exp2(fma(s, c, -mn));
        let alpha = exp2(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// the value product spelled `acc * alpha + dot(p, v)`
kernel fn attn_dot<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = dot(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose()) * scale;
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = acc * alpha + dot(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]));
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// causal with a sliding window of W keys: only the key blocks the window
// reaches, masked where it ends
kernel fn attn_window<const BM: i32, const BN: i32, const D: i32, const W: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let q0 = block_id(1) * BM;
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let first = if q0 > W { (q0 - W) / BN } else { 0 };
    let last = (q0 + BM + BN - 1) / BN;
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in first..last {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let rows = arange::<i32>(BM).reshape([BM, 1]) + q0;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys <= rows && keys > rows - W, s, -1.0e30);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// causal, the mask by `where` on every key block up to the diagonal (S_q = S_k)
kernel fn attn_causal<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let q0 = block_id(1) * BM;
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..(q0 + BM + BN - 1) / BN {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let rows = arange::<i32>(BM).reshape([BM, 1]) + q0;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = where(keys <= rows, s, -1.0e30);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// an additive bias read from a [S, S] tensor (shared by every head)
kernel fn attn_bias<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>,
        bias: &Tensor<f32, [?, ?]>, scale: f32) {
    let h = block_id(0);
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let pb = bias.partition([BM, BN]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale
            + pb.load([block_id(1), j]);
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}

// a residual added after the loop (a transformer block's `x + attention(x)`, the residual loaded in the
// epilogue)
kernel fn attn_res<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>,
        res: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale;
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    let r = res.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]) as f32;
    o.store((acc / l + r).reshape([1, BM, D]) as ELEM);
}

// ALiBi: a bias computed from the positions, slope per head
kernel fn attn_alibi<const BM: i32, const BN: i32, const D: i32>(o: &mut Tensor<ELEM, [1, BM, D]>,
        q: &Tensor<ELEM, [?, ?, D]>, k: &Tensor<ELEM, [?, ?, D]>, v: &Tensor<ELEM, [?, ?, D]>, scale: f32) {
    let h = block_id(0);
    let slope = exp2(-1.0 - ((h % 16) as f32) * 0.5);
    let qt = q.partition([1, BM, D]).load([h, block_id(1), 0]).reshape([BM, D]);
    let pk = k.partition([1, BN, D]);
    let pv = v.partition([1, BN, D]);
    let mut m = full::<f32>([BM, 1], -1.0e30);
    let mut l = zeros::<f32>([BM, 1]);
    let mut acc = zeros::<f32>([BM, D]);
    for j in 0..pk.num_tiles(1) {
        let rows = arange::<i32>(BM).reshape([BM, 1]) + block_id(1) * BM;
        let keys = arange::<i32>(BN).reshape([1, BN]) + j * BN;
        let s = mma(qt, pk.load([h, j, 0]).reshape([BN, D]).transpose(), zeros::<f32>([BM, BN])) * scale
            - ((rows - keys) as f32) * slope;
        let mn = maximum(m, s.max(1).reshape([BM, 1]));
        let p = exp(s - mn);
        let alpha = exp(m - mn);
        l = l * alpha + p.sum(1).reshape([BM, 1]);
        acc = mma(p as ELEM, pv.load([h, j, 0]).reshape([BN, D]), acc * alpha);
        m = mn;
    }
    o.store((acc / l).reshape([1, BM, D]) as ELEM);
}
"""

# examples/softmax_wide.tile's row kernel and examples/layernorm.tile's
ROWS = """
kernel fn softmax_rows<const N: i32>(y: &mut Tensor<f32, [1, N]>, x: &Tensor<f32, [?, N]>) {
    let t = x.load_like(y);
    let e = exp(t - t.max(1).reshape([1, 1]));
    y.store(e / e.sum(1).reshape([1, 1]));
}

kernel fn layernorm<const BM: i32, const N: i32>(y: &mut Tensor<f32, [BM, N]>,
                                                 x: &Tensor<f32, [?, N]>,
                                                 w: &Tensor<f32, [N]>,
                                                 b: &Tensor<f32, [N]>,
                                                 eps: f32) {
    let t = x.load_like(y);
    let mean = t.sum(1).reshape([BM, 1]) / (N as f32);
    let d = t - mean;
    let var = (d * d).sum(1).reshape([BM, 1]) / (N as f32);
    let wt = w.partition([N]).load([0]).reshape([1, N]);
    let bt = b.partition([N]).load([0]).reshape([1, N]);
    y.store(d * rsqrt(var + eps) * wt + bt);
}
"""


@dataclass
class Case:
    """One kernel launch and its PyTorch twin. `args`: per kernel parameter in
    order, ("t", name, dtype, shape, tile or None) or ("s", value)."""

    name: str
    kind: str  # "gemm", "attn", "rows"
    src: str  # the module ("std" for std::attention)
    kernel: str
    generics: tuple[Any, ...]  # in declaration order, as the Python API takes them
    names: tuple[str, ...]  # the generics' names (lower_kernel's instance)
    args: list[tuple[Any, ...]]
    work: float  # FLOPs (or bytes, `unit`)
    unit: str = "TFLOP/s"
    torch: str = ""  # what `cliffs.torch_fn` runs: "mm", "mm_nt", "mm_tn", "sdpa", "sdpa_window", "sdpa_bias", ...
    extra: dict[str, Any] = field(default_factory=dict)

    def tensors(self) -> list[tuple[str, str, tuple[int, ...], tuple[int, ...] | None]]:
        return [(a[1], a[2], a[3], a[4]) for a in self.args if a[0] == "t"]


def _elem(src: str, dt: str) -> str:
    return src.replace("ELEM", dt)


def gemm_cases() -> list[Case]:
    out = []

    def add(name: str, kern: str, dt: str, m: int, n: int, kk: int, bm: int, bn: int, bk: int) -> None:
        a_shape = (kk, m) if kern == "gemm_tn" else (m, kk)
        b_shape = (n, kk) if kern == "gemm_nt" else (kk, n)
        torch = {"gemm_nt": "mm_nt", "gemm_tn": "mm_tn"}.get(kern, "mm")
        out.append(Case(f"{name} {dt} {m}x{n}x{kk} {bm}x{bn}x{bk}", "gemm", _elem(GEMM, dt), kern, (bm, bn, bk),
                        ("BM", "BN", "BK"),
                        [("t", "c", dt, (m, n), (bm, bn)), ("t", "a", dt, a_shape, None), ("t", "b", dt, b_shape, None)],
                        2.0 * m * n * kk, torch=torch))

    big = 4096
    for dt in ("f16", "bf16"):
        for bm, bn, bk in ((128, 128, 64), (64, 64, 64), (128, 256, 64), (256, 128, 64),
                           (128, 128, 32), (128, 128, 128)):
            if dt == "bf16" and (bm, bn, bk) not in ((128, 128, 64), (128, 256, 64)):
                continue
            add("gemm", "gemm", dt, big, big, big, bm, bn, bk)
    add("gemm_nt", "gemm_nt", "f16", big, big, big, 128, 128, 64)
    add("gemm_nt", "gemm_nt", "bf16", big, big, big, 128, 256, 64)
    add("gemm_tn", "gemm_tn", "f16", big, big, big, 128, 128, 64)
    add("gemm_dot", "gemm_dot", "f16", big, big, big, 128, 128, 64)
    out.append(Case(f"linear+bias+relu f16 {big}x{big}x{big} 128x128x64", "gemm", _elem(GEMM, "f16"), "linear",
                    (128, 128, 64), ("BM", "BN", "BK"),
                    [("t", "c", "f16", (big, big), (128, 128)), ("t", "a", "f16", (big, big), None),
                     ("t", "b", "f16", (big, big), None), ("t", "bias", "f32", (big,), None)],
                    2.0 * big**3, torch="linear_relu"))
    for bm, bn, bk in ((64, 128, 64), (128, 128, 64), (64, 64, 64), (32, 128, 64), (16, 64, 128)):  # skinny: M = 64
        add("gemm", "gemm", "f16", 64, big, big, bm, bn, bk)
    add("gemm", "gemm", "f16", big, big, big, 128, 512, 32)  # a tile wider than one wgmma (N > 256)
    add("gemm", "gemm", "f32", 2048, 2048, 2048, 64, 64, 16)  # f32 inputs: no tensor cores (torch: SGEMM, no TF32)
    add("gemm_nt", "gemm_nt", "bf16", 64, big, big, 64, 128, 64)
    return out


def attn_cases() -> list[Case]:
    out = []
    seq = 2048

    def shapes(d: int) -> tuple[int, int]:
        return 4, 2048 // d  # B, H: 8k tokens a call, B * H * S / BM blocks fill the card

    def std(dt: str, d: int, bm: int, bn: int, causal: bool = False) -> None:
        b, h = shapes(d)
        bh = b * h
        out.append(Case(f"std::attention {dt} D={d} {bm}x{bn}" + (" causal" if causal else ""), "attn", "std",
                        "flash_attention",
                        (dt, bm, bn, d), ("T", "BM", "BN", "D"),
                        [("t", "o", dt, (bh, seq, d), (1, bm, d)), ("t", "q", dt, (bh, seq, d), None),
                         ("t", "k", dt, (bh, seq, d), None), ("t", "v", dt, (bh, seq, d), None),
                         ("s", d**-0.5), ("s", causal)],
                        4.0 * bh * seq * seq * d / (2 if causal else 1), torch="sdpa_causal" if causal else "sdpa",
                        extra={"B": b, "H": h, "S": seq, "D": d}))

    for d in (128, 64):
        for bm, bn in ((128, 128), (128, 64), (64, 128), (128, 256), (192, 128)):
            std("f16", d, bm, bn)
    std("bf16", 128, 128, 64)
    std("f16", 128, 128, 128, causal=True)  # (hattn: the baseline of the user's causal loop)

    def user(kern: str, dt: str, d: int, bm: int, bn: int, more: tuple[Any, ...] = (), torch: str = "sdpa",
             bias: bool = False) -> None:
        b, h = shapes(d)
        bh = b * h
        gen = (bm, bn, d, *more)
        names = ("BM", "BN", "D", *(("W",) if more else ()))
        args: list[tuple[Any, ...]] = [("t", "o", dt, (bh, seq, d), (1, bm, d)), ("t", "q", dt, (bh, seq, d), None),
                                       ("t", "k", dt, (bh, seq, d), None), ("t", "v", dt, (bh, seq, d), None)]
        if bias:
            args.append(("t", "bias", "f32", (seq, seq), None))
        if torch == "sdpa_res":
            args.append(("t", "res", dt, (bh, seq, d), None))
        args.append(("s", d**-0.5))
        extra = {"B": b, "H": h, "S": seq, "D": d, **({"W": more[0]} if more else {})}
        out.append(Case(f"user {kern} {dt} D={d} {bm}x{bn}", "attn", _elem(ATTN, dt), kern, gen, names, args,
                        4.0 * bh * seq * seq * d / (2 if torch == "sdpa_causal" else 1), torch=torch, extra=extra))

    user("attn", "f16", 128, 128, 128)
    user("attn", "f16", 64, 128, 64)
    user("attn", "bf16", 128, 128, 64)
    user("attn_exp2", "f16", 128, 128, 128)
    user("attn_qscale", "f16", 128, 128, 128)
    user("attn_fma", "f16", 128, 128, 128)  # (hattn3: the advice's spelling for scaled scores)
    user("attn_fma", "f16", 64, 128, 64)  # (hattn3: the same at the user's D = 64 blocks, against `attn` there)
    user("attn_dot", "f16", 128, 128, 128)
    user("attn_window", "f16", 128, 128, 128, (512,), torch="sdpa_window")
    user("attn_causal", "f16", 128, 128, 128, torch="sdpa_causal")  # (hattn: the mask on diagonal blocks only)
    user("attn_bias", "f16", 128, 128, 128, torch="sdpa_bias", bias=True)
    user("attn_alibi", "f16", 128, 128, 128, torch="sdpa_alibi")
    user("attn_res", "f16", 128, 128, 128, torch="sdpa_res")  # (hattn2: the residual loaded in the epilogue)
    return out


def rows_cases() -> list[Case]:
    out = []
    for n, m in ((4096, 8192), (32768, 1024)):
        out.append(Case(f"softmax rows of {n}", "rows", ROWS, "softmax_rows", (n,), ("N",),
                        [("t", "y", "f32", (m, n), (1, n)), ("t", "x", "f32", (m, n), None)],
                        2.0 * 4 * m * n, unit="GB/s", torch="softmax"))
        bm = 4 if n <= 4096 else 1
        out.append(Case(f"layernorm rows of {n} (BM={bm})", "rows", ROWS, "layernorm", (bm, n), ("BM", "N"),
                        [("t", "y", "f32", (m, n), (bm, n)), ("t", "x", "f32", (m, n), None),
                         ("t", "w", "f32", (n,), None), ("t", "b", "f32", (n,), None), ("s", 1e-5)],
                        2.0 * 4 * m * n, unit="GB/s", torch="layernorm"))
    return out


def all_cases() -> list[Case]:
    return [*gemm_cases(), *attn_cases(), *rows_cases()]


def alibi_slopes(h: int) -> list[float]:
    """attn_alibi's slope of head index h (of the flattened B * H): 2^(-1 - (h % 16) / 2)."""
    return [math.pow(2.0, -1.0 - (i % 16) * 0.5) for i in range(h)]
