"""Host run time: programs that used to crash or leak NumPy's warnings.

The programs themselves are `tests/run/host_seeds_and_shifts.tile`,
`host_float_specials_quiet.tile` and `fail_save_npy_directory.tile`; here
`tilec run` is a real process, so what reaches stderr is checked too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _tilec_run(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-W", "default", "-m", "tilelang", "run", "--device",
                           "cpu", str(path)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


def test_float_specials_print_no_numpy_warning(tmp_path: Path) -> None:
    proc = _tilec_run(REPO / "tests" / "run" / "host_float_specials_quiet.tile", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "inf" in proc.stdout and "NaN" in proc.stdout


def test_save_npy_writes_exactly_the_given_path(tmp_path: Path) -> None:
    prog = tmp_path / "save.tile"
    prog.write_text('fn main() {\n    let a = arange::<i32>(3);\n    a.save_npy("out");\n'
                    '    let b = load_npy("out");\n    print(b.sum());\n}\n')
    proc = _tilec_run(prog, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "3"
    assert (tmp_path / "out").is_file() and not (tmp_path / "out.npy").exists()
