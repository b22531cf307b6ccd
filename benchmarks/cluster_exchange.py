"""The cluster exchange (`#[cluster(..)]`, `cluster_gather`) on the GPU.

    python benchmarks/cluster_exchange.py --check     # results vs NumPy (for compute-sanitizer)
    python benchmarks/cluster_exchange.py --bench     # a merge through DSMEM vs through global memory

`--check` runs the exchange kernels on NumPy arrays (no PyTorch, so it can
start under compute-sanitizer) and checks each result; exits 1 on a wrong
one. `--bench` times, in CUDA graph replays, a flash-decoding style merge of
C partial (m, l, o) records a KV head: `cluster`, the C blocks of a cluster
each holding one record, exchanged through distributed shared memory, each
block storing its D / C columns; `global`, the same C blocks each reading
all C records from global memory (the second launch's merge today).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import tilelang  # noqa: E402
from tilelang import partition as P  # noqa: E402

SRC = """
#[cluster(1, 1, C)]
kernel fn merge_cluster<const G: i32, const D: i32, const DC: i32, const C: i32>(
        out: &mut Tensor<f32, [1, G, DC]>, m: &Tensor<f32, [?, ?, ?]>, l: &Tensor<f32, [?, ?, ?]>,
        o: &Tensor<f32, [?, ?, ?]>) {
    let h = block_id(0);
    let s = block_id(2);
    let ms = cluster_gather(m.partition([1, 1, G]).load([h, s, 0]).reshape([G]));
    let ls = cluster_gather(l.partition([1, 1, G]).load([h, s, 0]).reshape([G]));
    let os = cluster_gather(o.partition([1, G, D]).load([h, s, 0]).reshape([G, D]));
    let g = ms.max(0);
    let w = exp(ms - g.reshape([1, G]));
    let den = (ls * w).sum(0);
    let num = (os * w.reshape([C, G, 1])).sum(0);
    let mine = (num / den.reshape([G, 1])).reshape([G, C, DC]).permute([1, 0, 2]);
    out.store(where(arange::<i32>(C).reshape([C, 1, 1]) == s % C, mine, 0.0).sum(0).reshape([1, G, DC]));
}

kernel fn merge_global<const G: i32, const D: i32, const DC: i32, const C: i32>(
        out: &mut Tensor<f32, [1, G, DC]>, m: &Tensor<f32, [?, ?, ?]>, l: &Tensor<f32, [?, ?, ?]>,
        o: &Tensor<f32, [?, ?, ?]>) {
    let h = block_id(0);
    let s = block_id(2);
    let ms = m.partition([1, C, G]).load([h, 0, 0]).reshape([C, G]);
    let ls = l.partition([1, C, G]).load([h, 0, 0]).reshape([C, G]);
    let os = o.partition([1, C * G, D]).load([h, 0, 0]).reshape([C, G, D]);
    let g = ms.max(0);
    let w = exp(ms - g.reshape([1, G]));
    let den = (ls * w).sum(0);
    let num = (os * w.reshape([C, G, 1])).sum(0);
    let mine = (num / den.reshape([G, 1])).reshape([G, C, DC]).permute([1, 0, 2]);
    out.store(where(arange::<i32>(C).reshape([C, 1, 1]) == s % C, mine, 0.0).sum(0).reshape([1, G, DC]));
}
"""

G, D = 4, 128


def inputs(heads: int, c: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((heads, c, G)).astype(np.float32)
    ls = (rng.random((heads, c, G)) + 0.5).astype(np.float32)
    o = rng.standard_normal((heads, c * G, D)).astype(np.float32)
    return m, ls, o


def reference(m, ls, o):  # type: ignore[no-untyped-def]
    heads, c, _ = m.shape
    o4 = o.reshape(heads, c, G, D).astype(np.float64)
    w = np.exp(m - m.max(axis=1, keepdims=True))
    return (o4 * w[..., None]).sum(axis=1) / (ls * w).sum(axis=1)[..., None]


def check() -> int:
    mod = tilelang.compile(SRC, device="gpu")
    bad = 0
    for c in (2, 4, 8):
        m, ls, o = inputs(5, c, c)
        for name in ("merge_cluster", "merge_global"):
            out = np.full((5, G, D), np.nan, np.float32)
            getattr(mod, name)[G, D, D // c, c](P(out, [1, G, D // c]), m, ls, o).sync()
            err = float(np.abs(out - reference(m, ls, o)).max())
            ok = err < 1e-4
            bad += not ok
            print(f"check {name} C={c}: max err {err:.2e} {'ok' if ok else 'WRONG'}")
    return 1 if bad else 0


def bench() -> None:
    import torch

    mod = tilelang.compile(SRC)
    print("| heads | C | cluster us | global us | cluster/global |")
    print("| --- | --- | --- | --- | --- |")
    for heads in (8, 64):
        for c in (2, 4, 8):
            m, ls, o = (torch.from_numpy(a).cuda() for a in inputs(heads, c, 0))
            times = {}
            for name in ("merge_cluster", "merge_global"):
                out = torch.zeros((heads, G, D), device="cuda")
                k = getattr(mod, name)[G, D, D // c, c]
                with tilelang.graph() as gr:
                    k(P(out, [1, G, D // c]), m, ls, o).sync()
                gr.replay(times=50)
                best = []
                for _ in range(5):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    gr.replay(times=2000)
                    torch.cuda.synchronize()
                    best.append((time.perf_counter() - t0) / 2000 * 1e6)
                times[name] = sorted(best)[len(best) // 2]
                want = reference(m.cpu().numpy(), ls.cpu().numpy(), o.cpu().numpy())
                assert np.abs(out.cpu().numpy() - want).max() < 1e-4, name
            print(f"| {heads} | {c} | {times['merge_cluster']:.2f} | {times['merge_global']:.2f} | "
                  f"{times['merge_cluster'] / times['merge_global']:.2f} |")


if __name__ == "__main__":
    if "--bench" in sys.argv:
        bench()
    else:
        sys.exit(check())
