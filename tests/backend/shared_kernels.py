"""Kernels shared by tests and a device script (one copy each): `MISALIGNED` (`cp`, a copy through `load_like`,
an edge tile's partition load and a nested store, generic over its element type; `mm`, an f16 `mma` with a
reduction of its own tile) for tensors one element past a 16-byte boundary (`test_misaligned_tensors.py` in
llsim, `benchmarks/hrev24_device.sh` on a GPU through PyTorch), and `BF16_COPY` (`k`: a bf16 tile copied, compared
with its maximum and read back through its own `&mut` tile) for bf16 parameters over f32 memory
(`test_bf16_f32_memory.py`, the device script)."""

MISALIGNED = """
kernel fn cp<T>(z: &mut Tensor<T, [4, 8]>, x: &Tensor<T, [?, ?]>) {
    let t = x.load_like(z);
    let e = x.partition([4, 8]).load([block_id(0) + 1, block_id(1)]);
    z.store(where(t == e, t, e));
    let q = z.partition([1, 8]);
    q.store(x.partition([1, 8]).load([block_id(0) * 4 + 3, block_id(1)]), [1, 0]);
}

kernel fn mm(c: &mut Tensor<f32, [16, 16]>, a: &Tensor<f16, [?, ?]>, b: &Tensor<f16, [?, ?]>) {
    let pa = a.partition([16, 16]);
    let pb = b.partition([16, 16]);
    let mut acc = zeros::<f32>([16, 16]);
    for k in 0..pa.num_tiles(1) {
        acc = mma(pa.load([block_id(0), k]), pb.load([k, block_id(1)]), acc);
    }
    c.store(acc + c.load().sum(1).reshape([16, 1]));
}
"""

BF16_COPY = """
kernel fn k(z: &mut Tensor<bf16, [8]>, w: &mut Tensor<f32, [8]>, y: &mut Tensor<bf16, [8]>, x: &Tensor<bf16, [?]>) {
    let t = x.load_like(z);
    z.store(t);
    let own = y.load();
    w.store((t as f32) + where(t == t.max(0), 1000.0, 0.0) + (own as f32) * 16.0);
    y.store(own);
}
"""
