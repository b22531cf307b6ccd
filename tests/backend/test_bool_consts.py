"""`zeros::<bool>` and `ones::<bool>` in a kernel are the bool constants
false and true (the lowering used to build the integer 0 of type bool, an
internal error): the GPU code generator's output, run by llsim, agrees with
the interpreter, and the PTX assembles."""

from __future__ import annotations

import numpy as np
from llsim import SimDevice

from tilelang.diagnostics.model import DiagnosticSink
from tilelang.interp import run_kernel
from tilelang.ir.lower import lower_kernel
from tilelang.sema import check_program
from tilelang.source import SourceMap
from tilelang.syntax.parser import parse

SRC = """
kernel fn k(z: &mut Tensor<i32, [64]>) {
    let off = zeros::<bool>([64]);
    let on = ones::<bool>([64]);
    let odd = (arange::<i32>(64) % 2) == 1;
    z.store(where(off, 1, 0) + where(on & !off, 10, 0) + where(odd | off, 100, 0));
}
"""


def test_bool_constants_on_the_gpu_match_the_interpreter() -> None:
    sm = SourceMap()
    sink = DiagnosticSink()
    prog = check_program(parse(sm.add("b.tile", SRC), sink), sm, sink)
    assert not sink.has_errors, [d.message for d in sink.diagnostics]
    k = lower_kernel(prog, "k", {})
    want = np.zeros(64, np.int32)
    run_kernel(k, (1,), [want])
    assert list(want[:2]) == [10, 110]
    got = np.full(64, 7, np.int32)
    SimDevice().run(k, (1,), [got])
    np.testing.assert_array_equal(got, want)

    from tilelang.backend import compile_kernel
    from tilelang.backend.target import ptxas_available, run_ptxas

    ptx = compile_kernel(k, "sm_80").ptx
    if ptxas_available():
        r = run_ptxas(ptx, "sm_80")
        assert r.returncode == 0, r.stderr
