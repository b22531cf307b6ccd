"""The Python API as a demanding new user meets it (huser24, 2026-12-07),
knowing only the brief, the README and `help()`: what `repr` and `help()` show
for a compiled module's kernels and functions (`<tile kernel kernel fn ..>`,
"of a array", and a signature whose `// comment` after a parameter, joined
onto one line, read as if it commented out the parameters after it); the help
for an immutable buffer (a NumPy scalar, `bytes`) given where the call writes,
which told to view it with `numpy.frombuffer` (read-only: E0803 next) and, for
a read-only parameter, that "the results land in" it; a Python `complex` for a
kernel's scalar, told "pass a Python number" where a host function's was told
to take its real part; `tilelang.load(source_text)` (the whole program echoed
as a file name, "File name too long", "check the path") and
`tilelang.compile("kernels.tile")` (a parse error at `/`); "1 were given", and
"give them in the order of the declaration" for generics given to a function
that has none; a graph's "1 operations"; a `use` of a missing file from program
text said "relative to the importing file"; a host function that failed part
way lost its `&mut` writes; a `Fraction` told "pass a Python number"; `help(mod)`
showed nothing of the program; a `&` parameter written by `unsafe` atomics was
"read only" in `help()`; E0212 for a generic read as 0 from an empty axis; a
`numpy.matrix` told a `reshape` that stays 2-D; E0513 from Python pointed at
the kernel's name as "these arguments"; a generic as a keyword argument; a
read-only memmap told `z.copy()`; E0504 "make both sources give `T` the same
value". Also the calls that held: every element type the brief lists through
one generic kernel, several shapes through one kernel (its specialisation
cache), empty arrays, an assertion failing inside a host function."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import partition as P

SRC = """\
// Doubles x into z.
kernel fn twice<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>) {
    let t = x.load_like(z);
    z.store(t + t);
}

#[hints(num_warps = 4)]
kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>,
                              x: &Tensor<f32, [?]>,   // the input
                              s: f32) {               /* the factor */
    z.store(x.load_like(z) * s);
}

kernel fn narrow<const B: i32>(z: &mut Tensor<i8, [B]>, x: &Tensor<u8, [?]>) {
    z.store(x.load_like(z) as i8);
}

fn doubled(x: &Tensor<f32, [?]>) -> Tensor<f32, [?]> {
    x * 2.0
}

fn scale_into(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {
    scale(z.partition([4]), x, 3.0).sync();
}

fn checked_sum(x: &Tensor<f32, [?]>) -> f32 {
    assert(x.sum() > 100.0, "the sum is too small");
    x.sum()
}
"""


@pytest.fixture(scope="module")
def m() -> tilelang.Module:
    return tilelang.compile(SRC, name="l24")


def test_repr_and_help_show_the_tile_declaration_once_and_whole(m: tilelang.Module) -> None:
    assert repr(m.twice) == "<tile kernel fn twice<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>)>"
    assert repr(m.doubled) == "<tile fn doubled(x: &Tensor<f32, [?]>) -> Tensor<f32, [?]>>"
    # the comments inside the parameter list are not part of the one-line signature
    assert m.scale.signature == ("#[hints(num_warps = 4)] kernel fn scale<const B: i32>(z: &mut Tensor<f32, [B]>, "
                                 "x: &Tensor<f32, [?]>, s: f32)")
    assert "//" not in repr(m.scale) and "/*" not in m.scale.__doc__
    assert str(inspect.signature(m.scale)) == "(z: '&mut Tensor<f32, [B]>', x: '&Tensor<f32, [?]>', s: 'f32')"
    doc = m.twice.__doc__
    assert "Doubles x into z." in doc
    assert "`tilelang.partition(array, tile)` of an array of rank 1, written" in doc
    assert "x: an array of rank 1, read only" in doc and " a array" not in doc
    assert "of an int8 array of rank 1" in m.narrow.__doc__ and "x: a uint8 array" in m.narrow.__doc__


def test_every_element_type_of_the_brief_through_one_generic_kernel(m: tilelang.Module) -> None:
    for dt in ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
               "uint8", "uint16", "uint32", "uint64"):
        x = np.arange(10).astype(dt)
        z = np.zeros_like(x)
        m.twice(P(z, [4]), x).sync()
        assert z.dtype == dt and (z == x + x).all(), dt
    z = np.zeros(3, bool)
    with pytest.raises(tilelang.TileError, match=r"`\+` is not defined on `bool`") as e:
        m.twice(P(z, [4]), np.ones(3, bool)).sync()
    assert e.value.code == "E0204"


def test_one_kernel_at_several_shapes_and_empty_arrays(m: tilelang.Module) -> None:
    for n, b in [(8, 4), (9, 4), (1, 8), (8, 4), (0, 4)]:
        x = np.arange(n, dtype=np.float32)
        z = np.full(n, -1, np.float32)
        m.scale(P(z, [b]), x, 0.5).sync()
        np.testing.assert_array_equal(z, x * 0.5)
    assert m.doubled(np.zeros(0, np.float32)).shape == (0,)


def test_an_assertion_inside_a_host_function_is_an_execution_error(m: tilelang.Module) -> None:
    with pytest.raises(tilelang.ExecutionError, match="the sum is too small") as e:
        m.checked_sum(np.ones(4, np.float32))
    assert e.value.code == "E0710" and "l24:" in str(e.value)
    assert m.checked_sum(np.full(4, 30, np.float32)) == 120.0


def test_an_immutable_buffer_where_the_call_writes_is_told_to_keep_a_writeable_copy(m: tilelang.Module) -> None:
    x = np.arange(2, dtype=np.float32)
    for value in (np.float32(1), b"\0\0\0\0\0\0\0\0"):
        with pytest.raises(tilelang.CallError) as e:
            m.scale_into(value, x)
        assert e.value.code == "E0800"
        assert "`z = numpy.frombuffer(z, dtype=numpy.float32).copy()`" in str(e.value), str(e.value)
    # the help, followed, runs and the results are in the copy
    z = b"\0\0\0\0\0\0\0\0"
    z = np.frombuffer(z, dtype=np.float32).copy()
    m.scale_into(z, x)
    np.testing.assert_array_equal(z, [0.0, 3.0])
    # a writeable buffer is viewed in place, and a read-only parameter is not told results land in it
    with pytest.raises(tilelang.CallError, match=r"the results land in `z`\): `numpy.frombuffer\(z"):
        m.scale_into(bytearray(8), x)
    with pytest.raises(tilelang.CallError) as e:
        m.doubled(np.float32(2))
    assert "help: view its memory as an array, no copy: `numpy.frombuffer(x, dtype=numpy.float32)`" in str(e.value)


def test_a_complex_scalar_is_told_to_take_its_real_part_by_a_kernel_as_by_a_function(m: tilelang.Module) -> None:
    z, x = np.zeros(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(tilelang.CallError, match=r"is a real number \(`f32`\), but it is the complex number") as e:
        m.scale(P(z, [4]), x, 1 + 2j)
    assert e.value.code == "E0203" and "real part" in str(e.value)


def test_program_text_given_to_load_and_a_file_name_given_to_compile() -> None:
    with pytest.raises(tilelang.CompileError) as e:
        tilelang.load(SRC)
    text = str(e.value)
    assert e.value.code == "E0814" and "takes a path, and this is a program's text (29 lines" in text
    assert "`tilelang.compile(source)`" in text and "File name too long" not in text and "x * 2.0" not in text
    with pytest.raises(tilelang.CallError) as e:
        tilelang.compile("kernels.tile")
    assert e.value.code == "E0813" and "`kernels.tile` is a file name" in str(e.value)
    assert "tilelang.load('kernels.tile')" in str(e.value)


def test_a_graph_s_repr_counts_in_words(m: tilelang.Module) -> None:
    z, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    with tilelang.graph() as g:
        pass
    assert repr(g) == "<tile graph of 0 operations, 0 replays>"  # was "0 operations (), 0 replays"
    with tilelang.graph() as g:
        m.scale(P(z, [4]), x, 2.0).sync()
    assert repr(g) == "<tile graph of 1 operation (scale), 0 replays>"  # was "1 operations"
    g.replay()
    assert repr(g) == "<tile graph of 1 operation (scale), 1 replay>" and (z == 2.0).all()


def test_generics_and_arguments_given_to_what_takes_none() -> None:
    mod = tilelang.compile("kernel fn k(z: &mut Tensor<f32, [4]>) {\n    z.store(zeros::<f32>([4]));\n}\n"
                           "fn h() {\n}\n", name="l24b")
    # were "takes 0 generic arguments but 1 were given", "help: give them in the order of the declaration"
    for f, what in ((mod.k, "kernel `k`"), (mod.h, "function `h`")):
        with pytest.raises(tilelang.CallError) as e:
            f[4]
        assert f"{what} takes 0 generic arguments but 1 was given" in str(e.value) and e.value.code == "E0111"
        assert f"help: it has none: call it without `[..]`, `mod.{f.__name__}(..)`" in str(e.value)
    # was "takes 0 arguments () but 1 were given", "help: pass 0: "
    with pytest.raises(tilelang.CallError, match=r"function `h` takes no arguments but 1 was given") as e:
        mod.h(1)
    assert "help: call it as `h()`" in str(e.value) and e.value.code == "E0105"
    assert mod.h() is None


def test_a_use_of_a_missing_file_from_program_text_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the note said "relative to the importing file" for text that is no file (it is the current directory)
    monkeypatch.chdir(str(tmp_path))
    with pytest.raises(tilelang.CompileError) as e:
        tilelang.compile('use "nope.tile";\nfn f() -> f32 {\n    1.0\n}\n')
    text = str(e.value)
    assert "relative to the current directory (`<string>` is text, not a file)" in text and e.value.code == "E0109"
    (tmp_path / "nope.tile").write_text("fn g() -> f32 {\n    2.0\n}\n", encoding="utf-8")
    assert tilelang.compile('use "nope.tile";\nfn f() -> f32 {\n    g()\n}\n').f() == 2.0


def test_a_host_function_that_fails_part_way_leaves_what_it_wrote(m: tilelang.Module) -> None:
    # its `&mut` array was copied back only on success: the launch's writes before the failure were lost,
    # where a kernel's are in place and the REPL keeps a failed entry's writes
    mod = tilelang.compile("""\
kernel fn addk<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    z.store(z.load() + x.load_like(z));
}
fn step_then_fail(z: &mut Tensor<f32, [?]>, x: &Tensor<f32, [?]>) {
    addk(z.partition([4]), x).sync();
    assert(false, "after the launch");
}
""", name="l24c")
    z, x = np.zeros(6, np.float32), np.arange(6, dtype=np.float32)
    with pytest.raises(tilelang.ExecutionError, match="after the launch"):
        mod.step_then_fail(z, x)
    np.testing.assert_array_equal(z, x)
    assert z.flags.writeable  # and it is given back writeable


def test_a_fraction_or_a_decimal_for_a_scalar_is_told_to_convert_it(m: tilelang.Module) -> None:
    from decimal import Decimal
    from fractions import Fraction

    # both are Python numbers: "pass a Python number" was no help
    z, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    with pytest.raises(tilelang.CallError) as e:
        m.scale(P(z, [4]), x, Fraction(1, 2))
    assert "but it is a `Fraction`" in str(e.value) and "`float(..)` of it" in str(e.value)
    with pytest.raises(tilelang.CallError) as e:
        tilelang.compile("fn f(n: i32) -> i32 {\n    n\n}\n").f(Decimal(2))
    assert "but it is a `Decimal`" in str(e.value) and "`int(..)` of it" in str(e.value) and e.value.code == "E0203"
    m.scale(P(z, [4]), x, float(Fraction(1, 2))).sync()
    assert (z == 0.5).all()


def test_help_of_a_module_lists_its_kernels_and_functions(m: tilelang.Module) -> None:
    import pydoc

    # was the `Module` class's two lines: nothing of the program
    text = pydoc.render_doc(m, renderer=pydoc.plaintext)
    assert "The Tile module `l24` (NumPy arrays and host functions on the CPU)." in text
    assert "kernel fn twice<T, const B: i32>(z: &mut Tensor<T, [B]>, x: &Tensor<T, [?]>)\n          Doubles x into z." \
        in text
    assert "Host functions (a call runs it):\n      fn checked_sum(x: &Tensor<f32, [?]>) -> f32" in text
    assert "`help(mod.NAME)` shows how to call one" in text and "Call from Python" not in text
    # a host function's own help says how it is called, as a kernel's does
    assert "Call from Python: `scale_into(z, x)` runs it at once" in m.scale_into.__doc__


def test_help_of_a_kernel_says_which_shared_parameter_its_unsafe_code_writes() -> None:
    mod = tilelang.compile("""\
kernel fn hist<const B: i32>(x: &mut Tensor<i32, [B]>, h: &Tensor<i32, [?]>, w: &Tensor<i32, [?]>) {
    let t = x.load() + w.load_like(x);
    unsafe { atomic_add(&h, [0], t.sum()); }
    x.store(t);
}
""", name="l24d")
    doc = mod.hist.__doc__
    # `h` was "read only": the kernel's atomics write it (a read-only array for it is E0803)
    assert "h: an int32 array of rank 1, written by the kernel's `unsafe` code (&Tensor<i32, [?]>)" in doc
    assert "w: an int32 array of rank 1, read only (&Tensor<i32, [?]>)" in doc
    x, h, w = np.arange(8, dtype=np.int32), np.zeros(1, np.int32), np.ones(8, np.int32)
    mod.hist(P(x, [4]), h, w).sync()
    assert h[0] == 36


def test_a_generic_read_as_0_from_an_empty_axis_is_named_in_the_help() -> None:
    mod = tilelang.compile("""\
kernel fn rowsum<const BM: i32, const N: i32>(out: &mut Tensor<f32, [BM]>, x: &Tensor<f32, [?, N]>) {
    let p = x.partition([BM, N]);
    out.store(p.load([block_id(0), 0]).sum(1));
}
""", name="l24e")
    x, o = np.zeros((3, 0), np.float32), np.zeros(3, np.float32)
    with pytest.raises(tilelang.TileError) as e:
        mod.rowsum(P(o, [4]), x).sync()
    # the help said "come from the kernel's generic arguments", none of which the caller had given
    assert e.value.code == "E0212" and "`N = 0` here, given or read from an array's shape" in str(e.value)
    x = np.ones((3, 2), np.float32)
    mod.rowsum(P(o, [4]), x).sync()
    assert (o == 2.0).all()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_a_numpy_matrix_is_told_a_reshape_that_leaves_two_dimensions(m: tilelang.Module) -> None:
    z, x = np.matrix(np.zeros(8, np.float32)), np.ones(8, np.float32)
    with pytest.raises(tilelang.CallError) as e:
        m.scale(P(z, [4]), x, 2.0)
    # was `z.reshape(8)`, which a `numpy.matrix` answers with shape (1, 8): the same error again
    assert "`numpy.asarray(z).reshape(8)` (a view of the same memory" in str(e.value) and e.value.code == "E0503"
    m.scale(P(np.asarray(z).reshape(8), [4]), x, 2.0).sync()
    assert (np.asarray(z) == 2.0).all()


def test_a_broken_requirement_from_python_points_at_the_requirement() -> None:
    mod = tilelang.compile("""\
#[requires(x.shape()[0] == y.shape()[0], "x and y must have one length")]
kernel fn add<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>, y: &Tensor<f32, [?]>) {
    z.store(x.load_like(z) + y.load_like(z));
}
""", name="l24f")
    z = np.zeros(8, np.float32)
    with pytest.raises(tilelang.CallError) as e:
        mod.add(P(z, [4]), np.ones(8, np.float32), np.ones(6, np.float32)).sync()
    # was `--> l24f:2:11: these arguments`, the kernel's name: a Python call has no Tile arguments to show
    assert e.value.code == "E0513" and "--> l24f:1:1: this requirement is false" in str(e.value)
    assert "these arguments" not in str(e.value)


def test_a_generic_given_as_a_keyword_argument_is_told_the_brackets(m: tilelang.Module) -> None:
    z, x = np.zeros(8, np.float32), np.ones(8, np.float32)
    with pytest.raises(tilelang.CallError) as e:
        m.twice(P(z, [4]), x, T="f32")
    # was "has no parameter `T`", help "its parameters are `z`, `x`"
    assert "has no parameter `T`: `T` is a generic" in str(e.value) and e.value.code == "E0107"
    assert "help: give it in brackets, by name: `mod.twice[{'T': 'f32'}](..)`" in str(e.value)
    m.twice[{"T": "f32"}](P(z, [4]), x).sync()
    assert (z == 2.0).all()


def test_a_read_only_memmap_where_the_call_writes_is_told_to_open_it_writeable(
        m: tilelang.Module, tmp_path: Path) -> None:
    path = tmp_path / "z.bin"
    np.zeros(8, np.float32).tofile(path)
    x = np.ones(8, np.float32)
    z = np.memmap(path, dtype=np.float32, mode="r", shape=(8,))
    with pytest.raises(tilelang.CallError) as e:
        m.scale(P(z, [4]), x, 2.0)
    # was "pass a writeable copy ..: `z = z.copy()`", whose results never reach the file
    assert "is a memory-mapped file opened read-only (`mode='r'`)" in str(e.value) and e.value.code == "E0803"
    assert "`numpy.memmap(path, .., mode='r+')`" in str(e.value)
    z = np.memmap(path, dtype=np.float32, mode="r+", shape=(8,))
    m.scale(P(z, [4]), x, 2.0).sync()
    z.flush()
    assert (np.fromfile(path, np.float32) == 2.0).all()


def test_two_arrays_of_one_type_parameter_in_two_types_are_told_which_conversion(m: tilelang.Module) -> None:
    z, x = np.zeros(8, np.float32), np.ones(8, np.float64)
    with pytest.raises(tilelang.CallError) as e:
        m.twice(P(z, [4]), x).sync()
    # the help was "make both sources give `T` the same value"
    assert e.value.code == "E0504" and ("`x` and `z` must hold one element type: convert `x` to `f32` (a NumPy "
                                        "array's `.astype(numpy.float32)`") in str(e.value)
    m.twice(P(z, [4]), x.astype(np.float32)).sync()
    assert (z == 2.0).all()


def test_a_device_assert_from_python_says_which_block_failed() -> None:
    mod = tilelang.compile("""\
kernel fn check<const B: i32>(z: &mut Tensor<f32, [B]>, x: &Tensor<f32, [?]>) {
    let t = x.load_like(z);
    assert(t.max() < 5.0, "too big");
    z.store(t);
}
""", name="l24g")
    z = np.zeros(8, np.float32)
    with pytest.raises(tilelang.ExecutionError) as e:
        mod.check(P(z, [4]), np.arange(8, dtype=np.float32)).sync()
    # `tilec run` said "note: in block (1) of a grid of (2)"; the Python error left the note out
    assert e.value.code == "E0700" and "\n  note: in block (1) of a grid of (2)\n  help: " in str(e.value)
    assert e.value.notes == ("in block (1) of a grid of (2)",)
