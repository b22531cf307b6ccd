"""The tuner's persistent records, beside the compile cache.

One JSON file per (kernel source, kernel, candidate space, key values,
device) under `<cache dir>/tune/` (`$TILEC_CACHE_DIR`, default
`~/.cache/tilec`): the chosen configuration, every candidate's time and the
candidates skipped with why. A later process with the same key reuses the
choice without timing anything. Writes are atomic (a temporary file renamed
into place); a file that does not parse is ignored and rewritten.
`tilec cache list` shows the records, `tilec cache clear` removes them.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tilelang.env_switch import codegen_setting
from tilelang.runtime import cache as cache_mod

FORMAT = 1


@dataclass(slots=True)
class Record:
    key: str  # the hash the file is named after
    kernel: str
    module: str
    device: str
    key_values: dict[str, Any]
    best: dict[str, int]
    best_seconds: float
    timings: list[tuple[dict[str, int], float]] = field(default_factory=list)
    skipped: list[tuple[dict[str, int], str]] = field(default_factory=list)
    created: float = 0.0
    format: int = FORMAT
    # the kernel instance's generics where the record tunes one instance's hints (`B=64`): a tuned tile
    # shape times each candidate's instance, and each gets a record of its hints (shown apart, round 11)
    instance: str = ""

    def summary(self) -> str:
        cfg = ", ".join(f"{k}={v}" for k, v in self.best.items())
        keys = " ".join(f"{k}={v}" for k, v in self.key_values.items())
        inst = f"<{self.instance}>" if self.instance else ""
        return (
            f"{self.module + '::' if self.module else ''}{self.kernel}{inst} on {self.device} [{keys}] -> {cfg} "
            f"({self.best_seconds * 1e6:.1f} us; {len(self.timings)} timed, {len(self.skipped)} skipped)"
        )


def record_key(*parts: Any) -> str:
    """The key of a record of `parts`, and of the codegen switches set (`env_switch.codegen_setting`: a timing
    under `TILEC_GEMM_SPLITK=0` is of other code than the default's)."""
    switches = codegen_setting()
    return cache_mod.make_key("tune", *parts, *((switches,) if switches else ()))


class RecordStore:
    """The records of one directory (memory first, then disk)."""

    def __init__(self, directory: Path | str | None = None) -> None:
        base = Path(directory) if directory is not None else cache_mod.default_dir()
        self.directory = base / "tune"
        self._memory: dict[str, Record] = {}

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> Record | None:
        rec = self._memory.get(key)
        if rec is not None:
            return rec
        rec = _read(self._path(key))
        if rec is not None and rec.key == key:
            self._memory[key] = rec
            return rec
        return None

    def put(self, rec: Record) -> None:
        rec.created = rec.created or time.time()
        self._memory[rec.key] = rec
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(rec), f, indent=1)
            os.replace(tmp, self._path(rec.key))
        except OSError:
            pass  # a read-only cache: the record still serves this process

    def all(self) -> list[Record]:
        if not self.directory.is_dir():
            return []
        out = [r for p in sorted(self.directory.glob("*.json")) if (r := _read(p)) is not None]
        return sorted(out, key=lambda r: -r.created)

    def clear(self) -> int:
        self._memory.clear()
        n = 0
        if self.directory.is_dir():
            for p in self.directory.glob("*.json"):
                try:
                    p.unlink()
                    n += 1
                except OSError:
                    pass
        return n


def _read(path: Path) -> Record | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return None
        data["timings"] = [(dict(c), float(t)) for c, t in data.get("timings", [])]
        data["skipped"] = [(dict(c), str(w)) for c, w in data.get("skipped", [])]
        return Record(**data)
    except (OSError, ValueError, TypeError):
        return None


_STORE: RecordStore | None = None


def default_store() -> RecordStore:
    """The store of the current cache directory (follows `$TILEC_CACHE_DIR`)."""
    global _STORE
    if _STORE is None or _STORE.directory != cache_mod.default_dir() / "tune":
        _STORE = RecordStore()
    return _STORE


def list_lines() -> list[str]:
    store = default_store()
    recs = store.all()
    lines = [f"{store.directory}: {len(recs)} tuning record{'s' if len(recs) != 1 else ''}"]
    for r in recs:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.created))
        lines.append(f"{r.key[:16]}  {stamp}  {r.summary()}")
    return lines
