"""Packaging: the wheel works on its own, away from the checkout.

Builds a wheel (`pip wheel --no-deps`), installs it into a fresh venv made with
`--system-site-packages` (so the dependencies are found offline), and runs the
installed `tilec` from a temporary folder outside the repository: the grammar,
the stdlib and the explanation files must come from inside the wheel.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["NO_COLOR"] = "1"
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        **kw,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a venv with the freshly built wheel installed."""
    root = tmp_path_factory.mktemp("install")
    wheels = root / "wheels"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--quiet",
        "-w",
        str(wheels),
        str(REPO),
    ]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.insert(4, "--no-build-isolation")  # build offline with the installed backend
    built = _run(cmd, cwd=root)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("tilec-*.whl")

    env_dir = root / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    bin_dir = env_dir / "bin"
    py = bin_dir / "python"
    # --ignore-installed: a tilec already in the outer site-packages (an
    # editable install of this checkout) must not satisfy the requirement.
    # The venv has no pip of its own (ensurepip is slow); `pip --python`
    # installs into it, and the scripts get the venv's interpreter.
    inst = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            str(wheel),
        ],
        cwd=root,
    )
    assert inst.returncode == 0, inst.stdout + inst.stderr
    shebang = (bin_dir / "tilec").read_text().splitlines()[0]
    assert shebang.startswith(f"#!{env_dir}"), shebang
    return bin_dir


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(REPO / "examples" / "add.tile", tmp_path / "add.tile")
    (tmp_path / "bad.tile").write_text("fn main() {\n    let x = 1\n    let y = 2;\n}\n")
    return tmp_path


def test_wheel_imports_from_the_venv_with_packaged_data(installed: Path, workdir: Path) -> None:
    probe = (
        "import tilelang, tilelang.resources as r;"
        "print(tilelang.__file__);"
        "print(r.grammar_dir());"
        "print((r.stdlib_dir()).is_dir());"
        "print(len(r.grammar_text()) > 0)"
    )
    proc = _run([str(installed / "python"), "-c", probe], cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    module_file, grammar_dir, stdlib_ok, grammar_ok = proc.stdout.split()
    venv_dir = str(installed.parent)
    assert module_file.startswith(venv_dir), f"imported {module_file}, not the installed wheel"
    assert grammar_dir.startswith(venv_dir) and "_data" in grammar_dir
    assert stdlib_ok == "True" and grammar_ok == "True"


def test_installed_tilec_checks_outside_the_repo(installed: Path, workdir: Path) -> None:
    tilec = str(installed / "tilec")
    good = _run([tilec, "check", "add.tile"], cwd=workdir)
    assert good.returncode == 0, good.stderr
    assert "Traceback" not in good.stderr
    bad = _run([tilec, "check", "bad.tile"], cwd=workdir)
    assert bad.returncode == 1
    assert "error[" in bad.stderr and "bad.tile:2:" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_installed_tilec_explains_from_packaged_files(installed: Path, workdir: Path) -> None:
    explain_dir = REPO / "tilelang" / "diagnostics" / "explain"
    codes = sorted(p.stem for p in explain_dir.glob("E*.md"))
    if not codes:
        pytest.skip("no explanation files yet")
    proc = _run([str(installed / "tilec"), "explain", codes[0]], cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert "```tile" in proc.stdout
