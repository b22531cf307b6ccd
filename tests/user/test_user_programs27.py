"""Round 27 of the independent user's programs (huser28, 2026-12-07): a systems / data-engineering user's
integer and bit-level kernels, written from BRIEF.md, README.md, docs/reference.md and examples/ alone, each
run by `tilec run` (its `main`) and driven from Python on NumPy arrays (`tilelang.load` and the kernels called
with `tilelang.partition`), as often one as the other.

- w04: a stable LSD radix sort of u32 keys with a payload, four 8-bit passes (digit counts, bases by scans, a
  scatter by `store_unchecked`), the passes a host loop in Tile and in Python.

Each runs on the interpreter and is checked against NumPy written independently of the program; the NVPTX
simulator at sm_90a runs them (the cheapest by default, the rest `heavy`), and the PTX assembles for sm_90a.
"""

from __future__ import annotations

import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))  # llsim, for `program_suite`

import tilelang
from tilelang import partition as P
from userprog import DIR, program_suite

Tensors = dict[str, np.ndarray]


def _load(name: str) -> tilelang.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("error", tilelang.TileWarning)   # the programs check clean
        return tilelang.load(DIR / f"{name}.tile")


# ---- w04: radix sort ----

def _w04(t: Tensors, out: str) -> None:
    i = np.arange(600, dtype=np.int64)
    keys = (((i * 40503 + 12345).astype(np.uint32) * np.uint32(2654435761))
            ^ ((i % 7).astype(np.uint32) << np.uint32(29))).astype(np.uint32)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(t["keys"], keys[order])
    np.testing.assert_array_equal(t["vals"], order)
    assert out == "1 0 599 179700\n"


def _radix_sort(mod: tilelang.Module, keys: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The four passes driven from Python: the key buffers swap by rebinding names."""
    n = keys.size
    nb = -(-n // block)
    vals = np.arange(n, dtype=np.int32)
    hist = np.zeros((nb, 256), np.int32)
    base = np.zeros((nb, 256), np.int32)
    moved = np.zeros(nb, np.int32)
    for shift in range(0, 32, 8):
        mod.count[block](P(hist, [1, 256]), keys, np.uint32(shift)).sync()
        mod.bases(P(base, [nb, 256]), hist).sync()
        out_keys, out_vals = np.zeros_like(keys), np.full(n, -1, np.int32)
        mod.scatter[block](P(moved, [1]), keys, vals, base, out_keys, out_vals, np.uint32(shift)).sync()
        assert moved.sum() == n
        keys, vals = out_keys, out_vals
    return keys, vals


def test_w04_radix_sort_driven_from_python() -> None:
    mod = _load("w04_radix_sort_u32_host_passes")
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32)
    keys[::7] = keys[3]   # repeated keys: the payload shows the sort is stable
    got_k, got_v = _radix_sort(mod, keys.copy(), 128)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(got_k, keys[order])
    np.testing.assert_array_equal(got_v, order)


def test_an_unsafe_store_of_a_block_that_left_its_loop_keeps_the_others_store() -> None:
    """w04's scatter lost one key in 600: the blocks ran together (the vectorised interpreter) and, where one
    block had left its loop of `store_unchecked`s (its last tile is short), its masked-off store wrote back
    the element's old value over the one another block stored in the same step, when both aimed at one
    element (the finished block's index is whatever its padding reads). Only the blocks still in the loop
    store now, as the block-by-block mode and the GPU do."""
    mod = tilelang.compile("""
kernel fn place<const B: i32>(seen: &mut Tensor<i32, [1]>, dest: &Tensor<i32, [?]>, out: &Tensor<i32, [?]>) {
    let b = block_id(0);
    for i in 0..minimum(B, dest.shape()[0] - b * B) {
        let to = dest.partition([1]).load([b * B + i]).item();
        unsafe {
            store_unchecked(&out, [to], full::<i32>([1], b * B + i));
        }
    }
    seen.store(full::<i32>([1], b));
}
""")
    dest = np.array([4, 0, 1, 2, 3], np.int32)   # block 1 leaves after i = 0; at i = 1 its padding reads 0
    out = np.full(5, -1, np.int32)
    seen = np.zeros(2, np.int32)
    mod.place[4](P(seen, [1]), dest, out).sync()
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])
    out[:] = -1
    with_branch = tilelang.compile("""
kernel fn place<const B: i32>(seen: &mut Tensor<i32, [1]>, dest: &Tensor<i32, [?]>, out: &Tensor<i32, [?]>) {
    let b = block_id(0);
    for i in 0..B {
        let to = dest.partition([1]).load([b * B + i]).item();
        if b * B + i < dest.shape()[0] {
            unsafe {
                store_unchecked(&out, [to], full::<i32>([1], b * B + i));
            }
        }
    }
    seen.store(full::<i32>([1], b));
}
""")
    with_branch.place[4](P(seen, [1]), dest, out).sync()
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])


# ---- w05: CRC-32 by table, a byte histogram, a file streamed in chunks ----

def _w05_records(chunk: int) -> np.ndarray:
    n = 40 + chunk * 7
    k = np.arange(n * 24, dtype=np.int32) + np.int32(chunk * 1000)
    with np.errstate(over="ignore"):
        h = k * np.int32(2654435761 - 2**32)
    return ((h >> 13) & 255).astype(np.uint8).reshape(n, 24)


def _w05(t: Tensors, out: str) -> None:
    np.testing.assert_array_equal(t["table"], _crc_table())
    recs = [_w05_records(c) for c in range(3)]
    np.testing.assert_array_equal(t["hist"], np.bincount(np.concatenate(recs).ravel(), minlength=256))
    lines = [f"{zlib.crc32(r[0].tobytes())} {zlib.crc32(r[-1].tobytes())}" for r in recs]
    tab = _crc_table()
    assert out == "\n".join(lines) + f"\n{tab[1]} {tab[255]} 3384 3384\n"


def _crc_table() -> np.ndarray:
    c = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        c = np.where(c & 1, np.uint32(0xEDB88320) ^ (c >> 1), c >> 1)
    return c


def test_w05_a_record_file_streamed_through_the_kernels_chunk_by_chunk(tmp_path: Path) -> None:
    mod = _load("w05_crc32_table_record_stream")
    table = np.zeros(256, np.uint32)
    mod.make_table(P(table, [256])).sync()
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, (103, 24), dtype=np.uint8)
    path = tmp_path / "records.bin"
    data.tofile(path)
    hist = np.zeros(256, np.int64)
    crcs = []
    with open(path, "rb") as f:
        while chunk := f.read(32 * 24):        # 32 records a chunk, the last one short
            recs = np.frombuffer(chunk, np.uint8).reshape(-1, 24)
            crc = np.zeros((recs.shape[0], 1), np.uint32)
            mod.crc_records(P(crc, [16, 1]), recs, table).sync()
            mod.byte_counts[128](P(hist, [256]), recs.reshape(-1)).sync()
            crcs.extend(crc[:, 0].tolist())
    assert crcs == [zlib.crc32(r.tobytes()) for r in data]
    np.testing.assert_array_equal(hist, np.bincount(data.ravel(), minlength=256))


# ---- w06: hash partitioning of i64 keys (murmur3 fmix64), FNV-1a 64 ----

def _fmix64(k: np.ndarray) -> np.ndarray:
    m = np.uint64
    with np.errstate(over="ignore"):
        h = k ^ (k >> m(33))
        h = h * m(0xFF51AFD7ED558CCD)
        h ^= h >> m(33)
        h = h * m(0xC4CEB9FE1A85EC53)
        return h ^ (h >> m(33))


def _fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return h


def _w06(t: Tensors, out: str) -> None:
    keys = np.arange(300, dtype=np.int64) * 1000003 - 150000000
    h = _fmix64(keys.view(np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
    np.testing.assert_array_equal(t["hash"], h)
    np.testing.assert_array_equal(t["part"], (h >> np.uint64(60)).astype(np.int32))
    np.testing.assert_array_equal(t["sizes"], np.bincount(t["part"], minlength=16))
    names = ((np.arange(120) * 7 % 26) + 97).astype(np.uint8).reshape(10, 12)
    np.testing.assert_array_equal(t["fnv"][:, 0], [_fnv1a64(names[r, :r + 3].tobytes()) for r in range(10)])
    assert out == f"300 true {h[0]} {t['fnv'][0, 0]}\n"


def test_w06_keys_and_names_from_python() -> None:
    mod = _load("w06_u64_hash_partitioning")
    keys = np.array([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max, 2**40 + 7, -(2**33)], np.int64)
    part, hash_ = np.zeros(7, np.int32), np.zeros(7, np.uint64)
    sizes = np.zeros(256, np.int64)
    seed = 0xD6E8FEB86659FD93                    # a Python int past i64's range, for a `u64` parameter
    mod.partition_of[4, 8](P(part, [4]), P(hash_, [4]), keys, seed, sizes).sync()
    h = _fmix64(keys.view(np.uint64) ^ np.uint64(seed))
    np.testing.assert_array_equal(hash_, h)
    np.testing.assert_array_equal(part, h >> np.uint64(56))
    np.testing.assert_array_equal(sizes, np.bincount(part, minlength=256))
    words = [b"", b"a", b"foobar", b"tile kernels", bytes(range(200, 216))]
    names = np.zeros((len(words), 16), np.uint8)
    for r, w in enumerate(words):
        names[r, :len(w)] = np.frombuffer(w, np.uint8)
    lens = np.array([[len(w)] for w in words], np.int32)
    fnv = np.zeros((len(words), 1), np.uint64)
    mod.fnv1a(P(fnv, [2, 1]), names, lens).sync()
    assert fnv[:, 0].tolist() == [_fnv1a64(w) for w in words]
    assert _fnv1a64(b"a") == 0xAF63DC4C8601EC8C     # the published FNV-1a 64 of "a"


CHECKS = {"w04_radix_sort_u32_host_passes": _w04, "w05_crc32_table_record_stream": _w05,
          "w06_u64_hash_partitioning": _w06}

SIM_DEFAULT: tuple[str, ...] = ()
HEAVY = [n for n in CHECKS if n not in SIM_DEFAULT]
HEAVY_PTX = [n for n in CHECKS if n != "w04_radix_sort_u32_host_passes"]

(test_every_program_has_a_check, test_the_interpreter_gives_the_independent_answer,
 test_the_simulated_gpu_gives_the_same_tensors, test_the_ptx_assembles) = program_suite(
    ("w0[4-9]_*.tile", "w[1-9][0-9]_*.tile"), CHECKS, [(n, "sm_90a") for n in sorted(CHECKS)],
    ptx=[(n, "sm_90a") for n in sorted(CHECKS)], heavy=HEAVY, heavy_ptx=HEAVY_PTX)
