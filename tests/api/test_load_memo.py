"""`tilelang.load` / `tilelang.compile` check a program once a process
(`tilelang.api._CHECKED`): a second load of the same text shares the checked
`Program`, ownership facts, AST and sources, in a new `Module` with its own
kernels. That is sound only if no module ever changes what it shares: here a
module runs kernels (two instances, a launch and a wait), host functions and
`main`, calls that fail, and the shared objects pickle to the same bytes
before and after. A file the program imports that changed, a new working
directory and a program with errors are checked again. (tests/llm's
`test_engine.py` does the same over `std::llm` and the engine's steps.)"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import api

P = tilelang.partition

MAIN = """use "lib.tile";

kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(twice(x.load_like(z)) * (FACTOR as f32));
}

fn run(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {
    scale(z.partition([4]), x).sync();
}

fn main() {
    let x = ones::<f32>([8]);
    let mut z = zeros::<f32>([8]);
    scale(z.partition([2]), &x).sync();
    print(z.sum());
}
"""

LIB = """fn twice<const N: i32>(t: Tile<f32, [N]>) -> Tile<f32, [N]> {
    t * 2.0
}

const FACTOR: i32 = {};
"""


def _snapshot(m: tilelang.Module) -> bytes:
    """What a module shares with the others of its text, as bytes."""
    return pickle.dumps((m._program, m._ownership, m._root, [(f.id, f.name, f.text) for f in m._sources]))


def _write(tmp_path: Path, factor: int) -> Path:
    (tmp_path / "lib.tile").write_text(LIB.replace("{}", str(factor)), encoding="utf-8")
    main = tmp_path / "main.tile"
    main.write_text(MAIN, encoding="utf-8")
    return main


def test_a_second_load_shares_the_check_and_no_module_changes_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    main = _write(tmp_path, 3)
    a = tilelang.load(main)
    before = _snapshot(a)
    b = tilelang.load(main)
    assert b is not a and b._program is a._program and b._root is a._root
    assert b.scale is not a.scale and b.run is not a.run  # a module's kernels and functions are its own
    x = np.arange(8, dtype=np.float32)
    for m in (a, b):
        z = np.zeros(8, np.float32)
        m.scale(P(z, [4]), x).sync()
        np.testing.assert_array_equal(z, x * 6)
        z = np.zeros(8, np.float32)
        m.scale(P(z, [2]), x).launch().wait()  # another instance (B = 2)
        np.testing.assert_array_equal(z, x * 6)
        z = np.zeros(8, np.float32)
        m.run(z, x)
        np.testing.assert_array_equal(z, x * 6)
        m.main()
        with pytest.raises(tilelang.CallError):
            m.scale(P(np.zeros(8, np.int32), [4]), x)
    assert capsys.readouterr().out.split() == ["48.0", "48.0"]
    assert _snapshot(a) == before == _snapshot(b)
    # the bytes see a change inside the shared objects (here in a copy)
    copy = pickle.loads(before)
    copy[0].kernels.popitem()
    assert pickle.dumps(copy) != before


def test_the_modules_of_one_program_share_its_lowered_kernels(tmp_path: Path) -> None:
    """`runtime.launch._LOWERED`: a kernel instance is lowered once a checked program (an engine a test loads
    std::llm again); a program checked again (its import changed) lowers its own, with the new constant."""
    main = _write(tmp_path, 3)
    a, b = tilelang.load(main), tilelang.load(main)
    x = np.ones(4, np.float32)
    kirs = []
    for m in (a, b):
        z = np.zeros(4, np.float32)
        m.scale(P(z, [4]), x).sync()
        np.testing.assert_array_equal(z, 6 * x)
        kirs += [kir for kir, _ in m._runtime("cpu").kernels.values()]
    assert len(kirs) == 2 and kirs[0] is kirs[1]
    _write(tmp_path, 5)
    c = tilelang.load(main)
    z = np.zeros(4, np.float32)
    c.scale(P(z, [4]), x).sync()
    np.testing.assert_array_equal(z, 10 * x)
    assert [kir for kir, _ in c._runtime("cpu").kernels.values()][0] is not kirs[0]


def test_a_changed_import_is_checked_again(tmp_path: Path) -> None:
    main = _write(tmp_path, 3)
    a = tilelang.load(main)
    _write(tmp_path, 5)  # the root's text is the same, its import's is not
    b = tilelang.load(main)
    assert b._program is not a._program
    z, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    b.scale(P(z, [4]), x).sync()
    np.testing.assert_array_equal(z, 10 * x)
    (tmp_path / "lib.tile").unlink()  # now missing: an error, not the old program
    with pytest.raises(tilelang.CompileError):
        tilelang.load(main)


def test_a_string_s_import_follows_the_working_directory(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    _write(one, 3)
    _write(two, 7)
    z, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    for where, want in ((one, 6), (two, 14), (one, 6)):
        monkeypatch.chdir(where)
        tilelang.compile(MAIN).scale(P(z, [4]), x).sync()
        np.testing.assert_array_equal(z, want * x)
    assert os.getcwd() == str(one)


def test_a_program_with_errors_is_reported_each_time() -> None:
    bad = "fn main() { let x = nope; }\n"
    for _ in range(2):
        with pytest.raises(tilelang.CompileError, match="nope"):
            tilelang.compile(bad)
    assert not [k for k in api._CHECKED if k[1] == bad]
