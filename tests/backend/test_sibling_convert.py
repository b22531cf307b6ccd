"""A reshape or layout conversion that moves data between threads reads an earlier sibling's registers (another
reshape or conversion of the same value in the same region, the same non-1 dims, whose threads hold what it needs:
`ShapeOps.from_sibling`, hcliff7 2026-12-06; `TILEC_SIBLING_CONVERT=0` off), and with `TILEC_CONVERT_TOGETHER=1`
(opt-in: it changes tuned decode kernels' PTX) one that goes through shared memory stages with it the later
conversions of its region whose sources are computed (`ShapeOps._stage`: one barrier pair for all). tests/user a05's max-pool converted its `odd` row through shared memory
twice a window row (the product's [1, 64] operand and the loop's [64]) and `even` on its own, two barriers each."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_shift_dot import A05, _pool, _ptx, _sim  # noqa: E402


def test_the_max_pools_odd_row_is_converted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CONVERT_TOGETHER", "1")
    now = _ptx(_pool(), "pool3")
    monkeypatch.delenv("TILEC_CONVERT_TOGETHER")
    assert _ptx(_pool(), "pool3").count("bar.sync") == now.count("bar.sync") + 2  # the default: siblings only
    monkeypatch.setenv("TILEC_SIBLING_CONVERT", "0")
    before = _ptx(_pool(), "pool3")
    # odd's second conversion from the first's registers (-2), even's staged with odd's first (-2)
    assert now.count("bar.sync") == before.count("bar.sync") - 4, (now.count("bar.sync"), before.count("bar.sync"))
    assert now.count("st.shared") < before.count("st.shared")


# (heavy: sm_90a; `TILEC_CONVERT_TOGETHER` is opt-in, and sm_80 runs the same staging in llsim)
@pytest.mark.parametrize("arch", ["sm_80", pytest.param("sm_90a", marks=pytest.mark.heavy)])
def test_the_sibling_s_registers_are_the_interpreter_s_values(arch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """a05 as written (WO = 16, 2 planes of 17 x 22: -inf padding, first-maximum indices) in llsim prints what the
    interpreter prints, with the sibling read and the joint staging (10 -> 6 barriers; 8 with the sibling alone)."""
    import tilelang.run as run

    monkeypatch.setenv("TILEC_CONVERT_TOGETHER", "1")
    src = A05.read_text(encoding="utf-8").replace("print(y.shape(), idx.max());", "print(y); print(idx);")
    assert "print(y); print(idx);" in src
    want = io.StringIO()
    run.execute(src, "cpu", out=want, name="a05.tile")
    assert "-inf" not in want.getvalue() and _sim(src, arch, monkeypatch) == want.getvalue()
    from tilelang import driver
    from tilelang.backend import emit_ptx

    k = next(x for x in driver.compile(src, "ir").output if x.name == "pool3")
    assert emit_ptx(k, arch).count("bar.sync") == 6
