"""What the tests of tests/user/programs share: running a program on the
interpreter (or, with `run.make_device` patched, the NVPTX simulator),
comparing two runs' tensors, and assembling a program's PTX with ptxas."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np

import tilelang.run as run

DIR = Path(__file__).parent / "programs"


def run_program(name: str) -> tuple[dict[str, np.ndarray], str]:
    """The program's tensors (by variable) and what it printed."""
    out = io.StringIO()
    ex = run.execute(str(DIR / f"{name}.tile"), "cpu", out=out)
    return {k: np.asarray(t.numpy()).copy() for k, t in ex.main_locals.items() if hasattr(t, "numpy")}, out.getvalue()


def assert_same_tensors(got: dict[str, np.ndarray], want: dict[str, np.ndarray], tol: float) -> None:
    """Integers and bools exactly, floats within `tol` (NaN where NaN)."""
    for k, w in want.items():
        if w.dtype.kind in "iub":
            np.testing.assert_array_equal(got[k], w, err_msg=k)
        else:
            np.testing.assert_allclose(got[k].astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol,
                                       err_msg=k, equal_nan=True)


def emit_ptx(name: str, arch: str, out: Path) -> subprocess.CompletedProcess[str]:
    """`tilec emit --stage ptx` of the program into `out` (one file a kernel)."""
    cmd = [sys.executable, "-m", "tilelang", "emit", str(DIR / f"{name}.tile"), "--stage", "ptx", "--arch", arch,
           "-o", str(out / "k.ptx")]
    return subprocess.run(cmd, capture_output=True, text=True)


def assemble_all(out: Path, arch: str, what: object) -> None:
    """Every .ptx file in `out` assembles with ptxas for `arch`."""
    files = sorted(out.glob("*.ptx"))
    assert files, what
    for f in files:
        r = subprocess.run(["ptxas", "-arch", arch, "-o", str(out / "k.o"), str(f)], capture_output=True, text=True)
        assert r.returncode == 0, (what, f.name, r.stderr)


def program_tensors(ex: run.Execution) -> dict[str, np.ndarray]:
    """`main`'s tensors by variable; a tuple of tensors (what a host function
    returned) gives `name.0`, `name.1`, ..."""
    out: dict[str, np.ndarray] = {}
    for k, v in ex.main_locals.items():
        for j, t in enumerate(v) if isinstance(v, tuple) else [(None, v)]:
            if hasattr(t, "numpy"):
                out[k if j is None else f"{k}.{j}"] = np.asarray(t.numpy()).copy()
    return out
