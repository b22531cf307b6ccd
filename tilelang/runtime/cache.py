"""The compile cache: PTX and cubins keyed by everything that decides them.

A key is a SHA-256 over: the kernel's IR text, its specialisation facts
(16-byte alignment of base pointers, divisibility of dims by 16, unit inner
strides), the target arch and features, and the toolchain: llvmlite's version,
the cache format, tilec's version and a hash of the code that makes the entry
from the key's other parts (a new commit installed under the same version
misses every entry the old code wrote). PTX is a function of the LLVM text (in
its key), the target, the level, llvmlite and `backend/target.py`, so its code
part is `step_key` of that module (a commit elsewhere in the compiler keeps its
PTX entries: a fresh tree's tests do not compile every kernel again); a cubin's
is the linking modules'; a tuning record's is `code_key()`, the whole package
(tuned timings depend on the generated code). Two levels: a dict in memory
(per process) and a directory on disk (`$TILEC_CACHE_DIR`, default
`~/.cache/tilec`).

Invariants:
- An entry on disk is `MAGIC | sha256(payload) | json-length | json | payload`;
  a read that finds a bad magic, a short file or a checksum mismatch deletes
  the entry and reports a miss, so a corrupt file is rebuilt, never used.
- Writes go to a temporary file renamed into place (atomic on POSIX), so a
  concurrent reader sees the old entry or the new one, never half of one.
- The directory is bounded (`max_bytes`, default 256 MiB): a `put` that
  overflows it evicts the least recently used entries (mtime is the clock; a
  hit touches it) down to `LOW_WATER` of the bound. A put reads no other
  entry: the process counts the bytes it writes on top of a scan of the
  directory's sizes (`os.stat` only), taken again every `RESCAN_PUTS` puts
  and whenever the count passes the bound, so other processes' writes since
  the last scan can overshoot the bound by at most what they wrote. (Each put
  read every entry whole before: 2026-12-07 hci3, a cold suite's compiles
  paid a scan of the growing directory each, quadratic in their number, and a
  full 256 MiB directory cost every put ~0.5 s.)
- No CUDA and no llvmlite import: `tilec cache list|clear` stays instant.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

from tilelang.frozen import frozen

MAGIC = b"TILEC\x01"
FORMAT_VERSION = "1"
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
LOW_WATER = 7 / 8  # an eviction leaves at most this fraction of `max_bytes`
RESCAN_PUTS = 64  # a put scans the directory's sizes again after this many (other processes write there too)
_SUFFIX = ".bin"


@functools.cache
def tilec_version() -> str:
    # `tilelang.__version__`, not importlib.metadata: a metadata scan of
    # site-packages costs 50-200 ms, paid by every cold first launch.
    from tilelang import __version__

    return str(__version__)


@functools.cache
def code_key() -> str:
    """A hash of the compiler's code: every `.py` file of the `tilelang` package, by its path inside the
    package and its bytes (~9 ms once a process for ~300 files, 3.9 MB; only the tuner's records pay it).
    Not the grammar or the standard library: what
    they decide reaches the LLVM text, which the PTX key holds. The same code at another place (a second
    checkout, a wheel's copy) gives the same key, so they share the cache; an unreadable package gives a
    key of its own, never a shared one."""
    return tree_key(Path(__file__).resolve().parents[1])


def step_key(*modules: str) -> str:
    """The hash of the named `.py` files of the package (paths relative to `tilelang/`, e.g.
    "backend/target.py"): the code of one step whose inputs the key's other parts hold. A missing file
    gives a key of this process alone (as `tree_key`'s unreadable package does)."""
    return _step_key(tuple(modules))


@functools.cache
def _step_key(modules: tuple[str, ...]) -> str:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    try:
        for rel in modules:
            with open(root / rel, "rb") as f:
                h.update(struct.pack("<Q", len(rel)) + rel.encode() + hashlib.sha256(f.read()).digest())
    except OSError as e:
        h.update(f"unreadable {e} {os.getpid()} {time.time()}".encode())
    return h.hexdigest()


# The code of each cached step beside its key's parts (`make_key(..., code=...)`). Not this module: what it
# decides of an entry (the key's hashing, the record's layout) is `FORMAT_VERSION`'s, in every key, and
# `FORMAT_CODE` pins that code to it (tests/backend/test_cache.py), so an edit here (the eviction, `tilec cache
# list`) keeps every entry (with this module in the steps, each edit compiled every kernel again).
PTX_STEP = ("backend/target.py",)
CUBIN_STEP = ("runtime/cuda_module.py", "runtime/cuda_link.py")
# the digest of the entry format's code (`format_code`) for each FORMAT_VERSION: an edit of that code moves
# FORMAT_VERSION on and pins its digest here
FORMAT_CODE = {"1": "035c6dcba7fbe1e62b663a5af66f8b133fee0431f1036450c964c043aed74fe5"}


def format_code() -> str:
    """The digest of the code that decides an entry's key and record: `make_key` and the key parts' makers
    (`tilec_version`, `_llvmlite_version`, `_step_key`), `_record`, `_read_entry` (their source text) and
    `MAGIC`."""
    import inspect

    h = hashlib.sha256(MAGIC)
    for f in (make_key, tilec_version, _llvmlite_version, _step_key, _record, _read_entry):
        h.update(inspect.getsource(f).encode())
    return h.hexdigest()


def hash_step_code() -> None:
    """Hash the PTX and cubin steps' code now (the toolchain prewarm, `cuda_link.FIRST_LAUNCH_MODULES`), so a
    first launch reads no file for its keys."""
    step_key(*PTX_STEP)
    step_key(*CUBIN_STEP)


def tree_key(root: Path) -> str:
    """The hash of the `.py` files under `root` (their paths relative to it, sorted, and their bytes)."""
    h = hashlib.sha256()
    try:
        files: list[tuple[str, str]] = []
        for top, dirs, names in os.walk(root, onerror=_raise):  # (os.walk: a third of rglob's time)
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = os.path.relpath(top, root).replace(os.sep, "/")
            files += [(f"{rel}/{n}", os.path.join(top, n)) for n in names if n.endswith(".py")]
        for rel, path in sorted(files):
            with open(path, "rb") as f:
                digest = hashlib.sha256(f.read()).digest()
            h.update(struct.pack("<Q", len(rel)) + rel.encode() + digest)
    except OSError as e:  # unreadable: a key of this process alone, never another code's entries
        h.update(f"unreadable {e} {os.getpid()} {time.time()}".encode())
    return h.hexdigest()


def _raise(e: OSError) -> None:
    raise e


@functools.cache
def _llvmlite_version() -> str:
    try:
        import llvmlite

        return str(llvmlite.__version__)
    except ImportError:
        return "?"


def make_key(*parts: Any, code: str | None = None) -> str:
    """A hex key over the parts plus the toolchain versions (order matters) and `code`, the hash of the
    code that makes the entry from the parts (`step_key`; by default `code_key()`, the whole package)."""
    h = hashlib.sha256()
    for p in (FORMAT_VERSION, tilec_version(), code_key() if code is None else code, _llvmlite_version(), *parts):
        data = p if isinstance(p, bytes) else (p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str)).encode()
        h.update(struct.pack("<Q", len(data)))
        h.update(data)
    return h.hexdigest()


@frozen(eq=True)
class Entry:
    key: str
    size: int
    mtime: float
    meta: dict[str, Any]


def default_dir() -> Path:
    env = os.environ.get("TILEC_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tilec"


class CompileCache:
    def __init__(self, directory: Path | str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = Path(directory) if directory is not None else default_dir()
        self.max_bytes = max_bytes
        self._memory: dict[str, bytes] = {}
        self.hits = 0
        self.misses = 0
        self._bytes: int | None = None  # the directory's bytes: the last scan's plus this process's puts since
        self._puts = 0  # puts since that scan

    # -- paths ---------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / (key + _SUFFIX)

    # -- read ----------------------------------------------------------------
    def get(self, key: str) -> bytes | None:
        data = self._memory.get(key)
        if data is not None:
            self.hits += 1
            return data
        path = self._path(key)
        read = _read_entry(path)
        if read is None:
            self.misses += 1
            return None
        _meta, payload = read
        try:
            os.utime(path)  # LRU clock
        except OSError:
            pass
        self._memory[key] = payload
        self.hits += 1
        return payload

    def get_meta(self, key: str) -> dict[str, Any] | None:
        read = _read_entry(self._path(key))
        return None if read is None else read[0]

    # -- write ---------------------------------------------------------------
    def put(self, key: str, payload: bytes, meta: dict[str, Any] | None = None) -> None:
        self._memory[key] = payload
        record = _record(payload, meta)
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(record)
            os.replace(tmp, path)
        except OSError:
            return  # a read-only or full disk only costs us the disk level
        self._count(len(record))

    # -- maintenance -----------------------------------------------------------
    def entries(self) -> list[Entry]:
        out: list[Entry] = []
        if not self.directory.is_dir():
            return out
        for path in self.directory.glob(f"*/*{_SUFFIX}"):
            try:
                st = path.stat()
            except OSError:
                continue
            read = _read_entry(path, verify=False)
            meta = read[0] if read is not None else {"corrupt": True}
            out.append(Entry(path.stem, st.st_size, st.st_mtime, meta))
        out.sort(key=lambda e: e.mtime, reverse=True)
        return out

    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries())

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        self._memory.clear()
        n = 0
        for e in self.entries():
            try:
                self._path(e.key).unlink()
                n += 1
            except OSError:
                pass
        return n

    def _count(self, written: int) -> None:
        """Count a put's bytes; past the bound (or `RESCAN_PUTS` puts after the last scan) scan the sizes
        again, and past it still evict."""
        self._puts += 1
        if self._bytes is not None and self._puts < RESCAN_PUTS and self._bytes + written <= self.max_bytes:
            self._bytes += written
            return
        files = self._files()
        self._bytes, self._puts = sum(size for _, size, _ in files), 0
        if self._bytes > self.max_bytes:
            self._evict(files)

    def _files(self) -> list[tuple[float, int, str]]:
        """(mtime, size, path) of every entry on disk, by `os.stat` alone (no entry is read)."""
        out: list[tuple[float, int, str]] = []
        try:
            subdirs = [d.path for d in os.scandir(self.directory) if d.is_dir(follow_symlinks=False)]
        except OSError:
            return out
        for sub in subdirs:
            try:
                with os.scandir(sub) as it:
                    for f in it:
                        if f.name.endswith(_SUFFIX):
                            try:
                                st = f.stat()
                            except OSError:
                                continue
                            out.append((st.st_mtime, st.st_size, f.path))
            except OSError:
                continue
        return out

    def _evict(self, files: list[tuple[float, int, str]]) -> None:
        """Delete the least recently used entries until the directory holds `LOW_WATER` of the bound."""
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):  # oldest first
            if total <= self.max_bytes * LOW_WATER:
                break
            try:
                os.unlink(path)
                total -= size
                self._memory.pop(Path(path).stem, None)
            except OSError:
                pass
        self._bytes = total


def _record(payload: bytes, meta: dict[str, Any] | None) -> bytes:
    """An entry's bytes on disk: `MAGIC | sha256(payload) | json-length | json | payload`."""
    meta = dict(meta or {})
    meta.setdefault("created", time.time())
    blob = json.dumps(meta, sort_keys=True, default=str).encode()
    return MAGIC + hashlib.sha256(payload).digest() + struct.pack("<I", len(blob)) + blob + payload


def _read_entry(path: Path, verify: bool = True) -> tuple[dict[str, Any], bytes] | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 32 + 4
    ok = len(raw) >= head and raw.startswith(MAGIC)
    if ok:
        digest = raw[len(MAGIC) : len(MAGIC) + 32]
        (n,) = struct.unpack("<I", raw[len(MAGIC) + 32 : head])
        ok = len(raw) >= head + n
    if ok:
        try:
            meta = json.loads(raw[head : head + n])
        except ValueError:
            ok = False
    if ok:
        payload = raw[head + n :]
        if verify and hashlib.sha256(payload).digest() != digest:
            ok = False
    if not ok:
        if verify:
            try:
                path.unlink()  # corrupt: drop it so the next compile rebuilds it
            except OSError:
                pass
        return None
    return meta, payload


_DEFAULT: CompileCache | None = None


def default_cache() -> CompileCache:
    global _DEFAULT
    if _DEFAULT is None or _DEFAULT.directory != default_dir():
        _DEFAULT = CompileCache()
    return _DEFAULT


# -- `tilec cache list|clear` (helper B's cli.py delegates here) ----------------
def cache_list() -> list[str]:
    """Human-readable lines, newest first, for `tilec cache list`."""
    cache = default_cache()
    entries = cache.entries()
    lines = [f"{cache.directory}: {len(entries)} entries, {sum(e.size for e in entries) / 1024:.1f} KiB"]
    for e in entries:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e.mtime))
        what = " ".join(f"{k}={v}" for k, v in sorted(e.meta.items()) if k not in ("created",))
        lines.append(f"{e.key[:16]}  {e.size:>9} B  {stamp}  {what}")
    return lines


def cache_clear() -> int:
    return default_cache().clear()
