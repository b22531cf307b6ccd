"""Every environment switch tilec reads (`TILEC_*`, `TILE_*`) refuses a value it does not take with E0604
(`tilelang/env_switch.py`'s `SwitchError`) instead of reading it as some default or crashing (hgpuerr fixed most;
the attention pipeline's own, `TILEC_TRACE_RECORDS`, `TILEC_PREWARM`, `TILEC_EXPLAIN`, `TILEC_LAUNCH`, the warp
rules' and a few more read `os.environ` themselves: `TILEC_EXPLAIN=yes` was on, `TILEC_FEWER_WARPS=off` too,
`TILEC_ATTN_SPLIT=split` no split, `TILE_INTERP_MODE=x` an internal error).

`test_every_switch_read_is_validated` reads the package's source: a read of such a variable straight from
`os.environ` must be a path (any value is one), one of the three read at import that warn and are ignored, a
presence test of a switch `env_switch` reads, or one whose module raises `SwitchError` for it; the others go
through `env_switch.mode` / `flag` / `number` / `numbers`. A new `os.environ.get("TILEC_X")` fails it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tilelang"
READERS = {"mode", "flag", "number", "numbers", "switch_mode"}  # env_switch's readers (and an alias of `mode`)
PATHS = {"TILEC_CACHE_DIR", "TILEC_HISTORY", "TILEC_ICE_DIR"}  # any value is a path
# read as the GPU runtime's modules are imported, where no error can be placed: warned and ignored (hgpuerr)
WARNED = {"TILEC_CARVEOUT", "TILEC_TRACE", "TILEC_PDL"}
OWN_WORDS = {"TILEC_ATTN_SCHEDULE": "attention_loop.py"}  # its own E0604 (`pingpong`'s words), in that module


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def _name_of(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _ours(name: str | None) -> bool:
    return name is not None and (name.startswith("TILEC_") or name.startswith("TILE_"))


def _scan(package: Path = PACKAGE) -> tuple[list[tuple[str, int, str, str]], set[str], dict[str, set[str]],
                                             dict[str, str]]:
    """(direct reads: (module, line, name, how), names read through a reader, names each module raises
    `SwitchError` for, each module's text) of the modules under `package`."""
    direct: list[tuple[str, int, str, str]] = []
    through: set[str] = set()
    raised: dict[str, set[str]] = {}
    texts: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        rel = str(path.relative_to(package.parent))
        text = path.read_text(encoding="utf-8")
        texts[rel] = text
        if rel.endswith("env_switch.py"):
            continue  # the readers themselves
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                f = node.func
                fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                first = _name_of(node.args[0]) if node.args else None
                if isinstance(f, ast.Attribute) and f.attr == "get" and _is_environ(f.value) or \
                        isinstance(f, ast.Attribute) and f.attr == "getenv" and isinstance(f.value, ast.Name) \
                        and f.value.id == "os":
                    if first is None:
                        direct.append((rel, node.lineno, "<not a literal>", "get"))
                    elif _ours(first):
                        direct.append((rel, node.lineno, first, "get"))
                elif fname in READERS and _ours(first):
                    through.add(first)  # type: ignore[arg-type]
                elif fname == "SwitchError" and _ours(first):
                    raised.setdefault(rel, set()).add(first)  # type: ignore[arg-type]
            elif isinstance(node, ast.Subscript) and _is_environ(node.value) and isinstance(node.ctx, ast.Load):
                key = _name_of(node.slice)
                if key is None or _ours(key):
                    direct.append((rel, node.lineno, key or "<not a literal>", "get"))
            elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators) \
                    and _ours(_name_of(node.left)):
                direct.append((rel, node.lineno, _name_of(node.left), "in"))  # type: ignore[arg-type]
    return direct, through, raised, texts


def test_every_switch_read_is_validated() -> None:
    direct, through, raised, texts = _scan()
    assert len(through) > 60, sorted(through)  # the scan sees the readers' calls
    unchecked = []
    for rel, line, name, how in direct:
        if name in PATHS:
            continue
        if name in WARNED and "warnings.warn" in texts[rel]:
            continue
        if how == "in" and name in through:
            continue  # `"TILEC_PERSISTENT_SMS" in os.environ`, then `number(..)`
        if name in raised.get(rel, ()):
            continue  # its module's own check raises `SwitchError(name, ..)`
        if name in OWN_WORDS and any(r.endswith(OWN_WORDS[name]) and "GPU_SCHEDULE_REFUSED" in t
                                     for r, t in texts.items()):
            continue  # `attention.py`'s "generic" test, then `attention_loop`'s own E0604 for the rest
        unchecked.append(f"{rel}:{line}: {name}")
    assert not unchecked, "switches read without a check (use env_switch.mode/flag/number):\n" + "\n".join(unchecked)


def test_the_scan_finds_an_unchecked_read(tmp_path: Path) -> None:
    """The scan is not vacuous: `os.environ.get("TILEC_NEW")`, `os.environ["TILE_X"]` and a key not written
    out are direct reads; `flag("TILEC_OK", "0")` goes through a reader."""
    bad = tmp_path / "tilelang"
    bad.mkdir()
    (bad / "m.py").write_text('import os\nfrom x import flag\n\ndef on(k: str) -> bool:\n'
                              '    return os.environ.get("TILEC_NEW") == "1" or os.environ["TILE_X"] == "1" '
                              'or os.getenv(k) == "1" or flag("TILEC_OK", "0")\n')
    direct, through, _, _ = _scan(bad)
    assert [(r, n) for r, _, n, _ in direct] == [("tilelang/m.py", "TILEC_NEW"), ("tilelang/m.py", "TILE_X"),
                                                 ("tilelang/m.py", "<not a literal>")]
    assert through == {"TILEC_OK"}


# ---------------------------------------------------------------- the switches this change moved, end to end
ADD = """\
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + 1.0);
}

fn main() {
    let x = ones::<f32>([256]);
    let mut z = zeros::<f32>([256]);
    add(z.partition([128]), &x).sync();
    print(z.sum());
}
"""


@pytest.mark.parametrize("name, value", [("TILEC_EXPLAIN", "yes"), ("TILEC_FEWER_WARPS", "off"),
                                         ("TILEC_DEFAULT_WARPS", "no"), ("TILEC_STATIC_DIMS", "on")])
def test_emit_refuses_a_bad_value(name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.clirunner import invoke

    path = tmp_path / "add.tile"
    path.write_text(ADD)
    monkeypatch.setenv(name, value)
    r = invoke("emit", str(path), "--stage", "ptx", "--arch", "sm_80")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert r.stderr.count("error[E0604]") == 1 and f"`{name}='{value}'`" in r.stderr, r.stderr
    monkeypatch.setenv(name, "")  # empty: unset
    assert invoke("emit", str(path), "--stage", "ptx", "--arch", "sm_80").exit_code == 0


@pytest.mark.parametrize("name, value, call", [
    ("TILEC_TRACE_RECORDS", "lots", "tilelang.runtime.trace:_capacity_default"),
    ("TILEC_PREWARM", "no", "tilelang.runtime.cuda_link:prewarm_enabled"),
    ("TILEC_LAUNCH", "fast", "tilelang.runtime.cuda_driver:launch_mode"),
    ("TILEC_ATTN_SPLIT", "split", "tilelang.backend.gpu.passes.attention_split:pieces"),
    ("TILEC_ATTN_STAGES", "many", "tilelang.backend.gpu.passes.attention_match:ring_stages"),
    ("TILEC_ATTN_SHORT_D", "64;128", "tilelang.backend.gpu.passes.attention_chain:short_d"),
    ("TILEC_ATTN_OSTORE", "yes", "tilelang.backend.gpu.passes.attention_epilogue:mode"),
    ("TILEC_ATTN_LAST_BLOCK", "yes", "tilelang.backend.gpu.passes.attention_match:last_block_mode"),
])
def test_a_reader_refuses_a_bad_value(name: str, value: str, call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from tilelang.backend.env_switch import SwitchError

    module, fn = call.split(":")
    reader: Any = getattr(importlib.import_module(module), fn)
    monkeypatch.delenv(name, raising=False)
    default = reader()
    monkeypatch.setenv(name, value)
    with pytest.raises(SwitchError) as e:
        reader()
    assert f"`{name}='{value}'`" in e.value.diag.message and e.value.diag.code == "E0604"
    monkeypatch.setenv(name, "")
    assert reader() == default  # empty: unset


def test_the_interpreter_and_the_sanitizer_switches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`TILE_INTERP_MODE=x` was an internal error at the launch; `TILE_SANITIZE=2` ran without the sanitizer."""
    from tests.clirunner import invoke

    path = tmp_path / "add.tile"
    path.write_text(ADD)
    monkeypatch.setenv("TILE_INTERP_MODE", "fast")
    r = invoke("run", "--device", "cpu", str(path))
    assert r.exit_code == 3 and "error[E0604]" in r.stderr and "`TILE_INTERP_MODE='fast'`" in r.stderr, r.output
    assert "add(z.partition([128]), &x).sync()" in r.stderr  # at the launch
    monkeypatch.setenv("TILE_INTERP_MODE", "vector")
    assert invoke("run", "--device", "cpu", str(path)).stdout == "512.0\n"
    monkeypatch.delenv("TILE_INTERP_MODE")
    monkeypatch.setenv("TILE_SANITIZE", "2")
    r = invoke("run", "--device", "cpu", str(path))
    assert r.exit_code == 1 and "`TILE_SANITIZE='2'`" in r.stderr and r.stdout == "", r.output
    for value in ("0", "off", "1", "yes"):
        monkeypatch.setenv("TILE_SANITIZE", value)
        assert invoke("run", "--device", "cpu", str(path)).stdout == "512.0\n"


def test_auto_does_not_fall_back_over_a_bad_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--device auto` runs on the CPU where the GPU cannot be opened (busy, exclusive mode), with a note; a switch
    set to a value it does not take (`TILEC_PREWARM=no`, `TILEC_ARCH=sm_100`, read as the device opens) is the
    user's to fix, so it is E0604, not "the GPU could not be opened"."""
    import io

    import tilelang.run as run
    from tilelang.diagnostics.model import Diagnostic, TileError
    from tilelang.env_switch import SwitchError
    from tilelang.runtime import cuda

    monkeypatch.setattr(run, "_gpu_missing", lambda: None)

    def opens(error: Exception) -> None:
        def device(out: Any = None) -> Any:
            raise error
        monkeypatch.setattr(cuda, "CudaDevice", device)

    opens(SwitchError("TILEC_PREWARM", "no", "0 or 1"))
    with pytest.raises(SwitchError):
        run.make_device("auto", io.StringIO())
    opens(TileError(Diagnostic.error("E0610", "CUDA error in cuDevicePrimaryCtxRetain: busy")))
    dev = run.make_device("auto", io.StringIO())
    assert dev.kind == "cpu" and "could not be opened" in dev.fallback_reason
