"""The compile cache: keys, corruption detection, LRU bound, list/clear (no GPU)."""

from __future__ import annotations

import os
import time

import pytest

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


def test_a_put_reads_no_other_entry_and_scans_now_and_then(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A put counts its bytes on top of the last scan of the directory's sizes (`os.stat` only): it reads no
    other entry, and scans again only every `RESCAN_PUTS` puts (each put read every entry whole before, so a
    cold suite's compiles were quadratic in their number and a full directory cost each put ~0.5 s)."""
    from tilelang.runtime import cache

    for i in range(40):
        CompileCache(tmp_path).put(make_key("old", i), bytes(500))
    monkeypatch.setattr(cache, "_read_entry", lambda *a, **k: pytest.fail("a put read an entry"))
    scans = []
    real = CompileCache._files
    monkeypatch.setattr(CompileCache, "_files", lambda self: scans.append(1) or real(self))
    c = CompileCache(tmp_path)
    n = 2 * cache.RESCAN_PUTS + 5
    for i in range(n):
        c.put(make_key("new", i), bytes(500))
    assert len(scans) == 3  # the first put's, then one every RESCAN_PUTS
    assert len(list(tmp_path.glob("*/*.bin"))) == 40 + n


def test_the_bound_holds_with_two_writers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two processes' caches on one directory: each scans the sizes again every `RESCAN_PUTS` puts and when
    its own count passes the bound, so the directory passes the bound by at most what the other wrote since
    a scan, and an eviction leaves `LOW_WATER` of it, the newest entries kept."""
    from tilelang.runtime import cache

    one = len(cache.MAGIC) + 32 + 4 + 1000 + len(b'{"created": 1.0}') + 8  # about one entry's bytes
    bound = 20 * one
    a, b = CompileCache(tmp_path, max_bytes=bound), CompileCache(tmp_path, max_bytes=bound)
    worst = 0
    for i in range(100):
        for c, who in ((a, "a"), (b, "b")):
            c.put(make_key(who, i), bytes(1000))
            worst = max(worst, sum(size for _, size, _ in a._files()))
    assert worst <= bound + cache.RESCAN_PUTS * one
    a.put(make_key("last"), bytes(1000))  # a scan soon after the other's writes
    b.put(make_key("last b"), bytes(1000))
    left = {e.key for e in a.entries()}
    assert {make_key("last"), make_key("last b"), make_key("a", 99), make_key("b", 99)} <= left
    assert make_key("a", 0) not in left


def test_list_and_clear(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tilelang.runtime import cache

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    cache.default_cache().put(make_key("z"), b"1", {"kind": "ptx", "kernel": "add"})
    lines = cache.cache_list()
    assert "1 entries" in lines[0] and "kernel=add" in lines[1]
    assert cache.cache_clear() == 1
    assert "0 entries" in cache.cache_list()[0]


def test_the_code_key_follows_the_code_not_its_place(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`tree_key` (the compiler's `code_key`) changes with a file's bytes, a file's name and a new file;
    not with the place of the tree (a second checkout shares the cache) or with `__pycache__`."""
    import shutil

    from tilelang.runtime.cache import code_key, tree_key

    pkg = tmp_path / "a" / "tilelang"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "x.py").write_text("X = 1\n")
    (pkg / "sub" / "y.py").write_text("Y = 2\n")
    (pkg / "notes.md").write_text("prose\n")
    base = tree_key(pkg)
    assert tree_key(pkg) == base
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (pkg / "notes.md").write_text("other prose\n")
    assert tree_key(pkg) == base
    shutil.copytree(pkg, tmp_path / "b" / "tilelang")
    assert tree_key(tmp_path / "b" / "tilelang") == base
    (pkg / "x.py").write_text("X = 3\n")  # a commit that changes one line
    edited = tree_key(pkg)
    assert edited != base
    (pkg / "x.py").rename(pkg / "z.py")
    assert tree_key(pkg) not in (base, edited)
    (pkg / "z.py").rename(pkg / "x.py")
    assert tree_key(pkg) == edited
    (pkg / "sub" / "new.py").write_text("")
    assert tree_key(pkg) != edited
    assert len(code_key()) == 64 and code_key() != base


def test_each_cached_step_misses_when_its_own_code_changes(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The PTX of a kernel compiled by one commit of the compiler is not what another commit under the same
    version loads when the LLVM -> PTX step's code differs: with another `step_key` of `PTX_STEP` the same
    kernel compiles again (the old entry stays, unused), and another `CUBIN_STEP` changes the cubin key. A
    commit elsewhere in the compiler (another `code_key`) keeps the PTX entry, whose key holds the LLVM text
    the rest of the compiler made, and changes the tuning records' key (tuned timings follow the code).
    (Before hdebt: the key held `tilec_version()` alone, so a new commit loaded the old code's PTX; after it,
    every commit compiled every kernel again, ~2 minutes of a cold test run.)"""
    import tilelang.backend as backend
    from tilelang.backend import TensorFacts, compile_kernel
    from tilelang.ir.samples import vector_add
    from tilelang.runtime import cache
    from tilelang.tuner.records import record_key

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    compiled: list[str] = []
    real = backend.llvm_to_ptx

    def llc(ll: str, *args, **kw):  # type: ignore[no-untyped-def]
        compiled.append(ll)
        return real(ll, *args, **kw)

    monkeypatch.setattr(backend, "llvm_to_ptx", llc)
    k = vector_add(256)
    facts = {n: TensorFacts(True, (True,)) for n in ("x", "y", "z")}
    old = compile_kernel(k, "sm_80", facts)
    cubin = lambda: make_key("cubin", old.ptx, "sm_80", code=cache.step_key(*cache.CUBIN_STEP))  # noqa: E731
    keys = (cubin(), record_key("k", 1))
    cache._DEFAULT = None  # a new process: the disk level only
    assert compile_kernel(k, "sm_80", facts).key == old.key and len(compiled) == 1
    real_step = cache.step_key
    monkeypatch.setattr(cache, "code_key", lambda: "another commit elsewhere")
    cache._DEFAULT = None
    assert compile_kernel(k, "sm_80", facts).key == old.key and len(compiled) == 1
    assert cubin() == keys[0] and record_key("k", 1) != keys[1]
    monkeypatch.setattr(cache, "step_key", lambda *m: "another PTX step" if m == cache.PTX_STEP else real_step(*m))
    cache._DEFAULT = None
    new = compile_kernel(k, "sm_80", facts)
    assert len(compiled) == 2 and new.key != old.key and new.ptx == old.ptx
    assert cubin() == keys[0]
    monkeypatch.setattr(cache, "step_key", lambda *m: "another linker" if m == cache.CUBIN_STEP else real_step(*m))
    assert cubin() != keys[0]
    assert CompileCache(tmp_path).get(old.key) == old.ptx.encode()


def test_the_step_keys_name_files_that_exist() -> None:
    """A step's files are read by path: a renamed module would give a key of its process alone (every run a
    miss), so each named file must exist."""
    from pathlib import Path

    from tilelang.runtime import cache

    root = Path(cache.__file__).resolve().parents[1]
    for rel in (*cache.PTX_STEP, *cache.CUBIN_STEP):
        assert (root / rel).is_file(), rel
    assert cache.step_key(*cache.PTX_STEP) == cache.step_key(*cache.PTX_STEP) != cache.step_key(*cache.CUBIN_STEP)


def test_the_entry_format_code_is_the_one_its_version_names() -> None:
    """The steps' keys leave out `runtime/cache.py` (an edit of its eviction or `tilec cache list` keeps every
    entry), so the code of it that decides an entry, the key's hashing and parts and the record on disk, is
    pinned to `FORMAT_VERSION`, which every key holds: an edit of that code fails here until FORMAT_VERSION
    moves on (old entries then miss, never read under another format) and `FORMAT_CODE` pins the new digest."""
    from tilelang.runtime import cache

    assert "runtime/cache.py" not in (*cache.PTX_STEP, *cache.CUBIN_STEP)
    assert cache.FORMAT_CODE.get(cache.FORMAT_VERSION) == cache.format_code(), (
        "the compile cache's entry format code changed: set FORMAT_VERSION to a new value and pin "
        f"{cache.format_code()!r} under it in FORMAT_CODE")
    assert len(set(cache.FORMAT_CODE.values())) == len(cache.FORMAT_CODE)  # each version its own code
