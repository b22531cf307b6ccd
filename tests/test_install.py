"""Packaging: the wheel works on its own, away from the checkout, and the test
works the same inside a virtual environment (the normal way to install) and
outside one.

Builds a wheel (`pip wheel --no-deps`), installs it into a fresh venv and runs
the installed `tilec` from a temporary folder outside the repository: the
grammar, the stdlib and the explanation files must come from inside the
wheel. The dependencies are found offline through the environment that runs
the test: the fresh venv gets a `.pth` file listing the running
interpreter's site directories. (It used to be made with
`system_site_packages=True`, which inherits the *base* interpreter's
packages: run from a venv, where the dependencies live in the venv, `tilec`
could not import them.) `test_the_venv_sees_the_active_environment` runs the
builder from inside a venv, so the suite exercises that path everywhere.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import site
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


def site_dirs() -> list[str]:
    """Where the running interpreter finds installed packages: its site
    directories (a venv's own when it runs in one) and whatever `.pth` files
    added there, in `sys.path` order."""
    dirs = [*site.getsitepackages(), *(p for p in sys.path
                                       if "site-packages" in p or "dist-packages" in p)]
    user = site.getusersitepackages()
    if site.ENABLE_USER_SITE and user:
        dirs.append(user)
    return list(dict.fromkeys(d for d in dirs if os.path.isdir(d)))


def make_venv(env_dir: Path, dirs: list[str] | None = None) -> Path:
    """A venv (no pip, no system site packages) whose `sys.path` ends with
    `dirs` (default: this interpreter's site directories); its bin/ folder.
    Its own site-packages come first, so what is installed into it wins."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(env_dir)
    (purelib,) = (env_dir / "lib").glob("python3*/site-packages")
    (purelib / "_tilec_test_deps.pth").write_text(
        "".join(f"{d}\n" for d in (site_dirs() if dirs is None else dirs)), encoding="utf-8")
    return env_dir / "bin"


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
    bin_dir = make_venv(env_dir)
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
    ref = _run([str(installed / "tilec"), "doc", "load_like"], cwd=workdir)
    assert ref.returncode == 0, ref.stderr
    assert "x.load_like(z)" in ref.stdout and "```tile" in ref.stdout


PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
import test_install
from pathlib import Path
bin_dir = test_install.make_venv(Path(sys.argv[2]))
print(bin_dir)
"""


def test_the_venv_sees_the_active_environment(tmp_path: Path) -> None:
    """From inside a venv (`outer`) whose dependencies live in its own
    site-packages, the test's venv must see them: a module installed only in
    `outer` is importable in the venv the builder makes."""
    outer = tmp_path / "outer"
    outer_bin = make_venv(outer)
    (outer_site,) = (outer / "lib").glob("python3*/site-packages")
    (outer_site / "only_in_outer_venv.py").write_text("WHERE = 'outer'\n", encoding="utf-8")
    made = _run([str(outer_bin / "python"), "-c", PROBE, str(REPO / "tests"),
                 str(tmp_path / "inner")], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    inner_py = Path(made.stdout.strip()) / "python"
    probe = _run([str(inner_py), "-c", "import sys, only_in_outer_venv, lark, numpy;"
                  "print(only_in_outer_venv.WHERE, sys.prefix != sys.base_prefix)"], cwd=tmp_path)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["outer", "True"]
