"""`benchmarks/softmax_ab.py`'s PTX edits and occupancy sizes (CPU): each edit turns
exactly the instruction form it names into the other kernel's, the edited Tile PTX
still assembles, and an edit that finds nothing to change says so."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import softmax_ab as ab  # noqa: E402

# The instruction forms of Triton's row softmax PTX that the edits touch (Triton 3.x,
# a 2560-wide row padded to 4096: the fourth chunk's predicate is never true).
TRITON_LIKE = """\
.visible .entry softmax_kernel(
{
\t.reg .pred \t%p<9>;
\t.reg .b32 \t%r<165>;
\t@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
\t@%p4 ld.global.v4.b32 { %r14, %r15, %r16, %r17 }, [ %rd4 + 0 ];
\tex2.approx.f32 \t%r104, %r103;
\tex2.approx.f32 \t%r106, %r105;
\tld.shared.b32 \t%r164, [global_smem];
\tdiv.full.f32 \t%r26, %r104, %r164;
\tdiv.full.f32 \t%r27, %r106, %r164;
\t@%p1 st.global.v4.b32 [ %rd5 + 0 ], { %r26, %r27, %r28, %r29 };
\t@%p4 st.global.v4.b32 [ %rd8 + 0 ], { %r38, %r39, %r40, %r41 };
\tret;
}
"""


def test_triton_edits_change_what_they_name() -> None:
    ftz = ab.triton_ftz(TRITON_LIKE)
    assert ftz.count("ex2.approx.ftz.f32") == 2 and "ex2.approx.f32" not in ftz
    rcp = ab.triton_rcp(TRITON_LIKE)
    assert "div.full" not in rcp
    assert rcp.count("rcp.rn.f32 \t%rinv, %r164;") == 1
    assert rcp.index("rcp.rn.f32") > rcp.index("ld.shared.b32") and rcp.index("rcp.rn.f32") < rcp.index("mul.f32")
    assert re.findall(r"mul\.f32\s+(%r\d+), (%r\d+), %rinv;", rcp) == [("%r26", "%r104"), ("%r27", "%r106")]
    assert ".reg .b32 \t%rinv;" in rcp
    dead = ab.triton_no_dead_chunk(TRITON_LIKE)
    assert "@%p4" not in dead and dead.count("@%p1") == 2
    assert len(dead.splitlines()) == len(TRITON_LIKE.splitlines()) - 2


def test_an_edit_that_finds_nothing_says_so() -> None:
    with pytest.raises(ValueError, match="changed nothing"):
        ab.triton_ftz(ab.triton_ftz(TRITON_LIKE))
    with pytest.raises(ValueError, match=r"no div\.full"):
        ab.triton_rcp(ab.triton_rcp(TRITON_LIKE))


def test_tile_edits_on_tiles_own_ptx_assemble() -> None:
    import rows

    from tilelang.backend.target import ptxas_available, run_ptxas

    ptx = rows.tile_ptx("rows", "softmax", 1, 2560, 0, 8)
    assert "rcp.rn.f32" in ptx and "max.NaN.f32" in ptx and "ld.global.nc." in ptx
    edited = {name: fn(ptx) for name, (base, fn) in ab.EDITS.items() if base == "tile"}
    assert "rcp.rn" not in edited["rcp_approx"] and "rcp.approx.ftz.f32" in edited["rcp_approx"]
    assert "max.NaN" not in edited["max"] and "max.f32" in edited["max"]
    assert "ld.global.nc." not in edited["plain_loads"] and "ld.global.v4" in edited["plain_loads"]
    assert all(s not in edited["all3"] for s in ("rcp.rn", "max.NaN", "ld.global.nc."))
    if not ptxas_available():
        pytest.skip("ptxas is not on PATH")
    for name, text in edited.items():
        r = run_ptxas(text, "sm_90a")
        assert r.returncode == 0, (name, r.stderr[-2000:])


@pytest.mark.parametrize("blocks", [2, 4, 5, 6, 7, 8])
def test_dummy_shared_memory_caps_the_blocks_an_sm(blocks: int) -> None:
    carve = ab.SMEM_PER_SM * ab.CARVEOUT_PCT // 100
    per_block = ab.dummy_smem(blocks) + 64 + 1024  # the kernel's own, the hardware's reserve
    assert blocks * per_block <= carve < (blocks + 1) * per_block
    assert ab.dummy_smem(32) == 0
