"""`target.run_ptxas`'s memo (hback): ptxas runs once a process for the same PTX, architecture, `-v` and
binary; another architecture, `-v` or text runs it again, a cubin asked for always does, and the memo keeps
at most `_ASSEMBLED_BYTES` of PTX (the oldest out first)."""

from __future__ import annotations

import subprocess

import pytest

from tilelang.backend import target

PTX = ".version 8.0\n.target {arch}\n.address_size 64\n.visible .entry k() {{ ret; }}\n"


@pytest.fixture
def runs(monkeypatch):  # type: ignore[no-untyped-def]
    if not target.ptxas_available():
        pytest.skip("ptxas is not on PATH")
    monkeypatch.setattr(target, "_ASSEMBLED", {})
    monkeypatch.setattr(target, "_ASSEMBLED_HELD", 0)
    calls: list[list[str]] = []
    real = subprocess.run

    def run(cmd, **kw):  # type: ignore[no-untyped-def]
        calls.append(cmd)
        return real(cmd, **kw)

    monkeypatch.setattr(target.subprocess, "run", run)
    return calls


def test_the_same_ptx_is_assembled_once_and_each_setting_apart(runs, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b = PTX.format(arch="sm_80"), PTX.format(arch="sm_90a")
    first = target.run_ptxas(a, "sm_80")
    again = target.run_ptxas(a, "sm_80")
    assert len(runs) == 1 and again.returncode == first.returncode == 0 and again is not first
    assert target.run_ptxas(a, "sm_80", verbose=True).stderr != first.stderr  # `-v` reports: its own run
    assert target.run_ptxas(b, "sm_90a").returncode == 0
    assert target.run_ptxas(b, "sm_80").returncode != 0  # sm_90a's text for sm_80: ptxas refuses it
    assert len(runs) == 4
    target.run_ptxas(a, "sm_80", cubin=tmp_path / "k.cubin")  # a cubin asked for: ptxas writes it
    assert len(runs) == 5 and (tmp_path / "k.cubin").stat().st_size > 0


def test_the_memo_is_bounded(runs, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(target, "_ASSEMBLED_BYTES", 2 * len(PTX.format(arch="sm_80")) + 10)
    texts = [PTX.format(arch="sm_80") + f"// {i}\n" for i in range(3)]
    for t in texts:
        target.run_ptxas(t, "sm_80")
    assert [k[3] for k in target._ASSEMBLED] == texts[1:]  # the oldest went
    assert target._ASSEMBLED_HELD == sum(len(t) for t in texts[1:])
    target.run_ptxas(texts[0], "sm_80")
    assert len(runs) == 4
