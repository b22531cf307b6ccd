"""`tilec repl`: the session core (no terminal), piped stdin, and a real TTY."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from tileplugin import REPO_ROOT, run_tilec, tilec_env

from tilelang.repl import ReplSession

pytest.importorskip("tilelang.run")

KERNEL = """kernel fn inc<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + 1.0);
}"""


@pytest.fixture
def session() -> ReplSession:
    return ReplSession(device="cpu")


def test_statements_persist_and_values_show_once(session: ReplSession) -> None:
    assert session.feed("let x = 40 + 2;").stdout == ""
    assert session.feed("x").stdout == "42\n"
    assert session.feed("print(x + 1);").stdout == "43\n"
    # Earlier output is not shown again, and a shown value is not replayed.
    assert session.feed("x * 2").stdout == "84\n"
    assert session.feed("let y = 1;").stdout == ""


def test_items_kernels_and_launches(session: ReplSession) -> None:
    assert session.feed("fn sq(a: i32) -> i32 { a * a }").ok
    assert session.feed("sq(7)").stdout == "49\n"
    assert session.feed(KERNEL).ok
    r = session.feed(
        "let a = ones::<f32>([8]);\nlet mut z = zeros::<f32>([8]);\ninc(z.partition([4]), &a).sync();"
    )
    assert r.ok, r.stderr
    assert session.feed("z.sum()").stdout == "16.0\n"


def test_errors_point_into_the_entry_and_are_not_kept(session: ReplSession) -> None:
    session.feed("let x = 1;")
    bad = session.feed("let y = nope;")
    assert not bad.ok
    assert "error[E0101]" in bad.stderr
    assert "--> <repl-2>:1:9" in bad.stderr
    assert "fn main" not in bad.stderr  # the synthesised glue never shows
    failed = session.feed('assert(x == 2, "x is not 2");')
    assert not failed.ok and "error[E0710]" in failed.stderr
    assert session.feed("x").stdout == "1\n"  # the failed entries left no trace
    assert "nope" not in session.program_text()


def test_launch_handles_span_entries_and_ownership_still_applies(session: ReplSession) -> None:
    session.feed(KERNEL)
    session.feed("let a = ones::<f32>([8]);\nlet mut z = zeros::<f32>([8]);")
    pending = session.feed("let h = inc(z.partition([4]), &a).launch();")
    assert pending.ok and "`h` in flight" in pending.stderr
    racy = session.feed("z.sum()")
    assert not racy.ok
    assert "error[E0305]" in racy.stderr  # read while the launch may still write `z`
    assert "<repl-4>" in racy.stderr  # the launch, in the entry that made it
    assert "E0308" not in racy.stderr  # the pending handle was already noted
    assert session.feed("h.wait();").ok
    assert session.feed("z.sum()").stdout == "16.0\n"


def test_syntax_error_and_user_main(session: ReplSession) -> None:
    r = session.feed("let = 3;")
    assert not r.ok and "error[E0" in r.stderr
    r = session.feed("fn main() {}")
    assert not r.ok and "the REPL defines `main` itself" in r.stderr


def test_meta_commands(session: ReplSession, tmp_path: Path) -> None:
    assert ":type" in session.feed(":help").stdout
    session.feed("let a = ones::<f32>([8]);")
    assert session.feed(":type a").stdout == "a: Tensor<f32, [8]>\n"
    assert session.feed(":ir").stdout == "(no kernel is launched yet)\n"
    session.feed(KERNEL)
    session.feed("let mut z = zeros::<f32>([8]);\ninc(z.partition([4]), &a).sync();")
    ir = session.feed(":ir inc")
    assert ir.ok and "kernel inc<B = 4>" in ir.stdout
    lib = tmp_path / "lib.tile"
    lib.write_text("fn twice(a: i32) -> i32 { 2 * a }\nfn main() {}\n")
    assert session.feed(f":load {lib}").stdout == f"loaded 1 item from {lib}\n"
    assert session.feed("twice(21)").stdout == "42\n"
    assert not session.feed(":nonsense").ok
    assert session.feed(":reset").ok
    assert not session.feed("twice(1)").ok
    assert session.feed(":quit").quit


def test_piped_stdin() -> None:
    import subprocess

    script = "let x = 40 + 2;\nx\nfn sq(a: i32) -> i32 {\n    a * a\n}\nsq(x)\n:type x\n"
    proc = subprocess.run(
        [sys.executable, "-m", "tilelang", "repl"],
        input=script,
        capture_output=True,
        text=True,
        env=tilec_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "42\n1764\nx: i32\n"
    bad = run_tilec("repl")  # empty stdin: nothing to do
    assert bad.returncode == 0


@pytest.mark.slow
def test_terminal_session(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = tilec_env()
    env["TILEC_HISTORY"] = str(tmp_path / "history")
    env["TERM"] = "dumb"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tilelang", "repl"],
        env=env,
        cwd=str(REPO_ROOT),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    try:
        child.expect(">>> ")
        child.send("let x = 6;\r")
        child.expect(">>> ")
        child.send("fn f(a: i32) -> i32 {\r")  # incomplete: Enter continues the entry
        child.send("a * 7\r")
        child.send("}\r")
        child.expect(">>> ")
        child.send("f(x)\r")
        child.expect("42")
        child.expect(">>> ")
        child.send(":quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert os.path.exists(tmp_path / "history")
