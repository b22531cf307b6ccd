"""`tilec run FILE | head`: a reader that goes away early is not a bug.

The run stops quietly with the shell's SIGPIPE status (141), prints no
internal-compiler-error report, and no traceback.
"""

from __future__ import annotations

import subprocess
import sys

PROGRAM = """
fn main() {
    let mut i = 0;
    while i < 50000 { print(i); i += 1; }
}
"""


def test_run_into_a_closed_pipe_stops_quietly(tmp_path):
    src = tmp_path / "many_lines.tile"
    src.write_text(PROGRAM)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tilelang", "run", str(src), "--device", "cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `head -1` exiting
    err = proc.stderr.read().decode()
    status = proc.wait(timeout=120)
    assert first.strip() == b"0"
    assert status == 141, err
    assert "internal compiler error" not in err
    assert "Traceback" not in err
