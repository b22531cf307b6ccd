"""E0313's cost in a loaded process (hfix2): 200 calls with an argument of a temporary's reference count, held
(`k(*parts)`, unpacked from a list) and not (`f(numpy.zeros(..))`, refused), beside 2M objects the collector
tracks. CPU only: `PYTHONPATH=. python3 benchmarks/e0313_heap.py`."""
import gc, time, sys
import numpy as np
import tilelang
SRC = "kernel fn k<const B: i32>(z: &mut Tensor<f32, [B]>) { z.store(z.load() + 1.0); }\nfn f(z: &mut Tensor<f32, [?]>) { k(z.partition([4])).sync(); }\n"
m = tilelang.compile(SRC)
heap = [[i] for i in range(2_000_000)]  # a loaded process: 2M objects the collector tracks
parts = [tilelang.partition(np.zeros(8, np.float32), [4])]
m.k(*parts).sync()
t = time.perf_counter()
for _ in range(200):
    m.k(*parts).sync()           # held by a list, unpacked: the count of a temporary
t1 = time.perf_counter() - t
t = time.perf_counter()
n = 0
for _ in range(200):
    try:
        m.f(np.zeros(8, np.float32))  # a new array: E0313
    except tilelang.TileError as e:
        n += e.code == "E0313"
t2 = time.perf_counter() - t
print(f"objects tracked {len(gc.get_objects())}: k(*parts) x200 {t1:.2f} s, f(np.zeros(..)) x200 {t2:.2f} s (E0313 {n})")
