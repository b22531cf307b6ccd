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
that has none. Also the calls that
held: every element type the brief lists through one generic kernel, several
shapes through one kernel (its specialisation cache), empty arrays, an
assertion failing inside a host function."""

from __future__ import annotations

import inspect

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

