"""The compile cache: keys, corruption detection, LRU bound, list/clear (no GPU)."""

from __future__ import annotations

import os
import time

from tilelang.runtime.cache import CompileCache, make_key


def test_key_depends_on_every_part() -> None:
    base = make_key("ptx", "ir", [("x", True, (True,))], "sm_80")
    assert base == make_key("ptx", "ir", [("x", True, (True,))], "sm_80")
    assert base != make_key("ptx", "ir", [("x", False, (True,))], "sm_80")
    assert base != make_key("ptx", "ir", [("x", True, (True,))], "sm_90")
    assert base != make_key("ptx", "ir2", [("x", True, (True,))], "sm_80")


def test_roundtrip_and_memory_level(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = CompileCache(tmp_path)
    k = make_key("a")
    assert c.get(k) is None
    c.put(k, b"payload", {"kind": "ptx"})
    assert CompileCache(tmp_path).get(k) == b"payload"  # a fresh process reads the disk
    assert [e.meta["kind"] for e in c.entries()] == ["ptx"]


def test_corrupt_entry_is_dropped_and_rebuilt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = CompileCache(tmp_path)
    k = make_key("b")
    c.put(k, b"x" * 100)
    path = next(tmp_path.glob("*/*.bin"))
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF  # flip a payload bit: the checksum no longer matches
    path.write_bytes(bytes(raw))
    fresh = CompileCache(tmp_path)
    assert fresh.get(k) is None
    assert not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"TIL")  # truncated garbage
    assert CompileCache(tmp_path).get(k) is None


def test_lru_eviction_keeps_the_newest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    c = CompileCache(tmp_path, max_bytes=3000)
    keys = [make_key(str(i)) for i in range(5)]
    for i, k in enumerate(keys):
        c.put(k, bytes(900))
        p = next(tmp_path.glob(f"*/{k}.bin"))
        t = time.time() - 100 + i
        os.utime(p, (t, t))
    c.put(make_key("new"), bytes(900))
    left = {e.key for e in c.entries()}
    assert make_key("new") in left and keys[-1] in left
    assert keys[0] not in left
    assert c.total_bytes() <= 3000


def test_list_and_clear(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cache

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    cache.default_cache().put(make_key("z"), b"1", {"kind": "ptx", "kernel": "add"})
    lines = cache.cache_list()
    assert "1 entries" in lines[0] and "kernel=add" in lines[1]
    assert cache.cache_clear() == 1
    assert "0 entries" in cache.cache_list()[0]
